//! [`CudaSpace`]: the checkpoint's address space in device memory through the driver's virtual
//! memory management (reserve once, commit and release regions in place).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::{
    self, CUdeviceptr, CUmemAccessDesc, CUmemAccess_flags, CUmemAllocationGranularity_flags,
    CUmemAllocationHandleType, CUmemAllocationProp, CUmemAllocationProp_st__bindgen_ty_1,
    CUmemAllocationType, CUmemGenericAllocationHandle, CUmemLocation, CUmemLocationType,
};
use cudarc::driver::CudaContext;

use super::{check, usize_of};
use crate::checkpoint::{locate, CkptError, Space};

/// Region and range sizes the device can map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Region size, bytes: the asked size rounded up to a multiple of the granularity.
    pub region_bytes: u64,
    /// Reserved range, bytes: the asked size rounded up to whole regions.
    pub reserved_bytes: u64,
    /// The device's minimum allocation granularity, bytes (`cuMemGetAllocationGranularity`).
    pub granularity_bytes: u64,
}

/// Rounds the asked region up to the allocation granularity (`cuMemCreate` and `cuMemMap`
/// take only multiples of it) and the asked range up to whole regions.
///
/// # Errors
/// [`CkptError::Invalid`] for a zero size, a granularity that is not a power of two, or sizes
/// that overflow.
pub fn geometry(
    reserved_bytes: u64,
    region_bytes: u64,
    granularity_bytes: u64,
) -> Result<Geometry, CkptError> {
    if !granularity_bytes.is_power_of_two() {
        return Err(CkptError::Invalid(format!(
            "the driver reports an allocation granularity of {granularity_bytes} bytes, not a power of two"
        )));
    }
    if region_bytes == 0 || reserved_bytes == 0 {
        return Err(CkptError::Invalid(format!(
            "region ({region_bytes} bytes) and range ({reserved_bytes} bytes) must be positive"
        )));
    }
    let overflow =
        || CkptError::Invalid(format!("{reserved_bytes} bytes overflow the address space"));
    let region = region_bytes
        .checked_next_multiple_of(granularity_bytes)
        .ok_or_else(overflow)?;
    let reserved = reserved_bytes
        .checked_next_multiple_of(region)
        .ok_or_else(overflow)?;
    Ok(Geometry {
        region_bytes: region,
        reserved_bytes: reserved,
        granularity_bytes,
    })
}

/// One virtual range in device memory, in regions backed by their own physical allocations.
#[derive(Debug)]
pub struct CudaSpace {
    ctx: Arc<CudaContext>,
    base: u64,
    geometry: Geometry,
    handles: Vec<Option<CUmemGenericAllocationHandle>>,
    mapped: bool,
}

impl CudaSpace {
    /// Reserves a range of at least `reserved_bytes` on the device of `ctx`, in regions of at
    /// least `region_bytes` (both rounded up, see [`geometry`]). With `hint` the range must
    /// start exactly there (a restore in a new process); without it the driver chooses.
    ///
    /// # Errors
    /// [`CkptError::Invalid`] for bad sizes or a hint off the granularity,
    /// [`CkptError::RangeTaken`] (naming both addresses) when the driver places the range
    /// elsewhere, [`CkptError::Io`] when the driver refuses.
    pub fn reserve(
        ctx: Arc<CudaContext>,
        hint: Option<u64>,
        reserved_bytes: u64,
        region_bytes: u64,
    ) -> Result<CudaSpace, CkptError> {
        ctx.bind_to_thread()
            .map_err(|e| CkptError::Io(format!("binding the context: {e}")))?;
        let prop = allocation_prop(ctx.cu_device());
        let mut granularity = 0usize;
        #[allow(unsafe_code)]
        // SAFETY: the driver is loaded (`open_device` probed it) and the context is current;
        // the call writes one usize through the valid pointer and reads `prop`, which lives
        // on this stack frame for the whole call.
        let status = unsafe {
            sys::cuMemGetAllocationGranularity(
                &raw mut granularity,
                &raw const prop,
                CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        };
        check("cuMemGetAllocationGranularity", status)?;
        let geometry = geometry(reserved_bytes, region_bytes, granularity as u64)?;
        if let Some(h) = hint {
            if h == 0 || !h.is_multiple_of(geometry.granularity_bytes) {
                return Err(CkptError::Invalid(format!(
                    "base {h:#x} must be a non-zero multiple of the allocation granularity {}",
                    geometry.granularity_bytes
                )));
            }
        }
        let size = usize_of(geometry.reserved_bytes)?;
        let mut base: CUdeviceptr = 0;
        #[allow(unsafe_code)]
        // SAFETY: reserves virtual addresses only (no memory of ours is touched); the driver
        // writes the start through the valid pointer. Alignment is the granularity, a power
        // of two, and the size a multiple of it, as the API requires.
        let status = unsafe {
            sys::cuMemAddressReserve(&raw mut base, size, granularity, hint.unwrap_or(0), 0)
        };
        check("cuMemAddressReserve", status)?;
        if let Some(h) = hint.filter(|&h| h != base) {
            #[allow(unsafe_code)]
            // SAFETY: frees exactly the reservation made above, which nothing has mapped.
            let _ = unsafe { sys::cuMemAddressFree(base, size) };
            return Err(CkptError::RangeTaken(format!(
                "the driver placed {size} bytes at {base:#x} instead of {h:#x}"
            )));
        }
        let regions = usize_of(geometry.reserved_bytes / geometry.region_bytes)?;
        Ok(CudaSpace {
            ctx,
            base,
            geometry,
            handles: vec![None; regions],
            mapped: true,
        })
    }

    /// Sizes as rounded for the device.
    #[must_use]
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The context the space lives in.
    #[must_use]
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Free device memory as the driver reports it (`cuMemGetInfo`), bytes.
    ///
    /// # Errors
    /// When the driver refuses.
    pub fn device_free_bytes(&self) -> Result<u64, CkptError> {
        self.bind()?;
        self.ctx
            .mem_get_info()
            .map(|(free, _)| free as u64)
            .map_err(|e| CkptError::Io(format!("cuMemGetInfo failed: {e}")))
    }

    pub(super) fn bind(&self) -> Result<(), CkptError> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| CkptError::Io(format!("binding the context: {e}")))
    }

    fn region_ptr(&self, index: usize) -> CUdeviceptr {
        self.base + index as u64 * self.geometry.region_bytes
    }

    /// Unmaps one region and releases its physical allocation.
    fn decommit(&mut self, index: usize) -> Result<(), CkptError> {
        let Some(handle) = self.handles.get_mut(index).and_then(Option::take) else {
            return Ok(());
        };
        let ptr = self.region_ptr(index);
        let size = self.geometry.region_bytes as usize;
        #[allow(unsafe_code)]
        // SAFETY: `ptr..ptr+size` is exactly the mapping `commit` made for this region (a
        // whole mapping, as cuMemUnmap requires) and `handle` its allocation; the context was
        // synchronized by the caller, so no kernel or copy still uses it.
        let (unmap, release) = unsafe { (sys::cuMemUnmap(ptr, size), sys::cuMemRelease(handle)) };
        check(&format!("cuMemUnmap of region {index}"), unmap)?;
        check(&format!("cuMemRelease of region {index}"), release)
    }
}

/// Pinned device memory on `device`, no shareable handle.
fn allocation_prop(device: sys::CUdevice) -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
        location: device_location(device),
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: CUmemAllocationProp_st__bindgen_ty_1 {
            compressionType: 0,
            gpuDirectRDMACapable: 0,
            usage: 0,
            reserved: [0; 4],
        },
    }
}

/// A location on `device` (the driver's `CUdevice`, as `cuDeviceGet` returned it).
fn device_location(device: sys::CUdevice) -> CUmemLocation {
    CUmemLocation {
        type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: device,
    }
}

impl Space for CudaSpace {
    fn base(&self) -> u64 {
        self.base
    }
    fn reserved_bytes(&self) -> u64 {
        self.geometry.reserved_bytes
    }
    fn region_bytes(&self) -> u64 {
        self.geometry.region_bytes
    }
    fn regions(&self) -> usize {
        self.handles.len()
    }
    fn is_committed(&self, index: usize) -> bool {
        matches!(self.handles.get(index), Some(Some(_)))
    }

    fn commit(&mut self, index: usize) -> Result<(), CkptError> {
        if !self.mapped || index >= self.handles.len() {
            return Err(CkptError::Invalid(format!(
                "region {index} is not in a mapped range"
            )));
        }
        if self.is_committed(index) {
            return Ok(());
        }
        self.bind()?;
        let prop = allocation_prop(self.ctx.cu_device());
        let size = self.geometry.region_bytes as usize;
        let ptr = self.region_ptr(index);
        let mut handle: CUmemGenericAllocationHandle = 0;
        #[allow(unsafe_code)]
        // SAFETY: creates a physical allocation of `size` (a multiple of the granularity) on
        // the device named in `prop`; the driver writes the handle through the valid pointer.
        let status = unsafe { sys::cuMemCreate(&raw mut handle, size, &raw const prop, 0) };
        check(
            &format!("cuMemCreate of region {index} ({size} bytes)"),
            status,
        )?;
        let access = CUmemAccessDesc {
            location: device_location(self.ctx.cu_device()),
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        #[allow(unsafe_code)]
        // SAFETY: `ptr..ptr+size` lies inside our reservation, granularity-aligned, and is not
        // mapped (the region is uncommitted); each step is undone below if a later one fails,
        // and the fresh mapping is zero-filled before anyone reads it.
        let result = unsafe {
            check("cuMemMap", sys::cuMemMap(ptr, size, 0, handle, 0)).and_then(|()| {
                let done = check(
                    "cuMemSetAccess",
                    sys::cuMemSetAccess(ptr, size, &raw const access, 1),
                )
                .and_then(|()| check("cuMemsetD8", sys::cuMemsetD8_v2(ptr, 0, size)));
                if done.is_err() {
                    let _ = sys::cuMemUnmap(ptr, size);
                }
                done
            })
        };
        if let Err(e) = result {
            #[allow(unsafe_code)]
            // SAFETY: `handle` was created above and is no longer mapped.
            let _ = unsafe { sys::cuMemRelease(handle) };
            return Err(match e {
                CkptError::Io(m) => CkptError::Io(format!("region {index}: {m}")),
                other => other,
            });
        }
        self.handles[index] = Some(handle);
        Ok(())
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), CkptError> {
        if !self.mapped {
            return Err(CkptError::Invalid(format!(
                "{} bytes at offset {offset:#x} are outside the mapped range",
                out.len()
            )));
        }
        let index = locate(
            offset,
            out.len(),
            self.reserved_bytes(),
            self.region_bytes(),
        )?;
        if !self.is_committed(index) {
            // An uncommitted region of the reserved range holds no data: it reads as zero.
            out.fill(0);
            return Ok(());
        }
        self.bind()?;
        #[allow(unsafe_code)]
        // SAFETY: `locate` proved the bytes lie inside one committed (mapped, read/write)
        // region; `out` is host memory of exactly `out.len()` bytes. The copy is synchronous
        // (device to pageable host memory returns once the copy is done).
        let status = unsafe {
            sys::cuMemcpyDtoH_v2(
                out.as_mut_ptr().cast::<c_void>(),
                self.base + offset,
                out.len(),
            )
        };
        check(&format!("cuMemcpyDtoH at offset {offset:#x}"), status)
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), CkptError> {
        let index = locate(
            offset,
            data.len(),
            self.reserved_bytes(),
            self.region_bytes(),
        )?;
        if !self.mapped || !self.is_committed(index) {
            return Err(CkptError::Invalid(format!(
                "region {index} (offset {offset:#x}) is not committed"
            )));
        }
        self.bind()?;
        #[allow(unsafe_code)]
        // SAFETY: as in `read`, in the other direction; the driver has staged the pageable
        // source before it returns, so `data` may be dropped afterwards.
        let status = unsafe {
            sys::cuMemcpyHtoD_v2(
                self.base + offset,
                data.as_ptr().cast::<c_void>(),
                data.len(),
            )
        };
        check(&format!("cuMemcpyHtoD at offset {offset:#x}"), status)
    }

    fn release(&mut self) -> Result<(), CkptError> {
        if !self.mapped {
            return Ok(());
        }
        self.synchronize()?;
        let mut first_error = Ok(());
        for i in 0..self.handles.len() {
            let r = self.decommit(i);
            if first_error.is_ok() {
                first_error = r;
            }
        }
        self.mapped = false;
        first_error
    }

    /// The virtual reservation outlives a release, so the range is ours at the same address:
    /// nothing to map until regions are committed again.
    fn remap(&mut self) -> Result<(), CkptError> {
        self.mapped = true;
        Ok(())
    }

    fn is_mapped(&self) -> bool {
        self.mapped
    }

    fn synchronize(&self) -> Result<(), CkptError> {
        self.bind()?;
        self.ctx
            .synchronize()
            .map_err(|e| CkptError::Io(format!("synchronizing device {}: {e}", self.ctx.ordinal())))
    }
}

impl Drop for CudaSpace {
    fn drop(&mut self) {
        let _ = self.release();
        if let Ok(size) = usize::try_from(self.geometry.reserved_bytes) {
            #[allow(unsafe_code)]
            // SAFETY: frees our own reservation after every region in it was unmapped.
            let _ = unsafe { sys::cuMemAddressFree(self.base, size) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_round_up_to_the_granularity_and_the_range_to_whole_regions() {
        let mib = 1u64 << 20;
        let g = geometry(256 * mib, 64 << 10, 2 * mib).unwrap();
        assert_eq!((g.region_bytes, g.reserved_bytes), (2 * mib, 256 * mib));
        let g = geometry(10 * mib, 3 * mib, 2 * mib).unwrap();
        assert_eq!((g.region_bytes, g.reserved_bytes), (4 * mib, 12 * mib));
        let g = geometry(8 * mib, 2 * mib, 2 * mib).unwrap();
        assert_eq!((g.region_bytes, g.reserved_bytes), (2 * mib, 8 * mib));
        assert!(matches!(
            geometry(8 * mib, 0, 2 * mib),
            Err(CkptError::Invalid(_))
        ));
        assert!(matches!(
            geometry(0, mib, 2 * mib),
            Err(CkptError::Invalid(_))
        ));
        assert!(matches!(
            geometry(8 * mib, mib, 0),
            Err(CkptError::Invalid(_))
        ));
        assert!(matches!(
            geometry(8 * mib, mib, 3 * mib),
            Err(CkptError::Invalid(_))
        ));
        assert!(matches!(
            geometry(u64::MAX - 5, mib, 2 * mib),
            Err(CkptError::Invalid(_))
        ));
    }
}
