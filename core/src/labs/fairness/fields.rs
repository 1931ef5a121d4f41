//! The fairness lab's field table: every parameter once (the preemption model only when set, so
//! it has no row), with its range (checked by [`crate::fields::check`] from
//! [`super::FairnessParams::validate`]), label and help. Rules that tie one field to another
//! (GPUs in all, GPU types adding up to the nodes, deadlines' and the service's bounds) stay in
//! the lab's own checks and are stated in the help.

use super::params::{Placement, ThroughputTable, MAX_BUCKETS, MAX_GPUS_PER_NODE, MAX_NODES, MAX_SECONDS};
use super::policies::{PolicyKind, QuotaMode};
use super::traces::synthetic::{MAX_SYNTHETIC_JOBS, MAX_SYNTHETIC_SECONDS, MAX_SYNTHETIC_TENANTS};
use crate::fields::{Field, Range, Widget};

/// Longest demand cycle and replica SLO of the inference service, s.
const MAX_SERVICE_SECONDS: f64 = 1e8;

/// Every parameter of the fairness lab, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        path: "policies",
        label: "Policies",
        unit: "id",
        range: Range::SomeOf(&PolicyKind::IDS),
        help: "the scheduling policies to simulate on the same trace and compare, in display order",
        widget: Widget::Checkboxes,
    },
    Field {
        path: "cluster.nodes",
        label: "Nodes",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_NODES as u64 },
        help: "nodes in the cluster; nodes × GPUs per node may be at most 1,000,000 GPUs",
        widget: Widget::Number,
    },
    Field {
        path: "cluster.gpus_per_node",
        label: "GPUs per node",
        unit: "GPUs",
        range: Range::Int { min: 1, max: MAX_GPUS_PER_NODE as u64 },
        help: "GPUs on each node",
        widget: Widget::Number,
    },
    Field {
        path: "cluster.placement",
        label: "Placement",
        unit: "id",
        range: Range::OneOf(&Placement::IDS),
        help: "how a gang-scheduled job's GPUs are picked among the free ones",
        widget: Widget::Select,
    },
    Field {
        path: "cluster.gpu_types",
        label: "GPU types",
        unit: "count",
        range: Range::Structured,
        help: "groups of nodes of one GPU type, {name, nodes} each (at least 1 node) in node order, their nodes adding up to cluster.nodes; empty for one type everywhere",
        widget: Widget::Json,
    },
    Field {
        path: "lease_s",
        label: "Lease",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SECONDS },
        help: "a job started or renewed by a leasing policy keeps its GPUs this long; largest ρ first and heterogeneity-weighted fair share use it as their round",
        widget: Widget::Number,
    },
    Field {
        path: "tenant_weights",
        label: "Tenant weights",
        unit: "id",
        range: Range::Structured,
        help: "how tenants' weights, and so their quotas, are set: `equal`, `demand` (their GPU-s in the trace) or {\"shares\": [{name, share}, …]} (names once each, shares above 0 up to 1e12, at most 100,000 tenants)",
        widget: Widget::Json,
    },
    Field {
        path: "window.buckets",
        label: "Window buckets",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_BUCKETS as u64 },
        help: "buckets in the sliding window of long-term GPU-time accounting",
        widget: Widget::Number,
    },
    Field {
        path: "window.bucket_s",
        label: "Bucket length",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SECONDS },
        help: "length of one accounting bucket; metrics are also sampled at every bucket boundary",
        widget: Widget::Number,
    },
    Field {
        path: "preempt_cost_s",
        label: "Checkpoint cost",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SECONDS },
        help: "time a preempted job spends saving its state, charged by the global policies when it restarts",
        widget: Widget::Number,
    },
    Field {
        path: "resume_cost_s",
        label: "Resume cost",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SECONDS },
        help: "time a preempted job spends restoring its state before it progresses again (global policies only)",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.seed",
        label: "Seed",
        unit: "seed",
        range: Range::Int { min: 0, max: u64::MAX },
        help: "seed of the synthetic trace's generator; one seed, one trace",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.jobs",
        label: "Synthetic jobs",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_SYNTHETIC_JOBS as u64 },
        help: "jobs in the synthetic trace (used when no trace is opened)",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.tenants",
        label: "Synthetic tenants",
        unit: "count",
        range: Range::Int { min: 1, max: MAX_SYNTHETIC_TENANTS as u64 },
        help: "tenants submitting the synthetic jobs, named t1 … tN",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.tenant_weights",
        label: "Tenants' demand",
        unit: "ratio",
        range: Range::Structured,
        help: "share of the synthetic jobs each tenant submits, one per tenant, each above 0 up to 1e12; empty for equal (scheduling weights are `tenant_weights`)",
        widget: Widget::Json,
    },
    Field {
        path: "synthetic.mean_interarrival_s",
        label: "Mean inter-arrival",
        unit: "s",
        range: Range::Structured,
        help: "mean gap between two submissions (exponential), above 0 and at most 1e9",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.gpu_sizes",
        label: "GPU sizes",
        unit: "GPUs",
        range: Range::Structured,
        help: "[GPUs, probability] pairs a job's size is drawn from: 1 to 64 pairs, 1 to 1,000,000 GPUs, probabilities 0 to 1e12 and not all 0 (normalised by their sum)",
        widget: Widget::Json,
    },
    Field {
        path: "synthetic.duration_lognormal_mu",
        label: "Duration μ",
        unit: "ln s",
        range: Range::Float { min: -10.0, max: 25.0 },
        help: "mean of the natural log of a synthetic job's duration in seconds",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.duration_lognormal_sigma",
        label: "Duration σ",
        unit: "ln s",
        range: Range::Float { min: 0.0, max: 10.0 },
        help: "standard deviation of the natural log of a synthetic job's duration in seconds",
        widget: Widget::Number,
    },
    Field {
        path: "synthetic.max_duration_s",
        label: "Longest duration",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SYNTHETIC_SECONDS },
        help: "cap on a synthetic job's drawn duration",
        widget: Widget::Number,
    },
    Field {
        path: "tiresias.queue_thresholds_gpu_s",
        label: "Tiresias queue thresholds",
        unit: "GPU-s",
        range: Range::Structured,
        help: "attained service (GPUs × run time) at which a job drops to the next queue: at most 16, increasing, each above 0 up to 1e12",
        widget: Widget::Json,
    },
    Field {
        path: "tiresias.promote_knob",
        label: "Tiresias promote knob",
        unit: "ratio",
        range: Range::Float { min: 0.0, max: 1e6 },
        help: "a job waiting longer than this many times its last run (and at least a lease) returns to the top queue; 0 turns this off",
        widget: Widget::Number,
    },
    Field {
        path: "themis.fairness_knob",
        label: "Themis fairness knob f",
        unit: "ratio",
        range: Range::Float { min: 0.0, max: 1.0 },
        help: "only the 1 − f fraction of the jobs with the largest finish-time fairness ρ (at least one) bid for the GPUs of an auction: 0 lets every job bid (efficiency), near 1 only the worst-off (fairness)",
        widget: Widget::Slider,
    },
    Field {
        path: "themis.hidden_payments",
        label: "Themis hidden payments",
        unit: "bool",
        range: Range::Bool,
        help: "each auction winner keeps its GPUs for only its partial-allocation share of the lease, and the rest goes back to auction without it (off: the whole lease, as Themis' own simulator runs it)",
        widget: Widget::Toggle,
    },
    Field {
        path: "gandiva_fair.quantum_s",
        label: "Gandiva-fair quantum",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SECONDS },
        help: "time slice after which Gandiva-fair may swap a running job out",
        widget: Widget::Number,
    },
    Field {
        path: "gavel.round_s",
        label: "Gavel round",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SECONDS },
        help: "Gavel starts and stops jobs only at the start of a round of this length",
        widget: Widget::Number,
    },
    Field {
        path: "astraea.classes",
        label: "ASTRAEA fairness classes",
        unit: "count",
        range: Range::Int { min: 1, max: 100 },
        help: "discrete classes a job's long-term fairness is reported in",
        widget: Widget::Number,
    },
    Field {
        path: "astraea.starvation_s",
        label: "ASTRAEA starvation threshold",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SECONDS },
        help: "a job waiting this long since it last stopped or arrived goes first within its tenant",
        widget: Widget::Number,
    },
    Field {
        path: "astraea.low_quota_share",
        label: "ASTRAEA low-quota share",
        unit: "ratio",
        range: Range::Float { min: 0.0, max: 1.0 },
        help: "a tenant using less than this share of its quota is served before the max-min order",
        widget: Widget::Number,
    },
    Field {
        path: "astraea.delay_s",
        label: "ASTRAEA delay threshold",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SECONDS },
        help: "a job that has run less than this in its current lease may be preempted by a new job of its tenant short of quota",
        widget: Widget::Number,
    },
    Field {
        path: "astraea.first_lease_delay_min_s",
        label: "ASTRAEA first-lease delay minimum",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SECONDS },
        help: "a job in its first lease can be preempted that way only after running this long",
        widget: Widget::Number,
    },
    Field {
        path: "astraea.block_scheduling",
        label: "ASTRAEA block scheduling",
        unit: "bool",
        range: Range::Bool,
        help: "a tenant's turn stops at its first job that fails the quota check or placement; off, later jobs may still start",
        widget: Widget::Toggle,
    },
    Field {
        path: "astraea.quota",
        label: "ASTRAEA quota",
        unit: "id",
        range: Range::OneOf(&QuotaMode::IDS),
        help: "how each round's tenant quotas are set in ASTRAEA's machinery (the YARN-like baseline stays static)",
        widget: Widget::Select,
    },
    Field {
        path: "deadlines.slo_share",
        label: "Share of jobs given a deadline",
        unit: "ratio",
        range: Range::Float { min: 0.0, max: 1.0 },
        help: "share of the trace's jobs without a deadline that are given one; 0 leaves the trace as it is",
        widget: Widget::Number,
    },
    Field {
        path: "deadlines.factor_min",
        label: "Deadline at least × duration",
        unit: "ratio",
        range: Range::Float { min: 0.01, max: 100.0 },
        help: "smallest multiple of a job's isolated duration its deadline allows",
        widget: Widget::Number,
    },
    Field {
        path: "deadlines.factor_max",
        label: "Deadline at most × duration",
        unit: "ratio",
        range: Range::Structured,
        help: "largest multiple of a job's isolated duration its deadline allows: from deadlines.factor_min up to 100",
        widget: Widget::Number,
    },
    Field {
        path: "deadlines.extra_max_s",
        label: "Deadline extra slack",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SYNTHETIC_SECONDS },
        help: "largest slack drawn on top of the multiple of the duration",
        widget: Widget::Number,
    },
    Field {
        path: "throughputs.table",
        label: "Per-GPU-type speeds",
        unit: "id",
        range: Range::OneOf(&ThroughputTable::IDS),
        help: "gives each job without speeds one of Gavel's 26 job types and its measured speed on each GPU type (V100, P100, K80)",
        widget: Widget::Select,
    },
    Field {
        path: "throughputs.seed",
        label: "Speed seed",
        unit: "seed",
        range: Range::Int { min: 0, max: u64::MAX },
        help: "seed of the draws that give each job its job type",
        widget: Widget::Number,
    },
    Field {
        path: "deadlines.seed",
        label: "Deadline seed",
        unit: "seed",
        range: Range::Int { min: 0, max: u64::MAX },
        help: "seed of the draws that pick which jobs get a deadline and how tight",
        widget: Widget::Number,
    },
    Field {
        path: "chronus.lease_s",
        label: "Slot admission: lease slot",
        unit: "s",
        range: Range::Float { min: 1.0, max: MAX_SECONDS },
        help: "length of a lease slot (slot admission, after Chronus): leases end on this grid and admission plans deadline jobs in whole slots",
        widget: Widget::Number,
    },
    Field {
        path: "chronus.estimate_margin",
        label: "Slot admission: estimate margin",
        unit: "ratio",
        range: Range::Float { min: 1.0, max: 10.0 },
        help: "admission plans for this multiple of a job's remaining work",
        widget: Widget::Number,
    },
    Field {
        path: "chronus.tick_s",
        label: "Slot admission: tick",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SECONDS },
        help: "jobs arrive at the first tick at or after their submission; at each tick, with slots of 30 minutes or less as in the artifact, rejected deadline jobs that fit what is left of the slot start at once, preempting jobs that hold no planned slot (0: jobs arrive at submission, no rescue)",
        widget: Widget::Number,
    },
    Field {
        path: "colocation.servers_peak",
        label: "Inference servers at the peak",
        unit: "count",
        range: Range::Structured,
        help: "servers an inference service beside the training needs at its daily peak, its own cluster's last nodes: 0 (no service) up to 10,000 and fewer than cluster.nodes",
        widget: Widget::Number,
    },
    Field {
        path: "colocation.servers_trough",
        label: "Inference servers at the trough",
        unit: "count",
        range: Range::Structured,
        help: "servers the inference service needs at its trough: 0 up to colocation.servers_peak",
        widget: Widget::Number,
    },
    Field {
        path: "colocation.period_s",
        label: "Demand cycle",
        unit: "s",
        range: Range::Float { min: 60.0, max: MAX_SERVICE_SECONDS },
        help: "length of the inference service's demand cycle, trough to trough",
        widget: Widget::Number,
    },
    Field {
        path: "colocation.step_s",
        label: "Scaling step",
        unit: "s",
        range: Range::Structured,
        help: "the inference service rescales its replicas every this long: 1 s up to colocation.period_s",
        widget: Widget::Number,
    },
    Field {
        path: "colocation.slo_s",
        label: "A new replica serves within",
        unit: "s",
        range: Range::Float { min: 0.0, max: MAX_SERVICE_SECONDS },
        help: "a replica not serving this long after the step that asked for it counts as an SLO violation of the service",
        widget: Widget::Number,
    },
];

#[cfg(test)]
mod tests {
    use super::super::FairnessParams;
    use alloc::string::ToString;

    /// The uploaded-trace path checks the table's ranges too, all but the synthetic trace's.
    #[test]
    fn validate_simulation_checks_the_table_but_the_synthetic_rows() {
        let p = FairnessParams {
            lease_s: 0.0,
            ..FairnessParams::default()
        };
        let e = p.validate_simulation().unwrap_err().to_string();
        assert_eq!(e, "fairness.lease_s: must be between 1 and 2592000, got 0");
        let mut p = FairnessParams::default();
        p.synthetic.jobs = 0;
        assert!(p.validate_simulation().is_ok());
        let e = p.validate().unwrap_err().to_string();
        assert_eq!(e, "fairness.synthetic.jobs: must be between 1 and 1000000, got 0");
    }
}
