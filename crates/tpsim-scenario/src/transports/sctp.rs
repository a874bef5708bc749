//! SCTP (RFC 9260), with multi-homing and PR-SCTP, and the `sctp` keys table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{key_path, ErrorSink, Flow, Transport, TransportKeys};
use crate::{Bytes, Duration, Ns2Quirk, Scenario};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{SctpConfig, SctpProfile, SctpSocket, Socket, SocketConfig};

/// SCTP parameters of a flow (RFC 9260). Absent keys take the profile's value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SctpOptions {
    /// Which defaults the other keys start from: "rfc9260" (default; RFC 9260 §16, windows
    /// counted in PMDCS, initial cwnd min(4·PMDCS, max(2·PMDCS, 4404 B))), "rfc4960" (RFC
    /// 4960: RTO.Initial 3 s, windows in MTUs, initial cwnd 4380 B, as QualNet and the public
    /// conformance suite) or "ns2" (ns-2.35's Agent/SCTP defaults and its send rule:
    /// docs/models.md).
    #[serde(default)]
    pub profile: Option<SctpProfileName>,
    /// Messages of this flow are sent unordered (RFC 9260 §6.6, the U bit). Default false.
    #[serde(default)]
    pub unordered: Option<bool>,
    /// RTO.Initial. Default "1s" (rfc4960, ns2: "3s").
    #[serde(default)]
    pub rto_initial: Option<Duration>,
    /// RTO.Min. Default "1s".
    #[serde(default)]
    pub rto_min: Option<Duration>,
    /// RTO.Max. Default "60s".
    #[serde(default)]
    pub rto_max: Option<Duration>,
    /// Max.Burst: new-data packets per send opportunity (RFC 9260 §6.1 D); 0 for no limit.
    /// Default 4.
    #[serde(default)]
    pub max_burst: Option<u32>,
    /// Bundling (RFC 9260 §6.10): a packet carries as many waiting DATA chunks as fit (at
    /// most 10); false sends one DATA chunk a packet, so that each message of a packet-size
    /// sweep is its own packet, as with UDP. Default true.
    #[serde(default)]
    pub bundling: Option<bool>,
    /// Delayed SACK timer (RFC 9260 §6.2, at most "500ms"); "0s" sends a SACK for every
    /// packet with DATA. Default "200ms".
    #[serde(default)]
    pub sack_delay: Option<Duration>,
    /// HB.interval (RFC 9260 §8.3); "0s" sends no HEARTBEAT. Default "30s".
    #[serde(default)]
    pub hb_interval: Option<Duration>,
    /// Path.Max.Retrans (RFC 9260 §8.2). Default 5.
    #[serde(default)]
    pub path_max_retrans: Option<u32>,
    /// Association.Max.Retrans (RFC 9260 §8.1): consecutive retransmission timeouts after
    /// which the association is abandoned. Default 10.
    #[serde(default)]
    pub assoc_max_retrans: Option<u32>,
    /// Max.Init.Retransmits (RFC 9260 §5.1). Default 8.
    #[serde(default)]
    pub max_init_retransmits: Option<u32>,
    /// Receive buffer, the a_rwnd advertised in INIT (RFC 9260 §6.2), at least "1500B".
    /// Default "64KiB".
    #[serde(default)]
    pub receive_buffer: Option<Bytes>,
    /// Send buffer: user data accepted and not yet acknowledged. Default "128KiB".
    #[serde(default)]
    pub send_buffer: Option<Bytes>,
    /// Multi-homing (RFC 9260 §6.4): both ends use every address of their node (its link
    /// interfaces in `links` order, then its radio), announced in INIT and INIT ACK, each peer
    /// address reached over its own static route. Default false (one address each).
    #[serde(default)]
    pub multihoming: Option<bool>,
    /// With `multihoming`: which of the destination node's addresses (0 = its first) the source
    /// opens the association to, its primary path. Default 0.
    #[serde(default)]
    pub primary: Option<u32>,
    /// PR-SCTP timed reliability (RFC 3758 §4.1): a message not delivered within this time of
    /// its creation is abandoned (no chunk of it is sent after that). Turns PR-SCTP on at both
    /// ends (the Forward-TSN-Supported parameter). Default: fully reliable.
    #[serde(default)]
    pub lifetime: Option<Duration>,
    /// PR-SCTP limited retransmissions (RFC 7496 §3.1): a message is abandoned when a chunk of it
    /// would be retransmitted more than this many times (0: never retransmitted). Turns PR-SCTP
    /// on at both ends. Default: fully reliable.
    #[serde(default)]
    pub max_retransmissions: Option<u32>,
    /// With `multihoming`: the potentially-failed state of RFC 7829 (SCTP-PF) at both ends: a
    /// peer address whose error counter exceeds `pf_max_retrans` gets no more DATA while another
    /// address is active and is heartbeated once per RTO until it answers. Default false.
    #[serde(default)]
    pub potentially_failed: Option<bool>,
    /// With `potentially_failed`: PotentiallyFailed.Max.Retrans (PFMR, RFC 7829), below
    /// `path_max_retrans`. Default 0.
    #[serde(default)]
    pub pf_max_retrans: Option<u32>,
}

impl SctpOptions {
    /// PotentiallyFailed.Max.Retrans when `potentially_failed` is on (the transport's
    /// `SctpConfig::pf_max_retrans`), else `None`.
    pub fn pf_max_retrans_if_on(&self) -> Option<u32> {
        (self.potentially_failed == Some(true)).then(|| self.pf_max_retrans.unwrap_or(0))
    }
}

/// An SCTP profile's name in scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SctpProfileName {
    /// RFC 9260's parameters.
    #[default]
    Rfc9260,
    /// RFC 4960's parameters.
    Rfc4960,
    /// ns-2.35's Agent/SCTP.
    Ns2,
}

impl Scenario {
    /// The SCTP profile flow `f` runs: its explicit `sctp.profile`, else the stack's (rfc9260
    /// or ns2).
    pub fn sctp_profile(&self, f: &Flow) -> SctpProfileName {
        let own = f.sctp.as_ref().and_then(|o| o.profile);
        own.unwrap_or_else(|| self.by_stack(SctpProfileName::Rfc9260, SctpProfileName::Ns2))
    }
}

pub(crate) struct Keys;

impl TransportKeys for Keys {
    const LABEL: &'static str = "SCTP";

    fn socket(sc: &Scenario, f: &Flow, cfg: SocketConfig, open: Open, start: SimTime) -> Socket {
        Socket::Sctp(SctpSocket::new(cfg, sctp_config(sc, f), open, start))
    }

    fn validate(sc: &Scenario, i: usize, f: &Flow, err: &mut ErrorSink<'_>) {
        if let Some(o) = &f.sctp {
            validate_sctp_options(i, o, err);
            // The destination's addresses: one per link it ends, then its radio.
            let n_addrs = sc.links.iter().filter(|l| l.nodes.contains(&f.dst)).count() + sc.radio.is_some() as usize;
            if let Some(got) = o.primary.filter(|&j| j as usize >= n_addrs) {
                err(
                    key_path(i, "sctp", "primary"),
                    format!(
                        "expected the index of one of node {}'s {n_addrs} addresses (0..{}), got {got}",
                        f.dst,
                        n_addrs.saturating_sub(1),
                    ),
                );
            }
        }
        if f.transport == Transport::Sctp {
            let buffer = f.sctp.as_ref().and_then(|o| o.send_buffer).map_or(131_072, |b| b.0);
            if f.app.size.is_some_and(|s| s.0 > buffer) {
                err(
                    key_path(i, "app", "size"),
                    format!("an SCTP message must fit the send buffer ({buffer}B; sctp.send_buffer)"),
                );
            }
        }
    }

    fn multihoming(f: &Flow) -> Option<u32> {
        let o = f.sctp.as_ref()?;
        o.multihoming.unwrap_or(false).then(|| o.primary.unwrap_or(0))
    }

    fn unordered(f: &Flow) -> bool {
        f.sctp.as_ref().and_then(|o| o.unordered).unwrap_or(false)
    }
}

/// Flow `i`'s `sctp` options, checked whatever the transport (as `tcp`).
fn validate_sctp_options(i: usize, o: &SctpOptions, err: &mut ErrorSink<'_>) {
    let at = |key: &str| key_path(i, "sctp", key);
    let (min, max) = (
        o.rto_min.map_or(1_000_000_000, |d| d.0),
        o.rto_max.map_or(60_000_000_000, |d| d.0),
    );
    if o.rto_min.is_some_and(|d| d.0 == 0) {
        err(at("rto_min"), "expected an RTO.Min greater than 0".into());
    }
    if min > max {
        err(at("rto_max"), "expected RTO.Max at least RTO.Min (rto_min)".into());
    }
    if let Some(d) = o.rto_initial {
        if d.0 == 0 || d.0 > max {
            err(
                at("rto_initial"),
                "expected an RTO.Initial greater than 0 and at most RTO.Max".into(),
            );
        }
    }
    // RFC 9260 §6.2: the delayed-SACK timer MUST NOT exceed 500 ms.
    if o.sack_delay.is_some_and(|d| d.0 > 500_000_000) {
        err(
            at("sack_delay"),
            "expected a delayed-SACK timer of at most 500ms (RFC 9260 §6.2)".into(),
        );
    }
    // RFC 9260 §6.2: a receiver's buffer of at least 1500 bytes.
    if o.receive_buffer.is_some_and(|b| b.0 < 1500 || b.0 > u32::MAX as u64) {
        err(
            at("receive_buffer"),
            "expected a receive buffer between 1500B and 4GiB (RFC 9260 §6.2)".into(),
        );
    }
    if o.lifetime.is_some() && o.max_retransmissions.is_some() {
        err(
            at("max_retransmissions"),
            "expected one PR-SCTP policy: `lifetime` or `max_retransmissions`, not both".into(),
        );
    }
    if o.lifetime.is_some_and(|d| d.0 == 0) {
        err(at("lifetime"), "expected a lifetime greater than 0".into());
    }
    if o.send_buffer.is_some_and(|b| b.0 == 0 || b.0 > u32::MAX as u64) {
        err(at("send_buffer"), "expected a send buffer between 1B and 4GiB".into());
    }
    // RFC 7829: PF is entered past PFMR, before Path.Max.Retrans makes the address inactive.
    if let Some(n) = o.pf_max_retrans {
        let pmr = o.path_max_retrans.unwrap_or(5);
        if o.potentially_failed != Some(true) {
            err(
                at("pf_max_retrans"),
                "expected `potentially_failed = true` with `pf_max_retrans`".into(),
            );
        } else if n >= pmr {
            err(
                at("pf_max_retrans"),
                format!("expected a PotentiallyFailed.Max.Retrans below Path.Max.Retrans ({pmr}), got {n}"),
            );
        }
    }
    for (key, v) in [
        ("assoc_max_retrans", o.assoc_max_retrans),
        ("path_max_retrans", o.path_max_retrans),
    ] {
        if v == Some(0) {
            err(at(key), "expected at least 1".into());
        }
    }
}

/// The SCTP parameters of flow `f`: its profile's, then the scenario's keys, with as many
/// outbound streams as its application uses.
fn sctp_config(sc: &Scenario, f: &Flow) -> SctpConfig {
    let o = f.sctp.clone().unwrap_or_default();
    let mut c = SctpConfig::for_profile(match sc.sctp_profile(f) {
        SctpProfileName::Rfc9260 => SctpProfile::Rfc9260,
        SctpProfileName::Rfc4960 => SctpProfile::Rfc4960,
        SctpProfileName::Ns2 => SctpProfile::Ns2,
    });
    c.streams = f.app.streams.unwrap_or(1).max(1);
    if let Some(d) = o.rto_initial {
        c.rto_initial = d.sim();
    }
    if let Some(d) = o.rto_min {
        c.rto_min = d.sim();
    }
    if let Some(d) = o.rto_max {
        c.rto_max = d.sim();
    }
    if let Some(b) = o.max_burst {
        c.max_burst = (b > 0).then_some(b);
    }
    if let Some(b) = o.bundling {
        c.bundling = b;
    }
    if let Some(d) = o.sack_delay {
        c.sack_delay = (d.0 > 0).then(|| d.sim());
    }
    // PR-SCTP (RFC 3758): a policy turns it on; both ends of the flow get the same settings.
    if let Some(d) = o.lifetime {
        c.pr_sctp = true;
        c.pr_policy = tpsim_transport::sctp::PrPolicy::Lifetime(d.sim());
    } else if let Some(n) = o.max_retransmissions {
        c.pr_sctp = true;
        c.pr_policy = tpsim_transport::sctp::PrPolicy::Retransmissions(n);
    }
    if let Some(d) = o.hb_interval {
        c.hb_interval = (d.0 > 0).then(|| d.sim());
    }
    if let Some(n) = o.path_max_retrans {
        c.path_max_retrans = n;
    }
    if let Some(n) = o.assoc_max_retrans {
        c.assoc_max_retrans = n;
    }
    if let Some(n) = o.max_init_retransmits {
        c.max_init_retransmits = n;
    }
    if let Some(b) = o.receive_buffer {
        c.recv_buffer_bytes = b.0 as u32;
    }
    if let Some(b) = o.send_buffer {
        c.send_buffer_bytes = b.0 as u32;
    }
    c.pf_max_retrans = o.pf_max_retrans_if_on();
    c.ns2_stall = c.ns2_send_rule && sc.simulation.ns2_quirks.contains(&Ns2Quirk::SctpStall);
    c
}
