//! The μTransfer experiment: every width × learning rate × parametrization trained, and the
//! best learning rate of each width found.

use alloc::vec::Vec;

use super::mlp::{self, Parametrization, RunResult};
use super::params::ExperimentParams;

/// One width's sweep under one parametrization.
#[derive(Clone, Debug, PartialEq)]
pub struct WidthSweep {
    /// Student width.
    pub width: u32,
    /// One result per learning rate, grid order.
    pub results: Vec<RunResult>,
}

impl WidthSweep {
    /// Grid index of the lowest held-out loss (the lowest rate on ties).
    #[must_use]
    pub fn best_index(&self) -> usize {
        let mut best = 0;
        for (i, r) in self.results.iter().enumerate() {
            if r.eval_loss < self.results[best].eval_loss {
                best = i;
            }
        }
        best
    }
}

impl WidthSweep {
    /// Grid index of the largest rate that trained without diverging; -1 if every rate
    /// diverged (the edge lies below the grid).
    #[must_use]
    pub fn stable_edge(&self) -> isize {
        self.results
            .iter()
            .rposition(|r| !r.diverged)
            .map_or(-1, |i| i as isize)
    }
}

/// How far the largest stable learning rate moves across widths, grid steps. Under SP it falls
/// as the width grows (wider models blow up at smaller rates); under μP it should not move.
#[must_use]
pub fn stable_edge_spread_steps(sweeps: &[WidthSweep]) -> usize {
    let e: Vec<isize> = sweeps.iter().map(WidthSweep::stable_edge).collect();
    let hi = e.iter().copied().max().unwrap_or(0);
    let lo = e.iter().copied().min().unwrap_or(0);
    hi.abs_diff(lo)
}

/// The experiment's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Sweeps under SP, one per width.
    pub sp: Vec<WidthSweep>,
    /// Sweeps under μP, one per width.
    pub mup: Vec<WidthSweep>,
}

/// How far the best learning rate moves across widths: max − min best grid index.
#[must_use]
pub fn spread_steps(sweeps: &[WidthSweep]) -> usize {
    let idx: Vec<usize> = sweeps.iter().map(WidthSweep::best_index).collect();
    let hi = idx.iter().copied().max().unwrap_or(0);
    let lo = idx.iter().copied().min().unwrap_or(0);
    hi - lo
}

/// Most training state (weights, gradients, Adam moments) one fused bundle may hold, bytes.
pub const MAX_BUNDLE_BYTES: u64 = 256 << 20;

/// How many learning rates of one width are fused into one bundle: as many as fit
/// [`MAX_BUNDLE_BYTES`] of f32 training state (4 copies of the weights), at least one.
#[must_use]
pub fn bundle_size(task: &mlp::Task, spec: &mlp::RunSpec) -> usize {
    let weights = mlp::step_flops(task, spec) / (6.0 * f64::from(spec.batch.max(1)));
    let per_trial = 16.0 * weights;
    let fit = libm::floor(MAX_BUNDLE_BYTES as f64 / per_trial.max(1.0));
    (fit as usize).max(1)
}

/// Runs the sweep: each width's learning rates are trained as fused bundles per
/// parametrization and seed ([`mlp::train_fused`], the same bits as one run per rate; see
/// [`bundle_size`]); with several seeds a rate's result is the mean held-out loss over them
/// (diverged if any diverged). `progress(done, total)` counts training runs and is called
/// after each bundle.
#[must_use]
pub fn run(p: &ExperimentParams, progress: &mut dyn FnMut(usize, usize)) -> Outcome {
    let task = p.task();
    let seeds = p.seeds.max(1);
    let total = 2 * p.widths.len() * p.learning_rates.len() * seeds as usize;
    let mut done = 0;
    let mut sweep = |param: Parametrization, done: &mut usize| {
        p.widths
            .iter()
            .map(|&w| {
                let mut sum = alloc::vec![0.0; p.learning_rates.len()];
                let mut results: Vec<RunResult> = Vec::new();
                for replica in 0..seeds {
                    let spec = p.replica_spec(w, param, 0.0, replica);
                    let bundle = bundle_size(&task, &spec);
                    let mut one = Vec::with_capacity(p.learning_rates.len());
                    for rates in p.learning_rates.chunks(bundle) {
                        one.extend(
                            mlp::train_fused(&task, &spec, rates)
                                .into_iter()
                                .map(|t| t.result),
                        );
                        *done += rates.len();
                        progress(*done, total);
                    }
                    for (s, r) in sum.iter_mut().zip(&one) {
                        *s += r.eval_loss;
                    }
                    if results.is_empty() {
                        results = one;
                    } else {
                        for (acc, r) in results.iter_mut().zip(&one) {
                            acc.diverged |= r.diverged;
                        }
                    }
                }
                for (r, s) in results.iter_mut().zip(&sum) {
                    r.eval_loss = s / f64::from(seeds);
                }
                WidthSweep { width: w, results }
            })
            .collect::<Vec<_>>()
    };
    let sp = sweep(Parametrization::Sp, &mut done);
    let mup = sweep(Parametrization::Mup, &mut done);
    Outcome { sp, mup }
}
