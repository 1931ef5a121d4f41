//! Parameters of the fairness lab: the cluster, the policies to compare, the accounting window,
//! preemption costs and each policy's own knobs.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::policies::PolicyKind;
use crate::labs::migration::PreemptionModel;
use crate::scenario::ScenarioError;

pub use super::traces::colocation::ColocationSpec;
pub use super::traces::deadlines::DeadlineSpec;
pub use super::traces::throughputs::{ThroughputSpec, ThroughputTable};
pub use super::traces::synthetic::SyntheticSpec;

/// Most nodes a cluster may have.
pub const MAX_NODES: u32 = 100_000;
/// Most GPUs per node.
pub const MAX_GPUS_PER_NODE: u32 = 64;
/// Most GPUs in the whole cluster.
pub const MAX_GPUS: u64 = 1_000_000;
/// Longest lease, scheduling quantum or bucket: 30 days, in seconds.
pub const MAX_SECONDS: f64 = 30.0 * 86_400.0;
/// Most window buckets of the long-term accounting.
pub const MAX_BUCKETS: u32 = 1_000;

/// Most tenants a share list may name.
pub const MAX_SHARE_TENANTS: usize = 100_000;

crate::kinds! {
    /// How a job's GPUs are chosen among the free ones (gang scheduling: all at once or not at all).
    #[derive(Default)]
    pub enum Placement as "placement" {
        /// Fewest nodes: a job of g GPUs on n GPUs per node takes ⌈g/n⌉ nodes (best fit), and
        /// waits when that many cannot be had (Tiresias' consolidated placement).
        #[default]
        Consolidated = "consolidated", "fewest nodes, waits for them";
        /// Within one node when the job fits one (best fit), otherwise spread over the nodes with
        /// the most free GPUs; never waits for consolidation.
        TopologyAware = "topology-aware", "one node when it fits, else spread over the emptiest";
        /// Free GPUs in node order, wherever they are.
        FirstFit = "first-fit", "free GPUs in node order";
        /// The ASTRAEA artifact's `--placement consolidate` (`alg/placement/consolidate.py`): the
        /// job is cut into chunks of a node's GPUs (⌊g/n⌋ full ones, then the rest), each on the
        /// first node in order with that many free; when a chunk finds none, the GPUs still missing
        /// are taken from the nodes in order, as many as each has free (spreading). Never waits
        /// while enough GPUs are free.
        ConsolidateOrSpread = "consolidate-or-spread", "the ASTRAEA artifact's `consolidate`: node-sized chunks, else spread";
    }
}

/// A group of nodes of one GPU type (a heterogeneous cluster lists several).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuTypeSpec {
    /// Display name, e.g. `V100`.
    pub name: String,
    /// Nodes of this type.
    pub nodes: u32,
}

/// The cluster: nodes × GPUs per node, and how jobs are placed on them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSpec {
    /// Nodes (ASTRAEA's evaluation: 140).
    pub nodes: u32,
    /// GPUs per node (ASTRAEA's evaluation: 8).
    pub gpus_per_node: u32,
    /// How a job's GPUs are chosen.
    pub placement: Placement,
    /// GPU types, each a group of nodes, in node order; empty means one type (the reference
    /// type of the jobs' durations) on every node. When given, their `nodes` must add up to
    /// `nodes`; type i matches `Job::speed_by_gpu_type[i]`.
    pub gpu_types: Vec<GpuTypeSpec>,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            nodes: 140,
            gpus_per_node: 8,
            placement: Placement::Consolidated,
            gpu_types: Vec::new(),
        }
    }
}

impl ClusterSpec {
    /// GPUs in the cluster, G.
    #[must_use]
    pub fn total_gpus(&self) -> u64 {
        u64::from(self.nodes) * u64::from(self.gpus_per_node)
    }

    /// Number of GPU types (at least 1).
    #[must_use]
    pub fn type_count(&self) -> usize {
        self.gpu_types.len().max(1)
    }

    /// GPU type of each node.
    #[must_use]
    pub fn node_types(&self) -> Vec<u32> {
        if self.gpu_types.is_empty() {
            return alloc::vec![0; self.nodes as usize];
        }
        let mut out = Vec::with_capacity(self.nodes as usize);
        for (t, spec) in self.gpu_types.iter().enumerate() {
            out.extend(core::iter::repeat_n(t as u32, spec.nodes as usize));
        }
        out
    }
}

/// How tenants' weights s_u (and so their quotas Q_u = ⌊G·s_u/Σs⌋) are set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TenantWeights {
    /// Every tenant weighs the same.
    #[default]
    Equal,
    /// Proportional to the tenant's total demand in the trace, Σ gⱼ·durationⱼ (GPU-s).
    Demand,
    /// Given per tenant by name, in this order (the ASTRAEA artifact's share file `name,share`
    /// and name list). The tenants are exactly these, in this order (tenants without a job
    /// still hold their quota); jobs of a tenant not listed are dropped and counted.
    Shares(Vec<TenantShare>),
}

/// One tenant's share s_u (the ASTRAEA artifact's share file row `name,share`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantShare {
    /// Tenant name, as the trace names it.
    pub name: String,
    /// Share s_u, > 0 (only ratios matter).
    pub share: f64,
}

/// The sliding window of long-term accounting: ASTRAEA's U/D/W sums and the tenant-fairness
/// metrics of every policy use it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowSpec {
    /// Buckets in the window (ASTRAEA: 24).
    pub buckets: u32,
    /// Length of one bucket, s (ASTRAEA: 3,600). Metrics are also sampled at every bucket
    /// boundary.
    pub bucket_s: f64,
}

impl Default for WindowSpec {
    fn default() -> Self {
        WindowSpec {
            buckets: 24,
            bucket_s: 3_600.0,
        }
    }
}

/// Tiresias' discretised two-dimensional least-attained-service (Gu et al., NSDI'19, §3.1–3.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TiresiasParams {
    /// Queue thresholds on attained service (GPUs × executed time), GPU-s, increasing: a job
    /// with attained service below `queue_thresholds_gpu_s[0]` is in queue 0 (highest priority).
    /// Tiresias found two queues enough (§6.3); the default threshold is ours.
    pub queue_thresholds_gpu_s: Vec<f64>,
    /// Starvation guard (PROMOTEKNOB): a waiting job whose waiting time since it last ran
    /// exceeds this factor × its last executed time (and at least one lease) goes back to
    /// queue 0. 0 turns the guard off.
    pub promote_knob: f64,
}

impl Default for TiresiasParams {
    fn default() -> Self {
        TiresiasParams {
            queue_thresholds_gpu_s: alloc::vec![3_600.0],
            promote_knob: 8.0,
        }
    }
}

/// Themis' knobs (Mahajan et al., NSDI'20, §5; its authors' simulator kshiteejm/mltiply and
/// YARN prototype).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThemisParams {
    /// The fairness knob f: only the 1 − f fraction of the apps with the largest ρ (at least
    /// one) bid in an auction. 0.2 is the authors' YARN prototype's default
    /// (`ThemisConfiguration.DEFAULT_THEMIS_FAIRNESS_KNOB`).
    pub fairness_knob: f64,
    /// The partial-allocation mechanism's hidden payments: each winner keeps its GPUs for only
    /// its share c_i of the lease (false: the whole lease, as the authors' simulator runs it,
    /// its hidden-payment code commented out).
    pub hidden_payments: bool,
}

impl Default for ThemisParams {
    fn default() -> Self {
        ThemisParams {
            fairness_knob: 0.2,
            hidden_payments: true,
        }
    }
}

/// Gandiva-fair's ticket-based, time-sliced split stride scheduler (Chaudhary et al.,
/// EuroSys'20, §4): tickets are the tenant weights.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GandivaFairParams {
    /// Time-slice (quantum) after which a running job may be swapped out, s.
    pub quantum_s: f64,
}

impl Default for GandivaFairParams {
    fn default() -> Self {
        GandivaFairParams { quantum_s: 900.0 }
    }
}

/// Gavel's round mechanism (stanford-futuredata/gavel @c4fa400, `scheduler/scheduler.py`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GavelParams {
    /// Round length, s (`time_per_iteration`, 360 s, line 60).
    pub round_s: f64,
}

impl Default for GavelParams {
    fn default() -> Self {
        GavelParams { round_s: 360.0 }
    }
}

/// ASTRAEA's knobs, as its artifact names them (yzs981130/Astraea_Artifacts, `simulation/options.py`
/// and `alg/scheduler/lease.py`); the defaults are the artifact's evaluation command.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AstraeaParams {
    /// Discrete fairness classes K (`--disc_priority_k`, 5): the class of F_j reported beside
    /// it, K − ⌊((f+1)/2) / (1/K)⌋ with f = −ln F/√(1+ln²F) (`fairness2disc`).
    pub classes: u32,
    /// A job waiting this long since it last stopped (or was submitted) goes first within its
    /// tenant, s (`--stavation_threshold`, 21,600 in the evaluation).
    pub starvation_s: f64,
    /// In phase 1, a tenant running below this share of its quota goes before the max-min
    /// order (the artifact's literal 0.2).
    pub low_quota_share: f64,
    /// A running job is a "delay job", which a new job of its tenant short of quota may
    /// preempt (losing the progress of its current lease), while it has run less than this in
    /// its current lease, s (`--delay_threshold`, 300 in the evaluation).
    pub delay_s: f64,
    /// A job in its first lease becomes a delay job only after this much run time, s (the
    /// artifact's literal 120 in `is_delay_job`).
    pub first_lease_delay_min_s: f64,
    /// Block scheduling (`--block_scheduling 1`): a tenant's turn ends at its first job that
    /// fails the quota check or placement (head-of-line); off, later jobs may still start.
    pub block_scheduling: bool,
    /// How a round's tenant quotas are set (`--user_quota`: `fair` or `static`) for ASTRAEA
    /// and the two orders in its machinery (the YARN-like baseline is always static).
    pub quota: crate::labs::fairness::policies::QuotaMode,
}

impl Default for AstraeaParams {
    fn default() -> Self {
        AstraeaParams {
            classes: 5,
            starvation_s: 21_600.0,
            low_quota_share: 0.2,
            delay_s: 300.0,
            first_lease_delay_min_s: 120.0,
            block_scheduling: true,
            quota: crate::labs::fairness::policies::QuotaMode::Fair,
        }
    }
}

/// Slot admission's knobs, Chronus' (Gao et al., SoCC'21) as its artifact names and sets them
/// (S-Lab-System-Group/ChronusArtifact, `code/options.py`, `code/run/exp_cluster/batch_run.sh`
/// and `code/alg/scheduler/time_aware_with_lease.py`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChronusParams {
    /// Length of a lease slot, s: every lease ends on this grid, and admission plans SLO jobs
    /// in whole slots (`--lease_term_interval 20` minutes in every experiment of
    /// `batch_run.sh`).
    pub lease_s: f64,
    /// Admission plans for this multiple of a job's remaining work (the artifact's `* 1.1` on
    /// its estimate, `time_aware_with_lease.py` lines 1328–1329).
    pub estimate_margin: f64,
    /// The tick, s (`BEST_SLOT` = 5 minutes, `time_aware_with_lease.py` lines 30 and
    /// 1192–1200): jobs arrive at the first tick at or after their submission, and at each
    /// tick, with slots of 30 minutes or less (line 455), the rescue starts rejected SLO jobs
    /// whose remaining work fits what is left of the slot, preempting jobs that hold no planned
    /// slot. 0: jobs arrive at their submission and there is no rescue.
    pub tick_s: f64,
}

impl Default for ChronusParams {
    fn default() -> Self {
        ChronusParams {
            lease_s: 1_200.0,
            estimate_margin: 1.1,
            tick_s: 300.0,
        }
    }
}

/// A multi-tenant GPU cluster and the scheduling policies to compare on one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FairnessParams {
    /// Policies to simulate and compare, in display order (default: [`PolicyKind::defaults`],
    /// every policy but slot admission, which needs jobs with deadlines).
    pub policies: Vec<PolicyKind>,
    /// The cluster.
    pub cluster: ClusterSpec,
    /// Lease length, s: a job started (or renewed) by a leasing policy is not preempted before
    /// its lease ends (ASTRAEA: 900). Largest ρ first and heterogeneity-weighted fair share use it as their round length.
    pub lease_s: f64,
    /// How tenant weights (and quotas) are set.
    pub tenant_weights: TenantWeights,
    /// Long-term accounting window.
    pub window: WindowSpec,
    /// Checkpoint cost of a preemption, s, charged by the global policies (not the ASTRAEA
    /// family, which charges nothing, as its artifact: it defines 5 s and 20 s and never uses
    /// them). Charged, together with the resume cost, when the job restarts: it holds its GPUs
    /// that long without progress.
    pub preempt_cost_s: f64,
    /// Resume (restore) cost of a preempted job, s (global policies only, see above).
    pub resume_cost_s: f64,
    /// The synthetic trace used when no trace is uploaded.
    pub synthetic: SyntheticSpec,
    /// Tiresias' knobs.
    pub tiresias: TiresiasParams,
    /// Themis' knobs.
    pub themis: ThemisParams,
    /// Gandiva-fair's knobs.
    pub gandiva_fair: GandivaFairParams,
    /// Gavel's knobs.
    pub gavel: GavelParams,
    /// ASTRAEA's knobs.
    pub astraea: AstraeaParams,
    /// Where the checkpoint cost of a preemption comes from (default: the fixed costs above).
    #[serde(skip_serializing_if = "PreemptionModel::is_fixed")]
    pub preemption: PreemptionModel,
    /// Deadlines given to the jobs of the trace that have none (default: none).
    pub deadlines: DeadlineSpec,
    /// Per-GPU-type speeds given to the jobs of the trace that have none (default: none).
    pub throughputs: ThroughputSpec,
    /// Slot admission's knobs (Chronus').
    pub chronus: ChronusParams,
    /// An inference service beside the training jobs, on its own servers (default: none).
    pub colocation: ColocationSpec,
}

impl Default for FairnessParams {
    fn default() -> Self {
        FairnessParams {
            policies: PolicyKind::defaults(),
            cluster: ClusterSpec::default(),
            lease_s: 900.0,
            tenant_weights: TenantWeights::Equal,
            window: WindowSpec::default(),
            preempt_cost_s: 5.0,
            resume_cost_s: 20.0,
            synthetic: SyntheticSpec::default(),
            tiresias: TiresiasParams::default(),
            themis: ThemisParams::default(),
            gandiva_fair: GandivaFairParams::default(),
            gavel: GavelParams::default(),
            astraea: AstraeaParams::default(),
            preemption: PreemptionModel::Fixed,
            deadlines: DeadlineSpec::default(),
            throughputs: ThroughputSpec::default(),
            chronus: ChronusParams::default(),
            colocation: ColocationSpec::default(),
        }
    }
}

fn range_error(field: &str, range: &str, got: impl core::fmt::Display) -> ScenarioError {
    ScenarioError::field(
        format!("fairness.{field}"),
        format!("must be {range}, got {got}"),
    )
}

/// Seconds to integer ns (rounded once).
#[must_use]
pub fn s_to_ns(s: f64) -> u64 {
    libm::round(s * 1e9) as u64
}

impl FairnessParams {
    /// Checkpoint + resume cost of one preemption of a job of `gpus` GPUs, s.
    #[must_use]
    pub fn preemption_cost_s(&self, gpus: u32) -> f64 {
        match &self.preemption {
            PreemptionModel::Fixed => self.preempt_cost_s + self.resume_cost_s,
            PreemptionModel::Migration { option, params } => {
                crate::labs::migration::preemption_cost_s(params, *option, gpus)
            }
        }
    }

    /// Of [`FairnessParams::preemption_cost_s`], the part that keeps the preempted job's GPUs
    /// busy (writing its checkpoint) before another job can use them, s.
    #[must_use]
    pub fn checkpoint_save_s(&self, gpus: u32) -> f64 {
        match &self.preemption {
            PreemptionModel::Fixed => self.preempt_cost_s,
            PreemptionModel::Migration { option, params } => {
                crate::labs::migration::preemption_save_s(params, *option, gpus)
            }
        }
    }

    /// Checks every field except the synthetic trace's (its own module checks those, see
    /// [`FairnessParams::validate`]): the field table's ranges, then the rules between fields;
    /// the error names the first bad one.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `fairness.<field>` and the expected range.
    pub fn validate_simulation(&self) -> Result<(), ScenarioError> {
        let mut value = crate::scenario::to_value(self);
        if let Some(params) = value.as_object_mut() {
            params.remove("synthetic");
        }
        crate::fields::check("fairness", super::fields::FIELDS, &value)?;
        self.check_rules()
    }

    /// The checks the field table cannot state: rules between fields and list items. Assumes
    /// every field is within its table range.
    fn check_rules(&self) -> Result<(), ScenarioError> {
        let c = &self.cluster;
        if c.total_gpus() > MAX_GPUS {
            return Err(range_error(
                "cluster.nodes",
                &format!("small enough for at most {MAX_GPUS} GPUs in all"),
                c.nodes,
            ));
        }
        if !c.gpu_types.is_empty() {
            for (i, t) in c.gpu_types.iter().enumerate() {
                if t.nodes == 0 {
                    return Err(range_error(
                        &format!("cluster.gpu_types[{i}].nodes"),
                        "at least 1",
                        0,
                    ));
                }
            }
            let sum: u64 = c.gpu_types.iter().map(|t| u64::from(t.nodes)).sum();
            if sum != u64::from(c.nodes) {
                return Err(ScenarioError::field(
                    "fairness.cluster.gpu_types",
                    format!(
                        "nodes of the GPU types must add up to cluster.nodes ({}), got {sum}",
                        c.nodes
                    ),
                ));
            }
        }
        if let PreemptionModel::Migration { params, .. } = &self.preemption {
            params.validate_prefixed("fairness.preemption.params")?;
        }
        if self.throughputs.table != ThroughputTable::None {
            super::traces::throughputs::gavel_columns(&c.gpu_types)?;
        }
        let t = &self.tiresias.queue_thresholds_gpu_s;
        for (i, v) in t.iter().enumerate() {
            if !(v.is_finite() && *v > 0.0 && *v <= 1e12) {
                return Err(range_error(
                    &format!("tiresias.queue_thresholds_gpu_s[{i}]"),
                    "between 0 (exclusive) and 1e12 GPU-s",
                    v,
                ));
            }
            if i > 0 && *v <= t[i - 1] {
                return Err(range_error(
                    &format!("tiresias.queue_thresholds_gpu_s[{i}]"),
                    "larger than the threshold before it",
                    v,
                ));
            }
        }
        if t.len() > 16 {
            return Err(ScenarioError::field(
                "fairness.tiresias.queue_thresholds_gpu_s",
                format!("must hold at most 16 thresholds, got {}", t.len()),
            ));
        }
        self.deadlines.validate()?;
        self.colocation.validate(self.cluster.nodes)?;
        if let TenantWeights::Shares(shares) = &self.tenant_weights {
            if shares.is_empty() {
                return Err(ScenarioError::field(
                    "fairness.tenant_weights.shares",
                    "must list at least one tenant",
                ));
            }
            for (i, t) in shares.iter().enumerate() {
                if t.name.trim().is_empty() {
                    return Err(ScenarioError::field(
                        format!("fairness.tenant_weights.shares[{i}].name"),
                        "must not be empty",
                    ));
                }
                if !(t.share.is_finite() && t.share > 0.0 && t.share <= 1e12) {
                    return Err(range_error(
                        &format!("tenant_weights.shares[{i}].share"),
                        "between 0 (exclusive) and 1e12",
                        t.share,
                    ));
                }
                if shares[..i].iter().any(|o| o.name == t.name) {
                    return Err(ScenarioError::field(
                        format!("fairness.tenant_weights.shares[{i}].name"),
                        format!("tenant `{}` is listed twice", t.name),
                    ));
                }
            }
            if shares.len() > MAX_SHARE_TENANTS {
                return Err(ScenarioError::field(
                    "fairness.tenant_weights.shares",
                    format!(
                        "must list at most {MAX_SHARE_TENANTS} tenants, got {}",
                        shares.len()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks every field, the synthetic trace's included: the field table's ranges, then the
    /// rules between fields, then the synthetic trace's own checks.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `fairness.<field>` and the expected range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("fairness", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        self.check_rules()?;
        super::traces::synthetic::validate_spec(&self.synthetic)
    }
}
