//! A small network harness for whole-protocol tests (in the manner of smoltcp's
//! `tests/netsim.rs`): N [`Olsr`] nodes on an undirected graph, a heap of (time, seq) events,
//! every broadcast reaching each neighbour after a fixed 1 ms. After every input the node's
//! `poll_transmit` is drained and its `poll_timeout` scheduled. Every packet goes through
//! `emit` and `parse`, so the wire format is exercised too.
//!
//! The tests check, over 100 seeded random geometric graphs of 10–30 nodes, that after three
//! TC intervals (plus the initial jitter) every route has the BFS hop count and a next hop on
//! a shortest path (RFC 3626 §10); that only MPRs forward TCs (§3.4.1); and that after a node
//! disappears the routes converge to the new BFS once the hold times have passed (§7.1, §9.5).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashSet, VecDeque};
use std::rc::Rc;

use tpsim_core::{Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};

use super::*;

const DELAY: SimDuration = SimDuration::from_millis(1);

fn addr_of(i: usize) -> Addr {
    Addr::new(10, 0, (i >> 8) as u8, (i & 0xff) as u8 + 1)
}
fn index_of(a: Addr) -> usize {
    let o = a.octets();
    ((o[2] as usize) << 8) | (o[3] as usize - 1)
}
fn secs(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

enum Ev {
    Timer(usize),
    Deliver { to: usize, from: usize, pkt: Rc<Packet> },
}

/// One transmission, as the harness saw it.
pub(super) struct Tx {
    pub time: SimTime,
    pub node: usize,
    pub pkt: Rc<Packet>,
}

pub(super) struct Net {
    pub nodes: Vec<Olsr>,
    pub adj: Vec<BTreeSet<usize>>,
    pub alive: Vec<bool>,
    pub now: SimTime,
    heap: BinaryHeap<Reverse<(SimTime, u64)>>,
    events: std::collections::HashMap<u64, Ev>,
    seq: u64,
    timer_at: Vec<Option<SimTime>>,
    /// Transmissions at or after `record_from` are kept in `log`.
    pub record_from: SimTime,
    pub log: Vec<Tx>,
}

impl Net {
    pub fn new(cfg: OlsrConfig, adj: Vec<BTreeSet<usize>>, seed: u64) -> Net {
        let n = adj.len();
        let nodes = (0..n)
            .map(|i| {
                let rng = RngStream::new(StreamKey {
                    seed,
                    run: 0,
                    kind: OwnerKind::Node,
                    owner_id: i as u64,
                    module: Module::Routing,
                });
                Olsr::new(cfg, addr_of(i), rng)
            })
            .collect();
        let mut net = Net {
            nodes,
            adj,
            alive: vec![true; n],
            now: SimTime::ZERO,
            heap: BinaryHeap::new(),
            events: Default::default(),
            seq: 0,
            timer_at: vec![None; n],
            record_from: SimTime::NEVER,
            log: Vec::new(),
        };
        for i in 0..n {
            net.after_input(i);
        }
        net
    }

    fn push(&mut self, t: SimTime, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq)));
        self.events.insert(self.seq, ev);
    }

    pub fn after_input(&mut self, i: usize) {
        let now = self.now;
        while let Some(p) = self.nodes[i].poll_transmit(now) {
            let mut bytes = Vec::new();
            p.emit(&mut bytes);
            assert_eq!(bytes.len(), p.wire_len());
            assert!(p.wire_len() <= MAX_PACKET_LEN || p.messages.len() == 1);
            let parsed = Packet::parse(&bytes).expect("own packet parses");
            assert_eq!(parsed, p, "emit/parse round trip");
            let pkt = Rc::new(parsed);
            if now >= self.record_from {
                self.log.push(Tx {
                    time: now,
                    node: i,
                    pkt: pkt.clone(),
                });
            }
            let to: Vec<usize> = self.adj[i].iter().copied().collect();
            for j in to {
                self.push(
                    now + DELAY,
                    Ev::Deliver {
                        to: j,
                        from: i,
                        pkt: pkt.clone(),
                    },
                );
            }
        }
        if let Some(t) = self.nodes[i].poll_timeout() {
            let t = t.max(now);
            if self.timer_at[i] != Some(t) {
                self.timer_at[i] = Some(t);
                self.push(t, Ev::Timer(i));
            }
        }
    }

    /// Runs every event up to and including `end`.
    pub fn run_until(&mut self, end: SimTime) {
        while let Some(&Reverse((t, s))) = self.heap.peek() {
            if t > end {
                break;
            }
            self.heap.pop();
            let ev = self.events.remove(&s).unwrap();
            self.now = t;
            match ev {
                Ev::Timer(i) => {
                    if !self.alive[i] || self.timer_at[i] != Some(t) {
                        continue;
                    }
                    self.timer_at[i] = None;
                    self.nodes[i].on_timeout(t);
                    self.after_input(i);
                }
                Ev::Deliver { to, from, pkt } => {
                    if !self.alive[to] || !self.adj[from].contains(&to) {
                        continue;
                    }
                    self.nodes[to].on_packet(t, addr_of(from), &pkt);
                    self.after_input(to);
                }
            }
        }
        self.now = end;
    }

    /// Takes node `k` out: its edges disappear and it never runs again.
    pub fn remove_node(&mut self, k: usize) {
        self.alive[k] = false;
        let nbrs: Vec<usize> = self.adj[k].iter().copied().collect();
        for j in nbrs {
            self.adj[j].remove(&k);
        }
        self.adj[k].clear();
    }

    /// Hop distances from `s` over the current graph.
    pub fn bfs(&self, s: usize) -> Vec<Option<u32>> {
        let mut d = vec![None; self.adj.len()];
        d[s] = Some(0);
        let mut q = VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            for &v in &self.adj[u] {
                if d[v].is_none() {
                    d[v] = Some(d[u].unwrap() + 1);
                    q.push_back(v);
                }
            }
        }
        d
    }

    /// Every live node's route to every other node has the BFS hop count and a next hop that
    /// is adjacent and on a shortest path; unreachable and removed nodes have no route.
    pub fn check_routes(&self) -> Result<(), String> {
        let n = self.adj.len();
        let dist: Vec<Vec<Option<u32>>> = (0..n).map(|s| self.bfs(s)).collect();
        for s in (0..n).filter(|s| self.alive[*s]) {
            for d in (0..n).filter(|d| *d != s) {
                let want = if self.alive[d] { dist[s][d] } else { None };
                let got = self.nodes[s].route(addr_of(d));
                match (got, want) {
                    (None, None) => {}
                    (Some((nh, h)), Some(k)) => {
                        let j = index_of(nh);
                        if h != k || !self.adj[s].contains(&j) || dist[j][d] != Some(k - 1) {
                            return Err(format!(
                                "node {s} -> {d}: route via {j} in {h} hops, BFS {k} (next hop adjacent: {}, \
                                 its distance {:?})",
                                self.adj[s].contains(&j),
                                dist[j][d]
                            ));
                        }
                    }
                    (g, w) => return Err(format!("node {s} -> {d}: route {g:?}, BFS {w:?}")),
                }
            }
        }
        Ok(())
    }
}

/// A connected random geometric graph on the unit square with 10–30 nodes (seeded).
fn random_graph(seed: u64) -> Vec<BTreeSet<usize>> {
    let mut rng = RngStream::new(StreamKey {
        seed,
        run: 0,
        kind: OwnerKind::Scenario,
        owner_id: 0,
        module: Module::Placement,
    });
    let n = 10 + (rng.uniform() * 21.0) as usize;
    // Radius between 1.2 and 1.8 times the connectivity threshold sqrt(ln n / (π n)).
    let c = rng.uniform_range(1.2, 1.8);
    let r = c * (libm::log(n as f64) / (std::f64::consts::PI * n as f64)).sqrt();
    loop {
        let pos: Vec<(f64, f64)> = (0..n).map(|_| (rng.uniform(), rng.uniform())).collect();
        let mut adj = vec![BTreeSet::new(); n];
        for i in 0..n {
            for j in i + 1..n {
                let (dx, dy) = (pos[i].0 - pos[j].0, pos[i].1 - pos[j].1);
                if dx * dx + dy * dy <= r * r {
                    adj[i].insert(j);
                    adj[j].insert(i);
                }
            }
        }
        let net_dist = bfs_plain(&adj, 0);
        if net_dist.iter().all(|d| d.is_some()) {
            return adj;
        }
    }
}

fn bfs_plain(adj: &[BTreeSet<usize>], s: usize) -> Vec<Option<u32>> {
    let mut d = vec![None; adj.len()];
    d[s] = Some(0);
    let mut q = VecDeque::from([s]);
    while let Some(u) = q.pop_front() {
        for &v in &adj[u] {
            if d[v].is_none() {
                d[v] = Some(d[u].unwrap() + 1);
                q.push_back(v);
            }
        }
    }
    d
}

fn graph_from_edges(n: usize, edges: &[(usize, usize)]) -> Vec<BTreeSet<usize>> {
    let mut adj = vec![BTreeSet::new(); n];
    for &(a, b) in edges {
        adj[a].insert(b);
        adj[b].insert(a);
    }
    adj
}

/// Time by which routes must be right: 3 TC intervals plus the initial jitter.
fn converged_at(cfg: &OlsrConfig) -> SimTime {
    SimTime::ZERO + SimDuration(3 * cfg.tc_interval.0 + cfg.max_jitter.0)
}

// RFC 3626 §10: after the first TCs have flooded, every node has a shortest-hop route to every
// other node, whose next hop is a neighbour on a shortest path.
#[test]
fn routes_match_bfs_on_100_random_geometric_graphs() {
    let cfg = OlsrConfig::rfc();
    let mut diameters = Vec::new();
    let mut early_failures = 0;
    for g in 0..100u64 {
        let adj = random_graph(1000 + g);
        let n = adj.len();
        let mut net = Net::new(cfg, adj, g);
        // Harness self-check: before any TC can have been flooded (first TCs with selectors
        // come after ~4.5 s), routes beyond 2 hops are missing wherever the diameter is > 2.
        net.run_until(secs(4.0));
        early_failures += net.check_routes().is_err() as u32;
        net.run_until(converged_at(&cfg));
        if let Err(e) = net.check_routes() {
            panic!("graph {g} ({n} nodes): {e}");
        }
        let diam = (0..n)
            .filter_map(|s| net.bfs(s).into_iter().flatten().max())
            .max()
            .unwrap();
        diameters.push(diam);
    }
    // The graphs are genuinely multi-hop, and the check does catch missing routes.
    let deep = diameters.iter().filter(|d| **d > 2).count() as u32;
    eprintln!("diameters {diameters:?}; {early_failures} graphs incomplete at 4 s");
    assert!(diameters.iter().any(|d| *d >= 5), "{diameters:?}");
    assert_eq!(early_failures, deep);
}

// RFC 3626 §3.4.1: only nodes selected as MPR by some neighbour retransmit TCs, and each node
// retransmits a given message at most once (duplicate set, §3.4).
#[test]
fn only_mprs_forward_tcs() {
    let cfg = OlsrConfig::rfc();
    let mut total_fwd = 0;
    let mut total_orig = 0;
    for g in 0..10u64 {
        let adj = random_graph(5000 + g);
        let n = adj.len();
        let mut net = Net::new(cfg, adj, 77 + g);
        // Let the MPR sets settle (selector tuples of early, transient MPR choices time out
        // after NEIGHB_HOLD_TIME), then watch 20 s.
        let t1 = secs(25.0);
        net.run_until(t1);
        net.check_routes().unwrap();
        let before: Vec<OlsrStats> = net.nodes.iter().map(Olsr::stats).collect();
        net.record_from = t1;
        net.run_until(secs(45.0));
        let is_mpr: Vec<bool> = (0..n)
            .map(|i| net.adj[i].iter().any(|&j| net.nodes[j].mpr_set().contains(&addr_of(i))))
            .collect();
        let mut seen = HashSet::new();
        for tx in &net.log {
            for m in &tx.pkt.messages {
                if m.originator == addr_of(tx.node) {
                    continue;
                }
                // A forwarded message: TC only, by an MPR, at most once per node.
                assert!(
                    matches!(m.body, Body::Tc(_)),
                    "graph {g}: node {} forwarded a HELLO",
                    tx.node
                );
                assert!(
                    is_mpr[tx.node],
                    "graph {g}: non-MPR node {} forwarded at {}",
                    tx.node, tx.time
                );
                assert!(m.hop_count >= 1 && m.ttl < TC_TTL);
                assert!(
                    seen.insert((tx.node, m.originator, m.seq)),
                    "graph {g}: forwarded twice"
                );
            }
        }
        for i in 0..n {
            let fwd = net.nodes[i].stats().tc_forwarded - before[i].tc_forwarded;
            if !is_mpr[i] {
                assert_eq!(fwd, 0, "graph {g}: non-MPR node {i} forwarded {fwd} TCs");
            }
            total_fwd += fwd;
            total_orig += net.nodes[i].stats().tc_originated - before[i].tc_originated;
        }
        net.check_routes().unwrap();
    }
    // MPR flooding saves retransmissions compared with classic flooding (every node once).
    assert!(total_orig > 0 && total_fwd > 0);
}

// A star: the centre is every leaf's only MPR; leaves have no MPR selectors, so they neither
// originate nor forward TCs (§9.3, §3.4.1); leaf-to-leaf routes come from the 2-hop set.
#[test]
fn star_centre_is_the_only_mpr() {
    let cfg = OlsrConfig::rfc();
    let adj = graph_from_edges(6, &[(0, 1), (0, 2), (0, 3), (0, 4), (0, 5)]);
    let mut net = Net::new(cfg, adj, 3);
    net.run_until(secs(30.0));
    net.check_routes().unwrap();
    for leaf in 1..6 {
        assert_eq!(
            net.nodes[leaf].mpr_set().iter().copied().collect::<Vec<_>>(),
            vec![addr_of(0)]
        );
        assert_eq!(net.nodes[leaf].stats().tc_originated, 0);
        assert_eq!(net.nodes[leaf].stats().tc_forwarded, 0);
        assert_eq!(net.nodes[leaf].route(addr_of(leaf % 5 + 1)), Some((addr_of(0), 2)));
    }
    assert!(net.nodes[0].mpr_set().is_empty());
    assert_eq!(net.nodes[0].mpr_selectors().count(), 5);
    assert!(net.nodes[0].stats().tc_originated >= 4);
}

// A chain 0-1-…-7: every interior node is an MPR, routes follow the chain (§10 step 3 with
// topology tuples up to 7 hops).
#[test]
fn chain_routes_through_every_node() {
    let cfg = OlsrConfig::rfc();
    let edges: Vec<(usize, usize)> = (0..7).map(|i| (i, i + 1)).collect();
    let mut net = Net::new(cfg, graph_from_edges(8, &edges), 5);
    net.run_until(converged_at(&cfg));
    net.check_routes().unwrap();
    assert_eq!(net.nodes[0].route(addr_of(7)), Some((addr_of(1), 7)));
    assert_eq!(net.nodes[7].route(addr_of(0)), Some((addr_of(6), 7)));
    for i in 1..7 {
        assert!(net.nodes[i - 1].mpr_set().contains(&addr_of(i)) || net.nodes[i + 1].mpr_set().contains(&addr_of(i)));
    }
}

// RFC 3626 §7.1 / §8.5 / §9.5 / §10: after a node disappears (all its links gone), its
// neighbours lose the links after NEIGHB_HOLD_TIME, the MPR sets and TCs change, stale
// topology tuples go with a newer ANSN or after TOP_HOLD_TIME, and the routes match the BFS of
// the remaining graph (no route where it is now disconnected).
#[test]
fn routes_converge_after_node_removal() {
    let cfg = OlsrConfig::rfc();
    let mut disconnected = 0;
    for g in 0..20u64 {
        let adj = random_graph(9000 + g);
        let n = adj.len();
        let mut net = Net::new(cfg, adj, 300 + g);
        let t1 = converged_at(&cfg) + SimDuration::from_secs(2);
        net.run_until(t1);
        net.check_routes().unwrap();
        // Remove the node with the most neighbours (most disruptive).
        let k = (0..n).max_by_key(|i| (net.adj[*i].len(), *i)).unwrap();
        net.remove_node(k);
        let survivors: Vec<usize> = (0..n).filter(|i| *i != k).collect();
        let d = net.bfs(survivors[0]);
        if survivors.iter().any(|i| d[*i].is_none()) {
            disconnected += 1;
        }
        let settle = SimDuration(cfg.neighb_hold_time.0 + cfg.top_hold_time.0 + 2 * cfg.tc_interval.0 + 1_000_000_000);
        net.run_until(t1 + settle);
        if let Err(e) = net.check_routes() {
            panic!("graph {g} ({n} nodes) after removing {k}: {e}");
        }
        for s in survivors {
            assert_eq!(net.nodes[s].route(addr_of(k)), None);
        }
    }
    eprintln!("{disconnected} of 20 graphs disconnected by the removal");
}

// RFC 3626 §13: a link-layer failure report drops the link (and routes over it) at once; if the
// link really is gone, the other side follows after NEIGHB_HOLD_TIME and routes converge.
#[test]
fn link_failure_notification_reroutes_immediately() {
    let cfg = OlsrConfig::rfc();
    // A square 0-1-2-3-0 plus a tail 2-4.
    let adj = graph_from_edges(5, &[(0, 1), (1, 2), (2, 3), (3, 0), (2, 4)]);
    let mut net = Net::new(cfg, adj, 11);
    net.run_until(secs(20.0));
    net.check_routes().unwrap();
    // Cut 0-1 and tell node 0's MAC-level feedback.
    net.adj[0].remove(&1);
    net.adj[1].remove(&0);
    let t = net.now;
    net.nodes[0].on_link_failure(t, addr_of(1));
    net.after_input(0);
    assert_eq!(net.nodes[0].link_status(addr_of(1)), Some(LinkStatus::Lost));
    assert_eq!(net.nodes[0].lookup(addr_of(1)), Some(addr_of(3)), "via 3-2-1 at once");
    assert_eq!(net.nodes[0].route(addr_of(1)).map(|r| r.1), Some(3));
    net.run_until(secs(50.0));
    net.check_routes().unwrap();
}
