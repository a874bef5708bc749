//! The per-packet event trace (`[output] trace = true`): one row per send, forward, receive
//! and drop of a packet, kept as column vectors while the run goes and turned into a
//! [`Table`] at its end (columns: docs/metrics.md, "Packet trace").
//!
//! The world holds an `Option<PacketTrace>`: when the trace is off, each hook costs one
//! branch on that `None` and nothing else. Rows are counted like the flows table: a flow
//! direction's packets from the first one sent at or after the warm-up, other packets
//! (pure ACKs, routing control, ARP, beacons) for events at or after the warm-up.

use crate::metrics::{DropReason, FlowKey};
use crate::packet::{Packet, NO_DIR};
use crate::table::{Column, Table};
use std::net::Ipv4Addr;
use tpsim_core::SimTime;

/// What happened to the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceEvent {
    /// It was made and handed down at its source: a transport segment to IP, a routing or
    /// ARP message to the interface.
    Send = 0,
    /// A node other than its source forwards it (after the TTL decrement).
    Forward = 1,
    /// It reached its destination: the transport endpoint (a flow's data, ACKs), the routing
    /// agent or ARP (control messages), or a node hearing a beacon.
    Receive = 2,
    /// It was discarded, for the reason of the `reason` column.
    Drop = 3,
}

impl TraceEvent {
    const NAMES: [&'static str; 4] = ["send", "forward", "receive", "drop"];
}

/// Where in the node the event happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Layer {
    /// The transport endpoint (or the UDP beacon sender/receiver).
    Transport = 0,
    /// IP: forwarding, routes, TTL, the routing agent.
    Ip = 1,
    /// The interface: a link's queue and wire, a radio's interface queue, ARP.
    Link = 2,
    /// The 802.11 MAC and radio.
    Mac = 3,
}

impl Layer {
    const NAMES: [&'static str; 4] = ["transport", "ip", "link", "mac"];

    /// The layer that drops a packet for `reason`.
    pub fn of_drop(reason: DropReason) -> Layer {
        match reason {
            DropReason::Queue
            | DropReason::LinkError
            | DropReason::QueueTimeout
            | DropReason::Arp
            | DropReason::LinkDown
            | DropReason::InterfaceDown
            | DropReason::NodeDown => Layer::Link,
            DropReason::MacRetry | DropReason::Energy => Layer::Mac,
            DropReason::LinkBreak | DropReason::NoRoute | DropReason::Ttl => Layer::Ip,
        }
    }
}

/// What the packet carries (the `kind` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    /// Application data of a flow direction (`flow`, `direction` and `packet` set).
    Data = 0,
    /// A transport segment without application data: a pure ACK, SYN, FIN.
    Transport = 1,
    /// A routing control message (AODV, OLSR).
    Routing = 2,
    /// An ARP request or reply.
    Arp = 3,
    /// A one-hop broadcast beacon.
    Beacon = 4,
}

impl PacketKind {
    const NAMES: [&'static str; 5] = ["data", "transport", "routing", "arp", "beacon"];

    /// The kind of packet `p`.
    pub fn of(p: &Packet) -> PacketKind {
        if p.dir != NO_DIR {
            PacketKind::Data
        } else if p.is_arp() {
            PacketKind::Arp
        } else if p.is_ctrl() {
            PacketKind::Routing
        } else if p.ip.dst == Ipv4Addr::BROADCAST {
            PacketKind::Beacon
        } else {
            PacketKind::Transport
        }
    }
}

/// `reason` value of a row that is not a drop.
const NO_REASON: u8 = u8::MAX;

/// The trace of one run, one vector per column (31 bytes a row).
#[derive(Clone, Debug, Default)]
pub struct PacketTrace {
    time_ns: Vec<u64>,
    event: Vec<u8>,
    node: Vec<u32>,
    layer: Vec<u8>,
    kind: Vec<u8>,
    /// Flow direction index (`NO_DIR`: none).
    dir: Vec<u32>,
    /// The packet's `seq` within its direction.
    packet: Vec<u32>,
    /// IP bytes.
    size_b: Vec<u32>,
    /// `DropReason as u8`, or `NO_REASON`.
    reason: Vec<u8>,
    duplicate: Vec<bool>,
}

impl PacketTrace {
    /// Appends the row of `event` of packet `p` at `node`, `now`; `duplicate` marks a receive
    /// of a data packet that had arrived before.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        now: SimTime,
        event: TraceEvent,
        node: u32,
        layer: Layer,
        p: &Packet,
        reason: Option<DropReason>,
        duplicate: bool,
    ) {
        self.time_ns.push(now.0);
        self.event.push(event as u8);
        self.node.push(node);
        self.layer.push(layer as u8);
        self.kind.push(PacketKind::of(p) as u8);
        self.dir.push(p.dir);
        self.packet.push(p.seq);
        self.size_b.push(p.ip.total_len as u32);
        self.reason.push(reason.map_or(NO_REASON, |r| r as u8));
        self.duplicate.push(duplicate);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// The trace as a table; `keys[dir]` names flow direction `dir`. Columns: `time_s`,
    /// `event`, `node`, `layer`, `kind`, `flow`, `direction`, `packet` (null for packets of
    /// no direction), `size_b`, `reason` (null unless a drop: the `drops_<reason>` suffix),
    /// `duplicate`.
    pub fn table(&self, keys: &[&FlowKey]) -> Table {
        let of_dir = |d: u32| (d != NO_DIR).then(|| keys[d as usize]);
        let mut t = Table::default();
        t.push(
            "time_s",
            Column::F64(self.time_ns.iter().map(|&ns| Some(ns as f64 / 1e9)).collect()),
        );
        let names = |v: &[u8], names: &[&'static str]| Column::Text(v.iter().map(|&i| names[i as usize]).collect());
        t.push("event", names(&self.event, &TraceEvent::NAMES));
        t.push("node", Column::U64(self.node.iter().map(|&n| n as u64).collect()));
        t.push("layer", names(&self.layer, &Layer::NAMES));
        t.push("kind", names(&self.kind, &PacketKind::NAMES));
        t.push(
            "flow",
            Column::OptU32(self.dir.iter().map(|&d| of_dir(d).map(|k| k.flow)).collect()),
        );
        t.push(
            "direction",
            Column::OptText(self.dir.iter().map(|&d| of_dir(d).map(|k| k.direction)).collect()),
        );
        t.push(
            "packet",
            Column::OptU32(
                self.dir
                    .iter()
                    .zip(&self.packet)
                    .map(|(&d, &s)| (d != NO_DIR).then_some(s))
                    .collect(),
            ),
        );
        t.push("size_b", Column::U64(self.size_b.iter().map(|&b| b as u64).collect()));
        t.push(
            "reason",
            Column::OptText(
                self.reason
                    .iter()
                    .map(|&r| DropReason::ALL.get(r as usize).map(|r| drop_name(*r)))
                    .collect(),
            ),
        );
        t.push("duplicate", Column::Bool(self.duplicate.clone()));
        t
    }
}

/// The reason's name as in the network table's `drops_<reason>` columns.
pub fn drop_name(r: DropReason) -> &'static str {
    let c = r.column();
    c.strip_prefix("drops_").unwrap_or(c)
}
