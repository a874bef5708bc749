//! The route table (RFC 3561 §6.2): offering and refreshing routes, neighbours, and the
//! expiry sweep.

use super::*;

impl<P> Aodv<P> {
    // ----- Route table (§6.2) -----

    /// Offers a route with a known destination sequence number. It is taken (§6.2, §6.7) if
    /// there is no entry, the entry's sequence number is not valid, the offered one is newer,
    /// or they are equal and the entry is inactive or longer. Returns whether it was taken.
    /// `keep_longer`: the lifetime becomes max(existing, `expiry`) (§6.5) instead of `expiry`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn offer_route(
        &mut self,
        now: SimTime,
        dst: Addr,
        next_hop: Addr,
        hops: u8,
        seq: u32,
        expiry: SimTime,
        keep_longer: bool,
    ) -> bool {
        if dst == self.addr {
            return false;
        }
        let expiry = self.cfg.life_end(expiry);
        let take = match self.routes.get(&dst) {
            None => true,
            Some(r) => !r.valid_seq || seq_newer(seq, r.seq) || (seq == r.seq && (!r.active(now) || hops < r.hops)),
        };
        if !take {
            if keep_longer {
                if let Some(r) = self.routes.get_mut(&dst) {
                    if r.active(now) && r.expiry < expiry {
                        r.expiry = expiry;
                    }
                }
            }
            return false;
        }
        let r = self.routes.get_or_insert_with(dst, || Route::unknown(dst, next_hop));
        let was_active = r.active(now);
        r.next_hop = next_hop;
        r.hops = hops;
        r.seq = seq;
        r.valid_seq = true;
        r.valid = true;
        r.expiry = if keep_longer && was_active {
            r.expiry.max(expiry)
        } else {
            expiry
        };
        let e = r.expiry;
        r.file_expiry(&mut self.expiries);
        self.arm_sweep(e);
        if hops > 1 {
            self.arm_hello(now);
        }
        self.route_became_valid(now, dst);
        true
    }

    /// ns-3's reverse route ([`AodvConfig::rreq_leaves_reverse_route_invalid`]): if the entry
    /// for the RREQ's originator exists but is inactive, it takes the RREQ's next hop, hop
    /// count, newer sequence number and a lifetime of max(existing, `rev_expiry`) and stays
    /// invalid; returns whether it did (false: no entry, or an active one, or one due for
    /// deletion, which the caller offers the route to as usual).
    pub(super) fn update_inactive_reverse_route(
        &mut self,
        now: SimTime,
        from: Addr,
        hops: u8,
        q: &Rreq,
        rev_expiry: SimTime,
    ) -> bool {
        let rev_expiry = self.cfg.life_end(rev_expiry);
        let Some(r) = self.routes.get_mut(&q.orig) else {
            return false;
        };
        if r.active(now) || !deactivate(r, self.cfg.delete_period, now, self.cfg.expiry_increments_seq) {
            return false;
        }
        if !r.valid_seq || seq_newer(q.orig_seq, r.seq) {
            r.seq = q.orig_seq;
        }
        r.valid_seq = true;
        r.next_hop = from;
        r.hops = hops;
        r.expiry = r.expiry.max(rev_expiry);
        true
    }

    /// Makes the route to neighbour `nb` a valid one-hop route lasting at least until
    /// `expiry` (with sequence number `seq` if given, else keeping the one it has); returns
    /// whether it was not active before.
    pub(super) fn set_neighbour_route(&mut self, now: SimTime, nb: Addr, expiry: SimTime, seq: Option<u32>) -> bool {
        let expiry = self.cfg.life_end(expiry);
        let r = self.routes.get_or_insert_with(nb, || Route::unknown(nb, nb));
        let newly = !r.active(now);
        r.next_hop = nb;
        r.hops = 1;
        r.valid = true;
        r.expiry = if newly { expiry } else { r.expiry.max(expiry) };
        if let Some(seq) = seq {
            r.seq = seq;
            r.valid_seq = true;
        }
        r.file_expiry(&mut self.expiries);
        newly
    }

    /// RFC 3561 §6.5, §6.7: a route to a neighbour heard directly, without a valid sequence
    /// number (an existing one is kept), lifetime at least ACTIVE_ROUTE_TIMEOUT.
    pub(super) fn neighbour_route(&mut self, now: SimTime, nb: Addr) {
        if nb == self.addr {
            return;
        }
        let expiry = now + self.cfg.active_route_timeout;
        let newly = self.set_neighbour_route(now, nb, expiry, None);
        self.arm_sweep(expiry);
        if newly {
            self.route_became_valid(now, nb);
        }
    }

    /// RFC 3561 §6.2: an active route's lifetime becomes at least now + ACTIVE_ROUTE_TIMEOUT.
    #[inline]
    pub(super) fn refresh(&mut self, now: SimTime, a: Addr) {
        let end = self.cfg.life_end(now + self.cfg.active_route_timeout);
        if let Some(r) = self.routes.get_mut(&a) {
            if r.active(now) {
                r.expiry = r.expiry.max(end);
            }
        }
    }

    /// Something was heard from `a` (HELLO link monitoring, §6.9).
    #[inline]
    pub(super) fn heard(&mut self, now: SimTime, a: Addr) {
        if let Ok(i) = self.neighbour_slot(a) {
            let t = &mut self.neighbors[i].1;
            *t = (*t).max(now);
        }
    }

    /// HELLO neighbour `a`, if it is one, stays alive at least until `until`
    /// ([`AodvConfig::forwarding_refreshes_next_hop`]): it counts as heard at
    /// `until` − ALLOWED_HELLO_LOSS·HELLO_INTERVAL.
    pub(super) fn keep_alive(&mut self, until: SimTime, a: Addr) {
        let as_heard = SimTime(until.0.saturating_sub(self.hello_life().0));
        self.heard(as_heard, a);
    }

    /// Where HELLO neighbour `a` is in `neighbors`: `Ok(index)`, or `Err(index)` where it
    /// would go.
    #[inline]
    pub(super) fn neighbour_slot(&self, a: Addr) -> Result<usize, usize> {
        self.neighbors.binary_search_by_key(&a, |e| e.0)
    }

    /// `a` is no longer a HELLO neighbour.
    pub(super) fn forget_neighbour(&mut self, a: Addr) {
        if let Ok(i) = self.neighbour_slot(a) {
            self.neighbors.remove(i);
        }
    }

    pub(super) fn arm_sweep(&mut self, t: SimTime) {
        if t < self.next_sweep {
            self.next_sweep = t;
        }
    }

    /// A route to `dst` may have become valid: complete its discovery and release its packets.
    pub(super) fn route_became_valid(&mut self, now: SimTime, dst: Addr) {
        if self.discoveries.is_empty() && self.buffer.is_empty() {
            return;
        }
        let Some(next_hop) = self.lookup(now, dst) else {
            return;
        };
        if let Some(d) = self.discoveries.remove(&dst) {
            match d.repair {
                None => {
                    self.stats.discoveries_succeeded += 1;
                    self.events.push_back(AodvEvent::RouteFound {
                        dst,
                        latency: now.saturating_since(d.started),
                    });
                }
                Some(old_hops) => {
                    self.stats.local_repairs_succeeded += 1;
                    // RFC 3561 §6.12: a longer route than before → RERR with the N flag.
                    let r = &self.routes[&dst];
                    if r.hops > old_hops {
                        let dests = vec![(dst, r.seq)];
                        let recipients = self.precursors.get(&dst).cloned().unwrap_or_default();
                        self.send_rerr(now, dests, &recipients, Origin::Originated, true);
                    }
                }
            }
        }
        for _ in 0..self.buffer.len() {
            let b = self.buffer.pop_front().expect("counted");
            if b.dst == dst {
                self.events.push_back(AodvEvent::Release {
                    packet: b.packet,
                    next_hop,
                });
            } else {
                self.buffer.push_back(b);
            }
        }
    }

    /// Expired routes become invalid (kept DELETE_PERIOD), invalid ones past it are deleted,
    /// silent HELLO neighbours are link breaks; recomputes `next_sweep`.
    pub(super) fn sweep(&mut self, now: SimTime) {
        let (dp, bump) = (self.cfg.delete_period, self.cfg.expiry_increments_seq);
        // Live entries in time order (stale ones dropped): every route due has its live entry
        // at or before now (see `expiries`); the first live entry later than now that is its
        // route's own expiry is the earliest expiry of all, and ends the walk.
        while let Some(&std::cmp::Reverse((t, a))) = self.expiries.peek() {
            let Some(r) = self.routes.get_mut(&a).filter(|r| r.filed == t) else {
                self.expiries.pop();
                continue;
            };
            if t > now && r.expiry == t {
                break;
            }
            self.expiries.pop();
            r.filed = SimTime::NEVER;
            // RFC 3561 §6.11: an expired route is invalid, and deleted DELETE_PERIOD later.
            if r.expiry <= now && !deactivate(r, dp, now, bump) {
                self.routes.remove(&a);
                self.precursors.remove(&a);
                continue;
            }
            // Just invalidated, or extended since it was filed: filed again at its expiry.
            r.file_expiry(&mut self.expiries);
        }
        let mut next = self.expiries.peek().map_or(SimTime::NEVER, |e| e.0 .0);
        debug_assert_eq!(
            next,
            self.routes.values().map(|r| r.expiry).min().unwrap_or(SimTime::NEVER),
            "the expiry heap lost a route"
        );
        let mut lost = std::mem::take(&mut self.scratch);
        lost.clear();
        // RFC 3561 §6.9 allows ALLOWED_HELLO_LOSS·HELLO_INTERVAL of silence. HELLOs leave up
        // to `broadcast_jitter` late, so without that margin a single lost HELLO followed by a
        // jittered one would already count as a break.
        let life = self.hello_life() + self.cfg.broadcast_jitter;
        for &(a, t) in &self.neighbors {
            let deadline = t + life;
            if deadline <= now {
                lost.push(a);
            } else {
                next = next.min(deadline);
            }
        }
        self.next_sweep = next;
        for &a in &lost {
            // RFC 3561 §6.9: nothing heard for ALLOWED_HELLO_LOSS·HELLO_INTERVAL.
            self.forget_neighbour(a);
            self.link_break(now, a);
        }
        lost.clear();
        self.scratch = lost;
    }
}
