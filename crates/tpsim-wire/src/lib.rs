//! tpsim-wire: packet formats.
//!
//! The engine moves packets as typed headers plus lengths ([`Ipv4Repr`], [`UdpRepr`],
//! [`TcpRepr`]); real bytes are produced only when a trace is asked for ([`Ipv4Repr::emit`],
//! [`pcap`]). Header sizes follow the standards:
//!
//! | header | bytes | source |
//! |---|---|---|
//! | IPv4 (no options) | 20 | RFC 791 §3.1 |
//! | UDP | 8 | RFC 768 |
//! | TCP (no options) | 20 | RFC 9293 §3.1 |
//! | SCTP common header (chunks padded to 4 bytes follow) | 12 | RFC 9260 §3.1 |
//! | ARP (IPv4 over 48-bit addresses) | 28 | RFC 826 |
//! | PPP framing on point-to-point links (protocol field only, as ns-3's `PointToPointNetDevice`) | 2 | RFC 1661 §2 |
//!
//! [`SizeConvention`] chooses how an application's configured packet size maps to bytes on
//! the wire: `standard` (payload + real headers) or `ns2` (the configured size *is* the IP
//! packet, as ns-2's UDP agent treats it; ns-2 TCP adds 40 bytes; no link framing).

pub mod arp;
pub mod checksum;
pub mod dccp;
pub mod ip;
pub mod pcap;
pub mod sctp;
pub mod tcp;
pub mod tfrc;
pub mod udp;

pub use ip::{Ecn, IpProtocol, Ipv4Repr, IPV4_HEADER_LEN};
pub use sctp::{SctpParseError, SctpRepr, SCTP_COMMON_HEADER_LEN};
pub use tcp::{TcpFlags, TcpParseError, TcpRepr, TcpTimestamp, TCP_HEADER_LEN};
pub use udp::{UdpRepr, UDP_HEADER_LEN};

/// PPP framing added by a point-to-point link under the `standard` convention, bytes
/// (the 2-byte protocol field, RFC 1661 §2; address/control compressed away).
pub const PPP_HEADER_LEN: u32 = 2;
/// PPP protocol number of IPv4 (RFC 1332 §2).
pub const PPP_PROTO_IPV4: u16 = 0x0021;
/// Default IP MTU of every interface, bytes.
pub const DEFAULT_MTU: u32 = 1500;

/// How configured packet sizes map to bytes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SizeConvention {
    /// The application's size is its payload; transport, IP and link headers are added with
    /// their standard sizes.
    #[default]
    Standard,
    /// ns-2's convention: a UDP/CBR packet's configured size is its whole IP packet (Agent/UDP
    /// adds nothing), ns-2 TCP adds 40 bytes (`tcpip_base_hdr_size_`), wired links add no
    /// framing.
    Ns2,
}

impl SizeConvention {
    /// Bytes of IP packet for a UDP datagram carrying `payload` application bytes.
    #[inline]
    pub fn udp_ip_len(self, payload: u32) -> u32 {
        match self {
            SizeConvention::Standard => payload + UDP_HEADER_LEN + IPV4_HEADER_LEN,
            SizeConvention::Ns2 => payload,
        }
    }
    /// Bytes of IP packet for a TCP segment carrying `payload` application bytes with a TCP
    /// header of `tcp_header_len` bytes (options included). Under `ns2` the header is a flat
    /// 40 bytes for TCP and IP together, options not counted (`tcpip_base_hdr_size_`).
    #[inline]
    pub fn tcp_ip_len(self, payload: u32, tcp_header_len: u32) -> u32 {
        match self {
            SizeConvention::Standard => payload + tcp_header_len + IPV4_HEADER_LEN,
            SizeConvention::Ns2 => payload + IPV4_HEADER_LEN + TCP_HEADER_LEN,
        }
    }
    /// Link-layer framing bytes a point-to-point link adds to each IP packet.
    #[inline]
    pub fn p2p_framing(self) -> u32 {
        match self {
            SizeConvention::Standard => PPP_HEADER_LEN,
            SizeConvention::Ns2 => 0,
        }
    }
}
