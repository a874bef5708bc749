//! Benchmarks crate (see benches/): helpers the transport benchmarks share.

use tpsim_core::SimTime;
use tpsim_transport::{Message, SocketConfig, Transport, TransportEvent};
use tpsim_wire::SizeConvention;

/// The endpoint configuration of the no-network benchmarks: ports `local` → `remote`,
/// standard sizes, MTU 1500 bytes.
pub fn socket_config(local: u16, remote: u16) -> SocketConfig {
    SocketConfig {
        local_port: local,
        remote_port: remote,
        sizes: SizeConvention::Standard,
        mtu: 1500,
        draw_seed: 0,
    }
}

/// Moves `bytes` of `len`-byte messages from `a` to `b` with no network between them: every
/// packet delivered at once, feedback returned at once; after each exchange time jumps to
/// the earliest deadline of either end (a paced sender's next sending time, a timer) and
/// what is due fires, so the loop measures packet handling, not idling. Returns the driver's
/// loop iterations.
pub fn transfer_paced<E: Transport>(a: &mut E, b: &mut E, len: u32, bytes: u64) -> u64 {
    let mut now = SimTime::ZERO;
    let (mut written, mut received, mut id, mut iterations) = (0u64, 0u64, 0u64, 0u64);
    while received < bytes {
        iterations += 1;
        while written < bytes && a.can_send(len) {
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
        if let Some(next) = a.poll_timeout().into_iter().chain(b.poll_timeout()).min() {
            now = now.max(next);
        }
        for s in [&mut *a, &mut *b] {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                s.on_timeout(now);
            }
        }
    }
    iterations
}
