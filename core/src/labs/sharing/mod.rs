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
//! per pod), `openb` (the trace's node and pod lists), `params`, `report`. FGD's experiment has
//! no time and no interference (pods never leave; a share is memory); `timed` is the lab's
//! second experiment, which adds both under a stated model: exclusive GPUs, packing, and
//! Gandiva-style unpacking.

pub mod cluster;
pub mod experiment;
pub mod fields;
pub mod openb;
pub mod params;
pub mod policies;
pub mod report;
pub mod timed;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::vec;
use alloc::vec::Vec;

pub use params::{Experiment, NodeGroup, PodClass, SharingParams, TimedSpec};
pub use policies::SharingPolicy;

use serde::{Deserialize, Serialize};

use crate::report::Report;
use crate::scenario::{
    input_error, InputFile, InputSlot, KeepsRuns, LabParams, ScenarioError, Simulation,
};

impl LabParams for SharingParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        Ok(run(self, progress))
    }

    const INPUTS: &'static [InputSlot] = &[
        InputSlot {
            name: "nodes",
            help: "the cluster: an openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)",
            many: false,
            carried: true,
        },
        InputSlot {
            name: "pods",
            help: "the pods: an openb pod list CSV (cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec])",
            many: false,
            carried: true,
        },
    ];

    fn read_input(&mut self, file: &InputFile<'_>) -> Result<(), ScenarioError> {
        if file.slot == "nodes" {
            self.nodes = openb::parse_nodes(file.text).map_err(|e| input_error(file, e))?;
        } else {
            self.pods = openb::parse_pods(file.text).map_err(|e| input_error(file, e))?;
            self.source = file.source.into();
        }
        Ok(())
    }
}

impl KeepsRuns for SharingParams {
    type Input = ();
    type Runs = Vec<ClusterPicture>;

    fn simulate(
        &self,
        (): &(),
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulation<Vec<ClusterPicture>>, ScenarioError> {
        self.validate()?;
        if self.experiment == params::Experiment::Timed {
            return Ok(Simulation {
                runs: Vec::new(),
                report: run_timed(self, progress),
            });
        }
        let runs = seed_runs(self, progress);
        let cluster = cluster::Cluster::new(&self.nodes);
        let node_gpus: Vec<u8> = cluster.nodes.iter().map(|n| n.gpus as u8).collect();
        let sliver_below_milli = sliver_below_milli(self, &cluster);
        let pictures = runs
            .iter()
            .filter(|r| r.seed == self.first_seed)
            .map(|r| ClusterPicture {
                policy: r.policy,
                seed: r.seed,
                node_gpus: node_gpus.clone(),
                gpus: r.gpus_at_end.clone(),
                sliver_below_milli,
            })
            .collect();
        Ok(Simulation {
            runs: pictures,
            report: report::build(self, &runs),
        })
    }
}

/// What the page draws of one policy's run: every GPU of the cluster at the end of the first
/// seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterPicture {
    /// The policy.
    pub policy: SharingPolicy,
    /// The seed (the scenario's first).
    pub seed: u64,
    /// GPUs of each node, in cluster order.
    pub node_gpus: Vec<u8>,
    /// Every GPU, nodes in order: its allocated milli-GPU, plus
    /// [`experiment::SHARED_FLAG`] when sharing pods hold it.
    pub gpus: Vec<u16>,
    /// The smallest GPU share any typical GPU task asks, milli-GPU: a partly allocated GPU with
    /// less free than this is a sliver no usual pod can use.
    pub sliver_below_milli: u32,
}

/// The smallest share of one GPU that a typical GPU task asks, milli-GPU.
fn sliver_below_milli(params: &SharingParams, cluster: &cluster::Cluster) -> u32 {
    let counts: Vec<u32> = params.pods.iter().map(|c| c.count).collect();
    let shapes: Vec<cluster::Pod> = params.pods.iter().map(|c| cluster.pod(c)).collect();
    cluster::typical_tasks(&shapes, &counts, experiment::TYPICAL_COVERAGE_PERCENT)
        .iter()
        .filter(|t| t.pod.num_gpu > 0)
        .map(|t| t.pod.gpu_milli)
        .min()
        .unwrap_or(params::GPU_MILLI)
}

/// Every policy on every seed; `progress(done, total)` counts (policy, seed) runs.
fn seed_runs(
    params: &SharingParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<experiment::SeedRun> {
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
    runs
}

/// Runs the scenario's experiment: every policy on every seed of the placement experiment, or
/// the timed experiment's rows; `progress(done, total)` counts runs.
#[must_use]
pub fn run(params: &SharingParams, progress: &mut dyn FnMut(usize, usize)) -> Report {
    match params.experiment {
        params::Experiment::Placement => report::build(params, &seed_runs(params, progress)),
        params::Experiment::Timed => run_timed(params, progress),
    }
}

/// The timed experiment's rows: exclusive GPUs, then each policy packing and with unpacking.
#[must_use]
pub fn timed_variants(params: &SharingParams) -> Vec<timed::Variant> {
    let mut out = vec![timed::Variant::Exclusive];
    for &p in &params.policies {
        out.push(timed::Variant::Packing(p));
        out.push(timed::Variant::Unpacking(p));
    }
    out
}

fn run_timed(params: &SharingParams, progress: &mut dyn FnMut(usize, usize)) -> Report {
    let cluster = cluster::Cluster::new(&params.nodes);
    let arrivals = timed::arrivals(params, &cluster);
    let variants = timed_variants(params);
    let mut runs = Vec::with_capacity(variants.len());
    for (k, &v) in variants.iter().enumerate() {
        progress(k, variants.len());
        runs.push(timed::run(params, &arrivals, v));
    }
    progress(variants.len(), variants.len());
    report::build_timed(params, &runs)
}
