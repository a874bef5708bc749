//! The ARP packet for IPv4 over 48-bit MAC addresses (RFC 826, "Packet format"), for traces.

use std::net::Ipv4Addr;

/// Bytes of an ARP packet for IPv4 over Ethernet-style (48-bit) addresses.
pub const ARP_PACKET_LEN: usize = 28;

/// EtherType of ARP (in the LLC/SNAP header of an 802.11 frame).
pub const ETHERTYPE_ARP: u16 = 0x0806;

/// An ARP packet's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpRepr {
    /// `ar$op`: 1 request, 2 reply.
    pub op: u16,
    /// `ar$sha`, `ar$spa`: the sender's hardware and protocol addresses.
    pub sender_hw: [u8; 6],
    pub sender_ip: Ipv4Addr,
    /// `ar$tha` (zero in a request), `ar$tpa`.
    pub target_hw: [u8; 6],
    pub target_ip: Ipv4Addr,
}

impl ArpRepr {
    /// Writes the packet into the first [`ARP_PACKET_LEN`] bytes of `b` (network order).
    ///
    /// Panics if `b` is shorter.
    pub fn emit(&self, b: &mut [u8]) {
        b[0..2].copy_from_slice(&1u16.to_be_bytes()); // ar$hrd: Ethernet (10Mb)
        b[2..4].copy_from_slice(&0x0800u16.to_be_bytes()); // ar$pro: IPv4
        b[4] = 6; // ar$hln
        b[5] = 4; // ar$pln
        b[6..8].copy_from_slice(&self.op.to_be_bytes());
        b[8..14].copy_from_slice(&self.sender_hw);
        b[14..18].copy_from_slice(&self.sender_ip.octets());
        b[18..24].copy_from_slice(&self.target_hw);
        b[24..28].copy_from_slice(&self.target_ip.octets());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_has_the_fields_of_rfc_826_in_order() {
        let mut b = [0xeeu8; ARP_PACKET_LEN];
        ArpRepr {
            op: 1,
            sender_hw: [2, 0, 0, 0, 0, 5],
            sender_ip: Ipv4Addr::new(10, 0, 0, 6),
            target_hw: [0; 6],
            target_ip: Ipv4Addr::new(10, 0, 0, 9),
        }
        .emit(&mut b);
        assert_eq!(
            b,
            [0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 5, 10, 0, 0, 6, 0, 0, 0, 0, 0, 0, 10, 0, 0, 9]
        );
    }
}
