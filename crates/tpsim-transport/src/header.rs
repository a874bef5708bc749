//! Transport headers: the [`Header`] trait every transport's header type implements, and
//! the `headers!` macro that declares [`L4Header`], the enum a [`Segment`](crate::Segment)
//! carries (one variant per header type: one line each in the crate root's `headers!`).

use tpsim_wire::{IpProtocol, Ipv4Repr, TcpRepr, UdpRepr};

/// What the engine needs of a transport header: its protocol and ports (to deliver it), its
/// bytes (pcap traces) and its name in ns-2's traces.
pub trait Header {
    /// The IP protocol number (a transport over UDP, as TFRC: [`IpProtocol::Udp`]).
    fn protocol(&self) -> IpProtocol;
    /// The source port.
    fn src_port(&self) -> u16;
    /// The destination port (for demultiplexing to a socket).
    fn dst_port(&self) -> u16;
    /// Writes this header over `out` (the transport's whole length, header and payload, as the
    /// IP header `ip` counts it), with zero payload bytes and the checksum the protocol
    /// defines: what a pcap trace shows of a segment (tpsim carries no application data). A
    /// length shorter than the header (the `ns2` size convention counts smaller headers)
    /// writes a shorter form of the header if the protocol has one, else nothing.
    fn emit_zeroed(&self, ip: &Ipv4Repr, out: &mut [u8]);
    /// The packet type ns-2's traces give this segment (an ns-2 `packet_info` name such as
    /// `"cbr"`, `"tcp"`, `"ack"`), `data` telling whether it carries a flow's application
    /// data. A transport ns-2 lacks names itself.
    fn ns2_type(&self, data: bool) -> &'static str;
    /// Whether ns-2's agents of this protocol count the IP header in their packet sizes
    /// themselves (its TCP agents do): ns-2's wireless routing agents add the 20-byte IP
    /// header to the size of every packet they originate that does not. Default: false.
    fn ns2_counts_ip_header(&self) -> bool {
        false
    }
}

/// The payload of `len` zero bytes (at most 64 KiB) that [`Header::emit_zeroed`] writes
/// after a header.
fn zeros(len: usize) -> &'static [u8] {
    static ZEROS: [u8; 65536] = [0; 65536];
    &ZEROS[..len.min(ZEROS.len())]
}

/// Declares [`L4Header`], one variant per header type, and its [`Header`] implementation,
/// which hands every call to the variant's header.
macro_rules! headers {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// A transport header, typed.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum L4Header {
            $($(#[$doc])* $variant($ty),)*
        }

        impl $crate::Header for L4Header {
            #[inline]
            fn protocol(&self) -> tpsim_wire::IpProtocol {
                match self { $(L4Header::$variant(h) => h.protocol(),)* }
            }
            #[inline]
            fn src_port(&self) -> u16 {
                match self { $(L4Header::$variant(h) => h.src_port(),)* }
            }
            #[inline]
            fn dst_port(&self) -> u16 {
                match self { $(L4Header::$variant(h) => h.dst_port(),)* }
            }
            fn emit_zeroed(&self, ip: &tpsim_wire::Ipv4Repr, out: &mut [u8]) {
                match self { $(L4Header::$variant(h) => h.emit_zeroed(ip, out),)* }
            }
            #[inline]
            fn ns2_type(&self, data: bool) -> &'static str {
                match self { $(L4Header::$variant(h) => h.ns2_type(data),)* }
            }
            #[inline]
            fn ns2_counts_ip_header(&self) -> bool {
                match self { $(L4Header::$variant(h) => h.ns2_counts_ip_header(),)* }
            }
        }
    };
}

impl Header for UdpRepr {
    fn protocol(&self) -> IpProtocol {
        IpProtocol::Udp
    }
    fn src_port(&self) -> u16 {
        self.src_port
    }
    fn dst_port(&self) -> u16 {
        self.dst_port
    }
    fn emit_zeroed(&self, ip: &Ipv4Repr, out: &mut [u8]) {
        let (len, hl) = (out.len(), tpsim_wire::UDP_HEADER_LEN as usize);
        if len >= hl {
            self.emit(ip, zeros(len - hl), out);
        }
    }
    /// ns-2's constant-bit-rate application's packets (`cbr`); a UDP packet without a flow's
    /// data (a beacon) is `udp`.
    fn ns2_type(&self, data: bool) -> &'static str {
        if data {
            "cbr"
        } else {
            "udp"
        }
    }
}

impl Header for TcpRepr {
    fn protocol(&self) -> IpProtocol {
        IpProtocol::Tcp
    }
    fn src_port(&self) -> u16 {
        self.src_port
    }
    fn dst_port(&self) -> u16 {
        self.dst_port
    }
    /// A length that counts no options (the `ns2` size convention) writes the header
    /// without them.
    fn emit_zeroed(&self, ip: &Ipv4Repr, out: &mut [u8]) {
        let len = out.len();
        let h = if len < self.header_len() as usize {
            self.without_options()
        } else {
            *self
        };
        let hl = h.header_len() as usize;
        if len >= hl {
            h.emit(ip, zeros(len - hl), out);
        }
    }
    /// Data segments are `tcp`, segments without data `ack` (ns-2's `Agent/TCPSink`).
    fn ns2_type(&self, data: bool) -> &'static str {
        if data {
            "tcp"
        } else {
            "ack"
        }
    }
    fn ns2_counts_ip_header(&self) -> bool {
        true
    }
}

impl Header for tpsim_wire::dccp::DccpRepr {
    fn protocol(&self) -> IpProtocol {
        IpProtocol::Dccp
    }
    fn src_port(&self) -> u16 {
        self.src_port
    }
    fn dst_port(&self) -> u16 {
        self.dst_port
    }
    /// The header with its options and the checksum over the pseudo-header (RFC 4340 §9);
    /// without options if only the fixed header fits (`ns2` sizes count a shorter header);
    /// nothing if not even that.
    fn emit_zeroed(&self, ip: &Ipv4Repr, out: &mut [u8]) {
        let len = out.len();
        let mut h = *self;
        if len < h.header_len() as usize {
            h.options = tpsim_wire::dccp::DccpOptions::NONE;
        }
        let hl = h.header_len() as usize;
        if len >= hl {
            h.emit(ip, zeros(len - hl), out);
        }
    }
    /// ns-2.35's Agent/DCCP types.
    fn ns2_type(&self, data: bool) -> &'static str {
        if data {
            "DCCP_Data"
        } else {
            "DCCP_Ack"
        }
    }
}
