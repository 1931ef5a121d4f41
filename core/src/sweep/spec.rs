//! Sweep files: a study written as data, run by `bubblelab sweep` and `bubblelab.sweep` on one
//! machine's cores or on a Ray cluster, all writing the same tidy table.
//!
//! ```json
//! {
//!   "base": "fairness-light-load-15-tenants",
//!   "set": {"cluster.nodes": 140},
//!   "inputs": {"trace": "philly.csv"},
//!   "axes": [
//!     {"path": "lease_s", "values": [300, 900, 3600]},
//!     {"path": "seed", "range": [1, 11]},
//!     {"zip": [{"path": "stages", "values": [2, 4]}, {"path": "micro_batches", "values": [8, 16]}]},
//!     {"input": "trace", "values": ["philly.csv", "helios.csv"]}
//!   ]
//! }
//! ```
//!
//! `base` is a lab (its first preset), a preset id or a scenario object; `set` edits it by
//! field path; `inputs` gives the lab's input slots files. Each axis is a field path over
//! `values` or `range` (`[start, stop)` by `step`, Python's `range`), a `zip` of such axes
//! stepping together, or an input slot over files. Points are the axes' product, the first
//! axis outermost. The table has a row per point and metric:
//! `point,<one column per swept path or input:slot>,metric,value,unit,error`, a failed point
//! one row with its error. The core reads no file: callers pass a reader ([`Spec::run_point`]).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use crate::report::{csv_field, Report};
use crate::scenario::{InputFile, Scenario, ScenarioError};

/// Most points one sweep file runs.
pub const MAX_POINTS: usize = 100_000;

/// One edit a point makes to the base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Set field `path` to the value text (JSON, strings bare).
    Field {
        /// Field path.
        path: String,
        /// Value text, as `--set` reads it.
        value: String,
    },
    /// Read `file` into input slot `slot` (replacing the base's file there).
    Input {
        /// Input slot.
        slot: String,
        /// File path as written (relative to the sweep file's folder).
        file: String,
    },
}

impl Edit {
    /// The table column it fills: the path, or `input:<slot>`.
    fn column(&self) -> String {
        match self {
            Edit::Field { path, .. } => path.clone(),
            Edit::Input { slot, .. } => format!("input:{slot}"),
        }
    }

    /// Its value in the table.
    fn value(&self) -> &str {
        match self {
            Edit::Field { value, .. } => value,
            Edit::Input { file, .. } => file,
        }
    }
}

/// One axis: at each of its positions, one edit per column (a `zip` has several).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Each position's edits, one per column.
    pub positions: Vec<Vec<Edit>>,
}

/// A parsed sweep file.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// The scenario every point starts from (`set` applied).
    pub base: Scenario,
    /// The base's input files, (slot, file) in the order given.
    pub inputs: Vec<(String, String)>,
    /// The axes, outermost first.
    pub axes: Vec<Axis>,
}

/// One point of a sweep: its index in the product and its edits, one per column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// Index in the product (the table's `point` column).
    pub index: usize,
    /// The edits, in column order.
    pub edits: Vec<Edit>,
}

impl Point {
    /// Its field edits as (path, value text).
    #[must_use]
    pub fn fields(&self) -> Vec<(&str, &str)> {
        self.edits
            .iter()
            .filter_map(|e| match e {
                Edit::Field { path, value } => Some((path.as_str(), value.as_str())),
                Edit::Input { .. } => None,
            })
            .collect()
    }

    /// Its input edits as (slot, file).
    #[must_use]
    pub fn inputs(&self) -> Vec<(&str, &str)> {
        self.edits
            .iter()
            .filter_map(|e| match e {
                Edit::Input { slot, file } => Some((slot.as_str(), file.as_str())),
                Edit::Field { .. } => None,
            })
            .collect()
    }

    /// Its values in column order, as the table holds them.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.edits.iter().map(Edit::value)
    }
}

fn bad(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::field(path, message)
}

/// A JSON value as `--set` reads it: strings bare, anything else as compact JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Spec {
    /// Reads a sweep file.
    ///
    /// # Errors
    /// [`ScenarioError::Syntax`] for text that is not JSON; [`ScenarioError::Field`] naming the
    /// spec's own path (`axes[1].range`) or the base's field, and any point that is not a
    /// valid scenario, before anything runs.
    pub fn from_json(text: &str) -> Result<Spec, ScenarioError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| ScenarioError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let Value::Object(doc) = doc else {
            return Err(bad("sweep", "expected an object with `base` and `axes`"));
        };
        if let Some(key) = doc
            .keys()
            .find(|k| !["base", "set", "inputs", "axes"].contains(&k.as_str()))
        {
            return Err(bad(
                key.as_str(),
                "unknown key; a sweep has base, set, inputs, axes",
            ));
        }
        let base = base(doc.get("base"))?;
        let base = match doc.get("set") {
            None => base,
            Some(Value::Object(sets)) => {
                let sets: Vec<(String, String)> = sets
                    .iter()
                    .map(|(p, v)| (p.clone(), value_text(v)))
                    .collect();
                let sets: Vec<(&str, &str)> =
                    sets.iter().map(|(p, v)| (p.as_str(), v.as_str())).collect();
                base.with_fields(&sets)?
            }
            Some(_) => return Err(bad("set", "expected an object of field path → value")),
        };
        let inputs = match doc.get("inputs") {
            None => Vec::new(),
            Some(v) => inputs(v)?,
        };
        let Some(Value::Array(given)) = doc.get("axes") else {
            return Err(bad("axes", "expected a list of axes"));
        };
        if given.is_empty() {
            return Err(bad("axes", "give at least one axis"));
        }
        let axes = given
            .iter()
            .enumerate()
            .map(|(i, a)| axis(a, &format!("axes[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let spec = Spec { base, inputs, axes };
        spec.check()?;
        Ok(spec)
    }

    /// How many points the product has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.positions.len()).product()
    }

    /// Whether it has no point (never, once read).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Point `index` (first axis outermost).
    #[must_use]
    pub fn point(&self, index: usize) -> Point {
        let mut rest = index;
        let mut chosen: Vec<&Vec<Edit>> = Vec::with_capacity(self.axes.len());
        for axis in self.axes.iter().rev() {
            let n = axis.positions.len();
            chosen.push(&axis.positions[rest % n]);
            rest /= n;
        }
        chosen.reverse();
        Point {
            index,
            edits: chosen.into_iter().flatten().cloned().collect(),
        }
    }

    /// The scenario of a point: the base with its field edits.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field, with the point's values.
    pub fn scenario(&self, point: &Point) -> Result<Scenario, ScenarioError> {
        let sets = point.fields();
        self.base.with_fields(&sets).map_err(|e| match e {
            ScenarioError::Field { path, message } => {
                bad(path, format!("{message} (sweep point {})", label(point)))
            }
            other => other,
        })
    }

    /// The input files of a point: the base's, with each input edit replacing its slot's.
    #[must_use]
    pub fn point_inputs(&self, point: &Point) -> Vec<(String, String)> {
        let swept = point.inputs();
        let mut out: Vec<(String, String)> = self
            .inputs
            .iter()
            .filter(|(slot, _)| !swept.iter().any(|(s, _)| s == slot))
            .cloned()
            .collect();
        out.extend(swept.iter().map(|(s, f)| (s.to_string(), f.to_string())));
        out
    }

    /// Runs point `index`, reading its files with `read(file) -> text` (the caller's I/O,
    /// relative paths resolved as it likes).
    ///
    /// # Errors
    /// The point's invalid field, an unreadable file (at `input <slot>`), or the run's error.
    pub fn run_point(
        &self,
        index: usize,
        read: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<Report, ScenarioError> {
        let point = self.point(index);
        let scenario = self.scenario(&point)?;
        let files = self.point_inputs(&point);
        let texts = files
            .iter()
            .map(|(slot, file)| read(file).map_err(|e| bad(format!("input {slot}"), e)))
            .collect::<Result<Vec<_>, _>>()?;
        let inputs: Vec<InputFile<'_>> = files
            .iter()
            .zip(&texts)
            .map(|((slot, file), text)| InputFile {
                slot,
                source: file,
                text,
            })
            .collect();
        crate::run_with_inputs(&scenario, &inputs, &mut |_, _| {})
    }

    /// The table's header line (with its newline).
    #[must_use]
    pub fn header(&self) -> String {
        let mut cells = Vec::from([String::from("point")]);
        cells.extend(self.point(0).edits.iter().map(|e| csv_field(&e.column())));
        cells.extend(["metric", "value", "unit", "error"].map(String::from));
        format!("{}\n", cells.join(","))
    }

    /// The table's rows for point `index` and its outcome: one per metric, or one with the
    /// error.
    #[must_use]
    pub fn rows(&self, index: usize, outcome: &Result<Report, ScenarioError>) -> String {
        let lead = self.lead(index);
        match outcome {
            Ok(report) => report
                .metrics
                .iter()
                .map(|m| {
                    format!(
                        "{lead},{},{},{},\n",
                        csv_field(&m.key),
                        m.value,
                        csv_field(&m.unit)
                    )
                })
                .collect(),
            Err(e) => format!("{lead},,,,{}\n", csv_field(&e.to_string())),
        }
    }

    /// The cells every row of point `index` starts with: `index,<its values>`.
    #[must_use]
    pub fn lead(&self, index: usize) -> String {
        let mut lead = index.to_string();
        for value in self.point(index).values() {
            lead.push(',');
            lead.push_str(&csv_field(value));
        }
        lead
    }

    /// The rows a table already holds (`table`, as [`Spec::header`] and [`Spec::rows`] wrote
    /// it, maybe cut short by a stop mid-write), by point. A point whose last row is cut short
    /// is left out, to run again.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `resume` when the header is another sweep's, or a row
    /// (named by its line) is no point of this sweep or holds other values.
    pub fn rows_in(&self, table: &str) -> Result<BTreeMap<usize, String>, ScenarioError> {
        let header = self.header();
        let Some(body) = table.strip_prefix(header.as_str()) else {
            return Err(bad(
                "resume",
                format!(
                    "the table holds another sweep (its header is not `{}`)",
                    header.trim_end()
                ),
            ));
        };
        let complete = body.rfind('\n').map_or("", |end| &body[..=end]);
        let mut out: BTreeMap<usize, String> = BTreeMap::new();
        for (n, line) in complete.lines().enumerate() {
            let index = line
                .split(',')
                .next()
                .and_then(|i| i.parse::<usize>().ok())
                .filter(|&i| i < self.len() && line.starts_with(&format!("{},", self.lead(i))));
            let Some(index) = index else {
                return Err(bad(
                    "resume",
                    format!("line {}: not a row of this sweep's points", n + 2),
                ));
            };
            let rows = out.entry(index).or_default();
            rows.push_str(line);
            rows.push('\n');
        }
        let cut = body[complete.len()..].split(',').next();
        if let Some(index) = cut.and_then(|i| i.parse::<usize>().ok()) {
            out.remove(&index);
        }
        Ok(out)
    }

    /// Checks the point count and every point's scenario, before anything runs.
    fn check(&self) -> Result<(), ScenarioError> {
        let count = self
            .axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.positions.len()))
            .filter(|&n| n <= MAX_POINTS);
        let Some(count) = count else {
            return Err(bad(
                "axes",
                format!("the product of the axes has more than {MAX_POINTS} points"),
            ));
        };
        let slots = self.base.input_slots();
        let known = |slot: &str| slots.iter().any(|s| s.name == slot);
        let names: Vec<&str> = slots.iter().map(|s| s.name).collect();
        for (slot, _) in &self.inputs {
            if !known(slot) {
                return Err(bad(
                    format!("inputs.{slot}"),
                    format!(
                        "the {} lab has no input `{slot}`; it reads {}",
                        self.base.lab(),
                        names.join(", ")
                    ),
                ));
            }
        }
        for (i, axis) in self.axes.iter().enumerate() {
            for edit in axis.positions.iter().flatten() {
                if let Edit::Input { slot, .. } = edit {
                    if !known(slot) {
                        return Err(bad(
                            format!("axes[{i}].input"),
                            format!(
                                "the {} lab has no input `{slot}`; it reads {}",
                                self.base.lab(),
                                names.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
        let columns: Vec<String> = self.point(0).edits.iter().map(Edit::column).collect();
        if let Some(c) = columns
            .iter()
            .enumerate()
            .find(|(i, c)| columns[..*i].contains(c))
        {
            return Err(bad("axes", format!("`{}` is swept by two axes", c.1)));
        }
        for index in 0..count {
            self.scenario(&self.point(index))?;
        }
        Ok(())
    }
}

/// The point's values as `path=value …`, for messages.
fn label(point: &Point) -> String {
    point
        .edits
        .iter()
        .map(|e| format!("{}={}", e.column(), e.value()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The base: a lab's name, a preset id or a scenario object.
fn base(v: Option<&Value>) -> Result<Scenario, ScenarioError> {
    match v {
        Some(Value::String(name)) => {
            if let Some(preset) = crate::presets::find(name) {
                preset.scenario()
            } else if crate::scenario::LABS.contains(&name.as_str()) {
                Scenario::for_lab(name)
            } else {
                Err(bad(
                    "base",
                    format!(
                        "`{name}` is neither a lab ({}) nor a preset id",
                        crate::scenario::LABS.join(", ")
                    ),
                ))
            }
        }
        Some(object @ Value::Object(_)) => Scenario::from_json(&object.to_string()),
        _ => Err(bad(
            "base",
            "expected a lab, a preset id or a scenario object",
        )),
    }
}

/// `inputs`: slot → file or list of files.
fn inputs(v: &Value) -> Result<Vec<(String, String)>, ScenarioError> {
    let Value::Object(slots) = v else {
        return Err(bad("inputs", "expected an object of input slot → file"));
    };
    let mut out = Vec::new();
    for (slot, files) in slots {
        match files {
            Value::String(f) => out.push((slot.clone(), f.clone())),
            Value::Array(list) => {
                for (i, f) in list.iter().enumerate() {
                    let Value::String(f) = f else {
                        return Err(bad(format!("inputs.{slot}[{i}]"), "expected a file path"));
                    };
                    out.push((slot.clone(), f.clone()));
                }
            }
            _ => {
                return Err(bad(
                    format!("inputs.{slot}"),
                    "expected a file or a list of files",
                ))
            }
        }
    }
    Ok(out)
}

/// One axis at `at` (`axes[2]`): `{path, values|range}`, `{zip: [...]}` or `{input, values}`.
fn axis(v: &Value, at: &str) -> Result<Axis, ScenarioError> {
    let Value::Object(o) = v else {
        return Err(bad(
            at,
            "expected an object: {path, values}, {path, range}, {zip} or {input, values}",
        ));
    };
    if let Some(members) = o.get("zip") {
        let Value::Array(members) = members else {
            return Err(bad(format!("{at}.zip"), "expected a list of axes"));
        };
        let parts = members
            .iter()
            .enumerate()
            .map(|(i, m)| axis(m, &format!("{at}.zip[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(n) = parts.first().map(|p| p.positions.len()) else {
            return Err(bad(format!("{at}.zip"), "give at least one axis"));
        };
        if let Some((i, p)) = parts
            .iter()
            .enumerate()
            .find(|(_, p)| p.positions.len() != n)
        {
            return Err(bad(
                format!("{at}.zip[{i}]"),
                format!(
                    "has {} values; the first axis of the zip has {n}",
                    p.positions.len()
                ),
            ));
        }
        let positions = (0..n)
            .map(|k| {
                parts
                    .iter()
                    .flat_map(|p| p.positions[k].iter().cloned())
                    .collect()
            })
            .collect();
        return Ok(Axis { positions });
    }
    let values = match (o.get("values"), o.get("range")) {
        (Some(Value::Array(list)), None) if !list.is_empty() => {
            list.iter().map(value_text).collect::<Vec<_>>()
        }
        (None, Some(range)) => range_values(range, &format!("{at}.range"))?,
        _ => {
            return Err(bad(
                at,
                "give a non-empty `values` list or a `range` [start, stop, step]",
            ))
        }
    };
    let positions = match (o.get("path"), o.get("input")) {
        (Some(Value::String(path)), None) => values
            .into_iter()
            .map(|value| {
                Vec::from([Edit::Field {
                    path: path.clone(),
                    value,
                }])
            })
            .collect(),
        (None, Some(Value::String(slot))) => values
            .into_iter()
            .map(|file| {
                Vec::from([Edit::Input {
                    slot: slot.clone(),
                    file,
                }])
            })
            .collect(),
        _ => return Err(bad(at, "give a field `path` or an input slot `input`")),
    };
    Ok(Axis { positions })
}

/// `[start, stop]` or `[start, stop, step]`: `start, start + step, …` below `stop`, as
/// Python's `range` (integers stay integers).
fn range_values(v: &Value, at: &str) -> Result<Vec<String>, ScenarioError> {
    let nums: Option<Vec<f64>> = match v {
        Value::Array(list) if (2..=3).contains(&list.len()) => {
            list.iter().map(Value::as_f64).collect()
        }
        _ => None,
    };
    let Some(nums) = nums else {
        return Err(bad(
            at,
            "expected [start, stop] or [start, stop, step], numbers",
        ));
    };
    let (start, stop, step) = (nums[0], nums[1], nums.get(2).copied().unwrap_or(1.0));
    if step.is_nan() || step <= 0.0 || !start.is_finite() || !stop.is_finite() {
        return Err(bad(at, "expected finite numbers and a step above 0"));
    }
    let integers = match v {
        Value::Array(list) => list.iter().all(|n| n.is_i64() || n.is_u64()),
        _ => false,
    };
    let count = libm::ceil((stop - start) / step);
    if count.is_nan() || count < 1.0 || count > MAX_POINTS as f64 {
        return Err(bad(
            at,
            format!("gives {count} values; give 1 to {MAX_POINTS}"),
        ));
    }
    Ok((0..count as usize)
        .map(|k| {
            let x = start + step * k as f64;
            if integers {
                format!("{}", x as i64)
            } else {
                format!("{x}")
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<Spec, ScenarioError> {
        Spec::from_json(text)
    }

    #[test]
    fn points_are_the_product_first_axis_outermost_with_zips_stepping_together() {
        let s = spec(
            r#"{"base": "pipeline", "set": {"schedules": ["1f1b"]}, "axes": [
                {"path": "stages", "values": [2, 4]},
                {"zip": [{"path": "micro_batches", "range": [8, 25, 8]},
                         {"path": "forward_ns", "values": [1000, 2000, 3000]}]}]}"#,
        )
        .unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(
            s.header(),
            "point,stages,micro_batches,forward_ns,metric,value,unit,error\n"
        );
        let p = s.point(4);
        let values: Vec<&str> = p.values().collect();
        assert_eq!(values, ["4", "16", "2000"]);
        let report = s.run_point(4, &mut |_| Err("no files".into())).unwrap();
        let direct = crate::run(
            &Scenario::for_lab("pipeline")
                .unwrap()
                .with_fields(&[
                    ("schedules", "1f1b"),
                    ("stages", "4"),
                    ("micro_batches", "16"),
                    ("forward_ns", "2000"),
                ])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(report, direct);
        let rows = s.rows(4, &Ok(report.clone()));
        assert_eq!(rows.lines().count(), report.metrics.len());
        let first = &report.metrics[0];
        assert!(rows.starts_with(&format!(
            "4,4,16,2000,{},{},{},\n",
            first.key, first.value, first.unit
        )));
        let failed = s.rows(1, &Err(ScenarioError::Run("it, \"broke\"".into())));
        assert_eq!(failed, "1,2,16,2000,,,,\"run failed: it, \"\"broke\"\"\"\n");
    }

    #[test]
    fn a_table_cut_short_resumes_at_its_last_whole_point() {
        let s = spec(r#"{"base": "pipeline", "axes": [{"path": "stages", "values": [2, 4, 8]}]}"#)
            .unwrap();
        let rows: Vec<String> = (0..3)
            .map(|i| s.rows(i, &s.run_point(i, &mut |_| Err(String::new()))))
            .collect();
        let whole = format!("{}{}{}", s.header(), rows[2], rows[0]);
        let cut = format!("{whole}{}", &rows[1][..rows[1].len() / 2]);
        let kept = s.rows_in(&cut).unwrap();
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(kept[&2], rows[2]);
        assert_eq!(
            s.rows_in("point,x,metric,value,unit,error\n")
                .unwrap_err()
                .path(),
            Some("resume")
        );
        let other = format!("{}0,16,m,1,ratio,\n", s.header());
        assert!(s
            .rows_in(&other)
            .unwrap_err()
            .to_string()
            .contains("line 2"));
    }

    #[test]
    fn input_axes_replace_the_base_file_of_their_slot() {
        let s = spec(
            r#"{"base": "agentic", "inputs": {"trace": "a.csv"},
                "axes": [{"input": "trace", "values": ["b.csv", "c.csv"]}]}"#,
        )
        .unwrap();
        assert_eq!(s.header(), "point,input:trace,metric,value,unit,error\n");
        assert_eq!(
            s.point_inputs(&s.point(1)),
            [("trace".to_string(), "c.csv".to_string())]
        );
        let err = s
            .run_point(0, &mut |f| Err(format!("cannot read {f}")))
            .unwrap_err();
        assert_eq!(err.path(), Some("input trace"));
    }

    #[test]
    fn a_bad_sweep_names_its_path_before_anything_runs() {
        let cases = [
            (r#"{"base": "pipeline", "axes": []}"#, "axes"),
            (
                r#"{"base": "nope", "axes": [{"path": "stages", "values": [2]}]}"#,
                "base",
            ),
            (r#"{"base": "pipeline", "axis": []}"#, "axis"),
            (
                r#"{"base": "pipeline", "axes": [{"path": "stages"}]}"#,
                "axes[0]",
            ),
            (
                r#"{"base": "pipeline", "axes": [{"path": "stages", "range": [8, 2]}]}"#,
                "axes[0].range",
            ),
            (
                r#"{"base": "pipeline", "axes": [{"path": "stages", "range": [1, 9, 0]}]}"#,
                "axes[0].range",
            ),
            (
                r#"{"base": "pipeline", "axes": [{"zip": [{"path": "stages", "values": [2, 4]}, {"path": "micro_batches", "values": [8]}]}]}"#,
                "axes[0].zip[1]",
            ),
            (
                r#"{"base": "pipeline", "axes": [{"path": "stages", "values": [2, 0]}]}"#,
                "pipeline.stages",
            ),
            (
                r#"{"base": "pipeline", "axes": [{"path": "stages", "values": [2]}, {"path": "stages", "values": [4]}]}"#,
                "axes",
            ),
            (
                r#"{"base": "pipeline", "axes": [{"input": "trace", "values": ["a"]}]}"#,
                "axes[0].input",
            ),
            (
                r#"{"base": "pipeline", "set": {"stagez": 3}, "axes": [{"path": "stages", "values": [2]}]}"#,
                "pipeline.stagez",
            ),
        ];
        for (text, path) in cases {
            let e = spec(text).unwrap_err();
            assert_eq!(e.path(), Some(path), "{text}: {e}");
        }
        let e = spec(r#"{"base": "pipeline", "axes": [{"path": "stages", "values": [2, 0]}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("(sweep point stages=0)"), "{e}");
        assert!(matches!(spec("{"), Err(ScenarioError::Syntax { .. })));
    }
}
