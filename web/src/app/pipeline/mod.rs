//! The pipeline lab's page parts: pick schedules and the pipeline's shape on the generic page,
//! see the schedules' timelines stacked, the bubble table and the memory chart. The lab's own
//! controls name the schedules (interleaved 1F1B with its chunks) and give times in ms and
//! memory in GiB; a real PipeMorph run's stage logs are the lab's input slot.

use bubblelab_core::labs::pipeline::ScheduleKind;
use bubblelab_core::units::GIB;
use bubblelab_core::ScenarioError;
use serde_json::Value;
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::{CheckboxGroup, NumberField};
use crate::components::params_form::{edit, get, id_options, id_toggle, FormPage, PageHandle};

/// What the pipeline page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "p stages each hold a slice of the model; m micro-batches flow forward and their gradients flow back. \
                   A stage is idle — a bubble — while it waits for a neighbour. Compare how GPipe, 1F1B, interleaved 1F1B, \
                   the zero-bubble schedules (ZB-H1, ZB-H2, ZB-V) and DeepSeek's DualPipe and DualPipeV order the work, \
                   what it costs in memory, and where the bubbles go.",
    controls: Some(controls),
    drawn: &[
        "schedules",
        "stages",
        "micro_batches",
        "virtual_stages",
        "forward_ns",
        "backward_input_ns",
        "backward_weight_ns",
        "p2p_ns",
        "activation_bytes",
        "w_memory_fraction",
    ],
    charts: &[
        ("peak_activations", "Peak activation memory per stage (GiB)"),
        ("bubble_by_stage", "Bubble ratio per stage"),
        ("iteration_ms", "Iteration time (ms)"),
        ("bubble_by_iteration", "Bubble ratio per stage and iteration"),
    ],
    ..PageParts::PLAIN
};

/// The form's number fields: (path, label, help, slider maximum, the scenario's units per form
/// unit). Times are typed in ms, memory in GiB.
const FIELDS: [(&str, &str, &str, Option<f64>, f64); 9] = [
    (
        "stages",
        "Stages p",
        "Pipeline stages (devices)",
        Some(16.0),
        1.0,
    ),
    (
        "micro_batches",
        "Micro-batches m",
        "Micro-batches per iteration",
        Some(64.0),
        1.0,
    ),
    (
        "virtual_stages",
        "Chunks per device v (interleaved)",
        "Model chunks per device for interleaved 1F1B",
        None,
        1.0,
    ),
    (
        "forward_ns",
        "Forward F (ms)",
        "Forward of one micro-batch on one stage",
        None,
        1e6,
    ),
    (
        "backward_input_ns",
        "Backward B, input grad (ms)",
        "Input-gradient backward of one micro-batch",
        None,
        1e6,
    ),
    (
        "backward_weight_ns",
        "Backward W, weight grad (ms)",
        "Weight-gradient backward; schedules that don't split run B+W together",
        None,
        1e6,
    ),
    (
        "p2p_ns",
        "P2P per transfer (ms)",
        "Time to send one activation or gradient to the next stage",
        None,
        1e6,
    ),
    (
        "activation_bytes",
        "Activations per micro-batch (GiB)",
        "Activation memory one micro-batch holds on one stage",
        None,
        GIB as f64,
    ),
    (
        "w_memory_fraction",
        "Share kept for W",
        "Share of activations the W pass still needs after B (zero-bubble)",
        None,
        1.0,
    ),
];

/// The schedules by name, the pipeline's shape and times, and a button for every schedule.
fn controls(state: &PageHandle<State>) -> Html {
    let form = state.form_ref();
    let v = get(&form.params, "virtual_stages")
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(2);
    let labels: Vec<(&str, String)> = ScheduleKind::ALL
        .iter()
        .map(|k| (k.id(), k.label_with(v)))
        .collect();
    let labelled: Vec<(&str, &str)> = labels.iter().map(|(id, l)| (*id, l.as_str())).collect();
    let options = id_options(&form.params, "schedules", &labelled);
    let on_toggle = id_toggle(
        state,
        "schedules",
        ScheduleKind::ALL.iter().map(|k| k.id()).collect(),
    );
    let on_compare_all = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            edit(&state, |next: &mut State| {
                let all: Vec<&str> = ScheduleKind::ALL.iter().map(|k| k.id()).collect();
                next.form().set("schedules", Value::from(all));
                next.rerun(true);
            });
        })
    };
    html! { <>
        <CheckboxGroup path="pipeline.schedules" label="Schedules" {options}
            error={form.field_error("schedules")} {on_toggle} />
        { for FIELDS.iter().map(|(path, label, help, max, scale)| {
            let value = form.typed(path).unwrap_or_else(|| shown(&form.params, path, *scale));
            html! {
                <NumberField path={format!("pipeline.{path}")} label={*label} help={*help} {value}
                    min={Some(if *scale == 1.0 && *path != "w_memory_fraction" { 1.0 } else { 0.0 })} max={*max}
                    slider={max.is_some()} step={if *scale == 1.0 && *path != "w_memory_fraction" { "1" } else { "any" }}
                    error={form.field_error(path)} on_change={on_number(state, path, *scale)} />
            }
        }) }
        <div class="buttons">
            <button type="button" id="compare-all" onclick={on_compare_all}>{ "Compare all schedules" }</button>
        </div>
    </> }
}

/// The value at `path` in the form's unit.
fn shown(params: &Value, path: &str, scale: f64) -> String {
    get(params, path)
        .and_then(Value::as_f64)
        .map(|v| (v / scale).to_string())
        .unwrap_or_default()
}

/// A number box's callback: the text is kept; a number goes to the scenario in its unit (whole
/// nanoseconds or bytes); a new stage count drops the per-stage lists made for the old one.
fn on_number(state: &PageHandle<State>, path: &'static str, scale: f64) -> Callback<String> {
    let state = state.clone();
    Callback::from(move |text: String| {
        edit(&state, move |next: &mut State| {
            next.form().set_text(path, text.clone());
            let value = match text.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => v,
                _ => {
                    next.form().error = Some(ScenarioError::field(
                        format!("pipeline.{path}"),
                        format!("expected a number, got `{text}`"),
                    ));
                    return;
                }
            };
            let value = if scale == 1.0 && path == "w_memory_fraction" {
                Value::from(value)
            } else if value >= 0.0 && (value * scale).round() < 1.8e19 {
                Value::from((value * scale).round() as u64)
            } else {
                next.form().error = Some(ScenarioError::field(
                    format!("pipeline.{path}"),
                    format!("must be a number from 0, got {value}"),
                ));
                return;
            };
            next.form().set(path, value);
            if path == "stages" {
                drop_stage_lists(next);
            }
            next.rerun(true);
        });
    })
}

/// Per-stage lists only fit the stage count they were made for.
fn drop_stage_lists(next: &mut State) {
    let stages = get(&next.form_ref().params, "stages")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    for list in ["stage_times", "stage_slowdown"] {
        let len = get(&next.form_ref().params, list)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if len != 0 && len as u64 != stages {
            next.form().set(list, Value::from(Vec::<Value>::new()));
        }
    }
}
