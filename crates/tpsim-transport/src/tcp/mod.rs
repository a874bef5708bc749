//! TCP as a sans-IO state machine: Tahoe, Reno, NewReno and SACK (RFC 6675) loss recovery over
//! a byte stream, with RFC 5681 or CUBIC (RFC 9438) window growth and RFC 7323 window scaling.
//!
//! # Read these RFCs first
//!
//! * RFC 9293, TCP: header (§3.1), state machine (§3.3.2), sequence numbers (§3.4), handshake
//!   (§3.5), close (§3.6), MSS (§3.7.1), Nagle (§3.7.4), zero-window probing (§3.8.6.1), silly
//!   window avoidance (§3.8.6.2), and the event processing rules of §3.10.7 ("SEGMENT ARRIVES"),
//!   which [`TcpSocket::on_segment`] follows step by step.
//! * RFC 5681, TCP congestion control: slow start and congestion avoidance (§3.1), fast
//!   retransmit and fast recovery (§3.2), restart after idle (§4.1), generating ACKs (§4.2).
//! * RFC 6298, computing TCP's retransmission timer: SRTT/RTTVAR/RTO (§2), Karn's rule (§3),
//!   the timer rules (5.1)–(5.7) of §5.
//! * RFC 6582, NewReno: the `recover` variable and partial ACKs (§3.2).
//! * RFC 3465, appropriate byte counting (optional here, [`TcpConfig::byte_counting`]).
//! * RFC 1122 §4.2.3.2, when to send an ACK (delayed ACKs), and §4.2.2.17, zero-window probes.
//! * RFC 7323 §2, window scaling ([`TcpConfig::window_scaling`]); §3–§4, timestamps.
//! * RFC 2018, the SACK options, and RFC 2883, D-SACK ([`TcpConfig::sack`],
//!   [`TcpConfig::dsack`]); RFC 6675, SACK-based loss recovery ([`LossRecovery::Sack`]): the
//!   scoreboard and its routines are in `sack.rs`.
//! * RFC 9438, CUBIC ([`cc::Cubic`], [`CongestionAlgorithm::Cubic`]).
//! * RFC 3168 §6.1, ECN in TCP ([`TcpConfig::ecn`]): the ECN-setup SYN and SYN-ACK (§6.1.1),
//!   the sender's reduction and CWR (§6.1.2), the receiver's ECE (§6.1.3), no ECT on pure ACKs,
//!   retransmissions and window probes (§6.1.4–§6.1.6). Not implemented: the reset of the
//!   retransmission timer when an ECE arrives with a one-segment window (§6.1.2).
//!
//! # Shape
//!
//! [`TcpSocket`] has the method surface of every tpsim transport (see the crate docs): the
//! application hands over [`Message`](crate::Message)s, but TCP is a byte stream and does not
//! keep their boundaries: a message of `len` bytes appends `len` bytes to the send buffer. Data
//! segments say which stream bytes they carry ([`StreamData`](crate::StreamData)) and the
//! receiver reports in-order delivery with
//! [`TransportEvent::DeliveredBytes`](crate::TransportEvent::DeliveredBytes); the engine maps
//! bytes back to messages. tpsim carries no payload bytes, so the send buffer is only a count.
//!
//! Inside, sequence numbers are kept as `u64` offsets from the initial sequence number (0 is the
//! SYN, stream byte `k` is `1 + k`, the FIN follows the last byte), so that comparisons never
//! wrap; they become 32-bit wire numbers (RFC 9293 §3.4) only in [`TcpRepr`](tpsim_wire::TcpRepr).
//!
//! Loss recovery ([`LossRecovery`]: Tahoe, Reno, NewReno, SACK) is the connection's business; window
//! growth and reduction are the congestion controller's ([`cc::CongestionController`]), which
//! *returns* new `cwnd`/`ssthresh` values that the connection applies.
//!
//! # Not implemented
//!
//! PAWS (RFC 7323 §5), limited transmit (RFC 3042, also in RFC 6675 §5 step (3)), SACK blocks
//! on full-sized data segments (they are sent only where they fit the MTU, i.e. on ACKs and
//! short segments), the sender's use of D-SACK (RFC 2883 §5, received D-SACK blocks are only
//! ignored), CUBIC's HyStart++ and spurious-loss undo,
//! simultaneous open, keep-alives, urgent data and RFC 5961 challenge ACKs. Without
//! [`TcpConfig::syn_attempts`] / [`TcpConfig::data_retries`] (RFC 9293 §3.8.3, R2) a
//! connection retransmits forever, with the RTO capped at [`TcpConfig::max_rto`]. RSTs are
//! honoured, and sent only from CLOSED (RFC 9293 §3.10.7.1), not for unacceptable segments in
//! LISTEN or SYN-SENT.

mod bbr;
mod bbr3;
pub mod cc;
mod conn;
pub mod rate;
pub mod rtt;
mod sack;
mod seqspace;
mod timer;
mod vegas;
mod westwood;

#[cfg(test)]
mod pair_tests;
#[cfg(test)]
mod tests;

pub use cc::{
    AckEvent, Aimd, AnyController, Bbr, Bbr3, Bbr3State, BbrModel, BbrState, CcContext, CongestionAlgorithm,
    CongestionController, CongestionEvent, Cubic, Vegas, WestwoodPlus, Window,
};
pub use conn::TcpSocket;
pub use rtt::RttEstimator;
pub use timer::{Timer, TimerTable};

use std::fmt;
use tpsim_core::SimDuration;

/// How a socket opens its connection (RFC 9293 §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// Active open: the socket sends a SYN when it is created (the client).
    Active,
    /// Passive open: the socket listens and accepts the first SYN it receives (the server).
    Passive,
}

/// Which loss-recovery algorithm the connection runs after three duplicate ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LossRecovery {
    /// Fast retransmit without fast recovery: retransmit, set `cwnd` to one SMSS and slow-start
    /// again from the lost segment (go-back-N), as 4.3BSD-Tahoe and ns-2's `Agent/TCP` do.
    Tahoe,
    /// Fast retransmit and fast recovery of RFC 5681 §3.2; recovery ends on the first ACK of new
    /// data, partial or not.
    Reno,
    /// RFC 6582: fast recovery lasts until every segment outstanding at loss detection is
    /// acknowledged; each partial ACK retransmits the next hole.
    #[default]
    NewReno,
    /// RFC 6675 SACK-based loss recovery with NewReno's window rules (RFC 5681 growth, the
    /// controller's reduction at loss): offers SACK-permitted on the SYN (as
    /// [`TcpConfig::sack`] does) and, when both SYNs carried it, recovers with the scoreboard
    /// (IsLost, SetPipe, NextSeg of RFC 6675 §4, the recovery rules of §5 and §5.1); when the
    /// peer does not offer SACK, NewReno.
    Sack,
}

/// RFC 9293 §3.3.2 connection states; `Display` prints the RFC's names ("SYN-SENT").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// No connection (initial for nothing; final after TIME-WAIT, LAST-ACK or a reset).
    Closed,
    /// Waiting for a SYN (passive open).
    Listen,
    /// SYN sent, waiting for the SYN-ACK (active open).
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Open; data flows both ways.
    Established,
    /// We closed and sent (or will send) our FIN; waiting for its ACK.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's FIN.
    FinWait2,
    /// The peer closed; we may still send.
    CloseWait,
    /// Both sides sent FINs at once; waiting for the ACK of ours.
    Closing,
    /// The peer closed first and we sent our FIN; waiting for its ACK.
    LastAck,
    /// Both FINs acknowledged; lingering 2·MSL to re-acknowledge a retransmitted FIN.
    TimeWait,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynReceived => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        })
    }
}

/// TCP parameters of one connection. `Default` gives the values documented on each field; the
/// defaults follow the RFCs (not Linux), tuned for nothing in particular.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Loss recovery after three duplicate ACKs. Default [`LossRecovery::NewReno`].
    pub recovery: LossRecovery,
    /// Window growth and reduction. Default [`CongestionAlgorithm::Aimd`] (RFC 5681).
    pub congestion: CongestionAlgorithm,
    /// Largest payload this endpoint sends or accepts per segment, bytes. `None` (default):
    /// the path MTU minus 40 (IPv4 + TCP headers without options), under both size
    /// conventions. A larger value is clamped to that. The SMSS actually used is the smaller of
    /// this and the peer's MSS option (RFC 9293 §3.7.1; 536 if the peer sends none).
    pub mss_bytes: Option<u32>,
    /// Send buffer, bytes: application bytes accepted but not yet acknowledged. Default
    /// 131 072 (128 KiB).
    pub send_buffer_bytes: u32,
    /// Receive buffer, bytes: bounds the advertised window `rwnd` (RFC 9293 §3.8.6). Without
    /// window scaling the advertised value is capped at 65 535. Default 65 536 (64 KiB).
    pub recv_buffer_bytes: u32,
    /// Initial window, segments. `None` (default): RFC 5681 §3.1 eq. (1), 2 to 4 segments
    /// depending on SMSS. After a lost SYN or SYN-ACK the initial window is one segment anyway
    /// (RFC 5681 §3.1).
    pub initial_window_segments: Option<u32>,
    /// Initial `ssthresh`, bytes. `None` (default): "arbitrarily high" (RFC 5681 §3.1).
    pub initial_ssthresh_bytes: Option<u64>,
    /// Nagle's algorithm (RFC 9293 §3.7.4): hold back a less-than-full segment while data is
    /// unacknowledged. Default off.
    pub nagle: bool,
    /// Delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2): acknowledge at least every second
    /// full-sized segment, or this long after the first unacknowledged one. `None`: ACK every
    /// segment. Default 200 ms (RFC 5681 allows up to 500 ms).
    pub delayed_ack: Option<SimDuration>,
    /// With [`TcpConfig::delayed_ack`] on: acknowledge at once when this many in-order data
    /// segments are unacknowledged, whatever their size, instead of the default rule of two
    /// full-sized segments' worth of bytes (2·SMSS). The two differ only for small segments:
    /// 128-byte writes are acknowledged every 2 segments with `Some(2)`, every 9 by the byte
    /// rule (at 536-byte SMSS). `None` (default): the byte rule (RFC 5681 §4.2 "every second
    /// full-sized segment"). ns-3's `TcpSocket::DelAckCount` is 2 segments.
    pub delayed_ack_segments: Option<u32>,
    /// RFC 3465 appropriate byte counting with L = 2·SMSS: slow start grows `cwnd` by up to
    /// 2·SMSS per ACK (1·SMSS in the slow start after an RTO), congestion avoidance by one SMSS
    /// per `cwnd` bytes acknowledged. Off (default): RFC 5681 §3.1, slow start grows by
    /// min(acked, SMSS) per ACK and congestion avoidance by SMSS·SMSS/cwnd per ACK (eq. 3).
    pub byte_counting: bool,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2). Default 3.
    pub dupthresh: u32,
    /// RTO before the first RTT sample (RFC 6298 §2.1). Default 1 s.
    pub initial_rto: SimDuration,
    /// Lower bound of the RTO (RFC 6298 §2.4). Default 1 s (Linux uses 200 ms).
    pub min_rto: SimDuration,
    /// Upper bound of the RTO and of the persist interval (RFC 6298 §2.5). Default 60 s.
    pub max_rto: SimDuration,
    /// Clock granularity G of RFC 6298 §2 and §4: RTO = SRTT + max(G, 4·RTTVAR). tpsim's clock
    /// is exact to the nanosecond, so G only keeps the RTO above SRTT when RTTVAR is tiny
    /// (a perfectly steady path). Default 1 ms, a 1000 Hz kernel tick.
    pub clock_granularity: SimDuration,
    /// Maximum segment lifetime; TIME-WAIT lasts 2·MSL (RFC 9293 §3.4.2, §3.6). Default 120 s.
    pub msl: SimDuration,
    /// Initial send sequence number (RFC 9293 §3.4.1). tpsim has no clock-driven ISN
    /// generator; a fixed value keeps runs deterministic. Default 0.
    pub iss: u32,
    /// When the peer's FIN arrives, close our side too once everything we were given is sent
    /// (an application that closes on end of stream). Default true; set false to keep sending
    /// in CLOSE-WAIT until [`TcpSocket::close`] is called.
    pub close_on_peer_fin: bool,
    /// RFC 5681 §4.1: after an idle period longer than the RTO, restart from
    /// min(cwnd, initial window). Default true.
    pub restart_after_idle: bool,
    /// Transmissions of our SYN (or SYN-ACK) after which an unanswered handshake is abandoned:
    /// the connection closes when the retransmission timer expires after the last one (RFC
    /// 9293 §3.8.3, threshold R2 for SYNs, counted in transmissions). `None` (default): retry
    /// forever. ns-3's `ConnCount` is 6.
    pub syn_attempts: Option<u32>,
    /// Retransmission-timer expiries in a row, without new data acknowledged, after which the
    /// connection is dropped at the next expiry (RFC 9293 §3.8.3, threshold R2, counted in
    /// retransmissions). `None` (default): never. ns-3's `DataRetries` is 6.
    pub data_retries: Option<u32>,
    /// Retransmission timeout of the first SYN (or SYN-ACK), doubled at each retransmission,
    /// instead of the RTO. `None` (default): the RTO ([`TcpConfig::initial_rto`], RFC 6298
    /// §2.1). ns-3's `ConnTimeout` is 3 s.
    pub syn_rto: Option<SimDuration>,
    /// RFC 7323 timestamps: offer the TSopt on our SYN (or answer a SYN that offered it) and,
    /// when both SYNs carried it, send it on every segment (12 more header bytes, §3.2) and
    /// take an RTT sample from the echoed timestamp of every ACK of new data (RTTM, §4.1;
    /// the samples feed the RFC 6298 estimator, without Appendix G's per-window weighting, as
    /// ns-3 does). The clock ticks in milliseconds (§5.4 allows 1 ms to 1 s). A segment's
    /// payload is cut so that the segment still fits the path MTU. Not implemented: PAWS (§5).
    /// Default off; ns-3 has it on (`TcpSocketBase::Timestamp`), as has Linux.
    pub timestamps: bool,
    /// RFC 7323 §2 window scaling: offer the Window Scale option on our SYN (answer it on the
    /// SYN-ACK if the SYN offered it) with the smallest shift that lets the advertised window
    /// cover [`TcpConfig::recv_buffer_bytes`] (at most 14, §2.3); when both SYNs carried it,
    /// every later window field is shifted (both directions; a SYN's never is, §2.2), so a
    /// receive buffer above 65 535 bytes, up to 65 535·2^14, is usable. Default off: on, the
    /// SYNs grow by 4 bytes and a 64 KiB buffer advertises 65 536 instead of 65 535 bytes, which
    /// would change the results of existing configurations (Linux and ns-3 have it on).
    pub window_scaling: bool,
    /// RFC 2018: offer SACK-permitted on our SYN (answer it on the SYN-ACK if the SYN offered
    /// it); when both SYNs carried it, the receiver reports out-of-order data in SACK blocks
    /// (§4: the latest segment's block first, then the most recent others; 4 blocks, 3 with
    /// timestamps, fewer if the segment would exceed the MTU), and a sender using
    /// [`LossRecovery::Sack`] or [`CongestionAlgorithm::Cubic`] recovers with RFC 6675. Default
    /// off (on, the SYN grows by 4 bytes); [`LossRecovery::Sack`] offers it anyway.
    pub sack: bool,
    /// RFC 2883 D-SACK: with SACK in use, report a duplicate segment in the first SACK block
    /// of the ACK it causes. Default off.
    pub dsack: bool,
    /// RFC 3168 ECN: offer it on our SYN (ECE and CWR; answer with ECE on the SYN-ACK if the
    /// SYN offered it). When both ends did, new data segments are ECN-capable (ECT(0)), the
    /// receiver echoes a Congestion Experienced mark with ECE until the sender's CWR, and the
    /// sender reduces its window once per window of data as for a loss, without
    /// retransmitting. Default off.
    pub ecn: bool,
    /// Pace data segments, as Linux's `fq` does for a socket: `len / rate` apart, a send
    /// quantum back to back (1 segment below 1.2 Mbit/s, 2 below 24 Mbit/s, else 1 ms of
    /// data), with rate = max(cwnd, FlightSize) / SRTT · 2 in slow start below ssthresh/2,
    /// · 1.2 after (Linux `tcp_update_pacing_rate`). BBR paces at its own rate whatever this
    /// says. Default off.
    pub pacing: bool,
}

impl TcpConfig {
    /// The defaults of OMNeT++/INET 4's `Tcp` module (`Tcp.ned`): MSS 536 B, advertised
    /// window 14 MSS (`advertisedWindow`), every segment acknowledged (`delayedAcksEnabled`
    /// false), Nagle on, initial window one segment (`increasedIWEnabled` false: RFC 2001), no
    /// SACK, window scaling or timestamps; `TcpBaseAlg`'s initial RTO 3 s and minimum RTO 1 s.
    /// The rest as [`TcpConfig::default`] (INET's default algorithm, `TcpReno`, is the
    /// caller's choice of [`TcpConfig::recovery`]).
    pub fn inet() -> Self {
        const INET_MSS: u32 = 536;
        TcpConfig {
            mss_bytes: Some(INET_MSS),
            recv_buffer_bytes: 14 * INET_MSS,
            delayed_ack: None,
            nagle: true,
            initial_window_segments: Some(1),
            initial_rto: SimDuration::from_secs(3),
            ..TcpConfig::default()
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            recovery: LossRecovery::NewReno,
            congestion: CongestionAlgorithm::Aimd,
            mss_bytes: None,
            send_buffer_bytes: 128 * 1024,
            recv_buffer_bytes: 64 * 1024,
            initial_window_segments: None,
            initial_ssthresh_bytes: None,
            nagle: false,
            delayed_ack: Some(SimDuration::from_millis(200)),
            delayed_ack_segments: None,
            byte_counting: false,
            pacing: false,
            dupthresh: 3,
            initial_rto: SimDuration::from_secs(1),
            min_rto: SimDuration::from_secs(1),
            max_rto: SimDuration::from_secs(60),
            clock_granularity: SimDuration::from_millis(1),
            msl: SimDuration::from_secs(120),
            iss: 0,
            close_on_peer_fin: true,
            restart_after_idle: true,
            syn_attempts: None,
            data_retries: None,
            syn_rto: None,
            timestamps: false,
            window_scaling: false,
            sack: false,
            dsack: false,
            ecn: false,
        }
    }
}

/// TCP-specific counters, beyond [`TransportStats`](crate::TransportStats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpStats {
    /// Retransmission timer expiries that retransmitted something (RFC 6298 §5.4).
    pub timeouts: u64,
    /// Fast retransmits after `dupthresh` duplicate ACKs (RFC 5681 §3.2), or entries into
    /// SACK loss recovery (RFC 6675 §5 (4)).
    pub fast_retransmits: u64,
    /// Window reductions for an ECN-Echo (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// Partial ACKs handled in NewReno fast recovery (RFC 6582 §3.2), or cumulative ACKs
    /// below RecoveryPoint in SACK recovery (RFC 6675 §5 (B)).
    pub partial_acks: u64,
    /// Duplicate ACKs received (RFC 5681 §2).
    pub dup_acks: u64,
    /// Zero-window probes sent (RFC 9293 §3.8.6.1).
    pub window_probes: u64,
    /// Data segments received above `rcv_nxt` (kept for reassembly).
    pub out_of_order_segments: u64,
    /// Segments received entirely below `rcv_nxt` (duplicates, ignored).
    pub duplicate_segments: u64,
    /// RTT samples taken (RFC 6298 §3; none from retransmitted segments).
    pub rtt_samples: u64,
    /// Sum of the RTT samples, ns (mean RTT = `rtt_sum_ns / rtt_samples`).
    pub rtt_sum_ns: u64,
    /// The connection was abandoned after [`TcpConfig::syn_attempts`] or
    /// [`TcpConfig::data_retries`] (0 or 1).
    pub gave_up: u64,
}

impl TcpSocket {
    /// The per-ACK sample: `cwnd_bytes` (fast-recovery inflation included), `ssthresh_bytes`
    /// once set, `srtt_s` once measured (RFC 6298), the RTT sample counters, the pacing rate
    /// of a paced sender and BBR's state and estimates.
    pub fn ack_sample(&self) -> crate::AckSample {
        let bbr = self.bbr();
        crate::AckSample {
            acks: self.stats().acks_received,
            rtt_samples: self.rtt_samples(),
            rtt_sum_ns: self.rtt_sum().0,
            cwnd_bytes: Some(self.cwnd() as f64),
            ssthresh_bytes: self.ssthresh().filter(|&v| v < u64::MAX / 2).map(|v| v as f64),
            srtt_s: self.srtt().map(|r| r.as_secs_f64()),
            pacing_rate_bps: self.pacing_rate().map(|r| r * 8.0),
            btlbw_bps: bbr.map(|b| b.bw * 8.0),
            rtprop_s: bbr.and_then(|b| b.min_rtt).map(|r| r.as_secs_f64()),
            bbr_state: bbr.map(|b| f64::from(b.state)),
            ..crate::AckSample::default()
        }
    }
}
