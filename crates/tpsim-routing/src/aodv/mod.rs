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
mod rerr;
mod routes;
mod rrep;
mod rreq;
mod table;

#[cfg(test)]
mod tests;

pub use config::{AodvConfig, LocalRepairRule, OwnSeqRule, RefreshRule, RerrRule, RingRule, RreqBackoff};
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
                if self.cfg.refresh_rule == RefreshRule::Rfc {
                    self.refresh(now, next_hop);
                    if src != self.addr {
                        self.refresh(now, src);
                    }
                    if let Some(p) = prev_hop {
                        self.refresh(now, p);
                    }
                }
                if prev_hop.is_some() && self.cfg.forwarding_refreshes_next_hop {
                    self.keep_alive(now + art, next_hop);
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
    /// routes back to `src` and to `prev_hop` (§6.2; none under [`RefreshRule::Ns2`]).
    pub fn on_data_delivered(&mut self, now: SimTime, prev_hop: Addr, src: Addr) {
        self.heard(now, prev_hop);
        if self.cfg.refresh_rule == RefreshRule::Rfc {
            self.refresh(now, src);
            self.refresh(now, prev_hop);
        }
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
            if self.cfg.blacklist_timeout > SimDuration::ZERO {
                self.blacklist.insert(next_hop, now + self.cfg.blacklist_timeout);
            }
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
