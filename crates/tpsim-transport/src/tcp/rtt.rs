//! The retransmission timeout of RFC 6298: SRTT, RTTVAR, RTO and exponential backoff.
//!
//! All quantities are [`SimDuration`]s (integer nanoseconds). The smoothing of RFC 6298 §2.3
//! (α = 1/8, β = 1/4) is done in integer nanoseconds, truncating; at nanosecond resolution the
//! truncation is far below any clock a real TCP has.

use tpsim_core::SimDuration;

/// K of RFC 6298 §2: RTO = SRTT + max(G, K·RTTVAR).
const K: u64 = 4;
/// RFC 6298 (5.7): after a lost SYN the RTO restarts from 3 s once the connection is open.
pub const SYN_LOSS_RTO: SimDuration = SimDuration::from_secs(3);

/// RTT estimator and retransmission timeout (RFC 6298).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    /// RTO computed from the last sample (or the initial RTO), bounded, before backoff.
    base_rto: SimDuration,
    /// Current RTO: `base_rto` doubled once per backoff, at most `max_rto`.
    rto: SimDuration,
    backoffs: u32,
    min_rto: SimDuration,
    max_rto: SimDuration,
    granularity: SimDuration,
    samples: u64,
    sum_ns: u64,
}

impl RttEstimator {
    /// A fresh estimator: RTO = `initial_rto` (RFC 6298 §2.1), clamped to [`min_rto`, `max_rto`].
    pub fn new(initial_rto: SimDuration, min_rto: SimDuration, max_rto: SimDuration, granularity: SimDuration) -> Self {
        let rto = initial_rto.max(min_rto).min(max_rto);
        RttEstimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            base_rto: rto,
            rto,
            backoffs: 0,
            min_rto,
            max_rto,
            granularity,
            samples: 0,
            sum_ns: 0,
        }
    }

    /// Takes an RTT measurement `r` (the caller applies Karn's rule, RFC 6298 §3) and
    /// recomputes the RTO, which also clears any backoff (RFC 6298 (5.7) note, Karn).
    pub fn on_sample(&mut self, r: SimDuration) {
        self.samples += 1;
        self.sum_ns = self.sum_ns.saturating_add(r.0);
        match self.srtt {
            None => {
                // RFC 6298 §2.2: first measurement.
                self.srtt = Some(r);
                self.rttvar = SimDuration(r.0 / 2);
            }
            Some(srtt) => {
                // RFC 6298 §2.3: RTTVAR first (with the old SRTT), then SRTT.
                let delta = srtt.0.abs_diff(r.0);
                self.rttvar = SimDuration((3 * self.rttvar.0 + delta) / 4);
                self.srtt = Some(SimDuration((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.expect("set above");
        // RFC 6298 §2.2/§2.3: RTO = SRTT + max(G, K*RTTVAR); §2.4 lower bound; §2.5 upper bound.
        let rto = srtt + self.granularity.max(SimDuration(K * self.rttvar.0));
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        self.rto = self.base_rto;
        self.backoffs = 0;
    }

    /// RFC 6298 (5.5): doubles the RTO after a timer expiry, up to the maximum (§2.5).
    pub fn backoff(&mut self) {
        self.backoffs += 1;
        self.rto = SimDuration(self.rto.0.saturating_mul(2)).min(self.max_rto);
    }

    /// RFC 6298 (5.7): if the timer expired awaiting the ACK of a SYN and the RTO is below 3 s,
    /// the RTO restarts from 3 s when data transmission begins.
    pub fn reset_after_syn_loss(&mut self) {
        if self.srtt.is_none() && self.base_rto < SYN_LOSS_RTO {
            self.base_rto = SYN_LOSS_RTO.min(self.max_rto);
        }
        self.rto = self.base_rto;
        self.backoffs = 0;
    }

    /// The current retransmission timeout, backoff included.
    #[inline]
    pub fn rto(&self) -> SimDuration {
        self.rto
    }
    /// The RTO before backoff: max(min RTO, SRTT + max(G, 4·RTTVAR)) bounded by the maximum
    /// (RFC 6298 §2), or the initial RTO before the first sample.
    #[inline]
    pub fn base_rto(&self) -> SimDuration {
        self.base_rto
    }
    /// Smoothed RTT, or `None` before the first sample.
    #[inline]
    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }
    /// RTT variation.
    #[inline]
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }
    /// Times the RTO was doubled since the last sample.
    #[inline]
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
    /// Number of samples taken.
    #[inline]
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// Sum of all samples, ns.
    #[inline]
    pub fn sum_ns(&self) -> u64 {
        self.sum_ns
    }
    /// Upper bound of the RTO.
    #[inline]
    pub fn max_rto(&self) -> SimDuration {
        self.max_rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn est() -> RttEstimator {
        RttEstimator::new(ms(1000), ms(1000), ms(60_000), ms(1))
    }

    /// RFC 6298 §2.1: before any sample the RTO is 1 s.
    #[test]
    fn initial_rto_is_one_second() {
        assert_eq!(est().rto(), ms(1000));
        assert_eq!(est().srtt(), None);
    }

    /// RFC 6298 §2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR).
    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = RttEstimator::new(ms(1000), ms(100), ms(60_000), ms(1));
        e.on_sample(ms(300));
        assert_eq!(e.srtt(), Some(ms(300)));
        assert_eq!(e.rttvar(), ms(150));
        assert_eq!(e.rto(), ms(300 + 600));
    }

    /// RFC 6298 §2.3: RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R'| (old SRTT), SRTT = 7/8·SRTT + 1/8·R'.
    #[test]
    fn later_samples_smooth_with_alpha_and_beta() {
        let mut e = RttEstimator::new(ms(1000), ms(100), ms(60_000), ms(1));
        e.on_sample(ms(400));
        e.on_sample(ms(200));
        // RTTVAR = 0.75*200 + 0.25*200 = 200; SRTT = 0.875*400 + 0.125*200 = 375.
        assert_eq!(e.rttvar(), ms(200));
        assert_eq!(e.srtt(), Some(ms(375)));
        assert_eq!(e.rto(), ms(375 + 800));
    }

    /// RFC 6298 §2.4 (lower bound 1 s) and the clock granularity of §2.2 when RTTVAR is zero.
    #[test]
    fn rto_is_bounded_below_and_granularity_applies() {
        let mut e = est();
        e.on_sample(ms(10));
        assert_eq!(e.rto(), ms(1000));
        let mut e = RttEstimator::new(ms(1000), SimDuration::ZERO, ms(60_000), ms(1));
        for _ in 0..200 {
            e.on_sample(ms(50));
        }
        // RTTVAR decays towards 0, so RTO = SRTT + G.
        assert_eq!(e.srtt(), Some(ms(50)));
        assert!(e.rttvar() < SimDuration::from_micros(1));
        assert_eq!(e.rto(), ms(51));
    }

    /// RFC 6298 (5.5) doubling and §2.5 cap; a new sample clears the backoff.
    #[test]
    fn backoff_doubles_up_to_sixty_seconds() {
        let mut e = est();
        let mut seen = vec![];
        for _ in 0..8 {
            e.backoff();
            seen.push(e.rto().0 / 1_000_000_000);
        }
        assert_eq!(seen, [2, 4, 8, 16, 32, 60, 60, 60]);
        e.on_sample(ms(100));
        assert_eq!(e.backoffs(), 0);
        assert_eq!(e.rto(), ms(1000));
    }

    /// RFC 6298 (5.7): 3 s after a SYN timed out and no sample was taken.
    #[test]
    fn syn_loss_reinitializes_to_three_seconds() {
        let mut e = est();
        e.backoff();
        e.reset_after_syn_loss();
        assert_eq!(e.rto(), ms(3000));
    }
}
