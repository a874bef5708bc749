//! `Agent/TCP/Sack1` (`tcp/tcp-sack1.cc`) with its scoreboard (`ScoreBoardRQ`,
//! `tcp/scoreboard-rq.cc`, over the `ReassemblyQueue` of `tcp/rq.cc`), and the block choice of
//! `Agent/TCPSink/Sack1` (`Sacker::append_ack`, `tcp/tcp-sink.cc`). Each function names the
//! ns-2.35 function whose behaviour it reproduces; see the module documentation of
//! [`super`] for the summary.

use super::{CwndAction, CwndCut, Io, Sender, Sink};
use std::collections::VecDeque;
use tpsim_core::SimTime;

/// `NSA`: the SACK blocks ns-2's TCP header has room for; `maxSackBlocks_` is clamped to it
/// (`Sacker::configure`).
pub(super) const NSA: u32 = 3;

/// The sender's scoreboard, as ns-2.35's `ScoreBoardRQ` keeps it: the packets the sink has
/// reported in SACK blocks, as ranges `[start, end)` of packet numbers.
#[derive(Debug, Clone)]
pub(super) struct ScoreBoard {
    /// The SACKed ranges, sorted, disjoint and never touching (`ReassemblyQueue::add` and
    /// `coalesce` merge adjacent blocks).
    blocks: Vec<(i64, i64)>,
    /// `h_seqno_`: the retransmission search starts here (past the holes already resent).
    h_seqno: i64,
    /// `sack_min`: one past the highest cumulative ACK the scoreboard was updated with. It
    /// survives `ClearScoreBoard`.
    sack_min: i64,
}

impl ScoreBoard {
    pub(super) fn new() -> ScoreBoard {
        ScoreBoard {
            blocks: Vec::new(),
            h_seqno: -1,
            sack_min: -1,
        }
    }

    /// `ReassemblyQueue::total`: packets covered by the blocks.
    fn total(&self) -> i64 {
        self.blocks.iter().map(|&(s, e)| e - s).sum()
    }

    /// `ScoreBoardRQ::ClearScoreBoard`: forget every block and restart the retransmission
    /// search (`sack_min` is kept).
    pub(super) fn clear(&mut self) {
        self.blocks.clear();
        self.h_seqno = -1;
    }

    /// `ReassemblyQueue::clearto`: drop what lies below `seq`, trimming a block across it.
    fn clear_to(&mut self, seq: i64) {
        self.blocks.retain(|&(_, e)| e > seq);
        if let Some(first) = self.blocks.first_mut() {
            if first.0 <= seq {
                first.0 = seq;
            }
        }
    }

    /// `ReassemblyQueue::add`: the union with `[start, end)`, merging what overlaps or
    /// touches it. (ns-2 aborts on an inverted block; an empty one is ignored here.)
    fn add(&mut self, start: i64, end: i64) {
        if end <= start {
            return;
        }
        let (mut s, mut e) = (start, end);
        self.blocks.retain(|&(bs, be)| {
            if be >= start && bs <= end {
                s = s.min(bs);
                e = e.max(be);
                false
            } else {
                true
            }
        });
        let at = self.blocks.partition_point(|&(bs, _)| bs < s);
        self.blocks.insert(at, (s, e));
    }

    /// `ScoreBoardRQ::UpdateScoreBoard` with the cumulative ACK `highest_ack` and the ACK's
    /// blocks: past a new cumulative ACK, drop what it covers; add the blocks. Returns
    /// `changed_` (`CheckUpdate`): whether blocks were dropped or the SACKed total changed.
    ///
    /// ns-2's reassembly queue also moves `sack_min` (its `rcv_nxt_`) to the end of a block
    /// added at or below it, which only a stale block of a reordered old ACK can do (it pulls
    /// `sack_min` back below the cumulative ACK, after which ns-2 may retransmit an
    /// acknowledged packet); tpsim keeps `sack_min` where the cumulative ACK put it.
    pub(super) fn update(&mut self, highest_ack: i64, sacks: &[(i64, i64)]) -> bool {
        let old_total = self.total();
        let mut changed = false;
        if self.sack_min <= highest_ack {
            self.sack_min = highest_ack + 1;
            if !self.blocks.is_empty() {
                self.clear_to(self.sack_min);
                changed = true;
            }
        }
        for &(l, r) in sacks {
            self.add(l, r);
        }
        changed || old_total != self.total()
    }

    /// `ReassemblyQueue::nexthole`: the first packet at or above `seq` that no block covers
    /// (the end of the block containing `seq`, `seq` itself otherwise), with the number of
    /// blocks above it; `None` when no block reaches `seq`.
    fn next_hole(&self, seq: i64) -> Option<(i64, usize)> {
        let n = self.blocks.len();
        for (i, &(s, e)) in self.blocks.iter().enumerate() {
            if s > seq {
                return Some((seq, n - i));
            }
            if e >= seq {
                return Some((e, n - i - 1));
            }
        }
        None
    }

    /// `ScoreBoardRQ::GetNextRetran`: the next hole, from `max(h_seqno_, sack_min)`, that has
    /// a SACKed block above it (a hole with nothing SACKed above is not known to be lost);
    /// `h_seqno_` moves up to it. Each hole is thus resent once until the scoreboard clears.
    pub(super) fn next_retran(&mut self) -> Option<i64> {
        if self.h_seqno < self.sack_min {
            self.h_seqno = self.sack_min;
        }
        match self.next_hole(self.h_seqno) {
            Some((hole, above)) if hole > 0 && above > 0 => {
                self.h_seqno = self.h_seqno.max(hole);
                Some(hole)
            }
            _ => None,
        }
    }

    /// `ScoreBoardRQ::MarkRetran`: packet `seqno` was retransmitted; search past it.
    pub(super) fn mark_retran(&mut self, seqno: i64) {
        if seqno >= self.h_seqno {
            self.h_seqno = seqno + 1;
        }
    }

    #[cfg(test)]
    pub(super) fn blocks(&self) -> &[(i64, i64)] {
        &self.blocks
    }
}

impl Sender {
    /// `Sack1TcpAgent::recv` for an ACK of packet `ackno` with SACK blocks `sacks` (packet
    /// ranges `[left, right)`), with `aggressive_maxburst_` 1 and `partial_ack_` 0 (the
    /// defaults).
    ///
    /// Outside fast recovery: a new ACK is taken as every agent takes it (`recv_newack_helper`)
    /// and clears the scoreboard; an ACK equal to the last one, unless a timeout happened since
    /// the last new ACK (`timeout_`), updates the scoreboard and counts as a duplicate only if
    /// it changed it (new SACK information): the `numdupacks_`-th starts recovery
    /// (`dupack_action`), earlier ones send one new packet each (`singledup_`). The window is
    /// then filled if no duplicates are being counted.
    ///
    /// In fast recovery every ACK takes one packet out of `pipe_`; an ACK reaching `recover_`
    /// ends recovery (`newack`: no window growth, `recover_` reset to 0) and clears the
    /// scoreboard; a partial ACK moves `highest_ack_` (not `last_ack_`), updates the
    /// scoreboard, takes a second packet out of `pipe_`, restarts the timer and ends the
    /// backoff; any other ACK updates the scoreboard. Then `send_much` sends while `pipe_` is
    /// below `cwnd_`.
    pub(super) fn recv_sack1(&mut self, io: &mut Io, now: SimTime, ackno: i64, sacks: &[(i64, i64)]) {
        let ns2 = io.ns2;
        let numdup = ns2.numdupacks;
        if !self.fastrecov {
            if ackno > self.last_ack {
                self.full_newack(ns2, now, ackno);
                self.after_timeout = false;
                self.scb.clear();
            } else if ackno == self.last_ack && !self.after_timeout && self.scb.update(self.highest_ack, sacks) {
                self.dupacks += 1;
                if self.dupacks == numdup {
                    self.sack1_dupack_action(io, now);
                } else if self.dupacks < numdup && ns2.singledup {
                    self.send_one(io, now);
                }
            }
            if self.dupacks == 0 {
                self.sack1_send_much(io, now);
            }
        } else {
            self.pipe -= 1;
            if ackno >= self.recover {
                self.recover = 0;
                self.fastrecov = false;
                self.newack(ns2, now, ackno);
                self.after_timeout = false;
                self.scb.clear();
            } else if ackno > self.highest_ack {
                self.highest_ack = ackno;
                self.scb.update(self.highest_ack, sacks);
                self.pipe -= 1;
                self.newtimer(ns2, now, ackno);
                self.t_backoff = 1;
            } else if !self.after_timeout && self.scb.update(self.highest_ack, sacks) && self.dupacks > 0 {
                self.dupacks += 1;
            }
            self.sack1_send_much(io, now);
        }
    }

    /// `Sack1TcpAgent::dupack_action` (`oldCode_` 0, `LimTransmitFix_` 0, no ECN): unless this
    /// window was already responded to (`bugFix_`, as for the other agents), enter fast
    /// recovery: `recover_ = maxseq_`, `pipe_` = the packets outstanding less the
    /// `numdupacks_` that left the network, restart the timer without going back, halve
    /// `ssthresh_` and `cwnd_`, and retransmit the first unacknowledged packet.
    pub(super) fn sack1_dupack_action(&mut self, io: &mut Io, now: SimTime) {
        let ns2 = io.ns2;
        let recovered = self.highest_ack > self.recover;
        if !(recovered || !ns2.bug_fix || (ns2.bugfix_ss && self.highest_ack == 0)) {
            return;
        }
        self.recover = self.maxseq;
        self.pipe = self.maxseq - self.highest_ack - ns2.numdupacks as i64;
        self.reset_rtx_timer(ns2, now, true, false);
        self.fastrecov = true;
        self.scb.mark_retran(self.highest_ack + 1);
        self.last_cwnd_action = CwndAction::Dupack;
        self.fast_retransmits += 1;
        self.slowdown(ns2, true, CwndCut::Half);
        // Duplicate ACKs need SACK blocks, hence a hole below a later packet: the packet
        // exists (unlike Reno's phantom retransmission, see the module documentation).
        if self.last_ack + 1 < self.curseq {
            self.output(io, now, self.last_ack + 1);
        }
    }

    /// `Sack1TcpAgent::send_much` (`maxburst_` 0, no `overhead_`): while the window allows
    /// (outside recovery: `t_seqno_ ≤ last_ack_ + window()`; in recovery: `pipe_ < cwnd_`)
    /// and something is unacknowledged, send the scoreboard's next hole
    /// (`ScoreBoard::GetNextRetran`, if `recover_ > 0` and within `window_` of
    /// `highest_ack_`), or else packet `t_seqno_` (outside recovery within `window()`, in
    /// recovery within `window_` of `highest_ack_`). Each packet sent adds one to `pipe_`.
    ///
    /// A partial ACK moves `highest_ack_` but not `t_seqno_`, so when recovery starts while
    /// the sender is still going back over a window after a timeout, a partial ACK can pass
    /// `t_seqno_` and ns-2 then sends packets the sink already has; so does tpsim (they are
    /// above `last_ack_`, with their messages).
    pub(super) fn sack1_send_much(&mut self, io: &mut Io, now: SimTime) {
        let wnd = io.ns2.window as i64;
        let mut win = self.window(io.ns2);
        loop {
            let open = if self.fastrecov {
                self.pipe < self.cwnd as i64
            } else {
                self.t_seqno <= self.last_ack + win
            };
            if !open || self.last_ack + 1 >= self.curseq {
                return;
            }
            let xmit = match self.scb.next_retran() {
                None => {
                    let limit = if self.fastrecov { wnd } else { win };
                    if self.t_seqno <= self.highest_ack + limit && self.t_seqno < self.curseq {
                        self.t_seqno += 1;
                        self.t_seqno - 1
                    } else {
                        return;
                    }
                }
                Some(hole) if self.recover > 0 && hole <= self.highest_ack + wnd => {
                    self.scb.mark_retran(hole);
                    win = self.window(io.ns2);
                    hole
                }
                Some(_) => return,
            };
            self.output(io, now, xmit);
            if self.t_seqno <= xmit {
                self.t_seqno = xmit + 1;
            }
            self.pipe += 1;
        }
    }

    /// The part of `Sack1TcpAgent::timeout` before `TcpAgent::timeout`: leave fast recovery,
    /// ignore duplicate ACKs until the next new ACK (`timeout_`), take the partial ACKs
    /// (`last_ack_ = highest_ack_`), `recover_ = maxseq_`, clear the scoreboard.
    pub(super) fn sack1_timeout_reset(&mut self) {
        self.dupacks = 0;
        self.fastrecov = false;
        self.after_timeout = true;
        if self.highest_ack > self.last_ack {
            self.last_ack = self.highest_ack;
        }
        self.recover = self.maxseq;
        self.scb.clear();
    }
}

/// `SackStack`: the blocks the SACK sink reported last, most recent first, at most
/// `maxSackBlocks_` of them.
#[derive(Debug, Default)]
pub(super) struct SackHistory {
    entries: VecDeque<(i64, i64)>,
}

impl Sink {
    /// Whether packet `i` has arrived (`Acker::seen_`).
    fn seen(&self, i: i64) -> bool {
        i < self.next || self.above.contains_key(&i)
    }

    /// `Sacker::append_ack` (`generateDSacks_` 0): the SACK blocks of the ACK sent for packet
    /// `old_seqno`, at most `nblocks`, as packet ranges `[left, right)`.
    ///
    /// * With no hole below the highest packet seen, no blocks, and the history is emptied.
    /// * Otherwise, if `old_seqno` lies above the cumulative ACK, the first block is the run of
    ///   received packets that contains it (the most recent block); a packet at or below the
    ///   cumulative ACK (a duplicate or a hole filled) gives no block of its own but stands for
    ///   `[0, first hole at or above it)`.
    /// * Then the history, most recent first, up to `nblocks`: entries that this block covers
    ///   are dropped from it, the others reported.
    /// * A first block joins the head of the history (the oldest entry falls off when it is
    ///   full).
    pub(super) fn sack_blocks(&mut self, old_seqno: i64, nblocks: usize) -> Vec<(i64, i64)> {
        let seqno = self.next - 1;
        let mut out = Vec::new();
        if seqno >= self.maxseen && !self.history.entries.is_empty() {
            self.history.entries.clear();
            return out;
        }
        if !((seqno < self.maxseen || self.is_dup) && nblocks > 0) {
            return out;
        }
        let mut right = self.maxseen + 1;
        let mut i = old_seqno;
        while i <= self.maxseen {
            if !self.seen(i) {
                right = i;
                break;
            }
            i += 1;
        }
        let recent_left = if old_seqno <= seqno {
            0
        } else {
            let mut left = -1;
            let mut i = right - 1;
            while i > seqno {
                if !self.seen(i) {
                    left = i + 1;
                    break;
                }
                i -= 1;
            }
            out.push((left, right));
            left
        };
        let recent = (recent_left, right);
        let mut k = 0;
        while out.len() < nblocks {
            let Some(&(l, r)) = self.history.entries.get(k) else {
                break;
            };
            if l < 0 || r < 0 || r > self.maxseen + 1 {
                break;
            }
            if recent.0 <= l && recent.1 >= r {
                self.history.entries.remove(k);
                continue;
            }
            out.push((l, r));
            k += 1;
        }
        if old_seqno > seqno {
            if self.history.entries.len() >= nblocks {
                self.history.entries.truncate(nblocks - 1);
            }
            self.history.entries.push_front(recent);
        }
        out
    }
}
