//! The bubbles lab's page parts: a pipeline job's bubbles, and Hydro's Bubble Squeezer filling
//! them with fused, pausable tuning trials, on the generic page: the three policies side by
//! side, SM activity over time and the tuning makespan, or the real bubbles of a PipeMorph log
//! the user opens (the lab's input slot). The lab's own controls name the schedule, trial
//! preset and tuner in menus (a trial preset sets the trial's whole profile), edit the main
//! job's pipeline, and set one static-memory value for every stage.

use bubblelab_core::labs::bubbles::{BubblesParams, TrialPreset};
use bubblelab_core::labs::pipeline::ScheduleKind;
use bubblelab_core::Scenario;
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::NumberField;
use crate::components::params_form::{
    edit, get, number_callback, params_value, FormPage, PageHandle,
};

/// What the bubbles page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "A pipeline-parallel job leaves short, repeated windows on every stage where only NCCL runs. \
                   Hydro's Bubble Squeezer fuses small tuning trials into one bundle and runs it only inside \
                   safe windows that have the memory, pausing at a hook before each window ends, so the main \
                   job never waits. Blind colocation runs the bundle all the time and slows the main job.",
    controls: Some(controls),
    drawn: &["main", "static_bytes", "trial_preset", "hpo.tuner"],
    main: &[
        "policies",
        "gpu_memory_bytes",
        "max_fusion",
        "trial.kernel_hbm_activity",
        "hpo.trials",
        "hpo.reduction_factor",
        "hpo.max_t_steps",
        "hpo.stages",
        "hpo.gpus_per_stage",
    ],
    charts: &[
        ("bubbles.sm_activity", "SM activity, mean over stages"),
        ("bubbles.log_safe_ms", "Safe bubble time per iteration (real log)"),
    ],
    stacked_charts: true,
    ..PageParts::PLAIN
};

/// The main job's pipeline: (path inside `params`, label); its static memory is one value for
/// every stage.
const MAIN_JOB: [(&str, &str); 4] = [
    ("main.stages", "Pipeline stages"),
    ("main.micro_batches", "Micro-batches per iteration"),
    ("main.forward_ns", "Forward per micro-batch and stage (ns)"),
    (
        "main.activation_bytes",
        "Activations per micro-batch (bytes)",
    ),
];

/// The schedule, trial preset and tuner menus, and the main job's pipeline.
fn controls(state: &PageHandle<State>) -> Html {
    let form = state.form_ref();
    let chosen = |path: &str, or: &str| {
        get(&form.params, path)
            .and_then(Value::as_str)
            .unwrap_or(or)
            .to_string()
    };
    let schedule = chosen("main.schedules.0", "1f1b");
    let trial = chosen("trial_preset", "resnet18");
    let tuner = chosen("hpo.tuner", "asha");
    let on_schedule = on_select(state, |form, id| {
        form.set("main.schedules", Value::from(vec![Value::from(id)]));
    });
    let on_trial = on_select(state, |form, id| {
        // A preset sets the trial's whole profile with its id.
        let preset = TrialPreset::from_id(&id).unwrap_or(TrialPreset::Resnet18);
        let v = params_value(&Scenario::Bubbles(BubblesParams {
            trial: preset.profile(),
            trial_preset: preset,
            ..BubblesParams::default()
        }));
        for key in ["trial", "trial_preset"] {
            if let Some(x) = v.get(key) {
                form.set(key, x.clone());
            }
        }
    });
    let on_tuner = on_select(state, |form, id| form.set("hpo.tuner", Value::from(id)));
    html! { <>
        <div class="field">
            <label for="field-schedule">{ "Main job's schedule" }</label>
            <select id="field-schedule" onchange={on_schedule}>
                { for ScheduleKind::ALL.iter().map(|k| html! {
                    <option value={k.id()} selected={schedule == k.id()}>{ k.label_with(2) }</option>
                }) }
            </select>
        </div>
        <div class="field">
            <label for="field-trial_preset">{ "Trial preset" }</label>
            <select id="field-trial_preset" onchange={on_trial}>
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
        <fieldset id="field-main">
            <legend>{ "The main job" }</legend>
            { for MAIN_JOB.iter().map(|(path, label)| html! {
                <NumberField path={format!("bubbles.{path}")} label={*label} value={form.text(path)}
                    error={form.field_error(path)} on_change={on_number(state, path)} />
            }) }
            <div id="field-static_bytes">
                <NumberField path="bubbles.static_bytes.0" label="Static memory per stage, every stage (bytes)"
                    value={form.text("static_bytes.0")} error={form.field_error("static_bytes.0")}
                    on_change={on_number(state, "static_bytes.0")} />
            </div>
        </fieldset>
    </> }
}

/// A menu's callback: `change` makes the chosen option's id into the form, and the page runs.
fn on_select(
    state: &PageHandle<State>,
    change: fn(&mut crate::components::params_form::Form, String),
) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        let id = e.target_unchecked_into::<HtmlSelectElement>().value();
        edit(&state, move |next: &mut State| {
            change(next.form(), id);
            next.rerun(true);
        });
    })
}

/// A number box's callback; the one static-memory value goes to every stage.
fn on_number(state: &PageHandle<State>, path: &str) -> Callback<String> {
    if path != "static_bytes.0" {
        return number_callback(state, path);
    }
    let state = state.clone();
    Callback::from(move |text: String| {
        edit(&state, move |next: &mut State| {
            if next.form().edit_number("static_bytes.0", text) {
                let value = get(&next.form_ref().params, "static_bytes.0").cloned();
                next.form().set(
                    "static_bytes",
                    Value::from(value.into_iter().collect::<Vec<_>>()),
                );
                next.rerun(true);
            }
        });
    })
}
