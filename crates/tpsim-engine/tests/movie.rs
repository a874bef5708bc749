//! The network movie's trace (`[output] animation = true`, docs/workbench.md "Network
//! movie"): its counts agree with the flows and network tables, its keyframes reproduce the
//! positions time series, next-hop changes name hops that were taken, deaths agree with the
//! energy model, long runs get longer frames, and with the movie off nothing changes.

mod common;

use common::{f64s, lossy_chain, opt_text, opt_u32, sim, text, u64s};
use std::collections::HashMap;
use tpsim_engine::movie::MAX_FRAMES;
use tpsim_engine::pkttrace::drop_name;
use tpsim_engine::{DropReason, RunResult, Table};

/// The movie's columns as plain vectors, one entry per row.
struct Rows {
    time_s: Vec<f64>,
    kind: Vec<&'static str>,
    node: Vec<u64>,
    peer: Vec<Option<u32>>,
    old_peer: Vec<Option<u32>>,
    flow: Vec<Option<u32>>,
    direction: Vec<Option<&'static str>>,
    reason: Vec<Option<&'static str>>,
    packets: Vec<u64>,
    span_s: Vec<Option<f64>>,
    x_m: Vec<Option<f64>>,
    y_m: Vec<Option<f64>>,
    range_m: Vec<Option<f64>>,
}

fn rows(t: &Table) -> Rows {
    Rows {
        time_s: f64s(t, "time_s").iter().map(|x| x.unwrap()).collect(),
        kind: text(t, "kind").to_vec(),
        node: u64s(t, "node").to_vec(),
        peer: opt_u32(t, "peer").to_vec(),
        old_peer: opt_u32(t, "old_peer").to_vec(),
        flow: opt_u32(t, "flow").to_vec(),
        direction: opt_text(t, "direction").to_vec(),
        reason: opt_text(t, "reason").to_vec(),
        packets: u64s(t, "packets").to_vec(),
        span_s: f64s(t, "span_s").to_vec(),
        x_m: f64s(t, "x_m").to_vec(),
        y_m: f64s(t, "y_m").to_vec(),
        range_m: f64s(t, "range_m").to_vec(),
    }
}

fn movie(res: &RunResult) -> Rows {
    rows(res.animation.as_ref().expect("the movie was asked for"))
}

/// A chain 0 - 1 - 2 - 3 whose middle link is slow, lossy and has a 3-packet queue: a TCP
/// bulk transfer and a UDP CBR flow from 0 to 3, a two-way UDP voip flow from 3.
fn wired(animation: bool, duration: &str) -> String {
    lossy_chain(
        &format!("duration = \"{duration}\""),
        &format!("animation = {animation}"),
        "",
    )
}

#[test]
fn movie_counts_agree_with_the_tables_on_a_lossy_wired_run() {
    let res = sim(&wired(true, "4s"), 7);
    let r = movie(&res);
    let n = r.kind.len();
    // Per flow direction: first deliveries, and hops into its destination (every arrival
    // there, duplicates too, crossed the destination's only link).
    let mut delivered: HashMap<(u32, &str), u64> = HashMap::new();
    let mut last_hop: HashMap<(u32, &str), u64> = HashMap::new();
    let mut drops: HashMap<&str, u64> = HashMap::new();
    for i in 0..n {
        let key = r.flow[i].zip(r.direction[i]);
        match r.kind[i] {
            "delivery" => *delivered.entry(key.unwrap()).or_default() += r.packets[i],
            "hop" => {
                if let Some(k) = key {
                    let f = res.flows.iter().find(|f| (f.key.flow, f.key.direction) == k).unwrap();
                    if r.peer[i] == Some(f.key.dst) {
                        *last_hop.entry(k).or_default() += r.packets[i];
                    }
                }
            }
            "drop" => *drops.entry(r.reason[i].unwrap()).or_default() += r.packets[i],
            _ => {}
        }
        if matches!(r.kind[i], "hop" | "drop" | "delivery") {
            // Counts over a frame of 0.5 s (the default), at the frame's start.
            assert_eq!(r.span_s[i], Some(0.5), "row {i}");
            let frames = r.time_s[i] / 0.5;
            assert!((frames - frames.round()).abs() < 1e-9, "row {i} at {}", r.time_s[i]);
            assert!(r.packets[i] > 0, "row {i}");
        } else {
            assert_eq!(r.span_s[i], None, "row {i}");
        }
    }
    for f in &res.flows {
        let k = (f.key.flow, f.key.direction);
        assert!(f.rx_segments > 0, "{k:?} delivers");
        assert_eq!(delivered.get(&k).copied().unwrap_or(0), f.rx_segments, "{k:?}");
        assert_eq!(
            last_hop.get(&k).copied().unwrap_or(0),
            f.rx_segments + f.rx_duplicate_segments,
            "{k:?}"
        );
    }
    for reason in DropReason::ALL {
        assert_eq!(
            drops.get(drop_name(reason)).copied().unwrap_or(0),
            res.network.drops[reason as usize],
            "{reason:?}"
        );
    }
    assert!(
        res.network.drops[DropReason::Queue as usize] > 0,
        "the small queue overflows"
    );
    // Wired: no radio ranges; the TCP flow's pure ACKs are hops without a flow.
    assert!(!r.kind.contains(&"range"));
    assert!((0..n).any(|i| r.kind[i] == "hop" && r.flow[i].is_none()));
}

#[test]
fn without_the_movie_nothing_is_recorded_and_the_tables_are_the_same() {
    let off = sim(&wired(false, "4s"), 7);
    assert!(off.animation.is_none());
    let on = sim(&wired(true, "4s"), 7);
    assert_eq!(off.flows_table(), on.flows_table());
    assert_eq!(off.network_table(), on.network_table());
    assert_eq!(off.series_table(), on.series_table());
}

#[test]
fn a_long_run_gets_longer_frames() {
    // 3000 s + 0.2 s of drain in at most MAX_FRAMES frames.
    let res = sim(
        &wired(true, "3000s").replace(
            "kind = \"bulk\", size = \"1000B\"",
            "kind = \"cbr\", size = \"1000B\", interval = \"1s\"",
        ),
        1,
    );
    let r = movie(&res);
    let step = 3000.2 / MAX_FRAMES as f64;
    let spans: Vec<f64> = r.span_s.iter().flatten().copied().collect();
    assert!(!spans.is_empty());
    assert!(spans.iter().all(|&s| (s - step).abs() < 1e-9), "{:?}", &spans[..3]);
    let frames: std::collections::BTreeSet<u64> = (0..r.kind.len())
        .filter(|&i| r.span_s[i].is_some())
        .map(|i| (r.time_s[i] / step).round() as u64)
        .collect();
    assert!(frames.len() as u64 <= MAX_FRAMES);
    assert!(*frames.last().unwrap() < MAX_FRAMES);
}

/// 12 random-waypoint nodes in 600 m x 600 m at 20 m/s under AODV, two flows.
fn mobile(extra: &str) -> String {
    format!(
        r#"
[simulation]
duration = "60s"
drain = "1s"
sizes = "ns2"
[output]
bin = "500ms"
positions = true
animation = true
{extra}
[nodes]
count = 12
placement = {{ kind = "uniform", area = ["600m", "600m"] }}
[nodes.mobility]
model = "random-waypoint"
speed = ["20m/s", "20m/s"]
pause = "0s"
area = ["600m", "600m"]
[radio]
rts_threshold = "0B"
[routing]
protocol = "aodv"
preset = "ns2"
[[flows]]
src = 0
dst = 11
transport = "udp"
app = {{ kind = "cbr", size = "512B", interval = "100ms", start = "1s" }}
[[flows]]
src = 5
dst = 6
transport = "tcp"
app = {{ kind = "bulk", size = "512B", start = "2s" }}
"#
    )
}

/// The position of keyframes `k` (time-sorted (t, x, y)) at `t`, linearly interpolated.
fn interpolate(k: &[(f64, f64, f64)], t: f64) -> (f64, f64) {
    let j = k.partition_point(|p| p.0 <= t);
    if j == 0 {
        return (k[0].1, k[0].2);
    }
    if j == k.len() {
        return (k[j - 1].1, k[j - 1].2);
    }
    let (a, b) = (k[j - 1], k[j]);
    let f = (t - a.0) / (b.0 - a.0);
    (a.1 + f * (b.1 - a.1), a.2 + f * (b.2 - a.2))
}

#[test]
fn keyframes_reproduce_the_positions_series_and_route_changes_name_taken_hops() {
    let res = sim(&mobile(""), 3);
    let r = movie(&res);
    let n = r.kind.len();
    let mut keys: HashMap<u64, Vec<(f64, f64, f64)>> = HashMap::new();
    for i in (0..n).filter(|&i| r.kind[i] == "position") {
        keys.entry(r.node[i])
            .or_default()
            .push((r.time_s[i], r.x_m[i].unwrap(), r.y_m[i].unwrap()));
    }
    assert_eq!(keys.len(), 12);
    // The positions series (every bin start, the same 0.5 s as the frames) from the keyframes.
    let ts = &res.timeseries;
    let mut checked = 0;
    for i in 0..ts.series.len() {
        if ts.series[i] != "x_m" {
            continue;
        }
        let node = ts.node[i].unwrap() as u64;
        let y = (0..ts.series.len())
            .find(|&j| ts.series[j] == "y_m" && ts.node[j] == ts.node[i] && ts.time_s[j] == ts.time_s[i])
            .map(|j| ts.value[j].unwrap())
            .unwrap();
        let (px, py) = interpolate(&keys[&node], ts.time_s[i]);
        assert!(
            (px - ts.value[i].unwrap()).abs() < 1e-6 && (py - y).abs() < 1e-6,
            "node {node} at {} s: keyframes give ({px}, {py}), the series ({}, {y})",
            ts.time_s[i],
            ts.value[i].unwrap()
        );
        checked += 1;
    }
    assert_eq!(checked, 12 * 122, "every node at every bin start of 61 s");
    // Keyframes only where the velocity changes: far fewer than the 123 frame starts a node
    // has (legs last about 600 m / 20 m/s / 2 = 15 s).
    assert!(
        keys.values().all(|k| k.len() < 40),
        "{:?}",
        keys.values().map(Vec::len).collect::<Vec<_>>()
    );
    // Ranges: ns-2's radio, 250 m receive and 550 m carrier-sense range at Two-Ray Ground.
    for (kind, want) in [("range", 250.0), ("cs_range", 550.0)] {
        let v: Vec<f64> = (0..n)
            .filter(|&i| r.kind[i] == kind)
            .map(|i| r.range_m[i].unwrap())
            .collect();
        assert_eq!(v.len(), 12, "{kind}");
        assert!(v.iter().all(|&m| (m - want).abs() < 1.0), "{kind}: {v:?}");
    }
    // Every next-hop change names a hop the direction's data took from that node in that
    // frame, after one it took to the old next hop before.
    let routes: Vec<usize> = (0..n).filter(|&i| r.kind[i] == "route").collect();
    assert!(!routes.is_empty(), "nodes at 20 m/s change routes within a minute");
    let hop_at = |node: u64, peer: u32, flow: Option<u32>, dir: Option<&str>, pred: &dyn Fn(f64) -> bool| {
        (0..n).any(|i| {
            r.kind[i] == "hop"
                && r.node[i] == node
                && r.peer[i] == Some(peer)
                && r.flow[i] == flow
                && r.direction[i] == dir
                && pred(r.time_s[i])
        })
    };
    for &i in &routes {
        let (t, new, old) = (r.time_s[i], r.peer[i].unwrap(), r.old_peer[i].unwrap());
        assert_ne!(new, old, "row {i}");
        assert!(r.flow[i].is_some(), "row {i}");
        let frame = (t / 0.5).floor() * 0.5;
        assert!(
            hop_at(r.node[i], new, r.flow[i], r.direction[i], &|s| (s - frame).abs() < 1e-9),
            "row {i}"
        );
        assert!(
            hop_at(r.node[i], old, r.flow[i], r.direction[i], &|s| s <= frame + 1e-9),
            "row {i}"
        );
    }
}

#[test]
fn node_deaths_are_the_energy_models() {
    let res = sim(
        &mobile("[energy]\ninitial = \"8J\"\ntx = \"1.4W\"\nrx = \"1W\"\nidle = \"0.2W\"\ndeath = true"),
        3,
    );
    let r = movie(&res);
    let deaths: Vec<f64> = (0..r.kind.len())
        .filter(|&i| r.kind[i] == "node" && r.reason[i] == Some("energy"))
        .map(|i| r.time_s[i])
        .collect();
    assert!(res.network.dead_nodes > 0, "the batteries run out");
    assert_eq!(deaths.len() as u64, res.network.dead_nodes);
    let first = deaths.iter().copied().fold(f64::INFINITY, f64::min);
    assert!((first - res.network.first_node_death_s.unwrap()).abs() < 1e-9);
}
