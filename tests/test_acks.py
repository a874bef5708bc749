"""Per-ACK samples (``[output] ack_samples = true``, docs/metrics.md "Per-ACK samples"):
``acks.parquet`` is written, read back by ``Results.read`` with its documented columns and
types, counts the TFRC feedback packets, and is absent without the key."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import tpsim
from conftest import ROOT, cli
from tpsim.results import ACKS_SCHEMA

# A chain 0 - 1 - 2 without loss: a TCP bulk transfer 0 -> 2 and a TFRC CBR flow 2 -> 0, plus
# a UDP flow (no acknowledgements); two replications.
PATH = """
[simulation]
duration = "3s"
drain = "1s"
runs = 2

[nodes]
count = 3

[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "2ms"
queue = 1000

[[links]]
nodes = [1, 2]
rate = "5Mbps"
delay = "10ms"
queue = 1000

[[flows]]
src = 0
dst = 2
transport = "tcp"
app = { kind = "bulk", size = "1000B", bytes = "200kB" }

[[flows]]
src = 2
dst = 0
transport = "tfrc"
app = { kind = "cbr", size = "500B", interval = "20ms" }

[[flows]]
src = 0
dst = 2
transport = "udp"
app = { kind = "cbr", size = "200B", interval = "50ms" }
"""

IDENT = ["point", "run", "seed"]


def test_acks_parquet_is_written_typed_and_read_back(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(PATH)
    out = tmp_path / "o"
    p = cli("run", str(f), "-o", str(out), "--no-report", "-q", "--set", "output.ack_samples=true")
    assert p.returncode == 0, p.stderr
    acks = pl.read_parquet(out / "acks.parquet")
    assert acks.columns == IDENT + list(ACKS_SCHEMA)
    for name, dtype in ACKS_SCHEMA.items():
        assert acks.schema[name] == dtype, name
    assert set(acks["run"].unique()) == {0, 1}
    # Only the flows with acknowledgements have rows: TCP (flow 0) and TFRC (flow 1).
    assert set(acks["flow"].unique()) == {0, 1}
    flows = pl.read_parquet(out / "flows.parquet")
    tfrc = acks.filter(pl.col("flow") == 1)
    for row in flows.filter(pl.col("flow") == 1).iter_rows(named=True):
        assert row["dropped_segments"] == 0
        rows = tfrc.filter(pl.col("run") == row["run"])
        # A row per feedback packet the sender got: the receiver's feedback, none lost.
        assert rows.height == row["ack_packets"] > 0
        assert rows["x_bps"].null_count() == 0 and rows["cwnd_bytes"].null_count() == rows.height
    tcp = acks.filter(pl.col("flow") == 0)
    assert tcp["cwnd_bytes"].null_count() == 0 and tcp["x_bps"].null_count() == tcp.height
    # RTT samples are at least the two-way propagation delay, 2 x (2 + 10) ms.
    assert tcp["rtt_sample_s"].drop_nulls().min() >= 0.024
    # The stored results expose the same table.
    res = tpsim.Results.read(out)
    assert res.acks.equals(acks)


def test_every_column_is_documented():
    doc = (ROOT / "docs" / "metrics.md").read_text()
    section = doc[doc.index("## Per-ACK samples"):]
    section = section[: section.index("\n## ", 1)]
    rows = "\n".join(line for line in section.splitlines() if line.startswith("| `"))
    for name in ACKS_SCHEMA:
        assert f"`{name}`" in rows, name
    assert "`ack_samples`" in (ROOT / "docs" / "scenarios.md").read_text()


def test_without_the_key_no_table_and_the_same_results(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(PATH.replace("runs = 2", "runs = 1"))
    res = tpsim.run(f, out=tmp_path / "o")
    assert res.acks.is_empty()
    assert not (tmp_path / "o" / "acks.parquet").exists()
    on = tpsim.run(f, set=[("output.ack_samples", True)], out=tmp_path / "o")
    assert on.acks.height > 0 and (tmp_path / "o" / "acks.parquet").exists()
    # The same seed gives the same samples.
    again = tpsim.run(f, set=[("output.ack_samples", True)])
    assert again.acks.equals(on.acks)
    # Writing results without samples over them removes the stale file.
    res.write(tmp_path / "o")
    assert not (tmp_path / "o" / "acks.parquet").exists()
    # The other tables do not change with the samples.
    assert res.flows.drop("role").equals(on.flows.drop("role"))
    assert res.network.equals(on.network)
    assert res.timeseries.equals(on.timeseries)


def test_report_draws_the_first_window_based_flows_cwnd_per_ack(tmp_path: Path):
    from tpsim.report import figure_plan

    f = tmp_path / "s.toml"
    f.write_text(PATH.replace("runs = 2", "runs = 1"))
    assert "acks-cwnd" not in [stem for stem, _ in figure_plan(tpsim.run(f))]
    res = tpsim.run(f, set=[("output.ack_samples", True)])
    plan = dict(figure_plan(res))
    fig = plan["acks-cwnd"]()
    # One line: flow 0 (TCP, the window-based flow), a point per ACK, the window in the table.
    (line,) = fig.axes[0].get_lines()
    tcp = res.acks.filter(pl.col("flow") == 0)
    assert list(line.get_xdata()) == tcp["time_s"].to_list()
    assert "flow 0 fwd" in fig._suptitle.get_text()
