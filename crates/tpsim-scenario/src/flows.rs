//! Traffic: the `[[flows]]` tables, their transport and their application.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// Transport protocols. Only those marked implemented can run today; the others are
/// accepted by the schema so that scenarios and sweeps can name them, and refused by
/// validation with a clear message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// UDP (RFC 768). Implemented.
    Udp,
    /// TCP with NewReno loss recovery (RFC 6582), the default TCP. Implemented.
    Tcp,
    /// TCP NewReno (RFC 6582), same as "tcp". Implemented.
    TcpNewreno,
    /// TCP Reno (RFC 5681 fast retransmit and fast recovery). Implemented.
    TcpReno,
    /// TCP Tahoe (fast retransmit, no fast recovery). Implemented.
    TcpTahoe,
    /// TCP with SACK (RFC 2018) and RFC 6675 loss recovery, NewReno's window rules.
    /// Implemented.
    TcpSack,
    /// TCP CUBIC (RFC 9438), with SACK recovery when both ends negotiate SACK (`tcp.sack`).
    /// Implemented.
    TcpCubic,
    /// SCTP (RFC 9260), one association per flow. Implemented.
    Sctp,
    /// TFRC (RFC 5348) over UDP, message-preserving and unreliable. Implemented.
    Tfrc,
    /// DCCP (RFC 4340) with CCID 2 (RFC 4341, TCP-like), the default CCID; same as
    /// "dccp-ccid2". Implemented.
    Dccp,
    /// DCCP with CCID 2 (RFC 4341). Implemented.
    DccpCcid2,
    /// DCCP with CCID 3 (RFC 4342, TFRC). Implemented.
    DccpCcid3,
}

impl Transport {
    /// The name used in scenarios and result tables.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
            Transport::TcpNewreno => "tcp-newreno",
            Transport::TcpReno => "tcp-reno",
            Transport::TcpTahoe => "tcp-tahoe",
            Transport::TcpSack => "tcp-sack",
            Transport::TcpCubic => "tcp-cubic",
            Transport::Sctp => "sctp",
            Transport::Tfrc => "tfrc",
            Transport::Dccp => "dccp",
            Transport::DccpCcid2 => "dccp-ccid2",
            Transport::DccpCcid3 => "dccp-ccid3",
        }
    }
    /// Whether it is one of the DCCP variants.
    pub fn is_dccp(self) -> bool {
        matches!(self, Transport::Dccp | Transport::DccpCcid2 | Transport::DccpCcid3)
    }
    /// Whether it is one of the TCP variants.
    pub fn is_tcp(self) -> bool {
        matches!(
            self,
            Transport::Tcp
                | Transport::TcpNewreno
                | Transport::TcpReno
                | Transport::TcpTahoe
                | Transport::TcpSack
                | Transport::TcpCubic
        )
    }
}

/// One flow: a transport association between two nodes and the application driving it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Sending node index.
    pub src: u32,
    /// Receiving node index (for "voip", the other party, which sends back too).
    pub dst: u32,
    /// Transport protocol.
    pub transport: Transport,
    /// The application.
    pub app: App,
    /// TCP parameters, used when the transport is a TCP (ignored otherwise, so that a sweep
    /// over `transport` can keep them); every key optional.
    #[serde(default)]
    pub tcp: Option<TcpOptions>,
    /// SCTP parameters, used when the transport is "sctp" (ignored otherwise, as `tcp`).
    #[serde(default)]
    pub sctp: Option<SctpOptions>,
    /// TFRC parameters, used when the transport is "tfrc" (ignored otherwise).
    #[serde(default)]
    pub tfrc: Option<TfrcOptions>,
    /// DCCP parameters, used when the transport is a DCCP (ignored otherwise).
    #[serde(default)]
    pub dccp: Option<DccpOptions>,
}

/// Application kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// Constant bit rate: `size` bytes every `interval` (or at `rate`), src → dst.
    Cbr,
    /// Two-way CBR ("VoIP-like"): the same stream in both directions of the flow.
    Voip,
    /// Bulk transfer of `bytes` (or unlimited), as fast as the transport allows.
    Bulk,
}

/// Inter-arrival process of a CBR application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exactly `interval` apart.
    #[default]
    Periodic,
    /// Exponential inter-arrival times of mean `interval` (a Poisson process).
    Poisson,
}

/// An application. Which keys apply depends on `kind` (validation says which are missing or
/// out of place).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct App {
    /// "cbr", "voip" or "bulk".
    pub kind: AppKind,
    /// Message size (cbr, voip; under `sizes = "ns2"` the IP packet size), or the size of each
    /// write (bulk, default "1000B").
    #[serde(default)]
    pub size: Option<Bytes>,
    /// Time between messages (cbr, voip). Give `interval` or `rate`, not both.
    #[serde(default)]
    pub interval: Option<Duration>,
    /// Sending rate (cbr, voip): interval = size · 8 / rate.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Inter-arrival process (cbr). Default "periodic".
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Periodic cbr: each interval is drawn uniformly in interval × [1 − jitter, 1 + jitter]
    /// (ns-2's CBR `random_ 1` is jitter = 0.5). Default 0.
    #[serde(default)]
    pub jitter: Option<f64>,
    /// cbr: at most this many messages (ns-2's `maxpkts_`). Default unlimited.
    #[serde(default)]
    pub count: Option<u64>,
    /// Total bytes to transfer (bulk); absent means unlimited.
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// Time of the first message. Default "0s".
    #[serde(default)]
    pub start: Duration,
    /// Time after which no message is generated. Default: the end of `simulation.duration`.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Streams the messages are spread over, round-robin (message k on stream k mod
    /// `streams`), for transports with streams (SCTP: the outbound streams requested in
    /// INIT); others ignore it. Default 1.
    #[serde(default)]
    pub streams: Option<u16>,
}
