//! `bubblelab migration`: the migration lab's cost model on a preset or scenario file. The
//! real mechanism it models is `bubblelab checkpoint-demo` (`checkpoint_demo.rs`).

use std::path::PathBuf;

use bubblelab_core::labs::migration;
use bubblelab_core::labs::migration::MigrationParams;
use bubblelab_core::ScenarioError;
use clap::Args;

use crate::error::Failure;
use crate::ReportOutput;

/// Arguments of `bubblelab migration`.
#[derive(Debug, Args)]
pub struct MigrationArgs {
    /// Preset to run (list them with `bubblelab presets`); default `migration-7b-tp2-dp4-one-node`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "migration"`) to run instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// `bubblelab migration`.
///
/// # Errors
/// [`Failure::Input`] for a bad preset, scenario file or field.
pub fn migration(args: &MigrationArgs) -> Result<(), Failure> {
    let params: MigrationParams = crate::run::lab_params(
        "migration",
        args.scenario.as_deref(),
        args.preset.as_deref(),
    )?;
    let report = migration::run(&params).map_err(|e| match e {
        ScenarioError::Run(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    })?;
    crate::run::print_report(&report, &args.output)
}
