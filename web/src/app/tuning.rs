//! The tuning lab page (Hydro's tuning side): the μP shrinker's per-layer table, a live
//! μTransfer experiment — small MLPs really trained in this page at several widths, loss against
//! learning rate under standard parametrization and under μP — and the trial-fusion model's
//! throughput and memory against the fusion count.
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

use std::rc::Rc;

use bubblelab_core::labs::tuning::TuningParams;
use bubblelab_core::{presets, share, Report, Scenario, ScenarioError};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::browser;
use crate::components::export::ExportBar;
use crate::components::fields::NumberField;
use crate::components::lab_chrome::{LinkErrorBanner, PresetSelect};
use crate::components::params_form::{get, number_value, params_value, scenario_of, set, text_at};
use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;

/// Properties of [`TuningLab`].
#[derive(Properties, PartialEq)]
pub struct TuningLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields: (path inside `params`, label).
const FIELDS: [(&str, &str); 7] = [
    ("experiment.steps", "Training steps per run"),
    ("experiment.batch", "Batch (samples)"),
    ("experiment.hidden_layers", "Hidden layers"),
    ("experiment.seed", "Seed"),
    (
        "shrinker.ratio",
        "Shrink ratio (target width ÷ surrogate width)",
    ),
    ("fusion.max_fusion", "Largest fusion count F"),
    (
        "fusion.launch_overhead_us",
        "Launch overhead per kernel (µs)",
    ),
];

#[derive(Clone, PartialEq)]
struct State {
    params: Value,
    texts: Vec<(String, String)>,
    report: Shared<Report>,
    error: Option<ScenarioError>,
    link_error: Option<String>,
}

fn default_params() -> TuningParams {
    match presets::find("tuning-mutransfer-mlp").map(presets::Preset::scenario) {
        Some(Ok(Scenario::Tuning(p))) => p,
        _ => TuningParams::default(),
    }
}

/// The widths as a list: `32, 64, 128`.
fn widths_text(params: &Value) -> String {
    get(params, "experiment.widths")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

impl State {
    fn new(p: &TuningParams, link_error: Option<String>) -> State {
        let params = params_value(&Scenario::Tuning(p.clone()));
        let mut texts: Vec<(String, String)> = FIELDS
            .iter()
            .map(|(path, _)| ((*path).to_string(), text_at(&params, path)))
            .collect();
        texts.push(("experiment.widths".into(), widths_text(&params)));
        let mut s = State {
            params,
            texts,
            report: Shared(Rc::new(Report::default())),
            error: None,
            link_error,
        };
        s.rerun(false);
        s
    }

    fn from_payload(payload: Option<&str>) -> State {
        match payload.map(|p| share::decode_for_lab("tuning", p)) {
            Some(Ok(Scenario::Tuning(p))) => State::new(&p, None),
            Some(Err(e)) => State::new(&default_params(), Some(e.to_string())),
            _ => State::new(&default_params(), None),
        }
    }

    fn text(&self, path: &str) -> String {
        self.texts
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }

    fn set_text(&mut self, path: &str, text: String) {
        match self.texts.iter_mut().find(|(p, _)| p == path) {
            Some(e) => e.1 = text,
            None => self.texts.push((path.to_string(), text)),
        }
    }

    fn rerun(&mut self, update_link: bool) {
        let scenario = match scenario_of("tuning", &self.params) {
            Ok(s) => s,
            Err(e) => return self.error = Some(e),
        };
        match bubblelab_core::run(&scenario) {
            Ok(report) => {
                self.report = Shared(Rc::new(report));
                self.error = None;
                if update_link {
                    browser::replace_hash(&share::fragment(&scenario));
                }
            }
            Err(e) => self.error = Some(e),
        }
    }
}

/// The tuning lab.
#[function_component(TuningLab)]
pub fn tuning_lab(props: &TuningLabProps) -> Html {
    let state = {
        let payload = props.payload.clone();
        use_state(move || State::from_payload(payload.as_deref()))
    };
    let on_number = |path: &'static str| {
        let state = state.clone();
        Callback::from(move |text: String| {
            let mut next = (*state).clone();
            next.set_text(path, text.clone());
            match number_value("tuning", path, &text) {
                Ok(value) => {
                    set(&mut next.params, path, value);
                    next.link_error = None;
                    next.rerun(true);
                }
                Err(e) => next.error = Some(e),
            }
            state.set(next);
        })
    };
    let on_widths = {
        let state = state.clone();
        Callback::from(move |text: String| {
            let mut next = (*state).clone();
            next.set_text("experiment.widths", text.clone());
            let parsed: Result<Vec<u64>, String> = text
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.parse::<u64>().map_err(|_| s.to_string()))
                .collect();
            match parsed {
                Ok(list) => {
                    set(&mut next.params, "experiment.widths", Value::from(list));
                    next.rerun(true);
                }
                Err(bad) => {
                    next.error = Some(ScenarioError::field(
                        "tuning.experiment.widths",
                        format!("expected whole numbers separated by commas, got `{bad}`"),
                    ));
                }
            }
            state.set(next);
        })
    };
    let on_optimizer = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            let mut next = (*state).clone();
            set(&mut next.params, "experiment.optimizer", Value::from(value));
            next.rerun(true);
            state.set(next);
        })
    };
    let on_preset = {
        let state = state.clone();
        Callback::from(move |(_, scenario): (&'static str, Scenario)| {
            if let Scenario::Tuning(p) = scenario {
                let mut next = State::new(&p, None);
                next.rerun(true);
                state.set(next);
            }
        })
    };
    let shown: Vec<String> = FIELDS
        .iter()
        .map(|(p, _)| format!("tuning.{p}"))
        .chain(["tuning.experiment.widths".to_string()])
        .collect();
    let field_error = |path: &str| {
        let full = format!("tuning.{path}");
        state
            .error
            .as_ref()
            .filter(|e| {
                e.path()
                    .is_some_and(|p| p == full || p.starts_with(&format!("{full}[")))
            })
            .map(ToString::to_string)
    };
    let other_error = state
        .error
        .as_ref()
        .filter(|e| {
            !e.path().is_some_and(|p| {
                shown
                    .iter()
                    .any(|s| p == s || p.starts_with(&format!("{s}[")))
            })
        })
        .map(ToString::to_string);
    let optimizer = text_at(&state.params, "experiment.optimizer");
    html! {
        <section class="page" id="lab-tuning">
            <h1>{ "Tuning: cheap trials that still find the right learning rate" }</h1>
            <p class="lede">
                { "Hydro tunes a narrow surrogate instead of the wide target, re-parametrized with μP so that the best \
                   hyperparameters carry over, and fuses many small trials into one batched model. Here the shrinker's \
                   rules are a table, the transfer is a real experiment — every curve below comes from MLPs trained in this \
                   page — and fusion is a model of throughput and memory." }
            </p>
            <LinkErrorBanner message={state.link_error.clone()} />
            <div class="lab-grid">
                <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                    <PresetSelect lab="tuning" selected={None} on_pick={on_preset} />
                    <NumberField path="tuning.experiment.widths" label="Widths (comma-separated)" input_type="text"
                        value={state.text("experiment.widths")} error={field_error("experiment.widths")} on_change={on_widths} />
                    <div class="field">
                        <label for="field-optimizer">{ "Optimizer" }</label>
                        <select id="field-optimizer" onchange={on_optimizer}>
                            <option value="adam" selected={optimizer == "adam"}>{ "Adam" }</option>
                            <option value="sgd" selected={optimizer == "sgd"}>{ "SGD" }</option>
                        </select>
                    </div>
                    { for FIELDS.iter().map(|(path, label)| html! {
                        <NumberField path={format!("tuning.{path}")} label={*label} value={state.text(path)}
                            error={field_error(path)} on_change={on_number(path)} />
                    }) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                </form>
                <div class="results">
                    <ExportBar report={state.report.clone()} stem="tuning" />
                    <ReportView report={state.report.clone()} chart_titles={vec![
                        ("tuning.sp".to_string(), "Standard parametrization: held-out loss vs learning rate, per width".to_string()),
                        ("tuning.mup".to_string(), "μP: held-out loss vs learning rate, per width".to_string()),
                        ("tuning.fusion.throughput".to_string(), "Fused trials: throughput vs F".to_string()),
                        ("tuning.fusion.memory".to_string(), "Fused trials: memory vs F".to_string()),
                    ]} />
                </div>
            </div>
        </section>
    }
}
