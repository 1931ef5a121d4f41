//! The CPU executor: one OS thread per stream, real f32 work, `std::time::Instant` timing.
//!
//! - GEMM and attention nodes run a real f32 matrix multiplication C = A·B with m = n =
//!   ⌊∛(F/2)⌋ and k = F/(2·m·n) (F the node's FLOPs), so the work matches the node's FLOPs;
//!   the first elements of C are written into the node's output tensor.
//! - Memory-bound nodes copy B/2 bytes (B the node's HBM bytes: half read, half written).
//! - A collective start copies its bus volume (bus_factor(p)·n bytes, the per-rank traffic of
//!   the NCCL-tests convention) on its group's stream and fills its wait's result tensor from
//!   its input: a single-process emulation of the collective, not a network transfer.
//! - Waits do no work; they end when their collective has ended.
//!
//! A node starts when every predecessor has ended (a `Mutex` + `Condvar` over the set of ended
//! nodes) and its stream has finished the nodes issued before it.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

use bubblelab_core::cost::{ComputeKind, ComputeWork};
use bubblelab_core::graph::NodeKind;

use super::{
    node_bound, predecessors, ExecError, Execution, Executor, Lifetimes, MemoryTracker, OpTiming,
    Plan,
};

/// Largest GEMM side the executor accepts (a guard against unscaled graphs), elements.
pub const MAX_GEMM_SIDE: usize = 4096;
/// Largest single buffer the executor allocates, bytes (a guard against unscaled graphs).
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// Runs plans on CPU threads.
#[derive(Debug, Default)]
pub struct CpuExecutor;

/// `c += a·b` for row-major a (m×k), b (k×n), c (m×n).
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    for i in 0..m {
        let row = &mut c[i * n..(i + 1) * n];
        for p in 0..k {
            let a_ip = a[i * k + p];
            let b_row = &b[p * n..(p + 1) * n];
            for (c_ij, b_pj) in row.iter_mut().zip(b_row) {
                *c_ij += a_ip * b_pj;
            }
        }
    }
}

/// GEMM dimensions (m, n, k) whose 2·m·n·k is closest to `flops`.
#[must_use]
pub fn gemm_dims(flops: f64) -> (usize, usize, usize) {
    if !(flops.is_finite() && flops >= 2.0) {
        return (1, 1, 1);
    }
    let side = ((flops / 2.0).cbrt().floor() as usize).clamp(1, MAX_GEMM_SIDE);
    let k = ((flops / (2.0 * (side * side) as f64)).round() as usize).clamp(1, MAX_GEMM_SIDE * 4);
    (side, side, k)
}

/// Per-stream scratch buffers, reused between ops.
#[derive(Default)]
struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl Scratch {
    /// Runs a GEMM of about `flops` FLOPs; returns C's first element (so the work is used).
    fn gemm(&mut self, flops: f64) -> f32 {
        let (m, n, k) = gemm_dims(flops);
        fill(&mut self.a, m * k, 0.5);
        fill(&mut self.b, k * n, 0.25);
        self.c.clear();
        self.c.resize(m * n, 0.0);
        matmul(&self.a, &self.b, &mut self.c, m, n, k);
        self.c[0]
    }

    /// Copies `bytes` bytes from one scratch buffer into another.
    fn copy(&mut self, bytes: usize) {
        if self.src.len() < bytes {
            self.src.resize(bytes, 1);
        }
        self.dst.resize(bytes.max(self.dst.len()), 0);
        self.dst[..bytes].copy_from_slice(&self.src[..bytes]);
    }
}

fn fill(v: &mut Vec<f32>, len: usize, value: f32) {
    if v.len() != len {
        v.clear();
        v.resize(len, value);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// State shared by the stream threads.
struct Shared<'p> {
    plan: &'p Plan,
    preds: Vec<Vec<petgraph::stable_graph::NodeIndex>>,
    lifetimes: Lifetimes,
    ended: Mutex<(Vec<bool>, Option<String>)>,
    cv: Condvar,
    buffers: Vec<Mutex<Option<Vec<f32>>>>,
    readers_left: Vec<Mutex<usize>>,
    memory: MemoryTracker,
    epoch: Instant,
}

impl Shared<'_> {
    fn alloc(&self, tensor: usize) -> Result<(), ExecError> {
        let t = &self.plan.graph.tensors[tensor];
        if t.bytes > MAX_BUFFER_BYTES {
            return Err(ExecError(format!(
                "tensor {} needs {} bytes, more than the CPU executor's {MAX_BUFFER_BYTES}-byte limit; scale the graph down",
                t.name, t.bytes
            )));
        }
        let words = usize::try_from(t.bytes.div_ceil(4)).unwrap_or(usize::MAX);
        let mut slot = lock(&self.buffers[tensor]);
        if slot.is_none() {
            *slot = Some(vec![0.0; words]);
            self.memory.alloc(t.bytes);
        }
        Ok(())
    }

    fn release(&self, tensor: usize) {
        if lock(&self.buffers[tensor]).take().is_some() {
            self.memory.free(self.plan.graph.tensors[tensor].bytes);
        }
    }

    fn read_done(&self, tensor: usize) {
        let mut left = lock(&self.readers_left[tensor]);
        *left = left.saturating_sub(1);
        if *left == 0 {
            drop(left);
            self.release(tensor);
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn fail(&self, message: String) {
        let mut state = lock(&self.ended);
        state.1.get_or_insert(message);
        self.cv.notify_all();
    }

    /// Runs one stream's program; returns its nodes' timings.
    fn stream(&self, program: &[petgraph::stable_graph::NodeIndex]) -> Vec<(usize, OpTiming)> {
        let graph = &self.plan.graph;
        let mut scratch = Scratch::default();
        let mut out = Vec::with_capacity(program.len());
        for &n in program {
            {
                let mut state = lock(&self.ended);
                loop {
                    if state.1.is_some() {
                        return out;
                    }
                    if self.preds[n.index()].iter().all(|p| state.0[p.index()]) {
                        break;
                    }
                    state = self.cv.wait(state).unwrap_or_else(PoisonError::into_inner);
                }
            }
            let node = &graph.dag[n];
            let start_ns = self.now_ns();
            let outputs = &self.lifetimes.born_at[n.index()];
            for &t in outputs {
                if let Err(e) = self.alloc(t) {
                    self.fail(e.0);
                    return out;
                }
            }
            let first = match &node.kind {
                NodeKind::Compute(ComputeWork { kind, flops, bytes }) => match kind {
                    ComputeKind::Gemm | ComputeKind::Attention => scratch.gemm(*flops),
                    ComputeKind::MemoryBound => {
                        let b = usize::try_from((*bytes / 2.0) as u64).unwrap_or(0);
                        scratch.copy(b.min(MAX_BUFFER_BYTES as usize));
                        0.0
                    }
                },
                NodeKind::CollectiveStart { kind, group, bytes } => {
                    let ranks = graph.groups[*group].ranks.max(1);
                    let volume = (*bytes as f64 * kind.bus_factor(ranks)) as u64;
                    scratch.copy(usize::try_from(volume.min(MAX_BUFFER_BYTES)).unwrap_or(0));
                    1.0
                }
                NodeKind::Wait { .. } => 0.0,
            };
            for &t in node.outputs.iter().chain(outputs) {
                if let Some(buf) = lock(&self.buffers[t]).as_mut() {
                    if let Some(x) = buf.first_mut() {
                        *x = first;
                    }
                }
            }
            let end_ns = self.now_ns();
            for &t in &node.inputs {
                if !graph.tensors[t].persistent {
                    self.read_done(t);
                }
            }
            out.push((n.index(), OpTiming { start_ns, end_ns }));
            let mut state = lock(&self.ended);
            state.0[n.index()] = true;
            self.cv.notify_all();
        }
        out
    }
}

impl Executor for CpuExecutor {
    fn device(&self) -> String {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        format!("cpu ({threads} hardware threads; one OS thread per stream)")
    }

    fn run(&mut self, plan: &Plan) -> Result<Execution, ExecError> {
        let graph = &plan.graph;
        let bound = node_bound(graph);
        if plan.stream_of.len() < bound || plan.stream_of.iter().any(|&s| s >= plan.streams.len()) {
            return Err(ExecError(format!(
                "plan {}: every node needs a stream among the {} streams",
                plan.name,
                plan.streams.len()
            )));
        }
        let lifetimes = Lifetimes::new(graph)?;
        let shared = Shared {
            plan,
            preds: predecessors(graph),
            ended: Mutex::new((vec![false; bound], None)),
            cv: Condvar::new(),
            buffers: (0..graph.tensors.len()).map(|_| Mutex::new(None)).collect(),
            readers_left: lifetimes
                .readers
                .iter()
                .map(|r| Mutex::new(r.len()))
                .collect(),
            memory: MemoryTracker::default(),
            epoch: Instant::now(),
            lifetimes,
        };
        // Graph inputs live from time 0.
        for &t in &shared.lifetimes.inputs {
            shared.alloc(t)?;
        }
        let programs = plan.programs();
        let results: Vec<Vec<(usize, OpTiming)>> = std::thread::scope(|s| {
            let handles: Vec<_> = programs
                .iter()
                .map(|p| s.spawn(|| shared.stream(p)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let state = lock(&shared.ended);
        if let Some(message) = &state.1 {
            return Err(ExecError(message.clone()));
        }
        let finished = state.0.iter().filter(|&&d| d).count();
        if finished < graph.dag.node_count() {
            return Err(ExecError(format!(
                "plan {}: the issue order deadlocks, {finished} of {} nodes ran",
                plan.name,
                graph.dag.node_count()
            )));
        }
        drop(state);
        let mut timings = vec![OpTiming::default(); bound];
        for (i, t) in results.into_iter().flatten() {
            timings[i] = t;
        }
        let makespan_ns = timings.iter().map(|t| t.end_ns).max().unwrap_or(0);
        Ok(Execution {
            timings,
            makespan_ns,
            peak_bytes: shared.memory.peak_bytes(),
        })
    }
}
