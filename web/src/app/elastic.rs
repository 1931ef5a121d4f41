//! The elastic lab page: Pollux against its artifact's Optimus+Oracle and Tiresias. The picture
//! is each policy's run job by job (waiting, restarting, training on how many GPUs), then the
//! GPUs allocated and the jobs waiting over time, then the table with the artifact's own mean
//! JCT beside ours. The form edits the scenario by path (the core validates, so messages name
//! the field as the CLI would); one of the artifact's eight workload files is chosen from a
//! menu, or a workload CSV in its format opened from a file. Runs go to the worker, with
//! progress (jobs finished) and Cancel.

use std::rc::Rc;

use bubblelab_core::labs::elastic::{ElasticParams, ElasticPolicy};
use bubblelab_core::labs::migration::CheckpointOption;
use bubblelab_core::{Report, Scenario};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::fields::CheckboxGroup;
use crate::components::lab_page::LabPage;
use crate::components::params_form::{
    edit, get, opening_params, preset_callback, use_form_page, Form, FormPage,
};
use crate::components::params_form::{kind_options, kind_toggle};
use crate::components::params_form::{more_number_fields, number_fields, read_into_form};
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::client::use_worker;
use crate::worker::Output;

/// Properties of [`ElasticLab`].
#[derive(Properties, PartialEq)]
pub struct ElasticLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 7] = [
    "nodes",
    "gpus_per_node",
    "interval_s",
    "restart_s",
    "pollux.population",
    "pollux.generations",
    "pollux.seed",
];

/// Largest workload file opened, bytes.
const MAX_WORKLOAD_BYTES: u64 = 16 << 20;

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
    scenario_json: Option<String>,
    /// Why the last opened workload was refused.
    file_error: Option<String>,
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Elastic(p) => Some(State::new(&p, link_error)),
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

    fn show(&mut self, output: Output, scenario: &Scenario) {
        if let Output::Report(report) = output {
            self.report = Shared(Rc::new(report));
            self.scenario_json = Some(scenario.to_json_pretty());
        }
    }
}

impl State {
    fn new(p: &ElasticParams, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new("elastic", &Scenario::Elastic(p.clone()), link_error),
            report: Shared(Rc::new(Report::default())),
            scenario_json: None,
            file_error: None,
        };
        s.rerun(false);
        s
    }
}

/// The elastic lab.
#[function_component(ElasticLab)]
pub fn elastic_lab(props: &ElasticLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("elastic", props.payload.clone());
    // Opened workload files are read in a worker of their own, by the lab's reader.
    let reader = use_worker();
    let form = &state.form;
    let other_error =
        form.other_error(
            FIELDS
                .iter()
                .copied()
                .chain(["policies", "workload", "restart_cost"]),
        );
    let workload_k = get(&form.params, "workload")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let on_workload = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            let k: u64 = value.parse().unwrap_or(6);
            edit(&state, move |next: &mut State| {
                next.form.set("workload", Value::from(k));
                next.rerun(true);
            });
        })
    };
    // The restart cost: the artifact's fixed pause, or a checkpoint option of the migration lab.
    let restart_option = get(&form.params, "restart_cost")
        .filter(|v| v.get("model").and_then(Value::as_str) == Some("migration"))
        .and_then(|v| v.get("option").and_then(Value::as_str))
        .unwrap_or("fixed")
        .to_string();
    let on_restart = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                let cost = if value == "fixed" {
                    serde_json::json!({ "model": "fixed" })
                } else {
                    serde_json::json!({ "model": "migration", "option": value })
                };
                next.form.set("restart_cost", cost);
                next.rerun(true);
            });
        })
    };
    let options = kind_options::<ElasticPolicy>(&form.params, "policies");
    let on_toggle = kind_toggle::<State, ElasticPolicy>(&state, "policies");
    let on_file = {
        let state = state.clone();
        let reader = reader.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let on_error = {
                let state = state.clone();
                Callback::from(move |m: Option<String>| {
                    edit(&state, move |next: &mut State| next.file_error = m);
                })
            };
            let files = files
                .into_iter()
                .map(|f| ("workload", Rc::new(f)))
                .collect();
            read_into_form(&state, &reader, files, on_error);
        })
    };
    let on_file_error = {
        let state = state.clone();
        Callback::from(move |m: String| {
            edit(&state, move |next: &mut State| next.file_error = Some(m));
        })
    };
    html! {
        <LabPage lab="elastic" title="Elastic training: the right GPUs and batch size for every job, every minute"
            link_error={form.link_error.clone()} shown={state.scenario_json.clone().map(AttrValue::from)} on_pick={preset_callback(&state)}
            worker={worker.clone()} unit="jobs finished" worker_error={form.worker_error.clone()}
            report={state.report.clone()}
            lede={html! {
                { "A training job's useful speed is not its throughput: a larger batch processes more samples per second but \
                   each sample teaches less (its statistical efficiency falls). Pollux (Qiao et al., OSDI'21) models both — \
                   goodput = throughput × efficiency — and every minute re-chooses every job's GPUs so that a fair mean of \
                   their goodput speedups is highest, each job then picking the batch size best for its GPUs; a change costs a \
                   30 s restart. Its artifact's baselines keep what a user tuned: Tiresias runs each job on its tuned GPUs, \
                   Optimus (with an oracle of the remaining work) keeps its tuned batch size and adds GPUs where they cut the \
                   remaining time most. Below, the artifact's own workload files (160 jobs from Philly's busiest hours on 16 \
                   nodes × 4 GPUs), each policy's run job by job, and the artifact's own mean JCT beside ours." }
            }}
            controls={html! { <>
                    <div class="field">
                        <label for="field-workload">{ "Workload" }</label>
                        <select id="field-workload" onchange={on_workload}>
                            { for (1..=8u64).map(|k| html! {
                                <option value={k.to_string()} selected={workload_k == k}>{ format!("the artifact's workload-{k} (160 jobs)") }</option>
                            }) }
                            if workload_k == 0 {
                                <option value="0" selected=true>{ "the opened file" }</option>
                            }
                        </select>
                    </div>
                    <CheckboxGroup path="elastic.policies" label="Policies" {options}
                        error={form.field_error("policies")} {on_toggle} />
                    <div class="field">
                        <label for="field-restart-cost">{ "What a change of GPUs costs a job" }</label>
                        <select id="field-restart-cost" onchange={on_restart}>
                            <option value="fixed" selected={restart_option == "fixed"}>{ "the pause below (the artifact's 30 s)" }</option>
                            { for CheckpointOption::ALL.iter().map(|o| html! {
                                <option value={o.id()} selected={restart_option == o.id()}>
                                    { format!("the migration lab: {} (its default 2.7B job)", o.label()) }
                                </option>
                            }) }
                        </select>
                    </div>
                    { number_fields(&state, &FIELDS) }
                    { more_number_fields(&state, &[&FIELDS[..], &["workload"]].concat()) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <h3>{ "Your own workload" }</h3>
                    <p class="muted breakable">{ "A CSV in the artifact's format: name,time,application,num_replicas,batch_size — the \
                        submission second, one of bert, cifar10, deepspeech2, imagenet, ncf, yolov3, and the GPUs and total batch \
                        size a user would pick (the baselines use them; Pollux picks its own)." }</p>
                    <FileUpload id="upload-workload" label="Open a workload (.csv)" accept=".csv,text/csv"
                        max_bytes={MAX_WORKLOAD_BYTES} max_files={1} on_load={on_file} on_error={on_file_error} />
                    if let Some(message) = &state.file_error {
                        <div class="banner error" id="workload-error" role="alert">{ message.clone() }</div>
                    }
                    <p class="muted" id="not-modelled">{ "Step times come from the throughput model fitted to the artifact's \
                        profiles (RMS error 0.10–0.13 in log step time, about ×1.11–1.14), not from its tables; Pollux's agent knows that \
                        model from a job's first step instead of fitting it as it goes. The search is seeded; the artifact's \
                        is not." }</p>
            </> }}
            chart_titles={vec![
                        ("elastic.gpus".to_string(), "GPUs allocated over time: Pollux keeps the cluster busy by growing jobs while others wait for nothing".to_string()),
                        ("elastic.waiting".to_string(), "Jobs waiting (submitted, holding no GPUs) over time".to_string()),
            ]} />
    }
}
