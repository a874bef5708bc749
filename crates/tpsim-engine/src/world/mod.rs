//! The world: one run's parts, driven by one event loop.
//!
//! Protocols never see the queue or the clock: the world feeds them inputs with `now`, polls
//! their outputs in a fixed order (`poll_transmit`, `poll_event`, `poll_timeout`) and
//! schedules what they ask for. Everything is owned by index (no `Rc<RefCell<..>>`).
//!
//! Each part is a type of its own with private state, and the files of this module move
//! packets and events between them, one layer each:
//!
//! | part | state | glue |
//! | --- | --- | --- |
//! | applications | [`Apps`] (`apps.rs`) | `transport.rs` |
//! | transport endpoints, byte-stream message tracking | [`Sockets`] (`sockets.rs`) | `transport.rs` |
//! | IP: addresses, routes, forwarding, TTL | [`Net`] (`net.rs`) | `ip.rs` |
//! | point-to-point links | [`P2pDevice`] (`device.rs`) | `links.rs` |
//! | 802.11 devices and the channel | [`WifiDevice`], [`WifiChannel`] (`wifi.rs`) | `radio.rs` |
//! | energy | [`EnergyModel`] (`energy.rs`) | `energy.rs` |
//! | fault events (`[[events]]`) | `Faults` | `events.rs` |
//! | ad hoc routing, ARP | `RoutingState`, `ArpState` | `routing.rs`, `arp.rs` |
//! | metrics | [`Collector`] (`collect.rs`) | every glue file reports to it |
//! | the packet trace's ns-2 part | [`PacketTrace`] (`pkttrace.rs`) | `ns2.rs` |
//!
//! `build.rs` assembles the parts from a scenario; this file holds the event loop and the
//! collection of results.

mod arp;
mod build;
mod energy;
mod events;
mod ip;
mod links;
mod movie;
mod ns2;
mod radio;
mod routing;
mod transport;

use crate::apps::Apps;
use crate::collect::{Collector, NetworkInputs};
use crate::device::P2pDevice;
use crate::energy::EnergyModel;
use crate::metrics::{set_bit, DropReason, RunResult};
use crate::mobility::Mobility;
use crate::net::Net;
use crate::packet::{PacketArena, PacketId, NO_DIR};
use crate::pkttrace::{Layer, PacketTrace, TraceEvent, NO_NODE};
use crate::sockets::Sockets;
use crate::trace::PcapTracer;
use crate::wifi::{WifiChannel, WifiDevice, DEVICE_HOT_LINES};
use crate::EngineError;
use arp::ArpState;
use routing::RoutingState;
pub use routing::CTRL_TYPES;
use tpsim_core::{EventQueue, SimDuration, SimTime};
use tpsim_transport::Transport as _;

/// What happens at an instant. Small and `Copy`; packets live in the arena.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A traffic generator produces its next message.
    AppSend { gen: u32 },
    /// Point-to-point device `dev` finished serializing the packet on its wire.
    /// Point-to-point device `dev` finished serializing the packet on its wire (skipped if
    /// `gen` is stale: a fault event took the packet off).
    TxEnd { dev: u32, gen: u32 },
    /// A packet reaches the receiving point-to-point device `dev` (after propagation), having
    /// left in the link's fault epoch `epoch`.
    Arrive {
        dev: u32,
        pkt: crate::packet::PacketId,
        epoch: u32,
    },
    /// A transport endpoint's deadline (skipped if `gen` is stale).
    SocketTimer { ep: u32, gen: u32 },
    /// A connection-oriented endpoint opens (TCP active open: its SYN goes out).
    Open { ep: u32 },
    /// The deadline of radio `radio`'s 802.11 MAC (skipped if `gen` is stale).
    MacTimer { radio: u32, gen: u32 },
    /// The `k`-th receiver (in arrival order) of air frame `frame` starts to hear it; the
    /// next receivers follow in place while they come before every other event, and then
    /// this event is queued again for the next one (one queued event per frame, not one per
    /// receiver; each receiver still counts as an event executed).
    SignalStart { frame: u32, k: u32 },
    /// ... and stops (the same walk over the signal ends).
    SignalEnd { frame: u32, k: u32 },
    /// Radio `radio` finishes transmitting air frame `frame`.
    AirTxEnd { radio: u32, frame: u32 },
    /// Node `node` runs out of energy (skipped if `gen` is stale).
    EnergyDeath { node: u32, gen: u32 },
    /// A radio's routing protocol deadline (skipped if `gen` is stale).
    RoutingTimer { radio: u32, gen: u32 },
    /// A radio's ARP deadline (skipped if `gen` is stale).
    ArpTimer { radio: u32, gen: u32 },
    /// Radio `radio` sends its next beacon (one-hop broadcast).
    Beacon { radio: u32 },
    /// The warm-up ends: counting starts (`[simulation] warmup`).
    Warmup,
    /// The scenario's fault event `i` (`[[events]]`).
    Fault { i: u32 },
}

/// One pending deadline per node for a per-node protocol (routing, ARP), with a generation
/// per node so that a queued event superseded by a later deadline is skipped when it fires.
struct NodeTimers {
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

/// One-hop broadcast beacons (`[beacons]`).
#[derive(Clone, Copy)]
struct Beacons {
    interval: SimDuration,
    /// IP packet and UDP payload sizes, bytes.
    ip_len: u32,
    payload: u32,
    stop: SimTime,
}

/// One simulation run.
pub struct World {
    now: SimTime,
    queue: EventQueue<Event>,
    end_run: SimTime,
    packets: PacketArena,
    net: Net,
    /// Point-to-point devices: link `i` has devices `2i` (forward) and `2i + 1` (reverse).
    links: Vec<P2pDevice>,
    /// Every 802.11 device, by radio (empty without a radio): by node unless nodes have
    /// radios on several channels (`rmap`).
    radios: Vec<WifiDevice>,
    /// The wireless medium (scenarios with a radio): every channel's radios.
    wifi: Option<WifiChannel>,
    /// Which node owns each radio, on which channel.
    rmap: crate::net::RadioMap,
    /// Whether sizes follow the `standard` convention (802.11 frames then carry LLC/SNAP).
    sizes_standard: bool,
    sockets: Sockets,
    apps: Apps,
    metrics: Collector,
    pcap: PcapTracer,
    /// The per-packet event trace (`[output] trace = true`).
    ptrace: Option<PacketTrace>,
    /// The network movie's trace (`[output] animation = true`).
    movie: Option<crate::movie::MovieTrace>,
    /// The per-ACK samples (`[output] ack_samples = true`).
    acks: Option<crate::acktrace::AckTrace>,
    /// Radio energy accounts (scenarios with `[energy]`).
    energy: Option<EnergyModel>,
    /// Every node's movement as at t = 0, for the positions time series.
    mobility_init: Option<Vec<Mobility>>,
    /// Ad hoc routing, one instance per radio (scenarios with a radio).
    routing: Option<RoutingState>,
    /// Address resolution on the radios (scenarios with `[arp]`).
    arp: Option<ArpState>,
    beacons: Option<Beacons>,
    /// What the scenario's fault events have taken down (scenarios with `[[events]]`).
    faults: Option<events::Faults>,
    /// When links, interfaces or nodes went down (`[[events]]`), in order: the faults a
    /// failover's time is measured from.
    down_times: Vec<SimTime>,
    /// The drops and marks of the last call to a queue discipline (kept to reuse its buffer).
    aqm_out: Vec<tpsim_aqm::Verdict>,
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

impl World {
    /// Streams the run's growing outputs from now on (call before running; see
    /// [`crate::stream`]): the packet trace and its ns-2 text, the per-ACK samples. A stream
    /// for an output the scenario does not produce is dropped; an output without a stream
    /// stays in memory and comes back in [`World::results`].
    pub fn stream(&mut self, mut streams: crate::stream::Streams) {
        let metrics = &self.metrics;
        let keys = || {
            (0..metrics.directions())
                .map(|d| metrics.key(d).clone())
                .collect::<Vec<_>>()
        };
        if let Some(t) = &mut self.ptrace {
            t.stream_to(&mut streams, keys());
        }
        if let (Some(t), Some(sink)) = (&mut self.acks, streams.acks.take()) {
            t.stream_to(sink, keys(), streams.batch_rows);
        }
    }

    /// Runs the event loop to the end of the run (duration + drain).
    pub fn run(&mut self) {
        while !self.run_for(u64::MAX) {}
    }

    /// Runs at most about `events` more events (an air frame's signals may run a few past
    /// it); returns whether the run has ended (then the world is ready for
    /// [`World::results`]). Lets a caller check for an interrupt or a time limit between
    /// slices without anything in the event loop.
    pub fn run_for(&mut self, events: u64) -> bool {
        let until = self.queue.popped().saturating_add(events);
        while let Some(t) = self.queue.peek_time() {
            if t > self.end_run {
                break;
            }
            if self.queue.popped() >= until {
                return false;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.prefetch_next();
            self.begin_event(t);
            match ev {
                Event::AppSend { gen } => self.on_app_send(gen),
                Event::TxEnd { dev, gen } => self.on_tx_end(dev, gen),
                Event::Arrive { dev, pkt, epoch } => self.on_arrive(dev, pkt, epoch),
                Event::SocketTimer { ep, gen } => self.on_socket_timer(ep, gen),
                Event::Open { ep } => self.pump(ep),
                Event::MacTimer { radio, gen } => self.on_mac_timer(radio, gen),
                Event::SignalStart { frame, k } => self.walk_signals(frame, k, false),
                Event::SignalEnd { frame, k } => self.walk_signals(frame, k, true),
                Event::AirTxEnd { radio, frame } => self.on_air_tx_end(radio, frame),
                Event::RoutingTimer { radio, gen } => self.on_routing_timer(radio, gen),
                Event::ArpTimer { radio, gen } => self.on_arp_timer(radio, gen),
                Event::Beacon { radio } => self.on_beacon(radio),
                Event::EnergyDeath { node, gen } => self.on_energy_death(node, gen),
                Event::Warmup => self.on_warmup(),
                Event::Fault { i } => self.on_fault(i),
            }
        }
        self.now = self.end_run;
        self.sample_congestion(SimTime(self.end_run.0.saturating_add(1)));
        true
    }

    /// The event loop's bookkeeping before an event at `t` runs: time-series sampling, the
    /// clock.
    #[inline]
    fn begin_event(&mut self, t: SimTime) {
        if self.metrics.sample_due(t) {
            self.sample_congestion(t);
        }
        self.now = t;
    }

    /// Records every sending transport's congestion state at each bin start before `t`.
    fn sample_congestion(&mut self, t: SimTime) {
        let sockets = &self.sockets;
        self.metrics.sample(t, |ep| sockets.socket(ep).report());
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

    /// The simulated time reached.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// When the run ends: the scenario's duration plus its drain period.
    pub fn end(&self) -> SimTime {
        self.end_run
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    /// Starts the cache misses on the radio the next queued event will use (a sender's
    /// beacon, MAC timer or end of transmission), and, if that event may start a transmission
    /// (a beacon or a MAC timer), on the sender's list of receivers, to overlap with the
    /// current event's work.
    #[inline]
    fn prefetch_next(&self) {
        let (radio, sends) = match self.queue.peek_near() {
            Some(Event::MacTimer { radio, .. }) | Some(Event::Beacon { radio }) => (*radio, true),
            Some(Event::AirTxEnd { radio, .. }) => (*radio, false),
            _ => return,
        };
        if let Some(d) = self.radios.get(radio as usize) {
            tpsim_core::prefetch(d, DEVICE_HOT_LINES);
        }
        if let (true, Some(ch)) = (sends, &self.wifi) {
            ch.prefetch_sender(radio);
        }
    }

    /// The result tables of the run (call after [`World::run`]).
    ///
    /// # Errors
    /// [`EngineError::Io`] if a pcap file cannot be completed.
    pub fn results(&mut self, engine_seconds: f64) -> Result<RunResult, EngineError> {
        self.pcap.finish()?;
        let end = self.end_run;
        // Which packets of each direction still have a copy in the network.
        let mut alive = vec![Vec::new(); self.metrics.directions() as usize];
        for p in self.packets.iter_live() {
            if p.dir != NO_DIR {
                set_bit(&mut alive[p.dir as usize], p.seq as u64);
            }
        }
        let (sockets, metrics) = (&self.sockets, &mut self.metrics);
        let tx_ep = |dir: u32| metrics.tx_endpoint(dir);
        let ends: Vec<_> = (0..metrics.directions())
            .map(|dir| {
                let ep = tx_ep(dir);
                let peer = Sockets::peer(ep);
                (
                    sockets.socket(ep).report(),
                    sockets.socket(peer).report(),
                    sockets.buffered_messages(dir, ep),
                )
            })
            .collect();
        let mut flows = metrics.flow_rows(&alive, |dir| ends[dir as usize].clone());
        // A multi-homed SCTP sender's time to failover: from the last fault before the first new
        // DATA acknowledged on the alternate (docs/metrics.md).
        for f in &mut flows {
            let acked = f.extra.iter().find(|(n, _)| *n == "failover_acked_at_s").map(|e| e.1);
            if let Some(acked) = acked {
                let fault = acked.and_then(|t| {
                    self.down_times
                        .iter()
                        .map(|d| d.as_secs_f64())
                        .rfind(|&d| d <= t)
                        .map(|d| t - d)
                });
                f.extra.push(("failover_time_s", fault));
            }
        }
        self.settle_energy(end);
        let inputs = self.network_inputs();
        let network = self.metrics.network_row(&flows, inputs, self.energy.as_ref());
        self.settle_queues();
        let queues = self.queue_labels();
        let positions = self
            .mobility_init
            .as_mut()
            .map(|ms| move |t: f64| ms.iter_mut().map(|m| m.position(t)).collect::<Vec<_>>());
        let timeseries = self.metrics.series_table(&queues, self.energy.as_ref(), positions);
        let metrics = &self.metrics;
        let keys: Vec<_> = (0..metrics.directions()).map(|d| metrics.key(d)).collect();
        // Streamed outputs are complete once their last rows are out; the others come back.
        let trace = match &mut self.ptrace {
            Some(t) if t.streamed() => t.finish().map(|()| None)?,
            t => t.as_ref().map(|t| t.table(&keys)),
        };
        let acks = match &mut self.acks {
            Some(t) if t.streamed() => t.finish().map(|()| None)?,
            t => t.as_ref().map(|t| t.table(&keys)),
        };
        let animation = self.movie_table();
        Ok(RunResult {
            flows,
            network,
            timeseries,
            trace,
            animation,
            acks,
            engine_seconds,
        })
    }
}

impl World {
    /// Records `event` of packet `id` at `node` in the packet trace, if one is kept and the
    /// packet is counted (see [`crate::pkttrace`]): with the trace off, one branch.
    #[inline]
    fn trace(&mut self, event: TraceEvent, node: u32, layer: Layer, id: PacketId, reason: Option<DropReason>) {
        self.trace_row(event, node, layer, id, reason, false, NO_NODE);
    }

    /// [`Self::trace`] of a receive at `layer` of `node`; `duplicate`: a data packet that
    /// had arrived before.
    #[inline]
    fn trace_receive(&mut self, node: u32, layer: Layer, id: PacketId, duplicate: bool) {
        self.trace_row(TraceEvent::Receive, node, layer, id, None, duplicate, NO_NODE);
    }

    /// [`Self::trace`] with the duplicate flag and, for the ns-2 columns, the other node of
    /// the hop (`NO_NODE`: none or not known).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn trace_row(
        &mut self,
        event: TraceEvent,
        node: u32,
        layer: Layer,
        id: PacketId,
        reason: Option<DropReason>,
        duplicate: bool,
        hop: u32,
    ) {
        if let Some(t) = &mut self.ptrace {
            let p = self.packets.get(id);
            if self.metrics.counted(p.dir, p.seq, self.now) {
                t.record(self.now, event, node, layer, p, reason, duplicate);
                if t.ns2() {
                    t.record_ns2(ns2::ns2_row(
                        &self.packets,
                        &self.net,
                        &self.rmap,
                        self.routing.as_ref(),
                        id,
                        hop,
                    ));
                }
                t.maybe_flush();
            }
        }
    }

    /// The warm-up ends: the collector snapshots every counter it will subtract.
    fn on_warmup(&mut self) {
        let energy_j = self.settle_energy(self.now);
        let inputs = self.network_inputs();
        let sockets = &self.sockets;
        let metrics = &mut self.metrics;
        let tx_eps: Vec<u32> = (0..metrics.directions()).map(|d| metrics.tx_endpoint(d)).collect();
        metrics.end_warmup(inputs, energy_j, |dir| {
            let ep = tx_eps[dir as usize];
            (sockets.socket(ep).report(), sockets.socket(Sockets::peer(ep)).report())
        });
    }

    /// Charges every node's energy account up to `now`; returns the energy consumed by all
    /// nodes so far, J (0 without `[energy]`).
    fn settle_energy(&mut self, now: SimTime) -> f64 {
        let Some(e) = &mut self.energy else { return 0.0 };
        for i in 0..e.nodes.len() {
            e.settle(i, now);
        }
        e.nodes.iter().map(|n| n.consumed_j).sum()
    }

    /// The network counters the other parts keep, since the start of the run.
    fn network_inputs(&self) -> NetworkInputs {
        let mut inputs = NetworkInputs {
            events: self.queue.popped(),
            mac: self.mac_stats(),
            ..NetworkInputs::default()
        };
        if let Some(r) = &self.routing {
            r.report(&mut inputs);
        }
        if let Some(a) = &self.arp {
            (inputs.arp_requests, inputs.arp_replies) = a.counts();
        }
        inputs
    }

    /// Settles every device's queue-length integral at the end of the run.
    fn settle_queues(&mut self) {
        self.settle_link_queues();
        self.settle_radio_queues();
    }

    /// Every device's (link, node, direction) labels in the queue series, in device order: a
    /// link direction's queue ("fwd"/"rev"), then each radio's interface queue ("out"; a
    /// node's further radios "out2", "out3", ...).
    fn queue_labels(&self) -> Vec<(Option<u32>, Option<u32>, &'static str)> {
        let links = self
            .links
            .iter()
            .map(|p| (Some(p.link), None, if p.direction == 0 { "fwd" } else { "rev" }));
        // A node's radios in channel order: "out", "out2", ...
        const OUT: [&str; 8] = ["out", "out2", "out3", "out4", "out5", "out6", "out7", "out8"];
        let radios = self.radios.iter().enumerate().map(|(r, w)| {
            let k = self
                .rmap
                .radios(w.node)
                .iter()
                .position(|&x| x == r as u32)
                .unwrap_or(0);
            (None, Some(w.node), OUT[k.min(OUT.len() - 1)])
        });
        links.chain(radios).collect()
    }
}

/// Convenience: build, run and collect one run.
pub fn run_world(sc: &tpsim_scenario::Scenario, opts: &RunOptions) -> Result<RunResult, EngineError> {
    let mut w = World::build(sc, opts)?;
    let t0 = std::time::Instant::now();
    w.run();
    let secs = t0.elapsed().as_secs_f64();
    w.results(secs)
}
