//! [`AddrList`]: the IPv4 addresses an INIT or INIT ACK lists (RFC 9260 §3.3.2.1), bounded so
//! that a packet stays a fixed-size value; the tests of the INIT and INIT ACK layouts.

use super::{IPV4_ADDRESS_PARAM_LEN, MAX_INIT_ADDRS};
use std::fmt;

/// The IPv4 addresses of an INIT or INIT ACK, at most [`MAX_INIT_ADDRS`], in order.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AddrList {
    n: u8,
    a: [u32; MAX_INIT_ADDRS],
}

impl AddrList {
    /// The first [`MAX_INIT_ADDRS`] of `addrs`.
    pub fn from_slice(addrs: &[std::net::Ipv4Addr]) -> AddrList {
        let mut l = AddrList::default();
        for &x in addrs.iter().take(MAX_INIT_ADDRS) {
            l.push(x);
        }
        l
    }

    /// Appends `x`; false (and nothing added) when full.
    pub fn push(&mut self, x: std::net::Ipv4Addr) -> bool {
        if self.n as usize == MAX_INIT_ADDRS {
            return false;
        }
        self.a[self.n as usize] = u32::from(x);
        self.n += 1;
        true
    }

    /// Number of addresses.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The addresses, in order.
    pub fn iter(&self) -> impl Iterator<Item = std::net::Ipv4Addr> + '_ {
        self.a[..self.n as usize].iter().map(|&x| std::net::Ipv4Addr::from(x))
    }

    /// Bytes of their IPv4 Address parameters.
    pub fn params_len(&self) -> u32 {
        self.n as u32 * IPV4_ADDRESS_PARAM_LEN
    }
}

impl fmt::Debug for AddrList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::roundtrip;
    use super::super::*;

    #[test]
    fn init_address_parameters_follow_rfc9260_3_3_2_1() {
        let mut i = InitChunk {
            initiate_tag: 1,
            ..InitChunk::default()
        };
        assert!(i.addresses.push("10.0.0.1".parse().unwrap()));
        assert!(i.addresses.push("10.0.2.1".parse().unwrap()));
        let r = SctpRepr {
            control: Some(ControlChunk::InitAck(i, StateCookie([3; STATE_COOKIE_LEN]))),
            ..SctpRepr::new(1, 2, 0)
        };
        let b = roundtrip(&r);
        // Chunk: 20 fixed + 2 x 8 (addresses) + 4 + 32 (cookie) = 72 bytes.
        assert_eq!(&b[12..16], &[2, 0, 0, 72]);
        assert_eq!(&b[32..40], &[0, 5, 0, 8, 10, 0, 0, 1]);
        assert_eq!(&b[40..48], &[0, 5, 0, 8, 10, 0, 2, 1]);
        assert_eq!(&b[48..52], &[0, 7, 0, 36]);
        let mut full = AddrList::default();
        for k in 0..MAX_INIT_ADDRS as u8 {
            assert!(full.push(std::net::Ipv4Addr::new(10, 0, k, 1)));
        }
        assert!(!full.push(std::net::Ipv4Addr::new(10, 9, 9, 9)), "bounded");
        assert_eq!(full.len(), MAX_INIT_ADDRS);
    }

    #[test]
    fn init_layout_matches_rfc9260_3_3_2() {
        let r = SctpRepr {
            control: Some(ControlChunk::Init(InitChunk {
                initiate_tag: 0x0102_0304,
                a_rwnd: 65536,
                outbound_streams: 10,
                inbound_streams: 65535,
                initial_tsn: 0x0102_0304,
                addresses: AddrList::default(),
                forward_tsn: false,
            })),
            ..SctpRepr::new(1, 2, 0)
        };
        let b = roundtrip(&r);
        assert_eq!(b.len(), 32);
        assert_eq!(&b[12..16], &[1, 0, 0, 20]); // type 1, flags 0, length 20
        assert_eq!(&b[16..20], &[1, 2, 3, 4]);
        assert_eq!(&b[20..24], &65536u32.to_be_bytes());
        assert_eq!(&b[24..28], &[0, 10, 0xff, 0xff]);
    }
}
