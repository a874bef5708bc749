//! TCP per-segment processing: a sender and a receiver exchange a 10 MB bulk transfer with no
//! network in between (every segment delivered at once, ACKs returned at once). Throughput is
//! data segments handled per second by the two state machines together.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_benches::socket_config;
use tpsim_core::{SimDuration, SimTime};
use tpsim_transport::tcp::Open;
use tpsim_transport::{Message, TcpConfig, TcpSocket};

const BYTES: u64 = 10_000_000;

fn transfer() -> u64 {
    let mut now = SimTime::ZERO;
    let mut a = TcpSocket::new(socket_config(1, 2), TcpConfig::default(), Open::Active, now);
    let mut b = TcpSocket::new(socket_config(2, 1), TcpConfig::default(), Open::Passive, now);
    let (mut written, mut id, mut segments) = (0u64, 0u64, 0u64);
    while b.bytes_received() < BYTES {
        while written < BYTES && a.can_send(1460) {
            a.send(
                now,
                Message {
                    id,
                    len: 1460,
                    created: now,
                },
            )
            .unwrap();
            written += 1460;
            id += 1;
        }
        let mut moved = false;
        while let Some(s) = a.poll_transmit(now) {
            b.on_segment(now, &s);
            segments += 1;
            moved = true;
        }
        while b.poll_event().is_some() {}
        while let Some(s) = b.poll_transmit(now) {
            a.on_segment(now, &s);
            moved = true;
        }
        while a.poll_event().is_some() {}
        // Let delayed-ACK timers fire when nothing else moves.
        now += SimDuration::from_micros(100);
        if !moved {
            for s in [&mut a, &mut b] {
                if s.poll_timeout().is_some_and(|t| t <= now) {
                    s.on_timeout(now);
                }
            }
        }
    }
    segments
}

fn tcp(c: &mut Criterion) {
    let segments = transfer();
    let mut g = c.benchmark_group("tcp_bulk_10MB");
    g.throughput(Throughput::Elements(segments));
    g.sample_size(10);
    g.bench_function("newreno_no_loss", |b| b.iter(transfer));
    g.finish();
}

criterion_group!(benches, tcp);
criterion_main!(benches);
