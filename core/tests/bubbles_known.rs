#![cfg(not(target_arch = "wasm32"))]
//! Known answers and claim directions of the bubbles lab (docs/CLAIMS.md, "Bubbles lab").
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::bubbles::params::PolicyKind;
use bubblelab_core::labs::bubbles::{self, policies, BubblesParams, MainTimeline, Outcome, Window};
use bubblelab_core::labs::pipeline::{run_schedule, ScheduleKind};
use bubblelab_core::{presets, Report, Scenario, ScenarioError};

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

fn metric(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("metric {k}"))
}

/// Variations that exercise short windows, tight memory and every schedule.
fn variants() -> Vec<BubblesParams> {
    let mut out = Vec::new();
    for id in [
        "bubbles-gpt-32gpus-resnet18",
        "bubbles-gpt-32gpus-small-gpt",
        "bubbles-gpt-32gpus-gpt2-surrogate",
        "bubbles-zb-h1-resnet18",
    ] {
        out.push(preset(id));
    }
    for kind in ScheduleKind::ALL {
        // GPU memory = what the main job needs + 6, 22 or 40 GiB of room.
        for (room_gib, modules, fusion) in [(6u64, 2u32, 64u32), (22, 10, 16), (40, 1, 32)] {
            let mut p = preset("bubbles-gpt-32gpus-resnet18");
            p.main.schedules = vec![kind];
            let run = run_schedule(&p.main, kind).unwrap();
            let peak = run.peak_activation_bytes.iter().copied().max().unwrap();
            p.gpu_memory_bytes = p.static_bytes[0] + peak + p.reserve_bytes + (room_gib << 30);
            p.trial.modules_per_step = modules;
            p.max_fusion = fusion;
            out.push(p);
        }
    }
    out
}

#[test]
fn a_window_shorter_than_the_pause_granularity_is_never_used() {
    let mut total_used = 0;
    for p in variants() {
        let run = run_schedule(&p.main, p.schedule()).unwrap();
        let main = MainTimeline::from_schedule(&run, &p);
        let sq = policies::squeezer::run(&main, &p, p.max_fusion);
        let mut used = 0;
        for (w, o) in sq.windows.iter().zip(&sq.outcomes) {
            if let Outcome::Used { fusion, modules } = o {
                used += 1;
                let module = p.trial.module_ns(*fusion);
                assert!(
                    w.duration_ns >= module,
                    "{w:?} used with module {module} ns"
                );
                assert!(
                    p.detect_ns + p.resume_ns + modules * module <= w.duration_ns,
                    "{w:?} overrun"
                );
            }
        }
        for g in &sq.guest {
            let inside = sq.windows.iter().any(|w| {
                w.stage == g.stage
                    && w.safe
                    && g.start_ns >= w.start_ns
                    && g.start_ns + g.dur_ns <= w.end_ns()
            });
            assert!(inside, "guest span outside a safe window: {g:?}");
        }
        total_used += used;
    }
    assert!(total_used > 100, "{total_used}");
    // A hand-made window one nanosecond shorter than one module at F = 1.
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.detect_ns = 0;
    p.resume_ns = 0;
    let short = Window {
        stage: 0,
        iteration: 0,
        start_ns: 0,
        duration_ns: p.trial.module_ns(1) - 1,
        free_bytes: 80 << 30,
        safe: true,
    };
    assert_eq!(
        policies::squeezer::decide(&short, &p, 1),
        Outcome::Skipped(policies::squeezer::SKIP_SHORT)
    );
    let exact = Window {
        duration_ns: p.trial.module_ns(1),
        ..short
    };
    assert_eq!(
        policies::squeezer::decide(&exact, &p, 1),
        Outcome::Used {
            fusion: 1,
            modules: 1
        }
    );
}

#[test]
fn memory_never_exceeds_capacity_in_any_window() {
    for p in variants() {
        let run = run_schedule(&p.main, p.schedule()).unwrap();
        let main = MainTimeline::from_schedule(&run, &p);
        let sq = policies::squeezer::run(&main, &p, p.max_fusion);
        for (w, o) in sq.windows.iter().zip(&sq.outcomes) {
            if let Outcome::Used { fusion, .. } = o {
                let peak = main.peak_memory(w.stage as usize, w.start_ns, w.end_ns());
                assert!(
                    peak + p.trial.memory_bytes(*fusion) + p.reserve_bytes <= p.gpu_memory_bytes,
                    "{w:?}: F={fusion} over capacity"
                );
            }
        }
        // The drawn memory counters (main + guest) stay under capacity too.
        let report = bubbles::run(&p).unwrap();
        for t in &report.timelines {
            for c in t.counters.iter().filter(|c| c.unit == "bytes") {
                for &(_, v) in &c.points {
                    assert!(v <= p.gpu_memory_bytes as f64, "{}: {v} bytes", c.name);
                }
            }
        }
    }
    // No room at all: every window is skipped for memory.
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.trial.base_bytes = 38 << 30;
    let run = run_schedule(&p.main, p.schedule()).unwrap();
    let sq = policies::squeezer::run(&MainTimeline::from_schedule(&run, &p), &p, 16);
    assert!(sq.guest.is_empty());
    assert!(sq
        .outcomes
        .contains(&Outcome::Skipped(policies::squeezer::SKIP_MEMORY)));
    // A main job that does not fit by itself is refused, naming the field.
    p.gpu_memory_bytes = 50 << 30;
    p.trial.base_bytes = 1 << 30;
    let e = bubbles::run(&p).unwrap_err();
    assert_eq!(e.path(), Some("bubbles.gpu_memory_bytes"), "{e}");
}

#[test]
fn with_no_guest_the_main_job_is_unchanged_to_the_nanosecond() {
    for p in variants() {
        let run = run_schedule(&p.main, p.schedule()).unwrap();
        let main = MainTimeline::from_schedule(&run, &p);
        let none = policies::none::run(&main, &p);
        let sq = policies::squeezer::run(&main, &p, p.max_fusion);
        for r in [&none, &sq] {
            assert_eq!(r.main.span_ns(), run.iteration_ns);
            let mut ours: Vec<(u32, u64, u64)> = r
                .main
                .ops
                .iter()
                .map(|o| (o.stage, o.start_ns, o.end_ns))
                .collect();
            let mut theirs: Vec<(u32, u64, u64)> = run
                .ops
                .iter()
                .map(|o| (o.device, o.start.0, o.end.0))
                .collect();
            ours.sort_unstable();
            theirs.sort_unstable();
            assert_eq!(ours, theirs);
        }
        let report = bubbles::run(&p).unwrap();
        assert_eq!(
            metric(&report, "none.iteration_ms"),
            run.iteration_ns as f64 / 1e6
        );
        assert_eq!(metric(&report, "squeezer.slowdown"), 0.0);
        assert_eq!(metric(&report, "none.trial_steps_per_iteration"), 0.0);
    }
    // A guest that keeps no SM and no HBM bandwidth busy leaves the main job unchanged under
    // blind colocation too: the interference is derived from its shares, not given.
    let mut p = preset("bubbles-gpt-32gpus-resnet18");
    p.trial.kernel_sm_activity = 0.0;
    p.trial.kernel_hbm_activity = 0.0;
    let r = bubbles::run(&p).unwrap();
    assert_eq!(
        metric(&r, "blind.iteration_ms"),
        metric(&r, "none.iteration_ms")
    );
}

/// Blind colocation's slowdown is an output of the guest's SM and HBM shares (the kernel's
/// contention rule: compute at 1/(1 + s)): only compute stretches, so the iteration slows by
/// less than s; a busier guest slows it more; the bandwidth share counts when it binds.
#[test]
fn blind_interference_is_derived_from_the_guests_shares() {
    let p = preset("bubbles-gpt-32gpus-resnet18");
    let r = bubbles::run(&p).unwrap();
    let s = p.trial.contention_share(16);
    assert!((s - 0.8 * 48.0 / 56.0).abs() < 1e-12, "{s}");
    let slow = metric(&r, "blind.slowdown");
    assert!(slow > 0.5 * s && slow < s, "{slow} vs s = {s}");
    let mut lighter = p.clone();
    lighter.trial.kernel_sm_activity = 0.4;
    let l = bubbles::run(&lighter).unwrap();
    assert!(metric(&l, "blind.slowdown") < slow);
    let mut bw = lighter.clone();
    bw.trial.kernel_hbm_activity = 0.8;
    assert_eq!(bw.trial.contention_share(16), bw.trial.hbm_activity(16));
    let b = bubbles::run(&bw).unwrap();
    assert!(metric(&b, "blind.slowdown") > metric(&l, "blind.slowdown"));
}

/// The seed's four claims on the seed's preset: directions, and our numbers pinned.
#[test]
fn claims_directions_on_the_seed_preset() {
    let p = preset("bubbles-gpt-32gpus-resnet18");
    let r = bubbles::run(&p).unwrap();
    let (none_sm, sq_sm) = (
        metric(&r, "none.bubble_sm_activity"),
        metric(&r, "squeezer.bubble_sm_activity"),
    );
    assert!((none_sm - 0.02).abs() < 1e-12, "{none_sm}");
    assert!(sq_sm > 10.0 * none_sm && sq_sm > 0.3, "{sq_sm}");
    assert!((sq_sm - 0.4339).abs() < 5e-4, "pinned: {sq_sm}");
    let frac = metric(&r, "squeezer.guest_fraction");
    assert!(frac > 0.05 && frac < 0.4, "{frac}");
    assert!((frac - 0.175).abs() < 5e-4, "pinned: {frac}");
    assert_eq!(metric(&r, "squeezer.slowdown"), 0.0);
    let blind = metric(&r, "blind.slowdown");
    assert!(blind > 0.0, "{blind}");
    assert!((blind - 0.6695).abs() < 5e-4, "pinned: {blind}");
    // ASHA (the default tuner) with Hydro's even split (F = 2 over 33 GPUs): slower with the
    // bubbles at 64 trials; the oracle bundle size (best F in hindsight, a bound) is faster.
    // Both stay under the critical-path ceiling.
    let speedup = metric(&r, "hpo.speedup");
    assert!((speedup - 0.4942).abs() < 5e-4, "pinned: {speedup}");
    let ceiling = metric(&r, "hpo.ceiling");
    assert!((ceiling - 5.4957).abs() < 5e-4, "pinned: {ceiling}");
    let mut oracle = p.clone();
    oracle.hpo.bundle = bubbles::BundleRule::Oracle;
    let ro = bubbles::run(&oracle).unwrap();
    let best = metric(&ro, "hpo.speedup");
    assert!(best > 1.0 && best <= ceiling, "{best} {ceiling}");
    assert!((best - 1.4699).abs() < 5e-4, "pinned: {best}");
    assert!(metric(&ro, "hpo.with_bubbles_s") < metric(&ro, "hpo.exclusive_s"));
    // Synchronous SH: more bubble GPUs never make the tuning job slower (each bundle goes to
    // the worker that finishes it first, rung by rung).
    let mut sh = p.clone();
    sh.hpo.tuner = bubbles::TunerKind::SyncSh;
    let rs = bubbles::run(&sh).unwrap();
    assert!((metric(&rs, "hpo.speedup") - 1.1762).abs() < 5e-4);
    let mut more = sh.clone();
    more.hpo.gpus_per_stage = 32;
    let r2 = bubbles::run(&more).unwrap();
    assert!(metric(&r2, "hpo.with_bubbles_s") <= metric(&rs, "hpo.with_bubbles_s"));
    for key in ["policies", "windows", "hpo", "hpo_sweep", "claims"] {
        assert!(r.tables.iter().any(|t| t.key == key), "table {key}");
    }
    assert_eq!(
        r.series
            .iter()
            .filter(|s| s.chart == "bubbles.sm_activity")
            .count(),
        3
    );
}

#[test]
fn zb_h1_leaves_less_to_squeeze_than_1f1b() {
    let a = bubbles::run(&preset("bubbles-gpt-32gpus-resnet18")).unwrap();
    let z = bubbles::run(&preset("bubbles-zb-h1-resnet18")).unwrap();
    assert!(metric(&z, "windows.bubble_ratio") < metric(&a, "windows.bubble_ratio"));
    assert!(
        metric(&z, "squeezer.trial_steps_per_iteration")
            < metric(&a, "squeezer.trial_steps_per_iteration")
    );
}

#[test]
fn same_params_give_byte_identical_reports() {
    for id in [
        "bubbles-gpt-32gpus-resnet18",
        "bubbles-gpt-32gpus-small-gpt",
        "bubbles-gpt-32gpus-gpt2-surrogate",
        "bubbles-zb-h1-resnet18",
        "bubbles-pipemorph-a10",
    ] {
        let p = preset(id);
        assert_eq!(
            bubbles::run(&p).unwrap().to_json(),
            bubbles::run(&p).unwrap().to_json(),
            "{id}"
        );
    }
}

#[test]
fn bad_params_name_their_field() {
    let cases = [
        (
            r#"{"main":{"schedules":["1f1b","gpipe"]}}"#,
            "bubbles.main.schedules",
        ),
        (r#"{"main":{"stages":0}}"#, "bubbles.main.stages"),
        (r#"{"max_fusion":0}"#, "bubbles.max_fusion"),
        (
            r#"{"trial":{"kernel_hbm_activity":1.5}}"#,
            "bubbles.trial.kernel_hbm_activity",
        ),
        (
            r#"{"hpo":{"reduction_factor":1}}"#,
            "bubbles.hpo.reduction_factor",
        ),
        (
            r#"{"hpo":{"grace_period_steps":500,"max_t_steps":100}}"#,
            "bubbles.hpo.max_t_steps",
        ),
        (
            r#"{"trial":{"modules_per_step":0}}"#,
            "bubbles.trial.modules_per_step",
        ),
        (r#"{"static_bytes":[1,2,3]}"#, "bubbles.static_bytes"),
        (r#"{"hpo":{"stages":9}}"#, "bubbles.hpo.stages"),
        (r#"{"policies":[]}"#, "bubbles.policies"),
        (
            r#"{"policies":["squeezer","squeezer"]}"#,
            "bubbles.policies[1]",
        ),
        (r#"{"nccl_sm_activity":2}"#, "bubbles.nccl_sm_activity"),
    ];
    for (params, path) in cases {
        let text = format!(r#"{{"version":1,"lab":"bubbles","params":{params}}}"#);
        match Scenario::from_json(&text) {
            Err(ScenarioError::Field { path: got, .. }) => assert_eq!(got, path, "{params}"),
            other => panic!("{params}: {other:?}"),
        }
    }
    let e =
        Scenario::from_json(r#"{"version":1,"lab":"bubbles","params":{"bogus":1}}"#).unwrap_err();
    assert!(e.to_string().contains("bogus"), "{e}");
    assert_eq!(PolicyKind::from_id("squeezer"), Some(PolicyKind::Squeezer));
}

/// The `gpt2-surrogate` trial preset is the tuning lab's fusion model of its default surrogate
/// on the bubbles lab's A100, not assumed numbers; a scenario that names a preset without
/// giving `trial` gets that preset's profile.
#[test]
fn surrogate_trials_come_from_the_tuning_fusion_model() {
    use bubblelab_core::hw::GpuKind;
    use bubblelab_core::labs::bubbles::TrialPreset;
    use bubblelab_core::labs::tuning::{self, TuningParams};
    let mut tp = TuningParams::default();
    tp.fusion.gpu = GpuKind::A100;
    let from_model = tuning::fused_trial_profile(&tp).unwrap();
    let p = preset("bubbles-gpt-32gpus-gpt2-surrogate");
    assert_eq!(p.trial_preset, TrialPreset::Gpt2Surrogate);
    assert_eq!(p.trial, from_model);
    assert_eq!(TrialPreset::Gpt2Surrogate.profile(), from_model);
    // Step time and memory vs F are the fusion model's: memory to the byte, step time within
    // the rounding of its fixed and per-trial parts to whole ns (½ ns each, F times the latter).
    let layers = tuning::mup::shrink(&tp.shrinker).unwrap();
    let model = tuning::FusionModel::new(&tp.fusion, &tuning::surrogate_shape(&layers));
    for f in [1, 4, 16] {
        assert_eq!(p.trial.memory_bytes(f), model.memory_bytes(f));
        let exact = (model.step_s(f) * 1e9).round() as u64;
        assert!(
            p.trial.step_ns(f).abs_diff(exact) <= 1 + u64::from(f),
            "F = {f}"
        );
    }
    // Changing the fusion model's inputs changes the profile: nothing is hard-coded.
    let mut slower = tp.clone();
    slower.fusion.launch_overhead_us *= 2.0;
    assert!(tuning::fused_trial_profile(&slower).unwrap().step_fixed_ns > p.trial.step_fixed_ns);
    let r = bubbles::run(&p).unwrap();
    assert!(metric(&r, "squeezer.trial_steps_per_iteration") > 0.0);
    // The small-GPT preset names its preset only; its numbers are the preset's.
    assert_eq!(
        preset("bubbles-gpt-32gpus-small-gpt").trial,
        TrialPreset::SmallGpt.profile()
    );
    for id in TrialPreset::ALL {
        assert_eq!(TrialPreset::from_id(id.id()), Some(id));
        let json = format!(
            r#"{{"version":1,"lab":"bubbles","params":{{"trial_preset":"{}"}}}}"#,
            id.id()
        );
        let Scenario::Bubbles(q) = Scenario::from_json(&json).unwrap() else {
            panic!("bubbles")
        };
        assert_eq!(q.trial, id.profile());
    }
    // Explicit numbers win over the preset's.
    let Scenario::Bubbles(q) = Scenario::from_json(
        r#"{"version":1,"lab":"bubbles","params":{"trial_preset":"gpt2-surrogate","trial":{"step_per_trial_ns":7}}}"#,
    )
    .unwrap() else {
        panic!("bubbles")
    };
    assert_eq!(q.trial.step_per_trial_ns, 7);
}
