//! One opened CUDA device with the executor's kernels loaded, and the few launches everything
//! else is built from: a cuBLAS GEMM, the streaming copy kernel, a copy-engine transfer, the
//! empty kernel, event timing.
//!
//! cudarc's per-buffer event tracking is turned off: the executor orders every use itself with
//! events that follow the plan's dependencies, and tracking would add waits of its own (a
//! buffer freed on its allocating stream waits for readers on other streams), which would
//! change the schedule being measured.

use std::sync::Arc;

use bubblelab_core::cost::Dtype;
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::{self, CUdevice_attribute, CUdeviceptr};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};

use super::kernels::{stream_launch, GemmShape, KERNEL_SOURCE};
use crate::exec::ExecError;

/// A driver error as an [`ExecError`] naming what was being done.
pub fn driver<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> ExecError + '_ {
    move |e| ExecError(format!("CUDA {what}: {e:?}"))
}

/// An opened device.
pub struct Device {
    /// The context (primary context of the device).
    pub ctx: Arc<CudaContext>,
    /// Name as the driver reports it.
    pub name: String,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    stream_copy: CudaFunction,
    empty: CudaFunction,
    delay: CudaFunction,
}

impl Device {
    /// Opens device `ordinal`: checks that the driver, a device, cuBLAS and NVRTC are present
    /// before touching them (cudarc panics on a missing library), compiles the kernels and
    /// keeps freed device memory in the pool.
    ///
    /// # Errors
    /// One line naming what is missing or failed.
    pub fn open(ordinal: usize) -> Result<Device, ExecError> {
        let probe = super::require_device().map_err(ExecError)?;
        let Some(info) = probe.devices.get(ordinal) else {
            return Err(ExecError(format!(
                "no CUDA device {ordinal} ({} device(s) found)",
                probe.devices.len()
            )));
        };
        if !probe.cublas {
            return Err(ExecError(
                "cuBLAS (libcublas) not found: the CUDA executor runs its GEMMs through it".into(),
            ));
        }
        if !probe.nvrtc {
            return Err(ExecError(
                "NVRTC (libnvrtc) not found: the CUDA executor compiles its kernels with it".into(),
            ));
        }
        let ctx = CudaContext::new(ordinal).map_err(driver("context"))?;
        if !ctx.has_async_alloc() {
            return Err(ExecError(format!(
                "device {ordinal} ({}) has no stream-ordered allocator (memory pools), which the executor's ledger needs",
                info.name
            )));
        }
        // SAFETY: called before any buffer of this context exists; from here on every
        // cross-stream use is ordered by the executor's own events (see the module comment).
        #[allow(unsafe_code)]
        unsafe {
            ctx.disable_event_tracking();
        }
        configure_pool(&ctx)?;
        let ptx = cudarc::nvrtc::compile_ptx(KERNEL_SOURCE)
            .map_err(|e| ExecError(format!("NVRTC could not compile the kernels: {e}")))?;
        let module = ctx.load_module(ptx).map_err(driver("module load"))?;
        let sm_count = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver("attribute"))?;
        Ok(Device {
            name: info.name.clone(),
            sm_count: u32::try_from(sm_count).unwrap_or(1),
            stream_copy: module
                .load_function("stream_copy")
                .map_err(driver("stream_copy"))?,
            empty: module.load_function("empty").map_err(driver("empty"))?,
            delay: module.load_function("delay").map_err(driver("delay"))?,
            ctx,
        })
    }

    /// A new non-blocking stream.
    ///
    /// # Errors
    /// The driver's error.
    pub fn stream(&self) -> Result<Arc<CudaStream>, ExecError> {
        self.ctx.new_stream().map_err(driver("stream"))
    }

    /// A cuBLAS handle bound to `stream`.
    ///
    /// # Errors
    /// cuBLAS's error.
    #[allow(clippy::unused_self)] // a handle on this device's stream, asked of the device
    pub fn blas(&self, stream: &Arc<CudaStream>) -> Result<CudaBlas, ExecError> {
        CudaBlas::new(Arc::clone(stream)).map_err(driver("cuBLAS handle"))
    }

    /// An event that records time.
    ///
    /// # Errors
    /// The driver's error.
    pub fn timing_event(&self) -> Result<CudaEvent, ExecError> {
        self.ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("event"))
    }

    /// `bytes` bytes (at least 16) of device memory from the pool, stream-ordered on `stream`;
    /// contents unset (no GPU work: the allocation of a tensor takes no time on the stream).
    ///
    /// # Errors
    /// The driver's error (out of memory included).
    #[allow(unsafe_code)]
    pub fn alloc(&self, stream: &CudaStream, bytes: u64) -> Result<CUdeviceptr, ExecError> {
        let len = usize::try_from(bytes.max(16))
            .map_err(|_| ExecError(format!("{bytes} bytes do not fit this host's usize")))?;
        self.ctx.bind_to_thread().map_err(driver("context"))?;
        // SAFETY: `cuMemAllocAsync` writes one pointer; the buffer is used only on streams
        // ordered after this point of `stream` and freed once through `free`.
        unsafe { cudarc::driver::result::malloc_async(stream.cu_stream(), len) }
            .map_err(driver(&format!("allocation of {bytes} bytes")))
    }

    /// [`alloc`](Self::alloc), then [`fill`](Self::fill).
    ///
    /// # Errors
    /// The driver's error (out of memory included).
    pub fn alloc_filled(&self, stream: &CudaStream, bytes: u64) -> Result<CUdeviceptr, ExecError> {
        let ptr = self.alloc(stream, bytes)?;
        self.fill(stream, ptr, bytes.max(16))?;
        Ok(ptr)
    }

    /// Fills `bytes` bytes at `ptr` with the byte 0x3F on `stream` (bf16 ≈ 0.75, fp32 ≈ 0.75:
    /// non-zero operands, as real data; a GPU draws less power, and may clock higher, on
    /// zeros).
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn fill(&self, stream: &CudaStream, ptr: CUdeviceptr, bytes: u64) -> Result<(), ExecError> {
        let len = usize::try_from(bytes)
            .map_err(|_| ExecError(format!("{bytes} bytes do not fit this host's usize")))?;
        self.ctx.bind_to_thread().map_err(driver("context"))?;
        // SAFETY: the caller's `ptr` holds at least `len` bytes, ordered before this point of
        // `stream`.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0x3F, len, stream.cu_stream()) }
            .map_err(driver("memset"))
    }

    /// Frees `ptr` stream-ordered on `stream`.
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn free(&self, stream: &CudaStream, ptr: CUdeviceptr) -> Result<(), ExecError> {
        self.ctx.bind_to_thread().map_err(driver("context"))?;
        // SAFETY: `ptr` came from `alloc` and is freed once; the caller has made `stream` wait
        // for every use of it.
        unsafe { cudarc::driver::result::free_async(ptr, stream.cu_stream()) }
            .map_err(driver("free"))
    }

    /// C = A·B on `blas`'s stream with cuBLAS (column-major, no transposes, fp32 accumulation:
    /// `cublasGemmEx` with bf16 or fp32 operands and `CUBLAS_COMPUTE_32F`).
    ///
    /// # Errors
    /// cuBLAS's error, or an unsupported dtype.
    #[allow(unsafe_code)]
    pub fn gemm(
        &self,
        blas: &CudaBlas,
        dtype: Dtype,
        shape: GemmShape,
        (a, b, c): (CUdeviceptr, CUdeviceptr, CUdeviceptr),
    ) -> Result<(), ExecError> {
        let data = match dtype {
            Dtype::Bf16 => cudaDataType::CUDA_R_16BF,
            Dtype::Fp32 => cudaDataType::CUDA_R_32F,
            Dtype::Fp16 => cudaDataType::CUDA_R_16F,
        };
        let int = |x: u64| {
            i32::try_from(x).map_err(|_| ExecError(format!("GEMM side {x} exceeds cuBLAS's int")))
        };
        let (m, n, k) = (int(shape.m)?, int(shape.n)?, int(shape.k)?);
        let (alpha, beta) = (1.0f32, 0.0f32);
        self.ctx.bind_to_thread().map_err(driver("context"))?;
        // SAFETY: a, b, c hold at least m·k, k·n, m·n elements of `dtype` (the executor sizes
        // its scratch with `plan_scratch` from the same shapes); alpha and beta are f32 as
        // `CUBLAS_COMPUTE_32F` requires and outlive the call, which only enqueues work.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                m,
                n,
                k,
                std::ptr::from_ref(&alpha).cast(),
                a as *const std::ffi::c_void,
                data,
                m,
                b as *const std::ffi::c_void,
                data,
                k,
                std::ptr::from_ref(&beta).cast(),
                c as *mut std::ffi::c_void,
                data,
                m,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(driver("cuBLAS GEMM"))
    }

    /// Copies `bytes` bytes from `src` to `dst` with the streaming kernel (SMs) on `stream`.
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn stream_copy(
        &self,
        stream: &CudaStream,
        src: CUdeviceptr,
        dst: CUdeviceptr,
        bytes: u64,
    ) -> Result<(), ExecError> {
        let Some(l) = stream_launch(bytes, self.sm_count) else {
            return Ok(());
        };
        let cfg = LaunchConfig {
            grid_dim: (l.blocks, 1, 1),
            block_dim: (l.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.stream_copy);
        launch.arg(&src).arg(&dst).arg(&l.words16);
        // SAFETY: `stream_copy(const uint4*, uint4*, unsigned long long)` takes exactly these
        // three 8-byte arguments; src and dst hold at least `words16`·16 bytes (scratch is
        // rounded up to 16-byte words).
        unsafe { launch.launch(cfg) }
            .map(|_| ())
            .map_err(driver("stream_copy launch"))
    }

    /// Launches the empty kernel (one block of one thread) on `stream`.
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn empty(&self, stream: &CudaStream) -> Result<(), ExecError> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.empty);
        // SAFETY: `empty()` takes no arguments and touches no memory.
        unsafe { launch.launch(cfg) }
            .map(|_| ())
            .map_err(driver("empty launch"))
    }

    /// Holds `stream` for `ns` nanoseconds with the `delay` kernel (one thread).
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn delay(&self, stream: &CudaStream, ns: u64) -> Result<(), ExecError> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.delay);
        launch.arg(&ns);
        // SAFETY: `delay(unsigned long long)` takes exactly this one 8-byte argument and
        // touches no memory.
        unsafe { launch.launch(cfg) }
            .map(|_| ())
            .map_err(driver("delay launch"))
    }

    /// Copies `bytes` bytes device to device with the driver's asynchronous memcpy on
    /// `stream` (the copy engines).
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn dma_copy(
        &self,
        stream: &CudaStream,
        src: CUdeviceptr,
        dst: CUdeviceptr,
        bytes: u64,
    ) -> Result<(), ExecError> {
        if bytes == 0 {
            return Ok(());
        }
        let len = usize::try_from(bytes).map_err(|_| ExecError("copy too large".into()))?;
        self.ctx.bind_to_thread().map_err(driver("context"))?;
        // SAFETY: src and dst hold at least `bytes` bytes, allocated in this context and
        // ordered before this point of `stream`.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, len, stream.cu_stream()) }
            .map_err(driver("device-to-device copy"))
    }
}

/// Keeps freed memory in the device's default pool (release threshold: never) and stops the
/// pool from making an allocation wait for a pending free on another stream (internal
/// dependencies), which would add edges to the schedule being measured.
#[allow(unsafe_code)]
fn configure_pool(ctx: &CudaContext) -> Result<(), ExecError> {
    let pool = default_pool(ctx)?;
    let mut threshold: u64 = u64::MAX;
    // SAFETY: RELEASE_THRESHOLD takes a pointer to a cuuint64_t, which outlives the call.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            std::ptr::from_mut(&mut threshold).cast(),
        )
    }
    .result()
    .map_err(driver("pool release threshold"))?;
    let mut internal: i32 = 0;
    // SAFETY: REUSE_ALLOW_INTERNAL_DEPENDENCIES takes a pointer to an int, which outlives the
    // call.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            std::ptr::from_mut(&mut internal).cast(),
        )
    }
    .result()
    .map_err(driver("pool reuse policy"))
}

/// The device's default memory pool (the one `cuMemAllocAsync` draws from).
#[allow(unsafe_code)]
fn default_pool(ctx: &CudaContext) -> Result<sys::CUmemoryPool, ExecError> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: writes one pool handle for a valid device of a live context.
    unsafe { sys::cuDeviceGetDefaultMemPool(&raw mut pool, ctx.cu_device()) }
        .result()
        .map_err(driver("default memory pool"))?;
    Ok(pool)
}

/// One 64-bit attribute of the default pool.
#[allow(unsafe_code)]
fn pool_bytes(ctx: &CudaContext, attr: sys::CUmemPool_attribute) -> Result<u64, ExecError> {
    let pool = default_pool(ctx)?;
    let mut value: u64 = 0;
    // SAFETY: the USED_MEM attributes write one cuuint64_t through the pointer, which outlives
    // the call.
    unsafe { sys::cuMemPoolGetAttribute(pool, attr, std::ptr::from_mut(&mut value).cast()) }
        .result()
        .map_err(driver("pool attribute"))?;
    Ok(value)
}

impl Device {
    /// Bytes of the default pool in use now, as the driver accounts them.
    ///
    /// # Errors
    /// The driver's error.
    pub fn pool_used_bytes(&self) -> Result<u64, ExecError> {
        pool_bytes(
            &self.ctx,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        )
    }

    /// The default pool's high-water mark of bytes in use since [`Self::reset_pool_high`].
    ///
    /// # Errors
    /// The driver's error.
    pub fn pool_used_high_bytes(&self) -> Result<u64, ExecError> {
        pool_bytes(
            &self.ctx,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
        )
    }

    /// Resets the default pool's high-water mark to the bytes in use now.
    ///
    /// # Errors
    /// The driver's error.
    #[allow(unsafe_code)]
    pub fn reset_pool_high(&self) -> Result<(), ExecError> {
        let pool = default_pool(&self.ctx)?;
        let mut zero: u64 = 0;
        // SAFETY: USED_MEM_HIGH takes a pointer to a cuuint64_t (0 resets it), which outlives
        // the call.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                std::ptr::from_mut(&mut zero).cast(),
            )
        }
        .result()
        .map_err(driver("pool high-water reset"))
    }
}

/// ns from `from` to `to` (both recorded and complete), as the driver's ms float.
///
/// # Errors
/// The driver's error.
pub fn elapsed_ns(from: &CudaEvent, to: &CudaEvent) -> Result<u64, ExecError> {
    let ms = from.elapsed_ms(to).map_err(driver("event timing"))?;
    Ok((f64::from(ms) * 1e6).round().max(0.0) as u64)
}
