//! The CPU executor: streams run on a pool of worker threads, one per core; real f32 work,
//! `std::time::Instant` timing.
//!
//! - GEMM and attention nodes run a real f32 matrix multiplication C = A·B with m = n =
//!   ⌊∛(F/2)⌋ and k = F/(2·m·n) (F the node's FLOPs), so the work matches the node's FLOPs;
//!   the first elements of C are written into the node's output tensor.
//! - Memory-bound nodes copy B/2 bytes (B the node's HBM bytes: half read, half written).
//! - A collective start copies its bus volume (bus_factor(p)·n bytes, the per-rank traffic of
//!   the NCCL-tests convention) on its group's stream and fills its wait's result tensor from
//!   its input: a single-process emulation of the collective, not a network transfer.
//! - Waits do no work; they end when their collective has ended.
//! - Memory: a tensor is a block of the executor's [`Arena`] (best-fit, 512-byte blocks) from
//!   its producer's start to its last reader's end, and carries its tag and one value (the
//!   first element its producer wrote); the reported peak is the arena's high-water mark, so
//!   rounding and fragmentation show. The memory the work touches is each worker's scratch,
//!   sized and touched before the clock starts.
//!
//! A node is ready when every predecessor has ended and its stream has finished the nodes issued
//! before it; a ready node waits in a first-come first-served queue for a free worker (a
//! `Mutex` + `Condvar` over the run's state), and runs to its end on that worker. With fewer
//! cores than busy streams the streams take turns on the cores rather than being time-sliced
//! by the OS, which is what the validation's prediction models
//! (`bubblelab_core::engine::simulate_on_processors`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

use bubblelab_core::cost::{ComputeKind, ComputeWork};
use bubblelab_core::graph::{Graph, NodeKind};
use petgraph::stable_graph::NodeIndex;

use super::arena::{Arena, Block};
use super::{node_bound, predecessors, ExecError, Execution, Executor, Lifetimes, OpTiming, Plan};

/// How long an idle worker spins for new work before it sleeps, ns.
const SPIN_NS: u128 = 50_000_000;

/// Largest GEMM side the executor accepts (a guard against unscaled graphs), elements.
pub const MAX_GEMM_SIDE: usize = 4096;
/// Largest single buffer the executor allocates, bytes (a guard against unscaled graphs).
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;
/// Largest arena, bytes: room for every tensor of a plan at once (a guard against unscaled
/// graphs; `validate` scales its graphs' tensors to 64 MiB together).
pub const MAX_ARENA_BYTES: u64 = 4 << 30;

/// Runs plans on a pool of CPU worker threads. Keeps each worker's scratch buffers (GEMM
/// operands, copy source and destination) between runs; they are sized and touched before a
/// run's clock starts, as a GPU runtime's workspace is allocated before the step it serves.
pub struct CpuExecutor {
    scratch: Vec<Scratch>,
    arena: Arena,
}

impl Default for CpuExecutor {
    /// One worker per hardware thread.
    fn default() -> Self {
        CpuExecutor::with_workers(workers())
    }
}

impl CpuExecutor {
    /// An executor with `workers` worker threads (at least 1).
    #[must_use]
    pub fn with_workers(workers: usize) -> Self {
        CpuExecutor {
            scratch: (0..workers.max(1)).map(|_| Scratch::default()).collect(),
            arena: Arena::default(),
        }
    }

    /// Worker threads.
    #[must_use]
    pub fn workers(&self) -> usize {
        self.scratch.len()
    }
}

/// The machine's hardware threads (the default worker count).
#[must_use]
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Pins the calling thread to the `i`-th core this process may use (modulo their count), so
/// that the OS does not put two workers on one core while another idles; where pinning is not
/// possible the thread stays where the OS put it.
pub fn pin_to_core(i: usize) {
    if let Some(ids) = core_affinity::get_core_ids() {
        if !ids.is_empty() {
            let _ = core_affinity::set_for_current(ids[i % ids.len()]);
        }
    }
}

impl std::fmt::Debug for CpuExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuExecutor")
            .field("workers", &self.scratch.len())
            .field("arena", &self.arena)
            .finish()
    }
}

/// `c = a·b` for row-major a (m×k), b (k×n), c (m×n), f32, on the calling thread: bluss's
/// `matrixmultiply` SGEMM (packed, cache-blocked micro-kernels with the SIMD the CPU has), whose
/// rate varies smoothly with size, unlike a naive triple loop whose rate jumps with cache
/// aliasing at some sides (384³ ran at two thirds of its neighbours' rate here).
///
/// # Panics
/// If a slice is shorter than its matrix.
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "matmul: an operand is shorter than its matrix"
    );
    let stride = |x: usize| isize::try_from(x).expect("matmul: side fits isize");
    let (row_a, row_bc) = (stride(k), stride(n));
    // SAFETY: a, b and c hold at least m·k, k·n and m·n elements (asserted above), row-major with
    // the row strides given and column stride 1; c is a unique borrow, so it aliases neither.
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            row_a,
            1,
            b.as_ptr(),
            row_bc,
            1,
            0.0,
            c.as_mut_ptr(),
            row_bc,
            1,
        );
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

/// Per-stream scratch buffers, reused between ops and runs.
#[derive(Default)]
struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    src: Vec<u8>,
    dst: Vec<u8>,
}

/// Grows `v` to at least `len` elements of `value` (the new part is written, so its pages are
/// touched now, not inside a timed op).
fn reserve<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    if v.len() < len {
        v.resize(len, value);
    }
}

impl Scratch {
    /// Sizes the buffers for every op of `graph` (before the clock starts).
    fn prepare(&mut self, graph: &Graph) {
        for n in graph.dag.node_indices() {
            match &graph.dag[n].kind {
                NodeKind::Compute(ComputeWork { kind, flops, bytes }) => match kind {
                    ComputeKind::Gemm | ComputeKind::Attention => {
                        let (m, n, k) = gemm_dims(*flops);
                        reserve(&mut self.a, m * k, 0.5);
                        reserve(&mut self.b, k * n, 0.25);
                        reserve(&mut self.c, m * n, 0.0);
                    }
                    ComputeKind::MemoryBound => self.reserve_copy(memory_bound_copy(*bytes)),
                },
                NodeKind::CollectiveStart { kind, group, bytes } => {
                    let ranks = graph.groups[*group].ranks.max(1);
                    self.reserve_copy(collective_copy(*bytes, kind.bus_factor(ranks)));
                }
                NodeKind::Wait { .. } => {}
            }
        }
    }

    fn reserve_copy(&mut self, bytes: usize) {
        reserve(&mut self.src, bytes, 1);
        reserve(&mut self.dst, bytes, 0);
    }

    /// Runs a GEMM of about `flops` FLOPs; returns C's first element (so the work is used).
    fn gemm(&mut self, flops: f64) -> f32 {
        let (m, n, k) = gemm_dims(flops);
        reserve(&mut self.a, m * k, 0.5);
        reserve(&mut self.b, k * n, 0.25);
        reserve(&mut self.c, m * n, 0.0);
        matmul(&self.a, &self.b, &mut self.c, m, n, k);
        self.c[0]
    }

    /// Copies `bytes` bytes from one scratch buffer into another.
    fn copy(&mut self, bytes: usize) {
        self.reserve_copy(bytes);
        self.dst[..bytes].copy_from_slice(&self.src[..bytes]);
    }
}

/// Bytes a memory-bound op of `bytes` HBM traffic copies: half read, half written.
fn memory_bound_copy(bytes: f64) -> usize {
    usize::try_from((bytes / 2.0) as u64)
        .unwrap_or(0)
        .min(MAX_BUFFER_BYTES as usize)
}

/// Bytes the emulation of a collective of `bytes` with bus factor `factor` copies.
fn collective_copy(bytes: u64, factor: f64) -> usize {
    usize::try_from(((bytes as f64 * factor) as u64).min(MAX_BUFFER_BYTES)).unwrap_or(0)
}

/// A tensor's tag in its block: its index + 1 (never 0, the value of a fresh block).
fn tag(tensor: usize) -> u32 {
    u32::try_from(tensor + 1).unwrap_or(u32::MAX)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// State shared by the stream threads.
/// What the workers share under one lock: which nodes ended, each stream's next node, which
/// streams have a node queued or running, the ready queue, and the first failure.
struct State {
    ended: Vec<bool>,
    finished: usize,
    cursor: Vec<usize>,
    taken: Vec<bool>,
    ready: std::collections::VecDeque<NodeIndex>,
    running: usize,
    failure: Option<String>,
}

struct Shared<'p> {
    plan: &'p Plan,
    programs: Vec<Vec<NodeIndex>>,
    preds: Vec<Vec<NodeIndex>>,
    lifetimes: Lifetimes,
    state: Mutex<State>,
    cv: Condvar,
    /// Bumped whenever the state changes, so that an idle worker can spin on it without the
    /// lock.
    changes: AtomicU64,
    /// Each live tensor's block of the arena.
    blocks: Vec<Mutex<Option<Block>>>,
    readers_left: Vec<Mutex<usize>>,
    arena: &'p Arena,
    epoch: Instant,
}

impl Shared<'_> {
    fn alloc(&self, tensor: usize) -> Result<(), ExecError> {
        let t = &self.plan.graph.tensors[tensor];
        let mut slot = lock(&self.blocks[tensor]);
        if slot.is_none() {
            // A block of the arena, as a caching allocator hands out: no system call and no
            // page fault inside an op.
            let block = self.arena.alloc(t.bytes).ok_or_else(|| {
                ExecError(format!(
                    "tensor {}: the arena has no free block of {} bytes",
                    t.name, t.bytes
                ))
            })?;
            self.arena.write(block, tag(tensor), 0);
            *slot = Some(block);
        }
        Ok(())
    }

    /// Writes `value` into the live tensor's block.
    fn store(&self, tensor: usize, value: f32) {
        if let Some(block) = *lock(&self.blocks[tensor]) {
            self.arena.write(block, tag(tensor), value.to_bits());
        }
    }

    /// Whether the live tensor's block still holds its tag (no other tensor was given its
    /// bytes).
    fn intact(&self, tensor: usize) -> bool {
        lock(&self.blocks[tensor]).is_none_or(|b| self.arena.tag(b) == tag(tensor))
    }

    fn release(&self, tensor: usize) {
        if let Some(block) = lock(&self.blocks[tensor]).take() {
            self.arena.free(block);
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

    /// Spins until the state changes from `seen` (true) or [`SPIN_NS`] pass (false).
    fn spin_until_change(&self, seen: u64) -> bool {
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                if self.changes.load(Ordering::Acquire) != seen {
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed().as_nanos() > SPIN_NS {
                return false;
            }
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn fail(&self, message: String) {
        let mut state = lock(&self.state);
        state.failure.get_or_insert(message);
        self.changes.fetch_add(1, Ordering::Release);
        self.cv.notify_all();
    }

    /// Queues the next node of every stream that is free and whose next node's predecessors
    /// have all ended, in stream order.
    fn queue_ready(&self, state: &mut State) {
        for (s, program) in self.programs.iter().enumerate() {
            if state.taken[s] {
                continue;
            }
            let Some(&n) = program.get(state.cursor[s]) else {
                continue;
            };
            if self.preds[n.index()].iter().all(|p| state.ended[p.index()]) {
                state.taken[s] = true;
                state.cursor[s] += 1;
                state.ready.push_back(n);
            }
        }
    }

    /// One worker: takes ready nodes first come first served and runs each to its end; returns
    /// the timings of the nodes it ran.
    fn worker(&self, scratch: &mut Scratch) -> Vec<(usize, OpTiming)> {
        let graph = &self.plan.graph;
        let total = graph.dag.node_count();
        let mut out = Vec::new();
        // The node this worker took when it finished its last one.
        let mut next: Option<NodeIndex> = None;
        loop {
            let n = if let Some(n) = next.take() {
                n
            } else {
                let mut state = lock(&self.state);
                loop {
                    if state.failure.is_some() || state.finished == total {
                        return out;
                    }
                    if let Some(n) = state.ready.pop_front() {
                        state.running += 1;
                        break n;
                    }
                    if state.running == 0 {
                        let message = format!(
                            "plan {}: the issue order deadlocks, {} of {total} nodes ran",
                            self.plan.name, state.finished
                        );
                        state.failure.get_or_insert(message);
                        self.changes.fetch_add(1, Ordering::Release);
                        self.cv.notify_all();
                        return out;
                    }
                    // Spin first (a GPU stream does not sleep between kernels, and a core that
                    // sleeps wakes slower and clocks down); sleep only after a long idle.
                    let seen = self.changes.load(Ordering::Acquire);
                    drop(state);
                    if !self.spin_until_change(seen) {
                        state = lock(&self.state);
                        if self.changes.load(Ordering::Acquire) == seen {
                            state = self.cv.wait(state).unwrap_or_else(PoisonError::into_inner);
                        }
                        continue;
                    }
                    state = lock(&self.state);
                }
            };
            let node = &graph.dag[n];
            let start_ns = self.now_ns();
            for &t in &self.lifetimes.born_at[n.index()] {
                if let Err(e) = self.alloc(t) {
                    self.fail(e.0);
                    return out;
                }
            }
            let first = match &node.kind {
                NodeKind::Compute(ComputeWork { kind, flops, bytes }) => match kind {
                    ComputeKind::Gemm | ComputeKind::Attention => scratch.gemm(*flops),
                    ComputeKind::MemoryBound => {
                        scratch.copy(memory_bound_copy(*bytes));
                        0.0
                    }
                },
                NodeKind::CollectiveStart { kind, group, bytes } => {
                    let ranks = graph.groups[*group].ranks.max(1);
                    scratch.copy(collective_copy(*bytes, kind.bus_factor(ranks)));
                    1.0
                }
                NodeKind::Wait { .. } => 0.0,
            };
            for &t in node
                .outputs
                .iter()
                .chain(&self.lifetimes.born_at[n.index()])
            {
                self.store(t, first);
            }
            let end_ns = self.now_ns();
            for &t in &node.inputs {
                if graph.tensors[t].persistent {
                    continue;
                }
                if !self.intact(t) {
                    self.fail(format!(
                        "plan {}: tensor {} was overwritten while {} read it (two live tensors shared arena bytes)",
                        self.plan.name, graph.tensors[t].name, node.name
                    ));
                    return out;
                }
                self.read_done(t);
            }
            out.push((n.index(), OpTiming { start_ns, end_ns }));
            let mut state = lock(&self.state);
            state.ended[n.index()] = true;
            state.finished += 1;
            state.running -= 1;
            state.taken[self.plan.stream_of[n.index()]] = false;
            self.queue_ready(&mut state);
            // Take the first ready node now, first come first served as ever, without letting
            // go of the lock: no hand-off to another worker (and its caches) for the node this
            // one could start at once.
            if state.failure.is_none() {
                if let Some(n) = state.ready.pop_front() {
                    state.running += 1;
                    next = Some(n);
                }
            }
            self.changes.fetch_add(1, Ordering::Release);
            self.cv.notify_all();
        }
    }
}

impl Executor for CpuExecutor {
    fn device(&self) -> String {
        format!(
            "cpu ({} hardware threads; streams on {} worker threads)",
            workers(),
            self.workers()
        )
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
        for scratch in &mut self.scratch {
            scratch.prepare(graph);
        }
        // Room for every tensor at once: the arena never refuses; what the run used is its
        // high-water mark.
        if let Some(t) = graph
            .tensors
            .iter()
            .find(|t| !t.persistent && t.bytes > MAX_BUFFER_BYTES)
        {
            return Err(ExecError(format!(
                "tensor {} needs {} bytes, more than the CPU executor's {MAX_BUFFER_BYTES}-byte limit; scale the graph down",
                t.name, t.bytes
            )));
        }
        let room = Lifetimes::room_bytes(graph);
        if room > MAX_ARENA_BYTES {
            return Err(ExecError(format!(
                "plan {}: its tensors take {room} bytes together, more than the CPU executor's {MAX_ARENA_BYTES}-byte arena; scale the graph down",
                plan.name
            )));
        }
        self.arena
            .reset(usize::try_from(room).unwrap_or(usize::MAX).max(1));
        let programs = plan.programs();
        let streams = programs.len();
        let shared = Shared {
            plan,
            programs,
            preds: predecessors(graph),
            state: Mutex::new(State {
                ended: vec![false; bound],
                finished: 0,
                cursor: vec![0; streams],
                taken: vec![false; streams],
                ready: std::collections::VecDeque::new(),
                running: 0,
                failure: None,
            }),
            cv: Condvar::new(),
            changes: AtomicU64::new(0),
            blocks: (0..graph.tensors.len()).map(|_| Mutex::new(None)).collect(),
            readers_left: lifetimes
                .readers
                .iter()
                .map(|r| Mutex::new(r.len()))
                .collect(),
            arena: &self.arena,
            epoch: Instant::now(),
            lifetimes,
        };
        // Graph inputs live from time 0.
        for &t in &shared.lifetimes.inputs {
            shared.alloc(t)?;
        }
        shared.queue_ready(&mut lock(&shared.state));
        let results: Vec<Vec<(usize, OpTiming)>> = std::thread::scope(|s| {
            let shared = &shared;
            let handles: Vec<_> = self
                .scratch
                .iter_mut()
                .enumerate()
                .map(|(i, scratch)| {
                    s.spawn(move || {
                        pin_to_core(i);
                        shared.worker(scratch)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let state = lock(&shared.state);
        if let Some(message) = &state.failure {
            return Err(ExecError(message.clone()));
        }
        if state.finished < graph.dag.node_count() {
            return Err(ExecError(format!(
                "plan {}: the issue order deadlocks, {} of {} nodes ran",
                plan.name,
                state.finished,
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
            peak_bytes: self.arena.high_water_bytes(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bubblelab_core::graph::Graph;

    fn copy_op(bytes: f64) -> NodeKind {
        NodeKind::Compute(ComputeWork {
            kind: ComputeKind::MemoryBound,
            flops: 0.0,
            bytes,
        })
    }

    /// Two streams of `per_stream` independent copies each.
    fn two_streams(per_stream: usize) -> Plan {
        let mut g = Graph::new();
        let x = g.add_input("x", 64, false);
        let mut stream_of = Vec::new();
        for s in 0..2 {
            for i in 0..per_stream {
                let name = format!("s{s} op{i}");
                let (n, _) = g.add_node(
                    &name,
                    copy_op(2.0 * f64::from(1 << 20)),
                    &[x],
                    &[(&name, 64)],
                );
                stream_of.push((n.index(), s));
            }
        }
        let mut map = vec![0; super::super::node_bound(&g)];
        for (i, s) in stream_of {
            map[i] = s;
        }
        Plan {
            name: "two streams".into(),
            graph: g,
            stream_of: map,
            streams: vec!["a".into(), "b".into()],
        }
    }

    #[test]
    fn one_worker_runs_one_op_at_a_time_in_stream_order() {
        let plan = two_streams(4);
        let e = CpuExecutor::with_workers(1).run(&plan).expect("runs");
        let mut spans: Vec<OpTiming> = plan
            .graph
            .order
            .iter()
            .map(|n| e.timings[n.index()])
            .collect();
        for s in 0..2 {
            let mine: Vec<_> = plan
                .graph
                .order
                .iter()
                .filter(|n| plan.stream_of[n.index()] == s)
                .map(|n| e.timings[n.index()])
                .collect();
            assert!(
                mine.windows(2).all(|w| w[0].end_ns <= w[1].start_ns),
                "{mine:?}"
            );
        }
        spans.sort_by_key(|t| t.start_ns);
        assert!(
            spans.windows(2).all(|w| w[0].end_ns <= w[1].start_ns),
            "one worker never runs two ops at once: {spans:?}"
        );
    }

    #[test]
    fn the_peak_is_the_arenas_high_water_mark_fragmentation_included() {
        // x (64 B) → a (512 B) → b (1 KiB) → c (512 B), one stream: b cannot take x's freed
        // block, so it goes above a; c then fits the hole x and a left. Live bytes peak at
        // a + b = 1.5 KiB; the arena's mark is 4 blocks = 2 KiB.
        let mut g = Graph::new();
        let x = g.add_input("x", 64, false);
        let (_, a) = g.add_node("a", copy_op(128.0), &[x], &[("a", 512)]);
        let (_, b) = g.add_node("b", copy_op(128.0), &[a[0]], &[("b", 1024)]);
        g.add_node("c", copy_op(128.0), &[b[0]], &[("c", 512)]);
        let plan = Plan::simulator_streams("fragments", g);
        let e = CpuExecutor::with_workers(1).run(&plan).expect("runs");
        assert_eq!(e.peak_bytes, 2048);
        let lifetimes = Lifetimes::new(&plan.graph).expect("valid");
        assert_eq!(
            lifetimes.placed_high_water(&plan.graph, &e.timings),
            2048,
            "the prediction's placement of the same timeline"
        );
    }

    #[test]
    fn a_plan_whose_tensors_exceed_the_arena_is_refused_before_it_runs() {
        let mut g = Graph::new();
        let mut x = g.add_input("x", 64, false);
        for i in 0..5 {
            let name = format!("t{i}");
            x = g
                .add_node(&name, copy_op(128.0), &[x], &[(&name, 1 << 30)])
                .1[0];
        }
        let plan = Plan::simulator_streams("huge", g);
        let err = CpuExecutor::with_workers(1)
            .run(&plan)
            .expect_err("refused");
        assert!(err.0.contains("more than the CPU executor's"), "{err}");
    }

    #[test]
    fn an_issue_order_against_the_dependencies_is_a_deadlock_error() {
        let mut g = Graph::new();
        let x = g.add_input("x", 64, false);
        let (a, a_out) = g.add_node("a", copy_op(128.0), &[x], &[("a", 64)]);
        let (b, _) = g.add_node("b", copy_op(128.0), &[a_out[0]], &[("b", 64)]);
        // One stream that issues b before a, which b needs.
        g.order = vec![b, a];
        let plan = Plan {
            name: "backwards".into(),
            stream_of: vec![0; super::super::node_bound(&g)],
            graph: g,
            streams: vec!["s".into()],
        };
        for workers in [1, 2] {
            let err = CpuExecutor::with_workers(workers)
                .run(&plan)
                .expect_err("deadlock");
            assert!(err.0.contains("deadlocks, 0 of 2 nodes ran"), "{err}");
        }
    }
}
