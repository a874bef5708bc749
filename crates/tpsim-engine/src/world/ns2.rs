//! The packet trace's ns-2 part (`[output] ns2_trace`): the hop events ns-2's trace formats
//! show (a link direction's enqueue, dequeue and arrival, a radio's frames sent and
//! received) and the ns-2 columns of every row ([`Ns2Row`]). Nothing here runs unless the
//! scenario asks for an ns-2 trace: each hook is one branch on the trace.

use super::routing::{CtrlMsg, RoutingState};
use super::World;
use crate::metrics::DropReason;
use crate::net::{Net, RadioMap};
use crate::packet::{PacketArena, PacketId, ARP_REQUEST, NO_DIR};
use crate::pkttrace::{
    ns2_frame_type, ns2_packet_type, Layer, Ns2Row, TraceEvent, NO_NODE, NS2_AODV, NS2_ARP, NS2_OLSR,
};
use crate::wifi::wifi_radio;
use std::net::Ipv4Addr;
use tpsim_routing::{aodv, olsr};
use tpsim_transport::Header as _;

/// No `message` (index into [`crate::pkttrace::NS2_MESSAGES`]).
const NO_MESSAGE: u8 = u8::MAX;

/// The ns-2 columns of packet `id` in a row whose other node is `hop`.
pub(super) fn ns2_row(
    packets: &PacketArena,
    net: &Net,
    rmap: &RadioMap,
    routing: Option<&RoutingState>,
    id: PacketId,
    hop: u32,
) -> Ns2Row {
    let p = packets.get(id);
    let node = |a: Ipv4Addr| {
        if a == Ipv4Addr::BROADCAST {
            return NO_NODE;
        }
        wifi_radio(a)
            .map(|r| rmap.node(r))
            .or_else(|| net.node_of_addr(a))
            .unwrap_or(NO_NODE)
    };
    let (ptype, message) = if p.is_arp() {
        (NS2_ARP, if p.ctrl == ARP_REQUEST { 0 } else { 1 })
    } else if p.is_ctrl() {
        match routing.map(|r| r.message(p.ctrl)) {
            Some(CtrlMsg::Aodv(m)) => (
                NS2_AODV,
                match m.kind() {
                    aodv::MessageKind::Rreq => 0,
                    aodv::MessageKind::Rrep => 1,
                    aodv::MessageKind::Rerr => 2,
                    aodv::MessageKind::RrepAck => 3,
                    aodv::MessageKind::Hello => 4,
                },
            ),
            // An OLSR packet is named after its first message (HELLO or TC).
            Some(CtrlMsg::Olsr(pk)) => (
                NS2_OLSR,
                match pk.messages.first().map(|m| &m.body) {
                    Some(olsr::Body::Hello(_)) => 4,
                    Some(olsr::Body::Tc(_)) => 5,
                    None => NO_MESSAGE,
                },
            ),
            _ => (NS2_AODV, NO_MESSAGE),
        }
    } else {
        (ns2_packet_type(p), NO_MESSAGE)
    };
    Ns2Row {
        uid: packets.uid(id),
        hop,
        src: node(p.ip.src),
        dst: node(p.ip.dst),
        sport: p.seg.header.src_port(),
        dport: p.seg.header.dst_port(),
        ttl: p.ip.ttl,
        ptype,
        message,
    }
}

impl World {
    /// Whether the packet trace keeps the ns-2 hop events.
    #[inline]
    fn ns2_traced(&self) -> bool {
        self.ptrace.as_ref().is_some_and(|t| t.ns2())
    }

    /// The nodes at the two ends of link device `dev`: its own and its peer's.
    pub(super) fn link_ends(&self, dev: u32) -> (u32, u32) {
        let d = &self.links[dev as usize];
        let peer = &self.links[d.peer as usize];
        (self.net.node_of(d.iface), self.net.node_of(peer.iface))
    }

    /// Hop event `event` of packet `id` at link device `dev` (an enqueue or dequeue at the
    /// sending end, an arrival at the receiving end): ns-2 traces only.
    #[inline]
    pub(super) fn trace_link(&mut self, event: TraceEvent, dev: u32, id: PacketId) {
        if self.ns2_traced() {
            let (node, hop) = self.link_ends(dev);
            self.trace_row(event, node, Layer::Link, id, None, false, hop);
        }
    }

    /// Frame `f` sent (`TraceEvent::MacSend`) or received (`TraceEvent::MacReceive`) by
    /// radio `radio`, carrying packet `pkt` if a DATA frame: ns-2 traces only. A received
    /// frame counts only at the radio it is addressed to (or every radio, broadcast).
    #[inline]
    pub(super) fn trace_mac(&mut self, event: TraceEvent, radio: u32, f: &tpsim_mac::Frame, pkt: Option<PacketId>) {
        if self.ns2_traced() {
            self.trace_mac_row(event, radio, f, pkt);
        }
    }

    /// [`Self::trace_mac`] once the trace is known to keep the ns-2 rows.
    fn trace_mac_row(&mut self, event: TraceEvent, radio: u32, f: &tpsim_mac::Frame, pkt: Option<PacketId>) {
        let Some(t) = &mut self.ptrace else { return };
        if event == TraceEvent::MacReceive && f.dst != radio && f.dst != tpsim_mac::BROADCAST {
            return;
        }
        let rmap = &self.rmap;
        let node = rmap.node(radio);
        // MAC addresses are radios: the ns-2 columns name nodes.
        let node_of = |mac: u32| {
            if mac == tpsim_mac::BROADCAST {
                NO_NODE
            } else {
                rmap.node(mac)
            }
        };
        let other = if event == TraceEvent::MacSend { f.dst } else { f.src };
        let hop = node_of(other);
        let now = self.now;
        match (pkt, ns2_frame_type(f.kind)) {
            (Some(id), None) => {
                let p = self.packets.get(id);
                if self.metrics.counted(p.dir, p.seq, now) {
                    t.record_frame(now, event, node, Some(p), f.bytes, None);
                    t.record_ns2(ns2_row(&self.packets, &self.net, rmap, self.routing.as_ref(), id, hop));
                    t.maybe_flush();
                }
            }
            (_, ptype) => {
                if self.metrics.counted(NO_DIR, 0, now) {
                    let (src, dst) = (node_of(f.src), node_of(f.dst));
                    let row = control_row(ptype.unwrap_or(NS2_ARP), src, dst, hop);
                    t.record_frame(now, event, node, None, f.bytes, None);
                    t.record_ns2(row);
                    t.maybe_flush();
                }
            }
        }
    }

    /// Radio `radio` gave up the RTS it sent to radio `dst` at the short retry limit: the
    /// RTS's own `RET` drop, which ns-2 writes before the packet's (mac-802_11.cc discards
    /// the RTS, then the DATA frame). ns-2 traces only.
    pub(super) fn trace_rts_discard(&mut self, radio: u32, dst: u32) {
        if !self.ns2_traced() || !self.metrics.counted(NO_DIR, 0, self.now) {
            return;
        }
        let Some(t) = &mut self.ptrace else { return };
        let (node, peer) = (self.rmap.node(radio), self.rmap.node(dst));
        let bytes = self.radios[radio as usize].dcf.config().rts_bytes;
        t.record_frame(
            self.now,
            TraceEvent::Drop,
            node,
            None,
            bytes,
            Some(DropReason::MacRetry),
        );
        t.record_ns2(control_row("RTS", node, peer, peer));
        t.maybe_flush();
    }
}

/// The ns-2 columns of an 802.11 control frame (or an ARP frame's MAC row) of type `ptype`
/// from node `src` to node `dst` ([`NO_NODE`]: broadcast), other node `hop`.
fn control_row(ptype: &'static str, src: u32, dst: u32, hop: u32) -> Ns2Row {
    Ns2Row {
        uid: 0,
        hop,
        src,
        dst,
        sport: 0,
        dport: 0,
        ttl: 0,
        ptype,
        message: NO_MESSAGE,
    }
}
