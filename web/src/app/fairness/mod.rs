//! The fairness lab's page parts: a multi-tenant GPU cluster under every policy on one trace,
//! on the generic page: the comparison table, fairness over time, JCT distributions and
//! GPU-by-tenant timelines, with the cluster itself as the picture (`cluster.rs`, with the
//! tenants' shares against what they deserve, `shares.rs`) and the field's map after the
//! Report (`survey.rs`). The trace is the scenario's seeded synthetic one (shareable as a link)
//! or a trace file the user opens (the lab's input slot; not carried in links); each policy
//! runs in its own worker.

mod cluster;
mod colours;
mod shares;
mod survey;

use std::rc::Rc;

use bubblelab_core::labs::fairness::policies::PolicyKind;
use bubblelab_core::Scenario;
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use self::cluster::ClusterSection;
use self::survey::SurveyMap;
use super::generic::{PageParts, State};
use crate::components::fields::CheckboxGroup;
use crate::components::params_form::{
    edit, get, kind_options, kind_toggle, scenario_of, FormPage, PageHandle,
};
use crate::components::timeline::Shared;
use crate::worker::{ClusterRun, Output};

/// What the fairness page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "Tenants share a GPU cluster; jobs need all their GPUs at once. FIFO, SJF and SRTF chase efficiency; \
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
                   daily peak, against separate clusters (give it servers below, or open its preset from the map).",
    unit: "policies",
    controls: Some(controls),
    drawn: &["policies", "tenant_weights"],
    main: &[
        "cluster.nodes",
        "cluster.gpus_per_node",
        "cluster.placement",
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
    ],
    charts: &[
        ("jct_cdf", "Job completion time, CDF"),
        ("job_fairness_cdf", "Job fairness F_j at the finish, CDF (the artifact's fair band is 0.95–1.05)"),
        ("tenant_fairness_over_time", "Tenant fairness over time"),
        ("queue_length", "Jobs waiting"),
    ],
    picture: Some(|state| match state.output() {
        Some(output) => html! { <Cluster state={state.clone()} output={output.clone()} /> },
        None => Html::default(),
    }),
    after: Some(survey_map),
    pieces: Some(pieces),
    ..PageParts::PLAIN
};

/// One piece per policy, so the policies run in several workers at once (as the CLI runs them
/// on several threads), longest first ([`PolicyKind::longest_first`]); each worker holds the
/// next piece in its queue while it runs one.
fn pieces(scenario: &Scenario) -> Vec<Vec<usize>> {
    let Scenario::Fairness(p) = scenario else {
        return Vec::new();
    };
    PolicyKind::longest_first(&p.policies)
        .into_iter()
        .map(|i| vec![i])
        .collect()
}

/// The policies by name, and the tenants' weights (a shares file read in shows as one more
/// choice).
fn controls(state: &PageHandle<State>) -> Html {
    let form = state.form_ref();
    let options = kind_options::<PolicyKind>(&form.params, "policies");
    let on_toggle = kind_toggle::<State, PolicyKind>(state, "policies");
    let weights = get(&form.params, "tenant_weights")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let share_count = get(&form.params, "tenant_weights")
        .and_then(|v| v.get("shares"))
        .and_then(Value::as_array)
        .map(Vec::len);
    let on_weights = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<HtmlSelectElement>().value();
            edit(&state, move |next: &mut State| {
                next.form().set("tenant_weights", Value::from(value));
                next.rerun(true);
            });
        })
    };
    html! { <>
        <CheckboxGroup path="fairness.policies" label="Policies" {options}
            error={form.field_error("policies")} {on_toggle} />
        <div class="field">
            <label for="field-tenant_weights">{ "Tenant weights" }</label>
            <select id="field-tenant_weights" onchange={on_weights}>
                { for ["equal", "demand"].iter().map(|p| html! { <option value={*p} selected={weights == *p}>{ *p }</option> }) }
                if let Some(n) = share_count {
                    <option value="shares" selected=true disabled=true>{ format!("shares file ({n} tenants)") }</option>
                }
            </select>
        </div>
    </> }
}

/// The field's map: a pick shows that policy's run in the cluster view, adding it to the run
/// when it is not in it.
fn survey_map(state: &PageHandle<State>) -> Html {
    let running = runs_of(state.output())
        .iter()
        .map(|r| r.kind)
        .collect::<Vec<_>>();
    let on_pick = {
        let state = state.clone();
        Callback::from(move |kind: PolicyKind| {
            edit(&state, move |next: &mut State| {
                next.pick(kind.id());
                let ran = runs_of(next.output());
                if ran.iter().any(|r| r.kind == kind) {
                    return;
                }
                let list: Vec<&str> = PolicyKind::ALL
                    .iter()
                    .filter(|k| **k == kind || ran.iter().any(|r| r.kind == **k))
                    .map(|k| k.id())
                    .collect();
                next.form().set("policies", Value::from(list));
                next.rerun(true);
            });
        })
    };
    html! { <SurveyMap {running} {on_pick} /> }
}

/// Every policy's run in the output, if it is the fairness lab's.
fn runs_of(output: Option<&Shared<Output>>) -> &[ClusterRun] {
    match output.map(|o| &*o.0) {
        Some(Output::Fairness { runs, .. }) => runs,
        _ => &[],
    }
}

/// Properties of [`Cluster`].
#[derive(Properties, PartialEq)]
struct ClusterPickProps {
    /// The page (the scenario shown, the policy picked).
    state: PageHandle<State>,
    /// Its last output: every policy's run and the tenants' names.
    output: Shared<Output>,
}

/// The cluster view of the policy picked: the one shown before, else the system the run is
/// about (ASTRAEA, else slot admission, else capacity loaning).
#[function_component(Cluster)]
fn cluster_pick(props: &ClusterPickProps) -> Html {
    let parts = use_memo(props.output.clone(), |output| match &*output.0 {
        Output::Fairness { runs, tenants, .. } => (
            Shared(Rc::new(runs.clone())),
            Shared(Rc::new(tenants.clone())),
        ),
        _ => (Shared(Rc::new(Vec::new())), Shared(Rc::new(Vec::new()))),
    });
    let (runs, tenants) = (*parts).clone();
    let picked = props.state.picked().and_then(PolicyKind::from_id);
    let selected = [
        picked,
        Some(PolicyKind::Astraea),
        Some(PolicyKind::SlotAdmission),
        Some(PolicyKind::LoanReclaim),
    ]
    .into_iter()
    .flatten()
    .find_map(|k| runs.0.iter().position(|r| r.kind == k))
    .unwrap_or(0);
    let form = props.state.form_ref();
    let shown = form
        .shown
        .clone()
        .map_or_else(|| scenario_of("fairness", &form.params), Ok);
    let (nodes, gpus_per_node) = match shown {
        Ok(Scenario::Fairness(p)) => (p.cluster.nodes, p.cluster.gpus_per_node),
        _ => (0, 0),
    };
    let on_select = {
        let state = props.state.clone();
        let runs = runs.clone();
        Callback::from(move |i: usize| {
            if let Some(kind) = runs.0.get(i).map(|r| r.kind) {
                edit(&state, move |next: &mut State| next.pick(kind.id()));
            }
        })
    };
    html! {
        <ClusterSection {runs} {tenants} {nodes} {gpus_per_node} {selected} {on_select} />
    }
}
