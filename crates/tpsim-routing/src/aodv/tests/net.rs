//! A small network harness in the manner of smoltcp's `tests/netsim.rs`: N [`Aodv`] nodes on an
//! undirected graph, a fixed per-hop delay, a (time, sequence) event heap. A broadcast reaches
//! every neighbour; a unicast reaches the named node only if it is adjacent, otherwise the
//! sender's `on_link_failure` (control) or `on_data_link_failure` (data, which a local repair
//! may keep) is called at once (the MAC's retry limit, without its delay).
//! Control messages go through `emit`/`parse`, so the wire format is exercised too.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};

use super::*;

fn addr(i: usize) -> Addr {
    Addr::from(0x0a00_0001 + i as u32)
}

fn idx(a: Addr) -> usize {
    (u32::from(a) - 0x0a00_0001) as usize
}

enum Ev {
    Ctrl {
        to: usize,
        from: usize,
        ttl: u8,
        bytes: Vec<u8>,
    },
    Data {
        to: usize,
        from: usize,
        pkt: u64,
    },
    Timer(usize),
}

struct Net {
    nodes: Vec<Aodv<u64>>,
    links: BTreeSet<(usize, usize)>,
    now: SimTime,
    delay: SimDuration,
    heap: BinaryHeap<Reverse<(SimTime, u64)>>,
    evs: HashMap<u64, Ev>,
    seq: u64,
    timer_at: Vec<Option<SimTime>>,
    /// Packet id → (source, destination).
    packets: HashMap<u64, (usize, usize)>,
    /// Packet id → hops travelled so far.
    hops: HashMap<u64, u8>,
    delivered: Vec<u64>,
    dropped: Vec<u64>,
    /// Lost on a broken link (the engine's LinkBroken flush).
    lost: Vec<u64>,
    found: Vec<(usize, Addr)>,
    failed: Vec<(usize, Addr)>,
    link_broken: Vec<(usize, Addr)>,
    rerr_sent: u64,
    ctrl_sent: u64,
}

impl Net {
    fn new(n: usize, edges: &[(usize, usize)], cfg: &AodvConfig, seed: u64) -> Net {
        let mut net = Net {
            nodes: (0..n)
                .map(|i| Aodv::new(cfg.clone(), addr(i), rng(seed, i as u64)))
                .collect(),
            links: BTreeSet::new(),
            now: SimTime::ZERO,
            delay: SimDuration::from_millis(1),
            heap: BinaryHeap::new(),
            evs: HashMap::new(),
            seq: 0,
            timer_at: vec![None; n],
            packets: HashMap::new(),
            hops: HashMap::new(),
            delivered: Vec::new(),
            dropped: Vec::new(),
            lost: Vec::new(),
            found: Vec::new(),
            failed: Vec::new(),
            link_broken: Vec::new(),
            rerr_sent: 0,
            ctrl_sent: 0,
        };
        for &(u, v) in edges {
            net.add_link(u, v);
        }
        net
    }

    fn add_link(&mut self, u: usize, v: usize) {
        self.links.insert((u.min(v), u.max(v)));
    }

    fn remove_link(&mut self, u: usize, v: usize) {
        self.links.remove(&(u.min(v), u.max(v)));
    }

    fn adjacent(&self, u: usize, v: usize) -> bool {
        self.links.contains(&(u.min(v), u.max(v)))
    }

    fn neighbours(&self, u: usize) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&v| v != u && self.adjacent(u, v))
            .collect()
    }

    /// Hop distances from `s` (BFS), `usize::MAX` when unreachable.
    fn bfs(&self, s: usize) -> Vec<usize> {
        let mut d = vec![usize::MAX; self.nodes.len()];
        d[s] = 0;
        let mut q = VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            for v in self.neighbours(u) {
                if d[v] == usize::MAX {
                    d[v] = d[u] + 1;
                    q.push_back(v);
                }
            }
        }
        d
    }

    fn schedule(&mut self, at: SimTime, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq)));
        self.evs.insert(self.seq, ev);
    }

    fn send_data(&mut self, from: usize, next_hop: Addr, pkt: u64) {
        let to = idx(next_hop);
        if self.adjacent(from, to) {
            self.schedule(self.now + self.delay, Ev::Data { to, from, pkt });
        } else {
            let dst = addr(self.packets[&pkt].1);
            let hops = self.hops.get(&pkt).copied().unwrap_or(0);
            if let Some(p) = self.nodes[from].on_data_link_failure(self.now, next_hop, dst, hops, pkt) {
                self.lost.push(p);
            }
        }
    }

    /// Drains node `i`'s outputs and re-arms its timer.
    fn pump(&mut self, i: usize) {
        loop {
            let mut progress = false;
            while let Some(o) = self.nodes[i].poll_transmit(self.now) {
                progress = true;
                self.ctrl_sent += 1;
                if o.msg.kind() == MessageKind::Rerr {
                    self.rerr_sent += 1;
                }
                let mut bytes = Vec::new();
                o.msg.emit(&mut bytes);
                assert_eq!(bytes.len(), o.msg.wire_len());
                match o.dest {
                    LinkDest::Broadcast => {
                        for v in self.neighbours(i) {
                            let ev = Ev::Ctrl {
                                to: v,
                                from: i,
                                ttl: o.ttl,
                                bytes: bytes.clone(),
                            };
                            self.schedule(self.now + self.delay, ev);
                        }
                    }
                    LinkDest::Unicast(a) => {
                        let v = idx(a);
                        if self.adjacent(i, v) {
                            let ev = Ev::Ctrl {
                                to: v,
                                from: i,
                                ttl: o.ttl,
                                bytes,
                            };
                            self.schedule(self.now + self.delay, ev);
                        } else {
                            let is_rrep = o.msg.kind() == MessageKind::Rrep;
                            self.nodes[i].on_link_failure(self.now, a, is_rrep);
                        }
                    }
                }
            }
            while let Some(e) = self.nodes[i].poll_event() {
                progress = true;
                match e {
                    AodvEvent::Release { packet, next_hop } => self.send_data(i, next_hop, packet),
                    AodvEvent::Drop { packet, .. } => self.dropped.push(packet),
                    AodvEvent::RouteFound { dst, .. } => self.found.push((i, dst)),
                    AodvEvent::DiscoveryFailed { dst } => self.failed.push((i, dst)),
                    AodvEvent::LinkBroken { next_hop } => self.link_broken.push((i, next_hop)),
                }
            }
            if !progress {
                break;
            }
        }
        if let Some(t) = self.nodes[i].poll_timeout() {
            let t = t.max(self.now);
            if self.timer_at[i] != Some(t) {
                self.timer_at[i] = Some(t);
                self.schedule(t, Ev::Timer(i));
            }
        }
    }

    /// Node `src` sends data packet `pkt` to `dst`.
    fn originate(&mut self, src: usize, dst: usize, pkt: u64) {
        self.packets.insert(pkt, (src, dst));
        let r = self.nodes[src].route_output(self.now, None, addr(src), addr(dst), pkt);
        match r {
            RouteResult::Forward { next_hop, packet } => self.send_data(src, next_hop, packet),
            RouteResult::Buffered => {}
            RouteResult::Drop { packet, .. } => self.dropped.push(packet),
        }
        self.pump(src);
    }

    /// Processes events up to and including `until`.
    fn run_until(&mut self, until: SimTime) {
        while let Some(&Reverse((t, s))) = self.heap.peek() {
            if t > until {
                break;
            }
            self.heap.pop();
            self.now = t;
            let ev = self.evs.remove(&s).expect("event");
            match ev {
                Ev::Timer(i) => {
                    if self.timer_at[i] != Some(t) {
                        continue;
                    }
                    self.timer_at[i] = None;
                    self.nodes[i].on_timeout(t);
                    self.pump(i);
                }
                Ev::Ctrl { to, from, ttl, bytes } => {
                    let msg = Message::parse(&bytes).expect("parse");
                    self.nodes[to].on_message(t, addr(from), ttl, &msg);
                    self.pump(to);
                }
                Ev::Data { to, from, pkt } => {
                    let (src, dst) = self.packets[&pkt];
                    *self.hops.entry(pkt).or_insert(0) += 1;
                    if to == dst {
                        self.nodes[to].on_data_delivered(t, addr(from), addr(src));
                        self.delivered.push(pkt);
                    } else {
                        match self.nodes[to].route_output(t, Some(addr(from)), addr(src), addr(dst), pkt) {
                            RouteResult::Forward { next_hop, packet } => self.send_data(to, next_hop, packet),
                            // Only during a local repair (§6.12); a Release or Drop follows.
                            RouteResult::Buffered => {}
                            RouteResult::Drop { packet, .. } => self.dropped.push(packet),
                        }
                    }
                    self.pump(to);
                }
            }
        }
        self.now = self.now.max(until);
    }

    /// Runs until `pkt` is delivered, dropped or lost, or `limit` passes; then `settle` more.
    fn run_for_packet(&mut self, pkt: u64, limit: SimDuration, settle: SimDuration) -> bool {
        let end = self.now + limit;
        let step = SimDuration::from_millis(1);
        while self.now < end {
            let next = self.now + step;
            self.run_until(next);
            if self.delivered.contains(&pkt) {
                let s = self.now + settle;
                self.run_until(s);
                return true;
            }
            if self.dropped.contains(&pkt) || self.lost.contains(&pkt) {
                return false;
            }
        }
        false
    }
}

/// A random geometric graph (unit square, radius `r`) that is connected, or a random tree plus
/// extra edges.
fn random_graph(r: &mut RngStream, geometric: bool) -> (usize, Vec<(usize, usize)>) {
    let n = 10 + (r.next_u64() % 21) as usize;
    loop {
        let mut edges = Vec::new();
        if geometric {
            let radius = 0.25 + 0.15 * r.uniform();
            let pts: Vec<(f64, f64)> = (0..n).map(|_| (r.uniform(), r.uniform())).collect();
            for u in 0..n {
                for v in u + 1..n {
                    let (dx, dy) = (pts[u].0 - pts[v].0, pts[u].1 - pts[v].1);
                    if dx * dx + dy * dy <= radius * radius {
                        edges.push((u, v));
                    }
                }
            }
        } else {
            for v in 1..n {
                edges.push(((r.next_u64() % v as u64) as usize, v));
            }
            for _ in 0..n / 3 {
                let u = (r.next_u64() % n as u64) as usize;
                let v = (r.next_u64() % n as u64) as usize;
                if u != v && !edges.contains(&(u.min(v), u.max(v))) {
                    edges.push((u.min(v), u.max(v)));
                }
            }
        }
        let net = Net::new(n, &edges, &AodvConfig::rfc(), 0);
        if net.bfs(0).iter().all(|&d| d != usize::MAX) {
            return (n, edges);
        }
    }
}

/// Configuration of the network tests: RFC defaults, no HELLOs (no mobility here), jitter
/// `jitter` against the harness's 1 ms per hop.
fn net_cfg(jitter: SimDuration) -> AodvConfig {
    let mut c = AodvConfig::rfc();
    c.hello = false;
    c.broadcast_jitter = jitter;
    c
}

/// Over `graphs` random connected graphs, one discovery from a random source to every other
/// node; checks every route is at most `max_excess` hops longer than BFS; returns (routes equal
/// to BFS, routes found, worst excess over BFS).
fn discovery_quality(graphs: u64, cfg: &AodvConfig, seed: u64, max_excess: usize) -> (usize, usize, usize) {
    let mut r = rng(seed, 999);
    let (mut equal, mut total, mut worst) = (0, 0, 0);
    for g in 0..graphs {
        let (n, edges) = random_graph(&mut r, g % 2 == 0);
        let mut net = Net::new(n, &edges, cfg, seed * 1000 + g);
        let src = (r.next_u64() % n as u64) as usize;
        let dist = net.bfs(src);
        let mut pkt = 0;
        for dst in (0..n).filter(|&d| d != src) {
            pkt += 1;
            net.originate(src, dst, pkt);
            let ok = net.run_for_packet(pkt, SimDuration::from_secs(30), SimDuration::from_millis(200));
            assert!(ok, "graph {g}: packet {src} -> {dst} not delivered");
            let hops = net.nodes[src].route_hops(net.now, addr(dst)).expect("route") as usize;
            assert!(
                hops <= dist[dst] + max_excess,
                "graph {g}: route {src} -> {dst} has {hops} hops, BFS {}",
                dist[dst]
            );
            worst = worst.max(hops - dist[dst]);
            total += 1;
            if hops == dist[dst] {
                equal += 1;
            }
        }
        assert!(net.failed.is_empty() && net.dropped.is_empty() && net.lost.is_empty());
    }
    (equal, total, worst)
}

#[test]
fn routes_found_are_near_shortest_on_random_graphs() {
    // One discovery per (source, destination) over 120 random connected graphs of 10–30 nodes
    // (half random geometric, half random trees plus extra edges); broadcast jitter 1 ms, as long
    // as the 1 ms per hop. Only the first copy of an RREQ is used (§6.5), so a longer path whose
    // jitters happen to be shorter can win; every route is at most one hop longer than BFS.
    let cfg = net_cfg(SimDuration::from_millis(1));
    let (equal, total, worst) = discovery_quality(120, &cfg, 1, 1);
    let frac = equal as f64 / total as f64;
    println!("AODV routes equal to BFS hop count (jitter 1 ms): {equal}/{total} = {frac:.4} (worst excess {worst})");
    assert!(frac >= 0.95, "only {frac:.4} of the routes are shortest");
}

#[test]
fn routes_found_with_ns2_jitter() {
    // The same with ns-2's 10 ms jitter, ten times the per-hop delay: the race between RREQ
    // copies is looser, a route may be two hops longer than BFS.
    let cfg = net_cfg(SimDuration::from_millis(10));
    let (equal, total, worst) = discovery_quality(120, &cfg, 2, 2);
    let frac = equal as f64 / total as f64;
    println!("AODV routes equal to BFS hop count (jitter 10 ms): {equal}/{total} = {frac:.4} (worst excess {worst})");
    assert!(frac >= 0.90, "only {frac:.4} of the routes are shortest");
}

#[test]
fn routes_are_found_with_ns3s_reverse_routes() {
    // With ns-3's reverse routes (`rreq_leaves_reverse_route_invalid`) the later discoveries of
    // a source meet the expired reverse routes of its earlier ones, which its RREQs leave
    // invalid: the RREPs still travel them and every packet is delivered over a near-shortest
    // route.
    let mut cfg = net_cfg(SimDuration::from_millis(1));
    cfg.rreq_leaves_reverse_route_invalid = true;
    let (equal, total, _) = discovery_quality(40, &cfg, 3, 1);
    assert!(equal as f64 >= 0.95 * total as f64, "{equal}/{total} shortest");
}

#[test]
fn chain_discovery_and_delivery() {
    // 0 - 1 - 2 - 3 - 4: the expanding ring needs TTL 5 (1, 3, then 5) to reach node 4.
    let cfg = net_cfg(SimDuration::from_millis(10));
    let mut net = Net::new(5, &[(0, 1), (1, 2), (2, 3), (3, 4)], &cfg, 3);
    net.originate(0, 4, 1);
    assert!(net.run_for_packet(1, SimDuration::from_secs(10), SimDuration::ZERO));
    assert_eq!(net.nodes[0].route_hops(net.now, addr(4)), Some(4));
    assert_eq!(net.nodes[0].stats().rreq_originated, 3);
    assert_eq!(net.found, [(0, addr(4))]);
    // Every node on the way knows both directions.
    for i in 1..4 {
        assert_eq!(net.nodes[i].lookup(net.now, addr(4)), Some(addr(i + 1)));
        assert_eq!(net.nodes[i].lookup(net.now, addr(0)), Some(addr(i - 1)));
    }
    assert_eq!(net.nodes[2].stats().rrep_forwarded, 1);
}

#[test]
fn broken_link_triggers_rerr_and_rediscovery_of_alternative_path() {
    // 0 - 1 - 2 - 3 is the shortest path; 1 - 4 - 5 - 3 the alternative.
    let cfg = net_cfg(SimDuration::from_millis(1));
    let edges = [(0, 1), (1, 2), (2, 3), (1, 4), (4, 5), (5, 3)];
    let mut net = Net::new(6, &edges, &cfg, 5);
    net.originate(0, 3, 1);
    assert!(net.run_for_packet(1, SimDuration::from_secs(10), SimDuration::from_millis(100)));
    assert_eq!(net.nodes[0].route_hops(net.now, addr(3)), Some(3));
    assert_eq!(net.nodes[1].lookup(net.now, addr(3)), Some(addr(2)));
    let seq_before = net.nodes[0].routes[&addr(3)].seq;

    // The link 2 - 3 disappears; the next packet dies at node 2 (§6.11 case (i)).
    net.remove_link(2, 3);
    let rerr_before = net.rerr_sent;
    net.originate(0, 3, 2);
    assert!(!net.run_for_packet(2, SimDuration::from_secs(1), SimDuration::ZERO));
    assert_eq!(net.lost, [2]);
    let t = net.now + SimDuration::from_millis(50);
    net.run_until(t);
    assert!(net.link_broken.contains(&(2, addr(3))));
    // RERR 2 → 1 → 0, both unicast to the single precursor.
    assert_eq!(net.rerr_sent - rerr_before, 2);
    assert_eq!(net.nodes[0].lookup(net.now, addr(3)), None);
    assert_eq!(net.nodes[1].lookup(net.now, addr(3)), None);
    assert_eq!(net.nodes[0].routes[&addr(3)].seq, seq_before.wrapping_add(1));

    // The next packet triggers a new discovery, which finds 0 - 1 - 4 - 5 - 3.
    net.originate(0, 3, 3);
    assert!(net.run_for_packet(3, SimDuration::from_secs(10), SimDuration::from_millis(100)));
    assert_eq!(net.nodes[0].route_hops(net.now, addr(3)), Some(4));
    assert_eq!(net.nodes[1].lookup(net.now, addr(3)), Some(addr(4)));
    assert_eq!(net.found.len(), 2);
    assert!(
        net.nodes[3].own_seq() >= seq_before.wrapping_add(1),
        "§6.1: destination caught up"
    );
}

#[test]
fn unreachable_destination_fails_after_retries() {
    // Two components: 0 - 1 and 2 - 3.
    let cfg = net_cfg(SimDuration::from_millis(10));
    let mut net = Net::new(4, &[(0, 1), (2, 3)], &cfg, 6);
    net.originate(0, 3, 1);
    net.run_until(SimTime::from_secs_f64(60.0));
    assert_eq!(net.failed, [(0, addr(3))]);
    assert_eq!(net.dropped, [1]);
    // Node 1 forwarded each of the 7 RREQs with TTL > 1 (all but the first, TTL 1).
    assert_eq!(net.nodes[0].stats().rreq_originated, 7);
    assert_eq!(net.nodes[1].stats().rreq_forwarded, 6);
}

#[test]
fn local_repair_near_the_destination_is_invisible_to_the_source() {
    // RFC 3561 §6.12 with ns-2's rule: 0 - 1 - 2 - 3 - 4 is the route, 3 - 5 - 4 a detour. The
    // link 3 - 4 breaks under a packet that has travelled 3 hops with 1 to go: node 3 repairs
    // it, the source never floods again, and delivery goes on.
    let mut cfg = AodvConfig::ns2();
    cfg.broadcast_jitter = SimDuration::from_millis(1);
    let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (3, 5), (5, 4)];
    let mut net = Net::new(6, &edges, &cfg, 7);
    net.originate(0, 4, 1);
    assert!(net.run_for_packet(1, SimDuration::from_secs(10), SimDuration::from_millis(100)));
    assert_eq!(net.nodes[0].route_hops(net.now, addr(4)), Some(4));
    assert_eq!(net.nodes[3].lookup(net.now, addr(4)), Some(addr(4)));
    let rreq_src = net.nodes[0].stats().rreq_originated;
    let rerr_before = net.rerr_sent;

    net.remove_link(3, 4);
    net.originate(0, 4, 2);
    assert!(net.run_for_packet(2, SimDuration::from_secs(1), SimDuration::from_millis(200)));
    assert!(net.link_broken.contains(&(3, addr(4))));
    let s3 = net.nodes[3].stats();
    assert_eq!(
        (s3.local_repairs, s3.local_repairs_succeeded, s3.local_repairs_failed),
        (1, 1, 0)
    );
    assert_eq!(s3.rreq_originated, 1);
    assert_eq!(net.nodes[3].lookup(net.now, addr(4)), Some(addr(5)));
    // The new route is one hop longer: an RERR with N goes 3 → 2 → 1 → 0 and deletes nothing.
    assert_eq!(net.rerr_sent - rerr_before, 3);
    assert_eq!(net.nodes[2].stats().rerr_forwarded, 1);
    assert_eq!(net.nodes[1].stats().rerr_forwarded, 1);
    for (i, nh) in [(0, 1), (1, 2), (2, 3)] {
        assert_eq!(net.nodes[i].lookup(net.now, addr(4)), Some(addr(nh)), "node {i}");
    }

    // More packets flow over the repaired route; the source never started another discovery.
    for pkt in 3..8 {
        net.originate(0, 4, pkt);
        assert!(net.run_for_packet(pkt, SimDuration::from_secs(1), SimDuration::from_millis(10)));
    }
    assert_eq!(net.nodes[0].stats().rreq_originated, rreq_src);
    assert_eq!(net.nodes[0].stats().discoveries_started, 1);
    assert_eq!(net.found, [(0, addr(4))]);
    assert!(net.lost.is_empty() && net.dropped.is_empty() && net.failed.is_empty());
    assert_eq!(net.delivered, [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn failed_local_repair_falls_back_to_rerr_and_source_rediscovery() {
    // RFC 3561 §6.12: the repair finds nothing (4 is cut off from 3's two-hop neighbourhood),
    // the packet is dropped and the RERR reaches the source as after a plain break (§6.11),
    // whose next packet rediscovers the far detour 0 - 6 - 7 - 8 - 9 - 4.
    let mut cfg = AodvConfig::ns2();
    cfg.broadcast_jitter = SimDuration::from_millis(1);
    let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 6), (6, 7), (7, 8), (8, 9), (9, 4)];
    let mut net = Net::new(10, &edges, &cfg, 8);
    net.originate(0, 4, 1);
    assert!(net.run_for_packet(1, SimDuration::from_secs(10), SimDuration::from_millis(100)));
    assert_eq!(net.nodes[0].lookup(net.now, addr(4)), Some(addr(1)));

    net.remove_link(3, 4);
    net.originate(0, 4, 2);
    assert!(!net.run_for_packet(2, SimDuration::from_secs(1), SimDuration::ZERO));
    assert_eq!(net.dropped, [2]);
    assert!(net.lost.is_empty(), "kept by the repair, then dropped");
    let t = net.now + SimDuration::from_millis(50);
    net.run_until(t);
    let s3 = net.nodes[3].stats();
    assert_eq!((s3.local_repairs, s3.local_repairs_failed), (1, 1));
    assert_eq!(net.nodes[0].lookup(net.now, addr(4)), None);

    net.originate(0, 4, 3);
    assert!(net.run_for_packet(3, SimDuration::from_secs(10), SimDuration::from_millis(100)));
    assert_eq!(net.nodes[0].lookup(net.now, addr(4)), Some(addr(6)));
    assert_eq!(net.nodes[0].stats().discoveries_started, 2);
}
