//! Shortest paths on the wired topology (hop count), used both to validate flows (reachable
//! destination, path MTU) and by the engine to install static routes.

use crate::Link;

/// Next hops on hop-count shortest paths between every pair of nodes.
///
/// Ties are broken deterministically: a breadth-first search from each destination visits
/// a node's links in the order they are listed in the scenario, and the first discovery wins.
pub struct Paths {
    n: usize,
    /// `next[src * n + dst]` = (link index, neighbour) of the first hop, if reachable.
    next: Vec<Option<(u32, u32)>>,
    /// `dist[src * n + dst]` = hop count, `u32::MAX` if unreachable.
    dist: Vec<u32>,
}

impl Paths {
    /// Computes all next hops for `count` nodes joined by `links` (node indices must be in
    /// range; validation checks that first). Without links (a wireless-only scenario) the
    /// tables stay empty instead of N² entries of "unreachable".
    pub fn compute(count: u32, links: &[Link]) -> Paths {
        let n = count as usize;
        if links.is_empty() {
            return Paths {
                n,
                next: Vec::new(),
                dist: Vec::new(),
            };
        }
        let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (i, l) in links.iter().enumerate() {
            let [a, b] = l.nodes;
            if (a as usize) < n && (b as usize) < n && a != b {
                adj[a as usize].push((i as u32, b));
                adj[b as usize].push((i as u32, a));
            }
        }
        let mut next = vec![None; n * n];
        let mut dist = vec![u32::MAX; n * n];
        let mut seen = vec![false; n];
        let mut queue = std::collections::VecDeque::with_capacity(n);
        for dst in 0..n {
            seen.fill(false);
            seen[dst] = true;
            dist[dst * n + dst] = 0;
            queue.clear();
            queue.push_back(dst as u32);
            while let Some(u) = queue.pop_front() {
                for &(link, v) in &adj[u as usize] {
                    if !seen[v as usize] {
                        seen[v as usize] = true;
                        // v reaches dst through u over `link`.
                        next[v as usize * n + dst] = Some((link, u));
                        dist[v as usize * n + dst] = dist[u as usize * n + dst] + 1;
                        queue.push_back(v);
                    }
                }
            }
        }
        Paths { n, next, dist }
    }

    /// (link index, neighbour) of the first hop from `src` towards `dst`.
    pub fn next_hop(&self, src: u32, dst: u32) -> Option<(u32, u32)> {
        self.next.get(src as usize * self.n + dst as usize).copied().flatten()
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
            if out.len() > self.n {
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
        self.dist
            .get(src as usize * self.n + dst as usize)
            .copied()
            .unwrap_or(u32::MAX)
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
