//! The wireless stack's hot path: n saturated 802.11b stations around one receiver (channel
//! fan-out to every station, receiver state, DCF) for 20 simulated seconds. Throughput is
//! events per second; the report also gives wall time per MAC frame.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tpsim_engine::{RunOptions, World};

fn scenario(n: u32) -> String {
    let mut pos = vec!["[\"0m\", \"0m\"]".to_string()];
    let mut flows = String::new();
    for i in 0..n {
        let a = i as f64 * std::f64::consts::TAU / n as f64;
        pos.push(format!(
            "[\"{:.3}m\", \"{:.3}m\"]",
            5.0 * libm::cos(a),
            5.0 * libm::sin(a)
        ));
        flows += &format!(
            "[[flows]]\nsrc = {}\ndst = 0\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"1464B\", interval = \"8ms\" }}\n",
            i + 1
        );
    }
    format!(
        "[simulation]\nduration = \"20s\"\n[output]\ntimeseries = false\n[nodes]\ncount = {}\nplacement = {{ kind = \"explicit\", positions = [{}] }}\n[radio]\n{flows}",
        n + 1,
        pos.join(", ")
    )
}

fn wifi(c: &mut Criterion) {
    let mut g = c.benchmark_group("wifi_saturation_20s");
    g.sample_size(10);
    for n in [2u32, 10, 50] {
        let sc = tpsim_scenario::load(&scenario(n), "bench").expect("valid");
        let opts = RunOptions {
            seed: 1,
            run: 0,
            pcap_dir: None,
        };
        let mut probe = World::build(&sc, &opts).unwrap();
        probe.run();
        g.throughput(Throughput::Elements(probe.events()));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_batched(
                || World::build(&sc, &opts).unwrap(),
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

criterion_group!(benches, wifi);
criterion_main!(benches);
