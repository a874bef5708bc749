//! Packet-by-packet tests, smoltcp style: feed one input at an explicit time, then assert
//! exactly what comes out. Each test names the RFC 3626 rule it checks.
//!
//! The node under test is `A` = 10.0.0.1 with the RFC 3626 §18 constants (HELLO every 2 s minus
//! up to 0.5 s jitter, NEIGHB_HOLD_TIME 6 s, TC every 5 s, TOP_HOLD_TIME 15 s); its neighbours
//! are B, C, D … = 10.0.0.2, 10.0.0.3, 10.0.0.4 … Times are in seconds.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use tpsim_core::{Module, OwnerKind, StreamKey};

use super::*;

const A: Addr = Addr::new(10, 0, 0, 1);
const B: Addr = Addr::new(10, 0, 0, 2);
const C: Addr = Addr::new(10, 0, 0, 3);
const D: Addr = Addr::new(10, 0, 0, 4);
const E: Addr = Addr::new(10, 0, 0, 5);
const F: Addr = Addr::new(10, 0, 0, 6);
const G: Addr = Addr::new(10, 0, 0, 7);
const X: Addr = Addr::new(10, 0, 0, 99);

use LinkType as L;
use NeighborType as N;

fn t(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}
fn just_before(s: f64) -> SimTime {
    SimTime(t(s).0 - 1)
}
fn rng(id: u64) -> RngStream {
    RngStream::new(StreamKey {
        seed: 1,
        run: 0,
        kind: OwnerKind::Node,
        owner_id: id,
        module: Module::Routing,
    })
}

/// A HELLO packet from `orig` with Vtime 6 s, Htime 2 s, willingness 3.
fn hello(orig: Addr, seq: u16, links: &[(LinkType, NeighborType, &[Addr])]) -> Packet {
    hello_will(orig, seq, WILL_DEFAULT, links)
}
fn hello_will(orig: Addr, seq: u16, will: u8, links: &[(LinkType, NeighborType, &[Addr])]) -> Packet {
    Packet {
        seq,
        messages: vec![Message {
            vtime: SimDuration::from_secs(6),
            originator: orig,
            ttl: 1,
            hop_count: 0,
            seq,
            body: Body::Hello(Hello {
                htime: SimDuration::from_secs(2),
                willingness: will,
                links: links
                    .iter()
                    .map(|(lt, nt, a)| LinkMessage {
                        link_type: *lt,
                        neighbor_type: *nt,
                        neighbors: a.to_vec(),
                    })
                    .collect(),
            }),
        }],
    }
}
/// A TC packet from `orig` with Vtime 15 s.
fn tc(orig: Addr, seq: u16, ttl: u8, hop_count: u8, ansn: u16, adv: &[Addr]) -> Packet {
    Packet {
        seq,
        messages: vec![Message {
            vtime: SimDuration::from_secs(15),
            originator: orig,
            ttl,
            hop_count,
            seq,
            body: Body::Tc(Tc {
                ansn,
                advertised: adv.to_vec(),
            }),
        }],
    }
}

/// The node under test and its clock; every step drains `poll_transmit`.
struct Driver {
    n: Olsr,
    now: SimTime,
    sent: Vec<(SimTime, Packet)>,
}

impl Driver {
    fn new(cfg: OlsrConfig) -> Self {
        Driver {
            n: Olsr::new(cfg, A, rng(1)),
            now: SimTime::ZERO,
            sent: Vec::new(),
        }
    }
    fn drain(&mut self) {
        while let Some(p) = self.n.poll_transmit(self.now) {
            self.sent.push((self.now, p));
        }
    }
    /// Runs the node's own timers up to and including `until`.
    fn run(&mut self, until: SimTime) {
        loop {
            let next = self.n.poll_timeout().unwrap().max(self.now);
            if next > until {
                break;
            }
            self.now = next;
            self.n.on_timeout(next);
            self.drain();
        }
        self.now = until;
    }
    fn rx(&mut self, at: SimTime, from: Addr, p: &Packet) {
        self.run(at);
        self.n.on_packet(at, from, p);
        self.drain();
    }
    /// HELLO messages sent in (after, until].
    fn hellos(&self, after: SimTime) -> Vec<(SimTime, Hello)> {
        self.messages(after)
            .filter_map(|(t, m)| match &m.body {
                Body::Hello(h) => Some((t, h.clone())),
                _ => None,
            })
            .collect()
    }
    fn tcs(&self, after: SimTime) -> Vec<(SimTime, Message)> {
        self.messages(after)
            .filter(|(_, m)| matches!(m.body, Body::Tc(_)))
            .collect()
    }
    fn messages(&self, after: SimTime) -> impl Iterator<Item = (SimTime, Message)> + '_ {
        self.sent
            .iter()
            .filter(move |(t, _)| *t > after)
            .flat_map(|(t, p)| p.messages.iter().map(move |m| (*t, m.clone())))
    }
}

/// How `h` lists `who`: (link type, neighbour type).
fn listed(h: &Hello, who: Addr) -> Option<(LinkType, NeighborType)> {
    h.links
        .iter()
        .find(|l| l.neighbors.contains(&who))
        .map(|l| (l.link_type, l.neighbor_type))
}

// ------------------------------------------------------------------ §18.3 time encoding

// RFC 3626 §18.3: value = C·(1 + a/16)·2^b, C = 1/16 s. 6 s: T/C = 96, b = 6, a = 16·(96/64 − 1)
// = 8 → 0x86. 15 s: T/C = 240, b = 7, a = 16·(240/128 − 1) = 14 → 0xE7. 2 s: T/C = 32, b = 5,
// a = 0 → 0x05. 0.5 s: T/C = 8 → 0x03.
#[test]
fn time_encoding_matches_rfc_formula() {
    for (secs, byte) in [(6, 0x86u8), (15, 0xE7), (2, 0x05)] {
        assert_eq!(encode_time(SimDuration::from_secs(secs)), byte, "{secs} s");
        assert_eq!(decode_time(byte), SimDuration::from_secs(secs));
    }
    assert_eq!(encode_time(SimDuration::from_millis(500)), 0x03);
    assert_eq!(decode_time(0x00), SimDuration::from_nanos(62_500_000));
    // C·(1 + 15/16)·2^15 = 3968 s.
    assert_eq!(decode_time(0xFF), SimDuration::from_secs(3968));
    assert_eq!(MAX_ENCODABLE_TIME, SimDuration::from_secs(3968));
}

// §18.3: every byte is a fixed point of decode-then-encode; encoding rounds up ("round it up")
// to the next representable value, and a = 16 carries into b.
#[test]
fn time_encoding_round_trips_and_rounds_up() {
    for b in 0..=255u8 {
        assert_eq!(encode_time(decode_time(b)), b, "byte {b:#04x}");
    }
    // Just above 6 s: the next value up is C·(1 + 9/16)·2^6 = 6.25 s.
    assert_eq!(encode_time(SimDuration(6_000_000_001)), 0x96);
    // Just below 8 s: a would be 16 → b + 1, a = 0: 8 s = 0x07.
    assert_eq!(encode_time(SimDuration(7_999_999_999)), 0x07);
    // Below C and beyond the range clamp.
    assert_eq!(encode_time(SimDuration::ZERO), 0x00);
    assert_eq!(encode_time(SimDuration::from_secs(10_000)), 0xFF);
}

proptest! {
    // §18.3: decode(encode(d)) is the smallest representable value ≥ d.
    #[test]
    fn time_encoding_is_a_tight_upper_bound(ns in 62_500_001u64..3_968_000_000_000) {
        let d = SimDuration(ns);
        let b = encode_time(d);
        prop_assert!(decode_time(b) >= d);
        if b > 0 {
            // Values are increasing in (b, a) order; the previous one is below d.
            let prev = if b >> 4 == 0 { 0xF0 | ((b & 0x0f) - 1) } else { b - 0x10 };
            prop_assert!(decode_time(prev) < d);
        }
    }
}

// ------------------------------------------------------------------ §3.3, §6.1, §9.1 layout

// RFC 3626 §3.3 / §6.1: a HELLO packet worked out by hand from the figures. Packet Length 40,
// Packet Sequence Number 1; message type 1, Vtime 6 s = 0x86, Message Size 36, originator
// 10.0.0.1, TTL 1, hop count 0, Message Sequence Number 7; Reserved 0, Htime 2 s = 0x05,
// Willingness 3; link code SYM_LINK | SYM_NEIGH << 2 = 0x06, size 8, 10.0.0.2; link code
// SYM_LINK | MPR_NEIGH << 2 = 0x0A, size 12, 10.0.0.3, 10.0.0.4.
#[test]
fn hello_byte_layout() {
    #[rustfmt::skip]
    let bytes: [u8; 40] = [
        0x00, 0x28, 0x00, 0x01,
        0x01, 0x86, 0x00, 0x24,
        10, 0, 0, 1,
        0x01, 0x00, 0x00, 0x07,
        0x00, 0x00, 0x05, 0x03,
        0x06, 0x00, 0x00, 0x08,
        10, 0, 0, 2,
        0x0A, 0x00, 0x00, 0x0C,
        10, 0, 0, 3,
        10, 0, 0, 4,
    ];
    let mut p = hello(A, 7, &[(L::Sym, N::Sym, &[B]), (L::Sym, N::Mpr, &[C, D])]);
    p.seq = 1;
    let mut buf = Vec::new();
    p.emit(&mut buf);
    assert_eq!(buf, bytes);
    assert_eq!(p.wire_len(), 40);
    assert_eq!(Packet::parse(&bytes), Some(p));
}

// RFC 3626 §3.3 / §9.1: a TC packet. Packet Length 28, sequence 2; type 2, Vtime 15 s = 0xE7,
// size 24, originator 10.0.0.3, TTL 255, hop 0, sequence 0x0102; ANSN 5, Reserved 0;
// advertised 10.0.0.1, 10.0.0.2.
#[test]
fn tc_byte_layout() {
    #[rustfmt::skip]
    let bytes: [u8; 28] = [
        0x00, 0x1C, 0x00, 0x02,
        0x02, 0xE7, 0x00, 0x18,
        10, 0, 0, 3,
        0xFF, 0x00, 0x01, 0x02,
        0x00, 0x05, 0x00, 0x00,
        10, 0, 0, 1,
        10, 0, 0, 2,
    ];
    let mut p = tc(C, 0x0102, 255, 0, 5, &[A, B]);
    p.seq = 2;
    let mut buf = Vec::new();
    p.emit(&mut buf);
    assert_eq!(buf, bytes);
    assert_eq!(Packet::parse(&bytes), Some(p));
}

// §3.3: several messages in one packet round-trip; malformed packets are rejected; unknown
// message types are skipped; invalid link codes (§6.1.1) are skipped.
#[test]
fn parse_multi_message_and_malformed() {
    let mut p = hello(A, 1, &[(L::Asym, N::Not, &[B]), (L::Lost, N::Not, &[C])]);
    p.messages.extend(tc(A, 2, 255, 0, 9, &[]).messages);
    p.messages.extend(tc(E, 77, 12, 3, 65535, &[B, C, D]).messages);
    let mut buf = Vec::new();
    p.emit(&mut buf);
    assert_eq!(buf.len(), p.wire_len());
    assert_eq!(Packet::parse(&buf), Some(p.clone()));
    // Truncated anywhere inside: rejected.
    for cut in [0, 3, buf.len() - 1] {
        let mut short = buf[..cut].to_vec();
        if short.len() >= 2 {
            short[0..2].copy_from_slice(&(cut as u16).to_be_bytes());
        }
        assert_eq!(Packet::parse(&short), None, "cut at {cut}");
    }
    // A packet length larger than the datagram.
    assert_eq!(Packet::parse(&buf[..buf.len() - 4]), None);
    // An unknown message type (MID = 3) between two known ones is skipped.
    let mut with_mid = buf[..4].to_vec();
    with_mid.extend_from_slice(&[3, 0x86, 0, 16, 10, 0, 0, 9, 255, 0, 0, 1, 10, 0, 0, 10]);
    with_mid.extend_from_slice(&buf[4..]);
    let len = with_mid.len() as u16;
    with_mid[0..2].copy_from_slice(&len.to_be_bytes());
    assert_eq!(Packet::parse(&with_mid), Some(p));
    // SYM_LINK with NOT_NEIGH (code 0x02) is invalid: that link message is dropped.
    let q = hello(A, 1, &[(L::Sym, N::Not, &[B]), (L::Sym, N::Sym, &[C])]);
    let mut buf = Vec::new();
    q.emit(&mut buf);
    let parsed = Packet::parse(&buf).unwrap();
    let Body::Hello(h) = &parsed.messages[0].body else {
        panic!()
    };
    assert_eq!(h.links.len(), 1);
    assert_eq!(h.links[0].neighbors, vec![C]);
}

// ------------------------------------------------------------------ §7.1 link sensing

// RFC 3626 §7.1.1: a HELLO from B that does not list A creates an asymmetric link (L_SYM_time
// expired, L_ASYM_time = now + 6 s); A then advertises B as ASYM_LINK/NOT_NEIGH (§6.2). A
// HELLO listing A makes it symmetric (L_SYM_time = now + Vtime, L_time = L_SYM_time +
// NEIGHB_HOLD_TIME), advertised SYM_LINK/SYM_NEIGH. If B falls silent, the link is lost at
// L_SYM_time = L_ASYM_time (advertised LOST_LINK) and removed at L_time.
#[test]
fn link_sensing_asym_sym_and_expiry() {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.run(t(0.9));
    assert_eq!(d.hellos(SimTime::ZERO).len(), 1, "first HELLO within MAXJITTER");
    assert!(d.hellos(SimTime::ZERO)[0].1.links.is_empty());

    d.rx(t(1.0), B, &hello(B, 1, &[]));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Asymmetric));
    assert_eq!(d.n.route(B), None, "an asymmetric link is no route (§10)");
    d.run(t(3.0));
    let hs = d.hellos(t(1.0));
    assert!(!hs.is_empty());
    assert_eq!(listed(&hs.last().unwrap().1, B), Some((L::Asym, N::Not)));

    d.rx(t(3.0), B, &hello(B, 2, &[(L::Asym, N::Not, &[A])]));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Symmetric));
    assert_eq!(d.n.route(B), Some((B, 1)));
    assert!(d.n.symmetric_neighbours().contains(&B));
    d.run(t(5.0));
    assert_eq!(listed(&d.hellos(t(3.0)).last().unwrap().1, B), Some((L::Sym, N::Sym)));

    // Silence: L_SYM_time = L_ASYM_time = 9 s, L_time = 15 s. poll_timeout wakes exactly then.
    d.run(just_before(9.0));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Symmetric));
    d.run(t(9.0));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Lost));
    assert_eq!(d.n.route(B), None);
    d.run(just_before(15.0));
    let hs = d.hellos(t(9.0));
    assert!(!hs.is_empty());
    assert!(hs.iter().all(|(_, h)| listed(h, B) == Some((L::Lost, N::Not))));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Lost));
    d.run(t(15.0));
    assert_eq!(d.n.link_status(B), None);
    d.run(t(20.0));
    assert!(d.hellos(t(15.0)).iter().all(|(_, h)| h.links.is_empty()));
}

// RFC 3626 §7.1.1 step 2.2.1: a HELLO listing A as LOST_LINK expires L_SYM_time at once; the
// link stays asymmetric (B is still heard).
#[test]
fn lost_link_in_hello_breaks_symmetry() {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.rx(t(1.0), B, &hello(B, 1, &[(L::Asym, N::Not, &[A])]));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Symmetric));
    d.rx(t(2.0), B, &hello(B, 2, &[(L::Lost, N::Not, &[A])]));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Asymmetric));
    assert_eq!(d.n.route(B), None);
    // And back: listed as SYM_LINK.
    d.rx(t(3.0), B, &hello(B, 3, &[(L::Sym, N::Sym, &[A])]));
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Symmetric));
}

// RFC 3626 §13: link-layer failure feedback marks the link lost immediately.
#[test]
fn link_failure_marks_link_lost() {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.rx(t(1.0), B, &hello(B, 1, &[(L::Asym, N::Not, &[A])]));
    d.run(t(1.5));
    d.n.on_link_failure(t(1.5), B);
    assert_eq!(d.n.link_status(B), Some(LinkStatus::Lost));
    assert_eq!(d.n.route(B), None);
    // Kept (and advertised as lost) until now + NEIGHB_HOLD_TIME.
    d.run(just_before(7.5));
    assert!(d
        .hellos(t(1.5))
        .iter()
        .all(|(_, h)| listed(h, B) == Some((L::Lost, N::Not))));
    d.run(t(7.5));
    assert_eq!(d.n.link_status(B), None);
    // Unknown neighbours are ignored.
    d.n.on_link_failure(t(7.5), C);
}

// ------------------------------------------------------------------ §8 neighbourhood, MPRs

// RFC 3626 §8.2.1: a symmetric neighbour's HELLO listing C as SYM_NEIGH gives the 2-hop tuple
// (B, C) → route to C via B in 2 hops (§10); B listing A as MPR_NEIGH makes B an MPR selector
// (§8.4.1); C reachable only through B makes B an MPR (§8.3.1), advertised as MPR_NEIGH (§6.2).
// C listed as NOT_NEIGH removes the tuple.
#[test]
fn two_hop_mpr_and_selectors() {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.rx(t(1.0), B, &hello(B, 1, &[(L::Asym, N::Not, &[A])]));
    d.rx(
        t(1.5),
        B,
        &hello(B, 2, &[(L::Sym, N::Mpr, &[A]), (L::Sym, N::Sym, &[C])]),
    );
    assert_eq!(d.n.route(C), Some((B, 2)));
    assert_eq!(d.n.mpr_set().iter().copied().collect::<Vec<_>>(), vec![B]);
    assert_eq!(d.n.mpr_selectors().collect::<Vec<_>>(), vec![B]);
    d.run(t(4.0));
    assert_eq!(listed(&d.hellos(t(1.5)).last().unwrap().1, B), Some((L::Sym, N::Mpr)));
    // A HELLO from a non-symmetric neighbour does not touch the 2-hop set.
    d.rx(t(4.0), E, &hello(E, 1, &[(L::Sym, N::Sym, &[F])]));
    assert_eq!(d.n.route(F), None);
    // NOT_NEIGH deletes (B, C).
    d.rx(
        t(4.5),
        B,
        &hello(B, 3, &[(L::Sym, N::Mpr, &[A]), (L::Lost, N::Not, &[C])]),
    );
    assert_eq!(d.n.route(C), None);
    assert!(d.n.mpr_set().is_empty());
}

// RFC 3626 §9.3: a node with MPR selectors sends TCs (TTL 255, Vtime TOP_HOLD_TIME) with its
// selectors and an ANSN that grows when the set changes; when the set becomes empty it keeps
// sending empty TCs for TOP_HOLD_TIME after the last non-empty one, then stops.
#[test]
fn tc_generation_ansn_and_empty_tcs() {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.run(t(0.9));
    assert!(d.tcs(SimTime::ZERO).is_empty(), "no selectors, no TC");
    d.rx(t(1.0), B, &hello(B, 1, &[(L::Asym, N::Not, &[A])]));
    d.rx(t(1.1), B, &hello(B, 2, &[(L::Sym, N::Mpr, &[A])]));
    d.run(t(6.0));
    let tcs = d.tcs(SimTime::ZERO);
    assert_eq!(tcs.len(), 1);
    let (t1, m) = &tcs[0];
    assert!(
        *t1 >= t(4.5) && *t1 <= t(5.5),
        "second TC opportunity at 5 s − jitter: {t1}"
    );
    assert_eq!((m.ttl, m.hop_count, m.vtime), (255, 0, SimDuration::from_secs(15)));
    assert_eq!(
        m.body,
        Body::Tc(Tc {
            ansn: 1,
            advertised: vec![B]
        })
    );
    // B falls silent: link and selector tuple expire at 7.1 s.
    d.run(t(40.0));
    let tcs = d.tcs(*t1);
    assert!(!tcs.is_empty());
    for (at, m) in &tcs {
        assert_eq!(
            m.body,
            Body::Tc(Tc {
                ansn: 2,
                advertised: vec![]
            }),
            "at {at}"
        );
        assert!(*at < *t1 + SimDuration::from_secs(15));
    }
    assert_eq!(d.n.stats().tc_originated as usize, 1 + tcs.len());
}

// RFC 3626 §8.1.1 / §8.3.1 / §10: HELLOs carry our willingness; a WILL_NEVER neighbour is never
// an MPR and gives no 2-hop routes.
#[test]
fn willingness_in_hellos_and_will_never() {
    let mut cfg = OlsrConfig::rfc();
    cfg.willingness = WILL_HIGH;
    let mut d = Driver::new(cfg);
    d.rx(t(1.0), B, &hello_will(B, 1, WILL_NEVER, &[(L::Asym, N::Not, &[A])]));
    d.rx(t(1.1), B, &hello_will(B, 2, WILL_NEVER, &[(L::Sym, N::Sym, &[A, C])]));
    assert_eq!(d.n.route(B), Some((B, 1)));
    assert!(d.n.mpr_set().is_empty());
    assert_eq!(d.n.route(C), None);
    d.run(t(3.0));
    let hs = d.hellos(SimTime::ZERO);
    assert!(hs.iter().all(|(_, h)| h.willingness == WILL_HIGH));
    // With a willing neighbour D also reaching C, D is the MPR and the route.
    d.rx(t(3.0), D, &hello(D, 1, &[(L::Asym, N::Not, &[A])]));
    d.rx(t(3.1), D, &hello(D, 2, &[(L::Sym, N::Sym, &[A, C])]));
    assert_eq!(d.n.mpr_set().iter().copied().collect::<Vec<_>>(), vec![D]);
    assert_eq!(d.n.route(C), Some((D, 2)));
}

// ------------------------------------------------------------------ §9.5, §3.4 TCs

/// A with symmetric neighbours B (which selected A as MPR and has neighbour C) and D.
fn tc_setup() -> Driver {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.rx(t(1.0), B, &hello(B, 1, &[(L::Asym, N::Not, &[A])]));
    d.rx(t(1.0), D, &hello(D, 1, &[(L::Asym, N::Not, &[A])]));
    d.rx(
        t(1.1),
        B,
        &hello(B, 2, &[(L::Sym, N::Mpr, &[A]), (L::Sym, N::Sym, &[C])]),
    );
    d.rx(t(1.1), D, &hello(D, 2, &[(L::Sym, N::Sym, &[A])]));
    assert_eq!(d.n.mpr_selectors().collect::<Vec<_>>(), vec![B]);
    d
}

fn forwarded(d: &Driver, after: SimTime, orig: Addr, seq: u16) -> Vec<Message> {
    d.messages(after)
        .map(|(_, m)| m)
        .filter(|m| m.originator == orig && m.seq == seq)
        .collect()
}

// RFC 3626 §9.5 and §3.4.1: a TC from C (via B) adds (E, C) to the topology set → route to E in
// 3 hops via B. B is an MPR selector of A and TTL > 1, so A retransmits it once, within
// MAXJITTER, with TTL − 1 and hop count + 1. The same message via D is a duplicate (§3.4): not
// processed, not forwarded.
#[test]
fn tc_processing_and_mpr_forwarding() {
    let mut d = tc_setup();
    d.rx(t(1.2), B, &tc(C, 100, 254, 1, 5, &[E]));
    assert_eq!(d.n.route(E), Some((B, 3)));
    assert_eq!(d.n.stats().tc_forwarded, 1);
    d.run(t(1.7));
    let f = forwarded(&d, t(1.1), C, 100);
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].ttl, f[0].hop_count), (253, 2));
    assert_eq!(f[0].vtime, SimDuration::from_secs(15));
    assert_eq!(
        f[0].body,
        Body::Tc(Tc {
            ansn: 5,
            advertised: vec![E]
        })
    );

    d.rx(t(1.8), D, &tc(C, 100, 254, 1, 5, &[E]));
    assert_eq!(d.n.stats().duplicates_dropped, 1);
    d.run(t(2.5));
    assert!(forwarded(&d, t(1.7), C, 100).is_empty());

    // From D (not a selector): processed, not forwarded.
    d.rx(t(2.5), D, &tc(C, 101, 254, 1, 5, &[E]));
    // From B but TTL 1: processed, not forwarded.
    d.rx(t(2.6), B, &tc(C, 102, 1, 1, 5, &[E]));
    d.run(t(3.5));
    assert_eq!(d.n.stats().tc_forwarded, 1);
    assert!(forwarded(&d, t(2.5), C, 101).is_empty());
    assert!(forwarded(&d, t(2.5), C, 102).is_empty());
}

// RFC 3626 §9.5 steps 2–4: an older ANSN is discarded (but still forwarded, §3.4.1); a newer
// ANSN replaces the originator's tuples; a TC from a non-symmetric neighbour is ignored, and
// since no duplicate tuple was recorded the same message is processed when it comes from a
// symmetric one. Our own TCs echoed back are dropped (§3.4).
#[test]
fn tc_ansn_rules() {
    let mut d = tc_setup();
    d.rx(t(1.2), B, &tc(C, 100, 254, 1, 5, &[E]));
    d.rx(t(1.3), B, &tc(C, 101, 254, 1, 4, &[F]));
    assert_eq!(d.n.route(F), None);
    assert_eq!(d.n.route(E), Some((B, 3)));
    assert_eq!(d.n.stats().tc_out_of_order, 1);
    assert_eq!(d.n.stats().tc_forwarded, 2, "forwarding is independent of processing");

    d.rx(t(1.4), B, &tc(C, 102, 254, 1, 6, &[F]));
    assert_eq!(d.n.route(E), None);
    assert_eq!(d.n.route(F), Some((B, 3)));

    d.rx(t(1.5), X, &tc(C, 103, 254, 1, 7, &[G]));
    assert_eq!(d.n.route(G), None);
    assert_eq!(d.n.stats().tc_forwarded, 3);
    d.rx(t(1.6), B, &tc(C, 103, 254, 1, 7, &[G]));
    assert_eq!(d.n.route(G), Some((B, 3)));
    assert_eq!(d.n.route(F), None);
    assert_eq!(d.n.stats().tc_forwarded, 4);

    // ANSN wrap-around (§19): 7 → 30000 → 60000 → 5 are each newer than the one before.
    d.rx(t(1.7), B, &tc(C, 200, 254, 1, 30000, &[E]));
    assert_eq!(d.n.route(E), Some((B, 3)));
    d.rx(t(1.75), B, &tc(C, 201, 254, 1, 60000, &[F]));
    assert_eq!((d.n.route(E), d.n.route(F)), (None, Some((B, 3))));
    d.rx(t(1.8), B, &tc(C, 202, 254, 1, 5, &[G]));
    assert_eq!((d.n.route(F), d.n.route(G)), (None, Some((B, 3))));
    d.rx(t(1.85), B, &tc(C, 203, 254, 1, 60000, &[F]));
    assert_eq!(d.n.route(F), None, "60000 is older than 5 after the wrap");
    assert!(seq_newer(0, 65535) && !seq_newer(65535, 0) && seq_newer(100, 50));

    // Our own message is dropped.
    let before = d.n.stats();
    d.rx(t(1.9), B, &tc(A, 1, 254, 1, 1, &[X]));
    assert_eq!(d.n.route(X), None);
    assert_eq!(d.n.stats().tc_forwarded, before.tc_forwarded);

    // Topology tuples expire after their Vtime (15 s) unless refreshed.
    d.run(just_before(16.6));
    assert_eq!(d.n.route(G), None, "B's link expired at 7.1 s, so nothing is reachable");
}

// RFC 3626 §9.5 / §4.4: topology tuples expire at T_time = now + Vtime when B stays a neighbour.
#[test]
fn topology_tuples_expire() {
    let mut d = tc_setup();
    d.rx(t(1.2), B, &tc(C, 100, 254, 1, 5, &[E]));
    // Keep B symmetric with fresh HELLOs every 2 s.
    for k in 0..8u16 {
        let at = 2.0 + 2.0 * k as f64;
        d.rx(
            t(at),
            B,
            &hello(B, 10 + k, &[(L::Sym, N::Mpr, &[A]), (L::Sym, N::Sym, &[C])]),
        );
        assert_eq!(d.n.route(E), Some((B, 3)), "at {at}");
    }
    d.run(just_before(16.2));
    assert_eq!(d.n.route(E), Some((B, 3)));
    assert_eq!(d.n.topology_len(), 1);
    d.run(t(16.2));
    assert_eq!(d.n.route(E), None);
    assert_eq!(d.n.topology_len(), 0);
    assert_eq!(d.n.route(C), Some((B, 2)));
}

// ------------------------------------------------------------------ §8.3.1 MPR heuristic

fn nbrs(list: &[(Addr, u8)]) -> BTreeMap<Addr, u8> {
    list.iter().copied().collect()
}
fn reach(list: &[(Addr, &[Addr])]) -> BTreeMap<Addr, BTreeSet<Addr>> {
    list.iter().map(|(y, xs)| (*y, xs.iter().copied().collect())).collect()
}

// §8.3.1: E only via B → B (step 3); G via C or D, tie on willingness and reachability, C has
// the larger D(y) → C (step 4). With D at WILL_HIGH, D wins (willingness first). A WILL_ALWAYS
// neighbour is always selected (step 1); non-strict 2-hop entries are ignored.
#[test]
fn mpr_heuristic_examples() {
    let r = reach(&[(B, &[E, F]), (C, &[F, G]), (D, &[G])]);
    let n3 = nbrs(&[(B, 3), (C, 3), (D, 3)]);
    assert_eq!(select_mpr(&n3, &r, 1), [B, C].into());
    let nh = nbrs(&[(B, 3), (C, 3), (D, WILL_HIGH)]);
    assert_eq!(select_mpr(&nh, &r, 1), [B, D].into());
    let na = nbrs(&[(B, 3), (C, 3), (D, 3), (X, WILL_ALWAYS)]);
    assert_eq!(select_mpr(&na, &r, 1), [B, C, X].into());
    // B, C are 1-hop neighbours of each other: no strict 2-hop neighbours, no MPR.
    let r2 = reach(&[(B, &[C]), (C, &[B])]);
    assert!(select_mpr(&nbrs(&[(B, 3), (C, 3)]), &r2, 1).is_empty());
    // MPR_COVERAGE 2: G covered by two of its three providers.
    let r3 = reach(&[(B, &[G]), (C, &[G]), (D, &[G])]);
    assert_eq!(select_mpr(&n3, &r3, 2).len(), 2);
    assert_eq!(select_mpr(&n3, &r3, 5).len(), 3);
    // Step 5: B (WILL_HIGH) is picked first in step 4 for E, then C for F; C also covers E, so
    // B is redundant and removed.
    let r4 = reach(&[(B, &[E]), (C, &[E, F]), (D, &[F])]);
    let n4 = nbrs(&[(B, WILL_HIGH), (C, 3), (D, 3)]);
    assert_eq!(select_mpr(&n4, &r4, 1), [C].into());
}

/// A random 1-hop/2-hop bipartite structure: neighbour i reaches the strict 2-hop nodes whose
/// bits are set in `masks[i]` (n2 of them).
fn instance(masks: &[u16], n2: usize, wills: &[u8]) -> (BTreeMap<Addr, u8>, BTreeMap<Addr, BTreeSet<Addr>>) {
    let one = |i: usize| Addr::new(10, 1, 0, i as u8);
    let two = |j: usize| Addr::new(10, 2, 0, j as u8);
    let mut n = BTreeMap::new();
    let mut r = BTreeMap::new();
    for (i, m) in masks.iter().enumerate() {
        n.insert(one(i), wills[i % wills.len()]);
        let mut xs: BTreeSet<Addr> = (0..n2).filter(|j| m >> j & 1 == 1).map(two).collect();
        // Some non-strict entries (other 1-hop neighbours) that must be ignored.
        if m & 0x8000 != 0 {
            xs.insert(one((i + 1) % masks.len()));
        }
        r.insert(one(i), xs);
    }
    (n, r)
}

/// Strict 2-hop nodes each reaches, as bitmasks, for the willing neighbours only.
fn covers(n: &BTreeMap<Addr, u8>, r: &BTreeMap<Addr, BTreeSet<Addr>>) -> BTreeMap<Addr, u32> {
    n.iter()
        .filter(|(_, w)| **w != WILL_NEVER)
        .map(|(y, _)| {
            let m = r[y]
                .iter()
                .filter(|x| !n.contains_key(x))
                .fold(0u32, |m, x| m | 1 << x.octets()[3]);
            (*y, m)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    // §8.3.1 with equal willingness: the MPR set covers every strict 2-hop neighbour, and is at
    // most H(d) times the minimum cover (exhaustive search), d = the most strict 2-hop
    // neighbours one neighbour covers: the greedy set-cover bound (forced picks of step 3 are
    // in every cover; step 5 only removes).
    #[test]
    fn mpr_covers_and_is_within_greedy_bound(
        masks in prop::collection::vec(any::<u16>(), 1..=8),
        n2 in 1usize..=12,
    ) {
        let (n, r) = instance(&masks, n2, &[WILL_DEFAULT]);
        let mpr = select_mpr(&n, &r, 1);
        let cov = covers(&n, &r);
        let all = cov.values().fold(0u32, |a, m| a | m);
        let got = mpr.iter().fold(0u32, |a, y| a | cov[y]);
        prop_assert_eq!(got, all, "every strict 2-hop neighbour covered");
        let ys: Vec<u32> = cov.values().copied().collect();
        let opt = (0u32..1 << ys.len())
            .filter(|s| (0..ys.len()).filter(|i| s >> i & 1 == 1).fold(0, |a, i| a | ys[i]) == all)
            .map(|s| s.count_ones())
            .min()
            .unwrap();
        let d = ys.iter().map(|m| m.count_ones()).max().unwrap_or(0);
        let h: f64 = (1..=d).map(|k| 1.0 / k as f64).sum();
        prop_assert!(mpr.len() as f64 <= h.max(1.0) * opt as f64 + 1e-9,
            "|MPR| = {} > H({d}) = {h:.3} × OPT = {opt}", mpr.len());
    }

    // §8.3.1 with mixed willingness and MPR_COVERAGE: WILL_NEVER is never chosen, WILL_ALWAYS
    // always; each strict 2-hop neighbour reachable through willing neighbours has
    // min(MPR_COVERAGE, its willing providers) MPRs; the set is a subset of the neighbours.
    #[test]
    fn mpr_respects_willingness_and_coverage(
        masks in prop::collection::vec(any::<u16>(), 1..=10),
        n2 in 1usize..=12,
        wills in prop::collection::vec(prop::sample::select(vec![0u8, 1, 3, 6, 7]), 1..=10),
        k in 1u32..=3,
    ) {
        let (n, r) = instance(&masks, n2, &wills);
        let mpr = select_mpr(&n, &r, k);
        for y in &mpr {
            prop_assert!(n.contains_key(y));
            prop_assert_ne!(n[y], WILL_NEVER);
        }
        for (y, w) in &n {
            if *w == WILL_ALWAYS {
                prop_assert!(mpr.contains(y));
            }
        }
        let cov = covers(&n, &r);
        for j in 0..n2 {
            let providers = cov.values().filter(|m| *m >> j & 1 == 1).count();
            let chosen = mpr.iter().filter(|y| cov[*y] >> j & 1 == 1).count();
            prop_assert!(chosen >= providers.min(k as usize), "2-hop {j}: {chosen} of {providers}");
        }
    }
}

// ------------------------------------------------------------------ config, timers

// RFC 3626 §18: the defaults and their validation.
#[test]
fn config_rfc_values_and_validation() {
    let c = OlsrConfig::rfc();
    assert_eq!(c.hello_interval, SimDuration::from_secs(2));
    assert_eq!(c.refresh_interval, SimDuration::from_secs(2));
    assert_eq!(c.tc_interval, SimDuration::from_secs(5));
    assert_eq!(c.neighb_hold_time, SimDuration::from_secs(6));
    assert_eq!(c.top_hold_time, SimDuration::from_secs(15));
    assert_eq!(c.dup_hold_time, SimDuration::from_secs(30));
    assert_eq!(c.max_jitter, SimDuration::from_millis(500));
    assert_eq!((c.willingness, c.tc_redundancy, c.mpr_coverage), (WILL_DEFAULT, 0, 1));
    assert!(c.validate().is_ok());
    let bad = |f: fn(&mut OlsrConfig)| {
        let mut c = OlsrConfig::rfc();
        f(&mut c);
        c.validate().is_err()
    };
    assert!(bad(|c| c.max_jitter = SimDuration::from_secs(2)));
    assert!(bad(|c| c.willingness = 8));
    assert!(bad(|c| c.mpr_coverage = 0));
    assert!(bad(|c| c.tc_redundancy = 3));
    assert!(bad(|c| c.neighb_hold_time = SimDuration::from_secs(1)));
    assert!(bad(|c| c.top_hold_time = SimDuration::from_secs(5000)));
}

// RFC 3626 §3.5 / RFC 5148 §5.1: the first HELLO comes within MAXJITTER of time zero, the
// following ones every HELLO_INTERVAL − U(0, MAXJITTER); packet sequence numbers count up
// (§3.3.1) and so do message sequence numbers.
#[test]
fn hello_schedule_and_sequence_numbers() {
    let mut d = Driver::new(OlsrConfig::rfc());
    d.run(t(30.0));
    let times: Vec<SimTime> = d.hellos(SimTime::ZERO).iter().map(|(t, _)| *t).collect();
    assert!(times[0] <= t(0.5));
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            gap >= SimDuration::from_millis(1500) && gap <= SimDuration::from_secs(2),
            "{gap}"
        );
    }
    assert!(times.len() >= 15 && times.len() <= 21);
    let seqs: Vec<u16> = d.sent.iter().map(|(_, p)| p.seq).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
    let mseqs: Vec<u16> = d.messages(SimTime::ZERO).map(|(_, m)| m.seq).collect();
    assert!(mseqs.windows(2).all(|w| w[1] == w[0] + 1));
    assert_eq!(d.n.stats().hello_sent as usize, times.len());
    // Same seed, same schedule.
    let mut d2 = Driver::new(OlsrConfig::rfc());
    d2.run(t(30.0));
    assert_eq!(
        d2.hellos(SimTime::ZERO).iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        times
    );
}

// RFC 3626 §15.1: TC_REDUNDANCY 2 advertises every symmetric neighbour, 1 the MPR selectors and
// the MPR set, so a node without selectors still sends TCs.
#[test]
fn tc_redundancy_widens_the_advertised_set() {
    for (red, want) in [(2u8, vec![B, D]), (1, vec![B])] {
        let mut cfg = OlsrConfig::rfc();
        cfg.tc_redundancy = red;
        let mut d = Driver::new(cfg);
        d.rx(t(1.0), B, &hello(B, 1, &[(L::Asym, N::Not, &[A])]));
        d.rx(t(1.0), D, &hello(D, 1, &[(L::Asym, N::Not, &[A])]));
        // B reaches C (so B is our MPR); neither selects us.
        d.rx(t(1.1), B, &hello(B, 2, &[(L::Sym, N::Sym, &[A, C])]));
        d.rx(t(1.1), D, &hello(D, 2, &[(L::Sym, N::Sym, &[A])]));
        d.run(t(5.5));
        let tcs = d.tcs(SimTime::ZERO);
        assert_eq!(tcs.len(), 1, "TC_REDUNDANCY {red}");
        assert_eq!(
            tcs[0].1.body,
            Body::Tc(Tc {
                ansn: 1,
                advertised: want
            })
        );
    }
}
