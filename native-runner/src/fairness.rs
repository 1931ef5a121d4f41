//! `bubblelab fairness`: run the fairness lab's policies on a real trace file (any supported
//! format) or on the synthetic trace, and print the comparison table.
//!
//! Flags follow the CLI's one convention (ARCHITECTURE.md, "The command line"): the trace is
//! the positional input with `--input-format`; `--format` and `--trace` are the Report's
//! output format and Chrome trace, as in every command. The spellings of earlier releases
//! (`--trace FILE` for the input, `--format FMT` for its format, `--output`, `--chrome-trace`)
//! are still read this release, with a warning.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use bubblelab_core::labs::fairness::policies::QuotaMode;
use bubblelab_core::labs::fairness::traces::{ReadOptions, TraceFormat};
use bubblelab_core::labs::fairness::{
    self, FairnessParams, Placement, PolicyKind, PolicyRun, RunOne,
};
use bubblelab_core::labs::migration::{CheckpointOption, PreemptionModel};
use bubblelab_core::scenario::{InputFile, Scenario};
use bubblelab_core::ScenarioError;
use clap::{Args, ValueEnum};

use crate::error::Failure;
use crate::{deprecated, files, kind_parser};
use crate::{Format, ReportOutput};

/// Largest trace file accepted, bytes (256 MiB).
pub const MAX_TRACE_BYTES: usize = 256 << 20;

/// Arguments of `bubblelab fairness`.
#[derive(Debug, Args)]
pub struct FairnessArgs {
    /// Job trace file (Tiresias/ASTRAEA CSV, Chronus artifact CSV, Helios, Philly, Alibaba
    /// openb, DIR-LAB); without
    /// it the synthetic 15-tenant trace of the default scenario is used.
    #[arg(value_name = "TRACE")]
    input: Option<PathBuf>,
    /// Format of the trace file (default: told from its header).
    #[arg(long, value_name = "FORMAT", value_parser = kind_parser::<TraceFormat>())]
    input_format: Option<TraceFormat>,
    /// Policies to compare: `all` or a comma-separated list of ids (fifo, sjf, srtf, tiresias,
    /// largest-rho, themis, fair-share, gandiva-fair, hetero-fair-share, gavel, gavel-agnostic, astraea,
    /// astraea-2das, astraea-themis, yarn-fifo, slot-admission, separate-clusters, loan-reclaim).
    #[arg(long, default_value = "all", value_name = "IDS")]
    policy: String,
    /// Cluster size in GPUs (rounded up to whole nodes of `--gpus-per-node`); default 1,120
    /// (140 nodes of 8, the size ASTRAEA's simulations use).
    #[arg(long, value_name = "N")]
    gpus: Option<u32>,
    /// GPUs per node.
    #[arg(long, default_value_t = 8, value_name = "N")]
    gpus_per_node: u32,
    /// Skip unreadable rows of the trace (counted in the Report) instead of stopping at the
    /// first one.
    #[arg(long)]
    skip_bad_rows: bool,
    /// Output format of the Report on stdout (`text`, `json`, `csv`).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    format: Option<FormatFlag>,
    /// Also write the GPU-by-tenant timelines as Chrome trace JSON to this file.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Deprecated spelling of `--format`.
    #[arg(long, value_enum, hide = true)]
    output: Option<Format>,
    /// Deprecated spelling of `--trace`.
    #[arg(long, value_name = "FILE", hide = true)]
    chrome_trace: Option<PathBuf>,
    /// Tenant shares: the ASTRAEA artifact's share CSV (`name,share`); the tenants are its
    /// rows in order unless `--names` orders them.
    #[arg(long, value_name = "FILE")]
    shares: Option<PathBuf>,
    /// The artifact's name list (one tenant per line): the tenants' order; every name needs a
    /// row in `--shares`.
    #[arg(long, value_name = "FILE", requires = "shares")]
    names: Option<PathBuf>,
    /// How a job's GPUs are chosen.
    #[arg(long, value_name = "ID", default_value = "consolidated", value_parser = kind_parser::<Placement>())]
    placement: Placement,
    /// Lease length, s (ASTRAEA: 900).
    #[arg(long, value_name = "S")]
    lease_s: Option<f64>,
    /// ASTRAEA family: tenant quota of a round.
    #[arg(long, value_name = "ID", default_value = "fair", value_parser = kind_parser::<QuotaMode>())]
    quota: QuotaMode,
    /// ASTRAEA family: turn block scheduling off (a tenant's later jobs may start when an
    /// earlier one does not fit).
    #[arg(long)]
    no_block_scheduling: bool,
    /// Threads the policies' runs are spread over (default: one per core). The runs are
    /// independent, so the Report is the same whatever the count.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Give deadlines to this share (0–1) of the jobs that have none (SLO jobs): deadline =
    /// submit + f × duration + e, f uniform in `--deadline-factor`, e in [0, `--deadline-extra-s`]
    /// (the Chronus artifact's traces; 0.7 is its MIX1 mix).
    #[arg(long, value_name = "SHARE")]
    slo_share: Option<f64>,
    /// Range of f for `--slo-share`, `MIN,MAX` (default 1.1,2.0).
    #[arg(long, value_name = "MIN,MAX", requires = "slo_share")]
    deadline_factor: Option<String>,
    /// Largest extra slack e for `--slo-share`, s (default 3,600).
    #[arg(long, value_name = "S", requires = "slo_share")]
    deadline_extra_s: Option<f64>,
    /// Slot admission (after Chronus): lease slot length, s (default 1,200: the artifact's 20 minutes).
    #[arg(long, value_name = "S")]
    chronus_lease_s: Option<f64>,
    /// Price each preemption with the migration lab's model of this checkpoint option
    /// (reserved-pool, active, active-low-point, active-low-point-dedup, framework) for its
    /// default job, instead of the fixed 5 s + 20 s.
    #[arg(long, value_name = "OPTION", value_parser = kind_parser::<CheckpointOption>())]
    checkpoint: Option<CheckpointOption>,
    /// An inference service beside the training jobs on its own cluster of this many whole
    /// servers (nodes of `--gpus-per-node`), added to `--gpus`: its demand swings daily
    /// between `--service-trough-servers` and this peak (see `separate-clusters`,
    /// `loan-reclaim`).
    #[arg(long, value_name = "N")]
    service_peak_servers: Option<u32>,
    /// The service's demand at its daily trough, servers (default 0).
    #[arg(long, value_name = "N", requires = "service_peak_servers")]
    service_trough_servers: Option<u32>,
    /// A new replica of the service must serve within this many s (default 60).
    #[arg(long, value_name = "S", requires = "service_peak_servers")]
    service_slo_s: Option<f64>,
    /// Set any other parameter, as `bubblelab run --set` does (`themis.fairness_knob=0.5`);
    /// repeatable, applied after the flags above.
    #[arg(long, value_name = "PATH=VALUE")]
    set: Vec<String>,
}

/// `params` with every `--set PATH=VALUE` applied in order, validated once at the end.
fn with_sets(params: FairnessParams, set: &[String]) -> Result<FairnessParams, Failure> {
    let scenario = Scenario::Fairness(params);
    FairnessParams::try_from(crate::run::with_sets(scenario, set, "--set")?)
        .map_err(|_| Failure::Other("--set changed the lab".into()))
}

/// `MIN,MAX` of `--deadline-factor`.
fn parse_factor_range(s: &str) -> Result<(f64, f64), Failure> {
    let bad = || {
        Failure::Input(format!(
            "--deadline-factor: expected MIN,MAX (two numbers, e.g. 1.1,2.0), got `{s}`"
        ))
    };
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

/// What `--format` named: the Report's format, or (the earlier spelling) the trace's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FormatFlag {
    Report(Format),
    Input(Option<TraceFormat>),
}

fn parse_format(s: &str) -> Result<FormatFlag, String> {
    if let Ok(f) = Format::from_str(s, false) {
        return Ok(FormatFlag::Report(f));
    }
    if s == "auto" {
        return Ok(FormatFlag::Input(None));
    }
    match s.parse::<TraceFormat>() {
        Ok(t) => Ok(FormatFlag::Input(Some(t))),
        Err(_) => Err(format!("expected text, json or csv, got `{s}`")),
    }
}

/// The flags after the earlier spellings are mapped onto the current ones (with a warning
/// each): the input trace, its format (`None`: from the header) and the Report's output.
///
/// # Errors
/// [`Failure::Input`] when `--trace` names an existing job trace while an input is also given:
/// writing the Chrome trace there would destroy it.
fn resolve(
    args: &FairnessArgs,
) -> Result<(Option<PathBuf>, Option<TraceFormat>, ReportOutput), Failure> {
    let mut input = args.input.clone();
    let mut input_format = args.input_format;
    let mut format = Format::Text;
    match args.format {
        Some(FormatFlag::Report(f)) => format = f,
        Some(FormatFlag::Input(t)) => {
            deprecated("--format <trace format>", "`--input-format`");
            input_format = input_format.or(t);
        }
        None => {}
    }
    if let Some(f) = args.output {
        deprecated("--output <format>", "`--format`");
        format = f;
    }
    let mut trace = args.trace.clone();
    if let Some(t) = &args.chrome_trace {
        deprecated("--chrome-trace", "`--trace`");
        trace = Some(t.clone());
    }
    // Before this release `--trace FILE` named the input. A job trace given that way is still
    // read as the input (and never overwritten with a Chrome trace).
    if input.is_none() && args.chrome_trace.is_none() {
        if let Some(path) = args.trace.as_deref().filter(|p| is_job_trace(p)) {
            deprecated("--trace <job trace>", "the positional TRACE");
            input = Some(path.to_path_buf());
            trace = None;
        }
    }
    if let Some(path) = trace.as_deref().filter(|p| is_job_trace(p)) {
        return Err(Failure::Input(format!(
            "--trace {}: the file exists and is not a Chrome trace; --trace names the Chrome \
             trace to write (it named the input before this release): give another file",
            path.display()
        )));
    }
    Ok((input, input_format, ReportOutput { format, trace }))
}

/// True when `path` is an existing file that is not a Chrome trace (whose JSON starts with
/// `{"traceEvents"`, as this CLI writes them).
fn is_job_trace(path: &Path) -> bool {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 64];
    let n = file.read(&mut head).unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    let text = text.trim_start();
    n > 0 && !(text.starts_with('{') && text.contains("traceEvents"))
}

/// The `n` runs of [`FairnessParams::simulate_with`] on up to `threads` threads, each taking
/// the next run not yet taken (they come numbered longest first); returned in order,
/// `progress` called on this thread as each ends.
pub(crate) fn run_on_threads(
    threads: usize,
    n: usize,
    run_one: &RunOne<'_>,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<PolicyRun> {
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return fairness::run_in_turn(n, run_one, progress);
    }
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = mpsc::channel::<(usize, PolicyRun)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n || done_tx.send((i, run_one(i))).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        let mut runs: Vec<Option<PolicyRun>> = (0..n).map(|_| None).collect();
        let mut done = 0;
        for (i, run) in done_rx {
            runs[i] = Some(run);
            done += 1;
            progress(done, n);
        }
        runs.into_iter().flatten().collect()
    })
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
    let (input, input_format, output) = resolve(args)?;
    let mut params = FairnessParams {
        policies: crate::parse_kind_list::<PolicyKind>("--policy", &args.policy)?,
        ..FairnessParams::default()
    };
    params.cluster.gpus_per_node = args.gpus_per_node;
    params.cluster.placement = args.placement;
    if let Some(l) = args.lease_s {
        params.lease_s = l;
    }
    params.astraea.quota = args.quota;
    params.astraea.block_scheduling = !args.no_block_scheduling;
    if let Some(share) = args.slo_share {
        params.deadlines.slo_share = share;
    }
    if let Some(range) = &args.deadline_factor {
        (params.deadlines.factor_min, params.deadlines.factor_max) = parse_factor_range(range)?;
    }
    if let Some(e) = args.deadline_extra_s {
        params.deadlines.extra_max_s = e;
    }
    if let Some(l) = args.chronus_lease_s {
        params.chronus.lease_s = l;
    }
    if let Some(option) = args.checkpoint {
        params.preemption = PreemptionModel::Migration {
            option,
            params: Box::default(),
        };
    }
    if let Some(peak) = args.service_peak_servers {
        params.colocation.servers_peak = peak;
        params.colocation.servers_trough = args.service_trough_servers.unwrap_or(0);
        if let Some(slo) = args.service_slo_s {
            params.colocation.slo_s = slo;
        }
    }
    if let Some(g) = args.gpus {
        if g == 0 || args.gpus_per_node == 0 {
            return Err(Failure::Input(
                "--gpus and --gpus-per-node must be at least 1".into(),
            ));
        }
        params.cluster.nodes = g.div_ceil(args.gpus_per_node);
    }
    let mut params = with_sets(params, &args.set)?;
    // The service's own servers come on top of the training cluster.
    params.cluster.nodes = params
        .cluster
        .nodes
        .saturating_add(params.colocation.servers_peak);
    let mut texts = Vec::new();
    for (slot, path) in [
        ("trace", input.as_ref()),
        ("shares", args.shares.as_ref()),
        ("names", args.names.as_ref()),
    ] {
        if let Some(path) = path {
            texts.push((
                slot,
                files::label(path),
                files::read_text(path, MAX_TRACE_BYTES)?,
            ));
        }
    }
    let inputs: Vec<InputFile<'_>> = texts
        .iter()
        .map(|(slot, source, text)| InputFile { slot, source, text })
        .collect();
    let options = ReadOptions {
        skip_bad_rows: args.skip_bad_rows,
        ..ReadOptions::default()
    };
    let (params, trace) = params
        .read_inputs(&inputs, input_format, &options)
        .map_err(|e| field_failure(&e))?;
    let threads = match args.jobs {
        Some(0) => return Err(Failure::Input("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
    };
    let bar = crate::progress::bar("policies, running ");
    let mut on_progress = |done: usize, total: usize| {
        crate::progress::update(&bar, done, total);
        bar.set_message(format!("{} at a time", threads.min(total - done)));
    };
    let simulation = params.simulate_with(&trace, &mut on_progress, &mut |n, run_one, progress| {
        run_on_threads(threads, n, run_one, progress)
    });
    bar.finish_and_clear();
    let report = simulation.map_err(|e| field_failure(&e))?.report;
    crate::run::print_report(&report, &output)
}
