//! The per-packet event trace (`[output] trace = true`): one row per send, forward, receive
//! and drop of a packet, kept as column vectors while the run goes and turned into a
//! [`Table`] at its end (columns: docs/metrics.md, "Packet trace"), or, when the run streams
//! it ([`crate::stream`]), handed out a batch at a time, with the ns-2 text of each batch
//! ([`ns2text`]).
//!
//! The world holds an `Option<PacketTrace>`: when the trace is off, each hook costs one
//! branch on that `None` and nothing else. Rows are counted like the flows table: a flow
//! direction's packets from the first one sent at or after the warm-up, other packets
//! (pure ACKs, routing control, ARP, beacons) for events at or after the warm-up.

mod ns2text;

use crate::metrics::{DropReason, FlowKey};
use crate::packet::{Packet, NO_DIR};
use crate::stream::{SinkState, Streams};
use crate::table::{Column, Table};
use std::io::{self, Write};
use std::net::Ipv4Addr;
use tpsim_core::SimTime;
use tpsim_scenario::Ns2Trace;

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
    /// It entered a link direction (queued, or straight onto a free wire). ns-2 traces only.
    Enqueue = 4,
    /// A link direction starts to serialize it. ns-2 traces only.
    Dequeue = 5,
    /// It reached the far end of a link (every hop, the destination's too). ns-2 traces only.
    Arrive = 6,
    /// A radio starts to send a frame: a DATA frame carrying the packet (each attempt), or
    /// an RTS, CTS or ACK (kind `mac`). ns-2 traces only.
    MacSend = 7,
    /// A radio decoded a frame addressed to it (or broadcast). ns-2 traces only.
    MacReceive = 8,
    /// A queue discipline marked it Congestion Experienced (RFC 3168), for the reason of the
    /// `reason` column.
    Mark = 9,
}

impl TraceEvent {
    const NAMES: [&'static str; 10] = [
        "send",
        "forward",
        "receive",
        "drop",
        "enqueue",
        "dequeue",
        "arrive",
        "mac_send",
        "mac_receive",
        "mark",
    ];
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
            | DropReason::NodeDown
            | DropReason::AqmEarly
            | DropReason::AqmForced
            | DropReason::AqmSojourn => Layer::Link,
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
    /// An 802.11 control frame (RTS, CTS, ACK): `mac_send`/`mac_receive` rows only.
    Mac = 5,
}

impl PacketKind {
    const NAMES: [&'static str; 6] = ["data", "transport", "routing", "arp", "beacon", "mac"];

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

/// A node column's value for "none" (a broadcast destination, an unknown hop).
pub const NO_NODE: u32 = u32::MAX;

/// The name of an 802.11 control frame in ns-2's traces (a `packet_info` name).
pub fn ns2_frame_type(kind: tpsim_mac::FrameKind) -> Option<&'static str> {
    match kind {
        tpsim_mac::FrameKind::Rts => Some("RTS"),
        tpsim_mac::FrameKind::Cts => Some("CTS"),
        tpsim_mac::FrameKind::Ack => Some("ACK"),
        tpsim_mac::FrameKind::Data => None,
    }
}

/// ns-2's packet type of a packet that carries no routing or ARP message: its transport
/// header's ([`tpsim_transport::Header::ns2_type`]), by whether it carries a flow's data.
pub fn ns2_packet_type(p: &Packet) -> &'static str {
    use tpsim_transport::Header as _;
    p.seg.header.ns2_type(p.dir != NO_DIR)
}

/// ns-2's packet type of AODV, OLSR and ARP messages.
pub const NS2_AODV: &str = "AODV";
/// See [`NS2_AODV`].
pub const NS2_OLSR: &str = "OLSR";
/// See [`NS2_AODV`].
pub const NS2_ARP: &str = "ARP";

/// What a routing or ARP message is, in ns-2's words (the `message` column): indexed like
/// [`crate::world::CTRL_TYPES`], then ARP's.
pub const NS2_MESSAGES: [&str; 6] = ["REQUEST", "REPLY", "ERROR", "RREP-ACK", "HELLO", "TC"];

/// The ns-2 columns of one row.
#[derive(Clone, Copy, Debug)]
pub struct Ns2Row {
    /// The packet's identity ([`crate::packet::PacketArena::uid`]; 0 for RTS, CTS, ACK).
    pub uid: u32,
    /// The other node of the hop: where it goes (enqueue, dequeue, a MAC send, a drop at a
    /// link or radio) or where it came from (arrive, a MAC receive, a forward on a radio);
    /// [`NO_NODE`] if none or not known.
    pub hop: u32,
    /// The nodes of the IP source and destination addresses ([`NO_NODE`]: broadcast).
    pub src: u32,
    /// See [`Ns2Row::src`].
    pub dst: u32,
    /// Transport ports (0 for MAC frames).
    pub sport: u16,
    /// See [`Ns2Row::sport`].
    pub dport: u16,
    /// IP TTL at the event.
    pub ttl: u8,
    /// ns-2's packet type (`packet_info` name: "cbr", "tcp", "AODV", "RTS", ...).
    pub ptype: &'static str,
    /// Index into [`NS2_MESSAGES`], `u8::MAX` for none.
    pub message: u8,
}

/// The ns-2 columns, one vector each (22 bytes a row), and the format of their text.
#[derive(Clone, Debug)]
struct Ns2Columns {
    format: Ns2Trace,
    uid: Vec<u32>,
    hop: Vec<u32>,
    src: Vec<u32>,
    dst: Vec<u32>,
    sport: Vec<u16>,
    dport: Vec<u16>,
    ttl: Vec<u8>,
    /// Index into `types`.
    ptype: Vec<u8>,
    message: Vec<u8>,
    /// The packet type names met so far, in the order met (the rows hold their index).
    types: Vec<&'static str>,
}

impl Ns2Columns {
    fn new(format: Ns2Trace) -> Ns2Columns {
        Ns2Columns {
            format,
            uid: Vec::new(),
            hop: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            sport: Vec::new(),
            dport: Vec::new(),
            ttl: Vec::new(),
            ptype: Vec::new(),
            message: Vec::new(),
            types: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.uid.clear();
        self.hop.clear();
        self.src.clear();
        self.dst.clear();
        self.sport.clear();
        self.dport.clear();
        self.ttl.clear();
        self.ptype.clear();
        self.message.clear();
    }

    fn push(&mut self, r: Ns2Row) {
        self.uid.push(r.uid);
        self.hop.push(r.hop);
        self.src.push(r.src);
        self.dst.push(r.dst);
        self.sport.push(r.sport);
        self.dport.push(r.dport);
        self.ttl.push(r.ttl);
        let ptype = match self.types.iter().position(|&t| t == r.ptype) {
            Some(i) => i,
            None => {
                self.types.push(r.ptype);
                self.types.len() - 1
            }
        };
        self.ptype.push(ptype as u8);
        self.message.push(r.message);
    }
}

/// The trace of one run, one vector per column (31 bytes a row, 53 with the ns-2 columns).
#[derive(Debug, Default)]
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
    /// The ns-2 columns and format (`[output] ns2_trace`), else `None`.
    ns2: Option<Ns2Columns>,
    /// Where the rows go while the run goes ([`Self::stream_to`]); `None`: kept to the end.
    out: Option<Box<TraceOut>>,
}

/// A streamed trace's outputs.
struct TraceOut {
    /// The flow directions, by index (the rows name their flow and direction).
    keys: Vec<FlowKey>,
    table: Option<SinkState>,
    /// The ns-2 text and its first write error.
    text: Option<(Box<dyn Write + Send>, Option<io::Error>)>,
    batch_rows: usize,
}

impl std::fmt::Debug for TraceOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceOut")
            .field("table", &self.table.is_some())
            .field("text", &self.text.is_some())
            .field("batch_rows", &self.batch_rows)
            .finish()
    }
}

impl PacketTrace {
    /// A trace; with `ns2` (the scenario's `[output] ns2_trace`) it also keeps the ns-2
    /// columns and the hop events.
    pub fn new(ns2: Option<Ns2Trace>) -> PacketTrace {
        PacketTrace {
            ns2: ns2.map(Ns2Columns::new),
            ..PacketTrace::default()
        }
    }

    /// Streams the rows from now on (see [`crate::stream`]): to `streams.trace` as tables,
    /// and, if the trace keeps the ns-2 columns, to `streams.ns2` as ns-2 text; `keys[dir]`
    /// names flow direction `dir`. Without either stream, rows stay in memory.
    pub fn stream_to(&mut self, streams: &mut Streams, keys: Vec<FlowKey>) {
        let table = streams.trace.take().map(SinkState::new);
        let text = streams.ns2.take().filter(|_| self.ns2.is_some()).map(|w| (w, None));
        if table.is_some() || text.is_some() {
            self.out = Some(Box::new(TraceOut {
                keys,
                table,
                text,
                batch_rows: streams.batch_rows.max(1),
            }));
        }
    }

    /// Whether the rows are streamed (then [`Self::finish`] completes the outputs and
    /// [`Self::table`] has only the rows not yet handed out).
    pub fn streamed(&self) -> bool {
        self.out.is_some()
    }

    /// Hands out the rows recorded so far if a batch is full (streamed traces; call after
    /// each row is complete, its ns-2 columns included).
    #[inline]
    pub fn maybe_flush(&mut self) {
        if let Some(out) = &self.out {
            if self.time_ns.len() >= out.batch_rows {
                self.flush(false);
            }
        }
    }

    /// Hands the rows recorded so far to the streams and forgets them.
    fn flush(&mut self, last: bool) {
        let Some(mut out) = self.out.take() else { return };
        let keys: Vec<&FlowKey> = out.keys.iter().collect();
        if let Some((w, err @ None)) = &mut out.text {
            if let Err(e) = ns2text::write(self, &keys, w) {
                *err = Some(e);
            }
        }
        if let Some(sink) = &mut out.table {
            sink.send(self.len(), last, || self.table(&keys));
        }
        self.out = Some(out);
        self.clear();
    }

    /// Hands out the last rows and completes the streams (streamed traces; nothing
    /// otherwise).
    ///
    /// # Errors
    /// The first error a stream gave during the run.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.out.is_none() {
            return Ok(());
        }
        self.flush(true);
        let Some(mut out) = self.out.take() else { return Ok(()) };
        if let Some((mut w, err)) = out.text.take() {
            if let Some(e) = err {
                return Err(e);
            }
            w.flush()?;
        }
        if let Some(sink) = &mut out.table {
            sink.finish()?;
        }
        Ok(())
    }

    /// Forgets every row (keeping the vectors' capacity).
    fn clear(&mut self) {
        self.time_ns.clear();
        self.event.clear();
        self.node.clear();
        self.layer.clear();
        self.kind.clear();
        self.dir.clear();
        self.packet.clear();
        self.size_b.clear();
        self.reason.clear();
        self.duplicate.clear();
        if let Some(c) = &mut self.ns2 {
            c.clear();
        }
    }

    /// Whether the trace keeps the ns-2 columns and hop events.
    #[inline]
    pub fn ns2(&self) -> bool {
        self.ns2.is_some()
    }

    /// Appends the ns-2 columns of the row just recorded (call after [`Self::record`] or
    /// [`Self::record_frame`] if [`Self::ns2`]).
    pub fn record_ns2(&mut self, row: Ns2Row) {
        if let Some(c) = &mut self.ns2 {
            c.push(row);
        }
    }

    /// Appends the row of a frame of `bytes` bytes (MAC header and FCS included) sent,
    /// received or discarded (`event`, a discard's `reason`) at `node`: a DATA frame carrying
    /// `p`, or an RTS, CTS or ACK (`p` `None`: kind `mac`).
    pub fn record_frame(
        &mut self,
        now: SimTime,
        event: TraceEvent,
        node: u32,
        p: Option<&Packet>,
        bytes: u32,
        reason: Option<DropReason>,
    ) {
        self.time_ns.push(now.0);
        self.event.push(event as u8);
        self.node.push(node);
        self.layer.push(Layer::Mac as u8);
        self.kind.push(p.map_or(PacketKind::Mac, PacketKind::of) as u8);
        self.dir.push(p.map_or(NO_DIR, |p| p.dir));
        self.packet.push(p.map_or(0, |p| p.seq));
        self.size_b.push(bytes);
        self.reason.push(reason.map_or(NO_REASON, |r| r as u8));
        self.duplicate.push(false);
    }

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
    /// `duplicate`; with the ns-2 columns also `uid`, `hop`, `src`, `sport`, `dst`, `dport`,
    /// `ttl`, `ns2_type`, `message` (see [`Ns2Row`]).
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
        if let Some(c) = &self.ns2 {
            let node = |v: &[u32]| Column::OptU32(v.iter().map(|&n| (n != NO_NODE).then_some(n)).collect());
            let small = |v: &[u16]| Column::U64(v.iter().map(|&x| x as u64).collect());
            t.push("uid", Column::U64(c.uid.iter().map(|&u| u as u64).collect()));
            t.push("hop", node(&c.hop));
            t.push("src", node(&c.src));
            t.push("sport", small(&c.sport));
            t.push("dst", node(&c.dst));
            t.push("dport", small(&c.dport));
            t.push("ttl", Column::U64(c.ttl.iter().map(|&x| x as u64).collect()));
            t.push(
                "ns2_type",
                Column::Text(c.ptype.iter().map(|&i| c.types[i as usize]).collect()),
            );
            t.push(
                "message",
                Column::OptText(
                    c.message
                        .iter()
                        .map(|&i| NS2_MESSAGES.get(i as usize).copied())
                        .collect(),
                ),
            );
        }
        t
    }
}

/// The reason's name as in the network table's `drops_<reason>` columns.
pub fn drop_name(r: DropReason) -> &'static str {
    let c = r.column();
    c.strip_prefix("drops_").unwrap_or(c)
}
