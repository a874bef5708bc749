//! Metric values against numbers derived by hand from the model (definitions: docs/metrics.md),
//! not just their order or sign. Each scenario is small enough that every packet's fate follows
//! from the model; the derivation is in the comments.
//!
//! Comparisons: exact equality where the engine's arithmetic is exact, that is, where the
//! metric is an integer number of nanoseconds (or an integer count) divided once or twice by
//! integers whose quotients are exact or correctly rounded (IEEE 754 division of exactly
//! representable operands gives the correctly rounded quotient, the same double as the
//! decimal literal of the expected value). Elsewhere (a running f64 average, an energy
//! integral summed in f64, a quotient that is not a whole number of nanoseconds) a relative
//! tolerance of 1e-12: a few hundred f64 roundings of ≤ 1.1e-16 each stay far below it, while
//! any modelling difference (one packet, one nanosecond in 10 ms) is far above it.

mod common;

use common::sim;

/// |a − b| ≤ 1e-12 · |b|.
fn close(what: &str, a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 * b.abs(), "{what}: {a} vs hand-derived {b}");
}

/// One full-duplex link 0 → 1 of 1 Mbit/s and 10 ms under `sizes = "ns2"` (the configured size
/// is the IP packet and the link adds no framing: docs/models.md "Packet sizes"), so a packet
/// of B bytes is serialized in exactly B · 8 / 10⁶ s: 125 B in 1 ms, 1000 B in 8 ms, 2000 B in
/// 16 ms (the MTU is raised to 2000 B: tpsim does not fragment). Flow 0 is the measured CBR
/// flow; the others share its DropTail queue. Forwarding and delivery take no time (the
/// idle-link delay of tests/wired.rs is serialization + propagation exactly).
fn shared_link(flows: &[&str]) -> String {
    let mut t = String::from(
        "[simulation]\nduration = \"1s\"\ndrain = \"1s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"10ms\"\nmtu = \"2000B\"\n",
    );
    for app in flows {
        t += &format!("[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = {app}\n");
    }
    t
}

/// Jitter. Flow 0: 125 B (1 ms on the wire) at 1, 11, 21, …, 91 ms (10 messages). Flow 1:
/// 2000 B (16 ms) at 0, 30, 60, 90 ms. Per 30 ms period starting at t0 (= 0, 30, 60, 90):
///
/// * the 2000 B packet is on the wire over [t0, t0 + 16];
/// * flow 0's message at t0 + 1 waits until t0 + 16, is sent over [t0 + 16, t0 + 17] and
///   arrives at t0 + 27: delay D = 26 ms;
/// * the one at t0 + 11 waits behind it until t0 + 17, arrives at t0 + 28: D = 17 ms;
/// * the one at t0 + 21 finds the link idle: D = 1 + 10 = 11 ms.
///
/// D = 26, 17, 11, 26, 17, 11, 26, 17, 11, 26 ms (in delivery order, which is sending order).
/// Consecutive differences |D_i − D_{i−1}| = 9, 6, 15, 9, 6, 15, 9, 6, 15 ms.
///
/// * IPDV (RFC 3393, mean |ΔD|) = (3 · 30 ms) / 9 = 10 ms exactly.
/// * RFC 3550 §6.4.1: J_k = J_{k−1} + (d_k − J_{k−1})/16 = (15·J_{k−1} + d_k)/16 from J_0 = 0,
///   so J_9 = Σ_{k=1..9} d_k · 15^(9−k) · 16^(k−1) / 16^9. In ns the numerator is an integer,
///   306 750 398 505 000 000, over 16^9 = 68 719 476 736: J_9 = 4 792 974 976 640 625 / 2^30 ns
///   = 4 463 805.795 312 51 ns ≈ 4.4638 ms.
/// * Sorted D: 11 ×3, 17 ×3, 26 ×4 (n = 10). Nearest rank: p50 → rank ⌈5⌉ = 5 → 17 ms;
///   p95 → rank ⌈9.5⌉ = 10 → 26 ms.
///
/// With 1-s bins, every delivery falls in bin 0: its `jitter_ipdv_s` is the same 10 ms, and
/// `rx_bytes_cumulative` is 10 · 125 = 1250 bytes in both bins. Sent packet sizes: flow 0's
/// are all 125 B (1250 B in all), flow 1's 2000 B.
#[test]
fn jitter_ipdv_and_rfc3550_of_a_known_delay_pattern() {
    let r = sim(
        &shared_link(&[
            r#"{ kind = "cbr", size = "125B", interval = "10ms", start = "1ms", count = 10 }"#,
            r#"{ kind = "cbr", size = "2000B", interval = "30ms", count = 4 }"#,
        ])
        .replace("timeseries = false", "timeseries = true\nbin = \"1s\""),
        1,
    );
    let series = |name: &str| -> Vec<Option<f64>> {
        let t = &r.timeseries;
        (0..t.series.len())
            .filter(|&i| t.series[i] == name && t.flow[i] == Some(0))
            .map(|i| t.value[i])
            .collect()
    };
    assert_eq!(series("jitter_ipdv_s"), vec![Some(0.010), None]);
    assert_eq!(series("rx_bytes_cumulative"), vec![Some(1250.0), Some(1250.0)]);
    let sizes = |f: &tpsim_engine::FlowRow| {
        (
            f.tx_ip_bytes,
            f.packet_size_min_b,
            f.packet_size_max_b,
            f.packet_size_mean_b,
        )
    };
    assert_eq!(sizes(&r.flows[0]), (1250, Some(125.0), Some(125.0), Some(125.0)));
    // The ns-2-style variants: over UDP with ns-2 sizes a packet is its message, so the
    // per-packet delay is the message delay and the IP-byte throughput the goodput.
    let f0 = &r.flows[0];
    close("packet_delay_mean_s", f0.packet_delay_mean_s.unwrap(), 0.0188);
    assert_eq!(f0.throughput_ip_kbps, f0.goodput_kbps);
    assert_eq!(sizes(&r.flows[1]), (8000, Some(2000.0), Some(2000.0), Some(2000.0)));
    let f = &r.flows[0];
    assert_eq!((f.tx_packets, f.rx_packets), (10, 10));
    assert_eq!(r.flows[1].rx_packets, 4);
    // Mean delay (4·26 + 3·17 + 3·11)/10 = 18.8 ms, max 26 ms: the pattern is the derived one.
    assert_eq!(f.delay_max_s, Some(0.026));
    close("delay_mean_s", f.delay_mean_s.unwrap(), 0.0188);
    // 90 000 000 ns / 9 = 10 000 000 ns exactly, / 1e9 correctly rounded: exact equality.
    assert_eq!(f.jitter_ipdv_s, Some(0.010));
    // RFC 3550: the exact rational above; the engine's running f64 average rounds at each of
    // its 9 steps, hence the tolerance.
    let d_ms: [u128; 9] = [9, 6, 15, 9, 6, 15, 9, 6, 15];
    let num: u128 = d_ms
        .iter()
        .enumerate()
        .map(|(i, &d)| d * 1_000_000 * 15u128.pow(8 - i as u32) * 16u128.pow(i as u32))
        .sum();
    assert_eq!(num, 306_750_398_505_000_000);
    // 16^9 = 2^36, exact as a double.
    let j_s = num as f64 / (1u64 << 36) as f64 / 1e9;
    close("jitter_rfc3550_s", f.jitter_rfc3550_s.unwrap(), j_s);
    close(
        "jitter_rfc3550_s (decimal)",
        f.jitter_rfc3550_s.unwrap(),
        4.46380579531251e-3,
    );
    assert_eq!(f.delay_p50_s, Some(0.017));
    assert_eq!(f.delay_p95_s, Some(0.026));
}

/// Percentiles chosen so that nearest rank differs from interpolation and p95 from the
/// maximum. Flow 0: 125 B at 1, 11, …, 191 ms (20 messages). Flow 1: one 2000 B packet at
/// 0 ms. Flow 2: 1000 B (8 ms) at 20, 40, …, 160 ms (8 packets).
///
/// * message 0 (1 ms) waits behind the 2000 B packet until 16 ms: D = 15 + 1 + 10 = 26 ms;
/// * message 1 (11 ms) waits behind message 0 until 17 ms: D = 6 + 11 = 17 ms;
/// * message 2j (j = 1..8, at 20j + 1 ms) waits for the 1000 B packet sent over
///   [20j, 20j + 8]: D = 7 + 11 = 18 ms;
/// * message 2j + 1 (20j + 11 ms, j = 1..8) and messages 18, 19 (181, 191 ms) find the link
///   idle: D = 11 ms.
///
/// D = 26, 17, 18, 11, 18, 11, …, 18, 11, 11, 11: sorted 11 ×10, 17, 18 ×8, 26 (n = 20).
///
/// * p50: rank ⌈0.50 · 20⌉ = 10 → 11 ms (linear interpolation would give 14 ms);
/// * p95: rank ⌈0.95 · 20⌉ = 19 → 18 ms (interpolation 18.4 ms; the maximum is 26 ms);
/// * IPDV: |ΔD| = 9, 1, then 7 fifteen times (18 ↔ 11 from message 2 to message 17), then
///   0, 0: 115 ms / 19 = 6.052 631 578 9… ms (not a whole number of ns: tolerance).
#[test]
fn delay_percentiles_are_nearest_rank() {
    let r = sim(
        &shared_link(&[
            r#"{ kind = "cbr", size = "125B", interval = "10ms", start = "1ms", count = 20 }"#,
            r#"{ kind = "cbr", size = "2000B", interval = "1s", count = 1 }"#,
            r#"{ kind = "cbr", size = "1000B", interval = "20ms", start = "20ms", count = 8 }"#,
        ]),
        1,
    );
    let f = &r.flows[0];
    assert_eq!((f.tx_packets, f.rx_packets), (20, 20));
    assert_eq!((r.flows[1].rx_packets, r.flows[2].rx_packets), (1, 8));
    // Integer ns / 1e9, correctly rounded: exact.
    assert_eq!(f.delay_p50_s, Some(0.011));
    assert_eq!(f.delay_p95_s, Some(0.018));
    assert_eq!(f.delay_max_s, Some(0.026));
    // Mean (26 + 17 + 8·18 + 10·11)/20 = 297/20 = 14.85 ms.
    close("delay_mean_s", f.delay_mean_s.unwrap(), 0.01485);
    close("jitter_ipdv_s", f.jitter_ipdv_s.unwrap(), 0.115 / 19.0);
}

/// A two-node static-routing 802.11 link (ns-2 radio, 100 m apart): 512 B UDP every second
/// from 1 s to 9 s, 9 packets, no loss, no contention. Each packet is one DATA frame and one
/// ACK frame, and static routing sends nothing: mac_frames = 2 · 9 = 18,
/// mac_load = 18 / 9 = 2 and normalized_routing_load = 0 / 9 = 0, exactly (integer ratios).
#[test]
fn mac_load_of_a_one_hop_radio_link_is_two() {
    let text = "[simulation]\nduration = \"10s\"\ndrain = \"2s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = 2\nplacement = { kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"100m\", \"0m\"]] }\n\
         [radio]\n\
         [[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"512B\", interval = \"1s\", start = \"1s\" }\n";
    let r = sim(text, 1);
    let n = &r.network;
    assert_eq!((r.flows[0].tx_packets, n.data_delivered), (9, 9));
    assert_eq!((n.mac_data_frames, n.mac_ack_frames, n.mac_frames), (9, 9, 18));
    assert_eq!(n.mac_load, Some(2.0));
    assert_eq!(n.routing_packets, 0);
    assert_eq!(n.normalized_routing_load, Some(0.0));
}

/// AODV (`preset = "ns2"`: no HELLOs, breaks detected by the MAC) on a 3-node chain 0 — 1 — 2,
/// 200 m apart (ns-2 radio: decode range 250 m, so 0 and 2 do not hear each other; carrier
/// sense 550 m, so there is no hidden terminal). Flow 0 → 2: 8 messages of 512 B every 250 ms
/// from 1 s.
///
/// Routing packets, every transmission counted:
/// * node 0 has no route at 1 s: it buffers the message and broadcasts an RREQ (1);
/// * node 1 has no route to 2: it rebroadcasts the RREQ (2); node 0 hears it and drops it as a
///   duplicate of its own; node 2 is the destination and does not rebroadcast;
/// * node 2 answers with an RREP unicast to node 1 (3), which forwards it to node 0 (4);
/// * the route then stays in use (a packet every 250 ms, ACTIVE_ROUTE_TIMEOUT 10 s): no
///   further discovery, no RERR, no HELLO.
///
/// RREQ 2, RREP 2, routing_packets 4; the 8 messages cross 2 hops each and are all delivered:
/// data_delivered = 8, normalized_routing_load = 4/8 = 0.5.
///
/// MAC frames: RREQs are broadcast (one DATA frame each, no ACK): 2; RREPs and data are
/// unicast (DATA + ACK per hop): 2 · 2 + 8 · 2 · 2 = 36; mac_frames = 38, of which 20 DATA
/// and 18 ACK; mac_load = 38/8 = 4.75. Both ratios are exact binary fractions: exact equality.
#[test]
fn routing_and_mac_load_of_one_aodv_discovery_on_a_two_hop_chain() {
    let text = "[simulation]\nduration = \"10s\"\ndrain = \"5s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = 3\nplacement = { kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"200m\", \"0m\"], [\"400m\", \"0m\"]] }\n\
         [radio]\n[routing]\nprotocol = \"aodv\"\npreset = \"ns2\"\n\
         [[flows]]\nsrc = 0\ndst = 2\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"512B\", interval = \"250ms\", start = \"1s\", count = 8 }\n";
    let r = sim(text, 1);
    let (f, n) = (&r.flows[0], &r.network);
    assert_eq!((f.tx_packets, f.rx_packets, f.hops_mean), (8, 8, Some(2.0)));
    assert_eq!(n.data_delivered, 8);
    // rreq, rrep, rerr, rrep_ack, hello, tc
    assert_eq!(n.routing_by_type, [2, 2, 0, 0, 0, 0]);
    assert_eq!((n.routing_packets, n.routing_drops), (4, 0));
    assert_eq!(n.normalized_routing_load, Some(0.5));
    assert_eq!(
        (n.mac_data_frames, n.mac_ack_frames, n.mac_rts_frames, n.mac_cts_frames),
        (20, 18, 0, 0)
    );
    assert_eq!((n.mac_retransmissions, n.mac_frames), (0, 38));
    assert_eq!(n.mac_load, Some(4.75));
}

/// TCP with `delayed_ack = "0s"` (every in-order data segment acknowledged at once) over a
/// loss-free 1 Mbit/s, 10 ms link; `ack_overhead` = pure ACKs sent by the receiver / data
/// segments sent, where a pure ACK has no data, no SYN and no FIN.
///
/// Bulk, 8 000 bytes with MSS 1000 B: 8 data segments (tx_segments = 8). The application
/// writes everything at once and closes, so the FIN rides on the 8th data segment. The
/// receiver sends: the SYN-ACK (has SYN: not a pure ACK); one pure ACK for each of data
/// segments 1–7 (7); for the 8th (data + FIN) it acknowledges and, the peer having closed,
/// closes too: one FIN + ACK segment (has FIN: not a pure ACK). ack_packets = 7,
/// ack_overhead = 7/8 = 0.875 (exact binary fraction).
///
/// CBR over TCP, 5 messages of 100 B every 100 ms (each its own segment, Nagle off; the CBR
/// application never closes): 5 data segments, 5 pure ACKs, no FIN: ack_overhead = 5/5 = 1.
#[test]
fn ack_overhead_counts_pure_acks_of_an_ack_every_segment_receiver() {
    let link = |app: &str| {
        format!(
            "[simulation]\nduration = \"5s\"\ndrain = \"5s\"\n[output]\ntimeseries = false\n\
             [nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n\
             [[flows]]\nsrc = 0\ndst = 1\ntransport = \"tcp\"\napp = {app}\n\
             tcp = {{ delayed_ack = \"0s\", mss = \"1000B\" }}\n"
        )
    };
    let r = sim(&link(r#"{ kind = "bulk", size = "1000B", bytes = "8000B" }"#), 1);
    let f = &r.flows[0];
    assert_eq!(
        (f.rx_bytes, f.tx_segments, f.rx_segments, f.retransmissions),
        (8000, 8, 8, 0)
    );
    assert_eq!(f.ack_packets, 7);
    assert_eq!(f.ack_overhead, Some(0.875));

    let r = sim(
        &link(r#"{ kind = "cbr", size = "100B", interval = "100ms", count = 5 }"#),
        1,
    );
    let f = &r.flows[0];
    assert_eq!(
        (f.rx_packets, f.tx_segments, f.rx_segments, f.retransmissions),
        (5, 5, 5, 0)
    );
    assert_eq!(f.ack_packets, 5);
    assert_eq!(f.ack_overhead, Some(1.0));
}

/// Jain's index over two independent links (1 Mbit/s, 10 ms; ns-2 sizes), each with one UDP
/// CBR flow of 125 B messages from 0 s, the window ending at the stop at 1 s (the duration):
/// a message takes 1 ms on the wire + 10 ms, so flow 0 sends 98 messages every 10 ms (the last
/// at 970 ms, delivered at 981 ms) and flow 1 49 every 20 ms (the last delivered at 971 ms):
/// all delivered within the window.
/// Goodput = bytes delivered within the window · 8 / 1000 / window (1 s):
/// x0 = 98 · 125 · 8 / 1000 = 98 kbit/s, x1 = 49 kbit/s.
/// Jain = (98 + 49)² / (2 · (98² + 49²)) = 21 609 / 24 010 = 0.9; every intermediate is an
/// integer-valued double, so the one division is correctly rounded: exact equality.
#[test]
fn jain_fairness_of_two_flows_of_known_goodput() {
    let text = "[simulation]\nduration = \"1s\"\ndrain = \"1s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = 4\n\
         [[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n\
         [[links]]\nnodes = [2, 3]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n\
         [[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"125B\", interval = \"10ms\", count = 98 }\n\
         [[flows]]\nsrc = 2\ndst = 3\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"125B\", interval = \"20ms\", count = 49 }\n";
    let r = sim(text, 1);
    assert_eq!((r.flows[0].rx_packets, r.flows[1].rx_packets), (98, 49));
    assert_eq!(r.flows[0].goodput_kbps, Some(98.0));
    assert_eq!(r.flows[1].goodput_kbps, Some(49.0));
    assert_eq!(r.network.jain_fairness, Some(0.9));
}

/// Mean energy per node, following tests/energy.rs's schedule with a third, silent node.
/// Nodes 0 (0, 0), 1 (100 m, 0) and 2 (0, 100 m); ns-2 sizes; node 0 sends 512 B UDP to node 1
/// every second from 1 s to 9 s (k = 9 packets); run 10 s + 2 s drain = 12 s; powers tx 1.5 W,
/// rx 1 W, idle 0.1 W. Airtimes at 1 Mbit/s behind the 192 µs PLCP: DATA (512 + 34 B) =
/// 192 + 4368 = 4560 µs, ACK (14 B) = 192 + 112 = 304 µs; T = k · (DATA + ACK) = 43.776 ms.
///
/// * node 0: 1.5 · k·DATA + 1 · k·ACK + 0.1 · (12 − T) = 0.06156 + 0.002736 + 1.1956224
///   = 1.2599184 J;
/// * node 1: 1 · k·DATA + 1.5 · k·ACK + 0.1 · (12 − T) = 0.04104 + 0.004104 + 1.1956224
///   = 1.2407664 J;
/// * node 2 (in sensing range of both, sends nothing): senses every frame, 1 · T +
///   0.1 · (12 − T) = 0.043776 + 1.1956224 = 1.2393984 J.
///
/// Mean = (1.2599184 + 1.2407664 + 1.2393984) / 3 = 3.7400832 / 3 = 1.2466944 J (the total is
/// 3.2 · T + 3 · 0.1 · 12). The engine integrates power × time in f64 at each state change:
/// tolerance.
#[test]
fn energy_consumed_mean_over_three_nodes() {
    let text = "[simulation]\nduration = \"10s\"\ndrain = \"2s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = 3\nplacement = { kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"100m\", \"0m\"], [\"0m\", \"100m\"]] }\n\
         [radio]\n\
         [energy]\ninitial = \"1000J\"\ntx = \"1.5W\"\nrx = \"1W\"\nidle = \"0.1W\"\ndeath = false\n\
         [[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"512B\", interval = \"1s\", start = \"1s\" }\n";
    let r = sim(text, 1);
    assert_eq!((r.flows[0].tx_packets, r.flows[0].rx_packets), (9, 9));
    assert_eq!(r.network.mac_frames, 18, "DATA + ACK per packet, nothing else");
    let k = 9.0;
    let (data, ack, end) = (4560e-6, 304e-6, 12.0);
    let t = k * (data + ack);
    let e0 = 1.5 * k * data + 1.0 * k * ack + 0.1 * (end - t);
    let e1 = 1.0 * k * data + 1.5 * k * ack + 0.1 * (end - t);
    let e2 = 1.0 * t + 0.1 * (end - t);
    close("hand arithmetic", (e0 + e1 + e2) / 3.0, 1.2466944);
    close(
        "energy_consumed_j_mean",
        r.network.energy_consumed_j_mean.unwrap(),
        1.2466944,
    );
    close(
        "energy_consumed_j_total",
        r.network.energy_consumed_j_total.unwrap(),
        3.7400832,
    );
}

/// The ns-2-style per-packet delay counts each packet from its own send: over TCP, a lost and
/// retransmitted segment (the 6th packet of the data direction, `drop_forward = [5]`) delays
/// the messages behind it (head-of-line), but no packet's own trip takes longer than an idle
/// link's 165 · 8 / 10⁶ s + 10 ms = 11.32 ms plus a little queueing behind its neighbours.
#[test]
fn per_packet_delay_counts_from_each_packets_own_send() {
    let text = "[simulation]\nduration = \"1s\"\ndrain = \"5s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
                [nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"10ms\"\ndrop_forward = [5]\n\
                [[flows]]\nsrc = 0\ndst = 1\ntransport = \"tcp\"\n\
                app = { kind = \"cbr\", size = \"125B\", interval = \"10ms\", count = 50 }\n\
                tcp = { nagle = false }\n";
    let r = sim(text, 1);
    let f = &r.flows[0];
    assert_eq!(f.rx_packets, 50);
    assert!(f.retransmissions >= 1, "{f:?}");
    let per_packet = f.packet_delay_mean_s.unwrap();
    let per_message = f.delay_mean_s.unwrap();
    assert!((0.01132 - 1e-9..0.0125).contains(&per_packet), "{per_packet}");
    assert!(per_message > per_packet + 0.001, "{per_message} vs {per_packet}");
}
