//! Applications: the traffic generators that hand messages to transport endpoints. Each
//! generator feeds one flow direction through one endpoint and draws its randomness from its
//! own stream. What a generator does with the clock (the next send time) is returned to the
//! world, which schedules it; a bulk sender writes whenever its transport has room.

use tpsim_core::{RngStream, SimDuration, SimTime};
use tpsim_scenario::{AppKind, Arrivals, PeriodDistribution};
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
    /// On-off: a message every `interval` of on time. The on time is a clock that runs only
    /// during on periods, so that a period too short for a message carries its part over to
    /// the next (ns-3's `OnOffApplication` keeps the residual bits the same way) and the
    /// long-run rate is size / interval × on / (on + off).
    OnOff {
        /// On time between messages.
        interval: SimDuration,
        /// On periods.
        on: Period,
        /// Off periods.
        off: Period,
    },
}

/// How the lengths of on (or off) periods are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Period {
    /// Mean length, s.
    pub mean_s: f64,
    /// The distribution.
    pub dist: PeriodDistribution,
    /// Pareto shape α (> 1).
    pub shape: f64,
}

impl Period {
    /// One period length drawn from `rng` (one draw per period, constant periods none): the
    /// exponential by inversion ([`RngStream::exponential`]); the Pareto with scale
    /// x_m = mean (α − 1) / α by inversion, x_m (1 − u)^(−1/α).
    pub fn draw(&self, rng: &mut RngStream) -> SimDuration {
        let s = match self.dist {
            PeriodDistribution::Constant => self.mean_s,
            PeriodDistribution::Exponential => rng.exponential(self.mean_s),
            PeriodDistribution::Pareto => {
                let x_m = self.mean_s * (self.shape - 1.0) / self.shape;
                x_m * libm::pow(1.0 - rng.uniform(), -1.0 / self.shape)
            }
        };
        SimDuration::from_secs_f64(s)
    }
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
        let period = |mean: Option<tpsim_scenario::Duration>| Period {
            mean_s: mean.map_or(1.0, |d| d.secs()),
            dist: app.distribution.unwrap_or_default(),
            shape: app.shape.unwrap_or(1.5),
        };
        match (app.kind, app.arrivals) {
            (AppKind::Bulk, _) => GenKind::Bulk {
                remaining: app.bytes.map(|b| b.0),
            },
            (AppKind::OnOff, _) => GenKind::OnOff {
                interval,
                on: period(app.on),
                off: period(app.off),
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
    /// On-off: on time left in the current on period.
    on_left: SimDuration,
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
            GenKind::Periodic { .. } | GenKind::Jittered { .. } | GenKind::Bulk { .. } | GenKind::OnOff { .. } => {
                spec.start
            }
            GenKind::Poisson { mean_s } => spec.start + SimDuration::from_secs_f64(rng.exponential(mean_s)),
        };
        // An on-off source starts with an on period, its first message at its start.
        let on_left = match spec.kind {
            GenKind::OnOff { on, .. } => on.draw(&mut rng),
            _ => SimDuration::ZERO,
        };
        let id = self.gens.len() as GenId;
        self.gens.push(Generator {
            spec,
            count: 0,
            rng,
            on_left,
        });
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
            GenKind::OnOff { interval, on, off } => {
                // Spend `interval` of on time: the rest of this on period, then whole off and
                // on periods, until it is spent.
                let (mut t, mut need) = (now, interval);
                while need > g.on_left {
                    need = SimDuration(need.0 - g.on_left.0);
                    t = t + g.on_left + off.draw(&mut g.rng);
                    g.on_left = on.draw(&mut g.rng);
                }
                g.on_left = SimDuration(g.on_left.0 - need.0);
                t + need
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn on_off(interval_ms: u64, on_s: f64, off_s: f64, dist: PeriodDistribution) -> GenSpec {
        let period = |mean_s| Period {
            mean_s,
            dist,
            shape: 1.5,
        };
        GenSpec {
            dir: 0,
            ep: 0,
            kind: GenKind::OnOff {
                interval: SimDuration::from_millis(interval_ms),
                on: period(on_s),
                off: period(off_s),
            },
            size: 1000,
            start: SimTime::ZERO,
            stop: SimTime::NEVER,
            max: u64::MAX,
        }
    }

    /// Send times of generator `spec` up to `until`.
    fn send_times(spec: GenSpec, until: SimTime) -> Vec<SimTime> {
        let mut apps = Apps::default();
        let (g, mut next) = apps.add(spec, RngStream::from_seed(3));
        let mut out = Vec::new();
        while let Some(t) = next.filter(|&t| t < until) {
            out.push(t);
            next = apps.emit(g, t).and_then(|e| e.next);
        }
        out
    }

    /// Constant 1 s on, 1 s off, a message every 250 ms of on time: the first at the start, then
    /// one per 250 ms while on; the fifth of the first period falls at its end (1 s of on time
    /// spent), the next 250 ms of on time only after the off second.
    #[test]
    fn constant_on_off_sends_every_interval_of_on_time() {
        let got = send_times(on_off(250, 1.0, 1.0, PeriodDistribution::Constant), SimTime(4 * S));
        let ms: Vec<u64> = got.iter().map(|t| t.0 / 1_000_000).collect();
        assert_eq!(ms, [0, 250, 500, 750, 1000, 2250, 2500, 2750, 3000]);
    }

    /// Exponential periods: the long-run rate is one message per interval of on time, so
    /// messages ≈ duration × on / (on + off) / interval (here 20,000 s × 0.25 / 10 ms = 500,000;
    /// about 10,000 on periods make the relative spread of the total on time about 1.4 %).
    #[test]
    fn exponential_on_off_keeps_the_mean_rate_of_its_on_share() {
        let n = send_times(
            on_off(10, 0.5, 1.5, PeriodDistribution::Exponential),
            SimTime(20_000 * S),
        )
        .len();
        let want = 500_000.0;
        assert!(
            (n as f64 / want - 1.0).abs() < 0.05,
            "{n} messages, expected about {want}"
        );
    }

    /// Pareto periods of mean m and shape α: scale x_m = m (α − 1) / α, no draw below it, and
    /// the median x_m 2^(1/α) (for m = 1 s, α = 1.5: 0.3333 s and 0.5291 s).
    #[test]
    fn pareto_periods_have_the_scale_and_median_of_their_mean_and_shape() {
        let p = Period {
            mean_s: 1.0,
            dist: PeriodDistribution::Pareto,
            shape: 1.5,
        };
        let mut rng = RngStream::from_seed(11);
        let mut draws: Vec<f64> = (0..100_000).map(|_| p.draw(&mut rng).as_secs_f64()).collect();
        draws.sort_by(f64::total_cmp);
        assert!(draws[0] >= 1.0 / 3.0 - 1e-9, "{}", draws[0]);
        let median = draws[draws.len() / 2];
        let want = (1.0 / 3.0) * 2f64.powf(1.0 / 1.5);
        assert!((median / want - 1.0).abs() < 0.01, "median {median}, expected {want}");
    }
}
