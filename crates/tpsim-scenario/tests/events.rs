//! `[[events]]`: what a valid fault event looks like, and a one-line error naming the key
//! for every kind of mistake.

use tpsim_scenario::{apply_overrides, load, FaultKind};

/// Nodes 0 - 1 - 2 on two links, 30 s plus 2 s of drain, then `events`.
fn with(events: &str) -> String {
    format!(
        "[simulation]\nduration = \"30s\"\ndrain = \"2s\"\n[nodes]\ncount = 3\n\
         [[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
         [[links]]\nnodes = [1, 2]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n{events}"
    )
}

/// The single diagnostic of loading `text`: (key, line, message).
fn error(text: &str) -> (String, usize, String) {
    let e = load(text, "<t>").expect_err("must be refused");
    assert_eq!(e.diagnostics.len(), 1, "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
    let d = &e.diagnostics[0];
    (d.path.clone(), d.line, d.message.clone())
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect(needle) + 1
}

#[test]
fn every_kind_loads() {
    let text = with(
        "[[events]]\nat = \"1s\"\nkind = \"link_down\"\nlink = 1\n\
         [[events]]\nat = \"2s\"\nkind = \"link_up\"\nlink = 1\n\
         [[events]]\nat = \"3s\"\nkind = \"interface_down\"\nnode = 2\nlink = 1\n\
         [[events]]\nat = \"4s\"\nkind = \"interface_up\"\nnode = 2\nlink = 1\n\
         [[events]]\nat = \"5s\"\nkind = \"node_down\"\nnode = 1\n\
         [[events]]\nat = \"6s\"\nkind = \"node_up\"\nnode = 1\n\
         [[events]]\nat = \"7s\"\nkind = \"link_change\"\nlink = 0\nrate = \"2Mbps\"\ndelay = \"3ms\"\nloss = 1.0\n",
    );
    let sc = load(&text, "<t>").unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<FaultKind> = sc.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            FaultKind::LinkDown,
            FaultKind::LinkUp,
            FaultKind::InterfaceDown,
            FaultKind::InterfaceUp,
            FaultKind::NodeDown,
            FaultKind::NodeUp,
            FaultKind::LinkChange
        ]
    );
    let c = &sc.events[6];
    assert_eq!(
        (c.at.0, c.rate.unwrap().0, c.delay.unwrap().0, c.loss),
        (7_000_000_000, 2_000_000, 3_000_000, Some(1.0))
    );
}

#[test]
fn a_link_out_of_range_names_the_key() {
    let text = with("[[events]]\nat = \"1s\"\nkind = \"link_down\"\nlink = 2\n");
    let (key, line, msg) = error(&text);
    assert_eq!(key, "events.0.link");
    assert_eq!(line, line_of(&text, "link = 2"));
    assert!(msg.contains("out of range") && msg.contains("0..1"), "{msg}");
}

#[test]
fn a_node_out_of_range_names_the_key() {
    let text = with("[[events]]\nat = \"1s\"\nkind = \"node_down\"\nnode = 3\n");
    let (key, _, msg) = error(&text);
    assert_eq!(key, "events.0.node");
    assert!(msg.contains("node index 3 out of range"), "{msg}");
}

#[test]
fn an_unknown_kind_lists_the_kinds() {
    let text = with("[[events]]\nat = \"1s\"\nkind = \"link_flap\"\nlink = 0\n");
    let (key, line, msg) = error(&text);
    assert_eq!(key, "events.0.kind");
    assert_eq!(line, line_of(&text, "link_flap"));
    assert!(
        msg.contains("link_flap") && msg.contains("link_down") && msg.contains("link_change"),
        "{msg}"
    );
}

#[test]
fn a_missing_time_is_refused() {
    let text = with("[[events]]\nkind = \"link_down\"\nlink = 0\n");
    let (key, _, msg) = error(&text);
    assert!(key.starts_with("events"), "{key}");
    assert!(msg.contains("missing field `at`"), "{msg}");
}

#[test]
fn a_negative_time_is_refused() {
    let text = with("[[events]]\nat = \"-1s\"\nkind = \"link_down\"\nlink = 0\n");
    let (key, _, msg) = error(&text);
    assert_eq!(key, "events.0.at");
    assert!(msg.contains("must not be negative"), "{msg}");
}

#[test]
fn a_time_after_the_run_is_refused() {
    let text = with("[[events]]\nat = \"32s\"\nkind = \"link_down\"\nlink = 0\n");
    let (key, _, msg) = error(&text);
    assert_eq!(key, "events.0.at");
    assert!(
        msg.contains("before the end of the run") && msg.contains("32s"),
        "{msg}"
    );
}

#[test]
fn a_key_that_does_not_apply_to_the_kind_is_named() {
    for (body, key, what) in [
        (
            "kind = \"link_down\"\nlink = 0\nnode = 1",
            "events.0.node",
            "`node` does not apply to a `link_down` event",
        ),
        (
            "kind = \"node_up\"\nnode = 1\nrate = \"1Mbps\"",
            "events.0.rate",
            "`rate` does not apply",
        ),
        (
            "kind = \"link_up\"\nlink = 0\nradio = true",
            "events.0.radio",
            "`radio` does not apply",
        ),
        (
            "kind = \"link_down\"\nlink = 0\nloss = 0.5",
            "events.0.loss",
            "`loss` does not apply",
        ),
    ] {
        let text = with(&format!("[[events]]\nat = \"1s\"\n{body}\n"));
        let (k, _, msg) = error(&text);
        assert_eq!(k, key, "{body}");
        assert!(msg.contains(what), "{body}: {msg}");
    }
}

#[test]
fn a_missing_target_is_named() {
    for (body, what) in [
        ("kind = \"link_down\"", "needs `link = <index>`"),
        ("kind = \"node_down\"", "needs `node = <index>`"),
        (
            "kind = \"interface_down\"\nnode = 1",
            "`link = <index>` (a link end of the node) or `radio = true`",
        ),
        (
            "kind = \"link_change\"\nlink = 0",
            "at least one of `rate`, `delay`, `loss`",
        ),
    ] {
        let text = with(&format!("[[events]]\nat = \"1s\"\n{body}\n"));
        let (k, _, msg) = error(&text);
        assert_eq!(k, "events.0", "{body}");
        assert!(msg.contains(what), "{body}: {msg}");
    }
}

#[test]
fn an_interface_the_node_does_not_have_is_refused() {
    // Node 0 is not an end of link 1.
    let text = with("[[events]]\nat = \"1s\"\nkind = \"interface_down\"\nnode = 0\nlink = 1\n");
    let (key, _, msg) = error(&text);
    assert_eq!(key, "events.0.node");
    assert!(
        msg.contains("node 0 has no interface on link 1") && msg.contains("1 or 2"),
        "{msg}"
    );
    // No radio in this scenario.
    let text = with("[[events]]\nat = \"1s\"\nkind = \"interface_down\"\nnode = 0\nradio = true\n");
    let (key, _, msg) = error(&text);
    assert_eq!(key, "events.0.radio");
    assert!(msg.contains("no radio"), "{msg}");
    // A link end and the radio at once.
    let text = with("[[events]]\nat = \"1s\"\nkind = \"interface_down\"\nnode = 1\nlink = 0\nradio = true\n");
    let e = load(&text, "<t>").unwrap_err();
    assert!(
        e.diagnostics
            .iter()
            .any(|d| d.path == "events.0.link" && d.message.contains("not both")),
        "{e}"
    );
}

#[test]
fn bad_change_values_are_refused() {
    let text = with("[[events]]\nat = \"1s\"\nkind = \"link_change\"\nlink = 0\nloss = 1.5\n");
    let (key, _, msg) = error(&text);
    assert_eq!(key, "events.0.loss");
    assert!(msg.contains("[0, 1]"), "{msg}");
    let text = with("[[events]]\nat = \"1s\"\nkind = \"link_change\"\nlink = 0\nrate = \"0bps\"\n");
    assert_eq!(error(&text).0, "events.0.rate");
}

#[test]
fn the_second_event_is_named_by_its_index() {
    let text = with("[[events]]\nat = \"1s\"\nkind = \"link_down\"\nlink = 0\n[[events]]\nat = \"2s\"\nkind = \"link_up\"\nlink = 9\n");
    let (key, line, _) = error(&text);
    assert_eq!(key, "events.1.link");
    assert_eq!(line, line_of(&text, "link = 9"));
}

#[test]
fn an_event_time_can_be_swept() {
    let text =
        with("[[events]]\nat = \"1s\"\nkind = \"link_down\"\nlink = 0\n[sweep]\n\"events.0.at\" = [\"5s\", \"10s\"]\n");
    load(&text, "<t>").unwrap_or_else(|e| panic!("the sweep key is known: {e}"));
    let point = apply_overrides(&text, "<t>", &[("events.0.at".into(), serde_json::json!("10s"))], true).unwrap();
    let sc = load(&point, "<t>").unwrap();
    assert_eq!(sc.events[0].at.0, 10_000_000_000);
    // A swept value is validated like a written one.
    let late = apply_overrides(&text, "<t>", &[("events.0.at".into(), serde_json::json!("40s"))], true).unwrap();
    assert!(load(&late, "<t>").unwrap_err().to_string().contains("events.0.at"));
}

#[test]
fn a_scenario_without_events_serializes_without_the_key() {
    // Stored runs are keyed by the resolved scenario: it must not change for old scenarios.
    let sc = load(&with(""), "<t>").unwrap();
    let json = serde_json::to_value(&sc).unwrap();
    assert!(json.get("events").is_none());
}
