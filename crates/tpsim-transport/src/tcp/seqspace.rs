//! Sequence numbers: 32-bit wrapping on the wire (RFC 9293 §3.4), `u64` offsets inside.
//!
//! Each direction of a connection numbers its octets from its initial sequence number: the
//! SYN is offset 0, stream byte `k` is offset `1 + k`, and the FIN follows the last byte. Inside
//! the socket every sequence number is such an offset, so `<` and `-` mean what they say. A
//! received 32-bit number is mapped back to the offset nearest a reference point that is
//! known to be within 2^31 of it (`snd_una` for acknowledgments, `rcv_nxt` for sequence
//! numbers); windows here are at most 65 535·2^14 bytes (RFC 7323 §2.3), inside that.

/// One direction's sequence space, anchored at its initial sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqSpace {
    /// Initial sequence number (ISS for our direction, IRS for the peer's).
    pub isn: u32,
}

impl SeqSpace {
    /// The 32-bit wire sequence number of offset `off`.
    #[inline]
    pub fn wire(self, off: u64) -> u32 {
        self.isn.wrapping_add(off as u32)
    }

    /// The offset of wire number `wire`, taking the one nearest `reference` (an offset).
    /// `None` if that would lie before the initial sequence number.
    #[inline]
    pub fn offset(self, wire: u32, reference: u64) -> Option<u64> {
        let d = wire.wrapping_sub(self.wire(reference)) as i32 as i64;
        let off = reference as i64 + d;
        (off >= 0).then_some(off as u64)
    }
}

/// Out-of-order data held by the receiver: disjoint, non-adjacent `[start, end)` ranges of
/// sequence offsets above `rcv_nxt`, sorted. Few ranges exist at a time (at most one per hole in
/// the window), and the deque's storage is reused, so the steady state allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Assembler {
    ranges: std::collections::VecDeque<(u64, u64)>,
}

impl Assembler {
    /// Records `[start, end)` as received.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        // First range that ends at or after `start` (it may touch or overlap the new one).
        let i = self.ranges.partition_point(|&(_, e)| e < start);
        let (mut s, mut e) = (start, end);
        while let Some(&(rs, re)) = self.ranges.get(i) {
            if rs > e {
                break;
            }
            s = s.min(rs);
            e = e.max(re);
            self.ranges.remove(i);
        }
        self.ranges.insert(i, (s, e));
    }

    /// Consumes the ranges that start at or below `rcv_nxt` and returns the new `rcv_nxt`.
    pub fn advance(&mut self, mut rcv_nxt: u64) -> u64 {
        while let Some(&(s, e)) = self.ranges.front() {
            if s > rcv_nxt {
                break;
            }
            rcv_nxt = rcv_nxt.max(e);
            self.ranges.pop_front();
        }
        rcv_nxt
    }

    /// The held range containing offset `seq`, if any.
    pub fn range_containing(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// The held ranges, lowest first.
    #[cfg(test)]
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }

    /// Whether no out-of-order data is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Bytes held.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|&(s, e)| e - s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wire_numbers_wrap_around_the_isn() {
        let sp = SeqSpace { isn: u32::MAX - 1 };
        assert_eq!(sp.wire(0), u32::MAX - 1);
        assert_eq!(sp.wire(3), 1);
        assert_eq!(sp.offset(1, 0), Some(3));
        assert_eq!(sp.offset(u32::MAX - 2, 0), None, "before the ISN");
        let big = (1u64 << 32) + 10;
        assert_eq!(sp.offset(sp.wire(big + 5), big), Some(big + 5));
        assert_eq!(sp.offset(sp.wire(big - 5), big), Some(big - 5));
    }

    proptest! {
        /// Any offset within 2^31 of the reference maps back to itself, whatever the ISN.
        #[test]
        fn offset_inverts_wire(isn: u32, reference in 0u64..1 << 40, d in -(1i64 << 30)..(1i64 << 30)) {
            let off = reference as i64 + d;
            prop_assume!(off >= 0);
            let sp = SeqSpace { isn };
            prop_assert_eq!(sp.offset(sp.wire(off as u64), reference), Some(off as u64));
        }

        /// The assembler holds exactly the union of the inserted ranges above `rcv_nxt`.
        #[test]
        fn assembler_matches_a_bitmap(ranges in proptest::collection::vec((0u64..200, 1u64..40), 0..30)) {
            let mut a = Assembler::default();
            let mut bits = [false; 256];
            for &(s, l) in &ranges {
                a.insert(s, s + l);
                for b in &mut bits[s as usize..(s + l) as usize] {
                    *b = true;
                }
            }
            prop_assert_eq!(a.bytes(), bits.iter().filter(|&&b| b).count() as u64);
            let expect_next = bits.iter().position(|&b| !b).unwrap() as u64;
            prop_assert_eq!(a.advance(0), expect_next);
            let rest = bits[expect_next as usize..].iter().filter(|&&b| b).count() as u64;
            prop_assert_eq!(a.bytes(), rest);
        }
    }
}
