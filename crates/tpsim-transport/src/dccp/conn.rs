//! One DCCP connection endpoint: the state machine of RFC 4340 §8 around the sequence
//! windows, the received-packet history, the CCID and the send queue.

use super::ackvec::{AckHistory, Arrival};
use super::ccid2::Ccid2;
use super::ccid3::{Ccid3Receiver, Ccid3Sender};
use super::seqwin::{seq_add, seq_between, seq_lt, seq_sub, SeqWindow};
use super::{Ccid, DccpConfig, DccpStats, State};
use crate::tcp::Open;
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent, TransportReport, TransportStats};
use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::dccp::{
    DccpOptions, DccpRepr, DccpType, FeatureOption, FeatureOptionKind, FEATURE_ACK_RATIO, FEATURE_CCID,
    FEATURE_SEND_ACK_VECTOR, RESET_CLOSED, RESET_NO_CONNECTION,
};
use tpsim_wire::{SizeConvention, IPV4_HEADER_LEN};

/// The Service Code tpsim's connections use (RFC 4340 §8.1.2; any fixed value).
const SERVICE_CODE: u32 = 0x7470_7369; // "tpsi"
/// Acks whose content we remember for acknowledgements of acknowledgements.
const SENT_ACKS: usize = 64;

/// The congestion control of the endpoint's two half-connections. One per socket: CCID 2
/// inline (no indirection on its hot path), CCID 3's larger state boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Cc {
    Two(Ccid2),
    Three(Box<(Ccid3Sender, Ccid3Receiver)>),
}

/// A DCCP endpoint (RFC 4340) with CCID 2 or CCID 3.
#[derive(Debug)]
pub struct DccpSocket {
    cfg: SocketConfig,
    dc: DccpConfig,
    active: bool,
    state: State,
    seqs: SeqWindow,
    have_isr: bool,
    hist: AckHistory,
    /// (sequence number, Acknowledgement Number) of our recent packets carrying an Ack Vector.
    sent_acks: [(u64, u64); SENT_ACKS],
    sent_acks_at: usize,
    ccid: Ccid,
    cc: Option<Cc>,
    queue: VecDeque<Message>,
    events: VecDeque<TransportEvent>,
    // What to send next.
    want_request: bool,
    want_response: bool,
    want_ack: bool,
    want_close: bool,
    want_closereq: bool,
    want_reset: Option<(u8, u64, u64)>,
    want_sync: Option<u64>,
    want_syncack: Option<u64>,
    /// Received packets not yet acknowledged by any of ours.
    unacked_rx: bool,
    /// Data packets received since our last acknowledgement.
    data_since_ack: u32,
    /// The Ack Ratio the peer set for our acknowledgements (RFC 4340 §11.3).
    rx_ack_ratio: u16,
    confirm_ack_ratio: Option<u16>,
    response_seq: Option<u64>,
    // Timers.
    ack_at: Option<SimTime>,
    request_at: Option<SimTime>,
    request_rto: SimDuration,
    request_first: SimTime,
    partopen_at: Option<SimTime>,
    partopen_rto: SimDuration,
    close_at: Option<SimTime>,
    close_rto: SimDuration,
    close_first: SimTime,
    timewait_at: Option<SimTime>,
    last_sync: Option<SimTime>,
    app_closed: bool,
    /// The server asked us (the client) to close.
    closereq_rcvd: bool,
    connected_sent: bool,
    closed_sent: bool,
    s_sum: u64,
    s_n: u64,
    /// Non-data packets sent since the last data packet (RFC 4340 §7.7).
    ndp_run: u32,
    stats: TransportStats,
    dstats: DccpStats,
}

fn opt(kind: FeatureOptionKind, feature: u8, value: u16) -> FeatureOption {
    FeatureOption { kind, feature, value }
}

impl DccpSocket {
    /// A new endpoint: an active one (the client) sends its Request at the first
    /// `poll_transmit`; a passive one (the server) listens (RFC 4340 §8.1).
    pub fn new(cfg: SocketConfig, dc: DccpConfig, open: Open, now: SimTime) -> Self {
        // ISS: any value (§7.2 asks for an unpredictable one); derived from the ports here
        // and placed near the top of the 48-bit space so that wrap-around is exercised.
        let iss = ((cfg.local_port as u64) << 32 | (cfg.remote_port as u64) << 8 | 0x5a) | 0xffff_0000_0000;
        let active = open == Open::Active;
        DccpSocket {
            cfg,
            dc,
            active,
            state: if active { State::Request } else { State::Listen },
            seqs: SeqWindow::new(iss & ((1 << 48) - 1), dc.sequence_window),
            have_isr: false,
            hist: AckHistory::new(),
            sent_acks: [(u64::MAX, 0); SENT_ACKS],
            sent_acks_at: 0,
            ccid: dc.ccid,
            cc: None,
            queue: VecDeque::with_capacity(dc.send_queue_len.min(4096)),
            events: VecDeque::with_capacity(8),
            want_request: active,
            want_response: false,
            want_ack: false,
            want_close: false,
            want_closereq: false,
            want_reset: None,
            want_sync: None,
            want_syncack: None,
            unacked_rx: false,
            data_since_ack: 0,
            rx_ack_ratio: dc.ack_ratio.max(1),
            confirm_ack_ratio: None,
            response_seq: None,
            ack_at: None,
            request_at: None,
            request_rto: dc.request_rto,
            request_first: now,
            partopen_at: None,
            partopen_rto: dc.partopen_timeout,
            close_at: None,
            close_rto: dc.request_rto,
            close_first: now,
            timewait_at: None,
            last_sync: None,
            app_closed: false,
            closereq_rcvd: false,
            connected_sent: false,
            closed_sent: false,
            s_sum: 0,
            s_n: 0,
            ndp_run: 0,
            stats: TransportStats::default(),
            dstats: DccpStats::default(),
        }
    }

    /// The largest message one Data packet carries on a path of `mtu` bytes (see the module
    /// docs).
    pub fn max_message(sizes: SizeConvention, mtu: u32) -> u32 {
        tpsim_wire::dccp::max_message(sizes, mtu)
    }

    /// Queues `msg` for one Data packet.
    ///
    /// # Errors
    /// [`SendError::TooLarge`] above [`DccpSocket::max_message`]; [`SendError::QueueFull`] when
    /// the send queue holds `send_queue_len` messages or the connection is over.
    pub fn send(&mut self, _now: SimTime, msg: Message) -> Result<(), SendError> {
        let max = Self::max_message(self.cfg.sizes, self.cfg.mtu);
        if msg.len > max {
            return Err(SendError::TooLarge { max });
        }
        if self.queue.len() >= self.dc.send_queue_len || self.finished() || self.app_closed {
            return Err(SendError::QueueFull);
        }
        self.queue.push_back(msg);
        Ok(())
    }

    /// Whether a message of `len` bytes would be accepted now.
    pub fn can_send(&self, len: u32) -> bool {
        len <= Self::max_message(self.cfg.sizes, self.cfg.mtu)
            && self.queue.len() < self.dc.send_queue_len
            && !self.finished()
            && !self.app_closed
    }

    fn finished(&self) -> bool {
        matches!(
            self.state,
            State::Closed | State::TimeWait | State::Closing | State::CloseReq
        ) || (self.state == State::Listen && self.closed_sent)
    }

    /// The application has nothing more to send: once the queue is empty the client sends
    /// Close and the server CloseReq (RFC 4340 §8.3). A listening server keeps listening (its
    /// client may still connect and send).
    pub fn close(&mut self, _now: SimTime) {
        self.app_closed = true;
    }

    /// Whether this endpoint opened actively (the client).
    pub fn is_active(&self) -> bool {
        self.active
    }
    /// The connection state.
    pub fn state(&self) -> State {
        self.state
    }
    /// The negotiated CCID.
    pub fn ccid(&self) -> Ccid {
        self.ccid
    }
    /// The sequence-number state.
    pub fn seq_window(&self) -> &SeqWindow {
        &self.seqs
    }
    /// The received-packet history behind the Ack Vector.
    pub fn history(&self) -> &AckHistory {
        &self.hist
    }
    /// CCID 2's sender state, if CCID 2 runs.
    pub fn ccid2(&self) -> Option<&Ccid2> {
        match &self.cc {
            Some(Cc::Two(c)) => Some(c),
            _ => None,
        }
    }
    /// CCID 3's sender and receiver state, if CCID 3 runs.
    pub fn ccid3(&self) -> Option<(&Ccid3Sender, &Ccid3Receiver)> {
        match &self.cc {
            Some(Cc::Three(b)) => Some((&b.0, &b.1)),
            _ => None,
        }
    }
    /// The Ack Ratio the peer set for our acknowledgements.
    pub fn rx_ack_ratio(&self) -> u16 {
        self.rx_ack_ratio
    }
    /// DCCP counters.
    pub fn dccp_stats(&self) -> DccpStats {
        let mut d = self.dstats;
        match &self.cc {
            Some(Cc::Two(c)) => {
                d.data_acked = c.acked;
                d.data_lost = c.lost;
                d.late_acked = c.late_acked;
            }
            Some(Cc::Three(b)) => d.data_lost = b.1.lost_packets(),
            None => {}
        }
        d
    }
    /// Counters (see the module docs).
    pub fn stats(&self) -> TransportStats {
        self.stats
    }
    /// Messages accepted and not yet sent.
    pub fn buffered_messages(&self) -> u64 {
        self.queue.len() as u64
    }

    fn mean_s(&self) -> u32 {
        self.s_sum.checked_div(self.s_n).map_or(1000, |m| m as u32)
    }

    fn start_cc(&mut self) {
        if self.cc.is_some() {
            return;
        }
        let dc = &self.dc;
        self.cc = Some(match self.ccid {
            Ccid::Ccid2 => {
                let s = self.queue.front().map(|m| m.len).unwrap_or(1000);
                let w = dc.ccid2_initial_cwnd.unwrap_or_else(|| Ccid2::rfc3390_initial_cwnd(s));
                Cc::Two(Ccid2::new(
                    w,
                    dc.ccid2_initial_ssthresh,
                    dc.ccid2_dupack_threshold,
                    (dc.ccid2_initial_rto, dc.ccid2_min_rto, dc.ccid2_max_rto),
                    dc.ack_ratio,
                ))
            }
            Ccid::Ccid3 => {
                let mut tx = Ccid3Sender::new(dc.ccid3_s, dc.ccid3_t_mbi, dc.ccid3_oscillation_prevention);
                tx.wc_past_acked = dc.ccid3_wc_past_acked;
                Cc::Three(Box::new((tx, Ccid3Receiver::new(dc.ccid3_s))))
            }
        });
    }

    fn enter_open(&mut self) {
        self.state = State::Open;
        self.partopen_at = None;
        self.request_at = None;
        if !self.connected_sent {
            self.connected_sent = true;
            self.events.push_back(TransportEvent::Connected);
        }
    }

    fn enter_closed(&mut self, timewait: Option<SimTime>) {
        self.state = if timewait.is_some() {
            State::TimeWait
        } else {
            State::Closed
        };
        self.timewait_at = timewait;
        self.request_at = None;
        self.partopen_at = None;
        self.close_at = None;
        self.ack_at = None;
        self.want_ack = false;
        self.want_close = false;
        self.want_closereq = false;
        self.want_request = false;
        self.want_response = false;
        self.dstats.queue_dropped += self.queue.len() as u64;
        self.queue.clear();
        if !self.closed_sent {
            self.closed_sent = true;
            self.events.push_back(TransportEvent::Closed);
        }
    }

    /// Abandons the connection (handshake or close not answered): Reset (Aborted, §5.6) if
    /// the peer is known, then CLOSED.
    fn give_up(&mut self) {
        self.dstats.gave_up = 1;
        if self.have_isr {
            self.want_reset = Some((tpsim_wire::dccp::RESET_ABORTED, 0, self.seqs.gsr));
        }
        self.enter_closed(None);
    }

    /// Processes a packet from the network.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        // Borrowed, not copied out of the segment.
        let h = match &seg.header {
            L4Header::Dccp(h) => h,
            _ => return,
        };
        self.stats.rx_segments += 1;
        self.dstats.received += 1;
        let t = h.packet_type;
        if t.carries_data() && matches!(self.state, State::Listen | State::Request) {
            self.dstats.data_not_delivered += 1;
        }
        if self.on_segment_handshake(now, h, t) {
            return;
        }
        // §7.5.3: sequence and acknowledgement validity.
        if !self.seqs.valid(t, h.seq, h.ack) {
            self.on_invalid(now, h, t);
            return;
        }
        if self.state == State::CloseReq {
            // The client is alive: the CloseReq give-up clock restarts.
            self.close_first = now;
        }
        let old_gsr = self.seqs.gsr;
        self.seqs.on_valid(t, h.seq, h.ack);
        let arrival = self.hist.record(h.seq);
        if arrival != Arrival::New {
            if t.carries_data() {
                self.dstats.duplicates += 1;
            }
            return;
        }
        // Every new packet is acknowledged by our next packet carrying an Acknowledgement
        // Number (for a sender, that acknowledges the receiver's Acks: RFC 4341 §6.1.1).
        self.unacked_rx = true;
        // A gap in the peer's sequence numbers: its packets (Acks, for a sender) were lost.
        let gap = seq_lt(old_gsr, h.seq) && seq_sub(h.seq, old_gsr) > 1;
        if t.has_ack() {
            self.on_ack_fields(now, h, gap);
        }
        self.on_features(h);
        if !self.on_valid_type(now, h, t) {
            return;
        }
        // §8.1.5: the client leaves PARTOPEN on any valid packet but Response, Reset or Sync.
        if self.state == State::PartOpen && !matches!(t, DccpType::Response | DccpType::Sync | DccpType::SyncAck) {
            self.enter_open();
        }
        // A server answers an Ack that only acknowledges its Response, so that a client
        // with nothing to send leaves PARTOPEN (our reading of §8.1.5).
        if !self.active && t == DccpType::Ack && self.response_seq == Some(h.ack) {
            self.want_ack = true;
        }
        if t.carries_data() {
            self.on_data(now, h, seg);
        }
    }

    /// The states before sequence numbers are synchronised (LISTEN, REQUEST) and after the
    /// connection ended (CLOSED, TIMEWAIT). Returns whether the packet was handled here.
    #[inline]
    fn on_segment_handshake(&mut self, now: SimTime, h: &DccpRepr, t: DccpType) -> bool {
        match self.state {
            State::Listen => {
                // ns-2.35's agent without `listen` is CLOSED and ignores the packet.
                if !self.dc.listens {
                    return true;
                }
                // §8.1.2: a server in LISTEN answers a Request; sequence numbers are not
                // checked (§7.5.3).
                if t == DccpType::Request {
                    self.seqs.set_isr(h.seq);
                    self.have_isr = true;
                    self.hist.record(h.seq);
                    self.negotiate_server(h);
                    self.state = State::Respond;
                    self.want_response = true;
                    // A handshake that never completes is dropped after `give_up_after` (the
                    // server may time out RESPOND, §8.1.3).
                    self.request_at = Some(now + self.dc.give_up_after);
                } else if t != DccpType::Reset {
                    self.want_reset = Some((RESET_NO_CONNECTION, seq_add(h.ack, 1), h.seq));
                }
                return true;
            }
            State::Closed | State::TimeWait => {
                // §8.3.1 (CLOSED): a Close, CloseReq or Request gets a Reset (No Connection),
                // so that a closer whose Reset was lost finishes.
                if matches!(t, DccpType::Close | DccpType::CloseReq | DccpType::Request) {
                    self.want_reset = Some((RESET_NO_CONNECTION, seq_add(h.ack, 1), h.seq));
                }
                if t.carries_data() {
                    self.dstats.data_not_delivered += 1;
                }
                return true;
            }
            State::Request => {
                // §8.1.3: the client accepts a Response acknowledging one of its Requests
                // (AWL ≤ ackno ≤ AWH), setting ISR = GSR.
                let ack_ok = seq_between(self.seqs.awl(), h.ack, self.seqs.awh());
                if t == DccpType::Response && ack_ok {
                    self.seqs.set_isr(h.seq);
                    self.have_isr = true;
                    self.hist.record(h.seq);
                    self.seqs.on_valid(t, h.seq, h.ack);
                    self.negotiate_client(h);
                    self.start_cc();
                    self.request_at = None;
                    // §8.1.4: PARTOPEN, acknowledge the Response at once, retransmit the Ack
                    // on a timer until the server's next packet.
                    self.state = State::PartOpen;
                    self.want_ack = true;
                    self.unacked_rx = true;
                    self.partopen_rto = self.dc.partopen_timeout;
                    self.partopen_at = Some(now + self.partopen_rto);
                } else if t == DccpType::Reset && ack_ok {
                    self.dstats.peer_reset = 1;
                    self.enter_closed(None);
                }
                return true;
            }
            _ => {}
        }
        false
    }

    /// §7.5.4: a packet failing the §7.5.3 checks.
    #[inline]
    fn on_invalid(&mut self, now: SimTime, h: &DccpRepr, t: DccpType) {
        self.dstats.invalid += 1;
        if t.carries_data() {
            self.dstats.data_not_delivered += 1;
        }
        // §7.5.4: answer with a Sync acknowledging the invalid packet (a Reset included),
        // rate-limited; an invalid Sync or SyncAck is ignored, so that two endpoints never
        // exchange Syncs without end.
        let limited = self
            .last_sync
            .is_some_and(|l| now.saturating_since(l) < self.dc.sync_interval);
        if !limited && !matches!(t, DccpType::Sync | DccpType::SyncAck) {
            self.want_sync = Some(h.seq);
            self.last_sync = Some(now);
        }
    }

    /// A valid, new packet in a synchronised state, by type. Returns `false` when the
    /// connection closed (nothing more to process).
    #[inline]
    fn on_valid_type(&mut self, now: SimTime, h: &DccpRepr, t: DccpType) -> bool {
        match t {
            DccpType::Request if self.state == State::Respond => {
                self.want_response = true;
                self.request_at = Some(now + self.dc.give_up_after);
            }
            DccpType::Response if self.state == State::PartOpen => self.want_ack = true,
            DccpType::Ack | DccpType::DataAck if self.state == State::Respond => {
                self.start_cc();
                self.enter_open();
            }
            DccpType::CloseReq if !self.active => {}
            DccpType::CloseReq => {
                // §8.3: the client answers a CloseReq with Close and enters CLOSING; tpsim
                // answers once its own application is done and its queue empty (see
                // `poll_transmit`), so that a two-way flow's other direction is not cut. In
                // CLOSING, the Close is repeated.
                self.closereq_rcvd = true;
                if self.state == State::Closing {
                    self.want_close = true;
                }
            }
            DccpType::Close => {
                // §8.3: a Close is answered with a Reset (Closed) and the endpoint closes.
                self.want_reset = Some((RESET_CLOSED, 0, h.seq));
                self.enter_closed(None);
                return false;
            }
            DccpType::Reset => {
                // §8.3: a Reset in CLOSING ends in TIMEWAIT; elsewhere the connection is over.
                if self.state == State::Closing {
                    let tw = now + SimDuration(self.dc.msl.0.saturating_mul(2));
                    self.enter_closed(Some(tw));
                } else {
                    self.dstats.peer_reset = 1;
                    self.enter_closed(None);
                }
                return false;
            }
            // §7.5.4: a valid Sync gets a SyncAck acknowledging it.
            DccpType::Sync => self.want_syncack = Some(h.seq),
            _ => {}
        }
        true
    }

    fn on_ack_fields(&mut self, now: SimTime, h: &DccpRepr, gap: bool) {
        // RFC 4340 §11.4.2 (acknowledgements of acknowledgements): once the peer acknowledged
        // one of our packets that carried an Ack Vector, the state it reported need not be
        // repeated.
        if let Some(&(_, acked_upto)) = self.sent_acks.iter().find(|(s, _)| *s == h.ack) {
            self.hist.trim(seq_add(acked_upto, 1));
        }
        match &mut self.cc {
            Some(Cc::Two(c)) => {
                self.stats.acks_received += 1;
                let before = c.acked;
                c.on_ack(now, h.ack, &h.options.ack_vector);
                if gap && h.packet_type == DccpType::Ack {
                    c.on_ack_loss(now);
                }
                // RFC 4341 §6.1.1: the HC-Sender acknowledges the Acks it gets; with no data to
                // piggy-back on, a pure Ack after the delayed-ack time.
                if c.acked > before && self.queue.is_empty() && self.ack_at.is_none() {
                    self.ack_at = Some(now + self.dc.ack_delay);
                }
            }
            Some(Cc::Three(b)) => {
                if let (Some(x_recv), Some(p_inv)) = (h.options.receive_rate, h.options.loss_event_rate) {
                    self.stats.acks_received += 1;
                    b.0.on_feedback(now, h.ack, h.options.elapsed_time, x_recv, p_inv);
                }
            }
            None => {}
        }
    }

    fn on_features(&mut self, h: &DccpRepr) {
        for f in h.options.features() {
            match (f.kind, f.feature) {
                // RFC 4341 §6.1.2 / RFC 4340 §11.3: Ack Ratio is located at the HC-Sender
                // (Change L); the HC-Receiver applies it and answers Confirm R.
                (FeatureOptionKind::ChangeL, FEATURE_ACK_RATIO) => {
                    self.rx_ack_ratio = f.value.max(1);
                    self.confirm_ack_ratio = Some(self.rx_ack_ratio);
                }
                (FeatureOptionKind::ConfirmR, FEATURE_ACK_RATIO) => {
                    if let Some(Cc::Two(c)) = &mut self.cc {
                        c.ack_ratio_confirmed(f.value);
                    }
                }
                _ => {}
            }
        }
    }

    /// §6.3.1: the server selects from the client's preference list (one CCID here); an
    /// unknown CCID falls back to the server's own.
    fn negotiate_server(&mut self, h: &DccpRepr) {
        for f in h.options.features() {
            if f.feature == FEATURE_CCID && f.kind == FeatureOptionKind::ChangeL {
                if let Some(c) = Ccid::from_number(f.value) {
                    self.ccid = c;
                }
            }
        }
    }

    /// §6.6: the client takes the CCID the server confirmed.
    fn negotiate_client(&mut self, h: &DccpRepr) {
        for f in h.options.features() {
            if f.feature == FEATURE_CCID && f.kind == FeatureOptionKind::ConfirmL {
                if let Some(c) = Ccid::from_number(f.value) {
                    self.ccid = c;
                }
            }
        }
    }

    fn on_data(&mut self, now: SimTime, h: &DccpRepr, seg: &Segment) {
        // §8.5 Step 15: the data of a valid packet goes to the application, also in CLOSING
        // (the peer sent it before it saw our Close; a two-way flow's other direction is not
        // cut by this end's close).
        if !matches!(
            self.state,
            State::Open | State::PartOpen | State::Respond | State::CloseReq | State::Closing
        ) {
            self.dstats.data_not_delivered += 1;
            return;
        }
        if let Some(m) = seg.message {
            self.dstats.delivered += 1;
            self.events.push_back(TransportEvent::Delivered {
                message: m,
                first_tx: seg.first_tx,
            });
        }
        self.unacked_rx = true;
        self.data_since_ack += 1;
        match &mut self.cc {
            Some(Cc::Three(b)) => {
                // RFC 4342 §6: feedback once per RTT (window counter) and at once on a new
                // loss event.
                if b.1
                    .on_data(now, h.seq, h.options.ndp_count.unwrap_or(0), h.ccval, seg.payload_len)
                {
                    self.want_ack = true;
                }
            }
            _ => {
                // RFC 4341 §6.1 / RFC 4340 §11.3: at least one Ack per Ack Ratio data packets;
                // otherwise after the delayed-ack time.
                if self.data_since_ack >= self.rx_ack_ratio as u32 {
                    self.want_ack = true;
                } else if self.ack_at.is_none() {
                    self.ack_at = Some(now + self.dc.ack_delay);
                }
            }
        }
    }

    fn start_closing(&mut self, now: SimTime, closereq: bool) {
        if closereq {
            self.state = State::CloseReq;
            self.want_closereq = true;
        } else {
            self.state = State::Closing;
            self.want_close = true;
        }
        self.close_rto = self.dc.request_rto;
        self.close_first = now;
        self.close_at = Some(now + self.close_rto);
    }

    /// Processes timer expiries; safe to call spuriously.
    pub fn on_timeout(&mut self, now: SimTime) {
        if self.state == State::Respond && self.request_at.is_some_and(|t| t <= now) {
            self.request_at = None;
            self.give_up();
        }
        if self.request_at.is_some_and(|t| t <= now) {
            // §8.1.1: retransmit the Request with exponential back-off; give up eventually.
            if now.saturating_since(self.request_first) >= self.dc.give_up_after {
                self.request_at = None;
                self.give_up();
            } else {
                self.want_request = true;
                self.request_rto = SimDuration(self.request_rto.0.saturating_mul(2)).min(self.dc.max_request_rto);
                self.request_at = None;
            }
        }
        if self.partopen_at.is_some_and(|t| t <= now) {
            // §8.1.5: retransmit the Ack in PARTOPEN, backing off.
            self.want_ack = true;
            self.partopen_rto = SimDuration(self.partopen_rto.0.saturating_mul(2)).min(self.dc.max_request_rto);
            self.partopen_at = Some(now + self.partopen_rto);
            if now.saturating_since(self.request_first) >= self.dc.give_up_after {
                self.give_up();
            }
        }
        if self.ack_at.is_some_and(|t| t <= now) {
            self.ack_at = None;
            self.want_ack = true;
        }
        if self.close_at.is_some_and(|t| t <= now) {
            // §8.3: Close and CloseReq are retransmitted with back-off until answered.
            if now.saturating_since(self.close_first) >= self.dc.give_up_after {
                self.give_up();
            } else {
                if self.state == State::Closing {
                    self.want_close = true;
                } else if self.state == State::CloseReq {
                    self.want_closereq = true;
                }
                self.close_rto = SimDuration(self.close_rto.0.saturating_mul(2)).min(self.dc.max_request_rto);
                self.close_at = Some(now + self.close_rto);
            }
        }
        if self.timewait_at.is_some_and(|t| t <= now) {
            self.timewait_at = None;
            self.state = State::Closed;
        }
        let live = !matches!(self.state, State::Closed | State::TimeWait);
        match &mut self.cc {
            _ if !live => {}
            Some(Cc::Two(c)) => c.on_rto(now),
            Some(Cc::Three(b)) => b.0.on_timeout(now),
            None => {}
        }
    }

    /// The next deadline.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let mut d = [
            self.request_at,
            self.partopen_at,
            self.ack_at,
            self.close_at,
            self.timewait_at,
            None,
            None,
        ];
        let live = !matches!(self.state, State::Closed | State::TimeWait);
        match &self.cc {
            _ if !live => {}
            Some(Cc::Two(c)) => d[5] = c.rto_deadline(),
            Some(Cc::Three(b)) => {
                d[5] = b.0.timer_deadline();
                if self.can_send_data_state() && !self.queue.is_empty() {
                    d[6] = b.0.next_send_time();
                }
            }
            None => {}
        }
        d.into_iter().flatten().min()
    }

    #[cfg(test)]
    pub(super) fn seqs_for_test_set_gss(&mut self, gss: u64) {
        self.seqs.gss = gss;
    }

    fn can_send_data_state(&self) -> bool {
        matches!(self.state, State::Open | State::PartOpen)
    }

    /// The next delivered message or connection event.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// The next packet to send, if any.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if let Some((code, seq, ack)) = self.want_reset.take() {
            let seq = if self.have_isr || self.state != State::Listen {
                self.seqs.next_seq()
            } else {
                seq
            };
            return Some(self.control(DccpType::Reset, seq, ack, code));
        }
        if self.want_request && self.state == State::Request {
            // §8.1.1: the Request carries the client's feature preferences (§6).
            self.want_request = false;
            if self.dstats.control_sent == 0 {
                self.request_first = now;
            }
            self.request_at = Some(now + self.request_rto);
            let seq = self.seqs.next_seq();
            let mut r = self.header(DccpType::Request, seq);
            let c = self.dc.ccid.number() as u16;
            let o = &mut r.options;
            o.push_feature(opt(FeatureOptionKind::ChangeL, FEATURE_CCID, c));
            o.push_feature(opt(FeatureOptionKind::ChangeR, FEATURE_CCID, c));
            if self.dc.ccid == Ccid::Ccid2 {
                // RFC 4341 §3: CCID 2 needs the Ack Vector in both directions.
                o.push_feature(opt(FeatureOptionKind::ChangeL, FEATURE_SEND_ACK_VECTOR, 1));
                o.push_feature(opt(FeatureOptionKind::ChangeR, FEATURE_SEND_ACK_VECTOR, 1));
            }
            return Some(self.finish(now, r, None));
        }
        if self.want_response && self.state == State::Respond {
            self.want_response = false;
            let seq = self.seqs.next_seq();
            self.response_seq = Some(seq);
            let mut r = self.header(DccpType::Response, seq);
            r.ack = self.seqs.gsr;
            let c = self.ccid.number() as u16;
            let o = &mut r.options;
            o.push_feature(opt(FeatureOptionKind::ConfirmL, FEATURE_CCID, c));
            o.push_feature(opt(FeatureOptionKind::ConfirmR, FEATURE_CCID, c));
            if self.ccid == Ccid::Ccid2 {
                o.push_feature(opt(FeatureOptionKind::ConfirmL, FEATURE_SEND_ACK_VECTOR, 1));
                o.push_feature(opt(FeatureOptionKind::ConfirmR, FEATURE_SEND_ACK_VECTOR, 1));
            }
            return Some(self.finish(now, r, None));
        }
        if let Some(ack) = self.want_sync.take() {
            let seq = self.seqs.next_seq();
            self.dstats.syncs_sent += 1;
            return Some(self.control(DccpType::Sync, seq, ack, 0));
        }
        if let Some(ack) = self.want_syncack.take() {
            let seq = self.seqs.next_seq();
            return Some(self.control(DccpType::SyncAck, seq, ack, 0));
        }
        if self.want_close && self.state == State::Closing {
            self.want_close = false;
            let seq = self.seqs.next_seq();
            return Some(self.control(DccpType::Close, seq, self.seqs.gsr, 0));
        }
        if self.want_closereq && self.state == State::CloseReq {
            self.want_closereq = false;
            let seq = self.seqs.next_seq();
            return Some(self.control(DccpType::CloseReq, seq, self.seqs.gsr, 0));
        }
        if self.can_send_data_state() && !self.queue.is_empty() && self.cc_allows(now) {
            let msg = self.queue.pop_front().expect("non-empty");
            if self.queue.is_empty() {
                if let Some(Cc::Three(b)) = &mut self.cc {
                    b.0.note_data_limited();
                }
            }
            // §8.1.5: every packet in PARTOPEN acknowledges; elsewhere a DataAck when
            // something is owed an acknowledgement.
            let t = if self.state == State::PartOpen || self.unacked_rx || self.want_ack || self.feature_pending() {
                DccpType::DataAck
            } else {
                DccpType::Data
            };
            let seq = self.seqs.next_seq();
            let mut r = self.header(t, seq);
            self.s_sum += msg.len as u64;
            self.s_n += 1;
            let mean_s = self.mean_s();
            match &mut self.cc {
                Some(Cc::Two(c)) => c.on_data_sent(now, seq),
                Some(Cc::Three(b)) => r.ccval = b.0.on_data_sent(now, seq, msg.len, mean_s),
                None => {}
            }
            return Some(self.finish(now, r, Some(msg)));
        }
        let acking = matches!(
            self.state,
            State::Open | State::PartOpen | State::Respond | State::CloseReq
        );
        if self.want_ack && acking && self.have_isr {
            if self.state == State::Respond {
                // The server's Ack would be invalid before OPEN; the Response stands for it.
                self.want_ack = false;
                return None;
            }
            let seq = self.seqs.next_seq();
            let r = self.header(DccpType::Ack, seq);
            return Some(self.finish(now, r, None));
        }
        if self.app_closed && self.queue.is_empty() && matches!(self.state, State::Open | State::PartOpen) {
            // §8.3: the client closes with Close, the server asks the client with CloseReq.
            self.start_closing(now, !self.active);
            return self.poll_transmit(now);
        }
        None
    }

    fn feature_pending(&self) -> bool {
        self.confirm_ack_ratio.is_some() || matches!(&self.cc, Some(Cc::Two(c)) if c.ack_ratio_unconfirmed())
    }

    fn cc_allows(&self, now: SimTime) -> bool {
        match &self.cc {
            Some(Cc::Two(c)) => c.can_send(),
            Some(Cc::Three(b)) => b.0.can_send(now),
            None => false,
        }
    }

    fn header(&self, t: DccpType, seq: u64) -> DccpRepr {
        DccpRepr {
            src_port: self.cfg.local_port,
            dst_port: self.cfg.remote_port,
            packet_type: t,
            ccval: 0,
            seq,
            ack: if t.has_ack() { self.seqs.gsr } else { 0 },
            service_code: if matches!(t, DccpType::Request | DccpType::Response) {
                SERVICE_CODE
            } else {
                0
            },
            reset_code: 0,
            options: DccpOptions::NONE,
        }
    }

    fn control(&mut self, t: DccpType, seq: u64, ack: u64, code: u8) -> Segment {
        let mut r = self.header(t, seq);
        r.ack = ack;
        r.reset_code = code;
        self.dstats.control_sent += 1;
        self.ndp_run = self.ndp_run.saturating_add(1);
        self.segment(r, None, SimTime::ZERO)
    }

    /// Adds the acknowledgement options and feature options, counts and wraps the packet.
    fn finish(&mut self, now: SimTime, mut r: DccpRepr, msg: Option<Message>) -> Segment {
        let t = r.packet_type;
        if t.has_ack() && t != DccpType::Response {
            self.unacked_rx = false;
            self.want_ack = false;
            self.data_since_ack = 0;
            self.ack_at = None;
            match &mut self.cc {
                Some(Cc::Two(_)) => {
                    // RFC 4341 §3 / RFC 4340 §11.4: every acknowledgement carries the Ack
                    // Vector; remember it for acknowledgements of acknowledgements.
                    if let Some((v, _)) = self.hist.encode() {
                        r.options.ack_vector = v;
                        self.sent_acks[self.sent_acks_at] = (r.seq, r.ack);
                        self.sent_acks_at = (self.sent_acks_at + 1) % SENT_ACKS;
                    }
                }
                Some(Cc::Three(b)) => {
                    // RFC 4342 §6: the feedback packet carries Loss Event Rate, Receive Rate
                    // and Elapsed Time.
                    if let Some((elapsed, x_recv, p_inv)) = b.1.feedback(now) {
                        r.options.elapsed_time = Some(elapsed);
                        r.options.receive_rate = Some(x_recv);
                        r.options.loss_event_rate = Some(p_inv);
                    }
                }
                None => {}
            }
            if let Some(v) = self.confirm_ack_ratio.take() {
                r.options
                    .push_feature(opt(FeatureOptionKind::ConfirmR, FEATURE_ACK_RATIO, v));
            }
        }
        if let Some(Cc::Two(c)) = &self.cc {
            if c.ack_ratio_unconfirmed() && matches!(t, DccpType::Data | DccpType::DataAck | DccpType::Ack) {
                r.options
                    .push_feature(opt(FeatureOptionKind::ChangeL, FEATURE_ACK_RATIO, c.ack_ratio()));
            }
        }
        match t {
            DccpType::Data | DccpType::DataAck => {
                // RFC 4342 §6.1 / RFC 4340 §7.7: CCID 3 data carry the NDP Count so that the
                // receiver tells lost data from non-data sequence numbers.
                if self.ccid == Ccid::Ccid3 && self.ndp_run > 0 {
                    r.options.ndp_count = Some(self.ndp_run);
                }
                self.ndp_run = 0;
                self.stats.tx_segments += 1;
                self.dstats.data_sent += 1;
            }
            DccpType::Ack => {
                self.ndp_run = self.ndp_run.saturating_add(1);
                self.stats.ack_segments += 1;
                self.dstats.acks_sent += 1;
            }
            _ => {
                self.ndp_run = self.ndp_run.saturating_add(1);
                self.dstats.control_sent += 1;
            }
        }
        self.segment(r, msg, now)
    }

    fn segment(&self, r: DccpRepr, msg: Option<Message>, now: SimTime) -> Segment {
        let payload = msg.map(|m| m.len).unwrap_or(0);
        let ip_len = match self.cfg.sizes {
            SizeConvention::Standard => IPV4_HEADER_LEN + r.header_len() + payload,
            SizeConvention::Ns2 => r.ns2_overhead() + payload,
        };
        Segment {
            addr: None,
            header: L4Header::Dccp(r),
            payload_len: payload,
            ip_len,
            message: msg,
            first_tx: now,
            stream: None,
            ecn: tpsim_wire::Ecn::NotEct,
        }
    }

    /// The per-ACK sample: CCID 2's `cwnd_packets`, `ssthresh_packets` (once below the
    /// "arbitrarily high" start, RFC 4341 §5) and `srtt_s`; CCID 3's `x_bps`, `x_recv_bps`
    /// (the last feedback's) and `srtt_s` (R). Default before the CCID is set up.
    pub fn ack_sample(&self) -> crate::AckSample {
        let mut a = crate::AckSample {
            acks: self.stats.acks_received,
            ..crate::AckSample::default()
        };
        match &self.cc {
            Some(Cc::Two(c)) => {
                let rtt = c.rtt();
                a.rtt_samples = rtt.samples();
                a.rtt_sum_ns = rtt.sum_ns();
                a.cwnd_packets = Some(c.cwnd() as f64);
                a.ssthresh_packets = (c.ssthresh() < u32::MAX / 2).then_some(c.ssthresh() as f64);
                a.srtt_s = rtt.srtt().map(|s| s.as_secs_f64());
            }
            Some(Cc::Three(b)) => {
                a.rtt_samples = b.0.rtt_samples();
                a.rtt_sum_ns = b.0.rtt_sum_ns();
                a.x_bps = Some(b.0.x_bytes_per_s() * 8.0);
                a.x_recv_bps = b.0.rate().and_then(|r| r.last_x_recv()).map(|x| 8.0 * x);
                a.srtt_s = b.0.srtt_s();
            }
            None => {}
        }
        a
    }

    /// What the endpoint reports to the metrics (see the module docs).
    pub fn report(&self) -> TransportReport {
        let d = self.dccp_stats();
        let mut rep = TransportReport {
            stats: self.stats,
            ..TransportReport::default()
        };
        rep.gave_up = d.gave_up > 0;
        let mut ack_ratio = None;
        match &self.cc {
            Some(Cc::Two(c)) => {
                let rtt = c.rtt();
                rep.rtt_samples = rtt.samples();
                rep.rtt_sum_ns = rtt.sum_ns();
                rep.timeouts = c.timeouts;
                rep.rto = Some(rtt.base_rto());
                rep.congestion = vec![
                    ("cwnd_packets", Some(c.cwnd() as f64)),
                    ("srtt_s", rtt.srtt().map(|s| s.as_secs_f64())),
                ];
                ack_ratio = Some(c.ack_ratio() as f64);
            }
            Some(Cc::Three(b)) => {
                rep.rtt_samples = b.0.rtt_samples();
                rep.rtt_sum_ns = b.0.rtt_sum_ns();
                rep.congestion = vec![
                    ("x_bps", Some(b.0.x_bytes_per_s() * 8.0)),
                    ("p", Some(b.0.p())),
                    ("srtt_s", b.0.srtt_s()),
                ];
            }
            None => {
                rep.congestion = match self.dc.ccid {
                    Ccid::Ccid2 => vec![("cwnd_packets", None), ("srtt_s", None)],
                    Ccid::Ccid3 => vec![("x_bps", None), ("p", None), ("srtt_s", None)],
                };
            }
        }
        rep.extra = vec![
            ("dccp_lost_packets", Some(d.data_lost as f64)),
            ("dccp_syncs", Some(d.syncs_sent as f64)),
            ("dccp_ack_ratio", ack_ratio),
        ];
        rep
    }
}
