//! Packet-by-packet tests: feed one packet at an explicit time, then assert exactly what comes
//! out. Each test names the rule of RFC 9260 it checks.
//!
//! The socket under test has port 5000, Initiate Tag and Initial TSN [`TAG`]; its peer (port
//! 80) uses [`PEER_TAG`] for both. `tsn(k)` is our k-th TSN (from 0), `ptsn(k)` the peer's.

use super::*;
use crate::tcp::Open;
use crate::Header as _;
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{
    ControlChunk, DataChunk, DataFlags, ErrorCause, InitChunk, Payload, SackChunk, SctpRepr, StateCookie,
};
use tpsim_wire::SizeConvention;

pub(super) const LOCAL: u16 = 5000;
pub(super) const REMOTE: u16 = 80;
pub(super) const TAG: u32 = 0x1000_0000;
pub(super) const PEER_TAG: u32 = 0x2000_0000;
/// One-way delay of the handshake in the helpers.
pub(super) const OWD_MS: u64 = 50;

pub(super) fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}
pub(super) fn tsn(k: u32) -> u32 {
    TAG.wrapping_add(k)
}
pub(super) fn ptsn(k: u32) -> u32 {
    PEER_TAG.wrapping_add(k)
}
pub(super) fn sock_cfg(mtu: u32, sizes: SizeConvention) -> SocketConfig {
    SocketConfig {
        local_port: LOCAL,
        remote_port: REMOTE,
        sizes,
        mtu,
        draw_seed: 0,
    }
}
/// The profile with our fixed tag and no heartbeats (tests that want them turn them on).
pub(super) fn cfg(p: SctpProfile) -> SctpConfig {
    SctpConfig {
        initiate_tag: Some(TAG),
        hb_interval: None,
        ..SctpConfig::for_profile(p)
    }
}
pub(super) fn msg(id: u64, len: u32, at: SimTime) -> Message {
    Message { id, len, created: at }
}

/// Everything the socket sends now.
pub(super) fn out(s: &mut SctpSocket, now: SimTime) -> Vec<SctpRepr> {
    std::iter::from_fn(|| s.poll_transmit(now))
        .map(|seg| match seg.header {
            L4Header::Sctp(h) => *h,
            _ => panic!("not SCTP"),
        })
        .collect()
}
pub(super) fn events(s: &mut SctpSocket) -> Vec<TransportEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}
/// A packet from the peer, with our tag.
pub(super) fn from_peer() -> SctpRepr {
    SctpRepr::new(REMOTE, LOCAL, TAG)
}
pub(super) fn seg(h: SctpRepr) -> Segment {
    Segment {
        addr: None,
        header: L4Header::Sctp(SctpBox::new(h)),
        payload_len: h.payload_len(),
        ip_len: 20 + h.packet_len(),
        message: None,
        first_tx: SimTime::ZERO,
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    }
}
pub(super) fn feed(s: &mut SctpSocket, now: SimTime, h: SctpRepr) {
    s.on_segment(now, &seg(h));
}
/// A SACK from the peer: Cumulative TSN Ack `cum` (ours), gap blocks, a_rwnd.
pub(super) fn sack_pkt(cum: u32, gaps: &[(u16, u16)], a_rwnd: u32) -> SctpRepr {
    let mut s = SackChunk::new(cum, a_rwnd);
    for &(a, b) in gaps {
        assert!(s.push_gap(a, b));
    }
    SctpRepr {
        sack: Some(s),
        ..from_peer()
    }
}
pub(super) fn peer_init() -> InitChunk {
    InitChunk {
        initiate_tag: PEER_TAG,
        a_rwnd: 65536,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: PEER_TAG,
        addresses: Default::default(),
        forward_tsn: false,
    }
}
/// A DATA chunk from the peer.
pub(super) fn pdata(k: u32, stream: u16, ssn: u16, flags: DataFlags, len: u16, id: u64) -> DataChunk {
    DataChunk {
        flags,
        tsn: ptsn(k),
        stream_id: stream,
        ssn,
        len,
        msg_id: id as u32,
        payload: Payload::default(),
    }
}
pub(super) fn data_pkt(chunks: &[DataChunk]) -> SctpRepr {
    let mut p = from_peer();
    for c in chunks {
        assert!(p.data.push(*c));
    }
    p
}
pub(super) fn data_of(ps: &[SctpRepr]) -> Vec<(u32, u16)> {
    ps.iter()
        .flat_map(|p| p.data.as_slice().iter().map(|d| (d.tsn, d.len)))
        .collect()
}

/// An active socket through the handshake (INIT at 0, INIT ACK at 50 ms, COOKIE ACK at
/// 150 ms): ESTABLISHED at [`established_at`], RTT measured as 100 ms, RTO = RTO.Min (1 s).
pub(super) fn established(c: SctpConfig, mtu: u32) -> SctpSocket {
    let mut s = SctpSocket::new(sock_cfg(mtu, SizeConvention::Standard), c, Open::Active, SimTime::ZERO);
    let init = out(&mut s, SimTime::ZERO);
    assert!(matches!(init[0].control, Some(ControlChunk::Init(_))));
    feed(
        &mut s,
        t(2 * OWD_MS),
        SctpRepr {
            control: Some(ControlChunk::InitAck(peer_init(), StateCookie([9; 32]))),
            ..from_peer()
        },
    );
    let echo = out(&mut s, t(2 * OWD_MS));
    assert!(matches!(echo[0].control, Some(ControlChunk::CookieEcho(_))));
    feed(
        &mut s,
        established_at(),
        SctpRepr {
            control: Some(ControlChunk::CookieAck),
            ..from_peer()
        },
    );
    assert_eq!(s.state(), State::Established);
    assert_eq!(events(&mut s), vec![TransportEvent::Connected]);
    s
}
pub(super) fn established_at() -> SimTime {
    t(4 * OWD_MS)
}
/// Hands `n` messages of `len` bytes to `s` at `now`.
pub(super) fn give(s: &mut SctpSocket, now: SimTime, first_id: u64, n: u64, len: u32) {
    for k in 0..n {
        s.send(now, msg(first_id + k, len, now)).unwrap();
    }
}

// ---------------------------------------------------------------------- establishment (§5.1)

/// RFC 9260 §5.1 A, §3.3.2: INIT with tag 0, our Initiate Tag, a_rwnd, streams, Initial TSN;
/// T1-init at RTO.Initial; §5.1 C: retransmitted with the RTO doubled, then given up after
/// Max.Init.Retransmits.
#[test]
fn init_and_t1_init_backoff_until_max_init_retransmits() {
    let c = SctpConfig {
        streams: 4,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Active, t(0));
    assert_eq!(s.state(), State::CookieWait);
    let p = out(&mut s, t(0));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].verification_tag, 0);
    assert_eq!(
        p[0].control,
        Some(ControlChunk::Init(InitChunk {
            initiate_tag: TAG,
            a_rwnd: 65536,
            outbound_streams: 4,
            inbound_streams: 65535,
            initial_tsn: TAG,
            addresses: Default::default(),
            forward_tsn: false,
        }))
    );
    let mut at = 0;
    let mut rto = 1000;
    for k in 1..=8 {
        assert_eq!(s.poll_timeout(), Some(t(at + rto)), "retransmission {k}");
        at += rto;
        s.on_timeout(t(at));
        assert!(matches!(out(&mut s, t(at))[0].control, Some(ControlChunk::Init(_))));
        rto = (rto * 2).min(60_000);
    }
    s.on_timeout(t(at + rto));
    assert_eq!(s.state(), State::Closed);
    assert!(out(&mut s, t(at + rto)).is_empty(), "no ABORT to a peer without a TCB");
    assert_eq!(events(&mut s), vec![TransportEvent::Closed]);
    assert!(s.report().gave_up);
}

/// RFC 9260 §5.1 C: T1-cookie expiring retransmits the COOKIE ECHO with the RTO doubled (§6.3.3
/// E2 applied to T1), up to Max.Init.Retransmits (8) times; the next expiry aborts the
/// initialization (the peer may hold a TCB: ABORT with its tag) and reports it.
#[test]
fn t1_cookie_backoff_until_max_init_retransmits() {
    let mut s = SctpSocket::new(
        sock_cfg(1500, SizeConvention::Standard),
        cfg(SctpProfile::Rfc9260),
        Open::Active,
        t(0),
    );
    out(&mut s, t(0));
    let ack_at = 2 * OWD_MS;
    feed(
        &mut s,
        t(ack_at),
        SctpRepr {
            control: Some(ControlChunk::InitAck(peer_init(), StateCookie([9; 32]))),
            ..from_peer()
        },
    );
    assert!(matches!(
        out(&mut s, t(ack_at))[0].control,
        Some(ControlChunk::CookieEcho(_))
    ));
    assert_eq!(s.state(), State::CookieEchoed);
    // §6.3.1 C2: the INIT/INIT ACK exchange measured R = 100 ms: RTO = max(R + 4·R/2, RTO.Min).
    let mut rto = (3 * ack_at).max(1000);
    let mut at = ack_at;
    for k in 1..=8 {
        assert_eq!(s.poll_timeout(), Some(t(at + rto)), "T1-cookie {k}");
        at += rto;
        s.on_timeout(t(at));
        assert!(matches!(
            out(&mut s, t(at))[0].control,
            Some(ControlChunk::CookieEcho(_))
        ));
        assert_eq!(s.init_retransmissions(), k);
        rto = (rto * 2).min(60_000);
    }
    s.on_timeout(t(at + rto));
    assert_eq!(s.state(), State::Closed);
    let p = out(&mut s, t(at + rto));
    assert_eq!(p[0].control, Some(ControlChunk::Abort { t: false, cause: None }));
    assert_eq!(p[0].verification_tag, PEER_TAG);
    assert_eq!(events(&mut s), vec![TransportEvent::Closed]);
    assert!(s.report().gave_up);
}

/// RFC 9260 §5.1 B–E (passive end): INIT is answered with INIT ACK and a cookie, no TCB kept;
/// a valid COOKIE ECHO builds the association, COOKIE ACK answers; §5.2.4 D: a repeated
/// COOKIE ECHO is acknowledged again.
#[test]
fn passive_open_with_state_cookie() {
    let c = SctpConfig {
        streams: 3,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Passive, t(0));
    let init = SctpRepr {
        control: Some(ControlChunk::Init(peer_init())),
        ..SctpRepr::new(REMOTE, LOCAL, 0)
    };
    feed(&mut s, t(10), init);
    let p = out(&mut s, t(10));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].verification_tag, PEER_TAG);
    let Some(ControlChunk::InitAck(ack, cookie)) = p[0].control else {
        panic!("{p:?}")
    };
    assert_eq!((ack.initiate_tag, ack.initial_tsn, ack.outbound_streams), (TAG, TAG, 3));
    assert_eq!(s.state(), State::Closed, "§5.1 B: no TCB after INIT ACK");
    // A forged cookie is ignored.
    let mut bad = cookie;
    bad.0[0] ^= 1;
    feed(
        &mut s,
        t(20),
        SctpRepr {
            control: Some(ControlChunk::CookieEcho(bad)),
            ..from_peer()
        },
    );
    assert_eq!(s.state(), State::Closed);
    // The real one, with a DATA chunk bundled (§5.1 D allows it).
    let mut echo = SctpRepr {
        control: Some(ControlChunk::CookieEcho(cookie)),
        ..from_peer()
    };
    echo.data.push(pdata(0, 0, 0, DataFlags::WHOLE, 100, 7));
    feed(&mut s, t(20), echo);
    assert_eq!(s.state(), State::Established);
    let p = out(&mut s, t(20));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].control, Some(ControlChunk::CookieAck));
    assert_eq!(p[0].verification_tag, PEER_TAG);
    assert!(p[0].sack.is_none(), "first DATA packet: SACK delayed");
    let ev = events(&mut s);
    assert_eq!(ev[0], TransportEvent::Connected);
    assert!(matches!(ev[1], TransportEvent::Delivered { message, .. } if message.id == 7 && message.len == 100));
    assert_eq!((s.outbound_streams(), s.inbound_streams()), (3, 10));
    feed(
        &mut s,
        t(30),
        SctpRepr {
            control: Some(ControlChunk::CookieEcho(cookie)),
            ..from_peer()
        },
    );
    assert_eq!(out(&mut s, t(30))[0].control, Some(ControlChunk::CookieAck));
}

/// RFC 9260 §5.1.5 (3) / §3.3.10.3: a cookie older than Valid.Cookie.Life gets ERROR
/// "Stale Cookie"; §5.2.6: the active end starts over with an INIT.
#[test]
fn stale_cookie() {
    let mut srv = SctpSocket::new(
        sock_cfg(1500, SizeConvention::Standard),
        cfg(SctpProfile::Rfc9260),
        Open::Passive,
        t(0),
    );
    feed(
        &mut srv,
        t(0),
        SctpRepr {
            control: Some(ControlChunk::Init(peer_init())),
            ..SctpRepr::new(REMOTE, LOCAL, 0)
        },
    );
    let Some(ControlChunk::InitAck(_, cookie)) = out(&mut srv, t(0))[0].control else {
        panic!()
    };
    feed(
        &mut srv,
        t(60_001),
        SctpRepr {
            control: Some(ControlChunk::CookieEcho(cookie)),
            ..from_peer()
        },
    );
    let p = out(&mut srv, t(60_001));
    // §3.3.10.3: Measure of Staleness = now − (creation + Valid.Cookie.Life) = 60.001 s − 60 s.
    assert_eq!(p[0].control, Some(ControlChunk::Error(ErrorCause::stale_cookie(1000))));
    assert_eq!(srv.state(), State::Closed);

    let mut cl = SctpSocket::new(
        sock_cfg(1500, SizeConvention::Standard),
        cfg(SctpProfile::Rfc9260),
        Open::Active,
        t(0),
    );
    out(&mut cl, t(0));
    feed(
        &mut cl,
        t(100),
        SctpRepr {
            control: Some(ControlChunk::InitAck(peer_init(), cookie)),
            ..from_peer()
        },
    );
    out(&mut cl, t(100));
    feed(
        &mut cl,
        t(200),
        SctpRepr {
            control: Some(ControlChunk::Error(ErrorCause::STALE_COOKIE)),
            ..from_peer()
        },
    );
    assert_eq!(cl.state(), State::CookieWait);
    assert!(matches!(out(&mut cl, t(200))[0].control, Some(ControlChunk::Init(_))));
}

/// RFC 9260 §5.1 C/D: the COOKIE ECHO may carry DATA; T1-cookie retransmits the COOKIE ECHO
/// alone (the DATA waits, marked, for the association).
#[test]
fn data_bundled_with_cookie_echo_and_t1_cookie() {
    let mut s = SctpSocket::new(
        sock_cfg(1500, SizeConvention::Standard),
        cfg(SctpProfile::Rfc9260),
        Open::Active,
        t(0),
    );
    give(&mut s, t(0), 0, 2, 100);
    out(&mut s, t(0));
    feed(
        &mut s,
        t(100),
        SctpRepr {
            control: Some(ControlChunk::InitAck(peer_init(), StateCookie([1; 32]))),
            ..from_peer()
        },
    );
    let p = out(&mut s, t(100));
    assert_eq!(p.len(), 1);
    assert!(matches!(p[0].control, Some(ControlChunk::CookieEcho(_))));
    assert_eq!(data_of(&p), vec![(tsn(0), 100), (tsn(1), 100)]);
    assert_eq!(p[0].verification_tag, PEER_TAG);
    // RTO after the INIT/INIT ACK measurement of 100 ms: RTO.Min, 1 s.
    assert_eq!(s.poll_timeout(), Some(t(1100)));
    s.on_timeout(t(1100));
    let p = out(&mut s, t(1100));
    assert_eq!(p.len(), 1);
    assert!(matches!(p[0].control, Some(ControlChunk::CookieEcho(_))));
    assert!(p[0].data.is_empty());
    assert_eq!(s.poll_timeout(), Some(t(3100)), "RTO doubled");
    feed(
        &mut s,
        t(3200),
        SctpRepr {
            control: Some(ControlChunk::CookieAck),
            ..from_peer()
        },
    );
    assert_eq!(s.state(), State::Established);
    assert_eq!(data_of(&out(&mut s, t(3200))), vec![(tsn(0), 100), (tsn(1), 100)]);
    assert_eq!(s.stats().retransmissions, 2);
}

/// RFC 9260 §8.5: a packet whose tag is not ours is dropped; §8.5.1: ABORT with the T bit
/// carries the peer's tag.
#[test]
fn verification_tag_and_abort() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    feed(
        &mut s,
        t(300),
        SctpRepr {
            control: Some(ControlChunk::Abort { t: false, cause: None }),
            ..SctpRepr::new(REMOTE, LOCAL, 12345)
        },
    );
    assert_eq!(s.state(), State::Established);
    feed(
        &mut s,
        t(300),
        SctpRepr {
            control: Some(ControlChunk::Abort { t: true, cause: None }),
            ..SctpRepr::new(REMOTE, LOCAL, PEER_TAG)
        },
    );
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![TransportEvent::Closed]);
    assert_eq!(s.sctp_stats().peer_aborted, 1);
    // §8.4 (8): now out of the blue, DATA is answered by ABORT with the T bit.
    feed(&mut s, t(400), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 1, 0)]));
    let p = out(&mut s, t(400));
    assert_eq!(p[0].control, Some(ControlChunk::Abort { t: true, cause: None }));
    assert_eq!(p[0].verification_tag, TAG, "the packet's tag, reflected");
}

/// The ABORT primitive (RFC 9260 §9.1): ABORT with "User-Initiated Abort", CLOSED.
#[test]
fn user_abort() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    s.abort(t(300));
    let p = out(&mut s, t(300));
    assert_eq!(
        p[0].control,
        Some(ControlChunk::Abort {
            t: false,
            cause: Some(ErrorCause::USER_ABORT)
        })
    );
    assert_eq!(p[0].verification_tag, PEER_TAG);
    assert_eq!(s.state(), State::Closed);
    assert!(!s.can_send(1));
}

// ---------------------------------------------------------------------- data transfer (§6)

/// RFC 9260 §6.9: a message longer than PMDCS − 16 is cut into fragments with consecutive TSNs,
/// B on the first, E on the last, one SSN; PMDCS = 1500 − 20 − 12 = 1468.
#[test]
fn fragmentation_at_pmdcs() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    assert_eq!((s.pmdcs(), s.max_fragment()), (1468, 1452));
    give(&mut s, t(300), 0, 1, 4000);
    let p = out(&mut s, t(300));
    let d: Vec<_> = p.iter().flat_map(|p| p.data.as_slice().to_vec()).collect();
    assert_eq!(d.len(), 3);
    assert_eq!(
        d.iter().map(|c| (c.tsn, c.len, c.ssn)).collect::<Vec<_>>(),
        vec![(tsn(0), 1452, 0), (tsn(1), 1452, 0), (tsn(2), 1096, 0)]
    );
    assert_eq!(
        d.iter().map(|c| c.flags).collect::<Vec<_>>(),
        vec![DataFlags::BEGIN, DataFlags::default(), DataFlags::END]
    );
    assert!(p.iter().all(|p| p.packet_len() + 20 <= 1500));
    assert_eq!(p[0].packet_len() + 20, 1500);
}

/// RFC 9260 §6.10: small messages are bundled into one packet (here up to the chunks a packet
/// holds); §6.5: SSNs per stream; §6.6: unordered chunks carry U and no SSN sequence.
#[test]
fn bundling_streams_and_unordered() {
    let c = SctpConfig {
        streams: 3,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    let now = t(300);
    s.send_on(now, msg(0, 10, now), 1, false).unwrap();
    s.send_on(now, msg(1, 10, now), 2, false).unwrap();
    s.send_on(now, msg(2, 10, now), 1, false).unwrap();
    s.send_on(now, msg(3, 10, now), 1, true).unwrap();
    s.send_on(now, msg(4, 10, now), 4, false).unwrap(); // stream 4 mod 3 = 1
    let p = out(&mut s, now);
    // 5 chunks of 28 bytes fit one 1500-byte packet; a packet holds MAX_DATA_CHUNKS of them.
    let per_packet = 5.min(tpsim_wire::sctp::MAX_DATA_CHUNKS);
    assert_eq!(p.len(), 5usize.div_ceil(per_packet));
    let d: Vec<_> = p.iter().flat_map(|p| p.data.as_slice().to_vec()).collect();
    assert_eq!(
        d.iter()
            .map(|c| (c.stream_id, c.ssn, c.flags.contains(DataFlags::UNORDERED)))
            .collect::<Vec<_>>(),
        vec![(1, 0, false), (2, 0, false), (1, 1, false), (1, 0, true), (1, 2, false)]
    );
    assert_eq!(p[0].data.len(), per_packet);
    assert_eq!(p[0].packet_len(), 12 + 28 * per_packet as u32);
}

/// RFC 9260 §6.10 makes bundling a "MAY": with `bundling` off every packet carries one DATA
/// chunk, so a packet-size sweep changes SCTP's packets as it does TCP's.
#[test]
fn bundling_off_sends_one_data_chunk_a_packet() {
    let c = SctpConfig {
        bundling: false,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    let now = t(300);
    for i in 0..3 {
        s.send(now, msg(i, 10, now)).unwrap();
    }
    let p = out(&mut s, now);
    assert_eq!(p.iter().map(|p| p.data.len()).collect::<Vec<_>>(), vec![1, 1, 1]);
    assert_eq!(p.iter().map(|p| p.packet_len()).collect::<Vec<_>>(), vec![12 + 28; 3]);
}

/// RFC 9260 §6.2: the receiver SACKs at least every second packet with DATA, or within the
/// delayed-SACK time (200 ms) of the first unacknowledged one.
#[test]
fn delayed_sack_every_second_packet_or_200ms() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    feed(&mut s, t(300), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 100, 0)]));
    assert!(out(&mut s, t(300)).is_empty());
    assert_eq!(s.poll_timeout(), Some(t(500)));
    s.on_timeout(t(500));
    let p = out(&mut s, t(500));
    assert_eq!(p[0].sack.map(|x| (x.cum_tsn_ack, x.a_rwnd)), Some((ptsn(0), 65536)));
    // SACK_MultiDataChunks: two packets, one SACK for both.
    feed(&mut s, t(600), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 100, 1)]));
    assert!(out(&mut s, t(600)).is_empty());
    feed(&mut s, t(610), data_pkt(&[pdata(2, 0, 2, DataFlags::WHOLE, 100, 2)]));
    let p = out(&mut s, t(610));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].sack.unwrap().cum_tsn_ack, ptsn(2));
    assert!(p[0].sack.unwrap().gaps().is_empty());
    assert_eq!(events(&mut s).len(), 3);
    assert_eq!(s.stats().ack_segments, 2);
}

/// RFC 9260 §6.2 / §6.7: a gap is reported at once with Gap Ack Blocks, and the SACK that sees
/// it filled goes at once too; a duplicate without new data gets an immediate SACK reporting it.
#[test]
fn gaps_and_duplicates_are_sacked_at_once() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    feed(&mut s, t(300), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 100, 0)]));
    feed(&mut s, t(301), data_pkt(&[pdata(2, 0, 2, DataFlags::WHOLE, 100, 2)]));
    let p = out(&mut s, t(301));
    let sk = p[0].sack.unwrap();
    assert_eq!(
        (sk.cum_tsn_ack, sk.gaps().to_vec()),
        (ptsn(0), vec![tpsim_wire::sctp::GapAckBlock { start: 2, end: 2 }])
    );
    feed(&mut s, t(302), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 100, 1)]));
    let p = out(&mut s, t(302));
    assert_eq!(p[0].sack.unwrap().cum_tsn_ack, ptsn(2));
    feed(&mut s, t(303), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 100, 1)]));
    let p = out(&mut s, t(303));
    assert_eq!(p[0].sack.unwrap().dups(), &[ptsn(1)]);
    assert_eq!(s.sctp_stats().duplicate_tsns, 1);
    let ids: Vec<u64> = events(&mut s)
        .iter()
        .filter_map(|e| match e {
            TransportEvent::Delivered { message, .. } => Some(message.id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec![0, 1, 2]);
}

/// RFC 9260 §6.2.1 A: a SACK whose Cumulative TSN Ack is below the Cumulative TSN Ack Point is
/// dropped; B: rwnd = a_rwnd − bytes outstanding.
#[test]
fn sack_processing_rules_a_b() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 3, 1000);
    assert_eq!(out(&mut s, t(300)).len(), 3);
    feed(&mut s, t(400), sack_pkt(tsn(1), &[], 10_000));
    assert_eq!(s.peer_rwnd(), 10_000 - 1000);
    assert_eq!(s.outstanding_chunks(), 1);
    // An old SACK (cum TSN 0) with a huge window changes nothing.
    feed(&mut s, t(401), sack_pkt(tsn(0), &[], 60_000));
    assert_eq!(s.peer_rwnd(), 9000);
    feed(&mut s, t(402), sack_pkt(tsn(2), &[], 60_000));
    assert_eq!(s.peer_rwnd(), 60_000);
    assert_eq!(s.outstanding_chunks(), 0);
    assert_eq!(
        s.poll_timeout(),
        None,
        "§6.3.2 R2: T3-rtx off when everything is acknowledged"
    );
}

/// RFC 9260 §6.1 A: with the peer's rwnd at 0, one DATA chunk may still be in flight (a
/// zero-window probe); nothing more until the window opens.
#[test]
fn zero_window_probe() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 1, 1000);
    out(&mut s, t(300));
    feed(&mut s, t(400), sack_pkt(tsn(0), &[], 0));
    give(&mut s, t(400), 1, 2, 1000);
    let p = out(&mut s, t(400));
    assert_eq!(data_of(&p), vec![(tsn(1), 1000)], "one probe");
    assert_eq!(s.sctp_stats().window_probes, 1);
    assert!(out(&mut s, t(401)).is_empty());
    feed(&mut s, t(500), sack_pkt(tsn(1), &[], 0));
    assert_eq!(
        data_of(&out(&mut s, t(500))),
        vec![(tsn(2), 1000)],
        "next probe once the last is acknowledged"
    );
    feed(&mut s, t(600), sack_pkt(tsn(2), &[], 50_000));
    assert_eq!(s.peer_rwnd(), 50_000);
}

/// RFC 9260 §6.2: the receive window shrinks with data held for reordering; receiver SWS
/// avoidance advertises 0 below min(buffer/2, PMDCS); the reopened window is announced.
#[test]
fn receive_window_and_silly_window_avoidance() {
    let c = SctpConfig {
        recv_buffer_bytes: 4000,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    // TSN 0 missing: 1 and 2 are held.
    feed(&mut s, t(300), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 1000, 1)]));
    assert_eq!(out(&mut s, t(300))[0].sack.unwrap().a_rwnd, 3000);
    feed(&mut s, t(301), data_pkt(&[pdata(2, 0, 2, DataFlags::WHOLE, 1600, 2)]));
    assert_eq!(
        out(&mut s, t(301))[0].sack.unwrap().a_rwnd,
        0,
        "1400 free < min(2000, 1468)"
    );
    feed(&mut s, t(302), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 100, 0)]));
    assert_eq!(out(&mut s, t(302))[0].sack.unwrap().a_rwnd, 4000);
    // A paused application keeps messages; the window closes and reopens when it reads.
    s.set_receive_paused(t(310), true);
    feed(&mut s, t(320), data_pkt(&[pdata(3, 0, 3, DataFlags::WHOLE, 1000, 3)]));
    feed(&mut s, t(321), data_pkt(&[pdata(4, 0, 4, DataFlags::WHOLE, 2000, 4)]));
    assert_eq!(out(&mut s, t(321))[0].sack.unwrap().a_rwnd, 0);
    s.set_receive_paused(t(400), false);
    assert_eq!(out(&mut s, t(400))[0].sack.unwrap().a_rwnd, 4000, "window update");
}

/// RFC 9260 §6.5: DATA on a stream that does not exist is acknowledged, dropped, and reported
/// with ERROR "Invalid Stream Identifier".
#[test]
fn invalid_stream() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    feed(&mut s, t(300), data_pkt(&[pdata(0, 10, 0, DataFlags::WHOLE, 10, 0)]));
    let p = out(&mut s, t(300));
    // §3.3.10.1: the cause names the stream.
    assert_eq!(p[0].control, Some(ControlChunk::Error(ErrorCause::invalid_stream(10))));
    s.on_timeout(t(500));
    assert_eq!(out(&mut s, t(500))[0].sack.unwrap().cum_tsn_ack, ptsn(0));
    assert!(events(&mut s).is_empty());
}

// ---------------------------------------------------------------------- timers, RTT (§6.3)

/// RFC 9260 §6.3.1 C4/C5: one chunk timed per round trip; Karn: no measurement from a
/// retransmitted chunk; §6.3.2 R3: T3-rtx restarted when the earliest outstanding is acked.
#[test]
fn rtt_measurement_karn_and_t3_restart() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    assert_eq!(s.path().rtt.samples(), 2, "INIT/INIT ACK and COOKIE ECHO/COOKIE ACK");
    give(&mut s, t(300), 0, 2, 1000);
    out(&mut s, t(300));
    assert_eq!(s.poll_timeout(), Some(t(1300)));
    feed(&mut s, t(500), sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.path().rtt.samples(), 3);
    assert_eq!(s.poll_timeout(), Some(t(1500)), "R3");
    // TSN 1 times out and is retransmitted: its acknowledgement gives no sample.
    s.on_timeout(t(1500));
    assert_eq!(data_of(&out(&mut s, t(1500))), vec![(tsn(1), 1000)]);
    feed(&mut s, t(3700), sack_pkt(tsn(1), &[], 65536));
    assert_eq!(s.path().rtt.samples(), 3);
    assert_eq!(
        s.rto(),
        SimDuration::from_secs(2),
        "still backed off until a new measurement"
    );
}

/// RFC 9260 §6.3.3 E1–E3 and §7.2.1: on T3-rtx expiry ssthresh = max(cwnd/2, 4·PMDCS),
/// cwnd = PMDCS, RTO doubled, the earliest outstanding chunks that fit one packet are resent,
/// and only one packet is in flight until acknowledged.
#[test]
fn t3_rtx_expiry() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 6, 1000);
    assert_eq!(
        out(&mut s, t(300)).len(),
        4,
        "4404-byte window: 4 packets (the last overbooks)"
    );
    s.on_timeout(t(1300));
    assert_eq!((s.cwnd(), s.ssthresh()), (1468, 5872));
    assert_eq!(s.rto(), SimDuration::from_secs(2));
    let p = out(&mut s, t(1300));
    assert_eq!(data_of(&p), vec![(tsn(0), 1000)]);
    assert_eq!(s.sctp_stats().timeouts, 1);
    assert_eq!(s.association_errors(), 1);
    feed(&mut s, t(1400), sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.association_errors(), 0, "§8.1: reset by an acknowledgement");
    // The timed-out packet is acknowledged: rule B again (one packet may overbook cwnd).
    let p = out(&mut s, t(1400));
    assert_eq!(p.len(), 2);
    assert_eq!(data_of(&p), vec![(tsn(1), 1000), (tsn(2), 1000)]);
}

/// RFC 9260 §8.1: past Association.Max.Retrans (10) consecutive T3-rtx expiries the
/// association is given up: ABORT, CLOSED.
#[test]
fn association_max_retrans() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 1, 1000);
    out(&mut s, t(300));
    for k in 1..=10 {
        let at = s.poll_timeout().unwrap();
        s.on_timeout(at);
        assert_eq!(data_of(&out(&mut s, at)).len(), 1, "retransmission {k}");
        assert_eq!(s.association_errors(), k);
        assert_eq!(s.path().active, k <= 5, "§8.2 Path.Max.Retrans");
    }
    let at = s.poll_timeout().unwrap();
    s.on_timeout(at);
    assert_eq!(s.state(), State::Closed);
    let p = out(&mut s, at);
    assert_eq!(p[0].control, Some(ControlChunk::Abort { t: false, cause: None }));
    assert!(s.report().gave_up);
    assert_eq!(s.sctp_stats().timeouts, 11);
}

/// RFC 9260 §8.3: an idle path gets a HEARTBEAT after HB.interval + RTO (jitter off); the
/// HEARTBEAT ACK is an RTT measurement and clears the error counter; an unanswered one counts
/// as an error and backs off the RTO.
#[test]
fn heartbeat() {
    let c = SctpConfig {
        hb_interval: Some(SimDuration::from_secs(30)),
        hb_jitter: false,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    let at = established_at() + SimDuration::from_secs(31);
    assert_eq!(s.poll_timeout(), Some(at));
    s.on_timeout(at);
    let p = out(&mut s, at);
    assert_eq!(p[0].control, Some(ControlChunk::Heartbeat(at.0)));
    let samples = s.path().rtt.samples();
    feed(
        &mut s,
        at + SimDuration::from_millis(80),
        SctpRepr {
            control: Some(ControlChunk::HeartbeatAck(at.0)),
            ..from_peer()
        },
    );
    assert_eq!(s.path().rtt.samples(), samples + 1);
    // Next check one RTO after the HEARTBEAT; then the next period.
    let at2 = s.poll_timeout().unwrap();
    s.on_timeout(at2);
    assert!(out(&mut s, at2).is_empty());
    let at3 = s.poll_timeout().unwrap();
    assert_eq!(at3, at2 + SimDuration::from_secs(31));
    s.on_timeout(at3);
    assert!(matches!(out(&mut s, at3)[0].control, Some(ControlChunk::Heartbeat(_))));
    let at4 = s.poll_timeout().unwrap();
    let rto = s.rto();
    s.on_timeout(at4);
    assert_eq!(s.association_errors(), 1, "unanswered HEARTBEAT");
    assert_eq!(s.rto(), SimDuration(2 * rto.0), "RTO backed off");
    // A HEARTBEAT from the peer is answered.
    feed(
        &mut s,
        at4,
        SctpRepr {
            control: Some(ControlChunk::Heartbeat(42)),
            ..from_peer()
        },
    );
    assert_eq!(out(&mut s, at4)[0].control, Some(ControlChunk::HeartbeatAck(42)));
}

/// RFC 9260 §8.3: with jitter the HEARTBEAT period is HB.interval + RTO·(1 ± 0.5): every period
/// within the bounds, not all equal, and the same for the same verification tag.
#[test]
fn heartbeat_period_is_jittered_within_half_an_rto() {
    let periods = || {
        let c = SctpConfig {
            hb_interval: Some(SimDuration::from_secs(30)),
            hb_jitter: true,
            ..cfg(SctpProfile::Rfc9260)
        };
        let mut s = established(c, 1500);
        let mut got = Vec::new();
        for _ in 0..10 {
            // The HEARTBEAT goes out and is answered at once; its check one RTO later sets the
            // next period.
            let at = s.poll_timeout().unwrap();
            s.on_timeout(at);
            let hb = out(&mut s, at);
            let Some(ControlChunk::Heartbeat(info)) = hb[0].control else {
                panic!("a HEARTBEAT: {hb:?}")
            };
            let ack = SctpRepr {
                control: Some(ControlChunk::HeartbeatAck(info)),
                ..from_peer()
            };
            feed(&mut s, at, ack);
            let check = s.poll_timeout().unwrap();
            s.on_timeout(check);
            assert!(out(&mut s, check).is_empty());
            got.push(s.poll_timeout().unwrap().saturating_since(check));
        }
        (got, s.rto())
    };
    let (a, rto) = periods();
    let (lo, hi) = (30_000_000_000 + rto.0 / 2, 30_000_000_000 + 3 * rto.0 / 2);
    assert!(
        a.iter().all(|d| d.0 >= lo && d.0 <= hi),
        "{a:?} outside [{lo}, {hi}] ns"
    );
    assert!(a.iter().any(|d| *d != a[0]), "jittered: {a:?}");
    assert_eq!(periods().0, a, "same tag, same periods");
}

/// RFC 9260 §7.2.1/§7.2.2 against RFC 4960's: a SACK that acknowledges new data by a Gap Ack
/// Block only (the Cumulative TSN Ack Point does not move) grows cwnd in slow start by
/// min(bytes acked, L·PMDCS) and partial_bytes_acked in congestion avoidance under RFC 9260;
/// under RFC 4960 neither moves (both rules require a SACK that advances the Point).
#[test]
fn gap_only_sack_grows_the_window_under_rfc9260_only() {
    // 5 chunks of 1352 counted bytes: 4 packets leave (the 4th overbooks the window, §6.1 B),
    // the window is fully used; the SACK reports TSN 0 missing and TSN 1 (offset 2) received.
    let gap_sack = || sack_pkt(tsn(0).wrapping_sub(1), &[(2, 2)], 65536);
    for (profile, unit, iw, user) in [
        (SctpProfile::Rfc9260, 1468u64, 4404u64, 1336u32),
        (SctpProfile::Rfc4960, 1500, 4380, 1352),
    ] {
        let rfc9260 = profile == SctpProfile::Rfc9260;
        // Slow start (ssthresh = the peer's a_rwnd, above cwnd).
        let mut s = established(cfg(profile), 1500);
        give(&mut s, t(300), 0, 5, user);
        assert_eq!(out(&mut s, t(300)).len(), 4);
        feed(&mut s, t(400), gap_sack());
        let grown = iw + 1352u64.min(unit);
        assert_eq!(s.cwnd(), if rfc9260 { grown } else { iw }, "{profile:?} slow start");
        // Congestion avoidance (ssthresh below the initial window).
        let c = SctpConfig {
            initial_ssthresh_bytes: Some(2000),
            ..cfg(profile)
        };
        let mut s = established(c, 1500);
        give(&mut s, t(300), 0, 5, user);
        assert_eq!(out(&mut s, t(300)).len(), 4);
        feed(&mut s, t(400), gap_sack());
        assert_eq!(
            s.cwnd(),
            iw,
            "{profile:?}: no increase before a whole cwnd is acknowledged"
        );
        assert_eq!(
            s.partial_bytes_acked(),
            if rfc9260 { 1352 } else { 0 },
            "{profile:?} partial_bytes_acked"
        );
    }
}

/// RFC 9260 §6.1 D: Max.Burst limits the new-data packets of one send opportunity; cwnd is not
/// lowered.
#[test]
fn max_burst() {
    let c = SctpConfig {
        initial_cwnd_floor_bytes: 20_000,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    assert_eq!(s.cwnd(), 5872, "min(4·PMDCS, max(2·PMDCS, 20000))");
    give(&mut s, t(300), 0, 8, 500);
    assert_eq!(out(&mut s, t(300)).len(), 4);
    let c = SctpConfig {
        initial_cwnd_floor_bytes: 20_000,
        max_burst: Some(2),
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    give(&mut s, t(300), 0, 20, 1400);
    assert_eq!(out(&mut s, t(300)).len(), 2);
    assert_eq!(s.cwnd(), 5872);
    feed(&mut s, t(301), sack_pkt(tsn(0).wrapping_sub(1), &[], 65536));
    assert_eq!(out(&mut s, t(301)).len(), 2, "another opportunity");
}

// ---------------------------------------------------------------------- shutdown (§9.2)

/// RFC 9260 §9.2: close → SHUTDOWN-PENDING until every chunk is acknowledged → SHUTDOWN (T2) →
/// SHUTDOWN ACK → SHUTDOWN COMPLETE, CLOSED; T2 retransmits the SHUTDOWN.
#[test]
fn graceful_shutdown_active() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 1, 100);
    out(&mut s, t(300));
    s.close(t(300));
    assert_eq!(s.state(), State::ShutdownPending);
    assert!(!s.can_send(1));
    assert!(out(&mut s, t(300)).is_empty());
    // The peer's data arrives meanwhile; its SACK acknowledges ours.
    feed(&mut s, t(400), sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.state(), State::ShutdownSent);
    let p = out(&mut s, t(400));
    assert_eq!(p[0].control, Some(ControlChunk::Shutdown(ptsn(0).wrapping_sub(1))));
    let t2 = s.poll_timeout().unwrap();
    assert_eq!(t2, t(1400));
    s.on_timeout(t2);
    assert!(matches!(out(&mut s, t2)[0].control, Some(ControlChunk::Shutdown(_))));
    assert_eq!(s.association_errors(), 1);
    feed(
        &mut s,
        t(1500),
        SctpRepr {
            control: Some(ControlChunk::ShutdownAck),
            ..from_peer()
        },
    );
    let p = out(&mut s, t(1500));
    assert_eq!(p[0].control, Some(ControlChunk::ShutdownComplete { t: false }));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![TransportEvent::Closed]);
    assert_eq!(s.poll_timeout(), None);
    // §8.4 (5): a retransmitted SHUTDOWN ACK gets SHUTDOWN COMPLETE with the T bit.
    feed(
        &mut s,
        t(1600),
        SctpRepr {
            control: Some(ControlChunk::ShutdownAck),
            ..from_peer()
        },
    );
    let p = out(&mut s, t(1600));
    assert_eq!(p[0].control, Some(ControlChunk::ShutdownComplete { t: true }));
    assert_eq!(p[0].verification_tag, TAG);
}

/// RFC 9260 §9.2: each T2-shutdown expiry resends the SHUTDOWN with the RTO doubled (§6.3.3 E2)
/// and counts toward Association.Max.Retrans (10, §8.1); past it the association is given up:
/// ABORT, CLOSED, reported.
#[test]
fn t2_shutdown_gives_up_after_association_max_retrans() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    s.close(t(300));
    assert_eq!(s.state(), State::ShutdownSent);
    assert!(matches!(
        out(&mut s, t(300))[0].control,
        Some(ControlChunk::Shutdown(_))
    ));
    let (mut at, mut rto) = (300, 1000); // RTO = RTO.Min after the handshake's 100 ms sample
    for k in 1..=10 {
        assert_eq!(s.poll_timeout(), Some(t(at + rto)), "T2-shutdown {k}");
        at += rto;
        s.on_timeout(t(at));
        assert!(matches!(out(&mut s, t(at))[0].control, Some(ControlChunk::Shutdown(_))));
        assert_eq!(s.association_errors(), k);
        rto = (rto * 2).min(60_000);
    }
    s.on_timeout(t(at + rto));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(
        out(&mut s, t(at + rto))[0].control,
        Some(ControlChunk::Abort { t: false, cause: None })
    );
    assert_eq!(events(&mut s), vec![TransportEvent::Closed]);
    assert!(s.report().gave_up);
}

/// RFC 9260 §9.2 (passive side): SHUTDOWN received → our queued data still goes out → SHUTDOWN
/// ACK once acknowledged → SHUTDOWN COMPLETE closes.
#[test]
fn graceful_shutdown_passive() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 1, 100);
    feed(
        &mut s,
        t(300),
        SctpRepr {
            control: Some(ControlChunk::Shutdown(ptsn(0).wrapping_sub(1))),
            ..from_peer()
        },
    );
    assert_eq!(s.state(), State::ShutdownReceived);
    assert!(!s.can_send(1));
    assert_eq!(data_of(&out(&mut s, t(300))).len(), 1);
    feed(&mut s, t(400), sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.state(), State::ShutdownAckSent);
    assert_eq!(out(&mut s, t(400))[0].control, Some(ControlChunk::ShutdownAck));
    feed(
        &mut s,
        t(500),
        SctpRepr {
            control: Some(ControlChunk::ShutdownComplete { t: false }),
            ..from_peer()
        },
    );
    assert_eq!(s.state(), State::Closed);
}

/// RFC 9260 §9.2: in SHUTDOWN-SENT, DATA is answered with a SHUTDOWN (and a SACK when the
/// SHUTDOWN cannot acknowledge everything).
#[test]
fn shutdown_sent_answers_data_with_shutdown() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    s.close(t(300));
    assert!(matches!(
        out(&mut s, t(300))[0].control,
        Some(ControlChunk::Shutdown(_))
    ));
    feed(&mut s, t(310), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 10, 1)]));
    let p = out(&mut s, t(310));
    assert_eq!(p[0].control, Some(ControlChunk::Shutdown(ptsn(0).wrapping_sub(1))));
    assert_eq!(p[0].sack.unwrap().gaps().len(), 1);
}

// ---------------------------------------------------------------------- surface

/// The common surface: report() fields, ip_len under both size conventions, buffer limits.
#[test]
fn report_sizes_and_buffer() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    let r = s.report();
    let names: Vec<_> = r.congestion.iter().map(|c| c.0).collect();
    assert_eq!(names, vec!["cwnd_bytes", "ssthresh_bytes", "srtt_s"]);
    assert_eq!(r.congestion[0].1, Some(4404.0));
    assert_eq!(r.congestion[1].1, Some(65536.0), "ssthresh = the peer's a_rwnd");
    let extra: Vec<_> = r.extra.iter().map(|c| c.0).collect();
    assert_eq!(extra, vec!["fast_retransmit_chunks", "abandoned_messages"]);
    let rx_extra: Vec<_> = r.rx_extra.iter().map(|c| c.0).collect();
    assert_eq!(
        rx_extra,
        vec!["hol_blocking_mean_s", "hol_blocking_p95_s", "streams_used"]
    );
    give(&mut s, t(300), 0, 1, 100);
    let seg = s.poll_transmit(t(300)).unwrap();
    assert_eq!((seg.payload_len, seg.ip_len), (100, 20 + 12 + 116));
    assert_eq!(s.stats().tx_segments, 1);
    assert_eq!(
        s.send(t(300), msg(1, 200_000, t(300))),
        Err(SendError::TooLarge { max: 131_072 })
    );
    assert!(s.can_send(131_072 - 100));
    assert!(!s.can_send(131_072 - 99));

    let mut n = SctpSocket::new(
        sock_cfg(1500, SizeConvention::Ns2),
        cfg(SctpProfile::Ns2),
        Open::Active,
        t(0),
    );
    let init = n.poll_transmit(t(0)).unwrap();
    assert_eq!(init.ip_len, 20 + 12 + 24, "ns-2 counts a 24-byte INIT");
    assert_eq!(n.cwnd(), 4380, "ns-2.35 Reset(): min(4·1468, max(4380, 2·1468))");
}

/// RFC 9260 §6.2.1 C: a TSN previously acknowledged by a Gap Ack Block and now missing
/// (reneged) counts a miss indication and gets T3-rtx running.
#[test]
fn reneging() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 3, 1000);
    out(&mut s, t(300));
    let before = tsn(0).wrapping_sub(1);
    feed(&mut s, t(400), sack_pkt(before, &[(2, 3)], 65536));
    assert_eq!(s.flight_size(), 1016);
    feed(&mut s, t(450), sack_pkt(before, &[(3, 3)], 65536));
    assert!(s.poll_timeout().is_some());
    assert_eq!(s.peer_rwnd(), 65536 - 2000);
}

/// The `ns2` profile's send rule (ns-2.35 `sctp.cc`): a write while data is outstanding waits
/// for the next SACK, and whatever accumulated goes out then, bundled; a SACK that finds the
/// queue empty clears the permission.
#[test]
fn ns2_send_rule_bundles_writes_until_the_next_sack() {
    let mut s = established(cfg(SctpProfile::Ns2), 1500);
    give(&mut s, t(300), 0, 1, 100);
    assert_eq!(
        data_of(&out(&mut s, t(300))).len(),
        1,
        "nothing outstanding: sent at once"
    );
    for k in 1..=3 {
        give(&mut s, t(300 + k), k, 1, 100);
        assert!(out(&mut s, t(300 + k)).is_empty(), "write {k} waits for a SACK");
    }
    feed(&mut s, t(400), sack_pkt(tsn(0), &[], 65536));
    let p = out(&mut s, t(400));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].data.len(), 3, "bundled");
    // The same writes under RFC 9260 go out one by one.
    let mut r = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut r, t(300), 0, 1, 100);
    out(&mut r, t(300));
    give(&mut r, t(301), 1, 1, 100);
    assert_eq!(out(&mut r, t(301)).len(), 1);
    // A SACK with nothing queued clears the flag: the next write waits although data is
    // outstanding and cwnd has room.
    give(&mut s, t(401), 4, 1, 100);
    assert!(out(&mut s, t(401)).is_empty());
    feed(&mut s, t(500), sack_pkt(tsn(2), &[], 65536));
    assert_eq!(data_of(&out(&mut s, t(500))).len(), 1);
}

/// The `sctp-stall` quirk (ns-2.35's send rule as it is, `sctp.cc` `sendmsg()`): once the
/// permission a SACK (here the COOKIE ACK) gave has been used, a write made while nothing is
/// outstanding waits for a SACK that never comes: only heartbeats leave from then on. The
/// `ns2` profile without the quirk sends the same write at once.
#[test]
fn ns2_stall_quirk_holds_a_write_made_while_nothing_is_outstanding() {
    let stall = SctpConfig {
        ns2_stall: true,
        hb_interval: SctpConfig::ns2().hb_interval,
        ..cfg(SctpProfile::Ns2)
    };
    let mut r = established(cfg(SctpProfile::Ns2), 1500);
    give(&mut r, t(300), 0, 1, 100);
    assert_eq!(data_of(&out(&mut r, t(300))).len(), 1, "without the quirk: at once");
    let mut s = established(stall, 1500);
    give(&mut s, t(300), 0, 1, 100);
    assert!(out(&mut s, t(300)).is_empty(), "held");
    let mut now = t(300);
    let mut heartbeats = 0;
    while now < t(300 + 120_000) {
        let Some(next) = s.poll_timeout() else { break };
        now = next;
        s.on_timeout(now);
        for p in out(&mut s, now) {
            assert!(p.data.is_empty(), "a DATA chunk left at {now:?}");
            heartbeats += usize::from(matches!(p.control, Some(ControlChunk::Heartbeat(_))));
        }
    }
    assert!(heartbeats >= 2, "{heartbeats}");
}

/// RFC 9260 §6.5/§6.6 at the socket: an ordered message complete before an earlier one of its
/// stream waits (head-of-line blocking, reported by the receiver); an unordered one and one on
/// another stream do not.
#[test]
fn hol_blocking_is_reported_by_the_receiver() {
    let c = SctpConfig {
        max_inbound_streams: 4,
        ..cfg(SctpProfile::Rfc9260)
    };
    let mut s = established(c, 1500);
    let w = DataFlags::WHOLE;
    feed(
        &mut s,
        t(300),
        data_pkt(&[pdata(1, 0, 1, w, 10, 1), pdata(2, 1, 0, w, 10, 2)]),
    );
    feed(
        &mut s,
        t(301),
        data_pkt(&[pdata(3, 0, 0, w.with(DataFlags::UNORDERED), 10, 3)]),
    );
    let ids = |s: &mut SctpSocket| -> Vec<u64> {
        events(s)
            .into_iter()
            .filter_map(|e| match e {
                TransportEvent::Delivered { message, .. } => Some(message.id),
                _ => None,
            })
            .collect()
    };
    assert_eq!(ids(&mut s), vec![2, 3]);
    feed(&mut s, t(400), data_pkt(&[pdata(0, 0, 0, w, 10, 0)]));
    assert_eq!(ids(&mut s), vec![0, 1]);
    let r = s.report();
    let get = |k: &str| r.rx_extra.iter().find(|e| e.0 == k).unwrap().1;
    // Ordered messages: 2 (stream 1) and 0 waited 0, 1 waited 100 ms: mean 33.3 ms.
    assert!((get("hol_blocking_mean_s").unwrap() - 0.1 / 3.0).abs() < 1e-9);
    let p95 = get("hol_blocking_p95_s").unwrap();
    assert!((p95 - 0.1).abs() < 0.1 * 0.02, "{p95}");
    assert_eq!(get("streams_used"), Some(2.0));
}

/// pcap: `L4Header::emit_zeroed` writes a real SCTP packet (CRC32c over the whole packet, no
/// pseudo-header) that parses back.
#[test]
fn emit_zeroed_writes_a_real_packet() {
    let mut s = established(cfg(SctpProfile::Rfc9260), 1500);
    give(&mut s, t(300), 0, 2, 333);
    let seg = s.poll_transmit(t(300)).unwrap();
    let ip = tpsim_wire::Ipv4Repr {
        src: std::net::Ipv4Addr::new(10, 0, 0, 1),
        dst: std::net::Ipv4Addr::new(10, 0, 0, 2),
        protocol: seg.header.protocol(),
        ttl: 64,
        ident: 1,
        total_len: seg.ip_len as u16,
        ecn: tpsim_wire::Ecn::NotEct,
    };
    assert_eq!(ip.protocol, tpsim_wire::IpProtocol::Sctp);
    let mut b = vec![0xffu8; seg.ip_len as usize - 20];
    seg.header.emit_zeroed(&ip, &mut b);
    let back = SctpRepr::parse(&b).unwrap();
    let L4Header::Sctp(h) = &seg.header else { panic!() };
    assert_eq!(back.data.len(), 2);
    assert_eq!(back.data.as_slice()[1].tsn, h.data.as_slice()[1].tsn);
    assert_eq!(seg.header.dst_port(), REMOTE);
}
