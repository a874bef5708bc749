//! Stop-and-wait packet by packet, and two endpoints over a path that loses, reorders and
//! duplicates packets (the shared pair harness).

use super::*;
use crate::testkit::{self, SplitMix};
use proptest::prelude::*;
use std::net::Ipv4Addr;

fn cfg(port: u16, peer: u16, sizes: SizeConvention) -> SocketConfig {
    SocketConfig {
        local_port: port,
        remote_port: peer,
        sizes,
        mtu: 1500,
        draw_seed: 0,
    }
}

fn sock() -> StopAndWaitSocket {
    StopAndWaitSocket::new(cfg(5000, 9, SizeConvention::Standard), StopAndWaitConfig::default())
}

fn msg(id: u64, len: u32) -> Message {
    Message {
        id,
        len,
        created: SimTime::ZERO,
    }
}

fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000)
}

fn header(s: &Segment) -> StopAndWaitHeader {
    match s.header {
        L4Header::StopAndWait(h) => h,
        ref h => panic!("not a stop-and-wait packet: {h:?}"),
    }
}

/// The ACK the peer would send for `seq`.
fn ack(seq: u32) -> Segment {
    let peer = StopAndWaitSocket::new(cfg(9, 5000, SizeConvention::Standard), StopAndWaitConfig::default());
    peer.segment(Kind::Ack, seq, None, SimTime::ZERO)
}

#[test]
fn one_message_outstanding_until_its_ack() {
    let mut s = sock();
    s.send(ms(0), msg(0, 100)).unwrap();
    s.send(ms(0), msg(1, 200)).unwrap();
    let d0 = s.poll_transmit(ms(0)).unwrap();
    let h = header(&d0);
    assert_eq!(
        (h.kind, h.seq, h.udp.src_port, h.udp.dst_port),
        (Kind::Data, 0, 5000, 9)
    );
    // IPv4 20 + UDP 8 + this header 8 + 100 bytes of message.
    assert_eq!((d0.ip_len, d0.payload_len, d0.message), (136, 100, Some(msg(0, 100))));
    assert!(
        s.poll_transmit(ms(0)).is_none(),
        "the second message waits for the first's ACK"
    );
    assert_eq!(s.buffered_messages(), 1);
    assert_eq!(s.poll_timeout(), Some(ms(1000)), "RTO.Initial is 1 s (RFC 6298 §2.1)");

    s.on_segment(ms(40), &ack(0));
    let d1 = s.poll_transmit(ms(40)).unwrap();
    assert_eq!((header(&d1).seq, d1.message), (1, Some(msg(1, 200))));
    assert_eq!(s.report().rtt_samples, 1);
    assert_eq!(s.stats().acks_received, 1);
}

#[test]
fn an_ack_of_another_number_releases_nothing() {
    let mut s = sock();
    s.send(ms(0), msg(0, 100)).unwrap();
    s.send(ms(0), msg(1, 100)).unwrap();
    s.poll_transmit(ms(0)).unwrap();
    s.on_segment(ms(10), &ack(7));
    assert!(s.poll_transmit(ms(10)).is_none());
    assert_eq!(s.poll_timeout(), Some(ms(1000)));
}

#[test]
fn timeout_retransmits_the_same_number_with_a_doubled_rto_and_no_rtt_sample() {
    let mut s = sock();
    s.send(ms(0), msg(0, 100)).unwrap();
    let first = s.poll_transmit(ms(0)).unwrap();
    s.on_timeout(ms(999));
    assert!(s.poll_transmit(ms(999)).is_none(), "not before the deadline");
    s.on_timeout(ms(1000));
    let again = s.poll_transmit(ms(1000)).unwrap();
    assert_eq!(header(&again).seq, 0);
    assert_eq!(again.first_tx, first.first_tx, "first transmission time kept");
    assert_eq!(s.poll_timeout(), Some(ms(3000)), "RTO doubled to 2 s (RFC 6298 (5.5))");
    assert_eq!((s.stats().retransmissions, s.report().timeouts), (1, 1));
    s.on_segment(ms(1050), &ack(0));
    assert_eq!(s.report().rtt_samples, 0, "Karn: no sample from a retransmitted packet");
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn rtt_samples_set_the_rto_by_rfc_6298() {
    let sw = StopAndWaitConfig {
        rto_min: SimDuration::from_millis(10),
        ..StopAndWaitConfig::default()
    };
    let mut s = StopAndWaitSocket::new(cfg(5000, 9, SizeConvention::Standard), sw);
    s.send(ms(0), msg(0, 100)).unwrap();
    s.poll_transmit(ms(0)).unwrap();
    s.on_segment(ms(100), &ack(0));
    // First sample R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4·RTTVAR = 300 ms (§2.2).
    assert_eq!(s.report().rto, Some(SimDuration::from_millis(300)));
    assert_eq!(s.ack_sample().srtt_s, Some(0.1));
}

#[test]
fn receiver_delivers_in_order_once_and_acknowledges_duplicates() {
    let mut tx = sock();
    let mut rx = StopAndWaitSocket::new(cfg(9, 5000, SizeConvention::Standard), StopAndWaitConfig::default());
    tx.send(ms(0), msg(0, 100)).unwrap();
    let d0 = tx.poll_transmit(ms(0)).unwrap();
    rx.on_segment(ms(20), &d0);
    rx.on_segment(ms(21), &d0); // a duplicate
    assert_eq!(
        rx.poll_event(),
        Some(TransportEvent::Delivered {
            message: msg(0, 100),
            first_tx: ms(0)
        })
    );
    assert_eq!(rx.poll_event(), None, "the duplicate is not delivered");
    let (a, b) = (rx.poll_transmit(ms(21)).unwrap(), rx.poll_transmit(ms(21)).unwrap());
    for a in [&a, &b] {
        assert_eq!(
            (header(a).kind, header(a).seq, a.ip_len, a.message),
            (Kind::Ack, 0, 36, None)
        );
    }
    assert!(rx.poll_transmit(ms(21)).is_none());
    assert_eq!((rx.stats().ack_segments, rx.stats().rx_segments), (2, 2));
}

#[test]
fn refuses_what_does_not_fit_a_packet_or_the_queue() {
    let mut s = StopAndWaitSocket::new(
        cfg(1, 2, SizeConvention::Standard),
        StopAndWaitConfig {
            send_queue: 2,
            ..StopAndWaitConfig::default()
        },
    );
    // 1500 − 20 − 8 − 8.
    assert_eq!(max_message(SizeConvention::Standard, 1500), 1464);
    assert_eq!(s.send(ms(0), msg(0, 1465)), Err(SendError::TooLarge { max: 1464 }));
    s.send(ms(0), msg(0, 10)).unwrap();
    s.send(ms(0), msg(1, 10)).unwrap();
    assert!(!s.can_send(10));
    assert_eq!(s.send(ms(0), msg(2, 10)), Err(SendError::BufferFull));
    s.poll_transmit(ms(0)).unwrap(); // the first becomes outstanding: room for one more
    assert!(s.can_send(10));
}

#[test]
fn ns2_sizes_count_only_the_header_and_message() {
    let mut s = StopAndWaitSocket::new(cfg(1, 2, SizeConvention::Ns2), StopAndWaitConfig::default());
    s.send(ms(0), msg(0, 128)).unwrap();
    assert_eq!(s.poll_transmit(ms(0)).unwrap().ip_len, 136);
}

#[test]
fn pcap_bytes_carry_the_header_and_a_valid_udp_checksum() {
    let h = StopAndWaitHeader {
        udp: UdpRepr {
            src_port: 0x1234,
            dst_port: 0x5678,
        },
        kind: Kind::Ack,
        seq: 0x0102_0304,
    };
    let ip = Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        protocol: IpProtocol::Udp,
        total_len: 20 + 24,
        ttl: 64,
        ident: 0,
        ecn: tpsim_wire::Ecn::NotEct,
    };
    let mut out = [0xffu8; 24];
    h.emit_zeroed(&ip, &mut out);
    assert_eq!(&out[0..6], &[0x12, 0x34, 0x56, 0x78, 0, 24]);
    assert_eq!(&out[8..16], &[1, 0, 0, 0, 1, 2, 3, 4]);
    assert!(out[16..].iter().all(|&b| b == 0));
    // RFC 768: the sum over the pseudo-header and the datagram, checksum included, is 0xffff.
    let sum = checksum::accumulate(ip.pseudo_header_sum(24), &out);
    assert_eq!(checksum::finish(sum), 0);
    let mut short = [0u8; 15];
    h.emit_zeroed(&ip, &mut short);
    assert_eq!(short, [0; 15], "shorter than both headers: nothing written");
}

/// Two endpoints over a path of 10 ms each way whose packets are lost, duplicated or delayed
/// (reordered) by the given percentages; endpoint 0 sends `n` messages.
struct Pair {
    net: testkit::Pair<StopAndWaitSocket>,
    rng: SplitMix,
    loss: u64,
    dup: u64,
    reorder: u64,
    delivered: Vec<u64>,
}

impl Pair {
    fn pump(&mut self, i: usize) {
        let now = self.net.now;
        while let Some(seg) = self.net.socks[i].poll_transmit(now) {
            let roll = self.rng.percent();
            let base = now + SimDuration::from_millis(10);
            let late = base + SimDuration::from_millis(self.rng.next() % 30);
            if roll < self.loss {
                continue;
            }
            if roll < self.loss + self.dup {
                self.net.push(late, 1 - i, seg.clone(), ());
            }
            let at = if self.rng.percent() < self.reorder { late } else { base };
            self.net.push(at, 1 - i, seg, ());
        }
        while let Some(TransportEvent::Delivered { message, .. }) = self.net.socks[i].poll_event() {
            self.delivered.push(message.id);
        }
    }

    fn run(&mut self, until: SimTime) {
        self.pump(0);
        while let Some(t) = self.net.next_time([]) {
            if t > until {
                break;
            }
            self.net.now = t;
            while let Some(f) = self.net.pop_due() {
                self.net.socks[f.to].on_segment(t, &f.seg);
                self.pump(f.to);
            }
            for i in 0..2 {
                if self.net.timer_due(i) {
                    self.net.socks[i].on_timeout(t);
                    self.pump(i);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(64)))]
    /// Whatever the path loses, duplicates or reorders, every message is delivered exactly
    /// once and in order, and every DATA packet sent is a first transmission or a counted
    /// retransmission.
    #[test]
    fn every_message_once_and_in_order(
        seed in any::<u64>(),
        loss in 0u64..30,
        dup in 0u64..20,
        reorder in 0u64..40,
        n in 1u64..40,
    ) {
        let sw = StopAndWaitConfig { rto_min: SimDuration::from_millis(50), ..StopAndWaitConfig::default() };
        let socks = [
            StopAndWaitSocket::new(cfg(1, 2, SizeConvention::Standard), sw),
            StopAndWaitSocket::new(cfg(2, 1, SizeConvention::Standard), sw),
        ];
        let mut p = Pair { net: testkit::Pair::new(socks), rng: SplitMix(seed), loss, dup, reorder, delivered: Vec::new() };
        for id in 0..n {
            p.net.socks[0].send(SimTime::ZERO, msg(id, 100)).unwrap();
        }
        p.run(SimTime::from_secs_f64(3600.0));
        prop_assert_eq!(&p.delivered, &(0..n).collect::<Vec<_>>());
        let s = p.net.socks[0].stats();
        // Each DATA packet sent is the first transmission of one message or a retransmission.
        prop_assert_eq!(s.tx_segments, n + s.retransmissions);
        prop_assert_eq!(p.net.socks[0].buffered_messages(), 0);
    }
}
