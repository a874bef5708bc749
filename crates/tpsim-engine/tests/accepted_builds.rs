//! Property test: every scenario that `tpsim_scenario::load` accepts builds and runs in the
//! engine without panicking. The engine trusts validation for what it indexes (link ends,
//! flow ends, a node's radios, an event's interface ...; the table in the `world::build`
//! module's documentation); here small random scenarios mix the parts those assumptions
//! concern: wired links (a few with a third node or nodes out of range), radios with channel
//! lists and per-node ranges, ad hoc routing, ARP, beacons, energy, mobility, flows of every
//! transport (SCTP multi-homing with a primary address), background flows with `exclude`,
//! sensors, and fault events of every kind (interface events on links and on radios, with
//! and without a channel). Some draws are refused by validation (about half; the generator is
//! checked to produce at least a quarter of valid ones); those accepted must run to their end.

mod common;

use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tpsim_engine::{run, RunOptions};
use tpsim_scenario::load;

/// Draws from a fixed list of numbers, cycling (shrinking the list towards zeros gives the
/// simplest scenario: one node, nothing else).
struct Dice<'a> {
    d: &'a [u32],
    i: usize,
}

impl Dice<'_> {
    /// A number in 0..m.
    fn below(&mut self, m: u32) -> u32 {
        let v = self.d[self.i % self.d.len()];
        self.i += 1;
        v % m.max(1)
    }
    /// True with probability about `pct` %.
    fn chance(&mut self, pct: u32) -> bool {
        self.below(100) < pct
    }
    /// A node index, now and then one past the last (which validation must refuse).
    fn node(&mut self, n: u32) -> u32 {
        if self.chance(3) {
            n
        } else {
            self.below(n)
        }
    }
    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[self.below(from.len() as u32) as usize]
    }
}

/// A small random scenario (TOML) from the draws `d`. Each part is valid most of the time and
/// now and then breaks one rule (an index one past the last, a third link end, a node in two
/// range groups, an event on a channel the node has no radio on ...).
fn scenario(d: &[u32]) -> String {
    let mut d = Dice { d, i: 0 };
    let n = if d.chance(5) { 1 } else { 2 + d.below(4) };
    let mut t = format!("[simulation]\nduration = \"600ms\"\ndrain = \"100ms\"\n[nodes]\ncount = {n}\n");
    let radio = d.chance(60);
    let wired = !radio || d.chance(40);
    if radio {
        let spacing = d.pick(&["100m", "200m"]);
        t += &format!("placement = {{ kind = \"grid\", columns = 3, spacing = \"{spacing}\" }}\n");
        if d.chance(20) {
            t += "mobility = { model = \"random-waypoint\", speed = [\"1m/s\", \"20m/s\"], area = [\"600m\", \"600m\"] }\n";
        }
    }
    let mut n_links = 0;
    if wired {
        // A chain through every node (so that wired flows have a path), then a few more.
        let mut ends: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        for _ in 0..d.below(3) {
            let a = d.node(n);
            let b = if d.chance(5) {
                a
            } else {
                (a + 1 + d.below(n.max(2) - 1)) % n.max(2)
            };
            ends.push((a, b));
        }
        n_links = ends.len() as u32;
        for (a, b) in ends {
            let third = if d.chance(3) {
                format!(", {}", d.below(n))
            } else {
                String::new()
            };
            let extra = d.pick(&["", "mtu = \"576B\"\n", "loss = 0.2\n", "queue = 2\n"]);
            t += &format!("[[links]]\nnodes = [{a}, {b}{third}]\nrate = \"1Mbps\"\ndelay = \"5ms\"\n{extra}");
        }
    }
    if radio {
        t += "[radio]\nstandard = \"802.11b\"\n";
        if d.chance(40) {
            // One list per node (now and then one too many or too few), channels from 1..3.
            let lists = match d.below(30) {
                0 => n + 1,
                1 => n.saturating_sub(1),
                _ => n,
            };
            let per_node: Vec<String> = (0..lists)
                .map(|_| {
                    // Now and then no channel at all (refused).
                    let mask = if d.chance(3) { 0 } else { 1 + d.below(7) };
                    let chans: Vec<String> = (1..=3)
                        .filter(|c| mask & (1 << (c - 1)) != 0)
                        .map(|c| c.to_string())
                        .collect();
                    format!("[{}]", chans.join(", "))
                })
                .collect();
            t += &format!("channels = [{}]\n", per_node.join(", "));
        }
        if d.chance(30) {
            // Groups of distinct nodes, now and then one node in two groups.
            let mut next = d.below(n);
            let groups: Vec<String> = (0..1 + d.below(2))
                .map(|_| {
                    let v = if d.chance(10) { d.node(n) } else { next % n };
                    next += 1;
                    format!("{{ nodes = [{v}], range = \"{}\" }}", d.pick(&["120m", "300m"]))
                })
                .collect();
            t += &format!("node_ranges = [{}]\n", groups.join(", "));
        }
        match d.below(4) {
            1 => t += "[routing]\nprotocol = \"static\"\n",
            2 => t += "[routing]\nprotocol = \"aodv\"\n",
            3 => t += "[routing]\nprotocol = \"olsr\"\n",
            _ => {}
        }
        if d.chance(20) {
            t += "[arp]\n";
        }
        if d.chance(20) {
            let nodes = if d.chance(50) {
                format!("nodes = [{}]\n", d.node(n))
            } else {
                String::new()
            };
            t += &format!("[beacons]\ninterval = \"200ms\"\nsize = \"50B\"\n{nodes}");
        }
        if d.chance(10) {
            t += "[energy]\ninitial = \"0.5J\"\n";
        }
    }
    // Two different nodes, now and then the same one or one past the last.
    let pair = |d: &mut Dice| {
        let a = d.below(n);
        let b = if d.chance(3) {
            a
        } else {
            (a + 1 + d.below(n.max(2) - 1)) % n.max(2)
        };
        (a, if d.chance(3) { n } else { b })
    };
    if d.chance(20) {
        let (sink, node) = pair(&mut d);
        let tr = d.pick(&["udp", "tcp", "sctp"]);
        t += &format!(
            "[sensors]\nsink = {sink}\nnodes = [{node}]\ntransport = \"{tr}\"\nsize = \"60B\"\ninterval = \"150ms\"\n"
        );
    }
    if d.chance(30) {
        let exclude: Vec<String> = (0..d.below(2)).map(|_| d.node(n).to_string()).collect();
        let tr = d.pick(&["udp", "tcp"]);
        t += &format!(
            "[background]\nflows = {}\ntransport = \"{tr}\"\nsize = \"100B\"\ninterval = \"100ms\"\nexclude = [{}]\n",
            d.below(3),
            exclude.join(", ")
        );
    }
    for _ in 0..d.below(4) {
        let (src, dst) = pair(&mut d);
        let tr = d.pick(&["udp", "tcp", "tcp-sack", "sctp", "tfrc", "dccp-ccid2", "dccp-ccid3"]);
        let app = match (d.below(3), tr) {
            (1, "udp" | "tfrc") | (2, "udp") | (0, _) => {
                "{ kind = \"cbr\", size = \"200B\", interval = \"40ms\", start = \"50ms\" }"
            }
            (1, _) => "{ kind = \"voip\", size = \"160B\", interval = \"20ms\" }",
            _ => "{ kind = \"bulk\", bytes = \"20kB\" }",
        };
        let sctp = if tr == "sctp" && d.chance(30) {
            format!("sctp = {{ multihoming = true, primary = {} }}\n", d.below(2))
        } else {
            String::new()
        };
        t += &format!("[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = \"{tr}\"\napp = {app}\n{sctp}");
    }
    for _ in 0..d.below(5) {
        let at = d.below(700);
        let node = d.node(n);
        // Link events where there are links (and now and then where there are none).
        let kind = match (d.below(7), n_links > 0 || d.chance(5), radio || d.chance(5)) {
            (k @ 0..=2, true, _) => k,
            (k @ (3 | 4), _, _) => k,
            (k, _, _) => 5 + k % 2,
        };
        let link = if n_links > 0 && !d.chance(3) {
            d.below(n_links)
        } else {
            n_links
        };
        let body = match kind {
            0 => format!("kind = \"link_down\"\nlink = {link}"),
            1 => format!("kind = \"link_up\"\nlink = {link}"),
            2 => format!(
                "kind = \"link_change\"\nlink = {link}\n{}",
                d.pick(&["rate = \"200kbps\"", "delay = \"30ms\"", "loss = 0.5"])
            ),
            k @ (3 | 4) => {
                let kind = if k == 3 { "interface_down" } else { "interface_up" };
                if radio && (n_links == 0 || d.chance(50)) {
                    let channel = if d.chance(50) {
                        format!("\nchannel = {}", if d.chance(10) { d.below(5) } else { 1 + d.below(3) })
                    } else {
                        String::new()
                    };
                    format!("kind = \"{kind}\"\nnode = {node}\nradio = true{channel}")
                } else {
                    format!("kind = \"{kind}\"\nnode = {node}\nlink = {link}")
                }
            }
            5 => format!("kind = \"node_down\"\nnode = {node}"),
            _ => format!("kind = \"node_up\"\nnode = {node}"),
        };
        t += &format!("[[events]]\nat = \"{at}ms\"\n{body}\n");
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn accepted_scenarios_build_and_run(d in prop::collection::vec(any::<u32>(), 80)) {
        let text = scenario(&d);
        let Ok(sc) = load(&text, "<random>") else {
            return Ok(());
        };
        let opts = RunOptions { seed: 1, run: 0, pcap_dir: None };
        match catch_unwind(AssertUnwindSafe(|| run(&sc, &opts))) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => prop_assert!(false, "the engine failed: {e}\n{text}"),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                prop_assert!(false, "the engine panicked: {msg}\n{text}");
            }
        }
    }
}

/// The generator is worth something only if validation accepts a fair share of its
/// scenarios, and refuses some (it reaches the rules).
#[test]
fn the_generator_reaches_both_sides_of_validation() {
    let mut rng = proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha);
    let (mut ok, total) = (0, 400);
    for _ in 0..total {
        let d: Vec<u32> = (0..80).map(|_| rng.next_u32()).collect();
        ok += usize::from(load(&scenario(&d), "<random>").is_ok());
    }
    assert!(ok * 4 >= total, "only {ok} of {total} random scenarios are valid");
    assert!(
        ok < total,
        "every random scenario is valid: the generator never reaches a rule"
    );
}

/// The cases that once passed validation and then panicked in the engine.
#[test]
fn known_gaps_are_refused() {
    let radio3 = "[simulation]\nduration = \"1s\"\n[nodes]\ncount = 3\nplacement = { kind = \"grid\", spacing = \"100m\" }\n[radio]\nstandard = \"802.11b\"\n";
    let event = "[[events]]\nat = \"100ms\"\nkind = \"interface_down\"\nnode = 1\nradio = true\nchannel = 2\n";
    let e = load(&format!("{radio3}{event}"), "<t>").expect_err("no radio on channel 2");
    assert!(e.to_string().contains("events.0.channel"), "{e}");
    // The same event on a node that has a radio on channel 2 runs.
    let text = format!("{radio3}channels = [[1], [1, 2], [2]]\n{event}");
    common::sim(&text, 1);
}
