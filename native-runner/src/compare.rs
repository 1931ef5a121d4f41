//! `bubblelab compare`: two runs of one lab side by side (metrics with B − A and B / A, the
//! parameters that differ, both runs' curves and timelines).

use std::path::Path;

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
    let run = |side: &str, s: &Scenario| {
        bubblelab_core::run(s).map_err(|e| crate::run::scenario_failure(side, &e))
    };
    let (report_a, report_b) = (run("A", &a)?, run("B", &b)?);
    let report = compare::compare(&a, &report_a, &b, &report_b)
        .map_err(|e| Failure::Input(e.to_string()))?;
    crate::run::print_report(&report, &args.output)
}
