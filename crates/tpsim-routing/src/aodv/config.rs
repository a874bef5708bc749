//! AODV parameters: the constants of RFC 3561 §10 and the few knobs the RFC leaves to the
//! implementation (buffering, jitter, optional mechanisms).

use tpsim_core::{SimDuration, SimTime};

/// How the wait for an RREP grows between the RREQs sent at TTL = NET_DIAMETER.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RreqBackoff {
    /// RFC 3561 §6.3: the k-th RREQ at the network-wide TTL waits 2^(k-1)·NET_TRAVERSAL_TIME.
    BinaryExponential,
    /// ns-2.35 `AODV::sendRequest`: the k-th network-wide RREQ waits k·NET_TRAVERSAL_TIME.
    Linear,
}

/// How the TTLs of a discovery's RREQs are chosen (the expanding ring search, §6.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingRule {
    /// RFC 3561 §6.4: the first RREQ has TTL_START, or the last known hop count +
    /// TTL_INCREMENT if that is larger; each timeout adds TTL_INCREMENT; an RREQ whose TTL
    /// would exceed TTL_THRESHOLD goes network-wide (NET_DIAMETER).
    Rfc,
    /// ns-2.35 `AODV::sendRequest`: the next TTL is the last one + TTL_INCREMENT while the last
    /// one is below TTL_THRESHOLD, NET_DIAMETER otherwise (so 6 → 8 → NET_DIAMETER). The "last
    /// one" of a new discovery is the larger of the TTL last used and the hop count the route
    /// had when it went down; a route table entry starts with an infinite hop count, so the
    /// first RREQ for a destination this node never had a route to goes network-wide at once
    /// and TTL_START is never used. A destination last known h hops away starts at h +
    /// TTL_INCREMENT (3 for a neighbour) if h < TTL_THRESHOLD.
    Ns2,
}

/// How a node changes its own sequence number (§6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnSeqRule {
    /// RFC 3561 §6.1, §6.6.1: +1 before each RREQ it originates; as the destination of an
    /// RREQ it answers with its own number, raised to the RREQ's destination sequence number
    /// if that is newer, and otherwise unchanged.
    Rfc,
    /// ns-2.35 (`sendRequest`, `recvRequest`): own numbers stay even, +2 before each RREQ; the
    /// destination always answers with a new number, max(own, the RREQ's) + 1 rounded up to
    /// even. So every RREP from the destination carries a number newer than any route to it
    /// (ns-2 marks a route that expired or broke with an odd number, its number + 1).
    Ns2,
}

/// Which nodes attempt a local repair (RFC 3561 §6.12) when the MAC reports a data frame it could
/// not deliver (only with [`AodvConfig::local_repair`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalRepairRule {
    /// RFC 3561 §6.12: a node upstream of the break (not the packet's originator) MAY repair "if
    /// the destination was no farther than MAX_REPAIR_TTL hops away": the route's hop count is
    /// at most [`AodvConfig::max_repair_ttl`].
    Rfc,
    /// ns-2.35 `AODV::rt_ll_failed` (AODV_LOCAL_REPAIR): repair when the packet has travelled
    /// more hops than the route still has to go (`num_forwards > rt_hops`), i.e. the break is
    /// closer to the destination than to the source. No MAX_REPAIR_TTL bound.
    Ns2,
}

/// Which routes a data packet refreshes (RFC 3561 §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshRule {
    /// RFC 3561 §6.2: forwarding refreshes the routes to the destination, the next hop, the
    /// source and the previous hop; a packet delivered here refreshes the routes to its source
    /// and previous hop.
    Rfc,
    /// ns-2.35 `AODV::forward`: only the route the packet takes (to its destination); a
    /// packet for this node does not pass through AODV and refreshes nothing.
    Ns2,
}

/// How route errors are sent and taken (RFC 3561 §6.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RerrRule {
    /// RFC 3561 §6.11: a break or an RERR lists the active routes that have precursors and
    /// goes to those precursors (unicast to one, broadcast to several); a data packet without
    /// a route is reported to its precursors and previous hop; an RERR invalidates the routes
    /// through its sender whatever their sequence numbers.
    Rfc,
    /// ns-2.35 (`handle_link_failure`, `rt_resolve`, `recvError`, `sendError`): a break lists
    /// every route through the lost neighbour (precursors or not, so a source reports too) and
    /// a data packet without a route is reported, both broadcast at once (no jitter); an RERR
    /// invalidates a route through its sender only if the route's sequence number is not
    /// newer than the RERR's, and is passed on (broadcast, jittered) for the routes that had
    /// precursors.
    Ns2,
}

/// AODV configuration. Every RFC 3561 §10 constant is a field; derived constants
/// (NET_TRAVERSAL_TIME, PATH_DISCOVERY_TIME, DELETE_PERIOD, BLACKLIST_TIMEOUT ...) are fields too
/// and are *not* recomputed when a base constant is changed: [`AodvConfig::rfc`] and
/// [`AodvConfig::ns2`] fill them in consistently.
#[derive(Clone, Debug, PartialEq)]
pub struct AodvConfig {
    /// ACTIVE_ROUTE_TIMEOUT: lifetime of a route refreshed by use (§6.2).
    pub active_route_timeout: SimDuration,
    /// ALLOWED_HELLO_LOSS: HELLOs that may be missed before the link is considered lost (§6.9).
    pub allowed_hello_loss: u32,
    /// HELLO_INTERVAL: period of HELLO messages (§6.9).
    pub hello_interval: SimDuration,
    /// Send HELLO messages while part of an active route and detect link loss by missing
    /// HELLOs (§6.9).
    pub hello: bool,
    /// MY_ROUTE_TIMEOUT: lifetime put in an RREP by the destination itself (§6.6.1).
    pub my_route_timeout: SimDuration,
    /// NET_DIAMETER: maximum hops between two nodes; the TTL of network-wide RREQs (§6.4).
    /// At most 255 (it is an IP TTL).
    pub net_diameter: u32,
    /// NODE_TRAVERSAL_TIME: conservative one-hop traversal time, queueing included.
    pub node_traversal_time: SimDuration,
    /// RREQ_RETRIES: RREQs sent again at TTL = NET_DIAMETER after the first one (§6.3).
    pub rreq_retries: u32,
    /// RREQ_RATELIMIT: RREQs this node may originate per second; 0 = unlimited (§6.3).
    pub rreq_ratelimit: u32,
    /// RERR_RATELIMIT: RERRs this node may originate or forward per second; 0 = unlimited (§6.11).
    pub rerr_ratelimit: u32,
    /// TTL_START: IP TTL of the first RREQ of a discovery (§6.4; not used by [`RingRule::Ns2`]).
    pub ttl_start: u8,
    /// TTL_INCREMENT: TTL added on each expanding-ring retry (§6.4).
    pub ttl_increment: u8,
    /// TTL_THRESHOLD: beyond this TTL the RREQ goes network-wide (§6.4).
    pub ttl_threshold: u8,
    /// How the TTL grows over a discovery's RREQs ([`RingRule`]).
    pub ring_rule: RingRule,
    /// TIMEOUT_BUFFER: added to the TTL in RING_TRAVERSAL_TIME = 2·NODE_TRAVERSAL_TIME·(TTL +
    /// TIMEOUT_BUFFER) (§10).
    pub timeout_buffer: u32,
    /// DELETE_PERIOD: how long an invalid route is kept (for its sequence number) (§6.11).
    pub delete_period: SimDuration,
    /// BLACKLIST_TIMEOUT: how long RREQs from a blacklisted neighbour are ignored (§6.8);
    /// zero: no blacklist (an RREP the MAC could not deliver is only dropped).
    pub blacklist_timeout: SimDuration,
    /// PATH_DISCOVERY_TIME: how long an (originator, RREQ ID) pair is remembered (§6.3, §6.5).
    pub path_discovery_time: SimDuration,
    /// NET_TRAVERSAL_TIME: wait for an RREP after a network-wide RREQ (§6.3).
    pub net_traversal_time: SimDuration,
    /// NEXT_HOP_WAIT: wait for an RREP-ACK after sending an RREP with the A flag (§6.8).
    pub next_hop_wait: SimDuration,
    /// Reverse route lifetime set by an RREQ. `None`: the RFC's MinimalLifetime = now +
    /// 2·NET_TRAVERSAL_TIME − 2·HopCount·NODE_TRAVERSAL_TIME (§6.5); `Some(d)`: now + d (ns-2's
    /// REV_ROUTE_LIFE).
    pub rev_route_life: Option<SimDuration>,
    /// Upper bound on any wait for an RREP (ns-2's MAX_RREQ_TIMEOUT; the RFC has none).
    pub max_rreq_timeout: SimDuration,
    /// Growth of the wait between network-wide RREQs.
    pub rreq_backoff: RreqBackoff,
    /// Period of ns-2's route table purge (`AODV::rt_purge`, run every 0.5 s from time 0);
    /// `None`: timers run exactly (the RFC). ns-2 checks lifetimes and RREQ timeouts only
    /// there: a route stays usable until the first multiple of the period after its lifetime
    /// ends (the purge takes down a route whose end is before now), and a discovery's next
    /// RREQ, or its failure, waits for the first multiple at or after its deadline. So in
    /// ns-2 a route used exactly every ACTIVE_ROUTE_TIMEOUT never expires.
    pub purge_interval: Option<SimDuration>,
    /// Data packets held during route discovery, all destinations together. When full the
    /// oldest packet is dropped (NoRoute), as ns-2's `aodv_rqueue` does. 0 = no buffering.
    pub buffer_limit: usize,
    /// Longest time a data packet waits in the discovery buffer before it is dropped (NoRoute).
    pub buffer_timeout: SimDuration,
    /// Maximum of the uniform random delay before each broadcast this node sends or forwards.
    pub broadcast_jitter: SimDuration,
    /// React to the MAC's failure reports ([`super::Aodv::on_link_failure`]) as link breaks
    /// (§6.11 case (i)). When false those reports are ignored (except for the blacklist).
    pub link_layer_detection: bool,
    /// Set the D (destination only) flag on our RREQs (§5.1, §6.5).
    pub dest_only: bool,
    /// Set the G (gratuitous RREP) flag on our RREQs (§5.1, §6.6.3).
    pub gratuitous_rrep: bool,
    /// Local repair of a broken link at an intermediate node (§6.12): on a data frame the MAC
    /// could not deliver ([`super::Aodv::on_data_link_failure`]) the node may rediscover the
    /// route itself, holding the packets meanwhile, instead of reporting the break at once.
    pub local_repair: bool,
    /// Which breaks are repaired locally (see [`LocalRepairRule`]).
    pub local_repair_rule: LocalRepairRule,
    /// LOCAL_ADD_TTL: added to the TTL of a local repair RREQ (§6.12, §10).
    pub local_add_ttl: u8,
    /// MAX_REPAIR_TTL: farthest destination (in hops) repaired locally under
    /// [`LocalRepairRule::Rfc`] (§6.12; 0.3·NET_DIAMETER, rounded down).
    pub max_repair_ttl: u8,
    /// Wait for an RREP after a local repair RREQ. `None`: the RFC's "discovery period", taken as
    /// RING_TRAVERSAL_TIME of the RREQ's TTL (§6.12, §6.4); `Some(d)`: d (ns-2's
    /// LOCAL_REPAIR_WAIT_TIME, 0.15 s).
    pub local_repair_wait: Option<SimDuration>,
    /// Set the A flag on the RREPs we send or forward and blacklist a next hop whose RREP-ACK
    /// does not come within NEXT_HOP_WAIT (§6.7, §6.8).
    pub rrep_ack: bool,
    /// Forwarding a data packet keeps its next hop alive as a HELLO neighbour for
    /// ACTIVE_ROUTE_TIMEOUT, as if heard (ns-3's AODV, `RoutingProtocol::Forwarding`, updates
    /// the neighbour lifetime of the route's gateway this way). RFC 3561 §6.9 counts only
    /// packets received from the neighbour, so off in both presets. Matters only with `hello`.
    pub forwarding_refreshes_next_hop: bool,
    /// Every node sends HELLOs, part of an active route or not (ns-3's AODV, whose HELLO timer
    /// runs from the start on every node). RFC 3561 §6.9: a node SHOULD send them only while
    /// part of an active route, so off in both presets. Matters only with `hello`.
    pub hello_from_every_node: bool,
    /// A route invalidated by a link break or an RERR keeps its destination sequence number,
    /// as in ns-3's AODV (`RoutingTableEntry::Invalidate` leaves it; `RecvError` ignores the
    /// RERR's numbers). RFC 3561 §6.11 increments it on a break (cases (i), (ii)) and copies
    /// the RERR's (case (iii)), so that the next RREQ asks for fresher information than the
    /// broken route had; keeping it lets intermediate nodes with an equally old route answer.
    /// Off in both presets.
    pub invalidation_keeps_seq: bool,
    /// A route whose lifetime runs out gets its destination sequence number incremented, as
    /// ns-2.35's `rt_purge` does. The next RREQ for it then asks for a newer route than the
    /// expired one, which the intermediate nodes that gave it cannot answer. RFC 3561 §6.11
    /// increments only on breaks and RERRs, so off in the `rfc` and `ns3` presets.
    pub expiry_increments_seq: bool,
    /// How this node's own sequence number changes ([`OwnSeqRule`]).
    pub own_seq_rule: OwnSeqRule,
    /// An RREQ that updates an inactive reverse route (expired or invalidated, not yet deleted)
    /// takes its next hop, hop count, sequence number and lifetime but leaves it invalid, and
    /// RREPs are still forwarded along it, as in ns-3's AODV (`RecvRequest` updates the entry
    /// without setting its flag; `RecvReply` forwards by `LookupRoute`, valid or not). The
    /// node then forwards the data of the discovered route but drops what comes back towards
    /// the originator (no route, RERR) until the entry is deleted. RFC 3561 §6.5 makes the
    /// reverse route a valid one, so off in both presets.
    pub rreq_leaves_reverse_route_invalid: bool,
    /// An RREQ or RREP received creates or refreshes a route to the neighbour it came from
    /// (RFC 3561 §6.5, §6.7: a 1-hop route without a valid sequence number). ns-2.35's
    /// `recvRequest` and `recvReply` make none, so off in the `ns2` preset.
    pub previous_hop_routes: bool,
    /// Which routes a data packet refreshes ([`RefreshRule`]).
    pub refresh_rule: RefreshRule,
    /// How route errors are sent and taken ([`RerrRule`]).
    pub rerr_rule: RerrRule,
}

impl AodvConfig {
    /// The defaults of RFC 3561 §10. The buffer (64 packets, 30 s) and jitter
    /// (10 ms) are not RFC constants; ns-2's values are used.
    pub fn rfc() -> Self {
        Self::rfc_formulas(
            SimDuration::from_millis(40),
            35,
            SimDuration::from_millis(3000),
            SimDuration::from_millis(1000),
            2,
        )
    }

    /// The RFC 3561 §10 defaults with these base constants (NODE_TRAVERSAL_TIME `ntt`,
    /// NET_DIAMETER, ACTIVE_ROUTE_TIMEOUT `art`, HELLO_INTERVAL, RREQ_RETRIES) and every
    /// derived constant computed from them by the RFC's formulas.
    fn rfc_formulas(
        ntt: SimDuration,
        net_diameter: u32,
        art: SimDuration,
        hello_interval: SimDuration,
        rreq_retries: u32,
    ) -> Self {
        // NET_TRAVERSAL_TIME = 2 · NODE_TRAVERSAL_TIME · NET_DIAMETER (2800 ms in the RFC).
        let net_traversal_time = SimDuration(2 * ntt.0 * net_diameter as u64);
        AodvConfig {
            active_route_timeout: art,
            allowed_hello_loss: 2,
            hello_interval,
            hello: true,
            // 2 · ACTIVE_ROUTE_TIMEOUT.
            my_route_timeout: SimDuration(2 * art.0),
            net_diameter,
            node_traversal_time: ntt,
            rreq_retries,
            rreq_ratelimit: 10,
            rerr_ratelimit: 10,
            ttl_start: 1,
            ttl_increment: 2,
            ttl_threshold: 7,
            ring_rule: RingRule::Rfc,
            timeout_buffer: 2,
            // K · max(ACTIVE_ROUTE_TIMEOUT, HELLO_INTERVAL), K = 5.
            delete_period: SimDuration(5 * art.0.max(hello_interval.0)),
            // RREQ_RETRIES · NET_TRAVERSAL_TIME.
            blacklist_timeout: SimDuration(rreq_retries as u64 * net_traversal_time.0),
            // 2 · NET_TRAVERSAL_TIME.
            path_discovery_time: SimDuration(2 * net_traversal_time.0),
            net_traversal_time,
            // NODE_TRAVERSAL_TIME + 10 ms.
            next_hop_wait: ntt + SimDuration::from_millis(10),
            rev_route_life: None,
            max_rreq_timeout: SimDuration(u64::MAX),
            rreq_backoff: RreqBackoff::BinaryExponential,
            purge_interval: None,
            buffer_limit: 64,
            buffer_timeout: SimDuration::from_secs(30),
            broadcast_jitter: SimDuration::from_millis(10),
            link_layer_detection: true,
            dest_only: false,
            gratuitous_rrep: false,
            // §6.12: local repair is a MAY; off in the RFC preset.
            local_repair: false,
            local_repair_rule: LocalRepairRule::Rfc,
            local_add_ttl: 2,
            // 0.3 · NET_DIAMETER = 10.5 → 10.
            max_repair_ttl: (3 * net_diameter / 10) as u8,
            local_repair_wait: None,
            rrep_ack: false,
            forwarding_refreshes_next_hop: false,
            hello_from_every_node: false,
            invalidation_keeps_seq: false,
            expiry_increments_seq: false,
            own_seq_rule: OwnSeqRule::Rfc,
            rreq_leaves_reverse_route_invalid: false,
            previous_hop_routes: true,
            refresh_rule: RefreshRule::Rfc,
            rerr_rule: RerrRule::Rfc,
        }
    }

    /// The behaviour of ns-2.35's `aodv` agent (values of `aodv/aodv.h`):
    /// ACTIVE_ROUTE_TIMEOUT 10 s, ALLOWED_HELLO_LOSS 3, HELLO_INTERVAL 1 s but HELLOs off
    /// (AODV_LINK_LAYER_DETECTION is defined, so breaks come from MAC feedback), MY_ROUTE_TIMEOUT
    /// 10 s, NETWORK_DIAMETER 30, NODE_TRAVERSAL_TIME 30 ms, RREQ_RETRIES 3, TTL_START 5,
    /// TTL_INCREMENT 2, TTL_THRESHOLD 7, REV_ROUTE_LIFE 6 s (reverse route lifetime),
    /// BCAST_ID_SAVE 6 s (PATH_DISCOVERY_TIME), MAX_RREQ_TIMEOUT 10 s, no rate limits, routing
    /// queue of 64 packets held at most 30 s (`AODV_RTQ_MAX_LEN`, `AODV_RTQ_TIMEOUT`), and the
    /// 10 ms uniform jitter of ns-2's broadcasts (`0.01 * Random::uniform()`), and local repair
    /// (AODV_LOCAL_REPAIR is defined) with ns-2's rule ([`LocalRepairRule::Ns2`]) and
    /// LOCAL_REPAIR_WAIT_TIME 0.15 s.
    ///
    /// The TTLs follow ns-2's ring ([`RingRule::Ns2`]): the first RREQ for a destination the
    /// node never had a route to is network-wide, because `aodv_rt_entry` starts with an
    /// infinite last hop count. Route lifetimes and RREQ retries run on the 0.5 s grid of
    /// ns-2's route purge ([`AodvConfig::purge_interval`]), which also increments the
    /// sequence number of a route it expires ([`AodvConfig::expiry_increments_seq`]). The
    /// destination of an RREQ always answers with a new sequence number ([`OwnSeqRule::Ns2`]).
    ///
    /// ns-2 waits 2·TTL·NODE_TRAVERSAL_TIME in the expanding ring (so TIMEOUT_BUFFER = 0 here)
    /// and k·2·NETWORK_DIAMETER·NODE_TRAVERSAL_TIME for its k-th network-wide RREQ (linear
    /// backoff, capped at MAX_RREQ_TIMEOUT). ns-2's RREP_WAIT_TIME (1 s) is not modelled. aodv.h
    /// gives no DELETE_PERIOD; the RFC formula is applied to the values above (5·10 s = 50 s).
    ///
    /// aodv.cc has no blacklist (`rt_ll_failed` drops a control packet the MAC could not
    /// deliver, §6.8's blacklist is absent), creates no route to the neighbour an RREQ or RREP
    /// came from (`recvRequest`, `recvReply`), and a data packet refreshes only the route it
    /// takes (`forward`; [`RefreshRule::Ns2`]). Its route errors follow [`RerrRule::Ns2`].
    pub fn ns2() -> Self {
        AodvConfig {
            allowed_hello_loss: 3,
            hello: false,
            my_route_timeout: SimDuration::from_secs(10),
            rreq_ratelimit: 0,
            rerr_ratelimit: 0,
            ttl_start: 5,
            // sendRequest's ring: a destination never reached before is asked network-wide
            // at once, a known one from its old hop count + 2 (TTL_START 5 is never used).
            ring_rule: RingRule::Ns2,
            timeout_buffer: 0,
            path_discovery_time: SimDuration::from_secs(6),
            rev_route_life: Some(SimDuration::from_secs(6)),
            max_rreq_timeout: SimDuration::from_secs(10),
            rreq_backoff: RreqBackoff::Linear,
            // RouteCacheTimer: rt_purge every 0.5 s; nothing else expires routes or resends
            // RREQs (besides a new packet for the destination).
            purge_interval: Some(SimDuration::from_millis(500)),
            // rt_purge: rt_seqno++ before rt_down of an expired route.
            expiry_increments_seq: true,
            // seqno += 2 per RREQ; the destination's "seqno = max(seqno, rq_dst_seqno) + 1",
            // made even.
            own_seq_rule: OwnSeqRule::Ns2,
            // aodv.h defines AODV_LOCAL_REPAIR: rt_ll_failed repairs when num_forwards > hops,
            // waiting LOCAL_REPAIR_WAIT_TIME (0.15 s).
            local_repair: true,
            local_repair_rule: LocalRepairRule::Ns2,
            local_repair_wait: Some(SimDuration::from_millis(150)),
            blacklist_timeout: SimDuration::ZERO,
            previous_hop_routes: false,
            refresh_rule: RefreshRule::Ns2,
            rerr_rule: RerrRule::Ns2,
            // The rest follows the RFC formulas from ns-2's base constants: NET_TRAVERSAL_TIME
            // 2 · 30 ms · 30 = 1.8 s, DELETE_PERIOD 5 · 10 s,
            // MAX_REPAIR_TTL 0.3 · 30 = 9 (not used by the ns-2 rule), NEXT_HOP_WAIT 40 ms.
            ..Self::rfc_formulas(
                SimDuration::from_millis(30),
                30,
                SimDuration::from_secs(10),
                SimDuration::from_secs(1),
                3,
            )
        }
    }

    /// The behaviour of ns-3's AODV (`src/aodv/model/aodv-routing-protocol.cc`, ns-3.44): the
    /// RFC constants, with the five places where ns-3 departs from RFC 3561 switched on:
    /// forwarding data refreshes the next hop as a HELLO neighbour (§6.9 counts only packets
    /// heard from it), every node sends HELLOs (§6.9: only on active routes), originated RREQs
    /// carry the G flag (ns-3's `GratuitousReply` defaults to true), an invalidated route keeps
    /// its destination sequence number (§6.11 increments it or copies the RERR's), and an RREQ
    /// that updates an inactive reverse route leaves it invalid (§6.5 makes it valid).
    pub fn ns3() -> Self {
        AodvConfig {
            forwarding_refreshes_next_hop: true,
            hello_from_every_node: true,
            gratuitous_rrep: true,
            invalidation_keeps_seq: true,
            rreq_leaves_reverse_route_invalid: true,
            ..Self::rfc()
        }
    }

    /// RING_TRAVERSAL_TIME for an RREQ sent with IP TTL `ttl`:
    /// 2 · NODE_TRAVERSAL_TIME · (ttl + TIMEOUT_BUFFER) (§10).
    pub fn ring_traversal_time(&self, ttl: u8) -> SimDuration {
        SimDuration(
            2u64.saturating_mul(self.node_traversal_time.0)
                .saturating_mul(ttl as u64 + self.timeout_buffer as u64),
        )
    }

    /// The IP TTL of network-wide messages: NET_DIAMETER as a `u8`.
    pub fn max_ttl(&self) -> u8 {
        self.net_diameter.min(255) as u8
    }

    /// The ring's TTL after an RREQ with TTL `last` (§6.4).
    pub(super) fn next_ring_ttl(&self, last: u8) -> u8 {
        let (inc, threshold, max) = (self.ttl_increment, self.ttl_threshold, self.max_ttl());
        match self.ring_rule {
            // RFC 3561 §6.4: a TTL beyond TTL_THRESHOLD becomes NET_DIAMETER.
            RingRule::Rfc => {
                let t = last.saturating_add(inc);
                if t > threshold {
                    max
                } else {
                    t
                }
            }
            // ns-2.35 `sendRequest`: grow while the last TTL is below TTL_THRESHOLD.
            RingRule::Ns2 if last < threshold => last.saturating_add(inc).min(max),
            RingRule::Ns2 => max,
        }
    }

    /// When a lifetime that runs out at `t` really ends: `t`, or with
    /// [`purge_interval`](Self::purge_interval) the first multiple of it after `t` (ns-2's
    /// purge takes a route down once its end is in the past).
    #[inline]
    pub(super) fn life_end(&self, t: SimTime) -> SimTime {
        match self.purge_interval {
            Some(p) if t != SimTime::NEVER => SimTime((t.0 / p.0).saturating_add(1).saturating_mul(p.0)),
            _ => t,
        }
    }

    /// When a discovery due at `t` acts: `t`, or with [`purge_interval`](Self::purge_interval)
    /// the first multiple of it at or after `t` (ns-2 resends an RREQ from its purge once the
    /// RREQ's timeout is not in the future).
    #[inline]
    pub(super) fn retry_at(&self, t: SimTime) -> SimTime {
        match self.purge_interval {
            Some(p) if t != SimTime::NEVER => SimTime(t.0.div_ceil(p.0).saturating_mul(p.0)),
            _ => t,
        }
    }

    /// Checks that the values are usable; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |d: SimDuration, name: &str| {
            if d.0 == 0 {
                Err(format!("{name} must be > 0"))
            } else {
                Ok(())
            }
        };
        pos(self.active_route_timeout, "active_route_timeout")?;
        pos(self.my_route_timeout, "my_route_timeout")?;
        pos(self.node_traversal_time, "node_traversal_time")?;
        pos(self.net_traversal_time, "net_traversal_time")?;
        pos(self.path_discovery_time, "path_discovery_time")?;
        pos(self.max_rreq_timeout, "max_rreq_timeout")?;
        pos(self.buffer_timeout, "buffer_timeout")?;
        if self.hello {
            pos(self.hello_interval, "hello_interval")?;
            if self.allowed_hello_loss == 0 {
                return Err("allowed_hello_loss must be >= 1 when hello is on".into());
            }
        }
        if self.net_diameter == 0 || self.net_diameter > 255 {
            return Err(format!("net_diameter must be in 1..=255, got {}", self.net_diameter));
        }
        if self.ttl_start == 0 {
            return Err("ttl_start must be >= 1".into());
        }
        if self.ttl_increment == 0 {
            return Err("ttl_increment must be >= 1".into());
        }
        if self.ttl_threshold as u32 >= self.net_diameter {
            return Err(format!(
                "ttl_threshold ({}) must be below net_diameter ({})",
                self.ttl_threshold, self.net_diameter
            ));
        }
        if let Some(w) = self.local_repair_wait {
            pos(w, "local_repair_wait")?;
        }
        if let Some(p) = self.purge_interval {
            pos(p, "purge_interval")?;
        }
        Ok(())
    }
}

impl Default for AodvConfig {
    /// [`AodvConfig::rfc`].
    fn default() -> Self {
        Self::rfc()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ns3_preset_is_the_rfc_constants_with_ns3s_five_behaviours() {
        let (rfc, ns3) = (AodvConfig::rfc(), AodvConfig::ns3());
        assert!(ns3.forwarding_refreshes_next_hop && ns3.hello_from_every_node && ns3.gratuitous_rrep);
        assert!(ns3.invalidation_keeps_seq && ns3.rreq_leaves_reverse_route_invalid);
        assert!(!rfc.forwarding_refreshes_next_hop && !rfc.hello_from_every_node && !rfc.gratuitous_rrep);
        assert!(!rfc.invalidation_keeps_seq && !rfc.rreq_leaves_reverse_route_invalid);
        // Everything else is the RFC's.
        let back = AodvConfig {
            forwarding_refreshes_next_hop: false,
            hello_from_every_node: false,
            gratuitous_rrep: false,
            invalidation_keeps_seq: false,
            rreq_leaves_reverse_route_invalid: false,
            ..ns3
        };
        assert_eq!(format!("{back:?}"), format!("{rfc:?}"));
        assert!(ns3.validate().is_ok());
    }
}
