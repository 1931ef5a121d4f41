//! The migration lab's Report: the option comparison (image size, pause, restore, migrate, and
//! the speed-ups over the reserved pool and the framework checkpoint), a migration timeline per
//! option, the active-memory-over-iteration curve with each option's pause point, and findings.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::model::{self, CheckpointOption, OptionCost, Phases, GIB};
use super::params::MigrationParams;
use crate::report::{Cell, KindDef, Lane, Report, Series, Span, Table, Timeline};

fn find(costs: &[OptionCost], o: CheckpointOption) -> Option<&OptionCost> {
    costs.iter().find(|c| c.option == o)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::INFINITY
    }
}

fn ns(s: f64) -> u64 {
    crate::units::nanos_from_f64(s * 1e9).0
}

/// The migration lab's span kinds: the phases of a pause and a restore (`Phases`), and the
/// measured copy and restore of the CLI's `checkpoint-demo`.
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "wait",
        label: "wait for the pause point",
        meaning: "the job runs on until the chosen point of its iteration",
        colour: "#cbd5e1",
        trace_colour: "grey",
    },
    KindDef {
        cat: "drain",
        label: "drain",
        meaning: "in-flight kernels and collectives finish before the state is frozen",
        colour: "#94a3b8",
        trace_colour: "generic_work",
    },
    KindDef {
        cat: "copy",
        label: "GPU state copy",
        meaning: "GPU memory copied between the device and host, storage or the network",
        colour: "#3b82f6",
        trace_colour: "rail_response",
    },
    KindDef {
        cat: "cpu",
        label: "CPU state",
        meaning: "the process's host memory dumped or restored (checkpoint and migration only)",
        colour: "#22c55e",
        trace_colour: "good",
    },
    KindDef {
        cat: "process",
        label: "process restore",
        meaning: "a new process rebuilt from the CPU dump",
        colour: "#f59e0b",
        trace_colour: "rail_idle",
    },
    KindDef {
        cat: "context",
        label: "CUDA context",
        meaning: "the CUDA context with its modules on the destination GPU: from a pool (PhOS) or created",
        colour: "#7e22ce",
        trace_colour: "detailed_memory_dump",
    },
    KindDef {
        cat: "replay",
        label: "handle replay",
        meaning: "device allocations, streams, events and library handles re-created from the intercepted calls",
        colour: "#ec4899",
        trace_colour: "rail_animation",
    },
    KindDef {
        cat: "init",
        label: "framework initialisation",
        meaning: "a framework restart: imports, model build, communicators, warm-up",
        colour: "#dc2626",
        trace_colour: "terrible",
    },
    KindDef {
        cat: "restore",
        label: "restore (measured)",
        meaning: "the checkpoint demo's measured restore of the image at its original addresses",
        colour: "#0d9488",
        trace_colour: "background_memory_dump",
    },
];

/// Appends one pause or restore's spans at `at_s`; returns its end, s.
fn push_phases(lanes: &mut [Lane; 4], at_s: f64, ph: &Phases, what: &str) -> f64 {
    let mut t = at_s;
    let span = |lane: &mut Lane, start: f64, dur: f64, name: String, cat: &str| {
        if dur > 0.0 {
            lane.spans.push(Span {
                start_ns: ns(start),
                dur_ns: ns(dur).max(1),
                name,
                cat: cat.to_string(),
            });
        }
    };
    span(&mut lanes[0], t, ph.wait_s, format!("{what}: wait"), "wait");
    t += ph.wait_s;
    span(
        &mut lanes[0],
        t,
        ph.drain_s,
        format!("{what}: drain"),
        "drain",
    );
    t += ph.drain_s;
    span(
        &mut lanes[1],
        t,
        ph.gpu_copy_s,
        format!("{what}: GPU state"),
        "copy",
    );
    span(
        &mut lanes[2],
        t,
        ph.cpu_state_s,
        format!("{what}: CPU state"),
        "cpu",
    );
    t += ph.gpu_copy_s.max(ph.cpu_state_s);
    for (dur, name, cat) in [
        (ph.process_s, "process restore", "process"),
        (ph.context_s, "CUDA context", "context"),
        (ph.replay_s, "handle replay", "replay"),
        (ph.init_s, "framework initialisation", "init"),
    ] {
        span(&mut lanes[3], t, dur, format!("{what}: {name}"), cat);
        t += dur;
    }
    t
}

/// Builds the Report from every option's cost.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn build(params: &MigrationParams, costs: &[OptionCost]) -> Report {
    let j = &params.job;
    let mut report = Report {
        lab: "migration".into(),
        title: format!(
            "Pause, restore and migrate {} ({} GPUs, {} GiB reserved per GPU)",
            j.name,
            j.gpus,
            crate::report::format_number(j.reserved_gib)
        ),
        ..Report::default()
    };
    let pool = find(costs, CheckpointOption::ReservedPool);
    let fw = find(costs, CheckpointOption::Framework);
    let mut table = Table {
        key: "options".into(),
        title:
            "Checkpoint options: image, in-place pause and resume (host memory), checkpoint to storage, migration (via storage, restore in a new process on other GPUs)"
                .into(),
        columns: [
            "option",
            "pause point: local / storage / migration (s into iteration)",
            "GPU image on storage (GiB)",
            "CPU image (GiB)",
            "pause (s)",
            "restore (s)",
            "pause to storage (s)",
            "restore on other GPUs (s)",
            "migrate (s)",
            "pause speed-up vs reserved pool (×)",
            "pause-to-storage speed-up vs reserved pool (×)",
            "restore speed-up vs reserved pool (×)",
            "restore-on-other-GPUs speed-up vs reserved pool (×)",
            "migrate speed-up vs framework (×)",
        ]
        .iter()
        .map(alloc::string::ToString::to_string)
        .collect(),
        rows: Vec::new(),
    };
    for c in costs {
        let id = c.option.id();
        let (pause, restore, migrate) = (c.pause.total_s(), c.restore.total_s(), c.migrate_s());
        report.push_metric(
            &format!("{id}.pause_s"),
            &format!("{} pause", c.option.label()),
            pause,
            "s",
        );
        report.push_metric(
            &format!("{id}.restore_s"),
            &format!("{} restore", c.option.label()),
            restore,
            "s",
        );
        report.push_metric(
            &format!("{id}.pause_to_storage_s"),
            &format!("{} pause to storage", c.option.label()),
            c.pause_to_storage.total_s(),
            "s",
        );
        report.push_metric(
            &format!("{id}.migrate_restore_s"),
            &format!("{} restore on other GPUs", c.option.label()),
            c.migrate_restore.total_s(),
            "s",
        );
        report.push_metric(
            &format!("{id}.migrate_s"),
            &format!("{} migrate", c.option.label()),
            migrate,
            "s",
        );
        report.push_metric(
            &format!("{id}.image_bytes"),
            &format!("{} image", c.option.label()),
            c.image_bytes(),
            "bytes",
        );
        let vs = |base: Option<&OptionCost>, f: &dyn Fn(&OptionCost) -> f64| match base {
            Some(b) => Cell::Num(round(ratio(f(b), f(c)))),
            None => Cell::Missing,
        };
        table.rows.push(alloc::vec![
            Cell::Text(c.option.label().into()),
            Cell::Text(format!(
                "{} / {} / {}",
                crate::report::format_number(round(c.pause_point_s)),
                crate::report::format_number(round(c.storage_point_s)),
                crate::report::format_number(round(c.migrate_point_s))
            )),
            Cell::Num(round(c.gpu_image_bytes / GIB)),
            Cell::Num(round(c.cpu_image_bytes / GIB)),
            Cell::Num(round(pause)),
            Cell::Num(round(restore)),
            Cell::Num(round(c.pause_to_storage.total_s())),
            Cell::Num(round(c.migrate_restore.total_s())),
            Cell::Num(round(migrate)),
            vs(pool, &|x| x.pause.total_s()),
            vs(pool, &|x| x.pause_to_storage.total_s()),
            vs(pool, &|x| x.restore.total_s()),
            vs(pool, &|x| x.migrate_restore.total_s()),
            vs(fw, &|x| x.migrate_s()),
        ]);
        let mut lanes = [
            Lane {
                name: "wait / drain".into(),
                spans: Vec::new(),
            },
            Lane {
                name: "GPU state".into(),
                spans: Vec::new(),
            },
            Lane {
                name: "CPU state".into(),
                spans: Vec::new(),
            },
            Lane {
                name: "process / context / handles / restart".into(),
                spans: Vec::new(),
            },
        ];
        let mid = push_phases(&mut lanes, 0.0, &c.migrate_pause, "pause");
        push_phases(&mut lanes, mid, &c.migrate_restore, "restore");
        let mut timeline = Timeline {
            name: format!("migrate: {}", c.option.label()),
            lanes: lanes.into_iter().collect(),
            ..Timeline::default()
        };
        timeline.declare(&[SPAN_KINDS]);
        report.timelines.push(timeline);
    }
    report.tables.push(table);
    // The active-memory curve over one iteration, with the pause points.
    let it = j.iteration_s;
    let mut points = Vec::new();
    let steps = 200u32;
    for i in 0..=steps {
        let t = it * f64::from(i) / f64::from(steps);
        let t_eval = if i == steps { it * (1.0 - 1e-9) } else { t };
        points.push((round(t), round(model::active_at(j, t_eval).total() / GIB)));
    }
    let chart = "active-memory";
    let (xl, yl) = ("time in iteration (s)", "memory per GPU (GiB)");
    report.series.push(Series {
        name: "active memory".into(),
        chart: chart.into(),
        x_label: xl.into(),
        y_label: yl.into(),
        points,
    });
    let reserved = (j.reserved_gib * GIB).max(model::peak_active_bytes(j)) / GIB;
    report.series.push(Series {
        name: "reserved pool".into(),
        chart: chart.into(),
        x_label: xl.into(),
        y_label: yl.into(),
        points: alloc::vec![(0.0, round(reserved)), (round(it), round(reserved))],
    });
    if let Some(c) = find(costs, CheckpointOption::Active) {
        report.series.push(point_series(
            j,
            "pause point: at the request",
            c.pause_point_s,
        ));
    }
    if let Some(c) = find(costs, CheckpointOption::ActiveLowPointDedup) {
        for (name, t) in [
            ("pause point chosen for a local pause", c.pause_point_s),
            ("pause point chosen for storage", c.storage_point_s),
            ("pause point chosen for a migration", c.migrate_point_s),
        ] {
            report.series.push(point_series(j, name, t));
        }
    }
    report.findings = findings(params, costs);
    report
}

/// One pause point on the active-memory chart.
fn point_series(j: &crate::labs::migration::JobState, name: &str, t: f64) -> Series {
    Series {
        name: name.into(),
        chart: "active-memory".into(),
        x_label: "time in iteration (s)".into(),
        y_label: "memory per GPU (GiB)".into(),
        points: alloc::vec![(round(t), round(model::active_at(j, t).total() / GIB))],
    }
}

fn round(v: f64) -> f64 {
    crate::units::round_to(v, 4)
}

fn findings(params: &MigrationParams, costs: &[OptionCost]) -> Vec<String> {
    let j = &params.job;
    let mut out = Vec::new();
    let low = model::static_bytes(j) / GIB;
    let peak = model::peak_active_bytes(j) / GIB;
    out.push(format!(
        "Active memory per GPU swings from {low:.1} GiB at the iteration boundary (weights + optimizer state) to {peak:.1} GiB mid-iteration; the framework has reserved {:.1} GiB. {} data-parallel replica(s) of each of {} shard(s).",
        j.reserved_gib,
        model::replicas(j),
        j.model_parallel
    ));
    let (Some(pool), Some(best), Some(fw)) = (
        find(costs, CheckpointOption::ReservedPool),
        find(costs, CheckpointOption::ActiveLowPointDedup),
        find(costs, CheckpointOption::Framework),
    ) else {
        return out;
    };
    out.push(format!(
        "Active + low point + dedup writes {:.1} GiB to storage instead of the reserved pool's {:.1} GiB: checkpoint to storage {:.2} s vs {:.2} s ({:.1}×), in-place pause into host memory {:.2} s vs {:.2} s ({:.1}×), in-place resume {:.2} s vs {:.2} s ({:.1}×). Dedup shrinks only what goes to storage: every GPU still copies its own bytes over its own link.",
        best.gpu_image_bytes / GIB,
        pool.gpu_image_bytes / GIB,
        best.pause_to_storage.total_s(),
        pool.pause_to_storage.total_s(),
        ratio(pool.pause_to_storage.total_s(), best.pause_to_storage.total_s()),
        best.pause.total_s(),
        pool.pause.total_s(),
        ratio(pool.pause.total_s(), best.pause.total_s()),
        best.restore.total_s(),
        pool.restore.total_s(),
        ratio(pool.restore.total_s(), best.restore.total_s()),
    ));
    out.push(format!(
        "Pause points per destination: a local pause waits {:.2} s (to {:.2} s into the iteration), a checkpoint to storage {:.2} s (to {:.2} s), a migration {:.2} s (to {:.2} s), bound {:.2} s: the slower the copy, the more a lower point of active memory is worth waiting for.",
        best.pause.wait_s,
        best.pause_point_s,
        best.pause_to_storage.wait_s,
        best.storage_point_s,
        best.migrate_pause.wait_s,
        best.migrate_point_s,
        params.options.max_wait_s
    ));
    out.push(format!(
        "An in-place pause keeps the process alive: no CPU-state dump, no process restore, no context or handle re-creation. A migration's restore pays them: {:.2} s of CPU state and {:.3} s of fixed costs for FlowGPU (process {:.1} ms, context {:.2} ms, handles {:.1} ms), {:.3} s for POS (process {:.1} ms, context {:.2} ms, handles {:.1} ms).",
        best.migrate_restore.cpu_state_s,
        best.migrate_restore.fixed_s(),
        params.systems.flowgpu.process_restore_s * 1e3,
        params.systems.flowgpu.context_s * 1e3,
        params.systems.flowgpu.replay_s * 1e3,
        pool.migrate_restore.fixed_s(),
        params.systems.pos.process_restore_s * 1e3,
        params.systems.pos.context_s * 1e3,
        params.systems.pos.replay_s * 1e3,
    ));
    out.push(format!(
        "Migration via storage: {:.2} s transparent (active + low point + dedup) vs {:.2} s framework checkpoint + restart ({:.1}×); the restart's {:.1} s of initialisation is the part a transparent restore does not pay.",
        best.migrate_s(),
        fw.migrate_s(),
        ratio(fw.migrate_s(), best.migrate_s()),
        params.framework.init_s
    ));
    out
}
