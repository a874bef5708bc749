//! Packet-by-packet tests of [`Arp`], and a property test under random loss of ARP packets.

use super::*;
use proptest::prelude::*;
use tpsim_core::rng::{Module, OwnerKind, StreamKey};

const ME: u32 = 1;
const B: u32 = 2;

fn rng(seed: u64) -> RngStream {
    RngStream::new(StreamKey {
        seed,
        run: 0,
        kind: OwnerKind::Node,
        owner_id: ME as u64,
        module: Module::Arp,
    })
}

fn t(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}

fn cache(cfg: ArpConfig) -> Arp<u32> {
    Arp::new(cfg, ME, rng(1))
}

/// ns-3's settings without the request jitter, so that requests leave at once.
fn ns3_now() -> ArpConfig {
    ArpConfig {
        request_jitter: SimDuration::ZERO,
        ..ArpConfig::ns3()
    }
}

fn outputs(a: &mut Arp<u32>) -> Vec<ArpOutput<u32>> {
    std::iter::from_fn(|| a.poll_output()).collect()
}

fn reply_from(sender: u32) -> ArpMessage {
    ArpMessage {
        op: ArpOp::Reply,
        sender,
        target: ME,
    }
}

#[test]
fn the_first_packet_waits_for_one_request_and_goes_with_the_reply() {
    let mut a = cache(ns3_now());
    assert_eq!(a.resolve(t(0), B, 10), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
    // Two more fit the pending queue (3); the fourth is dropped (ns-3 `UpdateWaitReply`).
    assert_eq!(a.resolve(t(1), B, 11), Resolve::Held);
    assert_eq!(a.resolve(t(2), B, 12), Resolve::Held);
    assert_eq!(a.resolve(t(3), B, 13), Resolve::Drop(13));
    assert!(outputs(&mut a).is_empty(), "one request per wait, not one per packet");
    assert_eq!(a.held(), 3);
    a.on_arp(t(5), reply_from(B));
    assert_eq!(
        outputs(&mut a),
        vec![
            ArpOutput::Release { packet: 10, target: B },
            ArpOutput::Release { packet: 11, target: B },
            ArpOutput::Release { packet: 12, target: B },
        ]
    );
    assert_eq!(a.resolve(t(6), B, 14), Resolve::Send(14));
    assert_eq!(a.held(), 0);
}

#[test]
fn the_first_request_waits_out_a_jitter_below_the_limit() {
    let mut a = cache(ArpConfig::ns3());
    assert_eq!(a.resolve(t(100), B, 10), Resolve::Held);
    assert!(outputs(&mut a).is_empty());
    let due = a.poll_timeout().expect("a request is due");
    assert!(due >= t(100) && due < t(110), "{due:?}");
    a.on_timeout(due);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
    // Next: the retransmission timer, one wait_reply_timeout after the entry began waiting.
    assert_eq!(a.poll_timeout(), Some(t(1100)));
}

#[test]
fn unanswered_requests_are_retransmitted_every_second_then_the_entry_dies() {
    let mut a = cache(ns3_now());
    a.resolve(t(0), B, 10);
    a.resolve(t(0), B, 11);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
    // Three retransmissions (MaxRetries), one per WaitReplyTimeout.
    for k in 1..=3 {
        assert_eq!(a.poll_timeout(), Some(t(1000 * k)));
        a.on_timeout(t(1000 * k));
        assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }], "retry {k}");
    }
    a.on_timeout(t(4000));
    assert_eq!(
        outputs(&mut a),
        vec![
            ArpOutput::Drop {
                packet: 10,
                broken: false
            },
            ArpOutput::Drop {
                packet: 11,
                broken: false
            }
        ]
    );
    assert_eq!(a.poll_timeout(), None, "nothing waits: the timer stops");
    // Dead for DeadTimeout (100 s): packets are dropped without a request.
    assert_eq!(a.resolve(t(50_000), B, 12), Resolve::Drop(12));
    assert_eq!(a.resolve(t(104_000), B, 13), Resolve::Drop(13));
    assert!(outputs(&mut a).is_empty());
    // Then a new attempt.
    assert_eq!(a.resolve(t(104_001), B, 14), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
}

#[test]
fn one_timer_serves_every_waiting_entry() {
    // ns-3's HandleWaitReplyTimeout retransmits every waiting entry when the node's timer
    // fires, however recently it began waiting.
    let mut a = cache(ns3_now());
    a.resolve(t(0), B, 10);
    a.resolve(t(900), 3, 20);
    assert_eq!(
        outputs(&mut a),
        vec![ArpOutput::Request { target: B }, ArpOutput::Request { target: 3 }]
    );
    a.on_timeout(t(1000));
    assert_eq!(
        outputs(&mut a),
        vec![ArpOutput::Request { target: B }, ArpOutput::Request { target: 3 }]
    );
    a.on_arp(t(1200), reply_from(B));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Release { packet: 10, target: B }]);
    a.on_timeout(t(2000));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: 3 }]);
}

#[test]
fn an_alive_entry_is_resolved_again_after_its_timeout() {
    let mut a = cache(ns3_now());
    a.resolve(t(0), B, 10);
    a.on_arp(t(10), reply_from(B));
    outputs(&mut a);
    assert_eq!(a.resolve(t(120_010), B, 11), Resolve::Send(11));
    assert_eq!(a.resolve(t(120_011), B, 12), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
}

#[test]
fn requests_for_this_node_are_answered_and_ns3_learns_nothing_from_them() {
    let mut a = cache(ns3_now());
    let req = |sender, target| ArpMessage {
        op: ArpOp::Request,
        sender,
        target,
    };
    a.on_arp(t(0), req(B, ME));
    a.on_arp(t(0), req(B, 7)); // for someone else: ignored
    assert_eq!(outputs(&mut a), vec![ArpOutput::Reply { to: B }]);
    // ns-3 (bug 107): the requester is not learnt, so sending to it needs a request.
    assert_eq!(a.resolve(t(1), B, 10), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
    // Nor does a request from the awaited node resolve it; only its reply does.
    a.on_arp(t(2), req(B, ME));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Reply { to: B }]);
    a.on_arp(t(3), reply_from(B));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Release { packet: 10, target: B }]);
    // A reply nobody waits for is ignored (no entry is created).
    a.on_arp(t(4), reply_from(5));
    assert_eq!(a.resolve(t(5), 5, 11), Resolve::Held);
}

#[test]
fn with_the_rfc_merge_a_request_teaches_its_sender() {
    let mut a: Arp<u32> = Arp::new(
        ArpConfig {
            request_jitter: SimDuration::ZERO,
            ..ArpConfig::rfc()
        },
        ME,
        rng(1),
    );
    let req = |sender, target| ArpMessage {
        op: ArpOp::Request,
        sender,
        target,
    };
    // The target learns the requester (RFC 826: add the triplet) and answers.
    a.on_arp(t(0), req(B, ME));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Reply { to: B }]);
    assert_eq!(a.resolve(t(1), B, 10), Resolve::Send(10));
    // A request for another node updates an entry it already has: here a waiting one.
    assert_eq!(a.resolve(t(2), 3, 11), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: 3 }]);
    a.on_arp(t(3), req(3, 9));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Release { packet: 11, target: 3 }]);
    // ... but does not add one for a sender it did not know.
    a.on_arp(t(4), req(4, 9));
    assert_eq!(a.resolve(t(5), 4, 12), Resolve::Held);
}

/// What happens to a packet handed to the cache.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fate {
    Held,
    Sent,
    Dropped,
}

proptest! {
    /// Under random traffic to a few neighbours and random loss of requests and replies:
    /// every packet is sent or dropped exactly once or is still held, never more than
    /// `pending_queue` per neighbour are held, and a neighbour is asked at most once per
    /// retransmission period beyond its first request.
    #[test]
    fn every_packet_comes_out_once(
        seed in 0u64..1000,
        ops in prop::collection::vec((0u32..4, 0u64..700, any::<bool>(), 0u8..10), 1..200),
        ns2 in any::<bool>(),
    ) {
        let cfg = if ns2 { ArpConfig::ns2() } else { ArpConfig::ns3() };
        let mut a: Arp<u32> = Arp::new(cfg, ME, rng(seed));
        let mut fate: Vec<Fate> = Vec::new();
        let mut now = SimTime::ZERO;
        let mut requests: Vec<Vec<SimTime>> = vec![Vec::new(); 4];
        let settle = |a: &mut Arp<u32>, fate: &mut Vec<Fate>, now: SimTime, lose: u8,
                          requests: &mut Vec<Vec<SimTime>>| {
            while let Some(o) = a.poll_output() {
                match o {
                    ArpOutput::Request { target } => {
                        requests[target as usize].push(now);
                        // The neighbour answers unless the request or the reply is lost.
                        if lose >= 4 {
                            a.on_arp(now, ArpMessage { op: ArpOp::Reply, sender: target, target: ME });
                        }
                    }
                    ArpOutput::Reply { .. } => {}
                    ArpOutput::Release { packet, .. } => {
                        prop_assert_eq!(fate[packet as usize], Fate::Held);
                        fate[packet as usize] = Fate::Sent;
                    }
                    ArpOutput::Drop { packet, .. } => {
                        prop_assert_eq!(fate[packet as usize], Fate::Held);
                        fate[packet as usize] = Fate::Dropped;
                    }
                }
            }
            Ok(())
        };
        for (target, dt_ms, send, lose) in ops {
            let next = now + SimDuration::from_millis(dt_ms);
            // Run the timers due before the next input.
            while let Some(due) = a.poll_timeout().filter(|&d| d <= next) {
                prop_assert!(due >= now);
                now = due;
                a.on_timeout(now);
                settle(&mut a, &mut fate, now, lose, &mut requests)?;
            }
            now = next;
            if send {
                let p = fate.len() as u32;
                fate.push(Fate::Held);
                match a.resolve(now, target, p) {
                    Resolve::Send(q) => { prop_assert_eq!(q, p); fate[p as usize] = Fate::Sent; }
                    Resolve::Drop(q) | Resolve::Fail(q) => { prop_assert_eq!(q, p); fate[p as usize] = Fate::Dropped; }
                    Resolve::Held => {}
                }
            } else {
                a.on_arp(now, ArpMessage { op: ArpOp::Request, sender: target, target: ME });
            }
            settle(&mut a, &mut fate, now, lose, &mut requests)?;
            prop_assert!(a.held() <= 4 * cfg.pending_queue);
            for e in a.entries.values() {
                prop_assert!(e.pending.len() <= cfg.pending_queue);
                prop_assert!(e.state == State::Waiting || e.pending.is_empty());
            }
        }
        let held = fate.iter().filter(|f| **f == Fate::Held).count();
        prop_assert_eq!(held, a.held());
        // Retransmissions come from the 1 s timer: within any 1 s, at most one first request
        // (jittered, ≤ 10 ms) and one retransmission per neighbour. (ns-2 sends one per packet.)
        for times in requests.iter().filter(|_| !ns2) {
            for w in times.windows(3) {
                prop_assert!(w[2].saturating_since(w[0]) >= SimDuration::from_millis(990), "{:?}", times);
            }
        }
    }
}

#[test]
fn ns2_sends_a_request_per_packet_keeps_the_newest_and_fails_the_fourth() {
    let mut a: Arp<u32> = Arp::new(ArpConfig::ns2(), ME, rng(1));
    assert_eq!(a.resolve(t(0), B, 10), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
    assert_eq!(a.resolve(t(1), B, 11), Resolve::Held);
    assert_eq!(
        outputs(&mut a),
        vec![
            ArpOutput::Drop {
                packet: 10,
                broken: false
            },
            ArpOutput::Request { target: B }
        ]
    );
    assert_eq!(a.resolve(t(2), B, 12), Resolve::Held);
    outputs(&mut a);
    // ARP_MAX_REQUEST_COUNT (3) requests unanswered: the next packet and the held one fail as
    // a broken link, and the count starts again.
    assert_eq!(a.resolve(t(3), B, 13), Resolve::Fail(13));
    assert_eq!(
        outputs(&mut a),
        vec![ArpOutput::Drop {
            packet: 12,
            broken: true
        }]
    );
    assert_eq!(a.resolve(t(4), B, 14), Resolve::Held);
    assert_eq!(outputs(&mut a), vec![ArpOutput::Request { target: B }]);
    assert_eq!(a.poll_timeout(), None, "no timers in ns-2's ARP");
    a.on_arp(t(5), reply_from(B));
    assert_eq!(outputs(&mut a), vec![ArpOutput::Release { packet: 14, target: B }]);
    // Never expires.
    assert_eq!(a.resolve(t(10_000_000), B, 15), Resolve::Send(15));
}

#[test]
fn ns2_learns_every_sender_it_overhears() {
    let mut a: Arp<u32> = Arp::new(ArpConfig::ns2(), ME, rng(1));
    // A request from 3 for 4, overheard: 3 is resolved here.
    a.on_arp(
        t(0),
        ArpMessage {
            op: ArpOp::Request,
            sender: 3,
            target: 4,
        },
    );
    assert!(outputs(&mut a).is_empty());
    assert_eq!(a.resolve(t(1), 3, 10), Resolve::Send(10));
    // A request for this node: learnt and answered.
    a.on_arp(
        t(2),
        ArpMessage {
            op: ArpOp::Request,
            sender: B,
            target: ME,
        },
    );
    assert_eq!(outputs(&mut a), vec![ArpOutput::Reply { to: B }]);
    assert_eq!(a.resolve(t(3), B, 11), Resolve::Send(11));
}
