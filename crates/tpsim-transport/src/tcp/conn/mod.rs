//! The TCP connection: [`TcpSocket`].
//!
//! Method kinds follow quinn-proto: getters; `on_*` for network and timer input; `send`/`close`
//! for the application; `poll_*` for outputs, polled in the order `poll_transmit` (until
//! `None`), `poll_event`, `poll_timeout` after every input.
//!
//! Variable names are the RFCs' (`snd_una`, `snd_nxt`, `rcv_nxt`, `cwnd`, `ssthresh`, ...). All
//! sequence variables are `u64` offsets from the initial sequence number of their direction
//! (see [`seqspace`](super::seqspace)); `snd_max` is one past the highest offset ever sent
//! (BSD's name), which `snd_nxt` falls back from after a timeout (go-back-N).

use super::cc::{AnyController, CcContext, CongestionAlgorithm, CongestionEvent, Window};
use super::rtt::RttEstimator;
use super::sack::{NextSeg, SackHistory, Scoreboard};
use super::seqspace::{Assembler, SeqSpace};
use super::timer::{Timer, TimerTable};
use super::{LossRecovery, Open, State, TcpConfig, TcpStats};
use crate::{L4Header, Message, Segment, SendError, SocketConfig, StreamData, TransportEvent, TransportStats};
use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::tcp::{SackBlocks, MAX_WINDOW_SHIFT};
use tpsim_wire::{TcpFlags, TcpRepr, TcpTimestamp, IPV4_HEADER_LEN, TCP_HEADER_LEN};

mod model;
mod recv;
mod send;
mod timers;

/// MSS assumed when the peer's SYN carries no MSS option, bytes (RFC 9293 §3.7.1).
const DEFAULT_PEER_MSS: u32 = 536;
/// Largest window an unscaled TCP header carries, bytes (RFC 9293 §3.1).
const MAX_WINDOW: u64 = 65_535;

/// How a segment is being sent (for the RTO and RTT bookkeeping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Emit {
    /// New data, a go-back-N resend, a SYN, a FIN or a pure ACK.
    Normal,
    /// Fast retransmit, NewReno partial-ACK retransmission of the segment at `snd_una`, or a
    /// retransmission chosen by RFC 6675's NextSeg.
    Retransmit,
    /// A one-octet zero-window probe: does not advance `snd_nxt` nor start the RTO timer.
    Probe,
}

/// A TCP endpoint of one connection (RFC 9293), with Tahoe/Reno/NewReno congestion control.
///
/// Created by [`TcpSocket::new`] for an active open (it sends its SYN at once) or a passive
/// open (it accepts the first SYN). See the [module docs](super) for what is and is not
/// implemented.
#[derive(Debug)]
pub struct TcpSocket {
    cfg: SocketConfig,
    tcp: TcpConfig,
    state: State,

    // ---- send side: offsets in our sequence space (0 = our SYN) ----
    snd: SeqSpace,
    /// Oldest unacknowledged offset.
    snd_una: u64,
    /// Next offset to send.
    snd_nxt: u64,
    /// One past the highest offset ever sent.
    snd_max: u64,
    /// Peer's receive window `rwnd`, bytes, from the last window update.
    snd_wnd: u64,
    /// Peer sequence offset and our ack offset of the last window update (RFC 9293 §3.10.7.4).
    snd_wl1: u64,
    snd_wl2: u64,
    /// Largest window the peer ever advertised, bytes (sender SWS avoidance).
    max_snd_wnd: u64,
    /// Window field of the last acceptable ACK, bytes (duplicate-ACK rule (e), RFC 5681 §2).
    last_ack_window: u64,
    /// Stream bytes handed over by the application.
    app_end: u64,
    /// The application closed (or will close): a FIN follows the last byte.
    closing: bool,
    /// MSS we announce and accept, bytes.
    own_mss: u32,
    /// SMSS: the MSS both directions use, min(own, peer's), bytes.
    mss: u32,

    // ---- options (RFC 7323 §2, RFC 2018) ----
    /// Both SYNs carried the Window Scale option (RFC 7323 §2.2).
    wscale_ok: bool,
    /// Shift of the windows the peer sends us (its shift.cnt, at most 14).
    snd_shift: u8,
    /// Shift of the windows we send (ours, from the receive buffer).
    rcv_shift: u8,
    /// Both SYNs carried SACK-permitted (RFC 2018 §2).
    sack_ok: bool,
    // ---- ECN (RFC 3168 §6.1) ----
    /// Both ends negotiated ECN in their SYNs (§6.1.1).
    ecn_ok: bool,
    /// Receiver: a CE-marked segment arrived and no CWR since: every ACK carries ECE (§6.1.3).
    ece_pending: bool,
    /// Sender: the window was reduced for an ECE: the next new data segment carries CWR (§6.1.2).
    cwr_pending: bool,
    /// Sender: snd_max at the last window reduction, for an ECE or a loss; an ECE reduces the
    /// window again only on an ACK beyond it (once per window of data, §6.1.2).
    ecn_recover: u64,
    /// Loss recovery in use: the configured one, or what it falls back to without SACK.
    recovery: LossRecovery,
    /// RFC 6675 scoreboard (sender side; used with `recovery == Sack`).
    sb: Scoreboard,
    /// RFC 2018 §4 block order (receiver side).
    sack_hist: SackHistory,

    // ---- congestion control and loss recovery ----
    cwnd: u64,
    ssthresh: u64,
    dup_acks: u32,
    /// One past the highest offset sent when fast retransmit or the last timeout happened
    /// (RFC 6582 calls the highest offset itself `recover`; RFC 6675 RecoveryPoint).
    recover: u64,
    in_recovery: bool,
    partial_acks_in_recovery: u32,
    /// `cwnd` to use when fast recovery ends, as the controller returned it.
    recovery_cwnd: u64,
    /// In the slow start that follows a timeout (RFC 3465's L = 1·SMSS).
    after_timeout: bool,
    /// `snd_una` when the retransmission timer last fired (RFC 5681 §3.1: ssthresh only once).
    last_rto_una: Option<u64>,
    cc: AnyController,
    /// `cc` wants an [`AckEvent`](super::cc::AckEvent) after every ACK.
    ack_events: bool,
    /// Delivery-rate estimation, when `cc` needs its samples.
    rate: Option<super::rate::RateEstimator>,
    /// The RTT sample the ACK being processed gave.
    ack_rtt: Option<SimDuration>,
    /// The smallest RTT sample so far.
    min_rtt: Option<SimDuration>,
    /// Data segments are paced (by the controller or `TcpConfig::pacing`).
    paced: bool,
    /// With pacing: when the next data segment is due on the pacing schedule.
    next_send: SimTime,
    /// With pacing: how far ahead of the schedule a segment may leave (one send quantum less
    /// a segment).
    pacing_slack: SimDuration,
    /// With pacing: ns per byte at the pacing rate (0 while there is none).
    pacing_ns_per_byte: f64,
    rtt: RttEstimator,
    /// The segment being timed: (offset one past its end, time sent). RFC 6298 §3.
    rtt_timing: Option<(u64, SimTime)>,
    /// Both SYNs carried the timestamps option (RFC 7323 §3.2): every segment carries it and
    /// RTT samples come from its echo (§4.1) instead of `rtt_timing`.
    ts_enabled: bool,
    /// TS.Recent (RFC 7323 §4.3): the peer's TSval we echo.
    ts_recent: u32,
    /// Last.ACK.sent (RFC 7323 §4.3): `rcv_nxt` in the last ACK we sent (offset).
    last_ack_sent: u64,
    rexmit_pending: bool,
    probe_pending: bool,
    persist_backoffs: u32,
    /// Our SYN (or SYN-ACK) was sent more than once.
    syn_retransmitted: bool,
    /// The retransmission timer expired while waiting for the ACK of our SYN.
    syn_timed_out: bool,
    /// Transmissions of our SYN (or SYN-ACK) so far.
    syn_sent: u32,
    /// Retransmission-timer expiries since new data was last acknowledged.
    rtos_in_a_row: u32,
    last_data_tx: Option<SimTime>,
    /// Stream end offsets of accepted messages not yet transmitted in full.
    msg_ends: VecDeque<u64>,

    // ---- receive side: offsets in the peer's sequence space (0 = peer's SYN) ----
    rcv: SeqSpace,
    rcv_nxt: u64,
    /// Offset of the peer's FIN, once a FIN was accepted.
    rcv_fin: Option<u64>,
    fin_received: bool,
    ooo: Assembler,
    /// Stream bytes the application has read (and been told about).
    rcv_read: u64,
    read_paused: bool,
    /// An ACK must go out now.
    ack_now: bool,
    /// In-order bytes received since the last ACK we sent.
    unacked_bytes: u64,
    /// In-order data segments received since the last ACK we sent
    /// ([`TcpConfig::delayed_ack_segments`]).
    unacked_segments: u32,
    /// Right edge of the window we last advertised (offset).
    last_adv_edge: u64,

    /// A reset to send from CLOSED (RFC 9293 §3.10.7.1).
    rst_pending: Option<TcpRepr>,
    timers: TimerTable,
    events: VecDeque<TransportEvent>,
    closed_reported: bool,
    stats: TransportStats,
    tcp_stats: TcpStats,
}

impl TcpSocket {
    /// A socket on a path of `cfg.mtu` bytes. An active open sends its SYN at `now` (the
    /// retransmission timer starts then; the SYN comes out of the next
    /// [`poll_transmit`](Self::poll_transmit)); a passive open waits for a SYN.
    pub fn new(cfg: SocketConfig, tcp: TcpConfig, open: Open, now: SimTime) -> Self {
        let cc = tcp.congestion.build(tcp.byte_counting, cfg.draw_seed);
        Self::with_controller(cfg, tcp, open, now, cc)
    }

    /// Like [`new`](Self::new), with a given congestion controller (e.g.
    /// [`AnyController::Custom`]) instead of the one `tcp.congestion` names.
    pub fn with_controller(cfg: SocketConfig, tcp: TcpConfig, open: Open, now: SimTime, cc: AnyController) -> Self {
        let path_mss = cfg.mtu.saturating_sub(IPV4_HEADER_LEN + TCP_HEADER_LEN);
        let own_mss = tcp
            .mss_bytes
            .map_or(path_mss, |m| m.min(path_mss))
            .clamp(1, u16::MAX as u32);
        let rtt = RttEstimator::new(tcp.initial_rto, tcp.min_rto, tcp.max_rto, tcp.clock_granularity);
        // RFC 7323 §2.3: the smallest shift that lets the 16-bit field cover the buffer.
        let mut rcv_shift = 0u8;
        while rcv_shift < MAX_WINDOW_SHIFT && (tcp.recv_buffer_bytes as u64 >> rcv_shift) > MAX_WINDOW {
            rcv_shift += 1;
        }
        let mut s = TcpSocket {
            cfg,
            tcp,
            state: match open {
                Open::Active => State::SynSent,
                Open::Passive => State::Listen,
            },
            snd: SeqSpace { isn: tcp.iss },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            max_snd_wnd: 0,
            last_ack_window: 0,
            app_end: 0,
            closing: false,
            own_mss,
            mss: own_mss,
            wscale_ok: false,
            snd_shift: 0,
            rcv_shift,
            sack_ok: false,
            ecn_ok: false,
            ece_pending: false,
            cwr_pending: false,
            ecn_recover: 0,
            recovery: effective_recovery(&tcp, false),
            sb: Scoreboard::default(),
            sack_hist: SackHistory::default(),
            cwnd: own_mss as u64,
            ssthresh: tcp.initial_ssthresh_bytes.unwrap_or(u64::MAX),
            dup_acks: 0,
            recover: 0,
            in_recovery: false,
            partial_acks_in_recovery: 0,
            recovery_cwnd: 0,
            after_timeout: false,
            last_rto_una: None,
            ack_events: cc.wants_ack_events(),
            rate: cc
                .needs_rate_samples()
                .then(|| super::rate::RateEstimator::with_capacity(64)),
            ack_rtt: None,
            min_rtt: None,
            paced: tcp.pacing || matches!(cc, AnyController::Bbr(_) | AnyController::Bbr3(_)),
            next_send: SimTime::ZERO,
            pacing_slack: SimDuration::ZERO,
            pacing_ns_per_byte: 0.0,
            cc,
            rtt,
            rtt_timing: None,
            ts_enabled: false,
            ts_recent: 0,
            last_ack_sent: 0,
            rexmit_pending: false,
            probe_pending: false,
            persist_backoffs: 0,
            syn_sent: 0,
            rtos_in_a_row: 0,
            syn_retransmitted: false,
            syn_timed_out: false,
            last_data_tx: None,
            msg_ends: VecDeque::with_capacity(16),
            rcv: SeqSpace { isn: 0 },
            rcv_nxt: 0,
            rcv_fin: None,
            fin_received: false,
            ooo: Assembler::default(),
            rcv_read: 0,
            read_paused: false,
            ack_now: false,
            unacked_bytes: 0,
            unacked_segments: 0,
            last_adv_edge: 0,
            rst_pending: None,
            timers: TimerTable::default(),
            events: VecDeque::with_capacity(4),
            closed_reported: false,
            stats: TransportStats::default(),
            tcp_stats: TcpStats::default(),
        };
        if open == Open::Active {
            // RFC 6298 (5.1): the SYN is sent now, so the timer starts now.
            s.syn_sent = 1;
            s.timers.set(Timer::Rto, now + s.syn_timeout());
        }
        s
    }

    // ------------------------------------------------------------------ application input

    /// Appends `msg.len` bytes to the send buffer (TCP keeps no message boundaries).
    ///
    /// # Errors
    /// [`SendError::TooLarge`] if the message exceeds the whole send buffer;
    /// [`SendError::BufferFull`] if the buffer lacks room now, or the socket is closing or
    /// closed.
    pub fn send(&mut self, _now: SimTime, msg: Message) -> Result<(), SendError> {
        if msg.len > self.tcp.send_buffer_bytes {
            return Err(SendError::TooLarge {
                max: self.tcp.send_buffer_bytes,
            });
        }
        if !self.can_send(msg.len) {
            return Err(SendError::BufferFull);
        }
        self.app_end += msg.len as u64;
        if msg.len > 0 {
            self.msg_ends.push_back(self.app_end);
        }
        Ok(())
    }

    /// Whether [`send`](Self::send) would accept `len` bytes now: the connection is not closing
    /// and the send buffer (unacknowledged bytes) has room.
    pub fn can_send(&self, len: u32) -> bool {
        let open = matches!(
            self.state,
            State::Listen | State::SynSent | State::SynReceived | State::Established | State::CloseWait
        );
        open && !self.closing && self.send_buffered() + len as u64 <= self.tcp.send_buffer_bytes as u64
    }

    /// The application closes its side (RFC 9293 §3.10.4): a FIN follows the data already
    /// given. ESTABLISHED goes to FIN-WAIT-1 and CLOSE-WAIT to LAST-ACK; a LISTEN socket closes at
    /// once. Unlike RFC 9293, a close during the handshake is queued until it completes.
    pub fn close(&mut self, _now: SimTime) {
        if self.closing {
            return;
        }
        match self.state {
            State::Listen => self.enter_closed(),
            State::SynSent | State::SynReceived => self.closing = true,
            State::Established => {
                self.closing = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.closing = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Models a receiving application that stops (`true`) or resumes (`false`) reading. While
    /// paused, in-order data stays in the receive buffer and the advertised window shrinks,
    /// down to zero; on resume everything is read (one
    /// [`DeliveredBytes`](TransportEvent::DeliveredBytes)) and, if the window grew enough, a
    /// window update is sent (RFC 9293 §3.8.6.2.2: by at least min(buffer/2, MSS)).
    pub fn set_receive_paused(&mut self, _now: SimTime, paused: bool) {
        self.read_paused = paused;
        if paused {
            return;
        }
        self.deliver();
        if self.is_synchronized() && self.state != State::SynReceived {
            let edge = self.rcv_nxt + self.adv_wnd();
            let step = (self.tcp.recv_buffer_bytes as u64 / 2).min(self.mss as u64);
            if edge >= self.last_adv_edge + step {
                self.ack_now = true;
            }
        }
    }

    // ------------------------------------------------------------------ getters

    /// Transport-neutral counters.
    pub fn stats(&self) -> TransportStats {
        self.stats
    }
    /// TCP-specific counters.
    pub fn tcp_stats(&self) -> TcpStats {
        TcpStats {
            rtt_samples: self.rtt.samples(),
            rtt_sum_ns: self.rtt.sum_ns(),
            ..self.tcp_stats
        }
    }
    /// The transport-neutral report: counters, RTT samples, RTO and the congestion state
    /// (`cwnd_bytes`, `ssthresh_bytes` until set, `srtt_s` once measured).
    pub fn report(&self) -> crate::TransportReport {
        let ts = self.tcp_stats();
        let ssthresh = self.ssthresh().filter(|&v| v < u64::MAX / 2).map(|v| v as f64);
        crate::TransportReport {
            stats: self.stats,
            rtt_samples: ts.rtt_samples,
            rtt_sum_ns: ts.rtt_sum_ns,
            timeouts: ts.timeouts,
            fast_retransmits: ts.fast_retransmits,
            rto: Some(self.base_rto()),
            gave_up: ts.gave_up > 0,
            congestion: {
                let mut c = vec![
                    ("cwnd_bytes", Some(self.cwnd() as f64)),
                    ("ssthresh_bytes", ssthresh),
                    ("srtt_s", self.srtt().map(|r| r.as_secs_f64())),
                ];
                // Fixed by the configuration (the engine names the series at the first
                // sample): present whenever SACK recovery is configured, `None` until SACK
                // is negotiated.
                if self.configured_for_sack_recovery() {
                    c.push(("pipe_bytes", self.pipe().map(|p| p as f64)));
                }
                if self.tcp.congestion == CongestionAlgorithm::Cubic {
                    c.push(("w_max_bytes", self.cc.w_max_bytes(self.mss as u64)));
                }
                if self.paced {
                    c.push(("pacing_rate_bps", self.pacing_rate().map(|r| r * 8.0)));
                }
                self.cc.model_series(&mut c);
                c
            },
            extra: Vec::new(),
            rx_extra: Vec::new(),
        }
    }
    /// Messages accepted whose last byte has not yet been transmitted once.
    pub fn buffered_messages(&self) -> u64 {
        self.msg_ends.len() as u64
    }
    /// Connection state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Congestion window `cwnd`, bytes (includes fast-recovery inflation). Cheap: sample it
    /// whenever you like.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Slow-start threshold `ssthresh`, bytes; `None` while still "arbitrarily high".
    pub fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh != u64::MAX).then_some(self.ssthresh)
    }
    /// Smoothed RTT (RFC 6298), `None` before the first sample.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }
    /// RTT variation (RFC 6298).
    pub fn rttvar(&self) -> SimDuration {
        self.rtt.rttvar()
    }
    /// Current retransmission timeout, backoff included (RFC 6298).
    pub fn rto(&self) -> SimDuration {
        self.rtt.rto()
    }
    /// Retransmission timeout before backoff (RFC 6298 §2): the "T0" of throughput models.
    pub fn base_rto(&self) -> SimDuration {
        self.rtt.base_rto()
    }
    /// RTT samples taken so far.
    pub fn rtt_samples(&self) -> u64 {
        self.rtt.samples()
    }
    /// Sum of the RTT samples (for `rtt_mean_s` = sum / samples).
    pub fn rtt_sum(&self) -> SimDuration {
        SimDuration(self.rtt.sum_ns())
    }
    /// SMSS in use, bytes: min(own MSS, peer's MSS) once connected, the own MSS before.
    pub fn mss(&self) -> u32 {
        self.mss
    }
    /// FlightSize (RFC 5681 §2), bytes of sequence space sent and not yet acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    /// Peer's advertised receive window `rwnd`, bytes.
    pub fn rwnd(&self) -> u64 {
        self.snd_wnd
    }
    /// Whether fast recovery (Reno/NewReno) or SACK loss recovery (RFC 6675) is in progress.
    pub fn in_fast_recovery(&self) -> bool {
        self.in_recovery
    }
    /// The loss recovery in use: the configured one, or NewReno when SACK recovery was asked
    /// for (by [`LossRecovery::Sack`] or CUBIC) but the peer did not offer SACK.
    pub fn loss_recovery(&self) -> LossRecovery {
        self.recovery
    }
    /// Whether both SYNs carried SACK-permitted (RFC 2018 §2).
    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }
    /// The window scale shifts in use, (ours, the peer's), when both SYNs carried the option
    /// (RFC 7323 §2).
    pub fn window_scale(&self) -> Option<(u8, u8)> {
        self.wscale_ok.then_some((self.rcv_shift, self.snd_shift))
    }
    /// RFC 6675 §4 SetPipe(): the sender's estimate of the octets in the network, with SACK
    /// recovery in use (`None` otherwise).
    pub fn pipe(&self) -> Option<u64> {
        (self.recovery == LossRecovery::Sack).then(|| {
            self.sb
                .pipe(self.snd_una, self.snd_max, self.tcp.dupthresh, self.mss as u64)
        })
    }
    /// The octets the scoreboard deems lost (RFC 6675 IsLost), as half-open sequence offsets.
    #[cfg(test)]
    pub(crate) fn sack_lost_ranges(&self) -> Vec<(u64, u64)> {
        self.sb
            .holes(self.snd_una, self.snd_max, self.tcp.dupthresh, self.mss as u64)
            .into_iter()
            .filter(|h| h.lost)
            .map(|h| (h.start, h.end))
            .collect()
    }
    /// The octets the scoreboard marks SACKed, as half-open sequence offsets.
    #[cfg(test)]
    pub(crate) fn sack_sacked_ranges(&self) -> Vec<(u64, u64)> {
        self.sb.sacked().collect()
    }
    /// The receiver's state: `rcv_nxt` and the out-of-order ranges held, as offsets.
    #[cfg(test)]
    pub(crate) fn receive_state(&self) -> (u64, Vec<(u64, u64)>) {
        (self.rcv_nxt, self.ooo.ranges().collect())
    }
    /// Duplicate ACKs counted since the last new ACK.
    pub fn dup_acks(&self) -> u32 {
        self.dup_acks
    }
    /// Stream bytes the peer has acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.app_end)
    }
    /// Stream bytes received in order (delivered or waiting for a paused reader).
    pub fn bytes_received(&self) -> u64 {
        self.rcv_data()
    }

    // ------------------------------------------------------------------ helpers

    fn window(&self) -> Window {
        Window {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
        }
    }

    fn apply(&mut self, w: Window) {
        self.cwnd = w.cwnd.max(self.mss as u64);
        self.ssthresh = w.ssthresh;
    }

    fn cc_context(&self) -> CcContext {
        CcContext {
            smss: self.mss as u64,
            // RFC 5681's FlightSize (sent, not cumulatively acknowledged), at most cwnd: after
            // SACK recovery SND.MAX − SND.UNA counts SACKed data, which has left the network,
            // and can exceed cwnd, so that a reduction from it would raise the window. RFC 9438
            // §4.6 asks that a loss never lets the window grow; ns-3 and Linux reduce from cwnd.
            flight_size: (self.snd_max - self.snd_una).min(self.cwnd),
            srtt: self.rtt.srtt(),
            after_timeout: self.after_timeout,
            initial_window: self.initial_window(),
            snd_max: self.snd_max,
            snd_una: self.snd_una,
            sack: self.sack_ok,
        }
    }

    /// RFC 5681 §3.1 eq. (1), or the configured number of segments.
    fn initial_window(&self) -> u64 {
        let smss = self.mss as u64;
        match self.tcp.initial_window_segments {
            Some(n) => n.max(1) as u64 * smss,
            None if smss > 2190 => 2 * smss,
            None if smss > 1095 => 3 * smss,
            None => 4 * smss,
        }
    }

    /// Takes an RTT sample from an ACK of new data up to `a`: with timestamps, from the echoed
    /// TSval (RFC 7323 §4.1: now − TSecr; the TSecr of a segment with the ACK bit is valid,
    /// §3.2), else if `a` acknowledges the timed segment (RFC 6298 §3).
    fn take_rtt_sample(&mut self, now: SimTime, a: u64, h: &TcpRepr) {
        if self.ts_enabled {
            // A handshake that needed a retransmitted SYN or SYN-ACK gives no sample: the
            // echo may be of the first SYN (the peer keeps the TS.Recent of the SYN it took).
            if a == 1 && self.syn_retransmitted {
                return;
            }
            if let (Some(ts), true) = (h.timestamp, h.flags.contains(TcpFlags::ACK)) {
                // The echo is our clock in whole milliseconds, so the sample includes the part
                // of a millisecond that had passed when it was sent (as ns-3's
                // `ElapsedTimeFromTsValue`).
                let echoed = ts_clock(now).wrapping_sub(ts.tsecr) as u64;
                let since_tick = now.as_nanos() % 1_000_000;
                let sample = SimDuration::from_nanos(echoed * 1_000_000 + since_tick);
                self.rtt.on_sample(sample);
                if a > 1 {
                    self.rtt_sampled(now, sample);
                }
            }
            return;
        }
        if let Some((end, sent)) = self.rtt_timing {
            if a >= end {
                let sample = now.saturating_since(sent);
                self.rtt.on_sample(sample);
                if a > 1 {
                    self.rtt_sampled(now, sample);
                }
                self.rtt_timing = None;
            }
        }
    }

    /// RFC 7323 §4.3 (2): TS.Recent takes the TSval of an acceptable segment that is not older
    /// than it and starts at or before the point our last ACK acknowledged.
    fn update_ts_recent(&mut self, h: &TcpRepr, s: u64) {
        if let (true, Some(ts)) = (self.ts_enabled, h.timestamp) {
            if ts.tsval.wrapping_sub(self.ts_recent) as i32 >= 0 && s <= self.last_ack_sent {
                self.ts_recent = ts.tsval;
            }
        }
    }

    /// Records the peer's SYN options and window.
    fn peer_syn(&mut self, h: &TcpRepr) {
        let peer_mss = h.mss.map_or(DEFAULT_PEER_MSS, u32::from).max(1);
        self.mss = self.own_mss.min(peer_mss);
        // RFC 7323 §3.2: timestamps are used when both SYNs carry them; TS.Recent starts at
        // the SYN's TSval. Every segment then carries 12 more header bytes: a payload that
        // would no longer fit the path MTU is cut (the MSS option itself counts no options,
        // RFC 9293 §3.7.1; ns-3 and tpsim take the peer's value as the payload limit).
        if self.tcp.timestamps {
            if let Some(ts) = h.timestamp {
                self.ts_enabled = true;
                self.ts_recent = ts.tsval;
                // (Under ns-2's size convention options take no bytes, so nothing is cut.)
                let headers = self.cfg.sizes.tcp_ip_len(0, TCP_HEADER_LEN + 12);
                let fit = self.cfg.mtu.saturating_sub(headers).max(1);
                self.mss = self.mss.min(fit);
            }
        }
        // RFC 7323 §2.2: window scaling when both SYNs carry the option; a shift above 14 is
        // taken as 14 (§2.3).
        if let (true, Some(shift)) = (self.tcp.window_scaling, h.window_scale) {
            self.wscale_ok = true;
            self.snd_shift = shift.min(MAX_WINDOW_SHIFT);
        }
        // RFC 2018 §2: SACK when both SYNs carry SACK-permitted.
        self.sack_ok = self.offers_sack() && h.sack_permitted;
        // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR, an ECN-setup SYN-ACK ECE
        // only.
        let (ece, cwr) = (h.flags.contains(TcpFlags::ECE), h.flags.contains(TcpFlags::CWR));
        self.ecn_ok = self.tcp.ecn && ece && (cwr != (self.state == State::SynSent));
        self.recovery = effective_recovery(&self.tcp, self.sack_ok);
        // The SYN's own window is never scaled (RFC 7323 §2.2).
        self.snd_wnd = h.window as u64;
        self.max_snd_wnd = self.snd_wnd;
        self.last_ack_window = self.snd_wnd;
    }

    /// The peer's window from a segment's window field (RFC 7323 §2.3: shifted, except on a
    /// SYN), bytes.
    fn peer_window(&self, h: &TcpRepr) -> u64 {
        if self.wscale_ok && !h.flags.contains(TcpFlags::SYN) {
            (h.window as u64) << self.snd_shift
        } else {
            h.window as u64
        }
    }

    /// The window to advertise, as (bytes, field): the free buffer, cut to what the field can
    /// say (RFC 7323 §2.3: right-shifted, so rounded down to a multiple of 2^shift; §2.4: the
    /// receiver still accepts everything inside any window it announced, since acceptance
    /// uses the real free buffer). A SYN's window is never scaled.
    fn window_to_send(&self, syn: bool) -> (u64, u16) {
        let free = self.rcv_wnd();
        if self.wscale_ok && !syn {
            let field = (free >> self.rcv_shift).min(MAX_WINDOW);
            (field << self.rcv_shift, field as u16)
        } else {
            let w = free.min(MAX_WINDOW);
            (w, w as u16)
        }
    }

    /// Whether our SYN offers SACK-permitted.
    fn offers_sack(&self) -> bool {
        self.tcp.sack || self.tcp.recovery == LossRecovery::Sack
    }

    /// Whether the configuration asks for RFC 6675 recovery (used once SACK is negotiated).
    fn configured_for_sack_recovery(&self) -> bool {
        self.offers_sack() && (self.tcp.recovery == LossRecovery::Sack || self.tcp.congestion.wants_sack_recovery())
    }

    /// In RFC 6675 loss recovery.
    fn sack_recovery(&self) -> bool {
        self.in_recovery && self.recovery == LossRecovery::Sack
    }

    fn dsack_on(&self) -> bool {
        self.tcp.dsack && self.sack_ok
    }

    /// The SACK blocks for an ACK carrying `len` payload bytes whose header is `hdr` bytes
    /// without them (RFC 2018 §4): none without out-of-order data (or a D-SACK report); at
    /// most 4, 3 with timestamps (§3), and only as many as keep the packet within the MTU.
    fn sack_blocks(&mut self, len: u32, hdr: u32) -> SackBlocks {
        if self.ooo.is_empty() && self.sack_hist.dsack.is_none() {
            return SackBlocks::NONE;
        }
        let mut max = if self.ts_enabled {
            SackBlocks::MAX_WITH_TIMESTAMPS
        } else {
            SackBlocks::MAX
        };
        while max > 0 && self.cfg.sizes.tcp_ip_len(len, hdr + 4 + 8 * max as u32) > self.cfg.mtu {
            max -= 1;
        }
        let ooo = &self.ooo;
        let blocks = self
            .sack_hist
            .blocks(self.rcv_nxt, max, |seq| ooo.range_containing(seq));
        let mut out = SackBlocks::NONE;
        for (l, r) in blocks {
            out.push((self.rcv.wire(l), self.rcv.wire(r)));
        }
        out
    }

    fn retransmit_syn(&mut self) {
        self.snd_nxt = 0;
        self.syn_retransmitted = true;
        self.rtt_timing = None;
    }

    /// The handshake completed.
    fn connected(&mut self) {
        self.state = if self.closing {
            State::FinWait1
        } else {
            State::Established
        };
        self.events.push_back(TransportEvent::Connected);
        // RFC 5681 §3.1: one segment if the SYN or SYN-ACK had to be retransmitted.
        self.cwnd = if self.syn_retransmitted {
            self.mss as u64
        } else {
            self.initial_window()
        };
        if self.syn_timed_out {
            self.rtt.reset_after_syn_loss(); // RFC 6298 (5.7)
        }
    }

    fn enter_time_wait(&mut self, now: SimTime) {
        self.state = State::TimeWait;
        self.timers = TimerTable::default();
        self.timers.set(Timer::TimeWait, now + self.time_wait());
        self.report_closed();
    }

    /// The retransmission timeout of our SYN: `syn_rto` doubled per retransmission, or the
    /// RTO (which backs off by itself).
    fn syn_timeout(&self) -> SimDuration {
        match self.tcp.syn_rto {
            Some(t) => SimDuration(t.0.saturating_mul(1 << self.syn_sent.saturating_sub(1).min(20))),
            None => self.rtt.rto(),
        }
    }

    /// Abandons the connection (R2 reached): closed at once, nothing more sent.
    fn give_up(&mut self) {
        self.tcp_stats.gave_up = 1;
        self.enter_closed();
    }

    fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.timers = TimerTable::default();
        self.ack_now = false;
        self.report_closed();
    }

    fn report_closed(&mut self) {
        if !self.closed_reported {
            self.closed_reported = true;
            self.events.push_back(TransportEvent::Closed);
        }
    }

    fn time_wait(&self) -> SimDuration {
        SimDuration(self.tcp.msl.0.saturating_mul(2))
    }

    fn deliver(&mut self) {
        if self.read_paused {
            return;
        }
        let upto = self.rcv_data();
        if upto > self.rcv_read {
            self.rcv_read = upto;
            if let Some(TransportEvent::DeliveredBytes { upto: u }) = self.events.back_mut() {
                *u = upto;
            } else {
                self.events.push_back(TransportEvent::DeliveredBytes { upto });
            }
        }
    }

    /// Stream bytes received in order.
    fn rcv_data(&self) -> u64 {
        self.rcv_nxt.saturating_sub(1 + self.fin_received as u64)
    }

    /// Free receive buffer: the receive window RCV.WND, bytes. Out-of-order data lies inside
    /// the window and does not shrink it, so the right edge never moves left.
    fn rcv_wnd(&self) -> u64 {
        let unread = self.rcv_data() - self.rcv_read;
        (self.tcp.recv_buffer_bytes as u64).saturating_sub(unread)
    }

    /// The window we advertise, bytes (at most 65 535 unscaled, RFC 7323 §2.3 when scaled).
    fn adv_wnd(&self) -> u64 {
        self.window_to_send(false).0
    }

    fn data_end(&self) -> u64 {
        1 + self.app_end
    }

    fn send_buffered(&self) -> u64 {
        self.app_end - self.bytes_acked()
    }

    fn data_waiting(&self) -> bool {
        self.can_send_data_state() && self.snd_nxt < self.data_end()
    }

    fn can_send_data_state(&self) -> bool {
        matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck
        )
    }

    fn is_synchronized(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent)
    }
}

/// SACK blocks converted to offsets (a handful per ACK).
type SackBlocksOff = Vec<(u64, u64)>;

/// The loss recovery a connection uses: RFC 6675 when SACK recovery is configured
/// ([`LossRecovery::Sack`], or any controller but AIMD) and both ends negotiated SACK, NewReno when it is
/// configured but SACK is not negotiated, else the configured one.
fn effective_recovery(tcp: &TcpConfig, sack_ok: bool) -> LossRecovery {
    let wants_sack = tcp.recovery == LossRecovery::Sack || tcp.congestion.wants_sack_recovery();
    match (wants_sack, sack_ok) {
        (true, true) => LossRecovery::Sack,
        (true, false) => LossRecovery::NewReno,
        (false, _) => tcp.recovery,
    }
}

/// The RFC 7323 timestamp clock: simulated milliseconds, modulo 2^32 (§5.4: a tick between
/// 1 ms and 1 s; ns-3's `TcpOptionTS::NowToTsValue` uses the same).
fn ts_clock(now: SimTime) -> u32 {
    (now.as_nanos() / 1_000_000) as u32
}
