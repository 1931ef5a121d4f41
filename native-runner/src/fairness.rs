//! `bubblelab fairness`: run the fairness lab's policies on a real trace file (any supported
//! format) or on the synthetic trace, and print the comparison table.
//!
//! Flags differ from the other commands on purpose: `--format` names the *trace* format here
//! (as in the issue's `--trace <file> --format <fmt>`), so the Report's output format is
//! `--output` and its Chrome trace file is `--chrome-trace`.

use std::path::PathBuf;

use bubblelab_core::labs::fairness::policies::QuotaMode;
use bubblelab_core::labs::fairness::traces::{self, shares, ReadOptions, TraceFormat};
use bubblelab_core::labs::fairness::{self, FairnessParams, Placement, PolicyKind, TenantWeights};
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
    /// themis, fair-share, gandiva-fair, gavel, astraea, astraea-2das, astraea-themis,
    /// yarn-fifo).
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
    /// Tenant shares: the ASTRAEA artifact's share CSV (`name,share`); the tenants are its
    /// rows, jobs of other tenants are dropped and counted.
    #[arg(long, value_name = "FILE")]
    shares: Option<PathBuf>,
    /// The artifact's name list (one tenant per line): the tenants' order; every name needs a
    /// row in `--shares`.
    #[arg(long, value_name = "FILE", requires = "shares")]
    names: Option<PathBuf>,
    /// How a job's GPUs are chosen (`consolidate-or-spread` is the artifact's `consolidate`).
    #[arg(long, value_enum, default_value_t = PlacementArg::Consolidated)]
    placement: PlacementArg,
    /// Lease length, s (ASTRAEA: 900).
    #[arg(long, value_name = "S")]
    lease_s: Option<f64>,
    /// ASTRAEA family: tenant quota of a round, `fair` (phase-1 max-min grants) or `static`.
    #[arg(long, value_enum, default_value_t = QuotaArg::Fair)]
    quota: QuotaArg,
    /// ASTRAEA family: turn block scheduling off (a tenant's later jobs may start when an
    /// earlier one fails the quota check or placement).
    #[arg(long)]
    no_block_scheduling: bool,
}

/// Placements on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    /// Fewest nodes, waits for them.
    #[default]
    Consolidated,
    /// Within one node when it fits, else spread over the emptiest nodes.
    TopologyAware,
    /// Free GPUs in node order.
    FirstFit,
    /// The ASTRAEA artifact's: node-sized chunks on the first nodes that hold them, else
    /// spread.
    ConsolidateOrSpread,
}

/// Quota modes on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum QuotaArg {
    /// Phase-1 max-min grants of the free GPUs.
    #[default]
    Fair,
    /// The static quota ⌊G·s_u/Σs⌋.
    Static,
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
    params.cluster.placement = match args.placement {
        PlacementArg::Consolidated => Placement::Consolidated,
        PlacementArg::TopologyAware => Placement::TopologyAware,
        PlacementArg::FirstFit => Placement::FirstFit,
        PlacementArg::ConsolidateOrSpread => Placement::ConsolidateOrSpread,
    };
    if let Some(l) = args.lease_s {
        params.lease_s = l;
    }
    params.astraea.quota = match args.quota {
        QuotaArg::Fair => QuotaMode::Fair,
        QuotaArg::Static => QuotaMode::Static,
    };
    params.astraea.block_scheduling = !args.no_block_scheduling;
    if let Some(path) = &args.shares {
        let name = files::label(path);
        let text = files::read_text(path, MAX_TRACE_BYTES)?;
        let mut list =
            shares::parse_shares(&text).map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        if let Some(np) = &args.names {
            let nname = files::label(np);
            let ntext = files::read_text(np, MAX_TRACE_BYTES)?;
            list = shares::order_by_names(&list, &ntext)
                .map_err(|e| Failure::Input(format!("{nname}: {e}")))?;
        }
        params.tenant_weights = TenantWeights::Shares(list);
    }
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
