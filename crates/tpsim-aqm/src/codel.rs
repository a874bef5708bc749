//! CoDel, Controlled Delay (RFC 8289): a FIFO that drops (or, with ECN, marks) at its head
//! when packets have waited longer than `target` for at least an `interval`, more often the
//! longer that lasts.
//!
//! # Read first
//!
//! * RFC 8289 §3 (the sojourn-time estimator, the target and interval, the control law that
//!   spaces drops by `interval / sqrt(count)`), §4.2 (parameters), §5 (the pseudo-code this
//!   module follows: `dodequeue`, `dequeue`, `control_law`).
//!
//! # Defaults
//!
//! `target` 5 ms, `interval` 100 ms, `max_packet` (the MTU) 1,500 bytes (RFC 8289 §4.2);
//! `limit` 1,000 packets (Linux `sch_codel`; ns-3's `CoDelQueueDisc` holds 1,500).
//!
//! # ECN
//!
//! With `ecn` on, an ECN-capable packet the control law would drop is marked CE and sent
//! instead, and the next drop time advances as after a drop (the Linux implementation's rule,
//! which the RFC leaves to implementations).

use std::collections::VecDeque;

use tpsim_core::{SimDuration, SimTime};

use crate::{Entry, Pkt, Reason, Verdict};

/// CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelConfig {
    /// Acceptable standing queue delay (RFC 8289 `TARGET`).
    pub target: SimDuration,
    /// Width of the window the sojourn time must stay above target in (RFC 8289 `INTERVAL`).
    pub interval: SimDuration,
    /// A queue holding at most this many bytes is never dropped from (RFC 8289 `MAXPACKET`,
    /// the MTU), bytes.
    pub max_packet: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Packets the queue holds before it drops arrivals.
    pub limit: usize,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            max_packet: 1500,
            ecn: false,
            limit: 1000,
        }
    }
}

/// The control state of one CoDel queue (RFC 8289 §5.1's per-queue variables).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct CodelVars {
    /// When the sojourn time will have been above target for an interval (`first_above_time`,
    /// `None` while below target).
    first_above: Option<SimTime>,
    /// When the next drop is due in the dropping state (`drop_next`).
    drop_next: SimTime,
    /// Drops (and marks) since entering the dropping state (`count`).
    count: u32,
    /// `count` when the dropping state was last entered (`lastcount`).
    last_count: u32,
    /// Whether in the dropping state (`dropping`).
    dropping: bool,
}

/// What [`CodelVars::dodequeue`] took out: the packet and whether it may be dropped.
struct Taken {
    e: Entry,
    ok_to_drop: bool,
}

/// A queue's packets and the backlog CoDel's `MAXPACKET` test reads.
pub(crate) struct Backlog<'a> {
    pub q: &'a mut VecDeque<Entry>,
    /// Bytes in the whole discipline (for FQ-CoDel, every flow queue's, as Linux reads it).
    pub bytes: &'a mut u64,
}

impl Backlog<'_> {
    fn pop(&mut self) -> Option<Entry> {
        let e = self.q.pop_front()?;
        *self.bytes -= u64::from(e.pkt.bytes);
        Some(e)
    }
}

impl CodelVars {
    /// The next drop time after `t` with `count` drops: `t + interval / sqrt(count)`
    /// (RFC 8289 §5.5, `control_law`).
    fn control_law(t: SimTime, interval: SimDuration, count: u32) -> SimTime {
        let gap = interval.0 as f64 / f64::from(count.max(1)).sqrt();
        SimTime(t.0.saturating_add(gap as u64))
    }

    /// Takes the head packet and tracks whether the sojourn time has stayed above target for
    /// an interval (RFC 8289 §5.4, `dodequeue`).
    fn dodequeue(&mut self, cfg: &CodelConfig, b: &mut Backlog, now: SimTime) -> Option<Taken> {
        let Some(e) = b.pop() else {
            self.first_above = None;
            return None;
        };
        let sojourn = now.saturating_since(e.at);
        let mut ok_to_drop = false;
        if sojourn < cfg.target || *b.bytes <= u64::from(cfg.max_packet) {
            // Below target, or too little left to be a standing queue.
            self.first_above = None;
        } else {
            match self.first_above {
                None => self.first_above = Some(now + cfg.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        Some(Taken { e, ok_to_drop })
    }

    /// Drops `e` or, with ECN on and `e` ECN-capable, marks it: returns the packet to send
    /// if it was marked.
    fn drop_or_mark(cfg: &CodelConfig, e: Entry, out: &mut Vec<Verdict>) -> Option<Pkt> {
        let mut p = e.pkt;
        if cfg.ecn && p.ect {
            p.ce = true;
            out.push(Verdict::Mark(p, Reason::Sojourn));
            Some(p)
        } else {
            out.push(Verdict::Drop(p, Reason::Sojourn));
            None
        }
    }

    /// The next packet to send at `now`, dropping on the way as the control law says
    /// (RFC 8289 §5.4, `dequeue`).
    pub(crate) fn dequeue(
        &mut self,
        cfg: &CodelConfig,
        b: &mut Backlog,
        now: SimTime,
        out: &mut Vec<Verdict>,
    ) -> Option<Pkt> {
        let Some(mut r) = self.dodequeue(cfg, b, now) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if let Some(p) = Self::drop_or_mark(cfg, r.e, out) {
                    self.drop_next = Self::control_law(self.drop_next, cfg.interval, self.count);
                    return Some(p);
                }
                match self.dodequeue(cfg, b, now) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some(next) => r = next,
                }
                if r.ok_to_drop {
                    self.drop_next = Self::control_law(self.drop_next, cfg.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if r.ok_to_drop {
            // Enter the dropping state: drop this packet, and start from a count close to
            // the last one if the previous dropping state ended recently (RFC 8289 §5.4).
            let marked = Self::drop_or_mark(cfg, r.e, out);
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            let recent = now.saturating_since(self.drop_next).0 < 16 * cfg.interval.0;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = Self::control_law(now, cfg.interval, self.count);
            self.last_count = self.count;
            if let Some(p) = marked {
                return Some(p);
            }
            match self.dodequeue(cfg, b, now) {
                Some(next) => r = next,
                None => return None,
            }
        }
        Some(r.e.pkt)
    }
}

/// A CoDel queue.
#[derive(Clone, Debug)]
pub struct Codel {
    cfg: CodelConfig,
    q: VecDeque<Entry>,
    bytes: u64,
    vars: CodelVars,
}

impl Codel {
    /// An empty queue with parameters `cfg`.
    pub fn new(cfg: CodelConfig) -> Self {
        Codel {
            cfg,
            q: VecDeque::with_capacity(cfg.limit.min(4096)),
            bytes: 0,
            vars: CodelVars::default(),
        }
    }

    /// Queues `p` with its arrival time, or drops it (`Overflow`) at the limit.
    pub fn enqueue(&mut self, p: Pkt, now: SimTime, out: &mut Vec<Verdict>) {
        if self.q.len() >= self.cfg.limit {
            out.push(Verdict::Drop(p, Reason::Overflow));
            return;
        }
        self.bytes += u64::from(p.bytes);
        self.q.push_back(Entry { pkt: p, at: now });
    }

    /// The next packet to send at `now` (RFC 8289 §5.4).
    pub fn dequeue(&mut self, now: SimTime, out: &mut Vec<Verdict>) -> Option<Pkt> {
        let mut b = Backlog {
            q: &mut self.q,
            bytes: &mut self.bytes,
        };
        self.vars.dequeue(&self.cfg, &mut b, now, out)
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Whether no packet waits.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes every waiting packet, head first.
    pub fn purge(&mut self, out: &mut Vec<Pkt>) {
        out.extend(self.q.drain(..).map(|e| e.pkt));
        self.bytes = 0;
    }

    /// Takes the waiting packets `pred` picks, in queue order.
    pub fn remove_where(&mut self, mut pred: impl FnMut(&Pkt) -> bool, out: &mut Vec<Pkt>) {
        self.bytes -= crate::take_where(&mut self.q, |e| e.pkt, &mut pred, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn pkt(id: u32, ect: bool) -> Pkt {
        Pkt {
            id,
            bytes: 1000,
            flow: 0,
            ect,
            ce: false,
        }
    }

    /// Fills `q` with `n` packets at time `at`.
    fn fill(q: &mut Codel, n: u32, at: u64, ect: bool) {
        let mut out = Vec::new();
        for i in 0..n {
            q.enqueue(pkt(i, ect), SimTime(at), &mut out);
        }
        assert!(out.is_empty());
    }

    #[test]
    fn no_drop_while_the_sojourn_time_stays_below_target() {
        let mut q = Codel::new(CodelConfig::default());
        let mut out = Vec::new();
        // One packet every ms, each served 4 ms after it arrived: always below the 5 ms target.
        for i in 0..300u64 {
            q.enqueue(pkt(i as u32, false), SimTime(i * MS), &mut out);
            if i >= 4 {
                assert!(q.dequeue(SimTime(i * MS), &mut out).is_some());
            }
        }
        assert!(out.is_empty());
    }

    /// A standing queue above target: the first drop comes one interval after the sojourn
    /// time first exceeded target, then drops follow at interval/sqrt(count).
    #[test]
    fn drops_follow_the_control_law_interval_over_sqrt_count() {
        let mut q = Codel::new(CodelConfig::default());
        let mut out = Vec::new();
        // 1,000 packets queued at 0; serve one per ms from t = 10 ms (sojourn >= 10 ms > 5 ms).
        fill(&mut q, 1000, 0, false);
        let mut drop_times = Vec::new();
        for t in (10..700).map(|ms| ms * MS) {
            let before = out.len();
            q.dequeue(SimTime(t), &mut out);
            drop_times.extend(std::iter::repeat_n(t, out.len() - before));
        }
        // First above target at 10 ms: first_above = 110 ms, first drop at 110 ms (count 1,
        // drop_next = 110 + 100/1 = 210); then 210 + 100/sqrt(2) = 280.71 -> served at 281,
        // 280.71 + 100/sqrt(3) = 338.45 -> 339, 338.45 + 100/2 = 388.45 -> 389,
        // 388.45 + 100/sqrt(5) = 433.17 -> 434.
        let want: Vec<u64> = [110, 210, 281, 339, 389, 434].iter().map(|ms| ms * MS).collect();
        assert_eq!(&drop_times[..6], &want[..]);
        assert!(out.iter().all(|v| matches!(v, Verdict::Drop(_, Reason::Sojourn))));
    }

    #[test]
    fn with_ecn_an_ect_packet_is_marked_and_sent_instead_of_dropped() {
        let cfg = CodelConfig {
            ecn: true,
            ..CodelConfig::default()
        };
        let mut q = Codel::new(cfg);
        let mut out = Vec::new();
        fill(&mut q, 500, 0, true);
        let mut sent = 0;
        let mut marked = 0;
        for t in (10..300).map(|ms| ms * MS) {
            let p = q.dequeue(SimTime(t), &mut out).unwrap();
            sent += 1;
            marked += p.ce as u32;
        }
        // Every packet served is sent; the ones the control law picked (110, 210, 281 ms) are
        // marked, and nothing is dropped.
        assert_eq!(sent, 290);
        assert_eq!(marked, 3);
        assert_eq!(out.len(), 3);
        assert!(out
            .iter()
            .all(|v| matches!(v, Verdict::Mark(p, Reason::Sojourn) if p.ce)));
    }

    #[test]
    fn a_queue_of_one_mtu_or_less_is_never_dropped_from() {
        let mut q = Codel::new(CodelConfig::default());
        let mut out = Vec::new();
        // Two 1,000-byte packets: after taking one, 1,000 bytes <= 1,500 remain.
        for k in 0..50u64 {
            q.enqueue(pkt(0, false), SimTime(k * 200 * MS), &mut out);
            q.enqueue(pkt(1, false), SimTime(k * 200 * MS), &mut out);
            q.dequeue(SimTime(k * 200 * MS + 150 * MS), &mut out);
            q.dequeue(SimTime(k * 200 * MS + 199 * MS), &mut out);
        }
        assert!(out.is_empty());
    }

    #[test]
    fn the_limit_drops_arrivals() {
        let mut q = Codel::new(CodelConfig {
            limit: 3,
            ..CodelConfig::default()
        });
        let mut out = Vec::new();
        fill(&mut q, 3, 0, false);
        q.enqueue(pkt(9, false), SimTime(0), &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(9, false), Reason::Overflow)]);
        assert_eq!((q.len(), q.bytes()), (3, 3000));
    }

    /// Re-entering the dropping state soon after leaving it starts from the count reached
    /// minus the count it started from (RFC 8289 §5.4), not from 1.
    #[test]
    fn reentering_the_dropping_state_soon_keeps_the_drop_rate() {
        let mut v = CodelVars::default();
        let cfg = CodelConfig::default();
        let mut q = VecDeque::new();
        let mut bytes = 0u64;
        let mut out = Vec::new();
        // In the dropping state with count 6 after starting from 1, last drop at 500 ms.
        (v.dropping, v.count, v.last_count, v.drop_next) = (false, 6, 1, SimTime(500 * MS));
        v.first_above = Some(SimTime(550 * MS));
        for i in 0..10 {
            q.push_back(Entry {
                pkt: pkt(i, false),
                at: SimTime(500 * MS),
            });
            bytes += 1000;
        }
        let mut b = Backlog {
            q: &mut q,
            bytes: &mut bytes,
        };
        v.dequeue(&cfg, &mut b, SimTime(600 * MS), &mut out);
        // delta = 6 - 1 = 5 > 1 and 600 - 500 ms < 16 intervals: count = 5, next drop
        // 100/sqrt(5) = 44.72 ms later.
        assert_eq!(out.len(), 1);
        assert_eq!(v.count, 5);
        assert_eq!(v.drop_next, SimTime(600 * MS + 44_721_359));
    }

    proptest::proptest! {
        /// Under any arrivals and service times, every packet is either sent, dropped or left
        /// waiting, exactly once; the sent ones leave in arrival order; the counters match the
        /// contents.
        #[test]
        fn every_packet_leaves_once_and_in_order(ops in proptest::collection::vec((proptest::bool::ANY, 0u64..40), 1..400)) {
            let mut q = Codel::new(CodelConfig { limit: 50, ..CodelConfig::default() });
            let mut out = Vec::new();
            let (mut t, mut next_id, mut gone, mut sent) = (0u64, 0u32, Vec::new(), Vec::new());
            for (arrive, dt) in ops {
                t += dt * MS / 4;
                if arrive {
                    q.enqueue(pkt(next_id, next_id % 2 == 0), SimTime(t), &mut out);
                    next_id += 1;
                } else if let Some(p) = q.dequeue(SimTime(t), &mut out) {
                    proptest::prop_assert!(sent.last().is_none_or(|&l| l < p.id));
                    sent.push(p.id);
                    gone.push(p.id);
                }
                for v in out.drain(..) {
                    if let Verdict::Drop(p, _) = v { gone.push(p.id) }
                }
                proptest::prop_assert_eq!(q.len() as u64 * 1000, q.bytes());
            }
            let mut rest = Vec::new();
            q.purge(&mut rest);
            let mut all: Vec<u32> = gone;
            all.extend(rest.iter().map(|p| p.id));
            all.sort_unstable();
            proptest::prop_assert_eq!(all, (0..next_id).collect::<Vec<_>>());
        }
    }
}
