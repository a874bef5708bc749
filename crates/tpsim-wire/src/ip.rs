//! IPv4 header (RFC 791 §3.1), without options.

use crate::checksum;
use std::net::Ipv4Addr;

/// IPv4 header length without options, bytes (RFC 791 §3.1: IHL = 5).
pub const IPV4_HEADER_LEN: u32 = 20;
/// Default initial TTL (RFC 1700 / Linux `ip_default_ttl`).
pub const DEFAULT_TTL: u8 = 64;

/// The IP protocol numbers tpsim carries (IANA "Assigned Internet Protocol Numbers").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum IpProtocol {
    /// TCP, 6.
    Tcp = 6,
    /// UDP, 17.
    Udp = 17,
    /// DCCP, 33.
    Dccp = 33,
    /// SCTP, 132.
    Sctp = 132,
}

/// The ECN field of the IP header, its two low bits of the former TOS octet (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// 00: not ECN-capable.
    #[default]
    NotEct = 0,
    /// 01: ECN-capable transport, ECT(1).
    Ect1 = 1,
    /// 10: ECN-capable transport, ECT(0).
    Ect0 = 2,
    /// 11: Congestion Experienced, set by a router instead of dropping the packet.
    Ce = 3,
}

impl Ecn {
    /// Whether the sender declared the packet ECN-capable (ECT(0), ECT(1) or, once marked, CE).
    #[inline]
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// A parsed-form IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Payload protocol.
    pub protocol: IpProtocol,
    /// Time to live, decremented per hop (RFC 791 §3.2).
    pub ttl: u8,
    /// Identification field.
    pub ident: u16,
    /// Total length (header + payload), bytes.
    pub total_len: u16,
    /// The ECN field (RFC 3168 §5).
    pub ecn: Ecn,
}

impl Ipv4Repr {
    /// Writes the 20-byte header, with a correct header checksum, into `buf[..20]`.
    ///
    /// # Panics
    /// If `buf` is shorter than 20 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..IPV4_HEADER_LEN as usize];
        b[0] = 0x45; // version 4, IHL 5
        b[1] = self.ecn as u8; // DSCP 0, then the ECN field (RFC 3168 §5)
        b[2..4].copy_from_slice(&self.total_len.to_be_bytes());
        b[4..6].copy_from_slice(&self.ident.to_be_bytes());
        b[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, no fragmentation in tpsim
        b[8] = self.ttl;
        b[9] = self.protocol as u8;
        b[10..12].fill(0);
        b[12..16].copy_from_slice(&self.src.octets());
        b[16..20].copy_from_slice(&self.dst.octets());
        let c = checksum::checksum(b);
        b[10..12].copy_from_slice(&c.to_be_bytes());
    }

    /// The one's-complement sum of the pseudo-header used by UDP and TCP checksums
    /// (RFC 768; RFC 9293 §3.1) for an upper-layer segment of `l4_len` bytes.
    pub fn pseudo_header_sum(&self, l4_len: u16) -> u32 {
        let mut s = checksum::accumulate(0, &self.src.octets());
        s = checksum::accumulate(s, &self.dst.octets());
        s = s.wrapping_add(self.protocol as u32);
        s.wrapping_add(l4_len as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitted_header_verifies() {
        let r = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::Udp,
            ttl: 64,
            ident: 7,
            total_len: 156,
            ecn: crate::Ecn::NotEct,
        };
        let mut b = [0u8; 20];
        r.emit(&mut b);
        assert_eq!(b[0], 0x45);
        assert_eq!(u16::from_be_bytes([b[2], b[3]]), 156);
        assert_eq!(b[9], 17);
        assert_eq!(checksum::checksum(&b), 0);
    }
}
