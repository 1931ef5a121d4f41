//! ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §2.2, Fig. 3 bottom). Stage
//! i warms up with 2(p − i) − 1 forwards, enough to fill the wait for its first B (stage 0
//! holds 2p − 1 micro-batches then, the schedule's peak), then runs B, W, F in turn. Its W
//! passes are deferred by 2i micro-batches, so the B chain of the last micro-batches crosses
//! the stages without waiting and stage i ends with 2i W passes: the tail is the head's mirror
//! and every stage's span is a parallelogram's row. Over each device's span the bubble is
//! (p − 1)(T_F + T_B − 2T_W), none when T_F = T_B = T_W (the paper's Table 2); the iteration
//! up to a global optimizer barrier is no shorter than ZB-H1's, which is why the paper pairs it
//! with post-validation of the optimizer step (§4).

use alloc::vec::Vec;

use super::zb_h1::{b, w};
use super::Op;

/// Device order under ZB-H2 for `device` of `stages`.
pub(super) fn order(stages: u32, micro_batches: u32, device: u32) -> Vec<Op> {
    let warmup = (2 * (stages - device) - 1).min(micro_batches);
    let defer = (2 * device).min(micro_batches);
    let mut ops = Vec::with_capacity(3 * micro_batches as usize);
    ops.extend((0..warmup).map(Op::f));
    let mut next_w = 0;
    for mb in 0..micro_batches {
        ops.push(b(mb));
        if mb >= defer {
            ops.push(w(next_w));
            next_w += 1;
        }
        if warmup + mb < micro_batches {
            ops.push(Op::f(warmup + mb));
        }
    }
    ops.extend((next_w..micro_batches).map(w));
    ops
}
