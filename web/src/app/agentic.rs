//! The agentic lab page: many tool-calling agents on one serving engine (vLLM V1 or SGLang),
//! admitted all at once, under a request or agent cap, or by CONCUR's Eq. 1 window; the window,
//! KV usage, prefix hit rate,
//! recompute and useful throughput of each controller stacked on one time axis, the per-agent
//! timelines and the comparison table. The workload is the scenario's seeded synthetic agents
//! (shareable as a link) or a Mooncake / Azure trace file the user opens (not carried in links).
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

use std::rc::Rc;

use bubblelab_core::labs::agentic::{
    default_sweep_caps, AgenticParams, ControllerSpec, EngineSpec, ModelSpec,
};
use bubblelab_core::{Report, Scenario, ScenarioError};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::fields::NumberField;
use crate::components::lab_page::LabPage;
use crate::components::params_form::Upload;
use crate::components::params_form::{
    edit, get, number_callback, opening_params, params_value, preset_callback, use_form_page, Form,
    FormPage,
};
use crate::components::params_form::{more_number_fields, number_fields};
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::Output;

/// Properties of [`AgenticLab`].
#[derive(Properties, PartialEq)]
pub struct AgenticLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 14] = [
    "synthetic.agents",
    "synthetic.min_turns",
    "synthetic.max_turns",
    "synthetic.initial_prompt_tokens",
    "synthetic.seed",
    "synthetic.mean_interarrival_s",
    "engine.gpus",
    "engine.kv_capacity_tokens",
    "engine.block_tokens",
    "engine.max_new_tokens",
    "control_interval_s",
    "slo.ttft_s",
    "slo.tpot_ms",
    "fit.engine_alone_batch_s",
];

/// CONCUR's Eq. 1 constants, edited on the scenario's CONCUR controller: (field, label).
const CONCUR_FIELDS: [(&str, &str); 6] = [
    ("initial_window", "CONCUR W₀: initial window (agents)"),
    (
        "additive_increase",
        "CONCUR α: added when U < U_low (agents)",
    ),
    (
        "decrease_factor",
        "CONCUR β: W ← ⌈β·W⌉ when U > U_high and H < H_thresh",
    ),
    ("usage_low", "CONCUR U_low (KV usage)"),
    ("usage_high", "CONCUR U_high (KV usage)"),
    ("hit_rate_threshold", "CONCUR H_thresh (cache hit rate)"),
];

/// Engines the page offers: (id, label, spec).
fn engines() -> [(&'static str, &'static str, EngineSpec); 5] {
    [
        (
            "sglang-qwen3-32b-tp8",
            "SGLang: Qwen3-32B TP=8 on 8 × H100 (CONCUR Table 1)",
            EngineSpec::sglang_h100(ModelSpec::qwen3_32b(), 8, 8),
        ),
        (
            "sglang-qwen3-32b-tp2",
            "SGLang: Qwen3-32B TP=2 on 2 × H100 (CONCUR Fig. 6)",
            EngineSpec::sglang_h100(ModelSpec::qwen3_32b(), 2, 2),
        ),
        (
            "sglang-deepseek-v3-tp16",
            "SGLang: DeepSeek-V3 TP=16 on 16 × H100 (CONCUR Table 1)",
            EngineSpec::sglang_h100(ModelSpec::deepseek_v3(), 16, 1),
        ),
        (
            "qwen3-32b-h100",
            "vLLM V1: Qwen3-32B on 2 × H100",
            EngineSpec::qwen3_32b_h100(),
        ),
        (
            "deepseek-v3-8xh200",
            "vLLM V1: DeepSeek-V3 on 8 × H200",
            EngineSpec::deepseek_v3_h200(),
        ),
    ]
}

/// Largest trace file the page reads, bytes.
const MAX_TRACE_BYTES: u64 = 64 << 20;

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
    /// Agents in the workload of the last run (the sweep's caps depend on it).
    agents: u64,
}

/// Index of the CONCUR controller in the params' list, if any.
fn concur_index(params: &Value) -> Option<usize> {
    get(params, "controllers")
        .and_then(Value::as_array)?
        .iter()
        .position(|c| c.get("kind").and_then(Value::as_str) == Some("concur"))
}

/// The scenario's controllers, if they parse.
fn controllers(params: &Value) -> Vec<ControllerSpec> {
    get(params, "controllers")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The controllers as the CLI writes them: `unbounded, cap-16, concur`.
fn controllers_text(params: &Value) -> String {
    controllers(params)
        .iter()
        .map(ControllerSpec::id)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `unbounded, cap-16, req-cap-64, concur` (the CLI's ids) into the controllers' JSON,
/// keeping the current CONCUR knobs.
fn parse_controllers(text: &str, params: &Value) -> Result<Value, ScenarioError> {
    let list = ControllerSpec::parse_list(text, &controllers(params))
        .map_err(|e| ScenarioError::field("agentic.controllers", e))?;
    serde_json::to_value(list)
        .map_err(|e| ScenarioError::field("agentic.controllers", e.to_string()))
}

impl State {
    fn new(p: &AgenticParams, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new("agentic", &Scenario::Agentic(p.clone()), link_error),
            report: Shared(Rc::new(Report::default())),
            agents: u64::from(p.synthetic.agents),
        };
        s.refresh_texts();
        s.rerun(false);
        s
    }

    /// Every field's text from the params (after a preset, an engine or the controllers
    /// changed).
    fn refresh_texts(&mut self) {
        self.form.forget_texts();
        let controllers = controllers_text(&self.form.params);
        self.form.set_text("controllers", controllers);
    }
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Agentic(p) => Some(State::new(&p, link_error)),
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
        if let Output::Agentic { report, agents } = output {
            self.report = Shared(Rc::new(report));
            self.agents = agents;
        }
    }
}

/// The agentic lab.
#[function_component(AgenticLab)]
pub fn agentic_lab(props: &AgenticLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("agentic", props.payload.clone());
    let upload_error = use_state(|| None::<String>);
    let on_controllers = {
        let state = state.clone();
        Callback::from(move |text: String| {
            edit(&state, move |next: &mut State| {
                next.form.set_text("controllers", text.clone());
                match parse_controllers(&text, &next.form.params) {
                    Ok(list) => {
                        next.form.set("controllers", list);
                        next.refresh_texts();
                        next.form.set_text("controllers", text);
                        next.rerun(true);
                    }
                    Err(e) => next.form.error = Some(e),
                }
            });
        })
    };
    let on_engine = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            let Some((_, _, spec)) = engines().into_iter().find(|(i, _, _)| *i == id) else {
                return;
            };
            edit(&state, move |next: &mut State| {
                let engine = params_value(&Scenario::Agentic(AgenticParams {
                    engine: spec,
                    ..AgenticParams::default()
                }));
                if let Some(v) = engine.get("engine") {
                    next.form.set("engine", v.clone());
                }
                next.refresh_texts();
                next.rerun(true);
            });
        })
    };
    let on_mode = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let mode = e.target_unchecked_into::<HtmlSelectElement>().value();
            // Each engine's own default page size: vLLM's 16-token blocks, SGLang's 1.
            let page = if mode == "sglang" { 1 } else { 16 };
            edit(&state, move |next: &mut State| {
                next.form.set("engine.mode", Value::from(mode));
                next.form.set("engine.block_tokens", Value::from(page));
                next.refresh_texts();
                next.rerun(true);
            });
        })
    };
    let mode = get(&state.form.params, "engine.mode")
        .and_then(Value::as_str)
        .unwrap_or("vllm-v1")
        .to_string();
    let sweeping = get(&state.form.params, "sweep_caps")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let on_sweep = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let on = e
                .target_unchecked_into::<web_sys::HtmlInputElement>()
                .checked();
            edit(&state, move |next: &mut State| {
                let agents = match &next.form.upload {
                    Some(_) => next.agents,
                    None => get(&next.form.params, "synthetic.agents")
                        .and_then(Value::as_u64)
                        .unwrap_or(128),
                };
                let caps = if on {
                    default_sweep_caps(u32::try_from(agents).unwrap_or(u32::MAX))
                } else {
                    Vec::new()
                };
                next.form.set("sweep_caps", Value::from(caps));
                next.rerun(true);
            });
        })
    };
    // The workload is parsed in the worker, with every run on it.
    let on_trace = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            upload_error.set(None);
            edit(&state, move |next: &mut State| {
                let source = files.first().map(|f| f.0.clone()).unwrap_or_default();
                next.form.set_upload(Some(Upload {
                    slot: "trace",
                    files: files.into_iter().map(Rc::new).collect(),
                    source,
                }));
                next.rerun(false);
            });
        })
    };
    let on_synthetic = {
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
    let engine_id = engines()
        .into_iter()
        .find(|(_, _, spec)| {
            get(&state.form.params, "engine").cloned()
                == params_value(&Scenario::Agentic(AgenticParams {
                    engine: spec.clone(),
                    ..AgenticParams::default()
                }))
                .get("engine")
                .cloned()
        })
        .map_or("custom", |(id, _, _)| id);
    let concur_fields: Vec<(String, &str)> = concur_index(&state.form.params)
        .map(|i| {
            CONCUR_FIELDS
                .iter()
                .map(|(f, label)| (format!("controllers.{i}.{f}"), *label))
                .collect()
        })
        .unwrap_or_default();
    let form = &state.form;
    let other_error = form.other_error(
        FIELDS
            .iter()
            .copied()
            .chain(concur_fields.iter().map(|(p, _)| p.as_str()))
            .chain(["controllers"]),
    );
    html! {
        <LabPage lab="agentic" title="Agents: when the KV cache starts to thrash"
            link_error={form.link_error.clone()} shown={state.form.shown_json()} on_pick={preset_callback(&state)}
            worker={worker.clone()} unit="controller runs" worker_error={state.form.worker_error.clone()}
            report={state.report.clone()}
            inputs={state.form.shown_inputs()}
            stacked_charts=true
            charts_first=true
            lede={html! {
                { "Each agent plans, generates, calls a tool and comes back with a longer history. Admit them all at once and, \
                   mid-batch, the engine evicts histories that live agents need again, recomputes them, and throughput \
                   collapses before memory is formally full. A static cap helps if you guess it right; CONCUR (Eq. 1) steers \
                   the number of active agents W from two engine signals: it adds α agents while KV usage U is below U_low, \
                   cuts W to ⌈β·W⌉ when U is above U_high and the cache hit rate H is below H_thresh, and holds otherwise. \
                   For serving under a latency SLO, Clipper's AIMD (clipper-aimd) bounds the batch instead: one more running \
                   request after each engine step within the per-token objective, 10 % fewer after a step over it." }
            }}
            controls={html! { <>
                    <div class="field">
                        <label for="field-engine">{ "Model and GPUs" }</label>
                        <select id="field-engine" onchange={on_engine}>
                            if engine_id == "custom" {
                                <option value="custom" selected=true>{ "custom (from the scenario)" }</option>
                            }
                            { for engines().iter().map(|(id, label, _)| html! {
                                <option value={*id} selected={engine_id == *id}>{ *label }</option>
                            }) }
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-engine-mode">{ "Engine scheduler and cache" }</label>
                        <select id="field-engine-mode" onchange={on_mode}>
                            <option value="vllm-v1" selected={mode == "vllm-v1"}>{ "vLLM V1: hashed 16-token blocks, mixed batches, preempt newest" }</option>
                            <option value="sglang" selected={mode == "sglang"}>{ "SGLang: radix cache (page 1), future-token reservation, retraction" }</option>
                        </select>
                    </div>
                    <NumberField path="agentic.controllers" label="Controllers (unbounded, req-cap-N, cap-N, concur, aimd-history, clipper-aimd)" input_type="text"
                        value={form.text("controllers")} error={form.field_error("controllers")} on_change={on_controllers} />
                    <div class="field">
                        <label><input type="checkbox" id="field-sweep" checked={sweeping} onchange={on_sweep} />
                            { " Sweep static caps (best cap in hindsight)" }</label>
                    </div>
                    { number_fields(&state, &FIELDS) }
                    { more_number_fields(&state, &[&FIELDS[..], &CONCUR_FIELDS.map(|(p, _)| p)[..], &["controllers", "sweep_caps"]].concat()) }
                    { for concur_fields.iter().map(|(path, label)| html! {
                        <NumberField path={format!("agentic.{path}")} label={*label} value={form.text(path)}
                            error={form.field_error(path)} on_change={number_callback(&state, path)} />
                    }) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <FileUpload id="upload-agentic-trace" label="Open a workload (Mooncake JSONL or Azure CSV)" accept=".jsonl,.json,.csv,.txt"
                        max_bytes={MAX_TRACE_BYTES} max_files={1} on_load={on_trace} on_error={on_upload_error} />
                    if let Some(upload) = state.form.shown_upload() {
                        <p class="muted">{ format!("Running on {}. ", upload.source) }
                            <button type="button" id="use-synthetic" onclick={on_synthetic}>{ "Back to the synthetic agents" }</button>
                        </p>
                    }
                    if let Some(message) = state.form.upload_error.as_ref().or(upload_error.as_ref()) {
                        <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                    }
            </> }}
            chart_titles={vec![
                        ("agentic.active_agents".to_string(), "Active agents (the admission window) and Clipper's batch limit (running requests)".to_string()),
                        ("agentic.kv_usage".to_string(), "KV-cache usage".to_string()),
                        ("agentic.hit_rate".to_string(), "Cache hit rate: engine-wide H (CONCUR's signal) and on agents' histories".to_string()),
                        ("agentic.recompute".to_string(), "Recomputed tokens per second".to_string()),
                        ("agentic.throughput".to_string(), "Useful throughput (generated tokens per second)".to_string()),
                        ("agentic.fit".to_string(), "Fit: the engine alone's batch completion against the agents' mean turns (engine-alone runs only)".to_string()),
                        ("agentic.sensitivity".to_string(), "Sensitivity: each controller's speedup over the engine alone against the agents' mean turns".to_string()),
            ]} />
    }
}
