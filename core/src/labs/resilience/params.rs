//! Parameters of the resilience lab: the model, the cluster and its TP × PP × DP layout, the
//! packed sequence-length distribution, the injected failures, and the detector and planner knobs.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::plan::StrategyKind;
use crate::hw::GpuKind;
use crate::scenario::{check_range, ScenarioError};

/// Most GPUs of one cluster.
pub const MAX_GPUS: u32 = 4096;
/// Most iterations of one run.
pub const MAX_ITERATIONS: u32 = 20_000;
/// Most micro-batches per replica per iteration.
pub const MAX_MICRO_BATCHES: u32 = 256;
/// Most injected events.
pub const MAX_EVENTS: usize = 256;
/// Bound on iterations × all micro-batches (the work of one run).
pub const MAX_WORK: u64 = 20_000_000;

/// The transformer being trained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelSpec {
    /// Display name.
    pub name: String,
    /// Transformer layers (split across pipeline stages).
    pub layers: u32,
    /// Hidden size h.
    pub hidden: u32,
    /// Attention (query) heads; a TP degree must divide it.
    pub heads: u32,
    /// Parameters, billions (spread evenly over the layers).
    pub params_billion: f64,
}

impl Default for ModelSpec {
    /// Llama-2-70B (Touvron et al. 2023, Table 1 and model card): 80 layers, hidden 8,192,
    /// 64 query heads, 70 B parameters.
    fn default() -> Self {
        ModelSpec {
            name: "Llama-2-70B".into(),
            layers: 80,
            hidden: 8192,
            heads: 64,
            params_billion: 70.0,
        }
    }
}

/// The cluster and the job's layout on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSpec {
    /// GPU profile (`a100`, `h100`, `h200`).
    pub gpu: GpuKind,
    /// Nodes.
    pub nodes: u32,
    /// GPUs per node (NVLink inside, one InfiniBand NIC per GPU between nodes).
    pub gpus_per_node: u32,
    /// Tensor-parallel degree (a power of two dividing heads and hidden size).
    pub tp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Data-parallel replicas. tp × pp × dp must equal nodes × gpus_per_node.
    pub dp: u32,
    /// Micro-batches per replica per iteration (the global batch is dp × this).
    pub micro_batches: u32,
    /// Share of peak BF16 FLOP/s the model's math reaches on a healthy GPU.
    pub mfu: f64,
    /// Bytes of training state per parameter (BF16 weights and gradients plus FP32 master
    /// weights and two Adam moments: 2 + 2 + 12 = 16).
    pub state_bytes_per_param: f64,
    /// Share of a GPU's HBM that training state may fill (the rest: activations, buffers).
    pub memory_fraction: f64,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            gpu: GpuKind::H100,
            nodes: 32,
            gpus_per_node: 8,
            tp: 8,
            pp: 4,
            dp: 8,
            micro_batches: 16,
            mfu: 0.45,
            state_bytes_per_param: 16.0,
            memory_fraction: 0.85,
        }
    }
}

/// Sequence lengths packed into micro-batches: log-normal lengths, each micro-batch filled to
/// `tokens_per_micro_batch` (the last sequence cut to fit).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LengthSpec {
    /// Tokens in one packed micro-batch.
    pub tokens_per_micro_batch: u32,
    /// Median sequence length, tokens.
    pub median_tokens: f64,
    /// σ of ln(length): 0 = every sequence has the median length.
    pub sigma: f64,
    /// Longest sequence, tokens.
    pub max_tokens: u32,
    /// Seed of the length draws and of the timing jitter.
    pub seed: u64,
    /// σ of the per-GPU, per-iteration multiplicative timing jitter (ln scale).
    pub jitter_sigma: f64,
}

impl Default for LengthSpec {
    fn default() -> Self {
        LengthSpec {
            tokens_per_micro_batch: 32_768,
            median_tokens: 2_048.0,
            sigma: 1.2,
            max_tokens: 32_768,
            seed: 7,
            jitter_sigma: 0.01,
        }
    }
}

/// Variation real jobs have that no detector models: communication jitter and host stalls reach
/// the iteration's wall time only; kernel spikes slow one GPU's kernels for a few iterations
/// (not a failure: no event, so an alarm on one is false).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NoiseSpec {
    /// σ of ln(multiplier) of each iteration's communication (TP and P2P per replica, the DP
    /// all-reduce): network contention and collective jitter.
    pub comm_sigma: f64,
    /// Chance that an iteration waits for the host (a data-loader stall or a garbage-collection
    /// pause), on top of its GPU work.
    pub stall_probability: f64,
    /// Mean of such a wait (exponential), s.
    pub stall_mean_s: f64,
    /// Chance per GPU and iteration that a kernel spike starts: the GPU's kernels × U(1.3, 2.5)
    /// for 1 + Geometric(0.8) iterations (80 % one, 16 % two, 4 % longer, at most 8).
    pub spike_rate: f64,
}

impl Default for NoiseSpec {
    fn default() -> Self {
        NoiseSpec {
            comm_sigma: 0.05,
            stall_probability: 0.02,
            stall_mean_s: 2.0,
            spike_rate: 0.0003,
        }
    }
}

/// Which part of the hit GPUs a fail-slow slows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkKind {
    /// The GPUs' NVLink ports: TP collectives and P2P sends inside their node.
    Nvlink,
    /// The GPUs' InfiniBand NICs: P2P sends, TP collectives and the DP all-reduce that leave
    /// the node.
    Nic,
}

/// One injected failure: from `at_iteration` on (until `until_iteration`, if given), a GPU (or
/// every GPU of a node) computes `slowdown`× slower, or its `link` is `slowdown`× slower, or it
/// is dead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FailureEvent {
    /// Iteration (0-based) before which the event happens.
    pub at_iteration: u32,
    /// Iteration before which a fail-slow ends (the hit part is healthy again); `None`: it lasts.
    pub until_iteration: Option<u32>,
    /// The GPU hit (global index node × gpus_per_node + local); give this or `node`.
    pub gpu: Option<u32>,
    /// The node hit (every GPU of it); give this or `gpu`.
    pub node: Option<u32>,
    /// Time multiplier of the hit part (2 = half speed).
    pub slowdown: f64,
    /// A communication fail-slow: the hit GPUs' NVLink or NIC is slow, their compute is not.
    pub link: Option<LinkKind>,
    /// The GPUs stop (fail-stop) instead of slowing.
    pub dead: bool,
}

impl Default for FailureEvent {
    fn default() -> Self {
        FailureEvent {
            at_iteration: 0,
            until_iteration: None,
            gpu: None,
            node: None,
            slowdown: 1.0,
            link: None,
            dead: false,
        }
    }
}

impl FailureEvent {
    /// The GPUs the event hits.
    #[must_use]
    pub fn gpus(&self, gpus_per_node: u32) -> Vec<u32> {
        match (self.gpu, self.node) {
            (Some(g), _) => alloc::vec![g],
            (None, Some(n)) => (n * gpus_per_node..(n + 1) * gpus_per_node).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether it is a fail-slow (not a fail-stop, slowdown above 1).
    #[must_use]
    pub fn is_fail_slow(&self) -> bool {
        !self.dead && self.slowdown > 1.0
    }
}

/// Detector knobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DetectorSpec {
    /// ResiHP trigger: observed / predicted iteration time above 1 + this (0.25 in the paper).
    pub threshold: f64,
    /// Consecutive iterations above the trigger before ResiHP localises.
    pub persistence: u32,
    /// Iterations the α, β fit uses (a sliding window of healthy iterations).
    pub fit_window: u32,
    /// Fail-stop: missed-heartbeat timeout, s.
    pub heartbeat_timeout_s: f64,
    /// Naive and change-point detectors: warm-up / moving window, iterations.
    pub window: u32,
    /// Naive detector: z-score above which an iteration alarms.
    pub z_threshold: f64,
    /// Change-point (CUSUM) slack k, in standard deviations.
    pub cusum_k: f64,
    /// Change-point (CUSUM) decision threshold h, in standard deviations.
    pub cusum_h: f64,
    /// An alarm counts as detecting an event when it comes at most this many iterations after.
    pub match_window: u32,
}

impl Default for DetectorSpec {
    fn default() -> Self {
        DetectorSpec {
            threshold: 0.25,
            persistence: 3,
            fit_window: 50,
            heartbeat_timeout_s: 30.0,
            window: 50,
            z_threshold: 3.0,
            cusum_k: 0.5,
            cusum_h: 5.0,
            match_window: 100,
        }
    }
}

/// Greyhound-like baseline knobs (Wu et al., "Greyhound: Hunting Fail-Slows in Hybrid-Parallel
/// Training at Scale", USENIX ATC 2025; arXiv 2410.12588 as "Falcon"; artifact
/// github.com/wutianyuan1/Greyhound).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GreyhoundSpec {
    /// A change point counts when its probability is above this (`slow_detection.py:89`,
    /// `thresh_prob=0.8`).
    pub change_probability: f64,
    /// It must lie more than this many iterations after the buffer's start (`length_thresh`,
    /// l.40: 10).
    pub min_gap_iterations: u32,
    /// The means before and after it must differ by more than this share of the larger
    /// (`degradation_thresh`, l.40: 0.1).
    pub min_degradation: f64,
    /// Iteration times with |z| above this are dropped first (`remove_outliers`, l.20: 3).
    pub outlier_z: f64,
    /// Job time between detection checks, s (`local_controller.py:71`: 5).
    pub check_interval_s: f64,
    /// Time the verification micro-benchmarks (compute on every GPU, communication on every
    /// group) stop training, s (ours); paid on every alarm, true or false.
    pub benchmark_s: f64,
    /// A GPU or link is slow when its benchmark is above this × the median (the artifact's
    /// `dp_planner.get_time_array` threshold 1.1).
    pub slow_ratio: f64,
    /// The root cause is computation when the slowest GPU's benchmark is above this × the
    /// median (the artifact's `find_slow_reason`: 2).
    pub compute_ratio: f64,
    /// Iterations between micro-batch-plan checks (the artifact's `DP_CHECK_INTERVAL` = 20,
    /// `global_controller.py:27`); the S2 wait is ⌊it / 2⌋ × the lost time per iteration / 2
    /// (`cost_estimator.py:35–39`, called with `dp_check_interval // 2` at
    /// `mitigation_plan.py:145`).
    pub dp_check_interval: u32,
    /// Cost of the S3 pipeline re-split (restart from memory), s (the artifact's
    /// `get_pp_adjustment_cost`: 60 s); also the time it pauses training.
    pub pp_adjust_s: f64,
}

impl Default for GreyhoundSpec {
    fn default() -> Self {
        GreyhoundSpec {
            change_probability: 0.8,
            min_gap_iterations: 10,
            min_degradation: 0.1,
            outlier_z: 3.0,
            check_interval_s: 5.0,
            benchmark_s: 10.0,
            slow_ratio: 1.1,
            compute_ratio: 2.0,
            dp_check_interval: 20,
            pp_adjust_s: 60.0,
        }
    }
}

/// Planner and baseline knobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlannerSpec {
    /// Pause of any in-place reconfiguration (process groups rebuilt, NCCL communicators
    /// re-initialised), s; charged to ResiHP's re-plan and to Oobleck's and ReCycle's
    /// reconfigurations.
    pub pause_s: f64,
    /// Fixed time a checkpoint restart takes (reschedule, reload, warm up), s.
    pub restart_recovery_s: f64,
    /// Iterations between checkpoints (work since the last one is lost on a restart).
    pub checkpoint_interval: u32,
}

impl Default for PlannerSpec {
    fn default() -> Self {
        PlannerSpec {
            pause_s: 30.0,
            restart_recovery_s: 600.0,
            checkpoint_interval: 100,
        }
    }
}

/// The resilience lab's scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResilienceParams {
    /// The model.
    pub model: ModelSpec,
    /// The cluster and layout.
    pub cluster: ClusterSpec,
    /// Packed sequence lengths.
    pub lengths: LengthSpec,
    /// Timing variation no detector models.
    pub noise: NoiseSpec,
    /// Iterations the job runs (the horizon).
    pub iterations: u32,
    /// Injected failures.
    pub events: Vec<FailureEvent>,
    /// Detector knobs.
    pub detector: DetectorSpec,
    /// Planner knobs.
    pub planner: PlannerSpec,
    /// Greyhound-like baseline knobs.
    pub greyhound: GreyhoundSpec,
    /// Strategies to compare (`nothing` is always run: speedups are against it).
    pub strategies: Vec<StrategyKind>,
}

impl Default for ResilienceParams {
    fn default() -> Self {
        ResilienceParams {
            model: ModelSpec::default(),
            cluster: ClusterSpec::default(),
            lengths: LengthSpec::default(),
            noise: NoiseSpec::default(),
            iterations: 600,
            events: alloc::vec![FailureEvent {
                at_iteration: 200,
                gpu: Some(13),
                slowdown: 2.0,
                ..FailureEvent::default()
            }],
            detector: DetectorSpec::default(),
            planner: PlannerSpec::default(),
            greyhound: GreyhoundSpec::default(),
            strategies: StrategyKind::ALL.to_vec(),
        }
    }
}

pub(crate) fn field(path: &str, message: String) -> ScenarioError {
    ScenarioError::field(format!("resilience.{path}"), message)
}

impl ResilienceParams {
    /// GPUs in the cluster.
    #[must_use]
    pub fn gpus(&self) -> u32 {
        self.cluster
            .nodes
            .saturating_mul(self.cluster.gpus_per_node)
    }

    /// Checks every field: the ranges of the field table, then the rules between fields; the
    /// error names the first bad one as `resilience.<path>`.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field and what was expected.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check(
            "resilience",
            super::fields::FIELDS,
            &crate::scenario::to_value(self),
        )?;
        let m = &self.model;
        let c = &self.cluster;
        if self.gpus() > MAX_GPUS {
            return Err(field(
                "cluster.nodes",
                format!(
                    "nodes × gpus_per_node must be at most {MAX_GPUS}, got {}",
                    self.gpus()
                ),
            ));
        }
        if !c.tp.is_power_of_two()
            || !m.heads.is_multiple_of(c.tp)
            || !m.hidden.is_multiple_of(c.tp)
        {
            return Err(field(
                "cluster.tp",
                format!(
                    "must be a power of two dividing heads ({}) and hidden ({}), got {}",
                    m.heads, m.hidden, c.tp
                ),
            ));
        }
        check_range("resilience", "cluster.pp", c.pp, 1, m.layers.min(256))?;
        let used = u64::from(c.tp) * u64::from(c.pp) * u64::from(c.dp);
        if used != u64::from(self.gpus()) {
            return Err(field(
                "cluster.dp",
                format!(
                    "tp × pp × dp must equal nodes × gpus_per_node = {}, got {} × {} × {} = {used}",
                    self.gpus(),
                    c.tp,
                    c.pp,
                    c.dp
                ),
            ));
        }
        let per_gpu = m.params_billion * 1e9 / f64::from(c.tp * c.pp) * c.state_bytes_per_param;
        let cap = c.gpu.profile().hbm_bytes as f64 * c.memory_fraction;
        // Layers split as evenly as possible: the largest stage holds ⌈L/p⌉ layers.
        let largest =
            per_gpu * f64::from(m.layers.div_ceil(c.pp)) / (f64::from(m.layers) / f64::from(c.pp));
        if largest > cap {
            return Err(field(
                "cluster.pp",
                format!(
                    "the training state does not fit: {:.1} GB per GPU on the largest stage, {:.1} GB allowed; use more GPUs or a larger tp or pp",
                    largest / 1e9,
                    cap / 1e9
                ),
            ));
        }
        let work = u64::from(self.iterations) * u64::from(c.micro_batches) * u64::from(c.dp);
        if work > MAX_WORK {
            return Err(field(
                "iterations",
                format!("iterations × dp × micro_batches must be at most {MAX_WORK}, got {work}"),
            ));
        }
        if self.events.len() > MAX_EVENTS {
            return Err(field(
                "events",
                format!("at most {MAX_EVENTS} events, got {}", self.events.len()),
            ));
        }
        for (i, e) in self.events.iter().enumerate() {
            self.validate_event(i, e)?;
        }
        for (i, s) in self.strategies.iter().enumerate() {
            if self.strategies[..i].contains(s) {
                return Err(field(
                    &format!("strategies[{i}]"),
                    format!("`{}` is listed twice", s.id()),
                ));
            }
        }
        Ok(())
    }
    /// Checks injected event `i` against the cluster and the horizon.
    fn validate_event(&self, i: usize, e: &FailureEvent) -> Result<(), ScenarioError> {
        let p = format!("events[{i}]");
        match (e.gpu, e.node) {
            (Some(g), None) => {
                if g >= self.gpus() {
                    return Err(field(
                        &format!("{p}.gpu"),
                        format!(
                            "must be below {} (the cluster's GPUs), got {g}",
                            self.gpus()
                        ),
                    ));
                }
            }
            (None, Some(n)) => {
                if n >= self.cluster.nodes {
                    return Err(field(
                        &format!("{p}.node"),
                        format!("must be below {} (the cluster's nodes), got {n}", self.cluster.nodes),
                    ));
                }
            }
            _ => return Err(field(&p, "give exactly one of `gpu` or `node`".into())),
        }
        check_range(
            "resilience",
            &format!("{p}.at_iteration"),
            e.at_iteration,
            0,
            self.iterations - 1,
        )?;
        check_range(
            "resilience",
            &format!("{p}.slowdown"),
            e.slowdown,
            1.0,
            100.0,
        )?;
        if let Some(u) = e.until_iteration {
            if u <= e.at_iteration || u > self.iterations {
                return Err(field(
                    &format!("{p}.until_iteration"),
                    format!(
                        "must be after at_iteration ({}) and at most iterations ({}), got {u}",
                        e.at_iteration, self.iterations
                    ),
                ));
            }
            if e.dead {
                return Err(field(
                    &format!("{p}.until_iteration"),
                    "a fail-stop does not end; drop `until_iteration` or `dead`".into(),
                ));
            }
        }
        if e.link.is_some() && e.dead {
            return Err(field(
                &format!("{p}.link"),
                "a fail-stop takes the whole GPU; drop `link` or `dead`".into(),
            ));
        }
        Ok(())
    }
}

/// Strategies a run compares: `nothing` first, then the scenario's others in order.
#[must_use]
pub fn strategies_to_run(params: &ResilienceParams) -> Vec<StrategyKind> {
    let mut out = alloc::vec![StrategyKind::Nothing];
    out.extend(
        params
            .strategies
            .iter()
            .copied()
            .filter(|s| *s != StrategyKind::Nothing),
    );
    out
}
