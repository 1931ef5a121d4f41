//! Parameters of the tuning lab: the model to shrink, the μTransfer experiment, and the fusion
//! model.

use alloc::format;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::fusion::FusionParams;
use super::mlp::{Optimizer, Parametrization, RunSpec, Task};
use super::mup::ShrinkerParams;
use crate::scenario::ScenarioError;

/// Most widths in one sweep.
pub const MAX_WIDTHS: usize = 8;
/// Most learning rates in one sweep.
pub const MAX_LEARNING_RATES: usize = 32;
/// Widest student.
pub const MAX_WIDTH: u32 = 4096;
/// Most training FLOPs of one experiment (all widths, rates and both parametrizations): bounds a
/// run to minutes natively and keeps a page from hanging on a typo.
pub const MAX_EXPERIMENT_FLOPS: f64 = 5e12;
/// Largest fusion count charted.
pub const MAX_FUSION: u32 = 256;

/// The μTransfer experiment: train students at several widths over a learning-rate grid,
/// under SP and under μP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExperimentParams {
    /// Student widths n, ascending.
    pub widths: Vec<u32>,
    /// Width at which μP equals SP; 0 = the smallest width.
    pub base_width: u32,
    /// Hidden n×n matmuls of the student.
    pub hidden_layers: u32,
    /// SGD or Adam.
    pub optimizer: Optimizer,
    /// Learning-rate grid η, ascending (one grid step = one entry).
    pub learning_rates: Vec<f64>,
    /// Optimizer steps per run.
    pub steps: u32,
    /// Samples per step.
    pub batch: u32,
    /// Held-out samples.
    pub eval_samples: u32,
    /// Training runs per width and rate, each with its own initial weights and batches (same
    /// teacher and held-out set); the curves show the mean held-out loss over them.
    pub seeds: u32,
    /// Input dimension of the task.
    pub input_dim: u32,
    /// Output dimension of the task.
    pub output_dim: u32,
    /// Hidden units of the teacher network.
    pub teacher_width: u32,
    /// Seed of the teacher, data and initialisations.
    pub seed: u64,
}

impl Default for ExperimentParams {
    fn default() -> Self {
        ExperimentParams {
            widths: alloc::vec![32, 64, 128, 256],
            base_width: 0,
            hidden_layers: 1,
            optimizer: Optimizer::Adam,
            learning_rates: (0..10).map(|k| libm::exp2(f64::from(-12 + k))).collect(),
            steps: 60,
            batch: 16,
            eval_samples: 256,
            seeds: 1,
            input_dim: 16,
            output_dim: 4,
            teacher_width: 32,
            seed: 2022,
        }
    }
}

impl ExperimentParams {
    /// The task.
    #[must_use]
    pub fn task(&self) -> Task {
        Task {
            input_dim: self.input_dim,
            output_dim: self.output_dim,
            teacher_width: self.teacher_width,
            seed: self.seed,
        }
    }

    /// The base width in force.
    #[must_use]
    pub fn base(&self) -> u32 {
        if self.base_width == 0 {
            self.widths.iter().copied().min().unwrap_or(1)
        } else {
            self.base_width
        }
    }

    /// The run at one width, parametrization and learning rate.
    #[must_use]
    pub fn run_spec(&self, width: u32, p: Parametrization, learning_rate: f64) -> RunSpec {
        self.replica_spec(width, p, learning_rate, 0)
    }

    /// [`ExperimentParams::run_spec`] of replica `replica` (< `seeds`).
    #[must_use]
    pub fn replica_spec(
        &self,
        width: u32,
        p: Parametrization,
        learning_rate: f64,
        replica: u32,
    ) -> RunSpec {
        RunSpec {
            width,
            base_width: self.base(),
            hidden_layers: self.hidden_layers,
            parametrization: p,
            optimizer: self.optimizer,
            learning_rate,
            steps: self.steps,
            batch: self.batch,
            eval_samples: self.eval_samples,
            replica,
        }
    }

    /// Training FLOPs of the whole experiment.
    #[must_use]
    pub fn total_flops(&self) -> f64 {
        let task = self.task();
        let per_width: f64 = self
            .widths
            .iter()
            .map(|&w| {
                let s = self.run_spec(w, Parametrization::Sp, 1.0);
                super::mlp::step_flops(&task, &s) * f64::from(self.steps)
            })
            .sum();
        2.0 * per_width * self.learning_rates.len() as f64 * f64::from(self.seeds)
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `tuning.experiment.<field>`.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        super::fields::check_part("experiment", self)?;
        let f = |name: &str, msg: alloc::string::String| {
            Err(ScenarioError::field(
                format!("tuning.experiment.{name}"),
                msg,
            ))
        };
        if self.widths.is_empty() || self.widths.len() > MAX_WIDTHS {
            return f(
                "widths",
                format!(
                    "must list between 1 and {MAX_WIDTHS} widths, got {}",
                    self.widths.len()
                ),
            );
        }
        for (i, &w) in self.widths.iter().enumerate() {
            if !(1..=MAX_WIDTH).contains(&w) {
                return f(
                    &format!("widths[{i}]"),
                    format!("must be between 1 and {MAX_WIDTH}, got {w}"),
                );
            }
            if i > 0 && w <= self.widths[i - 1] {
                return f(
                    &format!("widths[{i}]"),
                    format!("widths must ascend, got {w} after {}", self.widths[i - 1]),
                );
            }
        }
        if self.learning_rates.is_empty() || self.learning_rates.len() > MAX_LEARNING_RATES {
            return f(
                "learning_rates",
                format!(
                    "must list between 1 and {MAX_LEARNING_RATES} rates, got {}",
                    self.learning_rates.len()
                ),
            );
        }
        for (i, &lr) in self.learning_rates.iter().enumerate() {
            if !(lr.is_finite() && lr > 0.0 && lr <= 100.0) {
                return f(
                    &format!("learning_rates[{i}]"),
                    format!("must be above 0 and at most 100, got {lr}"),
                );
            }
            if i > 0 && lr <= self.learning_rates[i - 1] {
                return f(
                    &format!("learning_rates[{i}]"),
                    format!(
                        "rates must ascend, got {lr} after {}",
                        self.learning_rates[i - 1]
                    ),
                );
            }
        }
        let flops = self.total_flops();
        if flops > MAX_EXPERIMENT_FLOPS {
            return f(
                "steps",
                format!(
                    "the experiment would need {flops:.3e} training FLOPs, more than the {MAX_EXPERIMENT_FLOPS:.0e} allowed: fewer widths, rates or steps"
                ),
            );
        }
        Ok(())
    }
}

/// The tuning lab's scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TuningParams {
    /// The target model and shrink ratio.
    pub shrinker: ShrinkerParams,
    /// The μTransfer experiment.
    pub experiment: ExperimentParams,
    /// The fusion model.
    pub fusion: FusionParams,
}

impl TuningParams {
    /// Checks every parameter; the error names the first bad field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `tuning.<path>`.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("tuning", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        self.shrinker.validate()?;
        self.experiment.validate()
    }
}
