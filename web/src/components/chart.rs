//! Line charts of a Report's series, drawn as SVG. Series with the same `chart` key share one
//! chart; each gets its Report-wide colour (`Report::series_colours`, so a policy keeps its
//! colour from chart to chart) and a legend entry. Sparse curves mark every point; dense ones
//! are lines only.

use bubblelab_core::report::{format_number, Series};
use yew::prelude::*;

use super::axis;

/// Curves with more points than this are drawn as lines without point markers.
const MARKED_POINTS: usize = 40;

/// Properties of [`LineChart`].
#[derive(Properties, PartialEq)]
pub struct LineChartProps {
    /// Chart title.
    pub title: AttrValue,
    /// The curves (same axes).
    pub series: Vec<Series>,
    /// The colour of each curve, in `series` order.
    pub colours: Vec<String>,
}

const W: f64 = 520.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

/// One chart of curves with axes, ticks and a legend.
#[function_component(LineChart)]
pub fn line_chart(props: &LineChartProps) -> Html {
    let points = props.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) =
        (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, f64::NEG_INFINITY);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() || !x1.is_finite() || !y1.is_finite() {
        return html! {};
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    // Round the value axis out to whole ticks, so the frame's edges carry labels.
    let y_step = axis::nice_step(y1 - y0, 4.0);
    y0 = (y0 / y_step).floor() * y_step;
    y1 = (y1 / y_step).ceil() * y_step;
    let colour_of = |i: usize| {
        props
            .colours
            .get(i)
            .cloned()
            .unwrap_or_else(|| "#4b5563".into())
    };
    // Curves of one colour in one chart — one owner's curves (a controller's window and its
    // active agents), or owners past the palette's eight, whose colours repeat — differ by
    // dash: solid, dashed, dotted, dash-dot, long dash.
    let dash_of = |i: usize| {
        let colour = colour_of(i);
        match (0..i).filter(|&j| colour_of(j) == colour).count() {
            0 => None,
            n => Some(["7 4", "2 3", "7 3 2 3", "12 4"][(n - 1) % 4]),
        }
    };
    let sx = move |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let sy = move |y: f64| H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    let first = props.series.first();
    let x_label = first.map(|s| s.x_label.clone()).unwrap_or_default();
    let y_label = first.map(|s| s.y_label.clone()).unwrap_or_default();
    // Stage, iteration or log2-size axes: whole-number ticks, at most about nine of them.
    let integer_x = props
        .series
        .iter()
        .all(|s| s.points.iter().all(|p| p.0.fract() == 0.0))
        && x1 - x0 <= 4096.0;
    let x_ticks: Vec<(f64, String)> = if integer_x {
        let step = axis::nice_step(x1 - x0, 8.0).max(1.0);
        axis::ticks(x0, x1, step)
            .into_iter()
            .map(|v| (v, format!("{v:.0}")))
            .collect()
    } else {
        axis::value_ticks(x0, x1, 5.0)
    };
    let y_ticks = axis::value_ticks(y0, y1, 4.0);
    let table = data_table(&props.title, &x_label, &y_label, &props.series);
    html! {
        <figure class="chart">
            <figcaption>{ props.title.clone() }</figcaption>
            <svg viewBox={format!("0 0 {W} {H}")} role="img" aria-label={props.title.clone()}>
                <line class="axis" x1={LEFT.to_string()} y1={(H - BOTTOM).to_string()} x2={(W - RIGHT).to_string()} y2={(H - BOTTOM).to_string()} />
                <line class="axis" x1={LEFT.to_string()} y1={TOP.to_string()} x2={LEFT.to_string()} y2={(H - BOTTOM).to_string()} />
                { for y_ticks.iter().map(|(v, label)| html! {
                    <>
                        <line class="grid" x1={LEFT.to_string()} x2={(W - RIGHT).to_string()} y1={sy(*v).to_string()} y2={sy(*v).to_string()} />
                        <text class="tick" x={(LEFT - 4.0).to_string()} y={(sy(*v) + 4.0).to_string()} text-anchor="end">{ label.clone() }</text>
                    </>
                }) }
                { for x_ticks.iter().map(|(v, label)| html! {
                    <text class="tick" x={sx(*v).to_string()} y={(H - BOTTOM + 14.0).to_string()} text-anchor="middle">{ label.clone() }</text>
                }) }
                <text class="axis-label" x={((LEFT + W - RIGHT) / 2.0).to_string()} y={(H - 6.0).to_string()} text-anchor="middle">{ x_label }</text>
                <text class="axis-label" transform={format!("translate(12 {}) rotate(-90)", (TOP + H - BOTTOM) / 2.0)} text-anchor="middle">{ y_label }</text>
                { for props.series.iter().enumerate().map(|(i, s)| {
                    let colour = colour_of(i);
                    let path: Vec<String> = s.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y))).collect();
                    let marked = if s.points.len() <= MARKED_POINTS { s.points.as_slice() } else { &[] };
                    html! {
                        <g>
                            <polyline fill="none" stroke={colour.clone()} stroke-width="2" stroke-dasharray={dash_of(i)} points={path.join(" ")}>
                                <title>{ s.name.clone() }</title>
                            </polyline>
                            { for marked.iter().map(|&(x, y)| html! {
                                <circle cx={format!("{:.1}", sx(x))} cy={format!("{:.1}", sy(y))} r="2.5" fill={colour.clone()}>
                                    <title>{ format!("{}: ({}, {})", s.name, format_number(x), format_number(y)) }</title>
                                </circle>
                            }) }
                        </g>
                    }
                }) }
            </svg>
            <ul class="legend">
                { for props.series.iter().enumerate().map(|(i, s)| html! {
                    <li><span class="swatch" style={match dash_of(i) {
                        None => format!("background:{}", colour_of(i)),
                        Some(_) => format!("background:repeating-linear-gradient(90deg,{0} 0 3px,transparent 3px 5px)", colour_of(i)),
                    }}></span>{ s.name.clone() }</li>
                }) }
            </ul>
            { table }
        </figure>
    }
}

/// The chart's text alternative: each curve's extent and where it ends.
fn data_table(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Html {
    let pair = |p: Option<&(f64, f64)>| {
        p.map_or_else(String::new, |&(x, y)| {
            format!("{}, {}", format_number(x), format_number(y))
        })
    };
    html! {
        <details class="as-text">
            <summary>{ "As a table" }</summary>
            <table>
                <caption>{ format!("{title}: each curve's points ({x_label}, {y_label})") }</caption>
                <thead><tr>
                    <th scope="col">{ "curve" }</th>
                    <th scope="col">{ "points" }</th>
                    <th scope="col">{ "first" }</th>
                    <th scope="col">{ "last" }</th>
                    <th scope="col">{ format!("lowest {y_label}") }</th>
                    <th scope="col">{ format!("highest {y_label}") }</th>
                </tr></thead>
                <tbody>
                    { for series.iter().map(|s| {
                        let low = s.points.iter().min_by(|a, b| a.1.total_cmp(&b.1));
                        let high = s.points.iter().max_by(|a, b| a.1.total_cmp(&b.1));
                        html! {
                            <tr>
                                <th scope="row">{ s.name.clone() }</th>
                                <td>{ s.points.len() }</td>
                                <td>{ pair(s.points.first()) }</td>
                                <td>{ pair(s.points.last()) }</td>
                                <td>{ pair(low) }</td>
                                <td>{ pair(high) }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </details>
    }
}
