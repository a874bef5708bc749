//! UDP (RFC 768) as a sans-IO state machine.
//!
//! UDP keeps no state beyond its ports: each message becomes one datagram, sent at once, and
//! each datagram received is delivered as one message. There is no segmentation, so a message
//! larger than the path MTU allows is refused ([`SendError::TooLarge`]); scenario validation
//! catches that before a run starts.

use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent, TransportStats};
use std::collections::VecDeque;
use tpsim_core::SimTime;
use tpsim_wire::UdpRepr;

/// A UDP endpoint bound to (local port, remote port).
#[derive(Debug)]
pub struct UdpSocket {
    cfg: SocketConfig,
    tx: VecDeque<Message>,
    rx: VecDeque<(Message, SimTime)>,
    stats: TransportStats,
}

pub use tpsim_wire::udp::max_message;

impl UdpSocket {
    /// A new endpoint.
    pub fn new(cfg: SocketConfig) -> Self {
        UdpSocket {
            cfg,
            tx: VecDeque::with_capacity(4),
            rx: VecDeque::with_capacity(4),
            stats: TransportStats::default(),
        }
    }

    /// Queues `msg` to be sent as one datagram.
    ///
    /// # Errors
    /// [`SendError::TooLarge`] if the datagram would exceed the MTU.
    pub fn send(&mut self, _now: SimTime, msg: Message) -> Result<(), SendError> {
        let max = max_message(self.cfg.sizes, self.cfg.mtu);
        if msg.len > max {
            return Err(SendError::TooLarge { max });
        }
        self.tx.push_back(msg);
        Ok(())
    }

    /// UDP never blocks a sender: true when `len` fits a datagram.
    pub fn can_send(&self, len: u32) -> bool {
        len <= max_message(self.cfg.sizes, self.cfg.mtu)
    }

    /// Delivers the datagram's message (UDP does no duplicate suppression, RFC 768).
    pub fn on_segment(&mut self, _now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        if let Some(m) = seg.message {
            self.rx.push_back((m, seg.first_tx));
        }
    }

    /// UDP has no timers.
    pub fn on_timeout(&mut self, _now: SimTime) {}

    /// The next datagram to send.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let msg = self.tx.pop_front()?;
        self.stats.tx_segments += 1;
        Some(Segment {
            addr: None,
            header: L4Header::Udp(UdpRepr {
                src_port: self.cfg.local_port,
                dst_port: self.cfg.remote_port,
            }),
            payload_len: msg.len,
            ip_len: self.cfg.sizes.udp_ip_len(msg.len),
            message: Some(msg),
            first_tx: now,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        })
    }

    /// The next delivered message.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.rx
            .pop_front()
            .map(|(message, first_tx)| TransportEvent::Delivered { message, first_tx })
    }

    /// UDP has no timers.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        None
    }

    /// Counters.
    pub fn stats(&self) -> TransportStats {
        self.stats
    }

    /// Messages queued but not yet polled out (zero between engine steps).
    pub fn buffered_messages(&self) -> u64 {
        self.tx.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpsim_wire::{SizeConvention, IPV4_HEADER_LEN, UDP_HEADER_LEN};

    fn sock(sizes: SizeConvention) -> UdpSocket {
        UdpSocket::new(SocketConfig {
            local_port: 5000,
            remote_port: 9,
            sizes,
            mtu: 1500,
            draw_seed: 0,
        })
    }

    #[test]
    fn one_message_one_datagram_with_standard_headers() {
        let mut s = sock(SizeConvention::Standard);
        let m = Message {
            id: 0,
            len: 128,
            created: SimTime(5),
        };
        s.send(SimTime(5), m).unwrap();
        let seg = s.poll_transmit(SimTime(5)).unwrap();
        assert_eq!(seg.ip_len, 128 + UDP_HEADER_LEN + IPV4_HEADER_LEN);
        assert_eq!(seg.message, Some(m));
        assert!(s.poll_transmit(SimTime(5)).is_none());
        assert_eq!(s.stats().tx_segments, 1);
    }

    #[test]
    fn ns2_size_is_the_ip_packet() {
        let mut s = sock(SizeConvention::Ns2);
        s.send(
            SimTime(0),
            Message {
                id: 0,
                len: 128,
                created: SimTime(0),
            },
        )
        .unwrap();
        assert_eq!(s.poll_transmit(SimTime(0)).unwrap().ip_len, 128);
    }

    #[test]
    fn oversized_message_is_refused() {
        let mut s = sock(SizeConvention::Standard);
        let e = s.send(
            SimTime(0),
            Message {
                id: 0,
                len: 1473,
                created: SimTime(0),
            },
        );
        assert_eq!(e, Err(SendError::TooLarge { max: 1472 }));
        assert!(s
            .send(
                SimTime(0),
                Message {
                    id: 1,
                    len: 1472,
                    created: SimTime(0)
                }
            )
            .is_ok());
    }

    #[test]
    fn received_datagram_is_delivered_once() {
        let mut tx = sock(SizeConvention::Standard);
        let mut rx = sock(SizeConvention::Standard);
        let m = Message {
            id: 3,
            len: 10,
            created: SimTime(1),
        };
        tx.send(SimTime(1), m).unwrap();
        let seg = tx.poll_transmit(SimTime(2)).unwrap();
        rx.on_segment(SimTime(9), &seg);
        assert_eq!(
            rx.poll_event(),
            Some(TransportEvent::Delivered {
                message: m,
                first_tx: SimTime(2)
            })
        );
        assert_eq!(rx.poll_event(), None);
        assert_eq!(rx.stats().rx_segments, 1);
    }
}
