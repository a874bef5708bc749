"""tshark reads tpsim's UDP pcap with no malformed packet and no bad checksum."""

from __future__ import annotations

import subprocess

import pytest

import tpsim

from conftest import ROOT, cli, one_link, require_tool


@pytest.mark.parametrize("sizes", ["standard", "ns2"])
def test_tshark_finds_no_malformed_packets_or_bad_checksums(sizes, tmp_path):
    tshark = require_tool("tshark")
    f = tmp_path / "s.toml"
    f.write_text(one_link(sizes, app='{ kind = "voip", size = "160B", interval = "20ms" }', link_extra="pcap = true", duration="2s"))
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--pcap", "--no-report")
    assert p.returncode == 0, p.stderr
    pcap = tmp_path / "o" / "pcap" / "p0-run0" / "link0.pcap"
    fields = subprocess.run(
        [tshark, "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
         "-T", "fields", "-E", "separator=,", "-e", "ip.checksum.status", "-e", "udp.checksum.status", "-e", "_ws.malformed", "-e", "frame.protocols"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    assert len(fields) == 200  # 100 messages each way in 2 s
    malformed = [l for l in fields if l.split(",")[2]]
    bad_ip = [l for l in fields if l.split(",")[0] != "1"]  # 1 = Good
    bad_udp = [l for l in fields if l.split(",")[1] != "1"]
    assert (len(malformed), len(bad_ip), len(bad_udp)) == (0, 0, 0)
    assert all(l.endswith("ip:udp:data") for l in fields), fields[:3]


@pytest.mark.parametrize("sizes", ["standard", "ns2"])
def test_tshark_reads_tcp_pcap_without_anomalies(sizes, tmp_path):
    tshark = require_tool("tshark")
    f = tmp_path / "s.toml"
    text = one_link(sizes, app='{ kind = "bulk", bytes = "200kB", size = "1000B" }', link_extra="pcap = true\nqueue = 1000", duration="30s").replace('transport = "udp"', 'transport = "tcp"')
    text += '\n[[flows]]\nsrc = 1\ndst = 0\ntransport = "tcp-reno"\napp = { kind = "voip", size = "160B", interval = "20ms", stop = "5s" }\n'
    f.write_text(text)
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--pcap", "--no-report")
    assert p.returncode == 0, p.stderr
    pcap = tmp_path / "o" / "pcap" / "p0-run0" / "link0.pcap"
    out = subprocess.run(
        [tshark, "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
         "-T", "fields", "-E", "separator=,", "-e", "ip.checksum.status", "-e", "tcp.checksum.status", "-e", "_ws.malformed",
         "-e", "tcp.analysis.ack_lost_segment", "-e", "tcp.analysis.lost_segment", "-e", "tcp.analysis.retransmission", "-e", "tcp.flags.syn"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    rows = [l.split(",") for l in out]
    assert len(rows) > 300
    assert sum(1 for r in rows if r[0] != "1") == 0, "bad IP checksums"
    assert sum(1 for r in rows if r[1] != "1") == 0, "bad TCP checksums"
    assert sum(1 for r in rows if r[2]) == 0, "malformed packets"
    assert sum(1 for r in rows if r[3]) == 0, "ACKed unseen segment"
    assert sum(1 for r in rows if r[4] or r[5]) == 0, "lost or retransmitted segments on a lossless link"
    assert sum(1 for r in rows if r[6] == "1") == 4  # SYN and SYN-ACK of both connections


def test_tshark_reads_80211_radiotap_pcap(tmp_path):
    tshark = require_tool("tshark")
    f = tmp_path / "w.toml"
    f.write_text("""
[simulation]
duration = "5s"
[nodes]
count = 3
placement = { kind = "grid", columns = 3, spacing = "200m" }
[radio]
rts_threshold = "500B"
pcap = true
[[flows]]
src = 0
dst = 2
transport = "tcp"
app = { kind = "bulk", bytes = "20kB", size = "1000B" }
[[flows]]
src = 2
dst = 0
transport = "udp"
app = { kind = "cbr", size = "200B", interval = "50ms" }
""")
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--pcap", "--no-report")
    assert p.returncode == 0, p.stderr
    total_data = 0
    for node in range(3):
        pcap = tmp_path / "o" / "pcap" / "p0-run0" / f"node{node}.pcap"
        rows = subprocess.run(
            [tshark, "-r", str(pcap), "-o", "wlan.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
             "-T", "fields", "-E", "separator=;", "-e", "wlan.fc.type_subtype", "-e", "wlan.fcs.status", "-e", "_ws.malformed", "-e", "frame.protocols", "-e", "ip.checksum.status"],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        assert rows, node
        for r in rows:
            subtype, fcs, malformed, protocols, ipck = r.split(";")
            assert fcs == "1", r  # Good
            assert not malformed, r
            if subtype == "0x0020":  # data
                total_data += 1
                assert ":ip:" in protocols + ":" and ipck == "1", r
    assert total_data > 40


def test_tshark_reads_arp_requests_and_replies(tmp_path):
    tshark = require_tool("tshark")
    f = tmp_path / "a.toml"
    f.write_text("""
[simulation]
duration = "3s"
[nodes]
count = 3
placement = { kind = "grid", columns = 3, spacing = "200m" }
[radio]
pcap = true
[arp]
preset = "ns3"
[[flows]]
src = 0
dst = 2
transport = "udp"
app = { kind = "cbr", size = "200B", interval = "100ms" }
""")
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--pcap", "--no-report")
    assert p.returncode == 0, p.stderr
    pcap = tmp_path / "o" / "pcap" / "p0-run0" / "node1.pcap"
    rows = subprocess.run(
        [tshark, "-r", str(pcap), "-o", "wlan.check_checksum:TRUE", "-Y", "arp",
         "-T", "fields", "-E", "separator=;", "-e", "arp.opcode", "-e", "arp.src.proto_ipv4", "-e", "arp.dst.proto_ipv4",
         "-e", "arp.src.hw_mac", "-e", "wlan.da", "-e", "wlan.fcs.status", "-e", "_ws.malformed"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    # Node 1 hears node 0's request and answers it, then asks for node 2 and hears the reply
    # (sent frames and correctly received ones are both in a node's trace).
    got = sorted(tuple(r.split(";")[:5]) for r in rows)
    assert got == sorted([
        ("1", "10.128.0.1", "10.128.0.2", "02:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"),
        ("2", "10.128.0.2", "10.128.0.1", "02:00:00:00:00:01", "02:00:00:00:00:00"),
        ("1", "10.128.0.2", "10.128.0.3", "02:00:00:00:00:01", "ff:ff:ff:ff:ff:ff"),
        ("2", "10.128.0.3", "10.128.0.2", "02:00:00:00:00:02", "02:00:00:00:00:01"),
    ]), rows
    assert all(r.split(";")[5] == "1" and not r.split(";")[6] for r in rows), rows


def test_tshark_dissects_sack_and_window_scale_options(tmp_path):
    tshark = require_tool("tshark")
    f = tmp_path / "s.toml"
    # A lossy link so that receivers send SACK blocks; timestamps on (3 blocks fit), a 1 MiB
    # receive window (window scale shift 5).
    text = one_link("standard", app='{ kind = "bulk", bytes = "400kB", size = "1000B" }',
                    link_extra='pcap = true\nqueue = 1000\ndrop_forward = [20, 22, 24, 60, 61]', duration="30s")
    text = text.replace('transport = "udp"', 'transport = "tcp-sack"\ntcp = { window_scaling = true, timestamps = true, receive_window = "1MiB" }')
    f.write_text(text)
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--pcap", "--no-report")
    assert p.returncode == 0, p.stderr
    pcap = tmp_path / "o" / "pcap" / "p0-run0"
    fields = ["tcp.checksum.status", "_ws.malformed", "tcp.flags.syn", "tcp.options.sack_perm", "tcp.options.wscale.shift",
              "tcp.options.sack.count", "_ws.expert.severity"]
    out = subprocess.run(
        [tshark, "-r", str(pcap / "link0.pcap"), "-o", "tcp.check_checksum:TRUE", "-T", "fields", "-E", "separator=;",
         *[a for fl in fields for a in ("-e", fl)]],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    rows = [dict(zip(fields, l.split(";"))) for l in out]  # both directions of the link
    assert rows and all(r["tcp.checksum.status"] == "1" for r in rows), "bad TCP checksums"
    assert not any(r["_ws.malformed"] for r in rows), "malformed packets"
    syns = [r for r in rows if r["tcp.flags.syn"] == "1"]
    assert len(syns) == 2 and all(r["tcp.options.sack_perm"] and r["tcp.options.wscale.shift"] == "5" for r in syns)
    counts = [int(c) for r in rows for c in r["tcp.options.sack.count"].split(",") if c]
    assert counts and max(counts) <= 3, counts  # blocks carried by the receiver's duplicate ACKs
    # No error-level expert info (severity 8388608 = error).
    assert not any("8388608" in r["_ws.expert.severity"] for r in rows)


def test_tshark_reads_sctp_pcap_with_good_checksums(tmp_path):
    """SCTP through the engine's link pcap: every packet's CRC32c verifies and none is malformed,
    with a lossy bulk association (SACKs with gap blocks, retransmissions) and a two-way VoIP
    one (SACKs bundled with DATA), handshakes and shutdowns included."""
    tshark = require_tool("tshark")
    f = tmp_path / "s.toml"
    text = one_link("standard", app='{ kind = "bulk", bytes = "100kB", size = "3000B" }',
                    link_extra="pcap = true\nloss = 0.05", duration="30s").replace('transport = "udp"', 'transport = "sctp"')
    text += '\n[[flows]]\nsrc = 1\ndst = 0\ntransport = "sctp"\napp = { kind = "voip", size = "160B", interval = "20ms", stop = "5s" }\n'
    f.write_text(text)
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "--pcap", "--no-report")
    assert p.returncode == 0, p.stderr
    pcap = tmp_path / "o" / "pcap" / "p0-run0" / "link0.pcap"
    rows = [l.split("\t") for l in subprocess.run(
        [tshark, "-r", str(pcap), "-o", "sctp.checksum:CRC-32C", "-T", "fields",
         "-e", "sctp.checksum.status", "-e", "_ws.malformed", "-e", "sctp.chunk_type"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()]
    assert len(rows) > 500
    assert [r for r in rows if r[0] != "1"] == [], "bad CRC32c"
    assert [r for r in rows if r[1]] == [], "malformed packets"
    types = {int(t) for r in rows for t in r[2].split(",") if t}
    # DATA, INIT, INIT ACK, SACK, COOKIE ECHO, COOKIE ACK, SHUTDOWN, SHUTDOWN ACK, SHUTDOWN COMPLETE
    assert {0, 1, 2, 3, 10, 11, 7, 8, 14} <= types, types
    # docs/models.md warns that the value is case-sensitive: `crc32c` verifies nothing.
    unchecked = subprocess.run([tshark, "-r", str(pcap), "-o", "sctp.checksum:crc32c", "-T", "fields", "-e", "sctp.checksum.status"],
                               capture_output=True, text=True).stdout.split()
    assert "1" not in unchecked
    assert "`-o sctp.checksum:CRC-32C`" in (ROOT / "docs" / "models.md").read_text()


def test_sctp_bundling_off_sends_each_message_in_its_own_packet(tmp_path):
    # Small messages faster than the link: bundled, a packet carries several; with
    # `sctp.bundling = false` every packet is one 64-byte message (+ 16 B DATA chunk header,
    # 12 B common header, 20 B IPv4), so a packet-size sweep changes SCTP's packets.
    text = one_link(app='{ kind = "cbr", size = "64B", interval = "2ms" }', duration="3s").replace('transport = "udp"', 'transport = "sctp"')
    sizes = {}
    for bundling in ("true", "false"):
        (tmp_path / "s.toml").write_text(text + f"sctp = {{ bundling = {bundling} }}\n")
        sizes[bundling] = tpsim.run(tmp_path / "s.toml", runs=1).flows.row(0, named=True)
    # (The first packet carries the COOKIE ECHO too: the mean, not the maximum.)
    assert sizes["true"]["packet_size_mean_b"] > 2 * 64 + 48
    assert 64 + 48 <= sizes["false"]["packet_size_mean_b"] < 64 + 48 + 0.1
