//! Rate adaptation for unicast DATA frames: ARF and AARF, per destination.
//!
//! # Read first
//!
//! * A. Kamerman, L. Monteban, "WaveLAN-II: a high-performance wireless LAN for the unlicensed
//!   band", Bell Labs Technical Journal 2(3):118–133, 1997: Auto Rate Fallback (ARF). After a
//!   number of consecutive successful transmissions the sender tries the next higher rate; the
//!   first transmission at the new rate is a *probe*, and if it fails the sender falls back at
//!   once; after two consecutive failures it moves down one rate.
//! * M. Lacage, M. H. Manshaei, T. Turletti, "IEEE 802.11 rate adaptation: a practical
//!   approach", ACM MSWiM 2004, §4: Adaptive ARF (AARF). As ARF, but a failed probe doubles the
//!   number of successes needed before the next probe (up to 50), so that a stable channel is
//!   not probed every 10 frames; the number is reset to 10 when the rate is decreased after two
//!   consecutive failures.
//!
//! # What tpsim does
//!
//! * **Outcomes.** Only unicast DATA attempts count: an Ack received is a success, an Ack
//!   timeout (or another frame received instead of the Ack) a failure. RTS/CTS exchanges go
//!   at the basic rate and say nothing about the data rate, so a CTS timeout is not reported
//!   (as in ns-3's `ArfWifiManager`). A retransmission uses the rate in force when it is sent,
//!   which may be lower than its first attempt's.
//! * **Rates.** The rate set is the PHY family's (802.11b: 1, 2, 5.5, 11 Mbit/s; 802.11a/g:
//!   6 … 54 Mbit/s, [`WifiRate::ALL`]). Every destination starts at
//!   [`DcfConfig::data_rate`](crate::DcfConfig::data_rate) and moves within the whole family.
//! * **Thresholds.** Success threshold 10 (ARF, and AARF's initial and reset value); AARF's
//!   doubling is capped at 50 ([`AARF_MAX_SUCCESS_THRESHOLD`]). Counts restart at every rate
//!   change: after a failed probe the failure count starts from zero, so two more failures are
//!   needed to go down again.
//! * **Simplifications.** Kamerman and Monteban's timer (probe after a while even without 10
//!   consecutive successes) is left out: a link that alternates successes and failures never
//!   climbs. The per-destination state is kept for the whole run (no ageing). Broadcast frames
//!   always use the configured data rate.

use tpsim_phy::{PhyStandard, WifiRate};

/// Consecutive successes before ARF moves up one rate (Kamerman & Monteban 1997), and AARF's
/// initial and reset value.
pub const ARF_SUCCESS_THRESHOLD: u32 = 10;
/// Consecutive failures before ARF and AARF move down one rate.
pub const ARF_FAILURE_THRESHOLD: u32 = 2;
/// Cap of AARF's doubled success threshold (Lacage et al. 2004).
pub const AARF_MAX_SUCCESS_THRESHOLD: u32 = 50;

/// The rate-control algorithm of a [`Dcf`](crate::Dcf)
/// ([`DcfConfig::rate_control`](crate::DcfConfig::rate_control)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RateControl {
    /// Every DATA frame at [`DcfConfig::data_rate`](crate::DcfConfig::data_rate). The default.
    #[default]
    Constant,
    /// Auto Rate Fallback (Kamerman & Monteban 1997), per destination.
    Arf,
    /// Adaptive ARF (Lacage, Manshaei & Turletti 2004), per destination.
    Aarf,
}

/// What a reported outcome did to the rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateChange {
    /// The rate stays.
    None,
    /// One rate up; the next transmission is a probe.
    Up,
    /// One rate down (a failed probe, or consecutive failures).
    Down,
}

/// The rates of a PHY family, slowest first.
pub fn rate_set(standard: PhyStandard) -> &'static [WifiRate] {
    match standard {
        PhyStandard::Dsss => &WifiRate::ALL[..4],
        PhyStandard::Ofdm => &WifiRate::ALL[4..],
    }
}

/// The ARF/AARF state of one destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateState {
    aarf: bool,
    rates: &'static [WifiRate],
    index: usize,
    successes: u32,
    failures: u32,
    /// The last change was a rise and no outcome at the new rate has been reported yet.
    probing: bool,
    success_threshold: u32,
}

impl RateState {
    /// A destination starting at `start`, adapted by `algo` (ARF unless `algo` is
    /// [`RateControl::Aarf`]; [`RateControl::Constant`] callers need no state).
    pub fn new(start: WifiRate, algo: RateControl) -> RateState {
        let rates = rate_set(start.standard());
        RateState {
            aarf: algo == RateControl::Aarf,
            rates,
            index: rates.iter().position(|&r| r == start).expect("rate in its own family"),
            successes: 0,
            failures: 0,
            probing: false,
            success_threshold: ARF_SUCCESS_THRESHOLD,
        }
    }

    /// The rate of the next DATA frame to this destination.
    #[inline]
    pub fn rate(&self) -> WifiRate {
        self.rates[self.index]
    }

    /// Consecutive successes needed to move up: 10 for ARF; 10, 20, 40, 50 for AARF.
    #[inline]
    pub fn success_threshold(&self) -> u32 {
        self.success_threshold
    }

    /// Consecutive successes at the current rate.
    #[inline]
    pub fn successes(&self) -> u32 {
        self.successes
    }

    /// Whether the next outcome is that of a probe (the first transmission after a rise).
    #[inline]
    pub fn probing(&self) -> bool {
        self.probing
    }

    /// A DATA frame was acknowledged.
    pub fn on_success(&mut self) -> RateChange {
        self.probing = false;
        self.failures = 0;
        self.successes = self.successes.saturating_add(1);
        if self.successes >= self.success_threshold && self.index + 1 < self.rates.len() {
            self.index += 1;
            self.successes = 0;
            self.probing = true;
            return RateChange::Up;
        }
        RateChange::None
    }

    /// A DATA frame was not acknowledged.
    pub fn on_failure(&mut self) -> RateChange {
        self.successes = 0;
        if self.probing {
            // The probe failed: straight back down; AARF waits twice as long next time.
            self.probing = false;
            self.failures = 0;
            self.index -= 1;
            if self.aarf {
                self.success_threshold = (2 * self.success_threshold).min(AARF_MAX_SUCCESS_THRESHOLD);
            }
            return RateChange::Down;
        }
        self.failures += 1;
        if self.failures < ARF_FAILURE_THRESHOLD {
            return RateChange::None;
        }
        self.failures = 0;
        if self.aarf {
            self.success_threshold = ARF_SUCCESS_THRESHOLD;
        }
        if self.index == 0 {
            return RateChange::None;
        }
        self.index -= 1;
        RateChange::Down
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn succeed(s: &mut RateState, n: u32) {
        for _ in 0..n {
            s.on_success();
        }
    }

    #[test]
    fn arf_climbs_after_ten_successes_and_stops_at_the_top() {
        let mut s = RateState::new(WifiRate::Dsss1, RateControl::Arf);
        succeed(&mut s, 9);
        assert_eq!(s.rate(), WifiRate::Dsss1);
        assert_eq!(s.on_success(), RateChange::Up);
        assert_eq!((s.rate(), s.probing()), (WifiRate::Dsss2, true));
        succeed(&mut s, 20);
        assert_eq!(s.rate(), WifiRate::Cck11);
        succeed(&mut s, 30);
        assert_eq!(s.rate(), WifiRate::Cck11);
        assert!(!s.probing());
    }

    #[test]
    fn arf_failed_probe_falls_back_and_two_failures_step_down() {
        let mut s = RateState::new(WifiRate::Ofdm24, RateControl::Arf);
        succeed(&mut s, 10);
        assert_eq!(s.rate(), WifiRate::Ofdm36);
        assert_eq!(s.on_failure(), RateChange::Down);
        assert_eq!(s.rate(), WifiRate::Ofdm24);
        assert_eq!(s.success_threshold(), 10, "ARF never changes its threshold");
        assert_eq!(s.on_failure(), RateChange::None);
        assert_eq!(s.on_failure(), RateChange::Down);
        assert_eq!(s.rate(), WifiRate::Ofdm18);
        // A success in between breaks the run of failures.
        s.on_failure();
        s.on_success();
        assert_eq!(s.on_failure(), RateChange::None);
        assert_eq!(s.rate(), WifiRate::Ofdm18);
        // At the bottom, failures change nothing.
        let mut s = RateState::new(WifiRate::Ofdm6, RateControl::Arf);
        assert_eq!((s.on_failure(), s.on_failure()), (RateChange::None, RateChange::None));
        assert_eq!(s.rate(), WifiRate::Ofdm6);
    }

    #[test]
    fn aarf_doubles_the_threshold_after_failed_probes_and_resets_it() {
        let mut s = RateState::new(WifiRate::Ofdm6, RateControl::Aarf);
        for threshold in [10, 20, 40, 50, 50] {
            assert_eq!(s.success_threshold(), threshold);
            succeed(&mut s, threshold - 1);
            assert_eq!(s.rate(), WifiRate::Ofdm6);
            assert_eq!(s.on_success(), RateChange::Up);
            assert_eq!(s.on_failure(), RateChange::Down, "probe fails");
        }
        assert_eq!(s.success_threshold(), 50);
        succeed(&mut s, 50);
        assert_eq!(s.rate(), WifiRate::Ofdm9);
        s.on_success(); // the probe succeeds: the threshold stays
        assert_eq!(s.success_threshold(), 50);
        s.on_failure();
        assert_eq!(s.on_failure(), RateChange::Down);
        assert_eq!((s.rate(), s.success_threshold()), (WifiRate::Ofdm6, 10));
    }

    #[test]
    fn rate_sets_are_the_families() {
        assert_eq!(
            rate_set(PhyStandard::Dsss),
            &[WifiRate::Dsss1, WifiRate::Dsss2, WifiRate::Cck5_5, WifiRate::Cck11]
        );
        assert_eq!(rate_set(PhyStandard::Ofdm).len(), 8);
        assert!(rate_set(PhyStandard::Ofdm)
            .iter()
            .all(|r| r.standard() == PhyStandard::Ofdm));
    }
}
