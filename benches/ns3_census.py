#!/usr/bin/env python3
"""A census of ns-3's AODV runs beside tpsim's: what each side transmits and where data is lost.

``benches/ns3/aodv_census.cc`` (tpsim's own ns-3 program) rebuilds the runs of
``../shared/ns3/s6_scale.cc``, ``s4_manet_cbr.cc`` and ``s1_manet_tcp.cc`` (the same helpers,
draws and seeds: its packet and frame counts equal those programs') and counts AODV messages by
type, ARP frames, and data packets lost by cause; for ``s1`` (``--s1``) it follows the TCP
connection instead and prints one row per seed and side: when the connection opened, its
goodput, when the last byte arrived, when the sender gave up, and what was lost after the last
byte (ns-3: the data segments and ACKs, by cause). This script compiles it against the ns-3 wheel that
``compare_ns3.py`` caches, runs it for the scale scenario (``--nodes``) or study C's MANET
(``--speed``) over seeds, runs tpsim on the same benchmark files, and prints one Markdown table
of medians over the seeds (each row's median on its own: the rows of one column need not add
up; and the drop reports add up to more than the losses, on both sides: a frame dropped at
the MAC's retry limit may have arrived with its ACK lost, and a few other reports are of
packets that still arrive). ns-3 results are cached per configuration and seed in
``benches/.cache/ns3-census/``.

    python benches/ns3_census.py --nodes 25,50,100,200 --seeds 1-5
    python benches/ns3_census.py --speed 10 --seeds 1-5 --sim-time 500
    python benches/ns3_census.py --s1 --seeds 1-20
    python benches/ns3_census.py --s1 --seeds 1-20 --tpsim-seeds 10
    python benches/ns3_census.py --speed 10 --seeds 1-5 --sim-time 500 --paired

``--paired`` (study C) and ``--s1`` run tpsim on ns-3's node paths, which the program writes as
an ns-2 movement file (and, with ``--paired``, on the background flows ns-3 drew), so that the
two sides differ only in their models and random draws.

Not part of the test suite (an ns-3 run of N = 200 takes minutes).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_ns3 as cn  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "ns3" / "aodv_census.cc"


def build(ns3_dir: Path, cache: Path) -> Path:
    """Compiles the census program (when its sources or the wheel changed); returns it."""
    py = cn.ensure_venv(cache)
    inc, lib, ver = cn.wheel_paths(py)
    stamp = cn.sha256_files([PROGRAM, ns3_dir / "common.h"]) + str(lib)
    tag = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    binary = cache / "ns3-census" / f"aodv_census-{tag}"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    libs = [f"-lns3.{ver}-{m}" for m in cn.build_modules(ns3_dir)]
    tmp = binary.with_name(binary.name + ".tmp")
    cmd = ["g++", *os.environ.get("CXXFLAGS", "-O2").split(), "-std=c++20", f"-I{inc}", f"-I{ns3_dir}",
           "-o", str(tmp), str(PROGRAM), f"-L{lib}", *libs, f"-Wl,-rpath,{lib}"]
    cn.log(f"compiling {PROGRAM.name}")
    cn.run_checked(cmd, f"compiling {PROGRAM.name}")
    os.replace(tmp, binary)
    return binary


def ns3_run(binary: Path, args: Sequence[str], seed: int, movement: bool = False) -> Dict[str, Any]:
    """One census run, from the cache when present. With ``movement``, the run also writes the
    nodes' paths as an ns-2 movement file, whose path the record holds as ``movement_file``."""
    stem = f"{binary.name}-{'_'.join(a.lstrip('-') for a in args)}-seed{seed}"
    path = binary.parent / f"{stem}.json"
    mv = binary.parent / f"{stem}.ns2"
    extra = [f"--movement={mv}"] if movement else []
    if path.exists() and (not movement or mv.exists()):
        rec = json.loads(path.read_text())
        return {**rec, "movement_file": str(mv)} if movement else rec
    cn.log(f"ns-3 census {' '.join(args)} seed {seed}")
    proc = subprocess.run([str(binary), *args, *extra, f"--seed={seed}", "--run=1"], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"{binary.name} {' '.join(args)} --seed={seed} exited {proc.returncode}:\n{tail}")
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    cn.atomic_write_text(path, json.dumps(rec))
    return {**rec, "movement_file": str(mv)} if movement else rec


S4_PLACEMENT = 'placement = { kind = "uniform", area = ["1000m", "1000m"] }\n'
S4_MOBILITY = 'mobility = { model = "random-waypoint", speed = ["10m/s", "10m/s"], pause = "0s", start = "placement" }\n'


def on_ns3_paths(bench_key: str, placement: str, mobility: str, movement: Path, extra: str = "") -> Path:
    """The benchmark file of ``bench_key`` with its nodes moving along an ns-2 movement file
    (ns-3's paths, written by the census program) instead of its own placement and mobility
    lines, plus ``extra`` (more flows); written beside the movement file."""
    bench = cn.BENCHMARKS[bench_key]
    text = (cn.REPO / bench.tpsim_scenario).read_text(encoding="utf-8")
    for line in (placement, mobility):
        if text.count(line) != 1:
            raise RuntimeError(f"{bench.tpsim_scenario}: expected {line.strip()!r} exactly once")
    movement = movement.resolve()
    text = text.replace(placement, "").replace(mobility, f'mobility = {{ model = "ns2", file = "{movement}" }}\n')
    text += extra
    path = movement.with_suffix(".toml")
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        cn.atomic_write_text(path, text)
    return path


def s4_on_paths(ns: Dict[str, Any]) -> Path:
    """tpsim's ``s4_manet_cbr`` file on the node paths and with the background flows of one
    ns-3 census run (``--paired``): the same mobility and the same flows on both sides."""
    flows = "\n# The background flows of the ns-3 census run on these paths.\n"
    for src, dst, start in ns["flows"]:
        app = f'kind = "cbr", size = "1000B", rate = "0.01Mbps", start = "{cn._secs(start)}"'
        flows += cn._flow_toml(int(src), int(dst), "udp", app)
    return on_ns3_paths("s4_manet_cbr-v10", S4_PLACEMENT, S4_MOBILITY, Path(ns["movement_file"]), flows)


def tpsim_run(n: int | None, speed: float | None, seed: int, sim_time: float, ns: Dict[str, Any] | None = None) -> Dict[str, Any]:
    """The same configuration in tpsim: the benchmark file with compare_ns3's flows for the
    seed and ``sim_time``; with ``ns`` (an s4 census record with its paths), on ns-3's node
    paths and flows."""
    import tpsim

    key = f"s6_scale-n{n}" if n else f"s4_manet_cbr-v{speed:g}"
    bench = cn.BENCHMARKS[key]
    if ns is not None:
        path, sets = s4_on_paths(ns), [f'simulation.duration="{sim_time:g}s"']
    else:
        path = cn.tpsim_scenario_file(bench, seed, sim_time, cn.CACHE)
        sets = [*bench.tpsim_set, f'simulation.duration="{sim_time:g}s"']
    r = tpsim.run(str(path), seed=seed, set=[*sets, *TPSIM_SETS])
    net = r.network.to_dicts()[0]
    f = r.flows
    return {
        "data_sent": int(sum(f["tx_packets"])),
        "data_received": int(sum(f["rx_packets"])),
        **{k: net[k] for k in net if k.startswith(("routing_", "drops_", "mac_frames", "arp_"))},
    }


# --tpsim-set: keys set on every tpsim run (to try a model switch on the same paths).
TPSIM_SETS: List[str] = []

S1_PLACEMENT = 'placement = { kind = "uniform", area = ["1500m", "1500m"] }\n'
S1_MOBILITY = 'mobility = { model = "random-waypoint", speed = ["1m/s", "2m/s"], pause = "0s", start = "placement" }\n'


def s1_on_paths(movement: Path) -> Path:
    """tpsim's ``s1_manet_tcp`` file with its nodes moving along ns-3's paths."""
    return on_ns3_paths("s1_manet_tcp", S1_PLACEMENT, S1_MOBILITY, movement)


def tpsim_s1_run(seed: int, sim_time: float, movement: Path | None = None) -> Dict[str, Any]:
    """tpsim's ``s1_manet_tcp`` benchmark file for ``seed`` (its nodes on ns-3's paths when
    ``movement`` is given): the flow's goodput, give-up and timeouts, the drop counts, and
    from 10-s bins of its goodput the first and last bins with bytes."""
    import tpsim

    bench = cn.BENCHMARKS["s1_manet_tcp"]
    path = s1_on_paths(movement) if movement else cn.tpsim_scenario_file(bench, seed, sim_time, cn.CACHE)
    sets = [*bench.tpsim_set, f'simulation.duration="{sim_time:g}s"', "output.timeseries=true", 'output.bin="10s"',
            *TPSIM_SETS]
    r = tpsim.run(str(path), seed=seed, set=sets)
    f = r.flows.to_dicts()[0]
    net = r.network.to_dicts()[0]
    ts = r.timeseries
    bins = ts.filter((ts["series"] == "goodput_kbps") & (ts["value"] > 0))["time_s"].to_list()
    return {
        "goodput_kbps": f["goodput_kbps"],
        "gave_up": bool(f["gave_up"]),
        "rtos": f["rto_timeouts"],
        "first_bin": min(bins) if bins else None,
        "last_bin_end": max(bins) + 10.0 if bins else None,
        **{k: net[k] for k in net if k.startswith(("drops_", "routing_"))},
    }


def ns3_goodput_kbps(ns: Dict[str, Any], sim_time: float) -> float:
    """ns-3's goodput in an s1 census record: bytes the sink received · 8 / (sim time − 10 s)."""
    return ns["sink_bytes"] * 8 / (sim_time - 10.0) / 1000.0


def s1_table(binary: Path, seeds: Sequence[int], sim_time: float) -> str:
    """The per-seed table of ``--s1`` (Markdown): for each seed, ns-3's run, tpsim on ns-3's
    paths of that seed, and tpsim on its own random waypoints."""
    out = [
        "| seed | run | connected at (s) | goodput (kbit/s) | last byte at (s) | gave up at (s) | RTOs "
        "| TCP segments lost: no route / MAC retry limit / ARP / queue / link break flush "
        "| ns-3: lost after the last byte |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def num(x: Any) -> str:
        return "—" if x is None or x < 0 else f"{x:.1f}"

    def ns_lost(ns: Dict[str, Any], cause: str) -> int:
        return sum(ns[f"tcp_{k}_drop_{cause}"] for k in ("syn", "data", "ack"))

    good: Dict[str, List[float]] = {"ns-3": [], "tpsim, ns-3's paths": [], "tpsim, own paths": []}
    gave_up = {k: 0 for k in good}
    for seed in seeds:
        ns = ns3_run(binary, ["--layout=s1", f"--simTime={sim_time:g}"], seed, movement=True)
        opened = [t for t, state in ns["states"] if state == 4]
        g = ns3_goodput_kbps(ns, sim_time)
        good["ns-3"].append(g)
        gave_up["ns-3"] += ns["gave_up_at"] >= 0
        tail = []
        for kind, label in (("data", "data"), ("ack", "ACKs")):
            causes = {k[len(f"tail_{kind}_drop_"):]: v for k, v in ns.items() if k.startswith(f"tail_{kind}_drop_") and v}
            if causes:
                tail.append(f"{label}: " + ", ".join(f"{v} {c.replace('_', ' ')}" for c, v in sorted(causes.items(), key=lambda kv: -kv[1])))
        lost = [ns_lost(ns, "no_route") + ns_lost(ns, "route_error"), ns_lost(ns, "mac_retry_limit"),
                ns_lost(ns, "arp_queue_full") + ns_lost(ns, "arp_no_reply"), ns_lost(ns, "mac_queue"), None]
        cells = " / ".join("—" if x is None else str(x) for x in lost)
        out.append(
            f"| {seed} | ns-3 | {num(opened[0] if opened else None)} | {g:.1f} | {num(ns['last_rx'])} "
            f"| {num(ns['gave_up_at'])} | {ns['rtos']} | {cells} | {'; '.join(tail) or '—'} |"
        )
        for label, movement in (("tpsim, ns-3's paths", Path(ns["movement_file"])), ("tpsim, own paths", None)):
            tp = tpsim_s1_run(seed, sim_time, movement)
            good[label].append(tp["goodput_kbps"])
            gave_up[label] += tp["gave_up"]
            first = f"{tp['first_bin']:.0f}–{tp['first_bin'] + 10:.0f} (first bytes)" if tp["first_bin"] is not None else "—"
            last = f"{tp['last_bin_end'] - 10:.0f}–{tp['last_bin_end']:.0f}" if tp["last_bin_end"] is not None else "—"
            lost = [tp["drops_no_route"], tp["drops_mac_retry"], tp["drops_arp"], tp["drops_queue"] + tp["drops_queue_timeout"],
                    tp["drops_link_break"]]
            out.append(
                f"| {seed} | {label} | {first} | {tp['goodput_kbps']:.1f} | {last} | {'yes' if tp['gave_up'] else 'no'} "
                f"| {tp['rtos']} | {' / '.join(str(x) for x in lost)} | |"
            )
    out.append(f"\nSeeds {seeds[0]}–{seeds[-1]} ({len(seeds)}): median goodput (kbit/s) and connections given up:")
    for k, v in good.items():
        out.append(f"* {k}: {statistics.median(v):.1f}, {gave_up[k]} given up")
    return "\n".join(out)


def s1_spread_table(binary: Path, seeds: Sequence[int], sim_time: float, k: int) -> str:
    """``--s1 --tpsim-seeds K``: for each of ns-3's seeds, tpsim on that seed's node paths with
    its own seeds 101..100+K, against ns-3's one run (Markdown): where ns-3's goodput falls in
    tpsim's spread on the same paths, and how often each gives up."""
    out = [
        f"| ns-3 seed (paths) | ns-3 goodput (kbit/s) | ns-3 gave up | tpsim goodput over {k} seeds: median (min–max) "
        "| tpsim gave up | tpsim seeds below ns-3 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    connected = below_total = 0
    expected_up = 0.0
    ns_up = 0
    for seed in seeds:
        ns = ns3_run(binary, ["--layout=s1", f"--simTime={sim_time:g}"], seed, movement=True)
        g_ns = ns3_goodput_kbps(ns, sim_time)
        runs = [tpsim_s1_run(100 + t, sim_time, Path(ns["movement_file"])) for t in range(1, k + 1)]
        gs = [r["goodput_kbps"] for r in runs]
        ups = sum(r["gave_up"] for r in runs)
        below = sum(g < g_ns for g in gs)
        if any(state == 4 for _, state in ns["states"]):
            connected += 1
            below_total += below
            expected_up += ups / k
            ns_up += ns["gave_up_at"] >= 0
        out.append(
            f"| {seed} | {g_ns:.1f} | {'yes' if ns['gave_up_at'] >= 0 else 'no'} | {statistics.median(gs):.1f} "
            f"({min(gs):.1f}–{max(gs):.1f}) | {ups}/{k} | {below}/{k} |"
        )
    if connected:
        out.append(
            f"\nOver the {connected} paths on which ns-3's connection opened: ns-3 gave up {ns_up} times, tpsim "
            f"{expected_up:.1f} times in expectation; ns-3's goodput sits on average above "
            f"{100 * below_total / (k * connected):.0f} % of tpsim's runs on the same paths."
        )
    return "\n".join(out)


def parse_seeds(s: str) -> List[int]:
    if "-" in s:
        a, b = s.split("-", 1)
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in s.split(",")]


ROWS = [
    ("data packets sent", "data_sent", "data_sent"),
    ("data packets received", "data_received", "data_received"),
    ("PDR", "pdr", "pdr"),
    ("PDR with ARP's drops counted as delivered, at most", "pdr_without_arp", "pdr_without_arp"),
    ("data packets lost", "lost", "lost"),
    ("dropped by ARP", "arp_drops", "drops_arp"),
    ("... of which at a lookup: pending queue full or neighbour dead (ns-3)", "arp_drop_queue_full", None),
    ("... of which held when the neighbour was declared dead (ns-3)", "arp_drop_no_reply", None),
    ("dropped: MAC retry limit", "mac_drop_retry_limit_data", "drops_mac_retry"),
    ("dropped: interface queue full / too old", "mac_queue", "drops_queue_all"),
    ("dropped: flushed at a link break (tpsim)", None, "drops_link_break"),
    ("dropped: no route", "no_route", "drops_no_route"),
    ("RREQ transmissions", "aodv_rreq_broadcast", "routing_rreq"),
    ("... sent by their originators (ns-3)", "rreq_originated", None),
    ("... of those with TTL 3 (a destination last known 1 hop away)", "rreq_originated_ttl3", None),
    ("RREP transmissions (HELLOs apart)", "aodv_rrep_unicast", "routing_rrep"),
    ("HELLO transmissions", "aodv_hello_broadcast", "routing_hello"),
    ("RERR transmissions", "rerr", "routing_rerr"),
    ("RREP-ACK transmissions", "aodv_rrep_ack_unicast", "routing_rrep_ack"),
    ("ARP frames (requests and replies)", "arp_frames", "arp_frames"),
]


def derive(ns: Dict[str, Any], tp: Dict[str, Any]) -> None:
    for r in (ns, tp):
        r["pdr"] = r["data_received"] / max(1, r["data_sent"])
        r["lost"] = r["data_sent"] - r["data_received"]
    ns["arp_drops"] = ns["arp_drop_queue_full"] + ns["arp_drop_no_reply"]
    by_ttl = ns.get("rreq_originated_by_ttl", {})
    ns["rreq_originated"] = sum(by_ttl.values())
    ns["rreq_originated_ttl3"] = by_ttl.get("3", 0)
    tp["arp_frames"] = tp["arp_requests"] + tp["arp_replies"]
    for r, drops in ((ns, ns["arp_drops"]), (tp, tp["drops_arp"])):
        r["pdr_without_arp"] = (r["data_received"] + drops) / max(1, r["data_sent"])
    ns["mac_queue"] = ns["mac_drop_failed_enqueue_data"] + ns["mac_drop_expired_lifetime_data"]
    ns["rerr"] = ns["aodv_rerr_unicast"] + ns["aodv_rerr_broadcast"]
    # A forwarder without a route drops the packet in Ipv4L3Protocol (DROP_NO_ROUTE); packets
    # that waited in AODV's queue for a discovery that failed go through its error callback
    # (DROP_ROUTE_ERROR).
    ns["no_route"] = ns["ip_drop_no_route"] + ns["ip_drop_route_error"]
    tp["drops_queue_all"] = tp["drops_queue"] + tp["drops_queue_timeout"]


def fmt(x: float, key: str) -> str:
    return f"{x:.3f}" if key.startswith("pdr") else f"{x:,.0f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", help="scale scenario sizes, e.g. 25,50,100,200")
    ap.add_argument("--speed", type=float, help="study C's MANET at this speed, m/s (8 background flows)")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--s1", action="store_true", help="study E's TCP MANET (s1_manet_tcp): one row per seed")
    ap.add_argument("--tpsim-seeds", type=int, default=1,
                    help="--s1: run tpsim this many times (seeds 101, 102, ...) on each of ns-3's paths")
    ap.add_argument("--paired", action="store_true",
                    help="--speed: tpsim on ns-3's node paths and background flows of each seed")
    ap.add_argument("--tpsim-set", action="append", default=[], metavar="KEY=VALUE",
                    help="a scenario key set on every tpsim run (repeatable)")
    ap.add_argument("--sim-time", type=float, default=None, help="simulated s (default 100; --s1: 900)")
    ap.add_argument("--ns3-dir", type=Path, default=None)
    a = ap.parse_args(argv)
    if bool(a.nodes) + (a.speed is not None) + a.s1 != 1:
        ap.error("give exactly one of --nodes, --speed and --s1")
    seeds = parse_seeds(a.seeds)
    TPSIM_SETS[:] = a.tpsim_set
    if a.paired and a.speed is None:
        ap.error("--paired goes with --speed")
    if a.s1:
        binary = build((a.ns3_dir or cn.ns3_dir_default()).resolve(), cn.CACHE)
        sim_time = a.sim_time or 900.0
        print(f"\ns1_manet_tcp, {sim_time:g} s (tpsim's times from 10-s bins of its goodput)\n")
        if a.tpsim_seeds > 1:
            print(s1_spread_table(binary, seeds, sim_time, a.tpsim_seeds))
        else:
            print(s1_table(binary, seeds, sim_time))
        return 0
    a.sim_time = a.sim_time or 100.0
    configs = [(int(n), None) for n in a.nodes.split(",")] if a.nodes else [(None, a.speed)]
    for n, speed in configs:
        key = f"s6_scale-n{n}" if n else f"s4_manet_cbr-v{speed:g}"
        if key not in cn.BENCHMARKS:
            known = sorted(k for k in cn.BENCHMARKS if k.startswith(("s6_scale-n", "s4_manet_cbr-v")))
            ap.error(f"no benchmark file for {key}: one of {', '.join(known)}")
    ns3_dir = (a.ns3_dir or cn.ns3_dir_default()).resolve()
    binary = build(ns3_dir, cn.CACHE)
    for n, speed in configs:
        args = ["--layout=s6", f"--nodes={n}"] if n else ["--layout=s4", f"--speed={speed:g}", "--bg=8"]
        args.append(f"--simTime={a.sim_time:g}")
        ns_runs, tp_runs = [], []
        for s in seeds:
            ns = ns3_run(binary, args, s, movement=a.paired)
            tp = tpsim_run(n, speed, s, a.sim_time, ns if a.paired else None)
            derive(ns, tp)
            ns_runs.append(ns)
            tp_runs.append(tp)
        title = f"s6_scale N = {n}" if n else f"s4_manet_cbr {speed:g} m/s" + (", tpsim on ns-3's paths and flows" if a.paired else "")
        print(f"\n{title}, {a.sim_time:g} s, seeds {a.seeds}: medians (tpsim / ns-3)\n")
        print("| | tpsim | ns-3 |\n| --- | --- | --- |")
        for label, nk, tk in ROWS:
            nv = statistics.median(r[nk] for r in ns_runs) if nk else None
            tv = statistics.median(r[tk] for r in tp_runs) if tk else None
            cells = [fmt(v, nk or tk) if v is not None else "—" for v in (tv, nv)]
            print(f"| {label} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
