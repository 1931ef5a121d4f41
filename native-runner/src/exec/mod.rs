//! Executors: run an execution graph for real with a strategy's issue order and stream
//! assignment, and measure per-op start/end times (ns) and the peak of the executor's own
//! allocator (bytes).
//!
//! A [`Plan`] is what an executor runs: a graph (already scaled to the device, see [`scale`])
//! and the stream of every node. Streams follow the simulator (`graph::sim`): one compute stream
//! for compute nodes and waits, one stream per communication group for collective starts; a
//! pipeline plan puts each stage on its own stream. Each stream runs its nodes in the graph's
//! issue order, each node once all its predecessors in the DAG have ended.
//!
//! Memory follows the simulator's ledger: a non-persistent tensor is allocated when its producer
//! starts (a wait's result when its collective starts; graph inputs at time 0) and freed when its
//! last reader ends. Persistent tensors (weights) are not counted.

pub mod cpu;
pub mod cuda;

use std::sync::atomic::{AtomicU64, Ordering};

use bubblelab_core::cost::{ComputeKind, ComputeWork, CostModel};
use bubblelab_core::graph::{Graph, NodeKind};
use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;

/// Where a node runs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Case name for tables.
    pub name: String,
    /// The (scaled) graph; its `order` is the issue order.
    pub graph: Graph,
    /// Stream of each node, indexed by `NodeIndex::index()`.
    pub stream_of: Vec<usize>,
    /// Stream names, indexed by stream.
    pub streams: Vec<String>,
}

impl Plan {
    /// The simulator's streams: stream 0 computes (compute nodes and waits), stream 1 + g runs
    /// the collectives of group g.
    #[must_use]
    pub fn simulator_streams(name: &str, graph: Graph) -> Plan {
        let bound = node_bound(&graph);
        let mut stream_of = vec![0; bound];
        for n in graph.dag.node_indices() {
            if let NodeKind::CollectiveStart { group, .. } = graph.dag[n].kind {
                stream_of[n.index()] = 1 + group;
            }
        }
        let mut streams = vec!["compute".to_string()];
        streams.extend(graph.groups.iter().map(|g| format!("{} comm", g.name)));
        Plan {
            name: name.to_string(),
            graph,
            stream_of,
            streams,
        }
    }

    /// Each stream's nodes in issue order.
    #[must_use]
    pub fn programs(&self) -> Vec<Vec<NodeIndex>> {
        let mut programs = vec![Vec::new(); self.streams.len()];
        for &n in &self.graph.order {
            programs[self.stream_of[n.index()]].push(n);
        }
        programs
    }
}

/// One node's measured interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpTiming {
    /// Start, ns since the run began.
    pub start_ns: u64,
    /// End, ns since the run began.
    pub end_ns: u64,
}

/// What one run measured.
#[derive(Clone, Debug)]
pub struct Execution {
    /// Per node (indexed by `NodeIndex::index()`).
    pub timings: Vec<OpTiming>,
    /// Last end − 0, ns.
    pub makespan_ns: u64,
    /// Peak bytes of live tensors in the executor's allocator.
    pub peak_bytes: u64,
}

/// Why an executor could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError(pub String);

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Something that runs a [`Plan`] for real.
pub trait Executor {
    /// The device as it names itself (e.g. `cpu (2 threads per stream set)`).
    fn device(&self) -> String;
    /// Runs the plan once and measures it.
    ///
    /// # Errors
    /// A stuck or malformed plan, or a device failure, in words.
    fn run(&mut self, plan: &Plan) -> Result<Execution, ExecError>;
}

/// Counts the bytes of live tensors: current and peak.
#[derive(Debug, Default)]
pub struct MemoryTracker {
    live_bytes: AtomicU64,
    peak_bytes: AtomicU64,
}

impl MemoryTracker {
    /// Records an allocation of `bytes`.
    pub fn alloc(&self, bytes: u64) {
        let now = self.live_bytes.fetch_add(bytes, Ordering::SeqCst) + bytes;
        self.peak_bytes.fetch_max(now, Ordering::SeqCst);
    }
    /// Records a free of `bytes`.
    pub fn free(&self, bytes: u64) {
        self.live_bytes.fetch_sub(bytes, Ordering::SeqCst);
    }
    /// Peak live bytes so far.
    #[must_use]
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes.load(Ordering::SeqCst)
    }
}

/// One past the largest node index.
#[must_use]
pub fn node_bound(graph: &Graph) -> usize {
    graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0)
}

/// Predecessors of each node (indexed by node index).
#[must_use]
pub fn predecessors(graph: &Graph) -> Vec<Vec<NodeIndex>> {
    let mut preds = vec![Vec::new(); node_bound(graph)];
    for n in graph.dag.node_indices() {
        preds[n.index()] = graph
            .dag
            .neighbors_directed(n, Direction::Incoming)
            .collect();
    }
    preds
}

/// How a graph was shrunk to fit the executor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// FLOPs of every compute node are divided by this.
    pub flops_divisor: f64,
    /// Bytes (tensors, HBM traffic, collective messages) are divided by this.
    pub bytes_divisor: f64,
}

/// Most bytes all of a scaled graph's activations may take together (64 MiB), so that runs fit
/// any machine; the bytes divisor grows to meet it.
pub const MAX_SCALED_TENSOR_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// Chooses divisors so that the scaled step takes about `target_s` seconds on the device
/// `device_cost` describes, split between math (GEMM/attention FLOPs) and bytes (memory-bound
/// traffic and collective volume) as the step is split on the GPU `gpu_cost` models, so that
/// overlap matters as much as there. Divisors are ≥ 1.
#[must_use]
pub fn choose_scale(
    graph: &Graph,
    gpu_cost: &CostModel,
    device_cost: &CostModel,
    target_s: f64,
) -> Scale {
    let (mut flops, mut bytes, mut gpu_math_ns, mut gpu_bytes_ns) = (0.0, 0.0, 0.0, 0.0);
    for n in graph.dag.node_indices() {
        match &graph.dag[n].kind {
            NodeKind::Compute(w) if w.kind == ComputeKind::MemoryBound => {
                bytes += w.bytes;
                gpu_bytes_ns += gpu_cost.compute_ns(w);
            }
            NodeKind::Compute(w) => {
                flops += w.flops;
                gpu_math_ns += gpu_cost.compute_ns(w);
            }
            NodeKind::CollectiveStart {
                kind,
                group,
                bytes: b,
            } => {
                let spec = &graph.groups[*group];
                let g = bubblelab_core::cost::Group::new(spec.ranks, spec.ranks_per_node);
                bytes += *b as f64 * kind.bus_factor(spec.ranks.max(2));
                gpu_bytes_ns += gpu_cost.collective_ns(*kind, *b as f64, g);
            }
            NodeKind::Wait { .. } => {}
        }
    }
    let total = (gpu_math_ns + gpu_bytes_ns).max(1.0);
    let peak_flops = device_cost.gpu.peak_fp32_flops_per_s.max(1.0);
    let bw = device_cost.gpu.hbm_bytes_per_s.max(1.0);
    let math_s = (target_s * gpu_math_ns / total).max(1e-6);
    let bytes_s = (target_s * gpu_bytes_ns / total).max(1e-6);
    let tensor_bytes: f64 = graph
        .tensors
        .iter()
        .filter(|t| !t.persistent)
        .map(|t| t.bytes as f64)
        .sum();
    let wanted = (bytes / (bw * bytes_s))
        .max(tensor_bytes / MAX_SCALED_TENSOR_BYTES)
        .max(1.0);
    // A power of two dividing every size, so that scaling keeps the validator's exact size
    // relations (an AllGather's output is p times its input).
    let mut common = 0u64;
    for t in &graph.tensors {
        common |= t.bytes;
    }
    for n in graph.dag.node_indices() {
        if let NodeKind::CollectiveStart { bytes: b, .. } = graph.dag[n].kind {
            common |= b;
        }
    }
    let max_shift = if common == 0 {
        62
    } else {
        common.trailing_zeros().min(62)
    };
    let mut shift = 0u32;
    while shift < max_shift && (1u64 << (shift + 1)) as f64 <= wanted {
        shift += 1;
    }
    Scale {
        flops_divisor: (flops / (peak_flops * math_s)).max(1.0),
        bytes_divisor: (1u64 << shift) as f64,
    }
}

/// `graph` with FLOPs and bytes divided by `scale` (sizes exactly when the divisor divides
/// them, as [`choose_scale`]'s does; otherwise rounded up).
/// Attention nodes become GEMMs of the same FLOPs: that is what the CPU executor runs for them,
/// so its prediction must use the GEMM curve.
#[must_use]
pub fn scale(graph: &Graph, scale: Scale) -> Graph {
    let mut g = graph.clone();
    let bytes = |b: u64| -> u64 {
        if b == 0 {
            return 0;
        }
        ((b as f64 / scale.bytes_divisor).ceil() as u64).max(1)
    };
    for t in &mut g.tensors {
        t.bytes = bytes(t.bytes);
    }
    let ids: Vec<NodeIndex> = g.dag.node_indices().collect();
    for n in ids {
        match &mut g.dag[n].kind {
            NodeKind::Compute(w) => {
                *w = ComputeWork {
                    kind: if w.kind == ComputeKind::Attention {
                        ComputeKind::Gemm
                    } else {
                        w.kind
                    },
                    flops: w.flops / scale.flops_divisor,
                    bytes: w.bytes / scale.bytes_divisor,
                };
            }
            NodeKind::CollectiveStart { bytes: b, .. } => *b = bytes(*b),
            NodeKind::Wait { .. } => {}
        }
    }
    g
}

/// Median of `values` (the lower middle for an even count); 0 for none.
#[must_use]
pub fn median(values: &mut [u64]) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    values[(values.len() - 1) / 2]
}
