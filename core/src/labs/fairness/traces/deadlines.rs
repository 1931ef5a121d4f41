//! Deadlines for a trace that has none (SLO jobs, Chronus' term): a seeded share of the jobs
//! gets a deadline at a multiple of its isolated duration plus a slack.
//!
//! The recipe is fitted to the Chronus artifact's own traces (S-Lab-System-Group/ChronusArtifact,
//! `code/data/exp/trace_job_Philly_{SLO,MIX1,MIX2}.csv`, 30,940 jobs each; the generator that
//! made them is not in the artifact): for every strict job, deadline − submission lies between
//! 1.1 × the duration and 2 × the duration + 60 min (jobs of ≥ 120 min: the ratio's 0th, 50th
//! and 100th percentiles are 1.10, 1.63 and 2.47; jobs under 30 min: deadline − duration from 3 to
//! 87 min, median 39). So: deadline = submit + f × duration + e, f uniform in
//! [`DeadlineSpec::factor_min`, `DeadlineSpec::factor_max`] = [1.1, 2.0] and e uniform in
//! [0, [`DeadlineSpec::extra_max_s`]] = [0, 3,600 s]; MIX1 makes 70.2 % of its jobs SLO jobs
//! (21,724 strict, 9,216 best-effort), the default [`DeadlineSpec::slo_share`] once deadlines are
//! asked for.
//!
//! Randomness: `rand_pcg::Pcg64Mcg` seeded from [`DeadlineSpec::seed`], three uniform draws per
//! job of the trace in its order (SLO or not, f, e), drawn for every job so that one job's
//! deadline does not depend on which others got one; a job that already has a deadline keeps it.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::ns_from_s;
use crate::labs::fairness::job::Trace;
use crate::scenario::{check_range, ScenarioError};

/// How deadlines are given to a trace's jobs (the `fairness.deadlines` part of a scenario).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeadlineSpec {
    /// Share of the jobs without a deadline that get one, 0–1 (0: none; the default, which
    /// leaves a trace as it is).
    pub slo_share: f64,
    /// Smallest multiple of the isolated duration a deadline allows.
    pub factor_min: f64,
    /// Largest multiple of the isolated duration a deadline allows.
    pub factor_max: f64,
    /// Largest extra slack on top of the multiple, s.
    pub extra_max_s: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for DeadlineSpec {
    fn default() -> Self {
        DeadlineSpec {
            slo_share: 0.0,
            factor_min: 1.1,
            factor_max: 2.0,
            extra_max_s: 3_600.0,
            seed: 1,
        }
    }
}

impl DeadlineSpec {
    /// The artifact's MIX1 recipe: 70 % SLO jobs with the fitted deadlines.
    #[must_use]
    pub fn chronus_mix1() -> Self {
        DeadlineSpec {
            slo_share: 0.7,
            ..DeadlineSpec::default()
        }
    }

    /// True when the spec gives no job a deadline.
    #[must_use]
    pub fn is_off(&self) -> bool {
        self.slo_share == 0.0
    }

    /// Checks the one rule the field table ([`crate::labs::fairness::fields`]) cannot state,
    /// `factor_min ≤ factor_max ≤ 100`; the table checks the other fields' ranges.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `fairness.deadlines.factor_max`.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        check_range(
            "fairness",
            "deadlines.factor_max",
            self.factor_max,
            self.factor_min,
            100.0,
        )
    }
}

/// Gives deadlines to `trace`'s jobs as `spec` says (nothing when it is off); see the module
/// documentation.
pub fn assign(trace: &mut Trace, spec: &DeadlineSpec) {
    if spec.is_off() {
        return;
    }
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    for job in &mut trace.jobs {
        let pick: f64 = rng.random();
        let f_u: f64 = rng.random();
        let e_u: f64 = rng.random();
        if job.deadline_ns.is_some() || pick >= spec.slo_share {
            continue;
        }
        let f = spec.factor_min + f_u * (spec.factor_max - spec.factor_min);
        let after_s = f * job.duration_ns as f64 / 1e9 + e_u * spec.extra_max_s;
        job.deadline_ns = Some(job.submit_ns.saturating_add(ns_from_s(after_s)));
    }
}
