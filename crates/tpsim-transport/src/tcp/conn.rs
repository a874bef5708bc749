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
        let cc = tcp.congestion.build(tcp.byte_counting);
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

    // ------------------------------------------------------------------ network input

    /// Processes a segment from the network, following RFC 9293 §3.10.7 ("SEGMENT ARRIVES").
    /// Segments of other protocols are counted and ignored.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        let L4Header::Tcp(h) = seg.header else { return };
        if h.flags.contains(TcpFlags::ACK) && !matches!(self.state, State::Closed | State::Listen) {
            self.stats.acks_received += 1;
        }
        match self.state {
            State::Closed => self.on_closed(&h, seg.payload_len),
            State::Listen => self.on_listen(&h),
            State::SynSent => self.on_syn_sent(now, &h),
            _ => self.on_other(now, &h, seg.payload_len),
        }
    }

    /// RFC 9293 §3.10.7.1: CLOSED. Anything but a RST is answered with a RST, so that a peer
    /// still retransmitting after our TIME-WAIT ended learns that the connection is gone.
    fn on_closed(&mut self, h: &TcpRepr, payload: u32) {
        if h.flags.contains(TcpFlags::RST) {
            return;
        }
        let (seq, ack, flags) = if h.flags.contains(TcpFlags::ACK) {
            (h.ack, 0, TcpFlags::RST) // <SEQ=SEG.ACK><CTL=RST>
        } else {
            // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
            (
                0,
                h.seq.wrapping_add(h.segment_len(payload)),
                TcpFlags::RST | TcpFlags::ACK,
            )
        };
        self.rst_pending = Some(TcpRepr {
            src_port: self.cfg.local_port,
            dst_port: self.cfg.remote_port,
            seq,
            ack,
            flags,
            window: 0,
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: tpsim_wire::tcp::SackBlocks::NONE,
        });
    }

    /// RFC 9293 §3.10.7.2: LISTEN. RSTs and ACKs are dropped (no RST is generated); a SYN moves
    /// to SYN-RECEIVED and the SYN-ACK goes out of the next `poll_transmit`.
    fn on_listen(&mut self, h: &TcpRepr) {
        if h.flags.contains(TcpFlags::RST) || h.flags.contains(TcpFlags::ACK) || !h.flags.contains(TcpFlags::SYN) {
            return;
        }
        self.rcv = SeqSpace { isn: h.seq };
        self.rcv_nxt = 1;
        self.peer_syn(h);
        self.snd_wl1 = 0;
        self.snd_wl2 = 0;
        self.state = State::SynReceived;
        self.syn_sent = 1; // the SYN-ACK goes out next
    }

    /// RFC 9293 §3.10.7.3: SYN-SENT.
    fn on_syn_sent(&mut self, now: SimTime, h: &TcpRepr) {
        let has_ack = h.flags.contains(TcpFlags::ACK);
        // "If SEG.ACK =< ISS or SEG.ACK > SND.NXT": unacceptable (we send no RST).
        let ack_ok = has_ack && self.snd.offset(h.ack, 0) == Some(1);
        if has_ack && !ack_ok {
            return;
        }
        if h.flags.contains(TcpFlags::RST) {
            if ack_ok {
                self.enter_closed();
            }
            return;
        }
        if !h.flags.contains(TcpFlags::SYN) || !ack_ok {
            // A SYN without ACK would be a simultaneous open: not supported.
            return;
        }
        self.rcv = SeqSpace { isn: h.seq };
        self.rcv_nxt = 1;
        self.peer_syn(h);
        self.snd_una = 1;
        self.snd_wl1 = 0;
        self.snd_wl2 = 1;
        self.take_rtt_sample(now, 1, h);
        // RFC 6298 (5.2): everything outstanding is acknowledged.
        self.timers.stop(Timer::Rto);
        self.connected();
        // RFC 9293 §3.10.7.3: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, or piggybacked on data.
        self.ack_now = true;
    }

    /// RFC 9293 §3.10.7.4: SYN-RECEIVED and the synchronized states.
    fn on_other(&mut self, now: SimTime, h: &TcpRepr, payload: u32) {
        let syn = h.flags.contains(TcpFlags::SYN);
        let fin = h.flags.contains(TcpFlags::FIN);
        let rst = h.flags.contains(TcpFlags::RST);
        let has_ack = h.flags.contains(TcpFlags::ACK);
        if self.state == State::SynReceived && syn && !has_ack && self.rcv.offset(h.seq, 0) == Some(0) {
            // The peer retransmitted its SYN, so our SYN-ACK was probably lost: send it again
            // now (as BSD and Linux do; RFC 9293 would only answer with an ACK).
            self.retransmit_syn();
            return;
        }
        let seg_len = payload as u64 + syn as u64 + fin as u64;
        let seq = self.rcv.offset(h.seq, self.rcv_nxt);
        let wnd = self.rcv_wnd();

        // First: the sequence-number check (RFC 9293 §3.10.7.4, the four-case table). For a
        // zero-length segment the right edge is inclusive, as in Linux, so that a pure ACK sent
        // at the edge of a full window is not refused.
        let acceptable = seq.is_some_and(|s| {
            let (lo, hi) = (self.rcv_nxt, self.rcv_nxt + wnd);
            if seg_len == 0 {
                lo <= s && s <= hi
            } else {
                wnd > 0 && ((lo <= s && s < hi) || (lo < s + seg_len && s + seg_len <= hi))
            }
        });
        if !acceptable {
            if let Some(s) = seq {
                if seg_len > 0 && s + seg_len <= self.rcv_nxt {
                    self.tcp_stats.duplicate_segments += 1;
                    if payload > 0 && self.dsack_on() {
                        // RFC 2883 §4: report the duplicate in the first block of the ACK.
                        self.sack_hist.dsack = Some(((s, s + payload as u64), None));
                    }
                }
            }
            if rst {
                return;
            }
            // "If an incoming segment is not acceptable, an acknowledgment should be sent."
            self.ack_now = true;
            if self.state == State::TimeWait && fin {
                // TIME-WAIT: a retransmitted FIN is acknowledged and restarts the 2·MSL timeout.
                self.timers.set(Timer::TimeWait, now + self.time_wait());
            }
            // "If the RCV.WND is zero, no segments will be acceptable, but special allowance
            // should be made to accept valid ACKs."
            if wnd == 0 && seq == Some(self.rcv_nxt) && has_ack && self.state != State::SynReceived {
                self.process_ack(now, h, self.rcv_nxt, payload, syn, fin);
            }
            return;
        }
        let s = seq.expect("acceptable implies a sequence number");
        // Second: RST (RFC 5961's stricter check is not implemented).
        if rst {
            self.enter_closed();
            return;
        }
        self.update_ts_recent(h, s);
        // Fourth: a SYN in the window. RFC 9293 asks for a challenge ACK (RFC 5961 §4); we ACK
        // and drop the segment.
        if syn {
            self.ack_now = true;
            return;
        }
        // Fifth: the ACK field.
        if !has_ack {
            return;
        }
        if self.state == State::SynReceived {
            if self.snd.offset(h.ack, 0) != Some(1) {
                return; // unacceptable ACK of our SYN (RFC: send a reset)
            }
            self.snd_una = 1;
            let window = self.peer_window(h);
            self.set_send_window(window, s, 1);
            self.last_ack_window = window;
            self.take_rtt_sample(now, 1, h);
            self.timers.stop(Timer::Rto);
            self.connected();
        } else if !self.process_ack(now, h, s, payload, syn, fin) {
            return;
        }
        // Seventh and eighth: segment text and FIN, in the states that still receive.
        if matches!(self.state, State::Established | State::FinWait1 | State::FinWait2) && (payload > 0 || fin) {
            self.process_data(now, s, payload, fin);
        }
    }

    /// RFC 9293 §3.10.7.4 "fifth, check the ACK field" for the synchronized states. Returns
    /// false if the rest of the segment must be dropped.
    fn process_ack(&mut self, now: SimTime, h: &TcpRepr, s: u64, payload: u32, syn: bool, fin: bool) -> bool {
        let Some(a) = self.snd.offset(h.ack, self.snd_una) else {
            return true; // from before our ISN: an ancient duplicate, ignore its ACK
        };
        if a > self.snd_max {
            // "If the ACK acks something not yet sent ... send an ACK, drop the segment."
            self.ack_now = true;
            return false;
        }
        // RFC 7323 §2.3: SND.WND = SEG.WND << Snd.Wind.Shift.
        let window = self.peer_window(h);
        if a >= self.snd_una {
            // RFC 9293 §3.10.7.4: update the send window only from newer segments.
            if self.snd_wl1 < s || (self.snd_wl1 == s && self.snd_wl2 <= a) {
                self.set_send_window(window, s, a);
            }
        }
        if a < self.snd_una {
            return true; // an old ACK: ignored
        }
        let last_window = std::mem::replace(&mut self.last_ack_window, window);
        if self.recovery == LossRecovery::Sack {
            // RFC 6675 §5: Update() with every ACK's SACK blocks; a duplicate ACK is one that
            // SACKs octets not SACKed before (§2), whatever else it does.
            let blocks = h
                .sack
                .as_slice()
                .iter()
                .filter_map(|&(l, r)| Some((self.snd.offset(l, self.snd_una)?, self.snd.offset(r, self.snd_una)?)));
            let blocks: SackBlocksOff = blocks.collect();
            let new_sack = self.sb.update(blocks, self.snd_una, self.snd_max);
            if a > self.snd_una {
                self.on_new_ack(now, a, h);
            }
            if new_sack && !self.in_recovery && self.snd_una < self.snd_max {
                self.on_sack_dup_ack(now);
            }
            return true;
        }
        if a == self.snd_una {
            // RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT: (a) data outstanding, (b) no data, (c) no
            // SYN/FIN, (d) ACK = snd_una, (e) same window as the last ACK. Like BSD we also
            // require the retransmission timer to run, which leaves out ACKs of zero-window
            // probes (the persist timer runs instead).
            let dup = self.snd_max > self.snd_una
                && payload == 0
                && !syn
                && !fin
                && window == last_window
                && self.timers.is_set(Timer::Rto);
            if dup {
                self.on_dup_ack(now);
            }
            return true;
        }
        self.on_new_ack(now, a, h);
        true
    }

    fn set_send_window(&mut self, window: u64, wl1: u64, wl2: u64) {
        self.snd_wnd = window;
        self.snd_wl1 = wl1;
        self.snd_wl2 = wl2;
        self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
    }

    /// An ACK of new data (`a > snd_una`).
    fn on_new_ack(&mut self, now: SimTime, a: u64, h: &TcpRepr) {
        let acked = a - self.snd_una;
        let smss = self.mss as u64;
        self.rtos_in_a_row = 0;
        self.take_rtt_sample(now, a, h);
        self.snd_una = a;
        if self.snd_nxt < a {
            self.snd_nxt = a;
        }
        if self.recovery == LossRecovery::Sack {
            self.sb.advance(a);
        }
        if self.in_recovery && self.recovery == LossRecovery::Sack {
            // RFC 6675 §5: a cumulative ACK resets DupAcks; (A) one beyond RecoveryPoint ends
            // recovery (cwnd stays what (4.2) set); (B) otherwise the scoreboard and pipe say
            // what to send next (poll_transmit). No window growth during recovery.
            self.dup_acks = 0;
            if a >= self.recover {
                self.in_recovery = false;
            } else {
                self.tcp_stats.partial_acks += 1;
            }
        } else if self.in_recovery {
            if self.recovery == LossRecovery::NewReno && a < self.recover {
                // RFC 6582 §3.2 step 3, partial ACK: retransmit the first unacknowledged
                // segment, deflate cwnd by the amount acknowledged, add back one SMSS if at least
                // one SMSS was acknowledged, stay in fast recovery.
                self.tcp_stats.partial_acks += 1;
                self.rexmit_pending = true;
                let add_back = if acked >= smss { smss } else { 0 };
                self.cwnd = (self.cwnd.saturating_sub(acked) + add_back).max(smss);
                if self.partial_acks_in_recovery == 0 {
                    // RFC 6582 §3.2 step 3: reset the retransmit timer on the first partial ACK
                    // only (the "Impatient" variant, RFC 3782 §4).
                    self.timers.set(Timer::Rto, now + self.rtt.rto());
                }
                self.partial_acks_in_recovery += 1;
                return;
            }
            // A full ACK (NewReno) or any new ACK (Reno): fast recovery ends.
            self.in_recovery = false;
            self.dup_acks = 0;
            self.cwnd = match self.recovery {
                // RFC 6582 §3.2 step 3, full ACK, option (1): min(ssthresh, max(FlightSize,
                // SMSS) + SMSS), which avoids a burst when little is outstanding.
                LossRecovery::NewReno => {
                    let flight = self.snd_max - self.snd_una;
                    self.recovery_cwnd.min(flight.max(smss) + smss)
                }
                // RFC 5681 §3.2 step 6: cwnd = ssthresh ("deflating" the window).
                LossRecovery::Reno | LossRecovery::Tahoe | LossRecovery::Sack => self.recovery_cwnd,
            }
            .max(smss);
        } else {
            self.dup_acks = 0;
            // RFC 5681 §3.1: slow start or congestion avoidance, as the controller decides.
            let cx = self.cc_context();
            let w = self.cc.on_ack(now, acked, self.window(), &cx);
            self.apply(w);
            if self.cwnd >= self.ssthresh {
                self.after_timeout = false;
            }
        }
        // RFC 6298 (5.2) and (5.3).
        if self.snd_una == self.snd_max {
            self.timers.stop(Timer::Rto);
        } else {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
        // Our FIN acknowledged (RFC 9293 §3.10.7.4, FIN-WAIT-1 / CLOSING / LAST-ACK).
        if self.closing && a > self.data_end() {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => self.enter_closed(),
                _ => {}
            }
        }
    }

    /// A duplicate ACK (RFC 5681 §3.2, RFC 6582 §3.2).
    fn on_dup_ack(&mut self, now: SimTime) {
        self.dup_acks += 1;
        self.tcp_stats.dup_acks += 1;
        let smss = self.mss as u64;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4: each further duplicate ACK inflates cwnd by one SMSS.
            self.cwnd += smss;
            return;
        }
        if self.dup_acks != self.tcp.dupthresh {
            return;
        }
        // RFC 6582 §3.2 step 2: enter fast retransmit only if the cumulative ACK covers more
        // than `recover`; otherwise these duplicates are echoes of a window already being
        // recovered. Applied to Tahoe and Reno as well, as ns-2's default `bug_fix_` does.
        if self.snd_una <= self.recover {
            return;
        }
        self.tcp_stats.fast_retransmits += 1;
        let cx = self.cc_context();
        let w = self
            .cc
            .on_congestion_event(now, CongestionEvent::DupAcks, self.window(), &cx);
        // RFC 5681 §3.2 step 2: ssthresh (eq. 4, or the controller's choice).
        self.ssthresh = w.ssthresh;
        self.recover = self.snd_max;
        self.rtt_timing = None; // Karn (RFC 6298 §3)
        match self.recovery {
            LossRecovery::Tahoe => {
                // No fast recovery: the loss window and slow start from the lost segment.
                self.cwnd = smss;
                self.snd_nxt = self.snd_una;
            }
            LossRecovery::Reno | LossRecovery::NewReno | LossRecovery::Sack => {
                // RFC 5681 §3.2 step 3: retransmit, cwnd = ssthresh + 3·SMSS.
                self.recovery_cwnd = w.cwnd;
                self.cwnd = self.ssthresh + self.tcp.dupthresh as u64 * smss;
                self.in_recovery = true;
                self.partial_acks_in_recovery = 0;
                self.rexmit_pending = true;
            }
        }
        // The retransmission restarts the timer, as BSD and ns-2 do.
        self.timers.set(Timer::Rto, now + self.rtt.rto());
    }

    /// A duplicate ACK in RFC 6675's sense (§2: it SACKed new octets), outside recovery: §5
    /// steps (1), (2) and (4).
    fn on_sack_dup_ack(&mut self, now: SimTime) {
        self.dup_acks += 1;
        self.tcp_stats.dup_acks += 1;
        let smss = self.mss as u64;
        // (1) DupAcks >= DupThresh, or (2) IsLost(HighACK + 1): enter recovery.
        if self.dup_acks < self.tcp.dupthresh && !self.sb.is_lost(self.snd_una, self.tcp.dupthresh, smss) {
            return;
        }
        // §5.1: after a timeout, no new recovery until HighACK >= RecoveryPoint (here `recover`
        // is RecoveryPoint + 1 and `snd_una` HighACK + 1).
        if self.snd_una < self.recover {
            return;
        }
        self.tcp_stats.fast_retransmits += 1;
        // (4.1) RecoveryPoint = HighData.
        self.recover = self.snd_max;
        // (4.2) ssthresh = cwnd = FlightSize / 2 (RFC 5681 eq. (4)), or the controller's values.
        let cx = self.cc_context();
        let w = self
            .cc
            .on_congestion_event(now, CongestionEvent::DupAcks, self.window(), &cx);
        self.ssthresh = w.ssthresh;
        self.cwnd = w.cwnd.max(smss);
        self.in_recovery = true;
        self.rtt_timing = None; // Karn (RFC 6298 §3)
                                // (4.3) Retransmit HighACK + 1 (poll_transmit sets HighRxt and RescueRxt).
        self.sb.high_rxt = 0;
        self.sb.rescue_rxt = None;
        self.rexmit_pending = true;
        // The retransmission restarts the timer, as for NewReno.
        self.timers.set(Timer::Rto, now + self.rtt.rto());
    }

    /// RFC 9293 §3.10.7.4 "seventh, process the segment text" and "eighth, check the FIN bit".
    fn process_data(&mut self, now: SimTime, s: u64, payload: u32, fin: bool) {
        let wnd_end = self.rcv_nxt + self.rcv_wnd();
        let seg_end = s + payload as u64;
        let start = s.max(self.rcv_nxt);
        let end = seg_end.min(wnd_end);
        let had_holes = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        if self.dsack_on() && s < self.rcv_nxt && end > start {
            // RFC 2883 §4: the part below RCV.NXT is a duplicate.
            self.sack_hist.dsack = Some(((s, self.rcv_nxt), None));
        }
        if end > start {
            if start == self.rcv_nxt {
                self.rcv_nxt = self.ooo.advance(end);
            } else {
                if self.dsack_on() {
                    // RFC 2883 §4: a segment wholly inside queued data is a duplicate; the
                    // second block reports the queued block it lies in.
                    if let Some(r) = self.ooo.range_containing(start).filter(|r| r.1 >= end) {
                        self.sack_hist.dsack = Some(((start, end), Some(r)));
                    }
                }
                if self.sack_ok {
                    // RFC 2018 §4: this segment's block goes first in the ACK.
                    self.sack_hist.received(start);
                }
                // RFC 5681 §4.2: an out-of-order segment is acknowledged at once (a duplicate
                // ACK); its data waits for reassembly.
                self.ooo.insert(start, end);
                self.tcp_stats.out_of_order_segments += 1;
                self.ack_now = true;
            }
        } else if payload > 0 {
            self.tcp_stats.duplicate_segments += 1;
            self.ack_now = true;
            if self.dsack_on() && seg_end <= self.rcv_nxt {
                self.sack_hist.dsack = Some(((s, seg_end), None));
            }
        }
        // A FIN counts only if all the data before it fitted in the window.
        if fin && seg_end <= wnd_end && self.rcv_fin.is_none() {
            self.rcv_fin = Some(seg_end);
        }
        if self.rcv_nxt > before {
            if had_holes {
                // RFC 5681 §4.2: a segment that fills (part of) a gap is acknowledged at once.
                self.ack_now = true;
            } else {
                self.unacked_bytes += self.rcv_nxt - before;
                self.unacked_segments = self.unacked_segments.saturating_add(1);
                match self.tcp.delayed_ack {
                    None => self.ack_now = true,
                    // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: at least every second full-sized
                    // segment (or every n-th segment of any size, as ns-3 counts), and
                    // within the delay of the first unacknowledged one.
                    Some(delay) => {
                        let due = match self.tcp.delayed_ack_segments {
                            None => self.unacked_bytes >= 2 * self.mss as u64,
                            Some(n) => self.unacked_segments >= n,
                        };
                        if due {
                            self.ack_now = true;
                        } else if !self.timers.is_set(Timer::DelayedAck) {
                            self.timers.set(Timer::DelayedAck, now + delay);
                        }
                    }
                }
            }
            self.deliver();
        }
        if !self.fin_received && self.rcv_fin == Some(self.rcv_nxt) {
            self.on_fin(now);
        }
    }

    /// The peer's FIN is next in sequence (RFC 9293 §3.10.7.4 "eighth").
    fn on_fin(&mut self, now: SimTime) {
        self.rcv_nxt += 1;
        self.fin_received = true;
        self.ack_now = true;
        match self.state {
            State::Established => {
                self.state = State::CloseWait;
                if self.tcp.close_on_peer_fin {
                    self.close(now);
                }
            }
            // Our FIN is not acknowledged yet (else we would be in FIN-WAIT-2).
            State::FinWait1 => self.state = State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    // ------------------------------------------------------------------ timers

    /// Handles every timer due at `now`; safe to call early, late or repeatedly.
    pub fn on_timeout(&mut self, now: SimTime) {
        while let Some(t) = self.timers.pop_expired(now) {
            match t {
                Timer::Rto => self.on_rto(now),
                Timer::DelayedAck => {
                    if self.is_synchronized() {
                        self.ack_now = true;
                    }
                }
                Timer::Persist => self.on_persist(),
                Timer::TimeWait => {
                    if self.state == State::TimeWait {
                        self.state = State::Closed;
                    }
                }
            }
        }
    }

    /// RFC 6298 §5 (5.4)–(5.6) and RFC 5681 §3.1 after a timeout.
    fn on_rto(&mut self, now: SimTime) {
        if self.snd_una >= self.snd_max {
            return; // nothing outstanding: a stale timer
        }
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.tcp.syn_attempts.is_some_and(|n| self.syn_sent >= n) {
                    // RFC 9293 §3.8.3: R2 reached for the SYN; ns-3 closes without a reset.
                    self.give_up();
                    return;
                }
                self.syn_timed_out = true;
                self.retransmit_syn();
                self.rtt.backoff();
                self.syn_sent += 1;
                self.timers.set(Timer::Rto, now + self.syn_timeout());
                return;
            }
            State::Closed | State::Listen | State::TimeWait => return,
            _ => {}
        }
        if self.tcp.data_retries.is_some_and(|n| self.rtos_in_a_row >= n) {
            // RFC 9293 §3.8.3: R2 reached for a data segment (or FIN).
            self.give_up();
            return;
        }
        self.rtos_in_a_row += 1;
        self.tcp_stats.timeouts += 1;
        let smss = self.mss as u64;
        if self.last_rto_una != Some(self.snd_una) {
            // RFC 5681 §3.1: ssthresh from eq. (4) the first time a segment is retransmitted
            // by the timer; cwnd = LW (the controller returns both).
            let cx = self.cc_context();
            let w = self
                .cc
                .on_congestion_event(now, CongestionEvent::Timeout, self.window(), &cx);
            self.apply(w);
        } else {
            self.cwnd = smss;
        }
        self.last_rto_una = Some(self.snd_una);
        if self.recovery == LossRecovery::Sack {
            // RFC 6675 §5.1 / RFC 2018 §8: the receiver may have reneged: expunge the SACKed
            // marks (and end recovery); `recover` below is the new RecoveryPoint.
            self.sb.clear();
        }
        self.in_recovery = false;
        self.dup_acks = 0;
        self.rexmit_pending = false;
        // RFC 6582 §3.2 step 4: remember the highest offset sent, leave fast recovery.
        self.recover = self.snd_max;
        // RFC 6298 (5.4): retransmit the earliest unacknowledged segment; the rest follows in
        // slow start (go-back-N, as BSD and ns-2).
        self.snd_nxt = self.snd_una;
        self.rtt_timing = None; // Karn (RFC 6298 §3)
        self.after_timeout = true;
        self.rtt.backoff(); // (5.5)
        self.timers.set(Timer::Rto, now + self.rtt.rto()); // (5.6)
    }

    /// RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: the persist timer fired.
    fn on_persist(&mut self) {
        if self.data_waiting() && !self.timers.is_set(Timer::Rto) {
            self.probe_pending = true;
            self.persist_backoffs = self.persist_backoffs.saturating_add(1);
        }
    }

    fn persist_interval(&self) -> SimDuration {
        // The first probe after one RTO, then exponentially backed off (RFC 1122 §4.2.2.17),
        // capped like the RTO.
        let shift = self.persist_backoffs.min(20);
        SimDuration(self.rtt.rto().0.saturating_mul(1 << shift)).min(self.rtt.max_rto())
    }

    // ------------------------------------------------------------------ outputs

    /// The next segment to send, if any. Call until it returns `None`.
    ///
    /// Data segments carry [`StreamData`] (`message` is always `None`); `first_tx` is simply
    /// `now`, since TCP does not track messages: the engine derives each message's first
    /// transmission from the stream offsets.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        match self.state {
            State::Closed => {
                let repr = self.rst_pending.take()?;
                self.stats.tx_segments += 1;
                return Some(Segment {
                    addr: None,
                    header: L4Header::Tcp(repr),
                    payload_len: 0,
                    ip_len: self.cfg.sizes.tcp_ip_len(0, repr.header_len()),
                    message: None,
                    first_tx: now,
                    stream: None,
                });
            }
            State::Listen => return None,
            State::SynSent | State::SynReceived => {
                // Our SYN (or SYN-ACK), first or again.
                return (self.snd_nxt == 0).then(|| self.emit(now, 0, 0, false, Emit::Normal));
            }
            _ => {}
        }
        if std::mem::take(&mut self.rexmit_pending) && self.snd_una < self.snd_max {
            if self.sack_recovery() {
                // RFC 6675 (4.3): HighACK + 1, up to the first SACKed octet; HighRxt =
                // RescueRxt = its last octet.
                let limit = self.sb.sacked().next().map_or(self.snd_max, |(s, _)| s);
                let (len, fin) = self.rxt_segment(self.snd_una, limit);
                let end = self.snd_una + len as u64 + fin as u64;
                self.sb.high_rxt = end;
                self.sb.rescue_rxt = Some(end);
                return Some(self.emit(now, self.snd_una, len, fin, Emit::Retransmit));
            }
            let (len, fin) = self.segment_at(self.snd_una);
            return Some(self.emit(now, self.snd_una, len, fin, Emit::Retransmit));
        }
        if std::mem::take(&mut self.probe_pending) {
            if let Some(seg) = self.send_probe(now) {
                return Some(seg);
            }
        }
        if self.sack_recovery() {
            if let Some(seg) = self.sack_transmit(now) {
                return Some(seg);
            }
        } else if let Some(seg) = self.send_data(now) {
            return Some(seg);
        }
        if self.ack_now {
            return Some(self.emit(now, self.snd_nxt, 0, false, Emit::Normal));
        }
        self.update_persist(now);
        None
    }

    /// New data (or a go-back-N resend) as the windows, Nagle and SWS avoidance allow, or
    /// the FIN.
    fn send_data(&mut self, now: SimTime) -> Option<Segment> {
        if !self.can_send_data_state() {
            return None;
        }
        let data_end = self.data_end();
        // RFC 6675 §5.1: resending after a timeout, skip what the receiver SACKed since (the
        // marks from before the timeout were expunged).
        let mut sacked_limit = u64::MAX;
        if self.recovery == LossRecovery::Sack && self.snd_nxt < self.snd_max {
            if let Some((_, e)) = self.sb.sacked_range_at(self.snd_nxt) {
                self.snd_nxt = e.min(self.snd_max);
            }
            let nxt = self.snd_nxt;
            if let Some((s, _)) = self.sb.sacked().find(|&(s, _)| s > nxt) {
                sacked_limit = s - nxt;
            }
        }
        if self.snd_nxt < data_end {
            let mss = self.mss as u64;
            if self.tcp.restart_after_idle && self.snd_una == self.snd_max {
                // RFC 5681 §4.1: idle for more than an RTO: restart from RW = min(IW, cwnd).
                if self
                    .last_data_tx
                    .is_some_and(|t| now.saturating_since(t) > self.rtt.rto())
                {
                    self.cwnd = self.cwnd.min(self.initial_window());
                }
            }
            let mut in_flight = self.snd_nxt - self.snd_una;
            if self.recovery == LossRecovery::Sack && self.snd_nxt < self.snd_max {
                // Resending after a timeout: what the receiver SACKed is not in flight.
                let (una, nxt) = (self.snd_una, self.snd_nxt);
                in_flight -= self
                    .sb
                    .sacked()
                    .map(|(s, e)| e.min(nxt).saturating_sub(s.max(una)))
                    .sum::<u64>();
            }
            let usable = self.cwnd.min(self.snd_wnd).saturating_sub(in_flight);
            let avail = data_end - self.snd_nxt;
            let len = mss.min(avail).min(usable).min(sacked_limit);
            if len == 0 {
                return None;
            }
            // Nagle (RFC 9293 §3.7.4): with data unacknowledged, hold back a short segment.
            let nagle_ok = !self.tcp.nagle || self.snd_una == self.snd_max;
            let send = if self.snd_nxt < self.snd_max || len == mss {
                // Full segments, and anything resent after a timeout (as BSD does: neither
                // Nagle nor SWS avoidance holds back a retransmission).
                true
            } else if len == avail {
                nagle_ok
            } else {
                // A short segment although more data is queued: only if the peer's window is
                // what limits it and it is at least half the largest window ever offered
                // (sender SWS avoidance, RFC 9293 §3.8.6.2.1); the persist timer covers the rest.
                let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
                nagle_ok && len == rwnd_room && len >= self.max_snd_wnd / 2
            };
            if !send {
                return None;
            }
            let fin = self.closing && self.snd_nxt + len == data_end;
            self.timers.stop(Timer::Persist);
            self.persist_backoffs = 0;
            return Some(self.emit(now, self.snd_nxt, len as u32, fin, Emit::Normal));
        }
        if self.closing && self.snd_nxt == data_end {
            // A FIN alone. It is not held back by cwnd or rwnd: a zero-window peer drops it and
            // the retransmission timer sends it again.
            return Some(self.emit(now, data_end, 0, true, Emit::Normal));
        }
        None
    }

    /// What the persist timer asked for: with an open window that was too small to use, the
    /// sender SWS "override" (RFC 9293 §3.8.6.2.1) sends what fits; with a zero window, one
    /// octet beyond it (RFC 9293 §3.8.6.1), which does not advance `snd_nxt`.
    fn send_probe(&mut self, now: SimTime) -> Option<Segment> {
        if !self.data_waiting() || self.timers.is_set(Timer::Rto) {
            return None;
        }
        let data_end = self.data_end();
        let room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        if room > 0 {
            let len = room.min(data_end - self.snd_nxt).min(self.mss as u64);
            let fin = self.closing && self.snd_nxt + len == data_end;
            self.timers.stop(Timer::Persist);
            self.persist_backoffs = 0;
            return Some(self.emit(now, self.snd_nxt, len as u32, fin, Emit::Normal));
        }
        self.tcp_stats.window_probes += 1;
        let seg = self.emit(now, self.snd_nxt, 1, false, Emit::Probe);
        self.timers.set(Timer::Persist, now + self.persist_interval());
        Some(seg)
    }

    /// Called when nothing could be sent. Starts the persist timer when data waits and no
    /// retransmission timer runs (RFC 9293 §3.8.6.1); stops it when no data waits.
    ///
    /// A zero window with data still unacknowledged (a reordered old ACK can leave a stale zero
    /// window behind) would let the retransmission timer fire forever without sending: as in
    /// BSD, the persist timer takes over, and its probes resend from `snd_una`.
    fn update_persist(&mut self, now: SimTime) {
        if !self.data_waiting() {
            self.timers.stop(Timer::Persist);
            self.persist_backoffs = 0;
            return;
        }
        if self.snd_wnd == 0 && self.timers.is_set(Timer::Rto) {
            self.timers.stop(Timer::Rto);
            self.snd_nxt = self.snd_una;
        }
        if !self.timers.is_set(Timer::Rto) && !self.timers.is_set(Timer::Persist) {
            self.timers.set(Timer::Persist, now + self.persist_interval());
        }
    }

    /// Payload length and FIN of a retransmission starting at `seq`, within what was sent.
    fn segment_at(&self, seq: u64) -> (u32, bool) {
        let data_end = self.data_end();
        let len = (self.mss as u64)
            .min(data_end.saturating_sub(seq))
            .min(self.snd_max - seq);
        let fin = self.closing && seq + len == data_end && self.snd_max > data_end;
        (len as u32, fin)
    }

    /// Payload length and FIN of a retransmission starting at `seq` that ends by `limit` (the
    /// end of a hole of the scoreboard).
    fn rxt_segment(&self, seq: u64, limit: u64) -> (u32, bool) {
        let data_end = self.data_end();
        let len = (self.mss as u64)
            .min(data_end.saturating_sub(seq))
            .min(limit.saturating_sub(seq))
            .min(self.snd_max.saturating_sub(seq));
        let fin = self.closing && seq + len == data_end && limit > data_end && self.snd_max > data_end;
        (len as u32, fin)
    }

    /// RFC 6675 §5 step (C), in loss recovery: while cwnd − pipe >= 1 SMSS, send what
    /// NextSeg() (§4) chooses.
    fn sack_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let smss = self.mss as u64;
        let dupthresh = self.tcp.dupthresh;
        let pipe = self.sb.pipe(self.snd_una, self.snd_max, dupthresh, smss);
        if self.cwnd < pipe + smss {
            return None;
        }
        let data_end = self.data_end();
        // Rule (2)'s "available unsent data ... the receiver's advertised window allows".
        let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_max);
        let new_len = smss.min(data_end.saturating_sub(self.snd_max)).min(rwnd_room);
        let fin_only = self.closing && self.snd_max == data_end;
        let new_data = self.snd_nxt == self.snd_max && (new_len > 0 || fin_only) && self.can_send_data_state();
        match self
            .sb
            .next_seg(self.snd_una, self.snd_max, dupthresh, smss, new_data)?
        {
            NextSeg::Lost(s, e) | NextSeg::NotLost(s, e) => {
                let (len, fin) = self.rxt_segment(s, e);
                if len == 0 && !fin {
                    return None;
                }
                // (C.2) HighRxt = the highest octet retransmitted.
                self.sb.high_rxt = self.sb.high_rxt.max(s + len as u64 + fin as u64);
                Some(self.emit(now, s, len, fin, Emit::Retransmit))
            }
            NextSeg::NewData => {
                // (C.3): HighData grows (emit moves snd_max).
                if new_len > 0 {
                    let fin = self.closing && self.snd_max + new_len == data_end;
                    Some(self.emit(now, self.snd_max, new_len as u32, fin, Emit::Normal))
                } else {
                    Some(self.emit(now, data_end, 0, true, Emit::Normal))
                }
            }
            NextSeg::Rescue(s, e) => {
                let (len, fin) = self.rxt_segment(s, e);
                if len == 0 && !fin {
                    return None;
                }
                // Rule (4): RescueRxt = RecoveryPoint; HighRxt is not updated.
                self.sb.rescue_rxt = Some(self.recover);
                Some(self.emit(now, s, len, fin, Emit::Retransmit))
            }
        }
    }

    /// Builds the segment `[seq, seq + len)` (+FIN), updates the send state and counters.
    fn emit(&mut self, now: SimTime, seq: u64, len: u32, fin: bool, kind: Emit) -> Segment {
        let syn = seq == 0 && matches!(self.state, State::SynSent | State::SynReceived);
        let mut flags = TcpFlags::NONE;
        if syn {
            flags = flags | TcpFlags::SYN;
        }
        if self.state != State::SynSent {
            flags = flags | TcpFlags::ACK;
        }
        if fin {
            flags = flags | TcpFlags::FIN;
        }
        if len > 0 && seq + len as u64 == self.data_end() {
            flags = flags | TcpFlags::PSH;
        }
        let seg_len = len as u64 + syn as u64 + fin as u64;
        let end = seq + seg_len;
        let retransmission = seg_len > 0 && seq < self.snd_max;
        // A pure ACK carries snd_max, or snd_nxt while probing a zero window (BSD), so that it
        // stays inside the peer's window.
        let wire_seq = if seg_len > 0 {
            seq
        } else if self.timers.is_set(Timer::Persist) {
            self.snd_nxt
        } else {
            self.snd_max
        };
        // RFC 7323 §2.2/§2.3: a SYN's window is never scaled; later ones are once both SYNs
        // carried the option.
        let (adv, window_field) = self.window_to_send(syn);
        // RFC 7323 §3.2: offered on our SYN when configured, on the SYN-ACK only if the SYN
        // offered it, on every other segment once both did. TSecr is 0 on a SYN.
        let timestamp = if self.ts_enabled || (syn && self.state == State::SynSent && self.tcp.timestamps) {
            Some(TcpTimestamp {
                tsval: ts_clock(now),
                tsecr: if flags.contains(TcpFlags::ACK) {
                    self.ts_recent
                } else {
                    0
                },
            })
        } else {
            None
        };
        // RFC 2018 §2 / RFC 7323 §2.2: SACK-permitted and Window Scale on our SYN when
        // configured, on the SYN-ACK only if the SYN carried them.
        let (sack_permitted, window_scale) = match (syn, self.state) {
            (true, State::SynSent) => (self.offers_sack(), self.tcp.window_scaling.then_some(self.rcv_shift)),
            (true, _) => (self.sack_ok, self.wscale_ok.then_some(self.rcv_shift)),
            _ => (false, None),
        };
        let mut repr = TcpRepr {
            src_port: self.cfg.local_port,
            dst_port: self.cfg.remote_port,
            seq: self.snd.wire(wire_seq),
            ack: if flags.contains(TcpFlags::ACK) {
                self.rcv.wire(self.rcv_nxt)
            } else {
                0
            },
            flags,
            window: window_field,
            mss: syn.then_some(self.own_mss as u16),
            sack_permitted,
            timestamp,
            window_scale,
            sack: SackBlocks::NONE,
        };
        if !syn && self.sack_ok && flags.contains(TcpFlags::ACK) {
            repr.sack = self.sack_blocks(len, repr.header_len());
        }
        self.stats.tx_segments += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        if seg_len == 0 {
            self.stats.ack_segments += 1;
        } else {
            if retransmission {
                // Karn (RFC 6298 §3): no sample from an ACK that a retransmission may have
                // caused; the timing in progress is abandoned.
                self.rtt_timing = None;
            } else if self.rtt_timing.is_none() && kind != Emit::Probe && !self.ts_enabled {
                self.rtt_timing = Some((end, now));
            }
            self.snd_max = self.snd_max.max(end);
            if kind != Emit::Probe {
                self.snd_nxt = self.snd_nxt.max(end);
                // RFC 6298 (5.1): start the timer if it is not running.
                if !self.timers.is_set(Timer::Rto) {
                    let rto = if syn { self.syn_timeout() } else { self.rtt.rto() };
                    self.timers.set(Timer::Rto, now + rto);
                }
            }
            if len > 0 {
                self.last_data_tx = Some(now);
                self.cc.on_sent(now, len as u64);
                let sent = (self.snd_max - 1).min(self.app_end);
                while self.msg_ends.front().is_some_and(|&e| e <= sent) {
                    self.msg_ends.pop_front();
                }
            }
        }
        if flags.contains(TcpFlags::ACK) {
            // Every segment carries the ACK: piggybacking satisfies any pending ACK.
            self.ack_now = false;
            self.unacked_bytes = 0;
            self.unacked_segments = 0;
            self.timers.stop(Timer::DelayedAck);
            self.last_adv_edge = self.rcv_nxt + adv;
            self.last_ack_sent = self.rcv_nxt; // RFC 7323 §4.3 (1)
            self.sack_hist.dsack = None; // RFC 2883 §4 (2): reported at most once
        }
        Segment {
            addr: None,
            header: L4Header::Tcp(repr),
            payload_len: len,
            ip_len: self.cfg.sizes.tcp_ip_len(len, repr.header_len()),
            message: None,
            first_tx: now,
            stream: (len > 0).then(|| StreamData {
                offset: seq - 1,
                len,
                retransmission,
            }),
        }
    }

    /// The next event for the application: `Connected`, `DeliveredBytes` (coalesced: only the
    /// latest count is kept between polls), `Closed`.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// The earliest running timer's deadline.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.next()
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
            flight_size: self.snd_max - self.snd_una,
            srtt: self.rtt.srtt(),
            after_timeout: self.after_timeout,
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
                self.rtt
                    .on_sample(SimDuration::from_nanos(echoed * 1_000_000 + since_tick));
            }
            return;
        }
        if let Some((end, sent)) = self.rtt_timing {
            if a >= end {
                self.rtt.on_sample(now.saturating_since(sent));
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
        self.offers_sack()
            && (self.tcp.recovery == LossRecovery::Sack || self.tcp.congestion == CongestionAlgorithm::Cubic)
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
/// ([`LossRecovery::Sack`], or CUBIC) and both ends negotiated SACK, NewReno when it is
/// configured but SACK is not negotiated, else the configured one.
fn effective_recovery(tcp: &TcpConfig, sack_ok: bool) -> LossRecovery {
    let wants_sack = tcp.recovery == LossRecovery::Sack || tcp.congestion == CongestionAlgorithm::Cubic;
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
