//! The FORWARD TSN chunk of PR-SCTP (RFC 3758 §3.2) and the Forward-TSN-Supported parameter
//! of INIT and INIT ACK (RFC 3758 §3.1).

use super::{get16, get32, put16, put32, SctpParseError, CHUNK_HEADER_LEN};

/// Forward-TSN-Supported parameter type (RFC 3758 §3.1): 0xC000, 4 bytes, no value.
pub const PARAM_FORWARD_TSN_SUPPORTED: u16 = 0xc000;
/// Length of the Forward-TSN-Supported parameter, bytes (RFC 3758 §3.1).
pub const FORWARD_TSN_SUPPORTED_LEN: u32 = 4;
/// FORWARD TSN chunk length without Stream/Sequence pairs, bytes (RFC 3758 §3.2).
pub const FORWARD_TSN_CHUNK_LEN: u32 = CHUNK_HEADER_LEN + 4;
/// Stream/Sequence pairs a [`ForwardTsnChunk`] can hold (tpsim's segments are fixed-size
/// values). A sender that skips ordered messages on more streams reports fewer at once, as RFC
/// 3758 §3.5 C4 has it do when the chunk would not fit the MTU.
pub const MAX_FWD_TSN_STREAMS: usize = 8;

/// One Stream/Sequence pair of a FORWARD TSN: the highest Stream Sequence Number skipped on
/// a stream (RFC 3758 §3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SkippedStream {
    /// Stream-N.
    pub stream_id: u16,
    /// Stream Sequence-N: the largest SSN skipped on that stream.
    pub ssn: u16,
}

/// A FORWARD TSN chunk (RFC 3758 §3.2) with at most [`MAX_FWD_TSN_STREAMS`] Stream/Sequence
/// pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ForwardTsnChunk {
    /// New Cumulative TSN: the receiver takes every TSN up to it as received.
    pub new_cum_tsn: u32,
    n: u8,
    streams: [SkippedStream; MAX_FWD_TSN_STREAMS],
}

impl ForwardTsnChunk {
    /// A FORWARD TSN without Stream/Sequence pairs.
    pub fn new(new_cum_tsn: u32) -> ForwardTsnChunk {
        ForwardTsnChunk {
            new_cum_tsn,
            ..ForwardTsnChunk::default()
        }
    }
    /// Appends a Stream/Sequence pair; false (nothing added) when full.
    pub fn push(&mut self, stream_id: u16, ssn: u16) -> bool {
        if self.n as usize == MAX_FWD_TSN_STREAMS {
            return false;
        }
        self.streams[self.n as usize] = SkippedStream { stream_id, ssn };
        self.n += 1;
        true
    }
    /// The Stream/Sequence pairs, in order.
    pub fn streams(&self) -> &[SkippedStream] {
        &self.streams[..self.n as usize]
    }
    /// The chunk's length field, bytes: 8 + 4 per pair.
    pub fn chunk_len(&self) -> u32 {
        FORWARD_TSN_CHUNK_LEN + 4 * self.n as u32
    }
    /// Writes the chunk's value (after its 4-byte header) at the start of `b`.
    pub(super) fn emit_value(&self, b: &mut [u8]) {
        put32(b, self.new_cum_tsn);
        for (k, s) in self.streams().iter().enumerate() {
            put16(&mut b[4 + 4 * k..], s.stream_id);
            put16(&mut b[6 + 4 * k..], s.ssn);
        }
    }
    /// Parses a whole chunk `c` (header included).
    pub(super) fn parse(c: &[u8]) -> Result<ForwardTsnChunk, SctpParseError> {
        let head = FORWARD_TSN_CHUNK_LEN as usize;
        if c.len() < head || !(c.len() - head).is_multiple_of(4) {
            return Err(SctpParseError::Malformed);
        }
        if (c.len() - head) / 4 > MAX_FWD_TSN_STREAMS {
            return Err(SctpParseError::Unsupported);
        }
        let mut f = ForwardTsnChunk::new(get32(&c[4..]));
        for p in c[head..].chunks_exact(4) {
            f.push(get16(p), get16(&p[2..]));
        }
        Ok(f)
    }
}

/// Writes the Forward-TSN-Supported parameter at the start of `b`.
pub(super) fn emit_forward_tsn_param(b: &mut [u8]) {
    put16(b, PARAM_FORWARD_TSN_SUPPORTED);
    put16(&mut b[2..], FORWARD_TSN_SUPPORTED_LEN as u16);
}

#[cfg(test)]
mod tests {
    use super::super::tests::roundtrip;
    use super::super::*;

    /// RFC 3758 §3.2: type 192, flags 0, New Cumulative TSN, then Stream/Sequence pairs.
    #[test]
    fn forward_tsn_layout_matches_rfc3758_3_2() {
        let mut f = ForwardTsnChunk::new(0x0102_0304);
        assert!(f.push(5, 0x0a0b));
        assert!(f.push(0xffff, 0));
        assert_eq!(f.chunk_len(), 16);
        let r = SctpRepr {
            control: Some(ControlChunk::ForwardTsn(f)),
            ..SctpRepr::new(1, 2, 3)
        };
        let b = roundtrip(&r);
        assert_eq!(b.len(), 12 + 16);
        assert_eq!(&b[12..16], &[192, 0, 0, 16]);
        assert_eq!(&b[16..20], &[1, 2, 3, 4]);
        assert_eq!(&b[20..24], &[0, 5, 0x0a, 0x0b]);
        assert_eq!(&b[24..28], &[0xff, 0xff, 0, 0]);
        assert_eq!(ControlChunk::ForwardTsn(f).ns2_chunk_len(), 8);
    }

    /// A FORWARD TSN rides ahead of a SACK and DATA (RFC 3758 §3.5 F2: bundled with DATA).
    #[test]
    fn forward_tsn_bundles_with_sack_and_data() {
        let mut r = SctpRepr {
            control: Some(ControlChunk::ForwardTsn(ForwardTsnChunk::new(77))),
            sack: Some(SackChunk::new(5, 1000)),
            ..SctpRepr::new(1, 2, 3)
        };
        r.data.push(DataChunk {
            flags: DataFlags::WHOLE,
            tsn: 78,
            len: 3,
            ..DataChunk::default()
        });
        assert_eq!(roundtrip(&r).len(), 12 + 8 + 16 + 20);
    }

    #[test]
    fn pairs_are_bounded() {
        let mut f = ForwardTsnChunk::new(1);
        for k in 0..MAX_FWD_TSN_STREAMS as u16 {
            assert!(f.push(k, k));
        }
        assert!(!f.push(99, 99));
        assert_eq!(f.streams().len(), MAX_FWD_TSN_STREAMS);
        roundtrip(&SctpRepr {
            control: Some(ControlChunk::ForwardTsn(f)),
            ..SctpRepr::new(1, 2, 3)
        });
    }

    /// RFC 3758 §3.1: the parameter (type 0xC000, length 4) follows the fixed part of INIT and
    /// the State Cookie of INIT ACK; it adds 4 bytes.
    #[test]
    fn forward_tsn_supported_parameter_in_init_and_init_ack() {
        let i = InitChunk {
            initiate_tag: 9,
            a_rwnd: 1,
            outbound_streams: 2,
            inbound_streams: 3,
            initial_tsn: 4,
            forward_tsn: true,
            addresses: AddrList::default(),
        };
        let b = roundtrip(&SctpRepr {
            control: Some(ControlChunk::Init(i)),
            ..SctpRepr::new(1, 2, 0)
        });
        assert_eq!(&b[12..16], &[1, 0, 0, 24]);
        assert_eq!(&b[32..36], &[0xc0, 0, 0, 4]);
        let b = roundtrip(&SctpRepr {
            control: Some(ControlChunk::InitAck(i, StateCookie([7; STATE_COOKIE_LEN]))),
            ..SctpRepr::new(1, 2, 3)
        });
        assert_eq!(&b[12..16], &[2, 0, 0, 60]);
        assert_eq!(&b[68..72], &[0xc0, 0, 0, 4]);
        // ns-2.35 counts neither (its INIT is 24 bytes either way).
        assert_eq!(ControlChunk::Init(i).ns2_chunk_len(), 24);
        // Another parameter after it cannot be held.
        let mut bad = b.clone();
        bad[68] = 0x80;
        bad[8..12].fill(0);
        let c = checksum(&bad);
        bad[8..12].copy_from_slice(&c.to_le_bytes());
        assert_eq!(SctpRepr::parse(&bad), Err(SctpParseError::Unsupported));
    }
}
