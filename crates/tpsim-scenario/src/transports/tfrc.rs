//! TFRC (RFC 5348) over UDP, and the `tfrc` keys table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{key_path, ErrorSink, Flow, TransportKeys};
use crate::{AppKind, Bytes, Ns2PacketSize, Scenario, Seg};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{Socket, SocketConfig, TfrcConfig, TfrcSocket};
use tpsim_wire::SizeConvention;

/// TFRC parameters of a flow (RFC 5348). Absent keys take the profile's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TfrcOptions {
    /// "rfc5348" (default) or "ns2" (ns-2.35's Agent/TFRC and TFRCSink: their send timer,
    /// slow start, rate increase and TCP-style t_RTO, a loss after one later packet,
    /// TFRCSink's feedback rule; docs/models.md).
    #[serde(default)]
    pub profile: Option<TfrcProfileName>,
    /// Send queue, messages: a message that finds it full is dropped at the sender (counted
    /// in `send_queue_drops`). Default unbounded (as ns-2).
    #[serde(default)]
    pub send_queue: Option<u32>,
    /// The segment size s of the throughput equation. Default: `packet_size` if given, else
    /// the mean size of the messages sent.
    #[serde(default)]
    pub segment_size: Option<Bytes>,
    /// Bytes of data in every data packet: shorter messages are padded to it, as ns-2.35's
    /// Agent/TFRC sends every write as a packet of `packetSize_` (a 128-byte message then
    /// travels in a 1032-byte packet under `sizes = "ns2"`). Messages must not be longer.
    /// Default: 1000 B on the ns2 profile (ns-2's `packetSize_`; none with
    /// `simulation.ns2_packet_size = "message"`), else none (a packet carries its message
    /// only).
    #[serde(default)]
    pub packet_size: Option<Bytes>,
}

/// A TFRC profile's name in scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TfrcProfileName {
    /// RFC 5348's parameters.
    #[default]
    Rfc5348,
    /// ns-2.35's Agent/TFRC and Agent/TFRCSink.
    Ns2,
}

impl Scenario {
    /// The TFRC profile flow `f` runs: its explicit `tfrc.profile`, else the stack's.
    pub fn tfrc_profile(&self, f: &Flow) -> TfrcProfileName {
        let own = f.tfrc.as_ref().and_then(|o| o.profile);
        own.unwrap_or_else(|| self.by_stack(TfrcProfileName::Rfc5348, TfrcProfileName::Ns2))
    }
}

pub(crate) struct Keys;

impl TransportKeys for Keys {
    const LABEL: &'static str = "TFRC";

    fn socket(sc: &Scenario, f: &Flow, cfg: SocketConfig, open: Open, start: SimTime) -> Socket {
        Socket::Tfrc(TfrcSocket::new(cfg, tfrc_config(sc, f), open, start))
    }

    fn validate(_sc: &Scenario, i: usize, f: &Flow, err: &mut ErrorSink<'_>) {
        if let Some(o) = &f.tfrc {
            validate_queue_and_segment(i, "tfrc", o.send_queue, o.segment_size, err);
            if let Some(p) = o.packet_size {
                if !(1..=65495).contains(&p.0) {
                    err(
                        key_path(i, "tfrc", "packet_size"),
                        "expected a packet size between 1B and 65495B".into(),
                    );
                } else if f.transport.family() == "tfrc" && f.app.size.is_some_and(|m| m.0 > p.0) {
                    err(
                        key_path(i, "app", "size"),
                        format!(
                            "expected messages of at most tfrc.packet_size ({}B): a TFRC packet carries one message",
                            p.0
                        ),
                    );
                }
            }
        }
        if f.transport.family() == "tfrc" && f.app.kind == AppKind::Voip {
            err(
                vec![Seg::Key("flows".into()), Seg::Index(i), Seg::Key("transport".into())],
                "TFRC flows are one-way (a sender and a receiver): give a two-way application two flows".into(),
            );
        }
    }

    fn max_message(sizes: SizeConvention, mtu: u32) -> Option<u32> {
        Some(tpsim_wire::tfrc::max_message(sizes, mtu))
    }
}

/// `send_queue` and `segment_size` of flow `i`'s `table` (TFRC's and DCCP's keys).
pub(super) fn validate_queue_and_segment(
    i: usize,
    table: &str,
    queue: Option<u32>,
    size: Option<Bytes>,
    err: &mut ErrorSink<'_>,
) {
    if queue == Some(0) {
        err(
            key_path(i, table, "send_queue"),
            "expected a send queue of at least 1 message".into(),
        );
    }
    if size.is_some_and(|b| b.0 == 0 || b.0 > 65535) {
        err(
            key_path(i, table, "segment_size"),
            "expected a segment size between 1B and 65535B".into(),
        );
    }
}

/// The TFRC parameters of flow `f`: its profile's, then the scenario's keys.
fn tfrc_config(sc: &Scenario, f: &Flow) -> TfrcConfig {
    let o = f.tfrc.clone().unwrap_or_default();
    let mut c = match sc.tfrc_profile(f) {
        TfrcProfileName::Rfc5348 => TfrcConfig::rfc5348(),
        TfrcProfileName::Ns2 => TfrcConfig::ns2(),
    };
    if let Some(q) = o.send_queue {
        c.send_queue = Some(q as usize);
    }
    if let Some(b) = o.segment_size {
        c.segment_size = Some(b.0 as u32);
    }
    c.packet_size = match (o.packet_size, sc.tfrc_profile(f), sc.simulation.ns2_packet_size) {
        (Some(b), _, _) => Some(b.0 as u32),
        // Agent/TFRC pads every write to its `packetSize_`, 1000 B unless set.
        (None, TfrcProfileName::Ns2, Ns2PacketSize::Default) => Some(tpsim_transport::NS2_PACKET_SIZE),
        (None, _, _) => None,
    };
    c
}
