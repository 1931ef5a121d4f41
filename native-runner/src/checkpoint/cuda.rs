//! The CUDA path of the address-preserving checkpoint: what it needs and whether this machine
//! has it. The mechanism (cuMemAddressReserve + cuMemCreate + cuMemMap + cuMemSetAccess as a
//! [`super::Space`], NVRTC kernels that build and traverse the linked structure in device
//! memory) is not written yet: `checkpoint-demo --device cuda` checks for the driver and a
//! device and then refuses with a plain message instead of pretending.

use super::CkptError;

/// Checks that the driver and a device exist, then says the CUDA space is not implemented.
///
/// # Errors
/// Always: [`CkptError::NoDevice`] naming what is missing, or saying the CUDA space is not
/// implemented in this build.
pub fn run_demo() -> Result<(), CkptError> {
    let probe = crate::exec::cuda::probe().map_err(|e| {
        CkptError::NoDevice(format!(
            "--device cuda: {e}; run `bubblelab checkpoint-demo --device cpu` for the host-memory implementation"
        ))
    })?;
    if probe.devices.is_empty() {
        return Err(CkptError::NoDevice(
            "--device cuda: the CUDA driver loads but reports no device".into(),
        ));
    }
    Err(CkptError::NoDevice(format!(
        "--device cuda: CUDA driver {} and {} device(s) found, but this build has no CUDA checkpoint space yet (cuMemAddressReserve/cuMemCreate/cuMemMap via cudarc is the planned path); --device cpu runs the same cycle in host memory",
        probe.driver_version,
        probe.devices.len()
    )))
}
