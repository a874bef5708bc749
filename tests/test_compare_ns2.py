"""benches/compare_ns2.py: its pure parts (parsing ns-2's result lines, the paired-difference
interval, the mirrored scenarios, which tpsim must accept) always; one end-to-end ``--quick``
run of study D when ns-2 (``ns``) and the shared ns-2 scripts are there."""

from __future__ import annotations

import shutil
import subprocess
import sys
try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib
from pathlib import Path

import pytest

import tpsim
from conftest import ROOT, SHARED, load_bench

HARNESS = ROOT / "benches" / "compare_ns2.py"
NS2_DIR = SHARED / "ns2" if (SHARED / "ns2" / "common.tcl").is_file() else None


cmp = load_bench("compare_ns2", "compare_ns2")

FLOW = ("FLOW study=D transport=udp sizes=msg seed=1 stop=10 flow=1 src=0 dst=1 flow_transport=udp msg=128 "
        "flow_start=0.100000 flow_stop=10.000000 msgs=495 sent=495 recv=495 lost=0 pdr=1.000000 msgs_delivered=495 "
        "app_pdr=1.000000 goodput_kbps=51.200000 thr_kbps=51.200000 delay_ms=54.000000 drops=0 drop_reasons=- "
        "trace_lines=2974 wall_run_s=0.003674")


# ---------------------------------------------------------------- ns-2 output


def test_a_flow_line_parses_into_numbers_and_words():
    out = cmp.parse_ns2_output(FLOW + "\n")
    assert out["total"] is None and out["bg"] == []
    (f,) = out["flows"]
    assert f["study"] == "D" and f["flow_transport"] == "udp" and f["drop_reasons"] == "-"
    assert f["msgs"] == 495 and isinstance(f["msgs"], int)
    assert f["delay_ms"] == 54.0 and f["flow_start"] == 0.1 and f["wall_run_s"] == 0.003674


def test_chatter_glued_to_a_total_line_is_removed():
    # ns-2's C stdio output lands in the middle of Tcl's lines (seen with trace=0 runs)
    stdout = ("num_nodes is set 50\nchannel.cc:sendUp - Calc highestAntennaZ_ and distCST_\n"
              "highestAntennaZ_ = 1.5,  distCST_ = 550.0TOTAL study=C transport=udp speed=20 bg=8 seed=1 trace=0 "
              "wall_run_s=3.180736INITIALIZE THE LIST xListHead\nSORTING LISTS ...DONE!\n")
    out = cmp.parse_ns2_output(stdout)
    assert out["total"] == {"study": "C", "transport": "udp", "speed": 20, "bg": 8, "seed": 1, "trace": 0,
                            "wall_run_s": 3.180736}


def test_flow_total_and_background_lines_are_told_apart():
    text = "\n".join([FLOW, FLOW.replace("flow=1", "flow=2"), "TOTAL study=D flows=2 msgs=990 goodput_kbps=102.4",
                      "BG flow=2 src=21 dst=12 start=1.1278419439344862"])
    out = cmp.parse_ns2_output(text)
    assert [f["flow"] for f in out["flows"]] == [1, 2]
    assert out["total"]["msgs"] == 990
    assert out["bg"] == [{"flow": 2, "src": 21, "dst": 12, "start": 1.1278419439344862}]


def test_background_flows_must_match_the_traced_run():
    bg = [{"flow": 2, "src": 21, "dst": 12, "start": 1.1278419439344862}]
    ran = [{"flow": 1, "src": 0, "dst": 49, "flow_start": 10.0}, {"flow": 2, "src": 21, "dst": 12, "flow_start": 1.127842}]
    cmp.check_bg(bg, ran)
    with pytest.raises(RuntimeError, match="not reproduced"):
        cmp.check_bg(bg, [ran[0], {**ran[1], "dst": 13}])
    with pytest.raises(RuntimeError, match="not reproduced"):
        cmp.check_bg(bg, [ran[0], {**ran[1], "flow_start": 1.12785}])


# ---------------------------------------------------------------- statistics


def test_order_statistic_interval_of_the_median_on_known_numbers():
    # n = 10: (x_(2), x_(9)), coverage 1 - 2 * (1 + 10) / 1024
    assert cmp.median_interval(list(range(10, 0, -1))) == (2, 9, 1 - 22 / 1024)
    # n = 9: k = 2 as well, 1 - 2 * 10 / 512
    assert cmp.median_interval([5, 1, 9, 3, 7, 2, 8, 4, 6]) == (2, 8, 1 - 20 / 512)
    # n = 6: only (min, max) reaches 95 %: 1 - 2 / 64
    assert cmp.median_interval([3, -1, 4, 1, 5, 9]) == (-1, 9, 1 - 2 / 64)
    # n = 5: (min, max) is the widest there is, at 93.75 %
    assert cmp.median_interval([0.3, 0.1, 0.2, 0.5, 0.4]) == (0.1, 0.5, 0.9375)
    lo, hi, cov = cmp.median_interval([7.0])
    assert (lo, hi, cov) == (7.0, 7.0, 0.0)


def test_paired_differences_and_the_criterion():
    ns = [100.0, 102.0, 98.0, 101.0, 99.0, 100.0]
    p = cmp.paired(ns, [103.0, 104.0, 101.0, 104.0, 101.0, 102.0])  # diffs 3 2 3 3 2 2
    assert p.diffs == [3.0, 2.0, 3.0, 3.0, 2.0, 2.0]
    assert p.diff_median == 2.5 and (p.low, p.high) == (2.0, 3.0)
    assert not p.includes_zero and p.within_10 and p.ok
    far = cmp.paired(ns, [x + 20 for x in ns])
    assert not far.includes_zero and not far.within_10 and not far.ok
    assert abs(far.rel - 0.2) < 1e-12
    spread = cmp.paired(ns, [x + d for x, d in zip(ns, [-30, 40, 5, -2, 1, 0])])
    assert spread.includes_zero and not spread.within_10 and spread.ok
    # a seed missing on one side is left out of the pairs
    assert cmp.paired([1.0, None, 3.0], [1.0, 2.0, 4.0]).n == 2


def test_seed_lists():
    assert cmp.parse_seeds("1-5") == [1, 2, 3, 4, 5]
    assert cmp.parse_seeds("3") == [3]
    assert cmp.parse_seeds("1,3,7-9,3") == [1, 3, 7, 8, 9]
    for bad in ("0", "5-2", "x", ""):
        with pytest.raises(ValueError):
            cmp.parse_seeds(bad)


# ---------------------------------------------------------------- points and scenarios


def test_message_counts_are_common_tcl_count_msgs():
    assert cmp.count_msgs(0.1, 0.02, 10) == 495                      # study D, each direction
    assert cmp.count_msgs(10, 0.8, 500) == 613                       # study C's main flow
    a5 = cmp.flows_for(cmp.POINTS["A-udp-I5"])
    assert len(a5) == 48 and sum(f.count for f in a5) == 951         # study A, I = 5 (README: 951)
    assert sum(f.count for f in cmp.flows_for(cmp.POINTS["A-udp-I1"])) == 4752


def test_study_a_layout_is_the_shipped_files():
    shipped = tomllib.loads((ROOT / "scenarios" / "study-a-sensor-interval.toml").read_text())
    pos = [(float(x[:-1]), float(y[:-1])) for x, y in shipped["nodes"]["placement"]["positions"]]
    mine = cmp.a_positions()
    assert len(mine) == 56
    assert all(abs(a - c) < 1e-6 and abs(b - d) < 1e-6 for (a, b), (c, d) in zip(mine, pos))


def test_point_selection():
    assert len(cmp.POINTS) == 7 + 15 + 24 + 6
    assert [p.key for p in cmp.select_points(["D"], None, False)] == ["D-udp", "D-tcp-msg", "D-tcp-default", "D-sctp",
                                                                       "D-tfrc", "D-dccp2", "D-dccp3"]
    assert [p.key for p in cmp.select_points(["A", "C", "D"], ["C-*-v10-bg0"], False)] == ["C-udp-v10-bg0",
                                                                                           "C-tcp-v10-bg0",
                                                                                           "C-sctp-v10-bg0",
                                                                                           "C-tfrc-v10-bg0"]
    quick = cmp.select_points(["A", "C", "D"], None, True)
    assert [(p.study, p.stop) for p in quick] == [("A", 20.0), ("C", 60.0), ("D", None)]
    assert cmp.POINTS["A-tcp-I2"].ns2_args() == ["interval=2", "transport=tcp"]
    assert cmp.POINTS["D-tcp-default"].ns2_args() == ["transport=tcp", "sizes=default"]
    assert cmp.POINTS["C-udp-v20-bg8"].ns2_args() == ["speed=20", "transport=udp", "bg=8"]
    assert cmp.POINTS["D-dccp3"].ns2_args() == ["transport=dccp3"]


def test_study_d_dccp_scenario_names_tpsims_transport_and_ns2_profile(tmp_path):
    text = cmp.scenario_text(cmp.POINTS["D-dccp3"], 1, tmp_path, "ns2")
    assert text.count('transport = "dccp-ccid3"') == 2
    assert text.count('dccp = { profile = "ns2", segment_size = "128B" }') == 2
    tpsim.Scenario(text)


def test_study_c_tfrc_points_and_their_llfix_variant():
    tfrc = [p.key for p in cmp.select_points(["C"], ["C-tfrc-*"], False)]
    assert tfrc == [f"C-tfrc-v{v}-bg{bg}" for bg in (0, 8) for v in (5, 10, 20)] + \
        [f"C-tfrc-v{v}-bg{bg}+llfix" for bg in (0, 8) for v in (5, 10, 20)]
    plain, fixed = cmp.POINTS["C-tfrc-v10-bg0"], cmp.POINTS["C-tfrc-v10-bg0+llfix"]
    assert not plain.llfix and fixed.llfix and fixed.transport == "tfrc" and (fixed.speed, fixed.bg) == (10, 0)
    assert plain.ns2_args() == ["speed=10", "transport=tfrc", "bg=0"]
    assert fixed.ns2_args() == ["speed=10", "transport=tfrc", "bg=0", "llfix=1"]
    assert cmp.ns2_command(Path("."), fixed, 4, "traced")[-2:] == ["llfix=1", "seed=4"]
    assert "llfix" not in " ".join(cmp.ns2_command(Path("."), plain, 4, "traced"))
    # the variant names its ns-2 runs apart; the report finds it (and its --no-arp form) by key
    if NS2_DIR is not None:
        name = lambda p: cmp.ns2_cache_path(Path("/c"), NS2_DIR, p, 4, "traced").name  # noqa: E731
        assert name(fixed).startswith("C-C-tfrc-v10-bg0-llfix-seed4-")
        assert name(plain).startswith("C-C-tfrc-v10-bg0-seed4-")
    assert cmp.point_of("C-tfrc-v10-bg0+llfix") == fixed
    assert cmp.point_of("C-tfrc-v10-bg0+llfix+noarp") == cmp.without_arp(fixed)
    assert "llfix=1" in fixed.title() and "llfix" not in plain.title()
    # tpsim's side differs only by ns-2's AODV quirk, switched on against plain ns-2
    model, _ = cmp.resolve_tcp_model("auto")
    ta = cmp.scenario_text(plain, 4, Path("/n"), model).split("\n", 2)[2]
    tb = cmp.scenario_text(fixed, 4, Path("/n"), model).split("\n", 2)[2]
    quirk = 'ns2_quirks = ["aodv-data-packet-list"]\n'
    assert quirk in ta and "ns2_quirks" not in tb
    assert ta.replace('"ns2-C-tfrc-v10-bg0"', "").replace(quirk, "") == tb.replace('"ns2-C-tfrc-v10-bg0+llfix"', "")
    flows = ta.split("[[flows]]")
    assert len(flows) == 2 and 'transport = "tfrc"' in flows[1] and 'tfrc = { profile = "ns2" }' in flows[1]
    assert "count = 613" in flows[1] and "src = 0" in flows[1] and "dst = 49" in flows[1]


def _scen_dir() -> Path:
    if NS2_DIR is None:
        pytest.skip("the shared ns-2 scripts (../shared/ns2) are not there")
    return NS2_DIR


BG = [{"flow": 2, "src": 21, "dst": 12, "start": 1.1278419439344862},
      {"flow": 3, "src": 28, "dst": 48, "start": 8.1923990823293096}]


@pytest.mark.parametrize("key", ["D-udp", "D-tcp-msg", "D-tcp-default", "D-sctp", "A-udp-I1", "A-tcp-I20", "C-udp-v5-bg0",
                                 "C-tcp-v20-bg8", "C-udp-v10-bg8", "C-tfrc-v10-bg0", "C-tfrc-v20-bg8+llfix"])
def test_every_mirrored_scenario_validates(key, tmp_path):
    point = cmp.POINTS[key]
    ns2_dir = _scen_dir() if point.study == "C" else Path("/nonexistent")
    model, _ = cmp.resolve_tcp_model("auto")
    for p in (point, cmp.without_arp(point)) if point.study != "D" else (point,):
        path = tmp_path / f"{p.key}.toml"
        path.write_text(cmp.scenario_text(p, 3, ns2_dir, model, BG if p.bg else ()), encoding="utf-8")
        sc = tpsim.load(path)
        r = sc.resolved
        flows = cmp.flows_for(p, BG if p.bg else ())
        assert len(r["flows"]) == len(flows)
        assert r["simulation"]["sizes"] == "ns2"
        assert ("arp" in r and r["arp"]) if p.arp and p.study != "D" else True
    if point.study == "C":
        text = cmp.scenario_text(point, 3, ns2_dir, model, BG if point.bg else ())
        assert "rwp-n50-1000x1000-v%d-p0-t505-s3.tcl" % point.speed in text


def test_the_tcp_model_switch():
    assert "preset = \"ns2\"" in cmp.tcp_table("ns2", 128) and "window = 20" in cmp.tcp_table("ns2", 128)
    modern = cmp.tcp_table("modern", 1000)
    assert 'mss = "1000B"' in modern and 'delayed_ack = "0s"' in modern and "initial_window = 2" in modern
    assert cmp.resolve_tcp_model("modern")[0] == "modern"
    ok, why = cmp.ns2_tcp_preset_available()
    assert cmp.resolve_tcp_model("auto")[0] == ("ns2" if ok else "modern")


def test_report_section_markers(tmp_path):
    doc = "# B\n\ntext\n"
    out = cmp.replace_section(doc, "REPORT")
    assert out == f"{doc}\n{cmp.SECTION_TITLE}\n\n{cmp.BEGIN}\nREPORT\n{cmp.END}\n"
    assert cmp.replace_section(out, "NEW") == out.replace("REPORT", "NEW")
    with pytest.raises(ValueError, match="marker"):
        cmp.replace_section(f"x\n{cmp.BEGIN}\n", "T")


# ---------------------------------------------------------------- end to end


def test_quick_run_of_study_d_against_ns2(tmp_path):
    if shutil.which("ns") is None:
        pytest.skip("ns-2 (ns) is not installed")
    ns2_dir = _scen_dir()
    p = subprocess.run([sys.executable, str(HARNESS), "--quick", "--studies", "D", "--ns2-dir", str(ns2_dir),
                        "--cache-dir", str(tmp_path), "--doc", "-"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "### `D-udp`" in out
    # ns-2 and tpsim agree exactly on the idle link: 128·8/256000 + 0.050 s
    assert "| mean delay ms | 54.000 | 54.000 | 0.000 |" in out
    assert "| data packets received | 990 | 990 | 0 |" in out
    assert list((tmp_path / "ns2-results").glob("D-D-udp-seed1-traced-*.json"))
    # the second run takes ns-2's results from the cache
    p2 = subprocess.run([sys.executable, str(HARNESS), "--quick", "--studies", "D", "--ns2-dir", str(ns2_dir),
                         "--cache-dir", str(tmp_path), "--ns2-cached-only", "--doc", "-"],
                        capture_output=True, text=True, timeout=300)
    assert p2.returncode == 0, p2.stderr
    assert "ns-2 from the cache for 1 of them" in p2.stdout


# ---------------------------------------------------------------- noise floor (ns-2 against ns-2)


def _fake_ns2_dir(tmp_path: Path) -> Path:
    """The files whose hashes key ns-2's cache, with made-up contents (no ns-2 needed)."""
    d = tmp_path / "ns2"
    (d / "scen").mkdir(parents=True)
    for name in ("study_a.tcl", "study_c.tcl", "common.tcl", "tracestats.py"):
        (d / name).write_text(f"# {name}\n")
    for s in (3, 4, 1003):
        cmp.scen_file(d, 10, s).write_text(f"# movement of seed {s}\n")
    return d


def test_noise_run_command_and_cache_path(tmp_path):
    d, cache = _fake_ns2_dir(tmp_path), tmp_path / "cache"
    a, c = cmp.POINTS["A-tcp-I5"], cmp.POINTS["C-tfrc-v10-bg8+llfix"]
    # study A: the traced run's command with only the seed moved by 1000
    assert cmp.ns2_command(d, a, 3, "noise") == ["ns", "study_a.tcl", "interval=5", "transport=tcp", "seed=1003"]
    assert cmp.ns2_command(d, a, 3, "traced") == ["ns", "study_a.tcl", "interval=5", "transport=tcp", "seed=3"]
    # study C: also the movement file of seed 3 (relative to the folder ns-2 runs in), not of 1003
    cmd = cmp.ns2_command(d, c, 3, "noise")
    assert cmd == ["ns", "study_c.tcl", "speed=10", "transport=tfrc", "bg=8", "llfix=1",
                   "scen=scen/rwp-n50-1000x1000-v10-p0-t505-s3.tcl", "seed=1003"]
    assert (d / cmd[-2].split("=", 1)[1]) == cmp.scen_file(d, 10, 3)
    assert not any(w.startswith("scen=") for w in cmp.ns2_command(d, c, 3, "traced"))
    # cached apart from the traced runs of seeds 3 and 1003, under its own kind
    path = lambda p, s, k: cmp.ns2_cache_path(cache, d, p, s, k)  # noqa: E731
    for p in (a, c):
        noise = path(p, 3, "noise")
        assert noise.parent == cache / "ns2-results" and "-seed3-noise-" in noise.name
        assert noise != path(p, 3, "traced") and noise != path(p, 1003, "traced") and noise != path(p, 4, "noise")
    # study C's noise run is keyed by the movement file of seed 3 (its content), not of seed 1003
    before = path(c, 3, "noise")
    cmp.scen_file(d, 10, 1003).write_text("# other\n")
    assert path(c, 3, "noise") == before
    cmp.scen_file(d, 10, 3).write_text("# other\n")
    assert path(c, 3, "noise") != before
    # a cached noise run is read back, and --ns2-cached-only never runs ns-2 for a missing one
    assert cmp.run_ns2(d, a, 4, "noise", cache=cache, cached_only=True) is None
    target = path(a, 4, "noise")
    target.parent.mkdir(parents=True)
    target.write_text('{"kind": "noise", "seed": 4, "parsed": {}}')
    rec = cmp.run_ns2(d, a, 4, "noise", cache=cache, cached_only=True)
    assert rec["kind"] == "noise" and rec["cached"] is True


def test_noise_floor_switch():
    assert cmp.parse_args(["--points", "A-tcp-I5"]).noise_floor is False
    assert cmp.parse_args(["--points", "A-tcp-I5", "--noise-floor"]).noise_floor is True


def _ns2_rec(recv: int, routing: int, frames: int, wall: float) -> dict:
    tot = {"msgs": 951, "sent": 951, "recv": recv, "pdr": recv / 951, "app_pdr": recv / 951,
           "goodput_kbps": recv * 256 * 8 / 99 / 1000, "delay_ms": 20.0, "routing_pkts": routing,
           "mac_frames": frames, "mac_rts": 1, "mac_cts": 1, "mac_ack": 1, "routing_rreq": 1, "routing_rrep": 1,
           "routing_rerr": 0, "energy_avg_j": 2.3, "wall_run_s": wall}
    return {"parsed": {"flows": [], "total": tot, "bg": []}}


def _tpsim_rec(recv: int) -> dict:
    flow = {"tx_packets": 951, "tx_segments": 951, "rx_segments": recv, "rx_packets": recv,
            "packet_delay_mean_s": 0.02}
    net = {"routing_packets": 100, "mac_frames": 1000, "mac_rts_frames": 1, "mac_cts_frames": 1,
           "mac_ack_frames": 1, "routing_rreq": 1, "routing_rrep": 1, "routing_rerr": 0,
           "energy_consumed_j_mean": 2.3}
    return {"scenario_file": "/x/ns2-A-udp-I5-seed1-ns2.toml", "tcp_model": "ns2",
            "output": {"tpsim_version": "t", "engine_seconds": 0.1, "flows": [flow], "network": net}}


def test_noise_records_pair_seed_by_seed():
    point = cmp.POINTS["A-udp-I5"]
    # seed S's noise run beside seed S's traced run; seed 2 has none, seed 4 no tpsim run
    recs = {s: {"traced": _ns2_rec(900 + s, 100 * s, 1000 * s, 1.0), "untraced": _ns2_rec(0, 0, 0, 0.5),
                "noise": _ns2_rec(800 + 2 * s, 100 * s + 10, 1000 * s - 50, 9.0)} for s in (1, 3, 4, 5)}
    recs[2] = {"traced": _ns2_rec(902, 200, 2000, 1.0), "untraced": _ns2_rec(0, 0, 0, 0.5)}
    seeds, base, noise = cmp.noise_pairs(point, [1, 2, 3, 4, 5], recs)
    assert seeds == [1, 3, 4, 5]
    assert [m["recv"] for m in base] == [901, 903, 904, 905]
    assert [m["recv"] for m in noise] == [802, 806, 808, 810]
    assert [m["routing"] for m in noise] == [110, 310, 410, 510]
    # no untraced twin: no speed for the noise run (the traced run's own wall time is not used)
    assert all(m["loop_s"] is None and m["us_per_frame"] is None for m in noise)
    assert all(m["loop_s"] == 0.5 for m in base)
    tp = {s: _tpsim_rec(900) for s in (1, 2, 3, 5)}
    s = cmp.summarise_point(point, [1, 2, 3, 4, 5], recs, tp, "", "now")
    assert s["seeds"] == [1, 2, 3, 5] and s["noise"]["seeds"] == [1, 3, 5]
    nm = s["noise"]["metrics"]
    # noise − ns-2 of the same seed: recv 802−901, 806−903, 810−905; routing +10; frames −50
    assert nm["recv"]["diffs"] == [-99, -97, -95] and nm["recv"]["diff_median"] == -97
    assert nm["routing"]["diffs"] == [10, 10, 10] and nm["routing"]["ok"]  # |10| ≤ 10 % of 300
    assert nm["mac_frames"]["diffs"] == [-50, -50, -50]
    assert not nm["recv"]["ok"] and nm["recv"]["ns2_median"] == 903  # the same ns-2 median as tpsim's
    assert s["metrics"]["recv"]["ns2_median"] == 902.5 and s["metrics"]["recv"]["n"] == 4
    # the report: a noise column in the point's table and beside the summary's count
    block = cmp.render_point(s)
    assert "noise floor: Δ / ns-2, agrees" in block
    assert "| data packets received | 902 | 900 |" in block and "| -10.7%, **no** |" in block
    k = cmp.agreeing(nm, point)
    row = cmp.summary_row(s, True)
    within = cmp.within_noise(s["metrics"], s["noise"], point)
    assert row[cmp.SUMMARY_HEAD.index("metrics agreeing") + 1] == f"{k} · {within}" and k.endswith(f"/{len(nm)}")
    # how far a run lands from its pair: the median of |Δ| over ns-2's median, beside tpsim's
    assert cmp.abs_rel(nm["recv"]) == 97 / 903 and cmp.fmt_abs_rel(nm["recv"]) == "10.7%"
    tp_recv = cmp.abs_rel(s["metrics"]["recv"])
    assert f"| {cmp.fmt_abs_rel(s['metrics']['recv'])} · 10.7% |" in block
    # every metric but routing and MAC frames, whose median |Δ| (150 of 250, 1,500 of 2,500)
    # exceeds the noise floor's (10 of 300, 50 of 3,000)
    assert within == "8/10" and tp_recv == 2.5 / 902.5
    assert k != cmp.agreeing(s["metrics"], point)
    report = cmp.render_report({point.key: s}, "H")
    assert cmp.NOISE_HEAD in report
    # without noise runs, nothing of it: the report is as before
    plain = cmp.summarise_point(point, [1, 2, 3, 4, 5], {k: {kk: v for kk, v in r.items() if kk != "noise"}
                                                          for k, r in recs.items()}, tp, "", "now")
    assert "noise" not in plain and len(cmp.summary_row(plain)) == len(cmp.SUMMARY_HEAD)
    assert cmp.NOISE_HEAD not in cmp.render_report({point.key: plain}, "H")
    assert "noise floor" not in cmp.render_point(plain)
