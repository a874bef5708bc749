//! PR-SCTP (RFC 3758): abandoning messages under their policy (§3.4, §4.1, RFC 7496 §3.1), the
//! sender's Advanced.Peer.Ack.Point and FORWARD TSN (§3.5 A1–A5, C1–C5, F2), and the FORWARD
//! TSN at the receiver (§3.6).

use super::{tsn_le, tsn_lt, Ctrl, SctpSocket, Sent};
use crate::sctp::{PrPolicy, State};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{ControlChunk, DataFlags, ForwardTsnChunk, MAX_FWD_TSN_STREAMS};

/// A message's [`PrPolicy`] as its chunks carry it, in 8 bytes: the instant its lifetime ends
/// (ns), or its retransmission limit (flagged by the top bit), or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PrLimit(u64);

impl PrLimit {
    const RELIABLE: u64 = u64::MAX;
    const RTX: u64 = 1 << 63;

    /// The limit of a message created at `created_ns` sent under `p`.
    pub(super) fn new(p: PrPolicy, created_ns: u64) -> PrLimit {
        PrLimit(match p {
            PrPolicy::Reliable => Self::RELIABLE,
            PrPolicy::Lifetime(l) => created_ns.saturating_add(l.0).min(Self::RTX - 1),
            PrPolicy::Retransmissions(n) => Self::RTX | n as u64,
        })
    }

    /// Whether a chunk sent `tx_count` times so far must be abandoned at `now` rather than
    /// (re)transmitted: its lifetime has ended (RFC 3758 §4.1 TR3, TR4), or it would be
    /// retransmitted more often than allowed (RFC 7496 §3.1).
    #[inline]
    pub(super) fn due(self, tx_count: u32, now: SimTime) -> bool {
        if self.0 == Self::RELIABLE {
            false
        } else if self.0 & Self::RTX != 0 {
            tx_count > self.0 as u32
        } else {
            now.0 >= self.0
        }
    }
}

impl SctpSocket {
    /// Whether `x` must be abandoned rather than (re)transmitted at `now` (RFC 3758 §4.1 TR4,
    /// RFC 7496 §3.1). Never without PR-SCTP negotiated.
    #[inline]
    pub(super) fn pr_due(&self, x: &Sent, now: SimTime) -> bool {
        self.pr && !x.abandoned && x.pr.due(x.tx_count, now)
    }

    /// RFC 3758 §3.5 A2: `sent[j]` is abandoned: finally acknowledged and no longer
    /// outstanding (out of the flight size, not marked), without crediting cwnd.
    fn abandon_chunk(&mut self, j: usize) {
        let size = self.size(&self.sent[j].chunk);
        let x = &mut self.sent[j];
        if x.abandoned {
            return;
        }
        x.abandoned = true;
        if x.in_flight {
            x.in_flight = false;
            self.paths[x.path].flight_size -= size;
        }
        if x.marked {
            x.marked = false;
            self.n_marked -= 1;
        }
        if x.gap_acked {
            x.gap_acked = false;
            self.n_gap_acked -= 1;
        }
        self.n_abandoned += 1;
        let (tsn, pi) = (x.chunk.tsn, x.path);
        // Its acknowledgement is no RTT sample (it is not acknowledged as data any more).
        if self.paths[pi].rtt_timed.is_some_and(|(t, _)| t == tsn) {
            self.paths[pi].rtt_timed = None;
        }
    }

    /// RFC 3758 §3.5 A2, A3: abandons the message of which `sent[k]` is a fragment, all its
    /// fragments together. Fragments not yet sent take their TSNs now, abandoned, so that the
    /// Advanced.Peer.Ack.Point and the FORWARD TSN cover the whole message.
    pub(super) fn abandon_message_at(&mut self, k: usize) {
        // Fragments have consecutive TSNs, and `sent` holds consecutive TSNs.
        let mut a = k;
        while a > 0 && !self.sent[a].chunk.flags.contains(DataFlags::BEGIN) {
            a -= 1;
        }
        let mut b = k;
        while b + 1 < self.sent.len() && !self.sent[b].chunk.flags.contains(DataFlags::END) {
            b += 1;
        }
        debug_assert!((a..=b).all(|j| self.sent[j].chunk.msg_id == self.sent[k].chunk.msg_id));
        for j in a..=b {
            self.abandon_chunk(j);
        }
        let last = self.sent[b].chunk;
        if !last.flags.contains(DataFlags::END) {
            self.abandon_unsent_rest(last.ssn);
        }
        self.message_abandoned(last.msg_id);
    }

    /// The fragments at the front of `unsent` continue a message whose first ones were sent:
    /// they take their TSNs, abandoned, never transmitted (RFC 3758 §3.5 A3).
    fn abandon_unsent_rest(&mut self, ssn: u16) {
        while let Some(q) = self.unsent.pop_front() {
            debug_assert!(!q.chunk.flags.contains(DataFlags::BEGIN));
            let mut c = q.chunk;
            c.tsn = self.next_tsn;
            self.next_tsn = self.next_tsn.wrapping_add(1);
            c.ssn = ssn;
            c.payload.first_tx_ns = self.cur_first_tx;
            self.sent.push_back(Sent {
                chunk: c,
                path: self.primary,
                tx_count: 0,
                gap_acked: false,
                marked: false,
                in_flight: false,
                misses: 0,
                fast_rtx: false,
                abandoned: true,
                pr: q.pr,
            });
            self.n_abandoned += 1;
            if c.flags.contains(DataFlags::END) {
                break;
            }
        }
    }

    fn message_abandoned(&mut self, _msg_id: u32) {
        self.sstats.abandoned_messages += 1;
        #[cfg(test)]
        self.abandoned_ids.push(_msg_id);
    }

    /// Before the front of `unsent` gets its first transmission at `now`: abandons its message
    /// if its policy says so (RFC 3758 §4.1 TR3: a message not yet sent is dropped without a
    /// TSN; one partly sent is abandoned whole). Returns (whether something was abandoned,
    /// whether chunks with TSNs were).
    pub(super) fn abandon_unsent_front(&mut self, now: SimTime) -> (bool, bool) {
        let Some(q) = self.unsent.front() else {
            return (false, false);
        };
        if !self.pr || !q.pr.due(0, now) {
            return (false, false);
        }
        if q.chunk.flags.contains(DataFlags::BEGIN) {
            let id = q.chunk.msg_id;
            while let Some(q) = self.unsent.pop_front() {
                self.buffered_bytes -= q.chunk.len as u64;
                if q.chunk.flags.contains(DataFlags::END) {
                    break;
                }
            }
            self.unsent_msgs -= 1;
            self.message_abandoned(id);
            return (true, false);
        }
        match self.sent.len().checked_sub(1) {
            Some(k) => self.abandon_message_at(k),
            None => {
                // Its sent fragments were all acknowledged already.
                let (id, ssn) = (q.chunk.msg_id, self.cur_ssn);
                self.abandon_unsent_rest(ssn);
                self.message_abandoned(id);
            }
        }
        (true, true)
    }

    /// Abandons the messages of the chunks marked for retransmission whose policy says so at
    /// `now` (RFC 3758 §4.1 TR4, RFC 7496 §3.1); true if any.
    pub(super) fn abandon_marked_due(&mut self, now: SimTime) -> bool {
        if !self.pr || !self.has_marked() {
            return false;
        }
        let mut any = false;
        let mut k = 0;
        while k < self.sent.len() {
            let x = self.sent[k];
            if x.marked && self.pr_due(&x, now) {
                self.abandon_message_at(k);
                any = true;
            }
            k += 1;
        }
        if !self.has_marked() {
            // Nothing left for the Fast Retransmit packet (the congestion response stays, F5).
            self.fast_rtx_now = false;
        }
        any
    }

    /// RFC 3758 §3.5 C1, C2 and C4's limit: the Advanced.Peer.Ack.Point moves up to the
    /// Cumulative TSN Ack Point, then over abandoned chunks, but not onto a message of an
    /// ordered stream beyond the [`MAX_FWD_TSN_STREAMS`] a FORWARD TSN can report.
    fn advance_peer_ack_point(&mut self) {
        if tsn_lt(self.adv_ack_point, self.cum_ack_point) {
            self.adv_ack_point = self.cum_ack_point;
        }
        let mut streams = [0u16; MAX_FWD_TSN_STREAMS];
        let mut n = 0;
        let mut adv = self.adv_ack_point;
        for x in &self.sent {
            let c = &x.chunk;
            let passed = tsn_le(c.tsn, adv);
            if !(passed || x.abandoned && c.tsn == adv.wrapping_add(1)) {
                break;
            }
            if !c.flags.contains(DataFlags::UNORDERED) && !streams[..n].contains(&c.stream_id) {
                if n == MAX_FWD_TSN_STREAMS {
                    break;
                }
                streams[n] = c.stream_id;
                n += 1;
            }
            if !passed {
                adv = c.tsn;
            }
        }
        self.adv_ack_point = adv;
    }

    /// The FORWARD TSN for the current Advanced.Peer.Ack.Point (RFC 3758 §3.5 C3, C4): for
    /// each stream of the ordered chunks skipped, the highest SSN (a later TSN of a stream has
    /// a later SSN).
    fn forward_tsn_chunk(&self) -> ForwardTsnChunk {
        let mut f = ForwardTsnChunk::new(self.adv_ack_point);
        let mut pairs = [(0u16, 0u16); MAX_FWD_TSN_STREAMS];
        let mut n = 0;
        for x in &self.sent {
            let c = &x.chunk;
            if !tsn_le(c.tsn, self.adv_ack_point) {
                break;
            }
            if c.flags.contains(DataFlags::UNORDERED) {
                continue;
            }
            match pairs[..n].iter_mut().find(|p| p.0 == c.stream_id) {
                Some(p) => p.1 = c.ssn,
                None => {
                    pairs[n] = (c.stream_id, c.ssn);
                    n += 1;
                }
            }
        }
        for &(s, q) in &pairs[..n] {
            let pushed = f.push(s, q);
            debug_assert!(pushed);
        }
        f
    }

    /// RFC 3758 §3.5 C2–C5, after a SACK (`on_sack`: C1 first) or when T3-rtx expires (A5) or
    /// chunks were abandoned: advance the Advanced.Peer.Ack.Point and, if it is beyond the
    /// Cumulative TSN Ack Point, queue a FORWARD TSN (replacing one not yet sent; bundled ahead
    /// of DATA, F2) with T3-rtx running (C5). After a SACK the same New Cumulative TSN is not
    /// sent again within one SRTT (F2's implementation note: duplicates limited).
    pub(super) fn forward_tsn_rules(&mut self, now: SimTime, on_sack: bool) {
        if !self.pr {
            return;
        }
        self.advance_peer_ack_point();
        let owed = tsn_lt(self.cum_ack_point, self.adv_ack_point);
        if !owed || !self.may_send_data() {
            self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::ForwardTsn(_)));
            return;
        }
        // C5: a T3-rtx timer runs while a FORWARD TSN is owed.
        let pi = self.primary;
        let rto = self.paths[pi].rtt.rto();
        let srtt = self.paths[pi].rtt.srtt().unwrap_or(rto);
        if self.paths[pi].t3_rtx.is_none() {
            self.paths[pi].t3_rtx = Some(now + rto);
        }
        let f = self.forward_tsn_chunk();
        if on_sack {
            if let Some((c, at)) = self.last_fwd {
                if c == f.new_cum_tsn && now < at + srtt.max(SimDuration(1)) {
                    return;
                }
            }
        }
        self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::ForwardTsn(_)));
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::ForwardTsn(f),
            tag: self.peer_tag,
            path: self.data_path,
        });
        self.last_fwd = Some((f.new_cum_tsn, now));
    }

    /// RFC 3758 §3.6: a FORWARD TSN from the peer. Processed only if we announced PR-SCTP
    /// (§3.3.1; otherwise ignored). The Cumulative TSN moves, fragments of messages that can no
    /// longer complete go, stranded ordered messages are delivered; a SACK goes out at once
    /// (also for an out-of-date one, which hints that our SACK was lost).
    pub(super) fn on_forward_tsn(&mut self, now: SimTime, f: &ForwardTsnChunk) {
        if !self.sctp.pr_sctp
            || !matches!(
                self.state,
                State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
            )
        {
            return;
        }
        let Some(r) = self.recv.as_mut() else { return };
        if r.forward_tsn(now, f.new_cum_tsn, f.streams()) {
            self.sstats.forward_tsns_received += 1;
        }
        self.drain_ready();
        self.sack_now = true;
        if self.state == State::ShutdownSent {
            // RFC 9260 §9.2: answered like DATA, with SHUTDOWN (T2 restarted).
            self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::Shutdown(_)));
            self.queue_shutdown(now);
        } else {
            self.sack_pending = true;
        }
    }
}
