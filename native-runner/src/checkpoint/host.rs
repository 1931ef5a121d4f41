//! The host implementation of the address-preserving allocator: one virtual range reserved at a
//! fixed address with `mmap(MAP_FIXED_NOREPLACE)`, cut into fixed-size regions that are
//! committed (read/write) when an allocation takes them and decommitted when freed. Pause
//! copies regions out and unmaps the whole range (the memory goes back to the kernel); restore
//! maps the range again at the same address, in this process or a new one, or refuses.

use super::{CkptError, Space};

/// A reserved virtual range at a fixed address, in host memory.
#[derive(Debug)]
pub struct HostSpace {
    base: usize,
    reserved: usize,
    region: usize,
    mapped: bool,
    committed: Vec<bool>,
}

fn page_size() -> usize {
    #[allow(unsafe_code)]
    // SAFETY: sysconf reads a constant of the running kernel; no memory of ours is involved.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096).max(4096)
}

/// Maps `len` bytes at exactly `base` with no access, or says why not. Never replaces an
/// existing mapping (`MAP_FIXED_NOREPLACE`); on kernels that ignore the flag a mapping at
/// another address is undone and refused.
fn map_fixed(base: usize, len: usize) -> Result<(), CkptError> {
    #[allow(unsafe_code)]
    // SAFETY: a fresh anonymous private mapping; MAP_FIXED_NOREPLACE never clobbers an existing
    // mapping (it fails with EEXIST instead), so no memory we or anyone else use is touched.
    let got = unsafe {
        libc::mmap(
            base as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if got == libc::MAP_FAILED {
        let err = std::io::Error::last_os_error();
        return Err(CkptError::RangeTaken(format!(
            "cannot reserve {len} bytes at {base:#x}: {err}"
        )));
    }
    if got as usize != base {
        #[allow(unsafe_code)]
        // SAFETY: `got` is the mapping just created above, of `len` bytes, used by nothing.
        unsafe {
            libc::munmap(got, len);
        }
        return Err(CkptError::RangeTaken(format!(
            "the kernel placed the range at {:#x} instead of {base:#x} (MAP_FIXED_NOREPLACE unsupported or range taken)",
            got as usize
        )));
    }
    Ok(())
}

impl HostSpace {
    /// Reserves `reserved` bytes at `base`, cut into regions of `region` bytes (both multiples
    /// of the page size; `reserved` a multiple of `region`).
    ///
    /// # Errors
    /// [`CkptError::Invalid`] for bad sizes, [`CkptError::RangeTaken`] when the range is in use.
    pub fn reserve(base: usize, reserved: usize, region: usize) -> Result<HostSpace, CkptError> {
        let page = page_size();
        if base == 0 {
            return Err(CkptError::Invalid(
                "base address 0 is the null page: choose a fixed address such as 0x2a0000000000"
                    .into(),
            ));
        }
        if region == 0 || !region.is_multiple_of(page) || !base.is_multiple_of(page) {
            return Err(CkptError::Invalid(format!(
                "base {base:#x} and region size {region} must be multiples of the page size {page}"
            )));
        }
        if reserved == 0 || !reserved.is_multiple_of(region) {
            return Err(CkptError::Invalid(format!(
                "reserved size {reserved} must be a positive multiple of the region size {region}"
            )));
        }
        if base.checked_add(reserved).is_none() {
            return Err(CkptError::Invalid(
                "range overflows the address space".into(),
            ));
        }
        map_fixed(base, reserved)?;
        Ok(HostSpace {
            base,
            reserved,
            region,
            mapped: true,
            committed: vec![false; reserved / region],
        })
    }

    fn protect(&self, index: usize, prot: libc::c_int) -> Result<(), CkptError> {
        #[allow(unsafe_code)]
        // SAFETY: the region lies inside our own reserved mapping (index < regions, checked by
        // callers), so changing its protection touches no memory outside it.
        let rc = unsafe {
            libc::mprotect(
                (self.base + index * self.region) as *mut libc::c_void,
                self.region,
                prot,
            )
        };
        if rc != 0 {
            return Err(CkptError::Io(format!(
                "mprotect of region {index}: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(())
    }
}

impl HostSpace {
    /// Checks that `[offset, offset + len)` lies in one region of the mapped range (committed
    /// when `need_committed`); returns the region index.
    fn check_range(
        &self,
        offset: u64,
        len: usize,
        need_committed: bool,
    ) -> Result<usize, CkptError> {
        if !self.mapped {
            return Err(CkptError::Invalid(format!(
                "{len} bytes at offset {offset:#x} are outside the mapped range"
            )));
        }
        let first = super::locate(offset, len, self.reserved as u64, self.region as u64)?;
        if need_committed && !self.committed[first] {
            return Err(CkptError::Invalid(format!(
                "region {first} (offset {offset:#x}) is not committed"
            )));
        }
        Ok(first)
    }
}

impl Space for HostSpace {
    fn base(&self) -> u64 {
        self.base as u64
    }
    fn reserved_bytes(&self) -> u64 {
        self.reserved as u64
    }
    fn region_bytes(&self) -> u64 {
        self.region as u64
    }
    fn regions(&self) -> usize {
        self.committed.len()
    }
    fn is_committed(&self, index: usize) -> bool {
        self.committed.get(index).copied().unwrap_or(false)
    }

    fn commit(&mut self, index: usize) -> Result<(), CkptError> {
        if !self.mapped || index >= self.committed.len() {
            return Err(CkptError::Invalid(format!(
                "region {index} is not in a mapped range"
            )));
        }
        self.protect(index, libc::PROT_READ | libc::PROT_WRITE)?;
        self.committed[index] = true;
        Ok(())
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), CkptError> {
        let first = self.check_range(offset, out.len(), false)?;
        if !self.committed[first] {
            // An uncommitted region of the reserved range holds no data: it reads as zero.
            out.fill(0);
            return Ok(());
        }
        #[allow(unsafe_code)]
        // SAFETY: `check_range` proved [offset, offset + len) lies inside one region of our
        // mapping that is committed (read/write); `out` is heap memory outside the range.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.base + offset as usize) as *const u8,
                out.as_mut_ptr(),
                out.len(),
            );
        }
        Ok(())
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), CkptError> {
        self.check_range(offset, data.len(), true)?;
        #[allow(unsafe_code)]
        // SAFETY: as in `read` (the region is committed), in the other direction.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                (self.base + offset as usize) as *mut u8,
                data.len(),
            );
        }
        Ok(())
    }

    fn release(&mut self) -> Result<(), CkptError> {
        if !self.mapped {
            return Ok(());
        }
        #[allow(unsafe_code)]
        // SAFETY: unmaps exactly our own reservation; callers drop every pointer into it first
        // (the workload is only reached through this space after a restore).
        let rc = unsafe { libc::munmap(self.base as *mut libc::c_void, self.reserved) };
        if rc != 0 {
            return Err(CkptError::Io(format!(
                "munmap: {}",
                std::io::Error::last_os_error()
            )));
        }
        self.mapped = false;
        self.committed.fill(false);
        Ok(())
    }

    fn remap(&mut self) -> Result<(), CkptError> {
        if self.mapped {
            return Ok(());
        }
        map_fixed(self.base, self.reserved)?;
        self.mapped = true;
        Ok(())
    }

    fn is_mapped(&self) -> bool {
        self.mapped
    }
}

impl Drop for HostSpace {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// Maps one page at `addr` (a test hook: makes a later reservation of a range holding `addr`
/// fail the way a range taken by another allocation would). The page stays mapped until exit.
///
/// # Errors
/// [`CkptError::RangeTaken`] when the page itself cannot be had.
pub fn occupy(addr: usize) -> Result<(), CkptError> {
    map_fixed(addr, page_size())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: usize = 0x2B00_0000_0000;

    #[test]
    fn the_same_range_cannot_be_had_twice_and_remap_refuses_a_taken_range() {
        let region = 64 << 10;
        let mut a = HostSpace::reserve(BASE, 16 * region, region).unwrap();
        assert!(matches!(
            HostSpace::reserve(BASE + region, region, region),
            Err(CkptError::RangeTaken(_))
        ));
        a.commit(3).unwrap();
        a.write(3 * region as u64 + 8, &[7u8; 16]).unwrap();
        let mut back = [0u8; 16];
        a.read(3 * region as u64 + 8, &mut back).unwrap();
        assert_eq!(back, [7u8; 16]);
        // Reads across a region boundary or of an unmapped range are refused, not performed.
        assert!(a.read(4 * region as u64 - 8, &mut back).is_err());
        a.release().unwrap();
        assert!(a.read(0, &mut back).is_err());
        occupy(BASE + 5 * region).unwrap();
        assert!(matches!(a.remap(), Err(CkptError::RangeTaken(_))));
        assert!(!a.is_mapped());
    }

    #[test]
    fn null_base_and_bad_sizes_are_refused() {
        assert!(matches!(
            HostSpace::reserve(0, 1 << 20, 1 << 16),
            Err(CkptError::Invalid(_))
        ));
        assert!(matches!(
            HostSpace::reserve(BASE, 1000, 1 << 16),
            Err(CkptError::Invalid(_))
        ));
        assert!(matches!(
            HostSpace::reserve(BASE, 1 << 20, 3000),
            Err(CkptError::Invalid(_))
        ));
    }
}
