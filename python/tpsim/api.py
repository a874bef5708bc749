"""The Python API: run a scenario's sweep points and replications, in parallel, resumably,
and get polars DataFrames back."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from . import _tpsim
from .results import Results, atomic_write_text
from .scenario import Scenario, load
from .sweep import Job, expand, jobs_for, parse_set, parse_sweep, point_value, runs_of

#: Environment variable of the deterministic failure hook used by the tests: "POINT:RUN"
#: makes that job raise instead of running.
FAIL_HOOK = "TPSIM_TEST_FAIL_RUN"


def run_key(scenario: Scenario, seed: int, run: int) -> str:
    """Content hash (SHA-256 hex) identifying one stored run: the resolved scenario of its
    sweep point (sweep values set, no ``[sweep]`` table), the seed, the replication index and
    the engine version. A changed scenario never matches a stored run of the old
    one."""
    blob = json.dumps(
        {"scenario": scenario.resolved, "seed": seed, "run": run, "engine": _tpsim.__version__},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _job_main(text: str, source: str, seed: int, run: int, point: int, pcap_dir: Optional[str]) -> dict[str, Any]:
    """Executes one job (in this process, a worker process or a Dask worker)."""
    if os.environ.get(FAIL_HOOK) == f"{point}:{run}":
        raise RuntimeError(f"deliberate failure ({FAIL_HOOK} test hook)")
    return _tpsim.run(text, source, seed=seed, run=run, pcap_dir=pcap_dir)


@dataclass
class RunFailure:
    """A run that raised: its sweep point's values, seed, replication index and error."""

    point: int
    params: dict[str, Any]
    seed: int
    run: int
    error: str

    def __str__(self) -> str:
        p = ", ".join(f"{k} = {json.dumps(v)}" for k, v in self.params.items())
        where = f"point {self.point} ({p})" if p else f"point {self.point}"
        return f"{where}, seed {self.seed}, run {self.run}: {self.error}"


class SweepFailed(RuntimeError):
    """Some runs failed; the others are stored and a re-run completes only the missing ones.

    Attributes:
        failures: the failed runs.
        completed: number of runs stored.
    """

    def __init__(self, failures: list[RunFailure], completed: int, total: int):
        self.failures = failures
        self.completed = completed
        lines = "\n".join(f"  {f}" for f in failures)
        super().__init__(f"{len(failures)} of {total} runs failed ({completed} stored):\n{lines}")


@dataclass
class Plan:
    """What a run command will do: the points, the jobs and how many are already stored."""

    base: Scenario
    points: list
    jobs: list[Job]
    stored: int


def plan(
    scenario: Union[Scenario, str, Path],
    seed: Optional[int] = None,
    runs: Optional[int] = None,
    set: Union[Sequence[tuple[str, Any]], Iterable[str], None] = None,
    sweep: Union[Sequence[tuple[str, list[Any]]], Iterable[str], None] = None,
    out: Union[str, Path, None] = None,
) -> Plan:
    """Validates everything and lists the jobs, before any run starts.

    ``set`` and ``sweep`` take ``(key, value)`` / ``(key, [values])`` pairs or the command
    line's ``"key=value"`` / ``"key=v1,v2"`` strings.

    Raises:
        ScenarioError: for an invalid scenario, an unknown key, an empty value list, or runs < 1.
    """
    base = scenario if isinstance(scenario, Scenario) else load(scenario)
    sets = _pairs(set, parse_set)
    sweeps = _pairs(sweep, parse_sweep)
    n = runs_of(base, runs)
    seed = base.seed if seed is None else int(seed)
    points = expand(base, sets, sweeps)
    jobs = jobs_for(points, seed, n)
    stored = sum(1 for j in jobs if out is not None and _stored_path(Path(out), j).exists())
    return Plan(base, points, jobs, stored)


def _pairs(items: Any, parser: Callable[[Iterable[str]], list]) -> list:
    if not items:
        return []
    items = list(items)
    return parser(items) if isinstance(items[0], str) else [tuple(i) for i in items]


def _stored_path(out: Path, job: Job) -> Path:
    return out / "runs" / f"{job.key}.json"


def run(
    scenario: Union[Scenario, str, Path],
    seed: Optional[int] = None,
    runs: Optional[int] = None,
    out: Union[str, Path, None] = None,
    jobs: int = 1,
    scheduler: Optional[str] = None,
    set: Union[Sequence[tuple[str, Any]], Iterable[str], None] = None,
    sweep: Union[Sequence[tuple[str, list[Any]]], Iterable[str], None] = None,
    pcap: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Results:
    """Runs every sweep point's replications and returns their tables.

    Args:
        scenario: a :class:`Scenario`, or the path of a scenario file.
        seed: master seed (default: ``simulation.seed``). Replication ``r`` uses the random
            streams of (seed, r), so results do not depend on how runs are scheduled.
        runs: replications per point (default: ``simulation.runs``); must be >= 1.
        out: if given, each finished run is stored at once in ``out/runs/<hash>.json`` and
            reused by a later call (resume after an interruption or a failure), and the tables
            are written to ``out`` atomically.
        jobs: local worker processes (1 runs in this process; 0 or less means all cores).
        scheduler: address of a Dask distributed scheduler (``tcp://host:port``); runs the jobs
            on its workers instead of local processes (needs ``pip install "tpsim[dask]"``).
        set: keys set for every point, ``[("flows.0.app.interval", "10ms")]`` or ``["k=v"]``.
        sweep: extra sweep dimensions, ``[("flows.0.app.size", ["64B", "128B"])]`` or
            ``["k=v1,v2"]``.
        pcap: write pcap files (of links that ask for them) under ``out/pcap/p<point>-run<r>/``.
        progress: called as ``progress(done, total)`` as runs finish.

    Returns:
        :class:`Results`; with a sweep, every table has a ``point`` column and one column per
        swept key.

    Raises:
        ScenarioError: (ValueError) for invalid input, before any run starts.
        SweepFailed: if some runs failed (the others are stored when ``out`` is given).
        KeyboardInterrupt: if interrupted (finished runs are stored when ``out`` is given).
    """
    p = plan(scenario, seed, runs, set, sweep, out)
    return run_plan(p, out, jobs=jobs, scheduler=scheduler, pcap=pcap, progress=progress)


def run_plan(
    p: Plan,
    out: Union[str, Path, None] = None,
    jobs: int = 1,
    scheduler: Optional[str] = None,
    pcap: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Results:
    """Executes a :func:`plan` (arguments as for :func:`run`) and merges its tables; with
    ``out``, writes them and the resolved scenario there.

    Raises:
        SweepFailed: if some runs failed (the others are stored when ``out`` is given).
        KeyboardInterrupt: if interrupted (finished runs are stored when ``out`` is given).
    """
    outdir = Path(out) if out is not None else None
    results = execute(p.jobs, outdir, jobs=jobs, scheduler=scheduler, pcap=pcap, progress=progress)
    table = Results.from_runs(results, param_keys=list(p.points[0].params))
    table.points = p.points
    table.base = p.base
    if outdir is not None:
        table.write(outdir)
        atomic_write_text(outdir / "scenario.resolved.json", json.dumps(p.base.resolved, indent=2, sort_keys=True) + "\n")
    return table


def execute(
    job_list: list[Job],
    outdir: Optional[Path],
    jobs: int = 1,
    scheduler: Optional[str] = None,
    pcap: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
) -> list[dict[str, Any]]:
    """Runs the jobs not yet stored in ``outdir``, stores each as it finishes, and returns
    every job's result (stored or new) in job order.

    Raises:
        SweepFailed: if any job raised; every other job still ran and was stored.
        KeyboardInterrupt: after stopping the workers; finished runs stay stored.
    """
    total = len(job_list)
    results: dict[int, dict[str, Any]] = {}
    todo: list[tuple[int, Job]] = []
    for i, job in enumerate(job_list):
        stored = _stored_path(outdir, job) if outdir is not None else None
        if stored is not None and stored.exists() and not pcap:
            results[i] = json.loads(stored.read_text(encoding="utf-8"))
        else:
            todo.append((i, job))
    failures: list[RunFailure] = []
    if progress:
        progress(len(results), total)

    def finish(i: int, job: Job, res: Optional[dict[str, Any]], error: Optional[BaseException]) -> None:
        if error is not None:
            failures.append(RunFailure(job.point.index, job.point.params, job.seed, job.run, f"{type(error).__name__}: {error}"))
        else:
            assert res is not None
            res.update({"run": job.run, "seed": job.seed, "point": job.point.index,
                        "params": {k: point_value(v) for k, v in job.point.params.items()}})
            if outdir is not None:
                atomic_write_text(_stored_path(outdir, job), json.dumps(res))
            results[i] = res
        if progress:
            progress(len(results) + len(failures), total)

    def args(job: Job) -> tuple:
        pcap_dir = str(outdir / "pcap" / f"p{job.point.index}-run{job.run}") if (pcap and outdir is not None) else None
        return (job.point.scenario.text, job.point.scenario.source, job.seed, job.run, job.point.index, pcap_dir)

    n_workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if scheduler:
        _run_dask(scheduler, todo, args, finish)
    elif n_workers == 1 or len(todo) <= 1:
        for i, job in todo:
            try:
                res = _job_main(*args(job))
            except (RuntimeError, ValueError, OSError) as e:
                finish(i, job, None, e)
            else:
                finish(i, job, res, None)
    else:
        _run_pool(min(n_workers, len(todo)), todo, args, finish)
    if failures:
        raise SweepFailed(sorted(failures, key=lambda f: (f.point, f.run)), len(results), total)
    return [results[i] for i in range(total)]


def _run_pool(n: int, todo: list, args: Callable, finish: Callable) -> None:
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx)
    try:
        pending = {pool.submit(_job_main, *args(job)): (i, job) for i, job in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i, job = pending.pop(fut)
                err = fut.exception()
                finish(i, job, None if err else fut.result(), err)
    except BaseException:
        # Interrupted (Ctrl-C) or failed here: stop the workers now; stored runs stay.
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_dask(address: str, todo: list, args: Callable, finish: Callable) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError('--scheduler needs Dask: pip install "tpsim[dask]"') from e
    with Client(address) as client:
        by_key = {}
        for i, job in todo:
            fut = client.submit(_job_main, *args(job), key=f"tpsim-{job.key}", pure=False)
            by_key[fut.key] = (i, job, fut)
        for fut in as_completed([f for _, _, f in by_key.values()]):
            i, job, _ = by_key[fut.key]
            err = fut.exception()
            finish(i, job, None if err else fut.result(), err)
