//! ns-2.35's one-way TCP agents as a sans-IO transport: `Agent/TCP` (Tahoe), `Agent/TCP/Reno`,
//! `Agent/TCP/Newreno` and `Agent/TCP/Sack1` as the sender, `Agent/TCPSink` (one ACK per
//! packet) and `Agent/TCPSink/DelAck` (delayed ACKs) as the receiver, or their SACK versions
//! `Agent/TCPSink/Sack1` and `/Sack1/DelAck` with `Agent/TCP/Sack1`, so that tpsim can run the
//! reference studies as ns-2 ran them.
//!
//! # What is modelled, and where it comes from
//!
//! The behaviour is ns-2.35's (`tcp/tcp.cc`, `tcp/tcp-reno.cc`, `tcp/tcp-newreno.cc`,
//! `tcp/tcp-sack1.cc`, `tcp/scoreboard-rq.cc`, `tcp/rq.cc`, `tcp/tcp-sink.cc`, `tcp/tcp.h`,
//! `tcp/tcp-sink.h`, defaults from `tcl/lib/ns-default.tcl`),
//! re-implemented from a reading of that source; each rule names the ns-2 function whose
//! behaviour it reproduces. The main traits of these agents, which differ from a real TCP
//! ([`crate::tcp`]):
//!
//! * **Packets, not bytes.** Sequence numbers count packets from 0. Every data packet is
//!   `packetSize_` bytes plus `tcpip_base_hdr_size_` bytes of headers, whatever the
//!   application wrote: a write of `n` bytes adds ⌈n / packetSize_⌉ packets
//!   (`TcpAgent::sendmsg`). The send buffer has no bound.
//! * **A modelled SYN** (`syn_`): packet 0 is a 40-byte SYN, sent with the application's first
//!   write (`TcpAgent::output`); data packets are 1, 2, ... The sink acknowledges it like any
//!   packet. With `delay_growth_`, `cwnd` stays 1 until the SYN is acknowledged, then becomes
//!   `windowInit_` (`TcpAgent::set_initial_window`, `TcpAgent::recv`). If the SYN times out, the
//!   initial window becomes 1 (`TcpAgent::timeout`).
//! * **Windows in packets** (`TcpAgent::opencwnd`, `TcpAgent::window`, `TcpAgent::slowdown`):
//!   slow start adds one packet per new ACK while `cwnd < ssthresh` (initially `window_`),
//!   congestion avoidance `increase_num_ / cwnd` per new ACK (one per ACK, however many
//!   packets it acknowledges); the sender may have packets `ack + 1 ..= ack + min(cwnd,
//!   window_)` outstanding, `cwnd` truncated to an integer. A loss sets `ssthresh =
//!   max(⌊min(cwnd, window_) / 2⌋, 2)`.
//! * **Limited transmit** (`singledup_`, `TcpAgent::send_one`): the first and second duplicate
//!   ACKs each send one new packet if `t_seqno ≤ ack + cwnd + dupacks`.
//! * **Loss recovery**: Tahoe goes back to the first unacknowledged packet with `cwnd = 1`
//!   (`TcpAgent::dupack_action`); Reno retransmits, halves `cwnd`, inflates the window by one
//!   packet per further duplicate ACK and leaves recovery at the first new ACK
//!   (`RenoTcpAgent::recv`, `RenoTcpAgent::dupack_action`); NewReno stays in recovery until
//!   `recover_`, retransmitting the next hole on each partial ACK with partial window deflation
//!   (`NewRenoTcpAgent::recv`, `NewRenoTcpAgent::partialnewack`). With `bugFix_`, a second
//!   fast retransmit needs an ACK above `recover_` (the highest packet sent at the last loss).
//! * **Sack1** (`sack1.rs`; `Sack1TcpAgent::recv`, `dupack_action`, `send_much`, `timeout`):
//!   a duplicate ACK counts only if its SACK blocks change the scoreboard (`ScoreBoardRQ`:
//!   the SACKed packet ranges above the cumulative ACK, `UpdateScoreBoard`/`CheckUpdate`).
//!   The `numdupacks_`-th starts fast recovery: `recover_ = maxseq_`, `pipe_` = packets
//!   outstanding − `numdupacks_`, `ssthresh_` and `cwnd_` halved, the first hole resent. In
//!   recovery every ACK takes one packet out of `pipe_` (a partial ACK two), and `send_much`
//!   sends while `pipe_ < cwnd_`: first the next hole that has a SACKed block above it
//!   (`GetNextRetran`, each hole once), else new data within `window_`. An ACK reaching
//!   `recover_` ends recovery without opening `cwnd_` (`newack`). A timeout leaves recovery,
//!   clears the scoreboard and ignores duplicate ACKs until the next new ACK (`timeout_`).
//!   Outside recovery the window is `TcpAgent::window`'s, as for Tahoe.
//! * **The SACK sink** (`Sacker::append_ack`): an ACK carries up to `maxSackBlocks_` (3)
//!   blocks: first the run of received packets containing the packet just received (if it is
//!   above the cumulative ACK), then the blocks reported before, most recent first, dropping
//!   those the newest covers; none once nothing is missing below the highest packet received.
//!   Each block adds 8 bytes to the 40-byte ACK (`ch->size() += sack_index * 8`).
//! * **The RTT estimator** of `TcpAgent::rtt_update`: samples counted in whole ticks of
//!   `tcpTick_` as a BSD clock would (the ticks between the send and the ACK), smoothed in
//!   integers (`srtt` with 3 fractional bits, `rttvar` with 2), RTO = `srtt + 4·rttvar` ticks;
//!   `TcpAgent::rtt_timeout` bounds it to [`minrto_`, `maxrto_`] (the minimum applied before
//!   the backoff, as RFC 2988 does) and to at least two ticks. One packet is timed at a time
//!   (`rtt_seq_`); a timeout or a fast retransmit abandons the timing (Karn). The first RTO is
//!   `rtxcur_init_` (3 s). Backoff doubles per timeout until the RTO reaches `maxrto_`
//!   (`TcpAgent::rtt_backoff`), and beyond 8 it forgets `srtt` (the next sample restarts the
//!   estimator); a valid sample ends the backoff (`TcpAgent::newack`).
//! * **The retransmission timer** is re-armed by every new ACK, even when nothing is
//!   outstanding (`TcpAgent::newtimer`), and an expiry with nothing outstanding sets `cwnd` to 1
//!   without touching `ssthresh` or the backoff: that is ns-2's slow-start restart
//!   (`slow_start_restart_`, `TcpAgent::timeout`). So the timer of an idle sender fires every
//!   RTO.
//! * **The sinks** (`TcpSink::recv`, `Acker::update`, `DelAckSink::recv`): the ACK carries the
//!   highest in-order packet number; `TCPSink` sends one per packet received (in order, out of
//!   order or duplicate); `DelAck` holds the ACK of an in-order packet for `interval_` unless it
//!   fills a gap or is packet 0, and sends at once when a second packet arrives during the
//!   hold or a packet is out of order.
//!
//! # tpsim's side
//!
//! tpsim applications write messages: a message of `len` bytes becomes ⌈len / packetSize_⌉
//! packets (at least one), its last packet carries the [`Message`] and, as `first_tx`, the time
//! its first packet was first sent. The sink delivers a message
//! ([`TransportEvent::Delivered`]) when it has every packet up to that last one in order, once.
//! Wire headers are TCP ([`TcpRepr`]) so that pcap traces dissect: packet `n` of a connection
//! with a SYN starts at byte `1 + (n − 1)·packetSize_` (the SYN at 0), the ACK field is the
//! first byte of the next packet expected, and a SACK block of packets `[l, r)` is the byte
//! range from the start of packet `l` to the start of packet `r`. Packet sizes are ns-2's own
//! accounting under both size conventions: `packetSize_ + tcpip_base_hdr_size_` for data,
//! `tcpip_base_hdr_size_` for the SYN, the sink's `packetSize_` (40) plus 8 per SACK block for
//! ACKs; the path MTU is not consulted (ns-2 does not fragment).
//!
//! # Not modelled
//!
//! ECN, timestamps (`timestamps_`), Quick-Start, F-RTO, ELN, `overhead_` (random send delays),
//! `maxburst_` (unlimited, as by default; NewReno's fixed burst of 2 in recovery is modelled),
//! window options other than `windowOption_ 1`, `windowInitOption_` 2, `decrease_num_` other
//! than 0.5, `max_ssthresh_`, `numdupacksFrac_`, `newreno_changes_ 1`, `exit_recovery_fix_`,
//! `noFastRetrans_`, `max_connects_`, and the application callbacks (`idle`, `finish`); for
//! Sack1, `partial_ack_` (0 by default), `LimTransmitFix_`, `oldCode_`, D-SACK
//! (`generateDSacks_`), SACK-based F-RTO, and the sink's pairing with other senders (the sink
//! sends SACK blocks exactly when the variant is Sack1). A reordered old ACK can carry SACK
//! blocks below the cumulative ACK; ns-2's reassembly queue then moves the scoreboard's left
//! edge (`sack_min`) back and may resend an acknowledged packet; tpsim keeps the edge. When duplicate ACKs of the last packet written trigger Reno's or NewReno's fast
//! retransmit, ns-2 sends packet `last_ack_ + 1` although the application never produced it;
//! tpsim applies the window cut but sends nothing (the packet number belongs to the next
//! message). ns-2 draws `boot_time_`, the phase of the sender's tick clock, at random
//! (`Random::uniform(tcpTick_)`, in `TcpAgent::reset`, which also runs during the run); here it
//! is [`Ns2TcpConfig::boot_time`] (0 by default; a scenario draws it per flow and run from the
//! same distribution), and the tick arithmetic is exact where ns-2
//! computes in doubles (a sample that is an exact multiple of the tick can count one tick less
//! in ns-2).
//!
//! `link_tests.rs` checks the agents against ns-2.35 itself: study D's two flows over a
//! DropTail link (`benches/ns2/study_d_sack1.tcl`), with the phases ns-2 drew, give ns-2's
//! packet counts, delays and ACK sizes exactly.

mod acks;
#[cfg(test)]
mod link_tests;
#[cfg(test)]
mod pair_tests;
mod sack1;
mod sender;
mod sink;
#[cfg(test)]
mod tests;

use crate::tcp::Open;
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent, TransportReport, TransportStats};
use std::collections::{BTreeMap, VecDeque};
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::{TcpFlags, TcpRepr};

/// Which `Agent/TCP` class the sender is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ns2Variant {
    /// `Agent/TCP`: fast retransmit, then slow start from `cwnd = 1` (go-back-N).
    Tahoe,
    /// `Agent/TCP/Reno`: fast retransmit and fast recovery, left at the first new ACK.
    Reno,
    /// `Agent/TCP/Newreno`: fast recovery lasts until every packet outstanding at the loss is
    /// acknowledged; partial ACKs retransmit the next hole.
    #[default]
    NewReno,
    /// `Agent/TCP/Sack1`, paired with `Agent/TCPSink/Sack1` (or `/Sack1/DelAck`): the sink's
    /// ACKs carry SACK blocks, the sender keeps a scoreboard and, in fast recovery, sends the
    /// holes and then new data while its estimate of the packets in flight (`pipe_`) is below
    /// `cwnd`.
    Sack1,
}

/// The parameters of an ns-2.35 one-way TCP pair. Each field names its Tcl variable;
/// `Default` gives ns-2.35's defaults (`tcl/lib/ns-default.tcl`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ns2TcpConfig {
    /// The sender's class. Default [`Ns2Variant::NewReno`].
    pub variant: Ns2Variant,
    /// `packetSize_`: bytes of every data packet above the headers, whatever the application
    /// wrote. Default 1000.
    pub packet_size: u32,
    /// `tcpip_base_hdr_size_`: TCP/IP header bytes added to each data packet; the size of the
    /// SYN. Default 40.
    pub header_size: u32,
    /// `Agent/TCPSink packetSize_`: size of each ACK without SACK blocks, bytes. Default 40.
    pub ack_size: u32,
    /// `Agent/TCPSink maxSackBlocks_`: the most SACK blocks an ACK of the SACK sink carries
    /// (with [`Ns2Variant::Sack1`]); ns-2's header has room for 3 (`NSA`), more are taken as
    /// 3. Each block adds 8 bytes to the ACK (`Sacker::append_ack`). Default 3.
    pub max_sack_blocks: u32,
    /// `window_`: the receiver's advertised window and the sender's largest window, packets.
    /// Default 20.
    pub window: u32,
    /// `windowInit_` (with `windowInitOption_ 1`): `cwnd` once the SYN is acknowledged (or at
    /// the start, without `syn_` or `delay_growth_`), packets. Default 2.
    pub window_init: u32,
    /// `maxcwnd_`: upper bound of `cwnd`, packets; 0 for none. Default 0.
    pub max_cwnd: u32,
    /// `syn_`: send a 40-byte SYN (packet 0) before the data. Default true.
    pub syn: bool,
    /// `delay_growth_`: keep `cwnd` at 1 until packet 0 (the SYN) is acknowledged. Default
    /// true.
    pub delay_growth: bool,
    /// `numdupacks_`: duplicate ACKs that trigger a fast retransmit. Default 3.
    pub numdupacks: u32,
    /// `singledup_`: send one new packet on each of the first `numdupacks_ − 1` duplicate ACKs
    /// (limited transmit, `TcpAgent::send_one`). Default true (1).
    pub singledup: bool,
    /// `slow_start_restart_`: a retransmission timeout with nothing outstanding (the timer
    /// keeps running while the sender is idle) sets `cwnd` to 1. Default true.
    pub slow_start_restart: bool,
    /// `restart_bugfix_`: such an idle timeout neither halves `ssthresh` nor backs the timer
    /// off. Default true.
    pub restart_bugfix: bool,
    /// `bugFix_`: no second fast retransmit until an ACK passes `recover_` (the highest packet
    /// sent when the last loss was detected). Default true.
    pub bug_fix: bool,
    /// `bugfix_ss_`: allow a fast retransmit when only the SYN is acknowledged (the first data
    /// packet lost), and a first timeout before anything was acknowledged drops the initial
    /// window to 1. Default true (1).
    pub bugfix_ss: bool,
    /// `increase_num_` (with `windowOption_ 1`): congestion avoidance adds `increase_num_ /
    /// cwnd` per new ACK. Default 1.0.
    pub increase_num: f64,
    /// `tcpTick_`: the granularity of the RTT estimator's clock. Default 0.01 s.
    pub tcp_tick: SimDuration,
    /// `minrto_`: lower bound of the RTO, before backoff. Default 0.2 s.
    pub min_rto: SimDuration,
    /// `maxrto_`: upper bound of the backed-off RTO. Default 60 s.
    pub max_rto: SimDuration,
    /// `rtxcur_init_`: the RTO before the first RTT sample. Default 3 s.
    pub rtxcur_init: SimDuration,
    /// `srtt_init_`: the initial smoothed RTT; 0 means "no estimate" (the first sample sets
    /// it). Default 0.
    pub srtt_init: SimDuration,
    /// `rttvar_init_`: the initial RTT variation (overwritten by the first sample when
    /// `srtt_init_` is 0). Default 12 s.
    pub rttvar_init: SimDuration,
    /// `boot_time_`: where between two ticks of `tcpTick_` the sender's clock started. ns-2
    /// draws it uniformly in [0, `tcpTick_`) (`TcpAgent::reset`); tpsim takes it from here to
    /// stay deterministic. Default 0.
    pub boot_time: SimDuration,
    /// `partial_window_deflation_` (NewReno): a partial ACK deflates the inflated window by the
    /// packets it acknowledges, less one. Default true (1).
    pub partial_window_deflation: bool,
    /// `newreno_changes1_` (NewReno): only the first partial ACK of a recovery restarts the
    /// retransmission timer (RFC 2582's "impatient" variant); false restarts it on each.
    /// Default true (1).
    pub newreno_changes1: bool,
    /// `Agent/TCPSink/DelAck`'s `interval_`: the receiver delays ACKs at most this long.
    /// `None`: `Agent/TCPSink`, one ACK per packet. Default `None`; DelAck's default interval
    /// is 100 ms ([`Ns2TcpConfig::DELACK_INTERVAL`]).
    pub delayed_ack: Option<SimDuration>,
}

impl Ns2TcpConfig {
    /// `Agent/TCPSink/DelAck set interval_ 100ms`.
    pub const DELACK_INTERVAL: SimDuration = SimDuration::from_millis(100);

    /// Whether the sink is `Agent/TCPSink/Sack1` (or `/Sack1/DelAck`): with
    /// [`Ns2Variant::Sack1`], the sender that needs its blocks.
    pub fn sack_sink(&self) -> bool {
        self.variant == Ns2Variant::Sack1
    }

    /// The SACK blocks per ACK of a SACK sink: `maxSackBlocks_` clamped to `NSA` (3).
    fn sack_blocks(&self) -> usize {
        self.max_sack_blocks.min(sack1::NSA) as usize
    }
}

/// ns-2.35's default `packetSize_` of Agent/TCP and Agent/TFRC (`tcp.cc`, `tfrc.cc`), bytes.
pub const NS2_PACKET_SIZE: u32 = 1000;

impl Default for Ns2TcpConfig {
    fn default() -> Self {
        Ns2TcpConfig {
            variant: Ns2Variant::NewReno,
            packet_size: NS2_PACKET_SIZE,
            header_size: 40,
            ack_size: 40,
            max_sack_blocks: 3,
            window: 20,
            window_init: 2,
            max_cwnd: 0,
            syn: true,
            delay_growth: true,
            numdupacks: 3,
            singledup: true,
            slow_start_restart: true,
            restart_bugfix: true,
            bug_fix: true,
            bugfix_ss: true,
            increase_num: 1.0,
            tcp_tick: SimDuration::from_millis(10),
            min_rto: SimDuration::from_millis(200),
            max_rto: SimDuration::from_secs(60),
            rtxcur_init: SimDuration::from_secs(3),
            srtt_init: SimDuration::ZERO,
            rttvar_init: SimDuration::from_secs(12),
            boot_time: SimDuration::ZERO,
            partial_window_deflation: true,
            newreno_changes1: true,
            delayed_ack: None,
        }
    }
}

/// Fractional bits of the smoothed RTT and of the RTT variation (`T_SRTT_BITS`,
/// `T_RTTVAR_BITS`), and the weight of the variation in the RTO (`rttvar_exp_`): ns-2's
/// defaults, fixed here.
const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
const RTTVAR_EXP: u32 = 2;

/// Where a packet starts in the 64-bit byte numbering of the wire headers: the SYN at 0, data
/// packet `n` at `1 + (n − first data packet)·packetSize_`.
fn pkt_pos(ns2: &Ns2TcpConfig, n: i64) -> u64 {
    let size = ns2.packet_size.max(1) as u64;
    if ns2.syn {
        if n <= 0 {
            0
        } else {
            1 + (n as u64 - 1) * size
        }
    } else {
        1 + n.max(0) as u64 * size
    }
}

/// The packet starting at (or containing) byte `pos`: the inverse of [`pkt_pos`].
fn pos_pkt(ns2: &Ns2TcpConfig, pos: u64) -> i64 {
    let size = ns2.packet_size.max(1) as u64;
    if ns2.syn {
        if pos == 0 {
            0
        } else {
            ((pos - 1) / size) as i64 + 1
        }
    } else {
        (pos.saturating_sub(1) / size) as i64
    }
}

/// The 64-bit number whose low 32 bits are `wire` and which is nearest to `reference`.
fn unwrap(wire: u32, reference: u64) -> u64 {
    const SPAN: u64 = 1 << 32;
    let base = reference & !(SPAN - 1);
    let mut best = base | wire as u64;
    for cand in [best.checked_sub(SPAN), best.checked_add(SPAN)].into_iter().flatten() {
        if cand.abs_diff(reference) < best.abs_diff(reference) {
            best = cand;
        }
    }
    best
}

/// The window field of our headers: the advertised window in bytes, as far as 16 bits go.
fn wire_window(ns2: &Ns2TcpConfig) -> u16 {
    (ns2.window as u64 * ns2.packet_size as u64).min(u16::MAX as u64) as u16
}

/// `last_cwnd_action_`: the last congestion response (`CWND_ACTION_*` of tcp.h; ECN is not
/// modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CwndAction {
    None,
    Dupack,
    Timeout,
    Exited,
}

/// `slowdown`'s choices of new `cwnd` (the `CLOSE_CWND_*` flags used by these agents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CwndCut {
    /// `CLOSE_CWND_HALF`: half the (inflated) window, fractional.
    Half,
    /// `CLOSE_CWND_RESTART`: `wnd_restart_`, which is 1.
    Restart,
    /// `CLOSE_CWND_ONE`.
    One,
}

/// An application message, as packets `first..=last`.
#[derive(Clone, Copy, Debug)]
struct MsgRec {
    msg: Message,
    first: i64,
    last: i64,
    /// When packet `first` was first sent.
    first_tx: Option<SimTime>,
}

/// The sending agent (`Agent/TCP`, `/Reno`, `/Newreno`). Field names follow tcp.h.
#[derive(Debug)]
struct Sender {
    /// `t_seqno_`: the next packet to send.
    t_seqno: i64,
    /// `curseq_`: one past the last packet the application produced (the SYN included once
    /// it is sent).
    curseq: i64,
    /// The number the next message's first packet gets.
    next_pkt: i64,
    /// `highest_ack_`, `last_ack_` (they differ only transiently in ns-2; both kept).
    highest_ack: i64,
    last_ack: i64,
    /// `maxseq_`: the highest packet sent.
    maxseq: i64,
    /// `recover_`: `maxseq_` at the last loss response.
    recover: i64,
    /// `cwnd_`, packets (fractional in congestion avoidance).
    cwnd: f64,
    /// `ssthresh_`, packets.
    ssthresh: i64,
    /// `wnd_init_`, which a timeout before any ACK lowers to 1.
    wnd_init: u32,
    /// `dupacks_`.
    dupacks: u32,
    /// `dupwnd_` (Reno, NewReno): the fast-recovery inflation, packets.
    dupwnd: u32,
    last_cwnd_action: CwndAction,
    /// NewReno `firstpartial_`.
    firstpartial: bool,
    /// Sack1 `fastrecov_`: in fast recovery.
    fastrecov: bool,
    /// Sack1 `timeout_`: the timer expired since the last new ACK (duplicates are ignored).
    after_timeout: bool,
    /// Sack1 `pipe_`: the estimate of packets in the network during fast recovery.
    pipe: i64,
    /// Sack1's scoreboard (`scb_`).
    scb: sack1::ScoreBoard,
    /// `rtt_active_`, `rtt_seq_`, `rtt_ts_`: the packet being timed.
    rtt_active: bool,
    rtt_seq: i64,
    rtt_ts: SimTime,
    /// `t_srtt_` (ticks << 3), `t_rttvar_` (ticks << 2).
    t_srtt: i64,
    t_rttvar: i64,
    /// `t_rtxcur_`: the RTO before bounds and backoff.
    t_rtxcur: SimDuration,
    /// `t_backoff_`.
    t_backoff: u64,
    /// The retransmission timer's deadline (`rtx_timer_`).
    rtx_at: Option<SimTime>,
    msgs: VecDeque<MsgRec>,
    timeouts: u64,
    fast_retransmits: u64,
    rtt_samples: u64,
    rtt_sum_ns: u64,
    padding_bytes: u64,
}

/// The receiving agent (`Agent/TCPSink`, `/DelAck`).
#[derive(Debug)]
struct Sink {
    /// `Acker::next_`: the next packet expected in order.
    next: i64,
    /// `Acker::maxseen_` (starts at 0, as in ns-2).
    maxseen: i64,
    /// Packets received above `next`, with the message each one ends.
    above: BTreeMap<i64, Option<(Message, SimTime)>>,
    /// DelAck's `delay_timer_` deadline, and the packet whose ACK is held (`save_`).
    delack_at: Option<SimTime>,
    held: Option<i64>,
    /// `Acker::is_dup_`: the last packet received had arrived before.
    is_dup: bool,
    /// The SACK sink's `SackStack`.
    history: sack1::SackHistory,
    events: VecDeque<TransportEvent>,
}

#[derive(Debug)]
enum Role {
    Sender(Box<Sender>),
    Sink(Sink),
}

/// One end of an ns-2.35 one-way TCP pair: the sender ([`Open::Active`]) sends the SYN and
/// data and never acknowledges; the sink ([`Open::Passive`]) only acknowledges. The surface is
/// every tpsim transport's (see the crate docs).
#[derive(Debug)]
pub struct Ns2TcpSocket {
    cfg: SocketConfig,
    ns2: Ns2TcpConfig,
    role: Role,
    out: VecDeque<Segment>,
    stats: TransportStats,
}

impl Ns2TcpSocket {
    /// A new endpoint: the sender for [`Open::Active`], the sink for [`Open::Passive`]. The
    /// sender sends its SYN with the application's first write (`TcpAgent::output`), not
    /// before.
    pub fn new(cfg: SocketConfig, ns2: Ns2TcpConfig, open: Open, _now: SimTime) -> Self {
        let role = match open {
            Open::Active => Role::Sender(Box::new(Sender::new(&ns2))),
            Open::Passive => Role::Sink(Sink {
                next: 0,
                maxseen: 0,
                above: BTreeMap::new(),
                delack_at: None,
                held: None,
                is_dup: false,
                history: sack1::SackHistory::default(),
                events: VecDeque::new(),
            }),
        };
        Ns2TcpSocket {
            cfg,
            ns2,
            role,
            out: VecDeque::new(),
            stats: TransportStats::default(),
        }
    }

    /// Whether this is the sending end.
    pub fn is_sender(&self) -> bool {
        matches!(self.role, Role::Sender(_))
    }

    /// The ns-2 parameters.
    pub fn config(&self) -> &Ns2TcpConfig {
        &self.ns2
    }

    /// Hands a message to the sender: ⌈len / packetSize_⌉ packets (at least one) join the
    /// unbounded send buffer, and as many go out as the window allows (`TcpAgent::sendmsg`).
    ///
    /// # Errors
    /// [`SendError::BufferFull`] on the sink, which never sends data.
    pub fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError> {
        let Role::Sender(s) = &mut self.role else {
            return Err(SendError::BufferFull);
        };
        let size = self.ns2.packet_size.max(1);
        let npkts = (msg.len.div_ceil(size)).max(1) as i64;
        let first = s.next_pkt;
        s.next_pkt += npkts;
        s.msgs.push_back(MsgRec {
            msg,
            first,
            last: first + npkts - 1,
            first_tx: None,
        });
        // ns-2 counts the SYN among the produced packets once it is sent (`output`); it is
        // sent within this very call, so counting it now changes nothing.
        s.curseq = s.next_pkt;
        let mut io = Io {
            cfg: &self.cfg,
            ns2: &self.ns2,
            out: &mut self.out,
            stats: &mut self.stats,
        };
        s.send_much(&mut io, now, 0);
        Ok(())
    }

    /// Whether a bulk application should write more: the buffer has no bound, but a sender
    /// with more than `window_` packets never sent cannot be short of data for its next
    /// window, so the application waits (ns-2's FTP has an infinite supply instead). Always
    /// false on the sink.
    pub fn can_send(&self, _len: u32) -> bool {
        match &self.role {
            Role::Sender(s) => s.unsent(&self.ns2) <= self.ns2.window as i64,
            Role::Sink(_) => false,
        }
    }

    /// Processes a segment: ACKs at the sender, data and the SYN at the sink; anything else is
    /// ignored.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        let L4Header::Tcp(h) = seg.header else {
            return;
        };
        let mut io = Io {
            cfg: &self.cfg,
            ns2: &self.ns2,
            out: &mut self.out,
            stats: &mut self.stats,
        };
        match &mut self.role {
            Role::Sender(s) => {
                if seg.payload_len > 0 || h.flags.contains(TcpFlags::SYN) || !h.flags.contains(TcpFlags::ACK) {
                    return;
                }
                io.stats.acks_received += 1;
                let reference = pkt_pos(io.ns2, s.highest_ack + 1);
                let ackno = pos_pkt(io.ns2, unwrap(h.ack, reference)) - 1;
                // SACK blocks as packet ranges [left, right): the positions of the first
                // packet of the block and of the packet after it.
                let mut sacks = [(0i64, 0i64); tpsim_wire::tcp::SackBlocks::MAX];
                let n = h.sack.len();
                for (b, &(l, r)) in sacks.iter_mut().zip(h.sack.as_slice()) {
                    *b = (
                        pos_pkt(io.ns2, unwrap(l, reference)),
                        pos_pkt(io.ns2, unwrap(r, reference)),
                    );
                }
                s.recv(&mut io, now, ackno, &sacks[..n]);
            }
            Role::Sink(k) => {
                let seqno = if h.flags.contains(TcpFlags::SYN) {
                    if !io.ns2.syn {
                        return;
                    }
                    0
                } else if seg.payload_len > 0 {
                    let reference = pkt_pos(io.ns2, k.next);
                    let n = pos_pkt(io.ns2, unwrap(h.seq, reference));
                    if io.ns2.syn && n == 0 {
                        return;
                    }
                    n
                } else {
                    return;
                };
                let ends = seg.message.map(|m| (m, seg.first_tx));
                k.recv(&mut io, now, seqno, ends);
            }
        }
    }

    /// The retransmission timer (sender) or the delayed-ACK timer (sink) expires if due; safe
    /// to call at any time.
    pub fn on_timeout(&mut self, now: SimTime) {
        let mut io = Io {
            cfg: &self.cfg,
            ns2: &self.ns2,
            out: &mut self.out,
            stats: &mut self.stats,
        };
        match &mut self.role {
            Role::Sender(s) => {
                if s.rtx_at.is_some_and(|t| t <= now) {
                    s.rtx_at = None;
                    s.timeout(&mut io, now);
                }
            }
            Role::Sink(k) => {
                if k.delack_at.is_some_and(|t| t <= now) {
                    k.delack_at = None;
                    // `DelAckSink::timeout`: acknowledge what has arrived.
                    if let Some(seqno) = k.held.take() {
                        k.ack(&mut io, now, seqno);
                    }
                }
            }
        }
    }

    /// The next segment to send (they are produced by the call that caused them, at its time).
    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<Segment> {
        self.out.pop_front()
    }

    /// The next delivered message (sink only).
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        match &mut self.role {
            Role::Sink(k) => k.events.pop_front(),
            Role::Sender(_) => None,
        }
    }

    /// The next deadline: the retransmission timer, which runs from the first packet sent to
    /// the end (ns-2 re-arms it on every new ACK), or the delayed-ACK timer.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match &self.role {
            Role::Sender(s) => s.rtx_at,
            Role::Sink(k) => k.delack_at,
        }
    }

    /// Counters: segments sent (SYN and data, or ACKs), received, retransmitted, and ACKs sent.
    pub fn stats(&self) -> TransportStats {
        self.stats
    }

    /// What the endpoint reports to the metrics. The sender: timeouts with something
    /// outstanding (ns-2's `nrexmit_`), fast retransmits, RTT samples (the times between
    /// sending the timed packet and its ACK, before tick rounding), the RTO without backoff,
    /// the congestion series `cwnd_packets` (without Reno's inflation), `ssthresh_packets` and
    /// `srtt_s` (`None` without an estimate), and `padding_bytes`: the bytes of data packets
    /// sent (retransmissions included) beyond the application bytes they carry. The sink: its
    /// ACKs, as `ack_segments`.
    pub fn report(&self) -> TransportReport {
        match &self.role {
            Role::Sender(s) => TransportReport {
                stats: self.stats,
                rtt_samples: s.rtt_samples,
                rtt_sum_ns: s.rtt_sum_ns,
                timeouts: s.timeouts,
                fast_retransmits: s.fast_retransmits,
                rto: Some(s.timeout_with(&self.ns2, 1)),
                gave_up: false,
                congestion: vec![
                    ("cwnd_packets", Some(s.cwnd)),
                    ("ssthresh_packets", Some(s.ssthresh as f64)),
                    ("srtt_s", s.srtt(&self.ns2).map(|d| d.as_secs_f64())),
                ],
                extra: vec![("padding_bytes", Some(s.padding_bytes as f64))],
                rx_extra: Vec::new(),
            },
            Role::Sink(_) => TransportReport {
                stats: self.stats,
                ..TransportReport::default()
            },
        }
    }

    /// Messages accepted none of whose packets has been sent yet (0 at the sink).
    pub fn buffered_messages(&self) -> u64 {
        match &self.role {
            Role::Sender(s) => {
                let sent = s.msgs.partition_point(|m| m.first <= s.maxseq);
                (s.msgs.len() - sent) as u64
            }
            Role::Sink(_) => 0,
        }
    }

    /// No effect: ns-2's one-way agents never close.
    pub fn close(&mut self, _now: SimTime) {}

    /// The sender's `cwnd_`, packets (`None` at the sink).
    pub fn cwnd(&self) -> Option<f64> {
        self.sender().map(|s| s.cwnd)
    }

    /// The sender's `ssthresh_`, packets.
    pub fn ssthresh(&self) -> Option<i64> {
        self.sender().map(|s| s.ssthresh)
    }

    /// The sender's current RTO, backoff included (`TcpAgent::rtt_timeout`).
    pub fn rto(&self) -> Option<SimDuration> {
        self.sender().map(|s| s.timeout_with(&self.ns2, s.t_backoff))
    }

    /// The sender's smoothed RTT, whole ticks (`None` without an estimate).
    pub fn srtt(&self) -> Option<SimDuration> {
        self.sender().and_then(|s| s.srtt(&self.ns2))
    }

    /// The sender's backoff multiplier (`t_backoff_`).
    pub fn backoff(&self) -> Option<u64> {
        self.sender().map(|s| s.t_backoff)
    }

    /// The highest packet acknowledged (sender) or received in order (sink); −1 for none.
    pub fn highest_ack(&self) -> i64 {
        match &self.role {
            Role::Sender(s) => s.highest_ack,
            Role::Sink(k) => k.next - 1,
        }
    }

    fn sender(&self) -> Option<&Sender> {
        match &self.role {
            Role::Sender(s) => Some(s),
            Role::Sink(_) => None,
        }
    }
}

/// What an agent needs to emit packets.
struct Io<'a> {
    cfg: &'a SocketConfig,
    ns2: &'a Ns2TcpConfig,
    out: &'a mut VecDeque<Segment>,
    stats: &'a mut TransportStats,
}
