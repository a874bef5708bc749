//! Fault events (`[[events]]`, docs/scenarios.md "Fault events") through the engine, packet by
//! packet from the packet trace: links, interfaces and nodes that go down and come back up,
//! and links whose rate, delay or loss change.

mod common;

use common::{f64s, opt_text, opt_u32, sim, text, trace, u64s};
use std::collections::BTreeMap;
use tpsim_engine::{DropReason, RunResult};

/// One data packet of a flow direction, from the packet trace.
#[derive(Clone, Debug, Default)]
struct Pkt {
    sent: f64,
    received: Option<f64>,
    /// (time, node, reason) of its drop.
    dropped: Option<(f64, u64, String)>,
}

/// Flow 0's forward packets, by packet number.
fn packets(r: &RunResult) -> BTreeMap<u32, Pkt> {
    let t = trace(r);
    let (event, kind) = (text(t, "event"), text(t, "kind"));
    let (flow, dir, packet) = (opt_u32(t, "flow"), opt_text(t, "direction"), opt_u32(t, "packet"));
    let (reason, time, node) = (opt_text(t, "reason"), f64s(t, "time_s"), u64s(t, "node"));
    let mut out: BTreeMap<u32, Pkt> = BTreeMap::new();
    for i in 0..event.len() {
        if kind[i] != "data" || flow[i] != Some(0) || dir[i] != Some("fwd") {
            continue;
        }
        let p = out.entry(packet[i].unwrap()).or_default();
        let at = time[i].unwrap();
        match event[i] {
            "send" => p.sent = at,
            "receive" => {
                assert!(p.received.is_none(), "received twice");
                p.received = Some(at);
            }
            "drop" => {
                assert!(p.dropped.is_none(), "dropped twice on a wire");
                p.dropped = Some((at, node[i], reason[i].unwrap().to_string()));
            }
            _ => {}
        }
    }
    out
}

/// Nodes 0 - 1 - 2 on two 10 Mbit/s links (link 0: 5 ms, link 1: `delay1`), a UDP CBR flow
/// 0 → 2 of 500-byte messages every 100 ms from t = `start`, and `events`.
fn chain(delay1: &str, start: &str, events: &str) -> String {
    format!(
        r#"
[simulation]
duration = "30s"
drain = "2s"
[output]
trace = true
[nodes]
count = 3
[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "5ms"
[[links]]
nodes = [1, 2]
rate = "10Mbps"
delay = "{delay1}"
[[flows]]
src = 0
dst = 2
transport = "udp"
app = {{ kind = "cbr", size = "500B", interval = "100ms", start = "{start}" }}
{events}"#
    )
}

/// The serialization time of one 500-byte UDP message's packet at 10 Mbit/s is below this
/// (528 IP bytes + a few bytes of framing: about 0.43 ms), s.
const TX_MAX: f64 = 0.5e-3;
const TX_MIN: f64 = 0.42e-3;

fn down_up(kind: &str, key: &str, down: &str, up: &str) -> String {
    format!(
        "[[events]]\nat = \"{down}\"\nkind = \"{kind}_down\"\n{key}\n[[events]]\nat = \"{up}\"\nkind = \"{kind}_up\"\n{key}\n"
    )
}

/// Checks a wired outage of the path's second hop from `t0` to `t1` on the chain with link 1's
/// delay `d1` (s): a packet is lost iff it would have been on link 1 (queued, serialized or
/// propagating) at some instant of [t0, t1), and then with `reason` at node `at_node`;
/// every other packet arrives; the tables agree with the trace.
fn check_outage(r: &RunResult, t0: f64, t1: f64, d1: f64, reason: DropReason, at_node: u64) {
    let pk = packets(r);
    let f = &r.flows[0];
    assert_eq!(pk.len() as u64, f.tx_segments);
    let mut lost = 0;
    for (n, p) in &pk {
        // When it reaches node 1 (after link 0), and when it would reach node 2.
        let (lo, hi) = (p.sent + 0.005 + TX_MIN, p.sent + 0.005 + TX_MAX);
        let (end_lo, end_hi) = (lo + TX_MIN + d1, hi + TX_MAX + d1);
        // No packet so near an edge that the bounds on the serialization time matter.
        assert_eq!(lo < t1, hi < t1, "packet {n} too near {t1}: {p:?}");
        assert_eq!(end_lo > t0, end_hi > t0, "packet {n} too near {t0}: {p:?}");
        let expect_lost = hi < t1 && end_lo > t0;
        if expect_lost {
            lost += 1;
            let (at, node, why) = p
                .dropped
                .clone()
                .unwrap_or_else(|| panic!("packet {n} not dropped: {p:?}"));
            assert_eq!(why, tpsim_engine::pkttrace::drop_name(reason), "packet {n}");
            assert_eq!(node, at_node, "packet {n}");
            assert!(p.received.is_none());
            // Dropped at the failure (if it was on the link then) or when it reached the link.
            assert!(at >= t0 && at <= lo.max(t0) + d1 + 2e-3, "packet {n} dropped at {at}");
        } else {
            let rx = p.received.unwrap_or_else(|| panic!("packet {n} not received: {p:?}"));
            let queued = rx - p.sent - (0.005 + d1);
            assert!(queued > 2.0 * TX_MIN && queued < 2.0 * TX_MAX, "packet {n}: {p:?}");
        }
    }
    assert!(lost > 90, "the outage loses packets: {lost}");
    assert_eq!(f.dropped_segments, lost);
    assert_eq!(r.network.drops[reason as usize], lost);
    let others: u64 = DropReason::ALL
        .iter()
        .filter(|&&d| d != reason)
        .map(|&d| r.network.drops[d as usize])
        .sum();
    assert_eq!(others, 0);
    assert_eq!(f.rx_segments + lost + f.in_flight_segments, f.tx_segments);
    // Delivery resumes after the outage.
    assert!(pk.values().any(|p| p.sent > t1 && p.received.is_some()));
}

#[test]
fn link_down_loses_what_is_on_the_link_and_what_reaches_it_until_link_up() {
    // Link 1 propagates for 250 ms: the packets that left node 1 in the 250 ms before 10 s
    // are lost in flight.
    let ev = down_up("link", "link = 1", "10s", "20s");
    let r = sim(&chain("250ms", "20ms", &ev), 1);
    check_outage(&r, 10.0, 20.0, 0.250, DropReason::LinkDown, 1);
    let pk = packets(&r);
    assert!(
        pk.values()
            .any(|p| p.sent < 10.0 && p.dropped.as_ref().is_some_and(|d| d.0 > 10.0)),
        "some packets were in propagation at the failure and are dropped on arrival"
    );
}

#[test]
fn interface_down_at_the_far_end_drops_arrivals() {
    // Node 2's end of link 1: node 1 still sends, and the packets die at node 2's interface.
    let ev = down_up("interface", "node = 2\nlink = 1", "10s", "20s");
    let r = sim(&chain("5ms", "20ms", &ev), 1);
    let pk = packets(&r);
    let f = &r.flows[0];
    for (n, p) in &pk {
        let arrive = p.sent + 0.010 + 2.0 * TX_MIN;
        if (10.0..20.0).contains(&arrive) {
            let d = p.dropped.as_ref().unwrap_or_else(|| panic!("packet {n}: {p:?}"));
            assert_eq!((d.1, d.2.as_str()), (2, "interface_down"));
        } else {
            assert!(p.received.is_some(), "packet {n}: {p:?}");
        }
    }
    assert_eq!(r.network.drops[DropReason::InterfaceDown as usize], f.dropped_segments);
    assert_eq!(f.dropped_segments, 100, "sends 10.02 .. 19.92 s");
}

#[test]
fn interface_down_at_the_near_end_drops_what_it_is_handed() {
    // Node 1's end of link 1: its queue and wire, then every packet it forwards.
    let ev = down_up("interface", "node = 1\nlink = 1", "10s", "20s");
    let r = sim(&chain("5ms", "20ms", &ev), 1);
    check_outage(&r, 10.0, 20.0, 0.005, DropReason::InterfaceDown, 1);
}

#[test]
fn node_down_drops_arrivals_and_node_up_restores_forwarding() {
    let ev = down_up("node", "node = 1", "10s", "20s");
    let r = sim(&chain("5ms", "20ms", &ev), 1);
    let pk = packets(&r);
    for (n, p) in &pk {
        // Lost iff it reaches node 1 while it is down, or is on link 1 when node 1 goes down.
        let at1 = p.sent + 0.005 + TX_MIN;
        let lost = (10.0..20.0).contains(&at1) || (at1 < 10.0 && at1 + TX_MAX > 10.0);
        assert_eq!(p.received.is_none(), lost, "packet {n}: {p:?}");
        if lost {
            let d = p.dropped.as_ref().unwrap();
            assert_eq!((d.1, d.2.as_str()), (1, "node_down"), "packet {n}");
        }
    }
    let f = &r.flows[0];
    assert_eq!(f.dropped_segments, 100);
    assert_eq!(r.network.drops[DropReason::NodeDown as usize], 100);
}

#[test]
fn a_node_that_comes_back_keeps_its_tcp_connection() {
    // The source itself goes down for 5 s in the middle of a bulk transfer: its segments are
    // dropped at once (node_down), and the same connection resumes after node_up (no new
    // handshake: the receiver would not accept one on its port in that state).
    let text = chain("5ms", "0s", &down_up("node", "node = 0", "5s", "10s")).replace(
        "transport = \"udp\"\napp = { kind = \"cbr\", size = \"500B\", interval = \"100ms\", start = \"0s\" }",
        "transport = \"tcp\"\napp = { kind = \"bulk\", size = \"1000B\" }",
    );
    assert!(text.contains("bulk"));
    let r = sim(&text, 1);
    let pk = packets(&r);
    let f = &r.flows[0];
    assert!(r.network.drops[DropReason::NodeDown as usize] > 0);
    for p in pk.values() {
        if let Some(d) = &p.dropped {
            assert_eq!((d.1, d.2.as_str()), (0, "node_down"));
            assert!(d.0 >= 5.0 && d.0 < 10.0);
        }
        if let Some(rx) = p.received {
            assert!(!(5.0 + 0.02..10.0).contains(&rx), "nothing arrives while down: {p:?}");
        }
    }
    assert!(pk.values().any(|p| p.received.is_some_and(|t| t > 12.0)));
    assert!(f.rx_bytes > 0);
    assert_eq!(f.gave_up, 0);
}

/// One 10 Mbit/s link 0 → 1, 10 ms, with a UDP CBR flow of 1000-byte messages every 100 ms
/// from 0.05 s, and `events` (link 0).
fn single(events: &str) -> String {
    format!(
        r#"
[simulation]
duration = "20s"
drain = "2s"
[output]
trace = true
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "10ms"
[[flows]]
src = 0
dst = 1
transport = "udp"
app = {{ kind = "cbr", size = "1000B", interval = "100ms", start = "50ms" }}
[[events]]
at = "10s"
kind = "link_change"
link = 0
{events}"#
    )
}

/// The one-way delays of flow 0's packets sent before and after t = 10 s.
fn delays(r: &RunResult) -> (Vec<f64>, Vec<f64>) {
    let pk = packets(r);
    let d = |after: bool| {
        pk.values()
            .filter(|p| (p.sent > 10.0) == after)
            .map(|p| p.received.expect("no loss") - p.sent)
            .collect::<Vec<f64>>()
    };
    (d(false), d(true))
}

#[test]
fn link_change_of_rate_stretches_serialization() {
    let r = sim(&single("rate = \"2.5Mbps\""), 1);
    let (before, after) = delays(&r);
    assert!(before.len() > 90 && after.len() > 90);
    // delay = size / rate + 10 ms: the serialization part quadruples.
    let ser0 = before[0] - 0.010;
    assert!(ser0 > 8e-4 && ser0 < 9e-4, "{ser0}");
    for d in &before {
        assert!((d - before[0]).abs() < 1e-9);
    }
    for d in &after {
        assert!((d - 0.010 - 4.0 * ser0).abs() < 2e-9, "{d} vs {}", 0.010 + 4.0 * ser0);
    }
}

#[test]
fn link_change_of_delay_shifts_the_one_way_delay_exactly() {
    let r = sim(&single("delay = \"50ms\""), 1);
    let (before, after) = delays(&r);
    assert!(before.len() > 90 && after.len() > 90);
    for d in &after {
        assert!((d - before[0] - 0.040).abs() < 1e-9, "{d} vs {}", before[0] + 0.040);
    }
}

#[test]
fn link_change_of_loss_to_one_and_back_to_zero() {
    let r = sim(
        &single("loss = 1.0\n[[events]]\nat = \"15s\"\nkind = \"link_change\"\nlink = 0\nloss = 0.0\n"),
        1,
    );
    let pk = packets(&r);
    for (n, p) in &pk {
        // Drawn for loss at the end of serialization, under 1 ms after the send.
        let lost = p.sent > 10.0 && p.sent < 15.0;
        assert_eq!(p.received.is_none(), lost, "packet {n}: {p:?}");
        if lost {
            assert_eq!(p.dropped.as_ref().unwrap().2, "link_error");
        }
    }
    assert_eq!(r.network.drops[DropReason::LinkError as usize], 50);
    assert_eq!(r.flows[0].dropped_segments, 50);
}

/// Nodes 0, 1, 2 on a line 200 m apart (the ns-2 range is 250 m: a two-hop chain), static
/// routes, a UDP CBR flow 0 → 2 of 512-byte messages every 100 ms from 1.05 s, and `events`.
fn radio_chain(events: &str) -> String {
    format!(
        r#"
[simulation]
duration = "30s"
drain = "2s"
sizes = "ns2"
[output]
trace = true
[nodes]
count = 3
placement = {{ kind = "explicit", positions = [["0m", "0m"], ["200m", "0m"], ["400m", "0m"]] }}
[radio]
[[flows]]
src = 0
dst = 2
transport = "udp"
app = {{ kind = "cbr", size = "512B", interval = "100ms", start = "1.05s" }}
{events}"#
    )
}

#[test]
fn radio_interface_down_at_the_source_drops_every_packet_sent_meanwhile() {
    let ev = down_up("interface", "node = 0\nradio = true", "10s", "20s");
    let r = sim(&radio_chain(&ev), 1);
    let pk = packets(&r);
    for (n, p) in &pk {
        if p.sent > 10.0 && p.sent < 20.0 {
            let d = p.dropped.as_ref().unwrap_or_else(|| panic!("packet {n}: {p:?}"));
            assert_eq!((d.0, d.1, d.2.as_str()), (p.sent, 0, "interface_down"), "packet {n}");
        } else {
            assert!(p.received.is_some(), "packet {n}: {p:?}");
        }
    }
    assert_eq!(r.network.drops[DropReason::InterfaceDown as usize], 100);
    assert_eq!(r.flows[0].dropped_segments, 100);
}

#[test]
fn radio_interface_down_in_the_middle_stops_forwarding_until_it_is_up() {
    let ev = down_up("interface", "node = 1\nradio = true", "10s", "20s");
    let r = sim(&radio_chain(&ev), 1);
    let pk = packets(&r);
    let f = &r.flows[0];
    // Nothing crosses node 1 while its radio is off: no arrival at node 2 in (10 s, 20 s).
    for (n, p) in &pk {
        if let Some(rx) = p.received {
            assert!(
                !(10.0..20.0).contains(&rx),
                "packet {n} arrived during the outage: {p:?}"
            );
        }
        if let Some(d) = &p.dropped {
            // Node 0's frames to the silent node 1 fail at the retry limit (or wait behind
            // them and overflow); node 1 drops what it held when its radio went off.
            match d.2.as_str() {
                "mac_retry" | "queue" => assert_eq!(d.1, 0, "packet {n}"),
                "interface_down" => assert_eq!((d.0, d.1), (10.0, 1), "packet {n}"),
                other => panic!("packet {n}: {other}"),
            }
        }
    }
    assert!(f.dropped_segments > 50, "{f:?}");
    assert!(r.network.drops[DropReason::MacRetry as usize] > 0);
    // After it comes back, delivery resumes at the full rate.
    let late: Vec<_> = pk.values().filter(|p| p.sent > 21.0).collect();
    assert!(late.len() > 80 && late.iter().all(|p| p.received.is_some()));
    assert_eq!(f.tx_segments, f.rx_segments + f.dropped_segments + f.in_flight_segments);
}

#[test]
fn radio_node_down_in_the_middle_is_node_down() {
    let ev = down_up("node", "node = 1", "10s", "20s");
    let r = sim(&radio_chain(&ev), 1);
    let pk = packets(&r);
    for (n, p) in &pk {
        if let Some(rx) = p.received {
            assert!(!(10.0..20.0).contains(&rx), "packet {n}: {p:?}");
        }
        if let Some(d) = &p.dropped {
            assert!(
                matches!(d.2.as_str(), "mac_retry" | "queue" | "node_down"),
                "packet {n}: {d:?}"
            );
            assert_eq!(d.2 == "node_down", d.1 == 1);
        }
    }
    assert_eq!(r.network.drops[DropReason::InterfaceDown as usize], 0);
    assert!(pk.values().filter(|p| p.sent > 21.0).all(|p| p.received.is_some()));
}

#[test]
fn the_same_seed_gives_the_same_results_with_events() {
    let ev = down_up("node", "node = 1", "10s", "20s") + &down_up("interface", "node = 0\nradio = true", "12s", "14s");
    let text = radio_chain(&ev).replace("[radio]", "[radio]\n[routing]\nprotocol = \"aodv\"");
    let (a, b) = (sim(&text, 7), sim(&text, 7));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.network, b.network);
    assert_eq!(a.trace, b.trace);
    // ... and the events did something.
    let quiet = sim(
        &radio_chain("").replace("[radio]", "[radio]\n[routing]\nprotocol = \"aodv\""),
        7,
    );
    assert!(a.flows[0].rx_packets < quiet.flows[0].rx_packets);
}

#[test]
fn events_that_change_nothing_leave_the_results_alone() {
    // An up event on a link that is up, and a change to the values the link already has.
    let base = chain("5ms", "20ms", "");
    let noop = chain(
        "5ms",
        "20ms",
        "[[events]]\nat = \"3s\"\nkind = \"link_up\"\nlink = 0\n[[events]]\nat = \"4s\"\nkind = \"link_change\"\nlink = 1\nrate = \"10Mbps\"\ndelay = \"5ms\"\nloss = 0.0\n",
    );
    let (a, b) = (sim(&base, 3), sim(&noop, 3));
    assert_eq!(a.flows, b.flows);
    // The two events executed are the only difference in the network table.
    let mut nb = b.network.clone();
    nb.events -= 2;
    assert_eq!(a.network, nb);
}

/// Two radio nodes 100 m apart: node 0 keeps the channel busy (a 1000-byte packet every
/// 5 ms is more than 1 Mbit/s carries), node 1 sends 100 bytes back every 100 ms; node 1's
/// radio goes off for 4 ms at each whole second from 2 s to 11 s, so it comes back up in the
/// middle of node 0's frames. `reception`: the radio's receiver model.
fn busy_pair(reception: &str) -> String {
    let mut t = format!(
        r#"
[simulation]
duration = "15s"
drain = "1s"
sizes = "ns2"
[nodes]
count = 2
placement = {{ kind = "explicit", positions = [["0m", "0m"], ["100m", "0m"]] }}
[radio]
reception = "{reception}"
[[flows]]
src = 0
dst = 1
transport = "udp"
app = {{ kind = "cbr", size = "1000B", interval = "5ms" }}
[[flows]]
src = 1
dst = 0
transport = "udp"
app = {{ kind = "cbr", size = "100B", interval = "100ms" }}
"#
    );
    for k in 2..12 {
        t += &down_up(
            "interface",
            "node = 1\nradio = true",
            &format!("{k}s"),
            &format!("{k}.004s"),
        );
    }
    t
}

#[test]
fn a_radio_that_comes_up_mid_frame_ignores_that_frame_and_works_on() {
    // The frame on the air when node 1's radio comes back started before: its end must not
    // count at node 1's receiver (which never saw it start), or the receiver's view of the
    // medium goes wrong for good.
    for reception in ["threshold", "sinr"] {
        let r = sim(&busy_pair(reception), 1);
        let (fwd, back) = (&r.flows[0], &r.flows[1]);
        assert!(r.network.drops[DropReason::InterfaceDown as usize] > 0, "{reception}");
        // Node 1 still receives and still sends: its share of the channel after the last
        // outage (12 s .. 15 s) is what it was before the first (0 .. 2 s), to a few packets.
        assert!(fwd.rx_packets > 1000, "{reception}: {fwd:?}");
        let late = back.tx_packets - back.rx_packets - back.dropped_segments;
        assert_eq!(late, back.in_flight_segments + back.buffered_packets, "{reception}");
        assert!(back.rx_packets + 10 * 2 >= back.tx_packets, "{reception}: {back:?}");
    }
}
