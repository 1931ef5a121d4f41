//! A seeded synthetic multi-tenant trace: Poisson arrivals, tenants drawn by weight, GPU sizes
//! drawn from a discrete distribution, log-normal durations.
//!
//! Randomness: `rand_pcg::Pcg64Mcg` seeded from [`SyntheticSpec::seed`] (the same numbers on
//! wasm32 and x86_64); transcendental math through `libm` only. Per job, in this order, five
//! uniform draws U ∈ [0, 1): the inter-arrival gap −mean·ln(1 − U) (the first job arrives at 0),
//! the tenant, the GPU size (inverse CDF of the normalised weights), and two for one Box–Muller
//! normal z = √(−2 ln(1 − U₁)) · cos(2π U₂); duration = exp(μ + σ z) s, clamped to
//! [1 s, `max_duration_s`]. Times are rounded to ns once each.
//!
//! The default is shaped like ASTRAEA's Philly setup (15 tenants) with numbers measured on the
//! real Philly trace in `../shared/data/philly_user_jobs_dirlab` (DIR-LAB derivative of Jeon et
//! al., ATC'19; 7,500 jobs): see [`SyntheticSpec::default`].

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::{ns_from_s, MAX_GPUS_PER_JOB};
use crate::labs::fairness::job::{Job, Trace};
use crate::scenario::ScenarioError;

/// Most jobs a synthetic trace may have.
pub const MAX_SYNTHETIC_JOBS: u32 = 1_000_000;
/// Most tenants a synthetic trace may have.
pub const MAX_SYNTHETIC_TENANTS: u32 = 10_000;
/// Most entries of [`SyntheticSpec::gpu_sizes`].
pub const MAX_GPU_SIZES: usize = 64;
/// Longest mean inter-arrival time and longest duration cap, s (1e9 s ≈ 31.7 years).
pub const MAX_SYNTHETIC_SECONDS: f64 = 1e9;

/// The recipe of a synthetic trace (the `fairness.synthetic` part of a scenario).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyntheticSpec {
    /// Seed of the generator; the same spec always gives the same trace.
    pub seed: u64,
    /// Number of jobs (1 ..= [`MAX_SYNTHETIC_JOBS`]).
    pub jobs: u32,
    /// Number of tenants (1 ..= [`MAX_SYNTHETIC_TENANTS`]), named `t1` … `tN`.
    pub tenants: u32,
    /// Relative share of the jobs each tenant submits (its demand), one per tenant, each > 0;
    /// empty = equal. (Scheduling weights are the lab's `tenant_weights`, not these.)
    pub tenant_weights: Vec<f64>,
    /// Mean time between two submissions (exponential inter-arrivals), s.
    pub mean_interarrival_s: f64,
    /// GPU sizes and their probabilities, `(gpus, probability)`; probabilities are normalised by
    /// their sum, which must be > 0.
    pub gpu_sizes: Vec<(u32, f64)>,
    /// μ of the log-normal duration: mean of ln(duration in seconds).
    pub duration_lognormal_mu: f64,
    /// σ of the log-normal duration: standard deviation of ln(duration in seconds).
    pub duration_lognormal_sigma: f64,
    /// Longest duration, s (longer draws are clamped).
    pub max_duration_s: f64,
}

impl Default for SyntheticSpec {
    /// ASTRAEA's Philly setup has 15 tenants; the rest is measured on the 7,500 jobs of the real
    /// Philly trace in `philly_user_jobs_dirlab` (Jeon et al., ATC'19, via DIR-LAB):
    /// - GPU sizes: 1 GPU 82.9 %, 2 GPUs 1.6 %, 4 GPUs 6.3 %, 8 GPUs 7.5 % + 1.8 % of jobs with
    ///   more than 8 GPUs (16–32) folded into 8 = 9.2 %;
    /// - durations: ln(run_time s) has mean 6.40 and standard deviation 3.15 (median
    ///   e^6.40 ≈ 600 s; heavy tail), longest run 5,199,751 s → cap 5.2e6 s;
    /// - mean inter-arrival 596.5 s (4,473,032 s of submissions over 7,499 gaps).
    ///
    /// 1,000 jobs and seed 1; tenants submit equal shares.
    fn default() -> Self {
        SyntheticSpec {
            seed: 1,
            jobs: 1_000,
            tenants: 15,
            tenant_weights: Vec::new(),
            mean_interarrival_s: 596.5,
            gpu_sizes: alloc::vec![(1, 0.829), (2, 0.016), (4, 0.063), (8, 0.092)],
            duration_lognormal_mu: 6.40,
            duration_lognormal_sigma: 3.15,
            max_duration_s: 5.2e6,
        }
    }
}

fn field(name: &str, message: String) -> ScenarioError {
    ScenarioError::field(format!("fairness.synthetic.{name}"), message)
}

impl SyntheticSpec {
    /// Checks every field; the error names the first bad one (`fairness.synthetic.jobs: …`).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path and the expected range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if !(1..=MAX_SYNTHETIC_JOBS).contains(&self.jobs) {
            return Err(field(
                "jobs",
                format!(
                    "must be between 1 and {MAX_SYNTHETIC_JOBS}, got {}",
                    self.jobs
                ),
            ));
        }
        if !(1..=MAX_SYNTHETIC_TENANTS).contains(&self.tenants) {
            return Err(field(
                "tenants",
                format!(
                    "must be between 1 and {MAX_SYNTHETIC_TENANTS}, got {}",
                    self.tenants
                ),
            ));
        }
        if !self.tenant_weights.is_empty() {
            if self.tenant_weights.len() != self.tenants as usize {
                return Err(field(
                    "tenant_weights",
                    format!(
                        "must be empty (equal) or have one weight per tenant ({}), got {}",
                        self.tenants,
                        self.tenant_weights.len()
                    ),
                ));
            }
            for (i, &w) in self.tenant_weights.iter().enumerate() {
                if !(w.is_finite() && w > 0.0 && w <= 1e12) {
                    return Err(field(
                        &format!("tenant_weights[{i}]"),
                        format!("must be > 0 and ≤ 1e12, got {w}"),
                    ));
                }
            }
        }
        let m = self.mean_interarrival_s;
        if !(m.is_finite() && m > 0.0 && m <= MAX_SYNTHETIC_SECONDS) {
            return Err(field(
                "mean_interarrival_s",
                format!("must be > 0 and ≤ 1e9 s, got {m}"),
            ));
        }
        if self.gpu_sizes.is_empty() || self.gpu_sizes.len() > MAX_GPU_SIZES {
            return Err(field(
                "gpu_sizes",
                format!(
                    "must have 1 to {MAX_GPU_SIZES} entries, got {}",
                    self.gpu_sizes.len()
                ),
            ));
        }
        for (i, &(g, p)) in self.gpu_sizes.iter().enumerate() {
            if !(1..=MAX_GPUS_PER_JOB).contains(&g) {
                return Err(field(
                    &format!("gpu_sizes[{i}]"),
                    format!("GPUs must be between 1 and {MAX_GPUS_PER_JOB}, got {g}"),
                ));
            }
            if !(p.is_finite() && (0.0..=1e12).contains(&p)) {
                return Err(field(
                    &format!("gpu_sizes[{i}]"),
                    format!("probability must be ≥ 0 and ≤ 1e12, got {p}"),
                ));
            }
        }
        if self.gpu_sizes.iter().map(|&(_, p)| p).sum::<f64>() <= 0.0 {
            return Err(field(
                "gpu_sizes",
                String::from("probabilities must not all be 0"),
            ));
        }
        let mu = self.duration_lognormal_mu;
        if !(mu.is_finite() && (-10.0..=25.0).contains(&mu)) {
            return Err(field(
                "duration_lognormal_mu",
                format!("must be between -10 and 25 (ln s), got {mu}"),
            ));
        }
        let sigma = self.duration_lognormal_sigma;
        if !(sigma.is_finite() && (0.0..=10.0).contains(&sigma)) {
            return Err(field(
                "duration_lognormal_sigma",
                format!("must be between 0 and 10 (ln s), got {sigma}"),
            ));
        }
        let cap = self.max_duration_s;
        if !(cap.is_finite() && (1.0..=MAX_SYNTHETIC_SECONDS).contains(&cap)) {
            return Err(field(
                "max_duration_s",
                format!("must be between 1 and 1e9 s, got {cap}"),
            ));
        }
        Ok(())
    }
}

/// Checks a spec (the same as [`SyntheticSpec::validate`]).
///
/// # Errors
/// [`ScenarioError::Field`] naming the first bad field.
pub fn validate_spec(spec: &SyntheticSpec) -> Result<(), ScenarioError> {
    spec.validate()
}

/// Picks the index whose cumulative weight first exceeds `u` × total (the last one on rounding).
fn pick(cumulative: &[f64], u: f64) -> usize {
    let total = cumulative.last().copied().unwrap_or(0.0);
    let x = u * total;
    cumulative
        .iter()
        .position(|&c| x < c)
        .unwrap_or(cumulative.len().saturating_sub(1))
}

/// Generates the trace of a spec; see the module documentation for the draws.
///
/// The spec should be valid ([`SyntheticSpec::validate`]); an invalid one never panics: counts
/// are clamped to their limits and bad numbers give an empty trace.
#[must_use]
pub fn generate(spec: &SyntheticSpec) -> Trace {
    let source = format!(
        "synthetic (seed {}, {} jobs, {} tenants)",
        spec.seed, spec.jobs, spec.tenants
    );
    if spec.validate().is_err() {
        return Trace {
            source,
            ..Trace::default()
        };
    }
    let tenants = spec.tenants as usize;
    let mut tenant_cum = Vec::with_capacity(tenants);
    let mut acc = 0.0;
    for t in 0..tenants {
        acc += spec.tenant_weights.get(t).copied().unwrap_or(1.0);
        tenant_cum.push(acc);
    }
    let mut size_cum = Vec::with_capacity(spec.gpu_sizes.len());
    acc = 0.0;
    for &(_, p) in &spec.gpu_sizes {
        acc += p;
        size_cum.push(acc);
    }
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let mut jobs = Vec::with_capacity(spec.jobs as usize);
    let mut t_s = 0.0_f64;
    for i in 0..spec.jobs {
        let gap_u: f64 = rng.random();
        if i > 0 {
            t_s += -spec.mean_interarrival_s * libm::log(1.0 - gap_u);
        }
        let tenant = pick(&tenant_cum, rng.random()) as u32;
        let gpus = spec.gpu_sizes[pick(&size_cum, rng.random())].0;
        let z = crate::units::standard_normal(&mut rng);
        let duration_s = libm::exp(spec.duration_lognormal_mu + spec.duration_lognormal_sigma * z)
            .clamp(1.0, spec.max_duration_s);
        jobs.push(Job {
            id: u64::from(i),
            tenant,
            gpus,
            submit_ns: ns_from_s(t_s),
            duration_ns: ns_from_s(duration_s),
            speed_by_gpu_type: Vec::new(),
            deadline_ns: None,
            later_deadlines: Vec::new(),
            service: false,
        });
    }
    Trace {
        jobs,
        tenants: (1..=spec.tenants).map(|t| format!("t{t}")).collect(),
        skipped_rows: 0,
        source,
    }
}
