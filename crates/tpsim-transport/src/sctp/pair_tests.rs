//! Two associated endpoints over a simulated path: a fixed one-way latency, no rate limit, and
//! a deterministic fault injector (seeded) that drops, duplicates or delays (reorders) packets
//! in both directions. proptest writes the scenarios; the properties are SCTP's service:
//!
//! * every message is delivered at most once, whole (its length and creation time intact);
//! * ordered messages arrive in order within their stream;
//! * the run ends: either the association completes (both ends closed, every message
//!   delivered exactly once) or it is abandoned exactly when an error counter passes its limit
//!   (Association.Max.Retrans or Max.Init.Retransmits), the peer closing after its ABORT or its
//!   own limit;
//! * nothing panics (debug assertions and overflow checks on).
//!
//! With PR-SCTP (`Scenario::pr_sctp`, the properties of `pair_pr_tests`), a message may also be
//! abandoned by its sender instead of delivered, and every DATA chunk sent is checked against
//! its message's policy (`Pair::check_pr`).
//!
//! `PROPTEST_CASES` sets the number of cases per property (default 5,000 each: 10,000 in all,
//! about 3 s in a debug build).
//! `TPSIM_SCTP_TRACE=1` prints every packet.

use super::*;
use crate::tcp::Open;
use crate::testkit::{self, Driver, SplitMix};
use crate::{L4Header, Message, Segment, SocketConfig, TransportEvent};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::SizeConvention;

#[derive(Clone, Debug)]
pub(super) struct Msg {
    pub(super) len: u32,
    pub(super) stream: u16,
    pub(super) unordered: bool,
    /// Its PR-SCTP policy (used when `Scenario::pr_sctp`).
    pub(super) pr: PrPolicy,
}

#[derive(Clone, Debug)]
pub(super) struct Scenario {
    pub(super) profile: SctpProfile,
    pub(super) mtu: u32,
    pub(super) latency_ms: u64,
    pub(super) streams: u16,
    /// Messages of each direction (0: client to server).
    pub(super) msgs: [Vec<Msg>; 2],
    pub(super) loss: u8,
    pub(super) dup: u8,
    pub(super) reorder: u8,
    pub(super) seed: u64,
    pub(super) sizes: SizeConvention,
    /// A blackout: every packet, both ways, is lost from `.0` for `.1` (long ones make an end
    /// pass Association.Max.Retrans or Max.Init.Retransmits).
    pub(super) blackout: Option<(SimTime, SimDuration)>,
    /// Both ends announce PR-SCTP (RFC 3758).
    pub(super) pr_sctp: bool,
    /// HEARTBEATs on (the profile's interval); off, an association left with no timer
    /// running stalls, and the run fails.
    pub(super) heartbeats: bool,
}

/// Per-direction application state.
#[derive(Default)]
pub(super) struct App {
    given: usize,
    created: Vec<SimTime>,
    closed_app: bool,
    /// Messages received from the peer, by id.
    pub(super) got: HashSet<u64>,
    last_ordered: HashMap<u16, u64>,
    connected: u32,
    closed: u32,
}

pub(super) struct Pair {
    pub(super) net: testkit::Pair<SctpSocket>,
    pub(super) apps: [App; 2],
    sc: Scenario,
    /// Transmissions per (sender, TSN), and user bytes of each (sender, message id) sent at
    /// least once, for the PR-SCTP checks.
    tx: HashMap<(usize, u32), u32>,
    tx_bytes: HashMap<(usize, u64), u32>,
    rng: SplitMix,
    trace: bool,
}

impl Pair {
    pub(super) fn new(sc: Scenario) -> Pair {
        let cfg = |l, r| SocketConfig {
            local_port: l,
            remote_port: r,
            sizes: sc.sizes,
            mtu: sc.mtu,
            draw_seed: 0,
        };
        let sctp = SctpConfig {
            streams: sc.streams,
            pr_sctp: sc.pr_sctp,
            hb_interval: SctpConfig::for_profile(sc.profile)
                .hb_interval
                .filter(|_| sc.heartbeats),
            ..SctpConfig::for_profile(sc.profile)
        };
        Pair {
            net: testkit::Pair::new([
                SctpSocket::new(cfg(5000, 80), sctp, Open::Active, SimTime::ZERO),
                SctpSocket::new(cfg(80, 5000), sctp, Open::Passive, SimTime::ZERO),
            ]),
            apps: [App::default(), App::default()],
            tx: HashMap::new(),
            tx_bytes: HashMap::new(),
            rng: SplitMix(sc.seed),
            sc,
            trace: std::env::var_os("TPSIM_SCTP_TRACE").is_some(),
        }
    }

    fn roll(&mut self) -> u64 {
        self.rng.percent()
    }

    /// Messages end `i` has to send.
    pub(super) fn messages(&self, i: usize) -> usize {
        self.sc.msgs[i].len()
    }

    /// Messages of end `i` that its peer received or that `i` abandoned.
    pub(super) fn settled(&self, i: usize) -> usize {
        let got = &self.apps[1 - i].got;
        let abandoned = self.net.socks[i]
            .abandoned_ids
            .iter()
            .filter(|&&id| !got.contains(&(id as u64)));
        got.len() + abandoned.count()
    }

    fn apps_act(&mut self) {
        let now = self.net.now;
        for i in 0..2 {
            let peer_settled = self.settled(1 - i);
            let peer_total = self.sc.msgs[1 - i].len();
            let (app, sock, msgs) = (&mut self.apps[i], &mut self.net.socks[i], &self.sc.msgs[i]);
            while app.given < msgs.len() {
                let m = &msgs[app.given];
                if !sock.can_send(m.len) {
                    break;
                }
                let msg = Message {
                    id: app.given as u64,
                    len: m.len,
                    created: now,
                };
                sock.send_pr(now, msg, m.stream, m.unordered, m.pr)
                    .expect("can_send said yes");
                app.created.push(now);
                app.given += 1;
            }
            // The client closes once it gave everything and got everything (a SHUTDOWN ends
            // both directions, RFC 9260 §9.2), but what the peer abandoned.
            if i == 0 && !app.closed_app && app.given == msgs.len() && peer_settled == peer_total {
                app.closed_app = true;
                sock.close(now);
            }
        }
    }

    fn pump(&mut self, i: usize) -> Result<(), TestCaseError> {
        while let Some(seg) = self.net.socks[i].poll_transmit(self.net.now) {
            let L4Header::Sctp(h) = &seg.header else {
                return Err(TestCaseError::fail("not SCTP"));
            };
            prop_assert!(h.packet_len() + 20 <= self.sc.mtu, "packet larger than the MTU");
            prop_assert_eq!(seg.payload_len, h.payload_len());
            if self.sc.sizes == SizeConvention::Standard {
                prop_assert_eq!(seg.ip_len, 20 + h.packet_len());
            }
            // pcap: the packet emits and parses back.
            let mut b = vec![0u8; h.packet_len() as usize];
            h.emit(&mut b);
            prop_assert!(tpsim_wire::SctpRepr::parse(&b).is_ok());
            if self.sc.pr_sctp {
                self.check_pr(i, h)?;
            }
            if self.trace {
                eprintln!(
                    "{:>10.6} {} {:?} sack {:?} data {:?} | {} cwnd {} flight {} rwnd {}",
                    self.net.now.0 as f64 / 1e9,
                    if i == 0 { "C>S" } else { "S>C" },
                    h.control,
                    h.sack
                        .map(|s| (s.cum_tsn_ack, s.a_rwnd, s.gaps().to_vec(), s.dups().to_vec())),
                    h.data
                        .as_slice()
                        .iter()
                        .map(|d| (d.tsn, d.stream_id, d.ssn, d.flags, d.len))
                        .collect::<Vec<_>>(),
                    self.net.socks[i].state(),
                    self.net.socks[i].cwnd(),
                    self.net.socks[i].flight_size(),
                    self.net.socks[i].peer_rwnd()
                );
            }
            self.route(i, seg);
        }
        while let Some(ev) = self.net.socks[i].poll_event() {
            match ev {
                TransportEvent::Delivered { message, first_tx } => {
                    let peer = 1 - i;
                    let id = message.id as usize;
                    prop_assert!(id < self.apps[peer].given, "message {id} never sent");
                    let spec = &self.sc.msgs[peer][id];
                    prop_assert_eq!(message.len, spec.len);
                    prop_assert_eq!(message.created, self.apps[peer].created[id]);
                    prop_assert!(message.created <= first_tx && first_tx <= self.net.now);
                    let app = &mut self.apps[i];
                    prop_assert!(app.got.insert(message.id), "message {} delivered twice", id);
                    if !spec.unordered {
                        let stream = spec.stream % self.sc.streams.max(1);
                        if let Some(&last) = app.last_ordered.get(&stream) {
                            prop_assert!(last < message.id, "stream {stream}: {} after {last}", message.id);
                        }
                        app.last_ordered.insert(stream, message.id);
                    }
                }
                TransportEvent::Connected => self.apps[i].connected += 1,
                TransportEvent::Closed => self.apps[i].closed += 1,
                TransportEvent::DeliveredBytes { .. } => prop_assert!(false, "SCTP delivers messages"),
            }
        }
        Ok(())
    }

    /// Every DATA chunk end `i` sends respects its message's policy: none at or after the
    /// message's creation + lifetime, none retransmitted more than allowed.
    fn check_pr(&mut self, i: usize, h: &tpsim_wire::SctpRepr) -> Result<(), TestCaseError> {
        for d in h.data.as_slice() {
            prop_assert!(self.net.socks[i].pr_negotiated());
            let id = d.msg_id as u64;
            let n = self.tx.entry((i, d.tsn)).or_insert(0);
            *n += 1;
            let n = *n;
            if n == 1 {
                *self.tx_bytes.entry((i, id)).or_insert(0) += d.len as u32;
            }
            match self.sc.msgs[i][id as usize].pr {
                PrPolicy::Reliable => {}
                PrPolicy::Lifetime(l) => prop_assert!(
                    self.net.now.0 < d.payload.created_ns + l.0,
                    "end {i}: TSN {} of message {id} sent at {:?}, created {} ns, lifetime {:?}",
                    d.tsn,
                    self.net.now,
                    d.payload.created_ns,
                    l
                ),
                PrPolicy::Retransmissions(k) => prop_assert!(
                    n <= k + 1,
                    "end {i}: TSN {} of message {id} sent {n} times, {k} retransmissions allowed",
                    d.tsn
                ),
            }
        }
        Ok(())
    }

    fn route(&mut self, from: usize, seg: Segment) {
        let r = self.roll();
        let (loss, dup, reorder) = (self.sc.loss as u64, self.sc.dup as u64, self.sc.reorder as u64);
        if r < loss {
            return;
        }
        if let Some((from, len)) = self.sc.blackout {
            if self.net.now >= from && self.net.now < from + len {
                return;
            }
        }
        let lat = SimDuration::from_millis(self.sc.latency_ms);
        let copies = if self.roll() < dup { 2 } else { 1 };
        for _ in 0..copies {
            let extra = if self.roll() < reorder {
                SimDuration(self.rng.next() % (3 * lat.0 + 1))
            } else {
                SimDuration::ZERO
            };
            let at = self.net.now + lat + extra;
            self.net.push(at, 1 - from, seg.clone(), ());
        }
    }

    fn finished(&self) -> bool {
        self.net.socks.iter().all(|s| s.state() == State::Closed)
            && self.apps.iter().all(|a| a.closed == 1)
            && self.net.socks.iter().all(|s| s.poll_timeout().is_none())
    }

    pub(super) fn run(&mut self) -> Result<(), TestCaseError> {
        let limit = SimTime::ZERO + SimDuration::from_secs(4 * 3600);
        let mut steps = 0u64;
        loop {
            self.apps_act();
            for i in 0..2 {
                self.pump(i)?;
            }
            if self.finished() {
                break;
            }
            let Some(next) = self.net.next_time([]) else { break };
            prop_assert!(next < limit, "run did not end by {:?}", limit);
            steps += 1;
            prop_assert!(steps < 2_000_000, "too many steps");
            self.net.now = next.max(self.net.now);
            self.deliver_due()?;
            self.fire_timers()?;
        }
        self.check_end()
    }

    fn check_end(&self) -> Result<(), TestCaseError> {
        let gave: Vec<bool> = self.net.socks.iter().map(|s| s.sctp_stats().gave_up > 0).collect();
        for (i, s) in self.net.socks.iter().enumerate() {
            prop_assert_eq!(s.state(), State::Closed, "end {} not closed", i);
            if gave[i] {
                // Abandoned exactly when a counter passed its limit.
                let c = s.sctp_stats();
                let cfg = SctpConfig::for_profile(self.sc.profile);
                let assoc = s.association_errors() == cfg.assoc_max_retrans + 1;
                let init = s.init_retransmissions() == cfg.max_init_retransmits + 1;
                prop_assert!(
                    assoc || init,
                    "end {i} gave up: errors {} init {} ({:?})",
                    s.association_errors(),
                    s.init_retransmissions(),
                    c
                );
            }
        }
        if !gave[0] && !gave[1] && self.net.socks.iter().all(|s| s.sctp_stats().peer_aborted == 0) {
            for i in 0..2 {
                prop_assert_eq!(
                    self.settled(1 - i),
                    self.sc.msgs[1 - i].len(),
                    "end {} received {} of {} ({} abandoned)",
                    i,
                    self.apps[i].got.len(),
                    self.sc.msgs[1 - i].len(),
                    self.net.socks[1 - i].abandoned_ids.len()
                );
            }
        }
        for i in 0..2 {
            // Abandoned once each, as counted; one that was delivered was sent whole first.
            let ids = &self.net.socks[i].abandoned_ids;
            let unique: HashSet<u32> = ids.iter().copied().collect();
            prop_assert_eq!(unique.len(), ids.len(), "end {} abandoned a message twice", i);
            prop_assert_eq!(ids.len() as u64, self.net.socks[i].sctp_stats().abandoned_messages);
            prop_assert!(self.sc.pr_sctp || ids.is_empty());
            for &id in ids {
                if self.apps[1 - i].got.contains(&(id as u64)) {
                    let sent = self.tx_bytes.get(&(i, id as u64)).copied().unwrap_or(0);
                    prop_assert_eq!(
                        sent,
                        self.sc.msgs[i][id as usize].len,
                        "end {}: message {} abandoned and delivered, not sent whole",
                        i,
                        id
                    );
                }
            }
        }
        Ok(())
    }
}

testkit::driver!(Pair, SctpSocket, ());

pub(super) fn arb_msgs(mtu: u32, streams: u16, max: usize) -> impl Strategy<Value = Vec<Msg>> {
    proptest::collection::vec(
        (1u32..=4 * mtu, 0..streams.max(1), proptest::bool::weighted(0.25)).prop_map(|(len, stream, unordered)| Msg {
            len,
            stream,
            unordered,
            pr: PrPolicy::Reliable,
        }),
        0..max,
    )
}

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    (
        prop_oneof![
            Just(SctpProfile::Rfc9260),
            Just(SctpProfile::Rfc4960),
            Just(SctpProfile::Ns2)
        ],
        prop_oneof![Just(1500u32), Just(576u32), 200u32..1600],
        1u64..80,
        1u16..=16,
        0u8..30,
        0u8..15,
        0u8..20,
        any::<u64>(),
        proptest::bool::weighted(0.2),
    )
        .prop_flat_map(|(profile, mtu, latency_ms, streams, loss, dup, reorder, seed, ns2)| {
            (
                arb_msgs(mtu, streams, 60),
                prop_oneof![3 => Just(Vec::new()), 1 => arb_msgs(mtu, streams, 10)],
                prop_oneof![
                    3 => Just(None),
                    1 => (0u64..5_000, 1u64..900).prop_map(|(at_ms, len_s)| Some((
                        SimTime::ZERO + SimDuration::from_millis(at_ms),
                        SimDuration::from_secs(len_s)
                    ))),
                ],
            )
                .prop_map(move |(c, s, blackout)| Scenario {
                    profile,
                    mtu,
                    latency_ms,
                    streams,
                    msgs: [c, s],
                    loss,
                    dup,
                    reorder,
                    seed,
                    sizes: if ns2 {
                        SizeConvention::Ns2
                    } else {
                        SizeConvention::Standard
                    },
                    blackout,
                    pr_sctp: false,
                    heartbeats: true,
                })
        })
}

/// Random loss (< 30 %), duplication and reordering in both directions, blackouts, 1–16
/// streams, ordered and unordered messages up to 4 MTU, one- and two-way: each message at most
/// once, in order within its stream when ordered, all of them unless an end gave up, and an end
/// gives up exactly when a counter passes its limit (`Pair::check_end`). Both outcomes must
/// occur among the cases, so that each branch of the property is exercised.
#[test]
fn messages_arrive_once_in_order_or_the_association_is_abandoned() {
    use proptest::test_runner::TestRunner;
    use std::cell::Cell;
    let (completed, abandoned) = (Cell::new(0u64), Cell::new(0u64));
    let mut runner = TestRunner::new(ProptestConfig {
        cases: crate::proptest_cases(5000),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&arb_scenario(), |sc| {
            let mut p = Pair::new(sc);
            p.run()?;
            if p.net.socks.iter().any(|s| s.sctp_stats().gave_up > 0) {
                abandoned.set(abandoned.get() + 1);
            } else {
                completed.set(completed.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    let (c, a) = (completed.get(), abandoned.get());
    eprintln!("sctp pair property: {c} cases completed, {a} abandoned");
    if crate::proptest_cases(5000) >= 100 {
        assert!(
            c > 0 && a > 0,
            "completed {c}, abandoned {a}: a branch is not exercised"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::proptest_cases(5000), failure_persistence: None, ..ProptestConfig::default() })]

    /// A clean path: everything is always delivered and the association closes gracefully.
    #[test]
    fn clean_path_completes(sc in arb_scenario()) {
        let sc = Scenario { loss: 0, dup: 0, reorder: 0, blackout: None, ..sc };
        let mut p = Pair::new(sc);
        p.run()?;
        for s in &p.net.socks {
            prop_assert_eq!(s.sctp_stats().gave_up, 0);
            prop_assert_eq!(s.sctp_stats().peer_aborted, 0);
        }
    }
}

/// A fixed heavy case, for the debugger.
#[test]
fn lossy_two_way_multi_stream_transfer() {
    let sc = Scenario {
        profile: SctpProfile::Rfc9260,
        mtu: 1500,
        latency_ms: 20,
        streams: 8,
        msgs: [
            (0..200)
                .map(|k| Msg {
                    len: 1 + (k * 977) % 5000,
                    stream: (k % 8) as u16,
                    unordered: k % 5 == 0,
                    pr: PrPolicy::Reliable,
                })
                .collect(),
            (0..50)
                .map(|k| Msg {
                    len: 100 + k * 13,
                    stream: 0,
                    unordered: false,
                    pr: PrPolicy::Reliable,
                })
                .collect(),
        ],
        loss: 20,
        dup: 5,
        reorder: 10,
        seed: 7,
        sizes: SizeConvention::Standard,
        blackout: None,
        pr_sctp: false,
        heartbeats: true,
    };
    let mut p = Pair::new(sc);
    p.run().unwrap();
    assert_eq!(p.apps[1].got.len(), 200);
    assert_eq!(p.apps[0].got.len(), 50);
}
