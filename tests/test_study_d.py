"""Study D over UDP end to end through the CLI, and exact delays through the API."""

from __future__ import annotations

import polars as pl
import pytest

import tpsim
from conftest import SCENARIOS, cli, one_link

STUDY_D = SCENARIOS / "study-d-wired-voip.toml"

# Header sizes from the standards, not from tpsim: IPv4 (RFC 791 §3.1), UDP (RFC 768), and the
# 2-byte PPP protocol field tpsim documents as point-to-point framing (RFC 1661 §2).
IPV4, UDP, PPP = 20, 8, 2


def test_cli_run_writes_every_table_one_row_per_run_and_flow(tmp_path):
    out = tmp_path / "out"
    p = cli("run", str(STUDY_D), "-o", str(out), "--runs", "2")
    assert p.returncode == 0, p.stderr
    for name in ["flows.parquet", "flows.csv", "network.parquet", "network.csv", "summary.csv", "timeseries.parquet"]:
        assert (out / name).is_file(), name
    flows = pl.read_parquet(out / "flows.parquet")
    # Two transports (the study's sweep) x 2 runs; voip is two-way: one row per direction.
    assert flows.height == 2 * 2 * 2
    assert flows.select("point", "flows.0.transport", "run", "flow", "direction").rows() == [
        (p, t, r, 0, d) for p, t in [(0, "udp"), (1, "tcp")] for r in (0, 1) for d in ("fwd", "rev")
    ]
    for col in ["run", "seed", "flow", "src", "dst", "transport", "app", "tx_packets", "rx_packets", "pdr", "goodput_kbps", "delay_mean_s", "jitter_ipdv_s", "jitter_rfc3550_s"]:
        assert col in flows.columns, col
    assert pl.read_csv(out / "flows.csv").height == flows.height
    net = pl.read_parquet(out / "network.parquet")
    assert net.height == 4 and "mac_frames" in net.columns and "drops_queue" in net.columns
    # 495 messages each way (0.1 s .. 9.98 s every 20 ms), all delivered; over UDP at exactly
    # 54 ms, over TCP a little later (40-byte headers, segments that carry several messages).
    assert flows["tx_packets"].to_list() == [495] * 8
    assert flows["rx_packets"].to_list() == [495] * 8
    udp = flows.filter(pl.col("transport") == "udp")
    assert all(abs(d - 0.054) < 1e-9 for d in udp["delay_mean_s"].to_list())
    tcp = flows.filter(pl.col("transport") == "tcp")
    assert all(d > 0.054 for d in tcp["delay_mean_s"].to_list())
    assert all(r > 0.1 for r in tcp["rtt_mean_s"].to_list())
    ts = pl.read_parquet(out / "timeseries.parquet")
    assert set(ts["series"].unique()) == {"goodput_kbps", "delay_mean_s", "queue_packets", "cwnd_bytes", "ssthresh_bytes", "srtt_s"}
    summary = pl.read_csv(out / "summary.csv")
    row = summary.filter((pl.col("metric") == "rx_packets") & (pl.col("direction") == "fwd") & (pl.col("point") == 1))
    assert row["n"].item() == 2 and row["mean"].item() == 495.0


@pytest.mark.parametrize("sizes, wire_bytes", [("ns2", 128), ("standard", 128 + UDP + IPV4 + PPP)])
def test_exact_one_way_delay_on_an_idle_link(sizes, wire_bytes):
    res = tpsim.run(tpsim.Scenario(one_link(sizes, extra='drain = "1s"')))
    expect = wire_bytes * 8 / 256_000 + 0.050
    f = res.flows.row(0, named=True)
    assert f["rx_packets"] == f["tx_packets"] == 500
    for key in ["delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_max_s", "net_delay_mean_s"]:
        assert abs(f[key] - expect) < 1e-6, (key, f[key], expect)
    if sizes == "ns2":
        assert abs(f["delay_mean_s"] - 0.054) < 1e-6


def test_goodput_follows_its_definition():
    # 128 B every 20 ms from 0 s, stop at 5 s: active time 5 s, 250 messages delivered.
    res = tpsim.run(tpsim.Scenario(one_link(app='{ kind = "cbr", size = "128B", interval = "20ms", stop = "5s" }', extra='drain = "1s"')))
    f = res.flows.row(0, named=True)
    assert f["rx_packets"] == 250
    assert abs(f["goodput_kbps"] - 250 * 128 * 8 / 1000 / 5.0) < 1e-9


def test_percentiles_are_nearest_rank_of_the_delays():
    # Poisson arrivals into a slow link make the delays vary; check p50/p95/max/mean against
    # the definitions using the per-bin series would be indirect, so recompute from a run
    # with known structure: queueing delays take distinct values.
    res = tpsim.run(
        tpsim.Scenario(one_link(app='{ kind = "cbr", size = "500B", interval = "20ms", arrivals = "poisson" }', link_extra="queue = 1000", duration="60s", extra='drain = "30s"'))
    )
    f = res.flows.row(0, named=True)
    assert f["rx_packets"] == f["tx_packets"]
    assert f["delay_p50_s"] <= f["delay_p95_s"] <= f["delay_max_s"]
    assert f["delay_mean_s"] > 500 * 8 / 256_000 + 0.05  # queueing adds delay
    assert f["jitter_ipdv_s"] > 0 and f["jitter_rfc3550_s"] > 0
