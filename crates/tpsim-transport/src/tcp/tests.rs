//! Packet-by-packet tests, smoltcp style: feed one segment at an explicit time, then assert
//! exactly what comes out. Each test names the rule it checks.
//!
//! The socket under test has local port 49152, MSS 1000 (MTU 1040) and ISS 1000; its peer's
//! ISN is 5000. `d(k)` is the wire sequence number of our stream byte `k`, `p(k)` the peer's.

use super::*;
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::tcp::SackBlocks;
use tpsim_wire::{SizeConvention, TcpFlags, TcpRepr, TcpTimestamp};

const MSS: u32 = 1000;
const ISS: u32 = 1000;
const IRS: u32 = 5000;
const LOCAL: u16 = 49152;
const REMOTE: u16 = 80;
const ACK: TcpFlags = TcpFlags::ACK;
const SYN: TcpFlags = TcpFlags::SYN;
const FIN: TcpFlags = TcpFlags::FIN;
const PSH: TcpFlags = TcpFlags::PSH;

fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}
fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}
/// Wire sequence number of our stream byte `k`.
fn d(k: u32) -> u32 {
    ISS.wrapping_add(1).wrapping_add(k)
}
/// Wire sequence number of the peer's stream byte `k`.
fn p(k: u32) -> u32 {
    IRS.wrapping_add(1).wrapping_add(k)
}

fn sock_cfg(sizes: SizeConvention, mtu: u32) -> SocketConfig {
    SocketConfig {
        local_port: LOCAL,
        remote_port: REMOTE,
        sizes,
        mtu,
        draw_seed: 0,
    }
}
fn base() -> TcpConfig {
    TcpConfig {
        iss: ISS,
        ..TcpConfig::default()
    }
}

/// A segment from the socket under test, as expected.
fn ours(seq: u32, ack: u32, flags: TcpFlags) -> TcpRepr {
    TcpRepr {
        src_port: LOCAL,
        dst_port: REMOTE,
        seq,
        ack,
        flags,
        window: 65535,
        mss: None,
        sack_permitted: false,
        timestamp: None,
        window_scale: None,
        sack: SackBlocks::NONE,
    }
}
/// A segment from the peer.
fn theirs(seq: u32, ack: u32, flags: TcpFlags) -> TcpRepr {
    TcpRepr {
        src_port: REMOTE,
        dst_port: LOCAL,
        seq,
        ack,
        flags,
        window: 65535,
        mss: None,
        sack_permitted: false,
        timestamp: None,
        window_scale: None,
        sack: SackBlocks::NONE,
    }
}
/// A pure ACK from the peer.
fn ack_of(ack: u32) -> TcpRepr {
    theirs(p(0), ack, ACK)
}
fn with_window(mut r: TcpRepr, window: u16) -> TcpRepr {
    r.window = window;
    r
}

/// Feeds `repr` carrying `len` payload bytes to `s` at `at`.
fn feed(s: &mut TcpSocket, at: SimTime, repr: TcpRepr, len: u32) {
    feed_ecn(s, at, repr, len, tpsim_wire::Ecn::NotEct);
}

/// [`feed`] with the IP header's ECN field `ecn`.
fn feed_ecn(s: &mut TcpSocket, at: SimTime, repr: TcpRepr, len: u32, ecn: tpsim_wire::Ecn) {
    let seg = Segment {
        addr: None,
        header: L4Header::Tcp(repr),
        payload_len: len,
        ip_len: 40 + len,
        message: None,
        first_tx: at,
        stream: None,
        ecn,
    };
    s.on_segment(at, &seg);
}

/// Everything `s` sends at `at`, as (header, payload length).
fn drain(s: &mut TcpSocket, at: SimTime) -> Vec<(TcpRepr, u32)> {
    drain_segments(s, at)
        .into_iter()
        .map(|g| (tcp_of(&g), g.payload_len))
        .collect()
}
fn drain_segments(s: &mut TcpSocket, at: SimTime) -> Vec<Segment> {
    let mut v = vec![];
    while let Some(seg) = s.poll_transmit(at) {
        assert!(v.len() < 1000, "runaway transmit loop");
        v.push(seg);
    }
    v
}
fn tcp_of(seg: &Segment) -> TcpRepr {
    match &seg.header {
        L4Header::Tcp(h) => *h,
        other => panic!("not TCP: {other:?}"),
    }
}
fn events(s: &mut TcpSocket) -> Vec<TransportEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}
fn send(s: &mut TcpSocket, at: SimTime, len: u32) {
    s.send(
        at,
        Message {
            id: 0,
            len,
            created: at,
        },
    )
    .unwrap();
}

fn client_with(tcp: TcpConfig, sizes: SizeConvention, mtu: u32) -> TcpSocket {
    TcpSocket::new(sock_cfg(sizes, mtu), tcp, Open::Active, t(0))
}
fn client(tcp: TcpConfig) -> TcpSocket {
    client_with(tcp, SizeConvention::Standard, MSS + 40)
}
fn server(tcp: TcpConfig) -> TcpSocket {
    TcpSocket::new(sock_cfg(SizeConvention::Standard, MSS + 40), tcp, Open::Passive, t(0))
}
fn syn_ack() -> TcpRepr {
    TcpRepr {
        mss: Some(MSS as u16),
        ..theirs(IRS, d(0), SYN | ACK)
    }
}

/// A client whose handshake completed at 100 ms (RTT sample 100 ms), with the ACK of the
/// SYN-ACK drained and the `Connected` event consumed.
fn connected_client(tcp: TcpConfig) -> TcpSocket {
    let mut s = client(tcp);
    assert_eq!(drain(&mut s, t(0)).len(), 1);
    feed(&mut s, t(100), syn_ack(), 0);
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    let out = drain(&mut s, t(100));
    assert_eq!(
        out.iter()
            .map(|(h, len)| (h.seq, h.ack, h.flags, *len))
            .collect::<Vec<_>>(),
        [(d(0), p(0), ACK, 0)]
    );
    s
}

// ---------------------------------------------------------------- handshake (RFC 9293 §3.5)

/// RFC 9293 §3.5 (Figure 6) and §3.7.1: the active opener sends a SYN with its MSS, and
/// answers the SYN-ACK with an ACK; the SYN's round trip is the first RTT sample.
#[test]
fn active_open_sends_syn_with_mss_and_acks_the_syn_ack() {
    let mut s = client(base());
    assert_eq!(s.state(), State::SynSent);
    assert_eq!(
        s.poll_timeout(),
        Some(t(1000)),
        "RFC 6298 (5.1): the SYN starts the timer"
    );
    let out = drain_segments(&mut s, t(0));
    assert_eq!(out.len(), 1);
    assert_eq!(
        tcp_of(&out[0]),
        TcpRepr {
            mss: Some(1000),
            ..ours(ISS, 0, SYN)
        }
    );
    assert_eq!(out[0].ip_len, 20 + 24, "IPv4 + TCP with the MSS option");
    assert_eq!(out[0].stream, None);
    feed(&mut s, t(100), syn_ack(), 0);
    assert_eq!(s.state(), State::Established);
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    let out = drain_segments(&mut s, t(100));
    assert_eq!(out.iter().map(tcp_of).collect::<Vec<_>>(), [ours(d(0), p(0), ACK)]);
    assert_eq!(out[0].ip_len, 40);
    assert_eq!(s.srtt(), Some(ms(100)));
    assert_eq!(s.poll_timeout(), None, "RFC 6298 (5.2): nothing outstanding, no timer");
    assert_eq!(
        s.cwnd(),
        4 * 1000,
        "RFC 5681 §3.1 eq. (1): SMSS <= 1095 gives 4 segments"
    );
    assert_eq!(s.stats().ack_segments, 1);
}

/// RFC 9293 §3.5: the passive opener answers a SYN with a SYN-ACK and is connected by the ACK.
#[test]
fn passive_open_answers_syn_and_connects_on_the_ack() {
    let mut s = server(base());
    assert_eq!(s.state(), State::Listen);
    assert_eq!(drain(&mut s, t(0)), []);
    assert_eq!(s.poll_timeout(), None);
    feed(
        &mut s,
        t(0),
        TcpRepr {
            mss: Some(1460),
            ..theirs(IRS, 0, SYN)
        },
        0,
    );
    assert_eq!(s.state(), State::SynReceived);
    assert_eq!(
        drain(&mut s, t(0)),
        [(
            TcpRepr {
                mss: Some(1000),
                ..ours(ISS, p(0), SYN | ACK)
            },
            0
        )]
    );
    assert_eq!(s.poll_timeout(), Some(t(1000)));
    feed(&mut s, t(100), theirs(p(0), d(0), ACK), 0);
    assert_eq!(s.state(), State::Established);
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    assert_eq!(s.mss(), 1000, "RFC 9293 §3.7.1: min of both MSS options");
    assert_eq!(s.srtt(), Some(ms(100)));
    assert_eq!(drain(&mut s, t(100)), []);
    assert_eq!(s.poll_timeout(), None);
}

/// RFC 6298 (5.4)–(5.6) and (5.7), RFC 5681 §3.1: a lost SYN is retransmitted after 1 s, 2 s,
/// ...; once connected there is no RTT sample (Karn), the RTO restarts from 3 s and the
/// initial window is one segment.
#[test]
fn lost_syn_is_retransmitted_with_exponential_backoff() {
    let mut s = client(base());
    let syn = TcpRepr {
        mss: Some(1000),
        ..ours(ISS, 0, SYN)
    };
    assert_eq!(drain(&mut s, t(0)), [(syn, 0)]);
    s.on_timeout(t(999));
    assert_eq!(drain(&mut s, t(999)), [], "not due yet");
    s.on_timeout(t(1000));
    assert_eq!(drain(&mut s, t(1000)), [(syn, 0)]);
    assert_eq!(s.poll_timeout(), Some(t(3000)));
    s.on_timeout(t(3000));
    assert_eq!(drain(&mut s, t(3000)), [(syn, 0)]);
    assert_eq!(s.poll_timeout(), Some(t(7000)));
    assert_eq!(s.stats().retransmissions, 2);
    feed(&mut s, t(3100), syn_ack(), 0);
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    assert_eq!(s.rtt_samples(), 0, "Karn: the SYN was retransmitted");
    assert_eq!(s.rto(), ms(3000), "RFC 6298 (5.7)");
    assert_eq!(s.cwnd(), 1000, "RFC 5681 §3.1: IW = 1 segment after a lost SYN");
}

/// RFC 9293 §3.5, RFC 6298 §5: a lost SYN-ACK is sent again when the server's timer expires,
/// and at once when the client's retransmitted SYN arrives.
#[test]
fn lost_syn_ack_is_recovered_by_timer_and_by_the_repeated_syn() {
    let mut s = server(base());
    let syn = TcpRepr {
        mss: Some(1000),
        ..theirs(IRS, 0, SYN)
    };
    let syn_ack = TcpRepr {
        mss: Some(1000),
        ..ours(ISS, p(0), SYN | ACK)
    };
    feed(&mut s, t(0), syn, 0);
    assert_eq!(drain(&mut s, t(0)), [(syn_ack, 0)]); // lost
    s.on_timeout(t(1000));
    assert_eq!(drain(&mut s, t(1000)), [(syn_ack, 0)]); // lost again
    assert_eq!(s.poll_timeout(), Some(t(3000)));
    feed(&mut s, t(1050), syn, 0); // the client's own retransmission
    assert_eq!(drain(&mut s, t(1050)), [(syn_ack, 0)]);
    assert_eq!(s.stats().retransmissions, 2);
    feed(&mut s, t(1150), theirs(p(0), d(0), ACK), 0);
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    assert_eq!(s.rtt_samples(), 0);
    assert_eq!(s.cwnd(), 1000, "RFC 5681 §3.1");
    assert_eq!(s.rto(), ms(3000), "RFC 6298 (5.7)");
}

/// RFC 9293 §3.10.7.4: if the ACK of the SYN-ACK is lost, the repeated SYN-ACK is an old
/// segment and is acknowledged again.
#[test]
fn repeated_syn_ack_is_acknowledged_again() {
    let mut s = connected_client(base());
    feed(&mut s, t(1000), syn_ack(), 0);
    assert_eq!(drain(&mut s, t(1000)), [(ours(d(0), p(0), ACK), 0)]);
    assert_eq!(events(&mut s), []);
    assert_eq!(s.tcp_stats().duplicate_segments, 1);
}

/// RFC 9293 §3.10.7.3: a RST that acknowledges our SYN closes the connection.
#[test]
fn reset_in_syn_sent_closes() {
    let mut s = client(base());
    drain(&mut s, t(0));
    feed(&mut s, t(50), theirs(0, d(0), TcpFlags::RST | ACK), 0);
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
    assert_eq!(s.poll_timeout(), None);
}

// ---------------------------------------------------------------- sizes and buffers

/// RFC 9293 §3.7.1 (MSS = MTU − 40) and the two size conventions (docs/models.md).
#[test]
fn segment_sizes_follow_the_size_convention() {
    for (sizes, syn_len, data_len, ack_len) in [
        (SizeConvention::Standard, 44, 1040, 40),
        (SizeConvention::Ns2, 40, 1040, 40),
    ] {
        let mut s = client_with(base(), sizes, 1040);
        assert_eq!(drain_segments(&mut s, t(0))[0].ip_len, syn_len);
        feed(&mut s, t(100), syn_ack(), 0);
        assert_eq!(drain_segments(&mut s, t(100))[0].ip_len, ack_len);
        send(&mut s, t(100), 1500);
        let out = drain_segments(&mut s, t(100));
        assert_eq!(
            out.iter().map(|g| (g.payload_len, g.ip_len)).collect::<Vec<_>>(),
            [(1000, data_len), (500, 540)]
        );
        assert_eq!(
            out[1].stream,
            Some(crate::StreamData {
                offset: 1000,
                len: 500,
                retransmission: false
            })
        );
        assert_eq!(out[1].message, None);
    }
}

/// The send buffer counts unacknowledged bytes; messages have no boundaries inside TCP.
#[test]
fn send_buffer_refuses_what_does_not_fit() {
    let mut s = client(TcpConfig {
        send_buffer_bytes: 3000,
        ..base()
    });
    assert!(s.can_send(3000));
    send(&mut s, t(0), 2000);
    assert!(!s.can_send(1001));
    let m = Message {
        id: 1,
        len: 1001,
        created: t(0),
    };
    assert_eq!(s.send(t(0), m), Err(SendError::BufferFull));
    assert_eq!(
        s.send(t(0), Message { len: 3001, ..m }),
        Err(SendError::TooLarge { max: 3000 })
    );
    assert_eq!(s.buffered_messages(), 1, "not sent before the handshake");
    drain(&mut s, t(0));
    feed(&mut s, t(100), syn_ack(), 0);
    let out = drain(&mut s, t(100));
    assert_eq!(
        out,
        [(ours(d(0), p(0), ACK), 1000), (ours(d(1000), p(0), ACK | PSH), 1000)]
    );
    assert_eq!(s.buffered_messages(), 0);
    assert!(!s.can_send(1001), "sent is not acknowledged");
    feed(&mut s, t(200), ack_of(d(2000)), 0);
    assert!(s.can_send(3000));
}

/// RFC 5681 §3.1 eq. (1): the initial window depends on SMSS, unless configured.
#[test]
fn initial_window_follows_rfc5681() {
    for (mtu, iw, segs) in [
        (1500u32, None, 3usize),
        (2500, None, 2),
        (1040, None, 4),
        (1040, Some(1), 1),
    ] {
        let tcp = TcpConfig {
            initial_window_segments: iw,
            ..base()
        };
        let mut s = client_with(tcp, SizeConvention::Standard, mtu);
        drain(&mut s, t(0));
        feed(
            &mut s,
            t(100),
            TcpRepr {
                mss: Some(9000),
                ..syn_ack()
            },
            0,
        );
        send(&mut s, t(100), 20_000);
        let data = drain(&mut s, t(100)).into_iter().filter(|(_, len)| *len > 0).count();
        assert_eq!(data, segs, "mtu {mtu}");
    }
}

/// RFC 9293 §3.7.4 (Nagle): a short segment waits while data is unacknowledged.
#[test]
fn nagle_holds_a_short_segment_until_the_ack() {
    let mut s = connected_client(TcpConfig { nagle: true, ..base() });
    send(&mut s, t(100), 100);
    assert_eq!(drain(&mut s, t(100)), [(ours(d(0), p(0), ACK | PSH), 100)]);
    send(&mut s, t(110), 100);
    assert_eq!(drain(&mut s, t(110)), []);
    feed(&mut s, t(200), ack_of(d(100)), 0);
    assert_eq!(drain(&mut s, t(200)), [(ours(d(100), p(0), ACK | PSH), 100)]);
    // Without Nagle the second message goes at once.
    let mut s = connected_client(base());
    send(&mut s, t(100), 100);
    assert_eq!(drain(&mut s, t(100)).len(), 1);
    send(&mut s, t(110), 100);
    assert_eq!(drain(&mut s, t(110)), [(ours(d(100), p(0), ACK | PSH), 100)]);
}

/// RFC 5681 §4.1: after an idle period longer than the RTO, cwnd restarts from the initial
/// window.
#[test]
fn restart_after_idle_reduces_cwnd_to_the_initial_window() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 4000);
    assert_eq!(drain(&mut s, t(100)).len(), 4);
    feed(&mut s, t(200), ack_of(d(2000)), 0);
    feed(&mut s, t(201), ack_of(d(4000)), 0);
    assert_eq!(s.cwnd(), 6000);
    send(&mut s, t(2300), 10_000);
    assert_eq!(drain(&mut s, t(2300)).len(), 4);
    assert_eq!(s.cwnd(), 4000);
}

/// RFC 9293 §3.4: sequence numbers wrap modulo 2^32.
#[test]
fn sequence_numbers_wrap_around() {
    let iss = u32::MAX - 1500;
    let mut s = TcpSocket::new(
        sock_cfg(SizeConvention::Standard, 1040),
        TcpConfig { iss, ..base() },
        Open::Active,
        t(0),
    );
    drain(&mut s, t(0));
    feed(
        &mut s,
        t(100),
        TcpRepr {
            mss: Some(1000),
            ..theirs(IRS, iss.wrapping_add(1), SYN | ACK)
        },
        0,
    );
    drain(&mut s, t(100));
    send(&mut s, t(100), 3000);
    let seqs: Vec<u32> = drain(&mut s, t(100)).iter().map(|(h, _)| h.seq).collect();
    assert_eq!(seqs, [u32::MAX - 1499, u32::MAX - 499, 500]);
    feed(&mut s, t(200), ack_of(1500), 0);
    assert_eq!(s.bytes_acked(), 3000);
    assert_eq!(s.poll_timeout(), None);
}

// ---------------------------------------------------------------- receiver and ACKs

/// RFC 5681 §4.2, RFC 1122 §4.2.3.2: the second full-sized segment is acknowledged at once.
#[test]
fn delayed_ack_acknowledges_every_second_full_segment() {
    let mut s = connected_client(base());
    feed(&mut s, t(200), theirs(p(0), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(200)), []);
    assert_eq!(events(&mut s), [TransportEvent::DeliveredBytes { upto: 1000 }]);
    assert_eq!(s.poll_timeout(), Some(t(400)));
    feed(&mut s, t(210), theirs(p(1000), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(210)), [(ours(d(0), p(2000), ACK), 0)]);
    assert_eq!(events(&mut s), [TransportEvent::DeliveredBytes { upto: 2000 }]);
    assert_eq!(s.poll_timeout(), None);
}

/// `delayed_ack_segments` (ns-3's `DelAckCount`): small segments are acknowledged every n-th
/// segment, where the byte rule (2·SMSS) would wait for more of them.
#[test]
fn delayed_ack_segments_counts_small_segments() {
    // Byte rule: with SMSS 1000, 300-byte segments are acknowledged at the 7th (2100 B).
    let mut s = connected_client(base());
    for k in 0..6u32 {
        feed(&mut s, t(200 + k as u64), theirs(p(300 * k), d(0), ACK), 300);
        assert_eq!(drain(&mut s, t(200 + k as u64)), [], "segment {k}");
    }
    feed(&mut s, t(206), theirs(p(1800), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(206)), [(ours(d(0), p(2100), ACK), 0)]);
    // Counting segments: every second one, and the count restarts after each ACK.
    let mut s = connected_client(TcpConfig {
        delayed_ack_segments: Some(2),
        ..base()
    });
    feed(&mut s, t(200), theirs(p(0), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(200)), []);
    assert_eq!(s.poll_timeout(), Some(t(400)));
    feed(&mut s, t(201), theirs(p(300), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(201)), [(ours(d(0), p(600), ACK), 0)]);
    assert_eq!(s.poll_timeout(), None);
    feed(&mut s, t(202), theirs(p(600), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(202)), []);
    feed(&mut s, t(203), theirs(p(900), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(203)), [(ours(d(0), p(1200), ACK), 0)]);
    // A lone segment still waits for the timer.
    feed(&mut s, t(204), theirs(p(1200), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(204)), []);
    s.on_timeout(t(404));
    assert_eq!(drain(&mut s, t(404)), [(ours(d(0), p(1500), ACK), 0)]);
}

/// RFC 5681 §4.2 (and RFC 1122's 500 ms bound): a lone segment is acknowledged when the
/// 200 ms delayed-ACK timer expires.
#[test]
fn delayed_ack_timer_fires_after_200_ms() {
    let mut s = connected_client(base());
    feed(&mut s, t(200), theirs(p(0), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(200)), []);
    s.on_timeout(t(399));
    assert_eq!(drain(&mut s, t(399)), []);
    s.on_timeout(t(400));
    assert_eq!(drain(&mut s, t(400)), [(ours(d(0), p(300), ACK), 0)]);
    s.on_timeout(t(400));
    assert_eq!(drain(&mut s, t(400)), [], "spurious timeout call");
    // Without delayed ACKs every segment is acknowledged.
    let mut s = connected_client(TcpConfig {
        delayed_ack: None,
        ..base()
    });
    feed(&mut s, t(200), theirs(p(0), d(0), ACK), 300);
    assert_eq!(drain(&mut s, t(200)), [(ours(d(0), p(300), ACK), 0)]);
}

/// RFC 5681 §4.2: out-of-order data is acknowledged at once (a duplicate ACK) and kept; the
/// segment that fills the gap is acknowledged at once too.
#[test]
fn out_of_order_data_is_reassembled_with_immediate_acks() {
    let mut s = connected_client(base());
    feed(&mut s, t(200), theirs(p(1000), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(200)), [(ours(d(0), p(0), ACK), 0)]);
    feed(&mut s, t(201), theirs(p(2000), d(0), ACK | FIN), 500);
    assert_eq!(drain(&mut s, t(201)), [(ours(d(0), p(0), ACK), 0)]);
    assert_eq!(events(&mut s), []);
    feed(&mut s, t(202), theirs(p(0), d(0), ACK), 1000);
    // The gap is filled; the FIN that waited behind it is consumed and (close_on_peer_fin) our
    // FIN goes out with the ACK.
    assert_eq!(drain(&mut s, t(202)), [(ours(d(0), p(2501), ACK | FIN), 0)]);
    assert_eq!(events(&mut s), [TransportEvent::DeliveredBytes { upto: 2500 }]);
    assert_eq!(s.state(), State::LastAck);
    assert_eq!(s.tcp_stats().out_of_order_segments, 2);
}

/// RFC 9293 §3.10.7.4: a duplicate segment is acknowledged and otherwise ignored.
#[test]
fn duplicate_segment_is_ignored() {
    let mut s = connected_client(TcpConfig {
        delayed_ack: None,
        ..base()
    });
    feed(&mut s, t(200), theirs(p(0), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(200)).len(), 1);
    feed(&mut s, t(300), theirs(p(0), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(300)), [(ours(d(0), p(1000), ACK), 0)]);
    assert_eq!(events(&mut s), [TransportEvent::DeliveredBytes { upto: 1000 }]);
    assert_eq!(s.tcp_stats().duplicate_segments, 1);
    assert_eq!(s.bytes_received(), 1000);
}

/// RFC 1122 §4.2.3.2: with data to send, the ACK rides on it (two-way traffic).
#[test]
fn ack_is_piggybacked_on_data() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 1000);
    assert_eq!(drain(&mut s, t(100)), [(ours(d(0), p(0), ACK | PSH), 1000)]);
    feed(&mut s, t(200), theirs(p(0), d(1000), ACK), 1000);
    assert_eq!(drain(&mut s, t(200)), []);
    assert_eq!(s.poll_timeout(), Some(t(400)), "delayed ACK pending");
    send(&mut s, t(250), 500);
    assert_eq!(drain(&mut s, t(250)), [(ours(d(1000), p(1000), ACK | PSH), 500)]);
    assert_eq!(s.poll_timeout(), Some(t(1250)), "only the RTO remains");
    assert_eq!(s.stats().ack_segments, 1, "only the handshake's ACK was a pure ACK");
}

/// RFC 9293 §3.8.6 and §3.8.6.2.2: a receiver that stops reading advertises a shrinking
/// window down to zero, refuses a probe, and sends a window update when it reads again.
#[test]
fn paused_receiver_closes_and_reopens_its_window() {
    let tcp = TcpConfig {
        recv_buffer_bytes: 2000,
        delayed_ack: None,
        ..base()
    };
    let mut s = connected_client(tcp);
    s.set_receive_paused(t(100), true);
    let ack = |a, w| with_window(ours(d(0), a, ACK), w);
    feed(&mut s, t(200), theirs(p(0), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(200)), [(ack(p(1000), 1000), 0)]);
    feed(&mut s, t(201), theirs(p(1000), d(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(201)), [(ack(p(2000), 0), 0)]);
    assert_eq!(events(&mut s), []);
    feed(&mut s, t(300), theirs(p(2000), d(0), ACK), 1);
    assert_eq!(drain(&mut s, t(300)), [(ack(p(2000), 0), 0)], "probe refused");
    s.set_receive_paused(t(400), false);
    assert_eq!(events(&mut s), [TransportEvent::DeliveredBytes { upto: 2000 }]);
    assert_eq!(drain(&mut s, t(400)), [(ack(p(2000), 2000), 0)], "window update");
}

// ---------------------------------------------------------------- RTO (RFC 6298)

/// RFC 6298 §2.2 and §2.3 in the connection: the SYN gives the first sample, data the next.
#[test]
fn rto_from_first_and_later_samples() {
    let mut s = connected_client(TcpConfig {
        min_rto: ms(10),
        ..base()
    });
    assert_eq!((s.srtt(), s.rttvar(), s.rto()), (Some(ms(100)), ms(50), ms(300)));
    send(&mut s, t(100), 1000);
    drain(&mut s, t(100));
    assert_eq!(s.poll_timeout(), Some(t(400)));
    feed(&mut s, t(300), ack_of(d(1000)), 0);
    // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5.
    assert_eq!(s.rttvar(), SimDuration::from_micros(62_500));
    assert_eq!(s.srtt(), Some(SimDuration::from_micros(112_500)));
    assert_eq!(s.rto(), SimDuration::from_micros(112_500 + 250_000));
    assert_eq!((s.rtt_samples(), s.rtt_sum()), (2, ms(300)));
}

/// RFC 6298 (5.2), (5.3): the timer restarts on each ACK of new data and stops when all data
/// is acknowledged.
#[test]
fn rto_timer_restarts_on_new_ack_and_stops_when_all_acked() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 3000);
    drain(&mut s, t(100));
    assert_eq!(s.poll_timeout(), Some(t(1100)));
    feed(&mut s, t(250), ack_of(d(1000)), 0);
    drain(&mut s, t(250));
    assert_eq!(s.poll_timeout(), Some(t(1250)));
    feed(&mut s, t(260), ack_of(d(3000)), 0);
    assert_eq!(s.poll_timeout(), None);
}

/// RFC 6298 (5.4)–(5.6), RFC 5681 §3.1: on expiry the earliest segment is retransmitted, the
/// RTO doubles, ssthresh = max(FlightSize/2, 2·SMSS) and cwnd = 1 SMSS; the rest follows in
/// slow start (go-back-N).
#[test]
fn rto_expiry_retransmits_backs_off_and_slow_starts() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 4000);
    assert_eq!(drain(&mut s, t(100)).len(), 4);
    s.on_timeout(t(1100));
    let seg0 = (ours(d(0), p(0), ACK), 1000);
    assert_eq!(drain(&mut s, t(1100)), [seg0]);
    assert_eq!((s.cwnd(), s.ssthresh()), (1000, Some(2000)));
    assert_eq!(s.rto(), ms(2000));
    assert_eq!(s.poll_timeout(), Some(t(3100)));
    s.on_timeout(t(3100));
    assert_eq!(drain(&mut s, t(3100)), [seg0]);
    assert_eq!(s.rto(), ms(4000));
    assert_eq!(s.tcp_stats().timeouts, 2);
    let out = drain_segments(&mut s, t(3100));
    assert!(out.is_empty());
    // The retransmission is acknowledged: slow start, resending what followed it.
    feed(&mut s, t(3200), ack_of(d(1000)), 0);
    let out = drain_segments(&mut s, t(3200));
    assert_eq!(
        out.iter().map(|g| (tcp_of(g).seq, g.payload_len)).collect::<Vec<_>>(),
        [(d(1000), 1000), (d(2000), 1000)]
    );
    assert!(out.iter().all(|g| g.stream.unwrap().retransmission));
    assert_eq!(s.cwnd(), 2000);
    assert_eq!(s.poll_timeout(), Some(t(7200)), "backed-off RTO kept (Karn)");
}

/// RFC 6298 §3 (Karn): no RTT sample from a retransmitted segment, and the backed-off RTO
/// stays until a sample from new data.
#[test]
fn karn_no_rtt_sample_from_retransmissions() {
    let mut s = connected_client(TcpConfig {
        min_rto: ms(10),
        ..base()
    });
    send(&mut s, t(100), 1000);
    drain(&mut s, t(100));
    s.on_timeout(t(400)); // RTO 300 ms
    assert_eq!(drain(&mut s, t(400)).len(), 1);
    assert_eq!(s.rto(), ms(600));
    feed(&mut s, t(450), ack_of(d(1000)), 0); // ambiguous: original or retransmission?
    assert_eq!(s.rtt_samples(), 1, "only the SYN's sample");
    assert_eq!(s.srtt(), Some(ms(100)));
    assert_eq!(s.rto(), ms(600));
    send(&mut s, t(500), 1000);
    drain(&mut s, t(500));
    feed(&mut s, t(600), ack_of(d(2000)), 0);
    assert_eq!(s.rtt_samples(), 2);
    // SRTT = 100, RTTVAR = 3/4·50 = 37.5, RTO = 100 + 150.
    assert_eq!(s.rto(), ms(250), "recomputed, backoff cleared");
}

// ---------------------------------------------------------------- loss recovery

/// A client with a 10-segment initial window that has sent segments 0..10 of 20 000 bytes.
fn ten_in_flight(recovery: LossRecovery) -> TcpSocket {
    let tcp = TcpConfig {
        recovery,
        initial_window_segments: Some(10),
        ..base()
    };
    let mut s = connected_client(tcp);
    send(&mut s, t(100), 20_000);
    assert_eq!(drain(&mut s, t(100)).len(), 10);
    s
}

/// Feeds `n` duplicate ACKs of `ack` and returns what came out.
fn dup_acks(s: &mut TcpSocket, at: SimTime, ack: u32, n: usize) -> Vec<(TcpRepr, u32)> {
    let mut out = vec![];
    for _ in 0..n {
        feed(s, at, ack_of(ack), 0);
        out.extend(drain(s, at));
    }
    out
}

/// RFC 5681 §3.2 steps 1–5: the third duplicate ACK retransmits the lost segment, sets
/// ssthresh = FlightSize/2 and cwnd = ssthresh + 3·SMSS; each further duplicate inflates cwnd
/// by one SMSS, which lets new data out once cwnd exceeds FlightSize.
#[test]
fn fast_retransmit_after_three_duplicate_acks() {
    let mut s = ten_in_flight(LossRecovery::NewReno);
    assert_eq!(dup_acks(&mut s, t(200), d(0), 2), []);
    assert_eq!(dup_acks(&mut s, t(201), d(0), 1), [(ours(d(0), p(0), ACK), 1000)]);
    assert_eq!((s.ssthresh(), s.cwnd()), (Some(5000), 8000));
    assert!(s.in_fast_recovery());
    assert_eq!(s.poll_timeout(), Some(t(1201)), "the retransmission restarts the timer");
    assert_eq!(dup_acks(&mut s, t(202), d(0), 2), []);
    assert_eq!(s.cwnd(), 10_000);
    assert_eq!(dup_acks(&mut s, t(203), d(0), 1), [(ours(d(10_000), p(0), ACK), 1000)]);
    assert_eq!(s.tcp_stats().fast_retransmits, 1);
    assert_eq!(s.stats().retransmissions, 1);
}

/// RFC 6582 §3.2 step 3: a partial ACK retransmits the next hole at once, deflates cwnd by the
/// data acknowledged (plus one SMSS back), resets the timer (first partial ACK only) and
/// stays in fast recovery; the full ACK ends it with cwnd = min(ssthresh, max(FlightSize,
/// SMSS) + SMSS).
#[test]
fn newreno_partial_ack_retransmits_next_hole_and_full_ack_ends_recovery() {
    let mut s = ten_in_flight(LossRecovery::NewReno);
    dup_acks(&mut s, t(200), d(0), 6); // segments 0 and 4 lost; 1 new segment sent (10 000)
    assert_eq!(s.cwnd(), 11_000);
    feed(&mut s, t(300), ack_of(d(4000)), 0);
    assert_eq!(
        drain(&mut s, t(300)),
        [(ours(d(4000), p(0), ACK), 1000), (ours(d(11_000), p(0), ACK), 1000)]
    );
    assert_eq!(s.cwnd(), 11_000 - 4000 + 1000);
    assert!(s.in_fast_recovery());
    assert_eq!(s.poll_timeout(), Some(t(1300)));
    assert_eq!(s.tcp_stats().partial_acks, 1);
    // A second partial ACK does not reset the timer ("Impatient", RFC 3782 §4).
    feed(&mut s, t(310), ack_of(d(5000)), 0);
    assert_eq!(
        drain(&mut s, t(310)),
        [(ours(d(5000), p(0), ACK), 1000), (ours(d(12_000), p(0), ACK), 1000)]
    );
    assert_eq!(s.cwnd(), 8000);
    assert_eq!(s.poll_timeout(), Some(t(1300)));
    // Full ACK: everything up to `recover` (10 000) and beyond.
    feed(&mut s, t(400), ack_of(d(13_000)), 0);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.cwnd(), 2000, "min(5000, max(0, 1000) + 1000)");
    assert_eq!(
        drain(&mut s, t(400)).iter().map(|(h, _)| h.seq).collect::<Vec<_>>(),
        [d(13_000), d(14_000)]
    );
}

/// RFC 5681 §3.2 step 6 (Reno): the first ACK of new data ends fast recovery, partial or not,
/// and deflates cwnd to ssthresh; later duplicates below `recover` do not retransmit again.
#[test]
fn reno_leaves_recovery_on_the_first_new_ack() {
    let mut s = ten_in_flight(LossRecovery::Reno);
    dup_acks(&mut s, t(200), d(0), 6);
    feed(&mut s, t(300), ack_of(d(4000)), 0);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.cwnd(), 5000);
    assert_eq!(
        drain(&mut s, t(300)),
        [],
        "FlightSize 7000 > cwnd 5000; no retransmission of the hole"
    );
    assert_eq!(dup_acks(&mut s, t(301), d(4000), 3), [], "RFC 6582 §3.2 step 2 guard");
    assert_eq!(s.tcp_stats().fast_retransmits, 1);
    assert_eq!(s.tcp_stats().partial_acks, 0);
}

/// Tahoe: fast retransmit, then cwnd = 1 SMSS and slow start from the lost segment; duplicate
/// ACKs never inflate the window.
#[test]
fn tahoe_never_enters_fast_recovery() {
    let mut s = ten_in_flight(LossRecovery::Tahoe);
    assert_eq!(dup_acks(&mut s, t(200), d(0), 3), [(ours(d(0), p(0), ACK), 1000)]);
    assert_eq!((s.ssthresh(), s.cwnd()), (Some(5000), 1000));
    assert!(!s.in_fast_recovery());
    assert_eq!(dup_acks(&mut s, t(201), d(0), 5), []);
    assert_eq!(s.cwnd(), 1000);
    feed(&mut s, t(300), ack_of(d(4000)), 0);
    assert_eq!(s.cwnd(), 2000);
    let out = drain_segments(&mut s, t(300));
    assert_eq!(
        out.iter().map(|g| tcp_of(g).seq).collect::<Vec<_>>(),
        [d(4000), d(5000)]
    );
    assert!(
        out.iter().all(|g| g.stream.unwrap().retransmission),
        "go-back-N resends"
    );
}

/// RFC 6582 §3.2 step 2 and step 4: after a timeout `recover` is the highest sequence sent, and
/// duplicate ACKs that do not cover it do not trigger fast retransmit.
#[test]
fn no_fast_retransmit_after_timeout_below_recover() {
    let mut s = ten_in_flight(LossRecovery::NewReno);
    s.on_timeout(t(1100));
    assert_eq!(drain(&mut s, t(1100)).len(), 1);
    feed(&mut s, t(1200), ack_of(d(3000)), 0);
    drain(&mut s, t(1200));
    assert_eq!(dup_acks(&mut s, t(1201), d(3000), 4), []);
    assert_eq!(s.tcp_stats().fast_retransmits, 0);
}

// ---------------------------------------------------------------- zero window (RFC 9293 §3.8.6.1)

/// RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17: with a zero window and data waiting, the persist
/// timer sends one-octet probes, backing off exponentially; a window update restarts data.
#[test]
fn zero_window_is_probed_with_backoff() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 3000);
    drain(&mut s, t(100));
    feed(&mut s, t(200), with_window(ack_of(d(3000)), 0), 0);
    send(&mut s, t(200), 2000);
    assert_eq!(drain(&mut s, t(200)), []);
    assert_eq!(s.poll_timeout(), Some(t(1200)), "first probe after one RTO");
    s.on_timeout(t(1200));
    assert_eq!(drain(&mut s, t(1200)), [(ours(d(3000), p(0), ACK), 1)]);
    assert_eq!(s.poll_timeout(), Some(t(3200)));
    feed(&mut s, t(1300), with_window(ack_of(d(3000)), 0), 0);
    assert_eq!(drain(&mut s, t(1300)), []);
    assert_eq!(s.dup_acks(), 0, "probe ACKs are not duplicate ACKs");
    s.on_timeout(t(3200));
    let out = drain_segments(&mut s, t(3200));
    assert_eq!((tcp_of(&out[0]).seq, out[0].payload_len), (d(3000), 1));
    assert!(out[0].stream.unwrap().retransmission);
    assert_eq!(s.poll_timeout(), Some(t(7200)));
    assert_eq!(s.tcp_stats().window_probes, 2);
    // The window opens.
    feed(&mut s, t(3300), ack_of(d(3000)), 0);
    let out = drain(&mut s, t(3300));
    assert_eq!(
        out,
        [(ours(d(3000), p(0), ACK), 1000), (ours(d(4000), p(0), ACK | PSH), 1000)]
    );
    assert_eq!(s.poll_timeout(), Some(t(4300)), "RTO, no persist");
}

/// A stale zero window (an old ACK reordered after a newer one) while data is outstanding:
/// the retransmission timer expires but cannot send into it, so the persist timer takes over
/// and its probe resends from `snd_una` (as BSD does).
#[test]
fn zero_window_with_data_outstanding_hands_over_to_persist() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 3000);
    assert_eq!(drain(&mut s, t(100)).len(), 3);
    feed(&mut s, t(200), with_window(ack_of(d(1000)), 0), 0);
    assert_eq!(drain(&mut s, t(200)), []);
    assert_eq!(s.poll_timeout(), Some(t(1200)), "the RTO guards the outstanding data");
    s.on_timeout(t(1200));
    assert_eq!(drain(&mut s, t(1200)), [], "nothing fits a zero window");
    assert_eq!(s.poll_timeout(), Some(t(3200)), "persist, after the backed-off RTO");
    s.on_timeout(t(3200));
    let out = drain_segments(&mut s, t(3200));
    assert_eq!(
        out.iter().map(|g| (tcp_of(g).seq, g.payload_len)).collect::<Vec<_>>(),
        [(d(1000), 1)]
    );
    assert!(out[0].stream.unwrap().retransmission);
    // The receiver had room all along: it acknowledges everything.
    feed(&mut s, t(3300), ack_of(d(3000)), 0);
    assert_eq!(drain(&mut s, t(3300)), []);
    assert_eq!(s.bytes_acked(), 3000);
    assert_eq!(s.poll_timeout(), None);
}

// ---------------------------------------------------------------- close (RFC 9293 §3.6)

/// RFC 9293 §3.6 (Figure 12), active side: FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT for 2·MSL.
#[test]
fn active_close_goes_through_time_wait() {
    let mut s = connected_client(base());
    send(&mut s, t(100), 1000);
    s.close(t(100));
    assert_eq!(s.state(), State::FinWait1);
    assert!(!s.can_send(1));
    assert_eq!(drain(&mut s, t(100)), [(ours(d(0), p(0), ACK | PSH | FIN), 1000)]);
    feed(&mut s, t(200), ack_of(d(1001)), 0);
    assert_eq!(s.state(), State::FinWait2);
    assert_eq!(s.poll_timeout(), None);
    feed(&mut s, t(300), theirs(p(0), d(1001), FIN | ACK), 0);
    assert_eq!(drain(&mut s, t(300)), [(ours(d(1001), p(1), ACK), 0)]);
    assert_eq!(s.state(), State::TimeWait);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
    assert_eq!(s.poll_timeout(), Some(t(300) + SimDuration::from_secs(240)));
    // The peer did not get our ACK and repeats its FIN: ACK again, restart 2·MSL.
    feed(&mut s, t(1300), theirs(p(0), d(1001), FIN | ACK), 0);
    assert_eq!(drain(&mut s, t(1300)), [(ours(d(1001), p(1), ACK), 0)]);
    assert_eq!(s.poll_timeout(), Some(t(1300) + SimDuration::from_secs(240)));
    s.on_timeout(t(1300) + SimDuration::from_secs(240));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), []);
}

/// RFC 9293 §3.6, passive side: CLOSE-WAIT, then (closing on the peer's FIN) our FIN rides on
/// the ACK of theirs, LAST-ACK, CLOSED.
#[test]
fn passive_close_goes_through_last_ack() {
    let mut s = connected_client(base());
    feed(&mut s, t(200), theirs(p(0), d(0), FIN | ACK), 0);
    assert_eq!(s.state(), State::LastAck);
    assert_eq!(drain(&mut s, t(200)), [(ours(d(0), p(1), FIN | ACK), 0)]);
    assert_eq!(s.poll_timeout(), Some(t(1200)), "the FIN is guarded by the RTO");
    feed(&mut s, t(300), theirs(p(1), d(1), ACK), 0);
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
    assert_eq!(s.poll_timeout(), None);
}

/// RFC 9293 §3.6.1: a half-closed connection keeps sending in CLOSE-WAIT until the
/// application closes.
#[test]
fn close_wait_keeps_sending_until_close() {
    let mut s = connected_client(TcpConfig {
        close_on_peer_fin: false,
        ..base()
    });
    feed(&mut s, t(200), theirs(p(0), d(0), FIN | ACK), 0);
    assert_eq!(s.state(), State::CloseWait);
    assert_eq!(drain(&mut s, t(200)), [(ours(d(0), p(1), ACK), 0)]);
    send(&mut s, t(300), 500);
    assert_eq!(drain(&mut s, t(300)), [(ours(d(0), p(1), ACK | PSH), 500)]);
    s.close(t(300));
    assert_eq!(s.state(), State::LastAck);
    assert_eq!(drain(&mut s, t(300)), [(ours(d(500), p(1), FIN | ACK), 0)]);
    feed(&mut s, t(400), theirs(p(1), d(501), ACK), 0);
    assert_eq!(s.state(), State::Closed);
}

/// RFC 9293 §3.6 (Figure 13): simultaneous close passes through CLOSING.
#[test]
fn simultaneous_close_passes_through_closing() {
    let mut s = connected_client(base());
    s.close(t(100));
    assert_eq!(drain(&mut s, t(100)), [(ours(d(0), p(0), FIN | ACK), 0)]);
    feed(&mut s, t(150), theirs(p(0), d(0), FIN | ACK), 0);
    assert_eq!(s.state(), State::Closing);
    assert_eq!(drain(&mut s, t(150)), [(ours(d(1), p(1), ACK), 0)]);
    feed(&mut s, t(200), theirs(p(1), d(1), ACK), 0);
    assert_eq!(s.state(), State::TimeWait);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
}

/// A lost FIN is retransmitted by the RTO (RFC 6298 §5 covers the FIN's sequence number).
#[test]
fn lost_fin_is_retransmitted() {
    let mut s = connected_client(base());
    s.close(t(100));
    let fin = (ours(d(0), p(0), FIN | ACK), 0);
    assert_eq!(drain(&mut s, t(100)), [fin]);
    s.on_timeout(t(1100));
    assert_eq!(drain(&mut s, t(1100)), [fin]);
    assert_eq!(s.stats().retransmissions, 1);
}

/// RFC 9293 §3.10.7.1: a CLOSED endpoint answers with a RST (here, to a peer still
/// retransmitting its FIN after our TIME-WAIT ended), and an acceptable RST closes the peer.
#[test]
fn closed_endpoint_answers_with_reset() {
    let mut s = connected_client(base());
    feed(&mut s, t(200), theirs(p(0), d(0), FIN | ACK), 0);
    drain(&mut s, t(200));
    feed(&mut s, t(300), theirs(p(1), d(1), ACK), 0);
    assert_eq!(s.state(), State::Closed);
    feed(&mut s, t(400), theirs(p(1), d(1), FIN | ACK), 0);
    let rst = TcpRepr {
        window: 0,
        ..ours(d(1), 0, TcpFlags::RST)
    };
    assert_eq!(drain(&mut s, t(400)), [(rst, 0)]);
    feed(&mut s, t(500), theirs(p(1), d(1), TcpFlags::RST), 0);
    assert_eq!(drain(&mut s, t(500)), [], "never a RST for a RST");
    // The other side of the story: a LAST-ACK endpoint closes on an acceptable RST.
    let mut s = connected_client(base());
    feed(&mut s, t(200), theirs(p(0), d(0), FIN | ACK), 0);
    drain(&mut s, t(200));
    events(&mut s);
    feed(&mut s, t(300), theirs(p(1), 0, TcpFlags::RST), 0);
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
}

// ---------------------------------------------------------------- giving up (RFC 9293 §3.8.3)

/// RFC 9293 §3.8.3 (R2 for a SYN) as ns-3 counts it: `syn_attempts` SYNs, the first timeout
/// `syn_rto` and doubled each time, then the attempt fails when the last timer expires.
#[test]
fn an_unanswered_handshake_is_abandoned_after_its_syn_attempts() {
    let mut s = client(TcpConfig {
        syn_attempts: Some(6),
        syn_rto: Some(ms(3000)),
        ..base()
    });
    let mut sent_at = vec![];
    let mut now = t(0);
    loop {
        let out = drain(&mut s, now);
        if !out.is_empty() {
            assert!(out.iter().all(|(h, _)| h.flags == SYN));
            sent_at.push(now.0 / 1_000_000);
        }
        let Some(next) = s.poll_timeout() else { break };
        now = next;
        s.on_timeout(now);
    }
    // ns-3's ConnTimeout 3 s doubled: 3 + 6 + 12 + 24 + 48 + 96 = 189 s.
    assert_eq!(sent_at, [0, 3_000, 9_000, 21_000, 45_000, 93_000]);
    assert_eq!(now, t(189_000));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
    assert_eq!(s.tcp_stats().gave_up, 1);
    assert!(!s.can_send(1), "a failed connection takes no more data");
    // Without the limit the same client keeps trying.
    let mut forever = client(base());
    drain(&mut forever, t(0));
    for _ in 0..12 {
        let at = forever.poll_timeout().unwrap();
        forever.on_timeout(at);
        assert_eq!(drain(&mut forever, at).len(), 1);
    }
    assert_eq!(forever.tcp_stats().gave_up, 0);
}

/// RFC 9293 §3.8.3 (R2 for data) as ns-3 counts it: `data_retries` retransmissions by the
/// timer in a row, then the connection is dropped at the next expiry; an ACK of new data
/// starts the count again.
#[test]
fn data_unacknowledged_through_data_retries_timeouts_drops_the_connection() {
    let mut s = connected_client(TcpConfig {
        data_retries: Some(2),
        ..base()
    });
    send(&mut s, t(100), 3000);
    assert_eq!(drain(&mut s, t(100)).len(), 3);
    // One timeout, then an ACK of the first segment: the count restarts.
    let at = s.poll_timeout().unwrap();
    s.on_timeout(at);
    assert_eq!(drain(&mut s, at)[0].0.seq, d(0));
    feed(&mut s, at + ms(50), ack_of(d(1000)), 0);
    drain(&mut s, at + ms(50));
    let mut retransmitted = 0;
    loop {
        let at = s
            .poll_timeout()
            .expect("the timer runs until the connection is dropped");
        s.on_timeout(at);
        if s.state() == State::Closed {
            break;
        }
        let out = drain(&mut s, at);
        assert_eq!(out[0].0.seq, d(1000), "the first unacknowledged segment again");
        retransmitted += 1;
    }
    assert_eq!(retransmitted, 2);
    assert_eq!(s.tcp_stats().gave_up, 1);
    assert_eq!(events(&mut s), [TransportEvent::Closed]);
    assert_eq!(s.poll_timeout(), None);
    assert!(
        drain(&mut s, t(1_000_000)).is_empty(),
        "nothing is sent after giving up"
    );
}

/// The passive side counts its SYN-ACKs the same way.
#[test]
fn an_unanswered_syn_ack_is_abandoned_too() {
    let mut s = server(TcpConfig {
        syn_attempts: Some(2),
        syn_rto: Some(ms(3000)),
        ..base()
    });
    feed(
        &mut s,
        t(0),
        TcpRepr {
            mss: Some(1000),
            ..theirs(IRS, 0, SYN)
        },
        0,
    );
    assert_eq!(drain(&mut s, t(0)).len(), 1);
    assert_eq!(s.poll_timeout(), Some(t(3000)));
    s.on_timeout(t(3000));
    assert_eq!(drain(&mut s, t(3000)).len(), 1);
    assert_eq!(s.poll_timeout(), Some(t(9000)));
    s.on_timeout(t(9000));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(s.tcp_stats().gave_up, 1);
}

// ---------------------------------------------------------------- RFC 7323 timestamps

fn ts(tsval: u32, tsecr: u32) -> Option<TcpTimestamp> {
    Some(TcpTimestamp { tsval, tsecr })
}
fn ts_config() -> TcpConfig {
    TcpConfig {
        timestamps: true,
        ..base()
    }
}

/// A client with timestamps whose SYN (sent at 3 ms) was answered at 103 ms by a SYN-ACK
/// carrying TSval 7000.
fn ts_client() -> TcpSocket {
    let mut s = TcpSocket::new(
        sock_cfg(SizeConvention::Standard, MSS + 40),
        ts_config(),
        Open::Active,
        t(3),
    );
    let syn = drain_segments(&mut s, t(3));
    assert_eq!(syn.len(), 1);
    // RFC 7323 §3.2: the SYN offers TSopt with TSecr 0; 20 + MSS 4 + TS 12 header bytes.
    assert_eq!(tcp_of(&syn[0]).timestamp, ts(3, 0));
    assert_eq!(syn[0].ip_len, 20 + 36);
    feed(
        &mut s,
        t(103),
        TcpRepr {
            timestamp: ts(7000, 3),
            ..syn_ack()
        },
        0,
    );
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    let ack = drain_segments(&mut s, t(103));
    assert_eq!(ack.len(), 1);
    assert_eq!(
        tcp_of(&ack[0]).timestamp,
        ts(103, 7000),
        "TSecr echoes the SYN-ACK's TSval"
    );
    assert_eq!(ack[0].ip_len, 20 + 32, "every segment carries the 12 option bytes");
    s
}

/// RFC 7323 §3.2: both SYNs carry TSopt, so every later segment does; the handshake's RTT
/// sample comes from the echo (§4.1).
#[test]
fn timestamps_negotiated_on_both_syns() {
    let mut s = ts_client();
    assert_eq!((s.rtt_samples(), s.srtt()), (1, Some(ms(100))));
    // Payload per segment: the 1040-byte MTU leaves 1040 - 20 - 32 = 988 bytes.
    send(&mut s, t(110), 2000);
    let segs = drain_segments(&mut s, t(110));
    let lens: Vec<u32> = segs.iter().map(|g| g.payload_len).collect();
    assert_eq!(lens, [988, 988, 24]);
    assert!(segs
        .iter()
        .all(|g| g.ip_len == g.payload_len + 52 && tcp_of(g).timestamp == ts(110, 7000)));
}

/// RFC 7323 §3.2: a SYN-ACK without TSopt turns timestamps off; a server answers a SYN
/// without TSopt without it; a server without the option ignores an offer.
#[test]
fn timestamps_need_both_sides() {
    let mut s = TcpSocket::new(
        sock_cfg(SizeConvention::Standard, MSS + 40),
        ts_config(),
        Open::Active,
        t(0),
    );
    drain(&mut s, t(0));
    feed(&mut s, t(100), syn_ack(), 0);
    let out = drain(&mut s, t(100));
    assert_eq!(out, [(ours(d(0), p(0), ACK), 0)]);
    send(&mut s, t(100), 1000);
    assert_eq!(drain(&mut s, t(100)), [(ours(d(0), p(0), ACK | PSH), 1000)]);

    for (server_ts, offered) in [(true, None), (false, ts(50, 0))] {
        let mut srv = server(TcpConfig {
            timestamps: server_ts,
            ..base()
        });
        feed(
            &mut srv,
            t(1),
            TcpRepr {
                mss: Some(MSS as u16),
                timestamp: offered,
                ..theirs(IRS, 0, SYN)
            },
            0,
        );
        let synack = drain(&mut srv, t(1));
        assert_eq!(synack.len(), 1);
        assert_eq!(synack[0].0.timestamp, None, "server {server_ts}, offer {offered:?}");
    }
    // Both: the SYN-ACK echoes the SYN's TSval.
    let mut srv = server(ts_config());
    feed(
        &mut srv,
        t(1),
        TcpRepr {
            mss: Some(MSS as u16),
            timestamp: ts(50, 0),
            ..theirs(IRS, 0, SYN)
        },
        0,
    );
    assert_eq!(drain(&mut srv, t(1))[0].0.timestamp, ts(1, 50));
}

/// RFC 7323 §4.1: every ACK of new data gives a sample, now - TSecr, also for a
/// retransmitted segment (no Karn rule needed); an ACK that acknowledges nothing new gives
/// none (§4.2).
#[test]
fn timestamps_sample_every_ack_of_new_data() {
    let mut s = ts_client();
    send(&mut s, t(200), 1976);
    assert_eq!(drain(&mut s, t(200)).len(), 2);
    feed(
        &mut s,
        t(260),
        TcpRepr {
            timestamp: ts(7100, 200),
            ..ack_of(d(988))
        },
        0,
    );
    assert_eq!(s.rtt_samples(), 2);
    assert_eq!(s.rtt_sum(), ms(100 + 60));
    // A duplicate ACK: no sample.
    feed(
        &mut s,
        t(270),
        TcpRepr {
            timestamp: ts(7110, 200),
            ..ack_of(d(988))
        },
        0,
    );
    assert_eq!(s.rtt_samples(), 2);
    // The second segment is lost; the RTO retransmits it; its ACK echoes the retransmission.
    let rto_at = s.poll_timeout().expect("RTO armed");
    s.on_timeout(rto_at);
    let re = drain(&mut s, rto_at);
    assert_eq!(re.len(), 1);
    let sent_ms = (rto_at.as_nanos() / 1_000_000) as u32;
    assert_eq!(re[0].0.timestamp.map(|x| x.tsval), Some(sent_ms));
    let back = SimTime(rto_at.as_nanos() + 80_000_000);
    feed(
        &mut s,
        back,
        TcpRepr {
            timestamp: ts(9000, sent_ms),
            ..ack_of(d(1976))
        },
        0,
    );
    assert_eq!(s.rtt_samples(), 3, "a retransmission's ACK is sampled through its echo");
    assert_eq!(
        s.rtt_sum(),
        ms(160) + SimDuration::from_nanos(80_000_000 + rto_at.as_nanos() % 1_000_000)
    );
}

/// RFC 7323 §4.3: TS.Recent takes the TSval of a segment that starts at or before the last
/// ACK sent; a later, out-of-order segment does not change what is echoed.
#[test]
fn timestamps_ts_recent_follows_last_ack_sent() {
    let mut s = ts_client();
    // Out of order (a hole at p(0)): acknowledged at once, echoing the SYN-ACK's TSval still.
    feed(
        &mut s,
        t(200),
        TcpRepr {
            timestamp: ts(7200, 150),
            ..theirs(p(1000), d(0), ACK)
        },
        1000,
    );
    let out = drain(&mut s, t(200));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].0.ack, out[0].0.timestamp), (p(0), ts(200, 7000)));
    // The hole filled: its TSval 7150 >= TS.Recent 7000 and it starts at Last.ACK.sent
    // (p(0)), so it is taken, although the out-of-order segment's 7200 was newer.
    feed(
        &mut s,
        t(210),
        TcpRepr {
            timestamp: ts(7150, 150),
            ..theirs(p(0), d(0), ACK)
        },
        1000,
    );
    let out = drain(&mut s, t(210));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].0.ack, out[0].0.timestamp), (p(2000), ts(210, 7150)));
    // An older TSval (a reordered copy) does not move TS.Recent back.
    feed(
        &mut s,
        t(220),
        TcpRepr {
            timestamp: ts(7140, 150),
            ..theirs(p(2000), d(0), ACK)
        },
        500,
    );
    s.on_timeout(t(420));
    let out = drain(&mut s, t(420));
    assert_eq!((out[0].0.ack, out[0].0.timestamp), (p(2500), ts(420, 7150)));
}

/// Under ns-2's size convention a segment is its payload + 40 bytes whatever its options, so
/// timestamps cut nothing from the payload.
#[test]
fn timestamps_cost_no_payload_under_ns2_sizes() {
    let mut s = TcpSocket::new(sock_cfg(SizeConvention::Ns2, MSS + 40), ts_config(), Open::Active, t(0));
    drain(&mut s, t(0));
    feed(
        &mut s,
        t(100),
        TcpRepr {
            timestamp: ts(7000, 0),
            ..syn_ack()
        },
        0,
    );
    drain(&mut s, t(100));
    send(&mut s, t(100), 2000);
    let segs = drain_segments(&mut s, t(100));
    assert_eq!(
        segs.iter().map(|g| (g.payload_len, g.ip_len)).collect::<Vec<_>>(),
        [(1000, 1040), (1000, 1040)]
    );
    assert!(segs.iter().all(|g| tcp_of(g).timestamp.is_some()));
}

// ---------------------------------------------------------------- SACK (RFC 2018, 2883, 6675)

fn sack_config(recovery: LossRecovery) -> TcpConfig {
    TcpConfig {
        recovery,
        sack: true,
        delayed_ack: None,
        ..base()
    }
}
/// A client whose SYN offered SACK-permitted and whose peer's SYN-ACK accepted it.
fn sack_client(tcp: TcpConfig) -> TcpSocket {
    let mut s = client(tcp);
    let syn = drain_segments(&mut s, t(0));
    assert!(tcp_of(&syn[0]).sack_permitted, "RFC 2018 §2: offered on the SYN");
    assert_eq!(syn[0].ip_len, 20 + 28, "MSS 4 + NOP, NOP, SACK-permitted 4");
    feed(
        &mut s,
        t(100),
        TcpRepr {
            sack_permitted: true,
            ..syn_ack()
        },
        0,
    );
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    assert!(s.sack_negotiated());
    drain(&mut s, t(100));
    s
}
/// A pure ACK from the peer with SACK blocks given as our stream bytes `[from, to)`.
fn sack_of(ack: u32, blocks: &[(u32, u32)]) -> TcpRepr {
    let wire: Vec<(u32, u32)> = blocks.iter().map(|&(a, b)| (d(a), d(b))).collect();
    TcpRepr {
        sack: SackBlocks::from_slice(&wire),
        ..ack_of(ack)
    }
}
/// A SACK client with `bytes` handed over and its 10-segment initial window sent.
fn sack_ten_in_flight(bytes: u32) -> TcpSocket {
    let mut s = sack_client(TcpConfig {
        initial_window_segments: Some(10),
        ..sack_config(LossRecovery::Sack)
    });
    send(&mut s, t(100), bytes);
    assert_eq!(drain(&mut s, t(100)).len(), 10);
    s
}
fn seqs(out: &[(TcpRepr, u32)]) -> Vec<u32> {
    out.iter().map(|(h, _)| h.seq).collect()
}
/// The SACK blocks of the only segment in `out`, as the peer's stream bytes.
fn peer_blocks(out: &[(TcpRepr, u32)]) -> Vec<(u32, u32)> {
    assert_eq!(out.len(), 1, "{out:?}");
    let base = p(0);
    out[0]
        .0
        .sack
        .as_slice()
        .iter()
        .map(|&(l, r)| (l.wrapping_sub(base), r.wrapping_sub(base)))
        .collect()
}

/// RFC 2018 §2: SACK-permitted is used only when both SYNs carry it: a SYN-ACK without it
/// leaves SACK off (and `LossRecovery::Sack` falls back to NewReno); a server answers the
/// option only when the SYN offered it.
#[test]
fn sack_permitted_needs_both_syns() {
    let s = sack_client(sack_config(LossRecovery::Sack));
    assert_eq!(s.loss_recovery(), LossRecovery::Sack);
    let mut s = client(sack_config(LossRecovery::Sack));
    drain(&mut s, t(0));
    feed(&mut s, t(100), syn_ack(), 0);
    assert!(!s.sack_negotiated());
    assert_eq!(s.loss_recovery(), LossRecovery::NewReno);
    for offered in [true, false] {
        let mut srv = server(sack_config(LossRecovery::NewReno));
        feed(
            &mut srv,
            t(0),
            TcpRepr {
                mss: Some(1000),
                sack_permitted: offered,
                ..theirs(IRS, 0, SYN)
            },
            0,
        );
        let out = drain(&mut srv, t(0));
        assert_eq!(out[0].0.sack_permitted, offered);
        assert_eq!(srv.sack_negotiated(), offered);
        assert_eq!(srv.loss_recovery(), LossRecovery::NewReno, "configured NewReno stays");
    }
}

/// RFC 2018 §4: the first block holds the segment that triggered the ACK, then the most
/// recently reported other blocks; four fit without timestamps; a segment that advances the
/// cumulative ACK is not reported, and an ACK with nothing out of order carries no option.
#[test]
fn sack_blocks_most_recent_first_up_to_four() {
    let mut s = sack_client(sack_config(LossRecovery::NewReno));
    let data = |k: u32| theirs(p(k), d(0), ACK);
    let mut last = vec![];
    for k in [1000, 3000, 5000, 7000, 9000] {
        feed(&mut s, t(200), data(k), 1000);
        last = drain(&mut s, t(200));
        assert_eq!(last[0].0.ack, p(0));
    }
    assert_eq!(
        peer_blocks(&last),
        [(9000, 10_000), (7000, 8000), (5000, 6000), (3000, 4000)],
        "the oldest block (1000) no longer fits"
    );
    assert_eq!(last[0].0.header_len(), 20 + 36);
    // A segment joining two blocks: the merged block goes first.
    feed(&mut s, t(201), data(2000), 1000);
    assert_eq!(
        peer_blocks(&drain(&mut s, t(201))),
        [(1000, 4000), (9000, 10_000), (7000, 8000), (5000, 6000)]
    );
    // Filling the first hole advances the ACK; that segment is not reported.
    feed(&mut s, t(202), data(0), 1000);
    let out = drain(&mut s, t(202));
    assert_eq!(out[0].0.ack, p(4000));
    assert_eq!(peer_blocks(&out), [(9000, 10_000), (7000, 8000), (5000, 6000)]);
    for k in [4000, 6000, 8000] {
        feed(&mut s, t(203), data(k), 1000);
        drain(&mut s, t(203));
    }
    assert!(drain(&mut s, t(203)).is_empty());
    feed(&mut s, t(204), data(10_000), 1000);
    let out = drain(&mut s, t(204));
    assert_eq!(out[0].0.ack, p(11_000));
    assert!(out[0].0.sack.is_empty(), "in order: no SACK option");
}

/// RFC 2018 §3: with timestamps (12 option bytes), three blocks fill the 40 bytes.
#[test]
fn sack_blocks_three_with_timestamps() {
    let tcp = TcpConfig {
        timestamps: true,
        ..sack_config(LossRecovery::NewReno)
    };
    let mut s = client(tcp);
    drain(&mut s, t(0));
    feed(
        &mut s,
        t(100),
        TcpRepr {
            sack_permitted: true,
            timestamp: ts(7000, 0),
            ..syn_ack()
        },
        0,
    );
    drain(&mut s, t(100));
    let mut last = vec![];
    for k in [1000, 3000, 5000, 7000] {
        feed(
            &mut s,
            t(200),
            TcpRepr {
                timestamp: ts(7100, 100),
                ..theirs(p(k), d(0), ACK)
            },
            900,
        );
        last = drain(&mut s, t(200));
    }
    assert_eq!(peer_blocks(&last), [(7000, 7900), (5000, 5900), (3000, 3900)]);
    assert_eq!(last[0].0.header_len(), 60, "20 + TS 12 + SACK 28");
}

/// RFC 2883 §4: with D-SACK on, a duplicate below the cumulative ACK is the first block; a
/// duplicate of queued data is the first block and the block it lies in the second; the
/// report is made once.
#[test]
fn dsack_reports_duplicates_first() {
    let mut s = sack_client(TcpConfig {
        dsack: true,
        ..sack_config(LossRecovery::NewReno)
    });
    let data = |k: u32| theirs(p(k), d(0), ACK);
    feed(&mut s, t(200), data(0), 1000);
    drain(&mut s, t(200));
    feed(&mut s, t(201), data(0), 1000);
    assert_eq!(peer_blocks(&drain(&mut s, t(201))), [(0, 1000)]);
    feed(&mut s, t(202), data(2000), 1000);
    feed(&mut s, t(202), data(3000), 1000);
    drain(&mut s, t(202));
    feed(&mut s, t(203), data(2000), 1000);
    assert_eq!(peer_blocks(&drain(&mut s, t(203))), [(2000, 3000), (2000, 4000)]);
    feed(&mut s, t(204), data(5000), 1000);
    assert_eq!(peer_blocks(&drain(&mut s, t(204))), [(5000, 6000), (2000, 4000)]);
}

/// RFC 6675 §2 and §5 (1): an ACK is a duplicate when it SACKs new octets; the third one
/// starts recovery (4): RecoveryPoint = HighData, ssthresh = cwnd = FlightSize/2, HighACK + 1
/// retransmitted. Before that, IsLost(HighACK + 1) (§4: more than 2·SMSS SACKed above) had
/// not held: 1000, then 2000 octets.
#[test]
fn sack_third_duplicate_enters_recovery() {
    let mut s = sack_ten_in_flight(20_000);
    feed(&mut s, t(200), sack_of(d(0), &[(1000, 2000)]), 0);
    assert_eq!((s.dup_acks(), drain(&mut s, t(200))), (1, vec![]));
    feed(&mut s, t(201), sack_of(d(0), &[(1000, 2000)]), 0);
    assert_eq!(s.dup_acks(), 1, "no new SACK information: not a duplicate (§2)");
    feed(&mut s, t(202), sack_of(d(0), &[(1000, 3000)]), 0);
    assert_eq!((s.dup_acks(), drain(&mut s, t(202))), (2, vec![]));
    assert!(!s.in_fast_recovery());
    feed(&mut s, t(203), sack_of(d(0), &[(1000, 4000)]), 0);
    assert!(s.in_fast_recovery());
    assert_eq!((s.ssthresh(), s.cwnd()), (Some(5000), 5000));
    // (4.3): HighACK + 1 only: SetPipe = 6000 unSACKed above + 1000 retransmitted > cwnd.
    assert_eq!(drain(&mut s, t(203)), [(ours(d(0), p(0), ACK), 1000)]);
    assert_eq!(s.pipe(), Some(7000));
    assert_eq!(s.tcp_stats().fast_retransmits, 1);
}

/// RFC 6675 §5 step (2): one ACK SACKing more than 2·SMSS above HighACK makes IsLost(HighACK +
/// 1) true, and recovery starts at the first duplicate.
#[test]
fn sack_is_lost_by_bytes_enters_at_once() {
    let mut s = sack_ten_in_flight(20_000);
    feed(&mut s, t(200), sack_of(d(0), &[(1000, 4000)]), 0);
    assert_eq!(s.dup_acks(), 1);
    assert!(s.in_fast_recovery());
    assert_eq!(seqs(&drain(&mut s, t(200))), [d(0)]);
}

/// RFC 6675 §4 NextSeg rule (1) retransmits every lost hole in order, then rule (2) sends new
/// data, while cwnd − pipe >= 1 SMSS (§5 (C)); SetPipe (§4) counts each retransmission once
/// and each new segment once. Segments 0, 2 and 4 lost; 1, 3 and 5..9 SACKed.
#[test]
fn sack_next_seg_lost_holes_then_new_data() {
    let mut s = sack_ten_in_flight(20_000);
    feed(&mut s, t(200), sack_of(d(0), &[(1000, 2000)]), 0);
    feed(&mut s, t(201), sack_of(d(0), &[(3000, 4000), (1000, 2000)]), 0);
    assert_eq!(drain(&mut s, t(201)), []);
    feed(
        &mut s,
        t(202),
        sack_of(d(0), &[(5000, 10_000), (3000, 4000), (1000, 2000)]),
        0,
    );
    assert_eq!(s.cwnd(), 5000);
    assert_eq!(
        seqs(&drain(&mut s, t(202))),
        [d(0), d(2000), d(4000), d(10_000), d(11_000)],
        "(4.3), rule (1) twice, rule (2) twice"
    );
    assert_eq!(s.pipe(), Some(5000), "3 retransmissions + 2 new segments");
    assert_eq!(s.stats().retransmissions, 3);
    // RecoveryPoint (§5 (A)): a cumulative ACK below it keeps recovery...
    feed(&mut s, t(300), sack_of(d(2000), &[(3000, 4000), (5000, 10_000)]), 0);
    assert!(s.in_fast_recovery());
    assert_eq!(s.pipe(), Some(4000));
    assert_eq!(
        seqs(&drain(&mut s, t(300))),
        [d(12_000)],
        "rule (2): one more new segment"
    );
    feed(&mut s, t(301), sack_of(d(4000), &[(5000, 10_000)]), 0);
    assert!(s.in_fast_recovery());
    // ... and one at RecoveryPoint + 1 (HighData when recovery began, 10 000) ends it, with
    // cwnd unchanged.
    feed(&mut s, t(302), sack_of(d(10_000), &[]), 0);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.cwnd(), 5000);
    assert_eq!(s.tcp_stats().timeouts, 0);
}

/// RFC 6675 §4 NextSeg rule (3) (an unSACKed, not-lost hole below the highest SACK when no
/// new data is left) and rule (4) (one rescue retransmission of the highest unSACKed segment
/// once HighACK passes RescueRxt). 10 segments, all of the data; 0 and 7 lost.
#[test]
fn sack_next_seg_rules_three_and_four() {
    let mut s = sack_ten_in_flight(10_000);
    // 1..7 and 8..10 SACKed: hole 0 is lost, hole 7 (2000 octets above) is not.
    feed(&mut s, t(200), sack_of(d(0), &[(1000, 7000), (8000, 10_000)]), 0);
    assert!(s.in_fast_recovery());
    assert_eq!(seqs(&drain(&mut s, t(200))), [d(0), d(7000)], "(4.3), then rule (3)");
    assert_eq!(s.pipe(), Some(3000), "hole 7 in flight twice, hole 0 retransmitted");
    // The retransmission of 0 arrives: HighACK passes RescueRxt (set by (4.3)): rule (4).
    feed(&mut s, t(300), sack_of(d(7000), &[(8000, 10_000)]), 0);
    assert_eq!(seqs(&drain(&mut s, t(300))), [d(7000)], "rule (4): the rescue");
    feed(&mut s, t(301), sack_of(d(7000), &[(8000, 10_000)]), 0);
    assert_eq!(drain(&mut s, t(301)), [], "one rescue per recovery");
    assert_eq!(s.stats().retransmissions, 3);
}

/// RFC 6675 §5.1 and RFC 2018 §8: a timeout expunges the SACKed marks (the receiver may have
/// reneged) and ends recovery; RecoveryPoint = HighData; no new recovery starts until HighACK
/// reaches it; SACK blocks received after the timeout steer the resending around what the
/// receiver reports holding.
#[test]
fn sack_timeout_clears_the_scoreboard() {
    let mut s = sack_ten_in_flight(20_000);
    feed(&mut s, t(200), sack_of(d(0), &[(1000, 2000)]), 0);
    feed(&mut s, t(201), sack_of(d(0), &[(3000, 4000), (1000, 2000)]), 0);
    feed(
        &mut s,
        t(202),
        sack_of(d(0), &[(5000, 10_000), (3000, 4000), (1000, 2000)]),
        0,
    );
    drain(&mut s, t(202));
    assert_eq!(s.pipe(), Some(5000));
    let rto = s.poll_timeout().unwrap();
    s.on_timeout(rto);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.cwnd(), 1000);
    assert_eq!(
        s.pipe(),
        Some(12_000),
        "nothing SACKed, nothing lost: all 12 000 in the pipe"
    );
    assert_eq!(seqs(&drain(&mut s, rto)), [d(0)]);
    // The receiver reports again; the duplicate ACKs do not start a recovery (HighACK <
    // RecoveryPoint), and the resending skips the SACKed data.
    let at = rto + ms(100);
    feed(&mut s, at, sack_of(d(2000), &[(3000, 4000)]), 0);
    assert_eq!(seqs(&drain(&mut s, at)), [d(2000), d(4000)], "3000..4000 skipped");
    feed(&mut s, at, sack_of(d(2000), &[(5000, 12_000), (3000, 4000)]), 0);
    feed(&mut s, at, sack_of(d(2000), &[(4000, 12_000)]), 0);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.tcp_stats().fast_retransmits, 1);
}

/// A reduction is computed from min(FlightSize, cwnd), never from more than cwnd: RFC 9438
/// §4.6 and RFC 5681 §3.1 reduce the window, and after SACK recovery SND.MAX − SND.UNA counts
/// data the receiver SACKed (it has left the network), which can exceed cwnd many times over.
/// Here a new segment sent in recovery (10 000) is lost and its retransmission is outstanding
/// while SACKs keep the ACK clock sending; when the next recovery starts, 13 000 bytes lie
/// above SND.UNA against a cwnd of 5000, and ssthresh is 5000/2, not 13 000/2.
#[test]
fn reduction_after_sack_recovery_is_from_at_most_cwnd() {
    let mut s = sack_ten_in_flight(100_000);
    feed(&mut s, t(200), sack_of(d(0), &[(1000, 10_000)]), 0);
    assert_eq!(s.cwnd(), 5000);
    assert_eq!(
        seqs(&drain(&mut s, t(200))),
        [d(0), d(10_000), d(11_000), d(12_000), d(13_000)]
    );
    // 10 000 is lost (3000 SACKed above it) and retransmitted; the SACKs clock out new data.
    feed(&mut s, t(210), sack_of(d(0), &[(11_000, 14_000), (1000, 10_000)]), 0);
    assert_eq!(
        seqs(&drain(&mut s, t(210))),
        [d(10_000), d(14_000), d(15_000), d(16_000)]
    );
    feed(&mut s, t(220), sack_of(d(0), &[(11_000, 17_000), (1000, 10_000)]), 0);
    assert_eq!(seqs(&drain(&mut s, t(220))), [d(17_000), d(18_000), d(19_000)]);
    feed(&mut s, t(230), sack_of(d(0), &[(11_000, 20_000), (1000, 10_000)]), 0);
    assert_eq!(seqs(&drain(&mut s, t(230))), [d(20_000), d(21_000), d(22_000)]);
    // The retransmission of 0 arrives, and the last new segment is SACKed: recovery
    // (RecoveryPoint 10 000) is over, and the same ACK, a duplicate by its new SACK block,
    // starts the next one at once (the hole at 10 000 is lost: §5 step (2)).
    assert_eq!(s.flight_size(), 23_000);
    feed(&mut s, t(300), sack_of(d(10_000), &[(11_000, 23_000)]), 0);
    assert!(s.in_fast_recovery());
    assert_eq!(s.tcp_stats().fast_retransmits, 2);
    assert_eq!(s.flight_size(), 13_000, "SND.MAX − SND.UNA, 12 000 of it SACKed");
    assert_eq!(
        (s.ssthresh(), s.cwnd()),
        (Some(2500), 2500),
        "min(13 000, 5000) / 2; not 6500, above the old cwnd"
    );
}

/// `pacing`: data segments leave one per `len / rate` on average, rate = 2 · max(cwnd,
/// FlightSize) / SRTT in slow start below ssthresh/2 (Linux's `tcp_pacing_ss_ratio`), 1.2 ·
/// after (`tcp_pacing_ca_ratio`); a send quantum (2 segments between 1.2 and 24 Mbit/s, BBR
/// draft §4.2.2) may leave back to back; the pacing timer wakes the sender; ACKs are never
/// held back.
#[test]
fn pacing_spaces_data_segments_by_len_over_rate() {
    let mut s = connected_client(TcpConfig {
        pacing: true,
        initial_window_segments: Some(10),
        ..base()
    });
    // SRTT 100 ms, cwnd 10 000: 2 · 10 000 B / 0.1 s = 200 000 B/s (1.6 Mbit/s), 5 ms per
    // 1000 B, a quantum of 2 segments.
    assert_eq!(s.pacing_rate(), Some(200_000.0));
    send(&mut s, t(100), 4000);
    assert_eq!(
        seqs(&drain(&mut s, t(100))),
        [d(0), d(1000)],
        "one quantum, then the timer"
    );
    assert_eq!(s.poll_timeout(), Some(t(105)));
    assert_eq!(drain(&mut s, t(104)), [], "not before its time");
    s.on_timeout(t(105));
    assert_eq!(seqs(&drain(&mut s, t(105))), [d(2000)]);
    assert_eq!(
        s.poll_timeout(),
        Some(t(110)),
        "5 ms per segment once the quantum is used"
    );
    s.on_timeout(t(110));
    assert_eq!(seqs(&drain(&mut s, t(110))), [d(3000)]);
    // In congestion avoidance (cwnd >= ssthresh / 2) the ratio is 1.2.
    let mut ca = connected_client(TcpConfig {
        pacing: true,
        initial_window_segments: Some(10),
        initial_ssthresh_bytes: Some(10_000),
        ..base()
    });
    assert_eq!(ca.pacing_rate(), Some(1.2 * 10_000.0 / 0.1));
    // Without the key nothing is paced: the whole window leaves at once.
    let mut plain = connected_client(TcpConfig {
        initial_window_segments: Some(10),
        ..base()
    });
    send(&mut plain, t(100), 3000);
    assert_eq!(drain(&mut plain, t(100)).len(), 3);
    assert_eq!(plain.pacing_rate(), None);
    send(&mut ca, t(100), 1000);
    assert_eq!(drain(&mut ca, t(100)).len(), 1);
}

// ---------------------------------------------------------------- RFC 7323 window scaling

fn ws_config(recv_buffer_bytes: u32) -> TcpConfig {
    TcpConfig {
        window_scaling: true,
        recv_buffer_bytes,
        ..base()
    }
}

/// RFC 7323 §2.2/§2.3: the SYN offers the smallest shift covering the receive buffer (1 MiB:
/// 5) in an unscaled SYN window; once the SYN-ACK carried the option too, every later window
/// is scaled both ways: ours is the buffer >> 5, the peer's field is shifted by its count, and
/// the sender uses a window above 65 535 bytes.
#[test]
fn window_scale_negotiated_and_applied_both_ways() {
    let mut s = client(TcpConfig {
        initial_window_segments: Some(100),
        send_buffer_bytes: 1 << 20,
        ..ws_config(1 << 20)
    });
    let syn = drain_segments(&mut s, t(0));
    let h = tcp_of(&syn[0]);
    assert_eq!(
        (h.window_scale, h.window),
        (Some(5), 65_535),
        "a SYN's window is not scaled"
    );
    assert_eq!(syn[0].ip_len, 20 + 28, "MSS 4 + NOP, WS 3");
    feed(
        &mut s,
        t(100),
        TcpRepr {
            window_scale: Some(3),
            window: 65_535,
            ..syn_ack()
        },
        0,
    );
    assert_eq!(s.window_scale(), Some((5, 3)));
    assert_eq!(s.rwnd(), 65_535, "the SYN-ACK's window is taken unscaled");
    let ack = drain(&mut s, t(100));
    assert_eq!((ack[0].0.window, ack[0].0.window_scale), (32_768, None), "1 MiB >> 5");
    // The peer's window field of 30 000 means 240 000 bytes.
    feed(&mut s, t(150), with_window(ack_of(d(0)), 30_000), 0);
    assert_eq!(s.rwnd(), 240_000);
    send(&mut s, t(150), 200_000);
    let out = drain(&mut s, t(150));
    assert_eq!(out.len(), 100, "cwnd-limited: 100 000 bytes in flight");
    assert_eq!(s.flight_size(), 100_000);
    // With a field of 11 000 (88 000 bytes), the window limits the sender above 65 535.
    feed(&mut s, t(250), with_window(ack_of(d(0)), 11_000), 0);
    assert_eq!(s.rwnd(), 88_000);
    let mut s2 = client(TcpConfig {
        initial_window_segments: Some(100),
        send_buffer_bytes: 1 << 20,
        ..ws_config(1 << 20)
    });
    drain(&mut s2, t(0));
    feed(
        &mut s2,
        t(100),
        TcpRepr {
            window_scale: Some(3),
            ..syn_ack()
        },
        0,
    );
    drain(&mut s2, t(100));
    feed(&mut s2, t(110), with_window(ack_of(d(0)), 11_000), 0);
    send(&mut s2, t(110), 200_000);
    assert_eq!(drain(&mut s2, t(110)).len(), 88, "88 000 bytes of window, above 65 535");
}

/// RFC 7323 §2.2: no scaling unless both SYNs carry the option (a SYN-ACK without it leaves
/// every window unscaled and the buffer capped at 65 535 advertised); a server answers the
/// option only when offered; a shift above 14 counts as 14 (§2.3).
#[test]
fn window_scale_needs_both_syns() {
    let mut s = client(ws_config(1 << 20));
    drain(&mut s, t(0));
    feed(&mut s, t(100), syn_ack(), 0);
    assert_eq!(s.window_scale(), None);
    assert_eq!(drain(&mut s, t(100))[0].0.window, 65_535);
    feed(&mut s, t(150), with_window(ack_of(d(0)), 1000), 0);
    assert_eq!(s.rwnd(), 1000);
    for offer in [None, Some(15)] {
        let mut srv = server(ws_config(200_000));
        feed(
            &mut srv,
            t(0),
            TcpRepr {
                mss: Some(1000),
                window_scale: offer,
                ..theirs(IRS, 0, SYN)
            },
            0,
        );
        let out = drain(&mut srv, t(0));
        assert_eq!(out[0].0.window_scale, offer.map(|_| 2), "200 000 >> 2 fits 16 bits");
        assert_eq!(out[0].0.window, 65_535);
        assert_eq!(srv.window_scale(), offer.map(|_| (2, 14)));
    }
}

/// Without the option, the defaults are unchanged: no Window Scale or SACK-permitted option
/// on the SYN, and the report has exactly its three series.
#[test]
fn defaults_offer_no_new_options_and_report_three_series() {
    let mut s = client(base());
    let h = tcp_of(&drain_segments(&mut s, t(0))[0]);
    assert_eq!((h.window_scale, h.sack_permitted), (None, false));
    let names: Vec<_> = s.report().congestion.iter().map(|&(n, _)| n).collect();
    assert_eq!(names, ["cwnd_bytes", "ssthresh_bytes", "srtt_s"]);
    let s = sack_client(sack_config(LossRecovery::Sack));
    let r = s.report();
    assert_eq!(r.congestion[3], ("pipe_bytes", Some(0.0)));
    let c = client(TcpConfig {
        congestion: CongestionAlgorithm::Cubic,
        ..base()
    });
    let names: Vec<_> = c.report().congestion.iter().map(|&(n, _)| n).collect();
    assert_eq!(names, ["cwnd_bytes", "ssthresh_bytes", "srtt_s", "w_max_bytes"]);
}

mod ecn;
