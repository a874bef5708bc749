//! The meaning checks of a scenario (the second pass after [`crate::parse`]).

// `!(x > 0.0)` is meant: it also rejects NaN, which `x <= 0.0` would let through.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::error::{Diagnostic, Locator, Seg};
use crate::topology::Paths;
use crate::{AppKind, Arrivals, Scenario};

mod mobility;
mod radio;

use mobility::{validate_mobility, validate_placement};
use radio::validate_radio;

fn k(s: &str) -> Seg {
    Seg::Key(s.to_string())
}

/// Every meaning error of `sc`, in file order of the keys concerned.
pub fn validate(sc: &Scenario, loc: &Locator) -> Vec<Diagnostic> {
    let mut d: Vec<Diagnostic> = Vec::new();
    let mut err = |path: Vec<Seg>, msg: String| d.push(loc.diag(&path, msg));
    validate_simulation(sc, &mut err);
    let n = sc.nodes.count;
    let links_ok = validate_links(sc, &mut err);
    if let Some(pl) = &sc.nodes.placement {
        validate_placement(pl, n, &mut err);
    }
    if let Some(m) = &sc.nodes.mobility {
        validate_mobility(m, sc.nodes.placement.as_ref(), n, &mut err);
    }
    if let Some(r) = &sc.routing {
        validate_routing(sc, r, &mut err);
    }
    if let Some(b) = &sc.background {
        validate_background(sc, b, &mut err);
    }
    if let Some(b) = &sc.beacons {
        validate_beacons(sc, b, &mut err);
    }
    if let Some(a) = &sc.arp {
        validate_arp(sc, a, &mut err);
    }
    if let Some(e) = &sc.energy {
        validate_energy(sc, e, &mut err);
    }
    if let Some(radio) = &sc.radio {
        validate_radio_table(sc, radio, &mut err);
    }
    // Wired reachability is known now; wireless reachability depends on positions and ranges
    // (and later on movement), so unroutable wireless packets are counted as `drops_no_route`.
    let paths = if links_ok && n >= 1 && sc.radio.is_none() {
        Some(Paths::compute(n, &sc.links))
    } else {
        None
    };
    for (i, f) in sc.flows.iter().enumerate() {
        validate_flow(sc, i, f, paths.as_ref(), &mut err);
    }
    crate::events::validate_events(sc, &mut err);
    if let Some(sweep) = &sc.sweep {
        validate_sweep(sc, sweep, &mut err);
    }
    d.sort_by_key(|x| (x.line, x.column));
    d
}

/// `[simulation]`, `[output]` and `nodes.count`.
fn validate_simulation(sc: &Scenario, err: &mut impl FnMut(Vec<Seg>, String)) {
    let sim = &sc.simulation;
    if sim.duration.0 == 0 {
        err(
            vec![k("simulation"), k("duration")],
            "expected a duration greater than 0".into(),
        );
    }
    if sim.duration.0 > 0 && sim.warmup.0 >= sim.duration.0 {
        err(
            vec![k("simulation"), k("warmup")],
            format!(
                "expected a warm-up shorter than simulation.duration ({}), got {}",
                sim.duration.human(),
                sim.warmup.human()
            ),
        );
    }
    if sim.runs < 1 {
        err(vec![k("simulation"), k("runs")], "expected at least 1 run".into());
    }
    if sc.output.timeseries && sc.output.bin.0 == 0 {
        err(
            vec![k("output"), k("bin")],
            "expected a bin width greater than 0".into(),
        );
    }
    if sc.output.animation && sc.output.animation_step.0 == 0 {
        err(
            vec![k("output"), k("animation_step")],
            "expected a frame length greater than 0".into(),
        );
    }
    if sc.nodes.count < 1 {
        err(vec![k("nodes"), k("count")], "expected at least 1 node".into());
    }
}

/// `[[links]]`; returns whether every link joins two existing, different nodes.
/// The largest wired route table (bytes) validation lets the engine build.
const MAX_ROUTE_TABLE_BYTES: u64 = 2_000_000_000;
/// A link's `device_queue` above this is a typo for `queue` (a transmit ring of thousands of
/// packets would be a second, undisciplined queue).
const MAX_DEVICE_QUEUE: u32 = 1000;

fn validate_links(sc: &Scenario, err: &mut impl FnMut(Vec<Seg>, String)) -> bool {
    let n = sc.nodes.count;
    let node_ok = |i: u32| i < n;
    let mut links_ok = true;
    for (i, l) in sc.links.iter().enumerate() {
        let p = |f: &str| vec![k("links"), Seg::Index(i), k(f)];
        for (j, &node) in l.nodes.iter().enumerate() {
            if !node_ok(node) {
                links_ok = false;
                let mut path = p("nodes");
                path.push(Seg::Index(j));
                err(
                    path,
                    format!(
                        "node index {node} out of range: expected 0..{} (nodes.count = {n})",
                        n.saturating_sub(1)
                    ),
                );
            }
        }
        if l.nodes[0] == l.nodes[1] {
            links_ok = false;
            err(
                p("nodes"),
                format!("a link joins two different nodes, found [{0}, {0}]", l.nodes[0]),
            );
        }
        if l.rate.0 == 0 {
            err(p("rate"), "expected a rate greater than 0".into());
        }
        if l.queue < 1 {
            err(p("queue"), "expected a queue limit of at least 1 packet".into());
        }
        if let Some(a) = &l.aqm {
            crate::aqm::validate_aqm(a, &p("aqm"), err);
        }
        if l.device_queue > MAX_DEVICE_QUEUE {
            err(
                p("device_queue"),
                format!("expected at most {MAX_DEVICE_QUEUE} packets, found {}", l.device_queue),
            );
        }
        if !(68..=65535).contains(&l.mtu.0) {
            err(
                p("mtu"),
                format!("expected an MTU between 68B and 65535B, found {}B", l.mtu.0),
            );
        }
        for (key, v) in [
            ("loss", Some(l.loss)),
            ("loss_forward", l.loss_forward),
            ("loss_reverse", l.loss_reverse),
        ] {
            if let Some(v) = v.filter(|v| !(v.is_finite() && (0.0..1.0).contains(v))) {
                err(p(key), format!("expected a loss probability in [0, 1), found {v}"));
            }
        }
    }
    // The wired route tables take 12 bytes per pair of linked nodes.
    let linked = Paths::linked_nodes(n, &sc.links);
    if links_ok && Paths::table_bytes(linked) > MAX_ROUTE_TABLE_BYTES {
        links_ok = false;
        err(
            vec![k("links")],
            format!(
                "{linked} nodes have links: their shortest-path tables would take {:.1} GB (at most {} GB, about 13,000 linked nodes)",
                Paths::table_bytes(linked) as f64 / 1e9,
                MAX_ROUTE_TABLE_BYTES / 1_000_000_000
            ),
        );
    }
    links_ok
}

/// `[routing]`: the keys of the chosen protocol only.
fn validate_routing(sc: &Scenario, r: &crate::Routing, err: &mut impl FnMut(Vec<Seg>, String)) {
    use crate::RoutingProtocol as P;
    let p = |f: &str| vec![k("routing"), k(f)];
    if r.protocol != P::Static && sc.radio.is_none() {
        err(p("protocol"), "ad hoc routing needs a radio (`[radio]`)".into());
    }
    let name = serde_json::to_value(r.protocol)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let allowed: &[&str] = match r.protocol {
        P::Static | P::Oracle => &[],
        P::Aodv => &["preset", "hello", "jitter", "hello_interval"],
        P::Olsr => &["jitter", "hello_interval", "tc_interval"],
    };
    for (key, present) in [
        ("preset", r.preset.is_some()),
        ("hello", r.hello.is_some()),
        ("jitter", r.jitter.is_some()),
        ("hello_interval", r.hello_interval.is_some()),
        ("tc_interval", r.tc_interval.is_some()),
    ] {
        if present && !allowed.contains(&key) {
            err(p(key), format!("`{key}` does not apply to routing protocol \"{name}\""));
        }
    }
    for (key, v) in [("hello_interval", r.hello_interval), ("tc_interval", r.tc_interval)] {
        if v.is_some_and(|d| d.0 == 0) {
            err(p(key), "expected an interval greater than 0".into());
        }
    }
}

/// `[background]` flows.
fn validate_background(sc: &Scenario, b: &crate::Background, err: &mut impl FnMut(Vec<Seg>, String)) {
    let sim = &sc.simulation;
    let n = sc.nodes.count;
    let p = |f: &str| vec![k("background"), k(f)];
    match (b.interval, b.rate) {
        (None, None) => err(p("size"), "background flows need `interval` or `rate`".into()),
        (Some(_), Some(_)) => err(p("rate"), "give `interval` or `rate`, not both".into()),
        (Some(i), None) if i.0 == 0 => err(p("interval"), "expected an interval greater than 0".into()),
        (None, Some(r)) if r.0 == 0 => err(p("rate"), "expected a rate greater than 0".into()),
        _ => {}
    }
    if b.size.0 == 0 {
        err(p("size"), "expected a size greater than 0".into());
    }
    validate_on_off(&b.app(crate::Duration(0)), &p, err);
    if let Some([a, z]) = b.start {
        if z.0 < a.0 {
            err(
                p("start"),
                "expected [earliest, latest] with latest not before earliest".into(),
            );
        } else if z.0 >= sim.duration.0 {
            err(
                p("start"),
                "background flows must start before the end of the simulation".into(),
            );
        }
    }
    for (j, &v) in b.exclude.iter().enumerate() {
        if v >= n {
            err(
                vec![k("background"), k("exclude"), Seg::Index(j)],
                format!(
                    "node index {v} out of range: expected 0..{} (nodes.count = {n})",
                    n.saturating_sub(1)
                ),
            );
        }
    }
    // Counted from the (short) list, not by visiting every node: `nodes.count` may be huge.
    let mut excluded: Vec<u32> = b.exclude.iter().copied().filter(|&v| v < n).collect();
    excluded.sort_unstable();
    excluded.dedup();
    let usable = u64::from(n) - excluded.len() as u64;
    if b.flows > 0 && usable < 2 {
        err(
            p("exclude"),
            "background flows need at least two nodes that are not excluded".into(),
        );
    }
}

/// `[beacons]`.
fn validate_beacons(sc: &Scenario, b: &crate::Beacons, err: &mut impl FnMut(Vec<Seg>, String)) {
    let n = sc.nodes.count;
    let p = |f: &str| vec![k("beacons"), k(f)];
    if sc.radio.is_none() {
        err(vec![k("beacons")], "beacons need a radio (`[radio]`)".into());
    }
    if b.interval.0 == 0 {
        err(p("interval"), "expected an interval greater than 0".into());
    }
    if b.size.0 == 0 || b.size.0 > 1472 {
        err(
            p("size"),
            format!("expected a size between 1B and 1472B, found {}B", b.size.0),
        );
    }
    if let Some(&bad) = b.nodes.iter().flatten().find(|&&v| v >= n) {
        err(
            p("nodes"),
            format!("node index {bad} out of range: expected 0..{}", n.saturating_sub(1)),
        );
    }
}

/// `[arp]`.
fn validate_arp(sc: &Scenario, a: &crate::Arp, err: &mut impl FnMut(Vec<Seg>, String)) {
    let p = |f: &str| vec![k("arp"), k(f)];
    if sc.radio.is_none() {
        err(vec![k("arp")], "ARP needs a radio (`[radio]`)".into());
    }
    if a.pending_queue == Some(0) {
        err(p("pending_queue"), "expected at least 1 packet".into());
    }
    for (key, v) in [
        ("wait_reply_timeout", a.wait_reply_timeout),
        ("alive_timeout", a.alive_timeout),
        ("dead_timeout", a.dead_timeout),
    ] {
        if v.is_some_and(|d| d.0 == 0) {
            err(p(key), "expected a duration greater than 0".into());
        }
    }
}

/// `[energy]`.
fn validate_energy(sc: &Scenario, e: &crate::Energy, err: &mut impl FnMut(Vec<Seg>, String)) {
    if sc.radio.is_none() {
        err(vec![k("energy")], "the energy model needs a radio (`[radio]`)".into());
    }
    if !(e.initial.0 > 0.0) {
        err(
            vec![k("energy"), k("initial")],
            "expected an initial energy greater than 0J".into(),
        );
    }
}

/// `[radio]` in its scenario: placement, per-node ranges.
fn validate_radio_table(sc: &Scenario, radio: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    let n = sc.nodes.count;
    if sc.nodes.placement.is_none() {
        err(
            vec![k("radio")],
            "a scenario with a radio needs `nodes.placement` (where the nodes stand)".into(),
        );
    }
    validate_radio(radio, err);
    if let Some(a) = &radio.aqm {
        crate::aqm::validate_aqm(a, &[k("radio"), k("aqm")], err);
        if radio.queue_max_delay.is_some() {
            err(
                vec![k("radio"), k("queue_max_delay")],
                "`queue_max_delay` applies to the DropTail interface queue: leave it out with `radio.aqm`".into(),
            );
        }
    }
    if let Some(channels) = &radio.channels {
        let q = || vec![k("radio"), k("channels")];
        if channels.len() != n as usize {
            err(
                q(),
                format!("expected one list of channels per node ({n}), found {}", channels.len()),
            );
        }
        for (v, c) in channels.iter().enumerate() {
            let at = || vec![k("radio"), k("channels"), Seg::Index(v)];
            if c.is_empty() {
                err(at(), format!("node {v} needs at least one channel, e.g. [1]"));
            }
            if c.len() > 8 {
                err(
                    at(),
                    format!(
                        "node {v} lists {} channels: expected at most 8 radios per node",
                        c.len()
                    ),
                );
            }
            if c.iter().enumerate().any(|(j, x)| c[..j].contains(x)) {
                err(at(), format!("node {v} lists a channel twice: {c:?}"));
            }
            if c.len() > 1 && sc.energy.is_some() {
                err(
                    at(),
                    format!(
                        "node {v} has {} radios: the energy model (`[energy]`) needs one radio per node",
                        c.len()
                    ),
                );
            }
        }
    }
    // The group that first lists each node (from the lists, not by visiting every node).
    let mut group_of: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (g, nr) in radio.node_ranges.iter().flatten().enumerate() {
        let q = |f: &str| vec![k("radio"), k("node_ranges"), Seg::Index(g), k(f)];
        if let Some(bad) = nr.nodes.iter().find(|&&v| v >= n) {
            err(
                q("nodes"),
                format!("node index {bad} out of range: expected 0..{}", n.saturating_sub(1)),
            );
        }
        let mut reported = false;
        for &v in &nr.nodes {
            let first = *group_of.entry(v).or_insert(g);
            if first != g && !reported {
                reported = true;
                err(
                    q("nodes"),
                    format!(
                        "node {v} is also in radio.node_ranges.{first}: expected each node in at most one group (a node has one transmission range)"
                    ),
                );
            }
        }
        if !(nr.range.0 > 0.0) {
            err(q("range"), "expected a range greater than 0".into());
        }
    }
}

/// Flow `i`: its ends, transport, TCP options, application and (wired) path.
fn validate_flow(
    sc: &Scenario,
    i: usize,
    f: &crate::Flow,
    paths: Option<&Paths>,
    err: &mut impl FnMut(Vec<Seg>, String),
) {
    let n = sc.nodes.count;
    let node_ok = |v: u32| v < n;
    let p = |f: &str| vec![k("flows"), Seg::Index(i), k(f)];
    let mut ends_ok = true;
    for (name, v) in [("src", f.src), ("dst", f.dst)] {
        if !node_ok(v) {
            ends_ok = false;
            err(
                p(name),
                format!(
                    "node index {v} out of range: expected 0..{} (nodes.count = {n})",
                    n.saturating_sub(1)
                ),
            );
        }
    }
    if ends_ok && f.src == f.dst {
        ends_ok = false;
        err(
            p("dst"),
            format!("a flow needs two different nodes, found src = dst = {}", f.src),
        );
    }
    crate::transports::validate_keys(sc, i, f, &mut |path, msg| err(path, msg));
    if f.app.streams == Some(0) {
        err(
            vec![k("flows"), Seg::Index(i), k("app"), k("streams")],
            "expected at least 1 stream".into(),
        );
    }
    validate_app(sc, i, f, err);
    validate_copies(sc, i, f, err);
    if let (Some(paths), true) = (paths, ends_ok) {
        validate_flow_path(sc, i, f, paths, err);
    }
}

/// The on-off keys of application `a` (`pa(key)`: a key's path): on and off periods for an
/// on-off application, and for no other kind; a Pareto shape above 1.
fn validate_on_off(a: &crate::App, pa: &impl Fn(&str) -> Vec<Seg>, err: &mut impl FnMut(Vec<Seg>, String)) {
    let keys = [
        ("on", a.on.is_some()),
        ("off", a.off.is_some()),
        ("distribution", a.distribution.is_some()),
        ("shape", a.shape.is_some()),
    ];
    if a.kind != AppKind::OnOff {
        for (name, present) in keys {
            if present {
                err(
                    pa(name),
                    format!("`{name}` applies to on-off applications, not {}", a.kind.name()),
                );
            }
        }
        return;
    }
    if a.arrivals != Arrivals::Periodic {
        err(
            pa("arrivals"),
            "`arrivals` does not apply to an on-off application".into(),
        );
    }
    if a.jitter.is_some() {
        err(pa("jitter"), "`jitter` does not apply to an on-off application".into());
    }
    for (name, d) in [("on", a.on), ("off", a.off)] {
        match d {
            None => err(
                pa("kind"),
                format!("an on-off application needs `{name}`, the mean {name} period, e.g. {name} = \"1s\""),
            ),
            Some(d) if d.0 == 0 => err(pa(name), "expected a period greater than 0".into()),
            _ => {}
        }
    }
    if let Some(s) = a.shape {
        if a.distribution != Some(crate::PeriodDistribution::Pareto) {
            err(
                pa("shape"),
                "`shape` applies to Pareto periods (distribution = \"pareto\")".into(),
            );
        } else if !(s.is_finite() && s > 1.0) {
            err(
                pa("shape"),
                format!("expected a Pareto shape greater than 1 (finite mean), found {s}"),
            );
        }
    }
}

/// Flow `i`'s application table.
fn validate_app(sc: &Scenario, i: usize, f: &crate::Flow, err: &mut impl FnMut(Vec<Seg>, String)) {
    let sim = &sc.simulation;
    let dur = sim.duration.0;
    let pa = |f: &str| vec![k("flows"), Seg::Index(i), k("app"), k(f)];
    let a = &f.app;
    validate_on_off(a, &pa, err);
    match a.kind {
        AppKind::Cbr | AppKind::Voip | AppKind::OnOff => {
            match a.size {
                None => err(
                    pa("kind"),
                    format!("a {} application needs `size`, e.g. size = \"128B\"", a.kind.name()),
                ),
                Some(s) if s.0 == 0 => err(pa("size"), "expected a size greater than 0".into()),
                _ => {}
            }
            match (a.interval, a.rate) {
                (None, None) => err(
                    pa("kind"),
                    format!("a {} application needs `interval` or `rate`", a.kind.name()),
                ),
                (Some(_), Some(_)) => err(pa("rate"), "give `interval` or `rate`, not both".into()),
                (Some(iv), None) if iv.0 == 0 => err(pa("interval"), "expected an interval greater than 0".into()),
                (None, Some(r)) if r.0 == 0 => err(pa("rate"), "expected a rate greater than 0".into()),
                _ => {}
            }
            if a.bytes.is_some() {
                err(
                    pa("bytes"),
                    format!("`bytes` applies to bulk applications, not {}", a.kind.name()),
                );
            }
            if let Some(j) = a.jitter {
                if a.arrivals != Arrivals::Periodic {
                    err(pa("jitter"), "`jitter` applies to periodic arrivals".into());
                } else if !(j.is_finite() && (0.0..1.0).contains(&j)) {
                    err(pa("jitter"), format!("expected a jitter fraction in [0, 1), found {j}"));
                }
            }
            if a.count == Some(0) {
                err(pa("count"), "expected a message count of at least 1".into());
            }
        }
        AppKind::Bulk => {
            for (name, present) in [("interval", a.interval.is_some()), ("rate", a.rate.is_some())] {
                if present {
                    err(pa(name), format!("`{name}` does not apply to a bulk application"));
                }
            }
            if a.arrivals != Arrivals::Periodic {
                err(pa("arrivals"), "`arrivals` does not apply to a bulk application".into());
            }
            for (name, present) in [("jitter", a.jitter.is_some()), ("count", a.count.is_some())] {
                if present {
                    err(pa(name), format!("`{name}` does not apply to a bulk application"));
                }
            }
        }
    }
    if a.start.0 >= dur && dur > 0 {
        err(
            pa("start"),
            format!(
                "the application starts at {}, not before the end of the simulation ({})",
                a.start.human(),
                sim.duration.human()
            ),
        );
    }
    if let Some(j) = a.start_jitter {
        let end = a.stop.map_or(dur, |s| s.0);
        if dur > 0 && a.start.0.saturating_add(j.0) > end {
            err(
                pa("start_jitter"),
                format!(
                    "start ({}) + start_jitter ({}) passes the application's end ({})",
                    a.start.human(),
                    j.human(),
                    crate::Duration(end).human()
                ),
            );
        }
    }
    if let Some(stop) = a.stop {
        if stop.0 <= a.start.0 {
            err(
                pa("stop"),
                format!("expected stop ({}) after start ({})", stop.human(), a.start.human()),
            );
        } else if stop.0 > dur {
            err(
                pa("stop"),
                format!(
                    "expected stop ({}) at most simulation.duration ({})",
                    stop.human(),
                    sim.duration.human()
                ),
            );
        }
    }
}

/// Flow `i`'s `copies` (1 to [`crate::MAX_COPIES`]) and `stagger`: its last copy starts
/// before the application's stop and the end of the simulation.
fn validate_copies(sc: &Scenario, i: usize, f: &crate::Flow, err: &mut impl FnMut(Vec<Seg>, String)) {
    let p = |f: &str| vec![k("flows"), Seg::Index(i), k(f)];
    if !(1..=crate::MAX_COPIES).contains(&f.copies) {
        err(
            p("copies"),
            format!("expected 1 to {} copies, found {}", crate::MAX_COPIES, f.copies),
        );
        return;
    }
    let a = &f.app;
    let dur = sc.simulation.duration;
    let end = a.stop.filter(|s| s.0 <= dur.0).unwrap_or(dur);
    let last = (a.start.0).saturating_add(u64::from(f.copies - 1).saturating_mul(f.stagger.0));
    let jitter = a.start_jitter.map_or(0, |j| j.0);
    // The application's own start (and start + start_jitter) is checked with it; only what
    // the copies add is here.
    let late = last >= end.0 || last.saturating_add(jitter) > end.0;
    if f.copies > 1 && f.stagger.0 > 0 && a.start.0 < end.0 && late {
        let what = if a.stop.is_some() {
            "app.stop"
        } else {
            "simulation.duration"
        };
        let plus = match a.start_jitter {
            Some(j) if j.0 > 0 => format!(" (+ start_jitter {})", j.human()),
            _ => String::new(),
        };
        err(
            p("stagger"),
            format!(
                "copy {} would start at {}{plus}, not before {what} ({}): lower copies or stagger",
                f.copies - 1,
                crate::Duration(last).human(),
                end.human()
            ),
        );
    }
}

/// Flow `i`'s wired path(s): reachable, and a UDP message fits the path MTU.
fn validate_flow_path(sc: &Scenario, i: usize, f: &crate::Flow, paths: &Paths, err: &mut impl FnMut(Vec<Seg>, String)) {
    let sim = &sc.simulation;
    let a = &f.app;
    let p = |f: &str| vec![k("flows"), Seg::Index(i), k(f)];
    let pa = |f: &str| vec![k("flows"), Seg::Index(i), k("app"), k(f)];
    let dirs: &[(u32, u32)] = if a.kind == AppKind::Voip {
        &[(f.src, f.dst), (f.dst, f.src)]
    } else {
        &[(f.src, f.dst)]
    };
    for &(s, t) in dirs {
        if !paths.reachable(s, t) {
            err(
                p("dst"),
                format!("node {t} is unreachable from node {s}: no path of links joins them"),
            );
            break;
        }
        let mtu = paths
            .path_links(s, t)
            .iter()
            .map(|&l| sc.links[l as usize].mtu.0 as u32)
            .min()
            .unwrap_or(u32::MAX);
        if let (Some(max), Some(size)) = (f.transport.max_message(sim.sizes.convention(), mtu), a.size) {
            if size.0 > max as u64 {
                let name = f.transport.label();
                err(
                    pa("size"),
                    format!(
                        "a {name} message of {}B does not fit the path MTU of {mtu}B from node {s} to node {t} (at most {max}B with sizes = \"{}\"); {name} does not fragment",
                        size.0,
                        if sim.sizes == crate::Sizes::Ns2 { "ns2" } else { "standard" }
                    ),
                );
                break;
            }
        }
    }
}

/// `[sweep]`: every key names a value of this scenario (a linked key `"a + b"` names several,
/// each given every value), with a non-empty list of values.
fn validate_sweep(sc: &Scenario, sweep: &toml::Table, err: &mut impl FnMut(Vec<Seg>, String)) {
    let mut plain = sc.clone();
    plain.sweep = None;
    let tree = serde_json::to_value(&plain).unwrap_or_default();
    for (key, values) in sweep {
        let path = vec![k("sweep"), k(key)];
        for part in key.split('+').map(str::trim) {
            if part.is_empty() {
                err(
                    path.clone(),
                    format!("sweep key `{key}`: expected dotted keys joined by `+`"),
                );
            } else if !path_exists(&tree, &crate::parse_path(part)) {
                err(path.clone(), format!("unknown sweep key `{part}`: no such key in this scenario (write array elements by index, e.g. \"flows.0.app.interval\")"));
            }
        }
        match values.as_array() {
            Some(a) if !a.is_empty() => {}
            Some(_) => err(path, "expected a non-empty list of values".into()),
            None => err(path, format!("expected a list of values, found {}", values.type_str())),
        }
    }
}

fn path_exists(tree: &serde_json::Value, path: &[Seg]) -> bool {
    let mut node = tree;
    for seg in path {
        node = match (node, seg) {
            (serde_json::Value::Object(o), Seg::Key(k)) => match o.get(k) {
                Some(n) => n,
                None => return false,
            },
            (serde_json::Value::Array(a), Seg::Index(i)) => match a.get(*i) {
                Some(n) => n,
                None => return false,
            },
            _ => return false,
        };
    }
    true
}
