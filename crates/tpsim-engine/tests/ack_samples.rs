//! Per-ACK samples (`[output] ack_samples = true`, docs/metrics.md "Per-ACK samples"): one
//! row per acknowledgement the data sender processes, with its window and RTT state; absent
//! and without effect on the results when not asked for.

mod common;

use common::{f64s, sim, text, trace, u64s};
use tpsim_engine::{Column, RunResult, Table};

/// A lossless two-hop path 0 - 1 - 2 (5 ms + 10 ms one way, queues far larger than any
/// window) carrying one bulk transfer of `bytes` over `transport` (`tcp_opts`: the flow's
/// `tcp` table, if any).
fn path(transport: &str, bytes: &str, tcp_opts: &str, acks: bool, trace: bool) -> String {
    format!(
        r#"
[simulation]
duration = "5s"
drain = "2s"
[output]
ack_samples = {acks}
trace = {trace}
[nodes]
count = 3
[[links]]
nodes = [0, 1]
rate = "20Mbps"
delay = "5ms"
queue = 1000
[[links]]
nodes = [1, 2]
rate = "10Mbps"
delay = "10ms"
queue = 1000
[[flows]]
src = 0
dst = 2
transport = "{transport}"
{tcp_opts}
app = {{ kind = "bulk", size = "1000B", bytes = "{bytes}" }}
"#
    )
}

/// Two-way propagation delay of [`path`], s.
const PROPAGATION_RTT_S: f64 = 2.0 * (0.005 + 0.010);

fn acks(r: &RunResult) -> &Table {
    r.acks.as_ref().expect("ack samples were asked for")
}

fn rows(t: &Table) -> usize {
    t.get("time_s").map_or(0, |c| c.len())
}

/// The data segments' receive events at `node` (the packet trace's count of what arrived
/// there that carries no data of a flow: on a one-way flow, the sender's acknowledgements
/// and handshake packets).
fn control_arrivals(r: &RunResult, node: u64) -> usize {
    let t = trace(r);
    let (ev, n, kind, layer) = (text(t, "event"), u64s(t, "node"), text(t, "kind"), text(t, "layer"));
    (0..ev.len())
        .filter(|&i| ev[i] == "receive" && n[i] == node && kind[i] == "transport" && layer[i] == "transport")
        .count()
}

/// TCP: a row for every segment that reached the sender (each carries the ACK bit), the
/// receiver's pure ACKs among them; slow start adds at most one SMSS per ACK (RFC 5681 §3.1
/// eq. 2), exactly one for each ACK of full segments, and never shrinks the window on a
/// lossless path; RTT samples are at least the propagation delay and average to the flow's
/// `rtt_mean_s`.
#[test]
fn tcp_samples_every_ack_with_slow_start_growth_and_rtt() {
    let r = sim(&path("tcp", "300kB", "", true, true), 1);
    let f = &r.flows[0];
    assert_eq!(f.dropped_segments, 0, "lossless path");
    assert_eq!(f.retransmissions, 0);
    let t = acks(&r);
    let n = rows(t);
    assert_eq!(
        n,
        control_arrivals(&r, 0),
        "one row per segment that reached the sender"
    );
    // Besides the receiver's pure ACKs the sender gets its SYN-ACK (and possibly the FIN's
    // acknowledgement carried with the receiver's own FIN).
    assert!(
        (f.ack_packets + 1..=f.ack_packets + 2).contains(&(n as u64)),
        "{n} rows, {} pure ACKs",
        f.ack_packets
    );
    let cwnd: Vec<f64> = f64s(t, "cwnd_bytes")
        .into_iter()
        .map(|c| c.expect("TCP has a window"))
        .collect();
    assert!(
        f64s(t, "ssthresh_bytes").iter().all(Option::is_none),
        "no loss: still slow start"
    );
    for col in ["cwnd_packets", "ssthresh_packets", "x_bps", "x_recv_bps"] {
        assert!(f64s(t, col).iter().all(Option::is_none), "{col} is not TCP's");
    }
    // SMSS: a 1500-byte MTU less the IPv4 and TCP headers.
    let smss = 1460.0;
    let steps: Vec<f64> = cwnd.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.iter().all(|&d| (0.0..=smss).contains(&d)), "{steps:?}");
    let full = steps.iter().filter(|&&d| d == smss).count();
    // Only the ACK of the last, partial segment (and of the FIN) may add less.
    assert!(full + 3 >= steps.len(), "{full} of {} steps are one SMSS", steps.len());
    assert!(cwnd[n - 1] > 100.0 * smss, "the window grew: {}", cwnd[n - 1]);
    let rtt: Vec<f64> = f64s(t, "rtt_sample_s").iter().flatten().copied().collect();
    assert!(!rtt.is_empty());
    assert!(rtt.iter().all(|&x| x >= PROPAGATION_RTT_S), "{rtt:?}");
    let mean = rtt.iter().sum::<f64>() / rtt.len() as f64;
    let flow_mean = f.rtt_mean_s.expect("RTT measured");
    assert!((mean - flow_mean).abs() < 1e-9, "{mean} vs {flow_mean}");
    // srtt follows the samples: present from the first sample on.
    let srtt = f64s(t, "srtt_s");
    let first = f64s(t, "rtt_sample_s").iter().position(Option::is_some).unwrap();
    assert!(srtt[first..].iter().all(Option::is_some));
    // Rows are in time order, all of flow 0's forward direction.
    let time = f64s(t, "time_s");
    assert!(time.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(t.get("flow"), Some(&Column::U64(vec![0; n])));
    assert_eq!(t.get("direction"), Some(&Column::Text(vec!["fwd"; n])));
}

/// SCTP: one row per SACK the sender received; with one-way data and no loss every SACK
/// travels alone, so that is the receiver's `ack_packets`.
#[test]
fn sctp_samples_every_sack() {
    let r = sim(&path("sctp", "300kB", "", true, false), 1);
    let f = &r.flows[0];
    assert_eq!(f.dropped_segments, 0);
    let t = acks(&r);
    assert!(f.ack_packets > 10);
    assert_eq!(rows(t) as u64, f.ack_packets);
    assert!(f64s(t, "cwnd_bytes").iter().all(Option::is_some));
    let rtt: Vec<f64> = f64s(t, "rtt_sample_s").iter().flatten().copied().collect();
    assert!(!rtt.is_empty() && rtt.iter().all(|&x| x >= PROPAGATION_RTT_S));
}

/// TFRC: one row per feedback packet (the receiver's `ack_packets`), each with the allowed
/// rate X and the receive rate it reported.
#[test]
fn tfrc_samples_every_feedback_packet() {
    let r = sim(&path("tfrc", "300kB", "", true, false), 1);
    let f = &r.flows[0];
    let t = acks(&r);
    assert!(f.ack_packets > 10);
    assert_eq!(rows(t) as u64, f.ack_packets);
    assert!(f64s(t, "x_bps").iter().all(|x| x.is_some_and(|x| x > 0.0)));
    assert!(f64s(t, "x_recv_bps").iter().all(Option::is_some));
    for col in ["cwnd_bytes", "cwnd_packets", "ssthresh_bytes"] {
        assert!(f64s(t, col).iter().all(Option::is_none), "{col} is not TFRC's");
    }
    let rtt: Vec<f64> = f64s(t, "rtt_sample_s").iter().flatten().copied().collect();
    assert!(!rtt.is_empty() && rtt.iter().all(|&x| x >= PROPAGATION_RTT_S));
}

/// Every transport with acknowledgements fills its own columns: windows in packets for
/// ns-2's agents and CCID 2, the rate for CCID 3; UDP has no rows.
#[test]
fn every_transport_fills_its_columns() {
    let cases: [(&str, &str, &str); 4] = [
        ("tcp", "tcp = { preset = \"ns2\" }", "cwnd_packets"),
        ("dccp-ccid2", "", "cwnd_packets"),
        ("dccp-ccid3", "", "x_bps"),
        ("sctp", "", "cwnd_bytes"),
    ];
    for (transport, opts, col) in cases {
        let r = sim(&path(transport, "100kB", opts, true, false), 1);
        let t = acks(&r);
        assert!(rows(t) > 5, "{transport}");
        assert!(f64s(t, col).iter().all(Option::is_some), "{transport}: {col}");
        assert!(f64s(t, "srtt_s").iter().any(Option::is_some), "{transport}");
    }
    let udp = path("udp", "100kB", "", true, false).replace(
        "app = { kind = \"bulk\", size = \"1000B\", bytes = \"100kB\" }",
        "app = { kind = \"cbr\", size = \"1000B\", interval = \"10ms\" }",
    );
    assert_eq!(rows(acks(&sim(&udp, 1))), 0);
}

/// Without the option there is no table and every other table is the same; with it, the same
/// seed gives the same samples.
#[test]
fn samples_are_optional_neutral_and_deterministic() {
    for transport in ["tcp", "tfrc"] {
        let on = sim(&path(transport, "200kB", "", true, false), 3);
        let off = sim(&path(transport, "200kB", "", false, false), 3);
        assert!(off.acks.is_none());
        assert_eq!(on.flows_table(), off.flows_table(), "{transport}");
        assert_eq!(on.network_table(), off.network_table(), "{transport}");
        assert_eq!(on.series_table(), off.series_table(), "{transport}");
        let again = sim(&path(transport, "200kB", "", true, false), 3);
        assert_eq!(on.acks, again.acks, "{transport}");
        assert!(rows(acks(&on)) > 0);
    }
}

/// With a warm-up, rows start at its end (as the tables count from it).
#[test]
fn rows_start_at_the_warm_up() {
    let text = path("tcp", "3MB", "", true, false).replace("drain = \"2s\"", "drain = \"2s\"\nwarmup = \"1s\"");
    let r = sim(&text, 1);
    let time: Vec<f64> = f64s(acks(&r), "time_s").iter().flatten().copied().collect();
    assert!(time.len() > 10);
    assert!(time.iter().all(|&t| t >= 1.0), "first row at {}", time[0]);
}
