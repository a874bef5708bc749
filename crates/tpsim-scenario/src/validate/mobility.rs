//! The `[nodes.placement]` and `[nodes.mobility]` checks.

// `!(x > 0.0)` is meant: it also rejects NaN, which `x <= 0.0` would let through.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::k;
use crate::error::Seg;
use crate::MobilityModel as M;

/// The key path of `nodes.mobility.<f>`.
fn p(f: &str) -> Vec<Seg> {
    vec![k("nodes"), k("mobility"), k(f)]
}

/// The mobility model's name as written in a scenario ("random-waypoint" ...).
fn model_name(m: &crate::Mobility) -> String {
    serde_json::to_value(m.model)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub(super) fn validate_mobility(
    m: &crate::Mobility,
    pl: Option<&crate::Placement>,
    n: u32,
    err: &mut impl FnMut(Vec<Seg>, String),
) {
    let model = model_name(m);
    inapplicable_keys(m, &model, err);
    fixed_nodes(m, n, err);
    if matches!(m.model, M::RandomWaypoint | M::RandomWalk) {
        random_speed(m, &model, err);
        random_area(m, pl, n, &model, err);
    }
    if m.model == M::RandomWalk {
        random_walk_turns(m, err);
    }
    if m.model == M::ConstantVelocity && m.velocity.is_none() {
        err(
            p("model"),
            "mobility model \"constant-velocity\" needs `velocity` = [vx, vy]".into(),
        );
    }
    if m.model == M::Waypoints {
        waypoints(m, n, err);
    }
}

/// Keys given that the model does not use.
fn inapplicable_keys(m: &crate::Mobility, model: &str, err: &mut impl FnMut(Vec<Seg>, String)) {
    let allowed: &[&str] = match m.model {
        M::Static => &[],
        M::RandomWaypoint => &["speed", "pause", "area", "start"],
        M::RandomWalk => &["speed", "area", "interval", "distance", "max_turn"],
        M::ConstantVelocity => &["velocity"],
        M::Waypoints => &["waypoints"],
        M::Ns2 => &["file", "text", "first_id"],
    };
    for (name, present) in [
        ("speed", m.speed.is_some()),
        ("pause", m.pause.is_some()),
        ("area", m.area.is_some()),
        ("start", m.start.is_some()),
        ("interval", m.interval.is_some()),
        ("distance", m.distance.is_some()),
        ("max_turn", m.max_turn.is_some()),
        ("velocity", m.velocity.is_some()),
        ("waypoints", m.waypoints.is_some()),
        ("file", m.file.is_some()),
        ("text", m.text.is_some()),
        ("first_id", m.first_id.is_some()),
    ] {
        if present && !allowed.contains(&name) {
            err(
                p(name),
                format!("`{name}` does not apply to mobility model \"{model}\""),
            );
        }
    }
}

/// The `fixed` nodes: in range, and not with an ns-2 movement file.
fn fixed_nodes(m: &crate::Mobility, n: u32, err: &mut impl FnMut(Vec<Seg>, String)) {
    if let Some(fixed) = &m.fixed {
        if let Some(&i) = fixed.iter().find(|&&i| i >= n) {
            err(
                p("fixed"),
                format!(
                    "node index {i} out of range: expected 0..{} (nodes.count = {n})",
                    n.saturating_sub(1)
                ),
            );
        }
        if m.model == M::Ns2 {
            err(
                p("fixed"),
                "`fixed` does not apply to an ns-2 movement file (it places every node)".into(),
            );
        }
    }
}

/// The `speed` range of a random waypoint or random walk.
fn random_speed(m: &crate::Mobility, model: &str, err: &mut impl FnMut(Vec<Seg>, String)) {
    match m.speed {
        None => err(
            p("model"),
            format!("mobility model \"{model}\" needs `speed` = [minimum, maximum], e.g. [\"1m/s\", \"2m/s\"]"),
        ),
        Some([lo, hi]) => {
            if lo.0 < 0.0 || hi.0 < 0.0 {
                err(
                    p("speed"),
                    format!("expected speeds of at least 0m/s, found [{}m/s, {}m/s]", lo.0, hi.0),
                );
            } else if hi.0 < lo.0 {
                err(
                    p("speed"),
                    format!("the maximum speed ({}m/s) is below the minimum ({}m/s)", hi.0, lo.0),
                );
            } else if hi.0 == 0.0 {
                err(p("speed"), "expected a maximum speed greater than 0m/s".into());
            } else if m.model == M::RandomWaypoint
                && lo.0 == 0.0
                && m.start.unwrap_or_default() == crate::WaypointStart::Stationary
            {
                err(p("speed"), "a stationary random waypoint start needs a minimum speed above 0m/s (with 0 the model has no steady state: Yoon et al. 2003); raise it or set start = \"placement\"".into());
            }
        }
    }
}

/// The `area` of a random waypoint or random walk, and the placement inside it.
fn random_area(
    m: &crate::Mobility,
    pl: Option<&crate::Placement>,
    n: u32,
    model: &str,
    err: &mut impl FnMut(Vec<Seg>, String),
) {
    let area = m.area.or(pl.and_then(|pl| pl.area));
    match area {
        None => err(
            p("model"),
            format!("mobility model \"{model}\" needs `area` = [width, height] (or a uniform placement's area)"),
        ),
        Some([w, h]) if !(w.0 > 0.0 && h.0 > 0.0) => {
            err(p("area"), "expected an area of positive width and height".into())
        }
        Some([w, h]) => {
            if let Some(pos) = pl.and_then(|pl| pl.positions.as_ref()) {
                if let Some((i, [x, y])) = pos
                    .iter()
                    .enumerate()
                    .find(|(_, [x, y])| !(0.0..=w.0).contains(&x.0) || !(0.0..=h.0).contains(&y.0))
                {
                    err(
                        vec![k("nodes"), k("placement"), k("positions"), Seg::Index(i)],
                        format!(
                            "node {i} at ({}m, {}m) is outside the mobility area [0, {}m] × [0, {}m]",
                            x.0, y.0, w.0, h.0
                        ),
                    );
                }
            }
            if let Some(pl) = pl.filter(|pl| pl.kind == crate::PlacementKind::Grid) {
                let cols = pl
                    .columns
                    .unwrap_or_else(|| (n as f64).sqrt().ceil().max(1.0) as u32)
                    .max(1);
                let s = pl.spacing.map(|m| m.0).unwrap_or(1.0);
                let (x, y) = (
                    n.min(cols).saturating_sub(1) as f64 * s,
                    ((n.saturating_sub(1)) / cols) as f64 * s,
                );
                if x > w.0 || y > h.0 {
                    err(
                        vec![k("nodes"), k("placement")],
                        format!(
                            "the grid placement reaches ({x}m, {y}m), outside the mobility area [0, {}m] × [0, {}m]",
                            w.0, h.0
                        ),
                    );
                }
            }
            if let Some(pa) = pl.and_then(|pl| pl.area) {
                if pa[0].0 > w.0 || pa[1].0 > h.0 {
                    err(
                        vec![k("nodes"), k("placement"), k("area")],
                        format!(
                            "the placement area [{}m, {}m] is larger than the mobility area [{}m, {}m]",
                            pa[0].0, pa[1].0, w.0, h.0
                        ),
                    );
                }
            }
        }
    }
}

/// A random walk's `interval` or `distance` between changes of direction, and `max_turn`.
fn random_walk_turns(m: &crate::Mobility, err: &mut impl FnMut(Vec<Seg>, String)) {
    match (m.interval, m.distance) {
        (None, None) => err(
            p("model"),
            "a random walk needs `interval` or `distance` between changes of direction".into(),
        ),
        (Some(_), Some(_)) => err(p("distance"), "give `interval` or `distance`, not both".into()),
        (Some(i), None) if i.0 == 0 => err(p("interval"), "expected an interval greater than 0".into()),
        (None, Some(d)) if !(d.0 > 0.0) => err(p("distance"), "expected a distance greater than 0m".into()),
        _ => {}
    }
    if let Some(a) = m.max_turn {
        if a.0 > std::f64::consts::PI + 1e-12 {
            err(p("max_turn"), "expected a turn of at most 180deg".into());
        }
    }
}

/// The `waypoints` list of the "waypoints" model.
fn waypoints(m: &crate::Mobility, n: u32, err: &mut impl FnMut(Vec<Seg>, String)) {
    match &m.waypoints {
        None => err(p("model"), "mobility model \"waypoints\" needs `waypoints`".into()),
        Some(ws) => {
            for (i, w) in ws.iter().enumerate() {
                let q = |f: &str| vec![k("nodes"), k("mobility"), k("waypoints"), Seg::Index(i), k(f)];
                if w.node >= n {
                    err(
                        q("node"),
                        format!(
                            "node index {} out of range: expected 0..{}",
                            w.node,
                            n.saturating_sub(1)
                        ),
                    );
                }
                if !(w.speed.0 >= 0.0) {
                    err(
                        q("speed"),
                        format!("expected a speed of at least 0m/s, found {}m/s", w.speed.0),
                    );
                }
            }
        }
    }
}

pub(super) fn validate_placement(pl: &crate::Placement, n: u32, err: &mut impl FnMut(Vec<Seg>, String)) {
    use crate::PlacementKind as K;
    let p = |f: &str| vec![k("nodes"), k("placement"), k(f)];
    let allowed: &[&str] = match pl.kind {
        K::Explicit => &["positions"],
        K::Grid => &["columns", "spacing"],
        K::Uniform => &["area"],
    };
    for (name, present) in [
        ("positions", pl.positions.is_some()),
        ("columns", pl.columns.is_some()),
        ("spacing", pl.spacing.is_some()),
        ("area", pl.area.is_some()),
    ] {
        if present && !allowed.contains(&name) {
            err(
                p(name),
                format!(
                    "`{name}` does not apply to placement kind \"{}\"",
                    placement_name(pl.kind)
                ),
            );
        }
    }
    match pl.kind {
        K::Explicit => match &pl.positions {
            None => err(
                p("kind"),
                "an explicit placement needs `positions`, one [x, y] per node".into(),
            ),
            Some(v) if v.len() != n as usize => err(
                p("positions"),
                format!("expected {n} positions (nodes.count), found {}", v.len()),
            ),
            _ => {}
        },
        K::Grid => {
            match pl.spacing {
                None => err(
                    p("kind"),
                    "a grid placement needs `spacing`, e.g. spacing = \"200m\"".into(),
                ),
                Some(s) if s.0 <= 0.0 => err(p("spacing"), "expected a spacing greater than 0".into()),
                _ => {}
            }
            if pl.columns == Some(0) {
                err(p("columns"), "expected at least 1 column".into());
            }
        }
        K::Uniform => match pl.area {
            None => err(p("kind"), "a uniform placement needs `area` = [width, height]".into()),
            Some([w, h]) if w.0 <= 0.0 || h.0 <= 0.0 => {
                err(p("area"), "expected a width and a height greater than 0".into())
            }
            _ => {}
        },
    }
}

fn placement_name(k: crate::PlacementKind) -> &'static str {
    match k {
        crate::PlacementKind::Explicit => "explicit",
        crate::PlacementKind::Grid => "grid",
        crate::PlacementKind::Uniform => "uniform",
    }
}
