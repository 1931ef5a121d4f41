//! Greyhound's slow-iteration detection as its artifact runs it (Wu et al., USENIX ATC 2025;
//! github.com/wutianyuan1/Greyhound @de4d6b3, `detector/control_plane/`):
//!
//! - every 5 s of job time (`local_controller.py:71`) it reads the iteration times logged since
//!   its buffer was last cleared (iteration = interval between repeats of the NCCL call pattern,
//!   `slow_detection.py:89–96`; the same for every rank of a synchronous job, so one series);
//! - drops the times with |z| > 3 over that buffer (`remove_outliers`, l.13–24);
//! - finds change points with a Bayesian change-point model and keeps those whose probability
//!   is above 0.8 (`find_performance_drop`, l.101–122: Rbeast's `beast`, a piecewise-linear
//!   trend fitted by reversible-jump MCMC);
//! - keeps a change point only if it lies more than 10 iterations after the buffer's start and
//!   the means before and after it differ by more than 10 % of the larger
//!   (`validate_performance_drop`, l.38–86);
//! - any change point left is reported, slower or faster (`local_controller.py:94–100`), and
//!   after the verification that follows the buffer is cleared (l.140–143).
//!
//! The change-point model here is ours, in BEAST's place: an exact Bayesian posterior over at
//! most one change of a piecewise-constant normal mean and variance (Normal-Gamma prior from the
//! buffer's own mean and variance, κ₀ = α₀ = 1; prior probability ½ of a change, uniform over
//! its position); a change point's probability is the posterior mass within ±5 iterations of
//! the most probable position. One change is enough because the buffer is cleared after each
//! report.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::mean_std;

/// Iterations kept in the buffer at most (the oldest go first; ours).
const MAX_BUFFER: usize = 2_000;
/// Half-width, iterations, of the window whose posterior mass is a change point's probability.
const NEIGHBOURHOOD: usize = 5;
/// Prior probability that the buffer holds a change.
const PRIOR_CHANGE: f64 = 0.5;

/// The direction of a reported change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Iterations got slower.
    Slower,
    /// Iterations got faster.
    Faster,
}

/// Greyhound's detector state.
#[derive(Clone, Debug)]
pub struct SlowDetection {
    /// Change-point probability above which a change point is suspected (0.8).
    probability: f64,
    /// Iterations a change point must lie after the buffer's start (10).
    min_gap: usize,
    /// Relative difference of the means it must separate (0.1).
    min_degradation: f64,
    /// |z| above which a time is an outlier (3).
    outlier_z: f64,
    /// Job time between checks, ns (5 s).
    check_ns: u64,
    buffer: VecDeque<f64>,
    since_check_ns: u64,
}

impl SlowDetection {
    /// A detector with the artifact's rule: probability bar, gap (iterations), degradation,
    /// outlier |z| and check interval (ns).
    #[must_use]
    pub fn new(
        probability: f64,
        min_gap: u32,
        min_degradation: f64,
        outlier_z: f64,
        check_ns: u64,
    ) -> SlowDetection {
        SlowDetection {
            probability,
            min_gap: min_gap as usize,
            min_degradation,
            outlier_z,
            check_ns,
            buffer: VecDeque::new(),
            since_check_ns: 0,
        }
    }

    /// Empties the buffer (after a verification, or when the job restarts on a new layout).
    pub fn clear(&mut self) {
        self.buffer.clear();
        self.since_check_ns = 0;
    }

    /// Feeds one iteration's time (s) that took `dur_ns` of job time; checks when 5 s have
    /// passed since the last check and returns the change it reports.
    pub fn observe(&mut self, time_s: f64, dur_ns: u64) -> Option<Change> {
        self.buffer.push_back(time_s);
        while self.buffer.len() > MAX_BUFFER {
            self.buffer.pop_front();
        }
        self.since_check_ns = self.since_check_ns.saturating_add(dur_ns);
        if self.since_check_ns < self.check_ns {
            return None;
        }
        self.since_check_ns = 0;
        let series: Vec<f64> = self.buffer.iter().copied().collect();
        self.check(&series)
    }

    /// One check of a buffer: outliers out, the most probable change, its probability, the
    /// gap and degradation filters.
    #[must_use]
    pub fn check(&self, buffer: &[f64]) -> Option<Change> {
        let (mean, std) = mean_std(buffer);
        let kept: Vec<f64> = buffer
            .iter()
            .copied()
            .filter(|x| std <= 0.0 || libm::fabs(x - mean) / std <= self.outlier_z)
            .collect();
        let (k, probability) = change_posterior(&kept)?;
        if probability <= self.probability || k < self.min_gap {
            return None;
        }
        let (left, _) = mean_std(&kept[..k]);
        let (right, _) = mean_std(&kept[k..]);
        let degradation = libm::fabs(left - right) / left.max(right);
        if degradation.is_nan() || degradation <= self.min_degradation {
            return None;
        }
        Some(if right > left {
            Change::Slower
        } else {
            Change::Faster
        })
    }
}

/// Log marginal likelihood of a segment with `n` values, sum `s1` and sum of squares `s2`
/// under a Normal-Gamma prior (μ₀, κ₀ = 1, α₀ = 1, β₀).
fn segment_log_likelihood(n: f64, s1: f64, s2: f64, mu0: f64, beta0: f64) -> f64 {
    let (kappa0, alpha0) = (1.0, 1.0);
    let mean = s1 / n;
    let ss = (s2 - s1 * mean).max(0.0);
    let kappa = kappa0 + n;
    let alpha = alpha0 + n / 2.0;
    let beta = beta0 + ss / 2.0 + kappa0 * n * (mean - mu0) * (mean - mu0) / (2.0 * kappa);
    libm::lgamma(alpha) - libm::lgamma(alpha0) + alpha0 * libm::log(beta0)
        - alpha * libm::log(beta)
        + 0.5 * libm::log(kappa0 / kappa)
        - n / 2.0 * libm::log(2.0 * core::f64::consts::PI)
}

/// The most probable change position k (the new segment starts at index k) of `x` and the
/// posterior probability of a change within ±[`NEIGHBOURHOOD`] of it; `None` for fewer than 4
/// values or a flat series.
fn change_posterior(x: &[f64]) -> Option<(usize, f64)> {
    let n = x.len();
    if n < 4 {
        return None;
    }
    let (mu0, std) = mean_std(x);
    let beta0 = (std * std).max((mu0 * 1e-3) * (mu0 * 1e-3));
    if beta0.is_nan() || beta0 <= 0.0 {
        return None;
    }
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push((0.0, 0.0));
    for &v in x {
        let (a, b) = prefix[prefix.len() - 1];
        prefix.push((a + v, b + v * v));
    }
    let seg = |from: usize, to: usize| {
        let (a0, b0) = prefix[from];
        let (a1, b1) = prefix[to];
        segment_log_likelihood((to - from) as f64, a1 - a0, b1 - b0, mu0, beta0)
    };
    // log P(data, no change) and log P(data, change at k) for k = 1..n-1.
    let none = libm::log(1.0 - PRIOR_CHANGE) + seg(0, n);
    let per_position = libm::log(PRIOR_CHANGE / (n - 1) as f64);
    let logs: Vec<f64> = (1..n)
        .map(|k| per_position + seg(0, k) + seg(k, n))
        .collect();
    let top = logs.iter().copied().fold(none, f64::max);
    let total = libm::exp(none - top) + logs.iter().map(|l| libm::exp(l - top)).sum::<f64>();
    let (best, _) = logs
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |acc, (i, &l)| if l > acc.1 { (i, l) } else { acc });
    let lo = best.saturating_sub(NEIGHBOURHOOD);
    let hi = (best + NEIGHBOURHOOD + 1).min(logs.len());
    let mass: f64 = logs[lo..hi].iter().map(|l| libm::exp(l - top)).sum();
    Some((best + 1, mass / total))
}
