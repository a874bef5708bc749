//! Property tests of the DCF against random traffic and random medium activity.
//!
//! One station under test (address 1) sends MSDUs that arrive at random times, to a peer
//! (address 2) that answers its RTS/DATA with CTS/Ack only when a coin says so, or to the
//! broadcast address. Random outside activity overlaps everything: plain energy (CCA busy, no
//! frame), decodable foreign frames (address 3 to 4) whose Duration sets the NAV, and
//! undecodable ones (EIFS). Overlapping receptions are undecodable; a station that is
//! transmitting receives nothing. Properties:
//!
//! 1. The MAC never starts a frame of its own initiative (RTS, DATA not following a CTS) while
//!    the medium is busy, except at the very instant it turned busy (a same-instant start that
//!    CCA cannot see, which is how collisions happen); never before the medium has been idle
//!    for DIFS (EIFS after an undecodable frame, when enabled) since the last busy period and
//!    since its own last transmission; and never before the NAV + DIFS.
//! 2. DATA after a CTS goes out exactly SIFS after the CTS; the MAC never transmits while
//!    transmitting.
//! 3. Every MSDU handed to the MAC gets exactly one `TxOk` or `TxFailed`, and the MAC keeps
//!    making progress (its timer never lies in the past after it was served).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use proptest::prelude::*;
use tpsim_core::{Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};
use tpsim_mac::{Dcf, DcfConfig, Frame, FrameKind, MacEvent, Msdu, BROADCAST};
use tpsim_phy::WifiRate;

const ME: u32 = 1;
const PEER: u32 = 2;

#[derive(Clone, Debug)]
struct Ext {
    start: SimTime,
    end: SimTime,
    /// 0: energy only, 1: decodable foreign frame, 2: undecodable frame.
    kind: u8,
    nav: SimDuration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    // Declaration order = processing order at equal times.
    OwnTxEnd,
    RespEnd,
    ExtEnd(usize),
    ExtStart(usize),
    RespStart,
    Arrival(usize),
}

struct Harness {
    dcf: Dcf,
    cfg: DcfConfig,
    now: SimTime,
    heap: BinaryHeap<Reverse<(SimTime, Ev)>>,
    ext: Vec<Ext>,
    arrivals: Vec<(SimTime, u32)>,
    queue: VecDeque<Msdu>,
    coins: Vec<bool>,
    coin_idx: usize,
    // The medium as the MAC sees it.
    busy: u32,
    idle_since: SimTime,
    busy_since: SimTime,
    eifs_flag: bool,
    nav: SimTime,
    // Our own transmissions and the peer's responses, for overlap checks.
    own_tx: Option<(Frame, SimTime)>,
    own_intervals: Vec<(SimTime, SimTime)>,
    last_own_end: SimTime,
    response: Option<(Frame, SimTime, SimTime)>,
    resp_intervals: Vec<(SimTime, SimTime)>,
    data_after_cts_at: Option<SimTime>,
    outcomes: Vec<u64>,
}

fn overlaps(a: (SimTime, SimTime), b: (SimTime, SimTime)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

impl Harness {
    fn busy_inc(&mut self) {
        self.busy += 1;
        if self.busy == 1 {
            self.busy_since = self.now;
            self.dcf.on_medium_busy(self.now);
        }
    }
    fn busy_dec(&mut self) {
        self.busy -= 1;
        if self.busy == 0 {
            self.idle_since = self.now;
            self.dcf.on_medium_idle(self.now);
        }
    }
    fn coin(&mut self) -> bool {
        let c = self.coins[self.coin_idx % self.coins.len()];
        self.coin_idx += 1;
        c
    }
    fn transmitting_during(&self, iv: (SimTime, SimTime)) -> bool {
        self.own_intervals.iter().any(|&o| overlaps(o, iv))
    }
    fn rx_error(&mut self) {
        self.dcf.on_rx_error(self.now);
        self.eifs_flag = self.cfg.use_eifs;
    }

    /// Polls the MAC after an input, checking every frame it starts. After `on_timeout` the
    /// timer must have moved on.
    fn drive(&mut self, served_timer: bool) -> Result<(), TestCaseError> {
        let now = self.now;
        loop {
            if let Some(f) = self.dcf.poll_transmit(now) {
                prop_assert!(self.own_tx.is_none(), "transmitting while transmitting at {}", now);
                let after_cts = f.kind == FrameKind::Data && self.data_after_cts_at == Some(now);
                self.data_after_cts_at = None;
                if !after_cts {
                    prop_assert!(
                        matches!(f.kind, FrameKind::Rts | FrameKind::Data),
                        "unsolicited {:?} at {}",
                        f.kind,
                        now
                    );
                    prop_assert!(
                        self.busy == 0 || self.busy_since == now,
                        "{:?} while busy since {} at {}",
                        f.kind,
                        self.busy_since,
                        now
                    );
                    let ifs = if self.eifs_flag {
                        self.cfg.eifs()
                    } else {
                        self.cfg.difs()
                    };
                    prop_assert!(
                        now >= self.idle_since + ifs,
                        "{:?} at {} only {} after idle (eifs {})",
                        f.kind,
                        now,
                        now.saturating_since(self.idle_since),
                        self.eifs_flag
                    );
                    prop_assert!(
                        now >= self.last_own_end + self.cfg.difs(),
                        "{:?} at {} too soon after own tx",
                        f.kind,
                        now
                    );
                    prop_assert!(
                        now >= self.nav + self.cfg.difs(),
                        "{:?} at {} under NAV until {}",
                        f.kind,
                        now,
                        self.nav
                    );
                }
                let end = now + f.airtime;
                self.own_tx = Some((f, end));
                self.own_intervals.push((now, end));
                self.heap.push(Reverse((end, Ev::OwnTxEnd)));
                continue;
            }
            match self.dcf.poll_event() {
                Some(MacEvent::TxOk { handle }) | Some(MacEvent::TxFailed { handle, .. }) => {
                    self.outcomes.push(handle);
                    if let Some(m) = self.queue.pop_front() {
                        self.dcf.send(now, m);
                    }
                }
                Some(MacEvent::Delivered { .. }) => prop_assert!(false, "nobody sends DATA to us"),
                None => break,
            }
        }
        if served_timer {
            if let Some(t) = self.dcf.poll_timeout() {
                prop_assert!(t > now, "timer {} not after now {} after being served", t, now);
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::Arrival(i) => {
                let (_, dst) = self.arrivals[i];
                let m = Msdu {
                    dst,
                    bytes: 200 + 97 * i as u32 % 1300,
                    handle: i as u64,
                };
                if self.dcf.ready() && self.queue.is_empty() {
                    self.dcf.send(now, m);
                } else {
                    self.queue.push_back(m);
                }
            }
            Ev::ExtStart(_) => self.busy_inc(),
            Ev::ExtEnd(i) => {
                let e = self.ext[i].clone();
                let iv = (e.start, e.end);
                let clean = e.kind == 1
                    && !self
                        .ext
                        .iter()
                        .enumerate()
                        .any(|(j, o)| j != i && overlaps((o.start, o.end), iv))
                    && !self.resp_intervals.iter().any(|&r| overlaps(r, iv))
                    && !self.transmitting_during(iv);
                let receiving = self.own_tx.is_none();
                if e.kind != 0 && receiving {
                    if clean {
                        let f = Frame {
                            kind: FrameKind::Data,
                            src: 3,
                            dst: 4,
                            bytes: 100,
                            rate: self.cfg.data_rate,
                            airtime: SimDuration(e.end.0 - e.start.0),
                            duration_nav: e.nav,
                            seq: i as u16,
                            retry: false,
                            handle: 1_000_000 + i as u64,
                        };
                        self.dcf.on_rx(now, &f);
                        self.eifs_flag = false;
                        self.nav = self.nav.max(now + e.nav);
                    } else {
                        self.rx_error();
                    }
                }
                self.busy_dec();
            }
            Ev::OwnTxEnd => {
                let (f, _) = self.own_tx.take().expect("own tx");
                self.last_own_end = now;
                self.dcf.on_tx_end(now);
                let wants_answer = f.dst == PEER && matches!(f.kind, FrameKind::Rts | FrameKind::Data);
                if wants_answer && self.coin() {
                    let (kind, airtime) = match f.kind {
                        FrameKind::Rts => (FrameKind::Cts, self.cfg.cts_airtime()),
                        _ => (FrameKind::Ack, self.cfg.ack_airtime()),
                    };
                    let start = now + self.cfg.sifs();
                    let nav = match kind {
                        FrameKind::Cts => SimDuration(f.duration_nav.0.saturating_sub(self.cfg.sifs().0 + airtime.0)),
                        _ => SimDuration::ZERO,
                    };
                    let resp = Frame {
                        kind,
                        src: PEER,
                        dst: ME,
                        bytes: 14,
                        rate: self.cfg.basic_rate,
                        airtime,
                        duration_nav: nav,
                        seq: f.seq,
                        retry: false,
                        handle: f.handle,
                    };
                    self.response = Some((resp, start, start + airtime));
                    self.heap.push(Reverse((start, Ev::RespStart)));
                }
            }
            Ev::RespStart => {
                let (_, s, e) = self.response.expect("response");
                self.resp_intervals.push((s, e));
                self.heap.push(Reverse((e, Ev::RespEnd)));
                self.busy_inc();
            }
            Ev::RespEnd => {
                let (f, s, e) = self.response.take().expect("response");
                let clean = !self.ext.iter().any(|o| overlaps((o.start, o.end), (s, e)));
                if clean {
                    self.dcf.on_rx(now, &f);
                    self.eifs_flag = false;
                    if f.kind == FrameKind::Cts {
                        self.data_after_cts_at = Some(now + self.cfg.sifs());
                    }
                } else {
                    self.rx_error();
                }
                self.busy_dec();
            }
        }
    }

    fn run(&mut self) -> Result<(), TestCaseError> {
        for step in 0.. {
            prop_assert!(step < 200_000, "no progress");
            let next_ev = self.heap.peek().map(|Reverse((t, _))| *t);
            let next_timer = self.dcf.poll_timeout();
            let served_timer = match (next_ev, next_timer) {
                (None, None) => break,
                (Some(te), tt) if event_first(tt, te) => {
                    let Reverse((t, ev)) = self.heap.pop().unwrap();
                    prop_assert!(t >= self.now);
                    self.now = t;
                    self.handle(ev);
                    false
                }
                (_, Some(tt)) => {
                    prop_assert!(tt >= self.now);
                    self.now = tt;
                    self.dcf.on_timeout(tt);
                    true
                }
                (Some(_), None) => unreachable!(),
            };
            self.drive(served_timer)?;
        }
        Ok(())
    }
}

/// Whether a harness event at `event` goes before the MAC's timer `timer` (ties: the event).
fn event_first(timer: Option<SimTime>, event: SimTime) -> bool {
    match timer {
        None => true,
        Some(t) => t >= event,
    }
}

fn us(x: u64) -> SimTime {
    SimTime(x * 1_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn dcf_respects_carrier_sense_and_resolves_every_msdu(
        gaps in prop::collection::vec((0u64..30_000, any::<bool>()), 1..25),
        ext in prop::collection::vec((0u64..400_000, 1u64..4_000, 0u8..3, 0u64..6_000), 0..40),
        coins in prop::collection::vec(prop::bool::weighted(0.7), 1..32),
        ofdm in any::<bool>(),
        rts in any::<bool>(),
        use_eifs in any::<bool>(),
        rts_nav_reset in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut cfg = DcfConfig::new(if ofdm { WifiRate::Ofdm6 } else { WifiRate::Dsss1 });
        cfg.rts_threshold_bytes = rts.then_some(400);
        cfg.use_eifs = use_eifs;
        cfg.rts_nav_reset = rts_nav_reset;
        let key = StreamKey { seed, run: 0, kind: OwnerKind::Node, owner_id: 1, module: Module::MacBackoff };
        let mut h = Harness {
            dcf: Dcf::new(cfg, ME, RngStream::new(key)),
            cfg,
            now: SimTime::ZERO,
            heap: BinaryHeap::new(),
            ext: ext.iter().map(|&(s, l, kind, nav)| Ext { start: us(s), end: us(s + l), kind, nav: SimDuration::from_micros(nav) }).collect(),
            arrivals: vec![],
            queue: VecDeque::new(),
            coins,
            coin_idx: 0,
            busy: 0,
            idle_since: SimTime::ZERO,
            busy_since: SimTime::ZERO,
            eifs_flag: false,
            nav: SimTime::ZERO,
            own_tx: None,
            own_intervals: vec![],
            last_own_end: SimTime::ZERO,
            response: None,
            resp_intervals: vec![],
            data_after_cts_at: None,
            outcomes: vec![],
        };
        let mut t = 0;
        for (i, &(gap, broadcast)) in gaps.iter().enumerate() {
            t += gap;
            h.arrivals.push((us(t), if broadcast { BROADCAST } else { PEER }));
            h.heap.push(Reverse((us(t), Ev::Arrival(i))));
        }
        for (i, e) in h.ext.iter().enumerate() {
            h.heap.push(Reverse((e.start, Ev::ExtStart(i))));
            h.heap.push(Reverse((e.end, Ev::ExtEnd(i))));
        }
        h.run()?;

        let mut outcomes = h.outcomes.clone();
        outcomes.sort_unstable();
        let expected: Vec<u64> = (0..gaps.len() as u64).collect();
        prop_assert_eq!(outcomes, expected, "every MSDU exactly one TxOk/TxFailed");
        let st = h.dcf.stats();
        prop_assert_eq!(st.tx_ok + st.drops_retry_limit, st.msdus);
        prop_assert!(h.dcf.ready());
    }
}
