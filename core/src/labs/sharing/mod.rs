//! The GPU-sharing lab: fragmentation-aware packing of GPU-sharing pods after FGD (Weng et al.,
//! "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
//! Descent", USENIX ATC'23), against the five baselines of its artifact, in its artifact's
//! placement experiment on the Alibaba openb trace's shape (hkust-adsl/kubernetes-scheduler-
//! simulator @8f3d641). Pods ask for a share of one GPU (milli-GPU: a guaranteed share of its
//! memory) or for whole GPUs; many sharing pods on one GPU leave slivers no pod can use. FGD
//! places each pod where the cluster's expected unusable GPU share — against the mix of pods
//! that usually arrive — grows least.
//!
//! `cluster` (nodes, fit, fragmentation, typical tasks), `policies/` (one file per policy and
//! the scheduler's cycle), `experiment` (the artifact's protocol: shuffle, inflation, one try
//! per pod), `openb` (the trace's node and pod lists), `params`, `report`. There is no time and
//! no interference model here: FGD's experiment has neither (pods never leave; a share is
//! memory, and compute is not modelled).

pub mod cluster;
pub mod experiment;
pub mod openb;
pub mod params;
pub mod policies;
pub mod report;

use alloc::vec::Vec;

pub use params::{NodeGroup, PodClass, SharingParams};
pub use policies::SharingPolicy;

use crate::report::Report;
use crate::scenario::{LabParams, ScenarioError};

impl LabParams for SharingParams {
    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        Ok(run(self, progress))
    }
}

/// Runs every policy on every seed; `progress(done, total)` counts (policy, seed) runs.
#[must_use]
pub fn run(params: &SharingParams, progress: &mut dyn FnMut(usize, usize)) -> Report {
    let total = params.policies.len() * params.seeds as usize;
    let mut runs = Vec::with_capacity(total);
    for &policy in &params.policies {
        for k in 0..params.seeds {
            progress(runs.len(), total);
            let seed = params.first_seed.wrapping_add(u64::from(k));
            runs.push(experiment::run(params, policy, seed, &mut |_| {}));
        }
    }
    progress(total, total);
    report::build(params, &runs)
}
