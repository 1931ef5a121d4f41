//! Scenarios: the versioned, validated input of every lab.
//!
//! On disk and in share links a scenario is JSON of this shape:
//!
//! ```json
//! {"version": 1, "lab": "pipeline", "params": {"stages": 4, "micro_batches": 8}}
//! ```
//!
//! Every parameter has a default, so `params` may name only what differs. Unknown fields are
//! rejected by name, and every error names the field path (`pipeline.stages`) and what was
//! expected.

use alloc::format;
use alloc::string::{String, ToString};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::report::Report;

/// The scenario format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// What a lab's parameters are to the registry (the table in `labs/mod.rs`): how they are
/// read, checked and run. Each lab implements it beside its `run` (`labs/<lab>/mod.rs`).
pub trait LabParams: Sized + Clone + Serialize + DeserializeOwned {
    /// Checks every field; the error names the first bad one (`<lab>.<field>`).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field and the expected range.
    fn check(&self) -> Result<(), ScenarioError>;

    /// Runs the checked parameters, calling `progress(done, total)` at the lab's natural steps
    /// ([`one_step`] for a lab that is one simulation).
    ///
    /// # Errors
    /// A [`ScenarioError`] when the lab cannot complete.
    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError>;

    /// Every parameter with its label, unit, range and help, in form order ([`crate::fields`]),
    /// from which the lab's validation starts, the CLI's `--fields` and docs/parameters/ come.
    const FIELDS: &'static [crate::fields::Field];

    /// The files this lab reads beside its parameters (traces, node lists, stage logs), by
    /// slot name; the CLI's `--input SLOT=FILE` and the page's uploads fill them.
    const INPUTS: &'static [InputSlot] = &[];

    /// Runs the checked parameters on the given input files (each in one of [`Self::INPUTS`]),
    /// calling `progress` as [`LabParams::run_lab`]; with no files it is `run_lab`. The default
    /// runs [`LabParams::with_inputs`]'s parameters.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `input` for a slot the lab does not have, or naming the file
    /// and row a reader refused; as [`LabParams::run_lab`] otherwise.
    fn run_with_inputs(
        &self,
        inputs: &[InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        self.with_inputs(inputs)?.run_lab(progress)
    }

    /// These parameters with the files whose contents are parameters read into them (a node
    /// list, a workload, a shares file), checked: what a page stores in its form and its share
    /// link. The default reads every file with [`LabParams::read_input`].
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `input` for a slot the lab does not have or whose file is
    /// read only when the lab runs, or naming the file and row a reader refused.
    fn with_inputs(&self, inputs: &[InputFile<'_>]) -> Result<Self, ScenarioError> {
        check_slots::<Self>(inputs)?;
        let mut params = self.clone();
        for file in inputs {
            params.read_input(file)?;
        }
        params.check()?;
        Ok(params)
    }

    /// Reads one file of a slot whose contents become parameters (a node list, a workload);
    /// what [`LabParams::with_inputs`] calls for each file unless the lab overrides it.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the file and row the reader refused.
    fn read_input(&mut self, file: &InputFile<'_>) -> Result<(), ScenarioError> {
        Err(ScenarioError::field(
            "input",
            format!(
                "`{}` is read when the lab runs, not into its parameters",
                file.slot
            ),
        ))
    }

    /// The parameters from the scenario's `params` JSON (serde, errors at `<lab>.<field>`).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the bad or unknown field.
    fn from_params(lab: &str, value: serde_json::Value) -> Result<Self, ScenarioError> {
        params_from_value(lab, value)
    }
}

/// A file a lab reads beside its parameters: the name it is given by (`--input NAME=FILE`)
/// and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSlot {
    /// Slot name, e.g. `trace` or `pods`.
    pub name: &'static str,
    /// What the file holds, one line (formats, columns).
    pub help: &'static str,
    /// Whether the slot takes several files (a folder of stage logs), in name order.
    pub many: bool,
    /// Whether a page reads the file into the scenario's parameters ([`LabParams::with_inputs`]),
    /// so that its share link carries them: lists small enough for a link (a node list, a
    /// workload, tenant shares). Otherwise every run reads the file, and links carry the
    /// scenario alone.
    pub carried: bool,
}

/// One file given to a lab's input slot: its text and the name errors call it by.
#[derive(Clone, Copy, Debug)]
pub struct InputFile<'a> {
    /// The slot it fills ([`InputSlot::name`]).
    pub slot: &'a str,
    /// The file's name in errors and in the Report's source line.
    pub source: &'a str,
    /// Its contents.
    pub text: &'a str,
}

/// Refuses a file in a slot `P` does not have, or a second file in a one-file slot.
///
/// # Errors
/// [`ScenarioError::Field`] at `input`, listing the lab's slots.
pub fn check_slots<P: LabParams>(inputs: &[InputFile<'_>]) -> Result<(), ScenarioError> {
    for (i, file) in inputs.iter().enumerate() {
        let Some(slot) = P::INPUTS.iter().find(|s| s.name == file.slot) else {
            let names: alloc::vec::Vec<&str> = P::INPUTS.iter().map(|s| s.name).collect();
            let expected = if names.is_empty() {
                "this lab reads no input files".to_string()
            } else {
                format!("this lab reads {}", names.join(", "))
            };
            return Err(ScenarioError::field(
                "input",
                format!("unknown input `{}`; {expected}", file.slot),
            ));
        };
        if !slot.many && inputs[..i].iter().any(|f| f.slot == file.slot) {
            return Err(ScenarioError::field(
                "input",
                format!(
                    "`{}` takes one file, got a second: {}",
                    slot.name, file.source
                ),
            ));
        }
    }
    Ok(())
}

/// The files of one slot, in the order given.
pub fn files_in<'a, 'f>(
    inputs: &'f [InputFile<'a>],
    slot: &'f str,
) -> impl Iterator<Item = &'f InputFile<'a>> + 'f {
    inputs.iter().filter(move |f| f.slot == slot)
}

/// A reader's error as a field error naming the file (`philly.csv: line 3, …`).
pub fn input_error(file: &InputFile<'_>, e: impl core::fmt::Display) -> ScenarioError {
    ScenarioError::field(file.source, e.to_string())
}

/// A lab's Report with the runs it was built from: what a page draws besides the Report (the
/// fairness lab's cluster view, the overlap lab's pass steps, the resilience lab's playback).
#[derive(Clone, Debug)]
pub struct Simulation<R> {
    /// What the lab keeps of its runs ([`KeepsRuns::Runs`]).
    pub runs: R,
    /// The Report built from them, the same as [`LabParams::run_lab`] returns.
    pub report: Report,
}

/// The one API for keeping a lab's intermediate runs, for the labs whose pages draw from them.
/// [`LabParams::run_lab`] of such a lab is [`KeepsRuns::simulate`] without the runs.
pub trait KeepsRuns: LabParams {
    /// The data the lab runs on besides its parameters: a trace, or `()` when the parameters
    /// say everything.
    type Input;
    /// What is kept of the runs.
    type Runs;

    /// Checks the parameters, runs the lab on `input` and keeps its runs, calling
    /// `progress(done, total)` at the lab's natural steps (as [`LabParams::run_lab`]).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] for invalid parameters; [`ScenarioError::Run`] for a bug.
    fn simulate(
        &self,
        input: &Self::Input,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Simulation<Self::Runs>, ScenarioError>;
}

/// A run of one step: `progress(0, 1)` before and `(1, 1)` after.
///
/// # Errors
/// Whatever `run` returns.
pub fn one_step(
    progress: &mut dyn FnMut(usize, usize),
    run: impl FnOnce() -> Result<Report, ScenarioError>,
) -> Result<Report, ScenarioError> {
    progress(0, 1);
    let report = run();
    progress(1, 1);
    report
}

/// The one list of labs, invoked once in `labs/mod.rs`: a row per lab (its module, its
/// [`LabParams`] type, its [`Scenario`] variant with its doc, and its name in JSON, routes and
/// links) gives the lab's `pub mod`, the `Scenario` enum, [`LABS`], [`Scenario::lab`],
/// [`Scenario::validate`], the JSON codec and [`crate::run`]'s dispatch.
macro_rules! labs {
    ($( $(#[$doc:meta])* $module:ident::$params:ident => $variant:ident = $name:literal; )+) => {
        $( pub mod $module; )+

        /// Lab names, in the order the playground lists them.
        pub const LABS: [&str; [$($name),+].len()] = [$($name),+];

        /// Each lab's presets (its `presets.rs`), in the order of [`LABS`].
        pub const LAB_PRESETS: [&[crate::presets::Preset]; [$($name),+].len()] =
            [$($module::PRESETS),+];

        /// Each lab's navigation link and home-page card (its `presets.rs`), in the order of
        /// [`LABS`].
        pub const LAB_CARDS: [&crate::presets::Card; [$($name),+].len()] = [$(&$module::CARD),+];

        /// Each lab's tours (its `presets.rs`), in the order of [`LABS`].
        pub const LAB_TOURS: [&[crate::tour::BuiltinTour]; [$($name),+].len()] =
            [$($module::TOURS),+];

        /// One lab's input. The variant is the lab; the payload holds every parameter.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Scenario {
            $( $(#[$doc])* $variant($module::$params), )+
        }

        $(
            impl TryFrom<Scenario> for $module::$params {
                type Error = Scenario;

                /// The parameters of a scenario of this lab; another lab's scenario back.
                fn try_from(scenario: Scenario) -> Result<Self, Scenario> {
                    match scenario {
                        Scenario::$variant(p) => Ok(p),
                        other => Err(other),
                    }
                }
            }
        )+

        impl Scenario {
            /// The lab name used in JSON, routes and links.
            #[must_use]
            pub fn lab(&self) -> &'static str {
                match self {
                    $( Scenario::$variant(_) => $name, )+
                }
            }

            /// Checks every parameter; the error names the first bad field.
            ///
            /// # Errors
            /// [`ScenarioError::Field`](crate::ScenarioError::Field) naming the field and the
            /// expected range.
            pub fn validate(&self) -> Result<(), crate::ScenarioError> {
                match self {
                    $( Scenario::$variant(p) => crate::scenario::LabParams::check(p), )+
                }
            }

            /// Runs the lab of a validated scenario (see [`crate::run_with_progress`]).
            pub(crate) fn run_lab(
                &self,
                progress: &mut dyn FnMut(usize, usize),
            ) -> Result<crate::Report, crate::ScenarioError> {
                match self {
                    $( Scenario::$variant(p) => crate::scenario::LabParams::run_lab(p, progress), )+
                }
            }

            /// The field table of the scenario's lab ([`LabParams::FIELDS`]).
            #[must_use]
            pub fn fields(&self) -> &'static [crate::fields::Field] {
                Scenario::fields_of(self.lab())
            }

            /// The field table of lab `lab` ([`LabParams::FIELDS`]); empty for an unknown lab.
            #[must_use]
            pub fn fields_of(lab: &str) -> &'static [crate::fields::Field] {
                match lab {
                    $( $name => <$module::$params as crate::scenario::LabParams>::FIELDS, )+
                    _ => &[],
                }
            }

            /// Lab `lab` with every parameter at its default (what a scenario that names no
            /// parameter gets); `None` for an unknown lab.
            #[must_use]
            pub fn defaults(lab: &str) -> Option<Scenario> {
                match lab {
                    $( $name => Some(Scenario::$variant(<$module::$params>::default())), )+
                    _ => None,
                }
            }

            /// The files the scenario's lab reads beside its parameters.
            #[must_use]
            pub fn input_slots(&self) -> &'static [crate::scenario::InputSlot] {
                match self {
                    $( Scenario::$variant(_) => <$module::$params as crate::scenario::LabParams>::INPUTS, )+
                }
            }

            /// The scenario with the files whose contents are parameters read into it
            /// ([`LabParams::with_inputs`]).
            ///
            /// # Errors
            /// As [`LabParams::with_inputs`].
            pub fn with_inputs(
                &self,
                inputs: &[crate::scenario::InputFile<'_>],
            ) -> Result<Scenario, crate::ScenarioError> {
                match self {
                    $( Scenario::$variant(p) => crate::scenario::LabParams::with_inputs(p, inputs).map(Scenario::$variant), )+
                }
            }

            /// Runs the lab of a validated scenario on input files (see
            /// [`crate::run_with_inputs`]).
            pub(crate) fn run_lab_with_inputs(
                &self,
                inputs: &[crate::scenario::InputFile<'_>],
                progress: &mut dyn FnMut(usize, usize),
            ) -> Result<crate::Report, crate::ScenarioError> {
                match self {
                    $( Scenario::$variant(p) => crate::scenario::LabParams::run_with_inputs(p, inputs, progress), )+
                }
            }

            /// The parameters as JSON.
            pub(crate) fn params_value(&self) -> serde_json::Value {
                match self {
                    $( Scenario::$variant(p) => crate::scenario::to_value(p), )+
                }
            }

            /// The scenario of lab `lab` from its `params`; `None` for an unknown lab.
            pub(crate) fn from_lab_params(
                lab: &str,
                params: serde_json::Value,
            ) -> Option<Result<Scenario, crate::ScenarioError>> {
                match lab {
                    $( $name => Some(<$module::$params as crate::scenario::LabParams>::from_params(lab, params).map(Scenario::$variant)), )+
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use labs;

pub use crate::labs::{Scenario, LABS};

/// Why a scenario (or a run of it) was refused.
/// It crosses to and from the page's Web Worker as JSON (serde), so a worker's refusal names the
/// same field as a run on the page would.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ScenarioError {
    /// The text is not JSON.
    Syntax {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// A field is missing, unknown, of the wrong type or out of range.
    Field {
        /// Dotted path, e.g. `pipeline.stages` or `pipeline.stage_slowdown[2]`.
        path: String,
        /// What was expected and what was found.
        message: String,
    },
    /// The run itself failed (e.g. a schedule that deadlocks): a bug report, not a user error.
    Run(String),
}

impl core::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ScenarioError::Syntax {
                line,
                column,
                message,
            } => write!(
                f,
                "not valid JSON at line {line}, column {column}: {message}"
            ),
            ScenarioError::Field { path, message } => write!(f, "{path}: {message}"),
            ScenarioError::Run(message) => write!(f, "run failed: {message}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A field error at `path`.
    pub fn field(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError::Field {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The field path this error names, if it names one (forms show the message beside it).
    #[must_use]
    pub fn path(&self) -> Option<&str> {
        match self {
            ScenarioError::Field { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Checks `min ≤ v ≤ max` for the field `{lab}.{field}` (a NaN lies outside every range, and
/// an infinity outside every finite one).
///
/// # Errors
/// [`ScenarioError::Field`] at `{lab}.{field}`: "must be between {min} and {max}, got {v}".
pub fn check_range<T: PartialOrd + core::fmt::Display + Copy>(
    lab: &str,
    field: &str,
    v: T,
    min: T,
    max: T,
) -> Result<(), ScenarioError> {
    check_range_in(lab, field, v, min, max, "")
}

/// [`check_range`] with the unit of `min` and `max` in the message ("between 0 and 10 s").
///
/// # Errors
/// [`ScenarioError::Field`] at `{lab}.{field}`: "must be between {min} and {max}{unit}, got {v}".
pub fn check_range_in<T: PartialOrd + core::fmt::Display + Copy>(
    lab: &str,
    field: &str,
    v: T,
    min: T,
    max: T,
    unit: &str,
) -> Result<(), ScenarioError> {
    if v >= min && v <= max {
        return Ok(());
    }
    Err(ScenarioError::field(
        format!("{lab}.{field}"),
        format!("must be between {min} and {max}{unit}, got {v}"),
    ))
}

impl Scenario {
    /// Parses and validates scenario JSON.
    ///
    /// # Errors
    /// A [`ScenarioError`] naming the line/column (bad JSON) or the field path (bad values).
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ScenarioError::Syntax {
                line: e.line(),
                column: e.column(),
                message: strip_position(&e.to_string()),
            })?;
        let serde_json::Value::Object(mut object) = value else {
            return Err(ScenarioError::field(
                "(top level)",
                "expected an object like {\"version\": 1, \"lab\": \"pipeline\", \"params\": {…}}",
            ));
        };
        if let Some(unknown) = object
            .keys()
            .find(|k| !matches!(k.as_str(), "version" | "lab" | "params"))
        {
            return Err(ScenarioError::field(
                unknown.clone(),
                "unknown field; expected one of `version`, `lab`, `params`",
            ));
        }
        match object.get("version") {
            Some(serde_json::Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
            Some(other) => {
                return Err(ScenarioError::field(
                    "version",
                    format!("this build reads format version {FORMAT_VERSION}, got {other}"),
                ))
            }
            None => {
                return Err(ScenarioError::field(
                    "version",
                    format!("missing; expected {FORMAT_VERSION}"),
                ))
            }
        }
        let lab = match object.get("lab") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(ScenarioError::field(
                    "lab",
                    format!("expected a lab name ({}), got {other}", LABS.join(", ")),
                ))
            }
            None => {
                return Err(ScenarioError::field(
                    "lab",
                    format!("missing; expected one of {}", LABS.join(", ")),
                ))
            }
        };
        let params = object
            .remove("params")
            .unwrap_or(serde_json::Value::Object(serde_json::Map::new()));
        let scenario = Scenario::from_lab_params(&lab, params).unwrap_or_else(|| {
            Err(ScenarioError::field(
                "lab",
                format!("unknown lab `{lab}`; expected one of {}", LABS.join(", ")),
            ))
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Canonical compact JSON: every parameter written out, fields in a fixed order.
    #[must_use]
    pub fn to_json(&self) -> String {
        let params = self.params_value();
        let mut object = serde_json::Map::new();
        object.insert("version".into(), serde_json::Value::from(FORMAT_VERSION));
        object.insert("lab".into(), serde_json::Value::from(self.lab()));
        object.insert("params".into(), params);
        serde_json::to_string(&serde_json::Value::Object(object)).unwrap_or_default()
    }

    /// Canonical JSON, indented for files.
    #[must_use]
    pub fn to_json_pretty(&self) -> String {
        let value: serde_json::Value =
            serde_json::from_str(&self.to_json()).unwrap_or(serde_json::Value::Null);
        serde_json::to_string_pretty(&value).unwrap_or_default()
    }
}

/// `t` as JSON (`Null` if it cannot be written, which no parameter type does).
pub fn to_value<T: Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).unwrap_or(serde_json::Value::Null)
}

/// The parameters of lab `lab` from its `params` JSON by serde, errors at `<lab>.<field>`.
///
/// # Errors
/// [`ScenarioError::Field`] naming the bad or unknown field.
pub fn params_from_value<T: DeserializeOwned>(
    lab: &str,
    value: serde_json::Value,
) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." || inner.is_empty() {
            lab.to_string()
        } else {
            format!("{lab}.{inner}")
        };
        ScenarioError::field(path, e.into_inner().to_string())
    })
}

/// A JSON document of type `T` read from `text` (a tour, a calibrated profile): text that is not
/// JSON is [`ScenarioError::Syntax`]; anything else [`ScenarioError::Field`] at the path
/// `path_of` makes of serde's (`"."` for the whole document).
///
/// # Errors
/// As above.
pub(crate) fn document_from_json<T: DeserializeOwned>(
    text: &str,
    path_of: impl Fn(String) -> String,
) -> Result<T, ScenarioError> {
    let syntax = |e: &serde_json::Error| ScenarioError::Syntax {
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let document: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() {
            syntax(inner)
        } else {
            ScenarioError::field(
                path_of(e.path().to_string()),
                strip_position(&inner.to_string()),
            )
        }
    })?;
    de.end().map_err(|e| syntax(&e))?;
    Ok(document)
}

/// serde_json appends " at line L column C" to messages; the Syntax variant carries those.
pub(crate) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::pipeline::PipelineParams;

    #[test]
    fn defaults_fill_missing_params() {
        let s = Scenario::from_json(r#"{"version":1,"lab":"pipeline"}"#).unwrap();
        assert_eq!(s, Scenario::Pipeline(PipelineParams::default()));
    }

    #[test]
    fn canonical_json_round_trips() {
        let s = Scenario::Pipeline(PipelineParams::default());
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s);
        assert_eq!(Scenario::from_json(&s.to_json_pretty()).unwrap(), s);
    }
}
