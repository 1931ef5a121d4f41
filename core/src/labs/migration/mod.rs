//! The migration lab: FlowGPU's pause/resume/migrate primitive as a cost model. What a
//! transparent pause must save (the framework's reserved pool, or only active memory, at the
//! low point of an iteration, with replicas' identical regions saved once), how long pause,
//! restore and migration take over the device→host link and storage with CPU state in parallel,
//! against a framework-level checkpoint and process restart.
//!
//! [`params`] holds the scenario, [`model`] the cost model (and the function the fairness lab
//! calls for its preemption cost), [`report`] the comparison.

pub mod fields;
pub mod model;
pub mod params;
pub mod report;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

pub use model::{
    evaluate, preemption_cost_s, preemption_save_s, CheckpointOption, OptionCost, Phases,
};
pub use params::{
    FrameworkCheckpoint, JobState, Links, MigrationParams, PauseOptions, PreemptionModel,
    RestoreCosts, Systems,
};

use crate::report::Report;
use crate::scenario::ScenarioError;

/// Costs every option and builds the comparison Report.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run(params: &MigrationParams) -> Result<Report, ScenarioError> {
    params.validate()?;
    let costs: alloc::vec::Vec<OptionCost> = CheckpointOption::ALL
        .iter()
        .map(|&o| evaluate(params, o))
        .collect();
    Ok(report::build(params, &costs))
}

impl crate::scenario::LabParams for MigrationParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        crate::scenario::one_step(progress, || run(self))
    }
}
