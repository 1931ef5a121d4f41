//! The CUDA path of the address-preserving checkpoint: a [`Space`] in device memory through
//! the driver's virtual memory management, and NVRTC kernels that link and traverse the
//! workload's list on the device.
//!
//! [`CudaSpace`] reserves one virtual range (`cuMemAddressReserve`, with the image's address
//! as the hint when a new process restores it), cuts it into regions of a multiple of the
//! device's allocation granularity, and commits a region as one physical allocation
//! (`cuMemCreate`, pinned device memory) mapped at its place (`cuMemMap`) and opened for
//! read/write by the device (`cuMemSetAccess`), then zero-filled. Release unmaps every region
//! and releases every physical handle (the device memory goes back to the driver, visible in
//! `cuMemGetInfo`) but keeps the virtual reservation, so a restore maps the same addresses.
//!
//! Nothing here has run on a GPU yet: it is written against the documented driver API. Every
//! entry point probes for the driver and a device first and answers with one line where there
//! is none (cudarc panics when a library is missing).
//!
//! `vmm` holds the space (virtual memory management), `nvrtc` the kernels compiled at run time.

use std::sync::Arc;

use cudarc::driver::sys::CUresult;
use cudarc::driver::CudaContext;

use super::CkptError;

mod nvrtc;
mod vmm;

pub use nvrtc::Kernels;
pub use vmm::CudaSpace;

pub(super) fn check(what: &str, status: CUresult) -> Result<(), CkptError> {
    status
        .result()
        .map_err(|e| CkptError::Io(format!("{what} failed: {e}")))
}

pub(super) fn usize_of(v: u64) -> Result<usize, CkptError> {
    usize::try_from(v).map_err(|_| CkptError::Invalid(format!("{v} does not fit this machine")))
}

/// The device's context after the probe: one line naming what is missing otherwise.
///
/// # Errors
/// [`CkptError::NoDevice`] without a driver or device, [`CkptError::Invalid`] for an ordinal
/// the driver does not have.
pub fn open_device(ordinal: usize) -> Result<Arc<CudaContext>, CkptError> {
    let probe = crate::exec::cuda::require_device().map_err(|e| {
        CkptError::NoDevice(format!(
            "--device cuda: {e}; `--device cpu` runs the same cycle in host memory"
        ))
    })?;
    if ordinal >= probe.devices.len() {
        return Err(CkptError::Invalid(format!(
            "--ordinal: the driver has {} device(s), got {ordinal}",
            probe.devices.len()
        )));
    }
    CudaContext::new(ordinal)
        .map_err(|e| CkptError::Io(format!("context on device {ordinal}: {e}")))
}
