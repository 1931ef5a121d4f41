//! Editing a scenario's `params` as JSON by dotted path, for the lab pages whose forms have
//! many nested fields: the page changes one value, then the core parses and validates the
//! whole scenario, so every message names the field exactly as the CLI would.

use bubblelab_core::{share, Scenario, ScenarioError};
use serde_json::Value;
use yew::{Callback, UseStateHandle};

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
}

impl Form {
    /// The form of lab `lab` showing `scenario`.
    #[must_use]
    pub fn new(lab: &'static str, scenario: &Scenario, link_error: Option<String>) -> Form {
        Form {
            lab,
            params: params_value(scenario),
            texts: Vec::new(),
            error: None,
            link_error,
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

    /// Records the outcome of running `scenario`; on success clears the error and, when asked,
    /// puts the scenario's share link in the address bar.
    pub fn finish(&mut self, scenario: &Scenario, outcome: Result<(), ScenarioError>, link: bool) {
        match outcome {
            Ok(()) => {
                self.error = None;
                if link {
                    crate::browser::replace_hash(&share::fragment(scenario));
                }
            }
            Err(e) => self.error = Some(e),
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
    pub fn other_error<'a>(
        &self,
        shown: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Option<String> {
        self.error
            .as_ref()
            .filter(|e| {
                !e.path().is_some_and(|p| {
                    shown
                        .clone()
                        .into_iter()
                        .any(|s| names_field(p, &self.error_path(s)))
                })
            })
            .map(ToString::to_string)
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

/// A lab page's state that holds a [`Form`] and can run its model again.
pub trait FormPage: Clone + 'static {
    /// The lab's id (`tuning`), as in share links.
    const LAB: &'static str;
    /// The page's form.
    fn form(&mut self) -> &mut Form;
    /// Runs the page's model on the form's scenario; `link` puts the share link in the
    /// address bar on success.
    fn rerun(&mut self, link: bool);
    /// The page showing `scenario`, already run; `None` when it is another lab's.
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<Self>;
    /// The page without a usable link: the lab's default scenario, already run.
    fn opening(link_error: Option<String>) -> Self;
}

/// The page a share-link payload opens: its scenario, or the default with the link's error.
#[must_use]
pub fn from_payload<S: FormPage>(payload: Option<&str>) -> S {
    match decode_payload(S::LAB, payload) {
        (Some(scenario), _) => S::open(scenario, None).unwrap_or_else(|| S::opening(None)),
        (None, link_error) => S::opening(link_error),
    }
}

/// The preset picker's callback: the page on the preset (run once), its share link in the
/// address bar.
#[must_use]
pub fn preset_callback<S: FormPage>(
    state: &UseStateHandle<S>,
) -> Callback<(&'static str, Scenario)> {
    let state = state.clone();
    Callback::from(move |(_, scenario): (&'static str, Scenario)| {
        let fragment = share::fragment(&scenario);
        if let Some(mut next) = S::open(scenario, None) {
            if next.form().error.is_none() {
                crate::browser::replace_hash(&fragment);
            }
            state.set(next);
        }
    })
}

/// The callback of number field `path`: keep the text, and run again when it is a number.
#[must_use]
pub fn number_callback<S: FormPage>(state: &UseStateHandle<S>, path: &str) -> Callback<String> {
    let state = state.clone();
    let path = path.to_string();
    Callback::from(move |text: String| {
        let mut next = (*state).clone();
        if next.form().edit_number(&path, text) {
            next.rerun(true);
        }
        state.set(next);
    })
}
