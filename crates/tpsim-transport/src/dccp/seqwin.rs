//! 48-bit sequence arithmetic (RFC 4340 §7.1) and the sequence and acknowledgement validity
//! windows (§7.5.1, §7.5.3).

use tpsim_wire::dccp::{DccpType, SEQ_MODULUS};

const MASK: u64 = SEQ_MODULUS - 1;

/// `a + n` modulo 2^48.
#[inline]
pub fn seq_add(a: u64, n: u64) -> u64 {
    a.wrapping_add(n) & MASK
}

/// `a − b` modulo 2^48 (the distance from `b` up to `a`).
#[inline]
pub fn seq_sub(a: u64, b: u64) -> u64 {
    a.wrapping_sub(b) & MASK
}

/// Whether `a` comes before `b` in circular 48-bit order (RFC 4340 §7.1: comparisons are
/// circular, as for TCP).
#[inline]
pub fn seq_lt(a: u64, b: u64) -> bool {
    let d = seq_sub(b, a);
    d != 0 && d < SEQ_MODULUS / 2
}

/// Whether `lo ≤ x ≤ hi` in circular order.
#[inline]
pub fn seq_between(lo: u64, x: u64, hi: u64) -> bool {
    seq_sub(x, lo) <= seq_sub(hi, lo)
}

/// The sequence-number state of a connection (RFC 4340 §7.5.1): ISS/ISR, the greatest
/// sequence numbers sent (GSS) and received (GSR), the greatest acknowledgement number
/// received (GAR), and the Sequence Window W of both directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqWindow {
    /// Initial Sequence Sent.
    pub iss: u64,
    /// Initial Sequence Received (valid once the peer's first packet arrived).
    pub isr: u64,
    /// Greatest Sequence Sent.
    pub gss: u64,
    /// Greatest Sequence Received.
    pub gsr: u64,
    /// Greatest Acknowledgement number Received.
    pub gar: u64,
    /// Sequence Window of the packets we receive (W in SWL/SWH), packets.
    pub w_rx: u64,
    /// Sequence Window of the packets we send (W' in AWL), packets.
    pub w_tx: u64,
}

impl SeqWindow {
    /// A window for a connection whose first packet will be `iss`.
    pub fn new(iss: u64, w: u64) -> SeqWindow {
        SeqWindow {
            iss,
            isr: 0,
            gss: seq_sub(iss, 1),
            gsr: 0,
            gar: iss,
            w_rx: w,
            w_tx: w,
        }
    }
    /// Records the peer's first sequence number (ISR = GSR, RFC 4340 §8.1.2, §8.1.4).
    pub fn set_isr(&mut self, isr: u64) {
        self.isr = isr;
        self.gsr = isr;
    }
    /// The next sequence number to send: GSS + 1, which becomes the new GSS (§7.1: every
    /// packet, Acks included, takes a new number).
    pub fn next_seq(&mut self) -> u64 {
        self.gss = seq_add(self.gss, 1);
        self.gss
    }
    /// SWL = max(GSR + 1 − ⌊W/4⌋, ISR) (RFC 4340 §7.5.1).
    pub fn swl(&self) -> u64 {
        let l = seq_sub(seq_add(self.gsr, 1), self.w_rx / 4);
        if seq_lt(l, self.isr) {
            self.isr
        } else {
            l
        }
    }
    /// SWH = GSR + ⌈3W/4⌉ (RFC 4340 §7.5.1).
    pub fn swh(&self) -> u64 {
        seq_add(self.gsr, (3 * self.w_rx).div_ceil(4))
    }
    /// AWL = max(GSS + 1 − W', ISS) (RFC 4340 §7.5.1).
    pub fn awl(&self) -> u64 {
        let l = seq_sub(seq_add(self.gss, 1), self.w_tx);
        if seq_lt(l, self.iss) {
            self.iss
        } else {
            l
        }
    }
    /// AWH = GSS (RFC 4340 §7.5.1).
    pub fn awh(&self) -> u64 {
        self.gss
    }

    /// The sequence-validity rules of RFC 4340 §7.5.3 for a packet of type `t` with sequence
    /// number `seq` and (if the type has one) acknowledgement number `ack`. Request and
    /// Response are only checked here in states other than LISTEN/REQUEST (the caller skips
    /// them there).
    pub fn valid(&self, t: DccpType, seq: u64, ack: u64) -> bool {
        let seq_ok = match t {
            // §7.5.3: CloseReq, Close and Reset need GSR < seqno <= SWH and GAR <= ackno.
            DccpType::CloseReq | DccpType::Close | DccpType::Reset => {
                seq_lt(self.gsr, seq) && seq_between(self.gsr, seq, self.swh())
            }
            // §7.5.3: Sync and SyncAck only need SWL <= seqno.
            DccpType::Sync | DccpType::SyncAck => !seq_lt(seq, self.swl()),
            _ => seq_between(self.swl(), seq, self.swh()),
        };
        let ack_ok = match t {
            DccpType::Request | DccpType::Data => true,
            DccpType::CloseReq | DccpType::Close | DccpType::Reset => seq_between(self.gar, ack, self.awh()),
            _ => seq_between(self.awl(), ack, self.awh()),
        };
        seq_ok && ack_ok
    }

    /// Takes a valid packet into account: GSR and GAR grow (RFC 4340 §7.5.1: greatest
    /// received).
    pub fn on_valid(&mut self, t: DccpType, seq: u64, ack: u64) {
        if seq_lt(self.gsr, seq) {
            self.gsr = seq;
        }
        if t.has_ack() && seq_lt(self.gar, ack) && seq_between(self.gar, ack, self.gss) {
            self.gar = ack;
        }
    }
}
