//! `bubblelab sharing`: FGD's placement experiment (the sharing lab) on a preset, a scenario
//! file, or the real openb node and pod lists (`--nodes`, `--pods`).

use std::path::PathBuf;

use bubblelab_core::labs::sharing::SharingParams;
use bubblelab_core::labs::sharing::{self, openb, Experiment, SharingPolicy};
use clap::Args;

use crate::error::Failure;
use crate::files;
use crate::kind_parser;
use crate::ReportOutput;

/// Largest node or pod list read, bytes.
const MAX_LIST_BYTES: usize = 256 << 20;

/// Arguments of `bubblelab sharing`.
#[derive(Debug, Args)]
pub struct SharingArgs {
    /// Preset to start from (list them with `bubblelab presets`); default
    /// `sharing-fgd-openb-shape`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "sharing"`) to start from instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// The cluster from an openb node list CSV (`sn,cpu_milli,memory_mib,gpu,model`).
    #[arg(long, value_name = "FILE")]
    nodes: Option<PathBuf>,
    /// The pods from an openb pod list CSV (`cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec]`
    /// by name; times are not read).
    #[arg(long, value_name = "FILE")]
    pods: Option<PathBuf>,
    /// Policies, comma-separated ids, or `all`.
    #[arg(long, value_name = "IDS")]
    policy: Option<String>,
    /// Seeds to run (the artifact's 10), from `--first-seed`.
    #[arg(long, value_name = "N")]
    seeds: Option<u32>,
    /// First seed (the artifact's 42).
    #[arg(long, value_name = "N")]
    first_seed: Option<u64>,
    /// Clone pods until the requests reach this share of the cluster's GPUs, % (the artifact's
    /// 130).
    #[arg(long, value_name = "PERCENT")]
    inflation_percent: Option<u32>,
    /// Which experiment: `placement` (FGD's, no time) or `timed` (pods arrive and leave; pods
    /// sharing a GPU slow each other; rows with and without unpacking).
    #[arg(long, value_name = "ID", value_parser = kind_parser::<Experiment>())]
    experiment: Option<Experiment>,
    /// Timed: pods that arrive.
    #[arg(long, value_name = "N")]
    pods_arriving: Option<u32>,
    /// Timed: offered load (GPU milli-time asked ÷ the cluster's over the arrival span).
    #[arg(long, value_name = "X")]
    load: Option<f64>,
    /// Timed: mean solo duration of a pod, s.
    #[arg(long, value_name = "S")]
    mean_duration_s: Option<f64>,
    /// Timed: move a pod that runs slower than this share of its solo speed (0–1).
    #[arg(long, value_name = "X")]
    unpack_below: Option<f64>,
    /// Timed: a move's pause, s.
    #[arg(long, value_name = "S")]
    migration_s: Option<f64>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// `bubblelab sharing`.
///
/// # Errors
/// [`Failure::Input`] for a bad preset, scenario file, field, flag or list (naming its file,
/// line and column).
pub fn sharing(args: &SharingArgs) -> Result<(), Failure> {
    let mut params: SharingParams =
        crate::run::lab_params("sharing", args.scenario.as_deref(), args.preset.as_deref())?;
    if let Some(path) = &args.nodes {
        let name = files::label(path);
        let text = files::read_text(path, MAX_LIST_BYTES)?;
        params.nodes =
            openb::parse_nodes(&text).map_err(|e| Failure::Input(format!("{name}: {e}")))?;
    }
    if let Some(path) = &args.pods {
        let name = files::label(path);
        let text = files::read_text(path, MAX_LIST_BYTES)?;
        params.pods =
            openb::parse_pods(&text).map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        params.source = name;
    }
    if let Some(p) = &args.policy {
        params.policies = crate::parse_kind_list::<SharingPolicy>("--policy", p)?;
    }
    if let Some(n) = args.seeds {
        params.seeds = n;
    }
    if let Some(n) = args.first_seed {
        params.first_seed = n;
    }
    if let Some(p) = args.inflation_percent {
        params.inflation_percent = p;
    }
    if let Some(e) = args.experiment {
        params.experiment = e;
    }
    let t = &mut params.timed;
    if let Some(v) = args.pods_arriving {
        t.pods = v;
    }
    if let Some(v) = args.load {
        t.load = v;
    }
    if let Some(v) = args.mean_duration_s {
        t.mean_duration_s = v;
    }
    if let Some(v) = args.unpack_below {
        t.unpack_below = v;
    }
    if let Some(v) = args.migration_s {
        t.migration_s = v;
    }
    params
        .validate()
        .map_err(|e| Failure::Input(e.to_string()))?;
    let report = sharing::run(&params, &mut |_, _| {});
    crate::run::print_report(&report, &args.output)
}
