//! The one Report type every lab returns, and its table/CSV renderings.
//!
//! A Report is plain data: named metrics with units, tables (comparisons live inside a Report,
//! not in the page), timelines (lanes of spans plus counter tracks), series ((x, y) curves) and
//! findings (short notes in plain language). The page, the CLI and the Chrome-trace writer all
//! read this one type.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Everything a lab run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// The lab that produced it (`pipeline`, …).
    pub lab: String,
    /// A one-line title for the run.
    pub title: String,
    /// Headline numbers, each with a unit.
    pub metrics: Vec<Metric>,
    /// Comparison tables (one row per policy or schedule).
    pub tables: Vec<Table>,
    /// Timelines, each a set of lanes on one time axis.
    pub timelines: Vec<Timeline>,
    /// Curves to chart.
    pub series: Vec<Series>,
    /// Short plain-language notes on what the numbers mean.
    pub findings: Vec<String>,
}

/// A named value with a unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    /// Stable machine key, e.g. `1f1b.bubble_ratio`.
    pub key: String,
    /// Human label, e.g. `1F1B bubble ratio`.
    pub label: String,
    /// The value in `unit`.
    pub value: f64,
    /// Unit: `ns`, `ms`, `bytes`, `ratio`, `count`, …
    pub unit: String,
}

/// A table of values; every row has one cell per column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// Stable key, e.g. `schedules`.
    pub key: String,
    /// Caption shown above it.
    pub title: String,
    /// Column headers, with units in the header text.
    pub columns: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<Cell>>,
}

/// One table cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    /// A number, shown with a few significant digits.
    Num(f64),
    /// Text.
    Text(String),
    /// No value (e.g. a closed form that does not apply): `—` in tables, empty in CSV, `null`
    /// in JSON.
    Missing,
}

impl Cell {
    /// The cell as display text.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            Cell::Num(v) => format_number(*v),
            Cell::Text(s) => s.clone(),
            Cell::Missing => "—".to_string(),
        }
    }
}

/// Formats a number for tables: integers plainly, others with four significant decimals.
#[must_use]
pub fn format_number(v: f64) -> String {
    if v.is_finite() && v == libm::trunc(v) && libm::fabs(v) < 1e15 {
        alloc::format!("{}", v as i64)
    } else if libm::fabs(v) >= 1000.0 {
        alloc::format!("{v:.1}")
    } else {
        alloc::format!("{v:.4}")
    }
}

/// Lanes of spans on one time axis, plus counter tracks (e.g. memory).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    /// Name of the timeline (a schedule, a rank, a run): a process in the Chrome trace.
    pub name: String,
    /// Lanes, top to bottom: threads in the Chrome trace.
    pub lanes: Vec<Lane>,
    /// Counter tracks.
    pub counters: Vec<CounterTrack>,
    /// What each span category of this timeline is, and its colour: the page's spans and
    /// legend, the Chrome trace and the CSV all read this one list. One entry per category
    /// that occurs, in the declaring lab's order.
    pub kinds: Vec<SpanKind>,
}

/// One category of span: its name in plain words, what it means and its colour.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpanKind {
    /// The [`Span::cat`] it describes.
    pub cat: String,
    /// Legend label, e.g. `forward`.
    pub label: String,
    /// One sentence on what the time is.
    pub meaning: String,
    /// CSS colour of its spans and legend swatch (`#rrggbb` or `hsl(…)`).
    pub colour: String,
    /// The nearest of the Chrome trace viewer's reserved colour names (the `cname` of its
    /// events; arbitrary colours are not part of the Trace Event Format).
    pub trace_colour: String,
}

/// A lab's declaration of one span kind, written once as a constant table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindDef {
    /// The span category.
    pub cat: &'static str,
    /// Legend label.
    pub label: &'static str,
    /// What the time is.
    pub meaning: &'static str,
    /// CSS colour, `#rrggbb`.
    pub colour: &'static str,
    /// Chrome trace viewer reserved colour name.
    pub trace_colour: &'static str,
}

impl KindDef {
    /// The owned kind a Report carries.
    #[must_use]
    pub fn to_kind(&self) -> SpanKind {
        SpanKind {
            cat: self.cat.to_string(),
            label: self.label.to_string(),
            meaning: self.meaning.to_string(),
            colour: self.colour.to_string(),
            trace_colour: self.trace_colour.to_string(),
        }
    }
}

/// Colour `i` of an open-ended set (tenants, groups): hues spaced by the golden angle, so
/// neighbouring indices never look alike, at three lightness levels in turn.
#[must_use]
pub fn categorical_colour(i: u32) -> String {
    let hue = libm::fmod(f64::from(i) * 137.508, 360.0);
    let light = [52, 40, 64][(i % 3) as usize];
    alloc::format!("hsl({hue:.0}, 68%, {light}%)")
}

/// The Chrome trace viewer's reserved colour names cycled for an open-ended set.
const TRACE_CYCLE: [&str; 8] = [
    "rail_response",
    "rail_load",
    "rail_idle",
    "rail_animation",
    "thread_state_runnable",
    "thread_state_running",
    "olive",
    "background_memory_dump",
];

/// The kind of an open-ended set's member `i` (a tenant, say), coloured by
/// [`categorical_colour`].
#[must_use]
pub fn categorical_kind(i: u32, cat: &str, label: &str, meaning: &str) -> SpanKind {
    SpanKind {
        cat: cat.to_string(),
        label: label.to_string(),
        meaning: meaning.to_string(),
        colour: categorical_colour(i),
        trace_colour: TRACE_CYCLE[i as usize % TRACE_CYCLE.len()].to_string(),
    }
}

impl Timeline {
    /// Declares this timeline's kinds from the lab tables: keeps, in table order, the kinds
    /// whose category occurs on a lane (a category listed in two tables keeps the first).
    pub fn declare(&mut self, tables: &[&[KindDef]]) {
        let used = self.categories();
        let mut kinds: Vec<SpanKind> = Vec::new();
        for def in tables.iter().flat_map(|t| t.iter()) {
            if used.contains(&def.cat) && !kinds.iter().any(|k| k.cat == def.cat) {
                kinds.push(def.to_kind());
            }
        }
        self.kinds = kinds;
    }

    /// The categories that occur on its lanes, sorted and unique.
    #[must_use]
    pub fn categories(&self) -> alloc::collections::BTreeSet<&str> {
        self.lanes
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.cat.as_str()))
            .collect()
    }

    /// The kind of category `cat`, if declared.
    #[must_use]
    pub fn kind(&self, cat: &str) -> Option<&SpanKind> {
        self.kinds.iter().find(|k| k.cat == cat)
    }

    /// Categories on a lane that have no declared kind (a lab bug: the views would have no
    /// colour or meaning for them).
    #[must_use]
    pub fn undeclared(&self) -> Vec<&str> {
        self.categories()
            .into_iter()
            .filter(|c| self.kind(c).is_none())
            .collect()
    }
}

/// One row of a timeline: a stage, a stream or a link. Spans on a lane never overlap.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lane {
    /// Lane name, e.g. `stage 0`.
    pub name: String,
    /// Spans sorted by start.
    pub spans: Vec<Span>,
}

/// Something that occupied a lane for a while.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Span {
    /// Start, ns from the timeline's origin.
    pub start_ns: u64,
    /// Duration in ns.
    pub dur_ns: u64,
    /// Label, e.g. `F3` (forward of micro-batch 3).
    pub name: String,
    /// Category used for colour and legend: `F`, `B`, `W`, `p2p`, `bubble`, …
    pub cat: String,
}

/// A value that changes over time, drawn as a step chart under the lanes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterTrack {
    /// Track name, e.g. `stage 0 activations`.
    pub name: String,
    /// Unit of the values.
    pub unit: String,
    /// (time ns, value from then on).
    pub points: Vec<(u64, f64)>,
}

/// An (x, y) curve.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// Curve name (legend entry).
    pub name: String,
    /// Chart the curve belongs to; curves with one chart key are drawn together.
    pub chart: String,
    /// X axis label with unit.
    pub x_label: String,
    /// Y axis label with unit.
    pub y_label: String,
    /// Points in x order.
    pub points: Vec<(f64, f64)>,
}

impl Report {
    /// The metric with this key, if any.
    #[must_use]
    pub fn metric(&self, key: &str) -> Option<f64> {
        self.metrics.iter().find(|m| m.key == key).map(|m| m.value)
    }

    /// Adds a metric.
    pub fn push_metric(&mut self, key: &str, label: &str, value: f64, unit: &str) {
        self.metrics.push(Metric {
            key: key.to_string(),
            label: label.to_string(),
            value,
            unit: unit.to_string(),
        });
    }

    /// The Report as canonical JSON (stable field order; the byte-identity tests compare this).
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The Report as indented JSON.
    #[must_use]
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Metrics and tables as plain text for a terminal.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}\n", self.title);
        if !self.metrics.is_empty() {
            let rows: Vec<Vec<String>> = self
                .metrics
                .iter()
                .map(|m| vec_of([m.label.clone(), format_number(m.value), m.unit.clone()]))
                .collect();
            write_text_table(
                &mut out,
                &vec_of(["metric".into(), "value".into(), "unit".into()]),
                &rows,
            );
            out.push('\n');
        }
        for table in &self.tables {
            let _ = writeln!(out, "{}", table.title);
            let rows: Vec<Vec<String>> = table
                .rows
                .iter()
                .map(|r| r.iter().map(Cell::display).collect())
                .collect();
            write_text_table(&mut out, &table.columns, &rows);
            out.push('\n');
        }
        for finding in &self.findings {
            let _ = writeln!(out, "- {finding}");
        }
        out
    }

    /// Metrics as CSV (`key,label,value,unit`) followed by each table as its own CSV block.
    #[must_use]
    pub fn to_csv(&self) -> String {
        let mut out = String::from("key,label,value,unit\n");
        for m in &self.metrics {
            let _ = writeln!(
                out,
                "{},{},{},{}",
                csv_field(&m.key),
                csv_field(&m.label),
                m.value,
                csv_field(&m.unit)
            );
        }
        for table in &self.tables {
            out.push('\n');
            let header: Vec<String> = table.columns.iter().map(|c| csv_field(c)).collect();
            let _ = writeln!(out, "{}", header.join(","));
            for row in &table.rows {
                let cells: Vec<String> = row
                    .iter()
                    .map(|c| match c {
                        Cell::Num(v) => alloc::format!("{v}"),
                        Cell::Text(s) => csv_field(s),
                        Cell::Missing => String::new(),
                    })
                    .collect();
                let _ = writeln!(out, "{}", cells.join(","));
            }
        }
        let mut header = false;
        for timeline in &self.timelines {
            for kind in &timeline.kinds {
                if !header {
                    out.push_str("\ntimeline,kind,label,meaning,colour,spans,busy_ns\n");
                    header = true;
                }
                let spans = timeline
                    .lanes
                    .iter()
                    .flat_map(|l| l.spans.iter())
                    .filter(|s| s.cat == kind.cat);
                let (count, busy_ns) = spans.fold((0u64, 0u64), |(n, t), s| (n + 1, t + s.dur_ns));
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{count},{busy_ns}",
                    csv_field(&timeline.name),
                    csv_field(&kind.cat),
                    csv_field(&kind.label),
                    csv_field(&kind.meaning),
                    csv_field(&kind.colour),
                );
            }
        }
        out
    }

    /// One colour per series owner ([`series_owner`]) across every chart of the Report, in
    /// order of first appearance, so a policy or controller keeps its colour from chart to
    /// chart.
    #[must_use]
    pub fn series_colours(&self) -> Vec<(&str, String)> {
        let mut out: Vec<(&str, String)> = Vec::new();
        for s in &self.series {
            let owner = series_owner(&s.name);
            if !out.iter().any(|(n, _)| *n == owner) {
                let colour = series_colour(out.len());
                out.push((owner, colour));
            }
        }
        out
    }
}

/// The policy, controller or run a series belongs to: a series named `owner: quantity` (e.g.
/// `CONCUR: window`) belongs to `owner`; any other name is its own owner; the ending of a
/// compared run ([`crate::compare::SIDE_A`], `SIDE_B`) does not count.
#[must_use]
pub fn series_owner(name: &str) -> &str {
    // A compared run's curve keeps the colour of the curve it repeats.
    let name = name
        .strip_suffix(crate::compare::SIDE_A)
        .or_else(|| name.strip_suffix(crate::compare::SIDE_B))
        .unwrap_or(name);
    name.split_once(": ").map_or(name, |(owner, _)| owner)
}

/// Colours of chart curves, in order: Okabe and Ito's colour-universal palette (2008) with a
/// purple and a grey in place of its yellow and black (faint on white, lost on the dark
/// scheme), so that any two stay apart under deuteranopia and protanopia (`tests/palette.rs`).
/// Past eight owners the colours repeat and the chart tells the repeats apart by dash.
pub const SERIES_PALETTE: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#7e22ce", "#6b7280",
];

fn series_colour(i: usize) -> String {
    SERIES_PALETTE[i % SERIES_PALETTE.len()].to_string()
}

fn vec_of<const N: usize>(items: [String; N]) -> Vec<String> {
    items.into_iter().collect()
}

/// A CSV cell: quoted when it holds a comma, a quote or a newline.
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        alloc::format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn write_text_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: &[String]| {
        for (i, cell) in cells.iter().enumerate().take(cols) {
            let pad = widths[i] - cell.chars().count();
            if i > 0 {
                out.push_str("  ");
            }
            out.push_str(cell);
            if i + 1 < cols {
                out.extend(core::iter::repeat_n(' ', pad));
            }
        }
        out.push('\n');
    };
    line(out, header);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(out, &rule);
    for row in rows {
        line(out, row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_commas() {
        let mut r = Report::default();
        r.push_metric("a", "x, y", 1.5, "ms");
        assert_eq!(r.to_csv(), "key,label,value,unit\na,\"x, y\",1.5,ms\n");
    }

    #[test]
    fn numbers_format_compactly() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(0.272_727), "0.2727");
        assert_eq!(format_number(12345.67), "12345.7");
    }
}
