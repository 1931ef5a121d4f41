//! The resilience lab: ResiHP's FLOPs-aware fail-slow detection and joint TP/PP/DP re-plan
//! against doing nothing, checkpoint restart, Oobleck-like pipeline templates, ReCycle-like
//! rerouting and a Greyhound-like detector and escalation, in hybrid-parallel LLM training.
//!
//! [`params`] holds the scenario, [`job`] the training-job model (packed micro-batches, the
//! α·N + β·Σl² compute time, the pipeline lab's 1F1B orders, the kernel's collective costs),
//! [`detect`] one file per detector, [`plan`] one file per strategy, [`sim`] one strategy's run
//! over the horizon, [`report`] the comparison, [`pai`] the real PAI mini-batch traces and
//! [`benchmark`] the labelled fail-slow traces and their scoring.

pub mod benchmark;
pub mod detect;
pub mod fields;
pub mod job;
pub mod pai;
pub mod params;
pub mod plan;
pub mod report;
pub mod sim;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::vec::Vec;

pub use params::{
    ClusterSpec, DetectorSpec, FailureEvent, GreyhoundSpec, LengthSpec, LinkKind, ModelSpec, NoiseSpec,
    PlannerSpec, ResilienceParams,
};
pub use plan::StrategyKind;
pub use sim::{run_strategy, StrategyRun};

use crate::report::Report;
use crate::scenario::{KeepsRuns, ScenarioError, Simulation};

/// Runs do-nothing and every chosen strategy on the scenario's failures and builds the Report.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run(params: &ResilienceParams) -> Result<Report, ScenarioError> {
    run_with_progress(params, &mut |_, _| {})
}

/// [`run`] with progress per strategy ([`KeepsRuns::simulate`]).
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    params: &ResilienceParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.simulate(&(), progress).map(|s| s.report)
}

impl KeepsRuns for ResilienceParams {
    /// The job and its failures come from the parameters.
    type Input = ();
    /// Every strategy's run, do-nothing first.
    type Runs = Vec<StrategyRun>;

    /// Runs do-nothing and every chosen strategy, calling `progress(done, total)` after each.
    fn simulate(
        &self,
        (): &(),
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulation<Vec<StrategyRun>>, ScenarioError> {
        let params = self;
        params.validate()?;
        let job = job::Job::new(params);
        let batches = job::draw_micro_batches(params, params.iterations);
        let kinds = params::strategies_to_run(params);
        let total = kinds.len();
        progress(0, total);
        let mut runs = Vec::with_capacity(total);
        for k in kinds {
            runs.push(run_strategy(&job, params, &batches, k)?);
            progress(runs.len(), total);
        }
        let tokens = f64::from(params.cluster.dp * params.cluster.micro_batches)
            * f64::from(params.lengths.tokens_per_micro_batch);
        Ok(Simulation {
            report: report::build(params, &runs, tokens),
            runs,
        })
    }
}

/// Runs the detectors on a PAI `job_N_norm.csv` text named `source`.
///
/// # Errors
/// [`pai::PaiError`] naming the line and column of a bad value.
pub fn detect_pai(source: &str, text: &str, spec: &DetectorSpec) -> Result<Report, pai::PaiError> {
    let trace = pai::parse(text)?;
    Ok(pai::report(source, &trace, spec))
}

impl crate::scenario::LabParams for ResilienceParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run_with_progress(self, progress)
    }

    const INPUTS: &'static [crate::scenario::InputSlot] = &[crate::scenario::InputSlot {
        name: "pai",
        help: "per-worker mini-batch times, Alibaba PAI style (the detectors run on them)",
        many: false,
        carried: false,
    }];

    /// A PAI file runs the lab's detectors on its workers' times ([`detect_pai`]) instead of
    /// the simulated job.
    fn run_with_inputs(
        &self,
        inputs: &[crate::scenario::InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        crate::scenario::check_slots::<Self>(inputs)?;
        let Some(file) = crate::scenario::files_in(inputs, "pai").next() else {
            return self.run_lab(progress);
        };
        self.validate()?;
        crate::scenario::one_step(progress, || {
            detect_pai(file.source, file.text, &self.detector)
                .map_err(|e| crate::scenario::input_error(file, e))
        })
    }
}
