//! OLSR parameters (RFC 3626 §18) and the willingness values (§18.8).

use tpsim_core::SimDuration;

use super::message::MAX_ENCODABLE_TIME;

/// Willingness of a node that never forwards on behalf of others (RFC 3626 §18.8).
pub const WILL_NEVER: u8 = 0;
/// Low willingness (RFC 3626 §18.8).
pub const WILL_LOW: u8 = 1;
/// Default willingness (RFC 3626 §18.8).
pub const WILL_DEFAULT: u8 = 3;
/// High willingness (RFC 3626 §18.8).
pub const WILL_HIGH: u8 = 6;
/// Willingness of a node that is always selected as MPR by its neighbours (RFC 3626 §18.8).
pub const WILL_ALWAYS: u8 = 7;

/// The parameters of one OLSR node. [`OlsrConfig::rfc`] gives the values of RFC 3626 §18.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OlsrConfig {
    /// HELLO_INTERVAL (§18.2): nominal time between two HELLO messages; default 2 s.
    pub hello_interval: SimDuration,
    /// REFRESH_INTERVAL (§18.2): every neighbour must be advertised at least this often. Every
    /// HELLO lists all link tuples, so this only has to be ≥ `hello_interval`; default 2 s.
    pub refresh_interval: SimDuration,
    /// TC_INTERVAL (§18.2): nominal time between two TC messages; default 5 s.
    pub tc_interval: SimDuration,
    /// NEIGHB_HOLD_TIME (§18.3): validity time (Vtime) of our HELLOs; default 3 × REFRESH = 6 s.
    pub neighb_hold_time: SimDuration,
    /// TOP_HOLD_TIME (§18.3): validity time of our TCs; default 3 × TC_INTERVAL = 15 s.
    pub top_hold_time: SimDuration,
    /// DUP_HOLD_TIME (§18.3): how long a duplicate tuple is kept; default 30 s.
    pub dup_hold_time: SimDuration,
    /// MAXJITTER (§18.2 / RFC 5148 §5): jitter bound. Periodic messages are sent every
    /// interval − U(0, MAXJITTER) (RFC 3626 §3.5); the first HELLO and TC at U(0, MAXJITTER)
    /// after time zero; forwarded messages wait U(0, MAXJITTER) (RFC 5148 §5.2). Default
    /// HELLO_INTERVAL / 4 = 0.5 s. Zero disables all jitter.
    pub max_jitter: SimDuration,
    /// This node's willingness to forward for others (§18.8), carried in its HELLOs:
    /// [`WILL_NEVER`] (0) … [`WILL_ALWAYS`] (7); default [`WILL_DEFAULT`] (3).
    pub willingness: u8,
    /// TC_REDUNDANCY (§15.1): 0 advertises the MPR selectors (the default), 1 the MPR
    /// selectors and the MPR set, 2 all symmetric neighbours.
    pub tc_redundancy: u8,
    /// MPR_COVERAGE (§16.1): every strict 2-hop neighbour is covered by at least this many MPRs
    /// (or by all its willing neighbours if it has fewer); default 1.
    pub mpr_coverage: u32,
}

impl Default for OlsrConfig {
    fn default() -> Self {
        Self::rfc()
    }
}

impl OlsrConfig {
    /// The constants of RFC 3626 §18.
    pub fn rfc() -> Self {
        let hello_interval = SimDuration::from_secs(2);
        let refresh_interval = SimDuration::from_secs(2);
        let tc_interval = SimDuration::from_secs(5);
        OlsrConfig {
            hello_interval,
            refresh_interval,
            tc_interval,
            // §18.3: NEIGHB_HOLD_TIME = 3 × REFRESH_INTERVAL, TOP_HOLD_TIME = 3 × TC_INTERVAL.
            neighb_hold_time: SimDuration(3 * refresh_interval.0),
            top_hold_time: SimDuration(3 * tc_interval.0),
            dup_hold_time: SimDuration::from_secs(30),
            // §18.2: MAXJITTER = HELLO_INTERVAL / 4.
            max_jitter: SimDuration(hello_interval.0 / 4),
            willingness: WILL_DEFAULT,
            tc_redundancy: 0,
            mpr_coverage: 1,
        }
    }

    /// Checks that the parameters make sense together: non-zero intervals, a jitter smaller
    /// than both emission intervals (so that interval − jitter stays positive), REFRESH ≥ HELLO
    /// interval, hold times longer than the interval they cover and encodable in a Vtime
    /// (§18.3, at most about 3968 s), willingness ≤ 7, TC_REDUNDANCY ≤ 2, MPR_COVERAGE ≥ 1.
    pub fn validate(&self) -> Result<(), String> {
        let z = SimDuration::ZERO;
        if self.hello_interval == z || self.tc_interval == z || self.refresh_interval == z {
            return Err("OLSR: HELLO, REFRESH and TC intervals must be positive".into());
        }
        if self.max_jitter >= self.hello_interval || self.max_jitter >= self.tc_interval {
            return Err(format!(
                "OLSR: max_jitter {} must be smaller than the HELLO and TC intervals",
                self.max_jitter
            ));
        }
        if self.refresh_interval < self.hello_interval {
            return Err("OLSR: refresh_interval must be at least hello_interval (every HELLO lists all links)".into());
        }
        if self.neighb_hold_time <= self.hello_interval {
            return Err("OLSR: neighb_hold_time must exceed hello_interval".into());
        }
        if self.top_hold_time <= self.tc_interval {
            return Err("OLSR: top_hold_time must exceed tc_interval".into());
        }
        if self.dup_hold_time == z {
            return Err("OLSR: dup_hold_time must be positive".into());
        }
        for (name, d) in [
            ("neighb_hold_time", self.neighb_hold_time),
            ("top_hold_time", self.top_hold_time),
            ("hello_interval", self.hello_interval),
        ] {
            if d > MAX_ENCODABLE_TIME {
                return Err(format!(
                    "OLSR: {name} {d} exceeds the largest Vtime/Htime (RFC 3626 §18.3)"
                ));
            }
        }
        if self.willingness > WILL_ALWAYS {
            return Err(format!("OLSR: willingness {} is not in 0..=7", self.willingness));
        }
        if self.tc_redundancy > 2 {
            return Err(format!("OLSR: tc_redundancy {} is not 0, 1 or 2", self.tc_redundancy));
        }
        if self.mpr_coverage == 0 {
            return Err("OLSR: mpr_coverage must be at least 1".into());
        }
        Ok(())
    }
}
