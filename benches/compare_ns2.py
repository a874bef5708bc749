#!/usr/bin/env python3
"""tpsim and ns-2.35 side by side on studies A, C and D, paired seed by seed.

    python benches/compare_ns2.py [--studies A,C,D] [--points GLOB,...] [--seeds 1-10]
                                  [--quick] [--ns2-only | --ns2-cached-only] [--noise-floor] [--doc PATH|-]

The ns-2 side is the shared reference scripts ``../shared/ns2/study_{a,c,d}.tcl`` (beside the
repository root; ``--ns2-dir`` or ``$TPSIM_NS2_DIR`` override), run from that folder as they
are: ``ns study_x.tcl key=value ... seed=S``. Their ``FLOW``/``TOTAL`` result lines (defined in
the folder's ``tracestats.py``) are parsed. The tpsim side is a scenario the harness writes
for each point and seed so that it mirrors the script (layout, ns-2 radio with RTS/CTS for
every unicast, ``[arp] preset = "ns2"``, AODV ``preset = "ns2"``, ``sizes = "ns2"``, queue,
energy, the same flows with the same starts and message counts, study C's movement file and
background flows), run with ``tpsim.run`` in a child process (``compare_ns2.py tpsim-worker``).

What it does, in order, one simulation at a time, seed-major (seed 1 of every point, then
seed 2, ...):

1. For every point and seed: the ns-2 script traced (metrics) and again with ``trace=0``
   (event-loop wall time without the trace), study C's background flows re-derived from
   ns-2's RNG by ``benches/ns2/study_c_bg.tcl`` and checked against the traced run's FLOW
   lines. Raw outputs are cached in ``benches/.cache/ns2-results/`` keyed by script,
   arguments, seed and the SHA-256 of the script sources (and of study C's movement file).
2. tpsim on the mirrored scenario (written to ``benches/.cache/tpsim-scenarios/ns2-*.toml``),
   fresh every time.
3. Per point and headline metric: both sides' medians over seeds, the paired differences
   tpsim − ns-2 per seed, their median and the distribution-free order-statistic interval
   of that median (coverage ≥ 95 % from 6 seeds; with fewer seeds [min, max] and its true
   coverage, 93.8 % for 5), and whether the interval includes zero or lies within ±10 % of
   ns-2's median. tpsim's side is computed with ns-2's (tracestats.py's) definitions from
   tpsim's tables (see :data:`METRICS`).
4. With ``--noise-floor`` (off by default: it doubles the traced ns-2 runs): ns-2 against
   itself. For every point and seed S one more traced ns-2 run, the same script and
   arguments with ``seed=S+1000`` (study C also ``scen=`` the movement file of seed S, so
   only ns-2's RNG changes: backoff, AODV jitter, and study C's background pairs and
   starts), cached like the others (kind ``noise``). Its measures are ns-2's, and per
   metric the paired differences ns-2(S+1000) − ns-2(S) go through the same criterion as
   tpsim's; the report puts that noise floor beside tpsim's comparison.
5. Speed: event-loop time per MAC frame (ns-2: ``wall_run_s`` of ``$ns run`` with
   ``trace=0`` / the traced run's ``mac_frames``; tpsim: ``engine_seconds`` / ``mac_frames``;
   study D: per packet put on the link), medians over seeds.

The report goes to ``benches/.cache/compare_ns2.md`` (``--doc PATH`` another file, between
``<!-- compare_ns2:begin/end -->`` markers, nothing else in it changes; ``--doc -`` prints).
Every point's latest result is kept in ``benches/.cache/compare-ns2-points.json``, so a run
of some points keeps the others in the report. docs/benchmarks.md is written by hand from it.

TCP: ns-2's one-way agents count packets (``Agent/TCP/Newreno`` → ``Agent/TCPSink``,
``window_`` 20, ``windowInit_`` 2, no delayed ACK, every write one packet of ``packetSize_``).
tpsim mirrors them with its ns-2 TCP preset (``tcp = { preset = "ns2", packet_size, window,
initial_window }``) when the installed tpsim accepts it (:data:`TCP_MODEL` = ``"auto"``
probes it; ``--tcp ns2|modern`` forces one); otherwise TCP points run tpsim's modern
NewReno set as close as it goes (MSS = packet size, initial window 2, ACK every segment,
window 20 packets, minimum RTO 0.2 s, first SYN timeout 3 s) and are labelled so.

TFRC (study C): ``Agent/TFRC`` (``SndrType_ 1``) → ``Agent/TFRCSink``, mirrored by tpsim's
``tfrc = { profile = "ns2" }``. ns-2.35's AODV ignores MAC failures of TFRC packets (the ns-2
README's quirk 2): tpsim's side of a TFRC point switches the same artefact on
(``ns2_quirks = ["aodv-data-packet-list"]``), and every TFRC point also has a ``+llfix`` variant
whose ns-2 side runs with ``llfix=1`` (TFRC's packets relabelled so that AODV handles them) and
whose tpsim side runs without the quirk.

SCTP: ``Agent/SCTP`` as it is stalls an application-limited sender (the README's quirk 1):
tpsim's side of every SCTP point switches the same artefact on (``ns2_quirks = ["sctp-stall"]``).

Standard library only; the tpsim side runs in a child process of this same Python.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import fnmatch
import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "benches" / ".cache"
REPORT = CACHE / "compare_ns2.md"
HELPERS = REPO / "benches" / "ns2"
BG_SCRIPT = HELPERS / "study_c_bg.tcl"

#: Which TCP tpsim runs for ns-2's TCP points: "auto" (the ns-2 preset when the installed
#: tpsim accepts it, else modern), "ns2" or "modern". ``--tcp`` overrides it.
TCP_MODEL = "auto"

BEGIN = "<!-- compare_ns2:begin -->"
END = "<!-- compare_ns2:end -->"
SECTION_TITLE = "## tpsim and ns-2.35 side by side (report)"

STUDIES = ("A", "C", "D")
#: ``--noise-floor``: the second ns-2 run of seed S runs with seed S + NOISE_SEED_OFFSET (study C on
#: the movement file of seed S).
NOISE_SEED_OFFSET = 1000
#: Default seeds: every point of A, C and D with 10 seeds takes about 40 minutes on a shared
#: 2-core VM with nothing cached (ns-2 traced + untraced, tpsim), and 10 pairs give the
#: median's order-statistic interval 97.9 % coverage (5 pairs: at most 93.8 %). Study C has
#: movement files for seeds 1-10.
DEFAULT_SEEDS = "1-10"
A_INTERVALS = (1, 2, 5, 10, 20)
C_SPEEDS = (5, 10, 20)
C_BGS = (0, 8)
TRANSPORTS = ("udp", "tcp", "sctp")
#: Study C also runs TFRC (tpsim ``tfrc = { profile = "ns2" }``), once against ns-2 as it is and
#: once against ``llfix=1`` (key suffix ``+llfix``), where ns-2's AODV handles TFRC's MAC failures.
C_TRANSPORTS = TRANSPORTS + ("tfrc",)

#: ns-2 prints these to stdout, sometimes glued to a result line (C stdio and Tcl buffers
#: interleave); they are removed before parsing.
CHATTER = [
    re.compile(r"INITIALIZE THE LIST xListHead"),
    re.compile(r"SORTING LISTS \.\.\.DONE!"),
    re.compile(r"num_nodes is set \d+"),
    re.compile(r"channel\.cc:sendUp - Calc highestAntennaZ_ and distCST_"),
    re.compile(r"highestAntennaZ_ = [-\d.e+]+,\s*distCST_ = [-\d.e+]+"),
]


# --------------------------------------------------------------------------------------
# Points
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One study point: the ns-2 script's arguments (without ``seed``) and what tpsim mirrors."""

    key: str
    study: str  # "A" | "C" | "D"
    transport: str  # ns-2's name: "udp" | "tcp" | "sctp", "dccp2", "dccp3" (study D) | "tfrc" (C, D)
    sizes: str = "msg"  # ns-2 sizes= (study D's TCP: "msg" or "default")
    interval: float = 0.0  # study A
    speed: int = 0  # study C
    bg: int = 0  # study C
    stop: Optional[float] = None  # None: the script's default
    #: tpsim side with ``[arp] preset = "ns2"`` (ns-2 resolves every unicast next hop with its
    #: ARPTable); False only for the diagnostic variant ``--no-arp`` (key suffix ``+noarp``).
    arp: bool = True
    #: ns-2 side with ``llfix=1`` (study C over TFRC, key suffix ``+llfix``): ns-2's AODV then
    #: reacts to MAC failures of TFRC packets (its README, quirk 2); tpsim's side runs without
    #: the quirk (the plain TFRC points run with it).
    llfix: bool = False

    @property
    def script(self) -> str:
        return f"study_{self.study.lower()}.tcl"

    def ns2_args(self) -> List[str]:
        a = [f"transport={self.transport}"]
        if self.study == "A":
            a.insert(0, f"interval={self.interval:g}")
        elif self.study == "C":
            a = [f"speed={self.speed}", f"transport={self.transport}", f"bg={self.bg}"]
            if self.llfix:
                a.append("llfix=1")
        if self.sizes != "msg":
            a.append(f"sizes={self.sizes}")
        if self.stop is not None:
            a.append(f"stop={self.stop:g}")
        return a

    @property
    def end_stop(self) -> float:
        return self.stop if self.stop is not None else {"A": 100.0, "C": 500.0, "D": 10.0}[self.study]

    def title(self) -> str:
        t = self.transport.upper()
        if self.study == "D":
            s = f"study D, wired 256 kbit/s 50 ms, two-way 128 B / 20 ms over {t}"
            return s + (f", sizes={self.sizes}" if self.transport == "tcp" else "")
        v = "" if self.arp else " (diagnostic: tpsim without ARP)"
        if self.study == "A":
            return f"study A, 48 sensors → sink, 256 B every {self.interval:g} s over {t}{v}"
        fix = ", ns-2 with llfix=1" if self.llfix else ""
        return f"study C, 50 nodes at {self.speed} m/s, CBR 0→49 over {t}, {self.bg} background flows{fix}{v}"


def all_points() -> List[Point]:
    pts = [Point("D-udp", "D", "udp"), Point("D-tcp-msg", "D", "tcp", "msg"),
           Point("D-tcp-default", "D", "tcp", "default"), Point("D-sctp", "D", "sctp"),
           Point("D-tfrc", "D", "tfrc"), Point("D-dccp2", "D", "dccp2"), Point("D-dccp3", "D", "dccp3")]
    for tr in TRANSPORTS:
        for i in A_INTERVALS:
            pts.append(Point(f"A-{tr}-I{i}", "A", tr, interval=float(i)))
    for tr in C_TRANSPORTS:
        for bg in C_BGS:
            for v in C_SPEEDS:
                pts.append(Point(f"C-{tr}-v{v}-bg{bg}", "C", tr, speed=v, bg=bg))
    for bg in C_BGS:
        for v in C_SPEEDS:
            pts.append(Point(f"C-tfrc-v{v}-bg{bg}+llfix", "C", "tfrc", speed=v, bg=bg, llfix=True))
    return pts


POINTS: Dict[str, Point] = {p.key: p for p in all_points()}
#: ``--quick``: one point per study, short simulated time (study D is short already).
QUICK = {"D": Point("D-udp", "D", "udp"), "A": Point("A-udp-I5", "A", "udp", interval=5.0, stop=20.0),
         "C": Point("C-udp-v10-bg0", "C", "udp", speed=10, bg=0, stop=60.0)}


def select_points(studies: Sequence[str], patterns: Optional[Sequence[str]], quick: bool) -> List[Point]:
    """The points of ``studies`` whose key matches one of ``patterns`` (globs; all if none).
    ``quick`` without patterns: one short point per study; with patterns: the matching points,
    shortened as the quick point of their study is."""
    if quick and not patterns:
        return [QUICK[s] for s in STUDIES if s in studies]
    out = []
    for p in POINTS.values():
        if p.study in studies and (not patterns or any(fnmatch.fnmatchcase(p.key, g) for g in patterns)):
            if quick and QUICK[p.study].stop is not None:
                p = dataclasses.replace(p, stop=QUICK[p.study].stop)
            out.append(p)
    return out


def without_arp(p: Point) -> Point:
    """The diagnostic variant of ``p`` whose tpsim side has no ARP (the ns-2 side is the same)."""
    return dataclasses.replace(p, key=p.key + "+noarp", arp=False)


def parse_seeds(text: str) -> List[int]:
    """``"1-5"``, ``"3"``, ``"1,3,7-9"`` -> sorted distinct seeds (each ≥ 1)."""
    seeds = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(f"bad seed list {text!r} (expected e.g. 1-5 or 1,3,7-9)")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if a < 1 or b < a:
            raise ValueError(f"bad seed range {part!r}")
        seeds.update(range(a, b + 1))
    if not seeds:
        raise ValueError("no seeds")
    return sorted(seeds)


# --------------------------------------------------------------------------------------
# ns-2: runs, parsing, cache
# --------------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[compare_ns2] {msg}", file=sys.stderr, flush=True)


def ns2_dir_default() -> Path:
    env = os.environ.get("TPSIM_NS2_DIR")
    return Path(env) if env else REPO.parent / "shared" / "ns2"


def _num(v: str) -> Any:
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    try:
        return float(v)
    except ValueError:
        return v


def strip_chatter(text: str) -> str:
    for pat in CHATTER:
        text = pat.sub("", text)
    return text


def parse_kv_line(line: str) -> Dict[str, Any]:
    """``key=value`` words of one result line (numbers converted)."""
    out: Dict[str, Any] = {}
    for w in line.split():
        if "=" in w:
            k, v = w.split("=", 1)
            out[k] = _num(v)
    return out


def parse_ns2_output(stdout: str) -> Dict[str, Any]:
    """The result lines of one ns-2 run: ``{"flows": [FLOW dicts], "total": TOTAL dict or
    None, "bg": [BG dicts]}``. ns-2's chatter is removed first, even when glued to a line."""
    flows, bg, total = [], [], None
    for raw in strip_chatter(stdout).splitlines():
        m = re.search(r"\b(FLOW|TOTAL|BG) ", raw)
        if not m:
            continue
        d = parse_kv_line(raw[m.end():])
        if m.group(1) == "FLOW":
            flows.append(d)
        elif m.group(1) == "BG":
            bg.append(d)
        else:
            total = d
    return {"flows": flows, "total": total, "bg": bg}


def sha256_files(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def scen_file(ns2_dir: Path, speed: int, seed: int) -> Path:
    """The movement file study_c.tcl picks for (speed, seed) when no ``scen=`` is given."""
    return ns2_dir / "scen" / f"rwp-n50-1000x1000-v{speed}-p0-t505-s{seed}.tcl"


def ns2_sources(ns2_dir: Path, point: Point, seed: int, kind: str) -> List[Path]:
    if kind == "bg":
        return [BG_SCRIPT]
    srcs = [ns2_dir / point.script, ns2_dir / "common.tcl", ns2_dir / "tracestats.py"]
    if point.study == "C":
        srcs.append(scen_file(ns2_dir, point.speed, seed))
    return srcs


def ns2_command(ns2_dir: Path, point: Point, seed: int, kind: str) -> List[str]:
    """``kind``: "traced" (the metrics), "untraced" (``trace=0``: wall time only), "bg"
    (study C's background flows from benches/ns2/study_c_bg.tcl) or "noise" (``--noise-floor``:
    traced with ``seed=seed + NOISE_SEED_OFFSET``; study C with ``scen=`` the movement file of
    ``seed``, relative to ``ns2_dir``, where ns-2 runs)."""
    if kind == "bg":
        return ["ns", str(BG_SCRIPT), f"seed={seed}", f"bg={point.bg}"]
    if kind == "noise":
        scen = []
        if point.study == "C":
            scen = [f"scen={scen_file(ns2_dir, point.speed, seed).relative_to(ns2_dir)}"]
        return ["ns", point.script, *point.ns2_args(), *scen, f"seed={seed + NOISE_SEED_OFFSET}"]
    cmd = ["ns", point.script, *point.ns2_args(), f"seed={seed}"]
    if kind == "untraced":
        cmd.append("trace=0")
    return cmd


def ns2_cache_path(cache: Path, ns2_dir: Path, point: Point, seed: int, kind: str) -> Path:
    cmd = ns2_command(ns2_dir, point, seed, kind)
    blob = json.dumps({"script": Path(cmd[1]).name, "args": cmd[2:], "seed": seed,
                       "sources": sha256_files(ns2_sources(ns2_dir, point, seed, kind))}, sort_keys=True)
    key = hashlib.sha256(blob.encode()).hexdigest()[:16]
    base = point.key.split("+")[0] + ("-llfix" if point.llfix else "")
    name = f"bg{point.bg}" if kind == "bg" else base + (f"-stop{point.stop:g}" if point.stop is not None else "")
    return cache / "ns2-results" / f"{point.study}-{name}-seed{seed}-{kind}-{key}.json"


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load1() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def run_ns2(ns2_dir: Path, point: Point, seed: int, kind: str, cache: Path, fresh: bool = False,
            cached_only: bool = False) -> Optional[Dict[str, Any]]:
    """One ns-2 run (from the cache unless ``fresh``): the record with its raw stdout and the
    parsed result lines. ``None`` if ``cached_only`` and nothing is cached."""
    path = ns2_cache_path(cache, ns2_dir, point, seed, kind)
    if path.exists() and not fresh:
        rec = json.loads(path.read_text(encoding="utf-8"))
        rec["cached"] = True
        return rec
    if cached_only:
        return None
    cmd = ns2_command(ns2_dir, point, seed, kind)
    log(f"ns-2 {point.key} seed {seed} ({kind}): {shlex.join(cmd)}")
    load = load1()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ns2_dir if kind != "bg" else HELPERS)
    wall = time.perf_counter() - t0
    parsed = parse_ns2_output(p.stdout)
    ok = parsed["bg"] if kind == "bg" else parsed["total"]
    if p.returncode != 0 or (not ok and not (kind == "bg" and point.bg == 0)):
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-20:])
        raise RuntimeError(f"ns-2 failed (exit status {p.returncode}): {shlex.join(cmd)} in {ns2_dir}\n{tail}")
    rec = {"command": shlex.join(cmd), "seed": seed, "kind": kind,
           "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "load1_before": load, "process_wall_s": wall, "stdout": p.stdout, "parsed": parsed}
    atomic_write_text(path, json.dumps(rec, indent=1))
    rec["cached"] = False
    return rec


def check_bg(bg: Sequence[Dict[str, Any]], flows: Sequence[Dict[str, Any]]) -> None:
    """The background flows re-derived by study_c_bg.tcl must be the traced run's (same
    pairs, starts within 1 µs, the FLOW lines' precision)."""
    ns_bg = [f for f in flows if f["flow"] >= 2]
    if len(ns_bg) != len(bg):
        raise RuntimeError(f"study C: {len(bg)} background flows re-derived, the ns-2 run has {len(ns_bg)}")
    for a, b in zip(sorted(bg, key=lambda d: d["flow"]), sorted(ns_bg, key=lambda d: d["flow"])):
        if (a["src"], a["dst"]) != (b["src"], b["dst"]) or abs(a["start"] - b["flow_start"]) > 1e-6:
            raise RuntimeError(f"study C: background flow {a['flow']} re-derived as {a}, ns-2 ran {b}: "
                               "the RNG draws of study_c.tcl are not reproduced")


# --------------------------------------------------------------------------------------
# tpsim: the mirrored scenarios
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlowSpec:
    """One CBR flow as common.tcl's add-flow makes it."""

    src: int
    dst: int
    msg: int
    interval: float
    start: float
    stop: float

    @property
    def count(self) -> int:
        """count-msgs: messages at start + k·interval < stop."""
        n = math.ceil((self.stop - self.start) / self.interval - 1e-9)
        return max(n, 0)


def count_msgs(start: float, interval: float, stop: float) -> int:
    return FlowSpec(0, 1, 1, interval, start, stop).count


def _ns(t: float) -> str:
    """A time for the scenario file, in integer nanoseconds (tpsim's clock)."""
    return f"{round(t * 1e9)}ns"


def tcp_table(model: str, packet_size: int) -> str:
    """The ``tcp`` table of a flow for ns-2's Agent/TCP/Newreno → Agent/TCPSink with
    ``packetSize_`` = ``packet_size``, ``window_`` 20, ``windowInit_`` 2."""
    if model == "ns2":
        return f'{{ preset = "ns2", packet_size = "{packet_size}B", window = 20, initial_window = 2 }}'
    return (f'{{ mss = "{packet_size}B", initial_window = 2, delayed_ack = "0s", '
            f'receive_window = "{min(20 * packet_size, 65535)}B", min_rto = "200ms", syn_rto = "3s", nagle = false }}')


def flows_toml(flows: Sequence[FlowSpec], transport: str, tcp_model: str, packet_size: Optional[int] = None) -> str:
    out = []
    for f in flows:
        app = (f'{{ kind = "cbr", size = "{f.msg}B", interval = "{_ns(f.interval)}", start = "{_ns(f.start)}", '
               f'stop = "{_ns(f.stop)}", count = {f.count} }}')
        name = {"dccp2": "dccp-ccid2", "dccp3": "dccp-ccid3"}.get(transport, transport)
        out += ["", "[[flows]]", f"src = {f.src}", f"dst = {f.dst}", f'transport = "{name}"', f"app = {app}"]
        if transport == "tcp":
            out.append(f"tcp = {tcp_table(tcp_model, packet_size or f.msg)}")
        elif transport == "sctp":
            out.append('sctp = { profile = "ns2" }')  # ns-2.35's Agent/SCTP and its send rule
        elif transport == "tfrc":
            out.append('tfrc = { profile = "ns2" }')  # ns-2.35's Agent/TFRC (SndrType_ 1) → TFRCSink
        elif transport in ("dccp2", "dccp3"):
            # ns-2.35's Agent/DCCP; the script sets CCID 3's packet size to the message size
            out.append(f'dccp = {{ profile = "ns2", segment_size = "{f.msg}B" }}')
    return "\n".join(out) + "\n"


def a_positions() -> List[Tuple[float, float]]:
    """study_a.tcl's layout: cell(c, r) = (50 + 100c, (r + 0.5)·400/7); sink (0, 3), gateways
    (1..7, 3), sensors column by column, rows 0 1 2 4 5 6."""
    def cell(c: int, r: int) -> Tuple[float, float]:
        return (50.0 + 100.0 * c, (r + 0.5) * 400.0 / 7.0)
    pos = [cell(0, 3)] + [cell(g, 3) for g in range(1, 8)]
    for c in range(8):
        for r in (0, 1, 2, 4, 5, 6):
            pos.append(cell(c, r))
    return pos


def flows_for(point: Point, bg: Sequence[Dict[str, Any]] = ()) -> List[FlowSpec]:
    """The flows the ns-2 script makes for ``point`` (study C: with its background flows,
    re-derived from ns-2's RNG)."""
    stop = point.end_stop
    if point.study == "D":
        return [FlowSpec(0, 1, 128, 0.02, 0.1, stop), FlowSpec(1, 0, 128, 0.02, 0.1, stop)]
    if point.study == "A":
        return [FlowSpec(8 + k, 0, 256, point.interval, 1.0 + k / 48 * point.interval, stop) for k in range(48)]
    out = [FlowSpec(0, 49, 1000, 0.8, 10.0, stop)]
    for d in sorted(bg, key=lambda d: d["flow"]):
        out.append(FlowSpec(int(d["src"]), int(d["dst"]), 1000, 0.8, float(d["start"]), stop))
    return out


def scenario_text(point: Point, seed: int, ns2_dir: Path, tcp_model: str, bg: Sequence[Dict[str, Any]] = ()) -> str:
    """The tpsim scenario that mirrors ``ns study_x.tcl <point's arguments> seed=<seed>``."""
    flows = flows_for(point, bg)
    stop = point.end_stop
    head = [f"# Written by benches/compare_ns2.py: mirrors `{shlex.join(ns2_command(ns2_dir, point, seed, 'traced'))}`",
            f"# (ns-2.35 script of {ns2_dir}). TCP: {'ns-2 preset' if tcp_model == 'ns2' else 'tpsim modern NewReno'}.",
            "", "[simulation]", f'name = "ns2-{point.key}"', f'duration = "{stop:g}s"']
    if point.sizes == "msg":
        # The script's sizes=msg: every agent's packet size is the message size.
        head.append('ns2_packet_size = "message"')
    if point.study == "D":
        quirk = ['ns2_quirks = ["sctp-stall"]'] if point.transport == "sctp" else []
        head += ['drain = "1s"', f"seed = {seed}", "runs = 1", 'sizes = "ns2"', *quirk, "", "[output]", "timeseries = false",
                 "", "[nodes]", "count = 2", "", "[[links]]", "nodes = [0, 1]", 'rate = "256kbps"', 'delay = "50ms"',
                 "queue = 50"]
        ps = 128 if point.sizes == "msg" else 1000
        return "\n".join(head) + "\n" + flows_toml(flows, point.transport, tcp_model, ps)
    head += ['drain = "5s"', f"seed = {seed}", "runs = 1", 'sizes = "ns2"']
    if point.study == "C" and point.transport == "tfrc" and not point.llfix:
        # ns-2 as it is: its AODV ignores TFRC's MAC failures (README quirk 2), switched on.
        head.append('ns2_quirks = ["aodv-data-packet-list"]')
    elif point.transport == "sctp":
        # ns-2 as it is: its SCTP agent stalls an application-limited sender (README quirk 1).
        head.append('ns2_quirks = ["sctp-stall"]')
    head += ["", "[output]", "timeseries = false", ""]
    arp_aodv = (["", "[arp]", 'preset = "ns2"'] if point.arp else []) + ["", "[routing]", 'protocol = "aodv"',
                                                                        'preset = "ns2"']
    if point.study == "A":
        pos = ",\n".join(f'  ["{x:.6f}m", "{y:.6f}m"]' for x, y in a_positions())
        body = ["[nodes]", "count = 56", f'placement = {{ kind = "explicit", positions = [\n{pos},\n] }}', "",
                "[radio]", 'standard = "802.11b"', 'data_rate = "1Mbps"', 'basic_rate = "1Mbps"', 'preamble = "long"',
                'propagation = "two-ray-ground"', 'frequency = "2.4GHz"', 'antenna_height = "1.5m"',
                'rx_threshold = "3.652e-10W"', 'cs_threshold = "1.559e-11W"', "capture_ratio = 10",
                'rts_threshold = "0B"', "idle_backoff = true", "queue = 50", "short_retry_limit = 7", "long_retry_limit = 4",
                'tx_range = "60m"', 'node_ranges = [{ nodes = [0, 1, 2, 3, 4, 5, 6, 7], range = "150m" }]',
                *arp_aodv, "", "[energy]", 'preset = "mica2"', 'initial = "10J"', 'tx = "0.0254W"', 'rx = "0.0211W"',
                'idle = "0.0211W"', 'sleep = "0.00031W"']
    else:
        mv = scen_file(ns2_dir, point.speed, seed)
        body = ["[nodes]", "count = 50", f'mobility = {{ model = "ns2", file = "{mv}" }}', "",
                "[radio]", 'standard = "802.11b"', 'data_rate = "1Mbps"', 'basic_rate = "1Mbps"', 'preamble = "long"',
                'propagation = "two-ray-ground"', 'frequency = "914MHz"', 'antenna_height = "1.5m"',
                'tx_power = "0.28183815W"', 'rx_threshold = "3.652e-10W"', 'cs_threshold = "1.559e-11W"',
                "capture_ratio = 10", 'rts_threshold = "0B"', "idle_backoff = true", "queue = 50", "short_retry_limit = 7",
                "long_retry_limit = 4", *arp_aodv]
    text = "\n".join(head + body) + "\n"
    if point.study == "C":
        main = flows_toml(flows[:1], point.transport, tcp_model, 1000)
        back = flows_toml(flows[1:], "udp", tcp_model) if len(flows) > 1 else ""
        return text + main + back
    return text + flows_toml(flows, point.transport, tcp_model, 256)


def tpsim_scenario_file(point: Point, seed: int, ns2_dir: Path, tcp_model: str, cache: Path,
                        bg: Sequence[Dict[str, Any]] = ()) -> Path:
    text = scenario_text(point, seed, ns2_dir, tcp_model, bg)
    stop = f"-stop{point.stop:g}" if point.stop is not None else ""
    path = cache / "tpsim-scenarios" / f"ns2-{point.key}{stop}-seed{seed}-{tcp_model}.toml"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text)
    return path


_TCP_PROBE: Dict[str, Any] = {}


def ns2_tcp_preset_available() -> Tuple[bool, str]:
    """Whether the installed tpsim accepts the ns-2 TCP preset (validated on a small
    scenario, once per process); the second item is the validator's message if not."""
    if "ok" not in _TCP_PROBE:
        p = Point("D-tcp-msg", "D", "tcp")
        text = scenario_text(p, 1, ns2_dir_default(), "ns2")
        code = ("import sys, tpsim\n"
                "try:\n    tpsim.scenario.Scenario(sys.stdin.read(), 'ns2-tcp-probe.toml')\n"
                "except ValueError as e:\n    print(str(e).strip().splitlines()[-1]); sys.exit(3)\n")
        r = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True)
        _TCP_PROBE["ok"] = r.returncode == 0
        _TCP_PROBE["why"] = (r.stdout + r.stderr).strip()[-300:]
    return _TCP_PROBE["ok"], _TCP_PROBE["why"]


def resolve_tcp_model(choice: str) -> Tuple[str, str]:
    """("ns2" | "modern", note) for ``--tcp`` ``choice``."""
    if choice == "modern":
        return "modern", "tpsim modern NewReno (chosen with --tcp modern)"
    ok, why = ns2_tcp_preset_available()
    if ok:
        return "ns2", "tpsim's ns-2 TCP preset"
    if choice == "ns2":
        raise SystemExit(f"--tcp ns2: the installed tpsim refuses the ns-2 TCP preset: {why}")
    return "modern", f"tpsim modern NewReno: the installed tpsim has no ns-2 TCP preset yet ({why})"


def tpsim_worker(argv: Sequence[str]) -> int:
    """``compare_ns2.py tpsim-worker SCENARIO SEED``: one run, one JSON line."""
    scenario, seed = argv
    import tpsim

    res = tpsim.run(scenario, seed=int(seed), runs=1, jobs=1)
    print(json.dumps({"tpsim_version": tpsim.api.build_id(), "engine_seconds": res.engine_seconds[0],
                      "flows": res.flows.to_dicts(), "network": res.network.to_dicts()[0]}))
    return 0


def run_tpsim(point: Point, seed: int, scenario: Path, tcp_model: str) -> Dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "tpsim-worker", str(scenario), str(seed)]
    log(f"tpsim {point.key} seed {seed}")
    load = load1()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"tpsim failed on {scenario} seed {seed}:\n{p.stderr.strip()[-2000:]}")
    line = next(ln for ln in reversed(p.stdout.strip().splitlines()) if ln.startswith("{"))
    return {"seed": seed, "scenario_file": str(scenario), "tcp_model": tcp_model, "load1_before": load,
            "process_wall_s": wall, "output": json.loads(line)}


# --------------------------------------------------------------------------------------
# Measures with ns-2's definitions on both sides
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    digits: int  # decimals shown
    studies: str = "ACD"
    only: str = ""  # "tcp": TCP points only; "bg": study C with background flows
    definition: str = ""


METRICS: List[Metric] = [
    Metric("msgs", "messages sent", 0, definition="CBR messages: ns-2 `msgs` / Σ `tx_packets`"),
    Metric("sent", "data packets sent", 0,
           definition="agent data packets incl. TCP retransmissions: ns-2 `sent` / Σ `tx_segments`"),
    Metric("recv", "data packets received", 0,
           definition="data packets reaching the sink agent, duplicates apart: ns-2 `recv` / Σ `rx_segments`"),
    Metric("pdr", "PDR", 4, definition="recv / sent, both sides"),
    Metric("app_pdr", "app PDR", 4, only="tcp",
           definition="messages delivered / messages: ns-2 `app_pdr` (distinct TCP seqnos, SCTP TSNs) / Σ `rx_packets` ÷ Σ `tx_packets`"),
    Metric("all_pdr", "all-flows PDR", 4, studies="C", only="bg",
           definition="main + background flows, messages delivered / messages (ns-2 TOTAL `app_pdr`)"),
    Metric("goodput_kbps", "goodput kbit/s", 3,
           definition="messages delivered × message size × 8 / (last stop − first start): ns-2 `goodput_kbps`; "
                      "tpsim from Σ `rx_packets` with the same window (tpsim's own `goodput_kbps` uses the active "
                      "window and leaves out drain deliveries)"),
    Metric("delay_ms", "mean delay ms", 3,
           definition="mean over received data packets, packet-weighted over flows: ns-2 `delay_ms` (agent send → "
                      "sink agent; wired: first enqueue → arrival); tpsim `packet_delay_mean_s` (each data packet "
                      "from its own send by the transport to its arrival, retransmissions from their own send, "
                      "without the wait in a send queue or for earlier packets)"),
    Metric("routing", "routing packets", 0, studies="AC",
           definition="AODV packets sent or forwarded, every hop: ns-2 `routing_pkts` / `routing_packets`"),
    Metric("mac_frames", "MAC frames", 0, studies="AC",
           definition="every MAC transmission (RTS, CTS, DATA, ACK, broadcasts, ARP, retries): ns-2 `mac_frames` "
                      "(study A's primer frame left out) / `mac_frames`"),
    Metric("energy_j", "energy J/node", 4, studies="A",
           definition="energy consumed per node over 105 s: ns-2 `energy_avg_j` (10 J − residual after NodeOff) / "
                      "`energy_consumed_j_mean`"),
    Metric("energy_active_mj", "energy above listening mJ/node", 3, studies="A",
           definition="the same minus 105 s × 21.1 mW of listening (idle = rx power): the transmit surplus "
                      "(25.4 − 21.1 mW) × time on the air, the part that depends on the traffic"),
]


def metrics_for(point: Point) -> List[Metric]:
    out = []
    for m in METRICS:
        if point.study not in m.studies:
            continue
        if m.only == "tcp" and point.transport not in ("tcp", "sctp"):
            continue
        if m.only == "bg" and point.bg == 0:
            continue
        out.append(m)
    return out


IDLE_W = 0.0211


def head_window(point: Point) -> Tuple[float, float, int]:
    """(first start, last stop, message size) of the headline flows: tracestats.py's goodput
    window (TOTAL: every flow; study C: the main flow)."""
    t0, msg = {"D": (0.1, 128), "A": (1.0, 256), "C": (10.0, 1000)}[point.study]
    return t0, point.end_stop, msg


def _head(point: Point, parsed: Dict[str, Any]) -> Dict[str, Any]:
    """The ns-2 line whose flow metrics are the headline: TOTAL, study C's FLOW flow=1."""
    if point.study == "C":
        return next(f for f in parsed["flows"] if f["flow"] == 1)
    return parsed["total"]


def ns2_measures(point: Point, traced: Dict[str, Any], untraced: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    parsed = traced["parsed"]
    h, tot = _head(point, parsed), parsed["total"]
    m: Dict[str, Any] = {k: h[k] for k in ("msgs", "sent", "recv", "pdr", "app_pdr", "goodput_kbps")}
    m["delay_ms"] = h["delay_ms"] if h["recv"] > 0 else None
    m["all_pdr"] = tot["app_pdr"]
    if point.study != "D":
        m["routing"] = tot["routing_pkts"]
        m["mac_frames"] = tot["mac_frames"]
        frames = tot["mac_frames"]
    else:
        frames = tot["sent"] + tot["ctrl_pkts"]  # every packet put on the link (no drops in D)
    if point.study != "D":
        for k in ("mac_rts", "mac_cts", "mac_ack", "routing_rreq", "routing_rrep", "routing_rerr"):
            m[k] = tot[k]
    if point.study == "A":
        m["energy_j"] = tot["energy_avg_j"]
        m["energy_active_mj"] = (tot["energy_avg_j"] - IDLE_W * (point.end_stop + 5.0)) * 1e3
    loop = untraced["parsed"]["total"]["wall_run_s"] if untraced else None
    m["loop_s"] = loop
    m["frames"] = frames
    m["us_per_frame"] = loop / frames * 1e6 if (loop is not None and frames) else None
    m["traced_loop_s"] = tot["wall_run_s"]
    return m


def tpsim_measures(point: Point, rec: Dict[str, Any]) -> Dict[str, Any]:
    out = rec["output"]
    net, flows = out["network"], out["flows"]
    head = [flows[0]] if point.study == "C" else flows
    t0, t1, msg = head_window(point)
    msgs = sum(f["tx_packets"] for f in head)
    sent = sum(f["tx_segments"] for f in head)
    recv = sum(f["rx_segments"] for f in head)
    delivered = sum(f["rx_packets"] for f in head)
    # ns-2's delay: each packet from its own send by the agent (tpsim's ns-2-style column; in
    # results of builds without it, from the message's first transmission)
    if all("packet_delay_mean_s" in f for f in head):
        dkey = "packet_delay_mean_s"
    else:
        dkey = "net_delay_mean_s" if point.transport != "udp" else "delay_mean_s"
    num = sum(f[dkey] * f["rx_segments"] for f in head if f[dkey] is not None)
    den = sum(f["rx_segments"] for f in head if f[dkey] is not None)
    m: Dict[str, Any] = {
        "msgs": msgs, "sent": sent, "recv": recv,
        "pdr": recv / sent if sent else 0.0,
        "app_pdr": delivered / msgs if msgs else 0.0,
        "all_pdr": sum(f["rx_packets"] for f in flows) / max(sum(f["tx_packets"] for f in flows), 1),
        "goodput_kbps": delivered * msg * 8 / (t1 - t0) / 1000,
        "delay_ms": num / den * 1e3 if den else None,
    }
    if point.study != "D":
        m["routing"] = net["routing_packets"]
        m["mac_frames"] = net["mac_frames"]
    if point.study != "D":
        for k in ("rts", "cts", "ack"):
            m[f"mac_{k}"] = net[f"mac_{k}_frames"]
        for k in ("rreq", "rrep", "rerr"):
            m[f"routing_{k}"] = net[f"routing_{k}"]
        m["arp_frames"] = (net.get("arp_requests") or 0) + (net.get("arp_replies") or 0)
    if point.study == "A":
        e = net["energy_consumed_j_mean"]
        m["energy_j"] = e
        m["energy_active_mj"] = (e - IDLE_W * (point.end_stop + 5.0)) * 1e3 if e is not None else None
    m["loop_s"] = out["engine_seconds"]
    m["frames"] = net["mac_frames"]
    m["us_per_frame"] = out["engine_seconds"] / net["mac_frames"] * 1e6 if net["mac_frames"] else None
    return m


# --------------------------------------------------------------------------------------
# Paired statistics
# --------------------------------------------------------------------------------------


def _binom_cdf_half(n: int, k: int) -> float:
    """P(B ≤ k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(0, min(k, n) + 1)) / 2 ** n


def median_interval(values: Sequence[float], level: float = 0.95) -> Tuple[float, float, float]:
    """Distribution-free interval for the median: the order statistics (x_(k), x_(n+1−k))
    with the largest k whose coverage 1 − 2·P(B ≤ k−1), B ~ Bin(n, ½), is at least
    ``level``. When even (min, max) covers less (n ≤ 5 at 95 %), (min, max) with its true
    coverage. Returns (low, high, coverage)."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        raise ValueError("no values")
    best = 1
    for k in range(1, n // 2 + 1):
        if 1 - 2 * _binom_cdf_half(n, k - 1) >= level:
            best = k
    cov = 1 - 2 * _binom_cdf_half(n, best - 1)
    return v[best - 1], v[n - best], max(cov, 0.0)


@dataclass
class Paired:
    ns2_median: Optional[float]
    tpsim_median: Optional[float]
    n: int
    diff_median: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    coverage: float = 0.0
    includes_zero: bool = False
    within_10: bool = False
    diffs: List[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.includes_zero or self.within_10

    @property
    def rel(self) -> Optional[float]:
        if self.diff_median is None or not self.ns2_median:
            return None
        return self.diff_median / abs(self.ns2_median)


def paired(ns: Sequence[Optional[float]], tp: Sequence[Optional[float]], tol: float = 0.10) -> Paired:
    """Paired differences tpsim − ns-2 over the seeds where both sides have a value."""
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    nv = [x for x in ns if x is not None]
    tv = [x for x in tp if x is not None]
    diffs = [b - a for a, b in zip(ns, tp) if a is not None and b is not None]
    p = Paired(med(nv), med(tv), len(diffs), diffs=diffs)
    if diffs:
        p.diff_median = statistics.median(diffs)
        p.low, p.high, p.coverage = median_interval(diffs)
        p.includes_zero = p.low <= 0 <= p.high
        ref = abs(p.ns2_median) if p.ns2_median is not None else 0.0
        p.within_10 = ref > 0 and max(abs(p.low), abs(p.high)) <= tol * ref
    return p


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def fmt(x: Optional[float], digits: int) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:,.{digits}f}"


def fmt_sig(x: Optional[float], n: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if x == 0:
        return "0"
    d = n - 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, d):,.{max(d, 0)}f}"


def fmt_rel(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:+.1%}"


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def analyse(point: Point, ns_ms: Sequence[Dict[str, Any]], tp_ms: Sequence[Dict[str, Any]]) -> Dict[str, Paired]:
    return {m.key: paired([x.get(m.key) for x in ns_ms], [x.get(m.key) for x in tp_ms]) for m in metrics_for(point)}


def summarise_point(point: Point, seeds: Sequence[int], ns_recs: Dict[int, Dict[str, Any]],
                    tp_recs: Dict[int, Dict[str, Any]], tcp_note: str, date: str) -> Dict[str, Any]:
    """Everything the report needs about one point (JSON-able), paired by seed."""
    both = [s for s in seeds if s in ns_recs and s in tp_recs]
    ns_ms = [ns2_measures(point, ns_recs[s]["traced"], ns_recs[s].get("untraced")) for s in both]
    tp_ms = [tpsim_measures(point, tp_recs[s]) for s in both]
    res = analyse(point, ns_ms, tp_ms)
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    us_ns = med([m["us_per_frame"] for m in ns_ms if m["us_per_frame"] is not None])
    us_tp = med([m["us_per_frame"] for m in tp_ms if m["us_per_frame"] is not None])
    noise: Dict[str, Any] = {}
    n_seeds, n_base, n_ms = noise_pairs(point, both, ns_recs)
    if n_seeds:
        noise = {"seeds": n_seeds, "offset": NOISE_SEED_OFFSET,
                 "cached": sum(1 for s in n_seeds if ns_recs[s]["noise"].get("cached")),
                 "metrics": {k: {**vars(p), "ok": p.ok, "rel": p.rel} for k, p in analyse(point, n_base, n_ms).items()},
                 "per_seed": n_ms}
    out = {
        "key": point.key, "title": point.title(), "date": date, "seeds": both,
        "ns2_command": shlex.join(ns2_command(Path("."), point, 0, "traced")[:-1]) + " seed=S",
        "tpsim_scenario": tp_recs[both[0]]["scenario_file"] if both else "",
        "tcp": tcp_note if point.transport == "tcp" else "",
        "tcp_model": tp_recs[both[0]]["tcp_model"] if both else "",
        "tpsim_build": sorted({tp_recs[s]["output"]["tpsim_version"] for s in both}),
        "ns2_cached": sum(1 for s in both if ns_recs[s]["traced"].get("cached")),
        "metrics": {k: {**vars(p), "ok": p.ok, "rel": p.rel} for k, p in res.items()},
        "per_seed": {"ns2": ns_ms, "tpsim": tp_ms},
        "speed": {"ns2_us_per_frame": us_ns, "tpsim_us_per_frame": us_tp,
                  "ns2_loop_s": med([m["loop_s"] for m in ns_ms if m["loop_s"] is not None]),
                  "tpsim_loop_s": med([m["loop_s"] for m in tp_ms]),
                  "ratio": us_ns / us_tp if (us_ns and us_tp) else None},
    }
    if noise:
        out["noise"] = noise
    return out


def noise_pairs(point: Point, seeds: Sequence[int], ns_recs: Dict[int, Dict[str, Any]]
                ) -> Tuple[List[int], List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The noise floor's pairs: for each of ``seeds`` with a noise run, ns-2's measures of seed S
    and of its noise run (seed S + NOISE_SEED_OFFSET, the same movement file), in that order.
    The noise run has no untraced twin: its speed columns are None."""
    keep = [s for s in seeds if s in ns_recs and ns_recs[s].get("noise") is not None]
    base = [ns2_measures(point, ns_recs[s]["traced"], ns_recs[s].get("untraced")) for s in keep]
    noise = [ns2_measures(point, ns_recs[s]["noise"], None) for s in keep]
    return keep, base, noise


def point_of(key: str) -> Point:
    noarp = key.endswith("+noarp")
    k = key[:-len("+noarp")] if noarp else key
    base = POINTS.get(k) or Point(k, k[0], "udp")
    return without_arp(base) if noarp else base


def render_point(s: Dict[str, Any]) -> str:
    point = point_of(s["key"])
    n = len(s["seeds"])
    lines = [f"### `{s['key']}`: {s['title']}", "",
             f"{n} seed(s) paired ({', '.join(map(str, s['seeds']))}), run {s['date']}; ns-2 from the cache for "
             f"{s['ns2_cached']} of them. ns-2: `{s['ns2_command']}`; tpsim: `{Path(s['tpsim_scenario']).name}` "
             f"(benches/.cache/tpsim-scenarios/), tpsim {', '.join(s.get('tpsim_build', []))}."
             + (f" TCP on tpsim's side: {s['tcp']}." if s["tcp"] else ""), ""]
    noise = s.get("noise")
    if noise:
        ns = noise["seeds"]
        scen = " on the movement file of seed S" if point.study == "C" else ""
        bgn = f" (its {point.bg} background flows drawn by that seed)" if point.study == "C" and point.bg else ""
        lines += [f"Noise floor: ns-2 with seed S+{noise['offset']}{scen}{bgn} against ns-2 with seed S, {len(ns)} "
                  f"seed(s) paired ({', '.join(map(str, ns))}; from the cache for {noise.get('cached', 0)}), the same "
                  "criterion; its median paired difference / ns-2's median and whether it agrees; last column: the "
                  "median of the paired differences' absolute values / ns-2's median, tpsim's beside the noise "
                  "floor's (how far one run lands from its pair; tpsim's at or below the noise floor's: as close to "
                  "ns-2 as ns-2 is to itself).", ""]
    rows = []
    for m in metrics_for(point):
        r = s["metrics"].get(m.key)
        if r is None:
            continue
        ci = f"[{fmt(r['low'], m.digits)}, {fmt(r['high'], m.digits)}] ({r['coverage']:.1%})" if r["n"] else "—"
        verdict = "yes" if r["ok"] else "**no**"
        label = m.label
        row = [label, fmt(r["ns2_median"], m.digits), fmt(r["tpsim_median"], m.digits),
               fmt(r["diff_median"], m.digits), fmt_rel(r["rel"]), ci,
               "yes" if r["includes_zero"] else "no", "yes" if r["within_10"] else "no", verdict]
        if noise:
            nr = noise["metrics"].get(m.key)
            row.append("—" if nr is None or not nr["n"] else
                       f"{fmt_rel(nr['rel'])}, {'yes' if nr['ok'] else '**no**'}")
            row.append(f"{fmt_abs_rel(r)} · {fmt_abs_rel(nr)}")
        rows.append(row)
    head = ["metric", "ns-2 median", "tpsim median", "median Δ (tpsim − ns-2)", "Δ / ns-2",
            "interval of median Δ (coverage)", "includes 0", "within ±10 %", "agrees"]
    if noise:
        head += ["noise floor: Δ / ns-2, agrees", "median \\|Δ\\| / ns-2: tpsim · noise floor"]
    lines.append(table(head, rows))
    if point.study != "D" and s["per_seed"]["ns2"] and "mac_rts" in s["per_seed"]["ns2"][0]:
        med = lambda side, k: statistics.median([m.get(k) or 0 for m in s["per_seed"][side]])  # noqa: E731
        mix = ", ".join(f"{lab} {med('ns2', k):,.0f} / {med('tpsim', k):,.0f}" for lab, k in
                        (("RTS", "mac_rts"), ("CTS", "mac_cts"), ("ACK", "mac_ack"), ("RREQ", "routing_rreq"),
                         ("RREP", "routing_rrep"), ("RERR", "routing_rerr")))
        lines += ["", f"By type (medians, ns-2 / tpsim): {mix}; tpsim's ARP frames {med('tpsim', 'arp_frames'):,.0f} "
                  "(ns-2's are in its MAC frames, not counted apart)."]
    sp = s["speed"]
    unit = "packet on the link" if point.study == "D" else "MAC frame"
    lines += ["", f"Speed (medians): event loop {fmt_sig(sp['ns2_loop_s'])} s (ns-2, trace=0) / "
              f"{fmt_sig(sp['tpsim_loop_s'])} s (tpsim); per {unit} {fmt_sig(sp['ns2_us_per_frame'])} µs / "
              f"{fmt_sig(sp['tpsim_us_per_frame'])} µs: tpsim {fmt_sig(sp['ratio'])}× faster.", ""]
    return "\n".join(lines)


def abs_rel(r: Optional[Dict[str, Any]]) -> Optional[float]:
    """The median of the absolute paired differences over ns-2's median (``None`` without pairs
    or with a median of 0)."""
    if not r or not r.get("diffs") or not r.get("ns2_median"):
        return None
    return statistics.median(abs(d) for d in r["diffs"]) / abs(r["ns2_median"])


def fmt_abs_rel(r: Optional[Dict[str, Any]]) -> str:
    x = abs_rel(r)
    return "—" if x is None else f"{x:.1%}"


def within_noise(ms: Dict[str, Any], noise: Dict[str, Any], point: Point) -> str:
    """``k/m``: the metrics whose median absolute paired difference is at most the noise
    floor's (of those both have)."""
    keys = [m.key for m in metrics_for(point) if abs_rel(ms.get(m.key)) is not None
            and abs_rel(noise["metrics"].get(m.key)) is not None]
    k = sum(1 for key in keys if abs_rel(ms[key]) <= abs_rel(noise["metrics"][key]))
    return f"{k}/{len(keys)}"


def agreeing(ms: Dict[str, Any], point: Point) -> str:
    """``k/m``: the point's headline metrics that agree, of those compared."""
    bad = [m.label for m in metrics_for(point) if m.key in ms and not ms[m.key]["ok"]]
    return f"{len(ms) - len(bad)}/{len(ms)}"


def summary_row(s: Dict[str, Any], noise_column: bool = False) -> List[str]:
    """One row of the summary table; ``noise_column``: with the noise floor's count beside
    tpsim's ("—" for a point without one)."""
    point = point_of(s["key"])
    ms = s["metrics"]

    def cell(key: str, digits: int) -> str:
        r = ms.get(key)
        if r is None:
            return "—"
        mark = "" if r["ok"] else " ✗"
        return f"{fmt(r['ns2_median'], digits)} / {fmt(r['tpsim_median'], digits)}{mark}"

    sp = s["speed"]
    tcp = " (modern TCP)" if (point.transport == "tcp" and s.get("tcp_model") == "modern") else ""
    noise = ([f"{agreeing(s['noise']['metrics'], point)} · {within_noise(ms, s['noise'], point)}"
              if s.get("noise") else "—"] if noise_column else [])
    return [f"`{s['key']}`{tcp}", str(len(s["seeds"])), cell("pdr", 3), cell("goodput_kbps", 2), cell("delay_ms", 1),
            cell("routing", 0), cell("mac_frames", 0), cell("energy_active_mj", 1),
            agreeing(ms, point), *noise, f"{fmt_sig(sp['ns2_us_per_frame'])} / {fmt_sig(sp['tpsim_us_per_frame'])}"]


SUMMARY_HEAD = ["point", "seeds", "PDR ns-2 / tpsim", "goodput kbit/s", "delay ms", "routing pkts", "MAC frames",
                "energy above listening mJ", "metrics agreeing", "µs per MAC frame ns-2 / tpsim"]
#: The summary's column beside "metrics agreeing" when a point of the report has a noise floor.
NOISE_HEAD = "noise floor: metrics agreeing · tpsim within it"


def render_report(points: Dict[str, Dict[str, Any]], header: str) -> str:
    order = [k for k in POINTS if k in points] + [k + "+noarp" for k in POINTS if k + "+noarp" in points]
    noise = any(points[k].get("noise") for k in order)
    head = list(SUMMARY_HEAD)
    if noise:
        head.insert(head.index("metrics agreeing") + 1, NOISE_HEAD)
    note = (f" \"{NOISE_HEAD}\": the same count for ns-2 against ns-2 with seed S+{NOISE_SEED_OFFSET} (study C on "
            "the movement file of seed S; — where the point has no noise floor), how far two ns-2 runs of the "
            "scenario differ under the same criterion; then the metrics whose median absolute paired difference "
            "tpsim − ns-2 is at most ns-2's against itself." if noise else "")
    lines = [header, "", "### Summary", "",
             "Medians over the paired seeds, ns-2 / tpsim; ✗ marks a metric whose interval of the median paired "
             "difference neither includes 0 nor lies within ±10 % of ns-2's median. \"metrics agreeing\" counts every "
             "headline metric of the point (the point's block lists them)." + note + " Study D's last column is per "
             "packet on the link.", "",
             table(head, [summary_row(points[k], noise) for k in order]), "", "### Definitions (ns-2 / tpsim)", ""]
    lines += [f"* **{m.label}**: {m.definition}." for m in METRICS]
    lines.append("")
    for k in order:
        lines.append(render_point(points[k]))
    return "\n".join(lines).rstrip() + "\n"


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), else its architecture."""
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.lower().startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def render_header(command: str, date: str, elapsed: float, tcp_note: str) -> str:
    cpu = cpu_model()
    return "\n".join([
        f"Written by `{command}` on {date} (this run took {elapsed:.0f} s; points not in it keep their last "
        "result, with its date). Do not edit between the markers.", "",
        f"* Machine: {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}; one simulation at a time.",
        "* ns-2.35 (Debian `ns2`) runs the scripts of `../shared/ns2` unchanged; tpsim runs the scenario this "
        "harness writes for each point and seed, mirroring the script. Paired by seed: the same seed number on "
        "both sides; in study C the pair also shares the movement file and the background flows, in A and D "
        "only the set-up (each side's random draws are its own).",
        "* Interval: the order-statistic (sign-test) interval of the median of the paired differences, its "
        "coverage in brackets; ≥ 95 % needs 6 seeds, with 5 it is [min, max] at 93.8 %.",
        f"* TCP on tpsim's side: {tcp_note}.",
    ])


def replace_section(text: str, body: str) -> str:
    b, e = text.find(BEGIN), text.find(END)
    block = f"{BEGIN}\n{body.strip()}\n{END}"
    if b != -1 and e != -1 and e > b:
        return text[:b] + block + text[e + len(END):]
    if b != -1 or e != -1:
        raise ValueError(f"docs marker mismatch: need both {BEGIN} and {END}, in that order")
    sep = "" if (not text or text.endswith("\n\n")) else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{SECTION_TITLE}\n\n{block}\n"


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python benches/compare_ns2.py",
                                 description="tpsim and ns-2.35 side by side on studies A, C and D, paired seed by seed.")
    ap.add_argument("--studies", default="A,C,D", help="comma-separated studies (default A,C,D)")
    ap.add_argument("--points", default=None,
                    help="comma-separated globs on point keys, e.g. 'A-udp-*,C-*-v10-bg0' "
                         f"(keys: {', '.join(POINTS)})")
    ap.add_argument("--seeds", default=None, help="seed list, e.g. 1-5 or 1,3,5 (default 1-10; --quick: 1)")
    ap.add_argument("--quick", action="store_true",
                    help="1 seed, one short point per study (or the --points, shortened); prints the report unless --doc")
    ap.add_argument("--ns2-only", action="store_true", help="only run (and cache) the ns-2 side")
    ap.add_argument("--ns2-cached-only", action="store_true", help="never run ns-2: cached seeds only")
    ap.add_argument("--fresh-ns2", action="store_true", help="re-run ns-2 even when cached")
    ap.add_argument("--noise-floor", action="store_true",
                    help=f"also run ns-2 with seed S+{NOISE_SEED_OFFSET} (study C on seed S's movement file) and report "
                         "ns-2 against itself beside tpsim's comparison (one more traced ns-2 run per point and seed)")
    ap.add_argument("--tcp", choices=("auto", "ns2", "modern"), default=TCP_MODEL,
                    help=f"tpsim's TCP for the TCP points (default {TCP_MODEL}: the ns-2 preset when available)")
    ap.add_argument("--no-arp", action="store_true",
                    help="diagnostic variant: tpsim without [arp] (points KEY+noarp; ns-2 unchanged)")
    ap.add_argument("--doc", default=None, help=f"markdown file to update between its markers (default "
                                                f"{REPORT.relative_to(REPO)}); '-' prints")
    ap.add_argument("--ns2-dir", type=Path, default=None, help="the ns-2 scripts (default $TPSIM_NS2_DIR or ../shared/ns2)")
    ap.add_argument("--cache-dir", type=Path, default=CACHE, help="cache folder (default benches/.cache)")
    a = ap.parse_args(list(argv))
    a.study_list = [s.strip().upper() for s in a.studies.split(",") if s.strip()]
    bad = [s for s in a.study_list if s not in STUDIES]
    if bad or not a.study_list:
        ap.error(f"unknown study {', '.join(bad) or '(none)'}; known: {', '.join(STUDIES)}")
    pats = [g.strip() for g in a.points.split(",") if g.strip()] if a.points else None
    a.point_list = select_points(a.study_list, pats, a.quick)
    if a.no_arp:
        a.point_list = [without_arp(p) for p in a.point_list if p.study != "D"]
    if not a.point_list:
        ap.error(f"no point matches --points {a.points!r} in studies {a.studies}")
    try:
        a.seed_list = parse_seeds(a.seeds if a.seeds else ("1" if a.quick else DEFAULT_SEEDS))
    except ValueError as e:
        ap.error(str(e))
    if any(p.study == "C" for p in a.point_list) and max(a.seed_list) > 10:
        ap.error("study C has movement files for seeds 1-10 only")
    if a.ns2_only and a.ns2_cached_only:
        ap.error("--ns2-only and --ns2-cached-only exclude each other")
    return a


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "tpsim-worker":
        return tpsim_worker(argv[1:])
    a = parse_args(argv)
    t_start = time.perf_counter()
    ns2_dir = (a.ns2_dir or ns2_dir_default()).resolve()
    if not (ns2_dir / "common.tcl").is_file():
        log(f"no ns-2 scripts at {ns2_dir}; pass --ns2-dir or set TPSIM_NS2_DIR")
        return 2
    if not a.ns2_cached_only and shutil.which("ns") is None:
        log("ns-2 (`ns`) is not installed: apt-get install ns2, or use --ns2-cached-only")
        return 2
    cache = a.cache_dir.resolve()
    tcp_model, tcp_note = ("modern", "") if a.ns2_only else resolve_tcp_model(a.tcp)
    if any(p.transport == "tcp" for p in a.point_list) and not a.ns2_only:
        log(f"TCP points: {tcp_note}")
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ns_recs: Dict[str, Dict[int, Dict[str, Any]]] = {p.key: {} for p in a.point_list}
    tp_recs: Dict[str, Dict[int, Dict[str, Any]]] = {p.key: {} for p in a.point_list}
    for seed in a.seed_list:  # seed-major: a spell of load falls on one seed of every point
        for p in a.point_list:
            if p.study == "C" and not scen_file(ns2_dir, p.speed, seed).is_file():
                raise SystemExit(f"missing movement file {scen_file(ns2_dir, p.speed, seed)}")
            kw = dict(cache=cache, fresh=a.fresh_ns2, cached_only=a.ns2_cached_only)
            traced = run_ns2(ns2_dir, p, seed, "traced", **kw)
            if traced is None:
                log(f"{p.key} seed {seed}: no cached ns-2 result (--ns2-cached-only): seed left out")
                continue
            untraced = run_ns2(ns2_dir, p, seed, "untraced", **kw)
            bg: List[Dict[str, Any]] = []
            if p.study == "C" and p.bg > 0:
                bgrec = run_ns2(ns2_dir, p, seed, "bg", **kw)
                if bgrec is None:
                    log(f"{p.key} seed {seed}: background flows not cached (--ns2-cached-only): seed left out")
                    continue
                bg = bgrec["parsed"]["bg"]
                check_bg(bg, traced["parsed"]["flows"])
            ns_recs[p.key][seed] = {"traced": traced, "untraced": untraced}
            if a.noise_floor:
                noise = run_ns2(ns2_dir, p, seed, "noise", **kw)
                if noise is None:
                    log(f"{p.key} seed {seed}: no cached ns-2 noise-floor run (--ns2-cached-only): "
                        "seed left out of the noise floor")
                else:
                    ns_recs[p.key][seed]["noise"] = noise
            if a.ns2_only:
                continue
            scen = tpsim_scenario_file(p, seed, ns2_dir, tcp_model, cache, bg)
            tp_recs[p.key][seed] = run_tpsim(p, seed, scen, tcp_model)
    elapsed = time.perf_counter() - t_start
    if a.ns2_only:
        log(f"ns-2 results cached; done in {elapsed:.0f} s")
        return 0
    summaries = {p.key: summarise_point(p, a.seed_list, ns_recs[p.key], tp_recs[p.key], tcp_note, date)
                 for p in a.point_list if ns_recs[p.key]}
    command = "python benches/compare_ns2.py" + (" " + shlex.join(argv) if argv else "")
    header = render_header(command, date, elapsed, tcp_note or "no TCP point in this run")
    if a.doc == "-" or (a.quick and a.doc is None):
        print(render_report(summaries, header))
    else:
        report = summaries
        if not a.quick:  # quick results never enter the store of full results
            store = cache / "compare-ns2-points.json"
            report = json.loads(store.read_text(encoding="utf-8")) if store.exists() else {}
            report.update(summaries)
            atomic_write_text(store, json.dumps(report, indent=1))
        path = Path(a.doc) if a.doc else REPORT
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        atomic_write_text(path, replace_section(text, render_report(report, header)))
        log(f"wrote {path}")
    log(f"done in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
