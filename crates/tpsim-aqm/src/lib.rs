//! tpsim-aqm: queue disciplines as sans-IO state machines.
//!
//! # Read first
//!
//! * S. Floyd, V. Jacobson, "Random Early Detection Gateways for Congestion Avoidance",
//!   IEEE/ACM ToN 1(4):397–413, 1993, and S. Floyd, "Recommendations on using the gentle_
//!   variant of RED", 2000: [`red`].
//! * RFC 8289, Controlled Delay Active Queue Management (CoDel), its §5 pseudo-code: [`codel`].
//! * RFC 8290, The Flow Queue CoDel Packet Scheduler and AQM Algorithm: [`fq_codel`].
//! * RFC 8033, Proportional Integral Controller Enhanced (PIE): [`pie`].
//! * RFC 3168, The Addition of Explicit Congestion Notification (ECN) to IP, §5 and §7: a
//!   discipline with ECN on marks an ECN-capable packet (ECT) Congestion Experienced (CE)
//!   where it would have dropped it early.
//!
//! # Shape
//!
//! A discipline never reads a clock or schedules an event: the engine hands it each arriving
//! packet ([`Qdisc::enqueue`]) and asks for the next one when its transmitter is free
//! ([`Qdisc::dequeue`]), both with the current time. Every drop and mark a call makes is
//! appended to the caller's `out` list as a [`Verdict`] (the arriving packet's own drop
//! included), so that the engine counts, traces and carries out each with its [`Reason`] (a
//! mark: CE in the packet's IP header). Randomness (RED,
//! PIE) comes from the discipline's own stream, given at construction: the same scenario and
//! seed give the same drops.
//!
//! Limits count packets, as `queue = N` does for DropTail; the packet on the wire is not in
//! the queue. Depends only on `tpsim-core`.

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod pie;
pub mod red;

pub use codel::{Codel, CodelConfig};
pub use droptail::DropTail;
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig};

use std::collections::VecDeque;

use tpsim_core::SimTime;

/// A packet as a queue discipline sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pkt {
    /// The engine's handle of the packet.
    pub id: u32,
    /// Its size on the wire, bytes (FQ-CoDel's quantum, the byte backlog).
    pub bytes: u32,
    /// A hash of its flow's 5-tuple (FQ-CoDel takes it modulo its number of queues).
    pub flow: u32,
    /// Whether it is ECN-capable (ECT(0) or ECT(1) in its IP header, RFC 3168 §5).
    pub ect: bool,
    /// Set by a discipline that marked it Congestion Experienced (the `Mark` verdict it
    /// reported at the same time is what the caller acts on).
    pub ce: bool,
}

/// Why a discipline dropped or marked a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The queue was at its limit (DropTail's tail drop; FQ-CoDel's drop from its fattest
    /// queue, RFC 8290 §4.1).
    Overflow,
    /// A random early drop or mark (RED below its forced-drop region, PIE).
    Early,
    /// RED's average queue in its forced-drop region (above `max_th`, or above `2 max_th` in
    /// gentle mode).
    Forced,
    /// CoDel's control law: the sojourn time stayed above target for an interval (RFC 8289 §3).
    Sojourn,
}

/// One drop or mark a discipline made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The packet is gone (it is not queued, or was taken out of the queue).
    Drop(Pkt, Reason),
    /// The packet stays, marked CE.
    Mark(Pkt, Reason),
}

/// A packet in a queue with the time it arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub pkt: Pkt,
    pub at: SimTime,
}

/// The discipline of one link direction or radio interface (an enum rather than a trait
/// object: no dynamic dispatch on the per-packet path).
#[derive(Clone, Debug)]
pub enum Qdisc {
    DropTail(DropTail),
    Red(Red),
    Codel(Codel),
    FqCodel(FqCodel),
    Pie(Pie),
}

macro_rules! each {
    ($self:expr, $q:ident => $e:expr) => {
        match $self {
            Qdisc::DropTail($q) => $e,
            Qdisc::Red($q) => $e,
            Qdisc::Codel($q) => $e,
            Qdisc::FqCodel($q) => $e,
            Qdisc::Pie($q) => $e,
        }
    };
}

impl Qdisc {
    /// The discipline's name in tables and traces (`aqm.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Qdisc::DropTail(_) => "droptail",
            Qdisc::Red(_) => "red",
            Qdisc::Codel(_) => "codel",
            Qdisc::FqCodel(_) => "fq-codel",
            Qdisc::Pie(_) => "pie",
        }
    }

    /// Packet `p` arrives at `now`. It is queued unless `out` receives a `Drop` of it; `out`
    /// also receives any other packet the discipline drops to make room, and a `Mark` if it
    /// marked `p`.
    #[inline]
    pub fn enqueue(&mut self, p: Pkt, now: SimTime, out: &mut Vec<Verdict>) {
        each!(self, q => q.enqueue(p, now, out))
    }

    /// The transmitter is free at `now`: the next packet to send, if any. Packets the
    /// discipline drops on the way (CoDel) go to `out`, as do marks made now.
    #[inline]
    pub fn dequeue(&mut self, now: SimTime, out: &mut Vec<Verdict>) -> Option<Pkt> {
        each!(self, q => q.dequeue(now, out))
    }

    /// Packets waiting.
    #[inline]
    pub fn len(&self) -> usize {
        each!(self, q => q.len())
    }

    /// Whether no packet waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        each!(self, q => q.bytes())
    }

    /// Takes every waiting packet out, without any AQM decision (the interface went down).
    pub fn purge(&mut self, out: &mut Vec<Pkt>) {
        each!(self, q => q.purge(out))
    }

    /// Takes the waiting packets `pred` picks out, in queue order (flow queue by flow queue
    /// for FQ-CoDel), without any AQM decision (routing flushing the packets to a broken next
    /// hop).
    pub fn remove_where(&mut self, pred: impl FnMut(&Pkt) -> bool, out: &mut Vec<Pkt>) {
        each!(self, q => q.remove_where(pred, out))
    }
}

/// Moves the entries of `q` whose packet (`pkt`) `pred` picks to `out`, in queue order.
/// Returns the number of bytes moved.
pub(crate) fn take_where<T>(
    q: &mut VecDeque<T>,
    pkt: impl Fn(&T) -> Pkt,
    pred: &mut impl FnMut(&Pkt) -> bool,
    out: &mut Vec<Pkt>,
) -> u64 {
    let mut bytes = 0;
    q.retain(|e| {
        let p = pkt(e);
        let take = pred(&p);
        if take {
            bytes += u64::from(p.bytes);
            out.push(p);
        }
        !take
    });
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpsim_core::RngStream;

    fn every_kind() -> Vec<Qdisc> {
        let rng = || RngStream::from_seed(1);
        vec![
            Qdisc::DropTail(DropTail::new(100)),
            Qdisc::Red(Red::new(
                RedConfig {
                    limit: 100,
                    ..RedConfig::default()
                },
                rng(),
            )),
            Qdisc::Codel(Codel::new(CodelConfig::default())),
            Qdisc::FqCodel(FqCodel::new(FqCodelConfig::default())),
            Qdisc::Pie(Pie::new(
                PieConfig {
                    limit: 100,
                    ..PieConfig::default()
                },
                rng(),
            )),
        ]
    }

    /// Routing's flush of the packets to a broken next hop: every discipline gives up exactly
    /// the packets picked, keeps its counts right and still serves the rest in order.
    #[test]
    fn remove_where_takes_exactly_the_picked_packets() {
        for mut q in every_kind() {
            let mut out = Vec::new();
            for id in 0..10u32 {
                let p = Pkt {
                    id,
                    bytes: 100 + id,
                    flow: id % 2,
                    ect: false,
                    ce: false,
                };
                q.enqueue(p, SimTime(0), &mut out);
            }
            assert!(out.is_empty(), "{}", q.kind());
            let mut taken = Vec::new();
            q.remove_where(|p| p.id % 2 == 1, &mut taken);
            let ids: Vec<u32> = taken.iter().map(|p| p.id).collect();
            assert_eq!(ids, vec![1, 3, 5, 7, 9], "{}", q.kind());
            assert_eq!((q.len(), q.bytes()), (5, 100 + 102 + 104 + 106 + 108), "{}", q.kind());
            let rest: Vec<u32> = std::iter::from_fn(|| q.dequeue(SimTime(0), &mut out).map(|p| p.id)).collect();
            assert_eq!(rest, vec![0, 2, 4, 6, 8], "{}", q.kind());
            assert!(q.is_empty() && q.bytes() == 0, "{}", q.kind());
        }
    }
}
