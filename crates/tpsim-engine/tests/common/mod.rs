//! Helpers shared by the engine's scenario-level tests: running a scenario, reading the
//! columns of a result table, and scenario text that several test files use.

// Each test file compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use tpsim_engine::{run, Column, FlowRow, RunOptions, RunResult, Table};
use tpsim_scenario::load;

/// Validates `text` (panicking with the scenario error) and runs replication 0 with `seed`.
pub fn sim(text: &str, seed: u64) -> RunResult {
    let sc = load(text, "<test>").unwrap_or_else(|e| panic!("{e}"));
    run(
        &sc,
        &RunOptions {
            seed,
            run: 0,
            pcap_dir: None,
        },
    )
    .unwrap()
}

// Columns of a result table, by name; a column that is missing or of another type panics
// with its name.

/// A text column (labels).
pub fn text<'a>(t: &'a Table, n: &str) -> &'a [&'static str] {
    match t.get(n) {
        Some(Column::Text(v)) => v,
        c => panic!("{n}: {c:?}"),
    }
}

/// An optional text column.
pub fn opt_text<'a>(t: &'a Table, n: &str) -> &'a [Option<&'static str>] {
    match t.get(n) {
        Some(Column::OptText(v)) => v,
        c => panic!("{n}: {c:?}"),
    }
}

/// An unsigned integer column (counts, node indices).
pub fn u64s<'a>(t: &'a Table, n: &str) -> &'a [u64] {
    match t.get(n) {
        Some(Column::U64(v)) => v,
        c => panic!("{n}: {c:?}"),
    }
}

/// An optional index column (flow, packet, peer).
pub fn opt_u32<'a>(t: &'a Table, n: &str) -> &'a [Option<u32>] {
    match t.get(n) {
        Some(Column::OptU32(v)) => v,
        c => panic!("{n}: {c:?}"),
    }
}

/// A measurement column (`None` where undefined).
pub fn f64s<'a>(t: &'a Table, n: &str) -> &'a [Option<f64>] {
    match t.get(n) {
        Some(Column::F64(v)) => v,
        c => panic!("{n}: {c:?}"),
    }
}

/// A flag column.
pub fn bools<'a>(t: &'a Table, n: &str) -> &'a [bool] {
    match t.get(n) {
        Some(Column::Bool(v)) => v,
        c => panic!("{n}: {c:?}"),
    }
}

/// The packet trace of `r` (the scenario must ask for it: `[output] trace = true`).
pub fn trace(r: &RunResult) -> &Table {
    r.trace.as_ref().expect("trace asked for")
}

/// Times (s) at which `node` forwarded a data packet, of flow `flow` if given, from the
/// packet trace.
pub fn data_forwards(r: &RunResult, node: u64, flow: Option<u32>) -> Vec<f64> {
    let t = trace(r);
    let (event, kind, nodes, time) = (text(t, "event"), text(t, "kind"), u64s(t, "node"), f64s(t, "time_s"));
    let flows = flow.map(|_| opt_u32(t, "flow"));
    (0..event.len())
        .filter(|&i| event[i] == "forward" && kind[i] == "data" && nodes[i] == node)
        .filter(|&i| flows.map_or(true, |flows| flows[i] == flow))
        .map(|i| time[i].unwrap())
        .collect()
}

/// A transport's own metric `name` of a flow row (the flows table's extra columns).
pub fn extra(f: &FlowRow, name: &str) -> Option<f64> {
    f.extra.iter().find(|(n, _)| *n == name).and_then(|e| e.1)
}

/// Two nodes on one link of `rate` and `delay` (plus `extra` keys of the link) carrying
/// `flows`, for `duration` and a 5 s drain.
pub fn link(rate: &str, delay: &str, extra: &str, flows: &str, duration: &str) -> String {
    format!(
        "[simulation]\nduration = \"{duration}\"\ndrain = \"5s\"\n[nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"{rate}\"\ndelay = \"{delay}\"\n{extra}\n{flows}"
    )
}

/// A `[[flows]]` table: UDP CBR from `src` to `dst`, messages of `size` every `interval` from
/// `start`.
pub fn cbr(src: u32, dst: u32, size: &str, interval: &str, start: &str) -> String {
    format!("[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"{size}\", interval = \"{interval}\", start = \"{start}\" }}\n")
}

/// A chain 0 - 1 - 2 - 3 of 10 Mbit/s, 2 ms links whose middle link is slow (600 kbit/s,
/// 10 ms), lossy (3 %) and has a 3-packet queue: a TCP bulk transfer and a UDP CBR flow that
/// overloads the bottleneck from 0 to 3, a two-way UDP voip flow from 3, then `flows`.
/// `simulation` and `output`: the keys of those tables (the drain is 200 ms).
pub fn lossy_chain(simulation: &str, output: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
{simulation}
drain = "200ms"
[output]
{output}
[nodes]
count = 4
[[links]]
nodes = [0, 1]
rate = "10Mbps"
delay = "2ms"
[[links]]
nodes = [1, 2]
rate = "600kbps"
delay = "10ms"
queue = 3
loss = 0.03
[[links]]
nodes = [2, 3]
rate = "10Mbps"
delay = "2ms"
[[flows]]
src = 0
dst = 3
transport = "tcp"
app = {{ kind = "bulk", size = "1000B" }}
[[flows]]
src = 0
dst = 3
transport = "udp"
app = {{ kind = "cbr", size = "400B", interval = "8ms" }}
[[flows]]
src = 3
dst = 0
transport = "udp"
app = {{ kind = "voip", size = "160B", interval = "20ms" }}
{flows}"#
    )
}

/// Study D's link: two nodes on one 256 kbit/s, 50 ms link with a 50-packet queue (`link`:
/// more keys of the link) for 10 s with ns-2's packet sizes, and two one-way CBR flows (0 → 1
/// and 1 → 0) of `transport` with the flow keys `flow_keys`: 128-byte messages every `interval`
/// from 0.1 s to 10 s. `simulation`: the other keys of `[simulation]` (the drain, ...),
/// possibly followed by an `[output]` table.
pub fn study_d(simulation: &str, link: &str, transport: &str, flow_keys: &str, interval: &str) -> String {
    let flow = |s, d| {
        format!(
            "[[flows]]\nsrc = {s}\ndst = {d}\ntransport = \"{transport}\"\n{flow_keys}\n\
             app = {{ kind = \"cbr\", size = \"128B\", interval = \"{interval}\", start = \"0.1s\", stop = \"10s\" }}\n"
        )
    };
    format!(
        "[simulation]\nduration = \"10s\"\nsizes = \"ns2\"\n{simulation}\
         [nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"256kbps\"\ndelay = \"50ms\"\nqueue = 50\n{link}{}{}",
        flow(0, 1),
        flow(1, 0)
    )
}
