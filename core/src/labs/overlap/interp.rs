//! A small f32 interpreter of execution graphs over simulated ranks: the proof, beyond the
//! validator, that tiling, reordering, bucketing and the reordering baselines keep the math.
//!
//! Every rank of the job runs the graph in its issue order, in lock step. Tensors are
//! `[sequence, batch, features]` arrays of f32 ([`crate::graph::Shape`]). Graph inputs and
//! weights get deterministic pseudo-random values from their name and the rank (weights scaled
//! by 1/√fan-in), so two graphs that name their inputs alike read the same numbers. Ops
//! ([`crate::graph::Op`]): linear, add, GELU (tanh form), SwiGLU, LayerNorm and RMSNorm over
//! features, causal softmax attention with grouped-query heads, MoE permute/unpermute, views
//! (slice, concat). Collectives combine the members of the group: groups are nested in the
//! graph's group order (the first innermost, as the builder lays out TP, CP, EP, DP), the world
//! is the product of their sizes, and member j of a group is the rank whose coordinate in that
//! group is j. AllReduce sums; AllGather concatenates shards along the sequence; ReduceScatter
//! sums and keeps the rank's sequence shard; AllToAll exchanges sequence chunks (expert
//! dispatch, shape kept) or trades a sequence shard for a feature shard (Ulysses, read from the
//! output shape). A collective's result is computed at its start (every rank has its input
//! then) and published by its wait.
//!
//! Transcendental functions go through `libm`, so results are identical natively and in wasm.

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
                        CollectiveKind::SendRecv => {
                            return Err(err(
                                name,
                                "send/receive has no op semantics in the interpreter",
                            ))
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
                let so = cx.shape(out, name)?;
                for r in 0..world {
                    let v = compute(&cx, r, node, op, so)?;
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
    Ok(match op {
        Op::Linear => {
            let weight = node
                .inputs
                .iter()
                .find(|&&t| cx.g.tensors[t].persistent)
                .ok_or_else(|| err(name, "a linear needs a weight (a persistent input)"))?;
            let (x, si) = input(0)?;
            if si[0] != so[0] || si[1] != so[1] {
                return Err(mismatch("a linear keeps sequence and batch"));
            }
            let (cin, cout) = (si[2], so[2]);
            let w = values(
                hash(&cx.g.tensors[*weight].name, r),
                (cin * cout) as usize,
                1.0 / libm::sqrtf(cin.max(1) as f32),
            );
            let mut out = vec![0.0f32; elements(so) as usize];
            for s in 0..si[0] {
                for b in 0..si[1] {
                    let xr = &x[at(si, s, b, 0)..at(si, s, b, 0) + cin as usize];
                    let or = at(so, s, b, 0);
                    for (i, &xv) in xr.iter().enumerate() {
                        let wr = &w[i * cout as usize..(i + 1) * cout as usize];
                        for (j, &wv) in wr.iter().enumerate() {
                            out[or + j] += xv * wv;
                        }
                    }
                }
            }
            out
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
                    let gates = &router[at(sr, s, b, 0)..at(sr, s, b, 0) + k as usize];
                    let max = gates.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let e: Vec<f32> = gates.iter().map(|g| libm::expf(g - max)).collect();
                    let sum: f32 = e.iter().sum();
                    let dst = at(so, s, b, 0);
                    for j in 0..k {
                        let src = at(sy, s * k + j, b, 0);
                        for c in 0..so[2] as usize {
                            out[dst + c] += e[j as usize] / sum * y[src + c];
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
        Op::Accumulate => {
            return Err(err(
                name,
                "accumulation (a backward reduction) is not interpreted",
            ))
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
