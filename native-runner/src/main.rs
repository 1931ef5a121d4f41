//! `bubblelab`: the command-line face of bubblelab-core.
//!
//! Runs scenarios and prints their Reports (table, JSON or CSV), writes Chrome traces, makes and
//! opens share links, lists presets and reads real PipeMorph pipeline logs. Every failure ends
//! in one `error: …` line on stderr and a non-zero exit code (2 for bad input); nothing panics
//! on user input.

mod agentic;
mod bubbles;
mod calibrate;
mod checkpoint;
mod checkpoint_demo;
mod compare;
mod cost;
mod dist;
mod doctor;
mod elastic;
mod error;
mod exec;
mod fairness;
mod files;
mod graph;
mod kineto;
mod labs;
mod launcher;
mod link;
mod migration;
mod overlap;
mod presets;
mod progress;
mod resilience;
mod run;
mod sharing;
mod sweep;
mod tour;
mod tuning;
mod validate;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use bubblelab_core::kinds::Kind;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::Failure;

/// Command line of `bubblelab`.
#[derive(Debug, Parser)]
#[command(
    name = "bubblelab",
    version,
    about = "A lab for GPU-cluster scheduling: run scenarios, export traces and links, read real pipeline logs"
)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario and print its Report.
    Run(run::RunArgs),
    /// Run every point of a sweep file (a base scenario and axes over field paths and input
    /// files) on every core, or on a Ray cluster, and write one tidy table: a row per point and
    /// metric.
    Sweep(sweep::SweepArgs),
    /// Run two scenarios of one lab and print them side by side: every metric with B − A and
    /// B / A, the parameters that differ, both runs' curves and timelines.
    Compare(compare::CompareArgs),
    /// Walk a tour (predict-then-run lessons): each step's question, the run's answer and the
    /// explanation; fails where a run does not give the answer the explanation states.
    /// `--link` prints the link that opens it in the page; no argument lists the tours.
    Tour(tour::TourArgs),
    /// Print the share link of a scenario, or decode a link back into scenario JSON.
    Link(link::LinkArgs),
    /// List the preset scenarios, or print one preset's JSON.
    Presets(presets::PresetsArgs),
    /// List the labs: what goes wrong in each, the systems it runs and the files it reads.
    Labs,
    /// Read a PipeMorph run folder (per-stage `*.log` files and `log.txt`) and print its Report.
    PipelineLog(run::PipelineLogArgs),
    /// Read PyTorch profiler (Kineto) traces, one per rank, and print the HTA
    /// communication-computation overlap per rank.
    Kineto(kineto::KinetoArgs),
    /// Cost a GEMM or a collective with the hardware cost models (time, TFLOP/s, bus bandwidth).
    Cost(cost::CostArgs),
    /// Build a model's per-rank execution graph under a parallel layout and simulate one step:
    /// step time, exposed communication, peak activation memory.
    Graph(graph::GraphArgs),
    /// Compare GPU-cluster scheduling policies (ASTRAEA, FIFO, SJF, Tiresias, 2DAS, …) on a
    /// multi-tenant trace file or the synthetic trace, and print the comparison table.
    Fairness(fairness::FairnessArgs),
    /// Agentic batch inference on one serving engine: unbounded admission, static caps and
    /// CONCUR's AIMD window, on synthetic agents or a Mooncake/Azure trace file.
    Agentic(agentic::AgenticArgs),
    /// Helix's communication-computation overlap (tile, reorder, bucket) against serial, eager
    /// and AsyncTP-style on a model's per-rank graph or an imported graph; sweeps over K and
    /// the memory budget.
    Overlap(overlap::OverlapArgs),
    /// Measure the executor's kernels (GEMM grid, copy bandwidth, launch) and write a calibrated
    /// profile JSON.
    Calibrate(calibrate::CalibrateArgs),
    /// Predict with the calibrated cost model, execute for real, print predicted vs measured
    /// makespan and peak memory; exit 1 when an error exceeds --max-error.
    Validate(validate::ValidateArgs),
    /// Print what this machine offers the GPU commands (CUDA driver, devices, NCCL).
    Doctor(doctor::DoctorArgs),
    /// Fail-slow and fail-stop resilience of hybrid-parallel training: ResiHP's detector and
    /// joint TP/PP/DP re-plan against doing nothing, checkpoint restart and Oobleck-, ReCycle-
    /// and Greyhound-like baselines, each with its own detection.
    Resilience(resilience::ResilienceArgs),
    /// Run the fail-slow detectors on a real Alibaba PAI per-worker mini-batch CSV (`--pai`),
    /// write a labelled fail-slow trace (`--generate`) or score the detectors' precision, recall
    /// and delay on one (`--score`).
    Detect(resilience::DetectArgs),
    /// Hydro's Bubble Squeezer: tuning trials in the bubbles of a pipeline job (main job alone,
    /// blind colocation, the squeezer) and the tuning makespan; `--log` squeezes the real
    /// bubbles of a PipeMorph run.
    Bubbles(bubbles::BubblesArgs),
    /// Hydro's tuning side: the μP shrinker, a μTransfer experiment (real MLP training at several
    /// widths, SP vs μP, loss vs learning rate) and the trial-fusion model.
    Tuning(tuning::TuningArgs),
    /// GPU pause/resume/migrate cost model (FlowGPU): reserved pool vs active memory vs low
    /// point vs dedup vs framework checkpoint + restart, on a preset or scenario file.
    Migration(migration::MigrationArgs),
    /// GPU sharing: FGD's fragmentation-aware placement against its artifact's five baselines
    /// (Random, DotProd, GpuClustering, GpuPacking, BestFit) in its placement experiment, on a
    /// preset or the real openb node and pod lists (`--nodes`, `--pods`).
    Sharing(sharing::SharingArgs),
    /// Elastic training: Pollux (every job's GPUs and batch size chosen for the cluster's
    /// goodput) against its artifact's Optimus+Oracle and Tiresias, on the artifact's workload
    /// files (`--workload 1`…`8`) or a workload CSV.
    Elastic(elastic::ElasticArgs),
    /// Run a real address-preserving checkpoint cycle (pause, unmap, restore at the same
    /// address, migrate to a new process) on host memory, or check the CUDA path.
    CheckpointDemo(checkpoint_demo::DemoArgs),
    /// Restore a checkpoint image in this new process (started by `checkpoint-demo`).
    #[command(name = "__checkpoint-restore", hide = true)]
    CheckpointRestore(checkpoint_demo::RestoreArgs),
}

/// Every overlap strategy, in table order.
pub const OVERLAP_ALL: [bubblelab_core::labs::overlap::Strategy; 4] =
    bubblelab_core::labs::overlap::STRATEGIES;

/// Where a command runs its work: one meaning in `calibrate`, `validate` and
/// `checkpoint-demo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// The CPU: the CPU executor (threads as streams) or host memory mapped at a fixed
    /// address; runs everywhere.
    #[default]
    Cpu,
    /// A CUDA device: the CUDA executor, or device memory through CUDA virtual memory
    /// management (needs a driver, a device and NVRTC; says which is missing).
    Cuda,
}

/// How a Report is printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Aligned text tables for a terminal.
    #[default]
    Text,
    /// Indented JSON (the whole Report, timelines included).
    Json,
    /// Metrics as `key,label,value,unit`, then each table as its own CSV block.
    Csv,
}

/// Output flags shared by every command that prints a Report.
#[derive(Debug, Args)]
struct ReportOutput {
    /// Output format of the Report on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write the Report's timelines as Chrome trace JSON to this file (open it in
    /// Perfetto or chrome://tracing).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
}

/// A clap parser for one of the core's [`Kind`] sets: `--help` lists its ids with their
/// labels, and a wrong id is refused with the list.
#[must_use]
pub fn kind_parser<K: Kind + Send + Sync>() -> impl TypedValueParser<Value = K> {
    PossibleValuesParser::new(
        K::all()
            .iter()
            .map(|k| PossibleValue::new(k.id()).help(k.label())),
    )
    .try_map(|id| K::from_id(&id).ok_or_else(|| format!("unknown id `{id}`")))
}

/// A `--policy`-style list: comma-separated ids of one [`Kind`] set (each kept once, in the order
/// given), or `all` for every kind.
///
/// # Errors
/// [`error::Failure::Input`] naming `flag` for an unknown id or an empty list.
pub fn parse_kind_list<K>(flag: &str, s: &str) -> Result<Vec<K>, error::Failure>
where
    K: Kind + PartialEq + std::str::FromStr,
    K::Err: std::fmt::Display,
{
    if s.trim() == "all" {
        return Ok(K::all().to_vec());
    }
    let mut out = Vec::new();
    for id in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let k: K = id
            .parse()
            .map_err(|e| error::Failure::Input(format!("{flag}: {e}, or `all`")))?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err(error::Failure::Input(format!("{flag}: name at least one")));
    }
    Ok(out)
}

/// Tells on stderr that the flag `old` is an earlier spelling this release still reads and the
/// next will not; `new` says what to write instead (the flag convention in ARCHITECTURE.md).
pub fn deprecated(old: &str, new: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "warning: `{old}` is deprecated and will be removed in the next release; use {new}"
    );
}

fn main() -> ExitCode {
    error::install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` also arrive here; they print to stdout and exit 0.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Tour(args) => tour::tour(&args),
        Command::Link(args) => link::link(&args),
        Command::Presets(args) => presets::presets(&args),
        Command::Labs => labs::labs(),
        Command::PipelineLog(args) => run::pipeline_log(&args),
        Command::Kineto(args) => kineto::kineto(&args),
        Command::Cost(args) => cost::cost(&args),
        Command::Graph(args) => graph::graph(&args),
        Command::Fairness(args) => fairness::fairness(&args),
        Command::Agentic(args) => agentic::agentic(&args),
        Command::Overlap(args) => overlap::overlap(&args),
        Command::Calibrate(args) => calibrate::calibrate(&args),
        Command::Validate(args) => validate::validate(&args),
        Command::Doctor(args) => doctor::doctor(&args),
        Command::Resilience(args) => resilience::resilience(&args),
        Command::Detect(args) => resilience::detect(&args),
        Command::Tuning(args) => tuning::tuning(&args),
        Command::Bubbles(args) => bubbles::bubbles(&args),
        Command::Migration(args) => migration::migration(&args),
        Command::Sharing(args) => sharing::sharing(&args),
        Command::Elastic(args) => elastic::elastic(&args),
        Command::CheckpointDemo(args) => checkpoint_demo::demo(&args),
        Command::CheckpointRestore(args) => checkpoint_demo::restore_process(&args),
    };
    match result {
        Ok(()) | Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(failure) => {
            let _ = writeln!(std::io::stderr(), "error: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
