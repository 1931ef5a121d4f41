//! The tuning lab: Hydro's tuning side (Hu et al., OSDI 2023) — shrink the target model's width,
//! re-parametrize it with μP so the surrogate's best hyperparameters transfer, and fuse many
//! small trials into one batched model.
//!
//! [`mup`] holds the shrinker and the μP rules per layer class, [`mlp`] a real MLP trainer
//! (forward, backward, SGD/Adam), [`experiment`] the learning-rate sweep per width under SP and
//! μP, [`fusion`] the throughput and memory model of fused trials, [`params`] the scenario and
//! [`report`] the Report.

pub mod experiment;
pub mod fields;
pub mod fusion;
pub mod mlp;
pub mod mup;
pub mod params;
pub mod report;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

pub use fusion::{FusionModel, FusionParams, SurrogateShape};
pub use mlp::{Optimizer, Parametrization};
pub use mup::{LayerClass, LayerSpec, MupRule, ShrinkerParams};
pub use params::{ExperimentParams, TuningParams};

use crate::report::Report;
use crate::scenario::ScenarioError;

/// Runs the shrinker, the μTransfer experiment and the fusion model.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run(params: &TuningParams) -> Result<Report, ScenarioError> {
    run_with_progress(params, &mut |_, _| {})
}

/// [`run`], calling `progress(done, total)` after each training run of the experiment.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run_with_progress(
    params: &TuningParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.validate()?;
    let layers = mup::shrink(&params.shrinker)?;
    let outcome = experiment::run(&params.experiment, progress);
    let shape = surrogate_shape(&layers);
    let model = FusionModel::new(&params.fusion, &shape);
    Ok(report::build(params, &layers, &outcome, &shape, &model))
}

/// The surrogate's size and kernel count for the fusion model.
#[must_use]
pub fn surrogate_shape(layers: &[mup::ShrunkLayer]) -> SurrogateShape {
    let mut s = SurrogateShape {
        params: 0,
        kernels: 0,
        width: 0,
        matrix_layers: 0,
    };
    for l in layers {
        let r = l.surrogate.repeat;
        s.params = s.params.saturating_add(l.surrogate.params());
        match l.target.class {
            LayerClass::Norm | LayerClass::Bias => s.kernels = s.kernels.saturating_add(2 * r),
            _ => {
                s.kernels = s.kernels.saturating_add(3 * r);
                s.matrix_layers = s.matrix_layers.saturating_add(r);
            }
        }
        let w = match l.target.class {
            LayerClass::Embedding => l.surrogate.fan_out,
            LayerClass::Readout => l.surrogate.fan_in,
            _ => 0,
        };
        s.width = s.width.max(w);
    }
    s
}

/// The bubbles-lab trial profile of a tuning scenario's surrogate under the fusion model:
/// memory(F) and step time(F) come from [`FusionModel`] instead of assumed numbers.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn fused_trial_profile(
    params: &TuningParams,
) -> Result<crate::trial::TrialProfile, ScenarioError> {
    params.validate()?;
    Ok(profile_of(&params.shrinker, &params.fusion))
}

/// The bubbles lab's `gpt2-surrogate` trial preset: the tuning lab's default surrogate (GPT-2
/// small ÷8, [`ShrinkerParams::default`]) under the default fusion model on an A100 80GB, the
/// bubbles lab's GPU — [`fused_trial_profile`] of those parameters.
#[must_use]
pub fn gpt2_surrogate_trial_profile() -> crate::trial::TrialProfile {
    profile_of(
        &ShrinkerParams::default(),
        &FusionParams {
            gpu: crate::hw::GpuKind::A100,
            ..FusionParams::default()
        },
    )
}

fn profile_of(
    shrinker: &ShrinkerParams,
    fusion: &FusionParams,
) -> crate::trial::TrialProfile {
    let shape = surrogate_shape(&mup::shrink_valid(shrinker));
    let model = FusionModel::new(fusion, &shape);
    let name = alloc::format!(
        "{} ÷{} surrogate (fusion model, {})",
        shrinker.model,
        shrinker.ratio,
        fusion.gpu.label()
    );
    model.trial_profile(&name, shape.matrix_layers.clamp(1, 64))
}

impl crate::scenario::LabParams for TuningParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run_with_progress(self, progress)
    }
}
