//! Parameters of the bubbles lab: the main pipeline job and its GPU memory, the guest trial
//! profile, the policies to compare, and the cluster-level tuning (HPO) job.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::labs::pipeline::{PipelineParams, ScheduleKind};
use crate::scenario::ScenarioError;
use crate::trial::TrialProfile;
use crate::units::GIB;

/// Largest fusion count F of one trial bundle.
pub const MAX_FUSION: u32 = 256;
/// Most trials of one tuning job.
pub const MAX_TRIALS: u32 = 10_000;
/// Largest GPU memory accepted, bytes (1 TiB).
pub const MAX_GPU_BYTES: u64 = 1 << 40;
/// Longest guest step or module accepted, ns (1000 s).
pub const MAX_STEP_NS: u64 = 1_000_000_000_000;

crate::kinds! {
    /// The policies the lab compares.
    pub enum PolicyKind as "bubbles policy" {
        /// The main job alone.
        None = "none", "main job alone";
        /// Blind colocation: the guest runs beside the main job all the time; both slow down.
        Blind = "blind", "blind colocation";
        /// Hydro's Bubble Squeezer: the guest runs only inside safe bubbles, pausing at a hook
        /// before each bubble ends.
        Squeezer = "squeezer", "Bubble Squeezer";
    }
}

crate::kinds! {
    /// Which trial profile preset to start from (the page's menu). `trial` holds the numbers; a
    /// scenario that names a preset and gives no `trial` gets the preset's profile.
    pub enum TrialPreset as "trial preset" {
        /// [`TrialProfile::resnet18`] (assumed numbers).
        Resnet18 = "resnet18";
        /// [`TrialProfile::small_gpt`] (assumed numbers).
        SmallGpt = "small-gpt";
        /// The tuning lab's GPT-2 small ÷8 μP surrogate, its step time and memory vs F from the
        /// tuning lab's fusion model on an A100 ([`crate::labs::tuning::gpt2_surrogate_trial_profile`]).
        Gpt2Surrogate = "gpt2-surrogate";
    }
}

impl TrialPreset {
    /// The profile.
    #[must_use]
    pub fn profile(self) -> TrialProfile {
        match self {
            TrialPreset::Resnet18 => TrialProfile::resnet18(),
            TrialPreset::SmallGpt => TrialProfile::small_gpt(),
            TrialPreset::Gpt2Surrogate => crate::labs::tuning::gpt2_surrogate_trial_profile(),
        }
    }
}

/// The tuner that decides which trials train on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TunerKind {
    /// Asynchronous successive halving as Hydro's `ASHAHydroScheduler` runs it (Ray Tune's
    /// `AsyncHyperBandScheduler` with one bracket; Li et al., "A System for Massively Parallel
    /// Hyperparameter Tuning", MLSys 2020): a trial that reaches a rung is stopped if it is below
    /// the rung's (1 − 1/η) quantile of the results recorded there so far, else it trains on at
    /// once; nothing waits for a rung to fill.
    #[serde(rename = "asha")]
    Asha,
    /// Synchronous successive halving (Jamieson & Talwalkar 2016): every rung ends with its
    /// slowest trial before the best 1/η are promoted.
    #[serde(rename = "sync-sh")]
    SyncSh,
}

impl TunerKind {
    /// Id as in JSON.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            TunerKind::Asha => "asha",
            TunerKind::SyncSh => "sync-sh",
        }
    }

    /// Display name.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            TunerKind::Asha => "ASHA (asynchronous successive halving)",
            TunerKind::SyncSh => "synchronous successive halving",
        }
    }
}

crate::kinds! {
    /// How the ASHA tuner picks the bundle size F (trials fused per bundle).
    pub enum BundleRule as "bundle rule" {
        /// Hydro's rule (`hydro/tune/trial_runner.py`, `trial_fusion_according_plan_and_resource`):
        /// ⌈N / G⌉ trials per bundle for N pending trials on G GPUs when that is within the
        /// fusion limit, else the limit's bundles evened out, ⌈N / ⌈N / limit⌉⌉.
        Hydro = "hydro", "Hydro's even split";
        /// The same split under the limit Hydro's planner derives when it profiles instead of
        /// being given one (`profile_stage`; `hydro/tune/planner.py`,
        /// `obtain_memory_bounded_plan`, l. 137–143 at 06a72a7): one trial (s bytes) and two
        /// fused trials (d bytes) on a GPU of M bytes give ⌊(M − s) / (d − s)⌋; here M is
        /// `gpu_memory_bytes` and s, d the trial profile's memory at F = 1, 2, and the limit is
        /// capped at `max_fusion` (the largest bundle this lab models).
        HydroProfiled = "hydro-profiled", "Hydro's even split, planner's memory limit";
        /// Every F up to the limit simulated, the shortest makespan kept: a bound no tuner
        /// reaches, as it needs the run's outcome before the run.
        Oracle = "oracle", "oracle bundle (best F in hindsight)";
    }
}

/// A hyperparameter-tuning job at cluster level: N trials under ASHA (Hydro's tuner, the
/// default) or synchronous successive halving, on 1 exclusive GPU with or without the bubbles of
/// the main job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpoParams {
    /// Which tuner.
    pub tuner: TunerKind,
    /// Trials, N.
    pub trials: u32,
    /// Synchronous SH: reduction factor η (each rung keeps 1/η of the trials and trains them η×
    /// longer).
    pub eta: u32,
    /// Synchronous SH: steps each trial trains in the first rung.
    pub min_steps: u64,
    /// ASHA: reduction factor (`reduction_factor`, 4 in Hydro's `ASHAHydroScheduler`); integer
    /// here.
    pub reduction_factor: u32,
    /// ASHA: steps before the first rung (`grace_period`): rungs sit at grace · η^k steps.
    pub grace_period_steps: u64,
    /// ASHA: steps after which every trial stops (`max_t`).
    pub max_t_steps: u64,
    /// Seed of the trials' qualities (ASHA's decisions depend on them; synchronous SH's
    /// makespan does not).
    pub seed: u64,
    /// Pipeline stages of the main job whose bubbles the tuner may use, S (≤ its stages).
    pub stages: u32,
    /// GPUs in each stage (tensor/data parallel within a stage): each sees that stage's bubbles.
    pub gpus_per_stage: u32,
    /// ASHA: how the bundle size F is chosen. Default `hydro`: Hydro's split with `max_fusion`
    /// as the fusion limit given to it (`HydroTrialRunner(fusion_limit=…)`).
    pub bundle: BundleRule,
}

impl Default for HpoParams {
    /// 64 trials; ASHA with Hydro's reduction factor 4, a grace period of 200 steps and max_t =
    /// 12,800 steps (the longest training of the synchronous SH this lab ran before: 200 · 2⁶);
    /// the step counts are this lab's choice, not Hydro's.
    fn default() -> Self {
        HpoParams {
            tuner: TunerKind::Asha,
            trials: 64,
            eta: 2,
            min_steps: 200,
            reduction_factor: 4,
            grace_period_steps: 200,
            max_t_steps: 12_800,
            seed: 1,
            stages: 4,
            gpus_per_stage: 8,
            bundle: BundleRule::Hydro,
        }
    }
}

/// The bubbles lab's scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BubblesParams {
    /// The main job: a pipeline-lab scenario with exactly one schedule.
    pub main: PipelineParams,
    /// GPU memory of every stage's GPU, bytes.
    pub gpu_memory_bytes: u64,
    /// Memory the main job holds on a stage all the time (weights, gradients, optimizer state),
    /// bytes; one value for every stage, or one per stage.
    pub static_bytes: Vec<u64>,
    /// Memory kept free for fragmentation, NCCL buffers and workspaces, bytes.
    pub reserve_bytes: u64,
    /// SM activity of the main job while it computes (0–1).
    pub compute_sm_activity: f64,
    /// SM activity while only NCCL communication runs on the stage (0–1); Hydro measures ~2 %.
    pub nccl_sm_activity: f64,
    /// The trial preset the profile came from (display only; `trial` holds the numbers).
    pub trial_preset: TrialPreset,
    /// The guest trial bundle.
    pub trial: TrialProfile,
    /// Largest fusion count F a bundle may have.
    pub max_fusion: u32,
    /// Time to resume a paused bundle at the start of a window (reload its state, relaunch), ns.
    pub resume_ns: u64,
    /// Delay before the squeezer learns that a window opened (progress report + NCCL stream
    /// poll), ns.
    pub detect_ns: u64,
    /// Policies to compare, in display order.
    pub policies: Vec<PolicyKind>,
    /// The tuning job at cluster level.
    pub hpo: HpoParams,
}

impl Default for BubblesParams {
    fn default() -> Self {
        BubblesParams::gpt_32_gpus()
    }
}

impl BubblesParams {
    /// The seed's setting: a large GPT job on 32 GPUs in 4 pipeline stages (8 GPUs per stage),
    /// 1F1B with 8 micro-batches, A100-80GB GPUs, ResNet-18-like trials. Op times (40 ms F,
    /// 80 ms B+W per micro-batch and stage), 40 GiB static and 4 GiB of activations per
    /// micro-batch are this lab's assumptions for a ~20 B-parameter GPT, not measurements.
    #[must_use]
    pub fn gpt_32_gpus() -> BubblesParams {
        BubblesParams {
            main: PipelineParams {
                schedules: vec![ScheduleKind::OneFOneB],
                stages: 4,
                micro_batches: 8,
                virtual_stages: 2,
                forward_ns: 40_000_000,
                backward_input_ns: 40_000_000,
                backward_weight_ns: 40_000_000,
                stage_times: Vec::new(),
                stage_slowdown: Vec::new(),
                p2p_ns: 2_000_000,
                activation_bytes: 4 * GIB,
                w_memory_fraction: 0.5,
            },
            gpu_memory_bytes: 80 * GIB,
            static_bytes: vec![40 * GIB],
            reserve_bytes: 2 * GIB,
            compute_sm_activity: 0.9,
            nccl_sm_activity: 0.02,
            trial_preset: TrialPreset::Resnet18,
            trial: TrialProfile::resnet18(),
            max_fusion: 16,
            resume_ns: 2_000_000,
            detect_ns: 1_000_000,
            policies: PolicyKind::ALL.to_vec(),
            hpo: HpoParams::default(),
        }
    }

    /// Static bytes of stage `d`.
    #[must_use]
    pub fn static_bytes_of(&self, d: usize) -> u64 {
        match self.static_bytes.len() {
            0 => 0,
            1 => self.static_bytes[0],
            _ => self.static_bytes.get(d).copied().unwrap_or(0),
        }
    }

    /// The main job's schedule.
    #[must_use]
    pub fn schedule(&self) -> ScheduleKind {
        self.main
            .schedules
            .first()
            .copied()
            .unwrap_or(ScheduleKind::OneFOneB)
    }

    /// Checks every field; the error names the first bad one as `bubbles.<path>`.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path and expected range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.main.validate().map_err(|e| match e {
            ScenarioError::Field { path, message } => ScenarioError::Field {
                path: format!(
                    "bubbles.main.{}",
                    path.strip_prefix("pipeline.").unwrap_or(&path)
                ),
                message,
            },
            other => other,
        })?;
        self.validate_guest()?;
        if self.main.schedules.len() != 1 {
            return Err(field(
                "main.schedules",
                format!(
                    "must name exactly one schedule (the main job's), got {}",
                    self.main.schedules.len()
                ),
            ));
        }
        if !self.static_bytes.is_empty()
            && self.static_bytes.len() != 1
            && self.static_bytes.len() != self.main.stages as usize
        {
            return Err(field(
                "static_bytes",
                format!(
                    "must hold one value or one per stage ({}), got {}",
                    self.main.stages,
                    self.static_bytes.len()
                ),
            ));
        }
        for (i, &b) in self.static_bytes.iter().enumerate() {
            if b > self.gpu_memory_bytes {
                return Err(field(
                    &format!("static_bytes[{i}]"),
                    format!(
                        "must be at most gpu_memory_bytes ({}), got {b}",
                        self.gpu_memory_bytes
                    ),
                ));
            }
        }
        if self.hpo.stages > self.main.stages {
            return Err(field(
                "hpo.stages",
                format!(
                    "must be at most the main job's stages ({}), got {}",
                    self.main.stages, self.hpo.stages
                ),
            ));
        }
        Ok(())
    }

    /// Checks everything except the main pipeline (used for real logs, whose main job is the
    /// log): the field table's ranges ([`super::fields::FIELDS`]), then what relates two
    /// fields.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path and expected range.
    pub fn validate_guest(&self) -> Result<(), ScenarioError> {
        crate::fields::check("bubbles", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        if self.reserve_bytes > self.gpu_memory_bytes {
            return Err(field(
                "reserve_bytes",
                format!(
                    "must be at most gpu_memory_bytes, got {}",
                    self.reserve_bytes
                ),
            ));
        }
        let h = &self.hpo;
        if h.max_t_steps < h.grace_period_steps {
            return Err(field(
                "hpo.max_t_steps",
                format!(
                    "must be at least grace_period_steps ({}), got {}",
                    h.grace_period_steps, h.max_t_steps
                ),
            ));
        }
        Ok(())
    }
}

fn field(path: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError::field(format!("bubbles.{path}"), message)
}
