"""From run to paper: the studies' figures have human labels with units and numeric axes,
PDFs embed TrueType fonts, reports load cleanly in a browser with a table of contents, cases
run as one study, stored results rebuild the report, and the README's example runs as a
script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import polars as pl
import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

import tpsim
from conftest import ROOT, SCENARIOS, STUDY_A_RUNS_2, STUDY_D_RUNS_2, cli, cli_once, one_link, require_tool
from tpsim.labels import axis_for, fmt_seconds, key_label, metric_display
from tpsim.plot import MAX_SERIES

#: The reference studies, shortened (few runs, short durations) through the command line.
STUDIES = {
    "a": list(STUDY_A_RUNS_2),
    # A list value on the command line: two speeds of the study's [v, v] ranges.
    "c": ["run", str(SCENARIOS / "study-c-manet-speed.toml"), "--runs", "2", "--set", "simulation.duration=30s",
          "--sweep", "nodes.mobility.speed=[5m/s,5m/s],[20m/s,20m/s]", "-j", "2"],
    "d": list(STUDY_D_RUNS_2),
}

#: A label with a human name and a unit: no column names (underscores), a unit in parentheses.
HUMAN_WITH_UNIT = re.compile(r"^[^_]+ \([^()]+\)$")

CASES = one_link(
    "ns2",
    app='{ kind = "cbr", size = "1000B", interval = "10ms" }',
    link_extra='loss = 0.01',
    duration="5s",
    extra="runs = 2",
).replace('rate = "256kbps"', 'rate = "1Mbps"') + """
# Paired settings: TCP carries a bulk transfer, UDP a CBR stream.
[[cases]]
name = "TCP, bulk"
"flows.0.transport" = "tcp"
"flows.0.app" = { kind = "bulk", size = "1000B" }

[[cases]]
name = "UDP, CBR"
"flows.0.transport" = "udp"
"flows.0.app" = { kind = "cbr", size = "1000B", interval = "10ms" }

[sweep]
"links.0.delay" = ["10ms", "20ms", "50ms"]
"""


class _Studies(Mapping):
    """The output directories of the shortened studies A, C and D by name, each run when a
    test first asks for it, once per test session (:func:`conftest.cli_once`: the xdist
    workers share them, and test_study_d.py shares study D's). Tests only read them."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._factory = tmp_path_factory

    def __getitem__(self, name: str) -> Path:
        d, p = cli_once(self._factory, *STUDIES[name])
        assert p.returncode == 0, p.stderr
        # The warning-free path: nothing on stderr (no progress bar off a terminal, no
        # library warnings).
        assert p.stderr == "", p.stderr
        return d

    def __iter__(self) -> Iterator[str]:
        return iter(STUDIES)

    def __len__(self) -> int:
        return len(STUDIES)


@pytest.fixture(scope="module")
def studies(tmp_path_factory) -> Mapping[str, Path]:
    """The output directories of the shortened studies A, C and D (each run once)."""
    return _Studies(tmp_path_factory)


#: Study D's transport key (one transport for both directions' flows) and size key.
DKEY = "flows.0.transport + flows.1.transport"
DSIZE = "flows.0.app.size + flows.1.app.size"


def swept(study: str, key: str) -> list:
    """The values the study's scenario file sweeps ``key`` over (transports join the studies
    as they are built)."""
    name = {"a": "study-a-sensor-interval", "c": "study-c-manet-speed", "d": "study-d-wired-voip"}[study]
    return tomllib.loads((SCENARIOS / f"{name}.toml").read_text(encoding="utf-8"))["sweep"][key]


def figures(d: Path) -> list[dict]:
    return json.loads((d / "figures" / "figures.json").read_text(encoding="utf-8"))


def test_every_default_figure_has_human_labels_with_units_and_a_numeric_x(studies):
    expected_x = {"a": ("reporting interval (s)", [1.0, 2.0, 5.0, 10.0, 20.0]), "c": ("node speed (m/s)", [5.0, 20.0]),
                  "d": ("message size (B)", [64.0, 128.0, 256.0, 512.0])}
    for name, d in studies.items():
        figs = figures(d)
        assert len(figs) >= 8, name
        assert {p.name for p in (d / "figures").glob("*.png")} == {f["name"] + ".png" for f in figs}
        for f in figs:
            what = f"study {name}, {f['name']}"
            assert HUMAN_WITH_UNIT.match(f["ylabel"]), (what, f["ylabel"])
            assert "Aggregation:" in f["caption"] and f["aggregation"], what
            assert len(f["series"]) <= MAX_SERIES, (what, f["series"])
            if f["kind"] == "timeseries":
                assert f["xlabel"] == "time (s)", what
                continue
            label, xs = expected_x[name]
            assert f["xlabel"] == label and f["x_numeric"] and f["kind"] == "line", (what, f["xlabel"], f["kind"])
            assert f["x_positions"] == xs, (what, f["x_positions"])
            if name == "d":  # one line per transport, each stack apart
                assert f["hue"] == [DKEY] and len(f["series"]) == len(swept("d", DKEY)), what
    # Study C: the main flow and the background flows are never averaged together.
    c = {f["name"]: f for f in figures(studies["c"])}
    assert c["goodput_kbps-ns2"]["facets"] == ["main flows", "background flows"]
    assert "roles never mixed" in c["goodput_kbps-ns2"]["aggregation"]
    # Study C's 4 transports x 2 background settings fill a legend: each stack gets its own
    # figures, titled with it.
    for stack in ("ns2", "modern"):
        assert f"stack = {stack}" in c[f"goodput_kbps-{stack}"]["title"], c[f"goodput_kbps-{stack}"]["title"]
    assert "goodput_kbps" not in c
    # Two hue columns: one colour per transport, whatever the background.
    g = c["goodput_kbps-modern"]
    assert g["hue"] == ["flows.0.transport", "background.flows"]
    colour = {}
    for name, col in zip(g["series"], g["colors"]):
        colour.setdefault(name.split(",")[0], set()).add(col)
    assert len(colour) == len(swept("c", "flows.0.transport")) and all(len(v) == 1 for v in colour.values()), g
    assert len({next(iter(v)) for v in colour.values()}) == len(colour)
    assert "network-wide" in c["network-mac_frames-ns2"]["aggregation"]
    assert c["delay_mean_s-ns2"]["ylabel"] in ("mean end-to-end delay (ms)", "mean end-to-end delay (s)")
    # Study A: 56 queues, drawn as one band of quantiles per bin.
    q = {f["name"]: f for f in figures(studies["a"])}["timeseries-queue_packets"]
    assert len(q["series"]) < MAX_SERIES and "as a band" in q["aggregation"]
    assert q["bands"] == [{"role": None, "members": 56, "unit": "queue", "center": "median", "inner": [25, 75], "outer": [5, 95]}]


def test_roles_in_the_flows_table(studies):
    flows = pl.read_parquet(studies["c"] / "flows.parquet")
    with_bg = flows.filter(pl.col("background.flows") == 8)
    assert set(with_bg.filter(pl.col("flow") == 0)["role"]) == {"main"}
    assert set(with_bg.filter(pl.col("flow") > 0)["role"]) == {"background"}
    assert set(flows.filter(pl.col("background.flows") == 0)["role"]) == {"main"}


def test_study_reports_load_in_headless_chromium_with_contents_and_every_figure(studies):
    chromium = require_tool("chromium")
    driver_path = require_tool("chromedriver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        for name, d in studies.items():
            figs = figures(d)
            driver.get((d / "report.html").as_uri())
            assert "tpsim report" in driver.title
            toc = driver.find_elements("css selector", "nav#toc a")
            targets = [a.get_attribute("href").split("#", 1)[1] for a in toc]
            assert {"figures", "tables", "scenario"} <= set(targets), targets
            for t in targets:  # every entry leads somewhere
                assert driver.find_elements("id", t), (name, t)
            for f in figs:  # every figure is there, listed in the contents and loaded
                assert f"fig-{f['name']}" in targets, (name, f["name"])
                img = driver.find_element("css selector", f"figure#fig-{f['name']} img")
                assert driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img), f["name"]
            assert len(driver.find_elements("css selector", "figure img")) == len(figs)
            # Figures come first, then the tables; the long per-flow table is collapsed.
            order = driver.execute_script(
                "return [document.getElementById('figures'), document.getElementById('tables')]"
                ".map(e => e.getBoundingClientRect().top + window.scrollY)")
            assert order[0] < order[1]
            headers = " ".join(h.get_attribute("textContent") for h in driver.find_elements("css selector", "#table-flows th"))
            assert "transport" in headers and "role" in headers and "(kbit/s)" in headers, headers
            if name == "a":
                assert driver.find_elements("css selector", "#table-flows details"), "48 sensors x 10 points: collapsed"
            assert driver.find_element("id", "reproduce").text.startswith("tpsim run ")
            errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
            assert errors == [], (name, errors)
    finally:
        driver.quit()


def _fonts(pdf: Path) -> list[tuple[str, list[str], bool]]:
    """(font subtype, descendant subtypes, embedded) of every font of a PDF."""
    pypdf = pytest.importorskip("pypdf")
    out = []

    def walk(res):
        if res is None:
            return
        res = res.get_object()
        for f in (res.get("/Font") or {}).values():
            f = f.get_object()
            desc = [d.get_object() for d in f.get("/DescendantFonts", [])]
            fd = [x.get("/FontDescriptor") for x in [f, *desc] if x.get("/FontDescriptor") is not None]
            embedded = any(any(k in d.get_object() for k in ("/FontFile", "/FontFile2", "/FontFile3")) for d in fd)
            out.append((str(f.get("/Subtype")), [str(d.get("/Subtype")) for d in desc], embedded))
        for x in (res.get("/XObject") or {}).values():
            walk(x.get_object().get("/Resources"))

    for page in pypdf.PdfReader(str(pdf)).pages:
        walk(page.get("/Resources"))
    return out


def test_plot_writes_a_pdf_with_embedded_truetype_fonts(studies, tmp_path):
    stem = tmp_path / "goodput"
    p = cli("plot", str(studies["c"]), "--metric", "goodput_kbps", "--format", "pdf", "-o", str(stem),
            "--xlabel", "speed (m/s)", "--ylabel", "goodput (kbit/s)", "--title", "")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(stem) + ".pdf"]
    fonts = _fonts(stem.with_suffix(".pdf"))
    assert fonts
    for subtype, desc, embedded in fonts:
        # Type 42 is TrueType; matplotlib writes it as a Type0 font over a CIDFontType2.
        assert subtype in ("/TrueType", "/Type1") or (subtype == "/Type0" and desc and all(d == "/CIDFontType2" for d in desc)), fonts
        assert embedded, fonts
    # The report's figures are PDFs of the same kind.
    for subtype, desc, embedded in _fonts(studies["d"] / "figures" / "goodput_kbps-ns2.pdf"):
        assert subtype != "/Type3" and "/Type3" not in desc and embedded


def test_plot_options_and_did_you_mean(studies, tmp_path):
    d = studies["d"]
    p = cli("plot", str(d), "--metric", "goodpt_kbps")
    assert p.returncode == 2
    assert "did you mean goodput_kbps" in p.stderr and "flow metrics:" in p.stderr and "network metrics:" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = cli("plot", str(d), "--metric", "delay_mean_s", "--x", DKEY, "--hue", "flow", "--kind", "points",
            "--format", "png,svg", "-o", str(tmp_path / "custom"))
    assert p.returncode == 0, p.stderr
    assert [Path(x).suffix for x in p.stdout.split()] == [".png", ".svg"]
    p = cli("plot", str(studies["c"]), "--metric", "pdr", "--x", "speed")
    assert p.returncode == 2 and "did you mean nodes.mobility.speed" in p.stderr and "swept keys:" in p.stderr, p.stderr
    n = len(swept("d", DKEY)) * len(swept("d", "simulation.stack")) * len(swept("d", DSIZE))
    p = cli("plot", str(d), "--series", "goodput_kbps", "--point", str(n))
    assert p.returncode == 2 and f"it has points 0-{n - 1} and runs 0" in p.stderr, p.stderr
    p = cli("plot", str(d), "--metric", "pdr", "--facet", "nope")
    assert p.returncode == 2 and "--facet: no column 'nope'" in p.stderr
    p = cli("plot", str(d), "--metric", "pdr", "--format", "gif")
    assert p.returncode == 2 and "unknown format" in p.stderr


def test_report_is_rebuilt_from_stored_results(studies, tmp_path):
    import shutil

    d = tmp_path / "d"
    shutil.copytree(studies["d"], d)
    (d / "report.html").unlink()
    shutil.rmtree(d / "figures")
    p = cli("report", str(d))
    assert p.returncode == 0, p.stderr
    text = (d / "report.html").read_text(encoding="utf-8")
    assert "study-d-wired-voip" in text and "tpsim run " in text and 'id="toc"' in text
    assert len(figures(d)) == len(figures(studies["d"]))
    res = tpsim.Results.read(d)
    assert res.param_keys == [DKEY, "simulation.stack", DSIZE]
    assert res.flows.equals(pl.read_parquet(studies["d"] / "flows.parquet"))
    assert res.summary().height == pl.read_csv(studies["d"] / "summary.csv").height
    assert res.base.name == "study-d-wired-voip" and [pt.params for pt in res.points] == [
        {DKEY: t, "simulation.stack": s, DSIZE: z} for t in swept("d", DKEY) for s in swept("d", "simulation.stack")
        for z in swept("d", DSIZE)]
    assert res.command.startswith("tpsim run ")
    p = cli("report", str(tmp_path / "nothing-here"))
    assert p.returncode == 2 and "not a directory" in p.stderr


def test_cases_run_as_one_study_and_the_figures_show_both(tmp_path):
    f = tmp_path / "cases.toml"
    f.write_text(CASES)
    out = tmp_path / "o"
    p = cli("run", str(f), "-o", str(out), "-j", "2")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert "6 point(s) x 2 run(s)" in p.stdout
    flows = pl.read_parquet(out / "flows.parquet")
    by_case = {c: set(zip(g["transport"], g["app"])) for (c,), g in flows.group_by(["case"])}
    assert by_case == {"TCP, bulk": {("tcp", "bulk")}, "UDP, CBR": {("udp", "cbr")}}
    figs = {x["name"]: x for x in figures(out)}
    g = figs["goodput_kbps"]
    assert g["xlabel"] == "link delay (ms)" and g["x_positions"] == [10.0, 20.0, 50.0]
    assert g["series"] == ["TCP, bulk", "UDP, CBR"] and g["hue"] == ["case"]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "TCP, bulk" in report and "UDP, CBR" in report and "[[cases]]" in report
    res = tpsim.Results.read(out)
    assert res.points[0].case["settings"]["flows.0.transport"] == "tcp"


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "change, args, where, what",
    [
        # where: (text of the line the error names, which occurrence)
        (('"flows.0.app" = { kind = "bulk", size = "1000B" }', '"flows.0.app.sise" = "1B"'), [], ('"flows.0.app.sise"', 0), "unknown key"),
        (('"flows.0.transport" = "tcp"', '"links.0.delay" = "5ms"'), [], ('"links.0.delay" = "5ms"', 0), "also sets this key"),
        # A case that makes the scenario invalid (bulk over UDP): the error is at the case's line.
        (('"flows.0.transport" = "tcp"', '"flows.0.transport" = "udp"'), [], ('"flows.0.transport" = "udp"', 0), "set by case 'TCP, bulk'"),
        (('name = "UDP, CBR"', 'name = "TCP, bulk"'), [], ("[[cases]]", 1), "two cases are named"),
        (None, ["--set", "links.0.delay=5ms"], None, "the scenario's [sweep] also sets `links.0.delay`"),
        (None, ["--set", "flows.0.app.size=5B"], None, "case 'TCP, bulk'"),
        (None, ["--sweep", "flows.0.transport=udp,tcp"], None, "--sweep flows.0.transport also sets this key"),
    ],
)
def test_errors_in_cases_name_file_and_line(tmp_path, change, args, where, what):
    text = CASES if change is None else CASES.replace(*change)
    f = tmp_path / "c.toml"
    f.write_text(text)
    p = cli("run", str(f), "-o", str(tmp_path / "o"), *args)
    assert p.returncode == 2, p.stderr
    assert what in p.stderr, p.stderr
    if where is not None:
        needle, which = where
        line = [i for i, l in enumerate(text.splitlines(), 1) if needle in l][which]
        assert re.search(rf"c\.toml(?: \[sweep point [^]]*\])?:{line}:\d+:", p.stderr), (line, p.stderr)
    assert not (tmp_path / "o").exists()


def test_set_of_a_swept_key_is_an_error_not_ignored(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(one_link() + '\n[sweep]\n"flows.0.app.size" = ["64B", "128B"]\n')
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--set", "flows.0.app.size=100B")
    assert p.returncode == 2 and "[sweep] also sets `flows.0.app.size`" in p.stderr and "s.toml:" in p.stderr, p.stderr
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--set", "flows.0.app=[1]", "--no-report")
    assert p.returncode == 2 and "also sets" in p.stderr
    # --sweep replaces the file's values instead.
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--sweep", "flows.0.app.size=100B", "--no-report")
    assert p.returncode == 0, p.stderr


def test_list_values_on_the_command_line():
    from tpsim.sweep import parse_set, parse_sweep

    assert parse_sweep(["nodes.mobility.speed=[5m/s,5m/s],[10m/s,10m/s]"]) == [
        ("nodes.mobility.speed", [["5m/s", "5m/s"], ["10m/s", "10m/s"]])]
    assert parse_sweep(['nodes.mobility.speed=["5m/s", "5m/s"]']) == [("nodes.mobility.speed", [["5m/s", "5m/s"]])]
    assert parse_sweep(["a=1;2", 'b="x,y",z']) == [("a", [1, 2]), ("b", ["x,y", "z"])]
    assert parse_set(["k=[5m/s, 5m/s]", "t=10ms", 'app={ kind = "bulk" }', "d=2024-01-01"]) == [
        ("k", ["5m/s", "5m/s"]), ("t", "10ms"), ("app", {"kind": "bulk"}), ("d", "2024-01-01")]


def test_engine_time_counts_only_the_runs_made_now(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(one_link(duration="200s", extra="runs = 2"))
    out = tmp_path / "o"
    first = cli("run", str(f), "-o", str(out), "--no-report", "-j", "1")
    second = cli("run", str(f), "-o", str(out), "--no-report", "-j", "1")
    assert "ran 2, reused 0" in first.stdout and "ran 0, reused 2" in second.stdout
    assert "engine 0.000 s" in second.stdout, second.stdout


def test_a_long_run_reports_its_simulated_time():
    # 100,000 messages per simulated second for 40 s: about half a second of engine time, and
    # the engine reports at most every 0.2 s of it.
    sc = tpsim.Scenario(one_link(app='{ kind = "cbr", size = "100B", interval = "10us" }', duration="40s"))
    calls: list[tuple[int, float, float]] = []
    res = tpsim.run(sc, sim_progress=lambda job, now_s, end_s: calls.append((job, now_s, end_s)))
    assert res.ran_now == 1 and calls, "no progress from a run of about 0.5 s"
    assert all(job == 0 and 0 < now <= end and end >= 40.0 for job, now, end in calls), calls
    assert [now for _, now, _ in calls] == sorted(now for _, now, _ in calls)
    with pytest.raises(TypeError, match="sim_progress"):
        tpsim.run(sc, sim_progress=3)


def test_help_and_version_options():
    p = cli("-h")
    assert p.returncode == 0 and "Usage" in p.stdout and "report" in p.stdout
    p = cli("run", "-h")
    assert p.returncode == 0 and "--sweep" in p.stdout
    # Captured (not a terminal), help is 120 columns wide, not rich's 80: an option's help
    # stays on its line.
    assert max(len(line) for line in p.stdout.splitlines()) == 120, p.stdout
    assert any("Replications per sweep point (default: simulation.runs)." in line for line in p.stdout.splitlines())
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == tpsim.api.build_id()


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_readme_python_example_runs_as_a_script(tmp_path):
    # Study D with two of its transports and two of its sizes (both stacks): the script's
    # steps (runs in worker processes under the main guard, the report, the stored results
    # read back) on 16 points x 10 runs instead of 96 x 10.
    study = (SCENARIOS / "study-d-wired-voip.toml").read_text()
    for full, part in [('["udp", "tcp", "sctp", "tfrc", "dccp-ccid2", "dccp-ccid3"]', '["udp", "tcp"]'),
                       ('["64B", "128B", "256B", "512B"]', '["64B", "512B"]')]:
        assert study.count(full) == 1, full
        study = study.replace(full, part)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "study-d-wired-voip.toml").write_text(study)
    script = tmp_path / "example.py"
    script.write_text(_readme_example())
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out-d" / "report.html").is_file() and list((tmp_path / "out-d" / "figures").glob("goodput_kbps*.pdf"))
    # Its replications are not copies of one run (study D alone is deterministic): with the
    # example's random loss, UDP's deliveries differ between the 10 runs of every point.
    flows = pl.read_parquet(tmp_path / "out-d" / "flows.parquet").filter(pl.col("transport") == "udp")
    spread = flows.group_by("point").agg(pl.col("rx_packets").n_unique().alias("distinct"))
    assert spread.height > 0 and (spread["distinct"] > 1).all(), spread


def test_a_script_without_main_guard_gets_one_clear_error(tmp_path):
    (tmp_path / "s.toml").write_text(one_link(extra="runs = 2"))
    script = tmp_path / "unguarded.py"
    script.write_text("import tpsim\nres = tpsim.run('s.toml', jobs=2)\nprint('ran', res.flows.height)\n")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 1
    assert "BrokenProcessPool" not in p.stderr and "bootstrapping" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("tpsim.api.MainGuardError:") and 'if __name__ == "__main__":' in last, p.stderr
    assert p.stderr.count("Traceback") == 1


def test_labels_from_the_registry_and_values_with_units():
    assert metric_display("goodput_kbps", [100.0]).label == "goodput (kbit/s)"
    d = metric_display("delay_mean_s", [0.054, 0.2])
    assert d.label == "mean end-to-end delay (ms)" and d.scale == 1000
    assert metric_display("delay_mean_s", [2.5]).label == "mean end-to-end delay (s)"
    assert metric_display("pdr", [0.9]).label == "packet delivery ratio (%)"
    d = metric_display("pacing_rate_bps", [3.3e7, 9.6e6])
    assert d.label == "pacing rate (Mbit/s)" and d.scale == 1e-6
    assert metric_display("btlbw_bps", [600.0]).label == "BBR bottleneck bandwidth BtlBw (bit/s)"
    assert metric_display("bbr_state", [2.0]).label == (
        "BBR state (0 Startup, 1 Drain, 2 ProbeBW (v3: DOWN), 3 ProbeRTT, 4 CRUISE, 5 REFILL, 6 UP)")
    assert key_label("nodes.mobility.speed", ['["5m/s", "5m/s"]', '["10m/s", "10m/s"]']) == "node speed (m/s)"
    assert axis_for(['["5m/s", "5m/s"]', '["10m/s", "10m/s"]']).positions == [5.0, 10.0]
    assert key_label("sensors.interval", ["1s", "20s"]) == "reporting interval (s)"
    ax = axis_for(["500ms", "1s", "2s"])  # mixed units: one unit on the axis
    assert ax.numeric and ax.unit == "s" and ax.positions == [0.5, 1.0, 2.0]
    assert axis_for(["udp", "tcp"]).numeric is False
    assert axis_for([0, 8]).positions == [0.0, 8.0]
    assert key_label("flows.1.app.size", ["64B", "128B"]) == "message size (flow 1) (B)"
    assert fmt_seconds(30_000_000_000) == "30s" and fmt_seconds(20_166_666_636) == "20.166666636s"


def test_api_writes_the_report_and_reads_results_back(tmp_path):
    out = tmp_path / "o"
    res = tpsim.run(tpsim.Scenario(one_link(extra="runs = 2")), out=out, sweep=[("flows.0.app.size", ["64B", "128B"])], report=True)
    assert (out / "report.html").is_file()
    assert res.ran_now == 4
    again = tpsim.Results.read(out)
    assert again.flows.equals(res.flows) and again.network.equals(res.network)
    assert again.summary().select("mean").equals(res.summary().select("mean"))
    path = again.write_report(tmp_path / "elsewhere")
    assert path.is_file() and "flows.0.app.size" in path.read_text(encoding="utf-8")


def test_columns_the_registry_does_not_know_keep_their_raw_name(tmp_path):
    # A new transport's columns (the engine may add them before the registry knows them).
    from tpsim.plot import metric_figure, plt

    res = tpsim.run(tpsim.Scenario(one_link(extra="runs = 2")), sweep=[("flows.0.app.size", ["64B", "128B"])])
    res.flows = res.flows.with_columns((pl.col("goodput_kbps") * 1000).alias("future_rate_bps"))
    res.network = res.network.with_columns(pl.lit(3).alias("ccid_switches"))
    out = res.write(tmp_path / "o")
    assert set(res.summary().filter(pl.col("metric") == "future_rate_bps")["table"]) == {"flows"}
    html = res.write_report().read_text(encoding="utf-8")
    assert "<th>future_rate_bps</th>" in html and "<th>ccid_switches</th>" in html
    fig = metric_figure(res.flows, "future_rate_bps", "flows.0.app.size")
    assert fig.tpsim.ylabel == "future_rate_bps" and fig.tpsim.xlabel == "message size (B)"
    plt.close(fig)
    p = cli("plot", str(out), "--metric", "ccid_switches", "--format", "pdf", "-o", str(tmp_path / "ccid"))
    assert p.returncode == 0 and (tmp_path / "ccid.pdf").is_file(), p.stderr


def test_workbench_doc_shows_the_figures_it_names():
    text = (ROOT / "docs" / "workbench.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert len(images) >= 2
    for rel in images:
        png = ROOT / "docs" / rel
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", rel
    # The script that draws them is the one next to them.
    assert (ROOT / "docs" / "figures" / "generate.py").is_file()


def test_titles_name_the_values_of_keys_held_fixed(studies):
    from tpsim.plot import metric_figure, plt

    res = tpsim.Results.read(studies["c"])
    one = res.flows.filter((pl.col("background.flows") == 8) & (pl.col("flows.0.transport") == "udp")
                           & (pl.col("simulation.stack") == "modern"))
    fig = metric_figure(one, "goodput_kbps", "nodes.mobility.speed", params=res.param_keys)
    assert fig.tpsim.title == "Goodput vs node speed (background flows = 8, transport = udp, stack = modern)"
    assert fig.tpsim.hue == [] and fig.tpsim.facets == ["main flows", "background flows"]
    # Long legend entries within the figure's width; more series than a legend holds are split
    # into panels by the last swept keys, none drawn in grey as "other".
    from tpsim.plot import MAX_SERIES

    fig = metric_figure(res.network, "mac_frames", "nodes.mobility.speed", params=res.param_keys)
    n = 2 * len(swept("c", "flows.0.transport")) * len(swept("c", "simulation.stack"))
    assert len(fig.legends) == 1 and not any(s.startswith("other") for s in fig.tpsim.series)
    if n > MAX_SERIES:
        assert fig.tpsim.facets and len(fig.tpsim.series) * len(fig.tpsim.facets) == n
    else:
        assert len(fig.tpsim.series) == n
    assert fig.legends[0].get_window_extent(fig.canvas.get_renderer()).width <= fig.bbox.width
    plt.close("all")
    ts = {f["name"]: f for f in figures(studies["c"])}["timeseries-goodput_kbps"]
    assert ts["title"].startswith("Goodput: node speed = 5 m/s, background flows = 0, transport = udp, stack = ns2; run 0"), ts["title"]


def test_study_a_report_averages_every_metric_over_the_intervals(studies):
    """Study A's second view: each metric averaged over the reporting intervals, one row per
    transport and stack (each run's mean over the intervals, then mean and CI over runs)."""
    html = (studies["a"] / "report.html").read_text(encoding="utf-8")
    i = html.index('id="table-averaged"')
    table = html[i:html.index("</table>", i)]
    assert "Averaged over reporting interval" in table
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    assert {(c[0].strip(), c[1].strip()) for c in cells} == {
        (t, s) for t in swept("a", "sensors.transport") for s in swept("a", "simulation.stack")}
    # The value is the mean over the intervals of the per-point means (one run here per point
    # and interval): check UDP's goodput under ns2 against the flows table.
    flows = pl.read_parquet(studies["a"] / "flows.parquet")
    udp = flows.filter((pl.col("sensors.transport") == "udp") & (pl.col("simulation.stack") == "ns2"))
    per_run = udp.group_by("run").agg(pl.col("goodput_kbps").mean())["goodput_kbps"].to_list()
    want = sum(per_run) / len(per_run)
    got = float(next(c for c in cells if c[0].strip() == "udp" and c[1].strip() == "ns2")[3].split()[0])
    assert abs(got - want) <= 5e-4 * want, (got, want)
