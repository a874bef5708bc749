//! Run control and recording: the `[simulation]` and `[output]` tables.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// Run control.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Simulation {
    /// A short name for tables and reports.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text describing the scenario (shown, escaped, in reports).
    #[serde(default)]
    pub description: Option<String>,
    /// Simulated time during which applications run, e.g. "10s".
    pub duration: Duration,
    /// Extra simulated time after `duration` during which no new application data is
    /// generated but packets in flight may still arrive. Default "0s".
    #[serde(default)]
    pub drain: Duration,
    /// Simulated time from the start during which nothing is counted: the flows and network
    /// tables cover `[warmup, duration + drain]` (messages created, segments sent and network
    /// events from `warmup` on); time series still cover the whole run. Must be shorter than
    /// `duration`. Default "0s".
    #[serde(default)]
    pub warmup: Duration,
    /// Master seed of all random streams. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Replications (runs with independent random streams). Default 1.
    #[serde(default = "default_runs")]
    pub runs: u32,
    /// Packet-size convention: "standard" (payload + real headers) or "ns2" (the configured
    /// size is the IP packet, as ns-2's UDP agent does). Default "standard".
    #[serde(default)]
    pub sizes: Sizes,
    /// Which transport models flows use where they do not choose: "modern" (default; tpsim's
    /// TCP, the RFC profiles of SCTP, TFRC and DCCP), "ns2" (ns-2.35's agents: `tcp.preset
    /// = "ns2"` and the "ns2" profile of `sctp`, `tfrc` and `dccp`) or "inet" (OMNeT++/INET's
    /// TCP defaults, `tcp.preset = "inet"`; the rest as "modern"), so that one sweep key
    /// (`simulation.stack = ["ns2", "modern"]`) runs a study both ways. A flow's explicit
    /// preset or profile wins. With `stack` set, a flow's `tcp` keys that apply to only one of the two TCP models
    /// are kept for the stack that uses them.
    #[serde(default)]
    pub stack: Option<Stack>,
    /// Behaviours of ns-2.35 that are artefacts of its code, not of the protocols, switched on
    /// to reproduce results obtained with it (docs/models.md, "ns-2.35's quirks"). Default none.
    #[serde(default)]
    pub ns2_quirks: Vec<Ns2Quirk>,
    /// The packet size of ns-2.35's agents where a flow does not set it: "default" (ns-2's
    /// defaults, which the ns-2 studies ran: TCP and TFRC `packetSize_` 1000 B, every write
    /// padded to it; DCCP CCID 3's s 500 B) or "message" (the flow's message size, one message
    /// per packet unpadded). Flows on the ns2 TCP preset and ns2 TFRC and DCCP profiles only.
    /// Default "default".
    #[serde(default)]
    pub ns2_packet_size: Ns2PacketSize,
}

/// What sets the packet size of ns-2.35's agents ([`Simulation::ns2_packet_size`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ns2PacketSize {
    /// ns-2.35's defaults: TCP's and TFRC's `packetSize_` 1000 B (`tcp.cc`, `tfrc.cc`), DCCP
    /// CCID 3's `s_s_` 500 B (`dccp_tfrc.cc`).
    #[default]
    Default,
    /// The flow's message size (`app.size`), as the ns-2 scripts' `sizes=msg` sets it.
    Message,
}

/// An ns-2.35 artefact a scenario can switch on ([`Simulation::ns2_quirks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ns2Quirk {
    /// AODV treats a data frame the MAC could not deliver as a link break only for the packet
    /// types of ns-2.35's `DATA_PACKET` list (`common/packet.h`: TCP data and ACKs, CBR (tpsim's
    /// UDP), SCTP, audio, video, telnet), as its `rt_ll_failed` does; any other packet (TFRC,
    /// DCCP) is dropped and the route kept, so a flow keeps sending over a broken link while its
    /// packets refresh the route.
    AodvDataPacketList,
    /// ns-2.35's SCTP agent stalls an application-limited sender (`sctp.cc`: `sendmsg()` sends
    /// only while `eSendNewDataChunks` is set, which a SACK sets and the send that follows
    /// clears): a message written after the SACK that acknowledged everything waits for a SACK
    /// that never comes. Flows on the ns2 SCTP profile only.
    SctpStall,
    /// ns-2.35's DCCP connection never opens when the receiving agent was not told to
    /// `listen`: it stays CLOSED and ignores every Request (`dccp.cc` `recv()`), so the sender
    /// only retransmits its Request (3 s, doubling). Flows on the ns2 DCCP profile only.
    DccpNoListen,
}

/// The transport models of a scenario's flows ([`Simulation::stack`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// tpsim's transports, after the RFCs.
    #[default]
    Modern,
    /// ns-2.35's transport agents.
    Ns2,
    /// OMNeT++/INET 4's defaults where they differ from tpsim's: TCP with INET's `Tcp`
    /// module defaults (`tcp.preset = "inet"`); SCTP, TFRC and DCCP as under `Modern`.
    Inet,
}

pub(crate) fn default_seed() -> u64 {
    1
}
pub(crate) fn default_runs() -> u32 {
    1
}

/// Packet-size convention (docs/models.md, "Packet sizes"): what a configured size counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Sizes {
    /// Application payload + transport, IP and link headers of standard sizes.
    #[default]
    Standard,
    /// ns-2: the configured packet size is the on-wire IP size for UDP/CBR; TCP adds 40 bytes;
    /// wired links add no framing.
    Ns2,
}

impl Sizes {
    /// The wire crate's convention.
    pub fn convention(self) -> tpsim_wire::SizeConvention {
        match self {
            Sizes::Standard => tpsim_wire::SizeConvention::Standard,
            Sizes::Ns2 => tpsim_wire::SizeConvention::Ns2,
        }
    }
}

/// What to record besides the result tables.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Record binned time series (goodput, queue length, delay). Default true.
    #[serde(default = "yes")]
    pub timeseries: bool,
    /// Bin width of the time series. Default "1s".
    #[serde(default = "default_bin")]
    pub bin: Duration,
    /// Write a pcap file for every link (see also `links[].pcap`). Default false.
    #[serde(default)]
    pub pcap: bool,
    /// Add every node's position at the start of each bin to the time series (`x_m`, `y_m`).
    /// Default false.
    #[serde(default)]
    pub positions: bool,
    /// Record a per-packet event trace (`trace.parquet`): one row per send, forward, receive
    /// and drop of every packet, with time, node, layer, flow, packet number, size and drop
    /// reason (docs/metrics.md). Default false.
    #[serde(default)]
    pub trace: bool,
    /// Also write each run's packet trace as an ns-2 trace file (docs/ns2-trace.md): "old"
    /// (the CMU wireless format), "new" (the wireless format of `use-newtrace`) or "wired"
    /// (point-to-point links: `+ - r d` lines). Records the packet trace with the hop
    /// events these formats need (as `trace = true` does, with those rows). Default none.
    #[serde(default)]
    pub ns2_trace: Option<Ns2Trace>,
    /// Record the network movie's trace (`animation.parquet`, `tpsim animate`): node
    /// positions, the hops data packets took, drops by reason, deliveries per flow, next-hop
    /// changes and node deaths, aggregated per `animation_step` (docs/workbench.md). Default
    /// false.
    #[serde(default)]
    pub animation: bool,
    /// The movie's frame: the window its counts aggregate. Default "0.5s"; widened to
    /// (duration + drain) / 2000 for longer runs (at most 2000 frames).
    #[serde(default = "default_animation_step")]
    pub animation_step: Duration,
    /// Record per-ACK samples (`acks.parquet`): one row per acknowledgement or feedback
    /// packet a flow direction's data sender processes, with its congestion window, RTT
    /// estimate and the RTT sample it took (rate-based transports: the allowed rate X)
    /// (docs/metrics.md). Default false.
    #[serde(default)]
    pub ack_samples: bool,
}

/// The ns-2 trace format to write (`[output] ns2_trace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ns2Trace {
    /// The old (CMU) wireless format: `s 10.000000000 _1_ AGT  --- 5 cbr 512 [...] ...`.
    Old,
    /// The new wireless format: `s -t 10.000000000 -Hs 1 -Hd -2 ...`, `d` for drops.
    New,
    /// The wired format: `+ 1.0 0 1 cbr 128 ------- 0 0.0 1.0 0 0`.
    Wired,
}

impl Output {
    /// Whether the run keeps a packet trace (`trace`, or `ns2_trace`, which needs it).
    pub fn keeps_trace(&self) -> bool {
        self.trace || self.ns2_trace.is_some()
    }
}

impl Default for Output {
    fn default() -> Self {
        Output {
            timeseries: true,
            bin: default_bin(),
            pcap: false,
            positions: false,
            trace: false,
            ns2_trace: None,
            animation: false,
            animation_step: default_animation_step(),
            ack_samples: false,
        }
    }
}

pub(crate) fn yes() -> bool {
    true
}
pub(crate) fn default_bin() -> Duration {
    Duration(1_000_000_000)
}
pub(crate) fn default_animation_step() -> Duration {
    Duration(500_000_000)
}
