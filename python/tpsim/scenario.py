"""Scenario files: strict TOML with explicit units (see docs/scenarios.md)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any, Union

from . import _tpsim


class Scenario:
    """A validated scenario.

    Attributes:
        text: the TOML source the engine reads (without ``[[cases]]`` tables, ns-2 files
            embedded).
        written: the TOML source as written.
        source: where it came from (a path, or ``<string>``).
        cases: the ``[[cases]]`` tables (see :mod:`tpsim.cases`).
        resolved: the scenario with every default filled in (dict; units canonical:
            durations in ns, rates in bit/s, sizes in bytes, written as strings such as
            ``"20000000ns"``).
        resolved_size: characters of ``resolved`` as JSON.
    """

    def __init__(self, text: str, source: str = "<string>") -> None:
        """Validates the scenario ``text`` (TOML); ``source`` names it in messages.

        Raises:
            ScenarioError: (a ValueError) naming each bad key with its line.
            TypeError: if ``text`` or ``source`` is not a string.
        """
        from .cases import extract

        for name, v in (("text", text), ("source", source)):
            if not isinstance(v, str):
                raise TypeError(f"{name} must be a string (the scenario's TOML text, or where it came from), "
                                f"got {type(v).__name__} {v!r:.80}")
        self.source = source
        #: The text as written (with its ``[[cases]]``).
        self.written = text
        engine_text, cases = extract(text, source)
        #: The ``[[cases]]`` of the scenario (:class:`tpsim.cases.Case`), run as a sweep
        #: dimension; the engine sees the text without them.
        self.cases = cases
        resolved = _tpsim.resolve(engine_text, source)
        self.resolved: dict[str, Any] = json.loads(resolved)
        #: Characters of :attr:`resolved` as JSON (a measure of what it holds).
        self.resolved_size = len(resolved)
        # Files the scenario names (ns-2 movement and traffic) travel inside the text, so that
        # runs on other machines need no file; the resolved scenario (and the stored-run
        # hash) already covers their content.
        self.text = _tpsim.embed_files(engine_text, source) if "file" in engine_text else engine_text

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
        OSError: if the file cannot be read (the error names it).
        TypeError: if ``path`` is not a path.
        ValueError: if ``path`` is empty.
    """
    return Scenario(read_text(path), str(Path(path)))


def read_text(path: Union[str, Path]) -> str:
    """The text of the scenario file at ``path``, not yet validated.

    Raises:
        OSError, TypeError, ValueError: as :func:`load`; ScenarioError for a file that is not
            UTF-8 text.
    """
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be the path of a scenario file (str or os.PathLike), got {type(path).__name__} {path!r:.80}")
    if not os.fspath(path):
        raise ValueError("path: expected the path of a scenario file, got an empty string")
    return decode_text(read_limited(path), str(Path(path)))


#: The largest input file read (scenario, ns-2 files), bytes: a device such as /dev/zero or
#: a runaway file fails at once instead of filling the memory.
MAX_INPUT_BYTES = 256 * 2**20


def read_limited(path: Union[str, Path], limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the file at ``path`` (a regular file, a pipe or a device).

    Raises:
        OSError: if it cannot be read, or (EFBIG) if it holds more than ``limit`` bytes.
    """
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit // 2**20} MiB, the most tpsim reads", str(path))
    return data


def decode_text(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text.

    Raises:
        ScenarioError: for bytes that are not UTF-8 (a binary file), naming the file and the
            line and column of the first bad byte (``source:line:col: ...``).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise _tpsim.ScenarioError(
            f"{source}:{line}:{col}: not a UTF-8 text file (byte 0x{data[e.start]:02x} at offset {e.start}); "
            "scenario files are UTF-8 TOML"
        ) from None


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 7) of the scenario format, generated from the engine's types."""
    return json.loads(_tpsim.json_schema())
