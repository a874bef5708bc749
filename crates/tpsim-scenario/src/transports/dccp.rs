//! DCCP (RFC 4340) with CCID 2 (RFC 4341) or CCID 3 (RFC 4342), and the `dccp` keys table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{key_path, ErrorSink, Flow, Transport, TransportKeys};
use crate::{Bytes, Ns2PacketSize, Ns2Quirk, Scenario};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{Ccid, DccpConfig, DccpProfile, DccpSocket, Socket, SocketConfig};
use tpsim_wire::SizeConvention;

/// DCCP parameters of a flow (RFC 4340, 4341, 4342). Absent keys take the profile's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DccpOptions {
    /// "rfc" (default) or "ns2" (ns-2.35's Agent/DCCP where it differs: Request timeout 3 s,
    /// CCID 2 initial cwnd 3 packets, CCID 3 segment size 500 B and oscillation prevention).
    #[serde(default)]
    pub profile: Option<DccpProfileName>,
    /// Send queue, messages: a message that finds it full is dropped at the sender (counted
    /// in `send_queue_drops`). Default 1000 (ns-2's `sb_size_`; the RFCs set none).
    #[serde(default)]
    pub send_queue: Option<u32>,
    /// Initial Ack Ratio (RFC 4340 §11.3). Default 2.
    #[serde(default)]
    pub ack_ratio: Option<u16>,
    /// Sequence Window, packets (RFC 4340 §7.5.2). Default 100.
    #[serde(default)]
    pub sequence_window: Option<u32>,
    /// CCID 3: the segment size s of the throughput equation. Default: the mean size of the
    /// messages sent (ns2 profile: 500 B, ns-2's `s_s_`, unless `simulation.ns2_packet_size =
    /// "message"`).
    #[serde(default)]
    pub segment_size: Option<Bytes>,
}

/// A DCCP profile's name in scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DccpProfileName {
    /// The RFCs' parameters.
    #[default]
    Rfc,
    /// ns-2.35's Agent/DCCP.
    Ns2,
}

impl Scenario {
    /// The DCCP profile flow `f` runs: its explicit `dccp.profile`, else the stack's.
    pub fn dccp_profile(&self, f: &Flow) -> DccpProfileName {
        let own = f.dccp.as_ref().and_then(|o| o.profile);
        own.unwrap_or_else(|| self.by_stack(DccpProfileName::Rfc, DccpProfileName::Ns2))
    }
}

pub(crate) struct Keys;

impl TransportKeys for Keys {
    const LABEL: &'static str = "DCCP";

    fn socket(sc: &Scenario, f: &Flow, cfg: SocketConfig, open: Open, start: SimTime) -> Socket {
        Socket::Dccp(DccpSocket::new(cfg, dccp_config(sc, f), open, start))
    }

    fn validate(_sc: &Scenario, i: usize, f: &Flow, err: &mut ErrorSink<'_>) {
        let Some(d) = &f.dccp else { return };
        super::tfrc::validate_queue_and_segment(i, "dccp", d.send_queue, d.segment_size, err);
        if d.ack_ratio == Some(0) {
            err(
                key_path(i, "dccp", "ack_ratio"),
                "expected an Ack Ratio of at least 1 (RFC 4340 §11.3)".into(),
            );
        }
        // RFC 4340 §7.5.2: the Sequence Window feature takes values from 32 to 2^46 - 1.
        if d.sequence_window.is_some_and(|w| w < 32) {
            err(
                key_path(i, "dccp", "sequence_window"),
                "expected a Sequence Window of at least 32 packets (RFC 4340 §7.5.2)".into(),
            );
        }
    }

    fn max_message(sizes: SizeConvention, mtu: u32) -> Option<u32> {
        Some(tpsim_wire::dccp::max_message(sizes, mtu))
    }
}

/// The DCCP parameters of flow `f`: its profile's with the transport's CCID, then the
/// scenario's keys.
fn dccp_config(sc: &Scenario, f: &Flow) -> DccpConfig {
    let o = f.dccp.clone().unwrap_or_default();
    let profile = match sc.dccp_profile(f) {
        DccpProfileName::Rfc => DccpProfile::Rfc,
        DccpProfileName::Ns2 => DccpProfile::Ns2,
    };
    let ccid = if f.transport == Transport::DccpCcid3 {
        Ccid::Ccid3
    } else {
        Ccid::Ccid2
    };
    let mut c = DccpConfig::for_profile(profile, ccid);
    if let Some(q) = o.send_queue {
        c.send_queue_len = q as usize;
    }
    if let Some(r) = o.ack_ratio {
        c.ack_ratio = r;
    }
    if let Some(w) = o.sequence_window {
        c.sequence_window = w as u64;
    }
    if let Some(b) = o.segment_size {
        c.ccid3_s = Some(b.0 as u32);
    } else if sc.simulation.ns2_packet_size == Ns2PacketSize::Message {
        // ns-2's scripts with sizes=msg set s_s_ to the message size.
        c.ccid3_s = None;
    }
    c.listens = profile != DccpProfile::Ns2 || !sc.simulation.ns2_quirks.contains(&Ns2Quirk::DccpNoListen);
    c
}
