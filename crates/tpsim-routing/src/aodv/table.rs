//! The route table (RFC 3561 §6.2), the RREQ duplicate set (§6.5) and sequence number
//! arithmetic (§6.1).

use std::collections::BTreeMap;

use tpsim_core::SimTime;

use crate::Addr;

/// An ordered map: iteration order (and hence the order of messages and random draws) is
/// the order of the keys, the same in every run and with every Rust release (a `HashMap`'s
/// order depends on its hasher and table layout, which `std` does not promise to keep).
pub(crate) type Map<K, V> = BTreeMap<K, V>;

/// A hash map with a fixed, fast hasher (FxHash, from `rustc-hash`), for the precursor lists.
/// Its iteration order is the hasher's, so code that iterates one sorts the keys first (as
/// [`sorted_keys`] does for the route table): every order that reaches a message stays the key
/// order.
pub(crate) type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// The destinations of the routes of `t` that satisfy `keep`, in increasing order.
pub(crate) fn sorted_keys(t: &RouteTable, mut keep: impl FnMut(&Route) -> bool) -> Vec<Addr> {
    let mut keys: Vec<Addr> = t.values().filter(|r| keep(r)).map(|r| r.dst).collect();
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

/// One route table entry (§6.2), 32 bytes: two to a cache line. Its precursor list is kept
/// beside the table (`Aodv::precursors`), since few routes have one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Route {
    /// The destination (the table's key; `Addr::UNSPECIFIED` marks a free slot).
    pub dst: Addr,
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
    /// The route has carried data (a reason to send HELLOs, §6.9).
    pub data_used: bool,
    /// The time of this route's one live entry in the agent's expiry heap (`NEVER`: none);
    /// never later than `expiry`. Entries at other times are stale.
    pub filed: SimTime,
}

impl Route {
    /// A new, invalid entry for `dst` through `next_hop` with no known sequence number; the
    /// caller fills it in.
    pub const fn unknown(dst: Addr, next_hop: Addr) -> Route {
        Route {
            dst,
            next_hop,
            hops: 0,
            seq: 0,
            valid_seq: false,
            valid: false,
            expiry: SimTime::ZERO,
            data_used: false,
            filed: SimTime::NEVER,
        }
    }

    /// A valid route whose lifetime has not run out.
    #[inline]
    pub fn active(&self, now: SimTime) -> bool {
        self.valid && self.expiry > now
    }

    /// Files this route in the expiry heap if its `expiry` is now earlier than its live
    /// entry: call after every write that may move `expiry` earlier (a later expiry is
    /// re-filed lazily when the earlier entry comes up).
    #[inline]
    pub fn file_expiry(&mut self, heap: &mut ExpiryHeap) {
        if self.expiry < self.filed {
            self.filed = self.expiry;
            heap.push(std::cmp::Reverse((self.expiry, self.dst)));
        }
    }
}

/// Adds `a` to the precursor list of the route to `dst` (§6.2) unless already there. The
/// lists are kept beside the route table, and never empty.
pub(crate) fn add_precursor(lists: &mut HashMap<Addr, Vec<Addr>>, dst: Addr, a: Addr) {
    let list = lists.entry(dst).or_default();
    if !list.contains(&a) {
        list.push(a);
    }
}

/// An entry of an [`OpenTable`]: a fixed-size record that carries its own key, with one
/// value ([`Keyed::EMPTY`]) that marks a free slot.
pub(crate) trait Keyed: Copy {
    /// The key; never that of [`Keyed::EMPTY`] for a stored entry.
    type Key: Copy + Eq;
    /// A free slot.
    const EMPTY: Self;
    /// This entry's key, `None` for a free slot.
    fn key(&self) -> Option<Self::Key>;
    /// 32 well-mixed bits of `k` (the table uses the high ones).
    fn hash(k: Self::Key) -> u32;
}

/// Fibonacci hashing (Knuth, TAOCP vol. 3 §6.4): the product's high bits spread sequential
/// node addresses over the whole table.
#[inline]
fn fib_hash(x: u32) -> u32 {
    x.wrapping_mul(0x9E37_79B9)
}

/// A hash table of [`Keyed`] entries stored inline, with open addressing and linear probing
/// (Knuth, TAOCP vol. 3 §6.4, Algorithm L; deletion by backward shift, Algorithm R).
///
/// Why not `HashMap`: a `HashMap` lookup reads the control bytes, then the entry elsewhere:
/// two cache misses in the cold table of a node that a flood has just reached. Here the entry
/// sits at a slot computed from the key alone, and the table is at most half full, so a
/// lookup usually reads one cache line.
/// Iteration order is the table's layout: callers that act in a loop sort the keys first
/// ([`sorted_keys`]).
#[derive(Clone, Debug)]
pub(crate) struct OpenTable<T> {
    /// A power of two of slots (or none).
    slots: Vec<T>,
    len: usize,
    /// 32 − log2(slots.len()): the hash's high bits index the slots.
    shift: u32,
}

impl<T: Keyed> Default for OpenTable<T> {
    fn default() -> Self {
        OpenTable {
            slots: Vec::new(),
            len: 0,
            shift: 32,
        }
    }
}

impl<T: Keyed> OpenTable<T> {
    /// Entries stored.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn home(&self, k: T::Key) -> usize {
        (T::hash(k) >> self.shift) as usize
    }

    /// Where `k` is: `Ok(slot)` holding it, or `Err(free)`, the free slot that ends its probe
    /// run (`None` while the table has no slots).
    #[inline]
    fn probe(&self, k: T::Key) -> Result<usize, Option<usize>> {
        if self.slots.is_empty() {
            return Err(None);
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        loop {
            match self.slots[i].key() {
                None => return Err(Some(i)),
                Some(x) if x == k => return Ok(i),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    /// The slot holding `k`, if any.
    #[inline]
    fn find(&self, k: T::Key) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.probe(k).ok()
    }

    /// Asks the caches for the slot where a lookup of `k` starts (a hint, see
    /// [`tpsim_core::prefetch`]): the line it reads first, whether or not `k` is stored.
    #[inline]
    pub fn prefetch(&self, k: T::Key) {
        if !self.slots.is_empty() {
            tpsim_core::prefetch(&self.slots[self.home(k)], 1);
        }
    }

    /// The entry with key `k`.
    #[inline]
    pub fn get(&self, k: &T::Key) -> Option<&T> {
        self.find(*k).map(|i| &self.slots[i])
    }

    /// The entry with key `k`, to change (not its key).
    #[inline]
    pub fn get_mut(&mut self, k: &T::Key) -> Option<&mut T> {
        self.find(*k).map(|i| &mut self.slots[i])
    }

    /// Whether an entry has key `k`.
    pub fn contains_key(&self, k: &T::Key) -> bool {
        self.find(*k).is_some()
    }

    /// The entry with key `k`, inserting `make()` (whose key must be `k`) if there is none.
    #[inline]
    pub fn get_or_insert_with(&mut self, k: T::Key, make: impl FnOnce() -> T) -> &mut T {
        let i = match self.probe(k) {
            Ok(i) => i,
            Err(free) => {
                let e = make();
                debug_assert!(e.key() == Some(k), "an entry filed under another key");
                self.place(free, e)
            }
        };
        &mut self.slots[i]
    }

    /// Stores `e`, replacing the entry with its key if there is one.
    pub fn insert(&mut self, e: T) {
        let k = e.key().expect("a free slot is not an entry");
        match self.probe(k) {
            Ok(i) => self.slots[i] = e,
            Err(free) => {
                self.place(free, e);
            }
        }
    }

    /// Stores `e`, whose key is not in the table, in `free` (the slot [`OpenTable::probe`]
    /// found for it) unless the table must grow first; returns its slot.
    #[inline]
    fn place(&mut self, free: Option<usize>, e: T) -> usize {
        match free {
            Some(i) if 2 * (self.len + 1) <= self.slots.len() => {
                self.slots[i] = e;
                self.len += 1;
                i
            }
            _ => {
                self.grow();
                self.insert_new(e)
            }
        }
    }

    /// Stores `e`, whose key is not in the table and for which there is room; returns its
    /// slot.
    fn insert_new(&mut self, e: T) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(e.key().expect("an entry"));
        while self.slots[i].key().is_some() {
            i = (i + 1) & mask;
        }
        self.slots[i] = e;
        self.len += 1;
        i
    }

    /// Doubles the slots (at least 8) and files every entry again.
    #[cold]
    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(8);
        let old = std::mem::replace(&mut self.slots, vec![T::EMPTY; n]);
        self.shift = 32 - n.trailing_zeros();
        self.len = 0;
        for e in old {
            if e.key().is_some() {
                self.insert_new(e);
            }
        }
    }

    /// Removes and returns the entry with key `k`. The entries after it in its probe run move
    /// back so that every entry stays reachable from its home slot (Algorithm R).
    pub fn remove(&mut self, k: &T::Key) -> Option<T> {
        let mut hole = self.find(*k)?;
        let removed = std::mem::replace(&mut self.slots[hole], T::EMPTY);
        self.len -= 1;
        let mask = self.slots.len() - 1;
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let Some(key) = self.slots[i].key() else { break };
            // An entry may fill the hole unless its home lies cyclically in (hole, i].
            let home = self.home(key);
            let stays = if hole <= i {
                hole < home && home <= i
            } else {
                hole < home || home <= i
            };
            if !stays {
                self.slots[hole] = std::mem::replace(&mut self.slots[i], T::EMPTY);
                hole = i;
            }
        }
        Some(removed)
    }

    /// Every entry, in the table's order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter(|e| e.key().is_some())
    }
}

impl<T: Keyed> std::ops::Index<&T::Key> for OpenTable<T> {
    type Output = T;
    fn index(&self, k: &T::Key) -> &T {
        self.get(k).expect("no entry for the key")
    }
}

/// The route table: routes by destination.
pub(crate) type RouteTable = OpenTable<Route>;

impl Keyed for Route {
    type Key = Addr;
    const EMPTY: Route = Route::unknown(Addr::UNSPECIFIED, Addr::UNSPECIFIED);
    #[inline]
    fn key(&self) -> Option<Addr> {
        (self.dst != Addr::UNSPECIFIED).then_some(self.dst)
    }
    #[inline]
    fn hash(k: Addr) -> u32 {
        fib_hash(u32::from(k))
    }
}

/// A RREQ remembered for the duplicate check (§6.5): (originator, RREQ ID) until `until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SeenRreq {
    pub orig: Addr,
    pub id: u32,
    pub until: SimTime,
}

impl Keyed for SeenRreq {
    type Key = (Addr, u32);
    const EMPTY: SeenRreq = SeenRreq {
        orig: Addr::UNSPECIFIED,
        id: 0,
        until: SimTime::ZERO,
    };
    #[inline]
    fn key(&self) -> Option<(Addr, u32)> {
        (self.orig != Addr::UNSPECIFIED).then_some((self.orig, self.id))
    }
    #[inline]
    fn hash((orig, id): (Addr, u32)) -> u32 {
        fib_hash(u32::from(orig) ^ id.wrapping_mul(0x85EB_CA6B))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn route(dst: u8, seq: u32) -> Route {
        let mut r = Route::unknown(Addr::new(10, 0, 0, dst), Addr::new(10, 0, 0, 1));
        r.seq = seq;
        r
    }

    proptest! {
        /// Any sequence of inserts, removals and lookups leaves the table holding exactly what
        /// a `HashMap` given the same operations holds (probe runs that wrap around the end and
        /// backward-shift deletion included: 40 keys in tables of 8 to 128 slots), and a
        /// prefetch of any key, in a table in any state, changes nothing.
        #[test]
        fn open_table_agrees_with_a_hash_map(ops in proptest::collection::vec((0u8..3, 1u8..41, any::<u32>()), 0..400)) {
            let mut t = RouteTable::default();
            let mut m: std::collections::HashMap<Addr, u32> = Default::default();
            // A prefetch is a hint on any table, one without slots included.
            t.prefetch(Addr::new(10, 0, 0, 1));
            for (op, key, seq) in ops {
                let k = Addr::new(10, 0, 0, key);
                match op {
                    0 => {
                        t.insert(route(key, seq));
                        m.insert(k, seq);
                    }
                    1 => prop_assert_eq!(t.remove(&k).map(|r| r.seq), m.remove(&k)),
                    _ => {
                        let r = t.get_or_insert_with(k, || route(key, seq));
                        prop_assert_eq!(r.seq, *m.entry(k).or_insert(seq));
                    }
                }
                prop_assert_eq!(t.len(), m.len());
                for key in 1u8..41 {
                    let k = Addr::new(10, 0, 0, key);
                    t.prefetch(k);
                    prop_assert_eq!(t.get(&k).map(|r| r.seq), m.get(&k).copied());
                }
                let mut listed: Vec<Addr> = t.values().map(|r| r.dst).collect();
                listed.sort_unstable();
                let mut keys: Vec<Addr> = m.keys().copied().collect();
                keys.sort_unstable();
                prop_assert_eq!(listed, keys);
            }
        }
    }

    #[test]
    fn a_route_entry_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Route>(), 32);
        assert_eq!(std::mem::size_of::<SeenRreq>(), 16);
    }

    #[test]
    fn seen_rreqs_are_found_by_originator_and_id() {
        let mut t = OpenTable::<SeenRreq>::default();
        let o = Addr::new(10, 0, 0, 7);
        for id in 0..100 {
            t.insert(SeenRreq {
                orig: o,
                id,
                until: SimTime(id as u64),
            });
        }
        assert_eq!(t.len(), 100);
        assert_eq!(t.get(&(o, 42)).map(|e| e.until), Some(SimTime(42)));
        assert!(t.get(&(Addr::new(10, 0, 0, 8), 42)).is_none());
        assert!(t.remove(&(o, 42)).is_some());
        assert!(t.get(&(o, 42)).is_none());
        assert_eq!(t.get(&(o, 43)).map(|e| e.until), Some(SimTime(43)));
    }
}
