//! SACK processing at the data sender (RFC 9260 §6.2.1): cumulative and Gap Ack Block
//! acknowledgements, renege, miss indications and fast retransmit (§7.2.4), the window growth
//! of §7.2.1/§7.2.2, rwnd, T3-rtx restarts (§6.3.2) and RTT measurement (§6.3.1).

use super::multihome::MAX_PATHS;
use super::{tsn_le, tsn_lt, SctpSocket, Sent};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{SackChunk, DATA_CHUNK_HEADER_LEN};

/// What one SACK acknowledged, per path (RFC 9260 §7.2: the window arithmetic is per
/// destination). Lives on the stack for the duration of [`SctpSocket::on_sack`].
struct SackTally {
    /// Bytes newly acknowledged, per path.
    acked: [u64; MAX_PATHS],
    /// Bytes newly acknowledged, all paths.
    acked_bytes: u64,
    /// The highest TSN newly acknowledged.
    highest_new: Option<u32>,
    /// The earliest outstanding TSN before the SACK.
    lowest_outstanding: Option<u32>,
    /// Whether the earliest outstanding TSN was acknowledged.
    lowest_acked: bool,
    /// §6.3.2 R3 per address of a multi-homed peer: the earliest outstanding TSN of each path.
    lowest_per_path: [Option<u32>; MAX_PATHS],
    /// Whether each path's earliest outstanding TSN was acknowledged.
    lowest_acked_per_path: [bool; MAX_PATHS],
    /// Paths of the chunks the Cumulative TSN Ack passes (abandoned ones included).
    cum_paths: [bool; MAX_PATHS],
}

impl SctpSocket {
    /// RFC 9260 §6.2.1 (processing a received SACK), with the congestion control of §7.2 and
    /// the T3-rtx rules of §6.3.2.
    #[inline]
    pub(super) fn on_sack(&mut self, now: SimTime, s: &SackChunk) {
        self.stats.acks_received += 1;
        let cum = s.cum_tsn_ack;
        // §6.2.1 A: a Cumulative TSN Ack below the Cumulative TSN Ack Point is out of order:
        // drop the SACK. One acknowledging a TSN not yet sent is dropped too.
        if tsn_lt(cum, self.cum_ack_point) || !tsn_lt(cum, self.next_tsn) {
            return;
        }
        let cum_advanced = cum != self.cum_ack_point;
        let n_paths = self.paths.len();
        // Per path (RFC 9260 §7.2: the window arithmetic is per destination): flight size
        // before the SACK, bytes newly acknowledged.
        let mut flight_before = [0u64; MAX_PATHS];
        for (k, p) in self.paths.iter().enumerate() {
            flight_before[k] = p.flight_size;
        }
        let mut t = SackTally {
            acked: [0u64; MAX_PATHS],
            acked_bytes: 0,
            highest_new: None,
            lowest_outstanding: self.first_outstanding(),
            lowest_acked: false,
            lowest_per_path: [None::<u32>; MAX_PATHS],
            lowest_acked_per_path: [false; MAX_PATHS],
            cum_paths: [false; MAX_PATHS],
        };
        // §6.3.2 R3 per address of a multi-homed peer: the earliest outstanding TSN of each path.
        if n_paths > 1 {
            for x in self.sent.iter().filter(|x| !x.gap_acked && !x.abandoned) {
                t.lowest_per_path[x.path].get_or_insert(x.chunk.tsn);
            }
        }
        self.sack_cumulative(now, cum, n_paths, &mut t);
        self.cum_ack_point = cum;
        let highest_reported = s
            .gaps()
            .iter()
            .map(|g| cum.wrapping_add(g.end as u32))
            .fold(cum, |a, b| if tsn_lt(a, b) { b } else { a });
        let reneged = self.sack_gap_blocks(now, s, &mut t);
        if t.acked_bytes > 0 || cum_advanced {
            self.sack_clears_errors(&t);
        }
        // §7.2.4: miss indications, following HTNA: only TSNs below the highest TSN newly
        // acknowledged, or (in Fast Recovery, with the Cumulative TSN Ack advancing) every TSN
        // reported missing.
        let in_fr = self.paths.iter().any(|p| p.in_fast_recovery());
        let limit = if in_fr && cum_advanced {
            Some(highest_reported)
        } else {
            t.highest_new
        };
        let mut fr_paths = [false; MAX_PATHS];
        let new_fr = self.sack_miss_indications(limit, &mut fr_paths);
        // §7.2.1/§7.2.2: window growth from the bytes newly acknowledged, per path.
        let unit = self.cwnd_unit();
        let counts = cum_advanced || !self.sctp.growth_needs_cum_advance;
        let l = self.sctp.slow_start_l as u64;
        for (k, p) in self.paths.iter_mut().enumerate() {
            p.on_acked(t.acked[k], flight_before[k], counts, unit, l);
            // §7.2.4: leave Fast Recovery once the exit point is acknowledged.
            if p.fast_recovery_exit.is_some_and(|x| tsn_le(x, cum)) {
                p.fast_recovery_exit = None;
            }
        }
        if new_fr > 0 {
            self.sack_fast_retransmit(now, new_fr, &fr_paths, unit);
        }
        // §6.2.1 B: rwnd = a_rwnd − bytes still outstanding (D: marked chunks not counted).
        self.rwnd = (s.a_rwnd as u64).saturating_sub(self.outstanding_user_bytes());
        self.sack_t3_rtx(now, n_paths, reneged, &mut t);
        // RFC 3758 §3.5 C1–C5.
        if self.pr {
            self.forward_tsn_rules(now, true);
        }
    }

    /// §6.2.1: the chunks the Cumulative TSN Ack `cum` passes leave `sent`; those not yet
    /// acknowledged count as newly acknowledged in `t`.
    #[inline]
    fn sack_cumulative(&mut self, now: SimTime, cum: u32, n_paths: usize, t: &mut SackTally) {
        let lowest_outstanding = t.lowest_outstanding;
        // Cumulative part.
        if n_paths == 1 && self.n_marked == 0 && self.n_gap_acked == 0 && self.n_abandoned == 0 {
            // One destination, no chunk marked, gap-acknowledged or abandoned (the common case):
            // every chunk the Cumulative TSN Ack passes is newly acknowledged data of path 0,
            // handled as the general loop below handles such a chunk.
            while let Some(&x) = self.sent.front() {
                if !tsn_le(x.chunk.tsn, cum) {
                    break;
                }
                self.sent.pop_front();
                self.buffered_bytes -= x.chunk.len as u64;
                t.lowest_acked |= Some(x.chunk.tsn) == lowest_outstanding;
                t.cum_paths[0] = true;
                let size = self.size(&x.chunk);
                t.acked[0] += size;
                t.acked_bytes += size;
                t.highest_new = Some(x.chunk.tsn);
                self.on_chunk_acked(now, &x);
            }
        }
        while self.sent.front().is_some_and(|x| tsn_le(x.chunk.tsn, cum)) {
            let x = self.sent.pop_front().expect("checked");
            self.buffered_bytes -= x.chunk.len as u64;
            self.n_marked -= x.marked as usize;
            self.n_gap_acked -= x.gap_acked as usize;
            self.n_abandoned -= x.abandoned as usize;
            if Some(x.chunk.tsn) == lowest_outstanding {
                t.lowest_acked = true;
            }
            if t.lowest_per_path[x.path] == Some(x.chunk.tsn) {
                t.lowest_acked_per_path[x.path] = true;
            }
            t.cum_paths[x.path] = true;
            // RFC 3758 §3.5 A2: an abandoned chunk credits nothing.
            if !x.gap_acked && !x.abandoned {
                t.acked[x.path] += self.size(&x.chunk);
                t.acked_bytes += self.size(&x.chunk);
                t.highest_new = Some(x.chunk.tsn);
                self.on_chunk_acked(now, &x);
            }
        }
    }

    /// Gap Ack Blocks (§6.2.1; §3.3.4 offsets from the Cumulative TSN Ack): chunks newly
    /// reported count in `t`; returns whether a chunk reported before no longer is (renege,
    /// §6.2.1 C).
    #[inline]
    fn sack_gap_blocks(&mut self, now: SimTime, s: &SackChunk, t: &mut SackTally) -> bool {
        let cum = s.cum_tsn_ack;
        let lowest_outstanding = t.lowest_outstanding;
        // Gap Ack Blocks (§6.2.1; §3.3.4 offsets from the Cumulative TSN Ack).
        let in_gap = |tsn: u32| {
            let off = tsn.wrapping_sub(cum);
            s.gaps().iter().any(|g| off >= g.start as u32 && off <= g.end as u32)
        };
        let mut reneged = false;
        debug_assert_eq!(self.n_gap_acked, self.sent.iter().filter(|x| x.gap_acked).count());
        let gap_work = if s.gaps().is_empty() && self.n_gap_acked == 0 {
            0
        } else {
            self.sent.len()
        };
        for k in 0..gap_work {
            let x = self.sent[k];
            if x.abandoned {
                continue; // finally acknowledged already (RFC 3758 §3.5 A2)
            }
            let now_acked = in_gap(x.chunk.tsn);
            if now_acked && !x.gap_acked {
                t.acked[x.path] += self.size(&x.chunk);
                t.acked_bytes += self.size(&x.chunk);
                t.highest_new = Some(match t.highest_new {
                    Some(h) if tsn_lt(x.chunk.tsn, h) => h,
                    _ => x.chunk.tsn,
                });
                if Some(x.chunk.tsn) == lowest_outstanding {
                    t.lowest_acked = true;
                }
                if t.lowest_per_path[x.path] == Some(x.chunk.tsn) {
                    t.lowest_acked_per_path[x.path] = true;
                }
                self.on_chunk_acked(now, &x);
                let y = &mut self.sent[k];
                y.gap_acked = true;
                self.n_gap_acked += 1;
                self.n_marked -= y.marked as usize;
                y.marked = false;
                y.in_flight = false;
            } else if !now_acked && x.gap_acked {
                // §6.2.1 C: reneged: count a miss indication, make sure T3-rtx runs (R4).
                let y = &mut self.sent[k];
                y.gap_acked = false;
                self.n_gap_acked -= 1;
                y.misses += 1;
                reneged = true;
            }
        }
        reneged
    }

    /// §8.1, §8.2: an acknowledgement clears the association's error counter and that of the
    /// address the data was sent to, which becomes active again.
    #[inline]
    fn sack_clears_errors(&mut self, t: &SackTally) {
        self.assoc_errors = 0;
        let mut reactivated = false;
        for (k, p) in self.paths.iter_mut().enumerate() {
            if t.acked[k] > 0 || t.cum_paths[k] {
                // RFC 7829 §3: a potentially-failed destination is active again too.
                reactivated |= !p.active || p.potentially_failed;
                p.error_count = 0;
                p.active = true;
                p.potentially_failed = false;
            }
            if t.acked[k] > 0 {
                // §7.2.1: the one packet in flight after a timeout is acknowledged.
                p.one_packet_after_timeout = false;
            }
        }
        if reactivated {
            self.choose_data_path();
        }
    }

    /// §7.2.4: a miss indication for each chunk still missing below `limit`; a chunk reaching
    /// the threshold is marked for fast retransmit (its path set in `fr_paths`). Returns how
    /// many were marked.
    #[inline]
    fn sack_miss_indications(&mut self, limit: Option<u32>, fr_paths: &mut [bool; MAX_PATHS]) -> u64 {
        let mut new_fr = 0u64;
        if let Some(h) = limit.filter(|_| !self.sent.is_empty()) {
            for x in self.sent.iter_mut() {
                if !tsn_lt(x.chunk.tsn, h) {
                    break; // `sent` is in TSN order
                }
                if x.gap_acked || x.abandoned {
                    continue;
                }
                x.misses += 1;
                if x.misses >= self.sctp.fast_rtx_threshold && !x.fast_rtx && !x.marked {
                    // Step 1: mark for retransmission; step 5: not eligible again.
                    x.marked = true;
                    self.n_marked += 1;
                    x.fast_rtx = true;
                    fr_paths[x.path] = true;
                    if x.in_flight {
                        x.in_flight = false;
                        let sz = x.chunk.len as u64
                            + if self.sctp.flight_counts_headers {
                                DATA_CHUNK_HEADER_LEN as u64
                            } else {
                                0
                            };
                        self.paths[x.path].flight_size -= sz;
                    }
                    new_fr += 1;
                }
            }
        }
        new_fr
    }

    /// §7.2.4 steps 2, 3 and 7 for the `new_fr` chunks just marked on the paths `fr_paths`.
    #[inline]
    fn sack_fast_retransmit(&mut self, now: SimTime, new_fr: u64, fr_paths: &[bool; MAX_PATHS], unit: u64) {
        self.sstats.fast_retransmits += 1;
        self.sstats.fast_retransmit_chunks += new_fr;
        let highest = self.next_tsn.wrapping_sub(1);
        for (k, p) in self.paths.iter_mut().enumerate() {
            if fr_paths[k] && !p.in_fast_recovery() {
                // Steps 2 and 7: ssthresh/cwnd of §7.2.3, enter Fast Recovery up to the
                // highest TSN outstanding.
                p.on_congestion(false, unit);
                p.fast_recovery_exit = Some(highest);
                // Step 3: one packet of the lowest marked chunks, now, whatever cwnd says.
                self.fast_rtx_now = true;
            }
        }
        // Karn (§6.3.1 C5): a retransmitted chunk is not timed.
        self.cancel_rtt_timing_if_marked();
        // RFC 3758 §4.1 TR4, RFC 7496 §3.1: a marked chunk whose policy says so is
        // abandoned instead; the congestion response above stays (§3.5 F5).
        self.abandon_marked_due(now);
    }

    /// §6.3.2 R2/R3/R4 per destination: T3-rtx stops when nothing sent to it is outstanding
    /// (R2) and restarts when its earliest outstanding TSN was acknowledged (R3) or a renege
    /// left it without a timer (R4); §7.2.2: partial_bytes_acked returns to 0 when everything
    /// sent to it is acknowledged.
    #[inline]
    fn sack_t3_rtx(&mut self, now: SimTime, n_paths: usize, reneged: bool, t: &mut SackTally) {
        let (mut outstanding, mut unacked) = ([false; MAX_PATHS], [false; MAX_PATHS]);
        if n_paths == 1 {
            // One destination: the counters answer without a scan.
            outstanding[0] = !self.nothing_outstanding();
            unacked[0] = !self.sent.is_empty();
            t.lowest_acked_per_path[0] = t.lowest_acked;
        } else {
            for x in &self.sent {
                unacked[x.path] = true;
                outstanding[x.path] |= !x.gap_acked && !x.abandoned;
            }
        }
        for (k, p) in self.paths.iter_mut().enumerate() {
            if !outstanding[k] {
                p.t3_rtx = None;
                if !unacked[k] {
                    p.partial_bytes_acked = 0;
                }
            } else if t.lowest_acked_per_path[k] || (reneged && p.t3_rtx.is_none()) {
                p.t3_rtx = Some(now + p.rtt.rto());
            }
        }
    }

    /// A chunk acknowledged for the first time: flight size, RTT measurement (§6.3.1 C4/C5).
    #[inline(always)]
    pub(super) fn on_chunk_acked(&mut self, now: SimTime, x: &Sent) {
        let sz = self.size(&x.chunk);
        // The first new DATA sent to an alternate after a failover is acknowledged.
        if self.data_path != self.primary
            && x.path == self.data_path
            && x.tx_count == 1
            && self.failover_acked_at.is_none()
        {
            self.failover_acked_at = Some(now);
        }
        let p = &mut self.paths[x.path];
        if x.in_flight {
            p.flight_size -= sz;
        }
        if let Some((tsn, t0)) = p.rtt_timed {
            if tsn == x.chunk.tsn {
                p.rtt_timed = None;
                if x.tx_count == 1 {
                    let path = x.path;
                    self.take_rtt_sample(path, now.saturating_since(t0));
                }
            }
        }
    }

    pub(super) fn take_rtt_sample(&mut self, path: usize, r: SimDuration) {
        self.paths[path].rtt.on_sample(r);
    }

    pub(super) fn cancel_rtt_timing_if_marked(&mut self) {
        for p in 0..self.paths.len() {
            if let Some((tsn, _)) = self.paths[p].rtt_timed {
                if self.sent.iter().any(|x| x.chunk.tsn == tsn && x.marked) {
                    self.paths[p].rtt_timed = None;
                }
            }
        }
    }

    /// User bytes outstanding (neither acknowledged nor marked for retransmission).
    pub(super) fn outstanding_user_bytes(&self) -> u64 {
        if self.sent.is_empty() {
            return 0; // everything acknowledged: the common case of an in-order SACK
        }
        self.sent
            .iter()
            .filter(|s| !s.gap_acked && !s.marked && !s.abandoned)
            .map(|s| s.chunk.len as u64)
            .sum()
    }
}
