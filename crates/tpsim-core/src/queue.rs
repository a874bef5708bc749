//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Two events at the same time pop in the order they were pushed, so a run is a pure
//! function of its scenario and seed. Pushing an event earlier than the last popped time is
//! a broken engine invariant and panics (as Shadow's `event_queue.rs` asserts): protocols never
//! schedule into the past.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    /// `time << 64 | seq`: orders by time, then insertion order, in one comparison.
    key: u128,
    event: E,
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
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
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

    /// An empty queue with room for `cap` pending events before it reallocates.
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(cap),
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
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
        self.heap.push(Entry {
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
        self.heap.push(Entry {
            key: ((time.0 as u128) << 64) | seq as u128,
            event,
        });
    }

    /// If an event at `time` with the reserved sequence number `seq` (never pushed) comes
    /// before every pending event, counts it as popped, advances the clock to `time` and
    /// returns true: the caller executes it in place, sparing the heap a push and a pop.
    /// Otherwise returns false and changes nothing (push it with
    /// [`push_reserved`](Self::push_reserved)).
    #[inline]
    pub fn take_if_next(&mut self, time: SimTime, seq: u64) -> bool {
        debug_assert!(seq < self.next_seq, "sequence number {seq} was not reserved");
        let key = ((time.0 as u128) << 64) | seq as u128;
        if self.heap.peek().is_some_and(|top| top.key < key) {
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
        let e = self.heap.pop()?;
        let time = SimTime((e.key >> 64) as u64);
        debug_assert!(time >= self.now);
        self.now = time;
        self.popped += 1;
        Some((time, e.event))
    }

    /// The time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.key >> 64) as u64))
    }

    /// The time of the last popped event (zero before the first pop).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
