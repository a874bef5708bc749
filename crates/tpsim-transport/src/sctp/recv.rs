//! The receiving half of an association: TSN bookkeeping for SACKs (RFC 9260 §6.2, §3.3.4),
//! reassembly of fragmented messages (§6.9), ordered and unordered delivery per stream (§6.5,
//! §6.6), the receive window (§6.2), the FORWARD TSN of PR-SCTP (RFC 3758 §3.6) and the
//! head-of-line blocking statistics.
//!
//! TSNs (32-bit, serial arithmetic of RFC 9260 §1.6) are widened to `u64` here: `ext` is the
//! TSN's distance from a fixed origin, so maps stay ordered across wrap-around.

use std::collections::{BTreeMap, VecDeque};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{DataChunk, DataFlags, Payload, SackChunk, SkippedStream};

/// A DATA chunk held until its message is complete.
#[derive(Clone, Copy, Debug)]
struct Held {
    chunk: DataChunk,
}

/// A reassembled message waiting for delivery.
#[derive(Clone, Copy, Debug)]
pub struct Complete {
    /// Stream it arrived on.
    pub stream: u16,
    /// User bytes.
    pub len: u32,
    /// The PPID of its first fragment (the message id's low 32 bits).
    pub msg_id: u32,
    /// What the data stands for (from its first fragment).
    pub payload: Payload,
    /// When its last missing fragment arrived.
    pub complete_at: SimTime,
    /// Delivered in order within its stream (false: unordered).
    pub ordered: bool,
}

#[derive(Debug, Default)]
struct InStream {
    /// Extended SSN expected next.
    next_ssn: u64,
    /// Complete ordered messages waiting for earlier ones, by extended SSN.
    pending: BTreeMap<u64, Complete>,
    delivered: u64,
}

/// Head-of-line blocking times, in a log-linear histogram (about 1.6 % resolution) so that its
/// memory stays fixed however many messages arrive.
#[derive(Clone, Debug, Default)]
pub struct HolStats {
    zero: u64,
    /// The buckets of the non-zero waits: allocated (64 · SUB counters) at the first one, so
    /// that an association whose messages never wait costs no histogram.
    buckets: Vec<u64>,
    count: u64,
    sum_ns: u128,
}

const SUB: u32 = 64;

impl HolStats {
    fn bucket(ns: u64) -> usize {
        let e = 63 - ns.leading_zeros();
        if e < 6 {
            return ns as usize;
        }
        let m = (ns >> (e - 6)) as u32 & (SUB - 1);
        (e * SUB + m) as usize
    }
    /// The smallest value of bucket `b`, ns.
    fn low(b: usize) -> u64 {
        let (e, m) = (b as u32 / SUB, b as u32 % SUB);
        if e < 6 {
            return b as u64;
        }
        (1u64 << e) | ((m as u64) << (e - 6))
    }
    /// Records one message's wait.
    pub fn record(&mut self, d: SimDuration) {
        self.count += 1;
        self.sum_ns += d.0 as u128;
        if d.0 == 0 {
            self.zero += 1;
        } else {
            if self.buckets.is_empty() {
                self.buckets = vec![0; 64 * SUB as usize];
            }
            self.buckets[Self::bucket(d.0)] += 1;
        }
    }
    /// Records a wait of 0 ([`record`](Self::record) of zero, without its arithmetic).
    #[inline]
    pub fn record_zero(&mut self) {
        self.count += 1;
        self.zero += 1;
    }
    /// Messages recorded.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Mean wait, seconds.
    pub fn mean_s(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e9)
    }
    /// The `q` quantile (0..=1) of the wait, seconds (the low edge of its bucket).
    pub fn quantile_s(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank <= self.zero {
            return Some(0.0);
        }
        let mut seen = self.zero;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(Self::low(b) as f64 / 1e9);
            }
        }
        None
    }
}

/// Outcome of one DATA chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// New: kept.
    New,
    /// Already received (reported as a duplicate TSN).
    Duplicate,
    /// Dropped for lack of buffer space (RFC 9260 §6.2).
    NoRoom,
    /// Its stream does not exist (RFC 9260 §6.5: ERROR "Invalid Stream Identifier"); the TSN is
    /// acknowledged, the data dropped.
    BadStream,
}

/// Receive-side state of an association.
#[derive(Debug)]
pub struct Receiver {
    /// Extended TSN of the Cumulative TSN Ack Point (last TSN received in sequence).
    cum: u64,
    /// Chunks above `cum`, or at or below it but belonging to incomplete messages.
    held: BTreeMap<u64, Held>,
    /// Extended TSNs above `cum` received (for Gap Ack Blocks; chunks of streams that do not
    /// exist count too).
    above: BTreeMap<u64, ()>,
    /// Bytes held: incomplete messages, complete ones waiting for delivery.
    held_bytes: u64,
    streams: Vec<InStream>,
    /// Complete messages ready for the application.
    ready: VecDeque<Complete>,
    ready_bytes: u64,
    /// Duplicate TSNs seen since the last SACK.
    dups: Vec<u32>,
    buffer: u64,
    /// Whether the application is not reading (messages stay in `ready`).
    pub paused: bool,
    /// Head-of-line blocking of ordered messages.
    pub hol: HolStats,
}

/// 2^32: extended TSNs start here so that TSNs just below the initial one stay positive.
const ORIGIN: u64 = 1 << 32;

impl Receiver {
    /// Receiver for a peer whose Initial TSN is `initial_tsn`, with `streams` inbound streams
    /// and a buffer of `buffer` bytes.
    pub fn new(initial_tsn: u32, streams: u16, buffer: u32) -> Receiver {
        Receiver {
            cum: ORIGIN + initial_tsn as u64 - 1,
            held: BTreeMap::new(),
            above: BTreeMap::new(),
            held_bytes: 0,
            streams: (0..streams).map(|_| InStream::default()).collect(),
            ready: VecDeque::new(),
            ready_bytes: 0,
            dups: Vec::new(),
            buffer: buffer as u64,
            paused: false,
            hol: HolStats::default(),
        }
    }

    /// The widened form of `tsn` (nearest to the Cumulative TSN Ack Point).
    fn ext(&self, tsn: u32) -> u64 {
        let d = tsn.wrapping_sub(self.cum as u32) as i32 as i64;
        (self.cum as i64 + d) as u64
    }

    /// The Cumulative TSN Ack (wire form).
    pub fn cum_tsn(&self) -> u32 {
        self.cum as u32
    }

    /// Whether TSNs above the Cumulative TSN Ack Point were received (a gap exists).
    pub fn has_gaps(&self) -> bool {
        !self.above.is_empty()
    }

    /// Free buffer space, bytes.
    pub fn free(&self) -> u64 {
        self.buffer.saturating_sub(self.held_bytes + self.ready_bytes)
    }

    /// Number of inbound streams.
    pub fn stream_count(&self) -> u16 {
        self.streams.len() as u16
    }

    /// Streams on which at least one message was delivered.
    pub fn streams_used(&self) -> usize {
        self.streams.iter().filter(|s| s.delivered > 0).count()
    }

    /// RFC 9260 §6.2: takes one DATA chunk received at `now`.
    #[inline]
    pub fn on_data(&mut self, now: SimTime, c: &DataChunk) -> Accept {
        let t = self.ext(c.tsn);
        if t == self.cum + 1
            && self.above.is_empty()
            && c.flags.contains(DataFlags::WHOLE)
            && (c.stream_id as usize) < self.streams.len()
            && c.len as u64 <= self.free()
        {
            // In sequence, a whole message of an existing stream, with room: what the general
            // path below does with it, without its checks (the common case, no map touched).
            self.cum = t;
            self.complete(now, c, c.len as u32);
            return Accept::New;
        }
        self.on_data_general(now, c, t)
    }

    /// The common case of [`on_data`](Self::on_data) with delivery: a new chunk in sequence
    /// (no gap), a whole message of an existing stream with room, that is the next of its
    /// stream (or unordered), while no message waits in the ready queue and the application
    /// reads. It is accepted (as `on_data` would, `Accept::New`) and returned for delivery at
    /// once instead of going through the ready queue: what `on_data` followed by
    /// [`pop_ready`](Self::pop_ready) gives, in the same order. `None`: nothing done, call
    /// `on_data`.
    #[inline]
    pub fn take_in_sequence(&mut self, now: SimTime, c: &DataChunk) -> Option<Complete> {
        let t = self.ext(c.tsn);
        if t != self.cum + 1
            || !self.above.is_empty()
            || !c.flags.contains(DataFlags::WHOLE)
            || !self.ready.is_empty()
            || self.paused
        {
            return None;
        }
        let ordered = !c.flags.contains(DataFlags::UNORDERED);
        let s = self.streams.get_mut(c.stream_id as usize)?;
        // RFC 9260 §6.5: the next message of its stream (no wait); §6.6: unordered at once.
        if ordered && (c.ssn != s.next_ssn as u16 || !s.pending.is_empty()) {
            return None;
        }
        let free = self.buffer.saturating_sub(self.held_bytes + self.ready_bytes);
        if c.len as u64 > free {
            return None;
        }
        self.cum = t;
        s.delivered += 1;
        if ordered {
            s.next_ssn += 1;
            self.hol.record_zero();
        }
        Some(Complete {
            stream: c.stream_id,
            len: c.len as u32,
            msg_id: c.msg_id,
            payload: c.payload,
            complete_at: now,
            ordered,
        })
    }

    /// [`on_data`](Self::on_data) for any chunk; `t` is its extended TSN.
    fn on_data_general(&mut self, now: SimTime, c: &DataChunk, t: u64) -> Accept {
        if t <= self.cum || self.above.contains_key(&t) {
            self.dups.push(c.tsn);
            return Accept::Duplicate;
        }
        if c.stream_id as usize >= self.streams.len() {
            // RFC 9260 §6.5: acknowledge the TSN, drop the data, report the error.
            self.mark_received(t);
            return Accept::BadStream;
        }
        let need = c.len as u64;
        if need > self.free() {
            // RFC 9260 §6.2: with no room, a chunk above the highest TSN received is dropped;
            // one below it takes the place of the highest chunks held for reordering.
            let highest = self.above.keys().next_back().copied();
            if highest.is_none_or(|h| t > h) {
                return Accept::NoRoom;
            }
            while need > self.free() {
                let Some((&h, _)) = self.held.iter().next_back() else {
                    break;
                };
                if h <= t || h <= self.cum {
                    break;
                }
                self.renege(h);
            }
            if need > self.free() {
                return Accept::NoRoom;
            }
        }
        if t == self.cum + 1 && self.above.is_empty() && c.flags.contains(DataFlags::WHOLE) {
            // In sequence, a whole message: the Cumulative TSN Ack Point moves and no
            // reassembly is needed (the common case, no map touched).
            self.cum = t;
            self.complete(now, c, c.len as u32);
            return Accept::New;
        }
        self.mark_received(t);
        self.held.insert(t, Held { chunk: *c });
        self.held_bytes += need;
        self.try_complete(now, t);
        Accept::New
    }

    /// Forgets held chunk `t` (reneging, RFC 9260 §6.2): its TSN will not be acknowledged.
    fn renege(&mut self, t: u64) {
        if let Some(h) = self.held.remove(&t) {
            self.held_bytes -= h.chunk.len as u64;
            self.above.remove(&t);
        }
    }

    fn mark_received(&mut self, t: u64) {
        self.above.insert(t, ());
        // Advance the Cumulative TSN Ack Point over contiguous TSNs.
        while self.above.remove(&(self.cum + 1)).is_some() {
            self.cum += 1;
        }
    }

    /// Reassembly (RFC 9260 §6.9): fragments of a message have consecutive TSNs from a B chunk
    /// to an E chunk; when the one containing `t` is whole, it moves to its stream.
    fn try_complete(&mut self, now: SimTime, t: u64) {
        let c = self.held[&t].chunk;
        let mut first = t;
        if !c.flags.contains(DataFlags::BEGIN) {
            loop {
                let Some(h) = self.held.get(&(first - 1)) else { return };
                first -= 1;
                if h.chunk.flags.contains(DataFlags::BEGIN) {
                    break;
                }
                if h.chunk.flags.contains(DataFlags::END) {
                    return; // belongs to an earlier message: ours lacks its start
                }
            }
        }
        let mut last = t;
        if !c.flags.contains(DataFlags::END) {
            loop {
                let Some(h) = self.held.get(&(last + 1)) else { return };
                last += 1;
                if h.chunk.flags.contains(DataFlags::END) {
                    break;
                }
                if h.chunk.flags.contains(DataFlags::BEGIN) {
                    return;
                }
            }
        }
        let head = self.held[&first].chunk;
        let mut len = 0u32;
        for k in first..=last {
            let h = self.held.remove(&k).expect("run checked above");
            len += h.chunk.len as u32;
        }
        self.held_bytes -= len as u64;
        self.complete(now, &head, len);
    }

    /// A message whose first fragment is `head` and whose user data totals `len` bytes is whole:
    /// delivered now if unordered (RFC 9260 §6.6), else in SSN order within its stream (§6.5).
    #[inline]
    fn complete(&mut self, now: SimTime, head: &DataChunk, len: u32) {
        let ordered = !head.flags.contains(DataFlags::UNORDERED);
        let m = Complete {
            stream: head.stream_id,
            len,
            msg_id: head.msg_id,
            payload: head.payload,
            complete_at: now,
            ordered,
        };
        if !ordered {
            // RFC 9260 §6.6: unordered messages are delivered as soon as they are complete.
            self.push_ready(now, m);
            return;
        }
        // RFC 9260 §6.5: ordered messages in SSN order within their stream.
        let stream = head.stream_id as usize;
        let s = &mut self.streams[stream];
        let d = head.ssn.wrapping_sub(s.next_ssn as u16) as i16 as i64;
        let ssn = (s.next_ssn as i64 + d) as u64;
        if ssn < s.next_ssn {
            return; // cannot happen with TSN duplicate detection; ignore defensively
        }
        if ssn == s.next_ssn && s.pending.is_empty() {
            // The next message of its stream: no wait (the common case, no map touched).
            s.next_ssn += 1;
            self.hol.record(SimDuration::ZERO);
            self.push_ready(now, m);
            return;
        }
        s.pending.insert(ssn, m);
        self.held_bytes += len as u64;
        self.release_in_order(now, stream);
    }

    /// Delivers the complete messages of `stream` that follow in SSN order.
    fn release_in_order(&mut self, now: SimTime, stream: usize) {
        loop {
            let s = &mut self.streams[stream];
            let Some(m) = s.pending.remove(&s.next_ssn) else { break };
            s.next_ssn += 1;
            self.held_bytes -= m.len as u64;
            // Head-of-line blocking: how long a complete message waited for earlier ones.
            self.hol.record(now.saturating_since(m.complete_at));
            self.push_ready(now, m);
        }
    }

    /// RFC 3758 §3.6: a FORWARD TSN with New Cumulative TSN `new_cum` and the highest SSN
    /// skipped per stream, received at `now`. False (nothing changes) if it is out of date (at
    /// or below the Cumulative TSN Ack Point). Otherwise the point moves to `new_cum` and on over
    /// TSNs received contiguously; partially reassembled messages still missing a TSN at or
    /// below `new_cum` are dropped; on each stream listed, complete messages up to the SSN
    /// skipped are delivered, then those that follow in order.
    pub fn forward_tsn(&mut self, now: SimTime, new_cum: u32, skipped: &[SkippedStream]) -> bool {
        let nc = self.ext(new_cum);
        if nc <= self.cum {
            return false;
        }
        // The one message whose fragments may stay: it holds every TSN from its first fragment
        // up to `new_cum` (what it lacks is above).
        let mut keep_from = None;
        if self.held.contains_key(&nc) {
            let mut b = nc;
            loop {
                if self.held[&b].chunk.flags.contains(DataFlags::BEGIN) {
                    keep_from = Some(b);
                    break;
                }
                match self.held.get(&(b - 1)) {
                    Some(h) if !h.chunk.flags.contains(DataFlags::END) => b -= 1,
                    _ => break,
                }
            }
        }
        let kept = self.held.split_off(&keep_from.unwrap_or(nc + 1));
        let dropped = std::mem::replace(&mut self.held, kept);
        self.held_bytes -= dropped.values().map(|h| h.chunk.len as u64).sum::<u64>();
        self.above = self.above.split_off(&(nc + 1));
        self.cum = nc;
        while self.above.remove(&(self.cum + 1)).is_some() {
            self.cum += 1;
        }
        for sk in skipped {
            self.skip_ssn(now, sk.stream_id, sk.ssn);
        }
        true
    }

    /// RFC 3758 §3.6: SSNs up to `ssn` of `stream` were skipped: the complete messages waiting
    /// among them are delivered (in SSN order), and ordered delivery resumes after `ssn`.
    fn skip_ssn(&mut self, now: SimTime, stream: u16, ssn: u16) {
        let Some(s) = self.streams.get_mut(stream as usize) else {
            return;
        };
        let d = ssn.wrapping_sub(s.next_ssn as u16) as i16 as i64;
        if d < 0 {
            return; // already passed
        }
        let last = s.next_ssn + d as u64;
        let later = s.pending.split_off(&(last + 1));
        let stranded = std::mem::replace(&mut s.pending, later);
        s.next_ssn = last + 1;
        for m in stranded.into_values() {
            self.held_bytes -= m.len as u64;
            self.hol.record(now.saturating_since(m.complete_at));
            self.push_ready(now, m);
        }
        self.release_in_order(now, stream as usize);
    }

    fn push_ready(&mut self, _now: SimTime, m: Complete) {
        self.streams[m.stream as usize].delivered += 1;
        self.ready_bytes += m.len as u64;
        self.ready.push_back(m);
    }

    /// The next message for the application (none while paused).
    pub fn pop_ready(&mut self) -> Option<Complete> {
        if self.paused {
            return None;
        }
        let m = self.ready.pop_front()?;
        self.ready_bytes -= m.len as u64;
        Some(m)
    }

    /// RFC 9260 §6.2/§3.3.4: a SACK for the current state, advertising `a_rwnd`, with the Gap
    /// Ack Blocks (lowest first, as many as the chunk holds) and the duplicate TSNs since the
    /// last SACK (then forgotten).
    pub fn build_sack(&mut self, a_rwnd: u32) -> SackChunk {
        let mut s = SackChunk::new(self.cum as u32, a_rwnd);
        if self.above.is_empty() && self.dups.is_empty() {
            return s; // in sequence, no duplicates: the common SACK
        }
        let mut run: Option<(u64, u64)> = None;
        for &t in self.above.keys() {
            match run {
                Some((a, b)) if t == b + 1 => run = Some((a, t)),
                Some((a, b)) => {
                    if !push_gap(&mut s, self.cum, a, b) {
                        run = None;
                        break;
                    }
                    run = Some((t, t));
                }
                None => run = Some((t, t)),
            }
        }
        if let Some((a, b)) = run {
            push_gap(&mut s, self.cum, a, b);
        }
        for d in self.dups.drain(..) {
            if !s.push_dup(d) {
                break;
            }
        }
        self.dups.clear();
        s
    }
}

fn push_gap(s: &mut SackChunk, cum: u64, a: u64, b: u64) -> bool {
    let (start, end) = (a - cum, b - cum);
    if end > u16::MAX as u64 {
        return false;
    }
    s.push_gap(start as u16, end as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(tsn: u32, stream: u16, ssn: u16, flags: DataFlags, len: u16, id: u64) -> DataChunk {
        DataChunk {
            flags,
            tsn,
            stream_id: stream,
            ssn,
            len,
            msg_id: id as u32,
            payload: Payload::default(),
        }
    }
    const W: DataFlags = DataFlags::WHOLE;

    /// RFC 9260 §3.3.4: Gap Ack Blocks are offsets from the Cumulative TSN Ack; duplicates are
    /// reported once.
    #[test]
    fn sack_reports_gaps_and_duplicates() {
        let mut r = Receiver::new(u32::MAX - 1, 1, 100_000); // wraps during the test
        let now = SimTime::ZERO;
        assert_eq!(r.on_data(now, &chunk(u32::MAX - 1, 0, 0, W, 10, 0)), Accept::New);
        assert_eq!(r.on_data(now, &chunk(1, 0, 3, W, 10, 3)), Accept::New);
        assert_eq!(r.on_data(now, &chunk(2, 0, 4, W, 10, 4)), Accept::New);
        assert_eq!(r.on_data(now, &chunk(4, 0, 6, W, 10, 6)), Accept::New);
        assert_eq!(r.on_data(now, &chunk(1, 0, 3, W, 10, 3)), Accept::Duplicate);
        let s = r.build_sack(500);
        assert_eq!(s.cum_tsn_ack, u32::MAX - 1);
        let g: Vec<_> = s.gaps().iter().map(|g| (g.start, g.end)).collect();
        assert_eq!(g, vec![(3, 4), (6, 6)]);
        assert_eq!(s.dups(), &[1]);
        assert!(r.build_sack(500).dups().is_empty());
        // Messages 3, 4 and 6 wait for 1, 2 (SSN order): nothing ready yet but message 0.
        assert_eq!(r.pop_ready().map(|m| m.msg_id as u64), Some(0));
        assert!(r.pop_ready().is_none());
    }

    /// RFC 9260 §6.9: fragments are reassembled; §6.5: ordered delivery per stream, other
    /// streams not blocked; §6.6: unordered at once.
    #[test]
    fn reassembly_and_ordering() {
        let mut r = Receiver::new(10, 2, 100_000);
        let t = |ms: u64| SimTime(ms * 1_000_000);
        let b = DataFlags::BEGIN;
        let e = DataFlags::END;
        // Message 0 on stream 0 in three fragments 10, 11, 12; message 1 on stream 1 (13);
        // message 2 on stream 0 (14); message 3 unordered on stream 0 (15).
        r.on_data(t(0), &chunk(13, 1, 0, W, 5, 1));
        r.on_data(t(1), &chunk(14, 0, 1, W, 5, 2));
        r.on_data(t(2), &chunk(15, 0, 0, W.with(DataFlags::UNORDERED), 5, 3));
        r.on_data(t(3), &chunk(12, 0, 0, e, 100, 0));
        r.on_data(t(4), &chunk(10, 0, 0, b, 100, 0));
        let ids: Vec<_> = std::iter::from_fn(|| r.pop_ready()).map(|m| m.msg_id as u64).collect();
        assert_eq!(ids, vec![1, 3]);
        r.on_data(t(9), &chunk(11, 0, 0, DataFlags::default(), 100, 0));
        let got: Vec<_> = std::iter::from_fn(|| r.pop_ready())
            .map(|m| (m.msg_id as u64, m.len))
            .collect();
        assert_eq!(got, vec![(0, 300), (2, 5)]);
        assert_eq!(r.cum_tsn(), 15);
        // Message 2 was complete at 1 ms and delivered at 9 ms; messages 0 and 1 waited 0.
        assert_eq!(r.hol.count(), 3);
        assert!((r.hol.mean_s().unwrap() - 0.008 / 3.0).abs() < 1e-9);
        assert_eq!(r.streams_used(), 2);
    }

    /// RFC 9260 §6.2: without room, a chunk above the highest TSN is dropped; a lower one
    /// replaces the highest held chunk.
    #[test]
    fn full_buffer_drops_or_reneges() {
        let mut r = Receiver::new(1, 1, 30);
        let now = SimTime::ZERO;
        assert_eq!(r.on_data(now, &chunk(3, 0, 2, W, 10, 2)), Accept::New);
        // The first fragment of a message: held for reassembly, so it can be reneged.
        assert_eq!(r.on_data(now, &chunk(5, 0, 4, DataFlags::BEGIN, 20, 4)), Accept::New);
        assert_eq!(r.free(), 0);
        assert_eq!(r.on_data(now, &chunk(6, 0, 5, W, 1, 5)), Accept::NoRoom);
        assert_eq!(r.on_data(now, &chunk(4, 0, 3, W, 10, 3)), Accept::New); // 5 reneged
        let s = r.build_sack(0);
        let g: Vec<_> = s.gaps().iter().map(|g| (g.start, g.end)).collect();
        assert_eq!(g, vec![(3, 4)]);
    }

    /// `take_in_sequence`, with `on_data` when it declines, gives the same deliveries (in the
    /// same order), acknowledgements, free space and head-of-line counts as `on_data` and
    /// `pop_ready` alone, over random arrivals: fragments, reordering, duplicates, unordered
    /// messages, a stream that does not exist, a small buffer, pauses.
    #[test]
    fn take_in_sequence_is_on_data_then_pop_ready() {
        let mut taken = 0;
        for seed in 1..=300u64 {
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut rnd = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            // Messages of 1-3 fragments on streams 0-2 (stream 3 does not exist), some unordered.
            let (mut chunks, mut tsn, mut ssn) = (Vec::new(), 100u32, [0u16; 4]);
            for id in 0..40u64 {
                let (stream, frags) = (rnd(4) as u16, 1 + rnd(3) as u16);
                let unordered = rnd(5) == 0;
                for k in 0..frags {
                    let mut f = DataFlags::default();
                    if k == 0 {
                        f = f.with(DataFlags::BEGIN);
                    }
                    if k + 1 == frags {
                        f = f.with(DataFlags::END);
                    }
                    if unordered {
                        f = f.with(DataFlags::UNORDERED);
                    }
                    chunks.push(chunk(tsn, stream, ssn[stream as usize], f, 50 + rnd(400) as u16, id));
                    tsn += 1;
                }
                if !unordered {
                    ssn[stream as usize] += 1;
                }
            }
            // Arrivals: mostly in order, some swapped with a later chunk, some duplicated.
            for k in 0..chunks.len() {
                if rnd(6) == 0 {
                    let j = (k + 1 + rnd(4) as usize).min(chunks.len() - 1);
                    chunks.swap(k, j);
                }
            }
            let mut arrivals = Vec::new();
            for c in chunks {
                arrivals.push(c);
                if rnd(8) == 0 {
                    arrivals.push(c);
                }
            }
            let (mut a, mut b) = (Receiver::new(100, 3, 2500), Receiver::new(100, 3, 2500));
            let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
            let key = |m: &Complete| (m.msg_id, m.len, m.stream, m.ordered);
            for (k, c) in arrivals.iter().enumerate() {
                let now = SimTime(k as u64 * 1000);
                if rnd(10) == 0 {
                    let p = !a.paused;
                    a.paused = p;
                    b.paused = p;
                }
                let ra = a.on_data(now, c);
                match b.take_in_sequence(now, c) {
                    Some(m) => {
                        taken += 1;
                        assert_eq!(ra, Accept::New);
                        got_b.push(key(&m));
                    }
                    None => assert_eq!(b.on_data(now, c), ra),
                }
                got_a.extend(std::iter::from_fn(|| a.pop_ready()).map(|m| key(&m)));
                got_b.extend(std::iter::from_fn(|| b.pop_ready()).map(|m| key(&m)));
                assert_eq!(got_a, got_b, "seed {seed}, arrival {k}");
                assert_eq!(
                    (a.cum_tsn(), a.free(), a.has_gaps()),
                    (b.cum_tsn(), b.free(), b.has_gaps())
                );
                assert_eq!(
                    (a.hol.count(), a.hol.zero, a.hol.sum_ns),
                    (b.hol.count(), b.hol.zero, b.hol.sum_ns)
                );
                assert_eq!(a.build_sack(1), b.build_sack(1));
            }
        }
        assert!(taken > 200, "the fast path was taken {taken} times");
    }

    #[test]
    fn hol_quantiles() {
        let mut h = HolStats::default();
        for k in 0..100u64 {
            h.record(SimDuration(k * 1_000_000));
        }
        let p95 = h.quantile_s(0.95).unwrap();
        assert!((p95 - 0.094).abs() < 0.094 * 0.02, "{p95}");
        assert_eq!(h.quantile_s(0.01), Some(0.0));
    }
}
