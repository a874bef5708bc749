//! SCTP (RFC 9260) as a sans-IO state machine: one association, message-oriented, with
//! streams, ordered and unordered delivery, fragmentation and bundling, SACK-based loss
//! recovery and per-destination congestion control.
//!
//! # Read these first
//!
//! * RFC 9260, SCTP: packet format (§3), association states (§4), establishment with the state
//!   cookie (§5.1) and the handling of unexpected chunks (§5.2), DATA transfer (§6): the sender
//!   rules A–D (§6.1), acknowledgements and delayed SACK (§6.2), SACK processing (§6.2.1), RTO
//!   and T3-rtx (§6.3), streams and ordering (§6.5, §6.6), fragmentation (§6.9), bundling
//!   (§6.10); congestion control (§7.2: slow start §7.2.1, congestion avoidance §7.2.2, loss
//!   §7.2.3, fast retransmit and fast recovery §7.2.4); fault management (§8.1–§8.3, the
//!   verification tag §8.4–§8.5); graceful shutdown (§9.2); the protocol parameters (§16).
//! * RFC 4960, which RFC 9260 obsoletes, for the [`SctpConfig::rfc4960`] profile: the same rules
//!   counted in MTUs with an initial window of min(4·MTU, max(2·MTU, 4380)) and RTO.Initial 3 s.
//! * ns-2.35's `sctp/sctp.cc` (Agent/SCTP), for the [`SctpConfig::ns2`] profile.
//! * RFC 3758, PR-SCTP: the Forward-TSN-Supported parameter (§3.1) and its negotiation (§3.3),
//!   the FORWARD TSN chunk (§3.2), "abandoned" (§3.4), the sender's rules A1–A5, C1–C5 and F1–F5
//!   (§3.5), the receiver (§3.6), timed reliability (§4.1); RFC 7496 §3.1, the limited
//!   retransmissions policy.
//! * RFC 7829 §3, SCTP-PF, for [`SctpConfig::pf_max_retrans`]: the potentially-failed state of a
//!   multi-homed peer's destinations.
//!
//! # Shape
//!
//! [`SctpSocket`] offers the surface every tpsim transport has (see the crate docs), plus
//! [`SctpSocket::send_on`] to choose a message's stream and whether it is unordered, and
//! [`SctpSocket::send_pr`] to give it a PR-SCTP policy as well. Inputs are
//! `send`/`close`/`abort` (application), `on_segment` and `on_timeout` (network, timers);
//! outputs are polled: `poll_transmit` (one packet a call), `poll_event` (a
//! [`Delivered`](crate::TransportEvent::Delivered) per complete message, `Connected`, `Closed`),
//! `poll_timeout`.
//!
//! Every congestion variable (cwnd, ssthresh, partial_bytes_acked, flight size, RTO/SRTT/RTTVAR,
//! the error counter, Fast Recovery) lives in a per-destination [`Path`]. A socket told its
//! addresses ([`SctpSocket::set_addresses`]) is multi-homed (RFC 9260 §6.4): one path per peer
//! address, each [`Segment`](crate::Segment) naming the peer address it goes to or came from
//! (`addr`); see `assoc/multihome.rs`.
//!
//! Sizes: the PMDCS (RFC 9260 §1.3: the largest DATA chunk, its 16-byte header included, that
//! fits the path MTU) is MTU − 20 − 12 = 1468 bytes over IPv4; messages longer than PMDCS − 16
//! are fragmented. A packet holds at most one control chunk, one SACK and
//! [`MAX_DATA_CHUNKS`](tpsim_wire::sctp::MAX_DATA_CHUNKS) DATA chunks (tpsim's segments are
//! fixed-size values; see [`tpsim_wire::sctp`]), and a SACK at most
//! [`MAX_GAP_BLOCKS`](tpsim_wire::sctp::MAX_GAP_BLOCKS) Gap Ack Blocks (the lowest) and
//! [`MAX_DUP_TSNS`](tpsim_wire::sctp::MAX_DUP_TSNS) duplicate TSNs.
//!
//! # Sizes on the wire
//!
//! `ip_len` is 20 (IPv4) + 12 (common header) + the chunks, each padded to 4 bytes, under the
//! `standard` convention. Under `ns2` it is what ns-2.35's Agent/SCTP counts (`SendPacket()` in
//! `sctp.cc`: the chunks + `SCTP_HDR_SIZE` 12 + `ipHeaderSize_` 20): the same, except that
//! INIT and INIT ACK count 24 bytes (no State Cookie), COOKIE ECHO 4 and HEARTBEAT (ACK) 24
//! ([`ControlChunk::ns2_chunk_len`](tpsim_wire::sctp::ControlChunk::ns2_chunk_len)).
//!
//! # What `report()` gives
//!
//! Each end reports what it sent and what it received:
//!
//! * `stats`: `tx_segments` = packets carrying DATA, `retransmissions` = DATA chunks sent again,
//!   `ack_segments` = packets carrying a SACK and no DATA, `rx_segments` = packets received
//!   (handshake, heartbeat and shutdown packets count in [`SctpStats::control_packets`]);
//! * `rtt_samples`/`rtt_sum_ns` (§6.3.1, Karn), `timeouts` (T3-rtx expiries), `fast_retransmits`
//!   (fast retransmit events), `rto` (before back-off), `gave_up` (an error counter passed its
//!   limit), all of the primary path;
//! * `congestion`: `cwnd_bytes`, `ssthresh_bytes` (`None` while "arbitrarily high"), `srtt_s`;
//! * `rx_extra` (what this end received): `hol_blocking_mean_s` and `hol_blocking_p95_s` (how
//!   long ordered messages, complete, waited for earlier messages of their stream; unordered
//!   messages are not counted; `None` at an end that received nothing) and `streams_used`
//!   (streams on which messages were delivered to this end);
//! * `extra` (what this end sent): `fast_retransmit_chunks` (DATA chunks marked by fast
//!   retransmit) and `abandoned_messages` (messages this end gave up under a PR-SCTP policy; 0
//!   without PR-SCTP); a multi-homed end adds `failovers`, `failover_acked_at_s`, `pf_entries`
//!   (with [`SctpConfig::pf_max_retrans`] only) and `path<k>_data_bytes` (see
//!   [`SctpSocket::set_addresses`]).
//!
//! # Partial reliability (PR-SCTP, RFC 3758)
//!
//! With [`SctpConfig::pr_sctp`] an end announces the Forward-TSN-Supported parameter in its INIT
//! or INIT ACK; PR-SCTP is used only when both ends announce it (§3.3), otherwise every message
//! is fully reliable and no FORWARD TSN is ever sent. A message's [`PrPolicy`] comes from
//! [`SctpConfig::pr_policy`] or from [`SctpSocket::send_pr`]:
//!
//! * [`PrPolicy::Lifetime`] (timed reliability, RFC 3758 §4.1): no chunk of the message goes out
//!   at or after its creation time + the lifetime; a message not yet sent then is dropped
//!   without a TSN (TR3), one already sent is abandoned (TR4);
//! * [`PrPolicy::Retransmissions`] (RFC 7496 §3.1): abandoned when a chunk of it would be
//!   retransmitted more than n times (0: never retransmitted).
//!
//! The policy is checked whenever a chunk would go out (first transmission, retransmission) and
//! when T3-rtx or fast retransmit marks it (whose congestion response stays, F5). All fragments
//! of a message are abandoned together (A3); fragments not yet sent get their TSNs then, so that
//! the FORWARD TSN covers the whole message. Abandoned chunks leave the flight size without
//! crediting cwnd (A2), the
//! Advanced.Peer.Ack.Point passes them (C1, C2), and a FORWARD TSN with the highest SSN skipped
//! per stream (C4, at most [`MAX_FWD_TSN_STREAMS`](tpsim_wire::sctp::MAX_FWD_TSN_STREAMS)
//! streams; the point stops before a message on a further stream) goes out at once, bundled
//! ahead of DATA, with T3-rtx running (C5). It is sent again when T3-rtx expires (A5; an expiry
//! that guards only a FORWARD TSN is a timeout like any other) and on a SACK still below the
//! point (C3), but not twice with the same New Cumulative TSN within one SRTT. The receiver (§3.6) moves its Cumulative TSN, drops fragments of messages that can no
//! longer complete, delivers the messages of a stream up to the SSN skipped and then those that
//! follow in order, and SACKs at once. A message is thus delivered whole exactly once or not at
//! all; the sender may count as abandoned a message that did arrive whole (its SACK was lost).
//!
//! # Not implemented
//!
//! PMTU discovery, the extensions I-DATA, stream reset, ECN, ASCONF, RFC 7496's priority
//! policy, the ERROR that a FORWARD TSN deserves when this end did not announce PR-SCTP (RFC
//! 3758 §3.3.1: it is ignored), PR-SCTP's notifications to the application (an abandoned
//! message is only counted), RFC 7829's dormant state and Primary Path Switchover, association
//! restart and the collision cases of §5.2 (an unexpected INIT is ignored), the Cookie
//! Preservative, and SHUTDOWN chunks bundled with DATA (SHUTDOWN goes out once everything is
//! acknowledged). The HEARTBEAT jitter draws from a generator seeded by the verification tag,
//! so runs repeat.

mod assoc;
mod packet;
pub mod path;
pub mod recv;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod conformance_mh;
#[cfg(test)]
mod conformance_pf;
#[cfg(test)]
mod conformance_pr;
#[cfg(test)]
mod pair_tests;
#[cfg(test)]
mod pr_pair_tests;
#[cfg(test)]
mod tests;

pub use assoc::SctpSocket;
pub use packet::SctpBox;
pub use path::{Path, RtoEstimator};

use std::fmt;
use tpsim_core::SimDuration;

/// Association states (RFC 9260 §4); `Display` prints the RFC's names ("COOKIE-WAIT").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// No association: before an active open, while a passive end waits for an INIT, and at
    /// the end.
    Closed,
    /// INIT sent, waiting for the INIT ACK.
    CookieWait,
    /// COOKIE ECHO sent, waiting for the COOKIE ACK.
    CookieEchoed,
    /// Open.
    Established,
    /// The application closed; SHUTDOWN follows once all data is acknowledged.
    ShutdownPending,
    /// SHUTDOWN sent.
    ShutdownSent,
    /// SHUTDOWN received; SHUTDOWN ACK follows once all our data is acknowledged.
    ShutdownReceived,
    /// SHUTDOWN ACK sent.
    ShutdownAckSent,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::CookieWait => "COOKIE-WAIT",
            State::CookieEchoed => "COOKIE-ECHOED",
            State::Established => "ESTABLISHED",
            State::ShutdownPending => "SHUTDOWN-PENDING",
            State::ShutdownSent => "SHUTDOWN-SENT",
            State::ShutdownReceived => "SHUTDOWN-RECEIVED",
            State::ShutdownAckSent => "SHUTDOWN-ACK-SENT",
        })
    }
}

/// Which set of defaults an [`SctpConfig`] starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SctpProfile {
    /// RFC 9260 §16's protocol parameters, windows counted in PMDCS.
    #[default]
    Rfc9260,
    /// RFC 4960: RTO.Initial 3 s, windows counted in MTUs, initial cwnd
    /// min(4·MTU, max(2·MTU, 4380)): what the public SCTP conformance suite checks.
    Rfc4960,
    /// ns-2.35's Agent/SCTP defaults and send rule.
    Ns2,
}

/// The unit of RFC 9260 §7.2's window formulas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CwndUnit {
    /// PMDCS: MTU − IP header − common header (RFC 9260).
    Pmdcs,
    /// The path MTU (RFC 4960).
    Mtu,
}

/// SCTP parameters of one association. `Default` is [`SctpConfig::rfc9260`]; every field says
/// its value under the three profiles as "RFC 9260 / RFC 4960 / ns-2".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SctpConfig {
    /// The profile these values came from (informational).
    pub profile: SctpProfile,
    /// RTO.Initial (RFC 9260 §16): 1 s / 3 s / 3 s (`initialRto_`).
    pub rto_initial: SimDuration,
    /// RTO.Min: 1 s / 1 s / 1 s (`minRto_`).
    pub rto_min: SimDuration,
    /// RTO.Max: 60 s / 60 s / 60 s (`maxRto_`).
    pub rto_max: SimDuration,
    /// RTO.Alpha: 1/8.
    pub rto_alpha: f64,
    /// RTO.Beta: 1/4.
    pub rto_beta: f64,
    /// Clock granularity G, the floor of RTTVAR (RFC 9260 §6.3.1 C3): 1 ms.
    pub clock_granularity: SimDuration,
    /// Max.Burst (RFC 9260 §6.1 D): new-data packets per send opportunity; `None`: no limit.
    /// 4 / 4 / 4 (`useMaxBurst_ 1`, `MAX_BURST` 4).
    pub max_burst: Option<u32>,
    /// Delayed SACK timer (RFC 9260 §6.2: at most 500 ms); `None`: SACK every packet with DATA.
    /// 200 ms / 200 ms / 200 ms (`sackDelay_`).
    pub sack_delay: Option<SimDuration>,
    /// With delayed SACKs: SACK at least every this many packets with DATA (RFC 9260 §6.2,
    /// "every second packet"): 2.
    pub sack_every: u32,
    /// Path.Max.Retrans (RFC 9260 §8.2): 5 / 5 / 5 (`pathMaxRetrans_`).
    pub path_max_retrans: u32,
    /// Association.Max.Retrans (RFC 9260 §8.1): 10 / 10 / 10 (`associationMaxRetrans_`).
    pub assoc_max_retrans: u32,
    /// Max.Init.Retransmits (RFC 9260 §5.1): 8.
    pub max_init_retransmits: u32,
    /// HB.interval (RFC 9260 §8.3); `None`: no heartbeats. 30 s / 30 s / 30 s
    /// (`heartbeatInterval_`).
    pub hb_interval: Option<SimDuration>,
    /// Whether the HEARTBEAT period's RTO is jittered by ±50 % (RFC 9260 §8.3), else the period
    /// is exactly HB.interval + RTO: true / true / false.
    pub hb_jitter: bool,
    /// Valid.Cookie.Life (RFC 9260 §16): 60 s.
    pub valid_cookie_life: SimDuration,
    /// Outbound streams requested in INIT/INIT ACK (the OS field): 1 (ns-2 `numOutStreams_`).
    pub streams: u16,
    /// Inbound streams accepted (the MIS field): 65535.
    pub max_inbound_streams: u16,
    /// Receive buffer, bytes: the a_rwnd of INIT/INIT ACK and the bound of the receive window
    /// (RFC 9260 §6.2; at least 1500): 65536 (ns-2 `initialRwnd_`).
    pub recv_buffer_bytes: u32,
    /// Send buffer, bytes: user data accepted and not yet acknowledged: 131072.
    pub send_buffer_bytes: u32,
    /// Initial ssthresh, bytes (RFC 9260 §7.2.1: "arbitrarily high"); `None`: the peer's
    /// a_rwnd. None / None / 65536 (`initialSsthresh_`).
    pub initial_ssthresh_bytes: Option<u64>,
    /// The unit of the window formulas: PMDCS / MTU / PMDCS (ns-2's `uiMaxDataSize`, MTU − 32).
    pub cwnd_unit: CwndUnit,
    /// The constant of the initial window min(4·unit, max(2·unit, this)): 4404 (RFC 9260,
    /// IPv4) / 4380 / 4380 (`sctp.cc` `Reset()`).
    pub initial_cwnd_floor_bytes: u32,
    /// L of RFC 9260 §7.2.1: slow start grows by at most L·unit per SACK: 1.
    pub slow_start_l: u32,
    /// Whether cwnd (slow start) and partial_bytes_acked (congestion avoidance) grow only on a
    /// SACK that advances the Cumulative TSN Ack Point, as RFC 4960 §7.2.1/§7.2.2 (and RFC
    /// 2960, of ns-2.35's time) say; RFC 9260 §7.2.1/§7.2.2 dropped the condition (a SACK
    /// acknowledging new data by Gap Ack Blocks counts): false / true / true.
    pub growth_needs_cum_advance: bool,
    /// Whether a packet may carry several DATA chunks (RFC 9260 §6.10: bundling is a "MAY",
    /// up to [`MAX_DATA_CHUNKS`](tpsim_wire::sctp::MAX_DATA_CHUNKS) here) or one at most
    /// (control chunks such as a SACK still ride with it): true in every profile.
    pub bundling: bool,
    /// Miss indications that trigger fast retransmit (RFC 9260 §7.2.4): 3.
    pub fast_rtx_threshold: u32,
    /// Whether the flight size, the bytes acknowledged and partial_bytes_acked count a DATA
    /// chunk with its 16-byte header (as the PMDCS unit does) or its user data only: true /
    /// false / true (ns-2 counts `sHdr.usLength`).
    pub flight_counts_headers: bool,
    /// ns-2.35's send rule (`sctp.cc` `recv()`/`sendmsg()`): new DATA goes out only right after
    /// a SACK (or the COOKIE ACK) is processed; what the application writes in between waits for
    /// the next SACK, so that many chunks are bundled per packet. ns-2 would hold a write made
    /// while nothing is outstanding until a SACK that never comes; tpsim sends that one at once.
    /// false / false / true.
    pub ns2_send_rule: bool,
    /// With [`ns2_send_rule`](Self::ns2_send_rule): ns-2.35's stall as it is, a write made
    /// while nothing is outstanding waits for a SACK too (and so forever, `sctp.cc`
    /// `sendmsg()`), the artefact the `sctp-stall` quirk reproduces: false in every profile.
    pub ns2_stall: bool,
    /// ns-2.35 decays an idle cwnd only while it exceeds `initialCwnd_` units
    /// (`CwndDegradeTimerExpiration`): None / None / Some(2).
    pub idle_decay_above_units: Option<u32>,
    /// Our Initiate Tag (and Initial TSN); `None`: derived from the ports and the open side.
    pub initiate_tag: Option<u32>,
    /// Key of the State Cookie's MAC.
    pub cookie_secret: u32,
    /// Announce PR-SCTP (the Forward-TSN-Supported parameter in INIT and INIT ACK, RFC 3758
    /// §3.1); it is used only if the peer announces it too (§3.3): false in every profile.
    pub pr_sctp: bool,
    /// The PR-SCTP policy of messages sent with [`SctpSocket::send`] and
    /// [`SctpSocket::send_on`]: [`PrPolicy::Reliable`] in every profile.
    pub pr_policy: PrPolicy,
    /// The potentially-failed state of RFC 7829 (SCTP-PF) with this PotentiallyFailed.Max.Retrans
    /// (PFMR; RFC 7829 suggests 0): a confirmed, active destination of a multi-homed peer whose
    /// error counter exceeds PFMR, and not Path.Max.Retrans, is potentially failed (see
    /// `assoc/multihome.rs`); a PFMR at or above Path.Max.Retrans never marks one. `None`: RFC
    /// 9260 alone, in every profile.
    pub pf_max_retrans: Option<u32>,
}

/// How persistently a message is sent under PR-SCTP. Without PR-SCTP negotiated (see
/// [`SctpConfig::pr_sctp`]) every message is [`Reliable`](PrPolicy::Reliable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PrPolicy {
    /// Fully reliable (RFC 3758 §4.1 TR1).
    #[default]
    Reliable,
    /// Timed reliability (RFC 3758 §4.1): abandoned once the message's creation time plus this
    /// lifetime is reached; no chunk of it is transmitted or retransmitted from then on.
    Lifetime(SimDuration),
    /// Limited retransmissions (RFC 7496 §3.1): abandoned when a chunk of it would be
    /// retransmitted (by T3-rtx or fast retransmit) more than this many times.
    Retransmissions(u32),
}

impl Default for SctpConfig {
    fn default() -> Self {
        SctpConfig::rfc9260()
    }
}

impl SctpConfig {
    /// RFC 9260 §16's protocol parameters.
    pub fn rfc9260() -> SctpConfig {
        SctpConfig {
            profile: SctpProfile::Rfc9260,
            rto_initial: SimDuration::from_secs(1),
            rto_min: SimDuration::from_secs(1),
            rto_max: SimDuration::from_secs(60),
            rto_alpha: 0.125,
            rto_beta: 0.25,
            clock_granularity: SimDuration::from_millis(1),
            max_burst: Some(4),
            sack_delay: Some(SimDuration::from_millis(200)),
            sack_every: 2,
            path_max_retrans: 5,
            assoc_max_retrans: 10,
            max_init_retransmits: 8,
            hb_interval: Some(SimDuration::from_secs(30)),
            hb_jitter: true,
            valid_cookie_life: SimDuration::from_secs(60),
            streams: 1,
            max_inbound_streams: u16::MAX,
            recv_buffer_bytes: 65536,
            send_buffer_bytes: 131072,
            initial_ssthresh_bytes: None,
            cwnd_unit: CwndUnit::Pmdcs,
            initial_cwnd_floor_bytes: 4404,
            slow_start_l: 1,
            bundling: true,
            growth_needs_cum_advance: false,
            fast_rtx_threshold: 3,
            flight_counts_headers: true,
            ns2_send_rule: false,
            ns2_stall: false,
            idle_decay_above_units: None,
            initiate_tag: None,
            cookie_secret: 0x5c7b_a11d,
            pr_sctp: false,
            pr_policy: PrPolicy::Reliable,
            pf_max_retrans: None,
        }
    }

    /// RFC 4960's values where they differ from RFC 9260's (§15 and §7.2 of RFC 4960).
    pub fn rfc4960() -> SctpConfig {
        SctpConfig {
            profile: SctpProfile::Rfc4960,
            rto_initial: SimDuration::from_secs(3),
            cwnd_unit: CwndUnit::Mtu,
            initial_cwnd_floor_bytes: 4380,
            flight_counts_headers: false,
            growth_needs_cum_advance: true,
            ..SctpConfig::rfc9260()
        }
    }

    /// ns-2.35's Agent/SCTP (`tcl/lib/ns-default.tcl`, `sctp/sctp.cc`): mtu_ 1500,
    /// dataChunkSize_ 1468, initialSsthresh_ 65536, initialRwnd_ 65536, initialRto_ 3 s,
    /// minRto_ 1 s, maxRto_ 60 s, associationMaxRetrans_ 10, pathMaxRetrans_ 5,
    /// heartbeatInterval_ 30 s, useMaxBurst_ 1, useDelayedSacks_ 1, sackDelay_ 0.2 s, and its
    /// send rule ([`SctpConfig::ns2_send_rule`]). `initialCwnd_` (2) does not set the initial
    /// window: `Reset()` sets min(4·1468, max(4380, 2·1468)) = 4380 bytes, and `initialCwnd_`
    /// only bounds the idle decay.
    pub fn ns2() -> SctpConfig {
        SctpConfig {
            profile: SctpProfile::Ns2,
            rto_initial: SimDuration::from_secs(3),
            initial_ssthresh_bytes: Some(65536),
            cwnd_unit: CwndUnit::Pmdcs,
            initial_cwnd_floor_bytes: 4380,
            flight_counts_headers: true,
            ns2_send_rule: true,
            hb_jitter: false,
            idle_decay_above_units: Some(2),
            growth_needs_cum_advance: true,
            ..SctpConfig::rfc9260()
        }
    }

    /// A destination's RTO estimator before any measurement: RTO.Initial, with these RTO.Min,
    /// RTO.Max, RTO.Alpha, RTO.Beta and clock granularity (RFC 9260 §6.3.1).
    pub fn rto_estimator(&self) -> RtoEstimator {
        RtoEstimator::new(
            self.rto_initial,
            self.rto_min,
            self.rto_max,
            self.rto_alpha,
            self.rto_beta,
            self.clock_granularity,
        )
    }

    /// The profile's configuration.
    pub fn for_profile(p: SctpProfile) -> SctpConfig {
        match p {
            SctpProfile::Rfc9260 => SctpConfig::rfc9260(),
            SctpProfile::Rfc4960 => SctpConfig::rfc4960(),
            SctpProfile::Ns2 => SctpConfig::ns2(),
        }
    }
}

/// SCTP-specific counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SctpStats {
    /// T3-rtx expiries that retransmitted something (RFC 9260 §6.3.3).
    pub timeouts: u64,
    /// Fast retransmit events (RFC 9260 §7.2.4: a third miss indication).
    pub fast_retransmits: u64,
    /// DATA chunks marked for fast retransmission.
    pub fast_retransmit_chunks: u64,
    /// DATA chunks sent beyond the peer's rwnd under RFC 9260 §6.1 A (zero-window probes).
    pub window_probes: u64,
    /// Retransmissions of INIT or COOKIE ECHO (T1 expiries).
    pub init_retransmits: u64,
    /// HEARTBEATs sent.
    pub heartbeats: u64,
    /// Packets sent without DATA nor SACK (handshake, heartbeat, shutdown, abort, error).
    pub control_packets: u64,
    /// Duplicate TSNs received.
    pub duplicate_tsns: u64,
    /// The association was abandoned: an error counter passed its limit (0 or 1).
    pub gave_up: u64,
    /// The peer aborted the association (0 or 1).
    pub peer_aborted: u64,
    /// Messages abandoned under a PR-SCTP policy (RFC 3758 §3.4), before or after their first
    /// transmission.
    pub abandoned_messages: u64,
    /// FORWARD TSN chunks sent (RFC 3758 §3.2).
    pub forward_tsns: u64,
    /// FORWARD TSN chunks received that moved the Cumulative TSN (RFC 3758 §3.6).
    pub forward_tsns_received: u64,
    /// Times a destination entered the potentially-failed state (RFC 7829 §3; 0 without
    /// [`SctpConfig::pf_max_retrans`]).
    pub pf_entries: u64,
}
