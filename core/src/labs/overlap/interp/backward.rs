//! The vector-Jacobian products of the forward ops ([`crate::graph::Op::Grad`]), attention's
//! included.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::kernels::{at, gates, gelu_grad, silu};
use super::{err, InterpError};
use crate::graph::{Op, Shape};

/// The vector-Jacobian product of the forward op `of` (see [`Op::Grad`]): the gradient of its
/// (first) input from `dy`, the last of `inputs` activations.
#[allow(clippy::too_many_lines)]
pub(super) fn backward<'a>(
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

/// Gradient of causal attention (see [`Op::Attention`]) with respect to its `[q | k | v]`
/// input `x` (shape `sx`) from the output gradient `dy` (shape `sy`); `[h, kv, d]` are the
/// query heads, key/value heads and head size. Per query row: P = softmax(q·Kᵀ/√d) over the
/// keys up to it, dV += Pᵀ·dO, dS = P ∘ (dO·Vᵀ − Σ P ∘ dO·Vᵀ), dQ = dS·K/√d, dK += dSᵀ·q/√d.
pub(super) fn attention_backward(
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
