"""SCTP multi-homing and fault events through the workbench: the dual-homed scenarios run from
the command line, their flows table has the failover columns (each defined in docs/metrics.md
and tpsim.metrics), and the report draws goodput per path."""

import re

import polars as pl
import pytest

from conftest import ROOT, SCENARIOS, cli
from tpsim.metrics import METRICS


@pytest.mark.parametrize("name", ["sctp-dual-homed-failover", "sctp-dual-homed-wired-and-radio", "sctp-dual-homed-wireless"])
def test_dual_homed_scenario_reports_its_failover(tmp_path, name):
    out = tmp_path / "o"
    p = cli("run", str(SCENARIOS / f"{name}.toml"), "-o", str(out))
    assert p.returncode == 0, p.stderr
    flows = pl.read_parquet(out / "flows.parquet")
    f = flows.filter(pl.col("direction") == "fwd").row(0, named=True)
    assert f["failovers"] == 1
    # The fault is at 20 s; the failover takes Path.Max.Retrans + 1 = 6 timeouts (63 s).
    assert 62.0 < f["failover_time_s"] < 64.0
    assert f["failover_acked_at_s"] == pytest.approx(20.0 + f["failover_time_s"])
    assert f["rx_packets"] == f["tx_packets"]
    assert f["path0_data_bytes"] > 0 and f["path1_data_bytes"] > 0
    doc = (ROOT / "docs" / "metrics.md").read_text()
    for c in ["failovers", "failover_time_s", "failover_acked_at_s", "abandoned_messages", "path0_data_bytes",
              "path1_data_bytes"]:
        assert c in METRICS, c
        documented = re.sub(r"path\d", "path<k>", c)
        assert f"`{documented}`" in doc, c
    ts = pl.read_parquet(out / "timeseries.parquet")
    assert {"goodput_path0_kbps", "goodput_path1_kbps"} <= set(ts["series"].unique().to_list())
    assert "`goodput_path<k>_kbps`" in doc
    html = (out / "report.html").read_text()
    assert "timeseries-goodput-per-path" in html
    assert list((out / "figures").glob("timeseries-goodput-per-path*.png"))
