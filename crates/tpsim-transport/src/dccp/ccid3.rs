//! CCID 3, TFRC congestion control (RFC 4342), on tpsim's TFRC ([`crate::tfrc`]).
//!
//! HC-Sender ([`Ccid3Sender`]): the allowed rate X of RFC 5348 §4 ([`RateController`]) from
//! the receiver's Loss Event Rate and Receive Rate options (RFC 4342 §8.5, §8.3), packets
//! spaced s/X apart (RFC 5348 §4.6), the no-feedback timer (RFC 5348 §4.4), and the CCVal
//! window counter (RFC 4342 §8.1): +1 every quarter RTT, at most +5 between two data packets,
//! modulo 16. RTT samples come from the acknowledged packet's send time minus the Elapsed
//! Time option (RFC 4342 §8.2 / RFC 5348 §4.3).
//!
//! HC-Receiver ([`Ccid3Receiver`]): the loss history of RFC 5348 §5 ([`LossHistory`]) over
//! data packets only (RFC 4342 §6.1: sequence numbers the NDP Count option, RFC 4340 §7.7,
//! marks as non-data packets are not losses; the other missing ones count as data), with
//! loss events separated by the window counter (RFC 4342 §10.2: losses within 4 CCVal steps,
//! one RTT, of the first loss of an event belong to it), X_recv over the time since the last
//! feedback (RFC 5348 §6.2), feedback (RFC 4342 §6): on the first data packet, on a new loss
//! event, and when a data packet's window counter is 4 or more past the one that last
//! triggered feedback (once per RTT).

use super::seqwin::{seq_add, seq_lt, seq_sub};
use crate::tfrc::loss::{Arrival as LossArrival, LossHistory, NDUPACK_RFC5348};
use crate::tfrc::rate::{FeedbackInfo, RateConfig, RateController};
use tpsim_core::{SimDuration, SimTime};

/// Send times of the last data packets kept for RTT samples (a power of two).
const SENT_TIMES: usize = 1024;
/// Quarter-RTT steps of the window counter (RFC 4342 §8.1): 4 per RTT.
const WC_PER_RTT: u64 = 4;
/// Largest window-counter increase between two consecutive data packets (RFC 4342 §8.1).
const MAX_WC_INC: u64 = 5;
/// The synthetic time of one window-counter step fed to [`LossHistory`] (µs): losses more
/// than [`WC_PER_RTT`] steps apart start a new loss event.
const WC_STEP_US: u64 = 1000;

/// CCID 3 sender state.
#[derive(Clone, Debug)]
pub struct Ccid3Sender {
    s_fixed: Option<u32>,
    s: f64,
    rate: Option<RateController>,
    t_mbi: SimDuration,
    oscillation_prevention: bool,
    /// Nominal send time of the next packet (RFC 5348 §4.6).
    t_nom: SimTime,
    last_send: SimTime,
    /// The last t_ipi computed, with the s and X_inst it came from: (s, X_inst, t_ipi); X
    /// changes only with feedback and timers, so most packets reuse it.
    ipi_memo: (f64, f64, SimDuration),
    /// The window counter, unwrapped (CCVal is it modulo 16).
    wc: u64,
    wc_time: Option<SimTime>,
    /// Per sequence number (ring): the packet's number, send time and window counter.
    sent: Vec<(u64, SimTime, u64)>,
    /// Window counter of the packet the last feedback acknowledged.
    acked_wc: Option<u64>,
    nofeedback_at: Option<SimTime>,
    sent_since_timer: bool,
    data_limited: bool,
    /// Apply RFC 5348 §4.3's data-limited rules (off: RFC 3448's, as RFC 4342 cites).
    pub rfc5348_data_limited: bool,
    /// Keep every data packet's window counter at least 4 past that of the packet the last
    /// feedback acknowledged (ns-2.35's rule, [`crate::dccp::DccpConfig::ccid3_wc_past_acked`]).
    pub wc_past_acked: bool,
    rtt_samples: u64,
    rtt_sum_ns: u64,
}

impl Ccid3Sender {
    /// A sender with segment size `s` bytes (`None`: the mean message size), t_mbi, and
    /// RFC 5348 §4.5's oscillation prevention on or off.
    pub fn new(s: Option<u32>, t_mbi: SimDuration, oscillation_prevention: bool) -> Ccid3Sender {
        Ccid3Sender {
            s_fixed: s,
            s: s.unwrap_or(1000) as f64,
            rate: None,
            t_mbi,
            oscillation_prevention,
            t_nom: SimTime::ZERO,
            last_send: SimTime::ZERO,
            ipi_memo: (f64::NAN, f64::NAN, SimDuration::ZERO),
            wc: 0,
            wc_time: None,
            sent: vec![(u64::MAX, SimTime::ZERO, 0); SENT_TIMES],
            acked_wc: None,
            nofeedback_at: None,
            sent_since_timer: false,
            data_limited: false,
            rfc5348_data_limited: false,
            wc_past_acked: false,
            rtt_samples: 0,
            rtt_sum_ns: 0,
        }
    }

    fn rate_mut(&mut self, now: SimTime) -> &mut RateController {
        let cfg = RateConfig {
            t_mbi_s: self.t_mbi.as_secs_f64(),
            oscillation_prevention: self.oscillation_prevention,
            ..RateConfig::rfc5348()
        };
        let s = self.s;
        self.rate.get_or_insert_with(|| RateController::new(cfg, s, now))
    }

    /// The allowed rate X, bytes/s (RFC 5348 §4); s bytes/s before the first packet.
    pub fn x_bytes_per_s(&self) -> f64 {
        self.rate.as_ref().map_or(self.s, |r| r.x())
    }
    /// The loss event rate p last reported by the receiver.
    pub fn p(&self) -> f64 {
        self.rate.as_ref().map_or(0.0, |r| r.p())
    }
    /// The RTT estimate R, s.
    pub fn srtt_s(&self) -> Option<f64> {
        self.rate.as_ref().and_then(|r| r.r())
    }
    /// The segment size s in use, bytes.
    pub fn s(&self) -> f64 {
        self.s
    }
    /// The current window counter (CCVal).
    pub fn window_counter(&self) -> u8 {
        (self.wc % 16) as u8
    }
    /// RTT samples taken.
    pub fn rtt_samples(&self) -> u64 {
        self.rtt_samples
    }
    /// Sum of the RTT samples, ns.
    pub fn rtt_sum_ns(&self) -> u64 {
        self.rtt_sum_ns
    }
    /// The rate controller (after the first packet).
    pub fn rate(&self) -> Option<&RateController> {
        self.rate.as_ref()
    }

    /// RFC 5348 §4.6: a packet may go at its nominal send time.
    pub fn can_send(&self, now: SimTime) -> bool {
        now >= self.t_nom
    }
    /// When the next packet may go.
    pub fn next_send_time(&self) -> Option<SimTime> {
        Some(self.t_nom)
    }
    /// The no-feedback timer's deadline.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        self.nofeedback_at
    }
    /// The send queue ran empty: the interval is data-limited (RFC 5348 §4.3 step 3).
    pub fn note_data_limited(&mut self) {
        self.data_limited = true;
    }

    /// A data packet `seq` of `len` bytes goes out at `now`; `mean_s` is the mean message
    /// size so far. Returns its CCVal (RFC 4342 §8.1).
    pub fn on_data_sent(&mut self, now: SimTime, seq: u64, _len: u32, mean_s: u32) -> u8 {
        if self.s_fixed.is_none() {
            self.s = mean_s.max(1) as f64;
        }
        let s = self.s;
        let r = self.rate_mut(now).r();
        // RFC 4342 §8.1: the window counter advances one step per quarter RTT elapsed since
        // it last changed, at most five steps between consecutive data packets.
        if let (Some(r), Some(t)) = (r, self.wc_time) {
            let quarters = (now.saturating_since(t).as_secs_f64() / (r / WC_PER_RTT as f64)) as u64;
            if quarters > 0 {
                self.wc += quarters.min(MAX_WC_INC);
                self.wc_time = Some(now);
            }
        } else if r.is_some() {
            self.wc_time = Some(now);
        }
        // ns-2.35's dccp_tfrc.cc `tfrc_send_packet`: at least one RTT's steps past the window
        // counter the last feedback acknowledged.
        if let (true, Some(_), Some(acked)) = (self.wc_past_acked, r, self.acked_wc) {
            if self.wc < acked + WC_PER_RTT {
                self.wc = acked + WC_PER_RTT;
                self.wc_time = Some(now);
            }
        }
        self.sent[(seq as usize) & (SENT_TIMES - 1)] = (seq, now, self.wc);
        // RFC 5348 §4.6: t_ipi = s/X after each packet.
        let x = self.rate_mut(now).x_inst(s);
        if s != self.ipi_memo.0 || x != self.ipi_memo.1 {
            self.ipi_memo = (s, x, SimDuration::from_secs_f64(s / x));
        }
        self.t_nom = self.t_nom.max(now) + self.ipi_memo.2;
        self.last_send = now;
        self.sent_since_timer = true;
        if self.nofeedback_at.is_none() {
            // RFC 5348 §4.2: the no-feedback timer starts with the first packet (2 s).
            let iv = self.rate_mut(now).nofeedback_interval(s);
            self.nofeedback_at = Some(now + iv);
        }
        (self.wc % 16) as u8
    }

    /// A feedback packet: Acknowledgement Number `ack`, Elapsed Time (10 µs units), Receive
    /// Rate (bytes/s) and Loss Event Rate (1/p, 2^32 − 1 for none) (RFC 4342 §6, §8).
    pub fn on_feedback(&mut self, now: SimTime, ack: u64, elapsed: Option<u32>, x_recv: u32, p_inv: u32) {
        let s = self.s;
        let slot = self.sent[(ack as usize) & (SENT_TIMES - 1)];
        let rate = self.rate_mut(now);
        let r_sample = if slot.0 == ack {
            let e = SimDuration::from_micros(elapsed.unwrap_or(0) as u64 * 10);
            let raw = now.saturating_since(slot.1);
            let r = SimDuration(raw.0.saturating_sub(e.0).max(1));
            Some(r)
        } else {
            None
        };
        let Some(r_sample) = r_sample.map(|r| r.as_secs_f64()).or(rate.r()) else {
            return;
        };
        // RFC 4342 §8.5: the option holds 1/p; 2^32 − 1 means no loss.
        let p = if p_inv == u32::MAX || p_inv == 0 {
            0.0
        } else {
            1.0 / p_inv as f64
        };
        let fb = FeedbackInfo {
            r_sample_s: r_sample,
            x_recv: x_recv as f64,
            p,
        };
        // RFC 4342 specifies TFRC as in RFC 3448 (§4.3: X = max(min(X_calc, 2·X_recv),
        // s/t_mbi)), which has no data-limited special case; RFC 5348 §4.3's would shrink a
        // data-limited sender's X_recv set after each loss-rate increase.
        let limited = self.data_limited && self.rfc5348_data_limited;
        let rate = self.rate_mut(now);
        rate.on_feedback(now, s, fb, limited);
        let iv = rate.nofeedback_interval(s);
        // RFC 5348 §4.6: t_ipi follows the new X at once.
        let ipi = SimDuration::from_secs_f64(s / rate.x_inst(s));
        self.t_nom = self.t_nom.min(self.last_send + ipi);
        if slot.0 == ack {
            self.acked_wc = Some(self.acked_wc.map_or(slot.2, |w| w.max(slot.2)));
            self.rtt_samples += 1;
            self.rtt_sum_ns += SimDuration::from_secs_f64(r_sample).0;
        }
        self.data_limited = false;
        // RFC 5348 §4.3 step 4: restart the no-feedback timer.
        self.nofeedback_at = Some(now + iv);
        self.sent_since_timer = false;
    }

    /// Processes the no-feedback timer (RFC 5348 §4.4).
    pub fn on_timeout(&mut self, now: SimTime) {
        if self.nofeedback_at.is_none_or(|t| t > now) {
            return;
        }
        let s = self.s;
        let idle = !self.sent_since_timer;
        let rate = self.rate_mut(now);
        rate.on_nofeedback_timer(now, s, idle);
        let iv = rate.nofeedback_interval(s);
        self.nofeedback_at = Some(now + iv);
        self.sent_since_timer = false;
    }
}

/// Gaps of presumed-data sequence numbers remembered, to number late data packets.
const GAPS: usize = 64;

/// CCID 3 receiver state.
#[derive(Clone, Debug)]
pub struct Ccid3Receiver {
    history: LossHistory,
    /// Sequence number and data index of the highest data packet received.
    last_data: Option<(u64, u64)>,
    /// Runs of missing presumed-data sequence numbers: (first seq, count, first index).
    gaps: [(u64, u64, u64); GAPS],
    gaps_at: usize,
    /// Unwrapped window counter of the highest data packet and its CCVal.
    wc_unwrapped: u64,
    last_ccval: Option<u8>,
    /// Window counter of the data packet that triggered the last feedback.
    fb_wc: Option<u64>,
    bytes_since_fb: u64,
    last_fb: Option<SimTime>,
    last_x_recv: f64,
    last_arrival: SimTime,
    want_feedback: bool,
    data_since_fb: bool,
}

impl Ccid3Receiver {
    /// An empty receiver. (`_s`: the configured segment size, unused by the receiver.)
    pub fn new(_s: Option<u32>) -> Ccid3Receiver {
        Ccid3Receiver {
            history: LossHistory::new(NDUPACK_RFC5348, true),
            last_data: None,
            gaps: [(0, 0, 0); GAPS],
            gaps_at: 0,
            wc_unwrapped: 0,
            last_ccval: None,
            fb_wc: None,
            bytes_since_fb: 0,
            last_fb: None,
            last_x_recv: 0.0,
            last_arrival: SimTime::ZERO,
            want_feedback: false,
            data_since_fb: false,
        }
    }

    /// The loss history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }
    /// Data packets declared lost.
    pub fn lost_packets(&self) -> u64 {
        self.history.lost_packets()
    }
    /// The loss event rate p (RFC 5348 §5.4).
    pub fn p(&self) -> f64 {
        self.history.loss_event_rate()
    }
    /// The data index of data packet `seq` carrying NDP Count `ndp`: data packets numbered
    /// without the non-data ones (RFC 4342 §6.1); `None` for a late packet whose place is
    /// forgotten.
    fn data_index(&mut self, seq: u64, ndp: u64) -> Option<u64> {
        let Some((last_seq, last_idx)) = self.last_data else {
            self.last_data = Some((seq, 1 << 20));
            return Some(1 << 20);
        };
        if seq_lt(last_seq, seq) {
            // Between the previous data packet and the NDP run before this one, every
            // missing sequence number is presumed a lost data packet.
            let span = seq_sub(seq, last_seq);
            let missing = span.saturating_sub(ndp + 1);
            if missing > 0 {
                self.gaps[self.gaps_at] = (seq_add(last_seq, 1), missing, last_idx + 1);
                self.gaps_at = (self.gaps_at + 1) % GAPS;
            }
            let idx = last_idx + missing + 1;
            self.last_data = Some((seq, idx));
            return Some(idx);
        }
        self.gaps
            .iter()
            .find(|(start, n, _)| *n > 0 && seq_sub(seq, *start) < *n)
            .map(|(start, _, first)| first + seq_sub(seq, *start))
    }

    /// A data packet arrived (first copy) with NDP Count `ndp` (RFC 4340 §7.7). Returns
    /// whether feedback should go at once.
    pub fn on_data(&mut self, now: SimTime, seq: u64, ndp: u32, ccval: u8, len: u32) -> bool {
        // Unwrap the 4-bit counter around the highest one seen (RFC 4342 §8.1: it moves by
        // at most 5 between consecutive packets, so a difference above 8 means an older one).
        let wc = match self.last_ccval {
            None => {
                self.last_ccval = Some(ccval);
                self.wc_unwrapped = 64;
                64
            }
            Some(last) => {
                let d = (ccval as i64 - last as i64).rem_euclid(16);
                if d <= 8 {
                    self.wc_unwrapped += d as u64;
                    self.last_ccval = Some(ccval);
                    self.wc_unwrapped
                } else {
                    self.wc_unwrapped.saturating_sub(16 - d as u64)
                }
            }
        };
        let ts = (wc * WC_STEP_US) as u32;
        let arrival = match self.data_index(seq, ndp as u64) {
            Some(idx) => self.history.on_packet(idx as u32, ts, (WC_PER_RTT * WC_STEP_US) as u32),
            None => LossArrival::Stale,
        };
        self.bytes_since_fb += len as u64;
        self.last_arrival = now;
        self.data_since_fb = true;
        let new_event = matches!(
            arrival,
            LossArrival::New {
                new_loss_event: true,
                ..
            }
        );
        let rtt_passed = self.fb_wc.is_none_or(|f| wc >= f + WC_PER_RTT);
        if self.last_fb.is_none() || new_event || rtt_passed {
            self.want_feedback = true;
            self.fb_wc = Some(wc);
        }
        self.want_feedback
    }

    /// The feedback options if feedback is due: (Elapsed Time in 10 µs units, X_recv in
    /// bytes/s, 1/p rounded up or 2^32 − 1 for p = 0) (RFC 4342 §8.3, §8.5, RFC 5348 §6.2).
    pub fn feedback(&mut self, now: SimTime) -> Option<(u32, u32, u32)> {
        if !self.want_feedback || !self.data_since_fb {
            return None;
        }
        let x_recv = match self.last_fb {
            Some(t) if now > t => self.bytes_since_fb as f64 / now.saturating_since(t).as_secs_f64(),
            Some(_) => self.last_x_recv,
            None => 0.0,
        };
        self.last_x_recv = x_recv;
        self.last_fb = Some(now);
        self.bytes_since_fb = 0;
        self.want_feedback = false;
        self.data_since_fb = false;
        let p = self.history.loss_event_rate();
        let p_inv = if p <= 0.0 {
            u32::MAX
        } else {
            (1.0 / p).ceil().min(u32::MAX as f64 - 1.0) as u32
        };
        let elapsed = (now.saturating_since(self.last_arrival).0 / 10_000).min(u32::MAX as u64) as u32;
        Some((elapsed, x_recv.round().min(u32::MAX as f64) as u32, p_inv))
    }
}
