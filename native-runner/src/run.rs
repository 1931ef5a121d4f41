//! `bubblelab run` and `bubblelab pipeline-log`: produce a Report and print it.

use std::path::{Path, PathBuf};

use bubblelab_core::labs::pipeline::pipemorph::{load_run, MAX_LOG_BYTES};
use bubblelab_core::{Report, Scenario, ScenarioError};
use clap::Args;

use crate::error::Failure;
use crate::files::{self, MAX_INPUT_BYTES};
use crate::{Format, ReportOutput};

/// Arguments of `bubblelab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario JSON file, or `-` to read it from stdin.
    #[arg(
        value_name = "SCENARIO",
        required_unless_present_any = ["preset", "scenario_flag"],
        conflicts_with_all = ["preset", "scenario_flag"]
    )]
    scenario: Option<PathBuf>,
    /// The same scenario file as a flag, as the lab commands take it.
    #[arg(long = "scenario", value_name = "FILE", conflicts_with = "preset")]
    scenario_flag: Option<PathBuf>,
    /// Run a built-in preset instead of a file (list them with `bubblelab presets`).
    #[arg(long, value_name = "ID")]
    preset: Option<String>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Arguments of `bubblelab pipeline-log`.
#[derive(Debug, Args)]
pub struct PipelineLogArgs {
    /// Folder of one PipeMorph run: its per-stage `*.log` files and, optionally, Megatron's
    /// `log.txt`.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Loads the scenario named by a file argument (or `-`) or a preset id; exactly one is given.
///
/// # Errors
/// [`Failure::Input`] naming the file (or preset) and the bad field.
pub fn load_scenario(file: Option<&Path>, preset: Option<&str>) -> Result<Scenario, Failure> {
    match (file, preset) {
        (_, Some(id)) => {
            let preset = crate::presets::find(id)?;
            preset
                .scenario()
                .map_err(|e| Failure::Other(format!("preset {id} is broken: {e}")))
        }
        (Some(path), None) => {
            let name = files::label(path);
            let text = files::read_text(path, MAX_INPUT_BYTES)?;
            Scenario::from_json(&text).map_err(|e| scenario_failure(&name, &e))
        }
        (None, None) => Err(Failure::Input(
            "give a scenario file, `-` for stdin, or --preset <ID>".into(),
        )),
    }
}

/// A scenario error as a failure: bad input names the source; a failed run is not the user's
/// fault.
fn scenario_failure(source: &str, e: &ScenarioError) -> Failure {
    match e {
        ScenarioError::Run(_) => Failure::Other(format!("{source}: {e}")),
        ScenarioError::Syntax { .. } | ScenarioError::Field { .. } => {
            Failure::Input(format!("{source}: {e}"))
        }
    }
}

/// `bubblelab run`.
///
/// # Errors
/// Any [`Failure`] of loading, running or printing.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let file = args.scenario.as_ref().or(args.scenario_flag.as_ref());
    let scenario = load_scenario(file.map(PathBuf::as_path), args.preset.as_deref())?;
    let source = match (&args.preset, file) {
        (Some(id), _) => format!("preset {id}"),
        (None, Some(path)) => files::label(path),
        (None, None) => String::new(),
    };
    let report = match &scenario {
        // The fairness lab's policies run on one thread per core (the Report is the same).
        Scenario::Fairness(params) => {
            let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            scenario
                .validate()
                .and_then(|()| bubblelab_core::labs::fairness::synthetic_trace(params))
                .and_then(|trace| {
                    params.simulate_with(&trace, &mut |_, _| {}, &mut |n, run_one, progress| {
                        crate::fairness::run_on_threads(threads, n, run_one, progress)
                    })
                })
                .map(|s| s.report)
        }
        _ => bubblelab_core::run(&scenario),
    }
    .map_err(|e| scenario_failure(&source, &e))?;
    print_report(&report, &args.output)
}

/// `bubblelab pipeline-log`.
///
/// # Errors
/// [`Failure::Input`] when the folder is unreadable, holds no logs, or a log is malformed
/// (the message names the file and line).
pub fn pipeline_log(args: &PipelineLogArgs) -> Result<(), Failure> {
    let files = read_log_folder(&args.dir)?;
    let run = load_run(&files).map_err(|e| Failure::Input(e.to_string()))?;
    let report = run.report(&args.dir.display().to_string());
    print_report(&report, &args.output)
}

/// Every `*.log` file and `log.txt` in `dir`, sorted by file name, as (path, text).
pub(crate) fn read_log_folder(dir: &Path) -> Result<Vec<(String, String)>, Failure> {
    let name = dir.display().to_string();
    let entries =
        std::fs::read_dir(dir).map_err(|e| files::io_input(&name, "cannot read folder", &e))?;
    let mut paths: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| files::io_input(&name, "cannot read folder", &e))?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        // PipeMorph writes lowercase `.log` files; a `.LOG` is not one of its logs.
        #[allow(clippy::case_sensitive_file_extension_comparisons)]
        let is_log = file_name.ends_with(".log") || file_name == "log.txt";
        if !is_log {
            continue;
        }
        let path = entry.path();
        // Follows symbolic links; folders named `*.log` are skipped.
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            paths.push((file_name, path));
        }
    }
    if paths.is_empty() {
        return Err(Failure::Input(format!(
            "{name}: no `*.log` stage logs or `log.txt` in this folder"
        )));
    }
    paths.sort();
    paths
        .into_iter()
        .map(|(_, path)| {
            let text = files::read_text(&path, MAX_LOG_BYTES)?;
            Ok((path.display().to_string(), text))
        })
        .collect()
}

/// Writes the trace file (if asked) and then prints the Report in the chosen format.
pub(crate) fn print_report(report: &Report, output: &ReportOutput) -> Result<(), Failure> {
    if let Some(path) = &output.trace {
        let trace = bubblelab_core::trace::to_chrome_trace(report);
        files::write_file(path, &trace)?;
    }
    let text = match output.format {
        Format::Text => report.to_text(),
        Format::Json => {
            let mut json = report.to_json_pretty();
            json.push('\n');
            json
        }
        Format::Csv => report.to_csv(),
    };
    files::write_stdout(&text)
}
