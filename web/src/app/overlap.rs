//! The overlap lab's page parts: one model-parallel graph under four strategies (serial, eager,
//! AsyncTP-style, Helix) on the generic page, with their timelines, a step control that walks
//! Helix's passes (original → tiled → reordered → bucketed) on one timeline, the memory curves
//! with the budget, and the comparison tables. The graph is built from the model and parallel
//! layout (shareable as a link) or read from a graph JSON file (the lab's input slot). The
//! lab's own controls name the model, GPU and placement in menus and edit the pass list
//! through fixed fields.

use std::rc::Rc;

use bubblelab_core::graph::build::ModelKind;
use bubblelab_core::hw::GpuKind;
use bubblelab_core::ScenarioError;
use serde_json::Value;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::NumberField;
use crate::components::params_form::{edit, get, number_value, text_at, FormPage, PageHandle};
use crate::components::timeline::{Shared, TimelineView};
use crate::worker::Output;

/// What the overlap page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "Tensor, sequence and expert parallelism put collectives between the GEMMs of every layer. Waiting for each \
                   one leaves the GPU idle; starting them early helps only as far as the graph allows. Helix splits operators \
                   into tile streams, interleaves the streams segment by segment so one stream's communication runs under \
                   another's computation, and merges tiles back where the simulator says it pays, within a memory budget.",
    unit: "simulations",
    controls: Some(controls),
    drawn: &["model", "gpu", "placement", "passes"],
    main: &[
        "parallelism.tp",
        "parallelism.cp",
        "parallelism.ep",
        "parallelism.dp",
        "workload.layers",
        "workload.micro_batch",
        "workload.seq_len",
        "workload.backward",
    ],
    charts: &[("memory", "Live activations over the step, with the budget")],
    picture: Some(|state| match state.output() {
        Some(output) => html! { <PassSteps output={output.clone()} /> },
        None => Html::default(),
    }),
    ..PageParts::PLAIN
};

/// The form field a core error path belongs to: the pass list is edited through fixed fields,
/// so `overlap.passes[0].k` is the K field and `overlap.passes[2].memory_budget_gib` the budget.
fn form_path(core_path: &str) -> String {
    match core_path.strip_prefix("overlap.passes[") {
        Some(rest) if rest.ends_with("].k") => "overlap.passes.tile.k".into(),
        Some(rest) if rest.ends_with("].dim") => "overlap.passes.tile.dim".into(),
        Some(rest) if rest.ends_with("].memory_budget_gib") => {
            "overlap.passes.bucket.memory_budget_gib".into()
        }
        _ => core_path.to_string(),
    }
}

/// The Helix passes as the form shows them.
#[derive(Clone, PartialEq)]
struct Passes {
    tile: bool,
    k: String,
    dim: String,
    reorder: bool,
    bucket: bool,
    /// Budget in GiB as typed; empty = no budget.
    budget: String,
}

impl Passes {
    fn from_params(params: &Value) -> Passes {
        let list = get(params, "passes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let find = |id: &str| {
            list.iter()
                .find(|p| p.get("pass").and_then(Value::as_str) == Some(id))
        };
        let tile = find("tile");
        let bucket = find("bucket");
        Passes {
            tile: tile.is_some(),
            k: tile
                .and_then(|t| t.get("k"))
                .map_or_else(|| "2".into(), ToString::to_string),
            dim: tile
                .and_then(|t| t.get("dim"))
                .and_then(Value::as_str)
                .unwrap_or("batch")
                .to_string(),
            reorder: find("reorder").is_some(),
            bucket: bucket.is_some(),
            budget: bucket
                .and_then(|b| b.get("memory_budget_gib"))
                .filter(|v| !v.is_null())
                .map(ToString::to_string)
                .unwrap_or_default(),
        }
    }

    /// The `passes` JSON, or the error of the K or budget field.
    fn to_value(&self) -> Result<Value, ScenarioError> {
        let mut out = Vec::new();
        if self.tile {
            let k = number_value("overlap", "passes.tile.k", &self.k)?;
            out.push(serde_json::json!({"pass": "tile", "k": k, "dim": self.dim}));
        }
        if self.reorder {
            out.push(serde_json::json!({"pass": "reorder"}));
        }
        if self.bucket {
            let budget = if self.budget.trim().is_empty() {
                Value::Null
            } else {
                number_value("overlap", "passes.bucket.memory_budget_gib", &self.budget)?
            };
            out.push(serde_json::json!({"pass": "bucket", "memory_budget_gib": budget}));
        }
        Ok(Value::from(out))
    }
}

/// Paths of the pass fields' typed text in the form.
const K_TEXT: &str = "passes.tile.k";
const BUDGET_TEXT: &str = "passes.bucket.memory_budget_gib";

/// The passes the form shows: the params', with the K and budget as typed.
fn shown_passes(state: &State) -> Passes {
    let form = state.form_ref();
    let mut p = Passes::from_params(&form.params);
    if let Some(k) = form.typed(K_TEXT) {
        p.k = k;
    }
    if let Some(budget) = form.typed(BUDGET_TEXT) {
        p.budget = budget;
    }
    p
}

/// The model, GPU and placement menus, and the Helix passes in order.
fn controls(state: &PageHandle<State>) -> Html {
    let form = state.form_ref();
    let select_value = |path: &str| text_at(&form.params, path);
    // The pass fields show the errors of the pass list's elements; the rest of the list's go
    // below them.
    let error_field = form
        .error
        .as_ref()
        .and_then(ScenarioError::path)
        .map(form_path);
    let pass_error = |path: &str| {
        form.error
            .as_ref()
            .filter(|_| error_field.as_deref() == Some(path))
            .map(ToString::to_string)
    };
    let list_error = form
        .field_error("passes")
        .filter(|_| pass_error("overlap.passes.tile.k").is_none())
        .filter(|_| pass_error("overlap.passes.bucket.memory_budget_gib").is_none());
    let p = shown_passes(state);
    let imported = form.shown_upload().is_some();
    let on_tile = pass_toggle(state, |p, on| p.tile = on);
    let on_reorder = pass_toggle(state, |p, on| p.reorder = on);
    let on_bucket = pass_toggle(state, |p, on| p.bucket = on);
    let on_k = on_passes(state, Some(K_TEXT), |p, v| p.k = v);
    let on_budget = on_passes(state, Some(BUDGET_TEXT), |p, v| p.budget = v);
    let on_dim = {
        let cb = on_passes(state, None, |p, v| p.dim = v);
        Callback::from(move |e: Event| {
            cb.emit(e.target_unchecked_into::<HtmlSelectElement>().value());
        })
    };
    html! { <>
        <div class="field">
            <label for="field-model">{ "Model" }</label>
            <select id="field-model" onchange={on_select(state, "model")} disabled={imported}>
                { for ModelKind::ALL.iter().map(|m| html! { <option value={m.id()} selected={select_value("model") == m.id()}>{ m.label() }</option> }) }
            </select>
        </div>
        <div class="field">
            <label for="field-gpu">{ "GPU" }</label>
            <select id="field-gpu" onchange={on_select(state, "gpu")}>
                { for GpuKind::ALL.iter().map(|g| html! { <option value={g.id()} selected={select_value("gpu") == g.id()}>{ g.label() }</option> }) }
            </select>
        </div>
        <div class="field">
            <label for="field-placement">{ "Groups" }</label>
            <select id="field-placement" onchange={on_select(state, "placement")}>
                <option value="intra-node" selected={select_value("placement") == "intra-node"}>{ "inside a node (NVLink)" }</option>
                <option value="inter-node" selected={select_value("placement") == "inter-node"}>{ "across nodes (InfiniBand)" }</option>
            </select>
        </div>
        <fieldset class="field passes" id="field-passes">
            <legend>{ "Helix passes, in order" }</legend>
            <label><input type="checkbox" id="pass-tile" checked={p.tile} onchange={on_tile} />{ " tile" }</label>
            <NumberField path="overlap.passes.tile.k" label="K tile streams" value={p.k.clone()}
                error={pass_error("overlap.passes.tile.k")} on_change={on_k} />
            <div class="field">
                <label for="field-dim">{ "Tile along" }</label>
                <select id="field-dim" onchange={on_dim}>
                    <option value="batch" selected={p.dim == "batch"}>{ "batch" }</option>
                    <option value="sequence" selected={p.dim == "sequence"}>{ "sequence (position-wise ops only)" }</option>
                </select>
            </div>
            <label><input type="checkbox" id="pass-reorder" checked={p.reorder} onchange={on_reorder} />{ " reorder (segmented round-robin)" }</label>
            <label><input type="checkbox" id="pass-bucket" checked={p.bucket} onchange={on_bucket} />{ " bucket (DP under a budget)" }</label>
            <NumberField path="overlap.passes.bucket.memory_budget_gib" label="Memory budget (GiB; empty = none)" value={p.budget.clone()}
                error={pass_error("overlap.passes.bucket.memory_budget_gib")} on_change={on_budget} />
            if let Some(message) = list_error {
                <p class="field-error" data-field="overlap.passes">{ message }</p>
            }
        </fieldset>
    </> }
}

/// A menu's callback: the chosen id goes to `path`, and the page runs.
fn on_select(state: &PageHandle<State>, path: &'static str) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        let value = e.target_unchecked_into::<HtmlSelectElement>().value();
        edit(&state, move |next: &mut State| {
            next.form().set(path, Value::from(value));
            next.rerun(true);
        });
    })
}

/// A pass field's callback: `change` edits the passes the form shows (keeping the typed text
/// at `text`, if the field is typed into), then the page runs on them.
fn on_passes(
    state: &PageHandle<State>,
    text: Option<&'static str>,
    change: fn(&mut Passes, String),
) -> Callback<String> {
    let state = state.clone();
    Callback::from(move |value: String| {
        edit(&state, move |next: &mut State| {
            let mut passes = shown_passes(next);
            if let Some(path) = text {
                next.form().set_text(path, value.clone());
            }
            change(&mut passes, value);
            run_passes(next, &passes);
        });
    })
}

/// A pass's checkbox.
fn pass_toggle(state: &PageHandle<State>, change: fn(&mut Passes, bool)) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        let on = e.target_unchecked_into::<HtmlInputElement>().checked();
        edit(&state, move |next: &mut State| {
            let mut passes = shown_passes(next);
            change(&mut passes, on);
            run_passes(next, &passes);
        });
    })
}

/// Rebuilds the whole `passes` list and runs, or the K or budget field shows why it cannot.
fn run_passes(next: &mut State, passes: &Passes) {
    match passes.to_value() {
        Ok(list) => {
            next.form().set("passes", list);
            next.rerun(true);
        }
        Err(e) => next.form().error = Some(e),
    }
}

/// Properties of [`PassSteps`].
#[derive(Properties, PartialEq)]
struct PassStepsProps {
    /// The lab's last output: the graph's timelines as built and after each pass.
    output: Shared<Output>,
}

/// Helix, pass by pass: a button per step, and the chosen step's timeline (the last step
/// after each run).
#[function_component(PassSteps)]
fn pass_steps(props: &PassStepsProps) -> Html {
    let chosen = use_state(|| usize::MAX);
    {
        let chosen = chosen.clone();
        use_effect_with(props.output.clone(), move |_| chosen.set(usize::MAX));
    }
    let names: Vec<String> = match &*props.output.0 {
        Output::Overlap { steps, .. } => steps.iter().map(|(name, _)| name.clone()).collect(),
        _ => Vec::new(),
    };
    let step = (*chosen).min(names.len().saturating_sub(1));
    let shown = use_memo(
        (props.output.clone(), step),
        |(output, step)| match &*output.0 {
            Output::Overlap { steps, .. } => {
                steps.get(*step).map(|(_, t)| Shared(Rc::new(t.clone())))
            }
            _ => None,
        },
    );
    html! {
        <section class="pass-steps" id="pass-steps">
            <h2>{ "Helix, pass by pass" }</h2>
            <div class="step-buttons">
                { for names.iter().enumerate().map(|(i, name)| {
                    let chosen = chosen.clone();
                    let class = if i == step { "chip" } else { "chip off" };
                    html! { <button type="button" {class} data-step={name.clone()}
                        onclick={Callback::from(move |_: MouseEvent| chosen.set(i))}>{ name.clone() }</button> }
                }) }
            </div>
            if let Some(t) = (*shown).clone() {
                <TimelineView timeline={t} />
            }
        </section>
    }
}
