"""Regenerates the figures that docs/workbench.md shows (run from the checkout's root):

    python docs/figures/generate.py

Study C shortened (60 s, 3 runs) and the [[cases]] example of docs/workbench.md, drawn with
the report's default figures and saved as the report saves them; and the still of the network
movie: one 500 s run of study C (TCP, 8 background flows, 10 m/s, ns-2's agents) at 250 s with
node 34 under the pointer, taken in headless Chromium (needs chromium, chromedriver and
selenium), reduced to 128 colours. It prints the sizes of the movie's files.
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


def movie_still(out: Path) -> None:
    """Runs study C's movie run, writes its movie and saves the still as ``out``."""
    import shutil
    import tempfile

    from PIL import Image
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains

    from tpsim.movie import write_movie

    tmp = Path(tempfile.mkdtemp())
    res = tpsim.run(ROOT / "scenarios" / "study-c-manet-speed.toml", runs=1, out=tmp / "c500", report=False,
                    set=["output.animation=true"],
                    sweep=[("nodes.mobility.speed", [["10m/s", "10m/s"]]), ("background.flows", [8]),
                           ("flows.0.transport", ["tcp"]), ("simulation.stack", ["ns2"])])
    page = write_movie(res, tmp / "c500" / "movie.html")
    run_file = next((tmp / "c500" / "runs").glob("*.json"))
    for f in (tmp / "c500" / "animation.parquet", page, run_file):
        print(f"{f.name}: {f.stat().st_size} bytes")
    print(f"rows: {res.animation.height}")
    opts = Options()
    opts.binary_location = shutil.which("chromium")
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,1300", "--hide-scrollbars"]:
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    try:
        driver.get(page.as_uri())
        driver.execute_script("document.querySelector('h1').style.display = 'none';")
        root = driver.find_element("css selector", ".tpsim-movie")
        driver.execute_script("var s = arguments[0].querySelector('.mv-seek'); s.value = 500;"
                              "s.dispatchEvent(new Event('input'));", root)
        ActionChains(driver).move_to_element(driver.find_elements("css selector", ".mv-node")[34]).perform()
        root.screenshot(str(tmp / "still.png"))
    finally:
        driver.quit()
    Image.open(tmp / "still.png").convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT) \
        .save(out, optimize=True)
    print(out)
    shutil.rmtree(tmp)


def main() -> None:
    c = tpsim.run(ROOT / "scenarios" / "study-c-manet-speed.toml", runs=3, set=["simulation.duration=60s"], jobs=2)
    draw(c, "goodput_kbps-ns2", HERE / "study-c-goodput.png")  # one figure per stack: ns-2.35's agents
    cases = tpsim.run(tpsim.Scenario(CASES, "cases-demo.toml"), jobs=2)
    draw(cases, "goodput_kbps", HERE / "cases-goodput.png")
    movie_still(HERE / "network-movie.png")


if __name__ == "__main__":
    main()
