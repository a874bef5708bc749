//! Packet-by-packet tests: feed an ACK (or a data packet) at an explicit time, then assert
//! exactly what comes out. Expected values are derived by hand from ns-2.35's logic; the
//! derivations are in the comments, with the ns-2 function each step follows.
//!
//! The sender writes 1000-byte messages (one packet each) unless a test says otherwise; packet
//! 0 is the SYN, data packets are numbered from 1.

use super::*;
use crate::tcp::Open;
use tpsim_wire::SizeConvention;

const LOCAL: u16 = 49152;
const REMOTE: u16 = 1024;

fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}
fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}
fn sock_cfg(sizes: SizeConvention) -> SocketConfig {
    SocketConfig {
        local_port: LOCAL,
        remote_port: REMOTE,
        sizes,
        mtu: 1500,
        draw_seed: 0,
    }
}
fn ns2(variant: Ns2Variant) -> Ns2TcpConfig {
    Ns2TcpConfig {
        variant,
        ..Ns2TcpConfig::default()
    }
}
fn msg(id: u64, len: u32, at: SimTime) -> Message {
    Message { id, len, created: at }
}

/// A sender under test.
struct Tx {
    s: Ns2TcpSocket,
    ns2: Ns2TcpConfig,
    next_id: u64,
}

impl Tx {
    fn new(ns2: Ns2TcpConfig) -> Tx {
        Tx::with_sizes(ns2, SizeConvention::Standard)
    }
    fn with_sizes(ns2: Ns2TcpConfig, sizes: SizeConvention) -> Tx {
        Tx {
            s: Ns2TcpSocket::new(sock_cfg(sizes), ns2, Open::Active, SimTime::ZERO),
            ns2,
            next_id: 0,
        }
    }
    /// Writes `n` messages of `len` bytes at `at`; returns the packets sent.
    fn write(&mut self, at: SimTime, n: u32, len: u32) -> Vec<i64> {
        for _ in 0..n {
            let m = msg(self.next_id, len, at);
            self.next_id += 1;
            self.s.send(at, m).unwrap();
        }
        self.sent(at)
    }
    fn segments(&mut self, at: SimTime) -> Vec<Segment> {
        let mut v = vec![];
        while let Some(seg) = self.s.poll_transmit(at) {
            assert!(v.len() < 1000, "runaway");
            v.push(seg);
        }
        v
    }
    /// The packet numbers sent at `at`.
    fn sent(&mut self, at: SimTime) -> Vec<i64> {
        let ns2 = self.ns2;
        self.segments(at).iter().map(|g| pkt_of(&ns2, g)).collect()
    }
    /// The sink's cumulative ACK of packet `n` arrives at `at`; returns the packets sent.
    fn ack(&mut self, at: SimTime, n: i64) -> Vec<i64> {
        let seg = ack_segment(&self.ns2, n);
        self.s.on_segment(at, &seg);
        self.sent(at)
    }
    /// The retransmission timer is due at `at` (asserted); returns the packets sent.
    fn expire(&mut self, at: SimTime) -> Vec<i64> {
        assert_eq!(self.s.poll_timeout(), Some(at), "timer");
        self.s.on_timeout(at);
        self.sent(at)
    }
    fn cwnd(&self) -> f64 {
        self.s.cwnd().unwrap()
    }
    fn ssthresh(&self) -> i64 {
        self.s.ssthresh().unwrap()
    }
    fn padding(&self) -> f64 {
        let r = self.s.report();
        assert_eq!(r.extra[0].0, "padding_bytes");
        r.extra[0].1.unwrap()
    }
}

fn tcp_of(seg: &Segment) -> TcpRepr {
    match &seg.header {
        L4Header::Tcp(h) => *h,
        other => panic!("not TCP: {other:?}"),
    }
}
/// The packet number a sender's segment carries.
fn pkt_of(ns2: &Ns2TcpConfig, seg: &Segment) -> i64 {
    let h = tcp_of(seg);
    if h.flags.contains(TcpFlags::SYN) {
        0
    } else {
        pos_pkt(ns2, h.seq as u64)
    }
}
/// The packet number a sink's ACK acknowledges.
fn ack_of(ns2: &Ns2TcpConfig, seg: &Segment) -> i64 {
    pos_pkt(ns2, tcp_of(seg).ack as u64) - 1
}
/// An ACK of packet `n`, as a sink sends it.
fn ack_segment(ns2: &Ns2TcpConfig, n: i64) -> Segment {
    Segment {
        addr: None,
        header: L4Header::Tcp(TcpRepr {
            src_port: REMOTE,
            dst_port: LOCAL,
            seq: 0,
            ack: pkt_pos(ns2, n + 1) as u32,
            flags: TcpFlags::ACK,
            window: 20000,
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: tpsim_wire::tcp::SackBlocks::NONE,
        }),
        payload_len: 0,
        ip_len: 40,
        message: None,
        first_tx: SimTime::ZERO,
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    }
}
/// Data packet `n` (or the SYN for 0), as a sender sends it, ending `ends` if given.
fn data_segment(ns2: &Ns2TcpConfig, n: i64, ends: Option<Message>, first_tx: SimTime) -> Segment {
    let syn = ns2.syn && n == 0;
    Segment {
        addr: None,
        header: L4Header::Tcp(TcpRepr {
            src_port: LOCAL,
            dst_port: REMOTE,
            seq: pkt_pos(ns2, n) as u32,
            ack: 0,
            flags: if syn { TcpFlags::SYN } else { TcpFlags::ACK },
            window: 20000,
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: tpsim_wire::tcp::SackBlocks::NONE,
        }),
        payload_len: if syn { 0 } else { ns2.packet_size },
        ip_len: if syn { 40 } else { ns2.packet_size + 40 },
        message: ends,
        first_tx,
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    }
}

// ---------------------------------------------------------------------------------------
// Packets and sizes
// ---------------------------------------------------------------------------------------

/// `TcpAgent::output`: the first write sends the 40-byte SYN (packet 0, no payload) and
/// nothing else (`cwnd` 1, `delay_growth_`); its ACK lets two 1040-byte data packets go
/// (`windowInit_` 2). A 2500-byte write is ⌈2500/1000⌉ = 3 packets (`TcpAgent::sendmsg`); the
/// third carries the message, with the time its first packet was sent.
#[test]
fn syn_then_three_1040_byte_packets_for_2500_bytes() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    let m = msg(0, 2500, t(0));
    tx.s.send(t(0), m).unwrap();
    let segs = tx.segments(t(0));
    assert_eq!(segs.len(), 1);
    let syn = segs[0].clone();
    let h = tcp_of(&syn);
    assert_eq!(
        (h.flags, h.seq, h.src_port, h.dst_port),
        (TcpFlags::SYN, 0, LOCAL, REMOTE)
    );
    assert_eq!(
        (syn.ip_len, syn.payload_len, syn.message, syn.stream),
        (40, 0, None, None)
    );
    assert_eq!(tx.cwnd(), 1.0);
    assert_eq!(tx.s.buffered_messages(), 1);
    assert_eq!(tx.s.report().stats.tx_segments, 1);

    tx.s.on_segment(t(100), &ack_segment(&tx.ns2, 0));
    let segs = tx.segments(t(100));
    assert_eq!(segs.len(), 2, "cwnd = windowInit_ = 2 after the SYN's ACK");
    assert_eq!(tx.cwnd(), 2.0);
    for (i, g) in segs.iter().enumerate() {
        let h = tcp_of(g);
        assert_eq!(h.flags, TcpFlags::ACK);
        assert_eq!(
            h.seq,
            1 + 1000 * i as u32,
            "packet {} starts at byte 1 + {}·1000",
            i + 1,
            i
        );
        assert_eq!((g.ip_len, g.payload_len, g.message), (1040, 1000, None));
        assert_eq!(g.first_tx, t(100));
    }
    assert_eq!(tx.s.buffered_messages(), 0);

    // ACK 1: cwnd 3 would allow packets up to 4, but only packet 3 exists.
    tx.s.on_segment(t(200), &ack_segment(&tx.ns2, 1));
    let segs = tx.segments(t(200));
    assert_eq!(segs.len(), 1);
    assert_eq!(pkt_of(&tx.ns2, &segs[0]), 3);
    assert_eq!(segs[0].message, Some(m));
    assert_eq!(
        segs[0].first_tx,
        t(100),
        "the time the message's first packet was first sent"
    );
    assert_eq!(tx.padding(), 500.0, "3·1000 − 2500");
    let r = tx.s.report();
    assert_eq!((r.stats.tx_segments, r.stats.retransmissions), (4, 0));
}

/// A 128-byte write is one full packet: 1040 bytes on the wire under both size conventions
/// (ns-2's own accounting), 872 bytes of padding.
#[test]
fn small_write_is_one_padded_packet_under_both_conventions() {
    for sizes in [SizeConvention::Standard, SizeConvention::Ns2] {
        let mut tx = Tx::with_sizes(ns2(Ns2Variant::Reno), sizes);
        let m = msg(0, 128, t(0));
        tx.s.send(t(0), m).unwrap();
        assert_eq!(tx.sent(t(0)), vec![0]);
        tx.s.on_segment(t(100), &ack_segment(&tx.ns2, 0));
        let segs = tx.segments(t(100));
        assert_eq!(segs.len(), 1);
        assert_eq!((segs[0].ip_len, segs[0].payload_len), (1040, 1000));
        assert_eq!(segs[0].message, Some(m));
        assert_eq!(tx.padding(), 872.0);
    }
}

/// `syn_` false: data packets start at 0, the first write sends `windowInit_` packets at once
/// (`TcpAgent::set_initial_window`), and with `delay_growth_` the ACK of packet 0 resets
/// `cwnd` to `windowInit_` after opening it (`TcpAgent::recv`).
#[test]
fn without_syn_data_starts_at_packet_0_with_the_initial_window() {
    let mut tx = Tx::new(Ns2TcpConfig {
        syn: false,
        ..ns2(Ns2Variant::Tahoe)
    });
    assert_eq!(tx.write(t(0), 5, 1000), vec![0, 1]);
    // Opened to 3, then back to windowInit_ = 2: packet 2 only (packet 1 is outstanding).
    assert_eq!(tx.ack(t(100), 0), vec![2]);
    assert_eq!(tx.cwnd(), 2.0);
    // Next ACK: slow start, cwnd 3 → packets 3, 4.
    assert_eq!(tx.ack(t(200), 1), vec![3, 4]);
}

/// `delay_growth_` false with the SYN: cwnd starts at `windowInit_` = 2, so the SYN and packet
/// 1 leave together, and the SYN's ACK opens the window normally (3).
#[test]
fn without_delay_growth_the_syn_does_not_hold_data_back() {
    let mut tx = Tx::new(Ns2TcpConfig {
        delay_growth: false,
        ..ns2(Ns2Variant::Reno)
    });
    assert_eq!(tx.write(t(0), 5, 1000), vec![0, 1]);
    assert_eq!(tx.ack(t(100), 0), vec![2, 3]);
    assert_eq!(tx.cwnd(), 3.0);
}

// ---------------------------------------------------------------------------------------
// Window growth
// ---------------------------------------------------------------------------------------

/// `cwnd` stays 1 until the SYN is acknowledged, however much is written.
#[test]
fn cwnd_is_one_until_the_syn_is_acknowledged() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    assert_eq!(tx.write(t(0), 10, 1000), vec![0]);
    assert_eq!(tx.write(t(50), 10, 1000), Vec::<i64>::new());
    assert_eq!(tx.cwnd(), 1.0);
    assert_eq!(tx.s.buffered_messages(), 20);
    assert_eq!(tx.ack(t(100), 0), vec![1, 2]);
    assert_eq!(tx.s.buffered_messages(), 18);
}

/// `TcpAgent::opencwnd` in slow start: +1 per new ACK, whatever it acknowledges; the sender
/// fills `highest_ack + cwnd` (`TcpAgent::send_much`).
#[test]
fn slow_start_adds_one_packet_per_ack() {
    let mut tx = Tx::new(ns2(Ns2Variant::Tahoe));
    tx.write(t(0), 40, 1000);
    assert_eq!(tx.ack(t(100), 0), vec![1, 2]); // cwnd 2
    assert_eq!(tx.ack(t(200), 1), vec![3, 4]); // cwnd 3: up to 1 + 3
    assert_eq!(tx.ack(t(200), 2), vec![5, 6]); // cwnd 4: up to 2 + 4
    assert_eq!(tx.ack(t(300), 3), vec![7, 8]); // cwnd 5
                                               // One ACK for three packets still adds one: cwnd 6, up to 6 + 6.
    assert_eq!(tx.ack(t(300), 6), vec![9, 10, 11, 12]);
    assert_eq!(tx.cwnd(), 6.0);
    assert_eq!(tx.ssthresh(), 20, "ssthresh_ starts at window_ (TcpAgent::reset)");
}

/// Congestion avoidance from `cwnd ≥ ssthresh`: +`increase_num_ / cwnd` per new ACK; and
/// `window_` caps what is outstanding although `cwnd` keeps growing.
#[test]
fn congestion_avoidance_and_the_window_cap() {
    let mut tx = Tx::new(Ns2TcpConfig {
        window: 8,
        ..ns2(Ns2Variant::Reno)
    });
    assert_eq!(tx.ssthresh(), 8);
    tx.write(t(0), 100, 1000);
    tx.ack(t(100), 0);
    // cwnd 2 → 8 over six ACKs (slow start: 2 < 8 ... 7 < 8).
    for n in 1..=6 {
        tx.ack(t(100 + 10 * n as u64), n);
    }
    assert_eq!(tx.cwnd(), 8.0);
    // Now cwnd ≥ ssthresh: 8 + 1/8, then + 1/8.125.
    assert_eq!(tx.ack(t(200), 7), vec![15], "7 + min(8.125, 8) = 15");
    assert_eq!(tx.cwnd(), 8.125);
    tx.ack(t(210), 8);
    assert_eq!(tx.cwnd(), 8.125 + 1.0 / 8.125);
    // The cap: never more than window_ = 8 packets past the last ACK.
    for n in 9..60 {
        let sent = tx.ack(t(210 + n as u64), n);
        assert_eq!(sent, vec![n + 8], "after ACK {n}");
    }
    assert!(tx.cwnd() > 8.0 + 50.0 / 12.0, "cwnd grows past window_: {}", tx.cwnd());
}

/// The default window_ = 20 caps a long slow start: 20 packets outstanding at most.
#[test]
fn default_window_of_20_packets() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    tx.write(t(0), 200, 1000);
    tx.ack(t(100), 0);
    let mut max_sent = 2;
    for n in 1..100 {
        for p in tx.ack(t(100 + n as u64), n) {
            assert!(p <= n + 20, "packet {p} after ACK {n}");
            max_sent = max_sent.max(p);
        }
        if n >= 18 {
            assert_eq!(max_sent, n + 20);
        }
    }
}

/// `maxcwnd_` bounds cwnd.
#[test]
fn maxcwnd_bounds_cwnd() {
    let mut tx = Tx::new(Ns2TcpConfig {
        max_cwnd: 4,
        ..ns2(Ns2Variant::Tahoe)
    });
    tx.write(t(0), 40, 1000);
    tx.ack(t(100), 0);
    for n in 1..10 {
        tx.ack(t(100 + n as u64), n);
    }
    assert_eq!(tx.cwnd(), 4.0);
}

// ---------------------------------------------------------------------------------------
// Loss recovery. Common start (`at_cwnd_4`): SYN at 0, its ACK at 100 ms (packets 1, 2),
// ACK 1 and ACK 2 at 200 ms (packets 3..=6): cwnd 4, ssthresh 20, packets 3..=6 outstanding.
// ---------------------------------------------------------------------------------------

fn at_cwnd_4(variant: Ns2Variant) -> Tx {
    let mut tx = Tx::new(ns2(variant));
    assert_eq!(tx.write(t(0), 40, 1000), vec![0]);
    assert_eq!(tx.ack(t(100), 0), vec![1, 2]);
    assert_eq!(tx.ack(t(200), 1), vec![3, 4]);
    assert_eq!(tx.ack(t(200), 2), vec![5, 6]);
    assert_eq!(tx.cwnd(), 4.0);
    tx
}

/// Packet 3 lost. Packets 4, 5 bring duplicate ACKs 1 and 2: limited transmit (`send_one`,
/// `singledup_`) sends 7 (7 ≤ 2 + 4 + 1) and 8 (8 ≤ 2 + 4 + 2). Packet 6 brings the third:
/// Tahoe's `dupack_action` sets ssthresh = ⌊min(4, 20)/2⌋ = 2, cwnd = 1 and goes back to
/// packet 3 (`reset_rtx_timer(0, 0)`), which `send_much` retransmits. Duplicates 4 and 5
/// (packets 7, 8) send nothing (cwnd 1, packet 3 outstanding). The retransmission's ACK 8
/// opens cwnd to 2 (slow start, 1 < 2) and the sender resumes at 9: packets 9, 10.
#[test]
fn tahoe_single_loss() {
    let mut tx = at_cwnd_4(Ns2Variant::Tahoe);
    assert_eq!(tx.ack(t(300), 2), vec![7]);
    assert_eq!(tx.ack(t(300), 2), vec![8]);
    assert_eq!(tx.ack(t(300), 2), vec![3]);
    assert_eq!((tx.cwnd(), tx.ssthresh()), (1.0, 2));
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(400), 8), vec![9, 10]);
    assert_eq!(tx.cwnd(), 2.0);
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 1, 0));
}

/// Packet 3 lost, Reno (`RenoTcpAgent::dupack_action`): at the third duplicate, ssthresh 2,
/// cwnd = min(4, 20)/2 = 2, packet 3 retransmitted, dupwnd_ = 3; window = 2 + 3 = 5 lets
/// nothing new out (9 > 2 + 5). Duplicates 4, 5 inflate it to 6 and 7: packet 9 goes at the
/// fifth (9 ≤ 2 + 7). ACK 8 ends recovery: dupwnd_ 0, cwnd 2 ≥ ssthresh → 2 + 1/2 = 2.5,
/// window 2: packet 10 (10 ≤ 8 + 2).
#[test]
fn reno_single_loss() {
    let mut tx = at_cwnd_4(Ns2Variant::Reno);
    assert_eq!(tx.ack(t(300), 2), vec![7]);
    assert_eq!(tx.ack(t(300), 2), vec![8]);
    assert_eq!(tx.ack(t(300), 2), vec![3]);
    assert_eq!((tx.cwnd(), tx.ssthresh()), (2.0, 2));
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(400), 2), vec![9]);
    assert_eq!(tx.ack(t(400), 8), vec![10]);
    assert_eq!(tx.cwnd(), 2.5);
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 1, 0));
}

/// The same single loss with NewReno: identical (ACK 8 reaches recover_ = 8, a full ACK).
#[test]
fn newreno_single_loss() {
    let mut tx = at_cwnd_4(Ns2Variant::NewReno);
    assert_eq!(tx.ack(t(300), 2), vec![7]);
    assert_eq!(tx.ack(t(300), 2), vec![8]);
    assert_eq!(tx.ack(t(300), 2), vec![3]);
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(400), 2), vec![9]);
    assert_eq!(tx.ack(t(400), 8), vec![10]);
    assert_eq!((tx.cwnd(), tx.ssthresh()), (2.5, 2));
}

/// Packets 3 and 5 lost. Duplicates from 4, 6 send 7, 8 (limited transmit); 7 brings the
/// third: ssthresh 2, cwnd 1, back to 3. Duplicate from 8: nothing. ACK 4 (the retransmitted
/// 3): cwnd 2 (slow start), t_seqno = max(4, 5) = 5: packets 5, 6 (6 needlessly, go-back-N).
/// ACK 8 (5 filled the hole): cwnd 2 + 1/2, t_seqno jumps to 9: packets 9, 10 (window 2).
/// The needless 6 then brings a duplicate ACK 8: limited transmit sends 11 (11 ≤ 8 + 2.5 + 1).
#[test]
fn tahoe_two_losses_in_a_window() {
    let mut tx = at_cwnd_4(Ns2Variant::Tahoe);
    assert_eq!(tx.ack(t(300), 2), vec![7]);
    assert_eq!(tx.ack(t(300), 2), vec![8]);
    assert_eq!(tx.ack(t(400), 2), vec![3]);
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(500), 4), vec![5, 6]);
    assert_eq!(tx.ack(t(600), 8), vec![9, 10]);
    assert_eq!(tx.cwnd(), 2.5);
    assert_eq!(tx.ack(t(600), 8), vec![11]);
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 3, 0));
}

/// Packets 3 and 5 lost, Reno. Third duplicate (from 7): ssthresh 2, cwnd 2, 3 retransmitted,
/// dupwnd_ 3. Duplicate from 8: dupwnd_ 4, window 6, nothing (9 > 8). ACK 4 (retransmitted 3)
/// is new: Reno leaves recovery (dupwnd_ 0, cwnd 2.5), window 2 allows up to 6, nothing new:
/// the sender stalls. The timer, restarted by ACK 4 at 400 ms with the RTO 0.25 s (two samples
/// of 100 ms: srtt 10 ticks, rttvar 5 then 3.75 → ⌊(15·8 + 80)/8⌋ = 25 ticks), expires at
/// 650 ms: `RenoTcpAgent::timeout`, then ssthresh = max(⌊2.5/2⌋, 2) = 2, cwnd 1, backoff 2,
/// back to 5. ACK 8: cwnd 2, packets 9, 10.
#[test]
fn reno_two_losses_in_a_window_needs_a_timeout() {
    let mut tx = at_cwnd_4(Ns2Variant::Reno);
    assert_eq!(tx.ack(t(300), 2), vec![7]);
    assert_eq!(tx.ack(t(300), 2), vec![8]);
    assert_eq!(tx.ack(t(300), 2), vec![3]);
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(400), 4), vec![]);
    assert_eq!(tx.cwnd(), 2.5);
    assert_eq!(tx.s.rto(), Some(ms(250)));
    assert_eq!(tx.expire(t(650)), vec![5]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.s.backoff()), (1.0, 2, Some(2)));
    assert_eq!(tx.s.poll_timeout(), Some(t(1150)), "650 ms + 2·0.25 s");
    assert_eq!(tx.ack(t(750), 8), vec![9, 10]);
    // No RTT sample from the retransmission (Karn): the backoff stays.
    assert_eq!(tx.s.backoff(), Some(2));
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 2, 1));
}

/// Packets 3 and 5 lost, NewReno. As Reno up to the duplicate from 8 (dupwnd_ 4). ACK 4 is
/// partial (4 < recover_ = 8): the timer restarts (first partial ACK), the window deflates by
/// 4 − 2 − 1 = 1 (dupwnd_ 3), 5 is retransmitted, and `send_much(2)` sends 9 (9 ≤ 4 + 2 + 3).
/// ACK 8 is full: dupwnd_ 0, cwnd 2 + 1/2, packet 10. No timeout.
#[test]
fn newreno_two_losses_in_a_window_with_a_partial_ack() {
    let mut tx = at_cwnd_4(Ns2Variant::NewReno);
    assert_eq!(tx.ack(t(300), 2), vec![7]);
    assert_eq!(tx.ack(t(300), 2), vec![8]);
    assert_eq!(tx.ack(t(300), 2), vec![3]);
    assert_eq!(tx.ack(t(400), 2), vec![]);
    assert_eq!(tx.ack(t(400), 4), vec![5, 9]);
    assert_eq!(tx.s.poll_timeout(), Some(t(650)), "restarted by the partial ACK");
    assert_eq!(tx.cwnd(), 2.0, "a partial ACK does not open cwnd");
    assert_eq!(tx.ack(t(500), 8), vec![10]);
    assert_eq!((tx.cwnd(), tx.ssthresh()), (2.5, 2));
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 2, 0));
}

/// `bugfix_ss_`: when only the SYN is acknowledged (highest_ack_ 0 = recover_ 0), the third
/// duplicate ACK of packet 0 still fast-retransmits packet 1; without it, it does not.
#[test]
fn first_data_packet_lost_fast_retransmit_needs_bugfix_ss() {
    for (bugfix_ss, expect) in [(true, vec![1]), (false, vec![])] {
        let mut tx = Tx::new(Ns2TcpConfig {
            bugfix_ss,
            ..ns2(Ns2Variant::NewReno)
        });
        tx.write(t(0), 10, 1000);
        assert_eq!(tx.ack(t(100), 0), vec![1, 2]);
        // Packet 1 lost: 2, 3, 4 bring duplicates of 0; limited transmit sends 3 and 4.
        assert_eq!(tx.ack(t(200), 0), vec![3]);
        assert_eq!(tx.ack(t(200), 0), vec![4]);
        assert_eq!(tx.ack(t(300), 0), expect, "bugfix_ss {bugfix_ss}");
    }
}

/// `bugFix_`: after Reno left recovery on ACK 4 (packets 3 and 5 lost, as above), three more
/// duplicates of 4 do not trigger a second fast retransmit (4 is not above recover_ = 8), and
/// limited transmit finds 9 > 4 + 2.5 + dupacks. Without `bugFix_`, they do: ssthresh
/// max(⌊2.5/2⌋, 2), cwnd 1.25, packet 5 retransmitted.
#[test]
fn bugfix_blocks_a_second_fast_retransmit_in_one_window() {
    for (bug_fix, expect) in [(true, vec![]), (false, vec![5])] {
        let mut tx = Tx::new(Ns2TcpConfig {
            bug_fix,
            ..ns2(Ns2Variant::Reno)
        });
        tx.write(t(0), 40, 1000);
        tx.ack(t(100), 0);
        tx.ack(t(200), 1);
        tx.ack(t(200), 2);
        for _ in 0..3 {
            tx.ack(t(300), 2);
        }
        tx.ack(t(400), 2);
        assert_eq!(tx.ack(t(400), 4), vec![]);
        assert_eq!(tx.ack(t(450), 4), vec![]);
        assert_eq!(tx.ack(t(450), 4), vec![]);
        assert_eq!(tx.ack(t(450), 4), expect, "bugFix_ {bug_fix}");
        let fr = if bug_fix { 1 } else { 2 };
        assert_eq!(tx.s.report().fast_retransmits, fr);
        if !bug_fix {
            assert_eq!((tx.cwnd(), tx.ssthresh()), (1.25, 2));
        }
    }
}

/// `singledup_` 0: no limited transmit; at the third duplicate, the fast retransmit of 3 and,
/// with the inflated window 2 + 3 = 5, packet 7 (7 ≤ 2 + 5) in the same burst.
#[test]
fn without_singledup_early_duplicates_send_nothing() {
    let mut tx = Tx::new(Ns2TcpConfig {
        singledup: false,
        ..ns2(Ns2Variant::NewReno)
    });
    tx.write(t(0), 40, 1000);
    tx.ack(t(100), 0);
    tx.ack(t(200), 1);
    tx.ack(t(200), 2);
    assert_eq!(tx.ack(t(300), 2), vec![]);
    assert_eq!(tx.ack(t(300), 2), vec![]);
    assert_eq!(tx.ack(t(300), 2), vec![3, 7]);
}

// ---------------------------------------------------------------------------------------
// RTT estimator and timer
// ---------------------------------------------------------------------------------------

/// `TcpAgent::rtt_update` with tcpTick_ 10 ms and the tick clock's phase at 0:
/// * the SYN, sent at 0, acknowledged at 104 ms: 10 ticks; srtt = 10 (80 in eighths),
///   rttvar = 10/2 = 5 (20 in quarters); RTO = ⌊(20·8 + 80)/8⌋ = 30 ticks = 0.3 s.
/// * packet 1, sent at 104 ms, acknowledged at 254 ms: the clock ticked at 110, ..., 250 ms:
///   ⌊(150 + 4)/10⌋ = 15 ticks; delta 15 − 10 = 5: srtt 85 (eighths), rttvar += 5 − 5:
///   20; RTO ⌊(160 + 85)/8⌋ = 30 ticks.
/// * packet 3 (the next timed one, sent at 254 ms), acknowledged at 285 ms: ⌊(31 + 4)/10⌋ =
///   3 ticks; delta 3 − 10 = −7: srtt 78; rttvar += 7 − 5: 22; RTO ⌊(176 + 78)/8⌋ = 31 ticks.
///   srtt is ⌊78/8⌋ = 9 ticks.
#[test]
fn rto_from_the_tick_granular_estimator() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    assert_eq!(tx.s.rto(), Some(ms(3000)), "rtxcur_init_");
    assert_eq!(tx.s.report().rto, Some(ms(3000)));
    assert_eq!(tx.s.srtt(), None);
    tx.write(t(0), 10, 1000);
    assert_eq!(tx.s.poll_timeout(), Some(t(3000)));
    assert_eq!(tx.ack(t(104), 0), vec![1, 2]);
    assert_eq!(tx.s.srtt(), Some(ms(100)));
    assert_eq!(tx.s.rto(), Some(ms(300)));
    assert_eq!(tx.s.poll_timeout(), Some(t(404)), "restarted by the new ACK");
    assert_eq!(tx.ack(t(254), 1), vec![3, 4]);
    assert_eq!(tx.s.srtt(), Some(ms(100)));
    assert_eq!(tx.s.rto(), Some(ms(300)));
    // ACK 2 covers no timed packet (3 is timed): no sample.
    tx.ack(t(260), 2);
    assert_eq!(tx.s.report().rtt_samples, 2);
    tx.ack(t(285), 3);
    assert_eq!(tx.s.srtt(), Some(ms(90)));
    assert_eq!(tx.s.rto(), Some(ms(310)));
    let r = tx.s.report();
    assert_eq!(r.rtt_samples, 3);
    assert_eq!(
        r.rtt_sum_ns,
        ms(104 + 150 + 31).0,
        "the samples as measured, before ticks"
    );
    assert_eq!(r.rto, Some(ms(310)));
    assert_eq!(r.congestion[2], ("srtt_s", Some(ms(90).as_secs_f64())));
    assert_eq!(r.congestion[0].0, "cwnd_packets");
    assert_eq!(r.congestion[1], ("ssthresh_packets", Some(20.0)));
}

/// `boot_time_` shifts the tick clock: with the phase at 7 ms, the SYN's 104 ms cross 11
/// ticks (at 3, 13, ..., 103 ms): srtt 11 ticks, RTO ⌊(22·8 + 88)/8⌋ = 33 ticks.
#[test]
fn boot_time_sets_the_tick_phase() {
    let mut tx = Tx::new(Ns2TcpConfig {
        boot_time: ms(7),
        ..ns2(Ns2Variant::NewReno)
    });
    tx.write(t(0), 1, 1000);
    tx.ack(t(104), 0);
    assert_eq!(tx.s.srtt(), Some(ms(110)));
    assert_eq!(tx.s.rto(), Some(ms(330)));
}

/// `minrto_` applies before the backoff (`rtt_timeout` with `rfc2988_`): a 20 ms RTT gives
/// srtt 2, rttvar 1 tick, RTO 6 ticks = 60 ms → 0.2 s; a timeout doubles that to 0.4 s.
#[test]
fn min_rto_then_backoff() {
    let mut tx = Tx::new(ns2(Ns2Variant::Tahoe));
    tx.write(t(0), 10, 1000);
    assert_eq!(tx.ack(t(20), 0), vec![1, 2]);
    assert_eq!(tx.s.rto(), Some(ms(200)));
    assert_eq!(tx.s.report().rto, Some(ms(200)));
    assert_eq!(tx.expire(t(220)), vec![1], "both lost: back to packet 1");
    assert_eq!(tx.s.rto(), Some(ms(400)));
    assert_eq!(tx.s.report().rto, Some(ms(200)), "report: without backoff");
    // ssthresh = max(⌊2/2⌋, 2), cwnd 1.
    assert_eq!((tx.cwnd(), tx.ssthresh()), (1.0, 2));
    assert_eq!(tx.s.report().timeouts, 1);
    // Lost again: the RTO doubles again (0.2 s · 4), packet 1 once more.
    assert_eq!(tx.expire(t(620)), vec![1]);
    assert_eq!((tx.s.backoff(), tx.s.rto()), (Some(4), Some(ms(800))));
    assert_eq!(tx.s.poll_timeout(), Some(t(1420)));
    // Its ACK gives no sample (Karn): packet 1 was sent before. Packet 3, new, is timed.
    assert_eq!(tx.ack(t(1500), 1), vec![2, 3]);
    assert_eq!(tx.s.backoff(), Some(4));
    tx.ack(t(1520), 3);
    assert_eq!(tx.s.backoff(), Some(1), "a valid sample ends the backoff");
    let r = tx.s.report();
    assert_eq!((r.timeouts, r.stats.retransmissions, r.rtt_samples), (2, 3, 2));
}

/// The SYN lost again and again (`TcpAgent::timeout`, `rtt_backoff`): RTO 3 s, then doubled
/// at each expiry: 6, 12, 24, 48, then capped at maxrto_ 60 s; the backoff stops doubling at
/// 64 once the RTO has reached maxrto_. Each expiry resends the SYN, sets ssthresh 2 and drops
/// the initial window to 1 (`bugfix_ss_`). When the SYN's ACK finally arrives it gives no RTT
/// sample (Karn), so the backoff stays, and cwnd is the lowered initial window: one packet.
#[test]
fn repeated_syn_timeouts_back_off_to_maxrto() {
    let mut tx = Tx::new(ns2(Ns2Variant::Reno));
    assert_eq!(tx.write(t(0), 10, 1000), vec![0]);
    let mut at = 3_000;
    let mut expect_backoff = 1;
    for (i, next) in [6_000u64, 12_000, 24_000, 48_000, 60_000, 60_000, 60_000, 60_000]
        .iter()
        .enumerate()
    {
        assert_eq!(tx.expire(t(at)), vec![0], "expiry {i} at {at} ms");
        expect_backoff = (expect_backoff * 2).min(64);
        assert_eq!(tx.s.backoff(), Some(expect_backoff));
        assert_eq!(tx.s.rto(), Some(ms(*next)));
        assert_eq!((tx.cwnd(), tx.ssthresh()), (1.0, 2));
        at += next;
    }
    let r = tx.s.report();
    assert_eq!((r.timeouts, r.stats.retransmissions, r.stats.tx_segments), (8, 8, 9));
    assert_eq!(tx.ack(t(at - 59_000), 0), vec![1]);
    assert_eq!(tx.cwnd(), 1.0, "windowInit_ lowered to 1");
    assert_eq!(tx.s.backoff(), Some(64));
    assert_eq!(tx.s.report().rtt_samples, 0);
    // Packet 1 is timed: its ACK samples the RTT and ends the backoff.
    tx.ack(t(at - 58_900), 1);
    assert_eq!(tx.s.backoff(), Some(1));
    assert_eq!(tx.s.srtt(), Some(ms(100)));
}

/// Slow-start restart (`slow_start_restart_`, `restart_bugfix_`): once everything is
/// acknowledged the timer keeps running (`newtimer`); its expiry with nothing outstanding sets
/// cwnd 1 without halving ssthresh, backing off or counting a timeout, and re-arms it.
#[test]
fn idle_timer_restarts_slow_start() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    tx.write(t(0), 6, 1000);
    tx.ack(t(100), 0); // 1, 2; RTO 0.3 s
    tx.ack(t(200), 1); // cwnd 3: 3, 4
    tx.ack(t(200), 2); // cwnd 4: 5, 6
                       // Third sample, 10 ticks again: rttvar 15 → 15 − ⌊15/4⌋ = 12, RTO ⌊(96 + 80)/8⌋ = 22 ticks.
    tx.ack(t(300), 6); // cwnd 5, all acknowledged
    assert_eq!(tx.cwnd(), 5.0);
    assert_eq!(tx.s.rto(), Some(ms(220)));
    assert_eq!(tx.expire(t(520)), vec![]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.s.backoff()), (1.0, 20, Some(1)));
    assert_eq!(tx.s.report().timeouts, 0);
    assert_eq!(tx.s.poll_timeout(), Some(t(740)));
    assert_eq!(tx.write(t(600), 3, 1000), vec![7], "one packet after the restart");

    // Without slow_start_restart_ the idle expiry leaves cwnd alone.
    let mut tx = Tx::new(Ns2TcpConfig {
        slow_start_restart: false,
        ..ns2(Ns2Variant::NewReno)
    });
    tx.write(t(0), 2, 1000);
    tx.ack(t(100), 0);
    tx.ack(t(200), 2);
    assert_eq!(tx.cwnd(), 3.0);
    tx.expire(t(450));
    assert_eq!(tx.cwnd(), 3.0);
}

/// A bulk writer is told to wait once more than `window_` packets are unsent; `send` itself
/// never refuses.
#[test]
fn can_send_keeps_a_window_of_unsent_packets() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    let mut n = 0;
    while tx.s.can_send(1000) {
        tx.s.send(t(0), msg(n, 1000, t(0))).unwrap();
        n += 1;
        assert!(n < 100);
    }
    // The SYN went out; 21 data packets unsent.
    assert_eq!(n, 21);
    assert!(tx.s.send(t(0), msg(n, 100_000, t(0))).is_ok());
    let mut rx = Ns2TcpSocket::new(sock_cfg(SizeConvention::Standard), tx.ns2, Open::Passive, t(0));
    assert!(!rx.can_send(10));
    assert_eq!(rx.send(t(0), msg(0, 10, t(0))), Err(SendError::BufferFull));
}

// ---------------------------------------------------------------------------------------
// Sinks
// ---------------------------------------------------------------------------------------

struct Rx {
    s: Ns2TcpSocket,
    ns2: Ns2TcpConfig,
}

impl Rx {
    fn new(delayed_ack: Option<SimDuration>) -> Rx {
        let ns2 = Ns2TcpConfig {
            delayed_ack,
            ..Ns2TcpConfig::default()
        };
        Rx {
            s: Ns2TcpSocket::new(sock_cfg(SizeConvention::Standard), ns2, Open::Passive, SimTime::ZERO),
            ns2,
        }
    }
    /// Packet `n` (ending message `ends`) arrives at `at`; returns the ACKs sent.
    fn data(&mut self, at: SimTime, n: i64, ends: Option<Message>) -> Vec<i64> {
        let seg = data_segment(&self.ns2, n, ends, t(1));
        self.s.on_segment(at, &seg);
        self.acks(at)
    }
    fn acks(&mut self, at: SimTime) -> Vec<i64> {
        let mut v = vec![];
        while let Some(seg) = self.s.poll_transmit(at) {
            assert_eq!((seg.ip_len, seg.payload_len, seg.message), (40, 0, None));
            let h = tcp_of(&seg);
            assert_eq!((h.flags, h.src_port, h.dst_port), (TcpFlags::ACK, LOCAL, REMOTE));
            v.push(ack_of(&self.ns2, &seg));
        }
        v
    }
    fn delivered(&mut self) -> Vec<u64> {
        let mut v = vec![];
        while let Some(ev) = self.s.poll_event() {
            match ev {
                TransportEvent::Delivered { message, first_tx } => {
                    assert_eq!(first_tx, t(1));
                    v.push(message.id);
                }
                other => panic!("{other:?}"),
            }
        }
        v
    }
}

/// `TcpSink::recv`: one 40-byte ACK per packet, in order or not, duplicate or not, carrying
/// the highest in-order packet; a message is delivered once all its packets are in order, and
/// once only.
#[test]
fn tcpsink_acks_every_packet_and_delivers_messages_in_order() {
    let mut rx = Rx::new(None);
    let m = |id| Some(msg(id, 1500, t(0)));
    assert_eq!(rx.data(t(0), 0, None), vec![0], "the SYN");
    assert_eq!(rx.data(t(10), 1, None), vec![1]);
    assert_eq!(rx.delivered(), Vec::<u64>::new(), "message 0 is packets 1 and 2");
    assert_eq!(rx.data(t(20), 3, None), vec![1], "out of order: duplicate ACK");
    assert_eq!(rx.data(t(30), 4, m(1)), vec![1]);
    assert_eq!(rx.delivered(), Vec::<u64>::new());
    assert_eq!(rx.data(t(40), 2, m(0)), vec![4], "the hole filled: both messages");
    assert_eq!(rx.delivered(), vec![0, 1]);
    assert_eq!(
        rx.data(t(50), 4, m(1)),
        vec![4],
        "duplicate: ACKed, not delivered again"
    );
    assert_eq!(rx.data(t(50), 0, None), vec![4], "a duplicate SYN");
    assert_eq!(rx.delivered(), Vec::<u64>::new());
    let r = rx.s.report();
    assert_eq!(
        (r.stats.ack_segments, r.stats.tx_segments, r.stats.rx_segments),
        (7, 7, 7)
    );
    assert_eq!(r.rto, None);
    assert!(r.congestion.is_empty() && r.extra.is_empty());
    assert_eq!(rx.s.poll_timeout(), None);
}

/// `DelAckSink::recv` with interval_ 100 ms:
/// * the SYN (packet 0) is acknowledged at once (`SYN_immediate_ack_`);
/// * packet 1, in order: held, timer at 110 ms; packet 2 at 20 ms: ACK 2 at once (a second
///   packet while one is held), timer off;
/// * packet 3 at 30 ms: held; the timer expires at 130 ms: ACK 3;
/// * packet 5 at 140 ms (out of order): duplicate ACK 3 at once;
/// * packet 4 at 150 ms fills the hole: ACK 5 at once (in-order highest is not the packet);
/// * packet 6 at 160 ms, in order and above everything: held; packet 8 at 170 ms, out of order:
///   ACK 6 at once, which also ends the hold;
/// * packet 7 at 180 ms fills the gap below 8: ACK 8 at once (the in-order highest, 8, is not
///   the packet received);
/// * packet 11 at 190 ms: duplicate ACK 8 at once; packet 9 at 200 ms is in order and the
///   highest in order, but below packet 11: ACK 9 at once (`RFC2581_immediate_ack_`);
/// * packet 10 at 210 ms: ACK 11; packet 12 at 220 ms: held until 320 ms.
#[test]
fn delack_sink_timing() {
    let mut rx = Rx::new(Some(Ns2TcpConfig::DELACK_INTERVAL));
    assert_eq!(rx.data(t(0), 0, None), vec![0]);
    assert_eq!(rx.s.poll_timeout(), None);
    assert_eq!(rx.data(t(10), 1, None), vec![]);
    assert_eq!(rx.s.poll_timeout(), Some(t(110)));
    assert_eq!(rx.data(t(20), 2, None), vec![2]);
    assert_eq!(rx.s.poll_timeout(), None);
    assert_eq!(rx.data(t(30), 3, None), vec![]);
    assert_eq!(rx.s.poll_timeout(), Some(t(130)));
    rx.s.on_timeout(t(129));
    assert_eq!(rx.acks(t(129)), vec![], "not due yet");
    rx.s.on_timeout(t(130));
    assert_eq!(rx.acks(t(130)), vec![3]);
    assert_eq!(rx.s.poll_timeout(), None);
    assert_eq!(rx.data(t(140), 5, None), vec![3]);
    assert_eq!(rx.data(t(150), 4, None), vec![5]);
    assert_eq!(rx.data(t(160), 6, None), vec![]);
    assert_eq!(rx.data(t(170), 8, None), vec![6]);
    assert_eq!(rx.s.poll_timeout(), None);
    assert_eq!(rx.data(t(180), 7, None), vec![8]);
    assert_eq!(rx.data(t(190), 11, None), vec![8]);
    assert_eq!(rx.data(t(200), 9, None), vec![9]);
    assert_eq!(rx.data(t(210), 10, None), vec![11]);
    assert_eq!(rx.data(t(220), 12, None), vec![]);
    assert_eq!(rx.s.poll_timeout(), Some(t(320)));
    rx.s.on_timeout(t(320));
    assert_eq!(rx.acks(t(320)), vec![12]);
    assert_eq!(rx.s.report().stats.ack_segments, 11);
}

/// The wire numbering survives the 32-bit wrap of TCP sequence numbers (4.3 M packets of 1000
/// bytes): positions are unwrapped around the expected packet.
#[test]
fn sequence_numbers_unwrap_past_four_gigabytes() {
    let ns2 = Ns2TcpConfig::default();
    for n in [4_294_967i64, 4_294_968, 4_294_969, 10_000_000] {
        let pos = pkt_pos(&ns2, n);
        let wire = pos as u32;
        assert_eq!(pos_pkt(&ns2, unwrap(wire, pkt_pos(&ns2, n - 3))), n);
        assert_eq!(pos_pkt(&ns2, unwrap(wire, pkt_pos(&ns2, n + 3))), n);
    }
    assert_eq!(unwrap(5, 0), 5);
    assert_eq!(unwrap(u32::MAX, 0), u32::MAX as u64, "no negative positions");
}

// ---------------------------------------------------------------------------------------
// Sack1 (`Agent/TCP/Sack1` with `Agent/TCPSink/Sack1`)
// ---------------------------------------------------------------------------------------

/// An ACK of packet `n` carrying the SACK blocks `blocks` (packet ranges `[left, right)`),
/// as the SACK sink sends it: 40 bytes plus 8 per block.
fn sack_segment(ns2: &Ns2TcpConfig, n: i64, blocks: &[(i64, i64)]) -> Segment {
    let mut seg = ack_segment(ns2, n);
    let L4Header::Tcp(h) = &mut seg.header else {
        unreachable!()
    };
    for &(l, r) in blocks {
        assert!(h.sack.push((pkt_pos(ns2, l) as u32, pkt_pos(ns2, r) as u32)));
    }
    seg.ip_len = 40 + 8 * blocks.len() as u32;
    seg
}

/// The SACK blocks of a sink's ACK, as packet ranges.
fn sack_of(ns2: &Ns2TcpConfig, seg: &Segment) -> Vec<(i64, i64)> {
    let h = tcp_of(seg);
    h.sack
        .as_slice()
        .iter()
        .map(|&(l, r)| (pos_pkt(ns2, l as u64), pos_pkt(ns2, r as u64)))
        .collect()
}

impl Tx {
    /// An ACK of packet `n` with SACK blocks arrives at `at`; returns the packets sent.
    fn sack(&mut self, at: SimTime, n: i64, blocks: &[(i64, i64)]) -> Vec<i64> {
        let seg = sack_segment(&self.ns2, n, blocks);
        self.s.on_segment(at, &seg);
        self.sent(at)
    }
    fn sender(&self) -> &Sender {
        self.s.sender().unwrap()
    }
    /// `pipe_`, and whether the sender is in fast recovery (`fastrecov_`).
    fn pipe(&self) -> (i64, bool) {
        (self.sender().pipe, self.sender().fastrecov)
    }
}

/// Packet 3 lost (from `at_cwnd_4`: packets 3..=6 outstanding, cwnd 4).
/// * Packets 4 and 5 bring ACK 2 with SACK [4,5), then [4,6): each changes the scoreboard
///   (`ScoreBoard::UpdateScoreBoard`, `CheckUpdate`), so each is a duplicate ACK; limited
///   transmit (`send_one`) sends 7 (7 ≤ 2 + 4 + 1), then 8 (8 ≤ 2 + 4 + 2).
/// * Packet 6 brings the third, [4,7): `Sack1TcpAgent::dupack_action`: recover_ = maxseq_ =
///   8, pipe_ = 8 − 2 − 3 = 3, ssthresh = ⌊4/2⌋ = 2, cwnd 2, packet 3 retransmitted (and
///   marked, `MarkRetran`).
/// * Packet 7: ACK 2, [4,8): pipe_ 2, not below cwnd 2: nothing. Packet 8: [4,9): pipe_ 1:
///   `send_much` finds no hole with a SACKed block above it (`GetNextRetran`: the search
///   starts past 3, inside [4,9), whose end 9 has nothing above), so new data: packet 9
///   (pipe_ 2).
/// * The retransmitted 3 brings ACK 8 ≥ recover_: recovery ends (`newack`: cwnd stays 2,
///   unlike NewReno's 2.5), the scoreboard clears, and the window allows 10 (10 ≤ 8 + 2).
#[test]
fn sack1_single_loss() {
    let mut tx = at_cwnd_4(Ns2Variant::Sack1);
    assert_eq!(tx.sack(t(300), 2, &[(4, 5)]), vec![7]);
    assert_eq!(tx.sack(t(300), 2, &[(4, 6)]), vec![8]);
    // Outside recovery pipe_ only counts what `send_much` sent (from −1: the SYN and 1..=6),
    // and is not used.
    assert_eq!(tx.pipe(), (6, false));
    assert_eq!(tx.sack(t(300), 2, &[(4, 7)]), vec![3]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.pipe()), (2.0, 2, (3, true)));
    assert_eq!(tx.sack(t(400), 2, &[(4, 8)]), vec![]);
    assert_eq!(tx.sack(t(400), 2, &[(4, 9)]), vec![9]);
    assert_eq!(tx.pipe(), (2, true));
    assert_eq!(tx.ack(t(400), 8), vec![10]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.pipe().1), (2.0, 2, false));
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 1, 0));
}

/// Duplicate ACKs without new SACK information are not counted (`CheckUpdate` false): three
/// plain ACKs of 2 send nothing (no limited transmit, no fast retransmit), and only ACKs whose
/// blocks change the scoreboard count. A block already known changes nothing either.
#[test]
fn sack1_counts_only_duplicates_with_new_sack_information() {
    let mut tx = at_cwnd_4(Ns2Variant::Sack1);
    for _ in 0..3 {
        assert_eq!(tx.ack(t(300), 2), vec![]);
    }
    assert_eq!(tx.sack(t(300), 2, &[(4, 5)]), vec![7], "the first counted duplicate");
    assert_eq!(tx.sack(t(300), 2, &[(4, 5)]), vec![], "nothing new");
    assert_eq!(tx.sack(t(300), 2, &[(4, 6)]), vec![8]);
    assert_eq!(tx.sack(t(300), 2, &[(4, 7)]), vec![3]);
    assert_eq!(tx.s.report().fast_retransmits, 1);
}

/// The window of `at_cwnd_14`: SYN; ACK 0 → 1, 2; ACKs 1, 2 → 3..=6; ACKs 3..=6 → 7..=14;
/// ACKs 7..=12 (one by one, +1 each, slow start) → 15..=26. Now cwnd 14 and packets
/// 13..=26 outstanding.
fn at_cwnd_14() -> Tx {
    let mut tx = Tx::new(ns2(Ns2Variant::Sack1));
    assert_eq!(tx.write(t(0), 60, 1000), vec![0]);
    assert_eq!(tx.ack(t(100), 0), vec![1, 2]);
    let mut sent = vec![];
    for n in 1..=2 {
        sent.extend(tx.ack(t(200), n));
    }
    for n in 3..=6 {
        sent.extend(tx.ack(t(300), n));
    }
    for n in 7..=12 {
        sent.extend(tx.ack(t(400), n));
    }
    assert_eq!(sent, (3..=26).collect::<Vec<_>>());
    assert_eq!((tx.cwnd(), tx.ssthresh()), (14.0, 20));
    tx
}

/// Packets 13, 16 and 19 lost from the window 13..=26: all three are resent within the
/// burst of duplicate ACKs and recovery ends one RTT (100 ms) after it began, without a
/// timeout (NewReno resends one hole per RTT).
/// * At 500 ms the sink's ACKs of 12 arrive for 14, 15, 17, 18, 20, ..., 26, each with its
///   blocks (most recent first, at most 3). 14 and 15 are duplicates 1 and 2: limited
///   transmit sends 27 (27 ≤ 12 + 14 + 1) and 28.
/// * 17 (blocks [17,18), [14,16)) is the third: recover_ = 28, pipe_ = 28 − 12 − 3 = 13,
///   ssthresh = cwnd = 14/2 = 7; 13 resent.
/// * 18, 20, ..., 24 take pipe_ down to 7 (each ACK in recovery removes one): nothing.
/// * 25: pipe_ 6 < 7: the scoreboard's next hole from h_seqno_ 14 is 16 (the end of block
///   [14,16), with blocks above it); pipe_ 7. 26: pipe_ 6: the next hole from 17 is 19.
/// * At 600 ms: 27 and 28 arrive: ACK 12, pipe_ 6, no hole left with a block above it
///   (`GetNextRetran`), so new data: 29, then 30 (29 ≤ 12 + window_ 20).
/// * The resent 13 gives ACK 15 (partial, < recover_ 28): highest_ack_ 15, the scoreboard
///   drops [14,16), pipe_ 7 − 1 − 1 = 5 (a partial ACK takes a second packet out of pipe_):
///   31, 32. The resent 16 gives ACK 18: 33, 34. The resent 19 gives ACK 28 ≥ recover_:
///   recovery over, cwnd 7, and the window allows 35 (35 ≤ 28 + 7).
#[test]
fn sack1_three_losses_in_one_window_recovered_in_one_rtt() {
    let mut tx = at_cwnd_14();
    let blocks_after = |n: i64| -> Vec<(i64, i64)> {
        // The sink's blocks for packet n of this pattern (`Sacker::append_ack`).
        let runs = [(14, 16), (17, 19), (20, 27)];
        let mut v: Vec<(i64, i64)> = runs
            .iter()
            .filter(|r| r.0 <= n)
            .map(|&(l, r)| (l, r.min(n + 1)))
            .collect();
        v.reverse();
        v
    };
    assert_eq!(blocks_after(21), vec![(20, 22), (17, 19), (14, 16)]);
    assert_eq!(tx.sack(t(500), 12, &blocks_after(14)), vec![27]);
    assert_eq!(tx.sack(t(500), 12, &blocks_after(15)), vec![28]);
    assert_eq!(tx.sack(t(500), 12, &blocks_after(17)), vec![13]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.pipe()), (7.0, 7, (13, true)));
    for n in [18, 20, 21, 22, 23, 24] {
        assert_eq!(tx.sack(t(500), 12, &blocks_after(n)), vec![], "after {n}");
    }
    assert_eq!(tx.pipe(), (7, true));
    assert_eq!(tx.sack(t(500), 12, &blocks_after(25)), vec![16]);
    assert_eq!(tx.sack(t(500), 12, &blocks_after(26)), vec![19]);
    assert_eq!(tx.s.poll_timeout(), Some(t(700)), "restarted at the fast retransmit");
    let (b1, b2) = ([(20, 28), (17, 19), (14, 16)], [(20, 29), (17, 19), (14, 16)]);
    assert_eq!(tx.sack(t(600), 12, &b1), vec![29]);
    assert_eq!(tx.sack(t(600), 12, &b2), vec![30]);
    assert_eq!(tx.sack(t(600), 15, &[(20, 29), (17, 19)]), vec![31, 32]);
    assert_eq!(tx.sack(t(600), 18, &[(20, 29)]), vec![33, 34]);
    assert_eq!(tx.ack(t(600), 28), vec![35]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.pipe().1), (7.0, 7, false));
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 3, 0));
}

/// The same losses with NewReno, for contrast: one hole per RTT, so the last one is resent
/// at the second partial ACK, two RTTs after the fast retransmit.
#[test]
fn newreno_resends_one_hole_per_rtt() {
    let mut tx = Tx::new(ns2(Ns2Variant::NewReno));
    tx.write(t(0), 60, 1000);
    tx.ack(t(100), 0);
    for (at, acks) in [(200, 1..=2), (300, 3..=6), (400, 7..=12)] {
        for n in acks {
            tx.ack(t(at), n);
        }
    }
    // (time, packet) of the retransmissions: the 11 duplicates at 500 ms, then the partial
    // ACKs.
    let mut resent = vec![];
    for _ in 0..11 {
        resent.extend(tx.ack(t(500), 12).into_iter().filter(|&p| p <= 26).map(|p| (500, p)));
    }
    resent.extend(tx.ack(t(600), 15).into_iter().filter(|&p| p <= 26).map(|p| (600, p)));
    resent.extend(tx.ack(t(700), 18).into_iter().filter(|&p| p <= 26).map(|p| (700, p)));
    assert_eq!(resent, vec![(500, 13), (600, 16), (700, 19)]);
}

/// A timeout (`Sack1TcpAgent::timeout`) leaves recovery, clears the scoreboard and ignores
/// duplicate ACKs until the next new ACK (`timeout_`).
/// * As in `sack1_single_loss` up to packet 9 (the timer was restarted at the fast
///   retransmit at 300 ms with the RTO of 250 ms): the resent 3 is lost too, and the timer
///   expires at 550 ms: ssthresh = max(⌊2/2⌋, 2) = 2, cwnd 1, backoff 2, back to packet 3
///   (`last_ack_ + 1`), which `send_much` resends (the scoreboard is empty).
/// * A late duplicate with new blocks is ignored: nothing is sent, no duplicate counted.
/// * ACK 9 (the resent 3 filled the hole) is new: cwnd 2, the sender jumps to 10, 11; the
///   scoreboard counts again: 10 lost, 11's ACK is duplicate 1 and limited transmit sends 12.
#[test]
fn sack1_timeout_clears_the_scoreboard_and_ignores_duplicates_until_a_new_ack() {
    let mut tx = at_cwnd_4(Ns2Variant::Sack1);
    tx.sack(t(300), 2, &[(4, 5)]);
    tx.sack(t(300), 2, &[(4, 6)]);
    assert_eq!(tx.sack(t(300), 2, &[(4, 7)]), vec![3]);
    tx.sack(t(400), 2, &[(4, 8)]);
    assert_eq!(tx.sack(t(400), 2, &[(4, 9)]), vec![9]);
    assert_eq!(tx.expire(t(550)), vec![3]);
    assert_eq!((tx.cwnd(), tx.ssthresh(), tx.s.backoff()), (1.0, 2, Some(2)));
    assert!(!tx.pipe().1);
    assert!(tx.sender().scb.blocks().is_empty());
    assert_eq!(tx.sack(t(600), 2, &[(4, 10)]), vec![]);
    assert_eq!(tx.sack(t(600), 2, &[(4, 10)]), vec![]);
    assert_eq!(tx.sack(t(600), 2, &[(4, 10)]), vec![]);
    assert!(tx.sender().scb.blocks().is_empty(), "not even recorded");
    assert_eq!(tx.s.report().fast_retransmits, 1);
    assert_eq!(tx.ack(t(650), 9), vec![10, 11]);
    assert_eq!(tx.cwnd(), 2.0);
    assert_eq!(tx.sack(t(750), 9, &[(11, 12)]), vec![12]);
    let r = tx.s.report();
    assert_eq!((r.fast_retransmits, r.stats.retransmissions, r.timeouts), (1, 2, 1));
}

/// The scoreboard (`ScoreBoardRQ` over ns-2's reassembly queue): blocks merge when they
/// touch, a new cumulative ACK drops and trims what it covers, and the next retransmission is
/// the first hole from `max(h_seqno_, sack_min)` that has a block above it (each once).
#[test]
fn sack1_scoreboard() {
    let mut sb = sack1::ScoreBoard::new();
    assert!(sb.update(2, &[(6, 8), (4, 5)]));
    assert_eq!(sb.blocks(), &[(4, 5), (6, 8)]);
    assert!(!sb.update(2, &[(6, 7)]), "nothing new");
    assert!(sb.update(2, &[(5, 6)]), "fills between: one block");
    assert_eq!(sb.blocks(), &[(4, 8)]);
    assert!(sb.update(2, &[(10, 12)]));
    assert_eq!(sb.next_retran(), Some(3), "the first hole, below [4,8)");
    sb.mark_retran(3);
    assert_eq!(sb.next_retran(), Some(8), "then the end of [4,8)");
    sb.mark_retran(8);
    assert_eq!(sb.next_retran(), Some(9), "below [10,12)");
    sb.mark_retran(9);
    assert_eq!(sb.next_retran(), None, "12 has nothing SACKed above it");
    // A cumulative ACK of 5 drops what it covers and trims [4,8) to [6,8).
    assert!(sb.update(5, &[]));
    assert_eq!(sb.blocks(), &[(6, 8), (10, 12)]);
    sb.clear();
    assert!(sb.blocks().is_empty());
    // After a clear the search restarts at sack_min (6). A stale block below the cumulative
    // ACK (from a reordered old ACK) does not move it back, so retransmissions stay above the
    // cumulative ACK (ns-2's queue would move it to 3 and resend the acknowledged 3).
    assert!(sb.update(5, &[(2, 3), (8, 9)]));
    assert_eq!(sb.blocks(), &[(2, 3), (8, 9)]);
    assert_eq!(sb.next_retran(), Some(6));
}

impl Rx {
    fn sack1(max_sack_blocks: u32, delayed_ack: Option<SimDuration>) -> Rx {
        let ns2 = Ns2TcpConfig {
            variant: Ns2Variant::Sack1,
            max_sack_blocks,
            delayed_ack,
            ..Ns2TcpConfig::default()
        };
        Rx {
            s: Ns2TcpSocket::new(sock_cfg(SizeConvention::Standard), ns2, Open::Passive, SimTime::ZERO),
            ns2,
        }
    }
    /// Packet `n` arrives at `at`; returns the ACKs sent with their blocks, checking that each
    /// is 40 bytes plus 8 per block.
    fn sacks(&mut self, at: SimTime, n: i64) -> Vec<(i64, Vec<(i64, i64)>)> {
        let seg = data_segment(&self.ns2, n, None, t(1));
        self.s.on_segment(at, &seg);
        let mut v = vec![];
        while let Some(seg) = self.s.poll_transmit(at) {
            let blocks = sack_of(&self.ns2, &seg);
            assert_eq!(seg.ip_len, 40 + 8 * blocks.len() as u32);
            v.push((ack_of(&self.ns2, &seg), blocks));
        }
        v
    }
}

/// `Sacker::append_ack`: the block of the packet just received first, then the earlier
/// blocks, most recent first, at most `maxSackBlocks_` (3).
/// * 3, 5, 7, 9 each start a block: [9,10), [7,8), [5,6) (3 at most: [3,4) is forgotten).
/// * 4 joins 3 and 5: its block [3,6) comes first, then [9,10), [7,8) (the history is full
///   at 3 blocks: the oldest entry, [5,6), falls off).
/// * 2 fills the first hole: ACK 5; a packet at or below the cumulative ACK has no block of
///   its own but covers [0, 6), which removes [3,6) from the history: [9,10), [7,8).
/// * 9 again (a duplicate above the cumulative ACK) reports its block again; 1 again (below
///   it) changes nothing.
/// * 6: ACK 7, [9,10). 8: ACK 9, nothing missing below the highest packet: no blocks, and
///   the history is emptied, so 11 then reports [11,12) alone.
#[test]
fn sack_sink_reports_the_most_recent_blocks_first() {
    let mut rx = Rx::sack1(3, None);
    assert_eq!(rx.sacks(t(0), 0), vec![(0, vec![])]);
    assert_eq!(rx.sacks(t(10), 1), vec![(1, vec![])]);
    assert_eq!(rx.sacks(t(20), 3), vec![(1, vec![(3, 4)])]);
    assert_eq!(rx.sacks(t(30), 5), vec![(1, vec![(5, 6), (3, 4)])]);
    assert_eq!(rx.sacks(t(40), 7), vec![(1, vec![(7, 8), (5, 6), (3, 4)])]);
    assert_eq!(rx.sacks(t(50), 9), vec![(1, vec![(9, 10), (7, 8), (5, 6)])]);
    assert_eq!(rx.sacks(t(60), 4), vec![(1, vec![(3, 6), (9, 10), (7, 8)])]);
    assert_eq!(rx.sacks(t(70), 2), vec![(5, vec![(9, 10), (7, 8)])]);
    assert_eq!(rx.sacks(t(80), 9), vec![(5, vec![(9, 10), (7, 8)])]);
    assert_eq!(rx.sacks(t(90), 1), vec![(5, vec![(9, 10), (7, 8)])]);
    assert_eq!(rx.sacks(t(100), 6), vec![(7, vec![(9, 10)])]);
    assert_eq!(rx.sacks(t(110), 8), vec![(9, vec![])]);
    assert_eq!(rx.sacks(t(120), 11), vec![(9, vec![(11, 12)])]);
    let r = rx.s.report();
    assert_eq!(r.stats.ack_segments, 13);
}

/// Blocks on the wire: byte ranges of the packets (packet n starts at byte 1 + (n − 1)·1000
/// after the 1-byte SYN), so [3,4) is bytes 2001..3001.
#[test]
fn sack_blocks_are_byte_ranges_on_the_wire() {
    let mut rx = Rx::sack1(3, None);
    rx.sacks(t(0), 0);
    rx.sacks(t(10), 1);
    let seg = data_segment(&rx.ns2, 3, None, t(1));
    rx.s.on_segment(t(20), &seg);
    let ack = rx.s.poll_transmit(t(20)).unwrap();
    let h = tcp_of(&ack);
    assert_eq!((h.ack, h.sack.as_slice()), (1001, &[(2001, 3001)][..]));
    assert_eq!((ack.ip_len, h.options_len()), (48, 12));
}

/// `maxSackBlocks_` 1: only the most recent block; above `NSA` (3), 3.
#[test]
fn sack_sink_block_limit() {
    let mut rx = Rx::sack1(1, None);
    for n in [0, 1] {
        rx.sacks(t(0), n);
    }
    assert_eq!(rx.sacks(t(10), 3), vec![(1, vec![(3, 4)])]);
    assert_eq!(rx.sacks(t(20), 5), vec![(1, vec![(5, 6)])]);
    assert_eq!(rx.sacks(t(30), 2), vec![(3, vec![(5, 6)])], "from the history");
    let mut rx = Rx::sack1(7, None);
    for n in [0, 1] {
        rx.sacks(t(0), n);
    }
    for (i, n) in [3, 5, 7, 9, 11].into_iter().enumerate() {
        assert_eq!(rx.sacks(t(10), n)[0].1.len(), (i + 1).min(3));
    }
}

/// The SACK sink with DelAck (`Agent/TCPSink/Sack1/DelAck`): a held in-order ACK carries no
/// blocks; an out-of-order packet is acknowledged at once with its block.
#[test]
fn sack_delack_sink() {
    let mut rx = Rx::sack1(3, Some(Ns2TcpConfig::DELACK_INTERVAL));
    assert_eq!(rx.sacks(t(0), 0), vec![(0, vec![])]);
    assert_eq!(rx.sacks(t(10), 1), vec![]);
    assert_eq!(rx.sacks(t(20), 3), vec![(1, vec![(3, 4)])]);
    assert_eq!(rx.sacks(t(30), 2), vec![(3, vec![])], "fills the gap: at once");
    assert_eq!(rx.sacks(t(40), 4), vec![]);
    rx.s.on_timeout(t(140));
    let seg = rx.s.poll_transmit(t(140)).unwrap();
    assert_eq!(
        (ack_of(&rx.ns2, &seg), sack_of(&rx.ns2, &seg), seg.ip_len),
        (4, vec![], 40)
    );
}
