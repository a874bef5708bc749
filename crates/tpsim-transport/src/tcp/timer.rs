//! The connection's timers: one deadline per kind, in a small table indexed by [`Timer`].
//!
//! A stopped timer is `None`. The connection's next deadline is the minimum of the table
//! ([`TimerTable::next`]); the engine calls `on_timeout` then, and an early or repeated call
//! finds nothing expired and does nothing.

use tpsim_core::SimTime;

/// The timers of a TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// Retransmission timer (RFC 6298 §5), also guarding the SYN and the FIN.
    Rto = 0,
    /// Delayed-ACK timer (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
    DelayedAck = 1,
    /// Persist timer: zero-window probes (RFC 9293 §3.8.6.1).
    Persist = 2,
    /// TIME-WAIT, 2·MSL (RFC 9293 §3.6).
    TimeWait = 3,
    /// Pacing: the next data segment may leave at this time.
    Pacing = 4,
}

impl Timer {
    /// Every timer, in the order expiries are handled when several fall due together.
    pub const ALL: [Timer; 5] = [
        Timer::Rto,
        Timer::DelayedAck,
        Timer::Persist,
        Timer::TimeWait,
        Timer::Pacing,
    ];
}

/// Deadlines indexed by [`Timer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerTable([Option<SimTime>; 5]);

impl TimerTable {
    /// Arms (or re-arms) `t` to expire at `at`.
    #[inline]
    pub fn set(&mut self, t: Timer, at: SimTime) {
        self.0[t as usize] = Some(at);
    }
    /// Stops `t`.
    #[inline]
    pub fn stop(&mut self, t: Timer) {
        self.0[t as usize] = None;
    }
    /// The deadline of `t`, if running.
    #[inline]
    pub fn get(&self, t: Timer) -> Option<SimTime> {
        self.0[t as usize]
    }
    /// Whether `t` is running.
    #[inline]
    pub fn is_set(&self, t: Timer) -> bool {
        self.0[t as usize].is_some()
    }
    /// The earliest deadline of all running timers.
    #[inline]
    pub fn next(&self) -> Option<SimTime> {
        self.0.iter().flatten().min().copied()
    }
    /// Stops and returns the first timer (in [`Timer::ALL`] order) due at `now`.
    pub fn pop_expired(&mut self, now: SimTime) -> Option<Timer> {
        let t = Timer::ALL
            .into_iter()
            .find(|&t| self.get(t).is_some_and(|at| at <= now))?;
        self.stop(t);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_the_minimum_and_expiry_pops_in_order() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::Persist, SimTime(30));
        t.set(Timer::Rto, SimTime(50));
        t.set(Timer::DelayedAck, SimTime(30));
        assert_eq!(t.next(), Some(SimTime(30)));
        assert_eq!(t.pop_expired(SimTime(29)), None);
        assert_eq!(t.pop_expired(SimTime(40)), Some(Timer::DelayedAck));
        assert_eq!(t.pop_expired(SimTime(40)), Some(Timer::Persist));
        assert_eq!(t.pop_expired(SimTime(40)), None);
        assert_eq!(t.next(), Some(SimTime(50)));
    }
}
