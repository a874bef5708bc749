//! Address resolution on the radios (scenario table `[arp]`): every radio's
//! [`tpsim_mac::arp::Arp`] cache between routing and the interface queue.
//!
//! * A unicast packet entering a radio's queue ([`World::radio_send`]) first asks its
//!   radio's cache for the next hop; it goes on, waits in the cache, or is dropped
//!   (`drops_arp` for data, `routing_drops` for control packets).
//! * Requests (broadcast) and replies (unicast) are real packets of [`ARP_LEN`] bytes (plus
//!   LLC/SNAP under the standard size convention), queued behind the radio's other packets as
//!   in ns-3's single queue; they are counted as `arp_requests`/`arp_replies` and in
//!   `mac_frames`, and dissect as ARP in the pcap traces.
//! * A packet released by a reply enters the queue as it would have (routing control at the
//!   head).
//! * Preset `"ns2"`: a resolution that fails (three unanswered requests) is reported to the
//!   routing protocol as a broken link, as a MAC retry failure is (ns-2's `xmit_failure_`
//!   callback); the packets count in `drops_arp` unless AODV keeps them for a local repair.

use super::{Event, NodeTimers, World};
use crate::metrics::DropReason;
use crate::packet::{PacketId, ARP_REPLY, ARP_REQUEST};
use crate::wifi::{wifi_addr, wifi_radio};
use tpsim_core::{RngStream, SimTime};
use tpsim_mac::arp::{Arp, ArpConfig, ArpMessage, ArpOp, ArpOutput, Learn, Resolve, ARP_LEN};
use tpsim_scenario::{ArpLearn, ArpPreset};

pub(super) struct ArpState {
    nodes: Vec<Arp<PacketId>>,
    timers: NodeTimers,
    requests: u64,
    replies: u64,
}

impl ArpState {
    /// The caches of `n` radios for scenario table `a`.
    pub fn new(a: &tpsim_scenario::Arp, n: usize, key: impl Fn(u64) -> RngStream) -> ArpState {
        let mut cfg = match a.preset.unwrap_or_default() {
            ArpPreset::Rfc => ArpConfig::rfc(),
            ArpPreset::Ns3 => ArpConfig::ns3(),
            ArpPreset::Ns2 => ArpConfig::ns2(),
        };
        if let Some(q) = a.pending_queue {
            cfg.pending_queue = q as usize;
        }
        if let Some(d) = a.wait_reply_timeout {
            cfg.wait_reply_timeout = d.sim();
        }
        if let Some(r) = a.max_retries {
            cfg.max_retries = r;
        }
        if let Some(d) = a.alive_timeout {
            cfg.alive_timeout = d.sim();
        }
        if let Some(d) = a.dead_timeout {
            cfg.dead_timeout = d.sim();
        }
        if let Some(d) = a.request_jitter {
            cfg.request_jitter = d.sim();
        }
        if let Some(l) = a.learn {
            cfg.learn = match l {
                ArpLearn::Replies => Learn::Replies,
                ArpLearn::Merge => Learn::Merge,
                ArpLearn::Overheard => Learn::Overheard,
            };
        }
        ArpState {
            nodes: (0..n).map(|i| Arp::new(cfg, i as u32, key(i as u64))).collect(),
            timers: NodeTimers::new(n),
            requests: 0,
            replies: 0,
        }
    }
}

impl ArpState {
    /// ARP requests and replies sent.
    pub fn counts(&self) -> (u64, u64) {
        (self.requests, self.replies)
    }
}

impl World {
    /// Asks radio `radio`'s cache for the next hop of unicast packet `id`. Returns the packet if it
    /// may be queued now; otherwise the cache holds or dropped it.
    pub(super) fn arp_resolve(&mut self, radio: u32, id: PacketId) -> Option<PacketId> {
        let now = self.now;
        let Some(a) = &mut self.arp else { return Some(id) };
        let hop = self.packets.get(id).link_dst;
        match a.nodes[radio as usize].resolve(now, hop, id) {
            Resolve::Send(id) => Some(id),
            Resolve::Held => {
                self.pump_arp(radio);
                None
            }
            Resolve::Drop(id) => {
                self.drop_packet(self.rmap.node(radio), id, DropReason::Arp);
                None
            }
            Resolve::Fail(id) => {
                self.arp_failed(radio, id);
                self.pump_arp(radio);
                None
            }
        }
    }

    /// An ARP packet `id` arrived at `radio`.
    pub(super) fn arp_input(&mut self, radio: u32, id: PacketId) {
        let now = self.now;
        let p = self.packets.get(id);
        let (sender, target) = (wifi_radio(p.ip.src), wifi_radio(p.ip.dst));
        let op = if p.ctrl == ARP_REQUEST {
            ArpOp::Request
        } else {
            ArpOp::Reply
        };
        self.packets.release(id);
        let (Some(a), Some(sender), Some(target)) = (&mut self.arp, sender, target) else {
            return;
        };
        a.nodes[radio as usize].on_arp(now, ArpMessage { op, sender, target });
        self.pump_arp(radio);
    }

    pub(super) fn on_arp_timer(&mut self, radio: u32, gen: u32) {
        let now = self.now;
        let dead = self.node_dead(self.rmap.node(radio));
        let Some(a) = &mut self.arp else { return };
        if dead || !a.timers.fire(radio, gen) {
            return;
        }
        a.nodes[radio as usize].on_timeout(now);
        self.pump_arp(radio);
    }

    /// Moves radio `radio`'s ARP outputs: requests and replies out, released packets on, dropped
    /// ones counted; then its timer.
    fn pump_arp(&mut self, radio: u32) {
        let now = self.now;
        loop {
            let Some(a) = &mut self.arp else { return };
            let Some(out) = a.nodes[radio as usize].poll_output() else {
                break;
            };
            match out {
                ArpOutput::Request { target } => {
                    a.requests += 1;
                    self.send_arp(radio, ARP_REQUEST, target, tpsim_mac::BROADCAST);
                }
                ArpOutput::Reply { to } => {
                    a.replies += 1;
                    self.send_arp(radio, ARP_REPLY, to, to);
                }
                ArpOutput::Release { packet, .. } => {
                    let priority = self.packets.get(packet).is_ctrl();
                    self.radio_enqueue(radio, packet, priority);
                }
                ArpOutput::Drop { packet, broken: false } => {
                    self.drop_packet(self.rmap.node(radio), packet, DropReason::Arp)
                }
                ArpOutput::Drop { packet, broken: true } => self.arp_failed(radio, packet),
            }
        }
        let Some(a) = &mut self.arp else { return };
        // Arming with NEVER still supersedes a queued deadline the cache no longer wants.
        let t = a.nodes[radio as usize].poll_timeout().unwrap_or(SimTime::NEVER);
        let gen = a.timers.arm(radio, t);
        if let Some(gen) = gen.filter(|_| t != SimTime::NEVER) {
            self.queue.push(t.max(now), Event::ArpTimer { radio, gen });
        }
    }

    /// ns-2: ARP gave up on `id`'s next hop; the routing protocol hears of a broken link as
    /// from the MAC (ns-2's `xmit_failure_` callback), and the packet is dropped as `drops_arp`
    /// unless AODV keeps it for a local repair.
    fn arp_failed(&mut self, radio: u32, id: PacketId) {
        if let Some(id) = self.link_failed(radio, id) {
            self.drop_packet(self.rmap.node(radio), id, DropReason::Arp);
        }
    }

    /// Queues an ARP packet (`op` [`ARP_REQUEST`] or [`ARP_REPLY`]) about `target` at
    /// radio `radio`, to `link_dst`. The IPv4 source and destination hold the sender's and
    /// the target's protocol addresses (`ar$spa`, `ar$tpa`).
    fn send_arp(&mut self, radio: u32, op: u32, target: u32, link_dst: u32) {
        let id = self.alloc_control(radio, wifi_addr(target), 1, 0, 0, ARP_LEN, link_dst, op);
        self.radio_enqueue(radio, id, false);
    }
}
