//! Shortest paths on the wired topology (hop count), used both to validate flows (reachable
//! destination, path MTU) and by the engine to install static routes.

use crate::Link;

/// Next hops on hop-count shortest paths between every pair of nodes that have a link (the
/// others reach only themselves): memory grows with the square of the linked nodes, not of
/// all nodes, so a large wireless or mostly unlinked scenario costs nothing here.
///
/// Ties are broken deterministically: a breadth-first search from each destination visits
/// a node's links in the order they are listed in the scenario, and the first discovery wins.
pub struct Paths {
    /// The linked nodes, sorted: a node's index among them is its place in this list (a
    /// search, not a table over all nodes, so that a huge `nodes.count` costs nothing).
    linked: Vec<u32>,
    /// Number of linked nodes.
    m: usize,
    /// `next[src * m + dst]` (linked-node indices) = (link index, neighbour node) of the first
    /// hop, if reachable.
    next: Vec<Option<(u32, u32)>>,
    /// `dist[src * m + dst]` = hop count, `u32::MAX` if unreachable.
    dist: Vec<u32>,
}

impl Paths {
    /// Bytes the tables of a topology with `linked` nodes that have links take.
    pub fn table_bytes(linked: u64) -> u64 {
        linked.saturating_mul(linked).saturating_mul(12)
    }

    /// The number of distinct nodes that `links` join (node indices below `count`).
    pub fn linked_nodes(count: u32, links: &[Link]) -> u64 {
        let mut seen = std::collections::BTreeSet::new();
        for l in links {
            for v in l.nodes {
                if v < count {
                    seen.insert(v);
                }
            }
        }
        seen.len() as u64
    }

    /// Computes all next hops for `count` nodes joined by `links` (node indices must be in
    /// range; validation checks that first).
    pub fn compute(count: u32, links: &[Link]) -> Paths {
        let n = count as usize;
        let mut nodes: Vec<u32> = links.iter().flat_map(|l| l.nodes).filter(|&v| v < count).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let idx = |v: u32| nodes.binary_search(&v).expect("a linked node");
        let m = nodes.len();
        let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); m];
        for (i, l) in links.iter().enumerate() {
            let [a, b] = l.nodes;
            if (a as usize) < n && (b as usize) < n && a != b {
                adj[idx(a)].push((i as u32, b));
                adj[idx(b)].push((i as u32, a));
            }
        }
        let mut next = vec![None; m * m];
        let mut dist = vec![u32::MAX; m * m];
        let mut seen = vec![false; m];
        let mut queue = std::collections::VecDeque::with_capacity(m);
        for dst in 0..m {
            seen.fill(false);
            seen[dst] = true;
            dist[dst * m + dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(u) = queue.pop_front() {
                for &(link, v) in &adj[u] {
                    let vi = idx(v);
                    if !seen[vi] {
                        seen[vi] = true;
                        // v reaches dst through u over `link`.
                        next[vi * m + dst] = Some((link, nodes[u]));
                        dist[vi * m + dst] = dist[u * m + dst] + 1;
                        queue.push_back(vi);
                    }
                }
            }
        }
        Paths {
            linked: nodes,
            m,
            next,
            dist,
        }
    }

    /// The table slot of (`src`, `dst`), if both have links.
    fn slot(&self, src: u32, dst: u32) -> Option<usize> {
        let s = self.linked.binary_search(&src).ok()?;
        let d = self.linked.binary_search(&dst).ok()?;
        Some(s * self.m + d)
    }

    /// (link index, neighbour) of the first hop from `src` towards `dst`.
    pub fn next_hop(&self, src: u32, dst: u32) -> Option<(u32, u32)> {
        self.slot(src, dst).and_then(|i| self.next[i])
    }

    /// The links of the path from `src` to `dst`, in order (empty if unreachable or equal).
    pub fn path_links(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut u = src;
        while u != dst {
            match self.next_hop(u, dst) {
                Some((l, v)) => {
                    out.push(l);
                    u = v;
                }
                None => return Vec::new(),
            }
            if out.len() > self.m {
                return Vec::new();
            }
        }
        out
    }

    /// Hop count from `src` to `dst` (`u32::MAX` if unreachable).
    pub fn distance(&self, src: u32, dst: u32) -> u32 {
        if src == dst {
            return 0;
        }
        self.slot(src, dst).map(|i| self.dist[i]).unwrap_or(u32::MAX)
    }

    /// Whether `dst` can be reached from `src`.
    pub fn reachable(&self, src: u32, dst: u32) -> bool {
        src == dst || self.next_hop(src, dst).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without links every node reaches only itself, at distance 0, as in the full tables.
    #[test]
    fn no_links_means_only_self_is_reachable() {
        let p = Paths::compute(1000, &[]);
        assert!(p.next.is_empty() && p.dist.is_empty());
        for (a, b) in [(0, 0), (999, 999), (0, 999), (5, 6)] {
            assert_eq!(p.reachable(a, b), a == b);
            assert_eq!(p.distance(a, b), if a == b { 0 } else { u32::MAX });
            assert_eq!(p.next_hop(a, b), None);
            assert!(p.path_links(a, b).is_empty());
        }
    }
}
