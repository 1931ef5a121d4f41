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

use crate::labs::agentic::AgenticParams;
use crate::labs::bubbles::BubblesParams;
use crate::labs::cost::CostParams;
use crate::labs::fairness::FairnessParams;
use crate::labs::migration::MigrationParams;
use crate::labs::overlap::OverlapParams;
use crate::labs::pipeline::PipelineParams;
use crate::labs::resilience::ResilienceParams;
use crate::labs::tuning::TuningParams;
use crate::report::Report;

/// The scenario format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// What a lab's parameters are to the registry ([`labs!`]): how they are read, checked and
/// run. Each lab implements it beside its `run` (`labs/<lab>/mod.rs`).
pub trait LabParams: Sized + Serialize + DeserializeOwned {
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

    /// The parameters from the scenario's `params` JSON (serde, errors at `<lab>.<field>`).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the bad or unknown field.
    fn from_params(lab: &str, value: serde_json::Value) -> Result<Self, ScenarioError> {
        params_from_value(lab, value)
    }
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

/// The one list of labs: a row per lab (its [`Scenario`] variant and doc, its [`LabParams`]
/// type and its name in JSON, routes and links) gives the `Scenario` enum, [`LABS`],
/// [`Scenario::lab`], [`Scenario::validate`], the JSON codec and [`crate::run`]'s dispatch.
macro_rules! labs {
    ($( $(#[$doc:meta])* $variant:ident($params:ty) = $name:literal; )+) => {
        /// Lab names, in the order the playground lists them.
        pub const LABS: [&str; [$($name),+].len()] = [$($name),+];

        /// One lab's input. The variant is the lab; the payload holds every parameter.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Scenario {
            $( $(#[$doc])* $variant($params), )+
        }

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
            /// [`ScenarioError::Field`] naming the field and the expected range.
            pub fn validate(&self) -> Result<(), ScenarioError> {
                match self {
                    $( Scenario::$variant(p) => LabParams::check(p), )+
                }
            }

            /// Runs the lab of a validated scenario (see [`crate::run_with_progress`]).
            pub(crate) fn run_lab(
                &self,
                progress: &mut dyn FnMut(usize, usize),
            ) -> Result<Report, ScenarioError> {
                match self {
                    $( Scenario::$variant(p) => LabParams::run_lab(p, progress), )+
                }
            }

            /// The parameters as JSON.
            fn params_value(&self) -> serde_json::Value {
                match self {
                    $( Scenario::$variant(p) => to_value(p), )+
                }
            }

            /// The scenario of lab `lab` from its `params`; `None` for an unknown lab.
            fn from_lab_params(
                lab: &str,
                params: serde_json::Value,
            ) -> Option<Result<Scenario, ScenarioError>> {
                match lab {
                    $( $name => Some(<$params as LabParams>::from_params(lab, params).map(Scenario::$variant)), )+
                    _ => None,
                }
            }
        }
    };
}

labs! {
    /// Pipeline-parallel schedules and their bubbles.
    Pipeline(PipelineParams) = "pipeline";
    /// The cost-model explorer: one collective and one GEMM on one GPU.
    Cost(CostParams) = "cost";
    /// Multi-tenant GPU-cluster scheduling: ASTRAEA against the field's policies.
    Fairness(FairnessParams) = "fairness";
    /// Agentic batch inference on one serving engine: CONCUR's admission control against
    /// unbounded admission and static caps.
    Agentic(AgenticParams) = "agentic";
    /// Communication-computation overlap as graph scheduling: Helix against the baselines.
    Overlap(OverlapParams) = "overlap";
    /// Fail-slow and fail-stop resilience of hybrid-parallel training: ResiHP's detector and
    /// joint TP/PP/DP re-plan against the baselines.
    Resilience(ResilienceParams) = "resilience";
    /// Hydro's Bubble Squeezer: tuning trials in the bubbles of a pipeline job.
    Bubbles(BubblesParams) = "bubbles";
    /// Hydro's tuning side: the μP shrinker, a μTransfer experiment and trial fusion.
    Tuning(TuningParams) = "tuning";
    /// GPU pause/resume/migrate: FlowGPU's transparent checkpoint (active memory, low point,
    /// dedup) against the reserved pool and framework checkpoint + restart.
    Migration(MigrationParams) = "migration";
}

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

fn to_value<T: Serialize>(t: &T) -> serde_json::Value {
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

/// serde_json appends " at line L column C" to messages; the Syntax variant carries those.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
