//! The sharing lab's Report: one row per policy (means over the seeds, read as FGD's artifact
//! reads its logs), the allocation curve per policy, the per-seed figures, the typical tasks,
//! and findings.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::cluster::{typical_tasks, Cluster, Pod};
use super::experiment::{allocated_by_percent, SeedRun, TYPICAL_COVERAGE_PERCENT};
use super::params::{SharingParams, GPU_MILLI};
use super::policies::SharingPolicy;
use crate::report::{Cell, Report, Series, Table};

/// The arrived percent below the inflation target at which the "at 100 %" column is read.
const FULL_PERCENT: u32 = 100;

/// Arrived percent from which the unallocated-GPUs chart starts (where the policies part).
const TAIL_FROM_PERCENT: u32 = 80;

/// Figures of one policy over its seeds.
struct PolicyFigures {
    policy: SharingPolicy,
    /// Mean allocated % at each whole arrived percent (None where no seed has a record).
    curve: Vec<Option<f64>>,
    /// Allocated % at the inflation target, per seed.
    at_target: Vec<f64>,
    /// Mean allocated % at 100 % arrived.
    at_full: Option<f64>,
    /// Mean unallocated GPUs at the end (idle milli ÷ 1000).
    idle_gpus: f64,
    /// Mean fragmentation when the requests reach the cluster's GPUs, % of its GPU milli.
    frag_percent: Option<f64>,
    /// Mean GPU pods that fit nowhere, and their GPUs.
    failed_gpu_pods: f64,
    failed_gpus: f64,
    /// Mean CPU pods that fit nowhere.
    failed_cpu_pods: f64,
    /// Mean GPUs partly allocated at the end.
    partial_gpus: f64,
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0u64), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn figures(params: &SharingParams, cluster_milli: u64, runs: &[SeedRun]) -> Vec<PolicyFigures> {
    let target = params.inflation_percent;
    params
        .policies
        .iter()
        .map(|&policy| {
            let mine: Vec<&SeedRun> = runs.iter().filter(|r| r.policy == policy).collect();
            let curves: Vec<Vec<Option<f64>>> = mine
                .iter()
                .map(|r| allocated_by_percent(&r.curve, cluster_milli, target))
                .collect();
            let curve: Vec<Option<f64>> = (0..=target as usize)
                .map(|p| {
                    let v: Vec<f64> = curves.iter().filter_map(|c| c[p]).collect();
                    (!v.is_empty()).then(|| mean(v.into_iter()))
                })
                .collect();
            let at_target = curves
                .iter()
                .zip(&mine)
                .map(|(c, r)| {
                    c[target as usize].unwrap_or_else(|| {
                        r.curve.last().map_or(0.0, |&(_, u)| u as f64 * 100.0 / cluster_milli as f64)
                    })
                })
                .collect();
            let n = mine.len() as f64;
            let sum = |f: &dyn Fn(&SeedRun) -> f64| mine.iter().map(|r| f(r)).sum::<f64>() / n;
            PolicyFigures {
                policy,
                at_full: (FULL_PERCENT < target)
                    .then(|| curve[FULL_PERCENT as usize])
                    .flatten(),
                curve,
                at_target,
                idle_gpus: sum(&|r| r.idle_milli as f64 / f64::from(GPU_MILLI)),
                frag_percent: {
                    let v: Vec<f64> = mine
                        .iter()
                        .filter_map(|r| r.frag_at_full_milli)
                        .map(|f| f * 100.0 / cluster_milli as f64)
                        .collect();
                    (!v.is_empty()).then(|| mean(v.into_iter()))
                },
                failed_gpu_pods: sum(&|r| r.failed_gpu_pods as f64),
                failed_gpus: sum(&|r| r.failed_gpu_milli as f64 / f64::from(GPU_MILLI)),
                failed_cpu_pods: sum(&|r| r.failed_cpu_pods as f64),
                partial_gpus: sum(&|r| r.partial_gpus as f64),
            }
        })
        .collect()
}

/// Builds the Report of a run's (policy, seed) runs.
#[must_use]
pub fn build(params: &SharingParams, runs: &[SeedRun]) -> Report {
    let cluster = Cluster::new(&params.nodes);
    let cluster_gpus = cluster.gpus();
    let cluster_milli = cluster_gpus * u64::from(GPU_MILLI);
    let figs = figures(params, cluster_milli, runs);
    let target = params.inflation_percent;
    let pods: u64 = params.pods.iter().map(|c| u64::from(c.count)).sum();
    let mut report = Report {
        lab: "sharing".into(),
        title: format!(
            "GPU sharing: {pods} pods ({}) on {} nodes, {cluster_gpus} GPUs, cloned to {target} % of the GPUs, {} seed{}",
            params.source,
            cluster.nodes.len(),
            params.seeds,
            if params.seeds == 1 { "" } else { "s" }
        ),
        ..Report::default()
    };
    let fgd_idle = figs
        .iter()
        .find(|f| f.policy == SharingPolicy::Fgd)
        .map(|f| f.idle_gpus);
    let mut rows = Vec::new();
    for f in &figs {
        let at = mean(f.at_target.iter().copied());
        let lo = f.at_target.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = f.at_target.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let vs_fgd = match fgd_idle {
            Some(g) if g >= 0.5 => Cell::Num(round2(f.idle_gpus / g)),
            Some(_) => Cell::Text("∞ / not comparable".into()),
            None => Cell::Missing,
        };
        rows.push(vec![
            Cell::Text(f.policy.label().into()),
            f.at_full.map_or(Cell::Missing, |v| Cell::Num(round2(v))),
            Cell::Num(round2(at)),
            Cell::Text(format!("{lo:.2}–{hi:.2}")),
            Cell::Num(round1(f.idle_gpus)),
            vs_fgd,
            f.frag_percent.map_or(Cell::Missing, |v| Cell::Num(round2(v))),
            Cell::Num(round1(f.partial_gpus)),
            Cell::Num(round1(f.failed_gpu_pods)),
            Cell::Num(round1(f.failed_gpus)),
            Cell::Num(round1(f.failed_cpu_pods)),
        ]);
        let id = f.policy.id();
        report.push_metric(
            &format!("{id}.allocated_percent"),
            &format!("{}: GPUs allocated at {target} % arrived", f.policy.label()),
            round2(at),
            "%",
        );
        report.push_metric(
            &format!("{id}.unallocated_gpus"),
            &format!("{}: GPUs left unallocated at the end", f.policy.label()),
            round1(f.idle_gpus),
            "GPUs",
        );
        report.series.push(Series {
            name: format!("{}: allocated", f.policy.label()),
            chart: "sharing.allocation".into(),
            x_label: "GPU requests arrived (% of the cluster's GPUs)".into(),
            y_label: "GPUs allocated (% of the cluster's)".into(),
            points: f
                .curve
                .iter()
                .enumerate()
                .filter_map(|(p, v)| v.map(|v| (p as f64, round2(v))))
                .collect(),
        });
        let from = TAIL_FROM_PERCENT.min(target) as usize;
        report.series.push(Series {
            name: format!("{}: unallocated", f.policy.label()),
            chart: "sharing.unallocated".into(),
            x_label: "GPU requests arrived (% of the cluster's GPUs)".into(),
            y_label: "GPUs left unallocated".into(),
            points: f
                .curve
                .iter()
                .enumerate()
                .skip(from)
                .filter_map(|(p, v)| {
                    v.map(|v| (p as f64, round1((100.0 - v) * cluster_gpus as f64 / 100.0)))
                })
                .collect(),
        });
    }
    report.tables.push(Table {
        key: "policies".into(),
        title: format!(
            "Placement policies, means over {} seed{} (FGD's artifact reads its logs the same way)",
            params.seeds,
            if params.seeds == 1 { "" } else { "s" }
        ),
        columns: vec![
            "policy".into(),
            format!("GPUs allocated at {FULL_PERCENT} % arrived (%)"),
            format!("GPUs allocated at {target} % arrived (%)"),
            "range over seeds (%)".into(),
            "GPUs unallocated at the end".into(),
            "unallocated ÷ FGD's (×)".into(),
            format!("fragmented GPUs at {FULL_PERCENT} % arrived (% of all)"),
            "GPUs partly allocated".into(),
            "GPU pods that fit nowhere".into(),
            "their GPUs".into(),
            "CPU pods that fit nowhere".into(),
        ],
        rows,
    });
    report.tables.push(seed_table(params, &figs));
    report.tables.push(task_table(params, &cluster));
    report.findings = findings(params, cluster_gpus, &figs);
    report
}

fn seed_table(params: &SharingParams, figs: &[PolicyFigures]) -> Table {
    let mut columns = vec!["policy".to_string()];
    columns.extend((0..params.seeds).map(|k| {
        format!(
            "seed {} (%)",
            params.first_seed.wrapping_add(u64::from(k))
        )
    }));
    Table {
        key: "seeds".into(),
        title: format!(
            "GPUs allocated at {} % arrived, per seed",
            params.inflation_percent
        ),
        columns,
        rows: figs
            .iter()
            .map(|f| {
                let mut row = vec![Cell::Text(f.policy.label().into())];
                row.extend(f.at_target.iter().map(|&v| Cell::Num(round2(v))));
                row
            })
            .collect(),
    }
}

fn task_table(params: &SharingParams, cluster: &Cluster) -> Table {
    let counts: Vec<u32> = params.pods.iter().map(|c| c.count).collect();
    let shapes: Vec<Pod> = params.pods.iter().map(|c| cluster.pod(c)).collect();
    let tasks = typical_tasks(&shapes, &counts, TYPICAL_COVERAGE_PERCENT);
    Table {
        key: "typical-tasks".into(),
        title: format!(
            "FGD's typical tasks: the most common pod shapes, covering {TYPICAL_COVERAGE_PERCENT} % of the original pods"
        ),
        columns: vec![
            "CPU (milli-cores)".into(),
            "GPUs".into(),
            "share of each GPU (milli-GPU)".into(),
            "popularity (%)".into(),
        ],
        rows: tasks
            .iter()
            .map(|t| {
                vec![
                    Cell::Num(t.pod.cpu_milli as f64),
                    Cell::Num(f64::from(t.pod.num_gpu)),
                    Cell::Num(f64::from(t.pod.gpu_milli)),
                    Cell::Num(round2(t.popularity * 100.0)),
                ]
            })
            .collect(),
    }
}

fn findings(params: &SharingParams, cluster_gpus: u64, figs: &[PolicyFigures]) -> Vec<String> {
    let mut out = Vec::new();
    let target = params.inflation_percent;
    let fgd = figs.iter().find(|f| f.policy == SharingPolicy::Fgd);
    let best_baseline = figs
        .iter()
        .filter(|f| f.policy != SharingPolicy::Fgd)
        .min_by(|a, b| a.idle_gpus.total_cmp(&b.idle_gpus));
    let most = figs
        .iter()
        .filter(|f| !matches!(f.policy, SharingPolicy::Fgd | SharingPolicy::Random))
        .max_by(|a, b| a.idle_gpus.total_cmp(&b.idle_gpus));
    if let (Some(fgd), Some(base)) = (fgd, best_baseline) {
        let fewer = |b: &PolicyFigures| {
            if b.idle_gpus >= 0.5 {
                format!("{:.0} %", (b.idle_gpus - fgd.idle_gpus) * 100.0 / b.idle_gpus)
            } else {
                "∞ / not comparable".to_string()
            }
        };
        let mut text = format!(
            "With requests for {target} % of the cluster's {cluster_gpus} GPUs, FGD leaves {:.1} GPUs unallocated against {:.1} for the best baseline ({}): {:.1} GPUs, {}, fewer",
            fgd.idle_gpus,
            base.idle_gpus,
            base.policy.label(),
            base.idle_gpus - fgd.idle_gpus,
            fewer(base)
        );
        if let Some(m) = most.filter(|m| m.policy != base.policy) {
            text.push_str(&format!(
                ", and {:.1} GPUs, {}, fewer than {}",
                m.idle_gpus - fgd.idle_gpus,
                fewer(m),
                m.policy.label()
            ));
        }
        text.push_str(". FGD's paper reports up to 49 % fewer unallocated GPUs (290 more GPUs used) on the whole openb trace.");
        out.push(text);
    }
    out.push(
        "Why GPUs go unallocated while pods fail: pods that share a GPU leave slivers (a GPU with 190 milli free fits no pod asking 470), and whole-GPU pods need wholly free GPUs on one node. FGD scores a placement by how much it grows the node's fragmentation — the idle GPU share the usual pod mix (the typical tasks below) could not use — and takes the smallest growth.".to_string(),
    );
    out.push(
        "No time and no interference: as in FGD's experiment, pods never leave and a share is a guarantee of GPU memory. The timed experiment adds both, under a stated model.".to_string(),
    );
    out
}

fn round2(v: f64) -> f64 {
    libm::round(v * 100.0) / 100.0
}

fn round1(v: f64) -> f64 {
    libm::round(v * 10.0) / 10.0
}

/// Builds the Report of the timed experiment's rows (`super::timed`).
#[must_use]
pub fn build_timed(params: &SharingParams, runs: &[super::timed::TimedRun]) -> Report {
    let cluster = Cluster::new(&params.nodes);
    let gpus = cluster.gpus();
    let capacity = gpus as f64 * f64::from(GPU_MILLI);
    let spec = &params.timed;
    let mut report = Report {
        lab: "sharing".into(),
        title: format!(
            "GPU sharing over time: {} pods drawn from {}, Poisson arrivals at offered load {}, mean solo duration {} s, on {} nodes, {gpus} GPUs",
            spec.pods,
            params.source,
            spec.load,
            spec.mean_duration_s,
            cluster.nodes.len()
        ),
        ..Report::default()
    };
    let end_ns = runs
        .iter()
        .flat_map(|r| r.pods.iter().map(|p| p.2))
        .filter(|&f| f != u64::MAX)
        .max()
        .unwrap_or(0)
        .max(1);
    let span_ns = runs
        .iter()
        .flat_map(|r| r.pods.iter().map(|p| p.0))
        .max()
        .unwrap_or(0)
        .max(1);
    let mut rows = Vec::new();
    let mut figures = Vec::new();
    for r in runs {
        let done: Vec<usize> = (0..r.pods.len()).filter(|&i| r.pods[i].2 != u64::MAX).collect();
        let dropped = r.pods.len() - done.len();
        let n = done.len().max(1) as f64;
        let jct = done.iter().map(|&i| (r.pods[i].2 - r.pods[i].0) as f64 / 1e9).sum::<f64>() / n;
        let queue = done.iter().map(|&i| (r.pods[i].1 - r.pods[i].0) as f64 / 1e9).sum::<f64>() / n;
        let mut slow: Vec<f64> = done
            .iter()
            .filter(|&&i| r.sharing[i])
            .map(|&i| (r.pods[i].2 - r.pods[i].1) as f64 / r.solo_ns[i].max(1) as f64)
            .collect();
        slow.sort_by(f64::total_cmp);
        let mean_slow = mean(slow.iter().copied());
        let p95 = crate::units::nearest_rank(slow.len(), 0.95).map_or(0.0, |k| slow[k]);
        // Time-average allocated share over the arrival span [0, last arrival] (the steady
        // state; the drain after the last arrival is left out).
        let mut area = 0.0;
        for (k, &(t0, m)) in r.allocated.iter().enumerate() {
            let t1 = r.allocated.get(k + 1).map_or(span_ns, |a| a.0).min(span_ns);
            if t1 > t0 {
                area += m as f64 * (t1 - t0) as f64;
            }
        }
        let allocated = area * 100.0 / (capacity * span_ns as f64);
        let id = r.variant.id();
        let label = r.variant.label();
        report.push_metric(&format!("{id}.avg_jct_s"), &format!("{label}: average JCT"), round1(jct), "s");
        report.push_metric(
            &format!("{id}.mean_slowdown"),
            &format!("{label}: mean slowdown of sharing pods while running"),
            round2(mean_slow),
            "×",
        );
        report.push_metric(
            &format!("{id}.in_use_percent"),
            &format!("{label}: GPU shares in use while pods arrive, time-average"),
            round2(allocated),
            "%",
        );
        rows.push(vec![
            Cell::Text(label.clone()),
            Cell::Num(done.len() as f64),
            Cell::Num(round1(jct)),
            Cell::Num(round1(queue)),
            Cell::Num(round2(mean_slow)),
            Cell::Num(round2(p95)),
            Cell::Num(round2(allocated)),
            Cell::Num(r.moves as f64),
            Cell::Num(r.stuck as f64),
            Cell::Num(dropped as f64),
        ]);
        // Allocated GPUs over time, at 200 instants.
        let mut points = Vec::with_capacity(201);
        let mut k = 0usize;
        for step in 0..=200u64 {
            let t = end_ns / 200 * step;
            while k + 1 < r.allocated.len() && r.allocated[k + 1].0 <= t {
                k += 1;
            }
            let m = r.allocated.get(k).map_or(0, |a| a.1);
            points.push((round2(t as f64 / 3.6e12), round2(m as f64 * 100.0 / capacity)));
        }
        report.series.push(Series {
            name: format!("{label}: in use"),
            chart: "sharing.timed_allocated".into(),
            x_label: "time (h)".into(),
            y_label: "GPU shares in use (% of the cluster's GPUs)".into(),
            points,
        });
        figures.push((r.variant, jct, queue, mean_slow, allocated, r.moves));
    }
    report.tables.push(Table {
        key: "timed".into(),
        title: "Packing over time: what sharing GPUs buys and what it costs".into(),
        columns: vec![
            "row".into(),
            "pods run".into(),
            "average JCT (s)".into(),
            "average queueing (s)".into(),
            "sharing pods: mean slowdown while running (×)".into(),
            "p95 slowdown (×)".into(),
            "GPU shares in use while pods arrive, time-average (%)".into(),
            "moves (unpacking)".into(),
            "checks with nowhere to move".into(),
            "pods that fit no node".into(),
        ],
        rows,
    });
    report.findings = timed_findings(spec, &figures);
    report
}

type TimedFigures = (super::timed::Variant, f64, f64, f64, f64, u64);

fn timed_findings(spec: &super::params::TimedSpec, figs: &[TimedFigures]) -> Vec<String> {
    use super::timed::Variant;
    let mut out = Vec::new();
    let exclusive = figs.iter().find(|f| f.0 == Variant::Exclusive);
    let packing = figs.iter().find(|f| matches!(f.0, Variant::Packing(_)));
    let unpacking = figs.iter().find(|f| matches!(f.0, Variant::Unpacking(_)));
    if let (Some(e), Some(p)) = (exclusive, packing) {
        out.push(format!(
            "Packing by memory: average JCT {:.0} s against {:.0} s on exclusive GPUs (queueing {:.0} s against {:.0} s), but sharing pods run {:.2}× slower on average while packed.",
            p.1, e.1, p.2, e.2, p.3
        ));
    }
    if let (Some(p), Some(u)) = (packing, unpacking) {
        out.push(format!(
            "Unpacking below {:.0} % of solo speed: mean slowdown {:.2}× against {:.2}× packed, {} moves of {} s each, average JCT {:.0} s against {:.0} s.",
            spec.unpack_below * 100.0,
            u.3,
            p.3,
            u.5,
            spec.migration_s,
            u.1,
            p.1
        ));
    }
    out.push("Stated model, not a trace: arrivals and durations are drawn, and a sharing pod's contention share is taken to be its GPU share (openb's gpu_milli guarantees memory, not compute); co-runners slow a pod to 1/(1 + Σ their shares), the kernel's contention model.".to_string());
    out
}
