//! `bubblelab resilience`: run the resilience lab (ResiHP's detector and re-plan against doing
//! nothing, checkpoint restart, Oobleck-, ReCycle- and Greyhound-like baselines) on a preset or
//! scenario file; and `bubblelab detect`: run the fail-slow detectors on a real Alibaba PAI
//! mini-batch CSV (`--pai`), write a labelled fail-slow trace in the same columns
//! (`--generate`), or score the detectors' precision, recall and delay on one (`--score`).

use std::path::PathBuf;

use bubblelab_core::labs::resilience::ResilienceParams;
use bubblelab_core::labs::resilience::{self, benchmark, DetectorSpec};
use bubblelab_core::ScenarioError;
use clap::Args;

use crate::error::Failure;
use crate::files;
use crate::ReportOutput;

/// Largest PAI CSV accepted, bytes (256 MiB).
pub const MAX_PAI_BYTES: usize = 256 << 20;

/// Arguments of `bubblelab resilience`.
#[derive(Debug, Args)]
pub struct ResilienceArgs {
    /// Preset to run (list them with `bubblelab presets`); default `resilience-slow-gpu-2x`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "resilience"`) to run instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Arguments of `bubblelab detect`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["pai", "score", "generate"])))]
pub struct DetectArgs {
    /// Alibaba PAI per-worker mini-batch CSV (`job_N_norm.csv`; `-` for stdin).
    #[arg(long, value_name = "FILE")]
    pai: Option<PathBuf>,
    /// Labelled trace (PAI columns plus `slow`, `episode`) to score the detectors on.
    #[arg(long, value_name = "FILE")]
    score: Option<PathBuf>,
    /// Write a generated labelled trace to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    generate: Option<PathBuf>,
    /// Seed of the generated trace.
    #[arg(long, default_value_t = 1, requires = "generate")]
    seed: u64,
    /// Workers of the generated trace.
    #[arg(long, default_value_t = 16, requires = "generate")]
    workers: u32,
    /// Samples per worker of the generated trace.
    #[arg(long, default_value_t = 3000, requires = "generate")]
    samples: u32,
    /// Trigger: a worker above 1 + this × its expected time.
    #[arg(long, default_value_t = 0.25)]
    threshold: f64,
    /// Samples in a row above the trigger before a worker is flagged.
    #[arg(long, default_value_t = 3)]
    persistence: u32,
    /// Warm-up / moving window of samples.
    #[arg(long, default_value_t = 50)]
    window: u32,
    /// How to print the Report.
    #[command(flatten)]
    output: ReportOutput,
}

fn failure(e: &ScenarioError) -> Failure {
    match e {
        ScenarioError::Run(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    }
}

/// `bubblelab resilience`.
///
/// # Errors
/// [`Failure::Input`] for a bad preset, scenario file or field.
pub fn resilience(args: &ResilienceArgs) -> Result<(), Failure> {
    let params: ResilienceParams = crate::run::lab_params(
        "resilience",
        args.scenario.as_deref(),
        args.preset.as_deref(),
    )?;
    let report = resilience::run(&params).map_err(|e| failure(&e))?;
    crate::run::print_report(&report, &args.output)
}

/// `bubblelab detect --pai`.
///
/// # Errors
/// [`Failure::Input`] naming the file, line and column of a bad row, or a bad flag.
pub fn detect(args: &DetectArgs) -> Result<(), Failure> {
    let spec = DetectorSpec {
        threshold: args.threshold,
        persistence: args.persistence,
        window: args.window,
        ..DetectorSpec::default()
    };
    if !(args.threshold.is_finite() && args.threshold > 0.0 && args.threshold <= 10.0) {
        return Err(Failure::Input(format!(
            "--threshold: must be between 0 and 10, got {}",
            args.threshold
        )));
    }
    if args.persistence == 0 || args.window < 5 {
        return Err(Failure::Input(
            "--persistence must be at least 1 and --window at least 5".into(),
        ));
    }
    if let Some(out) = &args.generate {
        let bench = benchmark::BenchmarkSpec {
            seed: args.seed,
            workers: args.workers,
            samples: args.samples,
            ..benchmark::BenchmarkSpec::default()
        };
        let (csv, episodes) =
            benchmark::generate(&bench).map_err(|e| Failure::Input(format!("--{e}")))?;
        if out.as_os_str() == "-" {
            return files::write_stdout(&csv);
        }
        files::write_file(out, &csv)?;
        return files::write_stdout(&format!(
            "wrote {} ({} workers, {} samples, {} labelled episodes)\n",
            out.display(),
            bench.workers,
            bench.samples,
            episodes.len()
        ));
    }
    if let Some(path) = &args.score {
        let name = files::label(path);
        let text = files::read_text(path, MAX_PAI_BYTES)?;
        let report = benchmark::score_report(&name, &text, &spec)
            .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        return crate::run::print_report(&report, &args.output);
    }
    let Some(path) = &args.pai else {
        return Err(Failure::Input(
            "give one of --pai, --score or --generate".into(),
        ));
    };
    let name = files::label(path);
    let text = files::read_text(path, MAX_PAI_BYTES)?;
    let report = resilience::detect_pai(&name, &text, &spec)
        .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
    crate::run::print_report(&report, &args.output)
}
