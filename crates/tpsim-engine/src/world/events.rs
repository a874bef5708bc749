//! Fault glue (`[[events]]`): links, interfaces and nodes that go down and come back up, and
//! links whose rate, delay or loss change, at the times the scenario gives.
//!
//! What is down and why is kept here ([`Faults`]); the link and radio glue asks it before
//! sending and at each arrival. A part that goes down drops what it holds at once: a link
//! direction its queue and the packet on its wire, a radio its interface queue and the packet
//! in service (the frame on the air is cut short: nobody decodes it). Packets handed to it
//! later are dropped too, and so are packets that arrive at a down interface or node, and
//! packets that were propagating on a link when it went down. The reason of such a drop is
//! the most local part that is down: `node_down`, then `interface_down`, then `link_down`.
//!
//! A node that goes down keeps all its state (transport endpoints, routes, ARP cache,
//! routing protocol): it is cut off, not restarted, and whatever it sends meanwhile is
//! dropped (`node_down`). Static routes are never recomputed. A radio that comes back up
//! starts as a freshly switched-on station ([`tpsim_mac::Dcf::power_cycle`]) that senses only
//! the signals that start after it came up.

use super::{Event, World};
use crate::metrics::DropReason;
use crate::net::DeviceRef;
use crate::packet::PacketId;
use tpsim_core::{SimDuration, SimTime};
use tpsim_scenario::{FaultKind, Scenario};

/// One event of the scenario, resolved to the engine's indices.
#[derive(Clone, Copy, Debug)]
struct Fault {
    kind: FaultKind,
    /// The link (link events, link changes).
    link: u32,
    /// The node (interface and node events).
    node: u32,
    /// The interface (interface events): a link end's device index, or one of the node's
    /// radios.
    iface: Option<DeviceRef>,
    rate_bps: Option<u64>,
    delay: Option<SimDuration>,
    loss: Option<f64>,
    /// The event's queue key, `time << 64 | sequence number`.
    key: u128,
}

/// What is down, and since which event.
pub(super) struct Faults {
    events: Vec<Fault>,
    link_down: Vec<bool>,
    /// Per link: how many times it went down. A packet that started propagating in an earlier
    /// epoch than its arrival's was on the link when it went down.
    link_epoch: Vec<u32>,
    /// Per point-to-point device (its interface), whether the interface is down.
    dev_down: Vec<bool>,
    /// Per radio, whether its interface is down.
    radio_down: Vec<bool>,
    node_down: Vec<bool>,
    /// Per radio, the queue key of the event that last switched it on (0: never off). A
    /// signal that started before it was not sensed, and its end is ignored.
    radio_on_key: Vec<u128>,
}

impl World {
    /// Queues the scenario's fault events (after every other first event, so that at equal
    /// times they run after those).
    pub(super) fn schedule_faults(&mut self, sc: &Scenario) {
        if sc.events.is_empty() {
            return;
        }
        let n = sc.nodes.count as usize;
        let mut events = Vec::with_capacity(sc.events.len());
        for (i, e) in sc.events.iter().enumerate() {
            let at = SimTime(e.at.0);
            let seq = self.queue.reserve(1);
            self.queue.push_reserved(at, seq, Event::Fault { i: i as u32 });
            let (link, node) = (e.link.unwrap_or(0), e.node.unwrap_or(0));
            let iface = match (e.kind, e.radio) {
                (FaultKind::InterfaceDown | FaultKind::InterfaceUp, Some(true)) => {
                    // The node's radio on `channel` (validated), or its only radio.
                    let r = match e.channel {
                        Some(c) => self.rmap.on_channel(node, c),
                        None => self.rmap.radios(node).first().copied(),
                    };
                    Some(DeviceRef::Radio(r.expect("validated: the node has that radio")))
                }
                (FaultKind::InterfaceDown | FaultKind::InterfaceUp, _) => {
                    let first = sc.links[link as usize].nodes[0] == node;
                    Some(DeviceRef::Link(2 * link + u32::from(!first)))
                }
                _ => None,
            };
            events.push(Fault {
                kind: e.kind,
                link,
                node,
                iface,
                rate_bps: e.rate.map(|r| r.0),
                delay: e.delay.map(|d| d.sim()),
                loss: e.loss,
                key: (u128::from(at.0) << 64) | u128::from(seq),
            });
        }
        self.faults = Some(Faults {
            events,
            link_down: vec![false; sc.links.len()],
            link_epoch: vec![0; sc.links.len()],
            dev_down: vec![false; self.links.len()],
            radio_down: vec![false; self.radios.len()],
            node_down: vec![false; n],
            radio_on_key: vec![0; self.radios.len()],
        });
    }

    /// Fault event `i` happens now.
    pub(super) fn on_fault(&mut self, i: u32) {
        let Some(f) = &mut self.faults else { return };
        let e = f.events[i as usize];
        match e.kind {
            FaultKind::LinkDown => {
                let l = e.link as usize;
                if !f.link_down[l] {
                    f.link_down[l] = true;
                    f.link_epoch[l] = f.link_epoch[l].wrapping_add(1);
                }
                self.flush_link_dev(2 * e.link);
                self.flush_link_dev(2 * e.link + 1);
            }
            FaultKind::LinkUp => f.link_down[e.link as usize] = false,
            FaultKind::InterfaceDown | FaultKind::InterfaceUp => {
                let down = e.kind == FaultKind::InterfaceDown;
                match e.iface.expect("interface events name an interface") {
                    DeviceRef::Link(dev) => {
                        f.dev_down[dev as usize] = down;
                        if down {
                            self.flush_link_dev(dev);
                        }
                    }
                    DeviceRef::Radio(r) => {
                        f.radio_down[r as usize] = down;
                        self.radio_switch(r, e.key);
                    }
                }
            }
            FaultKind::NodeDown | FaultKind::NodeUp => {
                let down = e.kind == FaultKind::NodeDown;
                f.node_down[e.node as usize] = down;
                let devs: Vec<u32> = self
                    .links
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| self.net.node_of(d.iface) == e.node)
                    .map(|(i, _)| i as u32)
                    .collect();
                if down {
                    for dev in devs {
                        self.flush_link_dev(dev);
                    }
                }
                if !self.rmap.is_empty() {
                    for r in self.rmap.radios(e.node).to_vec() {
                        self.radio_switch(r, e.key);
                    }
                }
            }
            FaultKind::LinkChange => {
                for dev in [2 * e.link, 2 * e.link + 1] {
                    let d = &mut self.links[dev as usize];
                    if let Some(r) = e.rate_bps {
                        d.rate_bps = r;
                    }
                    if let Some(v) = e.delay {
                        d.delay = v;
                    }
                    if let Some(p) = e.loss {
                        d.errors.loss = p;
                    }
                }
            }
        }
    }

    /// Why point-to-point device `dev` cannot send or receive now, if it cannot.
    #[inline]
    pub(super) fn link_dev_down(&self, dev: u32) -> Option<DropReason> {
        let f = self.faults.as_ref()?;
        let d = &self.links[dev as usize];
        if f.node_down[self.net.node_of(d.iface) as usize] {
            Some(DropReason::NodeDown)
        } else if f.dev_down[dev as usize] {
            Some(DropReason::InterfaceDown)
        } else if f.link_down[d.link as usize] {
            Some(DropReason::LinkDown)
        } else {
            None
        }
    }

    /// The propagation epoch of link `link` (see [`Faults`]): 0 without fault events.
    #[inline]
    pub(super) fn link_epoch(&self, link: u32) -> u32 {
        self.faults.as_ref().map_or(0, |f| f.link_epoch[link as usize])
    }

    /// Why and where a packet that reaches device `dev` after propagating since epoch
    /// `epoch` is lost, if it is: the link went down meanwhile (lost on the link: counted at
    /// the sending end), or the receiving end is down (counted there).
    #[inline]
    pub(super) fn arrival_lost(&self, dev: u32, epoch: u32) -> Option<(DropReason, u32)> {
        let f = self.faults.as_ref()?;
        if f.link_epoch[self.links[dev as usize].link as usize] != epoch {
            let sender = self.net.node_of(self.links[(dev ^ 1) as usize].iface);
            return Some((DropReason::LinkDown, sender));
        }
        let node = self.net.node_of(self.links[dev as usize].iface);
        self.link_dev_down(dev).map(|r| (r, node))
    }

    /// Why node `node` cannot send now, if it is down.
    #[inline]
    pub(super) fn node_down(&self, node: u32) -> Option<DropReason> {
        let f = self.faults.as_ref()?;
        f.node_down[node as usize].then_some(DropReason::NodeDown)
    }

    /// Why radio `radio` is off: its node's energy is spent, or a fault event.
    pub(super) fn radio_off_reason(&self, radio: u32) -> DropReason {
        let node = self.rmap.node(radio);
        match &self.faults {
            Some(_) if self.node_dead(node) => DropReason::Energy,
            Some(f) if f.node_down[node as usize] => DropReason::NodeDown,
            Some(f) if f.radio_down[radio as usize] => DropReason::InterfaceDown,
            _ => DropReason::Energy,
        }
    }

    /// Whether the signal of the `k`-th receiver `radio` of air frame `frame` started before
    /// the radio was last switched on: then it was not sensed, and its end means nothing.
    #[inline]
    pub(super) fn signal_predates_radio(&self, frame: u32, radio: u32, k: u32) -> bool {
        let (Some(f), Some(ch)) = (&self.faults, &self.wifi) else {
            return false;
        };
        let on = f.radio_on_key[radio as usize];
        if on == 0 {
            return false;
        }
        let r = ch.receivers(frame)[k as usize];
        let (t, seq) = ch.frames[frame as usize].start_key(&r, k);
        ((u128::from(t.0) << 64) | u128::from(seq)) < on
    }

    /// Takes every packet off point-to-point device `dev` (its queue and its wire), dropped
    /// for the reason it is down.
    fn flush_link_dev(&mut self, dev: u32) {
        let Some(reason) = self.link_dev_down(dev) else { return };
        let now = self.now;
        let node = self.net.node_of(self.links[dev as usize].iface);
        let d = &mut self.links[dev as usize];
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        let mut doomed: Vec<PacketId> = Vec::with_capacity(d.waiting() + 1);
        if let Some(id) = d.on_wire.take() {
            d.tx_gen = d.tx_gen.wrapping_add(1);
            doomed.push(id);
        }
        doomed.extend(d.ring.drain(..));
        let mut waiting = Vec::with_capacity(d.queue.len());
        d.queue.purge(&mut waiting);
        doomed.extend(waiting.iter().map(|p| PacketId(p.id)));
        for id in doomed {
            self.drop_packet(node, id, reason);
        }
    }

    /// Switches radio `radio` off or on to match its node's and interface's state, by the
    /// event with queue key `key`.
    fn radio_switch(&mut self, radio: u32, key: u128) {
        let node = self.rmap.node(radio);
        let dead = self.node_dead(node);
        let Some(f) = &mut self.faults else { return };
        let off = f.node_down[node as usize] || f.radio_down[radio as usize];
        let is_off = self.radios[radio as usize].dead;
        if off && !is_off {
            let reason = self.radio_off_reason(radio);
            self.radio_power(radio, false, reason);
        } else if !off && is_off && !dead {
            f.radio_on_key[radio as usize] = key;
            self.radio_power(radio, true, DropReason::InterfaceDown);
        }
    }
}
