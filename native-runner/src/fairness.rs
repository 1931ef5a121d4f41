//! `bubblelab fairness`: run the fairness lab's policies on a real trace file (any supported
//! format) or on the synthetic trace, and print the comparison table.
//!
//! Flags differ from the other commands on purpose: `--format` names the *trace* format here
//! (as in the issue's `--trace <file> --format <fmt>`), so the Report's output format is
//! `--output` and its Chrome trace file is `--chrome-trace`.

use std::path::PathBuf;

use bubblelab_core::labs::fairness::traces::{self, ReadOptions, TraceFormat};
use bubblelab_core::labs::fairness::{self, FairnessParams, PolicyKind};
use bubblelab_core::ScenarioError;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Failure;
use crate::files;
use crate::{Format, ReportOutput};

/// Largest trace file accepted, bytes (256 MiB).
pub const MAX_TRACE_BYTES: usize = 256 << 20;

/// Trace formats on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum TraceFormatArg {
    /// Guess from the first bytes / the CSV header.
    #[default]
    Auto,
    /// Tiresias/ASTRAEA CSV (`job_id,num_gpu,submit_time,…`).
    Tiresias,
    /// Helios `cluster_log.csv`.
    Helios,
    /// Philly `cluster_job_log` JSON.
    Philly,
    /// Alibaba v2023 `openb_pod_list` CSV.
    AlibabaOpenb,
    /// DIR-LAB per-user job traces (`u_id,user,gpu_num,…`).
    Dirlab,
}

/// Arguments of `bubblelab fairness`.
#[derive(Debug, Args)]
pub struct FairnessArgs {
    /// Trace file; without it the synthetic 15-tenant trace of the default scenario is used.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Format of the trace file.
    #[arg(long, value_enum, default_value_t = TraceFormatArg::Auto)]
    format: TraceFormatArg,
    /// Policies to compare: `all` or a comma-separated list of ids (fifo, sjf, srtf, tiresias,
    /// themis, fair-share, gandiva-fair, gavel, astraea).
    #[arg(long, default_value = "all", value_name = "IDS")]
    policy: String,
    /// Cluster size in GPUs (rounded up to whole nodes of `--gpus-per-node`); default 1,120
    /// (140 nodes × 8, ASTRAEA's evaluation).
    #[arg(long, value_name = "N")]
    gpus: Option<u32>,
    /// GPUs per node.
    #[arg(long, default_value_t = 8, value_name = "N")]
    gpus_per_node: u32,
    /// Skip unreadable rows of the trace (counted in the Report) instead of stopping at the
    /// first.
    #[arg(long)]
    skip_bad_rows: bool,
    /// Output format of the Report on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    output: Format,
    /// Also write the GPU-by-tenant timelines as Chrome trace JSON to this file.
    #[arg(long, value_name = "FILE")]
    chrome_trace: Option<PathBuf>,
}

fn parse_policies(s: &str) -> Result<Vec<PolicyKind>, Failure> {
    if s.trim() == "all" {
        return Ok(PolicyKind::ALL.to_vec());
    }
    let mut out = Vec::new();
    for id in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let k = PolicyKind::from_id(id).ok_or_else(|| {
            let ids: Vec<&str> = PolicyKind::ALL.iter().map(|k| k.id()).collect();
            Failure::Input(format!(
                "--policy: unknown policy `{id}`; expected `all` or some of {}",
                ids.join(", ")
            ))
        })?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err(Failure::Input("--policy: name at least one policy".into()));
    }
    Ok(out)
}

/// A bar over the policies on stderr, drawn only when stderr is a terminal and only once the
/// run has taken a second (short runs print nothing extra).
fn progress_bar(policies: &[PolicyKind]) -> ProgressBar {
    let bar =
        ProgressBar::with_draw_target(Some(policies.len() as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {elapsed:>3} [{bar:30}] {pos}/{len} policies, running {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let shown = bar.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        if !shown.is_finished() {
            shown.set_draw_target(ProgressDrawTarget::stderr());
            shown.enable_steady_tick(std::time::Duration::from_millis(120));
        }
    });
    bar
}

fn field_failure(e: &ScenarioError) -> Failure {
    match e {
        ScenarioError::Run(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    }
}

/// `bubblelab fairness`.
///
/// # Errors
/// [`Failure::Input`] naming the file, row and column of a bad trace, or a bad flag.
pub fn fairness(args: &FairnessArgs) -> Result<(), Failure> {
    let mut params = FairnessParams {
        policies: parse_policies(&args.policy)?,
        ..FairnessParams::default()
    };
    params.cluster.gpus_per_node = args.gpus_per_node;
    if let Some(g) = args.gpus {
        if g == 0 || args.gpus_per_node == 0 {
            return Err(Failure::Input(
                "--gpus and --gpus-per-node must be at least 1".into(),
            ));
        }
        params.cluster.nodes = g.div_ceil(args.gpus_per_node);
    }
    let trace = match &args.trace {
        None => fairness::synthetic_trace(&params).map_err(|e| field_failure(&e))?,
        Some(path) => {
            let name = files::label(path);
            let text = files::read_text(path, MAX_TRACE_BYTES)?;
            let format = match args.format {
                TraceFormatArg::Auto => traces::detect(&text).ok_or_else(|| {
                    Failure::Input(format!(
                        "{name}: cannot tell the trace format from its header; give --format"
                    ))
                })?,
                TraceFormatArg::Tiresias => TraceFormat::Tiresias,
                TraceFormatArg::Helios => TraceFormat::Helios,
                TraceFormatArg::Philly => TraceFormat::Philly,
                TraceFormatArg::AlibabaOpenb => TraceFormat::AlibabaOpenb,
                TraceFormatArg::Dirlab => TraceFormat::Dirlab,
            };
            let options = ReadOptions {
                skip_bad_rows: args.skip_bad_rows,
                ..ReadOptions::default()
            };
            let mut trace = traces::parse(format, &text, &options)
                .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
            if trace.source.is_empty() {
                trace.source = name.clone();
            }
            trace
        }
    };
    let bar = progress_bar(&params.policies);
    let mut on_progress = |done: usize, _total: usize| {
        bar.set_position(done as u64);
        if let Some(next) = params.policies.get(done) {
            bar.set_message(next.label());
        }
    };
    let simulation = fairness::simulate(&params, &trace, &mut on_progress);
    bar.finish_and_clear();
    let report = simulation.map_err(|e| field_failure(&e))?.report;
    let output = ReportOutput {
        format: args.output,
        trace: args.chrome_trace.clone(),
    };
    crate::run::print_report(&report, &output)
}
