"""Sweeps: expand a grid of scenario parameters into points, and runs into jobs.

A sweep comes from the scenario's ``[sweep]`` table and from ``--sweep key=v1,v2`` on the
command line (which adds a dimension or replaces the file's values of that key);
``--set key=value`` changes a key for every point (a key the sweep or a case also sets is an
error: give it with ``--sweep`` instead). ``[[cases]]`` tables (:mod:`tpsim.cases`) are
paired settings: every case runs with every point of the grid. Keys are dotted paths with
array elements by index (``flows.0.app.interval``). A linked key, ``"a + b"``, is one
dimension whose every value is given to each of the keys it joins (e.g. one receive window
for SCTP's ``sctp.receive_buffer`` and TCP's ``tcp.receive_window``). Every point is
validated before any run starts.

Command-line values are TOML literals when they are one (``3``, ``0.5``, ``true``,
``"udp"``, ``["5m/s", "5m/s"]``, ``{ kind = "bulk" }``) and text otherwise (``10ms``); a list
may be written without quotes, ``[5m/s,5m/s]``. ``--sweep`` separates values by commas
outside brackets: ``--sweep "nodes.mobility.speed=[5m/s,5m/s],[10m/s,10m/s]"``.

Replication ``r`` of every point uses the random streams of (seed, r): the points of a
sweep see common random numbers, which makes differences between points less noisy, and
the replications of a point are independent.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from . import _tpsim
from .scenario import Scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class Point:
    """One point of a sweep.

    Attributes:
        index: position in the grid (0-based, row-major in key order).
        params: swept key -> value at this point (ordered as the sweep's keys).
        scenario: the scenario with this point's values set and no ``[sweep]`` table
            (``None`` for points read back from stored results).
        case: the case of the point, if the scenario has ``[[cases]]`` (its name is the
            ``case`` parameter).
    """

    index: int
    params: dict[str, Any]
    scenario: Optional[Scenario]
    #: The point's case (``{"name", "settings", "line"}``), if the scenario has ``[[cases]]``.
    case: Optional[dict[str, Any]] = None


@dataclass
class Job:
    """One run: a point and a replication index."""

    point: Point
    seed: int
    run: int
    key: str = field(default="")


def _split_top(text: str, seps: str = ",") -> list[str]:
    """``text`` split at ``seps`` outside brackets, braces and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < len(text):
                cur.append(text[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c in seps and depth == 0:
            parts.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def parse_value(text: str) -> Any:
    """A command-line value: a TOML literal if it is one (``3``, ``0.5``, ``true``,
    ``"udp"``, ``[1, 2]``, ``{ kind = "bulk" }``), a list of such values or bare words
    (``[5m/s,5m/s]`` -> ``["5m/s", "5m/s"]``), else the text itself as a string (``10ms``,
    ``udp``)."""
    text = text.strip()
    try:
        v = tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        v = None
    else:
        if _plain(v):
            return v
        return text  # a date or time: the scenario format has none, keep the text
    if len(text) >= 2 and text[0] == "[" and text[-1] == "]":
        inner = text[1:-1].strip()
        return [parse_value(p) for p in _split_top(inner)] if inner else []
    return text


def _plain(v: Any) -> bool:
    if isinstance(v, (str, int, float, bool)):
        return True
    if isinstance(v, list):
        return all(_plain(e) for e in v)
    if isinstance(v, dict):
        return all(_plain(e) for e in v.values())
    return False


def parse_set(items: Iterable[str]) -> list[tuple[str, Any]]:
    """``["a.b=1", ...]`` -> ``[("a.b", 1), ...]``.

    Raises:
        ScenarioError: for an item without ``=``.
    """
    out = []
    for it in items:
        key, sep, value = it.partition("=")
        if not sep or not key.strip():
            raise _tpsim.ScenarioError(f"--set expects KEY=VALUE, got {it!r}")
        out.append((key.strip(), parse_value(value.strip())))
    return out


def parse_sweep(items: Iterable[str]) -> list[tuple[str, list[Any]]]:
    """``["a.b=1,2,3"]`` -> ``[("a.b", [1, 2, 3])]``: values split on commas (or
    semicolons) outside brackets, so ``"k=[5m/s,5m/s],[10m/s,10m/s]"`` is two list values.

    Raises:
        ScenarioError: for an item without ``=`` or with an empty value list.
    """
    out = []
    for it in items:
        key, sep, values = it.partition("=")
        if not sep or not key.strip():
            raise _tpsim.ScenarioError(f"--sweep expects KEY=V1,V2,..., got {it!r}")
        vals = [parse_value(v.strip()) for v in _split_top(values, ",;") if v.strip()]
        if not vals:
            raise _tpsim.ScenarioError(f"--sweep {key.strip()}: expected a non-empty list of values")
        out.append((key.strip(), vals))
    return out


def parts(key: str) -> list[str]:
    """The keys a sweep key sets: ``"a + b"`` -> ``["a", "b"]``, ``"a"`` -> ``["a"]``."""
    return [k.strip() for k in key.split("+")]


def normal_key(key: str) -> str:
    """A sweep key in its one written form (linked keys joined by ``" + "``)."""
    return " + ".join(parts(key))


def _apply(text: str, source: str, pairs: Sequence[tuple[str, Any]]) -> str:
    return _tpsim.apply_overrides(text, json.dumps([list(p) for p in pairs]), source, True)


def _check_key(base: Scenario, key: str, origin: str) -> None:
    for k in parts(key):
        if not k:
            raise _tpsim.ScenarioError(f"{origin}: `{key}`: expected dotted keys joined by `+`")
        if not _has_key(base, k):
            raise _tpsim.ScenarioError(f"{origin}: unknown key `{k}`: no such key in this scenario")


def _has_key(base: Scenario, key: str) -> bool:
    """Whether ``key`` names a value of ``base``: one the scenario has, or one inside an
    optional table it leaves out (``flows.0.tcp.mss`` of a flow without a ``tcp`` table),
    which setting it creates."""
    node: Any = {k: v for k, v in base.resolved.items() if k != "sweep"}
    for seg in key.split("."):
        if node is None:
            return _schema_has(key.split("."))
        if isinstance(node, dict) and seg in node:
            node = node[seg]
        elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
            node = node[int(seg)]
        else:
            return False
    return True


def _schema_has(segs: Sequence[str]) -> bool:
    """Whether the scenario format has a key at the path ``segs`` (array elements by
    index), following the references and alternatives of its JSON schema."""
    from .scenario import json_schema

    root = json_schema()

    def deref(node: dict[str, Any]) -> list[dict[str, Any]]:
        if "$ref" in node:
            return deref(root["definitions"][node["$ref"].rsplit("/", 1)[1]])
        out = [node]
        for alt in ("anyOf", "oneOf", "allOf"):
            for n in node.get(alt, []):
                out += deref(n)
        return out

    def walk(node: dict[str, Any], rest: Sequence[str]) -> bool:
        if not rest:
            return True
        seg = rest[0]
        for n in deref(node):
            props = n.get("properties", {})
            if seg in props and walk(props[seg], rest[1:]):
                return True
            if seg.isdigit() and isinstance(n.get("items"), dict) and walk(n["items"], rest[1:]):
                return True
        return False

    return walk(root, list(segs))


def overlaps(a: str, b: str) -> bool:
    """Whether two dotted keys set the same value: equal, or one inside the other
    (``flows.0.app`` and ``flows.0.app.size``); a linked key overlaps what any of its keys
    overlaps."""
    for pa in parts(a):
        for pb in parts(b):
            sa, sb = pa.split("."), pb.split(".")
            n = min(len(sa), len(sb))
            if sa[:n] == sb[:n]:
                return True
    return False


def _sweep_lines(base: Scenario) -> dict[str, tuple[int, int]]:
    """The line and column of each key of the file's ``[sweep]`` table."""
    from .cases import _ScanError, scan

    try:
        blocks = scan(base.text)
    except (_ScanError, ValueError, tomllib.TOMLDecodeError):
        return {}
    out = {}
    for b in blocks:
        if b.segs == ["sweep"]:
            for k in b.keys:
                out[normal_key(".".join(k.segs))] = (k.line, k.col)
    return out


def _case_error(e: Exception, base: Scenario, case: Any, source: str) -> Exception:
    """A point's ScenarioError with the problems a case's setting caused placed at that
    setting's line in the file."""
    diags = getattr(e, "diagnostics", None) or []

    def fmt(src: str, d: dict) -> str:
        return f"{src}:{d['line']}:{d['column']}: " + (f"key `{d['path']}`: " if d["path"] else "") + d["message"]

    if not diags or "\n".join(fmt(source, d) for d in diags) != str(e):
        return _tpsim.ScenarioError(str(e).replace(base.source + ":", source + ":", 1))
    out = []
    for d in diags:
        d = dict(d)
        for key, _, line, col in case.settings:
            p = normal_key(key)  # the engine's diagnostics write keys as --set does
            if d["path"] == p or d["path"].startswith(p + "."):
                d["line"], d["column"] = line, col
                d["message"] += f" (set by case {case.name!r})"
                break
        out.append(d)
    err = _tpsim.ScenarioError("\n".join(fmt(source, d) for d in out))
    try:
        err.diagnostics = out
    except AttributeError:  # pragma: no cover
        pass
    return err


def expand(base: Scenario, sets: Sequence[tuple[str, Any]] = (), sweeps: Sequence[tuple[str, list[Any]]] = (),
           admit: Optional[Callable[[int], None]] = None) -> list[Point]:
    """Every point of ``base``'s cases x the grid of its ``[sweep]`` table, with ``sweeps``
    added (a key given in both takes the command line's values) and ``sets`` applied to
    every point (:func:`iter_points`, as a list).

    Raises:
        ScenarioError: for an unknown key, an empty value list, a ``--set`` of a key that the
            sweep or a case also sets, a case key that the sweep also sets, or a point whose
            values make the scenario invalid (the message names the point's values, and the
            line of the case's setting that caused it).
    """
    return list(iter_points(base, sets, sweeps, admit))


def iter_points(base: Scenario, sets: Sequence[tuple[str, Any]] = (), sweeps: Sequence[tuple[str, list[Any]]] = (),
                admit: Optional[Callable[[int], None]] = None) -> Iterator[Point]:
    """The points of :func:`expand` one at a time (a sweep of any size in bounded memory);
    the keys and values are checked before the first point, then ``admit(number of
    points)`` is called (it may raise to refuse the sweep), then each point is checked as
    it is made. Raises as :func:`expand`."""
    from .cases import scenario_error

    # Read from the text (the resolved scenario's keys are sorted; the file's order is the
    # points'), and only when there is a [sweep] table: a large scenario is not parsed again.
    file_sweep: dict[str, list[Any]] = ({normal_key(k): v for k, v in tomllib.loads(base.text).get("sweep", {}).items()}
                                        if "sweep" in base.resolved else {})
    file_keys = set(file_sweep)
    lines = _sweep_lines(base) if file_sweep else {}
    cases = list(getattr(base, "cases", []) or [])
    for key, _ in sets:
        _check_key(base, key, "--set")
    cli_keys = []
    for key, values in sweeps:
        _check_key(base, key, "--sweep")
        key = normal_key(key)
        file_sweep[key] = list(values)
        cli_keys.append(key)
    for key, values in file_sweep.items():
        if not isinstance(values, list) or not values:
            raise _tpsim.ScenarioError(f"sweep key `{key}`: expected a non-empty list of values")
        if any(k in ("simulation.runs", "simulation.seed") for k in parts(key)):
            raise _tpsim.ScenarioError(f"sweep key `{key}`: the replications and their seeds are the same at every "
                                       f"point; set them once (--runs, --seed or --set {key}=N)")
        for other in file_sweep:
            if other != key and overlaps(key, other):
                raise _tpsim.ScenarioError(f"sweep keys `{key}` and `{other}` set the same value; sweep it once")
    for key, _ in sets:
        for sk in file_sweep:
            if overlaps(key, sk):
                if sk in cli_keys:
                    raise _tpsim.ScenarioError(f"--set {key}: --sweep {sk} also sets it; give it once")
                where = f" ({base.source}:{lines[sk][0]})" if sk in lines else ""
                raise _tpsim.ScenarioError(
                    f"--set {key}: the scenario's [sweep] also sets `{sk}`{where}, which would override it; "
                    f"to run other values, replace the sweep's with --sweep {sk}=V1,V2,...")
        for case in cases:
            for ck, _, line, _ in case.settings:
                if overlaps(key, ck):
                    raise _tpsim.ScenarioError(
                        f"--set {key}: case {case.name!r} ({base.source}:{line}) also sets `{ck}`, which would override it; "
                        "change the cases instead")
    for case in cases:
        for ck, _, line, col in case.settings:
            if not _has_key(base, ck):
                raise scenario_error(base.source, line, col, f"cases[{case.index}].{ck}", "unknown key: no such key in this scenario")
            for sk in file_sweep:
                if overlaps(ck, sk):
                    how = f"--sweep {sk}" if sk in cli_keys and sk not in file_keys else f"the [sweep] key `{sk}`"
                    raise scenario_error(base.source, line, col, f"cases[{case.index}].{ck}",
                                         f"{how} also sets this key; set it in the cases or in the sweep, not both")
    keys = list(file_sweep)
    _check_report(base, keys)
    if admit is not None:
        admit(max(len(cases), 1) * math.prod(len(file_sweep[k]) for k in keys))
    i = -1
    for case in cases or [None]:
        for combo in itertools.product(*(file_sweep[k] for k in keys)):
            i += 1
            params = ({"case": case.name} if case is not None else {}) | dict(zip(keys, combo))
            pairs = list(sets) + (case.pairs if case is not None else []) + [(k, v) for key, v in zip(keys, combo) for k in parts(key)]
            label = ", ".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
            source = f"{base.source} [sweep point {i}: {label}]" if params else base.source
            try:
                if not pairs and "sweep" not in base.resolved:
                    sc = base  # nothing to set or drop: the point is the scenario (not read again)
                else:
                    sc = Scenario(_apply(base.text, base.source, pairs), source)
            except _tpsim.ScenarioError as e:
                if case is not None:
                    raise _case_error(e, base, case, source) from None
                raise _tpsim.ScenarioError(str(e).replace(base.source + ":", source + ":", 1) if params else str(e)) from None
            yield Point(i, params, sc, case.as_dict() if case is not None else None)


def _check_report(base: Scenario, keys: list[str]) -> None:
    """The ``[report]`` table names swept keys, existing flows and known metrics.

    Raises:
        ScenarioError: for a ``report.timeseries_at`` or ``report.layout`` key that is not
            swept (both may name ``case``, ``timeseries_at`` with a case's name), a
            ``report.timeseries_flows`` index with no flow, or a ``report.metrics`` name that
            is no metric of the flows or network table.
    """
    from .labels import did_you_mean
    from .metrics import METRICS

    report = base.resolved.get("report") or {}
    for which in ("metrics", "table"):
        for m in report.get(which) or []:
            if m not in METRICS:
                raise _tpsim.ScenarioError(f"{base.source}: report.{which}: `{m}` is no metric of the flows or network "
                                           f"table{did_you_mean(m, list(METRICS))}")
    swept = ", ".join(f"`{s}`" for s in keys) or "none"
    names = {c.name for c in base.cases}
    case_or = " or `case`" if base.cases else ""
    for k, v in (report.get("timeseries_at") or {}).items():
        if k == "case" and base.cases:
            if v not in names:
                raise _tpsim.ScenarioError(f"{base.source}: report.timeseries_at: no case named {json.dumps(v)} "
                                           f"(cases: {', '.join(json.dumps(n) for n in sorted(names))})")
        elif normal_key(k) not in keys:
            raise _tpsim.ScenarioError(f"{base.source}: report.timeseries_at: `{k}` is not a swept key{case_or} (swept: {swept})")
    for axis, k in (report.get("layout") or {}).items():
        if normal_key(k) not in keys and not (k == "case" and base.cases):
            raise _tpsim.ScenarioError(f"{base.source}: report.layout.{axis}: `{k}` is not a swept key{case_or} (swept: {swept})")
    n = len(base.resolved.get("flows") or [])
    for i in report.get("timeseries_flows") or []:
        if i >= n:
            raise _tpsim.ScenarioError(f"{base.source}: report.timeseries_flows: no flow {i} (the scenario has {n})")


def point_value(v: Any) -> Any:
    """A swept value as a table cell: scalars as they are, anything else as JSON text."""
    return v if isinstance(v, (str, int, float, bool)) else json.dumps(v)


def set_int(sets: Sequence[tuple[str, Any]], key: str) -> Optional[int]:
    """The last ``--set`` value of ``key`` (``"simulation.runs"``, ``"simulation.seed"``:
    the keys a plan reads once, not per point), ``None`` if not set.

    Raises:
        ScenarioError: if the value is not an integer.
    """
    values = [v for k, v in sets if normal_key(k) == key]
    if not values:
        return None
    v = values[-1]
    if isinstance(v, bool) or not isinstance(v, int):
        raise _tpsim.ScenarioError(f"--set {key}: expected an integer, got {v!r}")
    return v


def runs_of(base: Scenario, runs: Optional[int]) -> int:
    """Replications: the argument, else the scenario's ``simulation.runs``.

    Raises:
        ScenarioError: if fewer than 1.
    """
    n = base.runs if runs is None else int(runs)
    if n < 1:
        raise _tpsim.ScenarioError(f"runs must be at least 1, got {n}")
    return n
