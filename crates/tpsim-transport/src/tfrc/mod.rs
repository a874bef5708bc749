//! TFRC, TCP-Friendly Rate Control (RFC 5348), as a sans-IO, message-preserving and
//! unreliable transport over UDP.
//!
//! # Read these first
//!
//! * RFC 5348: the throughput equation (§3.1), the packet contents (§3.2), the sender (§4:
//!   initialisation §4.2, feedback processing and the X_recv set §4.3, the no-feedback timer
//!   §4.4, oscillation prevention §4.5, scheduling §4.6), the receiver's loss history (§5:
//!   loss detection §5.1, loss events §5.2, loss intervals §5.3, the average loss interval
//!   §5.4, history discounting §5.5) and the receiver (§6: feedback §6.1–§6.2, initialisation
//!   and the first loss interval §6.3, §6.3.1).
//! * RFC 4342 §8.3 and §8.5, whose encodings of X_recv and p the feedback header borrows
//!   ([`tpsim_wire::tfrc`]).
//! * ns-2.35's `tfrc.cc` / `tfrc-sink.cc`, `formula.h` and `ns-default.tcl`, for
//!   [`TfrcConfig::ns2`]: its sender ([`SenderRule::Ns2`], `ns2_sender.rs` lists how it
//!   departs from RFC 5348) and its receiver's feedback rule ([`FeedbackRule::Ns2`]).
//!
//! # Shape
//!
//! [`TfrcSocket`] has the method surface of every tpsim transport (see the crate docs). One
//! end sends ([`Open::Active`](crate::tcp::Open::Active)) and the other receives
//! ([`Open::Passive`](crate::tcp::Open::Passive)), as ns-2's Agent/TFRC and Agent/TFRCSink.
//! Each [`Message`](crate::Message) travels in one data packet, never retransmitted; a
//! message larger than the path allows is refused ([`SendError::TooLarge`]), and one that
//! finds the send queue full too ([`SendError::QueueFull`]). Data packets leave at the
//! allowed rate: [`TfrcSocket::poll_transmit`] returns one only when the inter-packet interval
//! s/X (s/X_inst with oscillation prevention, §4.6) has passed since the previous one, and
//! [`TfrcSocket::poll_timeout`] says when the next may go. The receiver delivers each new
//! data packet's message at once (in arrival order; duplicates are dropped) and sends feedback
//! once per RTT.
//!
//! The pieces are public for reuse (DCCP's CCID 3): [`equation`] (the throughput equation),
//! [`loss::LossHistory`] (the receiver's loss-event rate) and [`rate::RateController`] (the
//! sender's X).
//!
//! The segment size s of the equation (bytes, headers excluded, §3.1) is
//! [`TfrcConfig::segment_size`], or else the mean size of the messages the sender accepted.
//!
//! # What `report()` gives
//!
//! * `stats`: `tx_segments` = packets sent (data at the sender, feedback at the receiver),
//!   `ack_segments` = feedback packets, `rx_segments` = packets received, `retransmissions` 0.
//! * `rtt_samples`/`rtt_sum_ns`: the sender's R_sample values (§4.3 step 1).
//! * `congestion`: `x_bps` (the allowed rate X, bit/s; at the sender), `p` (the loss event
//!   rate: as last reported at the sender, as computed at the receiver), `srtt_s` (R: the
//!   sender's estimate, or at the receiver the last one a data packet carried).
//! * `extra` (sender): `nofeedback_expiries`;
//! * `rx_extra` (receiver): `x_recv_bps` (the receive rate X_recv it last reported, bit/s),
//!   `loss_events`, `duplicate_packets`.
//!
//! # Not implemented
//!
//! Data flows one way per socket pair. The sender's "data-limited interval" of §4.3 is judged
//! from the last time a message waited for the rate (see `sender.rs`). No ECN, no
//! §4.6 early sending (packets leave exactly at their time), no receiver RTT measurement
//! other than the sender's R carried in data packets (§6).

pub mod equation;
pub mod loss;
mod ns2_sender;
pub mod rate;
mod receiver;
mod sender;

#[cfg(test)]
mod ns2_tests;
#[cfg(test)]
mod pair_tests;
#[cfg(test)]
mod tests;

use crate::tcp::Open;
use crate::{
    Header, L4Header, Message, Segment, SendError, SocketConfig, TransportEvent, TransportReport, TransportStats,
};
use ns2_sender::Ns2Sender;
use rate::{InitialWindow, RateConfig};
use receiver::Receiver;
use sender::Sender;
use tpsim_core::SimTime;

/// A TFRC packet's headers (RFC 5348 §3.2.1, §3.2.2): a UDP header followed by a TFRC data
/// or feedback header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcHeader {
    /// The UDP header.
    pub udp: tpsim_wire::UdpRepr,
    /// The TFRC header.
    pub tfrc: tpsim_wire::tfrc::TfrcRepr,
}

impl Header for TfrcHeader {
    fn protocol(&self) -> tpsim_wire::IpProtocol {
        tpsim_wire::IpProtocol::Udp
    }
    fn src_port(&self) -> u16 {
        self.udp.src_port
    }
    fn dst_port(&self) -> u16 {
        self.udp.dst_port
    }
    /// The UDP header and checksum over the TFRC header and zeros; nothing if the length is
    /// shorter than both headers (the `ns2` size convention may be).
    fn emit_zeroed(&self, ip: &tpsim_wire::Ipv4Repr, out: &mut [u8]) {
        self.tfrc.emit_udp(&self.udp, ip, out)
    }
    /// ns-2.35's Agent/TFRC data packets (`tcpFriend`) and Agent/TFRCSink feedback
    /// (`tcpFriendCtl`).
    fn ns2_type(&self, data: bool) -> &'static str {
        if data {
            "tcpFriend"
        } else {
            "tcpFriendCtl"
        }
    }
}

/// Messages a bulk application keeps queued when the send queue has no limit
/// ([`TfrcSocket::can_send`]): enough that the sender is never data-limited.
pub const BULK_BACKLOG: usize = 4;

/// Which set of defaults a [`TfrcConfig`] came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TfrcProfile {
    /// RFC 5348's values.
    #[default]
    Rfc5348,
    /// ns-2.35's Agent/TFRC and Agent/TFRCSink defaults.
    Ns2,
}

/// TFRC parameters. `Default` is [`TfrcConfig::rfc5348`]; each field gives its value as
/// "RFC 5348 / ns-2.35" with the source (ns-2.35: `ns-default.tcl` and `tfrc.cc`,
/// `tfrc-sink.cc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TfrcConfig {
    /// The profile these values came from (informational).
    pub profile: TfrcProfile,
    /// The sender's rate computation: q 0.9 / 0.95 (`df_`), q2 0.9 / 0.95, b 1 / 1 (`bval_`),
    /// t_mbi 64 s / 64 s, oscillation prevention off / on (`ca_ 1`), W_init
    /// min(4s, max(2s, 4380)) / 4, 3 or 2 packets (`rate_init_option_ 2`), X before feedback
    /// s bytes/s (§4.2) / 300 bytes/s (`InitRate_`).
    pub rate: RateConfig,
    /// Later packets that make a missing one lost: 3 (RFC 5348 §5.1) / 1 (TFRCSink `numPkts_`).
    pub ndupack: u32,
    /// History discounting (RFC 5348 §5.5): on / on (`discount_ 1`).
    pub history_discounting: bool,
    /// The segment size s, bytes; `None`: the mean size of the messages accepted. None / None
    /// (ns-2 uses `packetSize_`, which tpsim's ns-2 scripts set to the message size).
    pub segment_size: Option<u32>,
    /// Send queue length, messages; `None`: unbounded. None / None (`maxqueue_` MAXSEQ).
    pub send_queue: Option<usize>,
    /// Bytes of data in every data packet: a shorter message is padded to it, as ns-2.35's
    /// Agent/TFRC sends each write as packets of `packetSize_` (tfrc.cc `sendmsg`); it is
    /// then also the s of the equation unless [`TfrcConfig::segment_size`] says otherwise.
    /// `None`: a packet carries its message only. None / None.
    pub packet_size: Option<u32>,
    /// Send feedback at once when a new loss event raises p (RFC 5348 §6.1): on / on.
    pub expedite_feedback: bool,
    /// When feedback goes: RFC 5348 §6.2's timer, once per R_m while data arrives / ns-2.35's
    /// TFRCSink (`NumFeedback_` 1): on the arrival of a new data packet once R_m has passed
    /// since the last report, and at once on a new loss event; its timer, 1.5·R_m after each
    /// report, sends only if data arrived since (tfrc-sink.cc `recv`, `nextpkt`).
    pub feedback: FeedbackRule,
    /// How the sender sets its rate and schedules packets: RFC 5348 §4 / ns-2.35's
    /// Agent/TFRC (tfrc.cc).
    pub sender: SenderRule,
}

impl Default for TfrcConfig {
    fn default() -> Self {
        Self::rfc5348()
    }
}

impl TfrcConfig {
    /// RFC 5348's defaults.
    pub fn rfc5348() -> Self {
        TfrcConfig {
            profile: TfrcProfile::Rfc5348,
            rate: RateConfig::rfc5348(),
            ndupack: loss::NDUPACK_RFC5348,
            history_discounting: true,
            segment_size: None,
            send_queue: None,
            packet_size: None,
            expedite_feedback: true,
            feedback: FeedbackRule::Rfc5348,
            sender: SenderRule::Rfc5348,
        }
    }

    /// ns-2.35's Agent/TFRC and Agent/TFRCSink defaults (ns-default.tcl): `df_` 0.95 for both
    /// RTT filters, `bval_` 1, `ca_` 1 (oscillation prevention), `rate_init_option_` 2
    /// (RFC 3390 packet counts), `InitRate_` 300 bytes/s, `numPkts_` 1, `discount_` 1,
    /// `maxqueue_` unbounded, with ns-2's sender ([`SenderRule::Ns2`]: its send timer, slow
    /// start, rate increase and TCP-style t_RTO) and TFRCSink's feedback rule. Not modelled:
    /// TFRCSink's loss-interval weights (`smooth_ 1`) and its first loss interval (computed
    /// from ns-2's own equation with the sender's t_RTO); RFC 5348's are used.
    pub fn ns2() -> Self {
        TfrcConfig {
            profile: TfrcProfile::Ns2,
            rate: RateConfig {
                q: 0.95,
                q2: 0.95,
                b: 1.0,
                t_mbi_s: 64.0,
                oscillation_prevention: true,
                initial_window: InitialWindow::Ns2Packets,
                initial_x: Some(300.0),
            },
            ndupack: 1,
            history_discounting: true,
            segment_size: None,
            send_queue: None,
            packet_size: None,
            expedite_feedback: true,
            feedback: FeedbackRule::Ns2,
            sender: SenderRule::Ns2,
        }
    }
}

/// A TFRC sender's rate state ([`TfrcSocket::sender_state`]); each field `None` until known
/// (before the first message, or the first feedback for `r` and `x_recv`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderState {
    /// The allowed transmit rate X, bytes/s (RFC 5348 §4.3; tfrc.cc `rate_`).
    pub x: Option<f64>,
    /// The RTT estimate R, s.
    pub r: Option<f64>,
    /// The loss event rate p of the last feedback.
    pub p: Option<f64>,
    /// X_recv of the last feedback, bytes/s.
    pub x_recv: Option<f64>,
}

/// Which TFRC sender runs ([`TfrcConfig::sender`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderRule {
    /// RFC 5348 §4 (`sender.rs`, with [`rate::RateController`]).
    Rfc5348,
    /// ns-2.35's Agent/TFRC with `SndrType_ 1` (`ns2_sender.rs`): a send timer that runs while
    /// data-limited, its slow start and rate increase, t_RTO in 100-ms ticks. Of
    /// [`TfrcConfig::rate`] it uses `q` (`df_`), `b`, `oscillation_prevention` (`ca_`),
    /// `initial_window` and `initial_x` (`InitRate_`).
    Ns2,
}

/// When a TFRC receiver sends feedback ([`TfrcConfig::feedback`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackRule {
    /// RFC 5348 §6.2: a timer of R_m while data arrives.
    Rfc5348,
    /// ns-2.35's TFRCSink: on data once R_m has passed, or on a new loss event.
    Ns2,
}

pub use tpsim_wire::tfrc::max_message;

#[derive(Debug)]
enum Role {
    Sender(Sender),
    Ns2Sender(Ns2Sender),
    Receiver(Receiver),
}

/// One end of a TFRC flow: the sender ([`Open::Active`]) or the receiver ([`Open::Passive`]).
#[derive(Debug)]
pub struct TfrcSocket {
    cfg: SocketConfig,
    tfrc: TfrcConfig,
    role: Role,
    stats: TransportStats,
}

impl TfrcSocket {
    /// A new endpoint: the sender for [`Open::Active`], the receiver for [`Open::Passive`].
    /// The sender starts (§4.2) with the application's first message.
    pub fn new(cfg: SocketConfig, tfrc: TfrcConfig, open: Open, _now: SimTime) -> Self {
        let role = match (open, tfrc.sender) {
            (Open::Active, SenderRule::Rfc5348) => Role::Sender(Sender::new(&tfrc)),
            (Open::Active, SenderRule::Ns2) => Role::Ns2Sender(Ns2Sender::new()),
            (Open::Passive, _) => Role::Receiver(Receiver::new(&tfrc)),
        };
        TfrcSocket {
            cfg,
            tfrc,
            role,
            stats: TransportStats::default(),
        }
    }

    /// Whether this is the sending end.
    pub fn is_sender(&self) -> bool {
        !matches!(self.role, Role::Receiver(_))
    }

    /// The TFRC parameters.
    pub fn config(&self) -> &TfrcConfig {
        &self.tfrc
    }

    /// The RFC 5348 sender's rate state (`None` at the receiver, at ns-2's sender and before
    /// the first message).
    pub fn rate(&self) -> Option<&rate::RateController> {
        match &self.role {
            Role::Sender(s) => s.rate.as_ref(),
            Role::Ns2Sender(_) | Role::Receiver(_) => None,
        }
    }

    /// The sender's rate state as both senders have it; `None` at the receiver.
    pub fn sender_state(&self) -> Option<SenderState> {
        match &self.role {
            Role::Sender(s) => {
                let rc = s.rate.as_ref();
                Some(SenderState {
                    x: rc.map(|r| r.x()),
                    r: rc.and_then(|r| r.r()),
                    p: rc.map(|r| r.p()),
                    x_recv: rc.and_then(|r| r.last_x_recv()),
                })
            }
            Role::Ns2Sender(s) => Some(SenderState {
                x: (s.x() > 0.0).then_some(s.x()),
                r: s.r(),
                p: (s.x() > 0.0).then_some(s.p()),
                x_recv: s.last_x_recv(),
            }),
            Role::Receiver(_) => None,
        }
    }

    /// The receiver's loss history (`None` at the sender).
    pub fn loss_history(&self) -> Option<&loss::LossHistory> {
        match &self.role {
            Role::Sender(_) | Role::Ns2Sender(_) => None,
            Role::Receiver(r) => Some(&r.history),
        }
    }

    /// Queues `msg` to go in one data packet.
    ///
    /// # Errors
    /// [`SendError::TooLarge`] if it does not fit one packet ([`max_message`]),
    /// [`SendError::QueueFull`] if the send queue is full, [`SendError::BufferFull`] at the
    /// receiver, which sends no data.
    pub fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError> {
        let max = max_message(self.cfg.sizes, self.cfg.mtu);
        if msg.len > max {
            return Err(SendError::TooLarge { max });
        }
        match &mut self.role {
            Role::Sender(s) => s.send(&self.tfrc, now, msg),
            Role::Ns2Sender(s) => s.send(&self.tfrc, now, msg),
            Role::Receiver(_) => Err(SendError::BufferFull),
        }
    }

    /// Whether a bulk application should hand over a message of `len` bytes now: it fits a
    /// packet and the queue holds fewer than its limit (or [`BULK_BACKLOG`] messages when it
    /// has none). Always false at the receiver.
    pub fn can_send(&self, len: u32) -> bool {
        let queued = match &self.role {
            Role::Sender(s) => s.queue.len(),
            Role::Ns2Sender(s) => s.queue.len(),
            Role::Receiver(_) => return false,
        };
        len <= max_message(self.cfg.sizes, self.cfg.mtu) && queued < self.tfrc.send_queue.unwrap_or(BULK_BACKLOG)
    }

    /// Processes a packet: feedback at the sender, data at the receiver; anything else is
    /// counted and ignored.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        let L4Header::Tfrc(TfrcHeader { tfrc, .. }) = seg.header else {
            return;
        };
        let feedback = matches!(tfrc, tpsim_wire::tfrc::TfrcRepr::Feedback { .. });
        match &mut self.role {
            Role::Sender(s) => {
                self.stats.acks_received += u64::from(feedback);
                s.on_feedback(&self.tfrc, now, tfrc)
            }
            Role::Ns2Sender(s) => {
                self.stats.acks_received += u64::from(feedback);
                s.on_feedback(&self.tfrc, now, tfrc)
            }
            Role::Receiver(r) => r.on_data(&self.tfrc, now, seg, tfrc),
        }
    }

    /// Processes timer expiries (the sender's no-feedback timer, the receiver's feedback
    /// timer); safe to call spuriously.
    pub fn on_timeout(&mut self, now: SimTime) {
        match &mut self.role {
            Role::Sender(s) => s.on_timeout(&self.tfrc, now),
            Role::Ns2Sender(s) => s.on_timeout(&self.tfrc, now),
            Role::Receiver(r) => r.on_timeout(&self.tfrc, now),
        }
    }

    /// The next packet to send: a data packet once its sending time has come, or a feedback
    /// packet.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        // The roles count what they send (the sender data, the receiver feedback), so that
        // the segment is built in place, not copied out of an intermediate `Option`.
        match &mut self.role {
            Role::Sender(s) => s.poll_transmit(&self.cfg, &self.tfrc, now, &mut self.stats),
            Role::Ns2Sender(s) => s.poll_transmit(&self.cfg, &self.tfrc, now, &mut self.stats),
            Role::Receiver(r) => r.poll_transmit(&self.cfg, &mut self.stats),
        }
    }

    /// The next delivered message.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        match &mut self.role {
            Role::Sender(_) | Role::Ns2Sender(_) => None,
            Role::Receiver(r) => r.events.pop_front(),
        }
    }

    /// The next deadline: the next data packet's sending time (when one is queued) or the
    /// no-feedback timer at the sender; the feedback timer at the receiver.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match &self.role {
            Role::Sender(s) => s.poll_timeout(),
            Role::Ns2Sender(s) => s.poll_timeout(),
            Role::Receiver(r) => r.poll_timeout(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> TransportStats {
        self.stats
    }

    /// Messages accepted and not yet sent.
    pub fn buffered_messages(&self) -> u64 {
        match &self.role {
            Role::Sender(s) => s.queue.len() as u64,
            Role::Ns2Sender(s) => s.queue.len() as u64,
            Role::Receiver(_) => 0,
        }
    }

    /// The per-ACK sample of the sender: `x_bps` (the allowed rate X), `x_recv_bps` (the
    /// last feedback's X_recv) and `srtt_s` (R), each `None` until known; default at the
    /// receiver.
    pub fn ack_sample(&self) -> crate::AckSample {
        let (Some(SenderState { x, r, x_recv, .. }), Some((rtt_samples, rtt_sum_ns))) =
            (self.sender_state(), self.rtt_totals())
        else {
            return crate::AckSample::default();
        };
        crate::AckSample {
            acks: self.stats.acks_received,
            rtt_samples,
            rtt_sum_ns,
            srtt_s: r,
            x_bps: x.map(|x| 8.0 * x),
            x_recv_bps: x_recv.map(|x| 8.0 * x),
            ..crate::AckSample::default()
        }
    }

    /// The sender's (R_sample count, sum in ns); `None` at the receiver.
    fn rtt_totals(&self) -> Option<(u64, u64)> {
        match &self.role {
            Role::Sender(s) => Some((s.rtt_samples, s.rtt_sum_ns)),
            Role::Ns2Sender(s) => Some((s.rtt_samples, s.rtt_sum_ns)),
            Role::Receiver(_) => None,
        }
    }

    /// What the endpoint reports (see the module docs).
    pub fn report(&self) -> TransportReport {
        match &self.role {
            Role::Sender(_) | Role::Ns2Sender(_) => {
                let SenderState { x, r, p, .. } = self.sender_state().unwrap_or_default();
                let (rtt_samples, rtt_sum_ns) = self.rtt_totals().unwrap_or_default();
                let expiries = match &self.role {
                    Role::Sender(s) => s.rate.as_ref().map_or(0, |r| r.nofeedback_expiries()),
                    Role::Ns2Sender(s) => s.nofeedback_expiries(),
                    Role::Receiver(_) => 0,
                };
                TransportReport {
                    stats: self.stats,
                    rtt_samples,
                    rtt_sum_ns,
                    congestion: vec![("x_bps", x.map(|x| 8.0 * x)), ("p", p), ("srtt_s", r)],
                    extra: vec![("nofeedback_expiries", Some(expiries as f64))],
                    ..TransportReport::default()
                }
            }
            Role::Receiver(r) => {
                let rtt = r.history.rtt_us();
                TransportReport {
                    stats: self.stats,
                    congestion: vec![
                        ("x_bps", None),
                        ("p", Some(r.history.loss_event_rate())),
                        ("srtt_s", (rtt > 0).then_some(rtt as f64 * 1e-6)),
                    ],
                    rx_extra: vec![
                        ("x_recv_bps", r.last_x_recv.map(|x| 8.0 * x)),
                        ("loss_events", Some(r.history.loss_events() as f64)),
                        ("duplicate_packets", Some(r.duplicates as f64)),
                    ],
                    ..TransportReport::default()
                }
            }
        }
    }
}
