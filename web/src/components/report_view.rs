//! The generic report view. Every lab shows its Report through this one component, picture
//! first: the findings, then the timelines and charts, then the comparison tables (each in its
//! own scrolling box), then the full metric list, collapsed. Many long timelines (one per
//! policy, each with a lane per tenant or agent) are shown one at a time behind a picker.

use std::collections::BTreeMap;
use std::rc::Rc;

use bubblelab_core::report::{format_number, Report, Series};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::chart::LineChart;
use super::timeline::{Shared, TimelineView};

/// Properties of [`ReportView`].
#[derive(Properties, PartialEq)]
pub struct ReportViewProps {
    /// The report to show.
    pub report: Shared<Report>,
    /// Chart titles by series chart key; charts without one use the key.
    #[prop_or_default]
    pub chart_titles: Vec<(String, String)>,
    /// Draw the charts before the timelines (labs whose main picture is a curve).
    #[prop_or_default]
    pub charts_first: bool,
    /// The page's own main picture (a cluster view, a GPU grid, pass-by-pass timelines),
    /// shown right under the findings.
    #[prop_or_default]
    pub picture: Html,
    /// Draw every timeline on one time axis (two runs compared).
    #[prop_or_default]
    pub shared_time_axis: bool,
}

/// Timelines are stacked while they hold at most this many lanes together; past it, one is
/// shown at a time.
const STACKED_LANES: usize = 48;

/// Rows a table shows before "show all" (long tables, e.g. every bubble window of a real log,
/// would bury the rest of the Report).
const ROWS_SHOWN: usize = 40;

/// Properties of [`TableView`].
#[derive(Properties, PartialEq)]
pub struct TableViewProps {
    /// The report holding the table.
    pub report: Shared<Report>,
    /// Index of the table in the report.
    pub index: usize,
}

/// One comparison table; past [`ROWS_SHOWN`] rows, a button shows the rest (the export holds
/// every row either way).
#[function_component(TableView)]
pub fn table_view(props: &TableViewProps) -> Html {
    let expanded = use_state(|| false);
    let Some(t) = props.report.0.tables.get(props.index) else {
        return html! {};
    };
    let long = t.rows.len() > ROWS_SHOWN;
    let shown = if long && !*expanded {
        ROWS_SHOWN
    } else {
        t.rows.len()
    };
    let on_toggle = {
        let expanded = expanded.clone();
        Callback::from(move |_: MouseEvent| expanded.set(!*expanded))
    };
    // A box that may scroll sideways takes focus, so the keyboard can scroll it (arrow keys).
    html! {
        <div class="table-scroll" tabindex="0" role="region" aria-label={t.title.clone()}>
        <table class="data" data-table={t.key.clone()}>
            <caption>{ t.title.clone() }</caption>
            <thead><tr>{ for t.columns.iter().map(|c| html! { <th>{ c.clone() }</th> }) }</tr></thead>
            <tbody>
                { for t.rows.iter().take(shown).map(|r| html! {
                    <tr>{ for r.iter().map(|c| html! { <td>{ c.display() }</td> }) }</tr>
                }) }
            </tbody>
            if long {
                <tfoot><tr><td colspan={t.columns.len().to_string()}>
                    <button type="button" class="show-rows" onclick={on_toggle}>
                        { if *expanded { format!("Show the first {ROWS_SHOWN} rows") } else { format!("Show all {} rows", t.rows.len()) } }
                    </button>
                </td></tr></tfoot>
            }
        </table>
        </div>
    }
}

/// Formats a metric for people: bytes in GiB/MiB, ratios as percent, others plainly.
fn display_value(value: f64, unit: &str) -> String {
    match unit {
        "bytes" => bubblelab_core::units::format_bytes(value),
        "ratio" => format!("{:.2}%", value * 100.0),
        "" | "count" => format_number(value),
        other => format!("{} {other}", format_number(value)),
    }
}

/// Shows a whole Report. Metric values carry `data-metric` (the key) and `data-value` (the exact
/// number) so tests and scripts read the numbers, not the formatting.
#[function_component(ReportView)]
pub fn report_view(props: &ReportViewProps) -> Html {
    let timelines = use_memo(props.report.clone(), |r| {
        r.0.timelines
            .iter()
            .map(|t| Shared(Rc::new(t.clone())))
            .collect::<Vec<_>>()
    });
    let picked = use_state(|| 0usize);
    let report = &props.report.0;
    let colours = report.series_colours();
    let colour_of = |name: &str| {
        colours
            .iter()
            .find(|(n, _)| *n == bubblelab_core::report::series_owner(name))
            .map_or_else(|| "#4b5563".to_string(), |(_, c)| c.clone())
    };
    let mut charts: BTreeMap<&str, Vec<Series>> = BTreeMap::new();
    let mut chart_order: Vec<&str> = Vec::new();
    for s in &report.series {
        if !charts.contains_key(s.chart.as_str()) {
            chart_order.push(&s.chart);
        }
        charts.entry(&s.chart).or_default().push(s.clone());
    }
    let title_of = |key: &str| {
        props
            .chart_titles
            .iter()
            .find(|(k, _)| k == key)
            .map_or_else(|| key.replace('_', " "), |(_, t)| t.clone())
    };
    let lanes: usize = timelines.iter().map(|t| t.0.lanes.len()).sum();
    let one_at_a_time = timelines.len() > 1 && lanes > STACKED_LANES;
    let shown = (*picked).min(timelines.len().saturating_sub(1));
    let axis_end_ns = props.shared_time_axis.then(|| {
        timelines
            .iter()
            .map(|t| super::timeline::extent(&t.0))
            .fold(1.0, f64::max) as u64
    });
    let timeline_view = if one_at_a_time {
        html! {
            <div class="timeline-picker">
                <div class="picker" role="tablist" aria-label="Timeline to show" onkeydown={tab_keys(picked.clone(), shown, timelines.len())}>
                    { for timelines.iter().enumerate().map(|(i, t)| {
                        let picked = picked.clone();
                        html! {
                            <button type="button" role="tab" aria-selected={(i == shown).to_string()}
                                tabindex={if i == shown { "0" } else { "-1" }} data-tab={i.to_string()}
                                class={classes!("tab", (i == shown).then_some("on"))}
                                onclick={Callback::from(move |_: MouseEvent| picked.set(i))}>
                                { t.0.name.clone() }
                            </button>
                        }
                    }) }
                </div>
                <TimelineView timeline={timelines[shown].clone()} {axis_end_ns} />
            </div>
        }
    } else {
        html! { { for timelines.iter().map(|t| html! { <TimelineView timeline={t.clone()} {axis_end_ns} /> }) } }
    };
    let chart_view = html! {
        <div class="charts">
            { for chart_order.iter().map(|key| {
                let series = charts[key].clone();
                let colours: Vec<String> = series.iter().map(|s| colour_of(&s.name)).collect();
                html! { <LineChart title={title_of(key)} {series} {colours} /> }
            }) }
        </div>
    };
    let (first, second) = if props.charts_first {
        (chart_view, timeline_view)
    } else {
        (timeline_view, chart_view)
    };
    html! {
        <div class="report">
            <h2>{ report.title.clone() }</h2>
            // Always rendered, and the picture always wrapped, so that nodes appearing later
            // keep their place (no conditional sibling next to a component).
            <ul class="findings" hidden={report.findings.is_empty()}>
                { for report.findings.iter().map(|f| html! { <li>{ f.clone() }</li> }) }
            </ul>
            <div class="picture">{ props.picture.clone() }</div>
            { first }
            { second }
            <div class="tables">
                { for report.tables.iter().enumerate().map(|(i, _)| html! {
                    <TableView report={props.report.clone()} index={i} />
                }) }
            </div>
            // The metric list is collapsed behind the comparison tables; a Report without
            // tables (the cost explorer's) is its metrics, shown open.
            <details class="all-metrics" open={report.tables.is_empty()}>
                <summary>{ format!("All {} metrics", report.metrics.len()) }</summary>
                <div class="table-scroll" tabindex="0" role="region" aria-label="All metrics">
                <table class="data metrics">
                    <caption>{ "Metrics" }</caption>
                    <thead><tr><th>{ "metric" }</th><th>{ "value" }</th></tr></thead>
                    <tbody>
                        { for report.metrics.iter().map(|m| html! {
                            <tr>
                                <td title={m.key.clone()}>{ m.label.clone() }</td>
                                <td data-metric={m.key.clone()} data-value={m.value.to_string()} data-unit={m.unit.clone()}>
                                    { display_value(m.value, &m.unit) }
                                </td>
                            </tr>
                        }) }
                    </tbody>
                </table>
                </div>
            </details>
        </div>
    }
}

/// The tab list's keys (the WAI-ARIA tabs pattern): ← → move to the previous or next tab and
/// show it, Home and End to the first and last; the tab moved to takes the focus.
fn tab_keys(picked: UseStateHandle<usize>, shown: usize, tabs: usize) -> Callback<KeyboardEvent> {
    Callback::from(move |e: KeyboardEvent| {
        let next = match e.key().as_str() {
            "ArrowRight" => (shown + 1) % tabs,
            "ArrowLeft" => (shown + tabs - 1) % tabs,
            "Home" => 0,
            "End" => tabs - 1,
            _ => return,
        };
        e.prevent_default();
        picked.set(next);
        let list: Option<web_sys::Element> = e.current_target().and_then(|t| t.dyn_into().ok());
        if let Some(tab) = list
            .and_then(|l| {
                l.query_selector(&format!("[data-tab=\"{next}\"]"))
                    .ok()
                    .flatten()
            })
            .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = tab.focus();
        }
    })
}
