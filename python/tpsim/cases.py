"""``[[cases]]``: paired or conditional settings of a study, run as one sweep.

A scenario may list cases, each a table of ``"dotted.key" = value`` settings applied together
(and an optional ``name``)::

    [[cases]]
    name = "TCP, bulk"
    "flows.0.transport" = "tcp"
    "flows.0.app" = { kind = "bulk", bytes = "2MB" }

    [[cases]]
    name = "UDP, CBR"
    "flows.0.transport" = "udp"
    "flows.0.app" = { kind = "cbr", size = "1000B", interval = "10ms" }

Every case runs with every point of the ``[sweep]`` grid (cases x grid); the tables get a
``case`` column with the case's name. The engine's scenario format does not know
``[[cases]]``: the front end takes the tables out of the text (blank lines in their place, so
that every other line keeps its number) before the engine reads it, and reports problems of a
case with its file, line and column.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from . import _tpsim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def scenario_error(source: str, line: int, col: int, path: str, message: str) -> Exception:
    """A ScenarioError in the engine's form (``file:line:col: key `path`: message``) with its
    ``diagnostics``."""
    where = f"key `{path}`: " if path else ""
    e = _tpsim.ScenarioError(f"{source}:{line}:{col}: {where}{message}")
    try:
        e.diagnostics = [{"path": path, "line": line, "column": col, "message": message}]
        e.source = source
    except AttributeError:  # pragma: no cover - an exception class without a __dict__
        pass
    return e


@dataclass
class KeyLoc:
    """A ``key = value`` line: the key's segments, where it starts, and the value's last line."""

    segs: list[str]
    line: int
    col: int
    end_line: int


@dataclass
class Block:
    """A table of a TOML text: its header (``None`` for the root), whether it is an array
    table (``[[...]]``), its first and last lines and its keys."""

    segs: Optional[list[str]]
    array: bool
    line: int
    end: int = 0
    keys: list[KeyLoc] = field(default_factory=list)


class _ScanError(Exception):
    pass


_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _key_end(text: str, i: int, stop: str) -> int:
    """The index of ``stop`` ending the (dotted, possibly quoted) key starting at ``i``."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == stop:
            return i
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\n":
                    raise _ScanError
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0 or "\n" in text[i:j]:
                raise _ScanError
            i = j + 1
        elif c == "\n" or c == "#":
            raise _ScanError
        else:
            i += 1
    raise _ScanError


def _segs(raw: str) -> list[str]:
    """The segments of a TOML key as written (``"a.b"`` -> ``["a.b"]``, ``a.b`` -> ``["a", "b"]``)."""
    doc = tomllib.loads(f"{raw} = 0")
    segs = []
    node: Any = doc
    while isinstance(node, dict):
        (k, node), = node.items()
        segs.append(k)
    return segs


def _skip_value(text: str, i: int, line: int) -> tuple[int, int]:
    """Skips the value starting at ``i`` (strings, arrays and inline tables, over several
    lines); returns the index of the end of its last line and that line's number."""
    n = len(text)
    depth = 0
    while i < n:
        c = text[i]
        if c == "\n":
            if depth == 0:
                return i, line
            line += 1
            i += 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith('"""', i) or text.startswith("'''", i):
            q = text[i : i + 3]
            i += 3
            while True:
                j = text.find(q, i)
                if j < 0:
                    raise _ScanError
                if q == '"""':
                    k = j
                    while k > i and text[k - 1] == "\\":
                        k -= 1
                    if (j - k) % 2:  # an escaped quote
                        line += text.count("\n", i, j + 1)
                        i = j + 1
                        continue
                line += text.count("\n", i, j)
                i = j + 3
                while i < n and text[i] == q[0]:  # up to two more quotes belong to the string
                    i += 1
                break
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\n":
                    raise _ScanError
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0 or "\n" in text[i:j]:
                raise _ScanError
            i = j + 1
        elif c in "[{":
            depth += 1
            i += 1
        elif c in "]}":
            depth -= 1
            i += 1
        else:
            i += 1
    return n, line


def scan(text: str) -> list[Block]:
    """The tables of a (valid) TOML text with the lines of their keys."""
    blocks = [Block(None, False, 0)]
    i, n, line, bol = 0, len(text), 1, 0
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c == "\n":
            line += 1
            i += 1
            bol = i
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "[":
            array = text.startswith("[[", i)
            start = i + (2 if array else 1)
            end = _key_end(text, start, "]")
            if array and not text.startswith("]]", end):
                raise _ScanError
            blocks[-1].end = line - 1
            blocks.append(Block(_segs(text[start:end].strip()), array, line))
            i = end + (2 if array else 1)
        else:
            end = _key_end(text, i, "=")
            key = KeyLoc(_segs(text[i:end].strip()), line, i - bol + 1, line)
            i, line = _skip_value(text, end + 1, line)
            key.end_line = line
            blocks[-1].keys.append(key)
    blocks[-1].end = line
    return blocks


@dataclass
class Case:
    """One ``[[cases]]`` table: its ``name`` and its settings as (dotted key, value, line,
    column), in the file's order."""

    index: int
    name: str
    line: int
    settings: list[tuple[str, Any, int, int]]

    @property
    def pairs(self) -> list[tuple[str, Any]]:
        return [(k, v) for k, v, _, _ in self.settings]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "settings": {k: v for k, v, _, _ in self.settings}, "line": self.line}


def _short(key: str) -> str:
    segs = [s for s in key.split(".") if not s.isdigit()]
    return segs[-1] if segs else key


def _value_text(v: Any) -> str:
    if isinstance(v, dict):
        return str(v.get("kind", json.dumps(v, separators=(",", ":"))))
    if isinstance(v, list):
        return "[" + ",".join(_value_text(e) for e in v) + "]"
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _walk(node: Any, segs: list[str]) -> Any:
    for s in segs:
        node = node[s]
    return node


def extract(text: str, source: str) -> tuple[str, list[Case]]:
    """Takes the ``[[cases]]`` tables out of a scenario's text.

    Returns:
        The text without them (each of their lines blank, so other lines keep their numbers),
        and the cases.

    Raises:
        ScenarioError: naming the file, line and column of a case that is not a table of
            settings, a ``name`` that is not text, or two cases with the same name.
    """
    if "cases" not in text:
        return text, []
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return text, []  # the engine reports malformed TOML with its line
    if "cases" not in doc:
        return text, []
    try:
        blocks = scan(text)
    except (_ScanError, tomllib.TOMLDecodeError, ValueError):
        raise scenario_error(source, 1, 1, "cases", "cannot read the [[cases]] tables; write each as a [[cases]] table of "
                             "\"dotted.key\" = value lines") from None
    for b in blocks:
        if b.segs is None:
            for k in b.keys:
                if k.segs[0] == "cases":
                    raise scenario_error(source, k.line, k.col, "cases", "write cases as [[cases]] tables, one per case")
        elif b.segs[0] == "cases" and not (b.array and len(b.segs) == 1):
            raise scenario_error(source, b.line, 1, ".".join(b.segs),
                                 "a case is one [[cases]] table of \"dotted.key\" = value settings; sub-tables are not cases")
    case_blocks = [b for b in blocks if b.segs == ["cases"] and b.array]
    docs = doc["cases"]
    if not isinstance(docs, list) or len(docs) != len(case_blocks):
        raise scenario_error(source, case_blocks[0].line if case_blocks else 1, 1, "cases",
                             "cannot read the [[cases]] tables; write each as a [[cases]] table")
    lines = text.split("\n")
    for b in case_blocks:
        for ln in range(b.line, b.end + 1):
            lines[ln - 1] = ""
    stripped = "\n".join(lines)
    try:
        check = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        check = None
    if check != {k: v for k, v in doc.items() if k != "cases"}:
        raise scenario_error(source, case_blocks[0].line, 1, "cases",
                             "cannot separate the [[cases]] tables from the rest of the file (please report this)")
    cases: list[Case] = []
    names: dict[str, int] = {}
    for i, (b, d) in enumerate(zip(case_blocks, docs)):
        name: Optional[str] = None
        settings = []
        for k in b.keys:
            path = ".".join(k.segs)
            if k.segs == ["name"]:
                if not isinstance(d["name"], str) or not d["name"].strip():
                    raise scenario_error(source, k.line, k.col, f"cases[{i}].name", "a case's name is a non-empty string")
                name = d["name"].strip()
                continue
            settings.append((path, _walk(d, k.segs), k.line, k.col))
        if name is None:
            name = ", ".join(f"{_short(p)}={_value_text(v)}" for p, v, _, _ in settings) or "base"
        if name in names:
            raise scenario_error(source, b.line, 1, f"cases[{i}]",
                                 f"two cases are named {name!r} (cases {names[name]} and {i}); give each a distinct `name`")
        names[name] = i
        cases.append(Case(i, name, b.line, settings))
    return stripped, cases
