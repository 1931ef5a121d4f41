//! The variants lab's Report: per policy the SLO violations, failures, latency percentiles,
//! accuracy served, instance cost and instances; which variant served each application; the
//! instances and violations over time; findings.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::params::VariantsParams;
use super::policies::SelectionPolicy;
use super::sim::Run;
use crate::report::{Cell, Report, Series, Table};
use crate::units::nearest_rank;

/// Nanoseconds per millisecond.
const NS_PER_MS: f64 = 1e6;

/// What one run adds up to.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The policy.
    pub policy: SelectionPolicy,
    /// Queries that arrived.
    pub queries: usize,
    /// Queries no variant could take.
    pub failed: usize,
    /// Queries answered later than their SLO or not at all, % of all.
    pub violation_pct: f64,
    /// Median latency of the answered queries, ms.
    pub p50_ms: f64,
    /// 99th-percentile latency of the answered queries, ms.
    pub p99_ms: f64,
    /// Mean top-1 accuracy of the variants that answered, %.
    pub accuracy_pct: f64,
    /// Machine time × price from each machine's first load to the run's end, $.
    pub cost_usd: f64,
    /// Instances loaded.
    pub instances: usize,
    /// Machines used.
    pub machines: usize,
    /// Times an instance's monitor blacklisted it.
    pub blacklistings: u32,
}

/// Adds up a run.
#[must_use]
pub fn summarise(params: &VariantsParams, run: &Run) -> Summary {
    let mut latencies: Vec<f64> = Vec::new();
    let (mut violations, mut failed, mut accuracy_sum) = (0usize, 0usize, 0.0);
    for q in &run.queries {
        let Some(v) = q.variant else {
            failed += 1;
            violations += 1;
            continue;
        };
        let ms = q.latency_ns as f64 / NS_PER_MS;
        latencies.push(ms);
        accuracy_sum += params.variants[v].accuracy_pct;
        if ms > params.apps[q.app].slo_ms {
            violations += 1;
        }
    }
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| nearest_rank(latencies.len(), q).map_or(0.0, |i| latencies[i]);
    let cost_usd = run
        .machines
        .iter()
        .filter_map(|m| {
            let hours = (run.end_ns - m.started_ns?) as f64 / 3.6e12;
            Some(hours * params.prices.per_hour(m.view.hardware))
        })
        .sum();
    let total = run.queries.len();
    Summary {
        policy: run.policy,
        queries: total,
        failed,
        violation_pct: pct(violations, total),
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        accuracy_pct: if latencies.is_empty() { 0.0 } else { accuracy_sum / latencies.len() as f64 },
        cost_usd,
        instances: run.instances.len(),
        machines: run.machines.iter().filter(|m| m.started_ns.is_some()).count(),
        blacklistings: run.blacklistings,
    }
}

fn pct(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The Report of every policy's run.
#[must_use]
pub fn build(params: &VariantsParams, runs: &[Run]) -> Report {
    let summaries: Vec<Summary> = runs.iter().map(|r| summarise(params, r)).collect();
    let mut report = Report {
        lab: "variants".into(),
        title: format!(
            "{} applications on {} variants, {} s with a burst from {} to {} s",
            params.apps.len(),
            params.variants.len(),
            params.duration_s,
            params.burst_start_s,
            params.burst_end_s
        ),
        ..Report::default()
    };
    for s in &summaries {
        let id = s.policy.id();
        let label = s.policy.label();
        report.push_metric(&format!("{id}.violation_pct"), &format!("{label}: SLO violations"), s.violation_pct, "%");
        report.push_metric(&format!("{id}.failed"), &format!("{label}: failed queries"), s.failed as f64, "count");
        report.push_metric(&format!("{id}.p99_ms"), &format!("{label}: p99 latency"), s.p99_ms, "ms");
        report.push_metric(&format!("{id}.accuracy_pct"), &format!("{label}: mean accuracy served"), s.accuracy_pct, "%");
        report.push_metric(&format!("{id}.cost_usd"), &format!("{label}: machine cost"), s.cost_usd, "$");
    }
    report.tables.push(policy_table(&summaries));
    report.tables.push(served_table(params, runs));
    push_series(&mut report, params, runs);
    report.findings = findings(params, runs, &summaries);
    report
}

fn policy_table(summaries: &[Summary]) -> Table {
    Table {
        key: "policies".into(),
        title: "Each policy: SLO violations (late or failed queries), latency, accuracy served and cost".into(),
        columns: [
            "policy", "queries", "failed", "SLO violations (%)", "p50 latency (ms)", "p99 latency (ms)",
            "mean accuracy served (%)", "machine cost ($)", "machines used", "instances loaded", "blacklistings",
        ]
        .map(String::from)
        .to_vec(),
        rows: summaries
            .iter()
            .map(|s| {
                vec_row(s.policy.label(), &[
                    s.queries as f64, s.failed as f64, s.violation_pct, s.p50_ms, s.p99_ms,
                    s.accuracy_pct, s.cost_usd, s.machines as f64, s.instances as f64,
                    f64::from(s.blacklistings),
                ])
            })
            .collect(),
    }
}

fn vec_row(label: &str, numbers: &[f64]) -> Vec<Cell> {
    let mut row = Vec::with_capacity(numbers.len() + 1);
    row.push(Cell::Text(label.into()));
    row.extend(numbers.iter().map(|&n| Cell::Num(n)));
    row
}

/// Which variant answered each application's queries under each policy.
fn served_table(params: &VariantsParams, runs: &[Run]) -> Table {
    let mut rows = Vec::new();
    for run in runs {
        for (a, app) in params.apps.iter().enumerate() {
            let mut by_variant: Vec<(Option<usize>, usize, usize)> = Vec::new();
            for q in run.queries.iter().filter(|q| q.app == a) {
                let late = q.variant.is_none() || q.latency_ns as f64 / NS_PER_MS > app.slo_ms;
                match by_variant.iter_mut().find(|(v, _, _)| *v == q.variant) {
                    Some(entry) => {
                        entry.1 += 1;
                        entry.2 += usize::from(late);
                    }
                    None => by_variant.push((q.variant, 1, usize::from(late))),
                }
            }
            by_variant.sort_by_key(|&(v, _, _)| v.map_or(usize::MAX, |v| v));
            for (v, n, late) in by_variant {
                let name = v.map_or_else(|| "— (failed)".into(), |v| params.variants[v].name.clone());
                rows.push(vec![
                    Cell::Text(run.policy.label().into()),
                    Cell::Text(app.name.clone()),
                    Cell::Text(name),
                    Cell::Num(n as f64),
                    Cell::Num(pct(late, n)),
                ]);
            }
        }
    }
    Table {
        key: "served".into(),
        title: "Which variant answered each application's queries".into(),
        columns: ["policy", "application", "variant", "queries", "SLO violations (%)"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

fn push_series(report: &mut Report, params: &VariantsParams, runs: &[Run]) {
    let seconds = libm::ceil(params.duration_s) as usize;
    for run in runs {
        let label = run.policy.label();
        report.series.push(Series {
            name: format!("{label}: instances"),
            chart: "variants.instances".into(),
            x_label: "time (s)".into(),
            y_label: "instances loaded".into(),
            points: run.instance_counts.iter().map(|&(t, n)| (t as f64 / 1e9, n as f64)).collect(),
        });
        let mut late = vec![(0usize, 0usize); seconds.max(1)];
        for q in &run.queries {
            let s = ((q.arrival_ns / 1_000_000_000) as usize).min(late.len() - 1);
            late[s].0 += 1;
            let missed = q.variant.is_none() || q.latency_ns as f64 / NS_PER_MS > params.apps[q.app].slo_ms;
            late[s].1 += usize::from(missed);
        }
        report.series.push(Series {
            name: format!("{label}: SLO violations"),
            chart: "variants.violations".into(),
            x_label: "arrival second (s)".into(),
            y_label: "queries late or failed (%)".into(),
            points: late.iter().enumerate().map(|(s, &(n, l))| (s as f64, pct(l, n))).collect(),
        });
    }
}

fn findings(params: &VariantsParams, runs: &[Run], summaries: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    for (run, s) in runs.iter().zip(summaries) {
        let mut used: Vec<&str> = run.instances.iter().map(|i| params.variants[i.variant].name.as_str()).collect();
        used.sort_unstable();
        used.dedup();
        out.push(format!(
            "{}: {:.1} % of {} queries late or failed at ${:.2} of machine time; it loaded {} instance(s) of {} on {} machine(s).",
            s.policy.label(),
            s.violation_pct,
            s.queries,
            s.cost_usd,
            s.instances,
            if used.is_empty() { "no variant".into() } else { used.join(", ") },
            s.machines,
        ));
    }
    if let Some(s) = summaries.iter().find(|s| s.policy == SelectionPolicy::Infaas && s.failed > 0) {
        out.push(format!(
            "INFaaS failed {} queries: no variant of the first non-empty accuracy bin met the latency rule, or the only one was a blacklisted CPU variant. Its worker autoscaler, which this lab does not model, would have added a replica or upgraded the variant.",
            s.failed
        ));
    }
    out.push("Latencies are the profiles' (slope × batch + intercept), run one at a time per machine in arrival order (loads included); a machine is billed from its first load to the run's end.".into());
    out
}
