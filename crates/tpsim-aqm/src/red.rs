//! RED, Random Early Detection (Floyd & Jacobson 1993) with the gentle variant (Floyd 2000),
//! in packet mode, as ns-3's `RedQueueDisc` (a port of ns-2's `Queue/RED`) runs it.
//!
//! At each arrival the discipline updates an exponentially weighted moving average `avg` of
//! the queue length; below `min_th` it accepts everything, between `min_th` and `max_th` it
//! drops (or, with ECN, marks) the arrival with a probability that grows linearly from 0 to
//! `max_p` and with the number of packets since the last drop, and above `max_th` it drops
//! every arrival (the "forced" region). In gentle mode the probability grows on linearly from
//! `max_p` to 1 between `max_th` and `2 max_th`, and the forced region starts at `2 max_th`.
//!
//! # Read first
//!
//! * S. Floyd, V. Jacobson, "Random Early Detection Gateways for Congestion Avoidance",
//!   IEEE/ACM ToN 1(4), 1993: §4 and its Fig. 2 (the detailed algorithm), §6 (the average and
//!   its decay over an idle period), §7 (the marking probability `p_a = p_b / (1 - count p_b)`
//!   that spaces marks uniformly).
//! * S. Floyd, "Recommendations on using the gentle_ variant of RED", March 2000.
//! * ns-3.44 `src/traffic-control/model/red-queue-disc.cc` (`DoEnqueue`, `Estimator`,
//!   `CalculatePNew`, `ModifyP`, `DoDequeue`), itself ported from ns-2.35 `queue/red.cc`.
//!
//! # Defaults ([`RedConfig::default`])
//!
//! ns-3.44's `RedQueueDisc` attributes: `MinTh` 5 and `MaxTh` 15 packets, `QW` 0.002, `LInterm`
//! 50 (`max_p` = 1/50 = 0.02), `Gentle` true, `Wait` true, `MeanPktSize` 500 bytes,
//! `LinkBandwidth` 1.5 Mbit/s (the engine sets the link's rate), `UseHardDrop` true, `UseEcn`
//! false, `MaxSize` 25 packets.
//!
//! ns-2.35's `Queue/RED` (`tcl/lib/ns-default.tcl`) differs: `linterm_` 10 (`max_p` 0.1);
//! `thresh_` and `maxthresh_` 0, meaning automatic (`min_th` = max(5, `targetdelay_`·ptc/2)
//! packets, `max_th` = 3 `min_th`); `q_weight_` -1, automatic (from the link's rate and delay);
//! `bytes_` and `queue_in_bytes_` true (byte mode); and, with `setbit_` (ECN) on, `use_mark_p_`
//! with `mark_p_` 0.1 (mark only while `p_b` < 0.1, drop above, and no forced region).
//!
//! # Where this differs from ns-3.44
//!
//! * A forced drop resets `count`, as Fig. 2 of the paper ("count ← 0") and ns-2 (unless
//!   `ns1_compat_`) do; ns-3.44 resets it only with `Ns1Compat`, the inverse of ns-2's test.
//! * The idle decay `(1 - w_q)^(m+1)` is computed by binary exponentiation (IEEE multiplies
//!   only, the same on every platform) rather than `std::pow`; ns-2 multiplies `m + 1` times.
//! * An arrival that a RED decision marks but that then finds the queue full is reported once,
//!   as an `Overflow` drop (ns-3 counts the mark, then the drop).
//!
//! # Simplified
//!
//! Packet mode only (ns-3's and ns-2's byte mode, which scales the probability by the packet's
//! size, is left out); no Adaptive RED (`ARED`, `AdaptMaxP`, `FengAdaptive`), no Nonlinear RED,
//! no `cautious_` variants; the arriving packet is always the victim (ns-2's `drop_tail_`).
//!
//! # Idle periods
//!
//! As in ns-2 and ns-3, the queue is idle from the moment [`Red::dequeue`] finds it empty (the
//! transmitter asked for a packet and there was none) until the next arrival, which first
//! decays the average as if `m = ⌊idle time × link_rate_bps / (8 mean_pkt_bytes)⌋` empty-queue
//! arrivals had happened. The engine must therefore call `dequeue` when its transmitter frees
//! even if the queue may be empty; an arrival while the last packet is still on the wire sees
//! no idle period. (ns-2 and ns-3 restart the idle period at every empty dequeue; here only
//! the first one after a packet left starts it.)

use std::collections::VecDeque;

use tpsim_core::{RngStream, SimTime};

use crate::{Pkt, Reason, Verdict};

/// RED's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Minimum threshold of the average queue: below it nothing is dropped, packets.
    pub min_th: f64,
    /// Maximum threshold of the average queue: the early-drop probability reaches `max_p`
    /// there, packets.
    pub max_th: f64,
    /// Weight of the newest queue length in the moving average (`w_q`, ns-3 `QW`), 0 < w_q ≤ 1.
    pub w_q: f64,
    /// Early-drop probability at `max_th` (`max_p` = 1 / ns-3's `LInterm`).
    pub max_p: f64,
    /// Gentle RED: between `max_th` and `2 max_th` the probability rises linearly from `max_p`
    /// to 1 instead of every arrival being dropped.
    pub gentle: bool,
    /// ns-2/ns-3 `Wait`: space early drops uniformly between `1/p_b` and `2/p_b` arrivals
    /// (`p_a = p_b / (2 - count p_b)`, and 0 while `count p_b < 1`) rather than between 1 and
    /// `1/p_b` (the paper's `p_a = p_b / (1 - count p_b)`).
    pub wait: bool,
    /// Mean packet size used to turn an idle time into a number of packet times, bytes.
    pub mean_pkt_bytes: u32,
    /// Rate of the link the queue feeds, bit/s (set by the engine; only the idle decay uses it).
    pub link_rate_bps: f64,
    /// In the forced region drop even ECN-capable packets (ns-3 `UseHardDrop`); without it, and
    /// with `ecn`, they are marked.
    pub use_hard_drop: bool,
    /// Mark ECN-capable packets CE instead of dropping them early (RFC 3168 §7).
    pub ecn: bool,
    /// Packets the queue holds before arrivals are dropped (`Overflow`), packets.
    pub limit: usize,
}

impl Default for RedConfig {
    /// ns-3.44 `RedQueueDisc`'s defaults (see the module documentation).
    fn default() -> Self {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 1.0 / 50.0,
            gentle: true,
            wait: true,
            mean_pkt_bytes: 500,
            link_rate_bps: 1.5e6,
            use_hard_drop: true,
            ecn: false,
            limit: 25,
        }
    }
}

/// A RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    rng: RngStream,
    q: VecDeque<Pkt>,
    bytes: u64,
    /// Average queue length, packets (`avg`).
    avg: f64,
    /// Arrivals since the last early or forced drop or mark (`count`).
    count: u64,
    /// Whether the previous arrival already found `avg` at or above `min_th` with more than one
    /// packet queued (ns-2's `old`): the first one that does only starts the count.
    old: bool,
    /// Whether the queue has been idle since `idle_since` (a dequeue found it empty).
    idle: bool,
    idle_since: SimTime,
}

/// `base^e` by binary exponentiation: IEEE multiplications only, so the same everywhere.
fn powu(mut base: f64, mut e: u64) -> f64 {
    let mut acc = 1.0;
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base *= base;
        e >>= 1;
    }
    acc
}

impl Red {
    /// An empty queue with the given parameters and random stream.
    ///
    /// Panics if `min_th > max_th`, `max_th <= 0`, `w_q` is not in (0, 1] or `max_p` not in
    /// (0, 1].
    pub fn new(cfg: RedConfig, rng: RngStream) -> Self {
        assert!(
            cfg.min_th <= cfg.max_th && cfg.max_th > 0.0,
            "RED needs 0 <= min_th <= max_th, 0 < max_th"
        );
        assert!(cfg.w_q > 0.0 && cfg.w_q <= 1.0, "RED needs 0 < w_q <= 1");
        assert!(cfg.max_p > 0.0 && cfg.max_p <= 1.0, "RED needs 0 < max_p <= 1");
        Red {
            cfg,
            rng,
            q: VecDeque::with_capacity(cfg.limit.min(4096)),
            bytes: 0,
            avg: 0.0,
            count: 0,
            old: false,
            // ns-2/ns-3 start idle at time 0.
            idle: true,
            idle_since: SimTime::ZERO,
        }
    }

    /// The average queue length as of the last arrival, packets.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Packet `p` arrives at `now`: updates the average, then queues `p`, marks it (`Mark`,
    /// with `p.ce` set on the queued copy) or drops it (`Early`, `Forced` or `Overflow`).
    pub fn enqueue(&mut self, p: Pkt, now: SimTime, out: &mut Vec<Verdict>) {
        let c = self.cfg;
        let n = self.q.len();

        // Floyd & Jacobson 1993 §4 Fig. 2 and §6: after an idle period, decay the average as if
        // m packets had arrived to an empty queue, m = idle time / (time to send a mean packet).
        // ns-2/ns-3 fold this arrival into the same step: avg ← avg (1 - w_q)^(m+1) + w_q q.
        let mut m = 0u64;
        if self.idle {
            self.idle = false;
            let idle_s = now.saturating_since(self.idle_since).as_secs_f64();
            let pkts_per_s = c.link_rate_bps / (8.0 * f64::from(c.mean_pkt_bytes.max(1)));
            // Truncation, as ns-3's `uint32_t(m_ptc * seconds)` (saturating, NaN → 0).
            m = (pkts_per_s * idle_s) as u64;
        }
        self.avg = self.avg * powu(1.0 - c.w_q, m.saturating_add(1)) + c.w_q * n as f64;

        // Floyd & Jacobson 1993 §4 Fig. 2: count the arrivals since the last mark.
        self.count = self.count.saturating_add(1);

        let mut decision = None;
        // ns-2/ns-3 `DoEnqueue`: RED acts only with more than one packet queued.
        if self.avg >= c.min_th && n > 1 {
            let forced_from = if c.gentle { 2.0 * c.max_th } else { c.max_th };
            if self.avg >= forced_from {
                // Floyd & Jacobson 1993 §4 Fig. 2 ("else if max_th ≤ avg: mark"); Floyd 2000
                // moves this to 2 max_th in gentle mode.
                decision = Some(Reason::Forced);
            } else if !self.old {
                // ns-2 `old`: the average has just crossed min_th (or the queue has just become
                // non-trivial above it): start counting from this arrival, no drop.
                self.old = true;
                self.count = 1;
            } else {
                let pa = Self::spaced_prob(self.early_prob(), self.count, c.wait);
                if self.rng.uniform() < pa {
                    decision = Some(Reason::Early);
                }
            }
        } else {
            // Floyd & Jacobson 1993 §4 Fig. 2: below min_th ("count ← -1"; ns-2 `old ← 0`).
            self.old = false;
        }

        let mut marked = None;
        if let Some(reason) = decision {
            // Floyd & Jacobson 1993 §4 Fig. 2: "count ← 0" after each mark, forced ones included.
            self.count = 0;
            // RFC 3168 §7: an ECN-capable packet is marked where it would be dropped early;
            // in the forced region only without `use_hard_drop` (ns-3 `UseHardDrop`).
            let markable = c.ecn && p.ect && (reason == Reason::Early || !c.use_hard_drop);
            if !markable {
                out.push(Verdict::Drop(p, reason));
                return;
            }
            marked = Some(reason);
        }

        if n >= c.limit {
            out.push(Verdict::Drop(p, Reason::Overflow));
            return;
        }
        let mut p = p;
        if let Some(reason) = marked {
            p.ce = true;
            out.push(Verdict::Mark(p, reason));
        }
        self.bytes += u64::from(p.bytes);
        self.q.push_back(p);
    }

    /// The initial drop probability `p_b` for the current average (ns-3 `CalculatePNew`).
    fn early_prob(&self) -> f64 {
        let c = &self.cfg;
        let pb = if self.avg >= c.max_th {
            if c.gentle {
                // Floyd 2000: from max_p at max_th up to 1 at 2 max_th.
                c.max_p + (1.0 - c.max_p) * (self.avg - c.max_th) / c.max_th
            } else {
                1.0
            }
        } else {
            // Floyd & Jacobson 1993 §4 Fig. 2: p_b = max_p (avg - min_th) / (max_th - min_th).
            // (max_th = min_th leaves this branch unreachable: avg ≥ min_th = max_th.)
            c.max_p * (self.avg - c.min_th) / (c.max_th - c.min_th)
        };
        pb.min(1.0)
    }

    /// The marking probability `p_a` after `count` unmarked arrivals (ns-3 `ModifyP`).
    fn spaced_prob(pb: f64, count: u64, wait: bool) -> f64 {
        let cp = count as f64 * pb;
        let pa = if wait {
            // ns-2 `wait_`: no mark before 1/p_b arrivals, a certain one at 2/p_b: the gap is
            // uniform on [1/p_b, 2/p_b].
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                pb / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            // Floyd & Jacobson 1993 §7: p_a = p_b / (1 - count p_b), the gap uniform on
            // [1, 1/p_b].
            pb / (1.0 - cp)
        } else {
            1.0
        };
        pa.min(1.0)
    }

    /// The head packet, if any. Call it whenever the transmitter is free, even on an empty
    /// queue: a `None` answer at `now` starts an idle period (see the module documentation).
    pub fn dequeue(&mut self, now: SimTime, _out: &mut Vec<Verdict>) -> Option<Pkt> {
        match self.q.pop_front() {
            Some(p) => {
                self.idle = false;
                self.bytes -= u64::from(p.bytes);
                Some(p)
            }
            None => {
                // ns-2/ns-3 `deque`: the queue is idle from now on (from the first empty
                // dequeue: a repeated one does not restart the idle period).
                if !self.idle {
                    self.idle = true;
                    self.idle_since = now;
                }
                None
            }
        }
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

    /// Takes every waiting packet, head first, without any RED decision. The average and the
    /// idle state are kept (the next `dequeue` on the empty queue starts an idle period).
    pub fn purge(&mut self, out: &mut Vec<Pkt>) {
        out.extend(self.q.drain(..));
        self.bytes = 0;
    }

    /// Takes the waiting packets `pred` picks, in queue order (the average is left as it is).
    pub fn remove_where(&mut self, mut pred: impl FnMut(&Pkt) -> bool, out: &mut Vec<Pkt>) {
        self.bytes -= crate::take_where(&mut self.q, |p| *p, &mut pred, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T0: SimTime = SimTime::ZERO;

    fn pkt(id: u32, ect: bool) -> Pkt {
        Pkt {
            id,
            bytes: 1000,
            flow: 0,
            ect,
            ce: false,
        }
    }

    fn red(cfg: RedConfig) -> Red {
        Red::new(cfg, RngStream::from_seed(7))
    }

    /// Puts `n` packets in the queue directly and sets the average to `avg`, past the first
    /// crossing of `min_th` (`old`).
    fn preload(r: &mut Red, n: u32, avg: f64) {
        for id in 0..n {
            r.q.push_back(pkt(1_000_000 + id, false));
            r.bytes += 1000;
        }
        r.avg = avg;
        r.old = true;
        r.idle = false;
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn the_average_follows_the_queue_by_the_ewma() {
        // Thresholds out of reach: only the average moves.
        let mut r = red(RedConfig {
            min_th: 100.0,
            max_th: 200.0,
            limit: 1000,
            ..RedConfig::default()
        });
        let mut out = Vec::new();
        // avg ← (1 - w_q) avg + w_q q, q counted before the arrival, w_q = 0.002:
        //   1st arrival, q = 0: 0
        //   2nd, q = 1: 0.998·0 + 0.002·1 = 0.002
        //   3rd, q = 2: 0.998·0.002 + 0.002·2 = 0.001996 + 0.004 = 0.005996
        //   4th, q = 3: 0.998·0.005996 + 0.002·3 = 0.005984008 + 0.006 = 0.011984008
        let expect = [0.0, 0.002, 0.005996, 0.011984008];
        for (id, want) in expect.into_iter().enumerate() {
            r.enqueue(pkt(id as u32, false), T0, &mut out);
            assert!(close(r.avg(), want), "arrival {id}: avg {} want {want}", r.avg());
        }
        // Dequeuing does not touch the average; the next arrival sees q = 3:
        //   0.998·0.011984008 + 0.002·3 = 0.011960039984 + 0.006 = 0.017960039984
        assert!(r.dequeue(T0, &mut out).is_some());
        r.enqueue(pkt(9, false), T0, &mut out);
        assert!(close(r.avg(), 0.017960039984), "avg {}", r.avg());
        assert!(out.is_empty());
    }

    #[test]
    fn an_idle_period_decays_the_average_by_the_packets_it_could_have_sent() {
        // w_q = 1/2 and 4,000 bit/s with 500-byte packets: one packet time per second.
        let cfg = RedConfig {
            min_th: 100.0,
            max_th: 200.0,
            w_q: 0.5,
            link_rate_bps: 4000.0,
            limit: 1000,
            ..RedConfig::default()
        };
        let mut out = Vec::new();
        let build = || {
            let mut r = red(cfg);
            let mut out = Vec::new();
            // Four arrivals at t = 0 (queue 0, 1, 2, 3 before each):
            //   0.5·0 + 0.5·0 = 0;  0.5·0 + 0.5·1 = 0.5;  0.5·0.5 + 0.5·2 = 1.25;
            //   0.5·1.25 + 0.5·3 = 0.625 + 1.5 = 2.125
            for id in 0..4 {
                r.enqueue(pkt(id, false), T0, &mut out);
            }
            assert_eq!(r.avg(), 2.125);
            for _ in 0..4 {
                assert!(r.dequeue(T0, &mut out).is_some());
            }
            r
        };

        // The transmitter asks at 1 s and finds nothing: idle from 1 s (asking again at 2 s
        // does not move that). An arrival at 3.5 s:
        // m = ⌊2.5 s × 4000 / (8·500)⌋ = ⌊2.5⌋ = 2, avg = 2.125·0.5^(2+1) + 0.5·0 = 0.265625.
        let mut r = build();
        assert!(r.dequeue(SimTime(1_000_000_000), &mut out).is_none());
        assert!(r.dequeue(SimTime(2_000_000_000), &mut out).is_none());
        r.enqueue(pkt(10, false), SimTime(3_500_000_000), &mut out);
        assert_eq!(r.avg(), 0.265625);

        // Without the empty dequeue (the last packet still on the wire) there is no idle
        // period: one ordinary step, 2.125·0.5 + 0.5·0 = 1.0625.
        let mut r = build();
        r.enqueue(pkt(10, false), SimTime(3_500_000_000), &mut out);
        assert_eq!(r.avg(), 1.0625);

        // Default w_q and rate: 1.5 Mbit/s / (8·500 bit) = 375 packets/s. Idle 2 ms → m =
        // ⌊0.75⌋ = 0: a single step, 2.125·0.998 = 2.12075.
        let mut r = build();
        r.cfg.w_q = 0.002;
        r.cfg.link_rate_bps = 1.5e6;
        assert!(r.dequeue(SimTime(1_000_000_000), &mut out).is_none());
        r.enqueue(pkt(10, false), SimTime(1_002_000_000), &mut out);
        assert!(close(r.avg(), 2.12075), "avg {}", r.avg());
        assert!(out.is_empty());
    }

    #[test]
    fn binary_exponentiation_matches_repeated_multiplication() {
        // 0.5^3 = 0.125 and 0.5^10 = 1/1024 are exact; x^0 = 1.
        assert_eq!(powu(0.5, 3), 0.125);
        assert_eq!(powu(0.5, 10), 1.0 / 1024.0);
        assert_eq!(powu(0.998, 0), 1.0);
        // 0.998² = 0.996004, 0.998⁴ = 0.996004² = 0.992023968016,
        // 0.998⁵ = 0.992023968016 - 0.002·0.992023968016 = 0.990039920079968.
        assert!((powu(0.998, 5) - 0.990_039_920_079_968).abs() < 1e-15);
        let repeated = (0..377).fold(1.0, |a, _| a * 0.998);
        assert!((powu(0.998, 377) - repeated).abs() < 1e-13);
        // Far beyond any idle time of interest the factor underflows to 0.
        assert_eq!(powu(0.998, u64::MAX), 0.0);
    }

    #[test]
    fn the_initial_probability_follows_the_average() {
        let mut r = red(RedConfig::default());
        // min_th 5, max_th 15, max_p 0.02.
        // p_b = max_p (avg - min_th)/(max_th - min_th):
        //   avg 5 → 0;  avg 10 → 0.02·5/10 = 0.01;  avg 12.5 → 0.02·7.5/10 = 0.015
        // gentle, max_th ≤ avg < 2 max_th: p_b = max_p + (1 - max_p)(avg - max_th)/max_th:
        //   avg 15 → 0.02;  avg 22.5 → 0.02 + 0.98·7.5/15 = 0.02 + 0.49 = 0.51
        //   avg 30 → 0.02 + 0.98·15/15 = 1
        for (avg, want) in [
            (5.0, 0.0),
            (10.0, 0.01),
            (12.5, 0.015),
            (15.0, 0.02),
            (22.5, 0.51),
            (30.0, 1.0),
        ] {
            r.avg = avg;
            assert!(
                close(r.early_prob(), want),
                "avg {avg}: p_b {} want {want}",
                r.early_prob()
            );
        }
        // Not gentle: 1 from max_th on.
        r.cfg.gentle = false;
        r.avg = 15.0;
        assert_eq!(r.early_prob(), 1.0);
    }

    #[test]
    fn the_count_spaces_the_marks() {
        // p_b = 1/8 (exact in binary).
        let pb = 0.125;
        // Wait: 0 while count·p_b < 1, p_b/(2 - count·p_b) below 2, then 1.
        //   count 4: 0.5 → 0;  count 8: 1 → 0.125/1 = 0.125;  count 12: 1.5 → 0.125/0.5 = 0.25
        //   count 15: 1.875 → 0.125/0.125 = 1;  count 16: 2 → 1
        for (count, want) in [(4, 0.0), (8, 0.125), (12, 0.25), (15, 1.0), (16, 1.0)] {
            assert_eq!(Red::spaced_prob(pb, count, true), want, "wait, count {count}");
        }
        // No wait (the paper): p_b/(1 - count·p_b) below 1, then 1.
        //   count 0: 0.125;  count 4: 0.125/0.5 = 0.25;  count 7: 0.125/0.125 = 1;  count 8: 1
        for (count, want) in [(0, 0.125), (4, 0.25), (7, 1.0), (8, 1.0)] {
            assert_eq!(Red::spaced_prob(pb, count, false), want, "no wait, count {count}");
        }
    }

    #[test]
    fn early_drops_at_a_fixed_average_come_at_the_rate_of_the_formula() {
        // max_p 0.2 and avg 10 = (min_th + max_th)/2: p_b = 0.2·(10 - 5)/(15 - 5) = 0.1.
        // With `wait`, p_a = 0.1/(2 - 0.1 c) at count c in [10, 20): 1/10 at c = 10, 1/9 at 11,
        // ..., 1/1 at 19, so P(gap = c) = (9/10)(8/9)...·1/(20 - c) = 1/10: the gap between
        // drops is uniform on {10, ..., 19}, mean 14.5, variance (10² - 1)/12 = 8.25.
        // Over n arrivals: n/14.5 drops, standard deviation √(n·8.25/14.5³) (renewal theory).
        // n = 145,000: 10,000 drops, sd √(145000·8.25/3048.625) = √392.4 ≈ 19.8; allow 5 sd.
        // (Without the count, p_a = p_b, there would be 14,500; without `wait`, gaps uniform on
        // {1..10}, mean 5.5: 26,364.)
        // w_q = 1/512 keeps the average exactly at 10 with 10 packets queued:
        // 10·511/512 + 10/512 = 9.98046875 + 0.01953125 = 10, all exact in binary.
        let mut r = red(RedConfig {
            max_p: 0.2,
            w_q: 1.0 / 512.0,
            limit: 100,
            ..RedConfig::default()
        });
        preload(&mut r, 10, 10.0);
        let mut out = Vec::new();
        let (n, mut drops, mut last, mut gaps_ok) = (145_000u32, 0u32, None::<u32>, true);
        for i in 0..n {
            out.clear();
            r.enqueue(pkt(i, false), T0, &mut out);
            match out.as_slice() {
                [] => {
                    r.dequeue(T0, &mut out);
                }
                [Verdict::Drop(p, Reason::Early)] if p.id == i => {
                    drops += 1;
                    if let Some(l) = last {
                        gaps_ok &= (10..=19).contains(&(i - l));
                    }
                    last = Some(i);
                }
                v => panic!("unexpected verdicts {v:?}"),
            }
            assert_eq!(r.len(), 10);
        }
        assert_eq!(r.avg(), 10.0);
        assert!(gaps_ok, "a gap between early drops fell outside [1/p_b, 2/p_b)");
        assert!((9_900..=10_100).contains(&drops), "{drops} drops, expected 10000 ± 100");
    }

    #[test]
    fn no_drop_below_min_th_or_with_at_most_one_packet_queued() {
        let mut r = red(RedConfig::default());
        let mut out = Vec::new();
        // Average far above max_th but a single packet queued: RED does not act.
        preload(&mut r, 1, 40.0);
        r.enqueue(pkt(1, false), T0, &mut out);
        assert!(out.is_empty());
        // Below min_th with a long queue: no drop, and `old` is cleared.
        let mut r = red(RedConfig::default());
        preload(&mut r, 20, 4.0);
        r.count = 1000;
        r.enqueue(pkt(2, false), T0, &mut out);
        assert!(out.is_empty());
        assert!(!r.old);
    }

    #[test]
    fn the_first_arrival_above_min_th_only_starts_the_count() {
        let mut r = red(RedConfig::default());
        preload(&mut r, 10, 14.0);
        r.old = false;
        r.count = 1_000_000; // would make p_a = 1
        let mut out = Vec::new();
        r.enqueue(pkt(1, false), T0, &mut out);
        assert!(out.is_empty());
        assert!(r.old);
        assert_eq!(r.count, 1);
    }

    #[test]
    fn forced_drops_above_max_th_or_twice_max_th_in_gentle_mode() {
        let mut out = Vec::new();
        // Not gentle: avg 16 ≥ max_th 15 (0.998·16 + 0.002·16 = 16 with 16 queued) → Forced.
        let mut r = red(RedConfig {
            gentle: false,
            limit: 100,
            ..RedConfig::default()
        });
        preload(&mut r, 16, 16.0);
        r.enqueue(pkt(1, false), T0, &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(1, false), Reason::Forced)]);
        assert_eq!(r.count, 0);

        // Gentle: avg 29 < 2 max_th = 30 is not forced; with count 1 and p_b = 0.02 + 0.98·14/15
        // ≈ 0.935, wait gives count·p_b < 1 → p_a = 0: accepted.
        let mut r = red(RedConfig {
            limit: 100,
            ..RedConfig::default()
        });
        preload(&mut r, 29, 29.0);
        r.count = 0;
        out.clear();
        r.enqueue(pkt(2, false), T0, &mut out);
        assert!(out.is_empty());
        // avg 31 ≥ 30 → Forced.
        let mut r = red(RedConfig {
            limit: 100,
            ..RedConfig::default()
        });
        preload(&mut r, 31, 31.0);
        r.enqueue(pkt(3, false), T0, &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(3, false), Reason::Forced)]);

        // ECN with hard drop (the default): the ECT packet is dropped all the same.
        let mut r = red(RedConfig {
            ecn: true,
            limit: 100,
            ..RedConfig::default()
        });
        preload(&mut r, 31, 31.0);
        out.clear();
        r.enqueue(pkt(4, true), T0, &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(4, true), Reason::Forced)]);
        // Without hard drop it is marked and queued.
        let mut r = red(RedConfig {
            ecn: true,
            use_hard_drop: false,
            limit: 100,
            ..RedConfig::default()
        });
        preload(&mut r, 31, 31.0);
        out.clear();
        r.enqueue(pkt(5, true), T0, &mut out);
        let marked = Pkt {
            ce: true,
            ..pkt(5, true)
        };
        assert_eq!(out, vec![Verdict::Mark(marked, Reason::Forced)]);
        assert_eq!(r.q.back(), Some(&marked));
    }

    #[test]
    fn with_ecn_an_early_decision_marks_ect_packets_and_drops_the_others() {
        // avg 14 with 10 queued becomes 0.998·14 + 0.002·10 = 13.992, p_b = 0.02·8.992/10 =
        // 0.017984; count 1000: count·p_b = 17.984 ≥ 2 → p_a = 1.
        let cfg = RedConfig {
            ecn: true,
            limit: 100,
            ..RedConfig::default()
        };
        let mut out = Vec::new();

        let mut r = red(cfg);
        preload(&mut r, 10, 14.0);
        r.count = 999;
        r.enqueue(pkt(1, true), T0, &mut out);
        let marked = Pkt {
            ce: true,
            ..pkt(1, true)
        };
        assert_eq!(out, vec![Verdict::Mark(marked, Reason::Early)]);
        assert_eq!(r.len(), 11);
        assert_eq!(r.count, 0);
        // It leaves the queue marked, behind the ten before it.
        for _ in 0..10 {
            r.dequeue(T0, &mut out);
        }
        assert_eq!(r.dequeue(T0, &mut out), Some(marked));

        let mut r = red(cfg);
        preload(&mut r, 10, 14.0);
        r.count = 999;
        out.clear();
        r.enqueue(pkt(2, false), T0, &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(2, false), Reason::Early)]);
        assert_eq!(r.len(), 10);

        // ECN off: the ECT packet is dropped.
        let mut r = red(RedConfig { ecn: false, ..cfg });
        preload(&mut r, 10, 14.0);
        r.count = 999;
        out.clear();
        r.enqueue(pkt(3, true), T0, &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(3, true), Reason::Early)]);
    }

    #[test]
    fn a_full_queue_drops_the_arrival_as_overflow() {
        // Limit 3; min_th out of reach.
        let mut r = red(RedConfig {
            min_th: 50.0,
            max_th: 60.0,
            limit: 3,
            ..RedConfig::default()
        });
        let mut out = Vec::new();
        for id in 0..4 {
            r.enqueue(pkt(id, false), SimTime(u64::from(id)), &mut out);
        }
        assert_eq!(out, vec![Verdict::Drop(pkt(3, false), Reason::Overflow)]);
        assert_eq!((r.len(), r.bytes()), (3, 3000));
        // A marked arrival that finds the queue full is reported once, as the overflow drop.
        let mut r = red(RedConfig {
            ecn: true,
            limit: 10,
            ..RedConfig::default()
        });
        preload(&mut r, 10, 14.0);
        r.count = 999;
        out.clear();
        r.enqueue(pkt(4, true), T0, &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(4, true), Reason::Overflow)]);
        let mut purged = Vec::new();
        r.purge(&mut purged);
        assert_eq!((purged.len(), r.len(), r.bytes()), (10, 0, 0));
    }

    proptest! {
        #[test]
        fn fifo_accounting_and_no_packet_both_sent_and_dropped(
            ops in proptest::collection::vec((0u8..3, 0u64..3_000_000, 40u32..1500, any::<bool>()), 1..400),
            ecn in any::<bool>(),
            gentle in any::<bool>(),
        ) {
            // Small thresholds and a heavy weight so that every region is visited.
            let cfg = RedConfig {
                min_th: 1.0, max_th: 3.0, w_q: 0.3, max_p: 0.5, gentle, ecn,
                use_hard_drop: !ecn, link_rate_bps: 1e7, limit: 8, ..RedConfig::default()
            };
            let mut r = Red::new(cfg, RngStream::from_seed(3));
            let mut model: std::collections::VecDeque<Pkt> = Default::default();
            let (mut now, mut next_id, mut out) = (0u64, 0u32, Vec::new());
            let mut dropped = std::collections::HashSet::new();
            let mut sent = std::collections::HashSet::new();
            for (op, dt, size, ect) in ops {
                now += dt;
                out.clear();
                if op < 2 {
                    let p = Pkt { id: next_id, bytes: size, flow: 1, ect, ce: false };
                    next_id += 1;
                    r.enqueue(p, SimTime(now), &mut out);
                    let mut queued = Some(p);
                    for v in &out {
                        match *v {
                            Verdict::Drop(d, _) => {
                                prop_assert_eq!(d.id, p.id);
                                dropped.insert(d.id);
                                queued = None;
                            }
                            Verdict::Mark(m, _) => {
                                prop_assert!(m.id == p.id && m.ce && m.ect && ecn);
                                queued = queued.map(|q| Pkt { ce: true, ..q });
                            }
                        }
                    }
                    prop_assert!(out.len() <= 1);
                    if let Some(q) = queued {
                        model.push_back(q);
                    }
                } else {
                    let got = r.dequeue(SimTime(now), &mut out);
                    prop_assert!(out.is_empty());
                    prop_assert_eq!(got, model.pop_front());
                    if let Some(g) = got {
                        prop_assert!(sent.insert(g.id));
                    }
                }
                prop_assert_eq!(r.len(), model.len());
                prop_assert_eq!(r.is_empty(), model.is_empty());
                prop_assert_eq!(r.bytes(), model.iter().map(|p| u64::from(p.bytes)).sum::<u64>());
            }
            prop_assert!(sent.is_disjoint(&dropped));
        }
    }
}
