//! The bubbles lab page: a pipeline job's bubbles, and Hydro's Bubble Squeezer filling them with
//! fused, pausable tuning trials; the three policies side by side, SM activity over time, the
//! tuning makespan, and the real bubbles of a PipeMorph log the user opens (not carried in links).
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

use std::rc::Rc;

use bubblelab_core::labs::bubbles::{self, BubblesParams, TrialPreset};
use bubblelab_core::labs::pipeline::ScheduleKind;
use bubblelab_core::{Report, Scenario};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::fields::NumberField;
use crate::components::lab_page::LabPage;
use crate::components::params_form::Upload;
use crate::components::params_form::{
    edit, get, list_text, more_number_fields, number_callback, opening_params, params_value,
    preset_callback, use_form_page, Form, FormPage,
};
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::Output;

/// Properties of [`BubblesLab`].
#[derive(Properties, PartialEq)]
pub struct BubblesLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields: (path inside `params`, label).
const FIELDS: [(&str, &str); 13] = [
    ("main.stages", "Pipeline stages"),
    ("main.micro_batches", "Micro-batches per iteration"),
    ("main.forward_ns", "Forward per micro-batch and stage (ns)"),
    (
        "main.activation_bytes",
        "Activations per micro-batch (bytes)",
    ),
    ("gpu_memory_bytes", "GPU memory (bytes)"),
    (
        "static_bytes.0",
        "Main job's static memory per stage (bytes)",
    ),
    ("max_fusion", "Largest fusion count F"),
    (
        "trial.kernel_hbm_activity",
        "Trial kernels' HBM-bandwidth share (0–1)",
    ),
    ("hpo.trials", "Tuning trials N"),
    ("hpo.reduction_factor", "ASHA reduction factor η"),
    ("hpo.max_t_steps", "ASHA max_t (steps)"),
    ("hpo.stages", "Stages whose bubbles the tuner uses S"),
    ("hpo.gpus_per_stage", "GPUs per stage"),
];

/// Largest total size of the log files the page reads, bytes.
const MAX_LOG_BYTES: u64 = 64 << 20;

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
}

impl State {
    fn new(p: &BubblesParams, link_error: Option<String>) -> State {
        let mut form = Form::new("bubbles", &Scenario::Bubbles(p.clone()), link_error);
        let policies = list_text(&form.params, "policies");
        form.set_text("policies", policies);
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
            Scenario::Bubbles(p) => Some(State::new(&p, link_error)),
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

/// The bubbles lab.
#[function_component(BubblesLab)]
pub fn bubbles_lab(props: &BubblesLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("bubbles", props.payload.clone());
    let upload_error = use_state(|| None::<String>);
    // One static-memory value for every stage; the other fields set their own path.
    let on_number = |path: &str| {
        if path != "static_bytes.0" {
            return number_callback(&state, path);
        }
        let state = state.clone();
        Callback::from(move |text: String| {
            edit(&state, move |next: &mut State| {
                if next.form.edit_number("static_bytes.0", text) {
                    let value = get(&next.form.params, "static_bytes.0").cloned();
                    next.form.set(
                        "static_bytes",
                        Value::from(value.into_iter().collect::<Vec<_>>()),
                    );
                    next.rerun(true);
                }
            });
        })
    };
    let on_policies = {
        let state = state.clone();
        Callback::from(move |text: String| {
            edit(&state, move |next: &mut State| {
                next.form.set_text("policies", text.clone());
                let list: Vec<Value> = text
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(Value::from)
                    .collect();
                next.form.set("policies", Value::from(list));
                next.rerun(true);
            });
        })
    };
    let on_schedule = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form
                    .set("main.schedules", Value::from(vec![Value::from(id)]));
                next.rerun(true);
            });
        })
    };
    let on_trial = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            let preset = TrialPreset::from_id(&id).unwrap_or(TrialPreset::Resnet18);
            edit(&state, move |next: &mut State| {
                let v = params_value(&Scenario::Bubbles(BubblesParams {
                    trial: preset.profile(),
                    trial_preset: preset,
                    ..BubblesParams::default()
                }));
                for key in ["trial", "trial_preset"] {
                    if let Some(x) = v.get(key) {
                        next.form.set(key, x.clone());
                    }
                }
                next.rerun(true);
            });
        })
    };
    let on_tuner = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let tuner = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form.set("hpo.tuner", Value::from(tuner));
                next.rerun(true);
            });
        })
    };
    let tuner = get(&state.form.params, "hpo.tuner")
        .and_then(Value::as_str)
        .unwrap_or("asha")
        .to_string();
    // The logs are parsed in the worker, with every run on them.
    let on_log = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            upload_error.set(None);
            edit(&state, move |next: &mut State| {
                let first = files.first().map(|f| f.0.clone()).unwrap_or_default();
                next.form.set_upload(Some(Upload {
                    slot: "stage_logs",
                    files: files.into_iter().map(Rc::new).collect(),
                    source: bubbles::log_source(&first),
                }));
                next.rerun(false);
            });
        })
    };
    let on_simulated = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            edit(&state, move |next: &mut State| {
                next.form.set_upload(None);
                next.rerun(true);
            });
        })
    };
    let on_upload_error = {
        let upload_error = upload_error.clone();
        Callback::from(move |m: String| upload_error.set(Some(m)))
    };
    let form = &state.form;
    let other_error = form.other_error(FIELDS.iter().map(|(p, _)| *p).chain(["policies"]));
    let schedule = get(&form.params, "main.schedules.0")
        .and_then(Value::as_str)
        .unwrap_or("1f1b")
        .to_string();
    let trial = get(&form.params, "trial_preset")
        .and_then(Value::as_str)
        .unwrap_or("resnet18")
        .to_string();
    html! {
        <LabPage lab="bubbles" title="Bubbles: tuning trials where the pipeline idles"
            link_error={form.link_error.clone()} shown={state.form.shown_json()} on_pick={preset_callback(&state)}
            worker={worker.clone()} worker_error={form.worker_error.clone()}
            report={state.report.clone()}
            inputs={state.form.shown_inputs()}
            stacked_charts=true
            lede={html! {
                { "A pipeline-parallel job leaves short, repeated windows on every stage where only NCCL runs. \
                   Hydro's Bubble Squeezer fuses small tuning trials into one bundle and runs it only inside \
                   safe windows that have the memory, pausing at a hook before each window ends, so the main \
                   job never waits. Blind colocation runs the bundle all the time and slows the main job." }
            }}
            controls={html! { <>
                    <div class="field">
                        <label for="field-schedule">{ "Main job's schedule" }</label>
                        <select id="field-schedule" onchange={on_schedule}>
                            { for ScheduleKind::ALL.iter().map(|k| html! {
                                <option value={k.id()} selected={schedule == k.id()}>{ k.label_with(2) }</option>
                            }) }
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-trial">{ "Trial preset" }</label>
                        <select id="field-trial" onchange={on_trial}>
                            <option value="resnet18" selected={trial == "resnet18"}>{ "ResNet-18-like" }</option>
                            <option value="small-gpt" selected={trial == "small-gpt"}>{ "small GPT-like" }</option>
                            <option value="gpt2-surrogate" selected={trial == "gpt2-surrogate"}>{ "GPT-2 ÷8 μP surrogate (fusion model)" }</option>
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-tuner">{ "Tuner of the HPO job" }</label>
                        <select id="field-tuner" onchange={on_tuner}>
                            <option value="asha" selected={tuner == "asha"}>{ "ASHA (Hydro's ASHAHydroScheduler)" }</option>
                            <option value="sync-sh" selected={tuner == "sync-sh"}>{ "synchronous successive halving" }</option>
                        </select>
                    </div>
                    <NumberField path="bubbles.policies" label="Policies (none, blind, squeezer)" input_type="text"
                        value={form.text("policies")} error={form.field_error("policies")} on_change={on_policies} />
                    { for FIELDS.iter().map(|(path, label)| html! {
                        <NumberField path={format!("bubbles.{path}")} label={*label} value={form.text(path)}
                            error={form.field_error(path)} on_change={on_number(path)} />
                    }) }
                    { more_number_fields(&state, &[&FIELDS.map(|(p, _)| p)[..], &["policies", "static_bytes"]].concat()) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <FileUpload id="upload-bubbles-log" label="Open a PipeMorph run (all its rank *.log files)" accept=".log,.txt"
                        multiple=true max_bytes={MAX_LOG_BYTES} max_files={16} on_load={on_log} on_error={on_upload_error} />
                    if let Some(upload) = form.shown_upload() {
                        <p class="muted">{ format!("Squeezing the real bubbles of {}. The main job's fields above do not apply; memory, trial and F do. ", upload.source) }
                            <button type="button" id="use-simulated" onclick={on_simulated}>{ "Back to the simulated job" }</button>
                        </p>
                    }
                    if let Some(message) = form.upload_error.as_ref().or(upload_error.as_ref()) {
                        <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                    }
            </> }}
            chart_titles={vec![
                        ("bubbles.sm_activity".to_string(), "SM activity, mean over stages".to_string()),
                        ("bubbles.log_safe_ms".to_string(), "Safe bubble time per iteration (real log)".to_string()),
            ]} />
    }
}
