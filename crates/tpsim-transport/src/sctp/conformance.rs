//! The public SCTP conformance suite (networktest.sourceforge.net): its 14 congestion-control
//! cases (`cases/congest/`) and 4 data-transfer cases (`log/2.6.29-rc4/IPv4/data/`), driven
//! packet by packet against the socket under test ("endpoint B", the sender, or the receiver
//! for the data-transfer cases), each run twice:
//!
//! * `rfc4960`: the suite's own values (MTU units, initial cwnd 4380: 4380, 1500, 5732, 5880,
//!   6000, ...), with DATA chunks whose user data gives the sizes the suite implies (1352 bytes,
//!   so that 4380 + 1352 = 5732);
//! * `rfc9260`: RFC 9260's values (PMDCS units, 1468, initial cwnd 4404, 5872, ...), with chunks
//!   of the same size counted the RFC 9260 way (16-byte header included: 1336 bytes of data).
//!
//! Case 11's public script acknowledges TSN 2 and later reports it missing (a renege); here
//! the exchange is consistent: the first SACK acknowledges TSN 1 and, by a Gap Ack Block,
//! TSN 3.

use super::tests::*;
use super::*;
use crate::TransportEvent;
use tpsim_core::SimDuration;
use tpsim_wire::sctp::{ControlChunk, DataFlags};

/// What differs between the two runs of a case.
#[derive(Clone, Copy, Debug)]
struct P {
    profile: SctpProfile,
    /// MTU (RFC 4960) or PMDCS (RFC 9260).
    unit: u64,
    /// Initial cwnd.
    iw: u64,
}

const RFC4960: P = P {
    profile: SctpProfile::Rfc4960,
    unit: 1500,
    iw: 4380,
};
const RFC9260: P = P {
    profile: SctpProfile::Rfc9260,
    unit: 1468,
    iw: 4404,
};

impl P {
    /// User data of a chunk counting `counted` bytes in the flight size.
    fn user(&self, counted: u32) -> u32 {
        match self.profile {
            SctpProfile::Rfc4960 => counted,
            _ => counted - 16,
        }
    }
    fn sock(&self) -> SctpSocket {
        established(self.cfg(), 1500)
    }
    fn cfg(&self) -> SctpConfig {
        cfg(self.profile)
    }
}

/// Sends `n` messages of `counted` bytes each at `now` and returns how many packets left.
fn send(s: &mut SctpSocket, p: P, now: tpsim_core::SimTime, first: u64, n: u64, counted: u32) -> usize {
    give(s, now, first, n, p.user(counted));
    out(s, now).len()
}
fn before() -> u32 {
    tsn(0).wrapping_sub(1)
}

fn both(f: fn(P)) {
    f(RFC4960);
    f(RFC9260);
}

/// Case 1, InitCwndBeforeTrans (RFC 9260 §7.2.1): initial cwnd = min(4·PMDCS, max(2·PMDCS, 4404)):
/// 4380 (RFC 4960, MTU 1500) / 4404 (RFC 9260).
#[test]
fn c01_init_cwnd_before_transmission() {
    both(|p| {
        let s = p.sock();
        assert_eq!(s.cwnd(), p.iw);
        assert_eq!(
            s.cwnd(),
            (4 * p.unit).min((2 * p.unit).max(if p.unit == 1500 { 4380 } else { 4404 }))
        );
    });
    assert_eq!(RFC4960.sock().cwnd(), 4380);
    assert_eq!(RFC9260.sock().cwnd(), 4404);
}

/// Case 2, InitCwndAfterRetran (§7.2.1, §6.3.3 E1): after a T3-rtx timeout cwnd = 1·MTU (1500) /
/// 1·PMDCS (1468), ssthresh = max(cwnd/2, 4·unit) = 6000 / 5872.
#[test]
fn c02_init_cwnd_after_retransmission_timeout() {
    both(|p| {
        let mut s = p.sock();
        assert_eq!(send(&mut s, p, t(300), 0, 1, 1352), 1);
        s.on_timeout(t(1300));
        assert_eq!(data_of(&out(&mut s, t(1300))).len(), 1, "the DATA again");
        assert_eq!(s.cwnd(), p.unit);
        assert_eq!(s.ssthresh(), (p.iw / 2).max(4 * p.unit));
        feed(&mut s, t(1400), sack_pkt(tsn(0), &[], 65536));
    });
    let mut s = RFC4960.sock();
    send(&mut s, RFC4960, t(300), 0, 1, 1352);
    s.on_timeout(t(1300));
    assert_eq!((s.cwnd(), s.ssthresh()), (1500, 6000));
    let mut s = RFC9260.sock();
    send(&mut s, RFC9260, t(300), 0, 1, 1352);
    s.on_timeout(t(1300));
    assert_eq!((s.cwnd(), s.ssthresh()), (1468, 5872));
}

/// Case 3, InitCwndWhenSACK (§7.2.1): 4 DATA outstanding (the window fully used), a SACK for one
/// chunk of 1352 bytes: cwnd += 1352: 5732 / 5756.
#[test]
fn c03_slow_start_increase_by_bytes_acked() {
    for (p, want) in [(RFC4960, 5732), (RFC9260, 5756)] {
        let mut s = p.sock();
        assert_eq!(
            send(&mut s, p, t(300), 0, 5, 1352),
            4,
            "3 fit, the 4th overbooks (§6.1 B)"
        );
        assert_eq!(s.flight_size(), 4 * 1352);
        feed(&mut s, t(400), sack_pkt(tsn(0), &[], 65536));
        assert_eq!(s.cwnd(), want);
        assert_eq!(s.cwnd(), p.iw + 1352);
        feed(&mut s, t(401), sack_pkt(tsn(3), &[], 65536));
    }
}

/// Case 4, InitCwndWhenSACK2 (§7.2.1): a SACK for two chunks (2704 bytes > one unit): cwnd += one
/// unit at most (L = 1): 5880 / 5872.
#[test]
fn c04_slow_start_increase_capped_at_one_unit() {
    for (p, want) in [(RFC4960, 5880), (RFC9260, 5872)] {
        let mut s = p.sock();
        send(&mut s, p, t(300), 0, 5, 1352);
        feed(&mut s, t(400), sack_pkt(tsn(1), &[], 65536));
        assert_eq!(s.cwnd(), want);
    }
}

/// Case 5, InitCwndNotChang (§7.2.1): DATA and SACK in lock-step: the window is never fully used,
/// cwnd stays 4380 / 4404.
#[test]
fn c05_cwnd_unchanged_when_not_fully_used() {
    both(|p| {
        let mut s = p.sock();
        for k in 0..4u32 {
            let at = t(300 + 100 * k as u64);
            assert_eq!(send(&mut s, p, at, k as u64, 1, 1352), 1);
            feed(&mut s, at + SimDuration::from_millis(50), sack_pkt(tsn(k), &[], 65536));
            assert_eq!(s.cwnd(), p.iw);
        }
    });
}

/// Case 6, InitCwndAfterIdle (§7.2.1): no DATA on the path: cwnd = max(cwnd/2, 4·unit) per RTO,
/// ssthresh = cwnd before the first adjustment. From 5880: 6000 (RFC 4960; the formula raises a
/// cwnd below 8 MTU) / from 5872: 5872 (RFC 9260), checked when the HEARTBEAT goes out.
#[test]
fn c06_cwnd_adjusted_while_idle() {
    for (p, grown, want) in [(RFC4960, 5880, 6000), (RFC9260, 5872, 5872)] {
        let c = SctpConfig {
            hb_interval: Some(SimDuration::from_secs(30)),
            ..p.cfg()
        };
        let mut s = established(c, 1500);
        send(&mut s, p, t(300), 0, 4, 1352);
        feed(&mut s, t(400), sack_pkt(tsn(3), &[], 65536));
        assert_eq!(s.cwnd(), grown);
        assert_eq!(send(&mut s, p, t(500), 4, 1, 1352), 1);
        feed(&mut s, t(600), sack_pkt(tsn(4), &[], 65536));
        assert_eq!(s.cwnd(), grown);
        // The first heartbeat period saw DATA; the HEARTBEAT goes out at the end of the next.
        let hb = loop {
            let at = s.poll_timeout().unwrap();
            s.on_timeout(at);
            let pk = out(&mut s, at);
            if !pk.is_empty() {
                assert!(matches!(pk[0].control, Some(ControlChunk::Heartbeat(_))));
                break at;
            }
        };
        assert!(hb > t(60_000));
        assert_eq!(s.cwnd(), want);
        assert_eq!(s.ssthresh(), grown);
    }
}

/// Case 7, MaxBurstLimit (§6.1 D): a SACK for all 4 packets outstanding opens cwnd to 5880 / 5872
/// with nothing in flight (room for 5 packets), yet that one send opportunity emits Max.Burst
/// (4) packets; cwnd is not lowered, and the next opportunity sends on.
#[test]
fn c07_max_burst_limits_packets_per_opportunity() {
    for (p, grown) in [(RFC4960, 5880), (RFC9260, 5872)] {
        let mut s = p.sock();
        assert_eq!(send(&mut s, p, t(300), 0, 20, 1352), 4);
        feed(&mut s, t(400), sack_pkt(tsn(3), &[], 1 << 20));
        assert_eq!(s.cwnd(), grown);
        assert_eq!(out(&mut s, t(400)).len(), 4, "5 allowed by cwnd, 4 by Max.Burst");
        assert_eq!(s.cwnd(), grown);
        feed(&mut s, t(500), sack_pkt(tsn(4), &[], 1 << 20));
        assert_eq!(out(&mut s, t(500)).len(), 2);
    }
}

/// State for cases 8–10: ssthresh below the initial window (congestion avoidance at once), 4
/// chunks of 1352 outstanding, 3 of them acknowledged (partial_bytes_acked 4056 < cwnd), 3 more
/// sent.
fn ca_setup(p: P) -> SctpSocket {
    let c = SctpConfig {
        initial_ssthresh_bytes: Some(4000),
        ..p.cfg()
    };
    let mut s = established(c, 1500);
    assert!(s.cwnd() > s.ssthresh());
    assert_eq!(send(&mut s, p, t(300), 0, 4, 1352), 4);
    feed(&mut s, t(400), sack_pkt(tsn(2), &[], 65536));
    assert_eq!((s.cwnd(), s.partial_bytes_acked()), (p.iw, 4056));
    assert_eq!(send(&mut s, p, t(400), 4, 3, 1352), 3);
    s
}

/// Case 8, UsedCongestAvoid (§7.2.2): when partial_bytes_acked >= cwnd and the flight size was >=
/// cwnd before the SACK, cwnd += one unit and partial_bytes_acked -= cwnd: 4380 → 5880 with
/// 6760 − 4380 = 2380 left (RFC 4960) / 4404 → 5872, 2356 (RFC 9260).
#[test]
fn c08_congestion_avoidance_increase() {
    for (p, cwnd, pba) in [(RFC4960, 5880, 2380), (RFC9260, 5872, 2356)] {
        let mut s = ca_setup(p);
        feed(&mut s, t(500), sack_pkt(tsn(4), &[], 65536));
        assert_eq!((s.cwnd(), s.partial_bytes_acked()), (cwnd, pba));
    }
}

/// Case 9, Idle in congestion avoidance (§7.2.2 refers to §7.2.1's rule): cwnd = max(cwnd/2,
/// 4·unit) per RTO without transmission: 5880 → 6000 / 5872 → 5872, ssthresh = the cwnd before.
#[test]
fn c09_congestion_avoidance_idle() {
    for (p, grown, want) in [(RFC4960, 5880, 6000), (RFC9260, 5872, 5872)] {
        let mut s = ca_setup(p);
        feed(&mut s, t(500), sack_pkt(tsn(4), &[], 65536));
        feed(&mut s, t(600), sack_pkt(tsn(6), &[], 65536));
        assert_eq!(s.cwnd(), grown);
        // Two RTOs later, a packet from the peer is the next input.
        feed(&mut s, t(2700), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 10, 0)]));
        assert_eq!((s.cwnd(), s.ssthresh()), (want, grown));
    }
}

/// Case 10, ResetPartialBytesAck (§7.2.2): partial_bytes_acked returns to 0 when all data sent is
/// acknowledged.
#[test]
fn c10_partial_bytes_acked_reset() {
    both(|p| {
        let mut s = ca_setup(p);
        feed(&mut s, t(500), sack_pkt(tsn(4), &[], 65536));
        assert!(s.partial_bytes_acked() > 0);
        feed(&mut s, t(600), sack_pkt(tsn(6), &[], 65536));
        assert_eq!(s.partial_bytes_acked(), 0);
    });
}

/// Cases 11–12: 5 chunks of 1000 bytes (4 fit 4380/4404, the 5th overbooks, sent at the next
/// send opportunity because of Max.Burst); TSN 2 (our index 1) is lost; the first SACK acknowledges 1 and 3 (cwnd → 5880 / 5872); two more report 2
/// missing (HTNA, §7.2.4): the third miss indication fast-retransmits it.
fn fr_setup(p: P) -> SctpSocket {
    let mut s = p.sock();
    assert_eq!(send(&mut s, p, t(300), 0, 4, 1000), 4);
    // Max.Burst (4) ends this send opportunity; the 5th goes with the next (flight 4000 < cwnd).
    assert_eq!(send(&mut s, p, t(301), 4, 1, 1000), 1);
    feed(&mut s, t(400), sack_pkt(tsn(0), &[(2, 2)], 65536));
    assert_eq!(s.cwnd(), p.iw + p.unit);
    feed(&mut s, t(401), sack_pkt(tsn(0), &[(2, 3)], 65536));
    assert!(out(&mut s, t(401)).is_empty());
    feed(&mut s, t(402), sack_pkt(tsn(0), &[(2, 4)], 65536));
    s
}

/// Case 11, InitCwndUnderFastRetran (§7.2.3, §7.2.4): on the third miss indication TSN 2 is
/// retransmitted at once; ssthresh = max(cwnd/2, 4·unit), cwnd = ssthresh: 6000 (RFC 4960) /
/// 5872 (RFC 9260); the SACK of everything ends Fast Recovery without growing cwnd.
#[test]
fn c11_cwnd_after_fast_retransmit() {
    for (p, want) in [(RFC4960, 6000), (RFC9260, 5872)] {
        let mut s = fr_setup(p);
        let pk = out(&mut s, t(402));
        assert_eq!(pk.len(), 1);
        assert_eq!(data_of(&pk), vec![(tsn(1), p.user(1000) as u16)]);
        assert_eq!((s.cwnd(), s.ssthresh()), (want, want));
        assert!(s.path().in_fast_recovery());
        assert_eq!(s.report().fast_retransmits, 1);
        feed(&mut s, t(500), sack_pkt(tsn(4), &[], 65536));
        assert!(!s.path().in_fast_recovery());
        assert_eq!(s.cwnd(), want);
        assert_eq!(send(&mut s, p, t(500), 5, 1, 1000), 1, "DATA 6");
    }
}

/// Case 12, InitCwndUnderFastRetran2 (§6.3.3 E1): the fast retransmission is lost too; T3-rtx
/// expires: cwnd = 1·unit (1500 / 1468), ssthresh = max(cwnd/2, 4·unit) (6000 / 5872).
#[test]
fn c12_t3_rtx_after_fast_retransmit() {
    for (p, cwnd, ssthresh) in [(RFC4960, 1500, 6000), (RFC9260, 1468, 5872)] {
        let mut s = fr_setup(p);
        out(&mut s, t(402));
        let at = s.poll_timeout().unwrap();
        assert_eq!(
            at,
            t(1402),
            "T3-rtx restarted by the retransmission of the first outstanding"
        );
        s.on_timeout(at);
        assert_eq!(data_of(&out(&mut s, at)), vec![(tsn(1), p.user(1000) as u16)]);
        assert_eq!((s.cwnd(), s.ssthresh()), (cwnd, ssthresh));
        assert!(!s.path().in_fast_recovery());
        feed(&mut s, at + SimDuration::from_millis(100), sack_pkt(tsn(4), &[], 65536));
        assert_eq!(send(&mut s, p, at + SimDuration::from_millis(100), 5, 1, 1000), 1);
    }
}

/// Case 13, FastRetranFirstData (§7.2.4 step 4): fast-retransmitting the first outstanding chunk
/// restarts T3-rtx.
#[test]
fn c13_t3_restarted_when_first_outstanding_is_fast_retransmitted() {
    both(|p| {
        let mut s = p.sock();
        assert_eq!(send(&mut s, p, t(300), 0, 4, 1000), 4);
        assert_eq!(s.poll_timeout(), Some(t(1300)));
        feed(&mut s, t(400), sack_pkt(before(), &[(2, 2)], 65536));
        feed(&mut s, t(500), sack_pkt(before(), &[(2, 3)], 65536));
        assert_eq!(
            s.poll_timeout(),
            Some(t(1300)),
            "not restarted: the lowest TSN is missing"
        );
        feed(&mut s, t(600), sack_pkt(before(), &[(2, 4)], 65536));
        assert_eq!(data_of(&out(&mut s, t(600))), vec![(tsn(0), p.user(1000) as u16)]);
        assert_eq!(s.poll_timeout(), Some(t(1600)));
        feed(&mut s, t(700), sack_pkt(tsn(3), &[], 65536));
        assert_eq!(send(&mut s, p, t(700), 4, 1, 1000), 1, "DATA 5");
    });
}

/// Case 14, FastRecoveryCwnd (§7.2.4 step 7): in Fast Recovery a further fast retransmit changes
/// neither ssthresh nor cwnd.
#[test]
fn c14_cwnd_unchanged_during_fast_recovery() {
    for (p, want) in [(RFC4960, 6000), (RFC9260, 5872)] {
        let mut s = p.sock();
        assert_eq!(send(&mut s, p, t(300), 0, 8, 500), 4, "2 chunks of 500 to a packet");
        assert_eq!(send(&mut s, p, t(301), 8, 1, 500), 1, "the next send opportunity");
        // TSN 1 and 4 (indexes 0 and 3) are lost.
        feed(&mut s, t(400), sack_pkt(before(), &[(2, 3)], 65536));
        feed(&mut s, t(401), sack_pkt(before(), &[(2, 3), (5, 5)], 65536));
        feed(&mut s, t(402), sack_pkt(before(), &[(2, 3), (5, 6)], 65536));
        assert_eq!(data_of(&out(&mut s, t(402))), vec![(tsn(0), p.user(500) as u16)]);
        assert_eq!((s.cwnd(), s.ssthresh()), (want, want));
        feed(&mut s, t(403), sack_pkt(before(), &[(2, 3), (5, 7)], 65536));
        assert_eq!(s.sctp_stats().fast_retransmit_chunks, 2, "TSN 4 marked too");
        assert_eq!((s.cwnd(), s.ssthresh()), (want, want));
        assert_eq!(s.report().fast_retransmits, 2);
    }
}

// ---------------------------------------------------------------------- data transfer

/// SACK_DupWithNoNewData (RFC 9260 §6.2): a packet with only a duplicate TSN is SACKed at once
/// with the duplicate reported.
#[test]
fn d1_duplicate_without_new_data_is_sacked_at_once() {
    both(|p| {
        let mut s = p.sock();
        feed(&mut s, t(300), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 100, 0)]));
        s.on_timeout(t(500));
        assert_eq!(out(&mut s, t(500)).len(), 1);
        feed(&mut s, t(600), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 100, 0)]));
        let pk = out(&mut s, t(600));
        let sk = pk[0].sack.unwrap();
        assert_eq!((sk.cum_tsn_ack, sk.dups()), (ptsn(0), &[ptsn(0)][..]));
    });
}

/// SACK_MultiDataChunks (RFC 9260 §6.2): one SACK acknowledges several DATA chunks (the delayed
/// SACK of every second packet).
#[test]
fn d2_one_sack_for_several_data_chunks() {
    both(|p| {
        let mut s = p.sock();
        feed(&mut s, t(300), data_pkt(&[pdata(0, 0, 0, DataFlags::WHOLE, 100, 0)]));
        s.on_timeout(t(500));
        out(&mut s, t(500));
        feed(&mut s, t(600), data_pkt(&[pdata(1, 0, 1, DataFlags::WHOLE, 100, 1)]));
        assert!(out(&mut s, t(600)).is_empty());
        feed(&mut s, t(601), data_pkt(&[pdata(2, 0, 2, DataFlags::WHOLE, 100, 2)]));
        let pk = out(&mut s, t(601));
        assert_eq!(pk.len(), 1);
        assert_eq!(pk[0].sack.unwrap().cum_tsn_ack, ptsn(2));
    });
}

/// SACK_GapBlockReport (RFC 9260 §3.3.4, §6.2): TSNs above the Cumulative TSN Ack are reported
/// in Gap Ack Blocks (offsets from it).
#[test]
fn d3_gap_block_report() {
    both(|p| {
        let mut s = p.sock();
        feed(
            &mut s,
            t(300),
            data_pkt(&[
                pdata(0, 0, 0, DataFlags::WHOLE, 100, 0),
                pdata(2, 0, 2, DataFlags::WHOLE, 100, 2),
            ]),
        );
        feed(
            &mut s,
            t(301),
            data_pkt(&[
                pdata(4, 0, 4, DataFlags::WHOLE, 100, 4),
                pdata(5, 0, 5, DataFlags::WHOLE, 100, 5),
            ]),
        );
        let pk = out(&mut s, t(301));
        let sk = pk.last().unwrap().sack.unwrap();
        let g: Vec<_> = sk.gaps().iter().map(|g| (g.start, g.end)).collect();
        assert_eq!((sk.cum_tsn_ack, g), (ptsn(0), vec![(2, 2), (4, 5)]));
        let delivered = events(&mut s)
            .iter()
            .filter(|e| matches!(e, TransportEvent::Delivered { .. }))
            .count();
        assert_eq!(delivered, 1, "ordered: 2, 4, 5 wait for 1");
    });
}

/// AckMultiDataChunks (RFC 9260 §6.2.1): a SACK whose Cumulative TSN Ack passes several DATA
/// chunks acknowledges them all; rwnd = a_rwnd − bytes still outstanding (B), and a chunk
/// marked for retransmission is not counted (D).
#[test]
fn d4_sack_acknowledges_several_chunks_rwnd_rules() {
    both(|p| {
        let mut s = p.sock();
        assert_eq!(send(&mut s, p, t(300), 0, 4, 1000), 4);
        feed(&mut s, t(400), sack_pkt(tsn(2), &[], 20_000));
        assert_eq!(s.outstanding_chunks(), 1);
        assert_eq!(s.peer_rwnd(), 20_000 - p.user(1000) as u64);
        // A timeout marks the last chunk for retransmission: its bytes return to rwnd (D).
        s.on_timeout(t(1400));
        assert_eq!(s.peer_rwnd(), 20_000);
    });
}
