//! Fail-slow detectors, one file each: ResiHP's FLOPs-aware detector (observed iteration time
//! against the time predicted from the actual packed lengths, then localisation by per-rank
//! timings), Greyhound's BOCD on raw iteration time, a naive z-score and a CUSUM change-point
//! detector on raw iteration time. Fail-stops are found by missed heartbeats in [`super::sim`],
//! the same way for every strategy.

mod bocd;
mod changepoint;
mod naive;
mod resihp;

use alloc::vec::Vec;

pub use bocd::{Bocd, Change};
pub use changepoint::ChangePoint;
pub use naive::Naive;
pub use resihp::{Localisation, ResihpDetector};

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
