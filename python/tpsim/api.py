"""The Python API: run a scenario's sweep points and replications, in parallel, resumably,
and get polars DataFrames back."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, Union

from . import _tpsim, store
from ._build import build_id
from ._job import FAIL_HOOK, _job_main  # noqa: F401  (FAIL_HOOK: where callers have found it)
from ._workers import RunCrashed
from .labels import size_text  # noqa: F401  (tpsim.api.size_text, as before)
from .scenario import Scenario, load, read_text
from .sweep import Job, Point, expand, iter_points, parse_set, parse_sweep, point_value, runs_of, set_int

if TYPE_CHECKING:
    from .results import Results

#: Environment variable set for tpsim's worker processes: a file a worker creates when it
#: finds itself importing a script that runs tpsim without a ``__main__`` guard.
MAIN_GUARD_ENV = "TPSIM_UNGUARDED_MAIN_MARKER"


class MainGuardError(RuntimeError):
    """Worker processes (``jobs`` > 1) import the calling script again, and it started
    another run: the script's code needs an ``if __name__ == "__main__":`` guard."""


MAIN_GUARD_MESSAGE = (
    "tpsim runs with jobs > 1 start worker processes, which import your script again and would run it again: "
    "put the script's code under `if __name__ == \"__main__\":` (see the README's example), or use jobs=1"
)


def _check_not_bootstrapping() -> None:
    """In a worker process that is importing the main script (spawn start method), a call
    that runs tpsim means the script has no ``__main__`` guard: the worker leaves at once
    (quietly; the parent reports it once) instead of starting a run of its own."""
    mp = sys.modules.get("multiprocessing")  # a bootstrapping worker has imported it
    if mp is None or not getattr(mp.current_process(), "_inheriting", False):
        return
    marker = os.environ.get(MAIN_GUARD_ENV)
    if marker:
        try:
            with open(marker, "a", encoding="utf-8"):
                pass
        except OSError:
            pass
        os._exit(3)
    raise MainGuardError(MAIN_GUARD_MESSAGE)


def run_key(scenario: Scenario, seed: int, run: int) -> str:
    """Content hash (SHA-256 hex) identifying one stored run: the resolved scenario of its
    sweep point (sweep values set, no ``[sweep]`` table; its ``[report]`` table left out, as
    it changes no run), the seed, the replication index, the engine build (:func:`build_id`)
    and the run store's format. A changed scenario, another build of the engine or another
    store format never matches a stored run."""
    resolved = {k: v for k, v in scenario.resolved.items() if k != "report"}
    blob = json.dumps(
        {"scenario": resolved, "seed": seed, "run": run, "engine": build_id(), "store": store.FORMAT},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def jobs_for(points: Sequence[Point], seed: int, runs: int) -> list[Job]:
    """The (point, replication) jobs, point-major."""
    return [Job(p, seed, r, run_key(p.scenario, seed, r)) for p in points for r in range(runs)]


def _load_stored(runs_dir: Path, job: Job, report: bool = True) -> Optional[dict[str, Any]]:
    """The run stored in ``runs_dir`` for ``job`` (its record, :mod:`tpsim.store`), or
    ``None`` if there is none or it is damaged (truncated, not JSON, its checksum wrong, not
    this job's run, not of a run's shape, a file it names missing or of another size): a
    damaged run is reported on stderr in one line (if ``report``) and done again, never
    reused."""
    try:
        return store.load(runs_dir, job.key)
    except ValueError as e:
        if report:
            path = store.record_path(runs_dir, job.key)
            print(f"tpsim: {path}: damaged stored run (point {job.point.index}, run {job.run}: {e}); running it again",
                  file=sys.stderr)
        return None


#: Default of ``max_memory``: ``"auto"``, the memory this machine has available
#: (:func:`machine_memory`), or 16 GB where that is not known.
DEFAULT_MAX_MEMORY = "auto"
_FALLBACK_MAX_MEMORY = 16 * 10**9

#: What the calling process holds per sweep point while a sweep is planned, run and
#: collected (its text, resolved table and key): this many bytes plus
#: :data:`PLAN_JSON_FACTOR` per byte of the point's resolved scenario as JSON (measured as the
#: growth of a whole ``tpsim run``: 17 kB per point of 4,000 one-flow points, 0.46 GB for one
#: point of 10⁵ flows, whose resolved JSON is 26 MB)...
PLAN_POINT_BYTES = 2_000
PLAN_JSON_FACTOR = 16
#: ...and per job (replication of a point): its key and record, with the run's network row,
#: the reading of its output files into the tables (measured: 41 kB per job over 4,000 jobs
#: of one flow), and one flow row per flow (about 2.5 kB each).
JOB_BYTES = 40_000
JOB_FLOW_BYTES = 2_500


def address_space_left() -> Optional[int]:
    """Bytes of address space this process may still map under its ``RLIMIT_AS`` (``ulimit
    -v``), ``None`` without such a limit. Under one, an allocation the engine cannot make
    aborts the process: runs then go to worker processes, where it fails only the run."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        from ._workers import _address_space

        return max(0, soft - _address_space())
    except (ImportError, OSError, ValueError):
        return None


def machine_memory() -> Optional[int]:
    """Bytes of memory this process may still take: the kernel's ``MemAvailable``, lowered to
    what a cgroup v2 memory limit (``memory.max`` less ``memory.current``) and an address-space
    limit (:func:`address_space_left`) leave; ``None`` where none is readable (not Linux)."""
    avail = address_space_left()
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    avail = free if avail is None else min(avail, free)
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            cap = f.read().strip()
        if cap != "max":
            with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
                left = max(0, int(cap) - int(f.read().strip()))
            avail = left if avail is None else min(avail, left)
    except (OSError, ValueError):
        pass
    return avail


def _memory_limit(value: Union[str, int, float, None], force: bool = False) -> Optional[tuple[int, str, str]]:
    """The ``max_memory`` limit as ``(bytes, what it is, how to raise it)``; ``None``: no check
    (``None``, or ``"auto"`` with ``force``).

    Raises:
        ValueError: for a size that is not one (naming ``max_memory``).
    """
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        if force:
            return None
        avail = machine_memory()
        if avail is None:
            return (_FALLBACK_MAX_MEMORY, "the default limit", "raise it (--max-memory) or --force")
        return (avail, "the memory this machine has available", "free some memory, or set --max-memory (or --force)")
    return (parse_size(value, "max_memory"), "the limit", "raise the limit (--max-memory)")

#: The scenario format's sizes (``16GB``, ``512MiB``), any case; a bare number is bytes.
_SIZE_UNITS = {"": 1, **{u.lower(): int(f) for fam, _, units in _tpsim.unit_families() if fam == "size" for u, f in units}}


def parse_size(value: Union[str, int, float], what: str = "size") -> int:
    """Bytes of a size such as ``"16GB"``, ``"512MiB"`` or ``2e9`` (bytes).

    Raises:
        ValueError: naming ``what`` and the expected form.
    """
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected a size such as 16GB or 512MiB, found {value!r}")
    if isinstance(value, (int, float)):
        n = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", str(value))
        if not m or m.group(2).lower() not in _SIZE_UNITS:
            raise ValueError(f"{what}: expected a size such as 16GB or 512MiB, found {value!r}")
        n = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if not math.isfinite(n) or n <= 0:
        raise ValueError(f"{what}: expected a size greater than 0, found {value!r}")
    return int(n)


class RunTooLarge(ValueError):
    """A sweep point's runs would need more memory than allowed (``max_memory``), by the
    engine's estimate; nothing was run."""


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
        total: number of runs of the sweep.
    """

    def __init__(self, failures: list[RunFailure], completed: int, total: int):
        self.failures = failures
        self.completed = completed
        self.total = total
        lines = "\n".join(f"  {f}" for f in failures)
        super().__init__(f"{len(failures)} of {total} runs failed ({completed} stored):\n{lines}")


@dataclass
class Plan:
    """What a run command will do: the points, the jobs and how many are already stored."""

    base: Scenario
    points: list
    jobs: list[Job]
    stored: int
    #: The ``set`` values every point has.
    sets: list = field(default_factory=list)


def plan(
    scenario: Union[Scenario, str, Path],
    seed: Optional[int] = None,
    runs: Optional[int] = None,
    set: Union[Sequence[tuple[str, Any]], Iterable[str], None] = None,
    sweep: Union[Sequence[tuple[str, list[Any]]], Iterable[str], None] = None,
    out: Union[str, Path, None] = None,
    max_memory: Union[str, int, float, None] = DEFAULT_MAX_MEMORY,
    run_memory_limit: Union[str, int, float, None] = None,
    force: bool = False,
) -> Plan:
    """Validates everything and lists the jobs, before any run starts.

    ``set`` and ``sweep`` take ``(key, value)`` / ``(key, [values])`` pairs or the command
    line's ``"key=value"`` / ``"key=v1,v2"`` strings. Every point's run must fit
    ``max_memory`` (bytes, a size such as ``"16GB"``, ``"auto"``: the memory this machine has
    available; ``None``: no check) and ``run_memory_limit`` (the cap :func:`run` puts on each
    run's worker) by the engine's estimate (``tpsim_engine::memory``), and, before any point
    is made, the sweep as a whole (its points and their runs' records, held by this process:
    :func:`sweep_memory`) must fit the memory this machine has
    available. ``force`` skips the checks against the machine (not explicit limits).

    Raises:
        ScenarioError: for an invalid scenario, an unknown key, an empty value list, or runs < 1.
        RunTooLarge: if a point's run would need more than ``max_memory`` or
            ``run_memory_limit``, or the sweep more than the machine has.
        TypeError, ValueError: for arguments of the wrong type or range (seed outside
            0..2**64-1, runs not a positive integer, a sweep that is not a list of pairs).
    """
    if not isinstance(scenario, (Scenario, str, os.PathLike)) or isinstance(scenario, bool):
        raise TypeError(f"scenario must be a Scenario or the path of a scenario file, got {type(scenario).__name__} {scenario!r:.80}")
    _check_args(seed=seed, runs=runs)
    if out is not None:
        from .files import _as_path

        out = _as_path(out, "out")
    limits = []
    limit = _memory_limit(max_memory, force)
    if limit is not None:
        limits.append(limit)
    if run_memory_limit is not None:
        limits.append((parse_size(run_memory_limit, "run_memory_limit"), "the run memory limit", "raise --run-memory-limit"))
    base = scenario if isinstance(scenario, Scenario) else _load_within(scenario, limits)
    sets = _pairs(set, parse_set, "set")
    sweeps = _pairs(sweep, parse_sweep, "sweep")
    # The arguments win, then a --set of the scenario's keys, then the file.
    n = runs_of(base, runs if runs is not None else set_int(sets, "simulation.runs"))
    seed = seed if seed is not None else set_int(sets, "simulation.seed")
    seed = base.seed if seed is None else int(seed)
    machine = None if force else machine_memory()

    def admit(n_points: int) -> None:
        if machine is not None:
            _check_sweep(base, n_points, n, machine)

    points = expand(base, sets, sweeps, admit=admit)
    if limits:
        for pt in points:
            _check_memory(pt, limits)
    jobs = jobs_for(points, seed, n)
    stored = sum(1 for j in jobs if out is not None and _load_stored(_runs_dir(Path(out)), j, report=False) is not None)
    return Plan(base, points, jobs, stored, list(sets))


def check_points(base: Scenario, max_memory: Union[str, int, float, None] = DEFAULT_MAX_MEMORY) -> int:
    """Checks every point of ``base``'s sweep and cases (valid, and one run within
    ``max_memory`` as :func:`plan` checks it) one at a time, holding one point at a time
    (``tpsim validate``); returns the number of points.

    Raises:
        ScenarioError, RunTooLarge: as :func:`plan`, for the first point that fails.
    """
    limit = _memory_limit(max_memory)
    n = 0
    for pt in iter_points(base):
        if limit is not None:
            _check_memory(pt, [limit])
        n += 1
    return n


def _check_args(seed: Any = None, runs: Any = None, jobs: Any = None) -> None:
    """Type and range checks of the API's numeric arguments, before anything runs
    (``runs`` below 1 is a ScenarioError, as in the scenario's ``simulation.runs``)."""
    for name, v, lo, hi in (("seed", seed, 0, 2**64 - 1), ("runs", runs, 1, 10**9), ("jobs", jobs, -(2**31), 2**31)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an integer, got {type(v).__name__} {v!r:.80}")
        if not lo <= v <= hi:
            if name == "runs":
                raise _tpsim.ScenarioError(f"runs must be between {lo} and {hi}, got {v}")
            raise ValueError(f"{name} must be between {lo} and {hi}, got {v}")


#: A Dask scheduler address: [PROTOCOL://]HOST:PORT.
_SCHEDULER_RE = re.compile(r"(?:(tcp|tls|ws|wss|ucx|inproc)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?):([0-9]{1,5})")


def check_scheduler(address: Any) -> None:
    """Checks the form of a Dask scheduler address (``tcp://HOST:PORT``) before anything runs.

    Raises:
        TypeError: if it is not a string (or a Dask cluster object).
        ValueError: if it is not of the form ``[PROTOCOL://]HOST:PORT``.
    """
    if address is None or hasattr(address, "scheduler_address"):  # a dask Cluster object
        return
    if not isinstance(address, str):
        raise TypeError(f"scheduler must be an address such as tcp://HOST:PORT, got {type(address).__name__} {address!r:.80}")
    m = _SCHEDULER_RE.fullmatch(address.strip())
    if not m or not 0 < int(m.group(3)) < 65536:
        raise ValueError(f"scheduler: expected an address such as tcp://HOST:8786, got {address!r:.200}")


def _check_run_args(out: Any, scheduler: Any, pcap: Any, progress: Any) -> None:
    from .files import check_output_dir

    if out is not None:
        check_output_dir(out, "out")
    check_scheduler(scheduler)
    if not isinstance(pcap, bool):
        raise TypeError(f"pcap must be True or False, got {type(pcap).__name__} {pcap!r:.80}")
    if progress is not None and not isinstance(progress, bool) and not callable(progress):
        raise TypeError(f"progress must be True, False or a callable progress(done, total), got {type(progress).__name__} {progress!r:.80}")


def _pairs(items: Any, parser: Callable[[Iterable[str]], list], what: str) -> list:
    if items is None:
        return []
    if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
        raise TypeError(f"{what} must be a list of (key, value) pairs or \"key=value\" strings, got {type(items).__name__} {items!r:.80}")
    items = list(items)
    if not items:
        return []
    if all(isinstance(i, str) for i in items):
        return parser(items)
    out = []
    for i in items:
        if isinstance(i, (str, bytes)) or not isinstance(i, (tuple, list)) or len(i) != 2 or not isinstance(i[0], str):
            raise TypeError(f"{what} must be a list of (key, value) pairs or \"key=value\" strings, got the item {i!r:.80}")
        key, value = i
        if what == "sweep":
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"sweep: the values of {key} must be a list, got {type(value).__name__} {value!r:.80}")
            for v in value:
                _check_value(what, key, v)
            value = list(value)
        else:
            _check_value(what, key, value)
        out.append((key, value))
    return out


def _check_value(what: str, key: str, value: Any) -> None:
    """``value`` is one a scenario key can take: a string, number, boolean, or a list or table
    of them (as TOML); raises TypeError naming ``what`` and ``key``."""
    if isinstance(value, (str, int, float, bool)):
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            _check_value(what, key, v)
        return
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        for v in value.values():
            _check_value(what, key, v)
        return
    raise TypeError(f"{what}: the value of {key} must be a string, number, boolean, list or table, "
                    f"got {type(value).__name__} {value!r:.80}")


def sweep_memory(base: Scenario, n_points: int, runs: int) -> int:
    """Bytes the calling process is estimated to hold for a sweep of ``n_points`` points of
    ``base`` with ``runs`` runs each, besides the runs themselves: the points, and the jobs'
    records and tables (:data:`PLAN_POINT_BYTES`, :data:`PLAN_JSON_FACTOR`,
    :data:`JOB_BYTES`, :data:`JOB_FLOW_BYTES`)."""
    flows = len(base.resolved.get("flows", []) or [])
    sweep_json = len(json.dumps(base.resolved["sweep"], separators=(",", ":"))) if "sweep" in base.resolved else 0
    point_json = max(0, base.resolved_size - sweep_json)  # a point's scenario has no [sweep]
    return n_points * (PLAN_POINT_BYTES + PLAN_JSON_FACTOR * point_json) + n_points * runs * (JOB_BYTES + JOB_FLOW_BYTES * flows)


def memory_estimate(p: "Plan") -> dict[str, int]:
    """The memory running plan ``p`` is estimated to need, bytes, by part: ``"sweep"`` (held
    by the calling process, :func:`sweep_memory`) and ``"run"`` (the largest of its points'
    runs by the engine's estimate, ``tpsim_engine::memory``; in this process with one job,
    else in each worker). The interpreter and its libraries (about 0.1 GB) come on top."""
    run = max((sum(b for _, b in _tpsim.estimate_memory(pt.scenario.text, pt.scenario.source)) for pt in p.points), default=0)
    return {"sweep": sweep_memory(p.base, len(p.points), len(p.jobs) // max(1, len(p.points))), "run": run}


def _check_sweep(base: Scenario, n_points: int, runs: int, available: int) -> None:
    """Refuses a sweep whose points and runs' records would not fit the ``available`` bytes
    of this process (before any point is made: a sweep of 10⁶ points or 10⁹ runs is refused
    in a moment)."""
    need = sweep_memory(base, n_points, runs)
    if need > available:
        raise RunTooLarge(f"the sweep: {n_points:,} point(s) x {runs:,} run(s) would need about {size_text(need)} in this "
                          f"process to plan and collect, more than the {size_text(available)} this machine has available; "
                          "narrow the sweep or lower --runs (--force runs it anyway)")


def _check_memory(point: Any, limits: list) -> None:
    """Refuses ``point`` if the engine's estimate of one run's memory passes one of
    ``limits``, ``(bytes, what the limit is, how to raise it)`` triples."""
    where = f"point {point.index} ({', '.join(f'{k} = {point_value(v)}' for k, v in point.params.items())})" if point.params else "the scenario"
    _refuse_above(where, _tpsim.estimate_memory(point.scenario.text, point.scenario.source), limits, "about")


def _load_within(path: Union[str, Path], limits: list) -> Scenario:
    """:func:`tpsim.scenario.load`, first refusing a file whose run could not fit ``limits``
    by a bound read from its text without parsing it (a file of 10⁶ flows is refused in a
    fraction of a second rather than after seconds and gigabytes of parsing)."""
    if not limits:
        return load(path)
    text = read_text(path)
    _refuse_above("the scenario", _tpsim.estimate_memory_floor(text), limits, "at least")
    return Scenario(text, str(Path(path)))


def _refuse_above(where: str, parts: list[tuple[str, int]], limits: list, about: str) -> None:
    """Raises RunTooLarge if the sum of ``parts`` ((name, bytes) pairs of an estimate of one
    run, ``about`` or ``at least`` that) passes one of ``limits``."""
    total = sum(b for _, b in parts)
    for limit, what, raise_it in limits:
        if total <= limit:
            continue
        biggest = ", ".join(f"{name} {size_text(b)}" for name, b in sorted(parts, key=lambda p: -p[1])[:3] if b)
        raise RunTooLarge(f"{where}: one run would need {about} {size_text(total)} ({biggest}), more than {what} of "
                          f"{size_text(limit)}; shorten it, coarsen output.bin, or {raise_it}")


def _runs_dir(out: Path) -> Path:
    """Where the runs of results written to ``out`` are stored."""
    return out / "runs"


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
    progress: Union[bool, Callable[[int, int], None], None] = None,
    max_memory: Union[str, int, float, None] = DEFAULT_MAX_MEMORY,
    run_time_limit: Optional[float] = None,
    run_memory_limit: Union[str, int, float, None] = None,
    report: bool = False,
    sim_progress: Optional[Callable[[int, float, float], Any]] = None,
    force: bool = False,
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
        jobs: local worker processes (1 runs in this process), at most one per core and one
            per run to make; 0 or less: automatic, one per core once the runs prove long
            enough to be worth starting them (short runs stay in this process,
            :data:`POOL_AFTER_S`).
        scheduler: address of a Dask distributed scheduler (``tcp://host:port``); runs the jobs
            on its workers instead of local processes (needs ``pip install "tpsim[dask]"``).
        set: keys set for every point, ``[("flows.0.app.interval", "10ms")]`` or ``["k=v"]``.
        sweep: extra sweep dimensions, ``[("flows.0.app.size", ["64B", "128B"])]`` or
            ``["k=v1,v2"]``.
        pcap: write pcap files (of links that ask for them) under ``out/pcap/p<point>-run<r>/``.
        progress: ``True`` shows a progress bar on stderr (runs done and, for a run made in
            this process, its simulated seconds; then the report step), as ``tpsim run``
            does; a callable is called as ``progress(done, total)`` as runs finish.
        max_memory: refuse (before any run) a point whose run the engine estimates to need
            more than this many bytes (a size such as ``"16GB"``; ``"auto"``: the memory
            this machine has available; ``None``: no check).
        run_time_limit: stop a run that takes longer than this many seconds of wall-clock
            time; it fails as its own run (``RunLimitError``).
        run_memory_limit: cap the address space each run may take beyond what its worker
            process maps at its start (a size such as ``"4GB"``); runs then go to worker
            processes, one that exceeds it fails as its own run (``RunCrashed``), and a point
            whose run the engine estimates above it is refused before any run
            (``RunTooLarge``).
        report: with ``out``, also write the figures and ``report.html`` there (as
            :meth:`Results.write_report`).
        sim_progress: called as ``sim_progress(job, now_s, end_s)`` (job index, simulated
            seconds reached and the run's end) at most every 0.2 s of wall time while a run
            executes in this process (``jobs=1``, or a single run to make); not for runs in
            worker processes.
        force: run even where the estimates say the runs or the sweep would not fit the
            memory this machine has available (explicit limits still hold).

    Returns:
        :class:`Results`; with a sweep, every table has a ``point`` column and one column per
        swept key.

    Raises:
        ScenarioError: (ValueError) for invalid input, before any run starts.
        RunTooLarge: (ValueError) if a point's run would exceed ``max_memory``.
        TypeError, ValueError: for arguments of the wrong type or range.
        SweepFailed: if some runs failed (the others are stored when ``out`` is given).
        SchedulerError: (RuntimeError) if the Dask scheduler cannot be reached.
        OSError: if ``out`` cannot be written (naming the file; the tables are written all
            or none, and stored runs stay intact).
        KeyboardInterrupt: if interrupted (finished runs are stored when ``out`` is given).
        MainGuardError: (RuntimeError) if worker processes found the calling script without
            an ``if __name__ == "__main__":`` guard.
    """
    _check_not_bootstrapping()
    _check_args(jobs=jobs)
    if not isinstance(report, bool):
        raise TypeError(f"report must be True or False, got {type(report).__name__} {report!r:.80}")
    if report and out is None:
        raise ValueError("report=True needs out=DIRECTORY (where the report is written)")
    _check_run_args(out, scheduler, pcap, progress)
    if sim_progress is not None and not callable(sim_progress):
        raise TypeError(f"sim_progress must be a callable sim_progress(job, now_s, end_s), got {type(sim_progress).__name__}")
    if run_time_limit is not None and (isinstance(run_time_limit, bool) or not isinstance(run_time_limit, (int, float))
                                       or not math.isfinite(run_time_limit) or run_time_limit <= 0):
        raise ValueError(f"run_time_limit must be a number of seconds greater than 0, got {run_time_limit!r}")
    mem = parse_size(run_memory_limit, "run_memory_limit") if run_memory_limit is not None else None
    p = plan(scenario, seed, runs, set, sweep, out, max_memory=max_memory, run_memory_limit=mem, force=force)

    def go(runs_done: Optional[Callable[[int, int], None]], sim: Optional[Callable[[int, float, float], Any]],
           report_step: Callable[[], Optional[Callable[[int, int], None]]] = lambda: None) -> Results:
        res = run_plan(p, out, jobs=jobs, scheduler=scheduler, pcap=pcap, progress=runs_done,
                       run_time_limit=run_time_limit, run_memory_limit=mem,
                       command=reproduce_command(p, out, seed, runs, set, sweep), sim_progress=sim)
        if report:
            res.write_report(out, progress=report_step())
        return res

    if progress is not True:
        return go(None if isinstance(progress, bool) else progress, sim_progress)
    from .progress import RunProgress

    with RunProgress(p.base.name, len(p.jobs)) as bar:

        def sim_time(job: int, now_s: float, end_s: float) -> None:
            bar.sim_time(job, now_s, end_s)
            if sim_progress is not None:
                sim_progress(job, now_s, end_s)

        return go(bar.runs_done, sim_time, bar.report_step)


def reproduce_command(p: "Plan", out: Any, seed: Optional[int], runs: Optional[int], sets: Any, sweeps: Any) -> str:
    """The ``tpsim run`` command line that reproduces a :func:`run` call (for the report)."""
    src = p.base.source
    parts = ["tpsim", "run", src if Path(src).is_file() else "SCENARIO.toml", "-o", str(out) if out is not None else "OUT"]
    if seed is not None:
        parts += ["--seed", str(seed)]
    if runs is not None:
        parts += ["--runs", str(runs)]
    for k, v in _pairs(sets, parse_set, "set"):
        parts += ["--set", f"{k}={_cli_value(v)}"]
    for k, vs in _pairs(sweeps, parse_sweep, "sweep"):
        parts += ["--sweep", f"{k}=" + ",".join(_cli_value(v) for v in vs)]
    return " ".join(shlex.quote(a) for a in parts)


def _cli_value(v: Any) -> str:
    if isinstance(v, str):
        return v if re.fullmatch(r"[A-Za-z0-9_.+/µ-]+", v) and v not in ("true", "false") else json.dumps(v)
    return json.dumps(v) if not isinstance(v, bool) else str(v).lower()


def resolved_as_run(p: "Plan") -> dict[str, Any]:
    """The plan's scenario as it runs, every default filled in: the base with the ``set``
    values applied, the runs and seed as run, and, as its ``sweep`` table, the values every
    swept key takes (the file's or the command line's; cases are in ``tpsim.json``)."""
    base = p.base
    resolved = dict(base.resolved)
    if p.sets:
        try:
            text = _tpsim.apply_overrides(base.text, json.dumps([list(x) for x in p.sets]), base.source, False)
            resolved = dict(Scenario(text, base.source).resolved)
        except (_tpsim.ScenarioError, ValueError, TypeError):
            pass  # every point was validated with them; keep the base's rather than fail here
    if p.jobs and isinstance(resolved.get("simulation"), dict):
        # --runs and --seed as run (a replication's streams are (seed, run)).
        resolved["simulation"] = {**resolved["simulation"], "runs": len(p.jobs) // max(len(p.points), 1),
                                  "seed": p.jobs[0].seed}
    sweep: dict[str, list[Any]] = {}
    for pt in p.points:
        for k, v in pt.params.items():
            if k != "case" and v not in sweep.setdefault(k, []):
                sweep[k].append(v)
    if sweep:
        resolved["sweep"] = sweep
    else:
        resolved.pop("sweep", None)
    return resolved


def run_plan(
    p: Plan,
    out: Union[str, Path, None] = None,
    jobs: int = 1,
    scheduler: Optional[str] = None,
    pcap: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
    run_time_limit: Optional[float] = None,
    run_memory_limit: Optional[int] = None,
    command: Optional[str] = None,
    sim_progress: Optional[Callable[[int, float, float], Any]] = None,
) -> Results:
    """Executes a :func:`plan` (arguments as for :func:`run`; ``run_memory_limit`` in bytes)
    and merges its tables; with ``out``, writes them, the resolved scenario and
    ``tpsim.json`` there. ``command`` is the reproduce command the report shows.

    Raises:
        SweepFailed: if some runs failed (the others are stored when ``out`` is given).
        KeyboardInterrupt: if interrupted (finished runs are stored when ``out`` is given).
    """
    import shutil
    import tempfile

    from .files import check_output_dir

    _check_not_bootstrapping()
    outdir = check_output_dir(out, "out") if out is not None else None
    check_scheduler(scheduler)
    tables = _import_tables_meanwhile()
    fresh: list[float] = []
    # Results written nowhere keep their runs' files in a directory of their own, removed
    # with them.
    runs_dir = _runs_dir(outdir) if outdir is not None else Path(tempfile.mkdtemp(prefix="tpsim-runs-"))
    try:
        results = execute(p.jobs, runs_dir, jobs=jobs, scheduler=scheduler, pcap=pcap, progress=progress,
                          run_time_limit=run_time_limit, run_memory_limit=run_memory_limit, fresh=fresh,
                          sim_progress=sim_progress, out=outdir)
    except BaseException:
        if outdir is None:
            shutil.rmtree(runs_dir, ignore_errors=True)
        raise
    if tables is not None:
        tables.join()
    from .results import Results, add_roles

    table = Results.from_runs(results, param_keys=list(p.points[0].params), runs_dir=runs_dir)
    if outdir is None:
        table.own_directory(runs_dir)
    table.flows = add_roles(table.flows, {pt.index: len(pt.scenario.resolved.get("flows", [])) for pt in p.points})
    table.points = p.points
    table.base = p.base
    table.command = command
    table.sets = list(getattr(p, "sets", []))
    table.resolved = resolved_as_run(p)
    table.ran_now = len(fresh)
    table.engine_seconds_now = sum(fresh)
    if outdir is not None:
        table.write(outdir)
    return table


#: With ``jobs=0`` (automatic, the command line's default) the runs first go one by one in the
#: calling process; once the runs left would take longer than this there (s, from the mean
#: time of those done), they go to one worker process per core, whose start costs about half a
#: second. Sweeps of short runs (study D: 48 runs of a few ms) never start them.
POOL_AFTER_S = 1.0


def _import_tables_meanwhile() -> Optional[Any]:
    """Starts importing the table modules (:mod:`tpsim.results`, polars) in a thread, to
    overlap with the runs, which release the GIL while the engine runs; returns the thread
    (``None`` if they are imported already). The main thread's own import of them later
    waits for it (Python's module locks), and a failed import there is raised then."""
    if "tpsim.results" in sys.modules:
        return None
    import importlib
    import threading

    def load() -> None:
        try:
            importlib.import_module("tpsim.results")
        except BaseException:  # raised again by the main thread's import
            pass

    t = threading.Thread(target=load, name="tpsim-import-tables", daemon=True)
    t.start()
    return t


def execute(
    job_list: list[Job],
    runs_dir: Path,
    jobs: int = 1,
    scheduler: Optional[str] = None,
    pcap: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
    run_time_limit: Optional[float] = None,
    run_memory_limit: Optional[int] = None,
    fresh: Optional[list[float]] = None,
    sim_progress: Optional[Callable[[int, float, float], Any]] = None,
    out: Optional[Path] = None,
) -> list[dict[str, Any]]:
    """Runs the jobs not yet stored in the run store ``runs_dir`` (:mod:`tpsim.store`; the
    stored runs are reused only for results written to an output directory ``out``, where
    pcap files go too), stores each as it finishes, and returns every job's record
    (stored or new) in job order: identity, flows and network rows, engine time and the names
    of its files in ``runs_dir`` (time series, traces), which are never read here. A job that
    fails, exceeds a limit or crashes its worker fails alone: the others run on. ``fresh``,
    if given, gets the engine time of each run made now (not of the stored ones).
    ``sim_progress(job index, now_s, end_s)`` reports simulated time for runs made in this
    process (see :func:`run`).

    Raises:
        SweepFailed: if any job raised; every other job still ran and was stored.
        KeyboardInterrupt: after stopping the workers; finished runs stay stored.
    """
    from .files import atomic_write_text

    total = len(job_list)
    results: dict[int, dict[str, Any]] = {}
    todo: list[tuple[int, Job]] = []
    for i, job in enumerate(job_list):
        stored = _load_stored(runs_dir, job) if (out is not None and not pcap) else None
        if stored is not None:
            results[i] = stored
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
            res.update({"format": store.FORMAT, "run": job.run, "seed": job.seed, "point": job.point.index,
                        "key": job.key, "params": {k: point_value(v) for k, v in job.point.params.items()}})
            made.extend(_make_dirs(runs_dir))
            try:
                if "files" not in res:  # made without files (a Dask worker): the parent writes them
                    res["files"] = store.spill(runs_dir, job.key, res)
                atomic_write_text(store.record_path(runs_dir, job.key), store.record_text(runs_dir, res))
            except BaseException:
                store.remove(runs_dir, job.key)  # not stored: its files would be orphans
                raise
            results[i] = res
            if fresh is not None:
                fresh.append(float(res.get("engine_seconds", 0.0)))
        if progress:
            progress(len(results) + len(failures), total)

    def args(job: Job, local: bool = True) -> tuple:
        pcap_dir = str(out / "pcap" / f"p{job.point.index}-run{job.run}") if (pcap and out is not None) else None
        return (job.point.scenario.text, job.point.scenario.source, job.seed, job.run, job.point.index, pcap_dir,
                run_time_limit, str(runs_dir) if local else None, job.key)

    from ._pool import cpus

    n_workers = min(jobs, cpus()) if jobs and jobs > 0 else cpus()
    # Directories this call makes (the output directory and its runs/): removed again if
    # no run ends up stored in them.
    made: list[Path] = []
    try:
        if scheduler and todo:
            _run_dask(scheduler, todo, lambda job: args(job, local=False), finish)
        elif scheduler:
            pass  # every run is stored: no need of the scheduler
        elif todo:
            made.extend(_make_dirs(runs_dir))  # the engine writes each run's files there
            rest = list(todo)
            automatic = not (jobs and jobs > 0)
            if run_memory_limit is None and address_space_left() is None and (n_workers == 1 or len(todo) == 1 or automatic):
                # In this process: one worker, one run, or (automatic) while the runs left
                # would take less than starting worker processes costs, then the rest goes to
                # the workers.
                t0 = time.perf_counter()
                while rest:
                    done = len(todo) - len(rest)
                    if n_workers > 1 and done and (time.perf_counter() - t0) / done * len(rest) > POOL_AFTER_S:
                        break
                    i, job = rest.pop(0)
                    tick = (lambda now_s, end_s, i=i: sim_progress(i, now_s, end_s)) if sim_progress is not None else None
                    try:
                        res = _job_main(*args(job), progress=tick)
                    except (RuntimeError, ValueError) as e:  # the run's own error; an OSError ends the sweep
                        finish(i, job, None, e)
                    else:
                        finish(i, job, res, None)
            if rest:
                from ._workers import run_jobs

                run_jobs(min(n_workers, len(rest)), rest, args, finish, run_memory_limit, guard_env=MAIN_GUARD_ENV,
                         guard_error=lambda: MainGuardError(MAIN_GUARD_MESSAGE))
    except BaseException:
        # Interrupted, or storing failed: runs not stored (stopped midway, or finished by a
        # worker but not recorded) leave no file.
        for i, job in todo:
            if i not in results:
                store.remove(runs_dir, job.key)
        raise
    finally:
        for d in reversed(made):
            try:
                d.rmdir()  # only if empty: nothing stored there
            except OSError:
                break
    if failures:
        raise SweepFailed(sorted(failures, key=lambda f: (f.point, f.run)), len(results), total)
    return [results[i] for i in range(total)]


def _make_dirs(path: Path) -> list[Path]:
    """Makes ``path`` and its missing parents; returns those it made, outermost first."""
    missing = []
    p = path
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    path.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))


#: Environment variable: seconds to wait for the Dask scheduler before giving up (default
#: :data:`SCHEDULER_TIMEOUT_S`).
SCHEDULER_TIMEOUT_ENV = "TPSIM_SCHEDULER_TIMEOUT"
SCHEDULER_TIMEOUT_S = 10.0


class SchedulerError(RuntimeError):
    """The Dask scheduler could not be reached (or Dask is not installed); nothing ran."""


def _run_dask(address: Any, todo: list, args: Callable, finish: Callable) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SchedulerError('--scheduler needs Dask: pip install "tpsim[dask]"') from e
    try:
        timeout = float(os.environ.get(SCHEDULER_TIMEOUT_ENV, SCHEDULER_TIMEOUT_S))
    except ValueError:
        timeout = SCHEDULER_TIMEOUT_S
    name = getattr(address, "scheduler_address", address)
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as e:
        why = " ".join(str(e).split()) or type(e).__name__
        raise SchedulerError(f"cannot connect to the Dask scheduler {name} within {timeout:g} s: {why}") from None
    with client:
        by_key = {}
        for i, job in todo:
            fut = client.submit(_job_main, *args(job), key=f"tpsim-{job.key}", pure=False)
            by_key[fut.key] = (i, job, fut)
        for fut in as_completed([f for _, _, f in by_key.values()]):
            i, job, _ = by_key[fut.key]
            err = fut.exception()
            finish(i, job, None if err else fut.result(), err)
