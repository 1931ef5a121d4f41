//! The elastic lab's page parts: Pollux against its artifact's Optimus+Oracle and Tiresias on
//! the generic page. The Report is the picture: each policy's run job by job (waiting,
//! restarting, training on how many GPUs), then the GPUs allocated and the jobs waiting over
//! time, then the table with the artifact's own mean JCT beside ours. The lab's own controls
//! name the artifact's eight workload files and the restart-cost options in menus; a workload
//! CSV in the artifact's format is the lab's input slot.

use bubblelab_core::labs::elastic::ElasticPolicy;
use bubblelab_core::labs::migration::CheckpointOption;
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::CheckboxGroup;
use crate::components::params_form::{
    edit, get, kind_options, kind_toggle, Form, FormPage, PageHandle,
};

/// What the elastic page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "A training job's useful speed is not its throughput: a larger batch processes more samples per second but \
                   each sample teaches less (its statistical efficiency falls). Pollux (Qiao et al., OSDI'21) models both — \
                   goodput = throughput × efficiency — and every minute re-chooses every job's GPUs so that a fair mean of \
                   their goodput speedups is highest, each job then picking the batch size best for its GPUs; a change costs a \
                   30 s restart. Its artifact's baselines keep what a user tuned: Tiresias runs each job on its tuned GPUs, \
                   Optimus (with an oracle of the remaining work) keeps its tuned batch size and adds GPUs where they cut the \
                   remaining time most. Below, the artifact's own workload files (160 jobs from Philly's busiest hours on 16 \
                   nodes × 4 GPUs), each policy's run job by job, and the artifact's own mean JCT beside ours.",
    unit: "jobs finished",
    controls: Some(controls),
    drawn: &["workload", "policies"],
    main: &[
        "nodes",
        "gpus_per_node",
        "interval_s",
        "restart_s",
        "pollux.population",
        "pollux.generations",
        "pollux.seed",
    ],
    charts: &[
        (
            "elastic.gpus",
            "GPUs allocated over time: Pollux keeps the cluster busy by growing jobs while others wait for nothing",
        ),
        ("elastic.waiting", "Jobs waiting (submitted, holding no GPUs) over time"),
    ],
    notes: Some(not_modelled),
    ..PageParts::PLAIN
};

/// The workload menu (the artifact's files by name), the policies with their labels, and what
/// a change of GPUs costs (the artifact's fixed pause, or a checkpoint option of the
/// migration lab).
fn controls(state: &PageHandle<State>) -> Html {
    let params = &state.form_ref().params;
    let workload_k = get(params, "workload").and_then(Value::as_u64).unwrap_or(0);
    let on_workload = set_on_change(
        state,
        |value| Value::from(value.parse::<u64>().unwrap_or(6)),
        "workload",
    );
    let restart_option = get(params, "restart_cost")
        .filter(|v| v.get("model").and_then(Value::as_str) == Some("migration"))
        .and_then(|v| v.get("option").and_then(Value::as_str))
        .unwrap_or("fixed")
        .to_string();
    let on_restart = set_on_change(
        state,
        |value| {
            if value == "fixed" {
                serde_json::json!({ "model": "fixed" })
            } else {
                serde_json::json!({ "model": "migration", "option": value })
            }
        },
        "restart_cost",
    );
    let options = kind_options::<ElasticPolicy>(params, "policies");
    let on_toggle = kind_toggle::<State, ElasticPolicy>(state, "policies");
    html! { <>
        <div class="field">
            <label for="field-workload">{ "Workload" }</label>
            <select id="field-workload" onchange={on_workload}>
                { for (1..=8u64).map(|k| html! {
                    <option value={k.to_string()} selected={workload_k == k}>{ format!("the artifact's workload-{k} (160 jobs)") }</option>
                }) }
                <option value="0" selected={workload_k == 0}>{ "the jobs listed under More parameters" }</option>
            </select>
        </div>
        <CheckboxGroup path="elastic.policies" label="Policies" {options}
            error={state.form_ref().field_error("policies")} {on_toggle} />
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
    </> }
}

/// A menu's callback that sets `path` to the value `value` makes of the chosen option, and runs.
fn set_on_change(
    state: &PageHandle<State>,
    value: fn(&str) -> Value,
    path: &'static str,
) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        let v = value(&e.target_unchecked_into::<HtmlSelectElement>().value());
        edit(&state, move |next: &mut State| {
            next.form().set(path, v);
            next.rerun(true);
        });
    })
}

/// What the lab does not model as the artifact does.
fn not_modelled(_: &Form) -> Html {
    html! {
        <p class="muted" id="not-modelled">{ "Step times come from the throughput model fitted to the artifact's \
                        profiles (RMS error 0.10–0.13 in log step time, about ×1.11–1.14), not from its tables; Pollux's agent knows that \
                        model from a job's first step instead of fitting it as it goes. The search is seeded; the artifact's \
                        is not." }</p>
    }
}
