//! The fairness lab page: a multi-tenant GPU cluster under every policy on one trace, the
//! comparison table, fairness over time, JCT distributions and GPU-by-tenant timelines. The
//! trace is the scenario's seeded synthetic one (shareable as a link) or a trace file the user
//! opens (any supported format; not carried in links).
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

mod cluster;
mod colours;
mod shares;
mod survey;

use std::rc::Rc;

use bubblelab_core::labs::fairness::policies::PolicyKind;
use bubblelab_core::labs::fairness::FairnessParams;
use bubblelab_core::{Report, Scenario};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use self::cluster::ClusterSection;
use self::survey::SurveyMap;
use crate::components::fields::CheckboxGroup;
use crate::components::lab_page::LabPage;
use crate::components::params_form::Upload;
use crate::components::params_form::{
    edit, get, opening_params, preset_callback, use_form_page, Form, FormPage,
};
use crate::components::params_form::{kind_options, kind_toggle};
use crate::components::params_form::{more_number_fields, number_fields, read_into_form};
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::client::use_worker;
use crate::worker::{ClusterRun, Output};

/// Properties of [`FairnessLab`].
#[derive(Properties, PartialEq)]
pub struct FairnessLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 17] = [
    "cluster.nodes",
    "cluster.gpus_per_node",
    "lease_s",
    "gavel.round_s",
    "preempt_cost_s",
    "resume_cost_s",
    "synthetic.jobs",
    "synthetic.tenants",
    "synthetic.mean_interarrival_s",
    "synthetic.seed",
    "deadlines.slo_share",
    "deadlines.factor_min",
    "deadlines.factor_max",
    "chronus.lease_s",
    "colocation.servers_peak",
    "colocation.servers_trough",
    "colocation.slo_s",
];

/// Largest trace file the page reads, bytes.
const MAX_TRACE_BYTES: u64 = 64 << 20;

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
    /// Every policy's run (for the cluster view and the share chart).
    runs: Shared<Vec<ClusterRun>>,
    /// Tenant names of the simulated trace.
    tenants: Shared<Vec<String>>,
    /// (nodes, GPUs per node) of the simulated cluster.
    cluster: (u32, u32),
    /// Index into `runs` shown in the cluster view.
    selected: usize,
    /// The policy to show once the run asked for finishes (a survey-map pick).
    want_policy: Option<PolicyKind>,
}

impl State {
    fn new(p: &FairnessParams, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new("fairness", &Scenario::Fairness(p.clone()), link_error),
            report: Shared(Rc::new(Report::default())),
            runs: Shared(Rc::new(Vec::new())),
            tenants: Shared(Rc::new(Vec::new())),
            cluster: (p.cluster.nodes, p.cluster.gpus_per_node),
            selected: 0,
            want_policy: None,
        };
        s.rerun(false);
        s
    }
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Fairness(p) => Some(State::new(&p, link_error)),
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

    /// One piece per policy, so the policies run in several workers at once (as the CLI runs
    /// them on several threads), longest first ([`PolicyKind::longest_first`]); each worker
    /// holds the next piece in its queue while it runs one.
    fn pieces(&self, scenario: &Scenario) -> Vec<Vec<usize>> {
        let Scenario::Fairness(p) = scenario else {
            return Vec::new();
        };
        PolicyKind::longest_first(&p.policies)
            .into_iter()
            .map(|i| vec![i])
            .collect()
    }

    fn show(&mut self, output: Output, scenario: &Scenario) {
        let Output::Fairness {
            report,
            runs,
            tenants,
        } = output
        else {
            return;
        };
        let shown = self
            .want_policy
            .take()
            .or_else(|| self.runs.0.get(self.selected).map(|r| r.kind));
        // The policy shown before, else the system the run is about: ASTRAEA, else slot
        // admission, else capacity loaning.
        self.selected = [
            shown,
            Some(PolicyKind::Astraea),
            Some(PolicyKind::SlotAdmission),
            Some(PolicyKind::LoanReclaim),
        ]
        .into_iter()
        .flatten()
        .find_map(|k| runs.iter().position(|r| r.kind == k))
        .unwrap_or(0);
        self.report = Shared(Rc::new(report));
        self.runs = Shared(Rc::new(runs));
        self.tenants = Shared(Rc::new(tenants));
        if let Scenario::Fairness(p) = scenario {
            self.cluster = (p.cluster.nodes, p.cluster.gpus_per_node);
        }
    }
}

/// The fairness lab.
#[function_component(FairnessLab)]
pub fn fairness_lab(props: &FairnessLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("fairness", props.payload.clone());
    let upload_error = use_state(|| None::<String>);
    // Shares files are read by a second worker, so a long run goes on meanwhile.
    let parser = use_worker();
    let options = kind_options::<PolicyKind>(&state.form.params, "policies");
    let on_toggle = kind_toggle::<State, PolicyKind>(&state, "policies");
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
    // The trace is parsed in the worker, with every run on it.
    let on_trace = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            upload_error.set(None);
            edit(&state, move |next: &mut State| {
                let source = files.first().map(|f| f.0.clone()).unwrap_or_default();
                next.form.set_upload(Some(Upload {
                    slot: "trace",
                    files: files.into_iter().map(Rc::new).collect(),
                    source,
                }));
                next.rerun(false);
            });
        })
    };
    // Tenant shares (the ASTRAEA artifact's `name,share` CSV) go into the scenario inline, so a
    // share link carries them.
    let on_shares = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        let parser = parser.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let upload_error = upload_error.clone();
            let on_error = Callback::from(move |m: Option<String>| upload_error.set(m));
            let files = files.into_iter().map(|f| ("shares", Rc::new(f))).collect();
            read_into_form(&state, &parser, files, on_error);
        })
    };
    let on_synthetic = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            edit(&state, move |next: &mut State| {
                next.form.set_upload(None);
                next.rerun(true);
            });
        })
    };
    let on_cluster_select = {
        let state = state.clone();
        Callback::from(move |i: usize| {
            edit(&state, move |next: &mut State| {
                next.selected = i;
            });
        })
    };
    let on_survey_pick = {
        let state = state.clone();
        Callback::from(move |kind: PolicyKind| {
            edit(&state, move |next: &mut State| {
                if let Some(i) = next.runs.0.iter().position(|r| r.kind == kind) {
                    next.selected = i;
                } else {
                    let mut list: Vec<String> = PolicyKind::ALL
                        .iter()
                        .filter(|k| **k == kind || next.runs.0.iter().any(|r| r.kind == **k))
                        .map(|k| k.id().to_string())
                        .collect();
                    list.dedup();
                    next.form.set("policies", Value::from(list));
                    next.want_policy = Some(kind);
                    next.rerun(true);
                }
            });
        })
    };
    let running: Vec<PolicyKind> = state.runs.0.iter().map(|r| r.kind).collect();
    let on_upload_error = {
        let upload_error = upload_error.clone();
        Callback::from(move |m: String| upload_error.set(Some(m)))
    };
    let form = &state.form;
    let other_error = form.other_error(FIELDS.iter().copied().chain(["policies"]));
    let select_value = |path: &str| {
        get(&form.params, path)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let share_count = get(&form.params, "tenant_weights")
        .and_then(|v| v.get("shares"))
        .and_then(Value::as_array)
        .map(Vec::len);
    html! {
        <LabPage lab="fairness" title="Fairness: whose GPUs are they, over the long term?"
            link_error={form.link_error.clone()} shown={state.form.shown_json()} on_pick={preset_callback(&state)}
            worker={worker.clone()} unit="policies" worker_error={form.worker_error.clone()}
            report={state.report.clone()}
            inputs={state.form.shown_inputs()}
            lede={html! {
                { "Tenants share a GPU cluster; jobs need all their GPUs at once. FIFO, SJF and SRTF chase efficiency; \
                   Tiresias, largest finish-time-fairness ρ first, fair share, Gandiva-fair and a heterogeneity-weighted \
                   fair share each define fairness differently, and Gavel (on GPUs of several types, \
                   open its preset from the map) shares each type's time by an LP; ASTRAEA (run as \
                   its artifact runs it) counts GPU-time over the last 24 hours, grants the free GPUs to the most \
                   under-served tenant first, starts each tenant's most under-served job within that grant, and hands \
                   out 15-minute leases instead of preempting all the time. 2DAS and Themis also run inside ASTRAEA's \
                   machinery, and a YARN-like static-quota FIFO shows what quotas without sharing cost. Slot \
                   admission (after Chronus) admits jobs with deadlines only when a plan of lease slots meets them (give the jobs deadlines \
                   below, or open its preset from the map). An inference service may own servers beside the \
                   training: capacity loaning (after Lyra) trains on its idle servers and takes them back at its \
                   daily peak, against separate clusters (give it servers below, or open its preset from the map)." }
            }}
            controls={html! { <>
                    <CheckboxGroup path="fairness.policies" label="Policies" {options}
                        error={form.field_error("policies")} {on_toggle} />
                    <div class="field">
                        <label for="field-placement">{ "Placement" }</label>
                        <select id="field-placement" onchange={on_select("cluster.placement")}>
                            { for ["consolidated", "topology-aware", "first-fit", "consolidate-or-spread"].iter().map(|p| html! { <option value={*p} selected={select_value("cluster.placement") == *p}>{ *p }</option> }) }
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-tenant_weights">{ "Tenant weights" }</label>
                        <select id="field-tenant_weights" onchange={on_select("tenant_weights")}>
                            { for ["equal", "demand"].iter().map(|p| html! { <option value={*p} selected={select_value("tenant_weights") == *p}>{ *p }</option> }) }
                            if let Some(n) = share_count {
                                <option value="shares" selected=true disabled=true>{ format!("shares file ({n} tenants)") }</option>
                            }
                        </select>
                    </div>
                    <FileUpload id="upload-fairness-shares" label="Open tenant shares (the ASTRAEA artifact's name,share CSV)" accept=".csv,.txt"
                        max_bytes={MAX_TRACE_BYTES} max_files={1} on_load={on_shares} on_error={on_upload_error.clone()} />
                    { number_fields(&state, &FIELDS) }
                    { more_number_fields(&state, &[&FIELDS[..], &["cluster.placement", "tenant_weights"]].concat()) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <FileUpload id="upload-fairness-trace" label="Open a cluster trace (CSV or JSON)" accept=".csv,.json,.txt"
                        max_bytes={MAX_TRACE_BYTES} max_files={1} on_load={on_trace} on_error={on_upload_error} />
                    if let Some(upload) = &form.upload {
                        <p class="muted">{ match form.shown_upload() {
                            Some(shown) if shown == upload => format!("Running on {}. ", upload.source),
                            _ => format!("Opening {} (read and run in the background). ", upload.source),
                        } }
                            <button type="button" id="use-synthetic" onclick={on_synthetic}>{ "Back to the synthetic trace" }</button>
                        </p>
                    }
                    if let Some(message) = form.upload_error.as_ref().or(upload_error.as_ref()) {
                        <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                    }
            </> }}
            picture={html! {
                        <ClusterSection runs={state.runs.clone()} tenants={state.tenants.clone()}
                            nodes={state.cluster.0} gpus_per_node={state.cluster.1}
                            selected={state.selected} on_select={on_cluster_select} />
            }}
            after={html! {
                <SurveyMap {running} on_pick={on_survey_pick} />
            }}
            chart_titles={vec![
                        ("jct_cdf".to_string(), "Job completion time, CDF".to_string()),
                        ("job_fairness_cdf".to_string(), "Job fairness F_j at the finish, CDF (the artifact's fair band is 0.95–1.05)".to_string()),
                        ("tenant_fairness_over_time".to_string(), "Tenant fairness over time".to_string()),
                        ("queue_length".to_string(), "Jobs waiting".to_string()),
            ]} />
    }
}
