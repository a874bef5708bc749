//! The SACK sender's scoreboard and the routines of RFC 6675 §4: `Update()`, `IsLost()`,
//! `SetPipe()` and `NextSeg()`; and the receiver's choice of SACK blocks (RFC 2018 §4, RFC 2883
//! §4 for D-SACK).
//!
//! Sequence numbers are the connection's `u64` offsets (see [`seqspace`](super::seqspace)).
//! The RFC's variables are inclusive octet numbers; here every one of them is kept as the
//! *exclusive* end of what it names, so that ranges are half-open:
//!
//! | RFC 6675 | here |
//! |---|---|
//! | HighACK (highest octet cumulatively acknowledged) | `snd_una` (= HighACK + 1) |
//! | HighData (highest octet sent) | `snd_max` (= HighData + 1) |
//! | HighRxt (highest octet retransmitted) | [`Scoreboard::high_rxt`] (= HighRxt + 1, 0: none) |
//! | RescueRxt | [`Scoreboard::rescue_rxt`] (= RescueRxt + 1, `None`: undefined) |
//! | RecoveryPoint | the connection's `recover` (= RecoveryPoint + 1) |

use std::collections::VecDeque;

/// What `NextSeg()` (RFC 6675 §4) chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Rule 1: the lost hole `[start, end)` (clipped to one SMSS by the caller).
    Lost(u64, u64),
    /// Rule 2: previously unsent data.
    NewData,
    /// Rule 3: the unSACKed, not (yet) lost hole `[start, end)`.
    NotLost(u64, u64),
    /// Rule 4: the rescue retransmission, the last octets `[start, end)` of the highest hole.
    Rescue(u64, u64),
}

/// SACKed ranges above the cumulative acknowledgment, and the recovery variables of RFC 6675.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Disjoint, non-adjacent, sorted `[start, end)` ranges the receiver reported with SACK
    /// blocks, all above `snd_una`.
    sacked: VecDeque<(u64, u64)>,
    /// HighRxt + 1: end of the highest octet retransmitted in this recovery (0: none).
    pub high_rxt: u64,
    /// RescueRxt + 1 (`None`: undefined).
    pub rescue_rxt: Option<u64>,
}

/// A hole of the scoreboard: unSACKed octets `[start, end)` between `snd_una` and `snd_max`,
/// with whether `IsLost()` holds for them (it holds for all octets of a hole or for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    pub start: u64,
    pub end: u64,
    pub lost: bool,
}

impl Scoreboard {
    /// RFC 6675 §4 `Update()`: marks the octets of each block as SACKed, clipped to
    /// `[snd_una, snd_max)` (a D-SACK block below the cumulative acknowledgment, RFC 2883, or a
    /// block beyond what was sent says nothing new). Returns whether any octet was newly
    /// SACKed: the RFC 6675 §2 definition of a duplicate acknowledgment.
    pub fn update(&mut self, blocks: impl IntoIterator<Item = (u64, u64)>, snd_una: u64, snd_max: u64) -> bool {
        let mut new = false;
        for (l, r) in blocks {
            let (s, e) = (l.max(snd_una), r.min(snd_max));
            if s >= e {
                continue;
            }
            let before = self.sacked_bytes();
            self.insert(s, e);
            new |= self.sacked_bytes() > before;
        }
        new
    }

    fn insert(&mut self, start: u64, end: u64) {
        let i = self.sacked.partition_point(|&(_, e)| e < start);
        let (mut s, mut e) = (start, end);
        while let Some(&(rs, re)) = self.sacked.get(i) {
            if rs > e {
                break;
            }
            s = s.min(rs);
            e = e.max(re);
            self.sacked.remove(i);
        }
        self.sacked.insert(i, (s, e));
    }

    /// The cumulative acknowledgment moved to `snd_una`: forget what lies below it.
    pub fn advance(&mut self, snd_una: u64) {
        while let Some(&(s, e)) = self.sacked.front() {
            if e <= snd_una {
                self.sacked.pop_front();
            } else {
                if s < snd_una {
                    self.sacked[0].0 = snd_una;
                }
                break;
            }
        }
    }

    /// RFC 2018 §8 and RFC 6675 §5.1: after a retransmission timeout the receiver may have
    /// reneged, so the SACKed marks are expunged; the recovery variables go too.
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.high_rxt = 0;
        self.rescue_rxt = None;
    }

    /// SACKed octets in total.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|&(s, e)| e - s).sum()
    }

    /// The SACKed ranges, lowest first.
    pub fn sacked(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sacked.iter().copied()
    }

    /// Whether octet `seq` was SACKed.
    #[cfg(test)]
    pub fn is_sacked(&self, seq: u64) -> bool {
        let i = self.sacked.partition_point(|&(_, e)| e <= seq);
        self.sacked.get(i).is_some_and(|&(s, _)| s <= seq)
    }

    /// The SACKed range containing `seq`, if any.
    pub fn sacked_range_at(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.sacked.partition_point(|&(_, e)| e <= seq);
        self.sacked.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// One past the highest SACKed octet (RFC 6675 §4 NextSeg (1.b): "the highest octet
    /// covered by any received SACK"), if any.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked.back().map(|&(_, e)| e)
    }

    /// RFC 6675 §4 `IsLost(SeqNum)`: true when `dupthresh` discontiguous SACKed ranges lie
    /// above `seq`, or more than (DupThresh − 1)·SMSS SACKed octets do.
    pub fn is_lost(&self, seq: u64, dupthresh: u32, smss: u64) -> bool {
        let mut ranges = 0u64;
        let mut bytes = 0u64;
        for &(s, e) in self.sacked.iter().rev() {
            if e <= seq + 1 {
                break;
            }
            ranges += 1;
            bytes += e - s.max(seq + 1);
        }
        ranges >= dupthresh as u64 || bytes > (dupthresh.max(1) as u64 - 1) * smss
    }

    /// The holes between `snd_una` and `snd_max`, lowest first, each with `IsLost()` (computed
    /// in one pass from the top, since IsLost only counts what lies above).
    pub fn holes(&self, snd_una: u64, snd_max: u64, dupthresh: u32, smss: u64) -> Vec<Hole> {
        let mut out = Vec::with_capacity(self.sacked.len() + 1);
        let (mut ranges, mut bytes) = (0u64, 0u64);
        let mut top = snd_max;
        let limit = (dupthresh.max(1) as u64 - 1) * smss;
        for &(s, e) in self.sacked.iter().rev() {
            if e < top {
                out.push(Hole {
                    start: e,
                    end: top,
                    lost: ranges >= dupthresh as u64 || bytes > limit,
                });
            }
            ranges += 1;
            bytes += e - s;
            top = s;
        }
        if snd_una < top {
            out.push(Hole {
                start: snd_una,
                end: top,
                lost: ranges >= dupthresh as u64 || bytes > limit,
            });
        }
        out.reverse();
        out
    }

    /// RFC 6675 §4 `SetPipe()`: the octets between HighACK and HighData that are not SACKed and
    /// not lost (a), plus those at or below HighRxt, retransmitted (b).
    pub fn pipe(&self, snd_una: u64, snd_max: u64, dupthresh: u32, smss: u64) -> u64 {
        self.pipe_and_lost(snd_una, snd_max, dupthresh, smss).0
    }

    /// [`Self::pipe`] and the octets deemed lost (IsLost) and not retransmitted (above
    /// HighRxt), walking the holes from the top without collecting them (every ACK of a
    /// model-based controller asks).
    pub fn pipe_and_lost(&self, snd_una: u64, snd_max: u64, dupthresh: u32, smss: u64) -> (u64, u64) {
        let count = |start: u64, end: u64, lost: bool| {
            let rxt = self.high_rxt.min(end).saturating_sub(start);
            if lost {
                (rxt, end - start - rxt)
            } else {
                (end - start + rxt, 0)
            }
        };
        let (mut ranges, mut bytes, mut pipe, mut lost) = (0u64, 0u64, 0u64, 0u64);
        let mut top = snd_max;
        let limit = (dupthresh.max(1) as u64 - 1) * smss;
        for &(s, e) in self.sacked.iter().rev() {
            if e < top {
                let (p, l) = count(e, top, ranges >= dupthresh as u64 || bytes > limit);
                pipe += p;
                lost += l;
            }
            ranges += 1;
            bytes += e - s;
            top = s;
        }
        if snd_una < top {
            let (p, l) = count(snd_una, top, ranges >= dupthresh as u64 || bytes > limit);
            pipe += p;
            lost += l;
        }
        (pipe, lost)
    }

    /// RFC 6675 §4 `NextSeg()`, rules (1) to (4); `new_data` says whether rule (2) could send
    /// (unsent data within the receiver's window).
    pub fn next_seg(&self, snd_una: u64, snd_max: u64, dupthresh: u32, smss: u64, new_data: bool) -> Option<NextSeg> {
        let holes = self.holes(snd_una, snd_max, dupthresh, smss);
        let highest = self.highest_sacked().unwrap_or(0);
        // (1.a) S2 > HighRxt, (1.b) S2 < the highest SACKed octet, (1.c) IsLost(S2).
        let candidate = |want_lost: bool| {
            holes.iter().find_map(|h| {
                let s = h.start.max(self.high_rxt);
                (s < h.end && s < highest && h.lost == want_lost).then_some((s, h.end))
            })
        };
        if let Some((s, e)) = candidate(true) {
            return Some(NextSeg::Lost(s, e));
        }
        // (2) Previously unsent data, if the receiver's window allows.
        if new_data {
            return Some(NextSeg::NewData);
        }
        // (3) An unSACKed octet S3 > HighRxt below the highest SACKed one (not lost: rule (1)
        // took the lost ones).
        if let Some((s, e)) = candidate(false) {
            return Some(NextSeg::NotLost(s, e));
        }
        // (4) One rescue retransmission per recovery, of a segment holding the highest
        // outstanding unSACKed octet, if HighACK > RescueRxt or RescueRxt is undefined.
        if let Some(h) = holes.last() {
            if !matches!(self.rescue_rxt, Some(r) if snd_una <= r) {
                return Some(NextSeg::Rescue(h.start.max(h.end.saturating_sub(smss)), h.end));
            }
        }
        None
    }
}

/// A D-SACK report (RFC 2883 §4): the duplicate range, and the queued block it lies in.
pub type Dsack = ((u64, u64), Option<(u64, u64)>);

/// The receiver's memory of which out-of-order blocks it reported last (RFC 2018 §4): the
/// start offsets of the most recently received out-of-order segments, most recent first.
#[derive(Clone, Debug, Default)]
pub struct SackHistory {
    recent: VecDeque<u64>,
    /// A D-SACK block to report in the next ACK (RFC 2883 §4), with the block of queued data it
    /// belongs to, if above the cumulative acknowledgment.
    pub dsack: Option<Dsack>,
}

/// How many remembered segments to keep: more than the four blocks an option carries, so that
/// blocks since merged into one are not counted twice.
const HISTORY: usize = 16;

impl SackHistory {
    /// A segment starting at `start` was received out of order (its block goes first).
    pub fn received(&mut self, start: u64) {
        self.recent.retain(|&s| s != start);
        self.recent.push_front(start);
        self.recent.truncate(HISTORY);
    }

    /// The blocks to report, at most `max`: a D-SACK block first if pending (and the block of
    /// queued data it belongs to), then the block of the most recently received segment, then
    /// the other most recent ones that are not already included (RFC 2018 §4), each as found in
    /// `held` now (`range_of(seq)` gives the out-of-order range holding `seq`).
    pub fn blocks(
        &mut self,
        rcv_nxt: u64,
        max: usize,
        range_of: impl Fn(u64) -> Option<(u64, u64)>,
    ) -> Vec<(u64, u64)> {
        self.recent.retain(|&s| s >= rcv_nxt);
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(max);
        if let Some((d, above)) = self.dsack {
            if max > 0 {
                out.push(d);
            }
            if let Some(b) = above.and_then(|b| range_of(b.0)) {
                if out.len() < max {
                    out.push(b);
                }
            }
        }
        for &s in &self.recent {
            if out.len() >= max {
                break;
            }
            if let Some(b) = range_of(s) {
                // Skip a block already in the option (the D-SACK one is a duplicate report
                // and does not count).
                let skip_first = self.dsack.is_some() as usize;
                if !out.iter().skip(skip_first.min(out.len())).any(|&x| x == b) {
                    out.push(b);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMSS: u64 = 100;

    fn board(ranges: &[(u64, u64)]) -> Scoreboard {
        let mut sb = Scoreboard::default();
        sb.update(ranges.iter().copied(), 1, 10_000);
        sb
    }

    /// RFC 6675 §4 IsLost: three discontiguous SACKed ranges above, or more than 2·SMSS SACKed
    /// octets above.
    #[test]
    fn is_lost_counts_ranges_and_bytes_above() {
        let sb = board(&[(201, 301), (401, 501)]);
        assert!(!sb.is_lost(1, 3, SMSS), "two ranges, 200 octets: not lost");
        let sb = board(&[(201, 301), (401, 501), (601, 602)]);
        assert!(sb.is_lost(1, 3, SMSS), "three discontiguous ranges");
        assert!(!sb.is_lost(301, 3, SMSS), "only two above 301");
        let sb = board(&[(101, 402)]);
        assert!(sb.is_lost(1, 3, SMSS), "301 octets > 2·SMSS");
        assert!(!sb.is_lost(101, 3, SMSS) || sb.is_sacked(101));
        let sb = board(&[(101, 301)]);
        assert!(!sb.is_lost(1, 3, SMSS), "exactly 2·SMSS is not more");
    }

    /// RFC 6675 §4 Update(): blocks are clipped to [HighACK, HighData]; a D-SACK block below
    /// the cumulative ACK is no news; adjacent blocks merge.
    #[test]
    fn update_clips_merges_and_reports_news() {
        let mut sb = Scoreboard::default();
        assert!(sb.update([(201, 301)], 101, 1001));
        assert!(!sb.update([(201, 301)], 101, 1001), "the same block again: no news");
        assert!(!sb.update([(1, 51)], 101, 1001), "a D-SACK below snd_una");
        assert!(sb.update([(301, 401), (2000, 3000)], 101, 1001));
        assert_eq!(sb.sacked().collect::<Vec<_>>(), [(201, 401)]);
        sb.advance(251);
        assert_eq!(sb.sacked().collect::<Vec<_>>(), [(251, 401)]);
        sb.advance(401);
        assert_eq!(sb.highest_sacked(), None);
    }

    /// RFC 6675 §4 SetPipe(): unSACKed octets not lost count once, retransmitted ones (at or
    /// below HighRxt) once more.
    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmitted() {
        // Segments of 100 from 1: holes at 1, 201, 401; SACKed 101, 301, 501..1001.
        let mut sb = board(&[(101, 201), (301, 401), (501, 1001)]);
        let holes = sb.holes(1, 1101, 3, SMSS);
        assert_eq!(
            holes,
            [
                Hole {
                    start: 1,
                    end: 101,
                    lost: true
                },
                Hole {
                    start: 201,
                    end: 301,
                    lost: true
                },
                Hole {
                    start: 401,
                    end: 501,
                    lost: true
                },
                Hole {
                    start: 1001,
                    end: 1101,
                    lost: false
                },
            ]
        );
        assert_eq!(sb.pipe(1, 1101, 3, SMSS), 100, "only the unSACKed tail is in the pipe");
        assert_eq!(sb.pipe_and_lost(1, 1101, 3, SMSS), (100, 300), "three lost holes");
        sb.high_rxt = 101;
        assert_eq!(sb.pipe(1, 1101, 3, SMSS), 200, "plus the retransmission of the first");
        assert_eq!(
            sb.pipe_and_lost(1, 1101, 3, SMSS),
            (200, 200),
            "the first is retransmitted"
        );
    }

    /// RFC 6675 §4 NextSeg rules (1) to (4).
    #[test]
    fn next_seg_rules_in_order() {
        let mut sb = board(&[(101, 201), (301, 401), (501, 601)]);
        // (1): the first lost hole above HighRxt.
        assert_eq!(sb.next_seg(1, 701, 3, SMSS, true), Some(NextSeg::Lost(1, 101)));
        sb.high_rxt = 101;
        // Hole 201 has two ranges above: not lost, so (2) new data comes first.
        assert_eq!(sb.next_seg(1, 701, 3, SMSS, true), Some(NextSeg::NewData));
        // (3) without new data: the unSACKed octet above HighRxt below the highest SACK.
        assert_eq!(sb.next_seg(1, 701, 3, SMSS, false), Some(NextSeg::NotLost(201, 301)));
        sb.high_rxt = 501;
        // (4): rescue, once: the end of the highest hole (601..701), while RescueRxt is undefined
        // or below HighACK.
        assert_eq!(sb.next_seg(1, 701, 3, SMSS, false), Some(NextSeg::Rescue(601, 701)));
        sb.rescue_rxt = Some(701);
        assert_eq!(sb.next_seg(1, 701, 3, SMSS, false), None, "(5): failure");
    }

    /// RFC 2018 §4: the first block holds the latest segment, then the most recent others, up
    /// to the limit; RFC 2883 §4: a D-SACK block goes first, then the block it came from.
    #[test]
    fn receiver_blocks_most_recent_first() {
        let held = [(100, 200), (300, 400), (500, 600), (700, 800), (900, 1000)];
        let range_of = |s: u64| held.iter().copied().find(|&(a, b)| a <= s && s < b);
        let mut h = SackHistory::default();
        for &(s, _) in &held {
            h.received(s);
        }
        h.received(350); // a segment in the middle of the second block
        assert_eq!(
            h.blocks(1, 4, range_of),
            [(300, 400), (900, 1000), (700, 800), (500, 600)]
        );
        assert_eq!(h.blocks(1, 3, range_of), [(300, 400), (900, 1000), (700, 800)]);
        assert_eq!(h.blocks(450, 4, range_of), [(900, 1000), (700, 800), (500, 600)]);
        h.dsack = Some(((320, 340), Some((300, 400))));
        h.recent.clear();
        h.received(300);
        h.received(900);
        assert_eq!(h.blocks(1, 3, range_of), [(320, 340), (300, 400), (900, 1000)]);
    }
}
