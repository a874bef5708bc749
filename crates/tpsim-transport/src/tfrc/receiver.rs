//! The TFRC receiver (RFC 5348 §6): delivery, the loss history, and feedback once per RTT.
//!
//! The feedback timer runs only while data arrives: when it expires with no data received
//! since the last feedback, no feedback goes (§6.2) and the timer stops; the next data packet
//! restarts it at one R_m after the last feedback (at once if that time has passed). Until a
//! data packet carries the sender's RTT estimate, every data packet is answered at once.
//!
//! Under ns-2.35's rule ([`FeedbackRule::Ns2`], tfrc-sink.cc `recv`, `nextpkt`, `est_thput`)
//! a data packet is answered once more than R_m has passed since the last report (so with
//! periodic data, on the first arrival after R_m; an exact tie goes either way in ns-2 with the
//! rounding of its floating-point clock), at once when it starts a loss event, and at once when
//! the sender marked it urgent; a timer runs every 1.5·R_m after the last report and reports
//! again if the last data packet arrived at or after the last report: a sender slower than one
//! packet per 1.5·R_m gets two reports per packet, as from ns-2. Its receive rate counts
//! packets: the packets received since the last report over the time since it when that is at
//! least R_m (since time 0 for the first report), else the packets that arrived within R_m of
//! the newest one over R_m, else 1 packet/s; X_recv is that times the mean message size.

use super::equation::p_for_x;
use super::loss::{Arrival, LossHistory};
use super::{FeedbackRule, TfrcConfig, TfrcHeader};
use crate::{L4Header, Segment, SocketConfig, TransportEvent, TransportStats};
use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::tfrc::{encode_p, TfrcRepr};
use tpsim_wire::UdpRepr;

/// Arrivals kept for ns-2's receive rate over the last R_m (packets beyond are not counted).
const NS2_ARRIVALS_CAP: usize = 4096;

/// tfrc-sink.cc `nextpkt`: ns-2.35's feedback timer, 1.5·rtt_/NumFeedback_ (`NumFeedback_` 1).
fn ns2_timer(r: SimDuration) -> SimDuration {
    SimDuration(r.0 + r.0 / 2)
}

#[derive(Debug)]
pub(super) struct Receiver {
    pub(super) history: LossHistory,
    pub(super) events: VecDeque<TransportEvent>,
    /// Feedback packets to send: (ports, header, when built); `poll_transmit` makes the
    /// segment, so that no segment is copied through the queue.
    out: VecDeque<(UdpRepr, TfrcRepr, SimTime)>,
    /// The most recent data packet: (its timestamp, when it arrived, its ports).
    last_data: Option<(u32, SimTime, UdpRepr)>,
    bytes_since_feedback: u64,
    data_since_feedback: bool,
    last_feedback: Option<SimTime>,
    feedback_at: Option<SimTime>,
    p_reported: f64,
    pub(super) last_x_recv: Option<f64>,
    s_sum: u64,
    s_count: u64,
    pub(super) duplicates: u64,
    rule: FeedbackRule,
    /// ns-2's rule: data packets received since the last report (copies included), and the
    /// (sequence number, arrival) of the latest received packets in sequence order.
    ns2_rcvd: u64,
    ns2_arrivals: VecDeque<(u32, SimTime)>,
}

impl Receiver {
    pub(super) fn new(cfg: &TfrcConfig) -> Self {
        Receiver {
            history: LossHistory::new(cfg.ndupack, cfg.history_discounting),
            events: VecDeque::with_capacity(8),
            out: VecDeque::with_capacity(2),
            last_data: None,
            bytes_since_feedback: 0,
            data_since_feedback: false,
            last_feedback: None,
            feedback_at: None,
            p_reported: 0.0,
            last_x_recv: None,
            s_sum: 0,
            s_count: 0,
            duplicates: 0,
            rule: cfg.feedback,
            ns2_rcvd: 0,
            ns2_arrivals: VecDeque::new(),
        }
    }

    /// R_m, the sender's most recent RTT estimate, if a data packet carried one.
    fn r_m(&self) -> Option<SimDuration> {
        let us = self.history.rtt_us();
        (us > 0).then(|| SimDuration::from_micros(us as u64))
    }

    /// X_recv: bytes received since the last feedback over the time since then, but over at
    /// least R_m, bytes/s (RFC 5348 §6.2: the rate over the last R_m; with RFC 4342 errata
    /// 610/611, an interval shorter than one RTT would inflate it); 0 for the first feedback
    /// (§6.3).
    fn x_recv(&self, now: SimTime) -> f64 {
        let Some(t) = self.last_feedback else {
            return 0.0;
        };
        let elapsed = (now - t).as_secs_f64().max(self.r_m().map_or(0.0, |r| r.as_secs_f64()));
        if elapsed > 0.0 {
            self.bytes_since_feedback as f64 / elapsed
        } else {
            self.last_x_recv.unwrap_or(0.0)
        }
    }

    /// tfrc-sink.cc `est_thput`: the receive rate in packets/s (see the module docs).
    fn ns2_packets_per_s(&self, now: SimTime) -> f64 {
        let Some(r) = self.r_m().map(|r| r.as_secs_f64()) else {
            return 1.0;
        };
        let since = (now - self.last_feedback.unwrap_or(SimTime::ZERO)).as_secs_f64();
        if since >= r {
            return if self.ns2_rcvd > 0 {
                self.ns2_rcvd as f64 / since
            } else {
                1.0
            };
        }
        let Some(&(_, newest)) = self.ns2_arrivals.back() else {
            return 1.0;
        };
        let recent = self
            .ns2_arrivals
            .iter()
            .rev()
            .take_while(|&&(_, at)| at.as_secs_f64() + r > newest.as_secs_f64())
            .count();
        if recent > 0 {
            recent as f64 / r
        } else {
            1.0
        }
    }

    /// Records a new packet's arrival for [`Receiver::ns2_packets_per_s`], in sequence order.
    fn ns2_arrival(&mut self, seq: u32, now: SimTime) {
        let at = self
            .ns2_arrivals
            .iter()
            .rposition(|&(s, _)| (seq.wrapping_sub(s) as i32) > 0)
            .map_or(0, |i| i + 1);
        self.ns2_arrivals.insert(at, (seq, now));
        if self.ns2_arrivals.len() > NS2_ARRIVALS_CAP {
            self.ns2_arrivals.pop_front();
        }
    }

    /// RFC 5348 §6.1: a data packet.
    pub(super) fn on_data(&mut self, cfg: &TfrcConfig, now: SimTime, seg: &Segment, h: TfrcRepr) {
        let TfrcRepr::Data {
            seq,
            timestamp,
            rtt,
            urgent,
        } = h
        else {
            return;
        };
        if self.rule == FeedbackRule::Ns2 {
            self.ns2_rcvd += 1;
        }
        let (new_loss_event, first_loss_event) = match self.history.on_packet(seq, timestamp, rtt) {
            Arrival::New {
                new_loss_event,
                first_loss_event,
            } => (new_loss_event, first_loss_event),
            Arrival::Duplicate | Arrival::Stale => {
                self.duplicates += 1;
                return;
            }
        };
        if let Some(message) = seg.message {
            self.events.push_back(TransportEvent::Delivered {
                message,
                first_tx: seg.first_tx,
            });
        }
        let udp = match seg.header {
            L4Header::Tfrc(TfrcHeader { udp, .. }) => UdpRepr {
                src_port: udp.dst_port,
                dst_port: udp.src_port,
            },
            _ => return,
        };
        if self.rule == FeedbackRule::Ns2 {
            self.ns2_arrival(seq, now);
        }
        self.bytes_since_feedback += seg.payload_len as u64;
        self.s_sum += seg.payload_len.max(1) as u64;
        self.s_count += 1;
        self.last_data = Some((timestamp, now, udp));
        self.data_since_feedback = true;
        if first_loss_event {
            // RFC 5348 §6.3.1: the first loss interval is the one the equation needs to give
            // the receive rate measured before the loss.
            let x = self.x_recv(now).max(self.last_x_recv.unwrap_or(0.0));
            if let Some(r) = self.r_m() {
                if x > 0.0 {
                    let s = self.s_sum as f64 / self.s_count as f64;
                    let p = p_for_x(s, r.as_secs_f64(), x, cfg.rate.b);
                    self.history.seed_first_interval(1.0 / p);
                }
            }
        }
        let r_m = self.r_m();
        if self.rule == FeedbackRule::Ns2 {
            // tfrc-sink.cc `recv`: an urgent packet, a congestion event, or R passed since the
            // last report (from time 0 before the first).
            let since = now - self.last_feedback.unwrap_or(SimTime::ZERO);
            if urgent || new_loss_event || r_m.is_some_and(|r| since > r) {
                self.send_feedback(now);
            }
        } else if self.last_feedback.is_none() || r_m.is_none() {
            // §6.3: the first data packet is answered at once (and so is every one until the
            // sender's R is known; ns-2's sender marks them urgent until its first feedback).
            self.send_feedback(now);
        } else if new_loss_event && cfg.expedite_feedback && self.history.loss_event_rate() > self.p_reported {
            // §6.1: p increased, so the feedback timer expires now.
            self.send_feedback(now);
        } else if self.feedback_at.is_none() {
            let at = self.last_feedback.map_or(now, |t| t + r_m.unwrap_or(SimDuration::ZERO));
            if at <= now {
                self.send_feedback(now);
            } else {
                self.feedback_at = Some(at);
            }
        }
    }

    /// RFC 5348 §6.2: the feedback timer.
    pub(super) fn on_timeout(&mut self, _cfg: &TfrcConfig, now: SimTime) {
        if self.feedback_at.is_none_or(|t| t > now) {
            return;
        }
        match self.rule {
            FeedbackRule::Rfc5348 if self.data_since_feedback => self.send_feedback(now),
            FeedbackRule::Rfc5348 => self.feedback_at = None,
            // tfrc-sink.cc `sendpkt`: a report if the last data packet arrived at or after the
            // last report (so the packet a report answered is answered again), and the timer
            // runs on (`nextpkt`) whether or not one went.
            FeedbackRule::Ns2 => {
                let arrived = self.last_data.map(|(_, at, _)| at);
                if arrived.is_some_and(|a| self.last_feedback.is_none_or(|f| a >= f)) {
                    self.send_feedback(now);
                } else {
                    self.feedback_at = self.r_m().map(|r| now + ns2_timer(r));
                }
            }
        }
    }

    /// RFC 5348 §6.2: builds a feedback packet and restarts the timer after R_m.
    fn send_feedback(&mut self, now: SimTime) {
        let Some((ts, arrived, udp)) = self.last_data else {
            return;
        };
        let x_recv = match self.rule {
            FeedbackRule::Rfc5348 => self.x_recv(now),
            FeedbackRule::Ns2 => self.ns2_packets_per_s(now) * self.s_sum as f64 / self.s_count.max(1) as f64,
        };
        let p = self.history.loss_event_rate();
        let t_delay = ((now - arrived).as_nanos() / 1000).min(u32::MAX as u64) as u32;
        let tfrc = TfrcRepr::Feedback {
            timestamp_echo: ts,
            t_delay,
            x_recv: x_recv.round().min(u32::MAX as f64) as u32,
            p: encode_p(p),
        };
        self.out.push_back((udp, tfrc, now));
        self.p_reported = p;
        self.last_x_recv = Some(x_recv);
        self.bytes_since_feedback = 0;
        self.ns2_rcvd = 0;
        self.data_since_feedback = false;
        self.last_feedback = Some(now);
        self.feedback_at = self.r_m().map(|r| match self.rule {
            FeedbackRule::Rfc5348 => now + r,
            FeedbackRule::Ns2 => now + ns2_timer(r),
        });
    }

    /// The next feedback packet; counted in `stats`.
    pub(super) fn poll_transmit(&mut self, sock: &SocketConfig, stats: &mut TransportStats) -> Option<Segment> {
        let (udp, tfrc, at) = self.out.pop_front()?;
        stats.tx_segments += 1;
        stats.ack_segments += 1;
        Some(Segment {
            addr: None,
            header: L4Header::Tfrc(TfrcHeader { udp, tfrc }),
            payload_len: 0,
            ip_len: tfrc.ip_len(sock.sizes, 0),
            message: None,
            first_tx: at,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        })
    }

    pub(super) fn poll_timeout(&self) -> Option<SimTime> {
        self.feedback_at
    }
}
