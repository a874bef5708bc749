//! The ns-2 TCP sender agent ([`Sender`]): `TcpAgent` and its Reno, NewReno and SACK
//! subclasses (RTT estimation, window growth and cuts, output, ACK and timeout handling).

use super::*;

impl Sender {
    /// `TcpAgent::reset`, `TcpAgent::rtt_init`, `TcpAgent::set_initial_window`.
    pub(super) fn new(ns2: &Ns2TcpConfig) -> Sender {
        let tick = ns2.tcp_tick.0.max(1);
        Sender {
            t_seqno: 0,
            curseq: 0,
            next_pkt: if ns2.syn { 1 } else { 0 },
            highest_ack: -1,
            last_ack: -1,
            maxseq: -1,
            recover: 0,
            cwnd: if ns2.syn && ns2.delay_growth {
                1.0
            } else {
                ns2.window_init as f64
            },
            ssthresh: ns2.window as i64,
            wnd_init: ns2.window_init,
            dupacks: 0,
            dupwnd: 0,
            last_cwnd_action: CwndAction::None,
            firstpartial: false,
            fastrecov: false,
            after_timeout: false,
            pipe: -1,
            scb: sack1::ScoreBoard::new(),
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: SimTime::ZERO,
            t_srtt: ((ns2.srtt_init.0 / tick) as i64) << SRTT_BITS,
            t_rttvar: ((ns2.rttvar_init.0 / tick) as i64) << RTTVAR_BITS,
            t_rtxcur: ns2.rtxcur_init,
            t_backoff: 1,
            rtx_at: None,
            msgs: VecDeque::new(),
            timeouts: 0,
            fast_retransmits: 0,
            rtt_samples: 0,
            rtt_sum_ns: 0,
            padding_bytes: 0,
        }
    }

    /// Packets produced and never sent.
    pub(super) fn unsent(&self, ns2: &Ns2TcpConfig) -> i64 {
        let first_data = if ns2.syn { 1 } else { 0 };
        self.next_pkt - (self.maxseq + 1).max(first_data)
    }

    /// Reno and NewReno (whose window `dupwnd_` inflates); Tahoe and Sack1 use
    /// `TcpAgent::window`.
    pub(super) fn reno_like(ns2: &Ns2TcpConfig) -> bool {
        matches!(ns2.variant, Ns2Variant::Reno | Ns2Variant::NewReno)
    }

    /// `TcpAgent::window` / `RenoTcpAgent::window`: how far past the last ACK the sender may
    /// send, whole packets; Reno's is inflated by `dupwnd_`.
    pub(super) fn window(&self, ns2: &Ns2TcpConfig) -> i64 {
        let wnd = ns2.window as i64;
        if Self::reno_like(ns2) {
            (self.cwnd as i64 + self.dupwnd as i64).min(wnd)
        } else if self.cwnd < ns2.window as f64 {
            self.cwnd as i64
        } else {
            wnd
        }
    }

    /// `windowd`: the same, fractional.
    pub(super) fn windowd(&self, ns2: &Ns2TcpConfig) -> f64 {
        let inflated = if Self::reno_like(ns2) {
            self.cwnd + self.dupwnd as f64
        } else {
            self.cwnd
        };
        inflated.min(ns2.window as f64)
    }

    /// `TcpAgent::initial_window` (`windowInitOption_ 1`).
    pub(super) fn initial_window(&self) -> f64 {
        self.wnd_init as f64
    }

    pub(super) fn srtt(&self, ns2: &Ns2TcpConfig) -> Option<SimDuration> {
        (self.t_srtt > 0).then(|| SimDuration((self.t_srtt >> SRTT_BITS) as u64 * ns2.tcp_tick.0))
    }

    /// `TcpAgent::rtt_timeout` for backoff `backoff`: `minrto_` applies to the unbacked-off
    /// value (RFC 2988 behaviour, `rfc2988_`), `maxrto_` to the result, and never less than
    /// two ticks.
    pub(super) fn timeout_with(&self, ns2: &Ns2TcpConfig, backoff: u64) -> SimDuration {
        let base = if self.t_rtxcur < ns2.min_rto {
            ns2.min_rto
        } else {
            self.t_rtxcur
        };
        let mut t = SimDuration(base.0.saturating_mul(backoff)).min(ns2.max_rto);
        let floor = SimDuration(ns2.tcp_tick.0.saturating_mul(2));
        if t < floor {
            t = floor;
        }
        t
    }

    /// `TcpAgent::set_rtx_timer`: (re)start the timer with the current RTO.
    pub(super) fn set_rtx_timer(&mut self, ns2: &Ns2TcpConfig, now: SimTime) {
        self.rtx_at = Some(now + self.timeout_with(ns2, self.t_backoff));
    }

    /// `TcpAgent::rtt_backoff`: double the backoff while below 64 or while the RTO is below
    /// `maxrto_`; past 8, fold `srtt` into `rttvar` and forget it.
    pub(super) fn rtt_backoff(&mut self, ns2: &Ns2TcpConfig) {
        if self.t_backoff < 64 || self.timeout_with(ns2, self.t_backoff) < ns2.max_rto {
            self.t_backoff = self.t_backoff.saturating_mul(2);
        }
        if self.t_backoff > 8 {
            self.t_rttvar += self.t_srtt >> SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    /// `TcpAgent::reset_rtx_timer`: optionally back off, restart the timer, and unless `mild`
    /// go back to the first unacknowledged packet; the timing in progress is abandoned (Karn).
    pub(super) fn reset_rtx_timer(&mut self, ns2: &Ns2TcpConfig, now: SimTime, mild: bool, backoff: bool) {
        if backoff {
            self.rtt_backoff(ns2);
        }
        self.set_rtx_timer(ns2, now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// `TcpAgent::rtt_update` (without timestamps): the sample in whole ticks of a clock that
    /// started at `boot_time_`, i.e. the tick boundaries crossed between send and ACK (at
    /// least one); then the integer EWMA of srtt (gain 1/8) and rttvar (gain 1/4), and
    /// RTO = srtt + 4·rttvar ticks.
    pub(super) fn rtt_update(&mut self, ns2: &Ns2TcpConfig, now: SimTime, tao: SimDuration) {
        let tick = ns2.tcp_tick.0.max(1);
        let sent = now.0.saturating_sub(tao.0).saturating_add(ns2.boot_time.0);
        let phase = sent % tick;
        let t_rtt = (((tao.0 + phase) / tick) as i64).max(1);
        if self.t_srtt != 0 {
            let delta = t_rtt - (self.t_srtt >> SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            let dev = delta.abs() - (self.t_rttvar >> RTTVAR_BITS);
            self.t_rttvar += dev;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = t_rtt << SRTT_BITS;
            self.t_rttvar = t_rtt << (RTTVAR_BITS - 1);
        }
        let scaled = (self.t_rttvar << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.t_srtt;
        let ticks = (scaled >> SRTT_BITS).max(0) as u64;
        self.t_rtxcur = SimDuration(ticks.saturating_mul(tick));
        self.rtt_samples += 1;
        self.rtt_sum_ns += tao.0;
    }

    /// `TcpAgent::slowdown` for the flags these agents use: `ssthresh` halves the
    /// (inflated, `window_`-bounded) window if asked, `cwnd` is cut as `cut` says, and
    /// `ssthresh` stays at least 2.
    pub(super) fn slowdown(&mut self, ns2: &Ns2TcpConfig, halve_ssthresh: bool, cut: CwndCut) {
        let halfwin = self.windowd(ns2) / 2.0;
        if halve_ssthresh {
            self.ssthresh = halfwin as i64;
        }
        self.cwnd = match cut {
            CwndCut::Half => halfwin,
            CwndCut::Restart | CwndCut::One => 1.0,
        };
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
    }

    /// `TcpAgent::opencwnd` (`windowOption_ 1`): +1 in slow start, `increase_num_ / cwnd` in
    /// congestion avoidance, bounded by `maxcwnd_`.
    pub(super) fn opencwnd(&mut self, ns2: &Ns2TcpConfig) {
        if self.cwnd < self.ssthresh as f64 {
            self.cwnd += 1.0;
        } else {
            self.cwnd += ns2.increase_num / self.cwnd;
        }
        if ns2.max_cwnd > 0 && self.cwnd as i64 > ns2.max_cwnd as i64 {
            self.cwnd = ns2.max_cwnd as f64;
        }
    }

    /// `TcpAgent::send_much`: send while the window allows and packets are available, at most
    /// `maxburst` (0: no limit).
    pub(super) fn send_much(&mut self, io: &mut Io, now: SimTime, maxburst: u32) {
        if io.ns2.variant == Ns2Variant::Sack1 {
            self.sack1_send_much(io, now);
            return;
        }
        let mut win = self.window(io.ns2);
        let mut n = 0;
        while self.t_seqno <= self.highest_ack + win && self.t_seqno < self.curseq {
            self.output(io, now, self.t_seqno);
            self.t_seqno += 1;
            n += 1;
            win = self.window(io.ns2);
            if maxburst > 0 && n == maxburst {
                break;
            }
        }
    }

    /// `TcpAgent::send_one`: on an early duplicate ACK, one new packet if the advertised
    /// window allows and the sender is less than `dupacks` packets past `cwnd`.
    pub(super) fn send_one(&mut self, io: &mut Io, now: SimTime) {
        if self.t_seqno <= self.highest_ack + io.ns2.window as i64
            && self.t_seqno < self.curseq
            && (self.t_seqno as f64) <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
        {
            self.output(io, now, self.t_seqno);
            self.t_seqno += 1;
        }
    }

    /// `TcpAgent::output`: emit packet `seqno` (the SYN if it is 0 and `syn_`), start timing
    /// it if it is new and nothing is timed, and start the timer if none runs or nothing was
    /// outstanding.
    pub(super) fn output(&mut self, io: &mut Io, now: SimTime, seqno: i64) {
        let ns2 = io.ns2;
        let is_syn = ns2.syn && seqno == 0;
        let force_timer = self.highest_ack == self.maxseq;
        let retransmission = seqno <= self.maxseq;
        let mut repr = TcpRepr {
            src_port: io.cfg.local_port,
            dst_port: io.cfg.remote_port,
            seq: pkt_pos(ns2, seqno) as u32,
            ack: 0,
            flags: TcpFlags::ACK,
            window: wire_window(ns2),
            mss: None,
            sack_permitted: false,
            timestamp: None,
            window_scale: None,
            sack: tpsim_wire::tcp::SackBlocks::NONE,
        };
        let seg = if is_syn {
            repr.flags = TcpFlags::SYN;
            Segment {
                addr: None,
                header: L4Header::Tcp(repr),
                payload_len: 0,
                ip_len: ns2.header_size,
                message: None,
                first_tx: now,
                stream: None,
                ecn: tpsim_wire::Ecn::NotEct,
            }
        } else {
            let i = self.msgs.partition_point(|m| m.last < seqno);
            let rec = self.msgs.get_mut(i).filter(|m| m.first <= seqno);
            let (message, first_tx, carried) = match rec {
                Some(m) => {
                    let first_tx = *m.first_tx.get_or_insert(now);
                    let before = (seqno - m.first) as u64 * ns2.packet_size as u64;
                    let carried = (m.msg.len as u64).saturating_sub(before).min(ns2.packet_size as u64);
                    ((seqno == m.last).then_some(m.msg), first_tx, carried)
                }
                // Not reachable: every packet below `curseq` belongs to a message.
                None => (None, now, 0),
            };
            self.padding_bytes += ns2.packet_size as u64 - carried;
            Segment {
                addr: None,
                header: L4Header::Tcp(repr),
                payload_len: ns2.packet_size,
                ip_len: ns2.packet_size + ns2.header_size,
                message,
                first_tx,
                stream: None,
                ecn: tpsim_wire::Ecn::NotEct,
            }
        };
        io.out.push_back(seg);
        io.stats.tx_segments += 1;
        if retransmission {
            io.stats.retransmissions += 1;
        } else {
            self.maxseq = seqno;
            if !self.rtt_active {
                self.rtt_active = true;
                if seqno > self.rtt_seq {
                    self.rtt_seq = seqno;
                    self.rtt_ts = now;
                }
            }
        }
        if self.rtx_at.is_none() || force_timer {
            self.set_rtx_timer(ns2, now);
        }
    }

    /// `TcpAgent::newtimer`: restart the timer unless everything is acknowledged and sent (the
    /// first condition always holds for these agents, so the timer always restarts).
    pub(super) fn newtimer(&mut self, ns2: &Ns2TcpConfig, now: SimTime, ackno: i64) {
        if self.t_seqno > ackno || ackno < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(ns2, now);
        } else {
            self.rtx_at = None;
        }
    }

    /// `TcpAgent::newack` (with `timerfix_`): take the ACK, sample the RTT if it covers the
    /// timed packet (which also ends the backoff), restart the timer.
    pub(super) fn newack(&mut self, ns2: &Ns2TcpConfig, now: SimTime, ackno: i64) {
        self.dupacks = 0;
        self.last_ack = ackno;
        self.highest_ack = ackno;
        if self.t_seqno < ackno + 1 {
            self.t_seqno = ackno + 1;
        }
        if self.rtt_active && ackno >= self.rtt_seq {
            self.t_backoff = 1;
            self.rtt_active = false;
            let tao = now.saturating_since(self.rtt_ts);
            self.rtt_update(ns2, now, tao);
        }
        self.newtimer(ns2, now, ackno);
        self.drop_acked_messages();
    }

    /// Messages wholly acknowledged are never sent again: those up to `last_ack_` (Sack1, in
    /// fast recovery, can still send packets between `last_ack_` and `highest_ack_`; see
    /// `sack1_send_much`).
    pub(super) fn drop_acked_messages(&mut self) {
        while self.msgs.front().is_some_and(|m| m.last <= self.last_ack) {
            self.msgs.pop_front();
        }
    }

    /// `TcpAgent::recv_newack_helper`, then the `delay_growth_` rule of the `recv` functions:
    /// the ACK of packet 0 sets `cwnd` to the initial window.
    pub(super) fn full_newack(&mut self, ns2: &Ns2TcpConfig, now: SimTime, ackno: i64) {
        self.newack(ns2, now, ackno);
        self.opencwnd(ns2);
        if self.last_ack == 0 && ns2.delay_growth {
            self.cwnd = self.initial_window();
        }
    }

    /// The `recv` of the four classes (`TcpAgent::recv`, `RenoTcpAgent::recv`,
    /// `NewRenoTcpAgent::recv`, `Sack1TcpAgent::recv`) for an ACK of packet `ackno` with SACK
    /// blocks `sacks` (which only Sack1 reads).
    pub(super) fn recv(&mut self, io: &mut Io, now: SimTime, ackno: i64, sacks: &[(i64, i64)]) {
        let ns2 = io.ns2;
        let numdup = ns2.numdupacks;
        match ns2.variant {
            Ns2Variant::Sack1 => self.recv_sack1(io, now, ackno, sacks),
            Ns2Variant::Tahoe => {
                if ackno > self.last_ack {
                    self.full_newack(ns2, now, ackno);
                } else if ackno == self.last_ack {
                    self.dupacks += 1;
                    if self.dupacks == numdup {
                        self.dupack_action(io, now);
                    } else if self.dupacks < numdup && ns2.singledup {
                        self.send_one(io, now);
                    }
                }
                self.send_much(io, now, 0);
            }
            Ns2Variant::Reno => {
                if ackno > self.last_ack {
                    if self.last_cwnd_action == CwndAction::Dupack {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                    self.dupwnd = 0;
                    self.full_newack(ns2, now, ackno);
                } else if ackno == self.last_ack {
                    self.on_dupack(io, now);
                }
                if self.dupacks == 0 || self.dupacks + 1 > numdup {
                    self.send_much(io, now, 0);
                }
            }
            Ns2Variant::NewReno => {
                if ackno > self.last_ack {
                    if ackno >= self.recover || self.last_cwnd_action != CwndAction::Dupack {
                        if self.dupwnd > 0 {
                            self.dupwnd = 0;
                            if self.last_cwnd_action == CwndAction::Dupack {
                                self.last_cwnd_action = CwndAction::Exited;
                            }
                        }
                        self.firstpartial = false;
                        self.full_newack(ns2, now, ackno);
                    } else {
                        if !ns2.partial_window_deflation {
                            self.dupwnd = 0;
                        }
                        self.partial_ack(io, now, ackno);
                    }
                } else if ackno == self.last_ack {
                    self.on_dupack(io, now);
                }
                // Bursts are limited to 2 packets while duplicate ACKs are counted
                // (`newreno_changes_ 0`).
                if self.dupacks == 0 {
                    self.send_much(io, now, 0);
                } else if self.dupacks + 1 > numdup {
                    self.send_much(io, now, 2);
                }
            }
        }
    }

    /// A duplicate ACK at Reno or NewReno (`exitFastRetrans_` true): the fast retransmit at
    /// `numdupacks_`, window inflation beyond it while recovering, limited transmit before.
    pub(super) fn on_dupack(&mut self, io: &mut Io, now: SimTime) {
        let numdup = io.ns2.numdupacks;
        self.dupacks += 1;
        if self.dupacks == numdup {
            self.dupack_action(io, now);
        } else if self.dupacks > numdup && self.last_cwnd_action == CwndAction::Dupack {
            self.dupwnd += 1;
        } else if self.dupacks < numdup && io.ns2.singledup {
            self.send_one(io, now);
        }
    }

    /// `dupack_action` of the three classes: respond to the `numdupacks_`-th duplicate ACK
    /// unless this window was already responded to (`bugFix_`).
    pub(super) fn dupack_action(&mut self, io: &mut Io, now: SimTime) {
        let ns2 = io.ns2;
        if ns2.variant == Ns2Variant::Sack1 {
            self.sack1_dupack_action(io, now);
            return;
        }
        let recovered = self.highest_ack > self.recover;
        // Reno (not NewReno) also allows it while still in fast recovery.
        let reno_allows = ns2.variant == Ns2Variant::Reno && self.last_cwnd_action == CwndAction::Dupack;
        let allowed = recovered || !ns2.bug_fix || reno_allows || (ns2.bugfix_ss && self.highest_ack == 0);
        if !allowed {
            return;
        }
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::Dupack;
        self.fast_retransmits += 1;
        match ns2.variant {
            Ns2Variant::Tahoe => {
                // Go back to the first unacknowledged packet with cwnd 1; `send_much`
                // retransmits it.
                self.slowdown(ns2, true, CwndCut::One);
                self.reset_rtx_timer(ns2, now, false, false);
            }
            // (Sack1 went to `sack1_dupack_action` above.)
            Ns2Variant::Reno | Ns2Variant::NewReno | Ns2Variant::Sack1 => {
                self.slowdown(ns2, true, CwndCut::Half);
                self.reset_rtx_timer(ns2, now, true, false);
                // ns-2 retransmits `last_ack_ + 1` even when the application never produced it
                // (duplicate ACKs of the last packet); tpsim sends no such phantom packet, whose
                // number real data would reuse later.
                if self.last_ack + 1 < self.curseq {
                    self.output(io, now, self.last_ack + 1);
                }
                self.dupwnd = ns2.numdupacks;
            }
        }
    }

    /// `NewRenoTcpAgent::partialnewack_helper` and `partialnewack`: restart the timer (on the
    /// first partial ACK only, with `newreno_changes1_`), deflate the window by the packets
    /// acknowledged less one, take the ACK without opening `cwnd` or sampling the RTT (a timed
    /// packet covered only ends the backoff), and retransmit the next hole.
    pub(super) fn partial_ack(&mut self, io: &mut Io, now: SimTime, ackno: i64) {
        let ns2 = io.ns2;
        if !ns2.newreno_changes1 || !self.firstpartial {
            self.firstpartial = true;
            self.newtimer(ns2, now, ackno);
        }
        if ns2.partial_window_deflation {
            let deflate = (ackno - self.last_ack) as u32;
            if self.dupwnd > deflate {
                self.dupwnd -= deflate - 1;
            } else {
                self.cwnd -= (deflate - self.dupwnd) as f64;
                self.dupwnd = 1;
            }
            if self.cwnd < 1.0 {
                self.cwnd = 1.0;
            }
        }
        self.last_ack = ackno;
        self.highest_ack = ackno;
        if self.t_seqno < ackno + 1 {
            self.t_seqno = ackno + 1;
        }
        if self.rtt_active && ackno >= self.rtt_seq {
            self.rtt_active = false;
            self.t_backoff = 1;
        }
        self.drop_acked_messages();
        self.output(io, now, self.last_ack + 1);
    }

    /// `TcpAgent::timeout` (after `RenoTcpAgent::timeout`'s reset of the recovery state):
    /// with something outstanding, halve `ssthresh`, `cwnd = 1`, back off and go back to the
    /// first unacknowledged packet; with nothing outstanding (the idle timer), `cwnd = 1` only
    /// (`slow_start_restart_`, `restart_bugfix_`).
    pub(super) fn timeout(&mut self, io: &mut Io, now: SimTime) {
        let ns2 = io.ns2;
        if ns2.variant == Ns2Variant::Sack1 {
            self.sack1_timeout_reset();
        }
        if Self::reno_like(ns2) {
            self.dupwnd = 0;
            self.dupacks = 0;
            if ns2.bug_fix {
                self.recover = self.maxseq;
            }
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        let idle = self.highest_ack == self.maxseq;
        if !idle || ns2.slow_start_restart {
            self.recover = self.maxseq;
            if self.highest_ack == -1 && self.wnd_init > 1 && ns2.bugfix_ss {
                // The first packet (the SYN) was lost: no larger initial window.
                self.wnd_init = 1;
            }
            if idle && ns2.restart_bugfix {
                self.slowdown(ns2, false, CwndCut::One);
            } else {
                self.timeouts += 1;
                self.last_cwnd_action = CwndAction::Timeout;
                self.slowdown(ns2, true, CwndCut::Restart);
            }
        }
        let backoff = !(idle && ns2.restart_bugfix);
        self.reset_rtx_timer(ns2, now, false, backoff);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(io, now, 0);
    }
}
