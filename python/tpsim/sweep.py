"""Sweeps: expand a grid of scenario parameters into points, and runs into jobs.

A sweep comes from the scenario's ``[sweep]`` table and from ``--sweep key=v1,v2`` on the
command line (which adds a dimension or replaces the file's values of that key);
``--set key=value`` changes a key for every point. Keys are dotted paths with array elements
by index (``flows.0.app.interval``). Every point is validated before any run starts.

Replication ``r`` of every point uses the random streams of (seed, r): the points of a
sweep see common random numbers, which makes differences between points less noisy, and
the replications of a point are independent.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

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
        scenario: the scenario with this point's values set and no ``[sweep]`` table.
    """

    index: int
    params: dict[str, Any]
    scenario: Scenario


@dataclass
class Job:
    """One run: a point and a replication index."""

    point: Point
    seed: int
    run: int
    key: str = field(default="")


def parse_value(text: str) -> Any:
    """A command-line value: a TOML literal if it is one (``3``, ``0.5``, ``true``,
    ``"udp"``, ``[1, 2]``), else the text itself as a string (``10ms``, ``udp``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


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
    """``["a.b=1,2,3"]`` -> ``[("a.b", [1, 2, 3])]`` (values split on commas).

    Raises:
        ScenarioError: for an item without ``=`` or with an empty value list.
    """
    out = []
    for it in items:
        key, sep, values = it.partition("=")
        vals = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
        if not sep or not key.strip():
            raise _tpsim.ScenarioError(f"--sweep expects KEY=V1,V2,..., got {it!r}")
        if not vals:
            raise _tpsim.ScenarioError(f"--sweep {key.strip()}: expected a non-empty list of values")
        out.append((key.strip(), vals))
    return out


def _apply(text: str, source: str, pairs: Sequence[tuple[str, Any]]) -> str:
    return _tpsim.apply_overrides(text, json.dumps([list(p) for p in pairs]), source, True)


def _check_key(base: Scenario, key: str, origin: str) -> None:
    node: Any = {k: v for k, v in base.resolved.items() if k != "sweep"}
    for seg in key.split("."):
        if isinstance(node, dict) and seg in node:
            node = node[seg]
        elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
            node = node[int(seg)]
        else:
            raise _tpsim.ScenarioError(f"{origin}: unknown key `{key}`: no such key in this scenario")


def expand(base: Scenario, sets: Sequence[tuple[str, Any]] = (), sweeps: Sequence[tuple[str, list[Any]]] = ()) -> list[Point]:
    """Every point of the grid of ``base``'s ``[sweep]`` table, with ``sweeps`` added (a key
    given in both takes the command line's values) and ``sets`` applied to every point.

    Raises:
        ScenarioError: for an unknown key, an empty value list, or a point whose values make
            the scenario invalid (the message names the point's values).
    """
    file_sweep: dict[str, list[Any]] = dict(tomllib.loads(base.text).get("sweep", {}))
    for key, _ in sets:
        _check_key(base, key, "--set")
    for key, values in sweeps:
        _check_key(base, key, "--sweep")
        file_sweep[key] = list(values)
    for key, values in file_sweep.items():
        if not isinstance(values, list) or not values:
            raise _tpsim.ScenarioError(f"sweep key `{key}`: expected a non-empty list of values")
    keys = list(file_sweep)
    points = []
    for i, combo in enumerate(itertools.product(*(file_sweep[k] for k in keys))):
        params = dict(zip(keys, combo))
        pairs = list(sets) + list(params.items())
        label = ", ".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
        source = f"{base.source} [sweep point {i}: {label}]" if params else base.source
        try:
            text = _apply(base.text, base.source, pairs)
            sc = Scenario(text, source)
        except _tpsim.ScenarioError as e:
            raise _tpsim.ScenarioError(str(e).replace(base.source + ":", source + ":", 1) if params else str(e)) from None
        points.append(Point(i, params, sc))
    return points


def jobs_for(points: Sequence[Point], seed: int, runs: int) -> list[Job]:
    """The (point, replication) jobs, point-major."""
    from .api import run_key

    return [Job(p, seed, r, run_key(p.scenario, seed, r)) for p in points for r in range(runs)]


def point_value(v: Any) -> Any:
    """A swept value as a table cell: scalars as they are, anything else as JSON text."""
    return v if isinstance(v, (str, int, float, bool)) else json.dumps(v)


def runs_of(base: Scenario, runs: Optional[int]) -> int:
    """Replications: the argument, else the scenario's ``simulation.runs``.

    Raises:
        ScenarioError: if fewer than 1.
    """
    n = base.runs if runs is None else int(runs)
    if n < 1:
        raise _tpsim.ScenarioError(f"runs must be at least 1, got {n}")
    return n
