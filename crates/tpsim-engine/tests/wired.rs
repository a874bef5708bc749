//! Scenario-level checks of the wired model against exact and analytic references.

mod common;

use common::sim;

fn one_link(sizes: &str, app: &str, extra_link: &str, duration: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
sizes = "{sizes}"
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "256kbps"
delay = "50ms"
{extra_link}
[[flows]]
src = 0
dst = 1
transport = "udp"
app = {app}
"#
    )
}

/// Header sizes from the standards (RFC 791, RFC 768, RFC 1661 PPP protocol field).
const IPV4: f64 = 20.0;
const UDP: f64 = 8.0;
const PPP: f64 = 2.0;

#[test]
fn exact_delay_on_an_idle_link_under_both_conventions() {
    for (sizes, wire_bytes) in [("ns2", 128.0), ("standard", 128.0 + UDP + IPV4 + PPP)] {
        let r = sim(
            &one_link(
                sizes,
                r#"{ kind = "cbr", size = "128B", interval = "20ms" }"#,
                "",
                "10s",
            ),
            1,
        );
        let f = &r.flows[0];
        let expect = wire_bytes * 8.0 / 256_000.0 + 0.050;
        assert!(f.rx_packets > 400);
        for d in [f.delay_mean_s, f.delay_max_s, f.delay_p50_s, f.net_delay_mean_s] {
            assert!((d.unwrap() - expect).abs() < 1e-6, "{sizes}: {d:?} vs {expect}");
        }
        assert_eq!(f.jitter_ipdv_s, Some(0.0));
    }
    // ns-2's number for this link falls out of the same arithmetic.
    let r = sim(
        &one_link(
            "ns2",
            r#"{ kind = "cbr", size = "128B", interval = "20ms" }"#,
            "",
            "10s",
        ),
        1,
    );
    assert!((r.flows[0].delay_mean_s.unwrap() - 0.054).abs() < 1e-9);
}

#[test]
fn md1_mean_queueing_delay_matches_pollaczek_khinchine() {
    // 1000-byte IP packets (ns2 convention: the size is the IP packet) at 1 Mbit/s: S = 8 ms.
    let s = 8e-3;
    for rho in [0.3, 0.6, 0.8] {
        let interval = s / rho;
        let app = format!(
            r#"{{ kind = "cbr", size = "1000B", interval = "{}us", arrivals = "poisson" }}"#,
            interval * 1e6
        );
        let text = one_link("ns2", &app, "queue = 100000", "20000s")
            .replace("256kbps", "1Mbps")
            .replace("50ms", "0ms");
        let r = sim(&text, 7);
        let f = &r.flows[0];
        let wq = f.delay_mean_s.unwrap() - s;
        let theory = rho * s / (2.0 * (1.0 - rho));
        let rel = (wq - theory).abs() / theory;
        assert!(rel < 0.05, "rho {rho}: W_q {wq} vs {theory} ({:.1}%)", rel * 100.0);
        assert_eq!(f.dropped_segments, 0);
    }
}

#[test]
fn same_seed_same_results_other_seed_differs() {
    let text = one_link(
        "standard",
        r#"{ kind = "cbr", size = "200B", interval = "10ms", arrivals = "poisson" }"#,
        "loss = 0.1\nqueue = 3",
        "30s",
    );
    let a = sim(&text, 1);
    let b = sim(&text, 1);
    let c = sim(&text, 2);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.network, b.network);
    assert_eq!(a.timeseries, b.timeseries);
    assert_ne!(a.flows[0].tx_packets, c.flows[0].tx_packets);
}

#[test]
fn adding_a_flow_leaves_unrelated_streams_unchanged() {
    let base = r#"
[simulation]
duration = "20s"
[nodes]
count = 4
[[links]]
nodes = [0, 1]
rate = "1Mbps"
delay = "5ms"
loss = 0.05
[[links]]
nodes = [2, 3]
rate = "1Mbps"
delay = "5ms"
loss = 0.05
[[flows]]
src = 0
dst = 1
transport = "udp"
app = { kind = "cbr", size = "500B", interval = "10ms", arrivals = "poisson" }
"#;
    let extra = r#"
[[flows]]
src = 2
dst = 3
transport = "udp"
app = { kind = "cbr", size = "500B", interval = "7ms", arrivals = "poisson" }
"#;
    let a = sim(base, 3);
    let b = sim(&format!("{base}{extra}"), 3);
    assert_eq!(a.flows[0], b.flows[0]);
    assert_eq!(b.flows.len(), 2);
}

#[test]
fn explicit_drop_list_loses_exactly_those_packets() {
    let text = one_link(
        "standard",
        r#"{ kind = "cbr", size = "100B", interval = "100ms" }"#,
        "drop_forward = [0, 3, 4]",
        "2s",
    );
    let r = sim(&text, 1);
    let f = &r.flows[0];
    assert_eq!(f.tx_packets, 20);
    assert_eq!(f.rx_packets, 17);
    assert_eq!(r.network.drops[tpsim_engine::DropReason::LinkError as usize], 3);
}

#[test]
fn queue_overflow_is_tail_drop_and_conserves_packets() {
    // 1000 B every 1 ms into 256 kbit/s: the link carries ~ 1 in 31; the queue of 5 overflows.
    let text = one_link(
        "standard",
        r#"{ kind = "cbr", size = "1000B", interval = "1ms" }"#,
        "queue = 5",
        "2s",
    );
    let r = sim(&text, 1);
    let f = &r.flows[0];
    assert!(r.network.drops[tpsim_engine::DropReason::Queue as usize] > 1500);
    assert_eq!(f.tx_segments, f.rx_segments + f.dropped_segments + f.in_flight_segments);
    assert_eq!(
        f.tx_packets,
        f.rx_packets + f.dropped_segments + f.in_flight_segments + f.buffered_packets
    );
}

#[test]
fn ttl_expires_on_a_long_chain() {
    // 70 nodes in a line: 69 hops exceed the initial TTL of 64.
    let mut t = String::from("[simulation]\nduration = \"1s\"\n[nodes]\ncount = 70\n");
    for i in 0..69 {
        t += &format!(
            "[[links]]\nnodes = [{i}, {}]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n",
            i + 1
        );
    }
    t += "[[flows]]\nsrc = 0\ndst = 69\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"100B\", interval = \"100ms\" }\n";
    t += "[[flows]]\nsrc = 0\ndst = 63\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"100B\", interval = \"100ms\" }\n";
    let r = sim(&t, 1);
    assert_eq!(r.flows[0].rx_packets, 0);
    assert_eq!(
        r.network.drops[tpsim_engine::DropReason::Ttl as usize],
        r.flows[0].tx_packets
    );
    assert_eq!(r.flows[1].rx_packets, r.flows[1].tx_packets);
}

/// `loss_forward`/`loss_reverse` lose packets in one direction only: a two-way flow loses its
/// forward messages at about the forward rate and none of its reverse ones, and over TCP the
/// reverse direction's ACKs all arrive (what data-only loss experiments need).
#[test]
fn loss_per_direction_applies_to_its_direction_only() {
    let voip = r#"{ kind = "voip", size = "100B", interval = "20ms" }"#;
    let r = sim(
        &one_link("ns2", voip, "loss_forward = 0.2\nloss_reverse = 0.0\nloss = 0.5", "60s"),
        3,
    );
    let (fwd, rev) = (&r.flows[0], &r.flows[1]);
    assert_eq!((fwd.key.direction, rev.key.direction), ("fwd", "rev"));
    let lost = 1.0 - fwd.pdr.unwrap();
    assert!((lost - 0.2).abs() < 0.03, "forward loss {lost}");
    assert_eq!(
        rev.rx_packets,
        rev.tx_packets - rev.in_flight_segments,
        "nothing lost in reverse"
    );
    assert_eq!(rev.dropped_segments, 0);
    // TCP: data segments are lost forward; the receiver's ACKs travel the loss-free reverse way.
    let text = one_link(
        "ns2",
        r#"{ kind = "bulk", size = "1000B", bytes = "200kB" }"#,
        "loss_forward = 0.05\nloss_reverse = 0.0",
        "60s",
    )
    .replace("transport = \"udp\"", "transport = \"tcp\"");
    let t = sim(&text, 3);
    let f = &t.flows[0];
    assert_eq!(f.rx_bytes, 200_000);
    assert!(f.dropped_segments > 0 && f.retransmissions > 0);
    let acks_lost = t.network.drops[tpsim_engine::DropReason::LinkError as usize] - f.dropped_segments;
    assert_eq!(acks_lost, 0, "no ACK lost in the reverse direction");
}

/// Goodput counts the bytes delivered within its window (first send to the stop time) over
/// that window: an overloaded link's flow cannot exceed the link's payload share of its rate,
/// whatever the drain period lets arrive afterwards. 128-byte messages on a 256 kbit/s link:
/// standard sizes put 128 + 8 + 20 + 2 bytes on the wire, ns2 sizes 128 bytes (UDP); a TCP
/// segment of 1000 bytes carries 1000 of 1000 + 40 (+ 2 framing) bytes.
#[test]
fn goodput_never_exceeds_the_bottlenecks_payload_share() {
    for (sizes, wire) in [("standard", 128.0 + UDP + IPV4 + PPP), ("ns2", 128.0)] {
        let text = one_link(sizes, r#"{ kind = "cbr", size = "128B", interval = "2ms" }"#, "", "10s")
            .replace("[simulation]", "[simulation]\ndrain = \"10s\"");
        let r = sim(&text, 1);
        let f = &r.flows[0];
        let share = 256.0 * 128.0 / wire;
        let g = f.goodput_kbps.unwrap();
        assert!(
            g <= share,
            "{sizes}: goodput {g} kbit/s above the payload share {share}"
        );
        assert!(g > 0.95 * share, "{sizes}: goodput {g} kbit/s, share {share}");
        // The drain delivered more (the queue empties), but outside the window.
        assert!(f.rx_bytes as f64 * 8.0 / 1000.0 / 10.0 > g, "{sizes}: {f:?}");
    }
    for (sizes, framing) in [("standard", PPP), ("ns2", 0.0)] {
        let text = one_link(sizes, r#"{ kind = "bulk", size = "1000B" }"#, "", "20s")
            .replace("transport = \"udp\"", "transport = \"tcp\"\ntcp = { mss = \"1000B\" }")
            .replace("[simulation]", "[simulation]\ndrain = \"5s\"");
        let r = sim(&text, 1);
        let g = r.flows[0].goodput_kbps.unwrap();
        let share = 256.0 * 1000.0 / (1000.0 + 40.0 + framing);
        assert!(
            g <= share && g > 0.9 * share,
            "tcp {sizes}: goodput {g} kbit/s, share {share}"
        );
    }
}

/// An on-off source (constant 1 s on, 1 s off, 1 Mbit/s of 1,250-byte messages while on: one
/// per 10 ms of on time) sends 101 messages in its first on second (at 0 and at every 10 ms
/// of on time, the last at the end of the period), 100 in each of the nine others of a 20 s
/// run; a missing `off` is named.
#[test]
fn an_on_off_source_sends_only_while_on() {
    let app =
        r#"{ kind = "on-off", size = "1250B", rate = "1Mbps", on = "1s", off = "1s", distribution = "constant" }"#;
    let r = sim(&one_link("ns2", app, "", "20s").replace("256kbps", "2Mbps"), 1);
    assert_eq!(r.flows[0].tx_packets, 101 + 9 * 100);
    assert_eq!(r.flows[0].rx_packets, r.flows[0].tx_packets);
    let bad = one_link(
        "ns2",
        r#"{ kind = "on-off", size = "1250B", rate = "1Mbps", on = "1s" }"#,
        "",
        "20s",
    );
    let e = tpsim_scenario::load(&bad, "t.toml").unwrap_err().to_string();
    assert!(e.contains("needs `off`"), "{e}");
}

/// `app.start_jitter`: the first message comes uniformly within the jitter after `start`, a
/// different draw per replication. CBR every 100 ms from 1 s (+ up to 1 s) to the stop at 2 s
/// sends 10 messages without jitter and 1 to 10 with it, not the same number in every run.
#[test]
fn start_jitter_draws_a_start_per_replication() {
    let flow = |jitter: &str| {
        format!(
            "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"100B\", \
             interval = \"100ms\", start = \"1s\", stop = \"2s\"{jitter} }}\n"
        )
    };
    let plain = common::link("1Mbps", "1ms", "", &flow(""), "3s");
    let jittered = common::link("1Mbps", "1ms", "", &flow(", start_jitter = \"1s\""), "3s");
    let mut counts = Vec::new();
    for seed in 1..=12 {
        assert_eq!(common::sim(&plain, seed).flows[0].tx_packets, 10);
        counts.push(common::sim(&jittered, seed).flows[0].tx_packets);
    }
    assert!(counts.iter().all(|c| (1..=10).contains(c)), "{counts:?}");
    assert!(counts.iter().any(|&c| c != counts[0]), "{counts:?}");
}
