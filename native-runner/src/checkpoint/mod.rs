//! Address-preserving checkpoint/restore (FlowGPU's pause/resume/migrate primitive), for real.
//!
//! A [`Space`] is one virtual range reserved at a fixed address, cut into fixed-size regions
//! that can be committed (backed by memory) or not. The [`Allocator`] hands out region-aligned
//! blocks from it like a framework's caching allocator: freed blocks stay committed (cached) but
//! are no longer *active*. The [`workload`] builds a pointer-rich structure in it (a linked list
//! whose nodes store absolute addresses of each other) and checksums it by traversal. [`image`]
//! saves the active regions (or the whole reserved range), optionally with fixed-size-chunk
//! deduplication, into a self-checking image; restoring maps the same range at the same address
//! (in this process or a new one) and copies the image back, or refuses before touching
//! anything. [`host`] implements the space in host memory (runs everywhere, tested in CI);
//! [`cuda`] implements it in device memory through the CUDA driver's virtual memory
//! management, with NVRTC kernels that link and traverse the list on the device; [`mem`] is a
//! plain heap copy at a nominal address (host-side checks of device memory, tests).

pub mod cuda;
pub mod host;
pub mod image;
pub mod mem;
pub mod workload;

use std::fmt;

/// Why a checkpoint step stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CkptError {
    /// A bad size, address or argument.
    Invalid(String),
    /// The virtual range cannot be had at the required address.
    RangeTaken(String),
    /// The image is damaged or not an image; nothing was restored.
    Corrupt(String),
    /// A system call or file failed.
    Io(String),
    /// The device path cannot run here (no driver, no device).
    NoDevice(String),
}

impl fmt::Display for CkptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CkptError::Invalid(m) => write!(f, "{m}"),
            CkptError::RangeTaken(m) => write!(f, "address range not available: {m}"),
            CkptError::Corrupt(m) => write!(f, "corrupted checkpoint image, nothing restored: {m}"),
            CkptError::Io(m) => write!(f, "{m}"),
            CkptError::NoDevice(m) => write!(f, "{m}"),
        }
    }
}

/// One reserved virtual range at a fixed address, in regions of a fixed size.
pub trait Space {
    /// First address of the range.
    fn base(&self) -> u64;
    /// Size of the range, bytes.
    fn reserved_bytes(&self) -> u64;
    /// Size of one region, bytes.
    fn region_bytes(&self) -> u64;
    /// Regions in the range.
    fn regions(&self) -> usize;
    /// Whether a region is backed by memory.
    fn is_committed(&self, index: usize) -> bool;
    /// Backs a region with memory (zero-filled).
    ///
    /// # Errors
    /// When the range is not mapped or the system refuses.
    fn commit(&mut self, index: usize) -> Result<(), CkptError>;
    /// Copies bytes at `offset` (inside one region) out; an uncommitted region reads as zero.
    ///
    /// # Errors
    /// When the bytes are outside the mapped range or cross a region boundary.
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), CkptError>;
    /// Copies bytes in at `offset` (inside one committed region).
    ///
    /// # Errors
    /// When the bytes are outside a committed region.
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), CkptError>;
    /// Unmaps the whole range; its memory goes back to the system (the CUDA space keeps the
    /// virtual addresses reserved, the host space gives them up too).
    ///
    /// # Errors
    /// When the system refuses.
    fn release(&mut self) -> Result<(), CkptError>;
    /// Maps the range again at the same address (nothing committed); where the addresses were
    /// kept reserved there is nothing to map.
    ///
    /// # Errors
    /// [`CkptError::RangeTaken`] when something else holds the range now.
    fn remap(&mut self) -> Result<(), CkptError>;
    /// Whether the range is mapped.
    fn is_mapped(&self) -> bool;
    /// Waits until every copy into the space has landed (host copies are synchronous).
    ///
    /// # Errors
    /// When the memory's owner reports a failed copy.
    fn synchronize(&self) -> Result<(), CkptError> {
        Ok(())
    }
}

/// Checks that `[offset, offset + len)` is non-empty, lies in a range of `reserved` bytes and
/// inside one region of `region` bytes; returns the region index.
///
/// # Errors
/// [`CkptError::Invalid`] naming the offset and what is wrong.
pub fn locate(offset: u64, len: usize, reserved: u64, region: u64) -> Result<usize, CkptError> {
    let end = offset.saturating_add(len as u64);
    if len == 0 || end > reserved || region == 0 {
        return Err(CkptError::Invalid(format!(
            "{len} bytes at offset {offset:#x} are outside the mapped range"
        )));
    }
    let first = offset / region;
    if (end - 1) / region != first {
        return Err(CkptError::Invalid(format!(
            "{len} bytes at offset {offset:#x} cross a region boundary"
        )));
    }
    usize::try_from(first)
        .map_err(|_| CkptError::Invalid(format!("offset {offset:#x} does not fit this machine")))
}

/// What one region of the allocator holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionUse {
    /// Never handed out (not committed).
    Free,
    /// Committed, freed by the application, kept by the allocator (stale data).
    Cached,
    /// Part of a live allocation: active memory.
    Live,
}

/// A live allocation: `count` regions from `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// First region.
    pub first: usize,
    /// Regions.
    pub count: usize,
}

/// A caching allocator over a [`Space`] that knows which regions are active.
#[derive(Debug)]
pub struct Allocator<S: Space> {
    /// The space.
    pub space: S,
    uses: Vec<RegionUse>,
    blocks: Vec<Block>,
}

impl<S: Space> Allocator<S> {
    /// An allocator over `space` (every region free).
    pub fn new(space: S) -> Allocator<S> {
        let n = space.regions();
        Allocator {
            space,
            uses: vec![RegionUse::Free; n],
            blocks: Vec::new(),
        }
    }

    /// Allocates `bytes` (rounded up to whole regions), cached regions first, then free ones;
    /// returns the block's address.
    ///
    /// # Errors
    /// [`CkptError::Invalid`] when no contiguous run of regions is left.
    pub fn alloc(&mut self, bytes: u64) -> Result<u64, CkptError> {
        let region = self.space.region_bytes();
        let count = usize::try_from(bytes.div_ceil(region).max(1)).unwrap_or(usize::MAX);
        let n = self.uses.len();
        let fits = |from: usize, uses: &[RegionUse], want: RegionUse| {
            from + count <= n
                && uses[from..from + count]
                    .iter()
                    .all(|&u| u == want || u == RegionUse::Cached)
        };
        let first = (0..n)
            .find(|&i| fits(i, &self.uses, RegionUse::Cached) && self.uses[i] == RegionUse::Cached)
            .or_else(|| (0..n).find(|&i| fits(i, &self.uses, RegionUse::Free)))
            .ok_or_else(|| {
                CkptError::Invalid(format!(
                    "out of reserved space: no {count} contiguous free regions of {region} bytes"
                ))
            })?;
        for i in first..first + count {
            if self.uses[i] == RegionUse::Free {
                self.space.commit(i)?;
            }
            self.uses[i] = RegionUse::Live;
        }
        self.blocks.push(Block { first, count });
        Ok(self.space.base() + first as u64 * region)
    }

    /// Frees the block at `addr`: its regions stay committed (cached) but are no longer active.
    ///
    /// # Errors
    /// [`CkptError::Invalid`] when no live block starts there.
    pub fn free(&mut self, addr: u64) -> Result<(), CkptError> {
        let region = self.space.region_bytes();
        let pos = self
            .blocks
            .iter()
            .position(|b| self.space.base() + b.first as u64 * region == addr)
            .ok_or_else(|| CkptError::Invalid(format!("no live block at {addr:#x}")))?;
        let b = self.blocks.remove(pos);
        for u in &mut self.uses[b.first..b.first + b.count] {
            *u = RegionUse::Cached;
        }
        Ok(())
    }

    /// Indices of the active (live) regions.
    #[must_use]
    pub fn active_regions(&self) -> Vec<usize> {
        (0..self.uses.len())
            .filter(|&i| self.uses[i] == RegionUse::Live)
            .collect()
    }

    /// Indices of the committed regions (the framework's reserved pool: live + cached).
    #[must_use]
    pub fn committed_regions(&self) -> Vec<usize> {
        (0..self.uses.len())
            .filter(|&i| self.uses[i] != RegionUse::Free)
            .collect()
    }

    /// The live blocks.
    #[must_use]
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Re-creates the allocator's state after a restore: `blocks` live, every other committed
    /// region of the space cached.
    pub fn adopt(&mut self, blocks: &[Block]) {
        for (i, u) in self.uses.iter_mut().enumerate() {
            *u = if self.space.is_committed(i) {
                RegionUse::Cached
            } else {
                RegionUse::Free
            };
        }
        for b in blocks {
            let end = (b.first + b.count).min(self.uses.len());
            for u in &mut self.uses[b.first.min(end)..end] {
                *u = RegionUse::Live;
            }
        }
        self.blocks = blocks.to_vec();
    }

    /// Forgets every region's use (after the space was released).
    pub fn forget(&mut self) {
        self.uses.fill(RegionUse::Free);
    }
}
