//! IP glue: where a packet goes next (route lookup, or the ad hoc routing for radio
//! destinations), what a node does with a packet that reaches it (deliver, forward with TTL
//! decrement, hand control messages to routing or ARP), and where a dropped packet is
//! counted.

use super::World;
use crate::metrics::DropReason;
use crate::net::DeviceRef;
use crate::packet::{Packet, PacketId, ARP_REQUEST, NO_CTRL, NO_DIR};
use crate::pkttrace::{Layer, TraceEvent, NO_NODE};
use crate::wifi::{wifi_addr, wifi_radio};
use std::net::Ipv4Addr;
use tpsim_transport::Segment;
use tpsim_wire::Ipv4Repr;

impl World {
    /// Where a packet from `node` to `dst` goes on the static tables: (device, link-layer
    /// destination). A radio destination is reached by `node`'s radio on its channel.
    #[inline]
    fn route(&self, node: u32, dst: Ipv4Addr) -> Option<(DeviceRef, u32)> {
        if let (Some(ch), Some(d)) = (&self.wifi, wifi_radio(dst)) {
            let r = self.rmap.toward(node, d)?;
            let hop = ch.next_hop(r, d)?;
            return Some((DeviceRef::Radio(r), hop));
        }
        self.net.lookup(node, dst).map(|iface| (self.net.device(iface), 0))
    }

    /// The source address for packets from `node` to `dst`: the address of the outgoing
    /// interface of the route (RFC 1122 §3.3.4.3); for a radio destination, `node`'s radio
    /// on its channel.
    pub(super) fn source_addr(&self, node: u32, dst: Ipv4Addr) -> Ipv4Addr {
        if let (Some(d), Some(_)) = (wifi_radio(dst), &self.wifi) {
            if let Some(r) = self.rmap.toward(node, d) {
                return wifi_addr(r);
            }
        }
        match self.net.lookup(node, dst) {
            Some(iface) => self.net.addr(iface),
            None => self.net.primary_addr(node),
        }
    }

    /// Sends a packet originating at (or forwarded by) `node` out of the interface of its route.
    pub(super) fn ip_output(&mut self, node: u32, id: PacketId) {
        self.ip_output_from(node, id, None);
    }

    /// [`Self::ip_output`] for a packet received from radio neighbour `prev_hop` (radio
    /// forwarding).
    fn ip_output_from(&mut self, node: u32, id: PacketId, prev_hop: Option<u32>) {
        if let Some(reason) = self.node_down(node) {
            self.drop_packet(node, id, reason);
            return;
        }
        let dst = self.packets.get(id).ip.dst;
        if let (true, Some(d)) = (self.routing.as_ref().is_some_and(|r| r.dynamic()), wifi_radio(dst)) {
            // The routing instance of the node's radio on the destination's channel.
            match self.rmap.toward(node, d) {
                Some(r) => self.route_dynamic(r, id, prev_hop),
                None => self.drop_packet(node, id, DropReason::NoRoute),
            }
            return;
        }
        match self.route(node, dst) {
            Some((dev, link_dst)) => {
                // Only this node holds the packet here: fresh from a transport, or made its
                // own (copy on write) by `ip_input` before the TTL decrement.
                self.packets.get_mut(id).link_dst = link_dst;
                self.device_enqueue(dev, id, false);
            }
            None => self.drop_packet(node, id, DropReason::NoRoute),
        }
    }

    /// Queues `id` at device `dev`; a radio puts `priority` packets (routing control) at the
    /// head of its queue.
    pub(super) fn device_enqueue(&mut self, dev: DeviceRef, id: PacketId, priority: bool) {
        match dev {
            DeviceRef::Link(d) => self.link_enqueue(d, id),
            DeviceRef::Radio(r) => self.radio_send(r, id, priority),
        }
    }

    /// A packet arrives at `node`, from radio neighbour `prev_hop` (a radio index) if it came
    /// by radio.
    pub(super) fn ip_input(&mut self, node: u32, id: PacketId, prev_hop: Option<u32>) {
        if let Some(prev) = prev_hop {
            self.movie_hop(self.rmap.node(prev), node, id);
        }
        // The radio it came in by: the one on the sender's channel.
        let rx_radio = |w: &World| prev_hop.and_then(|p| w.rmap.toward(node, p)).unwrap_or(node);
        let (dst, ctrl) = {
            let p = self.packets.get(id);
            (p.ip.dst, p.ctrl)
        };
        if ctrl != NO_CTRL {
            let r = rx_radio(self);
            if ctrl >= ARP_REQUEST {
                self.trace_receive(node, Layer::Link, id, false);
                self.arp_input(r, id);
            } else {
                self.trace_receive(node, Layer::Ip, id, false);
                // Routing control messages go hop by hop: the protocol decides what to resend.
                self.ctrl_input(r, id);
            }
            return;
        }
        if dst == Ipv4Addr::BROADCAST {
            // A broadcast data packet (beacon) is counted and not forwarded (no node has the
            // broadcast address, so the node's own addresses need not be looked at).
            self.metrics.broadcast_received();
            self.trace_receive(node, Layer::Transport, id, false);
            self.packets.release(id);
            return;
        }
        if self.net.is_local(node, dst) {
            let r = rx_radio(self);
            self.data_delivered(r, id, prev_hop);
            self.local_deliver(node, id);
            return;
        }
        // Forwarding: RFC 791 §3.2 / RFC 1812 §5.3.1 — decrement TTL, discard at zero.
        let id = self.packets.make_mut(id);
        let p = self.packets.get_mut(id);
        p.ip.ttl = p.ip.ttl.saturating_sub(1);
        if p.ip.ttl == 0 {
            self.drop_packet(node, id, DropReason::Ttl);
        } else {
            let from = prev_hop.map_or(NO_NODE, |p| self.rmap.node(p));
            self.trace_row(TraceEvent::Forward, node, Layer::Ip, id, None, false, from);
            self.ip_output_from(node, id, prev_hop);
        }
    }

    /// Node `node` drops packet `id` for `reason`: a data packet's drop goes to the metrics (a
    /// flow's packet is lost if no copy of it arrives: `drops_<reason>`, `dropped_segments`), a
    /// routing control packet counts in `routing_drops`, an ARP packet nowhere; every drop
    /// goes to the packet trace.
    pub(super) fn drop_packet(&mut self, node: u32, id: PacketId, reason: DropReason) {
        self.drop_packet_hop(node, id, reason, NO_NODE);
    }

    /// [`Self::drop_packet`] of a packet on its way to node `hop` (for the ns-2 columns).
    pub(super) fn drop_packet_hop(&mut self, node: u32, id: PacketId, reason: DropReason, hop: u32) {
        let layer = Layer::of_drop(reason);
        self.trace_row(TraceEvent::Drop, node, layer, id, Some(reason), false, hop);
        self.movie_drop(node, id, reason);
        let p = self.packets.get(id);
        if p.is_data() {
            self.metrics.dropped(p.dir, p.seq, reason);
        } else if let (true, Some(rt)) = (p.is_ctrl(), &mut self.routing) {
            rt.count_drop();
        }
        self.packets.release(id);
    }

    /// A packet that carries no flow's data from radio `radio` (a routing control message or
    /// ARP, by `ctrl`, or a beacon): `ip_len` bytes on the wire, `payload_len` of them after a
    /// UDP header on `port` (both ends), to `dst` by link address (radio) `link_dst`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn alloc_control(
        &mut self,
        radio: u32,
        dst: Ipv4Addr,
        ttl: u8,
        port: u16,
        payload_len: u32,
        ip_len: u32,
        link_dst: u32,
        ctrl: u32,
    ) -> PacketId {
        let ip = Ipv4Repr {
            src: wifi_addr(radio),
            dst,
            protocol: tpsim_wire::IpProtocol::Udp,
            ttl,
            total_len: ip_len.min(u16::MAX as u32) as u16,
            ident: 0,
            ecn: tpsim_wire::Ecn::NotEct,
        };
        let seg = Segment {
            addr: None,
            header: tpsim_transport::L4Header::Udp(tpsim_wire::UdpRepr {
                src_port: port,
                dst_port: port,
            }),
            payload_len,
            ip_len,
            message: None,
            first_tx: self.now,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        };
        let id = self.packets.alloc(Packet {
            ip,
            seg,
            dir: NO_DIR,
            seq: 0,
            link_dst,
            ctrl,
            queue_ns: 0,
        });
        let layer = match ctrl {
            NO_CTRL => Layer::Transport,
            c if c >= ARP_REQUEST => Layer::Link,
            _ => Layer::Ip,
        };
        let hop = if link_dst == tpsim_mac::BROADCAST {
            NO_NODE
        } else {
            self.rmap.node(link_dst)
        };
        self.trace_row(TraceEvent::Send, self.rmap.node(radio), layer, id, None, false, hop);
        id
    }

    /// Radio `radio` broadcasts a beacon (a one-hop UDP datagram to port 9) and schedules the
    /// next.
    pub(super) fn on_beacon(&mut self, radio: u32) {
        let Some(b) = self.beacons else { return };
        let next = self.now + b.interval;
        if next < b.stop {
            self.queue.push(next, super::Event::Beacon { radio });
        }
        if self.wifi.is_none() {
            return;
        }
        self.metrics.broadcast_sent();
        let id = self.alloc_control(
            radio,
            Ipv4Addr::BROADCAST,
            1,
            9,
            b.payload,
            b.ip_len,
            tpsim_mac::BROADCAST,
            NO_CTRL,
        );
        self.radio_send(radio, id, false);
    }
}
