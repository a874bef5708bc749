//! OLSR packets and messages (RFC 3626 §3.3, §6.1, §9.1) and the Vtime/Htime encoding (§18.3).
//!
//! Messages are typed; [`Packet::emit`] writes the exact bytes of the RFC's figures (network
//! byte order) and [`Packet::parse`] reads them back. Times are carried as [`SimDuration`] and
//! encoded only on the wire, so a time that the 8-bit mantissa/exponent format cannot represent
//! exactly comes back rounded up to the next representable value.

use tpsim_core::SimDuration;

use crate::Addr;

/// Message type of a HELLO (RFC 3626 §18.4).
pub const HELLO_MESSAGE: u8 = 1;
/// Message type of a TC (RFC 3626 §18.4).
pub const TC_MESSAGE: u8 = 2;

/// Bytes of the packet header: Packet Length, Packet Sequence Number (§3.3).
pub const PACKET_HEADER_LEN: usize = 4;
/// Bytes of a message header: type, Vtime, size, originator, TTL, hop count, sequence (§3.3).
pub const MESSAGE_HEADER_LEN: usize = 12;

/// The scaling constant C of §18.3: 1/16 s, in nanoseconds.
const C_NS: u64 = 62_500_000;

/// The largest time an 8-bit Vtime/Htime can carry: C·(1 + 15/16)·2^15 = 3968 s (§18.3).
pub const MAX_ENCODABLE_TIME: SimDuration = SimDuration(C_NS / 16 * 31 * (1 << 15));

/// The time an 8-bit Vtime/Htime field stands for (RFC 3626 §18.3): C·(1 + a/16)·2^b seconds,
/// with a the high nibble, b the low nibble and C = 1/16 s. Exact in nanoseconds.
pub fn decode_time(byte: u8) -> SimDuration {
    let a = (byte >> 4) as u64;
    let b = (byte & 0x0f) as u32;
    // C·(16 + a)/16·2^b; C/16 = 3 906 250 ns exactly.
    SimDuration(((C_NS / 16) * (16 + a)) << b)
}

/// The 8-bit Vtime/Htime encoding of `d` (RFC 3626 §18.3): b is the largest integer with
/// T/C ≥ 2^b, a = 16·(T/(C·2^b) − 1) rounded up; if a reaches 16, b grows by one and a = 0.
/// Times below C encode as C (0x00), times beyond [`MAX_ENCODABLE_TIME`] as 0xFF. Exact integer
/// arithmetic: `decode_time(encode_time(d)) ≥ d` for every encodable `d`.
pub fn encode_time(d: SimDuration) -> u8 {
    let t = d.0;
    if t <= C_NS {
        return 0x00;
    }
    if t >= MAX_ENCODABLE_TIME.0 {
        return 0xff;
    }
    let mut b: u32 = 0;
    while b < 15 && t >= C_NS << (b + 1) {
        b += 1;
    }
    let base = C_NS << b;
    let mut a = (16 * (t - base) as u128).div_ceil(base as u128) as u64;
    if a >= 16 {
        a = 0;
        b += 1;
    }
    if b > 15 {
        return 0xff;
    }
    ((a as u8) << 4) | b as u8
}

/// Link type of a link message (RFC 3626 §6.1.1), the low two bits of the link code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkType {
    /// UNSPEC_LINK (0): no information about the link.
    Unspec = 0,
    /// ASYM_LINK (1): the neighbour is heard, but we do not know that it hears us.
    Asym = 1,
    /// SYM_LINK (2): the link is symmetric.
    Sym = 2,
    /// LOST_LINK (3): the link has been lost.
    Lost = 3,
}

/// Neighbour type of a link message (RFC 3626 §6.1.1), bits 2–3 of the link code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NeighborType {
    /// NOT_NEIGH (0): not (or no longer) a symmetric neighbour.
    Not = 0,
    /// SYM_NEIGH (1): a symmetric neighbour, not selected as MPR.
    Sym = 1,
    /// MPR_NEIGH (2): a symmetric neighbour selected as MPR by the sender.
    Mpr = 2,
}

/// One link message of a HELLO (RFC 3626 §6.1): a link code and the neighbour interface
/// addresses it applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkMessage {
    /// Link type (low two bits of the link code).
    pub link_type: LinkType,
    /// Neighbour type (bits 2–3 of the link code).
    pub neighbor_type: NeighborType,
    /// Neighbour interface addresses.
    pub neighbors: Vec<Addr>,
}

impl LinkMessage {
    /// The link code byte: neighbour type << 2 | link type (§6.1.1).
    pub fn link_code(&self) -> u8 {
        ((self.neighbor_type as u8) << 2) | self.link_type as u8
    }
    fn wire_len(&self) -> usize {
        4 + 4 * self.neighbors.len()
    }
}

/// A HELLO message body (RFC 3626 §6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// Htime: the sender's HELLO emission interval (8-bit encoding of §18.3 on the wire).
    pub htime: SimDuration,
    /// The sender's willingness to forward (§18.8), 0..=7.
    pub willingness: u8,
    /// Link messages, one per link code.
    pub links: Vec<LinkMessage>,
}

/// A Topology Control message body (RFC 3626 §9.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tc {
    /// Advertised Neighbor Sequence Number (§9.1), incremented when the set changes.
    pub ansn: u16,
    /// Advertised neighbour main addresses (the sender's MPR selectors with TC_REDUNDANCY 0).
    pub advertised: Vec<Addr>,
}

/// The body of an OLSR message. MID and HNA (single interface, no gateways) are not modelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// HELLO (type 1): link sensing, neighbour detection, MPR signalling (§6).
    Hello(Hello),
    /// TC (type 2): topology declaration (§9).
    Tc(Tc),
}

impl Body {
    fn msg_type(&self) -> u8 {
        match self {
            Body::Hello(_) => HELLO_MESSAGE,
            Body::Tc(_) => TC_MESSAGE,
        }
    }
    fn wire_len(&self) -> usize {
        match self {
            Body::Hello(h) => 4 + h.links.iter().map(LinkMessage::wire_len).sum::<usize>(),
            Body::Tc(tc) => 4 + 4 * tc.advertised.len(),
        }
    }
}

/// One OLSR message: the common header of RFC 3626 §3.3.2 and a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Vtime: how long the receiver may consider the information valid (§3.3.2).
    pub vtime: SimDuration,
    /// Main address of the node that generated the message.
    pub originator: Addr,
    /// Time To Live: the maximum number of hops the message may still travel.
    pub ttl: u8,
    /// Number of hops the message has travelled so far.
    pub hop_count: u8,
    /// Message Sequence Number, unique per originator (§3.3.2).
    pub seq: u16,
    /// The message itself.
    pub body: Body,
}

impl Message {
    /// Bytes of this message on the wire, header included (the Message Size field).
    pub fn wire_len(&self) -> usize {
        MESSAGE_HEADER_LEN + self.body.wire_len()
    }

    fn emit(&self, buf: &mut Vec<u8>) {
        buf.push(self.body.msg_type());
        buf.push(encode_time(self.vtime));
        buf.extend_from_slice(&(self.wire_len() as u16).to_be_bytes());
        buf.extend_from_slice(&self.originator.octets());
        buf.push(self.ttl);
        buf.push(self.hop_count);
        buf.extend_from_slice(&self.seq.to_be_bytes());
        match &self.body {
            Body::Hello(h) => {
                // §6.1: Reserved (16 bits, 0), Htime, Willingness.
                buf.extend_from_slice(&[0, 0, encode_time(h.htime), h.willingness]);
                for l in &h.links {
                    // Link Code, Reserved, Link Message Size (from the link code to the next).
                    buf.push(l.link_code());
                    buf.push(0);
                    buf.extend_from_slice(&(l.wire_len() as u16).to_be_bytes());
                    for a in &l.neighbors {
                        buf.extend_from_slice(&a.octets());
                    }
                }
            }
            Body::Tc(tc) => {
                // §9.1: ANSN, Reserved.
                buf.extend_from_slice(&tc.ansn.to_be_bytes());
                buf.extend_from_slice(&[0, 0]);
                for a in &tc.advertised {
                    buf.extend_from_slice(&a.octets());
                }
            }
        }
    }
}

/// An OLSR packet (RFC 3626 §3.3): packet length, packet sequence number, messages. It travels
/// in one UDP datagram to port 698 ([`crate::OLSR_PORT`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Packet Sequence Number, incremented by one for each packet the node sends (§3.3.1).
    pub seq: u16,
    /// The messages, in order.
    pub messages: Vec<Message>,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn addr_at(b: &[u8], at: usize) -> Addr {
    Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

impl Packet {
    /// Bytes on the wire (the UDP payload, the Packet Length field), in bytes.
    pub fn wire_len(&self) -> usize {
        PACKET_HEADER_LEN + self.messages.iter().map(Message::wire_len).sum::<usize>()
    }

    /// Appends the packet's bytes in the layout of RFC 3626 §3.3, §6.1 and §9.1.
    pub fn emit(&self, buf: &mut Vec<u8>) {
        buf.reserve(self.wire_len());
        buf.extend_from_slice(&(self.wire_len() as u16).to_be_bytes());
        buf.extend_from_slice(&self.seq.to_be_bytes());
        for m in &self.messages {
            m.emit(buf);
        }
    }

    /// Parses a packet. `None` if it is malformed: shorter than its Packet Length, a message
    /// size below 12 bytes or past the end, a body that is not a whole number of addresses.
    /// Messages of unknown type (MID, HNA, …) are skipped; link messages with an invalid link
    /// code (above 15, neighbour type 3, or SYM_LINK with NOT_NEIGH, §6.1.1) are skipped.
    pub fn parse(bytes: &[u8]) -> Option<Packet> {
        if bytes.len() < PACKET_HEADER_LEN {
            return None;
        }
        let plen = be16(bytes, 0) as usize;
        if plen < PACKET_HEADER_LEN || plen > bytes.len() {
            return None;
        }
        let bytes = &bytes[..plen];
        let seq = be16(bytes, 2);
        let mut messages = Vec::new();
        let mut at = PACKET_HEADER_LEN;
        while at < bytes.len() {
            if bytes.len() - at < MESSAGE_HEADER_LEN {
                return None;
            }
            let m = &bytes[at..];
            let size = be16(m, 2) as usize;
            if size < MESSAGE_HEADER_LEN || size > m.len() {
                return None;
            }
            let m = &m[..size];
            let body = &m[MESSAGE_HEADER_LEN..];
            let parsed = match m[0] {
                HELLO_MESSAGE => Some(Body::Hello(parse_hello(body)?)),
                TC_MESSAGE => Some(Body::Tc(parse_tc(body)?)),
                _ => None,
            };
            if let Some(body) = parsed {
                messages.push(Message {
                    vtime: decode_time(m[1]),
                    originator: addr_at(m, 4),
                    ttl: m[8],
                    hop_count: m[9],
                    seq: be16(m, 10),
                    body,
                });
            }
            at += size;
        }
        Some(Packet { seq, messages })
    }
}

fn parse_addrs(b: &[u8]) -> Option<Vec<Addr>> {
    if !b.len().is_multiple_of(4) {
        return None;
    }
    Some(b.chunks_exact(4).map(|c| addr_at(c, 0)).collect())
}

fn parse_hello(b: &[u8]) -> Option<Hello> {
    if b.len() < 4 {
        return None;
    }
    let htime = decode_time(b[2]);
    let willingness = b[3];
    let mut links = Vec::new();
    let mut at = 4;
    while at < b.len() {
        if b.len() - at < 4 {
            return None;
        }
        let code = b[at];
        let size = be16(b, at + 2) as usize;
        if size < 4 || size > b.len() - at {
            return None;
        }
        let neighbors = parse_addrs(&b[at + 4..at + size])?;
        let link_type = match code & 0x03 {
            0 => LinkType::Unspec,
            1 => LinkType::Asym,
            2 => LinkType::Sym,
            _ => LinkType::Lost,
        };
        let neighbor_type = match (code >> 2) & 0x03 {
            0 => Some(NeighborType::Not),
            1 => Some(NeighborType::Sym),
            2 => Some(NeighborType::Mpr),
            _ => None,
        };
        // RFC 3626 §6.1.1: link codes above 15 and SYM_LINK with NOT_NEIGH are invalid.
        match neighbor_type {
            Some(nt) if code <= 15 && !(link_type == LinkType::Sym && nt == NeighborType::Not) => {
                links.push(LinkMessage {
                    link_type,
                    neighbor_type: nt,
                    neighbors,
                })
            }
            _ => {}
        }
        at += size;
    }
    Some(Hello {
        htime,
        willingness,
        links,
    })
}

fn parse_tc(b: &[u8]) -> Option<Tc> {
    if b.len() < 4 {
        return None;
    }
    Some(Tc {
        ansn: be16(b, 0),
        advertised: parse_addrs(&b[4..])?,
    })
}
