//! Network input of [`TcpSocket`]: RFC 9293 §3.10.7 ("SEGMENT ARRIVES"), the ACK
//! processing, loss detection by duplicate ACKs and SACK, and the receive path.

use super::*;

impl TcpSocket {
    // ------------------------------------------------------------------ network input

    /// Processes a segment from the network, following RFC 9293 §3.10.7 ("SEGMENT ARRIVES").
    /// Segments of other protocols are counted and ignored.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        let L4Header::Tcp(h) = seg.header else { return };
        if h.flags.contains(TcpFlags::ACK) && !matches!(self.state, State::Closed | State::Listen) {
            self.stats.acks_received += 1;
        }
        if self.ecn_ok {
            // RFC 3168 §6.1.3: ECE on every ACK from a CE-marked data segment on, until a CWR
            // arrives (a CWR segment that is itself marked starts a new echo).
            if h.flags.contains(TcpFlags::CWR) {
                self.ece_pending = false;
            }
            if seg.ecn == tpsim_wire::Ecn::Ce && seg.payload_len > 0 {
                self.ece_pending = true;
            }
        }
        match self.state {
            State::Closed => self.on_closed(&h, seg.payload_len),
            State::Listen => self.on_listen(&h),
            State::SynSent => self.on_syn_sent(now, &h),
            _ => self.on_other(now, &h, seg.payload_len),
        }
        if self.paced && self.snd_max > 1 {
            self.refresh_pacing();
        }
    }

    /// RFC 9293 §3.10.7.1: CLOSED. Anything but a RST is answered with a RST, so that a peer
    /// still retransmitting after our TIME-WAIT ended learns that the connection is gone.
    pub(super) fn on_closed(&mut self, h: &TcpRepr, payload: u32) {
        if h.flags.contains(TcpFlags::RST) {
            return;
        }
        let (seq, ack, flags) = if h.flags.contains(TcpFlags::ACK) {
            (h.ack, 0, TcpFlags::RST) // <SEQ=SEG.ACK><CTL=RST>
        } else {
            // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
            (
                0,
                h.seq.wrapping_add(h.segment_len(payload)),
                TcpFlags::RST | TcpFlags::ACK,
            )
        };
        self.rst_pending = Some(TcpRepr {
            src_port: self.cfg.local_port,
            dst_port: self.cfg.remote_port,
            seq,
            ack,
            flags,
            window: 0,
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: tpsim_wire::tcp::SackBlocks::NONE,
        });
    }

    /// RFC 9293 §3.10.7.2: LISTEN. RSTs and ACKs are dropped (no RST is generated); a SYN moves
    /// to SYN-RECEIVED and the SYN-ACK goes out of the next `poll_transmit`.
    pub(super) fn on_listen(&mut self, h: &TcpRepr) {
        if h.flags.contains(TcpFlags::RST) || h.flags.contains(TcpFlags::ACK) || !h.flags.contains(TcpFlags::SYN) {
            return;
        }
        self.rcv = SeqSpace { isn: h.seq };
        self.rcv_nxt = 1;
        self.peer_syn(h);
        self.snd_wl1 = 0;
        self.snd_wl2 = 0;
        self.state = State::SynReceived;
        self.syn_sent = 1; // the SYN-ACK goes out next
    }

    /// RFC 9293 §3.10.7.3: SYN-SENT.
    pub(super) fn on_syn_sent(&mut self, now: SimTime, h: &TcpRepr) {
        let has_ack = h.flags.contains(TcpFlags::ACK);
        // "If SEG.ACK =< ISS or SEG.ACK > SND.NXT": unacceptable (we send no RST).
        let ack_ok = has_ack && self.snd.offset(h.ack, 0) == Some(1);
        if has_ack && !ack_ok {
            return;
        }
        if h.flags.contains(TcpFlags::RST) {
            if ack_ok {
                self.enter_closed();
            }
            return;
        }
        if !h.flags.contains(TcpFlags::SYN) || !ack_ok {
            // A SYN without ACK would be a simultaneous open: not supported.
            return;
        }
        self.rcv = SeqSpace { isn: h.seq };
        self.rcv_nxt = 1;
        self.peer_syn(h);
        self.snd_una = 1;
        self.snd_wl1 = 0;
        self.snd_wl2 = 1;
        self.take_rtt_sample(now, 1, h);
        // RFC 6298 (5.2): everything outstanding is acknowledged.
        self.timers.stop(Timer::Rto);
        self.connected();
        // RFC 9293 §3.10.7.3: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, or piggybacked on data.
        self.ack_now = true;
    }

    /// RFC 9293 §3.10.7.4: SYN-RECEIVED and the synchronized states.
    pub(super) fn on_other(&mut self, now: SimTime, h: &TcpRepr, payload: u32) {
        let syn = h.flags.contains(TcpFlags::SYN);
        let fin = h.flags.contains(TcpFlags::FIN);
        let rst = h.flags.contains(TcpFlags::RST);
        let has_ack = h.flags.contains(TcpFlags::ACK);
        if self.state == State::SynReceived && syn && !has_ack && self.rcv.offset(h.seq, 0) == Some(0) {
            // The peer retransmitted its SYN, so our SYN-ACK was probably lost: send it again
            // now (as BSD and Linux do; RFC 9293 would only answer with an ACK).
            self.retransmit_syn();
            return;
        }
        let seg_len = payload as u64 + syn as u64 + fin as u64;
        let seq = self.rcv.offset(h.seq, self.rcv_nxt);
        let wnd = self.rcv_wnd();

        // First: the sequence-number check (RFC 9293 §3.10.7.4, the four-case table). For a
        // zero-length segment the right edge is inclusive, as in Linux, so that a pure ACK sent
        // at the edge of a full window is not refused.
        let acceptable = seq.is_some_and(|s| {
            let (lo, hi) = (self.rcv_nxt, self.rcv_nxt + wnd);
            if seg_len == 0 {
                lo <= s && s <= hi
            } else {
                wnd > 0 && ((lo <= s && s < hi) || (lo < s + seg_len && s + seg_len <= hi))
            }
        });
        if !acceptable {
            if let Some(s) = seq {
                if seg_len > 0 && s + seg_len <= self.rcv_nxt {
                    self.tcp_stats.duplicate_segments += 1;
                    if payload > 0 && self.dsack_on() {
                        // RFC 2883 §4: report the duplicate in the first block of the ACK.
                        self.sack_hist.dsack = Some(((s, s + payload as u64), None));
                    }
                }
            }
            if rst {
                return;
            }
            // "If an incoming segment is not acceptable, an acknowledgment should be sent."
            self.ack_now = true;
            if self.state == State::TimeWait && fin {
                // TIME-WAIT: a retransmitted FIN is acknowledged and restarts the 2·MSL timeout.
                self.timers.set(Timer::TimeWait, now + self.time_wait());
            }
            // "If the RCV.WND is zero, no segments will be acceptable, but special allowance
            // should be made to accept valid ACKs."
            if wnd == 0 && seq == Some(self.rcv_nxt) && has_ack && self.state != State::SynReceived {
                self.process_ack(now, h, self.rcv_nxt, payload, syn, fin);
            }
            return;
        }
        let s = seq.expect("acceptable implies a sequence number");
        // Second: RST (RFC 5961's stricter check is not implemented).
        if rst {
            self.enter_closed();
            return;
        }
        self.update_ts_recent(h, s);
        // Fourth: a SYN in the window. RFC 9293 asks for a challenge ACK (RFC 5961 §4); we ACK
        // and drop the segment.
        if syn {
            self.ack_now = true;
            return;
        }
        // Fifth: the ACK field.
        if !has_ack {
            return;
        }
        if self.state == State::SynReceived {
            if self.snd.offset(h.ack, 0) != Some(1) {
                return; // unacceptable ACK of our SYN (RFC: send a reset)
            }
            self.snd_una = 1;
            let window = self.peer_window(h);
            self.set_send_window(window, s, 1);
            self.last_ack_window = window;
            self.take_rtt_sample(now, 1, h);
            self.timers.stop(Timer::Rto);
            self.connected();
        } else if !self.process_ack(now, h, s, payload, syn, fin) {
            return;
        }
        // Seventh and eighth: segment text and FIN, in the states that still receive.
        if matches!(self.state, State::Established | State::FinWait1 | State::FinWait2) && (payload > 0 || fin) {
            self.process_data(now, s, payload, fin);
        }
    }

    /// RFC 9293 §3.10.7.4 "fifth, check the ACK field" for the synchronized states. Returns
    /// false if the rest of the segment must be dropped.
    pub(super) fn process_ack_fields(
        &mut self,
        now: SimTime,
        h: &TcpRepr,
        s: u64,
        payload: u32,
        syn: bool,
        fin: bool,
    ) -> bool {
        let Some(a) = self.snd.offset(h.ack, self.snd_una) else {
            return true; // from before our ISN: an ancient duplicate, ignore its ACK
        };
        if a > self.snd_max {
            // "If the ACK acks something not yet sent ... send an ACK, drop the segment."
            self.ack_now = true;
            return false;
        }
        // RFC 7323 §2.3: SND.WND = SEG.WND << Snd.Wind.Shift.
        let window = self.peer_window(h);
        if a >= self.snd_una {
            // RFC 9293 §3.10.7.4: update the send window only from newer segments.
            if self.snd_wl1 < s || (self.snd_wl1 == s && self.snd_wl2 <= a) {
                self.set_send_window(window, s, a);
            }
        }
        if a < self.snd_una {
            return true; // an old ACK: ignored
        }
        // RFC 3168 §6.1.2: an ECE halves the window as a loss would, at most once per window
        // of data (an ACK beyond snd_max at the last reduction), not during loss recovery
        // (which already reduced it), and the ACK does not grow the window too.
        let ece = self.ecn_ok && h.flags.contains(TcpFlags::ECE) && !syn && !self.in_recovery && a > self.ecn_recover;
        if ece {
            let cx = self.cc_context();
            let w = self
                .cc
                .on_congestion_event(now, CongestionEvent::Ece, self.window(), &cx);
            self.apply(w);
            self.ecn_recover = self.snd_max;
            self.cwr_pending = true;
            self.tcp_stats.ecn_reductions += 1;
        }
        let last_window = std::mem::replace(&mut self.last_ack_window, window);
        if self.recovery == LossRecovery::Sack {
            // RFC 6675 §5: Update() with every ACK's SACK blocks; a duplicate ACK is one that
            // SACKs octets not SACKed before (§2), whatever else it does.
            let blocks = h
                .sack
                .as_slice()
                .iter()
                .filter_map(|&(l, r)| Some((self.snd.offset(l, self.snd_una)?, self.snd.offset(r, self.snd_una)?)));
            let blocks: SackBlocksOff = blocks.collect();
            let new_sack = self.sb.update(blocks, self.snd_una, self.snd_max);
            if a > self.snd_una {
                self.on_new_ack(now, a, h, ece);
            }
            if new_sack && !self.in_recovery && self.snd_una < self.snd_max {
                self.on_sack_dup_ack(now);
            }
            return true;
        }
        if a == self.snd_una {
            // RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT: (a) data outstanding, (b) no data, (c) no
            // SYN/FIN, (d) ACK = snd_una, (e) same window as the last ACK. Like BSD we also
            // require the retransmission timer to run, which leaves out ACKs of zero-window
            // probes (the persist timer runs instead).
            let dup = self.snd_max > self.snd_una
                && payload == 0
                && !syn
                && !fin
                && window == last_window
                && self.timers.is_set(Timer::Rto);
            if dup {
                self.on_dup_ack(now);
            }
            return true;
        }
        self.on_new_ack(now, a, h, ece);
        true
    }

    pub(super) fn set_send_window(&mut self, window: u64, wl1: u64, wl2: u64) {
        self.snd_wnd = window;
        self.snd_wl1 = wl1;
        self.snd_wl2 = wl2;
        self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
    }

    /// An ACK of new data (`a > snd_una`); `ece`: its ECE just reduced the window.
    pub(super) fn on_new_ack(&mut self, now: SimTime, a: u64, h: &TcpRepr, ece: bool) {
        let acked = a - self.snd_una;
        let smss = self.mss as u64;
        self.rtos_in_a_row = 0;
        self.take_rtt_sample(now, a, h);
        self.snd_una = a;
        if self.snd_nxt < a {
            self.snd_nxt = a;
        }
        if self.recovery == LossRecovery::Sack {
            self.sb.advance(a);
        }
        if self.in_recovery && self.recovery == LossRecovery::Sack {
            // RFC 6675 §5: a cumulative ACK resets DupAcks; (A) one beyond RecoveryPoint ends
            // recovery (cwnd stays what (4.2) set); (B) otherwise the scoreboard and pipe say
            // what to send next (poll_transmit). No window growth during recovery.
            self.dup_acks = 0;
            if a >= self.recover {
                self.in_recovery = false;
            } else {
                self.tcp_stats.partial_acks += 1;
            }
        } else if self.in_recovery {
            if self.recovery == LossRecovery::NewReno && a < self.recover {
                // RFC 6582 §3.2 step 3, partial ACK: retransmit the first unacknowledged
                // segment, deflate cwnd by the amount acknowledged, add back one SMSS if at least
                // one SMSS was acknowledged, stay in fast recovery.
                self.tcp_stats.partial_acks += 1;
                self.rexmit_pending = true;
                let add_back = if acked >= smss { smss } else { 0 };
                self.cwnd = (self.cwnd.saturating_sub(acked) + add_back).max(smss);
                if self.partial_acks_in_recovery == 0 {
                    // RFC 6582 §3.2 step 3: reset the retransmit timer on the first partial ACK
                    // only (the "Impatient" variant, RFC 3782 §4).
                    self.timers.set(Timer::Rto, now + self.rtt.rto());
                }
                self.partial_acks_in_recovery += 1;
                return;
            }
            // A full ACK (NewReno) or any new ACK (Reno): fast recovery ends.
            self.in_recovery = false;
            self.dup_acks = 0;
            self.cwnd = match self.recovery {
                // RFC 6582 §3.2 step 3, full ACK, option (1): min(ssthresh, max(FlightSize,
                // SMSS) + SMSS), which avoids a burst when little is outstanding.
                LossRecovery::NewReno => {
                    let flight = self.snd_max - self.snd_una;
                    self.recovery_cwnd.min(flight.max(smss) + smss)
                }
                // RFC 5681 §3.2 step 6: cwnd = ssthresh ("deflating" the window).
                LossRecovery::Reno | LossRecovery::Tahoe | LossRecovery::Sack => self.recovery_cwnd,
            }
            .max(smss);
        } else if ece {
            // RFC 3168 §6.1.2: the window was just reduced for this ACK's ECE.
            self.dup_acks = 0;
        } else {
            self.dup_acks = 0;
            // RFC 5681 §3.1: slow start or congestion avoidance, as the controller decides.
            let cx = self.cc_context();
            let w = self.cc.on_ack(now, acked, self.window(), &cx);
            self.apply(w);
            if self.cwnd >= self.ssthresh {
                self.after_timeout = false;
            }
        }
        // RFC 6298 (5.2) and (5.3).
        if self.snd_una == self.snd_max {
            self.timers.stop(Timer::Rto);
        } else {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
        // Our FIN acknowledged (RFC 9293 §3.10.7.4, FIN-WAIT-1 / CLOSING / LAST-ACK).
        if self.closing && a > self.data_end() {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => self.enter_closed(),
                _ => {}
            }
        }
    }

    /// A duplicate ACK (RFC 5681 §3.2, RFC 6582 §3.2).
    pub(super) fn on_dup_ack(&mut self, now: SimTime) {
        self.dup_acks += 1;
        self.tcp_stats.dup_acks += 1;
        let smss = self.mss as u64;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4: each further duplicate ACK inflates cwnd by one SMSS.
            self.cwnd += smss;
            return;
        }
        if self.dup_acks != self.tcp.dupthresh {
            return;
        }
        // RFC 6582 §3.2 step 2: enter fast retransmit only if the cumulative ACK covers more
        // than `recover`; otherwise these duplicates are echoes of a window already being
        // recovered. Applied to Tahoe and Reno as well, as ns-2's default `bug_fix_` does.
        if self.snd_una <= self.recover {
            return;
        }
        self.tcp_stats.fast_retransmits += 1;
        let cx = self.cc_context();
        let w = self
            .cc
            .on_congestion_event(now, CongestionEvent::DupAcks, self.window(), &cx);
        // RFC 5681 §3.2 step 2: ssthresh (eq. 4, or the controller's choice).
        self.ssthresh = w.ssthresh;
        self.recover = self.snd_max;
        // RFC 3168 §6.1.2: one reduction for the drops and CE marks of one window.
        self.ecn_recover = self.snd_max;
        self.rtt_timing = None; // Karn (RFC 6298 §3)
        match self.recovery {
            LossRecovery::Tahoe => {
                // No fast recovery: the loss window and slow start from the lost segment.
                self.cwnd = smss;
                self.snd_nxt = self.snd_una;
            }
            LossRecovery::Reno | LossRecovery::NewReno | LossRecovery::Sack => {
                // RFC 5681 §3.2 step 3: retransmit, cwnd = ssthresh + 3·SMSS.
                self.recovery_cwnd = w.cwnd;
                self.cwnd = self.ssthresh + self.tcp.dupthresh as u64 * smss;
                self.in_recovery = true;
                self.partial_acks_in_recovery = 0;
                self.rexmit_pending = true;
            }
        }
        // The retransmission restarts the timer, as BSD and ns-2 do.
        self.timers.set(Timer::Rto, now + self.rtt.rto());
    }

    /// A duplicate ACK in RFC 6675's sense (§2: it SACKed new octets), outside recovery: §5
    /// steps (1), (2) and (4).
    pub(super) fn on_sack_dup_ack(&mut self, now: SimTime) {
        self.dup_acks += 1;
        self.tcp_stats.dup_acks += 1;
        let smss = self.mss as u64;
        // (1) DupAcks >= DupThresh, or (2) IsLost(HighACK + 1): enter recovery.
        if self.dup_acks < self.tcp.dupthresh && !self.sb.is_lost(self.snd_una, self.tcp.dupthresh, smss) {
            return;
        }
        // §5.1: after a timeout, no new recovery until HighACK >= RecoveryPoint (here `recover`
        // is RecoveryPoint + 1 and `snd_una` HighACK + 1).
        if self.snd_una < self.recover {
            return;
        }
        self.tcp_stats.fast_retransmits += 1;
        // (4.1) RecoveryPoint = HighData.
        self.recover = self.snd_max;
        // RFC 3168 §6.1.2: one reduction for the drops and CE marks of one window.
        self.ecn_recover = self.snd_max;
        // (4.2) ssthresh = cwnd = FlightSize / 2 (RFC 5681 eq. (4)), or the controller's values.
        let cx = self.cc_context();
        let w = self
            .cc
            .on_congestion_event(now, CongestionEvent::DupAcks, self.window(), &cx);
        self.ssthresh = w.ssthresh;
        self.cwnd = w.cwnd.max(smss);
        self.in_recovery = true;
        self.rtt_timing = None; // Karn (RFC 6298 §3)
                                // (4.3) Retransmit HighACK + 1 (poll_transmit sets HighRxt and RescueRxt).
        self.sb.high_rxt = 0;
        self.sb.rescue_rxt = None;
        self.rexmit_pending = true;
        // The retransmission restarts the timer, as for NewReno.
        self.timers.set(Timer::Rto, now + self.rtt.rto());
    }

    /// RFC 9293 §3.10.7.4 "seventh, process the segment text" and "eighth, check the FIN bit".
    pub(super) fn process_data(&mut self, now: SimTime, s: u64, payload: u32, fin: bool) {
        let wnd_end = self.rcv_nxt + self.rcv_wnd();
        let seg_end = s + payload as u64;
        let start = s.max(self.rcv_nxt);
        let end = seg_end.min(wnd_end);
        let had_holes = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        if self.dsack_on() && s < self.rcv_nxt && end > start {
            // RFC 2883 §4: the part below RCV.NXT is a duplicate.
            self.sack_hist.dsack = Some(((s, self.rcv_nxt), None));
        }
        if end > start {
            if start == self.rcv_nxt {
                self.rcv_nxt = self.ooo.advance(end);
            } else {
                if self.dsack_on() {
                    // RFC 2883 §4: a segment wholly inside queued data is a duplicate; the
                    // second block reports the queued block it lies in.
                    if let Some(r) = self.ooo.range_containing(start).filter(|r| r.1 >= end) {
                        self.sack_hist.dsack = Some(((start, end), Some(r)));
                    }
                }
                if self.sack_ok {
                    // RFC 2018 §4: this segment's block goes first in the ACK.
                    self.sack_hist.received(start);
                }
                // RFC 5681 §4.2: an out-of-order segment is acknowledged at once (a duplicate
                // ACK); its data waits for reassembly.
                self.ooo.insert(start, end);
                self.tcp_stats.out_of_order_segments += 1;
                self.ack_now = true;
            }
        } else if payload > 0 {
            self.tcp_stats.duplicate_segments += 1;
            self.ack_now = true;
            if self.dsack_on() && seg_end <= self.rcv_nxt {
                self.sack_hist.dsack = Some(((s, seg_end), None));
            }
        }
        // A FIN counts only if all the data before it fitted in the window.
        if fin && seg_end <= wnd_end && self.rcv_fin.is_none() {
            self.rcv_fin = Some(seg_end);
        }
        if self.rcv_nxt > before {
            if had_holes {
                // RFC 5681 §4.2: a segment that fills (part of) a gap is acknowledged at once.
                self.ack_now = true;
            } else {
                self.unacked_bytes += self.rcv_nxt - before;
                self.unacked_segments = self.unacked_segments.saturating_add(1);
                match self.tcp.delayed_ack {
                    None => self.ack_now = true,
                    // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: at least every second full-sized
                    // segment (or every n-th segment of any size, as ns-3 counts), and
                    // within the delay of the first unacknowledged one.
                    Some(delay) => {
                        let due = match self.tcp.delayed_ack_segments {
                            None => self.unacked_bytes >= 2 * self.mss as u64,
                            Some(n) => self.unacked_segments >= n,
                        };
                        if due {
                            self.ack_now = true;
                        } else if !self.timers.is_set(Timer::DelayedAck) {
                            self.timers.set(Timer::DelayedAck, now + delay);
                        }
                    }
                }
            }
            self.deliver();
        }
        if !self.fin_received && self.rcv_fin == Some(self.rcv_nxt) {
            self.on_fin(now);
        }
    }

    /// The peer's FIN is next in sequence (RFC 9293 §3.10.7.4 "eighth").
    pub(super) fn on_fin(&mut self, now: SimTime) {
        self.rcv_nxt += 1;
        self.fin_received = true;
        self.ack_now = true;
        match self.state {
            State::Established => {
                self.state = State::CloseWait;
                if self.tcp.close_on_peer_fin {
                    self.close(now);
                }
            }
            // Our FIN is not acknowledged yet (else we would be in FIN-WAIT-2).
            State::FinWait1 => self.state = State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }
}
