//! Tiling: split every operator that allows it into K tile streams.
//!
//! Along the **batch** dimension every operator of a transformer layer is independent per
//! sequence, so every activation whose shape is known is split into K parts and every operator
//! reading them runs K times on 1/K of the work (weights are shared and read by every tile). An
//! operator whose inputs are split but whose output is not (a weight gradient: a sum over the
//! batch) becomes a chain of K accumulating tiles, each adding its part to the partial sum of the
//! tile before. A collective is split with its tiles: K
//! collectives of 1/K of the bytes on the same group, each with its own wait.
//!
//! Along the **sequence** dimension only position-wise operators may be split (GEMMs, norms
//! over features, activations, residual adds, an AllReduce). Attention reduces over the
//! sequence, MoE routing places token copies along it, and AllGather/ReduceScatter/AllToAll move
//! data along it: those run whole (the tiles are concatenated before them and split again
//! after), and each is reported with its reason.
//!
//! Tiles cost efficiency: a GEMM of 1/K the FLOPs sits lower on the cost model's efficiency
//! curve, every tile pays a launch, and a collective of 1/K the bytes pays its latency K times.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, IntoEdgeReferences};

use super::{add, concat_view, persistent_input_bytes, slice_views, split_shape};
use crate::cost::{CollectiveKind, ComputeKind, ComputeWork};
use crate::graph::validate::{validate, GraphError};
use crate::graph::{Dim, Edge, Graph, NodeKind, Op, TileTag};

/// An operator tiling left whole, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The operator's name.
    pub node: String,
    /// Why it may not be split along the dimension.
    pub reason: String,
}

/// The tiled graph and what stayed whole.
#[derive(Clone, Debug)]
pub struct Tiled {
    /// The graph with K tile streams.
    pub graph: Graph,
    /// Operators that read split tensors but had to run whole, with the reason.
    pub refused: Vec<Refusal>,
    /// Operators split into K tiles.
    pub tiled_ops: usize,
}

/// Why a node may not be split along `dim` (`None`: it may).
fn refusal(g: &Graph, n: NodeIndex, dim: Dim) -> Option<String> {
    let node = &g.dag[n];
    match (&node.kind, &node.op) {
        (_, Some(op)) => op.splittable(dim).err().map(ToString::to_string),
        (NodeKind::CollectiveStart { kind, .. }, None) => match (dim, kind) {
            (Dim::Batch, _) | (Dim::Sequence, CollectiveKind::AllReduce) => None,
            (_, CollectiveKind::SendRecv) => {
                Some("ring attention passes key/value blocks along the sequence".into())
            }
            _ => Some(format!(
                "{} moves data along the sequence dimension",
                kind.id()
            )),
        },
        (NodeKind::Compute(work), None) => match dim {
            Dim::Batch => None,
            _ if work.kind == ComputeKind::Attention => {
                Some("attention reduces over the sequence".into())
            }
            _ => Some("the operator has no op semantics to prove it position-wise".into()),
        },
        (NodeKind::Wait { .. }, None) => None,
    }
}

/// Splits `graph` into `k` tile streams along `dim`.
///
/// # Errors
/// The validator's error if the result is malformed (a bug), or a `k` of 0.
#[allow(clippy::too_many_lines)]
pub fn tile(graph: &Graph, k: u32, dim: Dim) -> Result<Tiled, GraphError> {
    if k == 0 {
        return Err(GraphError {
            at: "tile".into(),
            message: "needs k ≥ 1".into(),
        });
    }
    if k == 1 {
        return Ok(Tiled {
            graph: graph.clone(),
            refused: Vec::new(),
            tiled_ops: 0,
        });
    }
    let k64 = u64::from(k);
    let mut g = Graph::new();
    g.groups.clone_from(&graph.groups);
    let nt = graph.tensors.len();
    let mut whole: Vec<Option<usize>> = vec![None; nt];
    let mut parts: Vec<Option<Vec<usize>>> = vec![None; nt];
    for (t, tensor) in graph.tensors.iter().enumerate() {
        if tensor.producer.is_none() {
            let id = g.add_input(&tensor.name, tensor.bytes, tensor.persistent);
            g.tensors[id].shape = tensor.shape;
            whole[t] = Some(id);
        }
    }
    let splittable = |t: usize| {
        let tensor = &graph.tensors[t];
        !tensor.persistent
            && tensor
                .shape
                .is_some_and(|s| s[dim.index()] > 0 && s[dim.index()].is_multiple_of(k64))
            && tensor.bytes.is_multiple_of(k64)
    };
    let bound = graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0);
    let mut copies: Vec<Vec<NodeIndex>> = vec![Vec::new(); bound];
    let mut refused = Vec::new();
    let mut tiled_ops = 0usize;

    // The whole version of an old tensor (concatenating its parts if needed).
    fn whole_of(
        g: &mut Graph,
        graph: &Graph,
        whole: &mut [Option<usize>],
        parts: &[Option<Vec<usize>>],
        t: usize,
        dim: Dim,
    ) -> usize {
        if let Some(w) = whole[t] {
            return w;
        }
        let p = parts[t].clone().unwrap_or_default();
        let w = concat_view(g, &p, dim, &graph.tensors[t].name);
        whole[t] = Some(w);
        w
    }

    for &n in &graph.order {
        let node = &graph.dag[n];
        let tag = |stream: u32| TileTag {
            stream,
            streams: k,
            origin: node.name.clone(),
            dim,
        };
        if let NodeKind::Wait { start } = node.kind {
            let starts = copies[start.index()].clone();
            if starts.len() == k as usize {
                for (i, &s) in starts.iter().enumerate() {
                    let outs: Vec<(String, u64, Option<[u64; 3]>)> = node
                        .outputs
                        .iter()
                        .map(|&t| {
                            let tensor = &graph.tensors[t];
                            (
                                format!("{}#t{i}", tensor.name),
                                tensor.bytes / k64,
                                tensor.shape.map(|sh| split_shape(sh, dim, k64)),
                            )
                        })
                        .collect();
                    let (w, out) = add(
                        &mut g,
                        &format!("{}#t{i}", node.name),
                        NodeKind::Wait { start: s },
                        node.op.clone(),
                        &[],
                        &outs,
                    );
                    g.control(s, w);
                    g.dag[w].tile = Some(tag(i as u32));
                    copies[n.index()].push(w);
                    for (j, &t) in node.outputs.iter().enumerate() {
                        parts[t].get_or_insert_with(Vec::new).push(out[j]);
                    }
                }
            } else {
                let s = starts.first().copied().unwrap_or(start);
                let outs: Vec<(String, u64, Option<[u64; 3]>)> = node
                    .outputs
                    .iter()
                    .map(|&t| {
                        let tensor = &graph.tensors[t];
                        (tensor.name.clone(), tensor.bytes, tensor.shape)
                    })
                    .collect();
                let (w, out) = add(
                    &mut g,
                    &node.name,
                    NodeKind::Wait { start: s },
                    node.op.clone(),
                    &[],
                    &outs,
                );
                g.control(s, w);
                copies[n.index()].push(w);
                for (j, &t) in node.outputs.iter().enumerate() {
                    whole[t] = Some(out[j]);
                }
            }
            continue;
        }
        let activations: Vec<usize> = node
            .inputs
            .iter()
            .copied()
            .filter(|&t| !graph.tensors[t].persistent)
            .collect();
        let reads_split = activations.iter().any(|&t| parts[t].is_some());
        let inputs_ok = !activations.is_empty()
            && activations
                .iter()
                .all(|&t| parts[t].is_some() || splittable(t));
        let wait_outputs: Vec<usize> = match node.kind {
            NodeKind::CollectiveStart { .. } => graph
                .dag
                .neighbors_directed(n, petgraph::Direction::Outgoing)
                .filter(|&w| matches!(graph.dag[w].kind, NodeKind::Wait { start } if start == n))
                .flat_map(|w| graph.dag[w].outputs.clone())
                .collect(),
            _ => node.outputs.clone(),
        };
        let outputs_split = wait_outputs.iter().all(|&t| splittable(t));
        let why = refusal(graph, n, dim);
        // A sum over the batch (a weight gradient) runs as a chain of tiles each adding its
        // part to the previous tile's partial sum.
        let accumulate = matches!(node.kind, NodeKind::Compute(_))
            && matches!(node.op, None | Some(Op::WeightGrad))
            && !outputs_split
            && dim == Dim::Batch;
        let tiled = inputs_ok && why.is_none() && (outputs_split || accumulate);
        if !tiled {
            if reads_split {
                let reason = why
                    .unwrap_or_else(|| "its tensors have no shape divisible into the tiles".into());
                refused.push(Refusal {
                    node: node.name.clone(),
                    reason,
                });
            }
            let inputs: Vec<usize> = node
                .inputs
                .iter()
                .map(|&t| whole_of(&mut g, graph, &mut whole, &parts, t, dim))
                .collect();
            let outs: Vec<(String, u64, Option<[u64; 3]>)> = node
                .outputs
                .iter()
                .map(|&t| {
                    let tensor = &graph.tensors[t];
                    (tensor.name.clone(), tensor.bytes, tensor.shape)
                })
                .collect();
            let (c, out) = add(
                &mut g,
                &node.name,
                node.kind.clone(),
                node.op.clone(),
                &inputs,
                &outs,
            );
            copies[n.index()].push(c);
            for (j, &t) in node.outputs.iter().enumerate() {
                whole[t] = Some(out[j]);
            }
            continue;
        }
        tiled_ops += 1;
        // Split inputs (slicing whole activations that are not split yet).
        for &t in &activations {
            if parts[t].is_none() {
                let w = whole_of(&mut g, graph, &mut whole, &parts, t, dim);
                parts[t] = Some(slice_views(&mut g, w, dim, k));
            }
        }
        let persistent = persistent_input_bytes(graph, node);
        let mut previous: Option<usize> = None;
        for i in 0..k as usize {
            let mut inputs: Vec<usize> = node
                .inputs
                .iter()
                .map(|&t| {
                    if graph.tensors[t].persistent {
                        whole[t].unwrap_or(t)
                    } else {
                        parts[t].as_ref().map_or(t, |p| p[i])
                    }
                })
                .collect();
            let name = format!("{}#t{i}", node.name);
            let (kind, op, outs) = match &node.kind {
                NodeKind::Compute(work) => {
                    let unsplit: u64 = if accumulate {
                        node.outputs.iter().map(|&t| graph.tensors[t].bytes).sum()
                    } else {
                        0
                    };
                    let fixed = (persistent + unsplit) as f64;
                    let tile_work = ComputeWork {
                        kind: work.kind,
                        flops: work.flops / f64::from(k),
                        bytes: (work.bytes - fixed).max(0.0) / f64::from(k) + fixed,
                    };
                    let outs: Vec<(String, u64, Option<[u64; 3]>)> = node
                        .outputs
                        .iter()
                        .map(|&t| {
                            let tensor = &graph.tensors[t];
                            if accumulate {
                                // The last partial sum is the whole result: it keeps the name.
                                let name = if i + 1 == k as usize {
                                    tensor.name.clone()
                                } else {
                                    format!("{}#acc{i}", tensor.name)
                                };
                                (name, tensor.bytes, tensor.shape)
                            } else {
                                (
                                    format!("{}#t{i}", tensor.name),
                                    tensor.bytes / k64,
                                    tensor.shape.map(|sh| split_shape(sh, dim, k64)),
                                )
                            }
                        })
                        .collect();
                    let op = node.op.clone();
                    if let Some(prev) = previous.filter(|_| accumulate) {
                        inputs.push(prev);
                    }
                    (NodeKind::Compute(tile_work), op, outs)
                }
                NodeKind::CollectiveStart { kind, group, bytes } => (
                    NodeKind::CollectiveStart {
                        kind: *kind,
                        group: *group,
                        bytes: (bytes / k64).max(1),
                    },
                    node.op.clone(),
                    Vec::new(),
                ),
                NodeKind::Wait { .. } => unreachable!("waits are handled above"),
            };
            let (c, out) = add(&mut g, &name, kind, op, &inputs, &outs);
            g.dag[c].tile = Some(tag(i as u32));
            copies[n.index()].push(c);
            if accumulate {
                previous = out.first().copied();
                if i + 1 == k as usize {
                    for (j, &t) in node.outputs.iter().enumerate() {
                        whole[t] = Some(out[j]);
                    }
                }
            } else {
                for (j, &t) in node.outputs.iter().enumerate() {
                    parts[t].get_or_insert_with(Vec::new).push(out[j]);
                }
            }
        }
    }
    // Control edges other than a collective's start → wait, between every copy.
    for e in (&graph.dag).edge_references() {
        if *e.weight() != Edge::Control {
            continue;
        }
        let (u, v) = (e.source(), e.target());
        if matches!(graph.dag[v].kind, NodeKind::Wait { start } if start == u) {
            continue;
        }
        let (cu, cv) = (copies[u.index()].clone(), copies[v.index()].clone());
        for &a in &cu {
            for &b in &cv {
                g.control(a, b);
            }
        }
    }
    // Graph outputs that ended split are concatenated back under their own name.
    let mut read = vec![false; nt];
    for n in graph.dag.node_indices() {
        for &t in &graph.dag[n].inputs {
            read[t] = true;
        }
    }
    for t in 0..nt {
        let tensor = &graph.tensors[t];
        if tensor.producer.is_some() && !read[t] && whole[t].is_none() && parts[t].is_some() {
            let p = parts[t].clone().unwrap_or_default();
            let w = concat_view(&mut g, &p, dim, &tensor.name);
            whole[t] = Some(w);
        }
    }
    validate(&g)?;
    Ok(Tiled {
        graph: g,
        refused,
        tiled_ops,
    })
}
