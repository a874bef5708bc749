//! `copies` and `stagger` of `[[flows]]`: a flow that stands for several identical flows is
//! expanded by `load` into consecutive flows, each starting `stagger` after the one before;
//! bad values are one-line errors naming the key.

use tpsim_scenario::{load, AppKind, Transport};

/// Nodes 0 - 1 - 2 on two links, 10 s, then `flows`.
fn with(flows: &str) -> String {
    format!(
        "[simulation]\nduration = \"10s\"\n[nodes]\ncount = 3\n\
         [[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
         [[links]]\nnodes = [1, 2]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n{flows}"
    )
}

fn cbr(src: u32, dst: u32, start: &str, extra: &str) -> String {
    format!(
        "[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = \"udp\"\n{extra}\n\
         app = {{ kind = \"cbr\", size = \"100B\", interval = \"10ms\", start = \"{start}\" }}\n"
    )
}

fn bulk(src: u32, dst: u32, extra: &str) -> String {
    format!("[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = \"tcp\"\n{extra}\napp = {{ kind = \"bulk\" }}\n")
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

const S: u64 = 1_000_000_000;

#[test]
fn copies_take_consecutive_indices_and_later_flows_move_up() {
    let text = with(&format!(
        "{}{}{}",
        cbr(0, 1, "1s", ""),
        bulk(0, 2, "copies = 3\nstagger = \"2s\""),
        cbr(2, 0, "0s", "")
    ));
    let sc = load(&text, "<t>").unwrap();
    assert_eq!(sc.flows.len(), 5);
    // Flow 0 as written; flows 1-3 the copies of the second table; the third table is flow 4.
    assert_eq!((sc.flows[0].src, sc.flows[0].dst, sc.flows[0].app.start.0), (0, 1, S));
    for (k, f) in sc.flows[1..4].iter().enumerate() {
        assert_eq!(
            (f.src, f.dst, f.transport, f.app.kind),
            (0, 2, Transport::Tcp, AppKind::Bulk)
        );
        assert_eq!(f.app.start.0, 2 * S * k as u64, "copy {k}");
        assert_eq!(f.app.stop, None);
        assert_eq!((f.copies, f.stagger.0), (1, 0), "each copy is one flow");
    }
    assert_eq!((sc.flows[4].src, sc.flows[4].dst), (2, 0));
    // Loading the resolved scenario again changes nothing (the copies are plain flows).
    let again: tpsim_scenario::Scenario = serde_json::from_str(&sc.resolved_json()).unwrap();
    assert_eq!(again.resolved_json(), sc.resolved_json());
}

#[test]
fn copies_without_stagger_start_together_and_keep_their_stop() {
    let text = with(&cbr(0, 2, "1s", "copies = 4").replace("start = \"1s\"", "start = \"1s\", stop = \"5s\""));
    let sc = load(&text, "<t>").unwrap();
    assert_eq!(sc.flows.len(), 4);
    for f in &sc.flows {
        assert_eq!((f.app.start.0, f.app.stop.map(|s| s.0)), (S, Some(5 * S)));
    }
}

#[test]
fn generated_flows_stay_after_the_declared_copies() {
    // A radio scenario with sensors: their flows follow every copy of the declared flow.
    let text = "[simulation]\nduration = \"10s\"\n[nodes]\ncount = 3\nplacement = { kind = \"grid\", spacing = \"100m\" }\n[radio]\n\
                [sensors]\nsink = 0\nnodes = [1, 2]\ntransport = \"udp\"\nsize = \"10B\"\ninterval = \"1s\"\n"
        .to_string()
        + &bulk(1, 2, "copies = 2\nstagger = \"1s\"");
    let sc = load(&text, "<t>").unwrap();
    let ends: Vec<(u32, u32, u64)> = sc.flows.iter().map(|f| (f.src, f.dst, f.app.start.0)).collect();
    assert_eq!(ends[..2], [(1, 2, 0), (1, 2, S)]);
    assert_eq!(
        ends[2..].iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
        [(1, 0), (2, 0)]
    );
}

#[test]
fn copies_out_of_range_are_named() {
    for (copies, found) in [("0", "found 0"), ("1001", "found 1001")] {
        let text = with(&bulk(0, 1, &format!("copies = {copies}")));
        let (path, line, msg) = error(&text);
        assert_eq!(path, "flows.0.copies");
        assert_eq!(line, line_of(&text, "copies ="));
        assert!(
            msg.contains("expected 1 to 1000 copies") && msg.contains(found),
            "{msg}"
        );
    }
    assert_eq!(
        load(&with(&bulk(0, 1, "copies = 1000")), "<t>").unwrap().flows.len(),
        1000
    );
}

#[test]
fn a_copy_starting_at_or_after_the_stop_is_named() {
    // 1 s + 2 · 3 s = 7 s: after the stop at 6 s.
    let text = with(&format!(
        "{}{}",
        bulk(0, 1, ""),
        cbr(0, 2, "1s", "copies = 3\nstagger = \"3s\"").replace("start = \"1s\"", "start = \"1s\", stop = \"6s\"")
    ));
    let (path, line, msg) = error(&text);
    assert_eq!(path, "flows.1.stagger");
    assert_eq!(line, line_of(&text, "stagger ="));
    assert!(
        msg.contains("copy 2 would start at 7s") && msg.contains("app.stop (6s)"),
        "{msg}"
    );
    // Without a stop, the end of the simulation: 4 · 2.5 s = 10 s is not before it.
    let text = with(&bulk(0, 1, "copies = 5\nstagger = \"2.5s\""));
    let (path, _, msg) = error(&text);
    assert_eq!(path, "flows.0.stagger");
    assert!(
        msg.contains("copy 4 would start at 10s") && msg.contains("simulation.duration (10s)"),
        "{msg}"
    );
    // One copy fewer fits, unless its start jitter may carry it past the end.
    let four = bulk(0, 1, "copies = 4\nstagger = \"2.5s\"");
    assert_eq!(load(&with(&four), "<t>").unwrap().flows.len(), 4);
    let text = with(&four.replace("kind = \"bulk\"", "kind = \"bulk\", start_jitter = \"3s\""));
    let (path, _, msg) = error(&text);
    assert_eq!(path, "flows.0.stagger");
    assert!(msg.contains("copy 3 would start at 7.5s (+ start_jitter 3s)"), "{msg}");
}

#[test]
fn copies_can_be_swept() {
    let text = with(&bulk(0, 1, "")) + "[sweep]\n\"flows.0.copies\" = [1, 2]\n\"flows.0.stagger\" = [\"1s\"]\n";
    load(&text, "<t>").unwrap();
}
