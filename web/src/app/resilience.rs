//! The resilience lab's page parts: a training job's GPUs as a grid (nodes × GPUs) coloured by
//! TP group, pipeline stage or DP replica, on the generic page; click a GPU to make it slow or
//! dead from an iteration on; the run compares ResiHP's detection and re-plan with the
//! baselines (iteration times predicted vs observed, alarms, throughput), and the grid shows
//! the layout before and after ResiHP's re-plan, or plays ResiHP's run back iteration by
//! iteration. A PAI mini-batch CSV (the lab's input slot) runs the detectors on real data.

use bubblelab_core::labs::resilience::job::Plan;
use bubblelab_core::labs::resilience::ResilienceParams;
use bubblelab_core::Scenario;
use serde_json::Value;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::generic::{PageParts, State};
use crate::components::fields::NumberField;
use crate::components::params_form::{edit, get, number_value, scenario_of, FormPage, PageHandle};
use crate::worker::{Output, Playback};

/// What the resilience page has beyond its card and field table.
pub const PARTS: PageParts = PageParts {
    lede: "In hybrid-parallel training a GPU that slows down drags its TP group, its pipeline stage and every data-parallel \
                   replica with it. Raw iteration time is a poor alarm because packed sequences of varied length make healthy \
                   iterations vary. ResiHP predicts each iteration from the work it actually holds, flags only persistent excess, \
                   finds the slow GPU, and re-plans TP, PP and DP together.",
    unit: "strategies",
    main: &[
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
    ],
    charts: &[
        ("resilience.iteration_time", "Iteration time: observed vs ResiHP's prediction"),
        ("resilience.throughput", "Training throughput per strategy"),
        ("resilience.pai_time", "Real mini-batch times: slowest vs median worker"),
    ],
    picture: Some(|state| html! { <Grid state={state.clone()} /> }),
    ..PageParts::PLAIN
};

/// What a click on a GPU injects: (id, label, slowdown, dead).
const FAULTS: [(&str, &str, f64, bool); 4] = [
    ("slow-1.5", "slow ×1.5", 1.5, false),
    ("slow-2", "slow ×2", 2.0, false),
    ("slow-4", "slow ×4", 4.0, false),
    ("dead", "dead (fail-stop)", 1.0, true),
];

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

/// Properties of [`Grid`].
#[derive(Properties, PartialEq)]
struct GridProps {
    /// The page: its form (the cluster, the events) and the last run (the plans, the playback).
    state: PageHandle<State>,
}

/// The layout as launched and after ResiHP's re-plan, and ResiHP's run for the playback, of the
/// run on screen (the layout as launched alone when that run read a PAI file).
fn run_on_screen(state: &State) -> (Plan, Option<Plan>, Playback) {
    let form = state.form_ref();
    let params = match form
        .shown
        .clone()
        .map_or_else(|| scenario_of("resilience", &form.params), Ok)
    {
        Ok(Scenario::Resilience(p)) => p,
        _ => ResilienceParams::default(),
    };
    match state.output().map(|o| &*o.0) {
        Some(Output::Resilience {
            playback,
            replanned,
            ..
        }) => (Plan::initial(&params), replanned.clone(), playback.clone()),
        _ => (Plan::initial(&params), None, Playback::default()),
    }
}

/// The job's GPUs: a click injects a fault (or removes one); the layout before or after the
/// re-plan; the playback of ResiHP's run.
#[function_component(Grid)]
fn grid(props: &GridProps) -> Html {
    let state = &props.state;
    // Built once per finished run, not at every frame of the playback.
    let shown = use_memo(state.output().cloned(), |_| run_on_screen(state));
    let (before, after, resihp) = &*shown;
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
        let last = resihp.steps.len().saturating_sub(1);
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
                        next.form().error = Some(e);
                        return;
                    }
                };
                let mut events = get(&next.form_ref().params, "events")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                // A second click on a GPU with an event removes it.
                let before = events.len();
                events.retain(|e| e.get("gpu").and_then(Value::as_u64) != Some(u64::from(gpu)));
                if events.len() == before {
                    events.push(serde_json::json!({"at_iteration": at, "gpu": gpu, "slowdown": slowdown, "dead": dead}));
                }
                next.form().set("events", Value::from(events));
                next.rerun(true);
            });
        })
    };
    let form = state.form_ref();
    let nodes = get(&form.params, "cluster.nodes")
        .and_then(Value::as_u64)
        .unwrap_or(0) as u32;
    let gpn = get(&form.params, "cluster.gpus_per_node")
        .and_then(Value::as_u64)
        .unwrap_or(0) as u32;
    let total = nodes.saturating_mul(gpn).min(4096);
    let after = &after;
    let before = &before;
    let shown_step = frame.and_then(|i| resihp.steps.get(i)).copied();
    let plan = match &shown_step {
        // Playing back: the layout ResiHP ran that iteration on.
        Some((it, _, _)) => match (resihp.replanned_at, after) {
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
        let last = resihp.steps.len().saturating_sub(1);
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
            let alarms: Vec<String> = resihp
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
                match resihp.replanned_at {
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
    html! {
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
                            <input type="range" id="resilience-scrubber" min="0" max={resihp.steps.len().saturating_sub(1).to_string()}
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
    }
}
