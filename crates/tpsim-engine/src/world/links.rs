//! Point-to-point glue: a link direction serializes one packet at a time at its rate, queues
//! the others under its queue discipline (DropTail unless the link's `aqm` says otherwise)
//! and in the ring of `device_queue` places below it, loses some to its error model and
//! delivers the rest to the other end after the propagation delay.

use super::{Event, World};
use crate::metrics::DropReason;
use crate::packet::PacketId;
use crate::pkttrace::{Layer, TraceEvent};
use tpsim_aqm::{Qdisc, Reason, Verdict};
use tpsim_core::SimDuration;

/// The drop reason (and mark reason) of a queue discipline's verdict.
fn drop_reason(r: Reason) -> DropReason {
    match r {
        Reason::Overflow => DropReason::Queue,
        Reason::Early => DropReason::AqmEarly,
        Reason::Forced => DropReason::AqmForced,
        Reason::Sojourn => DropReason::AqmSojourn,
    }
}

impl World {
    /// Queues `id` at link device `dev`, or starts sending it if the wire is free.
    pub(super) fn link_enqueue(&mut self, dev: u32, id: PacketId) {
        if let Some(reason) = self.link_dev_down(dev) {
            let (node, hop) = self.link_ends(dev);
            self.drop_packet_hop(node, id, reason, hop);
            return;
        }
        self.trace_link(TraceEvent::Enqueue, dev, id);
        let now = self.now;
        // The wait runs from here until `start_tx` (nothing for a packet sent at once).
        self.packets.enter_queue(id, now);
        let d = &mut self.links[dev as usize];
        if d.on_wire.is_none() && matches!(d.queue, Qdisc::DropTail(_)) {
            // A free wire has an empty DropTail queue and an empty ring behind it: straight out.
            self.start_tx(dev, id);
            return;
        }
        let p = self.packets.get(id);
        // Every other discipline sees every arrival (RED's average, CoDel's state and PIE's
        // burst allowance are kept even on an idle link); the packet leaves at once if the
        // wire is free, or moves into the ring if it has room.
        let pkt = crate::aqm::pkt(&d.queue, id, p, p.seg.ip_len + d.framing);
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        d.queue.enqueue(pkt, now, &mut self.aqm_out);
        let next = if d.on_wire.is_none() {
            d.next_for_wire(now, &mut self.aqm_out)
        } else {
            None
        };
        d.refill_ring(now, &mut self.aqm_out);
        self.link_aqm_verdicts(dev);
        if let Some(id) = next {
            self.start_tx(dev, id);
        }
    }

    /// [`Self::aqm_verdicts`] of link device `dev`'s discipline.
    fn link_aqm_verdicts(&mut self, dev: u32) {
        if !self.aqm_out.is_empty() {
            let (node, hop) = self.link_ends(dev);
            self.aqm_verdicts(dev, node, hop);
        }
    }

    /// Carries out the drops and marks the queue discipline of device `dev` at `node`
    /// (towards `hop`, for the trace) just made: a drop like any other, a mark counted
    /// (`ecn_marks`), traced and written into the packet's IP header; both in the device's
    /// time series.
    pub(super) fn aqm_verdicts(&mut self, dev: u32, node: u32, hop: u32) {
        let mut out = std::mem::take(&mut self.aqm_out);
        for v in out.drain(..) {
            self.metrics
                .queue_verdict(dev, self.now, matches!(v, Verdict::Mark(..)));
            match v {
                Verdict::Drop(p, r) => self.drop_packet_hop(node, PacketId(p.id), drop_reason(r), hop),
                Verdict::Mark(p, r) => {
                    // A queued packet has one holder. The segment's copy of the field is what
                    // the receiving transport reads (RFC 3168 §5: CE in the IP header).
                    let id = PacketId(p.id);
                    let packet = self.packets.get_mut(id);
                    packet.ip.ecn = tpsim_wire::Ecn::Ce;
                    packet.seg.ecn = tpsim_wire::Ecn::Ce;
                    self.metrics.ecn_marked();
                    self.trace_row(
                        TraceEvent::Mark,
                        node,
                        Layer::Link,
                        id,
                        Some(drop_reason(r)),
                        false,
                        hop,
                    );
                }
            }
        }
        self.aqm_out = out;
    }

    fn start_tx(&mut self, dev: u32, id: PacketId) {
        self.trace_link(TraceEvent::Dequeue, dev, id);
        let now = self.now;
        self.packets.leave_queue(id, now);
        let d = &mut self.links[dev as usize];
        let p = self.packets.get(id);
        let bits = (p.seg.ip_len as u64 + d.framing as u64) * 8;
        let tx = SimDuration::serialization(bits, d.rate_bps);
        d.on_wire = Some(id);
        self.metrics.mac_frame();
        if let Some(t) = d.pcap {
            self.pcap.write(t, now, p);
        }
        let gen = d.tx_gen;
        self.queue.push(now + tx, Event::TxEnd { dev, gen });
    }

    /// Link device `dev` finished serializing its packet (unless a fault event took that
    /// packet off the wire: generation `gen` is then stale).
    pub(super) fn on_tx_end(&mut self, dev: u32, gen: u32) {
        let now = self.now;
        let d = &mut self.links[dev as usize];
        if gen != d.tx_gen {
            return;
        }
        let id = d.on_wire.take().expect("TxEnd without a packet on the wire");
        let idx = d.tx_count;
        d.tx_count += 1;
        let lost = d.errors.lose(idx);
        let (peer, delay, link) = (d.peer, d.delay, d.link);
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        let next = d.next_for_wire(now, &mut self.aqm_out);
        d.refill_ring(now, &mut self.aqm_out);
        if lost {
            let (node, hop) = self.link_ends(dev);
            self.drop_packet_hop(node, id, DropReason::LinkError, hop);
        } else {
            let epoch = self.link_epoch(link);
            self.queue.push(
                now + delay,
                Event::Arrive {
                    dev: peer,
                    pkt: id,
                    epoch,
                },
            );
        }
        self.link_aqm_verdicts(dev);
        if let Some(id) = next {
            self.start_tx(dev, id);
        }
    }

    /// A packet that started propagating in the link's epoch `epoch` (see `events.rs`)
    /// reaches the end of the link at device `dev`.
    pub(super) fn on_arrive(&mut self, dev: u32, id: PacketId, epoch: u32) {
        if let Some((reason, at)) = self.arrival_lost(dev, epoch) {
            self.drop_packet(at, id, reason);
            return;
        }
        self.trace_link(TraceEvent::Arrive, dev, id);
        let node = self.net.node_of(self.links[dev as usize].iface);
        self.movie_hop(self.net.node_of(self.links[(dev ^ 1) as usize].iface), node, id);
        self.ip_input(node, id, None);
    }

    /// Every link direction's final queue length is settled into the time series.
    pub(super) fn settle_link_queues(&mut self) {
        let end = self.end_run;
        for (dev, d) in self.links.iter_mut().enumerate() {
            self.metrics
                .queue_changed(dev as u32, d.waiting(), &mut d.q_changed, end);
        }
    }
}
