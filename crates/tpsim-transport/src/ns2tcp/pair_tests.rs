//! A sender and a sink over a simulated path (as `tcp/pair_tests.rs`): a fixed one-way
//! latency and a scripted fault injector that drops, duplicates or delays (reorders) each
//! packet, data and ACKs alike. The application writes messages of random sizes at random
//! times; the property is the message contract: every message is delivered exactly once, in
//! order, with the `first_tx` of its first packet, and the sender never has more than
//! `window_` packets past the last ACK. SACK blocks (Sack1) must lie above the ACK they ride
//! on, at most `maxSackBlocks_` (≤ 3) of them, each adding 8 bytes to the ACK.

use super::*;
use crate::tcp::Open;
use proptest::prelude::*;
use tpsim_wire::SizeConvention;

#[derive(Clone, Copy, Debug, Default)]
struct Roll {
    r: u8,
    delay: u8,
}

#[derive(Clone, Debug, Default)]
struct Faults {
    loss: u8,
    dup: u8,
    reorder: u8,
    /// Per direction (0: data, 1: ACKs), the roll of the k-th packet.
    rolls: [Vec<Roll>; 2],
}

#[derive(Clone, Debug)]
struct Scenario {
    ns2: Ns2TcpConfig,
    latency_ms: u64,
    /// (time of the write in ms, bytes)
    writes: Vec<(u64, u32)>,
    faults: Faults,
}

struct Flight {
    at: SimTime,
    order: u64,
    to: usize,
    seg: Segment,
}

struct Pair {
    now: SimTime,
    ns2: Ns2TcpConfig,
    socks: [Ns2TcpSocket; 2],
    latency: SimDuration,
    faults: Faults,
    writes: Vec<(SimTime, u32)>,
    next_write: usize,
    written: Vec<Message>,
    /// When each written message's first packet was first sent.
    first_sent: Vec<Option<SimTime>>,
    delivered: u64,
    sent: [usize; 2],
    inflight: Vec<Flight>,
    order: u64,
}

impl Pair {
    fn new(sc: &Scenario) -> Pair {
        let cfg = |local, remote| SocketConfig {
            local_port: local,
            remote_port: remote,
            sizes: SizeConvention::Ns2,
            mtu: 1500,
        };
        let mut writes: Vec<(SimTime, u32)> = sc
            .writes
            .iter()
            .map(|&(at, len)| (SimTime::ZERO + SimDuration::from_millis(at), len))
            .collect();
        writes.sort_by_key(|w| w.0);
        Pair {
            now: SimTime::ZERO,
            ns2: sc.ns2,
            socks: [
                Ns2TcpSocket::new(cfg(49152, 1024), sc.ns2, Open::Active, SimTime::ZERO),
                Ns2TcpSocket::new(cfg(1024, 49152), sc.ns2, Open::Passive, SimTime::ZERO),
            ],
            latency: SimDuration::from_millis(sc.latency_ms),
            faults: sc.faults.clone(),
            writes,
            next_write: 0,
            written: Vec::new(),
            first_sent: Vec::new(),
            delivered: 0,
            sent: [0, 0],
            inflight: Vec::new(),
            order: 0,
        }
    }

    fn last_packet(&self) -> i64 {
        let size = self.ns2.packet_size;
        let data: i64 = self.written.iter().map(|m| m.len.div_ceil(size).max(1) as i64).sum();
        data - if self.ns2.syn { 0 } else { 1 }
    }

    fn done(&self) -> bool {
        self.next_write == self.writes.len()
            && self.delivered == self.written.len() as u64
            && self.socks[0].highest_ack() == self.last_packet()
    }

    fn next_time(&self) -> Option<SimTime> {
        let mut next = self.inflight.iter().map(|f| f.at).min();
        let mut consider = |t: Option<SimTime>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n: SimTime| n.min(t)));
            }
        };
        consider(self.writes.get(self.next_write).map(|w| w.0));
        consider(self.socks[0].poll_timeout());
        consider(self.socks[1].poll_timeout());
        next
    }

    fn step(&mut self) -> Result<bool, TestCaseError> {
        if self.done() {
            return Ok(false);
        }
        let Some(next) = self.next_time() else {
            return Ok(false);
        };
        prop_assert!(next >= self.now, "time went back");
        self.now = next;
        let now = self.now;
        while self.writes.get(self.next_write).is_some_and(|w| w.0 <= now) {
            let len = self.writes[self.next_write].1;
            self.next_write += 1;
            let m = Message {
                id: self.written.len() as u64,
                len,
                created: now,
            };
            self.socks[0].send(now, m).expect("the sender accepts every write");
            self.written.push(m);
            self.first_sent.push(None);
            self.pump(0)?;
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

    fn pump(&mut self, i: usize) -> Result<(), TestCaseError> {
        while let Some(seg) = self.socks[i].poll_transmit(self.now) {
            self.check(i, &seg)?;
            self.route(i, seg);
        }
        while let Some(ev) = self.socks[i].poll_event() {
            prop_assert_eq!(i, 1, "only the sink delivers");
            let TransportEvent::Delivered { message, first_tx } = ev else {
                return Err(TestCaseError::fail(format!("unexpected {ev:?}")));
            };
            prop_assert_eq!(message.id, self.delivered, "in order, exactly once");
            prop_assert_eq!(message, self.written[message.id as usize]);
            prop_assert_eq!(Some(first_tx), self.first_sent[message.id as usize]);
            prop_assert!(first_tx <= self.now && first_tx >= message.created);
            self.delivered += 1;
        }
        Ok(())
    }

    /// Sizes, headers and the window bound of every packet.
    fn check(&mut self, from: usize, seg: &Segment) -> Result<(), TestCaseError> {
        let L4Header::Tcp(h) = seg.header else {
            return Err(TestCaseError::fail("not TCP"));
        };
        prop_assert_eq!(seg.stream, None);
        let ns2 = self.ns2;
        if from == 1 {
            let nblocks = h.sack.len() as u32;
            prop_assert_eq!(
                (seg.ip_len, seg.payload_len, h.flags),
                (ns2.ack_size + 8 * nblocks, 0, TcpFlags::ACK)
            );
            let max = if ns2.sack_sink() { ns2.max_sack_blocks.min(3) } else { 0 };
            prop_assert!(nblocks <= max, "{} blocks", nblocks);
            let ack = h.ack as u64;
            for &(l, r) in h.sack.as_slice() {
                let (l, r) = (unwrap(l, ack), unwrap(r, ack));
                prop_assert!(ack < l && l < r, "block {}..{} with ACK {}", l, r, ack);
                prop_assert_eq!(pkt_pos(&ns2, pos_pkt(&ns2, l)), l, "blocks start on a packet");
            }
            return Ok(());
        }
        if h.flags.contains(TcpFlags::SYN) {
            prop_assert!(ns2.syn);
            prop_assert_eq!((seg.ip_len, seg.payload_len, h.seq), (ns2.header_size, 0, 0));
            return Ok(());
        }
        prop_assert_eq!(
            (seg.ip_len, seg.payload_len),
            (ns2.packet_size + ns2.header_size, ns2.packet_size)
        );
        let n = pos_pkt(&ns2, unwrap(h.seq, pkt_pos(&ns2, self.socks[0].highest_ack() + 1)));
        let ack = self.socks[0].highest_ack();
        // Sack1 in fast recovery can resend packets between `last_ack_` and a partial ACK
        // (`sack1_send_much`).
        let Role::Sender(s) = &self.socks[0].role else {
            unreachable!("socket 0 sends");
        };
        let floor = if ns2.variant == Ns2Variant::Sack1 {
            s.last_ack
        } else {
            ack
        };
        prop_assert!(
            n > floor && n <= ack + ns2.window as i64,
            "packet {n} sent with ack {ack} (last_ack {})",
            s.last_ack
        );
        // The message each packet belongs to: messages are consecutive packet ranges.
        let mut first = if ns2.syn { 1 } else { 0 };
        for (k, m) in self.written.iter().enumerate() {
            let last = first + m.len.div_ceil(ns2.packet_size).max(1) as i64 - 1;
            if n <= last {
                if n == first && self.first_sent[k].is_none() {
                    self.first_sent[k] = Some(self.now);
                }
                prop_assert_eq!(seg.first_tx, self.first_sent[k].expect("first packet first"));
                prop_assert_eq!(seg.message, (n == last).then_some(*m));
                return Ok(());
            }
            first = last + 1;
        }
        Err(TestCaseError::fail(format!("packet {n} beyond what was written")))
    }

    fn route(&mut self, from: usize, seg: Segment) {
        let k = self.sent[from];
        self.sent[from] += 1;
        let f = &self.faults;
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
            self.push(base, to, seg.clone());
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

    fn run(&mut self) -> Result<(), TestCaseError> {
        let limit = SimTime::ZERO + SimDuration::from_secs(1_000_000);
        let mut steps = 0u64;
        while self.step()? {
            steps += 1;
            prop_assert!(
                steps < 2_000_000 && self.now < limit,
                "no end in sight at {}: ack {} of {}",
                self.now,
                self.socks[0].highest_ack(),
                self.last_packet()
            );
        }
        prop_assert!(self.done(), "stalled at {}", self.now);
        if std::env::var_os("NS2TCP_PAIR_TRACE").is_some() {
            eprintln!(
                "{:?} steps {steps} end {} msgs {} pkts {} sent {:?} {:?}",
                self.ns2.variant,
                self.now,
                self.written.len(),
                self.last_packet(),
                self.sent,
                self.socks[0].report()
            );
        }
        prop_assert_eq!(self.delivered, self.written.len() as u64);
        prop_assert_eq!(self.socks[0].buffered_messages(), 0);
        let r = self.socks[0].report();
        prop_assert!(r.stats.retransmissions <= r.stats.tx_segments);
        prop_assert_eq!(
            self.socks[1].report().stats.ack_segments,
            self.socks[1].stats().tx_segments
        );
        Ok(())
    }
}

/// A clean path: every packet acknowledged by its own ACK, nothing retransmitted, and the
/// padding is exactly the unused space of each message's last packet.
#[test]
fn lossless_transfer_delivers_everything_once() {
    let sc = Scenario {
        ns2: Ns2TcpConfig::default(),
        latency_ms: 20,
        writes: (0..300).map(|i| (i * 7, 100 + (i as u32 * 37) % 3000)).collect(),
        faults: Faults::default(),
    };
    let mut pair = Pair::new(&sc);
    pair.run().unwrap();
    let r = pair.socks[0].report();
    assert_eq!(r.stats.retransmissions, 0);
    assert_eq!((r.timeouts, r.fast_retransmits), (0, 0));
    let padding: u64 = pair
        .written
        .iter()
        .map(|m| (m.len.div_ceil(1000) * 1000 - m.len) as u64)
        .sum();
    assert_eq!(r.extra, vec![("padding_bytes", Some(padding as f64))]);
    let rx = pair.socks[1].stats();
    assert_eq!(rx.ack_segments, r.stats.tx_segments, "one ACK per packet (TCPSink)");
}

/// Two losses in a window: NewReno repairs the second with a partial ACK and no timeout; Reno
/// leaves recovery at the first new ACK and must wait for the timer; Tahoe slow-starts through
/// them; Sack1 resends both holes from its scoreboard in one fast recovery. All deliver
/// everything.
#[test]
fn burst_loss_recovery_differs_by_variant() {
    let mut reports = vec![];
    for variant in [
        Ns2Variant::NewReno,
        Ns2Variant::Reno,
        Ns2Variant::Tahoe,
        Ns2Variant::Sack1,
    ] {
        let mut faults = Faults {
            loss: 1,
            ..Faults::default()
        };
        // Packets sent: the SYN (#0), then 2, 4, 8, 16 per round trip: #20 and #22 lie in the
        // fourth window.
        faults.rolls[0] = (0..40)
            .map(|k| Roll {
                r: if k == 20 || k == 22 { 99 } else { 0 },
                delay: 0,
            })
            .collect();
        let sc = Scenario {
            ns2: Ns2TcpConfig {
                variant,
                ..Ns2TcpConfig::default()
            },
            latency_ms: 50,
            writes: vec![(0, 100_000)],
            faults,
        };
        let mut pair = Pair::new(&sc);
        pair.run().unwrap();
        reports.push(pair.socks[0].report());
    }
    let (newreno, reno, tahoe, sack1) = (&reports[0], &reports[1], &reports[2], &reports[3]);
    assert_eq!((sack1.fast_retransmits, sack1.timeouts), (1, 0), "{sack1:?}");
    assert_eq!(sack1.stats.retransmissions, 2, "{sack1:?}");
    assert_eq!((newreno.fast_retransmits, newreno.timeouts), (1, 0), "{newreno:?}");
    assert_eq!(newreno.stats.retransmissions, 2);
    assert_eq!(reno.fast_retransmits, 1);
    assert!(reno.timeouts >= 1, "{reno:?}");
    assert_eq!((tahoe.fast_retransmits, tahoe.timeouts), (1, 0), "{tahoe:?}");
    assert!(tahoe.stats.retransmissions > 2, "go-back-N resends more: {tahoe:?}");
}

fn faults_strategy() -> impl Strategy<Value = Faults> {
    let roll = (0u8..100, any::<u8>()).prop_map(|(r, delay)| Roll { r, delay });
    let script = || proptest::collection::vec(roll.clone(), 0..1500);
    (0u8..=30, 0u8..=10, 0u8..=20, script(), script()).prop_map(|(loss, dup, reorder, a, b)| Faults {
        loss,
        dup,
        reorder,
        rolls: [a, b],
    })
}

fn scenario_strategy(variant: Ns2Variant) -> impl Strategy<Value = Scenario> {
    let ns2 = (
        prop_oneof![Just(1000u32), Just(512), Just(1460), 1u32..=200],
        1u32..=30,
        1u32..=4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(prop_oneof![
            Just(Ns2TcpConfig::DELACK_INTERVAL),
            (1u64..300).prop_map(SimDuration::from_millis)
        ]),
        (any::<bool>(), any::<bool>(), 0u64..10, 0u32..=4),
    )
        .prop_map(
            move |(
                packet_size,
                window,
                window_init,
                syn,
                singledup,
                ssr,
                delayed_ack,
                (bug_fix, pwd, boot, sack_blocks),
            )| {
                Ns2TcpConfig {
                    variant,
                    packet_size,
                    window,
                    window_init,
                    syn,
                    singledup,
                    slow_start_restart: ssr,
                    bug_fix,
                    partial_window_deflation: pwd,
                    boot_time: SimDuration::from_millis(boot),
                    delayed_ack,
                    max_sack_blocks: sack_blocks,
                    ..Ns2TcpConfig::default()
                }
            },
        );
    let writes = proptest::collection::vec((0u64..5000, 0u32..6000), 1..60);
    (ns2, 1u64..=100, writes, faults_strategy()).prop_map(|(ns2, latency_ms, writes, faults)| Scenario {
        ns2,
        latency_ms,
        writes,
        faults,
    })
}

proptest! {
    // 48 cases per variant keep `cargo test` fast; PROPTEST_CASES=5000 soaks.
    #![proptest_config(ProptestConfig { cases: crate::proptest_cases(48), ..ProptestConfig::default() })]

    /// Every message delivered exactly once, in order, under loss (≤ 30 %), duplication and
    /// reordering of data and ACKs: NewReno.
    #[test]
    fn newreno_delivers_every_message_once_in_order(sc in scenario_strategy(Ns2Variant::NewReno)) {
        Pair::new(&sc).run()?;
    }

    /// The same for Reno.
    #[test]
    fn reno_delivers_every_message_once_in_order(sc in scenario_strategy(Ns2Variant::Reno)) {
        Pair::new(&sc).run()?;
    }

    /// The same for Tahoe.
    #[test]
    fn tahoe_delivers_every_message_once_in_order(sc in scenario_strategy(Ns2Variant::Tahoe)) {
        Pair::new(&sc).run()?;
    }

    /// The same for Sack1 with the SACK sink (0 to 4 blocks per ACK: 0 leaves it only
    /// timeouts, 4 is taken as 3).
    #[test]
    fn sack1_delivers_every_message_once_in_order(sc in scenario_strategy(Ns2Variant::Sack1)) {
        Pair::new(&sc).run()?;
    }
}
