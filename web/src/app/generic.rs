//! Every lab's page, from the core's registry and the lab's [`PageParts`]. The heading and lede
//! are the lab's card (or its parts'), the form is its own controls and then its field table
//! (each field as its widget says: number box, slider, menu, checkboxes, toggle, list or JSON
//! box; the main fields of its parts first, the rest folded), the uploads are its input slots,
//! and the results are its picture and the Report (tables, charts, findings).

use std::rc::Rc;

use bubblelab_core::fields::{Field, Range, Widget};
use bubblelab_core::labs::pipeline::PipelineParams;
use bubblelab_core::labs::{LABS, LAB_CARDS};
use bubblelab_core::presets::CardBody;
use bubblelab_core::scenario::InputSlot;
use bubblelab_core::{share, Report, Scenario, ScenarioError};
use serde_json::Value;
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

use crate::browser;
use crate::components::fields::{field_id, CheckboxGroup, NumberField};
use crate::components::lab_page::LabPage;
use crate::components::params_form::{
    edit, get, id_options, id_toggle, list_text, number_fields, number_value, preset_callback,
    read_into_form, use_form_page, Form, FormPage, PageHandle, Upload,
};
use crate::components::timeline::Shared;
use crate::components::upload::{texts, FileUpload};
use crate::worker::client::{use_worker, WorkerHandle};
use crate::worker::Output;

/// Largest file an input slot takes on this page.
const MAX_INPUT_BYTES: u64 = 64 << 20;
/// Largest scenario file the page opens.
const MAX_SCENARIO_BYTES: u64 = 256 << 10;

/// What a lab's page has beyond its card and field table: the lede, the unit of its progress,
/// its own controls (for fields the table's widgets do not draw well), the fields shown first
/// (the rest fold under "More parameters"), its charts' titles, its picture of the worker's
/// output, and what the lab adds below the form and after the Report. The heading is the
/// card's title.
pub struct PageParts {
    /// What the lab shows and why, under the heading (in place of the card's text).
    pub lede: &'static str,
    /// What one step of a run is, for the progress text.
    pub unit: &'static str,
    /// Controls of the lab's own, first in the form: menus that set several fields at once,
    /// or show ids with their labels. They edit the page through its handle.
    pub controls: Option<fn(&PageHandle<State>) -> Html>,
    /// Paths of the fields those controls draw: the generic form leaves them out.
    pub drawn: &'static [&'static str],
    /// Paths of the fields shown first, in this order.
    pub main: &'static [&'static str],
    /// Titles of the Report's charts by series chart id.
    pub charts: &'static [(&'static str, &'static str)],
    /// Charts stacked one above the other rather than side by side.
    pub stacked_charts: bool,
    /// Charts before the Report's tables.
    pub charts_first: bool,
    /// More of the form, below the fields and uploads, made from its state (notes, links).
    pub notes: Option<fn(&Form) -> Html>,
    /// The lab's picture, first in the Report's view: drawn from the page's state (the form
    /// and the worker's latest output), and it may edit the form (a click on a GPU).
    pub picture: Option<fn(&PageHandle<State>) -> Html>,
    /// What the page shows after the Report (it may edit the form: a map that opens a run).
    pub after: Option<fn(&PageHandle<State>) -> Html>,
    /// The pieces a run splits into, each in its own worker at once (one per policy); none: a
    /// run goes whole to one worker.
    pub pieces: Option<Pieces>,
}

impl PageParts {
    /// Parts that add nothing to the card and field table: what a lab's parts start from
    /// (`..PageParts::PLAIN`).
    pub const PLAIN: PageParts = PageParts {
        lede: "",
        unit: "steps",
        controls: None,
        drawn: &[],
        main: &[],
        charts: &[],
        stacked_charts: false,
        charts_first: false,
        notes: None,
        picture: None,
        after: None,
        pieces: None,
    };
}

/// The pieces a run of a scenario splits into: each a list of indices (of its policies).
pub type Pieces = fn(&Scenario) -> Vec<Vec<usize>>;

impl std::fmt::Debug for PageParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageParts")
            .field("lede", &self.lede)
            .field("main", &self.main)
            .finish_non_exhaustive()
    }
}

impl PartialEq for PageParts {
    /// Parts are one per lab: equal text means the same lab's parts (functions do not compare).
    fn eq(&self, other: &Self) -> bool {
        self.lede == other.lede && self.main == other.main && self.charts == other.charts
    }
}

/// Properties of [`GenericLab`].
#[derive(Properties, PartialEq)]
pub struct GenericLabProps {
    /// The lab (an entry of the core's `LABS`).
    pub lab: &'static str,
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
    /// What the page has beyond the lab's card and field table.
    #[prop_or_default]
    pub parts: Option<&'static PageParts>,
}

/// The generic page's state: the form, and what the last run returned.
#[derive(Clone, PartialEq)]
pub struct State {
    form: Form,
    report: Shared<Report>,
    output: Option<Shared<Output>>,
    scenario_json: Option<String>,
    /// The run the lab's picture shows, by the id the lab gives it (a policy), kept across
    /// runs; `None`: the lab's own choice.
    picked: Option<String>,
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        Some(State::new(&scenario, link_error))
    }

    fn opening(lab: &'static str, link_error: Option<String>) -> State {
        // The lab's first preset, or its defaults (routes lead only to labs of the registry).
        let scenario = Scenario::for_lab(lab)
            .ok()
            .or_else(|| Scenario::defaults(lab))
            .unwrap_or_else(|| Scenario::Pipeline(PipelineParams::default()));
        State::new(&scenario, link_error)
    }

    fn form(&mut self) -> &mut Form {
        &mut self.form
    }

    fn form_ref(&self) -> &Form {
        &self.form
    }

    fn pieces(&self, scenario: &Scenario) -> Vec<Vec<usize>> {
        super::parts_of(self.form.lab())
            .and_then(|p| p.pieces)
            .map_or_else(Vec::new, |pieces| pieces(scenario))
    }

    fn show(&mut self, mut output: Output, scenario: &Scenario) {
        if let Some(report) = output.take_report() {
            self.report = Shared(Rc::new(report));
            // The rest of the output (a lab's runs) for its picture; the Report is kept once.
            self.output = Some(Shared(Rc::new(output)));
            self.scenario_json = Some(scenario.to_json_pretty());
        }
    }
}

impl State {
    /// What the last run returned (the Report and, for labs that keep them, its runs).
    #[must_use]
    pub fn output(&self) -> Option<&Shared<Output>> {
        self.output.as_ref()
    }

    /// The run the lab's picture shows, if one was picked.
    #[must_use]
    pub fn picked(&self) -> Option<&str> {
        self.picked.as_deref()
    }

    /// Picks the run the lab's picture shows.
    pub fn pick(&mut self, id: impl Into<String>) {
        self.picked = Some(id.into());
    }

    fn new(scenario: &Scenario, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new(scenario.lab(), scenario, link_error),
            report: Shared(Rc::new(Report::default())),
            output: None,
            scenario_json: None,
            picked: None,
        };
        s.rerun(false);
        s
    }
}

/// A lab's page built from the registry alone.
#[function_component(GenericLab)]
pub fn generic_lab(props: &GenericLabProps) -> Html {
    let lab = props.lab;
    let (state, worker) = use_form_page::<State>(lab, props.payload.clone());
    let upload_error = use_state(|| None::<String>);
    // Files the scenario carries are read in a worker of their own, beside the runs.
    let reader = use_worker();
    let form = &state.form;
    let table = Scenario::fields_of(lab);
    let other_error = form.other_error(table.iter().map(|f| f.path));
    let (title, lede) = heading(lab, props.parts);
    let unit = props.parts.map_or("steps", |t| t.unit);
    let slots = Scenario::defaults(lab).map_or(&[][..], |s| s.input_slots());
    let chart_titles = match props.parts {
        Some(t) if !t.charts.is_empty() => t
            .charts
            .iter()
            .map(|(id, title)| ((*id).to_string(), (*title).to_string()))
            .collect(),
        _ => chart_titles(&state.report.0),
    };
    let parts = props.parts;
    let drawn = parts.map_or(&[][..], |t| t.drawn);
    let main: Vec<&Field> = parts.map_or_else(Vec::new, |t| {
        t.main
            .iter()
            .filter_map(|p| table.iter().find(|f| f.path == *p))
            .collect()
    });
    let rest: Vec<&Field> = table
        .iter()
        .filter(|f| !main.contains(f) && !drawn.contains(&f.path))
        .collect();
    let picture = parts
        .and_then(|p| p.picture)
        .map(|picture| picture(&state))
        .unwrap_or_default();
    html! {
        <LabPage {lab} {title} {unit} link_error={form.link_error.clone()}
            shown={state.scenario_json.clone().map(AttrValue::from)} on_pick={preset_callback(&state)}
            worker={worker.clone()} worker_error={form.worker_error.clone()}
            inputs={form.shown_inputs()} report={state.report.clone()} {chart_titles} {picture}
            stacked_charts={parts.is_some_and(|p| p.stacked_charts)}
            charts_first={parts.is_some_and(|p| p.charts_first)}
            lede={html! { { lede } }}
            after={parts.and_then(|p| p.after).map(|after| after(&state)).unwrap_or_default()}
            controls={html! { <>
                { parts.and_then(|p| p.controls).map(|controls| controls(&state)).unwrap_or_default() }
                { for main.iter().map(|field| field_control(&state, field)) }
                if main.is_empty() && drawn.is_empty() {
                    { for rest.iter().map(|field| field_control(&state, field)) }
                } else if !rest.is_empty() {
                    <details class="more-fields" id="more-fields">
                        <summary>{ format!("More parameters ({})", rest.len()) }</summary>
                        { for rest.iter().map(|field| field_control(&state, field)) }
                    </details>
                }
                if let Some(message) = other_error {
                    <p class="field-error">{ message }</p>
                }
                { for slots.iter().map(|slot| slot_upload(&state, &reader, slot, &upload_error)) }
                { back_to_scenario(&state) }
                <FileUpload id="upload-scenario" label="Open a scenario file (.json)" accept=".json,application/json"
                    max_bytes={MAX_SCENARIO_BYTES} max_files={1} on_load={open_scenario(&upload_error)}
                    on_error={upload_error_callback(&upload_error)} />
                { parts.and_then(|p| p.notes).map(|notes| notes(form)).unwrap_or_default() }
                if let Some(message) = form.upload_error.clone().or_else(|| (*upload_error).clone()) {
                    <div class="banner error" id="upload-error" role="alert">{ message }</div>
                }
            </> }} />
    }
}

/// Opens a scenario file in its lab (this one or another), as its share link would.
fn open_scenario(error: &UseStateHandle<Option<String>>) -> Callback<Vec<(String, Vec<u8>)>> {
    let error = error.clone();
    Callback::from(move |files: Vec<(String, Vec<u8>)>| {
        let opened = texts(files).and_then(|files| {
            let (name, text) = files.into_iter().next().ok_or("no file chosen")?;
            Scenario::from_json(&text).map_err(|e| format!("{name}: {e}"))
        });
        match opened {
            Ok(scenario) => {
                error.set(None);
                browser::set_hash(&share::fragment(&scenario));
            }
            Err(e) => error.set(Some(e)),
        }
    })
}

/// Shows why an upload was refused before it was read.
fn upload_error_callback(error: &UseStateHandle<Option<String>>) -> Callback<String> {
    let error = error.clone();
    Callback::from(move |m: String| error.set(Some(m)))
}

/// While the runs read opened files (or are about to): what they read, and a button back to
/// the scenario's own data (the files are not carried in share links).
fn back_to_scenario(state: &PageHandle<State>) -> Html {
    let form = &state.form;
    let Some(upload) = form.upload.as_ref() else {
        return Html::default();
    };
    let shown = form.shown_upload() == Some(upload);
    let onclick = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            edit(&state, |next: &mut State| {
                next.form.set_upload(None);
                next.rerun(true);
            });
        })
    };
    html! {
        <p class="muted" id="reading-upload" data-state={if shown { "shown" } else { "opening" }}>
            if shown {
                { format!("The runs read {}; the fields it fills do not apply. ", upload.source) }
            } else {
                { format!("Opening {} (read and run in the background). ", upload.source) }
            }
            <button type="button" id="use-scenario" {onclick}>{ "Back to the scenario's own data" }</button>
        </p>
    }
}

/// The page's heading (its card's title) and lede (its page text's, else its card's).
fn heading(lab: &'static str, parts: Option<&PageParts>) -> (&'static str, String) {
    let card = LABS.iter().position(|l| *l == lab).map(|i| LAB_CARDS[i]);
    let title = card.map_or(lab, |c| c.title);
    if let Some(p) = parts {
        return (title, p.lede.to_string());
    }
    let lede = match card.map(|c| c.body) {
        Some(CardBody::Lab {
            problem,
            system,
            idea,
            ..
        }) => format!("{problem} {idea} Here: {system}."),
        Some(CardBody::Tool { text }) => text.to_string(),
        None => String::new(),
    };
    (title, lede)
}

/// A title for each chart of the Report, from its axes: `Instances loaded against time (s)`.
fn chart_titles(report: &Report) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for series in &report.series {
        if out.iter().all(|(chart, _)| *chart != series.chart) {
            let mut title = format!("{} against {}", series.y_label, series.x_label);
            if let Some(first) = title.get(..1) {
                title.replace_range(..1, &first.to_uppercase());
            }
            out.push((series.chart.clone(), title));
        }
    }
    out
}

/// The control of one field, as its widget says.
fn field_control(state: &PageHandle<State>, field: &Field) -> Html {
    match (field.widget, field.range) {
        (Widget::Number | Widget::Slider, _) => number_fields(state, &[field.path]),
        (Widget::Select, Range::OneOf(ids)) => select_field(state, field, ids),
        (Widget::Checkboxes, Range::SomeOf(ids)) => checkbox_field(state, field, ids),
        (Widget::Toggle, _) => toggle_field(state, field),
        _ if is_list_field(&state.form, field.path) => list_field(state, field),
        _ => json_field(state, field),
    }
}

/// The callback that sets `path` to the value made of an event and runs again.
fn setter<E: 'static>(
    state: &PageHandle<State>,
    path: &'static str,
    value: impl Fn(E) -> Value + 'static,
) -> Callback<E> {
    let state = state.clone();
    Callback::from(move |e: E| {
        let v = value(e);
        edit(&state, move |next: &mut State| {
            next.form.set(path, v);
            next.rerun(true);
        });
    })
}

/// A menu of the ids a field takes.
fn select_field(state: &PageHandle<State>, field: &Field, ids: &'static [&'static str]) -> Html {
    let form = &state.form;
    let chosen = get(&form.params, field.path)
        .and_then(Value::as_str)
        .unwrap_or("");
    let onchange = setter(state, field.path, |e: Event| {
        Value::from(e.target_unchecked_into::<HtmlSelectElement>().value())
    });
    let id = field_id(form.lab(), field.path);
    html! {
        <div class={classes!("field", form.field_error(field.path).map(|_| "invalid"))} title={field.help}>
            <label for={id.clone()}>{ field.label }</label>
            <select {id} {onchange}>
                { for ids.iter().map(|v| html! { <option value={*v} selected={*v == chosen}>{ *v }</option> }) }
            </select>
            if let Some(message) = form.field_error(field.path) {
                <p class="field-error" data-field={format!("{}.{}", form.lab(), field.path)}>{ message }</p>
            }
        </div>
    }
}

/// One checkbox per id a list field may hold; the list keeps the table's order.
fn checkbox_field(state: &PageHandle<State>, field: &Field, ids: &'static [&'static str]) -> Html {
    let form = &state.form;
    let path = field.path;
    let labelled: Vec<(&str, &str)> = ids.iter().map(|id| (*id, *id)).collect();
    let options = id_options(&form.params, path, &labelled);
    let on_toggle = id_toggle(state, path, ids.to_vec());
    html! {
        <CheckboxGroup path={format!("{}.{path}", form.lab())} label={field.label} {options}
            error={form.field_error(path)} {on_toggle} />
    }
}

/// A checkbox for a yes/no field.
fn toggle_field(state: &PageHandle<State>, field: &Field) -> Html {
    let form = &state.form;
    let on = get(&form.params, field.path)
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let onchange = setter(state, field.path, |e: Event| {
        Value::from(e.target_unchecked_into::<HtmlInputElement>().checked())
    });
    let id = field_id(form.lab(), field.path);
    html! {
        <div class="field" title={field.help}>
            <label for={id.clone()}>
                <input {id} type="checkbox" checked={on} {onchange} />
                { field.label }
            </label>
        </div>
    }
}

/// Whether field `path` is a list of numbers (edited as `32, 64, 128`): its value is one, or
/// it was typed into as one (a list being emptied keeps its text box).
fn is_list_field(form: &Form, path: &str) -> bool {
    get(&form.params, path)
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter().all(Value::is_number) && (!a.is_empty() || form.typed(path).is_some())
        })
}

/// A text box for a list of numbers, separated by commas; text that is not such a list stays
/// with its message.
fn list_field(state: &PageHandle<State>, field: &Field) -> Html {
    let form = &state.form;
    let path = field.path;
    let on_change = {
        let state = state.clone();
        Callback::from(move |text: String| {
            edit(&state, move |next: &mut State| {
                let lab = next.form.lab();
                let parsed: Result<Vec<Value>, ScenarioError> = text
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| number_value(lab, path, s))
                    .collect();
                next.form.set_text(path, text.clone());
                match parsed {
                    Ok(list) => {
                        next.form.set(path, Value::from(list));
                        next.rerun(true);
                    }
                    Err(_) => {
                        next.form.error = Some(ScenarioError::field(
                            format!("{lab}.{path}"),
                            format!("expected numbers separated by commas, got `{text}`"),
                        ));
                    }
                }
            });
        })
    };
    html! {
        <NumberField path={format!("{}.{path}", form.lab())} label={format!("{} (comma-separated)", field.label)}
            help={field.help} input_type="text" value={form.typed(path).unwrap_or_else(|| list_text(&form.params, path))}
            error={form.field_error(path)} {on_change} />
    }
}

/// A JSON box for a list or object field: text that is not JSON stays with its message.
fn json_field(state: &PageHandle<State>, field: &Field) -> Html {
    let form = &state.form;
    let path = field.path;
    let text = form.typed(path).unwrap_or_else(|| {
        get(&form.params, path)
            .and_then(|v| serde_json::to_string_pretty(v).ok())
            .unwrap_or_default()
    });
    let oninput = {
        let state = state.clone();
        Callback::from(move |e: InputEvent| {
            let typed = e.target_unchecked_into::<HtmlTextAreaElement>().value();
            edit(&state, move |next: &mut State| {
                let parsed = serde_json::from_str::<Value>(&typed);
                next.form.set_text(path, typed);
                match parsed {
                    Ok(v) => {
                        next.form.set(path, v);
                        next.rerun(true);
                    }
                    Err(e) => {
                        let lab = next.form.lab();
                        next.form.error = Some(ScenarioError::field(
                            format!("{lab}.{path}"),
                            format!("not JSON: {e}"),
                        ));
                    }
                }
            });
        })
    };
    let id = field_id(form.lab(), path);
    html! {
        <div class={classes!("field", form.field_error(path).map(|_| "invalid"))} title={field.help}>
            <label for={id.clone()}>{ field.label }</label>
            <textarea {id} rows="4" spellcheck="false" value={text} {oninput} />
            if let Some(message) = form.field_error(path) {
                <p class="field-error" data-field={format!("{}.{path}", form.lab())}>{ message }</p>
            }
        </div>
    }
}

/// The upload of one input slot, its files read by the lab's reader in a worker: into the
/// form's parameters (so the share link carries them) for a slot the lab carries, else by
/// every run.
fn slot_upload(
    state: &PageHandle<State>,
    reader: &WorkerHandle,
    slot: &'static InputSlot,
    error: &UseStateHandle<Option<String>>,
) -> Html {
    let on_load = {
        let state = state.clone();
        let reader = reader.clone();
        let error = error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            error.set(None);
            if slot.carried {
                let error = error.clone();
                let on_error = Callback::from(move |m: Option<String>| error.set(m));
                let files = files.into_iter().map(|f| (slot.name, Rc::new(f))).collect();
                read_into_form(&state, &reader, files, on_error);
                return;
            }
            let source = files
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let upload = Upload {
                slot: slot.name,
                files: files.into_iter().map(Rc::new).collect(),
                source,
            };
            edit(&state, move |next: &mut State| {
                next.form.set_upload(Some(upload));
                next.rerun(false);
            });
        })
    };
    let on_error = {
        let error = error.clone();
        Callback::from(move |m: String| error.set(Some(m)))
    };
    html! {
        <>
            <p class="muted breakable">{ format!("{}: {}", slot.name, slot.help) }</p>
            <FileUpload id={format!("upload-{}", slot.name)} label={format!("Open {}", slot.name)}
                multiple={slot.many} max_bytes={MAX_INPUT_BYTES} max_files={if slot.many { 64 } else { 1 }}
                {on_load} {on_error} />
        </>
    }
}
