//! ns-2.35's TFRC sender ([`SenderRule::Ns2`], tfrc.cc) packet by packet, each expected value
//! worked out by hand from tfrc.cc's rules.

use super::ns2_sender::p_to_b;
use super::tests::{cfg, segment, t};
use super::*;
use crate::tcp::Open;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::tfrc::{encode_p, TfrcRepr};
use tpsim_wire::SizeConvention::Ns2;

fn ns2_sender() -> TfrcSocket {
    TfrcSocket::new(cfg(Ns2), TfrcConfig::ns2(), Open::Active, SimTime::ZERO)
}

fn m(id: u64) -> Message {
    Message {
        id,
        len: 100,
        created: SimTime::ZERO,
    }
}

/// A feedback packet echoing the data packet sent at `echo_s`, answered at once, reporting
/// `packets_per_s` packets of 100 bytes a second and loss event rate `p`.
fn feedback(echo_s: f64, packets_per_s: f64, p: f64) -> Segment {
    let tfrc = TfrcRepr::Feedback {
        timestamp_echo: (echo_s * 1e6).round() as u32,
        t_delay: 0,
        x_recv: (packets_per_s * 100.0).round() as u32,
        p: encode_p(p),
    };
    segment(tfrc, Ns2, 0, None, SimTime::ZERO)
}

/// (seq, urgent, R µs) of a data packet.
fn data_fields(seg: &Segment) -> (u32, bool, u32) {
    match seg.header {
        L4Header::Tfrc(TfrcHeader {
            tfrc: TfrcRepr::Data { seq, urgent, rtt, .. },
            ..
        }) => (seq, urgent, rtt),
        _ => panic!("not data: {seg:?}"),
    }
}

fn x(s: &TfrcSocket) -> f64 {
    s.sender_state().unwrap().x.unwrap()
}

/// formula.h `p_to_b`: s / (R·√(2p/3) + min(1, 3·√(3p/8))·t_RTO·p·(1 + 32p²)), 25 MB/s at most,
/// and for p = 0.
#[test]
fn ns2_equation_uses_t_rto_and_caps_at_maxrate() {
    assert_eq!(p_to_b(0.0, 0.2, 0.5, 1000.0, 1.0), 25e6);
    let (p, r, t_rto) = (0.01f64, 0.2, 0.5);
    let want =
        1000.0 / (r * (2.0 * p / 3.0).sqrt() + (3.0 * (3.0 * p / 8.0).sqrt()) * t_rto * p * (1.0 + 32.0 * p * p));
    assert!((p_to_b(p, r, t_rto, 1000.0, 1.0) - want).abs() < 1e-9 * want);
    // 3·√(3p/8) is capped at 1 for large p.
    let p = 0.5f64;
    let want = 1000.0 / (r * (2.0 * p / 3.0).sqrt() + t_rto * p * (1.0 + 32.0 * p * p));
    assert!((p_to_b(p, r, t_rto, 1000.0, 1.0) - want).abs() < 1e-9 * want);
}

/// tfrc.cc `start`, `nextpkt`, `advanceby`: the first message goes at once, urgent; the send
/// timer ticks every s/300 s (`InitRate_`); a message that finds the timer running waits for
/// its tick; a tick with nothing to send leaves the sender data-limited, and the next message
/// goes at once.
#[test]
fn ns2_send_timer_runs_at_the_initial_rate_and_a_data_limited_sender_sends_at_once() {
    let mut s = ns2_sender();
    s.send(t(0.0), m(0)).unwrap();
    let p0 = s.poll_transmit(t(0.0)).unwrap();
    assert_eq!(data_fields(&p0), (0, true, 0));
    let tick = 100.0 / 300.0;
    assert_eq!(s.poll_timeout(), Some(t(tick)));
    // A message at 0.1 s waits for the tick.
    s.send(t(0.1), m(1)).unwrap();
    assert!(s.poll_transmit(t(0.1)).is_none());
    s.on_timeout(t(tick));
    assert_eq!(data_fields(&s.poll_transmit(t(tick)).unwrap()).0, 1);
    // The next tick (2·s/X: also the no-feedback timer) finds nothing: data-limited. X stays
    // (no R yet, so no initial-window floor to cut to), and the timer runs on.
    s.on_timeout(t(2.0 * tick));
    assert!(s.poll_transmit(t(2.0 * tick)).is_none());
    assert!((x(&s) - 300.0).abs() < 1e-9);
    let next = s.poll_timeout().unwrap();
    assert!(next > t(2.0 * tick), "{next:?}");
    // A message now goes at once.
    s.send(t(0.7), m(2)).unwrap();
    let p2 = s.poll_transmit(t(0.7)).unwrap();
    assert_eq!(data_fields(&p2), (2, true, 0), "urgent until the first feedback");
    assert_eq!(s.stats().tx_segments, 3);
}

/// tfrc.cc `recv` and `slowstart`: the first feedback sets R to its sample and X to the initial
/// window, 4 packets per R (s ≤ 1095 B), and sends a queued packet at once, no longer urgent,
/// carrying R; the send timer then ticks every s/X.
#[test]
fn ns2_first_feedback_sets_four_packets_per_r_and_sends_at_once() {
    let mut s = ns2_sender();
    s.send(t(0.0), m(0)).unwrap();
    s.poll_transmit(t(0.0)).unwrap();
    s.send(t(0.1), m(1)).unwrap();
    s.on_segment(t(0.2), &feedback(0.0, 1.0, 0.0));
    let SenderState { x: xv, r, p, .. } = s.sender_state().unwrap();
    assert!((r.unwrap() - 0.2).abs() < 1e-9);
    assert!((xv.unwrap() - 4.0 * 100.0 / 0.2).abs() < 1e-6, "{xv:?}");
    assert_eq!(p, Some(0.0));
    let seg = s.poll_transmit(t(0.2)).unwrap();
    assert_eq!(data_fields(&seg), (1, false, 200_000));
    // s/X = 100/2000 = 50 ms.
    assert_eq!(s.poll_timeout(), Some(t(0.25)));
}

/// tfrc.cc `update_rtt` and `recv`: the first feedback reporting a loss ends slow start with X =
/// the equation's rate, whose t_RTO is TCP's SRTT + 4·RTTVAR in 100-ms ticks: two samples of
/// 0.2 s give SRTT 2 ticks, RTTVAR 0.75 tick, t_RTO = ⌊(8·3 + 16)/8⌋ ticks = 0.5 s.
#[test]
fn ns2_first_loss_ends_slow_start_at_the_equation_rate_with_tcp_t_rto() {
    let mut s = ns2_sender();
    s.send(t(0.0), m(0)).unwrap();
    s.poll_transmit(t(0.0)).unwrap();
    s.on_segment(t(0.2), &feedback(0.0, 1.0, 0.0));
    s.send(t(0.25), m(1)).unwrap();
    s.on_timeout(t(0.25));
    assert_eq!(data_fields(&s.poll_transmit(t(0.25)).unwrap()).0, 1);
    s.on_segment(t(0.45), &feedback(0.25, 5.0, 0.01));
    let want = p_to_b(0.01, 0.2, 0.5, 100.0, 1.0);
    assert!((x(&s) - want).abs() < 1e-6 * want, "{} against {want}", x(&s));
    // A third sample of 0.4 s: R = 0.95·0.2 + 0.05·0.4 = 0.21, SRTT 2.25 ticks, RTTVAR 1.25,
    // t_RTO = ⌊(8·5 + 18)/8⌋ ticks = 0.7 s; the equation's rate is below X, so X takes it
    // (`decrease_rate`; twice the receive rate, 10 kB/s, does not cap it).
    s.on_segment(t(0.65), &feedback(0.25, 50.0, 0.01));
    let want = p_to_b(0.01, 0.21, 0.7, 100.0, 1.0);
    assert!((x(&s) - want).abs() < 1e-6 * want, "{} against {want}", x(&s));
}

/// tfrc.cc `reduce_rate_on_no_feedback`: with data queued X halves; the packets after an
/// expiry ask for feedback at once (urgent). `recv` restarts the timer at max(2R, 2s/X) with
/// the X from before the feedback: 2·100/300 s after it here.
#[test]
fn ns2_nofeedback_halves_a_backlogged_sender_and_marks_its_packets_urgent() {
    let mut s = ns2_sender();
    for i in 0..50 {
        s.send(t(0.0), m(i)).unwrap();
    }
    s.poll_transmit(t(0.0)).unwrap();
    s.on_segment(t(0.2), &feedback(0.0, 1.0, 0.0));
    while s.poll_transmit(t(0.2)).is_some() {}
    let x0 = x(&s);
    assert!((x0 - 2000.0).abs() < 1e-6);
    let expiry = t(0.2) + SimDuration::from_secs_f64(2.0 * 100.0 / 300.0);
    // Ticks every s/X = 50 ms send packets, not urgent, until the expiry.
    let mut ticks = 0;
    loop {
        let now = s.poll_timeout().unwrap();
        assert!(now <= expiry, "{now:?}");
        s.on_timeout(now);
        let mut urgent = Vec::new();
        while let Some(seg) = s.poll_transmit(now) {
            urgent.push(data_fields(&seg).1);
        }
        if now == expiry {
            assert_eq!(urgent.last(), Some(&true), "the expiry sends an urgent packet");
            break;
        }
        assert_eq!(urgent, vec![false]);
        ticks += 1;
    }
    assert_eq!(ticks, 13, "0.25 s to 0.85 s");
    assert!((x(&s) - x0 / 2.0).abs() < 1e-9, "{}", x(&s));
}

fn data(seq: u32, sent_s: f64, rtt_s: f64, urgent: bool) -> Segment {
    let tfrc = TfrcRepr::Data {
        seq,
        timestamp: (sent_s * 1e6).round() as u32,
        rtt: (rtt_s * 1e6).round() as u32,
        urgent,
    };
    segment(tfrc, Ns2, 100, Some(m(seq as u64)), SimTime::ZERO)
}

/// X_recv of a feedback packet, bytes/s.
fn x_recv_of(seg: &Segment) -> u32 {
    match seg.header {
        L4Header::Tfrc(TfrcHeader {
            tfrc: TfrcRepr::Feedback { x_recv, .. },
            ..
        }) => x_recv,
        _ => panic!("not feedback: {seg:?}"),
    }
}

/// tfrc-sink.cc `recv` and `est_thput`: an urgent packet is answered at once; the receive rate
/// is in packets (times the mean message size on the wire): 1 packet/s while R is unknown, the
/// packets since the last report over the time since when that is more than R, else the
/// packets that arrived within R of the newest over R.
#[test]
fn ns2_receiver_answers_urgent_packets_and_counts_packets_per_second() {
    let sock = SocketConfig {
        local_port: 2,
        remote_port: 1,
        ..cfg(Ns2)
    };
    let mut r = TfrcSocket::new(sock, TfrcConfig::ns2(), Open::Passive, SimTime::ZERO);
    r.on_segment(t(0.05), &data(0, 0.0, 0.0, true));
    assert_eq!(
        x_recv_of(&r.poll_transmit(t(0.05)).unwrap()),
        100,
        "1 packet/s of 100 B"
    );
    // R = 100 ms, a packet every 20 ms: the one 120 ms after the report is answered, with the
    // 6 packets since it over 0.12 s: 50 packets/s.
    for k in 1..=5u32 {
        let at = 0.05 + 0.02 * k as f64;
        r.on_segment(t(at), &data(k, at - 0.05, 0.1, false));
        assert!(r.poll_transmit(t(at)).is_none(), "packet {k}");
    }
    r.on_segment(t(0.17), &data(6, 0.12, 0.1, false));
    assert_eq!(x_recv_of(&r.poll_transmit(t(0.17)).unwrap()), 5000);
    // An urgent packet 20 ms later is answered at once: less than R since the report, so the
    // rate counts the packets within R of it (0.09 s to 0.19 s exclusive: 0.11 … 0.19, 5) / R.
    r.on_segment(t(0.19), &data(7, 0.14, 0.1, true));
    assert_eq!(x_recv_of(&r.poll_transmit(t(0.19)).unwrap()), 5000);
}
