//! MANET benchmarks (not criterion: each run is seconds of simulated work; `cargo bench -p
//! tpsim-benches --bench manet`):
//!
//! 1. Study E's 50-node MANET (`benches/scenarios/s1_manet_tcp.toml`: 1500 m × 1500 m, 250 m,
//!    random waypoint 1–2 m/s, AODV, 802.11b 1 Mbit/s, TCP NewReno bulk from 10 s, 900 s):
//!    wall time of the event loop over 5 seeds (median, min, max), events/s, peak memory.
//! 2. The classic mobility benchmark (`benches/scenarios/broch-aodv.toml`, Broch et al. 1998):
//!    AODV's packet delivery ratio and normalized routing load against pause time, 10 and 20
//!    sources, 3 replications each.
//!
//! `MANET_PART=1` or `MANET_PART=2` runs one part.

use std::time::Instant;
use tpsim_engine::{RunOptions, World};

fn load(path: &str, overrides: &[(&str, serde_json::Value)]) -> tpsim_scenario::Scenario {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let file = format!("{root}{path}");
    let text = std::fs::read_to_string(&file).expect("scenario file");
    let ov: Vec<(String, serde_json::Value)> = overrides.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let text = tpsim_scenario::apply_overrides(&text, &file, &ov, true).expect("overrides apply");
    tpsim_scenario::load(&text, &file).unwrap_or_else(|e| panic!("{e}"))
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()))
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn study_e() {
    let sc = load("scenarios/s1_manet_tcp.toml", &[]);
    println!("Study E MANET (benches/scenarios/s1_manet_tcp.toml), 900 s simulated");
    println!("| seed | build s | run s | events | events/s | MAC frames | goodput kbit/s |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut walls = Vec::new();
    for seed in 1..=5u64 {
        let opts = RunOptions {
            seed,
            run: 0,
            pcap_dir: None,
        };
        let t0 = Instant::now();
        let mut w = World::build(&sc, &opts).expect("builds");
        let build = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        w.run();
        let wall = t1.elapsed().as_secs_f64();
        let events = w.events();
        let r = w.results(wall).expect("results");
        walls.push(build + wall);
        println!(
            "| {seed} | {build:.3} | {wall:.3} | {events} | {:.2e} | {} | {:.1} |",
            events as f64 / wall,
            r.network.mac_frames,
            r.flows[0].goodput_kbps.unwrap_or(0.0)
        );
    }
    walls.sort_by(f64::total_cmp);
    println!(
        "\nwall time (build + run): median {:.3} s, min {:.3} s, max {:.3} s; peak RSS of this process {:.1} MB\n",
        walls[2],
        walls[0],
        walls[4],
        peak_rss_mb()
    );
}

fn broch() {
    // `BROCH_RATE=1Mbps` runs every frame at that rate instead of the file's 2 Mbit/s.
    let rate = std::env::var("BROCH_RATE").ok();
    println!(
        "Classic mobility benchmark (benches/scenarios/broch-aodv.toml), AODV, 3 replications, rate {}",
        rate.as_deref().unwrap_or("of the file")
    );
    println!("| sources | pause s | PDR (mean) | PDR (min) | normalized routing load | routing packets | mean delay s | wall s |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for sources in [10u32, 20] {
        for pause in [0u32, 30, 60, 120, 300, 600, 900] {
            let mut sets = vec![
                ("background.flows", serde_json::json!(sources)),
                ("nodes.mobility.pause", serde_json::json!(format!("{pause}s"))),
            ];
            if let Some(r) = &rate {
                sets.push(("radio.data_rate", serde_json::json!(r)));
                sets.push(("radio.basic_rate", serde_json::json!(r)));
            }
            let sc = load("scenarios/broch-aodv.toml", &sets);
            let (mut pdrs, mut nrl, mut rp, mut delay, mut wall) = (Vec::new(), Vec::new(), 0u64, Vec::new(), 0.0);
            for run in 0..3u64 {
                let opts = RunOptions {
                    seed: 1,
                    run,
                    pcap_dir: None,
                };
                let mut w = World::build(&sc, &opts).expect("builds");
                let t = Instant::now();
                w.run();
                wall += t.elapsed().as_secs_f64();
                let r = w.results(0.0).expect("results");
                let (tx, rx) = r
                    .flows
                    .iter()
                    .fold((0u64, 0u64), |(a, b), f| (a + f.tx_packets, b + f.rx_packets));
                pdrs.push(rx as f64 / tx.max(1) as f64);
                nrl.push(r.network.normalized_routing_load.unwrap_or(f64::NAN));
                rp += r.network.routing_packets;
                let d: Vec<f64> = r.flows.iter().filter_map(|f| f.delay_mean_s).collect();
                delay.push(d.iter().sum::<f64>() / d.len().max(1) as f64);
            }
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            println!(
                "| {sources} | {pause} | {:.3} | {:.3} | {:.2} | {} | {:.3} | {:.2} |",
                mean(&pdrs),
                pdrs.iter().copied().fold(1.0, f64::min),
                mean(&nrl),
                rp / 3,
                mean(&delay),
                wall
            );
        }
    }
}

fn main() {
    match std::env::var("MANET_PART").as_deref() {
        Ok("1") => study_e(),
        Ok("2") => broch(),
        _ => {
            study_e();
            broch();
        }
    }
}
