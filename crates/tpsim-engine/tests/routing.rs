//! Ad hoc routing through the whole stack (channel, DCF, interface queues): AODV, OLSR and the
//! oracle deliver over multi-hop chains; AODV's routes against BFS on random topologies; a
//! link break repaired over an alternative path; one-way links with ns-2's preset.

mod common;

use common::sim;
use std::collections::VecDeque;
use tpsim_engine::{DropReason, RunResult};

fn scenario(positions: &[(f64, f64)], routing: &str, flows: &str, duration: &str, extra: &str) -> String {
    let pos: Vec<String> = positions.iter().map(|(x, y)| format!("[\"{x}m\", \"{y}m\"]")).collect();
    format!(
        "[simulation]\nduration = \"{duration}\"\ndrain = \"5s\"\nsizes = \"ns2\"\n[nodes]\ncount = {}\nplacement = {{ kind = \"explicit\", positions = [{}] }}\n{extra}\n[radio]\n[routing]\n{routing}\n{flows}",
        positions.len(),
        pos.join(", ")
    )
}

fn cbr(src: u32, dst: u32, interval: &str, start: &str) -> String {
    common::cbr(src, dst, "512B", interval, start)
}

fn chain(n: usize) -> Vec<(f64, f64)> {
    (0..n).map(|i| (i as f64 * 200.0, 0.0)).collect()
}

fn net(r: &RunResult, col: usize) -> u64 {
    r.network.routing_by_type[col]
}

#[test]
fn aodv_discovers_a_four_hop_route_and_delivers() {
    for preset in ["rfc", "ns2", "ns3"] {
        let r = sim(
            &scenario(
                &chain(5),
                &format!("protocol = \"aodv\"\npreset = \"{preset}\""),
                &cbr(0, 4, "250ms", "1s"),
                "30s",
                "",
            ),
            1,
        );
        let f = &r.flows[0];
        assert_eq!(f.rx_packets, f.tx_packets, "{preset}: {:?}", r.network);
        assert_eq!(f.hops_mean, Some(4.0));
        assert!(net(&r, 0) >= 4, "{preset}: RREQs {:?}", r.network.routing_by_type);
        assert!(net(&r, 1) >= 4, "{preset}: one RREP per hop back");
        let lat = r.network.route_discovery_latency_s.expect("a discovery completed");
        assert!(lat > 0.0 && lat < 1.0, "{preset}: discovery took {lat} s");
        assert!(r.network.routing_packets > 0 && r.network.normalized_routing_load.unwrap() > 0.0);
    }
}

/// Each AODV preset's mark on the network: `ns2` sends no HELLOs (link-layer detection),
/// `rfc` sends them only from nodes on an active route (RFC 3561 §6.9), `ns3` from every node
/// from the start (its other four behaviours are tested in tpsim-routing).
#[test]
fn each_aodv_preset_has_its_own_hello_behaviour() {
    // Node 5 stands 200 m above node 2, off the 0 → 4 route.
    let mut pos = chain(5);
    pos.push((400.0, 200.0));
    let flows = cbr(0, 4, "250ms", "1s");
    let run = |preset: &str| {
        sim(
            &scenario(
                &pos,
                &format!("protocol = \"aodv\"\npreset = \"{preset}\""),
                &flows,
                "20s",
                "",
            ),
            1,
        )
    };
    let (rfc, ns2, ns3) = (run("rfc"), run("ns2"), run("ns3"));
    for (name, r) in [("rfc", &rfc), ("ns2", &ns2), ("ns3", &ns3)] {
        for f in &r.flows {
            assert!(f.pdr.unwrap() > 0.95, "{name}: flow {} pdr {:?}", f.key.flow, f.pdr);
        }
    }
    let hellos = |r: &RunResult| net(r, 4);
    assert_eq!(hellos(&ns2), 0, "ns2: no HELLOs");
    // Every one of the 6 nodes sends a HELLO about every second for 25 s (20 s + drain).
    assert!(hellos(&ns3) >= 6 * 20, "ns3: HELLOs from every node: {}", hellos(&ns3));
    // rfc: only the 5 route nodes, and only once they are on an active route.
    assert!(hellos(&rfc) > 0 && hellos(&rfc) <= 5 * 25, "rfc: {}", hellos(&rfc));
    assert!(hellos(&rfc) < hellos(&ns3));
}

#[test]
fn olsr_converges_then_delivers_over_four_hops() {
    let r = sim(
        &scenario(&chain(5), "protocol = \"olsr\"", &cbr(0, 4, "250ms", "20s"), "40s", ""),
        1,
    );
    let f = &r.flows[0];
    assert!(f.tx_packets >= 79);
    assert_eq!(f.rx_packets, f.tx_packets, "{:?}", r.network);
    assert_eq!(f.hops_mean, Some(4.0));
    assert!(
        net(&r, 4) > 0 && net(&r, 5) > 0,
        "HELLO and TC sent: {:?}",
        r.network.routing_by_type
    );
}

#[test]
fn oracle_delivers_without_control_traffic() {
    let r = sim(
        &scenario(&chain(6), "protocol = \"oracle\"", &cbr(0, 5, "250ms", "1s"), "20s", ""),
        1,
    );
    assert_eq!(r.flows[0].rx_packets, r.flows[0].tx_packets);
    assert_eq!(r.flows[0].hops_mean, Some(5.0));
    assert_eq!(r.network.routing_packets, 0);
}

/// BFS hop distances from `src` on the unit-disk graph of range `range`.
fn bfs(pos: &[(f64, f64)], range: f64, src: usize) -> Vec<Option<u32>> {
    let mut d = vec![None; pos.len()];
    d[src] = Some(0);
    let mut q = VecDeque::from([src]);
    while let Some(u) = q.pop_front() {
        for v in 0..pos.len() {
            let (dx, dy) = (pos[u].0 - pos[v].0, pos[u].1 - pos[v].1);
            let dist = (dx * dx + dy * dy).sqrt();
            if d[v].is_none() && dist <= range {
                d[v] = Some(d[u].unwrap() + 1);
                q.push_back(v);
            }
        }
    }
    d
}

/// RFC 3561 §6.5 keeps the first copy of an RREQ; jitter can make it come a longer way. Over
/// 100 random connected topologies (20 nodes in 800 m × 800 m, ns-2's 250 m range), the route
/// AODV finds through the full stack is at most one hop longer than the shortest path and
/// equal to it in at least 95 % of the discoveries.
#[test]
fn aodv_routes_are_shortest_paths_on_random_topologies() {
    let mut rng = tpsim_core::RngStream::new(tpsim_core::StreamKey {
        seed: 42,
        run: 0,
        kind: tpsim_core::OwnerKind::Scenario,
        owner_id: 0,
        module: tpsim_core::Module::Placement,
    });
    let (mut equal, mut total, mut topologies) = (0, 0, 0);
    while topologies < 100 {
        let pos: Vec<(f64, f64)> = (0..20)
            .map(|_| (rng.uniform_range(0.0, 800.0), rng.uniform_range(0.0, 800.0)))
            .collect();
        // ns-2's Two-Ray Ground range is 250 m (to within 1e-3 m); stay clear of the edge.
        let near_edge = (0..20).any(|i| {
            (0..20).any(|j| {
                let (dx, dy) = (pos[i].0 - pos[j].0, pos[i].1 - pos[j].1);
                let d = (dx * dx + dy * dy).sqrt();
                (249.0..251.0).contains(&d)
            })
        });
        let dist = bfs(&pos, 250.0, 0);
        if near_edge || dist.iter().any(Option::is_none) {
            continue;
        }
        topologies += 1;
        let dst = 1 + (rng.next_u64() % 19) as u32;
        let r = sim(
            &scenario(&pos, "protocol = \"aodv\"", &cbr(0, dst, "500ms", "1s"), "4s", ""),
            topologies,
        );
        let f = &r.flows[0];
        assert!(
            f.rx_packets > 0,
            "topology {topologies}: nothing delivered {:?}",
            r.network
        );
        let hops = f.hops_mean.unwrap();
        let shortest = dist[dst as usize].unwrap() as f64;
        assert!(
            hops <= shortest + 1.0,
            "topology {topologies}: {hops} hops vs shortest {shortest}"
        );
        total += 1;
        if hops == shortest {
            equal += 1;
        }
    }
    let frac = equal as f64 / total as f64;
    println!("AODV routes equal to BFS: {equal}/{total} = {frac:.3}");
    assert!(frac >= 0.95, "{equal}/{total}");
}

/// 0 – 1 – 2 – 3 with a detour 1 – 4 – 5 – 3 (one hop longer). At t = 10 s node 2 leaves (moves
/// 1 km away at 1000 m/s): the MAC's failure to reach it makes node 1 send an RERR, node 0
/// rediscovers, and delivery resumes over the detour within seconds.
/// The run of [`link_break_yields_rerr_and_delivery_resumes_over_the_alternative`]'s network
/// (ns-2's AODV) with `flow`, and ns-2's AODV quirk if `quirk`.
fn detour_break(flow: &str, quirk: bool) -> RunResult {
    let pos = [
        (0.0, 0.0),
        (200.0, 0.0),
        (400.0, 0.0),
        (600.0, 0.0),
        (330.0, 180.0),
        (500.0, 200.0),
    ];
    let mobility = "[nodes.mobility]\nmodel = \"waypoints\"\nwaypoints = [{ node = 2, at = \"10s\", to = [\"400m\", \"1400m\"], speed = \"1000m/s\" }]\n[output]\nbin = \"1s\"";
    let mut text = scenario(&pos, "protocol = \"aodv\"\npreset = \"ns2\"", flow, "30s", mobility);
    if quirk {
        text = text.replacen(
            "[simulation]\n",
            "[simulation]\nns2_quirks = [\"aodv-data-packet-list\"]\n",
            1,
        );
    }
    sim(&text, 1)
}

#[test]
fn link_break_yields_rerr_and_delivery_resumes_over_the_alternative() {
    let r = detour_break(&cbr(0, 3, "100ms", "1s"), false);
    let f = &r.flows[0];
    assert!(net(&r, 2) >= 1, "an RERR was sent: {:?}", r.network.routing_by_type);
    assert!(r.network.route_discoveries_failed == 0);
    // Goodput per second: full before the break, a gap of at most 3 s, full again after.
    let t = &r.timeseries;
    let per_s: Vec<f64> = (0..t.series.len())
        .filter(|&i| t.series[i] == "goodput_kbps" && t.flow[i] == Some(0))
        .map(|i| t.value[i].unwrap())
        .collect();
    let full = 512.0 * 8.0 * 10.0 / 1000.0;
    for (s, &g) in per_s.iter().enumerate().take(10).skip(2) {
        assert!((g - full).abs() < 1e-6, "second {s}: {g} kbit/s before the break");
    }
    let resumed = (10..20).find(|&s| (per_s[s] - full).abs() < 1e-6 && (per_s[s + 1] - full).abs() < 1e-6);
    let resumed = resumed.expect("delivery resumed");
    assert!(resumed <= 13, "resumed only at {resumed} s: {per_s:?}");
    for (s, &g) in per_s.iter().enumerate().take(30).skip(resumed) {
        assert!((g - full).abs() < 1e-6, "second {s}: {g} kbit/s after the repair");
    }
    // Losses are the packets caught by the break, each with one reason.
    let lost = f.tx_packets - f.rx_packets;
    assert!(lost > 0 && lost < 30, "{lost} lost");
    let d = &r.network.drops;
    assert_eq!(
        d[DropReason::MacRetry as usize] + d[DropReason::LinkBreak as usize] + d[DropReason::NoRoute as usize],
        lost
    );
}

/// The break of [`link_break_yields_rerr_and_delivery_resumes_over_the_alternative`] with
/// flow 0 → 3 over `transport` (its flow keys `keys`), ns-2's AODV quirk switched on or off:
/// the RERRs sent and the goodput of each second (kbit/s).
fn break_with_quirk(transport: &str, keys: &str, quirk: bool) -> (u64, Vec<f64>) {
    let flow = cbr(0, 3, "100ms", "1s").replace("transport = \"udp\"", &format!("transport = \"{transport}\"\n{keys}"));
    let r = detour_break(&flow, quirk);
    let t = &r.timeseries;
    let per_s = (0..t.series.len())
        .filter(|&i| t.series[i] == "goodput_kbps" && t.flow[i] == Some(0))
        .map(|i| t.value[i].unwrap_or(0.0))
        .collect();
    (net(&r, 2), per_s)
}

/// ns-2.35's quirk `aodv-data-packet-list` (its `rt_ll_failed` breaks a link only for the
/// packet types of `DATA_PACKET`): a TFRC flow whose relay leaves is not rerouted, since no
/// RERR follows its MAC failures, and its packets keep refreshing the dead route, so nothing is
/// delivered for the rest of the run; without the quirk an RERR follows and delivery resumes
/// within 3 s. A UDP flow (ns-2's CBR type) is rerouted with the quirk too.
#[test]
fn the_aodv_quirk_keeps_a_tfrc_flow_on_a_broken_route() {
    let tfrc = "tfrc = { profile = \"ns2\" }";
    let resumed = |g: &[f64]| (11..g.len().min(30)).find(|&s| g[s] > 0.0);
    let (rerr, g) = break_with_quirk("tfrc", tfrc, false);
    assert!(
        rerr >= 1 && resumed(&g).is_some_and(|s| s <= 13),
        "without the quirk: {rerr} RERRs, {g:?}"
    );
    let (rerr, g) = break_with_quirk("tfrc", tfrc, true);
    assert_eq!(rerr, 0, "{g:?}");
    assert!(g[2..10].iter().all(|&x| x > 0.0), "delivers before the break: {g:?}");
    assert_eq!(resumed(&g), None, "never rerouted: {g:?}");
    let (rerr, g) = break_with_quirk("udp", "", true);
    assert!(
        rerr >= 1 && resumed(&g).is_some_and(|s| s <= 13),
        "UDP with the quirk: {rerr} RERRs, {g:?}"
    );
}

/// Study A's mixed ranges on a small field: the sink and two gateways reach 150 m, sensors
/// 60 m, so gateways' frames reach sensors that cannot answer (one-way links). With ns-2's
/// AODV (link-layer detection, no HELLO) every sensor still delivers its reports.
#[test]
fn sensors_behind_one_way_links_deliver_with_the_ns2_preset() {
    // sink 0, gateways 1-2, sensors 3-8: 3/4 beside gateway 1, 5 behind 3 (100 m from
    // gateway 1: one-way), 6/7 beside gateway 2, 8 behind 7.
    let pos: [(f64, f64); 9] = [
        (300.0, 100.0),
        (180.0, 100.0),
        (420.0, 100.0),
        (130.0, 100.0),
        (180.0, 50.0),
        (80.0, 100.0),
        (470.0, 100.0),
        (420.0, 150.0),
        (420.0, 200.0),
    ];
    let range = |i: usize| if i <= 2 { 150.0 } else { 60.0 };
    let d = |i: usize, j: usize| {
        let (dx, dy) = (pos[i].0 - pos[j].0, pos[i].1 - pos[j].1);
        (dx * dx + dy * dy).sqrt()
    };
    let one_way = (0..9)
        .flat_map(|i| (0..9).map(move |j| (i, j)))
        .filter(|&(i, j)| d(i, j) <= range(i) && d(i, j) > range(j))
        .count();
    assert!(one_way >= 4, "the layout has one-way links ({one_way})");
    let extra = "[sensors]\nsink = 0\nnodes = [3, 4, 5, 6, 7, 8]\ntransport = \"udp\"\nsize = \"256B\"\ninterval = \"2s\"\nstart = \"1s\"\n";
    let text = scenario(&pos, "protocol = \"aodv\"\npreset = \"ns2\"", "", "100s", extra).replace(
        "[radio]\n",
        "[radio]\nfrequency = \"2.4GHz\"\ntx_range = \"60m\"\nnode_ranges = [{ nodes = [0, 1, 2], range = \"150m\" }]\n",
    );
    let r = sim(&text, 1);
    assert_eq!(r.flows.len(), 6);
    for f in &r.flows {
        assert!(f.tx_packets >= 49, "{f:?}");
        let pdr = f.rx_packets as f64 / f.tx_packets as f64;
        assert!(pdr >= 0.95, "sensor {} delivers {pdr}: {:?}", f.key.src, r.network);
    }
    assert_eq!(r.flows.iter().find(|f| f.key.src == 5).unwrap().hops_mean, Some(3.0));
    // The contrast of study A (docs/studies.md): with HELLOs (RFC defaults) a gateway's HELLO heard by
    // a sensor that cannot answer installs a one-way route, and that sensor is stranded.
    let hello = sim(&text.replace("preset = \"ns2\"", "preset = \"rfc\""), 1);
    let worst = hello
        .flows
        .iter()
        .map(|f| f.rx_packets as f64 / f.tx_packets as f64)
        .fold(1.0, f64::min);
    assert!(worst < 0.5, "with HELLOs the worst sensor still delivers {worst}");
}

/// The IPv4 total lengths of the UDP packets from 10.128.0.1 (node 0) in a pcap trace.
fn udp_lengths_from_node0(pcap: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut at = 24; // global header
    while at + 16 <= pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        let rec = &pcap[at + 16..(at + 16 + len).min(pcap.len())];
        // Find an IPv4 header from 10.128.0.1 carrying UDP (protocol 17) to port 1024.
        for i in 0..rec.len().saturating_sub(24) {
            let h = &rec[i..];
            if h[0] == 0x45 && h[9] == 17 && h[12..16] == [10, 128, 0, 1] && h[22..24] == 1024u16.to_be_bytes() {
                out.push(u16::from_be_bytes([h[2], h[3]]));
                break;
            }
        }
        at += 16 + len;
    }
    out
}

/// ns-2's AODV adds a 20-byte IP header to the non-TCP packets a node originates (ns-2.35
/// `AODV::recv`: its UDP/CBR sizes carry none): under `sizes = "ns2"` a 256-byte CBR packet
/// goes on the air as 276 bytes with AODV, and stays 256 bytes with static routes.
#[test]
fn ns2_sizes_with_aodv_add_an_ip_header_to_originated_udp() {
    let dir = std::env::temp_dir().join(format!("tpsim-aodv-hdr-{}", std::process::id()));
    for (routing, want) in [
        ("protocol = \"aodv\"\npreset = \"ns2\"", 276u16),
        ("protocol = \"static\"", 256),
    ] {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let text = scenario(
            &chain(2),
            routing,
            &cbr(0, 1, "500ms", "1s").replace("512B", "256B"),
            "5s",
            "[output]\npcap = true",
        );
        let sc = tpsim_scenario::load(&text, "<test>").unwrap();
        let opts = tpsim_engine::RunOptions {
            seed: 1,
            run: 0,
            pcap_dir: Some(dir.clone()),
        };
        let r = tpsim_engine::run(&sc, &opts).unwrap();
        assert!(r.flows[0].rx_packets > 0);
        let pcap = std::fs::read(dir.join("node0.pcap")).expect("node 0's trace");
        let lens = udp_lengths_from_node0(&pcap);
        assert!(
            !lens.is_empty() && lens.iter().all(|&l| l == want),
            "{routing}: {lens:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
