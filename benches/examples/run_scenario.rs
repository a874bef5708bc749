//! Runs one scenario file (first sweep point, replication 0) in this process and prints the
//! event-loop time, events and MAC frames: a target for `perf` when profiling a scenario
//! (`cargo build --release -p tpsim-benches --example run_scenario`, then
//! `perf record -g target/release/examples/run_scenario FILE [SEED]`). With
//! `RUN_SCENARIO_DIGEST=1` it also prints the SHA-256 of the run's canonical result tables
//! (flows, network, time series; the wall time excluded), to check that an engine change leaves
//! results bit-identical. With `RUN_SCENARIO_VERBOSE=1` it prints the network row (routing
//! packets by type, drops by reason, MAC counters).

use std::time::Instant;
use tpsim_engine::{RunOptions, World};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run_scenario FILE [SEED]");
        std::process::exit(2);
    };
    let seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let sc = tpsim_scenario::load(&text, &path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let opts = RunOptions {
        seed,
        run: 0,
        pcap_dir: None,
    };
    let mut w = World::build(&sc, &opts).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t0 = Instant::now();
    w.run();
    let dt = t0.elapsed().as_secs_f64();
    let events = w.events();
    // The results without the wall time, so that two runs of one scenario compare equal.
    let r = w.results(0.0).expect("results");
    println!(
        "event loop {dt:.6} s, {events} events, {} MAC frames, {} routing packets",
        r.network.mac_frames, r.network.routing_packets
    );
    if std::env::var_os("RUN_SCENARIO_VERBOSE").is_some() {
        println!("network {:?}", r.network);
    }
    if std::env::var_os("RUN_SCENARIO_DIGEST").is_some() {
        // The canonical tables, as the regression fingerprint hashes them.
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for t in [r.flows_table(), r.network_table(), r.series_table()] {
            h.update(t.canonical_csv().as_bytes());
            h.update(b"--\n");
        }
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        println!("results digest {hex}");
    }
}
