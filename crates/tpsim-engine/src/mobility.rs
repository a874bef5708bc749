//! Node movement, computed analytically when a position is asked for (no periodic
//! position-update events).
//!
//! Every model is a sequence of straight legs at constant speed, each optionally followed by a
//! pause. Scripted movement (ns-2 `setdest` commands, [`Scripted`]) is turned into legs when
//! the world is built; the random models ([`RandomWaypoint`], [`RandomWalk`]) draw their next
//! leg from the node's own random stream (`Node`, node index, `Mobility`) when time passes the
//! end of the current one, so a node's path does not depend on when, or how often, anybody
//! asks where it is, nor on any other node or flow. Positions are asked at non-decreasing
//! times by the event loop; the random models only keep their current leg.
//!
//! # Read these
//!
//! * W. Navidi, T. Camp, "Stationary distributions for the random waypoint mobility model",
//!   IEEE TMC 3(1), 2004: the stationary start of [`RandomWaypoint`] (paused with probability
//!   E\[P\]/(E\[P\] + E\[L\]·E\[1/V\]); a moving node's leg drawn with density proportional to
//!   its length, its position uniform on it, its speed with density ∝ 1/v).
//! * J. Yoon, M. Liu, B. Noble, "Random waypoint considered harmful", INFOCOM 2003: why the
//!   average speed decays without it (and never settles with a minimum speed of 0).
//! * B. Ghosh, "Random distances within a rectangle", 1951: the mean distance E\[L\] between
//!   two uniform points of a rectangle ([`mean_distance_in_rectangle`]).
//! * ns-2 `MobileNode::set_destination`: a `setdest` turns the node from wherever it is and
//!   moves it in a straight line at constant speed until it reaches the target.

use tpsim_core::RngStream;

/// A straight move: from (`x0`, `y0`) at `t0` towards (`tx`, `ty`), arriving at `t_arrive`
/// (then standing there). Times in s, positions in m.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg {
    pub t0: f64,
    pub x0: f64,
    pub y0: f64,
    pub tx: f64,
    pub ty: f64,
    pub t_arrive: f64,
}

impl Leg {
    /// Standing still at (x, y) from `t0`.
    pub fn still(t0: f64, x: f64, y: f64) -> Leg {
        Leg {
            t0,
            x0: x,
            y0: y,
            tx: x,
            ty: y,
            t_arrive: t0,
        }
    }

    /// Position at `t` ≥ `t0`, m: the target itself once arrived (so targets are exact).
    #[inline]
    pub fn at(&self, t: f64) -> (f64, f64) {
        if t >= self.t_arrive {
            (self.tx, self.ty)
        } else {
            let f = (t - self.t0) / (self.t_arrive - self.t0);
            (self.x0 + (self.tx - self.x0) * f, self.y0 + (self.ty - self.y0) * f)
        }
    }

    /// Velocity at `t`, m/s (zero once arrived).
    pub fn velocity(&self, t: f64) -> (f64, f64) {
        if t >= self.t_arrive || self.t_arrive <= self.t0 {
            (0.0, 0.0)
        } else {
            let d = self.t_arrive - self.t0;
            ((self.tx - self.x0) / d, (self.ty - self.y0) / d)
        }
    }
}

/// Scripted movement: `setdest` commands turned into legs (see the module doc).
#[derive(Clone, Debug)]
pub struct Scripted {
    legs: Vec<Leg>,
    cursor: usize,
}

impl Scripted {
    /// A node starting at (`x`, `y`) that obeys `moves` = (time s, target x, target y, speed
    /// m/s), sorted by time (stable). With speed 0 the node stops where it is.
    pub fn new(x: f64, y: f64, moves: &[(f64, f64, f64, f64)]) -> Scripted {
        let mut legs = vec![Leg::still(0.0, x, y)];
        for &(t, tx, ty, speed) in moves {
            let last = legs.last().expect("never empty");
            let (cx, cy) = last.at(t.max(last.t0));
            let (dx, dy) = (tx - cx, ty - cy);
            let d = (dx * dx + dy * dy).sqrt();
            let leg = if speed > 0.0 && d > 0.0 {
                Leg {
                    t0: t,
                    x0: cx,
                    y0: cy,
                    tx,
                    ty,
                    t_arrive: t + d / speed,
                }
            } else {
                Leg::still(t, cx, cy)
            };
            // A later command at the same instant replaces the earlier one.
            if legs.len() > 1 && legs.last().map(|l| l.t0) == Some(t) {
                legs.pop();
            }
            legs.push(leg);
        }
        Scripted { legs, cursor: 0 }
    }

    fn leg(&mut self, t: f64) -> &Leg {
        while self.cursor + 1 < self.legs.len() && self.legs[self.cursor + 1].t0 <= t {
            self.cursor += 1;
        }
        while self.cursor > 0 && self.legs[self.cursor].t0 > t {
            self.cursor -= 1;
        }
        &self.legs[self.cursor]
    }

    /// The fastest speed of any leg, m/s.
    pub fn max_speed(&self) -> f64 {
        self.legs
            .iter()
            .map(|l| {
                let (vx, vy) = l.velocity(l.t0);
                (vx * vx + vy * vy).sqrt()
            })
            .fold(0.0, f64::max)
    }
}

/// Mean distance between two independent uniform points of a `a` × `b` rectangle, m (Ghosh
/// 1951).
pub fn mean_distance_in_rectangle(a: f64, b: f64) -> f64 {
    let d = (a * a + b * b).sqrt();
    (a * a * a / (b * b) + b * b * b / (a * a) + d * (3.0 - a * a / (b * b) - b * b / (a * a))) / 15.0
        + (b * b / a * libm::log((a + d) / b) + a * a / b * libm::log((b + d) / a)) / 6.0
}

/// Random waypoint in the rectangle [0, w] × [0, h]: pause, then a leg to a uniform point at a
/// speed uniform in [v_min, v_max], again and again.
#[derive(Clone, Debug)]
pub struct RandomWaypoint {
    w: f64,
    h: f64,
    v_min: f64,
    v_max: f64,
    pause: f64,
    leg: Leg,
    /// When the pause after `leg` ends and the next leg starts, s.
    next_start: f64,
    rng: RngStream,
}

impl RandomWaypoint {
    /// A node in its stationary distribution at t = 0 (Navidi & Camp 2004); needs v_min > 0.
    pub fn stationary(w: f64, h: f64, v_min: f64, v_max: f64, pause: f64, mut rng: RngStream) -> RandomWaypoint {
        let mean_inv_speed = if v_max > v_min {
            libm::log(v_max / v_min) / (v_max - v_min)
        } else {
            1.0 / v_max
        };
        let mean_move = mean_distance_in_rectangle(w, h) * mean_inv_speed;
        let p_paused = pause / (pause + mean_move);
        let (leg, next_start) = if rng.uniform() < p_paused {
            let (x, y) = (rng.uniform_range(0.0, w), rng.uniform_range(0.0, h));
            (Leg::still(0.0, x, y), rng.uniform_range(0.0, pause))
        } else {
            // A leg drawn with density ∝ its length (rejection against the diagonal).
            let diag = (w * w + h * h).sqrt();
            let (x1, y1, x2, y2, len) = loop {
                let (x1, y1) = (rng.uniform_range(0.0, w), rng.uniform_range(0.0, h));
                let (x2, y2) = (rng.uniform_range(0.0, w), rng.uniform_range(0.0, h));
                let (dx, dy) = (x2 - x1, y2 - y1);
                let len = (dx * dx + dy * dy).sqrt();
                if rng.uniform() * diag < len {
                    break (x1, y1, x2, y2, len);
                }
            };
            let u = rng.uniform();
            let (x, y) = (x1 + (x2 - x1) * u, y1 + (y2 - y1) * u);
            // Speed with density ∝ 1/v on [v_min, v_max].
            let v = if v_max > v_min {
                v_min * libm::pow(v_max / v_min, rng.uniform())
            } else {
                v_max
            };
            let t_arrive = len * (1.0 - u) / v;
            (
                Leg {
                    t0: 0.0,
                    x0: x,
                    y0: y,
                    tx: x2,
                    ty: y2,
                    t_arrive,
                },
                t_arrive + pause,
            )
        };
        RandomWaypoint {
            w,
            h,
            v_min,
            v_max,
            pause,
            leg,
            next_start,
            rng,
        }
    }

    /// A node starting at (`x`, `y`) m with a pause of `pause` s (ns-2 `setdest`'s start),
    /// then moving in the `(w, h)` m area at speeds drawn in `(v_min, v_max)` m/s.
    pub fn from_position(
        (w, h): (f64, f64),
        (v_min, v_max): (f64, f64),
        pause: f64,
        (x, y): (f64, f64),
        rng: RngStream,
    ) -> RandomWaypoint {
        RandomWaypoint {
            w,
            h,
            v_min,
            v_max,
            pause,
            leg: Leg::still(0.0, x, y),
            next_start: pause,
            rng,
        }
    }

    fn advance(&mut self, t: f64) {
        while t >= self.next_start {
            let t0 = self.next_start;
            let (x0, y0) = (self.leg.tx, self.leg.ty);
            let (tx, ty) = (self.rng.uniform_range(0.0, self.w), self.rng.uniform_range(0.0, self.h));
            let v = self.rng.uniform_range(self.v_min, self.v_max);
            let (dx, dy) = (tx - x0, ty - y0);
            let d = (dx * dx + dy * dy).sqrt();
            // A speed of exactly 0 (possible with v_min = 0) would never arrive: stand for
            // the pause instead.
            let t_arrive = if v > 0.0 { t0 + d / v } else { t0 };
            self.leg = if v > 0.0 {
                Leg {
                    t0,
                    x0,
                    y0,
                    tx,
                    ty,
                    t_arrive,
                }
            } else {
                Leg::still(t0, x0, y0)
            };
            self.next_start = t_arrive + self.pause.max(if v > 0.0 { 0.0 } else { 1e-3 });
        }
    }
}

/// Random walk 2-D in [0, w] × [0, h]: at each change (every `interval` s, or after
/// `distance` m) draw a speed uniform in [v_min, v_max] and turn by a uniform angle within
/// ±`max_turn` (rad; π gives a uniform new direction); reflect at the edges.
#[derive(Clone, Debug)]
pub struct RandomWalk {
    w: f64,
    h: f64,
    v_min: f64,
    v_max: f64,
    /// Epoch length: a time (s) or a distance (m).
    epoch: WalkEpoch,
    max_turn: f64,
    heading: f64,
    speed: f64,
    /// End of the current epoch, s.
    epoch_end: f64,
    /// Velocity of the current leg, m/s, and the leg.
    v: (f64, f64),
    leg: Leg,
    rng: RngStream,
}

/// When a random walk changes direction.
#[derive(Clone, Copy, Debug)]
pub enum WalkEpoch {
    /// Every so many seconds.
    Time(f64),
    /// After so many metres.
    Distance(f64),
}

impl RandomWalk {
    /// A walk starting at (`x`, `y`) at t = 0 in a uniform direction.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        w: f64,
        h: f64,
        v_min: f64,
        v_max: f64,
        epoch: WalkEpoch,
        max_turn: f64,
        x: f64,
        y: f64,
        mut rng: RngStream,
    ) -> RandomWalk {
        let heading = rng.uniform_range(0.0, std::f64::consts::TAU);
        let mut walk = RandomWalk {
            w,
            h,
            v_min,
            v_max,
            epoch,
            max_turn,
            heading,
            speed: 0.0,
            epoch_end: 0.0,
            v: (0.0, 0.0),
            leg: Leg::still(0.0, x.clamp(0.0, w), y.clamp(0.0, h)),
            rng,
        };
        walk.new_epoch(0.0, true);
        walk
    }

    fn new_epoch(&mut self, t0: f64, first: bool) {
        if !first {
            self.heading += self.rng.uniform_range(-self.max_turn, self.max_turn);
        }
        self.speed = self.rng.uniform_range(self.v_min, self.v_max);
        let len = match self.epoch {
            WalkEpoch::Time(s) => s,
            WalkEpoch::Distance(d) => {
                if self.speed > 0.0 {
                    d / self.speed
                } else {
                    1.0
                }
            }
        };
        self.epoch_end = t0 + len;
        self.v = (
            self.speed * libm::cos(self.heading),
            self.speed * libm::sin(self.heading),
        );
        let (x, y) = (self.leg.tx, self.leg.ty);
        self.next_leg(t0, x, y);
    }

    /// The leg from (x, y) at t0 with velocity `v`, up to the first wall or the epoch's end
    /// (whichever comes first; the epoch's end exactly, so that epochs never drift).
    fn next_leg(&mut self, t0: f64, x: f64, y: f64) {
        let (vx, vy) = self.v;
        let hit = |p: f64, v: f64, hi: f64| -> f64 {
            if v > 0.0 {
                ((hi - p) / v).max(0.0)
            } else if v < 0.0 {
                (-p / v).max(0.0)
            } else {
                f64::INFINITY
            }
        };
        let (tx_hit, ty_hit) = (hit(x, vx, self.w), hit(y, vy, self.h));
        let wall = tx_hit.min(ty_hit);
        let (dt, t_arrive, at_wall) = if t0 + wall < self.epoch_end {
            (wall, t0 + wall, true)
        } else {
            (self.epoch_end - t0, self.epoch_end, false)
        };
        let (ex, ey) = ((x + vx * dt).clamp(0.0, self.w), (y + vy * dt).clamp(0.0, self.h));
        self.leg = if vx != 0.0 || vy != 0.0 {
            Leg {
                t0,
                x0: x,
                y0: y,
                tx: ex,
                ty: ey,
                t_arrive,
            }
        } else {
            // Speed 0: stand until the epoch ends.
            Leg {
                t_arrive,
                ..Leg::still(t0, x, y)
            }
        };
        // Reflect at the wall(s) reached (the heading follows).
        if at_wall {
            if tx_hit <= wall {
                self.v.0 = -self.v.0;
            }
            if ty_hit <= wall {
                self.v.1 = -self.v.1;
            }
            self.heading = libm::atan2(self.v.1, self.v.0);
        }
    }

    fn advance(&mut self, t: f64) {
        while t >= self.leg.t_arrive {
            let (end, x, y) = (self.leg.t_arrive, self.leg.tx, self.leg.ty);
            if end >= self.epoch_end {
                self.new_epoch(self.epoch_end, false);
            } else {
                self.next_leg(end, x, y);
            }
        }
    }
}

/// One node's movement.
#[derive(Clone, Debug)]
pub enum Mobility {
    /// Standing at (x, y), m.
    Static(f64, f64),
    /// Constant velocity from (x0, y0) at t = 0: (x0, y0, vx, vy), m and m/s.
    Linear(f64, f64, f64, f64),
    /// Scripted legs.
    Scripted(Scripted),
    /// Random waypoint.
    Waypoint(RandomWaypoint),
    /// Random walk 2-D.
    Walk(RandomWalk),
}

impl Mobility {
    /// The leg the node is on at `t` s (moving models; random ones advance to `t`).
    #[inline]
    fn leg_at(&mut self, t: f64) -> Option<&Leg> {
        match self {
            Mobility::Static(..) | Mobility::Linear(..) => None,
            Mobility::Scripted(s) => Some(s.leg(t)),
            Mobility::Waypoint(m) => {
                m.advance(t);
                Some(&m.leg)
            }
            Mobility::Walk(m) => {
                m.advance(t);
                Some(&m.leg)
            }
        }
    }

    /// Position at `t` s, m. Random models must be asked at non-decreasing times.
    #[inline]
    pub fn position(&mut self, t: f64) -> (f64, f64) {
        match *self {
            Mobility::Static(x, y) => (x, y),
            Mobility::Linear(x, y, vx, vy) => (x + vx * t, y + vy * t),
            _ => self.leg_at(t).expect("a moving model").at(t),
        }
    }

    /// Velocity at `t` s, m/s.
    pub fn velocity(&mut self, t: f64) -> (f64, f64) {
        match *self {
            Mobility::Static(..) => (0.0, 0.0),
            Mobility::Linear(_, _, vx, vy) => (vx, vy),
            _ => self.leg_at(t).expect("a moving model").velocity(t),
        }
    }

    /// An upper bound of the node's speed, m/s (what the channel's grid must allow for).
    pub fn max_speed(&self) -> f64 {
        match self {
            Mobility::Static(..) => 0.0,
            Mobility::Linear(_, _, vx, vy) => (vx * vx + vy * vy).sqrt(),
            Mobility::Scripted(s) => s.max_speed(),
            Mobility::Waypoint(m) => m.v_max,
            Mobility::Walk(m) => m.v_max,
        }
    }
}

/// Every node's movement for run (`seed`, `run`) of a validated scenario, starting from the
/// initial `positions` (m); the nodes of `mobility.fixed` stay at theirs.
pub fn from_scenario(sc: &tpsim_scenario::Scenario, positions: &[(f64, f64)], seed: u64, run: u64) -> Vec<Mobility> {
    let mut all = of_model(sc, positions, seed, run);
    for &i in sc.nodes.mobility.iter().flat_map(|m| m.fixed.iter().flatten()) {
        if let (Some(m), Some(&(x, y))) = (all.get_mut(i as usize), positions.get(i as usize)) {
            *m = Mobility::Static(x, y);
        }
    }
    all
}

/// Every node's movement under the scenario's model.
fn of_model(sc: &tpsim_scenario::Scenario, positions: &[(f64, f64)], seed: u64, run: u64) -> Vec<Mobility> {
    use tpsim_core::{Module, OwnerKind, StreamKey};
    use tpsim_scenario::{MobilityModel as M, WaypointStart};
    let rng = |i: usize| {
        RngStream::new(StreamKey {
            seed,
            run,
            kind: OwnerKind::Node,
            owner_id: i as u64,
            module: Module::Mobility,
        })
    };
    let still = || positions.iter().map(|&(x, y)| Mobility::Static(x, y)).collect();
    let Some(m) = &sc.nodes.mobility else {
        return still();
    };
    let area = m
        .area
        .or(sc.nodes.placement.as_ref().and_then(|p| p.area))
        .map(|[w, h]| (w.0, h.0))
        .unwrap_or((1.0, 1.0));
    let [lo, hi] = m.speed.map(|[a, b]| [a.0, b.0]).unwrap_or([0.0, 0.0]);
    match m.model {
        M::Static | M::Ns2 => still(),
        M::ConstantVelocity => {
            let [vx, vy] = m.velocity.map(|[a, b]| [a.0, b.0]).unwrap_or([0.0, 0.0]);
            positions.iter().map(|&(x, y)| Mobility::Linear(x, y, vx, vy)).collect()
        }
        M::Waypoints => {
            let mut per_node: Vec<Vec<(f64, f64, f64, f64)>> = vec![Vec::new(); positions.len()];
            for w in m.waypoints.iter().flatten() {
                if let Some(v) = per_node.get_mut(w.node as usize) {
                    v.push((w.at.secs(), w.to[0].0, w.to[1].0, w.speed.0));
                }
            }
            positions
                .iter()
                .zip(per_node.iter_mut())
                .map(|(&(x, y), moves)| {
                    moves.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Mobility::Scripted(Scripted::new(x, y, moves))
                })
                .collect()
        }
        M::RandomWaypoint => {
            let pause = m.pause.map(|d| d.secs()).unwrap_or(0.0);
            positions
                .iter()
                .enumerate()
                .map(|(i, &(x, y))| {
                    Mobility::Waypoint(match m.start.unwrap_or_default() {
                        WaypointStart::Stationary => RandomWaypoint::stationary(area.0, area.1, lo, hi, pause, rng(i)),
                        WaypointStart::Placement => {
                            RandomWaypoint::from_position(area, (lo, hi), pause, (x, y), rng(i))
                        }
                    })
                })
                .collect()
        }
        M::RandomWalk => {
            let epoch = match (m.interval, m.distance) {
                (_, Some(d)) => WalkEpoch::Distance(d.0),
                (Some(t), None) => WalkEpoch::Time(t.secs()),
                (None, None) => WalkEpoch::Time(1.0),
            };
            let turn = m.max_turn.map(|a| a.0).unwrap_or(std::f64::consts::PI);
            positions
                .iter()
                .enumerate()
                .map(|(i, &(x, y))| Mobility::Walk(RandomWalk::new(area.0, area.1, lo, hi, epoch, turn, x, y, rng(i))))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpsim_core::{Module, OwnerKind, StreamKey};

    fn rng(i: u64) -> RngStream {
        RngStream::new(StreamKey {
            seed: 7,
            run: 0,
            kind: OwnerKind::Node,
            owner_id: i,
            module: Module::Mobility,
        })
    }

    #[test]
    fn ghosh_mean_distance_matches_monte_carlo() {
        let mut r = rng(0);
        for (a, b) in [(1.0, 1.0), (1500.0, 300.0), (670.0, 670.0)] {
            let n = 400_000;
            let s: f64 = (0..n)
                .map(|_| {
                    let (x1, y1, x2, y2) = (r.uniform() * a, r.uniform() * b, r.uniform() * a, r.uniform() * b);
                    let (dx, dy) = (x2 - x1, y2 - y1);
                    (dx * dx + dy * dy).sqrt()
                })
                .sum();
            let mc = s / n as f64;
            let exact = mean_distance_in_rectangle(a, b);
            assert!((mc / exact - 1.0).abs() < 0.005, "{a}x{b}: {mc} vs {exact}");
        }
        assert!((mean_distance_in_rectangle(1.0, 1.0) - 0.521405).abs() < 1e-6);
    }

    #[test]
    fn scripted_follows_setdest_semantics() {
        // From (0,0): at 10 s head for (100,0) at 10 m/s; at 15 s turn to (50,100) at 5 m/s.
        let mut s = Mobility::Scripted(Scripted::new(
            0.0,
            0.0,
            &[(10.0, 100.0, 0.0, 10.0), (15.0, 50.0, 100.0, 5.0)],
        ));
        assert_eq!(s.position(5.0), (0.0, 0.0));
        assert_eq!(s.position(12.0), (20.0, 0.0));
        assert_eq!(s.position(15.0), (50.0, 0.0));
        assert_eq!(s.position(25.0), (50.0, 50.0));
        assert_eq!(s.position(100.0), (50.0, 100.0));
        // Backwards queries work for scripted movement.
        assert_eq!(s.position(12.0), (20.0, 0.0));
        assert_eq!(s.velocity(20.0), (0.0, 5.0));
    }

    #[test]
    fn random_models_stay_inside_with_speeds_in_range() {
        let (w, h) = (1500.0, 300.0);
        for i in 0..50 {
            let mut models = [
                Mobility::Waypoint(RandomWaypoint::stationary(w, h, 1.0, 20.0, 30.0, rng(i))),
                Mobility::Waypoint(RandomWaypoint::from_position(
                    (w, h),
                    (0.0, 20.0),
                    0.0,
                    (10.0, 10.0),
                    rng(i),
                )),
                Mobility::Walk(RandomWalk::new(
                    w,
                    h,
                    2.0,
                    8.0,
                    WalkEpoch::Time(7.0),
                    0.7,
                    750.0,
                    150.0,
                    rng(i),
                )),
                Mobility::Walk(RandomWalk::new(
                    w,
                    h,
                    2.0,
                    8.0,
                    WalkEpoch::Distance(120.0),
                    3.2,
                    5.0,
                    5.0,
                    rng(i),
                )),
            ];
            for (k, m) in models.iter_mut().enumerate() {
                let (lo, hi) = if k < 2 {
                    (if k == 0 { 1.0 } else { 0.0 }, 20.0)
                } else {
                    (2.0, 8.0)
                };
                let mut last = m.position(0.0);
                for step in 1..=9000 {
                    let t = step as f64 * 0.1;
                    let (x, y) = m.position(t);
                    assert!(
                        (0.0..=w).contains(&x) && (0.0..=h).contains(&y),
                        "model {k} node {i} at ({x},{y})"
                    );
                    let (vx, vy) = m.velocity(t);
                    let v = (vx * vx + vy * vy).sqrt();
                    assert!(v == 0.0 || (lo - 1e-9..=hi + 1e-9).contains(&v), "model {k}: speed {v}");
                    let (dx, dy) = (x - last.0, y - last.1);
                    let moved = (dx * dx + dy * dy).sqrt();
                    assert!(moved <= hi * 0.1 + 1e-6, "model {k}: moved {moved} m in 0.1 s");
                    last = (x, y);
                }
            }
        }
    }

    /// Yoon et al. 2003: started from its stationary distribution, random waypoint keeps a
    /// flat average speed; started from rest at uniform points it does not.
    #[test]
    fn stationary_start_keeps_average_speed_flat() {
        let (w, h, lo, hi, pause) = (1500.0, 300.0, 1.0, 20.0, 0.0);
        let n = 2000;
        let mut stationary: Vec<Mobility> = (0..n)
            .map(|i| Mobility::Waypoint(RandomWaypoint::stationary(w, h, lo, hi, pause, rng(i))))
            .collect();
        let mean_speed_at = |t: f64, ms: &mut Vec<Mobility>| -> f64 {
            ms.iter_mut()
                .map(|m| {
                    let (vx, vy) = m.velocity(t);
                    (vx * vx + vy * vy).sqrt()
                })
                .sum::<f64>()
                / n as f64
        };
        // The stationary mean speed: E[L] / E[L/V] = 1 / E[1/V] for pause 0.
        let expected = (hi - lo) / libm::log(hi / lo);
        for t in [0.0, 50.0, 150.0, 300.0, 600.0, 900.0] {
            let s = mean_speed_at(t, &mut stationary);
            assert!(
                (s / expected - 1.0).abs() < 0.06,
                "t={t}: mean speed {s} vs stationary {expected}"
            );
        }
        // The check discriminates: from uniform points (first leg right away) the mean speed
        // starts near (lo + hi) / 2 = 10.5 m/s, far above the stationary 6.3 m/s.
        let mut naive: Vec<Mobility> = (0..n)
            .map(|i| {
                let mut r = rng(10_000 + i);
                let (x, y) = (r.uniform_range(0.0, w), r.uniform_range(0.0, h));
                Mobility::Waypoint(RandomWaypoint::from_position((w, h), (lo, hi), pause, (x, y), rng(i)))
            })
            .collect();
        let early = mean_speed_at(1.0, &mut naive);
        assert!(early > 1.4 * expected, "naive start: {early} vs stationary {expected}");
    }

    /// `mobility.fixed` keeps the listed nodes at their placement; the others walk.
    #[test]
    fn fixed_nodes_stay_at_their_placement() {
        let text = "[simulation]\nduration = \"100s\"\n[nodes]\ncount = 3\n\
             placement = { kind = \"explicit\", positions = [[\"0m\", \"250m\"], [\"500m\", \"250m\"], [\"250m\", \"250m\"]] }\n\
             [nodes.mobility]\nmodel = \"random-walk\"\nspeed = [\"5m/s\", \"5m/s\"]\ninterval = \"1s\"\n\
             area = [\"500m\", \"500m\"]\nfixed = [0, 1]\n[radio]\n";
        let sc = tpsim_scenario::load(text, "<test>").unwrap();
        let pos = [(0.0, 250.0), (500.0, 250.0), (250.0, 250.0)];
        let mut m = from_scenario(&sc, &pos, 1, 0);
        assert_eq!((m[0].position(50.0), m[0].max_speed()), ((0.0, 250.0), 0.0));
        assert_eq!((m[1].position(50.0), m[1].max_speed()), ((500.0, 250.0), 0.0));
        assert_ne!(m[2].position(50.0), (250.0, 250.0));
        assert_eq!(m[2].max_speed(), 5.0);
        let bad = text.replace("fixed = [0, 1]", "fixed = [3]");
        let e = tpsim_scenario::load(&bad, "<test>").unwrap_err().to_string();
        assert!(e.contains("nodes.mobility.fixed") && e.contains("out of range"), "{e}");
    }
}
