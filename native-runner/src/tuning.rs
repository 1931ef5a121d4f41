//! `bubblelab tuning`: run the tuning lab (μP shrinker, the μTransfer experiment — real MLP
//! training at several widths under SP and μP — and the trial-fusion model) on a preset or a
//! scenario file, with a progress bar over the training runs.

use std::path::PathBuf;

use bubblelab_core::labs::tuning;
use bubblelab_core::labs::tuning::TuningParams;
use bubblelab_core::ScenarioError;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Failure;
use crate::ReportOutput;

/// Arguments of `bubblelab tuning`.
#[derive(Debug, Args)]
pub struct TuningArgs {
    /// Preset to run (list them with `bubblelab presets`); default `tuning-mutransfer-mlp`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "tuning"`) to run instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Override the experiment's widths (comma-separated, ascending), e.g. `64,128,256,512,1024`.
    #[arg(long, value_delimiter = ',', value_name = "N,N,…")]
    widths: Option<Vec<u32>>,
    /// Override the optimizer steps per training run.
    #[arg(long)]
    steps: Option<u32>,
    /// Override the seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the training runs per width and rate (each its own initial weights and
    /// batches); the curves show the mean held-out loss.
    #[arg(long)]
    seeds: Option<u32>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

fn failure(e: &ScenarioError) -> Failure {
    match e {
        ScenarioError::Run(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    }
}

/// `bubblelab tuning`.
///
/// # Errors
/// [`Failure::Input`] for a bad preset, scenario file, flag or field.
pub fn tuning(args: &TuningArgs) -> Result<(), Failure> {
    let mut params: TuningParams =
        crate::run::lab_params("tuning", args.scenario.as_deref(), args.preset.as_deref())?;
    if let Some(w) = &args.widths {
        params.experiment.widths.clone_from(w);
    }
    if let Some(s) = args.steps {
        params.experiment.steps = s;
    }
    if let Some(s) = args.seed {
        params.experiment.seed = s;
    }
    if let Some(s) = args.seeds {
        params.experiment.seeds = s;
    }
    params.validate().map_err(|e| failure(&e))?;
    let runs = 2
        * params.experiment.widths.len()
        * params.experiment.learning_rates.len()
        * params.experiment.seeds as usize;
    let bar = ProgressBar::with_draw_target(Some(runs as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} training runs {elapsed}")
    {
        bar.set_style(style);
    }
    let report = tuning::run_with_progress(&params, &mut |done, _| bar.set_position(done as u64))
        .map_err(|e| failure(&e))?;
    bar.finish_and_clear();
    crate::run::print_report(&report, &args.output)
}
