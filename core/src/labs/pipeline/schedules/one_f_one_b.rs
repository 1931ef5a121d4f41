//! 1F1B, also called PipeDream-flush (Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN
//! Training", ICML 2021; Megatron-LM, SC 2021). Stage i warms up with p−i−1 forwards, then
//! alternates one forward and one backward, then drains the remaining backwards. Same bubble as
//! GPipe, but at most min(p−i, m) micro-batches are in flight on stage i instead of m.

use alloc::vec::Vec;

use super::Op;

/// Device order under 1F1B for `device` (0-based) of `stages`.
pub(super) fn order(stages: u32, micro_batches: u32, device: u32) -> Vec<Op> {
    let warmup = (stages - device - 1).min(micro_batches);
    let mut ops = Vec::with_capacity(2 * micro_batches as usize);
    ops.extend((0..warmup).map(Op::f));
    for i in 0..micro_batches - warmup {
        ops.push(Op::f(warmup + i));
        ops.push(Op::b(i));
    }
    ops.extend((micro_batches - warmup..micro_batches).map(Op::b));
    ops
}
