"""Scenario files: strict TOML with explicit units (see docs/scenarios.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Union

from . import _tpsim


class Scenario:
    """A validated scenario.

    Attributes:
        text: the TOML source.
        source: where it came from (a path, or ``<string>``).
        resolved: the scenario with every default filled in (dict; units canonical:
            durations in ns, rates in bit/s, sizes in bytes, written as strings such as
            ``"20000000ns"``).
    """

    def __init__(self, text: str, source: str = "<string>") -> None:
        self.source = source
        self.resolved: dict[str, Any] = json.loads(_tpsim.resolve(text, source))
        # Files the scenario names (ns-2 movement and traffic) travel inside the text, so that
        # runs on other machines need no file; the resolved scenario (and the stored-run
        # hash) already covers their content.
        self.text = _tpsim.embed_files(text, source) if "file" in text else text

    @property
    def seed(self) -> int:
        """Master seed (``simulation.seed``)."""
        return int(self.resolved["simulation"]["seed"])

    @property
    def runs(self) -> int:
        """Replications (``simulation.runs``)."""
        return int(self.resolved["simulation"]["runs"])

    @property
    def name(self) -> str:
        """``simulation.name``, or the file's stem."""
        n = self.resolved["simulation"].get("name")
        return n if n else Path(self.source).stem

    def __repr__(self) -> str:
        return f"Scenario({self.source!r})"


def load(path: Union[str, Path]) -> Scenario:
    """Reads and validates the scenario file at ``path``.

    Raises:
        ScenarioError: (a ValueError) naming each bad key with its line; ``.diagnostics`` lists
            them as ``{path, line, column, message}`` dicts.
        OSError: if the file cannot be read.
    """
    p = Path(path)
    return Scenario(p.read_text(encoding="utf-8"), str(p))


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 7) of the scenario format, generated from the engine's types."""
    return json.loads(_tpsim.json_schema())
