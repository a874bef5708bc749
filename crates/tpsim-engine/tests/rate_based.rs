//! TFRC and DCCP through the engine: study D's link carries their messages, each delivered
//! at most once, with their own series and columns, and a full send queue drops messages at
//! the sender, counted.

mod common;

use common::{extra, sim};

/// Study D's link with two one-way CBR flows (0 → 1 and 1 → 0) of `transport`, with the
/// flow keys `extra`, and `interval` between messages.
fn study_d(transport: &str, extra: &str, interval: &str) -> String {
    common::study_d(
        "drain = \"2s\"\n[output]\ntimeseries = true\nbin = \"1s\"\n",
        "",
        transport,
        extra,
        interval,
    )
}

/// On an uncongested link (51.2 kbit/s of messages each way over 256 kbit/s) every transport
/// delivers nearly every message, never more than once, and conserves its packets.
#[test]
fn tfrc_and_dccp_carry_study_d() {
    for transport in ["tfrc", "dccp", "dccp-ccid2", "dccp-ccid3"] {
        let r = sim(&study_d(transport, "", "20ms"), 1);
        for f in &r.flows {
            assert_eq!(f.tx_packets, 495, "{transport}");
            assert!(f.rx_packets <= f.tx_packets, "{transport}");
            assert!(f.rx_packets >= 480, "{transport}: {f:?}");
            assert_eq!(f.retransmissions, 0, "{transport} never retransmits data");
            assert_eq!(
                f.tx_segments,
                f.rx_segments + f.dropped_segments + f.in_flight_segments,
                "{transport}"
            );
            assert_eq!(extra(f, "send_queue_drops"), Some(0.0), "{transport}");
            assert!(f.delay_mean_s.unwrap() >= 0.054 - 1e-9, "{transport}");
        }
        let series: std::collections::BTreeSet<String> = r.timeseries.series.iter().map(|s| s.to_string()).collect();
        let want: &[&str] = match transport {
            "tfrc" | "dccp-ccid3" => &["x_bps", "p", "srtt_s"],
            _ => &["cwnd_packets", "srtt_s"],
        };
        for w in want {
            assert!(series.contains(*w), "{transport}: {series:?}");
        }
    }
}

/// A sender offered far more than the link carries (128-byte messages every 1 ms: 1 Mbit/s
/// over 256 kbit/s) with a 10-message send queue: the queue overflows, and every message is
/// accounted for: delivered, dropped at the send queue, or lost in the network.
#[test]
fn a_full_send_queue_drops_messages_at_the_sender() {
    for (transport, key) in [("tfrc", "tfrc"), ("dccp-ccid2", "dccp"), ("dccp-ccid3", "dccp")] {
        let r = sim(&study_d(transport, &format!("{key} = {{ send_queue = 10 }}"), "1ms"), 1);
        let f = &r.flows[0];
        let dropped = extra(f, "send_queue_drops").unwrap() as u64;
        assert!(dropped > f.tx_packets / 2, "{transport}: {f:?}");
        assert!(f.rx_packets + dropped <= f.tx_packets, "{transport}: {f:?}");
        assert!(f.rx_packets > 0, "{transport}");
    }
}

/// TFRC is one-way: a two-way application over it is refused, naming the flow's transport.
#[test]
fn two_way_tfrc_is_refused() {
    let text = study_d("tfrc", "", "20ms").replacen("kind = \"cbr\"", "kind = \"voip\"", 1);
    let e = tpsim_scenario::load(&text, "<test>").unwrap_err().to_string();
    assert!(e.contains("flows.0.transport") && e.contains("one-way"), "{e}");
}

/// Study D over the `ns2` profiles against ns-2.35 (`study_d.tcl transport=tfrc|dccp2|dccp3`,
/// its default sizes=msg: TFRC's `packetSize_` and CCID 3's `s_s_` are the message size,
/// TFRC's `SndrType_ 1`). ns-2.35 measured per flow: 495 data packets sent and received, all
/// 495 messages delivered, and mean per-packet delays of 55.011 ms (TFRC), 55.523 ms (CCID 2)
/// and 55.035 ms (CCID 3); its packets without data: 84 (TFRC feedback), 251 (CCID 2: the
/// handshake, Acks and acknowledgements of Acks) and 154 (CCID 3). tpsim must be within 10 %
/// on data packets, deliveries and delay; TFRC's feedback follows TFRCSink's rules and is
/// exact. CCID 3's 154 are 83 feedback packets from the receiver (tpsim: 83, with ns-2's
/// window-counter rule) and 69 Acks from the data sender, which tpsim's does not send
/// (docs/models.md).
#[test]
fn study_d_over_ns2_profiles_matches_ns2() {
    let within = |got: f64, want: f64, tol: f64| (got - want).abs() <= tol * want;
    for (transport, extra, delay, ctrl, ctrl_tol) in [
        (
            "tfrc",
            "tfrc = { profile = \"ns2\", packet_size = \"128B\" }",
            0.055011,
            84.0,
            0.0,
        ),
        ("dccp-ccid2", "dccp = { profile = \"ns2\" }", 0.055523, 251.0, 0.10),
        (
            "dccp-ccid3",
            "dccp = { profile = \"ns2\", segment_size = \"128B\" }",
            0.055035,
            83.0,
            0.0,
        ),
    ] {
        let r = sim(
            &study_d(transport, extra, "20ms").replace("drain = \"2s\"", "drain = \"1s\""),
            1,
        );
        for f in &r.flows {
            assert_eq!((f.tx_packets, f.rx_packets), (495, 495), "{transport}");
            assert!(within(f.tx_segments as f64, 495.0, 0.1), "{transport}: {f:?}");
            assert!(within(f.rx_segments as f64, 495.0, 0.1), "{transport}: {f:?}");
            // ns-2's delay is per data packet from its send: tpsim's net delay per message.
            assert!(within(f.net_delay_mean_s.unwrap(), delay, 0.1), "{transport}: {f:?}");
            assert!(within(f.ack_packets as f64, ctrl, ctrl_tol), "{transport}: {f:?}");
        }
    }
}

/// A bulk writer runs at TFRC's and DCCP's pace (their send queues take data while they have
/// room); over UDP, which would take it all at once, it is refused.
#[test]
fn bulk_runs_over_tfrc_and_dccp_but_not_udp() {
    for transport in ["tfrc", "dccp-ccid2", "dccp-ccid3"] {
        let text = study_d(transport, "", "20ms").replace(
            "kind = \"cbr\", size = \"128B\", interval = \"20ms\"",
            "kind = \"bulk\", size = \"1000B\"",
        );
        let r = sim(&text, 1);
        let f = &r.flows[0];
        // 12 s (10 s and the drain) of at most 256 kbit/s carry at most 384 messages of 1,000
        // bytes; the writer keeps the link busy.
        assert!(f.rx_packets > 150 && f.rx_packets <= 384, "{transport}: {f:?}");
        assert!(
            f.tx_packets > f.rx_packets,
            "{transport}: the writer stays ahead of the link"
        );
    }
    let text = study_d("udp", "", "20ms").replace(
        "kind = \"cbr\", size = \"128B\", interval = \"20ms\"",
        "kind = \"bulk\", size = \"1000B\"",
    );
    let e = tpsim_scenario::load(&text, "<test>").unwrap_err().to_string();
    assert!(e.contains("flows.0.transport") && e.contains("over udp"), "{e}");
}

/// One TFRC and one TCP NewReno bulk flow through a DropTail bottleneck (1.5 Mbit/s, 50 ms,
/// an 18-packet queue: one bandwidth-delay product), TCP starting 10 s + `offset` after TFRC,
/// 300 s, 1-s bins, under `stack`. Returns per flow (TFRC, TCP) the mean goodput over
/// 100–300 s (kbit/s) and its coefficient of variation over the 1-s bins.
fn friendliness_run(stack: &str, offset_ms: u64) -> [(f64, f64); 2] {
    let (sizes, tcp) = match stack {
        "ns2" => ("ns2", "tcp = { window = 10000 }"),
        _ => ("standard", ""),
    };
    let access = |n: u32| format!("[[links]]\nnodes = [{n}, 2]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n");
    let text = format!(
        "[simulation]\nduration = \"300s\"\ndrain = \"0s\"\nsizes = \"{sizes}\"\nstack = \"{stack}\"\n\
         [output]\ntimeseries = true\nbin = \"1s\"\n[nodes]\ncount = 4\n{}{}\
         [[links]]\nnodes = [2, 3]\nrate = \"1.5Mbps\"\ndelay = \"50ms\"\nqueue = 18\n\
         [[flows]]\nsrc = 0\ndst = 3\ntransport = \"tfrc\"\napp = {{ kind = \"bulk\", size = \"1000B\" }}\n\
         [[flows]]\nsrc = 1\ndst = 3\ntransport = \"tcp\"\n{tcp}\n\
         app = {{ kind = \"bulk\", size = \"1000B\", start = \"{}ms\" }}\n",
        access(0),
        access(1),
        10_000 + offset_ms
    );
    let r = sim(&text, 1);
    let t = &r.timeseries;
    [0u32, 1].map(|flow| {
        let bins: Vec<f64> = (0..t.series.len())
            .filter(|&i| t.series[i] == "goodput_kbps" && t.flow[i] == Some(flow) && t.time_s[i] >= 100.0)
            .map(|i| t.value[i].unwrap_or(0.0))
            .collect();
        assert_eq!(bins.len(), 200, "{stack}: flow {flow}");
        let mean = bins.iter().sum::<f64>() / 200.0;
        let var = bins.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 200.0;
        (mean, var.sqrt() / mean)
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// TCP-friendliness (RFC 5348 §1): TFRC and TCP NewReno share the bottleneck of
/// `friendliness_run` at five TCP start offsets (the network has no randomness, so the
/// offsets are its replications). Over 100–300 s the median TFRC/TCP goodput ratio lies in
/// [0.5, 2] and TFRC's rate is the smoother one (lower median coefficient of variation over
/// 1-s bins), under both stacks. Under `ns2` (Agent/TFRC, Agent/TCP/Newreno) the mean rates
/// are within 10 % of ns-2.35's on the same network (`benches/ns2/tfrc_friendliness.tcl
/// <seed> 0.<offset>` with offsets 1–5: TFRC 115.05, 116.51, 115.23, 110.14, 106.86
/// packets/s, TCP 66.13, 64.66, 65.95, 71.00, 74.25 packets/s of 1000 bytes).
#[test]
fn tfrc_shares_a_droptail_bottleneck_with_tcp_newreno() {
    for stack in ["modern", "ns2"] {
        let runs: Vec<[(f64, f64); 2]> = (1..=5).map(|o| friendliness_run(stack, o * 100)).collect();
        let ratio = median(runs.iter().map(|r| r[0].0 / r[1].0).collect());
        let cov = |k: usize| median(runs.iter().map(|r| r[k].1).collect());
        eprintln!(
            "{stack}: {runs:?} median ratio {ratio:.2}, CoV TFRC {:.3} TCP {:.3}",
            cov(0),
            cov(1)
        );
        assert!((0.5..=2.0).contains(&ratio), "{stack}: median TFRC/TCP ratio {ratio}");
        assert!(cov(0) < cov(1), "{stack}: TFRC's rate is smoother than TCP's");
        if stack == "ns2" {
            let mean = |k: usize| runs.iter().map(|r| r[k].0).sum::<f64>() / 5.0;
            // 1000-byte messages: packets/s = kbit/s / 8.
            let (tfrc_pps, tcp_pps) = (mean(0) / 8.0, mean(1) / 8.0);
            let ns2 = (112.76, 68.40);
            assert!((tfrc_pps - ns2.0).abs() <= 0.1 * ns2.0, "TFRC {tfrc_pps} packets/s");
            assert!((tcp_pps - ns2.1).abs() <= 0.1 * ns2.1, "TCP {tcp_pps} packets/s");
        }
    }
}

/// Study D as the paper's ns-2 scripts ran TFRC (`study_d.tcl transport=tfrc sizes=default`):
/// every 128-byte message padded to Agent/TFRC's `packetSize_` of 1000 B, a 1032-byte packet,
/// and the link carries 31 of them a second; both senders overshoot it in slow start.
/// ns-2.35's outcome hangs on floating-point ties: with the flows starting at 0.1 to 0.101 s
/// in 0.1 ms steps it gives 1,040–1,043 ms of mean delay and 664 packets received (both flows)
/// in 7 of 11 runs, 757 ms and 644 in the other 4 (docs/models.md). tpsim gives the same run at
/// every start, ns-2's majority outcome: received packets exactly, the delay within 1 %, and
/// per flow feedback within 10 % of ns-2's 30.
#[test]
fn tfrc_padded_to_ns2_packet_size_overshoots_the_link_as_ns2_does() {
    let run = |start_ns: u64| {
        // As study_d.tcl: 1 s of drain after the last message.
        let sc = common::study_d(
            "drain = \"1s\"\n",
            "",
            "tfrc",
            "tfrc = { profile = \"ns2\", packet_size = \"1000B\" }",
            "20ms",
        )
        .replace("start = \"0.1s\"", &format!("start = \"{start_ns}ns\""));
        sim(&sc, 1)
    };
    let r = run(100_000_000);
    let received: u64 = r.flows.iter().map(|f| f.rx_segments).sum();
    let delay = r
        .flows
        .iter()
        .map(|f| f.packet_delay_mean_s.unwrap() * f.rx_segments as f64)
        .sum::<f64>()
        / received as f64;
    assert_eq!(received, 664);
    assert!((delay - 1.0417).abs() <= 0.01 * 1.0417, "{delay}");
    for f in &r.flows {
        assert_eq!(f.packet_size_mean_b, Some(1032.0), "{f:?}");
        assert!((f.ack_packets as f64 - 30.0).abs() <= 3.0, "{f:?}");
        assert!(f.dropped_segments > 0, "{f:?}");
    }
    // A start 0.7 ms later (ns-2: 757 ms at 0.1004 s, 1,042 ms at 0.1007 s) gives the same run.
    let later = run(100_700_000);
    assert_eq!(
        format!(
            "{:?}",
            later
                .flows
                .iter()
                .map(|f| (f.tx_segments, f.rx_segments))
                .collect::<Vec<_>>()
        ),
        format!(
            "{:?}",
            r.flows
                .iter()
                .map(|f| (f.tx_segments, f.rx_segments))
                .collect::<Vec<_>>()
        )
    );
}
