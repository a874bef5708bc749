//! `queue_delay_mean_s` and `queue_delay_p95_s`: the time a flow's arrived data packets spent
//! waiting in interface queues, against waits worked out by hand for bursts into DropTail
//! queues (one hop, two hops, with and without a device ring), and on a radio.
//!
//! The wired scenarios use `sizes = "ns2"` (the configured size is the IP packet, no link
//! framing), so a 1000-byte packet takes exactly 8 ms on a 1 Mbit/s link and 16 ms on a
//! 500 kbit/s one; every wait is a whole number of milliseconds and the means below are exact.

mod common;

use common::sim;

/// A chain of `rates.len()` links (0 - 1 - …), each of 10 ms and of the given rate, with the
/// extra link keys `link_keys`; one UDP CBR flow from node 0 to the last node sending `count`
/// messages of 1000 B every millisecond from t = 0.
fn burst(rates: &[&str], link_keys: &str, count: u32) -> String {
    let mut t = format!(
        "[simulation]\nduration = \"1s\"\ndrain = \"1s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = {}\n",
        rates.len() + 1
    );
    for (i, rate) in rates.iter().enumerate() {
        t += &format!(
            "[[links]]\nnodes = [{i}, {}]\nrate = \"{rate}\"\ndelay = \"10ms\"\n{link_keys}\n",
            i + 1
        );
    }
    t += &format!(
        "[[flows]]\nsrc = 0\ndst = {}\ntransport = \"udp\"\n\
         app = {{ kind = \"cbr\", size = \"1000B\", interval = \"1ms\", count = {count} }}\n",
        rates.len()
    );
    t
}

/// One 1 Mbit/s hop. Packet k (k = 0 … 4) is handed to the link at k ms; the wire is busy
/// with the packets before it until 8k ms, so it waits 8k − k = 7k ms: 0, 7, 14, 21, 28 ms.
/// Mean 70 / 5 = 14 ms; nearest-rank 95th percentile: rank ⌈4.75⌉ = 5 → 28 ms. Each packet's
/// own delay is its wait + 8 ms on the wire + 10 ms of propagation, so `packet_delay_mean_s`
/// is the mean wait + 18 ms. A device ring below the discipline changes where a packet waits,
/// not how long: the same numbers with `device_queue = 2`, and with the discipline named.
#[test]
fn one_hop_burst_waits_its_predecessors_transmissions() {
    for keys in [
        "",
        "device_queue = 2",
        "aqm = { kind = \"droptail\" }\ndevice_queue = 1",
    ] {
        let r = sim(&burst(&["1Mbps"], keys, 5), 1);
        let f = &r.flows[0];
        assert_eq!(f.rx_segments, 5, "{keys}");
        assert_eq!(f.queue_delay_mean_s, Some(0.014), "{keys}");
        assert_eq!(f.queue_delay_p95_s, Some(0.028), "{keys}");
        let own = f.packet_delay_mean_s.unwrap();
        assert!((own - (0.014 + 0.018)).abs() < 1e-12, "{keys}: {own}");
    }
}

/// A packet that finds the wire free does not wait at all.
#[test]
fn a_packet_alone_waits_nothing() {
    let r = sim(&burst(&["1Mbps"], "", 1), 1);
    let f = &r.flows[0];
    assert_eq!(f.rx_segments, 1);
    assert_eq!((f.queue_delay_mean_s, f.queue_delay_p95_s), (Some(0.0), Some(0.0)));
}

/// Nothing arrived: both columns are null.
#[test]
fn no_arrival_leaves_the_columns_empty() {
    let r = sim(&burst(&["1Mbps"], "drop_forward = [0]", 1), 1);
    let f = &r.flows[0];
    assert_eq!(f.rx_segments, 0);
    assert_eq!((f.queue_delay_mean_s, f.queue_delay_p95_s), (None, None));
}

/// Two hops, 1 Mbit/s (8 ms per packet) then 500 kbit/s (16 ms). First hop: packet k waits
/// 7k ms as above, leaves the wire at 8k + 8 and reaches node 1 at 8k + 18 ms (18, 26, 34,
/// 42). Second hop: packet 0 goes out at once and holds the wire until 34; packet 1 (in at
/// 26) starts at 34, packet 2 (in at 34) at 50, packet 3 (in at 42) at 66: waits 0, 8, 16,
/// 24 ms. Sums over both queues: 0, 15, 30, 45 ms; mean 90 / 4 = 22.5 ms, 95th percentile
/// (rank ⌈3.8⌉ = 4) 45 ms.
#[test]
fn two_hops_add_both_queues() {
    let r = sim(&burst(&["1Mbps", "500kbps"], "", 4), 1);
    let f = &r.flows[0];
    assert_eq!(f.rx_segments, 4);
    assert_eq!(f.queue_delay_mean_s, Some(0.0225));
    assert_eq!(f.queue_delay_p95_s, Some(0.045));
    // Own delay = wait + 8 + 16 ms on the wires + 20 ms of propagation.
    let own = f.packet_delay_mean_s.unwrap();
    assert!((own - (0.0225 + 0.044)).abs() < 1e-12, "{own}");
}

/// Two radios 100 m apart at 1 Mbit/s. A lone packet is taken by the idle MAC the moment it
/// is queued: no queueing delay, although its delay (DIFS-free access, airtime) is not 0. A
/// 1000-byte message every 2 ms overloads the link (a frame takes about 9 ms with its ACK), so
/// packets wait in the interface queue: queueing delay > 0, below the packets' own delay,
/// which also holds MAC access and airtime, and the 95th percentile at least the mean.
#[test]
fn radio_interface_queue_waits() {
    let radio = |app: &str| {
        format!(
            "[simulation]\nduration = \"5s\"\ndrain = \"2s\"\n[output]\ntimeseries = false\n[nodes]\ncount = 2\n\
             placement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"100m\", \"0m\"]] }}\n\
             [radio]\nqueue = 50\n[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = {app}\n"
        )
    };
    let lone = sim(
        &radio(r#"{ kind = "cbr", size = "1000B", interval = "1s", start = "1s", count = 1 }"#),
        1,
    );
    let f = &lone.flows[0];
    assert_eq!(f.rx_segments, 1);
    assert_eq!(f.queue_delay_mean_s, Some(0.0));
    assert!(f.packet_delay_mean_s.unwrap() > 0.008);

    let loaded = sim(
        &radio(r#"{ kind = "cbr", size = "1000B", interval = "2ms", start = "1s" }"#),
        1,
    );
    let f = &loaded.flows[0];
    let (mean, p95) = (f.queue_delay_mean_s.unwrap(), f.queue_delay_p95_s.unwrap());
    eprintln!(
        "loaded radio: queue delay mean {mean} s, p95 {p95} s, own delay {:?} s",
        f.packet_delay_mean_s
    );
    assert!(mean > 0.1, "{mean}");
    assert!(p95 >= mean);
    assert!(mean < f.packet_delay_mean_s.unwrap());
}
