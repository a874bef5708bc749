//! The route table entry (RFC 3561 §6.2) and sequence number arithmetic (§6.1).

use std::collections::BTreeMap;

use tpsim_core::SimTime;

use crate::Addr;

/// An ordered map: iteration order (and hence the order of messages and random draws) is
/// the order of the keys, the same in every run and with every Rust release (a `HashMap`'s
/// order depends on its hasher and table layout, which `std` does not promise to keep).
pub(crate) type Map<K, V> = BTreeMap<K, V>;

/// A hash map with a fixed, fast hasher (FxHash, from `rustc-hash`) for the tables looked up
/// at every message (routes, RREQ duplicates): lookups cost one or two cache lines instead of
/// a B-tree descent. Its iteration order is the hasher's, so code that iterates one sorts the
/// keys first ([`sorted_keys`]): every order that reaches a message stays the key order.
pub(crate) type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// The keys of `m` that satisfy `keep`, in increasing order.
pub(crate) fn sorted_keys<K: Ord + Copy, V>(m: &HashMap<K, V>, mut keep: impl FnMut(&V) -> bool) -> Vec<K> {
    let mut keys: Vec<K> = m.iter().filter(|(_, v)| keep(v)).map(|(&k, _)| k).collect();
    keys.sort_unstable();
    keys
}

/// Route expiries, earliest first: (time, destination).
pub(crate) type ExpiryHeap = std::collections::BinaryHeap<std::cmp::Reverse<(SimTime, Addr)>>;

/// `a` is newer than `b` in the circular sequence number space: (a − b) as i32 > 0 (§6.1).
#[inline]
pub(crate) fn seq_newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `a` is at least as new as `b` (§6.1, signed 32-bit comparison).
#[inline]
pub(crate) fn seq_at_least(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// One route table entry (§6.2).
#[derive(Clone, Debug)]
pub(crate) struct Route {
    /// Next hop toward the destination.
    pub next_hop: Addr,
    /// Hop count to the destination.
    pub hops: u8,
    /// Destination sequence number.
    pub seq: u32,
    /// The "valid destination sequence number" flag.
    pub valid_seq: bool,
    /// Route state: valid (active while `expiry` is in the future) or invalid.
    pub valid: bool,
    /// Valid route: end of its lifetime. Invalid route: when it is deleted.
    pub expiry: SimTime,
    /// Neighbours that forward through us toward this destination (§6.2).
    pub precursors: Vec<Addr>,
    /// The route has carried data (a reason to send HELLOs, §6.9).
    pub data_used: bool,
    /// The time of this route's one live entry in the agent's expiry heap (`NEVER`: none);
    /// never later than `expiry`. Entries at other times are stale.
    pub filed: SimTime,
}

impl Route {
    /// A new, invalid entry through `next_hop` with no known sequence number; the caller
    /// fills it in.
    pub fn unknown(next_hop: Addr) -> Route {
        Route {
            next_hop,
            hops: 0,
            seq: 0,
            valid_seq: false,
            valid: false,
            expiry: SimTime::ZERO,
            precursors: Vec::new(),
            data_used: false,
            filed: SimTime::NEVER,
        }
    }

    /// A valid route whose lifetime has not run out.
    #[inline]
    pub fn active(&self, now: SimTime) -> bool {
        self.valid && self.expiry > now
    }

    /// Files this route (to `dst`) in the expiry heap if its `expiry` is now earlier than its
    /// live entry: call after every write that may move `expiry` earlier (a later expiry is
    /// re-filed lazily when the earlier entry comes up).
    #[inline]
    pub fn file_expiry(&mut self, dst: Addr, heap: &mut ExpiryHeap) {
        if self.expiry < self.filed {
            self.filed = self.expiry;
            heap.push(std::cmp::Reverse((self.expiry, dst)));
        }
    }

    /// Adds `a` to the precursor list unless already there.
    pub fn add_precursor(&mut self, a: Addr) {
        if !self.precursors.contains(&a) {
            self.precursors.push(a);
        }
    }
}
