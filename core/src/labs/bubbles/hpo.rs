//! Cluster-level tuning: a successive-halving job on 1 exclusive GPU, with or without the
//! bubbles of a large pipeline job.
//!
//! Rung k holds ⌊N/η^k⌋ trials (down to 1); each trains from min_steps·η^(k−1) to
//! min_steps·η^k steps (rung 0: min_steps). A rung ends when its slowest trial ends (the
//! promotion barrier of synchronous successive halving). Trials are fused into bundles of up to
//! `max_fusion` (the size that gives the shortest rung); each bundle goes to the worker that would
//! finish it first. The exclusive GPU runs
//! a bundle of b trials at b/step(b) trial-steps per second; a bubble GPU of stage d at the rate
//! the squeezer reached on that stage with bundles of at most b trials (each of the stage's
//! `gpus_per_stage` GPUs sees the same bubbles).

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::params::BubblesParams;
use crate::units::nanos_from_f64;

/// Most rungs computed (N ≤ 100,000 and η ≥ 2 give at most 17).
pub const MAX_RUNGS: usize = 40;

/// One rung of the tuning job.
#[derive(Clone, Debug, PartialEq)]
pub struct Rung {
    /// Trials trained in it.
    pub trials: u32,
    /// Steps each trial adds in it.
    pub steps_each: u64,
    /// Its makespan on 1 exclusive GPU, ns.
    pub exclusive_ns: u64,
    /// Its makespan on 1 exclusive GPU plus the bubbles, ns.
    pub with_bubbles_ns: u64,
}

/// The tuning job's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct HpoResult {
    /// Every rung.
    pub rungs: Vec<Rung>,
    /// Bubble GPUs used (stages × GPUs per stage).
    pub bubble_gpus: u32,
}

impl HpoResult {
    /// Makespan on 1 exclusive GPU, ns.
    #[must_use]
    pub fn exclusive_ns(&self) -> u64 {
        self.rungs.iter().map(|r| r.exclusive_ns).sum()
    }

    /// Makespan on 1 exclusive GPU plus bubbles, ns.
    #[must_use]
    pub fn with_bubbles_ns(&self) -> u64 {
        self.rungs.iter().map(|r| r.with_bubbles_ns).sum()
    }

    /// Exclusive makespan ÷ makespan with bubbles.
    #[must_use]
    pub fn speedup(&self) -> f64 {
        let b = self.with_bubbles_ns();
        if b == 0 {
            0.0
        } else {
            self.exclusive_ns() as f64 / b as f64
        }
    }
}

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
/// most b trials, in trial-steps per ns of one GPU (d < S). Each rung tries every bundle size
/// b ≤ `max_fusion` and keeps the fastest (the tuner chooses how far to fuse).
#[must_use]
pub fn run(params: &BubblesParams, bubble_rate: &[Vec<f64>]) -> HpoResult {
    let mut out = Vec::new();
    for (n, steps) in rungs(params) {
        let sizes = 1..=params.max_fusion.min(n).max(1);
        let alone = sizes
            .clone()
            .map(|b| rung_ns(params, bubble_rate, n, steps, b, false))
            .min()
            .unwrap_or(0);
        let with = sizes
            .map(|b| rung_ns(params, bubble_rate, n, steps, b, true))
            .min()
            .unwrap_or(0);
        out.push(Rung {
            trials: n,
            steps_each: steps,
            exclusive_ns: alone,
            with_bubbles_ns: with,
        });
    }
    HpoResult {
        rungs: out,
        bubble_gpus: bubble_rate.len() as u32 * params.hpo.gpus_per_stage,
    }
}

/// Makespan of one rung of `n` trials × `steps` steps in bundles of up to `b` trials; each
/// bundle goes to the worker that would finish it first.
fn rung_ns(
    params: &BubblesParams,
    bubble_rate: &[Vec<f64>],
    n: u32,
    steps: u64,
    b: u32,
    bubbles: bool,
) -> u64 {
    let trial = &params.trial;
    let mut exclusive_free = 0u64;
    // Per stage: the free times of its identical GPUs (min-heap).
    let mut stage_free: Vec<BinaryHeap<Reverse<u64>>> = if bubbles {
        bubble_rate
            .iter()
            .map(|_| (0..params.hpo.gpus_per_stage).map(|_| Reverse(0)).collect())
            .collect()
    } else {
        Vec::new()
    };
    let mut left = n;
    let mut makespan = 0u64;
    while left > 0 {
        let size = left.min(b);
        left -= size;
        let mut best = (
            exclusive_free
                .saturating_add(nanos_from_f64(steps as f64 * trial.step_ns(size) as f64).0),
            None,
        );
        for (d, heap) in stage_free.iter().enumerate() {
            let rate = bubble_rate[d]
                .get(size as usize - 1)
                .copied()
                .unwrap_or(0.0);
            let Some(&Reverse(free)) = heap.peek() else {
                continue;
            };
            if rate <= 0.0 {
                continue;
            }
            let end = free.saturating_add(nanos_from_f64(steps as f64 * f64::from(size) / rate).0);
            if end < best.0 {
                best = (end, Some(d));
            }
        }
        match best.1 {
            None => exclusive_free = best.0,
            Some(d) => {
                stage_free[d].pop();
                stage_free[d].push(Reverse(best.0));
            }
        }
        makespan = makespan.max(best.0);
    }
    makespan
}
