//! Stop-and-wait ARQ: the simplest reliable transport, and the worked example of
//! docs/adding-a-transport.md.
//!
//! The protocol is the textbook one (Bertsekas & Gallager, *Data Networks*, 2nd ed., §2.4.1,
//! with sequence numbers instead of one alternating bit, so that a path that reorders or
//! duplicates packets cannot confuse it):
//!
//! * the sender numbers its messages 0, 1, 2, … and has at most one outstanding: each message
//!   travels in one DATA packet carrying its number; the next leaves only when the ACK carrying
//!   the outstanding number arrives;
//! * a DATA packet is retransmitted when the retransmission timer expires; the timeout is RFC
//!   6298's (SRTT + 4·RTTVAR, bounded by `rto_min` and `rto_max`, doubled after each expiry,
//!   §5.5), measured on DATA packets sent once only (Karn's rule, §3);
//! * the receiver delivers a DATA packet whose number is the next it expects and acknowledges
//!   every DATA packet it receives; a duplicate is acknowledged again and not delivered.
//!
//! Every endpoint is both a sender and a receiver, so a two-way application runs over one
//! pair. Messages are not fragmented: a message must fit one packet ([`max_message`]).
//!
//! # On the wire
//!
//! Over UDP: the UDP header, then an 8-byte header — a type byte (0 DATA, 1 ACK), three zero
//! bytes and the 32-bit sequence number, big-endian — then the message. Under the
//! `standard` size convention a DATA packet is 20 + 8 + 8 + message bytes, an ACK 36 bytes;
//! under `ns2` the IP and UDP headers are not counted (8 + message bytes, an ACK 8 bytes).
//!
//! # Counters
//!
//! Segments are DATA and ACK packets; a retransmission is a DATA packet sent again after a
//! timeout; acknowledgements are ACK packets. The congestion series is `srtt_s`.

use crate::tcp::rtt::RttEstimator;
use crate::{
    AckSample, Header, L4Header, Message, Segment, SendError, SocketConfig, Transport, TransportEvent, TransportReport,
    TransportStats,
};
use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::{checksum, IpProtocol, Ipv4Repr, SizeConvention, UdpRepr, UDP_HEADER_LEN};

/// Bytes of the stop-and-wait header after the UDP header.
pub const HEADER_LEN: u32 = 8;

/// The largest message one packet carries over an IP MTU of `mtu` bytes.
pub fn max_message(sizes: SizeConvention, mtu: u32) -> u32 {
    tpsim_wire::udp::max_message(sizes, mtu).saturating_sub(HEADER_LEN)
}

/// A packet's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A message, numbered.
    Data,
    /// The acknowledgement of the DATA packet of the same number.
    Ack,
}

/// A stop-and-wait packet's headers: UDP's and its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopAndWaitHeader {
    /// The UDP header.
    pub udp: UdpRepr,
    /// DATA or ACK.
    pub kind: Kind,
    /// The message's sequence number (0 for the first message).
    pub seq: u32,
}

impl Header for StopAndWaitHeader {
    fn protocol(&self) -> IpProtocol {
        IpProtocol::Udp
    }
    fn src_port(&self) -> u16 {
        self.udp.src_port
    }
    fn dst_port(&self) -> u16 {
        self.udp.dst_port
    }
    /// The UDP header, this header and zeros, with the UDP checksum over the IPv4
    /// pseudo-header (RFC 768; a computed zero is sent as 0xffff); nothing if `out` is shorter
    /// than both headers (the `ns2` size convention may make it so).
    fn emit_zeroed(&self, ip: &Ipv4Repr, out: &mut [u8]) {
        let (len, udp) = (out.len(), UDP_HEADER_LEN as usize);
        if len < udp + HEADER_LEN as usize || len > u16::MAX as usize {
            return;
        }
        out.fill(0);
        out[0..2].copy_from_slice(&self.udp.src_port.to_be_bytes());
        out[2..4].copy_from_slice(&self.udp.dst_port.to_be_bytes());
        out[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        out[udp] = match self.kind {
            Kind::Data => 0,
            Kind::Ack => 1,
        };
        out[udp + 4..udp + 8].copy_from_slice(&self.seq.to_be_bytes());
        let sum = checksum::accumulate(ip.pseudo_header_sum(len as u16), out);
        let c = match checksum::finish(sum) {
            0 => 0xffff,
            c => c,
        };
        out[6..8].copy_from_slice(&c.to_be_bytes());
    }
    /// ns-2 has no stop-and-wait agent: `stopwait` for DATA, `stopwait_ack` for ACKs.
    fn ns2_type(&self, data: bool) -> &'static str {
        if data {
            "stopwait"
        } else {
            "stopwait_ack"
        }
    }
}

/// A stop-and-wait endpoint's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopAndWaitConfig {
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub rto_initial: SimDuration,
    /// Lower bound of the RTO (RFC 6298 §2.4: 1 s).
    pub rto_min: SimDuration,
    /// Upper bound of the RTO (RFC 6298 §2.5 allows 60 s).
    pub rto_max: SimDuration,
    /// Messages the sender holds waiting behind the outstanding one; a message that finds
    /// the queue full is refused ([`SendError::BufferFull`]).
    pub send_queue: usize,
}

impl Default for StopAndWaitConfig {
    fn default() -> Self {
        StopAndWaitConfig {
            rto_initial: SimDuration::from_secs(1),
            rto_min: SimDuration::from_secs(1),
            rto_max: SimDuration::from_secs(60),
            send_queue: 100,
        }
    }
}

/// The message waiting for its ACK.
#[derive(Clone, Copy, Debug)]
struct Outstanding {
    msg: Message,
    seq: u32,
    /// When its DATA packet was first sent (`None`: not yet).
    first_tx: Option<SimTime>,
    /// When it was last sent.
    sent_at: SimTime,
    /// Whether it was sent more than once (no RTT sample then: Karn's rule).
    retransmitted: bool,
    /// Whether it is to be sent at the next poll.
    due: bool,
}

/// A stop-and-wait endpoint: the sender of its own messages and the receiver of its peer's.
#[derive(Debug)]
pub struct StopAndWaitSocket {
    cfg: SocketConfig,
    sw: StopAndWaitConfig,
    queue: VecDeque<Message>,
    outstanding: Option<Outstanding>,
    next_seq: u32,
    rtt: RttEstimator,
    deadline: Option<SimTime>,
    /// The next sequence number the receiver expects.
    expected: u32,
    /// ACKs to send, by sequence number.
    acks: VecDeque<u32>,
    delivered: VecDeque<(Message, SimTime)>,
    stats: TransportStats,
    timeouts: u64,
}

impl StopAndWaitSocket {
    /// A new endpoint with the common settings `cfg` and the protocol's `sw`.
    pub fn new(cfg: SocketConfig, sw: StopAndWaitConfig) -> Self {
        StopAndWaitSocket {
            cfg,
            sw,
            queue: VecDeque::new(),
            outstanding: None,
            next_seq: 0,
            rtt: RttEstimator::new(sw.rto_initial, sw.rto_min, sw.rto_max, SimDuration::ZERO),
            deadline: None,
            expected: 0,
            acks: VecDeque::new(),
            delivered: VecDeque::new(),
            stats: TransportStats::default(),
            timeouts: 0,
        }
    }

    fn segment(&self, kind: Kind, seq: u32, msg: Option<Message>, first_tx: SimTime) -> Segment {
        let len = msg.map_or(0, |m| m.len);
        Segment {
            header: L4Header::StopAndWait(StopAndWaitHeader {
                udp: UdpRepr {
                    src_port: self.cfg.local_port,
                    dst_port: self.cfg.remote_port,
                },
                kind,
                seq,
            }),
            payload_len: len,
            ip_len: self.cfg.sizes.udp_ip_len(HEADER_LEN + len),
            message: msg,
            first_tx,
            addr: None,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        }
    }
}

impl Transport for StopAndWaitSocket {
    /// Queues `msg` behind the outstanding message: [`SendError::TooLarge`] if it does not
    /// fit one packet, [`SendError::BufferFull`] if the send queue is full.
    fn send(&mut self, _now: SimTime, msg: Message) -> Result<(), SendError> {
        let max = max_message(self.cfg.sizes, self.cfg.mtu);
        if msg.len > max {
            return Err(SendError::TooLarge { max });
        }
        if self.queue.len() >= self.sw.send_queue {
            return Err(SendError::BufferFull);
        }
        self.queue.push_back(msg);
        Ok(())
    }

    /// Whether a message of `len` bytes would be accepted now.
    fn can_send(&self, len: u32) -> bool {
        len <= max_message(self.cfg.sizes, self.cfg.mtu) && self.queue.len() < self.sw.send_queue
    }

    /// A DATA packet is delivered if it is the next expected and acknowledged in any case; an
    /// ACK of the outstanding message releases the next one.
    fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        let L4Header::StopAndWait(h) = seg.header else {
            return;
        };
        match h.kind {
            Kind::Data => {
                if h.seq == self.expected {
                    if let Some(m) = seg.message {
                        self.delivered.push_back((m, seg.first_tx));
                    }
                    self.expected = self.expected.wrapping_add(1);
                }
                // A number above the expected one cannot arrive: the sender sends it only
                // after the ACK of the one before. Below it: a duplicate, acknowledged again.
                if h.seq.wrapping_sub(self.expected) >= u32::MAX / 2 {
                    self.acks.push_back(h.seq);
                }
            }
            Kind::Ack => {
                self.stats.acks_received += 1;
                let Some(o) = self.outstanding.filter(|o| o.seq == h.seq && o.first_tx.is_some()) else {
                    return; // an old or duplicated ACK
                };
                if !o.retransmitted {
                    self.rtt.on_sample(now - o.sent_at);
                }
                self.outstanding = None;
                self.deadline = None;
            }
        }
    }

    /// The retransmission timer: the outstanding message goes again, the RTO doubles (RFC
    /// 6298 (5.4), (5.5)).
    fn on_timeout(&mut self, now: SimTime) {
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        self.deadline = None;
        if let Some(o) = &mut self.outstanding {
            o.due = true;
            o.retransmitted = true;
            self.rtt.backoff();
            self.timeouts += 1;
        }
    }

    /// ACKs first, then the outstanding message if it is due (the next queued one becomes
    /// outstanding when none is).
    fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if let Some(seq) = self.acks.pop_front() {
            self.stats.tx_segments += 1;
            self.stats.ack_segments += 1;
            return Some(self.segment(Kind::Ack, seq, None, now));
        }
        if self.outstanding.is_none() {
            let msg = self.queue.pop_front()?;
            self.outstanding = Some(Outstanding {
                msg,
                seq: self.next_seq,
                first_tx: None,
                sent_at: now,
                retransmitted: false,
                due: true,
            });
            self.next_seq = self.next_seq.wrapping_add(1);
        }
        let o = self.outstanding.as_mut().filter(|o| o.due)?;
        o.due = false;
        o.sent_at = now;
        if o.first_tx.is_some() {
            self.stats.retransmissions += 1;
        }
        let first_tx = *o.first_tx.get_or_insert(now);
        let (seq, msg) = (o.seq, o.msg);
        self.stats.tx_segments += 1;
        self.deadline = Some(now + self.rtt.rto());
        Some(self.segment(Kind::Data, seq, Some(msg), first_tx))
    }

    /// The next delivered message.
    fn poll_event(&mut self) -> Option<TransportEvent> {
        self.delivered
            .pop_front()
            .map(|(message, first_tx)| TransportEvent::Delivered { message, first_tx })
    }

    /// The retransmission deadline, while a message is outstanding.
    fn poll_timeout(&self) -> Option<SimTime> {
        self.deadline
    }

    /// Counters.
    fn stats(&self) -> TransportStats {
        self.stats
    }

    /// Messages queued behind the outstanding one.
    fn buffered_messages(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Counters, RTT samples, timeouts, the RTO and SRTT (the `srtt_s` series).
    fn report(&self) -> TransportReport {
        TransportReport {
            stats: self.stats,
            rtt_samples: self.rtt.samples(),
            rtt_sum_ns: self.rtt.sum_ns(),
            timeouts: self.timeouts,
            rto: Some(self.rtt.base_rto()),
            congestion: vec![("srtt_s", self.rtt.srtt().map(|d| d.as_secs_f64()))],
            ..TransportReport::default()
        }
    }

    /// The per-ACK sample: ACKs received, RTT samples and SRTT.
    fn ack_sample(&self) -> AckSample {
        AckSample {
            acks: self.stats.acks_received,
            rtt_samples: self.rtt.samples(),
            rtt_sum_ns: self.rtt.sum_ns(),
            srtt_s: self.rtt.srtt().map(|d| d.as_secs_f64()),
            ..AckSample::default()
        }
    }
}

#[cfg(test)]
mod tests;
