//! The receiver's duplicate-detection cache (IEEE 802.11-2020 §10.3.2.14).
//!
//! The standard keeps, per transmitter address, the sequence number (and fragment number) of
//! the most recent frame received from it, and rejects a frame with the Retry subfield set whose
//! tuple is in the cache. tpsim does not fragment, so an entry is (transmitter, sequence number).
//! The cache has a fixed number of entries (no allocation); when it is full, the oldest inserted
//! transmitter is evicted (round robin), which can only let a duplicate through, never drop a
//! new frame.

use crate::frame::MacAddr;

/// Entries of the cache: more transmitters than any station in a realistic neighbourhood
/// sends to it between two of its frames.
pub const DUP_CACHE_ENTRIES: usize = 64;

/// Fixed-size (transmitter, sequence number) cache.
#[derive(Clone, Debug)]
pub struct DupCache {
    entries: [(MacAddr, u16); DUP_CACHE_ENTRIES],
    len: usize,
    next_victim: usize,
}

impl Default for DupCache {
    fn default() -> Self {
        DupCache {
            entries: [(0, 0); DUP_CACHE_ENTRIES],
            len: 0,
            next_victim: 0,
        }
    }
}

impl DupCache {
    /// Whether a frame from `src` with sequence number `seq` and the Retry subfield `retry` is a
    /// duplicate; if not, records it as the latest frame from `src`.
    pub fn check_and_insert(&mut self, src: MacAddr, seq: u16, retry: bool) -> bool {
        if let Some(e) = self.entries[..self.len].iter_mut().find(|e| e.0 == src) {
            if retry && e.1 == seq {
                return true;
            }
            e.1 = seq;
            return false;
        }
        if self.len < DUP_CACHE_ENTRIES {
            self.entries[self.len] = (src, seq);
            self.len += 1;
        } else {
            self.entries[self.next_victim] = (src, seq);
            self.next_victim = (self.next_victim + 1) % DUP_CACHE_ENTRIES;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_retries_with_the_cached_sequence_are_duplicates() {
        let mut c = DupCache::default();
        assert!(!c.check_and_insert(7, 100, false));
        assert!(c.check_and_insert(7, 100, true));
        // Without the Retry bit a repeated sequence number is a new MSDU (after wrap-around).
        assert!(!c.check_and_insert(7, 100, false));
        assert!(!c.check_and_insert(7, 101, true));
        assert!(!c.check_and_insert(8, 101, true));
        assert!(c.check_and_insert(7, 101, true));
    }

    #[test]
    fn full_cache_evicts_round_robin() {
        let mut c = DupCache::default();
        for a in 0..DUP_CACHE_ENTRIES as u32 + 1 {
            assert!(!c.check_and_insert(a, 1, false));
        }
        // Transmitter 0 was evicted by the 65th; 1 is still there.
        assert!(!c.check_and_insert(0, 1, true));
        assert!(c.check_and_insert(2, 1, true));
    }
}
