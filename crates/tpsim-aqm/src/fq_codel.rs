//! FQ-CoDel (RFC 8290): packets hashed by flow into separate queues, each with its own CoDel
//! state; a deficit round robin serves the queues, new (sparse) flows ahead of old ones.
//!
//! # Read first
//!
//! * RFC 8290 §4.1 (enqueue: classify, timestamp, and at the limit drop from the queue with
//!   the largest backlog), §4.2 (dequeue: the new and old lists, the deficit and quantum, a
//!   queue that empties moving from the new list to the old one), §5.1 (parameters).
//! * RFC 8289 for the per-queue CoDel ([`crate::codel`]).
//!
//! # Defaults
//!
//! 1,024 flow queues, quantum 1,514 bytes, limit 10,240 packets, CoDel target 5 ms and
//! interval 100 ms (RFC 8290 §5.1), a drop batch of 64 packets (Linux `fq_codel`, ns-3's
//! `FqCoDelQueueDisc`).
//!
//! # Simplified
//!
//! * The flow hash is the engine's ([`Pkt::flow`]) taken modulo the number of queues; there is
//!   no per-run hash perturbation.
//! * CoDel's `MAXPACKET` test reads the whole discipline's backlog, as Linux does.
//! * At the limit, the fattest queue loses packets from its head until half of its bytes are
//!   gone or `drop_batch` packets were dropped (Linux's batch drop; RFC 8290 §4.1 describes
//!   one packet).

use std::collections::VecDeque;

use tpsim_core::{SimDuration, SimTime};

use crate::codel::{Backlog, CodelConfig, CodelVars};
use crate::{Entry, Pkt, Reason, Verdict};

/// FQ-CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelConfig {
    /// Number of flow queues.
    pub flows: u32,
    /// Bytes a queue may send per round (the DRR quantum).
    pub quantum: u32,
    /// Packets held in all queues together before the fattest queue is dropped from.
    pub limit: usize,
    /// Most packets dropped from the fattest queue at once.
    pub drop_batch: u32,
    /// Each queue's CoDel target.
    pub target: SimDuration,
    /// Each queue's CoDel interval.
    pub interval: SimDuration,
    /// CoDel's `MAXPACKET` (the MTU), bytes.
    pub max_packet: u32,
    /// Mark ECN-capable packets instead of dropping them (CoDel's drops only; overflow drops).
    pub ecn: bool,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: 1024,
            quantum: 1514,
            limit: 10_240,
            drop_batch: 64,
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            max_packet: 1500,
            ecn: false,
        }
    }
}

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue.
#[derive(Clone, Debug)]
struct Flow {
    q: VecDeque<Entry>,
    bytes: u64,
    deficit: i64,
    list: List,
    codel: CodelVars,
}

/// An FQ-CoDel scheduler.
#[derive(Clone, Debug)]
pub struct FqCodel {
    cfg: FqCodelConfig,
    codel: CodelConfig,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    bytes: u64,
    len: usize,
}

impl FqCodel {
    /// An empty scheduler with parameters `cfg` (`flows` at least 1).
    pub fn new(cfg: FqCodelConfig) -> Self {
        let flow = Flow {
            q: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            list: List::None,
            codel: CodelVars::default(),
        };
        FqCodel {
            codel: CodelConfig {
                target: cfg.target,
                interval: cfg.interval,
                max_packet: cfg.max_packet,
                ecn: cfg.ecn,
                limit: cfg.limit,
            },
            flows: vec![flow; cfg.flows.max(1) as usize],
            cfg,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            bytes: 0,
            len: 0,
        }
    }

    /// Queues `p` in its flow's queue; a queue not on either list joins the new list with a
    /// full quantum (RFC 8290 §4.1). Above the limit, drops from the fattest queue.
    pub fn enqueue(&mut self, p: Pkt, now: SimTime, out: &mut Vec<Verdict>) {
        let idx = p.flow % self.flows.len() as u32;
        let f = &mut self.flows[idx as usize];
        f.q.push_back(Entry { pkt: p, at: now });
        f.bytes += u64::from(p.bytes);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = i64::from(self.cfg.quantum);
            self.new_flows.push_back(idx);
        }
        self.bytes += u64::from(p.bytes);
        self.len += 1;
        if self.len > self.cfg.limit {
            self.drop_from_fattest(out);
        }
    }

    /// RFC 8290 §4.1: the queue with the largest backlog (the first of equals) loses packets
    /// from its head, until half its bytes are gone or `drop_batch` packets are.
    fn drop_from_fattest(&mut self, out: &mut Vec<Verdict>) {
        let mut fat = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes > self.flows[fat].bytes {
                fat = i;
            }
        }
        let f = &mut self.flows[fat];
        let threshold = f.bytes / 2;
        let mut dropped_bytes = 0;
        for _ in 0..self.cfg.drop_batch.max(1) {
            let Some(e) = f.q.pop_front() else { break };
            let b = u64::from(e.pkt.bytes);
            (f.bytes, self.bytes, self.len) = (f.bytes - b, self.bytes - b, self.len - 1);
            dropped_bytes += b;
            out.push(Verdict::Drop(e.pkt, Reason::Overflow));
            if dropped_bytes >= threshold {
                break;
            }
        }
    }

    /// The next packet to send at `now` (RFC 8290 §4.2).
    pub fn dequeue(&mut self, now: SimTime, out: &mut Vec<Verdict>) -> Option<Pkt> {
        loop {
            let (idx, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i, true),
                (None, Some(&i)) => (i, false),
                (None, None) => return None,
            };
            let f = &mut self.flows[idx as usize];
            if f.deficit <= 0 {
                // Spent its quantum: a fresh one, and to the back of the old list.
                f.deficit += i64::from(self.cfg.quantum);
                f.list = List::Old;
                self.pop_front(from_new);
                self.old_flows.push_back(idx);
                continue;
            }
            let (before, before_len) = (self.bytes, f.q.len());
            let mut b = Backlog {
                q: &mut f.q,
                bytes: &mut self.bytes,
            };
            let p = f.codel.dequeue(&self.codel, &mut b, now, out);
            // The flow's own backlog and the packet count follow what CoDel took out.
            f.bytes -= before - self.bytes;
            self.len -= before_len - f.q.len();
            match p {
                Some(p) => {
                    f.deficit -= i64::from(p.bytes);
                    return Some(p);
                }
                None => {
                    // Empty: a new queue goes to the old list (so that it cannot keep
                    // priority by emptying and refilling), unless that list is empty; an
                    // old one leaves the lists (RFC 8290 §4.2).
                    let to_old = from_new && !self.old_flows.is_empty();
                    f.list = if to_old { List::Old } else { List::None };
                    self.pop_front(from_new);
                    if to_old {
                        self.old_flows.push_back(idx);
                    }
                }
            }
        }
    }

    fn pop_front(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no packet waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes every waiting packet, flow queue by flow queue.
    pub fn purge(&mut self, out: &mut Vec<Pkt>) {
        for f in &mut self.flows {
            out.extend(f.q.drain(..).map(|e| e.pkt));
            f.bytes = 0;
            f.list = List::None;
            f.codel = CodelVars::default();
        }
        self.new_flows.clear();
        self.old_flows.clear();
        (self.bytes, self.len) = (0, 0);
    }

    /// Takes the waiting packets `pred` picks, flow queue by flow queue, each in its order. A
    /// queue left empty stays on its list until the scheduler reaches it.
    pub fn remove_where(&mut self, mut pred: impl FnMut(&Pkt) -> bool, out: &mut Vec<Pkt>) {
        for f in &mut self.flows {
            if f.q.is_empty() {
                continue;
            }
            let before = f.q.len();
            let b = crate::take_where(&mut f.q, |e| e.pkt, &mut pred, out);
            f.bytes -= b;
            self.bytes -= b;
            self.len -= before - f.q.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn pkt(id: u32, flow: u32, bytes: u32) -> Pkt {
        Pkt {
            id,
            bytes,
            flow,
            ect: false,
            ce: false,
        }
    }

    fn drain(q: &mut FqCodel, t: u64) -> Vec<Pkt> {
        let mut out = Vec::new();
        let v: Vec<Pkt> = std::iter::from_fn(|| q.dequeue(SimTime(t), &mut out)).collect();
        assert!(out.is_empty(), "no CoDel drop at these sojourn times");
        v
    }

    /// RFC 8290 §4.2: a sparse flow arriving behind a bulk flow's backlog is on the new list
    /// and is served first.
    #[test]
    fn a_sparse_flows_packet_leaves_ahead_of_a_bulk_flows_backlog() {
        let mut q = FqCodel::new(FqCodelConfig::default());
        let mut out = Vec::new();
        for i in 0..20 {
            q.enqueue(pkt(i, 1, 1500), SimTime(0), &mut out);
        }
        // The bulk flow sends one quantum's worth (1,514 bytes: one 1,500-byte packet, then
        // its deficit is 14 > 0, so a second), then moves to the old list.
        assert_eq!(q.dequeue(SimTime(0), &mut out).unwrap().id, 0);
        assert_eq!(q.dequeue(SimTime(0), &mut out).unwrap().id, 1);
        // Deficit now 14 - 1500 < 0: to the old list with a fresh quantum.
        q.enqueue(pkt(100, 2, 100), SimTime(0), &mut out);
        assert_eq!(q.dequeue(SimTime(0), &mut out).unwrap().id, 100, "the sparse packet");
        assert_eq!(q.dequeue(SimTime(0), &mut out).unwrap().id, 2);
        assert!(out.is_empty());
    }

    /// Two backlogged flows share the link by bytes, not packets (deficit round robin).
    #[test]
    fn backlogged_flows_get_equal_bytes_whatever_their_packet_sizes() {
        let mut q = FqCodel::new(FqCodelConfig::default());
        let mut out = Vec::new();
        for i in 0..300 {
            q.enqueue(pkt(i, 1, 1500), SimTime(0), &mut out);
            q.enqueue(pkt(1000 + i, 2, 300), SimTime(0), &mut out);
            q.enqueue(pkt(2000 + i, 2, 300), SimTime(0), &mut out);
            q.enqueue(pkt(3000 + i, 2, 300), SimTime(0), &mut out);
            q.enqueue(pkt(4000 + i, 2, 300), SimTime(0), &mut out);
            q.enqueue(pkt(5000 + i, 2, 300), SimTime(0), &mut out);
        }
        // Each round, each flow sends just over a quantum: compare the bytes of the first
        // 600 packets served.
        let (mut b1, mut b2) = (0u64, 0u64);
        for _ in 0..600 {
            let p = q.dequeue(SimTime(0), &mut out).unwrap();
            *if p.flow == 1 { &mut b1 } else { &mut b2 } += u64::from(p.bytes);
        }
        let ratio = b1 as f64 / b2 as f64;
        assert!((ratio - 1.0).abs() < 0.05, "bytes {b1} against {b2}");
    }

    /// RFC 8290 §4.1: at the limit, the queue with the most bytes loses packets from its head
    /// (half its bytes, here two of its four packets), not the arriving packet's queue.
    #[test]
    fn at_the_limit_the_fattest_queue_loses_half_its_bytes_from_the_head() {
        let mut q = FqCodel::new(FqCodelConfig {
            limit: 5,
            ..FqCodelConfig::default()
        });
        let mut out = Vec::new();
        for i in 0..4 {
            q.enqueue(pkt(i, 7, 1000), SimTime(0), &mut out);
        }
        q.enqueue(pkt(10, 8, 100), SimTime(0), &mut out);
        assert!(out.is_empty());
        q.enqueue(pkt(11, 8, 100), SimTime(0), &mut out);
        let dropped: Vec<(u32, Reason)> = out
            .iter()
            .map(|v| match v {
                Verdict::Drop(p, r) => (p.id, *r),
                Verdict::Mark(..) => panic!("no marks"),
            })
            .collect();
        assert_eq!(dropped, vec![(0, Reason::Overflow), (1, Reason::Overflow)]);
        assert_eq!((q.len(), q.bytes()), (4, 2200));
    }

    /// A new queue that empties goes to the old list when that list is not empty, so that it
    /// cannot win priority again by emptying and refilling; with the old list empty it
    /// leaves the lists (RFC 8290 §4.2).
    #[test]
    fn a_new_queue_that_empties_joins_the_old_list_if_that_list_has_queues() {
        let mut q = FqCodel::new(FqCodelConfig {
            quantum: 3000,
            ..FqCodelConfig::default()
        });
        let mut out = Vec::new();
        q.enqueue(pkt(0, 2, 100), SimTime(0), &mut out);
        assert_eq!(drain(&mut q, 0).len(), 1);
        assert_eq!(q.flows[2].list, List::None, "old list empty: off the lists");
        for i in 0..10 {
            q.enqueue(pkt(i, 1, 1500), SimTime(0), &mut out);
        }
        // Flow 1 sends its quantum (ids 0, 1: deficit 3,000 - 2 x 1,500 = 0), then moves to
        // the old list with a fresh quantum and sends id 2 (deficit 1,500).
        let ids: Vec<u32> = (0..3).map(|_| q.dequeue(SimTime(0), &mut out).unwrap().id).collect();
        assert_eq!(ids, vec![0, 1, 2]);
        assert_eq!(q.flows[1].list, List::Old);
        q.enqueue(pkt(100, 2, 100), SimTime(0), &mut out);
        assert_eq!(q.flows[2].list, List::New);
        assert_eq!(q.dequeue(SimTime(0), &mut out).unwrap().id, 100);
        // Flow 2 is empty at the head of the new list: it moves behind flow 1, which still has
        // 1,500 bytes of deficit and sends id 3.
        assert_eq!(q.dequeue(SimTime(0), &mut out).unwrap().id, 3);
        assert_eq!(q.flows[2].list, List::Old);
        assert_eq!(q.old_flows, VecDeque::from(vec![1, 2]));
    }

    #[test]
    fn each_flow_queue_runs_its_own_codel() {
        let mut q = FqCodel::new(FqCodelConfig::default());
        let mut out = Vec::new();
        // A bulk flow with a standing queue, and a sparse flow sending one packet per 20 ms.
        for i in 0..2000 {
            q.enqueue(pkt(i, 1, 1500), SimTime(0), &mut out);
        }
        let mut sparse_dropped = 0;
        let mut bulk_dropped = 0;
        for ms in 10..1000u64 {
            if ms % 20 == 0 {
                q.enqueue(pkt(10_000 + ms as u32, 2, 200), SimTime(ms * MS), &mut out);
            }
            q.dequeue(SimTime(ms * MS), &mut out);
            for v in out.drain(..) {
                let Verdict::Drop(p, Reason::Sojourn) = v else {
                    panic!("{v:?}")
                };
                *if p.flow == 2 {
                    &mut sparse_dropped
                } else {
                    &mut bulk_dropped
                } += 1;
            }
        }
        assert!(
            bulk_dropped >= 5,
            "the bulk flow's standing queue is controlled: {bulk_dropped}"
        );
        assert_eq!(sparse_dropped, 0);
    }

    proptest::proptest! {
        /// Any arrivals over a few flows: every packet is sent, dropped or left waiting,
        /// exactly once; within a flow, packets are sent in arrival order; the byte count
        /// matches the waiting packets.
        #[test]
        fn every_packet_leaves_once_and_each_flow_in_order(
            ops in proptest::collection::vec((0u32..4, 0u64..30, 40u32..1500), 1..400),
        ) {
            let mut q = FqCodel::new(FqCodelConfig { limit: 40, flows: 3, ..FqCodelConfig::default() });
            let mut out = Vec::new();
            let (mut t, mut next_id, mut gone) = (0u64, 0u32, Vec::new());
            let mut last_sent = [None::<u32>; 3];
            let mut bytes = std::collections::HashMap::new();
            for (op, dt, size) in ops {
                t += dt * MS / 2;
                if op < 3 {
                    bytes.insert(next_id, u64::from(size));
                    q.enqueue(pkt(next_id, op, size), SimTime(t), &mut out);
                    next_id += 1;
                } else if let Some(p) = q.dequeue(SimTime(t), &mut out) {
                    let l = &mut last_sent[p.flow as usize];
                    proptest::prop_assert!(l.is_none_or(|l| l < p.id));
                    *l = Some(p.id);
                    gone.push(p.id);
                }
                for v in out.drain(..) {
                    if let Verdict::Drop(p, _) = v { gone.push(p.id) }
                }
                proptest::prop_assert!(q.len() <= 40);
            }
            let waiting: u64 = q.flows.iter().flat_map(|f| f.q.iter()).map(|e| bytes[&e.pkt.id]).sum();
            proptest::prop_assert_eq!(q.bytes(), waiting);
            let mut rest = Vec::new();
            q.purge(&mut rest);
            proptest::prop_assert_eq!(q.len(), 0);
            let mut all = gone;
            all.extend(rest.iter().map(|p| p.id));
            all.sort_unstable();
            proptest::prop_assert_eq!(all, (0..next_id).collect::<Vec<_>>());
        }
    }
}
