//! The agentic lab: CONCUR's agent-level admission control against mid-phase KV-cache thrashing
//! in agentic batch inference.
//!
//! [`workload`] holds the agents (and the seeded synthetic generator), [`traces`] reads real
//! request traces into agents, [`params`] the scenario, [`engine`] the serving engine (paged KV,
//! prefix cache with LRU eviction, continuous batching, preemption by recompute),
//! [`controllers`] one file per admission controller, [`sim`] one controller's run, and
//! [`report`] the comparison.

pub mod controllers;
pub mod engine;
pub mod fields;
pub mod fit;
pub mod params;
pub mod report;
pub mod sim;
pub mod traces;
pub mod workload;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::format;
use alloc::vec::Vec;

pub use controllers::{AimdHistoryParams, ClipperAimdParams, ConcurParams, ControllerSpec};
pub use params::{
    AgenticParams, Arrivals, EngineMode, EngineSpec, LatencySlo, ModelSpec, StepTimeFit,
};
pub use sim::{run_controller, ControllerRun};
pub use workload::{Agent, SyntheticSpec, Turn, Workload};

use crate::report::Report;
use crate::scenario::{check_slots, files_in, input_error, InputFile, InputSlot, ScenarioError};

/// Most generated tokens of one workload (bounds a run's work: steps ≥ tokens / batch).
pub const MAX_OUTPUT_TOKENS: u64 = 200_000_000;

/// Runs every chosen controller (and the cap sweep) on the scenario's synthetic agents.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters.
pub fn run(params: &AgenticParams) -> Result<Report, ScenarioError> {
    run_with_progress(params, &mut |_, _| {})
}

/// [`run`], calling `progress(done, total)` as [`run_workload_with_progress`] does. With
/// `params.fit` enabled the synthetic agents' turns are first fitted to the engine-alone batch
/// time ([`fit`]) and the controllers run on the fitted agents.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    params: &AgenticParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.validate()?;
    if !params.fit.enabled() {
        return run_workload_with_progress(params, &workload::generate(&params.synthetic), progress);
    }
    let fit_runs = fit::estimated_runs(params);
    let mut done = 0;
    let outcome = fit::fit_turns(params, &mut || {
        done += 1;
        progress(done.min(fit_runs), fit_runs);
    })?;
    let fitted = AgenticParams {
        synthetic: outcome.synthetic(),
        ..params.clone()
    };
    let work = workload::generate(&fitted.synthetic);
    let mut report = run_workload_with_progress(&fitted, &work, &mut |d, t| {
        progress(fit_runs + d, fit_runs + t);
    })?;
    fit::push(&mut report, &outcome);
    Ok(report)
}

/// Runs every chosen controller (and the cap sweep) on `work` (an uploaded or real trace; the
/// synthetic spec is ignored).
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters or a workload too large or with no agent that
/// fits the engine.
pub fn run_workload(params: &AgenticParams, work: &Workload) -> Result<Report, ScenarioError> {
    run_workload_with_progress(params, work, &mut |_, _| {})
}

/// [`run_workload`], calling `progress(runs done, runs)` before the first and after each
/// controller's and each sweep cap's run (for progress bars); the Report does not depend on it.
///
/// # Errors
/// As [`run_workload`].
pub fn run_workload_with_progress(
    params: &AgenticParams,
    work: &Workload,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.validate_simulation()?;
    let (usable, dropped) = prepare(params, work)?;
    let interval_ns = params.interval_ns();
    let step_objective_ns = params.step_objective_ns();
    let total = params.controllers.len() + params.sweep_caps.len();
    progress(0, total);
    let mut runs = Vec::with_capacity(params.controllers.len());
    for c in &params.controllers {
        runs.push(run_controller(
            &params.engine,
            c,
            &usable,
            interval_ns,
            step_objective_ns,
            params.timeline_agents,
        )?);
        progress(runs.len(), total);
    }
    let mut sweep = Vec::with_capacity(params.sweep_caps.len());
    for &cap in &params.sweep_caps {
        sweep.push(run_controller(
            &params.engine,
            &ControllerSpec::StaticCap { cap },
            &usable,
            interval_ns,
            step_objective_ns,
            0,
        )?);
        progress(runs.len() + sweep.len(), total);
    }
    Ok(report::build(params, &usable, &runs, &sweep, dropped))
}

/// Static caps for a sweep over `agents` agents: powers of two from 1, plus `agents` itself.
#[must_use]
pub fn default_sweep_caps(agents: u32) -> Vec<u32> {
    let mut caps = Vec::new();
    let mut c = 1u32;
    while c < agents && caps.len() < params::MAX_CONTROLLERS - 4 {
        caps.push(c);
        c = c.saturating_mul(2);
    }
    caps.push(agents.max(1));
    caps
}

/// The workload as the engine runs it: arrivals per `params.arrivals`, agents without turns or
/// with a request longer than the KV capacity left out (their count returned).
///
/// # Errors
/// [`ScenarioError::Field`] when the workload is too large or no agent fits.
pub fn prepare(
    params: &AgenticParams,
    work: &Workload,
) -> Result<(Workload, usize), ScenarioError> {
    if work.agents.len() as u64 > u64::from(workload::MAX_AGENTS) {
        return Err(ScenarioError::field(
            "agentic.workload",
            format!(
                "at most {} agents, got {}",
                workload::MAX_AGENTS,
                work.agents.len()
            ),
        ));
    }
    if work.total_turns() > workload::MAX_TURNS_TOTAL {
        return Err(ScenarioError::field(
            "agentic.workload",
            format!(
                "at most {} turns in all, got {}",
                workload::MAX_TURNS_TOTAL,
                work.total_turns()
            ),
        ));
    }
    let output: u64 = work
        .agents
        .iter()
        .flat_map(|a| a.turns.iter())
        .map(|t| t.output_tokens)
        .sum();
    if output > MAX_OUTPUT_TOKENS {
        return Err(ScenarioError::field(
            "agentic.workload",
            format!("at most {MAX_OUTPUT_TOKENS} generated tokens in all, got {output}"),
        ));
    }
    let capacity = params.engine.capacity_blocks() * u64::from(params.engine.block_tokens);
    let mut out = Workload {
        source: work.source.clone(),
        agents: Vec::with_capacity(work.agents.len()),
    };
    for a in &work.agents {
        if a.turns.is_empty() || a.max_sequence_tokens() > capacity {
            continue;
        }
        let mut a = a.clone();
        if params.arrivals == Arrivals::Batch {
            a.arrival_ns = 0;
        }
        out.agents.push(a);
    }
    let dropped = work.agents.len() - out.agents.len();
    if out.agents.is_empty() {
        return Err(ScenarioError::field(
            "agentic.engine.kv_capacity_tokens",
            format!(
                "no agent fits the KV capacity of {capacity} tokens (every agent has a request longer, or no turns)"
            ),
        ));
    }
    Ok((out, dropped))
}

impl crate::scenario::LabParams for AgenticParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run_with_progress(self, progress)
    }

    const INPUTS: &'static [InputSlot] = &[InputSlot {
        name: "trace",
        help: "the agents: a Mooncake conversation trace or an Azure LLM inference trace (format told from its first line)",
        many: false,
        carried: false,
    }];

    fn run_with_inputs(
        &self,
        inputs: &[InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        check_slots::<Self>(inputs)?;
        let Some(file) = files_in(inputs, "trace").next() else {
            return self.run_lab(progress);
        };
        let work = read_trace(file, None)?;
        run_workload_with_progress(self, &work, progress)
    }
}

/// The agents of a trace file in `format`, or in the format its first line shows.
///
/// # Errors
/// [`ScenarioError::Field`] naming the file (and row) when the format cannot be told or the
/// file cannot be read.
pub fn read_trace(
    file: &InputFile<'_>,
    format: Option<traces::TraceFormat>,
) -> Result<Workload, ScenarioError> {
    let Some(format) = format.or_else(|| traces::detect(file.text)) else {
        return Err(input_error(
            file,
            format!(
                "cannot tell the trace format from its first line (it reads {})",
                traces::TraceFormat::IDS.join(", ")
            ),
        ));
    };
    let mut work = traces::parse(format, file.text).map_err(|e| input_error(file, e))?;
    work.source = format!("{}: {}", file.source, work.source);
    Ok(work)
}
