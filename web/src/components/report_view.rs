//! The generic report view: metrics with units, tables, charts, timelines and findings. Every
//! lab shows its Report through this one component.

use std::collections::BTreeMap;
use std::rc::Rc;

use bubblelab_core::report::{format_number, Report, Series};
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
}

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
    html! {
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
    let report = &props.report.0;
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
    html! {
        <div class="report">
            <h2>{ report.title.clone() }</h2>
            if !report.findings.is_empty() {
                <ul class="findings">
                    { for report.findings.iter().map(|f| html! { <li>{ f.clone() }</li> }) }
                </ul>
            }
            <div class="tables">
                { for report.tables.iter().enumerate().map(|(i, _)| html! {
                    <TableView report={props.report.clone()} index={i} />
                }) }
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
            <div class="charts">
                { for chart_order.iter().map(|key| html! {
                    <LineChart title={title_of(key)} series={charts[key].clone()} />
                }) }
            </div>
            { for timelines.iter().map(|t| html! { <TimelineView timeline={t.clone()} /> }) }
        </div>
    }
}
