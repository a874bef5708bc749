//! Scale of the whole pipeline: a static grid of `SCALE_N` nodes (10,000 by default) 200 m
//! apart, ns-2's radio (250 m decode, 550 m carrier sense), AODV with ns-2's constants, and
//! N/5 CBR flows (512 B at 4 packets/s, random distinct pairs drawn from a fixed seed,
//! starting in the first second), run for `SCALE_S` simulated seconds (5 by default).
//! Prints the wall time of each phase (parse and validate, build, event loop, results) and
//! the process's peak resident memory. Target: at most 120 s and 4 GB for N = 10,000 and 5 s
//! on the 2-core machine. Not a criterion benchmark: one run, as a user would run it.
//! `cargo bench -p tpsim-benches --bench scale_10k`; `SCALE_N=2500 SCALE_S=10` for others.

use std::time::Instant;
use tpsim_engine::{RunOptions, World};

fn env<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The scenario text: `n` nodes, `n / 5` flows, `secs` simulated seconds.
fn scenario(n: u32, secs: u32) -> String {
    let mut t = format!(
        "[simulation]\nduration = \"{secs}s\"\nsizes = \"ns2\"\n[output]\ntimeseries = false\n\
         [nodes]\ncount = {n}\nplacement = {{ kind = \"grid\", spacing = \"200m\" }}\n\
         [radio]\n[routing]\nprotocol = \"aodv\"\npreset = \"ns2\"\n"
    );
    // SplitMix64 from a fixed seed: the same pairs on every machine.
    let mut x: u64 = 0x5eed;
    let mut next = || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for _ in 0..n / 5 {
        let src = (next() % n as u64) as u32;
        let dst = loop {
            let d = (next() % n as u64) as u32;
            if d != src {
                break d;
            }
        };
        let start_ms = next() % 1000;
        t += &format!(
            "[[flows]]\nsrc = {src}\ndst = {dst}\ntransport = \"udp\"\n\
             app = {{ kind = \"cbr\", size = \"512B\", interval = \"250ms\", start = \"{start_ms}ms\" }}\n"
        );
    }
    t
}

/// The process's peak resident set, MB (Linux `VmHWM`), if known.
fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let n: u32 = env("SCALE_N", 10_000);
    let secs: u32 = env("SCALE_S", 5);
    let text = scenario(n, secs);
    let t0 = Instant::now();
    let sc = tpsim_scenario::load(&text, "scale_10k").unwrap_or_else(|e| panic!("{e}"));
    let t_load = t0.elapsed().as_secs_f64();
    let opts = RunOptions {
        seed: 1,
        run: 0,
        pcap_dir: None,
    };
    let t1 = Instant::now();
    let mut w = World::build(&sc, &opts).expect("build");
    let t_build = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    w.run();
    let t_run = t2.elapsed().as_secs_f64();
    let t3 = Instant::now();
    let r = w.results(t_run).expect("results");
    let t_results = t3.elapsed().as_secs_f64();
    let total = t0.elapsed().as_secs_f64();
    let delivered: u64 = r.flows.iter().map(|f| f.rx_packets).sum();
    let sent: u64 = r.flows.iter().map(|f| f.tx_packets).sum();
    println!("| N | flows | simulated s | parse + validate s | build s | event loop s | results s | total s | peak RSS MB | events | MAC frames | PDR |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    println!(
        "| {n} | {} | {secs} | {t_load:.2} | {t_build:.2} | {t_run:.2} | {t_results:.2} | {total:.2} | {} | {} | {} | {:.3} |",
        n / 5,
        peak_rss_mb().map(|m| format!("{m:.0}")).unwrap_or_else(|| "?".into()),
        r.network.events,
        r.network.mac_frames,
        delivered as f64 / sent.max(1) as f64,
    );
}
