//! The bubbles lab: Hydro's Bubble Squeezer fills pipeline bubbles with fused, pausable tuning
//! trials without slowing the main job.
//!
//! [`params`] holds the scenario, [`windows`] the main job's timeline (simulated by the pipeline
//! lab or read from a PipeMorph log) and its bubble windows, [`policies`] one file per policy
//! (none, blind colocation, the squeezer), [`hpo`] the cluster-level tuning job, and [`report`]
//! the comparison.

pub mod hpo;
pub mod fields;
pub mod params;
pub mod policies;
pub mod report;
pub mod windows;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::format;
use alloc::vec::Vec;

pub use params::{BubblesParams, BundleRule, HpoParams, PolicyKind, TrialPreset, TunerKind};
pub use policies::{Outcome, PolicyRun};
pub use windows::{MainTimeline, Window};

use crate::labs::pipeline::pipemorph::PipelineRun;
use crate::labs::pipeline::run_schedule;
use crate::report::Report;
use crate::scenario::ScenarioError;

/// Runs every chosen policy on the simulated main job, and the tuning job.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid parameters; [`ScenarioError::Run`] if the schedule
/// deadlocks.
pub fn run(params: &BubblesParams) -> Result<Report, ScenarioError> {
    params.validate()?;
    let kind = params.schedule();
    let alone_run = run_schedule(&params.main, kind)?;
    let alone = MainTimeline::from_schedule(&alone_run, params);
    check_fits(&alone, params)?;
    let mut runs = Vec::new();
    for &p in &params.policies {
        runs.push(match p {
            PolicyKind::None => policies::none::run(&alone, params),
            PolicyKind::Blind => {
                let fusion = policies::blind::fusion_per_stage(&alone, params);
                let factors = policies::blind::stage_factors(&fusion, params);
                let mut slowed = params.main.clone();
                slowed.stage_slowdown = factors
                    .iter()
                    .enumerate()
                    .map(|(d, f)| params.main.stage_slowdown.get(d).copied().unwrap_or(1.0) * f)
                    .collect();
                let slowed_run = run_schedule(&slowed, kind)?;
                let slowed_main = MainTimeline::from_schedule(&slowed_run, params);
                policies::blind::run(&slowed_main, params, &fusion)
            }
            PolicyKind::Squeezer => policies::squeezer::run(&alone, params, params.max_fusion),
        });
    }
    let rates = bubble_rates(&alone, params, params.hpo.stages);
    let hpo = hpo::run(params, &rates);
    let sweep = hpo::sweep(params, &rates);
    let title = format!(
        "Bubble Squeezer: {} p={} m={}, {} trials (F ≤ {})",
        kind.label_with(params.main.virtual_stages),
        params.main.stages,
        params.main.micro_batches,
        params.trial.name,
        params.max_fusion
    );
    Ok(report::build(
        params, &alone, &runs, &hpo, &sweep, title, None,
    ))
}

/// What the lab calls a run read from stage logs, by the first file's name.
#[must_use]
pub fn log_source(first_file: &str) -> alloc::string::String {
    format!("{first_file} and the other stage logs")
}

/// Runs the squeezer (and the main job alone) on the real bubbles of a PipeMorph run; the main
/// job's memory comes from `params` (static bytes, activation bytes per micro-batch, GPU
/// capacity). Blind colocation is not run: the real run cannot be re-timed.
///
/// # Errors
/// [`ScenarioError::Field`] for invalid guest parameters or a log without a complete iteration.
pub fn run_log(
    params: &BubblesParams,
    log: &PipelineRun,
    name: &str,
) -> Result<Report, ScenarioError> {
    params.validate_guest()?;
    let main = MainTimeline::from_log(log, params);
    if main.iterations() == 0 || main.span_ns() == 0 {
        return Err(ScenarioError::field(
            "bubbles.log",
            "the log has no complete iteration (every rank needs as many F as B records)",
        ));
    }
    check_fits(&main, params)?;
    let mut params = params.clone();
    params.hpo.stages = params.hpo.stages.min(main.stages);
    let runs = [
        policies::none::run(&main, &params),
        policies::squeezer::run(&main, &params, params.max_fusion),
    ];
    let rates = bubble_rates(&main, &params, params.hpo.stages);
    let hpo = hpo::run(&params, &rates);
    let sweep = hpo::sweep(&params, &rates);
    let title = format!(
        "Bubble Squeezer on PipeMorph log {name}: {} stages, {} complete iterations, {} trials (F ≤ {})",
        main.stages,
        main.iterations(),
        params.trial.name,
        params.max_fusion
    );
    Ok(report::build(
        &params,
        &main,
        &runs,
        &hpo,
        &sweep,
        title,
        Some(log),
    ))
}

/// The main job alone must fit its GPUs: static bytes + peak activations + reserve ≤ capacity.
fn check_fits(main: &MainTimeline, params: &BubblesParams) -> Result<(), ScenarioError> {
    for d in 0..main.stages as usize {
        let peak = main.peak_memory(d, 0, main.span_ns().max(1));
        let need = peak.saturating_add(params.reserve_bytes);
        if need > params.gpu_memory_bytes {
            return Err(ScenarioError::field(
                "bubbles.gpu_memory_bytes",
                format!(
                    "the main job alone needs {need} bytes on stage {d} (static + peak activations + reserve), more than the GPU's {}",
                    params.gpu_memory_bytes
                ),
            ));
        }
    }
    Ok(())
}

/// Squeezer rate of each of the first `stages` stages with bundles of at most b trials, for
/// b = 1 ..= `max_fusion`: trial-steps per ns of one GPU.
#[must_use]
pub fn bubble_rates(main: &MainTimeline, params: &BubblesParams, stages: u32) -> Vec<Vec<f64>> {
    let ws = windows::windows(main, params);
    let span = main.span_ns().max(1) as f64;
    let per_step = f64::from(params.trial.modules_per_step.max(1));
    (0..stages)
        .map(|d| {
            (1..=params.max_fusion)
                .map(|b| {
                    let steps: f64 = ws
                        .iter()
                        .filter(|w| w.stage == d)
                        .map(|w| match policies::squeezer::decide(w, params, b) {
                            Outcome::Used { fusion, modules } => {
                                f64::from(fusion) * modules as f64 / per_step
                            }
                            _ => 0.0,
                        })
                        .sum();
                    steps / span
                })
                .collect()
        })
        .collect()
}

impl crate::scenario::LabParams for BubblesParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        crate::scenario::one_step(progress, || run(self))
    }

    const INPUTS: &'static [crate::scenario::InputSlot] =
        &[crate::labs::pipeline::pipemorph::STAGE_LOGS];

    /// A measured run's stage logs take the simulated job's place ([`run_log`]).
    fn run_with_inputs(
        &self,
        inputs: &[crate::scenario::InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        crate::scenario::check_slots::<Self>(inputs)?;
        match crate::labs::pipeline::pipemorph::read_stage_logs(inputs)? {
            None => self.run_lab(progress),
            Some((log, first)) => crate::scenario::one_step(progress, || {
                run_log(self, &log, &log_source(&first))
            }),
        }
    }

    /// A trial preset without explicit numbers brings its profile.
    fn from_params(lab: &str, value: serde_json::Value) -> Result<Self, ScenarioError> {
        let explicit_trial = value.get("trial").is_some();
        let mut p: BubblesParams = crate::scenario::params_from_value(lab, value)?;
        if !explicit_trial {
            p.trial = p.trial_preset.profile();
        }
        Ok(p)
    }
}
