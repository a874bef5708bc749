//! DCCP (RFC 4340) as a sans-IO state machine, with CCID 2 (RFC 4341, TCP-like) and CCID 3
//! (RFC 4342, TFRC).
//!
//! # Read these first
//!
//! * RFC 4340: packet types (§5), sequence numbers and the Sequence Window (§7, validity
//!   rules §7.5.3, Sync recovery §7.5.4), the handshake and close (§8, state diagram §8.4),
//!   feature negotiation (§6), acknowledgements and the Ack Vector (§11.4), Ack Ratio (§11.3),
//!   the checksum (§9).
//! * RFC 4341, CCID 2: the window in packets, slow start and congestion avoidance (§5), loss
//!   from the Ack Vector (§5), Ack Ratio (§6.1.2) and acknowledgements of acknowledgements
//!   (§6.1.1 – §6.2).
//! * RFC 4342, CCID 3: TFRC (RFC 5348) over DCCP, the CCVal window counter (§8.1), the Loss
//!   Event Rate (§8.5) and Receive Rate (§8.3) options.
//!
//! # Shape
//!
//! [`DccpSocket`] offers the surface every tpsim transport has (see the crate docs). Each
//! message is one Data (or DataAck) packet; DCCP never retransmits data, so every message is
//! delivered at most once or lost. Both ends are symmetric: each is the HC-Sender of its own
//! data and the HC-Receiver of its peer's, and the CCID applies to both half-connections.
//!
//! * [`seqwin`]: 48-bit arithmetic and the sequence/acknowledgement validity windows.
//! * [`ackvec`]: the HC-Receiver's record of received packets and its Ack Vector encoding.
//! * [`ccid2`]: CCID 2's HC-Sender (window, pipe, loss detection, RTO, Ack Ratio).
//! * [`ccid3`]: CCID 3's HC-Sender and HC-Receiver on top of [`crate::tfrc`].
//!
//! # Sizes on the wire
//!
//! Under `standard` a packet is 20 bytes of IPv4, then
//! [`DccpRepr::header_len`](tpsim_wire::dccp::DccpRepr::header_len), then the message; under
//! `ns2` it is ns-2.35's count
//! ([`DccpRepr::ns2_overhead`](tpsim_wire::dccp::DccpRepr::ns2_overhead)), then the message. A
//! message is at most MTU − 20 − 24 − [`MAX_DATA_OPTIONS_LEN`] bytes (`standard`; `ns2`: MTU −
//! 36 − the same), else [`SendError::TooLarge`](crate::SendError::TooLarge).
//!
//! # What `report()` gives
//!
//! * `stats`: `tx_segments` = Data and DataAck packets, `ack_segments` = Ack packets,
//!   `rx_segments` = packets received, `retransmissions` = 0;
//! * `rtt_samples`, `rtt_sum_ns`, `rto`, `timeouts` (CCID 2: RTO expiries), `gave_up`
//!   (handshake or close abandoned);
//! * `congestion`: CCID 2 `cwnd_packets`, `srtt_s`; CCID 3 `x_bps` (the allowed rate X in
//!   bit/s), `p`, `srtt_s`;
//! * `extra`: `dccp_lost_packets` (data packets the sender's CCID declared lost),
//!   `dccp_syncs` (Syncs sent), `dccp_ack_ratio` (CCID 2's Ack Ratio at the end).
//!
//! # Choices and deviations
//!
//! * Close (§8.3): the client sends Close once its application closed and its queue is
//!   empty; the server sends CloseReq then and keeps receiving and acknowledging until the
//!   client's Close (RFC 4340 has the client answer a CloseReq at once; waiting keeps a
//!   two-way flow's other direction whole). Messages still queued when the connection ends
//!   are dropped and counted ([`DccpStats::queue_dropped`]).
//! * A server whose handshake does not complete leaves RESPOND after `give_up_after`.
//! * Acknowledgements of acknowledgements (RFC 4341 §6.1.1): piggy-backed on the sender's
//!   next DataAck; a sender with nothing to send answers the Acks that acknowledged its data
//!   with one Ack after `ack_delay`. Ack-only packets are never acknowledged by an Ack.
//! * CCID 3 follows RFC 4342, i.e. TFRC as RFC 3448 specifies it: X = max(min(X_calc,
//!   2·X_recv), s/t_mbi), without RFC 5348 §4.3's data-limited rules
//!   ([`ccid3::Ccid3Sender::rfc5348_data_limited`] turns them on). The receiver sends feedback
//!   on the first data packet, on a new loss event and once the window counter moved 4 steps
//!   (one RTT) past the packet that last triggered feedback; it has no feedback timer.
//! * Data packets carry the NDP Count (RFC 4340 §7.7) under CCID 3, for the receiver's loss
//!   history.
//!
//! # Not implemented
//!
//! ECN (ns-2.35's agents run with ECN on), changes of the Sequence Window and of the CCID
//! after the handshake (Ack Ratio changes are implemented), the Slow Receiver, Data Dropped,
//! Loss Intervals and Timestamp options (parsed and emitted, not used), partial checksums
//! (CsCov is 0), service codes beyond a fixed value, the Init Cookie, and a Reset for every
//! stray packet at a closed endpoint (only Close, CloseReq and Request get one).

pub mod ackvec;
pub mod ccid2;
pub mod ccid3;
mod conn;
pub mod seqwin;

#[cfg(test)]
mod pair_tests;
#[cfg(test)]
mod tests;

pub use conn::DccpSocket;

use std::fmt;
use tpsim_core::SimDuration;

pub use tpsim_wire::dccp::MAX_DATA_OPTIONS_LEN;

/// The congestion control of a connection (RFC 4340 §10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ccid {
    /// CCID 2, TCP-like congestion control (RFC 4341).
    #[default]
    Ccid2,
    /// CCID 3, TFRC congestion control (RFC 4342).
    Ccid3,
}

impl Ccid {
    /// The CCID number (RFC 4340 §10).
    pub fn number(self) -> u8 {
        match self {
            Ccid::Ccid2 => 2,
            Ccid::Ccid3 => 3,
        }
    }
    /// The CCID with number `n`, if tpsim implements it.
    pub fn from_number(n: u16) -> Option<Ccid> {
        match n {
            2 => Some(Ccid::Ccid2),
            3 => Some(Ccid::Ccid3),
            _ => None,
        }
    }
}

/// Connection states (RFC 4340 §4.3, §8.4); `Display` prints the RFC's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// No connection.
    Closed,
    /// A passive (server) endpoint waiting for a Request.
    Listen,
    /// The client sent a Request.
    Request,
    /// The server got a Request and sent a Response.
    Respond,
    /// The client got the Response and acknowledges it until the server's next packet.
    PartOpen,
    /// Data flows.
    Open,
    /// The server sent a CloseReq.
    CloseReq,
    /// Close sent, waiting for the Reset.
    Closing,
    /// Reset received after our Close: lingering 2·MSL (§8.3).
    TimeWait,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::Request => "REQUEST",
            State::Respond => "RESPOND",
            State::PartOpen => "PARTOPEN",
            State::Open => "OPEN",
            State::CloseReq => "CLOSEREQ",
            State::Closing => "CLOSING",
            State::TimeWait => "TIMEWAIT",
        })
    }
}

/// Which set of defaults a [`DccpConfig`] starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DccpProfile {
    /// RFC 4340/4341/4342 values.
    #[default]
    Rfc,
    /// ns-2.35's Agent/DCCP, Agent/DCCP/TCPlike and Agent/DCCP/TFRC (`tcl/lib/ns-default.tcl`).
    Ns2,
}

/// DCCP parameters of one endpoint. Every field gives its value as "RFC / ns-2" and the
/// source of each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DccpConfig {
    /// The profile these values came from (informational).
    pub profile: DccpProfile,
    /// The CCID the client asks for (RFC 4340 §10: CCID 2 is the default); a server adopts
    /// the client's choice (server-priority negotiation with one common value, §6.3.1).
    pub ccid: Ccid,
    /// Send queue length, messages; a message that finds it full is refused with
    /// [`SendError::QueueFull`](crate::SendError::QueueFull). The RFCs set none; 1000 / 1000
    /// (ns-2 `sb_size_`).
    pub send_queue_len: usize,
    /// Sequence Window W, packets (RFC 4340 §7.5.2: default 100), for both directions.
    pub sequence_window: u64,
    /// Initial Ack Ratio (RFC 4340 §11.3: default 2; ns-2 `ack_ratio_local_` 2).
    pub ack_ratio: u16,
    /// First Request retransmission timeout (RFC 4340 §8.1.1: about 1 s, exponential backoff);
    /// 1 s / 3 s (ns-2 `initial_rtx_to_`). Close and CloseReq use the same back-off.
    pub request_rto: SimDuration,
    /// Longest Request back-off interval (RFC 4340 §8.1.1: 64 s) / 75 s (ns-2 `max_rtx_to_`).
    pub max_request_rto: SimDuration,
    /// The client gives up (Reset, `gave_up`) when no Response came within this long (RFC
    /// 4340 §8.1.1: "3 minutes, for example") / 75 s (ns-2 `resp_to_`). Close retransmissions
    /// stop after the same time.
    pub give_up_after: SimDuration,
    /// PARTOPEN Ack retransmission timer (RFC 4340 §8.1.5: 200 ms, backing off) / the same.
    pub partopen_timeout: SimDuration,
    /// Maximum segment lifetime; TIMEWAIT lasts 2·MSL (RFC 4340 §8.3: MSL 2 minutes).
    pub msl: SimDuration,
    /// Sync rate limit: at most one Sync per this interval in answer to invalid packets (RFC
    /// 4340 §7.5.4: "SHOULD ... rate-limit", Linux 1/8 s) / the same.
    pub sync_interval: SimDuration,
    /// CCID 2 initial cwnd, packets; `None`: RFC 4341 §5's min(4, max(2, ⌊4380/s⌋)) with s the
    /// first message's size. None / Some(3) (ns-2 `initial_cwnd_`).
    pub ccid2_initial_cwnd: Option<u32>,
    /// CCID 2 initial ssthresh, packets (RFC 4341 §5: "arbitrarily high", tpsim u32::MAX) /
    /// 65535 (ns-2 `initial_ssthresh_`).
    pub ccid2_initial_ssthresh: u32,
    /// Data packets acknowledged after a packet that make it lost (RFC 4341 §5: NUMDUPACK 3;
    /// ns-2 `num_dup_acks_` 3).
    pub ccid2_dupack_threshold: u32,
    /// CCID 2 initial RTO (RFC 4341 §5 refers to RFC 2988: 3 s; ns-2 `initial_rto_` 3.0).
    pub ccid2_initial_rto: SimDuration,
    /// CCID 2 minimum RTO (RFC 2988: 1 s; ns-2 `min_rto_` 1.0).
    pub ccid2_min_rto: SimDuration,
    /// CCID 2 maximum RTO (RFC 2988 §2.5: at least 60 s; tpsim 64 s) / the same.
    pub ccid2_max_rto: SimDuration,
    /// The HC-Receiver's delayed-acknowledgement timer: an Ack goes out this long after the
    /// first unacknowledged data packet if Ack Ratio has not triggered one (RFC 4341 §6.1
    /// leaves it open; RFC 1122's TCP bound is 500 ms): 200 ms / 200 ms (ns-2 `dack_delay_`).
    pub ack_delay: SimDuration,
    /// CCID 3 segment size s for the throughput equation, bytes (RFC 4342 §5: the packet
    /// size); `None`: the mean size of the messages sent so far. None / Some(500) (ns-2
    /// `s_s_`; ns-2 study scripts set it to the message size).
    pub ccid3_s: Option<u32>,
    /// CCID 3 t_mbi, the longest interval between packets (RFC 5348 §4.3: 64 s; ns-2
    /// `s_t_mbi_` 64).
    pub ccid3_t_mbi: SimDuration,
    /// CCID 3 oscillation prevention (RFC 5348 §4.5, optional): false / true (ns-2
    /// `s_use_osc_prev_` 1).
    pub ccid3_oscillation_prevention: bool,
    /// CCID 3 sender: every data packet's window counter at least one RTT's steps (4) past
    /// that of the packet the last feedback acknowledged: false / true (ns-2.35's
    /// dccp_tfrc.cc `tfrc_send_packet`, its "last acked wc restriction"). The receiver then
    /// reports about once per RTT however slowly the counter advances on its own.
    pub ccid3_wc_past_acked: bool,
    /// Whether the passive end listens. `false` reproduces an ns-2.35 receiving agent never
    /// told to `listen` (the `dccp-no-listen` quirk): it stays CLOSED and ignores every
    /// packet, Requests included, without a Reset (`dccp.cc` `recv()`). true / true.
    pub listens: bool,
}

impl Default for DccpConfig {
    fn default() -> Self {
        DccpConfig::rfc()
    }
}

impl DccpConfig {
    /// The RFC 4340/4341/4342 defaults.
    pub fn rfc() -> DccpConfig {
        DccpConfig {
            profile: DccpProfile::Rfc,
            ccid: Ccid::Ccid2,
            send_queue_len: 1000,
            sequence_window: 100,
            ack_ratio: 2,
            request_rto: SimDuration::from_secs(1),
            max_request_rto: SimDuration::from_secs(64),
            give_up_after: SimDuration::from_secs(180),
            partopen_timeout: SimDuration::from_millis(200),
            msl: SimDuration::from_secs(120),
            sync_interval: SimDuration::from_millis(125),
            ccid2_initial_cwnd: None,
            ccid2_initial_ssthresh: u32::MAX,
            ccid2_dupack_threshold: 3,
            ccid2_initial_rto: SimDuration::from_secs(3),
            ccid2_min_rto: SimDuration::from_secs(1),
            ccid2_max_rto: SimDuration::from_secs(64),
            ack_delay: SimDuration::from_millis(200),
            ccid3_s: None,
            ccid3_t_mbi: SimDuration::from_secs(64),
            ccid3_oscillation_prevention: false,
            ccid3_wc_past_acked: false,
            listens: true,
        }
    }

    /// ns-2.35's Agent/DCCP defaults where they differ (`ns-default.tcl`): `initial_rtx_to_`
    /// 3 s, `max_rtx_to_` 75 s, `resp_to_` 75 s, TCPlike `initial_cwnd_` 3 and
    /// `initial_ssthresh_` 65535, TFRC `s_s_` 500 B and `s_use_osc_prev_` 1.
    pub fn ns2() -> DccpConfig {
        DccpConfig {
            profile: DccpProfile::Ns2,
            request_rto: SimDuration::from_secs(3),
            max_request_rto: SimDuration::from_secs(75),
            give_up_after: SimDuration::from_secs(75),
            ccid2_initial_cwnd: Some(3),
            ccid2_initial_ssthresh: 65535,
            ccid3_s: Some(500),
            ccid3_oscillation_prevention: true,
            ccid3_wc_past_acked: true,
            ..DccpConfig::rfc()
        }
    }

    /// The profile's configuration with CCID `ccid`.
    pub fn for_profile(p: DccpProfile, ccid: Ccid) -> DccpConfig {
        let c = match p {
            DccpProfile::Rfc => DccpConfig::rfc(),
            DccpProfile::Ns2 => DccpConfig::ns2(),
        };
        DccpConfig { ccid, ..c }
    }
}

/// DCCP-specific counters of one endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DccpStats {
    /// Data and DataAck packets sent (each carries one message).
    pub data_sent: u64,
    /// Ack packets sent.
    pub acks_sent: u64,
    /// Other packets sent (Request, Response, CloseReq, Close, Reset, Sync, SyncAck).
    pub control_sent: u64,
    /// Packets received (any type, valid or not).
    pub received: u64,
    /// Messages delivered to the application.
    pub delivered: u64,
    /// Data packets received again (duplicates), or too old to tell, not delivered.
    pub duplicates: u64,
    /// Packets that failed the sequence-validity rules (RFC 4340 §7.5.3).
    pub invalid: u64,
    /// Syncs sent (RFC 4340 §7.5.4).
    pub syncs_sent: u64,
    /// Data packets the sender's CCID acknowledged (from the Ack Vector; CCID 2).
    pub data_acked: u64,
    /// Data packets the sender's CCID declared lost (CCID 2: Ack Vector or RTO).
    pub data_lost: u64,
    /// Data packets declared lost and reported received afterwards (CCID 2).
    pub late_acked: u64,
    /// Data packets received and not delivered for another reason than duplication: invalid
    /// (§7.5.3), or arriving before the connection opened or after it closed.
    pub data_not_delivered: u64,
    /// Messages still queued when the connection closed or was reset (never sent).
    pub queue_dropped: u64,
    /// The handshake or the close was abandoned (0 or 1).
    pub gave_up: u64,
    /// The peer reset the connection while open (0 or 1).
    pub peer_reset: u64,
}
