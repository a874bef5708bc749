//! Queue disciplines on a link, end to end: a TCP bulk transfer over a 10 Mbit/s, 20 ms
//! bottleneck under DropTail, RED, CoDel, FQ-CoDel and PIE, with and without ECN.

mod common;

use common::{link, sim, text};
use tpsim_engine::{DropReason, RunResult};

/// A bulk `transport` flow (TCP options `tcp`) from node 0 to 1 over the bottleneck, whose
/// queue is `queue` (link keys), for 20 s, with `more` flows.
fn dumbbell(transport: &str, tcp: &str, queue: &str, more: &str, output: &str) -> RunResult {
    let flows = format!(
        "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"{transport}\"\ntcp = {tcp}\n\
         app = {{ kind = \"bulk\", size = \"1448B\" }}\n{more}"
    );
    let text = link("10Mbps", "20ms", queue, &flows, "20s").replace("[nodes]", &format!("{output}\n[nodes]"));
    sim(&text, 1)
}

const CUBIC: &str = "{ sack = true, window_scaling = true, receive_window = \"4MiB\", send_buffer = \"4MiB\" }";
const CUBIC_ECN: &str =
    "{ sack = true, window_scaling = true, receive_window = \"4MiB\", send_buffer = \"4MiB\", ecn = true }";

fn drops(r: &RunResult, d: DropReason) -> u64 {
    r.network.drops[d as usize]
}

/// The check: with CoDel and ECN on, a CUBIC flow sees marks and no queue drops, and
/// still fills the link.
#[test]
fn codel_with_ecn_marks_a_cubic_flow_instead_of_dropping() {
    let r = dumbbell(
        "tcp-cubic",
        CUBIC_ECN,
        "aqm = { kind = \"codel\", ecn = true }",
        "",
        "[output]\ntrace = true",
    );
    let (n, f) = (&r.network, &r.flows[0]);
    assert!(n.ecn_marks > 10, "{n:?}");
    let dropped: u64 = n.drops.iter().sum();
    assert_eq!(dropped, 0, "{n:?}");
    assert_eq!(f.retransmissions, 0, "{f:?}");
    assert!(f.goodput_kbps.unwrap() > 8_500.0, "{f:?}");
    // Each mark is a `mark` row of the trace, for CoDel's reason.
    let t = common::trace(&r);
    let events = text(t, "event");
    let reasons = common::opt_text(t, "reason");
    let marks: Vec<usize> = (0..events.len()).filter(|&i| events[i] == "mark").collect();
    assert_eq!(marks.len() as u64, n.ecn_marks);
    assert!(marks.iter().all(|&i| reasons[i] == Some("aqm_sojourn")));
}

/// Without ECN the same flow is dropped from at the head of the queue by CoDel's control law,
/// and the queueing delay stays near CoDel's 5 ms target, where a deep DropTail buffer
/// (bufferbloat) holds hundreds of milliseconds.
#[test]
fn codel_drops_at_the_head_and_keeps_the_delay_near_target() {
    let codel = dumbbell("tcp-cubic", CUBIC, "aqm = { kind = \"codel\" }", "", "");
    let deep = dumbbell("tcp-cubic", CUBIC, "queue = 1000", "", "");
    assert!(drops(&codel, DropReason::AqmSojourn) > 0, "{:?}", codel.network);
    assert_eq!(drops(&codel, DropReason::Queue), 0);
    assert_eq!(codel.network.ecn_marks, 0, "no ECN-capable packet");
    // The base RTT is 40 ms plus serialization; the mean RTT adds the mean queueing delay.
    let (rtt_codel, rtt_deep) = (codel.flows[0].rtt_mean_s.unwrap(), deep.flows[0].rtt_mean_s.unwrap());
    assert!(rtt_codel < 0.060, "CoDel: mean RTT {rtt_codel}");
    assert!(rtt_deep > 0.150, "deep DropTail: mean RTT {rtt_deep}");
    assert!(codel.flows[0].goodput_kbps.unwrap() > 8_500.0);
}

/// RED and PIE with their defaults (ns-3's: 25-packet limits; RED's thresholds 5 and 15
/// packets, PIE's 15 ms target) drop early at random, keep the delay far below the deep
/// buffer's and leave the link nearly full.
#[test]
fn red_and_pie_drop_early_and_bound_the_delay() {
    for aqm in ["red", "pie"] {
        let r = dumbbell("tcp-cubic", CUBIC, &format!("aqm = {{ kind = \"{aqm}\" }}"), "", "");
        assert!(drops(&r, DropReason::AqmEarly) > 0, "{aqm}: {:?}", r.network);
        let rtt = r.flows[0].rtt_mean_s.unwrap();
        assert!(rtt < 0.070, "{aqm}: mean RTT {rtt}");
        assert!(r.flows[0].goodput_kbps.unwrap() > 9_000.0, "{aqm}: {:?}", r.flows[0]);
    }
}

/// FQ-CoDel isolates a sparse flow from a bulk flow's backlog: a 64 kbit/s CBR flow beside the
/// TCP transfer sees about the base delay under FQ-CoDel, and the bulk flow's queue under a
/// shared DropTail FIFO.
#[test]
fn fq_codel_keeps_a_sparse_flow_out_of_a_bulk_flows_queue() {
    let voice = common::cbr(0, 1, "160B", "20ms", "1s");
    let fq = dumbbell("tcp-cubic", CUBIC, "aqm = { kind = \"fq-codel\" }", &voice, "");
    let fifo = dumbbell("tcp-cubic", CUBIC, "queue = 200", &voice, "");
    let voice = |r: &RunResult| {
        r.flows
            .iter()
            .find(|f| f.key.flow == 1)
            .cloned()
            .expect("the voice flow")
    };
    let (v_fq, v_fifo) = (voice(&fq), voice(&fifo));
    let (d_fq, d_fifo) = (v_fq.delay_mean_s.unwrap(), v_fifo.delay_mean_s.unwrap());
    assert_eq!(v_fq.rx_packets, v_fq.tx_packets, "no voice packet lost");
    // 20 ms propagation plus well under a millisecond of queueing and serialization.
    assert!(d_fq < 0.022, "FQ-CoDel: voice delay {d_fq}");
    assert!(d_fifo > 0.100, "DropTail: voice delay {d_fifo}");
}

/// A DropTail table gives what `queue` alone gives, packet for packet.
#[test]
fn an_explicit_droptail_is_the_default_queue() {
    let plain = dumbbell("tcp", "{}", "queue = 5", "", "");
    let explicit = dumbbell("tcp", "{}", "queue = 5\naqm = { kind = \"droptail\" }", "", "");
    assert!(drops(&plain, DropReason::Queue) > 0);
    assert_eq!(
        plain.flows_table().canonical_csv(),
        explicit.flows_table().canonical_csv()
    );
    assert_eq!(
        plain.network_table().canonical_csv(),
        explicit.network_table().canonical_csv()
    );
}

/// A 2-hop 802.11b chain (nodes 200 m apart, AODV) with a TCP bulk transfer, `aqm` on every
/// radio.
fn chain(aqm: &str, tcp: &str) -> RunResult {
    let text = format!(
        "[simulation]\nduration = \"30s\"\ndrain = \"2s\"\n[nodes]\ncount = 5\n\
         placement = {{ kind = \"grid\", columns = 5, spacing = \"200m\" }}\n\
         [radio]\nstandard = \"802.11b\"\ndata_rate = \"1Mbps\"\npropagation = \"two-ray-ground\"\n{aqm}\n\
         [routing]\nprotocol = \"aodv\"\n\
         [[flows]]\nsrc = 0\ndst = 2\ntransport = \"tcp-newreno\"\ntcp = {tcp}\n\
         app = {{ kind = \"bulk\", size = \"1000B\", start = \"1s\" }}\n"
    );
    sim(&text, 2)
}

/// A radio interface's discipline takes the data packets while routing control keeps the
/// PriQueue ahead of them: CoDel with ECN on the chain marks the TCP flow and drops none of
/// its packets at the queue, where the plain 50-packet PriQueue tail-drops; AODV still finds
/// its route, and the flow gets at least as much through with a far shorter queue.
#[test]
fn codel_with_ecn_on_the_radios_marks_instead_of_dropping() {
    let ecn = "{ ecn = true, receive_window = \"256KiB\", window_scaling = true, send_buffer = \"256KiB\" }";
    let plain = chain("", ecn);
    let codel = chain("aqm = { kind = \"codel\", ecn = true }", ecn);
    assert!(drops(&plain, DropReason::Queue) > 0, "{:?}", plain.network);
    assert_eq!(plain.network.ecn_marks, 0);
    let n = &codel.network;
    assert!(n.ecn_marks > 0, "{n:?}");
    assert_eq!(
        drops(&codel, DropReason::Queue) + drops(&codel, DropReason::AqmSojourn),
        0,
        "{n:?}"
    );
    assert!(n.routing_packets > 0);
    let (g_plain, g_codel) = (
        plain.flows[0].goodput_kbps.unwrap(),
        codel.flows[0].goodput_kbps.unwrap(),
    );
    assert!(g_codel >= g_plain, "goodput {g_codel} against {g_plain} kbit/s");
    let (d_plain, d_codel) = (
        plain.flows[0].net_delay_mean_s.unwrap(),
        codel.flows[0].net_delay_mean_s.unwrap(),
    );
    assert!(d_codel < 0.2 * d_plain, "network delay {d_codel} s against {d_plain} s");
}

/// The series of a queue under a discipline: its drops and marks per bin add up to the network
/// table's counts, and a queue without `aqm` has none.
#[test]
fn a_disciplined_queue_has_drop_and_mark_series_that_add_up() {
    for (aqm, tcp) in [
        ("aqm = { kind = \"codel\", ecn = true }", CUBIC_ECN),
        ("aqm = { kind = \"pie\" }", CUBIC),
    ] {
        let r = dumbbell("tcp-cubic", tcp, aqm, "", "[output]\ntimeseries = true");
        let t = &r.timeseries;
        let sum = |name: &str| -> f64 {
            (0..t.series.len())
                .filter(|&i| t.series[i] == name)
                .map(|i| t.value[i].unwrap())
                .sum()
        };
        let n = &r.network;
        let dropped: u64 = n.drops.iter().sum();
        assert!(dropped + n.ecn_marks > 0, "{aqm}");
        assert_eq!(sum("queue_drops") as u64, dropped, "{aqm}");
        assert_eq!(sum("queue_marks") as u64, n.ecn_marks, "{aqm}");
    }
    let plain = dumbbell("tcp", "{}", "queue = 5", "", "[output]\ntimeseries = true");
    assert!(!plain.timeseries.series.contains(&"queue_drops"));
}

/// `device_queue` places below the discipline hold packets the discipline has handed over:
/// a burst of 10 UDP messages of 1000 B within 0.1 ms onto a free 1 Mbit/s link with a 2-packet
/// DropTail queue keeps 1 on the wire + 2 queued (7 dropped); with 3 ring places below it,
/// 1 + 3 + 2 (4 dropped); the last one delivered has waited for all before it.
#[test]
fn device_queue_holds_packets_below_the_discipline() {
    let burst = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\n\
                 app = { kind = \"cbr\", size = \"1000B\", interval = \"10us\", count = 10 }\n";
    for (extra, delivered) in [("queue = 2", 3), ("queue = 2\ndevice_queue = 3", 6)] {
        let r = sim(&link("1Mbps", "10ms", extra, burst, "2s"), 1);
        let f = &r.flows[0];
        assert_eq!(f.rx_packets, delivered, "{extra}: {f:?}");
        assert_eq!(drops(&r, DropReason::Queue), 10 - delivered, "{extra}");
        // Serialization of 1028 IP bytes + framing at 1 Mbit/s is just over 8.2 ms.
        let want = 0.010 + delivered as f64 * 0.0082;
        let max = f.delay_max_s.unwrap();
        assert!((max - want).abs() < 0.001, "{extra}: max delay {max}, expected {want}");
    }
}
