//! AODV control messages (RFC 3561 §5) and their exact wire format (network byte order).

use crate::Addr;

/// Type field of an RREQ (§5.1).
pub const TYPE_RREQ: u8 = 1;
/// Type field of an RREP (§5.2).
pub const TYPE_RREP: u8 = 2;
/// Type field of an RERR (§5.3).
pub const TYPE_RERR: u8 = 3;
/// Type field of an RREP-ACK (§5.4).
pub const TYPE_RREP_ACK: u8 = 4;

/// Route Request (§5.1), 24 bytes on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rreq {
    /// J: join flag (multicast; never set by this implementation).
    pub join: bool,
    /// R: repair flag (multicast; never set by this implementation).
    pub repair: bool,
    /// G: gratuitous RREP flag (§6.6.3).
    pub gratuitous: bool,
    /// D: destination only flag (§6.5).
    pub dest_only: bool,
    /// U: unknown sequence number (the destination sequence number field is meaningless).
    pub unknown_seq: bool,
    /// Hops from the originator to the node handling the request.
    pub hop_count: u8,
    /// RREQ ID: with the originator address it identifies the request (§6.3).
    pub rreq_id: u32,
    /// Destination IP Address.
    pub dst: Addr,
    /// Latest sequence number the originator knew for the destination.
    pub dst_seq: u32,
    /// Originator IP Address.
    pub orig: Addr,
    /// Originator's own sequence number.
    pub orig_seq: u32,
}

/// Route Reply (§5.2), 20 bytes on the wire. A HELLO (§6.9) is an RREP broadcast with IP TTL 1;
/// this implementation sends it with destination = originator = the sender and hop count 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rrep {
    /// R: repair flag (multicast).
    pub repair: bool,
    /// A: acknowledgment required (§6.7, §6.8).
    pub ack_required: bool,
    /// Prefix Size (5 bits, §6.6 subnet routes; always 0 here).
    pub prefix_size: u8,
    /// Hops from the originator of the RREP (or the destination) to the handling node.
    pub hop_count: u8,
    /// Destination IP Address: the node a route is supplied for.
    pub dst: Addr,
    /// Destination Sequence Number of that route.
    pub dst_seq: u32,
    /// Originator IP Address: the node that originated the RREQ.
    pub orig: Addr,
    /// Lifetime of the route, in milliseconds.
    pub lifetime_ms: u32,
}

/// Route Error (§5.3), 4 + 8·n bytes on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerr {
    /// N: no delete flag (set after a local repair; never set by this implementation).
    pub no_delete: bool,
    /// Unreachable destinations with their (incremented) sequence numbers; 1 to 255 entries.
    pub unreachable: Vec<(Addr, u32)>,
}

/// An AODV control message (the UDP payload on port 654).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Route Request (§5.1).
    Rreq(Rreq),
    /// Route Reply (§5.2), also HELLO (§6.9).
    Rrep(Rrep),
    /// Route Error (§5.3).
    Rerr(Rerr),
    /// Route Reply Acknowledgment (§5.4).
    RrepAck,
}

/// What a message is, for counters and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// Route Request.
    Rreq,
    /// Route Reply (not a HELLO).
    Rrep,
    /// Route Error.
    Rerr,
    /// Route Reply Acknowledgment.
    RrepAck,
    /// HELLO: an RREP with destination = originator and hop count 0 (§6.9).
    Hello,
}

impl Message {
    /// Length of the message on the wire, in bytes (RREQ 24, RREP 20, RERR 4 + 8·n, RREP-ACK 2).
    pub fn wire_len(&self) -> usize {
        match self {
            Message::Rreq(_) => 24,
            Message::Rrep(_) => 20,
            Message::Rerr(e) => 4 + 8 * e.unreachable.len(),
            Message::RrepAck => 2,
        }
    }

    /// The kind of the message; an RREP is a HELLO when its destination and originator are the
    /// same address and its hop count is 0.
    pub fn kind(&self) -> MessageKind {
        match self {
            Message::Rreq(_) => MessageKind::Rreq,
            Message::Rrep(r) if r.dst == r.orig && r.hop_count == 0 => MessageKind::Hello,
            Message::Rrep(_) => MessageKind::Rrep,
            Message::Rerr(_) => MessageKind::Rerr,
            Message::RrepAck => MessageKind::RrepAck,
        }
    }

    /// Appends the message in the exact layout of RFC 3561 §5 (network byte order).
    /// An RERR with more than 255 destinations is truncated to 255 (DestCount is one byte).
    pub fn emit(&self, buf: &mut Vec<u8>) {
        match self {
            Message::Rreq(q) => {
                // §5.1: Type | J R G D U + 11 reserved bits | Hop Count.
                let flags = (q.join as u8) << 7
                    | (q.repair as u8) << 6
                    | (q.gratuitous as u8) << 5
                    | (q.dest_only as u8) << 4
                    | (q.unknown_seq as u8) << 3;
                buf.extend_from_slice(&[TYPE_RREQ, flags, 0, q.hop_count]);
                buf.extend_from_slice(&q.rreq_id.to_be_bytes());
                buf.extend_from_slice(&q.dst.octets());
                buf.extend_from_slice(&q.dst_seq.to_be_bytes());
                buf.extend_from_slice(&q.orig.octets());
                buf.extend_from_slice(&q.orig_seq.to_be_bytes());
            }
            Message::Rrep(p) => {
                // §5.2: Type | R A + 9 reserved bits + 5-bit Prefix Size | Hop Count.
                let flags = (p.repair as u8) << 7 | (p.ack_required as u8) << 6;
                buf.extend_from_slice(&[TYPE_RREP, flags, p.prefix_size & 0x1f, p.hop_count]);
                buf.extend_from_slice(&p.dst.octets());
                buf.extend_from_slice(&p.dst_seq.to_be_bytes());
                buf.extend_from_slice(&p.orig.octets());
                buf.extend_from_slice(&p.lifetime_ms.to_be_bytes());
            }
            Message::Rerr(e) => {
                // §5.3: Type | N + 15 reserved bits | DestCount, then (address, seq) pairs.
                let n = e.unreachable.len().min(255);
                buf.extend_from_slice(&[TYPE_RERR, (e.no_delete as u8) << 7, 0, n as u8]);
                for (a, s) in &e.unreachable[..n] {
                    buf.extend_from_slice(&a.octets());
                    buf.extend_from_slice(&s.to_be_bytes());
                }
            }
            // §5.4: Type | Reserved.
            Message::RrepAck => buf.extend_from_slice(&[TYPE_RREP_ACK, 0]),
        }
    }

    /// Parses one message; `None` if the type is unknown or the bytes are too short (an RERR
    /// also needs DestCount ≥ 1). Reserved bits are ignored; trailing bytes (extensions) too.
    pub fn parse(b: &[u8]) -> Option<Message> {
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let addr_at = |i: usize| Addr::new(b[i], b[i + 1], b[i + 2], b[i + 3]);
        match *b.first()? {
            TYPE_RREQ if b.len() >= 24 => Some(Message::Rreq(Rreq {
                join: b[1] & 0x80 != 0,
                repair: b[1] & 0x40 != 0,
                gratuitous: b[1] & 0x20 != 0,
                dest_only: b[1] & 0x10 != 0,
                unknown_seq: b[1] & 0x08 != 0,
                hop_count: b[3],
                rreq_id: u32_at(4),
                dst: addr_at(8),
                dst_seq: u32_at(12),
                orig: addr_at(16),
                orig_seq: u32_at(20),
            })),
            TYPE_RREP if b.len() >= 20 => Some(Message::Rrep(Rrep {
                repair: b[1] & 0x80 != 0,
                ack_required: b[1] & 0x40 != 0,
                prefix_size: b[2] & 0x1f,
                hop_count: b[3],
                dst: addr_at(4),
                dst_seq: u32_at(8),
                orig: addr_at(12),
                lifetime_ms: u32_at(16),
            })),
            TYPE_RERR if b.len() >= 4 => {
                let n = b[3] as usize;
                if n == 0 || b.len() < 4 + 8 * n {
                    return None;
                }
                let unreachable = (0..n).map(|i| (addr_at(4 + 8 * i), u32_at(8 + 8 * i))).collect();
                Some(Message::Rerr(Rerr {
                    no_delete: b[1] & 0x80 != 0,
                    unreachable,
                }))
            }
            TYPE_RREP_ACK if b.len() >= 2 => Some(Message::RrepAck),
            _ => None,
        }
    }
}
