"""benches/pipeline.py: its pure parts (arguments, the 10,000-node grid's flows, tpsim's
output lines, the targets) and the RSS sampler on a parent and a child process. Nothing is
timed and neither tpsim's commands nor ns-2 run here."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from conftest import ROOT, load_bench

HARNESS = ROOT / "benches" / "pipeline.py"


pl = load_bench("pipeline", "pipeline_bench")


# ---------------------------------------------------------------------------- arguments


def test_defaults_run_tpsim_through_this_python():
    a = pl.parse_args([])
    assert a.tpsim_cmd == [sys.executable, "-m", "tpsim"]
    names = [c.name for c in a.case_list]
    assert names[:3] == ["version", "validate", "one-point"]
    assert {"study-a", "study-b", "study-c", "study-d", "study-e", "study-d-again", "grid-report", "grid-noreport",
            "c-traces", "c-off"} <= set(names)
    assert not any(n.endswith("-quick") for n in names)  # only when named
    assert names.index("study-d") < names.index("study-d-again")
    assert names.index("c-off") < names.index("c-traces")


def test_quick_mode_is_small():
    a = pl.parse_args(["--quick"])
    names = [c.name for c in a.case_list]
    assert "study-a" not in names and "study-e" not in names
    cases = {c.name: c for c in a.case_list}
    assert cases["grid-report"].grid == pl.QUICK_GRID_N
    assert "--quick" in cases["study-d"].args
    # the 6 points of study C, the same in both runs of the trace comparison
    assert list(pl.QUICK_C) == [x for x in cases["c-traces"].args if x in pl.QUICK_C]
    assert set(pl.QUICK_C) <= set(cases["c-off"].args)


def test_cases_pull_what_they_need_and_globs():
    a = pl.parse_args(["--cases", "study-d-again,c-traces"])
    assert [c.name for c in a.case_list] == ["study-d", "study-d-again", "c-off", "c-traces"]
    a = pl.parse_args(["--cases", "grid-*", "--tpsim", "tpsim --flag"])
    assert [c.name for c in a.case_list] == ["grid-noreport", "grid-report"]
    assert a.tpsim_cmd == ["tpsim", "--flag"]
    assert [c.name for c in pl.parse_args(["--cases", "study-b-quick"]).case_list] == ["study-b-quick"]


@pytest.mark.parametrize("argv", [["--cases", "nope"], ["--ns2", "--quick"], ["--sample-ms", "0"],
                                  ["--ns2", "--ns2-studies", "D"], ["--ns2", "--points", "C-udp-v10-bg0,C-tfrc-v5-bg0"],
                                  ["--ns2", "--ns2-studies", "C", "--seeds", "1-11"]])
def test_bad_arguments_exit(argv, capsys):
    with pytest.raises(SystemExit) as e:
        pl.parse_args(argv)
    assert e.value.code == 2


def test_ns2_points_and_tpsim_sweeps():
    a = pl.parse_args(["--ns2"])
    assert len(a.ns2_point_lists["C"]) == 12 and len(a.ns2_point_lists["A"]) == 15
    # the whole comparison: the study as users run it, on the ns-2 stack
    assert pl.tpsim_ns2_args("C", a.ns2_point_lists["C"], 10) == [
        "study", "c", "--sweep", "simulation.stack=ns2", "--sweep", "flows.0.transport=udp,tfrc"]
    assert pl.tpsim_ns2_args("A", a.ns2_point_lists["A"], 10) == ["study", "a", "--sweep", "simulation.stack=ns2"]
    # a narrowed one: exactly those points and replications
    a = pl.parse_args(["--ns2", "--points", "C-*-v10-bg0", "--seeds", "1"])
    assert list(a.ns2_point_lists) == ["C"] and a.seed_list == [1]
    assert pl.tpsim_ns2_args("C", a.ns2_point_lists["C"], 1) == [
        "study", "c", "--sweep", "simulation.stack=ns2", "--sweep", "flows.0.transport=udp,tfrc",
        "--sweep", "nodes.mobility.speed=[10m/s,10m/s]", "--sweep", "background.flows=0", "--runs", "1"]
    pts = pl.ns2_points("A", ["A-udp-I1", "A-udp-I5"])
    assert pl.tpsim_ns2_args("A", pts, 10)[-2:] == ["--sweep", "sensors.transport=udp"]
    assert "sensors.interval=1s,5s" in pl.tpsim_ns2_args("A", pts, 10)


def test_study_runs_and_point_keys():
    assert pl.study_runs("C") == 10 and pl.study_runs("A") == 10
    assert pl.tpsim_point_key("C", {"nodes.mobility.speed": '["10m/s", "10m/s"]', "background.flows": 8,
                                    "flows.0.transport": "tfrc", "simulation.stack": "ns2"}) == "C-tfrc-v10-bg8"
    assert pl.tpsim_point_key("A", {"sensors.interval": "20s", "sensors.transport": "sctp"}) == "A-sctp-I20"
    assert pl.tpsim_point_key("A", {"sensors.interval": "x"}) is None


# ---------------------------------------------------------------------------- the grid


def test_splitmix64_reference_values():
    rng = pl.SplitMix64(1234567)  # the generator's published first outputs for this seed
    assert [rng.next() for _ in range(3)] == [6457827717110365317, 3203168211198807973, 9817491932198370423]


def test_grid_flows_are_scale_10k_flows():
    flows = pl.grid_flows(10_000)
    assert len(flows) == 2000
    assert all(s != d and 0 <= s < 10_000 and 0 <= d < 10_000 and 0 <= t < 1000 for s, d, t in flows)
    # scale_10k.rs's SplitMix64 from 0x5eed (checked against a C transcription in u64 arithmetic)
    assert flows[:5] == [(6052, 6005, 891), (1197, 693, 130), (2368, 6705, 795), (6071, 4393, 506), (844, 3993, 335)]
    assert flows[-1] == (506, 6584, 454)


def test_grid_scenario_text():
    text = pl.grid_scenario(10_000)
    assert text.count("[[flows]]") == 2000
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        pytest.skip("no tomllib")
    doc = tomllib.loads(text)
    assert doc["nodes"] == {"count": 10_000, "placement": {"kind": "grid", "spacing": "200m"}}
    assert doc["simulation"]["duration"] == "5s" and doc["simulation"]["sizes"] == "ns2"
    assert doc["routing"] == {"protocol": "aodv", "preset": "ns2"} and doc["radio"] == {}
    assert doc["output"] == {"timeseries": False}
    f = doc["flows"][0]
    assert (f["src"], f["dst"], f["transport"]) == (6052, 6005, "udp")
    assert f["app"] == {"kind": "cbr", "size": "512B", "interval": "250ms", "start": "891ms"}


# ---------------------------------------------------------------------------- tpsim's outputs


def test_printed_engine_and_plan():
    line = ("study-c-manet-speed: 6 point(s) x 1 run(s); ran 6, reused 0; engine 8.153 s -> /tmp/x/ "
            "(report.html)\n")
    assert pl.printed_engine(line) == pytest.approx(8.153)
    assert pl.printed_plan(line) == {"points": 6, "runs": 1, "ran": 6, "reused": 0}
    assert pl.printed_engine("0.1.0+abc\n") is None and pl.printed_plan("") is None


def test_fresh_runs_only_those_the_command_wrote(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text(json.dumps({"engine_seconds": 1.5, "network": {"mac_frames": 10}}))
    before = pl.run_files(tmp_path)
    (runs / "b.json").write_text(json.dumps({"engine_seconds": 0.25, "network": {"mac_frames": 4}}))
    recs = pl.fresh_runs(tmp_path, before)
    assert pl.engine_of(recs) == pytest.approx(0.25) and pl.mac_frames_of(recs) == 4
    assert pl.engine_of(pl.fresh_runs(tmp_path, {})) == pytest.approx(1.75)


def test_targets_verdicts():
    keys = [t.key for t in pl.TARGETS]
    assert keys == ["c-traces-wall", "c-traces-rss", "grid-report", "study-d-again", "version", "one-point",
                    "ns2-c", "ns2-a"]
    t = {t.key: t for t in pl.TARGETS}
    assert t["version"].met(0.09) and not t["version"].met(0.3) and t["version"].met(None) is None
    assert t["ns2-c"].met(0.8) and not t["ns2-c"].met(0.5)
    assert t["c-traces-rss"].limit == 1024  # MB of 2^20 bytes: 1 GB


# ---------------------------------------------------------------------------- the RSS sampler

CHILD = "import sys, time; b = bytearray(60 << 20); print('ready', flush=True); sys.stdin.read()"
PARENT = textwrap.dedent(f"""
    import subprocess, sys, time
    a = bytearray(60 << 20)
    c = subprocess.Popen([sys.executable, "-c", {CHILD!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert c.stdout.readline().strip() == "ready"
    time.sleep(0.6)
    c.stdin.close()
    c.wait()
""")


MEASURE = textwrap.dedent(f"""
    import dataclasses, importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("pipeline_bench", {str(HARNESS)!r})
    mod = importlib.util.module_from_spec(spec)
    sys.modules["pipeline_bench"] = mod
    spec.loader.exec_module(mod)
    m = mod.measure([sys.executable, "-c", {PARENT!r}], {str(ROOT)!r}, interval=0.02)
    print(json.dumps(dataclasses.asdict(m)))
""")


def test_sampler_sums_a_parent_and_its_child():
    # Measured from a fresh, small interpreter: a child forked from this long-lived test
    # process would report this process's size as its own peak (ru_maxrss counts the image
    # it had before exec).
    import subprocess

    p = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)
    assert m["returncode"] == 0, m["stderr"]
    assert m["processes"] == 2
    assert m["samples"] >= 5
    # both hold 60 MiB (touched: bytearray zero-fills) at once; the sum sees both, one process one
    assert m["peak_sum_kb"] >= 2 * 60 * 1024
    assert 60 * 1024 <= m["peak_single_kb"] < m["peak_sum_kb"]


def test_memory_guard_kills_the_tree():
    m = pl.measure([sys.executable, "-c", PARENT], ROOT, interval=0.02, max_rss_kb=30 * 1024)
    assert m.killed.startswith("killed: summed RSS")
    assert m.returncode != 0
