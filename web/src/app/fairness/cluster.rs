//! The cluster view: every GPU of the cluster coloured by the tenant holding it at a simulated
//! instant, for one policy, with a scrubber and a play button that animates simulated time.
//! Below it, the chosen policy's per-tenant share of GPU-time against what each tenant
//! deserved ([`super::shares::ShareChart`]), with the same instant marked.

use std::rc::Rc;

use gloo::timers::callback::Interval;
use web_sys::{HtmlCanvasElement, HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::colours::{tenant_colour, FREE};
use super::shares::ShareChart;
use crate::components::canvas::fixed_size_context;
use crate::components::timeline::Shared;
use crate::worker::ClusterRun;

/// Properties of [`ClusterSection`].
#[derive(Properties, PartialEq)]
pub struct ClusterProps {
    /// Every policy's run on one trace.
    pub runs: Shared<Vec<ClusterRun>>,
    /// Tenant names, by index.
    pub tenants: Shared<Vec<String>>,
    /// Nodes in the cluster.
    pub nodes: u32,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// Index into `runs` of the policy shown.
    pub selected: usize,
    /// Called with a new policy index.
    pub on_select: Callback<usize>,
}

/// Scrubber positions over the run (0 = first submission, [`STEPS`] = last finish).
const STEPS: u32 = 1_000;
/// Canvas width, CSS px.
const WIDTH: f64 = 720.0;

/// The scrubber position and whether it plays.
#[derive(Clone, Copy, PartialEq)]
struct Clock {
    pos: u32,
    playing: bool,
}

enum Tick {
    /// Advance one frame (stops at the end).
    Step,
    /// Jump to a position.
    Seek(u32),
    /// Start or stop playing (starting at the end rewinds).
    Toggle,
}

impl Reducible for Clock {
    type Action = Tick;
    fn reduce(self: Rc<Self>, action: Tick) -> Rc<Self> {
        let next = match action {
            Tick::Step if self.playing => {
                let pos = (self.pos + 2).min(STEPS);
                Clock {
                    pos,
                    playing: pos < STEPS,
                }
            }
            Tick::Step => *self,
            Tick::Seek(pos) => Clock {
                pos: pos.min(STEPS),
                playing: self.playing,
            },
            Tick::Toggle => Clock {
                pos: if self.pos >= STEPS { 0 } else { self.pos },
                playing: !self.playing,
            },
        };
        Rc::new(next)
    }
}

/// Time of scrubber position `pos` in a run, ns.
fn time_at(run: &ClusterRun, pos: u32) -> u64 {
    let span = run.last_finish_ns.saturating_sub(run.first_submit_ns);
    run.first_submit_ns + (u128::from(span) * u128::from(pos) / u128::from(STEPS)) as u64
}

/// Cell size and nodes per row for the grid of GPUs.
fn layout(nodes: u32, gpn: u32) -> (f64, u32) {
    let total = f64::from(nodes.max(1) * gpn.max(1));
    let cell = (WIDTH * 260.0 / total).sqrt().floor().clamp(3.0, 22.0);
    let node_w = f64::from(gpn.max(1)) * cell + 4.0;
    let per_row = ((WIDTH / node_w).floor() as u32).max(1);
    (cell, per_row)
}

fn draw(canvas: &HtmlCanvasElement, occupancy: &[Vec<(u32, u32)>], gpn: u32) {
    let nodes = occupancy.len() as u32;
    let (cell, per_row) = layout(nodes, gpn);
    let rows = nodes.div_ceil(per_row).max(1);
    let height = f64::from(rows) * (cell + 4.0) + 4.0;
    let Some(ctx) = fixed_size_context(canvas, WIDTH, height) else {
        return;
    };
    let node_w = f64::from(gpn) * cell + 4.0;
    let gap = if cell >= 6.0 { 1.0 } else { 0.0 };
    for (n, held) in occupancy.iter().enumerate() {
        let n = n as u32;
        let x0 = f64::from(n % per_row) * node_w + 2.0;
        let y0 = f64::from(n / per_row) * (cell + 4.0) + 2.0;
        let mut slot = 0u32;
        for &(tenant, gpus) in held {
            ctx.set_fill_style_str(&tenant_colour(tenant));
            for _ in 0..gpus.min(gpn.saturating_sub(slot)) {
                ctx.fill_rect(x0 + f64::from(slot) * cell, y0, cell - gap, cell - gap);
                slot += 1;
            }
        }
        ctx.set_fill_style_str(FREE);
        for s in slot..gpn {
            ctx.fill_rect(x0 + f64::from(s) * cell, y0, cell - gap, cell - gap);
        }
    }
}

/// The cluster view with its controls and the share chart.
#[function_component(ClusterSection)]
pub fn cluster_section(props: &ClusterProps) -> Html {
    let clock = use_reducer(|| Clock {
        pos: STEPS / 2,
        playing: false,
    });
    let canvas = use_node_ref();
    let run = props
        .runs
        .0
        .get(props.selected.min(props.runs.0.len().saturating_sub(1)));
    let t_ns = run.map_or(0, |r| time_at(r, clock.pos));
    let occupancy: Rc<Vec<Vec<(u32, u32)>>> = Rc::new(
        run.map(|r| r.occupancy_at(props.nodes as usize, t_ns))
            .unwrap_or_default(),
    );
    {
        let canvas = canvas.clone();
        let occupancy = occupancy.clone();
        let gpn = props.gpus_per_node;
        use_effect_with((occupancy, gpn), move |(occupancy, gpn)| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                draw(&c, occupancy, *gpn);
            }
        });
    }
    {
        let dispatch = clock.dispatcher();
        use_effect_with(clock.playing, move |playing| {
            let timer = playing.then(|| Interval::new(60, move || dispatch.dispatch(Tick::Step)));
            move || drop(timer)
        });
    }
    if run.is_none() {
        return html! {};
    }
    let mut held: Vec<(u32, u32)> = Vec::new();
    for &(tenant, gpus) in occupancy.iter().flatten() {
        match held.binary_search_by_key(&tenant, |e| e.0) {
            Ok(i) => held[i].1 += gpus,
            Err(i) => held.insert(i, (tenant, gpus)),
        }
    }
    held.sort_by_key(|e| (std::cmp::Reverse(e.1), e.0));
    let busy: u32 = held.iter().map(|e| e.1).sum();
    let total = props.nodes * props.gpus_per_node;
    let on_scrub = {
        let dispatch = clock.dispatcher();
        Callback::from(move |e: InputEvent| {
            let input = e.target_unchecked_into::<HtmlInputElement>();
            if let Ok(v) = input.value().parse::<u32>() {
                dispatch.dispatch(Tick::Seek(v));
            }
        })
    };
    let on_play = {
        let dispatch = clock.dispatcher();
        Callback::from(move |_: MouseEvent| dispatch.dispatch(Tick::Toggle))
    };
    let on_policy = {
        let on_select = props.on_select.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Ok(i) = v.parse::<usize>() {
                on_select.emit(i);
            }
        })
    };
    let name = |u: u32| {
        props
            .tenants
            .0
            .get(u as usize)
            .cloned()
            .unwrap_or_else(|| format!("tenant {u}"))
    };
    let hours = t_ns as f64 / 3.6e12;
    html! {
        <section class="cluster" id="cluster-view">
            <h2>{ "The cluster, GPU by GPU" }</h2>
            <div class="cluster-controls">
                <label for="cluster-policy">{ "Policy" }</label>
                <select id="cluster-policy" onchange={on_policy}>
                    { for props.runs.0.iter().enumerate().map(|(i, r)| html! {
                        <option value={i.to_string()} selected={i == props.selected}>{ r.kind.label() }</option>
                    }) }
                </select>
                <button type="button" id="cluster-play" onclick={on_play}>
                    { if clock.playing { "Pause" } else { "Play" } }
                </button>
                <input type="range" id="cluster-scrubber" min="0" max={STEPS.to_string()}
                    value={clock.pos.to_string()} oninput={on_scrub} aria-label="simulated time" />
                <span id="cluster-time" data-t-ns={t_ns.to_string()}>
                    { format!("t = {hours:.1} h · {busy} of {total} GPUs busy") }
                </span>
            </div>
            <canvas ref={canvas} class="cluster-canvas" data-busy={busy.to_string()} />
            <ul class="legend cluster-legend">
                { for held.iter().take(16).map(|&(u, g)| html! {
                    <li><span class="swatch" style={format!("background:{}", tenant_colour(u))}></span>
                        { format!("{} · {g} GPUs", name(u)) }</li>
                }) }
                if held.len() > 16 {
                    <li class="muted">{ format!("… {} more tenants", held.len() - 16) }</li>
                }
                <li><span class="swatch" style={format!("background:{FREE}")}></span>{ format!("free · {} GPUs", total.saturating_sub(busy)) }</li>
            </ul>
            <ShareChart runs={props.runs.clone()} index={props.selected} tenants={props.tenants.clone()} marker_ns={t_ns} />
        </section>
    }
}
