//! The elastic lab's scenario: the cluster (nodes of equal GPUs), the scheduling interval and
//! restart cost, the workload (one of the Pollux artifact's eight files, or jobs given inline),
//! the policies and Pollux's search.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::policies::ElasticPolicy;
use super::workload::parse_workload;
use crate::labs::migration::PreemptionModel;
use crate::scenario::ScenarioError;

/// The most jobs of a workload.
pub const MAX_JOBS: usize = 5_000;
/// The latest submission, s (a week).
pub const MAX_SUBMIT_S: u64 = 7 * 24 * 3600;
/// The most GPUs of a cluster (the artifact's simulator handles 64 replicas per job at most).
pub const MAX_GPUS: u32 = 256;
/// The Pollux artifact's workload files (`simulator/workloads/workload-<k>.csv`, 160 jobs
/// each, job load 1.0), kept beside this module.
pub const ARTIFACT_WORKLOADS: [&str; 8] = [
    include_str!("workloads/workload-1.csv"),
    include_str!("workloads/workload-2.csv"),
    include_str!("workloads/workload-3.csv"),
    include_str!("workloads/workload-4.csv"),
    include_str!("workloads/workload-5.csv"),
    include_str!("workloads/workload-6.csv"),
    include_str!("workloads/workload-7.csv"),
    include_str!("workloads/workload-8.csv"),
];

/// One training job of a workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElasticJob {
    /// Name.
    pub name: String,
    /// Submission, s after the start.
    pub submit_s: u64,
    /// Application (`bert`, `cifar10`, `deepspeech2`, `imagenet`, `ncf`, `yolov3`).
    pub app: String,
    /// GPUs a user tuned the job for (the baselines run it on exactly this many).
    pub replicas: u32,
    /// Total batch size a user tuned it for (the baselines keep it; Pollux picks its own).
    pub batch_size: u32,
}

/// Pollux's genetic search (`simulator/pollux.py` l. 165–173: pymoo's NSGA-II).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolluxSpec {
    /// Individuals per generation (the artifact's 100).
    pub population: u32,
    /// Generations per scheduling round (the artifact's 100).
    pub generations: u32,
    /// Seed of the search's random draws (the artifact's are unseeded).
    pub seed: u64,
}

impl Default for PolluxSpec {
    fn default() -> Self {
        PolluxSpec {
            population: 100,
            generations: 100,
            seed: 1,
        }
    }
}

/// The scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ElasticParams {
    /// Policies to compare, in display order.
    pub policies: Vec<ElasticPolicy>,
    /// Nodes (the artifact's 16).
    pub nodes: u32,
    /// GPUs per node (the artifact's 4).
    pub gpus_per_node: u32,
    /// Scheduling interval, s (the artifact's 60): jobs advance and policies decide at these
    /// ticks only.
    pub interval_s: u32,
    /// A job's pause after any change of its GPUs, first start included, s (the artifact's 30:
    /// checkpoint, restart, restore). Pollux's fitness always prices a restart with it, as the
    /// artifact's does.
    pub restart_s: u32,
    /// What a change of GPUs really costs the job: `restart_s` (fixed, the artifact's), or the
    /// migration lab's checkpoint model for the job's new GPU count (pause to storage, restore
    /// from storage), rounded up to whole seconds.
    #[serde(default, skip_serializing_if = "PreemptionModel::is_fixed")]
    pub restart_cost: PreemptionModel,
    /// The artifact's workload file 1 to 8; 0: the jobs in `jobs`.
    pub workload: u32,
    /// Jobs, when `workload` is 0.
    pub jobs: Vec<ElasticJob>,
    /// Pollux's search.
    pub pollux: PolluxSpec,
}

impl Default for ElasticParams {
    fn default() -> Self {
        ElasticParams {
            policies: ElasticPolicy::ALL.to_vec(),
            nodes: 16,
            gpus_per_node: 4,
            interval_s: 60,
            restart_s: 30,
            restart_cost: PreemptionModel::Fixed,
            workload: 6,
            jobs: Vec::new(),
            pollux: PolluxSpec::default(),
        }
    }
}

impl ElasticParams {
    /// The jobs the scenario runs.
    ///
    /// # Errors
    /// A field error when the workload number is out of range or a job is bad.
    pub fn workload_jobs(&self) -> Result<Vec<ElasticJob>, ScenarioError> {
        match self.workload {
            0 => Ok(self.jobs.clone()),
            k @ 1..=8 => parse_workload(ARTIFACT_WORKLOADS[k as usize - 1])
                .map_err(|e| ScenarioError::field("elastic.workload", format!("{e}"))),
            k => Err(ScenarioError::field(
                "elastic.workload",
                format!("expected the artifact's workload 1 to 8, or 0 for inline jobs, got {k}"),
            )),
        }
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field and what was expected.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("elastic", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        let bad = |f: String, m: String| Err(ScenarioError::field(format!("elastic.{f}"), m));
        if self.policies.is_empty() {
            return bad("policies".into(), "name at least one policy".into());
        }
        if !(1..=4).contains(&self.gpus_per_node) {
            // The artifact's placement ids are digit strings of GPUs per node, 1 to 4.
            return bad(
                "gpus_per_node".into(),
                format!(
                    "expected 1 to 4 (the artifact's nodes), got {}",
                    self.gpus_per_node
                ),
            );
        }
        let gpus = u64::from(self.nodes) * u64::from(self.gpus_per_node);
        if self.nodes == 0 || gpus > u64::from(MAX_GPUS) {
            return bad(
                "nodes".into(),
                format!(
                    "expected 1 to {MAX_GPUS} GPUs in all, got {} nodes",
                    self.nodes
                ),
            );
        }
        if let PreemptionModel::Migration { params, .. } = &self.restart_cost {
            params.validate_prefixed("elastic.restart_cost.params")?;
        }
        let jobs = self.workload_jobs()?;
        if jobs.is_empty() {
            return bad("jobs".into(), "the workload has no jobs".into());
        }
        if jobs.len() > MAX_JOBS {
            return bad(
                "jobs".into(),
                format!("at most {MAX_JOBS} jobs, got {}", jobs.len()),
            );
        }
        for (i, j) in jobs.iter().enumerate() {
            if let Err((field, msg)) = j.check() {
                return bad(format!("jobs[{i}].{field}"), msg);
            }
            if u64::from(j.replicas) > gpus {
                return bad(
                    format!("jobs[{i}].replicas"),
                    format!(
                        "expected at most the cluster's {gpus} GPUs, got {}",
                        j.replicas
                    ),
                );
            }
        }
        Ok(())
    }
}

impl ElasticParams {
    /// Seconds a job pauses after its GPUs change to `gpus` GPUs.
    #[must_use]
    pub fn restart_pause_s(&self, gpus: u32) -> u64 {
        match &self.restart_cost {
            PreemptionModel::Fixed => u64::from(self.restart_s),
            PreemptionModel::Migration { option, params } => {
                let s = crate::labs::migration::preemption_cost_s(params, *option, gpus);
                if s.is_finite() && s > 0.0 {
                    libm::ceil(s) as u64
                } else {
                    0
                }
            }
        }
    }
}
