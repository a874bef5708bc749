//! SCTP packets (RFC 9260 §3): the common header, the chunks an association uses (DATA,
//! INIT, INIT ACK, SACK, HEARTBEAT, HEARTBEAT ACK, ABORT, SHUTDOWN, SHUTDOWN ACK, ERROR,
//! COOKIE ECHO, COOKIE ACK, SHUTDOWN COMPLETE, and PR-SCTP's FORWARD TSN, RFC 3758 §3.2) and the
//! CRC32c checksum (RFC 9260 Appendix A).
//!
//! # A packet is a fixed-size value
//!
//! tpsim moves segments as `Copy` values, so [`SctpRepr`] describes a packet with bounded
//! room: at most one control chunk (first, as RFC 9260 §6.10 wants control chunks ahead of
//! DATA), at most one SACK, and at most [`MAX_DATA_CHUNKS`] DATA chunks, in that order. A SACK
//! reports at most [`MAX_GAP_BLOCKS`] Gap Ack Blocks and [`MAX_DUP_TSNS`] duplicate TSNs, a
//! FORWARD TSN at most [`MAX_FWD_TSN_STREAMS`] Stream/Sequence pairs; INIT and INIT ACK carry
//! no optional parameter but Forward-TSN-Supported (RFC 3758 §3.1). An
//! association that uses these types bundles within these bounds (and within the path MTU);
//! [`SctpRepr::parse`] refuses a real packet that does not fit them
//! ([`SctpParseError::Unsupported`]).
//!
//! tpsim carries no user data: a DATA chunk has a length and, off the wire, the application
//! message's id ([`DataChunk::msg_id`]) and in [`DataChunk::payload`] what its bytes stand for
//! (the message's creation and first-transmission times). [`SctpRepr::emit`] writes zeros for
//! the user data and a Payload Protocol Identifier of 0 ("unspecified", RFC 9260 §3.3.1, so that
//! dissectors show the data as data); everything else is the real wire format, with padding to
//! 4 bytes (RFC 9260 §3.2) and the CRC32c.

use std::fmt;

mod addresses;
mod data_chunks;
mod forward_tsn;
pub use addresses::AddrList;
pub use data_chunks::DataChunks;
pub use forward_tsn::{
    ForwardTsnChunk, SkippedStream, FORWARD_TSN_CHUNK_LEN, FORWARD_TSN_SUPPORTED_LEN, MAX_FWD_TSN_STREAMS,
    PARAM_FORWARD_TSN_SUPPORTED,
};

/// Common header length, bytes (RFC 9260 §3.1).
pub const SCTP_COMMON_HEADER_LEN: u32 = 12;
/// Chunk header length (type, flags, length), bytes (RFC 9260 §3.2).
pub const CHUNK_HEADER_LEN: u32 = 4;
/// DATA chunk header length, bytes (RFC 9260 §3.3.1).
pub const DATA_CHUNK_HEADER_LEN: u32 = 16;
/// INIT and INIT ACK chunk length without parameters, bytes (RFC 9260 §3.3.2, §3.3.3).
pub const INIT_CHUNK_LEN: u32 = 20;
/// SACK chunk length without Gap Ack Blocks or duplicate TSNs, bytes (RFC 9260 §3.3.4).
pub const SACK_CHUNK_LEN: u32 = 16;
/// HEARTBEAT and HEARTBEAT ACK length: chunk header and a Heartbeat Info parameter holding
/// 8 bytes (the send time), bytes (RFC 9260 §3.3.5, §3.3.6).
pub const HEARTBEAT_CHUNK_LEN: u32 = CHUNK_HEADER_LEN + 4 + 8;
/// Bytes of the State Cookie tpsim's associations send (opaque to the wire; RFC 9260 §5.1.3).
pub const STATE_COOKIE_LEN: usize = 32;
/// DATA chunks a [`SctpRepr`] can hold: 10, as many of study D's 128-byte messages as a
/// 1500-byte packet holds (ns-2.35 bundles them 10 a packet); smaller messages bundle 10 per
/// packet. Every segment value carries room for them (a [`DataChunk`] is 32 bytes), so the
/// bound trades bundling of small messages against the size of every packet in flight.
pub const MAX_DATA_CHUNKS: usize = 10;
/// Gap Ack Blocks a [`SackChunk`] can hold.
pub const MAX_GAP_BLOCKS: usize = 4;
/// Duplicate TSNs a [`SackChunk`] can hold.
pub const MAX_DUP_TSNS: usize = 4;
/// IPv4 Address parameters an INIT or INIT ACK can hold (a multi-homed endpoint's addresses).
pub const MAX_INIT_ADDRS: usize = 4;
/// Length of an IPv4 Address parameter, bytes (RFC 9260 §3.3.2.1).
pub const IPV4_ADDRESS_PARAM_LEN: u32 = 8;

/// Chunk Type values (RFC 9260 §3.2), as the wire carries them.
pub mod chunk_type {
    /// Payload Data (DATA).
    pub const DATA: u8 = 0;
    /// Initiation (INIT).
    pub const INIT: u8 = 1;
    /// Initiation Acknowledgement (INIT ACK).
    pub const INIT_ACK: u8 = 2;
    /// Selective Acknowledgement (SACK).
    pub const SACK: u8 = 3;
    /// Heartbeat Request (HEARTBEAT).
    pub const HEARTBEAT: u8 = 4;
    /// Heartbeat Acknowledgement (HEARTBEAT ACK).
    pub const HEARTBEAT_ACK: u8 = 5;
    /// Abort (ABORT).
    pub const ABORT: u8 = 6;
    /// Shutdown (SHUTDOWN).
    pub const SHUTDOWN: u8 = 7;
    /// Shutdown Acknowledgement (SHUTDOWN ACK).
    pub const SHUTDOWN_ACK: u8 = 8;
    /// Operation Error (ERROR).
    pub const ERROR: u8 = 9;
    /// State Cookie (COOKIE ECHO).
    pub const COOKIE_ECHO: u8 = 10;
    /// Cookie Acknowledgement (COOKIE ACK).
    pub const COOKIE_ACK: u8 = 11;
    /// Shutdown Complete (SHUTDOWN COMPLETE).
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    /// Forward Cumulative TSN (FORWARD TSN, RFC 3758 §3.2).
    pub const FORWARD_TSN: u8 = 192;
}
/// Parameter types (RFC 9260 §3.3.2.1, §3.3.3.1, §3.3.5).
const PARAM_HEARTBEAT_INFO: u16 = 1;
const PARAM_STATE_COOKIE: u16 = 7;
const PARAM_IPV4_ADDRESS: u16 = 5;
/// The T bit of ABORT and SHUTDOWN COMPLETE (RFC 9260 §3.3.7, §3.3.13).
const FLAG_T: u8 = 0x01;

/// Bytes up to the next multiple of 4 (RFC 9260 §3.2: chunks are padded to 4 bytes; the
/// padding is not counted in the chunk's length field).
#[inline]
pub const fn pad4(n: u32) -> u32 {
    (n + 3) & !3
}

/// The CRC32c of an SCTP packet (RFC 9260 Appendix A): computed over the whole packet with the
/// checksum field taken as zero.
pub fn checksum(packet: &[u8]) -> u32 {
    if packet.len() < SCTP_COMMON_HEADER_LEN as usize {
        return crc32c::crc32c(packet);
    }
    let c = crc32c::crc32c_append(crc32c::crc32c(&packet[..8]), &[0; 4]);
    crc32c::crc32c_append(c, &packet[12..])
}

/// The flags of a DATA chunk (RFC 9260 §3.3.1).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DataFlags(u8);

impl DataFlags {
    /// E: the last fragment of a user message.
    pub const END: DataFlags = DataFlags(0x01);
    /// B: the first fragment of a user message.
    pub const BEGIN: DataFlags = DataFlags(0x02);
    /// U: unordered.
    pub const UNORDERED: DataFlags = DataFlags(0x04);
    /// I: the receiver should SACK this chunk at once (RFC 9260 §3.3.1, from RFC 7053).
    pub const IMMEDIATE: DataFlags = DataFlags(0x08);
    /// An unfragmented message: B and E.
    pub const WHOLE: DataFlags = DataFlags(0x03);

    /// The flags from the chunk's flag byte (reserved bits ignored).
    pub const fn from_bits(b: u8) -> DataFlags {
        DataFlags(b & 0x0f)
    }
    /// The chunk's flag byte.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// Whether every flag of `o` is set.
    pub const fn contains(self, o: DataFlags) -> bool {
        self.0 & o.0 == o.0
    }
    /// `self` with the flags of `o` added.
    pub const fn with(self, o: DataFlags) -> DataFlags {
        DataFlags(self.0 | o.0)
    }
}

impl fmt::Debug for DataFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: String = [
            (Self::UNORDERED, 'U'),
            (Self::BEGIN, 'B'),
            (Self::END, 'E'),
            (Self::IMMEDIATE, 'I'),
        ]
        .iter()
        .map(|&(fl, c)| if self.contains(fl) { c } else { '-' })
        .collect();
        f.write_str(&s)
    }
}

/// What the user data of a DATA chunk stands for (tpsim carries no bytes): when its
/// application message was created and first sent. Not written on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Payload {
    /// When the application created the message, ns of simulated time.
    pub created_ns: u64,
    /// When the message's first fragment was first transmitted, ns of simulated time.
    pub first_tx_ns: u64,
}

/// A DATA chunk (RFC 9260 §3.3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DataChunk {
    /// U, B, E, I.
    pub flags: DataFlags,
    /// Transmission Sequence Number.
    pub tsn: u32,
    /// Stream Identifier S.
    pub stream_id: u16,
    /// Stream Sequence Number n (meaningless for unordered chunks).
    pub ssn: u16,
    /// Bytes of user data (the chunk's length field is 16 more; padding not counted).
    pub len: u16,
    /// The low 32 bits of the application message's id (not on the wire: the Payload Protocol
    /// Identifier written is 0, and a parsed chunk has 0 here).
    pub msg_id: u32,
    /// What the user data stands for (not on the wire).
    pub payload: Payload,
}

impl DataChunk {
    /// A chunk of zeros (the `Default`), usable in constants.
    pub const EMPTY: DataChunk = DataChunk {
        flags: DataFlags(0),
        tsn: 0,
        stream_id: 0,
        ssn: 0,
        len: 0,
        msg_id: 0,
        payload: Payload {
            created_ns: 0,
            first_tx_ns: 0,
        },
    };

    /// The chunk's length field: header and user data, bytes.
    pub fn chunk_len(&self) -> u32 {
        DATA_CHUNK_HEADER_LEN + self.len as u32
    }
}

/// The fixed part of INIT and INIT ACK (RFC 9260 §3.3.2, §3.3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InitChunk {
    /// Initiate Tag: the verification tag the peer must put on packets to us (non-zero).
    pub initiate_tag: u32,
    /// Advertised Receiver Window Credit, bytes.
    pub a_rwnd: u32,
    /// Number of Outbound Streams (OS).
    pub outbound_streams: u16,
    /// Number of Inbound Streams (MIS, maximum inbound streams).
    pub inbound_streams: u16,
    /// Initial TSN.
    pub initial_tsn: u32,
    /// The sender's IPv4 addresses, as IPv4 Address parameters (RFC 9260 §3.3.2.1): empty for
    /// a single-homed sender (the packet's source address is then its only address, §5.1.2).
    pub addresses: AddrList,
    /// Carries the Forward-TSN-Supported parameter (RFC 3758 §3.1): the sender supports PR-SCTP.
    pub forward_tsn: bool,
}

impl InitChunk {
    /// Bytes of the optional parameters tpsim writes besides the fixed part (and, in INIT ACK,
    /// the State Cookie): the IPv4 Address parameters (RFC 9260 §3.3.2.1) and the
    /// Forward-TSN-Supported parameter (RFC 3758 §3.1).
    pub fn params_len(&self) -> u32 {
        self.addresses.params_len() + if self.forward_tsn { FORWARD_TSN_SUPPORTED_LEN } else { 0 }
    }
}

/// The State Cookie parameter's value (RFC 9260 §3.3.3.1): opaque to the wire; the
/// association that makes it decides what it holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateCookie(pub [u8; STATE_COOKIE_LEN]);

impl Default for StateCookie {
    fn default() -> Self {
        StateCookie([0; STATE_COOKIE_LEN])
    }
}

impl fmt::Debug for StateCookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateCookie(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "..)")
    }
}

/// A Gap Ack Block (RFC 9260 §3.3.4): TSNs `cum_tsn_ack + start ..= cum_tsn_ack + end` were
/// received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GapAckBlock {
    /// Offset of the block's first TSN from the Cumulative TSN Ack.
    pub start: u16,
    /// Offset of the block's last TSN.
    pub end: u16,
}

/// A SACK chunk (RFC 9260 §3.3.4), with at most [`MAX_GAP_BLOCKS`] Gap Ack Blocks and
/// [`MAX_DUP_TSNS`] duplicate TSNs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackChunk {
    /// Cumulative TSN Ack: the last TSN received in sequence.
    pub cum_tsn_ack: u32,
    /// Advertised Receiver Window Credit, bytes.
    pub a_rwnd: u32,
    n_gaps: u8,
    n_dups: u8,
    gaps: [GapAckBlock; MAX_GAP_BLOCKS],
    dups: [u32; MAX_DUP_TSNS],
}

impl SackChunk {
    /// A SACK without Gap Ack Blocks or duplicates.
    pub fn new(cum_tsn_ack: u32, a_rwnd: u32) -> SackChunk {
        SackChunk {
            cum_tsn_ack,
            a_rwnd,
            ..SackChunk::default()
        }
    }
    /// Appends a Gap Ack Block; false (nothing added) when full.
    pub fn push_gap(&mut self, start: u16, end: u16) -> bool {
        if self.n_gaps as usize == MAX_GAP_BLOCKS {
            return false;
        }
        self.gaps[self.n_gaps as usize] = GapAckBlock { start, end };
        self.n_gaps += 1;
        true
    }
    /// Appends a duplicate TSN; false (nothing added) when full.
    pub fn push_dup(&mut self, tsn: u32) -> bool {
        if self.n_dups as usize == MAX_DUP_TSNS {
            return false;
        }
        self.dups[self.n_dups as usize] = tsn;
        self.n_dups += 1;
        true
    }
    /// The Gap Ack Blocks, in order.
    pub fn gaps(&self) -> &[GapAckBlock] {
        &self.gaps[..self.n_gaps as usize]
    }
    /// The duplicate TSNs reported.
    pub fn dups(&self) -> &[u32] {
        &self.dups[..self.n_dups as usize]
    }
    /// The chunk's length, bytes.
    pub fn chunk_len(&self) -> u32 {
        SACK_CHUNK_LEN + 4 * (self.n_gaps as u32 + self.n_dups as u32)
    }
}

/// An error cause carried by ABORT or ERROR (RFC 9260 §3.3.10): its code and, for the causes
/// whose cause-specific information is one 32-bit field, that field (Invalid Stream Identifier:
/// the stream in the high 16 bits, §3.3.10.1; Stale Cookie: the Measure of Staleness in µs,
/// §3.3.10.3; No User Data: the TSN, §3.3.10.9). Those causes are 8 bytes long, the others 4
/// (no information; `info` is 0). The constants carry `info` 0: compare codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCause {
    /// Cause Code.
    pub code: u16,
    /// The 32-bit cause-specific information of codes 1, 3 and 9; 0 for the others.
    pub info: u32,
}

impl ErrorCause {
    /// "Invalid Stream Identifier" (RFC 9260 §3.3.10.1).
    pub const INVALID_STREAM: ErrorCause = ErrorCause { code: 1, info: 0 };
    /// "Stale Cookie Error" (RFC 9260 §3.3.10.3).
    pub const STALE_COOKIE: ErrorCause = ErrorCause { code: 3, info: 0 };
    /// "No User Data" (RFC 9260 §3.3.10.9).
    pub const NO_USER_DATA: ErrorCause = ErrorCause { code: 9, info: 0 };
    /// "User-Initiated Abort" (RFC 9260 §3.3.10.12), with no Upper Layer Abort Reason.
    pub const USER_ABORT: ErrorCause = ErrorCause { code: 12, info: 0 };
    /// "Protocol Violation" (RFC 9260 §3.3.10.13), with no Additional Information.
    pub const PROTOCOL_VIOLATION: ErrorCause = ErrorCause { code: 13, info: 0 };

    /// "Invalid Stream Identifier" for `stream` (RFC 9260 §3.3.10.1).
    pub const fn invalid_stream(stream: u16) -> ErrorCause {
        ErrorCause {
            code: 1,
            info: (stream as u32) << 16,
        }
    }
    /// "Stale Cookie Error" with the Measure of Staleness, µs (RFC 9260 §3.3.10.3).
    pub const fn stale_cookie(staleness_us: u32) -> ErrorCause {
        ErrorCause {
            code: 3,
            info: staleness_us,
        }
    }
    /// Whether the cause carries the 32-bit field (codes 1, 3, 9).
    pub const fn has_info(self) -> bool {
        matches!(self.code, 1 | 3 | 9)
    }
    /// The Cause Length field: 8 with the 32-bit field, 4 without, bytes.
    pub const fn cause_len(self) -> u32 {
        if self.has_info() {
            8
        } else {
            4
        }
    }
}

/// The control chunk of a packet (at most one, ahead of SACK and DATA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlChunk {
    /// INIT (RFC 9260 §3.3.2), without optional parameters.
    Init(InitChunk),
    /// INIT ACK (RFC 9260 §3.3.3) with its State Cookie parameter.
    InitAck(InitChunk, StateCookie),
    /// COOKIE ECHO (RFC 9260 §3.3.11).
    CookieEcho(StateCookie),
    /// COOKIE ACK (RFC 9260 §3.3.12).
    CookieAck,
    /// HEARTBEAT (RFC 9260 §3.3.5) with 8 bytes of Heartbeat Information.
    Heartbeat(u64),
    /// HEARTBEAT ACK (RFC 9260 §3.3.6) echoing the Heartbeat Information.
    HeartbeatAck(u64),
    /// ABORT (RFC 9260 §3.3.7): T bit and an optional cause.
    Abort {
        /// The sender put the receiver's tag back (it has no TCB).
        t: bool,
        /// Why.
        cause: Option<ErrorCause>,
    },
    /// SHUTDOWN (RFC 9260 §3.3.8) with its Cumulative TSN Ack.
    Shutdown(u32),
    /// SHUTDOWN ACK (RFC 9260 §3.3.9).
    ShutdownAck,
    /// SHUTDOWN COMPLETE (RFC 9260 §3.3.13) with its T bit.
    ShutdownComplete {
        /// The sender had no TCB and reflected the tag.
        t: bool,
    },
    /// ERROR (RFC 9260 §3.3.10) with one cause.
    Error(ErrorCause),
    /// FORWARD TSN (RFC 3758 §3.2).
    ForwardTsn(ForwardTsnChunk),
}

impl ControlChunk {
    /// The chunk's length field (padding not counted), bytes.
    pub fn chunk_len(&self) -> u32 {
        match self {
            ControlChunk::Init(i) => INIT_CHUNK_LEN + i.params_len(),
            ControlChunk::InitAck(i, _) => INIT_CHUNK_LEN + i.params_len() + 4 + STATE_COOKIE_LEN as u32,
            ControlChunk::CookieEcho(_) => CHUNK_HEADER_LEN + STATE_COOKIE_LEN as u32,
            ControlChunk::Heartbeat(_) | ControlChunk::HeartbeatAck(_) => HEARTBEAT_CHUNK_LEN,
            ControlChunk::Abort { cause, .. } => CHUNK_HEADER_LEN + cause.map_or(0, |e| e.cause_len()),
            ControlChunk::Shutdown(_) => CHUNK_HEADER_LEN + 4,
            ControlChunk::Error(e) => CHUNK_HEADER_LEN + e.cause_len(),
            ControlChunk::ForwardTsn(f) => f.chunk_len(),
            ControlChunk::CookieAck | ControlChunk::ShutdownAck | ControlChunk::ShutdownComplete { .. } => {
                CHUNK_HEADER_LEN
            }
        }
    }

    /// The chunk's length as ns-2.35's Agent/SCTP counts it (`sctp.h`, `GenChunk` in
    /// `sctp.cc`): INIT and INIT ACK are 24 bytes (the fixed part and an empty
    /// unreliable-streams parameter, no State Cookie), COOKIE ECHO is a bare 4-byte header (ns-2
    /// implements no cookie), HEARTBEAT and HEARTBEAT ACK are 24 bytes (a double timestamp and a
    /// pointer on a 64-bit host), FORWARD TSN is 8 bytes (`SCTP_CHUNK_FORWARD_TSN_LENGTH`: no
    /// Stream/Sequence pairs); the others as on the wire.
    pub fn ns2_chunk_len(&self) -> u32 {
        match self {
            ControlChunk::Init(_) | ControlChunk::InitAck(..) => INIT_CHUNK_LEN + 4,
            ControlChunk::CookieEcho(_) => CHUNK_HEADER_LEN,
            ControlChunk::Heartbeat(_) | ControlChunk::HeartbeatAck(_) => 24,
            ControlChunk::ForwardTsn(_) => FORWARD_TSN_CHUNK_LEN,
            _ => self.chunk_len(),
        }
    }

    /// Whether RFC 9260 forbids bundling this chunk with any other (§6.10: INIT, INIT ACK and
    /// SHUTDOWN COMPLETE travel alone).
    pub fn must_be_alone(&self) -> bool {
        matches!(
            self,
            ControlChunk::Init(_) | ControlChunk::InitAck(..) | ControlChunk::ShutdownComplete { .. }
        )
    }
}

/// A parsed-form SCTP packet: common header and chunks (see the [module docs](self) for the
/// bounds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SctpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Verification Tag (RFC 9260 §8.5): the receiver's Initiate Tag; 0 on an INIT.
    pub verification_tag: u32,
    /// The control chunk, first in the packet.
    pub control: Option<ControlChunk>,
    /// A SACK, after the control chunk.
    pub sack: Option<SackChunk>,
    /// DATA chunks, last.
    pub data: DataChunks,
}

/// Why bytes did not parse as an SCTP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SctpParseError {
    /// Shorter than a header or chunk says.
    Truncated,
    /// A length field that makes no sense.
    Malformed,
    /// The CRC32c does not match.
    Checksum,
    /// Valid SCTP that [`SctpRepr`] cannot hold (an unknown chunk or parameter, more chunks than
    /// its bounds, chunks in another order).
    Unsupported,
}

impl fmt::Display for SctpParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SctpParseError::Truncated => "truncated SCTP packet",
            SctpParseError::Malformed => "malformed SCTP packet",
            SctpParseError::Checksum => "bad SCTP checksum",
            SctpParseError::Unsupported => "SCTP packet tpsim cannot represent",
        })
    }
}

impl SctpRepr {
    /// A packet with no chunks yet.
    pub const fn new(src_port: u16, dst_port: u16, verification_tag: u32) -> SctpRepr {
        SctpRepr {
            src_port,
            dst_port,
            verification_tag,
            control: None,
            sack: None,
            data: DataChunks::EMPTY,
        }
    }

    /// Bytes of chunks, each padded to 4 (RFC 9260 §3.2), without the common header.
    #[inline]
    pub fn chunks_len(&self) -> u32 {
        self.control.as_ref().map_or(0, |c| pad4(c.chunk_len()))
            + self.sack.as_ref().map_or(0, |s| s.chunk_len())
            + self.data.as_slice().iter().map(|d| pad4(d.chunk_len())).sum::<u32>()
    }

    /// The packet's length: common header and padded chunks, bytes.
    #[inline]
    pub fn packet_len(&self) -> u32 {
        SCTP_COMMON_HEADER_LEN + self.chunks_len()
    }

    /// Bytes of chunks as ns-2.35's Agent/SCTP counts them ([`ControlChunk::ns2_chunk_len`];
    /// SACK and DATA chunks as on the wire, DATA padded to 4 as `sctp.cc` pads them).
    pub fn ns2_chunks_len(&self) -> u32 {
        self.control.as_ref().map_or(0, |c| pad4(c.ns2_chunk_len()))
            + self.sack.as_ref().map_or(0, |s| s.chunk_len())
            + self.data.as_slice().iter().map(|d| pad4(d.chunk_len())).sum::<u32>()
    }

    /// User data bytes carried and the length of the DATA chunks, each padded to 4, in one
    /// pass: ([`payload_len`](Self::payload_len), the DATA part of
    /// [`chunks_len`](Self::chunks_len)).
    #[inline]
    pub fn data_lens(&self) -> (u32, u32) {
        self.data.as_slice().iter().fold((0, 0), |(user, padded), d| {
            (user + d.len as u32, padded + pad4(d.chunk_len()))
        })
    }

    /// User data bytes carried.
    #[inline]
    pub fn payload_len(&self) -> u32 {
        self.data.as_slice().iter().map(|d| d.len as u32).sum()
    }

    /// Writes the packet into `buf[..packet_len()]` (user data as zeros), with the CRC32c.
    ///
    /// # Panics
    /// If `buf` is too short.
    pub fn emit(&self, buf: &mut [u8]) {
        let len = self.packet_len() as usize;
        let b = &mut buf[..len];
        b.fill(0);
        b[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        b[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        b[4..8].copy_from_slice(&self.verification_tag.to_be_bytes());
        let mut o = SCTP_COMMON_HEADER_LEN as usize;
        if let Some(c) = &self.control {
            o += emit_control(c, &mut b[o..]);
        }
        if let Some(s) = &self.sack {
            chunk_header(&mut b[o..], chunk_type::SACK, 0, s.chunk_len());
            put32(&mut b[o + 4..], s.cum_tsn_ack);
            put32(&mut b[o + 8..], s.a_rwnd);
            put16(&mut b[o + 12..], s.n_gaps as u16);
            put16(&mut b[o + 14..], s.n_dups as u16);
            let mut p = o + 16;
            for g in s.gaps() {
                put16(&mut b[p..], g.start);
                put16(&mut b[p + 2..], g.end);
                p += 4;
            }
            for &d in s.dups() {
                put32(&mut b[p..], d);
                p += 4;
            }
            o = p;
        }
        for d in self.data.as_slice() {
            chunk_header(&mut b[o..], chunk_type::DATA, d.flags.bits(), d.chunk_len());
            put32(&mut b[o + 4..], d.tsn);
            put16(&mut b[o + 8..], d.stream_id);
            put16(&mut b[o + 10..], d.ssn);
            put32(&mut b[o + 12..], 0); // PPID: unspecified (RFC 9260 §3.3.1)
            o += pad4(d.chunk_len()) as usize;
        }
        debug_assert_eq!(o, len);
        // RFC 9260 Appendix A: the CRC32c goes into the checksum field least significant byte
        // first (the byte order of the reflected CRC as transmitted).
        let c = checksum(b);
        b[8..12].copy_from_slice(&c.to_le_bytes());
    }

    /// Parses a whole SCTP packet, verifying the CRC32c. DATA payloads come back with zero
    /// times.
    ///
    /// # Errors
    /// [`SctpParseError`] for short, malformed, corrupted or unrepresentable packets.
    pub fn parse(bytes: &[u8]) -> Result<SctpRepr, SctpParseError> {
        if bytes.len() < SCTP_COMMON_HEADER_LEN as usize {
            return Err(SctpParseError::Truncated);
        }
        let stored = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if checksum(bytes) != stored {
            return Err(SctpParseError::Checksum);
        }
        let mut r = SctpRepr::new(get16(&bytes[0..]), get16(&bytes[2..]), get32(&bytes[4..]));
        let mut o = SCTP_COMMON_HEADER_LEN as usize;
        // 0: control allowed, 1: SACK allowed, 2: DATA only.
        let mut stage = 0;
        while o < bytes.len() {
            if bytes.len() - o < CHUNK_HEADER_LEN as usize {
                return Err(SctpParseError::Truncated);
            }
            let (ty, flags, clen) = (bytes[o], bytes[o + 1], get16(&bytes[o + 2..]) as usize);
            if clen < CHUNK_HEADER_LEN as usize {
                return Err(SctpParseError::Malformed);
            }
            if bytes.len() - o < clen {
                return Err(SctpParseError::Truncated);
            }
            let c = &bytes[o..o + clen];
            match ty {
                chunk_type::DATA => {
                    if clen < DATA_CHUNK_HEADER_LEN as usize {
                        return Err(SctpParseError::Malformed);
                    }
                    let d = DataChunk {
                        flags: DataFlags::from_bits(flags),
                        tsn: get32(&c[4..]),
                        stream_id: get16(&c[8..]),
                        ssn: get16(&c[10..]),
                        len: u16::try_from(clen - DATA_CHUNK_HEADER_LEN as usize)
                            .map_err(|_| SctpParseError::Malformed)?,
                        msg_id: 0,
                        payload: Payload::default(),
                    };
                    if !r.data.push(d) {
                        return Err(SctpParseError::Unsupported);
                    }
                    stage = 2;
                }
                chunk_type::SACK => {
                    if stage > 0 && (stage > 1 || r.sack.is_some()) {
                        return Err(SctpParseError::Unsupported);
                    }
                    if clen < SACK_CHUNK_LEN as usize {
                        return Err(SctpParseError::Malformed);
                    }
                    let (ng, nd) = (get16(&c[12..]) as usize, get16(&c[14..]) as usize);
                    if clen != SACK_CHUNK_LEN as usize + 4 * (ng + nd) {
                        return Err(SctpParseError::Malformed);
                    }
                    if ng > MAX_GAP_BLOCKS || nd > MAX_DUP_TSNS {
                        return Err(SctpParseError::Unsupported);
                    }
                    let mut s = SackChunk::new(get32(&c[4..]), get32(&c[8..]));
                    let mut p = 16;
                    for _ in 0..ng {
                        s.push_gap(get16(&c[p..]), get16(&c[p + 2..]));
                        p += 4;
                    }
                    for _ in 0..nd {
                        s.push_dup(get32(&c[p..]));
                        p += 4;
                    }
                    r.sack = Some(s);
                    stage = 2;
                }
                _ => {
                    if stage > 0 {
                        return Err(SctpParseError::Unsupported);
                    }
                    r.control = Some(parse_control(ty, flags, c)?);
                    stage = 1;
                }
            }
            o += pad4(clen as u32) as usize;
        }
        if o != bytes.len() {
            return Err(SctpParseError::Truncated);
        }
        Ok(r)
    }
}

fn parse_control(ty: u8, flags: u8, c: &[u8]) -> Result<ControlChunk, SctpParseError> {
    let clen = c.len();
    let exact = |n: u32| {
        if clen == n as usize {
            Ok(())
        } else {
            Err(SctpParseError::Malformed)
        }
    };
    // One cause filling the rest of the chunk, of the length its code implies.
    let cause = |c: &[u8]| -> Result<ErrorCause, SctpParseError> {
        let code = get16(&c[4..]);
        let mut e = ErrorCause { code, info: 0 };
        let len = get16(&c[6..]) as usize;
        if len != e.cause_len() as usize || c.len() != 4 + len {
            return Err(SctpParseError::Unsupported);
        }
        if e.has_info() {
            e.info = get32(&c[8..]);
        }
        Ok(e)
    };
    // The fixed part, then the parameters (RFC 9260 §3.2.1: type, length, value padded to 4):
    // IPv4 Address parameters, Forward-TSN-Supported and, in INIT ACK, the State Cookie.
    let init = |c: &[u8], ack: bool| -> Result<(InitChunk, Option<StateCookie>), SctpParseError> {
        if clen < INIT_CHUNK_LEN as usize {
            return Err(SctpParseError::Malformed);
        }
        let mut i = InitChunk {
            initiate_tag: get32(&c[4..]),
            a_rwnd: get32(&c[8..]),
            outbound_streams: get16(&c[12..]),
            inbound_streams: get16(&c[14..]),
            initial_tsn: get32(&c[16..]),
            addresses: AddrList::default(),
            forward_tsn: false,
        };
        let mut cookie = None;
        let mut o = INIT_CHUNK_LEN as usize;
        while o < clen {
            if clen - o < 4 {
                return Err(SctpParseError::Malformed);
            }
            let (ty, len) = (get16(&c[o..]), get16(&c[o + 2..]) as usize);
            if len < 4 || o + len > clen {
                return Err(SctpParseError::Malformed);
            }
            match ty {
                PARAM_IPV4_ADDRESS if len == IPV4_ADDRESS_PARAM_LEN as usize => {
                    if !i.addresses.push(std::net::Ipv4Addr::from(get32(&c[o + 4..]))) {
                        return Err(SctpParseError::Unsupported);
                    }
                }
                forward_tsn::PARAM_FORWARD_TSN_SUPPORTED if len == FORWARD_TSN_SUPPORTED_LEN as usize => {
                    i.forward_tsn = true;
                }
                PARAM_STATE_COOKIE if ack && len == 4 + STATE_COOKIE_LEN && cookie.is_none() => {
                    let mut k = StateCookie::default();
                    k.0.copy_from_slice(&c[o + 4..o + len]);
                    cookie = Some(k);
                }
                _ => return Err(SctpParseError::Unsupported),
            }
            o += pad4(len as u32) as usize;
        }
        Ok((i, cookie))
    };
    let cookie = |v: &[u8]| {
        let mut k = StateCookie::default();
        k.0.copy_from_slice(v);
        k
    };
    Ok(match ty {
        chunk_type::INIT => ControlChunk::Init(init(c, false)?.0),
        chunk_type::INIT_ACK => match init(c, true)? {
            (i, Some(k)) => ControlChunk::InitAck(i, k),
            (_, None) => return Err(SctpParseError::Unsupported),
        },
        chunk_type::FORWARD_TSN => ControlChunk::ForwardTsn(ForwardTsnChunk::parse(c)?),
        chunk_type::COOKIE_ECHO => {
            if clen != CHUNK_HEADER_LEN as usize + STATE_COOKIE_LEN {
                return Err(SctpParseError::Unsupported);
            }
            ControlChunk::CookieEcho(cookie(&c[4..]))
        }
        chunk_type::COOKIE_ACK => {
            exact(CHUNK_HEADER_LEN)?;
            ControlChunk::CookieAck
        }
        chunk_type::HEARTBEAT | chunk_type::HEARTBEAT_ACK => {
            exact(HEARTBEAT_CHUNK_LEN)?;
            if get16(&c[4..]) != PARAM_HEARTBEAT_INFO || get16(&c[6..]) != 12 {
                return Err(SctpParseError::Unsupported);
            }
            let info = (get32(&c[8..]) as u64) << 32 | get32(&c[12..]) as u64;
            if ty == chunk_type::HEARTBEAT {
                ControlChunk::Heartbeat(info)
            } else {
                ControlChunk::HeartbeatAck(info)
            }
        }
        chunk_type::ABORT => ControlChunk::Abort {
            t: flags & FLAG_T != 0,
            cause: match clen {
                4 => None,
                8 | 12 => Some(cause(c)?),
                _ => return Err(SctpParseError::Unsupported),
            },
        },
        chunk_type::SHUTDOWN => {
            exact(CHUNK_HEADER_LEN + 4)?;
            ControlChunk::Shutdown(get32(&c[4..]))
        }
        chunk_type::SHUTDOWN_ACK => {
            exact(CHUNK_HEADER_LEN)?;
            ControlChunk::ShutdownAck
        }
        chunk_type::SHUTDOWN_COMPLETE => {
            exact(CHUNK_HEADER_LEN)?;
            ControlChunk::ShutdownComplete { t: flags & FLAG_T != 0 }
        }
        chunk_type::ERROR => {
            if clen != 8 && clen != 12 {
                return Err(SctpParseError::Unsupported);
            }
            ControlChunk::Error(cause(c)?)
        }
        _ => return Err(SctpParseError::Unsupported),
    })
}

/// Writes `c` at the start of `b`; returns its padded length.
fn emit_control(c: &ControlChunk, b: &mut [u8]) -> usize {
    let len = c.chunk_len();
    let init = |b: &mut [u8], i: &InitChunk| {
        put32(&mut b[4..], i.initiate_tag);
        put32(&mut b[8..], i.a_rwnd);
        put16(&mut b[12..], i.outbound_streams);
        put16(&mut b[14..], i.inbound_streams);
        put32(&mut b[16..], i.initial_tsn);
        // RFC 9260 §3.3.2.1: one IPv4 Address parameter per address.
        let mut o = INIT_CHUNK_LEN as usize;
        for a in i.addresses.iter() {
            put16(&mut b[o..], PARAM_IPV4_ADDRESS);
            put16(&mut b[o + 2..], IPV4_ADDRESS_PARAM_LEN as u16);
            put32(&mut b[o + 4..], u32::from(a));
            o += IPV4_ADDRESS_PARAM_LEN as usize;
        }
        o
    };
    let cause = |b: &mut [u8], e: ErrorCause| {
        put16(&mut b[4..], e.code);
        put16(&mut b[6..], e.cause_len() as u16);
        if e.has_info() {
            put32(&mut b[8..], e.info);
        }
    };
    match c {
        ControlChunk::Init(i) => {
            chunk_header(b, chunk_type::INIT, 0, len);
            let o = init(b, i);
            if i.forward_tsn {
                forward_tsn::emit_forward_tsn_param(&mut b[o..]);
            }
        }
        ControlChunk::InitAck(i, k) => {
            chunk_header(b, chunk_type::INIT_ACK, 0, len);
            let o = init(b, i);
            put16(&mut b[o..], PARAM_STATE_COOKIE);
            put16(&mut b[o + 2..], 4 + STATE_COOKIE_LEN as u16);
            b[o + 4..o + 4 + STATE_COOKIE_LEN].copy_from_slice(&k.0);
            if i.forward_tsn {
                forward_tsn::emit_forward_tsn_param(&mut b[o + 4 + STATE_COOKIE_LEN..]);
            }
        }
        ControlChunk::ForwardTsn(f) => {
            chunk_header(b, chunk_type::FORWARD_TSN, 0, len);
            f.emit_value(&mut b[4..]);
        }
        ControlChunk::CookieEcho(k) => {
            chunk_header(b, chunk_type::COOKIE_ECHO, 0, len);
            b[4..4 + STATE_COOKIE_LEN].copy_from_slice(&k.0);
        }
        ControlChunk::CookieAck => chunk_header(b, chunk_type::COOKIE_ACK, 0, len),
        ControlChunk::Heartbeat(info) | ControlChunk::HeartbeatAck(info) => {
            let ty = if matches!(c, ControlChunk::Heartbeat(_)) {
                chunk_type::HEARTBEAT
            } else {
                chunk_type::HEARTBEAT_ACK
            };
            chunk_header(b, ty, 0, len);
            put16(&mut b[4..], PARAM_HEARTBEAT_INFO);
            put16(&mut b[6..], 12);
            put32(&mut b[8..], (info >> 32) as u32);
            put32(&mut b[12..], *info as u32);
        }
        ControlChunk::Abort { t, cause: e } => {
            chunk_header(b, chunk_type::ABORT, if *t { FLAG_T } else { 0 }, len);
            if let Some(e) = e {
                cause(b, *e);
            }
        }
        ControlChunk::Shutdown(cum) => {
            chunk_header(b, chunk_type::SHUTDOWN, 0, len);
            put32(&mut b[4..], *cum);
        }
        ControlChunk::ShutdownAck => chunk_header(b, chunk_type::SHUTDOWN_ACK, 0, len),
        ControlChunk::ShutdownComplete { t } => {
            chunk_header(b, chunk_type::SHUTDOWN_COMPLETE, if *t { FLAG_T } else { 0 }, len)
        }
        ControlChunk::Error(e) => {
            chunk_header(b, chunk_type::ERROR, 0, len);
            cause(b, *e);
        }
    }
    pad4(len) as usize
}

fn chunk_header(b: &mut [u8], ty: u8, flags: u8, len: u32) {
    b[0] = ty;
    b[1] = flags;
    put16(&mut b[2..], len as u16);
}
fn put16(b: &mut [u8], v: u16) {
    b[..2].copy_from_slice(&v.to_be_bytes());
}
fn put32(b: &mut [u8], v: u32) {
    b[..4].copy_from_slice(&v.to_be_bytes());
}
fn get16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn get32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data(tsn: u32, len: u16, flags: DataFlags) -> DataChunk {
        DataChunk {
            flags,
            tsn,
            stream_id: 3,
            ssn: 7,
            len,
            msg_id: 0,
            payload: Payload::default(),
        }
    }

    /// Emits `r`, checks that it parses back to `r`, and returns the bytes.
    pub(super) fn roundtrip(r: &SctpRepr) -> Vec<u8> {
        let mut b = vec![0u8; r.packet_len() as usize];
        r.emit(&mut b);
        assert_eq!(SctpRepr::parse(&b), Ok(*r), "{r:?}");
        b
    }

    /// CRC32c check values: the standard check ("123456789", Rocksoft model CRC-32C) and the
    /// iSCSI vectors of RFC 3720 Appendix B.4, which RFC 9260 Appendix A's CRC32c is.
    #[test]
    fn crc32c_test_vectors() {
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c::crc32c(&[0xffu8; 32]), 0x62a8_ab43);
        let inc: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c::crc32c(&inc), 0x46dd_794e);
        let dec: Vec<u8> = (0u8..32).rev().collect();
        assert_eq!(crc32c::crc32c(&dec), 0x113f_db5c);
    }

    /// RFC 9260 Appendix A: the checksum is computed with the field zeroed and stored so that
    /// the RFC 3720 byte sequence appears on the wire (32 zero bytes: aa 36 91 8a).
    #[test]
    fn checksum_field_is_little_endian_crc_over_zeroed_field() {
        let r = SctpRepr {
            control: Some(ControlChunk::CookieAck),
            ..SctpRepr::new(5000, 80, 0xdead_beef)
        };
        let b = roundtrip(&r);
        assert_eq!(b.len(), 16);
        let mut z = b.clone();
        z[8..12].fill(0);
        assert_eq!(&b[8..12], &crc32c::crc32c(&z).to_le_bytes());
        let mut bad = b.clone();
        bad[15] ^= 1;
        assert_eq!(SctpRepr::parse(&bad), Err(SctpParseError::Checksum));
    }

    #[test]
    fn data_chunks_are_padded_and_length_excludes_padding() {
        let mut r = SctpRepr::new(9, 10, 77);
        r.data.push(data(100, 5, DataFlags::WHOLE));
        r.data.push(data(101, 8, DataFlags::BEGIN.with(DataFlags::UNORDERED)));
        // 12 + pad4(21) + pad4(24)
        assert_eq!(r.packet_len(), 12 + 24 + 24);
        let b = roundtrip(&r);
        assert_eq!(&b[12..16], &[0, 0x03, 0, 21]);
        assert_eq!(&b[24..28], &[0, 0, 0, 0]); // PPID 0: unspecified (the message id is off the wire)
        assert_eq!(&b[36..40], &[0, 0x06, 0, 24]);
        assert_eq!(r.payload_len(), 13);
    }

    #[test]
    fn every_control_chunk_round_trips() {
        let k = StateCookie([7; STATE_COOKIE_LEN]);
        let i = InitChunk {
            initiate_tag: 9,
            a_rwnd: 1,
            outbound_streams: 2,
            inbound_streams: 3,
            initial_tsn: 4,
            addresses: AddrList::default(),
            forward_tsn: false,
        };
        let mut multi = i;
        for a in ["10.0.0.1", "10.0.2.1", "10.1.0.9"] {
            assert!(multi.addresses.push(a.parse().unwrap()));
        }
        multi.forward_tsn = true;
        let mut f = ForwardTsnChunk::new(17);
        assert!(f.push(3, 9));
        let all = [
            ControlChunk::Init(multi),
            ControlChunk::InitAck(multi, k),
            ControlChunk::Init(i),
            ControlChunk::InitAck(i, k),
            ControlChunk::CookieEcho(k),
            ControlChunk::CookieAck,
            ControlChunk::Heartbeat(0x0123_4567_89ab_cdef),
            ControlChunk::HeartbeatAck(5),
            ControlChunk::Abort { t: true, cause: None },
            ControlChunk::Abort {
                t: false,
                cause: Some(ErrorCause::USER_ABORT),
            },
            ControlChunk::Shutdown(0xffff_fff0),
            ControlChunk::ShutdownAck,
            ControlChunk::ShutdownComplete { t: true },
            ControlChunk::Error(ErrorCause::invalid_stream(5)),
            ControlChunk::Error(ErrorCause::stale_cookie(1000)),
            ControlChunk::Error(ErrorCause::PROTOCOL_VIOLATION),
            ControlChunk::Init(InitChunk { forward_tsn: true, ..i }),
            ControlChunk::ForwardTsn(f),
        ];
        // RFC 9260 §3.3.10.1/§3.3.10.3: those two causes are 8 bytes (code, length, 32 bits).
        let lens = [48, 84, 20, 56, 36, 4, 16, 16, 4, 8, 8, 4, 4, 12, 12, 8, 24, 12];
        for (c, len) in all.iter().zip(lens) {
            assert_eq!(c.chunk_len(), len, "{c:?}");
            roundtrip(&SctpRepr {
                control: Some(*c),
                ..SctpRepr::new(1, 2, 3)
            });
        }
    }

    #[test]
    fn sack_with_gaps_and_dups_round_trips_bundled_with_data() {
        let mut s = SackChunk::new(1000, 4096);
        assert!(s.push_gap(2, 3));
        assert!(s.push_gap(5, 5));
        assert!(s.push_dup(999));
        assert_eq!(s.chunk_len(), 16 + 12);
        let mut r = SctpRepr {
            control: Some(ControlChunk::CookieEcho(StateCookie([1; 32]))),
            sack: Some(s),
            ..SctpRepr::new(1, 2, 3)
        };
        r.data.push(data(7, 1, DataFlags::END));
        let b = roundtrip(&r);
        assert_eq!(b.len(), 12 + 36 + 28 + 20);
    }

    #[test]
    fn bounds_and_order_are_enforced() {
        let mut s = SackChunk::new(0, 0);
        for k in 0..MAX_GAP_BLOCKS as u16 {
            assert!(s.push_gap(2 * k + 2, 2 * k + 2));
        }
        assert!(!s.push_gap(100, 100));
        let mut d = DataChunks::default();
        for k in 0..MAX_DATA_CHUNKS as u32 {
            assert!(d.push(data(k, 1, DataFlags::WHOLE)));
        }
        assert!(d.is_full() && !d.push(data(9, 1, DataFlags::WHOLE)));
        // DATA before a SACK is valid SCTP that SctpRepr cannot hold.
        let mut r = SctpRepr::new(1, 2, 3);
        r.data.push(data(1, 4, DataFlags::WHOLE));
        let mut b = vec![0u8; 12 + 20 + 16];
        r.emit(&mut b[..32]);
        chunk_header(&mut b[32..], chunk_type::SACK, 0, 16);
        b[8..12].fill(0);
        let c = checksum(&b);
        b[8..12].copy_from_slice(&c.to_le_bytes());
        assert_eq!(SctpRepr::parse(&b), Err(SctpParseError::Unsupported));
        assert_eq!(SctpRepr::parse(&b[..10]), Err(SctpParseError::Truncated));
    }

    #[test]
    fn ns2_sizes() {
        let i = InitChunk::default();
        assert_eq!(ControlChunk::Init(i).ns2_chunk_len(), 24);
        assert_eq!(ControlChunk::InitAck(i, StateCookie::default()).ns2_chunk_len(), 24);
        assert_eq!(ControlChunk::CookieEcho(StateCookie::default()).ns2_chunk_len(), 4);
        assert_eq!(ControlChunk::Heartbeat(0).ns2_chunk_len(), 24);
        let mut r = SctpRepr::new(1, 2, 3);
        r.data.push(data(1, 1452, DataFlags::WHOLE));
        assert_eq!(r.ns2_chunks_len(), 1468);
    }

    /// Segments are copied by value through the engine: keep the description bounded.
    #[test]
    fn repr_stays_small() {
        assert!(std::mem::size_of::<DataChunk>() <= 32);
        assert!(
            std::mem::size_of::<SctpRepr>() <= 456,
            "{}",
            std::mem::size_of::<SctpRepr>()
        );
    }

    fn arb_data() -> impl Strategy<Value = DataChunk> {
        (any::<u32>(), any::<u16>(), any::<u16>(), 0u16..2000, 0u8..16).prop_map(|(tsn, stream_id, ssn, len, f)| {
            DataChunk {
                flags: DataFlags::from_bits(f),
                tsn,
                stream_id,
                ssn,
                len,
                msg_id: 0, // not on the wire, like the payload
                payload: Payload::default(),
            }
        })
    }

    /// A cause of any code, with information where its code has some.
    fn cause(x: u32) -> ErrorCause {
        let code = (x >> 16) as u16 % 16;
        let info = if (ErrorCause { code, info: 0 }).has_info() {
            x
        } else {
            0
        };
        ErrorCause { code, info }
    }

    proptest! {
        #[test]
        fn arbitrary_packets_round_trip(
            tag in any::<u32>(),
            ctl in proptest::option::of((0usize..13, any::<u32>(), any::<u64>())),
            sack in proptest::option::of((any::<u32>(), any::<u32>(),
                proptest::collection::vec((any::<u16>(), any::<u16>()), 0..=MAX_GAP_BLOCKS),
                proptest::collection::vec(any::<u32>(), 0..=MAX_DUP_TSNS))),
            data in proptest::collection::vec(arb_data(), 0..=MAX_DATA_CHUNKS),
        ) {
            let mut r = SctpRepr::new(7, 8, tag);
            r.control = ctl.map(|(k, x, y)| {
                let n = (y % (MAX_INIT_ADDRS as u64 + 1)) as usize;
                let addrs: Vec<std::net::Ipv4Addr> = (0..n as u32).map(|j| (x ^ j).into()).collect();
                let i = InitChunk { initiate_tag: x, a_rwnd: x ^ 1, outbound_streams: 1,
                    inbound_streams: 2, initial_tsn: x.rotate_left(3), addresses: AddrList::from_slice(&addrs), forward_tsn: y & 4 == 4 };
                let ck = StateCookie([y as u8; STATE_COOKIE_LEN]);
                match k {
                    0 => ControlChunk::Init(i), 1 => ControlChunk::InitAck(i, ck),
                    2 => ControlChunk::CookieEcho(ck), 3 => ControlChunk::CookieAck,
                    4 => ControlChunk::Heartbeat(y), 5 => ControlChunk::HeartbeatAck(y),
                    6 => ControlChunk::Abort { t: y & 1 == 1, cause: (y & 2 == 2).then_some(cause(x)) },
                    7 => ControlChunk::Shutdown(x), 8 => ControlChunk::ShutdownAck,
                    9 => ControlChunk::ShutdownComplete { t: y & 1 == 1 },
                    10 => ControlChunk::Error(cause(x)),
                    _ => {
                        let mut f = ForwardTsnChunk::new(x);
                        for k in 0..(y % (MAX_FWD_TSN_STREAMS as u64 + 1)) as u16 { f.push(k, x as u16 ^ k); }
                        ControlChunk::ForwardTsn(f)
                    }
                }
            });
            r.sack = sack.map(|(c, w, g, d)| {
                let mut s = SackChunk::new(c, w);
                for (a, b) in g { s.push_gap(a, b); }
                for x in d { s.push_dup(x); }
                s
            });
            for d in data { r.data.push(d); }
            let mut b = vec![0u8; r.packet_len() as usize];
            r.emit(&mut b);
            prop_assert_eq!(b.len() % 4, 0);
            prop_assert_eq!(SctpRepr::parse(&b), Ok(r));
        }
    }
}
