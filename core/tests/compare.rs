//! Two runs side by side (`bubblelab_core::compare`): the parameters that differ by path, every
//! metric with B − A and B / A, both runs' curves and timelines, and runs of two labs refused.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::compare::{compare, scenario_diff};
use bubblelab_core::report::Cell;
use bubblelab_core::{presets, run, Scenario};

fn preset(id: &str) -> Scenario {
    presets::find(id).unwrap().scenario().unwrap()
}

fn edited(s: &Scenario, path: &str, value: &str) -> Scenario {
    s.with_fields(&[(path, value)]).unwrap()
}

#[test]
fn one_field_changed_is_the_whole_diff_and_the_metrics_follow_the_closed_form() {
    let a = preset("pipeline-gpipe-vs-1f1b");
    let b = edited(&a, "micro_batches", "16");
    assert_eq!(
        scenario_diff(&a, &b),
        vec![(
            "micro_batches".to_string(),
            "8".to_string(),
            "16".to_string()
        )]
    );
    let (ra, rb) = (run(&a).unwrap(), run(&b).unwrap());
    let r = compare(&a, &ra, &b, &rb).unwrap();
    assert_eq!(r.metric("compare.fields_changed"), Some(1.0));
    let metrics = r.tables.iter().find(|t| t.key == "metrics").unwrap();
    let row = metrics
        .rows
        .iter()
        .find(|row| row[1] == Cell::Text("1f1b.bubble_ratio".into()))
        .unwrap();
    // (p − 1)/(m + p − 1) at p = 4: 3/11 → 3/19, B / A = 11/19.
    let num = |c: &Cell| match c {
        Cell::Num(v) => *v,
        other => panic!("{other:?}"),
    };
    assert!((num(&row[3]) - 3.0 / 11.0).abs() < 1e-12);
    assert!((num(&row[4]) - 3.0 / 19.0).abs() < 1e-12);
    assert!((num(&row[5]) - (3.0 / 19.0 - 3.0 / 11.0)).abs() < 1e-12);
    assert!((num(&row[6]) - 11.0 / 19.0).abs() < 1e-12);
    // Both runs' curves and timelines, named by side.
    assert_eq!(r.timelines.len(), ra.timelines.len() + rb.timelines.len());
    assert!(r.timelines[0].name.starts_with("A: "));
    assert!(r.timelines.last().unwrap().name.starts_with("B: "));
    assert_eq!(r.series.len(), ra.series.len() + rb.series.len());
    // A curve of B keeps the colour of the same curve of A: the owners are A's.
    assert!(!ra.series.is_empty());
    assert_eq!(r.series_colours(), ra.series_colours());
    assert!(r.series.iter().any(|s| s.name.ends_with(" (B)")));
    assert!(
        r.findings[0].contains("micro_batches 8 → 16"),
        "{}",
        r.findings[0]
    );
}

#[test]
fn nested_and_list_fields_are_named_by_path_and_equal_runs_differ_in_nothing() {
    let a = preset("fairness-contended-15-tenants");
    let b = edited(&a, "astraea.starvation_s", "1234");
    let diff = scenario_diff(&a, &b);
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert_eq!(diff[0].0, "astraea.starvation_s");
    let p = preset("pipeline-all");
    let q = edited(&p, "schedules", "gpipe,1f1b");
    assert!(
        scenario_diff(&p, &q)
            .iter()
            .any(|d| d.0.starts_with("schedules[")),
        "{:?}",
        scenario_diff(&p, &q)
    );
    let r = run(&p).unwrap();
    let same = compare(&p, &r, &p, &r).unwrap();
    assert_eq!(same.metric("compare.fields_changed"), Some(0.0));
    assert_eq!(same.metric("compare.metrics_changed"), Some(0.0));
    assert!(same.findings[0].starts_with("A and B are the same scenario"));
}

#[test]
fn runs_of_two_labs_are_refused_naming_both() {
    let a = preset("pipeline-all");
    let b = preset("cost-allreduce-h100");
    let (ra, rb) = (run(&a).unwrap(), run(&b).unwrap());
    let e = compare(&a, &ra, &b, &rb).unwrap_err().to_string();
    assert!(
        e.starts_with("lab: A is a pipeline scenario and B a cost one"),
        "{e}"
    );
}
