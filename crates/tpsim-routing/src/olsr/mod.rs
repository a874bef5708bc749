//! Optimized Link State Routing (OLSR, RFC 3626) as a sans-IO state machine, one interface per
//! node.
//!
//! # Read these first
//!
//! * RFC 3626 §3 (packet format and forwarding): the packet and message headers (§3.3), the
//!   processing of a received message and the duplicate set (§3.4), the default forwarding
//!   algorithm (§3.4.1), message emission and jitter (§3.5).
//! * RFC 3626 §4.2–4.3 (the information repositories), §6 (HELLO format and generation), §7.1
//!   (link sensing), §8 (neighbour detection: neighbour set §8.1, 2-hop neighbour set §8.2, MPR
//!   selection §8.3 with the heuristic of §8.3.1, MPR selector set §8.4, neighbourhood changes
//!   §8.5), §9 (TC messages: format §9.1, advertised neighbour set and ANSN §9.3, topology set
//!   §9.5), §10 (routing table calculation), §13 (link-layer notification), §18 (constants and
//!   the Vtime/Htime encoding §18.3), §19 (sequence number wrap-around).
//! * RFC 5148 (jitter considerations in MANETs), §5: periodic messages every interval minus a
//!   uniform jitter, forwarded messages delayed by a uniform jitter and piggybacked.
//!
//! # Shape
//!
//! [`Olsr`] keeps the repositories of §4 as ordered maps (so every run is deterministic):
//!
//! * link set (§4.2.1): neighbour address → (L_SYM_time, L_ASYM_time, L_time);
//! * neighbour set (§4.3.1): neighbour → N_willingness; N_status is derived from the link set
//!   (single interface: a neighbour is symmetric iff its one link is);
//! * 2-hop neighbour set (§4.3.2): (N_neighbor_main_addr, N_2hop_addr) → N_time;
//! * MPR set (§8.3) and MPR selector set (§4.3.4): MS_main_addr → MS_time;
//! * topology set (§4.4): (T_last_addr, T_dest_addr) → (T_seq, T_time);
//! * duplicate set (§3.4): (D_addr, D_seq_num) → D_time;
//! * routing table (§10): destination → (next hop, hops), recomputed whenever the link,
//!   neighbour, 2-hop or topology set changed.
//!
//! A tuple is valid while its time is later than `now`, and removed at the first input at or
//! after that time; [`Olsr::poll_timeout`] includes the earliest time at which a link turns
//! asymmetric or a link, 2-hop or topology tuple expires, so tables change on time. MPR
//! selector and duplicate tuples are checked for validity when used and purged lazily.
//!
//! The engine feeds received packets ([`Olsr::on_packet`]), optional MAC feedback
//! ([`Olsr::on_link_failure`]) and timer expiries ([`Olsr::on_timeout`]); after every input it
//! drains [`Olsr::poll_transmit`] (each packet goes out as a link-layer broadcast with IP TTL 1
//! to UDP port 698) and asks [`Olsr::poll_timeout`]. Data packets are forwarded by the engine
//! with [`Olsr::lookup`]; OLSR is proactive, so it never holds data packets and has no
//! `poll_event`.
//!
//! # Timing
//!
//! * The first HELLO and the first TC opportunity come U(0, MAXJITTER) after time zero (the
//!   node is assumed to start at time zero; a node created later sends at its first
//!   [`Olsr::on_timeout`]). After each, the next is due interval − U(0, MAXJITTER) later
//!   (§3.5, RFC 5148 §5.1), so the mean interval is interval − MAXJITTER/2.
//! * A message to be forwarded waits U(0, MAXJITTER) (RFC 5148 §5.2); all queued forwards go out
//!   together, and any packet this node sends earlier carries them too (piggybacking).
//! * HELLOs carry Vtime = NEIGHB_HOLD_TIME and Htime = HELLO_INTERVAL, TCs Vtime = TOP_HOLD_TIME
//!   (§18.3). A node whose advertised set becomes empty keeps sending empty TCs for
//!   TOP_HOLD_TIME (§9.3) so that the others drop its old topology tuples.
//! * Packets are filled up to [`MAX_PACKET_LEN`] bytes (a 1500-byte MTU minus IPv4 and UDP
//!   headers); a HELLO that is larger on its own is still sent alone.
//!
//! # Simplifications
//!
//! * One interface per node: the interface address is the main address, so no MID messages,
//!   no multiple-interface association set, and the D_iface_list of a duplicate tuple always
//!   holds the one interface (a message that has a duplicate tuple is never forwarded again).
//! * No HNA (no gateways to other networks), no link-quality extensions.
//! * No link hysteresis (§14): a link is symmetric from the first HELLO that lists us as
//!   ASYM/SYM, and asymmetric or lost as soon as its timers say so. [`Olsr::on_link_failure`]
//!   (§13) therefore expires the link's L_SYM_time and L_ASYM_time at once; the link is
//!   advertised as LOST_LINK until it is heard again or L_time = now + NEIGHB_HOLD_TIME passes.
//! * No early (triggered) HELLO/TC when the neighbourhood or the MPR selector set changes; only
//!   the periodic ones (early messages are a MAY in §9.3).
//! * HELLOs (TTL 1, never forwarded) bypass the duplicate set; messages of unknown types are
//!   dropped by [`Packet::parse`] rather than forwarded by the default algorithm.
//! * The routing table expands topology tuples from the 2-hop layer outward exactly as in §10
//!   (a breadth-first search, so hop counts are minimal); ties go to the lowest address.

mod config;
mod message;
mod mpr;

#[cfg(test)]
mod netsim;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use tpsim_core::{RngStream, SimDuration, SimTime};

use crate::Addr;

pub use config::{OlsrConfig, WILL_ALWAYS, WILL_DEFAULT, WILL_HIGH, WILL_LOW, WILL_NEVER};
pub use message::{
    decode_time, encode_time, Body, Hello, LinkMessage, LinkType, Message, NeighborType, Packet, Tc, HELLO_MESSAGE,
    MAX_ENCODABLE_TIME, MESSAGE_HEADER_LEN, PACKET_HEADER_LEN, TC_MESSAGE,
};
pub use mpr::select_mpr;

/// Largest OLSR packet this node builds, in bytes: 1500 (MTU) − 20 (IPv4) − 8 (UDP).
pub const MAX_PACKET_LEN: usize = 1472;

/// TTL of a TC message as originated (RFC 3626 §9.3: 255, flooded through the network).
pub const TC_TTL: u8 = 255;

/// Plain counters of one OLSR node, collected at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OlsrStats {
    /// HELLO messages generated (§6.2).
    pub hello_sent: u64,
    /// TC messages originated by this node (§9.3), empty ones included.
    pub tc_originated: u64,
    /// TC messages (of others) this node queued for retransmission as an MPR (§3.4.1).
    pub tc_forwarded: u64,
    /// OLSR packets handed out by [`Olsr::poll_transmit`].
    pub packets_sent: u64,
    /// Bytes of those packets (UDP payload), in bytes.
    pub bytes_sent: u64,
    /// OLSR packets received ([`Olsr::on_packet`]).
    pub packets_received: u64,
    /// Messages in the received packets, of any kind.
    pub messages_received: u64,
    /// Received messages not processed because a duplicate tuple existed (§3.4).
    pub duplicates_dropped: u64,
    /// TC messages discarded because a newer ANSN from the same originator was known (§9.5).
    pub tc_out_of_order: u64,
}

/// The state of a link as seen from this node (RFC 3626 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkStatus {
    /// L_SYM_time not expired: we hear the neighbour and it hears us.
    Symmetric,
    /// L_ASYM_time not expired, L_SYM_time expired: we hear the neighbour.
    Asymmetric,
    /// Both expired; the tuple is kept (and advertised as LOST_LINK) until L_time.
    Lost,
}

/// Link tuple (§4.2.1); L_local_iface_addr is our one address.
#[derive(Clone, Copy, Debug)]
struct LinkTuple {
    sym_time: SimTime,
    asym_time: SimTime,
    time: SimTime,
}

/// Topology tuple (§4.4) without its key (T_last_addr, T_dest_addr).
#[derive(Clone, Copy, Debug)]
struct TopologyTuple {
    seq: u16,
    time: SimTime,
}

/// Duplicate tuple (§3.4) without its key (D_addr, D_seq_num). D_iface_list is our one
/// interface and D_retransmitted is never consulted with one interface (§3.4.1 step 2), so only
/// D_time is kept.
#[derive(Clone, Copy, Debug)]
struct DupTuple {
    time: SimTime,
}

/// "Expired" in the RFC's sense (current time − 1): never later than any `now`.
const EXPIRED: SimTime = SimTime::ZERO;

/// `s1` is more recent than `s2` in 16-bit sequence space (RFC 3626 §19).
fn seq_newer(s1: u16, s2: u16) -> bool {
    (s1 > s2 && s1 - s2 <= 32767) || (s2 > s1 && s2 - s1 > 32767)
}

/// One OLSR node (RFC 3626) with a single interface.
#[derive(Clone, Debug)]
pub struct Olsr {
    cfg: OlsrConfig,
    addr: Addr,
    rng: RngStream,
    /// Time of the last input: the tables are valid as of this time.
    now: SimTime,

    links: BTreeMap<Addr, LinkTuple>,
    /// N_willingness of each neighbour (§4.3.1).
    willingness: BTreeMap<Addr, u8>,
    /// Symmetric neighbours as of the last update (N_status = SYM).
    sym: BTreeSet<Addr>,
    two_hop: BTreeMap<(Addr, Addr), SimTime>,
    mpr: BTreeSet<Addr>,
    selectors: BTreeMap<Addr, SimTime>,
    topology: BTreeMap<(Addr, Addr), TopologyTuple>,
    dups: BTreeMap<(Addr, u16), DupTuple>,
    routes: BTreeMap<Addr, (Addr, u32)>,
    /// The link, neighbour or 2-hop set changed: recompute the MPR set and the routes.
    nbr_dirty: bool,
    /// The topology set changed: recompute the routes.
    topo_dirty: bool,
    /// Earliest time at which a tuple expires or a link turns asymmetric.
    next_expiry: SimTime,

    next_hello: SimTime,
    next_tc: SimTime,
    /// Messages generated and due now.
    out: VecDeque<Message>,
    /// Messages to forward, due at `fwd_at`.
    fwd: VecDeque<Message>,
    fwd_at: Option<SimTime>,
    msg_seq: u16,
    pkt_seq: u16,
    /// ANSN and the advertised neighbour set it numbers (§9.3).
    ansn: u16,
    advertised: BTreeSet<Addr>,
    /// Keep sending (empty) TCs until then (§9.3).
    tc_until: SimTime,
    stats: OlsrStats,
}

impl Olsr {
    /// A node with address `addr` that starts at time zero: its first HELLO and its first TC
    /// opportunity are each due U(0, `max_jitter`) after time zero. All jitter comes from
    /// `rng`. `cfg` should pass [`OlsrConfig::validate`].
    pub fn new(cfg: OlsrConfig, addr: Addr, mut rng: RngStream) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        let next_hello = SimTime::ZERO + jitter(&mut rng, cfg.max_jitter);
        let next_tc = SimTime::ZERO + jitter(&mut rng, cfg.max_jitter);
        Olsr {
            cfg,
            addr,
            rng,
            now: SimTime::ZERO,
            links: BTreeMap::new(),
            willingness: BTreeMap::new(),
            sym: BTreeSet::new(),
            two_hop: BTreeMap::new(),
            mpr: BTreeSet::new(),
            selectors: BTreeMap::new(),
            topology: BTreeMap::new(),
            dups: BTreeMap::new(),
            routes: BTreeMap::new(),
            nbr_dirty: false,
            topo_dirty: false,
            next_expiry: SimTime::NEVER,
            next_hello,
            next_tc,
            out: VecDeque::new(),
            fwd: VecDeque::new(),
            fwd_at: None,
            msg_seq: 0,
            pkt_seq: 0,
            ansn: 0,
            advertised: BTreeSet::new(),
            tc_until: SimTime::ZERO,
            stats: OlsrStats::default(),
        }
    }

    /// This node's (main and only interface) address.
    pub fn addr(&self) -> Addr {
        self.addr
    }

    /// The configuration.
    pub fn config(&self) -> &OlsrConfig {
        &self.cfg
    }

    /// Counters so far.
    pub fn stats(&self) -> OlsrStats {
        self.stats
    }

    /// Next hop towards `dst` in the routing table (§10), if `dst` is reachable.
    pub fn lookup(&self, dst: Addr) -> Option<Addr> {
        self.routes.get(&dst).map(|r| r.0)
    }

    /// (next hop, number of hops) towards `dst` in the routing table (§10).
    pub fn route(&self, dst: Addr) -> Option<(Addr, u32)> {
        self.routes.get(&dst).copied()
    }

    /// The whole routing table as (destination, next hop, hops), ordered by destination.
    pub fn routes(&self) -> impl Iterator<Item = (Addr, Addr, u32)> + '_ {
        self.routes.iter().map(|(d, (n, h))| (*d, *n, *h))
    }

    /// The MPR set (§8.3) as of the last input.
    pub fn mpr_set(&self) -> &BTreeSet<Addr> {
        &self.mpr
    }

    /// The MPR selectors (§8.4) valid as of the last input: the neighbours that chose us.
    pub fn mpr_selectors(&self) -> impl Iterator<Item = Addr> + '_ {
        let now = self.now;
        self.selectors.iter().filter(move |(_, t)| **t > now).map(|(a, _)| *a)
    }

    /// The symmetric 1-hop neighbours (N_status = SYM, §8.1) as of the last input.
    pub fn symmetric_neighbours(&self) -> &BTreeSet<Addr> {
        &self.sym
    }

    /// The state of the link to `neighbour` as of the last input, `None` without a link tuple.
    pub fn link_status(&self, neighbour: Addr) -> Option<LinkStatus> {
        self.links.get(&neighbour).map(|l| {
            if l.sym_time > self.now {
                LinkStatus::Symmetric
            } else if l.asym_time > self.now {
                LinkStatus::Asymmetric
            } else {
                LinkStatus::Lost
            }
        })
    }

    /// Number of topology tuples (§4.4) currently held.
    pub fn topology_len(&self) -> usize {
        self.topology.len()
    }

    /// An OLSR packet arrived over the air from neighbour `from` (its IP source address).
    /// Each message is processed as in RFC 3626 §3.4: dropped if we originated it or its TTL is
    /// 0, HELLOs by §7.1.1/§8.1.1/§8.2.1/§8.4.1, TCs by §9.5 unless a duplicate tuple exists,
    /// then considered for forwarding by §3.4.1.
    pub fn on_packet(&mut self, now: SimTime, from: Addr, packet: &Packet) {
        self.now = now;
        self.stats.packets_received += 1;
        for m in &packet.messages {
            self.stats.messages_received += 1;
            // RFC 3626 §3.4 step 2: our own messages and TTL 0 are dropped.
            if m.originator == self.addr || m.ttl == 0 {
                continue;
            }
            match &m.body {
                // §6: HELLOs are never forwarded (TTL 1), so no duplicate tuple is recorded.
                Body::Hello(h) => self.process_hello(now, from, m, h),
                Body::Tc(tc) => {
                    // RFC 3626 §3.4 step 3.1: a message with a duplicate tuple is not processed
                    // again.
                    let dup = self.dup(now, m).is_some();
                    if dup {
                        self.stats.duplicates_dropped += 1;
                    } else {
                        self.process_tc(now, from, m, tc);
                    }
                    self.consider_forwarding(now, from, m);
                }
            }
        }
        self.update(now);
    }

    /// Link-layer notification (RFC 3626 §13): the MAC gave up on a unicast frame to
    /// `neighbour`. The link is marked lost at once (L_SYM_time and, without hysteresis,
    /// L_ASYM_time expired; L_time = now + NEIGHB_HOLD_TIME), so routes avoid it from now on.
    pub fn on_link_failure(&mut self, now: SimTime, neighbour: Addr) {
        self.now = now;
        if let Some(l) = self.links.get_mut(&neighbour) {
            l.sym_time = EXPIRED;
            l.asym_time = EXPIRED;
            l.time = now + self.cfg.neighb_hold_time;
        }
        self.update(now);
    }

    /// Timer expiry: expires tuples, generates the HELLO (§6.2) and TC (§9.3) that are due and
    /// releases due forwarded messages. Safe to call at any time.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.now = now;
        self.update(now);
        if now >= self.next_hello {
            self.generate_hello(now);
            // RFC 3626 §3.5 / RFC 5148 §5.1: interval minus a uniform jitter.
            let j = jitter(&mut self.rng, self.cfg.max_jitter);
            self.next_hello = now + SimDuration(self.cfg.hello_interval.0 - j.0);
        }
        if now >= self.next_tc {
            self.generate_tc(now);
            let j = jitter(&mut self.rng, self.cfg.max_jitter);
            self.next_tc = now + SimDuration(self.cfg.tc_interval.0 - j.0);
        }
    }

    /// The next packet to broadcast (link-layer broadcast, IP TTL 1, UDP port 698), if any:
    /// generated HELLO/TC messages and the forwarded messages that are due, plus pending
    /// forwards piggybacked if they fit in [`MAX_PACKET_LEN`]. Call until `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        if self.fwd_at.is_some_and(|t| t <= now) {
            self.out.extend(self.fwd.drain(..));
            self.fwd_at = None;
        }
        let first = self.out.pop_front()?;
        let mut len = PACKET_HEADER_LEN + first.wire_len();
        let mut messages = vec![first];
        while let Some(m) = self.out.front() {
            if len + m.wire_len() > MAX_PACKET_LEN {
                break;
            }
            len += m.wire_len();
            messages.push(self.out.pop_front().unwrap());
        }
        // RFC 5148 §5.2 / RFC 3626 §3.4: pending forwards ride along if they fit.
        while let Some(m) = self.fwd.front() {
            if len + m.wire_len() > MAX_PACKET_LEN {
                break;
            }
            len += m.wire_len();
            messages.push(self.fwd.pop_front().unwrap());
        }
        if self.fwd.is_empty() {
            self.fwd_at = None;
        }
        self.pkt_seq = self.pkt_seq.wrapping_add(1);
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += len as u64;
        Some(Packet {
            seq: self.pkt_seq,
            messages,
        })
    }

    /// The next time [`Olsr::on_timeout`] should be called: the next HELLO, TC, forward
    /// release or tuple expiry. Always `Some` (HELLOs are periodic).
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let mut t = self.next_hello.min(self.next_tc).min(self.next_expiry);
        if let Some(f) = self.fwd_at {
            t = t.min(f);
        }
        if !self.out.is_empty() {
            t = t.min(self.now);
        }
        Some(t)
    }

    // ---------------------------------------------------------------- message processing

    fn dup(&self, now: SimTime, m: &Message) -> Option<DupTuple> {
        self.dups.get(&(m.originator, m.seq)).filter(|d| d.time > now).copied()
    }

    fn is_sym(&self, now: SimTime, neighbour: Addr) -> bool {
        self.links.get(&neighbour).is_some_and(|l| l.sym_time > now)
    }

    /// HELLO processing: link sensing (§7.1.1), neighbour set (§8.1.1), 2-hop neighbour set
    /// (§8.2.1) and MPR selector set (§8.4.1).
    fn process_hello(&mut self, now: SimTime, from: Addr, m: &Message, h: &Hello) {
        let vtime = m.vtime;
        let hold = self.cfg.neighb_hold_time;
        // RFC 3626 §7.1.1 step 1: a new link tuple starts with L_SYM_time expired.
        let l = self.links.entry(from).or_insert_with(|| {
            self.nbr_dirty = true;
            LinkTuple {
                sym_time: EXPIRED,
                asym_time: EXPIRED,
                time: now + vtime,
            }
        });
        // §7.1.1 step 2.1.
        l.asym_time = now + vtime;
        // §7.1.1 step 2.2: our address in the HELLO decides L_SYM_time.
        let me = self.addr;
        let listed = h
            .links
            .iter()
            .find(|lm| lm.neighbors.contains(&me))
            .map(|lm| lm.link_type);
        match listed {
            Some(LinkType::Lost) => l.sym_time = EXPIRED,
            Some(LinkType::Sym) | Some(LinkType::Asym) => {
                l.sym_time = now + vtime;
                l.time = l.sym_time + hold;
            }
            Some(LinkType::Unspec) | None => {}
        }
        // §7.1.1 step 2.3.
        l.time = l.time.max(l.asym_time);
        let sym = l.sym_time > now;

        // RFC 3626 §8.1.1: N_willingness from the HELLO.
        let orig = m.originator;
        if self.willingness.insert(orig, h.willingness) != Some(h.willingness) {
            self.nbr_dirty = true;
        }
        if !sym {
            // §8.2.1 and §8.4.1 apply only to HELLOs from symmetric neighbours.
            return;
        }
        let mut selected = false;
        for lm in &h.links {
            for &a in &lm.neighbors {
                match lm.neighbor_type {
                    NeighborType::Sym | NeighborType::Mpr => {
                        if a == me {
                            // §8.4.1: listed as MPR_NEIGH → we are one of its MPRs.
                            selected |= lm.neighbor_type == NeighborType::Mpr;
                            // §8.2.1: our own address is not a 2-hop neighbour.
                            continue;
                        }
                        // §8.2.1 step 2.1: create or refresh (N_time = now + vtime).
                        if self.two_hop.insert((orig, a), now + vtime).is_none() {
                            self.nbr_dirty = true;
                        }
                    }
                    NeighborType::Not => {
                        // §8.2.1 step 2.2.
                        if self.two_hop.remove(&(orig, a)).is_some() {
                            self.nbr_dirty = true;
                        }
                    }
                }
            }
        }
        if selected {
            // RFC 3626 §8.4.1: MS_time = now + vtime.
            self.selectors.insert(orig, now + vtime);
        }
    }

    /// TC processing (RFC 3626 §9.5).
    fn process_tc(&mut self, now: SimTime, from: Addr, m: &Message, tc: &Tc) {
        // §9.5 step 1: only from a symmetric neighbour.
        if !self.is_sym(now, from) {
            return;
        }
        let orig = m.originator;
        let lo = (orig, Addr::UNSPECIFIED);
        let hi = (orig, Addr::BROADCAST);
        // §9.5 step 2: a newer ANSN is known → the message arrived out of order.
        if self.topology.range(lo..=hi).any(|(_, t)| seq_newer(t.seq, tc.ansn)) {
            self.stats.tc_out_of_order += 1;
            return;
        }
        // §9.5 step 3: drop tuples with an older ANSN.
        let stale: Vec<(Addr, Addr)> = self
            .topology
            .range(lo..=hi)
            .filter(|(_, t)| seq_newer(tc.ansn, t.seq))
            .map(|(k, _)| *k)
            .collect();
        if !stale.is_empty() {
            self.topo_dirty = true;
        }
        for k in stale {
            self.topology.remove(&k);
        }
        // §9.5 step 4: refresh or create (T_dest, T_last = originator, T_seq = ANSN).
        let time = now + m.vtime;
        for &dest in &tc.advertised {
            match self.topology.get_mut(&(orig, dest)) {
                Some(t) => t.time = time,
                None => {
                    self.topology.insert((orig, dest), TopologyTuple { seq: tc.ansn, time });
                    self.topo_dirty = true;
                }
            }
        }
    }

    /// The default forwarding algorithm (RFC 3626 §3.4.1).
    fn consider_forwarding(&mut self, now: SimTime, from: Addr, m: &Message) {
        // Step 1: only messages from symmetric neighbours are considered.
        if !self.is_sym(now, from) {
            return;
        }
        // Step 2: a duplicate tuple lists our one interface already → not again.
        if self.dup(now, m).is_some() {
            return;
        }
        // Step 4: retransmit iff the sender selected us as MPR and TTL > 1.
        let selector = self.selectors.get(&from).is_some_and(|t| *t > now);
        let retransmit = selector && m.ttl > 1;
        // Step 5: record the duplicate tuple.
        self.dups.insert(
            (m.originator, m.seq),
            DupTuple {
                time: now + self.cfg.dup_hold_time,
            },
        );
        if retransmit {
            // Step 6: TTL − 1, hop count + 1; delayed by a jitter (RFC 5148 §5.2).
            let mut f = m.clone();
            f.ttl -= 1;
            f.hop_count = f.hop_count.saturating_add(1);
            self.fwd.push_back(f);
            if self.fwd_at.is_none() {
                self.fwd_at = Some(now + jitter(&mut self.rng, self.cfg.max_jitter));
            }
            self.stats.tc_forwarded += 1;
        }
    }

    // ---------------------------------------------------------------- message generation

    fn next_msg_seq(&mut self) -> u16 {
        self.msg_seq = self.msg_seq.wrapping_add(1);
        self.msg_seq
    }

    /// A HELLO listing every link tuple (RFC 3626 §6.2), grouped by link code.
    fn generate_hello(&mut self, now: SimTime) {
        let mut groups: BTreeMap<(NeighborType, LinkType), Vec<Addr>> = BTreeMap::new();
        for (a, l) in &self.links {
            // §6.2: link type from the link tuple's timers.
            let lt = if l.sym_time > now {
                LinkType::Sym
            } else if l.asym_time > now {
                LinkType::Asym
            } else {
                LinkType::Lost
            };
            // §6.2: neighbour type from the MPR and neighbour sets.
            let nt = if self.mpr.contains(a) {
                NeighborType::Mpr
            } else if self.sym.contains(a) {
                NeighborType::Sym
            } else {
                NeighborType::Not
            };
            groups.entry((nt, lt)).or_default().push(*a);
        }
        let links = groups
            .into_iter()
            .map(|((neighbor_type, link_type), neighbors)| LinkMessage {
                link_type,
                neighbor_type,
                neighbors,
            })
            .collect();
        let seq = self.next_msg_seq();
        self.out.push_back(Message {
            vtime: self.cfg.neighb_hold_time,
            originator: self.addr,
            ttl: 1,
            hop_count: 0,
            seq,
            body: Body::Hello(Hello {
                htime: self.cfg.hello_interval,
                willingness: self.cfg.willingness,
                links,
            }),
        });
        self.stats.hello_sent += 1;
    }

    /// A TC advertising the MPR selectors (RFC 3626 §9.3; §15.1 for TC_REDUNDANCY 1 and 2), if
    /// the set is non-empty or was non-empty within TOP_HOLD_TIME.
    fn generate_tc(&mut self, now: SimTime) {
        let selectors: BTreeSet<Addr> = self.mpr_selectors().collect();
        let adv: BTreeSet<Addr> = match self.cfg.tc_redundancy {
            0 => selectors,
            1 => selectors.union(&self.mpr).copied().collect(),
            _ => self.sym.clone(),
        };
        // §9.3: the ANSN grows whenever the advertised neighbour set changes.
        if adv != self.advertised {
            self.ansn = self.ansn.wrapping_add(1);
            self.advertised = adv;
        }
        if !self.advertised.is_empty() {
            self.tc_until = now + self.cfg.top_hold_time;
        } else if now >= self.tc_until {
            // §9.3: nothing to advertise and no old TC left to invalidate.
            return;
        }
        let seq = self.next_msg_seq();
        self.out.push_back(Message {
            vtime: self.cfg.top_hold_time,
            originator: self.addr,
            ttl: TC_TTL,
            hop_count: 0,
            seq,
            body: Body::Tc(Tc {
                ansn: self.ansn,
                advertised: self.advertised.iter().copied().collect(),
            }),
        });
        self.stats.tc_originated += 1;
    }

    // ---------------------------------------------------------------- table maintenance

    /// Expires tuples, applies neighbourhood changes (§8.5), recomputes the MPR set (§8.3) and
    /// the routing table (§10) if needed, and the next expiry time.
    fn update(&mut self, now: SimTime) {
        let n = self.links.len();
        self.links.retain(|_, l| l.time > now);
        if self.links.len() != n {
            self.nbr_dirty = true;
        }
        // §8.1: a neighbour tuple lives as long as a link tuple to it.
        let links = &self.links;
        self.willingness.retain(|a, _| links.contains_key(a));
        let sym: BTreeSet<Addr> = self
            .links
            .iter()
            .filter(|(_, l)| l.sym_time > now)
            .map(|(a, _)| *a)
            .collect();
        if sym != self.sym {
            self.nbr_dirty = true;
            // RFC 3626 §8.5: a neighbour loss removes its 2-hop and MPR selector tuples.
            for lost in self.sym.difference(&sym) {
                self.two_hop.retain(|(n, _), _| n != lost);
                self.selectors.remove(lost);
            }
            self.sym = sym;
        }
        let n = self.two_hop.len();
        self.two_hop.retain(|_, t| *t > now);
        if self.two_hop.len() != n {
            self.nbr_dirty = true;
        }
        self.selectors.retain(|_, t| *t > now);
        let n = self.topology.len();
        self.topology.retain(|_, t| t.time > now);
        if self.topology.len() != n {
            self.topo_dirty = true;
        }
        self.dups.retain(|_, d| d.time > now);

        if self.nbr_dirty {
            self.compute_mpr();
        }
        if self.nbr_dirty || self.topo_dirty {
            self.compute_routes();
        }
        self.nbr_dirty = false;
        self.topo_dirty = false;

        let mut t = SimTime::NEVER;
        for l in self.links.values() {
            t = t.min(l.time);
            if l.sym_time > now {
                t = t.min(l.sym_time);
            }
        }
        for nt in self.two_hop.values() {
            t = t.min(*nt);
        }
        for tt in self.topology.values() {
            t = t.min(tt.time);
        }
        self.next_expiry = t;
    }

    /// RFC 3626 §8.3: MPR set from the symmetric neighbours and their strict 2-hop neighbours.
    fn compute_mpr(&mut self) {
        let neighbours: BTreeMap<Addr, u8> = self
            .sym
            .iter()
            .map(|a| (*a, self.willingness.get(a).copied().unwrap_or(WILL_DEFAULT)))
            .collect();
        let mut reach: BTreeMap<Addr, BTreeSet<Addr>> = BTreeMap::new();
        for &(y, x) in self.two_hop.keys() {
            if self.sym.contains(&y) && x != self.addr {
                reach.entry(y).or_default().insert(x);
            }
        }
        self.mpr = select_mpr(&neighbours, &reach, self.cfg.mpr_coverage);
    }

    /// RFC 3626 §10: the routing table from the neighbour, 2-hop and topology sets.
    fn compute_routes(&mut self) {
        self.routes.clear();
        // §10 step 2: symmetric neighbours, 1 hop.
        for &y in &self.sym {
            self.routes.insert(y, (y, 1));
        }
        // §10 step 3: strict 2-hop neighbours through a neighbour willing to forward.
        let mut frontier = VecDeque::new();
        for &(y, x) in self.two_hop.keys() {
            if x == self.addr || self.routes.contains_key(&x) || !self.sym.contains(&y) {
                continue;
            }
            if self.willingness.get(&y).copied().unwrap_or(WILL_DEFAULT) == WILL_NEVER {
                continue;
            }
            self.routes.insert(x, (y, 2));
            frontier.push_back(x);
        }
        // §10 step 3 (h = 2, 3, …): a topology tuple whose T_last_addr is h hops away gives
        // T_dest_addr at h + 1 hops through the same next hop. Breadth first = by increasing h.
        while let Some(last) = frontier.pop_front() {
            let (next, h) = self.routes[&last];
            let lo = (last, Addr::UNSPECIFIED);
            let hi = (last, Addr::BROADCAST);
            for (&(_, dest), _) in self.topology.range(lo..=hi) {
                if dest == self.addr || self.routes.contains_key(&dest) {
                    continue;
                }
                self.routes.insert(dest, (next, h + 1));
                frontier.push_back(dest);
            }
        }
    }
}

/// A uniform draw in [0, `max`] from `rng` (RFC 5148 §5).
fn jitter(rng: &mut RngStream, max: SimDuration) -> SimDuration {
    if max == SimDuration::ZERO {
        return SimDuration::ZERO;
    }
    SimDuration((rng.uniform() * max.0 as f64) as u64)
}
