//! The CUDA side of the native runner, through cudarc with the driver, cuBLAS, NVRTC and NCCL
//! loaded at run time (`dynamic-loading`): the binary builds and runs without CUDA, and every
//! entry point answers "no driver" (or names the missing library) instead of panicking
//! (cudarc panics when a library is missing, so presence is checked first: [`probe`],
//! [`require_device`], then [`device::Device::open`] for cuBLAS and NVRTC).
//!
//! - this file: what CUDA offers here (driver version, devices, NCCL, cuBLAS);
//! - [`kernels`]: what the executor launches for each node, as plain data (tested without a GPU);
//! - [`device`]: an opened device and its launches (GEMM, streaming kernel, copies, events);
//! - [`issue`]: the host's issue sequence for a plan (waits, events, allocations, frees), as
//!   data (tested without a GPU);
//! - [`executor`]: the [`CudaExecutor`](executor::CudaExecutor);
//! - [`bench`]: the microbenchmarks of `calibrate --device cuda`.

pub mod bench;
pub mod device;
pub mod executor;
pub mod issue;
pub mod kernels;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::CudaContext;

/// One CUDA device as the driver reports it.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Ordinal.
    pub ordinal: usize,
    /// Name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
}

/// What the CUDA stack offers here.
#[derive(Clone, Debug)]
pub struct CudaProbe {
    /// Driver API version as `major.minor` (e.g. `13.0`).
    pub driver_version: String,
    /// Every device.
    pub devices: Vec<DeviceInfo>,
    /// Whether libnccl can be loaded.
    pub nccl: bool,
    /// Whether libcublas can be loaded.
    pub cublas: bool,
    /// Whether libnvrtc can be loaded.
    pub nvrtc: bool,
}

/// Whether the CUDA driver library (`libcuda.so`) can be loaded.
#[must_use]
#[allow(unsafe_code)]
pub fn driver_present() -> bool {
    // SAFETY: `is_culib_present` only tries `libloading::Library::new` on the driver's library
    // names and drops what it opened; it reads no memory of ours. It is `unsafe` because
    // loading a library runs its initialisers, which is what loading the driver means.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[allow(unsafe_code)]
fn nccl_present() -> bool {
    // SAFETY: as in `driver_present`, for libnccl.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

#[allow(unsafe_code)]
fn cublas_present() -> bool {
    // SAFETY: as in `driver_present`, for libcublas.
    unsafe { cudarc::cublas::sys::is_culib_present() }
}

#[allow(unsafe_code)]
fn nvrtc_present() -> bool {
    // SAFETY: as in `driver_present`, for libnvrtc.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

#[allow(unsafe_code)]
fn driver_version() -> Result<i32, String> {
    let mut version: std::ffi::c_int = 0;
    // SAFETY: only called after `driver_present()` returned true, so the symbol loads;
    // `cuDriverGetVersion` writes one int through the valid pointer we pass and needs no cuInit.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&raw mut version) };
    if status == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        Ok(version)
    } else {
        Err(format!("cuDriverGetVersion failed: {status:?}"))
    }
}

/// Probes the driver and its devices.
///
/// # Errors
/// `no CUDA driver on this machine (libcuda not found)` when the driver cannot be loaded, or the
/// driver's own error.
pub fn probe() -> Result<CudaProbe, String> {
    if !driver_present() {
        return Err("no CUDA driver on this machine (libcuda not found)".into());
    }
    let v = driver_version()?;
    let count = CudaContext::device_count().map_err(|e| format!("CUDA driver: {e:?}"))?;
    let mut devices = Vec::new();
    for ordinal in 0..usize::try_from(count).unwrap_or(0) {
        let ctx = CudaContext::new(ordinal).map_err(|e| format!("device {ordinal}: {e:?}"))?;
        devices.push(DeviceInfo {
            ordinal,
            name: ctx.name().map_err(|e| format!("device {ordinal}: {e:?}"))?,
            memory_bytes: ctx.total_mem().map_or(0, |b| b as u64),
            sm_count: ctx
                .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .unwrap_or(0),
            compute_capability: ctx.compute_capability().unwrap_or((0, 0)),
        });
    }
    Ok(CudaProbe {
        driver_version: format!("{}.{}", v / 1000, (v % 1000) / 10),
        devices,
        nccl: nccl_present(),
        cublas: cublas_present(),
        nvrtc: nvrtc_present(),
    })
}

/// The error every CUDA command gives where CUDA cannot run, or `Ok` with the probe.
///
/// # Errors
/// One line saying what is missing.
pub fn require_device() -> Result<CudaProbe, String> {
    let p = probe()?;
    if p.devices.is_empty() {
        return Err(format!(
            "the CUDA driver {} reports no device",
            p.driver_version
        ));
    }
    Ok(p)
}
