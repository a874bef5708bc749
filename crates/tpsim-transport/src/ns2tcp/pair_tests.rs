//! A sender and a sink over a simulated path (as `tcp/pair_tests.rs`): a fixed one-way
//! latency and a scripted fault injector that drops, duplicates or delays (reorders) each
//! packet, data and ACKs alike. The application writes messages of random sizes at random
//! times; the property is the message contract: every message is delivered exactly once, in
//! order, with the `first_tx` of its first packet, and the sender never has more than
//! `window_` packets past the last ACK. SACK blocks (Sack1) must lie above the ACK they ride
//! on, at most `maxSackBlocks_` (≤ 3) of them, each adding 8 bytes to the ACK.

use super::*;
use crate::tcp::Open;
use crate::testkit::{self, Driver, Faults, Roll};
use proptest::prelude::*;
use tpsim_wire::SizeConvention;

#[derive(Clone, Debug)]
struct Scenario {
    ns2: Ns2TcpConfig,
    latency_ms: u64,
    /// (time of the write in ms, bytes)
    writes: Vec<(u64, u32)>,
    faults: Faults,
}

struct Pair {
    net: testkit::Pair<Ns2TcpSocket>,
    ns2: Ns2TcpConfig,
    latency: SimDuration,
    faults: Faults,
    writes: Vec<(SimTime, u32)>,
    next_write: usize,
    written: Vec<Message>,
    /// When each written message's first packet was first sent.
    first_sent: Vec<Option<SimTime>>,
    delivered: u64,
    sent: [usize; 2],
}

impl Pair {
    fn new(sc: &Scenario) -> Pair {
        let cfg = |local, remote| SocketConfig {
            local_port: local,
            remote_port: remote,
            sizes: SizeConvention::Ns2,
            mtu: 1500,
            draw_seed: 0,
        };
        let mut writes: Vec<(SimTime, u32)> = sc
            .writes
            .iter()
            .map(|&(at, len)| (SimTime::ZERO + SimDuration::from_millis(at), len))
            .collect();
        writes.sort_by_key(|w| w.0);
        Pair {
            net: testkit::Pair::new([
                Ns2TcpSocket::new(cfg(49152, 1024), sc.ns2, Open::Active, SimTime::ZERO),
                Ns2TcpSocket::new(cfg(1024, 49152), sc.ns2, Open::Passive, SimTime::ZERO),
            ]),
            ns2: sc.ns2,
            latency: SimDuration::from_millis(sc.latency_ms),
            faults: sc.faults.clone(),
            writes,
            next_write: 0,
            written: Vec::new(),
            first_sent: Vec::new(),
            delivered: 0,
            sent: [0, 0],
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
            && self.net.socks[0].highest_ack() == self.last_packet()
    }

    fn next_time(&self) -> Option<SimTime> {
        self.net.next_time([self.writes.get(self.next_write).map(|w| w.0)])
    }

    fn step(&mut self) -> Result<bool, TestCaseError> {
        if self.done() {
            return Ok(false);
        }
        let Some(next) = self.next_time() else {
            return Ok(false);
        };
        prop_assert!(next >= self.net.now, "time went back");
        self.net.now = next;
        let now = self.net.now;
        while self.writes.get(self.next_write).is_some_and(|w| w.0 <= now) {
            let len = self.writes[self.next_write].1;
            self.next_write += 1;
            let m = Message {
                id: self.written.len() as u64,
                len,
                created: now,
            };
            self.net.socks[0].send(now, m).expect("the sender accepts every write");
            self.written.push(m);
            self.first_sent.push(None);
            self.pump(0)?;
        }
        // Arrivals are at least one latency (1 ms or more) after the sending: none that the
        // deliveries below cause is due before the next step.
        self.deliver_due()?;
        self.fire_timers()?;
        Ok(true)
    }

    fn pump(&mut self, i: usize) -> Result<(), TestCaseError> {
        while let Some(seg) = self.net.socks[i].poll_transmit(self.net.now) {
            self.check(i, &seg)?;
            self.route(i, seg);
        }
        while let Some(ev) = self.net.socks[i].poll_event() {
            prop_assert_eq!(i, 1, "only the sink delivers");
            let TransportEvent::Delivered { message, first_tx } = ev else {
                return Err(TestCaseError::fail(format!("unexpected {ev:?}")));
            };
            prop_assert_eq!(message.id, self.delivered, "in order, exactly once");
            prop_assert_eq!(message, self.written[message.id as usize]);
            prop_assert_eq!(Some(first_tx), self.first_sent[message.id as usize]);
            prop_assert!(first_tx <= self.net.now && first_tx >= message.created);
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
        let n = pos_pkt(&ns2, unwrap(h.seq, pkt_pos(&ns2, self.net.socks[0].highest_ack() + 1)));
        let ack = self.net.socks[0].highest_ack();
        // Sack1 in fast recovery can resend packets between `last_ack_` and a partial ACK
        // (`sack1_send_much`).
        let Role::Sender(s) = &self.net.socks[0].role else {
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
                    self.first_sent[k] = Some(self.net.now);
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
        let fate = self.faults.fate(from, k, self.latency);
        self.net.send_by(fate, from, self.net.now + self.latency, seg, ());
    }

    fn run(&mut self) -> Result<(), TestCaseError> {
        let limit = SimTime::ZERO + SimDuration::from_secs(1_000_000);
        let mut steps = 0u64;
        while self.step()? {
            steps += 1;
            prop_assert!(
                steps < 2_000_000 && self.net.now < limit,
                "no end in sight at {}: ack {} of {}",
                self.net.now,
                self.net.socks[0].highest_ack(),
                self.last_packet()
            );
        }
        prop_assert!(self.done(), "stalled at {}", self.net.now);
        if std::env::var_os("NS2TCP_PAIR_TRACE").is_some() {
            eprintln!(
                "{:?} steps {steps} end {} msgs {} pkts {} sent {:?} {:?}",
                self.ns2.variant,
                self.net.now,
                self.written.len(),
                self.last_packet(),
                self.sent,
                self.net.socks[0].report()
            );
        }
        prop_assert_eq!(self.delivered, self.written.len() as u64);
        prop_assert_eq!(self.net.socks[0].buffered_messages(), 0);
        let r = self.net.socks[0].report();
        prop_assert!(r.stats.retransmissions <= r.stats.tx_segments);
        prop_assert_eq!(
            self.net.socks[1].report().stats.ack_segments,
            self.net.socks[1].stats().tx_segments
        );
        Ok(())
    }
}

testkit::driver!(Pair, Ns2TcpSocket, ());

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
    let r = pair.net.socks[0].report();
    assert_eq!(r.stats.retransmissions, 0);
    assert_eq!((r.timeouts, r.fast_retransmits), (0, 0));
    let padding: u64 = pair
        .written
        .iter()
        .map(|m| (m.len.div_ceil(1000) * 1000 - m.len) as u64)
        .sum();
    assert_eq!(r.extra, vec![("padding_bytes", Some(padding as f64))]);
    let rx = pair.net.socks[1].stats();
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
        reports.push(pair.net.socks[0].report());
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
    (ns2, 1u64..=100, writes, testkit::faults_strategy(1500)).prop_map(|(ns2, latency_ms, writes, faults)| Scenario {
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
