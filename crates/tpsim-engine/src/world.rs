//! The world: nodes, interfaces, devices, transport endpoints and applications, driven by
//! one event loop.
//!
//! Protocols never see the queue or the clock: the world feeds them inputs with `now`,
//! polls their outputs in a fixed order (`poll_transmit`, `poll_event`, `poll_timeout`) and
//! schedules what they ask for. Everything is owned by index (no `Rc<RefCell<..>>`).

use crate::device::{Device, DropTail, ErrorModel, P2pDevice};
use crate::energy::EnergyModel;
use crate::metrics::{
    jain, nearest_rank, DirStats, DropReason, FlowRow, NetworkRow, RunResult, SeriesTable, N_DROP_REASONS,
};
use crate::packet::{Packet, PacketArena, PacketId, ARP_REQUEST, NO_CTRL, NO_DIR};

mod arp;
mod routing;
use crate::trace::PcapTracer;
use crate::wifi::{
    positions, wifi_addr, wifi_node, AirFrame, AirRx, PriQueue, RadioParams, WifiChannel, WifiDevice, DEVICE_HOT_LINES,
    LLC_SNAP_LEN,
};
use crate::EngineError;
use arp::ArpState;
use routing::RoutingState;
pub use routing::CTRL_TYPES;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use tpsim_core::{EventQueue, Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};
use tpsim_mac::{Dcf, MacEvent, Msdu};
use tpsim_scenario::topology::Paths;
use tpsim_scenario::{AppKind, Arrivals, Scenario};
use tpsim_scenario::{TcpOptions, Transport};
use tpsim_transport::tcp::{LossRecovery, Open};
use tpsim_transport::{Message, Segment, Socket, SocketConfig, TcpConfig, TcpSocket, TransportEvent, UdpSocket};
use tpsim_wire::ip::DEFAULT_TTL;
use tpsim_wire::Ipv4Repr;

/// What happens at an instant. Small and `Copy`; packets live in the arena.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A traffic generator produces its next message.
    AppSend { gen: u32 },
    /// A device finished serializing the packet on its wire.
    TxEnd { dev: u32 },
    /// A packet reaches the receiving device `dev` (after propagation).
    Arrive { dev: u32, pkt: PacketId },
    /// A transport endpoint's deadline (skipped if `gen` is stale).
    SocketTimer { ep: u32, gen: u32 },
    /// A connection-oriented endpoint opens (TCP active open: its SYN goes out).
    Open { ep: u32 },
    /// A MAC's deadline (skipped if `gen` is stale).
    MacTimer { dev: u32, gen: u32 },
    /// The `k`-th receiver (in arrival order) of air frame `frame` starts to hear it; the
    /// next receivers follow in place while they come before every other event, and then
    /// this event is queued again for the next one (one queued event per frame, not one per
    /// receiver; each receiver still counts as an event executed).
    SignalStart { frame: u32, k: u32 },
    /// ... and stops (the same walk over the signal ends).
    SignalEnd { frame: u32, k: u32 },
    /// The sender of air frame `frame` finishes transmitting it.
    AirTxEnd { dev: u32, frame: u32 },
    /// Node `node` runs out of energy (skipped if `gen` is stale).
    EnergyDeath { node: u32, gen: u32 },
    /// A node's routing protocol deadline (skipped if `gen` is stale).
    RoutingTimer { node: u32, gen: u32 },
    /// A node's ARP deadline (skipped if `gen` is stale).
    ArpTimer { node: u32, gen: u32 },
    /// Node `node` sends its next beacon (one-hop broadcast).
    Beacon { node: u32 },
}

/// One pending deadline per node for a per-node protocol (routing, ARP), with a generation
/// per node so that a queued event superseded by a later deadline is skipped when it fires.
pub(super) struct NodeTimers {
    gen: Vec<u32>,
    at: Vec<SimTime>,
}

impl NodeTimers {
    fn new(n: usize) -> NodeTimers {
        NodeTimers {
            gen: vec![0; n],
            at: vec![SimTime::NEVER; n],
        }
    }

    fn len(&self) -> usize {
        self.at.len()
    }

    /// `node`'s event of generation `gen` fired: whether it is the current one (then nothing
    /// is pending any more).
    fn fire(&mut self, node: u32, gen: u32) -> bool {
        if self.gen[node as usize] != gen {
            return false;
        }
        self.at[node as usize] = SimTime::NEVER;
        true
    }

    /// `node`'s protocol next wants to run at `t`: the generation of the event to queue, or
    /// `None` if that deadline is already queued.
    fn arm(&mut self, node: u32, t: SimTime) -> Option<u32> {
        let n = node as usize;
        if t == self.at[n] {
            return None;
        }
        self.at[n] = t;
        self.gen[n] = self.gen[n].wrapping_add(1);
        Some(self.gen[n])
    }
}

/// A route: destination prefix → (interface, next hop).
#[derive(Clone, Copy, Debug)]
struct Route {
    net: u32,
    mask: u32,
    iface: u32,
    /// Resolved directly (no ARP): point-to-point devices need no link address; kept so the
    /// table has the (interface, next hop) form multi-access links will use.
    #[allow(dead_code)]
    next_hop: Ipv4Addr,
}

struct Node {
    ifaces: Vec<u32>,
    addrs: Vec<u32>,
    routes: Vec<Route>,
    /// (local port, endpoint index).
    ports: Vec<(u16, u32)>,
    ident: u16,
}

struct Interface {
    node: u32,
    addr: Ipv4Addr,
    device: u32,
}

struct Endpoint {
    node: u32,
    local: Ipv4Addr,
    remote: Ipv4Addr,
    socket: Socket,
    /// Direction whose data this endpoint sends.
    tx_dir: u32,
    /// Direction whose data this endpoint receives.
    rx_dir: u32,
    timer_gen: u32,
    timer_at: SimTime,
    /// A bulk generator feeding this endpoint whenever its send buffer has room.
    bulk_gen: Option<u32>,
}

#[derive(Clone, Copy)]
enum GenKind {
    Periodic {
        interval: SimDuration,
    },
    /// Each interval drawn uniformly in interval × [1 − jitter, 1 + jitter] (ns-2 CBR
    /// `random_`).
    Jittered {
        interval: SimDuration,
        jitter: f64,
    },
    Poisson {
        mean_s: f64,
    },
    /// Writes `size`-byte messages whenever the transport accepts them; `remaining` bytes
    /// (`None`: unlimited).
    Bulk {
        remaining: Option<u64>,
    },
}

/// Message boundaries of a byte-stream direction (TCP): the transport only reports bytes, so
/// the engine maps stream offsets back to the application's messages.
#[derive(Default)]
struct StreamTrack {
    /// Messages written and not yet delivered, in stream order.
    pending: VecDeque<PendingMsg>,
    /// Stream bytes written by the application so far.
    written: u64,
    /// Stream bytes below this offset have been transmitted at least once.
    sent_upto: u64,
    /// Index in `pending` of the first message whose first byte has not been sent yet.
    unsent: usize,
}

struct PendingMsg {
    start: u64,
    end: u64,
    msg: Message,
    first_tx: SimTime,
}

struct Generator {
    dir: u32,
    ep: u32,
    kind: GenKind,
    size: u32,
    start: SimTime,
    stop: SimTime,
    count: u64,
    /// At most this many messages (cbr `count`).
    max: u64,
    rng: RngStream,
}

struct Dir {
    flow: u32,
    direction: &'static str,
    src: u32,
    dst: u32,
    transport: &'static str,
    app: &'static str,
    tx_ep: u32,
    /// When the application stops generating.
    stop: SimTime,
    stats: DirStats,
    tx_segments: u64,
    rx_segments: u64,
    /// Sum over received segments of the hops they took.
    rx_hops: u64,
    /// Byte-stream message tracking (TCP); `None` for message transports.
    stream: Option<StreamTrack>,
    /// Total bytes of a finite transfer.
    total: Option<u64>,
    /// When the last byte of a finite transfer was delivered.
    done_at: Option<SimTime>,
}

/// A sending TCP's (cwnd bytes, ssthresh bytes if set, SRTT s if measured) at a bin start.
type TcpSample = (f64, Option<f64>, Option<f64>);

struct Series {
    bin: u64,
    n_bins: usize,
    /// [dir][bin] bytes delivered.
    rx_bytes: Vec<Vec<u64>>,
    /// [dir][bin] (sum of delays ns, count).
    delay: Vec<Vec<(u128, u64)>>,
    /// [dev][bin] ∫ waiting packets dt, packet·ns.
    q_area: Vec<Vec<f64>>,
    /// [dir][bin] the sending TCP's state at the start of each bin (empty rows for non-TCP
    /// directions).
    tcp: Vec<Vec<TcpSample>>,
    /// Next bin start at which TCP state is sampled.
    next_sample: SimTime,
    /// Bins sampled so far.
    sampled: usize,
}

/// One simulation run.
pub struct World {
    now: SimTime,
    queue: EventQueue<Event>,
    end_run: SimTime,
    nodes: Vec<Node>,
    ifaces: Vec<Interface>,
    devices: Vec<Device>,
    packets: PacketArena,
    endpoints: Vec<Endpoint>,
    gens: Vec<Generator>,
    dirs: Vec<Dir>,
    drops: [u64; N_DROP_REASONS],
    mac_frames: u64,
    series: Option<Series>,
    pcap: PcapTracer,
    /// The wireless channel (scenarios with a radio).
    wifi: Option<WifiChannel>,
    /// Whether sizes follow the `standard` convention (802.11 frames then carry LLC/SNAP).
    sizes_standard: bool,
    /// Radio energy accounts (scenarios with `[energy]`).
    energy: Option<EnergyModel>,
    /// Every node's movement as at t = 0, for the positions time series.
    mobility_init: Option<Vec<crate::mobility::Mobility>>,
    /// Ad hoc routing of radio nodes (scenarios with a radio).
    routing: Option<RoutingState>,
    /// Address resolution on the radios (scenarios with `[arp]`).
    arp: Option<ArpState>,
    /// Beacons: (interval, IP size, UDP payload size, stop time).
    beacon: Option<(SimDuration, u32, u32, SimTime)>,
    broadcasts_sent: u64,
    broadcast_receptions: u64,
    /// Broadcast data frames × receivers in decode range (power ≥ receive threshold).
    broadcast_expected: u64,
}

/// Per-run options that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Master seed (normally the scenario's `simulation.seed`).
    pub seed: u64,
    /// Replication index, from 0.
    pub run: u64,
    /// Where to write pcap files (`None`: no pcap even if the scenario asks).
    pub pcap_dir: Option<std::path::PathBuf>,
}

fn link_addr(link: u32, end: u8) -> Ipv4Addr {
    // Link i is the subnet 10.(i / 256).(i % 256).0/24; its ends are .1 and .2.
    Ipv4Addr::new(10, ((link >> 8) & 0xff) as u8, (link & 0xff) as u8, 1 + end)
}

impl World {
    /// Builds the world of one run of a validated scenario.
    ///
    /// # Errors
    /// [`EngineError::Io`] if a pcap file cannot be created.
    pub fn build(sc: &Scenario, opts: &RunOptions) -> Result<World, EngineError> {
        let sizes = sc.simulation.sizes.convention();
        let n = sc.nodes.count as usize;
        let key = |kind, owner_id, module| {
            RngStream::new(StreamKey {
                seed: opts.seed,
                run: opts.run,
                kind,
                owner_id,
                module,
            })
        };
        let mut nodes: Vec<Node> = (0..n)
            .map(|_| Node {
                ifaces: Vec::new(),
                addrs: Vec::new(),
                routes: Vec::new(),
                ports: Vec::new(),
                ident: 0,
            })
            .collect();
        let mut ifaces = Vec::new();
        let mut devices = Vec::new();
        let mut pcap = PcapTracer::default();
        let dur = SimTime(sc.simulation.duration.0);
        let end_run = dur + sc.simulation.drain.sim();

        // Interfaces and devices: link i has interfaces 2i (at nodes[0]) and 2i+1, and
        // devices 2i (forward) and 2i+1 (reverse), each device on its own interface.
        for (i, l) in sc.links.iter().enumerate() {
            let i = i as u32;
            let trace = match (&opts.pcap_dir, l.pcap || sc.output.pcap) {
                (Some(dir), true) => Some(pcap.open(dir, i, sizes)?),
                _ => None,
            };
            for end in 0..2u8 {
                let node = l.nodes[end as usize];
                let iface = ifaces.len() as u32;
                let addr = link_addr(i, end);
                ifaces.push(Interface {
                    node,
                    addr,
                    device: iface,
                });
                nodes[node as usize].ifaces.push(iface);
                nodes[node as usize].addrs.push(u32::from(addr));
                let drop_list = if end == 0 {
                    l.drop_forward.clone()
                } else {
                    l.drop_reverse.clone()
                };
                devices.push(Device::P2p(P2pDevice {
                    iface,
                    peer: iface ^ 1,
                    link: i,
                    direction: end,
                    rate_bps: l.rate.0,
                    delay: l.delay.sim(),
                    framing: sizes.p2p_framing(),
                    queue: DropTail::new(l.queue as usize),
                    on_wire: None,
                    errors: ErrorModel::new(
                        l.loss,
                        drop_list,
                        key(OwnerKind::Interface, iface as u64, Module::ErrorModel),
                    ),
                    tx_count: 0,
                    pcap: trace,
                    q_changed: SimTime::ZERO,
                }));
            }
        }

        // The scenario's flows plus its background flows of this replication.
        let all_flows = background_flows(sc, opts.seed, opts.run);

        // Movement: each node's model, from its own random stream.
        let mobility = crate::mobility::from_scenario(sc, &positions(sc, opts.seed, opts.run), opts.seed, opts.run);

        // Radios: one interface and one 802.11 device per node, on one shared channel.
        let mut wifi = None;
        if let Some(radio) = &sc.radio {
            let params = RadioParams::from_scenario(radio);
            let dcf_cfg = params.dcf_config(sizes);
            let mut dev_of_node = Vec::with_capacity(n);
            for node in 0..n as u32 {
                let iface = ifaces.len() as u32;
                let addr = wifi_addr(node);
                ifaces.push(Interface {
                    node,
                    addr,
                    device: devices.len() as u32,
                });
                nodes[node as usize].ifaces.push(iface);
                nodes[node as usize].addrs.push(u32::from(addr));
                dev_of_node.push(devices.len() as u32);
                let trace = match (&opts.pcap_dir, radio.pcap || sc.output.pcap) {
                    (Some(dir), true) => Some(pcap.open_wifi(dir, node)?),
                    _ => None,
                };
                devices.push(Device::Wifi(WifiDevice {
                    iface,
                    node,
                    dcf: Dcf::new(dcf_cfg, node, key(OwnerKind::Node, node as u64, Module::MacBackoff)),
                    queue: PriQueue::new(params.queue),
                    in_service: None,
                    timer_gen: 0,
                    timer_at: SimTime::NEVER,
                    q_changed: SimTime::ZERO,
                    pcap: trace,
                    on_air: None,
                    dead: false,
                }));
            }
            let mut ch = WifiChannel::new(
                params,
                params.node_powers(radio, n),
                mobility.clone(),
                dev_of_node,
                (0..n as u64)
                    .map(|i| key(OwnerKind::Node, i, Module::Channel))
                    .collect(),
                (0..n as u64)
                    .map(|i| key(OwnerKind::Node, i, Module::PhyReception))
                    .collect(),
            );
            let mut ends: Vec<u32> = all_flows.iter().flat_map(|f| [f.src, f.dst]).collect();
            ends.sort_unstable();
            ends.dedup();
            ch.static_routes(&ends);
            wifi = Some(ch);
        }

        // Static shortest-path routes: one per link subnet, towards the nearer end of it.
        let paths = Paths::compute(sc.nodes.count, &sc.links);
        let iface_on = |node: u32, link: u32| -> u32 {
            if sc.links[link as usize].nodes[0] == node {
                2 * link
            } else {
                2 * link + 1
            }
        };
        for u in 0..n as u32 {
            let mut routes = Vec::with_capacity(sc.links.len());
            for (j, l) in sc.links.iter().enumerate() {
                let j = j as u32;
                let net = u32::from(link_addr(j, 0)) & 0xffff_ff00;
                // The interface towards the subnet: the node's own on a connected link, else
                // the first hop of the shortest path to the link's nearer end.
                let mine = if l.nodes.contains(&u) {
                    iface_on(u, j)
                } else {
                    let (d0, d1) = (paths.distance(u, l.nodes[0]), paths.distance(u, l.nodes[1]));
                    let target = if d1 < d0 { l.nodes[1] } else { l.nodes[0] };
                    match paths.next_hop(u, target) {
                        Some((link, _)) => iface_on(u, link),
                        None => continue,
                    }
                };
                // On a point-to-point link the next hop is the other end's address.
                routes.push(Route {
                    net,
                    mask: 0xffff_ff00,
                    iface: mine,
                    next_hop: ifaces[(mine ^ 1) as usize].addr,
                });
            }
            // Connected routes first, then by link order: deterministic and all /24.
            nodes[u as usize].routes = routes;
        }

        let mut world = World {
            now: SimTime::ZERO,
            queue: EventQueue::with_capacity(1024),
            end_run,
            nodes,
            ifaces,
            devices,
            packets: PacketArena::default(),
            endpoints: Vec::new(),
            gens: Vec::new(),
            dirs: Vec::new(),
            drops: [0; N_DROP_REASONS],
            mac_frames: 0,
            series: None,
            pcap,
            wifi,
            sizes_standard: sizes == tpsim_wire::SizeConvention::Standard,
            energy: sc.energy.as_ref().map(|e| {
                let bins = sc.output.timeseries.then(|| {
                    let bin = sc.output.bin.0.max(1);
                    (bin, end_run.0.div_ceil(bin).max(1) as usize)
                });
                EnergyModel::new(n, e.initial.0, e.powers(), e.death, bins)
            }),
            mobility_init: (sc.output.positions && sc.output.timeseries).then(|| mobility.clone()),
            beacon: None,
            broadcasts_sent: 0,
            broadcast_receptions: 0,
            broadcast_expected: 0,
            routing: sc.radio.as_ref().map(|_| {
                let moving = mobility.iter().any(|m| m.max_speed() > 0.0);
                RoutingState::new(sc, n, |i| key(OwnerKind::Node, i, Module::Routing), moving)
            }),
            arp: sc
                .arp
                .as_ref()
                .filter(|_| sc.radio.is_some())
                .map(|a| ArpState::new(a, n, |i| key(OwnerKind::Node, i, Module::Arp))),
        };
        world.start_routing();
        if let (Some(b), Some(_)) = (&sc.beacons, &sc.radio) {
            let (ip, payload) = match sizes {
                tpsim_wire::SizeConvention::Standard => (b.size.0 as u32 + 28, b.size.0 as u32),
                tpsim_wire::SizeConvention::Ns2 => (b.size.0 as u32, (b.size.0 as u32).saturating_sub(28)),
            };
            world.beacon = Some((b.interval.sim(), ip, payload, dur));
            let nodes: Vec<u32> = b.nodes.clone().unwrap_or_else(|| (0..n as u32).collect());
            for node in nodes {
                let mut rng = key(OwnerKind::Node, node as u64, Module::Traffic);
                let first = SimTime(b.start.0) + SimDuration((rng.uniform() * b.interval.0 as f64) as u64);
                if first < dur {
                    world.queue.push(first, Event::Beacon { node });
                }
            }
        }

        // Flows: endpoint A at src, B at dst; a voip flow has a reverse direction B → A.
        for (fi, f) in all_flows.iter().enumerate() {
            let fi = fi as u32;
            let remote_b = world.primary_addr(f.dst);
            let local_a = world.source_addr(f.src, remote_b);
            let (port_a, port_b) = (49152u16.wrapping_add(fi as u16), 1024u16.wrapping_add(fi as u16));
            let mtu_ab = min_mtu(sc, &paths, f.src, f.dst);
            let mtu_ba = min_mtu(sc, &paths, f.dst, f.src);
            let two_way = f.app.kind == AppKind::Voip;
            let d_fwd = world.dirs.len() as u32;
            let d_rev = if two_way { d_fwd + 1 } else { NO_DIR };
            let ep_a = world.endpoints.len() as u32;
            let ep_b = ep_a + 1;
            let start = SimTime(f.app.start.0);
            let tcp_cfg = tcp_config(f.transport, f.tcp.as_ref());
            let mk = |local_port, remote_port, mtu, open| {
                let cfg = SocketConfig {
                    local_port,
                    remote_port,
                    sizes,
                    mtu,
                };
                match f.transport {
                    Transport::Udp => Socket::Udp(UdpSocket::new(cfg)),
                    _ => Socket::Tcp(TcpSocket::new(cfg, tcp_cfg, open, start)),
                }
            };
            world.endpoints.push(Endpoint {
                node: f.src,
                local: local_a,
                remote: remote_b,
                socket: mk(port_a, port_b, mtu_ab, Open::Active),
                tx_dir: d_fwd,
                rx_dir: d_rev,
                timer_gen: 0,
                timer_at: SimTime::NEVER,
                bulk_gen: None,
            });
            world.endpoints.push(Endpoint {
                node: f.dst,
                local: remote_b,
                remote: local_a,
                socket: mk(port_b, port_a, mtu_ba, Open::Passive),
                tx_dir: d_rev,
                rx_dir: d_fwd,
                timer_gen: 0,
                timer_at: SimTime::NEVER,
                bulk_gen: None,
            });
            if f.transport.is_tcp() {
                // The client opens when its application starts (before the first write).
                world.queue.push(start, Event::Open { ep: ep_a });
            }
            world.nodes[f.src as usize].ports.push((port_a, ep_a));
            world.nodes[f.dst as usize].ports.push((port_b, ep_b));
            let app = match f.app.kind {
                AppKind::Cbr => "cbr",
                AppKind::Voip => "voip",
                AppKind::Bulk => "bulk",
            };
            let stop = SimTime(f.app.stop.map(|s| s.0).unwrap_or(dur.0));
            let size = f.app.size.map(|s| s.0 as u32).unwrap_or(1000);
            let interval = match (f.app.interval, f.app.rate) {
                (Some(iv), _) => iv.sim(),
                (None, Some(r)) => SimDuration::from_secs_f64(size as f64 * 8.0 / r.0 as f64),
                (None, None) => SimDuration::ZERO,
            };
            let kind = match (f.app.kind, f.app.arrivals) {
                (AppKind::Bulk, _) => GenKind::Bulk {
                    remaining: f.app.bytes.map(|b| b.0),
                },
                (_, Arrivals::Periodic) => match f.app.jitter {
                    Some(j) if j > 0.0 => GenKind::Jittered { interval, jitter: j },
                    _ => GenKind::Periodic { interval },
                },
                (_, Arrivals::Poisson) => GenKind::Poisson {
                    mean_s: interval.as_secs_f64(),
                },
            };
            let directions: &[(u32, u32, u32, u32, &'static str, Module)] = if two_way {
                &[
                    (d_fwd, ep_a, f.src, f.dst, "fwd", Module::Traffic),
                    (d_rev, ep_b, f.dst, f.src, "rev", Module::TrafficReverse),
                ]
            } else {
                &[(d_fwd, ep_a, f.src, f.dst, "fwd", Module::Traffic)]
            };
            for &(dir, ep, s, d, name, module) in directions {
                debug_assert_eq!(dir as usize, world.dirs.len());
                world.dirs.push(Dir {
                    flow: fi,
                    direction: name,
                    src: s,
                    dst: d,
                    transport: f.transport.name(),
                    app,
                    tx_ep: ep,
                    stop,
                    stats: DirStats::default(),
                    tx_segments: 0,
                    rx_segments: 0,
                    rx_hops: 0,
                    stream: f.transport.is_tcp().then(StreamTrack::default),
                    total: f.app.bytes.filter(|_| f.app.kind == AppKind::Bulk).map(|b| b.0),
                    done_at: None,
                });
                let gen = world.gens.len() as u32;
                let mut rng = key(OwnerKind::Flow, fi as u64, module);
                let first = match kind {
                    GenKind::Periodic { .. } | GenKind::Jittered { .. } | GenKind::Bulk { .. } => start,
                    GenKind::Poisson { mean_s } => start + SimDuration::from_secs_f64(rng.exponential(mean_s)),
                };
                if let GenKind::Bulk { .. } = kind {
                    world.endpoints[ep as usize].bulk_gen = Some(gen);
                }
                world.gens.push(Generator {
                    dir,
                    ep,
                    kind,
                    size,
                    start,
                    stop,
                    count: 0,
                    max: f.app.count.unwrap_or(u64::MAX),
                    rng,
                });
                if first < stop {
                    world.queue.push(first, Event::AppSend { gen });
                }
            }
        }

        if sc.output.timeseries {
            let bin = sc.output.bin.0.max(1);
            let n_bins = end_run.0.div_ceil(bin).max(1) as usize;
            world.series = Some(Series {
                bin,
                n_bins,
                rx_bytes: vec![vec![0; n_bins]; world.dirs.len()],
                delay: vec![vec![(0, 0); n_bins]; world.dirs.len()],
                q_area: vec![vec![0.0; n_bins]; world.devices.len()],
                tcp: world
                    .dirs
                    .iter()
                    .map(|d| {
                        if d.stream.is_some() {
                            Vec::with_capacity(n_bins)
                        } else {
                            Vec::new()
                        }
                    })
                    .collect(),
                next_sample: SimTime::ZERO,
                sampled: 0,
            });
        }
        Ok(world)
    }

    /// Where a packet from `node` to `dst` goes: (outgoing interface, link-layer destination).
    #[inline]
    fn route(&self, node: u32, dst: Ipv4Addr) -> Option<(u32, u32)> {
        if let (Some(ch), Some(d)) = (&self.wifi, wifi_node(dst)) {
            let hop = ch.next_hop(node, d)?;
            let iface = self.nodes[node as usize].ifaces[0];
            return Some((iface, hop));
        }
        self.lookup(node, dst).map(|iface| (iface, 0))
    }

    fn primary_addr(&self, node: u32) -> Ipv4Addr {
        self.nodes[node as usize]
            .ifaces
            .first()
            .map(|&i| self.ifaces[i as usize].addr)
            .unwrap_or(Ipv4Addr::UNSPECIFIED)
    }

    /// The source address for packets from `node` to `dst`: the address of the outgoing
    /// interface of the route (RFC 1122 §3.3.4.3).
    fn source_addr(&self, node: u32, dst: Ipv4Addr) -> Ipv4Addr {
        match self.route(node, dst) {
            Some((iface, _)) => self.ifaces[iface as usize].addr,
            None => self.primary_addr(node),
        }
    }

    /// Longest-prefix match in `node`'s table: the outgoing interface.
    #[inline]
    fn lookup(&self, node: u32, dst: Ipv4Addr) -> Option<u32> {
        let d = u32::from(dst);
        let mut best: Option<&Route> = None;
        for r in &self.nodes[node as usize].routes {
            if d & r.mask == r.net && best.is_none_or(|b| r.mask > b.mask) {
                best = Some(r);
            }
        }
        best.map(|r| r.iface)
    }

    /// Runs the event loop to the end of the run (duration + drain).
    pub fn run(&mut self) {
        while let Some(t) = self.queue.peek_time() {
            if t > self.end_run {
                break;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.prefetch_next();
            self.begin_event(t);
            match ev {
                Event::AppSend { gen } => self.on_app_send(gen),
                Event::TxEnd { dev } => self.on_tx_end(dev),
                Event::Arrive { dev, pkt } => self.on_arrive(dev, pkt),
                Event::SocketTimer { ep, gen } => {
                    let e = &mut self.endpoints[ep as usize];
                    if e.timer_gen == gen {
                        e.timer_at = SimTime::NEVER;
                        e.socket.on_timeout(t);
                        self.pump(ep);
                    }
                }
                Event::Open { ep } => self.pump(ep),
                Event::MacTimer { dev, gen } => {
                    if let Device::Wifi(d) = &mut self.devices[dev as usize] {
                        if d.timer_gen == gen && !d.dead {
                            d.timer_at = SimTime::NEVER;
                            sync_medium(&mut self.wifi, d);
                            d.dcf.on_timeout(t);
                            self.pump_mac(dev);
                        }
                    }
                }
                Event::SignalStart { frame, k } => self.walk_signals(frame, k, false),
                Event::SignalEnd { frame, k } => self.walk_signals(frame, k, true),
                Event::AirTxEnd { dev, frame } => {
                    if let Device::Wifi(d) = &mut self.devices[dev as usize] {
                        d.on_air = None;
                        let node = d.node;
                        if !self.energy.as_ref().is_some_and(|e| e.dead(node as usize)) {
                            sync_medium(&mut self.wifi, d);
                            if let Some(ch) = &mut self.wifi {
                                ch.set_transmitting(node, false);
                            }
                            d.dcf.on_tx_end(t);
                            self.energy_change(node, |e, now| e.set_tx(node as usize, now, false));
                            self.pump_mac(dev);
                        }
                    }
                    self.air_frame_done(frame);
                }
                Event::RoutingTimer { node, gen } => self.on_routing_timer(node, gen),
                Event::ArpTimer { node, gen } => self.on_arp_timer(node, gen),
                Event::Beacon { node } => self.on_beacon(node),
                Event::EnergyDeath { node, gen } => {
                    if self.energy.as_ref().is_some_and(|e| e.nodes[node as usize].gen == gen) {
                        self.kill_node(node);
                    }
                }
            }
        }
        self.now = self.end_run;
        if self.series.is_some() {
            self.sample_tcp(SimTime(self.end_run.0.saturating_add(1)));
        }
    }

    /// The event loop's bookkeeping before an event at `t` runs: TCP sampling, the clock.
    #[inline]
    fn begin_event(&mut self, t: SimTime) {
        if let Some(sr) = &self.series {
            if t >= sr.next_sample {
                self.sample_tcp(t);
            }
        }
        self.now = t;
    }

    /// Whether the event (`t`, `seq`), whose sequence number was reserved and which was never
    /// queued, runs now in place: it is due within the run and before every queued event. If
    /// so, it counts as executed and the clock moves to `t`.
    #[inline]
    fn take_in_place(&mut self, t: SimTime, seq: u64) -> bool {
        if t > self.end_run || !self.queue.take_if_next(t, seq) {
            return false;
        }
        self.begin_event(t);
        true
    }

    /// Records the TCP state of every byte-stream direction at each bin start before `t`.
    fn sample_tcp(&mut self, t: SimTime) {
        let Some(sr) = &mut self.series else { return };
        while sr.next_sample < t && sr.sampled < sr.n_bins {
            for (i, d) in self.dirs.iter().enumerate() {
                if let Some(tcp) = self.endpoints[d.tx_ep as usize].socket.as_tcp() {
                    let ss = tcp.ssthresh().filter(|&v| v < u64::MAX / 2).map(|v| v as f64);
                    sr.tcp[i].push((tcp.cwnd() as f64, ss, tcp.srtt().map(|r| r.as_secs_f64())));
                }
            }
            sr.sampled += 1;
            sr.next_sample = SimTime(sr.sampled as u64 * sr.bin);
        }
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    /// Starts the cache misses on the device the next queued event will use (a sender's
    /// beacon, MAC timer or end of transmission), and, if that event may start a transmission
    /// (a beacon or a MAC timer), on the sender's list of receivers, to overlap with the
    /// current event's work.
    #[inline]
    fn prefetch_next(&self) {
        // The device, and the sending node if the event may start a transmission.
        let (dev, sender) = match (self.queue.peek_near(), &self.wifi) {
            (Some(Event::MacTimer { dev, .. }), Some(ch)) => {
                let node = ch.node_of_dev.get(*dev as usize).copied();
                (*dev, node.filter(|&n| n != u32::MAX))
            }
            (Some(Event::AirTxEnd { dev, .. }), _) => (*dev, None),
            (Some(Event::Beacon { node }), Some(ch)) => (ch.dev_of_node[*node as usize], Some(*node)),
            _ => return,
        };
        if let Some(d) = self.devices.get(dev as usize) {
            tpsim_core::prefetch(d, DEVICE_HOT_LINES);
        }
        if let (Some(node), Some(ch)) = (sender, &self.wifi) {
            ch.prefetch_sender(node);
        }
    }

    /// Node `node` broadcasts a beacon and schedules the next.
    fn on_beacon(&mut self, node: u32) {
        let now = self.now;
        let Some((interval, ip_len, payload, stop)) = self.beacon else {
            return;
        };
        let next = now + interval;
        if next < stop {
            self.queue.push(next, Event::Beacon { node });
        }
        let Some(ch) = &self.wifi else { return };
        let dev = ch.dev_of_node[node as usize];
        self.broadcasts_sent += 1;
        let ip = Ipv4Repr {
            src: wifi_addr(node),
            dst: Ipv4Addr::BROADCAST,
            protocol: tpsim_wire::IpProtocol::Udp,
            ttl: 1,
            ident: 0,
            total_len: ip_len.min(u16::MAX as u32) as u16,
        };
        let seg = Segment {
            header: tpsim_transport::L4Header::Udp(tpsim_wire::UdpRepr {
                src_port: 9,
                dst_port: 9,
            }),
            payload_len: payload,
            ip_len,
            message: None,
            first_tx: now,
            stream: None,
        };
        let id = self.packets.alloc(Packet {
            ip,
            seg,
            dir: NO_DIR,
            link_dst: tpsim_mac::BROADCAST,
            ctrl: NO_CTRL,
        });
        self.device_enqueue(dev, id);
    }

    fn on_app_send(&mut self, gen: u32) {
        let now = self.now;
        let g = &mut self.gens[gen as usize];
        if now >= g.stop {
            return;
        }
        if let GenKind::Bulk { .. } = g.kind {
            let ep = g.ep;
            self.fill_bulk(gen);
            self.pump(ep);
            return;
        }
        let msg = Message {
            id: g.count,
            len: g.size,
            created: now,
        };
        g.count += 1;
        let next = match g.kind {
            GenKind::Periodic { interval } => g.start + SimDuration(interval.0.saturating_mul(g.count)),
            GenKind::Jittered { interval, jitter } => {
                now + SimDuration::from_secs_f64(
                    interval.as_secs_f64() * g.rng.uniform_range(1.0 - jitter, 1.0 + jitter),
                )
            }
            GenKind::Poisson { mean_s } => now + SimDuration::from_secs_f64(g.rng.exponential(mean_s)),
            GenKind::Bulk { .. } => unreachable!("bulk generators are handled above"),
        };
        let (dir, ep, stop) = (g.dir, g.ep, g.stop);
        if next < stop && g.count < g.max {
            self.queue.push(next, Event::AppSend { gen });
        }
        self.write(ep, dir, msg);
        self.pump(ep);
    }

    /// Hands `msg` to endpoint `ep`'s transport; counts it if accepted (a refused message,
    /// e.g. one that finds a TCP send buffer full, is lost by the application and not counted
    /// as sent).
    fn write(&mut self, ep: u32, dir: u32, msg: Message) -> bool {
        let now = self.now;
        if self.endpoints[ep as usize].socket.send(now, msg).is_err() {
            return false;
        }
        let d = &mut self.dirs[dir as usize];
        d.stats.tx_packets += 1;
        d.stats.tx_bytes += msg.len as u64;
        d.stats.first_send.get_or_insert(now);
        if let Some(st) = &mut d.stream {
            let start = st.written;
            st.written += msg.len as u64;
            st.pending.push_back(PendingMsg {
                start,
                end: st.written,
                msg,
                first_tx: SimTime::NEVER,
            });
        }
        true
    }

    /// Lets a bulk generator write while its transport accepts data; true if it wrote.
    fn fill_bulk(&mut self, gen: u32) -> bool {
        let now = self.now;
        let mut wrote = false;
        loop {
            let g = &self.gens[gen as usize];
            let GenKind::Bulk { remaining } = g.kind else {
                return wrote;
            };
            if now < g.start || now >= g.stop || remaining == Some(0) {
                return wrote;
            }
            let len = remaining.map_or(g.size as u64, |r| r.min(g.size as u64)) as u32;
            let (ep, dir, id) = (g.ep, g.dir, g.count);
            if !self.endpoints[ep as usize].socket.can_send(len) {
                return wrote;
            }
            if !self.write(ep, dir, Message { id, len, created: now }) {
                return wrote;
            }
            wrote = true;
            let g = &mut self.gens[gen as usize];
            g.count += 1;
            if let GenKind::Bulk { remaining: Some(r) } = &mut g.kind {
                *r -= len as u64;
                if *r == 0 {
                    // The whole transfer is written: close our side once it is sent.
                    if let Socket::Tcp(t) = &mut self.endpoints[ep as usize].socket {
                        t.close(now);
                    }
                }
            }
        }
    }

    /// Moves a transport endpoint's outputs where they belong, in the fixed order
    /// poll_transmit, poll_event, poll_timeout.
    fn pump(&mut self, ep: u32) {
        loop {
            self.pump_once(ep);
            let refilled = match self.endpoints[ep as usize].bulk_gen {
                Some(g) => self.fill_bulk(g),
                None => false,
            };
            if !refilled {
                break;
            }
        }
    }

    fn pump_once(&mut self, ep: u32) {
        let now = self.now;
        loop {
            let e = &mut self.endpoints[ep as usize];
            let Some(seg) = e.socket.poll_transmit(now) else { break };
            let (node, src, dst) = (e.node, e.local, e.remote);
            let carries_data = seg.message.is_some() || seg.stream.is_some_and(|d| d.len > 0);
            let dir = if carries_data { e.tx_dir } else { NO_DIR };
            if dir != NO_DIR {
                self.note_first_tx(dir, &seg);
            }
            let n = &mut self.nodes[node as usize];
            n.ident = n.ident.wrapping_add(1);
            let ip = Ipv4Repr {
                src,
                dst,
                protocol: seg.header.protocol(),
                ttl: DEFAULT_TTL,
                ident: n.ident,
                total_len: seg.ip_len.min(u16::MAX as u32) as u16,
            };
            if dir != NO_DIR {
                self.dirs[dir as usize].tx_segments += 1;
            }
            let id = self.packets.alloc(Packet {
                ip,
                seg,
                dir,
                link_dst: 0,
                ctrl: NO_CTRL,
            });
            self.ip_output(node, id);
        }
        while let Some(ev) = self.endpoints[ep as usize].socket.poll_event() {
            match ev {
                TransportEvent::Delivered { message, first_tx } => {
                    let dir = self.endpoints[ep as usize].rx_dir;
                    if dir != NO_DIR {
                        self.on_delivered(dir, message, first_tx);
                    }
                }
                TransportEvent::DeliveredBytes { upto } => {
                    let dir = self.endpoints[ep as usize].rx_dir;
                    if dir != NO_DIR {
                        self.on_stream_delivered(dir, upto);
                    }
                }
                TransportEvent::Connected | TransportEvent::Closed => {}
            }
        }
        let e = &mut self.endpoints[ep as usize];
        if let Some(t) = e.socket.poll_timeout() {
            if t != e.timer_at {
                e.timer_gen = e.timer_gen.wrapping_add(1);
                e.timer_at = t;
                let gen = e.timer_gen;
                self.queue.push(t.max(now), Event::SocketTimer { ep, gen });
            }
        }
    }

    /// Marks when each message's first byte is first put on the network (`net_delay`).
    fn note_first_tx(&mut self, dir: u32, seg: &Segment) {
        let now = self.now;
        let Some(st) = &mut self.dirs[dir as usize].stream else {
            return;
        };
        let Some(data) = seg.stream else { return };
        let upto = data.offset + data.len as u64;
        if upto <= st.sent_upto {
            return;
        }
        st.sent_upto = upto;
        while let Some(m) = st.pending.get_mut(st.unsent) {
            if m.start >= upto {
                break;
            }
            m.first_tx = now;
            st.unsent += 1;
        }
    }

    /// A byte-stream receiver has every byte below `upto`: deliver the messages that end there.
    fn on_stream_delivered(&mut self, dir: u32, upto: u64) {
        loop {
            let Some(st) = &mut self.dirs[dir as usize].stream else {
                return;
            };
            match st.pending.front() {
                Some(m) if m.end <= upto => {}
                _ => return,
            }
            let m = st.pending.pop_front().expect("front");
            st.unsent = st.unsent.saturating_sub(1);
            let first_tx = if m.first_tx == SimTime::NEVER {
                self.now
            } else {
                m.first_tx
            };
            self.on_delivered(dir, m.msg, first_tx);
        }
    }

    fn on_delivered(&mut self, dir: u32, m: Message, first_tx: SimTime) {
        let now = self.now;
        let s = &mut self.dirs[dir as usize].stats;
        if !s.first_delivery(m.id) {
            return;
        }
        let delay = now.saturating_since(m.created).0;
        s.on_delivery(now, m.len, delay, now.saturating_since(first_tx).0);
        let d = &mut self.dirs[dir as usize];
        if d.total.is_some_and(|t| d.stats.rx_bytes >= t) && d.done_at.is_none() {
            d.done_at = Some(now);
        }
        if let Some(sr) = &mut self.series {
            let b = ((now.0 / sr.bin) as usize).min(sr.n_bins - 1);
            sr.rx_bytes[dir as usize][b] += m.len as u64;
            let c = &mut sr.delay[dir as usize][b];
            c.0 += delay as u128;
            c.1 += 1;
        }
    }

    /// Sends a packet originating at (or forwarded by) `node` out of the interface of its route.
    fn ip_output(&mut self, node: u32, id: PacketId) {
        self.ip_output_from(node, id, None);
    }

    /// [`Self::ip_output`] for a packet received from neighbour `prev_hop` (radio forwarding).
    fn ip_output_from(&mut self, node: u32, id: PacketId, prev_hop: Option<u32>) {
        let dst = self.packets.get(id).ip.dst;
        if self.routing.as_ref().is_some_and(|r| r.dynamic()) && wifi_node(dst).is_some() {
            self.route_dynamic(node, id, prev_hop);
            return;
        }
        match self.route(node, dst) {
            Some((iface, link_dst)) => {
                // Only this node holds the packet here: fresh from a transport, or made its
                // own (copy on write) by `ip_input` before the TTL decrement.
                let dev = self.ifaces[iface as usize].device;
                self.packets.get_mut(id).link_dst = link_dst;
                self.device_enqueue(dev, id);
            }
            None => self.drop_packet(id, DropReason::NoRoute),
        }
    }

    /// Hands the next waiting packet to an idle 802.11 MAC.
    fn wifi_serve_next(&mut self, dev: u32) {
        let now = self.now;
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        if d.in_service.is_some() || !d.dcf.ready() || d.dead {
            return;
        }
        if let Some(sr) = &mut self.series {
            q_accumulate(sr, dev, d.queue.len(), &mut d.q_changed, now);
        }
        // Packets that waited longer than the limit are dropped as they reach the head (as
        // ns-3's WifiMacQueue drops those older than its MaxDelay).
        if let Some(max) = self.wifi.as_ref().and_then(|ch| ch.params.queue_max_delay) {
            let deadline = SimTime(now.0.saturating_sub(max.0));
            loop {
                let Device::Wifi(d) = &mut self.devices[dev as usize] else {
                    return;
                };
                let Some(id) = d.queue.pop_queued_before(deadline) else {
                    break;
                };
                self.drop_packet(id, DropReason::QueueTimeout);
            }
        }
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        let Some(id) = d.queue.pop() else { return };
        d.in_service = Some(id);
        let p = self.packets.get(id);
        let llc = if self.sizes_standard { LLC_SNAP_LEN } else { 0 };
        sync_medium(&mut self.wifi, d);
        d.dcf.send(
            now,
            Msdu {
                dst: p.link_dst,
                bytes: p.seg.ip_len + llc,
                handle: id.0 as u64,
            },
        );
        self.pump_mac(dev);
    }

    /// Moves an 802.11 MAC's outputs: frames onto the air, delivered packets up, finished
    /// packets out of the queue; then its deadline.
    fn pump_mac(&mut self, dev: u32) {
        let now = self.now;
        if matches!(&self.devices[dev as usize], Device::Wifi(d) if d.dead) {
            return;
        }
        loop {
            let Device::Wifi(d) = &mut self.devices[dev as usize] else {
                return;
            };
            let Some(frame) = d.dcf.poll_transmit(now) else { break };
            self.start_air(dev, frame);
        }
        loop {
            let Device::Wifi(d) = &mut self.devices[dev as usize] else {
                return;
            };
            let Some(ev) = d.dcf.poll_event() else { break };
            match ev {
                MacEvent::Delivered { handle, src } => {
                    let node = d.node;
                    let id = self.packets.share(PacketId(handle as u32));
                    self.ip_input_from(node, id, Some(src));
                }
                MacEvent::TxOk { handle } => {
                    d.in_service = None;
                    self.packets.release(PacketId(handle as u32));
                }
                MacEvent::TxFailed { handle, .. } => {
                    d.in_service = None;
                    let node = d.node;
                    if let Some(id) = self.link_failed(node, PacketId(handle as u32)) {
                        self.drop_packet(id, DropReason::MacRetry);
                    }
                }
            }
        }
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        if let Some(t) = d.dcf.poll_timeout() {
            if t != d.timer_at {
                d.timer_gen = d.timer_gen.wrapping_add(1);
                d.timer_at = t;
                let gen = d.timer_gen;
                self.queue.push(t.max(now), Event::MacTimer { dev, gen });
            }
        }
        self.wifi_serve_next(dev);
        // Whether signals may skip the device until its next input (see `RadioState`).
        let Device::Wifi(d) = &self.devices[dev as usize] else {
            return;
        };
        let rest = !d.dead && d.in_service.is_none() && d.queue.is_empty() && d.dcf.at_rest();
        if let Some(ch) = &mut self.wifi {
            ch.radios[d.node as usize].set_rest(rest);
        }
    }

    /// Puts a frame on the air: every radio within carrier-sense range that senses it gets a
    /// signal start and end, after the propagation delay.
    fn start_air(&mut self, dev: u32, frame: tpsim_mac::Frame) {
        let now = self.now;
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        let (sender, pcap) = (d.node, d.pcap);
        if let Some(ch) = &mut self.wifi {
            ch.set_transmitting(sender, true);
        }
        if let Some(t) = pcap {
            let pkt = (frame.kind == tpsim_mac::FrameKind::Data).then_some(PacketId(frame.handle as u32));
            self.trace_wifi(t, &frame, pkt);
        }
        self.mac_frames += 1;
        let Some(ch) = &mut self.wifi else { return };
        let slot = match ch.free.pop() {
            Some(s) => s,
            None => {
                ch.frames.push(AirFrame {
                    frame,
                    pkt: None,
                    rx: Vec::new(),
                    shared: None,
                    sent: now,
                    seq0: 0,
                    pending: 0,
                    cut: false,
                });
                ch.frames.len() as u32 - 1
            }
        };
        let pkt = (frame.kind == tpsim_mac::FrameKind::Data).then(|| self.packets.share(PacketId(frame.handle as u32)));
        let mut rx = std::mem::take(&mut ch.frames[slot as usize].rx);
        rx.clear();
        ch.refresh(now);
        let shared = ch.find_receivers(sender, now.as_secs_f64(), &mut rx);
        ch.frames[slot as usize] = AirFrame {
            frame,
            pkt,
            rx,
            shared,
            sent: now,
            seq0: 0,
            pending: 0,
            cut: false,
        };
        let rx = ch.receivers(slot);
        let p = &ch.params;
        if frame.dst == tpsim_mac::BROADCAST
            && frame.kind == tpsim_mac::FrameKind::Data
            && pkt.is_some_and(|id| self.packets.get(id).is_data())
        {
            let thr = p.rx_threshold_w;
            self.broadcast_expected += rx.iter().filter(|r| r.power_w >= thr).count() as u64;
        }
        let airtime = frame.airtime;
        // Each receiver's signal start and end keep the place in the event order they would
        // have if queued now, one by one in signal order (sequence numbers reserved here), but
        // only the first start and the first end are queued: the rest follow in that order.
        // Every receiver's radio record is read at its signal start, and the device of each
        // that may decode the frame at its end (its first lines: the device's and the DCF's
        // hot fields): start their cache misses together now.
        for r in rx {
            ch.prefetch_receiver(r.node);
            if r.power_w >= p.rx_threshold_w {
                tpsim_core::prefetch(
                    &self.devices[ch.dev_of_node[r.node as usize] as usize],
                    DEVICE_HOT_LINES,
                );
            }
        }
        let (n, first) = (rx.len() as u32, rx.first().copied());
        let seq0 = self.queue.reserve(2 * n as u64);
        let af = &mut ch.frames[slot as usize];
        (af.seq0, af.pending) = (seq0, n + 1);
        if let Some(r) = first {
            let ((t0, s0), (t1, s1)) = (af.start_key(&r, 0), af.end_key(&r, 0));
            self.queue
                .push_reserved(t0, s0, Event::SignalStart { frame: slot, k: 0 });
            self.queue.push_reserved(t1, s1, Event::SignalEnd { frame: slot, k: 0 });
        }
        if let Device::Wifi(d) = &mut self.devices[dev as usize] {
            d.on_air = Some(slot);
        }
        self.energy_change(sender, |e, now| e.set_tx(sender as usize, now, true));
        self.queue.push(now + airtime, Event::AirTxEnd { dev, frame: slot });
    }

    /// Signal starts (`ends` false) or ends of air frame `frame` from its `k`-th receiver on,
    /// in arrival order: each runs in place while it comes before every queued event; the walk
    /// is queued again at the first that does not. The frame's slot lives until its last signal
    /// end (k = n − 1), after every start, and that end may release it.
    fn walk_signals(&mut self, frame: u32, mut k: u32, ends: bool) {
        let Some(ch) = &self.wifi else { return };
        let rx = ch.receivers(frame);
        let (n, mut r) = (rx.len() as u32, rx[k as usize]);
        if ends && k == 0 {
            // The radio records were read at the signal starts, a frame's airtime ago: start
            // their misses together again.
            for r in rx {
                ch.prefetch_receiver(r.node);
            }
        }
        if !ends && k == 0 {
            // The routing state the receivers will read when the frame ends, an airtime from
            // now. Here rather than with the radios' and devices' prefetches at the start of
            // the transmission: issued together with those, N = 800 ran 3-7 % slower.
            self.prefetch_routing_rx(frame);
        }
        loop {
            if ends {
                self.on_signal_end(frame, r.node);
            } else {
                self.on_signal_start(frame, r);
            }
            k += 1;
            if k == n {
                return;
            }
            let Some(ch) = &self.wifi else { return };
            r = ch.receivers(frame)[k as usize];
            let af = &ch.frames[frame as usize];
            let (t, seq) = if ends { af.end_key(&r, k) } else { af.start_key(&r, k) };
            if !self.take_in_place(t, seq) {
                let ev = if ends {
                    Event::SignalEnd { frame, k }
                } else {
                    Event::SignalStart { frame, k }
                };
                self.queue.push_reserved(t, seq, ev);
                return;
            }
        }
    }

    /// Receiver `rx` of air frame `frame` starts to hear it. If the medium turns busy, its DCF
    /// is told, unless it is at rest: then the transition is only held at the radio.
    fn on_signal_start(&mut self, frame: u32, rx: AirRx) {
        let now = self.now;
        let AirRx { node, power_w, .. } = rx;
        let Some(ch) = &mut self.wifi else { return };
        let af = &ch.frames[frame as usize];
        let (end, rate) = (now + af.frame.airtime, af.frame.rate);
        if ch.radios[node as usize].dead() {
            return;
        }
        self.energy_change(node, |e, now| e.sense(node as usize, now, true));
        let Some(ch) = &mut self.wifi else { return };
        if ch.signal_start(node, now, frame, power_w, end, rate) != Some(crate::phyrx::Cca::Busy) {
            return;
        }
        let r = &mut ch.radios[node as usize];
        if r.rest() {
            // A DCF at rest only records the transition (`Dcf::at_rest`).
            r.hold(true, now);
            return;
        }
        let dev = ch.dev_of_node[node as usize];
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        sync_medium(&mut self.wifi, d);
        d.dcf.on_medium_busy(now);
        self.pump_mac(dev);
    }

    /// The radio of `node`, a receiver of air frame `frame`, stops hearing it: the reception's
    /// outcome, if any, goes to the DCF, and the medium may turn idle (held at the radio if the
    /// DCF is at rest and nothing was received).
    fn on_signal_end(&mut self, frame: u32, node: u32) {
        let now = self.now;
        let Some(ch) = &mut self.wifi else { return };
        let af = &ch.frames[frame as usize];
        let (f, cut, pkt) = (af.frame, af.cut, af.pkt);
        if ch.radios[node as usize].dead() {
            self.air_frame_done(frame);
            return;
        }
        self.energy_change(node, |e, now| e.sense(node as usize, now, false));
        let Some(ch) = &mut self.wifi else { return };
        let (mut outcome, cca) = ch.signal_end(node, now, frame);
        let r = &mut ch.radios[node as usize];
        // A frame whose sender died while sending it is cut short: nobody decodes it.
        if cut && matches!(outcome, Some(crate::phyrx::RxOutcome::Ok { .. })) {
            outcome = Some(crate::phyrx::RxOutcome::Error);
        }
        if r.rest() && !matches!(outcome, Some(crate::phyrx::RxOutcome::Ok { .. })) {
            // A failed reception at rest only counts and makes the next deferral EIFS
            // (`Dcf::sync_medium`): held like the transitions.
            if outcome == Some(crate::phyrx::RxOutcome::Error) {
                r.hold_rx_error();
            }
            if cca == Some(crate::phyrx::Cca::Idle) {
                r.hold(false, now);
            }
            // Nothing for the DCF: polling a device at rest would find nothing to do either.
            self.air_frame_done(frame);
            return;
        }
        let dev = ch.dev_of_node[node as usize];
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        sync_medium(&mut self.wifi, d);
        match outcome {
            Some(crate::phyrx::RxOutcome::Ok { .. }) => d.dcf.on_rx(now, &f),
            Some(crate::phyrx::RxOutcome::Error) => d.dcf.on_rx_error(now),
            None => {}
        }
        if cca == Some(crate::phyrx::Cca::Idle) {
            d.dcf.on_medium_idle(now);
        }
        if let (Some(crate::phyrx::RxOutcome::Ok { .. }), Some(t)) = (outcome, d.pcap) {
            self.trace_wifi(t, &f, pkt);
        }
        self.pump_mac(dev);
        self.air_frame_done(frame);
    }

    /// Writes frame `f` (carrying packet `pkt`, if DATA) to pcap writer `t`, with the real
    /// bytes of a routing control message.
    fn trace_wifi(&mut self, t: u32, f: &tpsim_mac::Frame, pkt: Option<PacketId>) {
        let p = pkt.map(|id| self.packets.get(id));
        let payload = p
            .filter(|p| p.is_ctrl())
            .and_then(|p| self.routing.as_ref().map(|r| r.payload(p.ctrl)));
        self.pcap.write_wifi(t, self.now, f, p, payload.as_deref());
    }

    /// Applies a state change to node `node`'s energy account (if there is one) and
    /// reschedules its death.
    fn energy_change(&mut self, node: u32, f: impl FnOnce(&mut EnergyModel, SimTime)) {
        let now = self.now;
        let Some(e) = &mut self.energy else { return };
        if e.dead(node as usize) {
            return;
        }
        f(e, now);
        let n = &mut e.nodes[node as usize];
        n.gen = n.gen.wrapping_add(1);
        let gen = n.gen;
        if let Some(t) = e.death_time(node as usize) {
            if t < self.end_run {
                self.queue.push(t.max(now), Event::EnergyDeath { node, gen });
            }
        }
    }

    /// Node `node`'s energy is spent: its radio stops. A frame it is sending is cut short,
    /// its queued packets are dropped (`energy`), and it neither sends nor receives again.
    fn kill_node(&mut self, node: u32) {
        let now = self.now;
        if let Some(e) = &mut self.energy {
            e.kill(node as usize, now);
        }
        let Some(ch) = &mut self.wifi else { return };
        let dev = ch.dev_of_node[node as usize];
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            return;
        };
        d.dead = true;
        let r = &mut ch.radios[node as usize];
        r.set_dead();
        if let Some(slot) = d.on_air {
            ch.frames[slot as usize].cut = true;
        }
        if let Some(sr) = &mut self.series {
            q_accumulate(sr, dev, d.queue.len(), &mut d.q_changed, now);
        }
        let mut doomed: Vec<PacketId> = d.in_service.take().into_iter().collect();
        while let Some(id) = d.queue.pop() {
            doomed.push(id);
        }
        for id in doomed {
            self.drop_packet(id, DropReason::Energy);
        }
    }

    fn air_frame_done(&mut self, frame: u32) {
        let Some(ch) = &mut self.wifi else { return };
        let af = &mut ch.frames[frame as usize];
        af.pending -= 1;
        if af.pending == 0 {
            if let Some(p) = af.pkt.take() {
                self.packets.release(p);
            }
            ch.free.push(frame);
        }
    }

    fn device_enqueue(&mut self, dev: u32, id: PacketId) {
        self.device_enqueue_prio(dev, id, false);
    }

    /// Queues `id` at device `dev`; a radio puts `priority` packets (routing control) at the
    /// head of its queue.
    fn device_enqueue_prio(&mut self, dev: u32, id: PacketId, priority: bool) {
        let now = self.now;
        match &mut self.devices[dev as usize] {
            Device::Wifi(d) => {
                let id = if self.arp.is_some() && !d.dead && self.packets.get(id).link_dst != tpsim_mac::BROADCAST {
                    // RFC 826: a unicast packet needs its next hop's hardware address first.
                    let node = d.node;
                    match self.arp_resolve(node, id) {
                        Some(id) => id,
                        None => return, // held or dropped by ARP
                    }
                } else {
                    id
                };
                self.radio_enqueue(dev, id, priority);
            }
            Device::P2p(d) => {
                if d.on_wire.is_none() {
                    self.start_tx(dev, id);
                    return;
                }
                if let Some(sr) = &mut self.series {
                    q_touch(sr, dev, d, now);
                }
                if let Err(id) = d.queue.push(id) {
                    self.drop_packet(id, DropReason::Queue);
                }
            }
        }
    }

    /// A packet that carries no flow's data from radio node `node` (a routing control message
    /// or ARP, by `ctrl`): `ip_len` bytes on the wire, `payload_len` of them after a UDP
    /// header on `port` (both ends), to `dst` by link address `link_dst`.
    #[allow(clippy::too_many_arguments)]
    fn alloc_control(
        &mut self,
        node: u32,
        dst: Ipv4Addr,
        ttl: u8,
        port: u16,
        payload_len: u32,
        ip_len: u32,
        link_dst: u32,
        ctrl: u32,
    ) -> PacketId {
        let ip = Ipv4Repr {
            src: wifi_addr(node),
            dst,
            protocol: tpsim_wire::IpProtocol::Udp,
            ttl,
            total_len: ip_len.min(u16::MAX as u32) as u16,
            ident: 0,
        };
        let seg = Segment {
            header: tpsim_transport::L4Header::Udp(tpsim_wire::UdpRepr {
                src_port: port,
                dst_port: port,
            }),
            payload_len,
            ip_len,
            message: None,
            first_tx: self.now,
            stream: None,
        };
        self.packets.alloc(Packet {
            ip,
            seg,
            dir: NO_DIR,
            link_dst,
            ctrl,
        })
    }

    /// Puts `id` into radio `dev`'s interface queue (routing control first if `priority`),
    /// past ARP.
    fn radio_enqueue(&mut self, dev: u32, id: PacketId, priority: bool) {
        let now = self.now;
        let Device::Wifi(d) = &mut self.devices[dev as usize] else {
            unreachable!("radio_enqueue on a wire")
        };
        if d.dead {
            self.drop_packet(id, DropReason::Energy);
            return;
        }
        if let Some(sr) = &mut self.series {
            q_accumulate(sr, dev, d.queue.len(), &mut d.q_changed, now);
        }
        if let Err(id) = d.queue.push(id, priority, now) {
            self.drop_packet(id, DropReason::Queue);
            return;
        }
        self.wifi_serve_next(dev);
    }

    fn start_tx(&mut self, dev: u32, id: PacketId) {
        let now = self.now;
        let Device::P2p(d) = &mut self.devices[dev as usize] else {
            unreachable!("start_tx on a radio")
        };
        let p = self.packets.get(id);
        let bits = (p.seg.ip_len as u64 + d.framing as u64) * 8;
        let tx = SimDuration::serialization(bits, d.rate_bps);
        d.on_wire = Some(id);
        self.mac_frames += 1;
        if let Some(t) = d.pcap {
            self.pcap.write(t, now, p);
        }
        self.queue.push(now + tx, Event::TxEnd { dev });
    }

    fn on_tx_end(&mut self, dev: u32) {
        let now = self.now;
        let Device::P2p(d) = &mut self.devices[dev as usize] else {
            unreachable!("TxEnd on a radio")
        };
        let id = d.on_wire.take().expect("TxEnd without a packet on the wire");
        let idx = d.tx_count;
        d.tx_count += 1;
        let lost = d.errors.lose(idx);
        let (peer, delay) = (d.peer, d.delay);
        if let Some(sr) = &mut self.series {
            q_touch(sr, dev, d, now);
        }
        let next = d.queue.pop();
        if lost {
            self.drop_packet(id, DropReason::LinkError);
        } else {
            self.queue.push(now + delay, Event::Arrive { dev: peer, pkt: id });
        }
        if let Some(n) = next {
            self.start_tx(dev, n);
        }
    }

    fn on_arrive(&mut self, dev: u32, id: PacketId) {
        let node = self.ifaces[self.devices[dev as usize].iface() as usize].node;
        self.ip_input(node, id);
    }

    fn ip_input(&mut self, node: u32, id: PacketId) {
        self.ip_input_from(node, id, None);
    }

    /// A packet arrives at `node`, from radio neighbour `prev_hop` if known.
    fn ip_input_from(&mut self, node: u32, id: PacketId, prev_hop: Option<u32>) {
        let (dst, ctrl) = {
            let p = self.packets.get(id);
            (p.ip.dst, p.ctrl)
        };
        if ctrl != NO_CTRL {
            if ctrl >= ARP_REQUEST {
                self.arp_input(node, id);
            } else {
                // Routing control messages go hop by hop: the protocol decides what to resend.
                self.ctrl_input(node, id);
            }
            return;
        }
        let dst = u32::from(dst);
        if dst == u32::MAX {
            // A broadcast data packet (beacon) is counted and not forwarded (no node has the
            // broadcast address, so the node's own addresses need not be looked at).
            self.broadcast_receptions += 1;
            self.packets.release(id);
            return;
        }
        if self.nodes[node as usize].addrs.contains(&dst) {
            self.data_delivered(node, id, prev_hop);
            self.local_deliver(node, id);
            return;
        }
        // Forwarding: RFC 791 §3.2 / RFC 1812 §5.3.1 — decrement TTL, discard at zero.
        let id = self.packets.make_mut(id);
        let p = self.packets.get_mut(id);
        p.ip.ttl = p.ip.ttl.saturating_sub(1);
        if p.ip.ttl == 0 {
            self.drop_packet(id, DropReason::Ttl);
        } else {
            self.ip_output_from(node, id, prev_hop);
        }
    }

    fn local_deliver(&mut self, node: u32, id: PacketId) {
        let p = *self.packets.get(id);
        self.packets.release(id);
        let port = p.seg.header.dst_port();
        let Some(&(_, ep)) = self.nodes[node as usize].ports.iter().find(|(pt, _)| *pt == port) else {
            // No socket bound: not a network drop (cannot happen for validated scenarios).
            return;
        };
        if p.dir != NO_DIR {
            let d = &mut self.dirs[p.dir as usize];
            d.rx_segments += 1;
            // Every forwarding node decremented the TTL once (RFC 791 §3.2).
            d.rx_hops += (DEFAULT_TTL.saturating_sub(p.ip.ttl) as u64) + 1;
        }
        self.endpoints[ep as usize].socket.on_segment(self.now, &p.seg);
        self.pump(ep);
    }

    fn drop_packet(&mut self, id: PacketId, reason: DropReason) {
        let p = self.packets.get(id);
        if !p.is_data() {
            // Routing control packets count in `routing_drops`; ARP packets nowhere.
            if let (true, Some(rt)) = (p.is_ctrl(), &mut self.routing) {
                rt.routing_drops += 1;
            }
            self.packets.release(id);
            return;
        }
        self.drops[reason as usize] += 1;
        let dir = self.packets.get(id).dir;
        if dir != NO_DIR {
            self.dirs[dir as usize].stats.dropped_segments += 1;
        }
        self.packets.release(id);
    }

    /// The result tables of the run (call after [`World::run`]).
    pub fn results(&mut self, engine_seconds: f64) -> Result<RunResult, EngineError> {
        self.pcap.finish()?;
        let end = self.end_run;
        let mut in_flight = vec![0u64; self.dirs.len()];
        for p in self.packets.iter_live() {
            if p.dir != NO_DIR {
                in_flight[p.dir as usize] += 1;
            }
        }
        let ns = 1e9;
        let mut flows = Vec::with_capacity(self.dirs.len());
        let mut goodputs = Vec::with_capacity(self.dirs.len());
        let mut delivered = 0u64;
        for (i, d) in self.dirs.iter_mut().enumerate() {
            let s = &mut d.stats;
            let frac = |a: u64, b: u64| if b > 0 { Some(a as f64 / b as f64) } else { None };
            let pdr = frac(s.rx_packets, s.tx_packets);
            let done_at = d.done_at.unwrap_or(SimTime::NEVER);
            let goodput = s.first_send.and_then(|t0| {
                let t1 = d.stop.min(end).min(done_at);
                let active = t1.saturating_since(t0).as_secs_f64();
                if active > 0.0 {
                    Some(s.rx_bytes as f64 * 8.0 / 1000.0 / active)
                } else {
                    None
                }
            });
            s.delays_ns.sort_unstable();
            let have = s.rx_packets > 0;
            let mean = |sum: u128| {
                if have {
                    Some(sum as f64 / s.rx_packets as f64 / ns)
                } else {
                    None
                }
            };
            let ipdv = if s.rx_packets > 1 {
                Some(s.ipdv_sum_ns as f64 / (s.rx_packets - 1) as f64 / ns)
            } else {
                None
            };
            let buffered = match &d.stream {
                // Byte stream: messages written whose first byte was never sent.
                Some(st) => (st.pending.len() - st.unsent.min(st.pending.len())) as u64,
                None => self.endpoints[d.tx_ep as usize].socket.buffered_messages(),
            };
            let tx_sock = &self.endpoints[d.tx_ep as usize].socket;
            // Endpoints come in pairs (2k at the flow's src, 2k + 1 at its dst).
            let rx_sock = &self.endpoints[(d.tx_ep ^ 1) as usize].socket;
            let (rtt_mean, retrans, acks, timeouts, fast_rtx, rto, gave_up) = match (tx_sock.as_tcp(), rx_sock.as_tcp())
            {
                (Some(t), Some(r)) => {
                    let ts = t.tcp_stats();
                    let rtt = (ts.rtt_samples > 0).then(|| ts.rtt_sum_ns as f64 / ts.rtt_samples as f64 / ns);
                    let rto = Some(t.base_rto().as_secs_f64());
                    (
                        rtt,
                        t.stats().retransmissions,
                        r.stats().ack_segments,
                        ts.timeouts,
                        ts.fast_retransmits,
                        rto,
                        ts.gave_up,
                    )
                }
                _ => (None, 0, 0, 0, 0, None, 0),
            };
            delivered += d.rx_segments;
            if let Some(g) = goodput {
                goodputs.push(g);
            }
            flows.push(FlowRow {
                flow: d.flow,
                direction: d.direction,
                src: d.src,
                dst: d.dst,
                transport: d.transport,
                app: d.app,
                tx_packets: s.tx_packets,
                tx_bytes: s.tx_bytes,
                rx_packets: s.rx_packets,
                rx_bytes: s.rx_bytes,
                pdr,
                loss_rate: pdr.map(|p| 1.0 - p),
                goodput_kbps: goodput,
                delay_mean_s: mean(s.delay_sum_ns),
                delay_p50_s: have.then(|| nearest_rank(&s.delays_ns, 50.0) as f64 / ns),
                delay_p95_s: have.then(|| nearest_rank(&s.delays_ns, 95.0) as f64 / ns),
                delay_max_s: s.delays_ns.last().map(|&m| m as f64 / ns),
                net_delay_mean_s: mean(s.net_delay_sum_ns),
                segment_loss_rate: frac(d.rx_segments, d.tx_segments).map(|r| 1.0 - r),
                jitter_ipdv_s: ipdv,
                jitter_rfc3550_s: (s.rx_packets > 1).then(|| s.jitter_rfc3550_ns / ns),
                rtt_mean_s: rtt_mean,
                retransmissions: retrans,
                rto_timeouts: timeouts,
                fast_retransmits: fast_rtx,
                rto_s: rto,
                gave_up,
                ack_packets: acks,
                ack_overhead: frac(acks, d.tx_segments),
                tx_segments: d.tx_segments,
                rx_segments: d.rx_segments,
                hops_mean: (d.rx_segments > 0).then(|| d.rx_hops as f64 / d.rx_segments as f64),
                dropped_segments: s.dropped_segments,
                in_flight_segments: in_flight[i],
                buffered_packets: buffered,
            });
        }
        let end = self.end_run;
        if let Some(e) = &mut self.energy {
            for i in 0..e.nodes.len() {
                e.settle(i, end);
            }
        }
        let routing_packets = self.routing.as_ref().map(|r| r.routing_packets).unwrap_or(0);
        let mut mac = tpsim_mac::DcfStats::default();
        for d in &self.devices {
            if let Device::Wifi(w) = d {
                let st = w.dcf.stats();
                mac.data_sent += st.data_sent;
                mac.ack_sent += st.ack_sent;
                mac.rts_sent += st.rts_sent;
                mac.cts_sent += st.cts_sent;
                mac.data_retries += st.data_retries;
                mac.ack_timeouts += st.ack_timeouts;
                mac.cts_timeouts += st.cts_timeouts;
                mac.rx_errors += st.rx_errors;
                if let Some(ch) = &self.wifi {
                    // Failed receptions still held at a radio at rest.
                    mac.rx_errors += ch.radios[w.node as usize].held_rx_errors as u64;
                }
            }
        }
        let energy = self.energy.as_ref();
        let total_j = energy.map(|e| e.nodes.iter().map(|n| n.consumed_j).sum::<f64>());
        let network = NetworkRow {
            energy_consumed_j_mean: total_j.zip(energy).map(|(t, e)| t / e.nodes.len().max(1) as f64),
            energy_consumed_j_total: total_j,
            first_node_death_s: energy
                .and_then(|e| e.nodes.iter().filter_map(|n| n.dead_at).min())
                .map(|t| t.as_secs_f64()),
            mac_data_frames: mac.data_sent,
            mac_ack_frames: mac.ack_sent,
            mac_rts_frames: mac.rts_sent,
            mac_cts_frames: mac.cts_sent,
            mac_retransmissions: mac.data_retries,
            mac_ack_timeouts: mac.ack_timeouts,
            mac_cts_timeouts: mac.cts_timeouts,
            mac_rx_errors: mac.rx_errors,
            broadcasts_sent: self.broadcasts_sent,
            broadcast_receptions: self.broadcast_receptions,
            dead_nodes: energy
                .map(|e| e.nodes.iter().filter(|n| n.dead_at.is_some()).count() as u64)
                .unwrap_or(0),
            routing_packets,
            normalized_routing_load: (delivered > 0).then(|| routing_packets as f64 / delivered as f64),
            mac_frames: self.mac_frames,
            mac_load: (delivered > 0).then(|| self.mac_frames as f64 / delivered as f64),
            drops: {
                let mut d = self.drops;
                d[DropReason::Phy as usize] = self.broadcast_expected.saturating_sub(self.broadcast_receptions);
                d
            },
            routing_drops: self.routing.as_ref().map(|r| r.routing_drops).unwrap_or(0),
            arp_requests: self.arp.as_ref().map(|a| a.requests).unwrap_or(0),
            arp_replies: self.arp.as_ref().map(|a| a.replies).unwrap_or(0),
            routing_by_type: self.routing.as_ref().map(|r| r.sent_by_type).unwrap_or_default(),
            route_discovery_latency_s: self.routing.as_ref().and_then(|r| {
                (!r.discovery_latency_s.is_empty())
                    .then(|| r.discovery_latency_s.iter().sum::<f64>() / r.discovery_latency_s.len() as f64)
            }),
            route_discoveries_failed: self.routing.as_ref().map(|r| r.discoveries_failed).unwrap_or(0),
            jain_fairness: jain(&goodputs),
            data_delivered: delivered,
            events: self.queue.popped(),
        };
        let timeseries = self.series_table();
        Ok(RunResult {
            flows,
            network,
            timeseries,
            engine_seconds,
        })
    }

    fn series_table(&mut self) -> SeriesTable {
        let end = self.end_run;
        let mut t = SeriesTable::default();
        let Some(sr) = &mut self.series else { return t };
        for (dev, d) in self.devices.iter_mut().enumerate() {
            match d {
                Device::P2p(p) => q_touch(sr, dev as u32, p, end),
                Device::Wifi(w) => q_accumulate(sr, dev as u32, w.queue.len(), &mut w.q_changed, end),
            }
        }
        let bin_len = |b: usize| -> f64 {
            let start = b as u64 * sr.bin;
            ((start + sr.bin).min(end.0).saturating_sub(start)).max(1) as f64 * 1e-9
        };
        for (i, d) in self.dirs.iter().enumerate() {
            for b in 0..sr.n_bins {
                let time_s = (b as u64 * sr.bin) as f64 * 1e-9;
                t.series.push("goodput_kbps");
                t.flow.push(Some(d.flow));
                t.link.push(None);
                t.node.push(None);
                t.direction.push(d.direction);
                t.time_s.push(time_s);
                t.value.push(Some(sr.rx_bytes[i][b] as f64 * 8.0 / 1000.0 / bin_len(b)));
                let (sum, cnt) = sr.delay[i][b];
                t.series.push("delay_mean_s");
                t.flow.push(Some(d.flow));
                t.link.push(None);
                t.node.push(None);
                t.direction.push(d.direction);
                t.time_s.push(time_s);
                t.value.push((cnt > 0).then(|| sum as f64 / cnt as f64 * 1e-9));
            }
        }
        for (i, d) in self.dirs.iter().enumerate() {
            for (b, &(cwnd, ssthresh, srtt)) in sr.tcp[i].iter().enumerate() {
                let time_s = (b as u64 * sr.bin) as f64 * 1e-9;
                for (name, v) in [
                    ("cwnd_bytes", Some(cwnd)),
                    ("ssthresh_bytes", ssthresh),
                    ("srtt_s", srtt),
                ] {
                    t.series.push(name);
                    t.flow.push(Some(d.flow));
                    t.link.push(None);
                    t.node.push(None);
                    t.direction.push(d.direction);
                    t.time_s.push(time_s);
                    t.value.push(v);
                }
            }
        }
        for (dev, d) in self.devices.iter().enumerate() {
            // A link direction's queue, or a radio's interface queue ("out" of its node).
            let (link, node, direction) = match d {
                Device::P2p(p) => (Some(p.link), None, if p.direction == 0 { "fwd" } else { "rev" }),
                Device::Wifi(w) => (None, Some(w.node), "out"),
            };
            for b in 0..sr.n_bins {
                t.series.push("queue_packets");
                t.flow.push(None);
                t.link.push(link);
                t.node.push(node);
                t.direction.push(direction);
                t.time_s.push((b as u64 * sr.bin) as f64 * 1e-9);
                t.value.push(Some(sr.q_area[dev][b] * 1e-9 / bin_len(b)));
            }
        }
        let node_row = |t: &mut SeriesTable, name: &'static str, node: u32, time_s: f64, v: Option<f64>| {
            t.series.push(name);
            t.flow.push(None);
            t.link.push(None);
            t.node.push(Some(node));
            t.direction.push("");
            t.time_s.push(time_s);
            t.value.push(v);
        };
        if let Some(e) = &self.energy {
            // Energy consumed during each bin, and what is left at its end.
            for (i, row) in e.bins.iter().enumerate() {
                let mut left = e.initial_j;
                for (b, &used) in row.iter().enumerate().take(sr.n_bins) {
                    let time_s = (b as u64 * sr.bin) as f64 * 1e-9;
                    left -= used;
                    let bin_end = SimTime(((b as u64 + 1) * sr.bin).min(end.0));
                    let dead = e.nodes[i].dead_at.is_some_and(|d| d <= bin_end);
                    node_row(&mut t, "energy_consumed_j", i as u32, time_s, Some(used));
                    node_row(
                        &mut t,
                        "energy_residual_j",
                        i as u32,
                        time_s,
                        Some(if dead { 0.0 } else { left.max(0.0) }),
                    );
                }
            }
        }
        if let Some(ms) = &mut self.mobility_init {
            // Positions at each bin start, replayed from the models' initial state.
            for b in 0..sr.n_bins {
                let time_s = (b as u64 * sr.bin) as f64 * 1e-9;
                for (i, m) in ms.iter_mut().enumerate() {
                    let (x, y) = m.position(time_s);
                    node_row(&mut t, "x_m", i as u32, time_s, Some(x));
                    node_row(&mut t, "y_m", i as u32, time_s, Some(y));
                }
            }
        }
        t
    }
}

/// Hands the carrier-sense transitions held back at `d`'s radio (see [`crate::wifi::RadioState`])
/// to its DCF: call before every input to the DCF.
#[inline]
fn sync_medium(wifi: &mut Option<WifiChannel>, d: &mut WifiDevice) {
    if let Some(ch) = wifi {
        if let Some((busy, idle_since, rx_errors)) = ch.radios[d.node as usize].take_held() {
            d.dcf.sync_medium(busy, idle_since, rx_errors);
        }
    }
}

/// Adds `len × (now − last change)` to the queue-length integral, split across bins.
fn q_touch(sr: &mut Series, dev: u32, d: &mut P2pDevice, now: SimTime) {
    q_accumulate(sr, dev, d.queue.len(), &mut d.q_changed, now);
}

/// Adds `len × (now − *changed)` packet·ns to device `dev`'s queue integral, split across
/// bins, and moves `*changed` to `now`. Call before every change of the queue's length.
fn q_accumulate(sr: &mut Series, dev: u32, len: usize, changed: &mut SimTime, now: SimTime) {
    let len = len as f64;
    let mut t = changed.0;
    *changed = now;
    if len == 0.0 {
        return;
    }
    let row = &mut sr.q_area[dev as usize];
    while t < now.0 {
        let b = (t / sr.bin) as usize;
        if b >= sr.n_bins {
            break;
        }
        let bin_end = ((b as u64 + 1) * sr.bin).min(now.0);
        row[b] += len * (bin_end - t) as f64;
        t = bin_end;
    }
}

/// `sc.flows` followed by `[background]`'s random flows for replication (`seed`, `run`),
/// drawn from the scenario's own stream (owner id 1; id 0 places the nodes).
fn background_flows(sc: &Scenario, seed: u64, run: u64) -> Vec<tpsim_scenario::Flow> {
    let mut flows = sc.flows.clone();
    let Some(b) = &sc.background else { return flows };
    let mut rng = RngStream::new(StreamKey {
        seed,
        run,
        kind: OwnerKind::Scenario,
        owner_id: 1,
        module: Module::Traffic,
    });
    let pool: Vec<u32> = (0..sc.nodes.count).filter(|v| !b.exclude.contains(v)).collect();
    if pool.len() < 2 {
        return flows;
    }
    let [lo, hi] = b.start.map(|[a, z]| [a.0, z.0]).unwrap_or([0, 0]);
    for _ in 0..b.flows {
        let src = pool[(rng.next_u64() % pool.len() as u64) as usize];
        let dst = loop {
            let d = pool[(rng.next_u64() % pool.len() as u64) as usize];
            if d != src {
                break d;
            }
        };
        let start = lo + (rng.uniform() * (hi - lo) as f64) as u64;
        flows.push(tpsim_scenario::Flow {
            src,
            dst,
            transport: b.transport,
            app: tpsim_scenario::App {
                kind: AppKind::Cbr,
                size: Some(b.size),
                interval: b.interval,
                rate: b.rate,
                arrivals: Arrivals::Periodic,
                jitter: None,
                count: None,
                bytes: None,
                start: tpsim_scenario::Duration(start),
                stop: None,
            },
            tcp: None,
        });
    }
    flows
}

fn min_mtu(sc: &Scenario, paths: &Paths, s: u32, d: u32) -> u32 {
    paths
        .path_links(s, d)
        .iter()
        .map(|&l| sc.links[l as usize].mtu.0 as u32)
        .min()
        .unwrap_or(tpsim_wire::DEFAULT_MTU)
}

/// Convenience: build, run and collect one run.
pub fn run_world(sc: &Scenario, opts: &RunOptions) -> Result<RunResult, EngineError> {
    let mut w = World::build(sc, opts)?;
    let t0 = std::time::Instant::now();
    w.run();
    let secs = t0.elapsed().as_secs_f64();
    w.results(secs)
}

/// The TCP configuration of a flow: the variant's loss recovery and the scenario's options
/// over the RFC defaults of [`TcpConfig`].
fn tcp_config(t: Transport, o: Option<&TcpOptions>) -> TcpConfig {
    let mut c = TcpConfig {
        recovery: match t {
            Transport::TcpReno => LossRecovery::Reno,
            Transport::TcpTahoe => LossRecovery::Tahoe,
            _ => LossRecovery::NewReno,
        },
        ..TcpConfig::default()
    };
    if let Some(o) = o {
        if let Some(m) = o.mss {
            c.mss_bytes = Some(m.0 as u32);
        }
        if let Some(b) = o.send_buffer {
            c.send_buffer_bytes = b.0 as u32;
        }
        if let Some(b) = o.receive_window {
            c.recv_buffer_bytes = b.0 as u32;
        }
        if let Some(w) = o.initial_window {
            c.initial_window_segments = Some(w);
        }
        if let Some(d) = o.delayed_ack {
            c.delayed_ack = (d.0 > 0).then(|| d.sim());
        }
        c.delayed_ack_segments = o.delayed_ack_segments;
        if let Some(r) = o.min_rto {
            c.min_rto = r.sim();
        }
        if let Some(n) = o.nagle {
            c.nagle = n;
        }
        c.syn_attempts = o.syn_attempts;
        c.data_retries = o.data_retries;
        c.syn_rto = o.syn_rto.map(|d| d.sim());
        if let Some(ts) = o.timestamps {
            c.timestamps = ts;
        }
    }
    c
}
