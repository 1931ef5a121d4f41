//! Real data: PipeMorph's per-stage logs of a 4-stage GPT run on A10 GPUs
//! (`$BUBBLELAB_DATA/pipemorph_pp4_stage_logs`, default `../shared/data` beside the repo).
//! Without the folder these tests fail under CI=true and are skipped otherwise.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use std::fs;
use std::path::PathBuf;

use bubblelab_core::labs::pipeline::pipemorph::{load_run, LoggedKind, PipelineRun};
use bubblelab_core::labs::pipeline::{one_f_one_b_orders, OpKind};

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

#[test]
fn one_f_one_b_run_has_15_iterations_in_1f1b_order() {
    let Some(run) = load("1F1B", "0.06") else {
        return;
    };
    assert_eq!(run.ranks.len(), 4);
    assert_eq!(run.complete_iterations(), (1..=15).collect::<Vec<u32>>());
    assert_eq!(run.reported.len(), 15);
    // Each stage's F/B sequence in every complete iteration is exactly our 1F1B order.
    let ours = one_f_one_b_orders(4, 12);
    for (r, rank) in run.ranks.iter().enumerate() {
        let expected: Vec<LoggedKind> = ours[r]
            .iter()
            .map(|op| {
                if op.kind == OpKind::Forward {
                    LoggedKind::F
                } else {
                    LoggedKind::B
                }
            })
            .collect();
        for it in rank.iterations.iter().filter(|it| it.number <= 15) {
            let got: Vec<LoggedKind> = it.ops.iter().map(|o| o.kind).collect();
            assert_eq!(got, expected, "rank {r} iteration {}", it.number);
        }
        // The 16th block holds only the forwards of an unfinished iteration.
        let last = rank.iterations.last().unwrap();
        assert_eq!(last.number, 16);
        assert!(last.ops.iter().all(|o| o.kind == LoggedKind::F));
    }
}

#[test]
fn zero_bubble_run_splits_the_backward() {
    let Some(run) = load("ZB", "0.06") else {
        return;
    };
    assert!(run.zero_bubble());
    assert_eq!(run.complete_iterations().len(), 15);
    for (r, rank) in run.ranks.iter().enumerate() {
        for it in rank.iterations.iter().filter(|it| it.number <= 15) {
            let w: u32 = it
                .ops
                .iter()
                .map(|o| match o.kind {
                    LoggedKind::W => 1,
                    LoggedKind::WGroup(n) => n,
                    _ => 0,
                })
                .sum();
            assert_eq!(
                w, 12,
                "rank {r} iteration {}: one W per micro-batch",
                it.number
            );
        }
    }
}

#[test]
fn a_slow_link_stretches_every_iteration_after_injection() {
    // Fault injected from iteration 7 on the link between stages 2 and 3 (README).
    for schedule in ["1F1B", "ZB"] {
        for delay in ["0.02", "0.06", "0.12"] {
            let Some(run) = load(schedule, delay) else {
                return;
            };
            let report = run.report("run");
            for tl in &report.timelines {
                assert!(tl.undeclared().is_empty(), "{:?}", tl.undeclared());
            }
            let spans = &report
                .series
                .iter()
                .find(|s| s.chart == "iteration_ms")
                .unwrap()
                .points;
            let mean = |lo: f64, hi: f64| {
                let v: Vec<f64> = spans
                    .iter()
                    .filter(|p| p.0 >= lo && p.0 <= hi)
                    .map(|p| p.1)
                    .collect();
                v.iter().sum::<f64>() / v.len() as f64
            };
            let before = mean(2.0, 6.0);
            let after = mean(9.0, 15.0);
            eprintln!("{schedule} {delay}: {before:.0} ms → {after:.0} ms");
            assert!(
                after > before * 1.2,
                "{schedule} {delay}: {before} → {after}"
            );
        }
    }
}

#[test]
fn replaying_measured_op_times_predicts_the_clean_iteration() {
    // 1F1B: the same schedule; the replay has no P2P or host time, so it must come in just
    // under the fastest measured iteration.
    for delay in ["0.02", "0.06", "0.12"] {
        let Some(run) = load("1F1B", delay) else {
            return;
        };
        let report = run.report("run");
        let sim = report.metric("simulated_iteration_ms").unwrap();
        let fastest = report.metric("fastest_iteration_ms").unwrap();
        eprintln!("1F1B {delay}: simulated {sim:.1} ms, fastest measured {fastest:.1} ms");
        assert!(
            sim <= fastest && sim >= 0.9 * fastest,
            "1F1B {delay}: {sim} vs {fastest}"
        );
    }
    // Zero-bubble: the lab replays ZB-H2, whose warm-up the run shares (W placement differs);
    // it lands within 2 %.
    for delay in ["0.02", "0.06", "0.12"] {
        let Some(run) = load("ZB", delay) else { return };
        let report = run.report("run");
        let sim = report.metric("simulated_iteration_ms").unwrap();
        let fastest = report.metric("fastest_iteration_ms").unwrap();
        eprintln!("ZB {delay}: simulated ZB-H2 {sim:.1} ms, fastest measured {fastest:.1} ms");
        assert!(
            (sim / fastest - 1.0).abs() < 0.02,
            "ZB {delay}: {sim} vs {fastest}"
        );
    }
}

#[test]
fn zero_bubble_run_warms_up_as_zb_h2() {
    // Rank i runs 2(p − i) − 1 forwards before its first backward (7, 5, 3, 1 at p = 4): ZB-H2's
    // warm-up (Qi et al. §2.2), not ZB-H1's p − i. Its W passes are placed by another rule.
    let Some(run) = load("ZB", "0.06") else {
        return;
    };
    for (r, rank) in run.ranks.iter().enumerate() {
        for it in rank.iterations.iter().filter(|it| it.number <= 15) {
            let warm_up = it
                .ops
                .iter()
                .take_while(|o| o.kind == LoggedKind::F)
                .count();
            assert_eq!(warm_up, 2 * (4 - r) - 1, "rank {r} iteration {}", it.number);
        }
    }
}
