//! Point-to-point glue: a link direction serializes one packet at a time at its rate, queues
//! the others (DropTail), loses some to its error model and delivers the rest to the other
//! end after the propagation delay.

use super::{Event, World};
use crate::metrics::DropReason;
use crate::packet::PacketId;
use crate::pkttrace::TraceEvent;
use tpsim_core::SimDuration;

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
        let d = &mut self.links[dev as usize];
        if d.on_wire.is_none() {
            self.start_tx(dev, id);
            return;
        }
        self.metrics.queue_changed(dev, d.queue.len(), &mut d.q_changed, now);
        if let Err(id) = d.queue.push(id) {
            let (node, hop) = self.link_ends(dev);
            self.drop_packet_hop(node, id, DropReason::Queue, hop);
        }
    }

    fn start_tx(&mut self, dev: u32, id: PacketId) {
        self.trace_link(TraceEvent::Dequeue, dev, id);
        let now = self.now;
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
        self.metrics.queue_changed(dev, d.queue.len(), &mut d.q_changed, now);
        let next = d.queue.pop();
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
        if let Some(n) = next {
            self.start_tx(dev, n);
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
                .queue_changed(dev as u32, d.queue.len(), &mut d.q_changed, end);
        }
    }
}
