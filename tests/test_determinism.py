"""Same scenario and seed: byte-identical tables; another seed: different random results."""

from __future__ import annotations

import polars as pl

import tpsim
from conftest import ROOT, cli, one_link

RANDOM = one_link(
    app='{ kind = "cbr", size = "200B", interval = "8ms", arrivals = "poisson" }',
    link_extra="loss = 0.05\nqueue = 5",
    duration="20s",
    extra="runs = 3",
)


def test_same_seed_gives_byte_identical_tables_and_another_seed_differs(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(RANDOM)
    dirs = []
    for name, seed in [("a", "5"), ("b", "5"), ("c", "6")]:
        p = cli("run", str(f), "-o", str(tmp_path / name), "--seed", seed, "--no-report")
        assert p.returncode == 0, p.stderr
        dirs.append(tmp_path / name)
    for table in ["flows.parquet", "flows.csv", "network.parquet", "network.csv", "summary.csv", "timeseries.parquet"]:
        assert (dirs[0] / table).read_bytes() == (dirs[1] / table).read_bytes(), table
    a = pl.read_parquet(dirs[0] / "flows.parquet")
    c = pl.read_parquet(dirs[2] / "flows.parquet")
    assert a["tx_packets"].to_list() != c["tx_packets"].to_list()
    # Replications differ from each other too.
    assert len(set(a["tx_packets"].to_list())) > 1


def test_adding_a_flow_leaves_unrelated_draws_unchanged():
    base = """
[simulation]
duration = "20s"
[nodes]
count = 4
[[links]]
nodes = [0, 1]
rate = "1Mbps"
delay = "5ms"
loss = 0.05
[[links]]
nodes = [2, 3]
rate = "1Mbps"
delay = "5ms"
loss = 0.05
[[flows]]
src = 0
dst = 1
transport = "udp"
app = { kind = "cbr", size = "500B", interval = "10ms", arrivals = "poisson" }
"""
    extra = """
[[flows]]
src = 2
dst = 3
transport = "udp"
app = { kind = "cbr", size = "500B", interval = "7ms", arrivals = "poisson" }
"""
    a = tpsim.run(tpsim.Scenario(base), seed=3).flows
    b = tpsim.run(tpsim.Scenario(base + extra), seed=3).flows
    assert a.row(0) == b.filter(pl.col("flow") == 0).row(0)


def test_conservation_of_messages_and_segments():
    res = tpsim.run(tpsim.Scenario(RANDOM), seed=11)
    for f in res.flows.iter_rows(named=True):
        assert f["tx_segments"] == f["rx_segments"] + f["dropped_segments"] + f["in_flight_segments"]
        assert f["tx_packets"] == f["rx_packets"] + f["dropped_segments"] + f["in_flight_segments"] + f["buffered_packets"]
    net = res.network
    drops = sum(net[c].sum() for c in net.columns if c.startswith("drops_"))
    assert drops == res.flows["dropped_segments"].sum()
    assert net["drops_queue"].sum() > 0 and net["drops_link_error"].sum() > 0


def test_wireless_manet_is_identical_for_one_and_two_workers(tmp_path):
    """Mobility, AODV jitter, MAC backoff and background flows all come from keyed streams:
    the study C tables do not depend on how many processes ran them."""
    text = (ROOT / "scenarios" / "study-c-manet-speed.toml").read_text()
    study = tmp_path / "c.toml"
    # One point of the study (20 m/s, with background, UDP and TCP), 30 s.
    study.write_text(text.split("[sweep]")[0] + '[sweep]\n"flows.0.transport" = ["udp", "tcp"]\n')
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        p = cli(
            "run", str(study), "-o", str(out), "--runs", "2", "--jobs", jobs, "--no-report",
            "--set", "simulation.duration=30s", "--set", "nodes.mobility.speed=[\"20m/s\", \"20m/s\"]",
        )
        assert p.returncode == 0, p.stderr
        outs.append(out)
    for table in ["flows.parquet", "network.parquet", "summary.csv", "timeseries.parquet"]:
        assert (outs[0] / table).read_bytes() == (outs[1] / table).read_bytes(), table
    net = pl.read_parquet(outs[0] / "network.parquet")
    assert (net["routing_packets"] > 0).all()
