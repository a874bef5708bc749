//! PIE, Proportional Integral controller Enhanced (RFC 8033): a FIFO that drops (or, with ECN,
//! marks) arriving packets at random with a probability that a PI controller updates every
//! `t_update` from the queuing delay, its distance to `qdelay_ref` and its trend.
//!
//! # Read first
//!
//! * RFC 8033 §4.1 (random dropping and the work-conserving safeguard), §4.2 (the probability
//!   update, its auto-tuning by the size of the probability, the exponential decay, the bounds),
//!   §4.3 (the latency estimate), §4.4 (burst tolerance), §5.1 (ECN), §5.5 (cap drop
//!   adjustment), and Appendices A and B (the pseudo-code).
//! * ns-3.44 `src/traffic-control/model/pie-queue-disc.cc` (`DoEnqueue`, `DropEarly`,
//!   `CalculateP`, `DoDequeue`), aligned with RFC 8033 since ns-3.32.
//!
//! # Defaults ([`PieConfig::default`])
//!
//! `qdelay_ref` 15 ms and `t_update` 15 ms (RFC 8033 §4.2; ns-3 `QueueDelayReference`,
//! `Tupdate`), `alpha` 0.125 Hz and `beta` 1.25 Hz (RFC 8033; ns-3 `A`, `B`), `max_burst` 150 ms
//! (RFC 8033 §4.4; ns-3 `MaxBurstAllowance` since ns-3.36), `mark_ecn_th` 0.1 (RFC 8033 §5.1;
//! ns-3 `MarkEcnThreshold`), cap drop adjustment on (RFC 8033 §5.5; ns-3
//! `UseCapDropAdjustment`), `ecn` off (ns-3 `UseEcn`), `limit` 25 packets (ns-3 `MaxSize`; the
//! RFC leaves the tail-drop limit to the implementation).
//!
//! The queuing delay is measured with timestamps, as ns-3 does by default since ns-3.32
//! (`UseDequeueRateEstimator` false): `current_qdelay` is the time the last dequeued packet
//! waited, or 0 if that dequeue emptied the queue (RFC 8033 §4.3 allows either timestamps or
//! the dequeue-rate estimate of §5.2, which the RFC's pseudo-code uses).
//!
//! # No timer
//!
//! The RFC runs the update every `t_update` from a timer. Here the updates due at `t_update`,
//! `2 t_update`, ... are run lazily: each [`Pie::enqueue`] and [`Pie::dequeue`] first runs, in
//! order, every update whose time has come (an update due at the very time of the call runs
//! before it). This is exact: an update reads only the drop probability, the delay samples and
//! the burst allowance, which change only in updates and in these calls. Once an update leaves
//! that state unchanged (an idle queue whose probability has decayed to 0), the further
//! updates due are skipped, since they would change nothing either.
//!
//! # Where this differs from ns-3.44
//!
//! * Burst tolerance follows RFC 8033 §4.4: the allowance starts at `max_burst`, shrinks by
//!   `t_update` at each update, and is reset to `max_burst` whenever congestion is gone (drop
//!   probability 0 and both delay samples below `qdelay_ref/2`); the probability is updated
//!   throughout. ns-3 keeps ns-2's burst state machine instead: the allowance is armed at the
//!   first arrival, the probability is held at 0 while it lasts, and it is re-armed only after
//!   1.5 s without congestion.
//! * ECN marks when the probability is below `mark_ecn_th` (`drop_prob < 0.1`), as ns-3 does; at
//!   exactly 0.1 the packet is dropped (Linux `sch_pie` marks up to and including it).
//!
//! # Simplified
//!
//! Packet mode only (the drop probability is not scaled by the packet's size, and "a couple of
//! packets" in §4.1 is 2 packets, as in ns-3's packet mode); no dequeue-rate estimator (§5.2),
//! no active/inactive switching (§5.3), no derandomization (§5.4), no L4S CE threshold: each is
//! off by default in ns-3.

use std::collections::VecDeque;

use tpsim_core::{RngStream, SimDuration, SimTime};

use crate::{Entry, Pkt, Reason, Verdict};

/// PIE's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    /// Target queuing delay (RFC 8033 `QDELAY_REF`).
    pub qdelay_ref: SimDuration,
    /// Period of the drop-probability update (RFC 8033 `T_UPDATE`), > 0.
    pub t_update: SimDuration,
    /// Weight of the delay's distance to the target in the update (RFC 8033 `alpha`), 1/s.
    pub alpha: f64,
    /// Weight of the delay's change since the last update (RFC 8033 `beta`), 1/s.
    pub beta: f64,
    /// Burst allowance: how long a burst is let through without random drops after congestion
    /// has gone (RFC 8033 `MAX_BURST`, effectively rounded up to a multiple of `t_update`).
    pub max_burst: SimDuration,
    /// With `ecn`, ECN-capable packets are marked while the drop probability is below this, and
    /// dropped from it on (RFC 8033 `mark_ecnth`), a probability.
    pub mark_ecn_th: f64,
    /// Limit each increase of a probability already at 0.1 or more to 0.02 (RFC 8033 §5.5).
    pub cap_drop_adjustment: bool,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 8033 §5.1).
    pub ecn: bool,
    /// Packets the queue holds before arrivals are dropped (`Overflow`), packets.
    pub limit: usize,
}

impl Default for PieConfig {
    /// RFC 8033's recommended values, and ns-3.44 `PieQueueDisc`'s (see the module
    /// documentation).
    fn default() -> Self {
        PieConfig {
            qdelay_ref: SimDuration::from_millis(15),
            t_update: SimDuration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: SimDuration::from_millis(150),
            mark_ecn_th: 0.1,
            cap_drop_adjustment: true,
            ecn: false,
            limit: 25,
        }
    }
}

/// A PIE queue.
#[derive(Clone, Debug)]
pub struct Pie {
    cfg: PieConfig,
    rng: RngStream,
    q: VecDeque<Entry>,
    bytes: u64,
    /// RFC 8033 `drop_prob_`.
    drop_prob: f64,
    /// RFC 8033 `current_qdelay`: the wait of the last packet dequeued (0 if it emptied the
    /// queue).
    qdelay: SimDuration,
    /// RFC 8033 `qdelay_old_`: `qdelay` at the previous update.
    qdelay_old: SimDuration,
    /// RFC 8033 `burst_allowance_`.
    burst_allowance: SimDuration,
    /// When the next probability update is due.
    next_update: SimTime,
}

impl Pie {
    /// An empty queue with the given parameters and random stream; its first update is due at
    /// `t_update`.
    ///
    /// Panics if `t_update` is zero.
    pub fn new(cfg: PieConfig, rng: RngStream) -> Self {
        assert!(cfg.t_update > SimDuration::ZERO, "PIE needs t_update > 0");
        Pie {
            cfg,
            rng,
            q: VecDeque::with_capacity(cfg.limit.min(4096)),
            bytes: 0,
            drop_prob: 0.0,
            qdelay: SimDuration::ZERO,
            qdelay_old: SimDuration::ZERO,
            // RFC 8033 §4.4: "initialized to MAX_BURST".
            burst_allowance: cfg.max_burst,
            next_update: SimTime::ZERO + cfg.t_update,
        }
    }

    /// The drop probability as of the last update run (updates run lazily, at the next
    /// `enqueue` or `dequeue`).
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// The current queuing-delay sample: the wait of the last packet dequeued, or zero if that
    /// dequeue emptied the queue.
    pub fn qdelay(&self) -> SimDuration {
        self.qdelay
    }

    /// Packet `p` arrives at `now`: runs the updates due, then queues `p`, marks it (`Mark`,
    /// with `p.ce` set on the queued copy) or drops it (`Early` or `Overflow`).
    pub fn enqueue(&mut self, p: Pkt, now: SimTime, out: &mut Vec<Verdict>) {
        self.catch_up(now);
        // RFC 8033 Appendices A and B (`enque`): the tail-drop limit first.
        if self.q.len() >= self.cfg.limit {
            out.push(Verdict::Drop(p, Reason::Overflow));
            return;
        }
        let mut p = p;
        // RFC 8033 §4.4: while burst allowance remains, bypass the random drop.
        if self.burst_allowance == SimDuration::ZERO && self.drop_early() {
            // RFC 8033 §5.1: mark an ECN-capable packet while the probability is below
            // mark_ecnth, drop it above.
            if self.cfg.ecn && p.ect && self.drop_prob < self.cfg.mark_ecn_th {
                p.ce = true;
                out.push(Verdict::Mark(p, Reason::Early));
            } else {
                out.push(Verdict::Drop(p, Reason::Early));
                return;
            }
        }
        self.bytes += u64::from(p.bytes);
        self.q.push_back(Entry { pkt: p, at: now });
    }

    /// RFC 8033 §4.1 (`drop_early` in Appendix A): whether to drop the arriving packet.
    fn drop_early(&mut self) -> bool {
        // RFC 8033 §4.1: stay work-conserving; no random drop while the last delay sample is
        // below half the target and the probability below 0.2, or with at most a couple of
        // packets queued (`queue_.byte_length() <= 2 * MEAN_PKTSIZE`; 2 packets in ns-3's
        // packet mode).
        let low_delay = self.qdelay_old.0.saturating_mul(2) < self.cfg.qdelay_ref.0;
        if (low_delay && self.drop_prob < 0.2) || self.q.len() <= 2 {
            return false;
        }
        // RFC 8033 §4.1: drop with probability drop_prob_.
        self.rng.uniform() < self.drop_prob
    }

    /// Runs every update due at or before `now`, in order.
    fn catch_up(&mut self, now: SimTime) {
        let t = self.cfg.t_update.0;
        while self.next_update <= now && self.next_update != SimTime::NEVER {
            let before = self.state();
            self.update();
            self.next_update += self.cfg.t_update;
            if self.next_update <= now && self.state() == before {
                // A fixed point (qdelay_old already equal to qdelay, the probability and the
                // allowance unchanged): every further update due by `now` repeats this one.
                let k = (now.0 - self.next_update.0) / t + 1;
                self.next_update = SimTime(self.next_update.0.saturating_add(k.saturating_mul(t)));
            }
        }
    }

    /// What an update reads besides `qdelay` (which only a dequeue changes).
    fn state(&self) -> (u64, SimDuration, SimDuration) {
        (self.drop_prob.to_bits(), self.qdelay_old, self.burst_allowance)
    }

    /// One periodic update of the drop probability and the burst allowance (RFC 8033 §4.2,
    /// §4.4, §5.5; `calculate_drop_prob` in Appendix A).
    fn update(&mut self) {
        let c = &self.cfg;
        let qdelay = self.qdelay.as_secs_f64();
        let qdelay_old = self.qdelay_old.as_secs_f64();
        let target = c.qdelay_ref.as_secs_f64();

        // RFC 8033 §4.2: p = alpha (current_qdelay - QDELAY_REF) + beta (current_qdelay -
        // qdelay_old_).
        let mut p = c.alpha * (qdelay - target) + c.beta * (qdelay - qdelay_old);
        // RFC 8033 §4.2: scale alpha and beta down while the probability is small.
        let prob = self.drop_prob;
        if prob < 0.000_001 {
            p /= 2048.0;
        } else if prob < 0.000_01 {
            p /= 512.0;
        } else if prob < 0.000_1 {
            p /= 128.0;
        } else if prob < 0.001 {
            p /= 32.0;
        } else if prob < 0.01 {
            p /= 8.0;
        } else if prob < 0.1 {
            p /= 2.0;
        }
        // RFC 8033 §5.5: from 0.1 on, raise the probability by at most 0.02 per update.
        if c.cap_drop_adjustment && prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        let mut next = prob + p;
        // RFC 8033 §4.2: decay by 2 % per update while both delay samples are 0.
        if self.qdelay == SimDuration::ZERO && self.qdelay_old == SimDuration::ZERO {
            next *= 0.98;
        }
        // RFC 8033 §4.2: bound to [0, 1].
        self.drop_prob = next.clamp(0.0, 1.0);

        // RFC 8033 §4.4: the allowance shrinks by T_UPDATE per update, bottoming at 0 ...
        self.burst_allowance = SimDuration(self.burst_allowance.0.saturating_sub(c.t_update.0));
        // ... and is reset to MAX_BURST once congestion has gone: probability 0 and both delay
        // samples below QDELAY_REF/2.
        let half = |d: SimDuration| d.0.saturating_mul(2) < c.qdelay_ref.0;
        if self.drop_prob == 0.0 && half(self.qdelay) && half(self.qdelay_old) {
            self.burst_allowance = c.max_burst;
        }

        // RFC 8033 §4.2: store the current latency value.
        self.qdelay_old = self.qdelay;
    }

    /// The head packet, if any, after running the updates due. Its wait becomes the delay
    /// sample (zero if it was the last packet: ns-3's rule).
    pub fn dequeue(&mut self, now: SimTime, _out: &mut Vec<Verdict>) -> Option<Pkt> {
        self.catch_up(now);
        let e = self.q.pop_front()?;
        self.bytes -= u64::from(e.pkt.bytes);
        // RFC 8033 §4.3 with timestamps; ns-3 `DoDequeue` zeroes it when the queue empties.
        self.qdelay = if self.q.is_empty() {
            SimDuration::ZERO
        } else {
            now.saturating_since(e.at)
        };
        Some(e.pkt)
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

    /// Takes every waiting packet, head first, without any PIE decision. The delay sample
    /// becomes zero, as after a dequeue that empties the queue.
    pub fn purge(&mut self, out: &mut Vec<Pkt>) {
        out.extend(self.q.drain(..).map(|e| e.pkt));
        self.bytes = 0;
        self.qdelay = SimDuration::ZERO;
    }

    /// Takes the waiting packets `pred` picks, in queue order (the delay samples are left as
    /// they are).
    pub fn remove_where(&mut self, mut pred: impl FnMut(&Pkt) -> bool, out: &mut Vec<Pkt>) {
        self.bytes -= crate::take_where(&mut self.q, |e| e.pkt, &mut pred, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn at_ms(x: u64) -> SimTime {
        SimTime(x * MS)
    }

    fn pkt(id: u32, ect: bool) -> Pkt {
        Pkt {
            id,
            bytes: 1000,
            flow: 0,
            ect,
            ce: false,
        }
    }

    fn pie(cfg: PieConfig) -> Pie {
        Pie::new(cfg, RngStream::from_seed(11))
    }

    /// Puts `n` packets in the queue directly (arrived at 0).
    fn preload(q: &mut Pie, n: u32) {
        for id in 0..n {
            q.q.push_back(Entry {
                pkt: pkt(1_000_000 + id, false),
                at: SimTime::ZERO,
            });
            q.bytes += 1000;
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-9)
    }

    #[test]
    fn the_update_follows_the_delays_with_alpha_and_beta_scaled_by_p() {
        // alpha 0.125, beta 1.25, QDELAY_REF 15 ms; no burst allowance in the way.
        let mut q = pie(PieConfig::default());
        q.burst_allowance = SimDuration::ZERO;
        let steps: [(u64, f64); 4] = [
            // 1) qdelay 30 ms, old 0: p = 0.125·(0.030 - 0.015) + 1.25·(0.030 - 0)
            //    = 0.001875 + 0.0375 = 0.039375; prob 0 < 1e-6 → /2048 = 1.922607421875e-5.
            (30, 1.922_607_421_875e-5),
            // 2) 30 ms, old 30: p = 0.001875 + 0 = 0.001875; prob in [1e-5, 1e-4) → /128
            //    = 1.46484375e-5; prob = 1.922607421875e-5 + 1.46484375e-5 = 3.387451171875e-5.
            (30, 3.387_451_171_875e-5),
            // 3) 60 ms, old 30: p = 0.125·0.045 + 1.25·0.030 = 0.005625 + 0.0375 = 0.043125;
            //    prob in [1e-5, 1e-4) → /128 = 3.369140625e-4; prob = 3.7078857421875e-4.
            (60, 3.707_885_742_187_5e-4),
            // 4) 60 ms, old 60: p = 0.005625; prob in [1e-4, 1e-3) → /32 = 1.7578125e-4;
            //    prob = 3.7078857421875e-4 + 1.7578125e-4 = 5.4656982421875e-4.
            (60, 5.465_698_242_187_5e-4),
        ];
        for (i, (delay, want)) in steps.into_iter().enumerate() {
            q.qdelay = ms(delay);
            q.update();
            assert!(close(q.drop_prob(), want), "step {i}: {} want {want}", q.drop_prob());
            assert_eq!(q.qdelay_old, ms(delay));
        }

        // The larger scales, from a given probability with qdelay 45 ms, old 15 ms:
        // p = 0.125·(0.045 - 0.015) + 1.25·(0.045 - 0.015) = 0.00375 + 0.0375 = 0.04125.
        let from = |prob: f64, cap: bool| {
            let mut q = pie(PieConfig {
                cap_drop_adjustment: cap,
                ..PieConfig::default()
            });
            q.burst_allowance = SimDuration::ZERO;
            q.drop_prob = prob;
            q.qdelay_old = ms(15);
            q.qdelay = ms(45);
            q.update();
            q.drop_prob()
        };
        // prob 0.005 in [0.001, 0.01) → /8: 0.005 + 0.00515625 = 0.01015625.
        assert!(close(from(0.005, true), 0.010_156_25));
        // prob 0.05 in [0.01, 0.1) → /2: 0.05 + 0.020625 = 0.070625.
        assert!(close(from(0.05, true), 0.070_625));
        // prob 0.15 ≥ 0.1: unscaled, 0.15 + 0.04125 = 0.19125; capped at +0.02 (§5.5): 0.17.
        assert!(close(from(0.15, false), 0.191_25));
        assert!(close(from(0.15, true), 0.17));

        // Falling delay: prob 0.05, qdelay 5 ms, old 5 ms: p = 0.125·(0.005 - 0.015) = -0.00125,
        // /2 = -0.000625 → 0.049375.
        let mut q = pie(PieConfig::default());
        (q.drop_prob, q.qdelay, q.qdelay_old) = (0.05, ms(5), ms(5));
        q.update();
        assert!(close(q.drop_prob(), 0.049_375));

        // Upper bound: prob 0.99, qdelay 200 ms, old 15 ms, no cap: p = 0.125·0.185 + 1.25·0.185
        // = 0.023125 + 0.23125 = 0.254375 → 1.244375 → 1.
        let mut q = pie(PieConfig {
            cap_drop_adjustment: false,
            ..PieConfig::default()
        });
        (q.drop_prob, q.qdelay, q.qdelay_old) = (0.99, ms(200), ms(15));
        q.update();
        assert_eq!(q.drop_prob(), 1.0);
    }

    #[test]
    fn an_idle_queue_decays_the_probability_by_two_percent() {
        // Both samples 0: prob 0.5, p = 0.125·(0 - 0.015) = -0.001875 (unscaled at ≥ 0.1)
        // → 0.498125, ×0.98 = 0.4881625.
        let mut q = pie(PieConfig::default());
        q.drop_prob = 0.5;
        q.update();
        assert!(close(q.drop_prob(), 0.488_162_5));
        // Only the current sample 0 (old 10 ms): no decay. p = 0.125·(-0.015) + 1.25·(-0.010)
        // = -0.001875 - 0.0125 = -0.014375 → 0.4881625 - 0.014375 = 0.4737875.
        q.qdelay_old = ms(10);
        q.update();
        assert!(close(q.drop_prob(), 0.473_787_5));
        // Bottoms at 0: prob 0.001 in [0.001, 0.01) with both samples 0: p = -0.001875/8 =
        // -0.000234375 → 0.000765625 ×0.98 = 0.0007503125; from 0.0001 ([1e-4, 1e-3): /32):
        // 0.0001 - 0.00005859375 = 0.00004140625 ×0.98 = 0.000040578125; from 1e-7 (/2048):
        // 1e-7 - 9.1552734375e-7 < 0 → 0.
        for (from, want) in [(0.001, 0.000_750_312_5), (0.0001, 0.000_040_578_125), (1e-7, 0.0)] {
            let mut q = pie(PieConfig::default());
            q.drop_prob = from;
            q.update();
            assert!(close(q.drop_prob(), want), "from {from}: {} want {want}", q.drop_prob());
        }
    }

    #[test]
    fn the_delay_sample_is_the_wait_of_the_last_packet_dequeued() {
        let mut q = pie(PieConfig::default());
        let mut out = Vec::new();
        for id in 0..3 {
            q.enqueue(pkt(id, false), at_ms(id as u64), &mut out);
        }
        // Packet 0 arrived at 0 ms, leaves at 10 ms with two behind it: 10 ms.
        assert_eq!(q.dequeue(at_ms(10), &mut out).map(|p| p.id), Some(0));
        assert_eq!(q.qdelay(), ms(10));
        // Packet 1 (arrived 1 ms) leaves at 12 ms: 11 ms.
        q.dequeue(at_ms(12), &mut out);
        assert_eq!(q.qdelay(), ms(11));
        // The last one empties the queue: 0.
        q.dequeue(at_ms(13), &mut out);
        assert_eq!(q.qdelay(), SimDuration::ZERO);
        assert!(out.is_empty());
    }

    #[test]
    fn the_burst_allowance_lets_a_burst_through_then_runs_out() {
        // A congested state: probability 1, both samples 100 ms (≥ 7.5 ms), ten packets queued.
        // The allowance starts at 150 ms; updates at 15, 30, ..., 150 ms each take 15 ms off
        // and keep the probability at 1 (p > 0 added, bounded at 1), so it is 150 - 15k after
        // the update at 15k ms: still 15 ms at 149 ms, 0 at 150 ms.
        let mut q = pie(PieConfig {
            limit: 1000,
            ..PieConfig::default()
        });
        preload(&mut q, 10);
        (q.drop_prob, q.qdelay, q.qdelay_old) = (1.0, ms(100), ms(100));
        let mut out = Vec::new();
        for t in 0..150 {
            q.enqueue(pkt(t as u32, false), at_ms(t), &mut out);
        }
        assert!(out.is_empty(), "the burst was dropped from: {:?}", out.first());
        assert_eq!(q.burst_allowance, ms(15));
        assert_eq!(q.len(), 160);
        // At 150 ms the allowance is gone and the probability is 1: dropped.
        q.enqueue(pkt(150, false), at_ms(150), &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(150, false), Reason::Early)]);
        assert_eq!(q.burst_allowance, SimDuration::ZERO);
        assert_eq!(q.drop_prob(), 1.0);
    }

    #[test]
    fn the_burst_allowance_is_reset_once_congestion_has_gone() {
        // Probability 0, both samples 0 (< 7.5 ms), allowance used up: reset to 150 ms.
        let mut q = pie(PieConfig::default());
        q.burst_allowance = SimDuration::ZERO;
        q.update();
        assert_eq!(q.burst_allowance, ms(150));
        // Probability still above 0 (0.01 is in [0.01, 0.1): p = -0.001875/2 = -0.0009375,
        // (0.01 - 0.0009375)·0.98 = 0.0090625·0.98 = 0.00888125): no reset.
        let mut q = pie(PieConfig::default());
        (q.burst_allowance, q.drop_prob) = (SimDuration::ZERO, 0.01);
        q.update();
        assert!(close(q.drop_prob(), 0.008_881_25));
        assert_eq!(q.burst_allowance, SimDuration::ZERO);
        // A sample at 7.5 ms (not below QDELAY_REF/2) blocks it too, even with probability 0.
        let mut q = pie(PieConfig::default());
        (q.burst_allowance, q.qdelay, q.qdelay_old) =
            (SimDuration::ZERO, SimDuration(7_500_000), SimDuration(7_500_000));
        q.update();
        assert_eq!(q.drop_prob(), 0.0);
        assert_eq!(q.burst_allowance, SimDuration::ZERO);
    }

    /// Offers `n` arrivals at `now` to a queue held at `len` packets (each accepted arrival is
    /// dequeued again), returning (drops, marks).
    fn offer(q: &mut Pie, n: u32, ect: bool, now: SimTime) -> (u32, u32) {
        let (mut drops, mut marks, mut out) = (0, 0, Vec::new());
        let len = q.len();
        for i in 0..n {
            out.clear();
            q.enqueue(pkt(i, ect), now, &mut out);
            match out.as_slice() {
                [] => {}
                [Verdict::Drop(_, Reason::Early)] => drops += 1,
                [Verdict::Mark(p, Reason::Early)] if p.ce => marks += 1,
                v => panic!("unexpected {v:?}"),
            }
            if q.len() > len {
                q.q.pop_back();
                q.bytes -= 1000;
            }
        }
        (drops, marks)
    }

    /// A queue with no burst allowance, `n` packets, the given probability and old sample; all
    /// calls before the first update (15 ms).
    fn congested(prob: f64, old: SimDuration, n: u32, cfg: PieConfig) -> Pie {
        let mut q = pie(cfg);
        preload(&mut q, n);
        (q.burst_allowance, q.drop_prob, q.qdelay_old, q.qdelay) = (SimDuration::ZERO, prob, old, old);
        q
    }

    #[test]
    fn no_random_drop_at_low_delay_and_low_probability_or_with_two_packets() {
        let cfg = PieConfig::default();
        let t = at_ms(1);
        // qdelay_old 7 ms < 7.5 ms and prob 0.19 < 0.2: never.
        let mut q = congested(0.19, ms(7), 10, cfg);
        assert_eq!(offer(&mut q, 2000, false, t), (0, 0));
        // The same delay with prob 0.2: drops, about 0.2·2000 = 400 (sd √(2000·0.2·0.8) ≈ 18).
        let mut q = congested(0.2, ms(7), 10, cfg);
        let (d, _) = offer(&mut q, 2000, false, t);
        assert!((310..=490).contains(&d), "{d} drops");
        // prob 0.1 with qdelay_old exactly 7.5 ms (not below half the target): drops, about 200
        // (sd √(2000·0.1·0.9) ≈ 13).
        let mut q = congested(0.1, SimDuration(7_500_000), 10, cfg);
        let (d, _) = offer(&mut q, 2000, false, t);
        assert!((135..=265).contains(&d), "{d} drops");
        // Probability 1 and a long delay, but at most 2 packets queued: accepted; the 4th
        // arrival (3 queued) is dropped.
        let mut q = congested(1.0, ms(100), 0, cfg);
        let mut out = Vec::new();
        for id in 0..4 {
            q.enqueue(pkt(id, false), t, &mut out);
        }
        assert_eq!(out, vec![Verdict::Drop(pkt(3, false), Reason::Early)]);
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn ecn_marks_below_mark_ecn_th_and_drops_from_it_on() {
        let cfg = PieConfig {
            ecn: true,
            ..PieConfig::default()
        };
        let t = at_ms(1);
        let old = ms(100);
        // prob 0.05 < 0.1: ECT arrivals are marked, never dropped, about 0.05·4000 = 200
        // (sd ≈ 14).
        let mut q = congested(0.05, old, 10, cfg);
        let (d, m) = offer(&mut q, 4000, true, t);
        assert_eq!(d, 0);
        assert!((130..=270).contains(&m), "{m} marks");
        // ... non-ECT arrivals dropped.
        let mut q = congested(0.05, old, 10, cfg);
        let (d, m) = offer(&mut q, 4000, false, t);
        assert_eq!(m, 0);
        assert!((130..=270).contains(&d), "{d} drops");
        // prob 0.1 (= mark_ecn_th) and 0.3: ECT arrivals are dropped, none marked.
        for (prob, lo, hi) in [(0.1, 300, 500), (0.3, 1050, 1350)] {
            let mut q = congested(prob, old, 10, cfg);
            let (d, m) = offer(&mut q, 4000, true, t);
            assert_eq!(m, 0, "prob {prob}");
            assert!((lo..=hi).contains(&d), "prob {prob}: {d} drops");
        }
        // ECN off: ECT arrivals dropped at prob 0.05.
        let mut q = congested(0.05, old, 10, PieConfig::default());
        let (d, m) = offer(&mut q, 4000, true, t);
        assert_eq!(m, 0);
        assert!(d > 0);
    }

    #[test]
    fn a_marked_packet_leaves_with_ce_set_and_overflow_drops_the_arrival() {
        let mut q = congested(
            0.05,
            ms(100),
            3,
            PieConfig {
                ecn: true,
                limit: 4,
                ..PieConfig::default()
            },
        );
        q.drop_prob = 0.099_999; // below the ECN threshold; draw until a mark happens.
        let mut out = Vec::new();
        let mut id = 0;
        while out.is_empty() {
            q.enqueue(pkt(id, true), at_ms(1), &mut out);
            if out.is_empty() {
                q.q.pop_back();
                q.bytes -= 1000;
            }
            id += 1;
        }
        let marked = Pkt {
            ce: true,
            ..pkt(id - 1, true)
        };
        assert_eq!(out, vec![Verdict::Mark(marked, Reason::Early)]);
        // Full (4): the next arrival is an overflow drop, whatever the probability.
        out.clear();
        q.enqueue(pkt(99, true), at_ms(1), &mut out);
        assert_eq!(out, vec![Verdict::Drop(pkt(99, true), Reason::Overflow)]);
        for _ in 0..3 {
            q.dequeue(at_ms(2), &mut out);
        }
        assert_eq!(q.dequeue(at_ms(2), &mut out), Some(marked));
    }

    #[test]
    fn lazy_updates_give_what_updates_at_every_t_update_give() {
        // Two queues with the same seed and traffic: `lazy` sees only the packets; `eager` also
        // runs its updates at every multiple of t_update. 1 arrival per ms for 400 ms and a
        // departure every 1.2 ms (the queue and its delay grow past the target, drops begin once
        // the burst allowance is spent); then the link stalls until 6 s with ~60 packets queued
        // (the probability climbs to 1 and stays: the lazy queue skips those updates); from 6 s
        // it drains at 1 packet per ms while a packet arrives every 2 ms; silence until 12 s;
        // then a few more packets.
        let cfg = PieConfig {
            limit: 1000,
            ..PieConfig::default()
        };
        let mut lazy = pie(cfg);
        let mut eager = pie(cfg);
        let mut events: Vec<(u64, bool)> = Vec::new(); // (ns, is_arrival)
        for i in 0..400u64 {
            events.push((i * MS, true));
        }
        for j in 1..=333u64 {
            events.push((j * 1_200_000, false));
        }
        for i in 0..120u64 {
            events.push((6_000 * MS + i * MS, false));
        }
        for i in 0..50u64 {
            events.push((6_000 * MS + i * 2 * MS, true));
        }
        for i in 0..20u64 {
            events.push((12_000 * MS + i * 3 * MS, true));
            events.push((12_000 * MS + i * 3 * MS + MS, false));
        }
        events.sort();
        let (mut next_tick, mut id, mut drops) = (15 * MS, 0u32, 0);
        let (mut out_l, mut out_e) = (Vec::new(), Vec::new());
        for (t, arrival) in events {
            while next_tick <= t {
                eager.catch_up(SimTime(next_tick));
                next_tick += 15 * MS;
            }
            out_l.clear();
            out_e.clear();
            if arrival {
                lazy.enqueue(pkt(id, true), SimTime(t), &mut out_l);
                eager.enqueue(pkt(id, true), SimTime(t), &mut out_e);
                id += 1;
            } else {
                assert_eq!(
                    lazy.dequeue(SimTime(t), &mut out_l),
                    eager.dequeue(SimTime(t), &mut out_e)
                );
            }
            drops += out_l.len();
            assert_eq!(out_l, out_e);
            assert_eq!(lazy.drop_prob().to_bits(), eager.drop_prob().to_bits(), "at {t} ns");
            assert_eq!(lazy.state(), eager.state());
            assert_eq!(lazy.next_update, eager.next_update);
        }
        assert!(drops > 20, "the scenario should drop ({drops})");
        // After the silence the probability has decayed to 0.
        assert_eq!(lazy.drop_prob(), 0.0);
        assert!(lazy.is_empty());
    }

    #[test]
    fn a_long_idle_period_is_skipped_exactly() {
        // From probability 0.3 with both samples 0, every update decays it; eager stepping over
        // 100 s (6,667 updates) and one lazy call must agree, and the lazy one reaches the fixed
        // point (0, allowance 150 ms) and skips the rest.
        let mut lazy = pie(PieConfig::default());
        lazy.drop_prob = 0.3;
        let mut eager = lazy.clone();
        let end = SimTime(100_000 * MS);
        let mut t = 15 * MS;
        while t <= end.0 {
            eager.catch_up(SimTime(t));
            t += 15 * MS;
        }
        lazy.catch_up(end);
        assert_eq!(lazy.state(), eager.state());
        assert_eq!(lazy.next_update, eager.next_update);
        assert_eq!(lazy.next_update, SimTime(t));
        assert_eq!((lazy.drop_prob(), lazy.burst_allowance), (0.0, ms(150)));
    }

    proptest! {
        #[test]
        fn fifo_accounting_and_no_packet_both_sent_and_dropped(
            ops in proptest::collection::vec((0u8..3, 0u64..4_000_000, 40u32..1500, any::<bool>()), 1..400),
            ecn in any::<bool>(),
        ) {
            // A short period and target, large gains and a small burst allowance so that drops
            // and marks happen.
            let cfg = PieConfig {
                qdelay_ref: SimDuration::from_micros(500), t_update: ms(1), alpha: 20.0, beta: 200.0,
                max_burst: ms(2), ecn, limit: 10, ..PieConfig::default()
            };
            let mut q = Pie::new(cfg, RngStream::from_seed(5));
            let mut model: VecDeque<Pkt> = VecDeque::new();
            let (mut now, mut next_id, mut out) = (0u64, 0u32, Vec::new());
            let mut dropped = std::collections::HashSet::new();
            let mut sent = std::collections::HashSet::new();
            for (op, dt, size, ect) in ops {
                now += dt;
                out.clear();
                if op < 2 {
                    let p = Pkt { id: next_id, bytes: size, flow: 1, ect, ce: false };
                    next_id += 1;
                    q.enqueue(p, SimTime(now), &mut out);
                    prop_assert!(out.len() <= 1);
                    match out.first() {
                        None => model.push_back(p),
                        Some(Verdict::Drop(d, _)) => {
                            prop_assert_eq!(d.id, p.id);
                            dropped.insert(d.id);
                        }
                        Some(Verdict::Mark(m, r)) => {
                            prop_assert!(m.id == p.id && m.ce && m.ect && ecn && *r == Reason::Early);
                            model.push_back(*m);
                        }
                    }
                } else {
                    let got = q.dequeue(SimTime(now), &mut out);
                    prop_assert!(out.is_empty());
                    prop_assert_eq!(got, model.pop_front());
                    if let Some(g) = got {
                        prop_assert!(sent.insert(g.id));
                    }
                }
                prop_assert!((0.0..=1.0).contains(&q.drop_prob()));
                prop_assert!(q.next_update > SimTime(now));
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.is_empty(), model.is_empty());
                prop_assert_eq!(q.bytes(), model.iter().map(|p| u64::from(p.bytes)).sum::<u64>());
            }
            prop_assert!(sent.is_disjoint(&dropped));
        }
    }
}
