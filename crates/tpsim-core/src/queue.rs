//! The event queue: events ordered by (time, insertion sequence), in two levels.
//!
//! Two events at the same time pop in the order they were pushed, so a run is a pure
//! function of its scenario and seed. Pushing an event earlier than the last popped time is
//! a broken engine invariant and panics (as Shadow's `event_queue.rs` asserts): protocols never
//! schedule into the past.
//!
//! Layout (a calendar queue in front of a binary heap, after Brown 1988, "Calendar queues",
//! CACM 31(10)): events before the *horizon* sit in a small binary heap; later ones wait,
//! unsorted, in buckets of [`BUCKET_NS`] each, a ring of [`BUCKETS`] of them, and events beyond
//! the ring's reach in a second heap. When the near heap runs dry, the next bucket's events
//! move into it and the horizon advances by one bucket. So the near heap holds only about a
//! bucket's worth of events and stays in the L1 cache, however many far timers (one beacon or
//! HELLO per node) are pending; the order of pops is exactly the single heap's.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Width of a bucket: 2^23 ns (8.4 ms).
pub const BUCKET_NS: u64 = 1 << BUCKET_SHIFT;
const BUCKET_SHIFT: u32 = 23;
/// Buckets in the ring (it reaches 2^32 ns, about 4.3 s, past the horizon; their headers
/// take 12 KiB, so that filing a far event stays within the L1 cache).
pub const BUCKETS: usize = 1 << 9;
/// The ring's reach past the horizon, ns.
const SPAN: u128 = (BUCKETS as u128) << BUCKET_SHIFT;

struct Entry<E> {
    /// `time << 64 | seq`: orders by time, then insertion order, in one comparison.
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest (time, seq) first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A priority queue of events of type `E`, earliest first, ties in insertion order.
///
/// Invariant: every pending event earlier than `horizon` is in `near`; every other one is in
/// the ring (if earlier than `horizon + BUCKETS · BUCKET_NS`, in the bucket of its time) or in
/// `far`.
pub struct EventQueue<E> {
    near: BinaryHeap<Entry<E>>,
    ring: Vec<Vec<Entry<E>>>,
    in_ring: usize,
    far: BinaryHeap<Entry<E>>,
    /// A multiple of `BUCKET_NS`; wide, so that it and the ring's reach may pass the end of
    /// time (`u64::MAX` ns).
    horizon: u128,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::with_capacity(1024)
    }

    /// An empty queue whose near heap has room for `cap` events before it reallocates.
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            near: BinaryHeap::with_capacity(cap),
            ring: (0..BUCKETS).map(|_| Vec::new()).collect(),
            in_ring: 0,
            far: BinaryHeap::new(),
            horizon: BUCKET_NS as u128,
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// Files an entry by its time (see the invariant on [`EventQueue`]).
    #[inline]
    fn insert(&mut self, e: Entry<E>) {
        let t = e.time();
        if (t as u128) < self.horizon {
            self.near.push(e);
        } else if (t as u128) < self.horizon + SPAN {
            self.ring[(t >> BUCKET_SHIFT) as usize % BUCKETS].push(e);
            self.in_ring += 1;
        } else {
            self.far.push(e);
        }
    }

    /// With the near heap empty, moves the next events that are pending into it: the next
    /// non-empty bucket (jumping straight to the far heap's earliest event if the ring is
    /// empty), advancing the horizon past it.
    #[cold]
    fn refill(&mut self) {
        debug_assert!(self.near.is_empty());
        loop {
            if self.in_ring == 0 {
                let Some(first) = self.far.peek() else { return };
                // Nothing before the far heap's earliest event: its bucket starts the ring.
                self.horizon = (first.time() & !(BUCKET_NS - 1)) as u128;
                self.pull_far();
            }
            let slot = (self.horizon >> BUCKET_SHIFT) as usize % BUCKETS;
            self.horizon += BUCKET_NS as u128;
            let found = !self.ring[slot].is_empty();
            if found {
                self.in_ring -= self.ring[slot].len();
                // The bucket becomes the near heap; the emptied heap's allocation goes back to
                // the slot (no allocation here).
                let bucket = std::mem::take(&mut self.ring[slot]);
                let spare = std::mem::replace(&mut self.near, BinaryHeap::from(bucket));
                self.ring[slot] = spare.into_vec();
            }
            // The slot now stands for the ring's last bucket: far events may move into it.
            self.pull_far();
            if found {
                return;
            }
        }
    }

    /// Moves far events that the ring now reaches into their buckets.
    fn pull_far(&mut self) {
        let reach = self.horizon + SPAN;
        while self.far.peek().is_some_and(|e| (e.time() as u128) < reach) {
            let e = self.far.pop().expect("peeked");
            self.ring[(e.time() >> BUCKET_SHIFT) as usize % BUCKETS].push(e);
            self.in_ring += 1;
        }
    }

    /// Schedules `event` at `time`.
    ///
    /// # Panics
    /// If `time` is earlier than the time of the last popped event (time never goes back).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        assert!(
            time >= self.now,
            "event scheduled in the past: {time} < now {}",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry {
            key: ((time.0 as u128) << 64) | seq as u128,
            event,
        });
    }

    /// Reserves `n` consecutive sequence numbers and returns the first. An event pushed later
    /// with one of them ([`push_reserved`](Self::push_reserved)) or executed in place
    /// ([`take_if_next`](Self::take_if_next)) orders among same-time events exactly as if it
    /// had been pushed now: a batch of events can be scheduled now and fed to the queue one at
    /// a time, with the same results.
    #[inline]
    pub fn reserve(&mut self, n: u64) -> u64 {
        let first = self.next_seq;
        self.next_seq += n;
        first
    }

    /// Schedules `event` at `time` with a sequence number from [`reserve`](Self::reserve)
    /// (each used once).
    ///
    /// # Panics
    /// If `time` is earlier than the time of the last popped event.
    #[inline]
    pub fn push_reserved(&mut self, time: SimTime, seq: u64, event: E) {
        assert!(
            time >= self.now,
            "event scheduled in the past: {time} < now {}",
            self.now
        );
        debug_assert!(seq < self.next_seq, "sequence number {seq} was not reserved");
        self.insert(Entry {
            key: ((time.0 as u128) << 64) | seq as u128,
            event,
        });
    }

    /// If an event at `time` with the reserved sequence number `seq` (never pushed) comes
    /// before every pending event, counts it as popped, advances the clock to `time` and
    /// returns true: the caller executes it in place, sparing the heap a push and a pop.
    /// Otherwise returns false and changes nothing (push it with
    /// [`push_reserved`](Self::push_reserved)). May also return false for an event at or past
    /// the horizon, which the buckets are not searched for (pushing it is always correct).
    #[inline]
    pub fn take_if_next(&mut self, time: SimTime, seq: u64) -> bool {
        debug_assert!(seq < self.next_seq, "sequence number {seq} was not reserved");
        let key = ((time.0 as u128) << 64) | seq as u128;
        if self.near.peek().is_some_and(|top| top.key < key) || time.0 as u128 >= self.horizon {
            return false;
        }
        assert!(time >= self.now, "event taken in the past: {time} < now {}", self.now);
        self.now = time;
        self.popped += 1;
        true
    }

    /// Removes and returns the earliest event, advancing the queue's clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.near.is_empty() {
            self.refill();
        }
        let e = self.near.pop()?;
        let time = SimTime(e.time());
        debug_assert!(time >= self.now);
        self.now = time;
        self.popped += 1;
        Some((time, e.event))
    }

    /// The time of the earliest pending event (`&mut`: it may move the next bucket into the
    /// near heap, which changes no order).
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.near.is_empty() {
            self.refill();
        }
        self.near.peek().map(|e| SimTime(e.time()))
    }

    /// The next event, if it is already in the near heap (no bucket is searched): a hint for
    /// prefetching what it will touch, never for deciding what runs next.
    #[inline]
    pub fn peek_near(&self) -> Option<&E> {
        self.near.peek().map(|e| &e.event)
    }

    /// The time of the last popped event (zero before the first pop).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.near.len() + self.in_ring + self.far.len()
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events popped so far ("events executed").
    #[inline]
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'a');
        q.push(SimTime(1), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.popped(), 4);
    }

    /// Events far apart (an empty ring between them, the last at the end of time) pop in
    /// order, and the near heap is refilled from the far one across a jump.
    #[test]
    fn far_events_pop_in_order_across_empty_stretches() {
        let mut q = EventQueue::new();
        let times = [
            u64::MAX,
            3,
            u64::MAX - 1,
            10_000_000_000,
            1 << 40,
            BUCKET_NS,
            BUCKET_NS - 1,
        ];
        for (i, t) in times.iter().enumerate() {
            q.push(SimTime(*t), i);
        }
        let mut want: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
        want.sort();
        let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop().map(|(t, i)| (t.0, i))).collect();
        assert_eq!(got, want);
        assert!(q.is_empty());
    }

    #[test]
    #[should_panic(expected = "scheduled in the past")]
    fn refuses_to_go_backwards() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), ());
        q.pop();
        q.push(SimTime(9), ());
    }

    /// Reserved sequence numbers order as if the events had been pushed at reservation time,
    /// whether they are pushed later or taken in place.
    #[test]
    fn reserved_events_keep_their_place() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'a');
        let r = q.reserve(2);
        q.push(SimTime(5), 'd');
        q.push(SimTime(7), 'e');
        q.push_reserved(SimTime(5), r + 1, 'c');
        assert_eq!(q.pop(), Some((SimTime(5), 'a')));
        // `r` at time 5 comes before 'c' and 'd': taken in place.
        assert!(q.take_if_next(SimTime(5), r));
        assert_eq!(q.now(), SimTime(5));
        assert_eq!(q.pop(), Some((SimTime(5), 'c')));
        let r2 = q.reserve(1);
        // A reserved event after a pending one ('d' at time 5) stays out.
        assert!(!q.take_if_next(SimTime(6), r2));
        assert_eq!(q.pop(), Some((SimTime(5), 'd')));
        assert!(q.take_if_next(SimTime(6), r2));
        assert!(!q.take_if_next(SimTime(8), r2));
        assert_eq!(q.pop(), Some((SimTime(7), 'e')));
        assert_eq!(q.popped(), 6);
    }

    proptest! {
        #[test]
        fn pops_sorted_by_time_then_sequence(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.push(SimTime(*t), i);
            }
            let mut expect: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expect.sort();
            let got: Vec<(u64, usize)> =
                std::iter::from_fn(|| q.pop().map(|(t, i)| (t.0, i))).collect();
            prop_assert_eq!(got, expect);
        }

        /// The same against times that cross buckets, the ring's reach and the far heap (up to
        /// the end of time), with reserved events taken in place only when they come first.
        #[test]
        fn two_levels_match_a_sorted_reference(
            ops in proptest::collection::vec((0u8..6, 0u64..u64::MAX), 1..800),
        ) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            for (op, x) in ops {
                let now = q.now().0;
                // Never past the end of time: once an event near it has been popped, `now` is
                // close to u64::MAX and every later time is clamped there.
                let room = u64::MAX - now;
                let dt = match op {
                    0 => x % (3 * BUCKET_NS),           // within a few buckets
                    1 => x % (1u64 << 33),              // across the ring (2^32 ns)
                    2 => x % room.max(1),               // anywhere, to the end of time
                    _ => 0,
                }
                .min(room);
                match op {
                    0..=2 => {
                        let t = now + dt;
                        let seq = q.reserve(1);
                        q.push_reserved(SimTime(t), seq, seq);
                        reference.insert((t, seq));
                    }
                    3 => {
                        // An event at `now + x mod 2 ms`: taken in place only if it is first.
                        let t = now + (x % 2_000_000).min(room);
                        let seq = q.reserve(1);
                        let first = reference.first().is_none_or(|&(rt, rs)| (t, seq) < (rt, rs));
                        if q.take_if_next(SimTime(t), seq) {
                            prop_assert!(first, "taken in place ahead of a pending event");
                            prop_assert_eq!(q.now(), SimTime(t));
                        } else {
                            q.push_reserved(SimTime(t), seq, seq);
                            reference.insert((t, seq));
                        }
                    }
                    _ => {
                        prop_assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|e| e.0));
                        let got = q.pop().map(|(t, i)| (t.0, i));
                        prop_assert_eq!(got, reference.pop_first());
                    }
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                prop_assert_eq!(q.pop().map(|(t, i)| (t.0, i)), Some(want));
            }
            prop_assert!(q.pop().is_none());
        }

        /// Pushes and pops interleaved (as an event loop does, never into the past) give the
        /// same order as a sorted reference, and `peek_time` always names the next pop.
        #[test]
        fn interleaved_matches_a_sorted_reference(
            ops in proptest::collection::vec((0u8..3, 0u64..1_000_000_000_000u64), 1..600),
        ) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let mut seq = 0usize;
            for (op, delta) in ops {
                if op < 2 {
                    // Mostly near-future times, sometimes far ones, sometimes "now".
                    let dt = match op { 0 => delta % 1000, _ => delta };
                    let t = q.now().0 + dt;
                    q.push(SimTime(t), seq);
                    reference.insert((t, seq));
                    seq += 1;
                } else {
                    prop_assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|e| e.0));
                    let got = q.pop().map(|(t, i)| (t.0, i));
                    let want = reference.pop_first();
                    prop_assert_eq!(got, want);
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                prop_assert_eq!(q.pop().map(|(t, i)| (t.0, i)), Some(want));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
