//! The fairness lab's Report: the comparison table, headline metrics, charts, one timeline per
//! policy and findings.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::job::Trace;
use super::metrics::{colocation_metrics, sample_stats, ColocationMetrics, PolicyMetrics};
use super::params::FairnessParams;
use super::policies::PolicyKind;
use super::sim::PolicyRun;
use crate::report::{Cell, CounterTrack, Lane, Report, Series, Span, Table, Timeline};

/// What the Report reads of one policy's run ([`digest`]). A run's digest is a small part of
/// the run (no per-job state, no segments), so the playground can run the policies in several
/// Web Workers and send only the digests to the page, which builds the same Report from them
/// ([`build`]); every field survives a JSON round trip exactly (finite values only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDigest {
    /// The policy.
    pub kind: PolicyKind,
    /// Its metrics ([`super::metrics::compute`]).
    pub metrics: PolicyMetrics,
    /// The inference service's figures, with a service.
    pub colocation: Option<ColocationMetrics>,
    /// (time h, waiting jobs) at each sample.
    pub queue: Vec<(f64, f64)>,
    /// (time h, mean shortfall of F_u, lowest F_u capped at 10) at each sample with an
    /// active tenant.
    pub tenant_f: Vec<(f64, f64, f64)>,
    /// The run's timeline (a lane and a counter per tenant).
    pub timeline: Timeline,
    /// True when the timeline is coarsened (too many spans or counter points).
    pub timeline_cut: bool,
    /// On a cluster of several GPU types, Gavel's objective over the run
    /// ([`normalized_throughputs`]): (10th percentile, median) over the finished jobs.
    pub normalized_throughput: Option<(f64, f64)>,
}

/// Each finished job's normalised throughput over its time in the system, Gavel's objective
/// (`max_min_fairness.py` lines 59–72) averaged over the job's life:
/// s_j · (D_j / JCT_j) / p_j, with D_j its work at the reference speed, s_j its GPUs and
/// p_j = Σ_k speed_jk · n_k / N its speed with time spread over the types in proportion to their
/// GPUs. A job that ran all its time on such a spread has s_j (its GPUs' worth); an equal share
/// of the cluster's time is N / jobs. Sorted ascending; empty with one GPU type.
#[must_use]
pub fn normalized_throughputs(params: &FairnessParams, run: &PolicyRun) -> Vec<f64> {
    if params.cluster.type_count() < 2 {
        return Vec::new();
    }
    let mut gpus = alloc::vec![0u64; params.cluster.type_count()];
    for t in params.cluster.node_types() {
        gpus[t as usize] += u64::from(params.cluster.gpus_per_node);
    }
    let total: u64 = gpus.iter().sum();
    let mut out: Vec<f64> = run
        .jobs
        .iter()
        .filter(|j| j.finish_ns != u64::MAX && j.finish_ns > j.submit_ns)
        .map(|j| {
            let spread: f64 = (0..gpus.len() as u32)
                .map(|k| j.speed_on(k) * gpus[k as usize] as f64 / total as f64)
                .sum();
            let rate = j.duration_ns as f64 / (j.finish_ns - j.submit_ns) as f64;
            f64::from(j.gpus) * rate / spread.max(f64::MIN_POSITIVE)
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

/// What the Report reads of the trace as simulated ([`super::usable_jobs`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceFacts {
    /// Jobs simulated.
    pub jobs: usize,
    /// Tenants.
    pub tenants: usize,
    /// Where the trace came from.
    pub source: String,
    /// Jobs that are the inference service's replicas.
    pub service_jobs: usize,
    /// Bad rows skipped while reading it.
    pub skipped_rows: usize,
}

impl TraceFacts {
    /// The facts of `trace`.
    #[must_use]
    pub fn of(trace: &Trace) -> TraceFacts {
        TraceFacts {
            jobs: trace.jobs.len(),
            tenants: trace.tenants.len(),
            source: trace.source.clone(),
            service_jobs: trace.jobs.iter().filter(|j| j.service).count(),
            skipped_rows: trace.skipped_rows,
        }
    }
}

/// The digest of `run`, one of the policies `params` ran on `trace`.
#[must_use]
pub fn digest(params: &FairnessParams, trace: &Trace, run: &PolicyRun) -> RunDigest {
    let (timeline, timeline_cut) = timeline(run, trace);
    RunDigest {
        kind: run.kind,
        metrics: super::metrics::compute(run),
        colocation: colocation_metrics(params, run),
        queue: run
            .samples
            .iter()
            .map(|s| (s.t_ns as f64 / 3.6e12, f64::from(s.queue_len)))
            .collect(),
        tenant_f: run
            .samples
            .iter()
            .filter_map(|s| {
                sample_stats(&s.tenant_f)
                    .map(|(short, _, low)| (s.t_ns as f64 / 3.6e12, short, low.min(10.0)))
            })
            .collect(),
        timeline,
        timeline_cut,
        normalized_throughput: {
            let n = normalized_throughputs(params, run);
            n.first().map(|_| (n[n.len() / 10], n[n.len() / 2]))
        },
    }
}

/// Most spans per timeline; beyond it the lanes are drawn at the sample instants (a finding
/// says so).
pub const MAX_SPANS: usize = 20_000;
/// Most counter points per timeline; beyond it counters are drawn at the sample instants.
pub const MAX_COUNTER_POINTS: usize = 50_000;

/// Below this an unfairness figure (a shortfall or a share of jobs) counts as zero: a ratio
/// against it is not comparable.
pub const NEAR_ZERO: f64 = 1e-3;

/// `base / astraea`, or "not comparable" when ASTRAEA's figure is near zero (∞ when the base's
/// is not).
fn ratio(base: f64, astraea: f64) -> Cell {
    ratio_cell(base, astraea, "ASTRAEA")
}

/// The same as text, for findings.
fn ratio_text(base: f64, astraea: f64) -> String {
    ratio_text_of(base, astraea, "ASTRAEA")
}

/// [`ratio_cell`] as text, for findings.
fn ratio_text_of(base: f64, of: f64, who: &str) -> String {
    match ratio_cell(base, of, who) {
        Cell::Num(v) => format!("{v:.2}×"),
        Cell::Text(t) => t,
        Cell::Missing => String::new(),
    }
}

/// Builds the Report of all runs on one trace from their digests, in the scenario's order.
/// `dropped` = jobs left out as unplaceable.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn build(
    params: &FairnessParams,
    trace: &TraceFacts,
    runs: &[RunDigest],
    dropped: super::Dropped,
) -> Report {
    let g = params.cluster.total_gpus();
    let mut report = Report {
        lab: "fairness".into(),
        title: format!(
            "GPU-cluster fairness: {} jobs of {} tenants on {g} GPUs ({} nodes × {}), {}{}",
            trace.jobs,
            trace.tenants,
            params.cluster.nodes,
            params.cluster.gpus_per_node,
            trace.source,
            if params.colocation.is_off() {
                String::new()
            } else {
                format!(
                    "; {} of the jobs are an inference service's replicas on its own {} servers (the last nodes)",
                    trace.service_jobs,
                    params.colocation.servers_peak
                )
            }
        ),
        ..Report::default()
    };
    report.push_metric("trace.jobs", "Jobs", trace.jobs as f64, "count");
    report.push_metric(
        "trace.tenants",
        "Tenants",
        trace.tenants as f64,
        "count",
    );
    report.push_metric("cluster.gpus", "GPUs", g as f64, "count");
    let astraea = runs
        .iter()
        .position(|r| r.kind == PolicyKind::Astraea)
        .map(|i| &runs[i].metrics);
    let mut table = Table {
        key: "policies".into(),
        title: "Policies compared on the same trace".into(),
        columns: [
            "policy",
            "avg JCT (s)",
            "p99 JCT (s)",
            "avg queueing delay (s)",
            "makespan (s)",
            "utilisation",
            "tenant unfairness (mean shortfall of F_u)",
            "tenant F_u spread (std)",
            "share of time tenants < 0.95 of deserved",
            "job-fair share (F_j in [0.95, 1/0.95])",
            "job loss share (F_j < 0.95)",
            "job benefit share (F_j > 1/0.95)",
            "Jain's index",
            "preemptions",
            "fragmentation (free GPUs on partly used nodes)",
            "tenant unfairness × vs ASTRAEA",
            "job loss share × vs ASTRAEA",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        rows: Vec::new(),
    };
    for (run, m) in runs.iter().map(|r| (r, &r.metrics)) {
        let id = run.kind.id();
        let label = run.kind.label();
        report.push_metric(
            &format!("{id}.avg_jct_s"),
            &format!("{label} average JCT"),
            m.avg_jct_s,
            "s",
        );
        report.push_metric(
            &format!("{id}.p99_jct_s"),
            &format!("{label} p99 JCT"),
            m.p99_jct_s,
            "s",
        );
        report.push_metric(
            &format!("{id}.tenant_unfairness"),
            &format!("{label} tenant unfairness (mean shortfall of F_u)"),
            m.tenant_unfairness,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.job_fair_share"),
            &format!("{label} share of jobs with F_j in [0.95, 1/0.95]"),
            m.job_fair_share,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.job_loss_share"),
            &format!("{label} share of jobs with F_j < 0.95 (job-level unfairness)"),
            m.job_loss_share,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.job_benefit_share"),
            &format!("{label} share of jobs with F_j > 1/0.95"),
            m.job_benefit_share,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.jain"),
            &format!("{label} Jain's index"),
            m.jain,
            "ratio",
        );
        let (tu, ju) = match astraea {
            Some(a) => (
                ratio(m.tenant_unfairness, a.tenant_unfairness),
                ratio(m.job_loss_share, a.job_loss_share),
            ),
            None => (Cell::Missing, Cell::Missing),
        };
        table.rows.push(
            [
                Cell::Text(label.into()),
                Cell::Num(round3(m.avg_jct_s)),
                Cell::Num(round3(m.p99_jct_s)),
                Cell::Num(round3(m.avg_queue_s)),
                Cell::Num(round3(m.makespan_s)),
                Cell::Num(round4(m.utilisation)),
                Cell::Num(round4(m.tenant_unfairness)),
                Cell::Num(round4(m.tenant_spread)),
                Cell::Num(round4(m.below_share)),
                Cell::Num(round4(m.job_fair_share)),
                Cell::Num(round4(m.job_loss_share)),
                Cell::Num(round4(m.job_benefit_share)),
                Cell::Num(round4(m.jain)),
                Cell::Num(m.preemptions as f64),
                Cell::Num(round4(m.fragmentation)),
                tu,
                ju,
            ]
            .into_iter()
            .collect(),
        );
        report.series.push(Series {
            name: label.into(),
            chart: "jct_cdf".into(),
            x_label: "JCT (s)".into(),
            y_label: "share of jobs".into(),
            points: cdf_points(&m.jcts_s),
        });
        report.series.push(Series {
            name: label.into(),
            chart: "job_fairness_cdf".into(),
            x_label: "F_j = U_j / D_j at the finish (capped at 3)".into(),
            y_label: "share of jobs".into(),
            points: cdf_points(&m.job_f_sorted)
                .into_iter()
                .map(|(x, y)| (x.min(3.0), y))
                .collect(),
        });
        report.series.push(Series {
            name: label.into(),
            chart: "queue_length".into(),
            x_label: "time (h)".into(),
            y_label: "waiting jobs".into(),
            points: run.queue.clone(),
        });
    }
    report.tables.push(table);
    if runs.iter().any(|r| r.metrics.deadlines.slo_jobs > 0) {
        let deadlines = deadline_table(&mut report, runs);
        report.tables.push(deadlines);
    }
    if runs.iter().any(|r| r.normalized_throughput.is_some()) {
        let table = normalized_table(&mut report, runs);
        report.tables.push(table);
    }
    let colocation: Vec<ColocationMetrics> = runs.iter().filter_map(|r| r.colocation).collect();
    if colocation.len() == runs.len() && !runs.is_empty() {
        let table = colocation_table(&mut report, runs, &colocation);
        report.tables.push(table);
    }
    // Fairness over time: ASTRAEA and the best baseline.
    let best = best_baseline(runs);
    for i in runs
        .iter()
        .position(|r| r.kind == PolicyKind::Astraea)
        .into_iter()
        .chain(best)
    {
        let run = &runs[i];
        let label = run.kind.label();
        report.series.push(Series {
            name: format!("{label}: mean shortfall of F_u"),
            chart: "tenant_fairness_over_time".into(),
            x_label: "time (h)".into(),
            y_label: "F_u = U_u / D_u over the window".into(),
            points: run.tenant_f.iter().map(|&(t, short, _)| (t, short)).collect(),
        });
        report.series.push(Series {
            name: format!("{label}: lowest F_u"),
            chart: "tenant_fairness_over_time".into(),
            x_label: "time (h)".into(),
            y_label: "F_u = U_u / D_u over the window".into(),
            points: run.tenant_f.iter().map(|&(t, _, low)| (t, low)).collect(),
        });
    }
    // Timelines, ASTRAEA first.
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| (runs[i].kind != PolicyKind::Astraea, i));
    let mut truncated = Vec::new();
    for i in order {
        if runs[i].timeline_cut {
            truncated.push(runs[i].kind.label());
        }
        report.timelines.push(runs[i].timeline.clone());
    }
    report.findings = findings(
        params,
        trace,
        runs,
        &colocation,
        dropped,
        &truncated,
    );
    report
}

/// Gavel's objective for every policy on a cluster of several GPU types
/// ([`normalized_throughputs`]); also pushed as metrics.
fn normalized_table(report: &mut Report, runs: &[RunDigest]) -> Table {
    let mut table = Table {
        key: "normalized_throughput".into(),
        title: "Gavel's objective per job: GPUs × work rate over its time in the system ÷ its speed on a proportional spread of the GPU types (higher is better)".into(),
        columns: ["policy", "10th percentile", "median"]
            .into_iter()
            .map(String::from)
            .collect(),
        rows: Vec::new(),
    };
    for run in runs {
        let Some((p10, median)) = run.normalized_throughput else {
            continue;
        };
        let id = run.kind.id();
        let label = run.kind.label();
        report.push_metric(
            &format!("{id}.p10_normalized_throughput"),
            &format!("{label} 10th percentile of jobs' normalised throughput (Gavel's objective)"),
            round4(p10),
            "ratio",
        );
        table.rows.push(alloc::vec![
            Cell::Text(label.into()),
            Cell::Num(round4(p10)),
            Cell::Num(round4(median)),
        ]);
    }
    table
}

/// The deadline metrics for every policy (a trace with SLO jobs): the deadline miss rate and
/// the best-effort JCT, with their ratios against slot admission's; also pushed as metrics.
fn deadline_table(report: &mut Report, runs: &[RunDigest]) -> Table {
    let chronus = runs
        .iter()
        .position(|r| r.kind == PolicyKind::SlotAdmission)
        .map(|i| runs[i].metrics.deadlines);
    let mut table = Table {
        key: "deadlines".into(),
        title: "Deadlines: SLO jobs met, and best-effort JCT".into(),
        columns: [
            "policy",
            "SLO jobs",
            "met their deadline",
            "deadline miss rate",
            "admitted (admission control)",
            "admitted and met",
            "best-effort jobs",
            "best-effort avg JCT (s)",
            "miss rate × vs slot admission",
            "best-effort JCT × vs slot admission",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        rows: Vec::new(),
    };
    let soft = runs.iter().any(|r| r.metrics.deadlines.soft_jobs > 0);
    if soft {
        table.columns.push("value lost (soft deadlines)".into());
    }
    for (run, m) in runs.iter().map(|r| (r, &r.metrics)) {
        let d = &m.deadlines;
        let id = run.kind.id();
        let label = run.kind.label();
        if soft {
            report.push_metric(
                &format!("{id}.deadline_value_lost"),
                &format!("{label} value lost per SLO job (soft deadlines)"),
                d.value_lost_rate(),
                "ratio",
            );
        }
        report.push_metric(
            &format!("{id}.deadline_miss_rate"),
            &format!("{label} deadline miss rate of SLO jobs"),
            d.miss_rate(),
            "ratio",
        );
        report.push_metric(
            &format!("{id}.best_effort_avg_jct_s"),
            &format!("{label} best-effort average JCT"),
            d.best_effort_avg_jct_s,
            "s",
        );
        let (miss_x, be_x) = match chronus {
            Some(c) => (
                match ratio_cell(d.miss_rate(), c.miss_rate(), "slot admission") {
                    Cell::Num(v) => Cell::Num(round4(v)),
                    other => other,
                },
                if c.best_effort_finished > 0 && c.best_effort_avg_jct_s > 0.0 {
                    Cell::Num(round4(d.best_effort_avg_jct_s / c.best_effort_avg_jct_s))
                } else {
                    Cell::Text("no best-effort jobs".into())
                },
            ),
            None => (Cell::Missing, Cell::Missing),
        };
        let admission = run.kind == PolicyKind::SlotAdmission;
        table.rows.push(alloc::vec![
            Cell::Text(label.into()),
            Cell::Num(d.slo_jobs as f64),
            Cell::Num(d.met as f64),
            Cell::Num(round4(d.miss_rate())),
            if admission {
                Cell::Num(d.admitted as f64)
            } else {
                Cell::Text("none".into())
            },
            if admission {
                Cell::Num(d.admitted_met as f64)
            } else {
                Cell::Missing
            },
            Cell::Num(d.best_effort_jobs as f64),
            Cell::Num(round3(d.best_effort_avg_jct_s)),
            miss_x,
            be_x,
        ]);
        if soft {
            if let Some(row) = table.rows.last_mut() {
                row.push(Cell::Num(round4(d.value_lost_rate())));
            }
        }
    }
    table
}

/// The inference service's SLO and what training paid, for every policy (a trace with a
/// service); also pushed as metrics.
fn colocation_table(report: &mut Report, runs: &[RunDigest], m: &[ColocationMetrics]) -> Table {
    let mut table = Table {
        key: "colocation".into(),
        title: "Training beside inference: the service's SLO and training's JCT".into(),
        columns: [
            "policy",
            "replicas (scale-ups)",
            "late or interrupted",
            "SLO violation rate",
            "unserved server-hours",
            "longest wait to serve (s)",
            "training avg JCT (s)",
            "training avg queueing (s)",
            "training preemptions",
            "GPU-hours lost to preemption",
            "GPU-hours loaned to training",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        rows: Vec::new(),
    };
    for (run, c) in runs.iter().zip(m) {
        let id = run.kind.id();
        let label = run.kind.label();
        report.push_metric(
            &format!("{id}.service_slo_violation_rate"),
            &format!("{label}: share of the service's replicas late or interrupted"),
            c.slo_violation_rate(),
            "ratio",
        );
        report.push_metric(
            &format!("{id}.training_avg_jct_s"),
            &format!("{label}: training jobs' average JCT"),
            c.training_avg_jct_s,
            "s",
        );
        table.rows.push(alloc::vec![
            Cell::Text(label.into()),
            Cell::Num(c.replicas as f64),
            Cell::Num(c.late as f64),
            Cell::Num(round4(c.slo_violation_rate())),
            Cell::Num(round3(c.unserved_server_h)),
            Cell::Num(round3(c.worst_wait_s)),
            Cell::Num(round3(c.training_avg_jct_s)),
            Cell::Num(round3(c.training_avg_queue_s)),
            Cell::Num(c.training_preemptions as f64),
            Cell::Num(round3(c.preemption_lost_gpu_h)),
            Cell::Num(round3(c.loaned_gpu_h)),
        ]);
    }
    table
}

/// What loaning bought training against separate clusters, and what it cost the service.
/// `colocation` holds every run's figures, in run order (empty without a service).
fn colocation_finding(
    params: &FairnessParams,
    runs: &[RunDigest],
    colocation: &[ColocationMetrics],
) -> Option<String> {
    let of = |k: PolicyKind| {
        let i = runs.iter().position(|r| r.kind == k)?;
        colocation.get(i).copied()
    };
    let loan = of(PolicyKind::LoanReclaim)?;
    let mut line = format!(
        "Training beside inference: with capacity loaning, training ran {:.0} GPU-hours on the service's idle servers, {} training jobs were stopped to give servers back ({:.1} GPU-hours lost), and {} of {} replicas were late or interrupted (SLO {} s; longest wait {:.1} s).",
        loan.loaned_gpu_h,
        loan.training_preemptions,
        loan.preemption_lost_gpu_h,
        loan.late,
        loan.replicas,
        params.colocation.slo_s,
        loan.worst_wait_s
    );
    if let Some(sep) = of(PolicyKind::SeparateClusters) {
        line.push_str(&format!(
            " Separate clusters: training average JCT {:.0} s against {:.0} s with loaning ({}), queueing {:.0} s against {:.0} s ({}), {} replicas late.",
            sep.training_avg_jct_s,
            loan.training_avg_jct_s,
            ratio_text_of(sep.training_avg_jct_s, loan.training_avg_jct_s, "loaning"),
            sep.training_avg_queue_s,
            loan.training_avg_queue_s,
            ratio_text_of(sep.training_avg_queue_s, loan.training_avg_queue_s, "loaning"),
            sep.late
        ));
    }
    Some(line)
}

/// What slot admission bought against the baseline that missed the fewest deadlines.
fn deadline_finding(runs: &[RunDigest]) -> Option<String> {
    let c = runs.iter().position(|r| r.kind == PolicyKind::SlotAdmission)?;
    let d = &runs[c].metrics.deadlines;
    if d.slo_jobs == 0 {
        return None;
    }
    let mut line = format!(
        "Deadlines: slot admission (after Chronus) admitted {} of {} SLO jobs and {} of those met their deadline; with the rejected ones run as best-effort, {} of {} met theirs (miss rate {:.1} %).",
        d.admitted,
        d.slo_jobs,
        d.admitted_met,
        d.met,
        d.slo_jobs,
        100.0 * d.miss_rate()
    );
    let best = (0..runs.len()).filter(|&i| i != c).min_by(|&a, &b| {
        runs[a].metrics
            .deadlines
            .miss_rate()
            .total_cmp(&runs[b].metrics.deadlines.miss_rate())
            .then(a.cmp(&b))
    });
    if let Some(b) = best {
        let m = &runs[b].metrics.deadlines;
        let x = ratio_text_of(m.miss_rate(), d.miss_rate(), "slot admission");
        line.push_str(&format!(
            " The baseline that missed fewest, {}, missed {:.1} % (against slot admission's: {x}); best-effort average JCT {:.0} s under slot admission against {:.0} s.",
            runs[b].kind.label(),
            100.0 * m.miss_rate(),
            d.best_effort_avg_jct_s,
            m.best_effort_avg_jct_s
        ));
    }
    Some(line)
}

/// `base / of`, or "not comparable" when `of` (the system's figure, named `who`) is near zero.
fn ratio_cell(base: f64, of: f64, who: &str) -> Cell {
    if of >= NEAR_ZERO {
        Cell::Num(base / of)
    } else if base >= NEAR_ZERO {
        Cell::Text(format!("∞ ({who} ≈ 0)"))
    } else {
        Cell::Text("both ≈ 0: not comparable".into())
    }
}

fn round3(v: f64) -> f64 {
    crate::units::round_to(v, 3)
}
fn round4(v: f64) -> f64 {
    crate::units::round_to(v, 4)
}

/// Index of the baseline (not ASTRAEA) with the lowest tenant unfairness.
fn best_baseline(runs: &[RunDigest]) -> Option<usize> {
    (0..runs.len())
        .filter(|&i| runs[i].kind != PolicyKind::Astraea)
        .min_by(|&a, &b| {
            runs[a].metrics
                .tenant_unfairness
                .total_cmp(&runs[b].metrics.tenant_unfairness)
                .then(a.cmp(&b))
        })
}

fn cdf_points(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let steps = n.min(200);
    (1..=steps)
        .map(|k| {
            let rank = (k * n).div_ceil(steps);
            (round3(sorted[rank - 1]), rank as f64 / n as f64)
        })
        .collect()
}

/// A tenant's GPU count at each of the run's sample instants (the count in force then).
fn sampled(run: &PolicyRun, track: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(run.samples.len());
    let mut k = 0;
    for s in &run.samples {
        while k + 1 < track.len() && track[k + 1].0 <= s.t_ns {
            k += 1;
        }
        let v = track.get(k).filter(|p| p.0 <= s.t_ns).map_or(0, |p| p.1);
        out.push((s.t_ns, v));
    }
    out
}

/// Spans of constant, non-zero GPU count along a step track, equal neighbours merged, at most
/// `budget` of them; `true` if some were left out.
fn count_spans(track: &[(u64, u64)], cat: &str, budget: usize) -> (Vec<Span>, bool) {
    let mut spans: Vec<Span> = Vec::new();
    for w in track.windows(2) {
        let ((t0, v), (t1, _)) = (w[0], w[1]);
        if v == 0 || t1 == t0 {
            continue;
        }
        let name = format!("{v} GPUs");
        if let Some(last) = spans.last_mut() {
            if last.start_ns + last.dur_ns == t0 && last.name == name {
                last.dur_ns = t1 - last.start_ns;
                continue;
            }
        }
        if spans.len() == budget {
            return (spans, true);
        }
        spans.push(Span {
            start_ns: t0,
            dur_ns: t1 - t0,
            name,
            cat: String::from(cat),
        });
    }
    (spans, false)
}

/// One timeline: a lane per tenant with spans of constant GPU count, a counter per tenant.
/// Past [`MAX_SPANS`] spans (or [`MAX_COUNTER_POINTS`] counter points) in all, every tenant's
/// lane (or counter) is drawn at the run's sample instants instead, so each tenant keeps its
/// whole run rather than the first tenants using up the budget.
fn timeline(run: &PolicyRun, trace: &Trace) -> (Timeline, bool) {
    let mut tl = Timeline {
        name: run.kind.label().into(),
        ..Timeline::default()
    };
    let total_points: usize = run.tenant_gpus.iter().map(Vec::len).sum();
    let exact_spans: usize = run
        .tenant_gpus
        .iter()
        .map(|t| {
            t.windows(2)
                .filter(|w| w[0].1 > 0 && w[1].0 > w[0].0)
                .count()
        })
        .sum();
    let coarse = exact_spans > MAX_SPANS;
    let tenants = run.tenant_gpus.len().max(1);
    let mut cut = coarse;
    for (u, track) in run.tenant_gpus.iter().enumerate() {
        let name = trace
            .tenants
            .get(u)
            .cloned()
            .unwrap_or_else(|| format!("tenant {u}"));
        let samples = (coarse || total_points > MAX_COUNTER_POINTS).then(|| sampled(run, track));
        let shown: &[(u64, u64)] = match &samples {
            Some(s) if coarse => s,
            _ => track,
        };
        let budget = if coarse {
            MAX_SPANS / tenants
        } else {
            MAX_SPANS
        };
        let (spans, left_out) = count_spans(shown, &name, budget);
        cut |= left_out;
        if !spans.is_empty() {
            // One kind per tenant, coloured by its index in the trace, so a tenant keeps its
            // colour in every policy's timeline and in the page's cluster view.
            tl.kinds.push(crate::report::categorical_kind(
                u as u32,
                &name,
                &name,
                "GPUs held by this tenant's jobs (the span names the count)",
            ));
        }
        tl.lanes.push(Lane {
            name: name.clone(),
            spans,
        });
        let points: Vec<(u64, f64)> = match &samples {
            Some(s) if total_points > MAX_COUNTER_POINTS => {
                cut = true;
                s.iter().map(|&(t, v)| (t, v as f64)).collect()
            }
            _ => track.iter().map(|&(t, v)| (t, v as f64)).collect(),
        };
        tl.counters.push(CounterTrack {
            name: format!("{name} GPUs"),
            unit: "gpus".into(),
            points,
        });
    }
    (tl, cut)
}

/// ASTRAEA against the baselines: tenant and job unfairness against the fairest (`best`) and
/// least fair baseline, its jobs' fairness bands, and its JCT against the fastest baseline.
fn astraea_findings(runs: &[RunDigest], best: Option<usize>) -> Vec<String> {
    let mut out = Vec::new();
    let a = runs.iter().position(|r| r.kind == PolicyKind::Astraea);
    let (Some(a), Some(b)) = (a, best) else {
        return out;
    };
    let (ma, mb) = (&runs[a].metrics, &runs[b].metrics);
    let x = ratio_text(mb.tenant_unfairness, ma.tenant_unfairness);
    out.push(format!(
        "Tenant-level unfairness (time-averaged mean shortfall of F_u): ASTRAEA {:.4} against {:.4} for the fairest baseline, {} ({x}).",
        ma.tenant_unfairness,
        mb.tenant_unfairness,
        runs[b].kind.label()
    ));
    let worst = (0..runs.len()).filter(|&i| i != a).max_by(|&x, &y| {
        runs[x].metrics
            .tenant_unfairness
            .total_cmp(&runs[y].metrics.tenant_unfairness)
            .then(y.cmp(&x))
    });
    if let Some(w) = worst {
        out.push(format!(
            "The least fair baseline to tenants, {} ({:.4}), against ASTRAEA: tenant unfairness {}; job-level unfairness (share of jobs with F_j < 0.95: {:.1} % against {:.1} %) {}.",
            runs[w].kind.label(),
            runs[w].metrics.tenant_unfairness,
            ratio_text(runs[w].metrics.tenant_unfairness, ma.tenant_unfairness),
            runs[w].metrics.job_loss_share * 100.0,
            ma.job_loss_share * 100.0,
            ratio_text(runs[w].metrics.job_loss_share, ma.job_loss_share),
        ));
    }
    out.push(format!(
        "ASTRAEA's jobs at their finish (the artifact's bands): {:.1} % fair (F_j in [0.95, 1/0.95]), {:.1} % loss (< 0.95), {:.1} % benefit (> 1/0.95).",
        ma.job_fair_share * 100.0,
        ma.job_loss_share * 100.0,
        ma.job_benefit_share * 100.0
    ));
    let best_jct = (0..runs.len()).filter(|&i| i != a).min_by(|&x, &y| {
        runs[x].metrics
            .avg_jct_s
            .total_cmp(&runs[y].metrics.avg_jct_s)
            .then(x.cmp(&y))
    });
    if let Some(j) = best_jct {
        out.push(format!(
            "Average JCT: ASTRAEA {:.0} s against {:.0} s for the fastest baseline, {} ({:+.1} %).",
            ma.avg_jct_s,
            runs[j].metrics.avg_jct_s,
            runs[j].kind.label(),
            (ma.avg_jct_s / runs[j].metrics.avg_jct_s - 1.0) * 100.0
        ));
    }
    out
}

fn findings(
    params: &FairnessParams,
    trace: &TraceFacts,
    runs: &[RunDigest],
    colocation: &[ColocationMetrics],
    dropped: super::Dropped,
    truncated: &[&str],
) -> Vec<String> {
    let mut out = Vec::new();
    let best = best_baseline(runs);
    let costs = match &params.preemption {
        crate::labs::migration::PreemptionModel::Fixed => format!(
            "preemption costs {} s checkpoint + {} s resume for the global policies (the ASTRAEA family charges none, as its artifact; a delay job it preempts loses its lease's progress)",
            params.preempt_cost_s, params.resume_cost_s
        ),
        crate::labs::migration::PreemptionModel::Migration { option, .. } => format!(
            "preemption costs from the migration lab ({}): {:.2} s for a 1-GPU job, {:.2} s for an 8-GPU job",
            option.label(),
            params.preemption_cost_s(1),
            params.preemption_cost_s(8)
        ),
    };
    out.push(format!(
        "Tenant weights: {}; quotas Q_u = ⌊G·s_u/Σs⌋ of {} GPUs; leases {} s; {costs}; placement {}.",
        match &params.tenant_weights {
            super::params::TenantWeights::Equal => "equal".into(),
            super::params::TenantWeights::Demand =>
                "proportional to demand (Σ gⱼ·durationⱼ)".into(),
            super::params::TenantWeights::Shares(s) => format!("a share list of {} tenants", s.len()),
        },
        params.cluster.total_gpus(),
        params.lease_s,
        params.cluster.placement.id()
    ));
    if let Some(line) = deadline_finding(runs) {
        out.push(line);
    }
    if let Some(line) = colocation_finding(params, runs, colocation) {
        out.push(line);
    }
    out.extend(astraea_findings(runs, best));
    if runs.iter().any(|r| r.kind == PolicyKind::HeteroFairShare) && params.cluster.type_count() == 1 {
        out.push("With one GPU type heterogeneity-weighted fair share is weighted max-min fair share, re-evaluated once per round instead of at every event.".into());
    }
    if let Some(m) = runs.first().map(|r| &r.metrics) {
        out.push(format!(
            "Utilisation {:.1} % under {}; free GPUs sat on partly used nodes {:.1} % of the time on average (fragmentation).",
            m.utilisation * 100.0,
            runs[0].kind.label(),
            m.fragmentation * 100.0
        ));
    }
    let unfinished: usize = runs.iter().map(|r| r.metrics.unfinished).max().unwrap_or(0);
    if unfinished > 0 {
        out.push(format!("{unfinished} jobs never finished under at least one policy (they could not be placed)."));
    }
    if dropped.too_large > 0 {
        let outside = if params.colocation.is_off() {
            ""
        } else {
            " outside the inference service's servers"
        };
        out.push(format!("{} jobs ask for more GPUs than one GPU type of the cluster has{outside} (or for none) and were left out.", dropped.too_large));
    }
    if dropped.no_share > 0 {
        out.push(format!("{} jobs belong to tenants missing from the share list and were left out (as the ASTRAEA artifact drops them).", dropped.no_share));
    }
    if dropped.over_quota > 0 {
        out.push(format!("{} jobs ({:.1} GPU-hours) ask for more GPUs than their tenant's quota Q_u and were left out for every policy (the ASTRAEA machinery could never start them; the artifact drops them too).", dropped.over_quota, dropped.over_quota_gpu_h));
    }
    if trace.skipped_rows > 0 {
        out.push(format!(
            "{} bad rows of the trace were skipped.",
            trace.skipped_rows
        ));
    }
    if !truncated.is_empty() {
        out.push(format!(
            "Timelines of {} are coarsened: lanes at the {} s sample instants when there are more than {MAX_SPANS} spans, and counters when there are more than {MAX_COUNTER_POINTS} changes.",
            truncated.join(", "),
            params.window.bucket_s
        ));
    }
    out
}
