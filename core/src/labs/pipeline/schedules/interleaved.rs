//! Interleaved 1F1B (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
//! Clusters Using Megatron-LM", SC 2021, §2.2). Device d holds chunks d, d+p, …, d+(v−1)p of the
//! model. Ops are issued in groups of p micro-batches per chunk; warm-up is
//! (p−d−1)·2 + (v−1)·p forwards, then one forward and one backward alternate. The bubble time
//! shrinks by v; the number of P2P transfers grows by v. Requires m to be a multiple of p.

use alloc::vec::Vec;

use super::{Op, OpKind};

/// The chunk and micro-batch of the k-th forward (or backward) op of a device.
fn chunk_and_mb(k: u32, stages: u32, chunks: u32, forward: bool) -> (u32, u32) {
    let group = stages * chunks;
    let in_group = k % group;
    let chunk = in_group / stages;
    let chunk = if forward { chunk } else { chunks - 1 - chunk };
    let mb = (k / group) * stages + in_group % stages;
    (chunk, mb)
}

fn op(kind: OpKind, k: u32, stages: u32, chunks: u32) -> Op {
    let (chunk, mb) = chunk_and_mb(k, stages, chunks, kind == OpKind::Forward);
    Op::new(kind, mb, chunk)
}

/// Device order under interleaved 1F1B for `device` of `stages`, with `chunks` chunks each.
pub(super) fn order(stages: u32, micro_batches: u32, chunks: u32, device: u32) -> Vec<Op> {
    let total = micro_batches * chunks;
    let warmup = if micro_batches == stages {
        total
    } else {
        ((stages - device - 1) * 2 + (chunks - 1) * stages).min(total)
    };
    let mut ops = Vec::with_capacity(2 * total as usize);
    ops.extend((0..warmup).map(|k| op(OpKind::Forward, k, stages, chunks)));
    for i in 0..total - warmup {
        ops.push(op(OpKind::Forward, warmup + i, stages, chunks));
        ops.push(op(OpKind::Backward, i, stages, chunks));
    }
    ops.extend((total - warmup..total).map(|k| op(OpKind::Backward, k, stages, chunks)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunk_and_micro_batch_appears_once_per_direction() {
        let ops = order(4, 8, 2, 1);
        for kind in [OpKind::Forward, OpKind::Backward] {
            let mut seen: Vec<(u32, u32)> = ops
                .iter()
                .filter(|o| o.kind == kind)
                .map(|o| (o.chunk, o.mb))
                .collect();
            seen.sort_unstable();
            let expected: Vec<(u32, u32)> =
                (0..2).flat_map(|c| (0..8).map(move |m| (c, m))).collect();
            assert_eq!(seen, expected);
        }
    }
}
