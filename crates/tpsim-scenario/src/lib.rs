//! tpsim-scenario: the scenario format.
//!
//! Scenarios are TOML with explicit units, read strictly: an unknown key, a missing unit or a
//! value of the wrong kind is an error that names the key, its line and what was expected.
//! Reading happens in two passes, as in Shadow's configuration: [`parse`] checks *form* (serde
//! with `deny_unknown_fields`), then [`validate`](validate::validate) checks *meaning* (node
//! indices in range, reachable destinations, messages that fit the MTU ...) and reports every
//! problem at once. [`json_schema`] exports the format for editors; the Rust types here are
//! its single source of truth.
//!
//! Every field documents its unit and default. Defaults follow ns-2 where the reference
//! studies used it (queue limit 50 packets) and the standards otherwise (MTU 1500 bytes).

pub mod count;
pub mod error;
pub mod events;
pub mod import;
pub mod ns2;
mod pair;
pub mod topology;
pub mod units;
pub mod validate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use error::{Diagnostic, Locator, ScenarioError, Seg};
pub use events::{FaultEvent, FaultKind};
pub use units::{Angle, Bytes, Duration, Hertz, Joules, Meters, Rate, Speed, Watts};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Run control: duration, seed, replications, packet-size convention.
    pub simulation: Simulation,
    /// What to record besides the result tables.
    #[serde(default)]
    pub output: Output,
    /// The nodes.
    pub nodes: Nodes,
    /// Full-duplex point-to-point links.
    #[serde(default)]
    pub links: Vec<Link>,
    /// One IEEE 802.11 ad hoc radio on every node (omit for a wired-only scenario).
    #[serde(default)]
    pub radio: Option<Radio>,
    /// Radio energy model of every node (needs a radio).
    #[serde(default)]
    pub energy: Option<Energy>,
    /// Address resolution (ARP, RFC 826) on every radio (needs a radio). Absent: none, a
    /// next hop's MAC address is known at once.
    #[serde(default)]
    pub arp: Option<Arp>,
    /// How radio nodes find routes. Default: static shortest paths at t = 0.
    #[serde(default)]
    pub routing: Option<Routing>,
    /// Sensor reporting: every sensor sends to the sink periodically (one flow per sensor,
    /// added after `flows`).
    #[serde(default)]
    pub sensors: Option<Sensors>,
    /// Background CBR flows between random pairs of nodes, drawn per replication.
    #[serde(default)]
    pub background: Option<Background>,
    /// Periodic one-hop broadcasts (beacons) from radio nodes.
    #[serde(default)]
    pub beacons: Option<Beacons>,
    /// Flows read from an ns-2 traffic file (cbrgen), added after `flows`.
    #[serde(default)]
    pub ns2_traffic: Option<Ns2Traffic>,
    /// Traffic: each flow is one transport association between two nodes.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Timed fault events: links, interfaces or nodes going down and up, link changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<FaultEvent>,
    /// Parameter sweep: each key is the dotted path of a scenario key (array elements by
    /// index, e.g. `"flows.0.app.interval"`), each value the list of values it takes; a
    /// linked key `"a + b"` gives each value to both keys (one dimension). The
    /// sweep runs every combination (a grid), `simulation.runs` replications each. Expanded
    /// by the Python front end ([`apply_overrides`] per point); the engine never sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<std::collections::BTreeMap<String, Vec<serde_json::Value>>>")]
    pub sweep: Option<toml::Table>,
}

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
    /// TCP, the RFC profiles of SCTP, TFRC and DCCP) or "ns2" (ns-2.35's agents: `tcp.preset
    /// = "ns2"` and the "ns2" profile of `sctp`, `tfrc` and `dccp`), so that one sweep key
    /// (`simulation.stack = ["ns2", "modern"]`) runs a study both ways. A flow's explicit
    /// preset or profile wins. With `stack` set, a flow's `tcp` keys that apply to only one of the two TCP models
    /// are kept for the stack that uses them.
    #[serde(default)]
    pub stack: Option<Stack>,
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
}

impl Scenario {
    /// `ns2` if the scenario's stack is ns-2's, else `modern`: the model of a flow that does
    /// not choose its own.
    fn by_stack<T>(&self, modern: T, ns2: T) -> T {
        match self.simulation.stack.unwrap_or_default() {
            Stack::Modern => modern,
            Stack::Ns2 => ns2,
        }
    }
    /// The TCP model flow `f` runs: its explicit `tcp.preset`, else the scenario's stack.
    pub fn tcp_preset(&self, f: &Flow) -> TcpPreset {
        let own = f.tcp.as_ref().and_then(|o| o.preset);
        own.unwrap_or_else(|| self.by_stack(TcpPreset::Modern, TcpPreset::Ns2))
    }
    /// The TFRC profile flow `f` runs: its explicit `tfrc.profile`, else the stack's.
    pub fn tfrc_profile(&self, f: &Flow) -> TfrcProfileName {
        let own = f.tfrc.as_ref().and_then(|o| o.profile);
        own.unwrap_or_else(|| self.by_stack(TfrcProfileName::Rfc5348, TfrcProfileName::Ns2))
    }
    /// The DCCP profile flow `f` runs: its explicit `dccp.profile`, else the stack's.
    pub fn dccp_profile(&self, f: &Flow) -> DccpProfileName {
        let own = f.dccp.as_ref().and_then(|o| o.profile);
        own.unwrap_or_else(|| self.by_stack(DccpProfileName::Rfc, DccpProfileName::Ns2))
    }
    /// The SCTP profile flow `f` runs: its explicit `sctp.profile`, else the stack's (rfc9260
    /// or ns2).
    pub fn sctp_profile(&self, f: &Flow) -> SctpProfileName {
        let own = f.sctp.as_ref().and_then(|o| o.profile);
        own.unwrap_or_else(|| self.by_stack(SctpProfileName::Rfc9260, SctpProfileName::Ns2))
    }
}

fn default_seed() -> u64 {
    1
}
fn default_runs() -> u32 {
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

fn yes() -> bool {
    true
}
fn default_bin() -> Duration {
    Duration(1_000_000_000)
}
fn default_animation_step() -> Duration {
    Duration(500_000_000)
}

/// The nodes of the scenario, numbered from 0.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    /// Number of nodes (≥ 1).
    pub count: u32,
    /// Where the nodes stand (needed with a radio). Default: all at the origin.
    #[serde(default)]
    pub placement: Option<Placement>,
    /// How the nodes move. Default: they stand still.
    #[serde(default)]
    pub mobility: Option<Mobility>,
}

/// Mobility models. Positions are computed analytically from each node's own
/// random stream when the channel asks for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MobilityModel {
    /// No movement.
    Static,
    /// Random waypoint: pick a uniform point in `area`, travel to it at a speed uniform in
    /// `speed`, pause `pause`, repeat (Johnson & Maltz 1996; Broch et al. 1998).
    RandomWaypoint,
    /// Random walk 2-D: travel at a speed uniform in `speed` in a direction that changes every
    /// `interval` (or every `distance`) by a uniform turn within ±`max_turn`, reflecting at
    /// the edges of `area`.
    RandomWalk,
    /// Every node moves with the same constant `velocity` [vx, vy].
    ConstantVelocity,
    /// Scripted `waypoints`: ns-2 `setdest` semantics (at `at`, head for `to` at `speed`).
    Waypoints,
    /// An ns-2 movement file (`setdest` output): initial positions and moves; node ids
    /// mapped so that the file's first id is node 0.
    Ns2,
}

/// How a random waypoint run starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WaypointStart {
    /// In the model's stationary distribution (Navidi & Camp 2004): position, paused or
    /// moving, remaining pause, leg and speed drawn so that averages do not drift over the
    /// run (Yoon et al. 2003). Needs a minimum speed above 0. The placement is not used.
    #[default]
    Stationary,
    /// From the placement, each node first pausing `pause` (ns-2 `setdest`): with a minimum
    /// speed of 0 the average speed decays over the run, as in the classic studies.
    Placement,
}

/// One scripted move: at `at` the node heads in a straight line for `to` at `speed`, and stops
/// there (a later waypoint of the same node turns it from wherever it is).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Waypoint {
    /// Node index.
    pub node: u32,
    /// When the move starts.
    pub at: Duration,
    /// Target [x, y].
    #[serde(deserialize_with = "pair::pair")]
    pub to: [Meters; 2],
    /// Speed towards the target (0 stops the node where it is).
    pub speed: Speed,
}

/// Background traffic: `flows` CBR flows over `transport`, each between a random pair of
/// distinct nodes, starting at a uniform random time in `start` = [earliest, latest]; pairs
/// and starts are drawn from the scenario's stream of each replication (the same for every
/// sweep value of other keys). Added after `flows` and `[sensors]`. Sweep `background.flows`
/// (e.g. [0, 8]) to compare with and without.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Background {
    /// Number of flows (0 = none).
    pub flows: u32,
    /// Transport. Default "udp".
    #[serde(default = "udp")]
    pub transport: Transport,
    /// Message size.
    pub size: Bytes,
    /// Time between messages (give this or `rate`).
    #[serde(default)]
    pub interval: Option<Duration>,
    /// Sending rate: interval = size · 8 / rate.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// [earliest, latest] start. Default ["0s", "0s"].
    #[serde(default, deserialize_with = "pair::opt_pair")]
    pub start: Option<[Duration; 2]>,
    /// Nodes never chosen as endpoints (e.g. the main flow's).
    #[serde(default)]
    pub exclude: Vec<u32>,
}

fn udp() -> Transport {
    Transport::Udp
}

/// Periodic one-hop broadcasts: every node in `nodes` sends a `size` UDP datagram to the
/// link-layer broadcast address every `interval` (not forwarded, no ACK). Each node starts at
/// a uniform random offset in [`start`, `start` + `interval`) drawn from its own stream.
/// Counted in the network table (`broadcasts_sent`, `broadcast_receptions`, `broadcast_missed`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Beacons {
    /// Time between two broadcasts of one node.
    pub interval: Duration,
    /// Datagram size (under `sizes = "ns2"` the IP packet size).
    pub size: Bytes,
    /// The broadcasting nodes. Default: all.
    #[serde(default)]
    pub nodes: Option<Vec<u32>>,
    /// Earliest first broadcast. Default "0s".
    #[serde(default)]
    pub start: Duration,
}

/// The sensor reporting application: each sensor sends a `size` report to the
/// sink every `interval` over `transport`. Sensor k of n starts at `start` + k/n · interval,
/// so that reports are spread over the interval rather than sent all at once.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sensors {
    /// The sink's node index.
    pub sink: u32,
    /// The reporting nodes. Default: every node but the sink.
    #[serde(default)]
    pub nodes: Option<Vec<u32>>,
    /// Transport of every report flow.
    pub transport: Transport,
    /// Report size (under `sizes = "ns2"` the IP packet size).
    pub size: Bytes,
    /// Time between two reports of one sensor.
    pub interval: Duration,
    /// First report of sensor 0. Default "0s".
    #[serde(default)]
    pub start: Duration,
    /// No report at or after this time. Default: the end of `simulation.duration`.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// TCP parameters (TCP transports).
    #[serde(default)]
    pub tcp: Option<TcpOptions>,
    /// SCTP parameters (transport "sctp").
    #[serde(default)]
    pub sctp: Option<SctpOptions>,
}

/// An ns-2 traffic file (cbrgen: CBR over UDP, FTP over TCP) whose flows are added to the
/// scenario: CBR becomes a periodic `cbr` app (`random_ 1` → jitter 0.5, `maxpkts_` →
/// `count`), FTP an unlimited `bulk` app with `packetSize_` as the MSS and `window_` ×
/// `packetSize_` as the receive window; `Agent/TCP` is Tahoe.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ns2Traffic {
    /// Path of the traffic file, relative to the scenario file.
    #[serde(default)]
    pub file: Option<String>,
    /// The file's content itself (replaces `file` when a sweep is planned).
    #[serde(default)]
    pub text: Option<String>,
    /// The file's node id that is node 0. Default: that of an ns-2 movement file in
    /// `nodes.mobility`, else 0.
    #[serde(default)]
    pub first_id: Option<u32>,
}

/// Node movement. Which keys apply depends on `model`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mobility {
    /// "static", "random-waypoint", "random-walk", "constant-velocity", "waypoints" or "ns2".
    pub model: MobilityModel,
    /// random-waypoint, random-walk: [minimum, maximum] speed, e.g. ["1m/s", "2m/s"].
    #[serde(default, deserialize_with = "pair::opt_pair")]
    pub speed: Option<[Speed; 2]>,
    /// random-waypoint: pause at each waypoint. Default "0s".
    #[serde(default)]
    pub pause: Option<Duration>,
    /// random-waypoint, random-walk: the [width, height] area from the origin. Default the
    /// uniform placement's area.
    #[serde(default, deserialize_with = "pair::opt_pair")]
    pub area: Option<[Meters; 2]>,
    /// random-waypoint: "stationary" (default) or "placement".
    #[serde(default)]
    pub start: Option<WaypointStart>,
    /// random-walk: time between changes of direction and speed (give this or `distance`).
    #[serde(default)]
    pub interval: Option<Duration>,
    /// random-walk: distance between changes of direction and speed.
    #[serde(default)]
    pub distance: Option<Meters>,
    /// random-walk: largest turn at a change, either way. Default "180deg" (a new direction
    /// uniform on the circle).
    #[serde(default)]
    pub max_turn: Option<Angle>,
    /// constant-velocity: [vx, vy].
    #[serde(default, deserialize_with = "pair::opt_pair")]
    pub velocity: Option<[Speed; 2]>,
    /// waypoints: the moves, any order (sorted by time, stable).
    #[serde(default)]
    pub waypoints: Option<Vec<Waypoint>>,
    /// ns2: path of the movement file, relative to the scenario file.
    #[serde(default)]
    pub file: Option<String>,
    /// ns2: the movement file's content itself (what `file` is replaced by when a sweep is
    /// planned, so that runs on other machines need no file and the stored-run hash covers
    /// the content).
    #[serde(default)]
    pub text: Option<String>,
    /// ns2: the file's node id that is node 0. Default: the smallest id in the file.
    #[serde(default)]
    pub first_id: Option<u32>,
    /// Nodes that stay at their placement whatever the model (e.g. the static endpoints of a
    /// field of mobile relays). Default none.
    #[serde(default)]
    pub fixed: Option<Vec<u32>>,
}

/// Placement kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PlacementKind {
    /// `positions` lists every node's [x, y].
    Explicit,
    /// Row by row on a grid of `columns` columns, `spacing` apart, from the origin.
    Grid,
    /// Independently and uniformly in the rectangle `area` = [width, height] from the origin
    /// (the scenario's own random stream: the same for every transport and sweep value).
    Uniform,
}

/// Initial node placement. Which keys apply depends on `kind`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// "explicit", "grid" or "uniform".
    pub kind: PlacementKind,
    /// explicit: one [x, y] per node, e.g. [["0m", "0m"], ["200m", "0m"]].
    #[serde(default, deserialize_with = "pair::opt_pairs")]
    pub positions: Option<Vec<[Meters; 2]>>,
    /// grid: number of columns (default ⌈√count⌉).
    #[serde(default)]
    pub columns: Option<u32>,
    /// grid: distance between neighbours.
    #[serde(default)]
    pub spacing: Option<Meters>,
    /// uniform: [width, height] of the area.
    #[serde(default, deserialize_with = "pair::opt_pair")]
    pub area: Option<[Meters; 2]>,
}

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
/// transmitter, DropTail queue and error model.
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

fn default_queue() -> u32 {
    50
}
fn default_mtu() -> Bytes {
    Bytes(tpsim_wire::DEFAULT_MTU as u64)
}

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

/// Reads a scenario's form: TOML syntax, known keys, value types and units. Does not check
/// meaning; see [`load`].
///
/// # Errors
/// A [`ScenarioError`] whose diagnostic names the key and line.
pub fn parse(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
    let e = match toml::from_str::<Scenario>(text) {
        Ok(sc) => return Ok(sc),
        Err(e) => e,
    };
    // Which error: the TOML syntax (reported as such) or a key's value.
    if let Err(e) = toml_edit::ImDocument::parse(text) {
        let (line, column) = e.span().map(|r| error::line_col(text, r.start)).unwrap_or((0, 0));
        let msg = error::one_line(e.message());
        return Err(ScenarioError {
            source: source.to_string(),
            diagnostics: vec![Diagnostic {
                path: String::new(),
                line,
                column,
                message: format!("malformed TOML: {msg}"),
            }],
        });
    }
    let loc = Locator::new(text);
    Err({
        let (path, line, column) = match e.span() {
            Some(r) => {
                let p = loc.path_at(r.start);
                let (l, c) = error::line_col(text, r.start);
                (error::path_string(&p), l, c)
            }
            None => (String::new(), 0, 0),
        };
        ScenarioError {
            source: source.to_string(),
            diagnostics: vec![Diagnostic {
                path,
                line,
                column,
                message: e.message().trim().to_string(),
            }],
        }
    })
}

/// Reads and validates a scenario.
///
/// # Errors
/// A [`ScenarioError`] listing every problem found, each with its key and line.
pub fn load(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
    let mut sc = parse(text, source)?;
    let loc = Locator::new(text);
    let mut diags = import::resolve(&mut sc, source, &loc);
    if diags.is_empty() {
        diags = validate::validate(&sc, &loc);
    }
    if diags.is_empty() {
        Ok(sc)
    } else {
        Err(ScenarioError {
            source: source.to_string(),
            diagnostics: diags,
        })
    }
}

/// Parses a dotted key path (`flows.0.app.interval`) into segments; numbers are array
/// indices.
pub fn parse_path(path: &str) -> Vec<Seg> {
    path.split('.')
        .map(|p| match p.parse::<usize>() {
            Ok(i) => Seg::Index(i),
            Err(_) => Seg::Key(p.to_string()),
        })
        .collect()
}

/// Returns `text` with each `(path, value)` of `overrides` set (inserting keys that are
/// absent, e.g. an optional `app.stop`), and without its `[sweep]` table if `drop_sweep`.
/// Formatting and comments elsewhere are preserved, so line numbers of untouched keys stay.
///
/// # Errors
/// A [`ScenarioError`] if the text is not TOML, or a path does not lead to a table or array
/// element of the file (`unknown key`), or a value cannot be represented in TOML.
pub fn apply_overrides(
    text: &str,
    source: &str,
    overrides: &[(String, serde_json::Value)],
    drop_sweep: bool,
) -> Result<String, ScenarioError> {
    let fail = |path: &str, message: String| ScenarioError {
        source: source.to_string(),
        diagnostics: vec![Diagnostic {
            path: path.to_string(),
            line: 0,
            column: 0,
            message,
        }],
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| fail("", format!("malformed TOML: {}", error::one_line(e.message()))))?;
    if drop_sweep {
        doc.as_table_mut().remove("sweep");
    }
    for (path, value) in overrides {
        let segs = parse_path(path);
        let v = json_to_toml(value).ok_or_else(|| fail(path, format!("value {value} cannot be written in TOML")))?;
        set_path(doc.as_item_mut(), &segs, v).map_err(|m| fail(path, m))?;
    }
    Ok(doc.to_string())
}

fn json_to_toml(v: &serde_json::Value) -> Option<toml_edit::Value> {
    use serde_json::Value as J;
    Some(match v {
        J::Bool(b) => (*b).into(),
        J::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        J::String(s) => s.as_str().into(),
        J::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for e in a {
                arr.push(json_to_toml(e)?);
            }
            toml_edit::Value::Array(arr)
        }
        J::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, e) in o {
                t.insert(k, json_to_toml(e)?);
            }
            toml_edit::Value::InlineTable(t)
        }
        J::Null => return None,
    })
}

fn set_path(item: &mut toml_edit::Item, segs: &[Seg], v: toml_edit::Value) -> Result<(), String> {
    use toml_edit::Item;
    let Some((first, rest)) = segs.split_first() else {
        return Err("empty key path".into());
    };
    let missing = || {
        format!(
            "unknown key: no `{}` here",
            error::path_string(std::slice::from_ref(first))
        )
    };
    match (item, first) {
        (Item::Table(t), Seg::Key(k)) => {
            if rest.is_empty() {
                let decor = t.get(k).and_then(|i| i.as_value()).map(|old| old.decor().clone());
                let mut v = v;
                if let Some(d) = decor {
                    *v.decor_mut() = d;
                }
                t.insert(k, Item::Value(v));
                Ok(())
            } else {
                if t.get(k).is_none() && matches!(rest.first(), Some(Seg::Key(_))) {
                    // A table the file does not have (`output.positions` without `[output]`):
                    // created, at the end of the file so that other lines keep their numbers;
                    // validation then checks that it is one of the format's tables.
                    t.insert(k, Item::Table(toml_edit::Table::new()));
                }
                set_path(t.get_mut(k).ok_or_else(missing)?, rest, v)
            }
        }
        (Item::ArrayOfTables(a), Seg::Index(i)) => {
            let t = a.get_mut(*i).ok_or_else(missing)?;
            if rest.is_empty() {
                return Err("cannot replace a whole table".into());
            }
            let mut item = Item::Table(std::mem::take(t));
            let r = set_path(&mut item, rest, v);
            if let Item::Table(back) = item {
                *t = back;
            }
            r
        }
        (Item::Value(val), _) => set_value(val, segs, v),
        _ => Err(missing()),
    }
}

fn set_value(val: &mut toml_edit::Value, segs: &[Seg], v: toml_edit::Value) -> Result<(), String> {
    use toml_edit::Value;
    let Some((first, rest)) = segs.split_first() else {
        return Err("empty key path".into());
    };
    let missing = || {
        format!(
            "unknown key: no `{}` here",
            error::path_string(std::slice::from_ref(first))
        )
    };
    let slot: &mut Value = match (val, first) {
        (Value::InlineTable(t), Seg::Key(k)) => {
            if rest.is_empty() {
                t.insert(k, v);
                return Ok(());
            }
            t.get_mut(k).ok_or_else(missing)?
        }
        (Value::Array(a), Seg::Index(i)) => {
            if rest.is_empty() {
                if *i >= a.len() {
                    return Err(missing());
                }
                a.replace(*i, v);
                return Ok(());
            }
            a.get_mut(*i).ok_or_else(missing)?
        }
        _ => return Err(missing()),
    };
    set_value(slot, rest, v)
}

/// The JSON Schema (draft 7) of the scenario format, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

impl Scenario {
    /// The scenario with every default filled in, as JSON (units in canonical form: ns, bps,
    /// B). Used for reports and for the content hash of stored runs.
    pub fn resolved_json(&self) -> String {
        serde_json::to_string(self).expect("scenario serializes")
    }
}
