//! The elastic lab: training jobs whose GPU count and batch size change while they run, after
//! Pollux (Qiao et al., "Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep
//! Learning", OSDI'21), against the baselines of its artifact's simulator (petuum/adaptdl
//! @de25dcc, branch `osdi21-artifact`, `simulator/`): Optimus+Oracle and Tiresias, each job on
//! the GPUs and batch size a user tuned for it.
//!
//! A job's *goodput* is its throughput times its statistical efficiency at its batch size
//! (`apps`); Pollux re-picks every job's GPUs each interval to maximise a fair mean of the
//! jobs' goodput speedups, and each job then picks the batch size best at its GPUs.
//!
//! `apps` (the goodput model and the six applications), `profiles` (generated from the
//! artifact's profiles by `scripts/pollux_profiles.py`), `sim` (the artifact's cluster
//! simulation), `policies/` (one file each), `workload` (the artifact's workload files),
//! `params`.

pub mod apps;
pub mod fields;
pub mod params;
pub mod policies;
#[rustfmt::skip]
#[allow(clippy::unreadable_literal, clippy::excessive_precision)] // generated data
mod profiles;
pub mod sim;
pub mod workload;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

pub use params::{ElasticJob, ElasticParams, PolluxSpec};
pub use policies::ElasticPolicy;

use crate::labs::migration::PreemptionModel;
use sim::NS_PER_S;
use crate::report::{Cell, CounterTrack, KindDef, Lane, Report, Series, Span, Table, Timeline};
use crate::scenario::{input_error, InputFile, InputSlot, LabParams, ScenarioError};

/// The artifact's mean JCT per workload file at job load 1.0, s
/// (`simulator/results-jobload/<policy>-1.0/summary.json`, key `avgs`, workload-1 … 8).
pub const ARTIFACT_AVG_JCT_S: [(ElasticPolicy, [f64; 8]); 3] = [
    (
        ElasticPolicy::Pollux,
        [
            2088.8, 3322.9, 2188.5, 2721.0, 2673.7, 2446.1, 3616.1, 2951.9,
        ],
    ),
    (
        ElasticPolicy::Optimus,
        [
            4087.1, 6913.9, 3944.0, 5967.8, 5656.2, 5301.9, 7290.9, 6293.8,
        ],
    ),
    (
        ElasticPolicy::Tiresias,
        [
            2473.7, 5145.0, 3876.3, 3280.3, 3501.0, 3469.7, 5479.9, 5079.7,
        ],
    ),
];

impl LabParams for ElasticParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        run(self, progress)
    }

    const INPUTS: &'static [InputSlot] = &[InputSlot {
        name: "workload",
        help: "the jobs: a workload CSV in the Pollux artifact's format (name,time,application,num_replicas,batch_size)",
        many: false,
        carried: true,
    }];

    fn read_input(&mut self, file: &InputFile<'_>) -> Result<(), ScenarioError> {
        self.jobs = workload::parse_workload(file.text).map_err(|e| input_error(file, e))?;
        self.workload = 0;
        Ok(())
    }
}

/// Runs the scenario: every policy, then the Report.
///
/// # Errors
/// A field error naming what is wrong with the scenario.
pub fn run(
    params: &ElasticParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    params.validate()?;
    let runs = run_all(params, progress)?;
    Ok(build_report(params, &runs))
}

/// One policy's run with its jobs' names.
pub struct PolicyRun {
    /// The policy.
    pub policy: ElasticPolicy,
    /// The simulation's outcome.
    pub run: sim::Run,
}

/// The jobs of the scenario as `policy` runs them: Pollux's jobs pick their batch size (NCF
/// keeps 32,768, as in the artifact), the baselines' keep the tuned one.
///
/// # Errors
/// A bad workload.
pub fn jobs_for(
    params: &ElasticParams,
    policy: ElasticPolicy,
) -> Result<Vec<sim::Job>, ScenarioError> {
    let spec = params.workload_jobs()?;
    let mut jobs = Vec::with_capacity(spec.len());
    for (i, j) in spec.iter().enumerate() {
        let Some(app) = apps::app(&j.app) else {
            return Err(ScenarioError::field(
                format!("elastic.jobs[{i}].app"),
                format!("unknown application '{}'", j.app),
            ));
        };
        let target = if policy.adapts_batch_size() {
            (app.name == "ncf").then_some(32_768)
        } else {
            Some(j.batch_size)
        };
        jobs.push(sim::Job::new(
            app,
            j.submit_s * NS_PER_S,
            j.replicas,
            target,
        ));
    }
    Ok(jobs)
}

/// Every policy of the scenario; `progress(done, total)` counts completed jobs over every
/// policy's run.
///
/// # Errors
/// A bad workload.
pub fn run_all(
    params: &ElasticParams,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<PolicyRun>, ScenarioError> {
    let total = params.policies.len();
    let mut out = Vec::with_capacity(total);
    let cluster_gpus = params.nodes * params.gpus_per_node;
    let pause_ns: Vec<u64> = (0..=cluster_gpus)
        .map(|g| params.restart_pause_s(g.max(1)) * NS_PER_S)
        .collect();
    for (k, &policy) in params.policies.iter().enumerate() {
        let jobs = jobs_for(params, policy)?;
        let mut scheduler = policy.build(&params.pollux);
        let n = jobs.len();
        let run = sim::simulate(
            jobs,
            params.nodes,
            params.gpus_per_node,
            u64::from(params.interval_s) * NS_PER_S,
            u64::from(params.restart_s) * NS_PER_S,
            &pause_ns,
            scheduler.as_mut(),
            &mut |done, _| progress(k * n + done as usize, total * n),
        );
        out.push(PolicyRun { policy, run });
        progress((k + 1) * n, total * n);
    }
    Ok(out)
}

/// The span kinds of the per-job timelines: what a job is doing, and on how many GPUs.
pub const KINDS: [KindDef; 7] = [
    KindDef {
        cat: "wait",
        label: "waiting",
        meaning: "Submitted, holding no GPUs.",
        colour: "#b8b8b8",
        trace_colour: "grey",
    },
    KindDef {
        cat: "restart",
        label: "restarting",
        meaning: "Checkpoint, restart and restore after its GPUs changed (first start included): GPUs held, no progress.",
        colour: "#e8913a",
        trace_colour: "bad",
    },
    KindDef {
        cat: "gpu1",
        label: "1 GPU",
        meaning: "Training on one GPU.",
        colour: "#c6dbef",
        trace_colour: "thread_state_runnable",
    },
    KindDef {
        cat: "gpu2",
        label: "2–4 GPUs",
        meaning: "Training on 2 to 4 GPUs.",
        colour: "#6baed6",
        trace_colour: "rail_load",
    },
    KindDef {
        cat: "gpu5",
        label: "5–8 GPUs",
        meaning: "Training on 5 to 8 GPUs.",
        colour: "#3182bd",
        trace_colour: "thread_state_running",
    },
    KindDef {
        cat: "gpu9",
        label: "9–16 GPUs",
        meaning: "Training on 9 to 16 GPUs.",
        colour: "#08519c",
        trace_colour: "rail_animation",
    },
    KindDef {
        cat: "gpu17",
        label: "17+ GPUs",
        meaning: "Training on 17 GPUs or more.",
        colour: "#08306b",
        trace_colour: "olive",
    },
];

/// The span category of a job training on `gpus` GPUs.
fn gpu_cat(gpus: u32) -> &'static str {
    match gpus {
        0 | 1 => "gpu1",
        2..=4 => "gpu2",
        5..=8 => "gpu5",
        9..=16 => "gpu9",
        _ => "gpu17",
    }
}


/// One policy's run as a timeline: a lane per job (waiting, restarting, training on k GPUs)
/// and the cluster's allocated GPUs.
fn timeline(
    policy: ElasticPolicy,
    run: &sim::Run,
    names: &[String],
    restart_s: u64,
) -> Timeline {
    let mut lanes = Vec::with_capacity(run.jobs.len());
    for (i, job) in run.jobs.iter().enumerate() {
        let end = job.completion_ns.unwrap_or(run.end_ns);
        let mut spans = Vec::new();
        let mut push = |from: u64, to: u64, name: String, cat: &str| {
            if to > from {
                spans.push(Span {
                    start_ns: from,
                    dur_ns: to - from,
                    name,
                    cat: cat.into(),
                });
            }
        };
        let first = job.history.first().map_or(end, |c| c.t_ns.min(end));
        push(job.submit_ns, first, "waiting".into(), "wait");
        for (k, c) in job.history.iter().enumerate() {
            let to = job.history.get(k + 1).map_or(end, |n| n.t_ns).min(end);
            if c.gpus == 0 {
                push(c.t_ns, to, "waiting".into(), "wait");
                continue;
            }
            let what = format!(
                "{} GPU{} on {} node{}, batch {}",
                c.gpus,
                if c.gpus == 1 { "" } else { "s" },
                c.nodes,
                if c.nodes == 1 { "" } else { "s" },
                c.batch
            );
            let paused = (c.t_ns + restart_s * NS_PER_S).min(to);
            push(c.t_ns, paused, format!("restart onto {what}"), "restart");
            push(paused, to, what, gpu_cat(c.gpus));
        }
        lanes.push(Lane {
            name: names.get(i).cloned().unwrap_or_else(|| format!("job {i}")),
            spans,
        });
    }
    let mut tl = Timeline {
        name: policy.label().into(),
        lanes,
        counters: vec![CounterTrack {
            name: "GPUs allocated".into(),
            unit: "GPUs".into(),
            points: run
                .samples
                .iter()
                .map(|s| (s.t_ns, f64::from(s.gpus)))
                .collect(),
        }],
        kinds: Vec::new(),
    };
    tl.declare(&[&KINDS]);
    tl
}

fn round1(v: f64) -> f64 {
    libm::round(v * 10.0) / 10.0
}

fn round2(v: f64) -> f64 {
    libm::round(v * 100.0) / 100.0
}

/// Figures of one run.
struct Figures {
    done: usize,
    avg_jct_s: f64,
    p99_jct_s: f64,
    makespan_s: f64,
    gpu_util_percent: f64,
    restarts_per_job: f64,
    mean_gpus_running: f64,
}

fn figures(params: &ElasticParams, run: &sim::Run) -> Figures {
    let mut jct: Vec<f64> = run
        .jobs
        .iter()
        .filter_map(|j| j.completion_ns.map(|c| ((c - j.submit_ns) / NS_PER_S) as f64))
        .collect();
    jct.sort_by(f64::total_cmp);
    let done = jct.len();
    let avg = jct.iter().sum::<f64>() / done.max(1) as f64;
    let p99 = crate::units::nearest_rank(done, 0.99).map_or(0.0, |k| jct[k]);
    let first = run.jobs.iter().map(|j| j.submit_ns).min().unwrap_or(0);
    let last = run
        .jobs
        .iter()
        .map(|j| j.completion_ns.unwrap_or(run.end_ns))
        .max()
        .unwrap_or(0);
    let makespan = ((last - first) / NS_PER_S) as f64;
    let gpus = f64::from(params.nodes * params.gpus_per_node);
    let held: u64 = run.jobs.iter().map(|j| j.gpu_s_held).sum();
    let util = if makespan > 0.0 {
        held as f64 * 100.0 / (gpus * makespan)
    } else {
        0.0
    };
    let restarts: u32 = run.jobs.iter().map(|j| j.num_restarts.unwrap_or(0)).sum();
    let busy: Vec<&sim::Sample> = run.samples.iter().filter(|s| s.running > 0).collect();
    let mean_gpus = busy
        .iter()
        .map(|s| f64::from(s.gpus) / f64::from(s.running))
        .sum::<f64>()
        / busy.len().max(1) as f64;
    Figures {
        done,
        avg_jct_s: avg,
        p99_jct_s: p99,
        makespan_s: makespan,
        gpu_util_percent: util,
        restarts_per_job: f64::from(restarts) / run.jobs.len().max(1) as f64,
        mean_gpus_running: mean_gpus,
    }
}

/// The Report: one row per policy, the artifact's figures beside ours when the workload is
/// one of its files, GPUs in use over time.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn build_report(params: &ElasticParams, runs: &[PolicyRun]) -> Report {
    let n_jobs = runs.first().map_or(0, |r| r.run.jobs.len());
    let source: String = match params.workload {
        0 => format!("{n_jobs} jobs given inline"),
        k => format!("the Pollux artifact's workload-{k} ({n_jobs} jobs)"),
    };
    let restart = match &params.restart_cost {
        PreemptionModel::Fixed => format!("{} s per restart", params.restart_s),
        PreemptionModel::Migration { option, params: m } => {
            let lo = params.restart_pause_s(1);
            let hi = params.restart_pause_s(params.nodes * params.gpus_per_node);
            let range = if lo == hi {
                format!("{lo} s")
            } else {
                format!("{lo}–{hi} s by GPU count")
            };
            format!(
                "restarts priced by the migration lab ({}, {}: {range}; Pollux's fitness charges {} s)",
                option.id(),
                m.job.name,
                params.restart_s
            )
        }
    };
    let mut report = Report {
        lab: "elastic".into(),
        title: format!(
            "Elastic training: {source} on {} nodes × {} GPUs, a decision every {} s, {restart}",
            params.nodes, params.gpus_per_node, params.interval_s
        ),
        ..Report::default()
    };
    let artifact = |p: ElasticPolicy| -> Option<f64> {
        let k = params.workload as usize;
        if !(1..=8).contains(&k)
            || params.nodes != 16
            || params.gpus_per_node != 4
            || params.interval_s != 60
            || params.restart_s != 30
            || !params.restart_cost.is_fixed()
        {
            return None;
        }
        ARTIFACT_AVG_JCT_S
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, v)| v[k - 1])
    };
    let names: Vec<String> = params
        .workload_jobs()
        .map(|jobs| jobs.into_iter().map(|j| j.name).collect())
        .unwrap_or_default();
    let mut rows = Vec::new();
    let mut avg: Vec<(ElasticPolicy, f64)> = Vec::new();
    for r in runs {
        report.timelines.push(timeline(
            r.policy,
            &r.run,
            &names,
            u64::from(params.restart_s),
        ));
        let f = figures(params, &r.run);
        let id = r.policy.id();
        let label = r.policy.label();
        report.push_metric(
            &format!("{id}.avg_jct_s"),
            &format!("{label}: average JCT"),
            round1(f.avg_jct_s),
            "s",
        );
        report.push_metric(
            &format!("{id}.makespan_s"),
            &format!("{label}: makespan"),
            round1(f.makespan_s),
            "s",
        );
        avg.push((r.policy, f.avg_jct_s));
        rows.push(vec![
            Cell::Text(label.into()),
            Cell::Num(f.done as f64),
            Cell::Num(round2(f.avg_jct_s / 3600.0)),
            artifact(r.policy).map_or(Cell::Missing, |v| Cell::Num(round2(v / 3600.0))),
            Cell::Num(round2(f.p99_jct_s / 3600.0)),
            Cell::Num(round2(f.makespan_s / 3600.0)),
            Cell::Num(round1(f.gpu_util_percent)),
            Cell::Num(round1(f.mean_gpus_running)),
            Cell::Num(round1(f.restarts_per_job)),
            Cell::Num(r.run.rounds as f64),
        ]);
        report.series.push(Series {
            name: label.into(),
            chart: "elastic.gpus".into(),
            x_label: "time (h)".into(),
            y_label: "GPUs allocated".into(),
            points: r
                .run
                .samples
                .iter()
                .map(|s| ((s.t_ns / NS_PER_S) as f64 / 3600.0, f64::from(s.gpus)))
                .collect(),
        });
        report.series.push(Series {
            name: label.into(),
            chart: "elastic.waiting".into(),
            x_label: "time (h)".into(),
            y_label: "jobs waiting (submitted, no GPUs)".into(),
            points: r
                .run
                .samples
                .iter()
                .map(|s| ((s.t_ns / NS_PER_S) as f64 / 3600.0, f64::from(s.active - s.running)))
                .collect(),
        });
    }
    report.tables.push(Table {
        key: "policies".into(),
        title: "Per policy (JCT = completion − submission; the artifact's column: its own run of the same workload file)".into(),
        columns: vec![
            "policy".into(),
            "jobs done".into(),
            "average JCT (h)".into(),
            "artifact's average JCT (h)".into(),
            "p99 JCT (h)".into(),
            "makespan (h)".into(),
            "GPU time held (% of cluster × makespan)".into(),
            "mean GPUs per running job".into(),
            "restarts per job".into(),
            "rounds".into(),
        ],
        rows,
    });
    let find = |p: ElasticPolicy| avg.iter().find(|(q, _)| *q == p).map(|(_, v)| *v);
    if let Some(pollux) = find(ElasticPolicy::Pollux) {
        for base in [ElasticPolicy::Optimus, ElasticPolicy::Tiresias] {
            if let Some(b) = find(base).filter(|b| *b > 0.0) {
                let ours = (1.0 - pollux / b) * 100.0;
                let theirs = match (artifact(ElasticPolicy::Pollux), artifact(base)) {
                    (Some(p), Some(q)) => format!(
                        " (the artifact's own run of this file: {:.0} % lower)",
                        (1.0 - p / q) * 100.0
                    ),
                    _ => String::new(),
                };
                report.findings.push(format!(
                    "Pollux's average JCT is {ours:.0} % lower than {}'s{theirs}.",
                    base.label()
                ));
            }
        }
    }
    report.findings.push(
        "Every interval Pollux re-chooses all jobs' GPUs for the highest harmonic mean of their goodput speedups (each job's goodput — throughput × statistical efficiency at the batch size it then picks — over its goodput at a fair share), charging each change a restart, so GPUs go where they add the most useful progress without starving any job; the baselines keep each job's tuned GPU count (Tiresias) or batch size (Optimus).".into(),
    );
    report
}
