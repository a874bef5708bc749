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

import functools
import json
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
    """The TOML grammar could not read a text that tomllib read."""


#: Node types of a key in tree-sitter's TOML grammar.
_KEY_NODES = ("bare_key", "quoted_key", "dotted_key")


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    """A parser of tree-sitter's TOML grammar (its syntax tree places every table and key)."""
    import tree_sitter
    import tree_sitter_toml

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_toml.language()))


def _segs(raw: str) -> list[str]:
    """The segments of a TOML key as written (``"a.b"`` -> ``["a.b"]``, ``a.b`` -> ``["a", "b"]``)."""
    doc = tomllib.loads(f"{raw} = 0")
    segs = []
    node: Any = doc
    while isinstance(node, dict):
        (k, node), = node.items()
        segs.append(k)
    return segs


def scan(text: str) -> list[Block]:
    """The tables of a (valid) TOML text with the lines and columns of their keys, from its
    syntax tree: the root first (``segs`` ``None``, its keys before the first header), then
    each ``[table]`` and ``[[array table]]`` in the file's order, each ending on the line
    before the next header (comments and blank lines up to it included).

    Raises:
        _ScanError: if the grammar does not read the text (not TOML).
    """
    data = text.encode("utf-8")
    root = _parser().parse(data).root_node
    if root.has_error:
        raise _ScanError

    def key_node(node: Any) -> Any:
        key = next((c for c in node.children if c.type in _KEY_NODES), None)
        if key is None:
            raise _ScanError
        return key

    def segs(node: Any) -> list[str]:
        return _segs(data[node.start_byte:node.end_byte].decode("utf-8"))

    def column(node: Any) -> int:  # 1-based, in characters (the tree counts bytes)
        return len(data[node.start_byte - node.start_point[1]:node.start_byte].decode("utf-8")) + 1

    def keys(node: Any) -> list[KeyLoc]:
        return [KeyLoc(segs(key_node(p)), p.start_point[0] + 1, column(key_node(p)), p.end_point[0] + 1)
                for p in node.children if p.type == "pair"]

    last_line = text.count("\n") + 1
    blocks = [Block(None, False, 0, last_line, keys(root))]
    for node in root.children:
        if node.type in ("table", "table_array_element"):
            end = node.end_point[0] + (1 if node.end_point[1] else 0)  # a node ending at a line's start ends before it
            blocks.append(Block(segs(key_node(node)), node.type == "table_array_element", node.start_point[0] + 1, end, keys(node)))
    if len(blocks) > 1:
        blocks[0].end = blocks[1].line - 1
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
                    raise scenario_error(source, k.line, k.col, f"cases.{i}.name", "a case's name is a non-empty string")
                name = d["name"].strip()
                continue
            settings.append((path, _walk(d, k.segs), k.line, k.col))
        if name is None:
            name = ", ".join(f"{_short(p)}={_value_text(v)}" for p, v, _, _ in settings) or "base"
        if name in names:
            raise scenario_error(source, b.line, 1, f"cases.{i}",
                                 f"two cases are named {name!r} (cases {names[name]} and {i}); give each a distinct `name`")
        names[name] = i
        cases.append(Case(i, name, b.line, settings))
    return stripped, cases
