#!/usr/bin/env python3
"""The whole run as users feel it: wall time, engine time and memory of ``tpsim`` commands.

    python benches/pipeline.py [--quick] [--cases NAME,...] [--json FILE] [--tpsim CMD]
    python benches/pipeline.py --ns2 [--ns2-studies C,A] [--points GLOB,...] [--seeds 1-10]

tpsim's event loop is much faster than ns-2.35's, but a user waits for the whole process:
start-up imports, scenario checks, tables, traces and the report. This harness runs tpsim
the way users do, as a command in a child process (by default ``python -m tpsim`` with the
Python running the harness, not the ``tpsim`` entry point, whose pyenv shim adds about 60 ms;
``--tpsim CMD`` runs another command), from the repository root (so ``tpsim study`` and the
scenario paths use the checkout's ``scenarios/``), and measures per case:

* **engine s**: the summed ``engine_seconds`` of the runs the command made (read from
  ``OUT/runs/*.json``, written or rewritten by the command; the ``engine X s`` that ``tpsim
  run``/``study`` print when no run file is readable);
* **wall s**: the whole command, from start to exit; **overhead** = wall − engine;
* **peak Σ RSS**: the peak over time of the sum of the resident sets of the tpsim process and
  all its descendants (worker processes), sampled from ``/proc/<pid>/status`` every
  ``--sample-ms`` (20 ms); shared pages (libraries) count once per process;
* **max 1-process RSS**: the largest single peak, the larger of the kernel's ``ru_maxrss``
  of the reaped process tree (``wait4``, what GNU time reports) and the ``VmHWM`` sampled.

Cases (``--cases`` picks some by name; ``--list`` shows them): ``tpsim --version`` and
``tpsim validate`` start-up; one point of study C with ``tpsim run -j 1 --no-report``; studies
A-E as ``tpsim study X`` on their default settings (``study-X-quick`` adds ``--quick``),
study D again in the same folder (every run stored: nothing to simulate); the 10,000-node
grid of ``benches/benches/scale_10k.rs`` (written by :func:`grid_scenario`) with and without
its report; study C, ``--runs 1``, with every trace on, against the same runs with every
output off. ``--quick`` (under a minute) runs the short cases, study D, 4 points of study C
with background traffic (traced without the report) and a 1,000-node grid; which :data:`TARGETS` it checks, and which only
the full mode checks, is printed with the results. A case whose summed RSS passes ``--max-rss``
(default 80 % of the memory available at the start) is killed and reported as failed.

``--ns2``: ns-2.35 process against process. Study C as users run it on the ns-2 stack over
UDP and TFRC (``tpsim study c --sweep simulation.stack=ns2 --sweep flows.0.transport=udp,tfrc``)
against the same points and replications of ``../shared/ns2/study_c.tcl`` (traced, as the
scripts produce their metrics) run two ``ns`` processes at a time; study A the same with
``study_a.tcl`` (intervals x UDP, TCP, SCTP). tpsim's wall-time speed-up (ns-2 batch wall /
tpsim command wall) is set against its event-loop speed-up per MAC frame on the same points
(ns-2: ``wall_run_s`` with ``trace=0`` / ``mac_frames``, through benches/compare_ns2.py and its
cache; tpsim: ``engine_seconds`` / ``mac_frames`` of the command's own runs).

Outputs go to ``--work`` (default ``benches/.cache/pipeline``), each case in its own folder,
removed after the case unless ``--keep``. A Markdown table per mode goes to stdout, progress
to stderr, everything measured to ``--json FILE``. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import compare_ns2 as ns2cmp  # noqa: E402  (benches/compare_ns2.py: ns-2 runs, parsing, cache)

WORK = ns2cmp.CACHE / "pipeline"
STUDY_C = "scenarios/study-c-manet-speed.toml"
MB = 1024  # kB per MB: sizes are printed in MiB (1 GB = 1,024 MB)

#: One point of study C (UDP, 10 m/s, no background, ns-2 stack).
ONE_POINT = ["--sweep", "flows.0.transport=udp", "--sweep", "nodes.mobility.speed=[10m/s,10m/s]",
             "--sweep", "background.flows=0", "--sweep", "simulation.stack=ns2"]
#: The quick mode's 4 points of study C: UDP and TCP under both stacks, 10 m/s, with the 8
#: background flows (runs long enough for the traced/untraced ratio to be about the runs, as
#: in the full case, not about the fixed cost of the report).
QUICK_C = ["--sweep", "flows.0.transport=udp,tcp", "--sweep", "background.flows=8",
           "--sweep", "nodes.mobility.speed=[10m/s,10m/s]", "--sweep", "simulation.stack=ns2,modern"]
TRACES_ON = ["--set", "output.trace=true", "--set", "output.animation=true", "--set", "output.ns2_trace=old"]
OUTPUTS_OFF = ["--set", "output.timeseries=false"]  # trace, animation, pcap, ... are off by default
GRID_N = 10_000
QUICK_GRID_N = 1_000


def log(msg: str) -> None:
    print(f"[pipeline] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# The 10,000-node grid (benches/benches/scale_10k.rs)
# --------------------------------------------------------------------------------------

U64 = (1 << 64) - 1


class SplitMix64:
    """Vigna's SplitMix64 in 64-bit wrapping arithmetic, as ``scale_10k.rs`` draws its flows."""

    def __init__(self, seed: int) -> None:
        self.state = seed & U64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & U64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
        return z ^ (z >> 31)


def grid_flows(n: int, seed: int = 0x5EED) -> List[Tuple[int, int, int]]:
    """The ``n // 5`` flows of scale_10k.rs as (src, dst, start in ms): per flow a source,
    destinations drawn until one differs from it, then a start in [0, 1000) ms."""
    rng = SplitMix64(seed)
    out = []
    for _ in range(n // 5):
        src = rng.next() % n
        dst = rng.next() % n
        while dst == src:
            dst = rng.next() % n
        out.append((src, dst, rng.next() % 1000))
    return out


def grid_scenario(n: int = GRID_N, secs: int = 5) -> str:
    """scale_10k.rs's scenario: a static grid of ``n`` nodes 200 m apart, ns-2 sizes, the
    default ``[radio]`` (ns-2's), AODV with ns-2's preset, no time series, and ``n // 5`` UDP
    CBR flows of 512 B every 250 ms; ``secs`` simulated seconds."""
    parts = [f'[simulation]\nname = "grid-{n}"\nduration = "{secs}s"\nsizes = "ns2"\n'
             "[output]\ntimeseries = false\n"
             f'[nodes]\ncount = {n}\nplacement = {{ kind = "grid", spacing = "200m" }}\n'
             '[radio]\n[routing]\nprotocol = "aodv"\npreset = "ns2"\n']
    for src, dst, start in grid_flows(n):
        parts.append(f'[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = "udp"\n'
                     f'app = {{ kind = "cbr", size = "512B", interval = "250ms", start = "{start}ms" }}\n')
    return "".join(parts)


# --------------------------------------------------------------------------------------
# Process trees: RSS from /proc
# --------------------------------------------------------------------------------------


def list_pids() -> List[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def parent_pid(pid: int) -> Optional[int]:
    """The parent of ``pid`` from /proc/<pid>/stat (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses; split after the last ')'
    rest = s[s.rfind(b")") + 2:].split()
    return int(rest[1]) if len(rest) > 1 else None


def rss_hwm_kb(pid: int) -> Optional[Tuple[int, int]]:
    """(VmRSS, VmHWM) of ``pid`` in kB, None if it is gone (zombies have neither: (0, 0))."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            text = f.read()
    except OSError:
        return None
    rss = hwm = 0
    for line in text.splitlines():
        if line.startswith(b"VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith(b"VmHWM:"):
            hwm = int(line.split()[1])
    return rss, hwm


class TreeRss:
    """Samples the summed RSS of a process and its descendants from /proc.

    Processes that existed before the tree's root started (``existing``) are never part of
    it; every newer process whose parent is in the tree joins it when first seen and stays a
    member (for its own children) after it exits. A process that starts and ends between two
    samples is missed."""

    def __init__(self, root: int, existing: Sequence[int], include_root: bool = True) -> None:
        self.root = root
        self.include_root = include_root
        self.members = {root}
        self.others = set(existing) - {root}
        self.alive = {root} if include_root else set()
        self.hwm: Dict[int, int] = {}
        self.peak_sum_kb = 0
        self.samples = 0

    def sample(self) -> int:
        """One sample: the tree's summed RSS now (kB), and the peaks updated."""
        new: Dict[int, Optional[int]] = {}
        for pid in list_pids():
            if pid not in self.members and pid not in self.others:
                new[pid] = parent_pid(pid)
        changed = True
        while changed:  # a child can be seen in the same sample as its new parent
            changed = False
            for pid, ppid in list(new.items()):
                if ppid in self.members:
                    self.members.add(pid)
                    self.alive.add(pid)
                    del new[pid]
                    changed = True
        self.others.update(new)  # not descendants now: never (pids are not reused this fast)
        total = 0
        for pid in list(self.alive):
            r = rss_hwm_kb(pid)
            if r is None:
                self.alive.discard(pid)
                continue
            total += r[0]
            self.hwm[pid] = max(self.hwm.get(pid, 0), r[1])
        self.peak_sum_kb = max(self.peak_sum_kb, total)
        self.samples += 1
        return total

    @property
    def processes(self) -> int:
        """Processes seen in the tree (the root included if it is counted)."""
        return len(self.members) - (0 if self.include_root else 1)

    @property
    def peak_single_kb(self) -> int:
        return max(self.hwm.values(), default=0)


class Sampler:
    """Runs :meth:`TreeRss.sample` every ``interval`` s on a thread until :meth:`stop`;
    ``on_sample(total_kb)`` may ask to stop early by returning True (the memory guard)."""

    def __init__(self, tree: TreeRss, interval: float, on_sample: Optional[Callable[[int], bool]] = None) -> None:
        self.tree, self.interval, self.on_sample = tree, interval, on_sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            total = self.tree.sample()
            if self.on_sample is not None and self.on_sample(total):
                return
            self._stop.wait(self.interval)

    def start(self) -> "Sampler":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Measured:
    """One command, measured."""

    argv: List[str]
    returncode: int
    wall_s: float
    cpu_s: float  # user + system of the whole reaped tree (rusage)
    peak_sum_kb: int
    peak_single_kb: int
    processes: int
    samples: int
    stdout: str
    stderr: str
    killed: str = ""  # why the harness stopped it (memory guard)


def measure(argv: Sequence[str], cwd: Path, interval: float = 0.02, max_rss_kb: Optional[int] = None,
            env: Optional[Dict[str, str]] = None) -> Measured:
    """Runs ``argv`` in ``cwd`` to its end and measures its wall time and its process tree's
    memory. With ``max_rss_kb``, a tree whose summed RSS goes over it is killed (a full study
    holding every trace in memory could otherwise exhaust the machine)."""
    existing = list_pids()
    guard: Dict[str, str] = {}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                             start_new_session=True)
        tree = TreeRss(p.pid, existing)

        def check(total_kb: int) -> bool:
            if max_rss_kb is not None and total_kb > max_rss_kb:
                guard["why"] = f"killed: summed RSS {total_kb / MB:,.0f} MB over the guard of {max_rss_kb / MB:,.0f} MB"
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                return True
            return False

        sampler = Sampler(tree, interval, check).start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:  # interrupted: its own session does not get the terminal's signal
            sampler.stop()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            raise
        wall = time.perf_counter() - t0
        sampler.stop()
        p.returncode = os.waitstatus_to_exitcode(status)
        if guard:  # the workers too
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return Measured(list(argv), p.returncode, wall, ru.ru_utime + ru.ru_stime, tree.peak_sum_kb,
                    max(tree.peak_single_kb, ru.ru_maxrss), tree.processes, tree.samples, stdout, stderr,
                    guard.get("why", ""))


# --------------------------------------------------------------------------------------
# tpsim's outputs
# --------------------------------------------------------------------------------------

ENGINE_RE = re.compile(r"\bengine ([0-9]+(?:\.[0-9]+)?) s\b")
PLAN_RE = re.compile(r"(\d+) point\(s\) x (\d+) run\(s\); ran (\d+), reused (\d+)")


def printed_engine(stdout: str) -> Optional[float]:
    """The ``engine X s`` that ``tpsim run``/``study`` print at the end (last one)."""
    found = ENGINE_RE.findall(stdout)
    return float(found[-1]) if found else None


def printed_plan(stdout: str) -> Optional[Dict[str, int]]:
    """``N point(s) x R run(s); ran A, reused B`` of tpsim's last line, as a dict."""
    m = PLAN_RE.search(stdout)
    if not m:
        return None
    return dict(zip(("points", "runs", "ran", "reused"), map(int, m.groups())))


def run_files(out: Path) -> Dict[str, int]:
    """``OUT/runs/*.json`` -> modification time (ns)."""
    d = out / "runs"
    if not d.is_dir():
        return {}
    return {p.name: p.stat().st_mtime_ns for p in d.glob("*.json")}


def fresh_runs(out: Path, before: Dict[str, int]) -> List[Dict[str, Any]]:
    """The run records the command wrote (new or rewritten since ``before``)."""
    recs = []
    for name, mtime in sorted(run_files(out).items()):
        if before.get(name) == mtime:
            continue
        try:
            recs.append(json.loads((out / "runs" / name).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return recs


def engine_of(recs: Sequence[Dict[str, Any]]) -> float:
    return sum(float(r.get("engine_seconds") or 0.0) for r in recs)


def mac_frames_of(recs: Sequence[Dict[str, Any]]) -> int:
    return sum(int((r.get("network") or {}).get("mac_frames") or 0) for r in recs)


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One tpsim command. ``args`` follow the tpsim command; ``{out}`` is the case's output
    folder, ``{grid}`` its grid scenario file."""

    name: str
    title: str
    args: Tuple[str, ...]
    out: Optional[str] = None  # output folder (under --work) or None
    reuse: bool = False  # keep the folder's stored runs (the second run of a study)
    reps: int = 1  # repetitions (short commands: medians)
    grid: int = 0  # nodes of the grid scenario the case needs
    needs: Tuple[str, ...] = ()  # cases that must run first (in this order)


def all_cases(quick: bool) -> Dict[str, Case]:
    """The cases of the full mode (``quick`` False) or of the quick mode, by name, in run order;
    plus the cases only ``--cases`` selects (``study-X-quick``)."""
    grid_n = QUICK_GRID_N if quick else GRID_N
    c_sweep = tuple(QUICK_C) if quick else ()
    pts = "4 points" if quick else "48 points"
    cases = [
        Case("version", "`tpsim --version` (median of 5)", ("--version",), reps=5),
        Case("validate", "`tpsim validate` study C (48 points; median of 3)", ("validate", STUDY_C), reps=3),
        Case("one-point", "one point of study C, `tpsim run -j 1 --no-report` (median of 3)",
             ("run", STUDY_C, "--runs", "1", "-j", "1", "--no-report", *ONE_POINT, "-o", "{out}"), out="one-point", reps=3),
        Case("study-d", "study D" + (", `--quick`" if quick else ""),
             ("study", "d", *(("--quick",) if quick else ()), "-o", "{out}"), out="study-d"),
        Case("study-d-again", "study D again: every run stored",
             ("study", "d", *(("--quick",) if quick else ()), "-o", "{out}"), out="study-d", reuse=True, needs=("study-d",)),
        Case("grid-noreport", f"{grid_n:,}-node grid, `--no-report`", ("run", "{grid}", "--no-report", "-o", "{out}"),
             out="grid-noreport", grid=grid_n),
        Case("grid-report", f"{grid_n:,}-node grid with its report", ("run", "{grid}", "-o", "{out}"), out="grid-report",
             grid=grid_n),
        Case("c-off", f"study C `--runs 1` ({pts}), every output off, `--no-report`",
             ("run", STUDY_C, "--runs", "1", "--no-report", *OUTPUTS_OFF, *c_sweep, "-o", "{out}"), out="c-off"),
        # The quick proxy leaves the report out: on 4 points its fixed cost (a few seconds, the
        # grid and study D targets' business) would outweigh the traces this case is about.
        Case("c-traces", f"study C `--runs 1` ({pts}), every trace on" + (", `--no-report`" if quick else ""),
             ("run", STUDY_C, "--runs", "1", *(("--no-report",) if quick else ()), *TRACES_ON, *c_sweep, "-o", "{out}")
             if quick else ("study", "c", "--runs", "1", *TRACES_ON, "-o", "{out}"), out="c-traces", needs=("c-off",)),
    ]
    if not quick:
        cases += [Case(f"study-{s}", f"study {s.upper()}, default settings", ("study", s, "-o", "{out}"), out=f"study-{s}")
                  for s in "abce"]
    cases += [Case(f"study-{s}-quick", f"study {s.upper()} `--quick`", ("study", s, "--quick", "-o", "{out}"),
                   out=f"study-{s}-quick") for s in "abcde"]
    return {c.name: c for c in cases}


def default_cases(quick: bool) -> List[str]:
    """Cases run when none is named (the ``study-X-quick`` ones run only when named)."""
    return [n for n in all_cases(quick) if not n.endswith("-quick")]


def select_cases(names: Optional[Sequence[str]], quick: bool) -> List[Case]:
    """The named cases (globs) with what they need, in run order."""
    cases = all_cases(quick)
    if not names:
        chosen = set(default_cases(quick))
    else:
        chosen = set()
        for g in names:
            hit = [n for n in cases if fnmatch.fnmatchcase(n, g)]
            if not hit:
                raise ValueError(f"no case {g!r}; cases: {', '.join(cases)}")
            chosen.update(hit)
    grew = True
    while grew:
        grew = False
        for n in list(chosen):
            for d in cases[n].needs:
                if d not in chosen:
                    chosen.add(d)
                    grew = True
    return [c for n, c in cases.items() if n in chosen]


@dataclass
class CaseResult:
    case: Case
    command: str  # as a user would type it
    reps: List[Measured] = field(default_factory=list)
    engines: List[Optional[float]] = field(default_factory=list)  # per repetition
    plan: Optional[Dict[str, int]] = None
    mac_frames: int = 0
    error: str = ""

    def _med(self, xs: Sequence[Optional[float]]) -> Optional[float]:
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None

    @property
    def wall(self) -> Optional[float]:
        return self._med([m.wall_s for m in self.reps])

    @property
    def engine(self) -> Optional[float]:
        return self._med(self.engines)

    @property
    def overhead(self) -> Optional[float]:
        """Median over repetitions of wall − engine (no engine: None)."""
        return self._med([m.wall_s - e for m, e in zip(self.reps, self.engines) if e is not None])

    @property
    def ratio(self) -> Optional[float]:
        w, e = self.wall, self.engine
        return w / e if (w is not None and e) else None

    @property
    def peak_sum_mb(self) -> Optional[float]:
        return max(m.peak_sum_kb for m in self.reps) / MB if self.reps else None

    @property
    def peak_single_mb(self) -> Optional[float]:
        return max(m.peak_single_kb for m in self.reps) / MB if self.reps else None

    def as_json(self) -> Dict[str, Any]:
        return {"title": self.case.title, "command": self.command, "error": self.error, "plan": self.plan,
                "wall_s": self.wall, "engine_s": self.engine, "overhead_s": self.overhead, "wall_per_engine": self.ratio,
                "peak_sum_rss_mb": self.peak_sum_mb, "peak_single_rss_mb": self.peak_single_mb,
                "mac_frames": self.mac_frames,
                "reps": [{"wall_s": m.wall_s, "engine_s": e, "cpu_s": m.cpu_s, "peak_sum_rss_mb": m.peak_sum_kb / MB,
                          "peak_single_rss_mb": m.peak_single_kb / MB, "processes": m.processes, "samples": m.samples,
                          "returncode": m.returncode, "killed": m.killed} for m, e in zip(self.reps, self.engines)]}


def user_command(args: Sequence[str]) -> str:
    return "tpsim " + shlex.join(args)


def shown_args(case: Case) -> List[str]:
    """The case's arguments as printed: ``OUT`` for its output folder, the grid file's name."""
    return [a.replace("{out}", "OUT").replace("{grid}", f"grid-{case.grid}.toml") for a in case.args]


def run_case(case: Case, tpsim: Sequence[str], work: Path, interval: float, max_rss_kb: Optional[int]) -> CaseResult:
    """Runs ``case`` (its repetitions, each in a fresh output folder unless it reuses one)."""
    out = work / case.out if case.out else None
    grid = work / f"grid-{case.grid}.toml" if case.grid else None
    if grid is not None:
        text = grid_scenario(case.grid)
        if not grid.exists() or grid.read_text(encoding="utf-8") != text:
            ns2cmp.atomic_write_text(grid, text)
    res = CaseResult(case, user_command(shown_args(case)))
    args = [a.replace("{out}", str(out)).replace("{grid}", str(grid)) for a in case.args]
    for rep in range(case.reps):
        if out is not None and not case.reuse:
            shutil.rmtree(out, ignore_errors=True)
        before = run_files(out) if out is not None else {}
        try:
            m = measure([*tpsim, *args], REPO, interval, max_rss_kb)
        except OSError as e:  # the tpsim command cannot start
            res.error = f"cannot run {shlex.join(tpsim)}: {e}"
            break
        if m.returncode != 0 or m.killed:
            tail = " / ".join((m.stdout + m.stderr).strip().splitlines()[-3:])
            res.error = m.killed or f"exit status {m.returncode}: {tail[-300:]}"
            res.reps.append(m)
            res.engines.append(None)
            break
        recs = fresh_runs(out, before) if out is not None else []
        engine = engine_of(recs) if recs else printed_engine(m.stdout)
        res.reps.append(m)
        res.engines.append(engine)
        res.plan = printed_plan(m.stdout) or res.plan
        res.mac_frames = mac_frames_of(recs)
    return res


# --------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """An acceptance target of the pipeline work. ``value(results)`` is the measured number
    (None if its cases did not run); ``quick``: "same" (the quick mode checks it as it is),
    "proxy" (on a smaller case, named in ``proxy``), "" (full or ns-2 mode only)."""

    key: str
    text: str
    short: str  # beside the case's row
    limit: float
    unit: str
    at_least: bool  # True: measured ≥ limit; False: measured ≤ limit
    cases: Tuple[str, ...]
    value: Callable[[Dict[str, Any]], Optional[float]]
    quick: str = ""
    proxy: str = ""
    mode: str = "full"  # "full" | "ns2"

    def met(self, v: Optional[float]) -> Optional[bool]:
        if v is None:
            return None
        return v >= self.limit if self.at_least else v <= self.limit


def _attr(case: str, attr: str) -> Callable[[Dict[str, Any]], Optional[float]]:
    def f(r: Dict[str, Any]) -> Optional[float]:
        c = r.get(case)
        return None if c is None or c.error else getattr(c, attr)
    return f


def _traces_ratio(r: Dict[str, Any]) -> Optional[float]:
    on, off = r.get("c-traces"), r.get("c-off")
    if on is None or off is None or off.error or not off.engine:
        return None
    if on.error:  # killed or failed: its wall so far is a lower bound; report as not met
        return float("inf")
    return on.wall / off.engine


def _traces_rss(r: Dict[str, Any]) -> Optional[float]:
    on = r.get("c-traces")
    if on is None or not on.reps:
        return None
    return on.peak_sum_mb


def _ns2_ratio(study: str) -> Callable[[Dict[str, Any]], Optional[float]]:
    def f(r: Dict[str, Any]) -> Optional[float]:
        s = r.get(f"ns2-{study}")
        return None if s is None else s.get("ratio")
    return f


#: The issue's acceptance targets (docs/benchmarks.md, "The whole pipeline", has the same table).
TARGETS: List[Target] = [
    Target("c-traces-wall", "study C with every trace on (48 points, `--runs 1`): wall ≤ 3 × the summed engine time "
           "of the same runs with every output off", "wall ≤ 3 × engine of `c-off`", 3.0, "×", False,
           ("c-traces", "c-off"), _traces_ratio, quick="proxy", proxy="4 points, no report"),
    Target("c-traces-rss", "the same: peak summed RSS ≤ 1 GB", "peak Σ RSS ≤ 1 GB", 1024.0, "MB", False,
           ("c-traces",), _traces_rss, quick="proxy", proxy="4 points, no report"),
    Target("grid-report", "10,000-node grid with its report: ≤ 5 s beyond the engine's time", "overhead ≤ 5 s",
           5.0, "s", False, ("grid-report",), _attr("grid-report", "overhead"), quick="proxy", proxy="1,000 nodes"),
    Target("study-d-again", "`tpsim study d` with every run stored (second run): ≤ 3 s wall", "wall ≤ 3 s",
           3.0, "s", False, ("study-d-again",), _attr("study-d-again", "wall"), quick="same"),
    Target("version", "`tpsim --version` ≤ 0.1 s", "wall ≤ 0.1 s", 0.1, "s", False, ("version",),
           _attr("version", "wall"), quick="same"),
    Target("one-point", "`tpsim run` of one point of study C: ≤ 0.25 s beyond the engine's time",
           "overhead ≤ 0.25 s", 0.25, "s", False, ("one-point",), _attr("one-point", "overhead"), quick="same"),
    Target("ns2-c", "study C (ns-2 stack, UDP and TFRC, every replication) against ns-2.35, process against "
           "process: wall-time speed-up ≥ 80 % of the event-loop speed-up per MAC frame", "≥ 0.8", 0.8, "", True,
           ("ns2-c",), _ns2_ratio("c"), mode="ns2"),
    Target("ns2-a", "the same for study A (intervals × UDP, TCP, SCTP)", "≥ 0.8", 0.8, "", True, ("ns2-a",),
           _ns2_ratio("a"), mode="ns2"),
]


# --------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------

fmt_sig = ns2cmp.fmt_sig
table = ns2cmp.table


def fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "—"
    return f"{x:,.3f}" if abs(x) < 10 else f"{x:,.1f}"


def fmt_mb(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:,.0f}"


def fmt_value(t: Target, v: Optional[float]) -> str:
    if v is None:
        return "—"
    if v == float("inf"):
        return "∞ (did not finish)"
    if t.unit == "×":
        return f"{v:.2f}×"
    if t.unit == "MB":
        return f"{v:,.0f} MB"
    if t.unit == "s":
        return f"{fmt_s(v)} s"
    return fmt_sig(v)


def verdict(t: Target, v: Optional[float], proxy: bool = False) -> str:
    ok = t.met(v)
    if ok is None:
        return "—"
    word = "met" if ok else "**not met**"
    return f"{word} (proxy: {t.proxy})" if proxy else word


def machine_line() -> str:
    return f"{os.cpu_count()} cores, {ns2cmp.cpu_model()}, Python {platform.python_version()}"


def case_table(results: Dict[str, CaseResult], quick: bool) -> str:
    rows = []
    for name, r in results.items():
        plan = f"{r.plan['points']} × {r.plan['runs']}" if r.plan else "—"
        mine = [t for t in TARGETS if t.mode == "full" and t.cases[0] == name]
        tcell = "; ".join(t.short for t in mine)
        mcell = "; ".join(f"{fmt_value(t, t.value(results))}: {verdict(t, t.value(results), quick and t.quick == 'proxy')}"
                          for t in mine)
        cpu = statistics.median([m.cpu_s for m in r.reps]) if r.reps else None
        procs = max((m.processes for m in r.reps), default=0)
        wall = fmt_s(r.wall) + (f" ({r.error})" if r.error else "")
        rows.append([f"`{name}`: {r.case.title}", f"`{r.command}`", plan, fmt_s(r.engine), wall,
                     "—" if r.ratio is None else f"{r.ratio:,.1f}", fmt_s(r.overhead), fmt_s(cpu), fmt_mb(r.peak_sum_mb),
                     fmt_mb(r.peak_single_mb), str(procs), tcell, mcell])
    return table(["case", "command", "points × runs", "engine s", "wall s", "wall / engine", "overhead s", "CPU s",
                  "peak Σ RSS MB", "max 1-process RSS MB", "processes", "target", "met"], rows)


def targets_table(results: Dict[str, Any], quick: bool, modes: Sequence[str]) -> str:
    rows = []
    for t in TARGETS:
        if t.mode not in modes:
            continue
        v = t.value(results)
        proxy = quick and t.quick == "proxy"
        failed = [c for c in t.cases if getattr(results.get(c), "error", "")]
        if v is None:
            met = f"— ({', '.join(failed)} failed)" if failed else "— (not run)"
        else:
            met = verdict(t, v, proxy)
        limit = ("≥ " if t.at_least else "≤ ") + (f"{t.limit:g} {t.unit}".strip() if t.unit != "×" else f"{t.limit:g}×")
        rows.append([f"`{t.key}`: {t.text}", limit, fmt_value(t, v), met])
    return table(["target", "limit", "measured", "met"], rows)


def coverage_note(quick: bool) -> str:
    same = [t.key for t in TARGETS if t.mode == "full" and t.quick == "same"]
    proxy = [f"{t.key} ({t.proxy})" for t in TARGETS if t.mode == "full" and t.quick == "proxy"]
    full = [t.key for t in TARGETS if t.mode == "full" and t.quick == "proxy"]
    ns2 = [t.key for t in TARGETS if t.mode == "ns2"]
    head = "This quick mode" if quick else "The quick mode (`--quick`)"
    return (f"{head} checks {', '.join(same)} as they are, and {', '.join(proxy)} on smaller cases: a proxy, "
            f"which cannot show that the full target holds. Only the full mode checks {', '.join(full)} as stated; "
            f"only `--ns2` checks {', '.join(ns2)}.")


# --------------------------------------------------------------------------------------
# ns-2.35 process against process
# --------------------------------------------------------------------------------------

#: tpsim's sweep over the points study_{c,a}.tcl covers, on the ns-2 stack.
NS2_STUDIES = {
    "C": ["study", "c", "--sweep", "simulation.stack=ns2", "--sweep", "flows.0.transport=udp,tfrc"],
    "A": ["study", "a", "--sweep", "simulation.stack=ns2"],
}
STUDY_FILES = {"C": "scenarios/study-c-manet-speed.toml", "A": "scenarios/study-a-sensor-interval.toml"}


def ns2_points(study: str, patterns: Optional[Sequence[str]] = None) -> List["ns2cmp.Point"]:
    """compare_ns2's points of ``study`` that the process-against-process comparison runs (C:
    UDP and TFRC as ns-2 has them, no llfix; A: every interval × UDP, TCP, SCTP), narrowed to
    those matching one of ``patterns``."""
    if study == "C":
        keys = [f"C-{tr}-v{v}-bg{bg}" for tr in ("udp", "tfrc") for bg in ns2cmp.C_BGS for v in ns2cmp.C_SPEEDS]
    elif study == "A":
        keys = [f"A-{tr}-I{i}" for tr in ns2cmp.TRANSPORTS for i in ns2cmp.A_INTERVALS]
    else:
        raise ValueError(f"no process-against-process comparison for study {study}")
    pts = [ns2cmp.POINTS[k] for k in keys]
    if patterns:
        pts = [p for p in pts if any(fnmatch.fnmatchcase(p.key, g) for g in patterns)]
    return pts


def study_runs(study: str) -> int:
    """``simulation.runs`` of the study's scenario file (10 when it cannot be read)."""
    text = (REPO / STUDY_FILES[study]).read_text(encoding="utf-8")
    sim = re.search(r"^\[simulation\]\s*$(.*?)(?=^\[)", text, re.S | re.M)
    m = re.search(r"^runs\s*=\s*(\d+)", sim.group(1) if sim else text, re.M)
    return int(m.group(1)) if m else 10


def tpsim_ns2_args(study: str, points: Sequence["ns2cmp.Point"], reps: int) -> List[str]:
    """The ``tpsim study`` arguments for exactly ``points`` × ``reps`` replications (no narrowing
    when they are the study's whole comparison). ValueError if the points are not a full
    product of their values (a sweep cannot express them)."""
    args = list(NS2_STUDIES[study])
    every = ns2_points(study)
    if study == "C":
        dims = [sorted({p.speed for p in points}), sorted({p.bg for p in points}), sorted({p.transport for p in points})]
        full = [sorted(ns2cmp.C_SPEEDS), sorted(ns2cmp.C_BGS), ["tfrc", "udp"]]
        keys = ["nodes.mobility.speed", "background.flows", "flows.0.transport"]
        vals = [",".join(f"[{v}m/s,{v}m/s]" for v in dims[0]), ",".join(map(str, dims[1])), ",".join(dims[2])]
    else:
        dims = [sorted({int(p.interval) for p in points}), sorted({p.transport for p in points})]
        full = [sorted(ns2cmp.A_INTERVALS), sorted(ns2cmp.TRANSPORTS)]
        keys = ["sensors.interval", "sensors.transport"]
        vals = [",".join(f"{i}s" for i in dims[0]), ",".join(dims[1])]
    n = 1
    for d in dims:
        n *= len(d)
    if n != len(points):
        raise ValueError(f"points {', '.join(p.key for p in points)} are not every combination of their values: "
                         "a tpsim sweep cannot run exactly them")
    if len(points) != len(every):
        for k, d, f, v in zip(keys, dims, full, vals):
            if d != f:
                if k == "flows.0.transport":  # replaces the base's udp,tfrc
                    args[args.index("flows.0.transport=udp,tfrc")] = f"{k}={v}"
                else:
                    args += ["--sweep", f"{k}={v}"]
    if reps != study_runs(study):
        args += ["--runs", str(reps)]
    return args


def tpsim_point_key(study: str, params: Dict[str, Any]) -> Optional[str]:
    """compare_ns2's point key of a tpsim run's sweep parameters (None if not one)."""
    try:
        if study == "C":
            v = re.search(r"([0-9.]+)\s*m/s", str(params["nodes.mobility.speed"]))
            return f"C-{params['flows.0.transport']}-v{float(v.group(1)):g}-bg{int(params['background.flows'])}"
        i = re.fullmatch(r"([0-9.]+)\s*s", str(params["sensors.interval"]).strip())
        return f"A-{params['sensors.transport']}-I{float(i.group(1)):g}"
    except (KeyError, AttributeError, ValueError, TypeError):
        return None


@dataclass
class Ns2Run:
    point: "ns2cmp.Point"
    seed: int
    command: List[str]
    start: float = 0.0
    end: float = 0.0
    maxrss_kb: int = 0
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""


def ns2_batch(runs: List[Ns2Run], ns2_dir: Path, jobs: int, interval: float) -> Dict[str, Any]:
    """Runs every ``ns`` command, ``jobs`` at a time (in ``ns2_dir``), and measures the batch:
    wall time from the first start to the last end, the peak summed RSS of the running
    processes (with the trace readers they start) and the largest single one."""
    queue = list(runs)
    running: Dict[int, Tuple[Ns2Run, Any, Any, subprocess.Popen]] = {}
    tree = TreeRss(os.getpid(), list_pids(), include_root=False)
    sampler = Sampler(tree, interval).start()
    t0 = time.perf_counter()
    try:
        while queue or running:
            while queue and len(running) < jobs:
                r = queue.pop(0)
                out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
                r.start = time.perf_counter()
                p = subprocess.Popen(r.command, cwd=ns2_dir, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
                running[p.pid] = (r, out, err, p)
            pid, status, ru = os.wait4(-1, 0)
            if pid not in running:
                continue
            r, out, err, p = running.pop(pid)
            r.end = time.perf_counter()
            p.returncode = r.returncode = os.waitstatus_to_exitcode(status)
            r.maxrss_kb = ru.ru_maxrss
            out.seek(0)
            err.seek(0)
            r.stdout = out.read().decode("utf-8", "replace")
            r.stderr = err.read().decode("utf-8", "replace")
            out.close()
            err.close()
            log(f"ns-2 {r.point.key} seed {r.seed}: {r.end - r.start:.2f} s ({len(runs) - len(queue) - len(running)}"
                f"/{len(runs)})")
    finally:
        sampler.stop()
        for r, out, err, p in running.values():
            p.kill()
    wall = max(r.end for r in runs) - min(r.start for r in runs)
    return {"wall_s": wall, "harness_wall_s": time.perf_counter() - t0, "peak_sum_rss_mb": tree.peak_sum_kb / MB,
            "peak_single_rss_mb": max([tree.peak_single_kb] + [r.maxrss_kb for r in runs]) / MB,
            "processes": tree.processes}


def store_traced(run: Ns2Run, parsed: Dict[str, Any], ns2_dir: Path, cache: Path, jobs: int) -> Dict[str, Any]:
    """The traced run as compare_ns2 caches it (written to its cache when absent there, so
    that compare_ns2 reuses it)."""
    rec = {"command": shlex.join(run.command), "seed": run.seed, "kind": "traced",
           "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "load1_before": None,
           "process_wall_s": run.end - run.start, "stdout": run.stdout, "parsed": parsed,
           "note": f"benches/pipeline.py --ns2: {jobs} ns processes at a time"}
    path = ns2cmp.ns2_cache_path(cache, ns2_dir, run.point, run.seed, "traced")
    if not path.exists():
        ns2cmp.atomic_write_text(path, json.dumps(rec, indent=1))
    return rec


def ns2_compare(study: str, points: Sequence["ns2cmp.Point"], seeds: Sequence[int], tpsim: Sequence[str], work: Path,
                ns2_dir: Path, cache: Path, jobs: int, interval: float, keep: bool) -> Dict[str, Any]:
    """One study, process against process; the summary (JSON-able)."""
    args = tpsim_ns2_args(study, points, len(seeds))
    out = work / f"ns2-tpsim-{study.lower()}"
    shutil.rmtree(out, ignore_errors=True)
    log(f"tpsim: {user_command(args)}")
    m = measure([*tpsim, *args, "-o", str(out)], REPO, interval)
    if m.returncode != 0:
        tail = "\n".join((m.stdout + m.stderr).strip().splitlines()[-10:])
        raise RuntimeError(f"tpsim failed (exit status {m.returncode}): {user_command(args)}\n{tail}")
    recs = fresh_runs(out, {})
    plan = printed_plan(m.stdout)
    if len(recs) != len(points) * len(seeds):
        log(f"warning: tpsim ran {len(recs)} runs, the ns-2 batch has {len(points) * len(seeds)}")
    tp_engine, tp_frames = engine_of(recs), mac_frames_of(recs)
    per_point: Dict[str, Dict[str, float]] = {}
    for r in recs:
        k = tpsim_point_key(study, r.get("params") or {})
        if k is not None:
            d = per_point.setdefault(k, {"tp_loop": 0.0, "tp_frames": 0, "ns_loop": 0.0, "ns_frames": 0})
            d["tp_loop"] += float(r.get("engine_seconds") or 0.0)
            d["tp_frames"] += int((r.get("network") or {}).get("mac_frames") or 0)
    if not keep:
        shutil.rmtree(out, ignore_errors=True)

    batch = [Ns2Run(p, s, ns2cmp.ns2_command(ns2_dir, p, s, "traced")) for p in points for s in seeds]
    log(f"ns-2: {len(batch)} traced runs of {points[0].script}, {jobs} at a time")
    b = ns2_batch(batch, ns2_dir, jobs, interval)
    ns_loop = ns_frames = 0.0
    for r in batch:
        parsed = ns2cmp.parse_ns2_output(r.stdout)
        if r.returncode != 0 or not parsed["total"]:
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-10:])
            raise RuntimeError(f"ns-2 failed (exit status {r.returncode}): {shlex.join(r.command)} in {ns2_dir}\n{tail}")
        traced = store_traced(r, parsed, ns2_dir, cache, jobs)
        # the event loop without the trace: compare_ns2's untraced run (cached), one at a time
        untraced = ns2cmp.run_ns2(ns2_dir, r.point, r.seed, "untraced", cache=cache)
        ms = ns2cmp.ns2_measures(r.point, traced, untraced)
        ns_loop += ms["loop_s"]
        ns_frames += ms["frames"]
        d = per_point.setdefault(r.point.key, {"tp_loop": 0.0, "tp_frames": 0, "ns_loop": 0.0, "ns_frames": 0})
        d["ns_loop"] += ms["loop_s"]
        d["ns_frames"] += ms["frames"]

    us = lambda s, n: s / n * 1e6 if n else None  # noqa: E731
    tp_us, ns_us = us(tp_engine, tp_frames), us(ns_loop, ns_frames)
    wall_speedup = b["wall_s"] / m.wall_s
    loop_speedup = ns_us / tp_us if (ns_us and tp_us) else None
    per_frame_wall = ((b["wall_s"] / ns_frames) / (m.wall_s / tp_frames)) if (ns_frames and tp_frames) else None
    return {
        "study": study, "points": [p.key for p in points], "seeds": list(seeds), "plan": plan,
        "tpsim_command": user_command(args),
        "ns2_command": f"ns {points[0].script} … seed=S trace=1 (S = {seed_text(seeds)}), {jobs} at a time",
        "tpsim": {"wall_s": m.wall_s, "engine_s": tp_engine, "mac_frames": tp_frames, "us_per_frame": tp_us,
                  "runs": len(recs), "cpu_s": m.cpu_s, "peak_sum_rss_mb": m.peak_sum_kb / MB,
                  "peak_single_rss_mb": m.peak_single_kb / MB},
        "ns2": {"wall_s": b["wall_s"], "loop_s": ns_loop, "mac_frames": ns_frames, "us_per_frame": ns_us,
                "runs": len(batch), "peak_sum_rss_mb": b["peak_sum_rss_mb"],
                "peak_single_rss_mb": b["peak_single_rss_mb"], "jobs": jobs},
        "wall_speedup": wall_speedup, "loop_speedup": loop_speedup, "per_frame_wall_speedup": per_frame_wall,
        "ratio": wall_speedup / loop_speedup if loop_speedup else None,
        "per_point": per_point,
    }


def seed_text(seeds: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``1-3, 7``."""
    parts: List[List[int]] = []
    for x in sorted(seeds):
        if parts and x == parts[-1][1] + 1:
            parts[-1][1] = x
        else:
            parts.append([x, x])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in parts)


def ns2_report(s: Dict[str, Any]) -> str:
    tp, ns = s["tpsim"], s["ns2"]
    t = next(t for t in TARGETS if t.key == f"ns2-{s['study'].lower()}")
    rows = [["tpsim", f"`{s['tpsim_command']}`", str(tp["runs"]), fmt_s(tp["wall_s"]), fmt_s(tp["engine_s"]),
             f"{tp['mac_frames']:,}", fmt_sig(tp["us_per_frame"]), fmt_mb(tp["peak_sum_rss_mb"]),
             fmt_mb(tp["peak_single_rss_mb"])],
            ["ns-2.35", f"`{s['ns2_command']}`", str(ns["runs"]), fmt_s(ns["wall_s"]),
             fmt_s(ns["loop_s"]) + " (trace=0)", f"{ns['mac_frames']:,.0f}", fmt_sig(ns["us_per_frame"]),
             fmt_mb(ns["peak_sum_rss_mb"]), fmt_mb(ns["peak_single_rss_mb"])]]
    n = len(s["seeds"])
    k = len(s["points"])
    lines = [f"### Study {s['study']}: {k} point{'s' if k != 1 else ''} × {n} replication{'s' if n != 1 else ''}", "",
             table(["side", "command", "runs", "wall s (whole batch)", "event loop s", "MAC frames", "µs per MAC frame",
                    "peak Σ RSS MB", "max 1-process RSS MB"], rows), ""]
    ls = s["loop_speedup"]
    lines.append(f"Wall-time speed-up (ns-2 batch wall / tpsim command wall): **{fmt_sig(s['wall_speedup'])}×**; "
                 f"event-loop speed-up per MAC frame: **{fmt_sig(ls)}×**; ratio {fmt_sig(s['ratio'])} "
                 f"(target ≥ {t.limit:g}): {verdict(t, s['ratio'])}. Wall time per MAC frame of each side's own "
                 f"runs: {fmt_sig(s['per_frame_wall_speedup'])}× (the two sides' frame counts differ).")
    pp = s["per_point"]
    rows = []
    for k in s["points"]:
        d = pp.get(k)
        if not d:
            continue
        a = d["ns_loop"] / d["ns_frames"] * 1e6 if d["ns_frames"] else None
        b = d["tp_loop"] / d["tp_frames"] * 1e6 if d["tp_frames"] else None
        rows.append([f"`{k}`", fmt_sig(a), fmt_sig(b), fmt_sig(a / b) if (a and b) else "—"])
    lines += ["", table(["point", "ns-2 µs per MAC frame (trace=0)", "tpsim µs per MAC frame", "×"], rows), ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python benches/pipeline.py",
                                 description="The whole tpsim run as users feel it: wall, engine and memory of tpsim "
                                             "commands, against the pipeline targets; --ns2: against ns-2.35, process "
                                             "against process.")
    ap.add_argument("--quick", action="store_true", help="the short cases (under a minute once the targets hold)")
    ap.add_argument("--cases", default=None, help="comma-separated case names or globs (--list shows them)")
    ap.add_argument("--list", action="store_true", help="list the cases of the mode and exit")
    ap.add_argument("--ns2", action="store_true", help="ns-2.35 process against process instead of the cases")
    ap.add_argument("--ns2-studies", default="C,A", help="studies for --ns2 (default C,A)")
    ap.add_argument("--points", default=None, help="--ns2: comma-separated globs on compare_ns2's point keys, e.g. "
                                                   "'C-*-v10-bg0' (must be every combination of their values)")
    ap.add_argument("--seeds", default=None, help="--ns2: ns-2 seeds, e.g. 1-10 (default 1 to the study's runs); "
                                                  "tpsim runs as many replications")
    ap.add_argument("--ns2-jobs", type=int, default=2, help="--ns2: ns processes at a time (default 2)")
    ap.add_argument("--ns2-dir", type=Path, default=None, help="the ns-2 scripts (default $TPSIM_NS2_DIR or ../shared/ns2)")
    ap.add_argument("--tpsim", default=None, help="the tpsim command (default: this Python with -m tpsim)")
    ap.add_argument("--work", type=Path, default=WORK, help=f"output folders (default {WORK.relative_to(REPO)})")
    ap.add_argument("--keep", action="store_true", help="keep each case's output folder")
    ap.add_argument("--sample-ms", type=float, default=20.0, help="RSS sampling interval, ms (default 20)")
    ap.add_argument("--max-rss", type=float, default=None,
                    help="GB: kill a case whose summed RSS exceeds it (default: 80 %% of the memory available at start)")
    ap.add_argument("--json", type=Path, default=None, help="also write every measurement to this JSON file")
    a = ap.parse_args(list(argv))
    a.tpsim_cmd = shlex.split(a.tpsim) if a.tpsim else [sys.executable, "-m", "tpsim"]
    if not a.tpsim_cmd:
        ap.error("--tpsim: empty command")
    if a.sample_ms <= 0:
        ap.error("--sample-ms must be positive")
    if a.ns2_jobs < 1:
        ap.error("--ns2-jobs must be at least 1")
    a.case_names = [c.strip() for c in a.cases.split(",") if c.strip()] if a.cases else None
    if a.ns2 and (a.quick or a.case_names):
        ap.error("--ns2 runs the ns-2 comparison only: no --quick or --cases with it")
    if not a.ns2:
        try:
            a.case_list = select_cases(a.case_names, a.quick)
        except ValueError as e:
            ap.error(str(e))
    else:
        a.study_list = [s.strip().upper() for s in a.ns2_studies.split(",") if s.strip()]
        bad = [s for s in a.study_list if s not in NS2_STUDIES]
        if bad or not a.study_list:
            ap.error(f"--ns2-studies: unknown {', '.join(bad) or '(none)'}; known: {', '.join(NS2_STUDIES)}")
        pats = [g.strip() for g in a.points.split(",") if g.strip()] if a.points else None
        a.ns2_point_lists = {s: ns2_points(s, pats) for s in a.study_list}
        a.ns2_point_lists = {s: p for s, p in a.ns2_point_lists.items() if p}
        if not a.ns2_point_lists:
            ap.error(f"no point matches --points {a.points!r}")
        for s, pts in a.ns2_point_lists.items():
            try:
                tpsim_ns2_args(s, pts, 1)
            except ValueError as e:
                ap.error(str(e))
        try:
            a.seed_list = ns2cmp.parse_seeds(a.seeds) if a.seeds else None
        except ValueError as e:
            ap.error(str(e))
        if a.seed_list and "C" in a.ns2_point_lists and max(a.seed_list) > 10:
            ap.error("study C has movement files for seeds 1-10 only")
    return a


def mem_available_kb() -> Optional[int]:
    try:
        for ln in Path("/proc/meminfo").read_text().splitlines():
            if ln.startswith("MemAvailable:"):
                return int(ln.split()[1])
    except OSError:
        pass
    return None


def header(a: argparse.Namespace, mode: str, version: str, date: str, load_start: float) -> List[str]:
    return [f"## tpsim pipeline benchmark: {mode}", "",
            f"* {date}; tpsim {version} run as `{shlex.join(a.tpsim_cmd)}` from {REPO}; {machine_line()}; "
            f"load average {load_start:.2f} at the start.",
            f"* Engine = the summed `engine_seconds` of the runs the command made; overhead = wall − engine; "
            f"peak Σ RSS = the peak of the summed RSS of the tpsim process and its descendants, sampled every "
            f"{a.sample_ms:g} ms from /proc; max 1-process RSS from the kernel (wait4's ru_maxrss) and the sampled "
            "VmHWM; MB = 2²⁰ bytes, GB = 1,024 MB; CPU = user + system of the whole tree.", ""]


def tpsim_version(tpsim: Sequence[str]) -> str:
    try:
        p = subprocess.run([*tpsim, "--version"], capture_output=True, text=True, cwd=REPO, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(unknown: {e})"
    return p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else "(unknown)"


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = parse_args(sys.argv[1:] if argv is None else argv)
    # SIGTERM ends the harness like Ctrl-C: the running command's process group is killed too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if a.list:
        if a.ns2:
            for s, pts in a.ns2_point_lists.items():
                print(f"{s}: {', '.join(p.key for p in pts)}")
        else:
            for c in all_cases(a.quick).values():
                print(f"{c.name:16} {c.title}: {user_command(shown_args(c))}")
        return 0
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    version = tpsim_version(a.tpsim_cmd)
    work = a.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    interval = a.sample_ms / 1000.0
    report: Dict[str, Any] = {"date": date, "tpsim_version": version, "tpsim_command": a.tpsim_cmd,
                              "machine": machine_line(), "load1_start": os.getloadavg()[0],
                              "sample_ms": a.sample_ms}
    t_start = time.perf_counter()
    if a.ns2:
        return main_ns2(a, report, version, date, work, interval, t_start)

    avail = mem_available_kb()
    max_rss_kb = int(a.max_rss * 1024 * 1024) if a.max_rss else (int(avail * 0.8) if avail else None)
    mode = "quick mode" if a.quick else "full mode"
    results: Dict[str, CaseResult] = {}
    for case in a.case_list:
        log(f"{case.name}: {case.title}")
        r = run_case(case, a.tpsim_cmd, work, interval, max_rss_kb)
        results[case.name] = r
        log(f"{case.name}: wall {fmt_s(r.wall)} s, engine {fmt_s(r.engine)} s, peak Σ RSS {fmt_mb(r.peak_sum_mb)} MB"
            + (f" — {r.error}" if r.error else ""))
        # a folder a later case reuses stays until that case has run
        later = [c for c in a.case_list[a.case_list.index(case) + 1:] if c.out == case.out]
        if case.out and not a.keep and not later:
            shutil.rmtree(work / case.out, ignore_errors=True)
    elapsed = time.perf_counter() - t_start
    lines = header(a, mode, version, date, report["load1_start"])
    lines += ["### Cases", "", case_table(results, a.quick), "", "### Targets", "",
              targets_table(results, a.quick, ["full"]), "", coverage_note(a.quick), "",
              f"This run took {elapsed:.0f} s; load average {os.getloadavg()[0]:.2f} at the end."]
    print("\n".join(lines))
    report.update({"mode": "quick" if a.quick else "full", "elapsed_s": elapsed,
                   "cases": {n: r.as_json() for n, r in results.items()},
                   "targets": [{"key": t.key, "text": t.text, "limit": t.limit, "unit": t.unit,
                                "quick": t.quick, "proxy": t.proxy if a.quick else "",
                                "measured": t.value(results), "met": t.met(t.value(results))}
                               for t in TARGETS if t.mode == "full"]})
    if a.json:
        ns2cmp.atomic_write_text(a.json, json.dumps(report, indent=1, default=str))
    return 1 if any(r.error for r in results.values()) else 0


def main_ns2(a: argparse.Namespace, report: Dict[str, Any], version: str, date: str, work: Path, interval: float,
             t_start: float) -> int:
    ns2_dir = (a.ns2_dir or ns2cmp.ns2_dir_default()).resolve()
    if not (ns2_dir / "common.tcl").is_file():
        log(f"no ns-2 scripts at {ns2_dir}; pass --ns2-dir or set TPSIM_NS2_DIR")
        return 2
    if shutil.which("ns") is None:
        log("ns-2 (`ns`) is not installed: apt-get install ns2")
        return 2
    summaries: Dict[str, Dict[str, Any]] = {}
    for study, pts in a.ns2_point_lists.items():
        seeds = a.seed_list or list(range(1, study_runs(study) + 1))
        summaries[f"ns2-{study.lower()}"] = ns2_compare(study, pts, seeds, a.tpsim_cmd, work, ns2_dir, ns2cmp.CACHE,
                                                        a.ns2_jobs, interval, a.keep)
    elapsed = time.perf_counter() - t_start
    lines = header(a, "tpsim against ns-2.35, process against process", version, date, report["load1_start"])[:-1]
    lines += [f"* ns-2.35: the scripts of {ns2_dir}, traced (`trace=1`, their metrics), {a.ns2_jobs} `ns` "
              "processes at a time; its wall time runs from the first start to the last end. Event loop: ns-2's "
              "`wall_run_s` with `trace=0` (benches/compare_ns2.py, cached in benches/.cache/ns2-results/), "
              "tpsim's `engine_seconds` of the command's own runs; per MAC frame of each side's runs.", ""]
    for s in summaries.values():
        lines.append(ns2_report(s))
    lines += ["### Targets", "", targets_table(summaries, False, ["ns2"]), "",
              f"This run took {elapsed:.0f} s; load average {os.getloadavg()[0]:.2f} at the end."]
    print("\n".join(lines))
    report.update({"mode": "ns2", "elapsed_s": elapsed, "ns2": summaries,
                   "targets": [{"key": t.key, "text": t.text, "limit": t.limit, "measured": t.value(summaries),
                                "met": t.met(t.value(summaries))} for t in TARGETS if t.mode == "ns2"]})
    if a.json:
        ns2cmp.atomic_write_text(a.json, json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
