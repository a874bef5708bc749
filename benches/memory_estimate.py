#!/usr/bin/env python3
"""The memory estimate against the measured peak: for five differently shaped scenarios (a long
wired run, a MANET with fine time-series bins, an AODV grid, many flows, a large sweep, and
many background flows), the estimate of a ``tpsim run -j 1`` (``tpsim.api.memory_estimate``:
its sweep's part and its run's) beside what the whole process grows by beyond a one-second
run of one flow (the kernel's ``ru_maxrss`` of the reaped process).

    python benches/memory_estimate.py [--quick] [--only NAME,...]

``--quick`` runs the sizes tests/test_hostile.py runs (a few seconds each); the default
sizes take about a minute in all. Prints a Markdown table; exits 1 if an estimate is off by
more than 2x either way. Linux (``wait4``).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

PAIR = '[nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = "10Mbps"\ndelay = "1ms"\n'


def cbr(src: int, dst: int, interval: str, size: str = "100B", start: str = "0s") -> str:
    return (f'[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = "udp"\n'
            f'app = {{ kind = "cbr", size = "{size}", interval = "{interval}", start = "{start}" }}\n')


def aodv_grid(n: int) -> str:
    """A static grid of ``n`` radio nodes 200 m apart (four neighbours each) under ns-2's
    AODV, with n/5 CBR flows between random pairs starting in the first second."""
    rng = random.Random(5)
    flows = "".join(cbr(*rng.sample(range(n), 2), "250ms", "512B", f"{rng.randrange(1000)}ms") for _ in range(n // 5))
    return ('[simulation]\nduration = "5s"\nsizes = "ns2"\n[output]\ntimeseries = false\n'
            f'[nodes]\ncount = {n}\nplacement = {{ kind = "grid", spacing = "200m" }}\n'
            '[radio]\n[routing]\nprotocol = "aodv"\npreset = "ns2"\n' + flows)


def background(flows: int) -> str:
    """50 radio nodes, one flow and ``flows`` background flows (one message each in 10 s)."""
    return ('[simulation]\nduration = "10s"\n[nodes]\ncount = 50\nplacement = { kind = "grid", columns = 10, spacing = "100m" }\n'
            '[radio]\nstandard = "802.11b"\n' + cbr(0, 1, "1s")
            + f'[background]\nflows = {flows}\nsize = "100B"\ninterval = "10s"\n')


def shapes(quick: bool) -> dict[str, str]:
    """The scenarios by name, each mostly one part of the estimate."""
    k = 1 if quick else 2
    return {
        # 10⁷ (2 × 10⁷) messages on one link: the per-message bookkeeping.
        "wired": f'[simulation]\nduration = "{1000 * k}s"\n' + PAIR + cbr(0, 1, "100us"),
        # 100 random-waypoint nodes, AODV, 20 ms time-series bins over 200 s: the time series.
        "manet": ('[simulation]\nduration = "200s"\n[output]\nbin = "20ms"\n[nodes]\ncount = 100\n'
                  'placement = { kind = "uniform", area = ["1500m", "300m"] }\n'
                  '[nodes.mobility]\nmodel = "random-waypoint"\nspeed = ["1m/s", "10m/s"]\npause = "0s"\narea = ["1500m", "300m"]\n'
                  '[radio]\n[routing]\nprotocol = "aodv"\n' + "".join(cbr(i, 99 - i, "250ms", "512B") for i in range(10))),
        # 2,500 (10,000) radio nodes with n/5 flows: the nodes and AODV's state.
        "grid": aodv_grid(2500 if quick else 10_000),
        # 20,000 (100,000) flows: their sockets, rows and resolved scenario.
        "flows": '[simulation]\nduration = "2s"\n' + PAIR + cbr(0, 1, "1s") * (20_000 if quick else 100_000),
        # 1,000 (2,000) points x 5 runs: the points and the runs' records in this process.
        "sweep": ('[simulation]\nduration = "1s"\nruns = 5\n' + PAIR + cbr(0, 1, "10ms")
                  + '[sweep]\n"flows.0.app.interval" = [' + ",".join(f'"{10 + i}ms"' for i in range(1000 * k)) + "]\n"),
        # 20,000 (40,000) background flows among 50 radio nodes.
        "background": background(20_000 * k),
    }


TINY = '[simulation]\nduration = "1s"\n' + PAIR + cbr(0, 1, "10ms")


#: Runs ``python ARGS`` in a child of this small process and prints the child's peak RSS
#: (KiB). Linux counts, in a process's peak, the memory of the process it was forked from:
#: measured from a large parent (a test run), a small command would seem as large as it.
_LAUNCH = """
import os, sys
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_rss(cwd: Path, *args: str) -> int:
    """Peak resident set of ``tpsim ARGS`` run in ``cwd``, bytes.

    Raises:
        RuntimeError: if the command fails (with its stderr).
    """
    p = subprocess.run([sys.executable, "-c", _LAUNCH, "-m", "tpsim", *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"tpsim {' '.join(args)} failed: {p.stderr}")
    return int(p.stdout.split()[-1]) * 1024


def estimate(path: Path) -> int:
    """The estimate of ``tpsim run -j 1`` of the scenario at ``path``, bytes."""
    import tpsim.api

    e = tpsim.api.memory_estimate(tpsim.api.plan(path, force=True))
    return e["sweep"] + e["run"]


def measure(text: str, cwd: Path, name: str) -> tuple[int, int]:
    """(estimate, peak) of ``tpsim run -j 1 --no-report`` of scenario ``text``, bytes."""
    (cwd / f"{name}.toml").write_text(text)
    return estimate(cwd / f"{name}.toml"), peak_rss(cwd, "run", f"{name}.toml", "-o", f"out-{name}", "-j", "1", "--no-report", "-q")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the test suite's sizes")
    ap.add_argument("--only", default="", help="comma-separated shape names")
    args = ap.parse_args()
    todo = shapes(args.quick)
    if args.only:
        todo = {k: v for k, v in todo.items() if k in args.only.split(",")}
    ok = True
    with tempfile.TemporaryDirectory(prefix="tpsim-memory-") as d:
        cwd = Path(d)
        e0, p0 = measure(TINY, cwd, "tiny")
        print(f"one-flow run: peak {p0 / 1e6:.0f} MB\n")
        print("| shape | estimate (MB) | growth (MB) | estimate / growth |\n|---|---:|---:|---:|")
        for name, text in todo.items():
            e, p = measure(text, cwd, name)
            ratio = (e - e0) / (p - p0)
            ok &= 0.5 <= ratio <= 2
            print(f"| {name} | {(e - e0) / 1e6:.0f} | {(p - p0) / 1e6:.0f} | {ratio:.2f} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
