"""Start-up time of the tpsim command and package: whole-process wall time (median of N runs)
of ``tpsim --version``, ``tpsim validate``, ``import tpsim`` and a one-point ``tpsim run``
(with its engine time and the overhead beyond it), beside a bare interpreter.

    python benches/startup.py [--runs 5] [--json FILE]

Run it with the Python that has tpsim installed (or PYTHONPATH=python); the machine should
be idle (the load average is printed). Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commands(out: str) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python -c pass": [py, "-c", "pass"],
        "tpsim --version": [py, "-c", "import sys; sys.argv[0] = 'tpsim'; from tpsim.cli import main; main()", "--version"],
        "python -m tpsim --version": [py, "-m", "tpsim", "--version"],
        "import tpsim": [py, "-c", "import tpsim"],
        "tpsim validate (study D, 48 points)": [py, "-m", "tpsim", "validate", "scenarios/study-d-wired-voip.toml"],
        "tpsim run (one point of study C)": [
            py, "-m", "tpsim", "run", "scenarios/study-c-manet-speed.toml", "-o", out, "--runs", "1", "-j", "1",
            "--no-report", "--sweep", "flows.0.transport=udp", "--sweep", "nodes.mobility.speed=[10m/s,10m/s]",
            "--sweep", "background.flows=0", "--sweep", "simulation.stack=ns2",
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--json", help="also write the medians to this file")
    args = ap.parse_args()
    out = tempfile.mkdtemp(prefix="tpsim-startup-")
    report = {"load_before": os.getloadavg()[0], "commands": {}}
    try:
        for name, cmd in commands(out).items():
            walls, engines = [], []
            for _ in range(args.runs):
                shutil.rmtree(out, ignore_errors=True)
                t = time.perf_counter()
                p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                walls.append(time.perf_counter() - t)
                if p.returncode != 0:
                    sys.exit(f"{name}: exit {p.returncode}\n{p.stderr}")
                m = re.search(r"engine ([0-9.]+) s", p.stdout)
                if m:
                    engines.append(float(m.group(1)))
            row = {"wall_s": statistics.median(walls), "min_s": min(walls)}
            line = f"{name:38s} {row['wall_s']:.3f} s (min {row['min_s']:.3f})"
            if engines:
                row["engine_s"] = statistics.median(engines)
                row["overhead_s"] = statistics.median(w - e for w, e in zip(walls, engines))
                line += f"  engine {row['engine_s']:.3f} s, overhead {row['overhead_s']:.3f} s"
            report["commands"][name] = row
            print(line, flush=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    report["load_after"] = os.getloadavg()[0]
    print(f"load average {report['load_before']:.1f} -> {report['load_after']:.1f}, median of {args.runs}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
