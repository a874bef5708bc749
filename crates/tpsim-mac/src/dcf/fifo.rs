//! A first-in first-out queue whose first few entries live inline: the DCF's output events
//! (at most one or two per input, polled right away) then cost no separate heap buffer, which
//! in a large network is one cold cache line per reception.

use std::collections::VecDeque;

/// FIFO of `T` holding up to `N` entries inline and any more in a heap buffer (used only when
/// more than `N` entries wait at once).
#[derive(Clone, Debug)]
pub(crate) struct InlineFifo<T, const N: usize> {
    buf: [Option<T>; N],
    /// Index of the oldest inline entry.
    head: u8,
    /// Inline entries.
    len: u8,
    /// Entries pushed while the inline part was full, or while this was non-empty (so that
    /// every inline entry is older than every entry here).
    overflow: VecDeque<T>,
}

impl<T, const N: usize> InlineFifo<T, N> {
    /// An empty queue (no allocation).
    pub fn new() -> Self {
        InlineFifo {
            buf: std::array::from_fn(|_| None),
            head: 0,
            len: 0,
            overflow: VecDeque::new(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.overflow.is_empty()
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if (self.len as usize) < N && self.overflow.is_empty() {
            let i = (self.head as usize + self.len as usize) % N;
            self.buf[i] = Some(v);
            self.len += 1;
        } else {
            self.overflow.push_back(v);
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return self.overflow.pop_front();
        }
        let v = self.buf[self.head as usize].take();
        self.head = ((self.head as usize + 1) % N) as u8;
        self.len -= 1;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any sequence of pushes and pops gives the order of a plain `VecDeque`.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec(proptest::option::of(0u32..1000), 0..200)) {
            let mut f: InlineFifo<u32, 2> = InlineFifo::new();
            let mut r = VecDeque::new();
            for op in ops {
                match op {
                    Some(v) => {
                        f.push_back(v);
                        r.push_back(v);
                    }
                    None => prop_assert_eq!(f.pop_front(), r.pop_front()),
                }
                prop_assert_eq!(f.is_empty(), r.is_empty());
            }
            while let Some(v) = r.pop_front() {
                prop_assert_eq!(f.pop_front(), Some(v));
            }
            prop_assert_eq!(f.pop_front(), None);
        }
    }
}
