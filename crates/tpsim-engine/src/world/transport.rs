//! Transport glue: applications write into endpoints, endpoints' segments go to IP, received
//! segments come back to endpoints, and what endpoints deliver goes to the metrics. Nothing
//! here knows which transport an endpoint runs: every [`tpsim_transport::Socket`] answers the
//! same calls, and byte-stream deliveries are mapped back to messages by
//! [`Sockets`](crate::sockets::Sockets).

use super::{Event, World};
use crate::packet::{Packet, PacketId, NO_CTRL, NO_DIR};
use crate::pkttrace::{Layer, TraceEvent};
use tpsim_transport::Header as _;
use tpsim_transport::Transport as _;
use tpsim_transport::{Message, SendError, TransportEvent};
use tpsim_wire::ip::DEFAULT_TTL;
use tpsim_wire::Ipv4Repr;

impl World {
    /// A generator's send time has come.
    pub(super) fn on_app_send(&mut self, gen: u32) {
        let now = self.now;
        if self.apps.stopped(gen, now) {
            return;
        }
        if self.apps.is_bulk(gen) {
            let ep = self.apps.endpoint(gen);
            self.fill_bulk(gen);
            self.pump(ep);
            return;
        }
        let Some(e) = self.apps.emit(gen, now) else { return };
        if let Some(next) = e.next {
            self.queue.push(next, Event::AppSend { gen });
        }
        self.write(e.ep, e.dir, e.msg);
        self.pump(e.ep);
    }

    /// Hands `msg` to endpoint `ep`'s transport; counts it if accepted (a refused message,
    /// e.g. one that finds a TCP send buffer full, is lost by the application and not counted
    /// as sent). A message an unreliable transport drops because its send queue is full was
    /// sent and is lost: counted as sent, never delivered, and in `send_queue_drops`.
    fn write(&mut self, ep: u32, dir: u32, msg: Message) -> bool {
        let now = self.now;
        let (stream, unordered) = self.sockets.stream_of(ep, msg.id);
        match self.sockets.socket_mut(ep).send_on(now, msg, stream, unordered) {
            Ok(()) => {}
            Err(SendError::QueueFull) => {
                self.metrics.app_sent(dir, now, msg.len);
                self.metrics.send_queue_drop(dir, now);
                return false;
            }
            Err(_) => return false,
        }
        self.metrics.app_sent(dir, now, msg.len);
        self.sockets.note_write(dir, msg);
        true
    }

    /// Lets a bulk generator write while its transport accepts data; true if it wrote.
    fn fill_bulk(&mut self, gen: u32) -> bool {
        let now = self.now;
        let ep = self.apps.endpoint(gen);
        let mut wrote = false;
        while let Some((msg, dir)) = self.apps.bulk_next(gen, now) {
            if !self.sockets.socket(ep).can_send(msg.len) || !self.write(ep, dir, msg) {
                break;
            }
            wrote = true;
            if self.apps.bulk_wrote(gen, msg.len) {
                // The whole transfer is written: close our side once it is sent.
                self.sockets.socket_mut(ep).close(now);
            }
        }
        wrote
    }

    /// An endpoint's deadline fired.
    pub(super) fn on_socket_timer(&mut self, ep: u32, gen: u32) {
        if self.sockets.fire_timer(ep, gen) {
            self.sockets.socket_mut(ep).on_timeout(self.now);
            self.pump(ep);
        }
    }

    /// Moves a transport endpoint's outputs where they belong, in the fixed order
    /// poll_transmit, poll_event, poll_timeout; then lets its bulk sender refill it.
    pub(super) fn pump(&mut self, ep: u32) {
        loop {
            self.pump_once(ep);
            let refilled = match self.sockets.bulk_gen(ep) {
                Some(g) => self.fill_bulk(g),
                None => false,
            };
            if !refilled {
                break;
            }
        }
    }

    fn pump_once(&mut self, ep: u32) {
        let now = self.now;
        let a = self.sockets.addressing(ep);
        while let Some(mut seg) = self.sockets.socket_mut(ep).poll_transmit(now) {
            // Application bytes: a datagram's message, a stream's bytes, a packet of an ns-2
            // agent (SYNs, FINs and pure ACKs carry none).
            let carries_data = seg.payload_len > 0;
            let dir = if carries_data { a.tx_dir } else { NO_DIR };
            if dir != NO_DIR {
                self.sockets.note_transmit(dir, &seg, now);
            }
            // A multi-homed SCTP endpoint chooses the peer address; the source address is then
            // that of the route's interface (RFC 1122 §3.3.4.3). The receiver is told the source.
            let (src, dst) = match seg.addr {
                Some(d) if d != a.remote => (self.source_addr(a.node, d), d),
                _ => (a.local, a.remote),
            };
            seg.addr = Some(src);
            let ip = Ipv4Repr {
                src,
                dst,
                protocol: seg.header.protocol(),
                ttl: DEFAULT_TTL,
                ident: self.net.next_ident(a.node),
                total_len: seg.ip_len.min(u16::MAX as u32) as u16,
                ecn: seg.ecn,
            };
            let seq = if dir != NO_DIR {
                self.metrics.segment_sent(dir, seg.ip_len, now)
            } else {
                0
            };
            let id = self.packets.alloc(Packet {
                ip,
                seg,
                dir,
                seq,
                link_dst: 0,
                ctrl: NO_CTRL,
                queue_ns: 0,
            });
            self.trace(TraceEvent::Send, a.node, Layer::Transport, id, None);
            self.ip_output(a.node, id);
        }
        while let Some(ev) = self.sockets.socket_mut(ep).poll_event() {
            let dir = self.sockets.rx_dir(ep);
            if dir == NO_DIR {
                continue;
            }
            match ev {
                TransportEvent::Delivered { message, first_tx } => self.metrics.delivered(dir, message, first_tx, now),
                TransportEvent::DeliveredBytes { upto } => {
                    while let Some((m, first_tx)) = self.sockets.pop_delivered(dir, upto, now) {
                        self.metrics.delivered(dir, m, first_tx, now);
                    }
                }
                TransportEvent::Connected | TransportEvent::Closed => {}
            }
        }
        if let Some(t) = self.sockets.socket(ep).poll_timeout() {
            if let Some(gen) = self.sockets.arm_timer(ep, t) {
                self.queue.push(t.max(now), Event::SocketTimer { ep, gen });
            }
        }
    }

    /// Segment `id` reached its destination `node`: it goes to the endpoint bound to its port.
    pub(super) fn local_deliver(&mut self, node: u32, id: PacketId) {
        let p = self.packets.get(id);
        let Some(ep) = self.net.endpoint_at(node, p.seg.header.dst_port()) else {
            // No socket bound: not a network drop (cannot happen for validated scenarios).
            self.packets.release(id);
            return;
        };
        let duplicate = p.dir != NO_DIR
            && self
                .metrics
                .segment_received(p.dir, p.seq, p.ip.ttl, p.ip.total_len as u32, p.queue_ns, self.now);
        if p.dir != NO_DIR && !duplicate && self.metrics.tracks_paths(p.dir) {
            // A multi-homed association: which of this node's addresses the data came to.
            let (dir, payload, dst) = (p.dir, p.seg.payload_len, p.ip.dst);
            let k = self.net.addr_index(node, dst).unwrap_or(0);
            self.metrics.path_received(dir, k, payload, self.now);
        }
        self.trace_receive(node, Layer::Transport, id, duplicate);
        if !duplicate {
            self.movie_delivered(id);
        }
        // The segment is read in place, then this holder's reference released.
        let tx_dir = if self.acks.is_some() {
            self.sockets.addressing(ep).tx_dir
        } else {
            NO_DIR
        };
        if tx_dir == NO_DIR {
            self.sockets
                .socket_mut(ep)
                .on_segment(self.now, &self.packets.get(id).seg);
        } else {
            // Per-ACK samples: the data sender's state around the segment.
            let s = self.sockets.socket_mut(ep);
            let before = s.ack_sample();
            s.on_segment(self.now, &self.packets.get(id).seg);
            let after = s.ack_sample();
            if let Some(t) = self.acks.as_mut().filter(|_| self.metrics.after_warmup(self.now)) {
                t.record(self.now, tx_dir, &before, &after);
            }
        }
        self.packets.release(id);
        self.pump(ep);
    }
}
