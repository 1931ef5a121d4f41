//! The resilience lab page: a training job's GPUs as a grid (nodes × GPUs) coloured by TP
//! group, pipeline stage or DP replica; click a GPU to make it slow or dead from an iteration
//! on; the run compares ResiHP's detection and re-plan with the baselines (iteration times
//! predicted vs observed, alarms, throughput), and the grid shows the layout before and after
//! ResiHP's re-plan (the change animates). A PAI mini-batch CSV runs the detectors on real data.
//!
//! The form edits the scenario's JSON by path and lets the core validate it, so every message
//! names the field exactly as the CLI would.

use std::rc::Rc;

use bubblelab_core::labs::resilience::job::Plan;
use bubblelab_core::labs::resilience::params::DetectorSpec;
use bubblelab_core::labs::resilience::ResilienceParams;
use bubblelab_core::{Report, Scenario};
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::fields::NumberField;
use crate::components::lab_page::LabPage;
use crate::components::params_form::{
    edit, get, number_value, opening_params, preset_callback, scenario_of, use_form_page, Form,
    FormPage,
};
use crate::components::params_form::{more_number_fields, number_fields};
use crate::components::timeline::Shared;
use crate::components::upload::FileUpload;
use crate::worker::client::{use_worker, Outcome, RunRequest, RunStatus};
use crate::worker::{Output, Playback};

/// Properties of [`ResilienceLab`].
#[derive(Properties, PartialEq)]
pub struct ResilienceLabProps {
    /// The `s=` payload of a share link, if any.
    #[prop_or_default]
    pub payload: Option<String>,
}

/// Number fields, paths inside `params` (labels, ranges and help from the field table).
const FIELDS: [&str; 10] = [
    "cluster.nodes",
    "cluster.gpus_per_node",
    "cluster.tp",
    "cluster.pp",
    "cluster.dp",
    "cluster.micro_batches",
    "iterations",
    "lengths.sigma",
    "detector.threshold",
    "noise.spike_rate",
];

/// What a click on a GPU injects: (id, label, slowdown, dead).
const FAULTS: [(&str, &str, f64, bool); 4] = [
    ("slow-1.5", "slow ×1.5", 1.5, false),
    ("slow-2", "slow ×2", 2.0, false),
    ("slow-4", "slow ×4", 4.0, false),
    ("dead", "dead (fail-stop)", 1.0, true),
];

/// Largest PAI file the page reads, bytes.
const MAX_PAI_BYTES: u64 = 32 << 20;

#[derive(Clone, PartialEq)]
struct State {
    form: Form,
    report: Shared<Report>,
    /// The layout before and after ResiHP's re-plans.
    plans: Rc<(Plan, Option<Plan>)>,
    /// ResiHP's run for the playback: its iterations and when it first re-planned.
    resihp: Rc<Playback>,
    /// A PAI file's detection Report, shown instead of the simulation while set.
    pai: Option<(String, Shared<Report>)>,
}

impl State {
    fn new(p: &ResilienceParams, link_error: Option<String>) -> State {
        let mut s = State {
            form: Form::new("resilience", &Scenario::Resilience(p.clone()), link_error),
            report: Shared(Rc::new(Report::default())),
            plans: Rc::new((Plan::initial(p), None)),
            resihp: Rc::new(Playback::default()),
            pai: None,
        };
        s.rerun(false);
        s
    }
}

impl FormPage for State {
    fn open(scenario: Scenario, link_error: Option<String>) -> Option<State> {
        match scenario {
            Scenario::Resilience(p) => Some(State::new(&p, link_error)),
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
        let (
            Output::Resilience {
                report,
                playback,
                replanned,
            },
            Scenario::Resilience(p),
        ) = (output, scenario)
        else {
            return;
        };
        self.report = Shared(Rc::new(report));
        self.resihp = Rc::new(playback);
        self.plans = Rc::new((Plan::initial(p), replanned));
    }
}

/// Colour of group `i` (hues spaced by the golden angle).
fn group_colour(i: u32) -> String {
    let hue = (f64::from(i) * 137.508) % 360.0;
    format!("hsl({hue:.0}, 62%, 58%)")
}

/// (TP rank, stage, replica) of every GPU a plan uses, by GPU index.
fn roles(plan: &Plan, gpus: u32) -> Vec<Option<(u32, u32, u32)>> {
    let mut out = vec![None; gpus as usize];
    for r in &plan.replicas {
        for (s, stage) in plan_stages(r) {
            for (t, &g) in stage.iter().enumerate() {
                if let Some(slot) = out.get_mut(g as usize) {
                    *slot = Some((t as u32, s, r.id));
                }
            }
        }
    }
    out
}

fn plan_stages(r: &bubblelab_core::labs::resilience::job::ReplicaPlan) -> Vec<(u32, Vec<u32>)> {
    r.stages
        .iter()
        .enumerate()
        .map(|(s, st)| (s as u32, st.gpus.clone()))
        .collect()
}

/// The resilience lab.
#[function_component(ResilienceLab)]
pub fn resilience_lab(props: &ResilienceLabProps) -> Html {
    let (state, worker) = use_form_page::<State>("resilience", props.payload.clone());
    let colour_by = use_state(|| "stage".to_string());
    let fault = use_state(|| 1usize);
    let at_iteration = use_state(|| "200".to_string());
    let show_after = use_state(|| true);
    // Playback position: an index into ResiHP's executed iterations (None: not playing back).
    let frame = use_state(|| None::<usize>);
    let playing = use_state(|| false);
    {
        let frame = frame.clone();
        let playing = playing.clone();
        let last = state.resihp.steps.len().saturating_sub(1);
        use_effect_with((*playing, *frame), move |(on, at)| {
            let timer = (*on).then(|| {
                let next = at.map_or(0, |i| i + 3).min(last);
                let frame = frame.clone();
                let playing = playing.clone();
                gloo::timers::callback::Timeout::new(40, move || {
                    frame.set(Some(next));
                    if next >= last {
                        playing.set(false);
                    }
                })
            });
            move || drop(timer)
        });
    }
    let upload_error = use_state(|| None::<String>);
    let pai_worker = use_worker();
    let on_gpu = {
        let state = state.clone();
        let fault = fault.clone();
        let at_iteration = at_iteration.clone();
        Callback::from(move |gpu: u32| {
            let at = number_value("resilience", "events.at_iteration", &at_iteration);
            let (_, _, slowdown, dead) = FAULTS[*fault];
            edit(&state, move |next: &mut State| {
                let at = match at {
                    Ok(v) => v,
                    Err(e) => {
                        next.form.error = Some(e);
                        return;
                    }
                };
                let mut events = get(&next.form.params, "events")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                // A second click on a GPU with an event removes it.
                let before = events.len();
                events.retain(|e| e.get("gpu").and_then(Value::as_u64) != Some(u64::from(gpu)));
                if events.len() == before {
                    events.push(serde_json::json!({"at_iteration": at, "gpu": gpu, "slowdown": slowdown, "dead": dead}));
                }
                next.form.set("events", Value::from(events));
                next.rerun(true);
            });
        })
    };
    // The detectors read the PAI file in a second worker, beside the simulation's.
    let on_pai = {
        let state = state.clone();
        let upload_error = upload_error.clone();
        let pai_worker = pai_worker.clone();
        Callback::from(move |files: Vec<(String, Vec<u8>)>| {
            let detector = match scenario_of("resilience", &state.form.params) {
                Ok(Scenario::Resilience(p)) => p.detector,
                _ => DetectorSpec::default(),
            };
            let name = files.first().map(|f| f.0.clone()).unwrap_or_default();
            let request = RunRequest::run(
                &Scenario::Resilience(ResilienceParams {
                    detector,
                    ..ResilienceParams::default()
                }),
                files.into_iter().map(|f| ("pai", Rc::new(f))).collect(),
            );
            let state = state.clone();
            let upload_error = upload_error.clone();
            pai_worker.run(
                request,
                Callback::from(move |outcome: Outcome| match outcome {
                    Ok(Output::Report(report)) => {
                        upload_error.set(None);
                        let name = name.clone();
                        edit(&state, move |next: &mut State| {
                            next.pai = Some((name, Shared(Rc::new(report))));
                        });
                    }
                    Ok(_) => {}
                    Err(e) => upload_error.set(Some(e.to_string())),
                }),
            );
        })
    };
    let on_back = {
        let state = state.clone();
        Callback::from(move |_: MouseEvent| {
            edit(&state, move |next: &mut State| {
                next.pai = None;
            });
        })
    };
    let on_upload_error = {
        let upload_error = upload_error.clone();
        Callback::from(move |m: String| upload_error.set(Some(m)))
    };
    let form = &state.form;
    let other_error = form.other_error(FIELDS.iter().copied());
    // The grid.
    let nodes = get(&form.params, "cluster.nodes")
        .and_then(Value::as_u64)
        .unwrap_or(0) as u32;
    let gpn = get(&form.params, "cluster.gpus_per_node")
        .and_then(Value::as_u64)
        .unwrap_or(0) as u32;
    let total = nodes.saturating_mul(gpn).min(4096);
    let (before, after) = &*state.plans;
    let shown_step = frame.and_then(|i| state.resihp.steps.get(i)).copied();
    let plan = match &shown_step {
        // Playing back: the layout ResiHP ran that iteration on.
        Some((it, _, _)) => match (state.resihp.replanned_at, after) {
            (Some(r), Some(a)) if *it >= r => a,
            _ => before,
        },
        None if *show_after => after.as_ref().unwrap_or(before),
        None => before,
    };
    let role = roles(plan, total);
    let events: Vec<(u32, bool)> = get(&form.params, "events")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter(|e| {
                    let at = e.get("at_iteration").and_then(Value::as_u64).unwrap_or(0);
                    shown_step
                        .as_ref()
                        .is_none_or(|(it, _, _)| u64::from(*it) >= at)
                })
                .filter_map(|e| {
                    let dead = e.get("dead").and_then(Value::as_bool).unwrap_or(false);
                    match (
                        e.get("gpu").and_then(Value::as_u64),
                        e.get("node").and_then(Value::as_u64),
                    ) {
                        (Some(g), _) => Some(vec![(g as u32, dead)]),
                        (None, Some(n)) => {
                            Some((0..gpn).map(|l| (n as u32 * gpn + l, dead)).collect())
                        }
                        _ => None,
                    }
                })
                .flatten()
                .collect()
        })
        .unwrap_or_default();
    let cell = if total > 512 { 10.0 } else { 16.0 };
    let width = f64::from(gpn) * cell + 8.0;
    let per_row = ((760.0 / width).floor() as u32).max(1);
    let rows = nodes.div_ceil(per_row).max(1);
    let svg_w = f64::from(per_row) * width;
    let svg_h = f64::from(rows) * (cell + 8.0);
    let by = (*colour_by).clone();
    let on_colour = {
        let colour_by = colour_by.clone();
        Callback::from(move |e: Event| {
            colour_by.set(e.target_unchecked_into::<HtmlSelectElement>().value());
        })
    };
    let on_fault = {
        let fault = fault.clone();
        Callback::from(move |e: Event| {
            if let Ok(i) = e
                .target_unchecked_into::<HtmlSelectElement>()
                .value()
                .parse::<usize>()
            {
                fault.set(i.min(FAULTS.len() - 1));
            }
        })
    };
    let on_at = {
        let at_iteration = at_iteration.clone();
        Callback::from(move |text: String| at_iteration.set(text))
    };
    let on_toggle_plan = {
        let show_after = show_after.clone();
        Callback::from(move |_: MouseEvent| show_after.set(!*show_after))
    };
    let on_play = {
        let playing = playing.clone();
        let frame = frame.clone();
        let last = state.resihp.steps.len().saturating_sub(1);
        Callback::from(move |_: MouseEvent| {
            if !*playing && frame.is_some_and(|f| f >= last) {
                frame.set(Some(0));
            }
            playing.set(!*playing);
        })
    };
    let on_frame = {
        let frame = frame.clone();
        let playing = playing.clone();
        Callback::from(move |e: InputEvent| {
            let v = e
                .target_unchecked_into::<web_sys::HtmlInputElement>()
                .value();
            if let Ok(i) = v.parse::<usize>() {
                playing.set(false);
                frame.set(Some(i));
            }
        })
    };
    let frame_text = match &shown_step {
        Some((it, dur, predicted)) => {
            let alarms: Vec<String> = state
                .resihp
                .alarms
                .iter()
                .filter(|(a, _)| a <= it)
                .map(|(a, g)| format!("iteration {a}: GPU {g:?}"))
                .collect();
            format!(
                "ResiHP, iteration {it}: {:.1} ms observed{}; {}{}",
                *dur as f64 / 1e6,
                predicted.map_or_else(String::new, |p| format!(", {:.1} ms predicted", p / 1e6)),
                if alarms.is_empty() {
                    "no alarm yet".to_string()
                } else {
                    format!("alarms: {}", alarms.join("; "))
                },
                match state.resihp.replanned_at {
                    Some(r) if *it >= r => format!("; running on the re-planned layout since iteration {r}"),
                    _ => String::new(),
                }
            )
        }
        None => "Play walks ResiHP's run iteration by iteration: faults appear when they strike, the layout changes at the re-plan.".to_string(),
    };
    let shown_iteration = shown_step
        .as_ref()
        .map(|s| s.0.to_string())
        .unwrap_or_default();
    let shown_report = state
        .pai
        .as_ref()
        .map_or_else(|| state.report.clone(), |(_, r)| r.clone());
    html! {
        <LabPage lab="resilience" title="Resilience: one slow GPU, and the whole job waits"
            link_error={form.link_error.clone()} shown={state.form.shown_json()} on_pick={preset_callback(&state)}
            worker={worker.clone()} unit="strategies" worker_error={state.form.worker_error.clone()}
            report={shown_report.clone()}
            export_json={Some(state.pai.is_none().then(|| state.form.shown_json()).flatten())}
            extra_status={html! { <RunStatus worker={pai_worker.clone()} id="pai-status" /> }}
            lede={html! {
                { "In hybrid-parallel training a GPU that slows down drags its TP group, its pipeline stage and every data-parallel \
                   replica with it. Raw iteration time is a poor alarm because packed sequences of varied length make healthy \
                   iterations vary. ResiHP predicts each iteration from the work it actually holds, flags only persistent excess, \
                   finds the slow GPU, and re-plans TP, PP and DP together." }
            }}
            controls={html! { <>
                    { number_fields(&state, &FIELDS) }
                    { more_number_fields(&state, &[&FIELDS[..], &["events.at_iteration"]].concat()) }
                    if let Some(message) = other_error {
                        <p class="field-error">{ message }</p>
                    }
                    <FileUpload id="upload-pai" label="Run the detectors on a PAI mini-batch CSV (job_N_norm.csv)" accept=".csv"
                        max_bytes={MAX_PAI_BYTES} max_files={1} on_load={on_pai} on_error={on_upload_error} />
                    if let Some((name, _)) = &state.pai {
                        <p class="muted">{ format!("Showing the detectors on {name}. ") }
                            <button type="button" id="back-to-simulation" onclick={on_back}>{ "Back to the simulation" }</button>
                        </p>
                    }
                    if let Some(message) = &*upload_error {
                        <div class="banner error" id="upload-error" role="alert">{ message.clone() }</div>
                    }
            </> }}
            picture={html! {
                    <section class="cluster" id="resilience-grid">
                        <h2>{ "The job's GPUs" }</h2>
                        <div class="cluster-controls">
                            <label for="colour-by">{ "Colour by" }</label>
                            <select id="colour-by" onchange={on_colour}>
                                <option value="stage" selected={by == "stage"}>{ "pipeline stage" }</option>
                                <option value="replica" selected={by == "replica"}>{ "DP replica" }</option>
                                <option value="tp" selected={by == "tp"}>{ "TP rank" }</option>
                            </select>
                            <label for="fault">{ "A click makes a GPU" }</label>
                            <select id="fault" onchange={on_fault}>
                                { for FAULTS.iter().enumerate().map(|(i, f)| html! { <option value={i.to_string()} selected={i == *fault}>{ f.1 }</option> }) }
                            </select>
                            <NumberField path="resilience.events.at_iteration" label="from iteration" value={(*at_iteration).clone()} on_change={on_at} />
                            if after.is_some() {
                                <button type="button" id="toggle-plan" onclick={on_toggle_plan}>
                                    { if *show_after { "Show the layout before the re-plan" } else { "Show ResiHP's re-plan" } }
                                </button>
                            }
                        </div>
                        <div class="cluster-controls">
                            <button type="button" id="resilience-play" onclick={on_play}>{ if *playing { "Pause" } else { "Play the run" } }</button>
                            <input type="range" id="resilience-scrubber" min="0" max={state.resihp.steps.len().saturating_sub(1).to_string()}
                                value={frame.unwrap_or(0).to_string()} oninput={on_frame} aria-label="iteration" />
                        </div>
                        <p class="muted" id="playback-state" data-iteration={shown_iteration}>{ frame_text }</p>
                        <p class="muted" id="plan-shown">{ if *show_after && after.is_some() { "ResiHP's layout after its re-plans (grey: GPUs it no longer uses)" } else { "The layout as launched" } }</p>
                        <svg class="gpu-grid" viewBox={format!("0 0 {svg_w} {svg_h}")} width={svg_w.to_string()} role="img" aria-label="GPUs by node">
                            { for (0..total).map(|g| {
                                let node = g / gpn.max(1);
                                let x = f64::from(node % per_row) * width + 4.0 + f64::from(g % gpn.max(1)) * cell;
                                let y = f64::from(node / per_row) * (cell + 8.0) + 4.0;
                                let fill = match role.get(g as usize).copied().flatten() {
                                    Some((t, s, r)) => group_colour(match by.as_str() { "replica" => r, "tp" => t, _ => s }),
                                    None => "#e2e8f0".to_string(),
                                };
                                let hit = events.iter().find(|e| e.0 == g);
                                let class = match hit { Some((_, true)) => "gpu dead", Some(_) => "gpu slow", None => "gpu" };
                                let on_gpu = on_gpu.clone();
                                html! {
                                    <rect {class} data-gpu={g.to_string()} x={x.to_string()} y={y.to_string()}
                                        width={(cell - 1.0).to_string()} height={(cell - 1.0).to_string()} {fill}
                                        onclick={Callback::from(move |_: MouseEvent| on_gpu.emit(g))}>
                                        <title>{ format!("GPU {g} (node {node})") }</title>
                                    </rect>
                                }
                            }) }
                        </svg>
                    </section>
            }}
            chart_titles={vec![
                        ("resilience.iteration_time".to_string(), "Iteration time: observed vs ResiHP's prediction".to_string()),
                        ("resilience.throughput".to_string(), "Training throughput per strategy".to_string()),
                        ("resilience.pai_time".to_string(), "Real mini-batch times: slowest vs median worker".to_string()),
            ]} />
    }
}
