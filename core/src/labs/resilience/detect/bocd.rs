//! Bayesian online change-point detection (Adams & MacKay 2007, "Bayesian Online Changepoint
//! Detection", Algorithm 1) on raw iteration time: Greyhound's detector (Wu et al., USENIX ATC
//! 2025, §4.1; artifact README "Slow iteration detection via BOCD").
//!
//! The first `window` iterations set the Normal-Gamma prior (mean μ₀ = their mean, κ₀ = 1,
//! α₀ = 1, β₀ = their variance, so the prior predictive spread is the warm-up spread). Every
//! iteration updates the run-length posterior P(rₜ | x₁..ₜ) with a constant hazard
//! H = 1/`hazard_iterations` and the Student-t predictive of each run length (ν = 2α, location
//! μ, scale² = β(κ+1)/(ακ)); run lengths beyond [`MAX_RUN`] are merged into the last. A change
//! is declared when P(rₜ < `recent`) exceeds `probability`; after the warm-up and after each
//! declaration the detector waits until that probability has fallen below the bar (the run has
//! grown past `recent`) before it can declare another. Its direction compares
//! the mean of the last `recent` iterations with the mean of the `window` before them: slower
//! is an alarm, faster a recovery.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::mean_std;

/// Longest run length tracked.
pub const MAX_RUN: usize = 400;

/// A change point BOCD declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Iterations got slower (a fail-slow alarm).
    Slower,
    /// Iterations got faster (a fail-slow may have ended).
    Faster,
}

#[derive(Clone, Copy, Debug)]
struct Stats {
    mu: f64,
    kappa: f64,
    alpha: f64,
    beta: f64,
}

impl Stats {
    fn log_predictive(&self, x: f64) -> f64 {
        let nu = 2.0 * self.alpha;
        let scale2 = self.beta * (self.kappa + 1.0) / (self.alpha * self.kappa);
        let z = (x - self.mu) * (x - self.mu) / (nu * scale2);
        libm::lgamma(f64::midpoint(nu, 1.0))
            - libm::lgamma(nu / 2.0)
            - 0.5 * libm::log(nu * core::f64::consts::PI * scale2)
            - f64::midpoint(nu, 1.0) * libm::log1p(z)
    }

    fn update(&self, x: f64) -> Stats {
        let kappa = self.kappa + 1.0;
        Stats {
            mu: (self.kappa * self.mu + x) / kappa,
            kappa,
            alpha: self.alpha + 0.5,
            beta: self.beta + self.kappa * (x - self.mu) * (x - self.mu) / (2.0 * kappa),
        }
    }
}

/// State of the BOCD detector.
#[derive(Clone, Debug)]
pub struct Bocd {
    window: usize,
    hazard: f64,
    recent: usize,
    probability: f64,
    warm: Vec<f64>,
    prior: Option<Stats>,
    /// Run-length probabilities (index = run length) and the matching posterior statistics.
    probs: Vec<f64>,
    stats: Vec<Stats>,
    armed: bool,
    history: VecDeque<f64>,
}

impl Bocd {
    /// A detector with warm-up `window`, expected run `hazard_iterations`, and the alarm rule
    /// P(r < `recent`) > `probability`.
    #[must_use]
    pub fn new(window: u32, hazard_iterations: f64, recent: u32, probability: f64) -> Bocd {
        Bocd {
            window: window as usize,
            hazard: 1.0 / hazard_iterations.max(1.0),
            recent: recent.max(1) as usize,
            probability,
            warm: Vec::new(),
            prior: None,
            probs: Vec::new(),
            stats: Vec::new(),
            armed: false,
            history: VecDeque::new(),
        }
    }

    /// Feeds one iteration's time, s.
    pub fn observe(&mut self, x: f64) -> Option<Change> {
        self.history.push_back(x);
        while self.history.len() > self.window + self.recent {
            self.history.pop_front();
        }
        let Some(prior) = self.prior else {
            self.warm.push(x);
            if self.warm.len() >= self.window {
                let (m, s) = mean_std(&self.warm);
                let var = (s * s).max((m * 1e-3) * (m * 1e-3)).max(1e-24);
                let p = Stats {
                    mu: m,
                    kappa: 1.0,
                    alpha: 1.0,
                    beta: var,
                };
                self.prior = Some(p);
                self.probs = alloc::vec![1.0];
                self.stats = alloc::vec![p];
            }
            return None;
        };
        let logs: Vec<f64> = self.stats.iter().map(|s| s.log_predictive(x)).collect();
        let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut grow = Vec::with_capacity(self.probs.len() + 1);
        let mut change = 0.0;
        for (p, l) in self.probs.iter().zip(&logs) {
            let joint = p * libm::exp(l - top);
            change += joint * self.hazard;
            grow.push(joint * (1.0 - self.hazard));
        }
        let mut probs = Vec::with_capacity(grow.len() + 1);
        probs.push(change);
        probs.extend(grow);
        let mut stats = Vec::with_capacity(probs.len());
        stats.push(prior);
        stats.extend(self.stats.iter().map(|s| s.update(x)));
        if probs.len() > MAX_RUN {
            let tail: f64 = probs[MAX_RUN - 1..].iter().sum();
            probs.truncate(MAX_RUN);
            stats.truncate(MAX_RUN);
            probs[MAX_RUN - 1] = tail;
        }
        let sum: f64 = probs.iter().sum();
        if !(sum.is_finite() && sum > 0.0) {
            self.probs = alloc::vec![1.0];
            self.stats = alloc::vec![prior];
            return None;
        }
        for p in &mut probs {
            *p /= sum;
        }
        self.probs = probs;
        self.stats = stats;
        let recent: f64 = self.probs.iter().take(self.recent).sum();
        if !self.armed {
            if recent < self.probability {
                self.armed = true;
            }
            return None;
        }
        if recent <= self.probability || self.history.len() <= self.recent {
            return None;
        }
        self.armed = false;
        let n = self.history.len();
        let last: Vec<f64> = self.history.iter().skip(n - self.recent).copied().collect();
        let before: Vec<f64> = self.history.iter().take(n - self.recent).copied().collect();
        let (a, _) = mean_std(&last);
        let (b, _) = mean_std(&before);
        Some(if a > b {
            Change::Slower
        } else {
            Change::Faster
        })
    }
}
