//! Editing a scenario by field path: the CLI's `--set path=value`, one verb for every lab.
//!
//! A path names a field the way errors name it: `stages`, `astraea.quota`,
//! `stage_slowdown[2]`, with or without the lab's name in front (`pipeline.stages`). A value is
//! JSON (`8`, `true`, `"x"`, `[1, 2]`, `{"model": "fixed"}`), or else a bare word taken as a
//! string (`1f1b`); for a field that holds a list, a comma-separated list of such values
//! (`1f1b,zb-h1`). The edited parameters are read and validated as a scenario file is, so every
//! error names the field.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use crate::presets;
use crate::scenario::{Scenario, ScenarioError, LABS};

/// One step of a field path: a field of an object or an item of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step<'a> {
    Field(&'a str),
    Item(usize),
}

impl Scenario {
    /// The scenario a lab starts from: its first preset, the one its page opens with.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] at `lab` for an unknown lab, listing the labs.
    pub fn for_lab(lab: &str) -> Result<Scenario, ScenarioError> {
        let Some(preset) = presets::default_for(lab) else {
            return Err(ScenarioError::field(
                "lab",
                format!("unknown lab `{lab}`; expected one of {}", LABS.join(", ")),
            ));
        };
        preset.scenario()
    }

    /// This scenario with each `(path, value)` set in turn, read and validated as a scenario
    /// file is (so only the final combination has to be valid).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field: a malformed path, an index past the end of
    /// a list, a field inside a number, an unknown field, a value of the wrong type or out of
    /// range.
    pub fn with_fields(&self, sets: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        let lab = self.lab();
        let mut params = self.params_value();
        for (path, value) in sets {
            set_path(&mut params, lab, path, value)?;
        }
        let scenario = Scenario::from_lab_params(lab, params)
            .unwrap_or_else(|| Err(ScenarioError::field("lab", format!("unknown lab `{lab}`"))))?;
        scenario.validate()?;
        Ok(scenario)
    }
}

/// Splits `path=value` at its first `=`.
///
/// # Errors
/// [`ScenarioError::Field`] at `--set` when there is no `=` or no path before it.
pub fn split_assignment(text: &str) -> Result<(&str, &str), ScenarioError> {
    match text.split_once('=') {
        Some((path, value)) if !path.trim().is_empty() => Ok((path.trim(), value.trim())),
        _ => Err(ScenarioError::field(
            "--set",
            format!("expected PATH=VALUE (e.g. stages=8), got `{text}`"),
        )),
    }
}

/// Sets the field at `path` of the lab's `params` object to `value`.
fn set_path(params: &mut Value, lab: &str, path: &str, value: &str) -> Result<(), ScenarioError> {
    let full = |p: &str| format!("{lab}.{p}");
    let mut steps = parse_path(path).map_err(|m| ScenarioError::field(full(path), m))?;
    // `pipeline.stages` names the same field as `stages`, unless the lab has a field so named.
    if steps.len() > 1 && steps[0] == Step::Field(lab) && params.get(lab).is_none() {
        steps.remove(0);
    }
    let mut slot = params;
    let mut walked = String::new();
    for step in &steps {
        slot = descend(slot, *step, &walked).map_err(|m| ScenarioError::field(full(path), m))?;
        match step {
            Step::Field(name) if walked.is_empty() => walked.push_str(name),
            Step::Field(name) => {
                walked.push('.');
                walked.push_str(name);
            }
            Step::Item(i) => walked.push_str(&format!("[{i}]")),
        }
    }
    *slot = parse_value(value, slot.is_array());
    Ok(())
}

/// The value one step below `slot`, made when it is missing (an unknown field is then refused
/// by name when the parameters are read); `walked` is the path so far, for errors.
fn descend<'v>(slot: &'v mut Value, step: Step<'_>, walked: &str) -> Result<&'v mut Value, String> {
    let here = if walked.is_empty() {
        "the parameters"
    } else {
        walked
    };
    match (step, slot) {
        (Step::Field(name), slot @ Value::Null) => {
            *slot = Value::Object(serde_json::Map::new());
            descend(slot, Step::Field(name), walked)
        }
        (Step::Field(name), Value::Object(map)) => {
            Ok(map.entry(name.to_string()).or_insert(Value::Null))
        }
        (Step::Item(i), Value::Array(items)) => {
            let len = items.len();
            if i == len {
                items.push(Value::Null);
            }
            items.get_mut(i).ok_or_else(|| {
                format!("index {i} is past the end of `{here}`, which has {len} items")
            })
        }
        (Step::Field(name), other) => Err(format!(
            "`{here}` is {}, which has no field `{name}`",
            kind_of(other)
        )),
        (Step::Item(i), other) => Err(format!(
            "`{here}` is {}, not a list to take item {i} of",
            kind_of(other)
        )),
    }
}

/// `a.b[2].c` as steps.
fn parse_path(path: &str) -> Result<Vec<Step<'_>>, String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if part.is_empty() || (name.is_empty() && steps.is_empty()) {
            return Err("expected a field path like `stages` or `astraea.quota`".into());
        }
        if !name.is_empty() {
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!("`{name}` is not a field name"));
            }
            steps.push(Step::Field(name));
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .filter(|_| rest.starts_with('['))
                .ok_or_else(|| format!("expected `[index]` in `{part}`"))?;
            let index = rest[1..close]
                .parse::<usize>()
                .map_err(|_| format!("`{}` is not a list index", &rest[1..close]))?;
            steps.push(Step::Item(index));
            rest = &rest[close + 1..];
        }
    }
    Ok(steps)
}

/// `text` as JSON, else as a bare string; for a list field, a comma-separated list of those.
fn parse_value(text: &str, is_list: bool) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        if !is_list || v.is_array() {
            return v;
        }
    }
    if is_list {
        return Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| serde_json::from_str(s).unwrap_or_else(|_| Value::from(s)))
                .collect(),
        );
    }
    Value::from(text)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::pipeline::PipelineParams;

    fn pipeline() -> Scenario {
        Scenario::Pipeline(PipelineParams::default())
    }

    fn err(s: &Scenario, sets: &[(&str, &str)]) -> String {
        s.with_fields(sets).unwrap_err().to_string()
    }

    #[test]
    fn sets_numbers_words_and_lists() {
        let s = pipeline()
            .with_fields(&[("stages", "8"), ("pipeline.micro_batches", "16")])
            .unwrap();
        let Scenario::Pipeline(p) = &s else { panic!() };
        assert_eq!((p.stages, p.micro_batches), (8, 16));
        let s = pipeline()
            .with_fields(&[("schedules", "1f1b,zb-h1")])
            .unwrap();
        let t = pipeline()
            .with_fields(&[("schedules", r#"["1f1b","zb-h1"]"#)])
            .unwrap();
        assert_eq!(s, t);
        assert!(s.to_json().contains(r#""schedules":["1f1b","zb-h1"]"#));
    }

    #[test]
    fn only_the_final_combination_is_validated() {
        let a = pipeline()
            .with_fields(&[("stages", "8"), ("stages", "4")])
            .unwrap();
        assert_eq!(a, pipeline().with_fields(&[("stages", "4")]).unwrap());
    }

    #[test]
    fn errors_name_the_field() {
        let s = pipeline();
        assert!(err(&s, &[("stages", "0")]).starts_with("pipeline.stages: must be between"));
        assert!(err(&s, &[("stages", "many")]).starts_with("pipeline.stages: invalid type"));
        let unknown = err(&s, &[("stagez", "4")]);
        assert!(unknown.contains("stagez"), "{unknown}");
        assert!(err(&s, &[("stages.x", "1")]).contains("`stages` is a number"));
        assert!(err(&s, &[("schedules[9]", "1f1b")]).contains("past the end of `schedules`"));
        assert!(err(&s, &[("", "1")]).starts_with("pipeline.: expected a field path"));
        assert!(err(&s, &[("a[x]", "1")]).contains("not a list index"));
        assert!(split_assignment("stages").is_err());
        assert_eq!(split_assignment("a.b = 1 ").unwrap(), ("a.b", "1"));
    }

    #[test]
    fn every_lab_starts_from_its_first_preset() {
        for lab in LABS {
            let s = Scenario::for_lab(lab).unwrap();
            assert_eq!(s.lab(), lab);
            assert_eq!(s.with_fields(&[]).unwrap(), s);
        }
        assert!(Scenario::for_lab("nope")
            .unwrap_err()
            .to_string()
            .contains("expected one of pipeline"));
    }
}
