//! A small f32 interpreter of execution graphs over simulated ranks: the proof, beyond the
//! validator, that tiling, reordering, bucketing and the reordering baselines keep the math.
//!
//! Every rank of the job runs the graph in its issue order, in lock step. Tensors are
//! `[sequence, batch, features]` arrays of f32 ([`crate::graph::Shape`]). Graph inputs and
//! weights get deterministic pseudo-random values from their name and the rank (weights scaled
//! by 1/√fan-in), so two graphs that name their inputs alike read the same numbers. Ops
//! ([`crate::graph::Op`]): linear, add, GELU (tanh form), SwiGLU, LayerNorm and RMSNorm over
//! features, causal softmax attention with grouped-query heads, MoE permute/unpermute, views
//! (slice, concat); the backward of a training graph: the loss gradient, a linear's weight
//! gradient (with the partial sums of batch tiles) and input gradient, and the vector-Jacobian
//! product of each forward op above; AsyncTP's ring steps (a linear on a rank's ring chunk, the
//! ring concatenation). Collectives combine the members of the group: groups are nested in the
//! graph's group order (the first innermost, as the builder lays out TP, CP, EP, DP), the world
//! is the product of their sizes, and member j of a group is the rank whose coordinate in that
//! group is j. AllReduce sums; AllGather concatenates shards along the sequence; ReduceScatter
//! sums and keeps the rank's sequence shard; AllToAll exchanges sequence chunks (expert
//! dispatch, shape kept) or trades a sequence shard for a feature shard (Ulysses, read from the
//! output shape); a send/receive is one ring hop (each rank receives the block of the member
//! before it). A collective's result is computed at its start (every rank has its input then)
//! and published by its wait; a collective of persistent data (a data-parallel gradient bucket,
//! which carries no values) is skipped. Not interpreted: ring attention (its steps carry no op
//! semantics) and imported graphs without ops; the error names the node.
//!
//! Transcendental functions go through `libm`, so results are identical natively and in wasm.
//!
//! This file runs the graph; the forward ops are in `kernels`, their gradients in `backward`,
//! the collectives in `collectives`.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::graph::{Graph, NodeKind, Op, Shape, TensorId};

mod backward;
mod collectives;
mod kernels;

use kernels::{compute, elements, hash, values};

/// Most elements of one tensor on one rank.
pub const MAX_ELEMENTS: u64 = 1 << 22;
/// Most simulated ranks.
pub const MAX_RANKS: u64 = 64;

/// Why a graph cannot be interpreted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    /// The node or tensor concerned.
    pub at: String,
    /// What is missing or wrong.
    pub message: String,
}

impl core::fmt::Display for InterpError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

fn err(at: &str, message: impl Into<String>) -> InterpError {
    InterpError {
        at: at.into(),
        message: message.into(),
    }
}

/// Outputs of a run: each graph output (a tensor nobody reads) by name, one array per rank.
pub type Outputs = BTreeMap<String, Vec<Vec<f32>>>;

pub(super) struct Ctx<'a> {
    g: &'a Graph,
    world: u64,
    /// (stride, size) per group.
    layout: Vec<(u64, u64)>,
    vals: Vec<Vec<Option<Vec<f32>>>>,
}

impl Ctx<'_> {
    pub(super) fn shape(&self, t: TensorId, at_node: &str) -> Result<Shape, InterpError> {
        let tensor = &self.g.tensors[t];
        let s = tensor
            .shape
            .ok_or_else(|| err(at_node, format!("tensor {} has no shape", tensor.name)))?;
        if elements(s) > MAX_ELEMENTS {
            return Err(err(
                at_node,
                format!(
                    "tensor {} is too large to interpret ({} elements, at most {MAX_ELEMENTS})",
                    tensor.name,
                    elements(s)
                ),
            ));
        }
        Ok(s)
    }

    pub(super) fn get(
        &self,
        rank: u64,
        t: TensorId,
        at_node: &str,
    ) -> Result<&Vec<f32>, InterpError> {
        self.vals[rank as usize][t].as_ref().ok_or_else(|| {
            err(
                at_node,
                format!("reads {} before it was written", self.g.tensors[t].name),
            )
        })
    }

    /// `rank`'s coordinate in group `group` and the group's size.
    pub(super) fn coordinate(
        &self,
        group: usize,
        rank: u64,
        at_node: &str,
    ) -> Result<(u64, u64), InterpError> {
        let &(stride, size) = self.layout.get(group).ok_or_else(|| {
            err(
                at_node,
                format!("names group {group}, which does not exist"),
            )
        })?;
        Ok(((rank / stride) % size, size))
    }

    /// Ranks of `rank`'s group `group`, in member order, and `rank`'s coordinate.
    pub(super) fn members(&self, group: usize, rank: u64) -> (Vec<u64>, u64) {
        let (stride, size) = self.layout[group];
        let coord = (rank / stride) % size;
        let base = rank - coord * stride;
        ((0..size).map(|j| base + j * stride).collect(), coord)
    }
}

/// Runs `graph` on every simulated rank and returns its outputs.
///
/// # Errors
/// An [`InterpError`] naming the node without op semantics, the tensor without a shape, or the
/// shapes that do not fit.
#[allow(clippy::too_many_lines)]
pub fn interpret(graph: &Graph) -> Result<Outputs, InterpError> {
    let mut layout = Vec::new();
    let mut world = 1u64;
    for gs in &graph.groups {
        let size = u64::from(gs.ranks.max(1));
        layout.push((world, size));
        world = world.saturating_mul(size);
    }
    if world > MAX_RANKS {
        return Err(err(
            "groups",
            format!("{world} ranks; the interpreter simulates at most {MAX_RANKS}"),
        ));
    }
    let mut cx = Ctx {
        g: graph,
        world,
        layout,
        vals: vec![vec![None; graph.tensors.len()]; world as usize],
    };
    for (t, tensor) in graph.tensors.iter().enumerate() {
        if tensor.producer.is_none() && !tensor.persistent {
            let s = cx.shape(t, &tensor.name)?;
            for r in 0..world {
                cx.vals[r as usize][t] =
                    Some(values(hash(&tensor.name, r), elements(s) as usize, 1.0));
            }
        }
    }
    let bound = graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0);
    let mut pending: Vec<Option<Vec<Vec<f32>>>> = vec![None; bound];
    for &n in &graph.order {
        let node = &graph.dag[n];
        let name = node.name.as_str();
        match &node.kind {
            NodeKind::Wait { start } => {
                if let [out] = node.outputs[..] {
                    let result = pending[start.index()]
                        .take()
                        .ok_or_else(|| err(name, "waits on a collective that produced nothing"))?;
                    for (r, v) in result.into_iter().enumerate() {
                        cx.vals[r][out] = Some(v);
                    }
                }
            }
            NodeKind::CollectiveStart { kind, group, .. } => {
                let wait_out = graph
                    .dag
                    .neighbors_directed(n, petgraph::Direction::Outgoing)
                    .find_map(|w| match graph.dag[w].kind {
                        NodeKind::Wait { start } if start == n => {
                            Some(graph.dag[w].outputs.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_default();
                let [out] = wait_out[..] else {
                    continue; // a collective whose result nobody reads (a gradient bucket)
                };
                let [inp] = node.inputs[..] else {
                    return Err(err(name, "a collective must read one tensor"));
                };
                if graph.tensors[inp].persistent {
                    continue;
                }
                pending[n.index()] =
                    Some(collectives::collective(&cx, *kind, *group, inp, out, name)?);
            }
            NodeKind::Compute(_) => {
                let op = node
                    .op
                    .as_ref()
                    .ok_or_else(|| err(name, "has no op semantics"))?;
                let [out] = node.outputs[..] else {
                    return Err(err(name, "a computation must write one tensor"));
                };
                // A weight gradient is features_in × features_out, not an activation.
                let so = match op {
                    Op::WeightGrad => None,
                    _ => Some(cx.shape(out, name)?),
                };
                for r in 0..world {
                    let v = compute(&cx, r, node, op, so.unwrap_or([1, 1, 1]))?;
                    if let Some(so) = so.filter(|&so| v.len() as u64 != elements(so)) {
                        return Err(err(
                            name,
                            format!(
                                "produces {} elements, its output {so:?} holds {}",
                                v.len(),
                                elements(so)
                            ),
                        ));
                    }
                    cx.vals[r as usize][out] = Some(v);
                }
            }
        }
    }
    let mut read = vec![false; graph.tensors.len()];
    for n in graph.dag.node_indices() {
        for &t in &graph.dag[n].inputs {
            read[t] = true;
        }
    }
    let mut outputs = Outputs::new();
    for (t, tensor) in graph.tensors.iter().enumerate() {
        if tensor.producer.is_some() && !tensor.persistent && !read[t] {
            let per_rank: Option<Vec<Vec<f32>>> = (0..cx.world as usize)
                .map(|r| cx.vals[r][t].clone())
                .collect();
            if let Some(v) = per_rank {
                outputs.insert(tensor.name.clone(), v);
            }
        }
    }
    Ok(outputs)
}

/// Largest absolute difference between two runs' outputs, relative to 1 + |value|.
///
/// # Errors
/// A message naming the output that one run lacks or whose size differs.
pub fn max_difference(a: &Outputs, b: &Outputs) -> Result<f32, String> {
    if a.len() != b.len() {
        return Err(format!("{} outputs against {}", a.len(), b.len()));
    }
    let mut worst = 0.0f32;
    for (name, ra) in a {
        let rb = b
            .get(name)
            .ok_or_else(|| format!("output {name} is missing"))?;
        if ra.len() != rb.len() {
            return Err(format!(
                "output {name}: {} ranks against {}",
                ra.len(),
                rb.len()
            ));
        }
        for (x, y) in ra.iter().zip(rb) {
            if x.len() != y.len() {
                return Err(format!(
                    "output {name}: {} elements against {}",
                    x.len(),
                    y.len()
                ));
            }
            for (u, v) in x.iter().zip(y) {
                let d = libm::fabsf(u - v) / (1.0 + libm::fabsf(*u));
                if d.is_nan() {
                    return Err(format!("output {name} holds NaN"));
                }
                worst = worst.max(d);
            }
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::{ComputeKind, ComputeWork};
    use crate::graph::{Node, NodeKind};

    /// `op` on one rank over the given activations (and a weight named `w`).
    fn run(op: &Op, inputs: &[(&[f32], Shape)], so: Shape) -> Vec<f32> {
        let mut g = Graph::new();
        let ids: Vec<TensorId> = inputs
            .iter()
            .enumerate()
            .map(|(i, (_, s))| {
                let t = g.add_input(&format!("x{i}"), 1, false);
                g.tensors[t].shape = Some(*s);
                t
            })
            .collect();
        let mut node_inputs = ids.clone();
        node_inputs.push(g.add_input("w", 1, true));
        let node = Node {
            name: "f".into(),
            kind: NodeKind::Compute(ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: 0.0,
                bytes: 0.0,
            }),
            inputs: node_inputs,
            outputs: Vec::new(),
            op: Some(op.clone()),
            tile: None,
        };
        let mut vals = vec![vec![None; g.tensors.len()]];
        for (&t, (x, _)) in ids.iter().zip(inputs) {
            vals[0][t] = Some(x.to_vec());
        }
        let cx = Ctx {
            g: &g,
            world: 1,
            layout: Vec::new(),
            vals,
        };
        compute(&cx, 0, &node, op, so).unwrap()
    }

    /// The backward of `of` (`grad`) against central differences of its forward: for random
    /// x, direction v and output gradient dy, dy · (f(x + εv) − f(x − εv)) / 2ε ≈ v · dx.
    fn check(
        of: &Op,
        grad: &Op,
        [sx, sy]: [Shape; 2],
        fwd_extra: &[(&[f32], Shape)],
        bwd_extra: &[(&[f32], Shape)],
    ) {
        let n = elements(sx) as usize;
        let (x, v) = (values(1, n, 1.0), values(2, n, 1.0));
        let dy = values(3, elements(sy) as usize, 1.0);
        let eps = 1e-2f32;
        let f = |sign: f32| {
            let moved: Vec<f32> = x.iter().zip(&v).map(|(a, b)| a + sign * eps * b).collect();
            let mut ins = vec![(moved.as_slice(), sx)];
            ins.extend_from_slice(fwd_extra);
            run(of, &ins, sy)
        };
        let (up, down) = (f(1.0), f(-1.0));
        let numeric: f32 = up
            .iter()
            .zip(&down)
            .zip(&dy)
            .map(|((p, m), d)| (p - m) / (2.0 * eps) * d)
            .sum();
        // An input gradient reads only dy; every other backward reads x first.
        let mut ins = Vec::new();
        if !matches!(grad, Op::InputGrad { .. }) {
            ins.push((x.as_slice(), sx));
        }
        ins.extend_from_slice(bwd_extra);
        ins.push((dy.as_slice(), sy));
        let dx = run(grad, &ins, sx);
        let analytic: f32 = dx.iter().zip(&v).map(|(g, v)| g * v).sum();
        assert!(
            (numeric - analytic).abs() <= 1e-2 * (1.0 + analytic.abs()),
            "{of:?}: finite differences {numeric}, backward {analytic}"
        );
    }

    fn grad_of(of: &Op) -> Op {
        Op::Grad {
            of: alloc::boxed::Box::new(of.clone()),
        }
    }

    #[test]
    fn backward_ops_match_finite_differences() {
        for (of, sx, sy) in [
            (Op::Gelu, [2, 2, 3], [2, 2, 3]),
            (Op::SwiGlu, [2, 2, 6], [2, 2, 3]),
            (Op::LayerNorm, [2, 2, 5], [2, 2, 5]),
            (Op::RmsNorm, [2, 2, 5], [2, 2, 5]),
            (Op::Permute { top_k: 2 }, [2, 1, 3], [4, 1, 3]),
            (
                Op::Attention {
                    heads: 2,
                    kv_heads: 1,
                    head_dim: 2,
                },
                [4, 2, 8],
                [4, 2, 4],
            ),
        ] {
            check(&of, &grad_of(&of), [sx, sy], &[], &[]);
        }
        let other = values(4, 12, 1.0);
        check(
            &Op::Add,
            &grad_of(&Op::Add),
            [[2, 2, 3], [2, 2, 3]],
            &[(&other, [2, 2, 3])],
            &[],
        );
        let router = values(5, 8, 1.0);
        let unpermute = Op::Unpermute { top_k: 2 };
        let r = [(router.as_slice(), [2, 1, 4])];
        check(
            &unpermute,
            &grad_of(&unpermute),
            [[4, 1, 3], [2, 1, 3]],
            &r,
            &r,
        );
        let input_grad = Op::InputGrad { weight: "w".into() };
        check(&Op::Linear, &input_grad, [[2, 2, 3], [2, 2, 4]], &[], &[]);
    }

    #[test]
    fn a_weight_gradient_sums_over_every_token_and_adds_its_partial_sum() {
        // x = [[1, 2]] and [[3, 4]] (two tokens), dy = [[1]] and [[10]]: xᵀ·dy = [31, 42].
        let x = [1.0, 2.0, 3.0, 4.0];
        let dy = [1.0, 10.0];
        let g = run(
            &Op::WeightGrad,
            &[(&x, [2, 1, 2]), (&dy, [2, 1, 1])],
            [1, 1, 1],
        );
        assert_eq!(g, [31.0, 42.0]);
        let h = run_with_partial(&x, &dy, &[0.5, -2.0]);
        assert_eq!(h, [31.5, 40.0]);
    }

    fn run_with_partial(x: &[f32], dy: &[f32], partial: &[f32]) -> Vec<f32> {
        // The partial sum has no shape: build the context by hand.
        let mut g = Graph::new();
        let tx = g.add_input("x", 1, false);
        g.tensors[tx].shape = Some([2, 1, 2]);
        let tdy = g.add_input("dy", 1, false);
        g.tensors[tdy].shape = Some([2, 1, 1]);
        let tp = g.add_input("partial", 1, false);
        let node = Node {
            name: "f#t1".into(),
            kind: NodeKind::Compute(ComputeWork {
                kind: ComputeKind::Gemm,
                flops: 0.0,
                bytes: 0.0,
            }),
            inputs: vec![tx, tdy, tp],
            outputs: Vec::new(),
            op: Some(Op::WeightGrad),
            tile: None,
        };
        let vals = vec![vec![
            Some(x.to_vec()),
            Some(dy.to_vec()),
            Some(partial.to_vec()),
        ]];
        let cx = Ctx {
            g: &g,
            world: 1,
            layout: Vec::new(),
            vals,
        };
        compute(&cx, 0, &node, &Op::WeightGrad, [1, 1, 1]).unwrap()
    }
}
