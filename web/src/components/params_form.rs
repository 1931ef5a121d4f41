//! Editing a scenario's `params` as JSON by dotted path, for the lab pages whose forms have
//! many nested fields: the page changes one value, then the core parses and validates the
//! whole scenario, so every message names the field exactly as the CLI would.

use bubblelab_core::{Scenario, ScenarioError};
use serde_json::Value;

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

/// Sets the value at a dotted path; parents must exist (the scenario's JSON has every field).
pub fn set(v: &mut Value, path: &str, new: Value) {
    let mut cur = v;
    let mut parts = path.split('.').peekable();
    while let Some(k) = parts.next() {
        if parts.peek().is_none() {
            if let Some(obj) = cur.as_object_mut() {
                obj.insert(k.to_string(), new);
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
