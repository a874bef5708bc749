//! Ad hoc routing in the world: the per-radio AODV/OLSR state machines (tpsim-routing), the
//! oracle, control packets as real packets (UDP 654/698 in IPv4, queued at the head of the
//! interface queue as ns-2's PriQueue does) and the routing metrics.
//!
//! * A data packet to a radio address asks its protocol instance for a next hop
//!   ([`World::route_dynamic`]); AODV may buffer it during a discovery and release or drop it
//!   later (events).
//! * Control messages are counted as `routing_packets` when a radio sends them (every hop
//!   counted, as ns-2's traces count `RTR` sends); one that is dropped anywhere (queue full,
//!   retry limit, flushed, dead node) counts in `routing_drops`.
//! * MAC feedback: a unicast frame that fails at the retry limit tells the sender's protocol
//!   that the link to its next hop broke (RFC 3561 §6.11 (i), RFC 3626 §13); AODV then flushes
//!   the packets queued to that neighbour (`drops_link_break`).

use super::{Event, NodeTimers, World};
use crate::collect::NetworkInputs;
use crate::metrics::DropReason;
use crate::packet::{PacketId, NO_DIR};
use crate::wifi::{wifi_addr, wifi_radio};
use std::net::Ipv4Addr;
use tpsim_core::{RngStream, SimDuration, SimTime};
use tpsim_routing::aodv::{self, Aodv, AodvConfig, AodvEvent, RouteResult};
use tpsim_routing::olsr::{self, Olsr, OlsrConfig};
use tpsim_routing::{LinkDest, AODV_PORT, OLSR_PORT};
use tpsim_scenario::{RoutingPreset, RoutingProtocol, Scenario};
use tpsim_transport::Header as _;
use tpsim_wire::ip::DEFAULT_TTL;

/// ns-2.35's `DATA_PACKET` list (`common/packet.h`) by packet-type name: the packets whose MAC
/// failure its AODV treats as a link break ([`tpsim_scenario::Ns2Quirk::AodvDataPacketList`]).
const NS2_DATA_PACKET: [&str; 8] = ["tcp", "telnet", "cbr", "audio", "video", "ack", "sctp", "sctp_app1"];

/// A routing control message carried by a packet.
pub(super) enum CtrlMsg {
    Free,
    Aodv(aodv::Message),
    Olsr(olsr::Packet),
}

pub(super) enum Proto {
    Static,
    Oracle,
    Aodv(Vec<Aodv<PacketId>>),
    Olsr(Vec<Olsr>),
}

/// The IPv4 header ns-2's AODV adds to the non-TCP packets a radio originates, bytes.
const IP_HEADER: u32 = tpsim_wire::IPV4_HEADER_LEN;

/// Control message types, in the order of the network row's `routing_by_type`.
pub const CTRL_TYPES: [&str; 6] = ["rreq", "rrep", "rerr", "rrep_ack", "hello", "tc"];

/// Shortest paths on the current connectivity graph.
#[derive(Default)]
pub(super) struct Oracle {
    /// Until when the graph below is current.
    valid_until: SimTime,
    adj: Vec<Vec<u32>>,
    /// `next[dst]`: next hop of every radio towards `dst` (empty: not computed this epoch).
    next: Vec<Vec<u32>>,
}

pub(super) struct RoutingState {
    proto: Proto,
    timers: NodeTimers,
    ctrl: Vec<CtrlMsg>,
    ctrl_free: Vec<u32>,
    routing_packets: u64,
    routing_drops: u64,
    sent_by_type: [u64; 6],
    discovery_latency_s: Vec<f64>,
    discoveries_failed: u64,
    oracle: Oracle,
    /// How long the oracle's graph stays current with moving nodes.
    oracle_period: SimDuration,
    /// Bytes of IP + transport header under the size convention (28 standard, 20 ns-2).
    hdr: u32,
    /// ns-2 sizes with AODV: a radio adds a 20-byte IP header to every packet it originates
    /// that is not TCP (ns-2.35 `AODV::recv`), since ns-2's UDP and CBR sizes carry none.
    ns2_ip_header: bool,
    /// [`tpsim_scenario::Ns2Quirk::AodvDataPacketList`]: MAC failures of data packets outside
    /// ns-2's `DATA_PACKET` list are not link breaks.
    aodv_data_packet_list: bool,
}

impl RoutingState {
    /// The routing of `n` radios (one protocol instance each) for a validated scenario.
    pub fn new(sc: &Scenario, n: usize, key: impl Fn(u64) -> RngStream, moving: bool) -> RoutingState {
        let r = sc.routing.clone();
        let protocol = r.as_ref().map(|r| r.protocol).unwrap_or_default();
        let proto = match protocol {
            RoutingProtocol::Static => Proto::Static,
            RoutingProtocol::Oracle => Proto::Oracle,
            RoutingProtocol::Aodv => {
                let r = r.as_ref().expect("aodv has a table");
                let mut cfg = match r.preset.unwrap_or_default() {
                    RoutingPreset::Rfc => AodvConfig::rfc(),
                    RoutingPreset::Ns2 => AodvConfig::ns2(),
                    RoutingPreset::Ns3 => AodvConfig::ns3(),
                };
                if let Some(h) = r.hello {
                    cfg.hello = h;
                }
                if let Some(j) = r.jitter {
                    cfg.broadcast_jitter = j.sim();
                }
                if let Some(h) = r.hello_interval {
                    cfg.hello_interval = h.sim();
                }
                // One configuration, shared by every agent.
                let cfg = std::sync::Arc::new(cfg);
                Proto::Aodv(
                    (0..n)
                        .map(|i| Aodv::new(cfg.clone(), wifi_addr(i as u32), key(i as u64)))
                        .collect(),
                )
            }
            RoutingProtocol::Olsr => {
                let r = r.as_ref().expect("olsr has a table");
                let mut cfg = OlsrConfig::rfc();
                if let Some(h) = r.hello_interval {
                    cfg.hello_interval = h.sim();
                    cfg.refresh_interval = h.sim();
                    cfg.neighb_hold_time = SimDuration(h.0.saturating_mul(3));
                    cfg.max_jitter = SimDuration(h.0 / 4);
                }
                if let Some(t) = r.tc_interval {
                    cfg.tc_interval = t.sim();
                    cfg.top_hold_time = SimDuration(t.0.saturating_mul(3));
                }
                if let Some(j) = r.jitter {
                    cfg.max_jitter = j.sim();
                }
                Proto::Olsr(
                    (0..n)
                        .map(|i| Olsr::new(cfg, wifi_addr(i as u32), key(i as u64)))
                        .collect(),
                )
            }
        };
        RoutingState {
            proto,
            timers: NodeTimers::new(n),
            ctrl: Vec::new(),
            ctrl_free: Vec::new(),
            routing_packets: 0,
            routing_drops: 0,
            sent_by_type: [0; 6],
            discovery_latency_s: Vec::new(),
            discoveries_failed: 0,
            oracle: Oracle::default(),
            oracle_period: if moving {
                SimDuration::from_millis(500)
            } else {
                SimDuration(u64::MAX)
            },
            hdr: match sc.simulation.sizes.convention() {
                tpsim_wire::SizeConvention::Standard => 28,
                tpsim_wire::SizeConvention::Ns2 => 20,
            },
            ns2_ip_header: sc.simulation.sizes.convention() == tpsim_wire::SizeConvention::Ns2
                && protocol == RoutingProtocol::Aodv,
            aodv_data_packet_list: sc
                .simulation
                .ns2_quirks
                .contains(&tpsim_scenario::Ns2Quirk::AodvDataPacketList),
        }
    }

    /// Whether packets to radio nodes are routed by a protocol (not the static table).
    #[inline]
    pub fn dynamic(&self) -> bool {
        !matches!(self.proto, Proto::Static)
    }

    /// A routing control packet was dropped.
    pub fn count_drop(&mut self) {
        self.routing_drops += 1;
    }

    /// The routing counters of the network row.
    pub fn report(&self, out: &mut NetworkInputs) {
        out.routing_packets = self.routing_packets;
        out.routing_drops = self.routing_drops;
        out.routing_by_type = self.sent_by_type;
        out.route_discoveries_failed = self.discoveries_failed;
        let lat = &self.discovery_latency_s;
        out.route_discovery_latency_s = (lat.len() as u64, lat.iter().sum::<f64>());
    }

    fn store(&mut self, m: CtrlMsg) -> u32 {
        match self.ctrl_free.pop() {
            Some(i) => {
                self.ctrl[i as usize] = m;
                i
            }
            None => {
                self.ctrl.push(m);
                self.ctrl.len() as u32 - 1
            }
        }
    }

    /// The control message of a packet.
    pub fn message(&self, ctrl: u32) -> &CtrlMsg {
        &self.ctrl[ctrl as usize]
    }

    /// The message's bytes (UDP payload), for pcap.
    pub fn payload(&self, ctrl: u32) -> Vec<u8> {
        let mut b = Vec::new();
        match &self.ctrl[ctrl as usize] {
            CtrlMsg::Aodv(m) => m.emit(&mut b),
            CtrlMsg::Olsr(p) => p.emit(&mut b),
            CtrlMsg::Free => {}
        }
        b
    }
}

impl World {
    /// Reuses the control-message slots of packets freed since the last call.
    fn reclaim_ctrl(&mut self) {
        let Some(rt) = &mut self.routing else { return };
        while let Some(c) = self.packets.reclaim_ctrl() {
            rt.ctrl[c as usize] = CtrlMsg::Free;
            rt.ctrl_free.push(c);
        }
    }

    /// Sends a control message from `radio`: a UDP packet at the head of its interface queue.
    fn send_ctrl(&mut self, radio: u32, dest: LinkDest, ttl: u8, msg: CtrlMsg) {
        self.reclaim_ctrl();
        let Some(rt) = &mut self.routing else { return };
        let (len, port, kind) = match &msg {
            CtrlMsg::Aodv(m) => (
                m.wire_len() as u32,
                AODV_PORT,
                match m.kind() {
                    aodv::MessageKind::Rreq => 0,
                    aodv::MessageKind::Rrep => 1,
                    aodv::MessageKind::Rerr => 2,
                    aodv::MessageKind::RrepAck => 3,
                    aodv::MessageKind::Hello => 4,
                },
            ),
            CtrlMsg::Olsr(p) => (p.wire_len() as u32, OLSR_PORT, 5),
            CtrlMsg::Free => return,
        };
        rt.routing_packets += 1;
        match &msg {
            CtrlMsg::Olsr(p) => {
                for m in &p.messages {
                    let k = if matches!(m.body, olsr::Body::Hello(_)) { 4 } else { 5 };
                    rt.sent_by_type[k] += 1;
                }
            }
            _ => rt.sent_by_type[kind] += 1,
        }
        let ctrl = rt.store(msg);
        let (dst, link_dst) = match dest {
            LinkDest::Broadcast => (Ipv4Addr::BROADCAST, tpsim_mac::BROADCAST),
            LinkDest::Unicast(a) => (a, wifi_radio(a).unwrap_or(tpsim_mac::BROADCAST)),
        };
        let ip_len = rt.hdr + len;
        let id = self.alloc_control(radio, dst, ttl, port, len, ip_len, link_dst, ctrl);
        if self.wifi.is_none() {
            self.packets.release(id);
            return;
        }
        self.radio_send(radio, id, true);
    }

    /// Moves a radio's routing outputs: control messages out, released packets on, timers.
    /// Handling an event can make the protocol want to send (a local repair's RREQ), so
    /// both are polled until neither has anything.
    pub(super) fn pump_routing(&mut self, radio: u32) {
        let now = self.now;
        loop {
            let mut progressed = false;
            loop {
                let Some(rt) = &mut self.routing else { return };
                let out = match &mut rt.proto {
                    Proto::Aodv(v) => v[radio as usize]
                        .poll_transmit(now)
                        .map(|o| (o.dest, o.ttl, CtrlMsg::Aodv(o.msg))),
                    Proto::Olsr(v) => v[radio as usize]
                        .poll_transmit(now)
                        .map(|p| (LinkDest::Broadcast, 1, CtrlMsg::Olsr(p))),
                    _ => None,
                };
                let Some((dest, ttl, msg)) = out else { break };
                progressed = true;
                self.send_ctrl(radio, dest, ttl, msg);
            }
            loop {
                let Some(rt) = &mut self.routing else { return };
                let Proto::Aodv(v) = &mut rt.proto else { break };
                let Some(ev) = v[radio as usize].poll_event() else {
                    break;
                };
                progressed = true;
                match ev {
                    AodvEvent::Release { packet, next_hop } => self.forward_to(radio, packet, next_hop),
                    AodvEvent::Drop { packet, .. } => {
                        self.drop_packet(self.rmap.node(radio), packet, DropReason::NoRoute)
                    }
                    AodvEvent::RouteFound { latency, .. } => rt.discovery_latency_s.push(latency.as_secs_f64()),
                    AodvEvent::DiscoveryFailed { .. } => rt.discoveries_failed += 1,
                    AodvEvent::LinkBroken { next_hop } => {
                        if let Some(hop) = wifi_radio(next_hop) {
                            self.flush_queue_to(radio, hop);
                        }
                    }
                }
            }
            if !progressed {
                break;
            }
        }
        let Some(rt) = &mut self.routing else { return };
        let t = match &rt.proto {
            Proto::Aodv(v) => v[radio as usize].poll_timeout(),
            Proto::Olsr(v) => v[radio as usize].poll_timeout(),
            _ => None,
        };
        if let Some(t) = t {
            if let Some(gen) = rt.timers.arm(radio, t) {
                self.queue.push(t.max(now), Event::RoutingTimer { radio, gen });
            }
        }
    }

    /// Starts every radio's routing (first HELLOs, timers).
    pub(super) fn start_routing(&mut self) {
        let n = self.routing.as_ref().map(|r| r.timers.len()).unwrap_or(0);
        for radio in 0..n as u32 {
            self.pump_routing(radio);
        }
    }

    /// A routing timer fired.
    pub(super) fn on_routing_timer(&mut self, radio: u32, gen: u32) {
        let now = self.now;
        let dead = self.node_dead(self.rmap.node(radio));
        let Some(rt) = &mut self.routing else { return };
        if dead || !rt.timers.fire(radio, gen) {
            return;
        }
        match &mut rt.proto {
            Proto::Aodv(v) => v[radio as usize].on_timeout(now),
            Proto::Olsr(v) => v[radio as usize].on_timeout(now),
            _ => return,
        }
        self.pump_routing(radio);
    }

    /// Sends data packet `id` from `radio` to the neighbour with address `next_hop`.
    fn forward_to(&mut self, radio: u32, id: PacketId, next_hop: Ipv4Addr) {
        let Some(hop) = wifi_radio(next_hop) else {
            self.drop_packet(self.rmap.node(radio), id, DropReason::NoRoute);
            return;
        };
        if self.wifi.is_none() {
            return;
        }
        self.packets.get_mut(id).link_dst = hop;
        self.radio_send(radio, id, false);
    }

    /// Routes a data packet for a radio destination with the radio's protocol. `prev_hop` is
    /// the neighbour it came from (`None` if `radio` originated it).
    pub(super) fn route_dynamic(&mut self, radio: u32, id: PacketId, prev_hop: Option<u32>) {
        let now = self.now;
        let (src, dst) = {
            let p = self.packets.get(id);
            (p.ip.src, p.ip.dst)
        };
        let Some(rt) = &mut self.routing else { return };
        if rt.ns2_ip_header && prev_hop.is_none() {
            // Originated here (fresh from a transport: this radio holds the only reference).
            let p = self.packets.get_mut(id);
            if !p.seg.header.ns2_counts_ip_header() {
                p.seg.ip_len += IP_HEADER;
                p.ip.total_len = p.ip.total_len.saturating_add(IP_HEADER as u16);
            }
        }
        match &mut rt.proto {
            Proto::Aodv(v) => {
                match v[radio as usize].route_output(now, prev_hop.map(wifi_addr), src, dst, id) {
                    RouteResult::Forward { next_hop, packet } => self.forward_to(radio, packet, next_hop),
                    RouteResult::Buffered => {}
                    RouteResult::Drop { packet, .. } => {
                        self.drop_packet(self.rmap.node(radio), packet, DropReason::NoRoute)
                    }
                }
                self.pump_routing(radio);
            }
            Proto::Olsr(v) => match v[radio as usize].lookup(dst) {
                Some(next_hop) => self.forward_to(radio, id, next_hop),
                None => self.drop_packet(self.rmap.node(radio), id, DropReason::NoRoute),
            },
            Proto::Oracle => {
                let hop = wifi_radio(dst).and_then(|d| self.oracle_next(radio, d));
                match hop {
                    Some(h) => self.forward_to(radio, id, wifi_addr(h)),
                    None => self.drop_packet(self.rmap.node(radio), id, DropReason::NoRoute),
                }
            }
            Proto::Static => {}
        }
    }

    /// Air frame `frame` starts: asks the caches for the AODV state its receivers will read
    /// when it ends, an airtime from now (the addressee of a unicast, data or control; every
    /// receiver of a broadcast control message). A hint only: see [`Aodv::prefetch_message`]
    /// and [`Aodv::prefetch_data`].
    pub(super) fn prefetch_routing_rx(&self, frame: u32) {
        let (Some(ch), Some(rt)) = (&self.wifi, &self.routing) else {
            return;
        };
        let Proto::Aodv(agents) = &rt.proto else {
            return;
        };
        let af = ch.air_frame(frame);
        let Some(id) = af.pkt else {
            return;
        };
        let p = self.packets.get(id);
        let msg = match p.is_ctrl().then(|| &rt.ctrl[p.ctrl as usize]) {
            Some(CtrlMsg::Aodv(m)) => Some(m),
            _ => None,
        };
        if p.link_dst != tpsim_mac::BROADCAST {
            let Some(a) = agents.get(p.link_dst as usize) else {
                return;
            };
            match msg {
                Some(m) => a.prefetch_message(p.ip.src, m),
                None if p.is_data() => a.prefetch_data(wifi_addr(af.frame.src), p.ip.src, p.ip.dst),
                None => {}
            }
        } else if let Some(m) = msg {
            for r in ch.receivers(frame) {
                agents[r.radio as usize].prefetch_message(p.ip.src, m);
            }
        }
    }

    /// A packet for this radio (or broadcast) carrying a control message arrived from
    /// neighbour `from`.
    pub(super) fn ctrl_input(&mut self, radio: u32, id: PacketId) {
        let now = self.now;
        let (ctrl, src, ttl) = {
            let p = self.packets.get(id);
            (p.ctrl, p.ip.src, p.ip.ttl)
        };
        if let Some(rt) = &mut self.routing {
            let RoutingState { proto, ctrl: store, .. } = rt;
            match (proto, &store[ctrl as usize]) {
                (Proto::Aodv(v), CtrlMsg::Aodv(m)) => v[radio as usize].on_message(now, src, ttl, m),
                (Proto::Olsr(v), CtrlMsg::Olsr(p)) => v[radio as usize].on_packet(now, src, p),
                _ => {}
            }
        }
        self.packets.release(id);
        self.pump_routing(radio);
    }

    /// Data for this radio arrived from `prev_hop` (AODV refreshes the route back).
    pub(super) fn data_delivered(&mut self, radio: u32, id: PacketId, prev_hop: Option<u32>) {
        let now = self.now;
        let (Some(rt), Some(prev)) = (&mut self.routing, prev_hop) else {
            return;
        };
        if let Proto::Aodv(v) = &mut rt.proto {
            let src = self.packets.get(id).ip.src;
            v[radio as usize].on_data_delivered(now, wifi_addr(prev), src);
        }
    }

    /// The MAC of `radio` gave up on packet `id` to its next hop. Returns the packet if the
    /// caller must drop it (`drops_mac_retry`), `None` if AODV kept it for a local repair
    /// (RFC 3561 §6.12; it comes back as a release or a drop).
    pub(super) fn link_failed(&mut self, radio: u32, id: PacketId) -> Option<PacketId> {
        let now = self.now;
        let (hop, is_rrep, is_data, dst, hops) = {
            let p = self.packets.get(id);
            let is_rrep = p.is_ctrl()
                && matches!(
                    self.routing.as_ref().map(|r| r.message(p.ctrl)),
                    Some(CtrlMsg::Aodv(aodv::Message::Rrep(_)))
                );
            // A data packet breaks the link; with ns-2.35's quirk only one of its DATA_PACKET
            // types does.
            let breaks = p.is_data()
                && (!self.routing.as_ref().is_some_and(|r| r.aodv_data_packet_list)
                    || NS2_DATA_PACKET.contains(&p.seg.header.ns2_type(p.dir != NO_DIR)));
            (
                p.link_dst,
                is_rrep,
                breaks,
                p.ip.dst,
                DEFAULT_TTL.saturating_sub(p.ip.ttl),
            )
        };
        // Only data frames (and RREPs, for the one-way-link blacklist) tell the protocol
        // about a broken link: RFC 3561 §6.11 detects breaks "while transmitting data", and
        // ns-2's AODV drops failed control packets without declaring a break.
        if hop == tpsim_mac::BROADCAST || !(is_data || is_rrep) {
            return Some(id);
        }
        let Some(rt) = &mut self.routing else { return Some(id) };
        let back = match &mut rt.proto {
            Proto::Aodv(v) if is_data => v[radio as usize].on_data_link_failure(now, wifi_addr(hop), dst, hops, id),
            Proto::Aodv(v) => {
                v[radio as usize].on_link_failure(now, wifi_addr(hop), is_rrep);
                Some(id)
            }
            Proto::Olsr(v) => {
                v[radio as usize].on_link_failure(now, wifi_addr(hop));
                Some(id)
            }
            _ => return Some(id),
        };
        self.pump_routing(radio);
        back
    }

    /// Takes every packet waiting in radio `radio`'s interface queue for neighbour `hop` out: data
    /// packets go to AODV as failures of that link (kept if a local repair of their
    /// destination runs, else dropped as `drops_link_break`), control packets are dropped.
    fn flush_queue_to(&mut self, radio: u32, hop: u32) {
        if self.wifi.is_none() {
            return;
        }
        let now = self.now;
        let flushed = self.radio_take_queued_to(radio, hop);
        for id in flushed {
            let (is_data, dst, hops) = {
                let p = self.packets.get(id);
                (p.is_data(), p.ip.dst, DEFAULT_TTL.saturating_sub(p.ip.ttl))
            };
            let back = match (&mut self.routing, is_data) {
                (
                    Some(RoutingState {
                        proto: Proto::Aodv(v), ..
                    }),
                    true,
                ) => v[radio as usize].on_data_link_failure(now, wifi_addr(hop), dst, hops, id),
                _ => Some(id),
            };
            if let Some(id) = back {
                self.drop_packet(self.rmap.node(radio), id, DropReason::LinkBreak);
            }
        }
    }

    /// The oracle's next hop from `radio` towards `dst` on the current connectivity graph.
    fn oracle_next(&mut self, radio: u32, dst: u32) -> Option<u32> {
        let now = self.now;
        let (Some(rt), Some(ch)) = (&mut self.routing, &mut self.wifi) else {
            return None;
        };
        let n = ch.nodes();
        let o = &mut rt.oracle;
        if now >= o.valid_until || o.adj.is_empty() {
            o.adj = ch.connectivity(now);
            o.next = vec![Vec::new(); n];
            o.valid_until = now + rt.oracle_period;
        }
        if o.next[dst as usize].is_empty() {
            o.next[dst as usize] = crate::wifi::next_hops_towards(&o.adj, dst);
        }
        Some(o.next[dst as usize][radio as usize]).filter(|&h| h != u32::MAX)
    }
}
