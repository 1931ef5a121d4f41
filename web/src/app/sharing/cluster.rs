//! The cluster at the end of a policy's run, GPU by GPU: each GPU a square, filled from the
//! bottom by its allocated share — a whole-GPU pod, or pods sharing it — and above that what is
//! left: nothing, a sliver smaller than any usual pod asks (lost to fragmentation), room a usual
//! sharing pod still fits, or a wholly free GPU. Nodes are drawn in cluster order, their GPUs
//! side by side.

use web_sys::{HtmlCanvasElement, HtmlSelectElement};
use yew::prelude::*;

use bubblelab_core::labs::sharing::experiment::SHARED_FLAG;
use bubblelab_core::labs::sharing::ClusterPicture;

use crate::components::canvas::fixed_size_context;
use crate::components::timeline::Shared;

/// Canvas width, CSS px.
const WIDTH: f64 = 720.0;

/// What a GPU's share is: (class, label, meaning, colour).
const CATEGORIES: [(&str, &str, &str, &str); 5] = [
    (
        "whole",
        "whole-GPU pod",
        "a pod holding the whole GPU (or several whole GPUs)",
        "#1e3a8a",
    ),
    (
        "shared",
        "shared",
        "the shares of pods sharing this GPU",
        "#0d9488",
    ),
    (
        "sliver",
        "sliver",
        "free, but less than any usual pod asks: lost to fragmentation",
        "#dc2626",
    ),
    (
        "room",
        "room",
        "free on a shared GPU, and a usual sharing pod still fits",
        "#86efac",
    ),
    ("free", "free GPU", "a wholly free GPU", "#e2e8f0"),
];

fn colour(class: &str) -> &'static str {
    CATEGORIES
        .iter()
        .find(|c| c.0 == class)
        .map_or("#000000", |c| c.3)
}

/// Totals over the cluster, in GPUs (milli ÷ 1000): whole, shared, sliver, room, free.
fn totals(p: &ClusterPicture) -> [f64; 5] {
    let mut t = [0.0; 5];
    for &g in &p.gpus {
        let shared = g >= SHARED_FLAG;
        let used = f64::from(g % SHARED_FLAG);
        let free = 1000.0 - used;
        if used == 0.0 {
            t[4] += 1.0;
        } else if shared {
            t[1] += used / 1000.0;
            if free < f64::from(p.sliver_below_milli) {
                t[2] += free / 1000.0;
            } else {
                t[3] += free / 1000.0;
            }
        } else {
            t[0] += used / 1000.0;
        }
    }
    t
}

fn draw(canvas: &HtmlCanvasElement, p: &ClusterPicture) {
    let nodes = p.node_gpus.len();
    let widest = f64::from(p.node_gpus.iter().copied().max().unwrap_or(1));
    let cell = if nodes <= 300 { 12.0 } else { 6.0 };
    let node_w = widest * cell + 4.0;
    let per_row = ((WIDTH / node_w).floor() as usize).max(1);
    let rows = nodes.div_ceil(per_row);
    let height = rows as f64 * (cell + 4.0) + 4.0;
    let Some(ctx) = fixed_size_context(canvas, WIDTH, height) else {
        return;
    };
    let gap = if cell >= 6.0 { 1.0 } else { 0.0 };
    let side = cell - gap;
    let mut k = 0usize;
    for (n, &gpus) in p.node_gpus.iter().enumerate() {
        let x0 = (n % per_row) as f64 * node_w + 2.0;
        let y0 = (n / per_row) as f64 * (cell + 4.0) + 2.0;
        for s in 0..usize::from(gpus) {
            let Some(&g) = p.gpus.get(k) else { return };
            k += 1;
            let x = x0 + s as f64 * cell;
            let shared = g >= SHARED_FLAG;
            let used = u32::from(g % SHARED_FLAG);
            let (fill, rest) = if used == 0 {
                ("free", "free")
            } else if !shared {
                ("whole", "whole")
            } else if 1000 - used < p.sliver_below_milli {
                ("shared", "sliver")
            } else {
                ("shared", "room")
            };
            let h = side * f64::from(used) / 1000.0;
            ctx.set_fill_style_str(colour(rest));
            ctx.fill_rect(x, y0, side, side - h);
            ctx.set_fill_style_str(colour(fill));
            ctx.fill_rect(x, y0 + side - h, side, h);
        }
    }
}

/// Properties of [`SharingCluster`].
#[derive(Properties, PartialEq)]
pub struct SharingClusterProps {
    /// One picture per policy.
    pub pictures: Shared<Vec<ClusterPicture>>,
    /// Index of the policy shown.
    pub selected: usize,
    /// Called with a new index.
    pub on_select: Callback<usize>,
}

/// The cluster picture with its policy menu and legend.
#[function_component(SharingCluster)]
pub fn sharing_cluster(props: &SharingClusterProps) -> Html {
    let canvas = use_node_ref();
    let picture = props
        .pictures
        .0
        .get(props.selected.min(props.pictures.0.len().saturating_sub(1)))
        .cloned();
    {
        let canvas = canvas.clone();
        use_effect_with(picture.clone(), move |picture| {
            if let (Some(c), Some(p)) = (canvas.cast::<HtmlCanvasElement>(), picture) {
                draw(&c, p);
            }
        });
    }
    let Some(picture) = picture else {
        return html! {};
    };
    let t = totals(&picture);
    let on_policy = {
        let on_select = props.on_select.clone();
        Callback::from(move |e: Event| {
            if let Ok(i) = e
                .target_unchecked_into::<HtmlSelectElement>()
                .value()
                .parse::<usize>()
            {
                on_select.emit(i);
            }
        })
    };
    html! {
        <section class="cluster" id="sharing-cluster">
            <h2>{ "The cluster when the pods stop arriving, GPU by GPU" }</h2>
            <div class="cluster-controls">
                <label for="sharing-policy">{ "Policy" }</label>
                <select id="sharing-policy" onchange={on_policy}>
                    { for props.pictures.0.iter().enumerate().map(|(i, p)| html! {
                        <option value={i.to_string()} selected={i == props.selected}>{ p.policy.label() }</option>
                    }) }
                </select>
                <span class="muted" id="sharing-slivers" data-sliver-gpus={format!("{:.1}", t[2])}>
                    { format!("seed {} · slivers add up to {:.1} GPUs, room to {:.1}, {:.0} GPUs wholly free", picture.seed, t[2], t[3], t[4]) }
                </span>
            </div>
            <canvas ref={canvas} class="cluster-canvas" />
            <ul class="legend cluster-legend">
                { for CATEGORIES.iter().zip(t).map(|((_, label, meaning, c), gpus)| html! {
                    <li title={*meaning}><span class="swatch" style={format!("background:{c}")}></span>
                        { format!("{label} · {gpus:.1} GPUs") }<span class="meaning">{ format!(" — {meaning}") }</span></li>
                }) }
            </ul>
            <p class="muted">{ format!("Each square is a GPU, filled from the bottom by what is allocated on it; nodes in cluster order. \
                A usual pod is one of FGD's typical tasks; the smallest share of a GPU any of them asks is {} milli-GPU.", picture.sliver_below_milli) }</p>
        </section>
    }
}
