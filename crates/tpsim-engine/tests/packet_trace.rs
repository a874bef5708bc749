//! The per-packet event trace (`[output] trace = true`, docs/metrics.md "Packet trace")
//! reproduces the flows and network tables' counts exactly on a wired run with loss and a
//! small queue, and is absent when not asked for.

mod common;

use common::{bools, f64s, lossy_chain, opt_text, opt_u32, sim, text, u64s};
use std::collections::HashMap;
use tpsim_engine::pkttrace::drop_name;
use tpsim_engine::{DropReason, RunResult, Table};

/// [`lossy_chain`] for 4 s (a TCP bulk transfer, a UDP CBR flow that overloads the
/// bottleneck, a two-way UDP voip flow) plus a TCP CBR flow in the reverse direction.
fn scenario(trace: bool, warmup: &str) -> String {
    lossy_chain(
        &format!("duration = \"4s\"\nwarmup = \"{warmup}\""),
        &format!("trace = {trace}"),
        "[[flows]]\nsrc = 3\ndst = 0\ntransport = \"tcp\"\napp = { kind = \"cbr\", size = \"500B\", interval = \"30ms\" }\n",
    )
}

/// The trace's columns as plain vectors, one entry per row.
struct Rows {
    event: Vec<&'static str>,
    node: Vec<u64>,
    layer: Vec<&'static str>,
    kind: Vec<&'static str>,
    flow: Vec<Option<u32>>,
    direction: Vec<Option<&'static str>>,
    packet: Vec<Option<u32>>,
    reason: Vec<Option<&'static str>>,
    duplicate: Vec<bool>,
    time_s: Vec<f64>,
}

fn rows(t: &Table) -> Rows {
    Rows {
        event: text(t, "event").to_vec(),
        node: u64s(t, "node").to_vec(),
        layer: text(t, "layer").to_vec(),
        kind: text(t, "kind").to_vec(),
        flow: opt_u32(t, "flow").to_vec(),
        direction: opt_text(t, "direction").to_vec(),
        packet: opt_u32(t, "packet").to_vec(),
        reason: opt_text(t, "reason").to_vec(),
        duplicate: bools(t, "duplicate").to_vec(),
        time_s: f64s(t, "time_s").iter().map(|x| x.unwrap()).collect(),
    }
}

/// Per flow direction: (send rows, first receives, duplicate receives, drop rows by reason).
type Counts = HashMap<(u32, &'static str), (u64, u64, u64, HashMap<&'static str, u64>)>;

fn counts(r: &Rows) -> Counts {
    let mut c: Counts = HashMap::new();
    for i in 0..r.event.len() {
        let (Some(flow), Some(dir)) = (r.flow[i], r.direction[i]) else {
            continue;
        };
        let e = c.entry((flow, dir)).or_default();
        match r.event[i] {
            "send" => e.0 += 1,
            "receive" if r.duplicate[i] => e.2 += 1,
            "receive" => e.1 += 1,
            "drop" => *e.3.entry(r.reason[i].unwrap()).or_default() += 1,
            "forward" => {}
            other => panic!("unknown event {other}"),
        }
    }
    c
}

/// Checks that the trace of `res` reproduces its tables' counts; returns the rows.
fn check(res: &RunResult) -> Rows {
    let table = res.trace.as_ref().expect("trace asked for");
    let r = rows(table);
    assert!(r.event.len() > 1000, "a busy run leaves many rows: {}", r.event.len());
    let c = counts(&r);
    let mut any_drop = 0;
    for f in &res.flows {
        let key = (f.key.flow, f.key.direction);
        let (tx, rx, dup, drops) = c.get(&key).cloned().unwrap_or_default();
        assert_eq!(tx, f.tx_segments, "tx_segments of {key:?}");
        assert_eq!(rx, f.rx_segments, "rx_segments of {key:?}");
        assert_eq!(dup, f.rx_duplicate_segments, "rx_duplicate_segments of {key:?}");
        // On wires every packet has one copy: each drop row is a lost packet.
        assert_eq!(
            drops.values().sum::<u64>(),
            f.dropped_segments,
            "dropped_segments of {key:?}"
        );
        any_drop += f.dropped_segments;
    }
    assert!(any_drop > 0, "the run must drop packets for the test to mean something");
    // Every drop of a packet that is not routing control or ARP (a flow's data, pure ACKs)
    // counts in the network table's drops_<reason>, by reason.
    let mut by_reason: HashMap<&str, u64> = HashMap::new();
    for i in 0..r.event.len() {
        if r.event[i] == "drop" && matches!(r.kind[i], "data" | "transport") {
            *by_reason.entry(r.reason[i].unwrap()).or_default() += 1;
        }
    }
    for reason in DropReason::ALL {
        let want = res.network.drops[reason as usize];
        assert_eq!(
            by_reason.get(drop_name(reason)).copied().unwrap_or(0),
            want,
            "{reason:?}"
        );
    }
    assert!(
        res.network.drops[DropReason::Queue as usize] > 0,
        "the small queue overflows"
    );
    assert!(
        res.network.drops[DropReason::LinkError as usize] > 0,
        "the lossy link loses"
    );
    // Where things happen: sends at a flow's source (transport), forwards at the middle nodes
    // (IP), drops at the bottleneck's ends, reasons only on drops, packet numbers only with a
    // direction.
    for i in 0..r.event.len() {
        match r.event[i] {
            "send" => assert_eq!(r.layer[i], "transport"),
            "forward" => {
                assert!(r.node[i] == 1 || r.node[i] == 2, "row {i}");
                assert_eq!(r.layer[i], "ip");
            }
            "drop" => {
                assert!(r.node[i] == 1 || r.node[i] == 2, "row {i}");
                assert_eq!(r.layer[i], "link");
            }
            _ => assert_eq!(r.layer[i], "transport"),
        }
        assert_eq!(r.reason[i].is_some(), r.event[i] == "drop", "row {i}");
        assert_eq!(r.packet[i].is_some(), r.flow[i].is_some(), "row {i}");
        assert_eq!(r.kind[i] == "data", r.flow[i].is_some(), "row {i}");
    }
    assert!(r.time_s.windows(2).all(|w| w[0] <= w[1]), "rows in time order");
    r
}

#[test]
fn trace_reproduces_flow_and_network_counts_on_a_lossy_wired_run() {
    let res = sim(&scenario(true, "0s"), 7);
    let r = check(&res);
    // Pure ACKs of the TCP flows are traced too, without a flow.
    assert!(r.kind.contains(&"transport"));
    assert!(r.event.contains(&"forward"));
}

#[test]
fn with_a_warmup_the_trace_counts_what_the_tables_count() {
    let res = sim(&scenario(true, "1s"), 3);
    let r = check(&res);
    // Packets of no direction are traced from the warm-up on.
    for i in 0..r.event.len() {
        if r.flow[i].is_none() {
            assert!(r.time_s[i] >= 1.0, "row {i} at {}", r.time_s[i]);
        }
    }
}

#[test]
fn without_trace_nothing_is_recorded_and_the_tables_are_the_same() {
    let off = sim(&scenario(false, "0s"), 7);
    assert!(off.trace.is_none());
    let on = sim(&scenario(true, "0s"), 7);
    assert_eq!(off.flows_table(), on.flows_table());
    assert_eq!(off.network_table(), on.network_table());
    assert_eq!(off.series_table(), on.series_table());
}

/// On a radio chain with AODV and ARP the trace still gives each direction's sends and first
/// receives exactly, a drop row for every lost packet (a lost packet's copies may be dropped
/// more than once), and rows for routing control and ARP messages without a flow.
#[test]
fn radio_run_trace_counts_sends_receives_and_marks_control_messages() {
    let text = r#"
[simulation]
duration = "10s"
drain = "2s"
[output]
trace = true
[nodes]
count = 4
placement = { kind = "explicit", positions = [["0m", "0m"], ["150m", "0m"], ["300m", "0m"], ["450m", "0m"]] }
[radio]
[routing]
protocol = "aodv"
[arp]
[[flows]]
src = 0
dst = 3
transport = "tcp"
app = { kind = "bulk", size = "1000B" }
[[flows]]
src = 3
dst = 0
transport = "udp"
app = { kind = "cbr", size = "500B", interval = "5ms" }
"#;
    let res = sim(text, 2);
    let r = rows(res.trace.as_ref().unwrap());
    let c = counts(&r);
    for f in &res.flows {
        let key = (f.key.flow, f.key.direction);
        let (tx, rx, dup, drops) = c.get(&key).cloned().unwrap_or_default();
        assert_eq!(tx, f.tx_segments, "tx_segments of {key:?}");
        assert_eq!(rx, f.rx_segments, "rx_segments of {key:?}");
        assert_eq!(dup, f.rx_duplicate_segments, "rx_duplicate_segments of {key:?}");
        assert!(drops.values().sum::<u64>() >= f.dropped_segments, "{key:?}");
        assert!(rx > 0, "{key:?} delivers");
    }
    for kind in ["routing", "arp"] {
        let n = (0..r.kind.len())
            .filter(|&i| r.kind[i] == kind && r.event[i] == "send")
            .count();
        assert!(n > 0, "{kind} sends traced");
    }
    assert!((0..r.kind.len()).all(|i| r.flow[i].is_some() == (r.kind[i] == "data")));
}
