//! Editing a scenario's `params` as JSON by dotted path, for the lab pages whose forms have
//! many nested fields: the page changes one value, then the core parses and validates the
//! whole scenario, so every message names the field exactly as the CLI would.

use std::ops::Deref;
use std::rc::Rc;

use bubblelab_core::fields::{Field, Range, Widget};
use bubblelab_core::kinds::Kind;
use bubblelab_core::{share, Scenario, ScenarioError};
use serde_json::Value;
use yew::prelude::*;

use crate::components::fields::NumberField;
use crate::worker::client::{use_worker, Outcome, RunRequest, SharedFile, WorkerHandle};
use crate::worker::{Failure, Job, Output};

/// One step of a path: an object key, or an array index when the value is an array.
fn step<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    match v {
        Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => v.get(k),
    }
}

/// The value at a dotted path (`cluster.nodes`, `controllers.1.initial_window`), if any.
#[must_use]
pub fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, step)
}

/// The value at a dotted path as the text a field shows (strings without quotes).
#[must_use]
pub fn text_at(v: &Value, path: &str) -> String {
    match get(v, path) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The list at a dotted path as a field shows it: `32, 64, 128` or `none, blind, squeezer`.
#[must_use]
pub fn list_text(v: &Value, path: &str) -> String {
    get(v, path)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// Sets the value at a dotted path (an object key, or an existing array element); parents must
/// exist (the scenario's JSON has every field).
pub fn set(v: &mut Value, path: &str, new: Value) {
    let mut cur = v;
    let mut parts = path.split('.').peekable();
    while let Some(k) = parts.next() {
        if parts.peek().is_none() {
            match cur {
                Value::Object(obj) => {
                    obj.insert(k.to_string(), new);
                }
                Value::Array(a) => {
                    if let Some(slot) = k.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                        *slot = new;
                    }
                }
                _ => {}
            }
            return;
        }
        let next = match cur {
            Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => cur.get_mut(k),
        };
        match next {
            Some(next) => cur = next,
            None => return,
        }
    }
}

/// A number typed into field `lab.path`: whole numbers become JSON integers (so integer
/// fields accept them), others floats.
///
/// # Errors
/// A field error naming `lab.path` when the text is not a finite number.
pub fn number_value(lab: &str, path: &str, text: &str) -> Result<Value, ScenarioError> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(if v.fract() == 0.0 && (0.0..9.0e15).contains(&v) {
            Value::from(v as u64)
        } else {
            Value::from(v)
        }),
        _ => Err(ScenarioError::field(
            format!("{lab}.{path}"),
            format!("expected a number, got `{text}`"),
        )),
    }
}

/// The scenario of lab `lab` with these params, parsed and validated by the core.
///
/// # Errors
/// The core's error, naming the field.
pub fn scenario_of(lab: &str, params: &Value) -> Result<Scenario, ScenarioError> {
    let json = format!("{{\"version\":1,\"lab\":\"{lab}\",\"params\":{params}}}");
    Scenario::from_json(&json)
}

/// A scenario's params as JSON (every field present, as the scenario serialises them).
#[must_use]
pub fn params_value(scenario: &Scenario) -> Value {
    serde_json::from_str(&scenario.to_json())
        .ok()
        .and_then(|v: Value| v.get("params").cloned())
        .unwrap_or(Value::Null)
}

/// The editable half of a lab page's state: the scenario's `params` as JSON, the text of each
/// field as typed (so a half-typed number stays on screen), the last error and the share-link
/// error. Every lab page with a number form keeps one and runs its own model on
/// [`Form::scenario`].
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    lab: &'static str,
    /// The scenario's params as JSON, edited by the form.
    pub params: Value,
    /// Field text as typed, by path; fields not typed in show the params' value.
    texts: Vec<(String, String)>,
    /// What the core said of the last edit or run.
    pub error: Option<ScenarioError>,
    /// Why the share link the page was opened with could not be used.
    pub link_error: Option<String>,
    /// The run the page asked for last (the worker runs it; see [`use_form_page`]).
    pub pending: Option<Rc<PendingRun>>,
    /// The uploaded files the runs read, when they replace the scenario's own input.
    pub upload: Option<Upload>,
    /// The last upload a run finished on (a refused upload falls back to it).
    upload_ok: Option<Upload>,
    /// Why the last upload was refused (by the worker, which reads it).
    pub upload_error: Option<String>,
    /// Why the worker failed, when it did.
    pub worker_error: Option<String>,
    /// The scenario of the run on screen (the last one that finished).
    pub shown: Option<Scenario>,
    seq: u64,
}

/// A run the page asked for: the scenario and whether a success puts its link in the address
/// bar.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingRun {
    /// Number of the ask (a newer ask supersedes it).
    pub seq: u64,
    /// The validated scenario.
    pub scenario: Scenario,
    /// Put the share link in the address bar on success.
    pub link: bool,
}

/// Files a lab runs on instead of its synthetic input, and how the page names them.
#[derive(Clone, Debug, PartialEq)]
pub struct Upload {
    /// The lab's input slot the files fill (`trace`, `stage_logs`).
    pub slot: &'static str,
    /// The files, as read (the worker reads them with the slot's reader for every run).
    pub files: Vec<SharedFile>,
    /// What the page calls them (`trace.csv`).
    pub source: String,
}

impl Form {
    /// The lab whose scenario the form edits.
    #[must_use]
    pub fn lab(&self) -> &'static str {
        self.lab
    }

    /// The form of lab `lab` showing `scenario`.
    #[must_use]
    pub fn new(lab: &'static str, scenario: &Scenario, link_error: Option<String>) -> Form {
        Form {
            lab,
            params: params_value(scenario),
            texts: Vec::new(),
            error: None,
            link_error,
            pending: None,
            upload: None,
            upload_ok: None,
            upload_error: None,
            worker_error: None,
            shown: None,
            seq: 0,
        }
    }

    /// The text field `path` shows: as typed, else the params' value.
    #[must_use]
    pub fn text(&self, path: &str) -> String {
        self.texts
            .iter()
            .find(|(p, _)| p == path)
            .map_or_else(|| text_at(&self.params, path), |(_, t)| t.clone())
    }

    /// The text of field `path` as typed, if it was typed in.
    #[must_use]
    pub fn typed(&self, path: &str) -> Option<String> {
        self.texts
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, t)| t.clone())
    }

    /// Keeps the text of field `path` as typed.
    pub fn set_text(&mut self, path: &str, text: String) {
        match self.texts.iter_mut().find(|(p, _)| p == path) {
            Some(entry) => entry.1 = text,
            None => self.texts.push((path.to_string(), text)),
        }
    }

    /// Sets the value at `path` inside `params`.
    pub fn set(&mut self, path: &str, value: Value) {
        set(&mut self.params, path, value);
    }

    /// A number typed into field `path`: keeps the text, and when it is a number sets it in
    /// `params` and returns true (the page should run again); otherwise records a field error.
    pub fn edit_number(&mut self, path: &str, text: String) -> bool {
        let parsed = number_value(self.lab, path, &text);
        self.set_text(path, text);
        match parsed {
            Ok(value) => {
                self.set(path, value);
                self.link_error = None;
                true
            }
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// The scenario the form describes, validated by the core; `None` with the error recorded.
    pub fn scenario(&mut self) -> Option<Scenario> {
        match scenario_of(self.lab, &self.params) {
            Ok(s) => Some(s),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// Asks for a run of `scenario` (the page's effect posts it to the worker).
    pub fn ask(&mut self, scenario: Scenario, link: bool) {
        self.seq += 1;
        self.error = None;
        self.pending = Some(Rc::new(PendingRun {
            seq: self.seq,
            scenario,
            link,
        }));
    }

    /// Number of the last ask (0 before any).
    #[must_use]
    pub fn pending_seq(&self) -> u64 {
        self.pending.as_ref().map_or(0, |p| p.seq)
    }

    /// Runs the next asks on `upload` (`None`: the scenario's own input again).
    pub fn set_upload(&mut self, upload: Option<Upload>) {
        self.upload_error = None;
        if upload.is_none() {
            self.upload_ok = None;
        }
        self.upload = upload;
    }

    /// The upload the results shown were computed on (`None`: the scenario's own input).
    #[must_use]
    pub fn shown_upload(&self) -> Option<&Upload> {
        self.upload_ok.as_ref()
    }

    /// The files the results shown were computed on, as the compare panel lists them: (slot,
    /// `name, N bytes`); empty when they came from the scenario alone.
    #[must_use]
    pub fn shown_inputs(&self) -> Vec<(String, String)> {
        self.shown_upload()
            .map(|u| {
                let bytes: usize = u.files.iter().map(|f| f.1.len()).sum();
                vec![(u.slot.to_string(), format!("{}, {bytes} bytes", u.source))]
            })
            .unwrap_or_default()
    }

    /// The upload's files (none without an upload).
    #[must_use]
    pub fn upload_files(&self) -> Vec<(&'static str, SharedFile)> {
        self.upload
            .as_ref()
            .map(|u| u.files.iter().map(|f| (u.slot, f.clone())).collect())
            .unwrap_or_default()
    }

    /// Records how the run of `pending` ended, unless a newer ask superseded it; returns the
    /// output to show on success.
    pub fn finish(
        &mut self,
        pending: &PendingRun,
        outcome: Outcome,
        linkable: bool,
    ) -> Option<Output> {
        if pending.seq != self.pending_seq() {
            return None;
        }
        self.worker_error = None;
        match outcome {
            Ok(output) => {
                // `ask` cleared the error when this run was asked; an error set since comes
                // from a newer edit that did not validate, and stays until that field is fixed.
                self.upload_error = None;
                self.upload_ok = self.upload.clone();
                self.shown = Some(pending.scenario.clone());
                if pending.link && linkable && self.upload.is_none() {
                    crate::browser::replace_hash(&share::fragment(&pending.scenario));
                }
                Some(output)
            }
            Err(Failure::Scenario(e)) => {
                self.error = Some(e);
                None
            }
            Err(Failure::Upload(message)) => {
                // The refused files are dropped; the results shown stay those of the last run.
                self.upload = self.upload_ok.clone();
                self.upload_error = Some(message);
                None
            }
            Err(failure @ Failure::Worker(_)) => {
                self.worker_error = Some(failure.to_string());
                None
            }
        }
    }

    /// The error to show under field `path` (its own, or one of a list field's elements).
    #[must_use]
    pub fn field_error(&self, path: &str) -> Option<String> {
        let full = self.error_path(path);
        self.error
            .as_ref()
            .filter(|e| e.path().is_some_and(|p| names_field(p, &full)))
            .map(ToString::to_string)
    }

    /// The error to show below the form: one that no field in `shown` displays.
    #[must_use]
    pub fn other_error<'a>(&self, shown: impl IntoIterator<Item = &'a str>) -> Option<String> {
        let error = self.error.as_ref()?;
        let shown_here = error.path().is_some_and(|p| {
            shown
                .into_iter()
                .any(|s| names_field(p, &self.error_path(s)))
        });
        (!shown_here).then(|| error.to_string())
    }

    /// Forgets the typed text of every field, so each shows the params' value again (after a
    /// preset or a choice that rewrites several fields).
    pub fn forget_texts(&mut self) {
        self.texts.clear();
    }

    /// A form path as the core names it in errors: `controllers.2.cap` → `lab.controllers[2].cap`.
    fn error_path(&self, path: &str) -> String {
        let mut out = String::from(self.lab);
        for part in path.split('.') {
            if part.parse::<usize>().is_ok() {
                out.push('[');
                out.push_str(part);
                out.push(']');
            } else {
                out.push('.');
                out.push_str(part);
            }
        }
        out
    }
}

/// Whether an error at `error_path` belongs to field `full`: the field itself, or one element
/// `full[i]` of a list field (an element's own sub-fields have fields of their own).
fn names_field(error_path: &str, full: &str) -> bool {
    error_path == full
        || error_path
            .strip_prefix(full)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.strip_suffix(']'))
            .is_some_and(|index| index.parse::<usize>().is_ok())
}

/// The scenario of a share-link payload for lab `lab`: `(Some(scenario), None)` when it
/// decodes, `(None, Some(why))` when it does not, `(None, None)` without a payload.
#[must_use]
pub fn decode_payload(lab: &str, payload: Option<&str>) -> (Option<Scenario>, Option<String>) {
    match payload.map(|p| share::decode_for_lab(lab, p)) {
        Some(Ok(s)) => (Some(s), None),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    }
}

/// A lab page's state that holds a [`Form`]; its model runs in the page's worker.
pub trait FormPage: Clone + PartialEq + 'static {
    /// The page's form.
    fn form(&mut self) -> &mut Form;
    /// The page's form, to read.
    fn form_ref(&self) -> &Form;
    /// What the worker runs for `scenario`: the lab on the form's upload.
    fn request(&self, scenario: &Scenario) -> RunRequest {
        RunRequest::run(scenario, self.form_ref().upload_files())
    }
    /// The pieces the request splits into, each run in its own worker at once
    /// ([`WorkerHandle::run_in_pieces`]); none (the default): it runs whole in one worker.
    fn pieces(&self, _scenario: &Scenario) -> Vec<Vec<usize>> {
        Vec::new()
    }
    /// Shows a finished run of `scenario`.
    fn show(&mut self, output: Output, scenario: &Scenario);
    /// The page showing `scenario` (its run asked for); `None` when it is another lab's.
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<Self>;
    /// The page of lab `lab` without a usable link: the lab's default scenario (its run asked
    /// for).
    fn opening(lab: &'static str, link_error: Option<String>) -> Self;
    /// Whether a successful run may put its share link in the address bar.
    fn linkable(&self) -> bool {
        true
    }

    /// Called after the worker refused the run asked for last (the form holds the error).
    fn refused(&mut self) {}

    /// Validates the form's scenario and asks for its run; `link` puts the share link in the
    /// address bar on success. An invalid form keeps its error and asks for nothing.
    fn rerun(&mut self, link: bool) {
        if let Some(scenario) = self.form().scenario() {
            self.form().ask(scenario, link);
        }
    }
}

/// The page of lab `lab` a share-link payload opens: its scenario, or the default with the
/// link's error.
#[must_use]
pub fn from_payload<S: FormPage>(lab: &'static str, payload: Option<&str>) -> S {
    match decode_payload(lab, payload) {
        (Some(scenario), _) => S::open(scenario, None).unwrap_or_else(|| S::opening(lab, None)),
        (None, link_error) => S::opening(lab, link_error),
    }
}

/// A change to a page's state, applied to its latest value (so a run that ends late never
/// undoes an edit made while it ran).
pub struct Edit<S>(Box<dyn FnOnce(&mut S)>);

/// A [`FormPage`] as a Yew reducer state.
#[derive(Clone, PartialEq)]
pub struct Page<S>(pub S);

impl<S> Deref for Page<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: FormPage> Reducible for Page<S> {
    type Action = Edit<S>;
    fn reduce(self: Rc<Self>, action: Edit<S>) -> Rc<Self> {
        let mut next = self.0.clone();
        (action.0)(&mut next);
        Rc::new(Page(next))
    }
}

/// A page's state handle.
pub type PageHandle<S> = UseReducerHandle<Page<S>>;

/// Changes the page's state.
pub fn edit<S: FormPage>(state: &PageHandle<S>, change: impl FnOnce(&mut S) + 'static) {
    state.dispatch(Edit(Box::new(change)));
}

/// A form page's state (from the share-link payload) and its worker: every ask of the form is
/// posted to the worker, and its outcome comes back into the state.
#[hook]
pub fn use_form_page<S: FormPage>(
    lab: &'static str,
    payload: Option<String>,
) -> (PageHandle<S>, WorkerHandle) {
    let worker = use_worker();
    let state = use_reducer(move || Page(from_payload::<S>(lab, payload.as_deref())));
    {
        let state = state.clone();
        let worker = worker.clone();
        use_effect_with(state.form_ref().pending_seq(), move |_| {
            if let Some(pending) = state.form_ref().pending.clone() {
                let request = state.request(&pending.scenario);
                let pieces = state.pieces(&pending.scenario);
                let dispatcher = state.dispatcher();
                worker.run_in_pieces(
                    request,
                    pieces,
                    Callback::from(move |outcome: Outcome| {
                        let pending = pending.clone();
                        dispatcher.dispatch(Edit(Box::new(move |s: &mut S| {
                            if pending.seq != s.form_ref().pending_seq() {
                                return; // a newer ask supersedes this run
                            }
                            let linkable = s.linkable();
                            match s.form().finish(&pending, outcome, linkable) {
                                Some(output) => s.show(output, &pending.scenario),
                                None => s.refused(),
                            }
                        })));
                    }),
                );
            }
        });
    }
    (state, worker)
}

/// The preset picker's callback: the page on the preset (run once), its share link in the
/// address bar when the run succeeds.
#[must_use]
pub fn preset_callback<S: FormPage>(state: &PageHandle<S>) -> Callback<(&'static str, Scenario)> {
    let state = state.clone();
    Callback::from(move |(_, scenario): (&'static str, Scenario)| {
        if let Some(mut next) = S::open(scenario, None) {
            // The new page's asks continue the old numbering, so its effect fires.
            edit(&state, move |s: &mut S| {
                let seq = s.form().seq;
                next.form().seq = seq;
                next.rerun(true);
                *s = next;
            });
        }
    })
}

/// The callback of number field `path`: keep the text, and run again when it is a number.
#[must_use]
pub fn number_callback<S: FormPage>(state: &PageHandle<S>, path: &str) -> Callback<String> {
    let state = state.clone();
    let path = path.to_string();
    Callback::from(move |text: String| {
        let path = path.clone();
        edit(&state, move |next: &mut S| {
            if next.form().edit_number(&path, text) {
                next.rerun(true);
            }
        });
    })
}

/// The number boxes of `paths` of the page's lab, each labelled, ranged and explained by the
/// lab's field table ([`bubblelab_core::fields`]: the one description of a parameter, which the
/// CLI's `--fields` and docs/parameters/ print too), typed text kept and errors inline.
pub fn number_fields<S: FormPage>(state: &PageHandle<S>, paths: &[&str]) -> Html {
    let form = state.form_ref();
    let lab = state.form_ref().lab();
    let table = Scenario::fields_of(lab);
    html! {
        { for paths.iter().map(|path| {
            let row = table.iter().find(|f| f.path == *path);
            if row.is_none() {
                web_sys::console::error_1(&format!("{lab}.{path}: no row in the lab's field table").into());
            }
            let label = row.map_or_else(|| (*path).to_string(), field_label);
            let help = row.map(|f| AttrValue::from(f.help)).unwrap_or_default();
            let (min, max) = match row.map(|f| f.range) {
                Some(Range::Int { min, max }) => (Some(min as f64), Some(max as f64)),
                Some(Range::Float { min, max }) => (Some(min), Some(max)),
                _ => (None, None),
            };
            let slider = row.is_some_and(|f| f.widget == Widget::Slider);
            html! {
                <NumberField path={format!("{lab}.{path}")} {label} {help} {min} {max} {slider}
                    value={form.text(path)} error={form.field_error(path)}
                    on_change={number_callback(state, path)} />
            }
        }) }
    }
}

/// A field's label with its unit, as a form shows it: `Micro-batches`, `GPU memory (bytes)`;
/// a unit that only names a kind of value (a count, a seed, a fraction) is left out.
fn field_label(field: &Field) -> String {
    match field.unit {
        // Kinds of value rather than units: the label says enough.
        "count" | "id" | "text" | "list" | "scenario" | "seed" | "bool" | "ratio" | "fraction"
        | "" => field.label.to_string(),
        unit => format!("{} ({unit})", field.label),
    }
}

/// Reads `files` (each with the lab's input slot it fills) into the page's parameters with the
/// lab's own readers, in the worker ([`Job::Read`]: [`Scenario::with_inputs`], as
/// `bubblelab run --input SLOT=FILE` reads them), then copies every parameter the files changed
/// into the form and runs. The form's scenario is read into when it is valid, the lab's
/// defaults otherwise. `on_error` gets the reader's message (naming the file, row and column)
/// or `None` once the files are read.
pub fn read_into_form<S: FormPage>(
    state: &PageHandle<S>,
    reader: &WorkerHandle,
    files: Vec<(&'static str, SharedFile)>,
    on_error: Callback<Option<String>>,
) {
    let lab = state.form_ref().lab();
    let Some(sent) = scenario_of(lab, &state.form_ref().params)
        .ok()
        .or_else(|| Scenario::defaults(lab))
    else {
        return;
    };
    let before = params_value(&sent);
    let request = RunRequest {
        job: Job::Read,
        scenario: Some(sent),
        files,
    };
    let state = state.clone();
    reader.run(
        request,
        Callback::from(move |outcome: Outcome| match outcome {
            Ok(Output::Scenario(text)) => match Scenario::from_json(&text) {
                Ok(read) => {
                    on_error.emit(None);
                    let after = params_value(&read);
                    let before = before.clone();
                    edit(&state, move |next: &mut S| {
                        let changed = after.as_object().into_iter().flatten();
                        for (key, value) in changed.filter(|(k, v)| before.get(k) != Some(v)) {
                            next.form().set(key, value.clone());
                        }
                        next.form().forget_texts();
                        next.rerun(true);
                    });
                }
                Err(e) => on_error.emit(Some(e.to_string())),
            },
            Ok(_) => {}
            Err(e) => on_error.emit(Some(e.to_string())),
        }),
    );
}

/// The ids listed at `path` of `params` (a list of kind ids, such as `policies`).
fn chosen_ids(params: &Value, path: &str) -> Vec<String> {
    get(params, path)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A [`crate::components::fields::CheckboxGroup`]'s options for the ids `ids` (each with
/// its label) of which `path` lists some: (id, label, chosen), in the order of `ids`.
#[must_use]
pub fn id_options(params: &Value, path: &str, ids: &[(&str, &str)]) -> Vec<(String, String, bool)> {
    let chosen = chosen_ids(params, path);
    ids.iter()
        .map(|(id, label)| {
            let on = chosen.iter().any(|c| c == id);
            ((*id).to_string(), (*label).to_string(), on)
        })
        .collect()
}

/// The callback of a checkbox group over `ids` at `path`: the list keeps the order of `ids`,
/// with the toggled id in or out, and the page runs again.
#[must_use]
pub fn id_toggle<S: FormPage>(
    state: &PageHandle<S>,
    path: &'static str,
    ids: Vec<&'static str>,
) -> Callback<(String, bool)> {
    let state = state.clone();
    Callback::from(move |(id, on): (String, bool)| {
        let ids = ids.clone();
        edit(&state, move |next: &mut S| {
            let had = chosen_ids(&next.form_ref().params, path);
            let list: Vec<&str> = ids
                .into_iter()
                .filter(|k| {
                    if *k == id {
                        on
                    } else {
                        had.iter().any(|h| h == k)
                    }
                })
                .collect();
            next.form().set(path, Value::from(list));
            next.rerun(true);
        });
    })
}

/// [`id_options`] for the kinds `K`, with their labels, in the kinds' display order.
#[must_use]
pub fn kind_options<K: Kind>(params: &Value, path: &str) -> Vec<(String, String, bool)> {
    let ids: Vec<(&str, &str)> = K::all().iter().map(|k| (k.id(), k.label())).collect();
    id_options(params, path, &ids)
}

/// [`id_toggle`] for the kinds `K`, in the kinds' display order.
#[must_use]
pub fn kind_toggle<S: FormPage, K: Kind>(
    state: &PageHandle<S>,
    path: &'static str,
) -> Callback<(String, bool)> {
    id_toggle(state, path, K::all().iter().map(|k| k.id()).collect())
}
