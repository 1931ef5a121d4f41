//! The migration lab's claims (docs/CLAIMS.md, FlowGPU rows): directions pinned on the presets,
//! plus known answers of the cost model and its refusals.

use bubblelab_core::labs::migration::{
    self, evaluate, model, preemption_cost_s, CheckpointOption, MigrationParams,
};
use bubblelab_core::{presets, Scenario};

fn preset(id: &str) -> MigrationParams {
    match presets::find(id)
        .expect("preset")
        .scenario()
        .expect("parses")
    {
        Scenario::Migration(p) => p,
        other => panic!("not a migration preset: {}", other.lab()),
    }
}

const PRESETS: [&str; 3] = [
    "migration-7b-tp2-dp4-one-node",
    "migration-13b-tp4-two-nodes",
    "migration-small-cnn-cpu-bound",
];

#[test]
fn active_low_point_dedup_pauses_and_restores_faster_than_the_reserved_pool() {
    for id in PRESETS {
        let p = preset(id);
        let pool = evaluate(&p, CheckpointOption::ReservedPool);
        let best = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
        assert!(best.gpu_image_bytes < pool.gpu_image_bytes, "{id}");
        assert!(
            best.pause_to_storage.total_s() < pool.pause_to_storage.total_s(),
            "{id}"
        );
        assert!(best.restore.total_s() <= pool.restore.total_s(), "{id}");
        assert!(best.migrate_s() < pool.migrate_s(), "{id}");
    }
    // Where the image leaves the node the pause is several times faster (FlowGPU: 6.2–15×).
    for id in PRESETS {
        let p = preset(id);
        let pool = evaluate(&p, CheckpointOption::ReservedPool);
        let best = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
        let x = pool.pause_to_storage.total_s() / best.pause_to_storage.total_s();
        assert!(x > 3.0, "{id}: {x}");
    }
}

#[test]
fn each_option_never_saves_more_than_the_one_before() {
    for id in PRESETS {
        let p = preset(id);
        let b: Vec<f64> = CheckpointOption::ALL[..4]
            .iter()
            .map(|&o| evaluate(&p, o).gpu_image_bytes)
            .collect();
        assert!(b[1] <= b[0] && b[3] <= b[2], "{id}: {b:?}");
        let t: Vec<f64> = CheckpointOption::ALL[..4]
            .iter()
            .map(|&o| evaluate(&p, o).pause_to_storage.total_s())
            .collect();
        // The bounded wait is chosen to minimise wait + pause to storage, so it never loses to
        // no wait.
        assert!(t[2] <= t[1] + 1e-12, "{id}: {t:?}");
    }
}

#[test]
fn a_cpu_bound_job_gains_nothing_on_local_pause_but_still_on_migration() {
    let p = preset("migration-small-cnn-cpu-bound");
    let pool = evaluate(&p, CheckpointOption::ReservedPool);
    let best = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
    // The CPU state dump sets the local pause either way (the wait only adds).
    assert!(best.pause.cpu_state_s > best.pause.gpu_copy_s);
    assert!(pool.pause.total_s() / best.pause.total_s() < 1.5);
    // Through storage the low point (0.2 GiB instead of ~13 GiB per GPU) still pays.
    assert!(best.pause.wait_s > 0.0);
    assert!(pool.migrate_s() / best.migrate_s() > 2.0);
}

#[test]
fn transparent_migration_beats_framework_checkpoint_and_restart() {
    for id in PRESETS {
        let p = preset(id);
        let best = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
        let fw = evaluate(&p, CheckpointOption::Framework);
        assert!(best.migrate_s() < fw.migrate_s(), "{id}");
    }
}

#[test]
fn known_answer_of_the_default_job() {
    // 2.7 B params × (2 + 12) bytes = 37.8e9 bytes of weights + optimizer per GPU, DP=8.
    let mut p = MigrationParams::default();
    p.job.cpu_state_gib = 0.0;
    let j = &p.job;
    assert!((model::static_bytes(j) - 37.8e9).abs() < 1.0);
    // Reserved pool: 76 GiB × 8 GPUs over 50 GB/s per GPU, in parallel: 76·2³⁰/50e9 s + drain.
    let pool = evaluate(&p, CheckpointOption::ReservedPool);
    let copy = 76.0 * model::GIB / 50e9;
    assert!((pool.pause.gpu_copy_s - copy).abs() < 1e-9);
    assert!((pool.pause.total_s() - (0.05 + copy)).abs() < 1e-9);
    // Dedup at the iteration boundary: 8 replicas of 37.8e9 identical bytes save one copy.
    let mut q = p.clone();
    q.options.request_at_fraction = 0.0;
    q.options.max_wait_s = 0.0;
    let d = evaluate(&q, CheckpointOption::ActiveLowPointDedup);
    assert!(
        (d.gpu_image_bytes - 37.8e9).abs() < 1.0,
        "{}",
        d.gpu_image_bytes
    );
    let a = evaluate(&q, CheckpointOption::ActiveLowPoint);
    assert!((a.gpu_image_bytes - 8.0 * 37.8e9).abs() < 1.0);
}

#[test]
fn bounded_wait_reaches_the_low_point_only_when_the_bound_allows() {
    let mut p = MigrationParams::default();
    p.options.request_at_fraction = 0.9;
    p.options.max_wait_s = 0.0;
    let none = evaluate(&p, CheckpointOption::ActiveLowPoint);
    assert_eq!(none.pause.wait_s, 0.0);
    p.options.max_wait_s = 1.0;
    let waited = evaluate(&p, CheckpointOption::ActiveLowPoint);
    // From 1.8 s into a 2 s iteration the boundary is 0.2 s away and drops the gradients
    // (5.4e9 bytes per GPU, 43.2e9 per node: 4.3 s of the node's 10 GB/s storage link).
    assert!(
        (waited.pause.wait_s - 0.2).abs() < 1e-9,
        "{}",
        waited.pause.wait_s
    );
    assert!(waited.gpu_image_bytes < none.gpu_image_bytes);
}

#[test]
fn fairness_hook_cost_grows_with_slower_options() {
    let p = MigrationParams::default();
    for g in [1, 3, 8, 64] {
        let fast = preemption_cost_s(&p, CheckpointOption::ActiveLowPointDedup, g);
        let pool = preemption_cost_s(&p, CheckpointOption::ReservedPool, g);
        let fw = preemption_cost_s(&p, CheckpointOption::Framework, g);
        assert!(fast.is_finite() && fast > 0.0);
        assert!(fast < pool && fast < fw, "{g}: {fast} {pool} {fw}");
    }
}

#[test]
fn bad_fields_are_named() {
    let cases = [
        (
            r#"{"job":{"model_parallel":3}}"#,
            "migration.job.model_parallel",
        ),
        (
            r#"{"job":{"reserved_gib":10}}"#,
            "migration.job.reserved_gib",
        ),
        (r#"{"links":{"d2h_gbps":0}}"#, "migration.links.d2h_gbps"),
        (
            r#"{"options":{"request_at_fraction":2}}"#,
            "migration.options.request_at_fraction",
        ),
        (r#"{"job":{"gpuz":3}}"#, "migration.job.gpuz"),
    ];
    for (params, path) in cases {
        let text = format!(r#"{{"version":1,"lab":"migration","params":{params}}}"#);
        let e = Scenario::from_json(&text).unwrap_err();
        assert_eq!(e.path(), Some(path), "{e}");
    }
}

#[test]
fn print_presets() {
    for id in PRESETS {
        let r = migration::run(&preset(id)).unwrap();
        println!("{}", r.to_text());
    }
}

#[test]
fn report_has_table_timelines_series() {
    let r = migration::run(&preset("migration-7b-tp2-dp4-one-node")).unwrap();
    assert_eq!(r.tables[0].rows.len(), 5);
    assert_eq!(r.timelines.len(), 5);
    assert!(r.series.iter().any(|s| s.name == "active memory"));
    assert!(
        r.metric("framework.migrate_s").unwrap()
            > r.metric("active-low-point-dedup.migrate_s").unwrap()
    );
}
