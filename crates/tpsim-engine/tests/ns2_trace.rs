//! The packet trace's ns-2 part (`[output] ns2_trace`, docs/ns2-trace.md): it adds hop rows
//! and columns without changing the rows and tables of a run, gives every packet one identity
//! that its copies keep, and its hop rows agree with the run's own counters.

mod common;

use common::{f64s, opt_text, opt_u32, sim, text, u64s};
use std::collections::{HashMap, HashSet};
use tpsim_engine::Table;

/// A chain 0 - 1 - 2 whose second link is slow with a 3-packet queue and loss: a UDP CBR flow
/// that overloads it and a two-way voip flow.
fn wired(output: &str) -> String {
    format!(
        r#"
[simulation]
duration = "3s"
drain = "200ms"
[output]
{output}
[nodes]
count = 3
[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "2ms"
[[links]]
nodes = [1, 2]
rate = "500kbps"
delay = "10ms"
queue = 3
loss = 0.02
[[flows]]
src = 0
dst = 2
transport = "udp"
app = {{ kind = "cbr", size = "400B", interval = "8ms" }}
[[flows]]
src = 2
dst = 0
transport = "tcp"
app = {{ kind = "voip", size = "160B", interval = "20ms" }}
"#
    )
}

/// A plain trace row: (time in ns, event, node, layer, kind, flow, packet).
type PlainRow = (
    u64,
    &'static str,
    u64,
    &'static str,
    &'static str,
    Option<u32>,
    Option<u32>,
);

/// The rows of `t` whose event is one of the plain trace's, in order.
fn plain_rows(t: &Table) -> Vec<PlainRow> {
    let time = f64s(t, "time_s");
    let (event, node, layer, kind) = (text(t, "event"), u64s(t, "node"), text(t, "layer"), text(t, "kind"));
    let (flow, packet) = (opt_u32(t, "flow"), opt_u32(t, "packet"));
    (0..event.len())
        .filter(|&i| ["send", "forward", "receive", "drop"].contains(&event[i]))
        .map(|i| {
            let ns = (time[i].unwrap() * 1e9).round() as u64;
            (ns, event[i], node[i], layer[i], kind[i], flow[i], packet[i])
        })
        .collect()
}

#[test]
fn ns2_trace_adds_hop_rows_and_changes_nothing_else() {
    let plain = sim(&wired("trace = true"), 5);
    let ns2 = sim(&wired(r#"ns2_trace = "wired""#), 5);
    assert_eq!(plain.flows_table(), ns2.flows_table());
    assert_eq!(plain.network_table(), ns2.network_table());
    let (p, n) = (plain.trace.as_ref().unwrap(), ns2.trace.as_ref().unwrap());
    assert!(p.get("uid").is_none(), "no ns-2 columns unless asked");
    assert_eq!(plain_rows(p), plain_rows(n));
    let events: HashSet<_> = text(n, "event").iter().copied().collect();
    for e in ["enqueue", "dequeue", "arrive"] {
        assert!(events.contains(e), "{e} rows");
    }
    assert!(!events.contains("mac_send"), "no radio");
}

#[test]
fn wired_hop_rows_follow_each_packet_over_both_links() {
    let res = sim(&wired(r#"ns2_trace = "wired""#), 3);
    let t = res.trace.as_ref().unwrap();
    let (event, node, kind) = (text(t, "event"), u64s(t, "node"), text(t, "kind"));
    let (uid, hop) = (u64s(t, "uid"), opt_u32(t, "hop"));
    let reason = opt_text(t, "reason");
    // Every packet made is sent once: its uid is its own.
    let mut sends = HashMap::new();
    for i in 0..event.len() {
        if event[i] == "send" {
            assert!(sends.insert(uid[i], node[i]).is_none(), "uid {} sent twice", uid[i]);
        }
    }
    // Per link direction (node, hop): enqueues = dequeues + queue drops + what is still
    // queued at the end (at most the 3-packet queue); every dequeued packet arrives at the
    // hop or is lost on the wire.
    let mut per_dir: HashMap<(u64, u32), [u64; 4]> = HashMap::new();
    for i in 0..event.len() {
        let Some(h) = hop[i] else { continue };
        let (k, j) = match (event[i], reason[i]) {
            ("enqueue", _) => ((node[i], h), 0),
            ("dequeue", _) => ((node[i], h), 1),
            ("drop", Some("queue")) => ((node[i], h), 2),
            ("arrive", _) => ((h as u64, node[i] as u32), 3),
            _ => continue,
        };
        per_dir.entry(k).or_default()[j] += 1;
    }
    assert_eq!(per_dir.len(), 4, "both directions of both links: {per_dir:?}");
    let lost = res.network.drops[tpsim_engine::DropReason::LinkError as usize];
    let mut arrived_or_lost = 0;
    for (k, [enq, deq, qdrop, arr]) in &per_dir {
        assert!(enq - deq - qdrop <= 3 + 1, "{k:?}: {enq} {deq} {qdrop}");
        assert!(arr <= deq, "{k:?}");
        arrived_or_lost += deq - arr;
    }
    // What left a wire without arriving was lost on it, or is still in flight at the end.
    assert!(arrived_or_lost >= lost, "{arrived_or_lost} {lost}");
    assert!(per_dir[&(1, 2)][2] > 0, "the bottleneck queue drops");
    // Flow 0's packets that reached node 2 arrived there from node 1 under their send's uid.
    let flow = opt_u32(t, "flow");
    let arrivals: HashSet<u64> = (0..event.len())
        .filter(|&i| event[i] == "arrive" && node[i] == 2 && hop[i] == Some(1) && kind[i] == "data")
        .map(|i| uid[i])
        .collect();
    let received: Vec<u64> = (0..event.len())
        .filter(|&i| event[i] == "receive" && node[i] == 2 && flow[i] == Some(0))
        .map(|i| uid[i])
        .collect();
    let f0 = res.flows.iter().find(|f| f.key.flow == 0).unwrap();
    assert_eq!(received.len() as u64, f0.rx_segments);
    assert!(received.iter().all(|u| arrivals.contains(u) && sends[u] == 0));
}

#[test]
fn radio_mac_rows_count_every_frame_sent() {
    let text_ = r#"
[simulation]
duration = "5s"
drain = "1s"
[output]
ns2_trace = "old"
[nodes]
count = 3
placement = { kind = "explicit", positions = [["0m", "0m"], ["200m", "0m"], ["400m", "0m"]] }
[radio]
rts_threshold = "0B"
[routing]
protocol = "aodv"
[[flows]]
src = 0
dst = 2
transport = "udp"
app = { kind = "cbr", size = "512B", interval = "50ms" }
"#;
    let res = sim(text_, 1);
    let t = res.trace.as_ref().unwrap();
    let (event, ptype) = (text(t, "event"), text(t, "ns2_type"));
    let sent = event.iter().filter(|&&e| e == "mac_send").count() as u64;
    assert_eq!(sent, res.network.mac_frames);
    for f in ["RTS", "CTS", "ACK", "cbr", "AODV"] {
        assert!(
            (0..event.len()).any(|i| event[i] == "mac_send" && ptype[i] == f),
            "{f} frames sent"
        );
    }
    // A unicast frame is received by its addressee: at most once per frame sent to it.
    let received = event.iter().filter(|&&e| e == "mac_receive").count() as u64;
    assert!(received > 0);
    // Control frames carry uid 0, packets their own.
    let uid = u64s(t, "uid");
    assert!((0..event.len()).all(|i| (ptype[i] == "RTS" || ptype[i] == "CTS" || ptype[i] == "ACK") <= (uid[i] == 0)));
}
