//! Link breaks and route errors (RFC 3561 §6.11).

use super::*;

impl<P> Aodv<P> {
    // ----- Link breaks and RERR (§6.11) -----

    /// RFC 3561 §6.11 case (i): the link to `nb` is broken. Every valid route through `nb`
    /// is invalidated with its sequence number incremented. The RERR lists the active routes
    /// that had precursors and goes to those precursors; under [`RerrRule::Ns2`]
    /// (`handle_link_failure`) it lists every route through `nb` and is broadcast at once, and
    /// `nb` leaves every precursor list.
    pub(super) fn link_break(&mut self, now: SimTime, nb: Addr) {
        self.stats.link_breaks += 1;
        self.recent_breaks.retain(|&(_, t)| t == now);
        self.recent_breaks.push((nb, now));
        let ns2 = self.cfg.rerr_rule == RerrRule::Ns2;
        let dp = self.cfg.delete_period;
        let mut dests = Vec::new();
        let mut recipients: Vec<Addr> = Vec::new();
        // In destination order, as the RERR lists them.
        for d in sorted_keys(&self.routes, |r| r.valid && r.next_hop == nb) {
            let r = self.routes.get_mut(&d).expect("listed");
            let was_active = r.active(now);
            // RFC 3561 §6.11 (1)–(3): increment the sequence number, invalidate, keep the entry
            // for DELETE_PERIOD.
            if r.valid_seq && !self.cfg.invalidation_keeps_seq {
                r.seq = r.seq.wrapping_add(1);
            }
            let listed = dests.len();
            invalidate(
                r,
                &mut self.precursors,
                &mut self.expiries,
                now + dp,
                was_active,
                &mut dests,
                &mut recipients,
            );
            if ns2 && dests.len() == listed {
                dests.push((d, r.seq));
            }
        }
        self.arm_sweep(now + dp);
        self.forget_neighbour(nb);
        if ns2 {
            for list in self.precursors.values_mut() {
                list.retain(|&p| p != nb);
            }
            self.emit_rerr(now, dests, RerrTo::BroadcastNow, Origin::Originated, false);
        } else {
            recipients.retain(|&p| p != nb);
            self.send_rerr(now, dests, &recipients, Origin::Originated, false);
        }
        self.events.push_back(AodvEvent::LinkBroken { next_hop: nb });
    }

    /// RFC 3561 §6.11 case (ii): a data packet for `dst` to forward and no active route.
    pub(super) fn rerr_no_route(&mut self, now: SimTime, prev_hop: Option<Addr>, dst: Addr) {
        if self.cfg.rerr_rule == RerrRule::Ns2 {
            // ns-2.35 `rt_resolve`: broadcast at once with the entry's sequence number.
            let seq = self.routes.get(&dst).map_or(0, |r| r.seq);
            self.emit_rerr(now, vec![(dst, seq)], RerrTo::BroadcastNow, Origin::Originated, false);
            return;
        }
        let (seq, mut recipients) = match self.routes.get(&dst) {
            Some(r) => (r.seq, self.precursors.remove(&dst).unwrap_or_default()),
            None => (0, Vec::new()),
        };
        if let Some(p) = prev_hop {
            if !recipients.contains(&p) {
                recipients.push(p);
            }
        }
        self.send_rerr(now, vec![(dst, seq)], &recipients, Origin::Originated, false);
    }

    /// RFC 3561 §6.11 case (iii): an RERR from neighbour `from`.
    pub(super) fn on_rerr(&mut self, now: SimTime, from: Addr, e: &Rerr) {
        self.stats.rerr_received += 1;
        if e.no_delete {
            self.on_rerr_no_delete(now, from, e);
            return;
        }
        let dp = self.cfg.delete_period;
        let mut dests = Vec::new();
        let mut recipients: Vec<Addr> = Vec::new();
        for &(d, s) in &e.unreachable {
            let Some(r) = self.routes.get_mut(&d) else {
                continue;
            };
            if !(r.valid && r.next_hop == from) {
                continue;
            }
            // ns-2.35 `recvError`: only if the route is not newer than what the RERR reports.
            if self.cfg.rerr_rule == RerrRule::Ns2 && r.valid_seq && seq_newer(r.seq, s) {
                continue;
            }
            let was_active = r.active(now);
            // Copy the sequence number from the RERR (never going back).
            if !self.cfg.invalidation_keeps_seq {
                if !r.valid_seq || seq_newer(s, r.seq) {
                    r.seq = s;
                }
                r.valid_seq = true;
            }
            invalidate(
                r,
                &mut self.precursors,
                &mut self.expiries,
                now + dp,
                was_active,
                &mut dests,
                &mut recipients,
            );
        }
        self.arm_sweep(now + dp);
        if self.cfg.rerr_rule == RerrRule::Ns2 {
            // Passed on, broadcast with jitter, for the routes that had precursors.
            self.emit_rerr(now, dests, RerrTo::Broadcast, Origin::Forwarded, false);
            return;
        }
        recipients.retain(|&p| p != from);
        self.send_rerr(now, dests, &recipients, Origin::Forwarded, false);
    }

    /// RFC 3561 §6.12, §5.3: an RERR with the N flag (a downstream node repaired a route
    /// locally and it got longer). The route is not deleted; the RERR is only passed on, with
    /// N, to the precursors of the destinations whose next hop is `from`.
    pub(super) fn on_rerr_no_delete(&mut self, now: SimTime, from: Addr, e: &Rerr) {
        let mut dests = Vec::new();
        let mut recipients: Vec<Addr> = Vec::new();
        for &(d, s) in &e.unreachable {
            let Some(r) = self.routes.get(&d) else {
                continue;
            };
            if !(r.active(now) && r.next_hop == from) {
                continue;
            }
            let Some(list) = self.precursors.get(&d) else {
                continue;
            };
            dests.push((d, s));
            for &p in list {
                if !recipients.contains(&p) {
                    recipients.push(p);
                }
            }
        }
        recipients.retain(|&p| p != from);
        self.send_rerr(now, dests, &recipients, Origin::Forwarded, true);
    }

    /// Sends an RERR for `dests` to `recipients`: unicast to a single one, broadcast otherwise
    /// (§6.11); at most RERR_RATELIMIT per second. `no_delete`: the N flag (§5.3, §6.12).
    pub(super) fn send_rerr(
        &mut self,
        now: SimTime,
        dests: Vec<(Addr, u32)>,
        recipients: &[Addr],
        origin: Origin,
        no_delete: bool,
    ) {
        let to = match recipients {
            [] => return,
            [one] => RerrTo::Unicast(*one),
            _ => RerrTo::Broadcast,
        };
        self.emit_rerr(now, dests, to, origin, no_delete);
    }

    /// Queues the RERR messages for `dests` (255 destinations each) to `to`, unless
    /// RERR_RATELIMIT (§6.11) holds them back. ns-2.35's `sendError` broadcasts every RERR.
    fn emit_rerr(&mut self, now: SimTime, dests: Vec<(Addr, u32)>, to: RerrTo, origin: Origin, no_delete: bool) {
        if dests.is_empty() {
            return;
        }
        if rate_next_allowed(&mut self.rerr_times, self.cfg.rerr_ratelimit, now) > now {
            self.stats.rerr_rate_limited += 1;
            return;
        }
        if self.cfg.rerr_ratelimit > 0 {
            self.rerr_times.push_back(now);
        }
        for chunk in dests.chunks(255) {
            let msg = Message::Rerr(Rerr {
                no_delete,
                unreachable: chunk.to_vec(),
            });
            match to {
                RerrTo::Unicast(a) => self.queue(now, LinkDest::Unicast(a), 1, msg, origin),
                RerrTo::Broadcast => self.broadcast(now, 1, msg, origin),
                RerrTo::BroadcastNow => self.queue(now, LinkDest::Broadcast, 1, msg, origin),
            }
        }
    }
}

/// Where an RERR goes.
#[derive(Clone, Copy)]
enum RerrTo {
    /// To one neighbour.
    Unicast(Addr),
    /// To every neighbour, after the broadcast jitter.
    Broadcast,
    /// To every neighbour at once (ns-2.35's RERRs after a break or for a missing route).
    BroadcastNow,
}
