"""Sweeps, statistics, parallel and distributed runs, resumption, figures and the report."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

import tpsim
from tpsim.results import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from conftest import ROOT, SCENARIOS, cli, cli_once, one_link, run_once

TABLES = ["flows.parquet", "flows.csv", "network.parquet", "network.csv", "summary.csv", "timeseries.parquet"]

# Random enough that replications differ: Poisson arrivals into a lossy link with a small queue.
SWEPT = one_link(
    app='{ kind = "cbr", size = "200B", interval = "10ms", arrivals = "poisson" }',
    link_extra="loss = 0.02\nqueue = 4",
    duration="5s",
    extra="runs = 10",
) + """
[sweep]
"flows.0.transport" = ["udp", "tcp"]
"flows.0.app.interval" = ["4ms", "6ms", "8ms", "12ms", "20ms"]
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    f = tmp_path / name
    f.write_text(text)
    return f


def test_sweep_summary_matches_scipy(tmp_path):
    f = write(tmp_path, SWEPT)
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--no-report", "-j", "2")
    assert p.returncode == 0, p.stderr
    flows = pl.read_csv(tmp_path / "o" / "flows.csv")
    summary = pl.read_csv(tmp_path / "o" / "summary.csv")
    assert flows["point"].n_unique() == 10 and flows.height == 10 * 10
    assert {"flows.0.transport", "flows.0.app.interval"} <= set(flows.columns)
    assert flows["transport"].unique().sort().to_list() == ["tcp", "udp"]
    checked = 0
    for (point,), g in flows.group_by(["point"], maintain_order=True):
        for metric in ["goodput_kbps", "delay_mean_s", "pdr", "rx_packets"]:
            vals = g[metric].to_list()
            n = len(vals)
            mean = sum(vals) / n
            sd = stats.tstd(vals)
            row = summary.filter((pl.col("point") == point) & (pl.col("table") == "flows") & (pl.col("metric") == metric)).row(0, named=True)
            assert row["n"] == 10
            assert row["mean"] == pytest.approx(mean, rel=1e-12)
            assert row["std"] == pytest.approx(sd, rel=1e-9)
            # Bounded metrics: scipy's percentile bootstrap of the mean with tpsim's seed.
            assert row["ci_method"] == "bootstrap-percentile"
            if min(vals) == max(vals):
                lo = hi = vals[0]
            else:
                ci = stats.bootstrap((np.array(vals),), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, method="percentile",
                                     random_state=np.random.default_rng(BOOTSTRAP_SEED)).confidence_interval
                lo, hi = ci.low, ci.high
            assert row["ci95_low"] == pytest.approx(lo, rel=1e-9, abs=1e-12)
            assert row["ci95_high"] == pytest.approx(hi, rel=1e-9, abs=1e-12)
            checked += 1
    assert checked == 40
    # The sweep really varied the scenario: TCP retransmits what the lossy link drops, UDP not.
    by_t = flows.group_by("transport").agg(pl.col("retransmissions").sum(), pl.col("dropped_segments").sum()).sort("transport")
    assert by_t["retransmissions"].to_list()[0] > 0 and by_t["retransmissions"].to_list()[1] == 0
    assert all(d > 0 for d in by_t["dropped_segments"].to_list())


def test_intervals_of_two_and_three_replications_are_scipys_bootstrap():
    """With n <= 3 the interval is given as the sample's range without resampling: it must be
    what scipy's percentile bootstrap with tpsim's seed gives (to the last bits of its sums)."""
    from tpsim.tables import EXACT_RANGE_MAX_N, mean_cis

    rng = np.random.default_rng(7)
    for n in range(2, EXACT_RANGE_MAX_N + 1):
        samples = (rng.random((200, n)) * np.logspace(-3, 6, 200)[:, None]).tolist()
        got = mean_cis("goodput_kbps", samples)
        res = stats.bootstrap((np.array(samples),), np.mean, axis=-1, vectorized=True, n_resamples=BOOTSTRAP_RESAMPLES,
                              method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED))
        for (mean, lo, hi), a, b in zip(got, res.confidence_interval.low, res.confidence_interval.high):
            assert lo == pytest.approx(min(a, mean), rel=1e-12) and hi == pytest.approx(max(b, mean), rel=1e-12)


def test_jobs_1_and_2_give_byte_identical_tables(tmp_path, tmp_path_factory):
    f = write(tmp_path, SWEPT.replace("runs = 10", "runs = 3"))
    p = cli("run", str(f), "-o", str(tmp_path / "j1"), "-j", "1", "--no-report")
    assert p.returncode == 0, p.stderr
    # -j 2: the run test_a_failing_run_is_reported_and_a_rerun_completes_only_it also reads.
    j2, p = run_once(tmp_path_factory, SWEPT.replace("runs = 10", "runs = 3"), "-j", "2", "--no-report")
    assert p.returncode == 0, p.stderr
    for t in TABLES:
        assert (tmp_path / "j1" / t).read_bytes() == (j2 / t).read_bytes(), t


def test_a_failing_run_is_reported_and_a_rerun_completes_only_it(tmp_path, tmp_path_factory):
    f = write(tmp_path, SWEPT.replace("runs = 10", "runs = 3"))
    # The uninterrupted run (made once, with test_jobs_1_and_2_give_byte_identical_tables).
    ref, p = run_once(tmp_path_factory, SWEPT.replace("runs = 10", "runs = 3"), "-j", "2", "--no-report")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "o"
    env = dict(os.environ, TPSIM_TEST_FAIL_RUN="7:2")
    p = subprocess.run([sys.executable, "-m", "tpsim", "run", str(f), "-o", str(out), "-j", "2", "--no-report"], capture_output=True, text=True, env=env)
    assert p.returncode == 1, p.stderr
    assert "1 of 30 runs failed" in p.stderr
    assert "point 7" in p.stderr and "seed 1, run 2" in p.stderr and '"flows.0.app.interval" = "8ms"' not in p.stderr
    assert 'flows.0.app.interval = "8ms"' in p.stderr and 'flows.0.transport = "tcp"' in p.stderr
    assert len(list((out / "runs").glob("*.json"))) == 29
    assert not (out / "flows.csv").exists()
    p = cli("run", str(f), "-o", str(out), "--no-report")
    assert p.returncode == 0, p.stderr
    assert "ran 1, reused 29" in p.stdout
    for t in TABLES:
        assert (out / t).read_bytes() == (ref / t).read_bytes(), t


def test_sigint_then_rerun_completes_only_the_rest(tmp_path):
    # Runs long enough (~0.1-0.3 s each) that the interrupt lands mid-sweep.
    text = one_link(app='{ kind = "cbr", size = "100B", interval = "1ms", arrivals = "poisson" }', link_extra="rate = \"100Mbps\"".replace("rate", "#"), duration="400s", extra="runs = 12").replace('rate = "256kbps"', 'rate = "10Mbps"')
    text = text.replace("[output]", "") + "\n[output]\ntimeseries = false\n"
    f = write(tmp_path, text)
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "tpsim", "run", str(f), "-o", str(out), "-j", "1", "--no-report", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "runs").glob("*.json"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    done = len(list((out / "runs").glob("*.json")))
    assert 3 <= done < 12, done
    assert not (out / "flows.csv").exists()
    p = cli("run", str(f), "-o", str(out), "--no-report")
    assert p.returncode == 0, p.stderr
    assert f"ran {12 - done}, reused {done}" in p.stdout
    ref = tmp_path / "ref"
    assert cli("run", str(f), "-o", str(ref), "--no-report").returncode == 0
    for t in TABLES:
        assert (out / t).read_bytes() == (ref / t).read_bytes(), t


def test_changed_scenario_never_reuses_stale_runs(tmp_path, tmp_path_factory):
    f = write(tmp_path, SWEPT.replace("runs = 10", "runs = 2"))
    out = tmp_path / "o"
    # `tpsim run s.toml -o o --no-report`, run once with test_plot_command_draws_custom_figures:
    # a copy of its output is that run's.
    first, p = run_once(tmp_path_factory, SWEPT.replace("runs = 10", "runs = 2"), "--no-report")
    assert p.returncode == 0
    shutil.copytree(first, out)
    f.write_text(f.read_text().replace("loss = 0.02", "loss = 0.03"))
    p = cli("run", str(f), "-o", str(out), "--no-report")
    assert "ran 20, reused 0" in p.stdout, p.stdout


def test_dask_local_cluster_gives_the_local_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    f = write(tmp_path, SWEPT.replace("runs = 10", "runs = 2"))
    # With an ns-2 trace: Dask workers return it as columns, and the calling process writes
    # the run's files that local runs get from the engine.
    trace = ("--set", "output.ns2_trace=wired")
    assert cli("run", str(f), "-o", str(tmp_path / "local"), "--no-report", *trace).returncode == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", scheduler_port=0, dashboard_address=None) as cluster:
        p = cli("run", str(f), "-o", str(tmp_path / "dask"), "--scheduler", cluster.scheduler_address, "--no-report", *trace)
    assert p.returncode == 0, p.stderr
    for t in TABLES:
        assert (tmp_path / "local" / t).read_bytes() == (tmp_path / "dask" / t).read_bytes(), t
    local, dask = pl.read_parquet(tmp_path / "local" / "trace.parquet"), pl.read_parquet(tmp_path / "dask" / "trace.parquet")
    assert local.height > 0 and local.equals(dask) and local.schema == dask.schema
    trs = sorted(p.name for p in (tmp_path / "local" / "ns2").glob("*.tr"))
    assert trs and trs == sorted(p.name for p in (tmp_path / "dask" / "ns2").glob("*.tr"))
    for name in trs:
        assert (tmp_path / "local" / "ns2" / name).read_bytes() == (tmp_path / "dask" / "ns2" / name).read_bytes(), name


@pytest.mark.parametrize(
    "args, what",
    [
        (["--sweep", "flows.0.app.intervall=1ms,2ms"], "unknown key `flows.0.app.intervall`"),
        (["--sweep", "flows.0.app.interval="], "non-empty list"),
        (["--set", "links.3.rate=1Mbps"], "unknown key `links.3.rate`"),
        (["--runs", "0"], "--runs must be at least 1"),
        (["--sweep", "flows.0.app.size=99999B"], "sweep point 0"),
    ],
)
def test_bad_sweep_input_fails_before_any_run(tmp_path, args, what):
    f = write(tmp_path, one_link())
    p = cli("run", str(f), "-o", str(tmp_path / "o"), *args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert what in p.stderr, p.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "sweep, what",
    [('"flows.0.app.bogus" = [1, 2]', "unknown sweep key `flows.0.app.bogus`"), ('"flows.0.app.interval" = []', "non-empty list")],
)
def test_bad_sweep_table_names_key_and_line(tmp_path, sweep, what):
    text = one_link() + f"\n[sweep]\n{sweep}\n"
    f = write(tmp_path, text)
    p = cli("validate", str(f))
    assert p.returncode == 2
    line = len(text.splitlines())
    assert f"s.toml:{line}:" in p.stderr and what in p.stderr, p.stderr


def test_rust_panic_becomes_runtime_error():
    with pytest.raises(RuntimeError, match="internal engine error"):
        tpsim._tpsim._panic_for_tests()


def test_python_api_sweep_and_plot(tmp_path):
    res = tpsim.run(tpsim.Scenario(one_link(extra='drain = "1s"')), runs=2, sweep=[("flows.0.app.size", ["64B", "128B"])], jobs=1)
    assert res.param_keys == ["flows.0.app.size"]
    assert res.flows.select("point", "flows.0.app.size").unique(maintain_order=True).rows() == [(0, "64B"), (1, "128B")]
    s = res.summary().filter((pl.col("metric") == "delay_mean_s"))
    # exact delays: (size + 28 + 2) * 8 / 256 kbit/s + 50 ms
    assert s["mean"].to_list() == pytest.approx([(64 + 30) * 8 / 256000 + 0.05, (128 + 30) * 8 / 256000 + 0.05])
    from tpsim.plot import metric_figure, save

    paths = save(metric_figure(res.flows, "delay_mean_s", "flows.0.app.size"), tmp_path / "fig")
    assert [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 1000 for p in paths)


def test_plot_command_draws_custom_figures(tmp_path, tmp_path_factory):
    # `tpsim run s.toml -o o --no-report`, run once with test_changed_scenario_never_reuses_stale_runs;
    # the figures are drawn into a copy of its output.
    first, p = run_once(tmp_path_factory, SWEPT.replace("runs = 10", "runs = 2"), "--no-report")
    assert p.returncode == 0
    shutil.copytree(first, tmp_path / "o")
    p = cli("plot", str(tmp_path / "o"), "--metric", "pdr", "--x", "flows.0.app.interval", "--hue", "flows.0.transport")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "o" / "figures" / "custom-pdr.png").stat().st_size > 1000
    p = cli("plot", str(tmp_path / "o"), "--series", "queue_packets", "--point", "3", "--run", "1")
    assert p.returncode == 0, p.stderr
    p = cli("plot", str(tmp_path / "o"), "--metric", "nonsense")
    assert p.returncode == 2 and "no column" in p.stderr


def test_study_list_and_run(tmp_path_factory):
    p = cli("study", "--list", cwd=ROOT)
    assert p.returncode == 0 and "study-d-wired-voip.toml" in p.stdout
    # Each study's description names every transport family its sweep or cases run.
    try:
        import tomllib as toml_reader
    except ImportError:  # Python < 3.11
        import tomli as toml_reader

    from tpsim.studies import STUDIES

    for name, (file, description) in STUDIES.items():
        doc = toml_reader.loads((SCENARIOS / file).read_text(encoding="utf-8"))
        values = [v for k, vs in doc.get("sweep", {}).items() if "transport" in k for v in vs]
        values += [v for c in doc.get("cases", []) for k, v in c.items() if k.endswith("transport")]
        values += [f.get("transport", "") for f in doc.get("flows", [])] + [doc.get("sensors", {}).get("transport", "")]
        families = {v.split("-")[0] for v in values if v}
        for fam in families:
            assert fam.upper() in description, (name, fam, description)
    # `tpsim study d -o DIR`, run once for this test and test_study_d.py's.
    d, p = cli_once(tmp_path_factory, "study", "d", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert (d / "report.html").is_file() and (d / "flows.csv").is_file()
    p = cli("study", "nope", cwd=ROOT)
    assert p.returncode == 2 and "no study" in p.stderr


LINKED = """
[simulation]
duration = "20s"
drain = "1s"
runs = 1
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "50ms"
queue = 200
[[flows]]
src = 0
dst = 1
transport = "tcp"
app = { kind = "bulk", size = "1000B" }
tcp = { receive_window = "64KB" }
[[flows]]
src = 0
dst = 1
transport = "sctp"
app = { kind = "bulk", size = "1000B" }
sctp = { receive_buffer = "64KB" }
[sweep]
"flows.0.tcp.receive_window + flows.1.sctp.receive_buffer" = ["4KB", "16KB"]
"""


def test_a_linked_sweep_key_gives_each_of_its_keys_every_value(tmp_path):
    """One dimension, two keys: TCP's receive window and SCTP's a_rwnd both go from 4 KB to
    16 KB, and both window-limited flows (RTT 100 ms on 10 Mbit/s) speed up about fourfold."""
    key = "flows.0.tcp.receive_window + flows.1.sctp.receive_buffer"
    res = tpsim.run(tpsim.Scenario(LINKED), jobs=1)
    assert res.param_keys == [key]
    g = {(r["flow"], r[key]): r["goodput_kbps"] for r in res.flows.iter_rows(named=True)}
    for flow in (0, 1):
        assert 3.0 < g[(flow, "16KB")] / g[(flow, "4KB")] < 6.0, g
    # Each point's scenario has both keys set (sizes in bytes once resolved).
    pts = tpsim.sweep.expand(tpsim.Scenario(LINKED))
    assert [p.params for p in pts] == [{key: "4KB"}, {key: "16KB"}]
    for p, want in zip(pts, ["4000B", "16000B"]):
        flows = p.scenario.resolved["flows"]
        assert (flows[0]["tcp"]["receive_window"], flows[1]["sctp"]["receive_buffer"]) == (want, want), flows


@pytest.mark.parametrize(
    "sweep, what",
    [
        ('"flows.0.tcp.receive_window + flows.1.sctp.bogus" = ["4KB"]', "unknown sweep key `flows.1.sctp.bogus`"),
        ('"flows.0.tcp.receive_window + " = ["4KB"]', "expected dotted keys joined by `+`"),
    ],
)
def test_a_bad_linked_key_names_its_bad_part(tmp_path, sweep, what):
    text = LINKED.split("[sweep]")[0] + f"[sweep]\n{sweep}\n"
    p = cli("validate", str(write(tmp_path, text)))
    assert p.returncode == 2 and what in p.stderr, p.stderr


def test_two_sweep_keys_that_set_one_value_are_refused(tmp_path):
    text = LINKED + '"flows.0.tcp.receive_window" = ["8KB"]\n'
    p = cli("run", str(write(tmp_path, text)), "-o", str(tmp_path / "o"))
    assert p.returncode == 2 and "set the same value" in p.stderr, p.stderr


@pytest.mark.parametrize("key, value", [
    ("flows.0.tcp.mss", "500B"), ("flows.0.sctp.receive_buffer", "8KB"),
    ("flows.0.tfrc.segment_size", "500B"), ("flows.0.dccp.segment_size", "500B"),
])
def test_set_and_sweep_reach_keys_of_tables_the_scenario_leaves_out(tmp_path, key, value):
    # The flow has no `tcp`, `sctp`, `tfrc` or `dccp` table: --set and --sweep create it.
    (tmp_path / "s.toml").write_text(one_link())
    for how in ({"set": [f"{key}={value}"]}, {"sweep": [f"{key}={value}"]}):
        plan = tpsim.plan(tmp_path / "s.toml", **how)
        table, leaf = key.split(".")[2:]
        assert plan.points[0].scenario.resolved["flows"][0][table][leaf] is not None, how
    with pytest.raises(tpsim.ScenarioError, match="no such key"):
        tpsim.plan(tmp_path / "s.toml", set=[key.replace(key.split(".")[-1], "nope") + "=1"])


def test_set_of_runs_and_seed_reaches_the_plan_and_a_sweep_of_them_is_refused(tmp_path):
    # Replications and their seeds are read once per plan: `--set simulation.runs=1` must
    # change the plan as `--runs 1` does, not be applied to each point and ignored.
    (tmp_path / "s.toml").write_text(one_link())
    plan = tpsim.plan(tmp_path / "s.toml", set=["simulation.runs=2", "simulation.seed=7"])
    by_args = tpsim.plan(tmp_path / "s.toml", seed=7, runs=2)
    assert [j.seed for j in plan.jobs] == [j.seed for j in by_args.jobs] and len(plan.jobs) == 2 * len(plan.points)
    assert len(tpsim.plan(tmp_path / "s.toml", runs=1, set=["simulation.runs=2"]).jobs) == len(plan.points)
    with pytest.raises(tpsim.ScenarioError, match="expected an integer"):
        tpsim.plan(tmp_path / "s.toml", set=["simulation.runs=two"])
    with pytest.raises(tpsim.ScenarioError, match="set them once"):
        tpsim.plan(tmp_path / "s.toml", sweep=["simulation.runs=1,2"])


def test_plot_keep_puts_the_figure_in_every_rebuilt_report(tmp_path):
    (tmp_path / "s.toml").write_text(one_link(duration="3s"))
    out = tmp_path / "o"
    assert cli("run", str(tmp_path / "s.toml"), "-o", str(out), "-q", "--runs", "2").returncode == 0
    p = cli("plot", str(out), "--metric", "net_delay_mean_s", "--title", "Network delay", "--keep")
    assert p.returncode == 0 and "kept in the report" in p.stdout, p.stderr
    p = cli("plot", str(out), "--series", "goodput_kbps", "--run", "1", "--keep")
    assert p.returncode == 0, p.stderr
    # Without --keep a figure stays a file of its own.
    assert cli("plot", str(out), "--metric", "pdr").returncode == 0
    assert cli("report", str(out), "-q").returncode == 0
    record = {f["name"]: f for f in json.loads((out / "figures" / "figures.json").read_text())}
    assert record["custom-net_delay_mean_s"]["title"] == "Network delay"
    assert "timeseries-goodput_kbps-p0-r1" in record and "custom-pdr" not in record
    html = (out / "report.html").read_text()
    assert 'id="fig-custom-net_delay_mean_s"' in html and 'id="fig-timeseries-goodput_kbps-p0-r1"' in html
    # A damaged record, or a request the tables no longer answer, is named, not a traceback.
    kept = (out / "figures" / "kept.json").read_text()
    for bad in ("{", kept.replace('"net_delay_mean_s"', '"no_such_metric"')):
        (out / "figures" / "kept.json").write_text(bad)
        p = cli("report", str(out), "-q")
        assert p.returncode != 0 and "kept.json" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_a_report_of_one_replication_promises_no_intervals(tmp_path):
    (tmp_path / "s.toml").write_text(one_link(duration="2s"))
    res = tpsim.run(tmp_path / "s.toml", runs=1, out=tmp_path / "o")
    html = res.write_report(tmp_path / "o").read_text(encoding="utf-8")
    assert "95 %" not in html.replace("5–95 %", "") and "no confidence intervals" in html
    assert "the value of the one run (one replication: no interval)" in html


def test_an_error_names_its_key_as_set_and_sweep_take_it(tmp_path):
    # One key syntax: the key an error names is the one --set and --sweep take.
    (tmp_path / "s.toml").write_text(one_link())
    with pytest.raises(tpsim.ScenarioError) as e:
        tpsim.plan(tmp_path / "s.toml", sweep=[("flows.0.app.size", ["128B", "1501B"])])
    (key,) = re.findall(r"key `([^`]+)`", str(e.value))
    assert key == "flows.0.app.size"
    assert tpsim.plan(tmp_path / "s.toml", set=[f"{key}=1000B"]).points
    (tmp_path / "s.toml").write_text(one_link().replace('size = "128B"', 'size = "1501B"'))
    p = cli("validate", str(tmp_path / "s.toml"))
    assert p.returncode == 2 and "key `flows.0.app.size`" in p.stderr and "[0]" not in p.stderr, p.stderr
