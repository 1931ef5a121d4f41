//! ResiHP's FLOPs-aware fail-slow detector.
//!
//! Reads only [`Observation`]s (wall time, packed lengths, per-GPU kernel times), the plan and
//! the FLOPs profile.
//!
//! 1. Fit: every iteration, each replica's GPUs' kernel times give its healthy-equivalent work
//!    y_r = kernel·t / (layers · known slowdown), the median over its GPUs (robust to a few
//!    slow ones). α̂, β̂ of y = α·Σ N_tokens + β·Σ lᵢ² are refitted by least squares over a
//!    sliding window of `fit_window` healthy iterations (with a singular system, the FLOPs
//!    profile's α, β scaled by one factor).
//! 2. Predict: the iteration's time from its actual packed lengths: the plan's 1F1B critical
//!    path with α̂, β̂ and the known slowdowns, plus the DP all-reduce.
//! 3. Trigger: observed / predicted > 1 + `threshold` for `persistence` iterations in a row.
//! 4. Localise: each GPU's observed kernel time against its prediction, relative to the median GPU;
//!    GPUs above 1 + `threshold` are blamed. If none stands out (every GPU slowed alike) it is
//!    not a fail-slow: no alarm, and the fit is learned afresh.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::super::job::{CommFactors, Job, PlanEval};
use super::super::plan::Health;
use super::{median, Alarm, Observation};
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

    /// Feeds one iteration's observation under the plan it ran. Returns the predicted time
    /// (ns, `None` while warming up) and an alarm if one is raised.
    ///
    /// # Errors
    /// [`ScenarioError::Run`] if the critical path fails (a bug).
    pub fn observe(
        &mut self,
        job: &Job,
        eval: &PlanEval,
        obs: &Observation<'_>,
    ) -> Result<(Option<f64>, Option<Alarm>), ScenarioError> {
        let known_stage = self.known.stage_factors(&eval.plan);
        let fit = self.fit(job);
        let predicted = fit.and_then(|(a, b)| {
            eval.iteration(obs.micro_batches, a, b, &known_stage, &CommFactors::default())
                .ok()
                .map(|t| t.total_ns as f64)
        });
        let over = predicted.is_some_and(|p| obs.wall_ns as f64 / p > 1.0 + self.threshold);
        // Learn from this iteration unless it looks failed (or while relearning a new regime).
        if !over || self.relearn > 0 {
            self.learn(job, eval, obs);
            self.relearn = self.relearn.saturating_sub(1);
        }
        if !over {
            self.over = 0;
            return Ok((predicted, None));
        }
        self.over += 1;
        let Some((a, b)) = fit.filter(|_| self.over >= self.persistence) else {
            return Ok((predicted, None));
        };
        self.over = 0;
        Ok((predicted, self.localise(job, eval, obs, a, b)))
    }

    /// Adds the iteration to the fit's window: per replica, the healthy-equivalent work per layer
    /// on one GPU (the median over its GPUs of kernel time · t / (layers · known slowdown ·
    /// (1 + rerouted micro-batches / m))) against Σ N and Σ lᵢ² of its micro-batches.
    fn learn(&mut self, job: &Job, eval: &PlanEval, obs: &Observation<'_>) {
        let c = job.tokens_per_micro_batch as f64;
        let mut s = Sums::default();
        for (r, batch) in eval.plan.replicas.iter().zip(eval.dealt(obs.micro_batches)) {
            let m = f64::from(r.micro_batches.max(1));
            let mut ys: Vec<f64> = Vec::new();
            for (si, st) in r.stages.iter().enumerate() {
                let extra = f64::from(r.extra.get(si).copied().unwrap_or(0));
                let scale = f64::from(st.layers) / st.gpus.len().max(1) as f64 * (1.0 + extra / m);
                for &g in &st.gpus {
                    let kernel = obs.kernel_ns.get(g as usize).copied().unwrap_or(0) as f64;
                    ys.push(kernel / (scale * self.known.factor(g)));
                }
            }
            let y = median(&mut ys);
            let tokens: u64 = batch.iter().map(|mb| mb.tokens).sum();
            let sum_sq: f64 = batch.iter().map(|mb| mb.sum_sq).sum();
            let w = job.alpha_ns * tokens as f64 + job.beta_ns * sum_sq;
            let (x1, x2) = (tokens as f64 / c, sum_sq / (c * c));
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
    }

    /// Localises after a trigger: each used GPU's observed kernel time over the one the fit
    /// predicts for it (with its known slowdown), against the median GPU; GPUs above
    /// 1 + `threshold` are blamed and their slowdown learned. None above: a uniform slowdown,
    /// no alarm, and the fit is learned afresh.
    fn localise(
        &mut self,
        job: &Job,
        eval: &PlanEval,
        obs: &Observation<'_>,
        alpha_ns: f64,
        beta_ns: f64,
    ) -> Option<Alarm> {
        let known = &self.known;
        let expected = eval.kernel_ns(obs.micro_batches, alpha_ns, beta_ns, job.gpus, |g| {
            known.factor(g)
        });
        let mut q: Vec<(u32, f64)> = eval
            .plan
            .used_gpus()
            .iter()
            .filter_map(|&g| {
                let e = expected.get(g as usize).copied().filter(|&e| e > 0)?;
                let o = obs.kernel_ns.get(g as usize).copied()?;
                Some((g, o as f64 / e as f64))
            })
            .collect();
        let mut values: Vec<f64> = q.iter().map(|x| x.1).collect();
        let mid = median(&mut values);
        q.retain(|&(_, v)| mid > 0.0 && v / mid > 1.0 + self.threshold);
        self.localisations.push(Localisation {
            iteration: obs.iteration,
            gpus: q.iter().map(|x| x.0).collect(),
        });
        if q.is_empty() {
            // Every GPU slowed alike: the workload or the whole cluster changed, not a device.
            self.window.clear();
            self.relearn = self.fit_window;
            return None;
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
        Some(Alarm {
            iteration: obs.iteration,
            gpus,
            slowdowns,
        })
    }
}
