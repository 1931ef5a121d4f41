//! Every span of every preset's Report has a declared kind: a label, a meaning, a CSS colour and
//! a Chrome trace colour name. No view falls back to a default colour. Runs every preset, so it
//! is one of the optimised steps of `cargo xtask test`.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use std::collections::BTreeSet;

use bubblelab_core::presets::PRESETS;
use bubblelab_core::report::{Report, Timeline};

/// The Chrome trace viewer's reserved colour names (catapult's `color_scheme.html`), the only
/// values `cname` may take.
const RESERVED: &[&str] = &[
    "thread_state_uninterruptible",
    "thread_state_iowait",
    "thread_state_running",
    "thread_state_runnable",
    "thread_state_unknown",
    "background_memory_dump",
    "light_memory_dump",
    "detailed_memory_dump",
    "vsync_highlight_color",
    "generic_work",
    "good",
    "bad",
    "terrible",
    "black",
    "grey",
    "white",
    "yellow",
    "olive",
    "rail_response",
    "rail_animation",
    "rail_idle",
    "rail_load",
    "startup",
    "heap_dump_stack_frame",
    "heap_dump_object_type",
    "heap_dump_child_node_arrow",
    "cq_build_running",
    "cq_build_passed",
    "cq_build_failed",
    "cq_build_abandoned",
    "cq_build_attempt_runnig",
    "cq_build_attempt_passed",
    "cq_build_attempt_failed",
];

fn is_css_colour(c: &str) -> bool {
    let hex = c.len() == 7 && c.starts_with('#') && c[1..].chars().all(|ch| ch.is_ascii_hexdigit());
    let hsl = c.starts_with("hsl(") && c.ends_with(')') && c.matches(',').count() == 2;
    hex || hsl
}

/// Every problem of one timeline's kinds, as text.
fn problems(context: &str, tl: &Timeline) -> Vec<String> {
    let mut out = Vec::new();
    for cat in tl.undeclared() {
        out.push(format!(
            "{context} / {}: category {cat:?} has no declared kind",
            tl.name
        ));
    }
    let used = tl.categories();
    let mut colours = BTreeSet::new();
    for k in &tl.kinds {
        if !used.contains(k.cat.as_str()) {
            out.push(format!(
                "{context} / {}: kind {:?} declared but unused",
                tl.name, k.cat
            ));
        }
        if k.label.is_empty() || k.meaning.is_empty() {
            out.push(format!(
                "{context} / {}: kind {:?} lacks a label or meaning",
                tl.name, k.cat
            ));
        }
        if !is_css_colour(&k.colour) {
            out.push(format!(
                "{context} / {}: kind {:?} colour {:?} is not #rrggbb or hsl()",
                tl.name, k.cat, k.colour
            ));
        }
        if !RESERVED.contains(&k.trace_colour.as_str()) {
            out.push(format!(
                "{context} / {}: kind {:?} trace colour {:?} is not a reserved name",
                tl.name, k.cat, k.trace_colour
            ));
        }
        if !colours.insert(k.colour.as_str()) {
            out.push(format!(
                "{context} / {}: two kinds share colour {}",
                tl.name, k.colour
            ));
        }
    }
    out
}

fn run(id: &str) -> Report {
    let preset = bubblelab_core::presets::find(id).unwrap();
    bubblelab_core::run(&preset.scenario().unwrap()).unwrap()
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "every preset; seconds in an optimised build: cargo test --profile bench -p bubblelab-core --test palette"
)]
fn every_preset_declares_every_span_kind() {
    let mut all = Vec::new();
    let mut timelines = 0;
    for preset in PRESETS {
        let report = bubblelab_core::run(&preset.scenario().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", preset.id));
        for tl in &report.timelines {
            timelines += 1;
            all.extend(problems(preset.id, tl));
        }
    }
    assert!(timelines > PRESETS.len(), "only {timelines} timelines");
    assert!(all.is_empty(), "{all:#?}");
}

#[test]
fn exposed_communication_stands_out() {
    let report = run("overlap-gpt3-curie-tp2-sp4");
    let serial = &report.timelines[0];
    let colour = |cat: &str| {
        serial
            .kind(cat)
            .unwrap_or_else(|| panic!("{cat} not declared"))
            .colour
            .clone()
    };
    let exposed = colour("exposed");
    assert_ne!(exposed, colour("comm"));
    assert_ne!(exposed, colour("compute"));
}

#[test]
fn a_tenant_keeps_its_colour_in_every_policy_timeline() {
    let report = run("fairness-contended-15-tenants");
    assert!(report.timelines.len() > 1);
    let first = &report.timelines[0];
    // Every tenant that held GPUs has spans in every timeline: a span budget is never used up
    // by the first tenants.
    for tl in &report.timelines {
        for (lane, counter) in tl.lanes.iter().zip(&tl.counters) {
            let held = counter.points.iter().any(|p| p.1 > 0.0);
            assert_eq!(!lane.spans.is_empty(), held, "{} / {}", tl.name, lane.name);
        }
    }
    for tl in &report.timelines[1..] {
        for k in &tl.kinds {
            if let Some(k0) = first.kind(&k.cat) {
                assert_eq!(k.colour, k0.colour, "{} in {}", k.cat, tl.name);
            }
        }
    }
}

#[test]
fn a_curve_keeps_its_colour_across_charts() {
    let report = run("agentic-cap-sweep-qwen3-32b-h100");
    let colours = report.series_colours();
    let owners: BTreeSet<&str> = report
        .series
        .iter()
        .map(|s| bubblelab_core::report::series_owner(&s.name))
        .collect();
    // The controllers (unbounded, CONCUR, the static caps) own the curves of several charts.
    assert!(owners.contains("CONCUR"), "{owners:?}");
    let charts_of_concur: BTreeSet<&str> = report
        .series
        .iter()
        .filter(|s| bubblelab_core::report::series_owner(&s.name) == "CONCUR")
        .map(|s| s.chart.as_str())
        .collect();
    assert!(charts_of_concur.len() > 1, "{charts_of_concur:?}");
    assert_eq!(colours.len(), owners.len());
    let distinct: BTreeSet<&str> = colours.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(distinct.len(), colours.len(), "two owners share a colour");
}

#[test]
fn the_csv_lists_each_kind_with_its_busy_time() {
    let report = run("pipeline-all");
    let csv = report.to_csv();
    let block = csv
        .split("\n\n")
        .find(|b| b.starts_with("timeline,kind,label,meaning,colour,spans,busy_ns"))
        .expect("a span-kind block");
    let gpipe_f = block
        .lines()
        .find(|l| l.starts_with("GPipe,F,"))
        .expect("GPipe's forward row");
    // p = 4 stages × m = 8 micro-batches of F = 1 ms.
    assert!(gpipe_f.ends_with(",32,32000000"), "{gpipe_f}");
}

/// Progress counts up by one to its total, which it reaches, and the Report is the same with
/// or without the callback.
#[test]
fn overlap_and_resilience_report_progress_per_step() {
    for id in ["overlap-gpt3-curie-k4-budget", "resilience-slow-gpu-2x"] {
        let scenario = bubblelab_core::presets::find(id)
            .unwrap()
            .scenario()
            .unwrap();
        let mut seen = Vec::new();
        let report =
            bubblelab_core::run_with_progress(&scenario, &mut |d, t| seen.push((d, t))).unwrap();
        let total = seen[0].1;
        assert!(total > 2, "{id}: {seen:?}");
        let want: Vec<(usize, usize)> = (0..=total).map(|d| (d, total)).collect();
        assert_eq!(seen, want, "{id}");
        assert_eq!(report, bubblelab_core::run(&scenario).unwrap(), "{id}");
    }
}
