//! Helix's three passes: free functions from a graph to a graph, each output valid.
//!
//! - [`tile`]: split operators into K tile streams along the batch (or, for position-wise ops,
//!   the sequence) dimension;
//! - [`reorder`]: emit each stream's segments (runs of non-blocking ops between waits) round
//!   robin, so one stream's communication runs under another's computation;
//! - [`bucket`]: merge tile siblings back into one operator where the simulator says it helps,
//!   chosen by dynamic programming under a memory budget.

pub mod bucket;
pub mod reorder;
pub mod tile;

use alloc::format;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;

use crate::cost::ComputeWork;
use crate::graph::{Dim, Graph, Node, NodeKind, Op, Shape, TensorId};

/// A zero-work kernel: slices and concatenations of tile buffers are views (Helix allocates the
/// tiles of a buffer together), so they take no time.
#[must_use]
pub fn view_work() -> ComputeWork {
    ComputeWork {
        kind: crate::cost::ComputeKind::MemoryBound,
        flops: 0.0,
        bytes: 0.0,
    }
}

/// `shape` with `dim` divided by `parts`.
#[must_use]
pub fn split_shape(shape: Shape, dim: Dim, parts: u64) -> Shape {
    let mut s = shape;
    s[dim.index()] /= parts.max(1);
    s
}

/// `shape` with `dim` multiplied by `parts`.
#[must_use]
pub fn joined_shape(shape: Shape, dim: Dim, parts: u64) -> Shape {
    let mut s = shape;
    s[dim.index()] *= parts;
    s
}

/// No outputs, for [`add`] (a collective start).
pub const NO_OUTPUTS: &[(&str, u64, Option<Shape>)] = &[];

/// Adds a node with named, sized and shaped outputs; returns it and its outputs.
pub fn add<S: AsRef<str>>(
    g: &mut Graph,
    name: &str,
    kind: NodeKind,
    op: Option<Op>,
    inputs: &[TensorId],
    outputs: &[(S, u64, Option<Shape>)],
) -> (NodeIndex, Vec<TensorId>) {
    let named: Vec<(&str, u64)> = outputs.iter().map(|(n, b, _)| (n.as_ref(), *b)).collect();
    let (n, out) = g.add_node(name, kind, inputs, &named);
    for (t, (_, _, shape)) in out.iter().zip(outputs) {
        g.tensors[*t].shape = *shape;
    }
    g.dag[n].op = op;
    (n, out)
}

/// Adds a view that splits `t` into `parts` along `dim`; returns the parts.
pub fn slice_views(g: &mut Graph, t: TensorId, dim: Dim, parts: u32) -> Vec<TensorId> {
    let (name, bytes, shape) = {
        let tensor = &g.tensors[t];
        (tensor.name.clone(), tensor.bytes, tensor.shape)
    };
    let p = u64::from(parts);
    (0..parts)
        .map(|i| {
            let (_, out) = add(
                g,
                &format!("{name}.slice{i}"),
                NodeKind::Compute(view_work()),
                Some(Op::Slice {
                    dim,
                    index: u64::from(i),
                    parts: p,
                }),
                &[t],
                &[(
                    format!("{name}#t{i}"),
                    bytes / p,
                    shape.map(|s| split_shape(s, dim, p)),
                )],
            );
            out[0]
        })
        .collect()
}

/// Adds a view that concatenates `parts` along `dim` into a tensor named `name`.
pub fn concat_view(g: &mut Graph, parts: &[TensorId], dim: Dim, name: &str) -> TensorId {
    let bytes = parts.iter().map(|&t| g.tensors[t].bytes).sum();
    let shape = g.tensors[parts[0]]
        .shape
        .map(|s| joined_shape(s, dim, parts.len() as u64));
    let (_, out) = add(
        g,
        &format!("{name}.concat"),
        NodeKind::Compute(view_work()),
        Some(Op::Concat { dim }),
        parts,
        &[(name, bytes, shape)],
    );
    out[0]
}

/// Bytes of the persistent tensors (weights) a node reads: they do not shrink with a tile.
#[must_use]
pub fn persistent_input_bytes(g: &Graph, node: &Node) -> u64 {
    node.inputs
        .iter()
        .filter_map(|&t| g.tensors.get(t))
        .filter(|t| t.persistent)
        .map(|t| t.bytes)
        .sum()
}

/// The operator role of a node: its name without the leading `L<layer>.` and without tile
/// suffixes, so the same operator of every layer shares one role.
#[must_use]
pub fn role(origin: &str) -> &str {
    if let Some(rest) = origin.strip_prefix('L') {
        if let Some(dot) = rest.find('.') {
            if rest[..dot].bytes().all(|b| b.is_ascii_digit()) && dot > 0 {
                return &rest[dot + 1..];
            }
        }
    }
    origin
}
