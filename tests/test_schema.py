"""The JSON Schema is generated from the engine's types and kept in docs/."""

from __future__ import annotations

import json

import tpsim
from conftest import ROOT, cli


def test_schema_describes_the_format_and_docs_copy_is_current(tmp_path):
    s = tpsim.json_schema()
    assert s["additionalProperties"] is False
    assert set(s["required"]) == {"simulation", "nodes"}
    assert "Link" in s["definitions"] and "App" in s["definitions"]
    p = cli("schema", "-o", str(tmp_path / "s.json"))
    assert p.returncode == 0
    assert json.loads((tmp_path / "s.json").read_text()) == s
    committed = ROOT / "docs" / "scenario.schema.json"
    assert json.loads(committed.read_text()) == s, "regenerate with: tpsim schema -o docs/scenario.schema.json"


def test_every_scenario_file_validates():
    files = sorted((ROOT / "scenarios").glob("*.toml"))
    assert files
    for f in files:
        p = cli("validate", str(f))
        assert p.returncode == 0, (f, p.stderr)
