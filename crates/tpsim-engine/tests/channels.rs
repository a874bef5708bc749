//! Radios on several channels (`[radio] channels`): channels that never interfere, a node
//! with a radio on each, and one ad hoc routing instance per radio.

mod common;

use common::{data_forwards, sim};
use tpsim_engine::RunResult;

/// Four nodes within 30 m of each other, radios on `channels`; two saturating UDP flows,
/// 0 → 1 and 2 → 3 (1000-byte datagrams every 2 ms: 4 Mbit/s each, 8 in all, more than one
/// 11 Mbit/s 802.11b channel carries).
fn two_pairs(channels: &str) -> RunResult {
    let text = format!(
        "[simulation]\nduration = \"10s\"\nseed = 3\nstack = \"modern\"\n\
         [nodes]\ncount = 4\n\
         placement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"10m\", \"0m\"], [\"20m\", \"0m\"], [\"30m\", \"0m\"]] }}\n\
         [radio]\nstandard = \"802.11b\"\ndata_rate = \"11Mbps\"\nchannels = {channels}\n\
         [[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"1000B\", interval = \"2ms\" }}\n\
         [[flows]]\nsrc = 2\ndst = 3\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"1000B\", interval = \"2ms\" }}\n"
    );
    sim(&text, 3)
}

fn pdr(r: &RunResult, flow: usize) -> f64 {
    let f = &r.flows[flow];
    f.rx_packets as f64 / f.tx_packets as f64
}

/// Radios on different channels never hear each other: two pairs side by side, each on its
/// own channel, each deliver everything with no failed reception and no retransmission;
/// the same pairs on one channel share it and lose much of their traffic.
#[test]
fn radios_on_two_channels_do_not_interfere() {
    let apart = two_pairs("[[1], [1], [2], [2]]");
    for flow in 0..2 {
        assert!(pdr(&apart, flow) > 0.99, "flow {flow}: {}", pdr(&apart, flow));
    }
    assert_eq!(apart.network.mac_rx_errors, 0);
    assert_eq!(apart.network.mac_retransmissions, 0);
    let shared = two_pairs("[[1], [1], [1], [1]]");
    let both = pdr(&shared, 0) + pdr(&shared, 1);
    assert!(both < 1.6, "one channel carried {both} of two flows");
}

/// Node 0 (channels 1 and 2) sends to node 2 (channel 1) and node 3 (channel 2), both 400 m
/// away at the same spot, through node 1, which relays on both channels; `extra` is appended
/// to the scenario.
fn relay_on_two_channels(extra: &str) -> RunResult {
    let text = format!(
        "[simulation]\nduration = \"20s\"\nseed = 1\nstack = \"modern\"\n\
         [output]\ntrace = true\n\
         [nodes]\ncount = 4\n\
         placement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"200m\", \"0m\"], [\"400m\", \"0m\"], [\"400m\", \"0m\"]] }}\n\
         [radio]\nstandard = \"802.11b\"\ndata_rate = \"11Mbps\"\nchannels = [[1, 2], [1, 2], [1], [2]]\n\
         [routing]\nprotocol = \"aodv\"\n\
         [[flows]]\nsrc = 0\ndst = 2\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"500B\", interval = \"50ms\", start = \"1s\" }}\n\
         [[flows]]\nsrc = 0\ndst = 3\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"500B\", interval = \"50ms\", start = \"1s\" }}\n{extra}"
    );
    sim(&text, 1)
}

/// One ad hoc routing instance per radio: each flow's route is found by AODV on its own
/// channel, through node 1, and everything arrives.
#[test]
fn a_relay_with_two_radios_forwards_on_each_channel() {
    let r = relay_on_two_channels("");
    for flow in 0..2 {
        assert!(r.flows[flow].tx_packets > 300);
        assert!(pdr(&r, flow) > 0.98, "flow {flow}: {}", pdr(&r, flow));
    }
    assert!(r.network.routing_packets > 0);
    // Node 1 forwarded both flows' data.
    for f in 0..2u32 {
        let n = forwarded(&r, 1, f).len();
        assert!(n > 300, "node 1 forwarded {n} packets of flow {f}");
    }
}

/// An interface event names one radio of a node with two (`channel`): node 1's channel-2
/// radio fails at 5 s for good. The channel-1 flow is untouched; the channel-2 flow is not
/// forwarded by node 1 after 5 s and delivers nothing sent after it; every packet is
/// accounted for.
#[test]
fn an_interface_event_takes_down_one_radio_of_two() {
    let r = relay_on_two_channels(
        "[[events]]\nat = \"5s\"\nkind = \"interface_down\"\nnode = 1\nradio = true\nchannel = 2\n",
    );
    assert!(pdr(&r, 0) > 0.98, "channel 1: {}", pdr(&r, 0));
    assert!(forwarded(&r, 1, 0).iter().any(|&t| t > 5.0));
    let ch2 = forwarded(&r, 1, 1);
    assert!(
        !ch2.is_empty() && ch2.iter().all(|&t| t < 5.0),
        "node 1 on channel 2 after 5 s"
    );
    let f = &r.flows[1];
    // 20 messages a second from 1 s: about 80 before the fault, 380 in all.
    assert!(f.rx_packets > 60 && f.rx_packets <= 81, "{}", f.rx_packets);
    for f in &r.flows {
        assert_eq!(f.tx_segments, f.rx_segments + f.dropped_segments + f.in_flight_segments);
    }
}

/// Times at which node `node` forwarded a data packet of flow `flow`.
fn forwarded(r: &RunResult, node: u64, flow: u32) -> Vec<f64> {
    data_forwards(r, node, Some(flow))
}
