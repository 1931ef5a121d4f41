//! Synchronous successive halving (Jamieson & Talwalkar, AISTATS 2016), kept beside ASHA for
//! comparison.
//!
//! Rung k holds ⌊N/η^k⌋ trials (down to 1); each trains from min_steps·η^(k−1) to
//! min_steps·η^k steps (rung 0: min_steps). A rung ends when its slowest trial ends (the
//! promotion barrier of synchronous successive halving), so which trials are promoted does not
//! change the makespan. Trials are fused into bundles of up to `max_fusion` (the size that gives
//! the shortest rung); each bundle goes to the worker that would finish it first.

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::{HpoResult, RungRow, Workers};
use crate::labs::bubbles::params::{BubblesParams, TunerKind};

/// Most rungs computed (N ≤ 10,000 and η ≥ 2 give at most 14).
pub const MAX_RUNGS: usize = 40;

/// The successive-halving rungs: (trials, steps each adds).
#[must_use]
pub fn rungs(params: &BubblesParams) -> Vec<(u32, u64)> {
    let h = &params.hpo;
    let mut out = Vec::new();
    let mut n = h.trials;
    let mut budget_before = 0u64;
    let mut budget = h.min_steps;
    while n >= 1 && out.len() < MAX_RUNGS {
        out.push((n, budget - budget_before));
        if n == 1 {
            break;
        }
        n /= h.eta;
        budget_before = budget;
        budget = budget.saturating_mul(u64::from(h.eta));
    }
    out
}

/// Runs the tuning job. `bubble_rate[d][b-1]` is stage d's squeezer rate with bundles of at
/// most b trials, in trial-steps per ns of one GPU. Each rung tries every bundle size
/// b ≤ `max_fusion` and keeps the fastest (the tuner chooses how far to fuse).
#[must_use]
pub fn run(params: &BubblesParams, bubble_rate: &[Vec<f64>]) -> HpoResult {
    let gpus = params.hpo.gpus_per_stage;
    let alone = Workers::new(&params.trial, bubble_rate, gpus, false);
    let with = Workers::new(&params.trial, bubble_rate, gpus, true);
    let mut rows = Vec::new();
    for (n, steps) in rungs(params) {
        let sizes = 1..=params.max_fusion.min(n).max(1);
        let best = |w: &Workers| {
            sizes
                .clone()
                .map(|b| rung_ns(w, n, steps, b))
                .min()
                .unwrap_or(0)
        };
        rows.push(RungRow {
            steps,
            trials_exclusive: n,
            trials_with_bubbles: n,
            exclusive_ns: best(&alone),
            with_bubbles_ns: best(&with),
        });
    }
    let winner_steps: u64 = rows.iter().map(|r| r.steps).sum();
    HpoResult {
        tuner: TunerKind::SyncSh,
        exclusive_ns: rows.iter().map(|r| r.exclusive_ns).sum(),
        with_bubbles_ns: rows.iter().map(|r| r.with_bubbles_ns).sum(),
        rungs: rows,
        fusion_exclusive: 0,
        fusion_with_bubbles: 0,
        winner_steps,
        winner_alone_ns: alone.segment_ns(0, 1, winner_steps),
        bubble_gpus: (with.len() - 1) as u32,
    }
}

/// Makespan of one rung of `n` trials × `steps` steps in bundles of up to `b` trials; each
/// bundle goes to the worker that would finish it first (the exclusive GPU, then the lower
/// stage, on ties).
fn rung_ns(workers: &Workers, n: u32, steps: u64, b: u32) -> u64 {
    // One min-heap of free times per kind of worker (the exclusive GPU, each stage's GPUs):
    // workers of one kind are identical, so only the earliest-free one of each is a candidate.
    let mut kinds: Vec<(usize, BinaryHeap<Reverse<u64>>)> = Vec::new();
    for (w, stage) in workers.stage.iter().enumerate() {
        match kinds.last_mut() {
            Some((first, heap)) if workers.stage[*first] == *stage => heap.push(Reverse(0)),
            _ => kinds.push((w, core::iter::once(Reverse(0)).collect())),
        }
    }
    let mut left = n;
    let mut makespan = 0u64;
    while left > 0 {
        let size = left.min(b);
        left -= size;
        let mut best: Option<(u64, usize)> = None;
        for (k, (w, heap)) in kinds.iter().enumerate() {
            let Some(&Reverse(free)) = heap.peek() else {
                continue;
            };
            let end = free.saturating_add(workers.segment_ns(*w, size, steps));
            if best.is_none_or(|(e, _)| end < e) {
                best = Some((end, k));
            }
        }
        let Some((end, k)) = best else { break };
        kinds[k].1.pop();
        kinds[k].1.push(Reverse(end));
        makespan = makespan.max(end);
    }
    makespan
}
