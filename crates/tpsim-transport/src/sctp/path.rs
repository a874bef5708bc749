//! Per-destination state (RFC 9260 §6.3, §7.2, §8.2, §8.3): the retransmission timeout, the
//! congestion variables and the error counter of one peer transport address.
//!
//! Everything a congestion controller needs lives here, never association-wide (RFC 9260 §7.2:
//! cwnd, ssthresh and partial_bytes_acked are kept per destination address), so that a
//! multi-homed association simply has several paths, one per peer address.

use std::net::Ipv4Addr;
use tpsim_core::{SimDuration, SimTime};

/// RTO computation of RFC 9260 §6.3.1 (rules C1–C7) with the back-off of §6.3.3 E2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    /// RTO from the last measurement (or RTO.Initial), bounded: before back-off.
    base: SimDuration,
    /// Current RTO, back-off included.
    rto: SimDuration,
    min: SimDuration,
    max: SimDuration,
    alpha: f64,
    beta: f64,
    granularity: SimDuration,
    samples: u64,
    sum_ns: u64,
}

impl RtoEstimator {
    /// RFC 9260 §6.3.1 C1: before any measurement RTO = RTO.Initial (bounded by C6/C7).
    pub fn new(
        initial: SimDuration,
        min: SimDuration,
        max: SimDuration,
        alpha: f64,
        beta: f64,
        granularity: SimDuration,
    ) -> Self {
        let rto = initial.max(min).min(max);
        RtoEstimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            base: rto,
            rto,
            min,
            max,
            alpha,
            beta,
            granularity,
            samples: 0,
            sum_ns: 0,
        }
    }

    /// Takes a measurement `r` (the caller applies Karn's rule, C5) and recomputes the RTO,
    /// which clears any back-off.
    #[inline]
    pub fn on_sample(&mut self, r: SimDuration) {
        self.samples += 1;
        self.sum_ns = self.sum_ns.saturating_add(r.0);
        let (srtt, rttvar) = match self.srtt {
            // RFC 9260 §6.3.1 C2: SRTT <- R, RTTVAR <- R/2.
            None => (r.0 as f64, r.0 as f64 / 2.0),
            // C3: RTTVAR <- (1 - RTO.Beta) * RTTVAR + RTO.Beta * |SRTT - R'| first, with the
            // old SRTT; then SRTT <- (1 - RTO.Alpha) * SRTT + RTO.Alpha * R'.
            Some(s) => {
                let (s, v) = (s.0 as f64, self.rttvar.0 as f64);
                let v = (1.0 - self.beta) * v + self.beta * (s - r.0 as f64).abs();
                ((1.0 - self.alpha) * s + self.alpha * r.0 as f64, v)
            }
        };
        self.srtt = Some(SimDuration(round_ns(srtt)));
        // C3 note: an RTTVAR computed to be 0 is set to the clock granularity G (a small
        // non-zero RTTVAR stays as computed).
        let rttvar = SimDuration(round_ns(rttvar));
        self.rttvar = if rttvar == SimDuration::ZERO {
            self.granularity
        } else {
            rttvar
        };
        // C2/C3: RTO <- SRTT + 4 * RTTVAR; C6: at least RTO.Min; C7: at most RTO.Max.
        let rto = SimDuration(self.srtt.expect("set").0 + 4 * self.rttvar.0);
        self.base = rto.max(self.min).min(self.max);
        self.rto = self.base;
    }

    /// RFC 9260 §6.3.3 E2: RTO <- RTO * 2, at most RTO.Max (C7).
    pub fn back_off(&mut self) {
        self.rto = SimDuration(self.rto.0.saturating_mul(2)).min(self.max);
    }

    /// Current RTO (back-off included).
    pub fn rto(&self) -> SimDuration {
        self.rto
    }
    /// RTO before back-off.
    pub fn base_rto(&self) -> SimDuration {
        self.base
    }
    /// Smoothed RTT, once measured.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }
    /// RTT variation.
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }
    /// Measurements taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// Sum of the measurements, ns.
    pub fn sum_ns(&self) -> u64 {
        self.sum_ns
    }
}

/// `x.round() as u64` (half away from zero, saturating, NaN to 0) for every `x`, without the
/// library call `round` becomes on baseline x86-64: the truncation `x as u64` is exact, and so
/// is `x` minus it (below 2^52; above, `x` is an integer).
#[inline]
fn round_ns(x: f64) -> u64 {
    let i = x as u64;
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

/// One destination transport address of the peer.
#[derive(Clone, Debug)]
pub struct Path {
    /// The peer address (`None`: the one the endpoint was connected to, not told).
    pub addr: Option<Ipv4Addr>,
    /// Whether the address is CONFIRMED (RFC 9260 §5.4): only HEARTBEATs go to an unconfirmed
    /// one.
    pub confirmed: bool,
    /// User bytes of DATA chunks sent to this address, retransmissions included.
    pub data_bytes_sent: u64,
    /// Congestion window, bytes (RFC 9260 §7.2).
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// RFC 9260 §7.2.2's partial_bytes_acked, bytes.
    pub partial_bytes_acked: u64,
    /// Bytes of DATA chunks sent to this address and neither acknowledged nor marked for
    /// retransmission (the flight size).
    pub flight_size: u64,
    /// Retransmission timeout (RFC 9260 §6.3.1).
    pub rtt: RtoEstimator,
    /// Error counter (RFC 9260 §8.2).
    pub error_count: u32,
    /// False once the error counter exceeded Path.Max.Retrans (RFC 9260 §8.2).
    pub active: bool,
    /// Potentially failed (RFC 7829 §3): active, its error counter above PFMR. Only with
    /// [`SctpConfig::pf_max_retrans`](super::SctpConfig::pf_max_retrans).
    pub potentially_failed: bool,
    /// T3-rtx deadline (RFC 9260 §6.3.2).
    pub t3_rtx: Option<SimTime>,
    /// Next heartbeat check (RFC 9260 §8.3).
    pub hb_at: Option<SimTime>,
    /// The Heartbeat Information (send time, ns) of the HEARTBEAT awaiting its ACK.
    pub hb_outstanding: Option<u64>,
    /// A chunk usable for RTT measurement or a HEARTBEAT was sent in the current heartbeat
    /// period (RFC 9260 §8.3's definition of a non-idle destination).
    pub hb_period_busy: bool,
    /// Last time DATA was transmitted to this address (RFC 9260 §7.2.1 idle decay).
    pub last_data_tx: Option<SimTime>,
    /// Idle decays already applied since `last_data_tx`.
    pub idle_decays: u32,
    /// RFC 9260 §7.2.4: Fast Recovery exit point (the highest TSN outstanding when it began).
    pub fast_recovery_exit: Option<u32>,
    /// RFC 9260 §7.2.1: after a T3-rtx timeout only one packet may be in flight until an
    /// acknowledgement arrives.
    pub one_packet_after_timeout: bool,
    /// The chunk being timed for an RTT measurement (RFC 9260 §6.3.1 C4/C5): its TSN and send
    /// time.
    pub rtt_timed: Option<(u32, SimTime)>,
}

impl Path {
    /// A path with the initial window `cwnd` and `ssthresh`.
    pub fn new(rtt: RtoEstimator, cwnd: u64, ssthresh: u64) -> Path {
        Path {
            addr: None,
            confirmed: true,
            data_bytes_sent: 0,
            cwnd,
            ssthresh,
            partial_bytes_acked: 0,
            flight_size: 0,
            rtt,
            error_count: 0,
            active: true,
            potentially_failed: false,
            t3_rtx: None,
            hb_at: None,
            hb_outstanding: None,
            hb_period_busy: false,
            last_data_tx: None,
            idle_decays: 0,
            fast_recovery_exit: None,
            one_packet_after_timeout: false,
            rtt_timed: None,
        }
    }

    /// Whether the path is in Fast Recovery (RFC 9260 §7.2.4).
    pub fn in_fast_recovery(&self) -> bool {
        self.fast_recovery_exit.is_some()
    }

    /// RFC 9260 §7.2.1/§7.2.2 on a SACK that newly acknowledged `acked` bytes sent to this
    /// path, when the flight size was `flight_before` before the SACK: slow start while
    /// cwnd <= ssthresh (by at most min(acked, L * unit), only if the window was fully used
    /// and the path is not in Fast Recovery), congestion avoidance above it
    /// (partial_bytes_acked). `counts` is false for a SACK that RFC 4960 does not let grow
    /// the window (one that does not advance the Cumulative TSN Ack Point; see
    /// [`SctpConfig::growth_needs_cum_advance`](super::SctpConfig::growth_needs_cum_advance)).
    pub fn on_acked(&mut self, acked: u64, flight_before: u64, counts: bool, unit: u64, l: u64) {
        if acked == 0 || !counts || self.in_fast_recovery() {
            return;
        }
        if self.cwnd <= self.ssthresh {
            // RFC 9260 §7.2.1: "only if the current congestion window is being fully utilized
            // and the data sender is not in Fast Recovery" (RFC 4960 §7.2.1 adds: "an incoming
            // SACK advances the Cumulative TSN Ack Point", in `counts`).
            if flight_before >= self.cwnd {
                self.cwnd += acked.min(l * unit);
            }
        } else {
            // RFC 9260 §7.2.2: partial_bytes_acked grows by every byte newly acknowledged
            // (cumulatively or by Gap Ack Blocks; RFC 4960 §7.2.2: on SACKs that advance the
            // Cumulative TSN Ack Point only, in `counts`).
            self.partial_bytes_acked += acked;
            if self.partial_bytes_acked >= self.cwnd && flight_before >= self.cwnd {
                self.partial_bytes_acked -= self.cwnd;
                self.cwnd += unit;
            } else if self.partial_bytes_acked > self.cwnd {
                // Flight size was below cwnd: "reset partial_bytes_acked to cwnd".
                self.partial_bytes_acked = self.cwnd;
            }
        }
    }

    /// RFC 9260 §7.2.3 (fast retransmit) and §6.3.3 E1 (timeout): ssthresh = max(cwnd/2,
    /// 4 * unit); cwnd = ssthresh after fast retransmit, one unit after a timeout.
    pub fn on_congestion(&mut self, timeout: bool, unit: u64) {
        self.ssthresh = (self.cwnd / 2).max(4 * unit);
        self.cwnd = if timeout { unit } else { self.ssthresh };
        self.partial_bytes_acked = 0;
    }

    /// RFC 9260 §7.2.1/§7.2.2: while nothing is transmitted to this address, cwnd is adjusted
    /// to max(cwnd/2, 4 * unit) once per RTO, ssthresh first set to cwnd. Applied lazily at
    /// `now` for every whole RTO since the last DATA transmission, when nothing is in flight.
    /// `above`: ns-2.35 decays only a cwnd above this many bytes (`CwndDegradeTimerExpiration`).
    pub fn idle_decay(&mut self, now: SimTime, unit: u64, above: Option<u64>) {
        let Some(last) = self.last_data_tx else { return };
        if self.flight_size > 0 {
            return;
        }
        let rto = self.rtt.rto().0.max(1);
        let due = (now.saturating_since(last).0 / rto).min(64) as u32;
        while self.idle_decays < due {
            if above.is_some_and(|a| self.cwnd <= a) {
                self.idle_decays = due;
                break;
            }
            if self.idle_decays == 0 {
                self.ssthresh = self.cwnd;
            }
            self.cwnd = (self.cwnd / 2).max(4 * unit);
            self.idle_decays += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RtoEstimator {
        RtoEstimator::new(
            SimDuration::from_secs(1),
            SimDuration::from_secs(1),
            SimDuration::from_secs(60),
            0.125,
            0.25,
            SimDuration::from_millis(1),
        )
    }

    /// RFC 9260 §6.3.1 C1–C3, C6, C7 with the RFC's α = 1/8, β = 1/4.
    #[test]
    fn rto_follows_c1_to_c7() {
        let mut e = est();
        assert_eq!(e.rto(), SimDuration::from_secs(1)); // C1
        e.on_sample(SimDuration::from_millis(800)); // C2: 800 + 4 * 400 = 2400 ms
        assert_eq!(e.srtt(), Some(SimDuration::from_millis(800)));
        assert_eq!(e.rto(), SimDuration::from_millis(2400));
        // C3: RTTVAR = 3/4 * 400 + 1/4 * |800 - 400| = 400; SRTT = 7/8 * 800 + 1/8 * 400 = 750.
        e.on_sample(SimDuration::from_millis(400));
        assert_eq!(e.srtt(), Some(SimDuration::from_millis(750)));
        assert_eq!(e.rttvar(), SimDuration::from_millis(400));
        assert_eq!(e.rto(), SimDuration::from_millis(2350));
        let mut e = est();
        e.on_sample(SimDuration::from_millis(10)); // 10 + 20 = 30 ms < RTO.Min (C6)
        assert_eq!(e.rto(), SimDuration::from_secs(1));
        for _ in 0..10 {
            e.back_off(); // E2, bounded by RTO.Max (C7)
        }
        assert_eq!(e.rto(), SimDuration::from_secs(60));
        assert_eq!(e.base_rto(), SimDuration::from_secs(1));
    }

    /// RFC 9260 §6.3.1 C3: with constant RTTs RTTVAR decays by (1 − RTO.Beta) per measurement
    /// and stays below G once there (only an RTTVAR of exactly 0 becomes G); the RTO follows
    /// SRTT + 4·RTTVAR above RTO.Min (10 ms here).
    #[test]
    fn rttvar_decays_below_g_and_zero_becomes_g() {
        let mut e = RtoEstimator::new(
            SimDuration::from_secs(1),
            SimDuration::from_millis(10),
            SimDuration::from_secs(60),
            0.125,
            0.25,
            SimDuration::from_millis(1),
        );
        let r = SimDuration::from_millis(100);
        e.on_sample(r);
        let mut want = r.0 as f64 / 2.0; // C2
        for _ in 0..20 {
            e.on_sample(r);
            want = (0.75 * want).round(); // C3 with |SRTT − R'| = 0, rounded to ns as stored
        }
        assert!(want > 0.0 && want < 1e6, "below G = 1 ms: {want}");
        assert_eq!(e.rttvar(), SimDuration(want as u64));
        assert_eq!(e.rto(), SimDuration(r.0 + 4 * want as u64));
        // A measurement of 0 (C2: RTTVAR = R/2 = 0) gives RTTVAR = G.
        let mut z = est();
        z.on_sample(SimDuration::ZERO);
        assert_eq!(z.rttvar(), SimDuration::from_millis(1));
    }

    /// `round_ns` is `f64::round` then `as u64` (ties away from zero, saturation, NaN),
    /// including the values next to the ties and the limits of exact integers.
    #[test]
    fn round_ns_matches_round() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -0.5,
            -0.7,
            -1.5,
            0.49999999999999994,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            1e-300,
        ];
        for k in 0..2000u64 {
            let x = k as f64 * 0.25 + (k % 7) as f64 * 1e6;
            // The neighbouring doubles (x >= 0).
            let (up, down) = (
                f64::from_bits(x.to_bits() + 1),
                f64::from_bits(x.to_bits().saturating_sub(1)),
            );
            xs.extend([x, up, down, x * 1.000_000_1]);
        }
        for x in xs {
            assert_eq!(round_ns(x), x.round() as u64, "{x:e}");
        }
    }

    /// RFC 9260 §7.2.2: cwnd grows by one unit per cwnd of acknowledged bytes, only when the
    /// window was full; partial_bytes_acked is capped at cwnd otherwise.
    #[test]
    fn congestion_avoidance_counts_partial_bytes() {
        let mut p = Path::new(est(), 6000, 5000);
        p.on_acked(3000, 6000, true, 1500, 1);
        assert_eq!((p.cwnd, p.partial_bytes_acked), (6000, 3000));
        p.on_acked(3000, 6000, true, 1500, 1);
        assert_eq!((p.cwnd, p.partial_bytes_acked), (7500, 0));
        p.on_acked(9000, 3000, true, 1500, 1);
        assert_eq!((p.cwnd, p.partial_bytes_acked), (7500, 7500));
    }
}
