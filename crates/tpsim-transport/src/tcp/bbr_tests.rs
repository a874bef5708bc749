//! BBR v1, state by state and phase by phase, on a synthetic path: BtlBw 1 000 000 B/s,
//! RTprop 100 ms (BDP 100 000 bytes), SMSS 1000 bytes, initial window 10 segments.

use super::*;
use crate::tcp::rate::RateSample;

const SMSS: u64 = 1000;
const IW: u64 = 10 * SMSS;
const BW: f64 = 1_000_000.0;

fn cx() -> CcContext {
    CcContext {
        smss: SMSS,
        initial_window: IW,
        srtt: Some(SimDuration::from_millis(100)),
        ..Default::default()
    }
}
fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}

/// A synthetic connection: the controller, its window, and the delivered count.
struct Conn {
    bbr: Bbr,
    w: Window,
    delivered: u64,
}

impl Conn {
    fn new() -> Self {
        Conn {
            bbr: Bbr::new(7),
            w: Window {
                cwnd: IW,
                ssthresh: u64::MAX,
            },
            delivered: 0,
        }
    }

    /// One ACK at `now` delivering `bytes` at `rate`, of data sent when `prior` bytes had
    /// been delivered, with an RTT sample of `rtt_ms`, `in_flight` after it.
    #[allow(clippy::too_many_arguments)]
    fn ack(
        &mut self,
        now: SimTime,
        bytes: u64,
        prior: u64,
        rate: f64,
        rtt_ms: u64,
        in_flight: u64,
        prior_in_flight: u64,
    ) {
        self.delivered += bytes;
        let ev = AckEvent {
            acked: bytes,
            newly_delivered: bytes,
            delivered: self.delivered,
            rtt: Some(SimDuration::from_millis(rtt_ms)),
            rate: Some(RateSample {
                delivered: bytes,
                interval: SimDuration::from_millis(100),
                delivery_rate: rate,
                prior_delivered: prior,
                is_app_limited: false,
                tx_in_flight: 0,
                lost: 0,
            }),
            prior_in_flight,
            in_flight,
            ..Default::default()
        };
        self.w = self.bbr.on_ack_event(now, &ev, self.w, &cx()).unwrap();
    }

    /// One whole round at `now`: an ACK of data sent at the start of the previous round.
    fn round(&mut self, now: SimTime, rate: f64, in_flight: u64) {
        let prior = self.delivered;
        self.ack(now, 10 * SMSS, prior, rate, 100, in_flight, in_flight);
    }

    /// Startup with a bandwidth that stops growing: filled pipe, Drain, then ProbeBW once the
    /// queue is drained. Returns the time reached.
    fn reach_probe_bw(&mut self) -> u64 {
        let mut ms = 100;
        for _ in 0..4 {
            self.round(t(ms), BW, 250_000);
            ms += 100;
        }
        assert_eq!(self.bbr.state(), BbrState::Drain);
        self.round(t(ms), BW, 50_000);
        assert_eq!(self.bbr.state(), BbrState::ProbeBw);
        ms
    }
}

/// §4.2.1 BBRInitPacingRate: before any sample, the initial window per SRTT at high gain.
#[test]
fn initial_pacing_rate_is_high_gain_times_iw_per_srtt() {
    let b = Bbr::new(1);
    let w = Window {
        cwnd: IW,
        ssthresh: u64::MAX,
    };
    let r = b.pacing_rate(w, &cx()).unwrap();
    assert!((r - HIGH_GAIN * 10_000.0 / 0.1).abs() < 1e-6, "{r}");
}

/// §4.1.1.3: a round starts only when an ACK's data was sent after the previous round's
/// start (prior_delivered ≥ the delivered count then).
#[test]
fn rounds_are_counted_by_prior_delivered() {
    let mut c = Conn::new();
    c.ack(t(10), 1000, 0, BW, 100, 9000, 9000);
    assert_eq!(c.bbr.round_count(), 1, "the first sample starts round 1");
    c.ack(t(20), 1000, 0, BW, 100, 9000, 9000);
    c.ack(t(30), 1000, 0, BW, 100, 9000, 9000);
    assert_eq!(c.bbr.round_count(), 1, "data sent before round 1 began");
    c.ack(t(140), 1000, 1000, BW, 100, 9000, 9000);
    assert_eq!(
        c.bbr.round_count(),
        2,
        "sent once round 1 had begun (1000 bytes delivered)"
    );
    c.ack(t(150), 1000, 1000, BW, 100, 9000, 9000);
    assert_eq!(c.bbr.round_count(), 2);
}

/// §4.3.2: Startup paces (less the 1 % margin) and sizes cwnd at 2/ln 2 and grows cwnd by
/// what is delivered; BtlBw is the windowed maximum of the samples, RTprop the minimum RTT.
#[test]
fn startup_grows_by_delivered_at_high_gain() {
    let mut c = Conn::new();
    c.ack(t(100), 5000, 0, BW / 2.0, 120, 5000, 10_000);
    assert_eq!(c.bbr.state(), BbrState::Startup);
    assert_eq!((c.bbr.pacing_gain(), c.bbr.cwnd_gain()), (HIGH_GAIN, HIGH_GAIN));
    assert_eq!(c.w.cwnd, IW + 5000, "cwnd += delivered below the target");
    c.ack(t(110), 1000, 0, BW, 100, 5000, 5000);
    assert_eq!(c.bbr.btlbw(), BW);
    c.ack(t(120), 1000, 0, BW / 4.0, 150, 5000, 5000);
    assert_eq!(c.bbr.btlbw(), BW, "a lower sample does not lower the maximum");
    assert_eq!(c.bbr.rtprop(), Some(SimDuration::from_millis(100)));
    let rate = c.bbr.pacing_rate(c.w, &cx()).unwrap();
    assert!((rate - HIGH_GAIN * BW * (1.0 - PACING_MARGIN)).abs() < 1e-6, "{rate}");
}

/// §4.3.2.2 and §4.3.3: three rounds without 25 % growth fill the pipe: Drain at
/// 1/high_gain pacing and high_gain cwnd; Drain ends in ProbeBW once in flight is at most
/// Inflight(1.0) (the BDP plus 3 send quanta).
#[test]
fn full_pipe_leads_to_drain_then_probe_bw() {
    let mut c = Conn::new();
    c.round(t(100), BW, 250_000);
    c.round(t(200), BW * 1.1, 250_000);
    c.round(t(300), BW * 1.2, 250_000);
    assert_eq!(c.bbr.state(), BbrState::Startup, "two rounds without growth");
    assert!(!c.bbr.filled_pipe());
    c.round(t(400), BW * 1.2, 250_000);
    assert!(c.bbr.filled_pipe(), "the third");
    assert_eq!(c.bbr.state(), BbrState::Drain);
    assert_eq!(c.bbr.pacing_gain(), 1.0 / HIGH_GAIN);
    assert_eq!(c.bbr.cwnd_gain(), HIGH_GAIN);
    // Inflight(1.0) = 1.2 MB/s · 100 ms + 3 quanta of 2 segments (pacing < 24 Mbit/s).
    c.round(t(500), BW * 1.2, 126_001);
    assert_eq!(c.bbr.state(), BbrState::Drain, "above Inflight(1.0) = 126 000");
    c.round(t(600), BW * 1.2, 126_000);
    assert_eq!(c.bbr.state(), BbrState::ProbeBw);
    assert_eq!(c.bbr.cwnd_gain(), CWND_GAIN);
}

/// §4.3.4.4: ProbeBW never starts in the 3/4 phase; ACKs a little over RTprop apart, with
/// enough in flight for the 5/4 phase, walk the whole cycle in order.
#[test]
fn probe_bw_walks_the_gain_cycle() {
    for seed in 0..20 {
        let mut c = Conn::new();
        c.bbr = Bbr::new(seed);
        let mut ms = c.reach_probe_bw();
        assert_ne!(c.bbr.pacing_gain(), 0.75, "seed {seed}: first phase");
        let start = c.bbr.cycle_index();
        let mut gains = vec![];
        for _ in 0..8 {
            ms += 101;
            c.ack(t(ms), SMSS, c.delivered, BW, 100, 100_000, 200_000);
            gains.push(c.bbr.pacing_gain());
        }
        let want: Vec<f64> = (1..=8).map(|k| PACING_GAIN_CYCLE[(start + k) % 8]).collect();
        assert_eq!(gains, want, "seed {seed}");
    }
}

/// §4.3.4.3: the 5/4 phase lasts at least one RTprop and until in flight reaches
/// Inflight(1.25) or a loss; the 3/4 phase ends early once in flight is down to
/// Inflight(1.0); a 1.0 phase lasts exactly one RTprop.
#[test]
fn gain_phases_end_by_their_own_rules() {
    let mut c = Conn::new();
    let mut ms = c.reach_probe_bw();
    while c.bbr.pacing_gain() != 1.25 {
        ms += 101;
        c.ack(t(ms), SMSS, c.delivered, BW, 100, 100_000, 200_000);
    }
    // Inflight(1.25) = 125 000 + 6000.
    ms += 150;
    c.ack(t(ms), SMSS, c.delivered, BW, 100, 100_000, 130_000);
    assert_eq!(c.bbr.pacing_gain(), 1.25, "RTprop passed but in flight below 131 000");
    ms += 1;
    c.ack(t(ms), SMSS, c.delivered, BW, 100, 100_000, 131_000);
    assert_eq!(c.bbr.pacing_gain(), 0.75);
    ms += 10;
    c.ack(t(ms), SMSS, c.delivered, BW, 100, 110_000, 110_000);
    assert_eq!(c.bbr.pacing_gain(), 0.75, "in flight above Inflight(1.0) = 106 000");
    ms += 10;
    c.ack(t(ms), SMSS, c.delivered, BW, 100, 106_000, 106_000);
    assert_eq!(c.bbr.pacing_gain(), 1.0, "drained before one RTprop");
    let phase_start = ms;
    ms += 50;
    c.ack(t(ms), SMSS, c.delivered, BW, 100, 50_000, 50_000);
    assert_eq!(c.bbr.pacing_gain(), 1.0);
    assert_eq!(c.bbr.cycle_index(), 2);
    c.ack(t(phase_start + 101), SMSS, c.delivered, BW, 100, 50_000, 50_000);
    assert_eq!(c.bbr.cycle_index(), 3, "one RTprop later");
}

/// §4.3.5: without an RTT sample at or below RTprop for 10 s, ProbeRTT: cwnd at 4
/// segments; once in flight is down to 4 segments, 200 ms and a round trip later it ends,
/// RTprop's stamp renewed, in ProbeBW (the pipe was full) with cwnd restored.
#[test]
fn probe_rtt_after_ten_seconds_without_a_new_minimum() {
    let mut c = Conn::new();
    let mut ms = c.reach_probe_bw();
    // RTprop (100 ms) was last measured at 500 ms: it expires after 10.5 s.
    while ms < 10_400 {
        ms += 100;
        c.ack(t(ms), SMSS, c.delivered, BW, 110, 100_000, 100_000);
    }
    assert_ne!(c.bbr.state(), BbrState::ProbeRtt);
    ms += 200;
    let cwnd_before = c.w.cwnd;
    c.ack(t(ms), SMSS, c.delivered, BW, 110, 100_000, 100_000);
    assert_eq!(c.bbr.state(), BbrState::ProbeRtt);
    assert_eq!(
        c.bbr.rtprop(),
        Some(SimDuration::from_millis(110)),
        "the expired estimate is replaced"
    );
    assert_eq!(c.w.cwnd, MIN_PIPE_CWND_SEGMENTS * SMSS);
    assert_eq!(c.bbr.pacing_gain(), 1.0);
    ms += 50;
    c.ack(t(ms), SMSS, c.delivered, BW, 105, 4000, 5000);
    let done_at = ms + 200;
    ms += 150;
    c.round(t(ms), BW, 4000);
    assert_eq!(c.bbr.state(), BbrState::ProbeRtt, "200 ms not over");
    c.round(t(done_at + 1), BW, 4000);
    assert_eq!(c.bbr.state(), BbrState::ProbeBw);
    let target = c.bbr.inflight(CWND_GAIN, &cx(), IW);
    assert_eq!(
        c.w.cwnd,
        (cwnd_before + 10 * SMSS).min(target),
        "restored, plus what the round delivered"
    );
}

/// §4.2.3.4: entering recovery, cwnd = in flight + delivered (packet conservation) for a
/// round; leaving it, the saved cwnd comes back. A timeout restarts from one segment.
#[test]
fn recovery_conserves_packets_and_restores_cwnd() {
    let mut c = Conn::new();
    let ms = c.reach_probe_bw();
    let saved = c.w.cwnd;
    c.delivered += SMSS;
    let mut ev = AckEvent {
        acked: 0,
        newly_delivered: SMSS,
        delivered: c.delivered,
        in_flight: 10_000,
        prior_in_flight: 11_000,
        in_recovery: true,
        loss: true,
        ..Default::default()
    };
    c.w = c.bbr.on_congestion_event(t(ms), CongestionEvent::DupAcks, c.w, &cx());
    assert_eq!(c.w.cwnd, saved, "no reduction at the loss itself");
    c.w = c.bbr.on_ack_event(t(ms), &ev, c.w, &cx()).unwrap();
    assert_eq!(c.w.cwnd, 11_000, "in flight + delivered");
    ev.loss = false;
    ev.in_flight = 9000;
    c.w = c.bbr.on_ack_event(t(ms + 1), &ev, c.w, &cx()).unwrap();
    assert_eq!(c.w.cwnd, 11_000, "conservation: max(cwnd, in flight + delivered)");
    // Bytes newly deemed lost leave the window first (§4.2.3.4), then conservation.
    ev.newly_lost = 4000;
    ev.in_flight = 5000;
    c.w = c.bbr.on_ack_event(t(ms + 1), &ev, c.w, &cx()).unwrap();
    assert_eq!(c.w.cwnd, 7000, "max(11 000 − 4000, 5000 + 1000)");
    ev.newly_lost = 0;
    ev.in_flight = 9000;
    ev.in_recovery = false;
    c.w = c.bbr.on_ack_event(t(ms + 2), &ev, c.w, &cx()).unwrap();
    assert_eq!(
        c.w.cwnd,
        saved + SMSS,
        "restored, then grown by what this ACK delivered"
    );
    let out = c
        .bbr
        .on_congestion_event(t(ms + 3), CongestionEvent::Timeout, c.w, &cx());
    assert_eq!(out.cwnd, SMSS);
}

proptest::proptest! {
    /// The cached windowed maximum equals the maximum over the last 10 rounds' samples,
    /// whatever the sequence of (round step, rate) updates.
    #[test]
    fn round_max_is_the_maximum_over_ten_rounds(steps in proptest::collection::vec((0u64..4, 0.0f64..1e6), 1..200)) {
        let mut f = RoundMax::default();
        let mut round = 0;
        let mut seen: Vec<(u64, f64)> = vec![];
        for (step, v) in steps {
            round += step;
            f.update(round, v);
            seen.push((round, v));
            let want = seen
                .iter()
                .filter(|&&(r, _)| r + BTLBW_FILTER_ROUNDS > round)
                .fold(0.0, |m: f64, &(_, x)| m.max(x));
            proptest::prop_assert_eq!(f.max(round), want);
        }
    }
}

/// §4.2.2: the send quantum is 1 segment below 1.2 Mbit/s, 2 below 24 Mbit/s, else 1 ms of
/// data, at most 64 KiB.
#[test]
fn send_quantum_follows_the_pacing_rate() {
    let q = |mbps: f64| send_quantum(mbps * 1e6 / 8.0, 1448);
    assert_eq!((q(1.0), q(10.0), q(100.0), q(1000.0)), (1448, 2896, 12_500, 65_536));
}
