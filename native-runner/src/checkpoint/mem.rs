//! A [`Space`] held in ordinary heap memory at a nominal base address: nothing is mapped at
//! that address, reads and writes go through offsets. The CUDA path uses it to traverse a
//! copy of device memory on the host with the host's own code ([`copy_of`]) and to build the
//! host reference of a seed at the device's addresses; tests use it to check the device
//! kernels' source on the CPU.

use super::{locate, CkptError, Space};

/// A range of `regions × region` bytes "at" `base`, each region a heap buffer once committed.
#[derive(Debug)]
pub struct MemSpace {
    base: u64,
    region: u64,
    data: Vec<Option<Vec<u8>>>,
    mapped: bool,
}

impl MemSpace {
    /// A range of `reserved` bytes at the nominal address `base`, in regions of `region` bytes
    /// (`reserved` a positive multiple of `region`); nothing committed.
    ///
    /// # Errors
    /// [`CkptError::Invalid`] for bad sizes.
    pub fn new(base: u64, reserved: u64, region: u64) -> Result<MemSpace, CkptError> {
        if region == 0 || reserved == 0 || !reserved.is_multiple_of(region) {
            return Err(CkptError::Invalid(format!(
                "reserved size {reserved} must be a positive multiple of the region size {region}"
            )));
        }
        if base.checked_add(reserved).is_none() {
            return Err(CkptError::Invalid(
                "range overflows the address space".into(),
            ));
        }
        let regions = usize::try_from(reserved / region)
            .map_err(|_| CkptError::Invalid(format!("{reserved} bytes do not fit this machine")))?;
        usize::try_from(region)
            .map_err(|_| CkptError::Invalid(format!("{region} bytes do not fit this machine")))?;
        Ok(MemSpace {
            base,
            region,
            data: vec![None; regions],
            mapped: true,
        })
    }
}

/// Copies the given regions of `space` into a [`MemSpace`] at the same nominal addresses (one
/// [`Space::read`] per region; the rest reads as zero).
///
/// # Errors
/// The source's read errors.
pub fn copy_of(space: &impl Space, regions: &[usize]) -> Result<MemSpace, CkptError> {
    let mut copy = MemSpace::new(space.base(), space.reserved_bytes(), space.region_bytes())?;
    for &i in regions {
        copy.commit(i)?;
        if let Some(Some(buf)) = copy.data.get_mut(i) {
            space.read(i as u64 * copy.region, buf)?;
        }
    }
    Ok(copy)
}

impl Space for MemSpace {
    fn base(&self) -> u64 {
        self.base
    }
    fn reserved_bytes(&self) -> u64 {
        self.region * self.data.len() as u64
    }
    fn region_bytes(&self) -> u64 {
        self.region
    }
    fn regions(&self) -> usize {
        self.data.len()
    }
    fn is_committed(&self, index: usize) -> bool {
        matches!(self.data.get(index), Some(Some(_)))
    }

    fn commit(&mut self, index: usize) -> Result<(), CkptError> {
        let region = self.region as usize;
        match self.data.get_mut(index) {
            Some(slot) if self.mapped => {
                slot.get_or_insert_with(|| vec![0; region]);
                Ok(())
            }
            _ => Err(CkptError::Invalid(format!(
                "region {index} is not in a mapped range"
            ))),
        }
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), CkptError> {
        if !self.mapped {
            return Err(CkptError::Invalid(format!(
                "{} bytes at offset {offset:#x} are outside the mapped range",
                out.len()
            )));
        }
        let i = locate(offset, out.len(), self.reserved_bytes(), self.region)?;
        match &self.data[i] {
            Some(buf) => {
                let at = (offset % self.region) as usize;
                out.copy_from_slice(&buf[at..at + out.len()]);
            }
            None => out.fill(0),
        }
        Ok(())
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), CkptError> {
        let i = locate(offset, data.len(), self.reserved_bytes(), self.region)?;
        let at = (offset % self.region) as usize;
        match self.data.get_mut(i) {
            Some(Some(buf)) if self.mapped => {
                buf[at..at + data.len()].copy_from_slice(data);
                Ok(())
            }
            _ => Err(CkptError::Invalid(format!(
                "region {i} (offset {offset:#x}) is not committed"
            ))),
        }
    }

    fn release(&mut self) -> Result<(), CkptError> {
        self.data.fill(None);
        self.mapped = false;
        Ok(())
    }

    fn remap(&mut self) -> Result<(), CkptError> {
        self.mapped = true;
        Ok(())
    }

    fn is_mapped(&self) -> bool {
        self.mapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::host::HostSpace;
    use crate::checkpoint::{workload, Allocator};

    #[test]
    fn a_heap_copy_at_the_same_nominal_address_traverses_like_the_original() {
        let region = 64 << 10;
        let base = 0x2E00_0000_0000usize;
        let space = HostSpace::reserve(base, 16 * region, region).unwrap();
        let mut alloc = Allocator::new(space);
        let built = workload::build(&mut alloc, 3000, region as u64, region as u64, 11).unwrap();
        let copy = copy_of(&alloc.space, &alloc.active_regions()).unwrap();
        assert_eq!(
            workload::traverse(&copy, built.root, built.nodes).unwrap(),
            built.checksum
        );
        // The same seed built in a MemSpace of the same geometry lands at the same addresses.
        let mut heap =
            Allocator::new(MemSpace::new(base as u64, 16 * region as u64, region as u64).unwrap());
        let again = workload::build(&mut heap, 3000, region as u64, region as u64, 11).unwrap();
        assert_eq!(again, built);
        // Writes outside committed regions and reads across regions are refused.
        assert!(heap.space.write(15 * region as u64, &[1]).is_err());
        let mut two = [0u8; 2];
        assert!(heap.space.read(region as u64 - 1, &mut two).is_err());
        assert!(MemSpace::new(0, 1000, 64).is_err());
    }
}
