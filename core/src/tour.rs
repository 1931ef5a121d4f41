//! Tours: predict-then-run lessons as data. A tour is a JSON file (`static/tours/<id>.json`,
//! or a teacher's own, shared as a link): a lab, then steps, each a scenario (a preset, a
//! scenario object, or the previous step's scenario edited by `--set`-style assignments), a
//! question that asks the learner to predict something the run measures, the answer check (a
//! Report metric within a tolerance, or the option whose metric is largest or smallest) and the
//! explanation shown after the run. The explanation states the answer (`{expect}` stands for
//! the step's `expect`), and [`Tour::check_step`] checks that the run gives it, so a tour that
//! stops being true fails its test.
//!
//! Bad tour files get errors naming the field (`steps[2].answer.metric`), as scenarios do.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::Value;

use crate::presets;
use crate::report::{format_number, Report};
use crate::scenario::{Scenario, ScenarioError, LABS};

/// The tour format version this build reads.
pub const TOUR_VERSION: u64 = 1;

/// A tour, read and checked ([`Tour::from_json`]): every step's scenario resolves.
#[derive(Clone, Debug, PartialEq)]
pub struct Tour {
    /// Heading of the tour.
    pub title: String,
    /// The lab every step runs.
    pub lab: String,
    /// One paragraph: what the learner will see.
    pub summary: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One predict-then-run step.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Short heading.
    pub title: String,
    /// The scenario this step runs.
    pub scenario: Scenario,
    /// The assignments that made it from the step's start (shown to the learner).
    pub set: Vec<String>,
    /// What the learner predicts.
    pub question: String,
    /// How the prediction is judged.
    pub answer: Answer,
    /// Shown after the run, with `{expect}` replaced ([`Step::explanation`]).
    explanation: String,
}

/// How a prediction is judged against the run.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A number: the Report metric `metric`; a guess within `tolerance` (the metric's unit) of
    /// the run's value is right. `expect` is the value the explanation states.
    Number {
        /// Report metric key.
        metric: String,
        /// The value the explanation states.
        expect: f64,
        /// Largest accepted distance, in the metric's unit.
        tolerance: f64,
    },
    /// A choice: the option whose metric is the largest (or smallest) in the run is right.
    /// `expect` is the option the explanation names.
    Choice {
        /// `(label, metric key)` of each option, in the order shown.
        options: Vec<(String, String)>,
        /// Whether the largest metric wins (else the smallest).
        largest: bool,
        /// The label the explanation names.
        expect: String,
    },
}

/// What the run gave for a step's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Measured {
    /// The metric's value and unit.
    Number {
        /// Value.
        value: f64,
        /// Unit, as the Report states it.
        unit: String,
    },
    /// The winning option's label and every option's value.
    Choice {
        /// The option whose metric wins.
        winner: String,
        /// `(label, value)` for every option.
        values: Vec<(String, f64)>,
    },
}

/// A learner's prediction.
#[derive(Clone, Debug, PartialEq)]
pub enum Guess {
    /// A number, in the metric's unit.
    Number(f64),
    /// An option's label.
    Choice(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TourFile {
    version: u64,
    title: String,
    lab: String,
    summary: String,
    steps: Vec<StepFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepFile {
    title: String,
    preset: Option<String>,
    scenario: Option<Value>,
    #[serde(default)]
    set: Vec<String>,
    question: String,
    answer: AnswerFile,
    explanation: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerFile {
    metric: Option<String>,
    tolerance: Option<f64>,
    choose: Option<String>,
    options: Option<Vec<OptionFile>>,
    expect: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionFile {
    label: String,
    metric: String,
}

/// Most steps a tour may have.
pub const MAX_STEPS: usize = 20;

impl Tour {
    /// Reads and checks a tour file: the format, every field, and every step's scenario.
    ///
    /// # Errors
    /// [`ScenarioError::Syntax`] for text that is not JSON; [`ScenarioError::Field`] naming the
    /// tour's field (`steps[1].set[0]`, `steps[2].scenario.pipeline.stages`) otherwise.
    pub fn from_json(text: &str) -> Result<Tour, ScenarioError> {
        let file: TourFile = crate::scenario::document_from_json(text, |path| {
            if path == "." {
                "(top level)".into()
            } else {
                path
            }
        })?;
        Tour::from_file(file)
    }

    fn from_file(file: TourFile) -> Result<Tour, ScenarioError> {
        if file.version != TOUR_VERSION {
            return Err(ScenarioError::field(
                "version",
                format!(
                    "this build reads tour version {TOUR_VERSION}, got {}",
                    file.version
                ),
            ));
        }
        if !LABS.contains(&file.lab.as_str()) {
            return Err(ScenarioError::field(
                "lab",
                format!(
                    "unknown lab `{}`; expected one of {}",
                    file.lab,
                    LABS.join(", ")
                ),
            ));
        }
        for (field, text) in [("title", &file.title), ("summary", &file.summary)] {
            if text.trim().is_empty() {
                return Err(ScenarioError::field(field, "must not be empty"));
            }
        }
        if file.steps.is_empty() || file.steps.len() > MAX_STEPS {
            return Err(ScenarioError::field(
                "steps",
                format!(
                    "a tour has 1 to {MAX_STEPS} steps, got {}",
                    file.steps.len()
                ),
            ));
        }
        let mut steps: Vec<Step> = Vec::with_capacity(file.steps.len());
        for (i, step) in file.steps.into_iter().enumerate() {
            let previous = steps.last().map(|s| &s.scenario);
            steps.push(read_step(&file.lab, i, step, previous)?);
        }
        Ok(Tour {
            title: file.title,
            lab: file.lab,
            summary: file.summary,
            steps,
        })
    }

    /// Checks that step `i`'s run gives the answer its explanation states.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `steps[i].answer…` when the Report lacks a metric the
    /// answer reads, or the run's answer is not the stated one.
    pub fn check_step(&self, i: usize, report: &Report) -> Result<Measured, ScenarioError> {
        let step = &self.steps[i];
        let measured = step.measure(i, report)?;
        match (&step.answer, &measured) {
            (
                Answer::Number {
                    expect, tolerance, ..
                },
                Measured::Number { value, .. },
            ) if (value - expect).abs() > stated_slack(*expect, *tolerance) => {
                Err(ScenarioError::field(
                    format!("steps[{i}].answer.expect"),
                    format!(
                        "the explanation states {}, the run gives {} (a stated answer may be off by {} at most)",
                        format_number(*expect),
                        format_number(*value),
                        format_number(stated_slack(*expect, *tolerance))
                    ),
                ))
            }
            (Answer::Choice { expect, .. }, Measured::Choice { winner, values }) => {
                let best = values
                    .iter()
                    .find(|v| v.0 == *winner)
                    .map_or(f64::NAN, |v| v.1);
                if let Some(tied) = values.iter().find(|v| v.0 != *winner && v.1 == best) {
                    return Err(ScenarioError::field(
                        format!("steps[{i}].answer.options"),
                        format!(
                            "`{winner}` and `{}` tie at {}; a choice needs one winner",
                            tied.0,
                            format_number(best)
                        ),
                    ));
                }
                if winner != expect {
                    return Err(ScenarioError::field(
                        format!("steps[{i}].answer.expect"),
                        format!("the explanation names `{expect}`, the run gives `{winner}`"),
                    ));
                }
                Ok(measured)
            }
            _ => Ok(measured),
        }
    }
}

impl Step {
    /// The explanation, with `{expect}` replaced by the answer it states.
    #[must_use]
    pub fn explanation(&self) -> String {
        let expect = match &self.answer {
            Answer::Number { expect, .. } => format!("{expect}"),
            Answer::Choice { expect, .. } => expect.clone(),
        };
        self.explanation.replace("{expect}", &expect)
    }

    /// What the run gave for this step's answer (step `i` of its tour, for errors).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the answer's metric the Report does not have.
    pub fn measure(&self, i: usize, report: &Report) -> Result<Measured, ScenarioError> {
        let read = |metric: &str, at: String| {
            report
                .metrics
                .iter()
                .find(|m| m.key == metric)
                .ok_or_else(|| {
                    ScenarioError::field(at, format!("the run's Report has no metric `{metric}`"))
                })
        };
        match &self.answer {
            Answer::Number { metric, .. } => {
                let m = read(metric, format!("steps[{i}].answer.metric"))?;
                Ok(Measured::Number {
                    value: m.value,
                    unit: m.unit.clone(),
                })
            }
            Answer::Choice {
                options, largest, ..
            } => {
                let mut values = Vec::with_capacity(options.len());
                for (k, (label, metric)) in options.iter().enumerate() {
                    let m = read(metric, format!("steps[{i}].answer.options[{k}].metric"))?;
                    values.push((label.clone(), m.value));
                }
                let better = |a: f64, b: f64| if *largest { a > b } else { a < b };
                let mut winner = &values[0];
                for v in &values[1..] {
                    if better(v.1, winner.1) {
                        winner = v;
                    }
                }
                Ok(Measured::Choice {
                    winner: winner.0.clone(),
                    values,
                })
            }
        }
    }

    /// Whether `guess` is right for the run that gave `measured`.
    #[must_use]
    pub fn judge(&self, guess: &Guess, measured: &Measured) -> bool {
        match (&self.answer, guess, measured) {
            (
                Answer::Number { tolerance, .. },
                Guess::Number(g),
                Measured::Number { value, .. },
            ) => (g - value).abs() <= *tolerance,
            (Answer::Choice { .. }, Guess::Choice(g), Measured::Choice { winner, values }) => {
                // A tie makes every option at the winning value right.
                let value = |label: &str| values.iter().find(|v| v.0 == label).map(|v| v.1);
                g == winner || (value(g).is_some() && value(g) == value(winner))
            }
            _ => false,
        }
    }
}

/// Step `i` of a tour of `lab`, its scenario resolved from its start and assignments.
fn read_step(
    lab: &str,
    i: usize,
    step: StepFile,
    previous: Option<&Scenario>,
) -> Result<Step, ScenarioError> {
    let at = |field: &str| format!("steps[{i}].{field}");
    for (field, text) in [
        ("title", &step.title),
        ("question", &step.question),
        ("explanation", &step.explanation),
    ] {
        if text.trim().is_empty() {
            return Err(ScenarioError::field(at(field), "must not be empty"));
        }
    }
    let start = match (&step.preset, &step.scenario, previous) {
        (Some(_), Some(_), _) => {
            return Err(ScenarioError::field(
                at("scenario"),
                "give a `preset` or a `scenario`, not both",
            ))
        }
        (Some(id), None, _) => match presets::find(id) {
            Some(p) if p.lab == lab => p.scenario()?,
            Some(p) => {
                return Err(ScenarioError::field(
                    at("preset"),
                    format!("`{id}` is a preset of the {} lab, not {lab}", p.lab),
                ))
            }
            None => {
                return Err(ScenarioError::field(
                    at("preset"),
                    format!("no preset `{id}` (list them with `bubblelab presets`)"),
                ))
            }
        },
        (None, Some(value), _) => {
            let scenario = Scenario::from_json(&value.to_string()).map_err(|e| match e {
                ScenarioError::Field { path, message } => {
                    ScenarioError::field(format!("{}.{path}", at("scenario")), message)
                }
                other => other,
            })?;
            if scenario.lab() != lab {
                return Err(ScenarioError::field(
                    at("scenario.lab"),
                    format!(
                        "the tour is of the {lab} lab, this scenario of {}",
                        scenario.lab()
                    ),
                ));
            }
            scenario
        }
        (None, None, Some(previous)) => previous.clone(),
        (None, None, None) => {
            return Err(ScenarioError::field(
                at("preset"),
                "the first step needs a `preset` or a `scenario` to start from",
            ))
        }
    };
    let scenario = apply_sets(start, &step.set, i)?;
    let answer = read_answer(step.answer, i)?;
    Ok(Step {
        title: step.title,
        scenario,
        set: step.set,
        question: step.question,
        answer,
        explanation: step.explanation,
    })
}

/// `scenario` with each `path=value` of `set` applied, errors at `steps[i].set[j]`.
fn apply_sets(mut scenario: Scenario, set: &[String], i: usize) -> Result<Scenario, ScenarioError> {
    for (j, assignment) in set.iter().enumerate() {
        let at = format!("steps[{i}].set[{j}]");
        let (path, value) = crate::edit::split_assignment(assignment).map_err(|_| {
            ScenarioError::field(&at, format!("expected PATH=VALUE, got `{assignment}`"))
        })?;
        scenario = scenario
            .with_fields(&[(path, value)])
            .map_err(|e| ScenarioError::field(&at, e.to_string()))?;
    }
    Ok(scenario)
}

fn read_answer(a: AnswerFile, i: usize) -> Result<Answer, ScenarioError> {
    let at = |field: &str| format!("steps[{i}].answer.{field}");
    match (a.metric, a.choose, a.options) {
        (Some(metric), None, None) => {
            let Value::Number(expect) = &a.expect else {
                return Err(ScenarioError::field(
                    at("expect"),
                    "a metric answer states a number",
                ));
            };
            let expect = expect.as_f64().unwrap_or(f64::NAN);
            let tolerance = a.tolerance.ok_or_else(|| {
                ScenarioError::field(at("tolerance"), "missing; the largest accepted distance from the run's value, in the metric's unit")
            })?;
            if !expect.is_finite() {
                return Err(ScenarioError::field(
                    at("expect"),
                    "must be a finite number",
                ));
            }
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                return Err(ScenarioError::field(
                    at("tolerance"),
                    "must be a finite number ≥ 0",
                ));
            }
            Ok(Answer::Number {
                metric,
                expect,
                tolerance,
            })
        }
        (None, Some(choose), Some(options)) => {
            let largest = match choose.as_str() {
                "largest" => true,
                "smallest" => false,
                other => {
                    return Err(ScenarioError::field(
                        at("choose"),
                        format!("expected `largest` or `smallest`, got `{other}`"),
                    ))
                }
            };
            if a.tolerance.is_some() {
                return Err(ScenarioError::field(
                    at("tolerance"),
                    "a choice has no tolerance",
                ));
            }
            if options.len() < 2 {
                return Err(ScenarioError::field(
                    at("options"),
                    "a choice needs at least two options",
                ));
            }
            let Value::String(expect) = a.expect else {
                return Err(ScenarioError::field(
                    at("expect"),
                    "a choice states an option's label",
                ));
            };
            if !options.iter().any(|o| o.label == expect) {
                return Err(ScenarioError::field(
                    at("expect"),
                    format!("`{expect}` is not one of the options' labels"),
                ));
            }
            Ok(Answer::Choice {
                options: options.into_iter().map(|o| (o.label, o.metric)).collect(),
                largest,
                expect,
            })
        }
        (Some(_), _, _) => Err(ScenarioError::field(
            at("metric"),
            "an answer reads one `metric`, or chooses among `options`, not both",
        )),
        (None, Some(_), None) => Err(ScenarioError::field(
            at("options"),
            "missing; the choices, each {\"label\": …, \"metric\": …}",
        )),
        (None, None, Some(_)) => Err(ScenarioError::field(
            at("choose"),
            "missing; `largest` or `smallest`",
        )),
        (None, None, None) => Err(ScenarioError::field(
            at("metric"),
            "missing; the Report metric to predict (or `choose` and `options`)",
        )),
    }
}

/// How far the answer an explanation states may be from the run's: its rounding (1 % of it, or
/// 0.005 near zero), never more than the learner's tolerance. A learner's guess gets the whole
/// tolerance; the stated answer must be the run's, as written.
fn stated_slack(expect: f64, tolerance: f64) -> f64 {
    (0.01 * expect.abs()).max(0.005).min(tolerance)
}

/// A tour shipped with the playground.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinTour {
    /// File stem.
    pub id: &'static str,
    /// The tour file's text (`static/tours/<id>.json`).
    pub json: &'static str,
}

impl BuiltinTour {
    /// Reads the tour.
    ///
    /// # Errors
    /// Only if a shipped tour is broken, which a test forbids.
    pub fn tour(&self) -> Result<Tour, ScenarioError> {
        Tour::from_json(self.json)
    }
}

/// A shipped tour whose file is `static/tours/<id>.json`, for a lab's `presets.rs`.
macro_rules! tour {
    ($id:literal) => {
        $crate::tour::BuiltinTour {
            id: $id,
            json: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../static/tours/",
                $id,
                ".json"
            )),
        }
    };
}
pub(crate) use tour;

/// Every shipped tour, one or more per lab (each lab lists its own in its `presets.rs`), in
/// the registry's order of labs.
pub fn all() -> impl Iterator<Item = &'static BuiltinTour> {
    crate::labs::LAB_TOURS.iter().flat_map(|tours| tours.iter())
}

/// The shipped tour `id`.
#[must_use]
pub fn find(id: &str) -> Option<&'static BuiltinTour> {
    all().find(|t| t.id == id)
}

impl core::fmt::Display for Guess {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Guess::Number(v) => write!(f, "{v}"),
            Guess::Choice(label) => f.write_str(label),
        }
    }
}

impl Measured {
    /// The run's answer as text: the value with its unit, or the winning option.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            // A ratio or a count reads as a bare number.
            Measured::Number { value, unit } if matches!(unit.as_str(), "" | "ratio" | "count") => {
                format_number(*value)
            }
            Measured::Number { value, unit } => format!("{} {unit}", format_number(*value)),
            Measured::Choice { winner, .. } => winner.clone(),
        }
    }
}
