//! Benchmarks crate (see benches/): helpers the transport benchmarks share.

use tpsim_core::SimTime;
use tpsim_transport::{DccpSocket, Message, Segment, SendError, SocketConfig, TfrcSocket, TransportEvent};
use tpsim_wire::SizeConvention;

/// The endpoint configuration of the no-network benchmarks: ports `local` → `remote`,
/// standard sizes, MTU 1500 bytes.
pub fn socket_config(local: u16, remote: u16) -> SocketConfig {
    SocketConfig {
        local_port: local,
        remote_port: remote,
        sizes: SizeConvention::Standard,
        mtu: 1500,
    }
}

/// A message-preserving, rate- or window-paced endpoint as the benchmarks drive it
/// (statically dispatched: the driver costs the same for every transport).
pub trait Endpoint {
    fn can_send(&self, len: u32) -> bool;
    fn send(&mut self, now: SimTime, m: Message) -> Result<(), SendError>;
    fn poll_transmit(&mut self, now: SimTime) -> Option<Segment>;
    fn on_segment(&mut self, now: SimTime, s: &Segment);
    fn poll_event(&mut self) -> Option<TransportEvent>;
    fn poll_timeout(&self) -> Option<SimTime>;
    fn on_timeout(&mut self, now: SimTime);
}

macro_rules! endpoint {
    ($t:ty) => {
        impl Endpoint for $t {
            #[inline]
            fn can_send(&self, len: u32) -> bool {
                <$t>::can_send(self, len)
            }
            #[inline]
            fn send(&mut self, now: SimTime, m: Message) -> Result<(), SendError> {
                <$t>::send(self, now, m)
            }
            #[inline]
            fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
                <$t>::poll_transmit(self, now)
            }
            #[inline]
            fn on_segment(&mut self, now: SimTime, s: &Segment) {
                <$t>::on_segment(self, now, s)
            }
            #[inline]
            fn poll_event(&mut self) -> Option<TransportEvent> {
                <$t>::poll_event(self)
            }
            #[inline]
            fn poll_timeout(&self) -> Option<SimTime> {
                <$t>::poll_timeout(self)
            }
            #[inline]
            fn on_timeout(&mut self, now: SimTime) {
                <$t>::on_timeout(self, now)
            }
        }
    };
}
endpoint!(TfrcSocket);
endpoint!(DccpSocket);

/// Moves `bytes` of `len`-byte messages from `a` to `b` with no network between them: every
/// packet delivered at once, feedback returned at once; after each exchange time jumps to
/// the earliest deadline of either end (a paced sender's next sending time, a timer) and
/// what is due fires, so the loop measures packet handling, not idling. Returns the driver's
/// loop iterations.
pub fn transfer_paced<E: Endpoint>(a: &mut E, b: &mut E, len: u32, bytes: u64) -> u64 {
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
