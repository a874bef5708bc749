//! PR-SCTP (RFC 3758, RFC 7496 §3.1) conformance cases: short scripted exchanges against the
//! socket under test, with the chunks and values expected. The socket and its peer are those
//! of the packet-by-packet tests (`tests.rs`): ESTABLISHED at 200 ms, SRTT 100 ms, RTO 1 s, our
//! TSNs `tsn(k)`, the peer's `ptsn(k)`; PMDCS 1468 (1452 bytes of user data a chunk).

use super::tests::*;
use super::*;
use crate::tcp::Open;
use crate::{SocketConfig, TransportEvent};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{ControlChunk, DataFlags, ForwardTsnChunk, InitChunk, SctpRepr, StateCookie};
use tpsim_wire::SizeConvention;

const MS500: PrPolicy = PrPolicy::Lifetime(SimDuration(500_000_000));

/// RFC 9260's profile with PR-SCTP announced, 4 outbound streams.
fn pr_cfg() -> SctpConfig {
    SctpConfig {
        pr_sctp: true,
        streams: 4,
        ..cfg(SctpProfile::Rfc9260)
    }
}

/// An active socket through the handshake of [`established`], the peer's INIT ACK carrying
/// Forward-TSN-Supported when `peer_pr`.
fn established_pr(c: SctpConfig, peer_pr: bool) -> SctpSocket {
    let mut s = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Active, SimTime::ZERO);
    out(&mut s, SimTime::ZERO);
    let ack = InitChunk {
        forward_tsn: peer_pr,
        ..peer_init()
    };
    feed(
        &mut s,
        t(2 * OWD_MS),
        SctpRepr {
            control: Some(ControlChunk::InitAck(ack, StateCookie([9; 32]))),
            ..from_peer()
        },
    );
    out(&mut s, t(2 * OWD_MS));
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

/// Hands message `id` of `len` bytes to `s` at `now` on `stream` with `policy`.
fn give_pr(s: &mut SctpSocket, now: SimTime, id: u64, len: u32, stream: u16, unordered: bool, policy: PrPolicy) {
    s.send_pr(now, msg(id, len, now), stream, unordered, policy).unwrap();
}

/// The FORWARD TSN of `p`, if any.
fn fwd(p: &SctpRepr) -> Option<ForwardTsnChunk> {
    match p.control {
        Some(ControlChunk::ForwardTsn(f)) => Some(f),
        _ => None,
    }
}

fn pairs(f: &ForwardTsnChunk) -> Vec<(u16, u16)> {
    f.streams().iter().map(|s| (s.stream_id, s.ssn)).collect()
}

/// A FORWARD TSN from the peer.
fn fwd_pkt(new_cum: u32, skipped: &[(u16, u16)]) -> SctpRepr {
    let mut f = ForwardTsnChunk::new(new_cum);
    for &(s, q) in skipped {
        assert!(f.push(s, q));
    }
    SctpRepr {
        control: Some(ControlChunk::ForwardTsn(f)),
        ..from_peer()
    }
}

fn delivered_ids(s: &mut SctpSocket) -> Vec<u64> {
    events(s)
        .into_iter()
        .filter_map(|e| match e {
            TransportEvent::Delivered { message, .. } => Some(message.id),
            _ => None,
        })
        .collect()
}

/// Forward-TSN-Supported in INIT and INIT ACK (RFC 3758 §3.3.1): present exactly when the end is configured for PR-SCTP.
///
/// Active end: the INIT carries it (24 bytes instead of 20) only with `pr_sctp`. Passive end:
/// the INIT ACK carries it only with `pr_sctp`, whether or not the INIT did (§3.3.2 allows it).
#[test]
fn pr01_parameter_only_when_configured() {
    for pr in [false, true] {
        let c = SctpConfig {
            pr_sctp: pr,
            ..pr_cfg()
        };
        let mut s = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Active, t(0));
        let p = out(&mut s, t(0));
        let Some(ControlChunk::Init(i)) = p[0].control else {
            panic!("{p:?}")
        };
        assert_eq!(i.forward_tsn, pr);
        assert_eq!(p[0].packet_len(), 12 + if pr { 24 } else { 20 });
        for peer in [false, true] {
            let mut srv = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Passive, t(0));
            feed(
                &mut srv,
                t(10),
                SctpRepr {
                    control: Some(ControlChunk::Init(InitChunk {
                        forward_tsn: peer,
                        ..peer_init()
                    })),
                    ..SctpRepr::new(REMOTE, LOCAL, 0)
                },
            );
            let p = out(&mut srv, t(10));
            let Some(ControlChunk::InitAck(a, _)) = p[0].control else {
                panic!("{p:?}")
            };
            assert_eq!(a.forward_tsn, pr, "configured {pr}, peer {peer}");
        }
    }
}

/// Negotiation needs both ends (RFC 3758 §3.3.2): without the peer's parameter PR-SCTP is off, a timed message is retransmitted at every T3-rtx and no FORWARD TSN is sent.
///
/// Both directions of the negotiation: the active end reads the INIT ACK, the passive end the
/// INIT (kept in its State Cookie). Without PR-SCTP announced, a FORWARD TSN from the peer is
/// ignored (§3.3.1).
#[test]
fn pr02_no_negotiation_without_peer_parameter() {
    let c = SctpConfig {
        pr_policy: MS500,
        ..pr_cfg()
    };
    assert!(established_pr(c, true).pr_negotiated());
    let mut s = established_pr(c, false);
    assert!(!s.pr_negotiated());
    give(&mut s, t(300), 0, 1, 100);
    assert_eq!(data_of(&out(&mut s, t(300))), vec![(tsn(0), 100)]);
    let mut at = 1300;
    let mut rto = 1000;
    for _ in 0..4 {
        assert_eq!(s.poll_timeout(), Some(t(at)));
        s.on_timeout(t(at));
        let p = out(&mut s, t(at));
        assert_eq!(data_of(&p), vec![(tsn(0), 100)], "retransmitted at {at} ms");
        assert!(p.iter().all(|p| fwd(p).is_none()));
        rto *= 2;
        at += rto;
    }
    assert_eq!(s.sctp_stats().abandoned_messages, 0);
    assert_eq!(s.sctp_stats().forward_tsns, 0);
    // Passive end: the peer's INIT without the parameter.
    for peer in [false, true] {
        let mut srv = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Passive, t(0));
        let init = InitChunk {
            forward_tsn: peer,
            ..peer_init()
        };
        feed(
            &mut srv,
            t(10),
            SctpRepr {
                control: Some(ControlChunk::Init(init)),
                ..SctpRepr::new(REMOTE, LOCAL, 0)
            },
        );
        let Some(ControlChunk::InitAck(_, cookie)) = out(&mut srv, t(10))[0].control else {
            panic!()
        };
        feed(
            &mut srv,
            t(20),
            SctpRepr {
                control: Some(ControlChunk::CookieEcho(cookie)),
                ..from_peer()
            },
        );
        assert_eq!(srv.state(), State::Established);
        assert_eq!(srv.pr_negotiated(), peer);
    }
    // Not announced: a FORWARD TSN is ignored (no SACK, the Cumulative TSN stays).
    let mut r = established(cfg(SctpProfile::Rfc9260), 1500);
    feed(&mut r, t(300), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 10, 1)]));
    out(&mut r, t(300));
    feed(&mut r, t(310), fwd_pkt(ptsn(0), &[(0, 0)]));
    assert!(out(&mut r, t(310)).is_empty());
    assert!(delivered_ids(&mut r).is_empty());
    assert_eq!(r.sctp_stats().forward_tsns_received, 0);
}

/// A timed message never sent before its lifetime ends is dropped (RFC 3758 §4.1): no TSN, no SSN, no FORWARD TSN.
///
/// Three full chunks fill cwnd (4404); a message of lifetime 100 ms and a reliable one wait.
/// The SACK at 450 ms opens the window: the reliable message goes out with the next TSN and
/// the next SSN (the dropped one took neither, TR3), and no FORWARD TSN is needed.
#[test]
fn pr03_timed_message_not_sent_before_lifetime_is_never_sent() {
    let mut s = established_pr(pr_cfg(), true);
    give(&mut s, t(300), 0, 3, 1452);
    give_pr(
        &mut s,
        t(300),
        3,
        100,
        0,
        false,
        PrPolicy::Lifetime(SimDuration::from_millis(100)),
    );
    give(&mut s, t(300), 4, 1, 200);
    assert_eq!(out(&mut s, t(300)).len(), 3);
    assert_eq!(s.buffered_messages(), 2);
    feed(&mut s, t(450), sack_pkt(tsn(2), &[], 65536));
    let p = out(&mut s, t(450));
    assert_eq!(data_of(&p), vec![(tsn(3), 200)]);
    assert_eq!(p[0].data.as_slice()[0].ssn, 3);
    assert!(p.iter().all(|p| fwd(p).is_none()));
    assert_eq!(s.sctp_stats().abandoned_messages, 1);
    assert_eq!(s.advanced_peer_ack_point(), tsn(2));
}

/// Expired outstanding chunk at T3-rtx (RFC 3758 §3.5): not retransmitted (A5); a FORWARD TSN covering it goes out with T3-rtx running (C5).
///
/// The chunk leaves the flight size at once (A2); the SACK that follows credits nothing to cwnd
/// (which T3-rtx set to 1·PMDCS).
#[test]
fn pr04_expired_chunk_not_retransmitted_at_t3_forward_tsn_sent() {
    let mut s = established_pr(pr_cfg(), true);
    give_pr(&mut s, t(300), 0, 100, 0, false, MS500);
    assert_eq!(data_of(&out(&mut s, t(300))), vec![(tsn(0), 100)]);
    assert_eq!(s.poll_timeout(), Some(t(1300)));
    s.on_timeout(t(1300));
    let p = out(&mut s, t(1300));
    assert_eq!(p.len(), 1);
    assert!(data_of(&p).is_empty(), "not retransmitted");
    let f = fwd(&p[0]).expect("FORWARD TSN");
    assert_eq!((f.new_cum_tsn, pairs(&f)), (tsn(0), vec![(0, 0)]));
    assert_eq!(s.flight_size(), 0);
    assert_eq!(s.sctp_stats().abandoned_messages, 1);
    assert_eq!(s.poll_timeout(), Some(t(3300)), "C5: T3-rtx runs (RTO backed off)");
    assert_eq!(s.cwnd(), 1468);
    feed(&mut s, t(1400), sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.cwnd(), 1468, "A2: nothing credited");
    assert_eq!(s.outstanding_chunks(), 0);
    assert_eq!(s.poll_timeout(), None);
    assert!(out(&mut s, t(1400)).is_empty());
}

/// Advanced.Peer.Ack.Point stops at the first chunk not abandoned (RFC 3758 §3.5): FORWARD TSN up to it, bundled with the retransmission (C1, C2, F2), then beyond it once a SACK passes it.
///
/// Messages 0 and 2 are timed (500 ms), message 1 is reliable; all three are lost.
#[test]
fn pr05_advanced_peer_ack_point_stops_at_first_non_abandoned() {
    let mut s = established_pr(pr_cfg(), true);
    give_pr(&mut s, t(300), 0, 100, 0, false, MS500);
    give_pr(&mut s, t(300), 1, 100, 0, false, PrPolicy::Reliable);
    give_pr(&mut s, t(300), 2, 100, 0, false, MS500);
    assert_eq!(out(&mut s, t(300)).len(), 1, "one packet of three chunks");
    s.on_timeout(t(1300));
    let p = out(&mut s, t(1300));
    assert_eq!(p.len(), 1);
    assert_eq!(data_of(&p), vec![(tsn(1), 100)]);
    let f = fwd(&p[0]).expect("FORWARD TSN bundled ahead of the DATA");
    assert_eq!((f.new_cum_tsn, pairs(&f)), (tsn(0), vec![(0, 0)]));
    assert_eq!(s.advanced_peer_ack_point(), tsn(0));
    // C1: the point moves to the SACK's Cumulative TSN Ack, C2: then over TSN 2.
    feed(&mut s, t(1400), sack_pkt(tsn(1), &[], 65536));
    assert_eq!(s.advanced_peer_ack_point(), tsn(2));
    let p = out(&mut s, t(1400));
    let f = fwd(&p[0]).expect("FORWARD TSN");
    assert_eq!((f.new_cum_tsn, pairs(&f)), (tsn(2), vec![(0, 2)]));
    assert_eq!(s.sctp_stats().abandoned_messages, 2);
}

/// Streams of ordered abandoned messages in FORWARD TSN (RFC 3758 §3.5): the highest SSN per stream, unordered messages not reported (C4).
#[test]
fn pr06_forward_tsn_carries_stream_and_ssn_of_ordered_messages() {
    let mut s = established_pr(pr_cfg(), true);
    give_pr(&mut s, t(300), 0, 100, 0, false, MS500);
    give_pr(&mut s, t(300), 1, 100, 1, false, MS500);
    give_pr(&mut s, t(300), 2, 100, 1, false, MS500);
    give_pr(&mut s, t(300), 3, 100, 2, true, MS500);
    give_pr(&mut s, t(300), 4, 100, 3, false, MS500);
    assert_eq!(data_of(&out(&mut s, t(300))).len(), 5);
    s.on_timeout(t(1300));
    let p = out(&mut s, t(1300));
    let f = fwd(&p[0]).expect("FORWARD TSN");
    assert_eq!(f.new_cum_tsn, tsn(4));
    assert_eq!(pairs(&f), vec![(0, 0), (1, 1), (3, 0)]);
    assert_eq!(s.sctp_stats().abandoned_messages, 5);
}

/// Limited retransmissions (RFC 7496 §3.1): a message allowed n retransmissions is retransmitted n times, then abandoned with a FORWARD TSN; n = 0: never retransmitted.
#[test]
fn pr07_retransmission_limit() {
    for n in [0u32, 1, 2] {
        let mut s = established_pr(pr_cfg(), true);
        give_pr(&mut s, t(300), 0, 100, 0, false, PrPolicy::Retransmissions(n));
        assert_eq!(data_of(&out(&mut s, t(300))), vec![(tsn(0), 100)]);
        let mut retransmissions = 0;
        loop {
            let at = s.poll_timeout().expect("T3-rtx");
            s.on_timeout(at);
            let p = out(&mut s, at);
            if let Some(f) = p.iter().find_map(fwd) {
                assert_eq!(f.new_cum_tsn, tsn(0));
                assert!(data_of(&p).is_empty());
                break;
            }
            assert_eq!(data_of(&p), vec![(tsn(0), 100)]);
            retransmissions += 1;
            assert!(retransmissions <= n, "n = {n}");
        }
        assert_eq!(retransmissions, n);
        assert_eq!(s.stats().retransmissions, n as u64);
        assert_eq!(s.sctp_stats().abandoned_messages, 1);
    }
}

/// Fast retransmit of a chunk past its limit (RFC 3758 §3.5): abandoned instead of retransmitted, FORWARD TSN sent, congestion response still made (F5).
///
/// Four chunks, the first lost, three SACKs reporting it missing: with no retransmission
/// allowed it is abandoned on the third miss indication; ssthresh and cwnd drop as for a fast
/// retransmit (RFC 9260 §7.2.4), and the chunks counted as marked.
#[test]
fn pr08_fast_retransmit_abandons_and_keeps_congestion_response() {
    let mut s = established_pr(pr_cfg(), true);
    for k in 0..4 {
        give_pr(&mut s, t(300), k, 1000, 0, false, PrPolicy::Retransmissions(0));
    }
    assert_eq!(data_of(&out(&mut s, t(300))).len(), 4);
    let before = tsn(0).wrapping_sub(1);
    feed(&mut s, t(400), sack_pkt(before, &[(2, 2)], 65536));
    feed(&mut s, t(401), sack_pkt(before, &[(2, 3)], 65536));
    assert!(out(&mut s, t(401)).is_empty());
    let cwnd = s.cwnd();
    feed(&mut s, t(402), sack_pkt(before, &[(2, 4)], 65536));
    let p = out(&mut s, t(402));
    assert!(data_of(&p).is_empty(), "not fast-retransmitted");
    let f = p.iter().find_map(fwd).expect("FORWARD TSN");
    assert_eq!(f.new_cum_tsn, tsn(0));
    assert_eq!(s.ssthresh(), (cwnd / 2).max(4 * 1468));
    assert_eq!(s.cwnd(), s.ssthresh());
    assert_eq!(s.report().fast_retransmits, 1);
    assert_eq!(s.sctp_stats().abandoned_messages, 1);
    // The peer skips TSN 1 and acknowledges all.
    feed(&mut s, t(500), sack_pkt(tsn(3), &[], 65536));
    assert_eq!((s.outstanding_chunks(), s.flight_size()), (0, 0));
}

/// Receiver moves its Cumulative TSN on FORWARD TSN (RFC 3758 §3.6): the next ordered message of the stream is delivered and a SACK goes out at once.
#[test]
fn pr09_receiver_advances_and_delivers_next_ordered_message() {
    let mut s = established_pr(pr_cfg(), true);
    // Peer message 0 (TSN 0, SSN 0) lost; message 1 (TSN 1, SSN 1) waits for it.
    feed(&mut s, t(300), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 100, 1)]));
    let p = out(&mut s, t(300));
    assert_eq!(p[0].sack.unwrap().cum_tsn_ack, ptsn(0).wrapping_sub(1));
    assert!(delivered_ids(&mut s).is_empty());
    feed(&mut s, t(310), fwd_pkt(ptsn(0), &[(0, 0)]));
    assert_eq!(delivered_ids(&mut s), vec![1]);
    let p = out(&mut s, t(310));
    assert_eq!(p.len(), 1, "SACK at once");
    let sk = p[0].sack.unwrap();
    assert_eq!((sk.cum_tsn_ack, sk.gaps().len()), (ptsn(1), 0));
    assert_eq!(s.sctp_stats().forward_tsns_received, 1);
    // The stream goes on in order, and TSN 0 arriving late is a duplicate.
    feed(
        &mut s,
        t(320),
        data_pkt(&[
            pdata(0, 0, 0, DataFlags::WHOLE, 100, 0),
            pdata(2, 0, 2, DataFlags::WHOLE, 100, 2),
        ]),
    );
    assert_eq!(delivered_ids(&mut s), vec![2]);
    assert_eq!(s.sctp_stats().duplicate_tsns, 1);
}

/// Out-of-date FORWARD TSN (RFC 3758 §3.6): at or below the Cumulative TSN it changes nothing, and a SACK goes out at once.
#[test]
fn pr10_receiver_ignores_forward_tsn_below_cumulative_tsn() {
    let mut s = established_pr(pr_cfg(), true);
    for k in 0..3 {
        feed(
            &mut s,
            t(300 + k as u64),
            data_pkt(&[pdata(k, 0, k as u16, DataFlags::WHOLE, 100, k as u64)]),
        );
    }
    out(&mut s, t(302));
    assert_eq!(delivered_ids(&mut s), vec![0, 1, 2]);
    for new_cum in [ptsn(1), ptsn(2)] {
        feed(&mut s, t(400), fwd_pkt(new_cum, &[(0, 1)]));
        let p = out(&mut s, t(400));
        assert_eq!(p.len(), 1, "SACK at once");
        assert_eq!(p[0].sack.unwrap().cum_tsn_ack, ptsn(2));
    }
    assert_eq!(s.sctp_stats().forward_tsns_received, 0);
    feed(&mut s, t(410), data_pkt(&[pdata(3, 0, 3, DataFlags::WHOLE, 100, 3)]));
    assert_eq!(delivered_ids(&mut s), vec![3], "SSN 3 is next: nothing was skipped");
}

/// Receiver drops the fragments of an abandoned message (RFC 3758 §3.6): its buffer space comes back and the stream's next message is delivered.
#[test]
fn pr11_receiver_discards_fragments_of_abandoned_message() {
    let mut s = established_pr(pr_cfg(), true);
    let mid = DataFlags::default();
    feed(
        &mut s,
        t(300),
        data_pkt(&[pdata(0, 0, 0, DataFlags::BEGIN, 1000, 0), pdata(1, 0, 0, mid, 1000, 0)]),
    );
    s.on_timeout(t(500));
    let sk = out(&mut s, t(500))[0].sack.unwrap();
    assert_eq!(sk.a_rwnd, 65536 - 2000, "two fragments held");
    // The last fragment (TSN 2) was abandoned by the peer.
    feed(&mut s, t(600), fwd_pkt(ptsn(2), &[(0, 0)]));
    let sk = out(&mut s, t(600))[0].sack.unwrap();
    assert_eq!((sk.cum_tsn_ack, sk.a_rwnd), (ptsn(2), 65536));
    assert!(delivered_ids(&mut s).is_empty());
    feed(&mut s, t(700), data_pkt(&[pdata(3, 0, 1, DataFlags::WHOLE, 100, 1)]));
    assert_eq!(delivered_ids(&mut s), vec![1]);
}

/// All fragments of a message abandoned together (RFC 3758 §3.5): a gap-acknowledged one too, and those not yet sent take their TSNs, never transmitted (A3).
///
/// A message of four full fragments: three go out (cwnd 4404), the peer acknowledges the
/// second by a Gap Ack Block with a window too small for the fourth. At T3-rtx the message is
/// past its lifetime: one abandoned message, TSNs 0–3, the FORWARD TSN covers all four.
#[test]
fn pr12_fragments_of_a_message_abandoned_together() {
    let mut s = established_pr(pr_cfg(), true);
    give_pr(&mut s, t(300), 0, 4 * 1452, 0, false, MS500);
    assert_eq!(data_of(&out(&mut s, t(300))).len(), 3);
    let before = tsn(0).wrapping_sub(1);
    feed(&mut s, t(400), sack_pkt(before, &[(2, 2)], 1000));
    assert!(out(&mut s, t(400)).is_empty());
    s.on_timeout(t(1300));
    assert_eq!(s.next_tsn(), tsn(4), "the fourth fragment took TSN 3");
    let p = out(&mut s, t(1300));
    let f = fwd(&p[0]).expect("FORWARD TSN");
    assert_eq!((f.new_cum_tsn, pairs(&f)), (tsn(3), vec![(0, 0)]));
    assert!(data_of(&p).iter().all(|&(x, _)| x != tsn(3)));
    assert_eq!(s.sctp_stats().abandoned_messages, 1);
    assert_eq!(s.flight_size(), 0);
    // The peer skips them: the next message takes TSN 4 and SSN 1.
    feed(&mut s, t(1400), sack_pkt(tsn(3), &[], 65536));
    give(&mut s, t(1400), 1, 1, 100);
    let p = out(&mut s, t(1400));
    assert_eq!(data_of(&p), vec![(tsn(4), 100)]);
    assert_eq!(p[0].data.as_slice()[0].ssn, 1);
}

/// Lost FORWARD TSN sent again (RFC 3758 §3.5): at the next T3-rtx expiry (A5), and on a SACK still below the point once an SRTT has passed since the last one (C3).
#[test]
fn pr13_forward_tsn_retransmitted_when_lost() {
    let mut s = established_pr(pr_cfg(), true);
    give_pr(&mut s, t(300), 0, 100, 0, false, MS500);
    out(&mut s, t(300));
    s.on_timeout(t(1300));
    assert!(out(&mut s, t(1300)).iter().any(|p| fwd(p).is_some()));
    // Lost. T3-rtx (backed off to 2 s) sends it again.
    assert_eq!(s.poll_timeout(), Some(t(3300)));
    s.on_timeout(t(3300));
    let f = out(&mut s, t(3300)).iter().find_map(fwd).expect("again at T3-rtx");
    assert_eq!(f.new_cum_tsn, tsn(0));
    assert_eq!(s.sctp_stats().timeouts, 2);
    // Lost again; a SACK from before it (a window update) within one SRTT: not sent again.
    let before = tsn(0).wrapping_sub(1);
    feed(&mut s, t(3350), sack_pkt(before, &[], 65536));
    assert!(out(&mut s, t(3350)).is_empty());
    feed(&mut s, t(3450), sack_pkt(before, &[], 65536));
    let f = out(&mut s, t(3450))
        .iter()
        .find_map(fwd)
        .expect("again on a SACK below the point");
    assert_eq!(f.new_cum_tsn, tsn(0));
    assert_eq!(s.sctp_stats().forward_tsns, 3);
}

/// Two ends skip an abandoned message (RFC 3758 §3.6): a timed message lost once is skipped by the receiver, the next ordered message is delivered, both ends agree.
#[test]
fn pr14_two_ends_skip_an_abandoned_message() {
    let c = SctpConfig {
        initiate_tag: None,
        ..pr_cfg()
    };
    let mut a = SctpSocket::new(sock_cfg(1500, SizeConvention::Standard), c, Open::Active, t(0));
    let mut b = SctpSocket::new(
        SocketConfig {
            local_port: REMOTE,
            remote_port: LOCAL,
            ..sock_cfg(1500, SizeConvention::Standard)
        },
        c,
        Open::Passive,
        t(0),
    );
    // Handshake, 10 ms each way.
    let mut now = t(0);
    fn deliver(from: &mut SctpSocket, to: &mut SctpSocket, now: SimTime, drop_data: bool) {
        for p in out(from, now) {
            if drop_data && !p.data.is_empty() {
                continue;
            }
            feed(to, now + SimDuration::from_millis(10), p);
        }
    }
    for _ in 0..2 {
        deliver(&mut a, &mut b, now, false);
        now += SimDuration::from_millis(10);
        deliver(&mut b, &mut a, now, false);
        now += SimDuration::from_millis(10);
    }
    assert!(a.pr_negotiated() && b.pr_negotiated());
    give_pr(
        &mut a,
        now,
        0,
        100,
        0,
        false,
        PrPolicy::Lifetime(SimDuration::from_millis(300)),
    );
    deliver(&mut a, &mut b, now, true);
    give_pr(&mut a, now, 1, 100, 0, false, PrPolicy::Reliable);
    deliver(&mut a, &mut b, now, false);
    now += SimDuration::from_millis(10);
    deliver(&mut b, &mut a, now, false);
    assert!(delivered_ids(&mut b).is_empty(), "message 1 waits for message 0");
    // T3-rtx: message 0 is past its lifetime; the FORWARD TSN reaches the receiver.
    let at = a.poll_timeout().unwrap();
    a.on_timeout(at);
    deliver(&mut a, &mut b, at, false);
    assert_eq!(delivered_ids(&mut b), vec![1]);
    deliver(&mut b, &mut a, at + SimDuration::from_millis(10), false);
    assert_eq!(a.outstanding_chunks(), 0);
    assert_eq!(a.cum_ack_point(), a.advanced_peer_ack_point());
    assert_eq!(a.report().extra[1], ("abandoned_messages", Some(1.0)));
}

/// Shutdown after the last message is dropped (RFC 3758 §4.1): once a timed message waiting for the window expires and everything sent is acknowledged, SHUTDOWN goes out at once (RFC 9260 §9.2).
#[test]
fn pr15_shutdown_follows_when_the_last_message_is_dropped() {
    let mut s = established_pr(pr_cfg(), true);
    give(&mut s, t(300), 0, 3, 1452);
    give_pr(
        &mut s,
        t(300),
        3,
        100,
        0,
        false,
        PrPolicy::Lifetime(SimDuration::from_millis(100)),
    );
    assert_eq!(out(&mut s, t(300)).len(), 3);
    s.close(t(300));
    assert_eq!(s.state(), State::ShutdownPending);
    feed(&mut s, t(450), sack_pkt(tsn(2), &[], 65536));
    let p = out(&mut s, t(450));
    assert!(data_of(&p).is_empty());
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].control, Some(ControlChunk::Shutdown(ptsn(0).wrapping_sub(1))));
    assert_eq!(s.state(), State::ShutdownSent);
    assert_eq!(s.sctp_stats().abandoned_messages, 1);
}
