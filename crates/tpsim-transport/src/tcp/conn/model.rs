//! What the model-based controllers need from [`TcpSocket`]: the per-ACK [`AckEvent`] with
//! its delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), RTT samples, and
//! the pacing of data segments.

use super::super::cc::AckEvent;
use super::*;

impl TcpSocket {
    /// An RTT sample was taken from an ACK of data (the handshake's is the RTO's only, as in
    /// ns-3 and Linux): the controller hears of it at once.
    pub(super) fn rtt_sampled(&mut self, now: SimTime, rtt: SimDuration) {
        self.ack_rtt = Some(rtt);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.cc.on_rtt_sample(now, rtt);
    }

    /// Bytes in flight: RFC 6675's pipe in SACK recovery mode, else SND.NXT − SND.UNA (what
    /// a timeout left is counted lost).
    pub(super) fn in_flight(&self) -> u64 {
        self.in_flight_and_lost().0
    }

    /// [`Self::in_flight`] and the bytes deemed lost and not yet retransmitted (RFC 6675
    /// IsLost; 0 without SACK).
    fn in_flight_and_lost(&self) -> (u64, u64) {
        if self.recovery == LossRecovery::Sack {
            self.sb
                .pipe_and_lost(self.snd_una, self.snd_max, self.tcp.dupthresh, self.mss as u64)
        } else {
            (self.snd_nxt - self.snd_una, 0)
        }
    }

    /// RFC 9293 §3.10.7.4's ACK processing ([`Self::process_ack_fields`]), followed, for a
    /// controller that wants it, by its [`AckEvent`].
    pub(super) fn process_ack(
        &mut self,
        now: SimTime,
        h: &TcpRepr,
        s: u64,
        payload: u32,
        syn: bool,
        fin: bool,
    ) -> bool {
        if !self.ack_events {
            return self.process_ack_fields(now, h, s, payload, syn, fin);
        }
        let (prior_una, was_in_recovery, dups) = (self.snd_una, self.in_recovery, self.tcp_stats.dup_acks);
        let lost_before = if self.rate.is_some() {
            self.in_flight_and_lost().1
        } else {
            0
        };
        self.ack_rtt = None;
        if !self.process_ack_fields(now, h, s, payload, syn, fin) {
            return false;
        }
        if self.snd_una == prior_una && self.snd_max == self.snd_una && self.tcp_stats.dup_acks == dups {
            // Nothing of ours in flight and nothing acknowledged (the ACK field of the peer's
            // data in a one-way transfer): no event.
            return true;
        }
        let acked = self.snd_una.saturating_sub(prior_una);
        // In flight and losses only matter to a controller with rate samples (BBR); before
        // the ACK in flight was what is in flight now plus what the ACK delivered.
        let (in_flight, lost) = if self.rate.is_some() {
            self.in_flight_and_lost()
        } else {
            (0, 0)
        };
        let newly_lost = lost.saturating_sub(lost_before);
        let (newly_delivered, delivered, rate) = match &mut self.rate {
            Some(r) => {
                let before = r.delivered();
                if self.sack_ok {
                    for &(l, e) in h.sack.as_slice() {
                        if let (Some(l), Some(e)) = (self.snd.offset(l, self.snd_una), self.snd.offset(e, self.snd_una))
                        {
                            r.on_sacked(now, l, e);
                        }
                    }
                }
                r.on_cumulative_ack(now, self.snd_una);
                r.on_lost(newly_lost);
                let rs = r.sample(self.min_rtt);
                (r.delivered() - before, r.delivered(), rs)
            }
            None => (acked, 0, None),
        };
        let ev = AckEvent {
            acked,
            newly_delivered,
            delivered,
            duplicate: self.tcp_stats.dup_acks > dups,
            rtt: self.ack_rtt,
            rate,
            prior_in_flight: in_flight + newly_delivered,
            in_flight,
            newly_lost,
            in_recovery: self.in_recovery,
            loss: self.in_recovery && !was_in_recovery,
        };
        let cx = self.cc_context();
        if let Some(w) = self.cc.on_ack_event(now, &ev, self.window(), &cx) {
            self.apply(w);
        }
        true
    }

    /// The rate data is paced at, bytes/s: the controller's (BBR), else with
    /// [`TcpConfig::pacing`] Linux's rule; `None` for a sender that does not pace.
    pub fn pacing_rate(&self) -> Option<f64> {
        if !self.paced {
            return None;
        }
        let cx = self.cc_context();
        if let Some(r) = self.cc.pacing_rate(self.window(), &cx) {
            return Some(r);
        }
        if !self.tcp.pacing {
            return None;
        }
        let srtt = self.rtt.srtt()?.as_secs_f64().max(1e-6);
        let window = self.cwnd.max(self.snd_max - self.snd_una) as f64;
        // Linux tcp_update_pacing_rate: 200 % in slow start below half ssthresh, else 120 %.
        let ratio = if self.cwnd < self.ssthresh / 2 { 2.0 } else { 1.2 };
        Some(ratio * window / srtt)
    }

    /// BBR's state and estimates, if the connection runs BBR (v1 or v3).
    pub fn bbr(&self) -> Option<super::super::cc::BbrModel> {
        self.cc.bbr()
    }

    /// Whether pacing holds data back at `now`; if so the pacing timer is armed. The sender
    /// may run ahead of its schedule by one send quantum less a segment (a quantum leaves
    /// back to back).
    pub(super) fn pacing_wait(&mut self, now: SimTime) -> bool {
        if !self.paced || now + self.pacing_slack >= self.next_send {
            return false;
        }
        self.timers.set(
            Timer::Pacing,
            SimTime(self.next_send.0.saturating_sub(self.pacing_slack.0)),
        );
        true
    }

    /// Takes the pacing rate as it stands (after an ACK or a timer): the time per byte, and
    /// the slack of one send quantum less a segment at that rate (BBR draft §4.2.2).
    pub(super) fn refresh_pacing(&mut self) {
        match self.pacing_rate().filter(|&r| r > 0.0) {
            Some(rate) => {
                self.pacing_ns_per_byte = 1e9 / rate;
                let mss = self.mss as u64;
                let ahead = super::super::bbr::send_quantum(rate, mss).saturating_sub(mss);
                self.pacing_slack = SimDuration((ahead as f64 * self.pacing_ns_per_byte) as u64);
            }
            None => {
                self.pacing_ns_per_byte = 0.0;
                self.pacing_slack = SimDuration::ZERO;
            }
        }
    }

    /// A data segment of `len` bytes leaves at `now`: the schedule moves `len / rate` on.
    pub(super) fn pace(&mut self, now: SimTime, len: u32) {
        if self.pacing_ns_per_byte == 0.0 {
            // The first data since the handshake (ACKs refresh the rate from then on).
            self.refresh_pacing();
        }
        let gap = SimDuration((len as f64 * self.pacing_ns_per_byte) as u64);
        self.next_send = self.next_send.max(now) + gap;
    }

    /// Records the transmission of `[seq, end)` for the delivery-rate samples.
    pub(super) fn record_send(&mut self, now: SimTime, seq: u64, end: u64) {
        if self.rate.is_none() {
            return;
        }
        // What is in the network (RFC 6675's pipe with SACK): SACKed and lost data are not.
        let in_flight = self.in_flight();
        if let Some(r) = &mut self.rate {
            r.on_send(now, seq, end, in_flight);
        }
    }

    /// Nothing was sent: with less than a segment of data waiting and room in the window, the
    /// delivery-rate samples of what is in flight are application-limited (draft §3.3).
    pub(super) fn note_app_limited(&mut self) {
        // Not before our first data (a one-way flow's receiver never has any).
        if self.rate.is_none() || self.snd_max <= 1 || self.data_end().saturating_sub(self.snd_max) >= self.mss as u64 {
            return;
        }
        let in_flight = self.in_flight();
        if in_flight < self.cwnd {
            if let Some(r) = &mut self.rate {
                r.on_app_limited(in_flight);
            }
        }
    }
}
