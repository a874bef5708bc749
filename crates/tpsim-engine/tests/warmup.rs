//! `[simulation] warmup`: the flows and network tables count only what happens from the
//! warm-up on (docs/metrics.md), exactly.

mod common;

use common::sim;

/// 16 static radio nodes in 500 m × 500 m with AODV, ARP and energy; two UDP CBR flows and
/// a TCP bulk transfer from t = 1 s; `duration` and `warmup` as given (any unit).
fn wireless(duration: &str, warmup: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\nwarmup = \"{warmup}\"\nsizes = \"ns2\"\n\
         [nodes]\ncount = 16\nplacement = {{ kind = \"uniform\", area = [\"500m\", \"500m\"] }}\n\
         [radio]\nqueue = 20\n[routing]\nprotocol = \"aodv\"\n[arp]\n\
         [energy]\ninitial = \"1000J\"\ntx = \"1.4W\"\nrx = \"1W\"\nidle = \"0.05W\"\n\
         [[flows]]\nsrc = 0\ndst = 9\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"512B\", interval = \"40ms\", start = \"1s\" }}\n\
         [[flows]]\nsrc = 3\ndst = 14\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"512B\", interval = \"25ms\", start = \"1.5s\" }}\n\
         [[flows]]\nsrc = 5\ndst = 11\ntransport = \"tcp\"\napp = {{ kind = \"bulk\", size = \"512B\", start = \"1s\" }}\n"
    )
}

/// A counter of the run with a warm-up equals the whole run's minus what a run stopped at the
/// end of the warm-up counted (the runs are identical up to then). The warm-up ends at an
/// instant no event of this scenario falls on (not a multiple of any application interval).
#[test]
fn counters_are_the_whole_run_minus_the_warmup() {
    let w = "4000123457ns";
    let seed = 3;
    let whole = sim(&wireless("12s", "0s"), seed);
    let head = sim(&wireless(w, "0s"), seed);
    let tail = sim(&wireless("12s", w), seed);
    let (a, h, t) = (&whole.network, &head.network, &tail.network);
    assert!(
        h.mac_frames > 100 && h.routing_packets > 0 && h.arp_requests > 0,
        "the warm-up sees traffic: {h:?}"
    );
    let pairs = [
        ("mac_frames", a.mac_frames, h.mac_frames, t.mac_frames),
        (
            "mac_data_frames",
            a.mac_data_frames,
            h.mac_data_frames,
            t.mac_data_frames,
        ),
        ("mac_ack_frames", a.mac_ack_frames, h.mac_ack_frames, t.mac_ack_frames),
        ("mac_rts_frames", a.mac_rts_frames, h.mac_rts_frames, t.mac_rts_frames),
        (
            "mac_retransmissions",
            a.mac_retransmissions,
            h.mac_retransmissions,
            t.mac_retransmissions,
        ),
        (
            "mac_ack_timeouts",
            a.mac_ack_timeouts,
            h.mac_ack_timeouts,
            t.mac_ack_timeouts,
        ),
        ("mac_rx_errors", a.mac_rx_errors, h.mac_rx_errors, t.mac_rx_errors),
        (
            "routing_packets",
            a.routing_packets,
            h.routing_packets,
            t.routing_packets,
        ),
        ("routing_drops", a.routing_drops, h.routing_drops, t.routing_drops),
        ("arp_requests", a.arp_requests, h.arp_requests, t.arp_requests),
        ("arp_replies", a.arp_replies, h.arp_replies, t.arp_replies),
    ];
    for (name, all, before, after) in pairs {
        assert_eq!(after, all - before, "{name}: whole {all}, warm-up {before}");
    }
    for k in 0..6 {
        assert_eq!(
            t.routing_by_type[k],
            a.routing_by_type[k] - h.routing_by_type[k],
            "routing type {k}"
        );
    }
    let (ea, eh, et) = (
        a.energy_consumed_j_total.unwrap(),
        h.energy_consumed_j_total.unwrap(),
        t.energy_consumed_j_total.unwrap(),
    );
    assert!(
        (et - (ea - eh)).abs() < 1e-9 * ea,
        "energy: whole {ea} J, warm-up {eh} J, after {et} J"
    );
    for (i, f) in tail.flows.iter().enumerate() {
        let (fa, fh) = (&whole.flows[i], &head.flows[i]);
        assert!(fh.tx_packets > 0, "flow {i} sends during the warm-up");
        assert_eq!(f.tx_packets, fa.tx_packets - fh.tx_packets, "flow {i} tx_packets");
        assert_eq!(f.tx_bytes, fa.tx_bytes - fh.tx_bytes, "flow {i} tx_bytes");
        assert_eq!(f.tx_segments, fa.tx_segments - fh.tx_segments, "flow {i} tx_segments");
        assert_eq!(
            f.retransmissions,
            fa.retransmissions - fh.retransmissions,
            "flow {i} retransmissions"
        );
        assert_eq!(f.ack_packets, fa.ack_packets - fh.ack_packets, "flow {i} ack_packets");
        assert_eq!(
            f.rto_timeouts,
            fa.rto_timeouts - fh.rto_timeouts,
            "flow {i} rto_timeouts"
        );
    }
}

/// On a lossless wire, a CBR flow counted from the warm-up on has exactly the messages
/// created from then on, all delivered, and its goodput window starts at the first of them.
#[test]
fn flows_count_the_messages_created_after_the_warmup() {
    let text = "[simulation]\nduration = \"10s\"\ndrain = \"1s\"\nwarmup = \"4s\"\n\
        [nodes]\ncount = 2\n\
        [[links]]\nnodes = [0, 1]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n\
        [[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"1000B\", interval = \"10ms\" }\n";
    let r = sim(text, 1);
    let f = &r.flows[0];
    // Messages at 4.00 s, 4.01 s, ..., 9.99 s.
    assert_eq!(f.tx_packets, 600);
    assert_eq!(f.rx_packets, 600);
    assert_eq!(f.tx_segments, 600);
    assert_eq!(f.rx_segments, 600);
    // The window is [4 s, 10 s] (the first counted message to the stop): 599 messages of
    // 1000 B arrive in it (the last one, sent at 9.99 s, arrives after 10 s).
    let g = f.goodput_kbps.unwrap();
    assert!((g - 599.0 * 8.0 / 6.0).abs() < 1e-9, "goodput {g} kbit/s");
    // One frame per packet, counted from the warm-up on.
    assert_eq!(r.network.mac_frames, 600);
}

#[test]
fn a_warmup_not_shorter_than_the_run_is_refused() {
    let text = "[simulation]\nduration = \"10s\"\nwarmup = \"10s\"\n[nodes]\ncount = 1\n";
    let e = tpsim_scenario::load(text, "w.toml").unwrap_err().to_string();
    assert!(
        e.contains("simulation.warmup") && e.contains("shorter than simulation.duration (10s), got 10s"),
        "{e}"
    );
}
