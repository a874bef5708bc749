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
use tpsim_benches::{socket_config, transfer_paced};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{Ccid, DccpConfig, DccpProfile, DccpSocket};
use tpsim_wire::SizeConvention;

const BYTES: u64 = 10_000_000;

/// Runs the transfer with `ccid`; returns the data packets sent and the driver's loop
/// iterations.
fn transfer(ccid: Ccid) -> (u64, u64) {
    let dc = DccpConfig::for_profile(DccpProfile::Rfc, ccid);
    let mut a = DccpSocket::new(socket_config(1, 2), dc, Open::Active, SimTime::ZERO);
    let mut b = DccpSocket::new(socket_config(2, 1), dc, Open::Passive, SimTime::ZERO);
    let len = DccpSocket::max_message(SizeConvention::Standard, 1500);
    let iterations = transfer_paced(&mut a, &mut b, len, BYTES);
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
