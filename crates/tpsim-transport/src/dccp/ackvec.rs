//! The HC-Receiver's record of the packets it received and its Ack Vector (RFC 4340 §11.4).
//!
//! [`AckHistory`] keeps one bit per sequence number from a tail (everything below was either
//! acknowledged-of-acknowledgement or is older than [`HISTORY_LEN`] packets) up to the
//! greatest sequence number received, in a fixed ring: no allocation per packet.
//! [`AckHistory::encode`] writes the Ack Vector from the head down, run-length encoded,
//! stopping at the tail or when [`MAX_ACK_VECTOR_LEN`] bytes are used.

use super::seqwin::{seq_add, seq_between, seq_lt, seq_sub};
use tpsim_wire::dccp::{AckState, AckVector, MAX_ACK_VECTOR_LEN};

/// Packets of history kept (a power of two).
pub const HISTORY_LEN: u64 = 1024;
const WORDS: usize = (HISTORY_LEN / 64) as usize;

/// What [`AckHistory::record`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// First arrival of this sequence number.
    New,
    /// Received before.
    Duplicate,
    /// Below the history's tail: cannot tell (treated as a duplicate, not delivered).
    TooOld,
}

/// Received-packet history of one endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckHistory {
    bits: [u64; WORDS],
    tail: u64,
    head: u64,
    any: bool,
}

impl Default for AckHistory {
    fn default() -> Self {
        AckHistory::new()
    }
}

impl AckHistory {
    /// An empty history.
    pub fn new() -> AckHistory {
        AckHistory {
            bits: [0; WORDS],
            tail: 0,
            head: 0,
            any: false,
        }
    }
    #[inline]
    fn idx(seq: u64) -> (usize, u64) {
        let i = seq & (HISTORY_LEN - 1);
        ((i / 64) as usize, 1u64 << (i % 64))
    }
    #[inline]
    fn get(&self, seq: u64) -> bool {
        let (w, b) = Self::idx(seq);
        self.bits[w] & b != 0
    }
    #[inline]
    fn set(&mut self, seq: u64, v: bool) {
        let (w, b) = Self::idx(seq);
        if v {
            self.bits[w] |= b;
        } else {
            self.bits[w] &= !b;
        }
    }

    /// The greatest sequence number received, if any.
    pub fn head(&self) -> Option<u64> {
        self.any.then_some(self.head)
    }
    /// The lowest sequence number still tracked.
    pub fn tail(&self) -> u64 {
        self.tail
    }
    /// Whether `seq` is tracked and was received.
    pub fn contains(&self, seq: u64) -> bool {
        self.any && seq_between(self.tail, seq, self.head) && self.get(seq)
    }

    /// Records the arrival of `seq`.
    pub fn record(&mut self, seq: u64) -> Arrival {
        if !self.any {
            self.any = true;
            self.head = seq;
            self.tail = seq;
            self.bits = [0; WORDS];
            self.set(seq, true);
            return Arrival::New;
        }
        if seq_lt(self.head, seq) {
            let gap = seq_sub(seq, self.head);
            if gap >= HISTORY_LEN {
                self.bits = [0; WORDS];
                self.tail = seq;
            } else {
                let mut s = seq_add(self.head, 1);
                while s != seq {
                    self.set(s, false);
                    s = seq_add(s, 1);
                }
                if seq_sub(seq, self.tail) >= HISTORY_LEN {
                    self.tail = seq_sub(seq, HISTORY_LEN - 1);
                }
            }
            self.head = seq;
            self.set(seq, true);
            return Arrival::New;
        }
        if seq_lt(seq, self.tail) {
            return Arrival::TooOld;
        }
        if self.get(seq) {
            Arrival::Duplicate
        } else {
            self.set(seq, true);
            Arrival::New
        }
    }

    /// Forgets the packets below `new_tail`, whose state the HC-Sender has acknowledged
    /// receiving (RFC 4340 §11.4.2: an acknowledged Ack Vector need not be repeated). The
    /// head always stays tracked.
    pub fn trim(&mut self, new_tail: u64) {
        if !self.any {
            return;
        }
        let t = if seq_lt(self.head, new_tail) {
            self.head
        } else {
            new_tail
        };
        if seq_lt(self.tail, t) {
            self.tail = t;
        }
    }

    /// The Ack Vector for Acknowledgement Number = head (RFC 4340 §11.4): runs of equal state
    /// from the head down to the tail, at most 64 packets a byte, at most
    /// [`MAX_ACK_VECTOR_LEN`] bytes. Returns it with the lowest sequence number it covers
    /// (`None` if nothing was received).
    pub fn encode(&self) -> Option<(AckVector, u64)> {
        if !self.any {
            return None;
        }
        let mut v = AckVector::EMPTY;
        let total = seq_sub(self.head, self.tail) + 1;
        let mut done = 0u64;
        let mut lowest = self.head;
        while done < total && v.len() < MAX_ACK_VECTOR_LEN {
            let s = seq_sub(self.head, done);
            let got = self.get(s);
            let mut run = 1u64;
            while done + run < total && run < AckVector::MAX_RUN as u64 + 1 && self.get(seq_sub(s, run)) == got {
                run += 1;
            }
            let state = if got { AckState::Received } else { AckState::NotReceived };
            v.push(state, (run - 1) as u8);
            done += run;
            lowest = seq_sub(self.head, done - 1);
        }
        Some((v, lowest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_vector_encodes_runs_from_the_head_rfc4340_s11_4() {
        // §11.4: received 10..=12, 14, 15 (13 missing): head 15, two received (15, 14), one
        // not received (13), three received (12, 11, 10).
        let mut h = AckHistory::new();
        for s in [10, 11, 12, 14, 15] {
            assert_eq!(h.record(s), Arrival::New);
        }
        assert_eq!(h.record(14), Arrival::Duplicate);
        let (v, low) = h.encode().unwrap();
        assert_eq!(v.as_slice(), &[1, 3 << 6, 2]);
        assert_eq!(low, 10);
        assert_eq!(v.covered(), 6);
        for s in 10..=15 {
            let want = if s == 13 {
                AckState::NotReceived
            } else {
                AckState::Received
            };
            assert_eq!(v.state_of(15, s), Some(want));
        }
        // A late 13 fills the hole.
        assert_eq!(h.record(13), Arrival::New);
        assert_eq!(h.encode().unwrap().0.as_slice(), &[5]);
    }

    #[test]
    fn runs_longer_than_64_split_and_trim_drops_acknowledged_state() {
        // §11.4: a run length is 6 bits, so 100 received packets take 64 + 36.
        let mut h = AckHistory::new();
        for s in 0..100 {
            h.record(s);
        }
        assert_eq!(h.encode().unwrap().0.as_slice(), &[63, 35]);
        // §11.4.2: after the sender acknowledged an Ack covering up to 89, only 90..=99 remain.
        h.trim(90);
        assert_eq!(
            h.encode().unwrap(),
            (
                {
                    let mut v = AckVector::EMPTY;
                    v.push(AckState::Received, 9);
                    v
                },
                90
            )
        );
        assert_eq!(h.record(50), Arrival::TooOld);
    }

    #[test]
    fn the_vector_stops_at_its_byte_limit() {
        // Alternate received / lost: one byte per packet, so MAX_ACK_VECTOR_LEN packets.
        let mut h = AckHistory::new();
        for s in (0..200).step_by(2) {
            h.record(s);
        }
        let (v, low) = h.encode().unwrap();
        assert_eq!(v.len(), MAX_ACK_VECTOR_LEN);
        assert_eq!(low, 198 - (MAX_ACK_VECTOR_LEN as u64 - 1));
    }
}
