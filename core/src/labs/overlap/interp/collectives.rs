//! What a collective computes on the simulated ranks: AllReduce, ReduceScatter, AllGather,
//! AllToAll (exchange or sequence/feature trade) and one ring hop of send/receive.

use alloc::format;
use alloc::vec::Vec;

use super::kernels::{concat, elements, slice};
use super::{err, Ctx, InterpError};
use crate::cost::CollectiveKind;
use crate::graph::{Dim, TensorId};

/// The results of the collective `kind` over `group` on every rank (index = rank): each rank's
/// share of combining the members' copies of tensor `inp` into a tensor of `out`'s shape, as the
/// module's documentation states per kind. `name` is the collective's node, named in errors.
pub(super) fn collective(
    cx: &Ctx<'_>,
    kind: CollectiveKind,
    group: usize,
    inp: TensorId,
    out: TensorId,
    name: &str,
) -> Result<Vec<Vec<f32>>, InterpError> {
    let (si, so) = (cx.shape(inp, name)?, cx.shape(out, name)?);
    let mut results = Vec::with_capacity(cx.world as usize);
    for r in 0..cx.world {
        cx.coordinate(group, r, name)?;
        let (members, coord) = cx.members(group, r);
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
                if kind == CollectiveKind::ReduceScatter {
                    if si[0] % p != 0 {
                        return Err(err(name, "sequence does not split over the group"));
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
            CollectiveKind::SendRecv => xs[(coord as usize + xs.len() - 1) % xs.len()].clone(),
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
    Ok(results)
}
