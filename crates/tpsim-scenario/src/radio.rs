//! The wireless stack: `[radio]` (PHY, channel, MAC), `[routing]`, `[arp]` and `[energy]`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// 802.11 PHY families.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum WifiStandard {
    /// 802.11b DSSS/HR-DSSS: 1, 2, 5.5, 11 Mbit/s; slot 20 µs, SIFS 10 µs, CW 31–1023.
    #[default]
    #[serde(rename = "802.11b")]
    B,
    /// 802.11a OFDM: 6–54 Mbit/s; slot 9 µs, SIFS 16 µs, CW 15–1023.
    #[serde(rename = "802.11a")]
    A,
}

/// Propagation models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PropagationKind {
    /// Two-Ray Ground: Friis up to the crossover distance, d⁻⁴ beyond (ns-2 default).
    #[default]
    TwoRayGround,
    /// Friis free space.
    Friis,
    /// Log-distance path loss with `exponent`, reference distance 1 m, optional log-normal
    /// `shadowing` (σ in dB, drawn per reception).
    LogDistance,
}

/// PLCP preamble (802.11b).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreambleKind {
    /// 192 µs.
    #[default]
    Long,
    /// 96 µs (not at 1 Mbit/s).
    Short,
}

/// The radio of every node: PHY, propagation, reception thresholds and the DCF. Defaults are
/// ns-2.35's (`tcl/lib/ns-default.tcl`): 914 MHz, Pt 0.28183815 W, RXThresh
/// 3.652e-10 W (250 m) and CSThresh 1.559e-11 W (550 m) under Two-Ray Ground, capture ratio
/// 10, antenna height 1.5 m, 802.11b at 1 Mbit/s with 1 Mbit/s control frames.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Radio {
    /// "802.11b" (default) or "802.11a".
    #[serde(default)]
    pub standard: WifiStandard,
    /// Rate of DATA frames. Default the standard's lowest (1 Mbit/s, 6 Mbit/s).
    #[serde(default)]
    pub data_rate: Option<Rate>,
    /// Rate of ACK, RTS and CTS frames. Default the standard's lowest.
    #[serde(default)]
    pub basic_rate: Option<Rate>,
    /// "long" (default) or "short" (802.11b).
    #[serde(default)]
    pub preamble: PreambleKind,
    /// "two-ray-ground" (default), "friis" or "log-distance".
    #[serde(default)]
    pub propagation: PropagationKind,
    /// Path-loss exponent (log-distance). Default 2.
    #[serde(default)]
    pub exponent: Option<f64>,
    /// Shadowing standard deviation, dB (log-distance). Default 0.
    #[serde(default)]
    pub shadowing_db: Option<f64>,
    /// Carrier frequency. Default "914MHz" (ns-2).
    #[serde(default)]
    pub frequency: Option<Hertz>,
    /// Transmit power. Default "0.28183815W" (ns-2, 24.5 dBm).
    #[serde(default)]
    pub tx_power: Option<Watts>,
    /// Receive threshold. Default 3.652e-10 W; or give `range` instead.
    #[serde(default)]
    pub rx_threshold: Option<Watts>,
    /// Decode range: sets the receive threshold to the power received at this distance.
    #[serde(default)]
    pub range: Option<Meters>,
    /// Transmission range of every node: sets each node's transmit power so that the mean
    /// received power at this distance equals the receive threshold (instead of `tx_power`).
    #[serde(default)]
    pub tx_range: Option<Meters>,
    /// Per-node transmission ranges, e.g. `[{ nodes = [0, 1, 2], range = "150m" }]`: these
    /// nodes transmit with the power that reaches `range` at the receive threshold. Nodes
    /// with different ranges make one-way links.
    #[serde(default)]
    pub node_ranges: Option<Vec<NodeRange>>,
    /// The channels of each node's radios, node by node, e.g. `[[1, 2], [1], [2], [1, 2]]`:
    /// a node with two channels has two radios, each an interface of its own (address,
    /// interface queue, 802.11 MAC, ARP and ad hoc routing instance). Radios on different
    /// channels never hear each other; every radio has this table's parameters. Default: one
    /// radio per node, all on one channel.
    #[serde(default)]
    pub channels: Option<Vec<Vec<u32>>>,
    /// Carrier-sense threshold. Default 1.559e-11 W; or give `cs_range` instead.
    #[serde(default)]
    pub cs_threshold: Option<Watts>,
    /// Carrier-sense range: sets the carrier-sense threshold from this distance.
    #[serde(default)]
    pub cs_range: Option<Meters>,
    /// Capture ratio (linear): a frame survives an overlapping one this many times weaker.
    /// Default 10.
    #[serde(default)]
    pub capture_ratio: Option<f64>,
    /// Antenna height of every node. Default "1.5m".
    #[serde(default)]
    pub antenna_height: Option<Meters>,
    /// Use RTS/CTS for unicast frames larger than this. Default: never (ns-3's default; ns-2
    /// uses "0B", RTS/CTS for every unicast frame).
    #[serde(default)]
    pub rts_threshold: Option<Bytes>,
    /// Interface queue limit, packets (PriQueue: routing packets first). Default 50.
    #[serde(default)]
    pub queue: Option<u32>,
    /// Queue discipline of each radio interface for every packet but routing control (which
    /// keeps the `queue` PriQueue, ahead): `{ kind = "red" | "codel" | "fq-codel" | "pie" |
    /// "droptail", ... }` (docs/models.md). Default: none, every packet in `queue`.
    #[serde(default)]
    pub aqm: Option<Aqm>,
    /// Longest wait in the interface queue: a packet that reaches the head of the queue
    /// after waiting longer is dropped (`drops_queue_timeout`), as ns-3's `WifiMacQueue`
    /// `MaxDelay` (500 ms there). Default: no limit (ns-2).
    #[serde(default)]
    pub queue_max_delay: Option<Duration>,
    /// A frame that finds the medium idle still waits a random backoff of 0 to CW − 1 slots
    /// after DIFS, as ns-2.35's 802.11 does (`bugFix_timer_`), instead of going out after
    /// DIFS as IEEE 802.11 §10.3.4.2 says. Default false.
    #[serde(default)]
    pub idle_backoff: Option<bool>,
    /// Short retry limit (frames up to the RTS threshold). Default 7.
    #[serde(default)]
    pub short_retry_limit: Option<u32>,
    /// Long retry limit (frames above the RTS threshold). Default 4.
    #[serde(default)]
    pub long_retry_limit: Option<u32>,
    /// Reception model: "threshold" (default; ns-2's RXThresh/CSThresh/capture ratio) or
    /// "sinr" (interference accumulated over the frame, thermal noise, per-rate SINR
    /// thresholds; docs/models.md).
    #[serde(default)]
    pub reception: ReceptionKind,
    /// Receiver noise figure for SINR reception, dB. Default 7.
    #[serde(default)]
    pub noise_figure_db: Option<f64>,
    /// Error model of SINR reception: "threshold" (default; a step SINR threshold per rate,
    /// from the standard's receiver sensitivities) or "ber" (802.11b only: bit error rates
    /// of DBPSK/DQPSK/CCK with the spreading gain, one random draw per frame, as ns-3's
    /// DSSS error model; docs/models.md).
    #[serde(default)]
    pub error_model: Option<ErrorModelKind>,
    /// SINR a frame needs at its start for the radio to lock on under the "ber" error model
    /// (preamble detection), dB. Default 4 (ns-3's `ThresholdPreambleDetectionModel`).
    #[serde(default)]
    pub preamble_detection_db: Option<f64>,
    /// Under the "ber" error model: how long after a frame's start a new signal can still undo
    /// the lock (the stronger of the two must then be detectable against the other, or neither
    /// is received), e.g. "4us" as ns-3's preamble detection period. Default "0s": decided at
    /// the start.
    #[serde(default)]
    pub preamble_detection_window: Option<Duration>,
    /// Data-rate control: "constant" (default, `data_rate`), "arf" (Kamerman & Monteban
    /// 1997) or "aarf" (Lacage et al. 2004), per destination, starting at `data_rate`.
    #[serde(default)]
    pub rate_control: RateControlKind,
    /// Write `pcap/.../node<i>.pcap` per node (with `tpsim run --pcap`): 802.11 frames with
    /// radiotap headers, those the node sends and those it receives correctly. Default false.
    #[serde(default)]
    pub pcap: bool,
}

/// Routing protocols of radio nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoutingProtocol {
    /// Shortest hop-count paths on the connectivity graph at t = 0, never updated.
    #[default]
    Static,
    /// Shortest hop-count paths on the current connectivity graph (recomputed as nodes
    /// move), without control traffic: a baseline.
    Oracle,
    /// AODV (RFC 3561).
    Aodv,
    /// OLSR (RFC 3626).
    Olsr,
}

/// Constant sets of a routing protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoutingPreset {
    /// The RFC's defaults (RFC 3561 §10, RFC 3626 §18).
    #[default]
    Rfc,
    /// ns-2.35's AODV constants (link-layer detection, no HELLO, local repair; the table in
    /// docs/models.md).
    Ns2,
    /// ns-3's AODV (`ns3::aodv::RoutingProtocol`): the RFC constants with ns-3's behaviour
    /// where it departs from RFC 3561: forwarding data keeps the next hop alive as a HELLO
    /// neighbour, every node sends HELLOs, RREQs carry the G flag (gratuitous RREPs), a route
    /// invalidated by a break or an RERR keeps its sequence number, and an RREQ that updates
    /// an inactive reverse route leaves it invalid (RREPs still follow it).
    Ns3,
}

/// Routing of radio nodes.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// "static" (default), "oracle", "aodv" or "olsr".
    pub protocol: RoutingProtocol,
    /// aodv: "rfc" (default), "ns2" or "ns3".
    #[serde(default)]
    pub preset: Option<RoutingPreset>,
    /// aodv: send HELLO messages and detect link loss by missing ones (RFC 3561 §6.9).
    /// Default: off with "ns2", on with "rfc".
    #[serde(default)]
    pub hello: Option<bool>,
    /// aodv, olsr: the largest random delay before a broadcast (RFC 5148). Default 10 ms
    /// (aodv), HELLO_INTERVAL / 4 (olsr).
    #[serde(default)]
    pub jitter: Option<Duration>,
    /// aodv, olsr: HELLO_INTERVAL. Default 1 s (aodv), 2 s (olsr).
    #[serde(default)]
    pub hello_interval: Option<Duration>,
    /// olsr: TC_INTERVAL. Default 5 s.
    #[serde(default)]
    pub tc_interval: Option<Duration>,
}

/// Presets of the ARP model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArpPreset {
    /// ns-3's timers and queue (which meet RFC 1122 §2.3.2) with RFC 826's merge: a node
    /// learns the sender of every ARP packet it can.
    #[default]
    Rfc,
    /// ns-3.44's `ArpCache`/`ArpL3Protocol` exactly: no learning from requests.
    Ns3,
    /// ns-2.35's `ARPTable`: one packet held (the newest), a request per packet, the fourth
    /// packet after three unanswered requests fails as a broken link, entries never expire,
    /// every ARP packet heard teaches its sender.
    Ns2,
}

/// What a node learns from the ARP packets it hears.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArpLearn {
    /// Only replies to its own requests (ns-3).
    Replies,
    /// RFC 826's merge: the sender of a request for it, and senders it already knows.
    Merge,
    /// The sender of every ARP packet heard (ns-2).
    Overheard,
}

/// Address resolution on the radios (RFC 826): a unicast packet waits for its next hop's
/// MAC address; requests and replies are real frames. The keys override the preset.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arp {
    /// "rfc" (default), "ns3" or "ns2".
    #[serde(default)]
    pub preset: Option<ArpPreset>,
    /// Packets held per unresolved neighbour; one more is dropped (`drops_arp`). Default 3.
    #[serde(default)]
    pub pending_queue: Option<u32>,
    /// Period of request retransmissions. Default 1 s.
    #[serde(default)]
    pub wait_reply_timeout: Option<Duration>,
    /// Retransmissions before a neighbour is declared dead. Default 3.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// How long a resolved address is used before it is asked again. Default 120 s.
    #[serde(default)]
    pub alive_timeout: Option<Duration>,
    /// How long packets to a dead neighbour are dropped before a new attempt. Default 100 s.
    #[serde(default)]
    pub dead_timeout: Option<Duration>,
    /// Largest random delay before a first request. Default 10 ms.
    #[serde(default)]
    pub request_jitter: Option<Duration>,
    /// What a node learns from ARP packets: "merge" (RFC 826; preset "rfc"), "replies"
    /// ("ns3") or "overheard" ("ns2").
    #[serde(default)]
    pub learn: Option<ArpLearn>,
}

/// Power presets of the radio energy model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EnergyPreset {
    /// ns-2.35 `WirelessPhy` defaults: tx 0.660 W, rx 0.395 W, idle 0 W, sleep 0 W.
    Ns2,
    /// A MICA2-class mote (CC1000 radio at 3 V, PowerTOSSIM's measurements): tx 25.4 mW
    /// (0 dBm, 8.47 mA), rx 21.1 mW (7.03 mA), idle 21.1 mW (the receiver listens), sleep
    /// 0.31 mW (power-down, 103 µA).
    Mica2,
}

/// The ns-2-style radio energy model: every node starts with `initial` joules and spends
/// `tx` watts while transmitting, `rx` while its radio senses a frame (any signal above the
/// carrier-sense threshold, decodable or not, while not transmitting), `idle` otherwise
/// (`sleep` is the power of a sleeping radio; 802.11 DCF without power save never sleeps).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Energy {
    /// Energy of each node at the start.
    pub initial: Joules,
    /// Power preset: "ns2" (default) or "mica2"; the keys below override it.
    #[serde(default)]
    pub preset: Option<EnergyPreset>,
    /// Power drawn while transmitting.
    #[serde(default)]
    pub tx: Option<Watts>,
    /// Power drawn while receiving.
    #[serde(default)]
    pub rx: Option<Watts>,
    /// Power drawn while idle.
    #[serde(default)]
    pub idle: Option<Watts>,
    /// Power drawn while asleep.
    #[serde(default)]
    pub sleep: Option<Watts>,
    /// A node whose energy is spent dies: its radio stops (a frame it is sending is cut
    /// short; packets it would send or forward are dropped as `energy`). Default true.
    #[serde(default = "yes")]
    pub death: bool,
}

impl Energy {
    /// (tx, rx, idle, sleep) power, W, with the preset under the explicit keys.
    pub fn powers(&self) -> [f64; 4] {
        let base = match self.preset.unwrap_or(EnergyPreset::Ns2) {
            EnergyPreset::Ns2 => [0.660, 0.395, 0.0, 0.0],
            EnergyPreset::Mica2 => [0.0254, 0.0211, 0.0211, 0.00031],
        };
        let pick = |v: Option<Watts>, d: f64| v.map(|w| w.0).unwrap_or(d);
        [
            pick(self.tx, base[0]),
            pick(self.rx, base[1]),
            pick(self.idle, base[2]),
            pick(self.sleep, base[3]),
        ]
    }
}

/// Reception models of a radio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReceptionKind {
    /// ns-2's threshold mode.
    #[default]
    Threshold,
    /// SINR with cumulative interference.
    Sinr,
}

/// Error models of SINR reception.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ErrorModelKind {
    /// A step SINR threshold per rate.
    #[default]
    Threshold,
    /// Bit error rates from modulation theory (802.11b rates), one draw per frame.
    Ber,
}

/// Data-rate control of the 802.11 MAC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateControlKind {
    /// Always `data_rate`.
    #[default]
    Constant,
    /// Automatic Rate Fallback.
    Arf,
    /// Adaptive ARF.
    Aarf,
}
