//! `bubblelab overlap`: Helix against serial, eager and AsyncTP-style on a preset's (or the
//! default) graph or an imported graph JSON, with a Chrome trace holding one timeline per
//! strategy, and sweeps over K and the memory budget.

use std::path::PathBuf;

use bubblelab_core::labs::overlap::sweep::Sweep;
use bubblelab_core::labs::overlap::{self, OverlapParams};
use bubblelab_core::scenario::{InputFile, LabParams};
use bubblelab_core::ScenarioError;
use clap::Args;

use crate::error::Failure;
use crate::files::{self, MAX_INPUT_BYTES};
use crate::ReportOutput;

/// Arguments of `bubblelab overlap`.
#[derive(Debug, Args)]
pub struct OverlapArgs {
    /// Start from this preset (list them with `bubblelab presets`); default: the lab's default
    /// scenario (GPT-3 6.7B, TP=2 + SP, tile K=2 → reorder → bucket).
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "overlap"`) to start from instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Schedule this graph (bubblelab graph JSON, see docs/MODEL.md) instead of a built model.
    #[arg(value_name = "GRAPH")]
    input: Option<PathBuf>,
    /// Deprecated spelling of the positional GRAPH.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with = "input")]
    graph: Option<PathBuf>,
    /// Sweep a parameter: `K=1,2,4` (tile streams) or `budget=8,16` (GiB; `none` for no
    /// budget). Repeat to sweep both; prints one row per combination.
    #[arg(long, value_name = "NAME=V1,V2,…")]
    sweep: Vec<String>,
    /// How to print the Report, and where to write its timelines (one per strategy) as a
    /// Chrome trace.
    #[command(flatten)]
    output: ReportOutput,
}

fn failure(e: &ScenarioError) -> Failure {
    match e {
        ScenarioError::Run(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    }
}

fn base_params(args: &OverlapArgs) -> Result<OverlapParams, Failure> {
    let mut params = if args.preset.is_none() && args.scenario.is_none() {
        OverlapParams::default()
    } else {
        crate::run::lab_params("overlap", args.scenario.as_deref(), args.preset.as_deref())?
    };
    if args.graph.is_some() {
        crate::deprecated("--graph", "the positional GRAPH");
    }
    if let Some(path) = args.input.as_ref().or(args.graph.as_ref()) {
        let name = files::label(path);
        let text = files::read_text(path, MAX_INPUT_BYTES)?;
        let file = InputFile {
            slot: "graph",
            source: &name,
            text: &text,
        };
        params.read_input(&file).map_err(|e| failure(&e))?;
    }
    Ok(params)
}

/// Values of the sweeps: (K values, budget values in GiB, `None` = no budget).
type Sweeps = (Vec<u32>, Vec<Option<f64>>);

fn parse_sweeps(specs: &[String]) -> Result<Option<Sweeps>, Failure> {
    if specs.is_empty() {
        return Ok(None);
    }
    let (mut ks, mut budgets) = (Vec::new(), Vec::new());
    for spec in specs {
        let (name, values) = spec.split_once('=').ok_or_else(|| {
            Failure::Input(format!(
                "--sweep: expected NAME=V1,V2,… (K or budget), got `{spec}`"
            ))
        })?;
        for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
            match name.trim() {
                "K" | "k" => ks.push(
                    v.parse::<u32>()
                        .ok()
                        .filter(|k| (1..=16).contains(k))
                        .ok_or_else(|| {
                            Failure::Input(format!(
                                "--sweep K: expected whole numbers from 1 to 16, got `{v}`"
                            ))
                        })?,
                ),
                "budget" => budgets.push(if v == "none" {
                    None
                } else {
                    Some(
                        v.parse::<f64>()
                            .ok()
                            .filter(|b| b.is_finite() && *b > 0.0)
                            .ok_or_else(|| {
                                Failure::Input(format!(
                                    "--sweep budget: expected positive GiB or `none`, got `{v}`"
                                ))
                            })?,
                    )
                }),
                other => {
                    return Err(Failure::Input(format!(
                        "--sweep: unknown parameter `{other}`; expected K or budget"
                    )))
                }
            }
        }
    }
    Ok(Some((ks, budgets)))
}

fn sweep(base: &OverlapParams, sweeps: Sweeps, output: &ReportOutput) -> Result<(), Failure> {
    let (ks, budgets_gib) = sweeps;
    let bar = crate::progress::bar("sweep points");
    let mut on_progress = |done: usize, total: usize| crate::progress::update(&bar, done, total);
    let report = overlap::sweep::run_sweep(base, &Sweep { ks, budgets_gib }, &mut on_progress);
    bar.finish_and_clear();
    crate::run::print_report(&report.map_err(|e| failure(&e))?, output)
}

/// `bubblelab overlap`.
///
/// # Errors
/// [`Failure::Input`] for a bad flag, preset, graph file or field; [`Failure::Other`] for a
/// failed run or an unwritable output.
pub fn overlap(args: &OverlapArgs) -> Result<(), Failure> {
    let params = base_params(args)?;
    if let Some(sweeps) = parse_sweeps(&args.sweep)? {
        return sweep(&params, sweeps, &args.output);
    }
    let report = overlap::run(&params).map_err(|e| failure(&e))?;
    crate::run::print_report(&report, &args.output)
}
