"""The Python API: run a scenario's replications and get polars DataFrames back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Optional, Union

from . import _tpsim
from .results import Results, atomic_write_text
from .scenario import Scenario, load


def run_key(scenario: Scenario, seed: int, run: int) -> str:
    """Content hash (SHA-256 hex) identifying one stored run: the resolved scenario, the seed,
    the replication index and the engine version (DESIGN §6). A changed scenario never
    matches a stored run of the old one."""
    blob = json.dumps(
        {"scenario": scenario.resolved, "seed": seed, "run": run, "engine": _tpsim.__version__},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def run_one(scenario: Scenario, seed: int, run: int, pcap_dir: Optional[Path] = None) -> dict[str, Any]:
    """Runs replication ``run`` (0-based) with master ``seed``; returns the engine's columns
    plus ``run`` and ``seed``. The GIL is released while the engine runs.

    Raises:
        ScenarioError: if the scenario is invalid.
        RuntimeError: if the engine fails (e.g. a pcap file cannot be written).
    """
    out = _tpsim.run(scenario.text, scenario.source, seed=seed, run=run, pcap_dir=str(pcap_dir) if pcap_dir else None)
    out["run"] = run
    out["seed"] = seed
    return out


def run(
    scenario: Union[Scenario, str, Path],
    seed: Optional[int] = None,
    runs: Optional[int] = None,
    out: Union[str, Path, None] = None,
    pcap: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Results:
    """Runs ``runs`` replications of ``scenario`` and returns their tables.

    Args:
        scenario: a :class:`Scenario`, or the path of a scenario file.
        seed: master seed (default: ``simulation.seed``). Replication ``r`` uses the random
            streams of (seed, r), so results do not depend on how runs are scheduled.
        runs: replications (default: ``simulation.runs``); must be >= 1.
        out: if given, each finished run is stored at once in ``out/runs/<hash>.json`` and
            reused by a later call with the same scenario, seed and run (resume), and the
            tables are written to ``out`` atomically.
        pcap: write pcap files (for links that ask for them) under ``out/pcap/run<r>/``.
        progress: called as ``progress(done, total)`` after each run.

    Returns:
        :class:`Results` with ``flows``, ``network`` and ``timeseries`` DataFrames.

    Raises:
        ScenarioError: (ValueError) for an invalid scenario or ``runs < 1``.
        RuntimeError: if the engine fails.
    """
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    seed = sc.seed if seed is None else int(seed)
    n = sc.runs if runs is None else int(runs)
    if n < 1:
        raise _tpsim.ScenarioError(f"runs must be at least 1, got {n}")
    outdir = Path(out) if out is not None else None
    results = []
    for r in range(n):
        stored = None
        if outdir is not None:
            stored = outdir / "runs" / f"{run_key(sc, seed, r)}.json"
            if stored.exists() and not pcap:
                results.append(json.loads(stored.read_text(encoding="utf-8")))
                if progress:
                    progress(r + 1, n)
                continue
        pcap_dir = outdir / "pcap" / f"run{r}" if (pcap and outdir is not None) else None
        res = run_one(sc, seed, r, pcap_dir)
        if stored is not None:
            atomic_write_text(stored, json.dumps(res))
        results.append(res)
        if progress:
            progress(r + 1, n)
    table = Results.from_runs(results)
    if outdir is not None:
        table.write(outdir)
        atomic_write_text(outdir / "scenario.resolved.json", json.dumps(sc.resolved, indent=2, sort_keys=True))
    return table
