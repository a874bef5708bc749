//! TFRC per-packet processing: a sender and a receiver (RFC 5348 defaults) move 10 MB of
//! messages one data packet long (1500 − 20 − 8 − 16 = 1456 bytes at MTU 1500) with no network
//! in between (every data packet delivered at once, feedback returned at once), like
//! `tcp_segments`. The sender is paced by its rate: after each exchange `now` jumps to the
//! earliest deadline either end reports (the next sending time or a timer), so the loop
//! measures packet processing, not idle steps (it prints its iterations: about 1.2 per data
//! packet). Throughput is data packets handled per second by the two state machines together,
//! feedback included.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{tfrc, Message, SocketConfig, TfrcConfig, TfrcSocket, TransportEvent};
use tpsim_wire::SizeConvention;

const BYTES: u64 = 10_000_000;

/// Runs the transfer; returns the data packets sent and the driver's loop iterations.
fn transfer() -> (u64, u64) {
    let cfg = |l, r| SocketConfig {
        local_port: l,
        remote_port: r,
        sizes: SizeConvention::Standard,
        mtu: 1500,
    };
    let mut now = SimTime::ZERO;
    let mut a = TfrcSocket::new(cfg(1, 2), TfrcConfig::rfc5348(), Open::Active, now);
    let mut b = TfrcSocket::new(cfg(2, 1), TfrcConfig::rfc5348(), Open::Passive, now);
    let len = tfrc::max_message(SizeConvention::Standard, 1500);
    let (mut written, mut received, mut id, mut iterations) = (0u64, 0u64, 0u64, 0u64);
    while received < BYTES {
        iterations += 1;
        while written < BYTES && a.can_send(len) {
            a.send(now, Message { id, len, created: now }).unwrap();
            written += len as u64;
            id += 1;
        }
        while let Some(s) = a.poll_transmit(now) {
            b.on_segment(now, &s);
        }
        while let Some(e) = b.poll_event() {
            if let TransportEvent::Delivered { message, .. } = e {
                received += message.len as u64;
            }
        }
        while let Some(s) = b.poll_transmit(now) {
            a.on_segment(now, &s);
        }
        // Jump to the next sending time or timer (when later than now), fire what is due.
        if let Some(next) = a.poll_timeout().into_iter().chain(b.poll_timeout()).min() {
            now = now.max(next);
        }
        for s in [&mut a, &mut b] {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                s.on_timeout(now);
            }
        }
    }
    (a.stats().tx_segments, iterations)
}

fn tfrc(c: &mut Criterion) {
    let (packets, iterations) = transfer();
    println!("tfrc: {packets} data packets, {iterations} loop iterations");
    let mut g = c.benchmark_group("tfrc_bulk_10MB");
    g.throughput(Throughput::Elements(packets));
    g.sample_size(10);
    g.bench_function("rfc5348_no_loss", |b| b.iter(transfer));
    g.finish();
}

criterion_group!(benches, tfrc);
criterion_main!(benches);
