"""Regenerates the figures that docs/workbench.md shows (run from the checkout's root):

    python docs/figures/generate.py

Study C shortened (60 s, 3 runs) and the [[cases]] example of docs/workbench.md, drawn with
the report's default figures and saved as the report saves them.
"""

from __future__ import annotations

from pathlib import Path

import tpsim
from tpsim.plot import save
from tpsim.report import figure_plan

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

CASES = """
[simulation]
name = "cases-demo"
duration = "10s"
runs = 3
sizes = "ns2"

[nodes]
count = 2

[[links]]
nodes = [0, 1]
rate = "1Mbps"
delay = "20ms"
loss = 0.01

[[flows]]
src = 0
dst = 1
transport = "udp"
app = { kind = "cbr", size = "1000B", interval = "10ms" }

[[cases]]
name = "TCP, bulk"
"flows.0.transport" = "tcp"
"flows.0.app" = { kind = "bulk", size = "1000B" }

[[cases]]
name = "UDP, CBR"
"flows.0.transport" = "udp"
"flows.0.app" = { kind = "cbr", size = "1000B", interval = "10ms" }

[sweep]
"links.0.delay" = ["10ms", "20ms", "50ms", "100ms"]
"""


def draw(res: tpsim.Results, stem: str, out: Path) -> None:
    """Saves the report's figure ``stem`` as ``out`` (a PNG, as the report writes it)."""
    for name, make in figure_plan(res):
        if name == stem:
            for path in save(make(), out.with_suffix(""), ["png"]):
                print(path)
            return
    raise SystemExit(f"no figure {stem}")


def main() -> None:
    c = tpsim.run(ROOT / "scenarios" / "study-c-manet-speed.toml", runs=3, set=["simulation.duration=60s"], jobs=2)
    draw(c, "goodput_kbps", HERE / "study-c-goodput.png")
    cases = tpsim.run(tpsim.Scenario(CASES, "cases-demo.toml"), jobs=2)
    draw(cases, "goodput_kbps", HERE / "cases-goodput.png")


if __name__ == "__main__":
    main()
