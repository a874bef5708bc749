//! The ns-2 TCP sink agent ([`Sink`]): `TcpSink` / `DelAckSink` (in-order tracking, delivery,
//! cumulative and delayed ACKs).

use super::*;

impl Sink {
    /// `TcpSink::recv` / `DelAckSink::recv` for packet `seqno`, which ends message `ends`.
    pub(super) fn recv(&mut self, io: &mut Io, now: SimTime, seqno: i64, ends: Option<(Message, SimTime)>) {
        self.update(seqno, ends);
        let Some(interval) = io.ns2.delayed_ack else {
            self.ack(io, now, seqno);
            return;
        };
        // `DelAckSink::recv`: hold the ACK of an in-order packet when no ACK is held, unless
        // it fills a gap below a later packet (`RFC2581_immediate_ack_`) or is packet 0
        // (`SYN_immediate_ack_`); otherwise acknowledge at once, which ends any hold.
        if self.delack_at.is_none() && seqno == self.next - 1 && seqno >= self.maxseen && seqno != 0 {
            self.held = Some(seqno);
            self.delack_at = Some(now + interval);
            return;
        }
        self.delack_at = None;
        self.held = None;
        self.ack(io, now, seqno);
    }

    /// `Acker::update`: record the packet (and whether it had arrived before, `is_dup_`) and
    /// deliver every message completed in order.
    pub(super) fn update(&mut self, seqno: i64, ends: Option<(Message, SimTime)>) {
        if seqno > self.maxseen {
            self.maxseen = seqno;
        }
        self.is_dup = seqno < self.next || self.above.contains_key(&seqno);
        if self.is_dup {
            return;
        }
        if seqno > self.next {
            self.above.insert(seqno, ends);
            return;
        }
        self.deliver(ends);
        self.next += 1;
        while let Some(ends) = self.above.remove(&self.next) {
            self.deliver(ends);
            self.next += 1;
        }
    }

    pub(super) fn deliver(&mut self, ends: Option<(Message, SimTime)>) {
        if let Some((message, first_tx)) = ends {
            self.events.push_back(TransportEvent::Delivered { message, first_tx });
        }
    }

    /// `TcpSink::ack` for packet `old_seqno`: an ACK (`packetSize_`, 40 bytes) of the highest
    /// in-order packet; the SACK sink adds its blocks (`Sacker::append_ack`), 8 bytes each,
    /// carried on the wire as byte ranges.
    pub(super) fn ack(&mut self, io: &mut Io, now: SimTime, old_seqno: i64) {
        let ns2 = io.ns2;
        let mut sack = tpsim_wire::tcp::SackBlocks::NONE;
        if ns2.sack_sink() {
            for (l, r) in self.sack_blocks(old_seqno, ns2.sack_blocks()) {
                sack.push((pkt_pos(ns2, l) as u32, pkt_pos(ns2, r) as u32));
            }
        }
        let repr = TcpRepr {
            src_port: io.cfg.local_port,
            dst_port: io.cfg.remote_port,
            seq: 0,
            ack: pkt_pos(ns2, self.next) as u32,
            flags: TcpFlags::ACK,
            window: wire_window(ns2),
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack,
        };
        io.out.push_back(Segment {
            addr: None,
            header: L4Header::Tcp(repr),
            payload_len: 0,
            ip_len: ns2.ack_size + 8 * sack.len() as u32,
            message: None,
            first_tx: now,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        });
        io.stats.tx_segments += 1;
        io.stats.ack_segments += 1;
    }
}
