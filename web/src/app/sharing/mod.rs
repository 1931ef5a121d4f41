//! The sharing lab's page parts: FGD's fragmentation-aware placement of GPU-sharing pods against
//! its artifact's five baselines, on the generic page. The picture is the cluster when the pods
//! stop arriving, GPU by GPU (`cluster.rs`: whole-GPU pods, shares, slivers, room, free GPUs),
//! for the policy chosen; then the allocation curve: the share of the cluster's GPUs allocated
//! as pod requests arrive, one line per policy. The lab's own controls pick the experiment and
//! show its fields; the real openb node and pod lists are the lab's input slots, read into the
//! scenario's node groups and pod classes.

mod cluster;

use std::rc::Rc;

use bubblelab_core::labs::sharing::{Experiment, SharingPolicy};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::CheckboxGroup;
use crate::components::params_form::{
    edit, get, kind_options, kind_toggle, number_fields, Form, FormPage, PageHandle,
};
use crate::components::timeline::Shared;
use crate::worker::Output;

/// What the sharing page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "Many inference and small training pods ask for a share of one GPU (810, 470, 320 milli-GPU: a guaranteed share \
                   of its memory). Packed carelessly they leave slivers — a GPU with 190 milli free, a node with no wholly free \
                   GPU — that no arriving pod can use, so pods fail while GPUs sit idle. FGD (Weng et al., ATC'23) places each pod \
                   where the cluster's fragmentation grows least, measured against the mix of pods that usually arrives. The chart \
                   shows, as pods arrive until their requests reach 130 % of the cluster, how much of it each policy manages to \
                   allocate; this is its artifact's experiment, with its five baselines. Over time, the other side shows: pods \
                   packed on one GPU slow each other, and a Gandiva-style packer moves the slowest away.",
    controls: Some(controls),
    drawn: &[
        "experiment",
        "policies",
        "nodes",
        "pods",
        "inflation_percent",
        "seeds",
        "first_seed",
        "timed.pods",
        "timed.load",
        "timed.mean_duration_s",
        "timed.unpack_below",
        "timed.check_after_s",
        "timed.migration_s",
    ],
    charts: &[
        ("sharing.allocation", "GPUs allocated as pod requests arrive (mean over seeds): the higher, the fewer GPUs lost to fragmentation"),
        ("sharing.unallocated", "GPUs left unallocated as the cluster fills (from 80 % arrived; mean over seeds): where the policies part"),
        ("sharing.timed_allocated", "GPU shares in use over time: packing fits more pods on the same GPUs"),
    ],
    notes: Some(not_modelled),
    picture: Some(|state| match state.output() {
        Some(output) => html! { <Pictures output={output.clone()} /> },
        None => Html::default(),
    }),
    ..PageParts::PLAIN
};

/// Number fields of the timed experiment: paths inside `params` (labels from the field table).
const TIMED_FIELDS: [&str; 6] = [
    "timed.pods",
    "timed.load",
    "timed.mean_duration_s",
    "timed.unpack_below",
    "timed.check_after_s",
    "timed.migration_s",
];

/// Number fields of the placement experiment: paths inside `params` (labels from the field table).
const FIELDS: [&str; 3] = ["inflation_percent", "seeds", "first_seed"];

/// The experiment, the policies by name, the experiment's own fields, and the cluster and pods
/// the scenario holds (the openb lists below replace them).
fn controls(state: &PageHandle<State>) -> Html {
    let form = state.form_ref();
    let timed = get(&form.params, "experiment").and_then(Value::as_str) == Some("timed");
    let on_experiment = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form().set("experiment", Value::from(value));
                next.rerun(true);
            });
        })
    };
    let options = kind_options::<SharingPolicy>(&form.params, "policies");
    let on_toggle = kind_toggle::<State, SharingPolicy>(state, "policies");
    html! { <>
        <div class="field">
            <label for="field-experiment">{ "Experiment" }</label>
            <select id="field-experiment" onchange={on_experiment}>
                { for Experiment::ALL.iter().map(|e| html! {
                    <option value={e.id()} selected={(*e == Experiment::Timed) == timed}>{ e.label() }</option>
                }) }
            </select>
        </div>
        <CheckboxGroup path="sharing.policies" label="Placement policies" {options}
            error={form.field_error("policies")} {on_toggle} />
        { number_fields(state, if timed { &TIMED_FIELDS } else { &FIELDS }) }
        <details class="more-fields" id="other-experiment">
            <summary>{ if timed { "The placement experiment's fields (not used by this one)" } else { "The timed experiment's fields (not used by this one)" } }</summary>
            { number_fields(state, if timed { &FIELDS } else { &TIMED_FIELDS }) }
        </details>
        <p class="muted" id="field-nodes">{ list_summary(form, "nodes", "node group", "node groups") }</p>
        <p class="muted" id="field-pods">{ list_summary(form, "pods", "pod class", "pod classes") }</p>
    </> }
}

/// How many entries the scenario's list at `path` holds.
fn list_summary(form: &Form, path: &str, one: &str, many: &str) -> String {
    let n = get(&form.params, path)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    format!(
        "The scenario holds {n} {}; the openb list below replaces them.",
        if n == 1 { one } else { many }
    )
}

/// What the timed experiment adds to FGD's, and under which model.
fn not_modelled(_: &Form) -> Html {
    html! {
        <p class="muted" id="not-modelled">{ "FGD's experiment has no time and no interference. The timed experiment adds \
                        both under a stated model: drawn arrivals and durations, a pod's contention share taken to be its GPU share \
                        (openb guarantees memory, not compute), co-runners slowing a pod to 1/(1 + Σ their shares)." }</p>
    }
}

/// Properties of [`Pictures`].
#[derive(Properties, PartialEq)]
struct PicturesProps {
    /// The lab's last output: each policy's cluster at the end of the first seed.
    output: Shared<Output>,
}

/// The cluster picture of the policy chosen: it stays chosen while the runs have it, FGD
/// otherwise.
#[function_component(Pictures)]
fn pictures(props: &PicturesProps) -> Html {
    let chosen = use_state(|| SharingPolicy::Fgd);
    let pictures = use_memo(props.output.clone(), |output| match &*output.0 {
        Output::Sharing { pictures, .. } => Shared(Rc::new(pictures.clone())),
        _ => Shared(Rc::new(Vec::new())),
    });
    let list = &pictures.0;
    let selected = list
        .iter()
        .position(|p| p.policy == *chosen)
        .or_else(|| list.iter().position(|p| p.policy == SharingPolicy::Fgd))
        .unwrap_or(0);
    let on_select = {
        let chosen = chosen.clone();
        let pictures = pictures.clone();
        Callback::from(move |i: usize| {
            if let Some(p) = pictures.0.get(i) {
                chosen.set(p.policy);
            }
        })
    };
    html! {
        <cluster::SharingCluster pictures={(*pictures).clone()} {selected} {on_select} />
    }
}
