//! BBR v3 state by state on a synthetic path: 1 000 000 B/s, min_rtt about 100 ms (BDP about
//! 100 000 bytes), SMSS 1000 bytes, initial window 10 segments, SACK. Each round's ACK
//! delivers 10 000 bytes of data sent at the previous round's start; an ACK "within the
//! round" acknowledges data sent before it began. RTT samples shrink by 1 µs a round (so
//! that ProbeRTT stays away) unless a test holds them.

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
        sack: true,
        ..Default::default()
    }
}

/// One ACK's inputs (see [`Conn::round`] and [`Conn::within`]).
#[derive(Clone, Copy)]
struct Ack {
    rate: f64,
    in_flight: u64,
    tx_in_flight: u64,
    /// Bytes marked lost since the sampled data was sent (`RS.lost`).
    lost: u64,
    newly_lost: u64,
    in_recovery: bool,
}

/// The default ACK with `in_flight` bytes in flight after it.
fn flight(in_flight: u64) -> Ack {
    Ack {
        in_flight,
        ..Ack::default()
    }
}

/// The default ACK of a round delivering at half the path's rate.
fn slow() -> Ack {
    Ack {
        rate: 0.5 * BW,
        ..Ack::default()
    }
}

impl Default for Ack {
    fn default() -> Self {
        Ack {
            rate: BW,
            in_flight: 50_000,
            tx_in_flight: 50_000,
            lost: 0,
            newly_lost: 0,
            in_recovery: false,
        }
    }
}

struct Conn {
    b: Bbr3,
    w: Window,
    delivered: u64,
    t_ns: u64,
    rounds: u64,
    /// RTT samples stay at 100 ms (ProbeRTT comes after 5 s).
    hold_rtt: bool,
}

impl Conn {
    fn new() -> Self {
        Conn {
            b: Bbr3::new(3),
            w: Window {
                cwnd: IW,
                ssthresh: u64::MAX,
            },
            delivered: 0,
            t_ns: 0,
            rounds: 0,
            hold_rtt: false,
        }
    }

    fn now(&self) -> SimTime {
        SimTime(self.t_ns)
    }

    fn ack_with(&mut self, prior: u64, dt_ms: u64, a: Ack) {
        self.t_ns += dt_ms * 1_000_000;
        self.delivered += 10 * SMSS;
        let rtt_ns = if self.hold_rtt {
            100_000_000
        } else {
            100_000_000 - self.rounds * 1000
        };
        let ev = AckEvent {
            acked: 10 * SMSS,
            newly_delivered: 10 * SMSS,
            delivered: self.delivered,
            rtt: Some(SimDuration(rtt_ns)),
            rate: Some(RateSample {
                delivered: 10 * SMSS,
                interval: SimDuration::from_millis(100),
                delivery_rate: a.rate,
                prior_delivered: prior,
                is_app_limited: false,
                tx_in_flight: a.tx_in_flight,
                lost: a.lost,
            }),
            prior_in_flight: a.in_flight + 10 * SMSS,
            in_flight: a.in_flight,
            newly_lost: a.newly_lost,
            in_recovery: a.in_recovery,
            loss: false,
            duplicate: false,
        };
        self.w = self.b.on_ack_event(self.now(), &ev, self.w, &cx()).unwrap();
    }

    /// An ACK 100 ms on of data sent when the previous round began: a new round.
    fn round(&mut self, a: Ack) {
        self.rounds += 1;
        let prior = self.delivered;
        self.ack_with(prior, 100, a);
    }

    /// An ACK 1 ms on of data sent before the current round began.
    fn within(&mut self, a: Ack) {
        self.ack_with(0, 1, a);
    }

    fn ece(&mut self) {
        self.w = self
            .b
            .on_congestion_event(self.now(), CongestionEvent::Ece, self.w, &cx());
    }

    /// Plain rounds until the state is `s` (at most `max` of them).
    fn until(&mut self, s: Bbr3State, max: u32) {
        for _ in 0..max {
            if self.b.state() == s {
                return;
            }
            self.round(Ack::default());
        }
        assert_eq!(self.b.state(), s, "not reached in {max} rounds");
    }

    /// Startup with a bandwidth that stops growing, Drain, ProbeBW: DOWN and, at once (the
    /// data in flight is below the BDP and no bound is set), CRUISE.
    fn reach_cruise(&mut self) {
        for _ in 0..4 {
            self.round(flight(250_000));
        }
        assert_eq!(self.b.state(), Bbr3State::Drain);
        assert_eq!(
            (self.b.pacing_gain(), self.b.cwnd_gain()),
            (DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN)
        );
        self.round(Ack::default());
        assert_eq!(self.b.state(), Bbr3State::ProbeBwCruise);
    }

    /// In UP, an ACK of probe data sent with 90 000 bytes in flight of which 3000 (3.3 %) were
    /// lost; 88 000 bytes stay in flight.
    fn probe_went_too_high(&mut self) {
        self.within(Ack {
            in_flight: 88_000,
            tx_in_flight: 90_000,
            lost: 3000,
            newly_lost: 3000,
            in_recovery: true,
            ..Ack::default()
        });
    }

    /// CRUISE, then REFILL when the wait between probes is over, then UP a round later.
    fn reach_up(&mut self) {
        self.reach_cruise();
        self.until(Bbr3State::ProbeBwRefill, 64);
        self.round(Ack::default());
        assert_eq!(self.b.state(), Bbr3State::ProbeBwUp);
    }
}

/// §5.3.1.2, §5.3.2: three rounds without 25 % growth fill the pipe; Drain paces at 0.5 until
/// the data in flight is down to the BDP, then ProbeBW (DOWN, then CRUISE: no bound set).
#[test]
fn startup_plateau_then_drain_then_probe_bw() {
    let mut c = Conn::new();
    c.round(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::Startup);
    assert_eq!(c.b.pacing_gain(), STARTUP_PACING_GAIN);
    c.round(Ack::default());
    c.round(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::Startup, "two rounds without growth");
    c.reach_cruise_from_startup_rounds_done();
}

impl Conn {
    /// The rest of [`Conn::reach_cruise`] after three plateau rounds of Startup.
    fn reach_cruise_from_startup_rounds_done(&mut self) {
        self.round(flight(250_000));
        assert_eq!(self.b.state(), Bbr3State::Drain);
        assert!(self.b.full_bw_reached());
        self.round(flight(150_000));
        assert_eq!(self.b.state(), Bbr3State::Drain, "above the BDP");
        self.round(Ack::default());
        assert_eq!(self.b.state(), Bbr3State::ProbeBwCruise);
        assert_eq!((self.b.pacing_gain(), self.b.cwnd_gain()), (1.0, DEFAULT_CWND_GAIN));
    }
}

/// §5.3.3.8: CRUISE lasts until 2–3 s after DOWN began (or 63 rounds); REFILL then lifts
/// the short-term bounds and lasts one round; UP paces at 1.25 with cwnd gain 2.25.
#[test]
fn cruise_refill_up_on_time() {
    let mut c = Conn::new();
    c.reach_cruise();
    let cruise_at = c.now();
    c.until(Bbr3State::ProbeBwRefill, 64);
    let waited = c.now().saturating_since(cruise_at);
    assert!(
        waited > SimDuration::from_secs(2) && waited <= SimDuration::from_millis(3100),
        "{waited:?}"
    );
    assert_eq!(c.b.pacing_gain(), 1.0);
    c.within(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::ProbeBwRefill, "not before the round ends");
    c.round(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::ProbeBwUp);
    assert_eq!((c.b.pacing_gain(), c.b.cwnd_gain()), (UP_PACING_GAIN, UP_CWND_GAIN));
}

/// §5.3.3.7 (1): UP ends when the delivery rate stops growing for three rounds.
#[test]
fn up_goes_down_when_bandwidth_plateaus() {
    let mut c = Conn::new();
    c.reach_up();
    c.round(Ack::default());
    c.round(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::ProbeBwUp);
    c.round(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown);
    assert_eq!(c.b.pacing_gain(), DOWN_PACING_GAIN);
    assert_eq!(c.b.inflight_longterm(), None, "no loss, no bound");
}

/// §5.5.10.2: a probe whose round lost more than LossThresh (2 %) of what was in flight sets
/// inflight_longterm to that volume (at least Beta × the target) and goes DOWN; 1 % does not.
#[test]
fn loss_rate_above_threshold_cuts_inflight_longterm() {
    let mut c = Conn::new();
    c.reach_up();
    c.within(Ack {
        tx_in_flight: 120_000,
        lost: 1200,
        newly_lost: 1200,
        in_recovery: true,
        ..Ack::default()
    });
    assert_eq!(c.b.state(), Bbr3State::ProbeBwUp, "1 % is tolerated");
    assert_eq!(c.b.inflight_longterm(), None);
    c.within(Ack {
        in_flight: 115_000,
        tx_in_flight: 120_000,
        lost: 3600,
        newly_lost: 2400,
        in_recovery: true,
        ..Ack::default()
    });
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown, "3 % is too high");
    assert_eq!(c.b.inflight_longterm(), Some(120_000));

    // A small volume in flight: the bound is Beta × min(BDP, cwnd).
    let mut d = Conn::new();
    d.reach_up();
    let target = (BW * d.b.min_rtt().unwrap().as_secs_f64()) as u64;
    let target = target.min(d.w.cwnd);
    d.within(Ack {
        tx_in_flight: 20_000,
        lost: 1000,
        newly_lost: 1000,
        in_recovery: true,
        ..Ack::default()
    });
    assert_eq!(d.b.inflight_longterm(), Some((target as f64 * BETA) as u64));
}

/// §5.3.3.1: with inflight_longterm set, DOWN waits for the headroom (15 % below it) as well
/// as the BDP before CRUISE, and cwnd is capped at inflight_longterm outside CRUISE and at
/// the headroom target in it (§5.6.4.7).
#[test]
fn down_waits_for_headroom_before_cruise() {
    let mut c = Conn::new();
    c.reach_up();
    c.probe_went_too_high();
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown);
    assert_eq!(c.b.inflight_longterm(), Some(90_000));
    assert!(c.w.cwnd <= 90_000, "capped at inflight_longterm: {}", c.w.cwnd);
    c.within(flight(80_000));
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown, "80 000 > 90 000 − 13 500");
    c.within(flight(76_000));
    assert_eq!(c.b.state(), Bbr3State::ProbeBwCruise);
    assert!(c.w.cwnd <= 76_500, "capped at the headroom target: {}", c.w.cwnd);
}

/// §5.3.3.6: after a probe that went too high, the next UP goes DOWN as soon as the data in
/// flight reaches inflight_longterm; a round of its feedback without excess loss then
/// sends the flow straight back to REFILL, skipping CRUISE.
#[test]
fn precautionary_probe_stops_early_then_refills() {
    let mut c = Conn::new();
    c.reach_up();
    c.probe_went_too_high();
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown);
    c.until(Bbr3State::ProbeBwRefill, 64);
    c.round(Ack::default());
    assert_eq!(c.b.state(), Bbr3State::ProbeBwUp);
    c.within(flight(90_000));
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown, "stopped at inflight_longterm");
    c.round(Ack::default());
    assert_eq!(
        c.b.state(),
        Bbr3State::ProbeBwRefill,
        "feedback clean: probe again at once"
    );
}

/// §5.5.10.3: outside probing, a lossy round cuts bw_shortterm and inflight_shortterm to
/// max(latest, Beta × bound) at its end, once per round; the pacing rate follows BBR.bw.
#[test]
fn loss_outside_probing_cuts_short_term_model_once_per_round() {
    let mut c = Conn::new();
    c.reach_cruise();
    let slow = slow();
    c.round(slow);
    c.within(Ack {
        newly_lost: 1000,
        in_recovery: true,
        ..slow
    });
    assert_eq!(c.b.bw_shortterm(), None, "not before the round ends");
    let cwnd = c.w.cwnd;
    c.round(slow);
    assert_eq!(c.b.state(), Bbr3State::ProbeBwCruise);
    assert_eq!(c.b.bw_shortterm(), Some(BETA * BW));
    assert_eq!(c.b.inflight_shortterm(), Some((BETA * cwnd as f64) as u64));
    assert!((c.b.pacing_rate(c.w, &cx()).unwrap() - BETA * BW * (1.0 - PACING_MARGIN)).abs() < 1e-6);
    assert!(c.w.cwnd <= (BETA * cwnd as f64) as u64);
    c.within(Ack {
        newly_lost: 1000,
        ..slow
    });
    assert_eq!(c.b.bw_shortterm(), Some(BETA * BW), "once per round");
    c.round(slow);
    assert_eq!(c.b.bw_shortterm(), Some(0.5 * BW), "max(bw_latest, Beta × 0.7 BW)");
    c.round(slow);
    assert_eq!(
        c.b.bw_shortterm(),
        Some(0.5 * BW),
        "a round without loss keeps the bound"
    );
}

/// §5.3.1.3: Startup ends at the end of a round in recovery with 6 loss events and a loss
/// rate above 2 %, inflight_longterm from max(BDP, inflight_latest); 5 events do not.
#[test]
fn startup_exits_on_high_loss() {
    for (events, exits) in [(5u32, false), (6, true)] {
        let mut c = Conn::new();
        let mut rate = 100_000.0;
        for _ in 0..2 {
            c.round(Ack { rate, ..Ack::default() });
            rate *= 2.0;
        }
        for _ in 0..events {
            c.within(Ack {
                rate,
                newly_lost: 1000,
                in_recovery: true,
                ..Ack::default()
            });
        }
        c.round(Ack {
            rate: rate * 2.0,
            tx_in_flight: 100_000,
            lost: 5000,
            in_recovery: true,
            ..Ack::default()
        });
        let want = if exits { Bbr3State::Drain } else { Bbr3State::Startup };
        assert_eq!(c.b.state(), want, "{events} loss events");
        assert_eq!(c.b.full_bw_reached(), exits);
        if exits {
            // The BDP on the min_rtt before this ACK's sample (1 µs more).
            let bdp = (c.b.max_bw() * (c.b.min_rtt().unwrap().as_secs_f64() + 1e-6)) as u64;
            assert_eq!(c.b.inflight_longterm(), Some(bdp.max(10 * SMSS)));
        }
    }
}

/// ECN (module docs): an ECN-Echo in Startup ends it as high loss does.
#[test]
fn ece_ends_startup() {
    let mut c = Conn::new();
    c.round(Ack {
        rate: 200_000.0,
        ..Ack::default()
    });
    c.ece();
    c.within(Ack {
        rate: 400_000.0,
        ..Ack::default()
    });
    assert_eq!(c.b.state(), Bbr3State::Drain);
    assert!(c.b.full_bw_reached());
    assert!(c.b.inflight_longterm().is_some());
}

/// ECN: an ECN-Echo on the ACK of data sent in UP ends the probe, inflight_longterm from the
/// data in flight when that data was sent.
#[test]
fn ece_ends_a_bandwidth_probe() {
    let mut c = Conn::new();
    c.reach_up();
    c.ece();
    c.within(Ack {
        in_flight: 110_000,
        tx_in_flight: 115_000,
        ..Ack::default()
    });
    assert_eq!(c.b.state(), Bbr3State::ProbeBwDown);
    assert_eq!(c.b.inflight_longterm(), Some(115_000));
}

/// ECN: outside probing an ECN-Echo is a lossy round: the short-term model is cut at its end.
#[test]
fn ece_in_cruise_cuts_short_term_model() {
    let mut c = Conn::new();
    c.reach_cruise();
    let slow = slow();
    c.round(slow);
    c.ece();
    c.within(slow);
    assert_eq!(c.b.state(), Bbr3State::ProbeBwCruise);
    c.round(slow);
    assert_eq!(c.b.bw_shortterm(), Some(BETA * BW));
    assert_eq!(c.b.inflight_longterm(), None, "not probing: the long-term bound stays");
}

/// §5.3.4: 5 s without a lower RTT sample start ProbeRTT: cwnd at most max(BDP/2, 4 SMSS);
/// 200 ms and a round after the data in flight got there, ProbeRTT ends in CRUISE with cwnd
/// restored.
#[test]
fn probe_rtt_every_five_seconds() {
    let mut c = Conn::new();
    c.hold_rtt = true;
    c.reach_cruise();
    let before = c.w.cwnd;
    c.until(Bbr3State::ProbeRtt, 64);
    assert!(c.now() >= SimTime(5_000_000_000), "{:?}", c.now());
    assert_eq!((c.b.pacing_gain(), c.b.cwnd_gain()), (1.0, PROBE_RTT_CWND_GAIN));
    assert!(c.w.cwnd <= 50_000, "{}", c.w.cwnd);
    c.round(flight(40_000));
    assert_eq!(c.b.state(), Bbr3State::ProbeRtt, "200 ms to go");
    c.round(flight(40_000));
    c.round(flight(40_000));
    assert_eq!(c.b.state(), Bbr3State::ProbeBwCruise);
    assert!(
        c.w.cwnd >= before.min(50_000),
        "restored: {} (before {before})",
        c.w.cwnd
    );
    assert!(c.w.cwnd > 50_000, "{}", c.w.cwnd);
}

/// §5.6.4.4: a timeout restarts cwnd from one segment; it then grows by what each ACK
/// delivers (§5.6.4.6).
#[test]
fn timeout_restarts_from_one_segment() {
    let mut c = Conn::new();
    c.reach_cruise();
    c.w = c.b.on_congestion_event(c.now(), CongestionEvent::Timeout, c.w, &cx());
    assert_eq!(c.w.cwnd, SMSS);
    c.round(Ack::default());
    assert_eq!(c.w.cwnd, SMSS + 10 * SMSS);
}
