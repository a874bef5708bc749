//! Stop-and-wait end to end: study D's wired link (256 kbit/s, 50 ms, ns-2 packet sizes)
//! carries one message per round trip, and a lossy link loses none of them.

mod common;

use common::sim;

/// Study D's link and VoIP-like source (128 B every 20 ms from 0.1 s to 10 s, 1 s of drain),
/// one way, over stop-and-wait, with `loss` on the link.
fn study_d_like(loss: f64) -> String {
    format!(
        r#"
[simulation]
duration = "10s"
drain = "1s"
sizes = "ns2"
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "256kbps"
delay = "50ms"
queue = 50
loss = {loss}
[[flows]]
src = 0
dst = 1
transport = "stop-and-wait"
app = {{ kind = "cbr", size = "128B", interval = "20ms", start = "0.1s", stop = "10s" }}
stop_and_wait = {{ rto_min = "200ms" }}
"#
    )
}

#[test]
fn one_message_per_round_trip_on_study_d() {
    let r = sim(&study_d_like(0.0), 1);
    let f = &r.flows[0];
    // A DATA packet is 8 + 128 bytes under ns-2 sizes (4.25 ms at 256 kbit/s) and an ACK 8
    // bytes (0.25 ms): one message every 4.25 + 50 + 0.25 + 50 = 104.5 ms.
    assert_eq!(f.rtt_mean_s, Some(0.1045));
    assert_eq!(f.net_delay_mean_s, Some(0.05425));
    // DATA packets leave at 0.1 s + k·104.5 ms until the run ends at 11 s (k = 0..=104);
    // each arrives 54.25 ms later, so the last one sent is still on its way.
    assert_eq!(f.tx_segments, 105);
    assert_eq!(f.rx_packets, 104);
    assert_eq!((f.ack_packets, f.retransmissions), (104, 0));
    // The source offers a message every 20 ms, five times what one per round trip carries:
    // the send queue holds the rest.
    assert!(f.buffered_packets > 0);
}

#[test]
fn a_lossy_link_delays_messages_but_loses_none() {
    let r = sim(&study_d_like(0.1), 3);
    let f = &r.flows[0];
    assert!(f.retransmissions > 0 && f.rto_timeouts > 0, "{f:?}");
    // A lost ACK makes a DATA packet arrive twice; it is delivered once.
    assert!(f.rx_segments > f.rx_packets, "{f:?}");
    // Every message accepted is delivered or waiting in the send queue, but for the one
    // outstanding at the end if it has not arrived yet: none is lost.
    let undelivered = f.tx_packets - f.rx_packets - f.buffered_packets;
    assert!(undelivered <= 1, "{f:?}");
}
