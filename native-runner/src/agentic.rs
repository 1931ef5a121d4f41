//! `bubblelab agentic`: run the agentic lab (unbounded admission, static caps, CONCUR) on a preset
//! or scenario, optionally on a real request trace (Mooncake JSONL or Azure CSV) and with a
//! static-cap sweep, and print the Report.
//!
//! Flags follow the CLI's one convention (ARCHITECTURE.md, "The command line"): the request
//! trace is the positional input with `--input-format`; `--format` and `--trace` are the
//! Report's output format and Chrome trace file, as in every command. `--trace-file` and
//! `--trace-format` (earlier releases) are still read this release, with a warning.

use std::path::PathBuf;

use bubblelab_core::labs::agentic::traces::TraceFormat;
use bubblelab_core::labs::agentic::{self, AgenticParams, Arrivals, ControllerSpec, EngineMode};
use bubblelab_core::scenario::InputFile;
use bubblelab_core::ScenarioError;
use clap::{Args, ValueEnum};

use crate::error::Failure;
use crate::ReportOutput;
use crate::{deprecated, files, kind_parser};

/// Largest trace file accepted, bytes (256 MiB).
pub const MAX_TRACE_BYTES: usize = 256 << 20;

/// When agents start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ArrivalsArg {
    /// All at time 0 (agentic batch inference).
    Batch,
    /// At their first request's time in the trace.
    Trace,
}

/// Serving engines on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// vLLM V1 (16-token blocks).
    VllmV1,
    /// SGLang (radix cache, page size 1).
    Sglang,
}

/// Arguments of `bubblelab agentic`.
#[derive(Debug, Args)]
pub struct AgenticArgs {
    /// Preset to start from (list them with `bubblelab presets`); default
    /// `agentic-qwen3-32b-h100`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "agentic"`) to start from instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Real request trace to run instead of the synthetic agents.
    #[arg(value_name = "TRACE")]
    input: Option<PathBuf>,
    /// Format of the request trace (default: told from its first characters, `{` = Mooncake,
    /// a `TIMESTAMP` header = Azure).
    #[arg(long, value_name = "FORMAT", value_parser = kind_parser::<TraceFormat>())]
    input_format: Option<TraceFormat>,
    /// Deprecated spelling of the positional TRACE.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with = "input")]
    trace_file: Option<PathBuf>,
    /// Deprecated spelling of `--input-format`.
    #[arg(long, value_name = "FORMAT", hide = true, conflicts_with = "input_format", value_parser = kind_parser::<TraceFormat>())]
    trace_format: Option<TraceFormat>,
    /// Serving engine's scheduler and cache (overrides the scenario's `engine.mode`, and sets
    /// `engine.block_tokens` to that engine's default page: 16 for vLLM, 1 for SGLang).
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// When agents start (overrides the scenario's `arrivals`).
    #[arg(long, value_enum)]
    arrivals: Option<ArrivalsArg>,
    /// Controllers to compare, comma-separated: `unbounded`, `concur`, `aimd-history`,
    /// `clipper-aimd` (Clipper's AIMD batch limit against the TPOT objective), `cap-N` (N
    /// agents), `req-cap-N` (N running requests) (overrides the scenario's list; CONCUR and
    /// Clipper keep the scenario's knobs).
    #[arg(long, value_name = "IDS")]
    controllers: Option<String>,
    /// Also sweep static caps (1, 2, 4, … and the agent count) and report the best in hindsight.
    #[arg(long)]
    sweep_cap: bool,
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

fn parse_controllers(s: &str, base: &AgenticParams) -> Result<Vec<ControllerSpec>, Failure> {
    ControllerSpec::parse_list(s, &base.controllers)
        .map_err(|e| Failure::Input(format!("--controllers: {e}")))
}

/// `bubblelab agentic`.
///
/// # Errors
/// [`Failure::Input`] naming the file, line and field of a bad trace or scenario, or a bad flag.
pub fn agentic(args: &AgenticArgs) -> Result<(), Failure> {
    let mut params: AgenticParams =
        crate::run::lab_params("agentic", args.scenario.as_deref(), args.preset.as_deref())?;
    if let Some(ids) = &args.controllers {
        params.controllers = parse_controllers(ids, &params)?;
    }
    if let Some(e) = args.engine {
        (params.engine.mode, params.engine.block_tokens) = match e {
            EngineArg::VllmV1 => (EngineMode::VllmV1, 16),
            EngineArg::Sglang => (EngineMode::Sglang, 1),
        };
    }
    if let Some(a) = args.arrivals {
        params.arrivals = match a {
            ArrivalsArg::Batch => Arrivals::Batch,
            ArrivalsArg::Trace => Arrivals::Trace,
        };
    }
    if args.trace_file.is_some() {
        deprecated("--trace-file", "the positional TRACE");
    }
    if args.trace_format.is_some() {
        deprecated("--trace-format", "`--input-format`");
    }
    let input = args.input.as_ref().or(args.trace_file.as_ref());
    let workload = match input {
        None => {
            params.validate().map_err(|e| failure(&e))?;
            agentic::workload::generate(&params.synthetic)
        }
        Some(path) => {
            let name = files::label(path);
            let text = files::read_text(path, MAX_TRACE_BYTES)?;
            let file = InputFile {
                slot: "trace",
                source: &name,
                text: &text,
            };
            agentic::read_trace(&file, args.input_format.or(args.trace_format))
                .map_err(|e| failure(&e))?
        }
    };
    if args.sweep_cap && params.sweep_caps.is_empty() {
        let n = u32::try_from(workload.agents.len()).unwrap_or(u32::MAX);
        let room = agentic::params::MAX_CONTROLLERS.saturating_sub(params.controllers.len());
        let mut caps = agentic::default_sweep_caps(n);
        caps.truncate(room);
        params.sweep_caps = caps;
    }
    let report = agentic::run_workload(&params, &workload).map_err(|e| failure(&e))?;
    crate::run::print_report(&report, &args.output)
}
