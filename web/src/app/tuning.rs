//! The tuning lab page (Hydro's tuning side): the μP shrinker's per-layer table, a live
//! μTransfer experiment — small MLPs really trained in this page at several widths, loss against
//! learning rate under standard parametrization and under μP — and the trial-fusion model's
//! throughput and memory against the fusion count.
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

use std::rc::Rc;

use bubblelab_core::labs::tuning::TuningParams;
use bubblelab_core::{Report, Scenario, ScenarioError};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::fields::NumberField;
use crate::components::lab_page::LabPage;
use crate::components::params_form::{
    edit, list_text, opening_params, preset_callback, text_at, use_form_page, Form, FormPage,
};
use crate::components::params_form::{more_number_fields, number_fields};
use crate::components::timeline::Shared;
use crate::worker::Output;

/// Properties of [`TuningLab`].
#[derive(Properties, PartialEq)]
pub struct TuningLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 8] = [
    "experiment.steps",
    "experiment.batch",
    "experiment.hidden_layers",
    "experiment.seed",
    "experiment.seeds",
    "shrinker.ratio",
    "fusion.max_fusion",
    "fusion.launch_overhead_us",
];

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
}

impl State {
    fn new(p: &TuningParams, link_error: Option<String>) -> State {
        let mut form = Form::new("tuning", &Scenario::Tuning(p.clone()), link_error);
        let widths = list_text(&form.params, "experiment.widths");
        form.set_text("experiment.widths", widths);
        let mut s = State {
            form,
            report: Shared(Rc::new(Report::default())),
        };
        s.rerun(false);
        s
    }
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Tuning(p) => Some(State::new(&p, link_error)),
            _ => None,
        }
    }

    fn opening(lab: &'static str, link_error: Option<String>) -> State {
        State::new(&opening_params(lab), link_error)
    }

    fn form(&mut self) -> &mut Form {
        &mut self.form
    }

    fn form_ref(&self) -> &Form {
        &self.form
    }

    fn show(&mut self, output: Output, _: &Scenario) {
        if let Output::Report(report) = output {
            self.report = Shared(Rc::new(report));
        }
    }
}

/// The tuning lab.
#[function_component(TuningLab)]
pub fn tuning_lab(props: &TuningLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("tuning", props.payload.clone());
    let on_widths = {
        let state = state.clone();
        Callback::from(move |text: String| {
            edit(&state, move |next: &mut State| {
                next.form.set_text("experiment.widths", text.clone());
                let parsed: Result<Vec<u64>, String> = text
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse::<u64>().map_err(|_| s.to_string()))
                    .collect();
                match parsed {
                    Ok(list) => {
                        next.form.set("experiment.widths", Value::from(list));
                        next.rerun(true);
                    }
                    Err(bad) => {
                        next.form.error = Some(ScenarioError::field(
                            "tuning.experiment.widths",
                            format!("expected whole numbers separated by commas, got `{bad}`"),
                        ));
                    }
                }
            });
        })
    };
    let on_optimizer = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form.set("experiment.optimizer", Value::from(value));
                next.rerun(true);
            });
        })
    };
    let form = &state.form;
    let other_error = form.other_error(FIELDS.iter().copied().chain(["experiment.widths"]));
    let optimizer = text_at(&form.params, "experiment.optimizer");
    html! {
        <LabPage lab="tuning" title="Tuning: cheap trials that still find the right learning rate"
            link_error={form.link_error.clone()} shown={form.shown_json()} on_pick={preset_callback(&state)}
            worker={worker.clone()} unit="training runs" worker_error={form.worker_error.clone()}
            report={state.report.clone()}
            lede={html! { { "Hydro tunes a narrow surrogate instead of the wide target, re-parametrized with μP so that the best \
                   hyperparameters carry over, and fuses many small trials into one batched model. Here the shrinker's \
                   rules are a table, the transfer is a real experiment — every curve below comes from MLPs trained in this \
                   page — and fusion is a model of throughput and memory. This quick run (60 steps, one replica) is too \
                   short for the best rate to settle: with 200 steps and 8 replicas (`bubblelab tuning --scenario \
                   tests/claims/tuning-mutransfer-long.json`, about three minutes) μP keeps it on one grid point from width \
                   32 to 512 while SP's falls fourfold (docs/CLAIMS.md)." } }}
            controls={html! { <>
                <NumberField path="tuning.experiment.widths" label="Widths (comma-separated)" input_type="text"
                    value={form.text("experiment.widths")} error={form.field_error("experiment.widths")} on_change={on_widths} />
                <div class="field">
                    <label for="field-optimizer">{ "Optimizer" }</label>
                    <select id="field-optimizer" onchange={on_optimizer}>
                        <option value="adam" selected={optimizer == "adam"}>{ "Adam" }</option>
                        <option value="sgd" selected={optimizer == "sgd"}>{ "SGD" }</option>
                    </select>
                </div>
                { number_fields(&state, &FIELDS) }
                { more_number_fields(&state, &[&FIELDS[..], &["experiment.widths", "experiment.optimizer"]].concat()) }
                if let Some(message) = other_error {
                    <p class="field-error">{ message }</p>
                }
            </> }}
            chart_titles={vec![
                ("tuning.sp".to_string(), "Standard parametrization: held-out loss vs learning rate, per width".to_string()),
                ("tuning.mup".to_string(), "μP: held-out loss vs learning rate, per width".to_string()),
                ("tuning.fusion.throughput".to_string(), "Fused trials: throughput vs F".to_string()),
                ("tuning.fusion.memory".to_string(), "Fused trials: memory vs F".to_string()),
            ]} />
    }
}
