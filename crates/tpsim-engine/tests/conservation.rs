//! Property test: on random wired topologies with random loss, queue limits and traffic,
//! every packet is accounted for exactly once (the conservation of docs/metrics.md, both levels).

use proptest::prelude::*;
use tpsim_engine::{run, DropReason, RunOptions};
use tpsim_scenario::load;

fn scenario(
    nodes: u32,
    links: &[(u32, u32, u32, u32, f64)],
    flows: &[(u32, u32, u32, bool, bool, u8)],
    drain_ms: u32,
) -> String {
    let mut t = format!("[simulation]\nduration = \"3s\"\ndrain = \"{drain_ms}ms\"\n[nodes]\ncount = {nodes}\n");
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
        let (tr, app) = match transport % 5 {
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
            _ => ("tcp-tahoe", "{ kind = \"bulk\", size = \"500B\" }".to_string()),
        };
        t += &format!("[[flows]]\nsrc = {s}\ndst = {d}\ntransport = \"{tr}\"\napp = {app}\n");
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn every_packet_is_delivered_dropped_or_in_flight(
        n in 3u32..8,
        extra in proptest::collection::vec((0u32..8, 0u32..8, 64u32..2000, 1u32..20, 0.0f64..0.3), 0..6),
        flows in proptest::collection::vec((0u32..8, 0u32..8, 1u32..40, any::<bool>(), any::<bool>(), any::<u8>()), 1..6),
        drain_ms in 0u32..200,
        seed in 0u64..1000,
    ) {
        // A chain keeps the graph connected; extra links add cycles and parallel paths.
        let mut links: Vec<(u32, u32, u32, u32, f64)> = (0..n - 1).map(|i| (i, i + 1, 500, 5, 0.05)).collect();
        links.extend(extra.into_iter().map(|(a, b, r, q, l)| (a % n, b % n, r, q, l)).filter(|l| l.0 != l.1));
        let flows: Vec<_> = flows.into_iter().map(|(s, d, iv, p, v, t)| (s % n, d % n, iv, p, v, t)).filter(|f| f.0 != f.1).collect();
        prop_assume!(!flows.is_empty());
        let text = scenario(n, &links, &flows, drain_ms);
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
