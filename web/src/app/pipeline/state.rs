//! The pipeline page's state: the text of every form field as typed, the last valid scenario
//! (the page's worker runs it) and the error of the current input. An invalid input never
//! replaces the last good scenario, and its text stays in the form.

use std::collections::BTreeMap;
use std::rc::Rc;

use bubblelab_core::labs::pipeline::{PipelineParams, ScheduleKind};
use bubblelab_core::share;
use bubblelab_core::units::GIB;
use bubblelab_core::{Scenario, ScenarioError};
use yew::prelude::*;

/// How a form field maps to a scenario field.
#[derive(Clone, Copy)]
pub struct FieldSpec {
    /// Key of the field in the page state.
    pub name: &'static str,
    /// Scenario path it edits (also the element id's suffix).
    pub path: &'static str,
    /// Label with the unit shown.
    pub label: &'static str,
    /// Help text.
    pub help: &'static str,
    /// Spinner minimum.
    pub min: Option<f64>,
    /// Spinner maximum.
    pub max: Option<f64>,
    /// Spinner step.
    pub step: &'static str,
    /// Whether to show a slider.
    pub slider: bool,
    unit: Unit,
}

/// How the text of a field converts to the scenario's unit.
#[derive(Clone, Copy)]
enum Unit {
    /// Whole number.
    Count,
    /// Milliseconds in the form, nanoseconds in the scenario.
    MsAsNs,
    /// GiB in the form, bytes in the scenario.
    GibAsBytes,
    /// A plain fraction.
    Fraction,
}

/// The form's number fields, in order.
pub const FIELDS: [FieldSpec; 9] = [
    FieldSpec {
        name: "stages",
        path: "pipeline.stages",
        label: "Stages p",
        help: "Pipeline stages (devices)",
        min: Some(1.0),
        max: Some(16.0),
        step: "1",
        slider: true,
        unit: Unit::Count,
    },
    FieldSpec {
        name: "micro_batches",
        path: "pipeline.micro_batches",
        label: "Micro-batches m",
        help: "Micro-batches per iteration",
        min: Some(1.0),
        max: Some(64.0),
        step: "1",
        slider: true,
        unit: Unit::Count,
    },
    FieldSpec {
        name: "virtual_stages",
        path: "pipeline.virtual_stages",
        label: "Chunks per device v (interleaved)",
        help: "Model chunks per device for interleaved 1F1B",
        min: Some(1.0),
        max: Some(8.0),
        step: "1",
        slider: false,
        unit: Unit::Count,
    },
    FieldSpec {
        name: "forward_ns",
        path: "pipeline.forward_ns",
        label: "Forward F (ms)",
        help: "Forward of one micro-batch on one stage",
        min: Some(0.001),
        max: None,
        step: "any",
        slider: false,
        unit: Unit::MsAsNs,
    },
    FieldSpec {
        name: "backward_input_ns",
        path: "pipeline.backward_input_ns",
        label: "Backward B, input grad (ms)",
        help: "Input-gradient backward of one micro-batch",
        min: Some(0.001),
        max: None,
        step: "any",
        slider: false,
        unit: Unit::MsAsNs,
    },
    FieldSpec {
        name: "backward_weight_ns",
        path: "pipeline.backward_weight_ns",
        label: "Backward W, weight grad (ms)",
        help: "Weight-gradient backward; schedules that don't split run B+W together",
        min: Some(0.0),
        max: None,
        step: "any",
        slider: false,
        unit: Unit::MsAsNs,
    },
    FieldSpec {
        name: "p2p_ns",
        path: "pipeline.p2p_ns",
        label: "P2P per transfer (ms)",
        help: "Time to send one activation or gradient to the next stage",
        min: Some(0.0),
        max: None,
        step: "any",
        slider: false,
        unit: Unit::MsAsNs,
    },
    FieldSpec {
        name: "activation_bytes",
        path: "pipeline.activation_bytes",
        label: "Activations per micro-batch (GiB)",
        help: "Activation memory one micro-batch holds on one stage",
        min: Some(0.0),
        max: None,
        step: "any",
        slider: false,
        unit: Unit::GibAsBytes,
    },
    FieldSpec {
        name: "w_memory_fraction",
        path: "pipeline.w_memory_fraction",
        label: "Share kept for W",
        help: "Share of activations the W pass still needs after B (zero-bubble)",
        min: Some(0.0),
        max: Some(1.0),
        step: "0.05",
        slider: false,
        unit: Unit::Fraction,
    },
];

/// Changes to the page state.
pub enum Action {
    /// The user typed `text` into field `name`.
    SetField(&'static str, String),
    /// The user ticked or unticked a schedule.
    ToggleSchedule(ScheduleKind, bool),
    /// A preset (with its id) or a scenario file replaces the scenario.
    Load(PipelineParams, Option<&'static str>),
    /// The page was navigated to a (maybe shared) link.
    Open(Option<String>),
}

/// The page state.
#[derive(Clone)]
pub struct LabState {
    /// Field text as typed, by field name.
    texts: BTreeMap<&'static str, String>,
    /// Chosen schedules (may be invalid, e.g. empty).
    pub schedules: Vec<ScheduleKind>,
    /// The last valid parameters (the page's worker runs these).
    pub params: PipelineParams,
    /// Canonical JSON of `params` (a new value asks the worker for its Report).
    pub scenario_json: String,
    /// `#/pipeline?s=…` of `params`.
    pub fragment: String,
    /// What is wrong with the current input, if anything.
    pub error: Option<ScenarioError>,
    /// Why the link the page was opened with could not be used.
    pub link_error: Option<String>,
    /// Whether the user changed anything since the page opened.
    pub dirty: bool,
    /// The preset shown, until the user edits a field.
    pub preset: Option<&'static str>,
}

impl PartialEq for LabState {
    fn eq(&self, other: &Self) -> bool {
        self.scenario_json == other.scenario_json
            && self.texts == other.texts
            && self.error == other.error
            && self.schedules == other.schedules
    }
}

fn field_text(params: &PipelineParams, spec: &FieldSpec) -> String {
    let raw = match spec.name {
        "stages" => f64::from(params.stages),
        "micro_batches" => f64::from(params.micro_batches),
        "virtual_stages" => f64::from(params.virtual_stages),
        "forward_ns" => params.forward_ns as f64,
        "backward_input_ns" => params.backward_input_ns as f64,
        "backward_weight_ns" => params.backward_weight_ns as f64,
        "p2p_ns" => params.p2p_ns as f64,
        "activation_bytes" => params.activation_bytes as f64,
        _ => params.w_memory_fraction,
    };
    let shown = match spec.unit {
        Unit::Count | Unit::Fraction => raw,
        Unit::MsAsNs => raw / 1e6,
        Unit::GibAsBytes => raw / GIB as f64,
    };
    shown.to_string()
}

fn parse_field(spec: &FieldSpec, text: &str) -> Result<f64, ScenarioError> {
    let value: f64 = text
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| {
            ScenarioError::field(spec.path, format!("expected a number, got `{text}`"))
        })?;
    if value < 0.0 {
        return Err(ScenarioError::field(
            spec.path,
            format!("must not be negative, got {value}"),
        ));
    }
    match spec.unit {
        Unit::Count if value.fract() != 0.0 || value > f64::from(u32::MAX) => Err(
            ScenarioError::field(spec.path, format!("expected a whole number, got {value}")),
        ),
        Unit::Count | Unit::Fraction => Ok(value),
        Unit::MsAsNs => Ok((value * 1e6).round()),
        Unit::GibAsBytes => Ok((value * GIB as f64).round()),
    }
}

impl LabState {
    /// The state for a page opened with `payload` (or the default scenario).
    #[must_use]
    pub fn from_payload(payload: Option<&str>) -> LabState {
        match payload.map(|p| share::decode_for_lab("pipeline", p)) {
            Some(Ok(Scenario::Pipeline(params))) => LabState::with_params(params, None),
            // decode_for_lab refuses other labs' scenarios; nothing else can arrive here.
            Some(Ok(_)) => LabState::with_params(PipelineParams::default(), None),
            Some(Err(e)) => LabState::with_params(PipelineParams::default(), Some(e.to_string())),
            None => LabState::with_params(PipelineParams::default(), None),
        }
    }

    fn with_params(params: PipelineParams, link_error: Option<String>) -> LabState {
        let texts = FIELDS
            .iter()
            .map(|f| (f.name, field_text(&params, f)))
            .collect();
        let mut state = LabState {
            texts,
            schedules: params.schedules.clone(),
            params: params.clone(),
            scenario_json: String::new(),
            fragment: String::new(),
            error: None,
            link_error,
            dirty: false,
            preset: None,
        };
        state.apply(params);
        state
    }

    /// The text of a field as typed.
    #[must_use]
    pub fn text(&self, name: &str) -> AttrValue {
        AttrValue::from(self.texts.get(name).cloned().unwrap_or_default())
    }

    /// Validates `params`; when valid they become the scenario to run (the page posts it to
    /// its worker), otherwise the error is shown.
    fn apply(&mut self, params: PipelineParams) {
        let scenario = Scenario::Pipeline(params.clone());
        match scenario.validate() {
            Ok(()) => {
                self.scenario_json = scenario.to_json_pretty();
                self.fragment = share::fragment(&scenario);
                self.params = params;
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The scenario to run.
    #[must_use]
    pub fn scenario(&self) -> Scenario {
        Scenario::Pipeline(self.params.clone())
    }

    /// Builds parameters from the form's text and schedules.
    fn params_from_form(&self) -> Result<PipelineParams, ScenarioError> {
        let mut p = self.params.clone();
        p.schedules = ScheduleKind::ALL
            .into_iter()
            .filter(|k| self.schedules.contains(k))
            .collect();
        for spec in &FIELDS {
            let v = parse_field(spec, self.texts.get(spec.name).map_or("", String::as_str))?;
            let too_big = || ScenarioError::field(spec.path, format!("{v} is too large"));
            match spec.name {
                "stages" => p.stages = v as u32,
                "micro_batches" => p.micro_batches = v as u32,
                "virtual_stages" => p.virtual_stages = v as u32,
                "forward_ns" => p.forward_ns = to_u64(v).ok_or_else(too_big)?,
                "backward_input_ns" => p.backward_input_ns = to_u64(v).ok_or_else(too_big)?,
                "backward_weight_ns" => p.backward_weight_ns = to_u64(v).ok_or_else(too_big)?,
                "p2p_ns" => p.p2p_ns = to_u64(v).ok_or_else(too_big)?,
                "activation_bytes" => p.activation_bytes = to_u64(v).ok_or_else(too_big)?,
                _ => p.w_memory_fraction = v,
            }
        }
        // Per-stage lists only fit the stage count they were made for.
        if p.stage_times.len() != p.stages as usize {
            p.stage_times.clear();
        }
        if p.stage_slowdown.len() != p.stages as usize {
            p.stage_slowdown.clear();
        }
        Ok(p)
    }

    fn edit(&mut self) {
        self.dirty = true;
        self.preset = None;
        self.link_error = None;
        match self.params_from_form() {
            Ok(p) => self.apply(p),
            Err(e) => self.error = Some(e),
        }
    }
}

fn to_u64(v: f64) -> Option<u64> {
    (0.0..1.8e19).contains(&v).then_some(v as u64)
}

impl Reducible for LabState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::SetField(name, text) => {
                next.texts.insert(name, text);
                next.edit();
            }
            Action::ToggleSchedule(kind, on) => {
                next.schedules.retain(|k| *k != kind);
                if on {
                    next.schedules.push(kind);
                }
                next.edit();
            }
            Action::Load(params, preset) => {
                next = LabState::with_params(params, None);
                next.dirty = true;
                next.preset = preset;
            }
            Action::Open(payload) => next = LabState::from_payload(payload.as_deref()),
        }
        Rc::new(next)
    }
}
