//! Two runs of one lab side by side: run A and run B as one Report, so that a learner who changes
//! one field keeps the run before it. The Report holds the metric table (A, B, B − A, B / A), the
//! scenario diff (every parameter whose value differs, by field path), both runs' curves on their
//! charts (names ending in [`SIDE_A`] and [`SIDE_B`]: a curve keeps its colour, the page dashes
//! B's) and both runs' timelines (names starting `A: ` and `B: `).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use crate::report::{Cell, Report, Series, Table};
use crate::scenario::{Scenario, ScenarioError};

/// Ending of run A's curve names.
pub const SIDE_A: &str = " (A)";
/// Ending of run B's curve names.
pub const SIDE_B: &str = " (B)";

/// Most differing fields listed in the finding (the table lists all).
const FINDING_FIELDS: usize = 4;
/// Most changed metrics named in the finding.
const FINDING_METRICS: usize = 3;

/// One parameter that differs: (field path, A's value, B's value), values as compact JSON
/// (`—` where one side has no such field).
pub type FieldDiff = (String, String, String);

/// Every leaf parameter whose value differs between `a` and `b`, by path in A's field order
/// (B-only fields after), paths as errors name them (`schedules[1]`, `astraea.lease_s`).
#[must_use]
pub fn scenario_diff(a: &Scenario, b: &Scenario) -> Vec<FieldDiff> {
    let (mut left, mut right) = (Vec::new(), Vec::new());
    flatten("", &a.params_value(), &mut left);
    flatten("", &b.params_value(), &mut right);
    let text = |v: Option<&Value>| v.map_or_else(|| "—".to_string(), Value::to_string);
    let find = |side: &[(String, Value)], path: &str| {
        side.iter().find(|(p, _)| p == path).map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    for (path, va) in &left {
        let vb = find(&right, path);
        if vb.as_ref() != Some(va) {
            out.push((path.clone(), va.to_string(), text(vb.as_ref())));
        }
    }
    for (path, vb) in &right {
        if find(&left, path).is_none() {
            out.push((path.clone(), "—".to_string(), vb.to_string()));
        }
    }
    out
}

/// A row `input.<slot>` for every slot whose file differs between A and B (`—`: none).
fn input_diff(a: &InputLabels, b: &InputLabels) -> Vec<FieldDiff> {
    let label = |side: &InputLabels, slot: &str| {
        side.iter()
            .find(|(s, _)| s == slot)
            .map_or_else(|| "—".to_string(), |(_, l)| l.clone())
    };
    let mut slots: Vec<&str> = a.iter().chain(b).map(|(s, _)| s.as_str()).collect();
    slots.sort_unstable();
    slots.dedup();
    slots
        .into_iter()
        .map(|slot| (format!("input.{slot}"), label(a, slot), label(b, slot)))
        .filter(|(_, la, lb)| la != lb)
        .collect()
}

/// The leaves of `value` under `prefix`, objects joined by `.`, arrays indexed `[i]`; an empty
/// object or array is a leaf.
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, v, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        _ => out.push((prefix.to_string(), value.clone())),
    }
}

/// `v` with at most 4 decimals, trailing zeros dropped.
fn short(v: f64) -> String {
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// B / A, or `None` when A is 0.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| b / a)
}

/// Checks that A and B are scenarios of one lab (before running them).
///
/// # Errors
/// [`ScenarioError::Field`] at `lab` naming both labs.
pub fn same_lab(a: &Scenario, b: &Scenario) -> Result<(), ScenarioError> {
    if a.lab() == b.lab() {
        return Ok(());
    }
    Err(ScenarioError::field(
        "lab",
        format!(
            "A is a {} scenario and B a {} one; compare two runs of one lab",
            a.lab(),
            b.lab()
        ),
    ))
}

/// The input files a run read, each (slot, label): the label names the file and its size
/// (`philly.csv, 12,345 bytes`), so that a run on an upload and one without differ in the diff.
pub type InputLabels = [(String, String)];

/// Runs A and B of one lab as one Report.
///
/// # Errors
/// [`ScenarioError::Field`] at `lab` when A and B are scenarios of different labs.
pub fn compare(
    a: &Scenario,
    report_a: &Report,
    b: &Scenario,
    report_b: &Report,
) -> Result<Report, ScenarioError> {
    compare_with_inputs((a, report_a, &[]), (b, report_b, &[]))
}

/// [`compare`] of runs that read input files: each side is (scenario, Report, its inputs); an
/// input slot whose file differs is a row `input.<slot>` of the diff.
///
/// # Errors
/// As [`compare`].
pub fn compare_with_inputs(
    (a, report_a, inputs_a): (&Scenario, &Report, &InputLabels),
    (b, report_b, inputs_b): (&Scenario, &Report, &InputLabels),
) -> Result<Report, ScenarioError> {
    same_lab(a, b)?;
    let mut diff = scenario_diff(a, b);
    diff.extend(input_diff(inputs_a, inputs_b));
    let mut report = Report {
        lab: a.lab().to_string(),
        title: format!("A: {}  vs  B: {}", report_a.title, report_b.title),
        ..Report::default()
    };
    report.push_metric(
        "compare.fields_changed",
        "Parameters that differ",
        diff.len() as f64,
        "count",
    );
    let rows = metric_rows(report_a, report_b);
    let changed = rows.iter().filter(|r| r.a != r.b).count();
    report.push_metric(
        "compare.metrics_changed",
        "Metrics that differ",
        changed as f64,
        "count",
    );
    report.tables.push(metric_table(&rows));
    report.tables.push(Table {
        key: "scenario_diff".into(),
        title: "Parameters that differ".into(),
        columns: ["field", "A", "B"]
            .iter()
            .map(ToString::to_string)
            .collect(),
        rows: diff
            .iter()
            .map(|(p, va, vb)| {
                alloc::vec![
                    Cell::Text(p.clone()),
                    Cell::Text(va.clone()),
                    Cell::Text(vb.clone())
                ]
            })
            .collect(),
    });
    for (side, r) in [(SIDE_A, report_a), (SIDE_B, report_b)] {
        report.series.extend(r.series.iter().map(|s| Series {
            name: format!("{}{side}", s.name),
            ..s.clone()
        }));
    }
    for (side, r) in [("A", report_a), ("B", report_b)] {
        for t in &r.timelines {
            let mut t = t.clone();
            t.name = format!("{side}: {}", t.name);
            report.timelines.push(t);
        }
    }
    report.findings = findings(&diff, &rows);
    Ok(report)
}

/// One metric of the comparison.
struct MetricRow {
    key: String,
    label: String,
    unit: String,
    a: Option<f64>,
    b: Option<f64>,
}

/// Every metric of A (in A's order), then B's others.
fn metric_rows(report_a: &Report, report_b: &Report) -> Vec<MetricRow> {
    let mut rows: Vec<MetricRow> = report_a
        .metrics
        .iter()
        .map(|m| MetricRow {
            key: m.key.clone(),
            label: m.label.clone(),
            unit: m.unit.clone(),
            a: Some(m.value),
            b: report_b.metric(&m.key),
        })
        .collect();
    for m in &report_b.metrics {
        if report_a.metric(&m.key).is_none() {
            rows.push(MetricRow {
                key: m.key.clone(),
                label: m.label.clone(),
                unit: m.unit.clone(),
                a: None,
                b: Some(m.value),
            });
        }
    }
    rows
}

fn metric_table(rows: &[MetricRow]) -> Table {
    let num = |v: Option<f64>| v.map_or(Cell::Missing, Cell::Num);
    Table {
        key: "metrics".into(),
        title: "Metrics: A, B, B − A and B / A".into(),
        columns: ["metric", "key", "unit", "A", "B", "B − A", "B / A"]
            .iter()
            .map(ToString::to_string)
            .collect(),
        rows: rows
            .iter()
            .map(|r| {
                let delta = r.a.zip(r.b).map(|(a, b)| b - a);
                let times = r.a.zip(r.b).and_then(|(a, b)| ratio(a, b));
                alloc::vec![
                    Cell::Text(r.label.clone()),
                    Cell::Text(r.key.clone()),
                    Cell::Text(r.unit.clone()),
                    num(r.a),
                    num(r.b),
                    num(delta),
                    num(times),
                ]
            })
            .collect(),
    }
}

/// What changed, in words: the differing parameters, then the metrics that moved most (by
/// |ln(B / A)|).
fn findings(diff: &[FieldDiff], rows: &[MetricRow]) -> Vec<String> {
    let mut out = Vec::new();
    if diff.is_empty() {
        out.push("A and B are the same scenario: every difference below is the run's own.".into());
    } else {
        let shown: Vec<String> = diff
            .iter()
            .take(FINDING_FIELDS)
            .map(|(p, a, b)| format!("{p} {a} → {b}"))
            .collect();
        let more = diff.len().saturating_sub(FINDING_FIELDS);
        out.push(format!(
            "B differs from A in {} parameter{}: {}{}.",
            diff.len(),
            if diff.len() == 1 { "" } else { "s" },
            shown.join("; "),
            if more > 0 {
                format!(" and {more} more (the table lists them)")
            } else {
                String::new()
            }
        ));
    }
    let mut moved: Vec<(f64, &MetricRow, f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            let (a, b) = r.a.zip(r.b)?;
            let x = ratio(a, b).filter(|x| *x > 0.0)?;
            let size = libm::fabs(libm::log(x));
            (size > 0.0).then_some((size, r, a, b))
        })
        .collect();
    moved.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.key.cmp(&y.1.key)));
    if !moved.is_empty() {
        let named: Vec<String> = moved
            .iter()
            .take(FINDING_METRICS)
            .map(|(_, r, a, b)| {
                format!(
                    "{} {} → {} {} ({:.3}×)",
                    r.label,
                    short(*a),
                    short(*b),
                    r.unit,
                    b / a
                )
            })
            .collect();
        out.push(format!("Largest changes: {}.", named.join("; ")));
    }
    out
}
