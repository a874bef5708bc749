#!/usr/bin/env python3
"""tpsim and ns-3 side by side: one command that runs both simulators on the same scenarios
and writes a Markdown report of the comparison (by default ``benches/.cache/compare_ns3.md``).

    python benches/compare_ns3.py [--scenarios wired-udp] [--seeds 5] [--quick] [--doc FILE|-]

What it does, in order:

1. Makes (once) a virtual environment ``benches/.cache/ns3-venv`` with the ns-3 wheel
   ``ns3==3.44.post0`` from PyPI.
2. Builds the ns-3 programs the chosen scenarios need. The reference programs live outside
   this repository, in ``../shared/ns3`` next to the repository root (``--ns3-dir`` or
   ``$TPSIM_NS3_DIR`` override). If that folder is writable its own ``build.sh`` builds them
   into its ``bin/``; otherwise they are compiled into ``benches/.cache/ns3-build/bin`` with the
   same g++ command line as ``build.sh`` (the module list is read from ``build.sh``). A program
   of tpsim's own, ``benches/ns3/<name>.cc`` (looked for first), is always compiled into
   ``benches/.cache/ns3-build/bin`` with that command line and ``-I`` the shared folder (for
   its ``common.h``); nothing is written into the shared folder for it.
3. Runs every scenario ``--seeds`` times on each side, one process at a time, each under
   ``/usr/bin/time -v`` (peak RSS). ns-3 results are cached in
   ``benches/.cache/ns3-results`` per (scenario, program, arguments, seed, program sources,
   ns-3 version) because they take seconds to minutes; tpsim runs fresh every time.
4. Writes the report between ``<!-- compare_ns3:begin -->`` and ``<!-- compare_ns3:end -->``
   in the ``--doc`` file, by default ``benches/.cache/compare_ns3.md`` (created if missing;
   the section is added at the end if the markers are missing; nothing else in the file
   changes), atomically. Each scenario has its own block, so a run of some scenarios keeps
   the blocks of the others. ``--doc -`` prints the report instead. docs/benchmarks.md is
   maintained by hand: it takes the medians of the summary table from the report, and never
   receives a generated section.

``--quick`` runs 1 seed of a short simulation, to check the harness end to end in seconds
(once the venv and the programs are built); it prints the report instead of writing a file
unless ``--doc`` is given.

The model choices both sides share and what still differs are documented once, in
docs/models.md ("Matching ns-3"); each scenario's notes in the report point there.

Adding a scenario = adding a :class:`Benchmark` entry to :data:`BENCHMARKS` (and its tpsim
scenario file under ``benches/scenarios/``).

Standard library only; the tpsim side runs in a child process of this same Python
(``python compare_ns3.py tpsim-worker ...``), which must have tpsim installed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "benches" / ".cache"
#: tpsim's own ns-3 programs (``<name>.cc``), looked for before the shared folder's.
LOCAL_NS3 = REPO / "benches" / "ns3"
#: Where a full run writes its report when ``--doc`` is not given.
REPORT = CACHE / "compare_ns3.md"
NS3_WHEEL = "ns3==3.44.post0"
NS3_WHEEL_VERSION = NS3_WHEEL.split("==", 1)[1]
TIME_TOOL = "/usr/bin/time"

BEGIN = "<!-- compare_ns3:begin -->"
END = "<!-- compare_ns3:end -->"
SECTION_TITLE = "## tpsim and ns-3 side by side"
#: Opens the block of one scenario inside the section; the block runs to the next one or END.
BLOCK = "<!-- compare_ns3:scenario {key} -->"
BLOCK_RE = re.compile(r"^<!-- compare_ns3:scenario (\S+) -->$", re.MULTILINE)


# --------------------------------------------------------------------------------------
# The scenarios
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    """One scenario run on both sides.

    ``ns3_args`` and ``quick_ns3_args`` are the program's arguments without the seed (the
    harness adds ``--seed=S --run=1``); ``quick_tpsim_set`` are ``key=value`` overrides of
    the tpsim scenario file for ``--quick`` (the same short simulated time as
    ``quick_ns3_args``).
    """

    key: str
    title: str
    tpsim_scenario: str  # relative to the repository root
    ns3_program: str  # <name>.cc of benches/ns3 (looked for first) or of the shared ns-3 folder
    ns3_args: Tuple[str, ...]
    sim_time_s: float
    quick_ns3_args: Tuple[str, ...]
    quick_tpsim_set: Tuple[str, ...]
    quick_sim_time_s: float
    #: MAC frames are a meaningful measure (wireless); wired p2p links have none in ns-3.
    mac_frames: bool = False
    #: Model differences that explain metric differences (markdown, one paragraph each).
    notes: Tuple[str, ...] = ()
    #: Headline metrics may differ by this much (relative) before the table flags them.
    tolerance: float = 1e-3
    #: ``key=value`` overrides of the tpsim scenario file for the full run.
    tpsim_set: Tuple[str, ...] = ()
    #: Extra TOML (``[[flows]]`` tables) appended to the scenario file for one run:
    #: ``flows(seed, sim_time_s) -> text``. Random draws are made here with the seed, so the
    #: generated file is the same for the same seed. ``None``: the file is run as it is.
    tpsim_flows: Optional[Callable[[int, float], str]] = None
    #: Text replacements in the tpsim scenario file before the flows are appended (each old
    #: text must occur exactly once): what the drawn flows depend on, such as the node count,
    #: since a file is validated before ``set`` overrides apply.
    tpsim_replace: Tuple[Tuple[str, str], ...] = ()
    #: Where the headline flow metrics of ns-3 come from: the program's FlowMonitor block
    #: ``flowmon`` (every data flow) or ``main_flow`` (S4: the 0 -> 49 flow only).
    ns3_flows: str = "flowmon"
    #: tpsim flow indices of the headline metrics (``None``: every flow).
    tpsim_flows_idx: Optional[Tuple[int, ...]] = None
    #: TCP: packets = transport segments (retransmissions included, as FlowMonitor counts IP
    #: packets) and delay = ``net_delay_mean_s``; adds the application delivery ratio.
    tcp: bool = False
    #: Application message size, B (UDP: ns-3 app bytes of the headline flows = rx × size).
    app_size: Optional[int] = None
    #: Goodput = application bytes delivered · 8 / (sim time − this) on both sides;
    #: ``None`` keeps the wired scenario's per-direction definition.
    goodput_from_s: Optional[float] = None
    #: Mean number of other nodes within the carrier-sense range of a sender (from the layout);
    #: adds "time per MAC frame per receiver in carrier-sense range".
    cs_receivers: Optional[float] = None
    #: Scenarios of one family share a group (``--scenarios GROUP`` selects them all).
    group: str = ""
    #: Number of nodes (scale table).
    nodes: int = 0
    #: One-line configuration of both sides for the summary table.
    config: str = ""
    #: The queue-discipline dumbbell (``benches/ns3/dumbbell_aqm.cc``): its own measures
    #: (queueing delay at the bottleneck, the discipline's drops and marks) and metric rows.
    aqm: bool = False
    #: Measure keys the tolerance is judged on (``None``: every headline metric).
    judged: Optional[Tuple[str, ...]] = None
    #: ``(measure key, tolerance)`` pairs for judged measures whose tolerance is not
    #: ``tolerance`` (the BBR rows judge mean RTT within 15 %, goodput within 10 %).
    tolerances: Tuple[Tuple[str, float], ...] = ()

    def tolerance_of(self, key: str) -> float:
        """The relative difference measure ``key`` may show before it is flagged."""
        return dict(self.tolerances).get(key, self.tolerance)


# --------------------------------------------------------------------------------------
# Wireless scenarios: flows drawn per seed, layouts
# --------------------------------------------------------------------------------------


def _secs(x: float) -> str:
    """A duration for a scenario file, to the microsecond."""
    return f"{x:.6f}".rstrip("0").rstrip(".") + "s"


def _flow_toml(src: int, dst: int, transport: str, app: str, tcp: str = "") -> str:
    lines = ["", "[[flows]]", f"src = {src}", f"dst = {dst}", f'transport = "{transport}"', f"app = {{ {app} }}"]
    if tcp:
        lines.append(f"tcp = {{ {tcp} }}")
    return "\n".join(lines) + "\n"


def _rng(name: str, seed: int) -> random.Random:
    """The harness's own random stream for scenario ``name`` and ``seed`` (the same flows
    for the same seed on every machine and Python version)."""
    return random.Random(f"{name}:{seed}")


def random_pairs_flows(name: str, n: int, count: int, start_lo: float, start_hi: float, app: str) -> Callable[[int, float], str]:
    """``count`` UDP flows between random distinct pairs of ``n`` nodes, starting
    U[start_lo, start_hi] s, drawn as ns-3's S4/S6 programs draw theirs (source uniform,
    destination uniform among the others). A flow that would start at or after the end of
    the run is left out: it sends nothing (as in ns-3, where FlowMonitor never sees it)."""

    def flows(seed: int, sim_time_s: float) -> str:
        rng = _rng(name, seed)
        out = []
        for _ in range(count):
            s = rng.randrange(n)
            d = rng.randrange(n - 1)
            d = d + 1 if d >= s else d
            start = rng.uniform(start_lo, start_hi)
            if start < sim_time_s:
                out.append(_flow_toml(s, d, "udp", f'kind = "cbr", {app}, start = "{_secs(start)}"'))
        return "".join(out)

    return flows


S2_TCP = 'mss = "536B", initial_window = 10, delayed_ack = "200ms", delayed_ack_segments = 2, timestamps = true, send_buffer = "128KiB", receive_window = "65535B", nagle = false, min_rto = "1s", syn_attempts = 6, data_retries = 6, syn_rto = "3s"'


def s2_flows(transport: str, interval_s: float) -> Callable[[int, float], str]:
    """The 48 sensors (nodes 8..55) report 256 B to the sink every I s from U[1, 1 + I] s."""

    def flows(seed: int, sim_time_s: float) -> str:
        rng = _rng(f"s2_wsn-{transport}-I{interval_s:g}", seed)
        out = []
        for src in range(8, 56):
            start = 1.0 + rng.uniform(0.0, interval_s)
            if start < sim_time_s:
                app = f'kind = "cbr", size = "256B", interval = "{_secs(interval_s)}", start = "{_secs(start)}"'
                out.append(_flow_toml(src, 0, "tcp-newreno" if transport == "tcp" else "udp", app,
                                      S2_TCP if transport == "tcp" else ""))
        return "".join(out)

    return flows


def grid_neighbours(n: int, spacing_m: float = 200.0, range_m: float = 250.0) -> float:
    """Mean number of other nodes within ``range_m`` of a node of S6's grid (ceil(sqrt(n))
    columns, filled row by row): the receivers in carrier-sense range of a sender."""
    cols = math.ceil(math.sqrt(n))
    pos = [((i % cols) * spacing_m, (i // cols) * spacing_m) for i in range(n)]
    total = 0
    for i, (x, y) in enumerate(pos):
        total += sum(1 for j, (u, v) in enumerate(pos) if j != i and math.hypot(x - u, y - v) <= range_m)
    return total / n


WIRELESS_NOTES: Tuple[str, ...] = (
    "Shared by both sides (the tpsim file's header comment; docs/models.md, \"Matching ns-3\"): 802.11b DSSS "
    "1 Mbit/s for DATA and control frames, long preamble, non-QoS ad hoc DCF, RTS/CTS off, a 50-packet "
    "interface queue with a 500 ms age limit (`queue_max_delay`), two-ray ground at 914 MHz with 1.5 m "
    "antennas and ns-2's power and receive threshold (250 m), carrier-sense range = decode range "
    "(`cs_range = \"250m\"`), SINR reception with DSSS bit error rates, 4 dB preamble detection and a 4 µs "
    "detection window (`reception = \"sinr\"`, `error_model = \"ber\"`, `preamble_detection_window`), "
    "ns-3's ARP cache (`[arp] preset = \"ns3\"`), AODV with HELLOs every 1 s as ns-3 runs it "
    "(`[routing] preset = \"ns3\"`), static or random-waypoint nodes started from the uniform placement.",
    "Still different (explained in docs/models.md, \"Matching ns-3\"): the random draws (node paths, "
    "back-offs, the harness-drawn flows) come from independent generators, so single seeds are not "
    "comparable: compare medians; ns-3's MAC queue is FIFO, tpsim's serves routing packets first; a signal "
    "whose preamble ns-3 does not detect makes its medium busy only above −62 dBm, tpsim's carrier sense "
    "counts every signal above its threshold; ns-3 routes AODV's own unicast messages (RREPs, RERRs, "
    "RREP-ACKs) through its IP layer, which may start a route discovery to the neighbour, tpsim hands them "
    "to the link layer; ns-3 asks for RREP-ACKs when an intermediate node answers for a one-hop "
    "destination, tpsim asks for none. `benches/ns3_census.py` counts both sides' AODV messages, ARP frames "
    "and data losses by cause.",
    "Measurement points: ns-3's FlowMonitor counts IP packets of the data flows (delay IP send → IP "
    "receive); tpsim counts application messages (UDP: the same packets) at the transport. Goodput "
    "on both sides is application bytes delivered · 8 / the stated interval. Routing packets: "
    "AODV control packets transmitted, every hop counted (ns-3: trace on the AODV socket port; "
    "tpsim `routing_packets`). MAC frames: frames put on the air, DATA, ACK, broadcasts and "
    "retries (ns-3: PHY TxBegin; tpsim `mac_frames`).",
    "Events are not comparable: ns-3's YansWifiChannel schedules a receive event for every PHY in the "
    "network per frame, tpsim only for the radios within carrier-sense range; compare wall time per MAC "
    "frame. Process wall time and RSS include start-up: ns-3's shared libraries; tpsim's Python, polars "
    "and the result tables.",
)


def wireless_benchmarks() -> List[Benchmark]:
    """S1, S4, S2 and S6 of the shared ns-3 programs (shared/ns3/README.md)."""
    out: List[Benchmark] = []
    out.append(Benchmark(
        key="s1_manet_tcp",
        title="study E: 50-node MANET (1500×1500 m, random waypoint U[1,2] m/s), AODV, TCP NewReno bulk 0→49",
        tpsim_scenario="benches/scenarios/s1_manet_tcp.toml",
        ns3_program="s1_manet_tcp",
        ns3_args=("--minSpeed=1", "--maxSpeed=2", "--simTime=900"),
        sim_time_s=900.0,
        quick_ns3_args=("--minSpeed=1", "--maxSpeed=2", "--simTime=5", "--start=1"),
        quick_tpsim_set=("simulation.duration=5s", "flows.0.app.start=1s"),
        quick_sim_time_s=5.0,
        mac_frames=True, tcp=True, goodput_from_s=10.0, tolerance=0.10, group="s1_manet_tcp", nodes=50,
        config="50 nodes, 1500×1500 m, RWP U[1,2] m/s pause 0, AODV+HELLO, 802.11b 1 Mbit/s, TCP NewReno bulk 0→49 from 10 s, MSS 1340 B, 900 s",
        notes=WIRELESS_NOTES + (
            "TCP on both sides: NewReno without SACK, MSS 1340 B, initial window 10 segments, delayed ACK "
            "every 2 segments / 200 ms, 128 KiB send buffer, no Nagle, minimum RTO 1 s, RFC 7323 timestamps. "
            "Still different: ns-3 advertises a 128 KiB receive window (window scaling), tpsim at most "
            "65,535 B. Packets and PDR count TCP data segments, retransmissions included (tpsim "
            "`tx_segments`/`rx_segments`, ns-3 FlowMonitor); the delay rows are not comparable under loss "
            "(tpsim's `net_delay_mean_s` includes retransmission waits, FlowMonitor times each IP "
            "transmission). Goodput = bytes delivered to the sink · 8 / 890 s (ns-3 `goodput_kbps`, tpsim "
            "`rx_bytes`).",
            "Both sides abandon the connection after 6 SYN transmissions (3 s timeout, doubled) or 6 "
            "retransmission timeouts in a row, and neither reconnects (ns-3 `ConnCount`, `ConnTimeout`, "
            "`DataRetries`; tpsim `syn_attempts`, `syn_rto`, `data_retries`). In this sparse network (mean "
            "degree ≈ 4.4) a route outage of a few minutes ends the connection for the rest of the run (the "
            "flow's `gave_up` column), so the goodput medians hinge on how many seeds keep a live "
            "connection, and the event-loop times compare different amounts of work: compare the time per "
            "MAC frame.",
        ),
    ))
    for v in (5, 10, 20):
        out.append(Benchmark(
            key=f"s4_manet_cbr-v{v}",
            title=f"study C: 50-node MANET (1000×1000 m, random waypoint {v} m/s), AODV, CBR 0→49 + 8 background CBR flows",
            tpsim_scenario="benches/scenarios/s4_manet_cbr.toml",
            ns3_program="s4_manet_cbr",
            ns3_args=(f"--speed={v}", "--bg=8", "--simTime=500"),
            sim_time_s=500.0,
            quick_ns3_args=(f"--speed={v}", "--bg=8", "--simTime=5", "--start=1"),
            quick_tpsim_set=(f'nodes.mobility.speed=["{v}m/s", "{v}m/s"]', "simulation.duration=5s", "flows.0.app.start=1s"),
            quick_sim_time_s=5.0,
            tpsim_set=(f'nodes.mobility.speed=["{v}m/s", "{v}m/s"]',),
            tpsim_flows=random_pairs_flows(f"s4_manet_cbr-v{v}", 50, 8, 1.0, 10.0, 'size = "1000B", rate = "0.01Mbps"'),
            ns3_flows="main_flow", tpsim_flows_idx=(0,), app_size=1000, goodput_from_s=10.0,
            mac_frames=True, tolerance=0.10, group="s4_manet_cbr", nodes=50,
            config=f"50 nodes, 1000×1000 m, RWP {v} m/s pause 0, AODV+HELLO, 802.11b 1 Mbit/s, CBR 1000 B @ 0.01 Mbit/s 0→49 from 10 s + 8 background, 500 s",
            notes=WIRELESS_NOTES + (
                "Flows: the main flow 0→49 (1000 B every 0.8 s from 10 s) gives the headline packets, PDR, "
                "delay and goodput (bytes delivered · 8 / 490 s); the all-flows PDR adds the 8 background "
                "flows. The background pairs and starts (U[1, 10] s) are drawn per seed by the harness, "
                "so they differ from ns-3's draws (a comparison of medians over seeds). Speed is constant "
                "(`speed = [v, v]`, ns-3 `ConstantRandomVariable`).",
            ),
        ))
    for transport in ("udp", "tcp"):
        for interval in (1, 10):
            out.append(Benchmark(
                key=f"s2_wsn-{transport}-I{interval}",
                title=f"study A: 56-node sensor field, 48 sensors → sink, 256 B every {interval} s over {transport.upper()}",
                tpsim_scenario="benches/scenarios/s2_wsn.toml",
                ns3_program="s2_wsn",
                ns3_args=(f"--transport={transport}", f"--interval={interval}", "--simTime=100"),
                sim_time_s=100.0,
                quick_ns3_args=(f"--transport={transport}", f"--interval={interval}", "--simTime=5"),
                quick_tpsim_set=("simulation.duration=5s",),
                quick_sim_time_s=5.0,
                tpsim_flows=s2_flows(transport, float(interval)),
                app_size=256, goodput_from_s=0.0, tcp=transport == "tcp",
                mac_frames=True, tolerance=0.10, group="s2_wsn", nodes=56,
                config=f"56 nodes (8×7 grid in 800×400 m), sink+gateways 150 m, sensors 60 m, AODV+HELLO, 802.11b 1 Mbit/s, 48 × 256 B / {interval} s over {transport.upper()}, 100 s",
                notes=WIRELESS_NOTES + (
                    "Ranges: both sides keep the 250 m receive threshold and lower the transmit power per "
                    "node (ns-3 15.63 dBm / 2.86 dBm; tpsim `node_ranges` 150 m for nodes 0–7, `tx_range` "
                    "60 m for the others), so links are asymmetric: a gateway reaches sensors that cannot "
                    "answer, and AODV hellos install routes that do not work (ns-3 README, S2: 5 sensors "
                    "never deliver). Each sensor's first report is at U[1, 1+I] s, drawn by the harness "
                    "from the seed (explicit `[[flows]]`, not `[sensors]`, whose staggering is regular).",
                    "Goodput = application bytes delivered to the sink · 8 / 100 s on both sides (ns-3 "
                    "PacketSink bytes).",
                ) + ((
                    "TCP: 48 connections to the sink, opened by a three-way handshake at each sensor's "
                    "start, each 256 B write one segment; on both sides segment size 536 B, initial window 10, "
                    "delayed ACK every 2 segments or 200 ms (tpsim `delayed_ack_segments = 2`), RFC 7323 "
                    "timestamps, no Nagle, and a connection abandoned after 6 SYN transmissions (3 s timeout, "
                    "doubled) or 6 retransmission timeouts in a row (ns-3 `ConnCount`, `ConnTimeout`, "
                    "`DataRetries`; tpsim `syn_attempts`, `syn_rto`, `data_retries`). Packets and PDR count "
                    "data segments, retransmissions included (FlowMonitor vs tpsim `tx_segments`/"
                    "`rx_segments`); the application delivery ratio (bytes delivered / bytes written) is the "
                    "comparable end-to-end measure. The delay rows are not comparable under loss (tpsim's "
                    "`net_delay_mean_s` includes retransmission waits; FlowMonitor times each IP transmission).",
                ) if transport == "tcp" else ()),
            ))
    for n, sim in ((25, 100.0), (50, 100.0), (100, 100.0), (200, 100.0), (400, 10.0), (800, 10.0)):
        nflows = max(1, n // 5)
        out.append(Benchmark(
            key=f"s6_scale-n{n}",
            title=f"scale: {n} static nodes on a 200 m grid, AODV, {nflows} CBR flows of 512 B at 4 packets/s",
            tpsim_scenario="benches/scenarios/s6_scale.toml",
            ns3_program="s6_scale",
            ns3_args=(f"--nodes={n}", f"--simTime={sim:g}"),
            sim_time_s=sim,
            quick_ns3_args=(f"--nodes={n}", "--simTime=3"),
            quick_tpsim_set=("simulation.duration=3s",),
            quick_sim_time_s=3.0,
            tpsim_replace=(("count = 25\n", f"count = {n}\n"), ('duration = "100s"', f'duration = "{sim:g}s"')),
            tpsim_flows=random_pairs_flows(f"s6_scale-n{n}", n, nflows, 1.0, 11.0, 'size = "512B", interval = "250ms"'),
            app_size=512, goodput_from_s=0.0, mac_frames=True, tolerance=0.10,
            cs_receivers=grid_neighbours(n), group="s6_scale", nodes=n,
            config=f"{n} static nodes, 200 m grid ({math.ceil(math.sqrt(n))} columns), AODV+HELLO, 802.11b 1 Mbit/s, {nflows} × 512 B @ 4 pkt/s, {sim:g} s",
            notes=WIRELESS_NOTES + (
                f"Grid: {math.ceil(math.sqrt(n))} columns, 200 m apart, filled row by row on both sides; with "
                f"250 m range each node hears only its grid neighbours (diagonal 283 m): "
                f"{grid_neighbours(n):.2f} receivers in carrier-sense range per sender on average. Flow "
                "pairs and starts (U[1, 11] s) are drawn per seed by the harness, so they differ from "
                "ns-3's. Goodput = application bytes delivered · 8 / simulated time."
                + (" With 10 s simulated the run is mostly AODV route discovery (flows start up to 11 s)."
                   if sim < 100 else "")
                + (" Most of ns-3's lost packets here are ARP drops (docs/models.md, ARP); "
                   f"`benches/ns3_census.py --nodes {n}` counts the losses by cause on both sides."
                   if sim >= 100 else ""),
            ),
        ))
    return out


def wired_benchmark(transport: str, flows: int, notes: Tuple[str, ...]) -> Benchmark:
    """Study D on the wired link over ``transport`` (``s5_wired_voip``, 1000 s; ``--quick``:
    10 s), with the tpsim file ``benches/scenarios/wired-voip-<transport>-1000s.toml`` and its
    ``flows`` flows stopped with the quick run."""
    return Benchmark(
        key=f"wired-{transport}",
        title=f"study D wired VoIP over {transport.upper()}",
        tpsim_scenario=f"benches/scenarios/wired-voip-{transport}-1000s.toml",
        ns3_program="s5_wired_voip",
        ns3_args=(f"--transport={transport}", "--simTime=1000"),
        sim_time_s=1000.0,
        quick_ns3_args=(f"--transport={transport}", "--simTime=10"),
        quick_tpsim_set=("simulation.duration=10s", *(f"flows.{i}.app.stop=10s" for i in range(flows))),
        quick_sim_time_s=10.0,
        tcp=transport == "tcp",
        notes=notes,
    )


#: The dumbbell's link and data packets (benches/scenarios/dumbbell-aqm.toml,
#: benches/ns3/dumbbell_aqm.cc): one-way delay, rate, and a data packet on the wire (1448 B of
#: payload + 20 TCP + 12 timestamp option + 20 IPv4 + 2 PPP).
DUMBBELL_DELAY_S = 0.020
DUMBBELL_RATE_BPS = 10e6
DUMBBELL_WIRE_B = 1502
DUMBBELL_SERIALIZATION_S = DUMBBELL_WIRE_B * 8 / DUMBBELL_RATE_BPS
#: The dumbbell's segment size (payload of a data packet), B.
DUMBBELL_MSS_B = 1448
#: (ns-3 --qdisc, limit in packets, tpsim `links.0.aqm` table without its closing brace):
#: ns-3.44's defaults (CoDel's 1,500,000 B = 1000 packets of 1500 B; DropTail: the limit of
#: the tpsim rows is `links.0.queue`).
DUMBBELL_QDISCS: Tuple[Tuple[str, int, str], ...] = (
    ("droptail", 100, 'kind = "droptail"'),
    ("red", 25, 'kind = "red", limit = 25'),
    ("codel", 1000, 'kind = "codel", limit = 1000'),
    ("fqcodel", 10240, 'kind = "fq-codel", limit = 10240, quantum = "1502B"'),
    ("pie", 25, 'kind = "pie", limit = 25'),
)
#: ns-3 --cc -> the tpsim transport with the same window rules and SACK recovery.
DUMBBELL_CC = {"cubic": "tcp-cubic", "newreno": "tcp-sack", "bbr": "tcp-bbr", "vegas": "tcp-vegas",
               "westwoodplus": "tcp-westwood-plus"}
#: ns-3 --cc -> its name in titles, and in the one-line configuration.
DUMBBELL_CC_NAMES = {"cubic": "CUBIC", "newreno": "NewReno", "bbr": "BBR", "vegas": "Vegas",
                     "westwoodplus": "Westwood+"}
DUMBBELL_CC_CONFIG = {"cubic": "CUBIC", "newreno": "NewReno+SACK", "bbr": "BBR v1, paced",
                      "vegas": "Vegas (α 2, β 4, γ 1)", "westwoodplus": "Westwood+ (Tustin filter)"}
DUMBBELL_NOTES: Tuple[str, ...] = (
    "Both sides (benches/scenarios/dumbbell-aqm.toml and benches/ns3/dumbbell_aqm.cc, whose header "
    "comments list every setting): 2 nodes, full-duplex 10 Mbit/s, 20 ms, MTU 1500 B, PPP framing; the "
    "discipline on both directions with ns-3.44's defaults and limits (DropTail 100, RED 25, CoDel 1000, "
    "FQ-CoDel 10240, PIE 25 packets; FQ-CoDel's quantum one packet: ns-3 the device MTU 1500 B, tpsim "
    "`quantum = \"1502B\"` as its sizes count the PPP field; ns-3's RED told the link's rate and delay); "
    "bulk TCP 0→1 from 0.1 s (the second flow from 0.2 s), MSS 1448 B (1500-B IP packets with the "
    "timestamp option), initial window 10, delayed ACK every 2 segments or 200 ms, SACK, timestamps, "
    "window scaling, 4 MiB buffers, no Nagle, minimum RTO 1 s. CUBIC: ns-3 TcpCubic (HyStart off), tpsim "
    "`tcp-cubic`; NewReno: ns-3 TcpNewReno, tpsim `tcp-sack` (NewReno's window rules with RFC 6675 "
    "recovery), both recovering with SACK: ns-3 TcpClassicRecovery (cwnd = ssthresh, pipe-limited "
    "sending; PRR is its default), limited transmit off (tpsim has none).",
    "Measures. Goodput = application bytes delivered by 60 s · 8 / (60 s − the flow's start), summed over "
    "the flows (ns-3 PacketSink bytes, tpsim `goodput_kbps`). Queueing delay at the bottleneck, the wait "
    "from the discipline's enqueue to the start of transmission: ns-3 the qdisc sojourn plus the wait in "
    "the 1-packet device queue of node 0's transmitted packets (the qdisc part alone is a row of its "
    "own); tpsim the data packets' one-way delay (`packet_delay_mean_s`, each packet from its own send) − "
    "20 ms − 1.2016 ms (serialization of 1502 B). The time-average queue (tpsim `queue_packets`, the "
    "discipline's and the device queue's packets; ns-3 the qdisc's PacketsInQueue plus the device queue's) "
    "checks it through Little's law. Drops and marks are the discipline's (tpsim `drops_queue` + "
    "`drops_aqm_*`, `ecn_marks`; ns-3 QueueDisc statistics of node 0).",
    "CUBIC's slow start counts bytes on both sides (ns-3's TcpCubic adds the segments each ACK "
    "acknowledges; tpsim `tcp.byte_counting = true`, RFC 3465 with L = 2 SMSS, the same with delayed ACKs "
    "of 2 segments).",
    "Still different by construction: ns-3's TcpCubic is the Linux 2.6 algorithm (growth counted in ACKs "
    "towards a target one minimum RTT ahead, at most one segment per two acknowledged, no Reno-friendly "
    "region); tpsim's follows RFC 9438. With two flows under CoDel tpsim's queue is shorter (5.2 against "
    "6.4 packets on average) at the same goodput. After the slow-start overshoot over DropTail, RED and PIE "
    "(cwnd about twice what the path holds) tpsim's SACK recovery ends in retransmission timeouts (2 in "
    "the first 2 s with DropTail) and ns-3's does not, so tpsim counts more drops and retransmissions in "
    "those rows; the \"from 5 s\" columns leave the start-up out. PIE: ns-3 holds the "
    "probability at 0 during its first burst allowance, tpsim updates it (RFC 8033 §4.4). RED: ns-3 "
    "keeps its count after a forced drop, tpsim restarts it; with a 25-packet limit the average never "
    "reaches 2 max_th = 30, so there are no forced drops.",
)

DUMBBELL_CC_NOTES: Tuple[str, ...] = (
    "Both sides (benches/scenarios/dumbbell-aqm.toml or dumbbell-aqm-2flows.toml and "
    "benches/ns3/dumbbell_aqm.cc, whose header comments list every setting): the `dumbbell_aqm` "
    "dumbbell, 2 nodes, full-duplex 10 Mbit/s, 20 ms, MTU 1500 B, PPP framing, DropTail 100 or CoDel "
    "1000 packets (ns-3.44's defaults: target 5 ms, interval 100 ms) on both directions above a "
    "1-packet device queue; bulk TCP 0→1 from 0.1 s (the second flow from 0.2 s), MSS 1448 B (1500-B "
    "IP packets with the timestamp option), initial window 10, initial ssthresh unlimited, delayed ACK "
    "every 2 segments or 200 ms, SACK, timestamps, window scaling, 4 MiB buffers, no Nagle, minimum RTO "
    "1 s, limited transmit off. BBR: ns-3 TcpBbr (BBR v1) with its ns-3.44 defaults (high gain 2.89, "
    "PROBE_BW cwnd gain 2 and pacing gains 5/4, 3/4, 1 × 6, bandwidth filter 10 rounds, min-RTT window "
    "10 s, PROBE_RTT 200 ms at 4 segments, pacing 1 % below gain × bandwidth), tpsim `tcp-bbr`; both pace "
    "(ns-3 TcpSocketState::EnablePacing, which TcpBbr requires; its first 10 segments leave unpaced, "
    "PaceInitialWindow false). Vegas: ns-3 TcpVegas, tpsim `tcp-vegas`, α 2, β 4, γ 1 segments. "
    "Westwood+: ns-3 TcpWestwoodPlus with its Tustin filter, tpsim `tcp-westwood-plus`. Vegas and "
    "Westwood+ are not paced and recover as the `dumbbell_aqm` rows (ns-3 TcpClassicRecovery: "
    "cwnd = ssthresh, pipe-limited sending with SACK); ns-3's BBR sets cwnd itself in recovery "
    "(packet conservation for a round, then its model), without the recovery algorithm.",
    "Measures. Goodput, queueing delay, drops and retransmissions as in `dumbbell_aqm`. Mean RTT of the "
    "data flows: tpsim the senders' `rtt_mean_s` (the mean of each sender's RTT samples), the flows "
    "weighted by their samples (`rtt_samples` when the flows table has it, else `rx_segments`); ns-3 the "
    "mean of every RTT sample the senders' sockets took (the values handed to their RTT estimators: one "
    "per ACK that acknowledges the oldest timed segment, none from duplicate ACKs, the handshake's "
    "included), measured from the echoed timestamp and so in whole milliseconds (ns-3's timestamp clock "
    "counts ms); with delayed ACKs a sample includes the receiver's wait for the second segment. "
    "Judged: goodput within 10 % on every row; on the BBR rows also mean RTT within 15 %.",
    "ns-3.44 details the results depend on (its sources): TcpVegas and TcpWestwoodPlus are handed the "
    "smoothed RTT, not the sample, on every ACK (duplicate ACKs too). Vegas' BaseRTT and per-round "
    "minimum are therefore minima of the smoothed RTT, BaseRTT in effect the smoothed RTT of the first "
    "data ACK, just above the handshake's 40 ms; once per round (an ACK at or beyond the SND.NXT of the "
    "round's start, with more than 2 RTT values in the round) it computes, in whole segments, "
    "diff = cwnd − ⌊cwnd · BaseRTT / minRTT⌋: in slow start (1 segment per ACK, as NewReno) diff > γ "
    "ends it with cwnd = min(cwnd, ⌊…⌋ + 1); in congestion avoidance cwnd − 1 segment above β, + 1 below "
    "α; after a loss ssthresh = max(min(ssthresh, cwnd − 1 segment), 2 segments). A data RTT sample "
    "holds the 1.2-ms serialization and the receiver's 1.2-ms wait for the second segment of a delayed "
    "ACK, so with one flow ns-3's Vegas leaves slow start at 22 segments, settles at 20 (diff = 2 "
    "through the truncation) and never fills the 10 Mbit/s path: 5.45 Mbit/s with an empty queue, the "
    "same under CoDel. Westwood+ samples the bandwidth once per smoothed RTT (segments acknowledged × "
    "1448 B over that RTT, Tustin-filtered from 0) and sets ssthresh to max(2 segments, filtered "
    "bandwidth × the connection's smallest smoothed RTT). ns-3's BBR takes its minimum RTT from the "
    "RTT samples (whole ms), starting from the smoothed RTT when the connection opens (the handshake's "
    "40 ms); on leaving fast recovery ns-3 sets cwnd to ssthresh, which BBR never lowers (the in-flight "
    "target it set when DRAIN began), before BBR's own cwnd update of the same ACK.",
)


def dumbbell_benchmark(qdisc: str, limit: int, aqm: str, cc: str, flows: int, ecn: bool,
                       group: str = "dumbbell_aqm") -> Benchmark:
    """One row of the queue-discipline dumbbell: ``dumbbell_aqm --qdisc=... --cc=... --flows=...``
    beside ``benches/scenarios/dumbbell-aqm[-2flows].toml`` with the same discipline and TCP.
    ``group`` ``dumbbell_aqm`` compares the disciplines (rows ``dumbbell-...``: goodput and
    queueing delay judged within 10 %); ``dumbbell_cc`` the congestion controls BBR, Vegas and
    Westwood+ (rows ``dumbbell-cc-...``: goodput judged within 10 %, BBR's mean RTT within 15 %)."""
    cc_group = group == "dumbbell_cc"
    key = ("dumbbell-cc-" if cc_group else "dumbbell-") + f"{qdisc}-{cc}-{flows}f" + ("-ecn" if ecn else "")
    sets = [f"links.0.aqm={{ {aqm}{', ecn = true' if ecn else ''} }}"]
    if qdisc == "droptail":
        sets.append(f"links.0.queue={limit}")
    for i in range(flows):
        sets.append(f"flows.{i}.transport={DUMBBELL_CC[cc]}")
        if ecn:
            sets.append(f"flows.{i}.tcp.ecn=true")
        if cc == "cubic":
            # ns-3's TcpCubic grows cwnd in slow start by the segments each ACK acknowledges.
            sets.append(f"flows.{i}.tcp.byte_counting=true")
    args = (f"--qdisc={qdisc}", f"--limit={limit}", f"--cc={cc}", f"--flows={flows}", f"--ecn={int(ecn)}")
    name = {"droptail": "DropTail", "red": "RED", "codel": "CoDel", "fqcodel": "FQ-CoDel", "pie": "PIE"}[qdisc]
    if cc_group:
        judged: Tuple[str, ...] = ("goodput_kbps", "rtt_ms") if cc == "bbr" else ("goodput_kbps",)
        tolerances: Tuple[Tuple[str, float], ...] = (("rtt_ms", 0.15),) if cc == "bbr" else ()
        notes = DUMBBELL_CC_NOTES
    else:
        judged, tolerances, notes = ("goodput_kbps", "qdelay_ms"), (), DUMBBELL_NOTES
    return Benchmark(
        key=key,
        title=(f"dumbbell 10 Mbit/s, 20 ms, {name} {limit} packets{' with ECN' if ecn else ''}, "
               f"{flows} bulk TCP {DUMBBELL_CC_NAMES[cc]} flow{'s' if flows > 1 else ''}"),
        tpsim_scenario="benches/scenarios/dumbbell-aqm.toml" if flows == 1 else "benches/scenarios/dumbbell-aqm-2flows.toml",
        ns3_program="dumbbell_aqm",
        ns3_args=(*args, "--simTime=60"),
        sim_time_s=60.0,
        quick_ns3_args=(*args, "--simTime=10"),
        quick_tpsim_set=("simulation.duration=10s",),
        quick_sim_time_s=10.0,
        tpsim_set=tuple(sets),
        tcp=True, aqm=True, tolerance=0.10, judged=judged, tolerances=tolerances, group=group, nodes=2,
        config=(f"2 nodes, 10 Mbit/s, 20 ms, {name} (limit {limit}{', ECN' if ecn else ''}), {flows} × bulk TCP "
                f"{DUMBBELL_CC_CONFIG[cc]} 0→1, MSS 1448 B, IW 10, 60 s"),
        notes=notes,
    )


def dumbbell_benchmarks() -> List[Benchmark]:
    """Every discipline × {CUBIC, NewReno} × {1, 2 flows}, then the AQMs with ECN (1 flow)."""
    out = [dumbbell_benchmark(q, lim, aqm, cc, n, False)
           for q, lim, aqm in DUMBBELL_QDISCS for cc in ("cubic", "newreno") for n in (1, 2)]
    out += [dumbbell_benchmark(q, lim, aqm, cc, 1, True)
            for q, lim, aqm in DUMBBELL_QDISCS if q != "droptail" for cc in ("cubic", "newreno")]
    return out


#: The congestion controls of the `dumbbell_cc` group (ns-3 --cc), and its disciplines.
DUMBBELL_CC_ROWS = ("bbr", "vegas", "westwoodplus")
DUMBBELL_CC_QDISCS = ("droptail", "codel")


def dumbbell_cc_benchmarks() -> List[Benchmark]:
    """BBR, Vegas and Westwood+ over DropTail 100 and CoDel 1000, 1 and 2 flows (no ECN)."""
    return [dumbbell_benchmark(q, lim, aqm, cc, n, False, group="dumbbell_cc")
            for q, lim, aqm in DUMBBELL_QDISCS if q in DUMBBELL_CC_QDISCS
            for cc in DUMBBELL_CC_ROWS for n in (1, 2)]


BENCHMARKS: Dict[str, Benchmark] = {
    b.key: b
    for b in [
        wired_benchmark(
            "udp",
            flows=1,
            notes=(
                "Same model on both sides: 2 nodes, full-duplex 256 kbit/s, 50 ms, DropTail 50 "
                "packets per direction (ns-3's qdisc removed), two-way 128 B every 20 ms from "
                "0.1 s to the end, 158 B on the wire (UDP 8 + IPv4 20 + PPP 2), no ARP on "
                "either side (ns-3's point-to-point device uses none), the run ends at the "
                "stop time so 2 packets per direction are still on the link (PDR < 1 on both "
                "sides). There is no randomness, so every seed gives the same metrics.",
                "Measurement points differ: ns-3's FlowMonitor measures at the IP layer (delay "
                "IP send → IP receive; throughput in IP bytes from a flow's first send to its "
                "last receive), tpsim at the application (delay send → delivery; goodput in "
                "payload bytes from start to stop time). On this idle link the delays are "
                "the same; the ns-3 goodput row is FlowMonitor's throughput scaled by "
                "application bytes / IP bytes (128/156), and its active time ends at the last "
                "receive (≈ 5 ms before tpsim's stop time), a 5·10⁻⁶ relative difference.",
                "Event counts differ by design: ns-3 executes about 4 events per packet, "
                "tpsim 3, and each side counts what its own scheduler runs. Compare wall time "
                "per delivered packet rather than events/s.",
                "Process wall time and peak RSS cover different start-up work: for ns-3 the "
                "program's shared libraries and the topology set-up; for tpsim the Python "
                "interpreter, importing tpsim and polars (most of its RSS), parsing and "
                "validating the scenario and building the result tables.",
            ),
        ),
        wired_benchmark(
            "tcp",
            flows=2,
            notes=(
                "Same link, sources and end of run as `wired-udp`; each direction is its own TCP "
                "connection (ns-3's two PeriodicSenders to ports 9 and 10; tpsim two `cbr` flows over "
                "`tcp-newreno`), opened at 0.1 s, TCP as ns-3's `SetupTcp(536)` leaves it on both "
                "sides: NewReno, SACK off, segment size 536 B, initial window 10, delayed ACK 200 ms, "
                "no Nagle, minimum RTO 1 s. The writes made during the handshake leave together "
                "(768 B in two segments), so a direction sends 49,991 data segments for 49,995 writes.",
                "Packets and PDR count TCP segments: tpsim's data segments (`tx_segments`, "
                "`rx_segments`, retransmissions included), FlowMonitor's IP packets of the two data "
                "directions (the SYN and the handshake's last ACK too, so 2 more per direction). "
                "Goodput is application bytes on both sides (tpsim `rx_bytes` over start to stop, "
                "ns-3 FlowMonitor's throughput scaled to application bytes as in `wired-udp`).",
                "TCP options: both sides send RFC 7323 timestamps on every segment (12 bytes with "
                "padding; tpsim `timestamps = true`), so a data segment is 128 + 32 + 20 + 2 = 182 B on "
                "the wire: one-way delay on the idle link 55.6875 ms, plus a little queueing behind the "
                "other connection's ACKs.",
                "Jitter is measured over different units: tpsim's over delivered messages, whose first "
                "six waited for the handshake (written from 0.1 s, sent together at ≈ 0.21 s), ns-3's over "
                "IP packets; those six early steps of up to 0.1 s make most of tpsim's 0.0023 ms.",
                "Delayed ACKs: both sides acknowledge every second segment whatever its size (ns-3 "
                "`DelAckCount` 2, tpsim `delayed_ack_segments = 2`): 24,994 pure ACKs per direction in "
                "tpsim (seed 1), 24,996 reverse IP packets per direction in ns-3 with its SYN-ACK. The ACKs "
                "share the link with the other connection's data, which gives both sides their small jitter.",
                "Event counts differ by design; compare wall time per delivered packet.",
            ),
        ),
    ] + wireless_benchmarks() + dumbbell_benchmarks() + dumbbell_cc_benchmarks()
}


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[compare_ns3] {msg}", file=sys.stderr, flush=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file in the same folder and a rename,
    keeping the permissions of an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_files(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def run_checked(cmd: Sequence[str], what: str, **kw: Any) -> subprocess.CompletedProcess:
    """Runs a command, raising with the tail of its output if it fails."""
    p = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if p.returncode != 0:
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-30:])
        raise RuntimeError(f"{what} failed (exit status {p.returncode}): {shlex.join(map(str, cmd))}\n{tail}")
    return p


def dir_writable(d: Path) -> bool:
    """True if ``d`` may be written: access granted *and* some write permission bit set (a
    folder marked read-only is respected even when running as root)."""
    try:
        st = d.stat()
    except OSError:
        return False
    return os.access(d, os.W_OK) and bool(st.st_mode & 0o222)


def parse_time_v(text: str) -> Dict[str, float]:
    """The fields of ``/usr/bin/time -v`` output the harness uses."""
    out: Dict[str, float] = {}
    pats = {
        "peak_rss_kb": r"Maximum resident set size \(kbytes\):\s*(\d+)",
        "user_s": r"User time \(seconds\):\s*([\d.]+)",
        "sys_s": r"System time \(seconds\):\s*([\d.]+)",
    }
    for k, pat in pats.items():
        m = re.search(pat, text)
        if m:
            out[k] = float(m.group(1))
    if "peak_rss_kb" not in out:
        raise RuntimeError(f"no 'Maximum resident set size' in /usr/bin/time output:\n{text[-500:]}")
    return out


def timed_process(cmd: Sequence[str], cwd: Path, what: str, env: Optional[Dict[str, str]] = None) -> Tuple[str, float, Dict[str, float]]:
    """Runs ``cmd`` under ``/usr/bin/time -v``; returns (stdout, wall seconds, time fields).
    The wall time is measured here (perf_counter around the child, finer than time's)."""
    with tempfile.TemporaryDirectory(prefix="compare_ns3.") as td:
        tfile = Path(td) / "time.txt"
        full = [TIME_TOOL, "-v", "-o", str(tfile), *cmd]
        t0 = time.perf_counter()
        p = subprocess.run(full, capture_output=True, text=True, cwd=cwd, env=env)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            tail = "\n".join(p.stderr.strip().splitlines()[-30:])
            raise RuntimeError(f"{what} failed (exit status {p.returncode}): {shlex.join(cmd)}\n{tail}")
        return p.stdout, wall, parse_time_v(tfile.read_text())


def last_json_line(stdout: str, what: str) -> Dict[str, Any]:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{what} printed no JSON line:\n{stdout[-500:]}")


def machine_info() -> Dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {
        "cores": os.cpu_count() or 1,
        "cpu": cpu,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load1": load,
    }


def gxx_version() -> str:
    try:
        return subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return "g++ (unknown version)"


# --------------------------------------------------------------------------------------
# ns-3: virtual environment, build, runs
# --------------------------------------------------------------------------------------


def ns3_dir_default() -> Path:
    env = os.environ.get("TPSIM_NS3_DIR")
    return Path(env) if env else REPO.parent / "shared" / "ns3"


def ensure_venv(cache: Path) -> Path:
    """The Python of ``cache/ns3-venv`` with the ns-3 wheel installed (created once)."""
    venv = cache / "ns3-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        log(f"creating {venv}")
        run_checked([sys.executable, "-m", "venv", str(venv)], "creating the ns-3 virtual environment")
    probe = "import importlib.metadata as m\ntry: print(m.version('ns3'))\nexcept m.PackageNotFoundError: print('')"
    have = subprocess.run([str(py), "-c", probe], capture_output=True, text=True).stdout.strip()
    if have != NS3_WHEEL_VERSION:
        log(f"installing {NS3_WHEEL} into {venv} (about 70 MB download, once)")
        run_checked([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", NS3_WHEEL], f"pip install {NS3_WHEEL}")
    return py


def wheel_paths(py: Path) -> Tuple[Path, Path, str]:
    """(include dir, lib dir, ns-3 library version) of the wheel seen by ``py``, found the
    way build.sh finds it."""
    code = (
        "import importlib.util, os\n"
        "s = importlib.util.find_spec('ns3')\n"
        "locs = list(s.submodule_search_locations or [])\n"
        "print(locs[0] if locs else os.path.dirname(s.origin))\n"
    )
    root = Path(run_checked([str(py), "-c", code], "locating the ns-3 wheel").stdout.strip())
    lib = root / "lib64"
    if not lib.is_dir():
        lib = root / "lib"
    ver = None
    for f in sorted(lib.iterdir()):
        m = re.fullmatch(r"libns3\.([0-9.]+)-core\.so", f.name)
        if m:
            ver = m.group(1)
            break
    if ver is None:
        raise RuntimeError(f"no libns3.<version>-core.so in {lib}")
    return root / "include", lib, ver


def build_modules(ns3_dir: Path) -> List[str]:
    """The ns-3 modules build.sh links against (its MODS line)."""
    m = re.search(r'^MODS="([^"]+)"', (ns3_dir / "build.sh").read_text(), re.MULTILINE)
    if not m:
        raise RuntimeError(f"cannot find the MODS=... line in {ns3_dir / 'build.sh'}")
    return m.group(1).split()


def is_local_program(program: str) -> bool:
    """Whether ``program`` is one of tpsim's own ns-3 programs (``benches/ns3/<program>.cc``)."""
    return (LOCAL_NS3 / f"{program}.cc").is_file()


def program_source(ns3_dir: Path, program: str) -> Path:
    """``<program>.cc``: in ``benches/ns3`` if it is there, else in the shared folder."""
    return LOCAL_NS3 / f"{program}.cc" if is_local_program(program) else ns3_dir / f"{program}.cc"


def program_sources(ns3_dir: Path, program: str) -> List[Path]:
    return [program_source(ns3_dir, program), ns3_dir / "common.h"]


def ensure_program(ns3_dir: Path, program: str, py: Path, cache: Path) -> Path:
    """Builds ``program`` if it is missing or stale and returns the binary.

    A stamp in the cache records what each binary was built from (sources, wheel, flags); a
    mismatch rebuilds. Only one compiler runs at a time.
    """
    inc, lib, ver = wheel_paths(py)
    cxxflags = os.environ.get("CXXFLAGS", "-O2")
    local = is_local_program(program)
    # build.sh only knows the shared folder's programs; tpsim's own are compiled into the cache.
    use_build_sh = not local and dir_writable(ns3_dir) and (
        not (ns3_dir / "bin").exists() or dir_writable(ns3_dir / "bin"))
    binary = (ns3_dir / "bin" / program) if use_build_sh else (cache / "ns3-build" / "bin" / program)
    where = hashlib.sha256(str(binary).encode()).hexdigest()[:8]
    stamp_path = cache / "ns3-build" / f"{program}-{where}.stamp.json"
    stamp = {
        "sources": sha256_files(program_sources(ns3_dir, program) + [ns3_dir / "build.sh"]),
        "wheel_lib": str(lib),
        "cxxflags": cxxflags,
        "binary": str(binary),
    }
    if binary.exists() and stamp_path.exists():
        try:
            old = json.loads(stamp_path.read_text())
        except ValueError:
            old = {}
        if old == {**stamp, "mtime_ns": binary.stat().st_mtime_ns}:
            return binary
    t0 = time.perf_counter()
    if use_build_sh:
        log(f"building {program} with {ns3_dir / 'build.sh'} (PYTHON={py})")
        env = {**os.environ, "PYTHON": str(py)}
        run_checked([str(ns3_dir / "build.sh"), program], f"build.sh {program}", env=env, cwd=ns3_dir)
    else:
        if local:
            log(f"compiling {program_source(ns3_dir, program)} into {binary.parent} with build.sh's g++ command line")
        else:
            log(f"{ns3_dir} is not writable: compiling {program} into {binary.parent} with build.sh's g++ command line")
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_name(binary.name + ".tmp")
        libs = [f"-lns3.{ver}-{m}" for m in build_modules(ns3_dir)]
        cmd = ["g++", *cxxflags.split(), "-std=c++20", f"-I{inc}", *([f"-I{ns3_dir}"] if local else []),
               "-o", str(tmp), str(program_source(ns3_dir, program)), f"-L{lib}", *libs, f"-Wl,-rpath,{lib}"]
        run_checked(cmd, f"compiling {program}", cwd=binary.parent)
        os.replace(tmp, binary)
    log(f"built {binary} in {time.perf_counter() - t0:.0f} s")
    if not binary.exists():
        raise RuntimeError(f"the build reported success but {binary} does not exist")
    atomic_write_text(stamp_path, json.dumps({**stamp, "mtime_ns": binary.stat().st_mtime_ns}, indent=1))
    return binary


def ns3_command(binary: Path, args: Sequence[str], seed: int) -> List[str]:
    return [str(binary), *args, f"--seed={seed}", "--run=1"]


def run_ns3(bench: Benchmark, binary: Path, ns3_dir: Path, args: Sequence[str], seed: int, cache: Path, fresh: bool,
            cached_only: bool = False) -> Optional[Dict[str, Any]]:
    """One ns-3 run (from the result cache unless ``fresh``); returns the record of one side
    and seed (see :func:`side_record`)."""
    result_key = bench.key
    key_blob = json.dumps(
        {
            "scenario": result_key,
            "program": bench.ns3_program,
            "args": list(args),
            "seed": seed,
            "run": 1,
            "sources": sha256_files(program_sources(ns3_dir, bench.ns3_program)),
            "wheel": NS3_WHEEL_VERSION,
            "cxxflags": os.environ.get("CXXFLAGS", "-O2"),
        },
        sort_keys=True,
    )
    key = hashlib.sha256(key_blob.encode()).hexdigest()[:16]
    path = cache / "ns3-results" / f"{result_key}-{bench.ns3_program}-seed{seed}-{key}.json"
    if path.exists() and not fresh:
        stored = json.loads(path.read_text())
        stored["cached"] = True
        return stored
    if cached_only:
        return None
    cmd = ns3_command(binary, args, seed)
    log(f"ns-3 {bench.key} seed {seed}: {shlex.join([bench.ns3_program, *cmd[1:]])}")
    load = machine_info()["load1"]
    stdout, wall, tv = timed_process(cmd, cwd=binary.parent, what=f"ns-3 {bench.ns3_program}")
    out = last_json_line(stdout, bench.ns3_program)
    rec = {
        "side": "ns-3",
        "seed": seed,
        "command": shlex.join([bench.ns3_program, *cmd[1:]]),
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load1_before": load,
        "process_wall_s": wall,
        **tv,
        "output": out,
    }
    atomic_write_text(path, json.dumps(rec, indent=1))
    rec["cached"] = False
    return rec


# --------------------------------------------------------------------------------------
# tpsim
# --------------------------------------------------------------------------------------


def tpsim_worker(argv: Sequence[str]) -> int:
    """``compare_ns3.py tpsim-worker SCENARIO SEED [KEY=VALUE ...]``: runs one replication
    with ``tpsim.run`` in this process and prints one JSON line."""
    scenario, seed, *sets = argv
    t0 = time.perf_counter()
    import tpsim

    t1 = time.perf_counter()
    res = tpsim.run(scenario, seed=int(seed), runs=1, jobs=1, set=list(sets) or None)
    t2 = time.perf_counter()
    out = {
        "tpsim_version": tpsim.__version__,
        "engine_seconds": res.engine_seconds[0],
        "import_s": t1 - t0,
        "run_call_s": t2 - t1,
        "flows": res.flows.to_dicts(),
        "network": res.network.to_dicts()[0],
        "queues": queue_means(res),
        "delivered": delivered_bins(res),
        "congestion": congestion_bins(res),
    }
    print(json.dumps(out))
    return 0


def queue_means(res: Any) -> List[Dict[str, Any]]:
    """Each link direction's queue over the run: its time-average (the mean of the
    ``queue_packets`` series over its bins) and, for runs of at most 1000 bins, the bins
    themselves (``bin_s``, ``bins``). Empty without ``[output] timeseries``."""
    import polars as pl

    ts = res.timeseries
    if ts is None or ts.height == 0:
        return []
    q = ts.filter((pl.col("series") == "queue_packets") & pl.col("link").is_not_null())
    if q.height == 0:
        return []
    out = []
    for (link, direction), g in sorted(q.group_by(["link", "direction"]), key=lambda kv: (kv[0][0], kv[0][1])):
        g = g.sort("time_s")
        rec: Dict[str, Any] = {"link": link, "direction": direction, "mean_packets": g["value"].mean()}
        if g.height <= 1000:
            times = g["time_s"].to_list()
            rec["bin_s"] = times[1] - times[0] if len(times) > 1 else None
            rec["bins"] = g["value"].to_list()
        out.append(rec)
    return out


def delivered_bins(res: Any) -> Dict[str, List[float]]:
    """Each flow direction's application bytes delivered by the end of each bin
    (``rx_bytes_cumulative``; ``"<flow>-<direction>"`` -> values), for runs of at most 1000
    bins; empty without ``[output] timeseries``."""
    import polars as pl

    ts = res.timeseries
    if ts is None or ts.height == 0:
        return {}
    c = ts.filter(pl.col("series") == "rx_bytes_cumulative")
    out = {}
    for (flow, direction), g in c.group_by(["flow", "direction"]):
        if g.height <= 1000:
            out[f"{flow}-{direction}"] = g.sort("time_s")["value"].to_list()
    return out


#: The senders' congestion series the worker hands over (:func:`congestion_bins`).
CONGESTION_SERIES = ("cwnd_bytes", "pacing_rate_bps")


def congestion_bins(res: Any) -> Dict[str, Dict[str, Any]]:
    """Each flow direction's congestion series of :data:`CONGESTION_SERIES` that its sender
    reports (``"<flow>-<direction>"`` -> ``{"bin_s": ..., series: values}``; a value per bin,
    sampled at the bin's start, ``None`` while the sender has none), for runs of at most 1000
    bins; empty without ``[output] timeseries``."""
    import polars as pl

    ts = res.timeseries
    if ts is None or ts.height == 0:
        return {}
    c = ts.filter(pl.col("series").is_in(list(CONGESTION_SERIES)) & pl.col("flow").is_not_null())
    out: Dict[str, Dict[str, Any]] = {}
    for (flow, direction, series), g in c.group_by(["flow", "direction", "series"]):
        if g.height > 1000:
            continue
        g = g.sort("time_s")
        times = g["time_s"].to_list()
        rec = out.setdefault(f"{flow}-{direction}", {})
        rec.setdefault("bin_s", times[1] - times[0] if len(times) > 1 else None)
        rec[series] = g["value"].to_list()
    return out


def tpsim_scenario_file(bench: Benchmark, seed: int, sim_time_s: float, cache: Path = CACHE) -> Path:
    """The scenario file tpsim runs for ``seed``: the benchmark's file itself, or (when the
    benchmark draws flows per seed) the file with its flows appended, written to
    ``cache/tpsim-scenarios/<key>-seed<S>-<sim time>.toml``."""
    base = REPO / bench.tpsim_scenario
    if bench.tpsim_flows is None:
        return base
    text = base.read_text(encoding="utf-8")
    for a, b in bench.tpsim_replace:
        if text.count(a) != 1:
            raise RuntimeError(f"{base}: expected {a!r} exactly once (benchmark {bench.key})")
        text = text.replace(a, b)
    text = text.rstrip("\n") + "\n\n# Flows drawn by benches/compare_ns3.py for this seed.\n"
    text += bench.tpsim_flows(seed, sim_time_s)
    path = cache / "tpsim-scenarios" / f"{bench.key}-seed{seed}-{sim_time_s:g}s.toml"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text)
    return path


def run_tpsim(bench: Benchmark, sets: Sequence[str], seed: int, quick: bool = False, cache: Path = CACHE) -> Dict[str, Any]:
    """One tpsim run in a child process (``tpsim-worker``) under ``/usr/bin/time -v``.
    ``sets`` are the quick overrides; the benchmark's own ``tpsim_set`` always applies."""
    sim_time = bench.quick_sim_time_s if quick else bench.sim_time_s
    scenario = tpsim_scenario_file(bench, seed, sim_time, cache)
    all_sets = [*bench.tpsim_set, *sets]
    cmd = [sys.executable, str(Path(__file__).resolve()), "tpsim-worker", str(scenario), str(seed), *all_sets]
    log(f"tpsim {bench.key} seed {seed}")
    load = machine_info()["load1"]
    stdout, wall, tv = timed_process(cmd, cwd=REPO, what="tpsim")
    out = last_json_line(stdout, "tpsim worker")
    shown_file = bench.tpsim_scenario
    if bench.tpsim_replace:
        shown_file += " with " + ", ".join(b.strip() for _, b in bench.tpsim_replace)
    if bench.tpsim_flows is not None:
        shown_file += f" + flows of seed {seed}"
    shown = ["tpsim.run(" + repr(shown_file), f"seed={seed}"] + ([f"set={all_sets!r}"] if all_sets else [])
    return {
        "side": "tpsim",
        "seed": seed,
        "command": ", ".join(shown) + ")",
        "scenario_file": str(scenario),
        "sim_time_s": sim_time,
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load1_before": load,
        "process_wall_s": wall,
        **tv,
        "output": out,
        "cached": False,
    }


# --------------------------------------------------------------------------------------
# Measures from one run (both sides in the same shape)
# --------------------------------------------------------------------------------------


def _weighted_mean(pairs: Sequence[Tuple[Optional[float], float]]) -> Optional[float]:
    num = sum(v * w for v, w in pairs if v is not None and w > 0)
    den = sum(w for v, w in pairs if v is not None and w > 0)
    return num / den if den > 0 else None


def tpsim_measures(rec: Dict[str, Any], bench: Optional[Benchmark] = None, sim_time_s: float = 0.0) -> Dict[str, Any]:
    """Per-run measures of a tpsim record; flow metrics summed over the headline flows
    (``bench.tpsim_flows_idx``, default every flow direction)."""
    out = rec["output"]
    all_flows, net = out["flows"], out["network"]
    idx = bench.tpsim_flows_idx if bench is not None else None
    flows = [f for i, f in enumerate(all_flows) if idx is None or f.get("flow", i) in idx]
    tcp = bench is not None and bench.tcp
    pk_tx, pk_rx = ("tx_segments", "rx_segments") if tcp else ("tx_packets", "rx_packets")
    tx = sum(f[pk_tx] or 0 for f in flows)
    rx = sum(f[pk_rx] or 0 for f in flows)
    app_rx = sum(f["rx_bytes"] for f in flows)
    delay_key = "net_delay_mean_s" if tcp else "delay_mean_s"
    goodput = sum(f["goodput_kbps"] or 0.0 for f in flows)
    if bench is not None and bench.goodput_from_s is not None:
        goodput = app_rx * 8 / 1000 / (sim_time_s - bench.goodput_from_s)
    all_tx = sum(f["tx_packets"] for f in all_flows)
    all_rx = sum(f["rx_packets"] for f in all_flows)
    written = sum(f["tx_bytes"] for f in flows if f.get("tx_bytes") is not None)
    extra: Dict[str, Any] = {}
    if bench is not None and bench.aqm:
        extra = tpsim_aqm_measures(out, sim_time_s)
    return {**extra, **{
        "loop_s": out["engine_seconds"],
        "process_s": rec["process_wall_s"],
        "cpu_s": rec.get("user_s", 0.0) + rec.get("sys_s", 0.0),
        "rss_mb": rec["peak_rss_kb"] / 1024.0,
        "events": net["events"],
        "tx_packets": tx,
        "rx_packets": rx,
        "pdr": rx / tx if tx else None,
        "all_pdr": all_rx / all_tx if all_tx else None,
        "app_rx_bytes": app_rx,
        "app_ratio": app_rx / written if written else None,
        "delay_mean_s": _weighted_mean([(f[delay_key], f[pk_rx] or 0) for f in flows]),
        "jitter_s": _weighted_mean([(f["jitter_ipdv_s"], f["rx_packets"] - 1) for f in flows]),
        "goodput_kbps": goodput,
        "ip_thr_kbps": None,
        "mac_frames": net.get("mac_frames"),
        "routing_packets": net.get("routing_packets"),
    }, **({k: extra[k] for k in ("goodput_kbps", "delay_mean_s")} if extra else {})}


def jain(xs: Sequence[float]) -> Optional[float]:
    """Jain's fairness index of ``xs``."""
    den = len(xs) * sum(x * x for x in xs)
    return sum(xs) ** 2 / den if den > 0 else None


#: The dumbbell's steady-state measures leave out the first this many seconds (start-up).
DUMBBELL_STEADY_FROM_S = 5


def tpsim_aqm_steady(out: Dict[str, Any], sim_time_s: float) -> Tuple[Optional[float], Optional[float]]:
    """(goodput kbit/s, queueing delay ms) of a tpsim dumbbell run from
    :data:`DUMBBELL_STEADY_FROM_S` on, from its 1-s bins: goodput = bytes delivered after that
    instant · 8 / the rest of the run; delay by Little's law, the time-average queue over those
    bins ÷ the data packets (1448 B) delivered per second."""
    t0 = DUMBBELL_STEADY_FROM_S
    q = [x for x in out.get("queues", []) if x["link"] == 0 and x["direction"] == "fwd" and x.get("bins")]
    cum = [v for k, v in out.get("delivered", {}).items() if k.endswith("-fwd")]
    if not q or not cum or q[0].get("bin_s") != 1.0 or sim_time_s <= t0 + 1:
        return None, None
    end = int(round(sim_time_s))
    delivered = sum(c[end - 1] - c[t0 - 1] for c in cum if len(c) >= end)
    span = end - t0
    goodput = delivered * 8 / 1000 / span
    packets_per_s = delivered / 1448 / span
    bins = q[0]["bins"][t0:end]
    delay = (sum(bins) / len(bins)) / packets_per_s * 1e3 if (bins and packets_per_s) else None
    return goodput, delay


def tpsim_congestion_steady(out: Dict[str, Any], series: str, flow: str = "0-fwd") -> Optional[float]:
    """The mean of flow ``flow``'s ``series`` (:func:`congestion_bins`) over its 1-s samples
    from :data:`DUMBBELL_STEADY_FROM_S` on (each taken at the start of its bin, so the mean of
    the step function over those bins as far as 1-s samples see it); ``None`` without them."""
    rec = out.get("congestion", {}).get(flow)
    if not rec or rec.get("bin_s") != 1.0 or not rec.get(series):
        return None
    vals = [v for v in rec[series][DUMBBELL_STEADY_FROM_S:] if v is not None]
    return sum(vals) / len(vals) if vals else None


def ns3_aqm_steady(out: Dict[str, Any]) -> Tuple[Optional[float], Optional[float]]:
    """(goodput kbit/s, queueing delay ms: qdisc + device-queue wait) of an ns-3 dumbbell run
    from :data:`DUMBBELL_STEADY_FROM_S` on (the program's per-second arrays)."""
    t0 = DUMBBELL_STEADY_FROM_S
    at, tx = out.get("sink_bytes_at_s"), out.get("tx_per_s")
    soj = out.get("wait_sum_per_s")
    end = int(round(out["sim_time"]))
    if not at or not tx or end <= t0 + 1:
        return None, None
    goodput = (at[end] - at[t0]) * 8 / 1000 / (end - t0)
    n = sum(tx[t0:end])
    return goodput, (sum(soj[t0:end]) / n * 1e3 if n else None)


def tpsim_aqm_measures(out: Dict[str, Any], sim_time_s: float) -> Dict[str, Any]:
    """The dumbbell's measures of a tpsim run (the data direction of every flow)."""
    fwd = [f for f in out["flows"] if f.get("direction", "fwd") == "fwd"]
    net = out["network"]
    rx = sum(f["rx_segments"] or 0 for f in fwd)
    owd = _weighted_mean([(f["packet_delay_mean_s"], f["rx_segments"] or 0) for f in fwd])
    # Mean RTT of the data senders: each flow's mean weighted by its RTT samples (by its
    # segments when the flows table has no sample count).
    rtt = _weighted_mean([(f.get("rtt_mean_s"), f.get("rtt_samples", f["rx_segments"]) or 0) for f in fwd])
    q = [x["mean_packets"] for x in out.get("queues", []) if x["link"] == 0 and x["direction"] == "fwd"]
    # Little's law: packets leave the queue at the rate they arrive at the sinks (no link loss).
    first_start = 0.1
    little = q[0] / (rx / (sim_time_s - first_start)) if (q and rx) else None
    return {
        "goodput_kbps": sum(f["goodput_kbps"] or 0.0 for f in fwd),
        "delay_mean_s": owd,
        "owd_ms": owd * 1e3 if owd is not None else None,
        "qdelay_ms": (owd - DUMBBELL_DELAY_S - DUMBBELL_SERIALIZATION_S) * 1e3 if owd is not None else None,
        "qdelay_little_ms": little * 1e3 if little is not None else None,
        "rtt_ms": rtt * 1e3 if rtt is not None else None,
        "queue_len": q[0] if q else None,
        "drops": net["drops_queue"] + net["drops_aqm_early"] + net["drops_aqm_forced"] + net["drops_aqm_sojourn"],
        "marks": net["ecn_marks"],
        "retx": sum(f["retransmissions"] or 0 for f in fwd),
        "rto": sum(f["rto_timeouts"] or 0 for f in fwd),
        "fairness": jain([f["goodput_kbps"] or 0.0 for f in fwd]) if len(fwd) > 1 else None,
        **dict(zip(("goodput_ss_kbps", "qdelay_ss_ms"), tpsim_aqm_steady(out, sim_time_s))),
        "pacing_ss_mbps": _scaled(tpsim_congestion_steady(out, "pacing_rate_bps"), 1e-6),
        "cwnd_ss_pkts": _scaled(tpsim_congestion_steady(out, "cwnd_bytes"), 1 / DUMBBELL_MSS_B),
    }


def _scaled(x: Optional[float], k: float) -> Optional[float]:
    return x * k if x is not None else None


def ns3_aqm_measures(out: Dict[str, Any]) -> Dict[str, Any]:
    """The dumbbell's measures of an ns-3 ``dumbbell_aqm`` run. The queueing delay is the
    wait from the qdisc's enqueue to the start of transmission (qdisc + device queue)."""
    fm = out["flowmon"]
    wait = out["wait_mean_s"]
    tx = out["tx_packets_fwd"]
    little = (out["qdisc_len_mean"] + out["devq_len_mean"]) / (tx / out["sim_time"]) if tx else None
    per_flow = out.get("flow_goodput_kbps", [])
    return {
        "goodput_kbps": out["goodput_kbps"],
        "delay_mean_s": fm["mean_delay_s"] if fm["rx_pkts"] else None,
        "owd_ms": fm["mean_delay_s"] * 1e3 if fm["rx_pkts"] else None,
        "qdelay_ms": wait * 1e3,
        "qdelay_little_ms": little * 1e3 if little is not None else None,
        # Every RTT sample the senders took (older results of the program have none).
        "rtt_ms": out["rtt_mean_s"] * 1e3 if out.get("rtt_samples") else None,
        "queue_len": out["qdisc_len_mean"] + out["devq_len_mean"],
        "drops": out["qdisc_drops"],
        "drops_first2s": sum(out.get("qdisc_drops_per_s", [])[:2]),
        "marks": out["qdisc_marks"],
        "retx": out["retransmissions"],
        "fairness": jain(per_flow) if len(per_flow) > 1 else None,
        "qdelay_qdisc_ms": out["qdisc_sojourn_mean_s"] * 1e3,
        **dict(zip(("goodput_ss_kbps", "qdelay_ss_ms"), ns3_aqm_steady(out))),
        # The first flow's sender from 5 s (null or absent: not paced, or an older result).
        "pacing_ss_mbps": _scaled(out.get("pacing_rate_mean_bps_from5s"), 1e-6),
        "cwnd_ss_pkts": _scaled(out.get("cwnd_mean_bytes_from5s"), 1 / DUMBBELL_MSS_B),
    }


def ns3_measures(rec: Dict[str, Any], bench: Optional[Benchmark] = None, sim_time_s: float = 0.0) -> Dict[str, Any]:
    """Per-run measures of an ns-3 record (the JSON line of common.h's programs)."""
    out = rec["output"]
    fm = out.get(bench.ns3_flows if bench is not None else "flowmon")
    if fm is None:
        raise RuntimeError("the ns-3 program ran without FlowMonitor (--instrument=0); the comparison needs it")
    app_rx = out.get("app_rx_bytes")
    if bench is not None and bench.ns3_flows != "flowmon" and bench.app_size:
        app_rx = fm["rx_pkts"] * bench.app_size  # UDP: one application message per IP packet
    thr = fm.get("sum_flow_thr_kbps")
    goodput = thr * app_rx / fm["rx_bytes_ip"] if (app_rx is not None and thr is not None and fm.get("rx_bytes_ip")) else None
    if bench is not None and bench.goodput_from_s is not None:
        goodput = app_rx * 8 / 1000 / (sim_time_s - bench.goodput_from_s) if app_rx is not None else None
    all_fm = out.get("all_flows", fm)
    app_ratio = out.get("app_delivery_ratio")
    if app_ratio is None and bench is not None and bench.app_size and fm["tx_pkts"]:
        app_ratio = app_rx / (fm["tx_pkts"] * bench.app_size) if not bench.tcp else None
    extra = ns3_aqm_measures(out) if (bench is not None and bench.aqm) else {}
    return {**extra, **{
        "loop_s": out["wall_run_s"],
        "process_s": rec["process_wall_s"],
        "cpu_s": rec.get("user_s", 0.0) + rec.get("sys_s", 0.0),
        "rss_mb": rec["peak_rss_kb"] / 1024.0,
        "events": out["events"],
        "tx_packets": fm["tx_pkts"],
        "rx_packets": fm["rx_pkts"],
        "pdr": fm["pdr"] if fm["tx_pkts"] else None,
        "all_pdr": all_fm["pdr"] if all_fm["tx_pkts"] else None,
        "app_rx_bytes": app_rx,
        "app_ratio": app_ratio,
        "delay_mean_s": fm["mean_delay_s"] if fm["rx_pkts"] else None,
        "jitter_s": fm["mean_jitter_s"] if fm["rx_pkts"] > 1 else None,
        "goodput_kbps": goodput,
        "ip_thr_kbps": thr,
        "mac_frames": out.get("mac_frames_tx"),
        "routing_packets": out.get("routing_pkts_tx"),
    }, **({k: extra[k] for k in ("goodput_kbps", "delay_mean_s")} if extra else {})}


def add_derived(m: Dict[str, Any], sim_time_s: float, cs_receivers: Optional[float] = None) -> Dict[str, Any]:
    loop = m["loop_s"]
    m = dict(m)
    m["events_per_s"] = m["events"] / loop if loop > 0 else None
    m["sim_per_wall"] = sim_time_s / loop if loop > 0 else None
    m["us_per_delivered"] = loop / m["rx_packets"] * 1e6 if m["rx_packets"] else None
    m["us_per_mac_frame"] = loop / m["mac_frames"] * 1e6 if m.get("mac_frames") else None
    m["us_per_event"] = loop / m["events"] * 1e6 if m.get("events") else None
    m["ns_per_frame_receiver"] = (
        loop / m["mac_frames"] / cs_receivers * 1e9 if (m.get("mac_frames") and cs_receivers) else None
    )
    return m


def measures(bench: Benchmark, runs: Dict[str, List[Dict[str, Any]]], sim_time_s: float) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """(tpsim, ns-3) per-seed measures of one scenario, derived quantities included."""
    tp = [add_derived(tpsim_measures(r, bench, sim_time_s), sim_time_s, bench.cs_receivers) for r in runs["tpsim"]]
    ns = [add_derived(ns3_measures(r, bench, sim_time_s), sim_time_s, bench.cs_receivers) for r in runs["ns-3"]]
    return tp, ns


# --------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------


def fmt_sig(x: Optional[float], n: int = 3) -> str:
    """``x`` rounded to ``n`` significant digits, never in exponent notation, with thousands
    separators (``1,710``, ``0.0119``, ``236,000``)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = n - 1 - mag
    r = round(x, decimals)
    return f"{r:,.{max(decimals, 0)}f}"


def fmt_int(x: Optional[float]) -> str:
    return "—" if x is None else f"{int(round(x)):,}"


def fmt_fixed(digits: int) -> Callable[[Optional[float]], str]:
    return lambda x: "—" if x is None else f"{x:.{digits}f}"


def fmt_rate(x: Optional[float]) -> str:
    """Events per second: ``25.1 M``, ``236 k``."""
    if x is None:
        return "—"
    if abs(x) >= 1e6:
        return f"{fmt_sig(x / 1e6)} M"
    if abs(x) >= 1e3:
        return f"{fmt_sig(x / 1e3)} k"
    return fmt_sig(x)


def spread(values: Sequence[Optional[float]], fmt: Callable[[Optional[float]], str], always: bool = False) -> str:
    """``median (min–max)`` of the values over seeds; just the value when every seed gave
    the same one, unless ``always``."""
    vals = [v for v in values if v is not None]
    if not vals:
        return "—"
    med, lo, hi = statistics.median(vals), min(vals), max(vals)
    if (lo == hi or fmt(lo) == fmt(hi)) and not always:
        return fmt(med)
    return f"{fmt(med)} ({fmt(lo)}–{fmt(hi)})"


def ratio(a: Sequence[Optional[float]], b: Sequence[Optional[float]]) -> Optional[float]:
    va = [v for v in a if v is not None]
    vb = [v for v in b if v is not None]
    if not va or not vb or statistics.median(vb) == 0:
        return None
    return statistics.median(va) / statistics.median(vb)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# Rows of the performance table: (label, measure key, format, always show the spread).
PERF_ROWS: List[Tuple[str, str, Callable[[Optional[float]], str], bool]] = [
    ("event-loop wall time, s (tpsim `engine_seconds`, ns-3 `Simulator::Run`)", "loop_s", fmt_sig, True),
    ("process wall time, s", "process_s", fmt_sig, True),
    ("process CPU time (user + sys), s", "cpu_s", fmt_sig, True),
    ("peak RSS, MB", "rss_mb", fmt_sig, True),
    ("events executed", "events", fmt_int, False),
    ("events/s in the event loop", "events_per_s", fmt_rate, True),
    ("simulated s per event-loop wall s", "sim_per_wall", fmt_sig, True),
    ("event-loop time per delivered packet, µs", "us_per_delivered", fmt_sig, True),
    ("event-loop time per event, µs", "us_per_event", fmt_sig, True),
]
MAC_ROW = ("event-loop time per MAC frame, µs", "us_per_mac_frame", fmt_sig, True)
RECEIVER_ROW = ("event-loop time per MAC frame per receiver in carrier-sense range, ns", "ns_per_frame_receiver", fmt_sig, True)

# Rows of the metrics table: (label, measure key, format, definition tpsim / ns-3).
METRIC_ROWS: List[Tuple[str, str, Callable[[Optional[float]], str], str]] = [
    ("packets sent", "tx_packets", fmt_int, "messages handed to the transport / FlowMonitor IP packets sent"),
    ("packets delivered", "rx_packets", fmt_int, "messages delivered / FlowMonitor IP packets received"),
    ("PDR", "pdr", fmt_fixed(6), "delivered / sent"),
    ("bytes delivered to the applications", "app_rx_bytes", fmt_int, "Σ `rx_bytes` / Σ PacketSink bytes"),
    ("mean one-way delay, ms", "delay_mean_ms", fmt_fixed(4), "send → delivery / FlowMonitor IP → IP"),
    ("mean jitter (IPDV), ms", "jitter_ms", fmt_fixed(4), "mean \\|D_i − D_(i−1)\\| / FlowMonitor jitter (same definition)"),
    ("goodput, kbit/s (sum of directions)", "goodput_kbps", fmt_fixed(3), "payload bytes, start → stop / FlowMonitor throughput × app bytes ÷ IP bytes"),
    ("FlowMonitor throughput, kbit/s (IP bytes)", "ip_thr_kbps", fmt_fixed(3), "— / Σ per-flow IP bytes ÷ (last receive − first send)"),
]
MAC_METRIC = ("MAC frames transmitted", "mac_frames", fmt_int, "`mac_frames` / PHY TxBegin count")
ROUTING_METRIC = ("routing packets transmitted", "routing_packets", fmt_int, "`routing_packets` / AODV packets sent, every hop")
ALL_PDR_METRIC = ("all-flows PDR (main + background)", "all_pdr", fmt_fixed(4), "every flow's messages / FlowMonitor `all_flows`")
APP_RATIO_METRIC = ("application delivery ratio (bytes delivered / written)", "app_ratio", fmt_fixed(4), "Σ `rx_bytes` ÷ Σ `tx_bytes` / PacketSink bytes ÷ (writes × 256 B)")


AQM_METRICS: List[Tuple[str, str, Callable[[Optional[float]], str], str]] = [
    ("goodput, kbit/s (sum of flows)", "goodput_kbps", fmt_fixed(1),
     "application bytes delivered · 8 / (run length − flow start), summed over the flows, both sides"),
    ("mean queueing delay at the bottleneck, ms", "qdelay_ms", fmt_fixed(3),
     "data packets' one-way delay (`packet_delay_mean_s`) − 20 ms − 1.2016 ms / qdisc enqueue → start of transmission (qdisc + 1-packet device queue) of the packets node 0 transmitted"),
    ("ns-3: the qdisc part of it, ms", "qdelay_qdisc_ms", fmt_fixed(3),
     "— / qdisc sojourn (enqueue → dequeue)"),
    ("queueing delay by Little's law, ms", "qdelay_little_ms", fmt_fixed(3),
     "time-average `queue_packets` ÷ packets delivered per s / time-average qdisc + device queue length ÷ packets transmitted per s"),
    ("time-average queue, packets", "queue_len", fmt_fixed(3), "`queue_packets` (link 0 forward: discipline + device queue) / qdisc PacketsInQueue + device queue of node 0"),
    ("mean RTT of the data flows, ms", "rtt_ms", fmt_fixed(2),
     "the senders' `rtt_mean_s` (mean of their RTT samples), flows weighted by their samples / mean of every RTT sample the senders' sockets took (one per ACK of the oldest timed segment, from the echoed timestamp, whole ms)"),
    (f"goodput from {DUMBBELL_STEADY_FROM_S} s, kbit/s", "goodput_ss_kbps", fmt_fixed(1),
     f"bytes delivered after {DUMBBELL_STEADY_FROM_S} s · 8 / the rest of the run (start-up left out): `rx_bytes_cumulative` bins / the sinks' bytes at each second"),
    (f"queueing delay from {DUMBBELL_STEADY_FROM_S} s, ms", "qdelay_ss_ms", fmt_fixed(3),
     "Little's law over the 1-s bins from then on (`queue_packets` ÷ data packets delivered per s) / qdisc sojourn of the packets transmitted from then on"),
    ("mean one-way delay of data packets, ms", "owd_ms", fmt_fixed(3), "`packet_delay_mean_s` / FlowMonitor IP → IP"),
    (f"pacing rate from {DUMBBELL_STEADY_FROM_S} s, Mbit/s", "pacing_ss_mbps", fmt_fixed(3),
     "the first flow's sender, information only (not judged): "
     f"mean of flow 0's forward `pacing_rate_bps` samples (one at the start of each 1-s bin) from {DUMBBELL_STEADY_FROM_S} s / "
     f"time-weighted mean of the first sender's TcpSocketBase PacingRate trace from {DUMBBELL_STEADY_FROM_S} s "
     "(payload bit/s on both sides); — when the flow does not pace"),
    (f"cwnd from {DUMBBELL_STEADY_FROM_S} s, packets of {DUMBBELL_MSS_B} B", "cwnd_ss_pkts", fmt_fixed(1),
     "the first flow's sender, information only (not judged): "
     f"mean of flow 0's forward `cwnd_bytes` samples (one at the start of each 1-s bin) from {DUMBBELL_STEADY_FROM_S} s ÷ {DUMBBELL_MSS_B} / "
     f"time-weighted mean of the first sender's CongestionWindow trace from {DUMBBELL_STEADY_FROM_S} s ÷ {DUMBBELL_MSS_B}"),
    ("packets dropped by the discipline", "drops", fmt_int, "`drops_queue` + `drops_aqm_*` / QueueDisc drops of node 0"),
    ("packets marked CE", "marks", fmt_int, "`ecn_marks` / QueueDisc marks of node 0"),
    ("TCP retransmissions", "retx", fmt_int, "`retransmissions` / TcpSocketBase Retransmission trace"),
    ("Jain fairness of the flows' goodputs", "fairness", fmt_fixed(4), "both sides (2 flows)"),
]


def metric_rows(bench: Benchmark) -> List[Tuple[str, str, Callable[[Optional[float]], str], str]]:
    """The headline metrics of a scenario, with definitions adapted to it."""
    if bench.aqm:
        return list(AQM_METRICS)
    if not bench.mac_frames:
        if not bench.tcp:
            return list(METRIC_ROWS)
        seg = "TCP data segments incl. retransmissions (`tx_segments`, `rx_segments`) / FlowMonitor IP packets of the data directions"
        wired = {
            "tx_packets": seg + " sent",
            "rx_packets": seg + " received",
            "delay_mean_ms": "`net_delay_mean_s` (segment sent → received) / FlowMonitor IP → IP",
            "jitter_ms": "mean \\|D_i − D_(i−1)\\| over delivered messages / FlowMonitor jitter over IP packets",
        }
        return [(label, key, f, wired.get(key, d)) for label, key, f, d in METRIC_ROWS]
    rows: List[Tuple[str, str, Callable[[Optional[float]], str], str]] = []
    pk = "TCP data segments incl. retransmissions (`tx_segments`, `rx_segments`) / FlowMonitor" if bench.tcp else \
        "messages / FlowMonitor IP packets"
    which = " of the main flow 0→49" if bench.ns3_flows == "main_flow" else ""
    span = f"sim time − {bench.goodput_from_s:g} s" if bench.goodput_from_s else "sim time"
    rows.append((f"packets sent{which}", "tx_packets", fmt_int, pk + " sent"))
    rows.append((f"packets delivered{which}", "rx_packets", fmt_int, pk + " received"))
    rows.append((f"PDR{which}", "pdr", fmt_fixed(4), "delivered / sent"))
    if bench.ns3_flows == "main_flow":
        rows.append(ALL_PDR_METRIC)
    if bench.tcp and bench.app_size:
        rows.append(APP_RATIO_METRIC)
    rows.append((f"goodput{which}, kbit/s", "goodput_kbps", fmt_fixed(2), f"application bytes delivered · 8 / ({span}), both sides"))
    rows.append((f"mean delay{which}, ms", "delay_mean_ms", fmt_fixed(2),
                 ("`net_delay_mean_s` (segment) / FlowMonitor IP → IP" if bench.tcp else "send → delivery / FlowMonitor IP → IP")))
    rows.append(ROUTING_METRIC)
    rows.append(MAC_METRIC)
    return rows


def _metric_values(ms: Sequence[Dict[str, Any]], key: str) -> List[Optional[float]]:
    if key == "delay_mean_ms":
        return [None if m["delay_mean_s"] is None else m["delay_mean_s"] * 1e3 for m in ms]
    if key == "jitter_ms":
        return [None if m["jitter_s"] is None else m["jitter_s"] * 1e3 for m in ms]
    return [m.get(key) for m in ms]


def render_scenario(bench: Benchmark, runs: Dict[str, List[Dict[str, Any]]], ctx: Dict[str, Any]) -> str:
    """The markdown block of one scenario. ``runs`` maps "tpsim" and "ns-3" to their
    per-seed records (as from :func:`run_tpsim` / :func:`run_ns3`)."""
    sim_time = ctx["sim_time_s"]
    tp, ns = measures(bench, runs, sim_time)
    mach = ctx["machine"]
    seeds = sorted({r["seed"] for r in runs["tpsim"]} | {r["seed"] for r in runs["ns-3"]})
    cached = [r for r in runs["ns-3"] if r.get("cached")]
    ns_dates = sorted({r["measured_at"][:10] for r in runs["ns-3"]})
    lines = [
        BLOCK.format(key=bench.key),
        f"### `{bench.key}`: {bench.title}, {fmt_sig(sim_time)} s simulated",
        "",
        f"Measured {ctx['date']} on {mach['cores']} cores ({mach['cpu']}), "
        + (f"{len(seeds)} seed(s) per side" if len(runs["tpsim"]) == len(runs["ns-3"]) == len(seeds)
           else f"{len(runs['tpsim'])} seed(s) for tpsim and {len(runs['ns-3'])} for ns-3")
        + f" ({', '.join(map(str, seeds))}), one process at a time; 1-minute load average at the start "
        f"{mach['load1']:.2f}."
        + (f" ns-3 results from the cache for {len(cached)} of {len(runs['ns-3'])} seeds (measured {', '.join(ns_dates)})." if cached else ""),
        "",
        f"* tpsim: `{runs['tpsim'][0]['command']}`, scenario `{bench.tpsim_scenario}`.",
        (f"* ns-3: `{runs['ns-3'][0]['command']}` (seed S: `--seed=S --run=1`)." if runs["ns-3"] else
         f"* ns-3: `{shlex.join([bench.ns3_program, *bench.ns3_args])}` — **not run yet** (no cached result; "
         f"`--ns3-cached-only`): tpsim side only."),
    ]
    if bench.config:
        lines.append(f"* Configuration of both sides: {bench.config}; model details and remaining differences below.")
    lines += [
        "",
    ]
    rows = []
    perf_rows = PERF_ROWS + ([MAC_ROW] if bench.mac_frames else []) + ([RECEIVER_ROW] if bench.cs_receivers else [])
    for label, key, fmt, always in perf_rows:
        a = [m[key] for m in tp]
        b = [m[key] for m in ns]
        r = ratio(a, b)
        rows.append([label, spread(a, fmt, always), spread(b, fmt, always), fmt_sig(r) if r is not None else "—"])
    lines.append(table(["median (min–max) over seeds", "tpsim", "ns-3", "tpsim / ns-3"], rows))
    lines.append("")
    mrows, flagged = [], []
    for label, key, fmt, definition in metric_rows(bench):
        a = _metric_values(tp, key)
        b = _metric_values(ns, key)
        mrows.append([label, spread(a, fmt), spread(b, fmt), definition])
        va = [v for v in a if v is not None]
        vb = [v for v in b if v is not None]
        if va and vb and (bench.judged is None or key in bench.judged):
            ma, mb = statistics.median(va), statistics.median(vb)
            rel = abs(ma - mb) / max(abs(ma), abs(mb)) if max(abs(ma), abs(mb)) > 0 else 0.0
            if rel > bench.tolerance_of(key):
                flagged.append(f"{label} ({fmt(ma)} vs {fmt(mb)}, {rel:.2%})")
    lines.append(table(["headline metric", "tpsim", "ns-3", "definition (tpsim / ns-3)"], mrows))
    lines.append("")
    if bench.tolerances:
        # Tolerances of their own: each judged metric is named with its tolerance.
        judged = " (judged: " + ", ".join(
            f"{label} within {bench.tolerance_of(key):.1%}" for label, key, _, _ in metric_rows(bench)
            if bench.judged is None or key in bench.judged) + ")"
        if flagged:
            lines.append(f"**Differences above the tolerance{judged}:** " + "; ".join(flagged) + ".")
        else:
            lines.append(f"Both sides agree within the tolerance{judged}.")
    else:
        judged = "" if bench.judged is None else " (judged: " + ", ".join(
            label for label, key, _, _ in metric_rows(bench) if key in bench.judged) + ")"
        if flagged:
            lines.append(f"**Differences above {bench.tolerance:.1%}{judged}:** " + "; ".join(flagged) + ".")
        elif bench.judged is None:
            lines.append(f"Every headline metric measured on both sides agrees within {bench.tolerance:.1%}.")
        else:
            lines.append(f"Both sides agree within {bench.tolerance:.1%}{judged}.")
    r_loop = ratio([m["loop_s"] for m in tp], [m["loop_s"] for m in ns])
    r_pkt = ratio([m["us_per_delivered"] for m in tp], [m["us_per_delivered"] for m in ns])
    r_proc = ratio([m["process_s"] for m in tp], [m["process_s"] for m in ns])
    if r_loop and r_pkt and r_proc:
        lines.append(
            f"Medians: tpsim's event loop is {fmt_sig(1 / r_loop)}× as fast as ns-3's `Simulator::Run` "
            f"({fmt_sig(1 / r_pkt)}× per delivered packet); a whole tpsim process takes "
            f"{fmt_sig(r_proc)}× the time of a whole ns-3 process."
        )
    lines.append("")
    for note in bench.notes:
        lines += [note, ""]
    return "\n".join(lines).rstrip() + "\n"


def _med(vals: Sequence[Optional[float]]) -> Optional[float]:
    v = [x for x in vals if x is not None]
    return statistics.median(v) if v else None


def _rel(a: Optional[float], b: Optional[float]) -> str:
    """Signed relative difference of tpsim's median from ns-3's."""
    if a is None or b is None or b == 0:
        return "—"
    return f"{(a - b) / b:+.0%}"


def doc_order() -> List[str]:
    """Blocks in the document: the summary first, then every scenario, the scale table after S6,
    each dumbbell group's summary before the group's first row."""
    keys = ["summary"]
    seen = set()
    for k, b in BENCHMARKS.items():
        if b.group in GROUP_SUMMARIES and b.group not in seen:
            seen.add(b.group)
            keys.append(f"{b.group}-summary")
        keys.append(k)
        if k == "s6_scale-n800":
            keys.append("s6_scale-summary")
    return keys


def _old_rows(old_block: str) -> Dict[str, str]:
    """Table rows of a previous summary block by scenario key (first cell)."""
    out = {}
    for line in old_block.splitlines():
        m = re.match(r"^\| `?([^`|]+?)`? \|", line)
        if m and not line.startswith("| ---") and m.group(1) not in ("scenario", "N"):
            out[m.group(1)] = line
    return out


def _merge_rows(new: Dict[str, List[str]], old_block: str, order: Sequence[str], key_of: Callable[[str], str]) -> List[str]:
    """Rows of a summary table: new rows for the scenarios run now, the previous block's rows
    for the others (a run of some scenarios keeps the rest of the table), in ``order``."""
    old = _old_rows(old_block)
    lines = []
    for k in order:
        if k in new:
            lines.append("| " + " | ".join(new[k]) + " |")
        elif key_of(k) in old:
            lines.append(old[key_of(k)])
    return lines


def render_summary(raw: Dict[str, Dict[str, List[Dict[str, Any]]]], date: str, old_block: str = "") -> str:
    """One line per scenario run now: medians of both sides, the speed ratio and the
    headline metrics side by side."""
    rows: Dict[str, List[str]] = {}
    for key, runs in raw.items():
        b = BENCHMARKS[key]
        sim = runs["tpsim"][0].get("sim_time_s", b.sim_time_s) if runs["tpsim"] else b.sim_time_s
        tp, ns = measures(b, runs, sim)
        lt, ln = _med([m["loop_s"] for m in tp]), _med([m["loop_s"] for m in ns])
        speed = f"{ln / lt:,.0f}×" if (lt and ln) else "—"
        mf = lambda ms, k: _med([m.get(k) for m in ms])  # noqa: E731
        rows[key] = ([
            f"`{key}`", f"{len(tp)} / {len(ns)}",
            f"{fmt_sig(lt)} / {fmt_sig(ln)}", speed,
            f"{fmt_sig(mf(tp, 'us_per_mac_frame'))} / {fmt_sig(mf(ns, 'us_per_mac_frame'))}",
            f"{fmt_fixed(3)(mf(tp, 'pdr'))} / {fmt_fixed(3)(mf(ns, 'pdr'))} ({_rel(mf(tp, 'pdr'), mf(ns, 'pdr'))})",
            f"{fmt_sig(mf(tp, 'goodput_kbps'))} / {fmt_sig(mf(ns, 'goodput_kbps'))} ({_rel(mf(tp, 'goodput_kbps'), mf(ns, 'goodput_kbps'))})",
            f"{fmt_sig(mf(tp, 'delay_mean_s') and mf(tp, 'delay_mean_s') * 1e3)} / {fmt_sig(mf(ns, 'delay_mean_s') and mf(ns, 'delay_mean_s') * 1e3)}",
            f"{fmt_int(mf(tp, 'routing_packets'))} / {fmt_int(mf(ns, 'routing_packets'))}" if b.mac_frames else "—",
            f"{fmt_int(mf(tp, 'mac_frames'))} / {fmt_int(mf(ns, 'mac_frames'))}" if b.mac_frames else "—",
        ])
    merged = _merge_rows(rows, old_block, list(BENCHMARKS), lambda k: k)
    head = ["scenario", "seeds tpsim / ns-3", "event-loop s (median) tpsim / ns-3", "ns-3 ÷ tpsim",
            "µs per MAC frame", "PDR (tpsim vs ns-3)", "goodput kbit/s", "mean delay ms", "routing packets", "MAC frames"]
    return "\n".join([
        BLOCK.format(key="summary"),
        "### Summary",
        "",
        f"Medians over seeds (rows of scenarios not re-run on {date} are kept from their last run); each scenario's block below has the spread, "
        "the process times, RSS, events, the definitions and the model differences. \"ns-3 ÷ tpsim\" is "
        "how many times faster tpsim's event loop is than ns-3's `Simulator::Run`; the percentages are "
        "tpsim's difference from ns-3's median.",
        "",
        table(head, []) + "\n" + "\n".join(merged),
        "",
    ])


def render_scale_summary(raw: Dict[str, Dict[str, List[Dict[str, Any]]]], date: str, old_block: str = "") -> str:
    """S6 across N: wall time per MAC frame and per MAC frame per receiver in carrier-sense
    range, so that the flatness from N = 25 to 800 can be judged."""
    rows: Dict[str, List[str]] = {}
    # Time per MAC frame per receiver by N: tpsim's, ns-3's.
    per_recv: Tuple[Dict[int, float], Dict[int, float]] = ({}, {})
    for key, runs in raw.items():
        b = BENCHMARKS[key]
        if b.group != "s6_scale" or not runs["tpsim"]:
            continue
        tp, ns = measures(b, runs, runs["tpsim"][0].get("sim_time_s", b.sim_time_s))
        g = lambda ms, k: _med([m.get(k) for m in ms])  # noqa: E731
        pr = (g(tp, "ns_per_frame_receiver"), g(ns, "ns_per_frame_receiver"))
        for side, v in zip(per_recv, pr):
            if v:
                side[b.nodes] = v
        rows[key] = ([
            str(b.nodes), f"{b.sim_time_s:g}", f"{len(tp)} / {len(ns)}", f"{b.cs_receivers:.2f}",
            f"{fmt_sig(g(tp, 'loop_s'))} / {fmt_sig(g(ns, 'loop_s'))}",
            f"{fmt_int(g(tp, 'mac_frames'))} / {fmt_int(g(ns, 'mac_frames'))}",
            f"{fmt_int(g(tp, 'events'))} / {fmt_int(g(ns, 'events'))}",
            f"{fmt_sig(g(tp, 'us_per_mac_frame'))} / {fmt_sig(g(ns, 'us_per_mac_frame'))}",
            f"{fmt_sig(pr[0])} / {fmt_sig(pr[1])}",
            f"{fmt_sig(g(tp, 'us_per_event'))} / {fmt_sig(g(ns, 'us_per_event'))}",
            f"{fmt_sig(g(tp, 'rss_mb'))} / {fmt_sig(g(ns, 'rss_mb'))}",
        ])
    s6 = [k for k, b in BENCHMARKS.items() if b.group == "s6_scale"]
    merged = _merge_rows(rows, old_block, s6, lambda k: str(BENCHMARKS[k].nodes))
    for line in merged:  # per-receiver times of rows kept from the previous run
        cells = [c.strip() for c in line.strip("|").split("|")]
        try:
            n = int(cells[0])
            for side, cell in zip(per_recv, cells[8].split("/")):
                if n not in side:
                    side[n] = float(cell.replace(",", ""))
        except (ValueError, IndexError):
            pass
    head = ["N", "sim s", "seeds tpsim / ns-3", "receivers in CS range per sender", "event loop s", "MAC frames",
            "events", "µs per MAC frame", "ns per MAC frame per receiver", "µs per event", "peak RSS MB"]
    lines = [
        BLOCK.format(key="s6_scale-summary"),
        "### `s6_scale` across N (tpsim / ns-3, medians)",
        "",
        "Receivers in carrier-sense range: the mean number of other nodes within 250 m of a node of the "
        "grid (its 4-neighbourhood, fewer at the edges), computed from the layout. Time per MAC frame per "
        "receiver divides the event-loop time by MAC frames × that number: the work of delivering one frame "
        "to one radio that hears it.",
        "",
        table(head, []) + "\n" + "\n".join(merged),
        "",
    ]
    def spread(label: str, d: Dict[int, float]) -> str:
        lo, hi = min(d.values()), max(d.values())
        return f"{label} spans {fmt_sig(lo)}–{fmt_sig(hi)} ns over N = {min(d)}–{max(d)}: max/min = {hi / lo:.2f}."

    if len(per_recv[0]) >= 2:
        text = spread("tpsim's time per MAC frame per receiver", per_recv[0])
        if len(per_recv[1]) >= 2:
            text += " " + spread("ns-3's", per_recv[1])
        lines.append(text)
        lines.append("")
    return "\n".join(lines)


def _group_measures(raw: Dict[str, Dict[str, List[Dict[str, Any]]]], group: str):
    """(key, benchmark, tpsim measures, ns-3 measures) of every row of ``group`` that has
    tpsim runs."""
    for key, runs in raw.items():
        b = BENCHMARKS[key]
        if b.group != group or not runs["tpsim"]:
            continue
        sim = runs["tpsim"][0].get("sim_time_s", b.sim_time_s)
        tp, ns = measures(b, runs, sim)
        yield key, b, tp, ns


def render_dumbbell_summary(raw: Dict[str, Dict[str, List[Dict[str, Any]]]], date: str, old_block: str = "") -> str:
    """The queue-discipline dumbbell across its rows: goodput and queueing delay of both
    sides (medians over seeds), their ratio, the discipline's drops and marks, and whether
    the row is within the tolerance."""
    rows: Dict[str, List[str]] = {}
    for key, b, tp, ns in _group_measures(raw, "dumbbell_aqm"):
        g = lambda ms, k: _med([m.get(k) for m in ms])  # noqa: E731
        gt, gn = g(tp, "goodput_kbps"), g(ns, "goodput_kbps")
        dt_, dn, dq = g(tp, "qdelay_ms"), g(ns, "qdelay_ms"), g(ns, "qdelay_qdisc_ms")
        rg = gt / gn if (gt is not None and gn) else None
        rd = dt_ / dn if (dt_ is not None and dn) else None
        ok = rg is not None and rd is not None and abs(rg - 1) <= b.tolerance and abs(rd - 1) <= b.tolerance
        sgt, sgn, sdt, sdn = g(tp, "goodput_ss_kbps"), g(ns, "goodput_ss_kbps"), g(tp, "qdelay_ss_ms"), g(ns, "qdelay_ss_ms")
        arg = dict(a.split("=", 1) for a in b.ns3_args if "=" in a)
        rows[key] = [
            f"`{key}`", f"{len(tp)} / {len(ns)}",
            f"{fmt_fixed(0)(gn)}", f"{fmt_fixed(0)(gt)}", fmt_fixed(3)(rg),
            f"{fmt_fixed(2)(dn)} ({fmt_fixed(2)(dq)})",
            f"{fmt_fixed(2)(dt_)}", fmt_fixed(3)(rd),
            f"{fmt_int(g(ns, 'drops'))} / {fmt_int(g(tp, 'drops'))}",
            (f"{fmt_int(g(ns, 'marks'))} / {fmt_int(g(tp, 'marks'))}" if arg.get("--ecn") == "1" else "—"),
            f"{fmt_int(g(ns, 'retx'))} / {fmt_int(g(tp, 'retx'))}",
            fmt_fixed(3)(sgt / sgn if (sgt is not None and sgn) else None),
            f"{fmt_fixed(2)(sdn)} / {fmt_fixed(2)(sdt)} ({fmt_fixed(3)(sdt / sdn if (sdt is not None and sdn) else None)})",
            "yes" if ok else "**no**",
        ]
    keys = [k for k, b in BENCHMARKS.items() if b.group == "dumbbell_aqm"]
    merged = _merge_rows(rows, old_block, keys, lambda k: k)
    head = ["row", "seeds tpsim / ns-3", "goodput ns-3, kbit/s", "goodput tpsim", "tpsim / ns-3",
            "queueing delay ns-3, ms (qdisc part)", "queueing delay tpsim, ms", "tpsim / ns-3",
            "drops ns-3 / tpsim", "CE marks ns-3 / tpsim", "retransmissions ns-3 / tpsim",
            f"from {DUMBBELL_STEADY_FROM_S} s: goodput tpsim / ns-3",
            f"from {DUMBBELL_STEADY_FROM_S} s: queueing delay ns-3 / tpsim, ms (tpsim / ns-3)",
            f"both within {BENCHMARKS[keys[0]].tolerance:.0%}"]
    outside = [line.split("|")[1].strip() for line in merged if line.rstrip().endswith("**no** |")]
    lines = [
        BLOCK.format(key="dumbbell_aqm-summary"),
        "### `dumbbell_aqm`: queue disciplines on a 10 Mbit/s, 20 ms dumbbell (ns-3 / tpsim, medians)",
        "",
        "Rows `dumbbell-<discipline>-<cc>-<flows>f[-ecn]`; each row's block below has the spread over seeds, "
        "the definitions and the model differences. Goodput: application bytes · 8 / (60 s − flow start), "
        "summed over the flows. Queueing delay, the wait from the discipline's enqueue to the start of "
        "transmission through the discipline and a 1-packet device queue below it on both sides: ns-3 "
        "measured per transmitted packet (the qdisc part in brackets), tpsim the data packets' one-way "
        "delay − 20 ms − 1.2016 ms. Drops and marks are the discipline's on both sides. "
        f"The \"from {DUMBBELL_STEADY_FROM_S} s\" columns leave the start-up out (ns-3: the packets "
        "transmitted from then on; tpsim: Little's law over its 1-s queue bins). A row is within the "
        "tolerance when goodput and queueing delay over the whole run both are "
        f"(rows not re-run on {date} are kept from their last run).",
        "",
        table(head, []) + "\n" + "\n".join(merged),
        "",
        (f"Outside {BENCHMARKS[keys[0]].tolerance:.0%}: " + ", ".join(outside) + "." if outside
         else f"Every row run is within {BENCHMARKS[keys[0]].tolerance:.0%} on goodput and queueing delay."),
        "",
    ]
    return "\n".join(lines)


def render_dumbbell_cc_summary(raw: Dict[str, Dict[str, List[Dict[str, Any]]]], date: str, old_block: str = "") -> str:
    """The congestion-control dumbbell (group ``dumbbell_cc``) across its rows: goodput, mean
    RTT and queueing delay of both sides (medians over seeds) with their ratios, drops and
    retransmissions, and whether the row's judged measures are within their tolerances
    (goodput on every row, mean RTT on the BBR rows)."""
    rows: Dict[str, List[str]] = {}
    for key, b, tp, ns in _group_measures(raw, "dumbbell_cc"):
        g = lambda ms, k: _med([m.get(k) for m in ms])  # noqa: E731
        r = lambda k: (g(tp, k) / g(ns, k) if (g(tp, k) is not None and g(ns, k)) else None)  # noqa: E731
        judged = b.judged or ()
        ok = all(r(k) is not None and abs(r(k) - 1) <= b.tolerance_of(k) for k in judged)
        mark = lambda k: "" if k in judged else " (not judged)"  # noqa: E731
        rows[key] = [
            f"`{key}`", f"{len(tp)} / {len(ns)}",
            fmt_fixed(0)(g(ns, "goodput_kbps")), fmt_fixed(0)(g(tp, "goodput_kbps")), fmt_fixed(3)(r("goodput_kbps")),
            fmt_fixed(2)(g(ns, "rtt_ms")), fmt_fixed(2)(g(tp, "rtt_ms")), fmt_fixed(3)(r("rtt_ms")) + mark("rtt_ms"),
            f"{fmt_fixed(2)(g(ns, 'qdelay_ms'))} / {fmt_fixed(2)(g(tp, 'qdelay_ms'))}",
            f"{fmt_int(g(ns, 'drops'))} / {fmt_int(g(tp, 'drops'))}",
            f"{fmt_int(g(ns, 'retx'))} / {fmt_int(g(tp, 'retx'))}",
            "yes" if ok else "**no**",
        ]
    keys = [k for k, b in BENCHMARKS.items() if b.group == "dumbbell_cc"]
    merged = _merge_rows(rows, old_block, keys, lambda k: k)
    head = ["row", "seeds tpsim / ns-3", "goodput ns-3, kbit/s", "goodput tpsim", "tpsim / ns-3",
            "mean RTT ns-3, ms", "mean RTT tpsim, ms", "tpsim / ns-3",
            "queueing delay ns-3 / tpsim, ms", "drops ns-3 / tpsim", "retransmissions ns-3 / tpsim",
            "judged measures within tolerance"]
    outside = [line.split("|")[1].strip() for line in merged if line.rstrip().endswith("**no** |")]
    lines = [
        BLOCK.format(key="dumbbell_cc-summary"),
        "### `dumbbell_cc`: BBR, Vegas and Westwood+ on the 10 Mbit/s, 20 ms dumbbell (ns-3 / tpsim, medians)",
        "",
        "Rows `dumbbell-cc-<discipline>-<cc>-<flows>f`, DropTail 100 or CoDel 1000 packets; each row's block "
        "below has the spread over seeds, the definitions and the settings both sides share. Goodput: "
        "application bytes · 8 / (60 s − flow start), summed over the flows. Mean RTT: the mean of the data "
        "senders' RTT samples (ns-3: every sample its sockets took, in whole ms). Queueing delay and drops "
        "as in `dumbbell_aqm`. A row is within the tolerance when goodput is within 10 % of ns-3's and, on "
        "the BBR rows, mean RTT within 15 % "
        f"(rows not re-run on {date} are kept from their last run).",
        "",
        table(head, []) + "\n" + "\n".join(merged),
        "",
        ("Outside the tolerance: " + ", ".join(outside) + "." if outside
         else "Every row run is within the tolerance on its judged measures."),
        "",
    ]
    return "\n".join(lines)


#: Groups with a summary block of their own, rendered by these functions and placed before the
#: group's first row.
GROUP_SUMMARIES: Dict[str, Callable[..., str]] = {
    "dumbbell_aqm": render_dumbbell_summary,
    "dumbbell_cc": render_dumbbell_cc_summary,
}


def render_header(ctx: Dict[str, Any]) -> str:
    mach = ctx["machine"]
    return "\n".join(
        [
            f"Written by `{ctx['command']}` on {ctx['date']} (the run took {ctx['elapsed_s']:.0f} s). "
            "Do not edit between the markers: the next run replaces it.",
            "",
            f"* Machine: {mach['cores']} cores, {mach['cpu']}, {mach['os']}, Python {mach['python']}. "
            "It may be shared with other work (each scenario gives the load average at its start); "
            "compare medians, and expect ±10–15 % between repeats (on this shared VM, up to 2× at "
            "N ≥ 400 in `s6_scale`). tpsim's runs go in seed-major rounds (seed 1 of every "
            "scenario, then seed 2, …), so a spell of load falls on one seed of every scenario.",
            f"* tpsim {ctx['tpsim_version']} as installed in that Python, through `tpsim.run` in a fresh "
            "process per seed (`python benches/compare_ns3.py tpsim-worker ...`). Event-loop time is "
            "`Results.engine_seconds`; metrics come from the `flows` and `network` tables.",
            f"* ns-3 from the `{NS3_WHEEL}` wheel (`{ctx['ns3_libs']}`, built with NS_ASSERT on and "
            f"NS_LOG off), programs of `shared/ns3` (and tpsim's own, `benches/ns3`) compiled with {ctx['gxx']} `{ctx['cxxflags']} -std=c++20`; "
            "FlowMonitor and the trace counters on (they cost about 7 % of `Simulator::Run`, per the "
            "ns-3 README). Event-loop time is `wall_run_s`; metrics from FlowMonitor.",
            f"* Both sides: one process per seed under `{TIME_TOOL} -v` (peak RSS), wall time measured "
            "around the process; runs one at a time.",
            "",
        ]
    )


def replace_section(text: str, body: str) -> str:
    """``text`` with the part between the markers replaced by ``body``; when the markers are
    absent, a new section with them is appended at the end. Nothing outside the markers
    changes."""
    b, e = text.find(BEGIN), text.find(END)
    block = f"{BEGIN}\n{body.strip()}\n{END}"
    if b != -1 and e != -1 and e > b:
        return text[:b] + block + text[e + len(END):]
    if b != -1 or e != -1:
        raise ValueError(f"docs marker mismatch: need both {BEGIN} and {END}, in that order")
    if not text:
        sep = ""
    elif text.endswith("\n\n"):
        sep = ""
    elif text.endswith("\n"):
        sep = "\n"
    else:
        sep = "\n\n"
    return f"{text}{sep}{SECTION_TITLE}\n\n{block}\n"


def current_section(text: str) -> str:
    b, e = text.find(BEGIN), text.find(END)
    return text[b + len(BEGIN):e] if (b != -1 and e != -1 and e > b) else ""


def split_blocks(section: str) -> Dict[str, str]:
    """Scenario key -> its block (from its marker line to the next marker or the end)."""
    ms = list(BLOCK_RE.finditer(section))
    out = {}
    for i, m in enumerate(ms):
        stop = ms[i + 1].start() if i + 1 < len(ms) else len(section)
        out[m.group(1)] = section[m.start():stop].strip() + "\n"
    return out


def compose_section(header: str, new_blocks: Dict[str, str], old_section: str, order: Sequence[str]) -> str:
    """The section body: the header, then one block per scenario in ``order``; a scenario not
    re-run keeps its previous block."""
    old = split_blocks(old_section)
    blocks = []
    for key in order:
        if key in new_blocks:
            blocks.append(new_blocks[key].strip())
        elif key in old:
            blocks.append(old[key].strip())
    for key, blk in old.items():  # blocks of scenarios no longer in the list: keep them last
        if key not in order and key not in new_blocks:
            blocks.append(blk.strip())
    return header.strip() + "\n\n" + "\n\n".join(blocks) + "\n"


def write_doc(path: Path, header: str, new_blocks: Dict[str, str], order: Sequence[str]) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    body = compose_section(header, new_blocks, current_section(text), order)
    atomic_write_text(path, replace_section(text, body))


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def report_path(doc: Optional[str], quick: bool) -> Optional[Path]:
    """Where the report goes: ``None`` prints it (``--doc -``, or ``--quick`` without
    ``--doc``); otherwise the ``--doc`` file, or :data:`REPORT` for a full run."""
    if doc == "-" or (doc is None and quick):
        return None
    return Path(doc) if doc is not None else REPORT


def select_keys(name: str) -> List[str]:
    """The scenario keys ``name`` stands for: a key, or a group (``s6_scale``: every N)."""
    if name in BENCHMARKS:
        return [name]
    return [k for k, b in BENCHMARKS.items() if b.group == name]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python benches/compare_ns3.py",
        description=("Run tpsim and ns-3 on the same scenarios and write a Markdown report of the comparison "
                     f"(default {REPORT.relative_to(REPO)}; docs/benchmarks.md is maintained by hand)."),
    )
    groups = sorted({b.group for b in BENCHMARKS.values() if b.group})
    ap.add_argument("--scenarios", default=",".join(BENCHMARKS),
                    help=f"comma-separated scenario keys or groups (default: all). Groups: {', '.join(groups)}. "
                         f"Keys: {', '.join(BENCHMARKS)}")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per side, 1..N (default 5; 1 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="1 seed, short simulated time; prints the report instead of writing a file unless --doc is given")
    ap.add_argument("--ns3-dir", type=Path, default=None,
                    help="the shared ns-3 programs (default $TPSIM_NS3_DIR or ../shared/ns3 beside the repository)")
    ap.add_argument("--doc", default=None,
                    help=f"markdown file to update between its markers (default {REPORT.relative_to(REPO)}, "
                         "created if missing; '-' prints the report)")
    ap.add_argument("--cache-dir", type=Path, default=CACHE, help="venv, builds and ns-3 results (default benches/.cache)")
    ap.add_argument("--fresh-ns3", action="store_true", help="re-run ns-3 even when a cached result exists")
    ap.add_argument("--ns3-only", action="store_true",
                    help="only run the ns-3 side of the missing seeds (fills the cache; writes nothing else)")
    ap.add_argument("--ns3-cached-only", action="store_true",
                    help="never run ns-3: use the cached seeds only (the table says how many)")
    a = ap.parse_args(list(argv))
    keys: List[str] = []
    unknown = []
    for k in (k.strip() for k in a.scenarios.split(",") if k.strip()):
        sel = select_keys(k)
        if not sel:
            unknown.append(k)
        keys += [s for s in sel if s not in keys]
    if unknown or not keys:
        groups = sorted({b.group for b in BENCHMARKS.values() if b.group})
        ap.error(f"unknown scenario(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(BENCHMARKS)} "
                 f"(or a group: {', '.join(groups)})")
    a.keys = keys
    if a.seeds is None:
        a.seeds = 1 if a.quick else 5
    if a.seeds < 1:
        ap.error("--seeds must be >= 1")
    return a


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "tpsim-worker":
        return tpsim_worker(argv[1:])
    a = parse_args(argv)
    t_start = time.perf_counter()
    ns3_dir = (a.ns3_dir or ns3_dir_default()).resolve()
    if not (ns3_dir / "build.sh").is_file():
        log(f"no ns-3 programs at {ns3_dir} (build.sh missing); pass --ns3-dir or set TPSIM_NS3_DIR")
        return 2
    if not os.access(TIME_TOOL, os.X_OK):
        log(f"{TIME_TOOL} is missing (peak RSS needs GNU time): apt-get install -y time")
        return 2
    cache = a.cache_dir.resolve()
    machine = machine_info()
    py = ensure_venv(cache)
    binaries = {}
    for key in a.keys:  # one compiler at a time
        prog = BENCHMARKS[key].ns3_program
        if prog not in binaries:
            binaries[prog] = ensure_program(ns3_dir, prog, py, cache)
    _, _, ns3_lib_version = wheel_paths(py)
    seeds = list(range(1, a.seeds + 1))
    blocks: Dict[str, str] = {}
    raw: Dict[str, Any] = {}
    tpsim_version = "?"
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    all_runs: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    for key in a.keys:
        b = BENCHMARKS[key]
        ns_args = b.quick_ns3_args if a.quick else b.ns3_args
        runs: Dict[str, List[Dict[str, Any]]] = {"ns-3": [], "tpsim": []}
        for s in seeds:
            rec = run_ns3(b, binaries[b.ns3_program], ns3_dir, ns_args, s, cache, a.fresh_ns3,
                          cached_only=a.ns3_cached_only)
            if rec is not None:
                runs["ns-3"].append(rec)
        if not runs["ns-3"] and not a.ns3_only:
            log(f"{key}: no cached ns-3 result (--ns3-cached-only): tpsim side only")
        all_runs[key] = runs
    if not a.ns3_only:
        # Seed-major rounds (seed 1 of every scenario, then seed 2, ...): a spell of load on a
        # shared machine then slows one seed of every scenario alike instead of every seed of
        # one scenario, and the medians over seeds compare like with like (the s6_scale
        # flatness across N above all).
        for s in seeds:
            for key in a.keys:
                b = BENCHMARKS[key]
                tp_sets = b.quick_tpsim_set if a.quick else ()
                all_runs[key]["tpsim"].append(run_tpsim(b, tp_sets, s, quick=a.quick))
        for key in a.keys:
            b = BENCHMARKS[key]
            runs = all_runs[key]
            sim_time = b.quick_sim_time_s if a.quick else b.sim_time_s
            tpsim_version = runs["tpsim"][0]["output"]["tpsim_version"]
            ctx = {"sim_time_s": sim_time, "machine": machine, "date": date}
            blocks[key] = render_scenario(b, runs, ctx)
            raw[key] = runs
    elapsed = time.perf_counter() - t_start
    if a.ns3_only:
        log(f"ns-3 results cached; done in {elapsed:.1f} s")
        return 0
    doc_path = report_path(a.doc, a.quick)
    old_blocks = split_blocks(current_section(doc_path.read_text(encoding="utf-8"))) if (doc_path and doc_path.exists()) else {}
    groups_run = {BENCHMARKS[k].group for k in blocks}
    if "s6_scale" in groups_run:
        blocks["s6_scale-summary"] = render_scale_summary(raw, date, old_blocks.get("s6_scale-summary", ""))
    for group, render in GROUP_SUMMARIES.items():
        if group in groups_run:
            blocks[f"{group}-summary"] = render(raw, date, old_blocks.get(f"{group}-summary", ""))
    blocks["summary"] = render_summary(raw, date, old_blocks.get("summary", ""))
    command = "python benches/compare_ns3.py " + shlex.join(argv) if argv else "python benches/compare_ns3.py"
    header = render_header({
        "command": command.strip(), "date": date, "elapsed_s": elapsed, "machine": machine,
        "tpsim_version": tpsim_version, "ns3_libs": f"libns3.{ns3_lib_version}-*", "gxx": gxx_version(),
        "cxxflags": os.environ.get("CXXFLAGS", "-O2"),
    })
    atomic_write_text(cache / "compare-ns3-last.json", json.dumps({"date": date, "machine": machine, "runs": raw}, indent=1))
    if doc_path is None:
        print(compose_section(header, blocks, "", [k for k in doc_order() if k in blocks]))
    else:
        write_doc(doc_path, header, blocks, doc_order())
        log(f"wrote {doc_path}")
    log(f"done in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
