//! The per-transport keys of a flow: its `tfrc`, `dccp`, `sctp` and `tcp` tables.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// TFRC parameters of a flow (RFC 5348). Absent keys take the profile's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TfrcOptions {
    /// "rfc5348" (default) or "ns2" (ns-2.35's Agent/TFRC and TFRCSink: a loss after one
    /// later packet, oscillation prevention, an initial rate of 300 B/s; docs/models.md).
    #[serde(default)]
    pub profile: Option<TfrcProfileName>,
    /// Send queue, messages: a message that finds it full is dropped at the sender (counted
    /// in `send_queue_drops`). Default unbounded (as ns-2).
    #[serde(default)]
    pub send_queue: Option<u32>,
    /// The segment size s of the throughput equation. Default: the mean size of the
    /// messages sent.
    #[serde(default)]
    pub segment_size: Option<Bytes>,
}

/// A TFRC profile's name in scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TfrcProfileName {
    /// RFC 5348's parameters.
    #[default]
    Rfc5348,
    /// ns-2.35's Agent/TFRC and Agent/TFRCSink.
    Ns2,
}

/// DCCP parameters of a flow (RFC 4340, 4341, 4342). Absent keys take the profile's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DccpOptions {
    /// "rfc" (default) or "ns2" (ns-2.35's Agent/DCCP where it differs: Request timeout 3 s,
    /// CCID 2 initial cwnd 3 packets, CCID 3 segment size 500 B and oscillation prevention).
    #[serde(default)]
    pub profile: Option<DccpProfileName>,
    /// Send queue, messages: a message that finds it full is dropped at the sender (counted
    /// in `send_queue_drops`). Default 1000 (ns-2's `sb_size_`; the RFCs set none).
    #[serde(default)]
    pub send_queue: Option<u32>,
    /// Initial Ack Ratio (RFC 4340 §11.3). Default 2.
    #[serde(default)]
    pub ack_ratio: Option<u16>,
    /// Sequence Window, packets (RFC 4340 §7.5.2). Default 100.
    #[serde(default)]
    pub sequence_window: Option<u32>,
    /// CCID 3: the segment size s of the throughput equation. Default: the mean size of the
    /// messages sent (ns2 profile: 500 B, ns-2's `s_s_`).
    #[serde(default)]
    pub segment_size: Option<Bytes>,
}

/// A DCCP profile's name in scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DccpProfileName {
    /// The RFCs' parameters.
    #[default]
    Rfc,
    /// ns-2.35's Agent/DCCP.
    Ns2,
}

/// SCTP parameters of a flow (RFC 9260). Absent keys take the profile's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SctpOptions {
    /// Which defaults the other keys start from: "rfc9260" (default; RFC 9260 §16, windows
    /// counted in PMDCS, initial cwnd min(4·PMDCS, max(2·PMDCS, 4404 B))), "rfc4960" (RFC
    /// 4960: RTO.Initial 3 s, windows in MTUs, initial cwnd 4380 B, as QualNet and the public
    /// conformance suite) or "ns2" (ns-2.35's Agent/SCTP defaults and its send rule:
    /// docs/models.md).
    #[serde(default)]
    pub profile: Option<SctpProfileName>,
    /// Messages of this flow are sent unordered (RFC 9260 §6.6, the U bit). Default false.
    #[serde(default)]
    pub unordered: Option<bool>,
    /// RTO.Initial. Default "1s" (rfc4960, ns2: "3s").
    #[serde(default)]
    pub rto_initial: Option<Duration>,
    /// RTO.Min. Default "1s".
    #[serde(default)]
    pub rto_min: Option<Duration>,
    /// RTO.Max. Default "60s".
    #[serde(default)]
    pub rto_max: Option<Duration>,
    /// Max.Burst: new-data packets per send opportunity (RFC 9260 §6.1 D); 0 for no limit.
    /// Default 4.
    #[serde(default)]
    pub max_burst: Option<u32>,
    /// Delayed SACK timer (RFC 9260 §6.2, at most "500ms"); "0s" sends a SACK for every
    /// packet with DATA. Default "200ms".
    #[serde(default)]
    pub sack_delay: Option<Duration>,
    /// HB.interval (RFC 9260 §8.3); "0s" sends no HEARTBEAT. Default "30s".
    #[serde(default)]
    pub hb_interval: Option<Duration>,
    /// Path.Max.Retrans (RFC 9260 §8.2). Default 5.
    #[serde(default)]
    pub path_max_retrans: Option<u32>,
    /// Association.Max.Retrans (RFC 9260 §8.1): consecutive retransmission timeouts after
    /// which the association is abandoned. Default 10.
    #[serde(default)]
    pub assoc_max_retrans: Option<u32>,
    /// Max.Init.Retransmits (RFC 9260 §5.1). Default 8.
    #[serde(default)]
    pub max_init_retransmits: Option<u32>,
    /// Receive buffer, the a_rwnd advertised in INIT (RFC 9260 §6.2), at least "1500B".
    /// Default "64KiB".
    #[serde(default)]
    pub receive_buffer: Option<Bytes>,
    /// Send buffer: user data accepted and not yet acknowledged. Default "128KiB".
    #[serde(default)]
    pub send_buffer: Option<Bytes>,
    /// Multi-homing (RFC 9260 §6.4): both ends use every address of their node (its link
    /// interfaces in `links` order, then its radio), announced in INIT and INIT ACK, each peer
    /// address reached over its own static route. Default false (one address each).
    #[serde(default)]
    pub multihoming: Option<bool>,
    /// With `multihoming`: which of the destination node's addresses (0 = its first) the source
    /// opens the association to, its primary path. Default 0.
    #[serde(default)]
    pub primary: Option<u32>,
    /// PR-SCTP timed reliability (RFC 3758 §4.1): a message not delivered within this time of
    /// its creation is abandoned (no chunk of it is sent after that). Turns PR-SCTP on at both
    /// ends (the Forward-TSN-Supported parameter). Default: fully reliable.
    #[serde(default)]
    pub lifetime: Option<Duration>,
    /// PR-SCTP limited retransmissions (RFC 7496 §3.1): a message is abandoned when a chunk of it
    /// would be retransmitted more than this many times (0: never retransmitted). Turns PR-SCTP
    /// on at both ends. Default: fully reliable.
    #[serde(default)]
    pub max_retransmissions: Option<u32>,
    /// With `multihoming`: the potentially-failed state of RFC 7829 (SCTP-PF) at both ends: a
    /// peer address whose error counter exceeds `pf_max_retrans` gets no more DATA while another
    /// address is active and is heartbeated once per RTO until it answers. Default false.
    #[serde(default)]
    pub potentially_failed: Option<bool>,
    /// With `potentially_failed`: PotentiallyFailed.Max.Retrans (PFMR, RFC 7829), below
    /// `path_max_retrans`. Default 0.
    #[serde(default)]
    pub pf_max_retrans: Option<u32>,
}

impl SctpOptions {
    /// PotentiallyFailed.Max.Retrans when `potentially_failed` is on (the transport's
    /// `SctpConfig::pf_max_retrans`), else `None`.
    pub fn pf_max_retrans_if_on(&self) -> Option<u32> {
        (self.potentially_failed == Some(true)).then(|| self.pf_max_retrans.unwrap_or(0))
    }
}

/// An SCTP profile's name in scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SctpProfileName {
    /// RFC 9260's parameters.
    #[default]
    Rfc9260,
    /// RFC 4960's parameters.
    Rfc4960,
    /// ns-2.35's Agent/SCTP.
    Ns2,
}

/// TCP parameters of a flow. Absent keys take the defaults documented here (RFC values, not
/// Linux's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    /// "modern" (default): tpsim's TCP (RFC 9293 byte stream with a handshake, RFC 5681/6298/
    /// 6582). "ns2": ns-2.35's one-way agents as its wireless studies used them (`Agent/TCP`,
    /// `/Reno`, `/Newreno` with `Agent/TCPSink`): every application write becomes whole packets
    /// of `packet_size` bytes plus 40 bytes of headers, a 40-byte SYN first, windows in
    /// packets, ns-2's RTT estimator with a 10 ms tick and 0.2 s minimum RTO (docs/models.md).
    /// "tcp" and "tcp-newreno" are Agent/TCP/Newreno there, "tcp-reno" Agent/TCP/Reno,
    /// "tcp-tahoe" Agent/TCP, "tcp-sack" Agent/TCP/Sack1 with Agent/TCPSink/Sack1. With "ns2" only `packet_size`, `window`, `initial_window`,
    /// `delayed_ack` and `min_rto` apply.
    #[serde(default)]
    pub preset: Option<TcpPreset>,
    /// ns2 preset: the agent's `packetSize_`, the bytes of data in every packet. Default
    /// "1000B".
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// ns2 preset: the agent's `window_`, the largest window in packets. Default 20.
    #[serde(default)]
    pub window: Option<u32>,
    /// Largest segment payload (SMSS), e.g. "1000B". Default: path MTU − 40 bytes.
    #[serde(default)]
    pub mss: Option<Bytes>,
    /// Send buffer. Default "128KiB".
    #[serde(default)]
    pub send_buffer: Option<Bytes>,
    /// Receive buffer, which bounds the advertised window rwnd (at most 65535 B without
    /// window scaling). Default "64KiB".
    #[serde(default)]
    pub receive_window: Option<Bytes>,
    /// Initial window, segments. Default: RFC 5681 §3.1 (2–4 segments by SMSS); ns2 preset:
    /// `windowInit_`.
    #[serde(default)]
    pub initial_window: Option<u32>,
    /// Delayed-ACK timeout; "0s" acknowledges every segment. Default "200ms" (RFC 5681 §4.2);
    /// ns2 preset: none (`Agent/TCPSink`), a duration makes the sink `Agent/TCPSink/DelAck`
    /// with that `interval_` (ns-2's is 100 ms).
    #[serde(default)]
    pub delayed_ack: Option<Duration>,
    /// With delayed ACKs: acknowledge at once after this many in-order data segments,
    /// whatever their size, instead of after two full-sized segments' worth of bytes (RFC
    /// 5681 §4.2). Default: the byte rule. ns-3's `DelAckCount` is 2.
    #[serde(default)]
    pub delayed_ack_segments: Option<u32>,
    /// Minimum RTO. Default "1s" (RFC 6298 §2.4).
    #[serde(default)]
    pub min_rto: Option<Duration>,
    /// Nagle's algorithm. Default false.
    #[serde(default)]
    pub nagle: Option<bool>,
    /// SYN transmissions after which an unanswered connection attempt is abandoned (RFC 9293
    /// §3.8.3, R2). Default: retry forever. ns-3's `ConnCount` is 6.
    #[serde(default)]
    pub syn_attempts: Option<u32>,
    /// Retransmission timeouts in a row after which the connection is dropped at the next
    /// (RFC 9293 §3.8.3, R2). Default: never. ns-3's `DataRetries` is 6.
    #[serde(default)]
    pub data_retries: Option<u32>,
    /// Timeout of the first SYN, doubled per retransmission. Default: the RTO (1 s, RFC 6298
    /// §2.1). ns-3's `ConnTimeout` is 3 s.
    #[serde(default)]
    pub syn_rto: Option<Duration>,
    /// RFC 7323 window scaling (§2): offered on the SYN, used when both ends offer it; then a
    /// `receive_window` above 64 KiB (up to 1 GiB) is advertised. Default false.
    #[serde(default)]
    pub window_scaling: Option<bool>,
    /// SACK (RFC 2018): SACK-permitted offered on the SYN, SACK blocks sent and, for a sender
    /// whose variant recovers with SACK ("tcp-sack", "tcp-cubic"), RFC 6675 loss recovery.
    /// Default false ("tcp-sack" offers it anyway).
    #[serde(default)]
    pub sack: Option<bool>,
    /// D-SACK (RFC 2883): report duplicate segments in the first SACK block. Default false.
    #[serde(default)]
    pub dsack: Option<bool>,
    /// RFC 7323 timestamps: offered on the SYN, used when both ends offer them (12 more
    /// header bytes per segment, RTT sampled from every ACK of new data). Default false;
    /// ns-3 and Linux have them on.
    #[serde(default)]
    pub timestamps: Option<bool>,
}

/// Which TCP model a flow runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TcpPreset {
    /// tpsim's TCP (RFCs).
    #[default]
    Modern,
    /// ns-2.35's one-way TCP agents.
    Ns2,
}
