//! A bundle of fused tuning trials: its memory and step time against the fusion count F, its
//! pause granularity and its share of a GPU. The bubbles lab runs bundles in pipeline bubbles;
//! the tuning lab's fusion model builds them ([`crate::labs::tuning::gpt2_surrogate_trial_profile`]).

use alloc::string::String;

use serde::{Deserialize, Serialize};

use crate::units::GIB;

/// A fused bundle of F tuning trials of one small surrogate model (Hydro fuses trials that
/// differ only in hyperparameters into one wider model, HFTA-style).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrialProfile {
    /// Display name.
    pub name: String,
    /// Memory the bundle holds whatever F is (CUDA context share, workspaces), bytes.
    pub base_bytes: u64,
    /// Memory each fused trial adds (weights, optimizer state, activations), bytes.
    pub per_trial_bytes: u64,
    /// Step time of a bundle on an exclusive GPU that does not grow with F (launches,
    /// data loading, small kernels), ns.
    pub step_fixed_ns: u64,
    /// Step time each fused trial adds on an exclusive GPU, ns. Step time(F) = fixed + F·per
    /// trial, so throughput F/step(F) rises sub-linearly with F.
    pub step_per_trial_ns: u64,
    /// Modules per step between pause hooks (the bundle can only pause between modules); the
    /// pause granularity is step time(F) / modules.
    pub modules_per_step: u32,
    /// SM activity while the bundle's per-trial kernels run (0–1); the fixed part of a step is
    /// counted as idle SMs, so a bundle's SM activity is this × F·per / step(F).
    pub kernel_sm_activity: f64,
    /// Share of the GPU's HBM bandwidth the per-trial kernels use while they run (0–1); a
    /// bundle's bandwidth share is this × F·per / step(F), as for SMs. This lab's assumption for
    /// every preset (0.5), not a measurement.
    pub kernel_hbm_activity: f64,
}

impl TrialProfile {
    /// A ResNet-18-like CIFAR trial (11.7 M parameters, He et al. 2016). Memory and times are
    /// this lab's assumptions for batch 128 on an A100-class GPU, not measurements: 0.5 GiB
    /// base, 0.75 GiB per trial, 8 ms + 3 ms·F per step, 10 modules per step.
    #[must_use]
    pub fn resnet18() -> TrialProfile {
        TrialProfile {
            name: "ResNet-18-like".into(),
            base_bytes: GIB / 2,
            per_trial_bytes: 3 * GIB / 4,
            step_fixed_ns: 8_000_000,
            step_per_trial_ns: 3_000_000,
            modules_per_step: 10,
            kernel_sm_activity: 0.8,
            kernel_hbm_activity: 0.5,
        }
    }

    /// A small GPT-like trial (6 layers, hidden 512, sequence 512). Assumed: 1 GiB base,
    /// 2 GiB per trial, 20 ms + 9 ms·F per step, 14 modules (embedding, 6 layers, head, ×
    /// forward/backward rounded).
    #[must_use]
    pub fn small_gpt() -> TrialProfile {
        TrialProfile {
            name: "small GPT-like".into(),
            base_bytes: GIB,
            per_trial_bytes: 2 * GIB,
            step_fixed_ns: 20_000_000,
            step_per_trial_ns: 9_000_000,
            modules_per_step: 14,
            kernel_sm_activity: 0.85,
            kernel_hbm_activity: 0.5,
        }
    }

    /// Memory of a bundle of `f` trials, bytes.
    #[must_use]
    pub fn memory_bytes(&self, f: u32) -> u64 {
        self.base_bytes
            .saturating_add(self.per_trial_bytes.saturating_mul(u64::from(f)))
    }

    /// Exclusive-GPU step time of a bundle of `f` trials, ns.
    #[must_use]
    pub fn step_ns(&self, f: u32) -> u64 {
        self.step_fixed_ns
            .saturating_add(self.step_per_trial_ns.saturating_mul(u64::from(f)))
    }

    /// Pause granularity: the time of one module of a bundle of `f` trials, ns (rounded up).
    #[must_use]
    pub fn module_ns(&self, f: u32) -> u64 {
        let m = u64::from(self.modules_per_step.max(1));
        self.step_ns(f).div_ceil(m)
    }

    /// Trial-steps per second of a bundle of `f` trials on an exclusive GPU.
    #[must_use]
    pub fn exclusive_trial_steps_per_s(&self, f: u32) -> f64 {
        let step = self.step_ns(f);
        if step == 0 {
            return 0.0;
        }
        f64::from(f) * 1e9 / step as f64
    }

    /// SM activity of a running bundle of `f` trials (0–1).
    #[must_use]
    pub fn sm_activity(&self, f: u32) -> f64 {
        self.kernel_sm_activity * self.busy_share(f)
    }

    /// HBM-bandwidth share of a running bundle of `f` trials (0–1).
    #[must_use]
    pub fn hbm_activity(&self, f: u32) -> f64 {
        self.kernel_hbm_activity * self.busy_share(f)
    }

    /// Share of a step of `f` trials spent in the per-trial kernels: F·per / step(F).
    fn busy_share(&self, f: u32) -> f64 {
        let step = self.step_ns(f);
        if step == 0 {
            return 0.0;
        }
        (self.step_per_trial_ns as f64 * f64::from(f)) / step as f64
    }

    /// The bundle's share s of the GPU when it runs beside other work: the larger of its SM and
    /// HBM-bandwidth shares (the binding resource), the same single share the kernel's contention
    /// model charges a co-running kernel ([`crate::cost::CostModel::compute_slowdown`],
    /// Calculon's `processor_usage`).
    #[must_use]
    pub fn contention_share(&self, f: u32) -> f64 {
        self.sm_activity(f).max(self.hbm_activity(f))
    }
}

impl Default for TrialProfile {
    fn default() -> Self {
        TrialProfile::resnet18()
    }
}
