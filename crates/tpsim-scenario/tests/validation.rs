//! Validation rules that keep the engine's assumptions: two-element arrays hold exactly two
//! elements, a background `exclude` names existing nodes, and a node has one transmission
//! range. Each mistake is one `file:line:col: key ...: message` line.

use tpsim_scenario::load;

const BASE: &str = "[simulation]\nduration = \"10s\"\n[nodes]\ncount = 3\n";

/// The single diagnostic of loading `text`, checked to be one line at the line of `needle`:
/// (key, message).
fn error_at(text: &str, needle: &str) -> (String, String) {
    let e = load(text, "t.toml").expect_err("must be refused");
    assert_eq!(e.diagnostics.len(), 1, "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
    let line = text.lines().position(|l| l.contains(needle)).expect("needle") + 1;
    let d = &e.diagnostics[0];
    assert_eq!(d.line, line, "{e}");
    assert!(
        e.to_string().starts_with(&format!("t.toml:{line}:{}: key `", d.column)),
        "{e}"
    );
    (d.path.clone(), d.message.clone())
}

fn link(nodes: &str) -> String {
    format!("{BASE}[[links]]\nnodes = {nodes}\nrate = \"1Mbps\"\ndelay = \"1ms\"\n")
}

#[test]
fn a_link_lists_exactly_two_nodes() {
    load(&link("[0, 1]"), "t.toml").unwrap_or_else(|e| panic!("{e}"));
    for (nodes, len) in [("[0, 1, 1]", 3), ("[0, 1, 2, 0]", 4), ("[0]", 1)] {
        let (key, msg) = error_at(&link(nodes), "nodes = ");
        assert_eq!(key, "links.0.nodes");
        assert!(msg.contains(&format!("invalid length {len}")), "{msg}");
        assert!(msg.contains("2 elements"), "{msg}");
    }
}

#[test]
fn other_two_element_arrays_refuse_a_third_element() {
    let radio = "[radio]\nstandard = \"802.11b\"\n";
    for (text, needle, key) in [
        (
            format!("{BASE}placement = {{ kind = \"uniform\", area = [\"10m\", \"10m\", \"10m\"] }}\n{radio}"),
            "placement",
            "nodes.placement.area",
        ),
        (
            format!("{BASE}placement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"1m\", \"0m\", \"5m\"], [\"2m\", \"0m\"]] }}\n{radio}"),
            "placement",
            "nodes.placement.positions.1",
        ),
        (
            format!("{}[background]\nflows = 1\nsize = \"10B\"\ninterval = \"1s\"\nstart = [\"0s\", \"1s\", \"2s\"]\n", link("[0, 1]")),
            "start = ",
            "background.start",
        ),
    ] {
        let (k, msg) = error_at(&text, needle);
        assert_eq!(k, key, "{msg}");
        assert!(msg.contains("invalid length 3"), "{msg}");
    }
}

#[test]
fn a_background_exclude_names_existing_nodes() {
    let bg = |exclude: &str| {
        format!(
            "{}[background]\nflows = 2\nsize = \"10B\"\ninterval = \"1s\"\nexclude = {exclude}\n",
            link("[0, 1]")
        )
    };
    load(&bg("[2]"), "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let (key, msg) = error_at(&bg("[2, 7]"), "exclude = ");
    assert_eq!(key, "background.exclude.1");
    assert!(msg.contains("node index 7 out of range: expected 0..2"), "{msg}");
}

#[test]
fn a_node_has_one_transmission_range() {
    let ranges = |groups: &str| {
        format!(
            "{BASE}placement = {{ kind = \"grid\", spacing = \"10m\" }}\n[radio]\nstandard = \"802.11b\"\nnode_ranges = {groups}\n"
        )
    };
    load(
        &ranges("[{ nodes = [0, 1], range = \"50m\" }, { nodes = [2], range = \"80m\" }]"),
        "t.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (key, msg) = error_at(
        &ranges("[{ nodes = [0, 1], range = \"50m\" }, { nodes = [2, 1], range = \"80m\" }]"),
        "node_ranges",
    );
    assert_eq!(key, "radio.node_ranges.1.nodes");
    assert!(msg.contains("node 1 is also in radio.node_ranges.0"), "{msg}");
}

/// The rules that back the engine's indexing (the table in tpsim-engine's `world::build`
/// documentation): each out-of-range index or missing part is refused at its key.
#[test]
fn each_index_the_engine_trusts_is_checked() {
    let radio = format!(
        "{BASE}placement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"100m\", \"0m\"], [\"200m\", \"0m\"]] }}\n[radio]\nstandard = \"802.11b\"\n"
    );
    let flow = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"100B\", interval = \"1s\" }\n";
    for (text, needle, key, msg) in [
        (
            link("[0, 3]"),
            "nodes = ",
            "links.0.nodes.1",
            "node index 3 out of range",
        ),
        (
            link("[0, 1]") + &flow.replace("dst = 1", "dst = 3"),
            "dst = 3",
            "flows.0.dst",
            "node index 3 out of range",
        ),
        (
            radio.replace(", [\"200m\", \"0m\"]", ""),
            "positions",
            "nodes.placement.positions",
            "expected 3 positions",
        ),
        (
            radio.clone() + "channels = [[1], [1]]\n",
            "channels",
            "radio.channels",
            "one list of channels per node",
        ),
        (
            radio.clone() + "channels = [[1], [], [1]]\n",
            "channels",
            "radio.channels.1",
            "at least one channel",
        ),
        (
            radio.clone() + "[beacons]\ninterval = \"1s\"\nsize = \"10B\"\nnodes = [5]\n",
            "nodes = [5]",
            "beacons.nodes",
            "node index 5 out of range",
        ),
        (
            radio.clone() + "[sensors]\nsink = 4\ntransport = \"udp\"\nsize = \"10B\"\ninterval = \"1s\"\n",
            "sink = 4",
            "sensors.sink",
            "node index 4 out of range",
        ),
        (
            link("[0, 1]") + "[[events]]\nat = \"1s\"\nkind = \"interface_down\"\nnode = 2\nlink = 0\n",
            "node = 2",
            "events.0.node",
            "node 2 has no interface on link 0",
        ),
        (
            link("[0, 1]") + "[[events]]\nat = \"1s\"\nkind = \"node_down\"\nnode = 3\n",
            "node = 3",
            "events.0.node",
            "node index 3 out of range",
        ),
        (
            link("[0, 1]") + "[[events]]\nat = \"1s\"\nkind = \"interface_down\"\nnode = 0\nradio = true\n",
            "radio = true",
            "events.0.radio",
            "no radio",
        ),
    ] {
        let (k, m) = error_at(&text, needle);
        assert_eq!(k, key, "{m}");
        assert!(m.contains(msg), "{key}: {m}");
    }
}

/// ns-2's TCP clock phase lies within one tick (10 ms); it is a key of the ns2 preset only.
#[test]
fn an_ns2_tcp_clock_phase_lies_within_one_tick() {
    let flow = |tcp: &str| {
        format!(
            "{}[[flows]]\nsrc = 0\ndst = 1\ntransport = \"tcp\"\ntcp = {tcp}\n\
             app = {{ kind = \"cbr\", size = \"100B\", interval = \"1s\" }}\n",
            link("[0, 1]")
        )
    };
    load(&flow("{ preset = \"ns2\", boot_time = \"9ms\" }"), "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let (key, msg) = error_at(&flow("{ preset = \"ns2\", boot_time = \"10ms\" }"), "boot_time");
    assert_eq!(
        (key.as_str(), msg.as_str()),
        (
            "flows.0.tcp.boot_time",
            "expected a phase in [0s, 10ms), ns-2's tcpTick_"
        )
    );
    let (key, msg) = error_at(&flow("{ boot_time = \"1ms\" }"), "boot_time");
    assert_eq!(key, "flows.0.tcp.boot_time");
    assert!(msg.contains("does not apply to tpsim's TCP"), "{msg}");
}
