//! Traffic: the `[[flows]]` tables, their transport and their application.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

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
