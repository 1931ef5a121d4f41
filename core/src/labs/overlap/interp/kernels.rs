//! The interpreter's arithmetic: per-rank input values, tensor views (slice, concat), and each
//! forward op of [`crate::graph::Op`] on one rank ([`compute`]); gradients are in
//! [`super::backward`].

use alloc::borrow::Cow;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::backward::backward;
use super::{err, Ctx, InterpError};
use crate::graph::{Dim, Op, Shape, TensorId};

pub(super) fn hash(name: &str, rank: u64) -> u64 {
    // FNV-1a 64 of the name, mixed with the rank (splitmix64 finalizer).
    let mut fnv = fnv::FnvHasher::default();
    core::hash::Hasher::write(&mut fnv, name.as_bytes());
    mix(core::hash::Hasher::finish(&fnv) ^ rank.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` values in [−1, 1) from `seed`.
pub(super) fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let bits = mix(seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))) >> 40;
            (bits as f32 / (1u64 << 23) as f32 - 1.0) * scale
        })
        .collect()
}

pub(super) fn elements(s: Shape) -> u64 {
    s[0].saturating_mul(s[1]).saturating_mul(s[2])
}

pub(super) fn at(s: Shape, i: u64, b: u64, c: u64) -> usize {
    ((i * s[1] + b) * s[2] + c) as usize
}

/// Part `index` of `parts` of `x` along `dim`.
pub(super) fn slice(x: &[f32], s: Shape, dim: Dim, index: u64, parts: u64) -> Vec<f32> {
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
pub(super) fn concat(parts: &[&[f32]], s: Shape, dim: Dim) -> Vec<f32> {
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
pub(super) fn linear(x: &[f32], si: Shape, w: &[f32], cout: u64) -> Vec<f32> {
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

/// Softmax of the router's logits of one token over its `top_k` experts.
pub(super) fn gates(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = logits.iter().map(|g| libm::expf(g - max)).collect();
    let sum: f32 = e.iter().sum();
    e.iter().map(|v| v / sum).collect()
}

pub(super) fn gelu_grad(x: f32) -> f32 {
    let k = 0.797_884_6_f32; // √(2/π)
    let t = libm::tanhf(k * (x + 0.044_715 * x * x * x));
    0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044_715 * x * x)
}

pub(super) fn gelu(x: f32) -> f32 {
    let k = 0.797_884_6_f32; // √(2/π)
    0.5 * x * (1.0 + libm::tanhf(k * (x + 0.044_715 * x * x * x)))
}

pub(super) fn silu(x: f32) -> f32 {
    x / (1.0 + libm::expf(-x))
}

#[allow(clippy::too_many_lines)]
pub(super) fn compute(
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
