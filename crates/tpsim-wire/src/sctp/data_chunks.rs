//! [`DataChunks`]: the bounded list of DATA chunks of an [`SctpRepr`](super::SctpRepr).

use super::{DataChunk, MAX_DATA_CHUNKS};
use std::fmt;

/// Up to [`MAX_DATA_CHUNKS`] DATA chunks, in the order they are sent. Equality, hashing and
/// `Debug` look at the chunks held only (room beyond them may hold anything, so that a packet
/// can be emptied with [`clear`](Self::clear) without rewriting its room).
#[derive(Clone, Copy, Default)]
pub struct DataChunks {
    n: u8,
    chunks: [DataChunk; MAX_DATA_CHUNKS],
}

impl PartialEq for DataChunks {
    fn eq(&self, o: &DataChunks) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl Eq for DataChunks {}

impl std::hash::Hash for DataChunks {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for DataChunks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl DataChunks {
    /// No chunks (the `Default`), usable in constants.
    pub const EMPTY: DataChunks = DataChunks {
        n: 0,
        chunks: [DataChunk::EMPTY; MAX_DATA_CHUNKS],
    };

    /// Removes every chunk.
    pub fn clear(&mut self) {
        self.n = 0;
    }

    /// Appends a chunk; false (nothing added) when full.
    pub fn push(&mut self, c: DataChunk) -> bool {
        if self.n as usize == MAX_DATA_CHUNKS {
            return false;
        }
        self.chunks[self.n as usize] = c;
        self.n += 1;
        true
    }
    /// The chunks.
    pub fn as_slice(&self) -> &[DataChunk] {
        &self.chunks[..self.n as usize]
    }
    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.n as usize
    }
    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Whether no more fit.
    pub fn is_full(&self) -> bool {
        self.n as usize == MAX_DATA_CHUNKS
    }
}
