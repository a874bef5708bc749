"""ns-2 trace files (``[output] ns2_trace``, docs/ns2-trace.md): ns-2 users' awk scripts
(tests/ns2_trace/*.awk) read tpsim's traces and get tpsim's own counts and delays."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest

import tpsim
from conftest import SCENARIOS, cli, require_tool

AWK_DIR = Path(__file__).resolve().parent / "ns2_trace"

# A 4-node AODV chain (RTS/CTS on, as ns-2) with two CBR flows; node 2, the relay of both,
# leaves at 8 s and comes back at 14 s: routes break (retry-limit and link-break drops),
# discoveries fail (no-route drops) and the source's queue overflows.
AODV = """
[simulation]
duration = "20s"
drain = "2s"
seed = 3
[nodes]
count = 4
placement = { kind = "explicit", positions = [["0m", "0m"], ["200m", "0m"], ["400m", "0m"], ["600m", "0m"]] }
mobility = { model = "waypoints", waypoints = [{ node = 2, at = "8s", to = ["400m", "900m"], speed = "100m/s" }, { node = 2, at = "14s", to = ["400m", "0m"], speed = "100m/s" }] }
[radio]
rts_threshold = "0B"
[routing]
protocol = "aodv"
[[flows]]
src = 0
dst = 3
transport = "udp"
app = { kind = "cbr", size = "512B", interval = "20ms", start = "1s" }
[[flows]]
src = 3
dst = 1
transport = "udp"
app = { kind = "cbr", size = "256B", interval = "100ms", start = "1.5s" }
"""

#: tpsim drop reason -> the ns-2 reason code the old format writes for it.
CODES = {"queue": "IFQ", "mac_retry": "RET", "link_break": "CBK", "no_route": "NRTE", "ttl": "TTL"}


def awk(script: str, path: Path, **variables: str) -> str:
    exe = require_tool("awk")
    args = [exe]
    for k, v in variables.items():
        args += ["-v", f"{k}={v}"]
    p = subprocess.run(args + ["-f", str(AWK_DIR / script), str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def run_aodv(tmp_path: Path, name: str = "o", fmt: str = "old", seed: int = 3) -> Path:
    f = tmp_path / "aodv.toml"
    f.write_text(AODV.replace("seed = 3", f"seed = {seed}"))
    out = tmp_path / name
    p = cli("run", str(f), "-o", str(out), "--no-report", "-q", "--set", f"output.ns2_trace={fmt}")
    assert p.returncode == 0, p.stderr
    return out


def test_awk_counts_of_the_old_format_equal_the_flows_and_network_tables(tmp_path: Path):
    out = run_aodv(tmp_path)
    counts = dict(line.split() for line in awk("agent_counts.awk", out / "ns2" / "p0-run0.tr", type="cbr").splitlines())
    counts = {k: int(v) for k, v in counts.items()}
    flows = pl.read_parquet(out / "flows.parquet")
    net = pl.read_parquet(out / "network.parquet").row(0, named=True)
    assert counts["sent"] == flows["tx_segments"].sum() > 0
    assert counts["recv"] == flows["rx_segments"].sum() + flows["rx_duplicate_segments"].sum() > 0
    drops = sum(v for k, v in net.items() if k.startswith("drops_"))
    assert counts["drop"] == drops
    # The scenario loses packets in several ways, each under its ns-2 code.
    for reason, code in CODES.items():
        assert counts.get(f"drop_{code}", 0) == net[f"drops_{reason}"], reason
    assert sum(net[f"drops_{r}"] > 0 for r in CODES) >= 3, net
    assert counts["drop"] >= flows["dropped_segments"].sum() > 0


def test_old_format_lines_follow_the_packet_across_layers(tmp_path: Path):
    out = run_aodv(tmp_path)
    lines = (out / "ns2" / "p0-run0.tr").read_text().splitlines()
    tk = [line.split() for line in lines]
    # Every received data packet was sent under the same id, by the node its IP source names.
    sent = {t[5]: t for t in tk if t[0] == "s" and t[3] == "AGT"}
    recv = [t for t in tk if t[0] == "r" and t[3] == "AGT"]
    assert recv and all(t[5] in sent for t in recv)
    for t in recv:
        s = sent[t[5]]
        assert s[2] == "_" + s[13].strip("[").split(":")[0] + "_"
        assert t[2] == "_" + t[14].split(":")[0] + "_"
        assert float(t[1]) > float(s[1])
    # Layers and events as ns-2 writes them; routing messages are typed and named.
    assert {(t[0], t[3]) for t in tk} == {("s", "AGT"), ("r", "AGT"), ("s", "RTR"), ("r", "RTR"), ("f", "RTR"),
                                          ("s", "MAC"), ("r", "MAC"), ("D", "IFQ"), ("D", "MAC"), ("D", "RTR")}
    assert {t[-1] for t in tk if t[6] == "AODV"} >= {"(REQUEST)", "(REPLY)"}
    assert {t[6] for t in tk if t[3] == "MAC"} >= {"RTS", "CTS", "ACK", "cbr", "AODV"}
    net = pl.read_parquet(out / "network.parquet").row(0, named=True)
    assert sum(1 for t in tk if t[0] == "s" and t[3] == "MAC") == net["mac_frames"]


def test_retry_limit_lines_name_the_next_hop_and_follow_the_rts_discard(tmp_path: Path):
    # ns-2.35 (mac-802_11.cc) discards an unanswered RTS, tells routing, then discards the
    # packet: `D .. MAC RET 0 RTS 20 [0 hop node 0]`, routing's lines, `D .. MAC RET id cbr ..
    # [0 hop node 800] ------- [src dst ttl hop]`.
    lines = (run_aodv(tmp_path) / "ns2" / "p0-run0.tr").read_text().splitlines()
    tk = [line.split() for line in lines]
    rets = [i for i, t in enumerate(tk) if t[0] == "D" and t[4] == "RET" and t[6] == "cbr"]
    assert rets
    for i in rets:
        t = tk[i]
        node = int(t[2].strip("_"))
        hop = int(t[16].rstrip("]"))
        assert t[8:12] == ["[0", f"{hop:x}", f"{node:x}", "800]"] and hop != node, lines[i]
    rts = [t for t in tk if t[0] == "D" and t[6] == "RTS"]
    assert rts and all(t[4] == "RET" for t in rts)
    # With RTS/CTS on every frame, a packet reaches the retry limit through its RTS: the
    # RTS's line comes first, at the same time and node, naming the same next hop.
    for i in rets:
        t = tk[i]
        before = [u for u in tk[:i] if u[0] == "D" and u[6] == "RTS" and u[1:3] == t[1:3]]
        assert before and before[-1][9:11] == t[9:11], lines[i]


def test_new_format_lines_parse_and_count_as_the_tables(tmp_path: Path):
    out = run_aodv(tmp_path, fmt="new")
    text = (out / "ns2" / "p0-run0.tr").read_text()
    # The recorded trace converts to the same file.
    p = cli("ns2-trace", str(out), "--format", "new")
    assert p.returncode == 0, p.stderr
    assert p.stdout == text
    rows = []
    for line in text.splitlines():
        ev, *rest = line.split()
        assert len(rest) % 2 == 0 and all(k.startswith("-") for k in rest[::2]), line
        rows.append((ev, dict(zip(rest[::2], rest[1::2]))))
    assert all(r["-Hs"] == r["-Ni"] for _, r in rows)
    data = [(ev, r) for ev, r in rows if r.get("-It") == "cbr"]
    sent = {r["-Ii"] for ev, r in data if ev == "s" and r["-Nl"] == "AGT"}
    recv = [r["-Ii"] for ev, r in data if ev == "r" and r["-Nl"] == "AGT"]
    drops = [r for ev, r in data if ev == "d"]
    flows = pl.read_parquet(out / "flows.parquet")
    net = pl.read_parquet(out / "network.parquet").row(0, named=True)
    assert len(sent) == flows["tx_segments"].sum()
    assert len(recv) == flows["rx_segments"].sum() + flows["rx_duplicate_segments"].sum()
    assert set(recv) <= sent
    assert len(drops) == sum(v for k, v in net.items() if k.startswith("drops_"))
    assert {r["-Nw"] for r in drops} == {CODES[k] for k in CODES if net[f"drops_{k}"] > 0}
    # 802.11 control frames: MAC fields only, as ns-2 writes them.
    ctrl = [r for ev, r in rows if r["-Nl"] == "MAC" and "-It" not in r]
    assert ctrl and all(r["-Mt"] == "0" for r in ctrl)


def test_same_scenario_and_seed_write_the_same_bytes(tmp_path: Path):
    a = (run_aodv(tmp_path, "a") / "ns2" / "p0-run0.tr").read_bytes()
    b = (run_aodv(tmp_path, "b") / "ns2" / "p0-run0.tr").read_bytes()
    assert a == b and len(a) > 100_000
    # The command converts the recorded trace of a radio run to the old format by default.
    p = cli("ns2-trace", str(tmp_path / "a"), "-o", str(tmp_path / "again.tr"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "again.tr").read_bytes() == a
    other = (run_aodv(tmp_path, "c", seed=4) / "ns2" / "p0-run0.tr").read_bytes()
    assert other != a


@pytest.mark.parametrize("transport, ptype", [("udp", "cbr"), ("tcp", "tcp")])
def test_awk_delays_of_the_wired_format_equal_the_packet_trace(tmp_path: Path, transport: str, ptype: str):
    size_key = "flows.0.app.size + flows.1.app.size"
    out = tmp_path / "d"
    tpsim.run(SCENARIOS / "study-d-wired-voip.toml", out=out,
              sweep=[("flows.0.transport + flows.1.transport", [transport]), ("simulation.stack", ["modern"]),
                     (size_key, ["128B"])],
              set=[("output.ns2_trace", "wired")])
    lines = awk("wired_delay.awk", out / "ns2" / "p0-run0.tr", type=ptype).splitlines()
    # A run without radios converts to the wired format by default.
    p = cli("ns2-trace", str(out))
    assert p.returncode == 0 and p.stdout == (out / "ns2" / "p0-run0.tr").read_text(), p.stderr
    by_uid = {a: float(b) for a, b in (line.split() for line in lines) if a not in ("mean", "max", "n")}
    summary = {a: float(b) for a, b in (line.split() for line in lines) if a in ("mean", "max", "n")}
    # tpsim's per-packet delays: each data packet's first receive minus its send.
    trace = pl.read_parquet(out / "trace.parquet").filter(pl.col("kind") == "data")
    keys = ["flow", "direction", "packet"]
    send = trace.filter(pl.col("event") == "send").select(keys + ["uid", pl.col("time_s").alias("t0")])
    recv = trace.filter((pl.col("event") == "receive") & ~pl.col("duplicate")).select(keys + [pl.col("time_s").alias("t1")])
    d = send.join(recv, on=keys).with_columns((pl.col("t1") - pl.col("t0")).alias("delay"))
    flows = pl.read_parquet(out / "flows.parquet")
    assert d.height == flows["rx_segments"].sum() == summary["n"] > 900
    assert by_uid.keys() == {str(u) for u in d["uid"]}
    for uid, delay in zip(d["uid"], d["delay"]):
        assert by_uid[str(uid)] == pytest.approx(delay, abs=1e-9)
    assert summary["mean"] == pytest.approx(d["delay"].mean(), abs=1e-9)
    assert summary["max"] == pytest.approx(d["delay"].max(), abs=1e-9)
    if transport == "udp":
        # The flows table's message delays agree too: over UDP each message is one packet
        # (TCP delivers messages in order, so theirs include head-of-line waits).
        assert summary["max"] == pytest.approx(flows["delay_max_s"].max(), abs=1e-9)


def test_ns2_trace_command_needs_a_trace_with_the_ns2_columns(tmp_path: Path):
    f = tmp_path / "aodv.toml"
    f.write_text(AODV.replace('duration = "20s"', 'duration = "3s"'))
    out = tmp_path / "o"
    assert cli("run", str(f), "-o", str(out), "--no-report", "-q", "--set", "output.trace=true").returncode == 0
    p = cli("ns2-trace", str(out))
    assert p.returncode == 2 and "no ns-2 columns" in p.stderr
    assert not (out / "ns2").exists()
    p = cli("ns2-trace", str(out), "--format", "xml")
    assert p.returncode == 2 and "unknown format" in p.stderr
