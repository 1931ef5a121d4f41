//! The cost-model explorer: pick a GPU, a collective, a message and group size, and a GEMM;
//! see the times, the bus bandwidth and the curves of the kernel's cost models. Measured
//! points from a Vidur NCCL profile (`all_reduce.csv`, `send_recv.csv`) can be laid over the
//! curves.

use std::rc::Rc;

use bubblelab_core::cost::CollectiveKind;
use bubblelab_core::hw::GpuKind;
use bubblelab_core::labs::cost::CostParams;
use bubblelab_core::{share, Report, Scenario, ScenarioError};
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::browser;
use crate::components::fields::NumberField;
use crate::components::lab_page::LabPage;
use crate::components::timeline::Shared;
use crate::components::upload::{texts, FileUpload};
use crate::worker::client::{use_worker, Outcome, RunRequest};
use crate::worker::{Failure, Output};

/// Properties of [`CostExplorer`].
#[derive(Properties, PartialEq)]
pub struct CostExplorerProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

const COLLECTIVES: [CollectiveKind; 5] = [
    CollectiveKind::AllReduce,
    CollectiveKind::AllGather,
    CollectiveKind::ReduceScatter,
    CollectiveKind::AllToAll,
    CollectiveKind::SendRecv,
];

/// Number fields: (name, path, label, scale from form unit to scenario unit).
const FIELDS: [(&str, &str, &str, f64); 6] = [
    ("bytes", "cost.bytes", "Message (MiB)", 1_048_576.0),
    ("ranks", "cost.ranks", "Ranks", 1.0),
    (
        "ranks_per_node",
        "cost.ranks_per_node",
        "Ranks per node",
        1.0,
    ),
    ("gemm_m", "cost.gemm_m", "GEMM M", 1.0),
    ("gemm_n", "cost.gemm_n", "GEMM N", 1.0),
    ("gemm_k", "cost.gemm_k", "GEMM K", 1.0),
];

fn get(p: &CostParams, name: &str) -> u64 {
    match name {
        "bytes" => p.bytes,
        "ranks" => u64::from(p.ranks),
        "ranks_per_node" => u64::from(p.ranks_per_node),
        "gemm_m" => p.gemm_m,
        "gemm_n" => p.gemm_n,
        _ => p.gemm_k,
    }
}

fn set(p: &mut CostParams, name: &str, v: u64) {
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match name {
        "bytes" => p.bytes = v,
        "ranks" => p.ranks = small(v),
        "ranks_per_node" => p.ranks_per_node = small(v),
        "gemm_m" => p.gemm_m = v,
        "gemm_n" => p.gemm_n = v,
        _ => p.gemm_k = v,
    }
}

#[derive(Clone, PartialEq)]
struct State {
    /// The last valid parameters (the page's worker runs these).
    params: CostParams,
    texts: Vec<String>,
    error: Option<ScenarioError>,
    link_error: Option<String>,
}

impl State {
    fn new(params: CostParams, link_error: Option<String>) -> State {
        let texts = FIELDS
            .iter()
            .map(|(name, _, _, scale)| (get(&params, name) as f64 / scale).to_string())
            .collect();
        State {
            params,
            texts,
            error: None,
            link_error,
        }
    }

    fn from_payload(payload: Option<&str>) -> State {
        match payload.map(|p| share::decode_for_lab("cost", p)) {
            Some(Ok(Scenario::Cost(p))) => State::new(p, None),
            Some(Ok(_)) => State::new(CostParams::default(), None),
            Some(Err(e)) => State::new(CostParams::default(), Some(e.to_string())),
            None => State::new(CostParams::default(), None),
        }
    }

    /// Applies the form: parse every field and validate; valid parameters are run by the
    /// page's worker.
    fn apply(&mut self, mut params: CostParams) {
        for (i, (name, path, _, scale)) in FIELDS.iter().enumerate() {
            let text = self.texts[i].trim();
            if let Some(v) = text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
            {
                set(&mut params, name, (v * scale).round() as u64);
            } else {
                self.error = Some(ScenarioError::field(
                    *path,
                    format!("expected a non-negative number, got `{text}`"),
                ));
                return;
            }
        }
        let scenario = Scenario::Cost(params.clone());
        match scenario.validate() {
            Ok(()) => {
                self.params = params;
                self.error = None;
                self.link_error = None;
                browser::replace_hash(&share::fragment(&scenario));
            }
            Err(e) => self.error = Some(e),
        }
    }
}

/// The cost-model explorer page.
#[function_component(CostExplorer)]
pub fn cost_explorer(props: &CostExplorerProps) -> Html {
    let state = {
        let payload = props.payload.clone();
        use_state(move || State::from_payload(payload.as_deref()))
    };
    let measured = use_state(|| None::<String>);
    let upload_error = use_state(|| None::<String>);
    // The model runs in the worker; the last finished Report stays on screen meanwhile.
    let worker = use_worker();
    let shown = use_state(|| Shared(Rc::new(Report::default())));
    let run_error = use_state(|| None::<ScenarioError>);
    let worker_error = use_state(|| None::<String>);
    {
        let worker = worker.clone();
        let shown = shown.clone();
        let run_error = run_error.clone();
        let worker_error = worker_error.clone();
        use_effect_with(state.params.clone(), move |params| {
            run_error.set(None);
            let run_error = run_error.clone();
            let request = RunRequest::run(&Scenario::Cost(params.clone()), Vec::new());
            worker.run(
                request,
                Callback::from(move |outcome: Outcome| {
                    worker_error.set(None);
                    match outcome {
                        Ok(Output::Report(r)) => shown.set(Shared(Rc::new(r))),
                        Ok(_) => {}
                        Err(Failure::Scenario(e)) => run_error.set(Some(e)),
                        Err(e) => worker_error.set(Some(e.to_string())),
                    }
                }),
            );
        });
    }
    // The input's own error first, else what the run of the last valid input said.
    let error = state.error.clone().or_else(|| (*run_error).clone());
    let on_text = |i: usize| {
        let state = state.clone();
        Callback::from(move |text: String| {
            let mut next = (*state).clone();
            next.texts[i] = text;
            let params = next.params.clone();
            next.apply(params);
            state.set(next);
        })
    };
    let on_gpu = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(gpu) = GpuKind::ALL.into_iter().find(|g| g.id() == id) {
                let mut next = (*state).clone();
                let params = CostParams {
                    gpu,
                    ..next.params.clone()
                };
                next.apply(params);
                state.set(next);
            }
        })
    };
    let on_collective = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(kind) = COLLECTIVES.into_iter().find(|k| k.id() == id) {
                let mut next = (*state).clone();
                let params = CostParams {
                    collective: kind,
                    ..next.params.clone()
                };
                next.apply(params);
                state.set(next);
            }
        })
    };
    let on_preset = {
        let state = state.clone();
        Callback::from(move |(_, scenario): (&'static str, Scenario)| {
            if let Scenario::Cost(p) = scenario {
                let mut next = State::new(p.clone(), None);
                next.apply(p);
                state.set(next);
            }
        })
    };
    let on_measured = {
        let measured = measured.clone();
        let upload_error = upload_error.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| match texts(files) {
            Ok(files) => match files.into_iter().next() {
                Some((_, text)) => {
                    upload_error.set(None);
                    measured.set(Some(text));
                }
                None => upload_error.set(Some("no file chosen".into())),
            },
            Err(e) => upload_error.set(Some(e)),
        })
    };
    let on_upload_error = {
        let upload_error = upload_error.clone();
        Callback::from(move |m: String| upload_error.set(Some(m)))
    };
    // The report, with the measured points of the chosen collective and group laid over it.
    let report = match &*measured {
        None => (*shown).clone(),
        Some(csv) => match bubblelab_core::labs::cost::measured_series(
            csv,
            state.params.collective,
            state.params.ranks,
            state.params.ranks_per_node,
        ) {
            Ok(series) => {
                let mut r = (*shown.0).clone();
                r.series.extend(series);
                Shared(Rc::new(r))
            }
            Err(e) => {
                let mut r = (*shown.0).clone();
                r.findings
                    .push(format!("The measured file was not used: {e}"));
                Shared(Rc::new(r))
            }
        },
    };
    let field_error = |path: &str| {
        error
            .as_ref()
            .filter(|e| e.path() == Some(path))
            .map(ToString::to_string)
    };
    let other_error = error
        .as_ref()
        .filter(|e| !FIELDS.iter().any(|f| e.path() == Some(f.1)))
        .map(ToString::to_string);
    let shown = Some(AttrValue::from(
        Scenario::Cost(state.params.clone()).to_json_pretty(),
    ));
    html! {
        <LabPage lab="cost" title="Cost models: what does a kernel or a collective cost?"
            link_error={state.link_error.clone()} shown={shown} on_pick={on_preset}
            worker={worker.clone()} worker_error={(*worker_error).clone()}
            report={report}
            lede={html! {
                { "The kernel every lab shares: GEMM time from a roofline with a size-dependent efficiency, \
                   collective time from the alpha-beta model (ring AllReduce 2(p−1)α + 2(p−1)/p·n/β, \
                   AllGather/ReduceScatter/AllToAll (p−1)α + (p−1)/p·n/β, P2P α + n/β) over NVLink inside a node and \
                   the NIC between nodes. Open a Vidur NCCL profile to see the measured points next to the model." }
            }}
            controls={html! { <>
                    <div class="field">
                        <label for="field-gpu">{ "GPU" }</label>
                        <select id="field-gpu" onchange={on_gpu}>
                            { for GpuKind::ALL.iter().map(|g| html! { <option value={g.id()} selected={*g == state.params.gpu}>{ g.label() }</option> }) }
                        </select>
                    </div>
                    <div class="field">
                        <label for="field-collective">{ "Collective" }</label>
                        <select id="field-collective" onchange={on_collective}>
                            { for COLLECTIVES.iter().map(|k| html! { <option value={k.id()} selected={*k == state.params.collective}>{ k.id() }</option> }) }
                        </select>
                    </div>
                    { for FIELDS.iter().enumerate().map(|(i, (_, path, label, _))| html! {
                        <NumberField path={*path} label={*label} value={state.texts[i].clone()} min={Some(0.0)}
                            error={field_error(path)} on_change={on_text(i)} />
                    }) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <FileUpload id="upload-vidur" label="Measured points: a Vidur profile (.csv)" accept=".csv,text/csv"
                        max_bytes={32 << 20} max_files={1} on_load={on_measured} on_error={on_upload_error} />
                    if let Some(message) = &*upload_error {
                        <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                    }
            </> }}
            chart_titles={vec![
                        ("collective_time".to_string(), "Collective time by message size".to_string()),
                        ("bus_bandwidth".to_string(), "Bus bandwidth by message size".to_string()),
                        ("gemm_efficiency".to_string(), "GEMM efficiency by size".to_string()),
            ]} />
    }
}
