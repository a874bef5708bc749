//! AODV, Ad hoc On-Demand Distance Vector routing (RFC 3561), as a sans-IO state machine.
//!
//! # Read these first
//!
//! * RFC 3561 §3 (overview) and §4 (route discovery, sequence numbers, the route table).
//! * §5: message formats ([`Message`]: RREQ §5.1, RREP §5.2, RERR §5.3, RREP-ACK §5.4).
//! * §6.1 sequence numbers, §6.2 the route table and lifetimes, §6.3–§6.4 generating RREQs with
//!   the expanding ring search, §6.5 processing RREQs, §6.6 generating RREPs (destination,
//!   intermediate node, gratuitous), §6.7 forwarding RREPs, §6.8 unidirectional links and the
//!   blacklist, §6.9 HELLO messages, §6.10–§6.11 link breaks and RERRs, §6.12 local repair,
//!   §10 the constants ([`AodvConfig`]).
//! * ns-2.35 `aodv/aodv.{h,cc}` for the values of [`AodvConfig::ns2`] (table in docs/models.md).
//!
//! # Shape
//!
//! [`Aodv`] owns the route table, the RREQ ID cache, the blacklist, the route discoveries in
//! progress and a buffer of data packets waiting for a route. The engine calls
//! [`Aodv::route_output`] for every data packet that needs a next hop, [`Aodv::on_message`] for
//! every AODV message received, [`Aodv::on_data_link_failure`] when the MAC gives up on a data
//! frame (with the packet, which a local repair may keep), [`Aodv::on_link_failure`] when it
//! gives up on an RREP (or on a data frame it does not hand over), and [`Aodv::on_timeout`];
//! after every call it drains [`Aodv::poll_transmit`], [`Aodv::poll_event`] and asks
//! [`Aodv::poll_timeout`].
//!
//! Broadcasts (RREQs sent or forwarded, RERRs to several precursors, HELLOs) are held for a
//! uniform random jitter in [0, `broadcast_jitter`) before `poll_transmit` hands them out;
//! unicasts (RREP, RREP-ACK, RERR to one precursor) go out at once.
//!
//! # Timers
//!
//! No timer per packet or per route. `poll_timeout` is the minimum of: the earliest held
//! broadcast, each discovery's deadline (a handful), the oldest buffered packet's timeout, the
//! HELLO tick, RREP-ACK waits, and `next_sweep`, a lower bound of all route expiries and HELLO
//! link-loss deadlines. Refreshing a route only extends its expiry, so the bound stays valid; a
//! sweep that finds nothing due just recomputes it. Route validity itself is checked lazily
//! (valid flag and expiry > now), so a route expires exactly on time whatever the sweep does.
//! The RREQ ID cache and the blacklist are purged lazily when they are consulted.
//!
//! # Choices where the RFC leaves room
//!
//! * The destination's sequence number (§6.1, §6.6.1): before answering it takes the maximum of
//!   its own and the RREQ's destination sequence number (which covers "increment if equal to
//!   the incremented value"). Its own number is also incremented before each RREQ it originates.
//! * Every RREQ of a discovery (ring steps and retries) gets a new RREQ ID and a new originator
//!   sequence number (§6.3). The expanding ring starts at TTL_START, or at the hop count of an
//!   invalid entry + TTL_INCREMENT (§6.4); RREQ_RETRIES further RREQs follow the first one at
//!   TTL = NET_DIAMETER. [`RingRule::Ns2`] is ns-2.35's variant (network-wide at once for a
//!   destination never reached).
//! * A discovery's latency ([`AodvEvent::RouteFound`]) counts from the moment it was started
//!   (the first RREQ created, before its jitter). A discovery completes as soon as *any*
//!   message gives a valid route to the destination (an RREP, or an RREQ from it, like ns-2).
//! * RERR recipients are the precursors of the unreachable destinations (§6.11); destinations
//!   without precursors are left out, and no RERR is sent if no precursor remains. Precursor
//!   lists are cleared when their route is invalidated. A received RERR never makes a
//!   sequence number older. For a data packet with no route at an intermediate node (case
//!   (ii)) the previous hop is added to the recipients. RERRs over RERR_RATELIMIT are dropped.
//! * RREQs over RREQ_RATELIMIT are postponed, not dropped.
//! * When the discovery buffer is full the oldest packet is dropped (ns-2's `aodv_rqueue`).
//! * HELLOs (§6.9) are RREPs with destination = originator = sender, hop count 0, TTL 1, and
//!   lifetime ALLOWED_HELLO_LOSS·HELLO_INTERVAL. A node sends them every HELLO_INTERVAL minus a
//!   uniform jitter of up to a quarter of it (RFC 5148 §5.2; without it HELLOs keep a fixed
//!   phase with periodic data and can collide with it every time) unless it broadcast
//!   something in the last interval, while it is "part of an active route": it has an active
//!   route of more than one hop, with precursors, or that carried data. A neighbour from which
//!   a HELLO was received and then nothing at all (any AODV message or data) for
//!   ALLOWED_HELLO_LOSS·HELLO_INTERVAL plus the broadcast jitter is treated as a link break
//!   (§6.11 case (i)).
//! * An intermediate node does not answer an RREQ (§6.6.2) with a route whose next hop is the
//!   neighbour the RREQ came from (that reply would describe a path back through the asker).
//! * On an RREP the node also adds the next hop toward the destination to the precursors of
//!   the reverse route, so that breaks of the reverse path are reported too (as ns-2 does).
//!
//! # Local repair (§6.12)
//!
//! With [`AodvConfig::local_repair`], a data frame the MAC could not deliver
//! ([`Aodv::on_data_link_failure`]) may start a local repair instead of an immediate RERR:
//!
//! * Who repairs ([`LocalRepairRule`]): the RFC's rule, an intermediate node (the packet has
//!   travelled at least one hop) whose route to the destination is at most MAX_REPAIR_TTL hops;
//!   or ns-2's (`rt_ll_failed`), a node the packet reached in more hops than the route still
//!   has (the break is closer to the destination than to the source). Only the packet's
//!   destination is repaired; the other routes through the broken neighbour are broken and
//!   reported at once (§6.11), and are not repaired later (the RFC's optional "locally
//!   repairable" flag is not kept). ns-2 leaves those other routes up instead.
//! * The route's destination sequence number is incremented and the route made invalid (its
//!   precursors kept); one RREQ goes out with TTL max(MIN_REPAIR_TTL, ⌈#hops/2⌉) +
//!   LOCAL_ADD_TTL, MIN_REPAIR_TTL being the route's hop count and #hops the hops the packet
//!   travelled from its source; RREQ_RATELIMIT applies. The wait is RING_TRAVERSAL_TIME of that
//!   TTL (RFC "discovery period") or `local_repair_wait` (ns-2's LOCAL_REPAIR_WAIT_TIME).
//! * Meanwhile packets for the destination, forwarded ([`Aodv::route_output`]) or handed back
//!   by the engine's queue flush ([`Aodv::on_data_link_failure`]), wait in the discovery buffer.
//! * Any message that makes the route valid again (an RREP, an RREQ from the destination) ends
//!   the repair: the packets are released, and if the new route is longer than the old one an
//!   RERR with the N flag goes to the route's precursors. No [`AodvEvent::RouteFound`] (that
//!   event is for discoveries of originated packets); see the `local_repairs*` counters.
//! * No route by the end of the wait: the packets are dropped (NoRoute) and the precursors get
//!   an RERR for the destination, as for a plain break (§6.11). No
//!   [`AodvEvent::DiscoveryFailed`].
//! * A received RERR with the N flag deletes nothing: it is passed on, with N, to the
//!   precursors of the listed destinations whose next hop sent it (§6.12). Originators do not
//!   start a new discovery on it (the RFC's MAY).
//! * Breaks found by HELLO loss (no packet in hand) are never repaired.
//!
//! # Simplifications
//!
//! No multicast (J, R flags), no subnet routes (prefix size 0), no extensions, one interface,
//! no actions after reboot (§6.13), no expanding-ring TTL learned from the IP header of
//! received RREPs. The A flag is put on every RREP sent or forwarded when `rrep_ack` is set,
//! rather than only over links suspected to be unidirectional.

mod config;
mod message;
mod table;

#[cfg(test)]
mod tests;

pub use config::{AodvConfig, LocalRepairRule, OwnSeqRule, RingRule, RreqBackoff};
pub use message::{Message, MessageKind, Rerr, Rrep, Rreq};

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use tpsim_core::{RngStream, SimDuration, SimTime};

use crate::{Addr, LinkDest};
use table::{
    add_precursor, seq_at_least, seq_newer, sorted_keys, ExpiryHeap, HashMap, Map, OpenTable, Route, RouteTable,
    SeenRreq,
};

/// A control message to put on the link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Broadcast to every neighbour, or unicast to one.
    pub dest: LinkDest,
    /// IP TTL to put in the header.
    pub ttl: u8,
    /// The message (UDP payload, port 654).
    pub msg: Message,
}

/// Why a data packet was abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// No route: discovery failed after its retries, the packet waited longer than
    /// `buffer_timeout`, the buffer was full, or an intermediate node had no route.
    NoRoute,
}

/// Something the engine must act on, from [`Aodv::poll_event`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AodvEvent<P> {
    /// A buffered data packet now has a route: send it to `next_hop`.
    Release {
        /// The packet given to [`Aodv::route_output`].
        packet: P,
        /// Neighbour to send it to.
        next_hop: Addr,
    },
    /// A buffered data packet was abandoned.
    Drop {
        /// The packet.
        packet: P,
        /// Why.
        reason: DropReason,
    },
    /// A route discovery started by this node completed.
    RouteFound {
        /// The destination.
        dst: Addr,
        /// Time from the start of the discovery to the route.
        latency: SimDuration,
    },
    /// A route discovery gave up after its retries (§6.3); its packets were dropped.
    DiscoveryFailed {
        /// The destination.
        dst: Addr,
    },
    /// The link to `next_hop` is broken (MAC feedback or HELLO loss); the engine flushes the
    /// packets queued to it.
    LinkBroken {
        /// The neighbour.
        next_hop: Addr,
    },
}

/// The answer of [`Aodv::route_output`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteResult<P> {
    /// Send the packet to `next_hop`.
    Forward {
        /// Neighbour to send it to.
        next_hop: Addr,
        /// The packet, given back.
        packet: P,
    },
    /// The packet waits in the buffer for a route discovery (a `Release` or `Drop` event
    /// follows).
    Buffered,
    /// The packet is abandoned.
    Drop {
        /// The packet, given back.
        packet: P,
        /// Why.
        reason: DropReason,
    },
}

/// Plain counters of one AODV instance. Messages are counted as sent when `poll_transmit`
/// hands them out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AodvStats {
    /// RREQs originated (each ring step and retry counts).
    pub rreq_originated: u64,
    /// RREQs rebroadcast for others (§6.5).
    pub rreq_forwarded: u64,
    /// RREQs received (duplicates and blacklisted ones included).
    pub rreq_received: u64,
    /// RREQs discarded as duplicates (§6.5).
    pub rreq_duplicates: u64,
    /// RREQs ignored because their sender was blacklisted (§6.8).
    pub rreq_blacklisted: u64,
    /// RREPs originated: as destination, as intermediate node, gratuitous (§6.6).
    pub rrep_originated: u64,
    /// RREPs forwarded toward the originator (§6.7).
    pub rrep_forwarded: u64,
    /// RREPs received (HELLOs not included).
    pub rrep_received: u64,
    /// RERRs originated: link break or no route for a data packet (§6.11 cases (i), (ii)).
    pub rerr_originated: u64,
    /// RERRs propagated after receiving one (§6.11 case (iii)).
    pub rerr_forwarded: u64,
    /// RERRs received.
    pub rerr_received: u64,
    /// RERRs not sent because of RERR_RATELIMIT.
    pub rerr_rate_limited: u64,
    /// RREP-ACKs sent.
    pub rrep_ack_sent: u64,
    /// RREP-ACKs received.
    pub rrep_ack_received: u64,
    /// HELLOs sent.
    pub hello_sent: u64,
    /// HELLOs received.
    pub hello_received: u64,
    /// Route discoveries started.
    pub discoveries_started: u64,
    /// Route discoveries that found a route.
    pub discoveries_succeeded: u64,
    /// Route discoveries abandoned after RREQ_RETRIES.
    pub discoveries_failed: u64,
    /// Data packets put in the discovery buffer.
    pub data_buffered: u64,
    /// Data packets dropped for lack of a route (every [`DropReason::NoRoute`]).
    pub data_dropped_no_route: u64,
    /// Link breaks handled (MAC feedback or HELLO loss).
    pub link_breaks: u64,
    /// Local repairs started (§6.12).
    pub local_repairs: u64,
    /// Local repairs that found a route within their wait.
    pub local_repairs_succeeded: u64,
    /// Local repairs that found none (their packets dropped, RERR sent).
    pub local_repairs_failed: u64,
}

/// Who created a held message (for the counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Originated,
    Forwarded,
}

/// A message held until `at` (broadcast jitter). Ordered so that the `BinaryHeap` pops the
/// earliest first, ties in order of creation.
#[derive(Debug)]
struct Pending {
    at: SimTime,
    seq: u64,
    origin: Origin,
    out: Outgoing,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// A route discovery in progress (§6.3, §6.4).
#[derive(Clone, Debug)]
struct Discovery {
    /// When it started (for the latency).
    started: SimTime,
    /// TTL of the last (or pending) RREQ.
    ttl: u8,
    /// RREQs sent at TTL = NET_DIAMETER so far.
    nw_sent: u32,
    /// `sent`: end of the wait for an RREP; otherwise when the rate limit allows the RREQ.
    deadline: SimTime,
    /// The RREQ for `ttl` has been sent.
    sent: bool,
    /// A local repair (§6.12) rather than a discovery for packets this node originates:
    /// the hop count of the route before the break.
    repair: Option<u8>,
}

impl Discovery {
    /// A discovery (or local repair) starting at `now` with its first RREQ at `ttl`, not sent
    /// yet.
    fn new(now: SimTime, ttl: u8, repair: Option<u8>) -> Discovery {
        Discovery {
            started: now,
            ttl,
            nw_sent: 0,
            deadline: now,
            sent: false,
            repair,
        }
    }
}

/// A data packet waiting for a route.
#[derive(Debug)]
struct Buffered<P> {
    dst: Addr,
    at: SimTime,
    packet: P,
}

const ONE_SECOND: SimDuration = SimDuration::from_secs(1);

/// Milliseconds of `d`, saturated to `u32` (RREP Lifetime field, §5.2).
fn to_ms(d: SimDuration) -> u32 {
    (d.0 / 1_000_000).min(u32::MAX as u64) as u32
}

/// Sliding one-second window rate limit: the earliest time another message may be sent when
/// `limit` per second are allowed (0 = unlimited). Purges entries older than one second.
fn rate_next_allowed(times: &mut VecDeque<SimTime>, limit: u32, now: SimTime) -> SimTime {
    if limit == 0 {
        return now;
    }
    while times.front().is_some_and(|&t| t + ONE_SECOND <= now) {
        times.pop_front();
    }
    let limit = limit as usize;
    if times.len() < limit {
        now
    } else {
        times[times.len() - limit] + ONE_SECOND
    }
}

/// One node's AODV routing agent. `P` is the engine's data packet type (held while a route is
/// being discovered and handed back in events).
#[derive(Debug)]
pub struct Aodv<P> {
    /// Shared by every agent of a network: read-only, and hot in the cache however many
    /// nodes there are (a copy per agent would be 184 bytes of each cold agent to fetch).
    cfg: Arc<AodvConfig>,
    addr: Addr,
    rng: RngStream,
    /// Own sequence number (§6.1).
    seq: u32,
    /// Last RREQ ID used (§6.3).
    rreq_id: u32,
    routes: RouteTable,
    /// Destination → the precursors of its route (§6.2), never empty; only routes with
    /// precursors have an entry, removed with the route.
    precursors: HashMap<Addr, Vec<Addr>>,
    /// (originator, RREQ ID) → forget at (§6.5).
    seen: OpenTable<SeenRreq>,
    seen_order: VecDeque<(SimTime, Addr, u32)>,
    /// When the oldest entry of `seen_order` runs out (`NEVER`: none).
    seen_purge_at: SimTime,
    /// Neighbour → ignore its RREQs until (§6.8).
    blacklist: Map<Addr, SimTime>,
    discoveries: Map<Addr, Discovery>,
    buffer: VecDeque<Buffered<P>>,
    tx: BinaryHeap<Pending>,
    tx_seq: u64,
    events: VecDeque<AodvEvent<P>>,
    rreq_times: VecDeque<SimTime>,
    rerr_times: VecDeque<SimTime>,
    /// HELLO neighbours and the last time anything was heard from each (§6.9), sorted by
    /// address: a node has few, and a sorted vector reads them in one cache line where a
    /// B-tree reads a node's keys and then its values.
    neighbors: Vec<(Addr, SimTime)>,
    hello_at: Option<SimTime>,
    last_bcast: Option<SimTime>,
    /// Neighbour → RREP-ACK deadline (§6.8).
    ack_wait: Map<Addr, SimTime>,
    /// Lower bound of route expiries and HELLO loss deadlines.
    next_sweep: SimTime,
    /// Route expiries: each route has one live entry, at its `filed` time, no later than its
    /// `expiry` (an expiry that moved later is re-filed when the entry comes up); other
    /// entries are stale. The sweep visits only the routes that are due instead of the whole
    /// table.
    expiries: ExpiryHeap,
    scratch: Vec<Addr>,
    /// Neighbours whose break was handled, all at the same instant (the last one): a data frame
    /// handed back at that instant (the engine's LinkBroken flush) is not a new break.
    recent_breaks: Vec<(Addr, SimTime)>,
    stats: AodvStats,
}

impl<P> Aodv<P> {
    /// A node with interface address `addr`. `rng` draws the broadcast jitter.
    /// `cfg` (an [`AodvConfig`], or an `Arc` of one shared by the agents of a network, as the
    /// engine does) should pass [`AodvConfig::validate`] (checked in debug builds).
    pub fn new(cfg: impl Into<Arc<AodvConfig>>, addr: Addr, rng: RngStream) -> Self {
        let cfg = cfg.into();
        debug_assert!(cfg.validate().is_ok(), "invalid AodvConfig: {:?}", cfg.validate());
        let mut a = Aodv {
            cfg,
            addr,
            rng,
            seq: 0,
            rreq_id: 0,
            routes: RouteTable::default(),
            precursors: HashMap::default(),
            seen: OpenTable::default(),
            seen_order: VecDeque::new(),
            seen_purge_at: SimTime::NEVER,
            blacklist: Map::default(),
            discoveries: Map::default(),
            buffer: VecDeque::new(),
            tx: BinaryHeap::new(),
            tx_seq: 0,
            events: VecDeque::new(),
            rreq_times: VecDeque::new(),
            rerr_times: VecDeque::new(),
            neighbors: Vec::new(),
            hello_at: None,
            last_bcast: None,
            ack_wait: Map::default(),
            next_sweep: SimTime::NEVER,
            expiries: BinaryHeap::new(),
            scratch: Vec::new(),
            recent_breaks: Vec::new(),
            stats: AodvStats::default(),
        };
        // ns-3's HELLO timer runs on every node from the start (`hello_from_every_node`).
        if a.cfg.hello_from_every_node {
            a.arm_hello(SimTime::ZERO);
        }
        a
    }

    /// Asks the caches for what [`Aodv::on_message`] will read when `msg` arrives from
    /// neighbour `from`: the agent itself and the table slots where its lookups start (the
    /// route to `from`, §6.2; for an RREQ the duplicate entry, §6.5, and the routes to the
    /// originator and the destination; for an RREP the routes to its destination and
    /// originator, §6.7). A hint only (see [`tpsim_core::prefetch()`]): it changes nothing. The
    /// engine calls it an airtime ahead, when the frame's signal starts, so that a node a
    /// flood reaches finds its cold tables in the cache.
    #[inline]
    pub fn prefetch_message(&self, from: Addr, msg: &Message) {
        tpsim_core::prefetch(self, 16);
        self.routes.prefetch(from);
        match msg {
            Message::Rreq(q) => {
                self.seen.prefetch((q.orig, q.rreq_id));
                self.routes.prefetch(q.orig);
                self.routes.prefetch(q.dst);
            }
            Message::Rrep(p) => {
                self.routes.prefetch(p.dst);
                self.routes.prefetch(p.orig);
            }
            Message::Rerr(_) | Message::RrepAck => {}
        }
        tpsim_core::prefetch_slice(&self.neighbors, 1);
    }

    /// Asks the caches for what [`Aodv::route_output`] will read for a data packet from `src`
    /// to `dst` arriving from neighbour `prev_hop`: the agent, its HELLO neighbours and the
    /// table slots of the three routes it refreshes (§6.2). A hint only, like
    /// [`Aodv::prefetch_message`].
    #[inline]
    pub fn prefetch_data(&self, prev_hop: Addr, src: Addr, dst: Addr) {
        tpsim_core::prefetch(self, 16);
        self.routes.prefetch(dst);
        self.routes.prefetch(src);
        self.routes.prefetch(prev_hop);
        tpsim_core::prefetch_slice(&self.neighbors, 1);
    }

    /// This node's address.
    pub fn addr(&self) -> Addr {
        self.addr
    }

    /// The configuration.
    pub fn config(&self) -> &AodvConfig {
        &self.cfg
    }

    /// This node's own destination sequence number (§6.1).
    pub fn own_seq(&self) -> u32 {
        self.seq
    }

    /// The counters.
    pub fn stats(&self) -> AodvStats {
        self.stats
    }

    /// Next hop of a valid, unexpired route to `dst` (§6.2).
    pub fn lookup(&self, now: SimTime, dst: Addr) -> Option<Addr> {
        self.routes.get(&dst).filter(|r| r.active(now)).map(|r| r.next_hop)
    }

    /// Hop count of a valid, unexpired route to `dst`.
    pub fn route_hops(&self, now: SimTime, dst: Addr) -> Option<u8> {
        self.routes.get(&dst).filter(|r| r.active(now)).map(|r| r.hops)
    }

    /// A data packet from `src` to `dst` needs a next hop. `prev_hop` is `None` when this node
    /// originated it, the neighbour it came from when forwarding.
    ///
    /// * Valid route: the lifetimes of the routes to `src`, `dst`, the previous hop and the next
    ///   hop become at least now + ACTIVE_ROUTE_TIMEOUT (§6.2) and the packet is forwarded.
    /// * Originated, no route: the packet is buffered and a route discovery starts, or the
    ///   packet joins the one in progress (§6.3, §6.4).
    /// * Forwarded, no route, a local repair for `dst` in progress (§6.12): the packet is
    ///   buffered ([`RouteResult::Buffered`]) until the repair ends.
    /// * Forwarded, no route otherwise: the packet is dropped and an RERR is sent (§6.11 case
    ///   (ii)).
    pub fn route_output(
        &mut self,
        now: SimTime,
        prev_hop: Option<Addr>,
        src: Addr,
        dst: Addr,
        packet: P,
    ) -> RouteResult<P> {
        if let Some(p) = prev_hop {
            self.heard(now, p);
        }
        let art = self.cfg.active_route_timeout;
        let end = self.cfg.life_end(now + art);
        if let Some(r) = self.routes.get_mut(&dst) {
            if r.active(now) {
                // RFC 3561 §6.2: refresh the routes used by the packet.
                let next_hop = r.next_hop;
                r.expiry = r.expiry.max(end);
                let first_use = !r.data_used;
                r.data_used = true;
                self.refresh(now, next_hop);
                if src != self.addr {
                    self.refresh(now, src);
                }
                if let Some(p) = prev_hop {
                    self.refresh(now, p);
                    if self.cfg.forwarding_refreshes_next_hop {
                        self.keep_alive(now + art, next_hop);
                    }
                }
                if first_use {
                    self.arm_hello(now);
                }
                return RouteResult::Forward { next_hop, packet };
            }
        }
        if prev_hop.is_some() && !self.repairing(dst) {
            // RFC 3561 §6.11 case (ii): no active route for a packet we should forward.
            self.stats.data_dropped_no_route += 1;
            self.rerr_no_route(now, prev_hop, dst);
            return RouteResult::Drop {
                packet,
                reason: DropReason::NoRoute,
            };
        }
        // Originated, or forwarded during a local repair (§6.12: "data packets SHOULD be
        // buffered").
        let result = match self.enqueue(now, dst, packet) {
            None => RouteResult::Buffered,
            Some(packet) => {
                self.stats.data_dropped_no_route += 1;
                RouteResult::Drop {
                    packet,
                    reason: DropReason::NoRoute,
                }
            }
        };
        if !self.discoveries.contains_key(&dst) {
            self.start_discovery(now, dst);
        }
        result
    }

    /// A data packet for this node arrived from `prev_hop`, originated by `src`: refresh the
    /// routes back to `src` and to `prev_hop` (§6.2).
    pub fn on_data_delivered(&mut self, now: SimTime, prev_hop: Addr, src: Addr) {
        self.heard(now, prev_hop);
        self.refresh(now, src);
        self.refresh(now, prev_hop);
    }

    /// An AODV message arrived from neighbour `from` (the IP source of this hop) with IP TTL
    /// `ttl` in its header.
    pub fn on_message(&mut self, now: SimTime, from: Addr, ttl: u8, msg: &Message) {
        if from == self.addr {
            return;
        }
        self.heard(now, from);
        match msg {
            Message::Rreq(q) => self.on_rreq(now, from, ttl, q),
            Message::Rrep(p) => self.on_rrep(now, from, ttl, p),
            Message::Rerr(e) => self.on_rerr(now, from, e),
            Message::RrepAck => {
                // RFC 3561 §6.8: the link to `from` works in both directions.
                self.stats.rrep_ack_received += 1;
                self.ack_wait.remove(&from);
            }
        }
    }

    /// The MAC gave up on a unicast frame to `next_hop`. For a data frame, with link-layer
    /// detection, this is a link break (§6.11 case (i)): routes through `next_hop` become
    /// invalid, their precursors get an RERR, and a [`AodvEvent::LinkBroken`] follows. If the
    /// frame was an RREP (`is_rrep`), `next_hop` is only blacklisted for BLACKLIST_TIMEOUT
    /// (§6.8). The engine reports no other control frames.
    ///
    /// For a data frame the engine should prefer [`Aodv::on_data_link_failure`], which can keep
    /// the packet for a local repair (§6.12); this entry point never repairs.
    pub fn on_link_failure(&mut self, now: SimTime, next_hop: Addr, is_rrep: bool) {
        if is_rrep {
            // §6.8: an RREP that cannot be delivered marks a link that may work one way only;
            // it is not a break of an active route (§6.11 speaks of links "while
            // transmitting data"; ns-2 also ignores failed control packets).
            self.blacklist.insert(next_hop, now + self.cfg.blacklist_timeout);
            return;
        }
        if self.cfg.link_layer_detection {
            self.link_break(now, next_hop);
        }
    }

    /// The MAC gave up on a data frame to `next_hop`; `packet` is the frame's IP packet, bound for
    /// `dst`, which has travelled `hops_traveled` hops from its source to this node (0 when this
    /// node originated it; e.g. the initial IP TTL minus the current one). Returns
    /// `Some(packet)` when the engine must drop it (as after [`Aodv::on_link_failure`]), `None`
    /// when the module kept it: it comes back later as [`AodvEvent::Release`] or
    /// [`AodvEvent::Drop`].
    ///
    /// * A local repair for `dst` is in progress: the packet joins its buffer (`None`).
    /// * With `local_repair` and link-layer detection, an active route to `dst` through
    ///   `next_hop`, and [`AodvConfig::local_repair_rule`] satisfied (ns-2: `hops_traveled` >
    ///   the route's hop count; RFC: `hops_traveled` ≥ 1 and hop count ≤ MAX_REPAIR_TTL), and a
    ///   non-zero buffer: a local repair starts (§6.12). The route to `dst` becomes invalid with
    ///   its sequence number incremented but keeps its precursors (no RERR for it yet); every
    ///   other route through `next_hop` is broken as in §6.11 (RERR to their precursors); an RREQ
    ///   for `dst` goes out with TTL max(hop count, ⌈hops_traveled/2⌉) + LOCAL_ADD_TTL; the
    ///   packet is buffered (`None`).
    /// * Otherwise the link break is handled as by [`Aodv::on_link_failure`] (`Some(packet)`).
    ///
    /// [`AodvEvent::LinkBroken`]`{ next_hop }` is emitted on every break, repair or not. The
    /// engine then flushes its interface queue to `next_hop` and hands each flushed data packet
    /// to this method at the same `now`: a packet for the destination being repaired is kept;
    /// any other is returned for dropping. A report for a neighbour whose break was already
    /// handled at this same instant is not handled again (no second RERR or LinkBroken).
    pub fn on_data_link_failure(
        &mut self,
        now: SimTime,
        next_hop: Addr,
        dst: Addr,
        hops_traveled: u8,
        packet: P,
    ) -> Option<P> {
        if !self.cfg.link_layer_detection {
            return Some(packet);
        }
        let handled = self.recent_breaks.iter().any(|&(a, t)| a == next_hop && t == now);
        if self.repairing(dst) {
            if !handled {
                self.link_break(now, next_hop);
            }
            return self.enqueue(now, dst, packet);
        }
        if !handled {
            if let Some(old_hops) = self.repair_candidate(now, next_hop, dst, hops_traveled) {
                self.start_local_repair(now, next_hop, dst, old_hops, hops_traveled);
                return self.enqueue(now, dst, packet);
            }
            self.link_break(now, next_hop);
        }
        Some(packet)
    }

    /// The next control message due at `now`, if any.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Outgoing> {
        if self.tx.peek()?.at > now {
            return None;
        }
        let p = self.tx.pop()?;
        let fwd = p.origin == Origin::Forwarded;
        let s = &mut self.stats;
        match p.out.msg.kind() {
            MessageKind::Rreq if fwd => s.rreq_forwarded += 1,
            MessageKind::Rreq => s.rreq_originated += 1,
            MessageKind::Rrep if fwd => s.rrep_forwarded += 1,
            MessageKind::Rrep => s.rrep_originated += 1,
            MessageKind::Rerr if fwd => s.rerr_forwarded += 1,
            MessageKind::Rerr => s.rerr_originated += 1,
            MessageKind::RrepAck => s.rrep_ack_sent += 1,
            MessageKind::Hello => s.hello_sent += 1,
        }
        if p.out.dest == LinkDest::Broadcast {
            self.last_bcast = Some(now);
        }
        Some(p.out)
    }

    /// The next event for the engine, if any.
    pub fn poll_event(&mut self) -> Option<AodvEvent<P>> {
        self.events.pop_front()
    }

    /// When [`Aodv::on_timeout`] should next be called, if ever.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let mut t = self.next_sweep;
        if let Some(p) = self.tx.peek() {
            t = t.min(p.at);
        }
        for d in self.discoveries.values() {
            t = t.min(d.deadline);
        }
        if let Some(b) = self.buffer.front() {
            t = t.min(b.at + self.cfg.buffer_timeout);
        }
        if let Some(h) = self.hello_at {
            t = t.min(h);
        }
        for &w in self.ack_wait.values() {
            t = t.min(w);
        }
        (t != SimTime::NEVER).then_some(t)
    }

    /// Handles every timer due at `now`. Safe to call early or spuriously.
    pub fn on_timeout(&mut self, now: SimTime) {
        // Route discoveries (§6.3, §6.4).
        let mut due = std::mem::take(&mut self.scratch);
        due.clear();
        due.extend(
            self.discoveries
                .iter()
                .filter(|(_, d)| d.deadline <= now)
                .map(|(&a, _)| a),
        );
        for &dst in &due {
            if self.discoveries.contains_key(&dst) {
                self.discovery_timeout(now, dst);
            }
        }
        // Buffered packets that waited too long.
        while self
            .buffer
            .front()
            .is_some_and(|b| b.at + self.cfg.buffer_timeout <= now)
        {
            let b = self.buffer.pop_front().expect("non-empty");
            self.drop_packet(b.packet);
        }
        // RREP-ACKs that did not come (§6.8).
        due.clear();
        due.extend(self.ack_wait.iter().filter(|(_, &t)| t <= now).map(|(&a, _)| a));
        for &a in &due {
            self.ack_wait.remove(&a);
            self.blacklist.insert(a, now + self.cfg.blacklist_timeout);
        }
        due.clear();
        self.scratch = due;
        if self.next_sweep <= now {
            self.sweep(now);
        }
        if self.hello_at.is_some_and(|h| h <= now) {
            self.hello_tick(now);
        }
    }

    // ----- RREQ (§6.3–§6.5) -----

    fn start_discovery(&mut self, now: SimTime, dst: Addr) {
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
    fn try_send_rreq(&mut self, now: SimTime, dst: Addr) {
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

    fn discovery_timeout(&mut self, now: SimTime, dst: Addr) {
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

    fn discovery_failed(&mut self, dst: Addr) {
        self.discoveries.remove(&dst);
        self.stats.discoveries_failed += 1;
        self.events.push_back(AodvEvent::DiscoveryFailed { dst });
        self.drop_buffered(dst);
    }

    /// Drops every buffered packet for `dst`.
    fn drop_buffered(&mut self, dst: Addr) {
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
    fn repairing(&self, dst: Addr) -> bool {
        self.discoveries.get(&dst).is_some_and(|d| d.repair.is_some())
    }

    /// The hop count of the route to `dst` if the break of `nb` under a packet that travelled
    /// `hops_traveled` hops should be repaired locally (§6.12).
    fn repair_candidate(&self, now: SimTime, nb: Addr, dst: Addr, hops_traveled: u8) -> Option<u8> {
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
    fn start_local_repair(&mut self, now: SimTime, nb: Addr, dst: Addr, old_hops: u8, hops_traveled: u8) {
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
    fn local_repair_failed(&mut self, now: SimTime, dst: Addr) {
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
    fn enqueue(&mut self, now: SimTime, dst: Addr, packet: P) -> Option<P> {
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

    fn remember_rreq(&mut self, now: SimTime, orig: Addr, id: u32) {
        let until = now + self.cfg.path_discovery_time;
        self.seen.insert(SeenRreq { orig, id, until });
        self.seen_order.push_back((until, orig, id));
        self.seen_purge_at = self.seen_purge_at.min(until);
    }

    /// Whether (orig, id) was seen within PATH_DISCOVERY_TIME (§6.5): its entry has not run
    /// out. Entries that ran out are purged when the oldest is due (`seen_purge_at`, so most
    /// calls read no more than the entry itself).
    fn seen_recently(&mut self, now: SimTime, orig: Addr, id: u32) -> bool {
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

    fn on_rreq(&mut self, now: SimTime, from: Addr, ttl: u8, q: &Rreq) {
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
        self.neighbour_route(now, from);
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

    // ----- RREP (§6.6, §6.7, §6.9) -----

    fn send_rrep(&mut self, now: SimTime, to: Addr, ttl: u8, rrep: Rrep, origin: Origin) {
        if rrep.ack_required {
            // RFC 3561 §6.8: expect an RREP-ACK within NEXT_HOP_WAIT.
            self.ack_wait.insert(to, now + self.cfg.next_hop_wait);
        }
        self.queue(now, LinkDest::Unicast(to), ttl, Message::Rrep(rrep), origin);
    }

    fn on_rrep(&mut self, now: SimTime, from: Addr, ttl: u8, p: &Rrep) {
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
        self.neighbour_route(now, from);
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

    fn on_hello(&mut self, now: SimTime, from: Addr, p: &Rrep) {
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

    fn hello_life(&self) -> SimDuration {
        SimDuration(self.cfg.allowed_hello_loss as u64 * self.cfg.hello_interval.0)
    }

    fn arm_hello(&mut self, now: SimTime) {
        if self.cfg.hello && self.hello_at.is_none() {
            self.hello_at = Some(now + self.hello_gap());
        }
    }

    fn hello_tick(&mut self, now: SimTime) {
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
    fn hello_gap(&mut self) -> SimDuration {
        let i = self.cfg.hello_interval;
        SimDuration(i.0 - (self.rng.uniform() * (i.0 / 4) as f64) as u64)
    }

    // ----- Route table (§6.2) -----

    /// Offers a route with a known destination sequence number. It is taken (§6.2, §6.7) if
    /// there is no entry, the entry's sequence number is not valid, the offered one is newer,
    /// or they are equal and the entry is inactive or longer. Returns whether it was taken.
    /// `keep_longer`: the lifetime becomes max(existing, `expiry`) (§6.5) instead of `expiry`.
    #[allow(clippy::too_many_arguments)]
    fn offer_route(
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
    fn update_inactive_reverse_route(
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
    fn set_neighbour_route(&mut self, now: SimTime, nb: Addr, expiry: SimTime, seq: Option<u32>) -> bool {
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
    fn neighbour_route(&mut self, now: SimTime, nb: Addr) {
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
    fn refresh(&mut self, now: SimTime, a: Addr) {
        let end = self.cfg.life_end(now + self.cfg.active_route_timeout);
        if let Some(r) = self.routes.get_mut(&a) {
            if r.active(now) {
                r.expiry = r.expiry.max(end);
            }
        }
    }

    /// Something was heard from `a` (HELLO link monitoring, §6.9).
    #[inline]
    fn heard(&mut self, now: SimTime, a: Addr) {
        if let Ok(i) = self.neighbour_slot(a) {
            let t = &mut self.neighbors[i].1;
            *t = (*t).max(now);
        }
    }

    /// HELLO neighbour `a`, if it is one, stays alive at least until `until`
    /// ([`AodvConfig::forwarding_refreshes_next_hop`]): it counts as heard at
    /// `until` − ALLOWED_HELLO_LOSS·HELLO_INTERVAL.
    fn keep_alive(&mut self, until: SimTime, a: Addr) {
        let as_heard = SimTime(until.0.saturating_sub(self.hello_life().0));
        self.heard(as_heard, a);
    }

    /// Where HELLO neighbour `a` is in `neighbors`: `Ok(index)`, or `Err(index)` where it
    /// would go.
    #[inline]
    fn neighbour_slot(&self, a: Addr) -> Result<usize, usize> {
        self.neighbors.binary_search_by_key(&a, |e| e.0)
    }

    /// `a` is no longer a HELLO neighbour.
    fn forget_neighbour(&mut self, a: Addr) {
        if let Ok(i) = self.neighbour_slot(a) {
            self.neighbors.remove(i);
        }
    }

    fn arm_sweep(&mut self, t: SimTime) {
        if t < self.next_sweep {
            self.next_sweep = t;
        }
    }

    /// A route to `dst` may have become valid: complete its discovery and release its packets.
    fn route_became_valid(&mut self, now: SimTime, dst: Addr) {
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
    fn sweep(&mut self, now: SimTime) {
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

    // ----- Link breaks and RERR (§6.11) -----

    /// RFC 3561 §6.11 case (i): the link to `nb` is broken.
    fn link_break(&mut self, now: SimTime, nb: Addr) {
        self.stats.link_breaks += 1;
        self.recent_breaks.retain(|&(_, t)| t == now);
        self.recent_breaks.push((nb, now));
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
        self.forget_neighbour(nb);
        recipients.retain(|&p| p != nb);
        self.send_rerr(now, dests, &recipients, Origin::Originated, false);
        self.events.push_back(AodvEvent::LinkBroken { next_hop: nb });
    }

    /// RFC 3561 §6.11 case (ii): a data packet for `dst` to forward and no active route.
    fn rerr_no_route(&mut self, now: SimTime, prev_hop: Option<Addr>, dst: Addr) {
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
    fn on_rerr(&mut self, now: SimTime, from: Addr, e: &Rerr) {
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
        recipients.retain(|&p| p != from);
        self.send_rerr(now, dests, &recipients, Origin::Forwarded, false);
    }

    /// RFC 3561 §6.12, §5.3: an RERR with the N flag (a downstream node repaired a route
    /// locally and it got longer). The route is not deleted; the RERR is only passed on, with
    /// N, to the precursors of the destinations whose next hop is `from`.
    fn on_rerr_no_delete(&mut self, now: SimTime, from: Addr, e: &Rerr) {
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
    fn send_rerr(
        &mut self,
        now: SimTime,
        dests: Vec<(Addr, u32)>,
        recipients: &[Addr],
        origin: Origin,
        no_delete: bool,
    ) {
        if dests.is_empty() || recipients.is_empty() {
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
            if let [one] = recipients {
                self.queue(now, LinkDest::Unicast(*one), 1, msg, origin);
            } else {
                self.broadcast(now, 1, msg, origin);
            }
        }
    }

    // ----- Output -----

    fn drop_packet(&mut self, packet: P) {
        self.stats.data_dropped_no_route += 1;
        self.events.push_back(AodvEvent::Drop {
            packet,
            reason: DropReason::NoRoute,
        });
    }

    /// Uniform in [0, broadcast_jitter).
    fn jitter(&mut self) -> SimDuration {
        let j = self.cfg.broadcast_jitter.0;
        if j == 0 {
            SimDuration::ZERO
        } else {
            SimDuration((self.rng.uniform() * j as f64) as u64)
        }
    }

    fn broadcast(&mut self, now: SimTime, ttl: u8, msg: Message, origin: Origin) {
        let at = now + self.jitter();
        self.queue(at, LinkDest::Broadcast, ttl, msg, origin);
    }

    fn queue(&mut self, at: SimTime, dest: LinkDest, ttl: u8, msg: Message, origin: Origin) {
        self.tx_seq += 1;
        self.tx.push(Pending {
            at,
            seq: self.tx_seq,
            origin,
            out: Outgoing { dest, ttl, msg },
        });
    }
}

/// An inactive entry made what RFC 3561 §6.11 says it is (the sweep, and ns-3's
/// `RoutingTable::Purge` at a lookup): one whose lifetime ran out while valid is now invalid
/// until deleted DELETE_PERIOD after it ran out; returns false if the entry is due for
/// deletion.
/// With `bump_seq` ([`AodvConfig::expiry_increments_seq`]) a route that ran out while valid
/// also gets its (valid) destination sequence number incremented.
fn deactivate(r: &mut Route, delete_period: SimDuration, now: SimTime, bump_seq: bool) -> bool {
    if r.valid {
        r.valid = false;
        r.expiry += delete_period;
        if bump_seq && r.valid_seq {
            r.seq = r.seq.wrapping_add(1);
        }
    }
    r.expiry > now
}

/// RFC 3561 §6.11: marks route `r` invalid until `delete_at` (filed in `expiries`) and drops
/// its precursor list (from `precursors`); if it was active and had precursors, lists its
/// destination (with its sequence number) for the RERR and the precursors as recipients.
fn invalidate(
    r: &mut Route,
    precursors: &mut HashMap<Addr, Vec<Addr>>,
    expiries: &mut ExpiryHeap,
    delete_at: SimTime,
    was_active: bool,
    dests: &mut Vec<(Addr, u32)>,
    recipients: &mut Vec<Addr>,
) {
    r.valid = false;
    r.expiry = delete_at;
    r.file_expiry(expiries);
    let list = precursors.remove(&r.dst);
    if let Some(list) = list.filter(|_| was_active) {
        dests.push((r.dst, r.seq));
        for p in list {
            if !recipients.contains(&p) {
                recipients.push(p);
            }
        }
    }
}
