//! Outputs of [`TcpSocket`]: the send path (new data, retransmissions, SACK-based
//! transmission per RFC 6675, window probes) and segment construction.

use super::*;

impl TcpSocket {
    // ------------------------------------------------------------------ outputs

    /// The next segment to send, if any. Call until it returns `None`.
    ///
    /// Data segments carry [`StreamData`] (`message` is always `None`); `first_tx` is simply
    /// `now`, since TCP does not track messages: the engine derives each message's first
    /// transmission from the stream offsets.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        match self.state {
            State::Closed => {
                let repr = self.rst_pending.take()?;
                self.stats.tx_segments += 1;
                return Some(Segment {
                    addr: None,
                    header: L4Header::Tcp(repr),
                    payload_len: 0,
                    ip_len: self.cfg.sizes.tcp_ip_len(0, repr.header_len()),
                    message: None,
                    first_tx: now,
                    stream: None,
                    ecn: tpsim_wire::Ecn::NotEct,
                });
            }
            State::Listen => return None,
            State::SynSent | State::SynReceived => {
                // Our SYN (or SYN-ACK), first or again.
                return (self.snd_nxt == 0).then(|| self.emit(now, 0, 0, false, Emit::Normal));
            }
            _ => {}
        }
        // Pacing holds data back (retransmissions too, as Linux's fq does); ACKs still go.
        if self.pacing_wait(now) {
            return self
                .ack_now
                .then(|| self.emit(now, self.snd_nxt, 0, false, Emit::Normal));
        }
        if std::mem::take(&mut self.rexmit_pending) && self.snd_una < self.snd_max {
            if self.sack_recovery() {
                // RFC 6675 (4.3): HighACK + 1, up to the first SACKed octet; HighRxt =
                // RescueRxt = its last octet.
                let limit = self.sb.sacked().next().map_or(self.snd_max, |(s, _)| s);
                let (len, fin) = self.rxt_segment(self.snd_una, limit);
                let end = self.snd_una + len as u64 + fin as u64;
                self.sb.high_rxt = end;
                self.sb.rescue_rxt = Some(end);
                return Some(self.emit(now, self.snd_una, len, fin, Emit::Retransmit));
            }
            let (len, fin) = self.segment_at(self.snd_una);
            return Some(self.emit(now, self.snd_una, len, fin, Emit::Retransmit));
        }
        if std::mem::take(&mut self.probe_pending) {
            if let Some(seg) = self.send_probe(now) {
                return Some(seg);
            }
        }
        if self.sack_recovery() {
            if let Some(seg) = self.sack_transmit(now) {
                return Some(seg);
            }
        } else if let Some(seg) = self.send_data(now) {
            return Some(seg);
        }
        if self.ack_now {
            return Some(self.emit(now, self.snd_nxt, 0, false, Emit::Normal));
        }
        self.note_app_limited();
        self.update_persist(now);
        None
    }

    /// New data (or a go-back-N resend) as the windows, Nagle and SWS avoidance allow, or
    /// the FIN.
    pub(super) fn send_data(&mut self, now: SimTime) -> Option<Segment> {
        if !self.can_send_data_state() {
            return None;
        }
        let data_end = self.data_end();
        // RFC 6675 §5.1: resending after a timeout, skip what the receiver SACKed since (the
        // marks from before the timeout were expunged).
        let mut sacked_limit = u64::MAX;
        if self.recovery == LossRecovery::Sack && self.snd_nxt < self.snd_max {
            if let Some((_, e)) = self.sb.sacked_range_at(self.snd_nxt) {
                self.snd_nxt = e.min(self.snd_max);
            }
            let nxt = self.snd_nxt;
            if let Some((s, _)) = self.sb.sacked().find(|&(s, _)| s > nxt) {
                sacked_limit = s - nxt;
            }
        }
        if self.snd_nxt < data_end {
            let mss = self.mss as u64;
            if self.tcp.restart_after_idle && self.snd_una == self.snd_max {
                // RFC 5681 §4.1: idle for more than an RTO: restart from RW = min(IW, cwnd).
                if self
                    .last_data_tx
                    .is_some_and(|t| now.saturating_since(t) > self.rtt.rto())
                {
                    self.cwnd = self.cwnd.min(self.initial_window());
                }
            }
            let mut in_flight = self.snd_nxt - self.snd_una;
            if self.recovery == LossRecovery::Sack && self.snd_nxt < self.snd_max {
                // Resending after a timeout: what the receiver SACKed is not in flight.
                let (una, nxt) = (self.snd_una, self.snd_nxt);
                in_flight -= self
                    .sb
                    .sacked()
                    .map(|(s, e)| e.min(nxt).saturating_sub(s.max(una)))
                    .sum::<u64>();
            }
            let usable = self.cwnd.min(self.snd_wnd).saturating_sub(in_flight);
            let avail = data_end - self.snd_nxt;
            let len = mss.min(avail).min(usable).min(sacked_limit);
            if len == 0 {
                return None;
            }
            // Nagle (RFC 9293 §3.7.4): with data unacknowledged, hold back a short segment.
            let nagle_ok = !self.tcp.nagle || self.snd_una == self.snd_max;
            let send = if self.snd_nxt < self.snd_max || len == mss {
                // Full segments, and anything resent after a timeout (as BSD does: neither
                // Nagle nor SWS avoidance holds back a retransmission).
                true
            } else if len == avail {
                nagle_ok
            } else {
                // A short segment although more data is queued: only if the peer's window is
                // what limits it and it is at least half the largest window ever offered
                // (sender SWS avoidance, RFC 9293 §3.8.6.2.1); the persist timer covers the rest.
                let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
                nagle_ok && len == rwnd_room && len >= self.max_snd_wnd / 2
            };
            if !send {
                return None;
            }
            let fin = self.closing && self.snd_nxt + len == data_end;
            self.timers.stop(Timer::Persist);
            self.persist_backoffs = 0;
            return Some(self.emit(now, self.snd_nxt, len as u32, fin, Emit::Normal));
        }
        if self.closing && self.snd_nxt == data_end {
            // A FIN alone. It is not held back by cwnd or rwnd: a zero-window peer drops it and
            // the retransmission timer sends it again.
            return Some(self.emit(now, data_end, 0, true, Emit::Normal));
        }
        None
    }

    /// What the persist timer asked for: with an open window that was too small to use, the
    /// sender SWS "override" (RFC 9293 §3.8.6.2.1) sends what fits; with a zero window, one
    /// octet beyond it (RFC 9293 §3.8.6.1), which does not advance `snd_nxt`.
    pub(super) fn send_probe(&mut self, now: SimTime) -> Option<Segment> {
        if !self.data_waiting() || self.timers.is_set(Timer::Rto) {
            return None;
        }
        let data_end = self.data_end();
        let room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        if room > 0 {
            let len = room.min(data_end - self.snd_nxt).min(self.mss as u64);
            let fin = self.closing && self.snd_nxt + len == data_end;
            self.timers.stop(Timer::Persist);
            self.persist_backoffs = 0;
            return Some(self.emit(now, self.snd_nxt, len as u32, fin, Emit::Normal));
        }
        self.tcp_stats.window_probes += 1;
        let seg = self.emit(now, self.snd_nxt, 1, false, Emit::Probe);
        self.timers.set(Timer::Persist, now + self.persist_interval());
        Some(seg)
    }

    /// Called when nothing could be sent. Starts the persist timer when data waits and no
    /// retransmission timer runs (RFC 9293 §3.8.6.1); stops it when no data waits.
    ///
    /// A zero window with data still unacknowledged (a reordered old ACK can leave a stale zero
    /// window behind) would let the retransmission timer fire forever without sending: as in
    /// BSD, the persist timer takes over, and its probes resend from `snd_una`.
    pub(super) fn update_persist(&mut self, now: SimTime) {
        if !self.data_waiting() {
            self.timers.stop(Timer::Persist);
            self.persist_backoffs = 0;
            return;
        }
        if self.snd_wnd == 0 && self.timers.is_set(Timer::Rto) {
            self.timers.stop(Timer::Rto);
            self.snd_nxt = self.snd_una;
        }
        if !self.timers.is_set(Timer::Rto) && !self.timers.is_set(Timer::Persist) {
            self.timers.set(Timer::Persist, now + self.persist_interval());
        }
    }

    /// Payload length and FIN of a retransmission starting at `seq`, within what was sent.
    pub(super) fn segment_at(&self, seq: u64) -> (u32, bool) {
        let data_end = self.data_end();
        let len = (self.mss as u64)
            .min(data_end.saturating_sub(seq))
            .min(self.snd_max - seq);
        let fin = self.closing && seq + len == data_end && self.snd_max > data_end;
        (len as u32, fin)
    }

    /// Payload length and FIN of a retransmission starting at `seq` that ends by `limit` (the
    /// end of a hole of the scoreboard).
    pub(super) fn rxt_segment(&self, seq: u64, limit: u64) -> (u32, bool) {
        let data_end = self.data_end();
        let len = (self.mss as u64)
            .min(data_end.saturating_sub(seq))
            .min(limit.saturating_sub(seq))
            .min(self.snd_max.saturating_sub(seq));
        let fin = self.closing && seq + len == data_end && limit > data_end && self.snd_max > data_end;
        (len as u32, fin)
    }

    /// RFC 6675 §5 step (C), in loss recovery: while cwnd − pipe >= 1 SMSS, send what
    /// NextSeg() (§4) chooses.
    pub(super) fn sack_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let smss = self.mss as u64;
        let dupthresh = self.tcp.dupthresh;
        let pipe = self.sb.pipe(self.snd_una, self.snd_max, dupthresh, smss);
        if self.cwnd < pipe + smss {
            return None;
        }
        let data_end = self.data_end();
        // Rule (2)'s "available unsent data ... the receiver's advertised window allows".
        let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_max);
        let new_len = smss.min(data_end.saturating_sub(self.snd_max)).min(rwnd_room);
        let fin_only = self.closing && self.snd_max == data_end;
        let new_data = self.snd_nxt == self.snd_max && (new_len > 0 || fin_only) && self.can_send_data_state();
        match self
            .sb
            .next_seg(self.snd_una, self.snd_max, dupthresh, smss, new_data)?
        {
            NextSeg::Lost(s, e) | NextSeg::NotLost(s, e) => {
                let (len, fin) = self.rxt_segment(s, e);
                if len == 0 && !fin {
                    return None;
                }
                // (C.2) HighRxt = the highest octet retransmitted.
                self.sb.high_rxt = self.sb.high_rxt.max(s + len as u64 + fin as u64);
                Some(self.emit(now, s, len, fin, Emit::Retransmit))
            }
            NextSeg::NewData => {
                // (C.3): HighData grows (emit moves snd_max).
                if new_len > 0 {
                    let fin = self.closing && self.snd_max + new_len == data_end;
                    Some(self.emit(now, self.snd_max, new_len as u32, fin, Emit::Normal))
                } else {
                    Some(self.emit(now, data_end, 0, true, Emit::Normal))
                }
            }
            NextSeg::Rescue(s, e) => {
                let (len, fin) = self.rxt_segment(s, e);
                if len == 0 && !fin {
                    return None;
                }
                // Rule (4): RescueRxt = RecoveryPoint; HighRxt is not updated.
                self.sb.rescue_rxt = Some(self.recover);
                Some(self.emit(now, s, len, fin, Emit::Retransmit))
            }
        }
    }

    /// Builds the segment `[seq, seq + len)` (+FIN), updates the send state and counters.
    pub(super) fn emit(&mut self, now: SimTime, seq: u64, len: u32, fin: bool, kind: Emit) -> Segment {
        let syn = seq == 0 && matches!(self.state, State::SynSent | State::SynReceived);
        let mut flags = TcpFlags::NONE;
        if syn {
            flags = flags | TcpFlags::SYN;
        }
        if self.state != State::SynSent {
            flags = flags | TcpFlags::ACK;
        }
        if fin {
            flags = flags | TcpFlags::FIN;
        }
        if len > 0 && seq + len as u64 == self.data_end() {
            flags = flags | TcpFlags::PSH;
        }
        let seg_len = len as u64 + syn as u64 + fin as u64;
        let end = seq + seg_len;
        let retransmission = seg_len > 0 && seq < self.snd_max;
        // RFC 3168 §6.1: ECE and CWR offer ECN on our SYN, ECE accepts it on the SYN-ACK;
        // afterwards ECE echoes a CE mark until the peer's CWR (§6.1.3), and the first new data
        // segment after a reduction carries CWR (§6.1.2). Only new data is ECN-capable: not
        // pure ACKs (§6.1.4), retransmissions (§6.1.5) or window probes (§6.1.6).
        let new_data = len > 0 && !retransmission && kind != Emit::Probe;
        if syn && self.tcp.ecn && self.state == State::SynSent {
            flags = flags | TcpFlags::ECE | TcpFlags::CWR;
        } else if (syn && self.ecn_ok) || (!syn && self.ece_pending && flags.contains(TcpFlags::ACK)) {
            flags = flags | TcpFlags::ECE;
        }
        if self.cwr_pending && new_data {
            flags = flags | TcpFlags::CWR;
            self.cwr_pending = false;
        }
        let ecn = if self.ecn_ok && new_data {
            tpsim_wire::Ecn::Ect0
        } else {
            tpsim_wire::Ecn::NotEct
        };
        // A pure ACK carries snd_max, or snd_nxt while probing a zero window (BSD), so that it
        // stays inside the peer's window.
        let wire_seq = if seg_len > 0 {
            seq
        } else if self.timers.is_set(Timer::Persist) {
            self.snd_nxt
        } else {
            self.snd_max
        };
        // RFC 7323 §2.2/§2.3: a SYN's window is never scaled; later ones are once both SYNs
        // carried the option.
        let (adv, window_field) = self.window_to_send(syn);
        // RFC 7323 §3.2: offered on our SYN when configured, on the SYN-ACK only if the SYN
        // offered it, on every other segment once both did. TSecr is 0 on a SYN.
        let timestamp = if self.ts_enabled || (syn && self.state == State::SynSent && self.tcp.timestamps) {
            Some(TcpTimestamp {
                tsval: ts_clock(now),
                tsecr: if flags.contains(TcpFlags::ACK) {
                    self.ts_recent
                } else {
                    0
                },
            })
        } else {
            None
        };
        // RFC 2018 §2 / RFC 7323 §2.2: SACK-permitted and Window Scale on our SYN when
        // configured, on the SYN-ACK only if the SYN carried them.
        let (sack_permitted, window_scale) = match (syn, self.state) {
            (true, State::SynSent) => (self.offers_sack(), self.tcp.window_scaling.then_some(self.rcv_shift)),
            (true, _) => (self.sack_ok, self.wscale_ok.then_some(self.rcv_shift)),
            _ => (false, None),
        };
        let mut repr = TcpRepr {
            src_port: self.cfg.local_port,
            dst_port: self.cfg.remote_port,
            seq: self.snd.wire(wire_seq),
            ack: if flags.contains(TcpFlags::ACK) {
                self.rcv.wire(self.rcv_nxt)
            } else {
                0
            },
            flags,
            window: window_field,
            mss: syn.then_some(self.own_mss as u16),
            sack_permitted,
            timestamp,
            window_scale,
            sack: SackBlocks::NONE,
        };
        if !syn && self.sack_ok && flags.contains(TcpFlags::ACK) {
            repr.sack = self.sack_blocks(len, repr.header_len());
        }
        self.stats.tx_segments += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        if seg_len == 0 {
            self.stats.ack_segments += 1;
        } else {
            if retransmission {
                // Karn (RFC 6298 §3): no sample from an ACK that a retransmission may have
                // caused; the timing in progress is abandoned.
                self.rtt_timing = None;
            } else if self.rtt_timing.is_none() && kind != Emit::Probe && !self.ts_enabled {
                self.rtt_timing = Some((end, now));
            }
            if len > 0 && kind != Emit::Probe {
                // Before SND.MAX moves: an empty pipe restarts the delivery-rate clocks.
                self.record_send(now, seq, seq + len as u64);
                if self.paced {
                    self.pace(now, len);
                }
            }
            self.snd_max = self.snd_max.max(end);
            if kind != Emit::Probe {
                self.snd_nxt = self.snd_nxt.max(end);
                // RFC 6298 (5.1): start the timer if it is not running.
                if !self.timers.is_set(Timer::Rto) {
                    let rto = if syn { self.syn_timeout() } else { self.rtt.rto() };
                    self.timers.set(Timer::Rto, now + rto);
                }
            }
            if len > 0 {
                self.last_data_tx = Some(now);
                self.cc.on_sent(now, len as u64);
                let sent = (self.snd_max - 1).min(self.app_end);
                while self.msg_ends.front().is_some_and(|&e| e <= sent) {
                    self.msg_ends.pop_front();
                }
            }
        }
        if flags.contains(TcpFlags::ACK) {
            // Every segment carries the ACK: piggybacking satisfies any pending ACK.
            self.ack_now = false;
            self.unacked_bytes = 0;
            self.unacked_segments = 0;
            self.timers.stop(Timer::DelayedAck);
            self.last_adv_edge = self.rcv_nxt + adv;
            self.last_ack_sent = self.rcv_nxt; // RFC 7323 §4.3 (1)
            self.sack_hist.dsack = None; // RFC 2883 §4 (2): reported at most once
        }
        Segment {
            addr: None,
            header: L4Header::Tcp(repr),
            payload_len: len,
            ip_len: self.cfg.sizes.tcp_ip_len(len, repr.header_len()),
            message: None,
            first_tx: now,
            stream: (len > 0).then(|| StreamData {
                offset: seq - 1,
                len,
                retransmission,
            }),
            ecn,
        }
    }

    /// The next event for the application: `Connected`, `DeliveredBytes` (coalesced: only the
    /// latest count is kept between polls), `Closed`.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// The earliest running timer's deadline.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.next()
    }
}
