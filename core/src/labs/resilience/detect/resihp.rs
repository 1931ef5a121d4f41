//! ResiHP's FLOPs-aware fail-slow detector.
//!
//! 1. Fit: every iteration, the per-stage micro-batch timings give, per micro-batch j, the
//!    healthy-equivalent time y_j = (observed − TP comm)·t/layers / (known slowdown of the
//!    stage), the median over stages (robust to a few slow stages). α̂, β̂ of
//!    y = α·N_tokens + β·Σ lᵢ² are refitted by least squares over a sliding window of
//!    `fit_window` healthy iterations (with N nearly constant under packing the fit falls back to
//!    scaling the FLOPs profile's α, β by one factor).
//! 2. Predict: the iteration's time from its actual packed lengths: the plan's 1F1B critical
//!    path with α̂, β̂ and the known slowdowns, plus the DP all-reduce.
//! 3. Trigger: observed / predicted > 1 + `threshold` for `persistence` iterations in a row.
//! 4. Localise: each GPU's own kernel time against its prediction, relative to the median GPU;
//!    GPUs above 1 + `threshold` are blamed. If none stands out (every GPU slowed alike) it is
//!    not a fail-slow: no alarm, and the fit is learned afresh.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::super::job::{CommFactors, Job, MicroBatch, PlanEval};
use super::super::plan::Health;
use super::{median, Alarm};
use crate::scenario::ScenarioError;

/// What a triggered localisation concluded.
#[derive(Clone, Debug, PartialEq)]
pub struct Localisation {
    /// Iteration of the trigger.
    pub iteration: u32,
    /// GPUs blamed (empty: uniform slowdown, not a fail-slow).
    pub gpus: Vec<u32>,
}

/// Least-squares sums of one iteration over its micro-batches, features scaled by the
/// micro-batch capacity C: x₁ = N/C, x₂ = Σl²/C².
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    x11: f64,
    x12: f64,
    x22: f64,
    x1y: f64,
    x2y: f64,
    /// Σ w·y and Σ w² for the one-factor fallback, w the profile's time.
    wy: f64,
    ww: f64,
}

/// State of ResiHP's detector.
#[derive(Clone, Debug)]
pub struct ResihpDetector {
    threshold: f64,
    persistence: u32,
    fit_window: usize,
    window: VecDeque<Sums>,
    relearn: usize,
    over: u32,
    /// The health the detector has learned (slowdowns of GPUs it blamed).
    pub known: Health,
    /// Localisations run so far.
    pub localisations: Vec<Localisation>,
}

impl ResihpDetector {
    /// A detector for `gpus` GPUs.
    #[must_use]
    pub fn new(gpus: u32, threshold: f64, persistence: u32, fit_window: u32) -> ResihpDetector {
        ResihpDetector {
            threshold,
            persistence,
            fit_window: fit_window as usize,
            window: VecDeque::new(),
            relearn: 0,
            over: 0,
            known: Health::healthy(gpus),
            localisations: Vec::new(),
        }
    }

    /// The fitted (α̂, β̂), ns per token and per token², per layer on one GPU; `None` before
    /// three iterations were seen.
    #[must_use]
    pub fn fit(&self, job: &Job) -> Option<(f64, f64)> {
        if self.window.len() < 3 {
            return None;
        }
        let mut s = Sums::default();
        for w in &self.window {
            s.x11 += w.x11;
            s.x12 += w.x12;
            s.x22 += w.x22;
            s.x1y += w.x1y;
            s.x2y += w.x2y;
            s.wy += w.wy;
            s.ww += w.ww;
        }
        let c = job.tokens_per_micro_batch as f64;
        let det = s.x11 * s.x22 - s.x12 * s.x12;
        if det > 1e-9 * s.x11 * s.x22 {
            let a = (s.x1y * s.x22 - s.x2y * s.x12) / det;
            let b = (s.x11 * s.x2y - s.x12 * s.x1y) / det;
            if a > 0.0 && b >= 0.0 {
                return Some((a / c, b / (c * c)));
            }
        }
        if s.ww > 0.0 {
            let k = s.wy / s.ww;
            return Some((job.alpha_ns * k, job.beta_ns * k));
        }
        None
    }

    /// Feeds one iteration: the plan it ran, its micro-batches, each GPU's observed own-kernel
    /// slowdown (`gpu_factor[g]`, 1 = as profiled) and the observed iteration time. Returns the
    /// predicted time (ns, `None` while warming up) and an alarm if one is raised.
    ///
    /// # Errors
    /// [`ScenarioError::Run`] if the critical path fails (a bug).
    pub fn observe(
        &mut self,
        job: &Job,
        iteration: u32,
        eval: &PlanEval,
        mbs: &[MicroBatch],
        gpu_factor: &[f64],
        observed_ns: u64,
    ) -> Result<(Option<f64>, Option<Alarm>), ScenarioError> {
        let plan = &eval.plan;
        let known_stage = self.known.stage_factors(plan);
        // Observed stage factors relative to what is known: the median is the healthy pace.
        let mut rel: Vec<f64> = plan
            .replicas
            .iter()
            .zip(&known_stage)
            .flat_map(|(r, ks)| {
                r.stages.iter().zip(ks).map(|(s, &k)| {
                    let f = s
                        .gpus
                        .iter()
                        .map(|&g| gpu_factor.get(g as usize).copied().unwrap_or(1.0))
                        .fold(1.0, f64::max);
                    f / k
                })
            })
            .collect();
        let pace = median(&mut rel);
        let predicted = self.fit(job).and_then(|(a, b)| {
            eval.iteration(mbs, a, b, &known_stage, &CommFactors::default())
                .ok()
                .map(|t| t.total_ns as f64)
        });
        let ratio = predicted.map(|p| observed_ns as f64 / p);
        let over = ratio.is_some_and(|r| r > 1.0 + self.threshold);
        // Learn from this iteration unless it looks failed (or while relearning a new regime).
        if !over || self.relearn > 0 {
            let c = job.tokens_per_micro_batch as f64;
            let mut s = Sums::default();
            for mb in mbs.iter().take(plan.total_micro_batches() as usize) {
                let w = job.alpha_ns * mb.tokens as f64 + job.beta_ns * mb.sum_sq;
                let y = w * pace;
                let x1 = mb.tokens as f64 / c;
                let x2 = mb.sum_sq / (c * c);
                s.x11 += x1 * x1;
                s.x12 += x1 * x2;
                s.x22 += x2 * x2;
                s.x1y += x1 * y;
                s.x2y += x2 * y;
                s.wy += w * y;
                s.ww += w * w;
            }
            self.window.push_back(s);
            while self.window.len() > self.fit_window {
                self.window.pop_front();
            }
            self.relearn = self.relearn.saturating_sub(1);
        }
        if !over {
            self.over = 0;
            return Ok((predicted, None));
        }
        self.over += 1;
        if self.over < self.persistence {
            return Ok((predicted, None));
        }
        self.over = 0;
        // Localise: per-GPU observed / known, against the median GPU of the plan.
        let used = plan.used_gpus();
        let mut q: Vec<(u32, f64)> = used
            .iter()
            .map(|&g| {
                let known = self.known.factor(g);
                (
                    g,
                    gpu_factor.get(g as usize).copied().unwrap_or(1.0) / known,
                )
            })
            .collect();
        let mut values: Vec<f64> = q.iter().map(|x| x.1).collect();
        let mid = median(&mut values);
        q.retain(|&(_, v)| mid > 0.0 && v / mid > 1.0 + self.threshold);
        self.localisations.push(Localisation {
            iteration,
            gpus: q.iter().map(|x| x.0).collect(),
        });
        if q.is_empty() {
            // Every GPU slowed alike: the workload or the whole cluster changed, not a device.
            self.window.clear();
            self.relearn = self.fit_window;
            return Ok((predicted, None));
        }
        let mut gpus = Vec::new();
        let mut slowdowns = Vec::new();
        for (g, v) in q {
            let estimate = self.known.factor(g) * v / mid;
            if let Some(s) = self.known.slowdown.get_mut(g as usize) {
                *s = estimate;
            }
            gpus.push(g);
            slowdowns.push(estimate);
        }
        Ok((
            predicted,
            Some(Alarm {
                iteration,
                gpus,
                slowdowns,
            }),
        ))
    }
}
