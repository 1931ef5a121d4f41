//! `bubblelab bubbles`: run the bubbles lab (main job alone, blind colocation, Hydro's Bubble
//! Squeezer, and the tuning job under ASHA or synchronous successive halving) on a preset or scenario, or squeeze the real
//! bubbles of a PipeMorph run (the positional LOG folder), and print the Report.

use std::path::PathBuf;

use bubblelab_core::labs::bubbles::BubblesParams;
use bubblelab_core::labs::bubbles::{self, PolicyKind, TrialPreset, TunerKind};
use bubblelab_core::labs::pipeline::pipemorph::load_run;
use bubblelab_core::ScenarioError;
use clap::Args;

use crate::error::Failure;
use crate::ReportOutput;

/// The preset used with a LOG folder when none is given (A10 memory of PipeMorph's runs).
pub const DEFAULT_LOG_PRESET: &str = "bubbles-pipemorph-a10";

/// Arguments of `bubblelab bubbles`.
#[derive(Debug, Args)]
pub struct BubblesArgs {
    /// Preset to start from (list them with `bubblelab presets`); default
    /// `bubbles-gpt-32gpus-resnet18`, or `bubbles-pipemorph-a10` with a LOG folder.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "bubbles"`) to start from instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// A PipeMorph run folder (`*.log` stage logs, optionally `log.txt`): squeeze its real
    /// bubbles instead of the simulated main job.
    #[arg(value_name = "LOG")]
    input: Option<PathBuf>,
    /// Deprecated spelling of the positional LOG.
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "input")]
    log: Option<PathBuf>,
    /// Trial preset (`resnet18`, `small-gpt`, `gpt2-surrogate`: the tuning lab's fusion model),
    /// overriding the scenario's trial profile.
    #[arg(long, value_name = "ID")]
    trial: Option<String>,
    /// Largest fusion count F, overriding the scenario's.
    #[arg(long, value_name = "F")]
    max_fusion: Option<u32>,
    /// Policies to compare, comma-separated: `none`, `blind`, `squeezer`.
    #[arg(long, value_name = "IDS")]
    policies: Option<String>,
    /// The tuner of the tuning job, overriding the scenario's: `asha` (Hydro's) or `sync-sh`.
    #[arg(long, value_name = "ID")]
    tuner: Option<String>,
    /// Trials of the tuning job, overriding the scenario's.
    #[arg(long, value_name = "N")]
    trials: Option<u32>,
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

/// `bubblelab bubbles`.
///
/// # Errors
/// [`Failure::Input`] naming the field of a bad scenario or flag, or the file and line of a bad
/// log.
pub fn bubbles(args: &BubblesArgs) -> Result<(), Failure> {
    if args.log.is_some() {
        crate::deprecated("--log", "the positional LOG folder");
    }
    let log = args.input.as_ref().or(args.log.as_ref());
    let mut params: BubblesParams = crate::run::lab_params(
        "bubbles",
        args.scenario.as_deref(),
        args.preset.as_deref().or(log.map(|_| DEFAULT_LOG_PRESET)),
    )?;
    if let Some(t) = &args.trial {
        let preset: TrialPreset = t
            .parse()
            .map_err(|e| Failure::Input(format!("--trial: {e}")))?;
        params.trial_preset = preset;
        params.trial = preset.profile();
    }
    if let Some(f) = args.max_fusion {
        params.max_fusion = f;
    }
    if let Some(ids) = &args.policies {
        let mut out = Vec::new();
        for id in ids.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let p: PolicyKind = id
                .parse()
                .map_err(|e| Failure::Input(format!("--policies: {e}")))?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        params.policies = out;
    }
    if let Some(t) = &args.tuner {
        params.hpo.tuner = match t.as_str() {
            "asha" => TunerKind::Asha,
            "sync-sh" => TunerKind::SyncSh,
            _ => {
                return Err(Failure::Input(format!(
                    "--tuner: unknown tuner `{t}`; expected asha or sync-sh"
                )))
            }
        };
    }
    if let Some(n) = args.trials {
        params.hpo.trials = n;
    }
    let report = match log {
        None => bubbles::run(&params).map_err(|e| failure(&e))?,
        Some(dir) => {
            let files = crate::run::read_log_folder(dir)?;
            let run = load_run(&files).map_err(|e| Failure::Input(e.to_string()))?;
            bubbles::run_log(&params, &run, &dir.display().to_string()).map_err(|e| failure(&e))?
        }
    };
    crate::run::print_report(&report, &args.output)
}
