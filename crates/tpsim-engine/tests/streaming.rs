//! Streamed outputs (`tpsim_engine::stream`): the packet trace, its ns-2 text and the
//! per-ACK samples handed out in batches while the run goes give the same rows, in the same
//! order, as the same run kept in memory, whatever the batch size; the run's tables do not
//! change; the engine holds one batch at a time; a failing stream is reported, not ignored.

mod common;

use common::sim;
use std::io::{self, Write};
use tpsim_engine::stream::{MemorySink, Shared};
use tpsim_engine::{RunOptions, RunResult, Streams, Table, TableSink, World};

/// A four-node chain over AODV with ARP, a TCP bulk flow (ACKs, per-ACK samples) and a UDP
/// CBR flow whose relay dies half-way (drops, route errors): every kind of ns-2 line.
fn radio(output: &str) -> String {
    format!(
        r#"
[simulation]
duration = "6s"
drain = "500ms"
[output]
{output}
[nodes]
count = 4
placement = {{ kind = "explicit", positions = [["0m", "0m"], ["200m", "0m"], ["400m", "0m"], ["200m", "150m"]] }}
[radio]
rts_threshold = "0B"
queue = 10
[arp]
[routing]
protocol = "aodv"
[[flows]]
src = 0
dst = 2
transport = "tcp"
app = {{ kind = "bulk", size = "1000B", bytes = "300kB" }}
[[flows]]
src = 3
dst = 2
transport = "udp"
app = {{ kind = "cbr", size = "512B", interval = "40ms" }}
[[events]]
at = "3s"
kind = "node_down"
node = 1
"#
    )
}

/// A two-node link with a shallow queue: the wired format's enqueue, dequeue, arrive and drop.
fn wired(output: &str) -> String {
    format!(
        r#"
[simulation]
duration = "3s"
[output]
{output}
[nodes]
count = 2
[[links]]
nodes = [0, 1]
rate = "300kbps"
delay = "10ms"
queue = 4
[[flows]]
src = 0
dst = 1
transport = "tcp"
app = {{ kind = "bulk", size = "1000B" }}
[[flows]]
src = 1
dst = 0
transport = "udp"
app = {{ kind = "cbr", size = "300B", interval = "10ms" }}
"#
    )
}

/// What a streamed run gave: its result, the trace and per-ACK tables and the ns-2 text.
struct Streamed {
    result: RunResult,
    trace: MemorySink,
    acks: MemorySink,
    text: Vec<u8>,
}

fn run_streamed(text: &str, batch_rows: usize) -> Streamed {
    let sc = tpsim_scenario::load(text, "streaming.toml").unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions {
        seed: 3,
        ..RunOptions::default()
    };
    let (trace, acks, ns2) = (
        Shared::<MemorySink>::default(),
        Shared::<MemorySink>::default(),
        Shared::<Vec<u8>>::default(),
    );
    let mut w = World::build(&sc, &opts).unwrap();
    w.stream(Streams {
        trace: Some(Box::new(trace.clone())),
        ns2: Some(Box::new(ns2.clone())),
        acks: Some(Box::new(acks.clone())),
        batch_rows,
    });
    w.run();
    let result = w.results(0.0).unwrap();
    let (trace, acks, text) = (trace.lock().clone(), acks.lock().clone(), ns2.lock().clone());
    Streamed {
        result,
        trace,
        acks,
        text,
    }
}

fn run_in_memory(text: &str) -> RunResult {
    sim(text, 3)
}

#[test]
fn streamed_rows_equal_the_rows_kept_in_memory_whatever_the_batch() {
    let text = radio(
        r#"ns2_trace = "old"
ack_samples = true"#,
    );
    let kept = run_in_memory(&text);
    let whole = run_streamed(&text, 1 << 20);
    let small = run_streamed(&text, 7);
    let trace = kept.trace.as_ref().expect("kept in memory");
    let acks = kept.acks.as_ref().expect("kept in memory");
    assert!(
        trace.rows() > 1000 && acks.rows() > 50,
        "{} {}",
        trace.rows(),
        acks.rows()
    );
    for s in [&whole, &small] {
        assert!(
            s.result.trace.is_none() && s.result.acks.is_none(),
            "streamed, not returned"
        );
        assert_eq!(&s.trace.table, trace);
        assert_eq!(&s.acks.table, acks);
        assert!(s.trace.finished && s.acks.finished);
        assert_eq!(s.result.flows_table(), kept.flows_table());
        assert_eq!(s.result.network_table(), kept.network_table());
        assert_eq!(s.result.series_table(), kept.series_table());
    }
    assert_eq!(whole.trace.batches, 1);
    assert_eq!(small.trace.batches, trace.rows().div_ceil(7));
    assert_eq!(whole.text, small.text, "the ns-2 text does not depend on the batches");
    // Every MAC send, agent send/receive and drop row is one line; ARP link rows are not.
    let events = common::text(trace, "event");
    let layers = common::text(trace, "layer");
    let shown = (0..events.len())
        .filter(|&i| {
            matches!(
                (events[i], layers[i]),
                ("drop", _) | ("mac_send" | "mac_receive", "mac")
            ) || (["send", "receive"].contains(&events[i]) && ["transport", "ip"].contains(&layers[i]))
                || (events[i] == "forward" && layers[i] == "ip")
        })
        .count();
    let lines = String::from_utf8(whole.text.clone()).unwrap();
    assert_eq!(lines.lines().count(), shown);
    for needle in [
        " AGT ",
        " RTR ",
        " MAC ",
        "] ------- [",
        " tcp ",
        " ack ",
        " cbr ",
        " AODV ",
        " ARP ",
        " RTS ",
        "D ",
    ] {
        assert!(lines.contains(needle), "a line with {needle:?}");
    }
}

#[test]
fn the_new_and_wired_formats_stream_too() {
    let new = run_streamed(&radio(r#"ns2_trace = "new""#), 13);
    let text = String::from_utf8(new.text).unwrap();
    assert!(
        text.lines().all(|l| l.contains(" -t ") && l.contains(" -Nl ")),
        "new format"
    );
    assert_eq!(text.lines().next().map(|l| l.split(' ').next()), Some(Some("s")));
    let wired = run_streamed(&wired(r#"ns2_trace = "wired""#), 5);
    let text = String::from_utf8(wired.text).unwrap();
    let first: std::collections::HashSet<&str> = text.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(
        first,
        ["+", "-", "r", "d"].into_iter().collect(),
        "every wired event, the queue drops"
    );
}

/// A sink that fails at its second batch.
struct Failing(usize);

impl TableSink for Failing {
    fn write_batch(&mut self, _: &Table) -> io::Result<()> {
        self.0 += 1;
        if self.0 == 2 {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "no space left"));
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer that fails once it has taken `0` bytes.
struct FullDisk(usize);

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() > self.0 {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
        }
        self.0 -= buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_stream_is_reported_at_the_end_of_the_run() {
    let sc = tpsim_scenario::load(&radio(r#"ns2_trace = "old""#), "s.toml").unwrap();
    let mut w = World::build(&sc, &RunOptions::default()).unwrap();
    w.stream(Streams {
        trace: Some(Box::new(Failing(0))),
        batch_rows: 50,
        ..Streams::default()
    });
    w.run();
    let err = w.results(0.0).expect_err("the sink's error");
    assert!(err.to_string().contains("no space left"), "{err}");

    let mut w = World::build(&sc, &RunOptions::default()).unwrap();
    w.stream(Streams {
        ns2: Some(Box::new(FullDisk(10_000))),
        batch_rows: 50,
        ..Streams::default()
    });
    w.run();
    let err = w.results(0.0).expect_err("the writer's error");
    assert!(err.to_string().contains("disk full"), "{err}");
}
