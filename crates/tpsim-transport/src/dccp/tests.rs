//! Packet-by-packet tests: each drives the state machine by hand with `now` and checks one
//! rule, citing the section (RFC 4340 unless said otherwise).

use super::ackvec::AckHistory;
use super::ccid2::Ccid2;
use super::ccid3::{Ccid3Receiver, Ccid3Sender};
use super::seqwin::{seq_add, seq_lt, seq_sub, SeqWindow};
use super::*;
use crate::tcp::Open;
use crate::Header as _;
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::dccp::{
    AckState, AckVector, DccpRepr, DccpType, FeatureOptionKind, FEATURE_ACK_RATIO, FEATURE_CCID, SEQ_MODULUS,
};
use tpsim_wire::SizeConvention;

fn ms(x: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(x)
}

fn cfg(local: u16, remote: u16, sizes: SizeConvention) -> SocketConfig {
    SocketConfig {
        local_port: local,
        remote_port: remote,
        sizes,
        mtu: 1500,
        draw_seed: 0,
    }
}

fn sockets(dc: DccpConfig, sizes: SizeConvention) -> (DccpSocket, DccpSocket) {
    (
        DccpSocket::new(cfg(49152, 1024, sizes), dc, Open::Active, SimTime::ZERO),
        DccpSocket::new(cfg(1024, 49152, sizes), dc, Open::Passive, SimTime::ZERO),
    )
}

fn hdr(s: &Segment) -> DccpRepr {
    match s.header {
        L4Header::Dccp(h) => h,
        _ => panic!("not DCCP"),
    }
}

fn drain(s: &mut DccpSocket, now: SimTime) -> Vec<Segment> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

fn deliver(to: &mut DccpSocket, now: SimTime, segs: &[Segment]) {
    for s in segs {
        to.on_segment(now, s);
    }
}

fn msg(id: u64, len: u32) -> Message {
    Message {
        id,
        len,
        created: SimTime::ZERO,
    }
}

/// Runs the handshake to OPEN on both ends (no loss, zero delay).
fn open_pair(dc: DccpConfig) -> (DccpSocket, DccpSocket) {
    let (mut c, mut s) = sockets(dc, SizeConvention::Standard);
    for _ in 0..4 {
        let a = drain(&mut c, ms(0));
        deliver(&mut s, ms(0), &a);
        let b = drain(&mut s, ms(0));
        deliver(&mut c, ms(0), &b);
    }
    assert_eq!((c.state(), s.state()), (State::Open, State::Open));
    (c, s)
}

#[test]
fn sequence_windows_follow_the_formulas_rfc4340_s7_5_1() {
    let mut w = SeqWindow::new(5000, 100);
    w.set_isr(900);
    w.gsr = 1000;
    w.gss = 5200;
    // SWL = max(GSR + 1 - floor(W/4), ISR), SWH = GSR + ceil(3W/4).
    assert_eq!(w.swl(), 1000 + 1 - 25);
    assert_eq!(w.swh(), 1000 + 75);
    // AWL = max(GSS + 1 - W', ISS), AWH = GSS.
    assert_eq!(w.awl(), 5200 + 1 - 100);
    assert_eq!(w.awh(), 5200);
    // Near the start, ISR and ISS bound the windows from below.
    w.gsr = 905;
    assert_eq!(w.swl(), 900);
    w.gss = 5010;
    assert_eq!(w.awl(), 5000);
}

#[test]
fn validity_depends_on_the_packet_type_rfc4340_s7_5_3() {
    let mut w = SeqWindow::new(5000, 100);
    w.set_isr(900);
    w.gsr = 1000;
    w.gss = 5200;
    w.gar = 5150;
    let (swl, swh) = (w.swl(), w.swh());
    // Data: SWL <= seqno <= SWH, no ackno.
    assert!(w.valid(DccpType::Data, swl, 0));
    assert!(w.valid(DccpType::Data, swh, 0));
    assert!(!w.valid(DccpType::Data, swl - 1, 0));
    assert!(!w.valid(DccpType::Data, swh + 1, 0));
    // Ack/DataAck: also AWL <= ackno <= AWH.
    assert!(w.valid(DccpType::Ack, 1001, 5200));
    assert!(!w.valid(DccpType::Ack, 1001, 5201));
    assert!(!w.valid(DccpType::DataAck, 1001, w.awl() - 1));
    // Close, CloseReq, Reset: GSR < seqno <= SWH and GAR <= ackno <= AWH.
    assert!(!w.valid(DccpType::Close, 1000, 5200));
    assert!(w.valid(DccpType::Close, 1001, 5200));
    assert!(!w.valid(DccpType::Reset, 1001, 5149));
    assert!(w.valid(DccpType::Reset, 1001, 5150));
    // Sync and SyncAck: SWL <= seqno only (far above SWH is fine).
    assert!(w.valid(DccpType::Sync, swh + 10_000, 5200));
    assert!(!w.valid(DccpType::Sync, swl - 1, 5200));
}

#[test]
fn sequence_numbers_wrap_at_2_48_rfc4340_s7_1() {
    let top = SEQ_MODULUS - 1;
    assert_eq!(seq_add(top, 1), 0);
    assert_eq!(seq_sub(0, 1), top);
    assert!(seq_lt(top, 0));
    assert!(!seq_lt(0, top));
    let mut w = SeqWindow::new(top, 100);
    assert_eq!(w.next_seq(), top);
    assert_eq!(w.next_seq(), 0);
}

#[test]
fn handshake_request_response_ack_rfc4340_s8_1() {
    let (mut c, mut s) = sockets(DccpConfig::rfc(), SizeConvention::Standard);
    assert_eq!((c.state(), s.state()), (State::Request, State::Listen));
    // §8.1.1: the client's Request carries its CCID preference (§6, Change L/R).
    let req = drain(&mut c, ms(0));
    assert_eq!(req.len(), 1);
    let r = hdr(&req[0]);
    assert_eq!(r.packet_type, DccpType::Request);
    assert!(r
        .options
        .features()
        .iter()
        .any(|f| f.kind == FeatureOptionKind::ChangeL && f.feature == FEATURE_CCID && f.value == 2));
    // §8.1.2: the server answers with a Response acknowledging the Request.
    deliver(&mut s, ms(10), &req);
    assert_eq!(s.state(), State::Respond);
    let resp = drain(&mut s, ms(10));
    let h = hdr(&resp[0]);
    assert_eq!(h.packet_type, DccpType::Response);
    assert_eq!(h.ack, r.seq);
    assert!(h
        .options
        .features()
        .iter()
        .any(|f| f.kind == FeatureOptionKind::ConfirmL && f.value == 2));
    // §8.1.4: the client enters PARTOPEN and acknowledges the Response.
    deliver(&mut c, ms(20), &resp);
    assert_eq!(c.state(), State::PartOpen);
    assert_eq!(c.seq_window().isr, h.seq);
    let ack = drain(&mut c, ms(20));
    assert_eq!(hdr(&ack[0]).packet_type, DccpType::Ack);
    assert_eq!(hdr(&ack[0]).ack, h.seq);
    // §8.1.5: the server enters OPEN on the Ack ...
    deliver(&mut s, ms(30), &ack);
    assert_eq!(s.state(), State::Open);
    assert_eq!(s.poll_event(), Some(TransportEvent::Connected));
    // ... and the client leaves PARTOPEN on the server's next packet.
    let back = drain(&mut s, ms(30));
    assert_eq!(hdr(&back[0]).packet_type, DccpType::Ack);
    deliver(&mut c, ms(40), &back);
    assert_eq!(c.state(), State::Open);
    assert_eq!(c.ccid(), Ccid::Ccid2);
}

#[test]
fn requests_back_off_and_the_client_gives_up_rfc4340_s8_1_1() {
    let dc = DccpConfig::rfc();
    let (mut c, _) = sockets(dc, SizeConvention::Standard);
    let first = drain(&mut c, ms(0));
    assert_eq!(first.len(), 1);
    // First retransmission after 1 s, then 2 s, 4 s, ... (exponential back-off).
    assert_eq!(c.poll_timeout(), Some(ms(1000)));
    c.on_timeout(ms(1000));
    assert_eq!(hdr(&drain(&mut c, ms(1000))[0]).packet_type, DccpType::Request);
    assert_eq!(c.poll_timeout(), Some(ms(3000)));
    let mut t = ms(3000);
    while c.state() == State::Request {
        c.on_timeout(t);
        drain(&mut c, t);
        t = c.poll_timeout().unwrap_or(t);
    }
    // Given up once `give_up_after` (3 minutes) has passed since the first Request.
    assert_eq!(c.state(), State::Closed);
    assert!(c.report().gave_up);
    assert!(t >= SimTime::ZERO + dc.give_up_after);
}

/// The `dccp-no-listen` quirk: ns-2.35's receiving agent never told to `listen` stays CLOSED
/// and ignores every Request, without a Reset (`dccp.cc` `recv()`); the ns-2 client sends its
/// Request at 0, 3 and 9 s (`initial_rtx_to_` 3 s, doubling): three in the first 10 s. A
/// listening server answers the first.
#[test]
fn a_server_that_does_not_listen_ignores_every_request() {
    let deaf = DccpConfig {
        listens: false,
        ..DccpConfig::ns2()
    };
    let (mut c, mut s) = sockets(deaf, SizeConvention::Ns2);
    c.send(ms(0), msg(0, 128)).unwrap();
    let mut requests = vec![];
    let mut t = ms(0);
    while t < ms(10_000) {
        for seg in drain(&mut c, t) {
            assert_eq!(hdr(&seg).packet_type, DccpType::Request);
            requests.push(t);
            deliver(&mut s, t, &[seg]);
            assert!(drain(&mut s, t).is_empty(), "the server answered at {t:?}");
        }
        let Some(next) = c.poll_timeout() else { break };
        t = next;
        c.on_timeout(t);
    }
    assert_eq!(requests, vec![ms(0), ms(3000), ms(9000)]);
    assert_eq!((c.state(), s.state()), (State::Request, State::Listen));
    let (mut c, mut s) = sockets(DccpConfig::ns2(), SizeConvention::Ns2);
    c.send(ms(0), msg(0, 128)).unwrap();
    deliver(&mut s, ms(0), &drain(&mut c, ms(0)));
    assert_eq!(hdr(&drain(&mut s, ms(0))[0]).packet_type, DccpType::Response);
}

#[test]
fn partopen_retransmits_its_ack_rfc4340_s8_1_5() {
    let (mut c, mut s) = sockets(DccpConfig::rfc(), SizeConvention::Standard);
    let req = drain(&mut c, ms(0));
    deliver(&mut s, ms(0), &req);
    let resp = drain(&mut s, ms(0));
    deliver(&mut c, ms(0), &resp);
    drain(&mut c, ms(0)); // the Ack, lost
    assert_eq!(c.poll_timeout(), Some(ms(200)));
    c.on_timeout(ms(200));
    let again = drain(&mut c, ms(200));
    assert_eq!(hdr(&again[0]).packet_type, DccpType::Ack);
    // Back-off: the next one 400 ms later.
    assert_eq!(c.poll_timeout(), Some(ms(600)));
    deliver(&mut s, ms(210), &again);
    assert_eq!(s.state(), State::Open);
}

#[test]
fn close_is_answered_by_reset_and_the_closer_waits_2msl_rfc4340_s8_3() {
    let dc = DccpConfig::rfc();
    let (mut c, mut s) = open_pair(dc);
    c.close(ms(100));
    let close = drain(&mut c, ms(100));
    assert_eq!(hdr(&close[0]).packet_type, DccpType::Close);
    assert_eq!(c.state(), State::Closing);
    deliver(&mut s, ms(110), &close);
    assert_eq!(s.state(), State::Closed);
    let reset = drain(&mut s, ms(110));
    let rh = hdr(&reset[0]);
    assert_eq!(rh.packet_type, DccpType::Reset);
    assert_eq!(rh.reset_code, tpsim_wire::dccp::RESET_CLOSED);
    assert_eq!(rh.ack, hdr(&close[0]).seq);
    deliver(&mut c, ms(120), &reset);
    assert_eq!(c.state(), State::TimeWait);
    let tw = ms(120) + SimDuration(2 * dc.msl.0);
    assert_eq!(c.poll_timeout(), Some(tw));
    c.on_timeout(tw);
    assert_eq!(c.state(), State::Closed);
}

#[test]
fn a_closing_server_sends_closereq_and_the_client_closes_rfc4340_s8_3() {
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    s.close(ms(50));
    let creq = drain(&mut s, ms(50));
    assert_eq!(hdr(&creq[0]).packet_type, DccpType::CloseReq);
    assert_eq!(s.state(), State::CloseReq);
    deliver(&mut c, ms(60), &creq);
    // The client's application finishes; its Close follows.
    c.close(ms(70));
    let close = drain(&mut c, ms(70));
    assert!(close.iter().any(|x| hdr(x).packet_type == DccpType::Close));
    deliver(&mut s, ms(80), &close);
    assert_eq!(s.state(), State::Closed);
    let reset = drain(&mut s, ms(80));
    deliver(&mut c, ms(90), &reset);
    assert_eq!(c.state(), State::TimeWait);
}

#[test]
fn an_out_of_window_packet_gets_a_sync_and_syncack_resynchronises_rfc4340_s7_5_4() {
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    // The client "lost" 200 packets: its next sequence number is beyond the server's SWH.
    let far = seq_add(c.seq_window().gss, 200);
    let mut h = DccpRepr {
        src_port: 49152,
        dst_port: 1024,
        packet_type: DccpType::Data,
        ccval: 0,
        seq: far,
        ack: 0,
        service_code: 0,
        reset_code: 0,
        options: Default::default(),
    };
    let data = |h: DccpRepr, id| Segment {
        addr: None,
        header: L4Header::Dccp(h),
        payload_len: 100,
        ip_len: 140,
        message: Some(msg(id, 100)),
        first_tx: ms(1),
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    };
    assert!(seq_lt(s.seq_window().swh(), far));
    while s.poll_event().is_some() {}
    s.on_segment(ms(1), &data(h, 7));
    assert_eq!(s.poll_event(), None, "an invalid packet is not delivered");
    let sync = drain(&mut s, ms(1));
    let sh = hdr(&sync[0]);
    assert_eq!(sh.packet_type, DccpType::Sync);
    assert_eq!(sh.ack, far);
    // The client, for which the Sync is valid, answers with a SyncAck.
    c.seqs_for_test_set_gss(far);
    deliver(&mut c, ms(2), &sync);
    let sa = drain(&mut c, ms(2));
    let sah = hdr(&sa[0]);
    assert_eq!(sah.packet_type, DccpType::SyncAck);
    assert_eq!(sah.ack, sh.seq);
    // The SyncAck moves the server's GSR up: the next data packet is valid again.
    deliver(&mut s, ms(3), &sa);
    assert_eq!(s.seq_window().gsr, sah.seq);
    h.seq = seq_add(sah.seq, 1);
    s.on_segment(ms(4), &data(h, 8));
    assert!(matches!(s.poll_event(), Some(TransportEvent::Delivered { message, .. }) if message.id == 8));
}

#[test]
fn acks_carry_an_ack_vector_of_what_arrived_rfc4340_s11_4() {
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    for i in 0..3 {
        c.send(ms(10), msg(i, 100)).unwrap();
    }
    let d = drain(&mut c, ms(10));
    assert_eq!(d.len(), 3);
    // The middle packet is lost.
    deliver(&mut s, ms(20), &[d[0].clone(), d[2].clone()]);
    let acks = drain(&mut s, ms(20));
    let a = hdr(acks.last().unwrap());
    assert_eq!(a.ack, hdr(&d[2]).seq);
    let v = a.options.ack_vector;
    assert_eq!(v.state_of(a.ack, hdr(&d[2]).seq), Some(AckState::Received));
    assert_eq!(v.state_of(a.ack, hdr(&d[1]).seq), Some(AckState::NotReceived));
    assert_eq!(v.state_of(a.ack, hdr(&d[0]).seq), Some(AckState::Received));
}

#[test]
fn the_receiver_acks_every_ack_ratio_data_packets_rfc4340_s11_3() {
    // Ack Ratio 2 (the default): one Ack per two data packets; an odd one waits for the
    // delayed-ack timer.
    let dc = DccpConfig::rfc();
    let (mut c, mut s) = open_pair(dc);
    for i in 0..3 {
        c.send(ms(10), msg(i, 100)).unwrap();
    }
    let d = drain(&mut c, ms(10));
    deliver(&mut s, ms(20), &d[..1]);
    assert!(drain(&mut s, ms(20)).is_empty());
    deliver(&mut s, ms(20), &d[1..2]);
    let a = drain(&mut s, ms(20));
    assert_eq!(a.len(), 1);
    assert_eq!(hdr(&a[0]).packet_type, DccpType::Ack);
    deliver(&mut s, ms(21), &d[2..3]);
    assert!(drain(&mut s, ms(21)).is_empty());
    assert_eq!(s.poll_timeout(), Some(ms(21) + dc.ack_delay));
    s.on_timeout(ms(21) + dc.ack_delay);
    assert_eq!(drain(&mut s, ms(221)).len(), 1);
}

#[test]
fn ack_ratio_changes_are_confirmed_rfc4341_s6_1_2() {
    // Change L(Ack Ratio) from the HC-Sender is applied by the HC-Receiver and answered with
    // Confirm R (RFC 4340 §6.1, §11.3).
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    let mut h = hdr(&{
        c.send(ms(1), msg(0, 100)).unwrap();
        drain(&mut c, ms(1)).swap_remove(0)
    });
    let mut opts = h.options;
    opts.push_feature(tpsim_wire::dccp::FeatureOption {
        kind: FeatureOptionKind::ChangeL,
        feature: FEATURE_ACK_RATIO,
        value: 1,
    });
    h.options = opts;
    h.seq = seq_add(h.seq, 1);
    let seg = Segment {
        addr: None,
        header: L4Header::Dccp(h),
        payload_len: 100,
        ip_len: 200,
        message: Some(msg(1, 100)),
        first_tx: ms(1),
        stream: None,
        ecn: tpsim_wire::Ecn::NotEct,
    };
    s.on_segment(ms(2), &seg);
    assert_eq!(s.rx_ack_ratio(), 1);
    // With Ack Ratio 1, this single data packet is acknowledged at once, with the Confirm.
    let a = drain(&mut s, ms(2));
    let ah = hdr(&a[0]);
    assert!(ah
        .options
        .features()
        .iter()
        .any(|f| f.kind == FeatureOptionKind::ConfirmR && f.feature == FEATURE_ACK_RATIO && f.value == 1));
}

fn acked_vector(top: u64, received: &[bool]) -> AckVector {
    // received[0] is `top`, then downwards.
    let mut v = AckVector::EMPTY;
    for &r in received {
        v.push(if r { AckState::Received } else { AckState::NotReceived }, 0);
    }
    let _ = top;
    v
}

fn ccid2(cwnd: u32) -> Ccid2 {
    let dc = DccpConfig::rfc();
    Ccid2::new(
        cwnd,
        u32::MAX,
        3,
        (dc.ccid2_initial_rto, dc.ccid2_min_rto, dc.ccid2_max_rto),
        2,
    )
}

#[test]
fn ccid2_initial_window_rfc4341_s5() {
    // min(4, max(2, floor(4380/s))) packets.
    assert_eq!(Ccid2::rfc3390_initial_cwnd(1000), 4);
    assert_eq!(Ccid2::rfc3390_initial_cwnd(1460), 3);
    assert_eq!(Ccid2::rfc3390_initial_cwnd(2500), 2);
    assert_eq!(Ccid2::rfc3390_initial_cwnd(100), 4);
}

#[test]
fn ccid2_slow_start_then_congestion_avoidance_rfc4341_s5() {
    let mut c = ccid2(4);
    for s in 0..4 {
        assert!(c.can_send());
        c.on_data_sent(ms(0), s);
    }
    assert!(!c.can_send(), "pipe = cwnd");
    // Slow start: +1 per acknowledged packet.
    c.on_ack(ms(100), 3, &acked_vector(3, &[true; 4]));
    assert_eq!((c.cwnd(), c.pipe()), (8, 0));
    // Congestion avoidance (cwnd >= ssthresh): +1 per cwnd packets acknowledged.
    let mut c = Ccid2::new(
        4,
        4,
        3,
        (
            SimDuration::from_secs(3),
            SimDuration::from_secs(1),
            SimDuration::from_secs(64),
        ),
        2,
    );
    for s in 0..4 {
        c.on_data_sent(ms(0), s);
    }
    c.on_ack(ms(100), 2, &acked_vector(2, &[true; 3]));
    assert_eq!(c.cwnd(), 4);
    c.on_ack(ms(100), 3, &acked_vector(3, &[true]));
    assert_eq!(c.cwnd(), 5);
    // The sample of the packet the Ack Number names is the RTT.
    assert_eq!(c.rtt().srtt(), Some(SimDuration::from_millis(100)));
}

#[test]
fn ccid2_loss_needs_three_later_acks_and_halves_once_per_window_rfc4341_s5() {
    // In congestion avoidance (ssthresh = cwnd = 10), so that the acknowledgements before the
    // loss do not grow the window.
    let dc = DccpConfig::rfc();
    let mut c = Ccid2::new(10, 10, 3, (dc.ccid2_initial_rto, dc.ccid2_min_rto, dc.ccid2_max_rto), 2);
    for s in 0..10 {
        c.on_data_sent(ms(0), s);
    }
    // 2 and 4 missing, 0, 1, 3, 5, 6 acknowledged: 2 has three later packets acknowledged
    // (3, 5, 6) and is lost; 4 has two (5, 6) and is not yet.
    c.on_ack(
        ms(50),
        6,
        &acked_vector(6, &[true, true, false, true, false, true, true]),
    );
    assert_eq!(c.lost, 1);
    assert_eq!(c.cwnd(), 5, "halved");
    // 7 acknowledged: 4 has three later acknowledged packets too, and is lost.
    c.on_ack(
        ms(51),
        7,
        &acked_vector(7, &[true, true, true, false, true, false, true, true]),
    );
    assert_eq!(c.lost, 2);
    assert_eq!(c.cwnd(), 5, "halved once for both losses of the window");
    assert_eq!(c.ssthresh(), 5);
    assert_eq!(c.pipe(), 10 - 6 - 2);
    // RFC 4341 §6.1.2: Ack Ratio stays within ceil(cwnd/2).
    assert!(c.ack_ratio() <= 3);
}

#[test]
fn ccid2_timeout_resets_cwnd_to_one_rfc4341_s5() {
    let mut c = ccid2(6);
    for s in 0..6 {
        c.on_data_sent(ms(0), s);
    }
    let rto = c.rto_deadline().unwrap();
    assert_eq!(rto, ms(3000), "RFC 2988 initial RTO 3 s");
    c.on_rto(rto);
    assert_eq!((c.cwnd(), c.ssthresh(), c.pipe(), c.lost), (1, 3, 0, 6));
    assert_eq!(c.ack_ratio(), 1, "Ack Ratio <= ceil(1/2)");
    assert_eq!(c.rtt().rto(), SimDuration::from_secs(6), "RTO backed off");
}

#[test]
fn ccid2_ack_ratio_doubles_on_lost_acks_rfc4341_s6_1_2() {
    let mut c = ccid2(20);
    assert_eq!(c.ack_ratio(), 2);
    c.on_ack_loss(ms(10));
    assert_eq!(c.ack_ratio(), 4);
    assert!(c.ack_ratio_unconfirmed());
    // At most once per RTT (no sample yet: the RTO, 3 s).
    c.on_ack_loss(ms(20));
    assert_eq!(c.ack_ratio(), 4);
    c.ack_ratio_confirmed(4);
    assert!(!c.ack_ratio_unconfirmed());
}

#[test]
fn an_acknowledged_ack_trims_the_receiver_history_rfc4340_s11_4_2() {
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    for i in 0..4 {
        c.send(ms(10), msg(i, 100)).unwrap();
    }
    let d = drain(&mut c, ms(10));
    deliver(&mut s, ms(20), &d);
    let acks = drain(&mut s, ms(20));
    let last = hdr(acks.last().unwrap());
    let tail_before = s.history().tail();
    // The client acknowledges the server's Ack (on its next DataAck).
    deliver(&mut c, ms(30), &acks);
    c.send(ms(30), msg(4, 100)).unwrap();
    let d2 = drain(&mut c, ms(30));
    assert_eq!(hdr(&d2[0]).packet_type, DccpType::DataAck);
    assert_eq!(hdr(&d2[0]).ack, last.seq);
    deliver(&mut s, ms(40), &d2);
    assert_eq!(s.history().tail(), seq_add(last.ack, 1));
    assert!(seq_lt(tail_before, s.history().tail()));
}

#[test]
fn duplicates_are_not_delivered_twice() {
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    c.send(ms(1), msg(0, 10)).unwrap();
    let d = drain(&mut c, ms(1));
    deliver(&mut s, ms(2), &d);
    deliver(&mut s, ms(3), &d);
    let n = std::iter::from_fn(|| s.poll_event())
        .filter(|e| matches!(e, TransportEvent::Delivered { .. }))
        .count();
    assert_eq!(n, 1);
    assert_eq!(s.dccp_stats().duplicates, 1);
}

#[test]
fn history_forgets_packets_beyond_its_length() {
    let mut h = AckHistory::new();
    h.record(10);
    h.record(10 + super::ackvec::HISTORY_LEN + 5);
    assert!(!h.contains(10));
    assert_eq!(h.record(10), super::ackvec::Arrival::TooOld);
}

#[test]
fn send_queue_limit_and_largest_message() {
    let dc = DccpConfig {
        send_queue_len: 2,
        ..DccpConfig::rfc()
    };
    let (mut c, _) = sockets(dc, SizeConvention::Standard);
    let max = DccpSocket::max_message(SizeConvention::Standard, 1500);
    assert_eq!(max, 1500 - 20 - 16 - 8 - MAX_DATA_OPTIONS_LEN);
    assert_eq!(c.send(ms(0), msg(0, max + 1)), Err(SendError::TooLarge { max }));
    c.send(ms(0), msg(0, 10)).unwrap();
    c.send(ms(0), msg(1, 10)).unwrap();
    assert_eq!(c.send(ms(0), msg(2, 10)), Err(SendError::QueueFull));
    assert!(!c.can_send(10));
}

#[test]
fn sizes_standard_and_ns2_rfc4340_s5_and_ns2_dccp_types() {
    // ns-2.35 (measured with its Agent/DCCP): a 128-B message travels as a 160-B Data packet and
    // a 168-B DataAck (4 bytes of options).
    for (sizes, data, dataack) in [
        (SizeConvention::Ns2, 128 + 32, 128 + 36 + 4),
        (SizeConvention::Standard, 128 + 20 + 16, 128 + 20 + 24 + 4),
    ] {
        let (mut c, mut s) = sockets(DccpConfig::rfc(), sizes);
        for _ in 0..3 {
            let a = drain(&mut c, ms(0));
            deliver(&mut s, ms(0), &a);
            let b = drain(&mut s, ms(0));
            deliver(&mut c, ms(0), &b);
        }
        for i in 0..2 {
            c.send(ms(1), msg(i, 128)).unwrap();
        }
        // The first acknowledges the server's last packet, with a 1-byte Ack Vector.
        let d = drain(&mut c, ms(1));
        assert_eq!(hdr(&d[0]).packet_type, DccpType::DataAck);
        assert_eq!(hdr(&d[0]).options.len(), 4);
        assert_eq!(d[0].ip_len, dataack, "{sizes:?}");
        assert_eq!(hdr(&d[1]).packet_type, DccpType::Data);
        assert_eq!(d[1].ip_len, data, "{sizes:?}");
    }
}

#[test]
fn ccid3_window_counter_advances_per_quarter_rtt_at_most_five_rfc4342_s8_1() {
    let mut snd = Ccid3Sender::new(Some(100), SimDuration::from_secs(64), false);
    assert_eq!(snd.on_data_sent(ms(0), 1, 100, 100), 0);
    // R = 100 ms from a feedback with no loss.
    snd.on_feedback(ms(100), 1, Some(0), 1000, u32::MAX);
    let r = snd.srtt_s().unwrap();
    assert!((r - 0.1).abs() < 1e-9);
    assert_eq!(snd.on_data_sent(ms(100), 2, 100, 100), 0);
    // 50 ms = two quarter RTTs later: +2.
    assert_eq!(snd.on_data_sent(ms(150), 3, 100, 100), 2);
    // A long silence: at most +5.
    assert_eq!(snd.on_data_sent(ms(5000), 4, 100, 100), 7);
    // Modulo 16.
    assert_eq!(snd.on_data_sent(ms(10000), 5, 100, 100), 12);
    assert_eq!(snd.on_data_sent(ms(20000), 6, 100, 100), (12 + 5) % 16);
}

/// ns-2.35's rule (`DccpConfig::ns2`, dccp_tfrc.cc `tfrc_send_packet`): once feedback has
/// acknowledged a packet, every data packet's window counter is at least 4 past that packet's.
#[test]
fn ccid3_ns2_window_counter_runs_one_rtt_past_the_acknowledged_one() {
    let mut snd = Ccid3Sender::new(Some(100), SimDuration::from_secs(64), false);
    snd.wc_past_acked = true;
    assert_eq!(snd.on_data_sent(ms(0), 1, 100, 100), 0);
    snd.on_feedback(ms(100), 1, Some(0), 1000, u32::MAX);
    // R = 100 ms; 20 ms later is less than a quarter RTT, but packet 1 (counter 0) was
    // acknowledged: the counter jumps to 4.
    assert_eq!(snd.on_data_sent(ms(120), 2, 100, 100), 4);
    assert_eq!(snd.on_data_sent(ms(140), 3, 100, 100), 4);
    // Then quarter-RTT steps again, from the jump: 130 ms later, 5 (the most at once).
    assert_eq!(snd.on_data_sent(ms(250), 4, 100, 100), 9);
    // Without the rule the counter only takes its quarter-RTT steps.
    let mut rfc = Ccid3Sender::new(Some(100), SimDuration::from_secs(64), false);
    rfc.on_data_sent(ms(0), 1, 100, 100);
    rfc.on_feedback(ms(100), 1, Some(0), 1000, u32::MAX);
    assert_eq!(rfc.on_data_sent(ms(120), 2, 100, 100), 0);
}

#[test]
fn ccid3_rate_follows_the_tfrc_rule_at_feedback_rfc4342_s5_rfc5348_s4_3() {
    // After the first feedback, a feedback with loss: X = max(min(X_calc, 2·X_recv), s/t_mbi)
    // with X_calc = f(s, R, p) (RFC 5348 §3.1, t_RTO = 4R, b = 1).
    let s = 1000.0;
    let mut snd = Ccid3Sender::new(Some(1000), SimDuration::from_secs(64), false);
    snd.on_data_sent(ms(0), 1, 1000, 1000);
    snd.on_feedback(ms(100), 1, Some(0), 10_000, u32::MAX);
    snd.on_data_sent(ms(200), 2, 1000, 1000);
    // R_sample = 100 ms again; p = 1/100; X_recv = 50 000 B/s.
    snd.on_feedback(ms(300), 2, Some(0), 50_000, 100);
    let r = snd.srtt_s().unwrap();
    let x_calc = crate::tfrc::equation::x_bytes_per_s(s, r, 0.01, 4.0 * r, 1.0);
    let want = x_calc.min(2.0 * 50_000.0).max(s / 64.0);
    assert!(
        (snd.x_bytes_per_s() - want).abs() < 1e-6 * want,
        "{} vs {want}",
        snd.x_bytes_per_s()
    );
    assert!((snd.p() - 0.01).abs() < 1e-12);
}

#[test]
fn ccid3_feedback_options_rfc4342_s8_3_s8_5() {
    let mut rcv = Ccid3Receiver::new(None);
    // The first data packet asks for feedback; p = 0 is sent as 2^32 - 1 (§8.5) and the first
    // X_recv is 0 (RFC 5348 §6.3).
    assert!(rcv.on_data(ms(0), 100, 0, 0, 500));
    assert_eq!(rcv.feedback(ms(0)), Some((0, 0, u32::MAX)));
    // Packets 101..=110 over 90 ms, CCVal advancing one step per packet: feedback at four
    // steps, with X_recv = bytes since the last feedback / time since it (RFC 5348 §6.2).
    let mut due_at = None;
    for k in 1..=10u64 {
        if rcv.on_data(ms(10 * k), 100 + k, 0, k as u8, 500) && due_at.is_none() {
            due_at = Some(k);
        }
    }
    assert_eq!(due_at, Some(4));
    let (elapsed, x_recv, p_inv) = rcv.feedback(ms(105)).unwrap();
    assert_eq!(elapsed, 500, "5 ms since the last arrival, in 10 µs units");
    assert_eq!(x_recv, (10.0 * 500.0 / 0.105f64).round() as u32);
    assert_eq!(p_inv, u32::MAX);
    // A loss event: p = 1/I_mean, reported as ceil(1/p) (§8.5).
    for k in [12u64, 13, 14, 15] {
        rcv.on_data(ms(200 + k), 100 + k, 0, (k % 16) as u8, 500);
    }
    let p = rcv.p();
    assert!(p > 0.0);
    let (_, _, p_inv) = rcv.feedback(ms(300)).unwrap();
    assert_eq!(p_inv, (1.0 / p).ceil() as u32);
}

#[test]
fn ccid3_ndp_count_keeps_non_data_packets_out_of_the_loss_history_rfc4342_s6_1() {
    let mut rcv = Ccid3Receiver::new(None);
    rcv.on_data(ms(0), 10, 0, 0, 100);
    // Sequence numbers 11..=13 were the sender's Acks (NDP Count 3): no loss.
    for (i, seq) in [14u64, 15, 16, 17].into_iter().enumerate() {
        rcv.on_data(ms(1 + i as u64), seq, if i == 0 { 3 } else { 0 }, 0, 100);
    }
    assert_eq!(rcv.lost_packets(), 0);
    // Without an NDP Count, 18, 19 and 20 count as lost data packets.
    for (i, seq) in [21u64, 22, 23, 24].into_iter().enumerate() {
        rcv.on_data(ms(10 + i as u64), seq, 0, 0, 100);
    }
    assert_eq!(rcv.lost_packets(), 3);
}

#[test]
fn report_gives_the_ccid_state() {
    let (c, _) = open_pair(DccpConfig::rfc());
    let r = c.report();
    assert_eq!(r.congestion[0].0, "cwnd_packets");
    assert_eq!(r.congestion[1].0, "srtt_s");
    let (c, _) = open_pair(DccpConfig::for_profile(DccpProfile::Rfc, Ccid::Ccid3));
    assert_eq!(c.ccid(), Ccid::Ccid3);
    let names: Vec<_> = c.report().congestion.iter().map(|x| x.0).collect();
    assert_eq!(names, ["x_bps", "p", "srtt_s"]);
}

#[test]
fn emitted_packets_parse_back_with_a_good_checksum_rfc4340_s9() {
    // What a pcap trace writes of a segment (L4Header::emit_zeroed) is a valid DCCP packet.
    let (mut c, mut s) = open_pair(DccpConfig::rfc());
    c.send(ms(1), msg(0, 300)).unwrap();
    let mut segs = drain(&mut c, ms(1));
    deliver(&mut s, ms(2), &segs);
    s.on_timeout(ms(2) + DccpConfig::rfc().ack_delay);
    segs.extend(drain(&mut s, ms(300)));
    assert_eq!(segs.len(), 2);
    for seg in segs {
        let ip = tpsim_wire::Ipv4Repr {
            src: std::net::Ipv4Addr::new(10, 0, 0, 1),
            dst: std::net::Ipv4Addr::new(10, 0, 0, 2),
            protocol: tpsim_wire::IpProtocol::Dccp,
            ttl: 64,
            ident: 0,
            total_len: seg.ip_len as u16,
            ecn: tpsim_wire::Ecn::NotEct,
        };
        let mut out = vec![0u8; seg.ip_len as usize - 20];
        seg.header.emit_zeroed(&ip, &mut out);
        let (h, payload) = DccpRepr::parse(&ip, &out).unwrap();
        assert_eq!(h, hdr(&seg));
        assert_eq!(payload.len() as u32, seg.payload_len);
    }
}
