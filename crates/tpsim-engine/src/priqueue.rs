//! The interface queue in front of an 802.11 MAC.

use crate::packet::PacketId;
use std::collections::VecDeque;
use tpsim_core::SimTime;

/// Interface queue in front of the MAC: FIFO with a packet limit; routing packets go to the
/// head (ns-2 `Queue/DropTail/PriQueue` with `Prefer_Routing_Protocols`); when full, the
/// arriving packet is dropped (tail drop).
pub struct PriQueue {
    /// A lone waiting packet, with the time it was queued, kept inside the device (no
    /// separate buffer line for the common case of one packet at a time); while it is set,
    /// `q` is empty.
    one: Option<(PacketId, SimTime)>,
    /// Waiting packets with the time each was queued (all of them when there are two or more).
    q: VecDeque<(PacketId, SimTime)>,
    limit: usize,
}

impl PriQueue {
    /// An empty queue of `limit` packets.
    pub fn new(limit: usize) -> Self {
        PriQueue {
            one: None,
            q: VecDeque::with_capacity(limit.min(1024)),
            limit,
        }
    }

    /// Adds `p`, queued at `now` (at the head if `priority`), or gives it back when full.
    pub fn push(&mut self, p: PacketId, priority: bool, now: SimTime) -> Result<(), PacketId> {
        if self.len() >= self.limit {
            return Err(p);
        }
        if self.q.is_empty() && self.one.is_none() {
            self.one = Some((p, now));
            return Ok(());
        }
        if let Some(first) = self.one.take() {
            self.q.push_back(first);
        }
        if priority {
            self.q.push_front((p, now));
        } else {
            self.q.push_back((p, now));
        }
        Ok(())
    }

    /// Takes the head packet.
    pub fn pop(&mut self) -> Option<PacketId> {
        match self.one.take() {
            Some((p, _)) => Some(p),
            None => self.q.pop_front().map(|(p, _)| p),
        }
    }

    /// Takes the head packet if it was queued before `deadline` (the age limit).
    pub fn pop_queued_before(&mut self, deadline: SimTime) -> Option<PacketId> {
        let since = match (self.one, self.q.front()) {
            (Some((_, t)), _) => t,
            (None, Some(&(_, t))) => t,
            (None, None) => return None,
        };
        if since < deadline {
            self.pop()
        } else {
            None
        }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.one.is_some() as usize + self.q.len()
    }

    /// Whether no packet waits.
    pub fn is_empty(&self) -> bool {
        self.one.is_none() && self.q.is_empty()
    }

    /// The waiting packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &PacketId> {
        self.one.iter().chain(self.q.iter()).map(|(p, _)| p)
    }

    /// Removes (and returns, in queue order) the packets for which `pred` holds.
    pub fn remove_where(&mut self, mut pred: impl FnMut(PacketId) -> bool) -> Vec<PacketId> {
        let mut out = Vec::new();
        if let Some((id, _)) = self.one {
            if pred(id) {
                self.one = None;
                out.push(id);
            }
        }
        self.q.retain(|&(id, _)| {
            let hit = pred(id);
            if hit {
                out.push(id);
            }
            !hit
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-2's PriQueue: routing control packets go to the head, everything else to the tail;
    /// a full queue refuses the arriving packet (tail drop), whatever its kind.
    #[test]
    fn priqueue_puts_routing_first_and_drops_the_arrival_when_full() {
        let mut q = PriQueue::new(3);
        q.push(PacketId(1), false, SimTime::ZERO).unwrap();
        q.push(PacketId(2), false, SimTime::ZERO).unwrap();
        q.push(PacketId(9), true, SimTime::ZERO).unwrap();
        assert_eq!(q.push(PacketId(10), true, SimTime::ZERO), Err(PacketId(10)));
        assert_eq!(q.push(PacketId(3), false, SimTime::ZERO), Err(PacketId(3)));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|p| p.0)).collect();
        assert_eq!(order, vec![9, 1, 2]);
        let mut q = PriQueue::new(5);
        for i in 0..5 {
            q.push(PacketId(i), false, SimTime::ZERO).unwrap();
        }
        assert_eq!(q.remove_where(|p| p.0 % 2 == 1), vec![PacketId(1), PacketId(3)]);
        assert_eq!(q.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 2, 4]);
    }

    proptest::proptest! {
        /// The queue (a lone packet kept inline, more in the ring) behaves as one plain deque
        /// with routing packets to the head, tail drop at the limit, the age limit at the
        /// head and removal by predicate.
        #[test]
        fn priqueue_matches_a_plain_deque(
            limit in 1usize..6,
            ops in proptest::collection::vec((0u8..5, 0u32..40), 0..120),
        ) {
            let mut q = PriQueue::new(limit);
            let mut r: VecDeque<(PacketId, SimTime)> = VecDeque::new();
            for (i, (op, x)) in ops.into_iter().enumerate() {
                let now = SimTime(i as u64 * 10);
                match op {
                    0 | 1 => {
                        let p = PacketId(i as u32);
                        let want = if r.len() >= limit {
                            Err(p)
                        } else {
                            if op == 1 { r.push_front((p, now)) } else { r.push_back((p, now)) }
                            Ok(())
                        };
                        proptest::prop_assert_eq!(q.push(p, op == 1, now), want);
                    }
                    2 => proptest::prop_assert_eq!(q.pop(), r.pop_front().map(|(p, _)| p)),
                    3 => {
                        let deadline = SimTime(x as u64 * 10);
                        let want = match r.front() {
                            Some(&(p, t)) if t < deadline => { r.pop_front(); Some(p) }
                            _ => None,
                        };
                        proptest::prop_assert_eq!(q.pop_queued_before(deadline), want);
                    }
                    _ => {
                        let want: Vec<PacketId> = r.iter().filter(|(p, _)| p.0 % 3 == x % 3).map(|&(p, _)| p).collect();
                        r.retain(|(p, _)| p.0 % 3 != x % 3);
                        proptest::prop_assert_eq!(q.remove_where(|p| p.0 % 3 == x % 3), want);
                    }
                }
                proptest::prop_assert_eq!(q.len(), r.len());
                proptest::prop_assert_eq!(q.is_empty(), r.is_empty());
                let got: Vec<PacketId> = q.iter().copied().collect();
                let want: Vec<PacketId> = r.iter().map(|&(p, _)| p).collect();
                proptest::prop_assert_eq!(got, want);
            }
        }
    }

    /// The age limit (`radio.queue_max_delay`): only a head packet queued before the deadline
    /// comes out of `pop_queued_before`, so expired packets leave in queue order and a fresh
    /// head stops the sweep.
    #[test]
    fn priqueue_gives_up_only_head_packets_older_than_the_deadline() {
        let mut q = PriQueue::new(10);
        for (id, t) in [(1, 100), (2, 200), (3, 300)] {
            q.push(PacketId(id), false, SimTime(t)).unwrap();
        }
        // A routing packet queued late goes to the head and shields the old ones behind it.
        q.push(PacketId(9), true, SimTime(400)).unwrap();
        assert_eq!(q.pop_queued_before(SimTime(250)), None);
        assert_eq!(q.pop(), Some(PacketId(9)));
        assert_eq!(q.pop_queued_before(SimTime(250)), Some(PacketId(1)));
        assert_eq!(q.pop_queued_before(SimTime(250)), Some(PacketId(2)));
        assert_eq!(q.pop_queued_before(SimTime(250)), None, "queued at 300: not expired");
        assert_eq!(q.pop_queued_before(SimTime(300)), None, "strictly before the deadline");
        assert_eq!(q.len(), 1);
    }
}
