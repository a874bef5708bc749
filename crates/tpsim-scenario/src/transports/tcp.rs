//! TCP: tpsim's TCP (RFC 9293 with RFC 5681/6298/6582, SACK, CUBIC) and ns-2.35's one-way
//! agents (`tcp.preset = "ns2"`), with the `tcp` keys table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{key_path, ErrorSink, Flow, Transport, TransportKeys};
use crate::{AppKind, Bytes, Duration, Ns2PacketSize, Scenario, Seg, Stack};
use tpsim_core::rng::RngStream;
use tpsim_core::{SimDuration, SimTime};
use tpsim_transport::tcp::{CongestionAlgorithm, LossRecovery, Open};
use tpsim_transport::{Ns2TcpConfig, Ns2TcpSocket, Ns2Variant, Socket, SocketConfig, TcpConfig, TcpSocket};

/// TCP parameters of a flow. Absent keys take the defaults documented here (RFC values, not
/// Linux's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    /// "modern" (default): tpsim's TCP (RFC 9293 byte stream with a handshake, RFC 5681/6298/
    /// 6582). "ns2": ns-2.35's one-way agents as its wireless studies used them (`Agent/TCP`,
    /// `/Reno`, `/Newreno` with `Agent/TCPSink`): every application write becomes whole packets
    /// of `packet_size` bytes plus 40 bytes of headers, a 40-byte SYN first, windows in
    /// packets, ns-2's RTT estimator with a 10 ms tick and 0.2 s minimum RTO (docs/models.md).
    /// "tcp" and "tcp-newreno" are Agent/TCP/Newreno there, "tcp-reno" Agent/TCP/Reno,
    /// "tcp-tahoe" Agent/TCP, "tcp-sack" Agent/TCP/Sack1 with Agent/TCPSink/Sack1. With "ns2" only `packet_size`, `window`, `initial_window`,
    /// `delayed_ack`, `min_rto` and `boot_time` apply.
    #[serde(default)]
    pub preset: Option<TcpPreset>,
    /// ns2 preset: the agent's `packetSize_`, the bytes of data in every packet. Default
    /// "1000B".
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// ns2 preset: the agent's `window_`, the largest window in packets. Default 20.
    #[serde(default)]
    pub window: Option<u32>,
    /// ns2 preset: the phase of the sender's 10 ms RTT clock (`tcpTick_`) at its start,
    /// ns-2's `boot_time_`, in [0 s, 10 ms). Default: drawn uniformly from that range per flow
    /// and run, as ns-2 draws it (`Random::uniform(tcpTick_)`); "0s" pins it (study D's
    /// published 303.486 ms delay).
    #[serde(default)]
    pub boot_time: Option<Duration>,
    /// Largest segment payload (SMSS), e.g. "1000B". Default: path MTU − 40 bytes.
    #[serde(default)]
    pub mss: Option<Bytes>,
    /// Send buffer. Default "128KiB".
    #[serde(default)]
    pub send_buffer: Option<Bytes>,
    /// Receive buffer, which bounds the advertised window rwnd (at most 65535 B without
    /// window scaling). Default "64KiB".
    #[serde(default)]
    pub receive_window: Option<Bytes>,
    /// Initial window, segments. Default: RFC 5681 §3.1 (2–4 segments by SMSS); ns2 preset:
    /// `windowInit_`.
    #[serde(default)]
    pub initial_window: Option<u32>,
    /// Delayed-ACK timeout; "0s" acknowledges every segment. Default "200ms" (RFC 5681 §4.2);
    /// ns2 preset: none (`Agent/TCPSink`), a duration makes the sink `Agent/TCPSink/DelAck`
    /// with that `interval_` (ns-2's is 100 ms).
    #[serde(default)]
    pub delayed_ack: Option<Duration>,
    /// With delayed ACKs: acknowledge at once after this many in-order data segments,
    /// whatever their size, instead of after two full-sized segments' worth of bytes (RFC
    /// 5681 §4.2). Default: the byte rule. ns-3's `DelAckCount` is 2.
    #[serde(default)]
    pub delayed_ack_segments: Option<u32>,
    /// Minimum RTO. Default "1s" (RFC 6298 §2.4).
    #[serde(default)]
    pub min_rto: Option<Duration>,
    /// Nagle's algorithm. Default false.
    #[serde(default)]
    pub nagle: Option<bool>,
    /// SYN transmissions after which an unanswered connection attempt is abandoned (RFC 9293
    /// §3.8.3, R2). Default: retry forever. ns-3's `ConnCount` is 6.
    #[serde(default)]
    pub syn_attempts: Option<u32>,
    /// Retransmission timeouts in a row after which the connection is dropped at the next
    /// (RFC 9293 §3.8.3, R2). Default: never. ns-3's `DataRetries` is 6.
    #[serde(default)]
    pub data_retries: Option<u32>,
    /// Timeout of the first SYN, doubled per retransmission. Default: the RTO (1 s, RFC 6298
    /// §2.1). ns-3's `ConnTimeout` is 3 s.
    #[serde(default)]
    pub syn_rto: Option<Duration>,
    /// RFC 7323 window scaling (§2): offered on the SYN, used when both ends offer it; then a
    /// `receive_window` above 64 KiB (up to 1 GiB) is advertised. Default false.
    #[serde(default)]
    pub window_scaling: Option<bool>,
    /// SACK (RFC 2018): SACK-permitted offered on the SYN, SACK blocks sent and, for a sender
    /// whose variant recovers with SACK ("tcp-sack", "tcp-cubic"), RFC 6675 loss recovery.
    /// Default false ("tcp-sack" offers it anyway).
    #[serde(default)]
    pub sack: Option<bool>,
    /// D-SACK (RFC 2883): report duplicate segments in the first SACK block. Default false.
    #[serde(default)]
    pub dsack: Option<bool>,
    /// RFC 3465 appropriate byte counting with L = 2·SMSS: slow start grows cwnd by the bytes
    /// an ACK acknowledges, up to 2·SMSS (so 2 segments per delayed ACK, as ns-3 and Linux),
    /// congestion avoidance by one SMSS per cwnd of bytes acknowledged. Default false (RFC 5681
    /// §3.1: at most one SMSS per ACK).
    #[serde(default)]
    pub byte_counting: Option<bool>,
    /// Pace data segments as Linux's `fq` does: `len / rate` apart (a send quantum of 2
    /// segments between 1.2 and 24 Mbit/s back to back), rate = max(cwnd, FlightSize) / SRTT
    /// · 2 in slow start below ssthresh/2, else · 1.2.
    /// "tcp-bbr" paces at its own rate whatever this says. Default false.
    #[serde(default)]
    pub pacing: Option<bool>,
    /// ECN (RFC 3168): offered on the SYN; when both ends offer it, data segments are
    /// ECN-capable, a queue discipline with `ecn = true` marks them instead of dropping, and
    /// the sender halves its window once per window of data for each echoed mark. Default
    /// false.
    #[serde(default)]
    pub ecn: Option<bool>,
    /// RFC 7323 timestamps: offered on the SYN, used when both ends offer them (12 more
    /// header bytes per segment, RTT sampled from every ACK of new data). Default false;
    /// ns-3 and Linux have them on.
    #[serde(default)]
    pub timestamps: Option<bool>,
}

/// Which TCP model a flow runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TcpPreset {
    /// tpsim's TCP (RFCs).
    #[default]
    Modern,
    /// ns-2.35's one-way TCP agents.
    Ns2,
    /// tpsim's TCP with the defaults of OMNeT++/INET 4's `Tcp` module (`Tcp.ned`, the
    /// `TcpBaseAlg` timers): "tcp" is INET's default algorithm `TcpReno`; MSS 536 B, advertised
    /// window 14 MSS (7,504 B), every segment acknowledged (`delayedAcksEnabled` false), Nagle
    /// on, initial window 1 segment (`increasedIWEnabled` false), no SACK, timestamps or window
    /// scaling, initial RTO 3 s, minimum RTO 1 s. The other `tcp` keys apply over these.
    Inet,
}

impl Scenario {
    /// The TCP model flow `f` runs: its explicit `tcp.preset`, else the scenario's stack.
    pub fn tcp_preset(&self, f: &Flow) -> TcpPreset {
        let own = f.tcp.as_ref().and_then(|o| o.preset);
        own.unwrap_or(match self.simulation.stack.unwrap_or_default() {
            Stack::Modern => TcpPreset::Modern,
            Stack::Ns2 => TcpPreset::Ns2,
            Stack::Inet => TcpPreset::Inet,
        })
    }
}

pub(crate) struct Keys;

impl TransportKeys for Keys {
    const LABEL: &'static str = "TCP";
    const CONGESTION_SERIES: u64 = 3;

    fn socket(sc: &Scenario, f: &Flow, cfg: SocketConfig, open: Open, start: SimTime) -> Socket {
        if sc.tcp_preset(f) == TcpPreset::Ns2 {
            Socket::Ns2Tcp(Ns2TcpSocket::new(
                cfg,
                ns2_tcp_config(sc, f, cfg.draw_seed),
                open,
                start,
            ))
        } else {
            Socket::Tcp(TcpSocket::new(
                cfg,
                tcp_config(f.transport, sc.tcp_preset(f), f.tcp.as_ref()),
                open,
                start,
            ))
        }
    }

    fn validate(sc: &Scenario, i: usize, f: &Flow, err: &mut ErrorSink<'_>) {
        if let Some(t) = &f.tcp {
            // With a scenario-wide stack, keys of either TCP model may stay in the file.
            validate_tcp_options(i, t, sc.simulation.stack.is_none() || t.preset.is_some(), err);
        }
        if !f.transport.is_tcp() || sc.tcp_preset(f) != TcpPreset::Ns2 {
            return;
        }
        // The TCP model the flow runs: its own preset, else the stack's.
        let preset_key = if f.tcp.as_ref().is_some_and(|t| t.preset.is_some()) {
            key_path(i, "tcp", "preset")
        } else {
            vec![Seg::Key("simulation".into()), Seg::Key("stack".into())]
        };
        if matches!(
            f.transport,
            Transport::TcpCubic
                | Transport::TcpBbr
                | Transport::TcpBbr3
                | Transport::TcpVegas
                | Transport::TcpWestwoodPlus
        ) {
            let name = f.transport.name();
            err(
                preset_key.clone(),
                format!(
                    "ns-2.35's one-way TCP agents have no {name}: use tpsim's TCP for \"{name}\" (tcp.preset = \"modern\")"
                ),
            );
        }
        if f.app.kind == AppKind::Voip {
            err(
                preset_key,
                "ns-2's TCP agents are one-way: give a two-way application two flows, or use tpsim's TCP".into(),
            );
        }
    }
}

/// Flow `i`'s `tcp` options, checked whatever the transport (they apply only to TCP ones),
/// so that a sweep over `transport` can keep them in the file.
fn validate_tcp_options(i: usize, t: &TcpOptions, check_model: bool, err: &mut ErrorSink<'_>) {
    let ns2 = t.preset == Some(TcpPreset::Ns2);
    let at = |key: &str| key_path(i, "tcp", key);
    for (key, given, for_ns2) in [
        ("packet_size", t.packet_size.is_some(), true),
        ("window", t.window.is_some(), true),
        ("boot_time", t.boot_time.is_some(), true),
        ("mss", t.mss.is_some(), false),
        ("send_buffer", t.send_buffer.is_some(), false),
        ("receive_window", t.receive_window.is_some(), false),
        ("delayed_ack_segments", t.delayed_ack_segments.is_some(), false),
        ("nagle", t.nagle.is_some(), false),
        ("syn_attempts", t.syn_attempts.is_some(), false),
        ("data_retries", t.data_retries.is_some(), false),
        ("syn_rto", t.syn_rto.is_some(), false),
        ("timestamps", t.timestamps.is_some(), false),
        ("window_scaling", t.window_scaling.is_some(), false),
        ("sack", t.sack.is_some(), false),
        ("dsack", t.dsack.is_some(), false),
        ("ecn", t.ecn.is_some(), false),
        ("byte_counting", t.byte_counting.is_some(), false),
        ("pacing", t.pacing.is_some(), false),
    ] {
        if check_model && given && for_ns2 != ns2 {
            let which = if ns2 {
                "the ns2 preset"
            } else {
                "tpsim's TCP (it needs `preset = \"ns2\"`)"
            };
            err(at(key), format!("`{key}` does not apply to {which}"));
        }
    }
    if t.packet_size.is_some_and(|b| !(1..=65495).contains(&b.0)) {
        err(at("packet_size"), "expected a packet size between 1B and 65495B".into());
    }
    if t.window == Some(0) {
        err(at("window"), "expected a window of at least 1 packet".into());
    }
    let tick = Ns2TcpConfig::default().tcp_tick;
    if t.boot_time.is_some_and(|d| d.sim() >= tick) {
        let ms = tick.0 as f64 / 1e6;
        err(
            at("boot_time"),
            format!("expected a phase in [0s, {ms}ms), ns-2's tcpTick_"),
        );
    }

    let pt = |k: &str| {
        vec![
            Seg::Key("flows".into()),
            Seg::Index(i),
            Seg::Key("tcp".into()),
            Seg::Key(k.into()),
        ]
    };
    if let Some(m) = t.mss {
        if !(1..=65495).contains(&m.0) {
            err(
                pt("mss"),
                format!("expected an MSS between 1B and 65495B, found {}B", m.0),
            );
        }
    }
    if let Some(b) = t.send_buffer {
        if b.0 == 0 || b.0 > u32::MAX as u64 {
            err(pt("send_buffer"), "expected a send buffer between 1B and 4GiB".into());
        }
    }
    if let Some(b) = t.receive_window {
        // RFC 7323 §2.3: at most 65 535 · 2^14 with window scaling; without it the buffer may
        // be larger but the advertised window stops at 65 535.
        let max = if t.window_scaling == Some(true) {
            65_535u64 << 14
        } else {
            u32::MAX as u64
        };
        if b.0 == 0 || b.0 > max {
            err(
                pt("receive_window"),
                format!("expected a receive window between 1B and {max}B, found {}B", b.0),
            );
        }
    }
    if t.initial_window == Some(0) {
        err(
            pt("initial_window"),
            "expected an initial window of at least 1 segment".into(),
        );
    }
    if t.delayed_ack_segments == Some(0) {
        err(
            pt("delayed_ack_segments"),
            "expected at least 1 segment per delayed ACK".into(),
        );
    }
    if t.syn_attempts == Some(0) {
        err(pt("syn_attempts"), "expected at least 1 SYN transmission".into());
    }
    if t.syn_rto.is_some_and(|d| d.0 == 0) {
        err(pt("syn_rto"), "expected a timeout greater than 0".into());
    }
}

/// ns-2.35's one-way TCP agent of flow `f` on the ns2 preset: the variant of the transport's
/// name ("tcp" is Agent/TCP/Newreno, as the reference scripts use it) and the scenario's
/// options over ns-2.35's defaults ([`Ns2TcpConfig`]; `packetSize_` the message size under
/// `simulation.ns2_packet_size = "message"`), the clock phase drawn from `draw_seed` unless
/// given.
fn ns2_tcp_config(sc: &Scenario, f: &Flow, draw_seed: u64) -> Ns2TcpConfig {
    let o = f.tcp.as_ref();
    let mut c = Ns2TcpConfig {
        variant: match f.transport {
            Transport::TcpTahoe => Ns2Variant::Tahoe,
            Transport::TcpReno => Ns2Variant::Reno,
            Transport::TcpSack => Ns2Variant::Sack1,
            _ => Ns2Variant::NewReno,
        },
        ..Ns2TcpConfig::default()
    };
    if sc.simulation.ns2_packet_size == Ns2PacketSize::Message {
        if let Some(m) = f.app.size {
            c.packet_size = m.0 as u32;
        }
    }
    if let Some(o) = o {
        if let Some(p) = o.packet_size {
            c.packet_size = p.0 as u32;
        }
        if let Some(w) = o.window {
            c.window = w;
        }
        if let Some(w) = o.initial_window {
            c.window_init = w;
        }
        if let Some(d) = o.delayed_ack {
            c.delayed_ack = (d.0 > 0).then(|| d.sim());
        }
        if let Some(r) = o.min_rto {
            c.min_rto = r.sim();
        }
    }
    // tcp.cc `TcpAgent::reset`: boot_time_ = Random::uniform(tcpTick_).
    c.boot_time = match o.and_then(|o| o.boot_time) {
        Some(d) => d.sim(),
        None => SimDuration((RngStream::from_seed(draw_seed).uniform() * c.tcp_tick.0 as f64) as u64),
    };
    c
}

/// The TCP configuration of a flow: the variant's loss recovery and the scenario's options
/// over the preset's defaults (the RFC's, [`TcpConfig::default`], or INET's,
/// [`TcpConfig::inet`]).
fn tcp_config(t: Transport, preset: TcpPreset, o: Option<&TcpOptions>) -> TcpConfig {
    let inet = preset == TcpPreset::Inet;
    let mut c = TcpConfig {
        recovery: match t {
            Transport::TcpReno => LossRecovery::Reno,
            // INET's `tcpAlgorithmClass` default.
            Transport::Tcp if inet => LossRecovery::Reno,
            Transport::TcpTahoe => LossRecovery::Tahoe,
            Transport::TcpSack => LossRecovery::Sack,
            _ => LossRecovery::NewReno,
        },
        congestion: match t {
            Transport::TcpCubic => CongestionAlgorithm::Cubic,
            Transport::TcpBbr => CongestionAlgorithm::Bbr,
            Transport::TcpBbr3 => CongestionAlgorithm::Bbr3,
            Transport::TcpVegas => CongestionAlgorithm::Vegas,
            Transport::TcpWestwoodPlus => CongestionAlgorithm::WestwoodPlus,
            _ => CongestionAlgorithm::Aimd,
        },
        ..if inet { TcpConfig::inet() } else { TcpConfig::default() }
    };
    if let Some(o) = o {
        if let Some(m) = o.mss {
            c.mss_bytes = Some(m.0 as u32);
        }
        if let Some(b) = o.send_buffer {
            c.send_buffer_bytes = b.0 as u32;
        }
        if let Some(b) = o.receive_window {
            c.recv_buffer_bytes = b.0 as u32;
        }
        if let Some(w) = o.initial_window {
            c.initial_window_segments = Some(w);
        }
        if let Some(d) = o.delayed_ack {
            c.delayed_ack = (d.0 > 0).then(|| d.sim());
        }
        c.delayed_ack_segments = o.delayed_ack_segments;
        if let Some(r) = o.min_rto {
            c.min_rto = r.sim();
        }
        if let Some(n) = o.nagle {
            c.nagle = n;
        }
        c.syn_attempts = o.syn_attempts;
        c.data_retries = o.data_retries;
        c.syn_rto = o.syn_rto.map(|d| d.sim());
        if let Some(ts) = o.timestamps {
            c.timestamps = ts;
        }
        if let Some(w) = o.window_scaling {
            c.window_scaling = w;
        }
        if let Some(s) = o.sack {
            c.sack = s;
        }
        if let Some(d) = o.dsack {
            c.dsack = d;
        }
        if let Some(e) = o.ecn {
            c.ecn = e;
        }
        if let Some(b) = o.byte_counting {
            c.byte_counting = b;
        }
        if let Some(p) = o.pacing {
            c.pacing = p;
        }
    }
    c
}
