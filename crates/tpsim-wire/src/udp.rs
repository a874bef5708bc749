//! UDP header (RFC 768).

use crate::checksum;
use crate::ip::Ipv4Repr;
use crate::{SizeConvention, IPV4_HEADER_LEN};

/// The largest message UDP carries in one datagram over an IP MTU of `mtu` bytes: the MTU less
/// the IPv4 and UDP headers (`standard`), or the MTU itself (`ns2`: the message is the IP
/// packet).
pub fn max_message(sizes: SizeConvention, mtu: u32) -> u32 {
    match sizes {
        SizeConvention::Standard => mtu.saturating_sub(IPV4_HEADER_LEN + UDP_HEADER_LEN),
        SizeConvention::Ns2 => mtu,
    }
}

/// UDP header length, bytes (RFC 768).
pub const UDP_HEADER_LEN: u32 = 8;

/// A parsed-form UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

impl UdpRepr {
    /// Writes header and `payload` into `buf[..8 + payload.len()]`, with the checksum over
    /// the IPv4 pseudo-header, header and payload (RFC 768: a computed zero is sent as 0xffff).
    ///
    /// # Panics
    /// If `buf` is too short.
    pub fn emit(&self, ip: &Ipv4Repr, payload: &[u8], buf: &mut [u8]) {
        let len = UDP_HEADER_LEN as usize + payload.len();
        let b = &mut buf[..len];
        b[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        b[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        b[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        b[6..8].fill(0);
        b[8..].copy_from_slice(payload);
        let sum = checksum::accumulate(ip.pseudo_header_sum(len as u16), b);
        let mut c = checksum::finish(sum);
        if c == 0 {
            c = 0xffff;
        }
        b[6..8].copy_from_slice(&c.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::IpProtocol;
    use std::net::Ipv4Addr;

    #[test]
    fn checksum_verifies_with_pseudo_header() {
        let ip = Ipv4Repr {
            src: Ipv4Addr::new(10, 1, 1, 1),
            dst: Ipv4Addr::new(10, 1, 1, 2),
            protocol: IpProtocol::Udp,
            ttl: 64,
            ident: 0,
            total_len: 20 + 8 + 5,
            ecn: crate::Ecn::NotEct,
        };
        let mut b = [0u8; 13];
        UdpRepr {
            src_port: 49152,
            dst_port: 9,
        }
        .emit(&ip, b"hello", &mut b);
        let sum = checksum::accumulate(ip.pseudo_header_sum(13), &b);
        assert_eq!(checksum::finish(sum), 0);
    }
}
