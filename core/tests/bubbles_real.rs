#![cfg(not(target_arch = "wasm32"))]
//! Real bubbles: the squeezer on PipeMorph's 4-stage GPT logs
//! (`$BUBBLELAB_DATA/pipemorph_pp4_stage_logs`). Without the folder these tests fail under
//! CI=true and are skipped otherwise.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use std::fs;
use std::path::PathBuf;

use bubblelab_core::labs::bubbles::{self, BubblesParams};
use bubblelab_core::labs::pipeline::pipemorph::{load_run, PipelineRun};
use bubblelab_core::{presets, Report, Scenario};

fn load(schedule: &str, delay: &str) -> Option<PipelineRun> {
    let dir = common::data_dir()?
        .join("pipemorph_pp4_stage_logs/ae/fig15")
        .join(schedule)
        .join("2_3")
        .join(delay);
    let mut names: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let files: Vec<(String, String)> = names
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                fs::read_to_string(p).unwrap(),
            )
        })
        .collect();
    Some(load_run(&files).unwrap())
}

fn a10() -> BubblesParams {
    match presets::find("bubbles-pipemorph-a10")
        .unwrap()
        .scenario()
        .unwrap()
    {
        Scenario::Bubbles(p) => p,
        _ => unreachable!(),
    }
}

fn metric(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("metric {k}"))
}

fn table_num(r: &Report, key: &str, row: usize, col: usize) -> f64 {
    let t = r.tables.iter().find(|t| t.key == key).unwrap();
    match &t.rows[row][col] {
        bubblelab_core::report::Cell::Num(v) => *v,
        other => panic!("{other:?}"),
    }
}

#[test]
fn squeezer_on_the_1f1b_run_with_a_slow_link() {
    let Some(run) = load("1F1B", "0.06") else {
        return;
    };
    let r = bubbles::run_log(&a10(), &run, "1F1B/2_3/0.06").unwrap();
    for tl in &r.timelines {
        assert!(
            tl.undeclared().is_empty(),
            "{}: {:?}",
            tl.name,
            tl.undeclared()
        );
    }
    println!(
        "{}",
        r.to_text()
            .lines()
            .filter(|l| !l.starts_with(|c: char| c.is_ascii_digit()))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(metric(&r, "squeezer.slowdown"), 0.0);
    let sm = metric(&r, "squeezer.bubble_sm_activity");
    assert!(sm > metric(&r, "none.bubble_sm_activity"));
    // Pinned: what this model does on this log.
    let pin = |k: &str, v: f64| {
        let got = metric(&r, k);
        assert!(
            (got - v).abs() <= 1e-3 * v.abs().max(1.0),
            "{k}: {got}, pinned {v}"
        );
    };
    pin("windows.total", 1352.0);
    pin("windows.safe", 1304.0);
    pin("none.iteration_ms", 2377.281);
    pin("squeezer.bubble_sm_activity", 0.5839);
    pin("squeezer.guest_fraction", 0.4368);
    pin("squeezer.trial_steps_per_iteration", 1186.7);
    let first = table_num(&r, "log_iterations", 1, 2);
    let last = table_num(&r, "log_iterations", 13, 2);
    println!("safe bubble ms, iteration 1 → 13: {first} → {last}");
    // The slow link from iteration 7 on stretches the windows: more safe bubble time, and more
    // guest work, per iteration.
    assert!(last > 1.5 * first, "{first} → {last}");
    assert!(
        (first - 1374.98).abs() < 0.01 && (last - 7754.68).abs() < 0.01,
        "{first} → {last}"
    );
    let g_first = table_num(&r, "log_iterations", 1, 3);
    let g_last = table_num(&r, "log_iterations", 13, 3);
    assert!(g_last > g_first, "{g_first} → {g_last}");
    // Small GPT-like trials need more memory per trial: fewer fit than ResNet-18-like ones.
    assert!(table_num(&r, "log_presets", 1, 1) <= table_num(&r, "log_presets", 0, 1));
}

#[test]
fn zero_bubble_run_leaves_less_safe_bubble_time_than_1f1b() {
    let (Some(a), Some(z)) = (load("1F1B", "0.02"), load("ZB", "0.02")) else {
        return;
    };
    let ra = bubbles::run_log(&a10(), &a, "1F1B").unwrap();
    let rz = bubbles::run_log(&a10(), &z, "ZB").unwrap();
    println!(
        "safe ratio 1F1B {} ZB {}; trial-steps/iteration 1F1B {} ZB {}",
        metric(&ra, "windows.safe_ratio"),
        metric(&rz, "windows.safe_ratio"),
        metric(&ra, "squeezer.trial_steps_per_iteration"),
        metric(&rz, "squeezer.trial_steps_per_iteration")
    );
    assert!(metric(&rz, "windows.safe_ratio") < metric(&ra, "windows.safe_ratio"));
}
