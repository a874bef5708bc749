//! ECN in TCP (RFC 3168 §6.1), packet by packet.

use super::*;
use tpsim_wire::Ecn;

const ECE: TcpFlags = TcpFlags::ECE;
const CWR: TcpFlags = TcpFlags::CWR;

fn ecn_cfg() -> TcpConfig {
    TcpConfig { ecn: true, ..base() }
}

/// What `s` sends from `at` on: at once, or when its next timer (the delayed ACK) fires.
fn next_out(s: &mut TcpSocket, at: SimTime) -> Vec<Segment> {
    let out = drain_segments(s, at);
    if !out.is_empty() {
        return out;
    }
    let when = s.poll_timeout().expect("a timer");
    s.on_timeout(when);
    drain_segments(s, when)
}

/// A client with ECN on whose SYN-ACK accepted ECN (`ece` on it) at 100 ms.
fn ecn_client(ece: bool) -> TcpSocket {
    let mut s = client(ecn_cfg());
    let syn = drain_segments(&mut s, t(0));
    assert_eq!(
        tcp_of(&syn[0]).flags,
        SYN | ECE | CWR,
        "RFC 3168 §6.1.1: an ECN-setup SYN"
    );
    assert_eq!(syn[0].ecn, Ecn::NotEct, "RFC 3168 §6.1.1: the SYN itself is not ECT");
    let flags = if ece { SYN | ACK | ECE } else { SYN | ACK };
    feed(&mut s, t(100), TcpRepr { flags, ..syn_ack() }, 0);
    assert_eq!(events(&mut s), [TransportEvent::Connected]);
    drain(&mut s, t(100));
    s
}

/// RFC 3168 §6.1.1, §6.1.4: after an ECN-setup SYN and SYN-ACK, new data segments are ECT(0)
/// and pure ACKs are not; without ECE on the SYN-ACK nothing is ECT.
#[test]
fn negotiated_ecn_makes_new_data_ect_and_pure_acks_not() {
    for (accepted, want) in [(true, Ecn::Ect0), (false, Ecn::NotEct)] {
        let mut s = ecn_client(accepted);
        send(&mut s, t(100), 2000);
        let out = drain_segments(&mut s, t(100));
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|g| g.ecn == want), "accepted {accepted}: {out:?}");
        // Data from the peer is answered by a pure ACK: never ECT.
        feed(&mut s, t(150), theirs(p(0), d(2000), ACK), 1000);
        let acks = next_out(&mut s, t(150));
        assert!(!acks.is_empty() && acks.iter().all(|g| g.payload_len == 0 && g.ecn == Ecn::NotEct));
    }
}

/// RFC 3168 §6.1.1: a server with ECN answers an ECN-setup SYN with ECE (not CWR) on its
/// SYN-ACK, a plain SYN with a plain SYN-ACK; a server without ECN ignores the offer.
#[test]
fn the_syn_ack_accepts_ecn_only_when_both_ends_want_it() {
    for (server_ecn, syn_flags, want) in [
        (true, SYN | ECE | CWR, SYN | ACK | ECE),
        (true, SYN, SYN | ACK),
        (false, SYN | ECE | CWR, SYN | ACK),
    ] {
        let cfg = TcpConfig {
            ecn: server_ecn,
            ..base()
        };
        let mut s = server(cfg);
        feed(
            &mut s,
            t(0),
            TcpRepr {
                mss: Some(1460),
                ..theirs(IRS, 0, syn_flags)
            },
            0,
        );
        let out = drain(&mut s, t(0));
        assert_eq!(out[0].0.flags, want, "server ecn {server_ecn}, SYN {syn_flags:?}");
    }
}

/// RFC 3168 §6.1.3: a CE-marked data segment makes every ACK carry ECE, until a segment with
/// CWR arrives.
#[test]
fn a_ce_mark_is_echoed_on_every_ack_until_cwr() {
    let mut s = server(ecn_cfg());
    feed(
        &mut s,
        t(0),
        TcpRepr {
            mss: Some(1000),
            ..theirs(IRS, 0, SYN | ECE | CWR)
        },
        0,
    );
    drain(&mut s, t(0));
    feed(&mut s, t(100), theirs(p(0), d(0), ACK), 0);
    let flags_of_ack = |s: &mut TcpSocket, at| {
        let out = next_out(s, at);
        assert_eq!(out.len(), 1, "{out:?}");
        tcp_of(&out[0]).flags
    };
    // One marked segment: its ACK echoes the mark.
    feed_ecn(&mut s, t(110), theirs(p(0), d(0), ACK), 1000, Ecn::Ce);
    assert_eq!(flags_of_ack(&mut s, t(110)), ACK | ECE);
    // An unmarked segment still gets ECE: no CWR yet.
    feed_ecn(&mut s, t(500), theirs(p(1000), d(0), ACK), 1000, Ecn::Ect0);
    assert_eq!(flags_of_ack(&mut s, t(500)), ACK | ECE);
    // The sender's CWR ends the echo.
    feed_ecn(&mut s, t(900), theirs(p(2000), d(0), ACK | CWR), 1000, Ecn::Ect0);
    assert_eq!(flags_of_ack(&mut s, t(900)), ACK);
    assert_eq!(s.stats().retransmissions, 0);
}

/// RFC 3168 §6.1.2: an ACK with ECE halves the window as a loss would (ssthresh = FlightSize/2,
/// cwnd = ssthresh) without retransmitting and without growing the window for that ACK; the
/// next new data segment carries CWR; ECEs for the same window do not reduce it again; one
/// for data sent after the reduction does.
#[test]
fn an_ece_halves_the_window_once_per_window_and_sends_cwr() {
    let mut s = ecn_client(true);
    send(&mut s, t(100), 100_000);
    let first = drain_segments(&mut s, t(100));
    assert_eq!(first.len(), 4, "initial window of 4 segments");
    // ACK of the first segment with ECE: FlightSize was 4,000, so ssthresh = cwnd = 2,000.
    feed(&mut s, t(200), theirs(p(0), d(1000), ACK | ECE), 0);
    assert_eq!((s.cwnd(), s.ssthresh()), (2000, Some(2000)));
    assert_eq!(s.tcp_stats().ecn_reductions, 1);
    // 3,000 bytes in flight, cwnd 2,000: nothing new to send yet.
    assert!(drain_segments(&mut s, t(200)).is_empty());
    // ECE again on ACKs of that window (the receiver echoes until it sees CWR): no new
    // reduction, and congestion avoidance resumes on the ACKs themselves.
    feed(&mut s, t(210), theirs(p(0), d(2000), ACK | ECE), 0);
    feed(&mut s, t(220), theirs(p(0), d(3000), ACK | ECE), 0);
    assert_eq!(s.tcp_stats().ecn_reductions, 1);
    let out = drain_segments(&mut s, t(220));
    assert!(!out.is_empty());
    assert!(
        tcp_of(&out[0]).flags.contains(CWR),
        "the first new segment after the reduction"
    );
    assert!(
        out[1..].iter().all(|g| !tcp_of(g).flags.contains(CWR)),
        "only the first"
    );
    assert!(out.iter().all(|g| g.ecn == Ecn::Ect0));
    let cwnd = s.cwnd();
    // An ECE on an ACK that covers data sent after the reduction reduces again.
    let beyond = d(4000) + out.iter().map(|g| g.payload_len).sum::<u32>();
    feed(&mut s, t(300), theirs(p(0), beyond, ACK | ECE), 0);
    assert_eq!(s.tcp_stats().ecn_reductions, 2);
    assert!(s.cwnd() < cwnd);
    assert_eq!(s.stats().retransmissions, 0);
}

/// RFC 3168 §6.1.5: a retransmission is never ECT.
#[test]
fn a_retransmission_is_not_ect() {
    let mut s = ecn_client(true);
    send(&mut s, t(100), 1000);
    assert_eq!(drain_segments(&mut s, t(100))[0].ecn, Ecn::Ect0);
    // No ACK: the retransmission timer fires and the segment goes again.
    let at = s.poll_timeout().unwrap();
    s.on_timeout(at);
    let again = drain_segments(&mut s, at);
    assert_eq!(again.len(), 1);
    assert!(again[0].stream.unwrap().retransmission);
    assert_eq!(again[0].ecn, Ecn::NotEct);
}

/// RFC 3168 §6.1.2: the window is reduced once for the drops and CE marks of one window of
/// data: after a timeout's reduction, an ECE on an ACK of data from before it does not reduce
/// again; one on an ACK of data sent after it does.
#[test]
fn a_loss_and_a_ce_mark_of_the_same_window_reduce_once() {
    let mut s = ecn_client(true);
    send(&mut s, t(100), 100_000);
    assert_eq!(drain_segments(&mut s, t(100)).len(), 4);
    let at = s.poll_timeout().unwrap();
    s.on_timeout(at);
    assert_eq!(
        (s.cwnd(), s.ssthresh()),
        (1000, Some(2000)),
        "RFC 5681 §3.1 after a timeout"
    );
    assert_eq!(drain_segments(&mut s, at).len(), 1, "the first segment again");
    // Its ACK echoes a mark of the window the timeout already reduced for.
    feed(&mut s, at + ms(100), theirs(p(0), d(1000), ACK | ECE), 0);
    assert_eq!(s.tcp_stats().ecn_reductions, 0);
    assert_eq!(s.cwnd(), 2000, "slow start goes on");
    // Up to SND.MAX at the timeout (4000) and beyond: a mark on new data reduces.
    let out = drain_segments(&mut s, at + ms(100));
    let end = d(1000) + out.iter().map(|g| g.payload_len).sum::<u32>();
    feed(&mut s, at + ms(200), theirs(p(0), d(4000), ACK), 0);
    let more = drain_segments(&mut s, at + ms(200));
    let beyond = d(4000) + more.iter().map(|g| g.payload_len).sum::<u32>();
    assert!(beyond > end.max(d(4000)));
    feed(&mut s, at + ms(300), theirs(p(0), beyond, ACK | ECE), 0);
    assert_eq!(s.tcp_stats().ecn_reductions, 1);
}
