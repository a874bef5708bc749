//! Property test: on random wired topologies with random loss, queue limits and traffic (UDP,
//! TCP variants, SCTP, TFRC, DCCP with CCID 2 and 3), every packet is accounted for exactly once (the conservation of docs/metrics.md, both levels),
//! also with random fault events (`[[events]]`) of every kind at random times.

use proptest::prelude::*;
use tpsim_engine::{run, DropReason, RunOptions};
use tpsim_scenario::load;

fn scenario(
    nodes: u32,
    links: &[(u32, u32, u32, u32, f64)],
    flows: &[(u32, u32, u32, bool, bool, u8)],
    drain_ms: u32,
    warmup_ms: u32,
) -> String {
    let mut t = format!(
        "[simulation]\nduration = \"3s\"\ndrain = \"{drain_ms}ms\"\nwarmup = \"{warmup_ms}ms\"\n[nodes]\ncount = {nodes}\n"
    );
    for &(a, b, rate_kbps, queue, loss) in links {
        t += &format!("[[links]]\nnodes = [{a}, {b}]\nrate = \"{rate_kbps}kbps\"\ndelay = \"5ms\"\nqueue = {queue}\nloss = {loss}\n");
    }
    for &(s, d, iv_ms, poisson, voip, transport) in flows {
        let kind = if voip { "voip" } else { "cbr" };
        let arr = if poisson && !voip {
            ", arrivals = \"poisson\""
        } else {
            ""
        };
        let (tr, app) = match transport % 9 {
            0 | 1 => (
                "udp",
                format!("{{ kind = \"{kind}\", size = \"300B\", interval = \"{iv_ms}ms\"{arr} }}"),
            ),
            2 => (
                "tcp",
                format!("{{ kind = \"{kind}\", size = \"700B\", interval = \"{iv_ms}ms\"{arr} }}"),
            ),
            3 => (
                "tcp-reno",
                format!("{{ kind = \"bulk\", size = \"1000B\", bytes = \"{}kB\" }}", 10 * iv_ms),
            ),
            4 => ("tcp-tahoe", "{ kind = \"bulk\", size = \"500B\" }".to_string()),
            5 => (
                "sctp",
                format!("{{ kind = \"bulk\", size = \"800B\", bytes = \"{}kB\" }}", 10 * iv_ms),
            ),
            6 => (
                "tfrc",
                format!("{{ kind = \"cbr\", size = \"500B\", interval = \"{iv_ms}ms\"{arr} }}"),
            ),
            7 => (
                if voip { "dccp-ccid3" } else { "dccp" },
                format!("{{ kind = \"cbr\", size = \"400B\", interval = \"{iv_ms}ms\"{arr} }}"),
            ),
            _ => (
                "stop-and-wait",
                format!("{{ kind = \"{kind}\", size = \"200B\", interval = \"{iv_ms}ms\"{arr} }}"),
            ),
        };
        t += &format!("[[flows]]\nsrc = {s}\ndst = {d}\ntransport = \"{tr}\"\napp = {app}\n");
    }
    t
}

/// `[[events]]` tables for random draws `(kind, target, at_ms, value)` on a scenario with
/// `n` nodes and `links` (each a pair of nodes); `radio`: interface events name the radio
/// rather than a link end. Times are below `max_ms`.
fn events(draws: &[(u8, u32, u32, u32)], n: u32, links: &[(u32, u32)], radio: bool, max_ms: u32) -> String {
    let mut t = String::new();
    for &(kind, target, at_ms, v) in draws {
        let at = at_ms % max_ms;
        let link = (!links.is_empty()).then(|| target % links.len() as u32);
        let body = match (kind % 7, link) {
            (0, Some(l)) => format!("kind = \"link_down\"\nlink = {l}"),
            (1, Some(l)) => format!("kind = \"link_up\"\nlink = {l}"),
            (k @ (2 | 3), _) => {
                let dir = if k == 2 { "down" } else { "up" };
                match link {
                    Some(l) if !radio => {
                        let (a, b) = links[l as usize];
                        let node = if v % 2 == 0 { a } else { b };
                        format!("kind = \"interface_{dir}\"\nnode = {node}\nlink = {l}")
                    }
                    _ => format!("kind = \"interface_{dir}\"\nnode = {}\nradio = true", target % n),
                }
            }
            (6, Some(l)) => {
                let change = match v % 3 {
                    0 => format!("rate = \"{}kbps\"", 64 + v % 2000),
                    1 => format!("delay = \"{}ms\"", v % 200),
                    _ => format!("loss = {}", (v % 11) as f64 / 10.0),
                };
                format!("kind = \"link_change\"\nlink = {l}\n{change}")
            }
            (k, _) => {
                let dir = if k % 2 == 0 { "down" } else { "up" };
                format!("kind = \"node_{dir}\"\nnode = {}", target % n)
            }
        };
        t += &format!("[[events]]\nat = \"{at}ms\"\n{body}\n");
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// The wired conservation property with random fault events of every kind.
    #[test]
    fn every_packet_is_accounted_for_across_fault_events(
        n in 3u32..7,
        extra in proptest::collection::vec((0u32..7, 0u32..7, 64u32..2000, 1u32..20, 0.0f64..0.3), 0..4),
        flows in proptest::collection::vec((0u32..7, 0u32..7, 1u32..40, any::<bool>(), any::<bool>(), any::<u8>()), 1..5),
        draws in proptest::collection::vec((any::<u8>(), any::<u32>(), any::<u32>(), any::<u32>()), 1..10),
        drain_ms in 0u32..200,
        seed in 0u64..1000,
    ) {
        let mut links: Vec<(u32, u32, u32, u32, f64)> = (0..n - 1).map(|i| (i, i + 1, 500, 5, 0.05)).collect();
        links.extend(extra.into_iter().map(|(a, b, r, q, l)| (a % n, b % n, r, q, l)).filter(|l| l.0 != l.1));
        let flows: Vec<_> = flows.into_iter().map(|(s, d, iv, p, v, t)| (s % n, d % n, iv, p, v, t)).filter(|f| f.0 != f.1).collect();
        prop_assume!(!flows.is_empty());
        let ends: Vec<(u32, u32)> = links.iter().map(|l| (l.0, l.1)).collect();
        let text = scenario(n, &links, &flows, drain_ms, 0) + &events(&draws, n, &ends, false, 3000);
        let sc = load(&text, "<prop>").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = run(&sc, &RunOptions { seed, run: 0, pcap_dir: None }).unwrap();
        let mut dropped = 0;
        for f in &r.flows {
            prop_assert_eq!(f.tx_segments, f.rx_segments + f.dropped_segments + f.in_flight_segments, "transport level, flow {} {}\n{}", f.key.flow, f.key.direction, text);
            if f.key.transport == "udp" {
                prop_assert_eq!(f.tx_packets, f.rx_packets + f.dropped_segments + f.in_flight_segments + f.buffered_packets, "message level\n{}", text);
            } else {
                prop_assert!(f.rx_packets + f.buffered_packets <= f.tx_packets, "message level (tcp)");
            }
            dropped += f.dropped_segments;
        }
        let by_reason: u64 = DropReason::ALL.iter().map(|&d| r.network.drops[d as usize]).sum();
        prop_assert!(by_reason >= dropped, "every drop has exactly one reason");
        if r.flows.iter().all(|f| f.key.transport == "udp") {
            prop_assert_eq!(by_reason, dropped, "every drop has exactly one reason");
        }
        // Static routes are not recomputed: a down link drops, it never makes a route vanish.
        prop_assert_eq!(r.network.drops[DropReason::NoRoute as usize], 0);
        // Same scenario and seed, same results.
        let again = run(&sc, &RunOptions { seed, run: 0, pcap_dir: None }).unwrap();
        prop_assert_eq!(&again.flows, &r.flows);
        prop_assert_eq!(&again.network, &r.network);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn every_packet_is_delivered_dropped_or_in_flight(
        n in 3u32..8,
        extra in proptest::collection::vec((0u32..8, 0u32..8, 64u32..2000, 1u32..20, 0.0f64..0.3), 0..6),
        flows in proptest::collection::vec((0u32..8, 0u32..8, 1u32..40, any::<bool>(), any::<bool>(), any::<u8>()), 1..6),
        drain_ms in 0u32..200,
        warmup_ms in prop_oneof![Just(0u32), 1u32..2500],
        seed in 0u64..1000,
    ) {
        // A chain keeps the graph connected; extra links add cycles and parallel paths.
        let mut links: Vec<(u32, u32, u32, u32, f64)> = (0..n - 1).map(|i| (i, i + 1, 500, 5, 0.05)).collect();
        links.extend(extra.into_iter().map(|(a, b, r, q, l)| (a % n, b % n, r, q, l)).filter(|l| l.0 != l.1));
        let flows: Vec<_> = flows.into_iter().map(|(s, d, iv, p, v, t)| (s % n, d % n, iv, p, v, t)).filter(|f| f.0 != f.1).collect();
        prop_assume!(!flows.is_empty());
        let text = scenario(n, &links, &flows, drain_ms, warmup_ms);
        let sc = load(&text, "<prop>").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let r = run(&sc, &RunOptions { seed, run: 0, pcap_dir: None }).unwrap();
        let mut dropped = 0;
        let mut any_tcp = false;
        for f in &r.flows {
            prop_assert_eq!(f.tx_segments, f.rx_segments + f.dropped_segments + f.in_flight_segments, "transport level, flow {} {}", f.key.flow, f.key.direction);
            if f.key.transport == "udp" {
                prop_assert_eq!(f.tx_packets, f.rx_packets + f.dropped_segments + f.in_flight_segments + f.buffered_packets, "message level");
            } else {
                // Reliable: nothing is lost; the difference is still buffered or on its way.
                any_tcp = true;
                prop_assert!(f.rx_packets + f.buffered_packets <= f.tx_packets, "message level (tcp)");
            }
            prop_assert!(f.rx_bytes <= f.tx_bytes);
            dropped += f.dropped_segments;
        }
        let by_reason: u64 = DropReason::ALL.iter().map(|&d| r.network.drops[d as usize]).sum();
        if any_tcp {
            // Dropped SYN, FIN and pure-ACK segments carry no flow's data: counted by reason only.
            prop_assert!(by_reason >= dropped, "every drop has exactly one reason");
        } else {
            prop_assert_eq!(by_reason, dropped, "every drop has exactly one reason");
        }
        prop_assert_eq!(r.network.drops[DropReason::NoRoute as usize], 0);
    }
}

/// A random wireless scenario (counted from `warmup_ms` on): `n` radio nodes in a 600 m square (static or random
/// waypoint), AODV or OLSR, optional ARP, optional energy with node death, and UDP/TCP flows.
#[allow(clippy::too_many_arguments)]
fn wireless(
    n: u32,
    moving: bool,
    olsr: bool,
    arp: bool,
    energy_j: Option<f64>,
    flows: &[(u32, u32, u32, bool)],
    drain_ms: u32,
    warmup_ms: u32,
) -> String {
    let mut t = format!(
        "[simulation]\nduration = \"12s\"\ndrain = \"{drain_ms}ms\"\nwarmup = \"{warmup_ms}ms\"\nsizes = \"ns2\"\n\
         [nodes]\ncount = {n}\nplacement = {{ kind = \"uniform\", area = [\"600m\", \"600m\"] }}\n"
    );
    if moving {
        t += "mobility = { model = \"random-waypoint\", speed = [\"5m/s\", \"20m/s\"], pause = \"0s\", area = [\"600m\", \"600m\"] }\n";
    }
    t += "[radio]\nrts_threshold = \"0B\"\nqueue = 8\n[routing]\n";
    t += if olsr {
        "protocol = \"olsr\"\n"
    } else {
        "protocol = \"aodv\"\npreset = \"ns2\"\n"
    };
    if arp {
        t += "[arp]\npreset = \"ns3\"\n";
    }
    if let Some(j) = energy_j {
        t += &format!("[energy]\ninitial = \"{j}J\"\ntx = \"1.4W\"\nrx = \"1W\"\nidle = \"0.05W\"\ndeath = true\n");
    }
    for &(s, d, iv_ms, tcp) in flows {
        let (tr, app) = if tcp {
            (
                "tcp",
                "{ kind = \"bulk\", size = \"512B\", start = \"1s\" }".to_string(),
            )
        } else {
            (
                "udp",
                format!("{{ kind = \"cbr\", size = \"512B\", interval = \"{iv_ms}ms\", start = \"1s\" }}"),
            )
        };
        t += &format!("[[flows]]\nsrc = {s}\ndst = {d}\ntransport = \"{tr}\"\napp = {app}\n");
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    /// Per-flow conservation holds exactly on every flow row of wireless runs too, where a
    /// frame can be received by its next hop and still be dropped at its sender's retry limit
    /// (its ACK lost), AODV can keep a packet for a local repair after its next hop got it,
    /// ARP can hold packets, and nodes can die with packets queued.
    #[test]
    fn wireless_flows_account_for_every_packet_exactly_once(
        n in 4u32..12,
        moving in any::<bool>(),
        olsr in any::<bool>(),
        arp in any::<bool>(),
        energy in proptest::option::of(2.0f64..15.0),
        flows in proptest::collection::vec((0u32..12, 0u32..12, 5u32..60, any::<bool>()), 1..5),
        drain_ms in 0u32..500,
        warmup_ms in prop_oneof![Just(0u32), 1u32..8000],
        seed in 0u64..1000,
    ) {
        let flows: Vec<_> = flows.into_iter().map(|(s, d, iv, t)| (s % n, d % n, iv, t)).filter(|f| f.0 != f.1).collect();
        prop_assume!(!flows.is_empty());
        let text = wireless(n, moving, olsr, arp, energy, &flows, drain_ms, warmup_ms);
        let sc = load(&text, "<prop>").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = run(&sc, &RunOptions { seed, run: 0, pcap_dir: None }).unwrap();
        let mut dropped = 0;
        for f in &r.flows {
            prop_assert_eq!(
                f.tx_segments,
                f.rx_segments + f.dropped_segments + f.in_flight_segments,
                "flow {} {}: {:?}\n{}", f.key.flow, f.key.direction, f, text
            );
            if f.key.transport == "udp" {
                prop_assert_eq!(f.tx_packets, f.rx_packets + f.dropped_segments + f.in_flight_segments + f.buffered_packets, "message level: {:?}", f);
            }
            dropped += f.dropped_segments;
        }
        let by_reason: u64 = DropReason::ALL.iter().map(|&d| r.network.drops[d as usize]).sum();
        prop_assert!(by_reason >= dropped, "every lost flow packet has exactly one reason");
        if r.flows.iter().all(|f| f.key.transport == "udp") {
            prop_assert_eq!(by_reason, dropped);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// The wireless conservation property with radios and nodes going down and up at random
    /// times (with the energy model, ARP and both routing protocols in the mix).
    #[test]
    fn wireless_flows_account_for_every_packet_across_fault_events(
        n in 4u32..10,
        moving in any::<bool>(),
        olsr in any::<bool>(),
        arp in any::<bool>(),
        energy in proptest::option::of(2.0f64..15.0),
        flows in proptest::collection::vec((0u32..10, 0u32..10, 5u32..60, any::<bool>()), 1..4),
        draws in proptest::collection::vec((any::<u8>(), any::<u32>(), any::<u32>(), any::<u32>()), 1..8),
        drain_ms in 0u32..500,
        seed in 0u64..1000,
    ) {
        let flows: Vec<_> = flows.into_iter().map(|(s, d, iv, t)| (s % n, d % n, iv, t)).filter(|f| f.0 != f.1).collect();
        prop_assume!(!flows.is_empty());
        let text = wireless(n, moving, olsr, arp, energy, &flows, drain_ms, 0) + &events(&draws, n, &[], true, 12000);
        let sc = load(&text, "<prop>").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        conserved_and_repeatable(&sc, seed, &text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    /// The wireless conservation property with radios on two channels (each node on channel 1,
    /// channel 2 or both, drawn), one routing instance per radio, and radios and nodes going
    /// down and up at random times: every flow packet is accounted for, and the run repeats
    /// identically.
    #[test]
    fn multi_channel_flows_account_for_every_packet_across_fault_events(
        n in 4u32..10,
        moving in any::<bool>(),
        olsr in any::<bool>(),
        arp in any::<bool>(),
        channels in proptest::collection::vec(1u8..4, 10),
        flows in proptest::collection::vec((0u32..10, 0u32..10, 5u32..60, any::<bool>()), 1..4),
        draws in proptest::collection::vec((any::<bool>(), any::<u32>(), 0u32..12000, any::<bool>()), 0..8),
        seed in 0u64..1000,
    ) {
        let flows: Vec<_> = flows.into_iter().map(|(s, d, iv, t)| (s % n, d % n, iv, t)).filter(|f| f.0 != f.1).collect();
        prop_assume!(!flows.is_empty());
        // Bit 0: channel 1, bit 1: channel 2.
        let lists: Vec<Vec<u32>> = channels[..n as usize]
            .iter()
            .map(|&m| (1..=2).filter(|c| m & (1 << (c - 1)) != 0).collect())
            .collect();
        let mut text = wireless(n, moving, olsr, arp, None, &flows, 200, 0)
            .replace("[radio]\n", &format!("[radio]\nchannels = {lists:?}\n"));
        for &(node_event, target, at_ms, up) in &draws {
            let node = target % n;
            let dir = if up { "up" } else { "down" };
            text += &if node_event {
                format!("[[events]]\nat = \"{at_ms}ms\"\nkind = \"node_{dir}\"\nnode = {node}\n")
            } else {
                let chans = &lists[node as usize];
                let c = chans[(target / n) as usize % chans.len()];
                format!("[[events]]\nat = \"{at_ms}ms\"\nkind = \"interface_{dir}\"\nnode = {node}\nradio = true\nchannel = {c}\n")
            };
        }
        let sc = load(&text, "<prop>").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        conserved_and_repeatable(&sc, seed, &text)?;
    }
}

/// Runs `sc` (scenario text `text`, for messages) twice with `seed`: every flow row accounts
/// for each packet exactly once (sent = received + dropped + in flight; for UDP also at the
/// message level), and the second run's tables equal the first's.
fn conserved_and_repeatable(sc: &tpsim_scenario::Scenario, seed: u64, text: &str) -> Result<(), TestCaseError> {
    let r = run(
        sc,
        &RunOptions {
            seed,
            run: 0,
            pcap_dir: None,
        },
    )
    .unwrap();
    for f in &r.flows {
        prop_assert_eq!(
            f.tx_segments,
            f.rx_segments + f.dropped_segments + f.in_flight_segments,
            "flow {} {}: {:?}\n{}",
            f.key.flow,
            f.key.direction,
            f,
            text
        );
        if f.key.transport == "udp" {
            prop_assert_eq!(
                f.tx_packets,
                f.rx_packets + f.dropped_segments + f.in_flight_segments + f.buffered_packets,
                "message level: {:?}\n{}",
                f,
                text
            );
        }
    }
    let again = run(
        sc,
        &RunOptions {
            seed,
            run: 0,
            pcap_dir: None,
        },
    )
    .unwrap();
    prop_assert_eq!(&again.flows, &r.flows);
    prop_assert_eq!(&again.network, &r.network);
    Ok(())
}
