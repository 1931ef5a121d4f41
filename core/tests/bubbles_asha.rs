#![cfg(not(target_arch = "wasm32"))]
//! Known answers of the bubbles lab's tuners: ASHA as Hydro's `ASHAHydroScheduler` runs it
//! (docs/MODEL.md, "Tuning job"), synchronous SH, and the critical-path ceiling.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::bubbles::hpo::{self, asha, Workers};
use bubblelab_core::labs::bubbles::{self, BubblesParams, MainTimeline, TunerKind};
use bubblelab_core::labs::pipeline::run_schedule;
use bubblelab_core::{presets, Scenario};

fn preset(id: &str) -> BubblesParams {
    match presets::find(id)
        .expect("preset")
        .scenario()
        .expect("parses")
    {
        Scenario::Bubbles(p) => p,
        other => panic!("not a bubbles preset: {}", other.lab()),
    }
}

fn rates(p: &BubblesParams) -> Vec<Vec<f64>> {
    let run = run_schedule(&p.main, p.schedule()).unwrap();
    let main = MainTimeline::from_schedule(&run, p);
    bubbles::bubble_rates(&main, p, p.hpo.stages)
}

#[test]
fn the_cutoff_is_numpys_linear_percentile() {
    assert_eq!(asha::cutoff(&[], 4), None);
    assert_eq!(asha::cutoff(&[5.0], 4), Some(5.0));
    // 75th percentile of 1..4: rank 0.75 · 3 = 2.25 → 3 + 0.25 · (4 − 3).
    assert_eq!(asha::cutoff(&[1.0, 2.0, 3.0, 4.0], 4), Some(3.25));
    // Median of two (η = 2).
    assert_eq!(asha::cutoff(&[0.1, 0.9], 2), Some(0.5));
}

#[test]
fn milestones_are_grace_times_powers_of_eta_below_max_t() {
    assert_eq!(asha::milestones(200, 4, 12_800), vec![200, 800, 3200]);
    assert_eq!(asha::milestones(1, 2, 4), vec![1, 2]);
    assert_eq!(asha::milestones(5, 4, 5), Vec::<u64>::new());
    // Ray's MAX_RUNGS = int(log(100/1)/log(4) + 1) = 4: milestones 1, 4, 16, 64.
    assert_eq!(asha::milestones(1, 4, 100), vec![1, 4, 16, 64]);
}

/// Four trials, η = 2, grace 1, max_t 4, one GPU, no fusion, worked by hand: trial 0 is first at
/// every rung and trains to max_t; trial 1 (0.1) is below the cutoff 0.9 at rung 1; trial 2
/// (0.5) meets the median 0.5 of {0.1, 0.9} at rung 1 but not 0.9 at rung 2; trial 3 (0.3) is
/// below the median 0.5 of {0.1, 0.5, 0.9} at rung 1.
#[test]
fn asha_stops_trials_below_the_rungs_quantile_worked_example() {
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.hpo.reduction_factor = 2;
    p.hpo.grace_period_steps = 1;
    p.hpo.max_t_steps = 4;
    let none: Vec<Vec<f64>> = Vec::new();
    let w = Workers::new(&p.trial, &none, 1, false);
    let r = asha::simulate(&p, &w, 1, &[0.9, 0.1, 0.5, 0.3]);
    assert_eq!(r.trained_steps, vec![4, 1, 2, 1]);
    assert_eq!(r.makespan_ns, 8 * p.trial.step_ns(1));
}

/// With no bubbles and one GPU, ASHA is a serial schedule of its own promotions: the segments
/// follow each other without a gap, each takes its steps × step(F) of the bundle, and with
/// F = 1 the makespan is Σ trained steps × step(1).
#[test]
fn on_one_gpu_asha_equals_a_serial_schedule_of_the_same_promotions() {
    let p = preset("bubbles-gpt-32gpus-resnet18");
    let none: Vec<Vec<f64>> = Vec::new();
    let w = Workers::new(&p.trial, &none, 1, false);
    let q = asha::qualities(p.hpo.trials, p.hpo.seed);
    let r1 = asha::simulate(&p, &w, 1, &q);
    let serial: u64 = r1
        .trained_steps
        .iter()
        .map(|s| s * p.trial.step_ns(1))
        .sum();
    assert_eq!(r1.makespan_ns, serial);
    // Some trials were stopped early and some trained to max_t.
    assert!(r1.trained_steps.contains(&p.hpo.grace_period_steps));
    assert!(r1.trained_steps.contains(&p.hpo.max_t_steps));
    for b in [3, 8, 16] {
        let r = asha::simulate(&p, &w, b, &q);
        let mut segs = r.segments.clone();
        segs.sort_by_key(|s| s.start_ns);
        let mut t = 0;
        let mut trial_steps = 0;
        for s in &segs {
            assert_eq!(s.worker, 0);
            assert_eq!(s.start_ns, t, "b = {b}: a gap or an overlap");
            assert_eq!(
                s.end_ns - s.start_ns,
                (s.to_steps - s.from_steps) * p.trial.step_ns(s.trials)
            );
            t = s.end_ns;
            trial_steps += (s.to_steps - s.from_steps) * u64::from(s.trials);
        }
        assert_eq!(t, r.makespan_ns);
        assert_eq!(trial_steps, r.trained_steps.iter().sum::<u64>());
    }
}

/// Asynchronous promotion never waits on a rung barrier: a surviving bundle trains on from the
/// instant it reached its milestone, on the same worker, and trials reach the second rung before
/// the last trial has reached the first (impossible under synchronous SH).
#[test]
fn asynchronous_promotion_never_waits_on_a_rung_barrier() {
    let p = preset("bubbles-gpt-32gpus-resnet18");
    let r8 = rates(&p);
    let w = Workers::new(&p.trial, &r8, p.hpo.gpus_per_stage, true);
    assert_eq!(w.len(), 1 + 4 * 8);
    let q = asha::qualities(p.hpo.trials, p.hpo.seed);
    for b in [1, 4] {
        let r = asha::simulate(&p, &w, b, &q);
        for s in r.segments.iter().filter(|s| s.from_steps > 0) {
            assert!(
                r.segments.iter().any(|e| e.worker == s.worker
                    && e.end_ns == s.start_ns
                    && e.to_steps == s.from_steps),
                "b = {b}: {s:?} waited"
            );
        }
        let first_at_rung1 = r.arrivals[1].iter().min().unwrap();
        let last_at_rung0 = r.arrivals[0].iter().max().unwrap();
        assert!(first_at_rung1 < last_at_rung0, "b = {b}");
        assert_eq!(r.arrivals[0].len(), p.hpo.trials as usize);
    }
}

/// No tuner beats the critical path: every speed-up is at most the ceiling (exclusive makespan
/// ÷ the winner's training alone), on every preset, both tuners, over the whole sweep.
#[test]
fn no_speed_up_exceeds_the_critical_path_ceiling() {
    for id in [
        "bubbles-gpt-32gpus-resnet18",
        "bubbles-gpt-32gpus-small-gpt",
        "bubbles-zb-h1-resnet18",
    ] {
        for tuner in [TunerKind::Asha, TunerKind::SyncSh] {
            let mut p = preset(id);
            p.hpo.tuner = tuner;
            let r = rates(&p);
            for (n, h) in hpo::sweep(&p, &r) {
                assert!(h.winner_alone_ns > 0);
                assert!(
                    h.speedup() <= h.ceiling() + 1e-12,
                    "{id} {tuner:?} N = {n}: {} > {}",
                    h.speedup(),
                    h.ceiling()
                );
                assert!(h.with_bubbles_ns >= h.winner_alone_ns);
            }
        }
    }
}

/// The figure: today's synchronous SH preset (64 trials, η = 2, 200 steps in rung 0) has
/// a ceiling of 1.86×: 262.4 s on one GPU ÷ 12,800 steps × 11 ms.
#[test]
fn the_sync_sh_ceiling_of_the_seed_preset() {
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.hpo.tuner = TunerKind::SyncSh;
    let h = hpo::run(&p, &rates(&p));
    assert_eq!(h.winner_steps, 12_800);
    assert_eq!(h.winner_alone_ns, 12_800 * 11_000_000);
    assert_eq!(h.exclusive_ns, 262_400_000_000);
    assert!((h.ceiling() - 262.4 / 140.8).abs() < 1e-12);
    assert!((h.speedup() - 1.1762).abs() < 5e-4, "{}", h.speedup());
}

/// Hydro's split (`trial_runner.py`, `trial_fusion_according_plan_and_resource`), computed by
/// hand: ⌈N/G⌉ when within the limit, else the limit's bundles evened out.
#[test]
fn hydros_bundle_size_splits_the_trials_evenly_over_the_gpus_up_to_the_limit() {
    assert_eq!(asha::hydro_bundle(64, 1, 16), 16); // 64 per GPU > 16: ⌈64/⌈64/16⌉⌉ = 16
    assert_eq!(asha::hydro_bundle(64, 33, 16), 2); // ⌈64/33⌉ = 2 ≤ 16
    assert_eq!(asha::hydro_bundle(100, 3, 16), 15); // 34 > 16: ⌈100/⌈100/16⌉⌉ = ⌈100/7⌉ = 15
    assert_eq!(asha::hydro_bundle(10, 4, 16), 3);
    assert_eq!(asha::hydro_bundle(5, 8, 16), 1);
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.hpo.bundle = bubblelab_core::labs::bubbles::BundleRule::Hydro;
    let h = hpo::run(&p, &rates(&p));
    assert_eq!(
        (h.fusion_exclusive, h.fusion_with_bubbles),
        (16, asha::hydro_bundle(64, 1 + 4 * 8, 16))
    );
    // The oracle is never slower than Hydro's split: it tries Hydro's F among the others.
    p.hpo.bundle = bubblelab_core::labs::bubbles::BundleRule::Oracle;
    let o = hpo::run(&p, &rates(&p));
    assert!(o.with_bubbles_ns <= h.with_bubbles_ns);
    assert!(o.exclusive_ns <= h.exclusive_ns);
}

#[test]
fn hydros_planner_limit_comes_from_the_memory_of_one_and_two_fused_trials() {
    const GIB: u64 = 1 << 30;
    // `planner.py`: ⌊(M − s) / (d − s)⌋.
    assert_eq!(asha::planner_limit(10, 4, 6), 3);
    assert_eq!(asha::planner_limit(80 * GIB, 5 * GIB / 4, 2 * GIB), 105);
    assert_eq!(asha::planner_limit(10, 4, 4), u32::MAX);
    assert_eq!(asha::planner_limit(3, 4, 6), 1);
    // The ResNet-18 trial (0.5 GiB + 0.75 GiB per trial): capped at max_fusion on the preset, the
    // planner's own figure on a 24 GiB GPU with room to fuse 64.
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.hpo.bundle = bubbles::BundleRule::HydroProfiled;
    assert_eq!(asha::fusion_limit(&p), p.max_fusion);
    p.max_fusion = 64;
    p.gpu_memory_bytes = 24 * GIB;
    assert_eq!(asha::fusion_limit(&p), 30);
    p.hpo.bundle = bubbles::BundleRule::Hydro;
    assert_eq!(asha::fusion_limit(&p), 64);
}
