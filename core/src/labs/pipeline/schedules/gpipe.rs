//! GPipe (Huang et al., NeurIPS 2019): every device runs all m forwards, then all m backwards.
//! All m micro-batches' activations are alive at once; the bubble is (p−1)/(m+p−1) of the
//! iteration with uniform stages.

use alloc::vec::Vec;

use super::Op;

/// Device order under GPipe (the same on every device).
pub(super) fn order(micro_batches: u32) -> Vec<Op> {
    (0..micro_batches)
        .map(Op::f)
        .chain((0..micro_batches).map(Op::b))
        .collect()
}
