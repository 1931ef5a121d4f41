//! Hydro's trial fusion (Trial Binder): F trials of one architecture run as one batched model,
//! every kernel grouped across the F trials.
//!
//! Model (docs/MODEL.md, "Tuning lab"): a step has K kernels; kernel k does `w_k` FLOPs per trial
//! and reaches utilisation `u(w) = w / (w + w_half)` of the GPU's peak when it does w FLOPs, and
//! costs a launch overhead `ℓ`. Fused over F trials a kernel does `F·w_k` FLOPs, so
//!
//! `step(F) = Σ_k [ℓ + F·w_k / (peak · u(F·w_k))] = K·(ℓ + w_half / peak) + F·W / peak`,
//!
//! with `W = Σ_k w_k`: the launch and under-utilisation cost is paid once per step whatever F is,
//! the useful work grows with F. Memory is linear: `base + F · per trial`.

use serde::{Deserialize, Serialize};

use crate::hw::GpuKind;
use crate::trial::TrialProfile;

/// The fusion model's inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FusionParams {
    /// GPU profile (peak BF16 FLOP/s and HBM size).
    pub gpu: GpuKind,
    /// Largest F charted.
    pub max_fusion: u32,
    /// Tokens (or samples) per step of one trial.
    pub batch_tokens: u32,
    /// Launch overhead of one kernel, µs.
    pub launch_overhead_us: f64,
    /// FLOPs one kernel needs to reach half the peak (its work at half utilisation), GFLOP.
    pub half_util_gflop: f64,
    /// Memory a bundle holds whatever F is (CUDA context, workspaces), GiB.
    pub base_gib: f64,
    /// Bytes of training state per parameter (weights, gradients, Adam moments: 4 × FP32 = 16).
    pub bytes_per_param: u32,
    /// Activation bytes per token per surrogate width unit and layer group (a coarse stand-in:
    /// activations ≈ this × width × tokens × weight layers).
    pub activation_bytes_per_unit: u32,
}

impl Default for FusionParams {
    fn default() -> Self {
        FusionParams {
            gpu: GpuKind::H100,
            max_fusion: 16,
            batch_tokens: 4096,
            launch_overhead_us: 5.0,
            half_util_gflop: 2.0,
            base_gib: 1.0,
            bytes_per_param: 16,
            activation_bytes_per_unit: 4,
        }
    }
}

/// The surrogate as the fusion model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurrogateShape {
    /// Parameters of one trial.
    pub params: u64,
    /// Kernels per training step (3 per weight matrix: forward, input- and weight-gradient; 2 per
    /// vector: forward and backward element-wise).
    pub kernels: u32,
    /// Surrogate width (for activations).
    pub width: u32,
    /// Weight-matrix layers (for activations).
    pub matrix_layers: u32,
}

/// One point of the fusion curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionPoint {
    /// Trials fused, F.
    pub f: u32,
    /// Step time of the bundle, s.
    pub step_s: f64,
    /// Trial-steps per second.
    pub trial_steps_per_s: f64,
    /// Throughput over F separate (one-at-a-time) trials: F·step(1) / step(F).
    pub speedup: f64,
    /// Share of the step spent on useful FLOPs at peak.
    pub utilisation: f64,
    /// Memory of the bundle, bytes.
    pub memory_bytes: u64,
    /// Whether the bundle fits the GPU's HBM.
    pub fits: bool,
}

/// The fitted model: `step(F) = fixed + F · per_trial`, `memory(F) = base + F · per_trial`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionModel {
    /// Per-step time paid once per bundle (launches, under-utilisation), s.
    pub fixed_s: f64,
    /// Step time each fused trial adds, s.
    pub per_trial_s: f64,
    /// Memory paid once, bytes.
    pub base_bytes: u64,
    /// Memory each trial adds, bytes.
    pub per_trial_bytes: u64,
    /// HBM of the GPU, bytes.
    pub hbm_bytes: u64,
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl FusionModel {
    /// The model for a surrogate on the chosen GPU.
    #[must_use]
    pub fn new(p: &FusionParams, s: &SurrogateShape) -> FusionModel {
        let g = p.gpu.profile();
        let peak = g.peak_bf16_flops_per_s;
        let work = 6.0 * s.params as f64 * f64::from(p.batch_tokens);
        let activations = u64::from(p.activation_bytes_per_unit)
            * u64::from(s.width)
            * u64::from(p.batch_tokens)
            * u64::from(s.matrix_layers);
        FusionModel {
            fixed_s: f64::from(s.kernels)
                * (p.launch_overhead_us * 1e-6 + p.half_util_gflop * 1e9 / peak),
            per_trial_s: work / peak,
            base_bytes: (p.base_gib * GIB) as u64,
            per_trial_bytes: s
                .params
                .saturating_mul(u64::from(p.bytes_per_param))
                .saturating_add(activations),
            hbm_bytes: g.hbm_bytes,
        }
    }

    /// Bundle step time, s.
    #[must_use]
    pub fn step_s(&self, f: u32) -> f64 {
        self.fixed_s + f64::from(f) * self.per_trial_s
    }

    /// Bundle memory, bytes.
    #[must_use]
    pub fn memory_bytes(&self, f: u32) -> u64 {
        self.base_bytes
            .saturating_add(self.per_trial_bytes.saturating_mul(u64::from(f)))
    }

    /// The point at F.
    #[must_use]
    pub fn point(&self, f: u32) -> FusionPoint {
        let step = self.step_s(f);
        let ff = f64::from(f);
        FusionPoint {
            f,
            step_s: step,
            trial_steps_per_s: if step > 0.0 { ff / step } else { 0.0 },
            speedup: if step > 0.0 {
                ff * self.step_s(1) / step
            } else {
                0.0
            },
            utilisation: if step > 0.0 {
                ff * self.per_trial_s / step
            } else {
                0.0
            },
            memory_bytes: self.memory_bytes(f),
            fits: self.memory_bytes(f) <= self.hbm_bytes,
        }
    }

    /// The model as a bubbles-lab trial profile (exclusive-GPU step time and memory vs F), so the
    /// bubbles lab can squeeze fused surrogate trials.
    #[must_use]
    pub fn trial_profile(&self, name: &str, modules_per_step: u32) -> TrialProfile {
        TrialProfile {
            name: name.into(),
            base_bytes: self.base_bytes,
            per_trial_bytes: self.per_trial_bytes,
            step_fixed_ns: libm::round(self.fixed_s * 1e9) as u64,
            step_per_trial_ns: libm::round(self.per_trial_s * 1e9) as u64,
            modules_per_step: modules_per_step.max(1),
            kernel_sm_activity: 0.8,
            kernel_hbm_activity: 0.5,
        }
    }
}
