//! The data sender (RFC 9260 §6.1, §6.3.3, §6.10, §7.2): packet assembly and bundling up to the
//! path MTU, the rules A–D of §6.1 (rwnd and zero-window probe, cwnd, retransmissions first,
//! Max.Burst), fast retransmit's packet, T3-rtx expiry and back-off, one packet in flight after
//! a timeout, idle decay, ns-2's send rule.

use super::{tsn_lt, SctpSocket, Sent};
use crate::sctp::{SctpBox, State};
use crate::{L4Header, Segment};
use tpsim_core::SimTime;
use tpsim_wire::sctp::{
    pad4, ControlChunk, DataChunk, DataFlags, SctpRepr, DATA_CHUNK_HEADER_LEN, MAX_DUP_TSNS, MAX_GAP_BLOCKS,
    SACK_CHUNK_LEN, SCTP_COMMON_HEADER_LEN,
};
use tpsim_wire::IPV4_HEADER_LEN;

impl SctpSocket {
    /// RFC 9260 §6.3.3: T3-rtx expired. With PR-SCTP it also guards a FORWARD TSN (RFC 3758
    /// §3.5 C5), sent again now (A5), and chunks due under their policy are abandoned rather
    /// than marked.
    pub(super) fn on_t3(&mut self, now: SimTime, pi: usize) {
        let data_out = self.sent.iter().any(|x| x.path == pi && !x.gap_acked && !x.abandoned);
        let fwd_owed = self.pr && tsn_lt(self.cum_ack_point, self.adv_ack_point);
        if !data_out && !fwd_owed {
            return;
        }
        if self.state == State::CookieEchoed {
            return; // T1-cookie guards DATA bundled with the COOKIE ECHO
        }
        self.sstats.timeouts += 1;
        if self.count_error(now, pi, true) {
            return;
        }
        let unit = self.cwnd_unit();
        let p = &mut self.paths[pi];
        // E1: ssthresh = max(cwnd/2, 4·PMDCS), cwnd = PMDCS (§7.2.3); Fast Recovery ends.
        p.on_congestion(true, unit);
        p.fast_recovery_exit = None;
        // E2: back off the RTO.
        p.rtt.back_off();
        // §7.2.1: one packet in flight until acknowledged.
        p.one_packet_after_timeout = true;
        // E3: every outstanding chunk of this path is marked; the earliest that fit one packet
        // go out at once (flight size is now 0 < cwnd), the rest as cwnd allows.
        self.mark_all_for_retransmission(pi);
        self.paths[pi].rtt_timed = None;
        if self.pr {
            self.abandon_marked_due(now);
        }
        // §6.4: a multi-homed peer: the chunks that timed out go to another active address.
        if let Some(alt) = self.alternate_for(pi) {
            for x in self.sent.iter_mut().filter(|x| x.path == pi && x.marked) {
                x.path = alt;
            }
        }
        if self.pr {
            self.forward_tsn_rules(now, false);
        }
    }

    pub(super) fn mark_all_for_retransmission(&mut self, pi: usize) {
        let headers = self.sctp.flight_counts_headers;
        let mut freed = 0u64;
        for x in self
            .sent
            .iter_mut()
            .filter(|x| x.path == pi && !x.gap_acked && !x.abandoned)
        {
            if x.in_flight {
                x.in_flight = false;
                self.paths[pi].flight_size -= x.chunk.len as u64 + if headers { 16 } else { 0 };
            }
            if !x.marked {
                x.marked = true;
                self.n_marked += 1;
                // §6.2.1 D: the marked chunk's size returns to rwnd.
                freed += x.chunk.len as u64;
            }
        }
        self.rwnd += freed;
    }

    /// RFC 9260 §7.2.1: cwnd decay of idle paths, applied lazily.
    #[inline(always)]
    pub(super) fn apply_idle_decay(&mut self, now: SimTime) {
        // Only a path that sent DATA and has nothing in flight can decay (`Path::idle_decay`):
        // while data flows, nothing to compute.
        if self
            .paths
            .iter()
            .any(|p| p.last_data_tx.is_some() && p.flight_size == 0)
        {
            self.decay_idle_paths(now);
        }
    }

    fn decay_idle_paths(&mut self, now: SimTime) {
        let unit = self.cwnd_unit();
        let above = self.sctp.idle_decay_above_units.map(|k| k as u64 * unit);
        for p in &mut self.paths {
            p.idle_decay(now, unit, above);
        }
    }

    // ------------------------------------------------------------------ output

    /// Starts a send opportunity (an input event): Max.Burst counts from here (RFC 9260 §6.1 D).
    pub(super) fn begin_input(&mut self) {
        self.burst = 0;
        if self.ns2_used {
            self.ns2_flag = false;
            self.ns2_used = false;
        }
    }

    /// The next packet to send, if any.
    #[inline]
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if self.new_data_only() {
            return self.build_new_data_packet(now);
        }
        if self.sack_only() {
            return Some(self.build_sack_packet(now));
        }
        // Nothing to send (the common last call): no packet is built.
        if self.nothing_to_send() {
            return None;
        }
        self.build_packet(now)
    }

    /// Whether the next packet is surely one of new DATA (with a delayed SACK riding on it if
    /// one is pending) to the only path, built as [`build_packet`](Self::build_packet) would
    /// build it but without its other cases: a single-homed association without PR-SCTP or
    /// ns-2's send rule, established, with no control chunk queued, no SACK due at once, nothing
    /// marked for retransmission, and new data that §6.1 B and D (cwnd, Max.Burst) let go.
    #[inline]
    fn new_data_only(&self) -> bool {
        self.paths.len() == 1
            && !self.unsent.is_empty()
            && self.sctp.max_burst.is_none_or(|b| self.burst < b)
            && self.window_open(0)
            && self.ctrl.is_empty()
            && !self.sack_now
            && self.n_marked == 0
            && !self.fast_rtx_now
            && !self.pr
            && !self.sctp.ns2_send_rule
            && self.may_send_data()
    }

    /// Whether the next packet is surely a SACK alone to the only path, built as
    /// [`build_packet`](Self::build_packet) would build it: a single-homed association with a
    /// SACK due now, no control chunk queued, and no DATA waiting (none new, none marked, no
    /// Fast Retransmit due).
    #[inline]
    fn sack_only(&self) -> bool {
        self.sack_now
            && self.paths.len() == 1
            && self.unsent.is_empty()
            && self.ctrl.is_empty()
            && self.n_marked == 0
            && !self.fast_rtx_now
            && self.recv.is_some()
            && self.paths[0].confirmed
    }

    /// [`build_packet`](Self::build_packet) when [`sack_only`](Self::sack_only) holds.
    fn build_sack_packet(&mut self, now: SimTime) -> Segment {
        let mut boxed = SctpBox::empty(self.cfg.local_port, self.cfg.remote_port, self.peer_tag);
        let p: &mut SctpRepr = &mut boxed;
        let sack = self.make_sack();
        let ip_len = IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN + sack.chunk_len();
        p.sack = Some(sack);
        self.stats.ack_segments += 1;
        debug_assert_eq!((ip_len, 0), self.lens(p));
        self.segment(boxed, 0, 0, ip_len, now)
    }

    /// [`build_packet`](Self::build_packet) when [`new_data_only`](Self::new_data_only) holds:
    /// new DATA to path 0 (the data path of a single-homed association), within rwnd (§6.1 A),
    /// with a pending delayed SACK bundled (§6.2) and room kept for it.
    fn build_new_data_packet(&mut self, now: SimTime) -> Option<Segment> {
        let mut boxed = SctpBox::empty(self.cfg.local_port, self.cfg.remote_port, self.peer_tag);
        let p: &mut SctpRepr = &mut boxed;
        let mut room = self.cfg.mtu.saturating_sub(IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN);
        // One path: it is the data path (`choose_data_path` moves it only among several).
        debug_assert_eq!(self.data_path, 0);
        // §5.4: nothing but HEARTBEATs goes to an unconfirmed address.
        let sack = self.sack_pending && self.recv.is_some() && self.paths[0].confirmed;
        if sack {
            // A delayed SACK rides on outgoing DATA (§6.2): keep room for the largest one.
            room = room.saturating_sub(SACK_CHUNK_LEN + 4 * (MAX_GAP_BLOCKS + MAX_DUP_TSNS) as u32);
        }
        // `new_data_only` checked what `fill_new_data` checks before adding chunks.
        self.add_new_data(now, p, room);
        if p.data.is_empty() {
            return None;
        }
        if sack {
            p.sack = Some(self.make_sack());
        }
        self.stats.tx_segments += 1;
        // `lens` without a control chunk: the header, the SACK and the padded DATA chunks under
        // either size convention.
        let (payload_len, data_len) = p.data_lens();
        let ip_len = IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN + p.sack.as_ref().map_or(0, |s| s.chunk_len()) + data_len;
        debug_assert_eq!((ip_len, payload_len), self.lens(p));
        self.paths[0].data_bytes_sent += payload_len as u64;
        Some(self.segment(boxed, 0, payload_len, ip_len, now))
    }

    /// The segment of packet `boxed` (`payload_len` user bytes, `ip_len` on the wire) to path
    /// `pi`'s address. A packet may carry pieces of several messages: they travel in the
    /// chunks, not in `message`.
    #[inline]
    fn segment(&self, boxed: SctpBox, pi: usize, payload_len: u32, ip_len: u32, now: SimTime) -> Segment {
        Segment {
            addr: self.paths[pi].addr,
            header: L4Header::Sctp(boxed),
            payload_len,
            ip_len,
            message: None,
            first_tx: now,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        }
    }

    /// Whether [`build_packet`](Self::build_packet) would surely find nothing to send.
    #[inline]
    fn nothing_to_send(&self) -> bool {
        if !self.ctrl.is_empty() || self.sack_now && self.recv.is_some() {
            return false;
        }
        if !self.may_send_data() {
            return true;
        }
        let burst_left = self.sctp.max_burst.is_none_or(|b| self.burst < b);
        let rtx_waiting = self.has_marked() && (self.fast_rtx_now || self.window_open(self.rtx_path()));
        let new_waiting = !self.unsent.is_empty() && burst_left && self.window_open(self.data_path);
        !(rtx_waiting || new_waiting && !self.marked_on(self.data_path))
    }

    /// §6.1 B: whether path `pi` may take DATA now: its flight size below cwnd (one packet may
    /// exceed it), and after a timeout only one packet in flight until acknowledged (§7.2.1).
    #[inline]
    fn window_open(&self, pi: usize) -> bool {
        let path = &self.paths[pi];
        path.flight_size < path.cwnd && !(path.one_packet_after_timeout && path.flight_size > 0)
    }

    /// The path of the first chunk marked for retransmission (retransmissions go first, §6.1 C).
    #[inline]
    fn rtx_path(&self) -> usize {
        if self.paths.len() == 1 {
            return 0;
        }
        self.sent.iter().find(|x| x.marked).map_or(self.data_path, |x| x.path)
    }

    /// Whether chunks marked for retransmission wait for path `pi`: new DATA to `pi` waits
    /// behind them (§6.1 C). Chunks marked for another destination, whose cwnd holds them
    /// back, do not stop new DATA to `pi` within its own cwnd: §6.1 C limits the
    /// retransmissions by the current cwnd, and each destination has its own (§7.2).
    #[inline]
    fn marked_on(&self, pi: usize) -> bool {
        self.has_marked() && (self.paths.len() == 1 || self.sent.iter().any(|x| x.marked && x.path == pi))
    }

    /// Where a packet without a control chunk goes: a SACK that must go now to its reply
    /// address, else retransmissions to their path if its cwnd allows (or Fast Retransmit is
    /// due), else new DATA to the data path.
    #[inline]
    fn packet_dest(&self) -> usize {
        if self.paths.len() == 1 {
            return 0;
        }
        if self.sack_now && self.recv.is_some() {
            self.sack_dest()
        } else if self.has_marked() && (self.fast_rtx_now || self.window_open(self.rtx_path())) {
            self.rtx_path()
        } else {
            self.data_path
        }
    }

    /// Assembles the next packet: a control chunk, a SACK, DATA chunks (RFC 9260 §6.10).
    fn build_packet(&mut self, now: SimTime) -> Option<Segment> {
        // The packet is assembled in place in its box (a reused one: no allocation, no copy).
        let mut boxed = SctpBox::empty(self.cfg.local_port, self.cfg.remote_port, self.peer_tag);
        let p: &mut SctpRepr = &mut boxed;
        // Bytes of chunks that fit the MTU (RFC 9260 §6.10: packets no larger than the PMTU).
        let mut room = self.cfg.mtu.saturating_sub(IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN);
        let mut alone = false;
        let mut dest = None;
        if let Some(c) = self.ctrl.pop_front() {
            dest = Some(c.path);
            p.verification_tag = c.tag;
            p.control = Some(c.chunk);
            if let ControlChunk::ForwardTsn(_) = c.chunk {
                self.sstats.forward_tsns += 1;
            }
            room = room.saturating_sub(pad4(c.chunk.chunk_len()));
            // INIT, INIT ACK, SHUTDOWN COMPLETE travel alone (§6.10); so do ABORTs and answers
            // to out-of-the-blue packets (tags other than the peer's).
            alone = c.chunk.must_be_alone()
                || matches!(c.chunk, ControlChunk::Abort { .. })
                || c.tag != self.peer_tag
                || !self.has_tcb();
        }
        if !alone {
            // RFC 9260 §5.1 D: DATA may ride with the first COOKIE ECHO, none after it until
            // the COOKIE ACK.
            let first_echo = matches!(p.control, Some(ControlChunk::CookieEcho(_)))
                && self.init_retransmits == 0
                && self.sent.is_empty();
            let data_ok = self.may_send_data() || first_echo;
            let d = *dest.get_or_insert_with(|| self.packet_dest());
            // §5.4: nothing but HEARTBEATs goes to an unconfirmed address.
            let sack_ok = self.recv.is_some() && self.paths[d].confirmed;
            if self.sack_now && sack_ok {
                let s = self.make_sack();
                room = room.saturating_sub(s.chunk_len());
                p.sack = Some(s);
            } else if self.sack_pending && data_ok && sack_ok {
                // A delayed SACK rides on outgoing DATA (§6.2): keep room for the largest one.
                room = room.saturating_sub(SACK_CHUNK_LEN + 4 * (MAX_GAP_BLOCKS + MAX_DUP_TSNS) as u32);
            }
            if data_ok {
                self.fill_data(now, p, room, d);
            }
            if p.sack.is_none() && self.sack_pending && sack_ok && !p.data.is_empty() {
                p.sack = Some(self.make_sack());
            }
        }
        if self.pr && p.control.is_none() && !self.ctrl.is_empty() {
            // Data abandoned while this packet was assembled queued a FORWARD TSN or SHUTDOWN
            // (RFC 3758 §3.5, RFC 9260 §9.2): it goes in this packet, ahead of the rest.
            self.late_control(p);
        }
        if p.control.is_none() && p.sack.is_none() && p.data.is_empty() {
            return None;
        }
        if !p.data.is_empty() {
            self.stats.tx_segments += 1;
        } else if p.sack.is_some() {
            self.stats.ack_segments += 1;
        } else {
            self.sstats.control_packets += 1;
        }
        let (ip_len, payload_len) = self.lens(p);
        let d = dest.unwrap_or(0);
        if !p.data.is_empty() {
            self.paths[d].data_bytes_sent += payload_len as u64;
        }
        Some(self.segment(boxed, d, payload_len, ip_len, now))
    }

    /// Puts the first control chunk queued into `p`, which has none, if it may ride with what
    /// `p` holds and fits the MTU.
    #[cold]
    fn late_control(&mut self, p: &mut SctpRepr) {
        let c = self.ctrl[0];
        let fits = IPV4_HEADER_LEN + p.packet_len() + pad4(c.chunk.chunk_len()) <= self.cfg.mtu;
        let alone = c.chunk.must_be_alone() || matches!(c.chunk, ControlChunk::Abort { .. });
        let empty = p.sack.is_none() && p.data.is_empty();
        if c.tag == p.verification_tag && fits && (empty || !alone) {
            self.ctrl.pop_front();
            p.control = Some(c.chunk);
            if let ControlChunk::ForwardTsn(_) = c.chunk {
                self.sstats.forward_tsns += 1;
            }
        }
    }

    /// Whether DATA may be sent in this state: the association is up (the first COOKIE ECHO,
    /// RFC 9260 §5.1 D, is handled by the caller). SHUTDOWN-RECEIVED still sends what was queued
    /// (§9.2).
    pub(super) fn may_send_data(&self) -> bool {
        matches!(
            self.state,
            State::Established | State::ShutdownPending | State::ShutdownReceived
        )
    }

    /// Whether `p` takes no further DATA chunk: it holds as many as a packet can, or one
    /// with bundling off ([`SctpConfig::bundling`](crate::SctpConfig::bundling), RFC 9260
    /// §6.10).
    #[inline(always)]
    fn data_full(&self, p: &SctpRepr) -> bool {
        p.data.is_full() || !self.sctp.bundling && !p.data.is_empty()
    }

    /// Puts DATA chunks for path `pi` into `p` within `room` bytes: Fast Retransmit first
    /// (§7.2.4 step 3), then chunks marked for retransmission (§6.1 C), then new data (§6.1 A,
    /// B, D) if `pi` is the data path and no marked chunk waits for it.
    pub(super) fn fill_data(&mut self, now: SimTime, p: &mut SctpRepr, mut room: u32, pi: usize) {
        // The Fast Retransmit packet is the one that goes to the marked chunks' path.
        let fast = self.fast_rtx_now && (self.paths.len() == 1 || self.rtx_path() == pi);
        if fast {
            self.fast_rtx_now = false;
        }
        let marked_any = self.has_marked();
        let mut retransmitted_first = false;
        let mut abandoned = false;
        if marked_any && (fast || self.window_open(pi)) {
            let first_outstanding = self.first_outstanding();
            for k in 0..self.sent.len() {
                if self.data_full(p) {
                    break;
                }
                let x = self.sent[k];
                if !x.marked || x.path != pi {
                    continue;
                }
                if self.pr_due(&x, now) {
                    // RFC 3758 §4.1 TR4, RFC 7496 §3.1: abandoned instead.
                    self.abandon_message_at(k);
                    abandoned = true;
                    continue;
                }
                let need = pad4(x.chunk.chunk_len());
                if need > room {
                    break;
                }
                room -= need;
                if Some(x.chunk.tsn) == first_outstanding {
                    retransmitted_first = true;
                }
                self.transmit_chunk(now, k, p);
            }
            if abandoned {
                self.forward_tsn_rules(now, false);
            }
            if fast && retransmitted_first {
                // §7.2.4 step 4: restart T3-rtx when retransmitting the first outstanding chunk.
                let rto = self.paths[pi].rtt.rto();
                self.paths[pi].t3_rtx = Some(now + rto);
            }
            if fast || !p.data.is_empty() && self.has_marked() {
                // More marked chunks wait for cwnd, no new data before them (§6.1 C); the Fast
                // Retransmit packet, sent regardless of cwnd, carries retransmissions only.
                return;
            }
        }
        if pi != self.data_path || self.marked_on(pi) {
            return;
        }
        self.fill_new_data(now, p, room);
    }

    /// New DATA (RFC 9260 §6.1): within rwnd (A, with the one-chunk probe), cwnd (B), Max.Burst
    /// (D), and ns-2's send rule in the `ns2` profile.
    #[inline(always)]
    pub(super) fn fill_new_data(&mut self, now: SimTime, p: &mut SctpRepr, room: u32) {
        if self.unsent.is_empty() || self.data_full(p) {
            return;
        }
        if self.sctp.ns2_send_rule && !self.ns2_flag && (self.sctp.ns2_stall || !self.nothing_outstanding()) {
            return;
        }
        if self.sctp.max_burst.is_some_and(|b| self.burst >= b) {
            return;
        }
        if p.data.is_empty() && !self.window_open(self.data_path) {
            return;
        }
        self.add_new_data(now, p, room);
    }

    /// [`fill_new_data`](Self::fill_new_data) once its conditions to start hold (new data
    /// waits, `p` has room for a chunk, ns-2's rule, Max.Burst and cwnd let it go): chunks go
    /// to the data path within `room` bytes and rwnd.
    #[inline(always)]
    fn add_new_data(&mut self, now: SimTime, p: &mut SctpRepr, mut room: u32) {
        let pi = self.data_path;
        let mut added = 0;
        // Messages abandoned: with TSNs (a FORWARD TSN is due), without.
        let mut abandoned = (false, false);
        loop {
            if self.data_full(p) {
                break;
            }
            // RFC 3758 §4.1 TR3/TR4: a message past its lifetime is not sent.
            if self.pr {
                let (gone, with_tsns) = self.abandon_unsent_front(now);
                if gone {
                    abandoned.0 |= with_tsns;
                    abandoned.1 |= !with_tsns;
                    continue;
                }
            }
            if room < DATA_CHUNK_HEADER_LEN {
                break; // no chunk fits (the usual end of a full packet, found without a lookup)
            }
            let Some(q) = self.unsent.front() else { break };
            let c = &q.chunk;
            let need = pad4(c.chunk_len());
            if need > room {
                break;
            }
            // §6.1 A: not beyond the peer's rwnd, except one chunk when nothing is in flight.
            let over = c.len as u64 > self.rwnd;
            if over {
                let probe = added == 0 && self.paths[pi].flight_size == 0 && self.nothing_outstanding();
                if !probe {
                    break;
                }
                self.sstats.window_probes += 1;
            }
            room -= need;
            let q = self.unsent.pop_front().expect("front");
            let mut c = q.chunk;
            c.tsn = self.next_tsn;
            self.next_tsn = self.next_tsn.wrapping_add(1);
            if c.flags.contains(DataFlags::BEGIN) {
                self.cur_first_tx = now.0;
                self.unsent_msgs -= 1;
                // RFC 9260 §6.5: the SSN, in the order messages are first sent.
                if !c.flags.contains(DataFlags::UNORDERED) {
                    let s = &mut self.ssn_next[c.stream_id as usize];
                    c.ssn = *s;
                    *s = s.wrapping_add(1);
                }
                self.cur_ssn = c.ssn;
            } else {
                c.ssn = self.cur_ssn;
            }
            c.payload.first_tx_ns = self.cur_first_tx;
            // Sent for the first time (what `transmit_chunk` does to a chunk of `sent`, without
            // looking it up again).
            self.sent.push_back(Sent {
                chunk: c,
                path: pi,
                tx_count: 1,
                gap_acked: false,
                marked: false,
                in_flight: true,
                misses: 0,
                fast_rtx: false,
                abandoned: false,
                pr: q.pr,
            });
            self.chunk_sent(now, pi, &c, true, p);
            // §6.3.1 C4: time one chunk per round trip.
            let path = &mut self.paths[pi];
            if path.rtt_timed.is_none() {
                path.rtt_timed = Some((c.tsn, now));
            }
            path.hb_period_busy = true;
            added += 1;
            if over {
                // The probe goes alone.
                break;
            }
        }
        if abandoned != (false, false) {
            self.after_abandoning_unsent(now, abandoned.0);
        }
        if added > 0 {
            self.burst += 1;
            if self.sctp.ns2_send_rule && self.ns2_flag {
                self.ns2_used = true;
            }
        }
    }

    /// Messages were abandoned at their first transmission: the FORWARD TSN (if some had TSNs,
    /// RFC 3758 §3.5), and SHUTDOWN if the last message waiting is gone (RFC 9260 §9.2).
    #[cold]
    fn after_abandoning_unsent(&mut self, now: SimTime, with_tsns: bool) {
        if with_tsns {
            self.forward_tsn_rules(now, false);
        }
        self.check_shutdown(now);
    }

    /// Whether every chunk sent is acknowledged (cumulatively or by Gap Ack Blocks) or
    /// abandoned.
    pub(super) fn nothing_outstanding(&self) -> bool {
        debug_assert_eq!(self.n_gap_acked, self.sent.iter().filter(|x| x.gap_acked).count());
        debug_assert_eq!(self.n_abandoned, self.sent.iter().filter(|x| x.abandoned).count());
        self.sent.len() == self.n_gap_acked + self.n_abandoned
    }

    /// The TSN of the lowest chunk neither acknowledged nor passed by the Cumulative TSN Ack
    /// (without Gap Ack Blocks held, the first chunk of `sent`).
    pub(super) fn first_outstanding(&self) -> Option<u32> {
        debug_assert_eq!(self.n_gap_acked, self.sent.iter().filter(|x| x.gap_acked).count());
        if self.n_gap_acked == 0 && self.n_abandoned == 0 {
            self.sent.front().map(|x| x.chunk.tsn)
        } else {
            self.sent
                .iter()
                .find(|x| !x.gap_acked && !x.abandoned)
                .map(|x| x.chunk.tsn)
        }
    }

    /// Sends `sent[k]` in `p`: flight size, rwnd (§6.1 B: rwnd minus the data), T3-rtx (§6.3.2
    /// R1), retransmission bookkeeping.
    pub(super) fn transmit_chunk(&mut self, now: SimTime, k: usize, p: &mut SctpRepr) {
        let x = &mut self.sent[k];
        if x.tx_count > 0 {
            self.stats.retransmissions += 1;
        }
        x.tx_count += 1;
        self.n_marked -= x.marked as usize;
        x.marked = false;
        x.misses = 0;
        let newly_in_flight = !x.in_flight;
        x.in_flight = true;
        let (chunk, pi) = (x.chunk, x.path);
        self.chunk_sent(now, pi, &chunk, newly_in_flight, p);
    }

    /// A chunk goes into `p` towards path `pi`: its flight size (if it was not counted in
    /// it), rwnd (§6.1 B), T3-rtx (§6.3.2 R1), the idle-decay clock.
    #[inline]
    fn chunk_sent(&mut self, now: SimTime, pi: usize, c: &DataChunk, newly_in_flight: bool, p: &mut SctpRepr) {
        if newly_in_flight {
            self.paths[pi].flight_size += self.size(c);
        }
        self.rwnd = self.rwnd.saturating_sub(c.len as u64);
        let pushed = p.data.push(*c);
        debug_assert!(pushed);
        let path = &mut self.paths[pi];
        path.last_data_tx = Some(now);
        path.idle_decays = 0;
        if path.t3_rtx.is_none() && self.state != State::CookieEchoed {
            path.t3_rtx = Some(now + path.rtt.rto());
        }
    }
}
