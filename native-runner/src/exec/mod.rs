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
//! Memory follows the simulator's ledger rule ([`Lifetimes`]): a non-persistent tensor is
//! allocated when its producer starts (a wait's result when its collective starts; graph inputs
//! at time 0) and freed when its last reader ends. Persistent tensors (weights) are not counted.
//! The peak an executor reports is its allocator's own high-water mark (the CPU executor's
//! [`arena::Arena`], the CUDA device's pool), so rounding and fragmentation show.

pub mod arena;
pub mod cpu;
pub mod cuda;

use bubblelab_core::cost::{ComputeKind, ComputeWork, CostModel};
use bubblelab_core::graph::{Graph, NodeKind, TensorId};
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
    /// High-water mark of the executor's tensor allocator over the run, bytes.
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

/// The simulator's memory-ledger rule for one graph, shared by the executors: which tensors a
/// node allocates when it starts and which nodes read each tensor.
///
/// A node allocates its outputs when it starts; a collective start also allocates its wait's
/// result (the collective writes it). Graph inputs (no producer) live from time 0. A tensor is
/// freed when its last reader ends, or lives to the end of the step when nothing reads it.
/// Persistent tensors (weights) are never counted.
#[derive(Clone, Debug)]
pub struct Lifetimes {
    /// Non-persistent tensors each node allocates when it starts (indexed by node index).
    pub born_at: Vec<Vec<TensorId>>,
    /// Nodes that read each tensor (indexed by tensor id).
    pub readers: Vec<Vec<NodeIndex>>,
    /// Non-persistent graph inputs, live from time 0.
    pub inputs: Vec<TensorId>,
}

impl Lifetimes {
    /// The ledger rule of `graph`.
    ///
    /// # Errors
    /// A node that reads or writes a tensor that does not exist, named.
    pub fn new(graph: &Graph) -> Result<Lifetimes, ExecError> {
        let tensors = graph.tensors.len();
        let mut born_at = vec![Vec::new(); node_bound(graph)];
        let mut readers = vec![Vec::new(); tensors];
        for n in graph.dag.node_indices() {
            let node = &graph.dag[n];
            for &t in node.inputs.iter().chain(&node.outputs) {
                if t >= tensors {
                    return Err(ExecError(format!(
                        "node {} uses tensor {t}, which does not exist ({tensors} tensors)",
                        node.name
                    )));
                }
            }
            for &t in &node.inputs {
                readers[t].push(n);
            }
            let mut born: Vec<TensorId> = node.outputs.clone();
            if let NodeKind::CollectiveStart { .. } = node.kind {
                for w in graph.dag.neighbors_directed(n, Direction::Outgoing) {
                    if matches!(graph.dag[w].kind, NodeKind::Wait { start } if start == n) {
                        born.extend(graph.dag[w].outputs.iter().copied());
                    }
                }
            }
            born.retain(|&t| !graph.tensors[t].persistent);
            born_at[n.index()] = born;
        }
        // A wait's result is born at its collective's start, not at the wait.
        for n in graph.dag.node_indices() {
            if let NodeKind::Wait { start } = graph.dag[n].kind {
                if graph.dag.contains_node(start) {
                    born_at[n.index()].clear();
                }
            }
        }
        let inputs = (0..tensors)
            .filter(|&t| graph.tensors[t].producer.is_none() && !graph.tensors[t].persistent)
            .collect();
        Ok(Lifetimes {
            born_at,
            readers,
            inputs,
        })
    }

    /// Room for every non-persistent tensor of `graph` at once, in whole arena blocks: the
    /// arena an executor run (or its prediction) places tensors in.
    #[must_use]
    pub fn room_bytes(graph: &Graph) -> u64 {
        graph
            .tensors
            .iter()
            .filter(|t| !t.persistent)
            .map(|t| arena::rounded(t.bytes))
            .sum()
    }

    /// The high-water mark [`arena::BestFit`] reaches when `graph`'s nodes run at `timings`
    /// (ns, indexed by node index) and tensors come and go by the ledger rule, in the order a
    /// run would: graph inputs first; then node by node in order of start (issue position on
    /// ties), each node's tensors placed at its start after every tensor whose last reader
    /// ended before it (or at its start, having started before it) was returned. A tensor
    /// nothing reads is never returned. What an executor's arena would report had the run gone
    /// as `timings` say.
    #[must_use]
    pub fn placed_high_water(&self, graph: &Graph, timings: &[OpTiming]) -> u64 {
        let at = |n: NodeIndex| timings.get(n.index()).copied().unwrap_or_default();
        let mut nodes: Vec<NodeIndex> = graph.order.clone();
        nodes.sort_by_key(|&n| at(n).start_ns); // stable: issue position on ties
        let mut rank = vec![usize::MAX; self.born_at.len()];
        for (r, n) in nodes.iter().enumerate() {
            rank[n.index()] = r;
        }
        // Each tensor's return: (end of its last reader, that reader's rank).
        let returned: Vec<Option<(u64, usize)>> = self
            .readers
            .iter()
            .map(|rs| rs.iter().map(|&r| (at(r).end_ns, rank[r.index()])).max())
            .collect();
        let room = usize::try_from(Self::room_bytes(graph)).unwrap_or(usize::MAX);
        let mut fit = arena::BestFit::new(room);
        let mut pending = std::collections::BinaryHeap::new();
        // Places tensor `t`; its block waits in `pending` for its return.
        let place = |t: TensorId,
                     fit: &mut arena::BestFit,
                     pending: &mut std::collections::BinaryHeap<_>| {
            if let (Some(b), Some(key)) = (fit.alloc(graph.tensors[t].bytes), returned[t]) {
                pending.push(std::cmp::Reverse((key, b.offset, b.len)));
            }
        };
        for &t in &self.inputs {
            place(t, &mut fit, &mut pending);
        }
        for (r, &n) in nodes.iter().enumerate() {
            let start_ns = at(n).start_ns;
            while let Some(&std::cmp::Reverse(((end_ns, reader), offset, len))) = pending.peek() {
                if end_ns > start_ns || (end_ns == start_ns && reader >= r) {
                    break;
                }
                pending.pop();
                fit.free(arena::Block { offset, len });
            }
            for &t in &self.born_at[n.index()] {
                place(t, &mut fit, &mut pending);
            }
        }
        fit.high_water_bytes()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use bubblelab_core::cost::CollectiveKind;

    fn gemm(flops: f64) -> ComputeWork {
        ComputeWork {
            kind: ComputeKind::Gemm,
            flops,
            bytes: 0.0,
        }
    }

    /// x → a → AllReduce(tp) → wait → b, plus a DP collective of a weight-free gradient.
    fn graph() -> (Graph, [NodeIndex; 5], [TensorId; 4]) {
        let mut g = Graph::new();
        let tp = g.add_group("tp", 2, 2);
        let dp = g.add_group("dp", 4, 4);
        let x = g.add_input("x", 100, false);
        let w = g.add_input("w", 1000, true);
        let (a, a_out) = g.add_node("a", NodeKind::Compute(gemm(16.0)), &[x, w], &[("a", 10)]);
        let (start, wait, r) = g.collective("ar", CollectiveKind::AllReduce, tp, 10, a_out[0], 20);
        let (b, _) = g.add_node("b", NodeKind::Compute(gemm(16.0)), &[r], &[("b", 30)]);
        let (d, _, _) = g.collective("dp", CollectiveKind::AllReduce, dp, 10, a_out[0], 10);
        (g, [a, start, wait, b, d], [x, a_out[0], r, w])
    }

    #[test]
    fn simulator_streams_put_collectives_on_their_group_stream_in_issue_order() {
        let (g, [a, start, wait, b, d], _) = graph();
        let plan = Plan::simulator_streams("t", g);
        assert_eq!(plan.streams, ["compute", "tp comm", "dp comm"]);
        assert_eq!(plan.stream_of[start.index()], 1);
        assert_eq!(plan.stream_of[d.index()], 2);
        let programs = plan.programs();
        assert_eq!(programs[1], [start]);
        assert_eq!(programs[2], [d]);
        // Compute and waits stay on stream 0 in issue order (the dp wait is issued last).
        assert_eq!(&programs[0][..3], &[a, wait, b]);
    }

    #[test]
    fn lifetimes_follow_the_simulator_ledger() {
        let (g, [a, start, wait, b, _], [x, a_out, r, w]) = graph();
        let l = Lifetimes::new(&g).expect("valid");
        assert_eq!(l.inputs, [x], "weights are not counted");
        assert_eq!(l.born_at[a.index()], [a_out]);
        assert_eq!(
            l.born_at[start.index()],
            [r],
            "a wait's result is born at its start"
        );
        assert!(l.born_at[wait.index()].is_empty());
        assert_eq!(
            l.readers[a_out].len(),
            2,
            "the TP and the DP collective read a"
        );
        assert_eq!(l.readers[w], [a]);
        // a 0–10, start 10–30, wait 30, b 30–40; the DP collective 10–50 frees a at 50.
        let mut t = vec![OpTiming::default(); node_bound(&g)];
        let at = |s, e| OpTiming {
            start_ns: s,
            end_ns: e,
        };
        t[a.index()] = at(0, 10);
        t[start.index()] = at(10, 30);
        t[wait.index()] = at(30, 30);
        t[b.index()] = at(30, 40);
        let last = g.order[g.order.len() - 2];
        t[last.index()] = at(10, 50);
        // One 512-byte block each: x, then a; at 10 x is returned (a ended) and r takes its
        // block, the DP result goes on top; b on top at 30: four blocks.
        assert_eq!(l.placed_high_water(&g, &t), 4 * 512);
        // Were b to start after a's last reader (the DP collective) ended, it would take a's
        // block: three.
        t[b.index()] = at(60, 70);
        assert_eq!(l.placed_high_water(&g, &t), 3 * 512);
        let mut bad = g.clone();
        bad.dag[b].inputs.push(99);
        assert!(Lifetimes::new(&bad)
            .expect_err("bad tensor")
            .0
            .contains("node b uses tensor 99"));
    }
}
