//! Chrome trace event JSON (the format Perfetto and `chrome://tracing` open).
//!
//! Each [`Timeline`] of a Report becomes a process (`pid`), each lane a thread (`tid`) named by
//! `M` metadata events, each span an `X` (complete) event with microsecond timestamps, and each
//! counter track a series of `C` events. Format: "Trace Event Format", Google, 2016.
//!
//! A span carries its kind (the timeline's [`crate::report::SpanKind`]): the label in
//! `args.kind` and the kind's reserved colour name in `cname`, which `chrome://tracing` draws.
//! Perfetto colours slices by name and deliberately ignores `cname` (google/perfetto issues
//! #208 and #624); there the kind is in the slice's arguments.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::report::Report;

#[derive(Serialize)]
struct TraceFile<'a> {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event<'a>>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
    #[serde(rename = "otherData")]
    other_data: BTreeMap<&'static str, &'a str>,
}

#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    ph: &'static str,
    pid: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cname: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    args: BTreeMap<&'a str, ArgValue<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ArgValue<'a> {
    Text(&'a str),
    Num(f64),
    Int(usize),
}

/// An `M` (metadata) event: a process or thread name or sort index.
fn metadata<'a>(
    name: &'static str,
    pid: usize,
    tid: Option<usize>,
    value: ArgValue<'a>,
) -> Event<'a> {
    let key = if name.ends_with("sort_index") {
        "sort_index"
    } else {
        "name"
    };
    let mut args = BTreeMap::new();
    args.insert(key, value);
    Event {
        name,
        ph: "M",
        pid,
        tid,
        ts: None,
        dur: None,
        cat: None,
        cname: None,
        args,
    }
}

fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Writes every timeline of `report` as Chrome trace JSON.
#[must_use]
pub fn to_chrome_trace(report: &Report) -> String {
    let mut events = Vec::new();
    for (pid, timeline) in report.timelines.iter().enumerate() {
        events.push(metadata(
            "process_name",
            pid,
            None,
            ArgValue::Text(&timeline.name),
        ));
        events.push(metadata(
            "process_sort_index",
            pid,
            None,
            ArgValue::Int(pid),
        ));
        for (tid, lane) in timeline.lanes.iter().enumerate() {
            events.push(metadata(
                "thread_name",
                pid,
                Some(tid),
                ArgValue::Text(&lane.name),
            ));
            events.push(metadata(
                "thread_sort_index",
                pid,
                Some(tid),
                ArgValue::Int(tid),
            ));
            for span in &lane.spans {
                let kind = timeline.kind(&span.cat);
                let mut args = BTreeMap::new();
                if let Some(k) = kind {
                    args.insert("kind", ArgValue::Text(&k.label));
                }
                events.push(Event {
                    name: &span.name,
                    ph: "X",
                    pid,
                    tid: Some(tid),
                    ts: Some(ns_to_us(span.start_ns)),
                    dur: Some(ns_to_us(span.dur_ns)),
                    cat: Some(&span.cat),
                    cname: kind.map(|k| k.trace_colour.as_str()),
                    args,
                });
            }
        }
        for counter in &timeline.counters {
            for &(t, value) in &counter.points {
                let mut args = BTreeMap::new();
                args.insert(counter.unit.as_str(), ArgValue::Num(value));
                events.push(Event {
                    name: &counter.name,
                    ph: "C",
                    pid,
                    tid: None,
                    ts: Some(ns_to_us(t)),
                    dur: None,
                    cat: None,
                    cname: None,
                    args,
                });
            }
        }
    }
    let mut other_data = BTreeMap::new();
    other_data.insert("producer", "bubblelab");
    other_data.insert("lab", report.lab.as_str());
    other_data.insert("title", report.title.as_str());
    let file = TraceFile {
        trace_events: events,
        display_time_unit: "ns",
        other_data,
    };
    serde_json::to_string(&file).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CounterTrack, Lane, Span, Timeline};
    use alloc::vec;

    #[test]
    fn names_every_track_and_uses_microseconds() {
        let report = Report {
            lab: "pipeline".into(),
            title: "t".into(),
            timelines: vec![Timeline {
                name: "1F1B".into(),
                lanes: vec![Lane {
                    name: "stage 0".into(),
                    spans: vec![Span {
                        start_ns: 1500,
                        dur_ns: 2000,
                        name: "F0".into(),
                        cat: "F".into(),
                    }],
                }],
                counters: vec![CounterTrack {
                    name: "mem".into(),
                    unit: "bytes".into(),
                    points: vec![(0, 1.0)],
                }],
                kinds: vec![crate::labs::pipeline::sim::SPAN_KINDS[0].to_kind()],
            }],
            ..Report::default()
        };
        let json: serde_json::Value = serde_json::from_str(&to_chrome_trace(&report)).unwrap();
        let events = json["traceEvents"].as_array().unwrap();
        assert!(events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "1F1B"));
        assert!(events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "stage 0"));
        let x = events.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(x["ts"], 1.5);
        assert_eq!(x["dur"], 2.0);
        assert_eq!(x["cname"], "rail_response");
        assert_eq!(x["args"]["kind"], "forward");
        assert!(events
            .iter()
            .any(|e| e["ph"] == "C" && e["args"]["bytes"] == 1.0));
    }
}
