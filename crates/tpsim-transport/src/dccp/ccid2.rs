//! CCID 2, TCP-like congestion control (RFC 4341), HC-Sender side.
//!
//! The window `cwnd` and the `pipe` (data packets sent, neither acknowledged nor lost) count
//! packets (§5). Acknowledgements come as Ack Vectors (§3, RFC 4340 §11.4); a data packet is
//! lost once `NUMDUPACK` (3) data packets sent after it are acknowledged (§5), and the window
//! halves at most once per window of data (§5). The RTO follows TCP's (§5, RFC 2988). The
//! sender also runs Ack Ratio (§6.1.2): never above ⌈cwnd/2⌉, doubled when the peer's Acks get
//! lost, decreased by one after cwnd/(R² − R) windows without a lost Ack.
//!
//! Each data packet sent has a record in a fixed ring of [`RING_LEN`] entries indexed by
//! sequence number; cwnd is bounded by half of it.

use super::seqwin::{seq_add, seq_lt, seq_sub};
use crate::tcp::RttEstimator;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::dccp::{AckState, AckVector};

/// Records of sent data packets kept (a power of two).
pub const RING_LEN: u64 = 2048;
/// Largest cwnd, packets (half the record ring).
pub const MAX_CWND: u32 = (RING_LEN / 2) as u32;

#[derive(Clone, Copy, Debug, Default)]
struct Rec {
    seq: u64,
    sent: SimTime,
    used: bool,
    acked: bool,
    lost: bool,
}

/// CCID 2 sender state.
#[derive(Clone, Debug)]
pub struct Ccid2 {
    cwnd: u32,
    ssthresh: u32,
    pipe: u32,
    /// Newly acknowledged packets counted toward the next +1 in congestion avoidance.
    ca_acked: u32,
    ring: Vec<Rec>,
    /// Lowest sequence number that may still be unresolved (neither acked nor lost).
    low: u64,
    /// Greatest data sequence number sent + 1 (low..next are the candidates).
    next: u64,
    any_sent: bool,
    /// Losses of packets below this sequence number belong to the last reduction (§5: at
    /// most one halving per window).
    recovery_end: u64,
    in_recovery: bool,
    rtt: RttEstimator,
    /// When the RTO expires (armed while pipe > 0).
    rto_at: Option<SimTime>,
    dupack_threshold: u32,
    ack_ratio: u16,
    /// Ack Ratio changed and not yet confirmed by the peer (send Change L).
    ack_ratio_dirty: bool,
    last_ack_loss: Option<SimTime>,
    /// Congestion windows of data acknowledged since the last lost Ack.
    windows_clean: u32,
    acked_in_window: u32,
    /// Counters.
    pub acked: u64,
    /// Data packets declared lost.
    pub lost: u64,
    /// Data packets reported received after being declared lost.
    pub late_acked: u64,
    /// RTO expiries.
    pub timeouts: u64,
}

impl Ccid2 {
    /// A sender with window `initial_cwnd` packets and threshold `ssthresh` (RFC 4341 §5), RTO
    /// bounds per RFC 2988, Ack Ratio `ack_ratio` (RFC 4340 §11.3).
    pub fn new(
        initial_cwnd: u32,
        ssthresh: u32,
        dupack_threshold: u32,
        rto: (SimDuration, SimDuration, SimDuration),
        ack_ratio: u16,
    ) -> Ccid2 {
        Ccid2 {
            cwnd: initial_cwnd.clamp(1, MAX_CWND),
            ssthresh,
            pipe: 0,
            ca_acked: 0,
            ring: vec![Rec::default(); RING_LEN as usize],
            low: 0,
            next: 0,
            any_sent: false,
            recovery_end: 0,
            in_recovery: false,
            rtt: RttEstimator::new(rto.0, rto.1, rto.2, SimDuration::from_millis(1)),
            rto_at: None,
            dupack_threshold,
            ack_ratio: ack_ratio.max(1),
            ack_ratio_dirty: false,
            last_ack_loss: None,
            windows_clean: 0,
            acked_in_window: 0,
            acked: 0,
            lost: 0,
            late_acked: 0,
            timeouts: 0,
        }
    }

    /// RFC 4341 §5's initial window for packets of `s` bytes: min(4, max(2, ⌊4380/s⌋)) (RFC
    /// 3390's rule in packets).
    pub fn rfc3390_initial_cwnd(s: u32) -> u32 {
        (4380 / s.max(1)).clamp(2, 4)
    }

    /// Congestion window, packets.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }
    /// Slow-start threshold, packets.
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    /// Data packets outstanding (sent, neither acknowledged nor lost).
    pub fn pipe(&self) -> u32 {
        self.pipe
    }
    /// The RTT estimator (SRTT, RTO, samples).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The Ack Ratio the sender wants (RFC 4341 §6.1.2).
    pub fn ack_ratio(&self) -> u16 {
        self.ack_ratio
    }
    /// Whether a Change L(Ack Ratio) should go out (cleared by [`Ccid2::ack_ratio_confirmed`]).
    pub fn ack_ratio_unconfirmed(&self) -> bool {
        self.ack_ratio_dirty
    }
    /// The peer confirmed Ack Ratio `v`.
    pub fn ack_ratio_confirmed(&mut self, v: u16) {
        if v == self.ack_ratio {
            self.ack_ratio_dirty = false;
        }
    }
    /// When the RTO timer expires, if armed.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_at
    }

    /// RFC 4341 §5: a data packet may go out while pipe < cwnd.
    #[inline]
    pub fn can_send(&self) -> bool {
        self.pipe < self.cwnd
    }

    #[inline]
    fn slot(&mut self, seq: u64) -> &mut Rec {
        &mut self.ring[(seq & (RING_LEN - 1)) as usize]
    }

    /// A data packet `seq` went out at `now`.
    pub fn on_data_sent(&mut self, now: SimTime, seq: u64) {
        if !self.any_sent {
            self.any_sent = true;
            self.low = seq;
            self.recovery_end = seq;
        }
        // Records older than the ring are forgotten (counted lost if unresolved).
        let old = *self.slot(seq);
        if old.used && !old.acked && !old.lost {
            self.pipe = self.pipe.saturating_sub(1);
            self.lost += 1;
        }
        *self.slot(seq) = Rec {
            seq,
            sent: now,
            used: true,
            acked: false,
            lost: false,
        };
        self.next = seq_add(seq, 1);
        if seq_sub(self.next, self.low) > RING_LEN {
            self.low = seq_sub(self.next, RING_LEN);
        }
        self.pipe += 1;
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    fn set_ack_ratio(&mut self, r: u16) {
        let r = r.max(1);
        if r != self.ack_ratio {
            self.ack_ratio = r;
            self.ack_ratio_dirty = true;
        }
    }

    /// RFC 4341 §6.1.2: Ack Ratio is at most ⌈cwnd/2⌉ (and at least 1).
    fn bound_ack_ratio(&mut self) {
        let max = self.cwnd.div_ceil(2).clamp(1, u16::MAX as u32) as u16;
        if self.ack_ratio > max {
            self.set_ack_ratio(max);
        }
    }

    /// The peer's Acks were lost (a gap in its sequence numbers): RFC 4341 §6.1.2 doubles Ack
    /// Ratio, at most once per RTT, within ⌈cwnd/2⌉.
    pub fn on_ack_loss(&mut self, now: SimTime) {
        let rtt = self.rtt.srtt().unwrap_or(self.rtt.rto());
        if self.last_ack_loss.is_some_and(|t| now.saturating_since(t) < rtt) {
            return;
        }
        self.last_ack_loss = Some(now);
        self.windows_clean = 0;
        self.set_ack_ratio(self.ack_ratio.saturating_mul(2));
        self.bound_ack_ratio();
    }

    /// Processes an acknowledgement: Acknowledgement Number `ack` and its Ack Vector.
    pub fn on_ack(&mut self, now: SimTime, ack: u64, av: &AckVector) {
        if !self.any_sent {
            return;
        }
        let mut newly = 0u32;
        let mut highest_acked: Option<u64> = None;
        for (top, n, state) in av.runs(ack) {
            if !matches!(state, Some(AckState::Received | AckState::ReceivedEcnMarked)) {
                continue;
            }
            for k in 0..n {
                let seq = seq_sub(top, k);
                if !self.tracked(seq) {
                    continue;
                }
                let r = self.slot(seq);
                if !r.used || r.seq != seq || r.acked {
                    continue;
                }
                r.acked = true;
                let was_lost = r.lost;
                let sent = r.sent;
                if highest_acked.is_none_or(|h| seq_lt(h, seq)) {
                    highest_acked = Some(seq);
                }
                if was_lost {
                    self.late_acked += 1;
                    continue;
                }
                self.pipe -= 1;
                self.acked += 1;
                newly += 1;
                // An RTT sample from the acknowledged packet the Ack Number names (DCCP
                // never retransmits, so every sample is unambiguous).
                if seq == ack {
                    self.rtt.on_sample(now.saturating_since(sent));
                }
            }
        }
        if newly > 0 {
            self.grow(newly);
            self.rto_at = if self.pipe > 0 {
                Some(now + self.rtt.rto())
            } else {
                None
            };
        }
        if let Some(h) = highest_acked {
            self.detect_losses(h);
        }
        if self.pipe == 0 {
            self.rto_at = None;
        }
    }

    fn tracked(&self, seq: u64) -> bool {
        seq_sub(seq, self.low) < seq_sub(self.next, self.low)
    }

    /// RFC 4341 §5: slow start adds one packet per acknowledged packet while cwnd < ssthresh;
    /// congestion avoidance adds one per window of acknowledged packets.
    fn grow(&mut self, newly: u32) {
        for _ in 0..newly {
            if self.cwnd < self.ssthresh {
                self.cwnd += 1;
            } else {
                self.ca_acked += 1;
                if self.ca_acked >= self.cwnd {
                    self.ca_acked = 0;
                    self.cwnd += 1;
                }
            }
            // RFC 4341 §6.1.2: after cwnd/(R² − R) windows without a lost Ack, R decreases
            // by one.
            self.acked_in_window += 1;
            if self.acked_in_window >= self.cwnd {
                self.acked_in_window = 0;
                self.windows_clean += 1;
                let r = self.ack_ratio as u32;
                if r > 1 && self.windows_clean >= self.cwnd / (r * r - r).max(1) {
                    self.windows_clean = 0;
                    self.set_ack_ratio(self.ack_ratio - 1);
                }
            }
        }
        self.cwnd = self.cwnd.min(MAX_CWND);
    }

    /// RFC 4341 §5: an unacknowledged data packet with at least NUMDUPACK acknowledged data
    /// packets sent after it is lost; the window halves once per window of data.
    fn detect_losses(&mut self, highest: u64) {
        let mut later_acked = 0u32;
        let mut s = highest;
        let span = seq_sub(highest, self.low);
        for _ in 0..=span {
            let r = *self.slot(s);
            if r.used && r.seq == s {
                if r.acked {
                    later_acked += 1;
                } else if !r.lost && later_acked >= self.dupack_threshold {
                    self.mark_lost(s);
                }
            }
            s = seq_sub(s, 1);
        }
        // Advance `low` past resolved records.
        while self.low != self.next {
            let low = self.low;
            let r = *self.slot(low);
            if r.used && r.seq == low && !r.acked && !r.lost {
                break;
            }
            self.low = seq_add(low, 1);
        }
    }

    fn mark_lost(&mut self, seq: u64) {
        self.slot(seq).lost = true;
        self.pipe -= 1;
        self.lost += 1;
        if !self.in_recovery || !seq_lt(seq, self.recovery_end) {
            // RFC 4341 §5: halve cwnd (and set ssthresh to it), once per window: losses of
            // packets sent before this reduction do not reduce it again.
            self.in_recovery = true;
            self.recovery_end = self.next;
            self.cwnd = (self.cwnd / 2).max(1);
            self.ssthresh = self.cwnd.max(2);
            self.ca_acked = 0;
            self.bound_ack_ratio();
        }
    }

    /// The RTO expired (RFC 4341 §5, as TCP: RFC 2988 §5): every outstanding data packet is
    /// lost, ssthresh = max(cwnd/2, 2), cwnd = 1, the RTO backs off.
    pub fn on_rto(&mut self, now: SimTime) {
        if self.rto_at.is_none_or(|t| t > now) {
            return;
        }
        self.timeouts += 1;
        let mut s = self.low;
        while s != self.next {
            let r = *self.slot(s);
            if r.used && r.seq == s && !r.acked && !r.lost {
                self.slot(s).lost = true;
                self.lost += 1;
            }
            s = seq_add(s, 1);
        }
        self.low = self.next;
        self.pipe = 0;
        self.ssthresh = (self.cwnd / 2).max(2);
        self.cwnd = 1;
        self.ca_acked = 0;
        self.in_recovery = true;
        self.recovery_end = self.next;
        self.bound_ack_ratio();
        self.rtt.backoff();
        self.rto_at = None;
    }
}
