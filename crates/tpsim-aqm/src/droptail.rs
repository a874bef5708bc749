//! DropTail: a FIFO that refuses the arriving packet when it holds `limit` packets (ns-2's
//! `Queue/DropTail`, ns-3's `FifoQueueDisc`).

use std::collections::VecDeque;

use tpsim_core::SimTime;

use crate::{Pkt, Reason, Verdict};

/// A FIFO with a packet limit.
#[derive(Clone, Debug)]
pub struct DropTail {
    q: VecDeque<Pkt>,
    limit: usize,
    bytes: u64,
}

impl DropTail {
    /// An empty queue that holds at most `limit` packets.
    pub fn new(limit: usize) -> Self {
        DropTail {
            q: VecDeque::with_capacity(limit.min(4096)),
            limit,
            bytes: 0,
        }
    }

    /// Queues `p`, or drops it (`Overflow`) if the queue is full.
    #[inline]
    pub fn enqueue(&mut self, p: Pkt, _now: SimTime, out: &mut Vec<Verdict>) {
        if self.q.len() >= self.limit {
            out.push(Verdict::Drop(p, Reason::Overflow));
        } else {
            self.bytes += u64::from(p.bytes);
            self.q.push_back(p);
        }
    }

    /// The head packet.
    #[inline]
    pub fn dequeue(&mut self, _now: SimTime, _out: &mut Vec<Verdict>) -> Option<Pkt> {
        let p = self.q.pop_front()?;
        self.bytes -= u64::from(p.bytes);
        Some(p)
    }

    /// Packets waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Whether no packet waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes every waiting packet, head first.
    pub fn purge(&mut self, out: &mut Vec<Pkt>) {
        out.extend(self.q.drain(..));
        self.bytes = 0;
    }

    /// Takes the waiting packets `pred` picks, in queue order.
    pub fn remove_where(&mut self, mut pred: impl FnMut(&Pkt) -> bool, out: &mut Vec<Pkt>) {
        self.bytes -= crate::take_where(&mut self.q, |p| *p, &mut pred, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_refuses_the_arrival_and_serves_in_order() {
        let mut q = DropTail::new(2);
        let mut out = Vec::new();
        let p = |id| Pkt {
            id,
            bytes: 100,
            flow: 0,
            ect: false,
            ce: false,
        };
        for id in 0..3 {
            q.enqueue(p(id), SimTime::ZERO, &mut out);
        }
        assert_eq!(out, vec![Verdict::Drop(p(2), Reason::Overflow)]);
        assert_eq!(q.bytes(), 200);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut out).map(|p| p.id), Some(0));
        assert_eq!(q.dequeue(SimTime::ZERO, &mut out).map(|p| p.id), Some(1));
        assert_eq!(q.dequeue(SimTime::ZERO, &mut out), None);
        assert_eq!(q.bytes(), 0);
    }
}
