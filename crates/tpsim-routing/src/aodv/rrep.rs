//! Route replies (RFC 3561 §6.6, §6.7, §6.9) and Hello messages.

use super::*;

impl<P> Aodv<P> {
    // ----- RREP (§6.6, §6.7, §6.9) -----

    pub(super) fn send_rrep(&mut self, now: SimTime, to: Addr, ttl: u8, rrep: Rrep, origin: Origin) {
        if rrep.ack_required {
            // RFC 3561 §6.8: expect an RREP-ACK within NEXT_HOP_WAIT.
            self.ack_wait.insert(to, now + self.cfg.next_hop_wait);
        }
        self.queue(now, LinkDest::Unicast(to), ttl, Message::Rrep(rrep), origin);
    }

    pub(super) fn on_rrep(&mut self, now: SimTime, from: Addr, ttl: u8, p: &Rrep) {
        if p.dst == p.orig && p.hop_count == 0 {
            self.on_hello(now, from, p);
            return;
        }
        self.stats.rrep_received += 1;
        if p.ack_required {
            // RFC 3561 §5.4, §6.7: acknowledge to the sender.
            self.queue(now, LinkDest::Unicast(from), 1, Message::RrepAck, Origin::Originated);
        }
        // RFC 3561 §6.7: route to the previous hop, then the forward route.
        if self.cfg.previous_hop_routes {
            self.neighbour_route(now, from);
        }
        if p.dst == self.addr {
            return;
        }
        let hops = p.hop_count.saturating_add(1);
        let expiry = now + SimDuration::from_millis(p.lifetime_ms as u64);
        if !self.offer_route(now, p.dst, from, hops, p.dst_seq, expiry, false) {
            return;
        }
        if p.orig == self.addr || ttl <= 1 {
            return;
        }
        // RFC 3561 §6.7: forward along the reverse route (ns-3: along an inactive one too,
        // which stays inactive).
        let rev_next = if self.cfg.rreq_leaves_reverse_route_invalid {
            let (dp, bump) = (self.cfg.delete_period, self.cfg.expiry_increments_seq);
            match self.routes.get_mut(&p.orig) {
                Some(r) if r.active(now) => Some(r.next_hop),
                Some(r) => deactivate(r, dp, now, bump).then_some(r.next_hop),
                None => None,
            }
        } else {
            self.lookup(now, p.orig)
        };
        let Some(rev_next) = rev_next else {
            return;
        };
        if rev_next == from {
            return;
        }
        let end = self.cfg.life_end(now + self.cfg.active_route_timeout);
        if self.routes.contains_key(&p.dst) {
            add_precursor(&mut self.precursors, p.dst, rev_next);
        }
        if let Some(r) = self.routes.get_mut(&p.orig) {
            r.expiry = r.expiry.max(end);
            add_precursor(&mut self.precursors, p.orig, from);
        }
        if self.routes.contains_key(&from) {
            add_precursor(&mut self.precursors, from, rev_next);
        }
        self.arm_hello(now);
        let mut f = p.clone();
        f.hop_count = hops;
        f.ack_required = self.cfg.rrep_ack;
        self.send_rrep(now, rev_next, ttl - 1, f, Origin::Forwarded);
    }

    pub(super) fn on_hello(&mut self, now: SimTime, from: Addr, p: &Rrep) {
        self.stats.hello_received += 1;
        if p.dst != from {
            return;
        }
        // RFC 3561 §6.9: an active route to the neighbour for ALLOWED_HELLO_LOSS·HELLO_INTERVAL
        // with the HELLO's sequence number.
        let expiry = now + self.hello_life();
        let newly = self.set_neighbour_route(now, from, expiry, Some(p.dst_seq));
        self.arm_sweep(expiry);
        if self.cfg.hello {
            match self.neighbour_slot(from) {
                Ok(i) => self.neighbors[i].1 = now,
                Err(i) => self.neighbors.insert(i, (from, now)),
            }
        }
        if newly {
            self.route_became_valid(now, from);
        }
    }

    pub(super) fn hello_life(&self) -> SimDuration {
        SimDuration(self.cfg.allowed_hello_loss as u64 * self.cfg.hello_interval.0)
    }

    pub(super) fn arm_hello(&mut self, now: SimTime) {
        if self.cfg.hello && self.hello_at.is_none() {
            self.hello_at = Some(now + self.hello_gap());
        }
    }

    pub(super) fn hello_tick(&mut self, now: SimTime) {
        let interval = self.cfg.hello_interval;
        // RFC 3561 §6.9: only while part of an active route (ns-3: always).
        let precursors = &self.precursors;
        let active = self.cfg.hello_from_every_node
            || self
                .routes
                .values()
                .any(|r| r.active(now) && (r.hops > 1 || precursors.contains_key(&r.dst) || r.data_used));
        if !active {
            self.hello_at = None;
            return;
        }
        // RFC 3561 §6.9: no HELLO if we broadcast something within the last HELLO_INTERVAL.
        if let Some(lb) = self.last_bcast {
            if lb + interval > now {
                self.hello_at = Some(lb + interval);
                return;
            }
        }
        let hello = Rrep {
            repair: false,
            ack_required: false,
            prefix_size: 0,
            hop_count: 0,
            dst: self.addr,
            dst_seq: self.seq,
            orig: self.addr,
            lifetime_ms: to_ms(self.hello_life()),
        };
        self.broadcast(now, 1, Message::Rrep(hello), Origin::Originated);
        self.hello_at = Some(now + self.hello_gap());
    }

    /// Time to the next HELLO: HELLO_INTERVAL minus a uniform jitter of up to a quarter of it
    /// (RFC 5148 §5.2: periodic messages are jittered by subtracting, so that the interval
    /// never exceeds HELLO_INTERVAL and the loss deadline of §6.9 still holds). Without it,
    /// HELLOs keep a fixed phase with periodic data and can collide with it every time.
    pub(super) fn hello_gap(&mut self) -> SimDuration {
        let i = self.cfg.hello_interval;
        SimDuration(i.0 - (self.rng.uniform() * (i.0 / 4) as f64) as u64)
    }
}
