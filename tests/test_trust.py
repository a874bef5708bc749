"""Results a researcher can trust: no stale reuse across engine builds, damaged stored runs
detected and redone, and confidence intervals that stay within their metric's bounds."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import polars as pl
import pytest

import tpsim
import tpsim.api
from tpsim.metrics import bounds
from conftest import SCENARIOS, cli, one_link, run_once

LOSSY = one_link(
    app='{ kind = "cbr", size = "200B", interval = "20ms", arrivals = "poisson" }',
    link_extra="loss = 0.05",
    duration="5s",
    extra="runs = 2",
)


def _ran(out: Path, text: str) -> tuple[int, int]:
    """Runs `text` into `out` and returns (runs done now, runs reused), counted by progress."""
    counts = []
    tpsim.run(tpsim.Scenario(text), out=out, progress=lambda done, total: counts.append(done))
    # The first call reports the stored runs; later calls count the runs done now.
    return counts[-1] - counts[0], counts[0]


def test_another_engine_build_recomputes_instead_of_reusing(tmp_path, monkeypatch):
    out = tmp_path / "o"
    assert _ran(out, LOSSY) == (2, 0)
    assert _ran(out, LOSSY) == (0, 2), "the same build reuses its runs"
    monkeypatch.setattr(tpsim.api, "build_id", lambda: "0.1.0+another-build")
    assert _ran(out, LOSSY) == (2, 0), "another build must not reuse the first build's runs"
    assert len(list((out / "runs").glob("*.json"))) == 4


def test_build_fingerprint_is_shown_by_version_and_report(tmp_path):
    build = tpsim.api.build_id()
    assert build.startswith(tpsim.__version__ + "+") and len(build.split("+")[1]) == 16
    p = cli("version")
    assert p.returncode == 0 and p.stdout.strip() == build
    f = tmp_path / "s.toml"
    f.write_text(LOSSY)
    p = cli("run", str(f), "-o", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert build in (tmp_path / "o" / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b"",  # empty
        lambda b: b"\x00\xff garbage",  # not JSON
        lambda b: json.dumps({"flows": {}}).encode(),  # JSON, but not a stored run
    ],
    ids=["truncated", "empty", "binary", "foreign-json"],
)
def test_a_damaged_stored_run_is_reported_and_run_again(tmp_path, tmp_path_factory, damage, capfd):
    f = tmp_path / "s.toml"
    f.write_text(LOSSY)
    # ``tpsim run s.toml -o ref --no-report`` is run once for every damage (conftest.run_once);
    # ``out``, the run to damage, is a copy of it: the stored runs of the same command.
    ref, p = run_once(tmp_path_factory, LOSSY, "--no-report")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "o"
    shutil.copytree(ref, out)
    victim = sorted((out / "runs").glob("*.json"))[0]
    victim.write_bytes(damage(victim.read_bytes()))
    p = cli("run", str(f), "-o", str(out), "--no-report")
    assert p.returncode == 0, p.stderr
    assert "damaged stored run" in p.stderr and victim.name in p.stderr
    assert "ran 1, reused 1" in p.stdout
    assert "Traceback" not in p.stderr
    for t in ["flows.csv", "network.csv", "summary.csv"]:
        assert (out / t).read_bytes() == (ref / t).read_bytes(), t


def _within_bounds(summary: pl.DataFrame) -> list[str]:
    bad = []
    for r in summary.iter_rows(named=True):
        b = bounds(r["metric"])
        if b is None or r["ci95_low"] is None:
            continue
        lo, hi = b
        if r["ci95_low"] < lo - 1e-12 or r["ci95_high"] > hi + 1e-12 or not (r["ci95_low"] <= r["mean"] <= r["ci95_high"]):
            bad.append(f"{r['metric']} [{r['ci95_low']}, {r['ci95_high']}] mean {r['mean']}")
    return bad


@pytest.mark.parametrize(
    "study, sets, sweep",
    [
        # Shortened, and one value of the swept keys (a --sweep replaces the file's values).
        ("study-a-sensor-interval.toml", ["simulation.duration=20s"], [("sensors.interval", ["2s"])]),
        ("study-c-manet-speed.toml", ["simulation.duration=60s"],
         [("flows.0.transport", ["udp"]), ("nodes.mobility.speed", [["20m/s", "20m/s"]])]),
        ("study-d-wired-voip.toml", [], []),
    ],
)
def test_no_interval_of_a_study_leaves_its_metrics_bounds(study, sets, sweep):
    res = tpsim.run(SCENARIOS / study, runs=4, set=sets, sweep=sweep, jobs=2)
    summary = res.summary()
    assert summary.height > 0
    assert set(summary["ci_method"].drop_nulls()) == {"bootstrap-percentile"}
    assert _within_bounds(summary) == []
    # Intervals that matter here: PDRs near 1 and counts near 0, where Student's t leaves them.
    pdr = summary.filter((pl.col("metric") == "pdr") & pl.col("ci95_low").is_not_null())
    assert pdr.height > 0 and (pdr["ci95_high"] <= 1.0).all()


def test_one_replication_reports_no_interval():
    res = tpsim.run(tpsim.Scenario(LOSSY), runs=1)
    s = res.summary()
    assert s["ci95_low"].null_count() == s.height and s["ci_method"].null_count() == s.height
    assert (s["n"] == 1).all()


def test_student_t_for_a_column_without_known_bounds():
    from tpsim.results import summarize

    flows = pl.DataFrame({"point": [0, 0, 0], "run": [0, 1, 2], "seed": [1, 1, 1], "flow": [0, 0, 0],
                          "direction": ["fwd"] * 3, "src": [0] * 3, "dst": [1] * 3, "transport": ["x"] * 3,
                          "app": ["cbr"] * 3, "signed_thing": [-1.0, 0.5, 2.0]})
    s = summarize(flows, pl.DataFrame(), ["point"]).row(0, named=True)
    from scipy import stats

    half = stats.t.ppf(0.975, 2) * stats.tstd([-1.0, 0.5, 2.0]) / math.sqrt(3)
    assert s["ci_method"] == "student-t"
    assert s["ci95_low"] == pytest.approx(0.5 - half) and s["ci95_high"] == pytest.approx(0.5 + half)


def test_the_interval_always_holds_the_mean():
    # Rounding: numpy's resample means against Python's mean; nearly constant samples.
    from hypothesis import given, settings, strategies as st

    from tpsim.results import mean_ci

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=2, max_size=12))
    def check(values):
        m, lo, hi = mean_ci("delay_mean_s", values)
        assert lo <= m <= hi and lo >= 0
        m, lo, hi = mean_ci("pdr", [v / 1e6 for v in values])
        assert 0 <= lo <= m <= hi <= 1

    check()
    m, lo, hi = mean_ci("pdr", [0.1 + 2e-17, 0.1, 0.1])
    assert lo <= m <= hi
    m, lo, hi = mean_ci("delay_mean_s", [0.05455883838383839] * 3)  # sum / 3 rounds below
    assert lo <= m <= hi


def test_intervals_computed_together_equal_each_computed_alone():
    """The report computes a metric's intervals in one batch (tables.mean_cis); each must be
    the interval mean_ci gives for its sample alone, whatever else is in the batch (equal
    samples, other sizes, constant samples, one value): the same resamples, so equal but for
    the last bits of numpy's sums over arrays of another shape."""
    import math
    import random

    from tpsim.tables import mean_ci, mean_cis

    rng = random.Random(7)
    samples = [[rng.uniform(0, 1) for _ in range(rng.choice([1, 2, 3, 5, 10]))] for _ in range(300)]
    samples += [samples[3], samples[10], [0.5, 0.5, 0.5], [0.2]]
    for metric in ("pdr", "throughput_kbps", "no_such_metric_unbounded"):
        together = mean_cis(metric, samples)
        assert len(together) == len(samples)
        for s, got in zip(samples, together):
            want = mean_ci(metric, s)
            assert got[0] == want[0] and (got[1] is None) == (want[1] is None), (metric, s, got, want)
            if want[1] is not None:
                assert math.isclose(got[1], want[1], rel_tol=1e-13) and math.isclose(got[2], want[2], rel_tol=1e-13), (metric, s)
                assert got[1] <= got[0] <= got[2]
        # Equal samples in one batch get the very same interval.
        assert together[-4] == together[3] and together[-3] == together[10]
