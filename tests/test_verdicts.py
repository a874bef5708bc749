"""docs/studies.md's verdict table: written by scripts/verdicts.py, one row per finding, and
study D's rows regenerated from a fresh run of the study."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from conftest import ROOT, SHARED, cli_once

spec = importlib.util.spec_from_file_location("verdicts", ROOT / "scripts" / "verdicts.py")
verdicts = importlib.util.module_from_spec(spec)
sys.modules["verdicts"] = verdicts  # its dataclasses look their module up
spec.loader.exec_module(verdicts)

DOC = ROOT / "docs" / "studies.md"


def doc_rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index(verdicts.BEGIN) + len(verdicts.BEGIN):text.index(verdicts.END)]
    return [line for line in table.strip().splitlines()[2:]]


def test_the_table_has_one_row_per_finding_in_order_each_with_a_verdict():
    rows = doc_rows()
    assert [re.match(r"\| (\w+):", r).group(1) for r in rows] == [f.id for f in verdicts.FINDINGS]
    for f in verdicts.FINDINGS:
        assert f.otherwise.startswith(("cause in the paper", "cause in tpsim")), f.id
    for r in rows:
        cells = [c.strip() for c in r.strip().strip("|").split("|")]
        assert len(cells) == 6, r
        assert cells[5] == "reproduced" or cells[5].startswith("not reproduced, cause in "), r


def test_study_d_rows_regenerate_from_a_fresh_run(tmp_path_factory):
    # Study D is deterministic (one replication): its rows must be exactly what the script
    # writes from `tpsim study d` (run once for this test and test_study_d.py's), with
    # ns-2.35's values from the reference tables beside the repository.
    if not (SHARED / "ns2" / "README.md").is_file():
        pytest.skip("../shared/ns2 (ns-2.35's reference tables) not found")
    out, p = cli_once(tmp_path_factory, "study", "d", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    x = verdicts.load({"d": out})
    x.ns2 = verdicts.ns2_rows(SHARED / "ns2" / "README.md")
    fresh = verdicts.table(x, ["d"]).strip().splitlines()[2:]
    assert fresh == [r for r in doc_rows() if r.startswith("| D")]
