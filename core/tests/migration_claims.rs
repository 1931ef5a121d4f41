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
fn a_cpu_bound_job_gains_little_on_a_local_pause_but_much_on_migration() {
    let p = preset("migration-small-cnn-cpu-bound");
    let pool = evaluate(&p, CheckpointOption::ReservedPool);
    let best = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
    // Through storage the CPU image (3 GiB per process) is most of what moves, and the low
    // point (0.2 GiB instead of ~15 GiB per GPU) still pays.
    assert!(best.migrate_pause.wait_s > 0.0);
    assert!(pool.migrate_s() / best.migrate_s() > 2.0);
    assert!(best.migrate_restore.cpu_state_s > 0.0);
}

/// An in-place pause keeps the process alive: no CPU-state dump, no process, context or handle
/// re-creation on resume; a checkpoint to storage dumps the CPU state and a migration's restore
/// pays every fixed term of its system.
#[test]
fn an_in_place_pause_keeps_the_process_alive() {
    for id in PRESETS {
        let p = preset(id);
        assert!(p.job.cpu_state_gib > 0.0);
        for o in &CheckpointOption::ALL[..4] {
            let c = evaluate(&p, *o);
            assert_eq!(c.pause.cpu_state_s, 0.0, "{id} {o:?}");
            assert_eq!(c.restore.cpu_state_s, 0.0, "{id} {o:?}");
            assert_eq!(c.restore.fixed_s(), 0.0, "{id} {o:?}");
            assert!(c.pause_to_storage.cpu_state_s > 0.0, "{id} {o:?}");
            assert!(c.migrate_pause.cpu_state_s > 0.0, "{id} {o:?}");
            let sys = if *o == CheckpointOption::ReservedPool {
                p.systems.pos
            } else {
                p.systems.flowgpu
            };
            assert_eq!(c.migrate_restore.process_s, sys.process_restore_s);
            assert_eq!(c.migrate_restore.context_s, sys.context_s);
            assert_eq!(c.migrate_restore.replay_s, sys.replay_s);
            assert_eq!(c.migrate_restore.init_s, 0.0);
        }
    }
}

/// Every pause and restore is the sum of its components: wait + drain + the slower of the two
/// parallel copies + process + context + replay + initialisation; a migration is its pause plus
/// its restore, and its timeline ends there.
#[test]
fn each_options_pause_and_restore_components_add_up() {
    for id in PRESETS {
        let p = preset(id);
        let r = migration::run(&p).unwrap();
        for o in CheckpointOption::ALL {
            let c = evaluate(&p, o);
            for ph in [
                c.pause,
                c.restore,
                c.pause_to_storage,
                c.migrate_pause,
                c.migrate_restore,
            ] {
                let sum = ph.wait_s
                    + ph.drain_s
                    + ph.gpu_copy_s.max(ph.cpu_state_s)
                    + ph.process_s
                    + ph.context_s
                    + ph.replay_s
                    + ph.init_s;
                assert!((ph.total_s() - sum).abs() < 1e-12, "{id} {o:?}");
            }
            assert!(
                (c.migrate_s() - c.migrate_pause.total_s() - c.migrate_restore.total_s()).abs()
                    < 1e-12
            );
            let tl = r
                .timelines
                .iter()
                .find(|t| t.name == format!("migrate: {}", o.label()))
                .unwrap();
            let end = tl
                .lanes
                .iter()
                .flat_map(|l| &l.spans)
                .map(|s| s.start_ns + s.dur_ns)
                .max()
                .unwrap();
            assert!(
                (end as f64 / 1e9 - c.migrate_s()).abs() < 1e-6,
                "{id} {o:?}: {end} vs {}",
                c.migrate_s()
            );
            let key = format!("{}.migrate_restore_s", o.id());
            assert_eq!(r.metric(&key), Some(c.migrate_restore.total_s()));
        }
    }
}

/// POS's and FlowGPU's fixed restore costs are separate terms: changing one system's term moves
/// only its own option's restore, by exactly that much.
#[test]
fn each_systems_fixed_costs_are_its_own() {
    let p = preset("migration-7b-tp2-dp4-one-node");
    let mut q = p.clone();
    q.systems.pos.replay_s += 5.0;
    q.systems.pos.context_s += 1.0;
    let d = |p: &MigrationParams, o| evaluate(p, o).migrate_restore.total_s();
    assert!(
        (d(&q, CheckpointOption::ReservedPool) - d(&p, CheckpointOption::ReservedPool) - 6.0).abs()
            < 1e-9
    );
    for o in &CheckpointOption::ALL[1..] {
        assert_eq!(d(&q, *o), d(&p, *o), "{o:?}");
    }
    let mut f = p.clone();
    f.systems.flowgpu.process_restore_s = 0.0;
    let best = |p: &MigrationParams| evaluate(p, CheckpointOption::ActiveLowPointDedup);
    assert!(
        (best(&p).migrate_restore.total_s()
            - best(&f).migrate_restore.total_s()
            - p.systems.flowgpu.process_restore_s)
            .abs()
            < 1e-9
    );
    assert_eq!(
        d(&f, CheckpointOption::ReservedPool),
        d(&p, CheckpointOption::ReservedPool)
    );
}

/// Dedup saves storage and network bytes, never a GPU's own copy: at the same point the
/// per-GPU device↔host copies are the same with and without dedup; only what goes through
/// storage shrinks.
#[test]
fn dedup_does_not_shrink_a_per_gpu_copy() {
    let mut p = preset("migration-7b-tp2-dp4-one-node");
    p.options.max_wait_s = 0.0;
    let a = evaluate(&p, CheckpointOption::ActiveLowPoint);
    let d = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
    assert_eq!(a.pause.gpu_copy_s, d.pause.gpu_copy_s);
    assert_eq!(a.restore.gpu_copy_s, d.restore.gpu_copy_s);
    assert!(d.gpu_image_bytes < a.gpu_image_bytes);
    assert!(d.pause_to_storage.gpu_copy_s < a.pause_to_storage.gpu_copy_s);
    assert!(d.migrate_restore.gpu_copy_s < a.migrate_restore.gpu_copy_s);
    // With storage far faster than the GPU link, dedup buys nothing: each GPU's own bytes set
    // the time.
    p.links.storage_write_gbps = 10_000.0;
    p.links.storage_read_gbps = 10_000.0;
    let a = evaluate(&p, CheckpointOption::ActiveLowPoint);
    let d = evaluate(&p, CheckpointOption::ActiveLowPointDedup);
    assert_eq!(a.migrate_s(), d.migrate_s());
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
    assert_eq!(none.pause_to_storage.wait_s, 0.0);
    p.options.max_wait_s = 1.0;
    let waited = evaluate(&p, CheckpointOption::ActiveLowPoint);
    // From 1.8 s into a 2 s iteration the boundary is 0.2 s away and drops the gradients
    // (5.4e9 bytes per GPU, 43.2e9 per node: 4.3 s of the node's 10 GB/s storage link).
    assert!(
        (waited.pause_to_storage.wait_s - 0.2).abs() < 1e-9,
        "{}",
        waited.pause_to_storage.wait_s
    );
    assert!((waited.migrate_pause.wait_s - 0.2).abs() < 1e-9);
    assert!(waited.gpu_image_bytes < none.gpu_image_bytes);
    // A local pause chooses its own point: 5.4e9 bytes over the GPU's 50 GB/s link take
    // 0.108 s, less than the 0.2 s wait, so it saves at once.
    assert_eq!(waited.pause.wait_s, 0.0);
    assert!((waited.pause_point_s - 1.8).abs() < 1e-9);
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
        (
            r#"{"systems":{"pos":{"replay_s":-1}}}"#,
            "migration.systems.pos.replay_s",
        ),
        (
            r#"{"systems":{"flowgpu":{"context_s":1e9}}}"#,
            "migration.systems.flowgpu.context_s",
        ),
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
