//! A `[[flows]]` table with `copies` runs as that many flows: one flows-table row each, with
//! consecutive indices, each starting `stagger` after the one before.

mod common;

use common::{f64s, opt_u32, sim, trace};

/// Three bulk TCP copies from 0 to 1 of 20 kB each (done in well under a second), 1 s apart,
/// then a UDP flow that moves up to index 3.
#[test]
fn copies_of_a_bulk_flow_are_separate_flows_with_staggered_starts() {
    let flows = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"tcp\"\ncopies = 3\nstagger = \"1s\"\n\
                 app = { kind = \"bulk\", bytes = \"20kB\" }\n"
        .to_string()
        + &common::cbr(1, 0, "100B", "100ms", "0s");
    let text = common::link("1Mbps", "10ms", "", &flows, "5s").replace("[nodes]", "[output]\ntrace = true\n[nodes]");
    let r = sim(&text, 1);
    let keys: Vec<(u32, &str, u32, u32)> = r
        .flows
        .iter()
        .map(|f| (f.key.flow, f.key.transport, f.key.src, f.key.dst))
        .collect();
    assert_eq!(
        keys,
        [(0, "tcp", 0, 1), (1, "tcp", 0, 1), (2, "tcp", 0, 1), (3, "udp", 1, 0)]
    );
    // Each copy's first data packet leaves one handshake (about 21 ms) after its own start,
    // 0, 1 and 2 s, on a link the copy before has left idle.
    let t = trace(&r);
    let (flow, time) = (opt_u32(t, "flow"), f64s(t, "time_s"));
    let first = |k: u32| {
        (0..flow.len())
            .filter(|&i| flow[i] == Some(k))
            .filter_map(|i| time[i])
            .fold(f64::INFINITY, f64::min)
    };
    for k in 0..3 {
        let t0 = first(k);
        assert!((k as f64..k as f64 + 0.05).contains(&t0), "flow {k} starts at {t0} s");
        assert_eq!(r.flows[k as usize].rx_bytes, 20_000, "flow {k}");
    }
}
