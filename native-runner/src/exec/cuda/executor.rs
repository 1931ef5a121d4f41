//! The CUDA executor: runs a [`Plan`] on one GPU with real kernels and streams.
//!
//! - Every plan stream is a CUDA stream (the simulator's plans: one compute stream and one
//!   stream per communication group; a pipeline plan: one per stage).
//! - GEMM and attention nodes run a cuBLAS GEMM of the node's (m, n, k)
//!   ([`gemm_shape`]), in bf16 when the graph's tensors hold 2 bytes per element, else fp32
//!   ([`graph_dtype`]); attention runs as a GEMM of its FLOPs, as on the CPU executor.
//! - Memory-bound nodes run the NVRTC-compiled `stream_copy` kernel over half the node's HBM
//!   bytes (read that much, write that much).
//! - A collective start copies its bus volume device to device with the driver's asynchronous
//!   memcpy (`cuMemcpyDtoDAsync`) on its group's stream, concurrently with the compute stream's
//!   kernels: a real transfer competing for HBM, on the copy engines where the driver uses them
//!   for intra-device copies (to be confirmed on hardware with a Nsight Systems trace).
//!   **This is an emulation** of the collective on one GPU, also when the machine has several:
//!   no NCCL call is made.
//! - A node on one stream that depends on a node of another stream waits for the event
//!   recorded after that node (`cuStreamWaitEvent`); a wait node is such a wait of the compute
//!   stream on its collective. The host's sequence of calls is [`issue_steps`] (pure, tested
//!   without a GPU).
//! - Timing: a timing event before and after every node; times are elapsed from an epoch
//!   event every stream waits on, so they are GPU times, not host issue times. Before the
//!   epoch a one-thread `delay` kernel holds the streams back while the host issues the whole
//!   plan ([`issue_head_start_ns`]), so host issue speed does not show in the measurement.
//! - Memory: the executor's allocator is the device's stream-ordered pool. A tensor is
//!   allocated when its producer is issued, on the producer's stream (a wait's result when its
//!   collective starts; graph inputs before the epoch), and freed on a release stream that
//!   first waits for every reader's end event: the simulator's ledger rule, on the GPU's
//!   timeline. The reported peak is the pool's own high-water mark of bytes in use
//!   (`CU_MEMPOOL_ATTR_USED_MEM_HIGH`, reset after the scratch is allocated), as the driver
//!   accounts it — rounding and fragmentation included; to be compared on hardware with the
//!   ledger at the measured event times. Kernel operands live in per-stream scratch, not
//!   counted (as on the CPU executor).
//!
//! Graphs run at full size ([`FULL_SIZE`]); a plan whose tensors and scratch do not fit the
//! device's free memory is refused with the sizes.

use std::sync::Arc;

use bubblelab_core::cost::{ComputeKind, Dtype};
use bubblelab_core::graph::NodeKind;
use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaEvent, CudaStream};
use petgraph::stable_graph::NodeIndex;

use super::device::{driver, elapsed_ns, Device};
use super::issue::{issue_steps, Step};
use super::kernels::{
    collective_copy_bytes, gemm_shape, graph_dtype, issue_head_start_ns, memory_bound_copy_bytes,
    plan_scratch,
};
use crate::exec::{node_bound, ExecError, Execution, Executor, Lifetimes, OpTiming, Plan, Scale};

/// The scale the CUDA executor runs graphs at: none (divisors 1). Attention nodes still become
/// GEMMs of their FLOPs through [`crate::exec::scale`], which is what the executor runs.
pub const FULL_SIZE: Scale = Scale {
    flops_divisor: 1.0,
    bytes_divisor: 1.0,
};

/// Fraction of the device's free memory a plan may use (the rest: cuBLAS workspaces, pool
/// fragmentation, the driver).
pub const MEMORY_HEADROOM: f64 = 0.9;

/// One plan stream: a CUDA stream and its cuBLAS handle.
struct Lane {
    stream: Arc<CudaStream>,
    blas: CudaBlas,
}

/// Scratch buffers of one stream for one run.
#[derive(Default)]
struct ScratchPtrs {
    a: CUdeviceptr,
    b: CUdeviceptr,
    c: CUdeviceptr,
    src: CUdeviceptr,
    dst: CUdeviceptr,
}

/// Runs plans on one CUDA device.
pub struct CudaExecutor {
    device: Device,
    lanes: Vec<Lane>,
    release: Arc<CudaStream>,
}

impl CudaExecutor {
    /// Opens device `ordinal`.
    ///
    /// # Errors
    /// No driver, device, cuBLAS or NVRTC, or a driver failure, in one line.
    pub fn new(ordinal: usize) -> Result<CudaExecutor, ExecError> {
        let device = Device::open(ordinal)?;
        let release = device.stream()?;
        Ok(CudaExecutor {
            device,
            lanes: Vec::new(),
            release,
        })
    }

    fn ensure_lanes(&mut self, count: usize) -> Result<(), ExecError> {
        while self.lanes.len() < count {
            let stream = self.device.stream()?;
            let blas = self.device.blas(&stream)?;
            self.lanes.push(Lane { stream, blas });
        }
        Ok(())
    }

    /// Refuses a plan whose tensors (all of them, the most the pool can hold at once) and
    /// scratch exceed [`MEMORY_HEADROOM`] of the device's free memory.
    fn check_fits(&self, plan: &Plan, scratch_bytes: u64) -> Result<(), ExecError> {
        let tensor_bytes: u64 = plan
            .graph
            .tensors
            .iter()
            .filter(|t| !t.persistent)
            .map(|t| t.bytes)
            .sum();
        let (free, _) = self
            .device
            .ctx
            .mem_get_info()
            .map_err(driver("memory info"))?;
        let need = tensor_bytes + scratch_bytes;
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        if need as f64 > free as f64 * MEMORY_HEADROOM {
            return Err(ExecError(format!(
                "plan {}: needs {:.2} GiB of device memory (tensors {:.2} GiB + kernel scratch {:.2} GiB), more than {:.0} % of the {:.2} GiB free on {}",
                plan.name,
                gib(need),
                gib(tensor_bytes),
                gib(scratch_bytes),
                MEMORY_HEADROOM * 100.0,
                gib(free as u64),
                self.device.name
            )));
        }
        Ok(())
    }
}

/// The device buffers of one run, freed (after a device synchronisation) when dropped, so that
/// an error halfway through a run leaks nothing.
struct RunBuffers<'d> {
    device: &'d Device,
    stream: Arc<CudaStream>,
    tensors: Vec<Option<CUdeviceptr>>,
    scratch: Vec<CUdeviceptr>,
}

impl Drop for RunBuffers<'_> {
    fn drop(&mut self) {
        let _ = self.device.ctx.synchronize();
        for ptr in self.tensors.iter_mut().filter_map(Option::take) {
            let _ = self.device.free(&self.stream, ptr);
        }
        for ptr in self.scratch.drain(..) {
            let _ = self.device.free(&self.stream, ptr);
        }
        let _ = self.stream.synchronize();
    }
}

impl Executor for CudaExecutor {
    fn device(&self) -> String {
        format!(
            "cuda device {} ({}, {} SMs; collectives emulated by copy-engine transfers)",
            self.device.ctx.ordinal(),
            self.device.name,
            self.device.sm_count
        )
    }

    fn run(&mut self, plan: &Plan) -> Result<Execution, ExecError> {
        let graph = &plan.graph;
        if plan.streams.is_empty() {
            return Err(ExecError(format!("plan {}: has no stream", plan.name)));
        }
        let lifetimes = Lifetimes::new(graph)?;
        let steps = issue_steps(plan, &lifetimes)?;
        let dtype = graph_dtype(graph);
        let scratch = plan_scratch(plan, dtype);
        self.check_fits(plan, scratch.iter().map(|s| s.total()).sum())?;
        self.ensure_lanes(plan.streams.len())?;
        let device = &self.device;
        let lanes = &self.lanes[..plan.streams.len()];
        let release = &self.release;
        device.ctx.synchronize().map_err(driver("synchronize"))?;

        let mut buffers = RunBuffers {
            device,
            stream: Arc::clone(release),
            tensors: vec![None; graph.tensors.len()],
            scratch: Vec::new(),
        };
        let mut ptrs = Vec::with_capacity(lanes.len());
        for (lane, s) in lanes.iter().zip(&scratch) {
            let mut alloc = |bytes: u64| -> Result<CUdeviceptr, ExecError> {
                let p = device.alloc_filled(&lane.stream, bytes)?;
                buffers.scratch.push(p);
                Ok(p)
            };
            ptrs.push(ScratchPtrs {
                a: alloc(s.a_bytes)?,
                b: alloc(s.b_bytes)?,
                c: alloc(s.c_bytes)?,
                src: alloc(s.copy_bytes)?,
                dst: alloc(s.copy_bytes)?,
            });
        }
        // The pool's own high-water mark measures the tensors: from here, scratch excluded.
        device.ctx.synchronize().map_err(driver("synchronize"))?;
        let scratch_bytes = device.pool_used_bytes()?;
        device.reset_pool_high()?;
        for &t in &lifetimes.inputs {
            buffers.tensors[t] = Some(device.alloc(&lanes[0].stream, graph.tensors[t].bytes)?);
        }
        device.ctx.synchronize().map_err(driver("synchronize"))?;

        // Hold the streams back while the host issues the plan; the epoch follows the delay.
        device.delay(&lanes[0].stream, issue_head_start_ns(graph.node_count()))?;
        let epoch = device.timing_event()?;
        epoch.record(&lanes[0].stream).map_err(driver("record"))?;
        for lane in &lanes[1..] {
            lane.stream.wait(&epoch).map_err(driver("wait"))?;
        }
        release.wait(&epoch).map_err(driver("wait"))?;
        let bound = node_bound(graph);
        let mut starts: Vec<Option<CudaEvent>> = (0..bound).map(|_| None).collect();
        let mut ends: Vec<Option<CudaEvent>> = (0..bound).map(|_| None).collect();
        for step in steps {
            match step {
                Step::WaitFor { stream, node } => {
                    let end = ends[node.index()]
                        .as_ref()
                        .ok_or_else(|| missing(plan, node))?;
                    lanes[stream].stream.wait(end).map_err(driver("wait"))?;
                }
                Step::Start(n) | Step::End(n) => {
                    let event = device.timing_event()?;
                    event
                        .record(&lanes[plan.stream_of[n.index()]].stream)
                        .map_err(driver("record"))?;
                    let slot = if matches!(step, Step::Start(_)) {
                        &mut starts
                    } else {
                        &mut ends
                    };
                    slot[n.index()] = Some(event);
                }
                Step::Alloc { stream, tensor } => {
                    let bytes = graph.tensors[tensor].bytes;
                    buffers.tensors[tensor] = Some(device.alloc(&lanes[stream].stream, bytes)?);
                }
                Step::Launch(n) => {
                    let s = plan.stream_of[n.index()];
                    launch(device, &lanes[s], &ptrs[s], plan, n, dtype)?;
                }
                Step::ReleaseAfter(n) => {
                    let end = ends[n.index()].as_ref().ok_or_else(|| missing(plan, n))?;
                    release.wait(end).map_err(driver("wait"))?;
                }
                Step::Free(t) => {
                    if let Some(ptr) = buffers.tensors[t].take() {
                        device.free(release, ptr)?;
                    }
                }
            }
        }
        device.ctx.synchronize().map_err(driver("synchronize"))?;

        let mut timings = vec![OpTiming::default(); bound];
        for n in graph.dag.node_indices() {
            let (Some(start), Some(end)) = (&starts[n.index()], &ends[n.index()]) else {
                return Err(ExecError(format!(
                    "plan {}: node {} is not in the issue order",
                    plan.name, graph.dag[n].name
                )));
            };
            timings[n.index()] = OpTiming {
                start_ns: elapsed_ns(&epoch, start)?,
                end_ns: elapsed_ns(&epoch, end)?,
            };
        }
        let peak_bytes = device.pool_used_high_bytes()?.saturating_sub(scratch_bytes);
        drop(buffers);
        let makespan_ns = timings.iter().map(|t| t.end_ns).max().unwrap_or(0);
        Ok(Execution {
            timings,
            makespan_ns,
            peak_bytes,
        })
    }
}

/// The error of a step that needs an event not recorded yet (a bug of `issue_steps`).
fn missing(plan: &Plan, n: NodeIndex) -> ExecError {
    ExecError(format!(
        "plan {}: the end event of {} is used before it is recorded",
        plan.name, plan.graph.dag[n].name
    ))
}

/// Enqueues node `n`'s work on `lane`: a GEMM, the streaming kernel, or the collective's
/// device-to-device copy; a wait has none.
fn launch(
    device: &Device,
    lane: &Lane,
    sp: &ScratchPtrs,
    plan: &Plan,
    n: NodeIndex,
    dtype: Dtype,
) -> Result<(), ExecError> {
    let graph = &plan.graph;
    match &graph.dag[n].kind {
        NodeKind::Compute(w) if w.kind == ComputeKind::MemoryBound => {
            device.stream_copy(&lane.stream, sp.src, sp.dst, memory_bound_copy_bytes(w))
        }
        NodeKind::Compute(_) => match gemm_shape(graph, n) {
            Some(shape) => device.gemm(&lane.blas, dtype, shape, (sp.a, sp.b, sp.c)),
            None => Ok(()),
        },
        NodeKind::CollectiveStart { .. } => device.dma_copy(
            &lane.stream,
            sp.src,
            sp.dst,
            collective_copy_bytes(graph, n),
        ),
        NodeKind::Wait { .. } => Ok(()),
    }
}
