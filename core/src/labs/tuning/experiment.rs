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

/// Runs the sweep; `progress(done, total)` is called after each training run.
#[must_use]
pub fn run(p: &ExperimentParams, progress: &mut dyn FnMut(usize, usize)) -> Outcome {
    let task = p.task();
    let total = 2 * p.widths.len() * p.learning_rates.len();
    let mut done = 0;
    let mut sweep = |param: Parametrization, done: &mut usize| {
        p.widths
            .iter()
            .map(|&w| WidthSweep {
                width: w,
                results: p
                    .learning_rates
                    .iter()
                    .map(|&lr| {
                        let r = mlp::train(&task, &p.run_spec(w, param, lr));
                        *done += 1;
                        progress(*done, total);
                        r
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let sp = sweep(Parametrization::Sp, &mut done);
    let mup = sweep(Parametrization::Mup, &mut done);
    Outcome { sp, mup }
}
