//! `bubblelab elastic`: Pollux against its artifact's Optimus+Oracle and Tiresias (the elastic
//! lab) on a preset, a scenario file, one of the artifact's workload files (`--workload 1`…`8`)
//! or a workload CSV in the artifact's format (`--workload FILE`).

use std::path::Path;

use bubblelab_core::labs::elastic::ElasticParams;
use bubblelab_core::labs::elastic::{self, workload, ElasticPolicy};
use bubblelab_core::labs::migration::CheckpointOption;
use bubblelab_core::labs::migration::PreemptionModel;
use clap::Args;

use crate::error::Failure;
use crate::files;
use crate::{kind_parser, ReportOutput};

/// Largest workload file read, bytes.
const MAX_WORKLOAD_BYTES: usize = 16 << 20;

/// Arguments of `bubblelab elastic`.
#[derive(Debug, Args)]
pub struct ElasticArgs {
    /// Preset to start from (list them with `bubblelab presets`); default
    /// `elastic-pollux-vs-baselines`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "elastic"`) to start from instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<std::path::PathBuf>,
    /// The artifact's workload file 1 to 8, or a CSV in its format
    /// (`name,time,application,num_replicas,batch_size`).
    #[arg(long, value_name = "K|FILE")]
    workload: Option<String>,
    /// Policies, comma-separated ids (`pollux`, `optimus`, `tiresias`), or `all`.
    #[arg(long, value_name = "IDS")]
    policy: Option<String>,
    /// Nodes (the artifact's 16).
    #[arg(long, value_name = "N")]
    nodes: Option<u32>,
    /// GPUs per node, 1 to 4 (the artifact's 4).
    #[arg(long, value_name = "N")]
    gpus_per_node: Option<u32>,
    /// Scheduling interval, s (the artifact's 60).
    #[arg(long, value_name = "S")]
    interval_s: Option<u32>,
    /// A job's pause after its GPUs change, s (the artifact's 30).
    #[arg(long, value_name = "S")]
    restart_s: Option<u32>,
    /// Price each change of a job's GPUs with the migration lab's model of this checkpoint
    /// option (reserved-pool, active, active-low-point, active-low-point-dedup, framework) for
    /// its default job at the job's new GPU count, instead of `--restart-s` (which Pollux's
    /// fitness still uses, as the artifact's does).
    #[arg(long, value_name = "OPTION", value_parser = kind_parser::<CheckpointOption>())]
    checkpoint: Option<CheckpointOption>,
    /// Pollux's search: individuals per generation (the artifact's 100).
    #[arg(long, value_name = "N")]
    population: Option<u32>,
    /// Pollux's search: generations per round (the artifact's 100).
    #[arg(long, value_name = "N")]
    generations: Option<u32>,
    /// Pollux's search: seed of its random draws.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// `bubblelab elastic`.
///
/// # Errors
/// [`Failure::Input`] for a bad preset, scenario file, field, flag or workload file (naming its
/// line and column).
pub fn elastic(args: &ElasticArgs) -> Result<(), Failure> {
    let mut params: ElasticParams =
        crate::run::lab_params("elastic", args.scenario.as_deref(), args.preset.as_deref())?;
    if let Some(w) = &args.workload {
        if let Ok(k) = w.parse::<u32>() {
            params.workload = k;
        } else {
            let path = Path::new(w);
            let name = files::label(path);
            let text = files::read_text(path, MAX_WORKLOAD_BYTES)?;
            params.jobs = workload::parse_workload(&text)
                .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
            params.workload = 0;
        }
    }
    if let Some(p) = &args.policy {
        params.policies = crate::parse_kind_list::<ElasticPolicy>("--policy", p)?;
    }
    if let Some(v) = args.nodes {
        params.nodes = v;
    }
    if let Some(v) = args.gpus_per_node {
        params.gpus_per_node = v;
    }
    if let Some(v) = args.interval_s {
        params.interval_s = v;
    }
    if let Some(v) = args.restart_s {
        params.restart_s = v;
    }
    if let Some(option) = args.checkpoint {
        params.restart_cost = PreemptionModel::Migration {
            option,
            params: Box::default(),
        };
    }
    if let Some(v) = args.population {
        params.pollux.population = v;
    }
    if let Some(v) = args.generations {
        params.pollux.generations = v;
    }
    if let Some(v) = args.seed {
        params.pollux.seed = v;
    }
    let report =
        elastic::run(&params, &mut |_, _| {}).map_err(|e| Failure::Input(e.to_string()))?;
    crate::run::print_report(&report, &args.output)
}
