//! The TFRC sender (RFC 5348 §4): send queue, packet scheduling at the allowed rate, feedback
//! processing and the no-feedback timer.
//!
//! The "data-limited interval" of RFC 5348 §4.3 step 3: the sender notes the last time a
//! message had to wait for the rate (one was queued when the rate let a packet go, or arrived
//! before its sending time). A feedback covers the data sent from the packet the previous
//! feedback echoed to the one it echoes; the interval was data-limited if no message waited
//! since the start of it.

use super::rate::{FeedbackInfo, RateController};
use super::{TfrcConfig, TfrcHeader};
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportStats};
use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::tfrc::{decode_p, TfrcRepr};
use tpsim_wire::UdpRepr;

/// The data packet carrying `msg` with header `tfrc`, sent at `now`: padded to
/// [`TfrcConfig::packet_size`].
pub(super) fn data_segment(
    sock: &SocketConfig,
    cfg: &TfrcConfig,
    tfrc: TfrcRepr,
    msg: Message,
    now: SimTime,
) -> Segment {
    Segment {
        addr: None,
        header: L4Header::Tfrc(TfrcHeader {
            udp: UdpRepr {
                src_port: sock.local_port,
                dst_port: sock.remote_port,
            },
            tfrc,
        }),
        payload_len: msg.len,
        ip_len: tfrc.ip_len(sock.sizes, msg.len.max(cfg.packet_size.unwrap_or(0))),
        message: Some(msg),
        first_tx: now,
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    }
}

/// What a feedback packet tells a sender at `now`: the echoed packet's age and R_sample =
/// age − t_delay (RFC 5348 §4.3 step 1), µs (at least 1), X_recv (bytes/s) and p. `None` for
/// a data packet or a timestamp from the future (not ours).
pub(super) fn read_feedback(now: SimTime, h: TfrcRepr) -> Option<(u32, u32, f64, f64)> {
    let TfrcRepr::Feedback {
        timestamp_echo,
        t_delay,
        x_recv,
        p,
    } = h
    else {
        return None;
    };
    let age_us = wire_us(now).wrapping_sub(timestamp_echo);
    if (age_us as i32) < 0 {
        return None;
    }
    Some((
        age_us,
        age_us.saturating_sub(t_delay).max(1),
        x_recv as f64,
        decode_p(p),
    ))
}

/// The sender's clock in µs modulo 2^32, as data packets carry it.
#[inline]
pub(super) fn wire_us(t: SimTime) -> u32 {
    (t.as_nanos() / 1000) as u32
}

#[derive(Debug)]
pub(super) struct Sender {
    /// Created when the first message arrives (RFC 5348 §4.2).
    pub(super) rate: Option<RateController>,
    pub(super) queue: VecDeque<Message>,
    seq: u32,
    /// Earliest time of the next data packet (RFC 5348 §4.6).
    next_send: SimTime,
    /// When the last data packet went.
    last_send: Option<SimTime>,
    nofeedback_at: Option<SimTime>,
    /// Whether a data packet went since the no-feedback timer was set (§4.4).
    sent_since_timer: bool,
    /// The last time a message waited for the rate.
    last_backlogged: Option<SimTime>,
    /// The send time of the data packet the last feedback echoed.
    last_echo: Option<SimTime>,
    s_sum: u64,
    s_count: u64,
    /// s_sum / s_count (1 before the first message), kept so that it is not divided out per
    /// packet.
    s_mean: f64,
    /// R in µs as data packets carry it (0 before the first RTT estimate); R changes only
    /// with feedback.
    rtt_us: u32,
    /// The last t_ipi computed, with the s and X_inst it came from: (s, X_inst, t_ipi).
    ipi_memo: (f64, f64, SimDuration),
    pub(super) rtt_samples: u64,
    pub(super) rtt_sum_ns: u64,
}

impl Sender {
    pub(super) fn new(_cfg: &TfrcConfig) -> Self {
        Sender {
            rate: None,
            queue: VecDeque::with_capacity(8),
            seq: 0,
            next_send: SimTime::ZERO,
            last_send: None,
            nofeedback_at: None,
            sent_since_timer: false,
            last_backlogged: None,
            last_echo: None,
            s_sum: 0,
            s_count: 0,
            s_mean: 1.0,
            rtt_us: 0,
            ipi_memo: (f64::NAN, f64::NAN, SimDuration::ZERO),
            rtt_samples: 0,
            rtt_sum_ns: 0,
        }
    }

    /// The segment size s, bytes (RFC 5348 §3.1, §4.1): configured, else the padded packet's
    /// data, else the mean message size.
    pub(super) fn s(&self, cfg: &TfrcConfig) -> f64 {
        match cfg.segment_size.or(cfg.packet_size) {
            Some(s) => s as f64,
            None => self.s_mean,
        }
    }

    pub(super) fn send(&mut self, cfg: &TfrcConfig, now: SimTime, msg: Message) -> Result<(), SendError> {
        if cfg.send_queue.is_some_and(|limit| self.queue.len() >= limit) {
            return Err(SendError::QueueFull);
        }
        self.s_sum += msg.len.max(1) as u64;
        self.s_count += 1;
        self.s_mean = self.s_sum as f64 / self.s_count as f64;
        self.queue.push_back(msg);
        if self.rate.is_none() {
            // RFC 5348 §4.2: X = one packet per second (or the configured initial rate), the
            // no-feedback timer at 2 s (2s/X).
            let s = self.s(cfg);
            let rc = RateController::new(cfg.rate, s, now);
            self.nofeedback_at = Some(now + rc.nofeedback_interval(s));
            self.rate = Some(rc);
            self.next_send = now;
        }
        if now < self.next_send {
            self.last_backlogged = Some(now);
        }
        Ok(())
    }

    /// t_ipi = s/X_inst (RFC 5348 §4.6), recomputed only when s or X_inst changed.
    fn ipi(&mut self, cfg: &TfrcConfig) -> SimDuration {
        let s = self.s(cfg);
        let x = self.rate.as_ref().map_or(s, |r| r.x_inst(s));
        if s != self.ipi_memo.0 || x != self.ipi_memo.1 {
            self.ipi_memo = (s, x, SimDuration::from_secs_f64(s / x));
        }
        self.ipi_memo.2
    }

    /// After X changed: the next packet goes t_ipi after the previous one at the new rate.
    fn reschedule(&mut self, cfg: &TfrcConfig) {
        if let Some(last) = self.last_send {
            self.next_send = last + self.ipi(cfg);
        }
    }

    /// The next data packet, if its sending time has come; counted in `stats`.
    pub(super) fn poll_transmit(
        &mut self,
        sock: &SocketConfig,
        cfg: &TfrcConfig,
        now: SimTime,
        stats: &mut TransportStats,
    ) -> Option<Segment> {
        if now < self.next_send {
            return None;
        }
        let msg = self.queue.pop_front()?;
        stats.tx_segments += 1;
        let tfrc = TfrcRepr::Data {
            seq: self.seq,
            timestamp: wire_us(now),
            rtt: self.rtt_us,
            urgent: false,
        };
        self.seq = self.seq.wrapping_add(1);
        self.last_send = Some(now);
        self.next_send = now + self.ipi(cfg);
        self.sent_since_timer = true;
        if !self.queue.is_empty() {
            self.last_backlogged = Some(now);
        }
        Some(data_segment(sock, cfg, tfrc, msg, now))
    }

    /// RFC 5348 §4.3: a feedback packet.
    pub(super) fn on_feedback(&mut self, cfg: &TfrcConfig, now: SimTime, h: TfrcRepr) {
        let Some((age_us, r_sample_us, x_recv, p)) = read_feedback(now, h) else {
            return;
        };
        let s = self.s(cfg);
        let Some(rc) = self.rate.as_mut() else {
            return;
        };
        let echo_time = SimTime(now.as_nanos().saturating_sub(age_us as u64 * 1000));
        // Feedback older than (or a copy of) the last one processed says nothing new.
        if self.last_echo.is_some_and(|e| echo_time <= e) {
            return;
        }
        let data_limited = match self.last_echo {
            Some(start) => self.last_backlogged.is_none_or(|b| b < start),
            None => false,
        };
        self.last_echo = Some(echo_time);
        // Step 1: R_sample = (t_now − t_recvdata) − t_delay.
        self.rtt_samples += 1;
        self.rtt_sum_ns += r_sample_us as u64 * 1000;
        let fb = FeedbackInfo {
            r_sample_s: r_sample_us as f64 * 1e-6,
            x_recv,
            p,
        };
        rc.on_feedback(now, s, fb, data_limited);
        self.rtt_us = rc
            .r()
            .map_or(0, |r| (r * 1e6).round().clamp(1.0, u32::MAX as f64) as u32);
        // Steps 2 and 4: restart the no-feedback timer after max(4R, 2s/X).
        self.nofeedback_at = Some(now + rc.nofeedback_interval(s));
        self.sent_since_timer = false;
        self.reschedule(cfg);
    }

    /// RFC 5348 §4.4: the no-feedback timer.
    pub(super) fn on_timeout(&mut self, cfg: &TfrcConfig, now: SimTime) {
        if self.nofeedback_at.is_none_or(|t| t > now) {
            return;
        }
        let s = self.s(cfg);
        let Some(rc) = self.rate.as_mut() else {
            return;
        };
        rc.on_nofeedback_timer(now, s, !self.sent_since_timer);
        self.nofeedback_at = Some(now + rc.nofeedback_interval(s));
        self.sent_since_timer = false;
        self.reschedule(cfg);
    }

    pub(super) fn poll_timeout(&self) -> Option<SimTime> {
        let send = (!self.queue.is_empty()).then_some(self.next_send);
        match (send, self.nofeedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
