//! 802.11 through the engine: exact single-hop timing, multi-hop static routes, carrier
//! sense, and saturation throughput against Bianchi's model.

mod common;

use common::sim;
use tpsim_engine::{DropReason, RunResult};

fn line(n: usize, spacing_m: f64, radio: &str, flows: &str, duration: &str, sizes: &str) -> String {
    let pos: Vec<String> = (0..n)
        .map(|i| format!("[\"{}m\", \"0m\"]", i as f64 * spacing_m))
        .collect();
    format!(
        "[simulation]\nduration = \"{duration}\"\ndrain = \"2s\"\nsizes = \"{sizes}\"\n[nodes]\ncount = {n}\nplacement = {{ kind = \"explicit\", positions = [{}] }}\n[radio]\n{radio}\n{flows}",
        pos.join(", ")
    )
}

fn cbr(src: u32, dst: u32, size: &str, interval: &str) -> String {
    common::cbr(src, dst, size, interval, "1s")
}

#[test]
fn single_hop_delay_is_difs_plus_airtime_plus_propagation() {
    // ns-2 sizes: the 512-byte IP packet + 34 bytes of MAC overhead = 546 bytes at 1 Mbit/s
    // behind a 192 µs long PLCP. The medium has been idle far longer than DIFS and no backoff
    // is pending (the last post-transmission backoff ended 100 ms ago), so the frame goes out
    // at once (IEEE 802.11-2020 §10.3.4.2; ns-2 would wait DIFS first).
    let r = sim(&line(2, 100.0, "", &cbr(0, 1, "512B", "100ms"), "10s", "ns2"), 1);
    let f = &r.flows[0];
    assert_eq!(f.rx_packets, f.tx_packets);
    let airtime = 192e-6 + (512.0 + 34.0) * 8.0 / 1e6;
    let prop = 100.0 / 3e8;
    let expect = airtime + prop;
    for d in [f.delay_mean_s.unwrap(), f.delay_max_s.unwrap(), f.delay_p50_s.unwrap()] {
        assert!((d - expect).abs() < 1e-9, "{d} vs {expect}");
    }
    // DATA + ACK per message, counted by type too.
    assert_eq!(r.network.mac_frames, 2 * f.tx_packets);
    assert_eq!(r.network.mac_data_frames, f.tx_packets);
    assert_eq!(r.network.mac_ack_frames, f.tx_packets);
    assert_eq!(
        r.network.mac_rts_frames + r.network.mac_cts_frames + r.network.mac_retransmissions,
        0
    );
}

#[test]
fn multi_hop_chain_uses_static_routes_and_delivers() {
    // 200 m spacing with the ns-2 250 m range: a 4-hop chain.
    let r = sim(&line(5, 200.0, "", &cbr(0, 4, "512B", "200ms"), "20s", "standard"), 1);
    let f = &r.flows[0];
    assert!(f.tx_packets > 90);
    assert_eq!(f.rx_packets, f.tx_packets, "{:?}", r.network);
    assert!(f.delay_mean_s.unwrap() > 4.0 * (192e-6 + (512.0 + 28.0 + 28.0 + 8.0) * 8.0 / 1e6));
}

#[test]
fn out_of_range_destination_is_a_no_route_drop() {
    let r = sim(&line(2, 300.0, "", &cbr(0, 1, "100B", "1s"), "5s", "standard"), 1);
    assert_eq!(r.flows[0].rx_packets, 0);
    assert_eq!(r.network.drops[DropReason::NoRoute as usize], r.flows[0].tx_packets);
}

/// Saturation throughput through the whole stack (channel, receivers, DCF): `n` stations on a
/// 5 m circle around a receiver, each always holding a 1500-byte MSDU for it (UDP payload
/// 1464 B, 8 B UDP, 20 B IPv4 and 8 B LLC/SNAP), 802.11b at 1 Mbit/s. Compared with Bianchi's
/// model solved for the same airtimes, the retry limit and EIFS after collisions
/// (`tpsim_mac::bianchi`).
fn saturation(n: u32, rts: bool, seconds: u32) -> (f64, f64) {
    saturation_at(n, rts, seconds, tpsim_phy::WifiRate::Dsss1)
}

fn saturation_at(n: u32, rts: bool, seconds: u32, rate: tpsim_phy::WifiRate) -> (f64, f64) {
    use tpsim_mac::bianchi::{solve, times, window, Access};
    let mut pos = vec!["[\"0m\", \"0m\"]".to_string()];
    let mut flows = String::new();
    for i in 0..n {
        let a = i as f64 * std::f64::consts::TAU / n as f64;
        pos.push(format!(
            "[\"{:.6}m\", \"{:.6}m\"]",
            5.0 * libm::cos(a),
            5.0 * libm::sin(a)
        ));
        flows += &format!(
            "[[flows]]\nsrc = {}\ndst = 0\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"1464B\", interval = \"{}us\", start = \"0.5s\" }}\n",
            i + 1,
            // Offered load 1.5x the data rate: every station always has a frame waiting.
            (1500.0 * 8.0 / (1.5 * rate.bps() as f64) * 1e6).ceil() as u64
        );
    }
    // Bianchi's model has no capture: every overlap is a collision for every listener. With
    // ns-2's capture ratio of 10, bystanders 1 m from one sender and 9 m from the other decode
    // the near frame, set their NAV instead of waiting EIFS, and the simulation runs faster
    // than the model (+4 % for 802.11a at n = 50); so capture is switched off here.
    let mut radio = "capture_ratio = 1e12\n".to_string();
    if rts {
        radio += "rts_threshold = \"0B\"\n";
    }
    if rate.standard() == tpsim_phy::timing::PhyStandard::Ofdm {
        radio += &format!(
            "standard = \"802.11a\"\ndata_rate = \"{}Mbps\"\n",
            rate.bps() / 1_000_000
        );
    }
    let text = format!(
        "[simulation]\nduration = \"{}s\"\n[output]\ntimeseries = false\n[nodes]\ncount = {}\nplacement = {{ kind = \"explicit\", positions = [{}] }}\n[radio]\n{radio}\n{flows}",
        seconds as f64 + 0.5,
        n + 1,
        pos.join(", ")
    );
    let r = sim(&text, 7);
    let delivered: u64 = r.flows.iter().map(|f| f.rx_packets).sum();
    let sim_s = delivered as f64 * 1500.0 * 8.0 / seconds as f64 / rate.bps() as f64;
    let mut cfg = tpsim_mac::DcfConfig::new(rate);
    cfg.rts_threshold_bytes = rts.then_some(0);
    let (w, m) = window(&cfg);
    let access = if rts { Access::RtsCts } else { Access::Basic };
    let model = solve(n, w, m, Some(cfg.short_retry_limit), times(&cfg, 1500, access, true));
    (sim_s, model.s)
}

#[test]
fn saturation_throughput_matches_bianchi_through_the_channel() {
    for rts in [false, true] {
        for n in [1, 2, 5, 10, 20, 50] {
            let (s, model) = saturation(n, rts, 40);
            let err = (s - model) / model;
            eprintln!(
                "n = {n:2} {}: simulated {s:.4}, model {model:.4} ({:+.2} %)",
                if rts { "RTS/CTS" } else { "basic  " },
                err * 100.0
            );
            assert!(err.abs() <= 0.03, "n = {n}, rts = {rts}: {s} vs {model}");
        }
    }
}

#[test]
fn saturation_throughput_matches_bianchi_for_802_11a() {
    use tpsim_phy::WifiRate;
    for (rate, seconds) in [(WifiRate::Ofdm6, 20), (WifiRate::Ofdm54, 5)] {
        for rts in [false, true] {
            for n in [50, 20, 1, 2, 5, 10] {
                let (s, model) = saturation_at(n, rts, seconds, rate);
                let err = (s - model) / model;
                eprintln!(
                    "{rate:?} n = {n:2} {}: simulated {s:.4}, model {model:.4} ({:+.2} %)",
                    if rts { "RTS/CTS" } else { "basic  " },
                    err * 100.0
                );
                assert!(err.abs() <= 0.03, "{rate:?} n = {n}, rts = {rts}: {s} vs {model}");
            }
        }
    }
}

#[test]
fn one_saturated_flow_reaches_the_analytic_one_hop_maximum() {
    // Per frame: DIFS + mean backoff (CWmin/2 slots) + DATA + SIFS + ACK (802.11b, 1 Mbit/s,
    // long preamble, 1500-byte MSDU = 1464 B UDP payload + 36 B of headers, 28 B MAC overhead).
    let cfg = tpsim_mac::DcfConfig::new(tpsim_phy::WifiRate::Dsss1);
    let us = |d: tpsim_core::SimDuration| d.0 as f64 * 1e-9;
    let per_frame = us(cfg.difs())
        + cfg.timing.cw_min as f64 / 2.0 * us(cfg.slot())
        + us(cfg.data_airtime(1500))
        + us(cfg.sifs())
        + us(cfg.ack_airtime());
    let max_kbps = 1464.0 * 8.0 / per_frame / 1000.0;
    let flows = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"1464B\", interval = \"5ms\" }\n";
    let r = sim(&line(2, 50.0, "", flows, "200s", "standard"), 3);
    let g = r.flows[0].goodput_kbps.unwrap();
    assert!(
        (g - max_kbps).abs() / max_kbps < 0.01,
        "goodput {g} vs analytic {max_kbps}"
    );
}

#[test]
fn rts_cts_beats_basic_access_with_hidden_terminals() {
    // A (0 m) -> B (200 m) <- C (400 m); decode and carrier-sense range 250 m: A and C cannot
    // hear each other.
    let flows = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"1000B\", interval = \"10ms\" }\n\
                 [[flows]]\nsrc = 2\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"1000B\", interval = \"10ms\" }\n";
    let run = |rts: &str| {
        let radio = format!("range = \"250m\"\ncs_range = \"250m\"\n{rts}");
        sim(&line(3, 200.0, &radio, flows, "60s", "standard"), 5)
    };
    let basic = run("");
    let rts = run("rts_threshold = \"0B\"");
    let delivered = |r: &RunResult| r.flows.iter().map(|f| f.rx_packets).sum::<u64>();
    let lost = |r: &RunResult| r.network.drops[DropReason::MacRetry as usize];
    eprintln!(
        "hidden terminals: basic delivers {} (retry drops {}), RTS/CTS delivers {} (retry drops {})",
        delivered(&basic),
        lost(&basic),
        delivered(&rts),
        lost(&rts)
    );
    assert!(delivered(&rts) as f64 > 1.2 * delivered(&basic) as f64);
    assert!(lost(&rts) * 4 < lost(&basic));
}

/// Peak UDP goodput over an h-hop chain (nodes 200 m apart, ns-2's radio and RTS/CTS for every
/// unicast frame as ns-2's default), over a sweep of offered loads.
fn chain_peak(hops: usize) -> f64 {
    let mut best: f64 = 0.0;
    for kbps in [
        25, 50, 75, 100, 125, 150, 200, 250, 300, 400, 500, 600, 700, 800, 900, 1000, 1200,
    ] {
        let flows = format!(
            "[[flows]]\nsrc = 0\ndst = {hops}\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"1000B\", rate = \"{kbps}kbps\", arrivals = \"poisson\", start = \"1s\" }}\n"
        );
        let r = sim(
            &line(hops + 1, 200.0, "rts_threshold = \"0B\"", &flows, "30s", "ns2"),
            9,
        );
        best = best.max(r.flows[0].goodput_kbps.unwrap_or(0.0));
    }
    best
}

#[test]
fn chain_capacity_falls_with_hop_count_as_li_et_al_report() {
    let peaks: Vec<f64> = (1..=8).map(chain_peak).collect();
    for (h, p) in peaks.iter().enumerate() {
        eprintln!(
            "chain {} hop(s): peak goodput {:.1} kbit/s ({:.3} of one hop)",
            h + 1,
            p,
            p / peaks[0]
        );
    }
    for w in peaks.windows(2).take(3) {
        assert!(
            w[1] < w[0],
            "peak does not fall from one hop count to the next: {peaks:?}"
        );
    }
    // Li, Blake, De Couto, Lee, Morris (MobiCom 2001): a long 802.11 chain reaches between 1/7
    // (what ns-2's 802.11 achieves) and 1/4 (the ideal schedule) of one hop; the issue allows
    // [1/10, 1/3].
    for h in [7, 8] {
        let ratio = peaks[h - 1] / peaks[0];
        assert!((0.1..=1.0 / 3.0).contains(&ratio), "{h} hops: {ratio}");
    }
}

/// SINR reception (`radio.reception = "sinr"`): a hidden sender 5× farther than the wanted one
/// (28 dB weaker under Two-Ray Ground) ruins receptions in ns-2's threshold mode whenever its
/// frame arrives first (the radio locks on the undecodable frame), but not with SINR, where
/// the wanted frame locks on and survives the interference.
#[test]
fn sinr_reception_survives_weak_interference_that_threshold_mode_does_not() {
    let pos = [(0.0, 0.0), (100.0, 0.0), (600.0, 0.0), (700.0, 0.0)];
    // Both senders saturated: losses show as retransmissions and lower goodput.
    let flows = format!("{}{}", cbr(0, 1, "1000B", "1ms"), cbr(2, 3, "1000B", "1ms"));
    let run = |reception: &str| {
        let text = format!(
            "[simulation]\nduration = \"20s\"\ndrain = \"2s\"\n[nodes]\ncount = 4\nplacement = {{ kind = \"explicit\", positions = [{}] }}\n[radio]\nreception = \"{reception}\"\n{flows}",
            pos.iter().map(|(x, y)| format!("[\"{x}m\", \"{y}m\"]")).collect::<Vec<_>>().join(", ")
        );
        let r = sim(&text, 1);
        (r.flows[0].goodput_kbps.unwrap(), r.network.mac_frames)
    };
    let (threshold, sinr) = (run("threshold"), run("sinr"));
    println!("goodput 0->1, MAC frames: threshold {threshold:?}, sinr {sinr:?}");
    assert!(sinr.0 >= 1.1 * threshold.0, "sinr {sinr:?} vs threshold {threshold:?}");
}

/// The `ber` error model of SINR reception (DSSS bit error rates with the spreading gain, as
/// ns-3's) against the step threshold, isolating the model difference the ns-3 comparison
/// found (docs/benchmarks.md, s6): hidden terminals A (0 m) -> B (200 m) <- C (400 m) at
/// 1 Mbit/s, equal powers at B. Under the threshold model (7.6 dB) every overlap loses the
/// frame B locked on; under `ber` that frame survives an equal-power overlap (SINR 0 dB), so
/// B delivers far more and fewer frames die at the retry limit.
#[test]
fn ber_error_model_survives_equal_power_overlaps_that_the_step_threshold_loses() {
    let flows = format!("{}{}", cbr(0, 1, "1000B", "20ms"), cbr(2, 1, "1000B", "20ms"));
    let run = |model: &str| {
        let radio = format!("range = \"250m\"\ncs_range = \"250m\"\nreception = \"sinr\"\nerror_model = \"{model}\"");
        sim(&line(3, 200.0, &radio, &flows, "30s", "standard"), 3)
    };
    let (threshold, ber) = (run("threshold"), run("ber"));
    let delivered = |r: &RunResult| r.flows.iter().map(|f| f.rx_packets).sum::<u64>();
    let lost = |r: &RunResult| r.network.drops[DropReason::MacRetry as usize];
    eprintln!(
        "hidden terminals at 1 Mbit/s: threshold delivers {} (retry drops {}), ber delivers {} (retry drops {})",
        delivered(&threshold),
        lost(&threshold),
        delivered(&ber),
        lost(&ber)
    );
    assert!(delivered(&ber) as f64 > 1.2 * delivered(&threshold) as f64);
    assert!(lost(&ber) * 2 < lost(&threshold));
}

/// `radio.queue_max_delay` (ns-3's WifiMacQueue MaxDelay): an overloaded one-hop link (4 Mbit/s
/// offered to 1 Mbit/s) keeps its 50-packet queue full, about 0.45 s of waiting. With a 100 ms
/// limit every packet that waited longer is dropped at the head: no delivered packet is older
/// than the limit plus one frame's service, the drops are counted under their own reason, and
/// every sent packet is accounted for.
#[test]
fn queue_max_delay_drops_packets_that_waited_too_long() {
    let flows = cbr(0, 1, "1000B", "2ms");
    let run = |extra: &str| {
        sim(
            &line(2, 100.0, &format!("queue = 50\n{extra}"), &flows, "10s", "standard"),
            1,
        )
    };
    let free = run("");
    let capped = run("queue_max_delay = \"100ms\"");
    let timeout = |r: &RunResult| r.network.drops[DropReason::QueueTimeout as usize];
    let (f0, f1) = (&free.flows[0], &capped.flows[0]);
    eprintln!(
        "no limit: max delay {:?} s, queue drops {}; 100 ms: max delay {:?} s, timeouts {}, queue drops {}",
        f0.delay_max_s,
        free.network.drops[DropReason::Queue as usize],
        f1.delay_max_s,
        timeout(&capped),
        capped.network.drops[DropReason::Queue as usize]
    );
    assert_eq!(timeout(&free), 0);
    assert!(f0.delay_max_s.unwrap() > 0.3);
    assert!(timeout(&capped) > 100);
    // A 1000-byte frame takes about 9 ms at 1 Mbit/s with DIFS, backoff and ACK.
    assert!(f1.delay_max_s.unwrap() < 0.1 + 0.03, "{:?}", f1.delay_max_s);
    let drops: u64 = capped.network.drops.iter().sum();
    assert_eq!(
        f1.tx_packets,
        f1.rx_packets + drops,
        "every packet delivered or dropped once"
    );
}

/// ARF over SINR reception: with a 23 dB noise figure the link 240 m long has about 14 dB of
/// SNR, enough for 5.5 Mbit/s (11.6 dB) but not 11 Mbit/s (14.6 dB). ARF climbs from 1 Mbit/s,
/// fails its 11 Mbit/s probes and settles below: more goodput than constant 2 Mbit/s, while
/// constant 11 Mbit/s delivers nothing.
#[test]
fn arf_finds_the_fastest_rate_the_link_supports() {
    let run = |rate: &str, control: &str| {
        let radio = format!(
            "reception = \"sinr\"\nnoise_figure_db = 23.0\ndata_rate = \"{rate}\"\nrate_control = \"{control}\""
        );
        let r = sim(
            &line(2, 240.0, &radio, &cbr(0, 1, "1000B", "1ms"), "10s", "standard"),
            1,
        );
        r.flows[0].goodput_kbps.unwrap_or(0.0)
    };
    let (two, eleven) = (run("2Mbps", "constant"), run("11Mbps", "constant"));
    let (arf, aarf) = (run("1Mbps", "arf"), run("1Mbps", "aarf"));
    assert!(eleven < 1.0, "11 Mbit/s should not get through: {eleven} kbit/s");
    assert!(arf > 1.3 * two, "ARF {arf} kbit/s vs constant 2 Mbit/s {two}");
    assert!(aarf > 1.3 * two, "AARF {aarf} kbit/s vs constant 2 Mbit/s {two}");
    println!("goodput kbit/s: 2M {two:.0}, 11M {eleven:.0}, ARF {arf:.0}, AARF {aarf:.0}");
}

/// Beacons: every node of a 3 × 3 grid (200 m apart, 250 m range: 2–4 neighbours) broadcasts
/// once per second; each broadcast reaches the nodes in decode range, and every one of those
/// it misses is a `broadcast_missed`.
#[test]
fn beacons_reach_every_neighbour_in_range() {
    let text = "[simulation]\nduration = \"20s\"\ndrain = \"1s\"\n[nodes]\ncount = 9\nplacement = { kind = \"grid\", spacing = \"200m\" }\n[radio]\n[beacons]\ninterval = \"1s\"\nsize = \"100B\"\n";
    let r = sim(text, 1);
    let n = &r.network;
    assert_eq!(n.broadcasts_sent, 9 * 20);
    // Neighbours within 250 m on the 3 × 3 grid: 4 corners × 2 + 4 edges × 3 + centre 4 = 24.
    let expected = 20 * 24;
    assert_eq!(n.broadcast_receptions + n.broadcast_missed, expected);
    assert!(n.broadcast_receptions as f64 >= 0.95 * expected as f64, "{n:?}");
    assert_eq!(n.mac_frames, 9 * 20, "broadcasts are neither acknowledged nor retried");
}
