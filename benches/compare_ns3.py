#!/usr/bin/env python3
"""tpsim and ns-3 side by side: one command that runs both simulators on the same scenarios
and writes the comparison into docs/benchmarks.md.

    python benches/compare_ns3.py [--scenarios wired-udp] [--seeds 5] [--quick]

What it does, in order:

1. Makes (once) a virtual environment ``benches/.cache/ns3-venv`` with the ns-3 wheel
   ``ns3==3.44.post0`` from PyPI.
2. Builds the ns-3 reference programs the chosen scenarios need. They live outside this
   repository, in ``../shared/ns3`` next to the repository root (``--ns3-dir`` or
   ``$TPSIM_NS3_DIR`` override). If that folder is writable its own ``build.sh`` builds them
   into its ``bin/``; otherwise they are compiled into ``benches/.cache/ns3-build/bin`` with the
   same g++ command line as ``build.sh`` (the module list is read from ``build.sh``).
3. Runs every scenario ``--seeds`` times on each side, one process at a time, each under
   ``/usr/bin/time -v`` (peak RSS). ns-3 results are cached in
   ``benches/.cache/ns3-results`` per (scenario, program, arguments, seed, program sources,
   ns-3 version) because they take seconds to minutes; tpsim runs fresh every time.
4. Writes the tables between ``<!-- compare_ns3:begin -->`` and ``<!-- compare_ns3:end -->``
   in docs/benchmarks.md (the section is added at the end if the markers are missing;
   nothing else in the file changes), atomically. Each scenario has its own block, so a run
   of some scenarios keeps the blocks of the others.

``--quick`` runs 1 seed of a short simulation, to check the harness end to end in seconds
(once the venv and the programs are built); it prints the section instead of writing the
document unless ``--doc`` is given.

Adding a scenario = adding a :class:`Benchmark` entry to :data:`BENCHMARKS` (and its tpsim
scenario file under ``benches/scenarios/``).

Standard library only; the tpsim side runs in a child process of this same Python
(``python compare_ns3.py tpsim-worker ...``), which must have tpsim installed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "benches" / ".cache"
DOC = REPO / "docs" / "benchmarks.md"
NS3_WHEEL = "ns3==3.44.post0"
NS3_WHEEL_VERSION = NS3_WHEEL.split("==", 1)[1]
TIME_TOOL = "/usr/bin/time"

BEGIN = "<!-- compare_ns3:begin -->"
END = "<!-- compare_ns3:end -->"
SECTION_TITLE = "## tpsim and ns-3 side by side"
#: Opens the block of one scenario inside the section; the block runs to the next one or END.
BLOCK = "<!-- compare_ns3:scenario {key} -->"
BLOCK_RE = re.compile(r"^<!-- compare_ns3:scenario (\S+) -->$", re.MULTILINE)


# --------------------------------------------------------------------------------------
# The scenarios
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    """One scenario run on both sides.

    ``ns3_args`` and ``quick_ns3_args`` are the program's arguments without the seed (the
    harness adds ``--seed=S --run=1``); ``quick_tpsim_set`` are ``key=value`` overrides of
    the tpsim scenario file for ``--quick`` (the same short simulated time as
    ``quick_ns3_args``).
    """

    key: str
    title: str
    tpsim_scenario: str  # relative to the repository root
    ns3_program: str  # a program of the shared ns-3 folder (<name>.cc)
    ns3_args: Tuple[str, ...]
    sim_time_s: float
    quick_ns3_args: Tuple[str, ...]
    quick_tpsim_set: Tuple[str, ...]
    quick_sim_time_s: float
    #: MAC frames are a meaningful measure (wireless); wired p2p links have none in ns-3.
    mac_frames: bool = False
    #: Model differences that explain metric differences (markdown, one paragraph each).
    notes: Tuple[str, ...] = ()
    #: Headline metrics may differ by this much (relative) before the table flags them.
    tolerance: float = 1e-3


BENCHMARKS: Dict[str, Benchmark] = {
    b.key: b
    for b in [
        Benchmark(
            key="wired-udp",
            title="study D wired VoIP over UDP",
            tpsim_scenario="benches/scenarios/wired-voip-udp-1000s.toml",
            ns3_program="s5_wired_voip",
            ns3_args=("--transport=udp", "--simTime=1000"),
            sim_time_s=1000.0,
            quick_ns3_args=("--transport=udp", "--simTime=10"),
            quick_tpsim_set=("simulation.duration=10s", "flows.0.app.stop=10s"),
            quick_sim_time_s=10.0,
            notes=(
                "Same model on both sides: 2 nodes, full-duplex 256 kbit/s, 50 ms, DropTail 50 "
                "packets per direction (ns-3's qdisc removed), two-way 128 B every 20 ms from "
                "0.1 s to the end, 158 B on the wire (UDP 8 + IPv4 20 + PPP 2), no ARP on "
                "either side (ns-3's point-to-point device uses none), the run ends at the "
                "stop time so 2 packets per direction are still on the link (PDR < 1 on both "
                "sides). There is no randomness, so every seed gives the same metrics.",
                "Measurement points differ: ns-3's FlowMonitor measures at the IP layer (delay "
                "IP send → IP receive; throughput in IP bytes from a flow's first send to its "
                "last receive), tpsim at the application (delay send → delivery; goodput in "
                "payload bytes from start to stop time). On this idle link the delays are "
                "the same; the ns-3 goodput row is FlowMonitor's throughput scaled by "
                "application bytes / IP bytes (128/156), and its active time ends at the last "
                "receive (≈ 5 ms before tpsim's stop time), a 5·10⁻⁶ relative difference.",
                "Event counts differ by design: ns-3 executes about 4 events per packet, "
                "tpsim 3, and each side counts what its own scheduler runs. Compare wall time "
                "per delivered packet rather than events/s.",
                "Process wall time and peak RSS cover different start-up work: for ns-3 the "
                "program's shared libraries and the topology set-up; for tpsim the Python "
                "interpreter, importing tpsim and polars (most of its RSS), parsing and "
                "validating the scenario and building the result tables.",
            ),
        ),
    ]
}


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[compare_ns3] {msg}", file=sys.stderr, flush=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file in the same folder and a rename,
    keeping the permissions of an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_files(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def run_checked(cmd: Sequence[str], what: str, **kw: Any) -> subprocess.CompletedProcess:
    """Runs a command, raising with the tail of its output if it fails."""
    p = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if p.returncode != 0:
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-30:])
        raise RuntimeError(f"{what} failed (exit status {p.returncode}): {shlex.join(map(str, cmd))}\n{tail}")
    return p


def dir_writable(d: Path) -> bool:
    """True if ``d`` may be written: access granted *and* some write permission bit set (a
    folder marked read-only is respected even when running as root)."""
    try:
        st = d.stat()
    except OSError:
        return False
    return os.access(d, os.W_OK) and bool(st.st_mode & 0o222)


def parse_time_v(text: str) -> Dict[str, float]:
    """The fields of ``/usr/bin/time -v`` output the harness uses."""
    out: Dict[str, float] = {}
    pats = {
        "peak_rss_kb": r"Maximum resident set size \(kbytes\):\s*(\d+)",
        "user_s": r"User time \(seconds\):\s*([\d.]+)",
        "sys_s": r"System time \(seconds\):\s*([\d.]+)",
    }
    for k, pat in pats.items():
        m = re.search(pat, text)
        if m:
            out[k] = float(m.group(1))
    if "peak_rss_kb" not in out:
        raise RuntimeError(f"no 'Maximum resident set size' in /usr/bin/time output:\n{text[-500:]}")
    return out


def timed_process(cmd: Sequence[str], cwd: Path, what: str, env: Optional[Dict[str, str]] = None) -> Tuple[str, float, Dict[str, float]]:
    """Runs ``cmd`` under ``/usr/bin/time -v``; returns (stdout, wall seconds, time fields).
    The wall time is measured here (perf_counter around the child, finer than time's)."""
    with tempfile.TemporaryDirectory(prefix="compare_ns3.") as td:
        tfile = Path(td) / "time.txt"
        full = [TIME_TOOL, "-v", "-o", str(tfile), *cmd]
        t0 = time.perf_counter()
        p = subprocess.run(full, capture_output=True, text=True, cwd=cwd, env=env)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            tail = "\n".join(p.stderr.strip().splitlines()[-30:])
            raise RuntimeError(f"{what} failed (exit status {p.returncode}): {shlex.join(cmd)}\n{tail}")
        return p.stdout, wall, parse_time_v(tfile.read_text())


def last_json_line(stdout: str, what: str) -> Dict[str, Any]:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{what} printed no JSON line:\n{stdout[-500:]}")


def machine_info() -> Dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {
        "cores": os.cpu_count() or 1,
        "cpu": cpu,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load1": load,
    }


def gxx_version() -> str:
    try:
        return subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return "g++ (unknown version)"


# --------------------------------------------------------------------------------------
# ns-3: virtual environment, build, runs
# --------------------------------------------------------------------------------------


def ns3_dir_default() -> Path:
    env = os.environ.get("TPSIM_NS3_DIR")
    return Path(env) if env else REPO.parent / "shared" / "ns3"


def ensure_venv(cache: Path) -> Path:
    """The Python of ``cache/ns3-venv`` with the ns-3 wheel installed (created once)."""
    venv = cache / "ns3-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        log(f"creating {venv}")
        run_checked([sys.executable, "-m", "venv", str(venv)], "creating the ns-3 virtual environment")
    probe = "import importlib.metadata as m\ntry: print(m.version('ns3'))\nexcept m.PackageNotFoundError: print('')"
    have = subprocess.run([str(py), "-c", probe], capture_output=True, text=True).stdout.strip()
    if have != NS3_WHEEL_VERSION:
        log(f"installing {NS3_WHEEL} into {venv} (about 70 MB download, once)")
        run_checked([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", NS3_WHEEL], f"pip install {NS3_WHEEL}")
    return py


def wheel_paths(py: Path) -> Tuple[Path, Path, str]:
    """(include dir, lib dir, ns-3 library version) of the wheel seen by ``py``, found the
    way build.sh finds it."""
    code = (
        "import importlib.util, os\n"
        "s = importlib.util.find_spec('ns3')\n"
        "locs = list(s.submodule_search_locations or [])\n"
        "print(locs[0] if locs else os.path.dirname(s.origin))\n"
    )
    root = Path(run_checked([str(py), "-c", code], "locating the ns-3 wheel").stdout.strip())
    lib = root / "lib64"
    if not lib.is_dir():
        lib = root / "lib"
    ver = None
    for f in sorted(lib.iterdir()):
        m = re.fullmatch(r"libns3\.([0-9.]+)-core\.so", f.name)
        if m:
            ver = m.group(1)
            break
    if ver is None:
        raise RuntimeError(f"no libns3.<version>-core.so in {lib}")
    return root / "include", lib, ver


def build_modules(ns3_dir: Path) -> List[str]:
    """The ns-3 modules build.sh links against (its MODS line)."""
    m = re.search(r'^MODS="([^"]+)"', (ns3_dir / "build.sh").read_text(), re.MULTILINE)
    if not m:
        raise RuntimeError(f"cannot find the MODS=... line in {ns3_dir / 'build.sh'}")
    return m.group(1).split()


def program_sources(ns3_dir: Path, program: str) -> List[Path]:
    return [ns3_dir / f"{program}.cc", ns3_dir / "common.h"]


def ensure_program(ns3_dir: Path, program: str, py: Path, cache: Path) -> Path:
    """Builds ``program`` if it is missing or stale and returns the binary.

    A stamp in the cache records what each binary was built from (sources, wheel, flags); a
    mismatch rebuilds. Only one compiler runs at a time.
    """
    inc, lib, ver = wheel_paths(py)
    cxxflags = os.environ.get("CXXFLAGS", "-O2")
    use_build_sh = dir_writable(ns3_dir) and (not (ns3_dir / "bin").exists() or dir_writable(ns3_dir / "bin"))
    binary = (ns3_dir / "bin" / program) if use_build_sh else (cache / "ns3-build" / "bin" / program)
    where = hashlib.sha256(str(binary).encode()).hexdigest()[:8]
    stamp_path = cache / "ns3-build" / f"{program}-{where}.stamp.json"
    stamp = {
        "sources": sha256_files(program_sources(ns3_dir, program) + [ns3_dir / "build.sh"]),
        "wheel_lib": str(lib),
        "cxxflags": cxxflags,
        "binary": str(binary),
    }
    if binary.exists() and stamp_path.exists():
        try:
            old = json.loads(stamp_path.read_text())
        except ValueError:
            old = {}
        if old == {**stamp, "mtime_ns": binary.stat().st_mtime_ns}:
            return binary
    t0 = time.perf_counter()
    if use_build_sh:
        log(f"building {program} with {ns3_dir / 'build.sh'} (PYTHON={py})")
        env = {**os.environ, "PYTHON": str(py)}
        run_checked([str(ns3_dir / "build.sh"), program], f"build.sh {program}", env=env, cwd=ns3_dir)
    else:
        log(f"{ns3_dir} is not writable: compiling {program} into {binary.parent} with build.sh's g++ command line")
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_name(binary.name + ".tmp")
        libs = [f"-lns3.{ver}-{m}" for m in build_modules(ns3_dir)]
        cmd = ["g++", *cxxflags.split(), "-std=c++20", f"-I{inc}", "-o", str(tmp), str(ns3_dir / f"{program}.cc"),
               f"-L{lib}", *libs, f"-Wl,-rpath,{lib}"]
        run_checked(cmd, f"compiling {program}", cwd=binary.parent)
        os.replace(tmp, binary)
    log(f"built {binary} in {time.perf_counter() - t0:.0f} s")
    if not binary.exists():
        raise RuntimeError(f"the build reported success but {binary} does not exist")
    atomic_write_text(stamp_path, json.dumps({**stamp, "mtime_ns": binary.stat().st_mtime_ns}, indent=1))
    return binary


def ns3_command(binary: Path, args: Sequence[str], seed: int) -> List[str]:
    return [str(binary), *args, f"--seed={seed}", "--run=1"]


def run_ns3(bench: Benchmark, binary: Path, ns3_dir: Path, args: Sequence[str], seed: int, cache: Path, fresh: bool) -> Dict[str, Any]:
    """One ns-3 run (from the result cache unless ``fresh``); returns the record of one side
    and seed (see :func:`side_record`)."""
    key_blob = json.dumps(
        {
            "scenario": bench.key,
            "program": bench.ns3_program,
            "args": list(args),
            "seed": seed,
            "run": 1,
            "sources": sha256_files(program_sources(ns3_dir, bench.ns3_program)),
            "wheel": NS3_WHEEL_VERSION,
            "cxxflags": os.environ.get("CXXFLAGS", "-O2"),
        },
        sort_keys=True,
    )
    key = hashlib.sha256(key_blob.encode()).hexdigest()[:16]
    path = cache / "ns3-results" / f"{bench.key}-{bench.ns3_program}-seed{seed}-{key}.json"
    if path.exists() and not fresh:
        stored = json.loads(path.read_text())
        stored["cached"] = True
        return stored
    cmd = ns3_command(binary, args, seed)
    log(f"ns-3 {bench.key} seed {seed}: {shlex.join([bench.ns3_program, *cmd[1:]])}")
    load = machine_info()["load1"]
    stdout, wall, tv = timed_process(cmd, cwd=binary.parent, what=f"ns-3 {bench.ns3_program}")
    out = last_json_line(stdout, bench.ns3_program)
    rec = {
        "side": "ns-3",
        "seed": seed,
        "command": shlex.join([bench.ns3_program, *cmd[1:]]),
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load1_before": load,
        "process_wall_s": wall,
        **tv,
        "output": out,
    }
    atomic_write_text(path, json.dumps(rec, indent=1))
    rec["cached"] = False
    return rec


# --------------------------------------------------------------------------------------
# tpsim
# --------------------------------------------------------------------------------------


def tpsim_worker(argv: Sequence[str]) -> int:
    """``compare_ns3.py tpsim-worker SCENARIO SEED [KEY=VALUE ...]``: runs one replication
    with ``tpsim.run`` in this process and prints one JSON line."""
    scenario, seed, *sets = argv
    t0 = time.perf_counter()
    import tpsim

    t1 = time.perf_counter()
    res = tpsim.run(scenario, seed=int(seed), runs=1, jobs=1, set=list(sets) or None)
    t2 = time.perf_counter()
    out = {
        "tpsim_version": tpsim.__version__,
        "engine_seconds": res.engine_seconds[0],
        "import_s": t1 - t0,
        "run_call_s": t2 - t1,
        "flows": res.flows.to_dicts(),
        "network": res.network.to_dicts()[0],
    }
    print(json.dumps(out))
    return 0


def run_tpsim(bench: Benchmark, sets: Sequence[str], seed: int) -> Dict[str, Any]:
    scenario = REPO / bench.tpsim_scenario
    cmd = [sys.executable, str(Path(__file__).resolve()), "tpsim-worker", str(scenario), str(seed), *sets]
    log(f"tpsim {bench.key} seed {seed}")
    load = machine_info()["load1"]
    stdout, wall, tv = timed_process(cmd, cwd=REPO, what="tpsim")
    out = last_json_line(stdout, "tpsim worker")
    shown = ["tpsim.run(" + repr(bench.tpsim_scenario), f"seed={seed}"] + ([f"set={list(sets)!r}"] if sets else [])
    return {
        "side": "tpsim",
        "seed": seed,
        "command": ", ".join(shown) + ")",
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load1_before": load,
        "process_wall_s": wall,
        **tv,
        "output": out,
        "cached": False,
    }


# --------------------------------------------------------------------------------------
# Measures from one run (both sides in the same shape)
# --------------------------------------------------------------------------------------


def _weighted_mean(pairs: Sequence[Tuple[Optional[float], float]]) -> Optional[float]:
    num = sum(v * w for v, w in pairs if v is not None and w > 0)
    den = sum(w for v, w in pairs if v is not None and w > 0)
    return num / den if den > 0 else None


def tpsim_measures(rec: Dict[str, Any]) -> Dict[str, Any]:
    """Per-run measures of a tpsim record; flow metrics summed over every flow direction."""
    out = rec["output"]
    flows, net = out["flows"], out["network"]
    tx = sum(f["tx_packets"] for f in flows)
    rx = sum(f["rx_packets"] for f in flows)
    return {
        "loop_s": out["engine_seconds"],
        "process_s": rec["process_wall_s"],
        "cpu_s": rec.get("user_s", 0.0) + rec.get("sys_s", 0.0),
        "rss_mb": rec["peak_rss_kb"] / 1024.0,
        "events": net["events"],
        "tx_packets": tx,
        "rx_packets": rx,
        "pdr": rx / tx if tx else None,
        "app_rx_bytes": sum(f["rx_bytes"] for f in flows),
        "delay_mean_s": _weighted_mean([(f["delay_mean_s"], f["rx_packets"]) for f in flows]),
        "jitter_s": _weighted_mean([(f["jitter_ipdv_s"], f["rx_packets"] - 1) for f in flows]),
        "goodput_kbps": sum(f["goodput_kbps"] or 0.0 for f in flows),
        "ip_thr_kbps": None,
        "mac_frames": net.get("mac_frames"),
    }


def ns3_measures(rec: Dict[str, Any]) -> Dict[str, Any]:
    """Per-run measures of an ns-3 record (the JSON line of common.h's programs)."""
    out = rec["output"]
    fm = out.get("flowmon")
    if fm is None:
        raise RuntimeError("the ns-3 program ran without FlowMonitor (--instrument=0); the comparison needs it")
    app_rx = out.get("app_rx_bytes")
    thr = fm.get("sum_flow_thr_kbps")
    goodput = thr * app_rx / fm["rx_bytes_ip"] if (app_rx is not None and thr is not None and fm.get("rx_bytes_ip")) else None
    return {
        "loop_s": out["wall_run_s"],
        "process_s": rec["process_wall_s"],
        "cpu_s": rec.get("user_s", 0.0) + rec.get("sys_s", 0.0),
        "rss_mb": rec["peak_rss_kb"] / 1024.0,
        "events": out["events"],
        "tx_packets": fm["tx_pkts"],
        "rx_packets": fm["rx_pkts"],
        "pdr": fm["pdr"] if fm["tx_pkts"] else None,
        "app_rx_bytes": app_rx,
        "delay_mean_s": fm["mean_delay_s"] if fm["rx_pkts"] else None,
        "jitter_s": fm["mean_jitter_s"] if fm["rx_pkts"] > 1 else None,
        "goodput_kbps": goodput,
        "ip_thr_kbps": thr,
        "mac_frames": out.get("mac_frames_tx"),
    }


def add_derived(m: Dict[str, Any], sim_time_s: float) -> Dict[str, Any]:
    loop = m["loop_s"]
    m = dict(m)
    m["events_per_s"] = m["events"] / loop if loop > 0 else None
    m["sim_per_wall"] = sim_time_s / loop if loop > 0 else None
    m["us_per_delivered"] = loop / m["rx_packets"] * 1e6 if m["rx_packets"] else None
    m["us_per_mac_frame"] = loop / m["mac_frames"] * 1e6 if m.get("mac_frames") else None
    return m


# --------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------


def fmt_sig(x: Optional[float], n: int = 3) -> str:
    """``x`` rounded to ``n`` significant digits, never in exponent notation, with thousands
    separators (``1,710``, ``0.0119``, ``236,000``)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = n - 1 - mag
    r = round(x, decimals)
    return f"{r:,.{max(decimals, 0)}f}"


def fmt_int(x: Optional[float]) -> str:
    return "—" if x is None else f"{int(round(x)):,}"


def fmt_fixed(digits: int) -> Callable[[Optional[float]], str]:
    return lambda x: "—" if x is None else f"{x:.{digits}f}"


def fmt_rate(x: Optional[float]) -> str:
    """Events per second: ``25.1 M``, ``236 k``."""
    if x is None:
        return "—"
    if abs(x) >= 1e6:
        return f"{fmt_sig(x / 1e6)} M"
    if abs(x) >= 1e3:
        return f"{fmt_sig(x / 1e3)} k"
    return fmt_sig(x)


def spread(values: Sequence[Optional[float]], fmt: Callable[[Optional[float]], str], always: bool = False) -> str:
    """``median (min–max)`` of the values over seeds; just the value when every seed gave
    the same one, unless ``always``."""
    vals = [v for v in values if v is not None]
    if not vals:
        return "—"
    med, lo, hi = statistics.median(vals), min(vals), max(vals)
    if (lo == hi or fmt(lo) == fmt(hi)) and not always:
        return fmt(med)
    return f"{fmt(med)} ({fmt(lo)}–{fmt(hi)})"


def ratio(a: Sequence[Optional[float]], b: Sequence[Optional[float]]) -> Optional[float]:
    va = [v for v in a if v is not None]
    vb = [v for v in b if v is not None]
    if not va or not vb or statistics.median(vb) == 0:
        return None
    return statistics.median(va) / statistics.median(vb)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# Rows of the performance table: (label, measure key, format, always show the spread).
PERF_ROWS: List[Tuple[str, str, Callable[[Optional[float]], str], bool]] = [
    ("event-loop wall time, s (tpsim `engine_seconds`, ns-3 `Simulator::Run`)", "loop_s", fmt_sig, True),
    ("process wall time, s", "process_s", fmt_sig, True),
    ("process CPU time (user + sys), s", "cpu_s", fmt_sig, True),
    ("peak RSS, MB", "rss_mb", fmt_sig, True),
    ("events executed", "events", fmt_int, False),
    ("events/s in the event loop", "events_per_s", fmt_rate, True),
    ("simulated s per event-loop wall s", "sim_per_wall", fmt_sig, True),
    ("event-loop time per delivered packet, µs", "us_per_delivered", fmt_sig, True),
]
MAC_ROW = ("event-loop time per MAC frame, µs", "us_per_mac_frame", fmt_sig, True)

# Rows of the metrics table: (label, measure key, format, definition tpsim / ns-3).
METRIC_ROWS: List[Tuple[str, str, Callable[[Optional[float]], str], str]] = [
    ("packets sent", "tx_packets", fmt_int, "messages handed to the transport / FlowMonitor IP packets sent"),
    ("packets delivered", "rx_packets", fmt_int, "messages delivered / FlowMonitor IP packets received"),
    ("PDR", "pdr", fmt_fixed(6), "delivered / sent"),
    ("bytes delivered to the applications", "app_rx_bytes", fmt_int, "Σ `rx_bytes` / Σ PacketSink bytes"),
    ("mean one-way delay, ms", "delay_mean_ms", fmt_fixed(4), "send → delivery / FlowMonitor IP → IP"),
    ("mean jitter (IPDV), ms", "jitter_ms", fmt_fixed(4), "mean \\|D_i − D_(i−1)\\| / FlowMonitor jitter (same definition)"),
    ("goodput, kbit/s (sum of directions)", "goodput_kbps", fmt_fixed(3), "payload bytes, start → stop / FlowMonitor throughput × app bytes ÷ IP bytes"),
    ("FlowMonitor throughput, kbit/s (IP bytes)", "ip_thr_kbps", fmt_fixed(3), "— / Σ per-flow IP bytes ÷ (last receive − first send)"),
]
MAC_METRIC = ("MAC frames transmitted", "mac_frames", fmt_int, "`mac_frames` / PHY TxBegin count")


def _metric_values(ms: Sequence[Dict[str, Any]], key: str) -> List[Optional[float]]:
    if key == "delay_mean_ms":
        return [None if m["delay_mean_s"] is None else m["delay_mean_s"] * 1e3 for m in ms]
    if key == "jitter_ms":
        return [None if m["jitter_s"] is None else m["jitter_s"] * 1e3 for m in ms]
    return [m.get(key) for m in ms]


def render_scenario(bench: Benchmark, runs: Dict[str, List[Dict[str, Any]]], ctx: Dict[str, Any]) -> str:
    """The markdown block of one scenario. ``runs`` maps "tpsim" and "ns-3" to their
    per-seed records (as from :func:`run_tpsim` / :func:`run_ns3`)."""
    sim_time = ctx["sim_time_s"]
    tp = [add_derived(tpsim_measures(r), sim_time) for r in runs["tpsim"]]
    ns = [add_derived(ns3_measures(r), sim_time) for r in runs["ns-3"]]
    mach = ctx["machine"]
    seeds = sorted({r["seed"] for r in runs["tpsim"]} | {r["seed"] for r in runs["ns-3"]})
    cached = [r for r in runs["ns-3"] if r.get("cached")]
    ns_dates = sorted({r["measured_at"][:10] for r in runs["ns-3"]})
    lines = [
        BLOCK.format(key=bench.key),
        f"### `{bench.key}`: {bench.title}, {fmt_sig(sim_time)} s simulated",
        "",
        f"Measured {ctx['date']} on {mach['cores']} cores ({mach['cpu']}), {len(seeds)} seed(s) per side "
        f"({', '.join(map(str, seeds))}), one process at a time; 1-minute load average at the start "
        f"{mach['load1']:.2f}."
        + (f" ns-3 results from the cache for {len(cached)} of {len(runs['ns-3'])} seeds (measured {', '.join(ns_dates)})." if cached else ""),
        "",
        f"* tpsim: `{runs['tpsim'][0]['command']}`, scenario `{bench.tpsim_scenario}`.",
        f"* ns-3: `{runs['ns-3'][0]['command']}` (seed S: `--seed=S --run=1`).",
        "",
    ]
    rows = []
    perf_rows = PERF_ROWS + ([MAC_ROW] if bench.mac_frames else [])
    for label, key, fmt, always in perf_rows:
        a = [m[key] for m in tp]
        b = [m[key] for m in ns]
        r = ratio(a, b)
        rows.append([label, spread(a, fmt, always), spread(b, fmt, always), fmt_sig(r) if r is not None else "—"])
    lines.append(table(["median (min–max) over seeds", "tpsim", "ns-3", "tpsim / ns-3"], rows))
    lines.append("")
    mrows, flagged = [], []
    metric_rows = METRIC_ROWS + ([MAC_METRIC] if bench.mac_frames else [])
    for label, key, fmt, definition in metric_rows:
        a = _metric_values(tp, key)
        b = _metric_values(ns, key)
        mrows.append([label, spread(a, fmt), spread(b, fmt), definition])
        va = [v for v in a if v is not None]
        vb = [v for v in b if v is not None]
        if va and vb:
            ma, mb = statistics.median(va), statistics.median(vb)
            rel = abs(ma - mb) / max(abs(ma), abs(mb)) if max(abs(ma), abs(mb)) > 0 else 0.0
            if rel > bench.tolerance:
                flagged.append(f"{label} ({fmt(ma)} vs {fmt(mb)}, {rel:.2%})")
    lines.append(table(["headline metric", "tpsim", "ns-3", "definition (tpsim / ns-3)"], mrows))
    lines.append("")
    if flagged:
        lines.append(f"**Differences above {bench.tolerance:.1%}:** " + "; ".join(flagged) + ".")
    else:
        lines.append(f"Every headline metric measured on both sides agrees within {bench.tolerance:.1%}.")
    r_loop = ratio([m["loop_s"] for m in tp], [m["loop_s"] for m in ns])
    r_pkt = ratio([m["us_per_delivered"] for m in tp], [m["us_per_delivered"] for m in ns])
    r_proc = ratio([m["process_s"] for m in tp], [m["process_s"] for m in ns])
    if r_loop and r_pkt and r_proc:
        lines.append(
            f"Medians: tpsim's event loop is {fmt_sig(1 / r_loop)}× as fast as ns-3's `Simulator::Run` "
            f"({fmt_sig(1 / r_pkt)}× per delivered packet); a whole tpsim process takes "
            f"{fmt_sig(r_proc)}× the time of a whole ns-3 process."
        )
    lines.append("")
    for note in bench.notes:
        lines += [note, ""]
    return "\n".join(lines).rstrip() + "\n"


def render_header(ctx: Dict[str, Any]) -> str:
    mach = ctx["machine"]
    return "\n".join(
        [
            f"Written by `{ctx['command']}` on {ctx['date']} (the run took {ctx['elapsed_s']:.0f} s). "
            "Do not edit between the markers: the next run replaces it.",
            "",
            f"* Machine: {mach['cores']} cores, {mach['cpu']}, {mach['os']}, Python {mach['python']}. "
            "It may be shared with other work (each scenario gives the load average at its start); "
            "compare medians, and expect ±10–15 % between repeats.",
            f"* tpsim {ctx['tpsim_version']} as installed in that Python, through `tpsim.run` in a fresh "
            "process per seed (`python benches/compare_ns3.py tpsim-worker ...`). Event-loop time is "
            "`Results.engine_seconds`; metrics come from the `flows` and `network` tables.",
            f"* ns-3 from the `{NS3_WHEEL}` wheel (`{ctx['ns3_libs']}`, built with NS_ASSERT on and "
            f"NS_LOG off), programs of `shared/ns3` compiled with {ctx['gxx']} `{ctx['cxxflags']} -std=c++20`; "
            "FlowMonitor and the trace counters on (they cost about 7 % of `Simulator::Run`, per the "
            "ns-3 README). Event-loop time is `wall_run_s`; metrics from FlowMonitor.",
            f"* Both sides: one process per seed under `{TIME_TOOL} -v` (peak RSS), wall time measured "
            "around the process; runs one at a time.",
            "",
        ]
    )


def replace_section(text: str, body: str) -> str:
    """``text`` with the part between the markers replaced by ``body``; when the markers are
    absent, a new section with them is appended at the end. Nothing outside the markers
    changes."""
    b, e = text.find(BEGIN), text.find(END)
    block = f"{BEGIN}\n{body.strip()}\n{END}"
    if b != -1 and e != -1 and e > b:
        return text[:b] + block + text[e + len(END):]
    if b != -1 or e != -1:
        raise ValueError(f"docs marker mismatch: need both {BEGIN} and {END}, in that order")
    if not text:
        sep = ""
    elif text.endswith("\n\n"):
        sep = ""
    elif text.endswith("\n"):
        sep = "\n"
    else:
        sep = "\n\n"
    return f"{text}{sep}{SECTION_TITLE}\n\n{block}\n"


def current_section(text: str) -> str:
    b, e = text.find(BEGIN), text.find(END)
    return text[b + len(BEGIN):e] if (b != -1 and e != -1 and e > b) else ""


def split_blocks(section: str) -> Dict[str, str]:
    """Scenario key -> its block (from its marker line to the next marker or the end)."""
    ms = list(BLOCK_RE.finditer(section))
    out = {}
    for i, m in enumerate(ms):
        stop = ms[i + 1].start() if i + 1 < len(ms) else len(section)
        out[m.group(1)] = section[m.start():stop].strip() + "\n"
    return out


def compose_section(header: str, new_blocks: Dict[str, str], old_section: str, order: Sequence[str]) -> str:
    """The section body: the header, then one block per scenario in ``order``; a scenario not
    re-run keeps its previous block."""
    old = split_blocks(old_section)
    blocks = []
    for key in order:
        if key in new_blocks:
            blocks.append(new_blocks[key].strip())
        elif key in old:
            blocks.append(old[key].strip())
    for key, blk in old.items():  # blocks of scenarios no longer in the list: keep them last
        if key not in order and key not in new_blocks:
            blocks.append(blk.strip())
    return header.strip() + "\n\n" + "\n\n".join(blocks) + "\n"


def write_doc(path: Path, header: str, new_blocks: Dict[str, str], order: Sequence[str]) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    body = compose_section(header, new_blocks, current_section(text), order)
    atomic_write_text(path, replace_section(text, body))


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python benches/compare_ns3.py",
        description="Run tpsim and ns-3 on the same scenarios and write the comparison into docs/benchmarks.md.",
    )
    ap.add_argument("--scenarios", default=",".join(BENCHMARKS),
                    help=f"comma-separated scenario keys (default: all): {', '.join(BENCHMARKS)}")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per side, 1..N (default 5; 1 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="1 seed, short simulated time; prints the section instead of writing the document unless --doc is given")
    ap.add_argument("--ns3-dir", type=Path, default=None,
                    help="the shared ns-3 programs (default $TPSIM_NS3_DIR or ../shared/ns3 beside the repository)")
    ap.add_argument("--doc", default=None,
                    help="markdown file to update (default docs/benchmarks.md; '-' prints the section)")
    ap.add_argument("--cache-dir", type=Path, default=CACHE, help="venv, builds and ns-3 results (default benches/.cache)")
    ap.add_argument("--fresh-ns3", action="store_true", help="re-run ns-3 even when a cached result exists")
    a = ap.parse_args(list(argv))
    keys = [k.strip() for k in a.scenarios.split(",") if k.strip()]
    unknown = [k for k in keys if k not in BENCHMARKS]
    if unknown or not keys:
        ap.error(f"unknown scenario(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(BENCHMARKS)}")
    a.keys = keys
    if a.seeds is None:
        a.seeds = 1 if a.quick else 5
    if a.seeds < 1:
        ap.error("--seeds must be >= 1")
    return a


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "tpsim-worker":
        return tpsim_worker(argv[1:])
    a = parse_args(argv)
    t_start = time.perf_counter()
    ns3_dir = (a.ns3_dir or ns3_dir_default()).resolve()
    if not (ns3_dir / "build.sh").is_file():
        log(f"no ns-3 programs at {ns3_dir} (build.sh missing); pass --ns3-dir or set TPSIM_NS3_DIR")
        return 2
    if not os.access(TIME_TOOL, os.X_OK):
        log(f"{TIME_TOOL} is missing (peak RSS needs GNU time): apt-get install -y time")
        return 2
    cache = a.cache_dir.resolve()
    machine = machine_info()
    py = ensure_venv(cache)
    binaries = {}
    for key in a.keys:  # one compiler at a time
        prog = BENCHMARKS[key].ns3_program
        if prog not in binaries:
            binaries[prog] = ensure_program(ns3_dir, prog, py, cache)
    _, _, ns3_lib_version = wheel_paths(py)
    seeds = list(range(1, a.seeds + 1))
    blocks: Dict[str, str] = {}
    raw: Dict[str, Any] = {}
    tpsim_version = "?"
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for key in a.keys:
        b = BENCHMARKS[key]
        ns_args = b.quick_ns3_args if a.quick else b.ns3_args
        tp_sets = b.quick_tpsim_set if a.quick else ()
        sim_time = b.quick_sim_time_s if a.quick else b.sim_time_s
        runs: Dict[str, List[Dict[str, Any]]] = {"ns-3": [], "tpsim": []}
        for s in seeds:
            runs["ns-3"].append(run_ns3(b, binaries[b.ns3_program], ns3_dir, ns_args, s, cache, a.fresh_ns3))
        for s in seeds:
            runs["tpsim"].append(run_tpsim(b, tp_sets, s))
        tpsim_version = runs["tpsim"][0]["output"]["tpsim_version"]
        ctx = {"sim_time_s": sim_time, "machine": machine, "date": date}
        blocks[key] = render_scenario(b, runs, ctx)
        raw[key] = runs
    elapsed = time.perf_counter() - t_start
    command = "python benches/compare_ns3.py " + shlex.join(argv) if argv else "python benches/compare_ns3.py"
    header = render_header({
        "command": command.strip(), "date": date, "elapsed_s": elapsed, "machine": machine,
        "tpsim_version": tpsim_version, "ns3_libs": f"libns3.{ns3_lib_version}-*", "gxx": gxx_version(),
        "cxxflags": os.environ.get("CXXFLAGS", "-O2"),
    })
    atomic_write_text(cache / "compare-ns3-last.json", json.dumps({"date": date, "machine": machine, "runs": raw}, indent=1))
    doc = a.doc if a.doc is not None else ("-" if a.quick else str(DOC))
    if doc == "-":
        print(compose_section(header, blocks, "", a.keys))
    else:
        write_doc(Path(doc), header, blocks, list(BENCHMARKS))
        log(f"wrote {doc}")
    log(f"done in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
