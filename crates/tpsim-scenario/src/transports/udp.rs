//! UDP (RFC 768): no keys table; a message per datagram.

use super::{ErrorSink, Flow, TransportKeys};
use crate::{AppKind, Scenario, Seg};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{Socket, SocketConfig, UdpSocket};
use tpsim_wire::SizeConvention;

pub(crate) struct Keys;

impl TransportKeys for Keys {
    const LABEL: &'static str = "UDP";
    const ACKNOWLEDGED: bool = false;

    fn socket(_sc: &Scenario, _flow: &Flow, cfg: SocketConfig, _open: Open, _start: SimTime) -> Socket {
        Socket::Udp(UdpSocket::new(cfg))
    }

    /// UDP does not pace a bulk writer: it would send the whole transfer at once.
    fn validate(_sc: &Scenario, i: usize, flow: &Flow, err: &mut ErrorSink<'_>) {
        if flow.transport.family() == "udp" && flow.app.kind == AppKind::Bulk {
            err(
                vec![Seg::Key("flows".into()), Seg::Index(i), Seg::Key("transport".into())],
                "a bulk application needs a transport that paces its writer (any but udp); over udp use kind = \"cbr\""
                    .into(),
            );
        }
    }

    fn max_message(sizes: SizeConvention, mtu: u32) -> Option<u32> {
        Some(tpsim_wire::udp::max_message(sizes, mtu))
    }
}
