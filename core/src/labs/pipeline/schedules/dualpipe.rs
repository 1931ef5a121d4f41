//! DualPipe and DualPipeV, as deepseek-ai/DualPipe (@3da1bbe) runs them.
//!
//! Both share one program, the eight steps of `step()` (`dualpipe.py` 358–425, `dualpipev.py`
//! 330–396), written for a rank's two *phases*:
//!
//! 1. `nF0`: 2(n − h − 1) forwards of phase 0;
//! 2. `nF0F1`: h + 1 pairs F0, F1;
//! 3. `nB1W1F1`: n − h − 1 times B1 (split), its W, F1;
//! 4. `nF0B1F1B0`: k − 2n + h + 1 times F0&B1, F1&B0 (overlapped pairs; the middle rank's very
//!    first pair runs unpaired);
//! 5. `nB1F1B0`: n − h − 1 times B1, F1&B0;
//! 6. `nB1B0`: h + 1 pairs B1, B0, split from the middle of the step on;
//! 7. `nWB0`: n − h − 1 times W, B0 (split);
//! 8. `nW`: h + 1 W passes,
//!
//! with W passes popped first-in first-out (`WeightGradStore`). An unsplit backward is the whole
//! backward (B and W together); a split one computes the input gradient and queues its W.
//!
//! * **DualPipe** (p ranks, n = p/2, k = m/2 micro-batches per direction, h = min(r, p − 1 − r)):
//!   phase 0 is the direction that enters nearest the rank (micro-batches 0..k enter at rank 0,
//!   k..m at rank p − 1); each rank holds its stage of both directions.
//! * **DualPipeV** (n = p ranks, k = m, h = r): phase 0 is chunk 0 (stage r of 2p), phase 1
//!   chunk 1 (stage 2p − 1 − r).

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::{Op, OpKind};

/// Builds one rank's op list, phase by phase, counting micro-batches per phase.
struct Program {
    ops: Vec<Op>,
    /// Next forward and backward micro-batch per phase.
    next_f: [u32; 2],
    next_b: [u32; 2],
    /// Split backwards whose W has not run yet, oldest first.
    pending_w: VecDeque<Op>,
    /// Maps a phase to (chunk, first micro-batch of that chunk).
    chunk_of: [(u32, u32); 2],
}

impl Program {
    fn forward(&mut self, phase: usize) {
        let (chunk, first) = self.chunk_of[phase];
        self.ops
            .push(Op::new(OpKind::Forward, first + self.next_f[phase], chunk));
        self.next_f[phase] += 1;
    }

    fn backward(&mut self, phase: usize, split: bool) {
        let (chunk, first) = self.chunk_of[phase];
        let mb = first + self.next_b[phase];
        self.next_b[phase] += 1;
        if split {
            self.ops.push(Op::new(OpKind::BackwardInput, mb, chunk));
            self.pending_w
                .push_back(Op::new(OpKind::BackwardWeight, mb, chunk));
        } else {
            self.ops.push(Op::new(OpKind::Backward, mb, chunk));
        }
    }

    fn weight(&mut self) {
        if let Some(w) = self.pending_w.pop_front() {
            self.ops.push(w);
        }
    }

    /// Forward of `f_phase` overlapped with the whole backward of `b_phase`.
    fn forward_backward(&mut self, f_phase: usize, b_phase: usize) {
        self.forward(f_phase);
        if let Some(f) = self.ops.last_mut() {
            f.joint = true;
        }
        self.backward(b_phase, false);
    }
}

/// The eight steps for half-rank `h` of `n`, with `k` micro-batches per phase.
fn program(n: u32, k: u32, h: u32, chunk_of: [(u32, u32); 2]) -> Vec<Op> {
    let mut pr = Program {
        ops: Vec::with_capacity(6 * k as usize),
        next_f: [0; 2],
        next_b: [0; 2],
        pending_w: VecDeque::new(),
        chunk_of,
    };
    let middle = h + 1 == n;
    // Ranks left of this one's half; saturating, as a shape the sources reject (odd p) must
    // still end in an error, not an overflow.
    let outer = n.saturating_sub(h + 1);
    for _ in 0..2 * outer {
        pr.forward(0);
    }
    for _ in 0..=h {
        pr.forward(0);
        pr.forward(1);
    }
    for _ in 0..outer {
        pr.backward(1, true);
        pr.weight();
        pr.forward(1);
    }
    for i in 0..(k + h + 1).saturating_sub(2 * n) {
        if i == 0 && middle {
            // dualpipe.py 385–391: not overlapped, to shorten the bubble.
            pr.forward(0);
            pr.backward(1, false);
        } else {
            pr.forward_backward(0, 1);
        }
        pr.forward_backward(1, 0);
    }
    for _ in 0..outer {
        pr.backward(1, false);
        pr.forward_backward(1, 0);
    }
    let half = h.div_ceil(2);
    let mut split = false;
    for i in 0..=h {
        if i == half && !h.is_multiple_of(2) {
            split = true;
        }
        pr.backward(1, split);
        if i == half && h.is_multiple_of(2) {
            split = true;
        }
        pr.backward(0, split);
    }
    for _ in 0..outer {
        pr.weight();
        pr.backward(0, true);
    }
    for _ in 0..=h {
        pr.weight();
    }
    pr.ops
}

/// DualPipe's order for `rank` of `stages` (even) with `micro_batches` (even, ≥ 2·stages).
pub(super) fn dualpipe(stages: u32, micro_batches: u32, rank: u32) -> Vec<Op> {
    let n = stages / 2;
    let k = micro_batches / 2;
    let second_half = rank >= n;
    let h = rank.min(stages.saturating_sub(rank + 1));
    // dualpipe.py: `phase ^= self.is_in_second_half`; direction 1's micro-batches are k..m.
    let forward_dir = (0, 0);
    let reverse_dir = (1, k);
    let chunk_of = if second_half {
        [reverse_dir, forward_dir]
    } else {
        [forward_dir, reverse_dir]
    };
    program(n, k, h, chunk_of)
}

/// DualPipeV's order for `rank` of `stages` with `micro_batches` (≥ 2·stages).
pub(super) fn dualpipe_v(stages: u32, micro_batches: u32, rank: u32) -> Vec<Op> {
    program(stages, micro_batches, rank, [(0, 0), (1, 0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(ops: &[Op], kind: OpKind, chunk: u32) -> usize {
        ops.iter()
            .filter(|o| o.kind == kind && o.chunk == chunk)
            .count()
    }

    #[test]
    fn every_rank_runs_each_phase_once_per_micro_batch() {
        for (p, m) in [(2, 4), (4, 8), (8, 20), (6, 14)] {
            for r in 0..p {
                let ops = dualpipe(p, m, r);
                for chunk in 0..2 {
                    assert_eq!(count(&ops, OpKind::Forward, chunk), (m / 2) as usize);
                    let whole = count(&ops, OpKind::Backward, chunk);
                    let split = count(&ops, OpKind::BackwardInput, chunk);
                    assert_eq!(whole + split, (m / 2) as usize);
                    assert_eq!(count(&ops, OpKind::BackwardWeight, chunk), split);
                }
            }
        }
    }

    #[test]
    fn dualpipe_v_rank_starts_with_its_warm_up_forwards() {
        // dualpipev.py step 1: (n − r − 1)·2 forwards of chunk 0, then F0 F1.
        let ops = dualpipe_v(4, 10, 1);
        let kinds: Vec<(OpKind, u32)> = ops.iter().take(6).map(|o| (o.kind, o.chunk)).collect();
        let f = OpKind::Forward;
        assert_eq!(kinds, [(f, 0), (f, 0), (f, 0), (f, 0), (f, 0), (f, 1)]);
    }
}
