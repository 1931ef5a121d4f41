//! Microbenchmarks of the CUDA executor's own operations, for `calibrate --device cuda`: each
//! returns the median GPU time (CUDA events around the operation on one stream, after one
//! warm-up) of `repetitions` runs, ns. As in the executor, a `delay` kernel holds the stream
//! while the host issues each repetition, so that the time is the GPU's, not the host's
//! launch latency.

use std::sync::Arc;

use bubblelab_core::cost::Dtype;
use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use super::device::{driver, elapsed_ns, Device};
use super::kernels::GemmShape;
use crate::exec::{median, ExecError};

/// Empty kernels per launch-overhead measurement.
pub const LAUNCHES: u32 = 1000;

/// How long the stream is held before each timed repetition, ns (enough for the host to
/// issue [`LAUNCHES`] kernels).
pub const HEAD_START_NS: u64 = 20_000_000;

/// A device with one stream and one cuBLAS handle.
pub struct Bench {
    device: Device,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
}

impl Bench {
    /// Opens device `ordinal` (see [`Device::open`]).
    ///
    /// # Errors
    /// No driver, device, cuBLAS or NVRTC, or a driver failure.
    pub fn new(ordinal: usize) -> Result<Bench, ExecError> {
        let device = Device::open(ordinal)?;
        let stream = device.stream()?;
        let blas = device.blas(&stream)?;
        Ok(Bench {
            device,
            stream,
            blas,
        })
    }

    /// The device's name and SM count, for the profile.
    #[must_use]
    pub fn describe(&self) -> String {
        format!("{} ({} SMs)", self.device.name, self.device.sm_count)
    }

    /// Median ns of `op` on the stream.
    fn time(
        &self,
        repetitions: u32,
        mut op: impl FnMut() -> Result<(), ExecError>,
    ) -> Result<u64, ExecError> {
        let (start, end) = (self.device.timing_event()?, self.device.timing_event()?);
        op()?;
        self.stream.synchronize().map_err(driver("synchronize"))?;
        let mut times = Vec::with_capacity(repetitions as usize);
        for _ in 0..repetitions.max(1) {
            self.device.delay(&self.stream, HEAD_START_NS)?;
            start.record(&self.stream).map_err(driver("record"))?;
            op()?;
            end.record(&self.stream).map_err(driver("record"))?;
            times.push(elapsed_ns(&start, &end)?.max(1));
        }
        Ok(median(&mut times))
    }

    /// `bytes` bytes (at least 16) on the device, filled as the executor's operands are.
    fn buffer(&self, bytes: u64) -> Result<CudaSlice<u8>, ExecError> {
        let len = usize::try_from(bytes.max(16))
            .map_err(|_| ExecError(format!("{bytes} bytes do not fit this host's usize")))?;
        let buffer = self
            .stream
            .alloc_zeros::<u8>(len)
            .map_err(driver(&format!("allocation of {bytes} bytes")))?;
        self.device
            .fill(&self.stream, self.ptr(&buffer), len as u64)?;
        Ok(buffer)
    }

    fn ptr(&self, b: &CudaSlice<u8>) -> u64 {
        b.device_ptr(&self.stream).0
    }

    /// A cuBLAS GEMM of `shape` in `dtype`.
    ///
    /// # Errors
    /// Out of memory or a driver/cuBLAS failure.
    pub fn gemm_ns(
        &self,
        dtype: Dtype,
        shape: GemmShape,
        repetitions: u32,
    ) -> Result<u64, ExecError> {
        let e = u64::from(dtype.bytes());
        let (a, b, c) = shape.elements();
        let (a, b, c) = (
            self.buffer(a * e)?,
            self.buffer(b * e)?,
            self.buffer(c * e)?,
        );
        let ptrs = (self.ptr(&a), self.ptr(&b), self.ptr(&c));
        self.time(repetitions, || {
            self.device.gemm(&self.blas, dtype, shape, ptrs)
        })
    }

    /// The memory-bound kernel copying `bytes` bytes (2·`bytes` moved).
    ///
    /// # Errors
    /// Out of memory or a driver failure.
    pub fn stream_copy_ns(&self, bytes: u64, repetitions: u32) -> Result<u64, ExecError> {
        let (src, dst) = (self.buffer(bytes)?, self.buffer(bytes)?);
        let (s, d) = (self.ptr(&src), self.ptr(&dst));
        self.time(repetitions, || {
            self.device.stream_copy(&self.stream, s, d, bytes)
        })
    }

    /// A device-to-device copy-engine transfer of `bytes` bytes (the collective emulation).
    ///
    /// # Errors
    /// Out of memory or a driver failure.
    pub fn d2d_ns(&self, bytes: u64, repetitions: u32) -> Result<u64, ExecError> {
        let (src, dst) = (self.buffer(bytes)?, self.buffer(bytes)?);
        let (s, d) = (self.ptr(&src), self.ptr(&dst));
        self.time(repetitions, || {
            self.device.dma_copy(&self.stream, s, d, bytes)
        })
    }

    /// Host-to-device (`to_device`) or device-to-host transfer of `bytes` bytes from or to
    /// page-locked host memory.
    ///
    /// # Errors
    /// Out of memory or a driver failure.
    #[allow(unsafe_code)]
    pub fn host_copy_ns(
        &self,
        bytes: u64,
        to_device: bool,
        repetitions: u32,
    ) -> Result<u64, ExecError> {
        let mut dev = self.buffer(bytes)?;
        // SAFETY: the pinned buffer is only a DMA source or target here; its (unset) contents
        // are never read on the host.
        let mut host = unsafe { self.device.ctx.alloc_pinned_with_flags::<u8>(dev.len(), 0) }
            .map_err(driver("page-locked allocation"))?;
        self.time(repetitions, || {
            if to_device {
                self.stream.memcpy_htod(&host, &mut dev)
            } else {
                self.stream.memcpy_dtoh(&dev, &mut host)
            }
            .map_err(driver("host copy"))
        })
    }

    /// A peer transfer of `bytes` bytes from this device to device `peer`, timed on the peer's
    /// stream; `None` when there is no such device.
    ///
    /// # Errors
    /// Out of memory or a driver failure.
    pub fn peer_ns(
        &self,
        peer: usize,
        bytes: u64,
        repetitions: u32,
    ) -> Result<Option<u64>, ExecError> {
        let count = CudaContext::device_count().map_err(driver("device count"))?;
        if usize::try_from(count).unwrap_or(0) <= peer {
            return Ok(None);
        }
        let ctx = CudaContext::new(peer).map_err(driver("peer context"))?;
        let stream = ctx.new_stream().map_err(driver("peer stream"))?;
        let len = usize::try_from(bytes).map_err(|_| ExecError("copy too large".into()))?;
        let src = self.buffer(bytes)?;
        let mut dst = stream
            .alloc_zeros::<u8>(len)
            .map_err(driver("peer allocation"))?;
        let start = ctx
            .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("event"))?;
        let end = ctx
            .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("event"))?;
        let mut copy = || {
            stream
                .memcpy_dtod(&src, &mut dst)
                .map_err(driver("peer copy"))
        };
        copy()?;
        stream.synchronize().map_err(driver("synchronize"))?;
        let mut times = Vec::new();
        for _ in 0..repetitions.max(1) {
            start.record(&stream).map_err(driver("record"))?;
            copy()?;
            end.record(&stream).map_err(driver("record"))?;
            times.push(elapsed_ns(&start, &end)?.max(1));
        }
        Ok(Some(median(&mut times)))
    }

    /// Time per launch of [`LAUNCHES`] back-to-back empty kernels, issued ahead of the GPU:
    /// the gap one kernel adds on a stream the host keeps fed, as in the executor.
    ///
    /// # Errors
    /// A driver failure.
    pub fn launch_ns(&self, repetitions: u32) -> Result<u64, ExecError> {
        let total = self.time(repetitions, || {
            (0..LAUNCHES).try_for_each(|_| self.device.empty(&self.stream))
        })?;
        Ok((total / u64::from(LAUNCHES)).max(1))
    }
}
