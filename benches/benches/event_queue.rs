//! Event queue throughput: push+pop pairs per second at a steady number of pending events
//! (10³ and 10⁴), the hold model of discrete-event simulation. Target (issue 2): ≥ 10 M/s.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tpsim_core::{EventQueue, SimTime};

#[derive(Clone, Copy)]
#[allow(dead_code)]
enum Ev {
    A { x: u32 },
    B { x: u32, y: u32 },
}

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    for pending in [1_000u64, 10_000] {
        let ops = 100_000u64;
        g.throughput(Throughput::Elements(ops));
        g.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, &pending| {
            // Increments drawn from a fixed LCG so every iteration does the same work.
            let mut q = EventQueue::with_capacity(pending as usize * 2);
            let mut lcg = 12345u64;
            let mut step = || {
                lcg = lcg.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (lcg >> 33) % 1_000_000
            };
            for i in 0..pending {
                q.push(SimTime(step()), Ev::A { x: i as u32 });
            }
            b.iter(|| {
                for _ in 0..ops {
                    let (t, e) = q.pop().unwrap();
                    let x = match e {
                        Ev::A { x } => x,
                        Ev::B { x, y } => x ^ y,
                    };
                    q.push(SimTime(t.0 + step()), Ev::B { x, y: black_box(1) });
                }
            });
        });
    }
    g.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
