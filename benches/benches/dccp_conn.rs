//! DCCP per-packet processing: a client and a server (RFC 4340 defaults) with CCID 2 (RFC
//! 4341) or CCID 3 (RFC 4342) move 10 MB of messages one Data packet long (1500 − 20 − 24 −
//! `MAX_DATA_OPTIONS_LEN` = 1428 bytes at MTU 1500) from client to server with no network in
//! between (every packet delivered at once, acknowledgements and feedback returned at once),
//! like `tcp_segments`. After each exchange `now` jumps to the earliest deadline either end
//! reports (CCID 3's next sending time, a timer), so the loop measures packet processing, not
//! idle steps (it prints its iterations; at zero RTT CCID 3's rate is unbounded and both CCIDs
//! send hundreds of packets per iteration). Throughput is data packets handled per second by
//! the two state machines together, the handshake included.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{Ccid, DccpConfig, DccpProfile, DccpSocket, Message, SocketConfig, TransportEvent};
use tpsim_wire::SizeConvention;

const BYTES: u64 = 10_000_000;

/// Runs the transfer with `ccid`; returns the data packets sent and the driver's loop
/// iterations.
fn transfer(ccid: Ccid) -> (u64, u64) {
    let cfg = |l, r| SocketConfig {
        local_port: l,
        remote_port: r,
        sizes: SizeConvention::Standard,
        mtu: 1500,
    };
    let dc = DccpConfig::for_profile(DccpProfile::Rfc, ccid);
    let mut now = SimTime::ZERO;
    let mut a = DccpSocket::new(cfg(1, 2), dc, Open::Active, now);
    let mut b = DccpSocket::new(cfg(2, 1), dc, Open::Passive, now);
    let len = DccpSocket::max_message(SizeConvention::Standard, 1500);
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
        while a.poll_event().is_some() {}
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
    (a.dccp_stats().data_sent, iterations)
}

fn dccp(c: &mut Criterion) {
    let mut g = c.benchmark_group("dccp_bulk_10MB");
    g.sample_size(10);
    for (ccid, name) in [(Ccid::Ccid2, "ccid2_no_loss"), (Ccid::Ccid3, "ccid3_no_loss")] {
        let (packets, iterations) = transfer(ccid);
        println!("{name}: {packets} data packets, {iterations} loop iterations");
        g.throughput(Throughput::Elements(packets));
        g.bench_function(name, |b| b.iter(|| transfer(ccid)));
    }
    g.finish();
}

criterion_group!(benches, dccp);
criterion_main!(benches);
