//! Traffic: the `[[flows]]` tables, their transport and their application.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// The most copies one `[[flows]]` table may stand for.
pub const MAX_COPIES: u32 = 1000;

/// Default of [`Flow::copies`].
pub(crate) fn one_copy() -> u32 {
    1
}

/// Replaces each flow of `flows` by its [`Flow::copies`] copies, in place and in order: copy k
/// starts its application `k · stagger` after the flow's start, so a flow's copies take
/// consecutive indices from its own and the flows after it move up. Every resulting flow has
/// one copy and no stagger (expanding again changes nothing). Call after validation.
pub fn expand_copies(flows: &mut Vec<Flow>) {
    if flows.iter().all(|f| f.copies <= 1 && f.stagger.0 == 0) {
        return;
    }
    let total: usize = flows.iter().map(|f| f.copies.max(1) as usize).sum();
    let mut out = Vec::with_capacity(total);
    for mut f in flows.drain(..) {
        let (copies, stagger, start) = (f.copies.max(1) as u64, f.stagger.0, f.app.start.0);
        (f.copies, f.stagger) = (1, Duration::default());
        let start_of = |k: u64| Duration(start.saturating_add(k.saturating_mul(stagger)));
        for k in 0..copies - 1 {
            let mut c = f.clone();
            c.app.start = start_of(k);
            out.push(c);
        }
        // The last copy is the flow itself.
        f.app.start = start_of(copies - 1);
        out.push(f);
    }
    *flows = out;
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
    /// On-off source (ns-3's `OnOffApplication`, ns-2's `Traffic/Exponential` and
    /// `Traffic/Pareto`): CBR at `rate` (or every `interval`) during on periods, silent during
    /// off periods; period lengths drawn from `distribution` with means `on` and `off`.
    #[serde(rename = "on-off")]
    OnOff,
}

impl AppKind {
    /// The kind as the scenario writes it (`kind = "on-off"`).
    pub fn name(self) -> &'static str {
        match self {
            AppKind::Cbr => "cbr",
            AppKind::Voip => "voip",
            AppKind::Bulk => "bulk",
            AppKind::OnOff => "on-off",
        }
    }
}

/// How the on and off periods of an on-off application are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PeriodDistribution {
    /// Exponential with the given mean (ns-2's `Traffic/Exponential`).
    #[default]
    Exponential,
    /// Pareto with the given mean and `shape` (ns-2's `Traffic/Pareto`): heavy-tailed.
    Pareto,
    /// Exactly the mean (ns-3's default `ConstantRandomVariable`).
    Constant,
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
    /// "cbr", "voip", "bulk" or "on-off".
    pub kind: AppKind,
    /// Message size (cbr, voip; under `sizes = "ns2"` the IP packet size), or the size of each
    /// write (bulk, default "1000B").
    #[serde(default)]
    pub size: Option<Bytes>,
    /// Time between messages (cbr, voip; on-off: while on). Give `interval` or `rate`, not
    /// both.
    #[serde(default)]
    pub interval: Option<Duration>,
    /// Sending rate (cbr, voip; on-off: while on): interval = size · 8 / rate.
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
    /// The first message comes at `start` plus a delay drawn uniformly in [0, `start_jitter`)
    /// per flow and replication (staggered, unsynchronised starts). Default none.
    #[serde(default)]
    pub start_jitter: Option<Duration>,
    /// Time after which no message is generated. Default: the end of `simulation.duration`.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Streams the messages are spread over, round-robin (message k on stream k mod
    /// `streams`), for transports with streams (SCTP: the outbound streams requested in
    /// INIT); others ignore it. Default 1.
    #[serde(default)]
    pub streams: Option<u16>,
    /// on-off: mean length of an on period.
    #[serde(default)]
    pub on: Option<Duration>,
    /// on-off: mean length of an off period.
    #[serde(default)]
    pub off: Option<Duration>,
    /// on-off: distribution of the period lengths. Default "exponential".
    #[serde(default)]
    pub distribution: Option<PeriodDistribution>,
    /// on-off with Pareto periods: the shape α (> 1). Default 1.5 (ns-2's `shape_`).
    #[serde(default)]
    pub shape: Option<f64>,
}
