//! AsyncTP-style: PyTorch's asynchronous tensor parallelism (the micro-pipelining of
//! `torch.distributed._symmetric_memory`'s fused all-gather-matmul and matmul-reduce-scatter).
//!
//! - AllGather → GEMM on the TP group becomes p steps: the GEMM on the local shard first, and
//!   while step i's GEMM runs on the shard received in step i−1, the next shard travels one hop
//!   of the ring (a send/receive of one shard); the p partial outputs are concatenated (a view).
//! - GEMM → ReduceScatter becomes p steps: the GEMM of the rows bound for the next rank, sent
//!   one hop while the next rows are computed, then added to the partial sum received (a
//!   memory-bound add); after p−1 hops each rank holds its reduced shard.
//!
//! Only these two patterns change (a GEMM that is the AllGather's only consumer; a GEMM whose
//! only consumer is the ReduceScatter); every other collective stays serial. p is the TP group's
//! size.
//!
//! The steps keep the math (the interpreter checks it): a ring hop receives the block of the
//! member before on the ring; step i of AllGather→GEMM computes on the shard of the member i
//! hops behind and its output lands at that member's place in the sequence
//! ([`Op::RingConcat`]); step i of GEMM→ReduceScatter computes the rows of sequence chunk
//! (c − i − 1) mod p ([`Op::RingChunk`]), so after p − 1 hops rank c holds the sum of chunk c.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;

use crate::cost::{CollectiveKind, ComputeKind, ComputeWork};
use crate::graph::validate::{validate, GraphError};
use crate::graph::{Dim, Edge, Graph, NodeKind, Op};
use crate::labs::overlap::passes::{add, persistent_input_bytes, split_shape, NO_OUTPUTS};
use crate::labs::overlap::schedule::node_bound;

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

fn is_gemm(g: &Graph, n: NodeIndex) -> bool {
    matches!(&g.dag[n].kind, NodeKind::Compute(w) if w.kind == ComputeKind::Gemm)
}

fn chunk(work: &ComputeWork, p: f64, fixed: f64) -> ComputeWork {
    ComputeWork {
        kind: work.kind,
        flops: work.flops / p,
        bytes: (work.bytes - fixed).max(0.0) / p + fixed,
    }
}

/// `graph` with its TP AllGather→GEMM and GEMM→ReduceScatter pairs decomposed; also returns
/// how many pairs were decomposed.
///
/// # Errors
/// The validator's error (a bug).
#[allow(clippy::too_many_lines)]
pub fn async_tp(graph: &Graph) -> Result<(Graph, usize), GraphError> {
    let readers = readers(graph);
    let bound = node_bound(graph);
    // Decisions: AG start → its GEMM; GEMM → its RS start.
    let mut skip = vec![false; bound];
    let mut ag_gemm: Vec<Option<NodeIndex>> = vec![None; bound];
    let mut gemm_rs: Vec<Option<NodeIndex>> = vec![None; bound];
    let mut pairs = 0usize;
    for n in graph.dag.node_indices() {
        let NodeKind::CollectiveStart { kind, group, .. } = graph.dag[n].kind else {
            continue;
        };
        if graph.groups[group].name != "tp" || graph.groups[group].ranks < 2 {
            continue;
        }
        let Some(w) = wait_of(graph, n) else { continue };
        match kind {
            CollectiveKind::AllGather => {
                let [out] = graph.dag[w].outputs[..] else {
                    continue;
                };
                if let [gemm] = readers[out][..] {
                    if is_gemm(graph, gemm) && ag_gemm[n.index()].is_none() {
                        ag_gemm[n.index()] = Some(gemm);
                        skip[w.index()] = true;
                        skip[gemm.index()] = true;
                        pairs += 1;
                    }
                }
            }
            CollectiveKind::ReduceScatter => {
                let [inp] = graph.dag[n].inputs[..] else {
                    continue;
                };
                let Some(gemm) = graph.tensors[inp].producer else {
                    continue;
                };
                let [out] = graph.dag[w].outputs[..] else {
                    continue;
                };
                if is_gemm(graph, gemm)
                    && readers[inp].len() == 1
                    && graph.dag[gemm].outputs.len() == 1
                    && !skip[gemm.index()]
                {
                    gemm_rs[gemm.index()] = Some(n);
                    skip[n.index()] = true;
                    skip[w.index()] = true;
                    let _ = out;
                    pairs += 1;
                }
            }
            _ => {}
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
    let mut new_node: Vec<Option<NodeIndex>> = vec![None; bound];
    let m = |map: &[Option<usize>], t: usize| map[t].unwrap_or(t);
    for &n in &graph.order {
        let node = &graph.dag[n];
        if let Some(gemm) = ag_gemm[n.index()] {
            let NodeKind::CollectiveStart { group, .. } = node.kind else {
                continue;
            };
            let p = graph.groups[group].ranks;
            let shard = m(&map, node.inputs[0]);
            let shard_bytes = g.tensors[shard].bytes;
            let gnode = &graph.dag[gemm];
            let NodeKind::Compute(work) = &gnode.kind else {
                continue;
            };
            let fixed = persistent_input_bytes(graph, gnode) as f64;
            let step_work = chunk(work, f64::from(p), fixed);
            let out_t = gnode.outputs[0];
            let out_bytes = graph.tensors[out_t].bytes / u64::from(p);
            let p64 = u64::from(p);
            let out_shape = graph.tensors[out_t]
                .shape
                .map(|s| split_shape(s, Dim::Sequence, p64));
            let shard_shape = g.tensors[shard].shape;
            let step_op = gnode
                .op
                .clone()
                .filter(|op| matches!(op, Op::Linear | Op::InputGrad { .. }));
            let others: Vec<usize> = gnode
                .inputs
                .iter()
                .filter(|&&t| graph.tensors[t].persistent)
                .map(|&t| m(&map, t))
                .collect();
            let mut current = shard;
            let mut outs = Vec::new();
            for i in 0..p {
                let next = if i + 1 < p {
                    let (s, _) = add(
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
                    );
                    Some(s)
                } else {
                    None
                };
                let mut inputs = vec![current];
                inputs.extend(&others);
                let (_, o) = add(
                    &mut g,
                    &format!("{}.step{i}", gnode.name),
                    NodeKind::Compute(step_work),
                    step_op.clone(),
                    &inputs,
                    &[(format!("{}.step{i}", gnode.name), out_bytes, out_shape)],
                );
                outs.push(o[0]);
                if let Some(s) = next {
                    let (w, o) = add(
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
                    g.control(s, w);
                    current = o[0];
                }
            }
            // A view: each step's output is written at its member's place in the sequence.
            let out_tensor = &graph.tensors[out_t];
            let (_, full) = add(
                &mut g,
                &format!("{}.concat", out_tensor.name),
                NodeKind::Compute(crate::labs::overlap::passes::view_work()),
                Some(Op::RingConcat { group }),
                &outs,
                &[(out_tensor.name.clone(), out_tensor.bytes, out_tensor.shape)],
            );
            map[out_t] = Some(full[0]);
            continue;
        }
        if let Some(rs) = gemm_rs[n.index()] {
            let NodeKind::CollectiveStart { group, .. } = graph.dag[rs].kind else {
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
            let linear = matches!(node.op, Some(Op::Linear | Op::InputGrad { .. }));
            let step_op = |step: u32| {
                let of = node.op.clone().filter(|_| linear)?;
                Some(Op::RingChunk {
                    group,
                    step: u64::from(step),
                    of: alloc::boxed::Box::new(of),
                })
            };
            let add_work = ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: (part_bytes / 2) as f64,
                bytes: (3 * part_bytes) as f64,
            };
            let Some(w) = wait_of(graph, rs) else {
                continue;
            };
            let rs_name = &graph.dag[rs].name;
            let (_, o) = add(
                &mut g,
                &format!("{}.step0", node.name),
                NodeKind::Compute(step_work),
                step_op(0),
                &inputs,
                &[(format!("{}.step0", node.name), part_bytes, part_shape)],
            );
            let mut acc = o[0];
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
                let (_, sum) = add(
                    &mut g,
                    &format!("{rs_name}.add{i}"),
                    NodeKind::Compute(add_work),
                    linear.then_some(Op::Add),
                    &[recv[0], part[0]],
                    &[(format!("{rs_name}.sum{i}"), part_bytes, part_shape)],
                );
                acc = sum[0];
            }
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
                start: new_node[start.index()].unwrap_or(start),
            },
            ref k => k.clone(),
        };
        let outs: Vec<(alloc::string::String, u64, Option<[u64; 3]>)> = node
            .outputs
            .iter()
            .map(|&t| {
                let tensor = &graph.tensors[t];
                (tensor.name.clone(), tensor.bytes, tensor.shape)
            })
            .collect();
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
        new_node[n.index()] = Some(c);
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
        if let (Some(a), Some(b)) = (new_node[u.index()], new_node[v.index()]) {
            g.control(a, b);
        }
    }
    validate(&g)?;
    Ok((g, pairs))
}
