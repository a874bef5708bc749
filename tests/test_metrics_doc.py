"""Every column the engine produces is defined in docs/metrics.md and in tpsim.metrics; the
time-average queue series agrees with queueing theory."""

from __future__ import annotations

import polars as pl
import pytest

import tpsim
from conftest import ROOT, one_link
from tpsim.metrics import METRICS
from tpsim.results import FLOW_KEYS, NETWORK_KEYS


def test_every_metric_column_is_documented():
    res = tpsim.run(tpsim.Scenario(one_link()))
    doc = (ROOT / "docs" / "metrics.md").read_text()
    columns = [c for c in res.flows.columns if c not in FLOW_KEYS] + [c for c in res.network.columns if c not in NETWORK_KEYS]
    assert len(columns) > 30
    for c in columns:
        assert f"`{c}`" in doc, f"{c} missing from docs/metrics.md"
        assert c in METRICS, f"{c} missing from tpsim.metrics.METRICS"
    for s in res.timeseries["series"].unique():
        assert f"`{s}`" in doc


def test_queue_series_time_average_matches_md1_queue_length():
    # M/D/1 at rho = 0.8 with S = 8 ms: L_q = rho^2 / (2 (1 - rho)) = 1.6 packets waiting.
    rho, s = 0.8, 8e-3
    text = one_link(
        "ns2",
        app=f'{{ kind = "cbr", size = "1000B", interval = "{s / rho * 1e6:.0f}us", arrivals = "poisson" }}',
        link_extra="queue = 100000",
        duration="4000s",
        extra='[output]\nbin = "10s"',
    ).replace("256kbps", "1Mbps").replace('"50ms"', '"0ms"')
    res = tpsim.run(tpsim.Scenario(text), seed=5)
    q = res.timeseries.filter((pl.col("series") == "queue_packets") & (pl.col("direction") == "fwd"))
    lq = q["value"].mean()
    assert lq == pytest.approx(rho**2 / (2 * (1 - rho)), rel=0.06)
    # Little's law on the same run: L_q = lambda * W_q.
    f = res.flows.row(0, named=True)
    wq = f["delay_mean_s"] - s
    lam = f["tx_packets"] / 4000
    assert lq == pytest.approx(lam * wq, rel=0.02)
