//! `[radio] channels`: radios on several channels per node, and the `channel` of an interface
//! event on such a node; every mistake is one line naming its key.

use tpsim_scenario::load;

/// Three radio nodes with `channels` (a TOML value, or nothing) and `rest` appended.
fn with(channels: &str, rest: &str) -> String {
    let ch = if channels.is_empty() {
        String::new()
    } else {
        format!("channels = {channels}\n")
    };
    format!(
        "[simulation]\nduration = \"10s\"\n[nodes]\ncount = 3\n\
         placement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"100m\", \"0m\"], [\"200m\", \"0m\"]] }}\n\
         [radio]\n{ch}{rest}"
    )
}

/// The single diagnostic of loading `text`: (key, message).
fn error(text: &str) -> (String, String) {
    let e = load(text, "<t>").expect_err("must be refused");
    assert_eq!(e.diagnostics.len(), 1, "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
    let d = &e.diagnostics[0];
    (d.path.clone(), d.message.clone())
}

fn event(node: u32, channel: Option<u32>) -> String {
    let c = channel.map(|c| format!("channel = {c}\n")).unwrap_or_default();
    format!("[[events]]\nat = \"1s\"\nkind = \"interface_down\"\nnode = {node}\nradio = true\n{c}")
}

#[test]
fn channel_lists_and_interface_events_on_them_load() {
    let text = with("[[1, 2], [1], [2]]", &event(0, Some(2)));
    let sc = load(&text, "<t>").unwrap_or_else(|e| panic!("{e}"));
    let r = sc.radio.as_ref().unwrap();
    assert_eq!(r.channels, Some(vec![vec![1, 2], vec![1], vec![2]]));
    assert_eq!(sc.events[0].channel, Some(2));
    // A node with one radio needs no channel.
    load(&with("[[1, 2], [1], [2]]", &event(1, None)), "<t>").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn channel_lists_must_fit_the_nodes() {
    let (key, msg) = error(&with("[[1], [1]]", ""));
    assert_eq!(key, "radio.channels");
    assert!(msg.contains("one list of channels per node (3), found 2"), "{msg}");
    let (key, msg) = error(&with("[[1], [], [1]]", ""));
    assert_eq!(key, "radio.channels.1");
    assert!(msg.contains("at least one channel"), "{msg}");
    let (key, msg) = error(&with("[[1], [2, 2], [1]]", ""));
    assert_eq!(key, "radio.channels.1");
    assert!(msg.contains("twice"), "{msg}");
    let (key, msg) = error(&with("[[1, 2, 3, 4, 5, 6, 7, 8, 9], [1], [1]]", ""));
    assert_eq!(key, "radio.channels.0");
    assert!(msg.contains("at most 8"), "{msg}");
}

#[test]
fn energy_needs_one_radio_per_node() {
    let text = with("[[1, 2], [1], [2]]", "[energy]\ninitial = \"10J\"\n");
    let (key, msg) = error(&text);
    assert_eq!(key, "radio.channels.0");
    assert!(msg.contains("one radio per node"), "{msg}");
}

#[test]
fn interface_events_name_the_channel_of_a_node_with_several_radios() {
    let (key, msg) = error(&with("[[1, 2], [1], [2]]", &event(0, None)));
    assert_eq!(key, "events.0");
    assert!(msg.contains("channel = <one of them>"), "{msg}");
    let (key, msg) = error(&with("[[1, 2], [1], [2]]", &event(0, Some(3))));
    assert_eq!(key, "events.0.channel");
    assert!(msg.contains("no radio on channel 3"), "{msg}");
    let text = with("", "") + "[[events]]\nat = \"1s\"\nkind = \"node_down\"\nnode = 0\nchannel = 1\n";
    let (key, msg) = error(&text);
    assert_eq!(key, "events.0.channel");
    assert!(msg.contains("does not apply"), "{msg}");
}

#[test]
fn interface_events_without_channel_lists_name_channel_1_only() {
    // Without `channels` every node has one radio, on channel 1.
    load(&with("", &event(1, Some(1))), "<t>").unwrap_or_else(|e| panic!("{e}"));
    let text = with("", &event(1, Some(2)));
    let e = load(&text, "<t>").expect_err("must be refused");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
    let line = text.lines().position(|l| l.starts_with("channel = 2")).unwrap() + 1;
    assert!(e.to_string().starts_with(&format!("<t>:{line}:")), "{e}");
    let (key, msg) = error(&text);
    assert_eq!(key, "events.0.channel");
    assert!(msg.contains("node 1 has no radio on channel 2"), "{msg}");
    assert!(msg.contains("channel 1"), "{msg}");
}
