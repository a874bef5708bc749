"""benches/compare_ns3.py: the document writing and formatting (always), the tpsim side of
its scenario (always), and the whole harness against ns-3 (only with TPSIM_NS3_BENCH=1,
because it builds ns-3 programs: CI must not)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tpsim
from conftest import ROOT, load_bench

HARNESS = ROOT / "benches" / "compare_ns3.py"


cmp = load_bench("compare_ns3", "compare_ns3")


# ---------------------------------------------------------------- document markers


def test_section_is_appended_with_its_title_when_the_markers_are_absent():
    doc = "# Benchmarks\n\nSome text.\n"
    out = cmp.replace_section(doc, "TABLE")
    assert out.startswith(doc)
    assert out[len(doc):] == f"\n{cmp.SECTION_TITLE}\n\n{cmp.BEGIN}\nTABLE\n{cmp.END}\n"


def test_only_the_text_between_the_markers_changes_and_twice_is_the_same():
    before = "# B\n\nintro\n\n## tpsim and ns-3 side by side\n\n"
    after = "\n\n## Later section\n\nkept as is\n"
    doc = f"{before}{cmp.BEGIN}\nold table\n{cmp.END}{after}"
    out = cmp.replace_section(doc, "new table\n")
    assert out == f"{before}{cmp.BEGIN}\nnew table\n{cmp.END}{after}"
    assert cmp.replace_section(out, "new table\n") == out


@pytest.mark.parametrize("doc", [f"x\n{cmp.BEGIN}\ny\n", f"x\n{cmp.END}\ny\n", f"{cmp.END}\n{cmp.BEGIN}\n"])
def test_a_lone_or_misordered_marker_is_an_error(doc):
    with pytest.raises(ValueError, match="marker"):
        cmp.replace_section(doc, "T")


def test_write_doc_keeps_blocks_of_scenarios_not_rerun_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n\nhand-written\n", encoding="utf-8")
    a = cmp.BLOCK.format(key="a") + "\n### a\n\nfirst a\n"
    b = cmp.BLOCK.format(key="b") + "\n### b\n\nfirst b\n"
    cmp.write_doc(path, "header 1", {"a": a, "b": b}, ["a", "b"])
    a2 = cmp.BLOCK.format(key="a") + "\n### a\n\nsecond a\n"
    cmp.write_doc(path, "header 2", {"a": a2}, ["a", "b"])
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nhand-written\n\n## tpsim and ns-3 side by side\n\n")
    section = cmp.current_section(text)
    assert "header 2" in section and "header 1" not in section
    assert "second a" in section and "first a" not in section
    assert "first b" in section and section.index("second a") < section.index("first b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchmarks.md"]


def test_the_hand_maintained_page_has_no_generated_section():
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert cmp.BEGIN not in text and cmp.END not in text and not cmp.BLOCK_RE.search(text)


def test_a_full_run_writes_its_report_into_the_cache_and_never_into_docs():
    assert cmp.REPORT == ROOT / "benches" / ".cache" / "compare_ns3.md"
    assert cmp.report_path(None, quick=False) == cmp.REPORT
    assert cmp.report_path(None, quick=True) is None  # --quick prints
    assert cmp.report_path("-", quick=False) is None and cmp.report_path("-", quick=True) is None
    assert cmp.report_path("out.md", quick=True) == Path("out.md")
    assert not hasattr(cmp, "DOC")
    a = cmp.parse_args([])
    assert a.doc is None and not a.quick


def test_write_doc_creates_the_report_and_its_folder(tmp_path):
    path = tmp_path / "new" / "compare_ns3.md"
    cmp.write_doc(path, "header", {"a": cmp.BLOCK.format(key="a") + "\n### a\n\nbody\n"}, ["a"])
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"{cmp.SECTION_TITLE}\n\n{cmp.BEGIN}\nheader\n")
    assert "body" in cmp.current_section(text)


def test_notes_point_to_the_models_page_and_name_the_ns3_preset():
    removed = ("forwarding_refreshes_next_hop", "hello_from_every_node", "gratuitous_rrep",
               "invalidation_keeps_seq", "rreq_leaves_reverse_route_invalid")
    for key, b in cmp.BENCHMARKS.items():
        text = " ".join(b.notes)
        assert not any(k in text for k in removed), key
        assert "session" not in text and "c74bf71" not in text, key
    wireless = " ".join(cmp.WIRELESS_NOTES)
    assert '`[routing] preset = "ns3"`' in wireless and '"Matching ns-3"' in wireless
    assert "## Matching ns-3" in (ROOT / "docs" / "models.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- formatting


def test_number_formats():
    assert cmp.fmt_sig(1.7149) == "1.71"
    assert cmp.fmt_sig(0.011923) == "0.0119"
    assert cmp.fmt_sig(235_660.0) == "236,000"
    assert cmp.fmt_sig(0.0) == "0"
    assert cmp.fmt_sig(None) == "—"
    assert cmp.fmt_rate(25_160_000) == "25.2 M"
    assert cmp.fmt_rate(234_785) == "235 k"
    assert cmp.fmt_int(99_990) == "99,990"
    assert cmp.spread([3.0, 1.0, 2.0], cmp.fmt_sig) == "2.00 (1.00–3.00)"
    assert cmp.spread([5.0, 5.0], cmp.fmt_int) == "5"
    assert cmp.spread([5.0, 5.0], cmp.fmt_sig, always=True) == "5.00 (5.00–5.00)"
    assert cmp.spread([None], cmp.fmt_sig) == "—"
    assert cmp.ratio([1.0, 2.0, 3.0], [4.0, 4.0, 4.0]) == 0.5


def _tpsim_record(seed, loop, wall, rss_kb, rx=493):
    flow = {"tx_packets": 495, "rx_packets": rx, "rx_bytes": rx * 128, "delay_mean_s": 0.0549375,
            "jitter_ipdv_s": 0.0, "goodput_kbps": 50.0}
    return {"side": "tpsim", "seed": seed, "command": "tpsim.run('x.toml', seed=1)", "measured_at": "2026-01-01T00:00:00+00:00",
            "process_wall_s": wall, "peak_rss_kb": rss_kb, "user_s": 0.3, "sys_s": 0.1, "cached": False,
            "output": {"engine_seconds": loop, "tpsim_version": "0.1.0",
                       "flows": [dict(flow), dict(flow)], "network": {"events": 2966, "mac_frames": 990}}}


def _ns3_record(seed, loop, wall, rss_kb, cached=False, rx=986):
    fm = {"tx_pkts": 990, "rx_pkts": rx, "pdr": rx / 990, "mean_delay_s": 0.0549375, "mean_jitter_s": 0.0,
          "rx_bytes_ip": rx * 156, "sum_flow_thr_kbps": 124.0}
    return {"side": "ns-3", "seed": seed, "command": "s5_wired_voip --transport=udp --seed=1 --run=1",
            "measured_at": "2025-12-31T10:00:00+00:00", "process_wall_s": wall, "peak_rss_kb": rss_kb,
            "user_s": 0.05, "sys_s": 0.01, "cached": cached,
            "output": {"wall_run_s": loop, "events": 3980, "app_rx_bytes": rx * 128, "mac_frames_tx": 0, "flowmon": fm}}


def _render(tp_rx=493):
    bench = cmp.BENCHMARKS["wired-udp"]
    runs = {
        "tpsim": [_tpsim_record(1, 0.002, 0.5, 60 * 1024, tp_rx), _tpsim_record(2, 0.001, 0.4, 62 * 1024, tp_rx),
                  _tpsim_record(3, 0.003, 0.6, 61 * 1024, tp_rx)],
        "ns-3": [_ns3_record(1, 0.02, 0.06, 20 * 1024, cached=True), _ns3_record(2, 0.01, 0.05, 20 * 1024, cached=True),
                 _ns3_record(3, 0.03, 0.07, 20 * 1024, cached=True)],
    }
    ctx = {"sim_time_s": 10.0, "date": "2026-01-01 00:00 UTC",
           "machine": {"cores": 2, "cpu": "Test CPU", "os": "Linux", "python": "3.11", "load1": 0.5}}
    return cmp.render_scenario(bench, runs, ctx)


def _row(md, label):
    rows = [line for line in md.splitlines() if line.startswith(f"| {label}")]
    assert len(rows) == 1, label
    return [c.strip() for c in rows[0].strip("|").split("|")]


def test_scenario_block_has_timings_over_seeds_ratios_and_metrics_side_by_side():
    md = _render()
    assert md.startswith(cmp.BLOCK.format(key="wired-udp") + "\n### `wired-udp`: ")
    assert "10.0 s simulated" in md and "Test CPU" in md and "3 seed(s) per side (1, 2, 3)" in md
    assert "cache for 3 of 3 seeds (measured 2025-12-31)" in md
    loop = _row(md, "event-loop wall time")
    assert loop[1:] == ["0.00200 (0.00100–0.00300)", "0.0200 (0.0100–0.0300)", "0.100"]
    assert _row(md, "process wall time")[1:] == ["0.500 (0.400–0.600)", "0.0600 (0.0500–0.0700)", "8.33"]
    assert _row(md, "peak RSS, MB")[1:3] == ["61.0 (60.0–62.0)", "20.0 (20.0–20.0)"]
    assert _row(md, "events executed")[1:] == ["2,966", "3,980", "0.745"]
    # 0.002 s / 986 delivered packets; 0.02 s / 986.
    assert _row(md, "event-loop time per delivered packet")[1:3] == ["2.03 (1.01–3.04)", "20.3 (10.1–30.4)"]
    assert "MAC frame" not in md  # wired: not meaningful
    assert _row(md, "packets sent")[1:3] == ["990", "990"]
    assert _row(md, "packets delivered")[1:3] == ["986", "986"]
    assert _row(md, "mean one-way delay, ms")[1:3] == ["54.9375", "54.9375"]
    # ns-3 goodput = FlowMonitor throughput x app bytes / IP bytes = 124 x 128/156.
    assert _row(md, "goodput, kbit/s")[1:3] == ["100.000", f"{124 * 128 / 156:.3f}"]
    assert "Differences above 0.1%:** goodput" in md
    assert "10.0× as fast" in md


def test_a_metric_mismatch_is_flagged():
    md = _render(tp_rx=400)
    assert "packets delivered (800 vs 986" in md
    assert "PDR (" in md


# ---------------------------------------------------------------- the tpsim side of wired-udp


def test_wired_udp_scenario_matches_the_ns3_program_on_a_short_run():
    """The benchmark scenario under the --quick overrides: the counts and delay s5_wired_voip
    gives for --simTime=10 (ns-3 README: 990 sent, 986 received, 54.9 ms)."""
    bench = cmp.BENCHMARKS["wired-udp"]
    res = tpsim.run(ROOT / bench.tpsim_scenario, seed=1, set=list(bench.quick_tpsim_set))
    assert res.flows["tx_packets"].to_list() == [495, 495]
    assert res.flows["rx_packets"].to_list() == [493, 493]
    assert all(abs(d - (158 * 8 / 256_000 + 0.050)) < 1e-12 for d in res.flows["delay_mean_s"].to_list())
    assert len(res.engine_seconds) == 1 and res.engine_seconds[0] > 0


def test_wired_tcp_scenario_matches_the_ns3_program_on_a_short_run():
    """wired-tcp under the --quick overrides against s5_wired_voip --transport=tcp --simTime=10
    (ns-3 README: 986 IP packets sent, 982 received over both data directions, i.e. per
    direction the SYN, the handshake's ACK and 491 data segments, 2 still in flight at the
    end). A data segment is 128 + 32 (TCP with RFC 7323 timestamps) + 20 + 2 = 182 B, so the
    idle-link delay is 182 B at 256 kbit/s + 50 ms; ACKs every second segment."""
    bench = cmp.BENCHMARKS["wired-tcp"]
    res = tpsim.run(ROOT / bench.tpsim_scenario, seed=1, set=list(bench.quick_tpsim_set))
    assert res.flows["tx_segments"].to_list() == [491, 491]
    assert res.flows["rx_segments"].to_list() == [489, 489]
    assert res.flows["tx_packets"].to_list() == [495, 495]
    assert all(abs(d - (182 * 8 / 256_000 + 0.050)) < 1e-9 for d in res.flows["delay_p50_s"].to_list())
    assert all(240 <= a <= 250 for a in res.flows["ack_packets"].to_list())


# ---------------------------------------------------------------- wireless scenarios (smoke, tpsim only)

WIRELESS = [k for k, b in cmp.BENCHMARKS.items() if b.mac_frames]


def test_every_wireless_scenario_of_the_issue_is_in_the_harness():
    groups = {cmp.BENCHMARKS[k].group for k in WIRELESS}
    assert groups == {"s1_manet_tcp", "s4_manet_cbr", "s2_wsn", "s6_scale"}
    assert cmp.select_keys("s6_scale") == [f"s6_scale-n{n}" for n in (25, 50, 100, 200, 400, 800)]
    assert cmp.select_keys("s4_manet_cbr") == ["s4_manet_cbr-v5", "s4_manet_cbr-v10", "s4_manet_cbr-v20"]
    for k in WIRELESS:
        b = cmp.BENCHMARKS[k]
        assert (ROOT / b.tpsim_scenario).is_file() and b.notes and b.config


def test_grid_receivers_in_carrier_sense_range():
    # 2x2 grid (4 nodes, 200 m): each node hears 2 (the diagonal is 283 m > 250 m).
    assert cmp.grid_neighbours(4) == 2.0
    # 5x5: 4 corners x 2 + 12 edges x 3 + 9 inner x 4 = 80 over 25 nodes.
    assert cmp.grid_neighbours(25) == pytest.approx(80 / 25)
    assert 3.8 < cmp.grid_neighbours(800) < 4.0


def test_drawn_flows_are_distinct_pairs_reproducible_per_seed_and_within_the_run():
    f = cmp.BENCHMARKS["s6_scale-n100"].tpsim_flows
    a, b, c = f(1, 100.0), f(1, 100.0), f(2, 100.0)
    assert a == b and a != c
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    flows = tomllib.loads(a)["flows"]
    assert len(flows) == 20
    assert all(x["src"] != x["dst"] and 0 <= x["src"] < 100 and 0 <= x["dst"] < 100 for x in flows)
    # 10 s runs: flows drawn to start at or after the end are left out (they send nothing).
    assert all(float(x["app"]["start"][:-1]) < 10 for x in tomllib.loads(f(1, 10.0))["flows"])
    s2 = tomllib.loads(cmp.BENCHMARKS["s2_wsn-tcp-I10"].tpsim_flows(3, 100.0))["flows"]
    assert [x["src"] for x in s2] == list(range(8, 56)) and {x["dst"] for x in s2} == {0}
    assert all(1 <= float(x["app"]["start"][:-1]) <= 11 for x in s2) and s2[0]["transport"] == "tcp-newreno"


@pytest.mark.parametrize("distance, delivered", [(249, 50), (251, 0)])
def test_default_radio_decodes_to_250_m_like_the_ns3_programs(tmp_path, distance, delivered):
    """tpsim's default radio (ns-2 Pt 0.2818 W, RXThresh 3.652e-10 W, two-ray ground at
    914 MHz, 1.5 m antennas) with the benchmarks' cs_range and SINR reception: the ns-3
    README's check, 100 % delivered at 249 m and nothing at 251 m."""
    f = tmp_path / "range.toml"
    f.write_text(
        '[simulation]\nduration = "5s"\n[output]\ntimeseries = false\n[nodes]\ncount = 2\n'
        f'placement = {{ kind = "explicit", positions = [["0m", "0m"], ["{distance}m", "0m"]] }}\n'
        '[radio]\ncs_range = "250m"\nreception = "sinr"\n'
        '[[flows]]\nsrc = 0\ndst = 1\ntransport = "udp"\napp = { kind = "cbr", size = "1000B", interval = "100ms" }\n',
        encoding="utf-8")
    res = tpsim.run(f, seed=1)
    assert res.flows["tx_packets"].to_list() == [50]
    assert res.flows["rx_packets"].to_list() == [delivered]


@pytest.mark.parametrize("key", WIRELESS)
def test_wireless_scenario_runs_for_a_few_simulated_seconds(key, tmp_path):
    """The tpsim side of each wireless scenario under its --quick overrides (1 seed, a few
    simulated seconds, no ns-3), so that the files and the generated flows cannot rot."""
    bench = cmp.BENCHMARKS[key]
    path = cmp.tpsim_scenario_file(bench, 1, bench.quick_sim_time_s, cache=tmp_path)
    res = tpsim.run(path, seed=1, set=[*bench.tpsim_set, *bench.quick_tpsim_set])
    net = res.network.to_dicts()[0]
    assert net["mac_frames"] > 0 and net["routing_packets"] > 0 and net["events"] > 0
    assert len(res.engine_seconds) == 1
    rec = {"output": {"engine_seconds": res.engine_seconds[0], "flows": res.flows.to_dicts(), "network": net},
           "process_wall_s": 1.0, "peak_rss_kb": 1024}
    m = cmp.add_derived(cmp.tpsim_measures(rec, bench, bench.quick_sim_time_s), bench.quick_sim_time_s, bench.cs_receivers)
    assert res.flows.height >= 1 and m["us_per_mac_frame"] > 0
    if not bench.tcp:  # a TCP connection across the sparse S1 network may not open in 5 s
        assert m["tx_packets"] > 0


def _wireless_records(seed, loop_tp, loop_ns, main_flow=False):
    flows = [{"flow": 0, "tx_packets": 100, "rx_packets": 90, "tx_bytes": 100 * 512, "rx_bytes": 90 * 512,
              "delay_mean_s": 0.02, "net_delay_mean_s": 0.02, "jitter_ipdv_s": 0.001, "goodput_kbps": 3.0,
              "tx_segments": 100, "rx_segments": 90},
             {"flow": 1, "tx_packets": 100, "rx_packets": 50, "tx_bytes": 100 * 512, "rx_bytes": 50 * 512,
              "delay_mean_s": 0.04, "net_delay_mean_s": 0.04, "jitter_ipdv_s": 0.001, "goodput_kbps": 2.0,
              "tx_segments": 100, "rx_segments": 50}]
    tp = {"side": "tpsim", "seed": seed, "command": "tpsim.run(...)", "measured_at": "2026-01-01T00:00:00+00:00",
          "process_wall_s": 1.0, "peak_rss_kb": 70 * 1024, "sim_time_s": 100.0, "cached": False,
          "output": {"engine_seconds": loop_tp, "tpsim_version": "0.1.0", "flows": flows,
                     "network": {"events": 100_000, "mac_frames": 10_000, "routing_packets": 2_000}}}
    fm = {"tx_pkts": 200, "rx_pkts": 160, "pdr": 0.8, "mean_delay_s": 0.03, "mean_jitter_s": 0.001,
          "rx_bytes_ip": 160 * 540, "sum_flow_thr_kbps": 7.0}
    out = {"wall_run_s": loop_ns, "events": 1_000_000, "app_rx_bytes": 160 * 512, "mac_frames_tx": 12_000,
           "routing_pkts_tx": 2_500}
    if main_flow:
        out["main_flow"] = {**fm, "tx_pkts": 100, "rx_pkts": 95, "pdr": 0.95}
        out["all_flows"] = fm
    else:
        out["flowmon"] = fm
    ns = {"side": "ns-3", "seed": seed, "command": "s6_scale --nodes=25", "measured_at": "2026-01-01T00:00:00+00:00",
          "process_wall_s": loop_ns + 0.1, "peak_rss_kb": 40 * 1024, "cached": True, "output": out}
    return tp, ns


def test_wireless_measures_summary_and_scale_table():
    bench = cmp.BENCHMARKS["s6_scale-n25"]
    recs = [_wireless_records(s, 0.02 * s, 2.0 * s) for s in (1, 2, 3)]
    runs = {"tpsim": [r[0] for r in recs], "ns-3": [r[1] for r in recs]}
    tp, ns = cmp.measures(bench, runs, 100.0)
    assert tp[0]["pdr"] == 0.7 and ns[0]["pdr"] == 0.8
    assert tp[0]["goodput_kbps"] == pytest.approx(140 * 512 * 8 / 1000 / 100)
    assert ns[0]["goodput_kbps"] == pytest.approx(160 * 512 * 8 / 1000 / 100)
    assert tp[0]["us_per_mac_frame"] == pytest.approx(2.0) and tp[0]["us_per_event"] == pytest.approx(0.2)
    assert tp[0]["ns_per_frame_receiver"] == pytest.approx(2000 / 3.2)
    ctx = {"sim_time_s": 100.0, "date": "2026-01-01 00:00 UTC",
           "machine": {"cores": 2, "cpu": "Test CPU", "os": "Linux", "python": "3.11", "load1": 0.5}}
    md = cmp.render_scenario(bench, runs, ctx)
    assert _row(md, "event-loop time per MAC frame, µs")[1:] == ["4.00 (2.00–6.00)", "333 (167–500)", "0.0120"]
    assert _row(md, "routing packets transmitted")[1:3] == ["2,000", "2,500"]
    assert "receiver in carrier-sense range" in md
    summary = cmp.render_summary({"s6_scale-n25": runs}, "2026-01-01")
    assert "| `s6_scale-n25` | 3 / 3 | 0.0400 / 4.00 | 100× |" in summary
    scale = cmp.render_scale_summary({"s6_scale-n25": runs}, "2026-01-01")
    assert "| 25 | 100 | 3 / 3 | 3.20 |" in scale
    # Across N: the spread of the time per frame per receiver, tpsim's and ns-3's (medians of
    # event-loop time / frames / receivers in range: tpsim 10,000 frames, ns-3 12,000).
    recs50 = [_wireless_records(s, 0.04 * s, 6.0 * s) for s in (1, 2, 3)]
    runs50 = {"tpsim": [r[0] for r in recs50], "ns-3": [r[1] for r in recs50]}
    both = cmp.render_scale_summary({"s6_scale-n25": runs, "s6_scale-n50": runs50}, "2026-01-01")
    k25, k50 = bench.cs_receivers, cmp.BENCHMARKS["s6_scale-n50"].cs_receivers
    tp_ratio = (0.08 / 10_000 / k50) / (0.04 / 10_000 / k25)
    ns_ratio = (12.0 / 12_000 / k50) / (4.0 / 12_000 / k25)
    assert f"over N = 25–50: max/min = {tp_ratio:.2f}. ns-3's spans" in both
    assert both.count("max/min") == 2 and f"max/min = {ns_ratio:.2f}." in both
    # A partial run keeps the rows of scenarios it did not re-run, in the harness's order.
    old = summary.replace("`s6_scale-n25`", "`s1_manet_tcp`")
    merged = cmp.render_summary({"s6_scale-n25": runs}, "2026-01-02", old)
    rows = [line for line in merged.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == ["s1_manet_tcp", "s6_scale-n25"]
    # S4: headline = the main flow (tpsim flow 0, ns-3 main_flow); all-flows PDR beside it.
    s4 = cmp.BENCHMARKS["s4_manet_cbr-v10"]
    tp4, ns4 = cmp.measures(s4, {"tpsim": [recs[0][0]], "ns-3": [_wireless_records(1, 0.1, 1.0, main_flow=True)[1]]}, 500.0)
    assert tp4[0]["pdr"] == 0.9 and tp4[0]["all_pdr"] == 0.7
    assert ns4[0]["pdr"] == 0.95 and ns4[0]["all_pdr"] == 0.8
    assert ns4[0]["goodput_kbps"] == pytest.approx(95 * 1000 * 8 / 1000 / 490)


# ---------------------------------------------------------------- end to end (opt-in)


@pytest.mark.skipif(os.environ.get("TPSIM_NS3_BENCH") != "1", reason="set TPSIM_NS3_BENCH=1 to build and run ns-3")
def test_quick_run_end_to_end(tmp_path):
    """Builds (or reuses) the venv and s5_wired_voip in benches/.cache, runs both sides for
    10 simulated seconds and writes the section into a copy of docs/benchmarks.md given to
    --doc (a file with hand-written text around, which must stay as it was)."""
    doc = tmp_path / "benchmarks.md"
    original = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    doc.write_text(original, encoding="utf-8")
    p = subprocess.run([sys.executable, str(HARNESS), "--quick", "--fresh-ns3", "--doc", str(doc)],
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-3000:]
    text = doc.read_text(encoding="utf-8")
    section = cmp.current_section(text)
    assert "### `wired-udp`" in section and "10.0 s simulated" in section
    assert _row(section, "packets sent")[1:3] == ["990", "990"]
    assert _row(section, "packets delivered")[1:3] == ["986", "986"]
    assert _row(section, "mean one-way delay, ms")[1:3] == ["54.9375", "54.9375"]
    # Outside the section the document is unchanged.
    b = original.find(cmp.BEGIN)
    if b != -1:
        assert text[:b] == original[:b]
        assert text[text.find(cmp.END):] == original[original.find(cmp.END):]
    else:
        assert text.startswith(original)


# ---------------------------------------------------------------- ns3_census.py (tpsim side)


def _load_census():
    return load_bench("ns3_census")


def test_census_tpsim_side_counts_what_the_table_shows(tmp_path, monkeypatch):
    census = _load_census()
    monkeypatch.setattr(cmp, "CACHE", tmp_path)
    monkeypatch.setattr(census.cn, "CACHE", tmp_path)
    tp = census.tpsim_run(25, None, 1, 12.0)
    assert 0 < tp["data_received"] <= tp["data_sent"]
    assert tp["routing_rreq"] > 0 and tp["routing_hello"] > 0
    # The benchmark file resolves addresses as ns-3 does.
    assert tp["arp_requests"] > 0 and tp["arp_replies"] > 0
    ns = {k: 0 for k in ("data_sent", "data_received", "mac_drop_failed_enqueue_data", "arp_drop_queue_full",
                         "arp_drop_no_reply", "mac_drop_expired_lifetime_data", "aodv_rerr_unicast",
                         "aodv_rerr_broadcast", "ip_drop_no_route", "ip_drop_route_error")}
    ns.update(data_sent=10, data_received=6, arp_drop_queue_full=3, ip_drop_no_route=2, ip_drop_route_error=1)
    census.derive(ns, tp)
    assert ns["no_route"] == 3
    assert (ns["pdr"], ns["lost"], ns["pdr_without_arp"]) == (0.6, 4, 0.9)
    assert 0 < tp["pdr"] <= 1 and tp["lost"] == tp["data_sent"] - tp["data_received"]
    assert ns["arp_drops"] == 3 and tp["arp_frames"] == tp["arp_requests"] + tp["arp_replies"]
    assert tp["pdr_without_arp"] == (tp["data_received"] + tp["drops_arp"]) / tp["data_sent"]
    # Every tpsim key the table reads exists.
    assert all(tk in tp for _, _, tk in census.ROWS if tk)
    assert census.parse_seeds("1-3") == [1, 2, 3] and census.parse_seeds("2,5") == [2, 5]


def test_census_s1_runs_tpsim_on_its_own_paths_and_on_an_ns2_movement_file(tmp_path, monkeypatch):
    census = _load_census()
    monkeypatch.setattr(cmp, "CACHE", tmp_path)
    monkeypatch.setattr(census.cn, "CACHE", tmp_path)
    # 50 nodes 200 m apart on a line, node 49 walking towards node 0: the paths the census
    # program writes from ns-3's mobility models have this form.
    lines = [f"$node_({i}) set X_ {200.0 * i}\n$node_({i}) set Y_ 0\n$node_({i}) set Z_ 0" for i in range(50)]
    lines.append('$ns_ at 1.5 "$node_(49) setdest 9700 0 2.0"')
    movement = tmp_path / "paths.ns2"
    movement.write_text("\n".join(lines) + "\n")
    paired = census.s1_on_paths(movement)
    text = paired.read_text()
    assert "placement = {" not in text and f'model = "ns2", file = "{movement}"' in text
    for mv in (movement, None):
        tp = census.tpsim_s1_run(1, 20.0, mv)
        assert tp["goodput_kbps"] >= 0 and isinstance(tp["gave_up"], bool)
        assert {"drops_no_route", "drops_mac_retry", "drops_arp", "drops_link_break", "routing_rreq"} <= tp.keys()
    # On the line the 49-hop path is beyond AODV's reach (NET_DIAMETER 35): nothing arrives.
    on_line = census.tpsim_s1_run(1, 20.0, movement)
    assert on_line["goodput_kbps"] == 0 and on_line["first_bin"] is None


def test_census_s1_spread_places_ns3s_run_among_tpsims_on_the_same_paths(tmp_path, monkeypatch):
    census = _load_census()
    monkeypatch.setattr(cmp, "CACHE", tmp_path)
    monkeypatch.setattr(census.cn, "CACHE", tmp_path)
    lines = [f"$node_({i}) set X_ {200.0 * i}\n$node_({i}) set Y_ 0\n$node_({i}) set Z_ 0" for i in range(50)]
    movement = tmp_path / "paths.ns2"
    movement.write_text("\n".join(lines) + "\n")
    # An ns-3 record as the census program prints it: opened at 10.5 s, 8,900 bytes, gave up.
    fake = {"sink_bytes": 8900, "states": [[10.5, 4]], "gave_up_at": 300.0, "movement_file": str(movement)}
    monkeypatch.setattr(census, "ns3_run", lambda *a, **k: fake)
    table = census.s1_spread_table(Path("unused"), [7], 20.0, 2)
    row = next(line for line in table.splitlines() if line.startswith("| 7 |"))
    # 8,900 B over 10 s = 7.1 kbit/s; tpsim cannot cross the 49-hop line: 0 kbit/s, both runs
    # below ns-3, and in 20 s its SYNs (10, 13, 19 s) are not yet spent.
    assert row == "| 7 | 7.1 | yes | 0.0 (0.0–0.0) | 0/2 | 2/2 |"
    assert "ns-3 gave up 1 times, tpsim 0.0 times in expectation" in table
    assert "above 100 % of tpsim's runs" in table


def test_census_paired_s4_runs_tpsim_on_ns3s_paths_and_flows(tmp_path, monkeypatch):
    census = _load_census()
    monkeypatch.setattr(cmp, "CACHE", tmp_path)
    monkeypatch.setattr(census.cn, "CACHE", tmp_path)
    # 50 nodes 100 m apart on a 10 x 5 grid, standing still; two background flows.
    lines = [f"$node_({i}) set X_ {100.0 * (i % 10)}\n$node_({i}) set Y_ {100.0 * (i // 10)}\n$node_({i}) set Z_ 0"
             for i in range(50)]
    movement = tmp_path / "paths.ns2"
    movement.write_text("\n".join(lines) + "\n")
    ns = {"movement_file": str(movement), "flows": [[3, 7, 1.25], [12, 40, 2.5]]}
    text = census.s4_on_paths(ns).read_text()
    assert "placement = {" not in text and 'model = "ns2"' in text
    assert text.count("[[flows]]") == 3 and 'start = "1.25s"' in text and "src = 12\ndst = 40" in text
    tp = census.tpsim_run(None, 10.0, 1, 12.0, ns)
    # The main flow starts at 10 s; the two background flows (every 0.8 s) from 1.25 and 2.5 s.
    assert tp["data_sent"] >= 25 and 0 < tp["data_received"] <= tp["data_sent"]
