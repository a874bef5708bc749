//! Assembling a world from a validated scenario, one part at a time: links, radios and the
//! channel, static routes, routing and ARP, beacons, then the flows (endpoints, directions,
//! generators). The order of the first events queued here is part of the results (events at
//! equal times run in insertion order): routing first, then beacons, then flow by flow.
//!
//! # What the world trusts validation for
//!
//! The world indexes its tables with the scenario's numbers without checking them again;
//! `tpsim_scenario::load` refuses every scenario that would break one of these assumptions.
//! Each row names the engine's use, the rule (in tpsim-scenario) and its tests (a test named
//! alone is in tpsim-scenario's `tests/validation.rs`); the property
//! test `tests/accepted_builds.rs` runs random scenarios that `load` accepts through the
//! whole engine.
//!
//! | Engine site | Assumes | Rule (tpsim-scenario) | Tests |
//! |---|---|---|---|
//! | `build_links`: `net.add_interface(l.nodes[end])`; `Paths::compute`, `Net::static_link_routes` | a link's two ends are existing, different nodes | `validate_links`; `[[links]] nodes` holds exactly two elements (`pair.rs`) | scenario `tests/validation.rs` (`a_link_lists_exactly_two_nodes`, `each_index_the_engine_trusts_is_checked`) |
//! | `add_flow`: `net.addrs`, `net.bind`, `source_addr` of `f.src`, `f.dst` | flow ends are nodes | `validate_flow` (`src`, `dst` in range and different) | `each_index_the_engine_trusts_is_checked` |
//! | `add_flow`: `net.addrs(f.dst)[primary]` | `sctp.primary` is one of the destination's addresses | `transports::sctp` (`sctp.primary`) | scenario `tests/sctp_keys.rs` (`primary_must_name_one_of_the_destination_addresses`) |
//! | `RadioMap::new`: `of_node[v]`; `radio_addr_of`: `radios(dst)[0]` | one channel list per node, none empty | `validate_radio_table` (`radio.channels`) | scenario `tests/channels.rs` (`channel_lists_must_fit_the_nodes`), `each_index_the_engine_trusts_is_checked` |
//! | `build_radios`: `mobility[node]`, `powers[node]` | one position per node | `validate_radio_table` (a radio needs `nodes.placement`), `validate_placement` (`positions` per node) | `each_index_the_engine_trusts_is_checked` |
//! | `RadioParams::node_powers` | one transmission range per node | `validate_radio_table` (`node_ranges`: indices in range, a node in one group) | `a_node_has_one_transmission_range` |
//! | `start_beacons`: `rmap.radios(node)` | beacon nodes are nodes with a radio | `validate_beacons` | `each_index_the_engine_trusts_is_checked` |
//! | `background_flows`: `pool[...]` | `exclude` names nodes; at least two left | `validate_background` | `a_background_exclude_names_existing_nodes` |
//! | sensors' flows (added by `import::resolve`) | sink and sensors are nodes | `import::resolve` (`sensors`) | `each_index_the_engine_trusts_is_checked` |
//! | `schedule_faults`: `sc.links[link].nodes`, `link_down[link]`, `node_down[node]` | an event's link and node exist; an interface event's node is an end of its link | `events::validate_events` | scenario `tests/events.rs`, `each_index_the_engine_trusts_is_checked` |
//! | `schedule_faults`: `expect("validated: the node has that radio")` | a radio interface event names a radio the node has: `[radio]` present, `channel` one of the node's (channel 1 without `radio.channels`), given when the node has several | `events::validate_events` | scenario `tests/channels.rs` (`interface_events_*`), engine `tests/accepted_builds.rs` (`known_gaps_are_refused`) |
//!
//! Other `expect`s of the world (`"interface events name an interface"`, `"aodv has a
//! table"`, `"olsr has a table"`, `"peeked"`, `"TxEnd without a packet on the wire"`) state
//! the engine's own invariants, not the scenario's.

use super::{Beacons, Event, RunOptions, World};
use crate::apps::{Apps, GenKind, GenSpec};
use crate::collect::{Collector, DirInfo};
use crate::device::{ErrorModel, P2pDevice};
use crate::energy::EnergyModel;
use crate::metrics::FlowKey;
use crate::net::{link_addr, DeviceRef, Net, RadioMap};
use crate::packet::{PacketArena, NO_DIR};
use crate::sockets::{Addressing, Sockets};
use crate::trace::PcapTracer;
use crate::wifi::{positions, wifi_addr, PriQueue, RadioParams, WifiChannel, WifiDevice, LLC_SNAP_LEN};
use crate::EngineError;
use tpsim_core::{EventQueue, Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};
use tpsim_mac::Dcf;
use tpsim_scenario::topology::Paths;
use tpsim_scenario::{AppKind, Scenario};
use tpsim_transport::tcp::Open;
use tpsim_transport::SocketConfig;
use tpsim_transport::Transport as _;
use tpsim_wire::SizeConvention;

/// Flow `fi`'s start delay: uniform in [0, `jitter`) from its own stream, 0 without a jitter.
fn start_delay(opts: &RunOptions, fi: u32, jitter: Option<tpsim_scenario::Duration>) -> SimDuration {
    match jitter {
        Some(j) if j.0 > 0 => {
            let u = stream(opts, OwnerKind::Flow, fi as u64, Module::AppStart).uniform();
            SimDuration((u * j.0 as f64) as u64)
        }
        _ => SimDuration::ZERO,
    }
}

/// The random stream of (`kind`, `owner_id`, `module`) in run (`opts.seed`, `opts.run`).
fn stream(opts: &RunOptions, kind: OwnerKind, owner_id: u64, module: Module) -> RngStream {
    RngStream::new(StreamKey {
        seed: opts.seed,
        run: opts.run,
        kind,
        owner_id,
        module,
    })
}

impl World {
    /// Builds the world of one run of a validated scenario.
    ///
    /// # Errors
    /// [`EngineError::Io`] if a pcap file cannot be created.
    pub fn build(sc: &Scenario, opts: &RunOptions) -> Result<World, EngineError> {
        let sizes = sc.simulation.sizes.convention();
        let n = sc.nodes.count as usize;
        let dur = SimTime(sc.simulation.duration.0);
        let end_run = dur + sc.simulation.drain.sim();
        let mut net = Net::new(n);
        let mut pcap = PcapTracer::default();
        let links = build_links(sc, opts, sizes, &mut net, &mut pcap)?;
        // The scenario's flows plus its background flows of this replication.
        let all_flows = background_flows(sc, opts.seed, opts.run);
        let mobility = crate::mobility::from_scenario(sc, &positions(sc, opts.seed, opts.run), opts.seed, opts.run);
        let rmap = match &sc.radio {
            Some(radio) => RadioMap::new(n, radio.channels.as_deref()),
            None => RadioMap::default(),
        };
        let (radios, wifi) = match &sc.radio {
            Some(radio) => {
                let (radios, ch) = build_radios(
                    sc, radio, opts, sizes, &rmap, &mobility, &all_flows, &mut net, &mut pcap,
                )?;
                (radios, Some(ch))
            }
            None => (Vec::new(), None),
        };
        let n_radios = rmap.len();
        let paths = Paths::compute(sc.nodes.count, &sc.links);
        net.static_link_routes(sc, &paths);
        let bins = sc.output.timeseries.then_some(sc.output.bin.0);
        let warmup = SimTime(sc.simulation.warmup.0);
        let mut metrics = Collector::new(end_run, warmup, bins);
        metrics.set_devices(links.len() + radios.len());
        // The queues under a discipline: link directions, then radios.
        let aqm_links = links.iter().map(|d| sc.links[d.link as usize].aqm.is_some());
        let aqm_radios = radios.iter().map(|r| r.aqm.is_some());
        for (dev, on) in aqm_links.chain(aqm_radios).enumerate() {
            if on {
                metrics.set_aqm_device(dev);
            }
        }
        let mut world = World {
            now: SimTime::ZERO,
            queue: EventQueue::with_capacity(1024),
            end_run,
            packets: PacketArena::default(),
            net,
            links,
            radios,
            wifi,
            rmap,
            sizes_standard: sizes == SizeConvention::Standard,
            sockets: Sockets::default(),
            apps: Apps::default(),
            aqm_out: Vec::new(),
            energy: sc
                .energy
                .as_ref()
                .map(|e| EnergyModel::new(n, e.initial.0, e.powers(), e.death, metrics.bins())),
            metrics,
            pcap,
            ptrace: sc
                .output
                .keeps_trace()
                .then(|| crate::pkttrace::PacketTrace::new(sc.output.ns2_trace)),
            movie: sc
                .output
                .animation
                .then(|| crate::movie::MovieTrace::new(sc, end_run, mobility.clone())),
            acks: sc.output.ack_samples.then(crate::acktrace::AckTrace::default),
            mobility_init: (sc.output.positions && sc.output.timeseries).then(|| mobility.clone()),
            routing: sc.radio.as_ref().map(|_| {
                let moving = mobility.iter().any(|m| m.max_speed() > 0.0);
                super::RoutingState::new(
                    sc,
                    n_radios,
                    |i| stream(opts, OwnerKind::Node, i, Module::Routing),
                    moving,
                )
            }),
            arp: sc
                .arp
                .as_ref()
                .filter(|_| sc.radio.is_some())
                .map(|a| super::ArpState::new(a, n_radios, |i| stream(opts, OwnerKind::Node, i, Module::Arp))),
            beacons: None,
            faults: None,
            down_times: {
                let mut t: Vec<SimTime> = sc
                    .events
                    .iter()
                    .filter(|e| {
                        matches!(
                            e.kind,
                            tpsim_scenario::FaultKind::LinkDown
                                | tpsim_scenario::FaultKind::InterfaceDown
                                | tpsim_scenario::FaultKind::NodeDown
                        )
                    })
                    .map(|e| SimTime(e.at.0))
                    .collect();
                t.sort();
                t
            },
        };
        if warmup > SimTime::ZERO {
            // Queued first, so it runs before every other event of its instant.
            world.queue.push(warmup, Event::Warmup);
        }
        world.start_routing();
        world.start_beacons(sc, opts, sizes, dur);
        for (fi, f) in all_flows.iter().enumerate() {
            world.add_flow(sc, opts, &paths, fi as u32, f, dur);
        }
        world.schedule_faults(sc);
        Ok(world)
    }

    /// Schedules every beaconing node's first beacon at a uniform offset within one interval
    /// after the start.
    fn start_beacons(&mut self, sc: &Scenario, opts: &RunOptions, sizes: SizeConvention, dur: SimTime) {
        let (Some(b), Some(_)) = (&sc.beacons, &sc.radio) else {
            return;
        };
        let (ip_len, payload) = match sizes {
            SizeConvention::Standard => (b.size.0 as u32 + 28, b.size.0 as u32),
            SizeConvention::Ns2 => (b.size.0 as u32, (b.size.0 as u32).saturating_sub(28)),
        };
        self.beacons = Some(Beacons {
            interval: b.interval.sim(),
            ip_len,
            payload,
            stop: dur,
        });
        let nodes: Vec<u32> = b.nodes.clone().unwrap_or_else(|| (0..sc.nodes.count).collect());
        for node in nodes {
            let mut rng = stream(opts, OwnerKind::Node, node as u64, Module::Traffic);
            let first = SimTime(b.start.0) + SimDuration((rng.uniform() * b.interval.0 as f64) as u64);
            if first < dur {
                // Every radio of the node beacons on its channel.
                for &radio in self.rmap.radios(node) {
                    self.queue.push(first, Event::Beacon { radio });
                }
            }
        }
    }

    /// Adds flow `fi`: endpoint A at its source and B at its destination (ports 49152 + fi and
    /// 1024 + fi), its direction(s) (a voip flow also has B → A) and their generators.
    fn add_flow(
        &mut self,
        sc: &Scenario,
        opts: &RunOptions,
        paths: &Paths,
        fi: u32,
        f: &tpsim_scenario::Flow,
        dur: SimTime,
    ) {
        let sizes = sc.simulation.sizes.convention();
        let primary = f.transport.multihoming(f);
        let multihomed = primary.is_some();
        // The destination's address: the scenario's choice for a multi-homed association; else
        // its first (a link's, if it has one), or its radio's when no links join the two nodes.
        let remote_b = match primary {
            Some(k) => self.net.addrs(f.dst)[k as usize],
            None if self.wifi.is_some() && !paths.reachable(f.src, f.dst) => self.radio_addr_of(f.src, f.dst),
            None => self.net.primary_addr(f.dst),
        };
        let local_a = self.source_addr(f.src, remote_b);
        let (port_a, port_b) = (49152u16.wrapping_add(fi as u16), 1024u16.wrapping_add(fi as u16));
        let two_way = f.app.kind == AppKind::Voip;
        let d_fwd = self.metrics.directions();
        let d_rev = if two_way { d_fwd + 1 } else { NO_DIR };
        let start = SimTime(f.app.start.0) + start_delay(opts, fi, f.app.start_jitter);
        let mk = |local_port, remote_port, mtu, open| {
            let cfg = SocketConfig {
                local_port,
                remote_port,
                sizes,
                mtu,
                draw_seed: StreamKey {
                    seed: opts.seed,
                    run: opts.run,
                    kind: OwnerKind::Flow,
                    owner_id: fi as u64,
                    module: Module::Transport,
                }
                .derive(),
            };
            // The one place a flow's transport is mapped to its socket (docs/adding-a-transport.md).
            f.transport.socket(sc, f, cfg, open, start)
        };
        let mut sock_a = mk(port_a, port_b, min_mtu(sc, paths, f.src, f.dst), Open::Active);
        let mut sock_b = mk(port_b, port_a, min_mtu(sc, paths, f.dst, f.src), Open::Passive);
        if multihomed {
            sock_a.set_addresses(&self.net.addrs(f.src), Some(remote_b));
            sock_b.set_addresses(&self.net.addrs(f.dst), None);
        }
        let (byte_stream, connect) = (sock_a.byte_stream(), sock_a.connection_oriented());
        let send_queue = sock_a.drops_at_send_queue();
        let at = |node, local, remote, tx_dir| Addressing {
            node,
            local,
            remote,
            tx_dir,
        };
        let ep_a = self.sockets.add(at(f.src, local_a, remote_b, d_fwd), sock_a, d_rev);
        let ep_b = self.sockets.add(at(f.dst, remote_b, local_a, d_rev), sock_b, d_fwd);
        let (streams, unordered) = (f.app.streams.unwrap_or(1), f.transport.unordered(f));
        self.sockets.set_streams(ep_a, streams, unordered);
        self.sockets.set_streams(ep_b, streams, unordered);
        if connect {
            // The client opens when its application starts (before the first write).
            self.queue.push(start, Event::Open { ep: ep_a });
        }
        self.net.bind(f.src, port_a, ep_a);
        self.net.bind(f.dst, port_b, ep_b);
        let app = f.app.kind.name();
        let stop = SimTime(f.app.stop.map(|s| s.0).unwrap_or(dur.0));
        let size = f.app.size.map(|s| s.0 as u32).unwrap_or(1000);
        let kind = GenKind::of_app(&f.app);
        let mut directions = vec![(ep_a, f.src, f.dst, "fwd", Module::Traffic)];
        if two_way {
            directions.push((ep_b, f.dst, f.src, "rev", Module::TrafficReverse));
        }
        for (ep, src, dst, direction, module) in directions {
            let dir = self.metrics.add_direction(DirInfo {
                key: FlowKey {
                    flow: fi,
                    direction,
                    src,
                    dst,
                    transport: f.transport.name(),
                    app,
                },
                tx_ep: ep,
                stop,
                total: f.app.bytes.filter(|_| f.app.kind == AppKind::Bulk).map(|b| b.0),
                send_queue,
                paths: if multihomed { self.net.addrs(dst).len() } else { 0 },
            });
            self.sockets.add_direction(dir, byte_stream);
            let rng = stream(opts, OwnerKind::Flow, fi as u64, module);
            let spec = GenSpec {
                dir,
                ep,
                kind,
                size,
                start,
                stop,
                max: f.app.count.unwrap_or(u64::MAX),
            };
            let (gen, first) = self.apps.add(spec, rng);
            if let GenKind::Bulk { .. } = kind {
                self.sockets.set_bulk(ep, gen);
            }
            if let Some(first) = first {
                self.queue.push(first, Event::AppSend { gen });
            }
        }
    }
}

/// Link i's devices 2i (forward, at `nodes[0]`) and 2i + 1 (reverse), each on its own
/// interface (interface index = device index).
fn build_links(
    sc: &Scenario,
    opts: &RunOptions,
    sizes: SizeConvention,
    net: &mut Net,
    pcap: &mut PcapTracer,
) -> Result<Vec<P2pDevice>, EngineError> {
    let mut devices = Vec::with_capacity(2 * sc.links.len());
    for (i, l) in sc.links.iter().enumerate() {
        let i = i as u32;
        let trace = match (&opts.pcap_dir, l.pcap || sc.output.pcap) {
            (Some(dir), true) => Some(pcap.open(dir, i, sizes)?),
            _ => None,
        };
        for end in 0..2u8 {
            let dev = devices.len() as u32;
            let iface = net.add_interface(l.nodes[end as usize], link_addr(i, end), DeviceRef::Link(dev));
            debug_assert_eq!(iface, dev);
            let (loss, drop_list) = if end == 0 {
                (l.loss_forward.unwrap_or(l.loss), l.drop_forward.clone())
            } else {
                (l.loss_reverse.unwrap_or(l.loss), l.drop_reverse.clone())
            };
            devices.push(P2pDevice {
                iface,
                peer: dev ^ 1,
                link: i,
                direction: end,
                rate_bps: l.rate.0,
                delay: l.delay.sim(),
                framing: sizes.p2p_framing(),
                queue: crate::aqm::qdisc(
                    l.aqm.as_ref(),
                    l.queue,
                    l.rate.0,
                    l.mtu.0 as u32 + sizes.p2p_framing(),
                    stream(opts, OwnerKind::Interface, iface as u64, Module::Aqm),
                ),
                ring: std::collections::VecDeque::with_capacity(l.device_queue as usize),
                ring_cap: l.device_queue,
                on_wire: None,
                errors: ErrorModel::new(
                    loss,
                    drop_list,
                    stream(opts, OwnerKind::Interface, iface as u64, Module::ErrorModel),
                ),
                tx_count: 0,
                pcap: trace,
                q_changed: SimTime::ZERO,
                tx_gen: 0,
            });
        }
    }
    Ok(devices)
}

/// One interface and one 802.11 device per radio (`rmap`: by default one per node, all on one
/// channel); static routes on the connectivity graph towards the flows' endpoints' radios.
/// A radio's random streams are keyed by its index (a node's, with one radio per node).
#[allow(clippy::too_many_arguments)]
fn build_radios(
    sc: &Scenario,
    radio: &tpsim_scenario::Radio,
    opts: &RunOptions,
    sizes: SizeConvention,
    rmap: &RadioMap,
    mobility: &[crate::mobility::Mobility],
    flows: &[tpsim_scenario::Flow],
    net: &mut Net,
    pcap: &mut PcapTracer,
) -> Result<(Vec<WifiDevice>, WifiChannel), EngineError> {
    let n = sc.nodes.count as usize;
    let nr = rmap.len();
    let params = RadioParams::from_scenario(radio);
    let dcf_cfg = params.dcf_config(sizes);
    let mut radios = Vec::with_capacity(nr);
    // Interfaces node by node (a node's addresses: its links', then its radios' in channel
    // order), devices by radio.
    let mut ifaces = vec![0; nr];
    for node in 0..n as u32 {
        for &r in rmap.radios(node) {
            ifaces[r as usize] = net.add_interface(node, wifi_addr(r), DeviceRef::Radio(r));
        }
    }
    for r in 0..nr as u32 {
        let node = rmap.node(r);
        let trace = match (&opts.pcap_dir, radio.pcap || sc.output.pcap) {
            (Some(dir), true) => Some(pcap.open_wifi(dir, node, rmap.channels().map(|_| rmap.channel(r)))?),
            _ => None,
        };
        radios.push(WifiDevice {
            iface: ifaces[r as usize],
            node,
            dcf: Dcf::new(dcf_cfg, r, stream(opts, OwnerKind::Node, r as u64, Module::MacBackoff)),
            queue: PriQueue::new(params.queue),
            in_service: None,
            timer_gen: 0,
            timer_at: SimTime::NEVER,
            q_changed: SimTime::ZERO,
            pcap: trace,
            on_air: None,
            dead: false,
            aqm: radio.aqm.as_ref().map(|a| {
                let rng = stream(opts, OwnerKind::Node, r as u64, Module::Aqm);
                let llc = if sizes == SizeConvention::Standard {
                    LLC_SNAP_LEN
                } else {
                    0
                };
                Box::new(crate::aqm::qdisc(
                    Some(a),
                    params.queue as u32,
                    params.data_rate.bps(),
                    tpsim_wire::DEFAULT_MTU + llc,
                    rng,
                ))
            }),
        });
    }
    let powers = params.node_powers(radio, n);
    let by_radio = |r: u32| rmap.node(r) as usize;
    let mut ch = WifiChannel::new(
        params,
        (0..nr as u32).map(|r| powers[by_radio(r)]).collect(),
        (0..nr as u32).map(|r| mobility[by_radio(r)].clone()).collect(),
        (0..nr as u64)
            .map(|i| stream(opts, OwnerKind::Node, i, Module::Channel))
            .collect(),
        (0..nr as u64)
            .map(|i| stream(opts, OwnerKind::Node, i, Module::PhyReception))
            .collect(),
        rmap.channels().map(<[u32]>::to_vec).unwrap_or_default(),
    );
    // Static routes on the connectivity graph, if radio packets are routed by them (one BFS
    // and one next-hop column per destination: not for ad hoc routing).
    let protocol = sc.routing.as_ref().map(|r| r.protocol).unwrap_or_default();
    if protocol == tpsim_scenario::RoutingProtocol::Static {
        let mut ends: Vec<u32> = flows
            .iter()
            .flat_map(|f| [f.src, f.dst])
            .flat_map(|v| rmap.radios(v).iter().copied())
            .collect();
        ends.sort_unstable();
        ends.dedup();
        ch.static_routes(&ends);
    }
    Ok((radios, ch))
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
        let app = b.app(tpsim_scenario::Duration(start));
        flows.push(tpsim_scenario::Flow::new(src, dst, b.transport, app));
    }
    flows
}

/// The smallest MTU of the links on the path from `s` to `d` (the default MTU off links).
fn min_mtu(sc: &Scenario, paths: &Paths, s: u32, d: u32) -> u32 {
    paths
        .path_links(s, d)
        .iter()
        .map(|&l| sc.links[l as usize].mtu.0 as u32)
        .min()
        .unwrap_or(tpsim_wire::DEFAULT_MTU)
}
