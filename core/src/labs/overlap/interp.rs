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

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::cost::CollectiveKind;
use crate::graph::{Dim, Graph, NodeKind, Op, Shape, TensorId};

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

fn hash(name: &str, rank: u64) -> u64 {
    // FNV-1a of the name, mixed with the rank (splitmix64 finalizer).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    mix(h ^ rank.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` values in [−1, 1) from `seed`.
fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let bits = mix(seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))) >> 40;
            (bits as f32 / (1u64 << 23) as f32 - 1.0) * scale
        })
        .collect()
}

fn elements(s: Shape) -> u64 {
    s[0].saturating_mul(s[1]).saturating_mul(s[2])
}

fn at(s: Shape, i: u64, b: u64, c: u64) -> usize {
    ((i * s[1] + b) * s[2] + c) as usize
}

/// Part `index` of `parts` of `x` along `dim`.
fn slice(x: &[f32], s: Shape, dim: Dim, index: u64, parts: u64) -> Vec<f32> {
    let mut o = s;
    o[dim.index()] /= parts;
    let off = o[dim.index()] * index;
    let mut out = Vec::with_capacity(elements(o) as usize);
    for i in 0..o[0] {
        for b in 0..o[1] {
            for c in 0..o[2] {
                let mut src = [i, b, c];
                src[dim.index()] += off;
                out.push(x[at(s, src[0], src[1], src[2])]);
            }
        }
    }
    out
}

/// Concatenation of `parts` (each of shape `s`) along `dim`.
fn concat(parts: &[&[f32]], s: Shape, dim: Dim) -> Vec<f32> {
    let mut o = s;
    o[dim.index()] *= parts.len() as u64;
    let mut out = vec![0.0; elements(o) as usize];
    for (p, x) in parts.iter().enumerate() {
        for i in 0..s[0] {
            for b in 0..s[1] {
                for c in 0..s[2] {
                    let mut dst = [i, b, c];
                    dst[dim.index()] += s[dim.index()] * p as u64;
                    out[at(o, dst[0], dst[1], dst[2])] = x[at(s, i, b, c)];
                }
            }
        }
    }
    out
}

/// `out = x · W` per token of `x` (shape `si`), `W` features_in × features_out row-major.
fn linear(x: &[f32], si: Shape, w: &[f32], cout: u64) -> Vec<f32> {
    let (cin, cout) = (si[2] as usize, cout as usize);
    let mut out = vec![0.0f32; (si[0] * si[1]) as usize * cout];
    for (xr, or) in x.chunks(cin.max(1)).zip(out.chunks_mut(cout.max(1))) {
        for (i, &xv) in xr.iter().enumerate() {
            for (o, &wv) in or.iter_mut().zip(&w[i * cout..(i + 1) * cout]) {
                *o += xv * wv;
            }
        }
    }
    out
}

/// The vector-Jacobian product of the forward op `of` (see [`Op::Grad`]): the gradient of its
/// (first) input from `dy`, the last of `inputs` activations.
#[allow(clippy::too_many_lines)]
fn backward<'a>(
    name: &str,
    of: &Op,
    inputs: usize,
    input: &dyn Fn(usize) -> Result<(&'a Vec<f32>, Shape), InterpError>,
    so: Shape,
) -> Result<Vec<f32>, InterpError> {
    let mismatch = |what: &str| err(name, format!("shapes do not fit: {what}"));
    let (dy, sy) = input(inputs.max(1) - 1)?;
    let (x, sx) = input(0)?;
    if sx != so {
        return Err(mismatch("a gradient has the shape of the input it is for"));
    }
    let same = |what| {
        if sy == sx {
            Ok(())
        } else {
            Err(mismatch(what))
        }
    };
    Ok(match of {
        Op::Add => {
            same("add's gradient passes dy through")?;
            dy.clone()
        }
        Op::Gelu => {
            same("GELU is element-wise")?;
            x.iter().zip(dy).map(|(&v, &d)| d * gelu_grad(v)).collect()
        }
        Op::SwiGlu => {
            if sx[2] != 2 * sy[2] || sx[..2] != sy[..2] {
                return Err(mismatch("SwiGLU halves the features"));
            }
            let f = sy[2] as usize;
            let mut out = Vec::with_capacity(x.len());
            for (row, dr) in x.chunks(2 * f.max(1)).zip(dy.chunks(f.max(1))) {
                let (a, b) = row.split_at(f);
                out.extend(a.iter().zip(b).zip(dr).map(|((&a, &b), &d)| {
                    let sig = 1.0 / (1.0 + libm::expf(-a));
                    d * b * sig * (1.0 + a * (1.0 - sig))
                }));
                out.extend(a.iter().zip(dr).map(|(&a, &d)| d * silu(a)));
            }
            out
        }
        Op::LayerNorm | Op::RmsNorm => {
            same("a norm keeps its shape")?;
            let c = sx[2] as usize;
            let mut out = Vec::with_capacity(x.len());
            for (row, dr) in x.chunks(c.max(1)).zip(dy.chunks(c.max(1))) {
                let n = row.len() as f32;
                let (mean, dy_mean) = if *of == Op::LayerNorm {
                    (row.iter().sum::<f32>() / n, dr.iter().sum::<f32>() / n)
                } else {
                    (0.0, 0.0)
                };
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
                let inv = 1.0 / libm::sqrtf(var + 1e-5);
                let dot = row
                    .iter()
                    .zip(dr)
                    .map(|(v, d)| (v - mean) * inv * d)
                    .sum::<f32>()
                    / n;
                out.extend(
                    row.iter()
                        .zip(dr)
                        .map(|(v, d)| inv * (d - dy_mean - (v - mean) * inv * dot)),
                );
            }
            out
        }
        Op::Attention {
            heads,
            kv_heads,
            head_dim,
        } => {
            let (h, kv, d) = (*heads, (*kv_heads).max(1), *head_dim);
            if sx[2] != (h + 2 * kv) * d || sy != [sx[0], sx[1], h * d] || h % kv != 0 {
                return Err(mismatch("attention input must be [q | k | v] of the heads"));
            }
            attention_backward(x, sx, dy, sy, [h, kv, d])
        }
        Op::Permute { top_k } => {
            let k = *top_k;
            if sy != [sx[0] * k, sx[1], sx[2]] {
                return Err(mismatch("permute repeats every token top_k times"));
            }
            let mut out = vec![0.0f32; x.len()];
            for s in 0..sx[0] {
                for b in 0..sx[1] {
                    let dst = at(sx, s, b, 0);
                    for j in 0..k {
                        let src = at(sy, s * k + j, b, 0);
                        for c in 0..sx[2] as usize {
                            out[dst + c] += dy[src + c];
                        }
                    }
                }
            }
            out
        }
        Op::Unpermute { top_k } => {
            let k = *top_k;
            if inputs != 3 {
                return Err(err(name, "unpermute's gradient reads [y, router, dy]"));
            }
            let (router, sr) = input(1)?;
            if sx != [sy[0] * k, sy[1], sy[2]] || sr[0] != sy[0] || sr[1] != sy[1] || sr[2] < k {
                return Err(mismatch(
                    "unpermute combines top_k copies with the router's gates",
                ));
            }
            let mut out = vec![0.0f32; x.len()];
            for s in 0..sy[0] {
                for b in 0..sy[1] {
                    let gates = gates(&router[at(sr, s, b, 0)..at(sr, s, b, 0) + k as usize]);
                    let src = at(sy, s, b, 0);
                    for (j, g) in gates.iter().enumerate() {
                        let dst = at(sx, s * k + j as u64, b, 0);
                        for c in 0..sy[2] as usize {
                            out[dst + c] = g * dy[src + c];
                        }
                    }
                }
            }
            out
        }
        _ => {
            return Err(err(
                name,
                format!("{of:?} has no backward in the interpreter"),
            ))
        }
    })
}

/// Softmax of the router's logits of one token over its `top_k` experts.
fn gates(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = logits.iter().map(|g| libm::expf(g - max)).collect();
    let sum: f32 = e.iter().sum();
    e.iter().map(|v| v / sum).collect()
}

/// Gradient of causal attention (see [`Op::Attention`]) with respect to its `[q | k | v]`
/// input `x` (shape `sx`) from the output gradient `dy` (shape `sy`); `[h, kv, d]` are the
/// query heads, key/value heads and head size. Per query row: P = softmax(q·Kᵀ/√d) over the
/// keys up to it, dV += Pᵀ·dO, dS = P ∘ (dO·Vᵀ − Σ P ∘ dO·Vᵀ), dQ = dS·K/√d, dK += dSᵀ·q/√d.
fn attention_backward(
    x: &[f32],
    sx: Shape,
    dy: &[f32],
    sy: Shape,
    [h, kv, d]: [u64; 3],
) -> Vec<f32> {
    let group = h / kv;
    let scale = 1.0 / libm::sqrtf(d as f32);
    let du = d as usize;
    let mut dx = vec![0.0f32; x.len()];
    let mut p = vec![0.0f32; sx[0] as usize];
    let mut dp = vec![0.0f32; sx[0] as usize];
    for b in 0..sx[1] {
        for hh in 0..h {
            let g = hh / group;
            for s in 0..sx[0] {
                let q = at(sx, s, b, hh * d);
                let o = at(sy, s, b, hh * d);
                let mut max = f32::NEG_INFINITY;
                for t in 0..=s {
                    let k = at(sx, t, b, (h + g) * d);
                    let dot: f32 = (0..du).map(|e| x[q + e] * x[k + e]).sum();
                    p[t as usize] = dot * scale;
                    max = max.max(dot * scale);
                }
                let mut sum = 0.0f32;
                for w in &mut p[..=s as usize] {
                    *w = libm::expf(*w - max);
                    sum += *w;
                }
                let mut pdp = 0.0f32;
                for t in 0..=s {
                    let v = at(sx, t, b, (h + kv + g) * d);
                    p[t as usize] /= sum;
                    dp[t as usize] = (0..du).map(|e| dy[o + e] * x[v + e]).sum();
                    pdp += p[t as usize] * dp[t as usize];
                }
                for t in 0..=s {
                    let (k, v) = (at(sx, t, b, (h + g) * d), at(sx, t, b, (h + kv + g) * d));
                    let ds = p[t as usize] * (dp[t as usize] - pdp) * scale;
                    for e in 0..du {
                        dx[q + e] += ds * x[k + e];
                        dx[k + e] += ds * x[q + e];
                        dx[v + e] += p[t as usize] * dy[o + e];
                    }
                }
            }
        }
    }
    dx
}

fn gelu_grad(x: f32) -> f32 {
    let k = 0.797_884_6_f32; // √(2/π)
    let t = libm::tanhf(k * (x + 0.044_715 * x * x * x));
    0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044_715 * x * x)
}

fn gelu(x: f32) -> f32 {
    let k = 0.797_884_6_f32; // √(2/π)
    0.5 * x * (1.0 + libm::tanhf(k * (x + 0.044_715 * x * x * x)))
}

fn silu(x: f32) -> f32 {
    x / (1.0 + libm::expf(-x))
}

struct Ctx<'a> {
    g: &'a Graph,
    world: u64,
    /// (stride, size) per group.
    layout: Vec<(u64, u64)>,
    vals: Vec<Vec<Option<Vec<f32>>>>,
}

impl Ctx<'_> {
    fn shape(&self, t: TensorId, at_node: &str) -> Result<Shape, InterpError> {
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

    fn get(&self, rank: u64, t: TensorId, at_node: &str) -> Result<&Vec<f32>, InterpError> {
        self.vals[rank as usize][t].as_ref().ok_or_else(|| {
            err(
                at_node,
                format!("reads {} before it was written", self.g.tensors[t].name),
            )
        })
    }

    /// `rank`'s coordinate in group `group` and the group's size.
    fn coordinate(
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
    fn members(&self, group: usize, rank: u64) -> (Vec<u64>, u64) {
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
                let (si, so) = (cx.shape(inp, name)?, cx.shape(out, name)?);
                let mut results = Vec::with_capacity(world as usize);
                for r in 0..world {
                    cx.coordinate(*group, r, name)?;
                    let (members, coord) = cx.members(*group, r);
                    let p = members.len() as u64;
                    let xs: Vec<&Vec<f32>> = members
                        .iter()
                        .map(|&m| cx.get(m, inp, name))
                        .collect::<Result<_, _>>()?;
                    let v = match kind {
                        CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => {
                            let mut sum = xs[0].clone();
                            for x in &xs[1..] {
                                for (a, b) in sum.iter_mut().zip(x.iter()) {
                                    *a += *b;
                                }
                            }
                            if *kind == CollectiveKind::ReduceScatter {
                                if si[0] % p != 0 {
                                    return Err(err(
                                        name,
                                        "sequence does not split over the group",
                                    ));
                                }
                                slice(&sum, si, Dim::Sequence, coord, p)
                            } else {
                                sum
                            }
                        }
                        CollectiveKind::AllGather => {
                            let parts: Vec<&[f32]> = xs.iter().map(|x| x.as_slice()).collect();
                            concat(&parts, si, Dim::Sequence)
                        }
                        CollectiveKind::AllToAll => {
                            let (split, join) = if so == si {
                                (Dim::Sequence, Dim::Sequence)
                            } else if so == [si[0] * p, si[1], si[2] / p] {
                                (Dim::Features, Dim::Sequence)
                            } else if so == [si[0] / p, si[1], si[2] * p] {
                                (Dim::Sequence, Dim::Features)
                            } else {
                                return Err(err(name, format!("all-to-all from {si:?} to {so:?} is neither an exchange nor a sequence/feature trade")));
                            };
                            if si[split.index()] % p != 0 {
                                return Err(err(
                                    name,
                                    "the split dimension does not divide over the group",
                                ));
                            }
                            let chunks: Vec<Vec<f32>> =
                                xs.iter().map(|x| slice(x, si, split, coord, p)).collect();
                            let mut cs = si;
                            cs[split.index()] /= p;
                            let parts: Vec<&[f32]> = chunks.iter().map(Vec::as_slice).collect();
                            concat(&parts, cs, join)
                        }
                        // One hop of a ring: receive the block of the member before this one.
                        CollectiveKind::SendRecv => {
                            xs[(coord as usize + xs.len() - 1) % xs.len()].to_vec()
                        }
                    };
                    if v.len() as u64 != elements(so) {
                        return Err(err(
                            name,
                            format!(
                                "produces {} elements, its output {so:?} holds {}",
                                v.len(),
                                elements(so)
                            ),
                        ));
                    }
                    results.push(v);
                }
                pending[n.index()] = Some(results);
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

#[allow(clippy::too_many_lines)]
fn compute(
    cx: &Ctx<'_>,
    r: u64,
    node: &crate::graph::Node,
    op: &Op,
    so: Shape,
) -> Result<Vec<f32>, InterpError> {
    let name = node.name.as_str();
    let activations: Vec<TensorId> = node
        .inputs
        .iter()
        .copied()
        .filter(|&t| !cx.g.tensors[t].persistent)
        .collect();
    let input = |i: usize| -> Result<(&Vec<f32>, Shape), InterpError> {
        let t = *activations
            .get(i)
            .ok_or_else(|| err(name, format!("needs input {i}")))?;
        Ok((cx.get(r, t, name)?, cx.shape(t, name)?))
    };
    let mismatch = |what: &str| err(name, format!("shapes do not fit: {what}"));
    let persistent_input = || -> Result<&str, InterpError> {
        node.inputs
            .iter()
            .find(|&&t| cx.g.tensors[t].persistent)
            .map(|&t| cx.g.tensors[t].name.as_str())
            .ok_or_else(|| err(name, "a linear needs a weight (a persistent input)"))
    };
    // Weights depend on the rank: tensor parallelism gives every rank its own shard.
    let weight = |w_name: &str, cin: u64, cout: u64| {
        values(
            hash(w_name, r),
            (cin * cout) as usize,
            1.0 / libm::sqrtf(cin.max(1) as f32),
        )
    };
    Ok(match op {
        Op::Linear | Op::InputGrad { .. } | Op::RingChunk { .. } => {
            let (x, si) = input(0)?;
            let (inner, x, si) = match op {
                Op::RingChunk { group, step, of } => {
                    let (c, p) = cx.coordinate(*group, r, name)?;
                    if si[0] % p != 0 {
                        return Err(mismatch("the sequence does not split over the ring"));
                    }
                    // (c − step − 1) mod p, kept non-negative.
                    let chunk = (c + 2 * p - step % p - 1) % p;
                    let rows = slice(x, si, Dim::Sequence, chunk, p);
                    (of.as_ref(), Cow::Owned(rows), [si[0] / p, si[1], si[2]])
                }
                _ => (op, Cow::Borrowed(x.as_slice()), si),
            };
            if si[0] != so[0] || si[1] != so[1] {
                return Err(mismatch("a linear keeps sequence and batch"));
            }
            let w = match inner {
                Op::Linear => weight(persistent_input()?, si[2], so[2]),
                Op::InputGrad { weight: w_name } => {
                    if !cx
                        .g
                        .tensors
                        .iter()
                        .any(|t| t.producer.is_none() && t.name == *w_name)
                    {
                        return Err(err(
                            name,
                            format!("reads weight {w_name}, which is not a graph input"),
                        ));
                    }
                    // W is features_in × features_out of the forward; dx = dy · Wᵀ.
                    let (cin, cout) = (so[2] as usize, si[2] as usize);
                    let w = weight(w_name, so[2], si[2]);
                    let mut wt = vec![0.0f32; cin * cout];
                    for i in 0..cin {
                        for j in 0..cout {
                            wt[j * cin + i] = w[i * cout + j];
                        }
                    }
                    wt
                }
                _ => {
                    return Err(err(
                        name,
                        "a ring chunk runs a linear or a linear's input gradient",
                    ))
                }
            };
            linear(&x, si, &w, so[2])
        }
        Op::WeightGrad => {
            let (x, sx) = input(0)?;
            let (dy, sy) = input(1)?;
            if sx[0] != sy[0] || sx[1] != sy[1] {
                return Err(mismatch("a weight gradient pairs every token of x and dy"));
            }
            let (cin, cout) = (sx[2] as usize, sy[2] as usize);
            let mut out = match activations.get(2) {
                Some(&partial) => cx.get(r, partial, name)?.clone(),
                None => vec![0.0f32; cin * cout],
            };
            if out.len() != cin * cout {
                return Err(mismatch(
                    "the partial sum must be features_in × features_out",
                ));
            }
            for (xr, dr) in x.chunks(cin.max(1)).zip(dy.chunks(cout.max(1))) {
                for (i, &xv) in xr.iter().enumerate() {
                    for (j, &dv) in dr.iter().enumerate() {
                        out[i * cout + j] += xv * dv;
                    }
                }
            }
            out
        }
        Op::LossGrad => {
            let (y, sy) = input(0)?;
            if sy != so {
                return Err(mismatch("the loss gradient has the output's shape"));
            }
            y.clone()
        }
        Op::Grad { of } => backward(name, of, activations.len(), &input, so)?,
        Op::RingConcat { group } => {
            let (c, p) = cx.coordinate(*group, r, name)?;
            if activations.len() as u64 != p {
                return Err(mismatch("a ring concatenation has one part per member"));
            }
            let mut parts: Vec<&[f32]> = vec![&[]; p as usize];
            let mut s0 = None;
            for i in 0..activations.len() {
                let (x, s) = input(i)?;
                if s0.is_some_and(|q| q != s) {
                    return Err(mismatch("a ring concatenation needs equal parts"));
                }
                s0 = Some(s);
                // (c − i) mod p, i < p.
                parts[((c + p - i as u64) % p) as usize] = x;
            }
            let s = s0.ok_or_else(|| mismatch("concat of nothing"))?;
            concat(&parts, s, Dim::Sequence)
        }
        Op::Add => {
            let (a, sa) = input(0)?;
            let (b, sb) = input(1)?;
            if sa != sb || sa != so {
                return Err(mismatch("add needs equal shapes"));
            }
            a.iter().zip(b).map(|(x, y)| x + y).collect()
        }
        Op::Gelu => input(0)?.0.iter().map(|&x| gelu(x)).collect(),
        Op::SwiGlu => {
            let (x, si) = input(0)?;
            if si[2] != 2 * so[2] {
                return Err(mismatch("SwiGLU halves the features"));
            }
            let f = so[2] as usize;
            let mut out = Vec::with_capacity(elements(so) as usize);
            for row in x.chunks(2 * f) {
                for j in 0..f {
                    out.push(silu(row[j]) * row[f + j]);
                }
            }
            out
        }
        Op::LayerNorm | Op::RmsNorm => {
            let (x, si) = input(0)?;
            let c = si[2] as usize;
            let mut out = Vec::with_capacity(x.len());
            for row in x.chunks(c.max(1)) {
                let n = row.len() as f32;
                let mean = if *op == Op::LayerNorm {
                    row.iter().sum::<f32>() / n
                } else {
                    0.0
                };
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
                let inv = 1.0 / libm::sqrtf(var + 1e-5);
                out.extend(row.iter().map(|v| (v - mean) * inv));
            }
            out
        }
        Op::Attention {
            heads,
            kv_heads,
            head_dim,
        } => {
            let (x, si) = input(0)?;
            let (h, kv, d) = (*heads, (*kv_heads).max(1), *head_dim);
            if si[2] != (h + 2 * kv) * d || so[2] != h * d || h % kv != 0 {
                return Err(mismatch("attention input must be [q | k | v] of the heads"));
            }
            let group = h / kv;
            let scale = 1.0 / libm::sqrtf(d as f32);
            let mut out = vec![0.0f32; elements(so) as usize];
            let mut weights = vec![0.0f32; si[0] as usize];
            for b in 0..si[1] {
                for hh in 0..h {
                    let g = hh / group;
                    for s in 0..si[0] {
                        let q = at(si, s, b, hh * d);
                        let mut max = f32::NEG_INFINITY;
                        for t in 0..=s {
                            let k = at(si, t, b, (h + g) * d);
                            let mut dot = 0.0f32;
                            for e in 0..d as usize {
                                dot += x[q + e] * x[k + e];
                            }
                            weights[t as usize] = dot * scale;
                            max = max.max(dot * scale);
                        }
                        let mut sum = 0.0f32;
                        for w in &mut weights[..=s as usize] {
                            *w = libm::expf(*w - max);
                            sum += *w;
                        }
                        let o = at(so, s, b, hh * d);
                        for t in 0..=s {
                            let v = at(si, t, b, (h + kv + g) * d);
                            let w = weights[t as usize] / sum;
                            for e in 0..d as usize {
                                out[o + e] += w * x[v + e];
                            }
                        }
                    }
                }
            }
            out
        }
        Op::Permute { top_k } => {
            let (x, si) = input(0)?;
            if so != [si[0] * top_k, si[1], si[2]] {
                return Err(mismatch("permute repeats every token top_k times"));
            }
            let mut out = vec![0.0f32; elements(so) as usize];
            for s in 0..si[0] {
                for j in 0..*top_k {
                    for b in 0..si[1] {
                        let src = at(si, s, b, 0);
                        let dst = at(so, s * top_k + j, b, 0);
                        out[dst..dst + si[2] as usize]
                            .copy_from_slice(&x[src..src + si[2] as usize]);
                    }
                }
            }
            out
        }
        Op::Unpermute { top_k } => {
            let (y, sy) = input(0)?;
            let (router, sr) = input(1)?;
            let k = *top_k;
            if sy != [so[0] * k, so[1], so[2]] || sr[0] != so[0] || sr[1] != so[1] || sr[2] < k {
                return Err(mismatch(
                    "unpermute combines top_k copies with the router's gates",
                ));
            }
            let mut out = vec![0.0f32; elements(so) as usize];
            for s in 0..so[0] {
                for b in 0..so[1] {
                    let gates = gates(&router[at(sr, s, b, 0)..at(sr, s, b, 0) + k as usize]);
                    let dst = at(so, s, b, 0);
                    for (j, g) in gates.iter().enumerate() {
                        let src = at(sy, s * k + j as u64, b, 0);
                        for c in 0..so[2] as usize {
                            out[dst + c] += g * y[src + c];
                        }
                    }
                }
            }
            out
        }
        Op::Slice { dim, index, parts } => {
            let (x, si) = input(0)?;
            if *parts == 0 || si[dim.index()] % parts != 0 || *index >= *parts {
                return Err(mismatch("slice must cut equal parts"));
            }
            slice(x, si, *dim, *index, *parts)
        }
        Op::Concat { dim } => {
            let mut parts = Vec::with_capacity(activations.len());
            let mut s0 = None;
            for i in 0..activations.len() {
                let (x, s) = input(i)?;
                if s0.is_some_and(|p| p != s) {
                    return Err(mismatch("concat needs equal parts"));
                }
                s0 = Some(s);
                parts.push(x.as_slice());
            }
            let s = s0.ok_or_else(|| mismatch("concat of nothing"))?;
            concat(&parts, s, *dim)
        }
    })
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
