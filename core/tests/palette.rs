//! Every span of every preset's Report has a declared kind: a label, a meaning, a CSS colour and
//! a Chrome trace colour name. No view falls back to a default colour. The colours of one legend
//! stay apart for readers with deuteranopia or protanopia. Runs every preset, so it is one of
//! the optimised steps of `cargo xtask test`.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use std::collections::BTreeSet;

use bubblelab_core::presets;
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
    for preset in presets::all() {
        let report = bubblelab_core::run(&preset.scenario().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", preset.id));
        for tl in &report.timelines {
            timelines += 1;
            all.extend(problems(preset.id, tl));
        }
    }
    assert!(
        timelines > presets::all().count(),
        "only {timelines} timelines"
    );
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

/// Smallest CIELAB distance (ΔE*ab, 1976) two colours of one legend may have, seen with full
/// colour vision, with deuteranopia and with protanopia. 12 is well past the just-noticeable
/// difference (about 2.3) and the distance at which small chart swatches still read apart.
const MIN_DELTA_E: f64 = 12.0;

/// Machado, Oliveira and Fernandes (IEEE TVCG 2009), severity 1.0, on linear sRGB.
const DEUTERANOPIA: [[f64; 3]; 3] = [
    [0.367_322, 0.860_646, -0.227_968],
    [0.280_085, 0.672_501, 0.047_413],
    [-0.011_820, 0.042_940, 0.968_881],
];
const PROTANOPIA: [[f64; 3]; 3] = [
    [0.152_286, 1.052_583, -0.204_868],
    [0.114_503, 0.786_281, 0.099_216],
    [-0.003_882, -0.048_116, 1.051_998],
];
const NORMAL: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

fn linear(v: f64) -> f64 {
    if v <= 0.040_45 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// `#rrggbb` as linear sRGB.
fn linear_rgb(hex: &str) -> [f64; 3] {
    let channel =
        |i: usize| linear(f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0);
    [channel(1), channel(3), channel(5)]
}

/// CIELAB (D65) of a linear sRGB colour as seen through `vision`.
fn lab(rgb: [f64; 3], vision: &[[f64; 3]; 3]) -> [f64; 3] {
    let seen: Vec<f64> = vision
        .iter()
        .map(|row| (row[0] * rgb[0] + row[1] * rgb[1] + row[2] * rgb[2]).clamp(0.0, 1.0))
        .collect();
    let (r, g, b) = (seen[0], seen[1], seen[2]);
    let x = (0.412_4 * r + 0.357_6 * g + 0.180_5 * b) / 0.950_47;
    let y = 0.212_6 * r + 0.715_2 * g + 0.072_2 * b;
    let z = (0.019_3 * r + 0.119_2 * g + 0.950_5 * b) / 1.088_83;
    let f = |t: f64| {
        if t > 0.008_856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    [
        116.0 * f(y) - 16.0,
        500.0 * (f(x) - f(y)),
        200.0 * (f(y) - f(z)),
    ]
}

/// The pairs of `colours` (label, `#rrggbb`) closer than [`MIN_DELTA_E`] for some vision.
fn too_close(colours: &[(&str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (a, ca)) in colours.iter().enumerate() {
        for (b, cb) in &colours[i + 1..] {
            for (vision, name) in [
                (&NORMAL, "full colour vision"),
                (&DEUTERANOPIA, "deuteranopia"),
                (&PROTANOPIA, "protanopia"),
            ] {
                let (la, lb) = (lab(linear_rgb(ca), vision), lab(linear_rgb(cb), vision));
                let d =
                    ((la[0] - lb[0]).powi(2) + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2))
                        .sqrt();
                if d < MIN_DELTA_E {
                    out.push(format!("{a} {ca} and {b} {cb}: ΔE {d:.1} with {name}"));
                }
            }
        }
    }
    out
}

#[test]
fn the_simulation_separates_what_it_should() {
    // Blue and purple collapse for a deuteranope; blue and orange never do.
    assert_eq!(
        too_close(&[("blue", "#3b82f6"), ("purple", "#a855f7")]).len(),
        1
    );
    assert!(too_close(&[("blue", "#0072b2"), ("orange", "#e69f00")]).is_empty());
}

#[test]
fn chart_curves_stay_apart_without_full_colour_vision() {
    let named: Vec<(&str, &str)> = bubblelab_core::report::SERIES_PALETTE
        .iter()
        .map(|c| ("curve", *c))
        .collect();
    let close = too_close(&named);
    assert!(close.is_empty(), "{close:#?}");
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "every preset; seconds in an optimised build: cargo test --profile bench -p bubblelab-core --test palette"
)]
fn every_legend_stays_apart_without_full_colour_vision() {
    let mut all = Vec::new();
    for preset in presets::all() {
        let report = bubblelab_core::run(&preset.scenario().unwrap()).unwrap();
        for tl in &report.timelines {
            // Open-ended sets (tenants, groups: `categorical_colour`'s hsl hues) name each lane
            // and are not a legend read by colour alone.
            if tl.kinds.iter().any(|k| k.colour.starts_with("hsl(")) {
                continue;
            }
            let colours: Vec<(&str, &str)> = tl
                .kinds
                .iter()
                .map(|k| (k.cat.as_str(), k.colour.as_str()))
                .collect();
            all.extend(
                too_close(&colours)
                    .into_iter()
                    .map(|p| format!("{} / {}: {p}", preset.id, tl.name)),
            );
        }
        // Curves: palette colours only, repeats told apart by dash in the chart.
        for (owner, colour) in report.series_colours() {
            if !bubblelab_core::report::SERIES_PALETTE.contains(&colour.as_str()) {
                all.push(format!(
                    "{}: curve {owner} has {colour}, not a palette colour",
                    preset.id
                ));
            }
        }
    }
    assert!(all.is_empty(), "{all:#?}");
}
