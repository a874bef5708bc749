//! The nodes and what moves or drives them: `[nodes]` (placement, mobility), `[background]`,
//! `[beacons]`, `[sensors]` and `[ns2_traffic]`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

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
    /// Mean on period: with `off`, every background flow is an on-off source (`kind =
    /// "on-off"`) at `rate` while on. Default: CBR.
    #[serde(default)]
    pub on: Option<Duration>,
    /// Mean off period of on-off background flows.
    #[serde(default)]
    pub off: Option<Duration>,
    /// Distribution of on-off periods ("exponential", "pareto", "constant"). Default
    /// "exponential".
    #[serde(default)]
    pub distribution: Option<PeriodDistribution>,
    /// Pareto shape of on-off periods. Default 1.5.
    #[serde(default)]
    pub shape: Option<f64>,
}

impl Background {
    /// The application of a background flow starting at `start`: CBR, or on-off when `on` or
    /// `off` is given.
    pub fn app(&self, start: Duration) -> App {
        let on_off = self.on.is_some() || self.off.is_some();
        App {
            kind: if on_off { AppKind::OnOff } else { AppKind::Cbr },
            size: Some(self.size),
            interval: self.interval,
            rate: self.rate,
            arrivals: Arrivals::Periodic,
            jitter: None,
            count: None,
            bytes: None,
            start,
            start_jitter: None,
            stop: None,
            streams: None,
            on: self.on,
            off: self.off,
            distribution: self.distribution,
            shape: self.shape,
        }
    }
}

pub(crate) fn udp() -> Transport {
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
