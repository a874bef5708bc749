//! TCP per-segment processing: a sender and a receiver exchange a 10 MB bulk transfer with no
//! network in between (every segment delivered at once, ACKs returned at once). Throughput is
//! data segments handled per second by the two state machines together. `newreno_no_loss`
//! runs the defaults (the receiver answers each burst with one stretch ACK); the
//! congestion-control group runs each controller with SACK and timestamps on, the receiver
//! taking the segments one at a time (an ACK per 2 segments, as on a real path) and BBR with
//! its delivery-rate records and pacing.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_benches::socket_config;
use tpsim_core::{SimDuration, SimTime};
use tpsim_transport::tcp::{CongestionAlgorithm, LossRecovery, Open};
use tpsim_transport::{Message, TcpConfig, TcpSocket};

const BYTES: u64 = 10_000_000;

fn transfer() -> u64 {
    transfer_with(TcpConfig::default(), false)
}

/// The bulk transfer with `tcp`; `one_by_one`: the receiver handles each data segment before
/// the next (its delayed ACKs then go every 2 segments), else a whole burst first.
fn transfer_with(tcp: TcpConfig, one_by_one: bool) -> u64 {
    let mut now = SimTime::ZERO;
    let mut a = TcpSocket::new(socket_config(1, 2), tcp, Open::Active, now);
    let mut b = TcpSocket::new(socket_config(2, 1), tcp, Open::Passive, now);
    let (mut written, mut id, mut segments) = (0u64, 0u64, 0u64);
    let mut acks = Vec::with_capacity(64);
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
            if one_by_one {
                while let Some(ack) = b.poll_transmit(now) {
                    acks.push(ack);
                }
            }
        }
        while b.poll_event().is_some() {}
        while let Some(s) = b.poll_transmit(now) {
            acks.push(s);
        }
        for s in acks.drain(..) {
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
    let mut g = c.benchmark_group("tcp_cc_10MB");
    g.sample_size(10);
    for (name, congestion) in [
        ("newreno_sack", CongestionAlgorithm::Aimd),
        ("cubic", CongestionAlgorithm::Cubic),
        ("bbr", CongestionAlgorithm::Bbr),
        ("bbr3", CongestionAlgorithm::Bbr3),
        ("vegas", CongestionAlgorithm::Vegas),
        ("westwood_plus", CongestionAlgorithm::WestwoodPlus),
    ] {
        let tcp = TcpConfig {
            congestion,
            recovery: LossRecovery::Sack,
            sack: true,
            timestamps: true,
            window_scaling: true,
            recv_buffer_bytes: 1 << 20,
            send_buffer_bytes: 1 << 20,
            ..TcpConfig::default()
        };
        g.throughput(Throughput::Elements(transfer_with(tcp, true)));
        g.bench_function(name, |b| b.iter(|| transfer_with(tcp, true)));
    }
    g.finish();
}

criterion_group!(benches, tcp);
criterion_main!(benches);
