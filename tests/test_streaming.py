"""Outputs streamed to disk while the runs go (tpsim.store, the engine's streams): the
packet trace, its ns-2 text, the per-ACK samples, the movie trace and the time series written
by the engine into each run's files and combined by streaming equal, as frames, the same runs'
tables built from columns in memory (the way results were built before streaming); the ns-2
files equal byte for byte what the Python writer (``tpsim ns2-trace``) makes of that trace; a
stored run with a file missing is made again; results read back give the same tables lazily."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import tpsim
from tpsim import _tpsim, ns2trace
from tpsim.api import plan
from tpsim.results import LAZY_TABLES, Results

# Four radios over AODV with ARP: a TCP bulk flow (ACKs, per-ACK samples) and a UDP flow
# whose relay goes down at 4 s (drops, route errors). Two points (the UDP packet size), two
# replications each.
RADIO = """
[simulation]
duration = "8s"
drain = "500ms"
runs = 2
[output]
trace = true
animation = true
ack_samples = true
ns2_trace = "old"
[nodes]
count = 4
placement = { kind = "explicit", positions = [["0m", "0m"], ["200m", "0m"], ["400m", "0m"], ["200m", "150m"]] }
[radio]
rts_threshold = "0B"
queue = 10
[arp]
[routing]
protocol = "aodv"
[[flows]]
src = 0
dst = 2
transport = "tcp"
app = { kind = "bulk", size = "1000B", bytes = "200kB" }
[[flows]]
src = 3
dst = 2
transport = "udp"
app = { kind = "cbr", size = "512B", interval = "40ms" }
[[events]]
at = "4s"
kind = "node_down"
node = 1
[sweep]
"flows.1.app.size" = ["256B", "512B"]
"""

# A two-node link with a shallow queue: the wired format.
WIRED = """
[simulation]
duration = "3s"
[output]
ns2_trace = "wired"
ack_samples = true
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "300kbps"
delay = "10ms"
queue = 4
[[flows]]
src = 0
dst = 1
transport = "tcp"
app = { kind = "bulk", size = "1000B" }
[[flows]]
src = 1
dst = 0
transport = "udp"
app = { kind = "cbr", size = "300B", interval = "10ms" }
"""


def in_memory(p) -> Results:
    """The plan's runs made by the engine with every table returned as columns, combined in
    memory: the reference the streamed results must equal."""
    records = []
    for job in p.jobs:
        sc = job.point.scenario
        res = _tpsim.run(sc.text, sc.source, seed=job.seed, run=job.run)
        assert res.pop("files") == {}
        res.update(run=job.run, seed=job.seed, point=job.point.index, params=job.point.params)
        records.append(res)
    return Results.from_runs(records, param_keys=list(p.points[0].params))


def check_same(streamed: Results, ref: Results, out: Path, kinds: tuple[str, ...] = LAZY_TABLES) -> None:
    assert streamed.flows.drop("role").equals(ref.flows) and streamed.network.equals(ref.network)
    for kind in LAZY_TABLES:
        a, b = getattr(streamed, kind), getattr(ref, kind)
        assert a.schema == b.schema and a.equals(b), kind
        assert (a.height > 0) == (kind in kinds), kind
    assert ref.ns2_formats and set(streamed.ns2_files) == set(ref.ns2_formats)
    for (point, run), fmt in ref.ns2_formats.items():
        expected = out / "expected.tr"
        ns2trace.write(ns2trace.run_trace(ref.trace, point, run), expected, fmt)
        assert (out / ns2trace.file_name(point, run)).read_bytes() == expected.read_bytes(), (point, run)


@pytest.mark.parametrize("fmt", ["old", "new"])
def test_streamed_radio_runs_equal_the_runs_kept_in_memory(tmp_path: Path, fmt: str) -> None:
    f = tmp_path / "radio.toml"
    f.write_text(RADIO.replace('ns2_trace = "old"', f'ns2_trace = "{fmt}"'))
    out = tmp_path / "out"
    res = tpsim.run(f, out=out, jobs=2)
    assert res.trace.height > 5000 and res.acks.height > 50
    check_same(res, in_memory(plan(f)), out)
    # The combined tables are in the output directory, and read back lazily the same.
    back = Results.read(out)
    for kind in LAZY_TABLES:
        assert back.has(kind) and back.scan(kind).collect().equals(getattr(res, kind)), kind
    one = back.scan("trace").filter((pl.col("point") == 1) & (pl.col("run") == 1)).collect()
    assert one.height and one["point"].unique().to_list() == [1]


def test_streamed_wired_run_equals_the_run_kept_in_memory(tmp_path: Path) -> None:
    f = tmp_path / "wired.toml"
    f.write_text(WIRED)
    out = tmp_path / "out"
    res = tpsim.run(f, out=out)
    check_same(res, in_memory(plan(f)), out, ("timeseries", "trace", "acks"))
    text = (out / "ns2" / "p0-run0.tr").read_text()
    assert {line[0] for line in text.splitlines()} == {"+", "-", "r", "d"}


def test_results_written_nowhere_keep_their_files_until_they_go(tmp_path: Path) -> None:
    f = tmp_path / "wired.toml"
    f.write_text(WIRED)
    res = tpsim.run(f)
    store = res._parts["trace"][0][1].parent
    assert store.is_dir() and res.trace.height > 0
    res.write(tmp_path / "later")
    assert (tmp_path / "later" / "trace.parquet").is_file() and (tmp_path / "later" / "ns2" / "p0-run0.tr").is_file()
    del res
    import gc

    gc.collect()
    assert not store.exists()


def test_a_stored_run_with_a_missing_file_is_made_again(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = tmp_path / "wired.toml"
    f.write_text(WIRED)
    out = tmp_path / "out"
    first = tpsim.run(f, out=out)
    trace = first.trace
    record = next((out / "runs").glob("*.json"))
    files = json.loads(record.read_text())["files"]
    assert set(files) == {"timeseries", "trace", "acks", "ns2"}
    (out / "runs" / files["trace"]).unlink()
    again = tpsim.run(f, out=out)
    assert again.ran_now == 1 and "missing" in capsys.readouterr().err
    assert again.trace.equals(trace)
    # Whole now: reused, nothing run.
    assert tpsim.run(f, out=out).ran_now == 0


def test_a_run_stopped_midway_leaves_no_partial_files(tmp_path: Path) -> None:
    f = tmp_path / "wired.toml"
    f.write_text(WIRED.replace('duration = "3s"', 'duration = "600s"'))
    out = tmp_path / "out"
    with pytest.raises(tpsim.api.SweepFailed, match="wall-clock limit"):
        tpsim.run(f, out=out, run_time_limit=1e-6)
    assert not out.exists(), "nothing stored: the directories it made are gone too"


def test_the_engine_refuses_an_unknown_output_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match='unknown output "pcap"'):
        _tpsim.run(WIRED, files={"pcap": str(tmp_path / "x")})
    assert not (tmp_path / "x").exists()


def test_the_ns2_trace_command_writes_the_stored_runs_file(tmp_path: Path) -> None:
    from conftest import cli

    f = tmp_path / "radio.toml"
    f.write_text(RADIO)
    out = tmp_path / "out"
    tpsim.run(f, out=out, runs=1)
    p = cli("ns2-trace", str(out), "--point", "1", "--run", "0")
    assert p.returncode == 0, p.stderr
    assert p.stdout == (out / "ns2" / "p1-run0.tr").read_text()
