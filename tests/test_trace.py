"""The per-packet event trace (``[output] trace = true``, docs/metrics.md "Packet trace"):
``trace.parquet`` reproduces the flows table's segment counts exactly."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import tpsim
from conftest import cli

# A chain 0 - 1 - 2 whose second link is slow and lossy, with a 3-packet queue: a UDP CBR flow
# that overloads it, a TCP bulk transfer, and a two-way voip flow; two replications.
LOSSY = """
[simulation]
duration = "3s"
drain = "200ms"
runs = 2

[nodes]
count = 3

[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "2ms"

[[links]]
nodes = [1, 2]
rate = "500kbps"
delay = "10ms"
queue = 3
loss = 0.03

[[flows]]
src = 0
dst = 2
transport = "udp"
app = { kind = "cbr", size = "400B", interval = "8ms" }

[[flows]]
src = 0
dst = 2
transport = "tcp"
app = { kind = "bulk", size = "1000B" }

[[flows]]
src = 2
dst = 0
transport = "udp"
app = { kind = "voip", size = "160B", interval = "20ms" }
"""

KEYS = ["point", "run", "flow", "direction"]


def test_trace_parquet_reproduces_the_flows_table_counts(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(LOSSY)
    out = tmp_path / "o"
    p = cli("run", str(f), "-o", str(out), "--no-report", "-q", "--set", "output.trace=true")
    assert p.returncode == 0, p.stderr
    trace = pl.read_parquet(out / "trace.parquet")
    flows = pl.read_parquet(out / "flows.parquet")
    assert trace.columns == ["point", "run", "seed", "time_s", "event", "node", "layer", "kind", "flow",
                             "direction", "packet", "size_b", "reason", "duplicate"]
    assert set(trace["run"].unique()) == {0, 1}
    data = trace.filter(pl.col("flow").is_not_null())
    counts = data.group_by(KEYS).agg(
        (pl.col("event") == "send").sum().alias("sends"),
        ((pl.col("event") == "receive") & ~pl.col("duplicate")).sum().alias("receives"),
        ((pl.col("event") == "receive") & pl.col("duplicate")).sum().alias("duplicates"),
        (pl.col("event") == "drop").sum().alias("drops"),
    )
    joined = flows.select(KEYS + ["tx_segments", "rx_segments", "rx_duplicate_segments", "dropped_segments"]).join(
        counts, on=KEYS, how="left").fill_null(0)
    assert joined.height == flows.height == 2 * 4
    for row in joined.iter_rows(named=True):
        assert row["sends"] == row["tx_segments"], row
        assert row["receives"] == row["rx_segments"], row
        assert row["duplicates"] == row["rx_duplicate_segments"], row
        # On wires a packet has one copy: each drop row is a lost packet.
        assert row["drops"] == row["dropped_segments"], row
    assert flows["dropped_segments"].sum() > 0
    # Drops of flow data and of pure ACKs give the network table's drops_<reason>.
    net = pl.read_parquet(out / "network.parquet")
    by_reason = trace.filter((pl.col("event") == "drop") & pl.col("kind").is_in(["data", "transport"])) \
        .group_by(["run", "reason"]).len()
    for row in net.iter_rows(named=True):
        for reason in ("queue", "link_error", "no_route", "ttl"):
            got = by_reason.filter((pl.col("run") == row["run"]) & (pl.col("reason") == reason))["len"].sum()
            assert got == row[f"drops_{reason}"], (row["run"], reason)
    assert set(trace.filter(pl.col("event") == "drop")["reason"].unique()) <= {"queue", "link_error"}
    assert trace.filter(pl.col("event") != "drop")["reason"].null_count() == trace.filter(pl.col("event") != "drop").height
    # The forwarding node is the middle one, where the IP layer forwards.
    fwd = trace.filter(pl.col("event") == "forward")
    assert fwd.height > 0 and set(fwd["node"].unique()) == {1} and set(fwd["layer"].unique()) == {"ip"}
    # The stored results expose the same trace.
    res = tpsim.Results.read(out)
    assert res.trace.equals(trace)


def test_without_the_key_no_trace_is_written(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(LOSSY.replace("runs = 2", "runs = 1"))
    res = tpsim.run(f, out=tmp_path / "o")
    assert res.trace.is_empty()
    assert not (tmp_path / "o" / "trace.parquet").exists()
    traced = tpsim.run(f, set=[("output.trace", True)], out=tmp_path / "o")
    assert traced.trace.height > 0 and (tmp_path / "o" / "trace.parquet").exists()
    # Writing results without a trace over them removes the stale trace file.
    res.write(tmp_path / "o")
    assert not (tmp_path / "o" / "trace.parquet").exists()
    # The other tables do not change with the trace.
    assert res.flows.drop("role").equals(traced.flows.drop("role"))
