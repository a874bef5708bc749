//! Wired links: the `[[links]]` tables.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// A group of nodes with their own transmission range.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeRange {
    /// Node indices.
    pub nodes: Vec<u32>,
    /// Their transmission range.
    pub range: Meters,
}

/// A full-duplex point-to-point link: two independent directions, each with its own
/// transmitter, queue (DropTail unless `aqm` says otherwise) and error model.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The two node indices it joins. The "forward" direction runs from the first to the second.
    #[serde(deserialize_with = "pair::pair")]
    pub nodes: [u32; 2],
    /// Transmission rate of each direction, e.g. "256kbps".
    pub rate: Rate,
    /// Propagation delay, e.g. "50ms".
    pub delay: Duration,
    /// DropTail queue limit of each direction: packets waiting to be transmitted, not counting
    /// the one on the wire (as ns-2's `Queue limit_` and ns-3's `DropTailQueue MaxSize`).
    /// Default 50.
    #[serde(default = "default_queue")]
    pub queue: u32,
    /// Queue discipline of each direction: `{ kind = "red" | "codel" | "fq-codel" | "pie" |
    /// "droptail", ... }` with its keys (docs/models.md). Default DropTail with `queue`.
    #[serde(default)]
    pub aqm: Option<Aqm>,
    /// Packets held below the queue discipline, between it and the wire, in each direction:
    /// a network card's transmit ring, or ns-3's device queue under its traffic-control
    /// layer. The discipline hands over its next packet as soon as a place here is free, and
    /// neither sees nor controls the packets it handed over. Default 0: the discipline feeds
    /// the wire.
    #[serde(default)]
    pub device_queue: u32,
    /// IP MTU of both interfaces. Default "1500B".
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Bernoulli packet loss probability of each direction, in [0, 1). Default 0.
    #[serde(default)]
    pub loss: f64,
    /// Bernoulli loss probability of the forward direction only (first node to second), in
    /// [0, 1); overrides `loss` there. With `loss_reverse = 0` it expresses data-only loss,
    /// the assumption of the PFTK and TFRC throughput equations (feedback is not lost).
    #[serde(default)]
    pub loss_forward: Option<f64>,
    /// Bernoulli loss probability of the reverse direction only, in [0, 1); overrides `loss`
    /// there.
    #[serde(default)]
    pub loss_reverse: Option<f64>,
    /// Indices (from 0, in order of transmission) of packets to lose in the forward
    /// direction (on top of any Bernoulli loss), for tests and scripted experiments.
    #[serde(default)]
    pub drop_forward: Vec<u64>,
    /// Same for the reverse direction.
    #[serde(default)]
    pub drop_reverse: Vec<u64>,
    /// Write `pcap/link<i>.pcap` with every packet put on this link. Default false.
    #[serde(default)]
    pub pcap: bool,
}

pub(crate) fn default_queue() -> u32 {
    50
}
pub(crate) fn default_mtu() -> Bytes {
    Bytes(tpsim_wire::DEFAULT_MTU as u64)
}
