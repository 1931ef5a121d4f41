//! The sharing lab page: FGD's fragmentation-aware placement of GPU-sharing pods against its
//! artifact's five baselines. The picture is the cluster when the pods stop arriving, GPU by GPU
//! (`cluster.rs`: whole-GPU pods, shares, slivers, room, free GPUs), for the policy chosen; then
//! the allocation curve: the share of the cluster's GPUs allocated as pod requests arrive, one
//! line per policy. The form edits the policies, the
//! seeds and the inflation target by path (the core validates, so messages name the field as
//! the CLI would); the real openb node and pod lists can be opened from files, which fill the
//! scenario's node groups and pod classes (the lists are grouped on the page: a few milliseconds
//! for the trace's 8,152 rows; the run itself goes to the worker, with progress and Cancel).

mod cluster;

use std::rc::Rc;

use bubblelab_core::labs::sharing::{ClusterPicture, Experiment, SharingParams, SharingPolicy};
use bubblelab_core::{Report, Scenario};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::fields::CheckboxGroup;
use crate::components::lab_page::LabPage;
use crate::components::params_form::{
    edit, get, opening_params, preset_callback, use_form_page, Form, FormPage,
};
use crate::components::params_form::{kind_options, kind_toggle};
use crate::components::params_form::{more_number_fields, number_fields, read_into_form};
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::client::use_worker;
use crate::worker::Output;

/// Properties of [`SharingLab`].
#[derive(Properties, PartialEq)]
pub struct SharingLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

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

/// Largest node or pod list opened, bytes.
const MAX_LIST_BYTES: u64 = 64 << 20;

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
    /// Each policy's cluster at the end of the first seed.
    pictures: Shared<Vec<ClusterPicture>>,
    /// Index of the picture shown.
    selected: usize,
    scenario_json: Option<String>,
    /// Why the last opened list was refused.
    list_error: Option<String>,
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Sharing(p) => Some(State::new(&p, link_error)),
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

    fn show(&mut self, output: Output, scenario: &Scenario) {
        if let Output::Sharing { report, pictures } = output {
            // Keep the policy shown when it is still in the run; FGD otherwise.
            let shown = self.pictures.0.get(self.selected).map(|p| p.policy);
            self.selected = shown
                .and_then(|k| pictures.iter().position(|p| p.policy == k))
                .or_else(|| pictures.iter().position(|p| p.policy == SharingPolicy::Fgd))
                .unwrap_or(0);
            self.report = Shared(Rc::new(report));
            self.pictures = Shared(Rc::new(pictures));
            self.scenario_json = Some(scenario.to_json_pretty());
        }
    }
}

impl State {
    fn new(p: &SharingParams, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new("sharing", &Scenario::Sharing(p.clone()), link_error),
            report: Shared(Rc::new(Report::default())),
            pictures: Shared(Rc::new(Vec::new())),
            selected: 0,
            scenario_json: None,
            list_error: None,
        };
        s.rerun(false);
        s
    }
}

/// The input slot of an opened openb list: a pod list's header has `num_gpu`, a node list's
/// does not.
fn list_slot(bytes: &[u8]) -> &'static str {
    let head = &bytes[..bytes.len().min(4096)];
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    if String::from_utf8_lossy(first)
        .to_ascii_lowercase()
        .contains("num_gpu")
    {
        "pods"
    } else {
        "nodes"
    }
}

/// The sharing lab.
#[function_component(SharingLab)]
pub fn sharing_lab(props: &SharingLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("sharing", props.payload.clone());
    // Opened lists are read in a worker of their own, by the lab's readers.
    let reader = use_worker();
    let form = &state.form;
    let timed = get(&form.params, "experiment").and_then(Value::as_str) == Some("timed");
    let fields: &[&str] = if timed { &TIMED_FIELDS } else { &FIELDS };
    let other_error = form.other_error(fields.iter().copied().chain(["policies"]));
    let on_experiment = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form.set("experiment", Value::from(value));
                next.rerun(true);
            });
        })
    };
    let options = kind_options::<SharingPolicy>(&form.params, "policies");
    let on_toggle = kind_toggle::<State, SharingPolicy>(&state, "policies");
    let on_lists = {
        let state = state.clone();
        let reader = reader.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let on_error = {
                let state = state.clone();
                Callback::from(move |m: Option<String>| {
                    edit(&state, move |next: &mut State| next.list_error = m);
                })
            };
            let files = files
                .into_iter()
                .map(|f| (list_slot(&f.1), Rc::new(f)))
                .collect();
            read_into_form(&state, &reader, files, on_error);
        })
    };
    let on_list_error = {
        let state = state.clone();
        Callback::from(move |m: String| {
            edit(&state, move |next: &mut State| next.list_error = Some(m));
        })
    };
    let on_picture = {
        let state = state.clone();
        Callback::from(move |i: usize| edit(&state, move |next: &mut State| next.selected = i))
    };
    html! {
        <LabPage lab="sharing" title="GPU sharing: the slivers nobody can use"
            link_error={form.link_error.clone()} shown={state.scenario_json.clone().map(AttrValue::from)} on_pick={preset_callback(&state)}
            worker={worker.clone()} worker_error={form.worker_error.clone()}
            report={state.report.clone()}
            lede={html! {
                { "Many inference and small training pods ask for a share of one GPU (810, 470, 320 milli-GPU: a guaranteed share \
                   of its memory). Packed carelessly they leave slivers — a GPU with 190 milli free, a node with no wholly free \
                   GPU — that no arriving pod can use, so pods fail while GPUs sit idle. FGD (Weng et al., ATC'23) places each pod \
                   where the cluster's fragmentation grows least, measured against the mix of pods that usually arrives. The chart \
                   shows, as pods arrive until their requests reach 130 % of the cluster, how much of it each policy manages to \
                   allocate; this is its artifact's experiment, with its five baselines. Over time, the other side shows: pods \
                   packed on one GPU slow each other, and a Gandiva-style packer moves the slowest away." }
            }}
            controls={html! { <>
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
                    { number_fields(&state, fields) }
                    { more_number_fields(&state, &[fields, &["experiment"]].concat()) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <h3>{ "The real trace" }</h3>
                    <p class="muted">{ "Open Alibaba's openb node list and pod list (cluster-trace-gpu-v2023: \
                        openb_node_list_gpu_node.csv, openb_pod_list_default.csv); they replace the cluster and the pods. \
                        Times are not read: in FGD's experiment pods never leave." }</p>
                    <FileUpload id="upload-openb" label="Open openb node and/or pod lists (.csv)" multiple=true accept=".csv,text/csv"
                        max_bytes={MAX_LIST_BYTES} max_files={2} on_load={on_lists} on_error={on_list_error} />
                    if let Some(message) = &state.list_error {
                        <div class="banner error" id="list-error" role="alert">{ message.clone() }</div>
                    }
                    <p class="muted" id="not-modelled">{ "FGD's experiment has no time and no interference. The timed experiment adds \
                        both under a stated model: drawn arrivals and durations, a pod's contention share taken to be its GPU share \
                        (openb guarantees memory, not compute), co-runners slowing a pod to 1/(1 + Σ their shares)." }</p>
            </> }}
            picture={html! {
                        <cluster::SharingCluster pictures={state.pictures.clone()} selected={state.selected} on_select={on_picture} />
            }}
            chart_titles={vec![
                        ("sharing.allocation".to_string(), "GPUs allocated as pod requests arrive (mean over seeds): the higher, the fewer GPUs lost to fragmentation".to_string()),
                        ("sharing.unallocated".to_string(), "GPUs left unallocated as the cluster fills (from 80 % arrived; mean over seeds): where the policies part".to_string()),
                        ("sharing.timed_allocated".to_string(), "GPU shares in use over time: packing fits more pods on the same GPUs".to_string()),
            ]} />
    }
}
