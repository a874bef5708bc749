//! TFRC per-packet processing: a sender and a receiver (RFC 5348 defaults) move 10 MB of
//! messages one data packet long (1500 − 20 − 8 − 16 = 1456 bytes at MTU 1500) with no network
//! in between (every data packet delivered at once, feedback returned at once), like
//! `tcp_segments`. The sender is paced by its rate: after each exchange `now` jumps to the
//! earliest deadline either end reports (the next sending time or a timer), so the loop
//! measures packet processing, not idle steps (it prints its iterations: about 1.2 per data
//! packet). Throughput is data packets handled per second by the two state machines together,
//! feedback included.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_benches::{socket_config, transfer_paced};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{tfrc, TfrcConfig, TfrcSocket};
use tpsim_wire::SizeConvention;

const BYTES: u64 = 10_000_000;

/// Runs the transfer; returns the data packets sent and the driver's loop iterations.
fn transfer() -> (u64, u64) {
    let mut a = TfrcSocket::new(socket_config(1, 2), TfrcConfig::rfc5348(), Open::Active, SimTime::ZERO);
    let mut b = TfrcSocket::new(socket_config(2, 1), TfrcConfig::rfc5348(), Open::Passive, SimTime::ZERO);
    let len = tfrc::max_message(SizeConvention::Standard, 1500);
    let iterations = transfer_paced(&mut a, &mut b, len, BYTES);
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
