//! DCCP header (RFC 4340 §5) with 48-bit sequence numbers (X = 1), the packet-type
//! subheaders (Request, Response, Data, Ack, DataAck, CloseReq, Close, Reset, Sync, SyncAck)
//! and the options tpsim uses: the Ack Vector (§11.4), NDP Count (§7.7), Timestamp (§13.1), Timestamp Echo
//! (§13.3), Elapsed Time (§13.2), Change/Confirm for feature negotiation (§6), and CCID 3's
//! Loss Event Rate and Receive Rate (RFC 4342 §8.5, §8.3). CCVal travels in the generic header
//! (§5.1; RFC 4342 §8.1).
//!
//! tpsim moves [`DccpRepr`] values, never bytes: a `DccpRepr` is `Copy` and fixed-size, so its
//! Ack Vector holds at most [`MAX_ACK_VECTOR_LEN`] run-length bytes and it carries at most
//! [`MAX_FEATURE_OPTIONS`] Change/Confirm options. [`DccpRepr::emit`] writes real bytes (pcap
//! traces, tests) with the checksum of §9 over the IPv4 pseudo-header; [`DccpRepr::parse`]
//! reads them back and checks it.
//!
//! # Sizes
//!
//! Under the `standard` convention a packet is 20 (IPv4) + [`DccpRepr::header_len`] + payload:
//! the 16-byte generic header (X = 1, §5.1), the 8-byte acknowledgement subheader on every
//! type but Request and Data (§5.3), the 4-byte Service Code of Request and Response (§5.4,
//! §5.5), the 4 bytes of Reset Code and Data of Reset (§5.6), then the options padded to a
//! multiple of 4 bytes (§5.8). Under `ns2`, [`DccpRepr::ns2_overhead`] gives what ns-2.35's
//! Agent/DCCP counts (`dccp/dccp_types.h`): 20 (IP) + a 12-byte generic header, + 4 for
//! Request, Response, Ack, DataAck, CloseReq and Close, + 8 for Reset (Sync and SyncAck,
//! which ns-2.35 lacks, count as an Ack), plus the options padded to 4 bytes.

use crate::checksum;
use crate::ip::Ipv4Repr;
use crate::{SizeConvention, IPV4_HEADER_LEN};
use std::fmt;

/// Generic header length with 48-bit sequence numbers, bytes (RFC 4340 §5.1, X = 1).
pub const DCCP_GENERIC_HEADER_LEN: u32 = 16;
/// Acknowledgement Number subheader with 48-bit numbers, bytes (RFC 4340 §5.3).
pub const DCCP_ACK_SUBHEADER_LEN: u32 = 8;
/// Most run-length bytes one [`AckVector`] holds. One byte covers up to 64 packets of one
/// state (RFC 4340 §11.4), so 16 bytes report at least 16 and up to 1024 packets; an Ack
/// Vector option may hold 253 (§11.4), tpsim bounds it to keep [`DccpRepr`] a small `Copy`
/// value. A receiver with more history reports the most recent part.
pub const MAX_ACK_VECTOR_LEN: usize = 16;
/// Option bytes a Data or DataAck packet may carry beyond its fixed header, reserved when
/// sizing the largest message: an Ack Vector of [`MAX_ACK_VECTOR_LEN`] bytes (18 with its type
/// and length) and two Ack Ratio Change/Confirm options (5 each), padded to 4.
pub const MAX_DATA_OPTIONS_LEN: u32 = 28;
/// IP and DCCP header bytes of a DataAck without options as ns-2.35 counts them
/// ([`DccpRepr::ns2_overhead`]).
pub const NS2_DATAACK_OVERHEAD: u32 = 36;

/// The largest message one Data (or DataAck) packet carries over an IP MTU of `mtu` bytes:
/// the MTU less IPv4, the generic header, the acknowledgement subheader and
/// [`MAX_DATA_OPTIONS_LEN`] (`standard`), or less ns-2.35's 36-byte DataAck header and the
/// same option room (`ns2`).
pub fn max_message(sizes: SizeConvention, mtu: u32) -> u32 {
    match sizes {
        SizeConvention::Standard => mtu
            .saturating_sub(IPV4_HEADER_LEN + DCCP_GENERIC_HEADER_LEN + DCCP_ACK_SUBHEADER_LEN + MAX_DATA_OPTIONS_LEN),
        SizeConvention::Ns2 => mtu.saturating_sub(NS2_DATAACK_OVERHEAD + MAX_DATA_OPTIONS_LEN),
    }
}
/// Most Change/Confirm options one [`DccpRepr`] carries (tpsim negotiates CCID, Send Ack
/// Vector and Ack Ratio, RFC 4340 §6).
pub const MAX_FEATURE_OPTIONS: usize = 4;
/// Largest sequence number + 1 (48-bit numbers, RFC 4340 §7.1).
pub const SEQ_MODULUS: u64 = 1 << 48;

/// Feature number of CCID (RFC 4340 §10, §6.4 table: server-priority, 1 byte).
pub const FEATURE_CCID: u8 = 1;
/// Feature number of Ack Ratio (RFC 4340 §11.3: non-negotiable, 2 bytes).
pub const FEATURE_ACK_RATIO: u8 = 5;
/// Feature number of Send Ack Vector (RFC 4340 §11.5: server-priority, 1 byte).
pub const FEATURE_SEND_ACK_VECTOR: u8 = 6;

const OPT_CHANGE_L: u8 = 32;
const OPT_CONFIRM_L: u8 = 33;
const OPT_CHANGE_R: u8 = 34;
const OPT_CONFIRM_R: u8 = 35;
const OPT_NDP_COUNT: u8 = 37;
const OPT_ACK_VECTOR_0: u8 = 38;
const OPT_ACK_VECTOR_1: u8 = 39;
const OPT_TIMESTAMP: u8 = 41;
const OPT_TIMESTAMP_ECHO: u8 = 42;
const OPT_ELAPSED_TIME: u8 = 43;
/// RFC 4342 §8.5.
const OPT_LOSS_EVENT_RATE: u8 = 192;
/// RFC 4342 §8.3.
const OPT_RECEIVE_RATE: u8 = 194;

/// DCCP packet types (RFC 4340 §5.1, Type field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DccpType {
    /// DCCP-Request (0): the client opens a connection (§5.4).
    Request = 0,
    /// DCCP-Response (1): the server answers a Request (§5.5).
    Response = 1,
    /// DCCP-Data (2): application data, no acknowledgement.
    Data = 2,
    /// DCCP-Ack (3): acknowledgement only.
    Ack = 3,
    /// DCCP-DataAck (4): data with a piggy-backed acknowledgement.
    DataAck = 4,
    /// DCCP-CloseReq (5): the server asks the client to close (§5.6).
    CloseReq = 5,
    /// DCCP-Close (6): closes the connection.
    Close = 6,
    /// DCCP-Reset (7): ends the connection, normally or abnormally (§5.6).
    Reset = 7,
    /// DCCP-Sync (8): resynchronises sequence numbers (§5.7, §7.5.4).
    Sync = 8,
    /// DCCP-SyncAck (9): answers a Sync.
    SyncAck = 9,
}

impl DccpType {
    /// The type with field value `v`, if defined.
    pub fn from_u8(v: u8) -> Option<DccpType> {
        Some(match v {
            0 => DccpType::Request,
            1 => DccpType::Response,
            2 => DccpType::Data,
            3 => DccpType::Ack,
            4 => DccpType::DataAck,
            5 => DccpType::CloseReq,
            6 => DccpType::Close,
            7 => DccpType::Reset,
            8 => DccpType::Sync,
            9 => DccpType::SyncAck,
            _ => return None,
        })
    }
    /// Whether the type carries an Acknowledgement Number subheader (RFC 4340 §5.3: all but
    /// Request and Data).
    #[inline]
    pub fn has_ack(self) -> bool {
        !matches!(self, DccpType::Request | DccpType::Data)
    }
    /// Whether the type carries application data (RFC 4340 §5.1: Request, Response, Data,
    /// DataAck may; tpsim puts data only in Data and DataAck).
    #[inline]
    pub fn carries_data(self) -> bool {
        matches!(self, DccpType::Data | DccpType::DataAck)
    }
}

/// The state of a run in an Ack Vector (RFC 4340 §11.4: the two high bits of each byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AckState {
    /// State 0: received.
    Received,
    /// State 1: received ECN-marked.
    ReceivedEcnMarked,
    /// State 3: not yet received.
    NotReceived,
}

impl AckState {
    fn bits(self) -> u8 {
        match self {
            AckState::Received => 0,
            AckState::ReceivedEcnMarked => 1,
            AckState::NotReceived => 3,
        }
    }
    fn from_bits(b: u8) -> Option<AckState> {
        match b {
            0 => Some(AckState::Received),
            1 => Some(AckState::ReceivedEcnMarked),
            3 => Some(AckState::NotReceived),
            _ => None,
        }
    }
}

/// An Ack Vector (RFC 4340 §11.4), run-length encoded: byte i is `state << 6 | run length`,
/// describing `run length + 1` consecutive packets; the first byte starts at the
/// Acknowledgement Number and each run goes down in sequence number. At most
/// [`MAX_ACK_VECTOR_LEN`] bytes; empty: no Ack Vector option.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckVector {
    bytes: [u8; MAX_ACK_VECTOR_LEN],
    len: u8,
}

impl Default for AckVector {
    fn default() -> Self {
        AckVector::EMPTY
    }
}

impl AckVector {
    /// No Ack Vector.
    pub const EMPTY: AckVector = AckVector {
        bytes: [0; MAX_ACK_VECTOR_LEN],
        len: 0,
    };
    /// Largest run length of one byte (6 bits, RFC 4340 §11.4): a byte covers run + 1 packets.
    pub const MAX_RUN: u8 = 63;

    /// Appends a run of `run + 1` packets in `state` (`run` at most [`AckVector::MAX_RUN`]);
    /// returns false (and does nothing) when the vector is full.
    pub fn push(&mut self, state: AckState, run: u8) -> bool {
        debug_assert!(run <= Self::MAX_RUN);
        if self.len as usize >= MAX_ACK_VECTOR_LEN {
            return false;
        }
        self.bytes[self.len as usize] = state.bits() << 6 | (run & Self::MAX_RUN);
        self.len += 1;
        true
    }
    /// The run-length bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there is no vector.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Number of packets the vector describes (the sum of run lengths + 1).
    pub fn covered(&self) -> u64 {
        self.as_slice().iter().map(|b| (b & Self::MAX_RUN) as u64 + 1).sum()
    }
    /// The runs as (highest sequence number, packets, state), from `ack` (the packet's
    /// Acknowledgement Number) down; sequence numbers wrap modulo 2^48. Bytes with the
    /// reserved state 2 are skipped (their packets counted).
    pub fn runs(&self, ack: u64) -> impl Iterator<Item = (u64, u64, Option<AckState>)> + '_ {
        let mut top = ack;
        self.as_slice().iter().map(move |&b| {
            let n = (b & Self::MAX_RUN) as u64 + 1;
            let r = (top, n, AckState::from_bits(b >> 6));
            top = top.wrapping_sub(n) & (SEQ_MODULUS - 1);
            r
        })
    }
    /// The state the vector reports for `seq` given the Acknowledgement Number `ack`, or
    /// `None` if it does not cover `seq`.
    pub fn state_of(&self, ack: u64, seq: u64) -> Option<AckState> {
        let back = ack.wrapping_sub(seq) & (SEQ_MODULUS - 1);
        let mut off = 0;
        for &b in self.as_slice() {
            let n = (b & Self::MAX_RUN) as u64 + 1;
            if back < off + n {
                return AckState::from_bits(b >> 6);
            }
            off += n;
        }
        None
    }
}

impl fmt::Debug for AckVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.as_slice().iter().map(|b| (b >> 6, b & Self::MAX_RUN)))
            .finish()
    }
}

/// Which of the four feature-negotiation options (RFC 4340 §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureOptionKind {
    /// Change L (32): the sender asks to change its own (local) feature.
    ChangeL,
    /// Confirm L (33): confirms the sender's own feature.
    ConfirmL,
    /// Change R (34): asks the receiver to change the receiver's feature.
    ChangeR,
    /// Confirm R (35): confirms the receiver's feature.
    ConfirmR,
}

impl FeatureOptionKind {
    fn code(self) -> u8 {
        match self {
            FeatureOptionKind::ChangeL => OPT_CHANGE_L,
            FeatureOptionKind::ConfirmL => OPT_CONFIRM_L,
            FeatureOptionKind::ChangeR => OPT_CHANGE_R,
            FeatureOptionKind::ConfirmR => OPT_CONFIRM_R,
        }
    }
    fn is_confirm(self) -> bool {
        matches!(self, FeatureOptionKind::ConfirmL | FeatureOptionKind::ConfirmR)
    }
}

/// One Change or Confirm option for a feature tpsim negotiates (RFC 4340 §6): CCID and Send
/// Ack Vector (server-priority, 1-byte values) and Ack Ratio (non-negotiable, 2 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FeatureOption {
    /// Change L/R or Confirm L/R.
    pub kind: FeatureOptionKind,
    /// Feature number ([`FEATURE_CCID`], [`FEATURE_ACK_RATIO`], [`FEATURE_SEND_ACK_VECTOR`]).
    pub feature: u8,
    /// The value (a one-entry preference list for a server-priority Change; the selected
    /// value for a Confirm).
    pub value: u16,
}

impl FeatureOption {
    /// Bytes of the value field: 2 for Ack Ratio (§11.3); for the 1-byte server-priority
    /// features 1 in a Change (a one-entry preference list) and 2 in a Confirm (the selected
    /// value, then the preference list, §6.1).
    fn value_len(&self) -> usize {
        if self.feature == FEATURE_ACK_RATIO || self.kind.is_confirm() {
            2
        } else {
            1
        }
    }
    /// Option bytes: type, length, feature number and value (RFC 4340 §6.1).
    pub fn option_len(&self) -> u32 {
        3 + self.value_len() as u32
    }
}

const NO_FEATURE: FeatureOption = FeatureOption {
    kind: FeatureOptionKind::ChangeL,
    feature: 0,
    value: 0,
};

/// The options of one packet. Times are in the 10-microsecond units of RFC 4340 §13.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DccpOptions {
    /// Ack Vector (§11.4, type 38, ECN Nonce 0); empty for none.
    pub ack_vector: AckVector,
    /// NDP Count (§7.7, type 37): non-data packets sent right before this one (at most
    /// 2^24 − 1 here).
    pub ndp_count: Option<u32>,
    /// Timestamp (§13.1, type 41): the sender's clock, 10 µs units.
    pub timestamp: Option<u32>,
    /// Timestamp Echo (§13.3, type 42): (the Timestamp echoed, elapsed time since it was
    /// received in 10 µs units).
    pub timestamp_echo: Option<(u32, u32)>,
    /// Elapsed Time (§13.2, type 43): time between the acknowledged packet's arrival and this
    /// acknowledgement, 10 µs units.
    pub elapsed_time: Option<u32>,
    /// Loss Event Rate (RFC 4342 §8.5, type 192): 1/p rounded up; 2^32 − 1 for no loss.
    pub loss_event_rate: Option<u32>,
    /// Receive Rate (RFC 4342 §8.3, type 194): bytes/s received over the last RTT.
    pub receive_rate: Option<u32>,
    features: [FeatureOption; MAX_FEATURE_OPTIONS],
    n_features: u8,
}

impl Default for DccpOptions {
    fn default() -> Self {
        DccpOptions::NONE
    }
}

impl DccpOptions {
    /// No options.
    pub const NONE: DccpOptions = DccpOptions {
        ack_vector: AckVector::EMPTY,
        ndp_count: None,
        timestamp: None,
        timestamp_echo: None,
        elapsed_time: None,
        loss_event_rate: None,
        receive_rate: None,
        features: [NO_FEATURE; MAX_FEATURE_OPTIONS],
        n_features: 0,
    };

    /// Adds a Change/Confirm option; false (and nothing added) when
    /// [`MAX_FEATURE_OPTIONS`] are already there.
    pub fn push_feature(&mut self, f: FeatureOption) -> bool {
        if self.n_features as usize >= MAX_FEATURE_OPTIONS {
            return false;
        }
        self.features[self.n_features as usize] = f;
        self.n_features += 1;
        true
    }
    /// The Change/Confirm options, in order.
    pub fn features(&self) -> &[FeatureOption] {
        &self.features[..self.n_features as usize]
    }
    /// Option bytes before padding.
    pub fn unpadded_len(&self) -> u32 {
        let mut n = 0;
        if !self.ack_vector.is_empty() {
            n += 2 + self.ack_vector.len() as u32;
        }
        if let Some(c) = self.ndp_count {
            n += 2 + ndp_bytes(c) as u32;
        }
        if self.timestamp.is_some() {
            n += 6;
        }
        if self.timestamp_echo.is_some() {
            n += 10;
        }
        if self.elapsed_time.is_some() {
            n += 6;
        }
        if self.loss_event_rate.is_some() {
            n += 6;
        }
        if self.receive_rate.is_some() {
            n += 6;
        }
        n + self.features().iter().map(|f| f.option_len()).sum::<u32>()
    }
    /// Option bytes padded to a multiple of 4 (RFC 4340 §5.8: Data Offset counts 32-bit words).
    pub fn len(&self) -> u32 {
        self.unpadded_len().div_ceil(4) * 4
    }
    /// Whether there are no options.
    pub fn is_empty(&self) -> bool {
        self.unpadded_len() == 0
    }
}

/// A parsed-form DCCP header (RFC 4340 §5), X = 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DccpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Packet type.
    pub packet_type: DccpType,
    /// CCVal (§5.1, 4 bits): CCID 3's window counter (RFC 4342 §8.1).
    pub ccval: u8,
    /// Sequence Number, 48 bits (§7.1).
    pub seq: u64,
    /// Acknowledgement Number, 48 bits: the greatest sequence number received (§7.4);
    /// meaningful when [`DccpType::has_ack`].
    pub ack: u64,
    /// Service Code of Request and Response (§8.1.2).
    pub service_code: u32,
    /// Reset Code of a Reset (§5.6): 1 Closed, 2 Aborted, 3 No Connection, 5 Option Error, …
    pub reset_code: u8,
    /// Options.
    pub options: DccpOptions,
}

/// Reset Code "Closed" (RFC 4340 §5.6): normal close.
pub const RESET_CLOSED: u8 = 1;
/// Reset Code "Aborted" (RFC 4340 §5.6).
pub const RESET_ABORTED: u8 = 2;
/// Reset Code "No Connection" (RFC 4340 §5.6).
pub const RESET_NO_CONNECTION: u8 = 3;
/// Reset Code "Too Busy"/handshake timeout reasons are not used; "Packet Error" (4).
pub const RESET_PACKET_ERROR: u8 = 4;

/// Why a DCCP packet did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DccpParseError {
    /// Shorter than the header its Data Offset announces.
    Truncated,
    /// X = 0, an unknown type, a Data Offset too small for the type, or a malformed option.
    Malformed,
    /// The checksum over the pseudo-header and packet is wrong (§9).
    Checksum,
}

impl fmt::Display for DccpParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DccpParseError::Truncated => f.write_str("truncated DCCP packet"),
            DccpParseError::Malformed => f.write_str("malformed DCCP header"),
            DccpParseError::Checksum => f.write_str("bad DCCP checksum"),
        }
    }
}

/// Value bytes of an NDP Count option: the fewest that hold `c` (§7.7: 1 to 6), at most 3.
fn ndp_bytes(c: u32) -> usize {
    if c < 1 << 8 {
        1
    } else if c < 1 << 16 {
        2
    } else {
        3
    }
}

fn put48(b: &mut [u8], v: u64) {
    b[..6].copy_from_slice(&v.to_be_bytes()[2..]);
}

fn get48(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[2..].copy_from_slice(&b[..6]);
    u64::from_be_bytes(x)
}

impl DccpRepr {
    /// Bytes of the header before options: generic header, acknowledgement subheader and
    /// the type's own fields (RFC 4340 §5.1–§5.7).
    pub fn fixed_len(&self) -> u32 {
        let mut n = DCCP_GENERIC_HEADER_LEN;
        if self.packet_type.has_ack() {
            n += DCCP_ACK_SUBHEADER_LEN;
        }
        match self.packet_type {
            DccpType::Request | DccpType::Response | DccpType::Reset => n + 4,
            _ => n,
        }
    }
    /// Header length with options (padded), bytes: what Data Offset counts (§5.1).
    pub fn header_len(&self) -> u32 {
        self.fixed_len() + self.options.len()
    }
    /// IP + DCCP header bytes as ns-2.35's Agent/DCCP counts them (`dccp/dccp_types.h`; see
    /// the module docs), options padded to 4 bytes.
    pub fn ns2_overhead(&self) -> u32 {
        let extra = match self.packet_type {
            DccpType::Data => 0,
            DccpType::Reset => 8,
            _ => 4,
        };
        20 + 12 + extra + self.options.len()
    }

    /// Writes the header and `payload` into `buf[..header_len() + payload.len()]`, with
    /// CsCov = 0 and the checksum of RFC 4340 §9 over the IPv4 pseudo-header (`ip`) and the
    /// whole packet.
    ///
    /// # Panics
    /// If `buf` is too short.
    pub fn emit(&self, ip: &Ipv4Repr, payload: &[u8], buf: &mut [u8]) {
        let hl = self.header_len() as usize;
        let len = hl + payload.len();
        let b = &mut buf[..len];
        b[..hl].fill(0);
        b[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        b[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        b[4] = (hl / 4) as u8;
        b[5] = (self.ccval & 0x0f) << 4; // CsCov = 0: the whole packet (§9.2)
        b[8] = (self.packet_type as u8) << 1 | 1; // Res = 0, Type, X = 1
        b[9] = 0;
        put48(&mut b[10..16], self.seq & (SEQ_MODULUS - 1));
        let mut at = 16;
        if self.packet_type.has_ack() {
            put48(&mut b[18..24], self.ack & (SEQ_MODULUS - 1));
            at = 24;
        }
        match self.packet_type {
            DccpType::Request | DccpType::Response => {
                b[at..at + 4].copy_from_slice(&self.service_code.to_be_bytes());
                at += 4;
            }
            DccpType::Reset => {
                b[at] = self.reset_code;
                at += 4;
            }
            _ => {}
        }
        let o = &self.options;
        let mut put = |bytes: &[u8]| {
            b[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        for f in o.features() {
            let v = f.value.to_be_bytes();
            match f.value_len() {
                1 => put(&[f.kind.code(), 4, f.feature, v[1]]),
                _ if f.feature == FEATURE_ACK_RATIO => put(&[f.kind.code(), 5, f.feature, v[0], v[1]]),
                // A server-priority Confirm: the selected value, then a one-entry preference
                // list holding it (§6.1).
                _ => put(&[f.kind.code(), 5, f.feature, v[1], v[1]]),
            }
        }
        if let Some(c) = o.ndp_count {
            let n = ndp_bytes(c);
            let v = c.min((1 << 24) - 1).to_be_bytes();
            put(&[OPT_NDP_COUNT, 2 + n as u8]);
            put(&v[4 - n..]);
        }
        if let Some(t) = o.timestamp {
            let v = t.to_be_bytes();
            put(&[OPT_TIMESTAMP, 6, v[0], v[1], v[2], v[3]]);
        }
        if let Some((t, e)) = o.timestamp_echo {
            let v = t.to_be_bytes();
            let w = e.to_be_bytes();
            put(&[OPT_TIMESTAMP_ECHO, 10, v[0], v[1], v[2], v[3], w[0], w[1], w[2], w[3]]);
        }
        if let Some(e) = o.elapsed_time {
            let v = e.to_be_bytes();
            put(&[OPT_ELAPSED_TIME, 6, v[0], v[1], v[2], v[3]]);
        }
        if let Some(p) = o.loss_event_rate {
            let v = p.to_be_bytes();
            put(&[OPT_LOSS_EVENT_RATE, 6, v[0], v[1], v[2], v[3]]);
        }
        if let Some(r) = o.receive_rate {
            let v = r.to_be_bytes();
            put(&[OPT_RECEIVE_RATE, 6, v[0], v[1], v[2], v[3]]);
        }
        if !o.ack_vector.is_empty() {
            put(&[OPT_ACK_VECTOR_0, 2 + o.ack_vector.len() as u8]);
            put(o.ack_vector.as_slice());
        }
        // The rest up to hl stays 0: Padding options (§5.8.1).
        b[hl..].copy_from_slice(payload);
        let sum = checksum::accumulate(ip.pseudo_header_sum(len as u16), b);
        b[6..8].copy_from_slice(&checksum::finish(sum).to_be_bytes());
    }

    /// Parses a whole DCCP packet (CsCov = 0 or not, the checksum is verified over what
    /// CsCov covers, §9.2) and returns the header and the payload.
    ///
    /// An Ack Vector longer than [`MAX_ACK_VECTOR_LEN`] keeps its first bytes (the most
    /// recent packets); Change/Confirm options beyond [`MAX_FEATURE_OPTIONS`] and unknown
    /// options are skipped.
    ///
    /// # Errors
    /// [`DccpParseError`] for a truncated or malformed packet or a bad checksum.
    pub fn parse<'a>(ip: &Ipv4Repr, bytes: &'a [u8]) -> Result<(DccpRepr, &'a [u8]), DccpParseError> {
        if bytes.len() < DCCP_GENERIC_HEADER_LEN as usize {
            return Err(DccpParseError::Truncated);
        }
        if bytes[8] & 1 == 0 {
            return Err(DccpParseError::Malformed);
        }
        let packet_type = DccpType::from_u8((bytes[8] >> 1) & 0x0f).ok_or(DccpParseError::Malformed)?;
        let hl = bytes[4] as usize * 4;
        if bytes.len() < hl || bytes.len() > u16::MAX as usize {
            return Err(DccpParseError::Truncated);
        }
        let cscov = (bytes[5] & 0x0f) as usize;
        let covered = if cscov == 0 {
            bytes.len()
        } else {
            (hl + (cscov - 1) * 4).min(bytes.len())
        };
        let sum = checksum::accumulate(ip.pseudo_header_sum(bytes.len() as u16), &bytes[..covered]);
        if checksum::finish(sum) != 0 {
            return Err(DccpParseError::Checksum);
        }
        let mut repr = DccpRepr {
            src_port: u16::from_be_bytes([bytes[0], bytes[1]]),
            dst_port: u16::from_be_bytes([bytes[2], bytes[3]]),
            packet_type,
            ccval: bytes[5] >> 4,
            seq: get48(&bytes[10..16]),
            ack: 0,
            service_code: 0,
            reset_code: 0,
            options: DccpOptions::NONE,
        };
        if hl < repr.fixed_len() as usize {
            return Err(DccpParseError::Malformed);
        }
        let mut at = 16;
        if packet_type.has_ack() {
            repr.ack = get48(&bytes[18..24]);
            at = 24;
        }
        match packet_type {
            DccpType::Request | DccpType::Response => {
                repr.service_code = u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
                at += 4;
            }
            DccpType::Reset => {
                repr.reset_code = bytes[at];
                at += 4;
            }
            _ => {}
        }
        let mut opts = &bytes[at..hl];
        let be32 = |v: &[u8]| u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
        while let Some(&kind) = opts.first() {
            // Single-byte options: Padding, Mandatory, Slow Receiver (§5.8).
            if kind < 32 {
                opts = &opts[1..];
                continue;
            }
            let len = *opts.get(1).ok_or(DccpParseError::Malformed)? as usize;
            if len < 2 || len > opts.len() {
                return Err(DccpParseError::Malformed);
            }
            let v = &opts[2..len];
            let o = &mut repr.options;
            match kind {
                OPT_CHANGE_L | OPT_CONFIRM_L | OPT_CHANGE_R | OPT_CONFIRM_R => {
                    if v.is_empty() {
                        return Err(DccpParseError::Malformed);
                    }
                    let kind = match kind {
                        OPT_CHANGE_L => FeatureOptionKind::ChangeL,
                        OPT_CONFIRM_L => FeatureOptionKind::ConfirmL,
                        OPT_CHANGE_R => FeatureOptionKind::ChangeR,
                        _ => FeatureOptionKind::ConfirmR,
                    };
                    let value = match (v[0], v.len()) {
                        (FEATURE_ACK_RATIO, n) if n >= 3 => u16::from_be_bytes([v[1], v[2]]),
                        (_, n) if n >= 2 => v[1] as u16,
                        _ => 0,
                    };
                    o.push_feature(FeatureOption {
                        kind,
                        feature: v[0],
                        value,
                    });
                }
                OPT_ACK_VECTOR_0 | OPT_ACK_VECTOR_1 => {
                    let mut av = AckVector::EMPTY;
                    for &b in v.iter().take(MAX_ACK_VECTOR_LEN) {
                        av.bytes[av.len as usize] = b;
                        av.len += 1;
                    }
                    o.ack_vector = av;
                }
                OPT_NDP_COUNT if (1..=6).contains(&v.len()) => {
                    o.ndp_count = Some(v.iter().fold(0u64, |a, &b| a << 8 | b as u64).min(u32::MAX as u64) as u32)
                }
                OPT_TIMESTAMP if v.len() == 4 => o.timestamp = Some(be32(v)),
                // §13.3: the echoed Timestamp, then no, a 2-byte or a 4-byte Elapsed Time.
                OPT_TIMESTAMP_ECHO => {
                    let e = match v.len() {
                        4 => 0,
                        6 => u16::from_be_bytes([v[4], v[5]]) as u32,
                        8 => be32(&v[4..]),
                        _ => return Err(DccpParseError::Malformed),
                    };
                    o.timestamp_echo = Some((be32(v), e));
                }
                OPT_ELAPSED_TIME => {
                    o.elapsed_time = Some(match v.len() {
                        2 => u16::from_be_bytes([v[0], v[1]]) as u32,
                        4 => be32(v),
                        _ => return Err(DccpParseError::Malformed),
                    })
                }
                OPT_LOSS_EVENT_RATE if v.len() == 4 => o.loss_event_rate = Some(be32(v)),
                OPT_RECEIVE_RATE if v.len() == 4 => o.receive_rate = Some(be32(v)),
                _ => {}
            }
            opts = &opts[len..];
        }
        Ok((repr, &bytes[hl..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::IpProtocol;
    use std::net::Ipv4Addr;

    fn ip(len: u32) -> Ipv4Repr {
        Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::Dccp,
            ttl: 64,
            ident: 0,
            total_len: (20 + len) as u16,
            ecn: crate::Ecn::NotEct,
        }
    }

    fn base(t: DccpType) -> DccpRepr {
        DccpRepr {
            src_port: 5000,
            dst_port: 9,
            packet_type: t,
            ccval: 0,
            seq: 0x0000_1234_5678_9abc,
            ack: 0x0000_fedc_ba98_7654,
            service_code: 0,
            reset_code: 0,
            options: DccpOptions::NONE,
        }
    }

    #[test]
    fn fixed_lengths_per_type_rfc4340_s5() {
        // §5.1 generic 16 (X = 1); §5.3 ack subheader 8; §5.4/5.5 Service Code 4; §5.6 Reset 4.
        let want = [
            (DccpType::Request, 20),
            (DccpType::Response, 28),
            (DccpType::Data, 16),
            (DccpType::Ack, 24),
            (DccpType::DataAck, 24),
            (DccpType::CloseReq, 24),
            (DccpType::Close, 24),
            (DccpType::Reset, 28),
            (DccpType::Sync, 24),
            (DccpType::SyncAck, 24),
        ];
        for (t, n) in want {
            assert_eq!(base(t).header_len(), n, "{t:?}");
        }
        // ns-2.35 dccp_types.h: 12 + 20 (IP), + 4 for all but Data (0) and Reset (8).
        assert_eq!(base(DccpType::Data).ns2_overhead(), 32);
        assert_eq!(base(DccpType::DataAck).ns2_overhead(), 36);
        assert_eq!(base(DccpType::Reset).ns2_overhead(), 40);
    }

    #[test]
    fn every_type_round_trips_with_options_and_checksum() {
        for t in 0..10 {
            let t = DccpType::from_u8(t).unwrap();
            let mut r = base(t);
            if !t.has_ack() {
                r.ack = 0;
            }
            r.ccval = 5;
            r.service_code = if matches!(t, DccpType::Request | DccpType::Response) {
                42
            } else {
                0
            };
            r.reset_code = if t == DccpType::Reset { RESET_CLOSED } else { 0 };
            r.options.ack_vector.push(AckState::Received, 10);
            r.options.ack_vector.push(AckState::NotReceived, 0);
            r.options.ack_vector.push(AckState::Received, 63);
            r.options.timestamp = Some(777);
            r.options.ndp_count = Some(t as u32 * 100);
            r.options.timestamp_echo = Some((5, 6));
            r.options.elapsed_time = Some(123_456);
            r.options.loss_event_rate = Some(100);
            r.options.receive_rate = Some(125_000);
            r.options.push_feature(FeatureOption {
                kind: FeatureOptionKind::ChangeR,
                feature: FEATURE_CCID,
                value: 2,
            });
            r.options.push_feature(FeatureOption {
                kind: FeatureOptionKind::ConfirmL,
                feature: FEATURE_SEND_ACK_VECTOR,
                value: 1,
            });
            r.options.push_feature(FeatureOption {
                kind: FeatureOptionKind::ChangeL,
                feature: FEATURE_ACK_RATIO,
                value: 300,
            });
            let payload = [7u8; 13];
            let n = r.header_len() as usize + 13;
            assert_eq!(r.header_len() % 4, 0);
            let mut buf = vec![0u8; n];
            r.emit(&ip(n as u32), &payload, &mut buf);
            let (p, pl) = DccpRepr::parse(&ip(n as u32), &buf).unwrap();
            assert_eq!(p, r, "{t:?}");
            assert_eq!(pl, &payload);
            buf[n - 1] ^= 1;
            assert_eq!(DccpRepr::parse(&ip(n as u32), &buf), Err(DccpParseError::Checksum));
        }
    }

    #[test]
    fn ack_vector_runs_go_down_from_the_ack_number_rfc4340_s11_4() {
        // §11.4: the first byte describes the Acknowledgement Number and the `run` packets
        // below it; the next byte continues below.
        let mut v = AckVector::EMPTY;
        v.push(AckState::Received, 2); // 100, 99, 98
        v.push(AckState::NotReceived, 0); // 97
        v.push(AckState::Received, 0); // 96
        assert_eq!(v.covered(), 5);
        assert_eq!(v.state_of(100, 98), Some(AckState::Received));
        assert_eq!(v.state_of(100, 97), Some(AckState::NotReceived));
        assert_eq!(v.state_of(100, 96), Some(AckState::Received));
        assert_eq!(v.state_of(100, 95), None);
        let runs: Vec<_> = v.runs(100).collect();
        assert_eq!(runs[1], (97, 1, Some(AckState::NotReceived)));
        // 48-bit wrap: below 0 is 2^48 - 1.
        assert_eq!(v.state_of(1, SEQ_MODULUS - 1), Some(AckState::Received));
        // Full at MAX_ACK_VECTOR_LEN bytes.
        let mut f = AckVector::EMPTY;
        for _ in 0..MAX_ACK_VECTOR_LEN {
            assert!(f.push(AckState::Received, 0));
        }
        assert!(!f.push(AckState::Received, 0));
    }
}
