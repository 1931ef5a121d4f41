//! Per-tenant share of the cluster's GPU-time, window by window (a window is one accounting
//! bucket, or several merged by the worker for a long run), as stacked areas, with what
//! each tenant deserved (rate min(demand, quota)) drawn as dashed outlines stacked in the same
//! order: a band thinner than its dashed band is a tenant served below its due.

use yew::prelude::*;

use super::colours::tenant_colour;
use crate::components::timeline::Shared;
use crate::worker::ClusterRun;

/// Properties of [`ShareChart`].
#[derive(Properties, PartialEq)]
pub struct ShareChartProps {
    /// Every policy's run.
    pub runs: Shared<Vec<ClusterRun>>,
    /// The run drawn.
    pub index: usize,
    /// Tenant names.
    pub tenants: Shared<Vec<String>>,
    /// A time to mark, ns.
    pub marker_ns: u64,
}

/// Tenants drawn separately; the rest are summed into one band.
const SHOWN: usize = 10;
const W: f64 = 720.0;
const H: f64 = 260.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 8.0;
const BOTTOM: f64 = 32.0;

/// What the chart draws, computed once per run.
#[derive(PartialEq)]
struct Bands {
    /// (tenant index or None for "others", label).
    groups: Vec<(Option<u32>, String)>,
    /// SVG polygon points of each used band.
    used: Vec<String>,
    /// SVG polyline points of each group's cumulative deserved top edge.
    deserved: Vec<String>,
    /// Last sample time, h.
    x_max_h: f64,
    /// Length of one drawn window (the time between the first two samples), h.
    window_h: f64,
}

fn bands(run: &ClusterRun, names: &[String]) -> Bands {
    let samples = &run.samples;
    let tenants = run.tenant_count;
    let mut totals: Vec<(f64, usize)> = (0..tenants)
        .map(|u| {
            let used: f64 = samples
                .iter()
                .map(|s| s.tenant_used_share.get(u).copied().unwrap_or(0.0))
                .sum();
            (used, u)
        })
        .collect();
    totals.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let shown: Vec<usize> = totals.iter().take(SHOWN).map(|t| t.1).collect();
    let mut groups: Vec<(Option<u32>, String)> = shown
        .iter()
        .map(|&u| {
            let name = names
                .get(u)
                .cloned()
                .unwrap_or_else(|| format!("tenant {u}"));
            (Some(u as u32), name)
        })
        .collect();
    if tenants > SHOWN {
        groups.push((None, format!("{} other tenants", tenants - SHOWN)));
    }
    let value = |s: &[f64], g: &Option<u32>| match g {
        Some(u) => s.get(*u as usize).copied().unwrap_or(0.0),
        None => (0..tenants)
            .filter(|u| !shown.contains(u))
            .map(|u| s.get(u).copied().unwrap_or(0.0))
            .sum(),
    };
    let x_max_h = samples
        .last()
        .map_or(1.0, |s| s.t_ns as f64 / 3.6e12)
        .max(1e-9);
    let sx = |t_ns: u64| LEFT + t_ns as f64 / 3.6e12 / x_max_h * (W - LEFT - RIGHT);
    let sy = |share: f64| H - BOTTOM - share.clamp(0.0, 1.0) * (H - TOP - BOTTOM);
    let mut below_used = vec![0.0; samples.len()];
    let mut below_des = vec![0.0; samples.len()];
    let mut used = Vec::new();
    let mut deserved = Vec::new();
    for g in &groups {
        let mut top = String::new();
        let mut bottom = Vec::new();
        let mut des = String::new();
        for (i, s) in samples.iter().enumerate() {
            // A sample closes the bucket that ended at its time: draw it over that bucket.
            let u = value(&s.tenant_used_share, &g.0);
            let d = value(&s.tenant_deserved_share, &g.0);
            let x = sx(s.t_ns);
            let x_prev = if i == 0 {
                LEFT
            } else {
                sx(samples[i - 1].t_ns)
            };
            top.push_str(&format!(
                "{x_prev:.1},{:.1} {x:.1},{:.1} ",
                sy(below_used[i] + u),
                sy(below_used[i] + u)
            ));
            bottom.push((x_prev, x, sy(below_used[i])));
            des.push_str(&format!(
                "{x_prev:.1},{:.1} {x:.1},{:.1} ",
                sy(below_des[i] + d),
                sy(below_des[i] + d)
            ));
            below_used[i] += u;
            below_des[i] += d;
        }
        for (x_prev, x, y) in bottom.into_iter().rev() {
            top.push_str(&format!("{x:.1},{y:.1} {x_prev:.1},{y:.1} "));
        }
        used.push(top);
        deserved.push(des);
    }
    let window_h = match samples.as_slice() {
        [a, b, ..] => b.t_ns.saturating_sub(a.t_ns) as f64 / 3.6e12,
        _ => x_max_h,
    };
    Bands {
        groups,
        used,
        deserved,
        x_max_h,
        window_h,
    }
}

/// `1 hour`, `7 hours`, `1.5 hours`.
fn hours(h: f64) -> String {
    if (h - 1.0).abs() < 1e-9 {
        "one hour".to_string()
    } else if (h - h.round()).abs() < 1e-9 {
        format!("{h:.0} hours")
    } else {
        format!("{h:.2} hours")
    }
}

/// The stacked share chart.
#[function_component(ShareChart)]
pub fn share_chart(props: &ShareChartProps) -> Html {
    let bands = use_memo(
        (props.runs.clone(), props.index, props.tenants.clone()),
        |(runs, index, tenants)| runs.0.get(*index).map(|r| bands(r, &tenants.0)),
    );
    let Some(b) = bands.as_ref() else {
        return html! {};
    };
    if b.used.is_empty() {
        return html! {};
    }
    let sx = |h: f64| LEFT + h / b.x_max_h * (W - LEFT - RIGHT);
    let marker = sx(props.marker_ns as f64 / 3.6e12).min(W - RIGHT);
    let colour = |g: &Option<u32>| g.map_or_else(|| "#94a3b8".to_string(), tenant_colour);
    let y_ticks = [0.0, 0.25, 0.5, 0.75, 1.0];
    let x_ticks: Vec<f64> = (0..=4).map(|k| b.x_max_h * f64::from(k) / 4.0).collect();
    html! {
        <figure class="chart wide" id="tenant-share-chart">
            <figcaption>{ format!("Share of the cluster's GPU-time per tenant, {} at a time (filled: used; dashed: deserved)", hours(b.window_h)) }</figcaption>
            <svg viewBox={format!("0 0 {W} {H}")} role="img" aria-label="stacked per-tenant share of GPU-time">
                { for y_ticks.iter().map(|&v| {
                    let y = H - BOTTOM - v * (H - TOP - BOTTOM);
                    html! { <>
                        <line class="grid" x1={LEFT.to_string()} x2={(W - RIGHT).to_string()} y1={y.to_string()} y2={y.to_string()} />
                        <text class="tick" x={(LEFT - 4.0).to_string()} y={(y + 3.0).to_string()} text-anchor="end">{ format!("{:.0} %", v * 100.0) }</text>
                    </> }
                }) }
                { for x_ticks.iter().map(|&h| html! {
                    <text class="tick" x={sx(h).to_string()} y={(H - BOTTOM + 14.0).to_string()} text-anchor="middle">{ format!("{h:.0}") }</text>
                }) }
                <text class="axis-label" x={f64::midpoint(LEFT, W).to_string()} y={(H - 4.0).to_string()} text-anchor="middle">{ "time (h)" }</text>
                { for b.groups.iter().zip(&b.used).map(|(g, pts)| html! {
                    <polygon points={pts.clone()} fill={colour(&g.0)} fill-opacity="0.85" stroke="none" />
                }) }
                { for b.groups.iter().zip(&b.deserved).map(|(g, pts)| html! {
                    <polyline points={pts.clone()} fill="none" stroke={colour(&g.0)} stroke-width="1.5" stroke-dasharray="4 3" />
                }) }
                <line class="marker" x1={marker.to_string()} x2={marker.to_string()} y1={TOP.to_string()} y2={(H - BOTTOM).to_string()} stroke="currentColor" stroke-width="1.5" />
                <line class="axis" x1={LEFT.to_string()} x2={LEFT.to_string()} y1={TOP.to_string()} y2={(H - BOTTOM).to_string()} />
                <line class="axis" x1={LEFT.to_string()} x2={(W - RIGHT).to_string()} y1={(H - BOTTOM).to_string()} y2={(H - BOTTOM).to_string()} />
            </svg>
            <ul class="legend">
                { for b.groups.iter().map(|(g, name)| html! {
                    <li><span class="swatch" style={format!("background:{}", colour(g))}></span>{ name.clone() }</li>
                }) }
            </ul>
        </figure>
    }
}
