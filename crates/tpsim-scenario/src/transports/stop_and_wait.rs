//! Stop-and-wait ARQ (docs/adding-a-transport.md's example), and its `stop_and_wait` keys
//! table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{key_path, ErrorSink, Flow, TransportKeys};
use crate::{Duration, Scenario};
use tpsim_core::SimTime;
use tpsim_transport::stop_and_wait::{max_message, StopAndWaitConfig, StopAndWaitSocket};
use tpsim_transport::tcp::Open;
use tpsim_transport::{Socket, SocketConfig};
use tpsim_wire::SizeConvention;

/// Stop-and-wait parameters of a flow. Absent keys take the defaults given here.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopAndWaitOptions {
    /// RTO before the first RTT sample. Default "1s" (RFC 6298 §2.1).
    #[serde(default)]
    pub rto_initial: Option<Duration>,
    /// Lower bound of the RTO. Default "1s" (RFC 6298 §2.4).
    #[serde(default)]
    pub rto_min: Option<Duration>,
    /// Messages waiting behind the outstanding one; a message that finds the queue full is
    /// refused (lost by the application, not counted as sent). Default 100.
    #[serde(default)]
    pub send_queue: Option<u32>,
}

pub(crate) struct Keys;

impl TransportKeys for Keys {
    const LABEL: &'static str = "stop-and-wait";
    const CONGESTION_SERIES: u64 = 1;

    fn socket(_sc: &Scenario, f: &Flow, cfg: SocketConfig, _open: Open, _start: SimTime) -> Socket {
        let o = f.stop_and_wait.clone().unwrap_or_default();
        let mut c = StopAndWaitConfig::default();
        if let Some(d) = o.rto_initial {
            c.rto_initial = d.sim();
        }
        if let Some(d) = o.rto_min {
            c.rto_min = d.sim();
        }
        if let Some(q) = o.send_queue {
            c.send_queue = q as usize;
        }
        Socket::StopAndWait(StopAndWaitSocket::new(cfg, c))
    }

    fn validate(_sc: &Scenario, i: usize, f: &Flow, err: &mut ErrorSink<'_>) {
        let Some(o) = &f.stop_and_wait else { return };
        let at = |key| key_path(i, "stop_and_wait", key);
        for (key, d) in [("rto_initial", o.rto_initial), ("rto_min", o.rto_min)] {
            // RFC 6298 §2.5: the RTO is bounded above (tpsim: 60 s).
            if d.is_some_and(|d| d.0 == 0 || d.0 > 60_000_000_000) {
                err(at(key), "expected a duration greater than 0 and at most 60s".into());
            }
        }
        if o.send_queue == Some(0) {
            err(at("send_queue"), "expected a send queue of at least 1 message".into());
        }
    }

    fn max_message(sizes: SizeConvention, mtu: u32) -> Option<u32> {
        Some(max_message(sizes, mtu))
    }
}
