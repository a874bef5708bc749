//! The association: [`SctpSocket`].
//!
//! Method kinds follow the TCP socket's: getters; `on_*` for network and timer input;
//! `send`/`send_on`/`close`/`abort` for the application; `poll_*` for outputs, polled in the
//! order `poll_transmit` (until `None`), `poll_event`, `poll_timeout` after every input.
//!
//! Send side: accepted messages are cut into DATA chunks at once (RFC 9260 §6.9) and wait in
//! `unsent`; a chunk gets its TSN when first transmitted and then lives in `sent` (indexed by
//! TSN from the Cumulative TSN Ack Point) until the Cumulative TSN Ack passes it. Receive side:
//! [`Receiver`](super::recv::Receiver).
//!
//! The methods are split by responsibility: this file holds the state, the application and
//! network entry points and the getters; `handshake` the set-up, tear-down and fault
//! management (§5, §8, §9); `send` the data sender (§6.1, §6.3.3, §6.10, §7.2); `sack` SACK
//! processing (§6.2.1, §7.2.4); `inbound` the data receiver (§6.2); `multihome` the peer's
//! addresses, path verification, heartbeats and failover (§5.4, §6.4, §8.2, §8.3); `pr`
//! PR-SCTP (RFC 3758: abandoning messages, the Advanced.Peer.Ack.Point, FORWARD TSN at both
//! ends).

mod handshake;
mod inbound;
mod multihome;
mod pr;
mod sack;
mod send;

use super::path::Path;
use super::recv::Receiver;
use super::{CwndUnit, PrPolicy, SctpConfig, SctpStats, State};
use crate::tcp::Open;
use crate::{L4Header, Message, Segment, SendError, SocketConfig, TransportEvent, TransportReport, TransportStats};
use pr::PrLimit;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{
    pad4, AddrList, ControlChunk, DataChunk, DataFlags, ErrorCause, Payload, SctpRepr, StateCookie,
    DATA_CHUNK_HEADER_LEN, SCTP_COMMON_HEADER_LEN,
};
use tpsim_wire::{SizeConvention, IPV4_HEADER_LEN};

/// Serial-number comparison of TSNs (RFC 9260 §1.6, RFC 1982): `a < b`.
#[inline]
fn tsn_lt(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}
#[inline]
fn tsn_le(a: u32, b: u32) -> bool {
    a == b || tsn_lt(a, b)
}

/// A DATA chunk sent at least once and not yet passed by the Cumulative TSN Ack.
#[derive(Clone, Copy, Debug)]
struct Sent {
    chunk: DataChunk,
    path: usize,
    tx_count: u32,
    /// Acknowledged by a Gap Ack Block (may be reneged).
    gap_acked: bool,
    /// Marked for retransmission (RFC 9260 §6.3.3 E3, §7.2.4).
    marked: bool,
    /// Counted in its path's flight size.
    in_flight: bool,
    /// Miss indications (RFC 9260 §7.2.4).
    misses: u32,
    /// Fast retransmitted already: not eligible again (RFC 9260 §7.2.4 step 5).
    fast_rtx: bool,
    /// Abandoned (RFC 3758 §3.4): never sent again, neither outstanding nor credited to cwnd;
    /// kept until the Cumulative TSN Ack passes it.
    abandoned: bool,
    /// Its message's PR-SCTP policy.
    pr: PrLimit,
}

/// A DATA chunk waiting for its first transmission (TSN and SSN not yet assigned), with its
/// message's PR-SCTP policy.
#[derive(Clone, Copy, Debug)]
struct Queued {
    chunk: DataChunk,
    pr: PrLimit,
}

/// A control chunk waiting to go out, with the verification tag its packet carries.
#[derive(Clone, Copy, Debug)]
struct Ctrl {
    chunk: ControlChunk,
    tag: u32,
    /// The path (peer address) it goes to.
    path: usize,
}

/// What the State Cookie holds (RFC 9260 §5.1.3): enough of the TCB to build the
/// association from a COOKIE ECHO, and a MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cookie {
    peer_tag: u32,
    peer_initial_tsn: u32,
    peer_a_rwnd: u32,
    peer_os: u16,
    peer_mis: u16,
    my_tag: u32,
    my_initial_tsn: u32,
    created_ms: u32,
    /// The peer's INIT carried Forward-TSN-Supported (RFC 3758 §3.3.2).
    peer_forward_tsn: bool,
}

impl Cookie {
    fn encode(&self, secret: u32) -> StateCookie {
        let mut b = [0u8; 32];
        b[0..4].copy_from_slice(&self.peer_tag.to_be_bytes());
        b[4..8].copy_from_slice(&self.peer_initial_tsn.to_be_bytes());
        b[8..12].copy_from_slice(&self.peer_a_rwnd.to_be_bytes());
        b[12..14].copy_from_slice(&self.peer_os.to_be_bytes());
        b[14..16].copy_from_slice(&self.peer_mis.to_be_bytes());
        b[16..20].copy_from_slice(&self.my_tag.to_be_bytes());
        b[20..24].copy_from_slice(&self.my_initial_tsn.to_be_bytes());
        b[24..28].copy_from_slice(&self.created_ms.to_be_bytes());
        b[28] = self.peer_forward_tsn as u8;
        // A 24-bit MAC over the rest.
        let mac = mac(secret, &b[..29]);
        b[29..32].copy_from_slice(&mac.to_be_bytes()[1..]);
        StateCookie(b)
    }
    fn decode(k: &StateCookie, secret: u32) -> Option<Cookie> {
        let b = &k.0;
        let g32 = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let g16 = |o: usize| u16::from_be_bytes([b[o], b[o + 1]]);
        if g32(28) & 0x00ff_ffff != mac(secret, &b[..29]) & 0x00ff_ffff || b[28] > 1 {
            return None;
        }
        Some(Cookie {
            peer_tag: g32(0),
            peer_initial_tsn: g32(4),
            peer_a_rwnd: g32(8),
            peer_os: g16(12),
            peer_mis: g16(14),
            my_tag: g32(16),
            my_initial_tsn: g32(20),
            created_ms: g32(24),
            peer_forward_tsn: b[28] == 1,
        })
    }
}

/// The cookie's MAC: a keyed FNV-1a. RFC 9260 §5.1.3 asks for a cryptographic MAC (HMAC);
/// a simulator has no forger to keep out, only stale or corrupted cookies to tell apart.
fn mac(secret: u32, data: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5 ^ secret;
    for &x in secret.to_be_bytes().iter().chain(data) {
        h ^= x as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// An SCTP endpoint of one association (RFC 9260). See the [module docs](super).
#[derive(Debug)]
pub struct SctpSocket {
    cfg: SocketConfig,
    sctp: SctpConfig,
    open: Open,
    state: State,

    my_tag: u32,
    peer_tag: u32,
    /// Outbound streams in use: min(our OS, peer's MIS) once known.
    out_streams: u16,
    /// Next SSN per outbound stream.
    ssn_next: Vec<u16>,

    // ---- send side ----
    /// Chunks not yet sent (TSN and SSN unassigned), in order.
    unsent: VecDeque<Queued>,
    /// User bytes in `unsent` and `sent` (the send buffer's content).
    buffered_bytes: u64,
    /// Messages whose first fragment is still in `unsent`.
    unsent_msgs: u64,
    /// First transmission time of the message being cut into the packets going out.
    cur_first_tx: u64,
    /// Its SSN (assigned when its first fragment gets its TSN).
    cur_ssn: u16,
    sent: VecDeque<Sent>,
    /// Chunks of `sent` marked for retransmission (kept so that the send path need not scan).
    n_marked: usize,
    /// Chunks of `sent` acknowledged by Gap Ack Blocks (a SACK without blocks need not look at
    /// `sent` beyond the Cumulative TSN Ack when this is 0).
    n_gap_acked: usize,
    /// Chunks of `sent` abandoned (RFC 3758 §3.4), none of them gap-acknowledged.
    n_abandoned: usize,
    /// PR-SCTP in use: both ends announced Forward-TSN-Supported (RFC 3758 §3.3).
    pr: bool,
    /// Advanced.Peer.Ack.Point (RFC 3758 §3.5 A1).
    adv_ack_point: u32,
    /// The New Cumulative TSN of the last FORWARD TSN queued and when.
    last_fwd: Option<(u32, SimTime)>,
    /// Ids (low 32 bits) of the messages abandoned, for the tests.
    #[cfg(test)]
    pub(super) abandoned_ids: Vec<u32>,
    /// Next TSN to assign.
    next_tsn: u32,
    /// Cumulative TSN Ack Point: the highest TSN acknowledged cumulatively.
    cum_ack_point: u32,
    /// The peer's receive window as we estimate it (RFC 9260 §6.2.1), bytes.
    rwnd: u64,
    /// One path per peer address (RFC 9260 §6.4); path 0 is the address the association was
    /// opened with (the active end's choice, the passive end's INIT source).
    paths: Vec<Path>,
    /// The primary path (RFC 9260 §6.4: the scenario's choice, path 0 by default).
    primary: usize,
    /// Where new DATA goes: the primary while it is active, else an active alternate (§6.4.1).
    data_path: usize,
    /// The path the packet being processed came from (replies go back there, §6.4).
    rx_path: usize,
    /// Its source address, as the network told it.
    rx_addr: Option<Ipv4Addr>,
    /// The path of the last packet with DATA received (its SACK goes back there, §6.4).
    sack_path: usize,
    /// Our own addresses, announced in INIT / INIT ACK when there are several (§5.1.2).
    local_addrs: AddrList,
    /// The peer's addresses from its INIT (passive end), until the COOKIE ECHO builds the
    /// TCB (kept here rather than in the State Cookie; no packet differs).
    init_peer_addrs: AddrList,
    /// The primary address the scenario chose, applied once the peer's addresses are known.
    primary_addr: Option<Ipv4Addr>,
    /// Times new DATA moved from the primary to an alternate (§6.4.1).
    failovers: u64,
    /// When new DATA first sent to an alternate after the last failover was acknowledged.
    failover_acked_at: Option<SimTime>,
    /// xorshift state of the HEARTBEAT jitter (§8.3).
    hb_rng: u64,
    /// Association error counter (RFC 9260 §8.1).
    assoc_errors: u32,
    /// Send the Fast Retransmit packet now, ignoring cwnd (RFC 9260 §7.2.4 step 3).
    fast_rtx_now: bool,
    /// New-data packets sent in the current send opportunity (Max.Burst, RFC 9260 §6.1 D).
    burst: u32,
    /// ns-2.35's `eSendNewDataChunks`.
    ns2_flag: bool,
    ns2_used: bool,
    close_requested: bool,

    // ---- handshake / shutdown ----
    /// T1-init or T1-cookie deadline (RFC 9260 §5.1).
    t1: Option<SimTime>,
    /// INIT or COOKIE ECHO retransmissions so far (Max.Init.Retransmits).
    init_retransmits: u32,
    /// When INIT / COOKIE ECHO was first sent, for an RTT measurement if not retransmitted.
    handshake_sent: Option<SimTime>,
    /// The cookie we echo.
    cookie: Option<StateCookie>,
    /// Packets are accepted from the INIT ACK on (the peer may send DATA with COOKIE ACK).
    t2: Option<SimTime>,
    /// Had an association and finished it (no new one is accepted).
    finished: bool,

    // ---- receive side ----
    recv: Option<Receiver>,
    /// A SACK must go out now.
    sack_now: bool,
    /// DATA received and not yet acknowledged (delayed SACK).
    sack_pending: bool,
    packets_unacked: u32,
    delayed_sack: Option<SimTime>,
    /// Received-window value last advertised.
    last_adv: u64,
    /// Id of the last message delivered (to widen the 32-bit PPID back to a message id).
    rx_id_hint: u64,

    ctrl: VecDeque<Ctrl>,
    events: VecDeque<TransportEvent>,
    stats: TransportStats,
    sstats: SctpStats,
}

impl SctpSocket {
    /// An endpoint on a path of `cfg.mtu` bytes. An active open sends its INIT at `now` (it
    /// comes out of the next [`poll_transmit`](Self::poll_transmit)); a passive one answers the
    /// first INIT it receives.
    pub fn new(cfg: SocketConfig, sctp: SctpConfig, open: Open, now: SimTime) -> SctpSocket {
        let my_tag = sctp.initiate_tag.filter(|&t| t != 0).unwrap_or_else(|| {
            let seed = ((cfg.local_port as u32) << 16 | cfg.remote_port as u32) ^ (open == Open::Active) as u32;
            mac(0x7a9c_3e11, &seed.to_be_bytes()).max(1)
        });
        let rtt = sctp.rto_estimator();
        let mut s = SctpSocket {
            cfg,
            sctp,
            open,
            state: State::Closed,
            my_tag,
            peer_tag: 0,
            out_streams: sctp.streams.max(1),
            ssn_next: vec![0; sctp.streams.max(1) as usize],
            unsent: VecDeque::new(),
            buffered_bytes: 0,
            unsent_msgs: 0,
            cur_first_tx: 0,
            cur_ssn: 0,
            sent: VecDeque::new(),
            n_marked: 0,
            n_gap_acked: 0,
            n_abandoned: 0,
            pr: false,
            adv_ack_point: my_tag.wrapping_sub(1),
            last_fwd: None,
            #[cfg(test)]
            abandoned_ids: Vec::new(),
            next_tsn: my_tag,
            cum_ack_point: my_tag.wrapping_sub(1),
            rwnd: 0,
            paths: Vec::with_capacity(1),
            primary: 0,
            data_path: 0,
            rx_path: 0,
            rx_addr: None,
            sack_path: 0,
            local_addrs: AddrList::default(),
            init_peer_addrs: AddrList::default(),
            primary_addr: None,
            failovers: 0,
            failover_acked_at: None,
            hb_rng: (my_tag as u64) << 32 | 0x9e37_79b9,
            assoc_errors: 0,
            fast_rtx_now: false,
            burst: 0,
            ns2_flag: false,
            ns2_used: false,
            close_requested: false,
            t1: None,
            init_retransmits: 0,
            handshake_sent: None,
            cookie: None,
            t2: None,
            finished: false,
            recv: None,
            sack_now: false,
            sack_pending: false,
            packets_unacked: 0,
            delayed_sack: None,
            last_adv: 0,
            rx_id_hint: 0,
            ctrl: VecDeque::new(),
            events: VecDeque::new(),
            stats: TransportStats::default(),
            sstats: SctpStats::default(),
        };
        let path = Path::new(rtt, s.initial_cwnd(), sctp.initial_ssthresh_bytes.unwrap_or(u64::MAX));
        s.paths.push(path);
        if open == Open::Active {
            // RFC 9260 §5.1 A: send INIT, start T1-init, enter COOKIE-WAIT.
            s.state = State::CookieWait;
            s.queue_init();
            s.handshake_sent = Some(now);
            s.t1 = Some(now + s.paths[0].rtt.rto());
        }
        s
    }

    // ------------------------------------------------------------------ sizes

    /// PMDCS (RFC 9260 §1.3): the largest DATA chunk, header included, that fits the path MTU
    /// with its padding (a multiple of 4): 1468 bytes for an MTU of 1500.
    pub fn pmdcs(&self) -> u32 {
        let room = self.cfg.mtu.saturating_sub(IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN);
        (room & !3).max(DATA_CHUNK_HEADER_LEN + 4)
    }
    /// Largest user data of one DATA chunk (PMDCS − 16): longer messages are fragmented.
    pub fn max_fragment(&self) -> u32 {
        (self.pmdcs() - DATA_CHUNK_HEADER_LEN).min(u16::MAX as u32)
    }
    /// The unit of the window formulas (RFC 9260 §7.2: PMDCS; RFC 4960: MTU), bytes.
    pub fn cwnd_unit(&self) -> u64 {
        match self.sctp.cwnd_unit {
            CwndUnit::Pmdcs => self.pmdcs() as u64,
            CwndUnit::Mtu => self.cfg.mtu as u64,
        }
    }
    /// RFC 9260 §7.2.1: min(4·PMDCS, max(2·PMDCS, 4404)) (RFC 4960: MTU and 4380).
    fn initial_cwnd(&self) -> u64 {
        let u = self.cwnd_unit();
        (4 * u).min((2 * u).max(self.sctp.initial_cwnd_floor_bytes as u64))
    }
    /// Size of a chunk for the flight size and the window arithmetic.
    fn size(&self, c: &DataChunk) -> u64 {
        c.len as u64
            + if self.sctp.flight_counts_headers {
                DATA_CHUNK_HEADER_LEN as u64
            } else {
                0
            }
    }
    /// The IP length of `p` and the user data it carries, with one pass over its DATA chunks.
    fn lens(&self, p: &SctpRepr) -> (u32, u32) {
        let (user, data) = p.data_lens();
        let sack = p.sack.as_ref().map_or(0, |s| s.chunk_len());
        let ip_len = match self.cfg.sizes {
            SizeConvention::Standard => {
                IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN + p.control.as_ref().map_or(0, |c| pad4(c.chunk_len()))
            }
            // ns-2.35 `SendPacket()`: chunks + SCTP_HDR_SIZE (12) + ipHeaderSize_ (20).
            SizeConvention::Ns2 => {
                IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN + p.control.as_ref().map_or(0, |c| pad4(c.ns2_chunk_len()))
            }
        } + sack
            + data;
        debug_assert_eq!(
            ip_len,
            match self.cfg.sizes {
                SizeConvention::Standard => IPV4_HEADER_LEN + p.packet_len(),
                SizeConvention::Ns2 => IPV4_HEADER_LEN + SCTP_COMMON_HEADER_LEN + p.ns2_chunks_len(),
            }
        );
        debug_assert_eq!(user, p.payload_len());
        (ip_len, user)
    }

    // ------------------------------------------------------------------ application input

    /// Hands a message over on stream 0, ordered.
    ///
    /// # Errors
    /// As [`send_on`](Self::send_on).
    pub fn send(&mut self, now: SimTime, msg: Message) -> Result<(), SendError> {
        self.send_on(now, msg, 0, false)
    }

    /// Hands a message over on `stream` (taken modulo the number of outbound streams, so that an
    /// application need not know how many the peer accepted), ordered or `unordered` (RFC 9260
    /// §6.6), with the configured [`SctpConfig::pr_policy`]. It is cut into DATA chunks of at
    /// most PMDCS − 16 bytes (§6.9).
    ///
    /// # Errors
    /// [`SendError::TooLarge`] if the message exceeds the whole send buffer;
    /// [`SendError::BufferFull`] if the buffer lacks room now or the association is closing or
    /// closed.
    pub fn send_on(&mut self, now: SimTime, msg: Message, stream: u16, unordered: bool) -> Result<(), SendError> {
        self.send_pr(now, msg, stream, unordered, self.sctp.pr_policy)
    }

    /// [`send_on`](Self::send_on) with the message's own PR-SCTP policy (used only if PR-SCTP
    /// is negotiated; see the [module docs](super)). A timed message's lifetime counts from
    /// `msg.created`.
    ///
    /// # Errors
    /// As [`send_on`](Self::send_on).
    pub fn send_pr(
        &mut self,
        _now: SimTime,
        msg: Message,
        stream: u16,
        unordered: bool,
        pr: PrPolicy,
    ) -> Result<(), SendError> {
        if msg.len > self.sctp.send_buffer_bytes {
            return Err(SendError::TooLarge {
                max: self.sctp.send_buffer_bytes,
            });
        }
        if !self.can_send(msg.len) {
            return Err(SendError::BufferFull);
        }
        self.begin_input();
        let stream = stream % self.out_streams;
        // The SSN is assigned with the first fragment's TSN (a message abandoned before it is
        // sent takes none, RFC 3758 §4.1 TR3).
        let ssn = 0;
        let frag = self.max_fragment();
        let pr = PrLimit::new(pr, msg.created.0);
        let chunk = |len: u32, mut flags: DataFlags| {
            if unordered {
                flags = flags.with(DataFlags::UNORDERED);
            }
            DataChunk {
                flags,
                tsn: 0,
                stream_id: stream,
                ssn,
                len: len as u16,
                msg_id: msg.id as u32,
                payload: Payload {
                    created_ns: msg.created.0,
                    first_tx_ns: 0,
                },
            }
        };
        if msg.len <= frag {
            // Not fragmented: one chunk, B and E.
            self.unsent.push_back(Queued {
                chunk: chunk(msg.len, DataFlags::WHOLE),
                pr,
            });
        } else {
            let mut left = msg.len;
            let mut first = true;
            loop {
                let len = left.min(frag);
                left -= len;
                let mut flags = DataFlags::default();
                if first {
                    flags = flags.with(DataFlags::BEGIN);
                }
                if left == 0 {
                    flags = flags.with(DataFlags::END);
                }
                self.unsent.push_back(Queued {
                    chunk: chunk(len, flags),
                    pr,
                });
                first = false;
                if left == 0 {
                    break;
                }
            }
        }
        self.buffered_bytes += msg.len as u64;
        self.unsent_msgs += 1;
        Ok(())
    }

    /// Whether [`send`](Self::send) would accept `len` bytes now.
    pub fn can_send(&self, len: u32) -> bool {
        let open = match self.state {
            State::CookieWait | State::CookieEchoed | State::Established => true,
            State::Closed => self.open == Open::Passive && !self.finished,
            _ => false,
        };
        open && !self.close_requested && self.buffered_bytes + len as u64 <= self.sctp.send_buffer_bytes as u64
    }

    /// The application has nothing more to send (RFC 9260 §9.2 SHUTDOWN primitive): once every
    /// chunk is acknowledged, SHUTDOWN. Queued until the association is up.
    pub fn close(&mut self, now: SimTime) {
        self.begin_input();
        self.close_requested = true;
        // Before the association is up (a passive end too), `established` shuts it down.
        if self.state == State::Established {
            self.state = State::ShutdownPending;
            self.check_shutdown(now);
        }
    }

    /// The ABORT primitive (RFC 9260 §9.1): ABORT now, drop everything.
    pub fn abort(&mut self, _now: SimTime) {
        self.begin_input();
        if self.has_tcb() && self.peer_tag != 0 {
            self.ctrl.clear();
            self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::Abort {
                    t: false,
                    cause: Some(ErrorCause::USER_ABORT),
                },
                tag: self.peer_tag,
                path: self.data_path,
            });
        }
        self.enter_closed();
    }

    /// Models a receiving application that stops (`true`) or resumes reading: complete messages
    /// stay buffered and the advertised window shrinks (RFC 9260 §6.2).
    pub fn set_receive_paused(&mut self, _now: SimTime, paused: bool) {
        self.begin_input();
        let Some(r) = self.recv.as_mut() else { return };
        r.paused = paused;
        if !paused {
            self.drain_ready();
            self.window_update_check();
        }
    }

    // ------------------------------------------------------------------ network input

    /// Processes a packet from the network (RFC 9260 §8.5 verification tag first, then its
    /// chunks in order). Packets of other protocols are counted and ignored.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.stats.rx_segments += 1;
        let L4Header::Sctp(ref boxed) = seg.header else { return };
        let p: &SctpRepr = boxed;
        self.rx_addr = seg.addr;
        self.rx_path = self.path_of(seg.addr);
        self.begin_input();
        self.apply_idle_decay(now);
        if let Some(ControlChunk::Init(i)) = p.control {
            self.on_init(now, p, &i);
            return;
        }
        if !self.has_tcb() {
            self.on_out_of_the_blue(now, p);
            return;
        }
        // RFC 9260 §8.5.1: the tag must be ours, except ABORT and SHUTDOWN COMPLETE with the T bit
        // (the peer's tag, reflected) and INIT ACK (ours, checked in COOKIE-WAIT).
        let tag_ok = match p.control {
            Some(ControlChunk::Abort { t: true, .. }) | Some(ControlChunk::ShutdownComplete { t: true }) => {
                p.verification_tag == self.peer_tag
            }
            _ => p.verification_tag == self.my_tag,
        };
        if !tag_ok {
            return;
        }
        let mut got_sack = false;
        if let Some(c) = p.control {
            if !self.on_control(now, &c) {
                return;
            }
            got_sack |= matches!(c, ControlChunk::CookieAck);
        }
        if let Some(s) = &p.sack {
            if self.state != State::CookieWait && self.state != State::CookieEchoed {
                self.on_sack(now, s);
                got_sack = true;
            }
        }
        if !p.data.is_empty() {
            self.on_data(now, p);
        }
        if got_sack && self.sctp.ns2_send_rule {
            // ns-2.35 `recv()`: a SACK sets eSendNewDataChunks; SendMuch() then runs (unless
            // chunks await retransmission) and clears it, whether or not anything was sent.
            self.ns2_flag = true;
            self.ns2_used = !self.has_marked();
        }
        self.check_shutdown(now);
    }

    /// Whether chunks await retransmission (RFC 9260 §6.1 C).
    fn has_marked(&self) -> bool {
        debug_assert_eq!(self.n_marked, self.sent.iter().filter(|x| x.marked).count());
        self.n_marked > 0
    }

    /// Whether a TCB exists (RFC 9260 §5.1: from the INIT ACK on for the active end, from a
    /// valid COOKIE ECHO for the passive end).
    fn has_tcb(&self) -> bool {
        self.state != State::Closed
    }

    // ------------------------------------------------------------------ timers

    /// Processes timer expiries due at `now`; safe to call spuriously.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.begin_input();
        self.apply_idle_decay(now);
        if self.t1.is_some_and(|t| t <= now) {
            self.t1 = None;
            self.on_t1(now);
        }
        if self.t2.is_some_and(|t| t <= now) {
            self.t2 = None;
            self.on_t2(now);
        }
        for pi in 0..self.paths.len() {
            if self.paths[pi].t3_rtx.is_some_and(|t| t <= now) {
                self.paths[pi].t3_rtx = None;
                self.on_t3(now, pi);
            }
            if self.paths[pi].hb_at.is_some_and(|t| t <= now) {
                self.paths[pi].hb_at = None;
                self.on_heartbeat_timer(now, pi);
            }
        }
        if self.delayed_sack.is_some_and(|t| t <= now) {
            self.delayed_sack = None;
            if self.sack_pending {
                self.sack_now = true;
            }
        }
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// The next deadline at which [`on_timeout`](Self::on_timeout) must be called.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let mut t = [self.t1, self.t2, self.delayed_sack].into_iter().flatten().min();
        for p in &self.paths {
            for x in [p.t3_rtx, p.hb_at].into_iter().flatten() {
                t = Some(t.map_or(x, |y| y.min(x)));
            }
        }
        t
    }

    // ------------------------------------------------------------------ getters

    /// Counters.
    pub fn stats(&self) -> TransportStats {
        self.stats
    }
    /// SCTP-specific counters.
    pub fn sctp_stats(&self) -> SctpStats {
        self.sstats
    }
    /// The association state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Whether this is the active end (it opened the association).
    pub fn is_active(&self) -> bool {
        self.open == Open::Active
    }
    /// The primary path.
    pub fn path(&self) -> &Path {
        &self.paths[self.primary]
    }
    /// cwnd of the primary path, bytes.
    pub fn cwnd(&self) -> u64 {
        self.path().cwnd
    }
    /// ssthresh of the primary path, bytes (`u64::MAX` until set).
    pub fn ssthresh(&self) -> u64 {
        self.path().ssthresh
    }
    /// partial_bytes_acked of the primary path, bytes.
    pub fn partial_bytes_acked(&self) -> u64 {
        self.path().partial_bytes_acked
    }
    /// Flight size of the primary path, bytes.
    pub fn flight_size(&self) -> u64 {
        self.path().flight_size
    }
    /// The peer's receive window as estimated (RFC 9260 §6.2.1), bytes.
    pub fn peer_rwnd(&self) -> u64 {
        self.rwnd
    }
    /// Current RTO of the primary path (back-off included).
    pub fn rto(&self) -> SimDuration {
        self.path().rtt.rto()
    }
    /// Smoothed RTT of the primary path.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.path().rtt.srtt()
    }
    /// The association error counter (RFC 9260 §8.1).
    pub fn association_errors(&self) -> u32 {
        self.assoc_errors
    }
    /// Retransmissions of the current INIT or COOKIE ECHO (compared with
    /// Max.Init.Retransmits, RFC 9260 §5.1; it exceeds it by one after giving up).
    pub fn init_retransmissions(&self) -> u32 {
        self.init_retransmits
    }
    /// Outbound streams in use.
    pub fn outbound_streams(&self) -> u16 {
        self.out_streams
    }
    /// Inbound streams (0 before the association exists).
    pub fn inbound_streams(&self) -> u16 {
        self.recv.as_ref().map_or(0, |r| r.stream_count())
    }
    /// The verification tag we chose (our Initiate Tag).
    pub fn local_tag(&self) -> u32 {
        self.my_tag
    }
    /// The peer's Initiate Tag.
    pub fn peer_tag(&self) -> u32 {
        self.peer_tag
    }
    /// Next TSN to be assigned.
    pub fn next_tsn(&self) -> u32 {
        self.next_tsn
    }
    /// Chunks sent and not yet cumulatively acknowledged.
    pub fn outstanding_chunks(&self) -> usize {
        self.sent.len()
    }
    /// Messages accepted whose first fragment was not yet transmitted.
    pub fn buffered_messages(&self) -> u64 {
        self.unsent_msgs
    }
    /// Whether PR-SCTP is in use: both ends announced it (RFC 3758 §3.3).
    pub fn pr_negotiated(&self) -> bool {
        self.pr
    }
    /// The Advanced.Peer.Ack.Point (RFC 3758 §3.5 A1).
    pub fn advanced_peer_ack_point(&self) -> u32 {
        self.adv_ack_point
    }
    /// The Cumulative TSN Ack Point: the highest TSN of ours the peer acknowledged cumulatively.
    pub fn cum_ack_point(&self) -> u32 {
        self.cum_ack_point
    }

    /// The `extra` columns: `fast_retransmit_chunks`, `abandoned_messages`; a multi-homed
    /// endpoint adds `failovers`,
    /// `failover_acked_at_s` (when new DATA first sent to an alternate after the last
    /// failover was acknowledged, s), `pf_entries` (with the PF state on: times a destination
    /// became potentially failed, RFC 7829 §3) and `path<k>_data_bytes` (user bytes of DATA
    /// sent to peer address k, retransmissions included).
    fn report_extra(&self) -> Vec<(&'static str, Option<f64>)> {
        const PATH_BYTES: [&str; multihome::MAX_PATHS] = [
            "path0_data_bytes",
            "path1_data_bytes",
            "path2_data_bytes",
            "path3_data_bytes",
            "path4_data_bytes",
        ];
        let mut v = vec![
            (
                "fast_retransmit_chunks",
                Some(self.sstats.fast_retransmit_chunks as f64),
            ),
            ("abandoned_messages", Some(self.sstats.abandoned_messages as f64)),
        ];
        if self.paths.len() > 1 {
            v.push(("failovers", Some(self.failovers as f64)));
            v.push(("failover_acked_at_s", self.failover_acked_at.map(|t| t.as_secs_f64())));
            if self.sctp.pf_max_retrans.is_some() {
                v.push(("pf_entries", Some(self.sstats.pf_entries as f64)));
            }
            for (k, p) in self.paths.iter().enumerate() {
                v.push((PATH_BYTES[k], Some(p.data_bytes_sent as f64)));
            }
        }
        v
    }

    /// The per-ACK sample: the primary path's `cwnd_bytes`, `ssthresh_bytes` (once set) and
    /// `srtt_s`; the RTT sample counters of all paths (RFC 9260 §6.3.1).
    pub fn ack_sample(&self) -> crate::AckSample {
        let p = &self.paths[self.primary];
        let (mut n, mut sum) = (0, 0);
        for q in &self.paths {
            n += q.rtt.samples();
            sum += q.rtt.sum_ns();
        }
        crate::AckSample {
            acks: self.stats.acks_received,
            rtt_samples: n,
            rtt_sum_ns: sum,
            cwnd_bytes: Some(p.cwnd as f64),
            ssthresh_bytes: (p.ssthresh < u64::MAX / 2).then_some(p.ssthresh as f64),
            srtt_s: p.rtt.srtt().map(|d| d.as_secs_f64()),
            ..crate::AckSample::default()
        }
    }

    /// What the endpoint reports to the metrics. Both ends report their own sending (segments,
    /// retransmissions, RTT, timeouts, congestion state of the primary path) and receiving
    /// (head-of-line blocking of the messages they received: the sink's figures are the flow's).
    pub fn report(&self) -> TransportReport {
        // The congestion state as of the last input (the idle decay is applied lazily then).
        let p = &self.paths[self.primary];
        let hol = self.recv.as_ref().map(|r| &r.hol);
        TransportReport {
            stats: self.stats,
            rtt_samples: p.rtt.samples(),
            rtt_sum_ns: p.rtt.sum_ns(),
            timeouts: self.sstats.timeouts,
            fast_retransmits: self.sstats.fast_retransmits,
            rto: Some(p.rtt.base_rto()),
            gave_up: self.sstats.gave_up > 0,
            congestion: vec![
                ("cwnd_bytes", Some(p.cwnd as f64)),
                (
                    "ssthresh_bytes",
                    (p.ssthresh < u64::MAX / 2).then_some(p.ssthresh as f64),
                ),
                ("srtt_s", p.rtt.srtt().map(|d| d.as_secs_f64())),
            ],
            extra: self.report_extra(),
            rx_extra: vec![
                ("hol_blocking_mean_s", hol.and_then(|h| h.mean_s())),
                ("hol_blocking_p95_s", hol.and_then(|h| h.quantile_s(0.95))),
                (
                    "streams_used",
                    self.recv.as_ref().map(|r| r.streams_used() as f64).filter(|&n| n > 0.0),
                ),
            ],
        }
    }
}
