//! Per-packet cost of each queue discipline: one enqueue and one dequeue per packet on a
//! 10 Mbit/s link of 1,500-byte packets offered 10 % more than it carries, so that every
//! discipline holds a standing queue and drops (DropTail at its limit, the AQMs by their
//! rules). Four flows hashed apart for FQ-CoDel. Reported per packet offered.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tpsim_aqm::{Codel, CodelConfig, DropTail, FqCodel, FqCodelConfig, Pie, PieConfig, Pkt, Qdisc, Red, RedConfig};
use tpsim_core::{RngStream, SimTime};

/// Service time of a 1,500-byte packet at 10 Mbit/s, ns.
const SERVICE_NS: u64 = 1_200_000;
/// Inter-arrival time for an offered load of 1.1, ns.
const ARRIVAL_NS: u64 = SERVICE_NS * 10 / 11;

fn disciplines() -> Vec<(&'static str, Qdisc)> {
    let rng = || RngStream::from_seed(7);
    vec![
        ("droptail", Qdisc::DropTail(DropTail::new(100))),
        (
            "red",
            Qdisc::Red(Red::new(
                RedConfig {
                    link_rate_bps: 10e6,
                    limit: 100,
                    ..RedConfig::default()
                },
                rng(),
            )),
        ),
        ("codel", Qdisc::Codel(Codel::new(CodelConfig::default()))),
        ("fq-codel", Qdisc::FqCodel(FqCodel::new(FqCodelConfig::default()))),
        (
            "pie",
            Qdisc::Pie(Pie::new(
                PieConfig {
                    limit: 100,
                    ..PieConfig::default()
                },
                rng(),
            )),
        ),
    ]
}

fn per_packet(c: &mut Criterion) {
    let mut g = c.benchmark_group("aqm_packet");
    let packets = 100_000u64;
    g.throughput(Throughput::Elements(packets));
    for (name, q) in disciplines() {
        g.bench_with_input(BenchmarkId::from_parameter(name), &q, |b, q| {
            let mut out = Vec::with_capacity(64);
            b.iter(|| {
                let mut q = q.clone();
                let (mut next_tx, mut sent) = (0u64, 0u64);
                for i in 0..packets {
                    let now = i * ARRIVAL_NS;
                    // The transmitter takes a packet at each service boundary before `now`.
                    while next_tx <= now {
                        if let Some(p) = q.dequeue(SimTime(next_tx), &mut out) {
                            sent += u64::from(p.bytes);
                        }
                        next_tx += SERVICE_NS;
                    }
                    let p = Pkt {
                        id: i as u32,
                        bytes: 1500,
                        flow: (i % 4) as u32 * 0x9E37_79B9,
                        ect: false,
                        ce: false,
                    };
                    q.enqueue(p, SimTime(now), &mut out);
                    out.clear();
                }
                black_box(sent)
            });
        });
    }
    g.finish();
}

criterion_group!(benches, per_packet);
criterion_main!(benches);
