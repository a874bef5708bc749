//! Test support: the two-endpoint harness of the transports' pair tests (quinn's
//! `tests/util.rs` `Pair`, in spirit).
//!
//! [`Pair`] holds two endpoints, the simulated clock and the packets in flight between them,
//! delivered in order of arrival time (ties in order of sending). Each transport's pair tests
//! wrap it with their own applications, checks and path model (latency, bottleneck, faults);
//! every [`Transport`] is an endpoint. [`Driver`] runs the
//! arrivals and timers due at the current time for a harness that checks each endpoint's
//! output and events in one `pump`. [`Faults`] is the scripted fault injector of the TCP pair
//! tests and [`SplitMix`] the seeded generator of the others.

use crate::{Segment, Transport};
use proptest::test_runner::TestCaseError;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use tpsim_core::{SimDuration, SimTime};

/// A packet on its way to endpoint `to`, with what the harness noted when it was sent.
pub(crate) struct Flight<X = ()> {
    /// Arrival time.
    pub at: SimTime,
    /// Sending order (breaks ties between equal arrival times).
    pub order: u64,
    /// The receiving endpoint (0 or 1).
    pub to: usize,
    /// The packet.
    pub seg: Segment,
    /// The harness's note.
    pub note: X,
}

// A min-heap on (arrival, order) through BinaryHeap's max-heap.
impl<X> Ord for Flight<X> {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.order).cmp(&(self.at, self.order))
    }
}
impl<X> PartialOrd for Flight<X> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<X> PartialEq for Flight<X> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.order) == (o.at, o.order)
    }
}
impl<X> Eq for Flight<X> {}

/// Two endpoints, the clock, and the packets in flight between them.
pub(crate) struct Pair<E, X = ()> {
    /// The current time.
    pub now: SimTime,
    /// The endpoints: 0 is the client (active open), 1 the server.
    pub socks: [E; 2],
    inflight: BinaryHeap<Flight<X>>,
    order: u64,
}

impl<E: Transport, X> Pair<E, X> {
    /// The endpoints at time zero, nothing in flight.
    pub fn new(socks: [E; 2]) -> Self {
        Pair {
            now: SimTime::ZERO,
            socks,
            inflight: BinaryHeap::new(),
            order: 0,
        }
    }

    /// Puts `seg` on its way to endpoint `to`, arriving at `at`.
    pub fn push(&mut self, at: SimTime, to: usize, seg: Segment, note: X) {
        self.order += 1;
        self.inflight.push(Flight {
            at,
            order: self.order,
            to,
            seg,
            note,
        });
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// The earliest arrival.
    pub fn next_arrival(&self) -> Option<SimTime> {
        self.inflight.peek().map(|f| f.at)
    }

    /// The earliest arrival or timer deadline, and any of `more`.
    pub fn next_time(&self, more: impl IntoIterator<Item = Option<SimTime>>) -> Option<SimTime> {
        let timers = self.socks.iter().map(|s| s.poll_timeout());
        [self.next_arrival()]
            .into_iter()
            .chain(timers)
            .chain(more)
            .flatten()
            .min()
    }

    /// The earliest packet due by now (arrived at or before it), taken off the path.
    pub fn pop_due(&mut self) -> Option<Flight<X>> {
        let now = self.now;
        self.inflight
            .peek()
            .is_some_and(|f| f.at <= now)
            .then(|| self.inflight.pop().expect("peeked"))
    }

    /// Whether endpoint `i` has a timer due by now.
    pub fn timer_due(&self, i: usize) -> bool {
        self.socks[i].poll_timeout().is_some_and(|t| t <= self.now)
    }
}

/// A harness that checks everything an endpoint emits in one `pump` after each input: the
/// arrivals and timers due are handed to the endpoints by [`Driver::deliver_due`] and
/// [`Driver::fire_timers`], as the engine does.
pub(crate) trait Driver {
    /// The endpoint type.
    type Sock: Transport;
    /// What the harness notes with each packet sent.
    type Note;
    /// The pair of endpoints and the path.
    fn pair(&mut self) -> &mut Pair<Self::Sock, Self::Note>;
    /// Moves endpoint `i`'s packets onto the path and checks its events.
    fn pump(&mut self, i: usize) -> Result<(), TestCaseError>;
    /// Checks after endpoint `f.to` processed `f`, before it is pumped.
    fn arrived(&mut self, _f: &Flight<Self::Note>) -> Result<(), TestCaseError> {
        Ok(())
    }

    /// Hands each packet due by now to its endpoint (in arrival order, including those an
    /// arrival sends that are due too), pumping the endpoint after each.
    fn deliver_due(&mut self) -> Result<(), TestCaseError> {
        while let Some(f) = self.pair().pop_due() {
            let now = self.pair().now;
            self.pair().socks[f.to].on_segment(now, &f.seg);
            self.arrived(&f)?;
            self.pump(f.to)?;
        }
        Ok(())
    }

    /// Expires each endpoint's due timers, pumping it after.
    fn fire_timers(&mut self) -> Result<(), TestCaseError> {
        for i in 0..2 {
            if self.pair().timer_due(i) {
                let now = self.pair().now;
                self.pair().socks[i].on_timeout(now);
                self.pump(i)?;
            }
        }
        Ok(())
    }
}

/// splitmix64: a small seeded generator for a path's coin flips.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A roll in 0..100.
    pub fn percent(&mut self) -> u64 {
        self.next() % 100
    }

    /// True with probability `p` (never when `p` is 0).
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// What happens to one segment, decided by a roll in 0..100 (0 is always "deliver", so that
/// shrinking a failing script heads towards a clean path).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Roll {
    pub r: u8,
    /// Extra delay for reordered or duplicated copies, in 1/255ths of three latencies.
    pub delay: u8,
}

/// A scripted fault injector: per direction, the roll of each segment sent, and segments
/// dropped outright.
#[derive(Clone, Debug, Default)]
pub(crate) struct Faults {
    /// Percent of segments dropped, duplicated, delayed (reordered).
    pub loss: u8,
    pub dup: u8,
    pub reorder: u8,
    /// Per direction (0: client to server, 1: back), the roll of the k-th segment sent; segments
    /// beyond the script are delivered.
    pub rolls: [Vec<Roll>; 2],
    /// Per direction, indices of segments to drop outright.
    pub drops: [Vec<usize>; 2],
    /// Per direction, times: the first data segment sent at or after each is dropped.
    pub drop_after: [Vec<SimTime>; 2],
    /// Per direction, stream offsets: the first transmission of the segment starting there
    /// is dropped (retransmissions get through).
    pub drop_first_tx: [Vec<u64>; 2],
}

/// The fate of one segment under [`Faults`]: the delays after the path's own of the copies
/// that arrive (none, one or two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    Drop,
    Deliver(SimDuration),
    Duplicate(SimDuration, SimDuration),
}

impl Faults {
    /// The fate of the `k`-th segment sent from end `from` over a path of one-way `latency`,
    /// by its roll.
    pub fn fate(&self, from: usize, k: usize, latency: SimDuration) -> Fate {
        let roll = self.rolls[from].get(k).copied().unwrap_or_default();
        let drop_at = 100 - self.loss;
        let dup_at = drop_at - self.dup;
        let reorder_at = dup_at - self.reorder;
        let extra = SimDuration(latency.0 * 3 * roll.delay as u64 / 255);
        if roll.r >= drop_at {
            Fate::Drop
        } else if roll.r >= dup_at {
            Fate::Duplicate(SimDuration::ZERO, SimDuration(extra.0 / 2))
        } else if roll.r >= reorder_at {
            Fate::Deliver(extra)
        } else {
            Fate::Deliver(SimDuration::ZERO)
        }
    }
}

impl<E: Transport, X: Clone> Pair<E, X> {
    /// Sends `seg` from end `from` to its peer by `fate`, the copies arriving at `base` plus
    /// their extra delays.
    pub fn send_by(&mut self, fate: Fate, from: usize, base: SimTime, seg: Segment, note: X) {
        let to = 1 - from;
        match fate {
            Fate::Drop => {}
            Fate::Deliver(d) => self.push(base + d, to, seg, note),
            Fate::Duplicate(d1, d2) => {
                self.push(base + d1, to, seg.clone(), note.clone());
                self.push(base + d2, to, seg, note);
            }
        }
    }
}

/// Random [`Faults`]: up to 30 % loss, 10 % duplicates and 20 % reordered, each direction's
/// rolls scripted for up to `script_len` segments.
pub(crate) fn faults_strategy(script_len: usize) -> impl proptest::strategy::Strategy<Value = Faults> {
    use proptest::prelude::*;
    let roll = (0u8..100, any::<u8>()).prop_map(|(r, delay)| Roll { r, delay });
    let script = move || proptest::collection::vec(roll.clone(), 0..script_len);
    (0u8..=30, 0u8..=10, 0u8..=20, script(), script()).prop_map(|(loss, dup, reorder, a, b)| Faults {
        loss,
        dup,
        reorder,
        rolls: [a, b],
        ..Faults::default()
    })
}

/// Implements [`Driver`] for a pair-test harness `$harness` that keeps its [`Pair`] in a
/// field `net` and has an inherent `pump`; `arrived = path` names its check after each
/// arrival.
macro_rules! driver {
    ($harness:ty, $sock:ty, $note:ty $(, arrived = $arrived:path)?) => {
        impl $crate::testkit::Driver for $harness {
            type Sock = $sock;
            type Note = $note;
            fn pair(&mut self) -> &mut $crate::testkit::Pair<$sock, $note> {
                &mut self.net
            }
            fn pump(&mut self, i: usize) -> Result<(), proptest::test_runner::TestCaseError> {
                <$harness>::pump(self, i)
            }
            $(
                fn arrived(
                    &mut self,
                    f: &$crate::testkit::Flight<$note>,
                ) -> Result<(), proptest::test_runner::TestCaseError> {
                    $arrived(self, f)
                }
            )?
        }
    };
}
pub(crate) use driver;
