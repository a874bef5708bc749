//! TFRC headers (RFC 5348) carried over UDP (IP protocol 17).
//!
//! RFC 5348 specifies the information TFRC's packets carry (§3.2.1 and §4.1 for data: a
//! sequence number, a timestamp and the sender's RTT estimate; §3.2.2 and §6.2 for feedback:
//! the echoed timestamp, the delay t_delay, the receive rate X_recv and the loss event rate
//! p) but no wire format: it leaves that to the protocol TFRC runs in. tpsim's TFRC runs over
//! UDP, with this header at the start of the UDP payload (all fields big-endian):
//!
//! ```text
//! Data (16 bytes):              Feedback (20 bytes):
//!  0      type = 1               0      type = 2
//!  1      flags                  1..4   reserved (zero)
//!  2..4   reserved (zero)
//!  4..8   sequence number        4..8   timestamp echo, µs
//!  8..12  timestamp, µs          8..12  t_delay, µs
//! 12..16  RTT estimate R, µs    12..16  X_recv, bytes/s (as RFC 4342 §8.3's Receive Rate)
//!                               16..20  1/p (as RFC 4342 §8.5's Loss Event Rate)
//! ```
//!
//! The data packet's flags: bit 0 (0x01) is "urgent", the sender asking for feedback at once
//! (ns-2.35's `UrgentFlag`, which its TFRC sender sets until its first feedback and after each
//! expiry of its no-feedback timer); the other bits are zero.
//!
//! Timestamps are the sender's clock in µs modulo 2^32 (they wrap after 71 minutes; every use
//! is a wrapping difference). The loss event rate travels as its inverse, rounded to the
//! nearest integer, with `u32::MAX` meaning "no loss event yet" (p = 0), the encoding of DCCP's
//! Loss Event Rate option (RFC 4342 §8.5).
//!
//! Sizes ([`TfrcRepr::ip_len`]): under `standard` a packet is 20 (IPv4) + 8 (UDP) + the TFRC
//! header + the payload. Under `ns2` it is what ns-2.35 counts: a data packet is
//! `packetSize_` + `headersize_` 32 (Agent/TFRC with `useHeaders_ true`, ns-default.tcl), a
//! feedback packet is Agent/TFRCSink's `packetSize_` 40.

use crate::checksum;
use crate::ip::Ipv4Repr;
use crate::udp::{UdpRepr, UDP_HEADER_LEN};
use crate::{SizeConvention, IPV4_HEADER_LEN};

/// The largest message TFRC carries in one packet over an IP MTU of `mtu` bytes: the MTU less
/// the IPv4, UDP and TFRC data headers (`standard`) or ns-2's 32 bytes (`ns2`).
pub fn max_message(sizes: SizeConvention, mtu: u32) -> u32 {
    match sizes {
        SizeConvention::Standard => mtu.saturating_sub(IPV4_HEADER_LEN + UDP_HEADER_LEN + TFRC_DATA_HEADER_LEN),
        SizeConvention::Ns2 => mtu.saturating_sub(NS2_TFRC_DATA_OVERHEAD),
    }
}

/// Length of the TFRC data header, bytes (tpsim's format, see the module docs).
pub const TFRC_DATA_HEADER_LEN: u32 = 16;
/// Length of the TFRC feedback header, bytes (tpsim's format, see the module docs).
pub const TFRC_FEEDBACK_HEADER_LEN: u32 = 20;
/// ns-2.35's Agent/TFRC `headersize_`: bytes added to `packetSize_` for a data packet
/// (ns-default.tcl, with `useHeaders_ true`).
pub const NS2_TFRC_DATA_OVERHEAD: u32 = 32;
/// ns-2.35's Agent/TFRCSink `packetSize_`: the size of a feedback packet, bytes
/// (ns-default.tcl).
pub const NS2_TFRC_FEEDBACK_LEN: u32 = 40;

const TYPE_DATA: u8 = 1;
const TYPE_FEEDBACK: u8 = 2;
/// Data flags: the sender asks for feedback at once.
const FLAG_URGENT: u8 = 0x01;

/// A TFRC header in parsed form. Fixed-size and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfrcRepr {
    /// A data packet (RFC 5348 §3.2.1, §4.1).
    Data {
        /// Sequence number, one per data packet, from 0 (wraps at 2^32).
        seq: u32,
        /// The sender's clock when the packet was sent, µs modulo 2^32.
        timestamp: u32,
        /// The sender's current RTT estimate R, µs (0: no estimate yet).
        rtt: u32,
        /// The sender asks for feedback at once (flags bit 0; see the module docs).
        urgent: bool,
    },
    /// A feedback packet (RFC 5348 §3.2.2, §6.2).
    Feedback {
        /// The timestamp of the last data packet received, µs (t_recvdata).
        timestamp_echo: u32,
        /// Time between the receipt of that data packet and this feedback, µs (t_delay).
        t_delay: u32,
        /// Receive rate X_recv over the last feedback interval, bytes/s.
        x_recv: u32,
        /// The loss event rate p as 1/p ([`encode_p`], [`decode_p`]).
        p: u32,
    },
}

/// Why a TFRC header did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfrcParseError {
    /// Fewer bytes than the header.
    Truncated,
    /// A type octet other than 1 (data) or 2 (feedback).
    UnknownType(u8),
}

/// Encodes a loss event rate `p` (0 ≤ p ≤ 1) as 1/p rounded to the nearest integer, at least
/// 1; p = 0 (no loss event) is `u32::MAX` (RFC 4342 §8.5's encoding).
pub fn encode_p(p: f64) -> u32 {
    if p.is_nan() || p <= 0.0 {
        return u32::MAX;
    }
    let inv = (1.0 / p).round();
    if inv >= u32::MAX as f64 {
        u32::MAX - 1
    } else {
        (inv as u32).max(1)
    }
}

/// Decodes [`encode_p`]'s value: `u32::MAX` is p = 0, 0 (not produced) is read as p = 1.
pub fn decode_p(inv: u32) -> f64 {
    match inv {
        u32::MAX => 0.0,
        0 => 1.0,
        n => 1.0 / n as f64,
    }
}

impl TfrcRepr {
    /// The TFRC header's length, bytes.
    #[inline]
    pub fn header_len(&self) -> u32 {
        match self {
            TfrcRepr::Data { .. } => TFRC_DATA_HEADER_LEN,
            TfrcRepr::Feedback { .. } => TFRC_FEEDBACK_HEADER_LEN,
        }
    }

    /// Bytes of IP packet for this header carrying `payload` application bytes (see the module
    /// docs): `standard` is IPv4 + UDP + TFRC + payload; `ns2` is payload + 32 for data and 40
    /// for feedback, as ns-2.35 counts them.
    #[inline]
    pub fn ip_len(&self, sizes: SizeConvention, payload: u32) -> u32 {
        match sizes {
            SizeConvention::Standard => IPV4_HEADER_LEN + UDP_HEADER_LEN + self.header_len() + payload,
            SizeConvention::Ns2 => match self {
                TfrcRepr::Data { .. } => payload + NS2_TFRC_DATA_OVERHEAD,
                TfrcRepr::Feedback { .. } => NS2_TFRC_FEEDBACK_LEN,
            },
        }
    }

    /// Writes the TFRC header into `buf[..header_len]`.
    ///
    /// # Panics
    /// If `buf` is shorter than the header.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..self.header_len() as usize];
        b[1..4].fill(0);
        let words: [u32; 4] = match *self {
            TfrcRepr::Data {
                seq,
                timestamp,
                rtt,
                urgent,
            } => {
                b[0] = TYPE_DATA;
                b[1] = FLAG_URGENT * u8::from(urgent);
                [seq, timestamp, rtt, 0]
            }
            TfrcRepr::Feedback {
                timestamp_echo,
                t_delay,
                x_recv,
                p,
            } => {
                b[0] = TYPE_FEEDBACK;
                [timestamp_echo, t_delay, x_recv, p]
            }
        };
        for (i, chunk) in b[4..].chunks_exact_mut(4).enumerate() {
            chunk.copy_from_slice(&words[i].to_be_bytes());
        }
    }

    /// Parses a TFRC header from the start of `bytes` (a UDP payload); returns it and the
    /// application bytes after it.
    ///
    /// # Errors
    /// [`TfrcParseError`] for a short buffer or an unknown type.
    pub fn parse(bytes: &[u8]) -> Result<(TfrcRepr, &[u8]), TfrcParseError> {
        let ty = *bytes.first().ok_or(TfrcParseError::Truncated)?;
        let len = match ty {
            TYPE_DATA => TFRC_DATA_HEADER_LEN,
            TYPE_FEEDBACK => TFRC_FEEDBACK_HEADER_LEN,
            other => return Err(TfrcParseError::UnknownType(other)),
        } as usize;
        if bytes.len() < len {
            return Err(TfrcParseError::Truncated);
        }
        let word = |i: usize| u32::from_be_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
        let repr = if ty == TYPE_DATA {
            TfrcRepr::Data {
                seq: word(1),
                timestamp: word(2),
                rtt: word(3),
                urgent: bytes[1] & FLAG_URGENT != 0,
            }
        } else {
            TfrcRepr::Feedback {
                timestamp_echo: word(1),
                t_delay: word(2),
                x_recv: word(3),
                p: word(4),
            }
        };
        Ok((repr, &bytes[len..]))
    }

    /// Writes a whole UDP datagram into `buf` (its length is the datagram's: UDP header, this
    /// header, then zero payload bytes) with the UDP checksum over the IPv4 pseudo-header of
    /// `ip` (RFC 768; a computed zero is sent as 0xffff). Writes nothing if `buf` is shorter
    /// than the UDP and TFRC headers.
    pub fn emit_udp(&self, udp: &UdpRepr, ip: &Ipv4Repr, buf: &mut [u8]) {
        let hl = (UDP_HEADER_LEN + self.header_len()) as usize;
        let len = buf.len();
        if len < hl || len > u16::MAX as usize {
            return;
        }
        buf[0..2].copy_from_slice(&udp.src_port.to_be_bytes());
        buf[2..4].copy_from_slice(&udp.dst_port.to_be_bytes());
        buf[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        buf[6..8].fill(0);
        self.emit(&mut buf[UDP_HEADER_LEN as usize..]);
        buf[hl..].fill(0);
        let sum = checksum::accumulate(ip.pseudo_header_sum(len as u16), buf);
        let mut c = checksum::finish(sum);
        if c == 0 {
            c = 0xffff;
        }
        buf[6..8].copy_from_slice(&c.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::IpProtocol;
    use std::net::Ipv4Addr;

    const DATA: TfrcRepr = TfrcRepr::Data {
        seq: 0x0102_0304,
        timestamp: 4_000_000_000,
        rtt: 100_000,
        urgent: false,
    };
    const FEEDBACK: TfrcRepr = TfrcRepr::Feedback {
        timestamp_echo: 7,
        t_delay: 1234,
        x_recv: 125_000,
        p: 100,
    };

    #[test]
    fn data_and_feedback_round_trip() {
        for h in [DATA, FEEDBACK] {
            let mut b = [0xAAu8; 40];
            h.emit(&mut b);
            let (back, rest) = TfrcRepr::parse(&b).unwrap();
            assert_eq!(back, h);
            assert_eq!(rest.len(), 40 - h.header_len() as usize);
            assert_eq!(&b[1..4], &[0, 0, 0]);
        }
    }

    #[test]
    fn the_urgent_flag_is_bit_0_of_the_data_flags() {
        let urgent = TfrcRepr::Data {
            seq: 0x0102_0304,
            timestamp: 4_000_000_000,
            rtt: 100_000,
            urgent: true,
        };
        let mut b = [0xAAu8; 16];
        urgent.emit(&mut b);
        assert_eq!(&b[1..4], &[1, 0, 0]);
        assert_eq!(TfrcRepr::parse(&b).unwrap().0, urgent);
        b[1] = 0xFE; // other flag bits: not urgent
        assert_eq!(TfrcRepr::parse(&b).unwrap().0, DATA);
    }

    #[test]
    fn data_layout_is_big_endian_after_the_type() {
        let mut b = [0u8; 16];
        DATA.emit(&mut b);
        assert_eq!(b[0], 1);
        assert_eq!(&b[4..8], &[1, 2, 3, 4]);
        assert_eq!(u32::from_be_bytes(b[12..16].try_into().unwrap()), 100_000);
    }

    #[test]
    fn short_or_unknown_headers_are_refused() {
        let mut b = [0u8; 20];
        FEEDBACK.emit(&mut b);
        assert_eq!(TfrcRepr::parse(&b[..19]), Err(TfrcParseError::Truncated));
        assert_eq!(TfrcRepr::parse(&[]), Err(TfrcParseError::Truncated));
        b[0] = 9;
        assert_eq!(TfrcRepr::parse(&b), Err(TfrcParseError::UnknownType(9)));
    }

    #[test]
    fn sizes_standard_and_ns2() {
        assert_eq!(DATA.ip_len(SizeConvention::Standard, 128), 20 + 8 + 16 + 128);
        assert_eq!(FEEDBACK.ip_len(SizeConvention::Standard, 0), 20 + 8 + 20);
        // ns-2.35 (study D with sizes=msg): a 128-byte message is a 160-byte TFRC packet,
        // feedback is 40 bytes.
        assert_eq!(DATA.ip_len(SizeConvention::Ns2, 128), 160);
        assert_eq!(FEEDBACK.ip_len(SizeConvention::Ns2, 0), 40);
    }

    #[test]
    fn p_encoding_is_the_inverse_with_a_no_loss_value() {
        assert_eq!(encode_p(0.0), u32::MAX);
        assert_eq!(decode_p(u32::MAX), 0.0);
        assert_eq!(encode_p(0.01), 100);
        assert_eq!(decode_p(100), 0.01);
        assert_eq!(encode_p(1.0), 1);
        assert_eq!(encode_p(0.3), 3);
    }

    #[test]
    fn udp_checksum_verifies_over_the_datagram() {
        let len = 8 + 16 + 100;
        let ip = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::Udp,
            ttl: 64,
            ident: 0,
            total_len: 20 + len as u16,
            ecn: crate::Ecn::NotEct,
        };
        let udp = UdpRepr {
            src_port: 5001,
            dst_port: 5002,
        };
        let mut b = vec![0xFFu8; len];
        DATA.emit_udp(&udp, &ip, &mut b);
        assert_eq!(
            checksum::finish(checksum::accumulate(ip.pseudo_header_sum(len as u16), &b)),
            0
        );
        assert_eq!(u16::from_be_bytes([b[4], b[5]]) as usize, len);
        assert_eq!(TfrcRepr::parse(&b[8..]).unwrap().0, DATA);
        assert!(b[24..].iter().all(|&x| x == 0));
        let mut short = [0u8; 20];
        DATA.emit_udp(&udp, &ip, &mut short);
        assert_eq!(short, [0u8; 20]);
    }
}
