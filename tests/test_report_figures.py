"""The report's figures at scale: many flow directions or queues are drawn as quantile bands
(a few artists, whatever their number) and many flow directions on x as their cumulative
distribution; swept values are never merged into one band or distribution; the figures drawn
by worker processes are byte for byte those drawn in one process."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import tpsim
from conftest import ROOT, once
from tpsim.plot import MAX_SERIES, draw, metric_spec, timeseries_spec

#: 30 UDP flows over one link, some of them too fast for it (so values differ per flow).
MANY = """
[simulation]
duration = "3s"
runs = 1
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "1Mbps"
delay = "10ms"
queue = 20
""" + "".join(f"""
[[flows]]
src = 0
dst = 1
transport = "udp"
app = {{ kind = "cbr", size = "{200 + 20 * i}B", interval = "{5 + i}ms" }}
""" for i in range(30))


def _ts(n_flows: int, roles: dict[int, str] | None = None, bins: int = 6) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A goodput time series of one run: flow f has value f * 10 + bin in each 1 s bin (flow
    3 has no value in bin 2); and its flows table (flow, direction, role)."""
    rows = []
    for f in range(n_flows):
        for b in range(bins):
            rows.append({"point": 0, "run": 0, "seed": 1, "series": "goodput_kbps", "flow": f, "link": None, "node": None,
                         "direction": "fwd", "time_s": float(b), "value": None if (f == 3 and b == 2) else float(f * 10 + b)})
    ts = pl.DataFrame(rows, schema={"point": pl.UInt32, "run": pl.UInt32, "seed": pl.UInt64, "series": pl.Utf8, "flow": pl.UInt32,
                                    "link": pl.UInt32, "node": pl.UInt32, "direction": pl.Utf8, "time_s": pl.Float64,
                                    "value": pl.Float64})
    roles = roles or {}
    flows = pl.DataFrame({"point": [0] * n_flows, "run": [0] * n_flows, "flow": list(range(n_flows)),
                          "direction": ["fwd"] * n_flows, "role": [roles.get(f, "main") for f in range(n_flows)]},
                         schema={"point": pl.UInt32, "run": pl.UInt32, "flow": pl.UInt32, "direction": pl.Utf8, "role": pl.Utf8})
    return ts, flows


def test_many_flow_directions_are_one_band_of_quantiles_per_bin():
    ts, flows = _ts(2000)
    spec, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    items = spec["panels"][0]["items"]
    # Two bands and the median line, not 2000 lines.
    assert [it["kind"] for it in items] == ["band", "band", "line"]
    assert info.bands == [{"role": "main", "members": 2000, "unit": "flow direction", "center": "median",
                           "inner": [25, 75], "outer": [5, 95]}]
    assert "band" in info.aggregation and "5–95 %" in info.aggregation and "left out" in info.aggregation
    assert len(info.series) <= MAX_SERIES and info.series[0] == "median of 2000 flow directions"
    # The values are the quantiles of the flows' values in each bin (linear interpolation),
    # the bin without flow 3's value over the other 1999.
    outer, inner, mid = items
    for b in range(6):
        vals = np.array([f * 10 + b for f in range(2000) if not (f == 3 and b == 2)], dtype=float)
        assert mid["y"][b] == pytest.approx(np.median(vals))
        assert (inner["lo"][b], inner["hi"][b]) == pytest.approx((np.percentile(vals, 25), np.percentile(vals, 75)))
        assert (outer["lo"][b], outer["hi"][b]) == pytest.approx((np.percentile(vals, 5), np.percentile(vals, 95)))
    # Each bin over its width: the last one ends at 6 s.
    assert mid["x"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    fig = draw(spec, info)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 1 and len(ax.collections) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == info.series


def test_a_few_flow_directions_keep_a_line_each():
    ts, flows = _ts(MAX_SERIES)
    spec, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    assert [it["kind"] for it in spec["panels"][0]["items"]] == ["line"] * MAX_SERIES and info.bands == []
    assert "one line per flow direction" in info.aggregation


def test_roles_get_bands_of_their_own_and_a_small_role_keeps_its_lines():
    # Flow 0 is the main flow; 30 background flows: the main flow a line, the background a band.
    ts, flows = _ts(31, roles={f: "background" for f in range(1, 31)})
    spec, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    kinds = [it["kind"] for it in spec["panels"][0]["items"]]
    assert kinds == ["line", "band", "band", "line"]
    assert [b["role"] for b in info.bands] == ["background"] and info.bands[0]["members"] == 30
    band_mid = spec["panels"][0]["items"][3]
    # The background band leaves the main flow out: its median is the background flows'.
    assert band_mid["y"][0] == pytest.approx(np.median([f * 10 for f in range(1, 31)]))
    # Two large roles: a band each, never one band over both.
    ts, flows = _ts(40, roles={f: "background" for f in range(20, 40)})
    spec, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    assert [(b["role"], b["members"]) for b in info.bands] == [("main", 20), ("background", 20)]
    assert [it["kind"] for it in spec["panels"][0]["items"]] == ["band", "band", "line"] * 2
    mids = [it for it in spec["panels"][0]["items"] if it["kind"] == "line"]
    assert mids[0]["y"][0] == pytest.approx(np.median([f * 10 for f in range(20)]))
    assert mids[1]["y"][0] == pytest.approx(np.median([f * 10 for f in range(20, 40)]))
    assert mids[0]["color"] != mids[1]["color"]


def test_fewer_than_20_members_get_a_min_max_band():
    ts, flows = _ts(12)
    _, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    assert info.bands[0]["outer"] == [0, 100] and "min–max" in info.aggregation


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> tpsim.Results:
    """MANY swept over two link delays, with its report: run once per test session (the xdist
    workers share it: conftest.once), read back by each worker. Tests only read it."""

    def make(d: Path) -> None:
        d.mkdir()
        f = d / "many.toml"
        f.write_text(MANY)
        tpsim.run(f, sweep=[("links.0.delay", ["10ms", "40ms"])], out=d / "o", report=True)

    d, _ = once(tmp_path_factory, "report-figures-many", make)
    return tpsim.Results.read(d / "o")


def test_many_flow_directions_on_x_give_their_distribution_one_line_per_swept_value(many):
    flows = tpsim.plot.with_flow_direction(many.flows)
    spec, info = metric_spec(flows, "goodput_kbps", "flow_direction", params=many.param_keys)
    assert info.kind == "ecdf" and info.xlabel == "goodput (kbit/s)" and info.ylabel == "share of flow directions (%)"
    # The two delays are two distributions (never one over both), each over its 30 flow directions.
    assert info.hue == ["links.0.delay"] and info.series == ["link delay = 10 ms", "link delay = 40 ms"]
    lines = spec["panels"][0]["items"]
    assert len(lines) == 2
    for line, delay in zip(lines, ["10ms", "40ms"]):
        want = sorted(flows.filter(pl.col("links.0.delay") == delay)["goodput_kbps"].to_list())
        assert line["x"][1:] == pytest.approx(want) and line["y"][-1] == 100.0 and len(line["y"]) == 31
    assert "cumulative distribution over the 30 flow directions" in info.aggregation


def test_the_report_of_many_flows_draws_aggregates(many):
    figs = {f["name"]: f for f in json.loads((many.directory / "figures" / "figures.json").read_text(encoding="utf-8"))}
    ts = figs["timeseries-goodput_kbps"]
    assert ts["bands"] and ts["bands"][0]["members"] == 30 and len(ts["series"]) <= MAX_SERIES
    # x is the link delay (swept): one line per flow-averaged value, as before.
    assert figs["goodput_kbps"]["kind"] == "line"


def _digests(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def test_worker_processes_write_the_same_bytes_as_one_process(many, tmp_path):
    from tpsim.report import make_figures

    calls: list[tuple[int, int]] = []
    one = make_figures(many, tmp_path / "one", workers=1)
    two = make_figures(many, tmp_path / "two", workers=2, progress=lambda d, t: calls.append((d, t)))
    assert [f.info.name for f in one] == [f.info.name for f in two]
    a, b = _digests(tmp_path / "one"), _digests(tmp_path / "two")
    assert a == b and len(a) == 2 * len(one) + 1
    # The progress counts every figure, in order.
    n = len(two)
    assert calls[0] == (0, n) and calls[-1] == (n, n) and [d for d, _ in calls] == list(range(n + 1))
    # Drawn again: the same bytes (no dates, no random ids).
    make_figures(many, tmp_path / "again", workers=2)
    assert _digests(tmp_path / "again") == a


def test_a_rebuilt_report_keeps_the_figures_it_would_draw_the_same(many, tmp_path, monkeypatch):
    from tpsim import _draw
    from tpsim.report import make_figures

    figdir = tmp_path / "f"
    first = make_figures(many, figdir, workers=1)
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in figdir.glob("*.p*")}
    drawn: list[Any] = []
    render = _draw.render
    monkeypatch.setattr(_draw, "render", lambda spec, formats: drawn.append(spec) or render(spec, formats))
    again = make_figures(many, figdir, workers=1)
    assert drawn == [] and [f.info.name for f in again] == [f.info.name for f in first]
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in figdir.glob("*.p*")} == before
    # A damaged or missing file is drawn again, and only its figure.
    victim = first[0].files[0]
    victim.write_bytes(b"not a figure")
    (figdir / first[1].files[1].name).unlink()
    make_figures(many, figdir, workers=1)
    assert len(drawn) == 2
    assert {p.name: p.read_bytes() for p in figdir.glob("*.p*")} == {n: b for n, (_, b) in before.items()}
    # Other formats: every figure drawn.
    drawn.clear()
    make_figures(many, figdir, workers=1, formats=("png",))
    assert len(drawn) == len(first)


def test_the_report_process_leaves_matplotlib_to_its_workers(many, tmp_path):
    code = ("import sys, tpsim; from tpsim.report import write_report; "
            f"write_report(tpsim.Results.read({str(many.directory)!r}), {str(tmp_path / 'r')!r}, workers=2); "
            "print('matplotlib' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False" and p.stderr == ""
    assert (tmp_path / "r" / "report.html").is_file()
    assert _digests(tmp_path / "r" / "figures") == _digests(many.directory / "figures")


def test_pdfs_embed_the_cut_down_font_as_truetype(many):
    pypdf = pytest.importorskip("pypdf")
    pdf = pypdf.PdfReader(str(many.directory / "figures" / "goodput_kbps.pdf"))
    fonts = [f.get_object() for f in pdf.pages[0]["/Resources"]["/Font"].values()]
    assert fonts
    for f in fonts:
        assert f["/Subtype"] == "/Type0" and f["/BaseFont"].endswith("+tpsimSans")
        (desc,) = f["/DescendantFonts"]
        assert desc.get_object()["/Subtype"] == "/CIDFontType2" and "/FontFile2" in desc.get_object()["/FontDescriptor"]


def test_the_cut_down_font_is_made_once_in_the_cache(tmp_path, monkeypatch):
    from fontTools.ttLib import TTFont

    from tpsim import _draw

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = _draw.font_file()
    assert path is not None and path.parent == tmp_path / "tpsim"
    font = TTFont(path)
    assert font["name"].getDebugName(1) == "tpsim Sans"
    assert "GSUB" not in font and "kern" in font
    cmap = font.getBestCmap()
    assert all(ord(c) in cmap for c in "Goodput kbit/s µ±≤→ΔΣ") and 0x4E00 not in cmap
    made = path.stat().st_mtime_ns
    assert _draw.font_file() == path and path.stat().st_mtime_ns == made, "made once, then reused"
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/no-such-dir")
    assert _draw.font_file() is None, "no cache directory: DejaVu Sans is used instead"


def test_many_flow_directions_as_series_are_a_band_per_swept_value(many):
    flows = tpsim.plot.with_flow_direction(many.flows)
    spec, info = metric_spec(flows, "goodput_kbps", "links.0.delay", ["flow_direction"], params=many.param_keys)
    items = spec["panels"][0]["items"]
    # 30 flow directions: a band and a median line (not 30 lines); the median at each delay
    # is the median over the flow directions.
    assert [it["kind"] for it in items] == ["band", "band", "line"] and info.series == ["median", "25–75 %", "5–95 %"]
    for pos, delay in zip(items[2]["x"], ["10ms", "40ms"]):
        vals = flows.filter(pl.col("links.0.delay") == delay)["goodput_kbps"].to_numpy()
        assert items[2]["y"][items[2]["x"].index(pos)] == pytest.approx(np.median(vals))
    assert "over the 30 flow directions" in info.aggregation
    # With the delay as a series instead: one band per delay, never one over both.
    spec, info = metric_spec(flows, "goodput_kbps", "transport", ["flow_direction", "links.0.delay"], params=many.param_keys)
    assert [it["kind"] for it in spec["panels"][0]["items"]] == ["band", "band", "line"] * 2
    assert info.series[0].startswith("link delay = 10 ms") and info.series[3].startswith("link delay = 40 ms")


def _render_workers(tag: str) -> set[int]:
    """Running processes of this checkout's render workers (``_draw.py`` on their command line)
    started by commands run with ``TPSIM_TEST_TAG=tag`` in their environment (not those of
    tests running beside this one)."""
    draw = str(Path(tpsim.__file__).resolve().with_name("_draw.py")).encode()
    mark = f"TPSIM_TEST_TAG={tag}".encode()
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (draw in (d / "cmdline").read_bytes() and mark in (d / "environ").read_bytes().split(b"\0")
                        and (d / "stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"):
                    out.add(int(d.name))
            except OSError:
                pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc are Linux's")
def test_render_workers_start_with_the_command_and_die_with_it(tmp_path):
    import os
    import signal
    import time

    from tpsim._pool import workers_for

    if workers_for(None) < 2:
        pytest.skip("one core: the figures are drawn in the command's process")
    from conftest import one_link

    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ, TPSIM_TEST_TAG=tag)
    f = tmp_path / "slow.toml"
    f.write_text(one_link(app='{ kind = "cbr", size = "100B", interval = "10us" }', duration="3000s"))
    proc = subprocess.Popen([sys.executable, "-m", "tpsim", "run", str(f), "-o", str(tmp_path / "o"), "-q", "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_render_workers(tag)) < workers_for(None):
            time.sleep(0.1)
        mine = _render_workers(tag)
        # Started before the (long) run ends: they import matplotlib meanwhile.
        assert len(mine) == workers_for(None) and proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.communicate()
    deadline = time.monotonic() + 5
    while _render_workers(tag) & mine and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (_render_workers(tag) & mine), "render workers outlived the killed command"
    # A command that fails on its input ends its workers too.
    p = subprocess.run([sys.executable, "-m", "tpsim", "run", str(tmp_path / "missing.toml"), "-o", str(tmp_path / "o2")],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 2
    time.sleep(0.5)
    assert not (_render_workers(tag))


@pytest.mark.parametrize("metric, values", [("pdr", [1.0, 1.0, 0.98, 1.0]), ("drops_ttl", [0, 0, 0, 0]),
                                            ("goodput_kbps", [0.0, 0.0, 0.0, 0.0])])
def test_no_axis_beyond_the_metrics_range(metric, values):
    # A PDR of 100 % does not put the axis at 104 %; a count that is zero throughout gets no
    # negative ticks (matplotlib's margins would give both).
    df = pl.DataFrame({"point": [0, 0, 1, 1], "x": ["1s", "1s", "2s", "2s"], "run": [0, 1, 0, 1], "flow": [0] * 4,
                       "direction": ["fwd"] * 4, metric: values})
    spec, info = metric_spec(df, metric, "x")
    fig = draw(spec, info)
    lo, hi = fig.axes[0].get_ylim()
    bound_lo, bound_hi = tpsim.metrics.bounds(metric)
    assert lo >= bound_lo * info.scale and hi <= bound_hi * info.scale, (lo, hi)
    assert all(t >= 0 for t in fig.axes[0].get_yticks() if lo <= t <= hi)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_panels_sharing_a_y_axis_show_every_panels_bars():
    # The y range of panels that share their axis spans every panel, not only the first one
    # drawn (its limits were fixed before the others' bars were drawn: the later panels' taller
    # bars were cut at the first panel's top).
    df = pl.DataFrame({"point": [0, 1, 2, 3], "case": ["wired", "wired", "chain", "chain"], "x": ["a", "b", "a", "b"],
                       "run": [0] * 4, "flow": [0] * 4, "direction": ["fwd"] * 4,
                       "queue_delay_mean_s": [0.005, 0.01, 0.04, 0.045]})
    spec, info = metric_spec(df, "queue_delay_mean_s", "x", facet="case")
    fig = draw(spec, info)
    tops = [ax.get_ylim()[1] for ax in fig.axes if ax.get_visible()]
    assert len(tops) == 2 and min(tops) >= 45.0 * 0.999, tops
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_more_series_than_a_legend_holds_split_into_panels_by_the_last_swept_keys():
    # The README's API example: 6 transports x 2 stacks x 2 link delays = 24 series. Instead
    # of 7 named lines and "other (17)" in grey, one panel per stack and delay, the six
    # transports in each (the first hue, the comparison, stays within the panels).
    transports = ["udp", "tcp", "sctp", "tfrc", "dccp-ccid2", "dccp-ccid3"]
    rows = [(t, s, d, x, run) for t in transports for s in ("ns2", "modern") for d in ("10ms", "50ms")
            for x in (64, 128) for run in (0, 1)]
    df = pl.DataFrame(rows, schema=["flows.0.transport", "simulation.stack", "links.0.delay", "flows.0.app.size", "run"],
                      orient="row").with_columns(pl.lit(0).alias("flow"), pl.lit("fwd").alias("direction"),
                                                 (pl.col("run") + 1.0).alias("delay_mean_s"), pl.lit(0).alias("point"))
    params = ["flows.0.transport", "simulation.stack", "links.0.delay", "flows.0.app.size"]
    spec, info = metric_spec(df, "delay_mean_s", "flows.0.app.size", params=params)
    assert info.facets == ["stack, link delay = ns2, 10 ms", "stack, link delay = ns2, 50 ms",
                           "stack, link delay = modern, 10 ms", "stack, link delay = modern, 50 ms"]
    assert info.series == transports and not any(s.startswith("other") for s in info.series)
    assert all(len([it for it in p["items"] if it["kind"] == "line"]) == 6 for p in spec["panels"])
    # Fewer series stay in one panel; a facet the user names is kept.
    assert metric_spec(df.filter(pl.col("simulation.stack") == "ns2"), "delay_mean_s", "flows.0.app.size",
                       params=params)[1].facets == ["link delay = 10 ms", "link delay = 50 ms"]
    assert metric_spec(df.filter(pl.col("flows.0.transport").is_in(["udp", "tcp"])), "delay_mean_s", "flows.0.app.size",
                       params=params)[1].facets == []
    assert metric_spec(df, "delay_mean_s", "flows.0.app.size", params=params, facet="flows.0.transport")[1].facet == "flows.0.transport"


def test_titles_never_break_between_a_number_and_its_unit_and_time_series_share_the_headline_title():
    from tpsim.plot import _wrap

    for width in range(8, 40):
        for line in _wrap("Goodput vs packet size at 1000 B and 20 ms over 5 hops at 2.4 GHz", width).splitlines():
            assert not line.endswith(("1000", "20", "2.4")) and not line.startswith(("B ", "ms ", "GHz")), (width, line)
    ts, flows = _ts(3)
    spec, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    # The title is the figure's (as every headline figure's), not a small panel title.
    assert spec["suptitle"] and not spec["panels"][0].get("title") and not spec["panels"][0].get("title_size")


def test_time_series_legends_list_flows_and_queues_in_order():
    # Flow 2 has the largest values: the legend still reads flow 0, 1, 2 (not by size).
    ts, flows = _ts(3)
    _, info = timeseries_spec(ts, "goodput_kbps", flows=flows)
    assert info.series == ["flow 0 fwd", "flow 1 fwd", "flow 2 fwd"]
    queues = ts.with_columns(pl.lit("queue_packets").alias("series"), pl.col("flow").alias("node"), pl.lit(None).alias("flow"),
                             pl.lit("out").alias("direction")).sort("node", descending=True)
    _, info = timeseries_spec(queues, "queue_packets")
    assert info.series == ["node 0 out", "node 1 out", "node 2 out"]


def test_a_run_without_swept_keys_gets_one_figure_with_a_panel_per_metric(tmp_path):
    # Not six figures of one bar each: one figure, a panel per headline metric, each with its
    # own y axis and title, the flows' legend once.
    from conftest import one_link
    from tpsim.report import figure_plan

    (tmp_path / "s.toml").write_text(one_link(duration="3s"))
    res = tpsim.run(tmp_path / "s.toml", runs=2, out=tmp_path / "o")
    plan = dict(figure_plan(res))
    assert "overview" in plan and not [n for n in plan if n in tpsim.metrics.HEADLINE_FLOW_METRICS]
    spec, info = plan["overview"].spec()
    titles = [p["title"] for p in spec["panels"]]
    assert len(titles) >= 4 and len(set(titles)) == len(titles) and spec["sharey"] is False
    assert sum(1 for p in spec["panels"] if p.get("legend")) <= 1
    assert info.caption.startswith(titles[0]) and "a panel each" in info.caption


def test_one_replication_draws_no_error_bars_in_the_lines_or_their_legend():
    # The caption says "one run, no interval": neither the lines nor the legend's glyphs may
    # show error bars.
    from matplotlib.container import ErrorbarContainer
    from matplotlib.lines import Line2D

    df = pl.DataFrame({"point": [0, 1, 0, 1], "x": ["1s", "2s", "1s", "2s"], "t": ["udp", "udp", "tcp", "tcp"], "run": [0] * 4,
                       "flow": [0] * 4, "direction": ["fwd"] * 4, "goodput_kbps": [1.0, 2.0, 3.0, 4.0]})
    spec, info = metric_spec(df, "goodput_kbps", "x", "t")
    assert "one run, no interval" in info.caption
    fig = draw(spec, info)
    handles = [h for ax in fig.axes for h in ax.get_legend_handles_labels()[0]]
    handles += [h for leg in fig.legends for h in leg.legend_handles]
    assert handles and not any(isinstance(h, ErrorbarContainer) for h in handles)
    assert all(isinstance(h, Line2D) for h in fig.axes[0].get_legend_handles_labels()[0])
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_a_bar_alone_at_its_x_is_centred_there():
    # One flow per transport (a run without swept keys): no empty dodge slot beside each bar.
    df = pl.DataFrame({"point": [0] * 4, "run": [0, 1, 0, 1], "transport": ["sctp", "sctp", "tcp", "tcp"], "flow": [0, 0, 1, 1],
                       "direction": ["fwd"] * 4, "goodput_kbps": [70.0, 74.0, 40.0, 42.0]})
    spec, _ = metric_spec(df, "goodput_kbps", "transport", "flow_direction")
    bars = [it for it in spec["panels"][0]["items"] if it["kind"] == "bar"]
    assert [b["x"] for b in bars] == [[0.0], [1.0]] and all(b["width"] > 0.7 for b in bars)


def test_a_transport_sweep_compares_the_windows_and_shows_the_pacing_rate(tmp_path):
    """A sweep of `transport` (names, the figures' x): the congestion-window time series
    compares the transports in one figure, a line each, and a paced sender's pacing rate has
    a figure of its own, in Mbit/s."""
    f = tmp_path / "dumbbell.toml"
    f.write_text("""
[simulation]
duration = "4s"
runs = 1
[output]
timeseries = true
bin = "1s"
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "20ms"
queue = 100
[[flows]]
src = 0
dst = 1
transport = "tcp-cubic"
app = { kind = "bulk", size = "1448B" }
tcp = { sack = true, timestamps = true, window_scaling = true, receive_window = "4MiB", send_buffer = "4MiB" }
""")
    res = tpsim.run(f, sweep=[("flows.0.transport", ["tcp-cubic", "tcp-bbr", "tcp-vegas"])], out=tmp_path / "o",
                    report=True)
    figs = {g["name"]: g for g in json.loads((res.directory / "figures" / "figures.json").read_text(encoding="utf-8"))}
    cwnd = figs["timeseries-cwnd_bytes"]
    assert cwnd["series"] == [f"transport = {t}, flow 0 fwd" for t in ["tcp-cubic", "tcp-bbr", "tcp-vegas"]], cwnd
    pacing = figs["timeseries-pacing_rate_bps"]
    assert pacing["ylabel"] == "pacing rate (Mbit/s)" and "tcp-bbr" in pacing["title"], pacing
