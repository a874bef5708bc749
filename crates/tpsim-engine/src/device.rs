//! Point-to-point link devices: one per link direction, on its own interface, with a
//! queue discipline (`tpsim_aqm`) and an error model (Bernoulli loss and explicit drop lists). The 802.11
//! device is in [`crate::wifi`].

use crate::packet::PacketId;
use tpsim_core::{RngStream, SimDuration, SimTime};

/// Link error model of one direction: explicit packet indices, then Bernoulli loss.
pub struct ErrorModel {
    /// Loss probability.
    pub loss: f64,
    /// Sorted indices (in transmission order, from 0) of packets to lose.
    pub drop_list: Vec<u64>,
    cursor: usize,
    rng: RngStream,
}

impl ErrorModel {
    /// A model with Bernoulli `loss`, the explicit `drop_list` and its own random stream.
    pub fn new(loss: f64, mut drop_list: Vec<u64>, rng: RngStream) -> Self {
        drop_list.sort_unstable();
        drop_list.dedup();
        ErrorModel {
            loss,
            drop_list,
            cursor: 0,
            rng,
        }
    }

    /// Whether the packet with transmission index `idx` (increasing by one per call) is lost.
    /// The random stream is drawn once per packet whenever `loss > 0`, whatever the drop list
    /// says, so that the Bernoulli draws do not depend on it.
    #[inline]
    pub fn lose(&mut self, idx: u64) -> bool {
        let random = self.loss > 0.0 && self.rng.bernoulli(self.loss);
        while self.cursor < self.drop_list.len() && self.drop_list[self.cursor] < idx {
            self.cursor += 1;
        }
        let listed = self.drop_list.get(self.cursor) == Some(&idx);
        listed || random
    }
}

/// One direction of a full-duplex point-to-point link.
pub struct P2pDevice {
    /// Interface this device belongs to.
    pub iface: u32,
    /// The device at the other end.
    pub peer: u32,
    /// Link index in the scenario.
    pub link: u32,
    /// 0 for the forward direction (`nodes[0]` → `nodes[1]`), 1 for reverse.
    pub direction: u8,
    /// Transmission rate, bit/s.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: SimDuration,
    /// Link framing added to each IP packet, bytes.
    pub framing: u32,
    /// Waiting packets, under the link's queue discipline.
    pub queue: tpsim_aqm::Qdisc,
    /// Packets the discipline handed over, waiting below it for the wire (the link's
    /// `device_queue`), oldest first.
    pub ring: std::collections::VecDeque<PacketId>,
    /// Places in `ring`.
    pub ring_cap: u32,
    /// The packet being serialized, if any.
    pub on_wire: Option<PacketId>,
    /// Error model.
    pub errors: ErrorModel,
    /// Packets that finished serialization (index for the error model).
    pub tx_count: u64,
    /// Index of this link's pcap writer, if traced.
    pub pcap: Option<u32>,
    /// Queue-length integral bookkeeping: last time the length changed.
    pub q_changed: SimTime,
    /// Generation of the transmission on the wire: a fault event that takes the packet off
    /// the wire bumps it, so that the pending end of that transmission is skipped.
    pub tx_gen: u32,
}

impl P2pDevice {
    /// Packets waiting for the wire: in the discipline and in the ring below it.
    pub fn waiting(&self) -> usize {
        self.queue.len() + self.ring.len()
    }

    /// The next packet for the wire: the ring's oldest, else the discipline's next (its
    /// verdicts into `out`).
    pub fn next_for_wire(&mut self, now: tpsim_core::SimTime, out: &mut Vec<tpsim_aqm::Verdict>) -> Option<PacketId> {
        match self.ring.pop_front() {
            Some(id) => Some(id),
            None => self.queue.dequeue(now, out).map(|p| PacketId(p.id)),
        }
    }

    /// Moves packets from the discipline into the ring while it has free places (the
    /// discipline's verdicts into `out`).
    pub fn refill_ring(&mut self, now: tpsim_core::SimTime, out: &mut Vec<tpsim_aqm::Verdict>) {
        while self.ring.len() < self.ring_cap as usize {
            match self.queue.dequeue(now, out) {
                Some(p) => self.ring.push_back(PacketId(p.id)),
                None => break,
            }
        }
    }
}
