//! The SCTP multi-homing and PR-SCTP keys of a flow: valid ones load, every mistake is one line
//! naming its key.

use tpsim_scenario::load;

/// Node 0 with one link to node 1, node 1 with two (links 0: 0-1, 1: 1-2), an SCTP flow 0 -> 1
/// with `sctp`.
fn with(sctp: &str) -> String {
    format!(
        "[simulation]\nduration = \"10s\"\n[nodes]\ncount = 3\n\
         [[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
         [[links]]\nnodes = [1, 2]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
         [[flows]]\nsrc = 0\ndst = 1\ntransport = \"sctp\"\napp = {{ kind = \"cbr\", size = \"100B\", interval = \"1s\" }}\n\
         sctp = {{ {sctp} }}\n"
    )
}

/// The single diagnostic of loading `text`: (key, message).
fn error(text: &str) -> (String, String) {
    let e = load(text, "<t>").expect_err("must be refused");
    assert_eq!(e.diagnostics.len(), 1, "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
    (e.diagnostics[0].path.clone(), e.diagnostics[0].message.clone())
}

#[test]
fn multihoming_and_pr_keys_load() {
    let sc =
        load(&with("multihoming = true, primary = 1, lifetime = \"200ms\""), "<t>").unwrap_or_else(|e| panic!("{e}"));
    let o = sc.flows[0].sctp.as_ref().unwrap();
    assert_eq!(
        (o.multihoming, o.primary, o.lifetime.map(|d| d.0)),
        (Some(true), Some(1), Some(200_000_000))
    );
    load(&with("max_retransmissions = 0"), "<t>").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn primary_must_name_one_of_the_destination_addresses() {
    // Node 1 ends links 0 and 1: addresses 0 and 1.
    let (key, msg) = error(&with("multihoming = true, primary = 2"));
    assert_eq!(key, "flows.0.sctp.primary");
    assert!(msg.contains("node 1's 2 addresses") && msg.contains("got 2"), "{msg}");
}

#[test]
fn one_pr_policy_with_a_positive_lifetime() {
    let (key, msg) = error(&with("lifetime = \"1s\", max_retransmissions = 2"));
    assert_eq!(key, "flows.0.sctp.max_retransmissions");
    assert!(msg.contains("not both"), "{msg}");
    let (key, _) = error(&with("lifetime = \"0s\""));
    assert_eq!(key, "flows.0.sctp.lifetime");
}

#[test]
fn potentially_failed_keys_load_and_turn_pf_on() {
    let sc = load(&with("multihoming = true, potentially_failed = true"), "<t>").unwrap_or_else(|e| panic!("{e}"));
    let o = sc.flows[0].sctp.as_ref().unwrap();
    assert_eq!(o.pf_max_retrans_if_on(), Some(0), "RFC 7829's PFMR by default");
    let sc = load(
        &with("multihoming = true, potentially_failed = true, pf_max_retrans = 2"),
        "<t>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.flows[0].sctp.as_ref().unwrap().pf_max_retrans_if_on(), Some(2));
    let sc = load(&with("multihoming = true"), "<t>").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.flows[0].sctp.as_ref().unwrap().pf_max_retrans_if_on(), None);
    let sc = load(&with("potentially_failed = false"), "<t>").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.flows[0].sctp.as_ref().unwrap().pf_max_retrans_if_on(), None);
}

#[test]
fn pf_max_retrans_needs_pf_on_and_stays_below_path_max_retrans() {
    let (key, msg) = error(&with("multihoming = true, pf_max_retrans = 1"));
    assert_eq!(key, "flows.0.sctp.pf_max_retrans");
    assert!(msg.contains("potentially_failed = true"), "{msg}");
    let (key, msg) = error(&with(
        "multihoming = true, potentially_failed = true, pf_max_retrans = 5",
    ));
    assert_eq!(key, "flows.0.sctp.pf_max_retrans");
    assert!(
        msg.contains("below Path.Max.Retrans (5)") && msg.contains("got 5"),
        "{msg}"
    );
    let (key, _) = error(&with(
        "multihoming = true, potentially_failed = true, pf_max_retrans = 2, path_max_retrans = 2",
    ));
    assert_eq!(key, "flows.0.sctp.pf_max_retrans");
    load(
        &with("multihoming = true, potentially_failed = true, pf_max_retrans = 2, path_max_retrans = 3"),
        "<t>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
}
