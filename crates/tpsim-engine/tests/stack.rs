//! `simulation.stack`: one key switches every flow that does not choose between tpsim's
//! transports and ns-2.35's agents.

mod common;

use common::sim;

/// Study D's link with two one-way flows of `transport`, each with the `extra` flow keys, under
/// `stack` (none: the key absent).
fn study_d(stack: Option<&str>, transport: &str, extra: &str) -> String {
    let stack = stack.map(|s| format!("stack = \"{s}\"\n")).unwrap_or_default();
    common::study_d(&format!("drain = \"1s\"\n{stack}"), "", transport, extra, "20ms")
}

/// `stack = "ns2"` gives the same run as the explicit ns-2 preset and profile, and a run
/// different from the modern stack's (ns-2's TCP pads each write to a 1040-byte packet; its
/// SCTP bundles).
#[test]
fn the_ns2_stack_equals_the_explicit_ns2_models() {
    for (transport, explicit) in [
        ("tcp", "tcp = { preset = \"ns2\" }"),
        ("sctp", "sctp = { profile = \"ns2\" }"),
    ] {
        let by_stack = sim(&study_d(Some("ns2"), transport, ""), 1);
        let by_flow = sim(&study_d(None, transport, explicit), 1);
        let modern = sim(&study_d(Some("modern"), transport, ""), 1);
        assert_eq!(
            format!("{:?}", by_stack.flows),
            format!("{:?}", by_flow.flows),
            "{transport}"
        );
        assert_eq!(by_stack.network.mac_frames, by_flow.network.mac_frames, "{transport}");
        assert_ne!(
            format!("{:?}", by_stack.flows),
            format!("{:?}", modern.flows),
            "{transport}"
        );
        let padded = by_stack.flows[0].extra.iter().any(|(n, _)| *n == "padding_bytes");
        assert_eq!(padded, transport == "tcp", "ns-2's TCP pads every write: {transport}");
        if transport == "sctp" {
            assert!(by_stack.flows[0].tx_segments < modern.flows[0].tx_segments / 2);
        }
    }
}

/// A flow's own choice wins over the stack.
#[test]
fn a_flow_preset_wins_over_the_stack() {
    let a = sim(&study_d(Some("ns2"), "tcp", "tcp = { preset = \"modern\" }"), 1);
    let b = sim(&study_d(None, "tcp", ""), 1);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
}

/// With a stack, keys of either TCP model may stay in the file (each stack uses its own);
/// without one, a key of the other model is an error naming it.
#[test]
fn with_a_stack_keys_of_both_tcp_models_are_kept() {
    let both = "tcp = { packet_size = \"128B\", mss = \"1000B\" }";
    for stack in ["ns2", "modern"] {
        tpsim_scenario::load(&study_d(Some(stack), "tcp", both), "<test>").unwrap_or_else(|e| panic!("{stack}: {e}"));
    }
    let e = tpsim_scenario::load(&study_d(None, "tcp", both), "<test>")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("flows.0.tcp.packet_size") && e.contains("does not apply"),
        "{e}"
    );
    // ns-2's packet_size applies under the ns2 stack: 128-byte packets (168 B with headers).
    let r = sim(&study_d(Some("ns2"), "tcp", both), 1);
    assert!(r.flows[0].tx_segments > 450, "{:?}", r.flows[0]);
}

/// ns-2's one-way TCP agents cannot carry a two-way application: the error names the stack.
#[test]
fn the_ns2_stack_refuses_two_way_tcp() {
    let text = study_d(Some("ns2"), "tcp", "").replace("kind = \"cbr\"", "kind = \"voip\"");
    let e = tpsim_scenario::load(&text, "<test>").unwrap_err().to_string();
    assert!(e.contains("simulation.stack") && e.contains("one-way"), "{e}");
}

/// Study D's link on the ns2 stack, `transport` flows writing every `interval`, with the ns-2
/// quirks `quirks` (a TOML list's items) switched on.
fn with_quirks(transport: &str, interval: &str, quirks: &str) -> tpsim_engine::RunResult {
    let keys = format!("drain = \"1s\"\nstack = \"ns2\"\nns2_quirks = [{quirks}]\n");
    sim(&common::study_d(&keys, "", transport, "", interval), 1)
}

/// `sctp-stall` (ns-2.35's Agent/SCTP as it is): writing every 0.8 s (study C's rate), the
/// sender delivers its first message and stalls; writing every 20 ms (study D's), a message
/// always waits when a SACK arrives and all 495 arrive, as in ns-2.35. Without the quirk the
/// sparse sender's 13 messages all arrive.
#[test]
fn the_sctp_stall_quirk_stops_a_sparse_sender_after_its_first_message() {
    let stalled = with_quirks("sctp", "800ms", "\"sctp-stall\"");
    let plain = with_quirks("sctp", "800ms", "");
    for (s, p) in stalled.flows.iter().zip(&plain.flows) {
        assert_eq!((p.tx_packets, p.rx_packets), (13, 13), "{p:?}");
        assert!((1..=2).contains(&s.rx_packets), "{s:?}");
    }
    for f in &with_quirks("sctp", "20ms", "\"sctp-stall\"").flows {
        assert_eq!(f.rx_packets, 495, "{f:?}");
    }
}

/// `dccp-no-listen`: ns-2.35's receiving agent never told to `listen` ignores the Requests, so
/// nothing is delivered and each sender's only packets are its Requests, at 0.1, 3.1 and 9.1 s
/// (ns-2.35 on study D: 6 Requests in 10 s). Without the quirk the connection opens and data
/// flows (CCID 3 with ns-2's default s = 500 B delivers only part of it).
#[test]
fn the_dccp_no_listen_quirk_leaves_only_requests_on_the_link() {
    for transport in ["dccp-ccid2", "dccp-ccid3"] {
        let deaf = with_quirks(transport, "20ms", "\"dccp-no-listen\"");
        let plain = with_quirks(transport, "20ms", "");
        for (d, p) in deaf.flows.iter().zip(&plain.flows) {
            assert_eq!((d.rx_packets, d.tx_segments), (0, 0), "{transport}: {d:?}");
            assert!(p.rx_packets > 300, "{transport}: {p:?}");
        }
        // The link carried the two senders' Requests and nothing else.
        assert_eq!(deaf.network.mac_frames, 6, "{transport}");
        assert!(plain.network.mac_frames > 600, "{transport}");
    }
}
