//! Transports as scenarios name them: one module per transport, holding its keys table (the
//! `tcp = { ... }` of a flow), their checks and the sockets a flow of it gets, registered by
//! one entry of `transports!` below (which declares [`Transport`] and [`Flow`] from them).
//! docs/adding-a-transport.md walks through adding one.

mod dccp;
mod sctp;
mod stop_and_wait;
mod tcp;
mod tfrc;
mod udp;

pub use dccp::{DccpOptions, DccpProfileName};
pub use sctp::{SctpOptions, SctpProfileName};
pub use stop_and_wait::StopAndWaitOptions;
pub use tcp::{TcpOptions, TcpPreset};
pub use tfrc::{TfrcOptions, TfrcProfileName};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tpsim_core::SimTime;
use tpsim_transport::tcp::Open;
use tpsim_transport::{Socket, SocketConfig};
use tpsim_wire::SizeConvention;

use crate::{App, Scenario, Seg};

/// Where a check's error goes: the key path and the message.
pub type ErrorSink<'a> = dyn FnMut(Vec<Seg>, String) + 'a;

/// What a transport's module provides; `Transport`'s methods dispatch to it with a `match`.
pub(crate) trait TransportKeys {
    /// The protocol's name in messages ("UDP", "TCP").
    const LABEL: &'static str;
    /// Whether its sender takes acknowledgements or feedback (the per-ACK samples have rows
    /// for it). Default true.
    const ACKNOWLEDGED: bool = true;
    /// Congestion-state series per flow direction that the memory estimate counts. Default 0.
    const CONGESTION_SERIES: u64 = 0;

    /// The endpoint of flow `f` (`flow`'s transport is one of this module's) with the
    /// per-end settings `cfg`, at the end that opens (`Open::Active`, the source) or the one
    /// that listens; `start` is when its application starts.
    fn socket(sc: &Scenario, flow: &Flow, cfg: SocketConfig, open: Open, start: SimTime) -> Socket;

    /// Checks flow `i`'s keys table, present whatever the flow's transport (so that a sweep
    /// over `transport` can keep it), and the rules this transport sets for a flow of it
    /// (`flow.transport` is then one of this module's). Default: nothing to check.
    fn validate(sc: &Scenario, i: usize, flow: &Flow, err: &mut ErrorSink<'_>) {
        let _ = (sc, i, flow, err);
    }

    /// The largest message it carries in one packet over an IP MTU of `mtu` bytes, for a
    /// message-preserving transport that does not fragment; `None` (the default) for one
    /// that cuts messages into segments or chunks.
    fn max_message(sizes: SizeConvention, mtu: u32) -> Option<u32> {
        let _ = (sizes, mtu);
        None
    }

    /// With multi-homing (RFC 9260 §6.4), the index of the destination node's address the
    /// source opens to (both ends then use every address of their node); `None` (the
    /// default) for one address per end.
    fn multihoming(flow: &Flow) -> Option<u32> {
        let _ = flow;
        None
    }

    /// Whether the flow's messages are sent unordered (on transports with streams).
    /// Default false.
    fn unordered(flow: &Flow) -> bool {
        let _ = flow;
        false
    }
}

/// The path of key `key` of flow `i`'s keys table `table` (`flows[i].table.key`).
pub(crate) fn key_path(i: usize, table: &str, key: &str) -> Vec<Seg> {
    vec![
        Seg::Key("flows".into()),
        Seg::Index(i),
        Seg::Key(table.into()),
        Seg::Key(key.into()),
    ]
}

/// Declares [`Transport`] (one variant per name of each module's entry) with its dispatch to
/// the modules, and [`Flow`] (one optional keys table per module that has one).
macro_rules! transports {
    ($(
        $module:ident $([$(#[$kdoc:meta])* $key:ident: $opts:ty])? {
            $($(#[$vdoc:meta])* $variant:ident = $name:literal,)+
        }
    )*) => {
        /// Transport protocols, as scenarios name them (`transport = "tcp"`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
        pub enum Transport {
            $($($(#[$vdoc])* #[serde(rename = $name)] $variant,)+)*
        }

        impl Transport {
            /// The name used in scenarios and result tables.
            pub fn name(self) -> &'static str {
                match self { $($(Transport::$variant => $name,)+)* }
            }
            /// The module it belongs to, which names its keys table: "tcp" for every TCP
            /// variant, "dccp" for both CCIDs.
            pub fn family(self) -> &'static str {
                match self { $($(Transport::$variant)|+ => stringify!($module),)* }
            }
            /// The protocol's name in messages ("UDP", "TCP", "SCTP").
            pub fn label(self) -> &'static str {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::LABEL,)* }
            }
            /// Whether its sender takes acknowledgements or feedback.
            pub fn acknowledged(self) -> bool {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::ACKNOWLEDGED,)* }
            }
            /// Congestion-state series per flow direction, as the memory estimate counts them.
            pub fn congestion_series(self) -> u64 {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::CONGESTION_SERIES,)* }
            }
            /// The endpoint of flow `flow` (whose transport this is) with the per-end settings
            /// `cfg`, at the end that opens (`Open::Active`: the source) or listens; `start`:
            /// when its application starts.
            pub fn socket(self, sc: &Scenario, flow: &Flow, cfg: SocketConfig, open: Open, start: SimTime) -> Socket {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::socket(sc, flow, cfg, open, start),)* }
            }
            /// The largest message (bytes) it carries in one packet over an IP MTU of `mtu`
            /// bytes, if it does not fragment (UDP, TFRC, DCCP); `None` for transports that
            /// cut messages into segments or chunks (TCP, SCTP).
            pub fn max_message(self, sizes: SizeConvention, mtu: u32) -> Option<u32> {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::max_message(sizes, mtu),)* }
            }
            /// With multi-homing, the index of the destination's address the source opens to.
            pub fn multihoming(self, flow: &Flow) -> Option<u32> {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::multihoming(flow),)* }
            }
            /// Whether `flow`'s messages are sent unordered.
            pub fn unordered(self, flow: &Flow) -> bool {
                match self { $($(Transport::$variant)|+ => <$module::Keys as TransportKeys>::unordered(flow),)* }
            }
        }

        /// Every transport module's checks of flow `i` (see [`TransportKeys::validate`]).
        pub(crate) fn validate_keys(sc: &Scenario, i: usize, flow: &Flow, err: &mut ErrorSink<'_>) {
            $(<$module::Keys as TransportKeys>::validate(sc, i, flow, err);)*
        }

        /// One flow: a transport association between two nodes and the application driving
        /// it, with the keys tables of the transports.
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct Flow {
            /// Sending node index.
            pub src: u32,
            /// Receiving node index (for "voip", the other party, which sends back too).
            pub dst: u32,
            /// Transport protocol.
            pub transport: Transport,
            /// The application.
            pub app: App,
            /// How many identical flows this table stands for, 1 to 1000: they take
            /// consecutive flow indices from this flow's own, and the flows after it move up.
            /// Default 1.
            #[serde(default = "crate::flows::one_copy")]
            #[schemars(range(min = 1, max = 1000))]
            pub copies: u32,
            /// Copy k (from 0) starts its application at `app.start` + k · `stagger`; the
            /// stop is the same for every copy. Default "0s".
            #[serde(default)]
            pub stagger: crate::Duration,
            $($($(#[$kdoc])* #[serde(default)] pub $key: Option<$opts>,)?)*
        }

        impl Flow {
            /// A flow without keys tables (every transport's defaults), one copy.
            pub fn new(src: u32, dst: u32, transport: Transport, app: App) -> Flow {
                Flow { src, dst, transport, app, copies: 1, stagger: crate::Duration::default(), $($($key: None::<$opts>,)?)* }
            }
        }
    };
}

transports! {
    udp {
        /// UDP (RFC 768).
        Udp = "udp",
    }
    tcp [
        /// TCP parameters, used when the transport is a TCP (ignored otherwise, so that a
        /// sweep over `transport` can keep them); every key optional.
        tcp: TcpOptions
    ] {
        /// TCP with NewReno loss recovery (RFC 6582), the default TCP.
        Tcp = "tcp",
        /// TCP NewReno (RFC 6582), same as "tcp".
        TcpNewreno = "tcp-newreno",
        /// TCP Reno (RFC 5681 fast retransmit and fast recovery).
        TcpReno = "tcp-reno",
        /// TCP Tahoe (fast retransmit, no fast recovery).
        TcpTahoe = "tcp-tahoe",
        /// TCP with SACK (RFC 2018) and RFC 6675 loss recovery, NewReno's window rules.
        TcpSack = "tcp-sack",
        /// TCP CUBIC (RFC 9438), with SACK recovery when both ends negotiate SACK
        /// (`tcp.sack`).
        TcpCubic = "tcp-cubic",
        /// BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00), paced, with SACK
        /// recovery when both ends negotiate SACK.
        TcpBbr = "tcp-bbr",
        /// BBR v3 (draft-ietf-ccwg-bbr-06): BBR with bounds from loss and ECN and the
        /// four-phase ProbeBW cycle, paced, with SACK recovery when both ends negotiate SACK.
        TcpBbr3 = "tcp-bbr3",
        /// TCP Vegas (Brakmo & Peterson 1995; α 2, β 4, γ 1), with SACK recovery when both
        /// ends negotiate SACK.
        TcpVegas = "tcp-vegas",
        /// TCP Westwood+ (Mascolo et al.; Grieco & Mascolo 2004), with SACK recovery when
        /// both ends negotiate SACK.
        TcpWestwoodPlus = "tcp-westwood-plus",
    }
    sctp [
        /// SCTP parameters, used when the transport is "sctp" (ignored otherwise, as `tcp`).
        sctp: SctpOptions
    ] {
        /// SCTP (RFC 9260), one association per flow.
        Sctp = "sctp",
    }
    tfrc [
        /// TFRC parameters, used when the transport is "tfrc" (ignored otherwise).
        tfrc: TfrcOptions
    ] {
        /// TFRC (RFC 5348) over UDP, message-preserving and unreliable.
        Tfrc = "tfrc",
    }
    dccp [
        /// DCCP parameters, used when the transport is a DCCP (ignored otherwise).
        dccp: DccpOptions
    ] {
        /// DCCP (RFC 4340) with CCID 2 (RFC 4341, TCP-like), the default CCID; same as
        /// "dccp-ccid2".
        Dccp = "dccp",
        /// DCCP with CCID 2 (RFC 4341).
        DccpCcid2 = "dccp-ccid2",
        /// DCCP with CCID 3 (RFC 4342, TFRC).
        DccpCcid3 = "dccp-ccid3",
    }
    stop_and_wait [
        /// Stop-and-wait parameters, used when the transport is "stop-and-wait".
        stop_and_wait: StopAndWaitOptions
    ] {
        /// Stop-and-wait ARQ over UDP: one message outstanding, retransmitted on timeout.
        StopAndWait = "stop-and-wait",
    }
}

impl Transport {
    /// Whether it is one of the TCP variants.
    pub fn is_tcp(self) -> bool {
        self.family() == "tcp"
    }
    /// Whether it is one of the DCCP variants.
    pub fn is_dccp(self) -> bool {
        self.family() == "dccp"
    }
}
