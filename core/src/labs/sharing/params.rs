//! The sharing lab's scenario: a cluster as groups of identical nodes, a pod list as classes of
//! identical pods (the FGD experiment drops every pod's times, so a pod list is a multiset of
//! shapes), the policies and the experiment's protocol (seeds, inflation).

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::policies::SharingPolicy;
use crate::scenario::ScenarioError;

/// The most GPUs one node may hold.
pub const MAX_GPUS_PER_NODE: u32 = 16;
/// The most nodes of a cluster.
pub const MAX_NODES: u64 = 100_000;
/// The most pods of a pod list before inflation.
pub const MAX_PODS: u64 = 1_000_000;
/// The most seeds of one run.
pub const MAX_SEEDS: u32 = 100;
/// One whole GPU in milli-GPU.
pub const GPU_MILLI: u32 = 1000;

/// Nodes of one shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGroup {
    /// How many nodes.
    pub count: u32,
    /// GPU model (a name, e.g. `G2`, `T4`, `V100M16`).
    pub model: String,
    /// GPUs per node.
    pub gpus: u32,
    /// CPU per node, milli-cores.
    pub cpu_milli: u64,
    /// Main memory per node, MiB.
    pub memory_mib: u64,
}

/// Pods of one shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodClass {
    /// How many pods.
    pub count: u32,
    /// CPU requested, milli-cores.
    pub cpu_milli: u64,
    /// Main memory requested, MiB.
    pub memory_mib: u64,
    /// GPUs requested (0: a CPU pod).
    pub num_gpu: u32,
    /// Share of each GPU requested, milli-GPU (1000 = a whole GPU; below 1000 only with
    /// `num_gpu` = 1: a GPU-sharing pod). Ignored when `num_gpu` is 0.
    pub gpu_milli: u32,
    /// GPU models the pod may run on; empty: any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
}

crate::kinds! {
    /// Which experiment a sharing scenario runs.
    pub enum Experiment as "sharing experiment" {
        /// FGD's placement experiment: no time, pods never leave.
        Placement = "placement", "FGD's placement experiment";
        /// Pods arrive and leave over time; pods sharing a GPU slow each other.
        Timed = "timed", "Over time, with interference";
    }
}

/// The timed experiment (`super::timed`): pods drawn from the pod classes arrive as a Poisson
/// process and run for exponentially distributed solo durations; pods sharing a GPU slow each
/// other by the kernel's contention model; a packer may move a pod that runs too slowly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimedSpec {
    /// Pods that arrive.
    pub pods: u32,
    /// Offered load: GPU milli-time asked ÷ the cluster's GPU milli over the arrival span.
    pub load: f64,
    /// Mean solo duration of a pod, s (exponential).
    pub mean_duration_s: f64,
    /// A pod sharing a GPU that runs slower than this share of its solo speed is moved
    /// (the unpacking variants only).
    pub unpack_below: f64,
    /// How long after a pod joins a GPU its co-runners' speeds are checked, s (Gandiva profiles
    /// packed jobs over a time slice: 60 s, OSDI'18 §6).
    pub check_after_s: f64,
    /// A move's pause, s: the pod makes no progress for this long on its new GPU (Gandiva's
    /// checkpoint migration of a 1-GPU DeepSpeech job: about 3.5 s, OSDI'18 Fig. 13).
    pub migration_s: f64,
}

impl Default for TimedSpec {
    fn default() -> Self {
        TimedSpec {
            pods: 5_000,
            load: 0.95,
            mean_duration_s: 3_600.0,
            unpack_below: 0.8,
            check_after_s: 60.0,
            migration_s: 3.5,
        }
    }
}

/// The most pods of a timed run.
pub const MAX_TIMED_PODS: u32 = 200_000;

/// The experiment: FGD's artifact's protocol (pods shuffled by the seed, cloned until the
/// requested GPUs reach `inflation_percent` of the cluster's, each placed once).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SharingParams {
    /// Policies to compare, in display order.
    pub policies: Vec<SharingPolicy>,
    /// The cluster.
    pub nodes: Vec<NodeGroup>,
    /// The original pods (before inflation).
    pub pods: Vec<PodClass>,
    /// Requested GPUs, as a share of the cluster's GPUs, at which inflation stops, % (the
    /// artifact's 130).
    pub inflation_percent: u32,
    /// First seed (the artifact's 42).
    pub first_seed: u64,
    /// Seeds run, each a different shuffle and inflation (the artifact's 10); figures are
    /// means over them.
    pub seeds: u32,
    /// Where the pod list came from (shown in the title).
    pub source: String,
    /// Which experiment runs (default: FGD's placement experiment).
    pub experiment: Experiment,
    /// The timed experiment's knobs.
    pub timed: TimedSpec,
}

impl Default for SharingParams {
    fn default() -> Self {
        SharingParams {
            policies: SharingPolicy::ALL.to_vec(),
            nodes: vec![
                NodeGroup {
                    count: 8,
                    model: "G2".into(),
                    gpus: 8,
                    cpu_milli: 96_000,
                    memory_mib: 393_216,
                },
                NodeGroup {
                    count: 8,
                    model: "T4".into(),
                    gpus: 2,
                    cpu_milli: 104_000,
                    memory_mib: 524_288,
                },
            ],
            pods: vec![
                pod(30, 4_000, 8_192, 1, 1000),
                pod(20, 4_000, 8_192, 1, 500),
                pod(6, 16_000, 65_536, 4, 1000),
                pod(8, 8_000, 16_384, 0, 0),
            ],
            inflation_percent: 130,
            first_seed: 42,
            seeds: 1,
            source: "a small example".into(),
            experiment: Experiment::Placement,
            timed: TimedSpec::default(),
        }
    }
}

/// A pod class with no model constraint.
#[must_use]
pub fn pod(count: u32, cpu_milli: u64, memory_mib: u64, num_gpu: u32, gpu_milli: u32) -> PodClass {
    PodClass {
        count,
        cpu_milli,
        memory_mib,
        num_gpu,
        gpu_milli,
        models: Vec::new(),
    }
}

impl SharingParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field (`sharing.nodes[2].gpus`, …) and what was
    /// expected.
    #[allow(clippy::too_many_lines)] // one check per field, in field order, each naming its field
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("sharing", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        let bad = |f: String, m: String| Err(ScenarioError::field(format!("sharing.{f}"), m));
        if self.policies.is_empty() {
            return bad("policies".into(), "name at least one policy".into());
        }
        if self.nodes.is_empty() {
            return bad("nodes".into(), "the cluster needs at least one node group".into());
        }
        let mut nodes: u64 = 0;
        for (i, g) in self.nodes.iter().enumerate() {
            if g.count == 0 {
                return bad(format!("nodes[{i}].count"), "must be at least 1".into());
            }
            if !(1..=MAX_GPUS_PER_NODE).contains(&g.gpus) {
                return bad(
                    format!("nodes[{i}].gpus"),
                    format!("must be between 1 and {MAX_GPUS_PER_NODE}, got {}", g.gpus),
                );
            }
            if g.model.is_empty() || g.model.len() > 64 {
                return bad(
                    format!("nodes[{i}].model"),
                    "must be a name of 1 to 64 characters".into(),
                );
            }
            if g.cpu_milli > 1 << 32 || g.memory_mib > 1 << 40 {
                return bad(
                    format!("nodes[{i}]"),
                    "cpu_milli must be at most 2^32 and memory_mib at most 2^40".into(),
                );
            }
            nodes += u64::from(g.count);
        }
        let mut models: Vec<&str> = self.nodes.iter().map(|g| g.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        if models.len() > 64 {
            return bad(
                "nodes".into(),
                format!("at most 64 GPU models, got {}", models.len()),
            );
        }
        if nodes > MAX_NODES {
            return bad(
                "nodes".into(),
                format!("at most {MAX_NODES} nodes in all, got {nodes}"),
            );
        }
        if self.pods.is_empty() {
            return bad("pods".into(), "the pod list needs at least one class".into());
        }
        let mut pods: u64 = 0;
        let mut gpu_pods = false;
        for (i, p) in self.pods.iter().enumerate() {
            if p.count == 0 {
                return bad(format!("pods[{i}].count"), "must be at least 1".into());
            }
            if p.num_gpu > MAX_GPUS_PER_NODE {
                return bad(
                    format!("pods[{i}].num_gpu"),
                    format!("must be at most {MAX_GPUS_PER_NODE}, got {}", p.num_gpu),
                );
            }
            if p.num_gpu > 0 && !(1..=GPU_MILLI).contains(&p.gpu_milli) {
                return bad(
                    format!("pods[{i}].gpu_milli"),
                    format!("must be between 1 and {GPU_MILLI} for a GPU pod, got {}", p.gpu_milli),
                );
            }
            if p.num_gpu > 1 && p.gpu_milli != GPU_MILLI {
                return bad(
                    format!("pods[{i}].gpu_milli"),
                    format!(
                        "a pod of {} GPUs takes whole GPUs ({GPU_MILLI}), got {}",
                        p.num_gpu, p.gpu_milli
                    ),
                );
            }
            if p.cpu_milli == 0 {
                return bad(
                    format!("pods[{i}].cpu_milli"),
                    "must be at least 1 (every pod of the trace asks for CPU)".into(),
                );
            }
            if p.cpu_milli > 1 << 32 || p.memory_mib > 1 << 40 {
                return bad(
                    format!("pods[{i}]"),
                    "cpu_milli must be at most 2^32 and memory_mib at most 2^40".into(),
                );
            }
            if p.models.len() > 64 {
                return bad(format!("pods[{i}].models"), "at most 64 models".into());
            }
            gpu_pods |= p.num_gpu > 0;
            pods += u64::from(p.count);
        }
        if !gpu_pods {
            return bad("pods".into(), "no class asks for a GPU".into());
        }
        if pods > MAX_PODS {
            return bad("pods".into(), format!("at most {MAX_PODS} pods in all, got {pods}"));
        }
        if self.source.len() > 200 {
            return bad("source".into(), "at most 200 characters".into());
        }
        let cluster_gpus: u64 = self
            .nodes
            .iter()
            .map(|g| u64::from(g.count) * u64::from(g.gpus))
            .sum();
        // The artifact removes pods when the originals ask for more than the target ("tune
        // down", `simulator.go:1085-1119`); this lab only clones, so it refuses such targets.
        let asked: u64 = self
            .pods
            .iter()
            .map(|p| u64::from(p.count) * u64::from(p.num_gpu) * u64::from(p.gpu_milli.min(GPU_MILLI)))
            .sum();
        let capacity_milli = cluster_gpus * u64::from(GPU_MILLI);
        if self.experiment == Experiment::Placement
            && asked * 100 > capacity_milli * u64::from(self.inflation_percent)
        {
            return bad(
                "inflation_percent".into(),
                format!(
                    "the original pods already ask for {:.1} % of the GPUs, more than {} %; FGD's artifact then removes pods, which this lab does not do: choose at least {:.0} %",
                    asked as f64 * 100.0 / capacity_milli as f64,
                    self.inflation_percent,
                    libm::ceil(asked as f64 * 100.0 / capacity_milli as f64)
                ),
            );
        }
        // Inflation clones pods until the requests reach the target; bound the work.
        let target = cluster_gpus * u64::from(GPU_MILLI) * u64::from(self.inflation_percent) / 100;
        let smallest = self
            .pods
            .iter()
            .filter(|p| p.num_gpu > 0)
            .map(|p| u64::from(p.num_gpu) * u64::from(p.gpu_milli))
            .min()
            .unwrap_or(1);
        if target / smallest.max(1) > 4 * MAX_PODS {
            return bad(
                "inflation_percent".into(),
                format!(
                    "the cluster's {cluster_gpus} GPUs at {} % need more than {} pods of the smallest GPU request",
                    self.inflation_percent,
                    4 * MAX_PODS
                ),
            );
        }
        Ok(())
    }
}
