//! Parameters of the migration lab: one training job's GPU and CPU state, the links its state
//! crosses, the pause options and the framework-checkpoint baseline.

use alloc::format;
use alloc::string::String;

use serde::{Deserialize, Serialize};

use super::model::CheckpointOption;
use crate::scenario::ScenarioError;

/// Most GPUs of one job.
pub const MAX_GPUS: u32 = 65_536;
/// Largest state size accepted, GiB (per GPU or per process).
pub const MAX_GIB: f64 = 16_384.0;
/// Largest bandwidth accepted, GB/s.
pub const MAX_GBPS: f64 = 100_000.0;
/// Longest time accepted, s (one day).
pub const MAX_SECONDS: f64 = 86_400.0;

/// A data-parallel training job's state at pause time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobState {
    /// Display name.
    pub name: String,
    /// GPUs of the job (one process each).
    pub gpus: u32,
    /// GPUs per node (they share the node's storage link).
    pub gpus_per_node: u32,
    /// Model-parallel degree (tensor × pipeline): the model state is split across this many GPUs;
    /// `gpus / model_parallel` data-parallel replicas hold identical copies of each shard.
    pub model_parallel: u32,
    /// Parameters of the whole model, billions.
    pub params_billion: f64,
    /// Bytes per weight (2 = BF16).
    pub weight_bytes_per_param: f64,
    /// Bytes of gradient per parameter (2 = BF16); gradients live from the backward pass to the
    /// optimizer step and are freed after it (`zero_grad(set_to_none=True)`).
    pub grad_bytes_per_param: f64,
    /// Bytes of optimizer state per parameter (12 = FP32 master weights + Adam's two moments).
    pub optimizer_bytes_per_param: f64,
    /// Activations held at the end of the forward pass, GiB per GPU (the peak of the swing).
    pub activation_peak_gib: f64,
    /// Memory the framework's caching allocator has reserved from the driver, GiB per GPU (what
    /// a whole-pool checkpoint such as POS saves). At least the peak of active memory.
    pub reserved_gib: f64,
    /// One training iteration, s.
    pub iteration_s: f64,
    /// Share of the iteration spent in the forward pass (activations rise).
    pub forward_fraction: f64,
    /// Share of the iteration spent in the optimizer step at its end (gradients still held).
    pub optimizer_fraction: f64,
    /// CPU-side state of one process (host memory, pinned buffers, dataloader), GiB.
    pub cpu_state_gib: f64,
}

impl Default for JobState {
    /// A GPT-3 2.7 B-sized model, data parallel on 8 GPUs of one node, BF16 + Adam (an example;
    /// the presets name theirs).
    fn default() -> Self {
        JobState {
            name: "2.7B dense, DP=8 on one node".into(),
            gpus: 8,
            gpus_per_node: 8,
            model_parallel: 1,
            params_billion: 2.7,
            weight_bytes_per_param: 2.0,
            grad_bytes_per_param: 2.0,
            optimizer_bytes_per_param: 12.0,
            activation_peak_gib: 20.0,
            reserved_gib: 76.0,
            iteration_s: 2.0,
            forward_fraction: 0.33,
            optimizer_fraction: 0.05,
            cpu_state_gib: 4.0,
        }
    }
}

/// The links a checkpoint image crosses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Links {
    /// Device-to-host copy bandwidth of one GPU, GB/s. Default 50: our assumption for PCIe Gen5
    /// x16 (32 GT/s × 16 lanes = 64 GB/s raw per direction, less encoding and protocol
    /// overhead), not measured by us nor taken from a source.
    pub d2h_gbps: f64,
    /// Host-to-device copy bandwidth of one GPU, GB/s (default 50, the same assumption).
    pub h2d_gbps: f64,
    /// Write bandwidth of the checkpoint storage as seen from one node, GB/s (shared by the
    /// node's GPUs).
    pub storage_write_gbps: f64,
    /// Read bandwidth of the checkpoint storage as seen from one node, GB/s.
    pub storage_read_gbps: f64,
    /// Dump/restore bandwidth of one process's CPU state (a CRIU-style page dump into host
    /// memory or tmpfs; one memory-copy stream, ~8 GB/s assumed), GB/s.
    pub cpu_state_gbps: f64,
    /// Time to drain in-flight work before a transparent pause (synchronise streams, finish
    /// the running kernels and collectives), s.
    pub drain_s: f64,
}

impl Default for Links {
    fn default() -> Self {
        Links {
            d2h_gbps: 50.0,
            h2d_gbps: 50.0,
            storage_write_gbps: 10.0,
            storage_read_gbps: 20.0,
            cpu_state_gbps: 8.0,
            drain_s: 0.05,
        }
    }
}

/// The fixed costs one checkpoint system pays when it restores a process on other GPUs (a
/// migration's second half), each its own term. A local pause keeps the process, its context
/// and its handles alive, so a local resume pays none of them. The bytes (GPU state, CPU
/// state) are charged apart, by the links. Defaults are PhOS's own restore
/// (SJTU-IPADS/PhoenixOS @eb2ac2d, `osdi_data/`) where its logs state a figure; FlowGPU states
/// none, so it gets the same (docs/MODEL.md, "Migration lab").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RestoreCosts {
    /// Re-creating the process from its CPU image (CRIU-style restore of the process tree,
    /// mappings and descriptors), on top of the CPU-state bytes at `links.cpu_state_gbps`, s.
    /// Assumed 0.1 s: no source read states a fixed part (the CRIU restores in PhOS's
    /// `osdi_data/cuda-checkpoint/*.txt` print only totals, 2.23 s for 4.34 GiB to 20.3 s for
    /// 52.9 GiB, i.e. set by the bytes).
    pub process_restore_s: f64,
    /// Getting a CUDA context with the process's modules on the destination GPU, s. Default
    /// 0.14 ms: the largest context-handle restore in the logs of PhOS's restore-everything
    /// baseline (`osdi_data/singularity/*.txt`, "restore handle: rid(1)", 0.02–0.14 ms), which
    /// re-binds the handle to a context the process already has; it does not time PhOS's
    /// execution-context pool (no log does), and stands here for a system that keeps live
    /// contexts. A system without one creates the context and loads every module and function
    /// again: 1.15–2.22 s per process in the same logs (rid 2 and 3).
    pub context_s: f64,
    /// Re-creating the opaque handles (device allocations, streams, events, library handles)
    /// from the log, s. Default 25.7 ms: PhOS's restore of a ResNet-152 training process
    /// re-creates its 205 handles in 25.66 ms (`osdi_data/phos/resnet_train_cow.txt`,
    /// "On-demand Reload (by Worker Thread)"). The same log's 358.99 ms "Recomputation APIs"
    /// window also holds 302.04 ms of reloading 1.04 GB of buffer contents (bytes, charged by
    /// the links here) and the re-run of the 10,562 calls logged during PhOS's *concurrent*
    /// checkpoint, which a stop-the-world pause does not have.
    pub replay_s: f64,
}

impl Default for RestoreCosts {
    fn default() -> Self {
        RestoreCosts {
            process_restore_s: 0.1,
            context_s: 0.000_14,
            replay_s: 0.025_7,
        }
    }
}

/// The restore costs of the two transparent systems compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Systems {
    /// POS (PhOS, "PhoenixOS: Concurrent OS-level GPU Checkpoint and Restore with Validated
    /// Speculation", arXiv 2405.12079; earlier "ParallelGPUOS"): the reserved-pool option.
    pub pos: RestoreCosts,
    /// FlowGPU (per-task interception, ghost process; Euro-Par): the active-memory options.
    pub flowgpu: RestoreCosts,
}

/// How a transparent pause picks what and when to save.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PauseOptions {
    /// When the pause request arrives, as a share of the iteration (0 = iteration start).
    pub request_at_fraction: f64,
    /// Longest wait for a lower point of active memory after the request, s.
    pub max_wait_s: f64,
    /// Share of the replicated state (weights, gradients, optimizer state of data-parallel
    /// replicas) that fixed-size-region deduplication finds in byte-identical regions (1 when
    /// replicas allocate in the same order, as identical processes do; the native runner's
    /// `checkpoint-demo` measures it on a real image).
    pub dedup_identical_fraction: f64,
}

impl Default for PauseOptions {
    fn default() -> Self {
        PauseOptions {
            request_at_fraction: 0.5,
            max_wait_s: 2.0,
            dedup_identical_fraction: 1.0,
        }
    }
}

/// The framework-level checkpoint baseline: save model + optimizer at an iteration boundary,
/// then restart the process (initialisation + reload).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrameworkCheckpoint {
    /// Process start to first iteration without loading: interpreter and framework import,
    /// CUDA context, communicator set-up, data loader, s.
    pub init_s: f64,
}

impl Default for FrameworkCheckpoint {
    fn default() -> Self {
        FrameworkCheckpoint { init_s: 30.0 }
    }
}

/// The migration lab's scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MigrationParams {
    /// The job.
    pub job: JobState,
    /// The links.
    pub links: Links,
    /// The pause options.
    pub options: PauseOptions,
    /// The framework-checkpoint baseline.
    pub framework: FrameworkCheckpoint,
    /// The fixed restore costs of POS and FlowGPU.
    pub systems: Systems,
}

fn range_error(field: &str, range: &str, got: impl core::fmt::Display) -> ScenarioError {
    ScenarioError::field(
        format!("migration.{field}"),
        format!("must be {range}, got {got}"),
    )
}

fn check_positive(field: &str, v: f64, max: f64, unit: &str) -> Result<(), ScenarioError> {
    if !(v.is_finite() && v > 0.0 && v <= max) {
        return Err(range_error(
            field,
            &format!("between 0 (exclusive) and {max}{unit}"),
            v,
        ));
    }
    Ok(())
}

impl MigrationParams {
    /// Checks every field; the error names the first bad one.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `migration.<field>` and the expected range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.validate_prefixed("migration")
    }

    /// [`MigrationParams::validate`] with field paths under `prefix` (the fairness lab embeds
    /// these parameters).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `<prefix>.<field>`.
    pub fn validate_prefixed(&self, prefix: &str) -> Result<(), ScenarioError> {
        self.validate_inner().map_err(|e| match e {
            ScenarioError::Field { path, message } if prefix != "migration" => {
                ScenarioError::Field {
                    path: format!(
                        "{prefix}{}",
                        path.strip_prefix("migration").unwrap_or(&path)
                    ),
                    message,
                }
            }
            other => other,
        })
    }

    fn validate_inner(&self) -> Result<(), ScenarioError> {
        crate::fields::check(
            "migration",
            super::fields::FIELDS,
            &crate::scenario::to_value(self),
        )?;
        let j = &self.job;
        if j.model_parallel == 0 || !j.gpus.is_multiple_of(j.model_parallel) {
            return Err(range_error(
                "job.model_parallel",
                &format!("at least 1 and a divisor of job.gpus ({})", j.gpus),
                j.model_parallel,
            ));
        }
        check_positive("job.params_billion", j.params_billion, 100_000.0, "")?;
        check_positive("job.iteration_s", j.iteration_s, MAX_SECONDS, " s")?;
        if j.forward_fraction + j.optimizer_fraction > 0.99 {
            return Err(range_error(
                "job.optimizer_fraction",
                "at most 0.99 − job.forward_fraction (the backward pass needs time)",
                j.optimizer_fraction,
            ));
        }
        let peak_gib = super::model::peak_active_bytes(j) / super::model::GIB;
        if j.reserved_gib + 1e-9 < peak_gib {
            return Err(range_error(
                "job.reserved_gib",
                &format!("at least the peak of active memory ({peak_gib:.2} GiB per GPU)"),
                j.reserved_gib,
            ));
        }
        let l = &self.links;
        check_positive("links.d2h_gbps", l.d2h_gbps, MAX_GBPS, " GB/s")?;
        check_positive("links.h2d_gbps", l.h2d_gbps, MAX_GBPS, " GB/s")?;
        check_positive(
            "links.storage_write_gbps",
            l.storage_write_gbps,
            MAX_GBPS,
            " GB/s",
        )?;
        check_positive(
            "links.storage_read_gbps",
            l.storage_read_gbps,
            MAX_GBPS,
            " GB/s",
        )?;
        check_positive("links.cpu_state_gbps", l.cpu_state_gbps, MAX_GBPS, " GB/s")?;
        Ok(())
    }
}

/// Where a preempted job's checkpoint cost comes from, for the schedulers that preempt or
/// restart jobs (the fairness lab's preemptions, the elastic lab's restarts).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PreemptionModel {
    /// `preempt_cost_s` + `resume_cost_s` for every job, whatever its size.
    #[default]
    Fixed,
    /// The migration lab's cost model: a preempted job of g GPUs loses the time to migrate
    /// (pause to storage + restore from storage) its state under `option`, computed from
    /// `params` with g GPUs (`preempt_cost_s` and `resume_cost_s` are then unused).
    Migration {
        /// The checkpoint option (`reserved-pool`, `active`, `active-low-point`,
        /// `active-low-point-dedup`, `framework`).
        option: CheckpointOption,
        /// The job state and links (the job's GPU count is each preempted job's own).
        #[serde(default)]
        params: alloc::boxed::Box<MigrationParams>,
    },
}

impl PreemptionModel {
    /// True for the default fixed costs (left out of canonical JSON, so scenarios and Reports
    /// written before this field existed stay byte-identical).
    #[must_use]
    pub fn is_fixed(&self) -> bool {
        matches!(self, PreemptionModel::Fixed)
    }
}
