//! `bubblelab overlap`: Helix against serial, eager and AsyncTP-style on a preset's (or the
//! default) graph or an imported graph JSON, with a Chrome trace holding one timeline per
//! strategy, and sweeps over K and the memory budget.

use std::path::PathBuf;

use bubblelab_core::labs::overlap::{self, OverlapParams, PassSpec};
use bubblelab_core::report::{format_number, Cell, Report, Table};
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
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Failure::Input(format!(
                "{name}: not valid JSON at line {}, column {}",
                e.line(),
                e.column()
            ))
        })?;
        bubblelab_core::graph::json::from_value(&value)
            .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        params.graph = Some(value);
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

/// The params with tile K and bucket budget replaced (passes added if missing).
#[allow(clippy::option_option)] // budget: None = keep the scenario's, Some(None) = no budget
fn with_point(base: &OverlapParams, k: Option<u32>, budget: Option<Option<f64>>) -> OverlapParams {
    let mut p = base.clone();
    if let Some(k) = k {
        if !p.passes.iter().any(|x| matches!(x, PassSpec::Tile { .. })) {
            p.passes.insert(
                0,
                PassSpec::Tile {
                    k,
                    dim: bubblelab_core::graph::Dim::Batch,
                },
            );
        }
        for pass in &mut p.passes {
            if let PassSpec::Tile { k: kk, .. } = pass {
                *kk = k;
            }
        }
    }
    if let Some(b) = budget {
        if !p
            .passes
            .iter()
            .any(|x| matches!(x, PassSpec::Bucket { .. }))
        {
            p.passes.push(PassSpec::Bucket {
                memory_budget_gib: b,
            });
        }
        for pass in &mut p.passes {
            if let PassSpec::Bucket { memory_budget_gib } = pass {
                *memory_budget_gib = b;
            }
        }
    }
    p
}

fn sweep(base: &OverlapParams, sweeps: Sweeps, output: &ReportOutput) -> Result<(), Failure> {
    let (ks, budgets) = sweeps;
    let ks: Vec<Option<u32>> = if ks.is_empty() {
        vec![None]
    } else {
        ks.into_iter().map(Some).collect()
    };
    let budgets: Vec<Option<Option<f64>>> = if budgets.is_empty() {
        vec![None]
    } else {
        budgets.into_iter().map(Some).collect()
    };
    let points: Vec<(Option<u32>, Option<Option<f64>>)> = ks
        .iter()
        .flat_map(|&k| budgets.iter().map(move |&b| (k, b)))
        .collect();
    // Validate every point before running any.
    for &(k, b) in &points {
        with_point(base, k, b).validate().map_err(|e| failure(&e))?;
    }
    let bar = crate::progress::bar("sweep points");
    bar.set_length(points.len() as u64);
    let mut table = Table {
        key: "sweep".into(),
        title: "Helix over the sweep (serial, eager and AsyncTP-style do not depend on K or the budget)".into(),
        columns: [
            "K",
            "budget (GiB)",
            "serial step (ms)",
            "AsyncTP-style step (ms)",
            "Helix step (ms)",
            "Helix exposed comm (ms)",
            "Helix peak activations (GiB)",
            "Helix faster than serial (%)",
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
        rows: Vec::new(),
    };
    for &(k, b) in &points {
        let p = with_point(base, k, b);
        let r = overlap::run(&p).map_err(|e| failure(&e));
        bar.inc(1);
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                bar.finish_and_clear();
                return Err(e);
            }
        };
        let m = |key: &str| Cell::Num(r.metric(key).unwrap_or(f64::NAN));
        let k_used = p.passes.iter().find_map(|x| match x {
            PassSpec::Tile { k, .. } => Some(*k),
            _ => None,
        });
        let budget = p.passes.iter().find_map(|x| match x {
            PassSpec::Bucket { memory_budget_gib } => Some(*memory_budget_gib),
            _ => None,
        });
        table.rows.push(vec![
            k_used.map_or(Cell::Missing, |k| Cell::Num(f64::from(k))),
            match budget {
                Some(Some(b)) => Cell::Num(b),
                Some(None) => Cell::Text("none".into()),
                None => Cell::Missing,
            },
            m("serial.makespan_ms"),
            m("async_tp.makespan_ms"),
            m("helix.makespan_ms"),
            m("helix.exposed_comm_ms"),
            m("helix.peak_gib"),
            Cell::Num(r.metric("helix.speedup_vs_serial").unwrap_or(f64::NAN) * 100.0),
        ]);
    }
    bar.finish_and_clear();
    let report = Report {
        lab: "overlap".into(),
        title: format!("Overlap sweep: {} point(s)", points.len()),
        tables: vec![table],
        ..Report::default()
    };
    let _ = format_number;
    crate::run::print_report(&report, output)
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
