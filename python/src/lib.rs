//! `bubblelab._native`: the core's entry points for the Python package (`python/bubblelab`).
//!
//! Thin on purpose: scenarios cross as JSON text, a run's Report stays a Rust value the Python
//! side reads through [`Report`], and every error becomes the package's own exception
//! (`bubblelab.errors.ScenarioError` with the field path, or `RunError`), never a panic. The
//! Python side resolves what a user passes (a dict, a file, a link, a lab, a preset id).

use bubblelab_core::fields::{Range, Widget};
use bubblelab_core::labs::LABS;
use std::path::{Path, PathBuf};

use bubblelab_core::scenario::InputFile;
use bubblelab_core::sweep::spec::Spec;
use bubblelab_core::{share, trace, Scenario, ScenarioError};
use pyo3::prelude::*;

/// The package's exception for `e`: `ScenarioError(message, path, line, column)` for bad
/// input, `RunError(message)` for a lab that could not finish.
fn to_py_err(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let errors = py.import("bubblelab.errors")?;
        let value = match e {
            ScenarioError::Syntax {
                line,
                column,
                message,
            } => errors.getattr("ScenarioError")?.call1((
                format!("the scenario is not JSON: {message} (line {line}, column {column})"),
                py.None(),
                *line,
                *column,
            ))?,
            ScenarioError::Field { .. } => errors.getattr("ScenarioError")?.call1((
                e.to_string(),
                e.path(),
                py.None(),
                py.None(),
            ))?,
            ScenarioError::Run(_) => errors.getattr("RunError")?.call1((e.to_string(),))?,
        };
        Ok(PyErr::from_value(value))
    })();
    made.unwrap_or_else(|err| err)
}

/// The scenario in `json` with each `(path, value)` of `sets` applied, validated.
fn scenario(py: Python<'_>, json: &str, sets: &[(String, String)]) -> PyResult<Scenario> {
    let base = Scenario::from_json(json).map_err(|e| to_py_err(py, &e))?;
    let sets: Vec<(&str, &str)> = sets.iter().map(|(p, v)| (p.as_str(), v.as_str())).collect();
    base.with_fields(&sets).map_err(|e| to_py_err(py, &e))
}

/// The error for a lab name the registry does not hold.
fn unknown_lab(py: Python<'_>, lab: &str) -> PyErr {
    let e = ScenarioError::field(
        "lab",
        format!("unknown lab `{lab}`; expected one of {}", LABS.join(", ")),
    );
    to_py_err(py, &e)
}

/// Runs a scenario (JSON text) with `sets` applied and `inputs` (slot, file name, text) read by
/// the lab's readers; the interpreter is free for other threads while it runs.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list argument as an owned Vec
fn run(
    py: Python<'_>,
    scenario_json: &str,
    sets: Vec<(String, String)>,
    inputs: Vec<(String, String, String)>,
) -> PyResult<Report> {
    let scenario = scenario(py, scenario_json, &sets)?;
    let outcome = py.detach(|| {
        let files: Vec<InputFile<'_>> = inputs
            .iter()
            .map(|(slot, source, text)| InputFile { slot, source, text })
            .collect();
        bubblelab_core::run_with_inputs(&scenario, &files, &mut |_, _| {})
    });
    outcome
        .map(|inner| Report { inner })
        .map_err(|e| to_py_err(py, &e))
}

/// The scenario (JSON text) with `sets` applied, validated, as compact JSON with every
/// parameter written out.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list argument as an owned Vec
fn normalize(py: Python<'_>, scenario_json: &str, sets: Vec<(String, String)>) -> PyResult<String> {
    Ok(scenario(py, scenario_json, &sets)?.to_json())
}

/// What lab `lab` starts from (its first preset), as JSON.
#[pyfunction]
fn lab_scenario(py: Python<'_>, lab: &str) -> PyResult<String> {
    Scenario::for_lab(lab)
        .map(|s| s.to_json())
        .map_err(|e| to_py_err(py, &e))
}

/// Every lab's name, in the registry's order.
#[pyfunction]
fn labs() -> Vec<&'static str> {
    LABS.to_vec()
}

/// Every preset as (id, lab, title, scenario JSON as stored), lab by lab in menu order.
#[pyfunction]
fn all_presets() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    bubblelab_core::presets::all()
        .map(|p| (p.id, p.lab, p.title, p.json))
        .collect()
}

/// One row of a field table as a dict's items.
type FieldRow = Vec<(&'static str, Py<PyAny>)>;

/// Lab `lab`'s field table: path, label, unit, kind (int, float, one_of, some_of, bool,
/// structured), min, max, ids, default (JSON), help, widget.
#[pyfunction]
fn field_table(py: Python<'_>, lab: &str) -> PyResult<Vec<FieldRow>> {
    let defaults = Scenario::defaults(lab).ok_or_else(|| unknown_lab(py, lab))?;
    let values = serde_json::from_str::<serde_json::Value>(&defaults.to_json())
        .ok()
        .and_then(|mut v| v.get_mut("params").map(serde_json::Value::take))
        .unwrap_or_default();
    let mut rows = Vec::new();
    for f in defaults.fields() {
        let none = || py.None();
        let (kind, min, max, ids): (&str, Py<PyAny>, Py<PyAny>, &[&str]) = match f.range {
            Range::Int { min, max } => (
                "int",
                min.into_pyobject(py)?.into_any().unbind(),
                max.into_pyobject(py)?.into_any().unbind(),
                &[],
            ),
            Range::Float { min, max } => (
                "float",
                min.into_pyobject(py)?.into_any().unbind(),
                max.into_pyobject(py)?.into_any().unbind(),
                &[],
            ),
            Range::OneOf(ids) => ("one_of", none(), none(), ids),
            Range::SomeOf(ids) => ("some_of", none(), none(), ids),
            Range::Bool => ("bool", none(), none(), &[]),
            Range::Structured => ("structured", none(), none(), &[]),
        };
        let widget = match f.widget {
            Widget::Number => "number",
            Widget::Slider => "slider",
            Widget::Select => "select",
            Widget::Checkboxes => "checkboxes",
            Widget::Toggle => "toggle",
            Widget::Json => "json",
        };
        let default = bubblelab_core::fields::value_at(&values, f.path).map(ToString::to_string);
        rows.push(vec![
            ("path", f.path.into_pyobject(py)?.into_any().unbind()),
            ("label", f.label.into_pyobject(py)?.into_any().unbind()),
            ("unit", f.unit.into_pyobject(py)?.into_any().unbind()),
            ("kind", kind.into_pyobject(py)?.into_any().unbind()),
            ("min", min),
            ("max", max),
            ("ids", ids.to_vec().into_pyobject(py)?.into_any().unbind()),
            (
                "default_json",
                default.into_pyobject(py)?.into_any().unbind(),
            ),
            ("help", f.help.into_pyobject(py)?.into_any().unbind()),
            ("widget", widget.into_pyobject(py)?.into_any().unbind()),
        ]);
    }
    Ok(rows)
}

/// Lab `lab`'s input slots as (name, help, takes several files).
#[pyfunction]
fn input_slots(py: Python<'_>, lab: &str) -> PyResult<Vec<(&'static str, &'static str, bool)>> {
    let scenario = Scenario::defaults(lab).ok_or_else(|| unknown_lab(py, lab))?;
    Ok(scenario
        .input_slots()
        .iter()
        .map(|s| (s.name, s.help, s.many))
        .collect())
}

/// The share link of a scenario (JSON text) under `base`.
#[pyfunction]
fn link(py: Python<'_>, scenario_json: &str, base: &str) -> PyResult<String> {
    let scenario = scenario(py, scenario_json, &[])?;
    Ok(share::link(base, &scenario))
}

/// The scenario of a share link (a URL, its fragment, `s=…` or the payload), as JSON.
#[pyfunction]
fn decode_link(py: Python<'_>, link: &str) -> PyResult<String> {
    share::decode_link(link).map(|s| s.to_json()).map_err(|e| {
        let errors = py.import("bubblelab.errors");
        match errors.and_then(|m| {
            m.getattr("ScenarioError")?
                .call1((format!("link: {e}"), "link"))
        }) {
            Ok(value) => PyErr::from_value(value),
            Err(err) => err,
        }
    })
}

/// Largest input file a sweep point reads, bytes (as the CLI's `--input`).
const MAX_INPUT_FILE_BYTES: u64 = 256 << 20;

/// A sweep file, read once, whose points run one call each (`bubblelab.sweep` runs them on
/// threads or as Ray tasks; both write [`Spec::rows`], so their tables agree byte for byte).
#[pyclass(frozen, module = "bubblelab._native")]
struct Sweep {
    spec: Spec,
    /// The folder input files are relative to.
    folder: PathBuf,
}

#[pymethods]
impl Sweep {
    /// Reads a sweep file's JSON; input files are relative to `folder`.
    #[new]
    fn new(py: Python<'_>, spec_json: &str, folder: &str) -> PyResult<Sweep> {
        let spec = Spec::from_json(spec_json).map_err(|e| to_py_err(py, &e))?;
        Ok(Sweep {
            spec,
            folder: PathBuf::from(folder),
        })
    }

    fn __len__(&self) -> usize {
        self.spec.len()
    }

    /// The table's header line.
    #[getter]
    fn header(&self) -> String {
        self.spec.header()
    }

    /// Point `index`'s rows of the table (its metrics, or its error); the interpreter is free
    /// meanwhile.
    fn run_point(&self, py: Python<'_>, index: usize) -> PyResult<String> {
        if index >= self.spec.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "point {index} of a sweep of {}",
                self.spec.len()
            )));
        }
        Ok(py.detach(|| {
            let outcome = self
                .spec
                .run_point(index, &mut |file| read_input(&self.folder, file));
            self.spec.rows(index, &outcome)
        }))
    }

    /// The rows a table already holds, as (point, rows), a point cut short left out.
    fn rows_in(&self, py: Python<'_>, table: &str) -> PyResult<Vec<(usize, String)>> {
        self.spec
            .rows_in(table)
            .map(|rows| rows.into_iter().collect())
            .map_err(|e| to_py_err(py, &e))
    }
}

/// The UTF-8 text of input `file` (as the sweep names it) under `folder`, or why not, worded
/// as the CLI's `bubblelab sweep` words it.
fn read_input(folder: &Path, file: &str) -> Result<String, String> {
    use std::io::{ErrorKind, Read as _};
    let describe = |e: &std::io::Error| match e.kind() {
        ErrorKind::NotFound => "no such file or folder".to_string(),
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        ErrorKind::IsADirectory => "is a folder, not a file".to_string(),
        _ => e.to_string(),
    };
    let opened = std::fs::File::open(folder.join(file));
    let file_handle = opened.map_err(|e| format!("{file}: cannot open: {}", describe(&e)))?;
    if file_handle.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{file}: is a folder, not a file"));
    }
    let mut bytes = Vec::new();
    file_handle
        .take(MAX_INPUT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{file}: cannot read: {}", describe(&e)))?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(format!(
            "{file}: larger than the {} MiB limit",
            MAX_INPUT_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{file}: not UTF-8 text (bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A lab run's Report: the same value the CLI prints and the page draws.
#[pyclass(frozen, module = "bubblelab._native")]
struct Report {
    inner: bubblelab_core::Report,
}

#[pymethods]
impl Report {
    /// Reads a Report's JSON (as `to_json` writes it).
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<Report> {
        serde_json::from_str(text)
            .map(|inner| Report { inner })
            .map_err(|e| {
                let e = ScenarioError::Syntax {
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                };
                to_py_err(py, &e)
            })
    }

    /// The lab that produced it.
    #[getter]
    fn lab(&self) -> &str {
        &self.inner.lab
    }

    /// Its one-line title.
    #[getter]
    fn title(&self) -> &str {
        &self.inner.title
    }

    /// As JSON: indented as `bubblelab run --format json` prints it (less its final newline),
    /// or on one line.
    #[pyo3(signature = (pretty = true))]
    fn to_json(&self, pretty: bool) -> String {
        if pretty {
            self.inner.to_json_pretty()
        } else {
            self.inner.to_json()
        }
    }

    /// As `bubblelab run --format csv` prints it.
    fn to_csv(&self) -> String {
        self.inner.to_csv()
    }

    /// As `bubblelab run` prints it.
    fn to_text(&self) -> String {
        self.inner.to_text()
    }

    /// Its timelines as a Chrome trace (JSON for Perfetto or chrome://tracing), as
    /// `bubblelab run --trace FILE` writes it.
    fn chrome_trace(&self) -> String {
        trace::to_chrome_trace(&self.inner)
    }

    fn __eq__(&self, other: &Report) -> bool {
        self.inner == other.inner
    }
}

/// The module `bubblelab._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Report>()?;
    m.add_class::<Sweep>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(lab_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(labs, m)?)?;
    m.add_function(wrap_pyfunction!(all_presets, m)?)?;
    m.add_function(wrap_pyfunction!(field_table, m)?)?;
    m.add_function(wrap_pyfunction!(input_slots, m)?)?;
    m.add_function(wrap_pyfunction!(link, m)?)?;
    m.add_function(wrap_pyfunction!(decode_link, m)?)?;
    Ok(())
}
