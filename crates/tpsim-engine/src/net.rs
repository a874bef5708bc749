//! IP addressing and forwarding state: nodes, their interfaces (one IPv4 address each), their
//! route tables of prefix → (interface, next hop) and their bound ports.
//!
//! Addresses: link `i` is the subnet 10.(i / 256).(i % 256).0/24 with ends .1 and .2
//! ([`link_addr`]); radio `r` is 10.128.0.0/9 + r + 1 ([`crate::wifi::wifi_addr`]; radio `r`
//! is node `r`'s unless nodes have radios on several channels, see [`RadioMap`]).
//! Routes to radio nodes come from the ad hoc routing (or the static routes on the
//! connectivity graph), not from these tables: see `world/ip.rs`.

use std::net::Ipv4Addr;
use tpsim_scenario::topology::Paths;
use tpsim_scenario::Scenario;

/// Where an interface's packets go: one direction of a point-to-point link, or a node's radio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceRef {
    /// Point-to-point device `i` (link `i / 2`, direction `i % 2`).
    Link(u32),
    /// An 802.11 device (by radio index, see [`RadioMap`]).
    Radio(u32),
}

/// A route: destination prefix → outgoing interface (the next hop is the link's other end).
#[derive(Clone, Copy, Debug)]
struct Route {
    net: u32,
    mask: u32,
    iface: u32,
}

struct Node {
    ifaces: Vec<u32>,
    addrs: Vec<u32>,
    routes: Vec<Route>,
    /// (local port, transport endpoint).
    ports: Vec<(u16, u32)>,
    /// IPv4 identification of the last datagram sent (RFC 791 §3.2).
    ident: u16,
}

struct Interface {
    node: u32,
    addr: Ipv4Addr,
    device: DeviceRef,
}

/// Every node's interfaces, addresses, routes and ports.
pub struct Net {
    nodes: Vec<Node>,
    ifaces: Vec<Interface>,
}

/// Which node owns each radio, on which channel. Radios are numbered channel by channel
/// (channels in increasing order), in node order within a channel: with one radio per node
/// (the default), radio `r` is node `r`'s. A radio's index is its 802.11 address, its
/// address's host part ([`crate::wifi::wifi_addr`]) and the index of its ad hoc routing and
/// ARP instances.
#[derive(Clone, Debug, Default)]
pub struct RadioMap {
    node: Vec<u32>,
    channel: Vec<u32>,
    /// Per node, its radios in channel order.
    of_node: Vec<Vec<u32>>,
    /// Whether every node has one radio, all on one channel: then radio `r` is node `r`'s.
    identity: bool,
}

impl RadioMap {
    /// The radios of a scenario's `n` nodes: `channels[v]` lists node `v`'s channels (`None`:
    /// one radio per node on one channel).
    pub fn new(n: usize, channels: Option<&[Vec<u32>]>) -> RadioMap {
        let Some(channels) = channels else {
            return RadioMap {
                node: (0..n as u32).collect(),
                channel: vec![1; n],
                of_node: (0..n as u32).map(|v| vec![v]).collect(),
                identity: true,
            };
        };
        let mut all: Vec<u32> = channels.iter().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        let mut m = RadioMap {
            of_node: vec![Vec::new(); n],
            ..RadioMap::default()
        };
        for &c in &all {
            for (v, cs) in channels.iter().enumerate() {
                if cs.contains(&c) {
                    m.of_node[v].push(m.node.len() as u32);
                    m.node.push(v as u32);
                    m.channel.push(c);
                }
            }
        }
        m.identity = all.len() == 1 && m.node.len() == n;
        m
    }

    /// How many radios there are.
    pub fn len(&self) -> usize {
        self.node.len()
    }

    /// Whether there is no radio.
    pub fn is_empty(&self) -> bool {
        self.node.is_empty()
    }

    /// Whether radio `r` is node `r`'s for every node (one radio per node, one channel).
    #[inline]
    pub fn identity(&self) -> bool {
        self.identity
    }

    /// The node that owns radio `r`.
    #[inline]
    pub fn node(&self, r: u32) -> u32 {
        if self.identity {
            r
        } else {
            self.node[r as usize]
        }
    }

    /// The channel of radio `r`.
    pub fn channel(&self, r: u32) -> u32 {
        self.channel[r as usize]
    }

    /// The channel of every radio, by radio (`None` if all share one).
    pub fn channels(&self) -> Option<&[u32]> {
        (!self.identity).then_some(&self.channel)
    }

    /// Node `node`'s radios, in channel order.
    pub fn radios(&self, node: u32) -> &[u32] {
        &self.of_node[node as usize]
    }

    /// Node `node`'s radio on the channel of radio `peer` (the one that can reach it), if it
    /// has one.
    #[inline]
    pub fn toward(&self, node: u32, peer: u32) -> Option<u32> {
        if self.identity {
            return Some(node);
        }
        let c = *self.channel.get(peer as usize)?;
        self.of_node[node as usize]
            .iter()
            .copied()
            .find(|&r| self.channel[r as usize] == c)
    }

    /// Node `node`'s radio on channel `channel`, if it has one.
    pub fn on_channel(&self, node: u32, channel: u32) -> Option<u32> {
        self.of_node[node as usize]
            .iter()
            .copied()
            .find(|&r| self.channel[r as usize] == channel)
    }
}

/// The address of end `end` (0 or 1) of link `link`.
pub fn link_addr(link: u32, end: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, ((link >> 8) & 0xff) as u8, (link & 0xff) as u8, 1 + end)
}

impl Net {
    /// `n` nodes without interfaces.
    pub fn new(n: usize) -> Net {
        Net {
            nodes: (0..n)
                .map(|_| Node {
                    ifaces: Vec::new(),
                    addrs: Vec::new(),
                    routes: Vec::new(),
                    ports: Vec::new(),
                    ident: 0,
                })
                .collect(),
            ifaces: Vec::new(),
        }
    }

    /// Adds an interface with address `addr` on `node`, sending through `device`; returns its
    /// index.
    pub fn add_interface(&mut self, node: u32, addr: Ipv4Addr, device: DeviceRef) -> u32 {
        let iface = self.ifaces.len() as u32;
        self.ifaces.push(Interface { node, addr, device });
        let n = &mut self.nodes[node as usize];
        n.ifaces.push(iface);
        n.addrs.push(u32::from(addr));
        iface
    }

    /// The device behind interface `iface`.
    #[inline]
    pub fn device(&self, iface: u32) -> DeviceRef {
        self.ifaces[iface as usize].device
    }

    /// The address of interface `iface`.
    pub fn addr(&self, iface: u32) -> Ipv4Addr {
        self.ifaces[iface as usize].addr
    }

    /// The node that has address `addr`, if any (a linear search: for traces only).
    pub fn node_of_addr(&self, addr: Ipv4Addr) -> Option<u32> {
        self.ifaces.iter().find(|i| i.addr == addr).map(|i| i.node)
    }

    /// The node of interface `iface`.
    #[inline]
    pub fn node_of(&self, iface: u32) -> u32 {
        self.ifaces[iface as usize].node
    }

    /// `node`'s first interface (its radio on a wireless node without links), if any.
    #[inline]
    pub fn first_iface(&self, node: u32) -> Option<u32> {
        self.nodes[node as usize].ifaces.first().copied()
    }

    /// The address of `node`'s first interface (unspecified if it has none).
    pub fn primary_addr(&self, node: u32) -> Ipv4Addr {
        self.first_iface(node)
            .map(|i| self.addr(i))
            .unwrap_or(Ipv4Addr::UNSPECIFIED)
    }

    /// Every address of `node`, in interface order.
    pub fn addrs(&self, node: u32) -> Vec<Ipv4Addr> {
        self.nodes[node as usize]
            .addrs
            .iter()
            .map(|&a| Ipv4Addr::from(a))
            .collect()
    }

    /// The index of `addr` among `node`'s addresses (interface order).
    #[inline]
    pub fn addr_index(&self, node: u32, addr: Ipv4Addr) -> Option<usize> {
        self.nodes[node as usize]
            .addrs
            .iter()
            .position(|&a| a == u32::from(addr))
    }

    /// Whether `dst` is one of `node`'s addresses.
    #[inline]
    pub fn is_local(&self, node: u32, dst: Ipv4Addr) -> bool {
        self.nodes[node as usize].addrs.contains(&u32::from(dst))
    }

    /// Longest-prefix match in `node`'s table: the outgoing interface.
    #[inline]
    pub fn lookup(&self, node: u32, dst: Ipv4Addr) -> Option<u32> {
        let d = u32::from(dst);
        let mut best: Option<&Route> = None;
        for r in &self.nodes[node as usize].routes {
            if d & r.mask == r.net && best.is_none_or(|b| r.mask > b.mask) {
                best = Some(r);
            }
        }
        best.map(|r| r.iface)
    }

    /// Binds `port` on `node` to transport endpoint `ep`.
    pub fn bind(&mut self, node: u32, port: u16, ep: u32) {
        self.nodes[node as usize].ports.push((port, ep));
    }

    /// The endpoint bound to `port` on `node`.
    #[inline]
    pub fn endpoint_at(&self, node: u32, port: u16) -> Option<u32> {
        self.nodes[node as usize]
            .ports
            .iter()
            .find(|(p, _)| *p == port)
            .map(|&(_, ep)| ep)
    }

    /// The identification field of `node`'s next datagram.
    #[inline]
    pub fn next_ident(&mut self, node: u32) -> u16 {
        let n = &mut self.nodes[node as usize];
        n.ident = n.ident.wrapping_add(1);
        n.ident
    }

    /// Static shortest-path routes of a scenario's links: every node gets one /24 route per
    /// link subnet it can reach, through its own interface on a connected link, else through
    /// the first hop of the shortest path to the link's nearer end (ties: the link's first
    /// node). Link `i`'s interfaces must be `2i` (at its first node) and `2i + 1`.
    pub fn static_link_routes(&mut self, sc: &Scenario, paths: &Paths) {
        let iface_on = |node: u32, link: u32| -> u32 {
            if sc.links[link as usize].nodes[0] == node {
                2 * link
            } else {
                2 * link + 1
            }
        };
        // Only nodes with a link need routes to link subnets: the others reach nothing wired.
        for u in 0..self.nodes.len() as u32 {
            if self.nodes[u as usize]
                .ifaces
                .iter()
                .all(|&i| !matches!(self.device(i), DeviceRef::Link(_)))
            {
                continue;
            }
            let mut routes = Vec::with_capacity(sc.links.len());
            for (j, l) in sc.links.iter().enumerate() {
                let j = j as u32;
                let net = u32::from(link_addr(j, 0)) & 0xffff_ff00;
                let mine = if l.nodes.contains(&u) {
                    iface_on(u, j)
                } else {
                    let (d0, d1) = (paths.distance(u, l.nodes[0]), paths.distance(u, l.nodes[1]));
                    let target = if d1 < d0 { l.nodes[1] } else { l.nodes[0] };
                    match paths.next_hop(u, target) {
                        Some((link, _)) => iface_on(u, link),
                        None => continue,
                    }
                };
                routes.push(Route {
                    net,
                    mask: 0xffff_ff00,
                    iface: mine,
                });
            }
            // Connected routes and others in link order: deterministic, and all /24.
            self.nodes[u as usize].routes = routes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RadioMap;

    /// Radios are numbered channel by channel, in node order within a channel; each node
    /// reaches a peer radio by its own radio on the peer's channel.
    #[test]
    fn radios_are_numbered_channel_by_channel() {
        let m = RadioMap::new(4, Some(&[vec![1, 2], vec![1], vec![2], vec![2, 1]]));
        assert!(!m.identity());
        assert_eq!(m.len(), 6);
        let owners: Vec<(u32, u32)> = (0..6).map(|r| (m.node(r), m.channel(r))).collect();
        assert_eq!(owners, [(0, 1), (1, 1), (3, 1), (0, 2), (2, 2), (3, 2)]);
        assert_eq!(m.radios(3), [2, 5]);
        assert_eq!(m.toward(0, 4), Some(3), "node 0 reaches node 2's radio on channel 2");
        assert_eq!(m.toward(1, 4), None, "node 1 has no radio on channel 2");
        assert_eq!(m.toward(1, 99), None, "no such radio");
        assert_eq!(m.on_channel(3, 2), Some(5));
        assert_eq!(m.channels(), Some(&[1, 1, 1, 2, 2, 2][..]));
    }

    /// One radio per node on one channel (no `channels`, or the same channel everywhere):
    /// radio r is node r's.
    #[test]
    fn one_radio_per_node_is_the_identity() {
        for m in [
            RadioMap::new(3, None),
            RadioMap::new(3, Some(&[vec![6], vec![6], vec![6]])),
        ] {
            assert!(m.identity());
            assert_eq!((0..3).map(|r| m.node(r)).collect::<Vec<_>>(), [0, 1, 2]);
            assert_eq!(m.toward(2, 0), Some(2));
            assert_eq!(m.channels(), None);
        }
    }
}
