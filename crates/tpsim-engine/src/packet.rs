//! Packets in flight, kept in an arena and referred to by [`PacketId`].
//!
//! A packet is allocated once when a transport emits it and freed when it is delivered or
//! dropped; slots are reused, so the steady state allocates nothing. Each slot has a reference
//! count so that a frame heard by several receivers (a radio channel) is shared, not copied.

use tpsim_transport::Segment;
use tpsim_wire::Ipv4Repr;

/// Index of a packet in the [`PacketArena`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketId(pub u32);

/// Flow direction index for packets that belong to no flow (routing control packets).
pub const NO_DIR: u32 = u32::MAX;

/// [`Packet::ctrl`] of a packet that carries no routing control message.
pub const NO_CTRL: u32 = u32::MAX;

/// [`Packet::ctrl`] of an ARP request (RFC 826; not an IP packet: its IPv4 source and
/// destination hold the sender's and the target's protocol addresses).
pub const ARP_REQUEST: u32 = u32::MAX - 2;

/// [`Packet::ctrl`] of an ARP reply (as [`ARP_REQUEST`]).
pub const ARP_REPLY: u32 = u32::MAX - 1;

/// A network-layer packet.
#[derive(Clone, Debug)]
pub struct Packet {
    /// IPv4 header (TTL is decremented per hop).
    pub ip: Ipv4Repr,
    /// Transport segment.
    pub seg: Segment,
    /// Flow direction the packet's data belongs to ([`NO_DIR`] for none).
    pub dir: u32,
    /// The packet's number within its direction (0 for the direction's first data packet,
    /// retransmissions numbered anew). Copies of a packet (a forwarded frame whose sender
    /// keeps its own copy until the ACK) share it, so that the packet is counted once.
    pub seq: u32,
    /// Link-layer destination chosen by routing at the last hop decision (wireless: the
    /// next-hop node), set by the sending node before the packet enters a device queue.
    pub link_dst: u32,
    /// The routing control message carried (an index into the world's store of control
    /// messages), [`NO_CTRL`] for a data packet, or [`ARP_REQUEST`]/[`ARP_REPLY`].
    pub ctrl: u32,
    /// Time spent waiting in interface queues so far, ns: each queue subtracts the instant
    /// the packet enters it and adds the instant it leaves, so that once out of every queue
    /// this is the total wait (0 for a packet that never waited).
    pub queue_ns: i64,
}

impl Packet {
    /// Whether the packet carries a routing control message.
    #[inline]
    pub fn is_ctrl(&self) -> bool {
        self.ctrl < ARP_REQUEST
    }

    /// Whether the packet carries data (neither routing control nor ARP).
    #[inline]
    pub fn is_data(&self) -> bool {
        self.ctrl == NO_CTRL
    }

    /// Whether the packet is an ARP request or reply.
    #[inline]
    pub fn is_arp(&self) -> bool {
        self.ctrl == ARP_REQUEST || self.ctrl == ARP_REPLY
    }
}

/// Arena of packets with reference counts.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    refs: Vec<u32>,
    /// Each slot's packet identity: a number drawn from `next_uid` when a packet is made,
    /// kept by its copies (the ns-2 traces' packet id).
    uids: Vec<u32>,
    next_uid: u32,
    free: Vec<u32>,
    live: usize,
    /// Control-message indices of freed packets, for the world to reuse.
    freed_ctrl: Vec<u32>,
}

impl PacketArena {
    /// Stores `p` with one reference.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        let uid = self.next_uid;
        self.next_uid = self.next_uid.wrapping_add(1);
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            self.refs[i as usize] = 1;
            self.uids[i as usize] = uid;
            PacketId(i)
        } else {
            self.slots.push(p);
            self.refs.push(1);
            self.uids.push(uid);
            PacketId(self.slots.len() as u32 - 1)
        }
    }

    /// The packet's identity: numbered from 0 in the order packets are made (every
    /// transmission of a transport, every routing message and hop, every ARP message), the
    /// same for all copies of one packet.
    #[inline]
    pub fn uid(&self, id: PacketId) -> u32 {
        self.uids[id.0 as usize]
    }

    /// Adds a reference (one more receiver holds the packet).
    #[inline]
    pub fn share(&mut self, id: PacketId) -> PacketId {
        self.refs[id.0 as usize] += 1;
        id
    }

    /// Drops one reference; frees the slot at zero.
    #[inline]
    pub fn release(&mut self, id: PacketId) {
        let r = &mut self.refs[id.0 as usize];
        debug_assert!(*r > 0, "double free of packet {}", id.0);
        *r -= 1;
        if *r == 0 {
            self.free.push(id.0);
            self.live -= 1;
            let p = &self.slots[id.0 as usize];
            if p.is_ctrl() {
                self.freed_ctrl.push(p.ctrl);
            }
        }
    }

    /// A control-message index whose last packet was freed, if any.
    #[inline]
    pub fn reclaim_ctrl(&mut self) -> Option<u32> {
        self.freed_ctrl.pop()
    }

    /// The packet.
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    /// The packet, mutably (only while a single holder has it).
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        debug_assert_eq!(self.refs[id.0 as usize], 1, "mutating a shared packet");
        &mut self.slots[id.0 as usize]
    }

    /// Packet `id` enters an interface queue at `now` (its holders share the wait).
    #[inline]
    pub fn enter_queue(&mut self, id: PacketId, now: tpsim_core::SimTime) {
        let q = &mut self.slots[id.0 as usize].queue_ns;
        *q = q.wrapping_sub(now.0 as i64);
    }

    /// Packet `id` leaves an interface queue at `now` (after [`Self::enter_queue`]).
    #[inline]
    pub fn leave_queue(&mut self, id: PacketId, now: tpsim_core::SimTime) {
        let q = &mut self.slots[id.0 as usize].queue_ns;
        *q = q.wrapping_add(now.0 as i64);
    }

    /// Returns a packet this holder may mutate: `id` itself if it is the only holder, else a
    /// copy (copy on write), releasing this holder's reference to the shared one.
    #[inline]
    pub fn make_mut(&mut self, id: PacketId) -> PacketId {
        if self.refs[id.0 as usize] == 1 {
            return id;
        }
        let p = self.slots[id.0 as usize].clone();
        let uid = self.uids[id.0 as usize];
        self.release(id);
        let copy = self.alloc(p);
        // A copy is the same packet: it keeps the identity (and draws no new number).
        self.next_uid = self.next_uid.wrapping_sub(1);
        self.uids[copy.0 as usize] = uid;
        copy
    }

    /// Number of live packets.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Live packets (for end-of-run accounting).
    pub fn iter_live(&self) -> impl Iterator<Item = &Packet> {
        self.slots
            .iter()
            .zip(&self.refs)
            .filter(|(_, r)| **r > 0)
            .map(|(p, _)| p)
    }
}
