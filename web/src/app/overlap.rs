//! The overlap lab page: one model-parallel graph under four strategies (serial, eager,
//! AsyncTP-style, Helix) with their timelines, a step control that walks Helix's passes
//! (original → tiled → reordered → bucketed) on one timeline, the memory curves with the
//! budget, and the comparison tables. The graph is built from the model and parallel layout
//! (shareable as a link) or imported from a graph JSON file.
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

use std::rc::Rc;

use bubblelab_core::graph::build::ModelKind;
use bubblelab_core::hw::GpuKind;
use bubblelab_core::labs::overlap::OverlapParams;
use bubblelab_core::report::Timeline;
use bubblelab_core::{Report, Scenario, ScenarioError};
use serde_json::Value;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::components::fields::NumberField;
use crate::components::lab_page::LabPage;
use crate::components::params_form::{
    edit, get, number_value, opening_params, preset_callback, text_at, use_form_page, Form,
    FormPage,
};
use crate::components::params_form::{more_number_fields, number_fields};
use crate::components::timeline::{Shared, TimelineView};
use crate::components::upload::{texts, FileUpload};
use crate::worker::Output;

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

/// Properties of [`OverlapLab`].
#[derive(Properties, PartialEq)]
pub struct OverlapLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 7] = [
    "parallelism.tp",
    "parallelism.cp",
    "parallelism.ep",
    "parallelism.dp",
    "workload.layers",
    "workload.micro_batch",
    "workload.seq_len",
];

/// Largest graph file the page reads, bytes.
const MAX_GRAPH_BYTES: u64 = 32 << 20;

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

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    passes: Passes,
    report: Shared<Report>,
    /// Timelines of the graph as built and after each pass, with their names.
    steps: Shared<Vec<(String, Shared<Timeline>)>>,
    /// Step shown by the step control.
    step: usize,
    /// Name of an imported graph file, when one replaces the built model.
    imported: Option<String>,
    /// A graph file being tried: its name, and the graph and name it replaced (restored if
    /// the core refuses it).
    trying_graph: Option<(String, Option<Value>, Option<String>)>,
}

impl State {
    fn new(p: &OverlapParams, link_error: Option<String>) -> State {
        let form = Form::new("overlap", &Scenario::Overlap(p.clone()), link_error);
        let passes = Passes::from_params(&form.params);
        let mut s = State {
            form,
            passes,
            imported: p
                .graph
                .as_ref()
                .map(|_| "a graph from the link".to_string()),
            report: Shared(Rc::new(Report::default())),
            steps: Shared(Rc::new(Vec::new())),
            step: usize::MAX,
            trying_graph: None,
        };
        s.rerun(false);
        s
    }
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Overlap(p) => Some(State::new(&p, link_error)),
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
        if let Output::Overlap { report, steps } = output {
            self.report = Shared(Rc::new(report));
            let steps: Vec<(String, Shared<Timeline>)> = steps
                .into_iter()
                .map(|(name, t)| (name, Shared(Rc::new(t))))
                .collect();
            self.step = self.step.min(steps.len().saturating_sub(1));
            self.steps = Shared(Rc::new(steps));
            self.trying_graph = None;
        }
    }

    /// Imported graphs can be large: links carry built models only.
    fn linkable(&self) -> bool {
        self.imported.is_none()
    }

    fn refused(&mut self) {
        if let Some((name, graph, imported)) = self.trying_graph.take() {
            if let Some(e) = self.form.error.take() {
                self.form.upload_error = Some(format!("{name}: {e}"));
            }
            self.restore_graph((graph, imported));
        }
    }
}

impl State {
    /// Puts back the graph (or the built model) and its name.
    fn restore_graph(&mut self, (graph, imported): (Option<Value>, Option<String>)) {
        match graph {
            Some(g) => self.form.set("graph", g),
            None => {
                if let Some(obj) = self.form.params.as_object_mut() {
                    obj.remove("graph");
                }
            }
        }
        self.imported = imported;
    }
}

/// The overlap lab.
#[function_component(OverlapLab)]
pub fn overlap_lab(props: &OverlapLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("overlap", props.payload.clone());
    let upload_error = use_state(|| None::<String>);
    let on_select = |path: &'static str| {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form.set(path, Value::from(value));
                next.rerun(true);
            });
        })
    };
    let on_backward = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let on = e.target_unchecked_into::<HtmlInputElement>().checked();
            edit(&state, move |next: &mut State| {
                next.form.set("workload.backward", Value::from(on));
                next.rerun(true);
            });
        })
    };
    // Every pass control edits `Passes`, then the whole `passes` list is rebuilt.
    let on_passes = |change: fn(&mut Passes, String)| {
        let state = state.clone();
        Callback::from(move |value: String| {
            edit(&state, move |next: &mut State| {
                change(&mut next.passes, value);
                match next.passes.to_value() {
                    Ok(list) => {
                        next.form.set("passes", list);
                        next.rerun(true);
                        // Show the last step once the run finishes.
                        next.step = usize::MAX;
                    }
                    Err(e) => next.form.error = Some(e),
                }
            });
        })
    };
    let checkbox = |cb: Callback<String>| {
        Callback::from(move |e: Event| {
            let on = e.target_unchecked_into::<HtmlInputElement>().checked();
            cb.emit(if on { "on".into() } else { String::new() });
        })
    };
    let on_tile = checkbox(on_passes(|p, v| p.tile = !v.is_empty()));
    let on_reorder = checkbox(on_passes(|p, v| p.reorder = !v.is_empty()));
    let on_bucket = checkbox(on_passes(|p, v| p.bucket = !v.is_empty()));
    let on_k = on_passes(|p, v| p.k = v);
    let on_budget = on_passes(|p, v| p.budget = v);
    let on_dim = {
        let cb = on_passes(|p, v| p.dim = v);
        Callback::from(move |e: Event| {
            cb.emit(e.target_unchecked_into::<HtmlSelectElement>().value());
        })
    };
    let on_step = {
        let state = state.clone();
        Callback::from(move |i: usize| {
            edit(&state, move |next: &mut State| {
                next.step = i;
            });
        })
    };
    let on_graph = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let loaded = texts(files).and_then(|files| {
                let (name, text) = files.into_iter().next().ok_or("no file chosen")?;
                let value: Value = serde_json::from_str(&text).map_err(|e| {
                    format!(
                        "{name}: not JSON: {e} (expected bubblelab's graph JSON, docs/MODEL.md)"
                    )
                })?;
                Ok((name, value))
            });
            match loaded {
                Ok((name, value)) => {
                    upload_error.set(None);
                    edit(&state, move |next: &mut State| {
                        let before = (
                            get(&next.form.params, "graph").cloned(),
                            next.imported.clone(),
                        );
                        next.form.set("graph", value);
                        next.imported = Some(name.clone());
                        next.rerun(false);
                        match next.form.error.clone() {
                            // The core named what is wrong with the graph: keep the last good run.
                            Some(e) => {
                                next.form.upload_error = Some(format!("{name}: {e}"));
                                next.restore_graph(before);
                            }
                            None => next.trying_graph = Some((name, before.0, before.1)),
                        }
                    });
                }
                Err(e) => upload_error.set(Some(e)),
            }
        })
    };
    let on_built = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            edit(&state, move |next: &mut State| {
                if let Some(obj) = next.form.params.as_object_mut() {
                    obj.remove("graph");
                }
                next.imported = None;
                next.rerun(true);
            });
        })
    };
    let on_upload_error = {
        let upload_error = upload_error.clone();
        Callback::from(move |m: String| upload_error.set(Some(m)))
    };
    let form = &state.form;
    let error_field = form.error.as_ref().and_then(|e| e.path()).map(form_path);
    let field_error = |path: &str| {
        let full = format!("overlap.{path}");
        form.error
            .as_ref()
            .filter(|_| error_field.as_deref() == Some(full.as_str()))
            .map(ToString::to_string)
    };
    let shown_fields: Vec<String> = FIELDS
        .iter()
        .map(|p| format!("overlap.{p}"))
        .chain([
            "overlap.passes.tile.k".into(),
            "overlap.passes.bucket.memory_budget_gib".into(),
        ])
        .collect();
    let other_error = form
        .error
        .as_ref()
        .filter(|_| {
            !error_field
                .as_ref()
                .is_some_and(|f| shown_fields.contains(f))
        })
        .map(ToString::to_string);
    let select_value = |path: &str| text_at(&form.params, path);
    let backward = get(&form.params, "workload.backward")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let steps = state.steps.0.clone();
    let shown = steps.get(state.step).map(|(_, t)| t.clone());
    let p = &state.passes;
    html! {
        <LabPage lab="overlap" title="Overlap: hide communication under computation, as graph scheduling"
            link_error={form.link_error.clone()} shown={state.form.shown_json()} on_pick={preset_callback(&state)}
            worker={worker.clone()} unit="simulations" worker_error={state.form.worker_error.clone()}
            report={state.report.clone()}
            lede={html! {
                { "Tensor, sequence and expert parallelism put collectives between the GEMMs of every layer. Waiting for each \
                   one leaves the GPU idle; starting them early helps only as far as the graph allows. Helix splits operators \
                   into tile streams, interleaves the streams segment by segment so one stream's communication runs under \
                   another's computation, and merges tiles back where the simulator says it pays, within a memory budget." }
            }}
            controls={html! { <>
                    <div class="field">
                        <label for="field-model">{ "Model" }</label>
                        <select id="field-model" onchange={on_select("model")} disabled={state.imported.is_some()}>
                            { for ModelKind::ALL.iter().map(|m| html! { <option value={m.id()} selected={select_value("model") == m.id()}>{ m.label() }</option> }) }
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-gpu">{ "GPU" }</label>
                        <select id="field-gpu" onchange={on_select("gpu")}>
                            { for GpuKind::ALL.iter().map(|g| html! { <option value={g.id()} selected={select_value("gpu") == g.id()}>{ g.label() }</option> }) }
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-placement">{ "Groups" }</label>
                        <select id="field-placement" onchange={on_select("placement")}>
                            <option value="intra-node" selected={select_value("placement") == "intra-node"}>{ "inside a node (NVLink)" }</option>
                            <option value="inter-node" selected={select_value("placement") == "inter-node"}>{ "across nodes (InfiniBand)" }</option>
                        </select>
                    </div>
                    { number_fields(&state, &FIELDS) }
                    { more_number_fields(&state, &[&FIELDS[..], &["passes.tile.k", "passes.bucket.memory_budget_gib", "passes.tile.dim", "model", "gpu", "placement", "workload.backward"]].concat()) }
                    <div class="field">
                        <label><input type="checkbox" id="field-backward" checked={backward} onchange={on_backward} />{ " training step (forward + backward)" }</label>
                    </div>
                    <fieldset class="field passes">
                        <legend>{ "Helix passes, in order" }</legend>
                        <label><input type="checkbox" id="pass-tile" checked={p.tile} onchange={on_tile} />{ " tile" }</label>
                        <NumberField path="overlap.passes.tile.k" label="K tile streams" value={p.k.clone()}
                            error={field_error("passes.tile.k")} on_change={on_k} />
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
                            error={field_error("passes.bucket.memory_budget_gib")} on_change={on_budget} />
                    </fieldset>
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <FileUpload id="upload-overlap-graph" label="Import a graph (bubblelab graph JSON)" accept=".json"
                        max_bytes={MAX_GRAPH_BYTES} max_files={1} on_load={on_graph} on_error={on_upload_error} />
                    if let Some(name) = &state.imported {
                        <p class="muted">{ format!("Running on {name}. ") }
                            <button type="button" id="use-built" onclick={on_built}>{ "Back to the built model" }</button>
                        </p>
                    }
                    if let Some(message) = state.form.upload_error.as_ref().or(upload_error.as_ref()) {
                        <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                    }
            </> }}
            picture={html! {
                    <section class="pass-steps" id="pass-steps">
                        <h2>{ "Helix, pass by pass" }</h2>
                        <div class="step-buttons">
                            { for steps.iter().enumerate().map(|(i, (name, _))| {
                                let on_step = on_step.clone();
                                let class = if i == state.step { "chip" } else { "chip off" };
                                html! { <button type="button" {class} data-step={name.clone()}
                                    onclick={Callback::from(move |_: MouseEvent| on_step.emit(i))}>{ name.clone() }</button> }
                            }) }
                        </div>
                        if let Some(t) = shown {
                            <TimelineView timeline={t} />
                        }
                    </section>
            }}
            chart_titles={vec![
                        ("memory".to_string(), "Live activations over the step, with the budget".to_string()),
            ]} />
    }
}
