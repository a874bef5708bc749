//! MPR selection: the heuristic of RFC 3626 §8.3.1 as a pure function.

use std::collections::{BTreeMap, BTreeSet};

use super::config::{WILL_ALWAYS, WILL_NEVER};
use crate::Addr;

/// The MPR set chosen by the heuristic of RFC 3626 §8.3.1 (with MPR_COVERAGE of §16.1).
///
/// * `neighbours`: the symmetric 1-hop neighbours N with their willingness (0..=7).
/// * `two_hop`: for each neighbour, the 2-hop neighbours it reaches (from its HELLOs). Entries
///   that are themselves in `neighbours` are ignored (only *strict* 2-hop neighbours count);
///   the caller must already have left out its own address (§8.2.1). Keys not in
///   `neighbours` are ignored.
/// * `mpr_coverage`: MPR_COVERAGE ≥ 1; each 2-hop neighbour is covered by at least
///   min(MPR_COVERAGE, number of its willing neighbours) MPRs.
///
/// N2 is the set of strict 2-hop neighbours reachable through a neighbour whose willingness is
/// not [`WILL_NEVER`]. The steps:
/// 1. every neighbour with [`WILL_ALWAYS`] is an MPR;
/// 2. D(y) = number of strict 2-hop neighbours of y;
/// 3. neighbours that are the only (≤ MPR_COVERAGE) willing providers of some node of N2 are
///    MPRs;
/// 4. while some node of N2 is not covered enough, add the neighbour with the highest
///    willingness, then the largest reachability (uncovered N2 nodes it reaches), then the
///    largest D(y), then the lowest address;
/// 5. remove, in increasing order of willingness (then address), every MPR below
///    [`WILL_ALWAYS`] whose removal leaves all of N2 covered enough.
///
/// Neighbours with [`WILL_NEVER`] are never selected. Deterministic.
pub fn select_mpr(
    neighbours: &BTreeMap<Addr, u8>,
    two_hop: &BTreeMap<Addr, BTreeSet<Addr>>,
    mpr_coverage: u32,
) -> BTreeSet<Addr> {
    let k = mpr_coverage.max(1) as usize;
    let empty = BTreeSet::new();
    // Strict 2-hop neighbours reached by each neighbour.
    let strict = |y: &Addr| -> Vec<Addr> {
        two_hop
            .get(y)
            .unwrap_or(&empty)
            .iter()
            .filter(|x| !neighbours.contains_key(x))
            .copied()
            .collect()
    };
    // §8.3.1: D(y), over all strict 2-hop neighbours of y.
    let degree: BTreeMap<Addr, usize> = neighbours.keys().map(|y| (*y, strict(y).len())).collect();
    // Willing neighbours and what they reach; N2 with the providers of each node.
    let reach: BTreeMap<Addr, Vec<Addr>> = neighbours
        .iter()
        .filter(|(_, w)| **w != WILL_NEVER)
        .map(|(y, _)| (*y, strict(y)))
        .collect();
    let mut providers: BTreeMap<Addr, Vec<Addr>> = BTreeMap::new();
    for (y, xs) in &reach {
        for x in xs {
            providers.entry(*x).or_default().push(*y);
        }
    }
    let need: BTreeMap<Addr, usize> = providers.iter().map(|(x, ps)| (*x, ps.len().min(k))).collect();
    let mut covered: BTreeMap<Addr, usize> = providers.keys().map(|x| (*x, 0)).collect();
    let mut mpr = BTreeSet::new();
    let add = |y: Addr, mpr: &mut BTreeSet<Addr>, covered: &mut BTreeMap<Addr, usize>| {
        if mpr.insert(y) {
            for x in reach.get(&y).into_iter().flatten() {
                *covered.get_mut(x).unwrap() += 1;
            }
        }
    };

    // Step 1: WILL_ALWAYS neighbours.
    for (y, w) in neighbours {
        if *w == WILL_ALWAYS {
            add(*y, &mut mpr, &mut covered);
        }
    }
    // Step 3: the only providers (with MPR_COVERAGE k: the at most k providers) of a node.
    for ps in providers.values() {
        if ps.len() <= k {
            for y in ps {
                add(*y, &mut mpr, &mut covered);
            }
        }
    }
    // Step 4: greedy by (willingness, reachability, D(y)), lowest address on ties.
    loop {
        let mut best: Option<(u8, usize, usize, Addr)> = None;
        for (y, xs) in &reach {
            if mpr.contains(y) {
                continue;
            }
            let r = xs.iter().filter(|x| covered[*x] < need[*x]).count();
            if r == 0 {
                continue;
            }
            let key = (neighbours[y], r, degree[y]);
            if best.is_none_or(|(w, br, d, _)| key > (w, br, d)) {
                best = Some((key.0, key.1, key.2, *y));
            }
        }
        match best {
            Some((_, _, _, y)) => add(y, &mut mpr, &mut covered),
            None => break,
        }
    }
    // Step 5: drop redundant MPRs, lowest willingness first.
    let mut order: Vec<(u8, Addr)> = mpr.iter().map(|y| (neighbours[y], *y)).collect();
    order.sort();
    for (w, y) in order {
        if w >= WILL_ALWAYS {
            continue;
        }
        let xs = &reach[&y];
        if xs.iter().all(|x| covered[x] > need[x]) {
            mpr.remove(&y);
            for x in xs {
                *covered.get_mut(x).unwrap() -= 1;
            }
        }
    }
    mpr
}
