//! ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3.1). The backward is split
//! into B (gradient w.r.t. the stage input, on the critical path) and W (gradient w.r.t. the
//! weights, needed only by the optimizer step). F and B follow 1F1B's order, so the number of
//! micro-batches in flight is 1F1B's; the W of a micro-batch is deferred and placed where stage i
//! would otherwise wait for a B from downstream. The backward chain of the last micro-batch must
//! cross every stage with B alone, so stage i ends with i deferred W passes: stage i runs the W
//! of micro-batch j after the B of micro-batch j+i (stage 0 runs F, B, W back to back; the last
//! stage ends with p−1 W passes while the B chain drains upstream). With T_F = T_B = T_W the bubble is (p−1)(T_F + T_B − T_W), a
//! third of 1F1B's (p−1)(T_F + T_B + T_W).

use alloc::vec::Vec;

use super::{Op, OpKind};

pub(super) fn b(mb: u32) -> Op {
    Op::new(OpKind::BackwardInput, mb, 0)
}
pub(super) fn w(mb: u32) -> Op {
    Op::new(OpKind::BackwardWeight, mb, 0)
}

/// Device order under ZB-H1 for `device` of `stages`.
pub(super) fn order(stages: u32, micro_batches: u32, device: u32) -> Vec<Op> {
    let warmup = (stages - device - 1).min(micro_batches);
    let defer = device.min(micro_batches);
    let mut ops = Vec::with_capacity(3 * micro_batches as usize);
    let mut next_w = 0;
    let mut push_b = |ops: &mut Vec<Op>, mb: u32| {
        ops.push(b(mb));
        // W of micro-batch mb − defer becomes due once B of mb has run.
        if mb >= defer {
            ops.push(w(next_w));
            next_w += 1;
        }
    };
    ops.extend((0..warmup).map(Op::f));
    for i in 0..micro_batches - warmup {
        ops.push(Op::f(warmup + i));
        push_b(&mut ops, i);
    }
    for mb in micro_batches - warmup..micro_batches {
        push_b(&mut ops, mb);
    }
    ops.extend((next_w..micro_batches).map(w));
    ops
}
