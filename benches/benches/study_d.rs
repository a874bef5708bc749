//! Study D over UDP for 1000 simulated seconds (the ns-3 side, s5_wired_voip --simTime=1000,
//! runs 1.71 s in Simulator::Run on these machines). Target (issue 2): ≤ 0.02 s of engine time.
//! Measures the event loop only (build and result collection excluded), as ns-3's
//! Simulator::Run figure does.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_engine::{RunOptions, World};

const SCENARIO: &str = include_str!("../../scenarios/study-d-wired-voip.toml");

fn study_d(c: &mut Criterion) {
    let text = SCENARIO
        .replace("duration = \"10s\"", "duration = \"1000s\"")
        .replace("stop = \"10s\"", "stop = \"1000s\"");
    let mut g = c.benchmark_group("study_d_udp_1000s");
    g.sample_size(20);
    for timeseries in [false, true] {
        let t = text.replace("timeseries = true", &format!("timeseries = {timeseries}"));
        let sc = tpsim_scenario::load(&t, "study-d").expect("valid scenario");
        let mut probe = World::build(
            &sc,
            &RunOptions {
                seed: 1,
                run: 0,
                pcap_dir: None,
            },
        )
        .unwrap();
        probe.run();
        g.throughput(Throughput::Elements(probe.events()));
        g.bench_function(if timeseries { "with_timeseries" } else { "no_timeseries" }, |b| {
            b.iter_batched(
                || {
                    World::build(
                        &sc,
                        &RunOptions {
                            seed: 1,
                            run: 0,
                            pcap_dir: None,
                        },
                    )
                    .unwrap()
                },
                |mut w| {
                    w.run();
                    w
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, study_d);
criterion_main!(benches);
