//! The cost model: what a pause must save, when, and how long pause, restore and migration take
//! under each checkpoint option (docs/MODEL.md, "Migration lab").
//!
//! Memory is per GPU. Over one iteration of length T, active memory is the weights and optimizer
//! state (always), plus activations that rise linearly over the forward pass to their peak and
//! fall linearly over the backward pass, plus gradients that grow over the backward pass, stay
//! through the optimizer step and are freed at the iteration boundary. Its low point is the
//! iteration boundary. Copies are pipelined: the slowest stage (device→host link, storage,
//! CPU-state dump) sets the time. An in-place pause keeps the process alive (no CPU state, no
//! fixed restore costs); a restore on other GPUs pays its system's process, context and replay
//! terms. Dedup shrinks only the bytes on storage: each GPU copies its own state. Each
//! destination (local, storage, migration) chooses its own pause point.

use serde::{Deserialize, Serialize};

use super::params::{JobState, MigrationParams, RestoreCosts};

/// Bytes in a GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Bytes per GB (bandwidths are in GB/s).
pub const GB: f64 = 1e9;

crate::kinds! {
    /// What a pause saves and how.
    pub enum CheckpointOption as "checkpoint option" {
        /// The framework's whole reserved pool, saved when the request arrives (POS-style).
        ReservedPool = "reserved-pool", "reserved pool (POS-style)";
        /// Only the active regions, saved when the request arrives.
        Active = "active", "active memory";
        /// Only the active regions, at the cheapest point within the bounded wait (the low point of
        /// active memory when it can be reached).
        ActiveLowPoint = "active-low-point", "active + low point";
        /// As `active-low-point`, with replicas' identical fixed-size regions saved once.
        ActiveLowPointDedup = "active-low-point-dedup", "active + low point + dedup";
        /// Framework-level checkpoint: model + optimizer at the next iteration boundary, then a
        /// process restart (initialisation + reload).
        Framework = "framework", "framework checkpoint + restart";
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

/// Times of one pause, restore or migration, s, term by term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Waiting for the chosen pause point (or the iteration boundary), s.
    pub wait_s: f64,
    /// Draining in-flight work, s.
    pub drain_s: f64,
    /// Copying GPU state (device↔host, and storage when the image goes there), s.
    pub gpu_copy_s: f64,
    /// Dumping or restoring the CPU state's bytes (in parallel with the GPU copy), s; 0 for an
    /// in-place pause, whose process stays alive.
    pub cpu_state_s: f64,
    /// Re-creating the process from its CPU image (restore on other GPUs only), s.
    pub process_s: f64,
    /// Creating the CUDA context on the destination GPU, s.
    pub context_s: f64,
    /// Re-creating the opaque handles by replay, s.
    pub replay_s: f64,
    /// A framework restart's initialisation (import, context, communicators, data loader), s.
    pub init_s: f64,
}

impl Phases {
    /// End to end: wait, drain, the slower of GPU copy and CPU state, then the fixed terms one
    /// after another.
    #[must_use]
    pub fn total_s(&self) -> f64 {
        self.wait_s + self.drain_s + self.gpu_copy_s.max(self.cpu_state_s) + self.fixed_s()
    }

    /// The fixed terms: process, context, replay, initialisation, s.
    #[must_use]
    pub fn fixed_s(&self) -> f64 {
        self.process_s + self.context_s + self.replay_s + self.init_s
    }
}

/// One option's cost. Each destination has its own pause point: a local pause, a checkpoint
/// to storage and a migration weigh the wait against different copies.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptionCost {
    /// The option.
    pub option: CheckpointOption,
    /// Where in the iteration a local pause saves, s from the iteration start (modulo T).
    pub pause_point_s: f64,
    /// Where a checkpoint to storage saves, s (modulo T).
    pub storage_point_s: f64,
    /// Where a migration saves, s (modulo T).
    pub migrate_point_s: f64,
    /// GPU state the whole job writes to storage at `storage_point_s` (after dedup), bytes.
    pub gpu_image_bytes: f64,
    /// CPU state saved by the whole job with an image to storage, bytes.
    pub cpu_image_bytes: f64,
    /// In-place pause into host memory (local preemption; the process stays alive).
    pub pause: Phases,
    /// Resume of the in-place pause on the same GPUs.
    pub restore: Phases,
    /// Checkpoint to storage (the process is dumped too).
    pub pause_to_storage: Phases,
    /// A migration's pause: to storage, at the migration's point.
    pub migrate_pause: Phases,
    /// A migration's restore: from storage on other GPUs, in a new process.
    pub migrate_restore: Phases,
}

impl OptionCost {
    /// Migration end to end: pause to storage, then restore from storage elsewhere, s.
    #[must_use]
    pub fn migrate_s(&self) -> f64 {
        self.migrate_pause.total_s() + self.migrate_restore.total_s()
    }

    /// The image written to storage, bytes.
    #[must_use]
    pub fn image_bytes(&self) -> f64 {
        self.gpu_image_bytes + self.cpu_image_bytes
    }
}

fn gpus_on_a_node(j: &JobState) -> f64 {
    f64::from(j.gpus.min(j.gpus_per_node))
}

/// Where a pause's image goes, which decides what the pause point minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Host memory of the same node; the process stays alive: minimise wait + pause.
    Local,
    /// Storage (checkpoint): minimise wait + pause to storage.
    Storage,
    /// Storage, then a restore on other GPUs: minimise wait + pause + restore.
    Migration,
}

/// The state to move at one instant: each GPU's own bytes (what its link copies: dedup never
/// shrinks it, every GPU still sends and receives its own state) and the job's bytes on storage
/// (deduplicated when asked).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Image {
    /// Bytes of one GPU.
    pub per_gpu: f64,
    /// Bytes the whole job writes to storage.
    pub job_storage: f64,
}

impl Image {
    fn at(p: &MigrationParams, g: GpuBytes, dedup: bool) -> Image {
        Image {
            per_gpu: g.total(),
            job_storage: job_image_bytes(&p.job, g, dedup, p.options.dedup_identical_fraction),
        }
    }
}

/// In-place pause and resume (host memory, the process alive: no CPU state, no fixed costs).
fn local(p: &MigrationParams, img: Image, wait_s: f64) -> [Phases; 2] {
    let l = &p.links;
    [
        Phases {
            wait_s,
            drain_s: l.drain_s,
            gpu_copy_s: img.per_gpu / (l.d2h_gbps * GB),
            ..Phases::default()
        },
        Phases {
            gpu_copy_s: img.per_gpu / (l.h2d_gbps * GB),
            ..Phases::default()
        },
    ]
}

/// Pause to storage and restore from storage on other GPUs under `sys`'s fixed costs. The
/// node's GPU and CPU images share its storage link, and each copy is a pipeline whose slowest
/// stage sets the time: GPU copy = max(own bytes over the GPU's link, node's storage bytes over
/// the node's storage link); the CPU state's bytes go at `cpu_state_gbps` in parallel.
fn via_storage(p: &MigrationParams, sys: &RestoreCosts, img: Image, wait_s: f64) -> [Phases; 2] {
    let (j, l) = (&p.job, &p.links);
    let on_node = gpus_on_a_node(j);
    let node_gpu = img.job_storage / f64::from(j.gpus) * on_node;
    let cpu = j.cpu_state_gib * GIB;
    let node_bytes = node_gpu + cpu * on_node;
    let pause = Phases {
        wait_s,
        drain_s: l.drain_s,
        gpu_copy_s: (img.per_gpu / (l.d2h_gbps * GB)).max(node_bytes / (l.storage_write_gbps * GB)),
        cpu_state_s: cpu / (l.cpu_state_gbps * GB),
        ..Phases::default()
    };
    let restore = Phases {
        gpu_copy_s: (img.per_gpu / (l.h2d_gbps * GB)).max(node_bytes / (l.storage_read_gbps * GB)),
        cpu_state_s: cpu / (l.cpu_state_gbps * GB),
        process_s: sys.process_restore_s,
        context_s: sys.context_s,
        replay_s: sys.replay_s,
        ..Phases::default()
    };
    [pause, restore]
}

/// What a destination's pause point minimises, at waiting `wait_s` for state `img`.
fn destination_cost(
    p: &MigrationParams,
    sys: &RestoreCosts,
    to: Destination,
    img: Image,
    wait_s: f64,
) -> f64 {
    match to {
        Destination::Local => local(p, img, wait_s)[0].total_s(),
        Destination::Storage => via_storage(p, sys, img, wait_s)[0].total_s(),
        Destination::Migration => {
            let [a, b] = via_storage(p, sys, img, wait_s);
            a.total_s() + b.total_s()
        }
    }
}

/// The pause point within `[request, request + max_wait]` that minimises `to`'s cost, as (point
/// in s from the request's iteration start, wait s). Active memory is piecewise linear in time,
/// so the minimum lies on a breakpoint or an end of the window; waiting past one full iteration
/// never helps (the pattern repeats).
#[must_use]
pub fn choose_pause_point(p: &MigrationParams, dedup: bool, to: Destination) -> (f64, f64) {
    let j = &p.job;
    let sys = &p.systems.flowgpu;
    let it = j.iteration_s;
    let start = p.options.request_at_fraction * it;
    let end = start + p.options.max_wait_s.min(it);
    let cost =
        |t: f64| destination_cost(p, sys, to, Image::at(p, active_at(j, t), dedup), t - start);
    let mut best = (start, 0.0);
    let mut best_cost = cost(start);
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
        let c = cost(t);
        if c < best_cost - 1e-12 {
            best_cost = c;
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
    let modulo = |t: f64| t - libm::floor(t / it) * it;
    let pick = |dedup: bool, to: Destination| match option {
        CheckpointOption::ActiveLowPoint | CheckpointOption::ActiveLowPointDedup => {
            choose_pause_point(p, dedup, to)
        }
        _ => (request, 0.0),
    };
    let state = |t: f64, dedup: bool| match option {
        CheckpointOption::ReservedPool => {
            let pool = (j.reserved_gib * GIB).max(peak_active_bytes(j));
            Image {
                per_gpu: pool,
                job_storage: pool * f64::from(j.gpus),
            }
        }
        _ => Image::at(p, active_at(j, t), dedup),
    };
    let sys = match option {
        CheckpointOption::ReservedPool => &p.systems.pos,
        _ => &p.systems.flowgpu,
    };
    if option == CheckpointOption::Framework {
        return framework(p, request);
    }
    let dedup = option == CheckpointOption::ActiveLowPointDedup;
    let (lp, lw) = pick(dedup, Destination::Local);
    let (sp, sw) = pick(dedup, Destination::Storage);
    let (mp, mw) = pick(dedup, Destination::Migration);
    let [pause, restore] = local(p, state(lp, dedup), lw);
    let [pause_to_storage, _] = via_storage(p, sys, state(sp, dedup), sw);
    let [migrate_pause, migrate_restore] = via_storage(p, sys, state(mp, dedup), mw);
    OptionCost {
        option,
        pause_point_s: modulo(lp),
        storage_point_s: modulo(sp),
        migrate_point_s: modulo(mp),
        gpu_image_bytes: state(sp, dedup).job_storage,
        cpu_image_bytes: j.cpu_state_gib * GIB * f64::from(j.gpus),
        pause,
        restore,
        pause_to_storage,
        migrate_pause,
        migrate_restore,
    }
}

/// The framework-checkpoint baseline: wait for the next iteration boundary, save each shard's
/// model + optimizer state once (data-parallel rank 0 of each shard), restart every process
/// (initialisation), reload every GPU's shard. A local "pause" is the same save into host memory
/// and a restart on the same GPUs.
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
        init_s: p.framework.init_s,
        ..Phases::default()
    };
    let to_storage = Phases {
        gpu_copy_s: save_storage,
        ..pause
    };
    OptionCost {
        option: CheckpointOption::Framework,
        pause_point_s: 0.0,
        storage_point_s: 0.0,
        migrate_point_s: 0.0,
        gpu_image_bytes: image,
        cpu_image_bytes: 0.0,
        pause,
        restore,
        pause_to_storage: to_storage,
        migrate_pause: to_storage,
        migrate_restore: Phases {
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
    evaluate(&sized(p, gpus), option).migrate_s()
}

/// Seconds a preemption of a job of `gpus` GPUs keeps its GPUs busy before another job can use
/// them: the migration's pause to storage alone (sized as [`preemption_cost_s`]).
#[must_use]
pub fn preemption_save_s(p: &MigrationParams, option: CheckpointOption, gpus: u32) -> f64 {
    evaluate(&sized(p, gpus), option).migrate_pause.total_s()
}

/// `p` with its job resized to `gpus` GPUs (model-parallel degree cut to a divisor).
fn sized(p: &MigrationParams, gpus: u32) -> MigrationParams {
    let mut q = p.clone();
    let gpus = gpus.max(1);
    let mut mp = p.job.model_parallel.min(gpus).max(1);
    while !gpus.is_multiple_of(mp) {
        mp -= 1;
    }
    q.job.gpus = gpus;
    q.job.model_parallel = mp;
    q
}
