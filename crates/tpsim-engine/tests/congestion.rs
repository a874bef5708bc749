//! BBR, Vegas and Westwood+ end to end on a 10 Mbit/s, 20 ms bottleneck with a 100-packet
//! DropTail queue: one bulk flow for 20 s, SACK and timestamps on.

mod common;

use common::{link, sim};
use tpsim_engine::RunResult;

const TCP: &str =
    "{ sack = true, timestamps = true, window_scaling = true, receive_window = \"4MiB\", send_buffer = \"4MiB\" }";
/// What the link carries of 1448-byte payloads in 1502-byte frames, kbit/s.
const PAYLOAD_KBPS: f64 = 10_000.0 * 1448.0 / 1502.0;

fn bulk(transport: &str) -> RunResult {
    bulk_queue(transport, 100)
}

fn bulk_queue(transport: &str, queue: u32) -> RunResult {
    let flows = format!(
        "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"{transport}\"\ntcp = {TCP}\n\
         app = {{ kind = \"bulk\", size = \"1448B\" }}\n"
    );
    let text = link("10Mbps", "20ms", &format!("queue = {queue}"), &flows, "20s")
        .replace("[nodes]", "[output]\ntimeseries = true\nbin = \"1s\"\n[nodes]");
    sim(&text, 1)
}

/// Flow 0's forward values of time series `name`, in bin order.
fn series(r: &RunResult, name: &str) -> Vec<Option<f64>> {
    let t = &r.timeseries;
    (0..t.series.len())
        .filter(|&i| t.series[i] == name && t.flow[i] == Some(0) && t.direction[i] == "fwd")
        .map(|i| t.value[i])
        .collect()
}

/// The check: a BBR flow alone reaches at least 80 % of the link. It also keeps the
/// queue short (BBR paces at the bottleneck rate: mean RTT within 1.5 × the 41.2-ms base),
/// ends up in ProbeBW, and its BtlBw estimate is the payload rate the link carries.
#[test]
fn bbr_alone_fills_the_link_with_a_short_queue() {
    let r = bulk("tcp-bbr");
    let f = &r.flows[0];
    assert!(f.goodput_kbps.unwrap() >= 0.8 * 10_000.0, "{f:?}");
    assert!(f.rtt_mean_s.unwrap() < 1.5 * 0.0412, "{f:?}");
    assert_eq!(f.retransmissions, 0);
    let state = series(&r, "bbr_state");
    assert_eq!(state.last().copied().flatten(), Some(2.0), "ProbeBW: {state:?}");
    let btlbw = series(&r, "btlbw_bps").last().copied().flatten().unwrap() / 1000.0;
    assert!((btlbw / PAYLOAD_KBPS - 1.0).abs() < 0.05, "BtlBw {btlbw} kbit/s");
    let pacing = series(&r, "pacing_rate_bps");
    assert!(pacing.iter().all(Option::is_some) && !pacing.is_empty());
    let rtprop = series(&r, "rtprop_s").last().copied().flatten().unwrap();
    assert!((0.0400..0.0450).contains(&rtprop), "RTprop {rtprop}");
}

/// Vegas keeps a few segments queued and still fills the link (its per-round judgement on
/// the RTT samples); Westwood+ fills it too and records its bandwidth estimate, which after
/// the first losses is near the payload rate.
#[test]
fn vegas_and_westwood_plus_fill_the_link() {
    let v = bulk("tcp-vegas");
    let f = &v.flows[0];
    assert!(f.goodput_kbps.unwrap() > 0.9 * PAYLOAD_KBPS, "{f:?}");
    assert!(f.rtt_mean_s.unwrap() < 0.050, "Vegas queues a few segments: {f:?}");
    assert_eq!(f.retransmissions, 0, "no loss: Vegas backs off before the queue fills");
    let base = series(&v, "base_rtt_s").last().copied().flatten().unwrap();
    assert!((0.040..0.043).contains(&base), "BaseRTT {base}");
    let w = bulk("tcp-westwood-plus");
    let f = &w.flows[0];
    assert!(f.goodput_kbps.unwrap() > 0.9 * PAYLOAD_KBPS, "{f:?}");
    assert!(f.retransmissions > 0, "Westwood+ fills the buffer as Reno does");
    let bwe = series(&w, "bwe_bps").last().copied().flatten().unwrap() / 1000.0;
    assert!((bwe / PAYLOAD_KBPS - 1.0).abs() < 0.15, "BWE {bwe} kbit/s");
}

/// `tcp.pacing = true` on CUBIC: the pacing rate is a series of its own (once SRTT is
/// measured), absent without the key, and the link is still filled.
#[test]
fn a_paced_cubic_flow_reports_its_pacing_rate() {
    let flows = format!(
        "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"tcp-cubic\"\ntcp = {}\napp = {{ kind = \"bulk\", size = \"1448B\" }}\n",
        TCP.replace(" }", ", pacing = true }")
    );
    let text = link("10Mbps", "20ms", "queue = 100", &flows, "20s")
        .replace("[nodes]", "[output]\ntimeseries = true\nbin = \"1s\"\n[nodes]");
    let paced = sim(&text, 1);
    let rates = series(&paced, "pacing_rate_bps");
    assert!(rates[1..].iter().all(Option::is_some), "{rates:?}");
    assert!(paced.flows[0].goodput_kbps.unwrap() > 0.9 * PAYLOAD_KBPS);
    assert!(!bulk("tcp-cubic").timeseries.series.contains(&"pacing_rate_bps"));
}

/// BBR v3 alone on the same link fills it without loss, ends in a ProbeBW sub-state (2, 4, 5
/// or 6) and measures the payload rate; a shallow buffer (17 packets, half the BDP) costs it
/// fewer retransmissions than BBR v1, whose probes ignore loss (the draft's motivating case).
#[test]
fn bbr3_fills_the_link_and_loses_less_than_bbr_v1_in_a_shallow_buffer() {
    let r = bulk("tcp-bbr3");
    let f = &r.flows[0];
    assert!(f.goodput_kbps.unwrap() >= 0.8 * 10_000.0, "{f:?}");
    assert_eq!(f.retransmissions, 0, "{f:?}");
    let state = series(&r, "bbr_state").last().copied().flatten().unwrap();
    assert!([2.0, 4.0, 5.0, 6.0].contains(&state), "state {state}");
    let bw = series(&r, "btlbw_bps").last().copied().flatten().unwrap() / 1000.0;
    assert!((bw / PAYLOAD_KBPS - 1.0).abs() < 0.05, "max_bw {bw} kbit/s");
    let (v1, v3) = (bulk_queue("tcp-bbr", 17), bulk_queue("tcp-bbr3", 17));
    let (l1, l3) = (v1.flows[0].retransmissions, v3.flows[0].retransmissions);
    assert!(l3 < l1, "v1 {l1}, v3 {l3}");
}
