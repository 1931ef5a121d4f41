//! Sweeps as data: one lab's scenario run at every point of a product of field values
//! (`--sweep stages=2,4,8 --sweep micro_batches=8,16`), each point a [`Scenario::with_fields`]
//! edit of the base, all validated before any runs. The Report is one table, a row per point
//! in a fixed order (the first axis outermost) with the swept values and every metric the
//! points share.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

pub mod spec;

use crate::report::{Cell, Metric, Report, Table};
use crate::scenario::{InputFile, Scenario, ScenarioError};

/// Most points one sweep runs.
pub const MAX_POINTS: usize = 256;

/// One axis: a field path and the values it takes, as `--set` reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Field path (`stages`, `astraea.quota`).
    pub path: String,
    /// Each value's text (JSON or a bare word).
    pub values: Vec<String>,
}

impl Axis {
    /// Reads `PATH=V1,V2,…`; commas inside `[…]`, `{…}` or `"…"` belong to one value.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `--sweep` when there is no `=`, no path or no value.
    pub fn parse(text: &str) -> Result<Axis, ScenarioError> {
        let bad = || {
            ScenarioError::field(
                "--sweep",
                format!("expected PATH=V1,V2,… (e.g. stages=2,4,8), got `{text}`"),
            )
        };
        let (path, values) = text.split_once('=').ok_or_else(bad)?;
        let values: Vec<String> = split_top_level(values)
            .into_iter()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if path.trim().is_empty() || values.is_empty() {
            return Err(bad());
        }
        Ok(Axis {
            path: path.trim().to_string(),
            values,
        })
    }
}

/// `text` split at the commas that are not inside brackets, braces or a JSON string.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '[' | '{' if !in_string => depth += 1,
            ']' | '}' if !in_string => depth -= 1,
            ',' if !in_string && depth <= 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// The axes as a sweep file's ([`spec::Spec`]): the same product, points and errors.
fn as_spec(base: &Scenario, axes: &[Axis]) -> spec::Spec {
    let axes = axes
        .iter()
        .map(|a| spec::Axis {
            positions: a
                .values
                .iter()
                .map(|value| {
                    Vec::from([spec::Edit::Field {
                        path: a.path.clone(),
                        value: value.clone(),
                    }])
                })
                .collect(),
        })
        .collect();
    spec::Spec {
        base: base.clone(),
        inputs: Vec::new(),
        axes,
    }
}

/// Every point of the axes' product, first axis outermost: the edited scenario, each
/// validated.
///
/// # Errors
/// [`ScenarioError::Field`] at `--sweep` for no axis or more than [`MAX_POINTS`] points; the
/// first invalid point's error, with its values.
pub fn points(base: &Scenario, axes: &[Axis]) -> Result<Vec<Scenario>, ScenarioError> {
    let count = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_POINTS && !axes.is_empty());
    let Some(count) = count else {
        return Err(ScenarioError::field(
            "--sweep",
            format!("give 1 to {MAX_POINTS} points (the product of the axes' value counts)"),
        ));
    };
    let spec = as_spec(base, axes);
    (0..count).map(|i| spec.scenario(&spec.point(i))).collect()
}

/// Runs `base` at every point of the axes on the same input files, calling
/// `progress(points done, points)`, and returns the sweep's Report.
///
/// # Errors
/// As [`points`], then the first point whose run fails.
pub fn run(
    base: &Scenario,
    axes: &[Axis],
    inputs: &[InputFile<'_>],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    let points = points(base, axes)?;
    let total = points.len();
    progress(0, total);
    let mut reports = Vec::with_capacity(total);
    for (i, scenario) in points.iter().enumerate() {
        reports.push(crate::run_with_inputs(scenario, inputs, &mut |_, _| {})?);
        progress(i + 1, total);
    }
    Ok(report(base, axes, &reports))
}

/// The sweep's Report: a row per point with its values and every metric all points have.
fn report(base: &Scenario, axes: &[Axis], reports: &[Report]) -> Report {
    let shared: Vec<&Metric> = reports.first().map_or_else(Vec::new, |first| {
        first
            .metrics
            .iter()
            .filter(|m| {
                reports
                    .iter()
                    .all(|r| r.metrics.iter().any(|o| o.key == m.key))
            })
            .collect()
    });
    let mut columns: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    columns.extend(shared.iter().map(|m| format!("{} ({})", m.label, m.unit)));
    let spec = as_spec(base, axes);
    let rows = reports
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row: Vec<Cell> = spec
                .point(i)
                .values()
                .map(|v| Cell::Text(v.to_string()))
                .collect();
            row.extend(shared.iter().map(|m| {
                r.metrics
                    .iter()
                    .find(|o| o.key == m.key)
                    .map_or(Cell::Missing, |o| Cell::Num(o.value))
            }));
            row
        })
        .collect();
    let paths: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let shape: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
    Report {
        lab: base.lab().into(),
        title: format!(
            "Sweep of the {} lab over {} ({} points)",
            base.lab(),
            paths.join(", "),
            reports.len()
        ),
        metrics: Vec::new(),
        tables: Vec::from([Table {
            key: "sweep".into(),
            title: format!("Every point of the sweep over {}", paths.join(" × ")),
            columns,
            rows,
        }]),
        timelines: Vec::new(),
        series: Vec::new(),
        findings: Vec::from([format!(
            "{} points ({} values, the first axis outermost); each row is one run of the scenario with those fields set and every other field as given. Columns: the metrics every point reports.",
            reports.len(),
            shape.join(" × ")
        )]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::pipeline::PipelineParams;

    #[test]
    fn axes_split_at_top_level_commas() {
        let a = Axis::parse(r#"schedules=["1f1b","zb-h1"],["gpipe"]"#).unwrap();
        assert_eq!(a.values, [r#"["1f1b","zb-h1"]"#, r#"["gpipe"]"#]);
        let b = Axis::parse("stages = 2, 4 ,8").unwrap();
        assert_eq!((b.path.as_str(), b.values.len()), ("stages", 3));
        assert!(Axis::parse("stages").is_err());
        assert!(Axis::parse("stages=").is_err());
        assert!(Axis::parse("=1,2").is_err());
    }

    #[test]
    fn a_sweep_is_the_product_in_order_and_each_row_is_its_run() {
        let base = Scenario::Pipeline(PipelineParams::default());
        let axes = [
            Axis::parse("stages=2,4").unwrap(),
            Axis::parse("micro_batches=4,8,16").unwrap(),
        ];
        let mut calls = Vec::new();
        let report = run(&base, &axes, &[], &mut |d, n| calls.push((d, n))).unwrap();
        assert_eq!(calls.first(), Some(&(0, 6)));
        assert_eq!(calls.last(), Some(&(6, 6)));
        let table = &report.tables[0];
        assert_eq!(table.rows.len(), 6);
        assert_eq!(
            table.rows[1][..2],
            [Cell::Text("2".into()), Cell::Text("8".into())]
        );
        assert_eq!(
            table.rows[3][..2],
            [Cell::Text("4".into()), Cell::Text("4".into())]
        );
        // Row 4 (stages 4, m 8) equals the direct run's 1F1B bubble ratio.
        let direct = crate::run(
            &base
                .with_fields(&[("stages", "4"), ("micro_batches", "8")])
                .unwrap(),
        )
        .unwrap();
        let key = direct
            .metrics
            .iter()
            .position(|m| m.key == "1f1b.bubble_ratio")
            .unwrap();
        let column = 2 + key;
        assert_eq!(table.rows[4][column], Cell::Num(direct.metrics[key].value));
    }

    #[test]
    fn a_bad_point_names_its_field_and_values_before_any_run() {
        let base = Scenario::Pipeline(PipelineParams::default());
        let axes = [Axis::parse("stages=4,0").unwrap()];
        let e = run(&base, &axes, &[], &mut |_, _| panic!("no run starts")).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "pipeline.stages: must be between 1 and 64, got 0 (sweep point stages=0)"
            ),
            "{e}"
        );
        let many = [
            Axis::parse("stages=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17").unwrap(),
            Axis::parse("micro_batches=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16").unwrap(),
        ];
        assert!(points(&base, &many)
            .unwrap_err()
            .to_string()
            .contains("1 to 256 points"));
    }
}
