//! Two connected endpoints over a simulated path (quinn's `tests/util.rs` `Pair`, in spirit):
//! a fixed one-way latency, no rate limit, and a deterministic fault injector that drops,
//! duplicates or delays (reorders) each segment according to a script. proptest writes the
//! scripts; the property is the byte-stream contract: each receiver's `DeliveredBytes` grows,
//! never passes what the other application handed over, and ends exactly at its total, and
//! both ends close.

use super::*;
use crate::{L4Header, Message, Segment, SocketConfig, TransportEvent};
use proptest::prelude::*;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::SizeConvention;

/// What happens to one segment, decided by a roll in 0..100 (0 is always "deliver", so that
/// shrinking a failing script heads towards a clean path).
#[derive(Clone, Copy, Debug, Default)]
struct Roll {
    r: u8,
    /// Extra delay for reordered or duplicated copies, in 1/255ths of three latencies.
    delay: u8,
}

#[derive(Clone, Debug, Default)]
struct Faults {
    /// Percent of segments dropped, duplicated, delayed (reordered).
    loss: u8,
    dup: u8,
    reorder: u8,
    /// Per direction (0: client to server, 1: back), the roll of the k-th segment sent; segments
    /// beyond the script are delivered.
    rolls: [Vec<Roll>; 2],
    /// Per direction, indices of segments to drop outright.
    drops: [Vec<usize>; 2],
}

/// A sending and receiving application on one end.
#[derive(Debug, Default)]
struct App {
    /// Bytes to send in total.
    total: u64,
    /// Bytes handed to the socket so far.
    given: u64,
    /// Size of each `send`.
    chunk: u32,
    closed_app: bool,
    /// In-order bytes received from the peer (from `DeliveredBytes`).
    delivered: u64,
    connected_events: u32,
    closed_events: u32,
    /// Highest stream offset sent so far, for the `StreamData` checks.
    max_sent_end: u64,
}

struct Flight {
    at: SimTime,
    order: u64,
    to: usize,
    seg: Segment,
}

struct Pair {
    now: SimTime,
    socks: [TcpSocket; 2],
    apps: [App; 2],
    latency: SimDuration,
    sizes: SizeConvention,
    faults: Faults,
    sent: [usize; 2],
    inflight: Vec<Flight>,
    order: u64,
    /// The server stops reading during [start, end).
    pause: Option<(SimTime, SimTime)>,
    paused: bool,
    two_way: bool,
}

#[derive(Clone, Debug)]
struct Scenario {
    tcp: TcpConfig,
    mtu: u32,
    sizes: SizeConvention,
    latency_ms: u64,
    client_bytes: u64,
    server_bytes: u64,
    chunk: u32,
    server_iss: u32,
    pause_ms: Option<(u64, u64)>,
    faults: Faults,
}

impl Pair {
    fn new(sc: &Scenario) -> Pair {
        let cfg = |local, remote| SocketConfig {
            local_port: local,
            remote_port: remote,
            sizes: sc.sizes,
            mtu: sc.mtu,
        };
        // In two-way runs each application closes when it is done sending; in one-way runs the
        // server closes on the client's FIN.
        let two_way = sc.server_bytes > 0;
        let client_tcp = TcpConfig {
            close_on_peer_fin: !two_way,
            ..sc.tcp
        };
        let server_tcp = TcpConfig {
            iss: sc.server_iss,
            close_on_peer_fin: !two_way,
            ..sc.tcp
        };
        let app = |total| App {
            total,
            chunk: sc.chunk,
            ..App::default()
        };
        Pair {
            now: SimTime::ZERO,
            socks: [
                TcpSocket::new(cfg(49152, 80), client_tcp, Open::Active, SimTime::ZERO),
                TcpSocket::new(cfg(80, 49152), server_tcp, Open::Passive, SimTime::ZERO),
            ],
            apps: [app(sc.client_bytes), app(sc.server_bytes)],
            latency: SimDuration::from_millis(sc.latency_ms),
            sizes: sc.sizes,
            faults: sc.faults.clone(),
            sent: [0, 0],
            inflight: Vec::new(),
            order: 0,
            pause: sc.pause_ms.map(|(at, len)| {
                let start = SimTime::ZERO + SimDuration::from_millis(at);
                (start, start + SimDuration::from_millis(len))
            }),
            paused: false,
            two_way,
        }
    }

    fn done(&self) -> bool {
        let finished = |s: &TcpSocket| matches!(s.state(), State::Closed | State::TimeWait);
        // A paused reader may still hold data after the connection closed.
        let read_all = |i: usize| self.apps[i].delivered == self.apps[1 - i].total;
        finished(&self.socks[0])
            && finished(&self.socks[1])
            && self.apps[0].closed_events == 1
            && self.apps[1].closed_events == 1
            && read_all(0)
            && read_all(1)
    }

    /// One round: the applications act and both endpoints are polled; then, unless the run is
    /// over, time moves to the next arrival or deadline, and each arrival or expiry is handed to
    /// its endpoint, which is polled right after (as the engine does). Returns false when the
    /// run is over or nothing is left to happen.
    fn step(&mut self) -> Result<bool, TestCaseError> {
        self.apps_act();
        for i in 0..2 {
            self.pump(i)?;
        }
        if self.done() {
            return Ok(false);
        }
        let Some(next) = self.next_time() else {
            return Ok(false);
        };
        self.now = next.max(self.now);
        let now = self.now;
        if let Some((start, end)) = self.pause {
            let want = now >= start && now < end;
            if want != self.paused {
                self.paused = want;
                self.socks[1].set_receive_paused(now, want);
            }
        }
        let mut due: Vec<Flight> = Vec::new();
        let mut i = 0;
        while i < self.inflight.len() {
            if self.inflight[i].at <= now {
                due.push(self.inflight.swap_remove(i));
            } else {
                i += 1;
            }
        }
        due.sort_by_key(|f| (f.at, f.order));
        for f in due {
            self.socks[f.to].on_segment(now, &f.seg);
            self.pump(f.to)?;
        }
        for i in 0..2 {
            if self.socks[i].poll_timeout().is_some_and(|t| t <= now) {
                self.socks[i].on_timeout(now);
                self.pump(i)?;
            }
        }
        Ok(true)
    }

    fn apps_act(&mut self) {
        let now = self.now;
        for i in 0..2 {
            let (app, sock) = (&mut self.apps[i], &mut self.socks[i]);
            while app.given < app.total {
                let len = (app.total - app.given).min(app.chunk as u64) as u32;
                if !sock.can_send(len) {
                    break;
                }
                sock.send(
                    now,
                    Message {
                        id: 0,
                        len,
                        created: now,
                    },
                )
                .expect("can_send said yes");
                app.given += len as u64;
            }
            // The client closes when it has handed everything over; the server too in two-way
            // runs (once connected), and otherwise closes on the client's FIN.
            let closes = i == 0 || (self.two_way && app.connected_events > 0);
            if closes && app.given == app.total && !app.closed_app {
                app.closed_app = true;
                sock.close(now);
            }
        }
    }

    /// Moves endpoint `i`'s segments onto the path and checks its events.
    fn pump(&mut self, i: usize) -> Result<(), TestCaseError> {
        while let Some(seg) = self.socks[i].poll_transmit(self.now) {
            self.check_stream(i, &seg)?;
            self.route(i, seg);
        }
        while let Some(ev) = self.socks[i].poll_event() {
            let peer_given = self.apps[1 - i].given;
            let app = &mut self.apps[i];
            match ev {
                TransportEvent::DeliveredBytes { upto } => {
                    prop_assert!(
                        upto > app.delivered,
                        "DeliveredBytes went from {} to {upto}",
                        app.delivered
                    );
                    prop_assert!(upto <= peer_given, "delivered {upto} > {peer_given} sent");
                    app.delivered = upto;
                }
                TransportEvent::Connected => app.connected_events += 1,
                TransportEvent::Closed => app.closed_events += 1,
                TransportEvent::Delivered { .. } => {
                    prop_assert!(false, "TCP delivers bytes, not messages")
                }
            }
        }
        Ok(())
    }

    fn next_time(&self) -> Option<SimTime> {
        let mut next = self.inflight.iter().map(|f| f.at).min();
        for s in &self.socks {
            next = match (next, s.poll_timeout()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if let Some((start, end)) = self.pause {
            for t in [start, end] {
                if t > self.now {
                    next = Some(next.map_or(t, |n| n.min(t)));
                }
            }
        }
        next
    }

    /// `StreamData` must describe the bytes exactly: new data continues the stream, resends lie
    /// before its end, nothing passes what the application gave.
    fn check_stream(&mut self, from: usize, seg: &Segment) -> Result<(), TestCaseError> {
        let app = &mut self.apps[from];
        let L4Header::Tcp(h) = seg.header else {
            return Err(TestCaseError::fail("not TCP"));
        };
        prop_assert_eq!(seg.message, None);
        match seg.stream {
            None => prop_assert_eq!(seg.payload_len, 0),
            Some(sd) => {
                prop_assert_eq!(sd.len, seg.payload_len);
                prop_assert!(sd.len > 0 && sd.len <= self.socks[from].mss());
                let end = sd.offset + sd.len as u64;
                prop_assert!(end <= app.given, "segment ends at {end}, app gave {}", app.given);
                if sd.retransmission {
                    prop_assert!(sd.offset < app.max_sent_end);
                } else {
                    prop_assert_eq!(sd.offset, app.max_sent_end, "new data must continue the stream");
                }
                app.max_sent_end = app.max_sent_end.max(end);
            }
        }
        let expect_ip = match self.sizes {
            SizeConvention::Standard => seg.payload_len + 20 + h.header_len(),
            SizeConvention::Ns2 => seg.payload_len + 40,
        };
        prop_assert_eq!(seg.ip_len, expect_ip);
        Ok(())
    }

    fn route(&mut self, from: usize, seg: Segment) {
        if std::env::var_os("TPSIM_TCP_TRACE").is_some() {
            if let L4Header::Tcp(h) = seg.header {
                let s = &self.socks[from];
                eprintln!(
                    "{} {} #{} {:?} seq {} ack {} len {} win {} | {} cwnd {} rwnd {}",
                    self.now,
                    if from == 0 { "C>S" } else { "S>C" },
                    self.sent[from],
                    h.flags,
                    h.seq,
                    h.ack,
                    seg.payload_len,
                    h.window,
                    s.state(),
                    s.cwnd(),
                    s.rwnd()
                );
            }
        }
        let k = self.sent[from];
        self.sent[from] += 1;
        let f = &self.faults;
        if f.drops[from].contains(&k) {
            return;
        }
        let roll = f.rolls[from].get(k).copied().unwrap_or_default();
        let drop_at = 100 - f.loss;
        let dup_at = drop_at - f.dup;
        let reorder_at = dup_at - f.reorder;
        let base = self.now + self.latency;
        let extra = SimDuration(self.latency.0 * 3 * roll.delay as u64 / 255);
        let to = 1 - from;
        if roll.r >= drop_at {
            return;
        }
        if roll.r >= dup_at {
            self.push(base, to, seg);
            self.push(base + SimDuration(extra.0 / 2), to, seg);
        } else if roll.r >= reorder_at {
            self.push(base + extra, to, seg);
        } else {
            self.push(base, to, seg);
        }
    }

    fn push(&mut self, at: SimTime, to: usize, seg: Segment) {
        self.order += 1;
        self.inflight.push(Flight {
            at,
            order: self.order,
            to,
            seg,
        });
    }

    /// Runs to completion (or a bound) and checks the end state.
    fn run(&mut self) -> Result<(), TestCaseError> {
        let limit = SimTime::ZERO + SimDuration::from_secs(100_000);
        let mut steps = 0u64;
        while self.step()? {
            steps += 1;
            prop_assert!(
                steps < 2_000_000 && self.now < limit,
                "no end in sight at {}: {}",
                self.now,
                self.describe()
            );
        }
        prop_assert!(self.done(), "stalled at {}: {}", self.now, self.describe());
        for i in 0..2 {
            let peer_total = self.apps[1 - i].total;
            prop_assert_eq!(self.apps[i].delivered, peer_total, "end {} received", i);
            prop_assert_eq!(self.apps[i].connected_events, 1);
            // Not necessarily all acknowledged: if every ACK of the last segments was lost, the
            // peer's TIME-WAIT may end first, and its RST closes this end (RFC 9293 §3.10.7.1).
            prop_assert!(self.socks[i].bytes_acked() <= self.apps[i].total);
            prop_assert_eq!(self.socks[i].buffered_messages(), 0);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        let one = |i: usize| {
            let s = &self.socks[i];
            format!(
                "[{} acked {}/{} delivered {} cwnd {} rto {} timer {:?}]",
                s.state(),
                s.bytes_acked(),
                self.apps[i].total,
                self.apps[i].delivered,
                s.cwnd(),
                s.rto(),
                s.poll_timeout()
            )
        };
        format!("{} {} inflight {}", one(0), one(1), self.inflight.len())
    }
}

fn scenario(recovery: LossRecovery) -> Scenario {
    Scenario {
        tcp: TcpConfig {
            recovery,
            ..TcpConfig::default()
        },
        mtu: 1040,
        sizes: SizeConvention::Standard,
        latency_ms: 50,
        client_bytes: 0,
        server_bytes: 0,
        chunk: 1000,
        server_iss: 7,
        pause_ms: None,
        faults: Faults::default(),
    }
}

/// A clean path: 1 MB arrives, nothing is retransmitted, and slow start gets there in a few
/// seconds.
#[test]
fn lossless_bulk_transfer() {
    let mut sc = scenario(LossRecovery::NewReno);
    sc.client_bytes = 1_000_000;
    let mut pair = Pair::new(&sc);
    pair.run().unwrap();
    let c = &pair.socks[0];
    assert_eq!(c.stats().retransmissions, 0);
    assert_eq!(c.tcp_stats().timeouts, 0);
    assert!(c.rtt_samples() > 10);
    let mean_rtt = c.rtt_sum().0 / c.rtt_samples();
    assert!(
        (100_000_000..=300_000_000).contains(&mean_rtt),
        "mean RTT {mean_rtt} ns"
    );
    assert!(
        pair.now < SimTime::ZERO + SimDuration::from_secs(10),
        "finished at {}",
        pair.now
    );
    // The server acknowledged with delayed ACKs: about one pure ACK per two segments.
    let s = &pair.socks[1];
    assert!(
        s.stats().ack_segments < c.stats().tx_segments * 3 / 4,
        "{:?} vs {:?}",
        s.stats(),
        c.stats()
    );
}

/// Five consecutive losses in one window: NewReno repairs them with partial ACKs and no
/// timeout; Reno leaves recovery at the first partial ACK and must wait for the RTO; Tahoe
/// slow-starts through them. All three deliver everything.
#[test]
fn burst_loss_recovery_differs_by_flavor() {
    let mut stats = vec![];
    for recovery in [LossRecovery::NewReno, LossRecovery::Reno, LossRecovery::Tahoe] {
        let mut sc = scenario(recovery);
        sc.client_bytes = 100_000;
        sc.tcp.delayed_ack = None;
        // Segment 0 is the SYN; the client sends 4 then 8 then 16 data segments.
        sc.faults.drops[0] = (14..19).collect();
        let mut pair = Pair::new(&sc);
        pair.run().unwrap();
        stats.push((recovery, pair.socks[0].tcp_stats()));
    }
    let (_, newreno) = stats[0];
    assert_eq!(
        (newreno.fast_retransmits, newreno.partial_acks, newreno.timeouts),
        (1, 4, 0),
        "{newreno:?}"
    );
    let (_, reno) = stats[1];
    assert_eq!(reno.fast_retransmits, 1);
    assert!(reno.timeouts >= 1, "{reno:?}");
    let (_, tahoe) = stats[2];
    assert_eq!((tahoe.fast_retransmits, tahoe.partial_acks), (1, 0), "{tahoe:?}");
}

/// A receiver that stops reading for 5 s: the window closes, the sender probes, and the
/// transfer resumes when reading does.
#[test]
fn paused_reader_is_probed_and_transfer_resumes() {
    let mut sc = scenario(LossRecovery::NewReno);
    sc.client_bytes = 200_000;
    sc.pause_ms = Some((300, 5000));
    let mut pair = Pair::new(&sc);
    pair.run().unwrap();
    assert!(
        pair.socks[0].tcp_stats().window_probes >= 1,
        "{:?}",
        pair.socks[0].tcp_stats()
    );
}

fn faults_strategy() -> impl Strategy<Value = Faults> {
    let roll = (0u8..100, any::<u8>()).prop_map(|(r, delay)| Roll { r, delay });
    let script = || proptest::collection::vec(roll.clone(), 0..2000);
    (0u8..=30, 0u8..=10, 0u8..=20, script(), script()).prop_map(|(loss, dup, reorder, a, b)| Faults {
        loss,
        dup,
        reorder,
        rolls: [a, b],
        drops: [vec![], vec![]],
    })
}

fn scenario_strategy(recovery: LossRecovery) -> impl Strategy<Value = Scenario> {
    let tcp = (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        2_000u32..=65_536,
        4_000u32..=131_072,
        any::<u32>(),
        proptest::option::of(1u32..=4),
        any::<bool>(),
    )
        .prop_map(
            move |(nagle, delack, abc, rcv, snd, iss, delack_segments, timestamps)| TcpConfig {
                recovery,
                nagle,
                timestamps,
                delayed_ack: delack.then(|| SimDuration::from_millis(200)),
                delayed_ack_segments: delack_segments,
                byte_counting: abc,
                recv_buffer_bytes: rcv,
                send_buffer_bytes: snd,
                iss,
                ..TcpConfig::default()
            },
        );
    let sizes = prop_oneof![Just(SizeConvention::Standard), Just(SizeConvention::Ns2)];
    let pause = proptest::option::weighted(0.2, (0u64..3000, 0u64..4000));
    (
        tcp,
        120u32..=1500,
        sizes,
        1u64..=100,
        0u64..=150_000,
        prop_oneof![3 => Just(0u64), 1 => 0u64..=40_000],
        1u32..=3000,
        any::<u32>(),
        pause,
        faults_strategy(),
    )
        .prop_map(
            |(tcp, mtu, sizes, latency_ms, client_bytes, server_bytes, chunk, server_iss, pause_ms, faults)| Scenario {
                chunk: chunk.min(tcp.send_buffer_bytes),
                tcp,
                mtu,
                sizes,
                latency_ms,
                client_bytes,
                server_bytes,
                server_iss,
                pause_ms,
                faults,
            },
        )
}

fn soak_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    // 64 cases per flavour keep `cargo test` fast; PROPTEST_CASES=5000 soaks.
    #![proptest_config(ProptestConfig { cases: soak_cases(64), ..ProptestConfig::default() })]

    /// The byte-stream contract under loss (≤ 30 %), duplication and reordering of data and
    /// ACKs, both directions, NewReno.
    #[test]
    fn newreno_delivers_exactly_what_was_sent(sc in scenario_strategy(LossRecovery::NewReno)) {
        Pair::new(&sc).run()?;
    }

    /// The same for Reno.
    #[test]
    fn reno_delivers_exactly_what_was_sent(sc in scenario_strategy(LossRecovery::Reno)) {
        Pair::new(&sc).run()?;
    }

    /// The same for Tahoe.
    #[test]
    fn tahoe_delivers_exactly_what_was_sent(sc in scenario_strategy(LossRecovery::Tahoe)) {
        Pair::new(&sc).run()?;
    }
}
