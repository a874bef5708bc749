//! TCP header (RFC 9293 §3.1), with the options tpsim uses: MSS (§3.2, kind 2), Window Scale
//! (RFC 7323 §2.2, kind 3) and SACK-permitted (RFC 2018 §2, kind 4), all three only on SYN
//! segments; timestamps (RFC 7323 §3.2, kind 8) and SACK blocks (RFC 2018 §3, kind 5) on any.
//!
//! tpsim moves [`TcpRepr`] values, never bytes; [`TcpRepr::emit`] writes real bytes (for pcap
//! traces and tests) and [`TcpRepr::parse`] reads them back, checking the checksum.

use crate::checksum;
use crate::ip::Ipv4Repr;
use std::fmt;

/// TCP header length without options, bytes (RFC 9293 §3.1: data offset 5).
pub const TCP_HEADER_LEN: u32 = 20;
/// Option kinds (RFC 9293 §3.2; RFC 2018 §2).
const OPT_END: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WINDOW_SCALE: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;
/// Largest shift count of the Window Scale option (RFC 7323 §2.3).
pub const MAX_WINDOW_SHIFT: u8 = 14;

/// The control bits of a TCP header (RFC 9293 §3.1), as a small bit set.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(u8);

impl TcpFlags {
    /// No control bit set.
    pub const NONE: TcpFlags = TcpFlags(0);
    /// FIN: no more data from sender.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// SYN: synchronize sequence numbers.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// RST: reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x04);
    /// PSH: push function.
    pub const PSH: TcpFlags = TcpFlags(0x08);
    /// ACK: the acknowledgment field is significant.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// ECE, ECN-Echo: on a SYN, ECN is offered; otherwise a CE-marked segment arrived
    /// (RFC 3168 §6.1).
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// CWR, Congestion Window Reduced: the sender reduced its window for an ECE (RFC 3168 §6.1).
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// The flags from the header's flag byte (URG is ignored).
    pub const fn from_bits(bits: u8) -> TcpFlags {
        TcpFlags(bits & 0xdf)
    }
    /// The header's flag byte.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// Whether every flag of `other` is set in `self`.
    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// `self` with the flags of `other` added.
    pub const fn with(self, other: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | other.0)
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        self.with(rhs)
    }
}

impl fmt::Debug for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Self::SYN, "SYN"),
            (Self::FIN, "FIN"),
            (Self::RST, "RST"),
            (Self::PSH, "PSH"),
            (Self::ACK, "ACK"),
            (Self::ECE, "ECE"),
            (Self::CWR, "CWR"),
        ];
        let mut first = true;
        for (flag, name) in names {
            if self.contains(flag) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("-")?;
        }
        Ok(())
    }
}

/// The timestamps option (RFC 7323 §3.2, TSopt): the sender's clock and the echo of the
/// peer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpTimestamp {
    /// TSval: the sender's timestamp clock when the segment was sent (tpsim: milliseconds).
    pub tsval: u32,
    /// TSecr: the TSval echoed (TS.Recent, RFC 7323 §4.3); 0 on a SYN.
    pub tsecr: u32,
}

/// SACK blocks of one segment (RFC 2018 §3): up to four `(left edge, right edge)` pairs of
/// 32-bit sequence numbers, the left edge the first octet of the block and the right edge the
/// one after its last, in the order the receiver put them (the first block is the most
/// recent, RFC 2018 §4). Empty: no SACK option.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SackBlocks {
    blocks: [(u32, u32); SackBlocks::MAX],
    len: u8,
}

impl SackBlocks {
    /// Most blocks one option can carry: the 40 bytes of option space hold 8·4 + 2 (RFC 2018 §3).
    pub const MAX: usize = 4;
    /// Most blocks alongside the timestamps option (its 10 bytes plus 2 of padding leave room
    /// for 3, RFC 2018 §3).
    pub const MAX_WITH_TIMESTAMPS: usize = 3;
    /// No blocks.
    pub const NONE: SackBlocks = SackBlocks {
        blocks: [(0, 0); SackBlocks::MAX],
        len: 0,
    };

    /// The blocks of `s` (at most [`SackBlocks::MAX`]; more are ignored).
    pub fn from_slice(s: &[(u32, u32)]) -> SackBlocks {
        let mut b = SackBlocks::NONE;
        for &x in s.iter().take(Self::MAX) {
            b.push(x);
        }
        b
    }
    /// Appends a block; returns false (and does nothing) when four are already there.
    pub fn push(&mut self, block: (u32, u32)) -> bool {
        if self.len as usize >= Self::MAX {
            return false;
        }
        self.blocks[self.len as usize] = block;
        self.len += 1;
        true
    }
    /// The blocks, first (most recent) first.
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..self.len as usize]
    }
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there are none (no SACK option).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Option bytes: two NOPs, kind, length and 8 per block (RFC 2018 §3 length 8·n + 2, led by
    /// two NOPs to keep the blocks 4-byte aligned, as BSD and Linux send it); 0 if empty.
    pub fn option_len(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            4 + 8 * self.len as u32
        }
    }
}

impl fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// A parsed-form TCP header. `window` is the 16-bit field as sent: the receive window in bytes
/// shifted right by the sender's Window Scale shift count (RFC 7323 §2.3) once both SYNs
/// carried the option, never on a SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number of the first octet (of the SYN, if set) of the segment.
    pub seq: u32,
    /// Next sequence number the sender expects to receive (meaningful when ACK is set).
    pub ack: u32,
    /// Control bits.
    pub flags: TcpFlags,
    /// Window field (RFC 9293 §3.1): bytes, or bytes >> shift with window scaling (RFC 7323
    /// §2.3; a SYN's is never scaled).
    pub window: u16,
    /// MSS option (RFC 9293 §3.7.1), bytes of payload the sender can receive; SYN only.
    pub mss: Option<u16>,
    /// SACK-permitted option (RFC 2018 §2); SYN only.
    pub sack_permitted: bool,
    /// Timestamps option (RFC 7323 §3.2); on any segment once both SYNs carried it.
    pub timestamp: Option<TcpTimestamp>,
    /// Window Scale option (RFC 7323 §2.2): the sender's shift count; SYN only.
    pub window_scale: Option<u8>,
    /// SACK option (RFC 2018 §3): the blocks; empty for none.
    pub sack: SackBlocks,
}

/// Why bytes did not parse as a TCP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpParseError {
    /// Shorter than the header its data offset announces.
    Truncated,
    /// Data offset below 5 or a malformed option.
    Malformed,
    /// The checksum over the pseudo-header, header and payload is wrong.
    Checksum,
}

impl fmt::Display for TcpParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TcpParseError::Truncated => f.write_str("truncated TCP segment"),
            TcpParseError::Malformed => f.write_str("malformed TCP header"),
            TcpParseError::Checksum => f.write_str("bad TCP checksum"),
        }
    }
}

impl TcpRepr {
    /// Bytes of options, padded to a multiple of 4 (RFC 9293 §3.1: data offset counts 32-bit
    /// words). MSS takes 4; SACK-permitted takes 2, padded with two NOPs; timestamps take 10,
    /// led by two NOPs (RFC 7323 Appendix A's layout): 12; Window Scale takes 3, led by one
    /// NOP: 4; SACK takes 2 + 8 per block, led by two NOPs (RFC 2018 §3): 12 to 36.
    pub fn options_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.sack_permitted {
            n += 4;
        }
        if self.timestamp.is_some() {
            n += 12;
        }
        if self.window_scale.is_some() {
            n += 4;
        }
        n + self.sack.option_len()
    }

    /// Header length including options, bytes (20 to 60).
    pub fn header_len(&self) -> u32 {
        TCP_HEADER_LEN + self.options_len()
    }

    /// The same header without options (20 bytes).
    pub fn without_options(&self) -> TcpRepr {
        TcpRepr {
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: SackBlocks::NONE,
            ..*self
        }
    }

    /// Sequence space the segment occupies: payload bytes plus one for SYN and one for FIN
    /// (RFC 9293 §3.4, "SEG.LEN").
    pub fn segment_len(&self, payload_len: u32) -> u32 {
        payload_len + self.flags.contains(TcpFlags::SYN) as u32 + self.flags.contains(TcpFlags::FIN) as u32
    }

    /// Writes header and `payload` into `buf[..header_len() + payload.len()]`, with the
    /// checksum over the IPv4 pseudo-header (protocol taken from `ip`, which should be TCP),
    /// header and payload (RFC 9293 §3.1). Unlike UDP, a computed zero is sent as zero.
    ///
    /// # Panics
    /// If `buf` is too short.
    pub fn emit(&self, ip: &Ipv4Repr, payload: &[u8], buf: &mut [u8]) {
        let hl = self.header_len() as usize;
        let len = hl + payload.len();
        let b = &mut buf[..len];
        b[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        b[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        b[4..8].copy_from_slice(&self.seq.to_be_bytes());
        let ack = if self.flags.contains(TcpFlags::ACK) {
            self.ack
        } else {
            0
        };
        b[8..12].copy_from_slice(&ack.to_be_bytes());
        b[12] = ((hl / 4) as u8) << 4; // data offset; reserved bits zero
        b[13] = self.flags.bits();
        b[14..16].copy_from_slice(&self.window.to_be_bytes());
        b[16..20].fill(0); // checksum (filled below), urgent pointer
        let mut o = TCP_HEADER_LEN as usize;
        if let Some(mss) = self.mss {
            b[o] = OPT_MSS;
            b[o + 1] = 4;
            b[o + 2..o + 4].copy_from_slice(&mss.to_be_bytes());
            o += 4;
        }
        if self.sack_permitted {
            b[o..o + 4].copy_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK_PERMITTED, 2]);
            o += 4;
        }
        if let Some(ts) = self.timestamp {
            b[o..o + 4].copy_from_slice(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMPS, 10]);
            b[o + 4..o + 8].copy_from_slice(&ts.tsval.to_be_bytes());
            b[o + 8..o + 12].copy_from_slice(&ts.tsecr.to_be_bytes());
            o += 12;
        }
        if let Some(shift) = self.window_scale {
            // RFC 7323 §2.2: Kind 3, Length 3, shift.cnt; one NOP in front for alignment.
            b[o..o + 4].copy_from_slice(&[OPT_NOP, OPT_WINDOW_SCALE, 3, shift]);
            o += 4;
        }
        if !self.sack.is_empty() {
            // RFC 2018 §3: Kind 5, Length 8·n + 2, then the left and right edge of each block.
            b[o..o + 4].copy_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * self.sack.len() as u8]);
            o += 4;
            for &(l, r) in self.sack.as_slice() {
                b[o..o + 4].copy_from_slice(&l.to_be_bytes());
                b[o + 4..o + 8].copy_from_slice(&r.to_be_bytes());
                o += 8;
            }
        }
        debug_assert_eq!(o, hl);
        b[hl..].copy_from_slice(payload);
        let sum = checksum::accumulate(ip.pseudo_header_sum(len as u16), b);
        b[16..18].copy_from_slice(&checksum::finish(sum).to_be_bytes());
    }

    /// Parses a TCP segment (header and payload) received in `ip`, verifying the checksum.
    /// Returns the header and the payload. Unknown options are skipped.
    ///
    /// # Errors
    /// [`TcpParseError`] for short, malformed or corrupted segments.
    pub fn parse<'a>(ip: &Ipv4Repr, bytes: &'a [u8]) -> Result<(TcpRepr, &'a [u8]), TcpParseError> {
        if bytes.len() < TCP_HEADER_LEN as usize {
            return Err(TcpParseError::Truncated);
        }
        let hl = (bytes[12] >> 4) as usize * 4;
        if hl < TCP_HEADER_LEN as usize {
            return Err(TcpParseError::Malformed);
        }
        if bytes.len() < hl {
            return Err(TcpParseError::Truncated);
        }
        if bytes.len() > u16::MAX as usize {
            return Err(TcpParseError::Malformed);
        }
        if checksum::finish(checksum::accumulate(ip.pseudo_header_sum(bytes.len() as u16), bytes)) != 0 {
            return Err(TcpParseError::Checksum);
        }
        let be16 = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
        let be32 = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let mut repr = TcpRepr {
            src_port: be16(0),
            dst_port: be16(2),
            seq: be32(4),
            ack: be32(8),
            flags: TcpFlags::from_bits(bytes[13]),
            window: be16(14),
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: SackBlocks::NONE,
        };
        let mut opts = &bytes[TCP_HEADER_LEN as usize..hl];
        while let Some(&kind) = opts.first() {
            match kind {
                OPT_END => break,
                OPT_NOP => opts = &opts[1..],
                _ => {
                    let len = *opts.get(1).ok_or(TcpParseError::Malformed)? as usize;
                    if len < 2 || len > opts.len() {
                        return Err(TcpParseError::Malformed);
                    }
                    match (kind, len) {
                        (OPT_MSS, 4) => repr.mss = Some(u16::from_be_bytes([opts[2], opts[3]])),
                        (OPT_SACK_PERMITTED, 2) => repr.sack_permitted = true,
                        (OPT_TIMESTAMPS, 10) => {
                            repr.timestamp = Some(TcpTimestamp {
                                tsval: u32::from_be_bytes([opts[2], opts[3], opts[4], opts[5]]),
                                tsecr: u32::from_be_bytes([opts[6], opts[7], opts[8], opts[9]]),
                            })
                        }
                        (OPT_WINDOW_SCALE, 3) => repr.window_scale = Some(opts[2]),
                        // RFC 2018 §3: 8·n + 2 bytes, n = 1 to 4.
                        (OPT_SACK, 10 | 18 | 26 | 34) => {
                            repr.sack = SackBlocks::NONE;
                            for blk in opts[2..len].chunks_exact(8) {
                                let l = u32::from_be_bytes([blk[0], blk[1], blk[2], blk[3]]);
                                let r = u32::from_be_bytes([blk[4], blk[5], blk[6], blk[7]]);
                                repr.sack.push((l, r));
                            }
                        }
                        (OPT_MSS, _)
                        | (OPT_SACK_PERMITTED, _)
                        | (OPT_TIMESTAMPS, _)
                        | (OPT_WINDOW_SCALE, _)
                        | (OPT_SACK, _) => return Err(TcpParseError::Malformed),
                        _ => {}
                    }
                    opts = &opts[len..];
                }
            }
        }
        Ok((repr, &bytes[hl..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::IpProtocol;
    use std::net::Ipv4Addr;

    fn ip(len: u16) -> Ipv4Repr {
        Ipv4Repr {
            src: Ipv4Addr::new(10, 1, 1, 1),
            dst: Ipv4Addr::new(10, 1, 1, 2),
            protocol: IpProtocol::Tcp,
            ttl: 64,
            ident: 0,
            total_len: 20 + len,
            ecn: crate::Ecn::NotEct,
        }
    }

    fn syn() -> TcpRepr {
        TcpRepr {
            src_port: 49152,
            dst_port: 80,
            seq: 0xfffffff0,
            ack: 0,
            flags: TcpFlags::SYN,
            window: 65535,
            mss: Some(1460),
            sack_permitted: true,
            timestamp: None,
            window_scale: None,
            sack: SackBlocks::NONE,
        }
    }

    #[test]
    fn header_length_counts_padded_options() {
        let mut r = syn();
        assert_eq!(r.header_len(), 28);
        r.sack_permitted = false;
        assert_eq!(r.header_len(), 24);
        r.mss = None;
        assert_eq!(r.header_len(), TCP_HEADER_LEN);
        r.timestamp = Some(TcpTimestamp { tsval: 1, tsecr: 0 });
        assert_eq!(r.header_len(), 32, "RFC 7323 Appendix A: NOP, NOP, TSopt");
        r.mss = Some(536);
        r.sack_permitted = true;
        assert_eq!(
            r.header_len(),
            40,
            "the largest header here, within RFC 9293's 60 bytes"
        );
        assert_eq!(r.segment_len(0), 1, "SYN occupies one sequence number");
    }

    /// RFC 9293 §3.1: the checksum over pseudo-header, header and payload verifies to zero.
    #[test]
    fn checksum_verifies_to_zero_with_pseudo_header() {
        for (r, payload) in [
            (syn(), &b""[..]),
            (
                TcpRepr {
                    seq: 1,
                    ack: 7,
                    flags: TcpFlags::ACK | TcpFlags::PSH,
                    mss: None,
                    sack_permitted: false,
                    window: 512,
                    ..syn()
                },
                &b"hello"[..], // odd length: padded with a zero byte (RFC 1071 §4.1)
            ),
            (
                TcpRepr {
                    timestamp: Some(TcpTimestamp {
                        tsval: 0x0102_0304,
                        tsecr: 0xfffe_fdfc,
                    }),
                    ..syn()
                },
                &b""[..],
            ),
        ] {
            let len = r.header_len() as usize + payload.len();
            let ip = ip(len as u16);
            let mut b = vec![0u8; len];
            r.emit(&ip, payload, &mut b);
            let sum = checksum::accumulate(ip.pseudo_header_sum(len as u16), &b);
            assert_eq!(checksum::finish(sum), 0);
            assert_eq!((b[12] >> 4) as u32 * 4, r.header_len());
            let (back, data) = TcpRepr::parse(&ip, &b).unwrap();
            assert_eq!(back, r);
            assert_eq!(data, payload);
        }
    }

    #[test]
    fn corrupted_segment_is_rejected() {
        let r = syn();
        let ip = ip(28);
        let mut b = [0u8; 28];
        r.emit(&ip, &[], &mut b);
        b[5] ^= 0x40;
        assert_eq!(TcpRepr::parse(&ip, &b), Err(TcpParseError::Checksum));
        assert_eq!(TcpRepr::parse(&ip, &b[..10]), Err(TcpParseError::Truncated));
    }

    #[test]
    fn emitted_bytes_match_rfc_layout() {
        let r = TcpRepr {
            sack_permitted: false,
            ..syn()
        };
        let mut b = [0u8; 24];
        r.emit(&ip(24), &[], &mut b);
        assert_eq!(&b[0..4], &[0xc0, 0x00, 0x00, 0x50]);
        assert_eq!(&b[4..8], &[0xff, 0xff, 0xff, 0xf0]);
        assert_eq!(&b[8..12], &[0, 0, 0, 0], "ACK field zero when ACK is off");
        assert_eq!(b[12], 6 << 4);
        assert_eq!(b[13], 0x02);
        assert_eq!(&b[14..16], &[0xff, 0xff]);
        assert_eq!(&b[20..24], &[2, 4, 0x05, 0xb4]);
        assert_eq!(format!("{:?}", TcpFlags::SYN | TcpFlags::ACK), "SYN|ACK");
    }

    /// RFC 7323 §3.2: Kind 8, Length 10, TSval, TSecr, after two NOPs (Appendix A).
    #[test]
    fn timestamps_option_layout() {
        let r = TcpRepr {
            seq: 1,
            ack: 1,
            flags: TcpFlags::ACK,
            mss: None,
            sack_permitted: false,
            timestamp: Some(TcpTimestamp {
                tsval: 0x0a0b_0c0d,
                tsecr: 7,
            }),
            ..syn()
        };
        let mut b = [0u8; 32];
        r.emit(&ip(32), &[], &mut b);
        assert_eq!(b[12], 8 << 4, "data offset 8 words");
        assert_eq!(&b[20..32], &[1, 1, 8, 10, 0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0, 7]);
        // A TSopt of the wrong length is malformed.
        let mut bad = b;
        bad[23] = 9;
        bad[16..18].fill(0);
        let sum = checksum::accumulate(ip(32).pseudo_header_sum(32), &bad);
        bad[16..18].copy_from_slice(&checksum::finish(sum).to_be_bytes());
        assert_eq!(TcpRepr::parse(&ip(32), &bad), Err(TcpParseError::Malformed));
    }

    fn reemit(r: &TcpRepr) -> Vec<u8> {
        let len = r.header_len() as usize;
        let mut b = vec![0u8; len];
        r.emit(&ip(len as u16), &[], &mut b);
        b
    }

    /// RFC 7323 §2.2: Kind 3, Length 3, shift.cnt, after one NOP; SYN with every option.
    #[test]
    fn window_scale_option_layout() {
        let r = TcpRepr {
            window_scale: Some(7),
            timestamp: Some(TcpTimestamp { tsval: 9, tsecr: 0 }),
            ..syn()
        };
        assert_eq!(r.header_len(), 20 + 4 + 4 + 12 + 4);
        let b = reemit(&r);
        assert_eq!(b[12] >> 4, 11, "data offset: 44 bytes");
        assert_eq!(&b[40..44], &[1, 3, 3, 7]);
        let (back, _) = TcpRepr::parse(&ip(44), &b).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.window_scale, Some(7));
    }

    /// RFC 2018 §3: Kind 5, Length 8·n + 2, left and right edges; two NOPs in front. Four blocks
    /// fit without timestamps (36 option bytes), three with them (12 + 28 = 40).
    #[test]
    fn sack_option_layout_and_block_counts() {
        let blocks = [(0xffff_fff0, 0x10), (100, 200), (300, 400), (500, 600)];
        let r = TcpRepr {
            seq: 1,
            ack: 0xffff_ff00,
            flags: TcpFlags::ACK,
            mss: None,
            sack_permitted: false,
            sack: SackBlocks::from_slice(&blocks),
            ..syn()
        };
        assert_eq!(r.options_len(), 36);
        assert_eq!(r.header_len(), 56);
        let b = reemit(&r);
        assert_eq!(&b[20..24], &[1, 1, 5, 34]);
        assert_eq!(&b[24..32], &[0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0x10]);
        assert_eq!(&b[48..56], &[0, 0, 1, 0xf4, 0, 0, 2, 0x58]);
        let (back, _) = TcpRepr::parse(&ip(56), &b).unwrap();
        assert_eq!(back.sack.as_slice(), &blocks);
        // With timestamps, three blocks fill the 40 bytes exactly.
        let r3 = TcpRepr {
            timestamp: Some(TcpTimestamp { tsval: 5, tsecr: 6 }),
            sack: SackBlocks::from_slice(&blocks[..SackBlocks::MAX_WITH_TIMESTAMPS]),
            ..r
        };
        assert_eq!(r3.options_len(), 40);
        let b = reemit(&r3);
        assert_eq!(b[12] >> 4, 15, "the largest data offset");
        assert_eq!(&b[32..36], &[1, 1, 5, 26]);
        assert_eq!(TcpRepr::parse(&ip(60), &b).unwrap().0, r3);
        // One block: 12 bytes; every length in between round-trips.
        for n in 1..=4 {
            let rn = TcpRepr {
                sack: SackBlocks::from_slice(&blocks[..n]),
                ..r
            };
            assert_eq!(rn.options_len(), 4 + 8 * n as u32);
            let b = reemit(&rn);
            assert_eq!(TcpRepr::parse(&ip(b.len() as u16), &b).unwrap().0, rn);
        }
        // A fifth block is refused; the stripped header has none.
        let mut s = SackBlocks::from_slice(&blocks);
        assert!(!s.push((1, 2)));
        assert!(r.without_options().sack.is_empty());
        assert_eq!(format!("{:?}", SackBlocks::from_slice(&[(1, 2)])), "[(1, 2)]");
    }

    /// A SACK option whose length is not 8·n + 2 (n = 1..4), or a Window Scale option not 3
    /// bytes long, is malformed (RFC 2018 §3, RFC 7323 §2.2).
    #[test]
    fn malformed_sack_and_window_scale_lengths() {
        let fix = |mut b: Vec<u8>| {
            b[16..18].fill(0);
            let n = b.len();
            let sum = checksum::accumulate(ip(n as u16).pseudo_header_sum(n as u16), &b);
            b[16..18].copy_from_slice(&checksum::finish(sum).to_be_bytes());
            b
        };
        let r = TcpRepr {
            mss: None,
            sack_permitted: false,
            flags: TcpFlags::ACK,
            sack: SackBlocks::from_slice(&[(1, 2)]),
            ..syn()
        };
        let mut b = reemit(&r);
        b[23] = 11;
        let b = fix(b);
        assert_eq!(TcpRepr::parse(&ip(32), &b), Err(TcpParseError::Malformed));
        let w = TcpRepr {
            mss: None,
            sack_permitted: false,
            window_scale: Some(2),
            ..syn()
        };
        let mut b = reemit(&w);
        b[22] = 4;
        let b = fix(b);
        assert_eq!(TcpRepr::parse(&ip(24), &b), Err(TcpParseError::Malformed));
    }
}
