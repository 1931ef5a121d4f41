//! Parameters of the pipeline lab.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::schedules::ScheduleKind;
use crate::scenario::ScenarioError;
use crate::units::GIB;

/// Most stages a scenario may ask for (keeps a page responsive).
pub const MAX_STAGES: u32 = 64;
/// Most micro-batches per iteration.
pub const MAX_MICRO_BATCHES: u32 = 1024;
/// Most virtual stages (model chunks) per device for interleaved 1F1B.
pub const MAX_VIRTUAL_STAGES: u32 = 16;
/// Most compute ops one scenario may simulate, summed over its schedules (keeps a page
/// responsive: about half a second natively, see docs/PERFORMANCE.md).
pub const MAX_OPS: u64 = 600_000;
/// Longest duration any single op may take: 1000 s.
pub const MAX_OP_NS: u64 = 1_000_000_000_000;

/// One stage's op times, overriding the uniform ones (e.g. measured on a real run).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageTimes {
    /// Forward pass of one micro-batch through this stage's layers, ns.
    pub forward_ns: u64,
    /// Input-gradient backward (B) of one micro-batch, ns.
    pub backward_input_ns: u64,
    /// Weight-gradient backward (W) of one micro-batch, ns.
    pub backward_weight_ns: u64,
}

/// A pipeline-parallel training iteration to simulate under one or more schedules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineParams {
    /// Schedules to simulate and compare, in display order.
    pub schedules: Vec<ScheduleKind>,
    /// Pipeline stages (devices), p.
    pub stages: u32,
    /// Micro-batches per iteration, m.
    pub micro_batches: u32,
    /// Model chunks per device for interleaved 1F1B, v (each chunk holds 1/v of the layers).
    pub virtual_stages: u32,
    /// Forward pass of one micro-batch through one stage, ns (uniform over stages).
    pub forward_ns: u64,
    /// Input-gradient backward (B) of one micro-batch on one stage, ns. Schedules that do not
    /// split the backward run B and W as one op of `backward_input_ns + backward_weight_ns`.
    pub backward_input_ns: u64,
    /// Weight-gradient backward (W) of one micro-batch on one stage, ns.
    pub backward_weight_ns: u64,
    /// Per-stage times; empty means every stage uses the uniform times above.
    pub stage_times: Vec<StageTimes>,
    /// Per-stage slowdown factor (1.0 = nominal, 2.0 = twice as slow); empty means none.
    pub stage_slowdown: Vec<f64>,
    /// Time to send one micro-batch's activation (or its gradient) to the next stage, ns.
    /// Transfers occupy the link between two stages one at a time.
    pub p2p_ns: u64,
    /// Activation memory one micro-batch holds on one stage from its forward until its backward,
    /// bytes (all the stage's layers; a chunk of interleaved 1F1B holds 1/v of it).
    pub activation_bytes: u64,
    /// Share of a micro-batch's activations that the W pass still needs after B has run
    /// (zero-bubble schedules only). Qi et al. 2024 (§2, Table 1) give M_W ≈ 32·sbh against
    /// M_B = 34·sbh + 5·as²b for one transformer layer, i.e. 0.43 at 5as/h = 40 and up to 0.94
    /// for short sequences; 0.5 is a mid value.
    pub w_memory_fraction: f64,
}

impl Default for PipelineParams {
    fn default() -> Self {
        PipelineParams {
            schedules: vec![
                ScheduleKind::Gpipe,
                ScheduleKind::OneFOneB,
                ScheduleKind::Interleaved,
                ScheduleKind::ZbH1,
            ],
            stages: 4,
            micro_batches: 8,
            virtual_stages: 2,
            forward_ns: 1_000_000,
            backward_input_ns: 1_000_000,
            backward_weight_ns: 1_000_000,
            stage_times: Vec::new(),
            stage_slowdown: Vec::new(),
            p2p_ns: 0,
            activation_bytes: GIB,
            w_memory_fraction: 0.5,
        }
    }
}

fn range_error(field: &str, range: &str, got: impl core::fmt::Display) -> ScenarioError {
    ScenarioError::field(
        format!("pipeline.{field}"),
        format!("must be {range}, got {got}"),
    )
}

impl PipelineParams {
    /// Checks every field; the error names the first bad one.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path and expected range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("pipeline", super::fields::FIELDS, &crate::scenario::to_value(self))?;
        if self.schedules.contains(&ScheduleKind::Interleaved) {
            if self.virtual_stages < 2 {
                return Err(range_error(
                    "virtual_stages",
                    "at least 2 for interleaved 1F1B (with 1 it is plain 1F1B)",
                    self.virtual_stages,
                ));
            }
            if !self.micro_batches.is_multiple_of(self.stages) {
                return Err(range_error(
                    "micro_batches",
                    &format!(
                        "a multiple of stages ({}) for interleaved 1F1B, as in Megatron-LM",
                        self.stages
                    ),
                    self.micro_batches,
                ));
            }
        }
        let dual = self.schedules.contains(&ScheduleKind::DualPipe);
        if dual && !self.stages.is_multiple_of(2) {
            return Err(range_error(
                "stages",
                "even for DualPipe (its two directions meet in the middle; dualpipe.py:332)",
                self.stages,
            ));
        }
        if dual && !self.micro_batches.is_multiple_of(2) {
            return Err(range_error(
                "micro_batches",
                "even for DualPipe (half enter at each end; dualpipe.py:333)",
                self.micro_batches,
            ));
        }
        let needs_2p = dual || self.schedules.contains(&ScheduleKind::DualPipeV);
        if needs_2p && self.micro_batches < 2 * self.stages {
            return Err(range_error(
                "micro_batches",
                &format!(
                    "at least 2·stages ({}) for DualPipe and DualPipeV (dualpipe.py:333, dualpipev.py:318)",
                    2 * self.stages
                ),
                self.micro_batches,
            ));
        }
        let ops: u64 = self
            .schedules
            .iter()
            .map(|k| k.op_count(self.stages, self.micro_batches, self.virtual_stages))
            .sum();
        if ops > MAX_OPS {
            return Err(range_error(
                "micro_batches",
                &format!("small enough that the schedules run at most {MAX_OPS} ops in all"),
                format!("{} (that is {ops} ops)", self.micro_batches),
            ));
        }
        if !self.stage_times.is_empty() && self.stage_times.len() != self.stages as usize {
            return Err(ScenarioError::field(
                "pipeline.stage_times",
                format!(
                    "must be empty or have one entry per stage ({}), got {}",
                    self.stages,
                    self.stage_times.len()
                ),
            ));
        }
        for (i, t) in self.stage_times.iter().enumerate() {
            for (field, v) in [
                ("forward_ns", t.forward_ns),
                ("backward_input_ns", t.backward_input_ns),
                ("backward_weight_ns", t.backward_weight_ns),
            ] {
                if v > MAX_OP_NS {
                    return Err(range_error(
                        &format!("stage_times[{i}].{field}"),
                        &format!("at most {MAX_OP_NS} (1000 s)"),
                        v,
                    ));
                }
            }
        }
        if !self.stage_slowdown.is_empty() && self.stage_slowdown.len() != self.stages as usize {
            return Err(ScenarioError::field(
                "pipeline.stage_slowdown",
                format!(
                    "must be empty or have one factor per stage ({}), got {}",
                    self.stages,
                    self.stage_slowdown.len()
                ),
            ));
        }
        for (i, f) in self.stage_slowdown.iter().enumerate() {
            if !(f.is_finite() && *f >= 0.01 && *f <= 100.0) {
                return Err(range_error(
                    &format!("stage_slowdown[{i}]"),
                    "between 0.01 and 100",
                    f,
                ));
            }
        }
        Ok(())
    }

    /// The op times of `stage` after its slowdown factor, ns: (forward, B, W).
    #[must_use]
    pub fn stage_op_ns(&self, stage: usize) -> (f64, f64, f64) {
        let base = self.stage_times.get(stage).copied().unwrap_or(StageTimes {
            forward_ns: self.forward_ns,
            backward_input_ns: self.backward_input_ns,
            backward_weight_ns: self.backward_weight_ns,
        });
        let factor = self.stage_slowdown.get(stage).copied().unwrap_or(1.0);
        (
            base.forward_ns as f64 * factor,
            base.backward_input_ns as f64 * factor,
            base.backward_weight_ns as f64 * factor,
        )
    }

    /// True when every stage runs the same times with no slowdown and P2P is free: the case the
    /// closed-form bubble formulas describe.
    #[must_use]
    pub fn is_uniform(&self) -> bool {
        let first = self.stage_op_ns(0);
        self.p2p_ns == 0 && (1..self.stages as usize).all(|s| self.stage_op_ns(s) == first)
    }
}
