//! Association set-up and tear-down (RFC 9260 §5, §8, §9): INIT and the State Cookie, T1-init
//! and T1-cookie with Max.Init.Retransmits, out-of-the-blue packets, SHUTDOWN with T2-shutdown,
//! ABORT, the error counters (Association.Max.Retrans, Path.Max.Retrans) and HEARTBEAT.

use super::{tsn_le, tsn_lt, Cookie, Ctrl, SctpSocket};
use crate::sctp::recv::Receiver;
use crate::sctp::State;
use crate::tcp::Open;
use crate::TransportEvent;
use tpsim_core::SimTime;
use tpsim_wire::sctp::{ControlChunk, ErrorCause, InitChunk, SackChunk, SctpRepr, StateCookie};

impl SctpSocket {
    /// RFC 9260 §5.1 B: an INIT in CLOSED is answered with an INIT ACK carrying a State Cookie;
    /// no TCB is kept. INITs in other states (§5.2 collisions, restarts) are ignored.
    pub(super) fn on_init(&mut self, now: SimTime, p: &SctpRepr, i: &InitChunk) {
        // RFC 9260 §8.5.1 A: an INIT carries tag 0; its Initiate Tag is non-zero.
        if p.verification_tag != 0 || i.initiate_tag == 0 || self.state != State::Closed || self.finished {
            return;
        }
        if self.open == Open::Active {
            return;
        }
        // RFC 9260 §5.1.2: the INIT's source and its address parameters are the peer's.
        if self.paths[0].addr.is_none() {
            self.paths[0].addr = self.rx_addr;
        }
        self.rx_path = 0;
        self.init_peer_addrs = i.addresses;
        let cookie = Cookie {
            peer_tag: i.initiate_tag,
            peer_initial_tsn: i.initial_tsn,
            peer_a_rwnd: i.a_rwnd,
            peer_os: i.outbound_streams,
            peer_mis: i.inbound_streams,
            my_tag: self.my_tag,
            my_initial_tsn: self.next_tsn,
            created_ms: (now.0 / 1_000_000) as u32,
            peer_forward_tsn: i.forward_tsn,
        };
        let ack = InitChunk {
            initiate_tag: self.my_tag,
            a_rwnd: self.sctp.recv_buffer_bytes,
            outbound_streams: self.sctp.streams.max(1),
            inbound_streams: self.sctp.max_inbound_streams,
            initial_tsn: self.next_tsn,
            addresses: self.local_addrs,
            // RFC 3758 §3.3.2: announced when configured, whatever the INIT said.
            forward_tsn: self.sctp.pr_sctp,
        };
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::InitAck(ack, cookie.encode(self.sctp.cookie_secret)),
            tag: i.initiate_tag,
            path: self.rx_path,
        });
    }

    /// RFC 9260 §8.4: a packet with no TCB to match.
    pub(super) fn on_out_of_the_blue(&mut self, now: SimTime, p: &SctpRepr) {
        match p.control {
            Some(ControlChunk::CookieEcho(k)) => self.on_cookie_echo_closed(now, p, &k),
            // §8.4 (2), (6): ABORT and SHUTDOWN COMPLETE are silently discarded.
            Some(ControlChunk::Abort { .. }) | Some(ControlChunk::ShutdownComplete { .. }) => {}
            // §8.4 (5): SHUTDOWN ACK is answered with SHUTDOWN COMPLETE, T bit set.
            Some(ControlChunk::ShutdownAck) => self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::ShutdownComplete { t: true },
                tag: p.verification_tag,
                path: self.rx_path,
            }),
            Some(ControlChunk::InitAck(..)) | Some(ControlChunk::CookieAck) | Some(ControlChunk::Error(_)) => {}
            _ if self.open == Open::Active && !self.finished => {}
            // §8.4 (8): anything else is answered with ABORT, T bit set, the tag reflected.
            _ => self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::Abort { t: true, cause: None },
                tag: p.verification_tag,
                path: self.rx_path,
            }),
        }
    }

    /// RFC 9260 §5.1 D/E (passive end in CLOSED): a valid, fresh cookie builds the TCB; the
    /// COOKIE ACK goes out and DATA bundled with the COOKIE ECHO is processed.
    pub(super) fn on_cookie_echo_closed(&mut self, now: SimTime, p: &SctpRepr, k: &StateCookie) {
        if self.finished || self.open == Open::Active {
            return;
        }
        let Some(c) = Cookie::decode(k, self.sctp.cookie_secret) else {
            return;
        };
        // §8.5.1: the packet's tag is the one we put in the cookie.
        if p.verification_tag != c.my_tag || c.my_tag != self.my_tag {
            return;
        }
        // §5.1.5 (3): a cookie older than Valid.Cookie.Life is stale: ERROR "Stale Cookie"
        // whose Measure of Staleness is the time since it expired, µs (§3.3.10.3).
        let age_ms = ((now.0 / 1_000_000) as u32).wrapping_sub(c.created_ms) as u64;
        let life_ms = self.sctp.valid_cookie_life.0 / 1_000_000;
        if age_ms > life_ms {
            let staleness_us = ((age_ms - life_ms) * 1000).min(u32::MAX as u64) as u32;
            self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::Error(ErrorCause::stale_cookie(staleness_us)),
                tag: c.peer_tag,
                path: self.rx_path,
            });
            return;
        }
        self.peer_tag = c.peer_tag;
        self.setup_tcb(c.peer_initial_tsn, c.peer_a_rwnd, c.peer_os, c.peer_mis);
        // RFC 9260 §5.4 (2): the address the INIT ACK went to (path 0) is CONFIRMED, the
        // others the INIT listed are not.
        let init_src = self.paths[0].addr;
        self.add_peer_addresses(self.init_peer_addrs, init_src);
        // RFC 3758 §3.3: PR-SCTP only if both ends announced it.
        self.pr = self.sctp.pr_sctp && c.peer_forward_tsn;
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::CookieAck,
            tag: self.peer_tag,
            path: self.rx_path,
        });
        self.established(now);
        if let Some(s) = p.sack {
            self.on_sack(now, &s);
        }
        if !p.data.is_empty() {
            self.on_data(now, p);
        }
    }

    /// Builds the receive side and the stream counts from the peer's INIT or INIT ACK.
    pub(super) fn setup_tcb(&mut self, peer_initial_tsn: u32, peer_a_rwnd: u32, peer_os: u16, peer_mis: u16) {
        // RFC 9260 §5.1.1: outbound streams are min(our OS, peer's MIS); inbound min(peer's OS,
        // our MIS).
        self.out_streams = self.sctp.streams.max(1).min(peer_mis.max(1));
        let inbound = peer_os.min(self.sctp.max_inbound_streams).max(1);
        self.recv = Some(Receiver::new(peer_initial_tsn, inbound, self.sctp.recv_buffer_bytes));
        self.last_adv = self.sctp.recv_buffer_bytes as u64;
        self.rwnd = peer_a_rwnd as u64;
        let p = &mut self.paths[self.primary];
        // RFC 9260 §7.2.1: initial ssthresh "arbitrarily high", here the peer's a_rwnd.
        if self.sctp.initial_ssthresh_bytes.is_none() {
            p.ssthresh = peer_a_rwnd as u64;
        }
    }

    pub(super) fn established(&mut self, now: SimTime) {
        self.state = State::Established;
        self.t1 = None;
        self.events.push_back(TransportEvent::Connected);
        self.start_heartbeats(now);
        if self.sctp.ns2_send_rule {
            self.ns2_flag = true;
            self.ns2_used = true;
        }
        if self.close_requested {
            self.state = State::ShutdownPending;
            self.check_shutdown(now);
        }
    }

    /// The control chunk of a packet whose tag matched. Returns false if the rest of the packet
    /// must be dropped.
    pub(super) fn on_control(&mut self, now: SimTime, c: &ControlChunk) -> bool {
        match *c {
            ControlChunk::Init(_) => unreachable!("handled before the tag check"),
            ControlChunk::InitAck(i, k) => {
                // RFC 9260 §5.1 C: in COOKIE-WAIT, stop T1-init, echo the cookie, start
                // T1-cookie, enter COOKIE-ECHOED. Elsewhere discarded (§5.2.3).
                if self.state != State::CookieWait || i.initiate_tag == 0 {
                    return false;
                }
                if self.init_retransmits == 0 {
                    if let Some(t0) = self.handshake_sent {
                        self.take_rtt_sample(self.primary, now.saturating_since(t0));
                    }
                }
                self.peer_tag = i.initiate_tag;
                self.setup_tcb(i.initial_tsn, i.a_rwnd, i.outbound_streams, i.inbound_streams);
                // RFC 9260 §5.1.2, §5.4 (1): the peer's addresses; the one we opened the
                // association to is CONFIRMED, the others are not.
                self.add_peer_addresses(i.addresses, self.rx_addr);
                // RFC 3758 §3.3: PR-SCTP only if both ends announced it.
                self.pr = self.sctp.pr_sctp && i.forward_tsn;
                self.cookie = Some(k);
                self.state = State::CookieEchoed;
                self.init_retransmits = 0;
                self.handshake_sent = Some(now);
                self.t1 = Some(now + self.paths[self.primary].rtt.rto());
                self.queue_cookie_echo();
                false
            }
            ControlChunk::CookieEcho(k) => {
                // RFC 9260 §5.2.4 D: our COOKIE ACK was lost; the tags match: ACK again.
                if let Some(ck) = Cookie::decode(&k, self.sctp.cookie_secret) {
                    if ck.my_tag == self.my_tag && ck.peer_tag == self.peer_tag {
                        self.ctrl.push_back(Ctrl {
                            chunk: ControlChunk::CookieAck,
                            tag: self.peer_tag,
                            path: self.rx_path,
                        });
                    }
                }
                true
            }
            ControlChunk::CookieAck => {
                // RFC 9260 §5.1 E: COOKIE-ECHOED -> ESTABLISHED, T1-cookie stopped.
                if self.state == State::CookieEchoed {
                    if self.init_retransmits == 0 {
                        if let Some(t0) = self.handshake_sent {
                            self.take_rtt_sample(self.primary, now.saturating_since(t0));
                        }
                    }
                    self.cookie = None;
                    self.established(now);
                    // DATA bundled with the COOKIE ECHO is now guarded by T3-rtx (§6.3.2 R1).
                    if self.sent.iter().any(|s| s.in_flight) && self.paths[self.primary].t3_rtx.is_none() {
                        let rto = self.paths[self.primary].rtt.rto();
                        self.paths[self.primary].t3_rtx = Some(now + rto);
                    }
                }
                true
            }
            ControlChunk::Heartbeat(info) => {
                // RFC 9260 §8.3: answer with HEARTBEAT ACK echoing the information.
                self.ctrl.push_back(Ctrl {
                    chunk: ControlChunk::HeartbeatAck(info),
                    tag: self.peer_tag,
                    path: self.rx_path,
                });
                true
            }
            ControlChunk::HeartbeatAck(info) => {
                self.on_heartbeat_ack(now, info);
                true
            }
            ControlChunk::Abort { .. } => {
                // RFC 9260 §9.1: the association is gone.
                self.sstats.peer_aborted = 1;
                self.enter_closed();
                false
            }
            ControlChunk::Shutdown(cum) => {
                self.on_shutdown(now, cum);
                true
            }
            ControlChunk::ForwardTsn(f) => {
                self.on_forward_tsn(now, &f);
                true
            }
            ControlChunk::ShutdownAck => {
                // RFC 9260 §9.2: in SHUTDOWN-SENT (or SHUTDOWN-ACK-SENT after a collision) stop
                // T2, send SHUTDOWN COMPLETE, close.
                if matches!(self.state, State::ShutdownSent | State::ShutdownAckSent) {
                    self.ctrl.push_back(Ctrl {
                        chunk: ControlChunk::ShutdownComplete { t: false },
                        tag: self.peer_tag,
                        path: self.data_path,
                    });
                    self.enter_closed();
                }
                false
            }
            ControlChunk::ShutdownComplete { .. } => {
                if self.state == State::ShutdownAckSent {
                    self.enter_closed();
                }
                false
            }
            ControlChunk::Error(e) => {
                // RFC 9260 §5.2.6: a stale cookie: start over with a new INIT (the counter of
                // INIT retransmissions goes on, so this ends).
                if e.code == ErrorCause::STALE_COOKIE.code && self.state == State::CookieEchoed {
                    self.init_retransmits += 1;
                    if self.init_retransmits > self.sctp.max_init_retransmits {
                        self.give_up();
                        return false;
                    }
                    self.sstats.init_retransmits += 1;
                    self.state = State::CookieWait;
                    self.cookie = None;
                    self.recv = None;
                    self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::CookieEcho(_)));
                    self.queue_init();
                    self.handshake_sent = Some(now);
                    self.t1 = Some(now + self.paths[self.primary].rtt.rto());
                    return false;
                }
                true
            }
        }
    }

    /// RFC 9260 §9.2: SHUTDOWN received.
    pub(super) fn on_shutdown(&mut self, now: SimTime, cum: u32) {
        // Its Cumulative TSN Ack acknowledges our data like a SACK without Gap Ack Blocks.
        // SHUTDOWN carries no window: the peer's rwnd grows by what it acknowledges.
        if tsn_le(self.cum_ack_point, cum) && tsn_lt(cum, self.next_tsn) {
            let (rwnd, before) = (self.rwnd, self.outstanding_user_bytes());
            self.on_sack(now, &SackChunk::new(cum, 0));
            self.rwnd = rwnd + before.saturating_sub(self.outstanding_user_bytes());
        }
        match self.state {
            State::Established | State::ShutdownPending => {
                self.state = State::ShutdownReceived;
            }
            State::ShutdownSent => {
                // Both closed at once: SHUTDOWN ACK, SHUTDOWN-ACK-SENT, T2 restarted.
                self.state = State::ShutdownAckSent;
                self.queue_shutdown_ack(now);
            }
            _ => {}
        }
    }

    /// RFC 9260 §9.2: SHUTDOWN once everything is acknowledged (SHUTDOWN-PENDING), SHUTDOWN ACK
    /// likewise (SHUTDOWN-RECEIVED).
    #[inline]
    pub(super) fn check_shutdown(&mut self, now: SimTime) {
        // The common case, no shutdown under way, costs one comparison.
        if matches!(self.state, State::ShutdownPending | State::ShutdownReceived) {
            self.shutdown_when_idle(now);
        }
    }

    fn shutdown_when_idle(&mut self, now: SimTime) {
        let idle = self.sent.is_empty() && self.unsent.is_empty();
        match self.state {
            State::ShutdownPending if idle => {
                self.state = State::ShutdownSent;
                self.queue_shutdown(now);
            }
            State::ShutdownReceived if idle => {
                self.state = State::ShutdownAckSent;
                self.queue_shutdown_ack(now);
            }
            _ => {}
        }
    }

    pub(super) fn queue_shutdown(&mut self, now: SimTime) {
        let cum = self.recv.as_ref().map_or(0, |r| r.cum_tsn());
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::Shutdown(cum),
            tag: self.peer_tag,
            path: self.data_path,
        });
        self.t2 = Some(now + self.paths[self.primary].rtt.rto());
    }

    pub(super) fn queue_shutdown_ack(&mut self, now: SimTime) {
        self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::ShutdownAck));
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::ShutdownAck,
            tag: self.peer_tag,
            path: self.data_path,
        });
        self.t2 = Some(now + self.paths[self.primary].rtt.rto());
    }

    pub(super) fn queue_init(&mut self) {
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::Init(InitChunk {
                initiate_tag: self.my_tag,
                a_rwnd: self.sctp.recv_buffer_bytes,
                outbound_streams: self.sctp.streams.max(1),
                inbound_streams: self.sctp.max_inbound_streams,
                // RFC 9260 §3.3.2: the Initial TSN MAY equal the Initiate Tag.
                initial_tsn: self.my_tag,
                addresses: self.local_addrs,
                // RFC 3758 §3.3.1.
                forward_tsn: self.sctp.pr_sctp,
            }),
            tag: 0,
            path: 0,
        });
    }

    pub(super) fn queue_cookie_echo(&mut self) {
        if let Some(k) = self.cookie {
            self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::CookieEcho(k),
                tag: self.peer_tag,
                path: self.data_path,
            });
        }
    }

    pub(super) fn enter_closed(&mut self) {
        if self.state == State::Closed && self.finished {
            return;
        }
        let had = self.state != State::Closed || self.recv.is_some();
        self.state = State::Closed;
        self.finished = true;
        self.t1 = None;
        self.t2 = None;
        self.delayed_sack = None;
        self.sack_now = false;
        self.sack_pending = false;
        for p in &mut self.paths {
            p.t3_rtx = None;
            p.hb_at = None;
            p.hb_outstanding = None;
        }
        self.unsent.clear();
        self.unsent_msgs = 0;
        self.sent.clear();
        self.n_marked = 0;
        self.n_gap_acked = 0;
        self.n_abandoned = 0;
        self.buffered_bytes = 0;
        if had {
            // Messages already complete stay readable.
            self.drain_ready();
            self.events.push_back(TransportEvent::Closed);
        }
    }

    /// Gives up after an error counter passed its limit (RFC 9260 §8.1, §5.1, §9.2): the peer
    /// is told with an ABORT (when it may hold a TCB), then CLOSED.
    pub(super) fn give_up(&mut self) {
        self.sstats.gave_up = 1;
        self.ctrl.clear();
        if self.state != State::CookieWait {
            self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::Abort { t: false, cause: None },
                tag: self.peer_tag,
                path: self.data_path,
            });
        }
        self.enter_closed();
    }

    /// RFC 9260 §5.1 C/D: T1-init or T1-cookie expired: retransmit INIT or COOKIE ECHO with the
    /// RTO backed off, up to Max.Init.Retransmits times, then give up.
    pub(super) fn on_t1(&mut self, now: SimTime) {
        if !matches!(self.state, State::CookieWait | State::CookieEchoed) {
            return;
        }
        self.init_retransmits += 1;
        if self.init_retransmits > self.sctp.max_init_retransmits {
            self.give_up();
            return;
        }
        self.sstats.init_retransmits += 1;
        let pi = self.primary;
        self.paths[pi].rtt.back_off();
        self.ctrl
            .retain(|c| !matches!(c.chunk, ControlChunk::Init(_) | ControlChunk::CookieEcho(_)));
        if self.state == State::CookieWait {
            self.queue_init();
        } else {
            // DATA bundled with the lost COOKIE ECHO waits for the association (marked for
            // retransmission).
            self.mark_all_for_retransmission(pi);
            self.queue_cookie_echo();
        }
        self.t1 = Some(now + self.paths[pi].rtt.rto());
    }

    /// RFC 9260 §9.2: T2-shutdown expired: SHUTDOWN or SHUTDOWN ACK again, counting toward
    /// Association.Max.Retrans.
    pub(super) fn on_t2(&mut self, now: SimTime) {
        let pi = self.primary;
        if !matches!(self.state, State::ShutdownSent | State::ShutdownAckSent) {
            return;
        }
        if self.count_error(now, pi, true) {
            return;
        }
        self.paths[pi].rtt.back_off();
        if self.state == State::ShutdownSent {
            self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::Shutdown(_)));
            self.queue_shutdown(now);
        } else {
            self.queue_shutdown_ack(now);
        }
    }

    /// RFC 9260 §8.1/§8.2: one more error on path `pi` at `now`, and on the association if
    /// `assoc` (not for the probes of an unconfirmed address, §5.4); true if the association
    /// was given up. With the PF state, past PFMR the path is potentially failed first (RFC
    /// 7829 §3).
    pub(super) fn count_error(&mut self, now: SimTime, pi: usize, assoc: bool) -> bool {
        let p = &mut self.paths[pi];
        p.error_count += 1;
        if p.error_count > self.sctp.path_max_retrans && p.active {
            // §8.2: the address becomes inactive; new DATA moves to an alternate (§6.4.1; a
            // single-homed association goes on using its only path). RFC 7829 §3: a potentially
            // failed one too, after Path.Max.Retrans − PFMR more errors.
            p.active = false;
            p.potentially_failed = false;
            self.choose_data_path();
        } else if self.becomes_potentially_failed(pi) {
            self.enter_potentially_failed(now, pi);
        } else if self.paths[pi].potentially_failed {
            // RFC 7829 §3: with every destination potentially failed, the one with the fewest
            // errors takes the data: it may be another now.
            self.choose_data_path();
        }
        if !assoc {
            return false;
        }
        self.assoc_errors += 1;
        if self.assoc_errors > self.sctp.assoc_max_retrans {
            self.give_up();
            return true;
        }
        false
    }

    /// RFC 9260 §8.3, §5.4: heartbeat timer of path `pi`.
    pub(super) fn on_heartbeat_timer(&mut self, now: SimTime, pi: usize) {
        if !matches!(
            self.state,
            State::Established | State::ShutdownPending | State::ShutdownReceived
        ) {
            return;
        }
        let confirmed = self.paths[pi].confirmed;
        if self.paths[pi].hb_outstanding.take().is_some() {
            // Not acknowledged within an RTO: an error (§8.3, §8.1, §8.2; for an unconfirmed
            // address the path's counter only, §5.4) and the RTO backed off (§8.3).
            if self.count_error(now, pi, confirmed) {
                return;
            }
            self.paths[pi].rtt.back_off();
        }
        if self.paths[pi].potentially_failed {
            // RFC 7829 §3: a potentially-failed destination is heartbeated once per RTO (backed
            // off while unanswered), whether or not idle destinations are.
            self.send_heartbeat(now, pi);
            return;
        }
        if !confirmed && self.paths[pi].active {
            // §5.4: an active unconfirmed address is probed once per RTO (whether or not idle
            // destinations are heartbeated).
            self.send_heartbeat(now, pi);
            return;
        }
        let Some(iv) = self.sctp.hb_interval else { return };
        if !self.paths[pi].hb_period_busy {
            // Idle destination: HEARTBEAT; checked one RTO later.
            self.send_heartbeat(now, pi);
        } else {
            self.paths[pi].hb_period_busy = false;
            let period = self.hb_period(pi, iv);
            self.paths[pi].hb_at = Some(now + period);
        }
    }

    /// A HEARTBEAT to path `pi` (its information: the path and the send time), checked one RTO
    /// later.
    fn send_heartbeat(&mut self, now: SimTime, pi: usize) {
        let info = Self::hb_info(pi, now);
        let p = &mut self.paths[pi];
        p.hb_outstanding = Some(info);
        p.hb_period_busy = true;
        p.hb_at = Some(now + p.rtt.rto());
        self.sstats.heartbeats += 1;
        self.ctrl.push_back(Ctrl {
            chunk: ControlChunk::Heartbeat(info),
            tag: self.peer_tag,
            path: pi,
        });
    }
}
