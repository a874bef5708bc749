//! Simulation time: integer nanoseconds since the start of the run.
//!
//! `u64` nanoseconds cover 584 years of simulated time, far beyond any scenario. Arithmetic
//! saturates at the top rather than wrapping, so a "never" deadline stays "never".

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// A time that never comes (used for "no deadline").
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start of the run.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start of the run, as `f64` (for reporting only).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// The time `secs` seconds after the start, rounded to the nearest nanosecond.
    /// Negative or NaN input gives zero.
    pub fn from_secs_f64(secs: f64) -> SimTime {
        SimTime(SimDuration::from_secs_f64(secs).0)
    }
    /// `self - earlier`, or zero if `earlier` is later.
    #[inline]
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A duration of `ns` nanoseconds.
    #[inline]
    pub const fn from_nanos(ns: u64) -> SimDuration {
        SimDuration(ns)
    }
    /// A duration of `us` microseconds.
    #[inline]
    pub const fn from_micros(us: u64) -> SimDuration {
        SimDuration(us * 1_000)
    }
    /// A duration of `ms` milliseconds.
    #[inline]
    pub const fn from_millis(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000)
    }
    /// A duration of `s` seconds.
    #[inline]
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * 1_000_000_000)
    }
    /// `secs` seconds rounded to the nearest nanosecond; negative or NaN input gives zero,
    /// values beyond `u64::MAX` ns saturate.
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(secs > 0.0)` also catches NaN
    pub fn from_secs_f64(secs: f64) -> SimDuration {
        if !(secs > 0.0) {
            return SimDuration(0);
        }
        let ns = libm::round(secs * 1e9);
        if ns >= u64::MAX as f64 {
            SimDuration(u64::MAX)
        } else {
            SimDuration(ns as u64)
        }
    }
    /// Nanoseconds.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as `f64` (for reporting only).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time to serialize `bits` at `rate_bps` bit/s, rounded up to a whole nanosecond
    /// (so that a link is never faster than its rate). `rate_bps` must be > 0.
    #[inline]
    pub fn serialization(bits: u64, rate_bps: u64) -> SimDuration {
        debug_assert!(rate_bps > 0);
        let num = bits as u128 * 1_000_000_000u128;
        let r = rate_bps as u128;
        SimDuration(num.div_ceil(r) as u64)
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later than `self`; use
    /// [`SimTime::saturating_since`] where that can happen.
    #[inline]
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(self.0 >= rhs.0, "time went backwards: {self} - {rhs}");
        SimDuration(self.0.wrapping_sub(rhs.0))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    #[inline]
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_is_exact_for_whole_nanoseconds() {
        // 128 B at 256 kbit/s = 4 ms exactly.
        assert_eq!(
            SimDuration::serialization(128 * 8, 256_000),
            SimDuration::from_millis(4)
        );
        // 1 bit at 3 bit/s = 333333333.33 ns, rounded up.
        assert_eq!(SimDuration::serialization(1, 3), SimDuration(333_333_334));
    }

    #[test]
    fn from_secs_rounds_and_clamps() {
        assert_eq!(SimDuration::from_secs_f64(0.02), SimDuration::from_millis(20));
        assert_eq!(SimDuration::from_secs_f64(-1.0), SimDuration::ZERO);
        assert_eq!(SimDuration::from_secs_f64(f64::NAN), SimDuration::ZERO);
        assert_eq!(SimTime::NEVER + SimDuration::from_secs(1), SimTime::NEVER);
    }

    #[test]
    fn display_is_seconds_with_nanoseconds() {
        assert_eq!(SimTime(1_500_000_000).to_string(), "1.500000000s");
    }
}
