//! Applications: the traffic generators that hand messages to transport endpoints. Each
//! generator feeds one flow direction through one endpoint and draws its randomness from its
//! own stream. What a generator does with the clock (the next send time) is returned to the
//! world, which schedules it; a bulk sender writes whenever its transport has room.

use tpsim_core::{RngStream, SimDuration, SimTime};
use tpsim_scenario::{AppKind, Arrivals};
use tpsim_transport::Message;

/// How a generator spaces its messages.
#[derive(Clone, Copy, Debug)]
pub enum GenKind {
    /// Every `interval` from the start (CBR).
    Periodic {
        /// Time between messages.
        interval: SimDuration,
    },
    /// Each interval drawn uniformly in interval × [1 − jitter, 1 + jitter] (ns-2 CBR
    /// `random_`).
    Jittered {
        /// Mean time between messages.
        interval: SimDuration,
        /// Relative half-width of the uniform draw.
        jitter: f64,
    },
    /// Exponential intervals (Poisson arrivals).
    Poisson {
        /// Mean interval, s.
        mean_s: f64,
    },
    /// Writes messages whenever the transport accepts them; `remaining` bytes (`None`:
    /// unlimited).
    Bulk {
        /// Bytes still to write.
        remaining: Option<u64>,
    },
}

impl GenKind {
    /// The generator kind of a flow's `app` table.
    pub fn of_app(app: &tpsim_scenario::App) -> GenKind {
        let size = app.size.map(|s| s.0 as u32).unwrap_or(1000);
        let interval = match (app.interval, app.rate) {
            (Some(iv), _) => iv.sim(),
            (None, Some(r)) => SimDuration::from_secs_f64(size as f64 * 8.0 / r.0 as f64),
            (None, None) => SimDuration::ZERO,
        };
        match (app.kind, app.arrivals) {
            (AppKind::Bulk, _) => GenKind::Bulk {
                remaining: app.bytes.map(|b| b.0),
            },
            (_, Arrivals::Periodic) => match app.jitter {
                Some(j) if j > 0.0 => GenKind::Jittered { interval, jitter: j },
                _ => GenKind::Periodic { interval },
            },
            (_, Arrivals::Poisson) => GenKind::Poisson {
                mean_s: interval.as_secs_f64(),
            },
        }
    }
}

/// What a generator does: the flow direction and endpoint it feeds, how it spaces its
/// messages of `size` bytes, when it runs, and at most how many it sends.
#[derive(Clone, Copy, Debug)]
pub struct GenSpec {
    /// The flow direction.
    pub dir: u32,
    /// The endpoint it writes to.
    pub ep: u32,
    /// How it spaces its messages.
    pub kind: GenKind,
    /// Message size, bytes.
    pub size: u32,
    /// First send (bulk: first write).
    pub start: SimTime,
    /// No message at or after this time.
    pub stop: SimTime,
    /// At most this many messages (cbr `count`).
    pub max: u64,
}

struct Generator {
    spec: GenSpec,
    /// Messages sent so far.
    count: u64,
    rng: RngStream,
}

/// What a timed generator does at its send time.
pub struct Emit {
    /// The message to write.
    pub msg: Message,
    /// The flow direction and the endpoint it goes through.
    pub dir: u32,
    /// The endpoint.
    pub ep: u32,
    /// When the next message is due, if the generator goes on.
    pub next: Option<SimTime>,
}

/// Every generator of a run.
#[derive(Default)]
pub struct Apps {
    gens: Vec<Generator>,
}

/// A generator's identity: its index.
pub type GenId = u32;

impl Apps {
    /// Adds generator `spec` drawing from `rng`; returns it and when it first acts (`None`:
    /// never, it stops first).
    pub fn add(&mut self, spec: GenSpec, mut rng: RngStream) -> (GenId, Option<SimTime>) {
        let first = match spec.kind {
            GenKind::Periodic { .. } | GenKind::Jittered { .. } | GenKind::Bulk { .. } => spec.start,
            GenKind::Poisson { mean_s } => spec.start + SimDuration::from_secs_f64(rng.exponential(mean_s)),
        };
        let id = self.gens.len() as GenId;
        self.gens.push(Generator { spec, count: 0, rng });
        (id, (first < spec.stop).then_some(first))
    }

    /// The endpoint generator `g` writes to.
    #[inline]
    pub fn endpoint(&self, g: GenId) -> u32 {
        self.gens[g as usize].spec.ep
    }

    /// Whether `g` is a bulk sender (it writes when its transport has room, not on a clock).
    #[inline]
    pub fn is_bulk(&self, g: GenId) -> bool {
        matches!(self.gens[g as usize].spec.kind, GenKind::Bulk { .. })
    }

    /// Whether `g` has stopped by `now`.
    #[inline]
    pub fn stopped(&self, g: GenId, now: SimTime) -> bool {
        now >= self.gens[g as usize].spec.stop
    }

    /// Timed generator `g`'s send time has come at `now`: its message and its next send
    /// time (`None` once it has stopped or reached its count). `None` if it stopped before
    /// `now`.
    pub fn emit(&mut self, g: GenId, now: SimTime) -> Option<Emit> {
        let g = &mut self.gens[g as usize];
        let spec = g.spec;
        if now >= spec.stop {
            return None;
        }
        let msg = Message {
            id: g.count,
            len: spec.size,
            created: now,
        };
        g.count += 1;
        let next = match spec.kind {
            GenKind::Periodic { interval } => spec.start + SimDuration(interval.0.saturating_mul(g.count)),
            GenKind::Jittered { interval, jitter } => {
                now + SimDuration::from_secs_f64(
                    interval.as_secs_f64() * g.rng.uniform_range(1.0 - jitter, 1.0 + jitter),
                )
            }
            GenKind::Poisson { mean_s } => now + SimDuration::from_secs_f64(g.rng.exponential(mean_s)),
            GenKind::Bulk { .. } => unreachable!("bulk generators do not emit on a clock"),
        };
        Some(Emit {
            msg,
            dir: spec.dir,
            ep: spec.ep,
            next: (next < spec.stop && g.count < spec.max).then_some(next),
        })
    }

    /// The next message bulk sender `g` would write at `now`, with its direction, if it is
    /// active and has bytes left (its transport decides whether it takes it).
    pub fn bulk_next(&self, g: GenId, now: SimTime) -> Option<(Message, u32)> {
        let g = &self.gens[g as usize];
        let GenKind::Bulk { remaining } = g.spec.kind else {
            return None;
        };
        if now < g.spec.start || now >= g.spec.stop || remaining == Some(0) {
            return None;
        }
        let len = remaining.map_or(g.spec.size as u64, |r| r.min(g.spec.size as u64)) as u32;
        Some((
            Message {
                id: g.count,
                len,
                created: now,
            },
            g.spec.dir,
        ))
    }

    /// Bulk sender `g`'s message of `len` bytes was accepted; true if that was its last byte.
    pub fn bulk_wrote(&mut self, g: GenId, len: u32) -> bool {
        let g = &mut self.gens[g as usize];
        g.count += 1;
        match &mut g.spec.kind {
            GenKind::Bulk { remaining: Some(r) } => {
                *r -= len as u64;
                *r == 0
            }
            _ => false,
        }
    }
}
