//! Fail-slow detectors, one file each: ResiHP's FLOPs-aware detector (observed iteration time
//! against the time predicted from the actual packed lengths, then localisation by per-GPU
//! kernel timings), Greyhound's slow-iteration detection as its artifact runs it (outlier
//! filter, Bayesian change point, gap and degradation filters), a naive z-score and a CUSUM
//! change-point detector on raw iteration time. Fail-stops are found by missed heartbeats in
//! [`super::sim`], the same way for every strategy.
//!
//! A detector reads an [`Observation`] (what a training job logs) and the job's own
//! configuration (its plan and FLOPs profile), never the simulator's health, jitter or noise:
//! `core/tests/resilience_observation.rs` checks that nothing in this folder names them.

mod changepoint;
mod greyhound;
mod naive;
mod resihp;

use alloc::vec::Vec;

use super::job::MicroBatch;

pub use changepoint::ChangePoint;
pub use greyhound::{Change, SlowDetection};
pub use naive::Naive;
pub use resihp::{Localisation, ResihpDetector};

/// What a training job logs about one iteration: all a detector may read of it.
#[derive(Clone, Copy, Debug)]
pub struct Observation<'a> {
    /// Iteration (0-based).
    pub iteration: u32,
    /// Wall time of the iteration (the training loop's timer), ns: GPU work, communication,
    /// pipeline waits and host stalls together.
    pub wall_ns: u64,
    /// The iteration's packed micro-batches, tokens and Σ lᵢ² (the packer knows them), in the
    /// order they are dealt to the replicas.
    pub micro_batches: &'a [MicroBatch],
    /// Per GPU, its compute-kernel time in the iteration (CUDA events around its forward and
    /// backward kernels), ns, with the kernels' own run-to-run noise; 0 for an idle GPU.
    pub kernel_ns: &'a [u64],
}

/// An alarm: the detector believes a fail-slow began.
#[derive(Clone, Debug, PartialEq)]
pub struct Alarm {
    /// Iteration (0-based) at whose end it was raised.
    pub iteration: u32,
    /// GPUs it blames, sorted (empty for detectors that cannot localise).
    pub gpus: Vec<u32>,
    /// Estimated slowdown of each blamed GPU, in the order of `gpus`.
    pub slowdowns: Vec<f64>,
}

/// Running mean and (population) standard deviation of a window of values.
pub(crate) fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, libm::sqrt(var))
}

/// Median of `values` (NaN-free; empty gives 0).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    crate::units::median(values).unwrap_or(0.0)
}
