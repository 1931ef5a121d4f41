//! The one timeline renderer: lanes of spans and counter tracks on a canvas, with zoom (wheel or
//! buttons), pan (drag), hover details and a legend. Only spans inside the visible window are
//! visited (binary search on the sorted, non-overlapping spans of a lane) and spans narrower
//! than a pixel that land on an already painted pixel are skipped, so 50,000 spans stay smooth.

use std::rc::Rc;

use super::axis;
use bubblelab_core::report::{Span, SpanKind, Timeline};
use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

/// A shared value compared by pointer, so large timelines are not compared span by span.
#[derive(Clone, Debug)]
pub struct Shared<T>(pub Rc<T>);

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Properties of [`TimelineView`].
#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    /// The timeline to draw.
    pub timeline: Shared<Timeline>,
    /// End of the time axis when zoomed out, ns, when it must match other timelines' (two
    /// runs compared); by default the timeline's own last span.
    #[prop_or_default]
    pub axis_end_ns: Option<u64>,
}

const LABEL_W: f64 = 118.0;
const AXIS_H: f64 = 22.0;
/// Lane height, px, while the lanes fit; many lanes (agents, tenants) get thinner ones.
const LANE_H: f64 = 20.0;
/// The height many lanes share before they get thinner, px.
const LANES_BUDGET_PX: f64 = 640.0;
const COUNTER_H: f64 = 34.0;
/// Narrowest visible window, ns.
const MIN_WINDOW_NS: f64 = 1_000.0;
/// Drawn for a category the lab did not declare (a test forbids it for every preset).
const UNDECLARED: &str = "#000000";

/// Height of one lane of `timeline`, px: 20 while the lanes fit in 640 px, thinner (down to
/// 4 px) past that, so 256 agents stay one screen tall.
fn lane_h(timeline: &Timeline) -> f64 {
    let n = timeline.lanes.len().max(1) as f64;
    if n * LANE_H <= LANES_BUDGET_PX {
        LANE_H
    } else {
        (LANES_BUDGET_PX / n).max(4.0).floor()
    }
}

/// The fill colour of category `cat` on `timeline`.
fn colour<'a>(timeline: &'a Timeline, cat: &str) -> &'a str {
    timeline.kind(cat).map_or(UNDECLARED, |k| k.colour.as_str())
}

/// Whether text on `colour` should be dark: light fills (`#rrggbb` by luma, `hsl()` by
/// lightness) get dark text.
fn dark_text_on(colour: &str) -> bool {
    if let Some(hex) = colour.strip_prefix('#') {
        let ch = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
        let luma = 0.299 * f64::from(ch(0)) + 0.587 * f64::from(ch(2)) + 0.114 * f64::from(ch(4));
        return luma > 150.0;
    }
    colour
        .rsplit(',')
        .next()
        .and_then(|l| l.trim().trim_end_matches([')', '%']).parse::<f64>().ok())
        .is_some_and(|l| l >= 60.0)
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    start_ns: f64,
    end_ns: f64,
}

/// The end of `timeline`'s last span or counter point, ns (at least 1).
#[must_use]
pub fn extent(timeline: &Timeline) -> f64 {
    let lanes = timeline
        .lanes
        .iter()
        .filter_map(|l| l.spans.last().map(|s| (s.start_ns + s.dur_ns) as f64));
    let counters = timeline
        .counters
        .iter()
        .filter_map(|c| c.points.last().map(|p| p.0 as f64));
    lanes.chain(counters).fold(1.0, f64::max)
}

/// Index of the first span that ends after `t_ns` (spans sorted and non-overlapping).
fn first_visible(spans: &[Span], t_ns: f64) -> usize {
    spans.partition_point(|s| ((s.start_ns + s.dur_ns) as f64) < t_ns)
}

/// Formats a time for axis ticks and tooltips.
fn format_time(ns: f64) -> String {
    if ns.abs() >= 36e12 {
        format!("{:.1} h", ns / 3.6e12)
    } else if ns.abs() >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns.abs() >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns.abs() >= 1e3 {
        format!("{:.3} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn draw(canvas: &HtmlCanvasElement, timeline: &Timeline, window: Window) {
    let Ok(Some(ctx)) = canvas.get_context("2d") else {
        return;
    };
    let Ok(ctx) = ctx.dyn_into::<CanvasRenderingContext2d>() else {
        return;
    };
    let css_w = f64::from(canvas.client_width().max(300));
    let css_h = height_px(timeline);
    let lane_px = lane_h(timeline);
    // Lane names every `label_every` lanes where lanes are thinner than the text.
    let label_every = (12.0 / lane_px).ceil().max(1.0) as usize;
    let dpr = gloo::utils::window().device_pixel_ratio().max(1.0);
    canvas.set_width((css_w * dpr) as u32);
    canvas.set_height((css_h * dpr) as u32);
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, css_w, css_h);
    ctx.set_font("11px system-ui, sans-serif");
    let plot_w = css_w - LABEL_W - 4.0;
    let span_ns = (window.end_ns - window.start_ns).max(1.0);
    let x_of = |t: f64| LABEL_W + (t - window.start_ns) / span_ns * plot_w;

    // Axis.
    let step = axis::nice_step(span_ns, plot_w / 140.0).max(1.0);
    let unit = axis::TimeUnit::for_axis(window.end_ns, step);
    let theme = super::canvas::Theme::of(canvas);
    ctx.set_fill_style_str(&theme.tick);
    ctx.set_stroke_style_str(&theme.line);
    for t in axis::ticks(window.start_ns, window.end_ns, step) {
        let x = x_of(t);
        ctx.begin_path();
        ctx.move_to(x, AXIS_H - 4.0);
        ctx.line_to(x, css_h);
        ctx.stroke();
        let _ = ctx.fill_text(&unit.format(t), x + 2.0, 12.0);
    }

    // Lanes.
    for (i, lane) in timeline.lanes.iter().enumerate() {
        let y = AXIS_H + lane_px * i as f64;
        if i % label_every == 0 {
            ctx.set_fill_style_str(&theme.fg);
            let _ = ctx.fill_text(&lane.name, 4.0, y + lane_px.min(LANE_H) * 0.5 + 4.0);
        }
        let pad = if lane_px >= 10.0 { 2.0 } else { 0.5 };
        let mut last_px = f64::NEG_INFINITY;
        for span in &lane.spans[first_visible(&lane.spans, window.start_ns)..] {
            let start = span.start_ns as f64;
            if start > window.end_ns {
                break;
            }
            let x0 = x_of(start).max(LABEL_W);
            let x1 = x_of(start + span.dur_ns as f64).min(css_w);
            let w = x1 - x0;
            if w < 1.0 && x0.floor() <= last_px {
                continue;
            }
            last_px = x0.floor();
            let fill = colour(timeline, &span.cat);
            ctx.set_fill_style_str(fill);
            ctx.fill_rect(x0, y + pad, w.max(1.0), lane_px - 2.0 * pad);
            if w > 24.0 && lane_px >= LANE_H && !span.cat.starts_with("bubble") {
                ctx.set_fill_style_str(if dark_text_on(fill) {
                    "#0f172a"
                } else {
                    "#ffffff"
                });
                if let Ok(m) = ctx.measure_text(&span.name) {
                    if m.width() + 4.0 < w {
                        let _ = ctx.fill_text(&span.name, x0 + 2.0, y + 14.0);
                    }
                }
            }
        }
    }

    // Counter tracks: a step line scaled to each track's own maximum.
    let top = AXIS_H + lane_px * timeline.lanes.len() as f64;
    for (i, counter) in timeline.counters.iter().enumerate() {
        let y = top + COUNTER_H * i as f64;
        let max = counter.points.iter().map(|p| p.1).fold(0.0, f64::max);
        ctx.set_fill_style_str(&theme.fg);
        let _ = ctx.fill_text(&counter.name, 4.0, y + 14.0);
        if max <= 0.0 {
            continue;
        }
        let y_of = |v: f64| y + COUNTER_H - 4.0 - v / max * (COUNTER_H - 8.0);
        ctx.set_stroke_style_str("#0ea5e9");
        ctx.begin_path();
        let mut prev = counter.points.first().map_or(0.0, |p| p.1);
        ctx.move_to(LABEL_W, y_of(prev));
        for &(t, v) in &counter.points {
            let x = x_of(t as f64).clamp(LABEL_W, css_w);
            ctx.line_to(x, y_of(prev));
            ctx.line_to(x, y_of(v));
            prev = v;
        }
        ctx.line_to(css_w, y_of(prev));
        ctx.stroke();
    }
}

/// CSS height of the canvas for a timeline.
fn height_px(timeline: &Timeline) -> f64 {
    AXIS_H
        + lane_h(timeline) * timeline.lanes.len() as f64
        + COUNTER_H * timeline.counters.len() as f64
        + 4.0
}

#[derive(Clone, PartialEq)]
struct Hover {
    left_px: f64,
    top_px: f64,
    text: String,
}

fn hover_at(timeline: &Timeline, window: Window, plot_w: f64, x: f64, y: f64) -> Option<String> {
    if x < LABEL_W || y < AXIS_H {
        return None;
    }
    let t = window.start_ns + (x - LABEL_W) / plot_w * (window.end_ns - window.start_ns);
    let lane_px = lane_h(timeline);
    let lane_index = ((y - AXIS_H) / lane_px).floor() as usize;
    if let Some(lane) = timeline.lanes.get(lane_index) {
        let i = first_visible(&lane.spans, t);
        let span = lane.spans.get(i).filter(|s| (s.start_ns as f64) <= t)?;
        return Some(format!(
            "{} · {} · {} · start {} · {}",
            span.name,
            timeline
                .kind(&span.cat)
                .map_or(span.cat.as_str(), |k| k.label.as_str()),
            lane.name,
            format_time(span.start_ns as f64),
            format_time(span.dur_ns as f64)
        ));
    }
    let counter_index =
        ((y - AXIS_H - lane_px * timeline.lanes.len() as f64) / COUNTER_H).floor() as usize;
    let counter = timeline.counters.get(counter_index)?;
    let i = counter.points.partition_point(|p| (p.0 as f64) <= t);
    let value = counter.points.get(i.checked_sub(1)?)?.1;
    Some(format!(
        "{} at {}: {} {}",
        counter.name,
        format_time(t),
        bubblelab_core::report::format_number(value),
        counter.unit
    ))
}

/// A zoomable, pannable canvas timeline with hover details and a legend.
#[function_component(TimelineView)]
pub fn timeline_view(props: &TimelineProps) -> Html {
    let timeline = props.timeline.clone();
    let full = Window {
        start_ns: 0.0,
        end_ns: props.axis_end_ns.map_or_else(
            || extent(&timeline.0),
            |end| (end as f64).max(extent(&timeline.0)),
        ),
    };
    let window = use_state(|| full);
    let canvas_ref = use_node_ref();
    let drag = use_mut_ref(|| None::<(f64, Window)>);
    let hover = use_state(|| None::<Hover>);
    let resize_tick = use_state(|| 0u32);

    // A new timeline starts fully zoomed out.
    {
        let window = window.clone();
        use_effect_with(timeline.clone(), move |_| {
            window.set(full);
            || ()
        });
    }
    {
        let resize_tick = resize_tick.clone();
        use_effect_with((), move |()| {
            let listener = EventListener::new(&gloo::utils::window(), "resize", move |_| {
                resize_tick.set(*resize_tick + 1);
            });
            move || drop(listener)
        });
    }
    {
        let canvas_ref = canvas_ref.clone();
        use_effect_with(
            (timeline.clone(), *window, *resize_tick),
            move |(timeline, window, _)| {
                if let Some(canvas) = canvas_ref.cast::<HtmlCanvasElement>() {
                    draw(&canvas, &timeline.0, *window);
                }
                || ()
            },
        );
    }

    let plot_width = {
        let canvas_ref = canvas_ref.clone();
        move || {
            canvas_ref
                .cast::<HtmlCanvasElement>()
                .map_or(600.0, |c| f64::from(c.client_width().max(300)))
                - LABEL_W
                - 4.0
        }
    };
    let zoom = {
        let window = window.clone();
        move |factor: f64, anchor_frac: f64| {
            let w = *window;
            let span = w.end_ns - w.start_ns;
            let new_span = (span * factor).clamp(MIN_WINDOW_NS.min(full.end_ns), full.end_ns);
            let anchor = w.start_ns + span * anchor_frac;
            let start = (anchor - new_span * anchor_frac).clamp(0.0, full.end_ns - new_span);
            window.set(Window {
                start_ns: start,
                end_ns: start + new_span,
            });
        }
    };
    let onwheel = {
        let zoom = zoom.clone();
        let plot_width = plot_width.clone();
        Callback::from(move |e: WheelEvent| {
            e.prevent_default();
            let frac = ((f64::from(e.offset_x()) - LABEL_W) / plot_width()).clamp(0.0, 1.0);
            zoom((e.delta_y() * 0.002).exp(), frac);
        })
    };
    let onmousedown = {
        let drag = drag.clone();
        let window = window.clone();
        Callback::from(move |e: MouseEvent| {
            *drag.borrow_mut() = Some((f64::from(e.client_x()), *window));
        })
    };
    let end_drag = {
        let drag = drag.clone();
        Callback::from(move |_: MouseEvent| *drag.borrow_mut() = None)
    };
    let onmousemove = {
        let drag = drag.clone();
        let window = window.clone();
        let hover = hover.clone();
        let timeline = timeline.clone();
        let plot_width = plot_width.clone();
        Callback::from(move |e: MouseEvent| {
            let plot_w = plot_width();
            if let Some((x0, at)) = *drag.borrow() {
                if e.buttons() & 1 == 1 {
                    let span = at.end_ns - at.start_ns;
                    let shift = (x0 - f64::from(e.client_x())) / plot_w * span;
                    let start = (at.start_ns + shift).clamp(0.0, (full.end_ns - span).max(0.0));
                    window.set(Window {
                        start_ns: start,
                        end_ns: start + span,
                    });
                    return;
                }
            }
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            hover.set(
                hover_at(&timeline.0, *window, plot_w, x, y).map(|text| Hover {
                    left_px: x + 12.0,
                    top_px: y + 12.0,
                    text,
                }),
            );
        })
    };
    let onmouseleave = {
        let hover = hover.clone();
        let drag = drag.clone();
        Callback::from(move |_: MouseEvent| {
            hover.set(None);
            *drag.borrow_mut() = None;
        })
    };
    let reset = {
        let window = window.clone();
        Callback::from(move |_: MouseEvent| window.set(full))
    };
    // Keyboard: + and − zoom about the middle, arrows pan by a tenth, Home shows everything.
    let onkeydown = {
        let zoom = zoom.clone();
        let window = window.clone();
        Callback::from(move |e: KeyboardEvent| {
            let w = *window;
            let span = w.end_ns - w.start_ns;
            let pan = |by: f64| {
                let start = (w.start_ns + by).clamp(0.0, (full.end_ns - span).max(0.0));
                Window {
                    start_ns: start,
                    end_ns: start + span,
                }
            };
            match e.key().as_str() {
                "+" | "=" => zoom(0.5, 0.5),
                "-" | "_" => zoom(2.0, 0.5),
                "ArrowLeft" => window.set(pan(-span / 10.0)),
                "ArrowRight" => window.set(pan(span / 10.0)),
                "Home" | "0" => window.set(full),
                _ => return,
            }
            e.prevent_default();
        })
    };
    let zoom_in = {
        let zoom = zoom.clone();
        Callback::from(move |_: MouseEvent| zoom(0.5, 0.5))
    };
    let zoom_out = Callback::from(move |_: MouseEvent| zoom(2.0, 0.5));
    // Kinds with a meaning of their own are explained in the legend; an open-ended set
    // (tenants) shares one meaning, said once.
    let kinds: &[SpanKind] = &timeline.0.kinds;
    let shared_meaning = kinds.len() > 1 && kinds.iter().all(|k| k.meaning == kinds[0].meaning);
    let span_count: usize = timeline.0.lanes.iter().map(|l| l.spans.len()).sum();
    html! {
        <figure class="timeline">
            <figcaption>
                <strong>{ timeline.0.name.clone() }</strong>
                <span class="muted">{ {
                    let unit = axis::TimeUnit::for_axis(window.end_ns, axis::nice_step(window.end_ns - window.start_ns, 100.0));
                    format!(" · {span_count} spans · showing {} – {}", unit.format(window.start_ns), unit.format(window.end_ns))
                } }</span>
                <span class="zoom">
                    <button onclick={zoom_in} title="Zoom in">{ "+" }</button>
                    <button onclick={zoom_out} title="Zoom out">{ "−" }</button>
                    <button onclick={reset.clone()} title="Show everything">{ "reset" }</button>
                </span>
            </figcaption>
            <div class="canvas-wrap">
                <canvas ref={canvas_ref} style={format!("width:100%;height:{}px", height_px(&timeline.0))}
                    tabindex="0" role="img" aria-label={summary(&timeline.0)}
                    aria-keyshortcuts="+ - ArrowLeft ArrowRight Home"
                    {onwheel} {onmousedown} onmouseup={end_drag} {onmousemove} {onmouseleave} ondblclick={reset} {onkeydown} />
                if let Some(h) = &*hover {
                    <div class="tooltip" style={format!("left:{}px;top:{}px", h.left_px, h.top_px)}>{ h.text.clone() }</div>
                }
            </div>
            <ul class="legend">
                { for kinds.iter().map(|k| html! {
                    <li title={k.meaning.clone()} data-kind={k.cat.clone()}>
                        <span class="swatch" style={format!("background:{}", k.colour)}></span>
                        { k.label.clone() }
                        if !shared_meaning {
                            <span class="meaning">{ format!(": {}", k.meaning) }</span>
                        }
                    </li>
                }) }
                if shared_meaning {
                    <li class="meaning">{ kinds[0].meaning.clone() }</li>
                }
            </ul>
            <TimelineTable timeline={timeline.clone()} />
        </figure>
    }
}

/// The timeline in one sentence, for screen readers (the canvas' ARIA label).
fn summary(timeline: &Timeline) -> String {
    let end = timeline
        .lanes
        .iter()
        .filter_map(|l| l.spans.last())
        .map(|s| (s.start_ns + s.dur_ns) as f64)
        .fold(0.0, f64::max);
    let unit = axis::TimeUnit::for_axis(end, end / 100.0);
    format!(
        "Timeline {}: {} lanes over {}. Keys: + and − zoom, arrows pan, Home shows everything. The table below gives each lane's time per category.",
        timeline.name,
        timeline.lanes.len(),
        unit.format(end)
    )
}

/// Lanes shown in the text table at most (the rest are counted).
const TABLE_LANES: usize = 200;

/// Properties of [`TimelineTable`].
#[derive(Properties, PartialEq)]
struct TimelineTableProps {
    timeline: Shared<Timeline>,
}

/// The timeline's text alternative: per lane, the time spent in each category.
#[function_component(TimelineTable)]
fn timeline_table(props: &TimelineTableProps) -> Html {
    let timeline = &props.timeline.0;
    let mut cats: Vec<String> = timeline.kinds.iter().map(|k| k.cat.clone()).collect();
    for span in timeline.lanes.iter().flat_map(|l| &l.spans) {
        if !cats.contains(&span.cat) {
            cats.push(span.cat.clone());
        }
    }
    let label = |cat: &str| {
        timeline
            .kinds
            .iter()
            .find(|k| k.cat == cat)
            .map_or_else(|| cat.to_string(), |k| k.label.clone())
    };
    let rows: Vec<(String, Vec<f64>)> = timeline
        .lanes
        .iter()
        .take(TABLE_LANES)
        .map(|lane| {
            let mut totals = vec![0.0; cats.len()];
            for span in &lane.spans {
                if let Some(i) = cats.iter().position(|c| *c == span.cat) {
                    totals[i] += span.dur_ns as f64;
                }
            }
            (lane.name.clone(), totals)
        })
        .collect();
    let largest = rows
        .iter()
        .flat_map(|r| r.1.iter().copied())
        .fold(0.0, f64::max);
    let unit = axis::TimeUnit::for_axis(largest, largest / 100.0);
    let hidden = timeline.lanes.len().saturating_sub(TABLE_LANES);
    html! {
        <details class="as-text">
            <summary>{ "As a table" }</summary>
            <table>
                <caption>{ format!("{}: time per lane and category ({})", timeline.name, unit.symbol) }</caption>
                <thead><tr>
                    <th scope="col">{ "lane" }</th>
                    { for cats.iter().map(|c| html! { <th scope="col">{ label(c) }</th> }) }
                </tr></thead>
                <tbody>
                    { for rows.iter().map(|(name, totals)| html! {
                        <tr>
                            <th scope="row">{ name.clone() }</th>
                            { for totals.iter().map(|&t| html! { <td>{ unit.format(t) }</td> }) }
                        </tr>
                    }) }
                </tbody>
            </table>
            if hidden > 0 {
                <p class="muted">{ format!("{hidden} more lanes not listed.") }</p>
            }
        </details>
    }
}
