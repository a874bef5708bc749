//! SCTP per-packet processing: two associated endpoints (RFC 9260 defaults) move 10 MB of
//! messages one DATA chunk long (PMDCS − 16 = 1452 bytes at MTU 1500) with no network in between
//! (every packet delivered at once, SACKs returned at once), like `tcp_segments`. Throughput is
//! data packets handled per second by the two state machines together, the handshake included.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_benches::socket_config;
use tpsim_core::{SimDuration, SimTime};
use tpsim_transport::tcp::Open;
use tpsim_transport::{Message, SctpConfig, SctpSocket, TransportEvent};

const BYTES: u64 = 10_000_000;

/// Runs the transfer; returns the DATA packets sent.
fn transfer() -> u64 {
    let mut now = SimTime::ZERO;
    let mut a = SctpSocket::new(socket_config(1, 2), SctpConfig::rfc9260(), Open::Active, now);
    let mut b = SctpSocket::new(socket_config(2, 1), SctpConfig::rfc9260(), Open::Passive, now);
    let len = a.max_fragment();
    let (mut written, mut received, mut id) = (0u64, 0u64, 0u64);
    while received < BYTES {
        while written < BYTES && a.can_send(len) {
            a.send(now, Message { id, len, created: now }).unwrap();
            written += len as u64;
            id += 1;
        }
        let mut moved = false;
        while let Some(s) = a.poll_transmit(now) {
            b.on_segment(now, &s);
            moved = true;
        }
        while let Some(e) = b.poll_event() {
            if let TransportEvent::Delivered { message, .. } = e {
                received += message.len as u64;
            }
        }
        while let Some(s) = b.poll_transmit(now) {
            a.on_segment(now, &s);
            moved = true;
        }
        while a.poll_event().is_some() {}
        // Let delayed-SACK timers fire when nothing else moves.
        now += SimDuration::from_micros(100);
        if !moved {
            for s in [&mut a, &mut b] {
                if s.poll_timeout().is_some_and(|t| t <= now) {
                    s.on_timeout(now);
                }
            }
        }
    }
    a.stats().tx_segments
}

fn sctp(c: &mut Criterion) {
    let packets = transfer();
    let mut g = c.benchmark_group("sctp_bulk_10MB");
    g.throughput(Throughput::Elements(packets));
    g.sample_size(10);
    g.bench_function("rfc9260_no_loss", |b| b.iter(transfer));
    g.finish();
}

criterion_group!(benches, sctp);
criterion_main!(benches);
