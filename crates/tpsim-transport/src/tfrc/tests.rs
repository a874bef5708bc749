//! Packet-by-packet tests of TFRC's rules, each citing the RFC 5348 section it checks.
//! Expected values come from the RFC's formulas, evaluated here.

use super::equation::{p_for_x, x_bytes_per_s};
use super::loss::{Arrival, LossHistory, WEIGHTS};
use super::rate::{FeedbackInfo, InitialWindow, RateConfig, RateController};
use super::*;
use crate::tcp::Open;
use tpsim_core::SimDuration;
use tpsim_wire::tfrc::{decode_p, encode_p, TfrcRepr};

pub(super) fn t(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

const NEW: Arrival = Arrival::New {
    new_loss_event: false,
    first_loss_event: false,
};

// ---- §3.1: the throughput equation ----

/// RFC 5348 §3.1 against a table of f(p, R) computed independently of this code (s = 1000 B, b = 1,
/// t_RTO = 4R; kbit/s to 0.1) and against the form f(p) = √(2p/3) + 12√(3p/8)(p + 32p³).
#[test]
fn equation_matches_the_reference_table_and_the_factored_form_3_1() {
    let table = [
        (0.05, 0.001, 6141.5),
        (0.05, 0.01, 1797.3),
        (0.05, 0.05, 589.7),
        (0.1, 0.01, 898.7),
        (0.2, 0.05, 147.4),
    ];
    for (r, p, kbps) in table {
        let x = x_bytes_per_s(1000.0, r, p, 4.0 * r, 1.0);
        assert!(
            (x * 8.0 / 1000.0 - kbps).abs() < 0.051,
            "R {r} p {p}: {}",
            x * 8.0 / 1000.0
        );
        let f = (2.0 * p / 3.0).sqrt() + 12.0 * (3.0 * p / 8.0).sqrt() * (p + 32.0 * p * p * p);
        assert!((x - 1000.0 / (r * f)).abs() < 1e-9 * x);
    }
    assert_eq!(x_bytes_per_s(1000.0, 0.1, 0.0, 0.4, 1.0), f64::INFINITY);
}

/// RFC 5348 §6.3.1 needs the equation's inverse: p_for_x gives back p.
#[test]
fn inverse_equation_recovers_p_6_3_1() {
    for p in [1e-5, 0.001, 0.01, 0.1, 0.5] {
        let x = x_bytes_per_s(1460.0, 0.08, p, 0.32, 1.0);
        let back = p_for_x(1460.0, 0.08, x, 1.0);
        assert!((back - p).abs() < 1e-9 * p, "{p} -> {back}");
    }
    assert_eq!(p_for_x(1000.0, 0.1, 1.0, 1.0), 1.0);
}

// ---- §5: the loss history ----

/// Feeds packets `seqs` sent 10 ms apart (timestamp = 10 ms · seq) with R = 100 ms.
fn feed(h: &mut LossHistory, seqs: impl IntoIterator<Item = u32>) -> Vec<Arrival> {
    seqs.into_iter().map(|s| h.on_packet(s, s * 10_000, 100_000)).collect()
}

/// RFC 5348 §5.1: a packet is lost once three packets with higher sequence numbers arrived.
#[test]
fn loss_declared_after_three_later_packets_5_1() {
    let mut h = LossHistory::new(3, false);
    let a = feed(&mut h, [0, 1, 2, 4, 5]);
    assert!(a.iter().all(|&x| x == NEW));
    assert_eq!(h.lost_packets(), 0);
    assert_eq!(
        h.on_packet(6, 60_000, 100_000),
        Arrival::New {
            new_loss_event: true,
            first_loss_event: true
        }
    );
    assert_eq!(h.lost_packets(), 1);
    assert_eq!(h.loss_events(), 1);
}

/// ns-2.35's TFRCSink `numPkts_ 1`: one later packet is enough.
#[test]
fn ns2_declares_loss_after_one_later_packet() {
    let mut h = LossHistory::new(1, false);
    feed(&mut h, [0, 1]);
    assert_eq!(
        h.on_packet(3, 30_000, 100_000),
        Arrival::New {
            new_loss_event: true,
            first_loss_event: true
        }
    );
}

/// RFC 5348 §5.1: a packet late by fewer than NDUPACK packets is not lost.
#[test]
fn reordered_packet_within_ndupack_is_not_lost_5_1() {
    let mut h = LossHistory::new(3, false);
    feed(&mut h, [0, 1, 3, 4, 2, 5, 6, 7]);
    assert_eq!(h.lost_packets(), 0);
    assert_eq!(h.loss_event_rate(), 0.0);
}

/// Duplicates are reported (the receiver drops them); so are packets too old to tell.
#[test]
fn duplicates_and_stale_packets_are_not_new() {
    let mut h = LossHistory::new(3, false);
    feed(&mut h, [0, 1, 2]);
    assert_eq!(h.on_packet(1, 10_000, 100_000), Arrival::Duplicate);
    feed(&mut h, 3..2000);
    assert_eq!(h.on_packet(5, 50_000, 100_000), Arrival::Stale);
    // A late packet already declared lost is still new (delivered once).
    let mut h = LossHistory::new(1, false);
    feed(&mut h, [0, 2, 3]);
    assert_eq!(h.lost_packets(), 1);
    assert_eq!(h.on_packet(1, 10_000, 100_000), NEW);
    assert_eq!(h.on_packet(1, 10_000, 100_000), Arrival::Duplicate);
}

/// RFC 5348 §5.2: a loss whose interpolated time is within R of the start of the current loss
/// event belongs to it; one later than that starts a new event. §5.3: the interval is counted
/// from the first lost packet of one event to the first of the next.
#[test]
fn losses_within_one_rtt_form_one_event_5_2_and_intervals_5_3() {
    let mut h = LossHistory::new(3, false);
    // Packets every 10 ms, R = 100 ms. Lose 20 (t = 200 ms) and 28 (280 ms, within R), then
    // 40 (400 ms > 200 + 100 ms: new event).
    feed(&mut h, (0..60).filter(|s| ![20, 28, 40].contains(s)));
    assert_eq!(h.lost_packets(), 3);
    assert_eq!(h.loss_events(), 2);
    // I_1 = 40 − 20 = 20; the first interval is packets 0..20 (20); I_0 = 59 − 40 + 1 = 20.
    assert_eq!(h.closed_intervals(), &[20.0, 20.0]);
    assert_eq!(h.open_interval(), Some(20.0));
    // Interpolation: with timestamps 10 ms · seq, losing 20 and 21 together puts 21 at 210 ms.
    let mut h = LossHistory::new(3, false);
    feed(&mut h, (0..40).filter(|s| ![20, 21, 31].contains(s)));
    // 31 is at 310 ms, 110 ms after 200 ms: a second event.
    assert_eq!(h.loss_events(), 2);
    let mut h = LossHistory::new(3, false);
    feed(&mut h, (0..40).filter(|s| ![20, 21, 30].contains(s)));
    // 30 is exactly R after 20: not more than R, same event.
    assert_eq!(h.loss_events(), 1);
}

/// Builds a history with loss events at the given sequence numbers (each far apart in time),
/// received up to `last`.
fn history_with_losses(losses: &[u32], last: u32, discounting: bool) -> LossHistory {
    let mut h = LossHistory::new(3, discounting);
    // 100 ms per packet and R = 10 ms: every loss is its own event.
    for s in (0..=last).filter(|s| !losses.contains(s)) {
        h.on_packet(s, s * 100_000, 10_000);
    }
    h
}

/// RFC 5348 §5.4: weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (n = 8) and
/// I_mean = max(I_tot0/W_tot0, I_tot1/W_tot1), p = 1/I_mean, over the last 8 intervals.
#[test]
fn average_loss_interval_uses_the_weights_of_5_4() {
    let n = 8.0;
    for (i, w) in WEIGHTS.iter().enumerate() {
        let want = if (i as f64) < n / 2.0 {
            1.0
        } else {
            1.0 - (i as f64 - (n / 2.0 - 1.0)) / (n / 2.0 + 1.0)
        };
        assert!((w - want).abs() < 1e-12);
    }
    // Loss events at cumulative positions giving intervals 10, 20, ..., 100 packets.
    let mut losses = vec![];
    let mut pos = 0;
    for k in 1..=10u32 {
        pos += 10 * k;
        losses.push(pos);
    }
    let last = pos + 35;
    let h = history_with_losses(&losses, last, false);
    // Closed intervals, most recent first: 100, 90, ..., 20 (the first, 10, fell out), I_0 = 36.
    let closed: Vec<f64> = (2..=10).rev().map(|k| 10.0 * k as f64).take(8).collect();
    assert_eq!(h.closed_intervals(), closed.as_slice());
    let i0 = (last - pos + 1) as f64;
    assert_eq!(h.open_interval(), Some(i0));
    let mut i_tot0 = i0 * WEIGHTS[0];
    let mut w_tot0 = WEIGHTS[0];
    for i in 1..8 {
        i_tot0 += closed[i - 1] * WEIGHTS[i];
        w_tot0 += WEIGHTS[i];
    }
    let (mut i_tot1, mut w_tot1) = (0.0, 0.0);
    for i in 1..=8 {
        i_tot1 += closed[i - 1] * WEIGHTS[i - 1];
        w_tot1 += WEIGHTS[i - 1];
    }
    let p = 1.0 / (i_tot0 / w_tot0).max(i_tot1 / w_tot1);
    assert!((h.loss_event_rate() - p).abs() < 1e-15);
    // A long open interval dominates once it exceeds the average (I_tot0 wins).
    let h = history_with_losses(&losses, pos + 400, false);
    let i0 = 401.0;
    let mut i_tot0 = i0;
    for i in 1..8 {
        i_tot0 += closed[i - 1] * WEIGHTS[i];
    }
    assert!((h.loss_event_rate() - w_tot0 / i_tot0).abs() < 1e-15);
}

/// RFC 5348 §5.5: when I_0 > 2·I_mean the older intervals are discounted by
/// DF = max(0.5, 2·I_mean/I_0), so p falls faster after congestion ends.
#[test]
fn history_discounting_weights_older_intervals_by_df_5_5() {
    let losses = [10, 20, 30, 40];
    for (last, expect_df) in [(55u32, None), (40 + 29, Some(2.0 * 10.0 / 30.0)), (40 + 199, Some(0.5))] {
        let plain = history_with_losses(&losses, last, false);
        let disc = history_with_losses(&losses, last, true);
        let i0 = (last - 40 + 1) as f64;
        // Closed intervals I_1..I_4 = 10 each (the first is 0..10).
        let closed = [10.0; 4];
        let i_mean = 10.0;
        let df = if i0 > 2.0 * i_mean {
            (2.0 * i_mean / i0).max(0.5)
        } else {
            1.0
        };
        assert_eq!(expect_df.map_or(1.0, |d: f64| d), df);
        let mut i_tot0 = i0 * WEIGHTS[0];
        let mut w_tot0 = WEIGHTS[0];
        for i in 1..4 {
            i_tot0 += closed[i - 1] * WEIGHTS[i] * df;
            w_tot0 += WEIGHTS[i] * df;
        }
        let w_tot1: f64 = WEIGHTS[..4].iter().sum();
        let i_tot1: f64 = closed.iter().zip(WEIGHTS).map(|(i, w)| i * w).sum::<f64>();
        let p = 1.0 / (i_tot0 / w_tot0).max(i_tot1 / w_tot1);
        assert!((disc.loss_event_rate() - p).abs() < 1e-15, "I_0 {i0}");
        if df < 1.0 {
            assert!(disc.loss_event_rate() < plain.loss_event_rate());
        } else {
            assert_eq!(disc.loss_event_rate(), plain.loss_event_rate());
        }
    }
}

// ---- §4: the sender's rate ----

fn rc_at(now: SimTime) -> RateController {
    RateController::new(RateConfig::rfc5348(), 1000.0, now)
}

fn fb(r: f64, x_recv: f64, p: f64) -> FeedbackInfo {
    FeedbackInfo {
        r_sample_s: r,
        x_recv,
        p,
    }
}

/// RFC 5348 §4.2: X starts at one packet per second with the no-feedback timer at 2 s; the
/// first RTT sample sets X to W_init/R = min(4s, max(2s, 4380))/R and tld to now.
#[test]
fn initial_rate_then_w_init_over_r_4_2() {
    let mut rc = rc_at(t(0.0));
    assert_eq!(rc.x(), 1000.0);
    assert_eq!(rc.nofeedback_interval(1000.0), SimDuration::from_secs(2));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    assert_eq!(rc.r(), Some(0.1));
    assert!((rc.x() - 4000.0 / 0.1).abs() < 1e-9);
    assert_eq!(rc.tld(), Some(t(0.1)));
    // s = 1500: W_init = max(3000, 4380) = 4380.
    let mut rc = RateController::new(RateConfig::rfc5348(), 1500.0, t(0.0));
    rc.on_feedback(t(0.1), 1500.0, fb(0.1, 0.0, 0.0), false);
    assert!((rc.x() - 4380.0 / 0.1).abs() < 1e-9);
    // ns-2.35's rfc3390(): 3 packets for 1095 < s < 2190.
    let cfg = RateConfig {
        initial_window: InitialWindow::Ns2Packets,
        ..RateConfig::rfc5348()
    };
    let mut rc = RateController::new(cfg, 1500.0, t(0.0));
    assert_eq!(rc.initial_rate(1500.0), None);
    rc.on_feedback(t(0.1), 1500.0, fb(0.1, 0.0, 0.0), false);
    assert!((rc.x() - 3.0 * 1500.0 / 0.1).abs() < 1e-9);
    assert!((rc.initial_rate(1000.0).unwrap() - 4.0 * 1000.0 / 0.1).abs() < 1e-9);
    assert!((rc.initial_rate(2190.0).unwrap() - 2.0 * 2190.0 / 0.1).abs() < 1e-9);
}

/// RFC 5348 §4.3 step 1: R = q·R + (1 − q)·R_sample with q = 0.9; step 2/4: the no-feedback
/// timer runs max(4R, 2s/X).
#[test]
fn rtt_filter_and_nofeedback_interval_4_3() {
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    rc.on_feedback(t(0.2), 1000.0, fb(0.2, 30_000.0, 0.0), false);
    assert!((rc.r().unwrap() - (0.9 * 0.1 + 0.1 * 0.2)).abs() < 1e-15);
    let r = rc.r().unwrap();
    let want = (4.0 * r).max(2.0 * 1000.0 / rc.x());
    assert_eq!(rc.nofeedback_interval(1000.0), SimDuration::from_secs_f64(want));
}

/// RFC 5348 §4.3 step 3, slow start (p = 0): X = max(min(2X, recv_limit), initial_rate) at
/// most once per R (t_now − tld ≥ R), recv_limit = 2·max(X_recv_set).
#[test]
fn slow_start_doubles_once_per_rtt_up_to_recv_limit_4_3() {
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    let x0 = rc.x(); // 40 000 B/s
                     // Half an RTT later: no doubling.
    rc.on_feedback(t(0.15), 1000.0, fb(0.1, 20_000.0, 0.0), false);
    assert_eq!(rc.x(), x0);
    // One RTT after tld: X doubles (the initial Infinity entry is still within 2R of t = 0? no:
    // it is 0.2 s old, exactly 2R, so it stays and recv_limit is infinite).
    rc.on_feedback(t(0.2), 1000.0, fb(0.1, 30_000.0, 0.0), false);
    assert_eq!(rc.recv_limit(), f64::INFINITY);
    assert_eq!(rc.x(), 2.0 * x0);
    assert_eq!(rc.tld(), Some(t(0.2)));
    // Later the Infinity entry ages out: recv_limit = 2·max of the recent X_recv values.
    rc.on_feedback(t(0.35), 1000.0, fb(0.1, 35_000.0, 0.0), false);
    assert_eq!(rc.recv_limit(), 2.0 * 35_000.0);
    assert_eq!(rc.x(), (2.0 * 2.0 * x0).clamp(40_000.0, 70_000.0));
}

/// RFC 5348 §4.3 step 3, congestion avoidance (p > 0): X = max(min(X_Bps, recv_limit), s/t_mbi).
#[test]
fn congestion_avoidance_takes_the_equation_bounded_by_recv_limit_and_floor_4_3() {
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    // Past 2R: only recent entries count.
    rc.on_feedback(t(1.0), 1000.0, fb(0.1, 50_000.0, 0.01), false);
    let x_bps = x_bytes_per_s(1000.0, 0.1, 0.01, 0.4, 1.0);
    assert_eq!(rc.x_calc(), x_bps);
    assert_eq!(rc.x(), x_bps.clamp(1000.0 / 64.0, 100_000.0));
    // recv_limit binds.
    rc.on_feedback(t(1.5), 1000.0, fb(0.1, 20_000.0, 0.01), false);
    assert_eq!(rc.recv_limit(), 40_000.0);
    assert_eq!(rc.x(), x_bps.min(40_000.0));
    // The floor s/t_mbi binds at a huge p and a tiny receive rate.
    rc.on_feedback(t(2.0), 1000.0, fb(0.1, 1.0, 1.0), false);
    assert_eq!(rc.x(), 1000.0 / 64.0);
}

/// RFC 5348 §4.3: Update X_recv_set() drops entries older than two RTTs.
#[test]
fn x_recv_set_keeps_two_rtts_4_3() {
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    rc.on_feedback(t(0.5), 1000.0, fb(0.1, 90_000.0, 0.0), false);
    rc.on_feedback(t(0.6), 1000.0, fb(0.1, 10_000.0, 0.0), false);
    assert_eq!(rc.max_x_recv(), 90_000.0);
    rc.on_feedback(t(0.75), 1000.0, fb(0.1, 20_000.0, 0.0), false);
    // R = 0.1: the entry from 0.5 s is 0.25 s > 2R old.
    assert_eq!(
        rc.x_recv_set().iter().map(|e| e.0).collect::<Vec<_>>(),
        vec![10_000.0, 20_000.0]
    );
}

/// RFC 5348 §4.3: a feedback covering a data-limited interval maximizes X_recv_set
/// (recv_limit = 2·max); if it also reports a higher p, the entries are halved and X_recv
/// taken at 0.85 first, and recv_limit = max(X_recv_set).
#[test]
fn data_limited_feedback_maximizes_x_recv_set_4_3() {
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    rc.on_feedback(t(0.5), 1000.0, fb(0.1, 50_000.0, 0.0), false);
    rc.on_feedback(t(0.55), 1000.0, fb(0.1, 30_000.0, 0.0), true);
    assert_eq!(rc.x_recv_set(), &[(50_000.0, t(0.55))]);
    assert_eq!(rc.recv_limit(), 100_000.0);
    rc.on_feedback(t(0.6), 1000.0, fb(0.1, 40_000.0, 0.02), true);
    // Entries halved: 25 000; 0.85 · 40 000 = 34 000 is larger.
    assert_eq!(rc.x_recv_set(), &[(34_000.0, t(0.6))]);
    assert_eq!(rc.recv_limit(), 34_000.0);
    let x_bps = x_bytes_per_s(1000.0, rc.r().unwrap(), 0.02, 4.0 * rc.r().unwrap(), 1.0);
    assert_eq!(rc.x(), x_bps.clamp(1000.0 / 64.0, 34_000.0));
}

/// RFC 5348 §4.4: without any feedback the timer halves X (not below s/t_mbi); in slow start
/// (p = 0) too; in congestion avoidance it goes through Update_Limits with X_recv or X_Bps/2.
#[test]
fn nofeedback_timer_halves_the_rate_4_4() {
    let mut rc = rc_at(t(0.0));
    rc.on_nofeedback_timer(t(2.0), 1000.0, false);
    assert_eq!(rc.x(), 500.0);
    for k in 0..20 {
        rc.on_nofeedback_timer(t(3.0 + k as f64), 1000.0, false);
    }
    assert_eq!(rc.x(), 1000.0 / 64.0);
    // Idle since the timer was set and no feedback yet: unchanged.
    let mut rc = rc_at(t(0.0));
    rc.on_nofeedback_timer(t(2.0), 1000.0, true);
    assert_eq!(rc.x(), 1000.0);

    // Slow start, p = 0: X = max(X/2, s/t_mbi).
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    let x = rc.x();
    rc.on_nofeedback_timer(t(0.5), 1000.0, false);
    assert_eq!(rc.x(), x / 2.0);

    // Congestion avoidance, X_Bps > 2·X_recv: Update_Limits(X_recv), X = min(X_Bps, X_recv).
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    rc.on_feedback(t(1.0), 1000.0, fb(0.1, 5_000.0, 0.001), false);
    let x_bps = rc.x_calc();
    assert!(x_bps > 2.0 * 5_000.0);
    rc.on_nofeedback_timer(t(1.5), 1000.0, false);
    assert_eq!(rc.x_recv_set(), &[(2_500.0, t(1.5))]);
    assert_eq!(rc.x(), x_bps.min(5_000.0));

    // X_Bps ≤ 2·X_recv: Update_Limits(X_Bps/2): X = X_Bps/2.
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    rc.on_feedback(t(1.0), 1000.0, fb(0.1, 100_000.0, 0.05), false);
    let x_bps = rc.x_calc();
    assert!(x_bps <= 200_000.0);
    rc.on_nofeedback_timer(t(1.5), 1000.0, false);
    assert!((rc.x() - x_bps / 2.0).abs() < 1e-9 * x_bps);
}

/// RFC 5348 §4.5: R_sqmean = q2·R_sqmean + (1 − q2)·√R_sample and packets are spaced at
/// X_inst = X·R_sqmean/√R_sample.
#[test]
fn oscillation_prevention_scales_the_spacing_4_5() {
    let cfg = RateConfig {
        oscillation_prevention: true,
        ..RateConfig::rfc5348()
    };
    let mut rc = RateController::new(cfg, 1000.0, t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    assert_eq!(rc.x_inst(1000.0), rc.x());
    rc.on_feedback(t(0.3), 1000.0, fb(0.4, 0.0, 0.0), false);
    let sq = 0.9 * 0.1f64.sqrt() + 0.1 * 0.4f64.sqrt();
    assert!((rc.r_sqmean().unwrap() - sq).abs() < 1e-15);
    assert!((rc.x_inst(1000.0) - rc.x() * sq / 0.4f64.sqrt()).abs() < 1e-9);
    assert!(rc.x_inst(1000.0) < rc.x(), "a rising RTT slows the sender at once");
    // Off (the RFC 5348 profile): X itself.
    let mut rc = rc_at(t(0.0));
    rc.on_feedback(t(0.1), 1000.0, fb(0.1, 0.0, 0.0), false);
    rc.on_feedback(t(0.3), 1000.0, fb(0.4, 0.0, 0.0), false);
    assert_eq!(rc.x_inst(1000.0), rc.x());
}

// ---- the socket: sender and receiver packet by packet ----

pub(super) fn cfg(sizes: tpsim_wire::SizeConvention) -> SocketConfig {
    SocketConfig {
        local_port: 1,
        remote_port: 2,
        sizes,
        mtu: 1500,
        draw_seed: 0,
    }
}

fn sender(tfrc: TfrcConfig) -> TfrcSocket {
    TfrcSocket::new(
        cfg(tpsim_wire::SizeConvention::Standard),
        tfrc,
        Open::Active,
        SimTime::ZERO,
    )
}

fn receiver(tfrc: TfrcConfig) -> TfrcSocket {
    TfrcSocket::new(
        cfg(tpsim_wire::SizeConvention::Standard),
        tfrc,
        Open::Passive,
        SimTime::ZERO,
    )
}

fn m(id: u64, len: u32) -> Message {
    Message {
        id,
        len,
        created: SimTime::ZERO,
    }
}

/// `seg` (a data packet) with the urgent flag set, as ns-2's sender marks its packets until
/// its first feedback.
fn urgent(mut seg: Segment) -> Segment {
    if let L4Header::Tfrc(TfrcHeader {
        tfrc: TfrcRepr::Data { urgent, .. },
        ..
    }) = &mut seg.header
    {
        *urgent = true;
    }
    seg
}

/// A TFRC packet from port 2 to port 1 with header `tfrc` and `payload_len` bytes of
/// `message`, sizes by `sizes`, first sent at `first_tx`.
pub(super) fn segment(
    tfrc: TfrcRepr,
    sizes: tpsim_wire::SizeConvention,
    payload_len: u32,
    message: Option<Message>,
    first_tx: SimTime,
) -> Segment {
    Segment {
        addr: None,
        header: L4Header::Tfrc(TfrcHeader {
            udp: tpsim_wire::UdpRepr {
                src_port: 2,
                dst_port: 1,
            },
            tfrc,
        }),
        payload_len,
        ip_len: tfrc.ip_len(sizes, payload_len),
        message,
        first_tx,
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    }
}

fn data(seq: u32, ts_s: f64, rtt_s: f64, len: u32) -> Segment {
    let tfrc = TfrcRepr::Data {
        seq,
        timestamp: (ts_s * 1e6).round() as u32,
        rtt: (rtt_s * 1e6).round() as u32,
        urgent: false,
    };
    segment(
        tfrc,
        tpsim_wire::SizeConvention::Standard,
        len,
        Some(m(seq as u64, len)),
        t(ts_s),
    )
}

fn feedback_of(seg: &Segment) -> (u32, u32, u32, f64) {
    match seg.header {
        L4Header::Tfrc(TfrcHeader {
            tfrc:
                TfrcRepr::Feedback {
                    timestamp_echo,
                    t_delay,
                    x_recv,
                    p,
                },
            ..
        }) => (timestamp_echo, t_delay, x_recv, decode_p(p)),
        _ => panic!("not feedback: {seg:?}"),
    }
}

/// Messages larger than one packet are refused; a bounded send queue refuses with QueueFull;
/// the sizes are IPv4 + UDP + 16 + payload (standard) or payload + 32 (ns-2).
#[test]
fn refusals_and_packet_sizes() {
    let mut s = sender(TfrcConfig {
        send_queue: Some(2),
        ..TfrcConfig::rfc5348()
    });
    assert_eq!(s.send(t(0.0), m(0, 1457)), Err(SendError::TooLarge { max: 1456 }));
    assert!(s.can_send(1456));
    s.send(t(0.0), m(0, 100)).unwrap();
    s.send(t(0.0), m(1, 100)).unwrap();
    assert!(!s.can_send(100));
    assert_eq!(s.send(t(0.0), m(2, 100)), Err(SendError::QueueFull));
    let seg = s.poll_transmit(t(0.0)).unwrap();
    assert_eq!(seg.ip_len, 20 + 8 + 16 + 100);
    let mut ns2 = TfrcSocket::new(
        cfg(tpsim_wire::SizeConvention::Ns2),
        TfrcConfig::ns2(),
        Open::Active,
        SimTime::ZERO,
    );
    ns2.send(t(0.0), m(0, 128)).unwrap();
    assert_eq!(ns2.poll_transmit(t(0.0)).unwrap().ip_len, 160);
    let mut r = receiver(TfrcConfig::rfc5348());
    assert_eq!(r.send(t(0.0), m(0, 10)), Err(SendError::BufferFull));
}

/// `packet_size` pads every data packet to that many bytes of data (ns-2.35's Agent/TFRC
/// `packetSize_`): a 128-byte message travels in a 1032-byte packet under ns-2 sizes, and s is
/// the padded size (one packet of 1000 B per second before feedback, RFC 5348 §4.2).
#[test]
fn packet_size_pads_data_packets_and_sets_s() {
    let mut c = TfrcConfig::ns2();
    c.packet_size = Some(1000);
    c.rate.initial_x = None;
    let mut s = TfrcSocket::new(cfg(tpsim_wire::SizeConvention::Ns2), c, Open::Active, SimTime::ZERO);
    s.send(t(0.0), m(0, 128)).unwrap();
    s.send(t(0.0), m(1, 128)).unwrap();
    let seg = s.poll_transmit(t(0.0)).unwrap();
    assert_eq!((seg.ip_len, seg.payload_len), (1032, 128));
    assert_eq!(
        s.poll_timeout(),
        Some(t(1.0)),
        "X = s = 1000 B/s: the next packet 1 s later"
    );
}

/// RFC 5348 §4.2 and §4.6: before feedback the sender sends one packet per second (X = s
/// bytes/s), each packet s/X after the previous one; poll_timeout says when.
#[test]
fn sender_paces_at_s_over_x_4_6() {
    let mut s = sender(TfrcConfig::rfc5348());
    for i in 0..3 {
        s.send(t(0.0), m(i, 500)).unwrap();
    }
    let p0 = s.poll_transmit(t(0.0)).unwrap();
    assert!(s.poll_transmit(t(0.0)).is_none());
    assert_eq!(s.poll_timeout(), Some(t(1.0)));
    assert!(s.poll_transmit(t(0.999)).is_none());
    let p1 = s.poll_transmit(t(1.0)).unwrap();
    match (p0.header, p1.header) {
        (
            L4Header::Tfrc(TfrcHeader {
                tfrc:
                    TfrcRepr::Data {
                        seq: 0,
                        timestamp: 0,
                        rtt: 0,
                        urgent: false,
                    },
                ..
            }),
            L4Header::Tfrc(TfrcHeader {
                tfrc:
                    TfrcRepr::Data {
                        seq: 1,
                        timestamp: 1_000_000,
                        rtt: 0,
                        urgent: false,
                    },
                ..
            }),
        ) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(p1.message.unwrap().id, 1);
    assert_eq!(s.stats().tx_segments, 2);
}

/// RFC 5348 §6.3 and §6.2: the first data packet is answered at once; later feedback goes once
/// per R_m (the RTT the data carries) with the echoed timestamp, t_delay, X_recv (bytes since
/// the last feedback over the time since) and p.
#[test]
fn receiver_feedback_first_packet_then_once_per_rtt_6_2_6_3() {
    let mut r = receiver(TfrcConfig::rfc5348());
    r.on_segment(t(0.05), &data(0, 0.0, 0.0, 1000));
    let f0 = r.poll_transmit(t(0.05)).unwrap();
    assert_eq!(f0.ip_len, 20 + 8 + 20);
    assert_eq!(feedback_of(&f0), (0, 0, 0, 0.0));
    assert!(matches!(r.poll_event(), Some(TransportEvent::Delivered { message, .. }) if message.id == 0));
    // Data carrying R = 100 ms: feedback 100 ms after the last one.
    r.on_segment(t(0.06), &data(1, 0.01, 0.1, 1000));
    assert!(r.poll_transmit(t(0.06)).is_none());
    assert_eq!(r.poll_timeout(), Some(t(0.15)));
    r.on_segment(t(0.12), &data(2, 0.07, 0.1, 1000));
    r.on_timeout(t(0.15));
    let f1 = r.poll_transmit(t(0.15)).unwrap();
    let x_recv: f64 = 2000.0 / 0.1;
    assert_eq!(feedback_of(&f1), (70_000, 30_000, x_recv.round() as u32, 0.0));
    assert_eq!(r.poll_timeout(), Some(t(0.25)));
    // No data since: no feedback, the timer stops.
    r.on_timeout(t(0.25));
    assert!(r.poll_transmit(t(0.25)).is_none());
    assert_eq!(r.poll_timeout(), None);
    let rep = r.report();
    assert_eq!(rep.stats.tx_segments, 2);
    assert_eq!(rep.stats.ack_segments, 2);
}

/// ns-2.35's TFRCSink (tfrc-sink.cc `recv`, `nextpkt`, `sendpkt`): a data packet is answered
/// once R has passed since the last report; the timer, 1.5·R after a report, reports again if
/// the last data packet arrived at or after that report, and keeps running.
#[test]
fn ns2_receiver_answers_data_once_r_has_passed_and_again_on_its_timer() {
    let mut r = receiver(TfrcConfig::ns2());
    r.on_segment(t(0.05), &urgent(data(0, 0.0, 0.0, 100)));
    assert!(
        r.poll_transmit(t(0.05)).is_some(),
        "the first packet, urgent, is answered at once"
    );
    // R = 100 ms; data every 20 ms: no report before 100 ms have passed, then on the arrival.
    for (k, at) in [(1, 0.07), (2, 0.09), (3, 0.11), (4, 0.13)] {
        r.on_segment(t(at), &data(k, at - 0.05, 0.1, 100));
        assert!(r.poll_transmit(t(at)).is_none(), "packet {k}");
    }
    assert_eq!(r.poll_timeout(), None, "no timer while no report knew R (ns-2: rtt_ 0)");
    // Exactly R after the last report: not yet (more than R must have passed; in ns-2 such a
    // tie goes either way with the rounding of its floating-point clock).
    r.on_segment(t(0.15), &data(5, 0.1, 0.1, 100));
    assert!(r.poll_transmit(t(0.15)).is_none());
    r.on_segment(t(0.17), &data(6, 0.12, 0.1, 100));
    assert!(
        r.poll_transmit(t(0.17)).is_some(),
        "more than 100 ms after the last report"
    );
    assert_eq!(r.poll_timeout(), Some(t(0.32)));
    // The timer reports again: the last packet arrived at the last report's time.
    r.on_timeout(t(0.32));
    assert!(r.poll_transmit(t(0.32)).is_some());
    assert_eq!(r.poll_timeout(), Some(t(0.47)));
    // A packet 50 ms after that report (less than R) waits for the timer, which answers it.
    r.on_segment(t(0.37), &data(7, 0.32, 0.1, 100));
    assert!(r.poll_transmit(t(0.37)).is_none());
    r.on_timeout(t(0.47));
    assert!(r.poll_transmit(t(0.47)).is_some());
    // Nothing new since: no report, the timer runs on.
    r.on_timeout(t(0.62));
    assert!(r.poll_transmit(t(0.62)).is_none());
    assert_eq!(r.poll_timeout(), Some(t(0.77)));
    assert_eq!(r.report().stats.ack_segments, 4);
}

/// RFC 5348 §6.1: a new loss event that raises p expires the feedback timer at once; §6.3.1:
/// the first loss interval is the one that gives X_recv by the equation.
#[test]
fn new_loss_event_sends_feedback_at_once_and_seeds_the_history_6_1_6_3_1() {
    let mut r = receiver(TfrcConfig::rfc5348());
    let rtt = 0.1;
    r.on_segment(t(0.05), &data(0, 0.0, 0.0, 1000));
    r.poll_transmit(t(0.05)).unwrap();
    // Packets every 10 ms from 10 ms; seq 5 lost.
    let mut fbs = vec![];
    let mut at = 0.0;
    for seq in (1..=8).filter(|&s| s != 5) {
        at = 0.05 + seq as f64 * 0.01;
        r.on_timeout(t(at));
        r.on_segment(t(at), &data(seq, seq as f64 * 0.01, rtt, 1000));
        while let Some(f) = r.poll_transmit(t(at)) {
            fbs.push((at, feedback_of(&f)));
        }
    }
    // The loss is declared on seq 8 (three later packets: 6, 7, 8), at 0.13 s < 0.15 s.
    let (when, (_, _, x_recv, p)) = *fbs.last().unwrap();
    assert_eq!(when, at);
    assert!(p > 0.0);
    // The seeded interval: X_recv here is the bytes since the first feedback over the time
    // since, at least R (0.08 s < R = 0.1 s).
    let x = 7000.0 / (at - 0.05f64).max(rtt);
    assert_eq!(x_recv, x.round() as u32);
    let seeded = 1.0 / p_for_x(1000.0, rtt, x, 1.0);
    let h = r.loss_history().unwrap();
    assert!((h.closed_intervals()[0] - seeded).abs() < 1e-9 * seeded);
    // I_0 = 8 − 5 + 1 = 4 packets; p = 1/max(I_0, I_1) (one closed interval, w = 1).
    let want = 1.0 / seeded.max((4.0 + seeded) / 2.0);
    assert!((h.loss_event_rate() - want).abs() < 1e-12);
    assert!((p - decode_p(encode_p(want))).abs() < 1e-15);
}

/// RFC 5348 §4.3 step 1 at the socket: R_sample = (t_now − t_recvdata) − t_delay, and the
/// sender's data packets then carry R.
#[test]
fn sender_takes_rtt_sample_from_echo_and_t_delay_4_3() {
    let mut s = sender(TfrcConfig::rfc5348());
    s.send(t(0.0), m(0, 1000)).unwrap();
    s.send(t(0.0), m(1, 1000)).unwrap();
    s.poll_transmit(t(0.0)).unwrap();
    let fbk = Segment {
        addr: None,
        header: L4Header::Tfrc(TfrcHeader {
            udp: tpsim_wire::UdpRepr {
                src_port: 2,
                dst_port: 1,
            },
            tfrc: TfrcRepr::Feedback {
                timestamp_echo: 0,
                t_delay: 20_000,
                x_recv: 0,
                p: u32::MAX,
            },
        }),
        payload_len: 0,
        ip_len: 48,
        message: None,
        first_tx: t(0.07),
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    };
    s.on_segment(t(0.12), &fbk);
    let rc = s.rate().unwrap();
    assert!((rc.r().unwrap() - 0.1).abs() < 1e-12);
    // X = 4000/0.1 = 40 000 B/s: the next packet goes s/X = 25 ms after the first.
    assert!((rc.x() - 40_000.0).abs() < 1e-6);
    assert_eq!(s.poll_timeout(), Some(t(0.025)));
    let seg = s.poll_transmit(t(0.12)).unwrap();
    assert!(matches!(
        seg.header,
        L4Header::Tfrc(TfrcHeader {
            tfrc: TfrcRepr::Data { rtt: 100_000, .. },
            ..
        })
    ));
    // A copy of the same feedback is ignored.
    s.on_segment(t(0.2), &fbk);
    assert_eq!(s.rate().unwrap().feedbacks(), 1);
    let rep = s.report();
    assert_eq!((rep.rtt_samples, rep.rtt_sum_ns), (1, 100_000_000));
    assert_eq!(rep.congestion[0], ("x_bps", Some(320_000.0)));
    assert_eq!(rep.congestion[1], ("p", Some(0.0)));
    assert_eq!(rep.congestion[2].0, "srtt_s");
}

/// The pcap bytes of a TFRC packet: UDP header, TFRC header, zeros, and a UDP checksum that
/// verifies.
#[test]
fn emit_zeroed_writes_a_valid_udp_datagram() {
    let seg = data(3, 1.0, 0.1, 100);
    let len = seg.ip_len - 20;
    let ip = tpsim_wire::Ipv4Repr {
        src: std::net::Ipv4Addr::new(10, 0, 0, 1),
        dst: std::net::Ipv4Addr::new(10, 0, 0, 2),
        protocol: seg.header.protocol(),
        ttl: 64,
        ident: 0,
        total_len: seg.ip_len as u16,
        ecn: tpsim_wire::Ecn::NotEct,
    };
    let mut out = vec![0xEE; len as usize];
    seg.header.emit_zeroed(&ip, &mut out);
    let sum = tpsim_wire::checksum::accumulate(ip.pseudo_header_sum(len as u16), &out);
    assert_eq!(tpsim_wire::checksum::finish(sum), 0);
    assert_eq!(seg.header.dst_port(), 1);
    assert_eq!(
        TfrcRepr::parse(&out[8..]).unwrap().0,
        match seg.header {
            L4Header::Tfrc(TfrcHeader { tfrc, .. }) => tfrc,
            _ => unreachable!(),
        }
    );
}
