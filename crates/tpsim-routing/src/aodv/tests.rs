//! AODV tests: wire format, packet-by-packet behaviour of one node (each test cites the RFC 3561
//! section it checks), and a small network harness (`net`) for multi-node scenarios.

use tpsim_core::{Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};

use super::table::{seq_at_least, seq_newer};
use super::*;
use crate::{Addr, LinkDest};

mod net;

pub(super) fn a(i: u8) -> Addr {
    Addr::new(10, 0, 0, i)
}

pub(super) fn ms(x: u64) -> SimTime {
    SimTime(x * 1_000_000)
}

pub(super) fn rng(seed: u64, owner: u64) -> RngStream {
    RngStream::new(StreamKey {
        seed,
        run: 0,
        kind: OwnerKind::Node,
        owner_id: owner,
        module: Module::Routing,
    })
}

/// RFC defaults without jitter, HELLOs or rate limits: outputs come out at once.
fn cfg0() -> AodvConfig {
    let mut c = AodvConfig::rfc();
    c.broadcast_jitter = SimDuration::ZERO;
    c.hello = false;
    c.rreq_ratelimit = 0;
    c.rerr_ratelimit = 0;
    c
}

fn node(i: u8, cfg: AodvConfig) -> Aodv<u64> {
    Aodv::new(cfg, a(i), rng(1, i as u64))
}

fn tx(n: &mut Aodv<u64>, now: SimTime) -> Vec<Outgoing> {
    std::iter::from_fn(|| n.poll_transmit(now)).collect()
}

fn evs(n: &mut Aodv<u64>) -> Vec<AodvEvent<u64>> {
    std::iter::from_fn(|| n.poll_event()).collect()
}

fn rreq(orig: u8, id: u32, orig_seq: u32, dst: u8, dst_seq: Option<u32>, hops: u8) -> Rreq {
    Rreq {
        join: false,
        repair: false,
        gratuitous: false,
        dest_only: false,
        unknown_seq: dst_seq.is_none(),
        hop_count: hops,
        rreq_id: id,
        dst: a(dst),
        dst_seq: dst_seq.unwrap_or(0),
        orig: a(orig),
        orig_seq,
    }
}

fn rrep(dst: u8, dst_seq: u32, orig: u8, hops: u8, lifetime_ms: u32) -> Rrep {
    Rrep {
        repair: false,
        ack_required: false,
        prefix_size: 0,
        hop_count: hops,
        dst: a(dst),
        dst_seq,
        orig: a(orig),
        lifetime_ms,
    }
}

fn as_rreq(o: &Outgoing) -> &Rreq {
    match &o.msg {
        Message::Rreq(q) => q,
        m => panic!("expected RREQ, got {m:?}"),
    }
}

fn as_rrep(o: &Outgoing) -> &Rrep {
    match &o.msg {
        Message::Rrep(p) => p,
        m => panic!("expected RREP, got {m:?}"),
    }
}

fn as_rerr(o: &Outgoing) -> &Rerr {
    match &o.msg {
        Message::Rerr(e) => e,
        m => panic!("expected RERR, got {m:?}"),
    }
}

fn sorted(mut v: Vec<(Addr, u32)>) -> Vec<(Addr, u32)> {
    v.sort();
    v
}

// ---------------------------------------------------------------- wire format (§5)

#[test]
fn rreq_bytes_match_rfc_5_1_figure() {
    let q = Rreq {
        gratuitous: true,
        dest_only: true,
        ..rreq(1, 0x0102_0304, 0x1122_3344, 9, Some(7), 3)
    };
    let m = Message::Rreq(q);
    let mut b = Vec::new();
    m.emit(&mut b);
    #[rustfmt::skip]
    let want = [
        1, 0x30, 0, 3,           // Type 1 | J R G D U = 0 0 1 1 0 | reserved | Hop Count 3
        1, 2, 3, 4,              // RREQ ID
        10, 0, 0, 9,             // Destination IP Address
        0, 0, 0, 7,              // Destination Sequence Number
        10, 0, 0, 1,             // Originator IP Address
        0x11, 0x22, 0x33, 0x44,  // Originator Sequence Number
    ];
    assert_eq!(b, want);
    assert_eq!(m.wire_len(), 24);
    assert_eq!(Message::parse(&b), Some(m));
    // The U flag alone is bit 0x08 of the second byte; J and R are 0x80 and 0x40.
    let mut b = Vec::new();
    Message::Rreq(rreq(1, 1, 1, 9, None, 0)).emit(&mut b);
    assert_eq!(b[1], 0x08);
    let mut b = Vec::new();
    Message::Rreq(Rreq {
        join: true,
        repair: true,
        ..rreq(1, 1, 1, 9, Some(1), 0)
    })
    .emit(&mut b);
    assert_eq!(b[1], 0xc0);
}

#[test]
fn rrep_bytes_match_rfc_5_2_figure() {
    let p = Rrep {
        ack_required: true,
        prefix_size: 5,
        ..rrep(9, 8, 1, 2, 6000)
    };
    let m = Message::Rrep(p);
    let mut b = Vec::new();
    m.emit(&mut b);
    #[rustfmt::skip]
    let want = [
        2, 0x40, 5, 2,           // Type 2 | R A = 0 1 | reserved | Prefix Sz 5 | Hop Count 2
        10, 0, 0, 9,             // Destination IP address
        0, 0, 0, 8,              // Destination Sequence Number
        10, 0, 0, 1,             // Originator IP address
        0, 0, 0x17, 0x70,        // Lifetime 6000 ms
    ];
    assert_eq!(b, want);
    assert_eq!(m.wire_len(), 20);
    assert_eq!(Message::parse(&b), Some(m));
    assert_eq!(Message::Rrep(rrep(9, 8, 1, 2, 6000)).kind(), MessageKind::Rrep);
    assert_eq!(Message::Rrep(rrep(9, 8, 9, 0, 2000)).kind(), MessageKind::Hello);
}

#[test]
fn rerr_and_rrep_ack_bytes_match_rfc_5_3_and_5_4_figures() {
    let m = Message::Rerr(Rerr {
        no_delete: false,
        unreachable: vec![(a(9), 9), (a(7), u32::MAX)],
    });
    let mut b = Vec::new();
    m.emit(&mut b);
    #[rustfmt::skip]
    let want = [
        3, 0, 0, 2,              // Type 3 | N = 0 | reserved | DestCount 2
        10, 0, 0, 9, 0, 0, 0, 9, // Unreachable Destination (1) and its sequence number
        10, 0, 0, 7, 0xff, 0xff, 0xff, 0xff,
    ];
    assert_eq!(b, want);
    assert_eq!(m.wire_len(), 20);
    assert_eq!(Message::parse(&b), Some(m));
    let n = Message::parse(&[3, 0x80, 0, 1, 10, 0, 0, 5, 0, 0, 1, 0]).unwrap();
    assert_eq!(
        n,
        Message::Rerr(Rerr {
            no_delete: true,
            unreachable: vec![(a(5), 256)]
        })
    );
    let mut b = Vec::new();
    Message::RrepAck.emit(&mut b);
    assert_eq!(b, [4, 0]);
    assert_eq!(Message::RrepAck.wire_len(), 2);
    assert_eq!(Message::parse(&b), Some(Message::RrepAck));
}

#[test]
fn parse_rejects_short_or_unknown_messages() {
    assert_eq!(Message::parse(&[]), None);
    assert_eq!(Message::parse(&[1; 23]), None);
    assert_eq!(Message::parse(&[2; 19]), None);
    assert_eq!(Message::parse(&[3, 0, 0, 0]), None, "DestCount 0");
    assert_eq!(
        Message::parse(&[3, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]),
        None,
        "truncated list"
    );
    assert_eq!(Message::parse(&[4]), None);
    assert_eq!(Message::parse(&[5, 0]), None);
}

#[test]
fn emit_parse_round_trips_random_messages() {
    let mut r = rng(7, 0);
    for _ in 0..2000 {
        let x = r.next_u64();
        let y = r.next_u64();
        let addr = |v: u64| Addr::from(v as u32);
        let m = match x % 4 {
            0 => Message::Rreq(Rreq {
                join: y & 1 != 0,
                repair: y & 2 != 0,
                gratuitous: y & 4 != 0,
                dest_only: y & 8 != 0,
                unknown_seq: y & 16 != 0,
                hop_count: (y >> 8) as u8,
                rreq_id: (x >> 8) as u32,
                dst: addr(y >> 16),
                dst_seq: (y >> 32) as u32,
                orig: addr(x >> 32),
                orig_seq: (x >> 16) as u32,
            }),
            1 => Message::Rrep(Rrep {
                repair: y & 1 != 0,
                ack_required: y & 2 != 0,
                prefix_size: (y >> 2) as u8 & 0x1f,
                hop_count: (y >> 8) as u8,
                dst: addr(y >> 16),
                dst_seq: (y >> 32) as u32,
                orig: addr(x >> 32),
                lifetime_ms: (x >> 8) as u32,
            }),
            2 => Message::Rerr(Rerr {
                no_delete: y & 1 != 0,
                unreachable: (0..1 + (y >> 1) % 20)
                    .map(|i| (addr(x ^ i), (y >> 7) as u32 ^ i as u32))
                    .collect(),
            }),
            _ => Message::RrepAck,
        };
        let mut b = Vec::new();
        m.emit(&mut b);
        assert_eq!(b.len(), m.wire_len());
        assert_eq!(Message::parse(&b).as_ref(), Some(&m));
    }
}

#[test]
fn sequence_numbers_compare_with_wrapping_arithmetic() {
    // RFC 3561 §6.1: signed 32-bit comparison of the difference.
    assert!(seq_newer(5, 4));
    assert!(!seq_newer(4, 4));
    assert!(seq_newer(0, u32::MAX));
    assert!(seq_newer(3, u32::MAX - 3));
    assert!(!seq_newer(u32::MAX, 3));
    assert!(seq_at_least(4, 4));
    assert!(seq_at_least(1, u32::MAX));
}

// ---------------------------------------------------------------- configuration (§10)

#[test]
fn rfc_constants() {
    let c = AodvConfig::rfc();
    assert_eq!(c.active_route_timeout, SimDuration::from_millis(3000));
    assert_eq!(c.allowed_hello_loss, 2);
    assert_eq!(c.hello_interval, SimDuration::from_millis(1000));
    assert_eq!(c.my_route_timeout, SimDuration::from_millis(6000));
    assert_eq!(c.net_diameter, 35);
    assert_eq!(c.node_traversal_time, SimDuration::from_millis(40));
    assert_eq!(c.net_traversal_time, SimDuration::from_millis(2800));
    assert_eq!(c.path_discovery_time, SimDuration::from_millis(5600));
    assert_eq!(c.rreq_retries, 2);
    assert_eq!((c.rreq_ratelimit, c.rerr_ratelimit), (10, 10));
    assert_eq!((c.ttl_start, c.ttl_increment, c.ttl_threshold), (1, 2, 7));
    assert_eq!(c.timeout_buffer, 2);
    assert_eq!(c.ring_rule, RingRule::Rfc);
    assert_eq!(c.delete_period, SimDuration::from_millis(15_000));
    assert_eq!(c.blacklist_timeout, SimDuration::from_millis(5600));
    assert_eq!(c.next_hop_wait, SimDuration::from_millis(50));
    assert_eq!(c.ring_traversal_time(1), SimDuration::from_millis(240));
    assert!(c.hello && c.link_layer_detection && !c.local_repair);
    // §10: LOCAL_ADD_TTL 2, MAX_REPAIR_TTL 0.3·NET_DIAMETER.
    assert_eq!(
        (c.local_repair_rule, c.local_add_ttl, c.max_repair_ttl),
        (LocalRepairRule::Rfc, 2, 10)
    );
    assert_eq!(c.local_repair_wait, None);
    assert_eq!(c.validate(), Ok(()));
}

#[test]
fn ns2_constants() {
    let c = AodvConfig::ns2();
    assert_eq!(c.active_route_timeout, SimDuration::from_secs(10));
    assert_eq!(c.allowed_hello_loss, 3);
    assert!(!c.hello && c.link_layer_detection);
    assert_eq!(c.my_route_timeout, SimDuration::from_secs(10));
    assert_eq!(c.net_diameter, 30);
    assert_eq!(c.node_traversal_time, SimDuration::from_millis(30));
    assert_eq!(c.net_traversal_time, SimDuration::from_millis(1800));
    assert_eq!(c.rreq_retries, 3);
    assert_eq!((c.ttl_start, c.ttl_increment, c.ttl_threshold), (5, 2, 7));
    assert_eq!(c.ring_rule, RingRule::Ns2);
    assert_eq!(c.rev_route_life, Some(SimDuration::from_secs(6)));
    assert_eq!(c.path_discovery_time, SimDuration::from_secs(6));
    assert_eq!(c.max_rreq_timeout, SimDuration::from_secs(10));
    assert_eq!((c.buffer_limit, c.buffer_timeout), (64, SimDuration::from_secs(30)));
    assert_eq!(c.broadcast_jitter, SimDuration::from_millis(10));
    // AODV_LOCAL_REPAIR, LOCAL_REPAIR_WAIT_TIME 0.15 s.
    assert!(c.local_repair);
    assert_eq!(c.local_repair_rule, LocalRepairRule::Ns2);
    assert_eq!(c.local_repair_wait, Some(SimDuration::from_millis(150)));
    assert_eq!(c.validate(), Ok(()));
}

#[test]
fn validate_rejects_unusable_values() {
    let bad = [
        AodvConfig {
            net_diameter: 300,
            ..AodvConfig::rfc()
        },
        AodvConfig {
            ttl_start: 0,
            ..AodvConfig::rfc()
        },
        AodvConfig {
            ttl_threshold: 35,
            ..AodvConfig::rfc()
        },
        AodvConfig {
            local_repair_wait: Some(SimDuration::ZERO),
            ..AodvConfig::rfc()
        },
        AodvConfig {
            active_route_timeout: SimDuration::ZERO,
            ..AodvConfig::rfc()
        },
    ];
    for c in bad {
        assert!(c.validate().is_err(), "{c:?}");
    }
    // Local repair (§6.12) is implemented: allowed.
    let c = AodvConfig {
        local_repair: true,
        ..AodvConfig::rfc()
    };
    assert_eq!(c.validate(), Ok(()));
}

// ---------------------------------------------------------------- route discovery (§6.3, §6.4)

#[test]
fn originator_buffers_and_broadcasts_rreq_with_ttl_start() {
    // RFC 3561 §6.3, §6.4: new own sequence number, RREQ ID, U flag, TTL = TTL_START.
    let mut n = node(1, cfg0());
    assert_eq!(n.route_output(ms(0), None, a(1), a(9), 7), RouteResult::Buffered);
    let out = tx(&mut n, ms(0));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Broadcast);
    assert_eq!(out[0].ttl, 1);
    let q = as_rreq(&out[0]);
    assert_eq!((q.orig, q.orig_seq, q.rreq_id, q.hop_count), (a(1), 1, 1, 0));
    assert_eq!(q.dst, a(9));
    assert!(q.unknown_seq);
    // Waits RING_TRAVERSAL_TIME = 2 · 40 ms · (1 + 2).
    assert_eq!(n.poll_timeout(), Some(ms(240)));
    // A second packet joins the discovery: no new RREQ.
    assert_eq!(n.route_output(ms(10), None, a(1), a(9), 8), RouteResult::Buffered);
    assert!(tx(&mut n, ms(10)).is_empty());
    assert_eq!(n.stats().discoveries_started, 1);
    assert_eq!(n.stats().data_buffered, 2);
}

/// Runs a discovery that never gets an answer; returns (TTL, send time) of each RREQ.
fn unanswered_discovery(cfg: AodvConfig) -> (Vec<(u8, SimTime)>, Aodv<u64>, SimTime) {
    let mut n = node(1, cfg);
    assert_eq!(n.route_output(ms(0), None, a(1), a(9), 7), RouteResult::Buffered);
    let mut sent = Vec::new();
    let mut now = ms(0);
    let mut ids = Vec::new();
    loop {
        for o in tx(&mut n, now) {
            let q = as_rreq(&o);
            ids.push(q.rreq_id);
            sent.push((o.ttl, now));
        }
        let evs = evs(&mut n);
        if !evs.is_empty() {
            assert_eq!(
                evs,
                vec![
                    AodvEvent::DiscoveryFailed { dst: a(9) },
                    AodvEvent::Drop {
                        packet: 7,
                        reason: DropReason::NoRoute
                    }
                ]
            );
            break;
        }
        now = n.poll_timeout().expect("discovery timer");
        n.on_timeout(now);
    }
    // RFC 3561 §6.3: each attempt has a new RREQ ID.
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    (sent, n, now)
}

#[test]
fn expanding_ring_then_retries_with_binary_backoff_then_failure() {
    // RFC 3561 §6.4: TTL 1, 3, 5, 7 each waiting RING_TRAVERSAL_TIME = 80 ms · (TTL + 2); then
    // §6.3: NET_DIAMETER with waits NET_TRAVERSAL_TIME · 1, 2, 4 (first + RREQ_RETRIES = 2).
    let (sent, n, end) = unanswered_discovery(cfg0());
    let ttls: Vec<u8> = sent.iter().map(|s| s.0).collect();
    assert_eq!(ttls, [1, 3, 5, 7, 35, 35, 35]);
    let times: Vec<u64> = sent.iter().map(|s| s.1 .0 / 1_000_000).collect();
    let waits = [240, 400, 560, 720, 2800, 5600];
    let mut t = 0;
    for (i, w) in waits.iter().enumerate() {
        assert_eq!(times[i], t);
        t += w;
    }
    assert_eq!(times[6], t);
    assert_eq!(end, ms(t + 11_200));
    let s = n.stats();
    assert_eq!(
        (s.rreq_originated, s.discoveries_failed, s.data_dropped_no_route),
        (7, 1, 1)
    );
    assert_eq!(n.own_seq(), 7, "§6.1: own sequence number incremented before each RREQ");
}

#[test]
fn ns2_schedule_is_linear_and_capped() {
    // ns-2 aodv.cc sendRequest: a destination never reached before is asked network-wide at
    // once (the entry's last hop count starts infinite); the k-th network-wide RREQ waits
    // k · 2 · 30 · 30 ms = k · 1.8 s, four of them (RREQ_RETRIES = 3).
    // Exact timers here; the purge grid is `ns2_routes_expire_and_rreqs_resend_on_the_purge_grid`.
    let mut c = AodvConfig::ns2();
    c.broadcast_jitter = SimDuration::ZERO;
    c.purge_interval = None;
    let (sent, _, end) = unanswered_discovery(c.clone());
    let ttls: Vec<u8> = sent.iter().map(|s| s.0).collect();
    assert_eq!(ttls, [30, 30, 30, 30]);
    let times: Vec<u64> = sent.iter().map(|s| s.1 .0 / 1_000_000).collect();
    assert_eq!(times, [0, 1800, 5400, 10800]);
    assert_eq!(end, ms(10800 + 7200));
    // MAX_RREQ_TIMEOUT caps the wait.
    c.max_rreq_timeout = SimDuration::from_secs(3);
    let (sent, _, _) = unanswered_discovery(c);
    let times: Vec<u64> = sent.iter().map(|s| s.1 .0 / 1_000_000).collect();
    assert_eq!(times, [0, 1800, 4800, 7800]);
}

/// Node 1 learns a route to 9 of `hops` hops (lifetime 1 s), sends a packet to 9 at 2 s, after
/// the route expired, and gets no answer: the TTL and send time (ms) of each RREQ.
fn rediscovery_after_expiry(cfg: AodvConfig, hops: u8) -> Vec<(u8, u64)> {
    let mut n = node(1, cfg);
    n.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, hops - 1, 1000)));
    assert_eq!(n.route_hops(ms(0), a(9)), Some(hops));
    let mut now = ms(2000);
    n.on_timeout(now);
    assert_eq!(n.route_output(now, None, a(1), a(9), 7), RouteResult::Buffered);
    let mut sent = Vec::new();
    while !evs(&mut n).contains(&AodvEvent::DiscoveryFailed { dst: a(9) }) {
        for o in tx(&mut n, now) {
            assert_eq!(as_rreq(&o).dst, a(9));
            sent.push((o.ttl, now.0 / 1_000_000 - 2000));
        }
        now = n.poll_timeout().expect("discovery timer");
        n.on_timeout(now);
    }
    sent
}

#[test]
fn ns2_ring_starts_from_the_old_hop_count_and_grows_while_below_the_threshold() {
    // ns-2 aodv.cc sendRequest: TTL = last + TTL_INCREMENT while last < TTL_THRESHOLD (7),
    // else NETWORK_DIAMETER; a new discovery's "last" is the hop count the route had. Ring
    // waits 2 · TTL · 30 ms, network-wide waits k · 1.8 s.
    let mut c = AodvConfig::ns2();
    c.broadcast_jitter = SimDuration::ZERO;
    c.purge_interval = None;
    let ttls = |h| -> Vec<u8> { rediscovery_after_expiry(c.clone(), h).iter().map(|s| s.0).collect() };
    assert_eq!(ttls(1), [3, 5, 7, 30, 30, 30, 30]);
    assert_eq!(ttls(2), [4, 6, 8, 30, 30, 30, 30]);
    assert_eq!(ttls(6), [8, 30, 30, 30, 30]);
    assert_eq!(ttls(7), [30, 30, 30, 30]);
    let times: Vec<u64> = rediscovery_after_expiry(c.clone(), 1).iter().map(|s| s.1).collect();
    assert_eq!(times, [0, 180, 480, 900, 2700, 6300, 11700]);
    // The RFC rule on the same history: at least TTL_START, and 8 is already beyond the
    // threshold.
    let rfc = AodvConfig {
        ring_rule: RingRule::Rfc,
        ..c
    };
    let ttls = |h| -> Vec<u8> { rediscovery_after_expiry(rfc.clone(), h).iter().map(|s| s.0).collect() };
    assert_eq!(ttls(1), [5, 7, 30, 30, 30, 30]);
    assert_eq!(ttls(6), [30, 30, 30, 30]);
}

#[test]
fn ns2_routes_expire_and_rreqs_resend_on_the_purge_grid() {
    // ns-2 aodv.cc rt_purge, every 0.5 s from 0: it takes down a route whose rt_expire < now,
    // and it calls sendRequest, which resends once rt_req_timeout <= now. rt_resolve uses any
    // route that is up, whatever its rt_expire.
    let mut c = AodvConfig::ns2();
    c.broadcast_jitter = SimDuration::ZERO;
    assert_eq!(c.purge_interval, Some(SimDuration::from_millis(500)));
    let mut n = node(1, c.clone());
    // Lifetime 1 s from 0.2 s: up until the purge at 1.5 s.
    n.on_message(ms(200), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 1, 1000)));
    assert_eq!(n.lookup(ms(1499), a(9)), Some(a(2)));
    assert_eq!(n.lookup(ms(1500), a(9)), None);
    // A lifetime ending on a purge instant survives that purge (not before now).
    n.on_message(ms(2000), a(3), 30, &Message::Rrep(rrep(8, 4, 1, 1, 500)));
    assert_eq!(n.lookup(ms(2999), a(8)), Some(a(3)));
    assert_eq!(n.lookup(ms(3000), a(8)), None);
    // A route used exactly every ACTIVE_ROUTE_TIMEOUT (10 s) never goes down; with exact
    // timers the use at 10 s finds it expired.
    for (grid, kept) in [(c.purge_interval, true), (None, false)] {
        let mut n = node(
            1,
            AodvConfig {
                purge_interval: grid,
                ..c.clone()
            },
        );
        n.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 1, 10_000)));
        let fwd = |r: RouteResult<u64>| matches!(r, RouteResult::Forward { .. });
        assert!(fwd(n.route_output(ms(100), None, a(1), a(9), 1)));
        assert_eq!(fwd(n.route_output(ms(10_100), None, a(1), a(9), 2)), kept);
    }
    // Unanswered discovery: the network-wide RREQs wait 1.8, 3.6, 5.4 and 7.2 s, each
    // rounded up to the next purge.
    let (sent, _, end) = unanswered_discovery(c);
    let times: Vec<u64> = sent.iter().map(|s| s.1 .0 / 1_000_000).collect();
    assert_eq!(times, [0, 2000, 6000, 11500]);
    assert_eq!(end, ms(19_000));
}

#[test]
fn ns2_expiry_increments_the_sequence_number_asked_for() {
    // ns-2 aodv.cc rt_purge: rt_seqno++ on a route that expired; sendRequest puts rt_seqno in
    // the RREQ. RFC 3561 §6.11 increments only on breaks, so the next RREQ asks for seq 4.
    let mut c = AodvConfig::ns2();
    c.broadcast_jitter = SimDuration::ZERO;
    for (bump, want) in [(true, 5), (false, 4)] {
        let mut n = node(
            1,
            AodvConfig {
                expiry_increments_seq: bump,
                ..c.clone()
            },
        );
        n.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 1, 1000)));
        // The sweep has not run yet when the next packet finds the route gone.
        assert_eq!(n.route_output(ms(3000), None, a(1), a(9), 7), RouteResult::Buffered);
        let out = tx(&mut n, ms(3000));
        let q = as_rreq(&out[0]);
        assert_eq!((q.dst, q.dst_seq, q.unknown_seq), (a(9), want, false));
    }
}

#[test]
fn ns2_destination_always_answers_with_a_new_even_sequence_number() {
    // ns-2 aodv.cc recvRequest: seqno = max(seqno, rq_dst_seqno) + 1, made even;
    // sendRequest: seqno += 2. RFC 3561 §6.6.1: unchanged unless the RREQ asks for more.
    let mut c = AodvConfig::ns2();
    c.broadcast_jitter = SimDuration::ZERO;
    let answer = |c: &AodvConfig, asked: &[Option<u32>]| -> Vec<u32> {
        let mut n = node(9, c.clone());
        let mut seqs = Vec::new();
        for (i, &dst_seq) in asked.iter().enumerate() {
            let id = i as u32 + 1;
            n.on_message(
                ms(10 * id as u64),
                a(2),
                30,
                &Message::Rreq(rreq(1, id, id, 9, dst_seq, 0)),
            );
            let out = tx(&mut n, ms(10 * id as u64));
            seqs.push(as_rrep(&out[0]).dst_seq);
        }
        seqs
    };
    let asked = [None, Some(2), Some(5), Some(5), Some(20)];
    assert_eq!(answer(&c, &asked), [2, 4, 6, 8, 22]);
    let rfc = AodvConfig {
        own_seq_rule: OwnSeqRule::Rfc,
        ..c.clone()
    };
    assert_eq!(answer(&rfc, &asked), [0, 2, 5, 5, 20]);
    // Own RREQs: +2 from an even number, to the next even number from an odd one.
    let mut n = node(1, c);
    for (dst, want) in [(7u8, 2u32), (8, 4)] {
        assert_eq!(n.route_output(ms(0), None, a(1), a(dst), 1), RouteResult::Buffered);
        assert_eq!(as_rreq(&tx(&mut n, ms(0))[0]).orig_seq, want);
    }
}

#[test]
fn rreq_rate_limit_postpones_rreqs() {
    // RFC 3561 §6.3: at most RREQ_RATELIMIT RREQs per second.
    let mut c = cfg0();
    c.rreq_ratelimit = 2;
    let mut n = node(1, c);
    for d in 10..13 {
        n.route_output(ms(0), None, a(1), a(d), d as u64);
    }
    assert_eq!(tx(&mut n, ms(0)).len(), 2);
    assert_eq!(n.poll_timeout(), Some(ms(240)), "ring timers of the two sent first");
    n.on_timeout(ms(240));
    // The two ring retries must wait too: the window is full until 1 s.
    assert!(tx(&mut n, ms(240)).is_empty());
    n.on_timeout(ms(1000));
    assert_eq!(tx(&mut n, ms(1000)).len(), 2);
}

#[test]
fn rreq_reply_completes_discovery_and_releases_packets() {
    // RFC 3561 §6.7: the RREP creates the forward route at the originator.
    let mut n = node(1, cfg0());
    n.route_output(ms(0), None, a(1), a(9), 7);
    n.route_output(ms(1), None, a(1), a(8), 8);
    n.route_output(ms(2), None, a(1), a(9), 9);
    tx(&mut n, ms(2));
    n.on_message(ms(30), a(2), 34, &Message::Rrep(rrep(9, 4, 1, 2, 6000)));
    assert!(tx(&mut n, ms(30)).is_empty(), "the originator does not forward");
    assert_eq!(
        evs(&mut n),
        vec![
            AodvEvent::RouteFound {
                dst: a(9),
                latency: SimDuration::from_millis(30)
            },
            AodvEvent::Release {
                packet: 7,
                next_hop: a(2)
            },
            AodvEvent::Release {
                packet: 9,
                next_hop: a(2)
            },
        ]
    );
    assert_eq!(n.lookup(ms(30), a(9)), Some(a(2)));
    assert_eq!(n.route_hops(ms(30), a(9)), Some(3));
    // The neighbour route to the sender of the RREP (§6.7) is one hop.
    assert_eq!(n.route_hops(ms(30), a(2)), Some(1));
    // Later packets go straight out.
    assert_eq!(
        n.route_output(ms(31), None, a(1), a(9), 10),
        RouteResult::Forward {
            next_hop: a(2),
            packet: 10
        }
    );
    assert_eq!(n.stats().discoveries_succeeded, 1);
}

// ---------------------------------------------------------------- RREQ processing (§6.5)

#[test]
fn intermediate_creates_reverse_route_and_rebroadcasts_after_jitter() {
    // RFC 3561 §6.5: reverse route, hop count + 1, TTL − 1, after a random jitter.
    let mut c = cfg0();
    c.broadcast_jitter = SimDuration::from_millis(10);
    let mut n = node(3, c);
    n.on_message(ms(100), a(2), 4, &Message::Rreq(rreq(1, 1, 1, 9, Some(5), 1)));
    assert_eq!(n.lookup(ms(100), a(1)), Some(a(2)));
    assert_eq!(n.route_hops(ms(100), a(1)), Some(2));
    assert_eq!(n.route_hops(ms(100), a(2)), Some(1), "route to the previous hop");
    assert!(tx(&mut n, ms(100)).is_empty(), "held for the jitter");
    let at = n.poll_timeout().unwrap();
    assert!(at > ms(100) && at < ms(110), "{at}");
    assert!(tx(&mut n, SimTime(at.0 - 1)).is_empty());
    let out = tx(&mut n, at);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Broadcast, 3));
    let q = as_rreq(&out[0]);
    assert_eq!(*q, rreq(1, 1, 1, 9, Some(5), 2));
    assert_eq!(n.stats().rreq_forwarded, 1);
    // Reverse route lifetime: 2·NET_TRAVERSAL_TIME − 2·2·NODE_TRAVERSAL_TIME = 5600 − 160 ms.
    assert!(n.lookup(ms(100 + 5439), a(1)).is_some());
    assert!(n.lookup(ms(100 + 5440), a(1)).is_none());
}

#[test]
fn duplicate_rreq_is_discarded() {
    // RFC 3561 §6.5: only the first copy of (originator, RREQ ID) is processed.
    let mut n = node(3, cfg0());
    n.on_message(ms(0), a(2), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    n.on_message(ms(1), a(4), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    n.on_message(ms(2), a(5), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 0)));
    let out = tx(&mut n, ms(2));
    assert_eq!(out.len(), 1);
    assert_eq!(
        n.lookup(ms(2), a(1)),
        Some(a(2)),
        "the first copy made the reverse route"
    );
    assert_eq!(n.stats().rreq_duplicates, 2);
    // But the previous hops still got routes (§6.5 first step).
    assert_eq!(n.lookup(ms(2), a(5)), Some(a(5)));
    // A new RREQ ID is processed; after PATH_DISCOVERY_TIME the old ID is forgotten.
    n.on_message(ms(3), a(2), 5, &Message::Rreq(rreq(1, 2, 2, 9, None, 1)));
    assert_eq!(tx(&mut n, ms(3)).len(), 1);
    n.on_message(ms(5600), a(2), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    assert_eq!(tx(&mut n, ms(5600)).len(), 1);
}

#[test]
fn rreq_with_ttl_one_is_not_forwarded() {
    // RFC 3561 §6.5: rebroadcast only if the incoming TTL is larger than 1.
    let mut n = node(3, cfg0());
    n.on_message(ms(0), a(2), 1, &Message::Rreq(rreq(1, 1, 1, 9, None, 0)));
    assert!(tx(&mut n, ms(0)).is_empty());
    assert_eq!(n.lookup(ms(0), a(1)), Some(a(2)), "the reverse route is still made");
}

#[test]
fn destination_answers_with_rrep_unicast_to_previous_hop() {
    // RFC 3561 §6.6.1: hop count 0, MY_ROUTE_TIMEOUT, own sequence number raised to the RREQ's.
    let mut n = node(9, cfg0());
    n.on_message(ms(0), a(3), 3, &Message::Rreq(rreq(1, 1, 1, 9, Some(5), 2)));
    let out = tx(&mut n, ms(0));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(3)));
    assert_eq!(*as_rrep(&out[0]), rrep(9, 5, 1, 0, 6000));
    assert_eq!(n.own_seq(), 5);
    assert_eq!(n.route_hops(ms(0), a(1)), Some(3));
    // An RREQ with an older or unknown destination sequence number leaves it alone.
    n.on_message(ms(1), a(3), 3, &Message::Rreq(rreq(1, 2, 2, 9, Some(2), 2)));
    n.on_message(ms(2), a(3), 3, &Message::Rreq(rreq(1, 3, 3, 9, None, 2)));
    let out = tx(&mut n, ms(2));
    assert_eq!(out.iter().map(|o| as_rrep(o).dst_seq).collect::<Vec<_>>(), [5, 5]);
    // Duplicates are not answered twice.
    n.on_message(ms(3), a(4), 3, &Message::Rreq(rreq(1, 3, 3, 9, None, 2)));
    assert!(tx(&mut n, ms(3)).is_empty());
    assert_eq!(n.stats().rrep_originated, 3);
}

/// Node 2 with a route to 9 via 3 (2 hops, seq 10) learned from an RREP for originator 7.
fn node_with_route_to_9() -> Aodv<u64> {
    route_to_9(cfg0())
}

/// [`node_with_route_to_9`] with configuration `cfg`: 7 is the precursor of the routes to 9 and
/// to 3.
fn route_to_9(cfg: AodvConfig) -> Aodv<u64> {
    let mut n = node(2, cfg);
    n.on_message(ms(0), a(7), 5, &Message::Rreq(rreq(7, 1, 1, 9, None, 0)));
    tx(&mut n, ms(0));
    n.on_message(ms(10), a(3), 30, &Message::Rrep(rrep(9, 10, 7, 1, 6000)));
    tx(&mut n, ms(10));
    assert_eq!(n.route_hops(ms(10), a(9)), Some(2));
    n
}

#[test]
fn intermediate_node_with_fresh_route_answers() {
    // RFC 3561 §6.6.2: the RREP carries its own hop count, sequence number and the remaining
    // lifetime; precursors are recorded in both directions.
    let mut n = node_with_route_to_9();
    n.on_message(ms(1010), a(1), 5, &Message::Rreq(rreq(1, 1, 1, 9, Some(8), 0)));
    let out = tx(&mut n, ms(1010));
    assert_eq!(out.len(), 1, "no rebroadcast");
    assert_eq!(out[0].dest, LinkDest::Unicast(a(1)));
    assert_eq!(*as_rrep(&out[0]), rrep(9, 10, 1, 2, 5000));
    assert!(n.precursors[&a(9)].contains(&a(1)));
    assert!(n.precursors[&a(1)].contains(&a(3)));
    // Equal sequence numbers are fresh enough; the unknown flag too.
    n.on_message(ms(1011), a(4), 5, &Message::Rreq(rreq(4, 1, 1, 9, Some(10), 0)));
    n.on_message(ms(1012), a(5), 5, &Message::Rreq(rreq(5, 1, 1, 9, None, 0)));
    assert_eq!(tx(&mut n, ms(1012)).len(), 2);
}

#[test]
fn intermediate_node_does_not_answer_when_d_flag_set_or_route_stale() {
    // RFC 3561 §6.5, §6.6: D flag, or a newer sequence number wanted → rebroadcast.
    let mut n = node_with_route_to_9();
    let d = Rreq {
        dest_only: true,
        ..rreq(1, 1, 1, 9, Some(8), 0)
    };
    n.on_message(ms(20), a(1), 5, &Message::Rreq(d));
    let out = tx(&mut n, ms(20));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Broadcast);
    // The forwarded RREQ carries max(RREQ's, own) destination sequence number.
    assert_eq!(as_rreq(&out[0]).dst_seq, 10);
    n.on_message(ms(21), a(1), 5, &Message::Rreq(rreq(1, 2, 2, 9, Some(11), 0)));
    let out = tx(&mut n, ms(21));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Broadcast);
    assert_eq!(as_rreq(&out[0]).dst_seq, 11);
}

#[test]
fn gratuitous_rrep_goes_to_the_destination() {
    // RFC 3561 §6.6.3: with G set, the destination learns the route to the originator.
    let mut n = node_with_route_to_9();
    let g = Rreq {
        gratuitous: true,
        ..rreq(1, 1, 33, 9, Some(8), 1)
    };
    n.on_message(ms(20), a(4), 5, &Message::Rreq(g));
    let out = tx(&mut n, ms(20));
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(4)));
    assert_eq!(out[1].dest, LinkDest::Unicast(a(3)));
    let p = as_rrep(&out[1]);
    assert_eq!((p.dst, p.dst_seq, p.orig, p.hop_count), (a(1), 33, a(9), 2));
}

#[test]
fn blacklisted_neighbour_rreqs_are_ignored_until_timeout() {
    // RFC 3561 §6.8: an RREP to 3 failed → RREQs from 3 ignored for BLACKLIST_TIMEOUT.
    let mut n = node(2, cfg0());
    n.on_link_failure(ms(0), a(3), true);
    evs(&mut n);
    n.on_message(ms(10), a(3), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    assert!(tx(&mut n, ms(10)).is_empty());
    assert_eq!(n.lookup(ms(10), a(1)), None);
    assert_eq!(n.stats().rreq_blacklisted, 1);
    // Another neighbour's copy is fine.
    n.on_message(ms(11), a(4), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    assert_eq!(tx(&mut n, ms(11)).len(), 1);
    // After BLACKLIST_TIMEOUT (5.6 s) node 3 is heard again.
    n.on_message(ms(5600), a(3), 5, &Message::Rreq(rreq(1, 2, 2, 9, None, 1)));
    assert_eq!(tx(&mut n, ms(5600)).len(), 1);
}

/// The `ns2` preset without jitter: outputs come out at once.
fn ns2_0() -> AodvConfig {
    let mut c = AodvConfig::ns2();
    c.broadcast_jitter = SimDuration::ZERO;
    c
}

/// ns-2.35's `rt_ll_failed` drops a control packet the MAC could not deliver: no blacklist,
/// the neighbour's RREQs are processed at once.
#[test]
fn ns2_a_failed_rrep_blacklists_nobody() {
    let mut n = node(2, ns2_0());
    assert_eq!(AodvConfig::ns2().blacklist_timeout, SimDuration::ZERO);
    n.on_link_failure(ms(0), a(3), true);
    assert!(evs(&mut n).is_empty());
    n.on_message(ms(10), a(3), 30, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    assert_eq!(tx(&mut n, ms(10)).len(), 1);
    assert_eq!(n.lookup(ms(10), a(1)), Some(a(3)));
    assert_eq!(n.stats().rreq_blacklisted, 0);
}

/// ns-2.35's `recvRequest` and `recvReply` install the reverse and forward routes only, no
/// route to the neighbour the message came from (RFC 3561 §6.5, §6.7 would).
#[test]
fn ns2_rreqs_and_rreps_make_no_route_to_the_previous_hop() {
    let mut n = node(2, ns2_0());
    n.on_message(ms(0), a(7), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 2)));
    tx(&mut n, ms(0));
    assert_eq!(n.lookup(ms(0), a(1)), Some(a(7)), "the reverse route");
    assert_eq!(n.lookup(ms(0), a(7)), None, "no route to the previous hop");
    n.on_message(ms(10), a(3), 30, &Message::Rrep(rrep(9, 10, 1, 1, 6000)));
    tx(&mut n, ms(10));
    assert_eq!(n.lookup(ms(10), a(9)), Some(a(3)), "the forward route");
    assert_eq!(n.lookup(ms(10), a(3)), None, "no route to the previous hop");
    // The RFC preset makes both.
    let mut r = node(2, cfg0());
    r.on_message(ms(0), a(7), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 2)));
    assert_eq!(r.route_hops(ms(0), a(7)), Some(1));
}

/// ns-2.35's `forward` refreshes the route a packet takes and no other; a packet for this
/// node refreshes nothing (RFC 3561 §6.2 would refresh the routes to the source, the
/// previous hop and the next hop).
#[test]
fn ns2_data_refreshes_only_the_route_it_takes() {
    // Routes to 1 (via 7, the reverse route) and to 9 (via 3); forwarding the RREP at 10 ms
    // uses the reverse route, which then lives ACTIVE_ROUTE_TIMEOUT: to 10.01 s, taken down
    // by the purge at 10.5 s. Data 1 → 9 is forwarded at 5 s.
    let forwarding = |c| {
        let mut n = node(2, c);
        n.on_message(ms(0), a(7), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 2)));
        tx(&mut n, ms(0));
        n.on_message(ms(10), a(3), 30, &Message::Rrep(rrep(9, 10, 1, 1, 6000)));
        tx(&mut n, ms(10));
        assert!(matches!(
            n.route_output(ms(5000), Some(a(7)), a(1), a(9), 1),
            RouteResult::Forward { .. }
        ));
        n
    };
    // With a packet from 1 delivered here too, the route to 9 lives 10 s from then; the
    // reverse route to 1 is not refreshed.
    let mut n = forwarding(ns2_0());
    n.on_data_delivered(ms(5000), a(7), a(1));
    assert_eq!(n.lookup(ms(10_400), a(1)), Some(a(7)));
    assert_eq!(n.lookup(ms(10_600), a(1)), None);
    assert_eq!(n.lookup(ms(14_900), a(9)), Some(a(3)));
    // Under the RFC's rule the packet forwarded at 5 s refreshes the route to its source 1
    // too (§6.2): still up at 7.9 s, before 5 s + ACTIVE_ROUTE_TIMEOUT (3 s), gone after.
    let r = forwarding(cfg0());
    assert_eq!(r.lookup(ms(7_900), a(1)), Some(a(7)));
    assert_eq!(r.lookup(ms(8_100), a(1)), None);
}

// ---------------------------------------------------------------- RREP forwarding (§6.7)

#[test]
fn rrep_forwarding_adds_precursors() {
    let mut n = node(2, cfg0());
    n.on_message(ms(0), a(1), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 0)));
    assert_eq!(tx(&mut n, ms(0)).len(), 1);
    n.on_message(ms(10), a(3), 33, &Message::Rrep(rrep(9, 4, 1, 1, 6000)));
    let out = tx(&mut n, ms(10));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Unicast(a(1)), 32));
    assert_eq!(*as_rrep(&out[0]), rrep(9, 4, 1, 2, 6000));
    assert_eq!(n.precursors[&a(9)], [a(1)]);
    assert_eq!(n.precursors[&a(1)], [a(3)]);
    assert_eq!(n.precursors[&a(3)], [a(1)]);
    // The reverse route lives at least ACTIVE_ROUTE_TIMEOUT from now.
    assert!(n.lookup(ms(3009), a(1)).is_some());
    // A second RREP that is not better is neither taken nor forwarded.
    n.on_message(ms(11), a(4), 33, &Message::Rrep(rrep(9, 4, 1, 3, 6000)));
    assert!(tx(&mut n, ms(11)).is_empty());
    assert_eq!(n.lookup(ms(11), a(9)), Some(a(3)));
    // A newer sequence number is (§6.2), even if longer.
    n.on_message(ms(12), a(4), 33, &Message::Rrep(rrep(9, 5, 1, 3, 6000)));
    assert_eq!(tx(&mut n, ms(12)).len(), 1);
    assert_eq!(n.lookup(ms(12), a(9)), Some(a(4)));
    assert_eq!(n.stats().rrep_forwarded, 2);
}

#[test]
fn rrep_ack_requested_and_missing_ack_blacklists() {
    // RFC 3561 §6.7, §6.8: A flag → RREP-ACK to the sender; no RREP-ACK within NEXT_HOP_WAIT
    // → the next hop is blacklisted.
    let mut c = cfg0();
    c.rrep_ack = true;
    let mut n = node(9, c);
    n.on_message(ms(0), a(3), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    let out = tx(&mut n, ms(0));
    assert!(as_rrep(&out[0]).ack_required);
    assert_eq!(n.poll_timeout(), Some(ms(50)));
    n.on_timeout(ms(50));
    n.on_message(ms(60), a(3), 5, &Message::Rreq(rreq(1, 2, 2, 9, None, 1)));
    assert!(tx(&mut n, ms(60)).is_empty(), "3 is blacklisted");
    // With the ACK in time nothing is blacklisted.
    let mut c = cfg0();
    c.rrep_ack = true;
    let mut n = node(9, c);
    n.on_message(ms(0), a(3), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    tx(&mut n, ms(0));
    n.on_message(ms(5), a(3), 1, &Message::RrepAck);
    n.on_timeout(ms(50));
    n.on_message(ms(60), a(3), 5, &Message::Rreq(rreq(1, 2, 2, 9, None, 1)));
    assert_eq!(tx(&mut n, ms(60)).len(), 1);
    // The receiver of an RREP with A acknowledges it.
    let mut m = node(1, cfg0());
    let p = Rrep {
        ack_required: true,
        ..rrep(9, 1, 1, 1, 6000)
    };
    m.on_message(ms(0), a(2), 30, &Message::Rrep(p));
    let out = tx(&mut m, ms(0));
    assert_eq!(
        out,
        [Outgoing {
            dest: LinkDest::Unicast(a(2)),
            ttl: 1,
            msg: Message::RrepAck
        }]
    );
}

/// Node 3 heard 1's first RREQ via 2 at 0 s (reverse route until 5.44 s); at 7 s, with that
/// route expired, 1's next RREQ comes via 4; then the RREP for it from 5, 9's data back
/// towards 1 from 5, and 1's data towards 9 from 4.
fn reverse_route_after_expiry(ns3: bool) -> (Aodv<u64>, Vec<Outgoing>, RouteResult<u64>, RouteResult<u64>) {
    let mut c = cfg0();
    c.rreq_leaves_reverse_route_invalid = ns3;
    let mut n = node(3, c);
    n.on_message(ms(0), a(2), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 1)));
    tx(&mut n, ms(0));
    assert_eq!(n.lookup(ms(5439), a(1)), Some(a(2)));
    assert_eq!(n.lookup(ms(5440), a(1)), None);
    n.on_message(ms(7000), a(4), 5, &Message::Rreq(rreq(1, 2, 2, 9, None, 0)));
    tx(&mut n, ms(7000));
    n.on_message(ms(7010), a(5), 33, &Message::Rrep(rrep(9, 4, 1, 1, 6000)));
    let out = tx(&mut n, ms(7010));
    let back = n.route_output(ms(7020), Some(a(5)), a(9), a(1), 7);
    let forth = n.route_output(ms(7030), Some(a(4)), a(1), a(9), 8);
    (n, out, back, forth)
}

#[test]
fn an_rreq_revalidates_an_expired_reverse_route_unless_configured_as_ns3() {
    // RFC 3561 §6.5: the RREQ creates or updates the reverse route, a valid one.
    let (n, out, back, forth) = reverse_route_after_expiry(false);
    assert_eq!(n.lookup(ms(7000), a(1)), Some(a(4)));
    assert_eq!(n.route_hops(ms(7000), a(1)), Some(1));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(4)));
    assert_eq!(
        back,
        RouteResult::Forward {
            next_hop: a(4),
            packet: 7
        }
    );
    assert_eq!(
        forth,
        RouteResult::Forward {
            next_hop: a(5),
            packet: 8
        }
    );

    // ns-3 (RecvRequest updates the entry without its flag; RecvReply forwards by LookupRoute):
    // the entry takes the new next hop and sequence number but stays invalid; the RREP still
    // goes to 4 and 1's data still reaches 9, but 9's packets back to 1 are dropped with an
    // RERR to 5.
    let (mut n, out, back, forth) = reverse_route_after_expiry(true);
    assert_eq!(n.lookup(ms(7000), a(1)), None);
    let r = n.routes.get(&a(1)).expect("the entry is kept");
    assert_eq!((r.next_hop, r.hops, r.seq, r.valid), (a(4), 1, 2, false));
    assert_eq!(r.expiry, ms(5440 + 15_000), "deleted DELETE_PERIOD after it expired");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(4)));
    assert_eq!(*as_rrep(&out[0]), rrep(9, 4, 1, 2, 6000));
    assert_eq!(
        back,
        RouteResult::Drop {
            packet: 7,
            reason: DropReason::NoRoute
        }
    );
    let rerr = tx(&mut n, ms(7020));
    assert_eq!(rerr.len(), 1);
    assert_eq!(rerr[0].dest, LinkDest::Unicast(a(5)));
    assert_eq!(as_rerr(&rerr[0]).unreachable, [(a(1), 2)]);
    assert_eq!(
        forth,
        RouteResult::Forward {
            next_hop: a(5),
            packet: 8
        }
    );

    // Once the entry is deleted, the next RREQ creates a valid reverse route again.
    let mut now = ms(7030);
    while n.routes.contains_key(&a(1)) {
        now = n.poll_timeout().expect("a deletion is due");
        assert!(now <= ms(20_440));
        n.on_timeout(now);
    }
    n.on_message(now, a(6), 5, &Message::Rreq(rreq(1, 3, 3, 9, None, 0)));
    assert_eq!(n.lookup(now, a(1)), Some(a(6)));
}

// ---------------------------------------------------------------- route lifetimes (§6.2)

#[test]
fn route_lifetime_expiry_refresh_and_deletion() {
    let mut n = node(1, cfg0());
    n.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 2, 1000)));
    assert_eq!(n.lookup(ms(999), a(9)), Some(a(2)));
    assert_eq!(
        n.lookup(ms(1000), a(9)),
        None,
        "§6.2: invalid once the lifetime is over"
    );
    // Using the route refreshes it to now + ACTIVE_ROUTE_TIMEOUT (§6.2), next hop too.
    assert!(matches!(
        n.route_output(ms(900), None, a(1), a(9), 1),
        RouteResult::Forward { .. }
    ));
    assert_eq!(n.lookup(ms(3899), a(9)), Some(a(2)));
    assert_eq!(n.lookup(ms(3899), a(2)), Some(a(2)));
    assert_eq!(n.lookup(ms(3900), a(9)), None);
    // The sweep invalidates it and deletes it DELETE_PERIOD later (§6.11).
    let mut now = ms(0);
    while let Some(t) = n.poll_timeout() {
        now = t;
        n.on_timeout(t);
        if !n.routes.contains_key(&a(9)) {
            break;
        }
        assert!(t < ms(30_000));
    }
    assert_eq!(now, ms(3900 + 15_000));
    // The invalid entry's sequence number was still used meanwhile: not asserted here, see
    // `rerr_increments_seq_used_by_next_discovery`.
}

// ---------------------------------------------------------------- RERR (§6.11)

/// Node 2 forwarding RREPs for 9 (via 3, asked by 1) and for 8 (via 4, asked by 5).
fn node_with_two_flows() -> Aodv<u64> {
    node_with_two_flows_keeping(false)
}

/// `node_with_two_flows` with `invalidation_keeps_seq` set as given.
fn node_with_two_flows_keeping(keep: bool) -> Aodv<u64> {
    let mut c = cfg0();
    c.invalidation_keeps_seq = keep;
    let mut n = node(2, c);
    n.on_message(ms(0), a(1), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 0)));
    n.on_message(ms(0), a(5), 5, &Message::Rreq(rreq(5, 1, 1, 8, None, 0)));
    n.on_message(ms(5), a(3), 30, &Message::Rrep(rrep(9, 10, 1, 1, 6000)));
    n.on_message(ms(5), a(4), 30, &Message::Rrep(rrep(8, 20, 5, 0, 6000)));
    assert_eq!(tx(&mut n, ms(5)).len(), 4);
    n
}

#[test]
fn link_failure_sends_rerr_to_precursors_and_reports_link_broken() {
    // RFC 3561 §6.11 case (i): sequence numbers incremented, routes invalid, RERR unicast to the
    // only precursor.
    let mut n = node_with_two_flows();
    n.on_link_failure(ms(100), a(3), false);
    assert_eq!(evs(&mut n), vec![AodvEvent::LinkBroken { next_hop: a(3) }]);
    assert_eq!(n.lookup(ms(100), a(9)), None);
    assert_eq!(n.lookup(ms(100), a(3)), None);
    assert_eq!(n.lookup(ms(100), a(8)), Some(a(4)), "other next hops untouched");
    let out = tx(&mut n, ms(100));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Unicast(a(1)), 1));
    let e = as_rerr(&out[0]);
    assert!(!e.no_delete);
    // 9 with its sequence number incremented; the neighbour 3 itself (no valid seq) too.
    assert_eq!(sorted(e.unreachable.clone()), [(a(3), 0), (a(9), 11)]);
    assert_eq!(n.routes[&a(9)].seq, 11);
    assert_eq!(n.stats().rerr_originated, 1);
}

/// ns-2.35 `handle_link_failure` (via `nb_delete` from `rt_ll_failed`): every route through
/// the lost neighbour goes down with its sequence number incremented and is listed, whether
/// or not it has precursors, so a source reports too; the RERR is broadcast at once.
#[test]
fn ns2_link_failure_broadcasts_every_route_through_the_neighbour_at_once() {
    let mut c = ns2_0();
    c.local_repair = false;
    c.broadcast_jitter = SimDuration::from_millis(10);
    let mut n = node(1, c);
    // A source (node 1) with a route to 9 via 3, learnt from an RREP: no precursors.
    n.on_message(ms(5), a(3), 30, &Message::Rrep(rrep(9, 10, 1, 1, 6000)));
    assert_eq!(n.lookup(ms(5), a(9)), Some(a(3)));
    n.on_link_failure(ms(100), a(3), false);
    assert_eq!(evs(&mut n), vec![AodvEvent::LinkBroken { next_hop: a(3) }]);
    let out = tx(&mut n, ms(100));
    assert_eq!(out.len(), 1, "no jitter");
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Broadcast, 1));
    assert_eq!(as_rerr(&out[0]).unreachable, [(a(9), 11)]);
    // Under the RFC's rule a source with no precursors tells nobody.
    let mut r = node(1, cfg0());
    r.on_message(ms(5), a(3), 30, &Message::Rrep(rrep(9, 10, 1, 1, 6000)));
    r.on_link_failure(ms(100), a(3), false);
    assert!(tx(&mut r, ms(100)).is_empty());
}

/// ns-2.35 `recvError`: an RERR takes down a route through its sender only if the route's
/// sequence number is not newer than the RERR's.
#[test]
fn ns2_rerr_with_an_older_sequence_number_leaves_a_newer_route() {
    let mut n = node(2, ns2_0());
    n.on_message(ms(5), a(3), 30, &Message::Rrep(rrep(9, 10, 2, 1, 6000)));
    let old = Rerr {
        no_delete: false,
        unreachable: vec![(a(9), 8)],
    };
    n.on_message(ms(100), a(3), 1, &Message::Rerr(old));
    assert_eq!(n.lookup(ms(100), a(9)), Some(a(3)));
    let new = Rerr {
        no_delete: false,
        unreachable: vec![(a(9), 11)],
    };
    n.on_message(ms(110), a(3), 1, &Message::Rerr(new));
    assert_eq!(n.lookup(ms(110), a(9)), None);
}

#[test]
fn link_failure_with_several_precursors_broadcasts_the_rerr() {
    // RFC 3561 §6.11: more than one neighbour to tell → broadcast, TTL 1.
    let mut n = node_with_two_flows();
    n.on_message(ms(50), a(6), 5, &Message::Rreq(rreq(6, 1, 1, 9, Some(10), 0)));
    let out = tx(&mut n, ms(50));
    assert_eq!(as_rrep(&out[0]).dst, a(9), "intermediate reply adds 6 as a precursor");
    n.on_link_failure(ms(100), a(3), false);
    let out = tx(&mut n, ms(100));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Broadcast, 1));
}

#[test]
fn rerr_propagates_only_to_affected_precursors() {
    // RFC 3561 §6.11 case (iii): only routes whose next hop sent the RERR are invalidated, and
    // only their precursors hear about it.
    let mut n = node_with_two_flows();
    let e = Rerr {
        no_delete: false,
        unreachable: vec![(a(9), 12), (a(8), 30)],
    };
    n.on_message(ms(100), a(3), 1, &Message::Rerr(e.clone()));
    assert_eq!(n.lookup(ms(100), a(9)), None);
    assert_eq!(n.routes[&a(9)].seq, 12, "sequence number copied from the RERR");
    assert_eq!(n.lookup(ms(100), a(8)), Some(a(4)), "8 is not reached through 3");
    let out = tx(&mut n, ms(100));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(1)));
    assert_eq!(as_rerr(&out[0]).unreachable, [(a(9), 12)]);
    assert_eq!(n.stats().rerr_forwarded, 1);
    // Repeating it changes nothing (the route is already invalid).
    n.on_message(ms(101), a(3), 1, &Message::Rerr(e));
    assert!(tx(&mut n, ms(101)).is_empty());
    // An RERR about 8 from a node that is not its next hop is ignored.
    let e = Rerr {
        no_delete: false,
        unreachable: vec![(a(8), 30)],
    };
    n.on_message(ms(102), a(7), 1, &Message::Rerr(e));
    assert_eq!(n.lookup(ms(102), a(8)), Some(a(4)));
    assert!(tx(&mut n, ms(102)).is_empty());
}

#[test]
fn forwarding_without_route_drops_and_sends_rerr() {
    // RFC 3561 §6.11 case (ii).
    let mut n = node(2, cfg0());
    let r = n.route_output(ms(0), Some(a(1)), a(1), a(9), 5);
    assert_eq!(
        r,
        RouteResult::Drop {
            packet: 5,
            reason: DropReason::NoRoute
        }
    );
    let out = tx(&mut n, ms(0));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(1)));
    assert_eq!(as_rerr(&out[0]).unreachable, [(a(9), 0)]);
    assert_eq!(n.stats().data_dropped_no_route, 1);
    assert_eq!(
        n.stats().discoveries_started,
        0,
        "no discovery for someone else's packet"
    );
}

#[test]
fn rerr_rate_limit() {
    // RFC 3561 §6.11: at most RERR_RATELIMIT RERRs per second.
    let mut c = cfg0();
    c.rerr_ratelimit = 3;
    let mut n = node(2, c);
    for i in 0..5 {
        n.route_output(ms(i), Some(a(1)), a(1), a(9), i);
    }
    assert_eq!(tx(&mut n, ms(5)).len(), 3);
    assert_eq!(n.stats().rerr_rate_limited, 2);
    n.route_output(ms(1000), Some(a(1)), a(1), a(9), 9);
    assert_eq!(tx(&mut n, ms(1000)).len(), 1);
}

#[test]
fn rerr_increments_seq_used_by_next_discovery() {
    // RFC 3561 §6.11, §6.3: after an RERR the next RREQ asks for the incremented number, so an
    // intermediate node with the old route cannot answer.
    let mut n = node(1, cfg0());
    n.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 2, 6000)));
    let e = Rerr {
        no_delete: false,
        unreachable: vec![(a(9), 5)],
    };
    n.on_message(ms(10), a(2), 1, &Message::Rerr(e));
    assert!(tx(&mut n, ms(10)).is_empty(), "no precursors: nothing to propagate");
    assert_eq!(n.route_output(ms(20), None, a(1), a(9), 1), RouteResult::Buffered);
    let out = tx(&mut n, ms(20));
    let q = as_rreq(&out[0]);
    assert!(!q.unknown_seq);
    assert_eq!(q.dst_seq, 5);
    // §6.4: the ring starts at the old hop count + TTL_INCREMENT.
    assert_eq!(out[0].ttl, 5);
}

// ---------------------------------------------------------------- buffer

#[test]
fn buffer_limit_drops_oldest() {
    let mut c = cfg0();
    c.buffer_limit = 2;
    let mut n = node(1, c);
    for p in 0..3 {
        assert_eq!(n.route_output(ms(p), None, a(1), a(9), p), RouteResult::Buffered);
    }
    assert_eq!(
        evs(&mut n),
        vec![AodvEvent::Drop {
            packet: 0,
            reason: DropReason::NoRoute
        }]
    );
    n.on_message(ms(10), a(9), 30, &Message::Rrep(rrep(9, 1, 1, 0, 6000)));
    let e = evs(&mut n);
    assert_eq!(e.len(), 3);
    assert_eq!(
        e[1..],
        [
            AodvEvent::Release {
                packet: 1,
                next_hop: a(9)
            },
            AodvEvent::Release {
                packet: 2,
                next_hop: a(9)
            }
        ]
    );
    // Limit 0: no buffering, but the discovery still starts.
    let mut c = cfg0();
    c.buffer_limit = 0;
    let mut n = node(1, c);
    assert!(matches!(
        n.route_output(ms(0), None, a(1), a(9), 0),
        RouteResult::Drop { .. }
    ));
    assert_eq!(tx(&mut n, ms(0)).len(), 1);
}

#[test]
fn buffer_timeout_drops_packets() {
    let mut c = cfg0();
    c.buffer_timeout = SimDuration::from_millis(100);
    c.ttl_start = 5;
    let mut n = node(1, c);
    n.route_output(ms(0), None, a(1), a(9), 1);
    n.route_output(ms(50), None, a(1), a(9), 2);
    assert_eq!(tx(&mut n, ms(50)).len(), 1);
    assert_eq!(n.poll_timeout(), Some(ms(100)));
    n.on_timeout(ms(100));
    assert_eq!(
        evs(&mut n),
        vec![AodvEvent::Drop {
            packet: 1,
            reason: DropReason::NoRoute
        }]
    );
    assert_eq!(n.poll_timeout(), Some(ms(150)));
    n.on_timeout(ms(150));
    assert_eq!(evs(&mut n).len(), 1);
    assert_eq!(n.stats().data_dropped_no_route, 2);
}

// ---------------------------------------------------------------- HELLO (§6.9)

#[test]
fn hello_sent_while_on_active_route_and_loss_breaks_link() {
    let mut c = cfg0();
    c.hello = true;
    let mut n = node(2, c);
    // Hearing a HELLO makes a one-hop route for ALLOWED_HELLO_LOSS · HELLO_INTERVAL.
    let hello = Message::Rrep(rrep(3, 7, 3, 0, 2000));
    assert_eq!(hello.kind(), MessageKind::Hello);
    n.on_message(ms(0), a(3), 1, &hello);
    assert_eq!(n.route_hops(ms(0), a(3)), Some(1));
    assert_eq!(n.routes[&a(3)].seq, 7);
    // A neighbour route alone is not an active route: no HELLO timer.
    assert_eq!(n.hello_at, None);
    // Forwarding an RREP puts node 2 on an active route.
    n.on_message(ms(0), a(1), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 0)));
    n.on_message(ms(0), a(3), 30, &Message::Rrep(rrep(9, 4, 1, 1, 6000)));
    let out = tx(&mut n, ms(0));
    assert_eq!(out.len(), 2);
    // The HELLO timer runs HELLO_INTERVAL minus up to a quarter of it (RFC 5148 §5.2) ...
    let first = n.hello_at.expect("armed");
    assert!(first >= ms(750) && first <= ms(1000), "{first:?}");
    // ... and the RREQ broadcast at 0 suppresses a HELLO until 1 s.
    n.on_timeout(first);
    assert!(tx(&mut n, first).is_empty());
    assert_eq!(n.hello_at, Some(ms(1000)));
    n.on_message(ms(900), a(3), 1, &hello);
    n.on_timeout(ms(1000));
    let out = tx(&mut n, ms(1000));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Broadcast, 1));
    assert_eq!(*as_rrep(&out[0]), rrep(2, 0, 2, 0, 2000));
    assert_eq!(n.stats().hello_sent, 1);
    // Nothing from 3 after 900 ms: at 2900 ms the link is lost (§6.9, §6.11 case (i)).
    let mut broken_at = None;
    while let Some(t) = n.poll_timeout() {
        if t > ms(10_000) {
            break;
        }
        n.on_timeout(t);
        tx(&mut n, t);
        if evs(&mut n).contains(&AodvEvent::LinkBroken { next_hop: a(3) }) {
            broken_at = Some(t);
            break;
        }
    }
    assert_eq!(broken_at, Some(ms(2900)));
    assert_eq!(n.lookup(ms(2900), a(9)), None);
}

/// Node 2 forwards data 1 → 9 through neighbour 3 every 250 ms from 0 to `last_ms`; 3's only
/// HELLO is heard at 0. Returns when the link to 3 breaks (HELLO loss, §6.9).
fn hello_loss_while_forwarding(refresh: bool, last_ms: u64) -> Option<SimTime> {
    let mut c = cfg0();
    c.hello = true;
    c.forwarding_refreshes_next_hop = refresh;
    let mut n = node(2, c);
    n.on_message(ms(0), a(3), 1, &Message::Rrep(rrep(3, 7, 3, 0, 2000)));
    n.on_message(ms(0), a(1), 5, &Message::Rreq(rreq(1, 1, 1, 9, None, 0)));
    n.on_message(ms(0), a(3), 30, &Message::Rrep(rrep(9, 4, 1, 1, 6000)));
    tx(&mut n, ms(0));
    let mut next_data = 0;
    loop {
        let t = n.poll_timeout().unwrap_or(SimTime::NEVER);
        if next_data <= last_ms && ms(next_data) <= t {
            let r = n.route_output(ms(next_data), Some(a(1)), a(1), a(9), next_data);
            assert!(
                matches!(r, RouteResult::Forward { next_hop, .. } if next_hop == a(3)),
                "{r:?}"
            );
            next_data += 250;
            continue;
        }
        if t > ms(20_000) {
            return None;
        }
        n.on_timeout(t);
        tx(&mut n, t);
        if evs(&mut n).contains(&AodvEvent::LinkBroken { next_hop: a(3) }) {
            return Some(t);
        }
    }
}

#[test]
fn forwarding_keeps_the_next_hop_alive_only_when_configured() {
    // RFC 3561 §6.9: only packets heard from 3 count; data forwarded to it does not, so the
    // link breaks ALLOWED_HELLO_LOSS · HELLO_INTERVAL = 2 s after its HELLO, mid-flow.
    assert_eq!(hello_loss_while_forwarding(false, 5000), Some(ms(2000)));
    // ns-3's behaviour: each forwarded packet keeps 3 alive for ACTIVE_ROUTE_TIMEOUT (3 s), so
    // the link breaks 3 s after the last packet forwarded to it.
    assert_eq!(hello_loss_while_forwarding(true, 5000), Some(ms(8000)));
    assert_eq!(hello_loss_while_forwarding(true, 1000), Some(ms(4000)));
}

#[test]
fn hello_from_every_node_only_when_configured() {
    // RFC 3561 §6.9: a node on no active route sends no HELLO.
    let mut c = cfg0();
    c.hello = true;
    let quiet = node(2, c.clone());
    assert_eq!(quiet.poll_timeout(), None);
    // ns-3's behaviour: every node's HELLO timer runs from the start, every HELLO_INTERVAL
    // (less up to a quarter of it, RFC 5148), route or not.
    c.hello_from_every_node = true;
    let mut n = node(2, c);
    let mut sent = Vec::new();
    while let Some(t) = n.poll_timeout() {
        if t > ms(3_000) {
            break;
        }
        n.on_timeout(t);
        for o in tx(&mut n, t) {
            assert_eq!((o.dest, o.ttl), (LinkDest::Broadcast, 1));
            assert_eq!(*as_rrep(&o), rrep(2, 0, 2, 0, 2000));
            sent.push(t);
        }
    }
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent[0] >= ms(750) && sent[0] <= ms(1000), "{sent:?}");
    for w in sent.windows(2) {
        assert!(w[1] - w[0] >= SimDuration::from_millis(750) && w[1] - w[0] <= SimDuration::from_millis(1000));
    }
    assert_eq!(n.stats().hello_sent, 3);
}

// ---------------------------------------------------------------- link-layer detection switch

#[test]
fn link_failure_ignored_without_link_layer_detection() {
    let mut c = cfg0();
    c.link_layer_detection = false;
    let mut n = node(1, c);
    n.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 2, 6000)));
    n.on_link_failure(ms(1), a(2), false);
    assert!(evs(&mut n).is_empty());
    assert_eq!(n.lookup(ms(1), a(9)), Some(a(2)));
}

// ---------------------------------------------------------------- local repair (§6.12)

/// `cfg0` with local repair under `rule`.
fn cfg_lr(rule: LocalRepairRule) -> AodvConfig {
    let mut c = cfg0();
    c.local_repair = true;
    c.local_repair_rule = rule;
    c
}

#[test]
fn local_repair_ns2_rule_repairs_only_breaks_closer_to_the_destination() {
    // RFC 3561 §6.12 lets the node upstream of a break repair it; ns-2 (rt_ll_failed) does when
    // the packet has travelled more hops than the route still has (here 2). Node 2's route to 9
    // goes through 3; 7 is the precursor of the routes to 9 and to 3.
    let c = cfg_lr(LocalRepairRule::Ns2);
    for (hops, repaired) in [(0, false), (1, false), (2, false), (3, true), (9, true)] {
        let mut n = route_to_9(c.clone());
        let r = n.on_data_link_failure(ms(100), a(3), a(9), hops, 42);
        assert_eq!(r, if repaired { None } else { Some(42) }, "hops_traveled {hops}");
        // LinkBroken in both cases (the engine flushes its queue to 3).
        assert_eq!(evs(&mut n), vec![AodvEvent::LinkBroken { next_hop: a(3) }]);
        assert_eq!(n.lookup(ms(100), a(9)), None);
        assert_eq!(n.lookup(ms(100), a(3)), None);
        assert_eq!(n.routes[&a(9)].seq, 11, "§6.12 / §6.11: destination seq incremented");
        let out = tx(&mut n, ms(100));
        assert_eq!(out.len(), 1 + repaired as usize);
        assert_eq!(out[0].dest, LinkDest::Unicast(a(7)));
        let e = as_rerr(&out[0]);
        assert!(!e.no_delete);
        if repaired {
            // The other route through 3 (to 3 itself) is reported; 9, under repair, is not.
            assert_eq!(e.unreachable, [(a(3), 0)]);
            assert_eq!(out[1].dest, LinkDest::Broadcast);
            assert_eq!(as_rreq(&out[1]).dst, a(9));
            assert_eq!(n.precursors[&a(9)], [a(7)], "kept for a later RERR");
            assert_eq!(n.stats().local_repairs, 1);
        } else {
            // §6.11 case (i): a plain break.
            assert_eq!(sorted(e.unreachable.clone()), [(a(3), 0), (a(9), 11)]);
            assert_eq!(n.stats().local_repairs, 0);
            assert_eq!(n.poll_timeout(), Some(ms(3000)), "no repair timer");
        }
    }
    // Without local_repair, through on_link_failure (no packet), or without link-layer
    // detection: no repair.
    let mut n = route_to_9(cfg0());
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), 3, 42), Some(42));
    assert_eq!(n.stats().local_repairs, 0);
    let mut n = route_to_9(c.clone());
    n.on_link_failure(ms(100), a(3), false);
    assert_eq!(n.stats().local_repairs, 0);
    assert_eq!(
        sorted(as_rerr(&tx(&mut n, ms(100))[0]).unreachable.clone()),
        [(a(3), 0), (a(9), 11)]
    );
    let mut c2 = c.clone();
    c2.link_layer_detection = false;
    let mut n = route_to_9(c2);
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), 3, 42), Some(42));
    assert!(evs(&mut n).is_empty());
    assert_eq!(n.lookup(ms(100), a(9)), Some(a(3)));
    // A failed RREP still only blacklists (§6.8).
    let mut n = route_to_9(c);
    n.on_link_failure(ms(100), a(3), true);
    assert!(evs(&mut n).is_empty());
    assert_eq!(n.lookup(ms(100), a(9)), Some(a(3)));
}

#[test]
fn local_repair_rfc_rule_bounds_the_distance_by_max_repair_ttl() {
    // RFC 3561 §6.12: repair "if the destination was no farther than MAX_REPAIR_TTL hops away",
    // at a node upstream of the break; the originator itself rediscovers instead (§6.3).
    let c = cfg_lr(LocalRepairRule::Rfc);
    let mut n = route_to_9(c.clone());
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), 1, 42), None, "2 hops ≤ 10");
    assert_eq!(n.stats().local_repairs, 1);
    let mut n = route_to_9(c.clone());
    assert_eq!(
        n.on_data_link_failure(ms(100), a(3), a(9), 0, 42),
        Some(42),
        "originator"
    );
    let mut far = c;
    far.max_repair_ttl = 1;
    let mut n = route_to_9(far);
    assert_eq!(
        n.on_data_link_failure(ms(100), a(3), a(9), 5, 42),
        Some(42),
        "2 hops > 1"
    );
    assert_eq!(n.stats().local_repairs, 0);
}

#[test]
fn local_repair_rreq_ttl_sequence_number_and_wait() {
    // RFC 3561 §6.12: TTL = max(MIN_REPAIR_TTL, 0.5·#hops) + LOCAL_ADD_TTL, MIN_REPAIR_TTL being
    // the last known hop count (2), #hops the hops from the source (half rounded up); the RREQ
    // asks for the incremented destination sequence number; the wait is the discovery period
    // RING_TRAVERSAL_TIME = 2·40 ms·(TTL + 2).
    for (hops, ttl) in [(1, 4), (4, 4), (5, 5), (7, 6), (20, 12)] {
        let mut n = route_to_9(cfg_lr(LocalRepairRule::Rfc));
        assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), hops, 1), None);
        let out = tx(&mut n, ms(100));
        let o = out.iter().find(|o| o.msg.kind() == MessageKind::Rreq).expect("RREQ");
        assert_eq!((o.dest, o.ttl), (LinkDest::Broadcast, ttl), "hops_traveled {hops}");
        let q = as_rreq(o);
        assert_eq!(
            (q.orig, q.dst, q.dst_seq, q.unknown_seq, q.hop_count),
            (a(2), a(9), 11, false, 0)
        );
        assert_eq!(n.poll_timeout(), Some(ms(100 + 80 * (ttl as u64 + 2))));
    }
    // The cap is NET_DIAMETER.
    let mut c = cfg_lr(LocalRepairRule::Rfc);
    c.local_add_ttl = 250;
    let mut n = route_to_9(c);
    n.on_data_link_failure(ms(100), a(3), a(9), 3, 1);
    assert!(tx(&mut n, ms(100)).iter().any(|o| o.ttl == 35));
    // ns-2's rule and LOCAL_REPAIR_WAIT_TIME (0.15 s).
    let mut c = cfg_lr(LocalRepairRule::Ns2);
    c.local_repair_wait = Some(SimDuration::from_millis(150));
    let mut n = route_to_9(c);
    n.on_data_link_failure(ms(100), a(3), a(9), 3, 1);
    let out = tx(&mut n, ms(100));
    assert_eq!(out.iter().find(|o| o.msg.kind() == MessageKind::Rreq).unwrap().ttl, 4);
    assert_eq!(n.poll_timeout(), Some(ms(250)));
    assert_eq!(n.stats().rreq_originated, 1);
}

#[test]
fn local_repair_buffers_packets_and_releases_them_on_rrep() {
    // RFC 3561 §6.12: "During local repair data packets SHOULD be buffered"; an RREP ends the
    // repair; a route no longer than before needs no RERR.
    let mut n = route_to_9(cfg_lr(LocalRepairRule::Ns2));
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), 3, 1), None);
    tx(&mut n, ms(100));
    evs(&mut n);
    // The engine's flush of its queue to 3, at the same instant: the packet for 9 is kept, the
    // one for 3 given back to be dropped, and the break is not handled twice.
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), 3, 2), None);
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(3), 3, 3), Some(3));
    assert!(evs(&mut n).is_empty());
    assert!(tx(&mut n, ms(100)).is_empty());
    assert_eq!(n.stats().link_breaks, 1);
    // A packet to forward meanwhile waits too, instead of §6.11 case (ii).
    assert_eq!(
        n.route_output(ms(110), Some(a(7)), a(7), a(9), 4),
        RouteResult::Buffered
    );
    assert!(tx(&mut n, ms(110)).is_empty());
    // 9 answers through 4 with the same length (1 + 1 = 2 hops).
    n.on_message(ms(120), a(4), 30, &Message::Rrep(rrep(9, 11, 2, 1, 6000)));
    assert!(tx(&mut n, ms(120)).is_empty(), "no RERR");
    let rel = |packet| AodvEvent::Release { packet, next_hop: a(4) };
    assert_eq!(evs(&mut n), vec![rel(1), rel(2), rel(4)], "no RouteFound for a repair");
    assert_eq!(n.lookup(ms(120), a(9)), Some(a(4)));
    let s = n.stats();
    assert_eq!(
        (s.local_repairs, s.local_repairs_succeeded, s.local_repairs_failed),
        (1, 1, 0)
    );
    assert_eq!((s.discoveries_started, s.discoveries_succeeded), (0, 0));
    // The repair is over: packets go straight out, and no timer is left for it.
    assert_eq!(
        n.route_output(ms(130), Some(a(7)), a(7), a(9), 5),
        RouteResult::Forward {
            next_hop: a(4),
            packet: 5
        }
    );
    assert!(n.poll_timeout().unwrap() > ms(2000));
}

#[test]
fn local_repair_with_longer_route_sends_rerr_with_n_flag() {
    // RFC 3561 §6.12: "If the hop count of the newly determined route to the destination is
    // greater than the hop count of the previously known route the node SHOULD issue a RERR
    // message for the destination, with the 'N' bit set."
    let mut n = route_to_9(cfg_lr(LocalRepairRule::Ns2));
    n.on_data_link_failure(ms(100), a(3), a(9), 3, 1);
    tx(&mut n, ms(100));
    evs(&mut n);
    n.on_message(ms(120), a(4), 30, &Message::Rrep(rrep(9, 12, 2, 2, 6000)));
    let out = tx(&mut n, ms(120));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Unicast(a(7)), 1));
    assert_eq!(
        *as_rerr(&out[0]),
        Rerr {
            no_delete: true,
            unreachable: vec![(a(9), 12)]
        }
    );
    assert_eq!(
        evs(&mut n),
        vec![AodvEvent::Release {
            packet: 1,
            next_hop: a(4)
        }]
    );
    assert_eq!(n.route_hops(ms(120), a(9)), Some(3));
    assert_eq!(n.precursors[&a(9)], [a(7)], "the precursor keeps using the route");
    assert_eq!(n.stats().rerr_originated, 2, "the break of 3, then the N RERR");
}

#[test]
fn failed_local_repair_drops_packets_and_sends_rerr() {
    // RFC 3561 §6.12: no RREP by the end of the discovery period → RERR for the destination as
    // in §6.11, and the buffered packets are dropped.
    let mut n = route_to_9(cfg_lr(LocalRepairRule::Rfc));
    assert_eq!(n.on_data_link_failure(ms(100), a(3), a(9), 1, 1), None);
    tx(&mut n, ms(100));
    evs(&mut n);
    assert_eq!(
        n.route_output(ms(200), Some(a(7)), a(7), a(9), 2),
        RouteResult::Buffered
    );
    // TTL max(2, 1) + 2 = 4: RING_TRAVERSAL_TIME 480 ms.
    assert_eq!(n.poll_timeout(), Some(ms(580)));
    n.on_timeout(ms(579));
    assert!(evs(&mut n).is_empty() && tx(&mut n, ms(579)).is_empty());
    n.on_timeout(ms(580));
    let drop = |packet| AodvEvent::Drop {
        packet,
        reason: DropReason::NoRoute,
    };
    assert_eq!(evs(&mut n), vec![drop(1), drop(2)], "no DiscoveryFailed for a repair");
    let out = tx(&mut n, ms(580));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dest, LinkDest::Unicast(a(7)));
    assert_eq!(
        *as_rerr(&out[0]),
        Rerr {
            no_delete: false,
            unreachable: vec![(a(9), 11)]
        }
    );
    let s = n.stats();
    assert_eq!(
        (s.local_repairs, s.local_repairs_succeeded, s.local_repairs_failed),
        (1, 0, 1)
    );
    assert_eq!(
        (s.discoveries_failed, s.data_dropped_no_route, s.rreq_originated),
        (0, 2, 1)
    );
    assert!(!n.precursors.contains_key(&a(9)), "precursors sent the RERR");
    // The repair is over: a packet to forward is dropped with an RERR (§6.11 case (ii)).
    assert!(matches!(
        n.route_output(ms(600), Some(a(7)), a(7), a(9), 3),
        RouteResult::Drop { packet: 3, .. }
    ));
    assert_eq!(as_rerr(&tx(&mut n, ms(600))[0]).unreachable, [(a(9), 11)]);
    // A late RREP is simply a new route.
    n.on_message(ms(700), a(4), 30, &Message::Rrep(rrep(9, 11, 2, 1, 6000)));
    assert!(evs(&mut n).is_empty() && tx(&mut n, ms(700)).is_empty());
}

#[test]
fn rerr_with_n_flag_keeps_the_route_and_is_passed_on() {
    // RFC 3561 §6.12, §5.3: "A node that receives a RERR message with the 'N' flag set MUST NOT
    // delete the route to that destination. The only action taken should be the retransmission
    // of the message, if the RERR arrived from the next hop along that route, and if there are
    // one or more precursor nodes for that destination."
    let mut n = node_with_two_flows();
    let e = Rerr {
        no_delete: true,
        unreachable: vec![(a(9), 11), (a(8), 21)],
    };
    n.on_message(ms(100), a(3), 1, &Message::Rerr(e));
    assert_eq!(n.lookup(ms(100), a(9)), Some(a(3)));
    assert_eq!(n.routes[&a(9)].seq, 10, "nothing changes");
    assert_eq!(n.lookup(ms(100), a(8)), Some(a(4)));
    let out = tx(&mut n, ms(100));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].dest, out[0].ttl), (LinkDest::Unicast(a(1)), 1));
    assert_eq!(
        *as_rerr(&out[0]),
        Rerr {
            no_delete: true,
            unreachable: vec![(a(9), 11)]
        },
        "only 9: 8 is not reached through 3"
    );
    assert_eq!(n.stats().rerr_forwarded, 1);
    // At the originator (no precursors): nothing sent, the route stays.
    let mut m = node(1, cfg0());
    m.on_message(ms(0), a(2), 30, &Message::Rrep(rrep(9, 4, 1, 2, 6000)));
    let e = Rerr {
        no_delete: true,
        unreachable: vec![(a(9), 5)],
    };
    m.on_message(ms(10), a(2), 1, &Message::Rerr(e));
    assert!(tx(&mut m, ms(10)).is_empty());
    assert_eq!(m.lookup(ms(10), a(9)), Some(a(2)));
    assert_eq!(m.routes[&a(9)].seq, 4);
}

#[test]
fn a_link_break_keeps_the_sequence_number_only_when_configured() {
    // RFC 3561 §6.11 (i): the destination sequence number goes up by one on a break, and the
    // RERR carries the new one; ns-3 keeps it (`invalidation_keeps_seq`).
    for (keep, seq) in [(false, 11), (true, 10)] {
        let mut n = node_with_two_flows_keeping(keep);
        n.on_link_failure(ms(100), a(3), false);
        assert_eq!(n.lookup(ms(100), a(9)), None, "invalid either way");
        let out = tx(&mut n, ms(100));
        assert_eq!(sorted(as_rerr(&out[0]).unreachable.clone()), [(a(3), 0), (a(9), seq)]);
        assert_eq!(n.routes[&a(9)].seq, seq);
        // The node's own next RREQ for 9 asks for that number: with it kept, a node whose
        // route to 9 is as old as the broken one may answer.
        assert_eq!(n.route_output(ms(200), None, a(2), a(9), 7), RouteResult::Buffered);
        let q = tx(&mut n, ms(300))
            .iter()
            .find_map(|o| match &o.msg {
                Message::Rreq(q) => Some(q.clone()),
                _ => None,
            })
            .expect("an RREQ for 9");
        assert_eq!((q.dst, q.dst_seq, q.unknown_seq), (a(9), seq, false));
    }
}

#[test]
fn an_rerr_copies_its_sequence_numbers_only_when_not_keeping_them() {
    // RFC 3561 §6.11 (iii): the route takes the RERR's number; ns-3 ignores it.
    for (keep, seq) in [(false, 12), (true, 10)] {
        let mut n = node_with_two_flows_keeping(keep);
        let e = Rerr {
            no_delete: false,
            unreachable: vec![(a(9), 12)],
        };
        n.on_message(ms(100), a(3), 1, &Message::Rerr(e));
        assert_eq!(n.lookup(ms(100), a(9)), None, "invalid either way");
        assert_eq!(n.routes[&a(9)].seq, seq);
        let out = tx(&mut n, ms(100));
        assert_eq!(
            as_rerr(&out[0]).unreachable,
            [(a(9), seq)],
            "passed on with the kept number"
        );
    }
}
