//! AsyncTP-style: PyTorch Inductor's `micro_pipeline_tp` pass (asynchronous tensor
//! parallelism), which replaces TP collectives and their GEMMs by the fused ops of
//! `torch.distributed._symmetric_memory` (`fused_all_gather_matmul`,
//! `fused_matmul_reduce_scatter`). What it matches, from
//! `torch/_inductor/fx_passes/micro_pipeline_tp.py` (`find_all_gather_patterns`,
//! `_find_consumer_matmuls`, `fuse_all_gather_matmul`, `find_reduce_scatter_patterns`,
//! `fuse_matmul_reduce_scatter`, `micro_pipeline_tp_pass`):
//!
//! - **AllGather → matmul(s).** Every matmul that reads the gathered tensor as its left operand
//!   `A` (rows are tokens) with a right operand `B` that does not depend on the gather is fused
//!   with the AllGather into one op: the p steps of a ring, each computing *every* such matmul
//!   on the shard at hand while the next shard travels one hop. Other readers of the gathered
//!   tensor are kept and read the gathered `A` that the fused op also returns (`return_A`): in
//!   a training graph that is the weight gradient, which reads the layer input again.
//! - **matmul → ReduceScatter.** A ReduceScatter whose input is a matmul's output read by
//!   nothing else becomes p steps: the rows bound for the next rank, sent one hop while the
//!   next rows are computed, then added to the partial sum received (a memory-bound add).
//!
//! The pass runs in `post_grad_passes` (`torch/_inductor/fx_passes/post_grad.py`), which
//! Inductor runs on the forward *and* the backward graph (`_recursive_post_grad_passes` in
//! `compile_fx.py`), so it rewrites the backward's conjugate collectives too: the AllGather of
//! the output gradient before a row-parallel layer's input-gradient GEMM, and the input-gradient
//! GEMM before the ReduceScatter of a column-parallel layer's input gradient. Our graph is the
//! joint forward + backward graph, so one pass over it covers both. A weight-gradient GEMM is
//! never fused: it contracts over the tokens the AllGather concatenates ("decomposing the
//! matmul on the K dimension is not supported"), and its gathered operand reaches `mm` through
//! a transpose, which `_find_consumer_matmuls` does not follow. Every other collective stays
//! serial. As in the PyTorch pass, all AllGather fusions are made before the ReduceScatter
//! ones, so a GEMM fused with its AllGather is not also fused with a ReduceScatter. We model
//! the pass with Inductor's default `reorder_for_compute_comm_overlap = False` (with it, the
//! pass first leaves out collectives that simple reordering could hide). p is the TP group's
//! size; the gathers here are along the sequence (dimension 0), so the last-dimension rules
//! (shards of at least 1024 columns) do not arise.
//!
//! The steps keep the math (the interpreter checks it): a ring hop receives the block of the
//! member before on the ring; step i of AllGather→matmul computes on the shard of the member i
//! hops behind and its output lands at that member's place in the sequence
//! ([`Op::RingConcat`], which also rebuilds the gathered `A` from the shards); step i of
//! matmul→ReduceScatter computes the rows of sequence chunk (c − i − 1) mod p
//! ([`Op::RingChunk`]), so after p − 1 hops rank c holds the sum of chunk c.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;

use crate::cost::{CollectiveKind, ComputeKind, ComputeWork};
use crate::graph::validate::{validate, GraphError};
use crate::graph::{Dim, Edge, Graph, NodeKind, Op, Shape, TensorId};
use crate::labs::overlap::passes::{
    add, persistent_input_bytes, split_shape, view_work, NO_OUTPUTS,
};
use crate::labs::overlap::schedule::node_bound;

/// What the pass fused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fused {
    /// TP AllGathers fused with their consumer GEMMs.
    pub all_gathers: usize,
    /// GEMMs fused with those AllGathers (one AllGather may feed several).
    pub gathered_gemms: usize,
    /// TP ReduceScatters fused with the GEMM that produces their input.
    pub reduce_scatters: usize,
}

impl Fused {
    /// Collectives fused with GEMMs.
    #[must_use]
    pub fn collectives(&self) -> usize {
        self.all_gathers + self.reduce_scatters
    }
}

/// Readers of each tensor.
fn readers(g: &Graph) -> Vec<Vec<NodeIndex>> {
    let mut r = vec![Vec::new(); g.tensors.len()];
    for n in g.dag.node_indices() {
        for &t in &g.dag[n].inputs {
            r[t].push(n);
        }
    }
    r
}

fn wait_of(g: &Graph, start: NodeIndex) -> Option<NodeIndex> {
    g.dag
        .neighbors_directed(start, Direction::Outgoing)
        .find(|&w| matches!(g.dag[w].kind, NodeKind::Wait { start: s } if s == start))
}

/// Whether `n` is a GEMM that computes its output row by row (token by token) from its left
/// operand, its first input: a linear or a linear's input gradient (or a GEMM without op
/// semantics), every other input a weight (a persistent graph input, so it cannot depend on a
/// collective's result), one output. A weight gradient is not: it sums over the tokens.
fn row_gemm(g: &Graph, n: NodeIndex) -> bool {
    let node = &g.dag[n];
    matches!(&node.kind, NodeKind::Compute(w) if w.kind == ComputeKind::Gemm)
        && matches!(node.op, None | Some(Op::Linear | Op::InputGrad { .. }))
        && !node.inputs.is_empty()
        && node.inputs[1..]
            .iter()
            .all(|&t| g.tensors[t].producer.is_none() && g.tensors[t].persistent)
        && node.outputs.len() == 1
}

/// Whether `n` has a control dependency: the fused op runs where the AllGather starts, so a
/// consumer GEMM ordered after other work (an imported graph's control edge) stays unfused.
fn ordered_after_other_work(g: &Graph, n: NodeIndex) -> bool {
    g.dag
        .edges_directed(n, Direction::Incoming)
        .any(|e| *e.weight() == Edge::Control)
}

/// The TP collective a start launches, if it is one on a group of two or more ranks.
fn tp_collective(g: &Graph, n: NodeIndex) -> Option<(CollectiveKind, crate::graph::GroupId)> {
    let NodeKind::CollectiveStart { kind, group, .. } = g.dag[n].kind else {
        return None;
    };
    (g.groups[group].name == "tp" && g.groups[group].ranks >= 2).then_some((kind, group))
}

fn chunk(work: &ComputeWork, p: f64, fixed: f64) -> ComputeWork {
    ComputeWork {
        kind: work.kind,
        flops: work.flops / p,
        bytes: (work.bytes - fixed).max(0.0) / p + fixed,
    }
}

/// A tensor's name, bytes and shape, for [`add`].
fn spec(g: &Graph, t: TensorId) -> (String, u64, Option<Shape>) {
    let tensor = &g.tensors[t];
    (tensor.name.clone(), tensor.bytes, tensor.shape)
}

/// `graph` with its TP AllGather→GEMM(s) and GEMM→ReduceScatter patterns fused into ring
/// steps, forward and backward; also returns what was fused.
///
/// # Errors
/// The validator's error (a bug).
#[allow(clippy::too_many_lines)]
pub fn async_tp(graph: &Graph) -> Result<(Graph, Fused), GraphError> {
    let readers = readers(graph);
    let bound = node_bound(graph);
    let mut fused = Fused::default();
    // Decisions: AG start → its consumer GEMMs; GEMM → its RS start. AllGathers first, as in
    // `micro_pipeline_tp_pass`.
    let mut skip = vec![false; bound];
    let mut ag_gemms: Vec<Vec<NodeIndex>> = vec![Vec::new(); bound];
    let mut gemm_rs: Vec<Option<NodeIndex>> = vec![None; bound];
    for &n in &graph.order {
        let Some((CollectiveKind::AllGather, _)) = tp_collective(graph, n) else {
            continue;
        };
        let Some(w) = wait_of(graph, n) else { continue };
        let (&[_], &[out]) = (&graph.dag[n].inputs[..], &graph.dag[w].outputs[..]) else {
            continue;
        };
        let mut gemms: Vec<NodeIndex> = readers[out]
            .iter()
            .copied()
            .filter(|&r| {
                row_gemm(graph, r)
                    && graph.dag[r].inputs[0] == out
                    && !skip[r.index()]
                    && !ordered_after_other_work(graph, r)
            })
            .collect();
        gemms.sort_unstable_by_key(|g| graph.order.iter().position(|o| o == g));
        gemms.dedup();
        if gemms.is_empty() {
            continue;
        }
        skip[w.index()] = true;
        for &g in &gemms {
            skip[g.index()] = true;
        }
        fused.all_gathers += 1;
        fused.gathered_gemms += gemms.len();
        ag_gemms[n.index()] = gemms;
    }
    for &n in &graph.order {
        let Some((CollectiveKind::ReduceScatter, _)) = tp_collective(graph, n) else {
            continue;
        };
        let Some(w) = wait_of(graph, n) else { continue };
        let (&[inp], &[_]) = (&graph.dag[n].inputs[..], &graph.dag[w].outputs[..]) else {
            continue;
        };
        let Some(gemm) = graph.tensors[inp].producer else {
            continue;
        };
        // Its result is read by the ReduceScatter only (the fused op does not return it).
        if row_gemm(graph, gemm) && readers[inp].len() == 1 && !skip[gemm.index()] {
            gemm_rs[gemm.index()] = Some(n);
            skip[n.index()] = true;
            skip[w.index()] = true;
            fused.reduce_scatters += 1;
        }
    }

    let mut g = Graph::new();
    g.groups.clone_from(&graph.groups);
    let mut map: Vec<Option<usize>> = vec![None; graph.tensors.len()];
    for (t, tensor) in graph.tensors.iter().enumerate() {
        if tensor.producer.is_none() {
            let id = g.add_input(&tensor.name, tensor.bytes, tensor.persistent);
            g.tensors[id].shape = tensor.shape;
            map[t] = Some(id);
        }
    }
    // The first and last new node standing for each old node (control edges attach there).
    let mut first: Vec<Option<NodeIndex>> = vec![None; bound];
    let mut last: Vec<Option<NodeIndex>> = vec![None; bound];
    let m = |map: &[Option<usize>], t: usize| map[t].unwrap_or(t);
    for &n in &graph.order {
        let node = &graph.dag[n];
        if !ag_gemms[n.index()].is_empty() {
            let NodeKind::CollectiveStart { group, .. } = node.kind else {
                continue;
            };
            let Some(w) = wait_of(graph, n) else { continue };
            let gathered = graph.dag[w].outputs[0];
            let consumers = &ag_gemms[n.index()];
            let p = graph.groups[group].ranks;
            let p64 = u64::from(p);
            let shard = m(&map, node.inputs[0]);
            let (_, shard_bytes, shard_shape) = spec(&g, shard);
            let mut shards = vec![shard];
            let mut steps: Vec<Vec<TensorId>> = vec![Vec::new(); consumers.len()];
            let mut current = shard;
            for i in 0..p {
                let hop = (i + 1 < p).then(|| {
                    add(
                        &mut g,
                        &format!("{}.ring{}", node.name, i + 1),
                        NodeKind::CollectiveStart {
                            kind: CollectiveKind::SendRecv,
                            group,
                            bytes: shard_bytes,
                        },
                        None,
                        &[current],
                        NO_OUTPUTS,
                    )
                    .0
                });
                if let Some(s) = hop {
                    first[n.index()].get_or_insert(s);
                    last[n.index()] = Some(s);
                }
                for (j, &gemm) in consumers.iter().enumerate() {
                    let gnode = &graph.dag[gemm];
                    let NodeKind::Compute(work) = &gnode.kind else {
                        continue;
                    };
                    let fixed = persistent_input_bytes(graph, gnode) as f64;
                    let (out_name, out_bytes, out_shape) = spec(graph, gnode.outputs[0]);
                    let mut inputs = vec![current];
                    inputs.extend(gnode.inputs[1..].iter().map(|&t| m(&map, t)));
                    let (s, o) = add(
                        &mut g,
                        &format!("{}.step{i}", gnode.name),
                        NodeKind::Compute(chunk(work, f64::from(p), fixed)),
                        gnode.op.clone(),
                        &inputs,
                        &[(
                            format!("{out_name}.step{i}"),
                            out_bytes / p64,
                            out_shape.map(|s| split_shape(s, Dim::Sequence, p64)),
                        )],
                    );
                    first[gemm.index()].get_or_insert(s);
                    steps[j].push(o[0]);
                }
                if let Some(s) = hop {
                    let (wt, o) = add(
                        &mut g,
                        &format!("{}.ring{}.wait", node.name, i + 1),
                        NodeKind::Wait { start: s },
                        None,
                        &[],
                        &[(
                            format!("{}.shard{}", node.name, i + 1),
                            shard_bytes,
                            shard_shape,
                        )],
                    );
                    g.control(s, wt);
                    first[w.index()].get_or_insert(wt);
                    last[w.index()] = Some(wt);
                    current = o[0];
                    shards.push(current);
                }
            }
            // Each output is a view: step i's rows sit at its member's place in the sequence.
            for (j, &gemm) in consumers.iter().enumerate() {
                let out_t = graph.dag[gemm].outputs[0];
                let (c, full) = add(
                    &mut g,
                    &format!("{}.concat", graph.tensors[out_t].name),
                    NodeKind::Compute(view_work()),
                    Some(Op::RingConcat { group }),
                    &steps[j],
                    &[spec(graph, out_t)],
                );
                last[gemm.index()] = Some(c);
                map[out_t] = Some(full[0]);
            }
            // The gathered A, for its other readers (`return_A`): the shards received, in place.
            if readers[gathered].len() > consumers.len() {
                let (c, a) = add(
                    &mut g,
                    &format!("{}.concat", graph.tensors[gathered].name),
                    NodeKind::Compute(view_work()),
                    Some(Op::RingConcat { group }),
                    &shards,
                    &[spec(graph, gathered)],
                );
                last[w.index()] = Some(c);
                map[gathered] = Some(a[0]);
            }
            continue;
        }
        if let Some(rs) = gemm_rs[n.index()] {
            let NodeKind::CollectiveStart { group, .. } = graph.dag[rs].kind else {
                continue;
            };
            let Some(w) = wait_of(graph, rs) else {
                continue;
            };
            let p = graph.groups[group].ranks;
            let NodeKind::Compute(work) = &node.kind else {
                continue;
            };
            let fixed = persistent_input_bytes(graph, node) as f64;
            let step_work = chunk(work, f64::from(p), fixed);
            let inputs: Vec<usize> = node.inputs.iter().map(|&t| m(&map, t)).collect();
            let part_bytes = graph.tensors[node.outputs[0]].bytes / u64::from(p);
            let part_shape = graph.tensors[node.outputs[0]]
                .shape
                .map(|s| split_shape(s, Dim::Sequence, u64::from(p)));
            let step_op = |step: u32| {
                let of = node.op.clone()?;
                Some(Op::RingChunk {
                    group,
                    step: u64::from(step),
                    of: Box::new(of),
                })
            };
            let add_work = ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: (part_bytes / 2) as f64,
                bytes: (3 * part_bytes) as f64,
            };
            let rs_name = &graph.dag[rs].name;
            let (s0, o) = add(
                &mut g,
                &format!("{}.step0", node.name),
                NodeKind::Compute(step_work),
                step_op(0),
                &inputs,
                &[(format!("{}.step0", node.name), part_bytes, part_shape)],
            );
            first[n.index()] = Some(s0);
            let mut acc = o[0];
            let mut end = s0;
            for i in 1..p {
                let (s, _) = add(
                    &mut g,
                    &format!("{rs_name}.ring{i}"),
                    NodeKind::CollectiveStart {
                        kind: CollectiveKind::SendRecv,
                        group,
                        bytes: part_bytes,
                    },
                    None,
                    &[acc],
                    NO_OUTPUTS,
                );
                let (_, part) = add(
                    &mut g,
                    &format!("{}.step{i}", node.name),
                    NodeKind::Compute(step_work),
                    step_op(i),
                    &inputs,
                    &[(format!("{}.step{i}", node.name), part_bytes, part_shape)],
                );
                let (wt, recv) = add(
                    &mut g,
                    &format!("{rs_name}.ring{i}.wait"),
                    NodeKind::Wait { start: s },
                    None,
                    &[],
                    &[(format!("{rs_name}.partial{i}"), part_bytes, part_shape)],
                );
                g.control(s, wt);
                let (a, sum) = add(
                    &mut g,
                    &format!("{rs_name}.add{i}"),
                    NodeKind::Compute(add_work),
                    node.op.is_some().then_some(Op::Add),
                    &[recv[0], part[0]],
                    &[(format!("{rs_name}.sum{i}"), part_bytes, part_shape)],
                );
                acc = sum[0];
                end = a;
            }
            for old in [n, rs, w] {
                last[old.index()] = Some(end);
            }
            first[rs.index()] = Some(end);
            first[w.index()] = Some(end);
            if let [out] = graph.dag[w].outputs[..] {
                map[out] = Some(acc);
            }
            continue;
        }
        if skip[n.index()] {
            continue;
        }
        let inputs: Vec<usize> = node.inputs.iter().map(|&t| m(&map, t)).collect();
        let kind = match node.kind {
            NodeKind::Wait { start } => NodeKind::Wait {
                start: last[start.index()].unwrap_or(start),
            },
            ref k => k.clone(),
        };
        let outs: Vec<(String, u64, Option<Shape>)> =
            node.outputs.iter().map(|&t| spec(graph, t)).collect();
        let (c, o) = add(
            &mut g,
            &node.name,
            kind.clone(),
            node.op.clone(),
            &inputs,
            &outs,
        );
        if let NodeKind::Wait { start } = kind {
            g.control(start, c);
        }
        first[n.index()] = Some(c);
        last[n.index()] = Some(c);
        for (j, &t) in node.outputs.iter().enumerate() {
            map[t] = Some(o[j]);
        }
    }
    for e in graph.dag.edge_indices() {
        let Some((u, v)) = graph.dag.edge_endpoints(e) else {
            continue;
        };
        if graph.dag[e] != Edge::Control
            || matches!(graph.dag[v].kind, NodeKind::Wait { start } if start == u)
        {
            continue;
        }
        if let (Some(a), Some(b)) = (last[u.index()], first[v.index()]) {
            if a != b {
                g.control(a, b);
            }
        }
    }
    validate(&g)?;
    Ok((g, fused))
}
