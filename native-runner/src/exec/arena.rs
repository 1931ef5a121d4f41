//! The CPU executor's tensor allocator: best-fit over one buffer, after a GPU caching
//! allocator's block pool (PyTorch `c10/cuda/CUDACachingAllocator.cpp`: `kMinBlockSize = 512`,
//! every request rounded up to it; `get_free_block` takes the smallest free block that fits,
//! lowest address on ties; a larger block is split and a freed block merges with its free
//! neighbours). Ours differs: one pool over one buffer, where PyTorch keeps small (≤ 1 MiB) and
//! large pools carved from 2 MiB and 20 MiB or larger segments per stream. Tensors live in the
//! buffer while they live, so what the run needed is the arena's **high-water mark**: the end
//! of the highest block it ever handed out, rounding and fragmentation included — a
//! measurement of this run, not the ledger's sum.
//!
//! Every block's first word holds its tensor's tag while the tensor lives; a reader that finds
//! another tag has caught two live tensors sharing bytes (an allocator bug), and the run fails.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

/// Every block is a multiple of this many bytes (PyTorch's `kMinBlockSize`).
pub const BLOCK_BYTES: usize = 512;

/// Words (4 bytes) per block.
const BLOCK_WORDS: usize = BLOCK_BYTES / 4;

/// A block handed out: its first byte and its length, both multiples of [`BLOCK_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Offset of the first byte.
    pub offset: usize,
    /// Bytes.
    pub len: usize,
}

/// The placement policy alone (no memory): free blocks and the high-water mark. The arena runs
/// it over its buffer; the validation's prediction runs it over the predicted timeline.
#[derive(Debug, Default)]
pub struct BestFit {
    /// Free blocks by offset → length; neighbours are always merged.
    free: BTreeMap<usize, usize>,
    /// Bytes in all.
    capacity: usize,
    /// End of the highest block handed out since the last reset, bytes.
    high_water: usize,
}

impl BestFit {
    /// `bytes` bytes, all free.
    #[must_use]
    pub fn new(bytes: usize) -> BestFit {
        let mut free = BTreeMap::new();
        free.insert(0, bytes);
        BestFit {
            free,
            capacity: bytes,
            high_water: 0,
        }
    }

    /// The smallest free block below the top that holds `bytes` (the lowest such on ties), else
    /// the free space at the top (where a caching allocator would add a segment), split; `None`
    /// when nothing is large enough.
    pub fn alloc(&mut self, bytes: u64) -> Option<Block> {
        let len = usize::try_from(rounded(bytes)).ok()?;
        let capacity = self.capacity;
        let (&offset, &free_len) = self
            .free
            .iter()
            .filter(|&(_, &l)| l >= len)
            .min_by_key(|&(&o, &l)| (o + l == capacity, l, o))?;
        self.free.remove(&offset);
        if free_len > len {
            self.free.insert(offset + len, free_len - len);
        }
        self.high_water = self.high_water.max(offset + len);
        Some(Block { offset, len })
    }

    /// Returns `block` and merges it with its free neighbours.
    pub fn free(&mut self, block: Block) {
        let (mut offset, mut len) = (block.offset, block.len);
        if let Some((&before, &before_len)) = self.free.range(..offset).next_back() {
            if before + before_len == offset {
                self.free.remove(&before);
                offset = before;
                len += before_len;
            }
        }
        if let Some(after_len) = self.free.remove(&(offset + len)) {
            len += after_len;
        }
        self.free.insert(offset, len);
    }

    /// The high-water mark, bytes.
    #[must_use]
    pub fn high_water_bytes(&self) -> u64 {
        self.high_water as u64
    }
}

/// A best-fit arena over one host buffer, shared by the worker threads of a run. Its free space
/// at the top counts as unbounded in the choice of block, so the size of the buffer does not
/// change where tensors go.
#[derive(Default)]
pub struct Arena {
    /// The memory, as words so that threads write their blocks' tags without `unsafe`.
    words: Vec<AtomicU32>,
    list: Mutex<BestFit>,
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("bytes", &(self.words.len() * 4))
            .field("high_water_bytes", &self.high_water_bytes())
            .finish_non_exhaustive()
    }
}

/// `bytes` rounded up to whole blocks (at least one).
#[must_use]
pub fn rounded(bytes: u64) -> u64 {
    bytes.max(1).div_ceil(BLOCK_BYTES as u64) * BLOCK_BYTES as u64
}

impl Arena {
    /// Empties the arena to `bytes` (rounded up to whole blocks) and grows its buffer to hold
    /// them (written now, so that its pages are resident before a run's clock starts, as a
    /// caching allocator's pool is after its first step).
    pub fn reset(&mut self, bytes: usize) {
        let words = bytes.div_ceil(BLOCK_BYTES) * BLOCK_WORDS;
        if self.words.len() < words {
            self.words.resize_with(words, || AtomicU32::new(0));
        }
        *self.list.get_mut().unwrap_or_else(PoisonError::into_inner) = BestFit::new(words * 4);
    }

    /// [`BestFit::alloc`] under the arena's lock.
    pub fn alloc(&self, bytes: u64) -> Option<Block> {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .alloc(bytes)
    }

    /// [`BestFit::free`] under the arena's lock.
    pub fn free(&self, block: Block) {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .free(block);
    }

    /// Writes `tag` into the first word of `block` and `value` into its second.
    pub fn write(&self, block: Block, tag: u32, value: u32) {
        let w = block.offset / 4;
        self.words[w].store(tag, Ordering::Release);
        self.words[w + 1].store(value, Ordering::Release);
    }

    /// The tag in the first word of `block`.
    #[must_use]
    pub fn tag(&self, block: Block) -> u32 {
        self.words[block.offset / 4].load(Ordering::Acquire)
    }

    /// The high-water mark since the last reset, bytes.
    #[must_use]
    pub fn high_water_bytes(&self) -> u64 {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .high_water_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_splits_merges_and_marks_the_high_water() {
        let mut a = Arena::default();
        a.reset(8 * BLOCK_BYTES);
        let x = a.alloc(1).expect("x");
        let y = a.alloc(2 * BLOCK_BYTES as u64).expect("y");
        let z = a.alloc(BLOCK_BYTES as u64 + 1).expect("z");
        assert_eq!(
            (x.offset, x.len),
            (0, BLOCK_BYTES),
            "one byte takes a block"
        );
        assert_eq!((y.offset, z.offset), (BLOCK_BYTES, 3 * BLOCK_BYTES));
        assert_eq!(a.high_water_bytes(), 5 * BLOCK_BYTES as u64);
        // Freeing y leaves a two-block hole; a one-block request takes the hole, not the
        // three-block tail (best fit), and the high-water mark stays.
        a.free(y);
        let w = a.alloc(10).expect("w");
        assert_eq!(w.offset, BLOCK_BYTES);
        assert_eq!(a.high_water_bytes(), 5 * BLOCK_BYTES as u64);
        // A three-block request fits no hole left of the tail: fragmentation raises the mark.
        let v = a.alloc(3 * BLOCK_BYTES as u64).expect("v");
        assert_eq!(v.offset, 5 * BLOCK_BYTES);
        assert_eq!(a.high_water_bytes(), 8 * BLOCK_BYTES as u64);
        assert!(
            a.alloc(1).is_some(),
            "the one-block hole at 2 is still free"
        );
        assert!(a.alloc(1).is_none(), "full");
        // Everything freed merges back into one block.
        for b in [x, w, z, v] {
            a.free(b);
        }
        a.free(Block {
            offset: 2 * BLOCK_BYTES,
            len: BLOCK_BYTES,
        });
        assert_eq!(
            a.alloc(8 * BLOCK_BYTES as u64).map(|b| b.offset),
            Some(0),
            "merged whole"
        );
    }

    #[test]
    fn tags_stay_with_their_blocks() {
        let mut a = Arena::default();
        a.reset(4 * BLOCK_BYTES);
        let x = a.alloc(100).expect("x");
        let y = a.alloc(100).expect("y");
        a.write(x, 7, 1);
        a.write(y, 9, 2);
        assert_eq!((a.tag(x), a.tag(y)), (7, 9));
        a.reset(BLOCK_BYTES);
        assert_eq!(a.high_water_bytes(), 0, "reset clears the mark");
    }
}
