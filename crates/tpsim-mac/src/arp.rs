//! Address resolution (ARP, RFC 826) between IP and the 802.11 MAC, as a sans-IO state
//! machine.
//!
//! tpsim's radios need no address resolution: node `k`'s MAC address is `k`, so a unicast
//! packet can go to the MAC as soon as routing names its next hop. Real stacks, and the ns-2
//! and ns-3 models researchers compare against, resolve the next hop's IP address first and
//! hold the packet while they do. That holding changes results in MANETs: when a route
//! discovery completes, AODV releases its buffered packets all at once, and an ARP cache that
//! holds only a few packets per unresolved neighbour drops the rest. [`Arp`] models it so
//! that such comparisons can include it (scenario table `[arp]`; off by default).
//!
//! # The model
//!
//! One [`Arp`] per node (one radio interface). Each neighbour address has an entry in one of
//! three states (RFC 826 leaves the states to the implementation; these are ns-3's):
//! * **waiting**: a request was sent, no reply yet; up to `pending_queue` packets wait here
//!   (RFC 1122 §2.3.2.2: keep at least the latest); a packet that finds the queue full is
//!   dropped ([`ArpOutput::Drop`]).
//! * **alive**: the address is resolved; packets go straight on ([`Resolve::Send`]) until
//!   `alive_timeout` after the reply, when the next packet sends a new request.
//! * **dead**: `max_retries` retransmissions went unanswered; the waiting packets were dropped,
//!   and every packet for that neighbour is dropped until `dead_timeout` has passed.
//!
//! A first packet for an address sends a request after a uniform random delay in
//! [0, `request_jitter`) (ns-3's `RequestJitter`). Retransmissions follow one timer per node:
//! it runs while any entry waits, fires every `wait_reply_timeout` (RFC 1122 §2.3.2.1: at
//! most one request per second per destination with the default 1 s) and retransmits the
//! request of every waiting entry, or declares it dead once it has been retransmitted
//! `max_retries` times. This is ns-3's `ArpCache` (`HandleWaitReplyTimeout`), so an entry
//! that began waiting just before the timer fires is retransmitted early.
//!
//! ns-2's ARP (`ArpConfig::ns2`, [`Retransmit::PerPacket`]) has no timers: every packet that
//! finds its next hop unresolved sends a request and replaces the packet held (one); the packet
//! that finds `max_retries` requests unanswered is dropped with the held one, and both are
//! reported as a broken link to the routing protocol ([`Resolve::Fail`]); the count starts
//! again. Entries never expire.
//!
//! Receiving ARP (RFC 826, "Packet Reception"), by [`Learn`]:
//! * A request whose target address is this node's is answered with a reply (always).
//! * [`Learn::Merge`] (RFC 826): any request or reply updates the entry of its sender if there
//!   is one (resolving a waiting entry, reviving a dead one, refreshing an alive one), and the
//!   target of a request adds an alive entry for its sender.
//! * [`Learn::Replies`] (ns-3, see its bug 107): only a reply addressed to this node resolves,
//!   and only a waiting entry.
//! * [`Learn::Overheard`] (ns-2): every ARP packet heard, addressed to this node or not, makes
//!   its sender's entry alive.
//!
//! Addresses are node indices (the engine maps IPv4 addresses to nodes); since a node's MAC
//! address is its index, an entry needs no hardware address.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use tpsim_core::{RngStream, SimDuration, SimTime};

/// Bytes of an ARP packet for IPv4 over 48-bit MAC addresses (RFC 826: 8 bytes of fixed
/// fields, two hardware and two protocol addresses).
pub const ARP_LEN: u32 = 28;

/// The parameters of an [`Arp`] cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArpConfig {
    /// Packets held per waiting entry (ns-3 `PendingQueueSize`: 3). At least 1.
    pub pending_queue: usize,
    /// Retransmission period of unanswered requests, s (ns-3 `WaitReplyTimeout`: 1 s).
    pub wait_reply_timeout: SimDuration,
    /// Retransmissions before an entry is declared dead (ns-3 `MaxRetries`: 3).
    pub max_retries: u32,
    /// How long a resolved entry is used before it is resolved again (ns-3 `AliveTimeout`:
    /// 120 s).
    pub alive_timeout: SimDuration,
    /// How long a dead entry drops packets before a new attempt (ns-3 `DeadTimeout`: 100 s).
    pub dead_timeout: SimDuration,
    /// Largest random delay of a first request (ns-3 `RequestJitter`: uniform 0–10 ms).
    pub request_jitter: SimDuration,
    /// What a node learns from the ARP packets it hears.
    pub learn: Learn,
    /// How requests are repeated.
    pub retransmit: Retransmit,
}

/// What a node learns from ARP packets (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learn {
    /// Only a reply to this node's own request (ns-3).
    Replies,
    /// RFC 826's merge: the sender of a request to this node, and any sender already known.
    Merge,
    /// The sender of every ARP packet heard (ns-2).
    Overheard,
}

/// How unanswered requests are repeated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retransmit {
    /// One timer per node (ns-3's `ArpCache`); a waiting entry holds up to `pending_queue`
    /// packets and refuses more; after `max_retries` retransmissions the entry is dead.
    Timer,
    /// One request per packet that finds the entry unresolved (ns-2); the newest packet
    /// replaces the one held; after `max_retries` requests the next packet fails.
    PerPacket,
}

impl ArpConfig {
    /// ns-3's `ArpCache` and `ArpL3Protocol` defaults (ns-3.44), which also meet RFC 1122
    /// §2.3.2's MUSTs; RFC 826's merge on.
    pub fn rfc() -> ArpConfig {
        ArpConfig {
            pending_queue: 3,
            wait_reply_timeout: SimDuration::from_secs(1),
            max_retries: 3,
            alive_timeout: SimDuration::from_secs(120),
            dead_timeout: SimDuration::from_secs(100),
            request_jitter: SimDuration::from_millis(10),
            learn: Learn::Merge,
            retransmit: Retransmit::Timer,
        }
    }

    /// Exactly ns-3's ARP: [`ArpConfig::rfc`] learning only from replies.
    pub fn ns3() -> ArpConfig {
        ArpConfig {
            learn: Learn::Replies,
            ..ArpConfig::rfc()
        }
    }

    /// ns-2.35's `ARPTable` (mac/arp.cc): one packet held, a request per packet,
    /// `ARP_MAX_REQUEST_COUNT` 3, entries that never expire, learning from every ARP packet
    /// heard, no jitter. The timeouts do not apply.
    pub fn ns2() -> ArpConfig {
        ArpConfig {
            pending_queue: 1,
            max_retries: 3,
            alive_timeout: SimDuration(u64::MAX),
            request_jitter: SimDuration::ZERO,
            learn: Learn::Overheard,
            retransmit: Retransmit::PerPacket,
            ..ArpConfig::rfc()
        }
    }
}

/// ARP operation (RFC 826 `ar$op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArpOp {
    /// `ares_op$REQUEST` (1), broadcast.
    Request,
    /// `ares_op$REPLY` (2), unicast to the requester.
    Reply,
}

/// A received ARP packet: operation, sender and target addresses (node indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpMessage {
    /// Request or reply.
    pub op: ArpOp,
    /// The node that sent it (`ar$spa`; its MAC address `ar$sha` is the same index).
    pub sender: u32,
    /// The address asked about (request) or the requester (reply) (`ar$tpa`).
    pub target: u32,
}

/// What [`Arp::resolve`] did with a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolve<P> {
    /// The neighbour is resolved: send the packet now.
    Send(P),
    /// The packet waits for a reply (it comes back as [`ArpOutput::Release`] or
    /// [`ArpOutput::Drop`]).
    Held,
    /// The packet is dropped: the waiting queue is full or the neighbour is dead.
    Drop(P),
    /// The packet is dropped and its next hop reported unreachable to the routing protocol
    /// (ns-2: `max_retries` requests went unanswered; the held packet goes out as an
    /// [`ArpOutput::Drop`] with `broken` set).
    Fail(P),
}

/// Something the cache asks the engine to do (poll with [`Arp::poll_output`]).
#[derive(Debug, PartialEq, Eq)]
pub enum ArpOutput<P> {
    /// Broadcast a request for `target`.
    Request {
        /// The address asked about.
        target: u32,
    },
    /// Send a reply to `to` (unicast, without resolving it first).
    Reply {
        /// The requester.
        to: u32,
    },
    /// A held packet for `target`, now resolved: send it.
    Release {
        /// The packet.
        packet: P,
        /// Its next hop.
        target: u32,
    },
    /// A held packet dropped: its neighbour did not answer, or (ns-2) a newer packet took its
    /// place.
    Drop {
        /// The packet.
        packet: P,
        /// Report its next hop unreachable to the routing protocol (ns-2's failure).
        broken: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Waiting,
    Alive,
    Dead,
}

#[derive(Debug)]
struct Entry<P> {
    state: State,
    /// When the entry last changed state (ns-3's `m_lastSeen`).
    since: SimTime,
    retries: u32,
    pending: VecDeque<P>,
}

impl<P> Entry<P> {
    /// An alive entry learnt at `now` (a caller about to wait on it changes the state).
    fn new(now: SimTime) -> Entry<P> {
        Entry {
            state: State::Alive,
            since: now,
            retries: 0,
            pending: VecDeque::new(),
        }
    }
}

/// One node's ARP cache. `P` is the engine's packet handle.
#[derive(Debug)]
pub struct Arp<P> {
    cfg: ArpConfig,
    me: u32,
    entries: FxHashMap<u32, Entry<P>>,
    /// The retransmission timer (ns-3's `m_waitReplyTimer`), if running.
    timer: Option<SimTime>,
    /// First requests waiting out their jitter: (due time, target), in due order.
    delayed: VecDeque<(SimTime, u32)>,
    out: VecDeque<ArpOutput<P>>,
    rng: RngStream,
}

impl<P> Arp<P> {
    /// The cache of node `me`; `rng` draws the request jitter.
    pub fn new(cfg: ArpConfig, me: u32, rng: RngStream) -> Arp<P> {
        Arp {
            cfg,
            me,
            entries: FxHashMap::default(),
            timer: None,
            delayed: VecDeque::new(),
            out: VecDeque::new(),
            rng,
        }
    }

    /// A unicast `packet` for neighbour `target` wants to leave at `now` (ns-3
    /// `ArpL3Protocol::Lookup`).
    pub fn resolve(&mut self, now: SimTime, target: u32, packet: P) -> Resolve<P> {
        let cfg = self.cfg;
        let Some(e) = self.entries.get_mut(&target) else {
            // A first packet for this address: a new entry, waiting at once.
            self.entries.insert(target, Entry::new(now));
            self.start_waiting(now, target, packet);
            return Resolve::Held;
        };
        let age = now.saturating_since(e.since);
        if cfg.retransmit == Retransmit::PerPacket && e.state != State::Alive {
            return self.resolve_per_packet(target, packet);
        }
        match e.state {
            State::Alive if age <= cfg.alive_timeout => Resolve::Send(packet),
            State::Dead if age <= cfg.dead_timeout => Resolve::Drop(packet),
            State::Waiting if e.pending.len() >= cfg.pending_queue => Resolve::Drop(packet),
            State::Waiting => {
                e.pending.push_back(packet);
                Resolve::Held
            }
            // An alive entry past `alive_timeout` or a dead one past `dead_timeout`: ask again.
            State::Alive | State::Dead => {
                self.start_waiting(now, target, packet);
                Resolve::Held
            }
        }
    }

    /// ns-2's `arpresolve` for an unresolved entry: a request per packet, one packet held.
    fn resolve_per_packet(&mut self, target: u32, packet: P) -> Resolve<P> {
        let e = self.entries.get_mut(&target).expect("entry exists");
        if e.retries >= self.cfg.max_retries {
            // ns-2: drop the held packet and this one through the link-failure callback, and
            // count again.
            e.retries = 0;
            while let Some(held) = e.pending.pop_front() {
                self.out.push_back(ArpOutput::Drop {
                    packet: held,
                    broken: true,
                });
            }
            return Resolve::Fail(packet);
        }
        e.retries += 1;
        while e.pending.len() >= self.cfg.pending_queue {
            let old = e.pending.pop_front().expect("non-empty");
            self.out.push_back(ArpOutput::Drop {
                packet: old,
                broken: false,
            });
        }
        e.pending.push_back(packet);
        self.out.push_back(ArpOutput::Request { target });
        Resolve::Held
    }

    /// Puts `target`'s entry into the waiting state with `packet`, and sends a request after
    /// the jitter.
    fn start_waiting(&mut self, now: SimTime, target: u32, packet: P) {
        let e = self.entries.get_mut(&target).expect("entry exists");
        e.state = State::Waiting;
        e.since = now;
        e.retries = 0;
        if self.cfg.retransmit == Retransmit::PerPacket {
            self.resolve_per_packet(target, packet);
            return;
        }
        e.pending.push_back(packet);
        if self.timer.is_none() {
            self.timer = Some(now + self.cfg.wait_reply_timeout);
        }
        let j = self.cfg.request_jitter.0;
        if j == 0 {
            self.out.push_back(ArpOutput::Request { target });
            return;
        }
        let due = now + SimDuration((self.rng.uniform() * j as f64) as u64);
        // Due times are drawn independently, so keep the list sorted.
        let at = self.delayed.partition_point(|&(t, _)| t <= due);
        self.delayed.insert(at, (due, target));
    }

    /// An ARP packet arrived at this node (RFC 826, "Packet Reception").
    pub fn on_arp(&mut self, now: SimTime, m: ArpMessage) {
        let for_me = m.target == self.me;
        match self.cfg.learn {
            Learn::Merge => {
                // RFC 826: "If the pair <protocol type, sender protocol address> is already in
                // my translation table, update the sender hardware address field of the entry".
                let merged = self.mark_alive(now, m.sender);
                // "?Am I the target protocol address? Yes: If Merge_flag is false, add the
                // triplet".
                if for_me && !merged {
                    self.entries.insert(m.sender, Entry::new(now));
                }
            }
            Learn::Replies => {
                // ns-3: a reply resolves a waiting entry only; anything else is ignored.
                let waiting = self.entries.get(&m.sender).is_some_and(|e| e.state == State::Waiting);
                if m.op == ArpOp::Reply && for_me && waiting {
                    self.mark_alive(now, m.sender);
                }
            }
            Learn::Overheard => {
                // ns-2's arpinput: every ARP packet heard makes its sender's entry alive.
                if !self.mark_alive(now, m.sender) {
                    self.entries.insert(m.sender, Entry::new(now));
                }
            }
        }
        if m.op == ArpOp::Request && for_me {
            // RFC 826: "?Is the opcode ares_op$REQUEST? Yes: ... send the packet to the
            // (new) target hardware address".
            self.out.push_back(ArpOutput::Reply { to: m.sender });
        }
    }

    /// Marks `target`'s entry alive and releases its waiting packets; false if it has none.
    fn mark_alive(&mut self, now: SimTime, target: u32) -> bool {
        let Some(e) = self.entries.get_mut(&target) else {
            return false;
        };
        e.state = State::Alive;
        e.since = now;
        e.retries = 0;
        while let Some(packet) = e.pending.pop_front() {
            self.out.push_back(ArpOutput::Release { packet, target });
        }
        true
    }

    /// When [`Arp::on_timeout`] must next be called, if ever.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let first = self.delayed.front().map(|&(t, _)| t);
        match (first, self.timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends the requests that are due and runs the retransmission timer if it expired.
    pub fn on_timeout(&mut self, now: SimTime) {
        while let Some(&(t, target)) = self.delayed.front() {
            if t > now {
                break;
            }
            self.delayed.pop_front();
            self.out.push_back(ArpOutput::Request { target });
        }
        if self.timer.is_some_and(|t| t <= now) {
            self.timer = None;
            self.retransmit(now);
        }
    }

    /// ns-3's `HandleWaitReplyTimeout`: every waiting entry is asked again or declared dead.
    fn retransmit(&mut self, now: SimTime) {
        let mut waiting: Vec<u32> = self
            .entries
            .iter()
            .filter(|(_, e)| e.state == State::Waiting)
            .map(|(&t, _)| t)
            .collect();
        waiting.sort_unstable();
        let mut again = false;
        for target in waiting {
            let e = self.entries.get_mut(&target).expect("listed");
            if e.retries < self.cfg.max_retries {
                e.retries += 1;
                again = true;
                self.out.push_back(ArpOutput::Request { target });
            } else {
                e.state = State::Dead;
                e.since = now;
                e.retries = 0;
                while let Some(packet) = e.pending.pop_front() {
                    self.out.push_back(ArpOutput::Drop { packet, broken: false });
                }
            }
        }
        if again {
            self.timer = Some(now + self.cfg.wait_reply_timeout);
        }
    }

    /// The next thing to do, in the order the cache decided them.
    pub fn poll_output(&mut self) -> Option<ArpOutput<P>> {
        self.out.pop_front()
    }

    /// Packets held in waiting entries.
    pub fn held(&self) -> usize {
        self.entries.values().map(|e| e.pending.len()).sum()
    }
}

#[cfg(test)]
mod tests;
