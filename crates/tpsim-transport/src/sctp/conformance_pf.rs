//! Potentially-failed (PF) state conformance cases (RFC 7829 §3, on RFC 9260 §6.4, §8.2, §8.3),
//! written from the RFC: short scripted exchanges between the socket under test (addresses A1,
//! A2) and a peer with addresses B1 (the primary) and B2, set up as in the multi-homing cases
//! (`conformance_mh.rs`: B2 confirmed, HB.interval off, fresh RTOs of 1 s).

use super::conformance_mh::*;
use super::tests::*;
use super::*;
use std::net::Ipv4Addr;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{ControlChunk, SctpRepr};

/// [`mh_cfg`] with the PF state and PotentiallyFailed.Max.Retrans `pfmr`.
fn pf_cfg(pfmr: u32) -> SctpConfig {
    SctpConfig {
        pf_max_retrans: Some(pfmr),
        ..mh_cfg()
    }
}

fn secs(s: u64) -> SimDuration {
    SimDuration::from_secs(s)
}

/// The information of the HEARTBEAT among `p` that goes to `to`, if any.
fn hb_to(p: &[(Option<Ipv4Addr>, SctpRepr)], to: Ipv4Addr) -> Option<u64> {
    p.iter().find_map(|(a, h)| match h.control {
        Some(ControlChunk::Heartbeat(info)) if *a == Some(to) => Some(info),
        _ => None,
    })
}

/// The TSNs of the DATA chunks among `p` that go to `to`.
fn data_to(p: &[(Option<Ipv4Addr>, SctpRepr)], to: Ipv4Addr) -> Vec<u32> {
    p.iter()
        .filter(|(a, _)| *a == Some(to))
        .flat_map(|(_, h)| h.data.as_slice().iter().map(|d| d.tsn))
        .collect()
}

/// The primary potentially failed after one T3-rtx timeout (PFMR 0), its retransmission
/// acknowledged on B2 at the same time: returns the socket and the time of the timeout, when
/// B1's first HEARTBEAT (whose information is returned too) went out.
fn primary_pf() -> (SctpSocket, SimTime, u64) {
    let mut s = mh_confirmed(pf_cfg(0));
    let t0 = established_at();
    assert_eq!(send_one(&mut s, t0, 0), Some(B1));
    let fired = t0 + secs(1);
    let p = tick(&mut s, fired);
    let info = hb_to(&p, B1).expect("a HEARTBEAT to the potentially-failed primary");
    feed_from(&mut s, fired, B2, sack_pkt(tsn(0), &[], 65536));
    (s, fired, info)
}

/// Entering PF (RFC 7829 §3): with PFMR 0 one T3-rtx timeout makes the primary potentially
/// failed (still active, error counter 1), the chunk that timed out and new DATA go to the
/// active alternate at once and the primary gets a HEARTBEAT; with PFMR 2 it takes 3 timeouts.
#[test]
fn pf01_enters_pf_after_pfmr_plus_one_timeouts_and_new_data_moves() {
    let mut s = mh_confirmed(pf_cfg(0));
    let now = established_at();
    assert_eq!(send_one(&mut s, now, 0), Some(B1));
    let fired = now + secs(1);
    assert_eq!(s.poll_timeout(), Some(fired), "T3-rtx of B1");
    let p = tick(&mut s, fired);
    let b1 = &s.paths()[0];
    assert!(b1.potentially_failed && b1.active);
    assert_eq!(b1.error_count, 1);
    assert_eq!(data_to(&p, B2), vec![tsn(0)], "the retransmission to the alternate");
    assert!(data_to(&p, B1).is_empty());
    assert!(hb_to(&p, B1).is_some(), "a HEARTBEAT to B1 at once: {p:?}");
    assert_eq!((s.data_path(), s.failovers(), s.sctp_stats().pf_entries), (1, 1, 1));
    assert_eq!(
        send_one(&mut s, fired, 1),
        Some(B2),
        "new DATA at once, before any SACK"
    );

    // PFMR 2: the primary takes new DATA through two timeouts; the third makes it PF.
    let mut s = mh_confirmed(pf_cfg(2));
    let mut now = established_at();
    for k in 1..=3u32 {
        assert_eq!(send_one(&mut s, now, k as u64 - 1), Some(B1), "round {k}");
        now += s.paths()[0].rtt.rto();
        let _ = tick(&mut s, now);
        assert_eq!(s.paths()[0].error_count, k);
        assert_eq!(s.paths()[0].potentially_failed, k == 3, "after {k} timeouts");
        feed_from(&mut s, now, B2, sack_pkt(tsn(k - 1), &[], 65536));
    }
    assert_eq!(s.data_path(), 1);
    assert_eq!(send_one(&mut s, now, 3), Some(B2));
}

/// HEARTBEATs to a PF destination (RFC 7829 §3): one when it becomes potentially failed, then
/// one per RTO of that destination, the RTO doubling with each unanswered one (2, 4, 8 s after
/// the timeout's own back-off) and each unanswered one an error; HB.interval is off, so the PF
/// state alone sends them.
#[test]
fn pf02_pf_destination_heartbeated_once_per_rto_backed_off() {
    let (mut s, mut at, _) = primary_pf();
    let sent_before = s.sctp_stats().heartbeats;
    for (k, rto) in [(2u32, 2u64), (3, 4), (4, 8)] {
        assert_eq!(s.poll_timeout(), Some(at + secs(rto)), "check of HEARTBEAT {}", k - 1);
        at += secs(rto);
        let p = tick(&mut s, at);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(hb_to(&p, B1).is_some() && p[0].1.data.is_empty());
        assert_eq!(s.paths()[0].error_count, k);
        assert!(s.paths()[0].potentially_failed);
        assert_eq!(s.paths()[0].rtt.rto(), secs(2 * rto));
    }
    assert_eq!(s.sctp_stats().heartbeats - sent_before, 3);
    assert_eq!(s.data_path(), 1, "new DATA stays on B2");
}

/// A HEARTBEAT ACK ends PF (RFC 7829 §3): the primary answers its first HEARTBEAT; it is active
/// with its error counter cleared, new DATA returns to it at once, and its cwnd is the one PMDCS
/// the timeout left (RFC 9260 §6.3.3 E1; data resumes under §7.2): one packet, one in flight.
#[test]
fn pf03_heartbeat_ack_restores_the_primary_for_new_data() {
    let (mut s, fired, info) = primary_pf();
    assert_eq!(send_one(&mut s, fired, 1), Some(B2));
    let answered = fired + SimDuration::from_millis(40);
    feed_from(&mut s, answered, B1, hb_ack(info));
    let b1 = &s.paths()[0];
    assert!(b1.active && !b1.potentially_failed);
    assert_eq!(b1.error_count, 0);
    assert_eq!(b1.cwnd, 1468);
    assert_eq!(s.data_path(), 0);
    // Two messages: one packet to B1 now (RFC 9260 §7.2.1: one packet in flight after a
    // timeout until acknowledged), the other waits.
    give(&mut s, answered, 2, 2, 1000);
    let p = out_to(&mut s, answered);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].0, Some(B1));
    assert_eq!(data_to(&p, B1), vec![tsn(2)]);
    assert_eq!(s.failovers(), 1);
}

/// PF to inactive (RFC 7829 §3, RFC 9260 §8.2): unanswered HEARTBEATs raise the PF primary's
/// error counter; it stays potentially failed and active through 5 errors, and is inactive,
/// no longer potentially failed, after the 6th (Path.Max.Retrans + 1); with HB.interval off it
/// is then heartbeated no more.
#[test]
fn pf04_pf_destination_becomes_inactive_after_path_max_retrans_plus_one_errors() {
    let (mut s, mut at, _) = primary_pf();
    let mut rto = 2;
    for k in 2..=6u32 {
        at += secs(rto);
        rto *= 2;
        let p = tick(&mut s, at);
        let b1 = &s.paths()[0];
        assert_eq!(b1.error_count, k);
        assert_eq!((b1.active, b1.potentially_failed), (k <= 5, k <= 5), "after {k} errors");
        assert_eq!(hb_to(&p, B1).is_some(), k <= 5, "{p:?}");
    }
    assert!(s.paths()[0].hb_at.is_none());
    assert_eq!(s.data_path(), 1);
    assert_eq!(s.sctp_stats().pf_entries, 1);
}

/// All destinations PF (RFC 7829 §3): new DATA and retransmissions go to the PF destination
/// with the fewest errors: B2 (1 error) over B1 (2), then B1 once B2 has 3; a SACK of DATA sent
/// to a PF destination makes it active again (RFC 9260 §8.2).
#[test]
fn pf05_all_destinations_pf_data_goes_to_the_fewest_errors() {
    let (mut s, t1, _) = primary_pf();
    // T1 + 2 s: B1's HEARTBEAT unanswered (2 errors); a message goes to B2, timed out 1 s later.
    let mut at = t1 + secs(2);
    let _ = tick(&mut s, at);
    assert_eq!(s.paths()[0].error_count, 2);
    assert_eq!(send_one(&mut s, at, 1), Some(B2));
    at = t1 + secs(3);
    assert_eq!(s.poll_timeout(), Some(at), "T3-rtx of B2");
    let p = tick(&mut s, at);
    let (b1, b2) = (&s.paths()[0], &s.paths()[1]);
    assert!(b1.potentially_failed && b2.potentially_failed, "every destination PF");
    assert_eq!((b1.error_count, b2.error_count), (2, 1));
    assert_eq!(s.data_path(), 1, "B2 has fewer errors");
    assert_eq!(data_to(&p, B2), vec![tsn(1)], "retransmitted to B2 too: {p:?}");
    assert!(data_to(&p, B1).is_empty());
    assert!(hb_to(&p, B2).is_some());
    // A message waits (one packet in flight on B2 after its timeout).
    give(&mut s, at, 2, 1, 1000);
    assert!(out_to(&mut s, at).is_empty());
    // T1 + 5 s: B2's T3-rtx (RTO 2 s) and its HEARTBEAT's check: 3 errors against B1's 2; the
    // retransmission marked before the HEARTBEAT's error stays on B2, the waiting message goes
    // to B1.
    at = t1 + secs(5);
    let p = tick(&mut s, at);
    assert_eq!((s.paths()[0].error_count, s.paths()[1].error_count), (2, 3));
    assert_eq!(s.data_path(), 0);
    assert_eq!(data_to(&p, B1), vec![tsn(2)], "{p:?}");
    assert_eq!(data_to(&p, B2), vec![tsn(1)]);
    feed_from(&mut s, at, B1, sack_pkt(tsn(0), &[(2, 2)], 65536));
    let b1 = &s.paths()[0];
    assert!(b1.active && !b1.potentially_failed);
    assert_eq!(b1.error_count, 0);
    assert!(s.paths()[1].potentially_failed, "B2's DATA is not acknowledged");
}

/// PF off is RFC 9260 alone (RFC 9260 §8.2, §6.4.1): mh05's timeline (the primary takes new
/// DATA through 5 timeouts, inactive after the 6th, 63 s) without the PF state, with a PFMR
/// of Path.Max.Retrans (never reached), and no PF on a single-homed association.
#[test]
fn pf06_pf_off_keeps_the_rfc9260_timeline() {
    for c in [mh_cfg(), pf_cfg(5)] {
        let mut s = mh_confirmed(c);
        let t0 = established_at();
        let mut now = t0;
        for k in 1..=6u32 {
            assert_eq!(send_one(&mut s, now, k as u64 - 1), Some(B1), "round {k}");
            assert_eq!(s.paths()[0].rtt.rto(), secs(1 << (k - 1)));
            now += s.paths()[0].rtt.rto();
            let rtx = tick(&mut s, now);
            assert_eq!(rtx.len(), 1, "the retransmission only, no HEARTBEAT: {rtx:?}");
            assert_eq!(data_to(&rtx, B2), vec![tsn(k - 1)]);
            assert_eq!(s.paths()[0].active, k <= 5, "after {k} timeouts");
            assert!(!s.paths()[0].potentially_failed);
            feed_from(&mut s, now, B2, sack_pkt(tsn(k - 1), &[], 65536));
        }
        assert_eq!(now.saturating_since(t0), secs(63));
        assert_eq!((s.failovers(), s.data_path(), s.sctp_stats().pf_entries), (1, 1, 0));
    }
    let mut one = established(pf_cfg(0), 1500);
    let now = established_at();
    give(&mut one, now, 0, 1, 1000);
    assert_eq!(out(&mut one, now).len(), 1);
    let rtx = out_after_timeout(&mut one, now + secs(1));
    assert_eq!(data_of(&rtx), vec![(tsn(0), 1000)], "the retransmission, no HEARTBEAT");
    assert!(!one.paths()[0].potentially_failed);
    assert_eq!(one.sctp_stats().pf_entries, 0);
}

/// What a single-homed socket sends after its timers at `now`.
fn out_after_timeout(s: &mut SctpSocket, now: SimTime) -> Vec<SctpRepr> {
    s.on_timeout(now);
    out(s, now)
}
