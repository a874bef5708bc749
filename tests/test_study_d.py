"""Study D end to end through the CLI, and exact delays through the API."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

import tpsim
from conftest import ROOT, SCENARIOS, STUDY_D_RUNS_2, cli_once, one_link

STUDY_D = SCENARIOS / "study-d-wired-voip.toml"
DSIZE_KEY = "flows.0.app.size + flows.1.app.size"

# Header sizes from the standards, not from tpsim: IPv4 (RFC 791 §3.1), UDP (RFC 768), and the
# 2-byte PPP protocol field tpsim documents as point-to-point framing (RFC 1661 §2).
IPV4, UDP, PPP = 20, 8, 2


def test_cli_run_writes_every_table_one_row_per_run_and_flow(tmp_path_factory):
    # `tpsim run study-d-wired-voip.toml --runs 2`, run once for this test and test_paper.py's.
    out, p = cli_once(tmp_path_factory, *STUDY_D_RUNS_2)
    assert STUDY_D_RUNS_2[:4] == ("run", str(STUDY_D), "--runs", "2")
    assert p.returncode == 0, p.stderr
    for name in ["flows.parquet", "flows.csv", "network.parquet", "network.csv", "summary.csv", "timeseries.parquet"]:
        assert (out / name).is_file(), name
    flows = pl.read_parquet(out / "flows.parquet")
    # Six transports x two stacks x four sizes (the study's sweep) x 2 runs x 2 flows (one per
    # direction); the study's own 128 B is checked here.
    key = "flows.0.transport + flows.1.transport"
    size_key = [k for k in flows.columns if k.startswith("flows.0.app.size + ")][0]
    transports = ["udp", "tcp", "sctp", "tfrc", "dccp-ccid2", "dccp-ccid3"]
    sizes = ["64B", "128B", "256B", "512B"]
    assert flows.height == 6 * 2 * 4 * 2 * 2
    assert flows.select("point", key, "simulation.stack", size_key, "run", "flow", "direction").rows() == [
        (8 * i + 4 * j + k, t, stack, size, r, f, "fwd")
        for i, t in enumerate(transports) for j, stack in enumerate(["ns2", "modern"]) for k, size in enumerate(sizes)
        for r in (0, 1) for f in (0, 1)
    ]
    assert (flows["transport"] == flows[key]).all()
    # Every message is one packet of its size: UDP's packets are the messages (sizes = "ns2").
    udp = flows.filter(pl.col("transport") == "udp")
    assert udp["packet_size_mean_b"].to_list() == [float(int(v[:-1])) for v in udp[size_key].to_list()]
    flows = flows.filter(pl.col(size_key) == "128B")
    for col in ["run", "seed", "flow", "src", "dst", "transport", "app", "tx_packets", "rx_packets", "pdr", "goodput_kbps", "delay_mean_s", "jitter_ipdv_s", "jitter_rfc3550_s"]:
        assert col in flows.columns, col
    assert pl.read_csv(out / "flows.csv").height == 4 * flows.height
    net = pl.read_parquet(out / "network.parquet")
    assert net.height == 96 and "mac_frames" in net.columns and "drops_queue" in net.columns
    # 495 messages each way (0.1 s .. 9.98 s every 20 ms). Under "modern" all are delivered;
    # over UDP at exactly 54 ms, over the other transports a little later (larger headers,
    # packets that carry several messages, pacing).
    assert flows["tx_packets"].to_list() == [495] * 48
    modern = flows.filter(pl.col("simulation.stack") == "modern")
    assert modern["rx_packets"].to_list() == [495] * 24
    udp = flows.filter(pl.col("transport") == "udp")
    assert all(abs(d - 0.054) < 1e-9 for d in udp["delay_mean_s"].to_list())
    for t in transports[1:]:
        rel = flows.filter(pl.col("transport") == t)
        assert all(d > 0.054 for d in rel["net_delay_mean_s"].to_list()), t
        assert all(r > 0.1 for r in rel["rtt_mean_s"].to_list()), t
    # The published view ("ns2": ns-2.35's agents with their default sizes): TCP and TFRC pad
    # every 128-byte write to packetSize_ 1000 (1040- and 1032-byte packets), four times what
    # the 256 kbit/s link carries per message, so they lose messages; UDP, SCTP and CCID 2
    # deliver all.
    by = {(r["transport"], r["simulation.stack"]): r for r in flows.filter(pl.col("flow") == 0).iter_rows(named=True)}
    for t in ["udp", "sctp", "dccp-ccid2"]:
        assert by[(t, "ns2")]["rx_packets"] == 495, t
    for t, size in [("tcp", 1040.0), ("tfrc", 1032.0)]:
        assert by[(t, "ns2")]["packet_size_min_b"] == by[(t, "ns2")]["packet_size_max_b"] == size, t
        assert by[(t, "ns2")]["rx_packets"] < 400, t
    # The stacks differ where ns-2's agents do: ns-2.35's Agent/SCTP bundles messages and sends
    # only on a SACK (about 100 ms a packet, against 56 ms for RFC 9260's sender), and its TCP
    # sink acknowledges every packet (no delayed ACKs).
    assert by[("sctp", "ns2")]["net_delay_mean_s"] > 0.09 > 0.06 > by[("sctp", "modern")]["net_delay_mean_s"]
    assert by[("tcp", "ns2")]["ack_packets"] >= by[("tcp", "ns2")]["rx_segments"] > 4 * by[("tcp", "modern")]["ack_packets"]
    # SCTP's own columns appear, filled only on SCTP rows; a lossless link blocks nothing.
    sctp = flows.filter(pl.col("transport") == "sctp")
    assert sctp["hol_blocking_mean_s"].to_list() == [0.0] * 8
    assert sctp["streams_used"].to_list() == [1.0] * 8
    assert flows.filter(pl.col("transport") != "sctp")["hol_blocking_mean_s"].null_count() == 40
    ts = pl.read_parquet(out / "timeseries.parquet")
    # TCP and SCTP: windows in bytes (ns-2's TCP agents: in packets); DCCP CCID 2: in packets;
    # TFRC and CCID 3: the allowed rate and p.
    assert set(ts["series"].unique()) == {"goodput_kbps", "delay_mean_s", "jitter_ipdv_s", "rx_bytes_cumulative",
                                          "queue_packets", "cwnd_bytes", "ssthresh_bytes", "srtt_s", "cwnd_packets",
                                          "ssthresh_packets", "x_bps", "p"}
    summary = pl.read_csv(out / "summary.csv")
    row = summary.filter((pl.col("metric") == "rx_packets") & (pl.col("flow") == 0) & (pl.col("point") == 5))
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
    # 128 B every 20 ms from 0 s, stop at 5 s: the window is [0, 5 s]. Each message takes
    # 158 B * 8 / 256 kbit/s = 4.9375 ms on the wire + 50 ms: the ones sent at k * 20 ms with
    # k <= 247 arrive by 5 s (248 of them); the last two arrive in the drain period, counted in
    # rx_packets but not in goodput.
    res = tpsim.run(tpsim.Scenario(one_link(app='{ kind = "cbr", size = "128B", interval = "20ms", stop = "5s" }', extra='drain = "1s"')))
    f = res.flows.row(0, named=True)
    assert f["rx_packets"] == 250
    assert abs(f["goodput_kbps"] - 248 * 128 * 8 / 1000 / 5.0) < 1e-9


# A 1 Mbit/s, 10 ms link under ns2 sizes (the configured size is the IP packet, no framing):
# 125 B take 1 ms on the wire, 1000 B 8 ms, 2000 B 16 ms (MTU raised: tpsim does not fragment).
# Flow 0 (measured): 125 B at 1, 11, ..., 191 ms. Flow 1: one 2000 B packet at 0 ms. Flow 2:
# 1000 B at 20, 40, ..., 160 ms. All three share the link's queue.
PERCENTILE_LINK = """
[simulation]
duration = "1s"
drain = "1s"
sizes = "ns2"

[nodes]
count = 2

[[links]]
nodes = [0, 1]
rate = "1Mbps"
delay = "10ms"
mtu = "2000B"

[[flows]]
src = 0
dst = 1
transport = "udp"
app = { kind = "cbr", size = "125B", interval = "10ms", start = "1ms", count = 20 }

[[flows]]
src = 0
dst = 1
transport = "udp"
app = { kind = "cbr", size = "2000B", interval = "1s", count = 1 }

[[flows]]
src = 0
dst = 1
transport = "udp"
app = { kind = "cbr", size = "1000B", interval = "20ms", start = "20ms", count = 8 }
"""


def test_percentiles_are_nearest_rank_of_the_delays():
    # Hand derivation of flow 0's delays (wait + 1 ms serialization + 10 ms propagation):
    # message 0 (1 ms) waits for the 2000 B packet until 16 ms: 15 + 11 = 26 ms; message 1
    # (11 ms) waits for message 0 until 17 ms: 6 + 11 = 17 ms; message 2j (20j + 1 ms, j = 1..8)
    # waits for the 1000 B packet sent over [20j, 20j + 8]: 7 + 11 = 18 ms; messages 2j + 1 and
    # 18, 19 find the link idle: 11 ms. Sorted: 11 x10, 17, 18 x8, 26 (n = 20).
    delays_ms = [26, 17] + [18, 11] * 8 + [11, 11]
    assert sorted(delays_ms) == [11] * 10 + [17] + [18] * 8 + [26]
    # Nearest rank: p50 -> rank ceil(0.50 * 20) = 10 -> 11 ms (linear interpolation: 14 ms);
    # p95 -> rank ceil(0.95 * 20) = 19 -> 18 ms (interpolation 18.4 ms, maximum 26 ms).
    p50, p95 = 0.011, 0.018
    # docs/metrics.md: the same as numpy's method="inverted_cdf".
    assert np.percentile(np.array(delays_ms) / 1000, 50, method="inverted_cdf") == p50
    assert np.percentile(np.array(delays_ms) / 1000, 95, method="inverted_cdf") == p95
    res = tpsim.run(tpsim.Scenario(PERCENTILE_LINK))
    f = res.flows.filter(pl.col("flow") == 0).row(0, named=True)
    assert f["tx_packets"] == f["rx_packets"] == 20
    # Whole nanoseconds divided by 1e9 (correctly rounded): exact equality.
    assert f["delay_p50_s"] == p50
    assert f["delay_p95_s"] == p95
    assert f["delay_max_s"] == 0.026
    # Mean 297 ms / 20 = 14.85 ms; IPDV: |dD| = 9, 1, fifteen times 7, 0, 0 -> 115 ms / 19.
    # Neither is a whole number of ns: relative tolerance 1e-12.
    assert f["delay_mean_s"] == pytest.approx(0.01485, rel=1e-12, abs=0)
    assert f["jitter_ipdv_s"] == pytest.approx(0.115 / 19, rel=1e-12, abs=0)


def test_study_d_report_has_the_studys_own_outputs(tmp_path_factory):
    """The original study's outputs: packets and bytes generated, sent and received, packet
    sizes, and delay, jitter, throughput and cumulative bytes over time."""
    import json

    # `tpsim study d -o DIR` (one replication per point, as --quick runs), run once for this
    # test and test_workbench.py's.
    out, p = cli_once(tmp_path_factory, "study", "d", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    names = {f["name"] for f in json.loads((out / "figures" / "figures.json").read_text())}
    for series in ["goodput_kbps", "delay_mean_s", "jitter_ipdv_s", "rx_bytes_cumulative"]:
        assert f"timeseries-{series}" in names, names
    html = (out / "report.html").read_text(encoding="utf-8")
    for column in ["messages sent", "bytes sent", "transport packets sent", "IP bytes sent", "smallest packet",
                   "largest packet", "mean packet size", "messages delivered", "bytes delivered"]:
        assert column in html, column
    # Delay and throughput against the packet size: the sweep's size is the figures' x.
    figs = {f["name"]: f for f in json.loads((out / "figures" / "figures.json").read_text())}
    for m in ["goodput_kbps", "delay_mean_s"]:
        for stack in ["ns2", "modern"]:
            f = figs[f"{m}-{stack}"]
            assert f["xlabel"] == "message size (B)" and f["x_positions"] == [64.0, 128.0, 256.0, 512.0], f
    flows = pl.read_parquet(out / "flows.parquet")
    assert set(flows["transport"]) == {"udp", "tcp", "sctp", "tfrc", "dccp-ccid2", "dccp-ccid3"}
    # Under "modern" every transport delivers every message (an uncongested link).
    assert (flows.filter(pl.col("simulation.stack") == "modern")["rx_packets"] == 495).all()
    # As published (ns-2.35's Agent/TCP/Newreno with packetSize_ 1000): every 128-byte write a
    # 1040-byte segment, 327 sent and 312 received each way, 305.2 ms per packet (ns-2.35
    # itself: 657 sent and 623 received over both directions, 305.465 ms over seeds 1-3;
    # 303.486 ms at clock phase 0, `tcp.boot_time = "0s"`).
    tcp = flows.filter((pl.col("transport") == "tcp") & (pl.col("simulation.stack") == "ns2")
                       & (pl.col(DSIZE_KEY) == "128B"))
    assert tcp["packet_size_max_b"].to_list() == [1040.0, 1040.0]
    assert tcp["tx_segments"].to_list() == [327, 327] and tcp["rx_segments"].to_list() == [312, 312]
    assert all(abs(d - 0.3055) < 0.003 for d in tcp["packet_delay_mean_s"].to_list()), tcp["packet_delay_mean_s"]
    # The paper's Table 2 at its point (both directions together): TCP's 1040-byte packets.
    i = html.index('id="table-compared"')
    table = html[i:html.index("</table>", i)]
    assert "smallest packet" in table and "largest packet" in table and "tcp" in table and "1040" in table
    # The report compares the six transports over time at the paper's point (128 B, as
    # published; the scenario's [report] table), one line each for flow 0.
    for series in ["goodput_kbps", "delay_mean_s"]:
        info = figs[f"timeseries-{series}"]
        assert info["series"] == [f"transport = {t}, flow 0 fwd" for t in ["udp", "tcp", "sctp", "tfrc", "dccp-ccid2", "dccp-ccid3"]], info
        assert "stack = ns2" in info["title"] and "message size = 128 B" in info["title"], info["title"]
    # UDP's packets are the messages themselves (sizes = "ns2"): point 0 sends 64 B ones.
    udp = flows.filter((pl.col("transport") == "udp") & (pl.col("point") == 0))
    assert udp.select("packet_size_min_b", "packet_size_max_b", "packet_size_mean_b").unique().rows() == [(64.0, 64.0, 64.0)]
    assert (udp["tx_ip_bytes"] == 495 * 64).all()
    ts = pl.read_parquet(out / "timeseries.parquet")
    cum = ts.filter((pl.col("series") == "rx_bytes_cumulative") & (pl.col("point") == 0) & (pl.col("flow") == 0))
    assert cum.sort("time_s")["value"].to_list()[-1] == 495 * 64


def test_message_sized_ns2_agents_are_one_switch():
    # `simulation.ns2_packet_size = "message"`, the ns-2 scripts' sizes=msg: ns-2's TCP and
    # TFRC agents send each 128-byte message unpadded (168- and 160-byte packets under
    # sizes = "ns2") and CCID 3 computes with s = the message size, so all deliver every
    # message, where ns-2's default sizes lose some.
    res = tpsim.run(STUDY_D, set=["simulation.ns2_packet_size=message"],
                    sweep=["flows.0.transport + flows.1.transport=tcp,tfrc,dccp-ccid3", f"{DSIZE_KEY}=128B", "simulation.stack=ns2"])
    f = {r["transport"]: r for r in res.flows.filter(pl.col("flow") == 0).iter_rows(named=True)}
    assert f["tcp"]["packet_size_max_b"] == 168.0 and f["tfrc"]["packet_size_max_b"] == 160.0
    for t in ["tcp", "tfrc", "dccp-ccid3"]:
        assert f[t]["rx_packets"] == 495, t


@pytest.mark.parametrize("report, message", [
    ('timeseries_at = { "flows.0.app.size" = "128B" }', "report.timeseries_at: `flows.0.app.size` is not a swept key"),
    ("timeseries_flows = [2]", "report.timeseries_flows: no flow 2 (the scenario has 2)"),
])
def test_report_table_names_swept_keys_and_existing_flows(tmp_path, report, message):
    text = STUDY_D.read_text(encoding="utf-8")
    text = text[: text.index("[report]")] + "[report]\n" + report + "\n"
    path = tmp_path / "d.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(tpsim.ScenarioError, match=re.escape(message)):
        tpsim.plan(path)
