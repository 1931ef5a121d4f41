//! `bubblelab compare`: two runs of one lab side by side (metrics with B − A and B / A, the
//! parameters and input files that differ, both runs' curves and timelines).

use std::path::Path;

use bubblelab_core::scenario::InputFile;
use bubblelab_core::{compare, Scenario};
use clap::Args;

use crate::error::Failure;
use crate::ReportOutput;

/// Arguments of `bubblelab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run A: a scenario JSON file, a preset id or a share link.
    #[arg(value_name = "A")]
    a: String,
    /// Run B, as A; without it, B is A edited by `--set`.
    #[arg(value_name = "B")]
    b: Option<String>,
    /// Set a parameter of B, as `bubblelab run --set` does (`micro_batches=16`); repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Read a file into an input slot of both runs, as `bubblelab run --input` does
    /// (`trace=philly.csv`); repeatable.
    #[arg(long = "input", value_name = "SLOT=FILE")]
    input: Vec<String>,
    /// Read a file into an input slot of run A only (a run on a trace against a preset's own
    /// jobs); repeatable.
    #[arg(long = "input-a", value_name = "SLOT=FILE")]
    input_a: Vec<String>,
    /// Read a file into an input slot of run B only; repeatable.
    #[arg(long = "input-b", value_name = "SLOT=FILE")]
    input_b: Vec<String>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// The scenario `given` names: a file, a share link or a preset id (in that order).
fn load(side: &str, given: &str) -> Result<Scenario, Failure> {
    let named = |f: Failure| match f {
        Failure::Input(m) => Failure::Input(format!("{side}: {m}")),
        other => other,
    };
    let path = Path::new(given);
    if path.is_file() || given == "-" {
        return crate::run::load_scenario(Some(path), None).map_err(named);
    }
    if given.contains("?s=") || given.starts_with("s=") {
        return crate::link::decode(given).map_err(named);
    }
    if bubblelab_core::presets::find(given).is_some() {
        return crate::run::load_scenario(None, Some(given)).map_err(named);
    }
    Err(Failure::Input(format!(
        "{side}: `{given}` is not a scenario file, a share link or a preset id (list them with `bubblelab presets`)"
    )))
}

/// `bubblelab compare`.
///
/// # Errors
/// [`Failure::Input`] naming the side (A or B) and the file, link, preset or field; or the
/// labs when A and B are scenarios of different labs.
pub fn compare(args: &CompareArgs) -> Result<(), Failure> {
    let a = load("A", &args.a)?;
    let b = match &args.b {
        Some(given) => load("B", given)?,
        None if args.set.is_empty() => {
            return Err(Failure::Input(
                "give run B, or --set PATH=VALUE to make B from A".into(),
            ))
        }
        None => a.clone(),
    };
    let b = crate::run::with_sets(b, &args.set, "B")?;
    compare::same_lab(&a, &b).map_err(|e| Failure::Input(e.to_string()))?;
    let files_a = side_inputs("A", &args.input, &args.input_a, &a)?;
    let files_b = side_inputs("B", &args.input, &args.input_b, &b)?;
    let run = |side: &str, s: &Scenario, files: &[(String, String, String)]| {
        let inputs: Vec<InputFile<'_>> = files
            .iter()
            .map(|(slot, source, text)| InputFile { slot, source, text })
            .collect();
        bubblelab_core::run_with_inputs(s, &inputs, &mut |_, _| {})
            .map_err(|e| crate::run::scenario_failure(side, &e))
    };
    let (report_a, report_b) = (run("A", &a, &files_a)?, run("B", &b, &files_b)?);
    let report = compare::compare_with_inputs(
        (&a, &report_a, &labels(&files_a)),
        (&b, &report_b, &labels(&files_b)),
    )
    .map_err(|e| Failure::Input(e.to_string()))?;
    crate::run::print_report(&report, &args.output)
}

/// The files one side reads: `--input` for both, then its own `--input-a` / `--input-b`.
fn side_inputs(
    side: &str,
    both: &[String],
    own: &[String],
    scenario: &Scenario,
) -> Result<Vec<(String, String, String)>, Failure> {
    let given: Vec<String> = both.iter().chain(own).cloned().collect();
    let flag = if own.is_empty() {
        "--input".to_string()
    } else {
        format!("--input/--input-{}", side.to_lowercase())
    };
    crate::run::read_inputs(&given, &flag, scenario).map_err(|e| match e {
        Failure::Input(m) => Failure::Input(format!("{side}: {m}")),
        other => other,
    })
}

/// Each file as (slot, `name, N bytes`) for the diff.
fn labels(files: &[(String, String, String)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(slot, name, text)| (slot.clone(), format!("{name}, {} bytes", text.len())))
        .collect()
}
