//! Timers of [`TcpSocket`]: retransmission (RFC 6298), persist (RFC 1122 §4.2.2.17) and
//! the others in [`Timer`].

use super::*;

impl TcpSocket {
    // ------------------------------------------------------------------ timers

    /// Handles every timer due at `now`; safe to call early, late or repeatedly.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.expire_timers(now);
        if self.paced {
            self.refresh_pacing();
        }
    }

    fn expire_timers(&mut self, now: SimTime) {
        while let Some(t) = self.timers.pop_expired(now) {
            match t {
                Timer::Rto => self.on_rto(now),
                Timer::DelayedAck => {
                    if self.is_synchronized() {
                        self.ack_now = true;
                    }
                }
                Timer::Persist => self.on_persist(),
                // The paced sender may go on: `poll_transmit` sends what is due.
                Timer::Pacing => {}
                Timer::TimeWait => {
                    if self.state == State::TimeWait {
                        self.state = State::Closed;
                    }
                }
            }
        }
    }

    /// RFC 6298 §5 (5.4)–(5.6) and RFC 5681 §3.1 after a timeout.
    pub(super) fn on_rto(&mut self, now: SimTime) {
        if self.snd_una >= self.snd_max {
            return; // nothing outstanding: a stale timer
        }
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.tcp.syn_attempts.is_some_and(|n| self.syn_sent >= n) {
                    // RFC 9293 §3.8.3: R2 reached for the SYN; ns-3 closes without a reset.
                    self.give_up();
                    return;
                }
                self.syn_timed_out = true;
                self.retransmit_syn();
                self.rtt.backoff();
                self.syn_sent += 1;
                self.timers.set(Timer::Rto, now + self.syn_timeout());
                return;
            }
            State::Closed | State::Listen | State::TimeWait => return,
            _ => {}
        }
        if self.tcp.data_retries.is_some_and(|n| self.rtos_in_a_row >= n) {
            // RFC 9293 §3.8.3: R2 reached for a data segment (or FIN).
            self.give_up();
            return;
        }
        self.rtos_in_a_row += 1;
        self.tcp_stats.timeouts += 1;
        let smss = self.mss as u64;
        if self.last_rto_una != Some(self.snd_una) {
            // RFC 5681 §3.1: ssthresh from eq. (4) the first time a segment is retransmitted
            // by the timer; cwnd = LW (the controller returns both).
            let cx = self.cc_context();
            let w = self
                .cc
                .on_congestion_event(now, CongestionEvent::Timeout, self.window(), &cx);
            self.apply(w);
            // RFC 3168 §6.1.2: no second reduction for CE marks of the same window.
            self.ecn_recover = self.snd_max;
        } else {
            self.cwnd = smss;
        }
        self.last_rto_una = Some(self.snd_una);
        if self.recovery == LossRecovery::Sack {
            // RFC 6675 §5.1 / RFC 2018 §8: the receiver may have reneged: expunge the SACKed
            // marks (and end recovery); `recover` below is the new RecoveryPoint.
            self.sb.clear();
        }
        self.in_recovery = false;
        self.dup_acks = 0;
        self.rexmit_pending = false;
        // RFC 6582 §3.2 step 4: remember the highest offset sent, leave fast recovery.
        self.recover = self.snd_max;
        // RFC 6298 (5.4): retransmit the earliest unacknowledged segment; the rest follows in
        // slow start (go-back-N, as BSD and ns-2).
        self.snd_nxt = self.snd_una;
        self.rtt_timing = None; // Karn (RFC 6298 §3)
        self.after_timeout = true;
        self.rtt.backoff(); // (5.5)
        self.timers.set(Timer::Rto, now + self.rtt.rto()); // (5.6)
    }

    /// RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: the persist timer fired.
    pub(super) fn on_persist(&mut self) {
        if self.data_waiting() && !self.timers.is_set(Timer::Rto) {
            self.probe_pending = true;
            self.persist_backoffs = self.persist_backoffs.saturating_add(1);
        }
    }

    pub(super) fn persist_interval(&self) -> SimDuration {
        // The first probe after one RTO, then exponentially backed off (RFC 1122 §4.2.2.17),
        // capped like the RTO.
        let shift = self.persist_backoffs.min(20);
        SimDuration(self.rtt.rto().0.saturating_mul(1 << shift)).min(self.rtt.max_rto())
    }
}
