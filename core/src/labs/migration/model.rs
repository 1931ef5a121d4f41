//! The cost model: what a pause must save, when, and how long pause, restore and migration take
//! under each checkpoint option (docs/MODEL.md, "Migration lab").
//!
//! Memory is per GPU. Over one iteration of length T, active memory is the weights and optimizer
//! state (always), plus activations that rise linearly over the forward pass to their peak and
//! fall linearly over the backward pass, plus gradients that grow over the backward pass, stay
//! through the optimizer step and are freed at the iteration boundary. Its low point is the
//! iteration boundary. Copies are pipelined: the slowest stage (device→host link, storage,
//! CPU-state dump) sets the time.

use serde::{Deserialize, Serialize};

use super::params::{JobState, MigrationParams};

/// Bytes in a GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Bytes per GB (bandwidths are in GB/s).
pub const GB: f64 = 1e9;

/// What a pause saves and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckpointOption {
    /// The framework's whole reserved pool, saved when the request arrives (POS-style).
    ReservedPool,
    /// Only the active regions, saved when the request arrives.
    Active,
    /// Only the active regions, at the cheapest point within the bounded wait (the low point of
    /// active memory when it can be reached).
    ActiveLowPoint,
    /// As `active-low-point`, with replicas' identical fixed-size regions saved once.
    ActiveLowPointDedup,
    /// Framework-level checkpoint: model + optimizer at the next iteration boundary, then a
    /// process restart (initialisation + reload).
    Framework,
}

impl CheckpointOption {
    /// Every option, in table order.
    pub const ALL: [CheckpointOption; 5] = [
        CheckpointOption::ReservedPool,
        CheckpointOption::Active,
        CheckpointOption::ActiveLowPoint,
        CheckpointOption::ActiveLowPointDedup,
        CheckpointOption::Framework,
    ];

    /// The id used in JSON.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            CheckpointOption::ReservedPool => "reserved-pool",
            CheckpointOption::Active => "active",
            CheckpointOption::ActiveLowPoint => "active-low-point",
            CheckpointOption::ActiveLowPointDedup => "active-low-point-dedup",
            CheckpointOption::Framework => "framework",
        }
    }

    /// Display label.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            CheckpointOption::ReservedPool => "reserved pool (POS-style)",
            CheckpointOption::Active => "active memory",
            CheckpointOption::ActiveLowPoint => "active + low point",
            CheckpointOption::ActiveLowPointDedup => "active + low point + dedup",
            CheckpointOption::Framework => "framework checkpoint + restart",
        }
    }
}

/// Bytes of one GPU's state at a moment, split by whether data-parallel replicas hold the same
/// bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuBytes {
    /// Weights, optimizer state and gradients: identical across data-parallel replicas.
    pub replicated: f64,
    /// Activations: different on every replica.
    pub private: f64,
}

impl GpuBytes {
    /// All active bytes.
    #[must_use]
    pub fn total(self) -> f64 {
        self.replicated + self.private
    }
}

/// Weights + optimizer state of one GPU, bytes.
#[must_use]
pub fn static_bytes(j: &JobState) -> f64 {
    j.params_billion * 1e9 * (j.weight_bytes_per_param + j.optimizer_bytes_per_param)
        / f64::from(j.model_parallel.max(1))
}

/// Gradients of one GPU when all are held, bytes.
#[must_use]
pub fn grad_bytes(j: &JobState) -> f64 {
    j.params_billion * 1e9 * j.grad_bytes_per_param / f64::from(j.model_parallel.max(1))
}

/// Peak active memory of one GPU over an iteration, bytes.
#[must_use]
pub fn peak_active_bytes(j: &JobState) -> f64 {
    static_bytes(j) + (j.activation_peak_gib * GIB).max(grad_bytes(j))
}

/// Active memory of one GPU at `t_s` seconds into an iteration (taken modulo the iteration).
#[must_use]
pub fn active_at(j: &JobState, t_s: f64) -> GpuBytes {
    let it = j.iteration_s;
    let t = t_s - libm::floor(t_s / it) * it;
    let f = j.forward_fraction * it;
    let b_end = (1.0 - j.optimizer_fraction) * it;
    let act = j.activation_peak_gib * GIB;
    let g = grad_bytes(j);
    let (a, gr) = if t < f {
        (act * t / f, 0.0)
    } else if t < b_end {
        let p = (t - f) / (b_end - f);
        (act * (1.0 - p), g * p)
    } else {
        (0.0, g)
    };
    GpuBytes {
        replicated: static_bytes(j) + gr,
        private: a,
    }
}

/// Data-parallel replicas of each model shard.
#[must_use]
pub fn replicas(j: &JobState) -> u32 {
    (j.gpus / j.model_parallel.max(1)).max(1)
}

/// Bytes the whole job must save for a state of `per_gpu` on every GPU; with dedup, replicas'
/// identical regions (a share `identical` of the replicated bytes) are saved once.
#[must_use]
pub fn job_image_bytes(j: &JobState, per_gpu: GpuBytes, dedup: bool, identical: f64) -> f64 {
    let gpus = f64::from(j.gpus);
    let all = per_gpu.total() * gpus;
    if !dedup {
        return all;
    }
    let r = f64::from(replicas(j));
    // Of each shard's replicated bytes, `identical` is held r times but saved once.
    all - per_gpu.replicated * identical * (r - 1.0) * f64::from(j.model_parallel.max(1))
}

/// Times of one pause, restore or migration, s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Waiting for the chosen pause point (or the iteration boundary), s.
    pub wait_s: f64,
    /// Draining in-flight work, s.
    pub drain_s: f64,
    /// Copying GPU state (device↔host, and storage when the image goes there), s.
    pub gpu_copy_s: f64,
    /// Dumping or restoring CPU state (in parallel with the GPU copy), s.
    pub cpu_state_s: f64,
    /// Re-creating handles (transparent restore) or process initialisation (restart), s.
    pub setup_s: f64,
}

impl Phases {
    /// End-to-end time: wait, drain, then the slower of GPU copy and CPU state, then set-up.
    #[must_use]
    pub fn total_s(&self) -> f64 {
        self.wait_s + self.drain_s + self.gpu_copy_s.max(self.cpu_state_s) + self.setup_s
    }
}

/// One option's cost.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptionCost {
    /// The option.
    pub option: CheckpointOption,
    /// Where in the iteration the state is saved, s from the iteration start (modulo T).
    pub pause_point_s: f64,
    /// GPU state saved by the whole job, bytes.
    pub gpu_image_bytes: f64,
    /// CPU state saved by the whole job, bytes.
    pub cpu_image_bytes: f64,
    /// Pause into host memory (local preemption).
    pub pause: Phases,
    /// Restore from host memory on the same GPUs.
    pub restore: Phases,
    /// Pause with the image written to storage (first half of a migration).
    pub pause_to_storage: Phases,
    /// Restore from storage on other GPUs (second half of a migration).
    pub restore_from_storage: Phases,
}

impl OptionCost {
    /// Migration end to end: pause to storage, then restore from storage, s.
    #[must_use]
    pub fn migrate_s(&self) -> f64 {
        self.pause_to_storage.total_s() + self.restore_from_storage.total_s()
    }

    /// The whole image, bytes.
    #[must_use]
    pub fn image_bytes(&self) -> f64 {
        self.gpu_image_bytes + self.cpu_image_bytes
    }
}

fn gpus_on_a_node(j: &JobState) -> f64 {
    f64::from(j.gpus.min(j.gpus_per_node))
}

/// Transparent (whole-process) pause and restore of a job whose GPUs hold `gpu_bytes` in all.
fn transparent(p: &MigrationParams, gpu_bytes: f64, wait_s: f64) -> [Phases; 4] {
    let (j, l) = (&p.job, &p.links);
    let per_gpu = gpu_bytes / f64::from(j.gpus);
    let per_node = per_gpu * gpus_on_a_node(j);
    let cpu = j.cpu_state_gib * GIB;
    let cpu_node = cpu * gpus_on_a_node(j);
    let pause = Phases {
        wait_s,
        drain_s: l.drain_s,
        gpu_copy_s: per_gpu / (l.d2h_gbps * GB),
        cpu_state_s: cpu / (l.cpu_state_gbps * GB),
        setup_s: 0.0,
    };
    let restore = Phases {
        wait_s: 0.0,
        drain_s: 0.0,
        gpu_copy_s: per_gpu / (l.h2d_gbps * GB),
        cpu_state_s: cpu / (l.cpu_state_gbps * GB),
        setup_s: l.replay_s,
    };
    // GPU and CPU images share the node's storage link; the pipeline runs at its slowest stage.
    let storage_w = (per_node + cpu_node) / (l.storage_write_gbps * GB);
    let storage_r = (per_node + cpu_node) / (l.storage_read_gbps * GB);
    let pause_s = Phases {
        gpu_copy_s: pause.gpu_copy_s.max(storage_w),
        ..pause
    };
    let restore_s = Phases {
        gpu_copy_s: restore.gpu_copy_s.max(storage_r),
        ..restore
    };
    [pause, restore, pause_s, restore_s]
}

/// Time of a pause to storage (wait + drain + copy) of per-GPU state `per_gpu`: the pause a
/// migration or a preemption whose image leaves the node pays, where bytes cost the most.
fn pause_cost_at(p: &MigrationParams, dedup: bool, wait_s: f64, per_gpu: GpuBytes) -> f64 {
    let bytes = job_image_bytes(&p.job, per_gpu, dedup, p.options.dedup_identical_fraction);
    transparent(p, bytes, wait_s)[2].total_s()
}

/// The pause point within `[request, request + max_wait]` that minimises wait + pause-to-storage
/// time,
/// as (point in s from the request's iteration start, wait s). Active memory is piecewise linear
/// in time, so the minimum lies on a breakpoint or an end of the window; waiting past one full
/// iteration never helps (the pattern repeats).
#[must_use]
pub fn choose_pause_point(p: &MigrationParams, dedup: bool) -> (f64, f64) {
    let j = &p.job;
    let it = j.iteration_s;
    let start = p.options.request_at_fraction * it;
    let end = start + p.options.max_wait_s.min(it);
    let mut best = (start, 0.0);
    let mut best_cost = pause_cost_at(p, dedup, 0.0, active_at(j, start));
    let marks = [
        0.0,
        j.forward_fraction * it,
        (1.0 - j.optimizer_fraction) * it,
    ];
    let mut candidates = alloc::vec![end];
    for k in 0..=2 {
        for m in marks {
            candidates.push(f64::from(k) * it + m);
        }
    }
    for t in candidates {
        if t < start || t > end {
            continue;
        }
        let cost = pause_cost_at(p, dedup, t - start, active_at(j, t));
        if cost < best_cost - 1e-12 {
            best_cost = cost;
            best = (t, t - start);
        }
    }
    best
}

/// The cost of `option` for the scenario's job.
#[must_use]
pub fn evaluate(p: &MigrationParams, option: CheckpointOption) -> OptionCost {
    let j = &p.job;
    let it = j.iteration_s;
    let request = p.options.request_at_fraction * it;
    let cpu_image = j.cpu_state_gib * GIB * f64::from(j.gpus);
    let identical = p.options.dedup_identical_fraction;
    let build = |point: f64, wait: f64, gpu_bytes: f64| {
        let [pause, restore, pause_to_storage, restore_from_storage] =
            transparent(p, gpu_bytes, wait);
        OptionCost {
            option,
            pause_point_s: point - libm::floor(point / it) * it,
            gpu_image_bytes: gpu_bytes,
            cpu_image_bytes: cpu_image,
            pause,
            restore,
            pause_to_storage,
            restore_from_storage,
        }
    };
    match option {
        CheckpointOption::ReservedPool => build(
            request,
            0.0,
            (j.reserved_gib * GIB).max(peak_active_bytes(j)) * f64::from(j.gpus),
        ),
        CheckpointOption::Active => build(
            request,
            0.0,
            job_image_bytes(j, active_at(j, request), false, identical),
        ),
        CheckpointOption::ActiveLowPoint | CheckpointOption::ActiveLowPointDedup => {
            let dedup = option == CheckpointOption::ActiveLowPointDedup;
            let (point, wait) = choose_pause_point(p, dedup);
            build(
                point,
                wait,
                job_image_bytes(j, active_at(j, point), dedup, identical),
            )
        }
        CheckpointOption::Framework => framework(p, request),
    }
}

/// The framework-checkpoint baseline: wait for the next iteration boundary, save each shard's
/// model + optimizer state once (data-parallel rank 0 of each shard), restart every process
/// (initialisation), reload every GPU's shard.
fn framework(p: &MigrationParams, request: f64) -> OptionCost {
    let (j, l) = (&p.job, &p.links);
    let it = j.iteration_s;
    let wait = if request <= 0.0 { 0.0 } else { it - request };
    let shard = static_bytes(j);
    let mp = f64::from(j.model_parallel.max(1));
    let image = shard * mp;
    let gpn = f64::from(j.gpus_per_node);
    let saver_nodes = libm::ceil(mp / gpn).max(1.0);
    let job_nodes = libm::ceil(f64::from(j.gpus) / gpn).max(1.0);
    let save_host = shard / (l.d2h_gbps * GB);
    let save_storage = save_host.max(image / (saver_nodes * l.storage_write_gbps * GB));
    let load_host = shard / (l.h2d_gbps * GB);
    let load_storage =
        load_host.max(shard * f64::from(j.gpus) / (job_nodes * l.storage_read_gbps * GB));
    let pause = Phases {
        wait_s: wait,
        gpu_copy_s: save_host,
        ..Phases::default()
    };
    let restore = Phases {
        gpu_copy_s: load_host,
        setup_s: p.framework.init_s,
        ..Phases::default()
    };
    OptionCost {
        option: CheckpointOption::Framework,
        pause_point_s: 0.0,
        gpu_image_bytes: image,
        cpu_image_bytes: 0.0,
        pause,
        restore,
        pause_to_storage: Phases {
            gpu_copy_s: save_storage,
            ..pause
        },
        restore_from_storage: Phases {
            gpu_copy_s: load_storage,
            ..restore
        },
    }
}

/// Seconds a scheduler loses to one preemption of a job of `gpus` GPUs under `option`: the
/// migration (pause to storage, restore from storage elsewhere). The scenario's job gives the
/// model, activations and links; its model-parallel degree is cut to the largest divisor of
/// `gpus` not above it (so a smaller job holds larger shards per GPU).
/// The fairness lab calls this for its checkpoint cost.
#[must_use]
pub fn preemption_cost_s(p: &MigrationParams, option: CheckpointOption, gpus: u32) -> f64 {
    let mut q = p.clone();
    let gpus = gpus.max(1);
    let mut mp = p.job.model_parallel.min(gpus).max(1);
    while !gpus.is_multiple_of(mp) {
        mp -= 1;
    }
    q.job.gpus = gpus;
    q.job.model_parallel = mp;
    evaluate(&q, option).migrate_s()
}
