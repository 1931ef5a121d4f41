//! The agentic lab's page parts: many tool-calling agents on one serving engine (vLLM V1 or
//! SGLang), admitted all at once, under a request or agent cap, or by CONCUR's Eq. 1 window, on
//! the generic page: the window, KV usage, prefix hit rate, recompute and useful throughput of
//! each controller stacked on one time axis, the per-agent timelines and the comparison table.
//! The workload is the scenario's seeded synthetic agents (shareable as a link) or a Mooncake /
//! Azure trace file the user opens (the lab's input slot). The lab's own controls pick the
//! model and GPUs and the engine's scheduler by name, list the controllers as the CLI writes
//! them, sweep static caps, and edit CONCUR's constants on its controller.

use bubblelab_core::labs::agentic::{
    default_sweep_caps, AgenticParams, ControllerSpec, EngineSpec, ModelSpec,
};
use bubblelab_core::{Scenario, ScenarioError};
use serde_json::Value;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::{field_id, NumberField};
use crate::components::params_form::{
    edit, get, number_callback, params_value, FormPage, PageHandle,
};
use crate::worker::Output;

/// What the agentic page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "Each agent plans, generates, calls a tool and comes back with a longer history. Admit them all at once and, \
                   mid-batch, the engine evicts histories that live agents need again, recomputes them, and throughput \
                   collapses before memory is formally full. A static cap helps if you guess it right; CONCUR (Eq. 1) steers \
                   the number of active agents W from two engine signals: it adds α agents while KV usage U is below U_low, \
                   cuts W to ⌈β·W⌉ when U is above U_high and the cache hit rate H is below H_thresh, and holds otherwise. \
                   For serving under a latency SLO, Clipper's AIMD (clipper-aimd) bounds the batch instead: one more running \
                   request after each engine step within the per-token objective, 10 % fewer after a step over it.",
    unit: "controller runs",
    controls: Some(controls),
    drawn: &["engine.mode", "controllers", "sweep_caps"],
    main: &[
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
    ],
    charts: &[
        ("agentic.active_agents", "Active agents (the admission window) and Clipper's batch limit (running requests)"),
        ("agentic.kv_usage", "KV-cache usage"),
        ("agentic.hit_rate", "Cache hit rate: engine-wide H (CONCUR's signal) and on agents' histories"),
        ("agentic.recompute", "Recomputed tokens per second"),
        ("agentic.throughput", "Useful throughput (generated tokens per second)"),
        ("agentic.fit", "Fit: the engine alone's batch completion against the agents' mean turns (engine-alone runs only)"),
        ("agentic.sensitivity", "Sensitivity: each controller's speedup over the engine alone against the agents' mean turns"),
    ],
    stacked_charts: true,
    charts_first: true,
    ..PageParts::PLAIN
};

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

/// The engine menu's id for the scenario's engine, `custom` when it is none of them.
fn engine_id(params: &Value) -> &'static str {
    engines()
        .into_iter()
        .find(|(_, _, spec)| {
            get(params, "engine").cloned()
                == params_value(&Scenario::Agentic(AgenticParams {
                    engine: spec.clone(),
                    ..AgenticParams::default()
                }))
                .get("engine")
                .cloned()
        })
        .map_or("custom", |(id, _, _)| id)
}

/// The engine and mode menus, the controllers, the sweep, and CONCUR's constants.
fn controls(state: &PageHandle<State>) -> Html {
    let form = state.form_ref();
    let params = &form.params;
    let engine = engine_id(params);
    let mode = get(params, "engine.mode")
        .and_then(Value::as_str)
        .unwrap_or("vllm-v1")
        .to_string();
    let sweeping = get(params, "sweep_caps")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let concur_fields: Vec<(String, &str)> = concur_index(params)
        .map(|i| {
            CONCUR_FIELDS
                .iter()
                .map(|(f, label)| (format!("controllers.{i}.{f}"), *label))
                .collect()
        })
        .unwrap_or_default();
    let controllers = form
        .typed("controllers")
        .unwrap_or_else(|| controllers_text(params));
    let mode_id = field_id("agentic", "engine.mode");
    let sweep_id = field_id("agentic", "sweep_caps");
    html! { <>
        <div class="field">
            <label for="field-engine">{ "Model and GPUs" }</label>
            <select id="field-engine" onchange={on_engine(state)}>
                if engine == "custom" {
                    <option value="custom" selected=true>{ "custom (from the scenario)" }</option>
                }
                { for engines().iter().map(|(id, label, _)| html! {
                    <option value={*id} selected={engine == *id}>{ *label }</option>
                }) }
            </select>
        </div>
        <div class="field">
            <label for={mode_id.clone()}>{ "Engine scheduler and cache" }</label>
            <select id={mode_id} onchange={on_mode(state)}>
                <option value="vllm-v1" selected={mode == "vllm-v1"}>{ "vLLM V1: hashed 16-token blocks, mixed batches, preempt newest" }</option>
                <option value="sglang" selected={mode == "sglang"}>{ "SGLang: radix cache (page 1), future-token reservation, retraction" }</option>
            </select>
        </div>
        <NumberField path="agentic.controllers" label="Controllers (unbounded, req-cap-N, cap-N, concur, aimd-history, clipper-aimd)" input_type="text"
            value={controllers} error={form.field_error("controllers")} on_change={on_controllers(state)} />
        <div class="field">
            <label><input type="checkbox" id={sweep_id} checked={sweeping} onchange={on_sweep(state)} />
                { " Sweep static caps (best cap in hindsight)" }</label>
        </div>
        { for concur_fields.iter().map(|(path, label)| html! {
            <NumberField path={format!("agentic.{path}")} label={*label} value={form.text(path)}
                error={form.field_error(path)} on_change={number_callback(state, path)} />
        }) }
    </> }
}

/// The controllers as the CLI writes them: the list, CONCUR's constants kept; the constants'
/// boxes follow the CONCUR controller wherever it now is in the list.
fn on_controllers(state: &PageHandle<State>) -> Callback<String> {
    let state = state.clone();
    Callback::from(move |text: String| {
        edit(&state, move |next: &mut State| {
            let form = next.form();
            form.set_text("controllers", text.clone());
            match parse_controllers(&text, &form.params) {
                Ok(list) => {
                    form.set("controllers", list);
                    form.forget_texts();
                    form.set_text("controllers", text);
                    next.rerun(true);
                }
                Err(e) => form.error = Some(e),
            }
        });
    })
}

/// A model and GPUs from the menu: the whole engine is the menu's.
fn on_engine(state: &PageHandle<State>) -> Callback<Event> {
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
                next.form().set("engine", v.clone());
            }
            next.form().forget_texts();
            next.rerun(true);
        });
    })
}

/// The engine's scheduler and cache, with its own default page size: vLLM's 16-token blocks,
/// SGLang's 1.
fn on_mode(state: &PageHandle<State>) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        let mode = e.target_unchecked_into::<HtmlSelectElement>().value();
        let page = if mode == "sglang" { 1 } else { 16 };
        edit(&state, move |next: &mut State| {
            next.form().set("engine.mode", Value::from(mode));
            next.form().set("engine.block_tokens", Value::from(page));
            next.form().forget_texts();
            next.rerun(true);
        });
    })
}

/// The sweep of static caps on or off; its caps depend on the workload's agents (an opened
/// trace's, as its last run counted them).
fn on_sweep(state: &PageHandle<State>) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        let on = e.target_unchecked_into::<HtmlInputElement>().checked();
        edit(&state, move |next: &mut State| {
            let traced = match (&next.form_ref().upload, next.output().map(|o| &*o.0)) {
                (Some(_), Some(Output::Agentic { agents, .. })) => Some(*agents),
                _ => None,
            };
            let agents = traced.unwrap_or_else(|| {
                get(&next.form_ref().params, "synthetic.agents")
                    .and_then(Value::as_u64)
                    .unwrap_or(128)
            });
            let caps = if on {
                default_sweep_caps(u32::try_from(agents).unwrap_or(u32::MAX))
            } else {
                Vec::new()
            };
            next.form().set("sweep_caps", Value::from(caps));
            next.rerun(true);
        });
    })
}
