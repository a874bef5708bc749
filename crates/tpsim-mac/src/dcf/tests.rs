//! Packet-by-packet tests, smoltcp style: feed one input at an explicit time, then assert
//! exactly what comes out. Each test names the rule it checks.
//!
//! Unless said otherwise: 802.11b at 1 Mbit/s (slot 20 µs, SIFS 10, DIFS 50, EIFS 364, Ack
//! 304 µs, ACK timeout 334 µs), the station under test is `ME` = 1, its peer `PEER` = 2, and
//! MSDUs are 1000 bytes (DATA frame 1028 bytes, 8416 µs). Times are in µs.

use super::*;
use crate::frame::{FrameKind, MacEvent, Msdu, BROADCAST};
use crate::rate::RateControl;
use tpsim_core::{Module, OwnerKind, StreamKey};
use tpsim_phy::WifiRate;

const ME: MacAddr = 1;
const PEER: MacAddr = 2;
const OTHER: MacAddr = 3;
const FAR: MacAddr = 4;
const MSDU_BYTES: u32 = 1000;
const DATA_US: u64 = 192 + (1000 + 28) * 8;
const ACK_US: u64 = 304;

fn t(us: u64) -> SimTime {
    SimTime(us * 1_000)
}
fn d(us: u64) -> SimDuration {
    SimDuration::from_micros(us)
}
fn rng(seed: u64) -> RngStream {
    RngStream::new(StreamKey {
        seed,
        run: 0,
        kind: OwnerKind::Node,
        owner_id: ME as u64,
        module: Module::MacBackoff,
    })
}
fn cfg() -> DcfConfig {
    DcfConfig::new(WifiRate::Dsss1)
}
fn station(cfg: DcfConfig) -> Dcf {
    Dcf::new(cfg, ME, rng(1))
}
/// A station whose first backoff draw from [0, cw_min] is at least `min`.
fn station_drawing_at_least(cfg: DcfConfig, min: u32) -> Dcf {
    for seed in 1.. {
        let mut probe = rng(seed);
        let k = ((probe.next_u64() as u128 * (cfg.timing.cw_min as u128 + 1)) >> 64) as u32;
        if k >= min {
            return Dcf::new(cfg, ME, rng(seed));
        }
    }
    unreachable!()
}
fn msdu(dst: MacAddr, handle: u64) -> Msdu {
    Msdu {
        dst,
        bytes: MSDU_BYTES,
        handle,
    }
}
fn frame(kind: FrameKind, src: MacAddr, dst: MacAddr, airtime_us: u64, nav_us: u64) -> Frame {
    Frame {
        kind,
        src,
        dst,
        bytes: 14,
        rate: WifiRate::Dsss1,
        airtime: d(airtime_us),
        duration_nav: d(nav_us),
        seq: 0,
        retry: false,
        handle: 0,
    }
}
fn data(src: MacAddr, dst: MacAddr, seq: u16, retry: bool, handle: u64) -> Frame {
    Frame {
        bytes: 1028,
        seq,
        retry,
        handle,
        ..frame(FrameKind::Data, src, dst, DATA_US, 10 + ACK_US)
    }
}
fn ack_to(dst: MacAddr) -> Frame {
    frame(FrameKind::Ack, PEER, dst, ACK_US, 0)
}
/// The whole reception of `f` ending at `end`: CCA busy from its start, the frame, CCA idle.
fn rx(s: &mut Dcf, end: SimTime, f: &Frame) {
    s.on_medium_busy(SimTime(end.0 - f.airtime.0));
    s.on_rx(end, f);
    s.on_medium_idle(end);
}
/// An undecodable reception from `start` to `end`.
fn rx_garbage(s: &mut Dcf, start: SimTime, end: SimTime) {
    s.on_medium_busy(start);
    s.on_rx_error(end);
    s.on_medium_idle(end);
}
/// Asserts that a frame goes out at `now` and returns it, with its `on_tx_end` delivered.
fn tx(s: &mut Dcf, now: SimTime) -> Frame {
    let f = s
        .poll_transmit(now)
        .unwrap_or_else(|| panic!("expected a frame at {now}, timeout {:?}", s.poll_timeout()));
    s.on_tx_end(now + f.airtime);
    f
}
fn no_tx(s: &mut Dcf, now: SimTime) {
    assert_eq!(s.poll_transmit(now), None, "unexpected frame at {now}");
}
fn events(s: &mut Dcf) -> Vec<MacEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}
/// Fires the timer at its deadline (asserting it is `at`), then polls.
fn fire(s: &mut Dcf, at: SimTime) {
    assert_eq!(s.poll_timeout(), Some(at));
    s.on_timeout(at);
}

// ------------------------------------------------------------ access without backoff

#[test]
fn new_msdu_on_idle_medium_waits_difs_then_goes_without_backoff() {
    // §10.3.4.2: idle for DIFS and no backoff pending → transmit, no backoff.
    let mut s = station(cfg());
    s.send(t(0), msdu(PEER, 7));
    no_tx(&mut s, t(0));
    fire(&mut s, t(50));
    let f = tx(&mut s, t(50));
    assert_eq!(f.kind, FrameKind::Data);
    assert_eq!((f.src, f.dst, f.handle, f.seq, f.retry), (ME, PEER, 7, 0, false));
    assert_eq!(f.bytes, 1028);
    assert_eq!(f.airtime, d(DATA_US));
    assert_eq!(f.duration_nav, d(10 + ACK_US), "DATA reserves SIFS + Ack");
    assert_eq!(f.rate, WifiRate::Dsss1);
}

#[test]
fn new_msdu_after_long_idle_goes_immediately() {
    let mut s = station(cfg());
    rx(&mut s, t(500), &frame(FrameKind::Ack, OTHER, FAR, ACK_US, 0));
    // Idle since 500 µs; at 1000 µs DIFS has long passed.
    s.send(t(1000), msdu(PEER, 1));
    let f = tx(&mut s, t(1000));
    assert_eq!(f.kind, FrameKind::Data);
}

#[test]
fn with_idle_backoff_an_msdu_on_idle_medium_waits_difs_and_a_drawn_backoff() {
    // ns-2.35 Mac802_11::send with bugFix_timer_: a backoff of 0..CW-1 slots after DIFS even
    // when the medium is idle (`DcfConfig::idle_backoff`).
    let mut s = station_drawing_at_least(
        DcfConfig {
            idle_backoff: true,
            ..cfg()
        },
        3,
    );
    s.send(t(0), msdu(PEER, 7));
    let k = s.backoff_slots().expect("a backoff was drawn") as u64;
    assert!(k >= 3);
    no_tx(&mut s, t(50));
    assert_eq!(s.poll_timeout(), Some(t(50 + 20 * k)), "DIFS + k slots");
    fire(&mut s, t(50 + 20 * k));
    assert_eq!(tx(&mut s, t(50 + 20 * k)).kind, FrameKind::Data);
    // Even after a long idle period.
    let mut s = station_drawing_at_least(
        DcfConfig {
            idle_backoff: true,
            ..cfg()
        },
        1,
    );
    rx(&mut s, t(500), &frame(FrameKind::Ack, OTHER, FAR, ACK_US, 0));
    s.send(t(1000), msdu(PEER, 1));
    no_tx(&mut s, t(1000));
    assert!(DcfConfig::ns2().idle_backoff && !cfg().idle_backoff);
}

// ------------------------------------------------------------ backoff

#[test]
fn backoff_freezes_on_busy_and_resumes_after_difs_with_exact_slots() {
    // §10.3.4.3: count only whole idle slots after DIFS; freeze when busy; resume after DIFS.
    let mut s = station_drawing_at_least(cfg(), 3);
    s.on_medium_busy(t(100));
    s.send(t(200), msdu(PEER, 1)); // busy: a backoff is drawn
    let k = s.backoff_slots().unwrap();
    assert!(k >= 3);
    assert_eq!(s.poll_timeout(), None, "no countdown while busy");
    s.on_medium_idle(t(1000));
    assert_eq!(s.poll_timeout(), Some(t(1050 + 20 * k as u64)));
    // Busy again 2 slots and 7 µs into the countdown: the partial slot does not count.
    s.on_medium_busy(t(1050 + 40 + 7));
    assert_eq!(s.backoff_slots(), Some(k - 2));
    assert_eq!(s.poll_timeout(), None);
    no_tx(&mut s, t(1100));
    s.on_medium_idle(t(2000));
    let end = t(2050 + 20 * (k - 2) as u64);
    assert_eq!(s.poll_timeout(), Some(end));
    s.on_timeout(SimTime(end.0 - 1)); // early: nothing
    no_tx(&mut s, SimTime(end.0 - 1));
    s.on_timeout(end);
    assert_eq!(tx(&mut s, end).kind, FrameKind::Data);
}

#[test]
fn busy_at_the_instant_the_backoff_ends_still_transmits() {
    // Two stations whose counters end together collide: CCA cannot see a transmission that
    // starts in the same instant. The engine may deliver the other's busy before our timer.
    let mut s = station_drawing_at_least(cfg(), 1);
    s.on_medium_busy(t(0));
    s.send(t(1), msdu(PEER, 1));
    let k = s.backoff_slots().unwrap() as u64;
    s.on_medium_idle(t(100));
    let end = t(150 + 20 * k);
    s.on_medium_busy(end);
    assert_eq!(tx(&mut s, end).kind, FrameKind::Data);
}

#[test]
fn busy_one_nanosecond_before_the_end_freezes_with_one_slot_left() {
    let mut s = station_drawing_at_least(cfg(), 1);
    s.on_medium_busy(t(0));
    s.send(t(1), msdu(PEER, 1));
    let k = s.backoff_slots().unwrap() as u64;
    s.on_medium_idle(t(100));
    s.on_medium_busy(SimTime(t(150 + 20 * k).0 - 1));
    assert_eq!(s.backoff_slots(), Some(1));
    no_tx(&mut s, t(150 + 20 * k));
    s.on_medium_idle(t(5000));
    fire(&mut s, t(5050 + 20));
}

#[test]
fn busy_during_difs_makes_a_zero_backoff_msdu_draw_one() {
    // §10.3.4.2: a STA that finds the medium busy when it wants to transmit backs off.
    let mut s = station_drawing_at_least(cfg(), 1);
    s.on_medium_idle(t(0));
    rx(&mut s, t(100), &frame(FrameKind::Ack, OTHER, FAR, 50, 0));
    s.send(t(110), msdu(PEER, 1)); // idle: will go at 150 without backoff...
    assert_eq!(s.poll_timeout(), Some(t(150)));
    s.on_medium_busy(t(120)); // ...but the medium turns busy first
    let k = s.backoff_slots().unwrap() as u64;
    assert!(k >= 1);
    s.on_medium_idle(t(300));
    fire(&mut s, t(350 + 20 * k));
}

#[test]
fn post_backoff_delays_a_new_msdu_until_it_ends() {
    // §10.3.4.3: a backoff follows every transmission, even with nothing queued.
    let mut s = station_drawing_at_least(cfg(), 2);
    s.send(t(0), msdu(PEER, 1));
    fire(&mut s, t(50));
    tx(&mut s, t(50));
    let ack_end = 50 + DATA_US + 10 + ACK_US;
    rx(&mut s, t(ack_end), &ack_to(ME));
    assert_eq!(events(&mut s), vec![MacEvent::TxOk { handle: 1 }]);
    let k = s.backoff_slots().expect("post-backoff") as u64;
    assert_eq!(s.poll_timeout(), None, "a post-backoff without an MSDU needs no timer");
    // An MSDU one µs later waits for the rest of the post-backoff.
    s.send(t(ack_end + 1), msdu(PEER, 2));
    assert_eq!(s.poll_timeout(), Some(t(ack_end + 50 + 20 * k)));

    // Same again, but the next MSDU arrives after the post-backoff has run out: no backoff.
    let mut s = station(cfg());
    s.send(t(0), msdu(PEER, 1));
    fire(&mut s, t(50));
    tx(&mut s, t(50));
    rx(&mut s, t(ack_end), &ack_to(ME));
    let k = s.backoff_slots().unwrap() as u64;
    let later = ack_end + 50 + 20 * k + 1;
    s.send(t(later), msdu(PEER, 2));
    assert_eq!(tx(&mut s, t(later)).handle, 2);
}

// ------------------------------------------------------------ NAV and EIFS

#[test]
fn nav_from_a_frame_for_others_defers_access() {
    // §10.3.2.4: the Duration field of a frame not addressed to us sets the NAV.
    let mut s = station(cfg());
    rx(&mut s, t(500), &frame(FrameKind::Data, OTHER, FAR, 500, 1000));
    assert_eq!(s.nav_until(), t(1500));
    // A later frame with a shorter reservation does not shorten the NAV.
    rx(&mut s, t(700), &frame(FrameKind::Ack, OTHER, FAR, 100, 10));
    assert_eq!(s.nav_until(), t(1500));
    // Physical CS idle, virtual CS busy: the medium is busy, so a backoff is drawn.
    s.send(t(800), msdu(PEER, 1));
    let k = s.backoff_slots().unwrap() as u64;
    fire(&mut s, t(1500 + 50 + 20 * k));
    tx(&mut s, t(1500 + 50 + 20 * k));
}

#[test]
fn frames_for_us_and_broadcasts_do_not_set_the_nav() {
    let mut s = station(cfg());
    rx(&mut s, t(500), &frame(FrameKind::Cts, PEER, ME, 304, 5000));
    rx(&mut s, t(1000), &frame(FrameKind::Data, PEER, BROADCAST, 400, 5000));
    assert_eq!(s.nav_until(), SimTime::ZERO);
}

#[test]
fn eifs_follows_an_undecodable_frame() {
    // §10.3.2.3.7: EIFS = SIFS + DIFS + Ack at 1 Mbit/s = 364 µs instead of DIFS.
    let mut s = station(cfg());
    rx_garbage(&mut s, t(0), t(500));
    s.send(t(510), msdu(PEER, 1));
    fire(&mut s, t(500 + 364));
    tx(&mut s, t(864));
    assert_eq!(s.stats().rx_errors, 1);
}

#[test]
fn a_correct_frame_ends_the_eifs() {
    let mut s = station(cfg());
    rx_garbage(&mut s, t(0), t(500));
    rx(&mut s, t(700), &frame(FrameKind::Ack, OTHER, FAR, 100, 0));
    s.send(t(710), msdu(PEER, 1));
    fire(&mut s, t(750));
}

#[test]
fn eifs_can_be_switched_off() {
    let mut s = station(DcfConfig {
        use_eifs: false,
        ..cfg()
    });
    rx_garbage(&mut s, t(0), t(500));
    s.send(t(510), msdu(PEER, 1));
    fire(&mut s, t(550));
}

#[test]
fn rts_nav_is_reset_when_no_reception_follows() {
    // §10.3.2.4: NAV set by an RTS may be reset 2·SIFS + CTS + aRxPHYStartDelay + 2·slot
    // after the RTS if no reception started: 20 + 304 + 192 + 40 = 556 µs.
    let rts = frame(FrameKind::Rts, OTHER, FAR, 352, 10_000);
    let mut s = station(cfg());
    rx(&mut s, t(1000), &rts);
    assert_eq!(s.nav_until(), t(11_000));
    s.send(t(1010), msdu(PEER, 1)); // NAV busy → backoff
    let k = s.backoff_slots().unwrap() as u64;
    assert_eq!(s.poll_timeout(), Some(t(1556 + 50 + 20 * k)));

    // The CTS does come: the NAV stands.
    let mut s = station(cfg());
    rx(&mut s, t(1000), &rts);
    s.send(t(1005), msdu(PEER, 1));
    rx(
        &mut s,
        t(1010 + 304),
        &frame(FrameKind::Cts, FAR, OTHER, 304, 10_000 - 314),
    );
    let k = s.backoff_slots().unwrap() as u64;
    assert_eq!(s.poll_timeout(), Some(t(11_000 + 50 + 20 * k)));

    // And the reset is optional.
    let mut s = station(DcfConfig {
        rts_nav_reset: false,
        ..cfg()
    });
    rx(&mut s, t(1000), &rts);
    s.send(t(1010), msdu(PEER, 1));
    let k = s.backoff_slots().unwrap() as u64;
    assert_eq!(s.poll_timeout(), Some(t(11_050 + 20 * k)));
}

// ------------------------------------------------------------ receiving

#[test]
fn data_for_us_is_acked_after_sifs_and_delivered() {
    let mut s = station(cfg());
    rx(&mut s, t(9000), &data(PEER, ME, 9, false, 77));
    assert_eq!(events(&mut s), vec![MacEvent::Delivered { handle: 77, src: PEER }]);
    no_tx(&mut s, t(9000));
    assert_eq!(s.poll_timeout(), Some(t(9010)));
    let ack = tx(&mut s, t(9010));
    assert_eq!(ack.kind, FrameKind::Ack);
    assert_eq!((ack.src, ack.dst, ack.bytes, ack.retry), (ME, PEER, 14, false));
    assert_eq!(ack.airtime, d(ACK_US));
    assert_eq!(ack.duration_nav, SimDuration::ZERO);
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(s.stats().ack_sent, 1);
}

#[test]
fn ack_is_sent_even_while_the_nav_is_set() {
    let mut s = station(cfg());
    rx(&mut s, t(500), &frame(FrameKind::Data, OTHER, FAR, 500, 50_000));
    rx(&mut s, t(9000), &data(PEER, ME, 1, false, 5));
    assert_eq!(tx(&mut s, t(9010)).kind, FrameKind::Ack);
}

#[test]
fn retransmitted_duplicate_is_acked_but_not_delivered_twice() {
    // §10.3.2.14: same (transmitter, sequence number) with the Retry bit: a duplicate.
    let mut s = station(cfg());
    rx(&mut s, t(9000), &data(PEER, ME, 42, false, 1));
    tx(&mut s, t(9010));
    // Our Ack was lost; the peer retransmits.
    rx(&mut s, t(20_000), &data(PEER, ME, 42, true, 1));
    assert_eq!(
        tx(&mut s, t(20_010)).kind,
        FrameKind::Ack,
        "a duplicate is acknowledged"
    );
    assert_eq!(events(&mut s), vec![MacEvent::Delivered { handle: 1, src: PEER }]);
    assert_eq!(s.stats().duplicates, 1);
    // The next MSDU from the same peer, and a frame from another station with the same
    // number, are new.
    rx(&mut s, t(30_000), &data(PEER, ME, 43, false, 2));
    tx(&mut s, t(30_010));
    rx(&mut s, t(40_000), &data(OTHER, ME, 42, true, 3));
    tx(&mut s, t(40_010));
    assert_eq!(
        events(&mut s),
        vec![
            MacEvent::Delivered { handle: 2, src: PEER },
            MacEvent::Delivered { handle: 3, src: OTHER }
        ]
    );
}

#[test]
fn broadcast_is_received_without_ack() {
    let mut s = station(cfg());
    rx(&mut s, t(9000), &data(PEER, BROADCAST, 3, false, 8));
    assert_eq!(events(&mut s), vec![MacEvent::Delivered { handle: 8, src: PEER }]);
    assert_eq!(s.poll_timeout(), None);
    no_tx(&mut s, t(9010));
}

#[test]
fn data_for_others_is_not_delivered() {
    let mut s = station(cfg());
    rx(&mut s, t(9000), &data(PEER, OTHER, 3, false, 8));
    assert_eq!(events(&mut s), vec![]);
    assert_eq!(s.poll_timeout(), None);
}

// ------------------------------------------------------------ sending: ACK, retries

#[test]
fn acked_msdu_gives_tx_ok_and_cw_stays_at_cw_min() {
    let mut s = station(cfg());
    s.send(t(1000), msdu(PEER, 5));
    tx(&mut s, t(1000));
    let end = 1000 + DATA_US;
    assert_eq!(
        s.poll_timeout(),
        Some(t(end + 334)),
        "ACK timeout = SIFS + slot + Ack airtime"
    );
    rx(&mut s, t(end + 10 + ACK_US), &ack_to(ME));
    assert_eq!(events(&mut s), vec![MacEvent::TxOk { handle: 5 }]);
    assert!(s.ready());
    assert_eq!(s.cw(), 31);
    assert!(s.backoff_slots().unwrap() <= 31);
}

/// The one event of an MSDU discarded at its retry limit (to `PEER`; `rts`: its last attempt
/// was an RTS).
fn failed(handle: u64, rts: bool) -> Vec<MacEvent> {
    vec![MacEvent::TxFailed { handle, dst: PEER, rts }]
}

#[test]
fn ack_timeout_retries_with_doubled_cw_then_drops_at_the_short_retry_limit() {
    // §10.3.3: CW = 31, 63, ..., 1023; §10.3.2.12: 7 attempts, then discard with TxFailed.
    let mut s = station(cfg());
    s.send(t(0), msdu(PEER, 9));
    s.on_timeout(t(50));
    let mut now = t(50);
    let mut cws = vec![];
    for attempt in 0..7u32 {
        let f = tx(&mut s, now);
        assert_eq!(f.kind, FrameKind::Data);
        assert_eq!(f.retry, attempt > 0, "Retry bit on retransmissions only");
        assert_eq!(f.seq, 0, "a retransmission keeps its sequence number");
        let timeout = now + d(DATA_US + 334);
        fire(&mut s, timeout);
        if attempt < 6 {
            assert!(events(&mut s).is_empty());
            assert_eq!(s.retry_counts(), (attempt + 1, 0));
            cws.push(s.cw());
            // The failed exchange ends at the timeout; DIFS, then the backoff.
            let k = s.backoff_slots().unwrap() as u64;
            assert!(k <= s.cw() as u64);
            now = timeout + d(50 + 20 * k);
            fire(&mut s, now);
        }
    }
    assert_eq!(cws, vec![63, 127, 255, 511, 1023, 1023]);
    assert_eq!(events(&mut s), failed(9, false));
    assert!(s.ready());
    assert_eq!(s.cw(), 31, "CW resets after a drop");
    assert_eq!(s.retry_counts(), (0, 0));
    let st = s.stats();
    assert_eq!(
        (
            st.data_sent,
            st.data_retries,
            st.retries,
            st.ack_timeouts,
            st.drops_retry_limit
        ),
        (7, 6, 6, 7, 1)
    );
}

#[test]
fn cw_resets_after_a_success() {
    let mut s = station(cfg());
    s.send(t(1000), msdu(PEER, 1));
    tx(&mut s, t(1000));
    let timeout = t(1000 + DATA_US + 334);
    fire(&mut s, timeout);
    assert_eq!(s.cw(), 63);
    let k = s.backoff_slots().unwrap() as u64;
    let start = timeout + d(50 + 20 * k);
    fire(&mut s, start);
    let f = tx(&mut s, start);
    assert!(f.retry);
    rx(&mut s, start + d(DATA_US + 10 + ACK_US), &ack_to(ME));
    assert_eq!(events(&mut s), vec![MacEvent::TxOk { handle: 1 }]);
    assert_eq!(s.cw(), 31);
}

#[test]
fn another_frame_instead_of_the_ack_fails_the_attempt() {
    let mut s = station(cfg());
    s.send(t(1000), msdu(PEER, 1));
    tx(&mut s, t(1000));
    let end = 1000 + DATA_US;
    rx(&mut s, t(end + 200), &frame(FrameKind::Data, OTHER, FAR, 150, 5000));
    assert_eq!(s.stats().ack_timeouts, 1);
    assert_eq!(s.cw(), 63);
    assert_eq!(s.nav_until(), t(end + 5200), "the frame is then processed normally");
    // A late Ack is ignored.
    rx(&mut s, t(end + 400), &ack_to(ME));
    assert!(events(&mut s).is_empty());
    assert!(!s.ready());
}

#[test]
fn sequence_numbers_advance_per_msdu_modulo_4096() {
    let mut s = station(cfg());
    let mut now = 1000;
    for i in 0..4097u64 {
        s.send(
            t(now),
            Msdu {
                dst: BROADCAST,
                bytes: 10,
                handle: i,
            },
        );
        // Settle any post-backoff by waiting long enough.
        let at = s.poll_timeout().unwrap_or(t(now));
        s.on_timeout(at);
        let f = tx(&mut s, at);
        assert_eq!(f.seq as u64, i % 4096);
        events(&mut s);
        now = at.0 / 1000 + 10_000;
    }
}

// ------------------------------------------------------------ RTS/CTS

fn rts_cfg() -> DcfConfig {
    DcfConfig {
        rts_threshold_bytes: Some(500),
        ..cfg()
    }
}

#[test]
fn rts_cts_data_ack_exchange() {
    let mut s = station(rts_cfg());
    s.send(t(1000), msdu(PEER, 3));
    let rts = tx(&mut s, t(1000));
    assert_eq!(rts.kind, FrameKind::Rts);
    assert_eq!((rts.src, rts.dst, rts.bytes), (ME, PEER, 20));
    assert_eq!(rts.airtime, d(352));
    assert_eq!(
        rts.duration_nav,
        d(3 * 10 + 304 + DATA_US + ACK_US),
        "3·SIFS + CTS + DATA + Ack"
    );
    assert_eq!(
        s.poll_timeout(),
        Some(t(1352 + 334)),
        "CTS timeout = SIFS + slot + CTS airtime"
    );
    let cts_end = 1352 + 10 + 304;
    rx(
        &mut s,
        t(cts_end),
        &frame(FrameKind::Cts, PEER, ME, 304, rts.duration_nav.0 / 1000 - 314),
    );
    no_tx(&mut s, t(cts_end));
    fire(&mut s, t(cts_end + 10));
    let f = tx(&mut s, t(cts_end + 10));
    assert_eq!((f.kind, f.retry), (FrameKind::Data, false));
    let ack_end = cts_end + 10 + DATA_US + 10 + ACK_US;
    rx(&mut s, t(ack_end), &ack_to(ME));
    assert_eq!(events(&mut s), vec![MacEvent::TxOk { handle: 3 }]);
    let st = s.stats();
    assert_eq!((st.rts_sent, st.data_sent, st.tx_ok), (1, 1, 1));
}

#[test]
fn short_frames_go_without_rts() {
    let mut s = station(rts_cfg());
    s.send(
        t(1000),
        Msdu {
            dst: PEER,
            bytes: 472,
            handle: 1,
        },
    ); // 500-byte frame: not above
    assert_eq!(tx(&mut s, t(1000)).kind, FrameKind::Data);
}

#[test]
fn cts_timeout_retries_the_rts_against_the_short_retry_count() {
    let mut s = station(rts_cfg());
    s.send(t(1000), msdu(PEER, 3));
    tx(&mut s, t(1000));
    fire(&mut s, t(1352 + 334));
    assert_eq!(s.retry_counts(), (1, 0));
    assert_eq!(s.cw(), 63);
    assert_eq!(s.stats().cts_timeouts, 1);
    let k = s.backoff_slots().unwrap() as u64;
    fire(&mut s, t(1686 + 50 + 20 * k));
    assert_eq!(tx(&mut s, t(1736 + 20 * k)).kind, FrameKind::Rts);
}

#[test]
fn an_rts_unanswered_at_the_short_retry_limit_fails_the_msdu_as_an_rts_failure() {
    // §10.3.2.12: 7 RTS attempts without a CTS (dot11ShortRetryLimit), then the MSDU is
    // discarded; the event says the last attempt was the RTS (ns-2 traces its discard too).
    let mut s = station(rts_cfg());
    s.send(t(1000), msdu(PEER, 6));
    let mut now = t(1000);
    for attempt in 0..7u32 {
        assert_eq!(tx(&mut s, now).kind, FrameKind::Rts);
        let timeout = now + d(352 + 334);
        fire(&mut s, timeout);
        if attempt < 6 {
            assert!(events(&mut s).is_empty());
            let k = s.backoff_slots().unwrap() as u64;
            now = timeout + d(50 + 20 * k);
            fire(&mut s, now);
        }
    }
    assert_eq!(events(&mut s), failed(6, true));
    assert_eq!((s.stats().cts_timeouts, s.stats().data_sent), (7, 0));
}

#[test]
fn long_frames_are_dropped_at_the_long_retry_limit() {
    // CTS always comes, the Ack never: 4 DATA attempts (dot11LongRetryLimit), SSRC reset by
    // every CTS.
    let mut s = station(rts_cfg());
    s.send(t(0), msdu(PEER, 4));
    s.on_timeout(t(50));
    let mut now = t(50);
    for attempt in 0..4u32 {
        let rts = tx(&mut s, now);
        assert_eq!(rts.kind, FrameKind::Rts);
        let cts_end = now + d(352 + 10 + 304);
        rx(&mut s, cts_end, &frame(FrameKind::Cts, PEER, ME, 304, 1000));
        assert_eq!(s.retry_counts(), (0, attempt));
        s.on_timeout(cts_end + d(10));
        let f = tx(&mut s, cts_end + d(10));
        assert_eq!((f.kind, f.retry), (FrameKind::Data, attempt > 0));
        let timeout = cts_end + d(10 + DATA_US + 334);
        fire(&mut s, timeout);
        if attempt < 3 {
            let k = s.backoff_slots().unwrap() as u64;
            now = timeout + d(50 + 20 * k);
            fire(&mut s, now);
        }
    }
    assert_eq!(events(&mut s), failed(4, false));
    assert_eq!(s.stats().drops_retry_limit, 1);
}

#[test]
fn rts_for_us_is_answered_with_cts_unless_our_nav_is_set() {
    let mut s = station(cfg());
    let rts = Frame {
        bytes: 20,
        ..frame(FrameKind::Rts, PEER, ME, 352, 9000)
    };
    rx(&mut s, t(2000), &rts);
    fire(&mut s, t(2010));
    let cts = tx(&mut s, t(2010));
    assert_eq!(cts.kind, FrameKind::Cts);
    assert_eq!((cts.src, cts.dst, cts.bytes), (ME, PEER, 14));
    assert_eq!(
        cts.duration_nav,
        d(9000 - 10 - 304),
        "the RTS's Duration minus SIFS and CTS"
    );

    let mut s = station(cfg());
    rx(&mut s, t(500), &frame(FrameKind::Data, OTHER, FAR, 400, 50_000));
    rx(&mut s, t(2000), &rts);
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(s.stats().cts_suppressed_by_nav, 1);
}

// ------------------------------------------------------------ broadcast, spurious inputs

#[test]
fn broadcast_is_sent_once_without_rts_or_ack() {
    let mut s = station(DcfConfig {
        rts_threshold_bytes: Some(0),
        ..cfg()
    });
    s.send(t(1000), msdu(BROADCAST, 6));
    let f = tx(&mut s, t(1000));
    assert_eq!(
        (f.kind, f.dst, f.duration_nav),
        (FrameKind::Data, BROADCAST, SimDuration::ZERO)
    );
    assert_eq!(events(&mut s), vec![MacEvent::TxOk { handle: 6 }]);
    assert!(s.ready());
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(s.stats().data_sent, 1);
}

#[test]
fn spurious_timeouts_and_inputs_change_nothing() {
    let mut s = station(cfg());
    s.on_timeout(t(5));
    s.on_tx_end(t(6));
    s.on_medium_idle(t(7));
    no_tx(&mut s, t(8));
    assert_eq!(s.poll_timeout(), None);
    s.on_medium_busy(t(10));
    s.send(t(20), msdu(PEER, 1));
    let before = s.poll_timeout();
    s.on_timeout(t(30));
    s.on_timeout(t(30));
    s.on_medium_busy(t(31)); // duplicate busy report
    assert_eq!(s.poll_timeout(), before);
    no_tx(&mut s, t(40));
}

#[test]
#[should_panic(expected = "in service")]
fn send_while_busy_with_an_msdu_panics() {
    let mut s = station(cfg());
    s.send(t(0), msdu(PEER, 1));
    s.send(t(1), msdu(PEER, 2));
}

#[test]
fn ofdm_timing_is_used_for_11a() {
    let mut s = Dcf::new(DcfConfig::new(WifiRate::Ofdm6), ME, rng(1));
    rx_garbage(&mut s, t(0), t(100));
    s.send(t(101), msdu(PEER, 1));
    fire(&mut s, t(100 + 94)); // EIFS = 16 + 34 + 44
    let f = tx(&mut s, t(194));
    assert_eq!(f.airtime, d(20 + 4 * ((16 + 8 * 1028 + 6) as u64).div_ceil(24)));
    assert_eq!(s.poll_timeout(), Some(t(194) + f.airtime + d(16 + 9 + 44)));
}

// ------------------------------------------------------------ rate adaptation (ARF, AARF)

fn rate_cfg(rate_control: RateControl) -> DcfConfig {
    DcfConfig { rate_control, ..cfg() }
}

/// Puts the next DATA attempt to `PEER` on the air: hands over a new MSDU if the DCF is ready,
/// waits out any backoff from `*now`, and returns the frame and its start.
fn next_data(s: &mut Dcf, now: &mut SimTime, handle: u64) -> (Frame, SimTime) {
    if s.ready() {
        s.send(*now, msdu(PEER, handle));
    }
    let at = s.poll_timeout().unwrap_or(*now).max(*now);
    s.on_timeout(at);
    let f = tx(s, at);
    assert_eq!((f.kind, f.dst), (FrameKind::Data, PEER));
    (f, at)
}
/// One DATA attempt that is acknowledged; returns its rate.
fn acked(s: &mut Dcf, now: &mut SimTime) -> WifiRate {
    let (f, at) = next_data(s, now, 1);
    *now = at + f.airtime + d(10 + ACK_US);
    rx(s, *now, &ack_to(ME));
    assert!(s.ready());
    events(s);
    f.rate
}
/// One DATA attempt whose Ack never comes; returns its rate.
fn lost(s: &mut Dcf, now: &mut SimTime) -> WifiRate {
    let (f, at) = next_data(s, now, 1);
    *now = at + f.airtime + d(334);
    fire(s, *now);
    events(s);
    f.rate
}

#[test]
fn arf_climbs_one_rate_after_ten_acked_frames() {
    let mut s = station(rate_cfg(RateControl::Arf));
    let mut now = t(1000);
    for _ in 0..10 {
        assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss1);
    }
    assert_eq!(s.data_rate_for(PEER), WifiRate::Dsss2);
    for _ in 0..10 {
        assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss2);
    }
    for _ in 0..10 {
        assert_eq!(acked(&mut s, &mut now), WifiRate::Cck5_5);
    }
    for _ in 0..20 {
        assert_eq!(acked(&mut s, &mut now), WifiRate::Cck11, "11 Mbit/s is the top");
    }
    assert_eq!(s.data_rate_for(OTHER), WifiRate::Dsss1, "per destination");
    assert_eq!(s.stats().rate_increases, 3);
}

#[test]
fn arf_failed_probe_drops_straight_back() {
    let mut s = station(rate_cfg(RateControl::Arf));
    let mut now = t(1000);
    for _ in 0..10 {
        acked(&mut s, &mut now);
    }
    assert!(s.rate_state(PEER).unwrap().probing());
    assert_eq!(lost(&mut s, &mut now), WifiRate::Dsss2, "the probe");
    assert_eq!(
        s.data_rate_for(PEER),
        WifiRate::Dsss1,
        "one failure is enough for a probe"
    );
    // The retransmission of the same MSDU goes at the lower rate.
    let (f, at) = next_data(&mut s, &mut now, 1);
    assert!(f.retry);
    assert_eq!(f.rate, WifiRate::Dsss1);
    assert_eq!(f.airtime, d(DATA_US));
    now = at + f.airtime + d(10 + ACK_US);
    rx(&mut s, now, &ack_to(ME));
    assert_eq!(
        s.rate_state(PEER).unwrap().success_threshold(),
        10,
        "ARF's threshold is fixed"
    );
    assert_eq!((s.stats().rate_increases, s.stats().rate_decreases), (1, 1));
}

#[test]
fn arf_two_consecutive_failures_drop_one_rate() {
    let mut s = station(rate_cfg(RateControl::Arf));
    let mut now = t(1000);
    for _ in 0..20 {
        acked(&mut s, &mut now);
    }
    assert_eq!(acked(&mut s, &mut now), WifiRate::Cck5_5, "probe at 5.5 succeeds");
    assert_eq!(lost(&mut s, &mut now), WifiRate::Cck5_5);
    assert_eq!(s.data_rate_for(PEER), WifiRate::Cck5_5, "one failure is not enough");
    assert_eq!(lost(&mut s, &mut now), WifiRate::Cck5_5);
    assert_eq!(s.data_rate_for(PEER), WifiRate::Dsss2);
    // A success between two failures resets the count.
    assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss2);
    lost(&mut s, &mut now);
    acked(&mut s, &mut now);
    lost(&mut s, &mut now);
    assert_eq!(s.data_rate_for(PEER), WifiRate::Dsss2);
}

#[test]
fn aarf_doubles_the_threshold_after_failed_probes_and_resets_it_after_two_failures() {
    let mut s = station(rate_cfg(RateControl::Aarf));
    let mut now = t(1000);
    for threshold in [10, 20, 40, 50, 50] {
        // The retransmission after a failed probe already counts as one success.
        let so_far = s.rate_state(PEER).map_or(0, |r| r.successes());
        for _ in so_far..threshold {
            assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss1);
        }
        assert_eq!(lost(&mut s, &mut now), WifiRate::Dsss2, "failed probe");
        let next = s.rate_state(PEER).unwrap().success_threshold();
        assert_eq!(next, (2 * threshold).min(50));
        acked(&mut s, &mut now); // the retransmission, at 1 Mbit/s
    }
    // 49 more successes (50 with the retransmission) and a successful probe: at 2 Mbit/s.
    for _ in 0..49 {
        acked(&mut s, &mut now);
    }
    assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss2);
    assert_eq!(s.rate_state(PEER).unwrap().success_threshold(), 50);
    lost(&mut s, &mut now);
    lost(&mut s, &mut now);
    assert_eq!(s.data_rate_for(PEER), WifiRate::Dsss1);
    assert_eq!(
        s.rate_state(PEER).unwrap().success_threshold(),
        10,
        "reset by a two-failure decrease"
    );
    // Back to climbing after 10 (the retransmission is the first).
    for _ in 0..10 {
        assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss1);
    }
    assert_eq!(s.data_rate_for(PEER), WifiRate::Dsss2);
}

#[test]
fn constant_rate_never_changes() {
    let mut s = station(cfg());
    assert_eq!(s.config().rate_control, RateControl::Constant);
    let mut now = t(1000);
    for _ in 0..30 {
        assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss1);
    }
    assert_eq!(lost(&mut s, &mut now), WifiRate::Dsss1);
    assert_eq!(lost(&mut s, &mut now), WifiRate::Dsss1);
    assert_eq!(acked(&mut s, &mut now), WifiRate::Dsss1);
    assert_eq!(s.rate_state(PEER), None);
    assert_eq!((s.stats().rate_increases, s.stats().rate_decreases), (0, 0));
}

#[test]
fn data_airtime_rts_duration_and_ack_timeout_follow_the_chosen_rate() {
    // RTS/CTS on, ARF from 1 Mbit/s; after 10 Acks the DATA frame goes at 2 Mbit/s.
    let mut s = station(DcfConfig {
        rate_control: RateControl::Arf,
        ..rts_cfg()
    });
    let mut now = t(1000);
    for i in 0..11u64 {
        s.send(now, msdu(PEER, i));
        let at = s.poll_timeout().unwrap_or(now).max(now);
        s.on_timeout(at);
        let rts = tx(&mut s, at);
        assert_eq!(
            (rts.kind, rts.rate, rts.airtime),
            (FrameKind::Rts, WifiRate::Dsss1, d(352))
        );
        let rate = if i < 10 { WifiRate::Dsss1 } else { WifiRate::Dsss2 };
        let data_airtime = rate.ppdu_duration(1028, tpsim_phy::Preamble::Long);
        assert_eq!(
            rts.duration_nav,
            SimDuration(3 * d(10).0 + d(304).0 + data_airtime.0 + d(ACK_US).0),
            "the RTS reserves the DATA frame at its own rate"
        );
        let cts_end = at + d(352 + 10 + 304);
        rx(&mut s, cts_end, &frame(FrameKind::Cts, PEER, ME, 304, 1000));
        s.on_timeout(cts_end + d(10));
        let f = tx(&mut s, cts_end + d(10));
        assert_eq!(f.kind, FrameKind::Data);
        assert_eq!(f.rate, rate);
        assert_eq!(
            f.airtime, data_airtime,
            "DATA airtime = PPDU duration at the chosen rate"
        );
        assert_eq!(f.duration_nav, d(10 + ACK_US), "the Ack stays at the basic rate");
        let data_end = cts_end + d(10) + f.airtime;
        assert_eq!(
            s.poll_timeout(),
            Some(data_end + d(334)),
            "ACK timeout from the DATA end"
        );
        now = data_end + d(10 + ACK_US);
        rx(&mut s, now, &ack_to(ME));
        events(&mut s);
    }
    assert_eq!(
        WifiRate::Dsss2.ppdu_duration(1028, tpsim_phy::Preamble::Long),
        d(192 + 4112),
        "2 Mbit/s: 192 µs PLCP + 1028·8/2 µs"
    );
}

#[test]
fn broadcast_frames_keep_the_configured_rate() {
    let mut s = station(rate_cfg(RateControl::Arf));
    let mut now = t(1000);
    for _ in 0..10 {
        acked(&mut s, &mut now);
    }
    assert_eq!(s.data_rate_for(PEER), WifiRate::Dsss2);
    now += d(10_000);
    s.send(now, msdu(BROADCAST, 9));
    let at = s.poll_timeout().unwrap_or(now).max(now);
    s.on_timeout(at);
    let f = tx(&mut s, at);
    assert_eq!((f.dst, f.rate, f.airtime), (BROADCAST, WifiRate::Dsss1, d(DATA_US)));
    assert_eq!(s.data_rate_for(BROADCAST), WifiRate::Dsss1);
}

#[test]
fn ofdm_arf_moves_within_the_ofdm_rates() {
    let mut s = Dcf::new(
        DcfConfig {
            rate_control: RateControl::Arf,
            ..DcfConfig::new(WifiRate::Ofdm48)
        },
        ME,
        rng(1),
    );
    let mut now = t(1000);
    let ack = |s: &mut Dcf, now: &mut SimTime, lose: bool| {
        let (f, at) = next_data(s, now, 1);
        assert_eq!(f.airtime, f.rate.ppdu_duration(1028, tpsim_phy::Preamble::Long));
        if lose {
            *now = at + f.airtime + d(16 + 9 + 44);
            fire(s, *now);
        } else {
            *now = at + f.airtime + d(16 + 44);
            rx(s, *now, &frame(FrameKind::Ack, PEER, ME, 44, 0));
        }
        events(s);
        f.rate
    };
    for _ in 0..10 {
        assert_eq!(ack(&mut s, &mut now, false), WifiRate::Ofdm48);
    }
    for _ in 0..10 {
        assert_eq!(ack(&mut s, &mut now, false), WifiRate::Ofdm54);
    }
    assert_eq!(s.data_rate_for(PEER), WifiRate::Ofdm54, "54 Mbit/s is the top");
    ack(&mut s, &mut now, true);
    ack(&mut s, &mut now, true);
    assert_eq!(s.data_rate_for(PEER), WifiRate::Ofdm48);
    ack(&mut s, &mut now, true);
    ack(&mut s, &mut now, true);
    assert_eq!(s.data_rate_for(PEER), WifiRate::Ofdm36);
}

/// Carrier-sense transitions and a failed reception held back while a station is at rest and
/// handed over with `sync_medium` leave it exactly as if each had been reported when it
/// happened, and what follows (a new MSDU, deferring EIFS) comes out the same.
#[test]
fn held_back_carrier_sense_is_the_same_as_reported() {
    let mut a = station(cfg());
    // A broadcast, then its post-backoff runs out: the station comes to rest.
    a.send(t(1000), msdu(BROADCAST, 7));
    tx(&mut a, t(1000));
    assert_eq!(events(&mut a), vec![MacEvent::TxOk { handle: 7 }]);
    assert!(!a.at_rest(), "post-backoff pending");
    a.on_timeout(t(20_000));
    assert!(a.at_rest());
    let mut b = a.clone();
    for (busy, idle) in [(26_000, 27_000), (27_010, 28_000), (29_000, 29_500)] {
        a.on_medium_busy(t(busy));
        if busy == 27_010 {
            // An undecodable frame: EIFS for the next deferral.
            a.on_rx_error(t(idle));
        }
        a.on_medium_idle(t(idle));
        assert!(a.at_rest());
    }
    a.on_medium_busy(t(29_900));
    b.sync_medium(true, Some(t(29_500)), 1);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    for s in [&mut a, &mut b] {
        s.on_medium_idle(t(30_000));
        s.send(t(30_020), msdu(PEER, 8));
    }
    assert_eq!(a.poll_timeout(), b.poll_timeout());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

// ------------------------------------------------------------ switched off and on

#[test]
fn a_power_cycle_forgets_the_exchange_and_keeps_counters_and_sequence_numbers() {
    // A station waiting for the Ack of its first DATA frame is switched off: nothing is
    // pending any more, and it accepts a new MSDU, which waits DIFS from the power cycle and
    // carries the next sequence number (§10.3.2.14: numbering goes on).
    let mut s = station(cfg());
    s.send(t(0), msdu(PEER, 7));
    fire(&mut s, t(50));
    let f = tx(&mut s, t(50));
    assert_eq!(f.seq, 0);
    assert!(s.poll_timeout().is_some(), "the ACK timeout is pending");
    let sent = s.stats().data_sent;
    s.power_cycle(t(5000));
    assert!(s.ready());
    assert_eq!(
        (s.poll_timeout(), s.poll_event(), s.cw()),
        (None, None, cfg().timing.cw_min)
    );
    no_tx(&mut s, t(5000));
    assert_eq!(s.stats().data_sent, sent);
    // No TxFailed for the forgotten MSDU.
    assert!(events(&mut s).is_empty());
    s.send(t(5000), msdu(PEER, 8));
    fire(&mut s, t(5050));
    let g = tx(&mut s, t(5050));
    assert_eq!((g.handle, g.seq, g.retry), (8, 1, false));
}
