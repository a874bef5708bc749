//! Route discovery (RFC 3561 §6.3–§6.5): sending, retrying and receiving RREQs, the
//! packets buffered meanwhile, and local repair (§6.12).

use super::*;

impl<P> Aodv<P> {
    // ----- RREQ (§6.3–§6.5) -----

    pub(super) fn start_discovery(&mut self, now: SimTime, dst: Addr) {
        if self.next_sweep <= now {
            // Routes that ran out now are made invalid first, so that the RREQ carries what
            // that does to their sequence numbers.
            self.sweep(now);
        }
        let max = self.cfg.max_ttl();
        let known_hops = self.routes.get(&dst).map(|r| r.hops);
        let ttl = match self.cfg.ring_rule {
            RingRule::Rfc => {
                // RFC 3561 §6.4: start from the last known hop count + TTL_INCREMENT if there
                // is one.
                let mut ttl = self.cfg.ttl_start;
                if let Some(h) = known_hops {
                    ttl = ttl.max(h.saturating_add(self.cfg.ttl_increment));
                }
                if ttl > self.cfg.ttl_threshold {
                    max
                } else {
                    ttl
                }
            }
            // ns-2.35: the old hop count is the "last TTL"; without one, network-wide.
            RingRule::Ns2 => match known_hops {
                Some(h) => self.cfg.next_ring_ttl(h),
                None => max,
            },
        };
        self.stats.discoveries_started += 1;
        self.discoveries.insert(dst, Discovery::new(now, ttl, None));
        self.try_send_rreq(now, dst);
    }

    /// Sends the RREQ for the discovery's current TTL, or postpones it (RREQ_RATELIMIT, §6.3).
    pub(super) fn try_send_rreq(&mut self, now: SimTime, dst: Addr) {
        let Some(ttl) = self.discoveries.get(&dst).map(|d| d.ttl) else {
            return;
        };
        let allowed = rate_next_allowed(&mut self.rreq_times, self.cfg.rreq_ratelimit, now);
        if allowed > now {
            let d = self.discoveries.get_mut(&dst).expect("present");
            d.deadline = allowed;
            d.sent = false;
            return;
        }
        if self.cfg.rreq_ratelimit > 0 {
            self.rreq_times.push_back(now);
        }
        // RFC 3561 §6.1 (a), §6.3: new own sequence number and RREQ ID for every RREQ.
        self.seq = match self.cfg.own_seq_rule {
            OwnSeqRule::Rfc => self.seq.wrapping_add(1),
            // ns-2.35 sendRequest: seqno += 2 (own numbers stay even).
            OwnSeqRule::Ns2 => (self.seq | 1).wrapping_add(1),
        };
        self.rreq_id = self.rreq_id.wrapping_add(1);
        let (dst_seq, unknown_seq) = match self.routes.get(&dst) {
            Some(r) if r.valid_seq => (r.seq, false),
            _ => (0, true),
        };
        let rreq = Rreq {
            join: false,
            repair: false,
            gratuitous: self.cfg.gratuitous_rrep,
            dest_only: self.cfg.dest_only,
            unknown_seq,
            hop_count: 0,
            rreq_id: self.rreq_id,
            dst,
            dst_seq,
            orig: self.addr,
            orig_seq: self.seq,
        };
        // RFC 3561 §6.3: remember our own RREQ so that echoes are discarded.
        self.remember_rreq(now, self.addr, self.rreq_id);
        let jitter = self.jitter();
        let cfg = &self.cfg;
        let d = self.discoveries.get_mut(&dst).expect("present");
        let wait = if d.repair.is_some() {
            // RFC 3561 §6.12: wait the discovery period (RING_TRAVERSAL_TIME of the TTL), or
            // ns-2's LOCAL_REPAIR_WAIT_TIME.
            cfg.local_repair_wait.unwrap_or_else(|| cfg.ring_traversal_time(ttl)).0
        } else if ttl >= cfg.max_ttl() {
            d.nw_sent += 1;
            let k = d.nw_sent as u64;
            let ntt = cfg.net_traversal_time.0;
            match cfg.rreq_backoff {
                // RFC 3561 §6.3: binary exponential backoff of the wait.
                RreqBackoff::BinaryExponential => ntt.saturating_mul(1u64 << (k - 1).min(63)),
                RreqBackoff::Linear => ntt.saturating_mul(k),
            }
        } else {
            // RFC 3561 §6.4: RING_TRAVERSAL_TIME.
            cfg.ring_traversal_time(ttl).0
        };
        let wait = SimDuration(wait.min(cfg.max_rreq_timeout.0));
        let due = now + jitter + wait;
        d.deadline = if d.repair.is_some() { due } else { cfg.retry_at(due) };
        d.sent = true;
        self.queue(
            now + jitter,
            LinkDest::Broadcast,
            ttl,
            Message::Rreq(rreq),
            Origin::Originated,
        );
    }

    pub(super) fn discovery_timeout(&mut self, now: SimTime, dst: Addr) {
        if self.lookup(now, dst).is_some() {
            self.route_became_valid(now, dst);
            return;
        }
        let max = self.cfg.max_ttl();
        let d = self.discoveries.get_mut(&dst).expect("present");
        if d.repair.is_some() {
            // RFC 3561 §6.12: one RREQ; no RREP within the discovery period → the repair failed.
            if d.sent {
                self.local_repair_failed(now, dst);
            } else {
                self.try_send_rreq(now, dst);
            }
        } else if !d.sent {
            self.try_send_rreq(now, dst);
        } else if d.ttl >= max {
            // RFC 3561 §6.3: at most RREQ_RETRIES more RREQs at TTL = NET_DIAMETER.
            if d.nw_sent > self.cfg.rreq_retries {
                self.discovery_failed(dst);
            } else {
                self.try_send_rreq(now, dst);
            }
        } else {
            // RFC 3561 §6.4: widen the ring; beyond TTL_THRESHOLD go network-wide.
            d.ttl = self.cfg.next_ring_ttl(d.ttl);
            self.try_send_rreq(now, dst);
        }
    }

    pub(super) fn discovery_failed(&mut self, dst: Addr) {
        self.discoveries.remove(&dst);
        self.stats.discoveries_failed += 1;
        self.events.push_back(AodvEvent::DiscoveryFailed { dst });
        self.drop_buffered(dst);
    }

    /// Drops every buffered packet for `dst`.
    pub(super) fn drop_buffered(&mut self, dst: Addr) {
        for _ in 0..self.buffer.len() {
            let b = self.buffer.pop_front().expect("counted");
            if b.dst == dst {
                self.drop_packet(b.packet);
            } else {
                self.buffer.push_back(b);
            }
        }
    }

    // ----- Local repair (§6.12) -----

    /// A local repair for `dst` is in progress.
    pub(super) fn repairing(&self, dst: Addr) -> bool {
        self.discoveries.get(&dst).is_some_and(|d| d.repair.is_some())
    }

    /// The hop count of the route to `dst` if the break of `nb` under a packet that travelled
    /// `hops_traveled` hops should be repaired locally (§6.12).
    pub(super) fn repair_candidate(&self, now: SimTime, nb: Addr, dst: Addr, hops_traveled: u8) -> Option<u8> {
        if !self.cfg.local_repair || self.cfg.buffer_limit == 0 || self.discoveries.contains_key(&dst) {
            return None;
        }
        let r = self.routes.get(&dst).filter(|r| r.active(now) && r.next_hop == nb)?;
        let ok = match self.cfg.local_repair_rule {
            // §6.12: an intermediate node, destination no farther than MAX_REPAIR_TTL.
            LocalRepairRule::Rfc => hops_traveled > 0 && r.hops <= self.cfg.max_repair_ttl,
            // ns-2 rt_ll_failed: the break is closer to the destination than to the source.
            LocalRepairRule::Ns2 => hops_traveled > r.hops,
        };
        ok.then_some(r.hops)
    }

    /// RFC 3561 §6.12: the link to `nb` broke under a packet for `dst`; repair that route.
    pub(super) fn start_local_repair(&mut self, now: SimTime, nb: Addr, dst: Addr, old_hops: u8, hops_traveled: u8) {
        self.stats.local_repairs += 1;
        let dp = self.cfg.delete_period;
        let r = self.routes.get_mut(&dst).expect("repair candidate");
        // "the node increments the sequence number for the destination"; the route is unusable
        // meanwhile but keeps its precursors for the RERR that may follow.
        if r.valid_seq {
            r.seq = r.seq.wrapping_add(1);
        }
        r.valid = false;
        r.expiry = now + dp;
        r.file_expiry(&mut self.expiries);
        if let Some(list) = self.precursors.get_mut(&dst) {
            list.retain(|&p| p != nb);
            if list.is_empty() {
                self.precursors.remove(&dst);
            }
        }
        // The other routes through `nb` break as in §6.11 (the route to `dst`, now invalid, is
        // left alone); LinkBroken for the engine's queue.
        self.link_break(now, nb);
        // TTL = max(MIN_REPAIR_TTL, 0.5·#hops) + LOCAL_ADD_TTL, MIN_REPAIR_TTL being the last
        // known hop count to the destination and #hops the hops back to the packet's source
        // (rounded up).
        let half = hops_traveled.div_ceil(2);
        let ttl = old_hops
            .max(half)
            .saturating_add(self.cfg.local_add_ttl)
            .min(self.cfg.max_ttl());
        self.discoveries.insert(dst, Discovery::new(now, ttl, Some(old_hops)));
        self.try_send_rreq(now, dst);
    }

    /// RFC 3561 §6.12: no route within the discovery period: drop the packets and report the
    /// destination unreachable as in §6.11.
    pub(super) fn local_repair_failed(&mut self, now: SimTime, dst: Addr) {
        self.discoveries.remove(&dst);
        self.stats.local_repairs_failed += 1;
        self.drop_buffered(dst);
        let Some(r) = self.routes.get_mut(&dst) else {
            return;
        };
        let dests = vec![(dst, r.seq)];
        let recipients = self.precursors.remove(&dst).unwrap_or_default();
        self.send_rerr(now, dests, &recipients, Origin::Originated, false);
    }

    /// Puts a packet for `dst` in the buffer (dropping the oldest if full); gives it back when
    /// nothing may be buffered.
    pub(super) fn enqueue(&mut self, now: SimTime, dst: Addr, packet: P) -> Option<P> {
        if self.cfg.buffer_limit == 0 {
            return Some(packet);
        }
        if self.buffer.len() >= self.cfg.buffer_limit {
            let old = self.buffer.pop_front().expect("full buffer");
            self.drop_packet(old.packet);
        }
        self.buffer.push_back(Buffered { dst, at: now, packet });
        self.stats.data_buffered += 1;
        None
    }

    pub(super) fn remember_rreq(&mut self, now: SimTime, orig: Addr, id: u32) {
        let until = now + self.cfg.path_discovery_time;
        self.seen.insert(SeenRreq { orig, id, until });
        self.seen_order.push_back((until, orig, id));
        self.seen_purge_at = self.seen_purge_at.min(until);
    }

    /// Whether (orig, id) was seen within PATH_DISCOVERY_TIME (§6.5): its entry has not run
    /// out. Entries that ran out are purged when the oldest is due (`seen_purge_at`, so most
    /// calls read no more than the entry itself).
    pub(super) fn seen_recently(&mut self, now: SimTime, orig: Addr, id: u32) -> bool {
        if now >= self.seen_purge_at {
            while let Some(&(t, o, i)) = self.seen_order.front() {
                if t > now {
                    break;
                }
                self.seen_order.pop_front();
                if self.seen.get(&(o, i)).map(|e| e.until) == Some(t) {
                    self.seen.remove(&(o, i));
                }
            }
            self.seen_purge_at = self.seen_order.front().map_or(SimTime::NEVER, |e| e.0);
        }
        self.seen.get(&(orig, id)).is_some_and(|e| e.until > now)
    }

    pub(super) fn on_rreq(&mut self, now: SimTime, from: Addr, ttl: u8, q: &Rreq) {
        self.stats.rreq_received += 1;
        // RFC 3561 §6.8: ignore RREQs from a blacklisted neighbour.
        if let Some(&until) = self.blacklist.get(&from) {
            if until > now {
                self.stats.rreq_blacklisted += 1;
                return;
            }
            self.blacklist.remove(&from);
        }
        // RFC 3561 §6.5: first a route to the previous hop (no valid sequence number) ...
        if self.cfg.previous_hop_routes {
            self.neighbour_route(now, from);
        }
        // ... then keep only the first copy of each (originator, RREQ ID).
        if q.orig == self.addr || self.seen_recently(now, q.orig, q.rreq_id) {
            self.stats.rreq_duplicates += 1;
            return;
        }
        self.remember_rreq(now, q.orig, q.rreq_id);
        // RFC 3561 §6.5: reverse route to the originator.
        let hops = q.hop_count.saturating_add(1);
        let rev_expiry = match self.cfg.rev_route_life {
            Some(d) => now + d,
            None => {
                // MinimalLifetime = now + 2·NET_TRAVERSAL_TIME − 2·HopCount·NODE_TRAVERSAL_TIME.
                let plus = 2 * self.cfg.net_traversal_time.0;
                let minus = 2 * hops as u64 * self.cfg.node_traversal_time.0;
                now + SimDuration(plus.saturating_sub(minus))
            }
        };
        if !(self.cfg.rreq_leaves_reverse_route_invalid
            && self.update_inactive_reverse_route(now, from, hops, q, rev_expiry))
        {
            self.offer_route(now, q.orig, from, hops, q.orig_seq, rev_expiry, true);
        }
        let rev_next = self.lookup(now, q.orig).unwrap_or(from);

        if q.dst == self.addr {
            // RFC 3561 §6.6.1 and §6.1: the destination answers with its own sequence number,
            // raised to the one in the RREQ if that is newer.
            if !q.unknown_seq && seq_newer(q.dst_seq, self.seq) {
                self.seq = q.dst_seq;
            }
            if self.cfg.own_seq_rule == OwnSeqRule::Ns2 {
                // ns-2.35 recvRequest: max(own, asked) + 1, then up to the next even number.
                self.seq = self.seq.wrapping_add(2) & !1;
            }
            let rrep = Rrep {
                repair: false,
                ack_required: self.cfg.rrep_ack,
                prefix_size: 0,
                hop_count: 0,
                dst: self.addr,
                dst_seq: self.seq,
                orig: q.orig,
                lifetime_ms: to_ms(self.cfg.my_route_timeout),
            };
            let ttl = self.cfg.max_ttl();
            self.send_rrep(now, rev_next, ttl, rrep, Origin::Originated);
            return;
        }

        // RFC 3561 §6.6.2: an intermediate node with a fresh enough active route answers,
        // unless the D flag is set.
        let fresh = self.routes.get(&q.dst).filter(|r| {
            !q.dest_only
                && r.active(now)
                && r.valid_seq
                && (q.unknown_seq || seq_at_least(r.seq, q.dst_seq))
                && r.next_hop != from
        });
        if let Some(r) = fresh {
            let (fwd_next, fwd_hops, fwd_seq, fwd_expiry) = (r.next_hop, r.hops, r.seq, r.expiry);
            add_precursor(&mut self.precursors, q.dst, rev_next);
            let (rev_hops, rev_expiry) = match self.routes.get(&q.orig) {
                Some(r) => {
                    let (h, e) = (r.hops, r.expiry);
                    add_precursor(&mut self.precursors, q.orig, fwd_next);
                    (h, e)
                }
                None => (hops, now),
            };
            self.arm_hello(now);
            let rrep = Rrep {
                repair: false,
                ack_required: self.cfg.rrep_ack,
                prefix_size: 0,
                hop_count: fwd_hops,
                dst: q.dst,
                dst_seq: fwd_seq,
                orig: q.orig,
                lifetime_ms: to_ms(fwd_expiry.saturating_since(now)),
            };
            let ttl = self.cfg.max_ttl();
            self.send_rrep(now, rev_next, ttl, rrep, Origin::Originated);
            if q.gratuitous {
                // RFC 3561 §6.6.3: tell the destination about the route to the originator.
                let grat = Rrep {
                    repair: false,
                    ack_required: self.cfg.rrep_ack,
                    prefix_size: 0,
                    hop_count: rev_hops,
                    dst: q.orig,
                    dst_seq: q.orig_seq,
                    orig: q.dst,
                    lifetime_ms: to_ms(rev_expiry.saturating_since(now)),
                };
                self.send_rrep(now, fwd_next, ttl, grat, Origin::Originated);
            }
            return;
        }

        // RFC 3561 §6.5: rebroadcast with TTL − 1, hop count + 1 and the newest known
        // destination sequence number.
        if ttl > 1 {
            let mut f = q.clone();
            f.hop_count = hops;
            if let Some(r) = self.routes.get(&q.dst) {
                if r.valid_seq && (f.unknown_seq || seq_newer(r.seq, f.dst_seq)) {
                    f.dst_seq = r.seq;
                    f.unknown_seq = false;
                }
            }
            self.broadcast(now, ttl - 1, Message::Rreq(f), Origin::Forwarded);
        }
    }
}
