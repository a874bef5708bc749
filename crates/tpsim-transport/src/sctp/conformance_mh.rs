//! Multi-homing conformance cases (RFC 9260 §5.1.2, §5.4, §6.4, §8.1–§8.3), written from the
//! RFC: short scripted exchanges between the socket under test (addresses A1, A2) and a peer
//! with addresses B1, B2, with the expected chunks, destinations and values.
//!
//! The socket opens the association to B1 (its primary); the peer's INIT ACK lists B1 and B2.
//! Heartbeats of idle paths are off unless a case turns them on (HB.interval 30 s, no jitter);
//! RTO.Min is 1 s, so every fresh RTO is 1 s.

use super::tests::*;
use super::*;
use crate::tcp::Open;
use crate::{L4Header, Segment};
use std::net::Ipv4Addr;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{AddrList, ControlChunk, InitChunk, SctpRepr, StateCookie};

pub(super) const A1: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub(super) const A2: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);
pub(super) const B1: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
pub(super) const B2: Ipv4Addr = Ipv4Addr::new(10, 0, 3, 2);

pub(super) fn mh_cfg() -> SctpConfig {
    SctpConfig {
        hb_jitter: false,
        ..cfg(SctpProfile::Rfc9260)
    }
}

/// Everything the socket sends now, with the address each packet goes to.
pub(super) fn out_to(s: &mut SctpSocket, now: SimTime) -> Vec<(Option<Ipv4Addr>, SctpRepr)> {
    std::iter::from_fn(|| s.poll_transmit(now))
        .map(|seg| match seg.header {
            L4Header::Sctp(h) => (seg.addr, *h),
            _ => panic!("not SCTP"),
        })
        .collect()
}

/// A packet from the peer's address `from`.
pub(super) fn feed_from(s: &mut SctpSocket, now: SimTime, from: Ipv4Addr, h: SctpRepr) {
    let mut g: Segment = seg(h);
    g.addr = Some(from);
    s.on_segment(now, &g);
}

/// Runs the socket's timers due at `now` and returns what it sends.
pub(super) fn tick(s: &mut SctpSocket, now: SimTime) -> Vec<(Option<Ipv4Addr>, SctpRepr)> {
    s.on_timeout(now);
    out_to(s, now)
}

fn init_ack_listing(addrs: &[Ipv4Addr]) -> SctpRepr {
    let i = InitChunk {
        addresses: AddrList::from_slice(addrs),
        ..peer_init()
    };
    SctpRepr {
        control: Some(ControlChunk::InitAck(i, StateCookie([9; 32]))),
        ..from_peer()
    }
}

/// The socket through the handshake with a dual-homed peer; B2 still UNCONFIRMED, its probe
/// due at [`established_at`].
pub(super) fn mh_established(c: SctpConfig) -> SctpSocket {
    handshake(c, None)
}

/// [`mh_established`] with `primary` given to [`SctpSocket::set_addresses`].
fn handshake(c: SctpConfig, primary: Option<Ipv4Addr>) -> SctpSocket {
    let mut s = SctpSocket::new(
        sock_cfg(1500, tpsim_wire::SizeConvention::Standard),
        c,
        Open::Active,
        SimTime::ZERO,
    );
    s.set_addresses(&[A1, A2], Some(B1), primary);
    assert_eq!(out_to(&mut s, SimTime::ZERO).len(), 1, "INIT");
    feed_from(&mut s, t(2 * OWD_MS), B1, init_ack_listing(&[B1, B2]));
    let echo = out_to(&mut s, t(2 * OWD_MS));
    assert!(matches!(echo[0].1.control, Some(ControlChunk::CookieEcho(_))));
    assert_eq!(echo[0].0, Some(B1));
    feed_from(
        &mut s,
        established_at(),
        B1,
        SctpRepr {
            control: Some(ControlChunk::CookieAck),
            ..from_peer()
        },
    );
    assert_eq!(s.state(), State::Established);
    s
}

/// [`mh_established`] with B2 confirmed: its probe answered at once.
pub(super) fn mh_confirmed(c: SctpConfig) -> SctpSocket {
    let mut s = mh_established(c);
    let now = established_at();
    let probe = tick(&mut s, now);
    let Some(ControlChunk::Heartbeat(info)) = probe[0].1.control else {
        panic!("a probe: {probe:?}")
    };
    feed_from(&mut s, now, B2, hb_ack(info));
    assert!(s.paths()[1].confirmed);
    s
}

pub(super) fn hb_ack(info: u64) -> SctpRepr {
    SctpRepr {
        control: Some(ControlChunk::HeartbeatAck(info)),
        ..from_peer()
    }
}

/// Sends one 1000-byte message `id` at `now`; returns where its packet went.
pub(super) fn send_one(s: &mut SctpSocket, now: SimTime, id: u64) -> Option<Ipv4Addr> {
    give(s, now, id, 1, 1000);
    let p = out_to(s, now);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].1.data.len(), 1);
    p[0].0
}

/// INIT lists our addresses (RFC 9260 §5.1.2, §3.3.2.1): the INIT of a socket with two
/// addresses carries both as IPv4 Address parameters; a single-homed one carries none.
#[test]
fn mh01_init_lists_the_local_addresses() {
    let mut s = SctpSocket::new(
        sock_cfg(1500, tpsim_wire::SizeConvention::Standard),
        mh_cfg(),
        Open::Active,
        SimTime::ZERO,
    );
    s.set_addresses(&[A1, A2], Some(B1), None);
    let p = out_to(&mut s, SimTime::ZERO);
    let Some(ControlChunk::Init(i)) = p[0].1.control else {
        panic!("{p:?}")
    };
    assert_eq!(i.addresses.iter().collect::<Vec<_>>(), vec![A1, A2]);
    assert_eq!(p[0].0, Some(B1), "to the address the association is opened to");
    let mut one = SctpSocket::new(
        sock_cfg(1500, tpsim_wire::SizeConvention::Standard),
        mh_cfg(),
        Open::Active,
        SimTime::ZERO,
    );
    one.set_addresses(&[A1], Some(B1), None);
    let p = out_to(&mut one, SimTime::ZERO);
    let Some(ControlChunk::Init(i)) = p[0].1.control else {
        panic!("{p:?}")
    };
    assert!(i.addresses.is_empty());
}

/// The passive end learns the INIT's addresses (RFC 9260 §5.1.2, §5.4 rule 2): its INIT ACK goes
/// to the INIT's source listing its own addresses; after the COOKIE ECHO the INIT's source is
/// CONFIRMED and the other listed address UNCONFIRMED.
#[test]
fn mh02_passive_end_learns_the_init_addresses() {
    let mut s = SctpSocket::new(
        sock_cfg(1500, tpsim_wire::SizeConvention::Standard),
        mh_cfg(),
        Open::Passive,
        SimTime::ZERO,
    );
    s.set_addresses(&[A1, A2], None, None);
    let init = InitChunk {
        addresses: AddrList::from_slice(&[B1, B2]),
        ..peer_init()
    };
    feed_from(
        &mut s,
        t(0),
        B1,
        SctpRepr {
            control: Some(ControlChunk::Init(init)),
            ..SctpRepr::new(REMOTE, LOCAL, 0)
        },
    );
    let ack = out_to(&mut s, t(0));
    let Some(ControlChunk::InitAck(i, cookie)) = ack[0].1.control else {
        panic!("{ack:?}")
    };
    assert_eq!(ack[0].0, Some(B1));
    assert_eq!(i.addresses.iter().collect::<Vec<_>>(), vec![A1, A2]);
    feed_from(
        &mut s,
        t(100),
        B1,
        SctpRepr {
            control: Some(ControlChunk::CookieEcho(cookie)),
            ..SctpRepr::new(REMOTE, LOCAL, i.initiate_tag)
        },
    );
    assert_eq!(s.state(), State::Established);
    let p: Vec<_> = s.paths().iter().map(|p| (p.addr, p.confirmed)).collect();
    assert_eq!(p, vec![(Some(B1), true), (Some(B2), false)]);
}

/// Path verification (RFC 9260 §5.4): an UNCONFIRMED address gets a HEARTBEAT probe at once and
/// nothing else; DATA goes to the confirmed primary; the HEARTBEAT ACK confirms the address.
#[test]
fn mh03_unconfirmed_address_gets_only_heartbeats_until_confirmed() {
    let mut s = mh_established(mh_cfg());
    let now = established_at();
    assert_eq!(s.poll_timeout(), Some(now), "probe due at once");
    let probe = tick(&mut s, now);
    assert_eq!(probe.len(), 1);
    assert_eq!(probe[0].0, Some(B2));
    let Some(ControlChunk::Heartbeat(info)) = probe[0].1.control else {
        panic!("{probe:?}")
    };
    assert!(probe[0].1.data.is_empty() && probe[0].1.sack.is_none());
    assert_eq!(send_one(&mut s, now, 0), Some(B1));
    feed_from(&mut s, now + SimDuration::from_millis(40), B2, hb_ack(info));
    assert!(s.paths()[1].confirmed);
    assert_eq!(s.paths()[1].rtt.srtt(), Some(SimDuration::from_millis(40)));
}

/// Probing does not count against the association (RFC 9260 §5.4): unanswered probes of an
/// UNCONFIRMED address raise its error counter, once per RTO (backed off), and leave the
/// association's counter at 0; past Path.Max.Retrans it is inactive and no longer probed each
/// RTO.
#[test]
fn mh04_unanswered_probes_count_on_the_path_only() {
    let mut s = mh_established(mh_cfg());
    let mut now = established_at();
    assert!(matches!(
        tick(&mut s, now)[0].1.control,
        Some(ControlChunk::Heartbeat(_))
    ));
    let mut rto = 1000;
    for k in 1..=6u32 {
        assert_eq!(s.poll_timeout(), Some(now + SimDuration::from_millis(rto)), "check {k}");
        now += SimDuration::from_millis(rto);
        rto *= 2;
        let p = tick(&mut s, now);
        assert_eq!(s.paths()[1].error_count, k);
        assert_eq!(s.association_errors(), 0);
        if k <= 5 {
            assert_eq!(p.len(), 1, "the next probe");
            assert_eq!(p[0].0, Some(B2));
            assert!(matches!(p[0].1.control, Some(ControlChunk::Heartbeat(_))));
        } else {
            assert!(p.is_empty(), "inactive: no probe each RTO (idle heartbeats off)");
        }
    }
    assert!(
        !s.paths()[1].active,
        "inactive after Path.Max.Retrans + 1 = 6 unanswered probes"
    );
    assert!(s.paths()[1].hb_at.is_none());
}

/// Failure detection after exactly Path.Max.Retrans + 1 consecutive T3-rtx timeouts (RFC 9260
/// §8.2, §6.3.3): the primary stays active after 5 timeouts and is inactive after the 6th; its
/// RTO doubles each time (1, 2, 4, 8, 16, 32 s), 63 s from the first send to the failover.
#[test]
fn mh05_primary_fails_after_path_max_retrans_plus_one_timeouts() {
    let mut s = mh_confirmed(mh_cfg());
    let t0 = established_at();
    let mut now = t0;
    for k in 1..=6u32 {
        // New DATA goes to the primary while it is active; it times out there.
        assert_eq!(send_one(&mut s, now, k as u64 - 1), Some(B1), "round {k}");
        let rto = s.paths()[0].rtt.rto();
        assert_eq!(
            rto,
            SimDuration::from_secs(1 << (k - 1)),
            "RTO of B1 before timeout {k}"
        );
        now += rto;
        let rtx = tick(&mut s, now);
        assert_eq!(s.paths()[0].error_count, k);
        assert_eq!(s.paths()[0].active, k <= 5, "after {k} timeouts");
        // The chunk that timed out goes to B2 (mh06) and is acknowledged there.
        assert_eq!(rtx[0].0, Some(B2));
        feed_from(&mut s, now, B2, sack_pkt(tsn(k - 1), &[], 65536));
    }
    assert_eq!(now.saturating_since(t0), SimDuration::from_secs(63));
    assert_eq!(s.failovers(), 1);
    assert_eq!(s.data_path(), 1);
}

/// Retransmission to an alternate (RFC 9260 §6.4): a chunk that timed out on the active primary
/// is retransmitted to the other active address; new DATA stays on the primary.
#[test]
fn mh06_timed_out_chunk_is_retransmitted_to_the_alternate() {
    let mut s = mh_confirmed(mh_cfg());
    let now = established_at();
    assert_eq!(send_one(&mut s, now, 0), Some(B1));
    let later = now + SimDuration::from_secs(1);
    let rtx = tick(&mut s, later);
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].0, Some(B2));
    assert_eq!(rtx[0].1.data.as_slice()[0].tsn, tsn(0));
    assert!(s.paths()[0].active, "one timeout: still active");
    feed_from(&mut s, later, B2, sack_pkt(tsn(0), &[], 65536));
    assert_eq!(send_one(&mut s, later, 1), Some(B1), "new DATA on the primary");
}

/// Retransmissions wait for their own destination's cwnd, not new DATA to another (RFC 9260
/// §6.1 C, §7.2): six chunks time out on the primary and move to the alternate, whose cwnd
/// (4404 bytes) takes five; the sixth waits for it, and an unsent message goes to the primary
/// at once within the primary's cwnd of one PMDCS, restarting its T3-rtx (§6.3.2 R1) with the
/// backed-off RTO of 2 s.
#[test]
fn mh13_new_data_to_the_primary_while_retransmissions_wait_for_the_alternate() {
    let c = SctpConfig {
        max_burst: None,
        ..mh_cfg()
    };
    let mut s = mh_confirmed(c);
    // Five chunks fill the primary's cwnd; their SACK grows it by one PMDCS.
    let now = established_at();
    give(&mut s, now, 0, 5, 1000);
    assert_eq!(out_to(&mut s, now).len(), 5);
    let acked = now + SimDuration::from_millis(2 * OWD_MS);
    feed_from(&mut s, acked, B1, sack_pkt(tsn(4), &[], 65536));
    assert_eq!(s.paths()[0].cwnd, 4404 + 1468);
    // Six outstanding on the primary, two messages unsent.
    give(&mut s, acked, 5, 8, 1000);
    assert_eq!(out_to(&mut s, acked).len(), 6);
    let fired = acked + SimDuration::from_secs(1);
    let out = tick(&mut s, fired);
    let to: Vec<_> = out.iter().map(|(to, p)| (*to, p.data.as_slice()[0].tsn)).collect();
    let mut expected: Vec<_> = (5..10).map(|k| (Some(B2), tsn(k))).collect();
    expected.push((Some(B1), tsn(11)));
    assert_eq!(to, expected, "five retransmissions to B2, new DATA to B1");
    assert_eq!(s.paths()[0].t3_rtx, Some(fired + SimDuration::from_secs(2)));
}

/// RTO and cwnd per destination (RFC 9260 §6.3.3 E1/E2, §7.2): a T3-rtx timeout on the primary
/// doubles its RTO and sets its cwnd to one PMDCS; the alternate's RTO and cwnd are unchanged.
#[test]
fn mh07_timeout_backs_off_only_its_destination() {
    let mut s = mh_confirmed(mh_cfg());
    let now = established_at();
    let (rto2, cwnd2) = (s.paths()[1].rtt.rto(), s.paths()[1].cwnd);
    send_one(&mut s, now, 0);
    let _ = tick(&mut s, now + SimDuration::from_secs(1));
    assert_eq!(s.paths()[0].rtt.rto(), SimDuration::from_secs(2));
    assert_eq!(s.paths()[0].cwnd, 1468);
    assert_eq!((s.paths()[1].rtt.rto(), s.paths()[1].cwnd), (rto2, cwnd2));
}

/// Failover target (RFC 9260 §6.4.1): with the primary inactive, new DATA goes to the active
/// alternate, and its first acknowledgement is the failover's time.
#[test]
fn mh08_new_data_fails_over_to_the_active_alternate() {
    let c = SctpConfig {
        path_max_retrans: 0,
        ..mh_cfg()
    };
    let mut s = mh_confirmed(c);
    let now = established_at();
    send_one(&mut s, now, 0);
    let later = now + SimDuration::from_secs(1);
    let _ = tick(&mut s, later);
    assert!(!s.paths()[0].active, "Path.Max.Retrans 0: one timeout");
    feed_from(&mut s, later, B2, sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.failover_acked_at(), None, "a retransmission is not new DATA");
    assert_eq!(send_one(&mut s, later, 1), Some(B2));
    let acked = later + SimDuration::from_millis(100);
    feed_from(&mut s, acked, B2, sack_pkt(tsn(1), &[], 65536));
    assert_eq!(s.failover_acked_at(), Some(acked));
}

/// A HEARTBEAT ACK restores a destination (RFC 9260 §8.3, §8.2): the inactive primary, still
/// heartbeated, answers; it is active with its error counter cleared, and new DATA returns to it.
#[test]
fn mh09_heartbeat_ack_restores_the_primary() {
    let c = SctpConfig {
        path_max_retrans: 0,
        hb_interval: Some(SimDuration::from_secs(30)),
        ..mh_cfg()
    };
    let mut s = mh_confirmed(c);
    let now = established_at();
    send_one(&mut s, now, 0);
    let later = now + SimDuration::from_secs(1);
    let _ = tick(&mut s, later);
    feed_from(&mut s, later, B2, sack_pkt(tsn(0), &[], 65536));
    assert_eq!(s.data_path(), 1);
    // Run the timers until a HEARTBEAT goes to B1.
    let mut at;
    let info = loop {
        at = s.poll_timeout().expect("heartbeats run");
        let p = tick(&mut s, at);
        if let Some((_, h)) = p.iter().find(|(a, _)| *a == Some(B1)) {
            let Some(ControlChunk::Heartbeat(info)) = h.control else {
                panic!("{h:?}")
            };
            break info;
        }
        assert!(at < later + SimDuration::from_secs(300));
    };
    feed_from(&mut s, at, B1, hb_ack(info));
    assert!(s.paths()[0].active);
    assert_eq!(s.paths()[0].error_count, 0);
    assert_eq!(s.data_path(), 0);
    assert_eq!(send_one(&mut s, at, 1), Some(B1));
}

/// Association.Max.Retrans over all paths (RFC 9260 §8.1): timeouts on B1 and B2 add up in the
/// association's counter; the association is aborted when it exceeds the limit, although no
/// single path reached Path.Max.Retrans.
#[test]
fn mh10_association_errors_add_up_over_paths() {
    let c = SctpConfig {
        assoc_max_retrans: 3,
        path_max_retrans: 5,
        ..mh_cfg()
    };
    let mut s = mh_confirmed(c);
    let mut now = established_at();
    send_one(&mut s, now, 0);
    let mut dests = Vec::new();
    for _ in 0..4 {
        now = s.poll_timeout().expect("T3-rtx");
        let p = tick(&mut s, now);
        dests.push(p[0].0);
        if matches!(p[0].1.control, Some(ControlChunk::Abort { .. })) {
            break;
        }
    }
    assert_eq!(
        dests[..3],
        [Some(B2), Some(B1), Some(B2)],
        "each retransmission to the other path"
    );
    assert_eq!(s.state(), State::Closed);
    assert_eq!(s.sctp_stats().gave_up, 1);
    assert!(s.paths().iter().all(|p| p.error_count <= 2));
}

/// Replies go back where the packet came from (RFC 9260 §6.4): a SACK to the confirmed address
/// the DATA came from, or to the primary if that address is unconfirmed; a HEARTBEAT ACK to the
/// HEARTBEAT's source, confirmed or not (§5.4 allows it).
#[test]
fn mh11_sack_and_heartbeat_ack_go_back_to_the_source() {
    let mut s = mh_established(mh_cfg());
    let now = established_at();
    let _ = tick(&mut s, now); // B2's probe
    let data = |k: u32| data_pkt(&[pdata(k, 0, k as u16, tpsim_wire::sctp::DataFlags::WHOLE, 100, k as u64)]);
    let hb = SctpRepr {
        control: Some(ControlChunk::Heartbeat(77)),
        ..from_peer()
    };
    feed_from(&mut s, now, B2, hb);
    let p = out_to(&mut s, now);
    assert_eq!(p[0].0, Some(B2));
    assert_eq!(p[0].1.control, Some(ControlChunk::HeartbeatAck(77)));
    assert!(p[0].1.sack.is_none());
    feed_from(&mut s, now, B2, data(0));
    feed_from(&mut s, now, B2, data(1));
    let p = out_to(&mut s, now);
    assert!(p[0].1.sack.is_some());
    assert_eq!(p[0].0, Some(B1), "B2 unconfirmed: the SACK goes to the primary");
    let mut s = mh_confirmed(mh_cfg());
    feed_from(&mut s, now, B2, data(0));
    feed_from(&mut s, now, B2, data(1));
    let p = out_to(&mut s, now);
    assert!(p[0].1.sack.is_some());
    assert_eq!(p[0].0, Some(B2));
}

/// The primary the upper layer chooses (RFC 9260 §6.4): given B2 as primary, the socket makes it
/// primary once the peer announced it, and new DATA goes there once it is confirmed.
#[test]
fn mh12_primary_chosen_by_the_upper_layer() {
    let mut s = handshake(mh_cfg(), Some(B2));
    assert_eq!(s.primary_path(), 1);
    let now = established_at();
    let probe = tick(&mut s, now);
    let Some(ControlChunk::Heartbeat(info)) = probe[0].1.control else {
        panic!("{probe:?}")
    };
    assert_eq!(send_one(&mut s, now, 0), Some(B1), "B2 not yet confirmed");
    feed_from(&mut s, now, B2, hb_ack(info));
    feed_from(&mut s, now, B1, sack_pkt(tsn(0), &[], 65536));
    assert_eq!(send_one(&mut s, now, 1), Some(B2));
}
