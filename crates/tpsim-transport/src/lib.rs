//! tpsim-transport: transport protocols as sans-IO state machines.
//!
//! Every transport offers the same message-oriented surface, the [`Transport`] trait, so
//! that one application runs unchanged over every transport:
//!
//! * application input: [`Transport::send`] hands over a [`Message`] (an id, a length in
//!   bytes and the time the application created it);
//! * network input: [`Transport::on_segment`] with a received [`Segment`];
//! * outputs, polled in this order after every input: [`Transport::poll_transmit`] (segments
//!   to send), [`Transport::poll_event`] (messages delivered to the application), and
//!   [`Transport::poll_timeout`] (the next deadline, for [`Transport::on_timeout`]).
//!
//! Nothing here reads a clock or touches the event queue: `now` comes in with every call.
//! Built-in transports are dispatched through the [`Socket`] enum (no virtual calls on the
//! hot path): UDP ([`udp`]), TCP ([`tcp`]: Tahoe, Reno, NewReno, SACK, CUBIC), ns-2.35's
//! one-way TCP agents ([`ns2tcp`]: `Agent/TCP`, `/Reno`, `/Newreno`, `/Sack1` with
//! `Agent/TCPSink` or `Agent/TCPSink/DelAck`, packet-counted as ns-2 models them), SCTP
//! ([`sctp`]), TFRC ([`tfrc`]), DCCP ([`dccp`]) and stop-and-wait ([`stop_and_wait`]); their
//! headers through [`L4Header`] and the [`Header`] trait. A transport is registered by one
//! line in `sockets!` (and one in `headers!` for a header type of its own), below.

pub mod dccp;
#[macro_use]
mod header;
pub mod ns2tcp;
pub mod sctp;
pub mod stop_and_wait;
pub mod tcp;
#[cfg(test)]
mod testkit;
pub mod tfrc;
pub mod udp;

/// Cases per property of the two-endpoint property tests: `PROPTEST_CASES` if set (a soak,
/// scripts/soak.sh), else `default`.
#[cfg(test)]
pub(crate) fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::SizeConvention;

pub use header::Header;

pub use dccp::{Ccid, DccpConfig, DccpProfile, DccpSocket};
pub use ns2tcp::{Ns2TcpConfig, Ns2TcpSocket, Ns2Variant, NS2_PACKET_SIZE};
pub use sctp::{PrPolicy, SctpConfig, SctpProfile, SctpSocket};
pub use tcp::{TcpConfig, TcpSocket};
pub use tfrc::{TfrcConfig, TfrcHeader, TfrcProfile, TfrcSocket};
pub use udp::UdpSocket;

/// One application message, as it travels through a transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sequence number of the message within its flow direction, from 0.
    pub id: u64,
    /// Application bytes.
    pub len: u32,
    /// When the application handed the message to the transport.
    pub created: SimTime,
}

headers! {
    /// A UDP datagram carrying one whole message.
    Udp(tpsim_wire::UdpRepr),
    /// A TCP segment (options included in the header).
    Tcp(tpsim_wire::TcpRepr),
    /// An SCTP packet: common header and a description of its chunks (RFC 9260 §3).
    Sctp(crate::sctp::SctpBox),
    /// A TFRC packet (RFC 5348): a UDP header followed by a TFRC data or feedback header.
    Tfrc(crate::tfrc::TfrcHeader),
    /// A DCCP packet (RFC 4340 §5): generic header, type subheader and options.
    Dccp(tpsim_wire::dccp::DccpRepr),
    /// A stop-and-wait packet: a UDP header and the DATA or ACK header.
    StopAndWait(crate::stop_and_wait::StopAndWaitHeader),
}

/// A segment (datagram, packet) as a transport emits or receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Transport header.
    pub header: L4Header,
    /// Application payload bytes carried.
    pub payload_len: u32,
    /// Size of the whole IP packet on the wire, bytes (depends on the [`SizeConvention`]).
    pub ip_len: u32,
    /// The message this segment carries, for message-preserving transports (UDP).
    pub message: Option<Message>,
    /// When the message's first byte was first transmitted (for `net_delay_mean_s`).
    pub first_tx: SimTime,
    /// The peer address: on a segment a transport emits, the one it goes to (`None`: the
    /// address the endpoint was connected to); on a segment the network delivers, the one it
    /// came from (`None` if unknown). Only multi-homed SCTP endpoints (RFC 9260 §6.4) choose.
    pub addr: Option<std::net::Ipv4Addr>,
    /// For byte-stream transports (TCP): the application bytes this segment carries, as
    /// offsets in the stream (0 = first application byte, SYN/FIN not counted). The engine
    /// uses it to know when each message's first byte is first sent.
    pub stream: Option<StreamData>,
    /// The IP header's ECN field (RFC 3168 §5): on a segment a transport emits, ECT(0) if it
    /// is ECN-capable (else not-ECT); on a segment the network delivers, the field as it
    /// arrived (CE if a queue marked it: the engine marks the IP header and this copy).
    pub ecn: tpsim_wire::Ecn,
}

/// Application bytes carried by a byte-stream segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamData {
    /// Stream offset of the first byte carried (0 = first application byte).
    pub offset: u64,
    /// Number of application bytes carried.
    pub len: u32,
    /// Whether any of these bytes were sent before (a retransmission).
    pub retransmission: bool,
}

/// What a transport tells the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportEvent {
    /// A whole message was delivered to the receiving application (message-preserving
    /// transports: UDP, SCTP, DCCP, TFRC).
    Delivered {
        /// The message.
        message: Message,
        /// When its first byte was first transmitted by the sender.
        first_tx: SimTime,
    },
    /// Byte-stream transports (TCP): the application has now received, in order, every
    /// stream byte below `upto` (cumulative; 0 = first application byte). The engine maps this
    /// to the messages whose last byte is below `upto`.
    DeliveredBytes {
        /// One past the last in-order byte delivered.
        upto: u64,
    },
    /// The connection is established (TCP: handshake complete).
    Connected,
    /// The connection is closed (both FINs acknowledged, or reset).
    Closed,
}

/// Why a message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The message does not fit the path MTU and the transport does not segment
    /// (UDP, TFRC, DCCP: a scenario error, caught at validation).
    TooLarge {
        /// Largest message accepted, bytes.
        max: u32,
    },
    /// The send buffer is full; try again later.
    BufferFull,
    /// A message-preserving, unreliable transport's send queue (TFRC, DCCP) is full: the
    /// message is dropped at the sender (the engine counts it as sent and dropped, reason
    /// `send_queue`).
    QueueFull,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::TooLarge { max } => write!(f, "message larger than {max} bytes"),
            SendError::BufferFull => write!(f, "send buffer full"),
            SendError::QueueFull => write!(f, "send queue full"),
        }
    }
}

/// Counters every transport keeps (collected once at the end of a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransportStats {
    /// Segments handed to IP, including retransmissions.
    pub tx_segments: u64,
    /// Segments received from IP.
    pub rx_segments: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Pure acknowledgement or feedback segments sent.
    pub ack_segments: u64,
    /// Acknowledgements of this end's data received (what [`AckSample`] counts): TCP segments
    /// with the ACK bit reaching an open connection, SACK chunks (SCTP), DCCP packets with an
    /// acknowledgement for CCID 2 or with the CCID 3 feedback options, TFRC feedback packets.
    pub acks_received: u64,
}

/// A data sender's state right after it processed an acknowledgement or feedback packet
/// ([`Socket::ack_sample`]): the values of the per-ACK samples. Counters are cumulative, so
/// that the caller reads one sample before and one after a segment and knows whether the
/// segment was an acknowledgement ([`AckSample::acks`] grew) and which RTT it measured.
/// Values a transport does not have are `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckSample {
    /// [`TransportStats::acks_received`] so far.
    pub acks: u64,
    /// RTT samples taken so far (as [`TransportReport::rtt_samples`]).
    pub rtt_samples: u64,
    /// Sum of those samples, ns (as [`TransportReport::rtt_sum_ns`]).
    pub rtt_sum_ns: u64,
    /// Congestion window, bytes (TCP; SCTP: the primary path's).
    pub cwnd_bytes: Option<f64>,
    /// Slow-start threshold, bytes; `None` while still "arbitrarily high".
    pub ssthresh_bytes: Option<f64>,
    /// Congestion window, packets (ns-2's TCP agents, DCCP CCID 2).
    pub cwnd_packets: Option<f64>,
    /// Slow-start threshold, packets (ns-2's TCP agents, DCCP CCID 2).
    pub ssthresh_packets: Option<f64>,
    /// Smoothed RTT, s (TFRC, CCID 3: the estimate R of RFC 5348 §4.3).
    pub srtt_s: Option<f64>,
    /// Allowed sending rate X, bit/s (TFRC, CCID 3).
    pub x_bps: Option<f64>,
    /// The receive rate X_recv the last feedback reported, bit/s (TFRC, CCID 3).
    pub x_recv_bps: Option<f64>,
    /// The pacing rate, bit/s (a paced TCP sender).
    pub pacing_rate_bps: Option<f64>,
    /// BBR's bottleneck-bandwidth estimate BtlBw, bit/s.
    pub btlbw_bps: Option<f64>,
    /// BBR's round-trip propagation-time estimate RTprop, s.
    pub rtprop_s: Option<f64>,
    /// BBR's state: 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT.
    pub bbr_state: Option<f64>,
}

/// What a transport endpoint tells the metrics about itself: the same shape for every
/// transport, so that the engine never asks for a concrete type. Counters a transport does not
/// have are zero or `None`; what only one transport has goes in [`TransportReport::extra`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransportReport {
    /// Segments, retransmissions and acknowledgement/feedback packets.
    pub stats: TransportStats,
    /// RTT samples taken (reliable transports; RFC 6298 §3: none from retransmissions).
    pub rtt_samples: u64,
    /// Sum of those samples, ns.
    pub rtt_sum_ns: u64,
    /// Retransmission timer expiries that retransmitted something.
    pub timeouts: u64,
    /// Retransmissions triggered by duplicate acknowledgements (fast retransmit).
    pub fast_retransmits: u64,
    /// The retransmission timeout without back-off, if the transport has one.
    pub rto: Option<SimDuration>,
    /// Whether the endpoint abandoned its connection (retry limits).
    pub gave_up: bool,
    /// The congestion state sampled into the time series, as (series name, value) pairs in a
    /// fixed order per transport: TCP gives `cwnd_bytes`, `ssthresh_bytes` (`None` until
    /// set) and `srtt_s` (`None` until measured); a rate-based transport would give its
    /// allowed rate. Empty for transports without congestion control (UDP).
    pub congestion: Vec<(&'static str, Option<f64>)>,
    /// Transport-specific columns of the flows table about what this end sent, (column
    /// name, value): a flow direction's row takes them from its sender; they appear only for
    /// flows of a transport that reports them.
    pub extra: Vec<(&'static str, Option<f64>)>,
    /// The same about what this end received (e.g. SCTP's head-of-line blocking): a flow
    /// direction's row takes them from its receiver.
    pub rx_extra: Vec<(&'static str, Option<f64>)>,
}

/// Configuration shared by all transports.
#[derive(Clone, Copy, Debug)]
pub struct SocketConfig {
    /// Local port.
    pub local_port: u16,
    /// Remote port.
    pub remote_port: u16,
    /// Packet-size convention of the scenario.
    pub sizes: SizeConvention,
    /// Path MTU (largest IP packet), bytes.
    pub mtu: u32,
    /// Seed of the flow's transport draws (`tpsim_core::rng::RngStream::from_seed`): the
    /// engine derives it from the run's seed, the run and the flow (`Module::Transport`), so a
    /// model that draws (ns-2's TCP clock phase) draws the same in every run of that seed.
    pub draw_seed: u64,
}

/// The surface every transport offers the engine (see the crate documentation for the order
/// of calls). A transport implements the required methods; the provided ones fit a
/// connectionless, message-oriented transport without congestion state (UDP) and are
/// overridden where the transport differs. The engine reaches every transport through
/// [`Socket`], which dispatches with a `match` (no virtual call on the hot path).
pub trait Transport {
    /// Hands an application message to the transport.
    ///
    /// # Errors
    /// [`SendError::BufferFull`] if the send buffer cannot take it now (a reliable transport:
    /// the application retries), [`SendError::QueueFull`] if an unreliable transport's send
    /// queue dropped it (counted as sent and dropped, `send_queue_drops`).
    fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError>;
    /// Whether the transport would accept a message of `len` bytes now (for bulk senders).
    fn can_send(&self, len: u32) -> bool;
    /// Processes a segment received from the network.
    fn on_segment(&mut self, now: SimTime, seg: &Segment);
    /// Processes a timer expiry; safe to call spuriously.
    fn on_timeout(&mut self, now: SimTime);
    /// The next segment to send, if any.
    fn poll_transmit(&mut self, now: SimTime) -> Option<Segment>;
    /// The next event for the application, if any.
    fn poll_event(&mut self) -> Option<TransportEvent>;
    /// The next deadline at which [`Transport::on_timeout`] must be called.
    fn poll_timeout(&self) -> Option<SimTime>;
    /// Counters so far.
    fn stats(&self) -> TransportStats;
    /// Messages accepted by the transport but not yet handed to IP.
    fn buffered_messages(&self) -> u64;

    /// What the endpoint reports to the metrics (counters and congestion state). Default:
    /// the counters alone.
    fn report(&self) -> TransportReport {
        TransportReport {
            stats: self.stats(),
            ..TransportReport::default()
        }
    }
    /// The state the per-ACK samples record (no allocation; cheap enough to call around
    /// every segment). Default: nothing to record.
    fn ack_sample(&self) -> AckSample {
        AckSample::default()
    }
    /// Hands an application message to the transport on `stream`, `unordered` or not, for
    /// transports with streams (SCTP: the stream is taken modulo the outbound streams).
    /// Default: both ignored, as [`Transport::send`].
    ///
    /// # Errors
    /// As [`Transport::send`].
    fn send_on(&mut self, now: SimTime, msg: Message, stream: u16, unordered: bool) -> Result<(), SendError> {
        let _ = (stream, unordered);
        self.send(now, msg)
    }
    /// The application has nothing more to send: close once everything is delivered (TCP:
    /// FIN after the data). Default: nothing to do (connectionless).
    fn close(&mut self, now: SimTime) {
        let _ = now;
    }
    /// Whether the transport carries a byte stream (TCP): it reports deliveries as stream
    /// offsets ([`TransportEvent::DeliveredBytes`]), and the engine maps them back to the
    /// application's messages. Default: false (whole messages).
    fn byte_stream(&self) -> bool {
        false
    }
    /// Whether the transport sets up a connection before data flows: then the engine opens
    /// the active end when its application starts. Default: false.
    fn connection_oriented(&self) -> bool {
        false
    }
    /// Whether the transport drops messages at a bounded send queue
    /// ([`SendError::QueueFull`]): the flow's row then has a `send_queue_drops` column.
    /// Default: false.
    fn drops_at_send_queue(&self) -> bool {
        false
    }
    /// Multi-homing (RFC 9260 §6.4): this end's addresses (`local`, in the order the node
    /// numbers its interfaces) and, at the end that opens, the peer address to open to
    /// (`peer`), called once before the first packet. Default: ignored (one address per end).
    fn set_addresses(&mut self, local: &[std::net::Ipv4Addr], peer: Option<std::net::Ipv4Addr>) {
        let _ = (local, peer);
    }
}

impl Transport for UdpSocket {
    #[inline]
    fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError> {
        UdpSocket::send(self, now, msg)
    }
    #[inline]
    fn can_send(&self, len: u32) -> bool {
        UdpSocket::can_send(self, len)
    }
    #[inline]
    fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        UdpSocket::on_segment(self, now, seg)
    }
    #[inline]
    fn on_timeout(&mut self, now: SimTime) {
        UdpSocket::on_timeout(self, now)
    }
    #[inline]
    fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        UdpSocket::poll_transmit(self, now)
    }
    #[inline]
    fn poll_event(&mut self) -> Option<TransportEvent> {
        UdpSocket::poll_event(self)
    }
    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        UdpSocket::poll_timeout(self)
    }
    #[inline]
    fn stats(&self) -> TransportStats {
        UdpSocket::stats(self)
    }
    #[inline]
    fn buffered_messages(&self) -> u64 {
        UdpSocket::buffered_messages(self)
    }
}

/// Implements [`Transport`] for a socket type whose inherent methods have the trait's names
/// and signatures (the required ones plus `report` and `ack_sample`); further trait methods
/// it overrides follow in braces.
macro_rules! transport_by_inherent_methods {
    ($ty:ty { $($extra:item)* }) => {
        impl Transport for $ty {
            #[inline]
            fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError> {
                <$ty>::send(self, now, msg)
            }
            #[inline]
            fn can_send(&self, len: u32) -> bool {
                <$ty>::can_send(self, len)
            }
            #[inline]
            fn on_segment(&mut self, now: SimTime, seg: &Segment) {
                <$ty>::on_segment(self, now, seg)
            }
            #[inline]
            fn on_timeout(&mut self, now: SimTime) {
                <$ty>::on_timeout(self, now)
            }
            #[inline]
            fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
                <$ty>::poll_transmit(self, now)
            }
            #[inline]
            fn poll_event(&mut self) -> Option<TransportEvent> {
                <$ty>::poll_event(self)
            }
            #[inline]
            fn poll_timeout(&self) -> Option<SimTime> {
                <$ty>::poll_timeout(self)
            }
            #[inline]
            fn stats(&self) -> TransportStats {
                <$ty>::stats(self)
            }
            #[inline]
            fn buffered_messages(&self) -> u64 {
                <$ty>::buffered_messages(self)
            }
            fn report(&self) -> TransportReport {
                <$ty>::report(self)
            }
            #[inline]
            fn ack_sample(&self) -> AckSample {
                <$ty>::ack_sample(self)
            }
            $($extra)*
        }
    };
}

transport_by_inherent_methods!(TcpSocket {
    fn close(&mut self, now: SimTime) {
        TcpSocket::close(self, now)
    }
    fn byte_stream(&self) -> bool {
        true
    }
    fn connection_oriented(&self) -> bool {
        true
    }
});
transport_by_inherent_methods!(Ns2TcpSocket {
    fn close(&mut self, now: SimTime) {
        Ns2TcpSocket::close(self, now)
    }
    // The one-way sender opens a connection (its modelled SYN goes out with the
    // application's first write); the sink does not.
    fn connection_oriented(&self) -> bool {
        self.is_sender()
    }
});
transport_by_inherent_methods!(SctpSocket {
    fn send_on(&mut self, now: SimTime, msg: Message, stream: u16, unordered: bool) -> Result<(), SendError> {
        SctpSocket::send_on(self, now, msg, stream, unordered)
    }
    fn close(&mut self, now: SimTime) {
        SctpSocket::close(self, now)
    }
    fn connection_oriented(&self) -> bool {
        self.is_active()
    }
    fn set_addresses(&mut self, local: &[std::net::Ipv4Addr], peer: Option<std::net::Ipv4Addr>) {
        SctpSocket::set_addresses(self, local, peer, None)
    }
});
transport_by_inherent_methods!(TfrcSocket {
    fn drops_at_send_queue(&self) -> bool {
        true
    }
});
transport_by_inherent_methods!(DccpSocket {
    fn close(&mut self, now: SimTime) {
        DccpSocket::close(self, now)
    }
    fn connection_oriented(&self) -> bool {
        self.is_active()
    }
    fn drops_at_send_queue(&self) -> bool {
        true
    }
});

/// Declares [`Socket`], one variant per transport, and its [`Transport`] implementation,
/// which hands every call to the variant's socket. Adding a transport is one line here.
macro_rules! sockets {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// A transport endpoint of any built-in kind.
        // A run has few sockets; boxing TCP's larger state would cost an indirection on every call.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug)]
        pub enum Socket {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Transport for Socket {
            #[inline]
            fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError> {
                match self { $(Socket::$variant(s) => s.send(now, msg),)* }
            }
            #[inline]
            fn can_send(&self, len: u32) -> bool {
                match self { $(Socket::$variant(s) => Transport::can_send(s, len),)* }
            }
            #[inline]
            fn on_segment(&mut self, now: SimTime, seg: &Segment) {
                match self { $(Socket::$variant(s) => s.on_segment(now, seg),)* }
            }
            #[inline]
            fn on_timeout(&mut self, now: SimTime) {
                match self { $(Socket::$variant(s) => s.on_timeout(now),)* }
            }
            #[inline]
            fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
                match self { $(Socket::$variant(s) => s.poll_transmit(now),)* }
            }
            #[inline]
            fn poll_event(&mut self) -> Option<TransportEvent> {
                match self { $(Socket::$variant(s) => s.poll_event(),)* }
            }
            #[inline]
            fn poll_timeout(&self) -> Option<SimTime> {
                match self { $(Socket::$variant(s) => Transport::poll_timeout(s),)* }
            }
            #[inline]
            fn stats(&self) -> TransportStats {
                match self { $(Socket::$variant(s) => Transport::stats(s),)* }
            }
            #[inline]
            fn buffered_messages(&self) -> u64 {
                match self { $(Socket::$variant(s) => Transport::buffered_messages(s),)* }
            }
            fn report(&self) -> TransportReport {
                match self { $(Socket::$variant(s) => Transport::report(s),)* }
            }
            #[inline]
            fn ack_sample(&self) -> AckSample {
                match self { $(Socket::$variant(s) => Transport::ack_sample(s),)* }
            }
            fn send_on(&mut self, now: SimTime, msg: Message, stream: u16, unordered: bool) -> Result<(), SendError> {
                match self { $(Socket::$variant(s) => Transport::send_on(s, now, msg, stream, unordered),)* }
            }
            fn close(&mut self, now: SimTime) {
                match self { $(Socket::$variant(s) => Transport::close(s, now),)* }
            }
            #[inline]
            fn byte_stream(&self) -> bool {
                match self { $(Socket::$variant(s) => Transport::byte_stream(s),)* }
            }
            #[inline]
            fn connection_oriented(&self) -> bool {
                match self { $(Socket::$variant(s) => Transport::connection_oriented(s),)* }
            }
            #[inline]
            fn drops_at_send_queue(&self) -> bool {
                match self { $(Socket::$variant(s) => Transport::drops_at_send_queue(s),)* }
            }
            fn set_addresses(&mut self, local: &[std::net::Ipv4Addr], peer: Option<std::net::Ipv4Addr>) {
                match self { $(Socket::$variant(s) => Transport::set_addresses(s, local, peer),)* }
            }
        }
    };
}

sockets! {
    /// UDP (RFC 768).
    Udp(UdpSocket),
    /// TCP (RFC 9293).
    Tcp(TcpSocket),
    /// ns-2.35's one-way TCP agents (sender or sink).
    Ns2Tcp(Ns2TcpSocket),
    /// SCTP (RFC 9260), one association.
    Sctp(SctpSocket),
    /// TFRC (RFC 5348) over UDP, one end of a one-way flow.
    Tfrc(TfrcSocket),
    /// DCCP (RFC 4340) with CCID 2 or CCID 3, one connection.
    Dccp(DccpSocket),
    /// Stop-and-wait ARQ over UDP (docs/adding-a-transport.md's example).
    StopAndWait(stop_and_wait::StopAndWaitSocket),
}
