//! The overlap lab's Report: the `strategies` comparison table (serial, eager, AsyncTP-style,
//! Helix: step time, exposed and total communication, peak activations), the `passes` table
//! walking original → each pass, one timeline per strategy (compute stream, one lane per
//! communication group, exposed waits marked `exposed`), the `memory` chart (activation bytes
//! over time per strategy, with the budget as its own series) and findings.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{OverlapParams, OverlapRun, Strategy, GIB};
use crate::graph::sim::{timeline, GraphSim};
use crate::report::{Cell, Report, Series, Table};

/// Most points of one memory curve in the Report (longer curves are thinned, keeping peaks).
pub const MAX_CURVE_POINTS: usize = 2_000;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / GIB
}

/// Relative change `1 − new/old` (0 when `old` is 0).
fn cut(old: u64, new: u64) -> f64 {
    if old == 0 {
        0.0
    } else {
        1.0 - new as f64 / old as f64
    }
}

fn row(name: &str, sim: &GraphSim, serial: &GraphSim, nodes: usize) -> Vec<Cell> {
    vec![
        Cell::Text(name.into()),
        Cell::Num(ms(sim.makespan_ns)),
        Cell::Num(ms(sim.exposed_comm_ns)),
        Cell::Num(ms(sim.comm_ns)),
        Cell::Num(sim.overlap_ratio() * 100.0),
        Cell::Num(gib(sim.peak_bytes)),
        Cell::Num(cut(serial.makespan_ns, sim.makespan_ns) * 100.0),
        Cell::Num(nodes as f64),
    ]
}

fn columns() -> Vec<String> {
    [
        "strategy",
        "step time (ms)",
        "exposed comm (ms)",
        "comm (ms)",
        "comm hidden (%)",
        "peak activations (GiB)",
        "faster than serial (%)",
        "nodes",
    ]
    .iter()
    .map(ToString::to_string)
    .collect()
}

/// A memory curve in ms and GiB, thinned to [`MAX_CURVE_POINTS`] keeping each window's peak.
fn curve(sim: &GraphSim) -> Vec<(f64, f64)> {
    let points: Vec<(f64, f64)> = sim
        .memory
        .iter()
        .map(|&(t, b)| (t.as_ms_f64(), b as f64 / GIB))
        .collect();
    if points.len() <= MAX_CURVE_POINTS {
        return points;
    }
    let window = points.len().div_ceil(MAX_CURVE_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_CURVE_POINTS + 2);
    for chunk in points.chunks(window) {
        let first = chunk[0];
        let peak = chunk
            .iter()
            .copied()
            .fold(first, |a, p| if p.1 > a.1 { p } else { a });
        out.push(first);
        if peak != first {
            out.push(peak);
        }
    }
    if let Some(&last) = points.last() {
        if out.last() != Some(&last) {
            out.push(last);
        }
    }
    out
}

/// Builds the Report of a run.
#[must_use]
#[allow(clippy::too_many_lines)]
pub fn build(params: &OverlapParams, run: &OverlapRun) -> Report {
    let subject = if params.graph.is_some() {
        format!("imported graph ({} nodes)", run.original.node_count())
    } else {
        let par = params.layout();
        format!(
            "{}, {} layer(s) {}, TP={}{} CP={} EP={} DP={}, {} × {} tokens",
            params.model.label(),
            params.workload.layers,
            match (params.workload.whole_step, params.workload.backward) {
                (false, true) => "forward + backward",
                (false, false) => "forward",
                (true, true) =>
                    "forward + backward in a whole step (embedding, head and loss, optimizer)",
                (true, false) => "forward in a whole prefill (embedding, head)",
            },
            par.tp,
            if par.sp { "+SP" } else { "" },
            par.cp,
            par.ep,
            par.dp,
            params.workload.micro_batch,
            params.workload.seq_len,
        )
    };
    let pipeline: Vec<String> = params
        .passes
        .iter()
        .map(|p| match p {
            super::PassSpec::Tile { k, dim } => format!("tile K={k} ({})", dim.id()),
            super::PassSpec::Reorder => "reorder".into(),
            super::PassSpec::Bucket { memory_budget_gib } => match memory_budget_gib {
                Some(b) => format!("bucket ≤ {b} GiB"),
                None => "bucket (no budget)".into(),
            },
        })
        .collect();
    let mut report = Report {
        lab: "overlap".into(),
        title: format!(
            "Overlap: {subject} on {} ({}); Helix = {}",
            params.gpu.label(),
            match params.placement {
                super::Placement::IntraNode => "groups inside a node, NVLink",
                super::Placement::InterNode => "groups across nodes, InfiniBand",
            },
            if pipeline.is_empty() {
                "no passes".into()
            } else {
                pipeline.join(" → ")
            }
        ),
        ..Report::default()
    };
    let serial = &run.strategies[0].2;
    for (s, g, sim) in &run.strategies {
        let p = format!("{}.", s.id());
        let l = s.label();
        report.push_metric(
            &format!("{p}makespan_ms"),
            &format!("{l} step time"),
            ms(sim.makespan_ns),
            "ms",
        );
        report.push_metric(
            &format!("{p}exposed_comm_ms"),
            &format!("{l} exposed communication"),
            ms(sim.exposed_comm_ns),
            "ms",
        );
        report.push_metric(
            &format!("{p}comm_ms"),
            &format!("{l} communication"),
            ms(sim.comm_ns),
            "ms",
        );
        report.push_metric(
            &format!("{p}overlap_ratio"),
            &format!("{l} communication hidden"),
            sim.overlap_ratio(),
            "ratio",
        );
        report.push_metric(
            &format!("{p}peak_gib"),
            &format!("{l} peak activations"),
            gib(sim.peak_bytes),
            "GiB",
        );
        report.push_metric(
            &format!("{p}speedup_vs_serial"),
            &format!("{l} step time saved vs serial"),
            cut(serial.makespan_ns, sim.makespan_ns),
            "ratio",
        );
        report.push_metric(
            &format!("{p}exposed_cut_vs_serial"),
            &format!("{l} exposed communication removed vs serial"),
            cut(serial.exposed_comm_ns, sim.exposed_comm_ns),
            "ratio",
        );
        report.push_metric(
            &format!("{p}nodes"),
            &format!("{l} graph nodes"),
            g.node_count() as f64,
            "count",
        );
    }
    let helix = &run.strategies[3].2;
    let async_tp = &run.strategies[2].2;
    report.push_metric(
        "helix.peak_change_vs_original",
        "Helix peak activations vs the graph as built",
        if run.original_sim.peak_bytes == 0 {
            0.0
        } else {
            helix.peak_bytes as f64 / run.original_sim.peak_bytes as f64 - 1.0
        },
        "ratio",
    );
    if let Some(b) = run.budget_bytes {
        report.push_metric("bucket.budget_gib", "memory budget", gib(b), "GiB");
    }
    report.push_metric(
        "async_tp.fused",
        "AsyncTP-style TP collectives fused with GEMMs",
        run.async_tp.collectives() as f64,
        "count",
    );
    report.push_metric(
        "tile.refused_reasons",
        "distinct reasons tiling left an operator whole",
        run.refused.len() as f64,
        "count",
    );

    let mut table = Table {
        key: "strategies".into(),
        title: "Serial, eager, AsyncTP-style and Helix on the same graph".into(),
        columns: columns(),
        rows: Vec::new(),
    };
    for (s, g, sim) in &run.strategies {
        table.rows.push(row(s.label(), sim, serial, g.node_count()));
    }
    report.tables.push(table);
    let mut steps = Table {
        key: "passes".into(),
        title: "Helix pass by pass (the graph as built is waited for at once except data-parallel buckets)".into(),
        columns: {
            let mut c = columns();
            c[0] = "after".into();
            c.push("what the pass did".into());
            c
        },
        rows: Vec::new(),
    };
    let mut first = row(
        "original",
        &run.original_sim,
        serial,
        run.original.node_count(),
    );
    first.push(Cell::Text("as built".into()));
    steps.rows.push(first);
    for step in &run.steps {
        let mut r = row(&step.pass, &step.sim, serial, step.graph.node_count());
        r.push(Cell::Text(step.note.clone()));
        steps.rows.push(r);
    }
    report.tables.push(steps);

    for (s, g, sim) in &run.strategies {
        report.timelines.push(timeline(g, sim, s.label()));
    }
    for (s, _, sim) in &run.strategies {
        report.series.push(Series {
            name: s.label().into(),
            chart: "memory".into(),
            x_label: "time (ms)".into(),
            y_label: "activations (GiB)".into(),
            points: curve(sim),
        });
    }
    if let Some(b) = run.budget_bytes {
        let end = run
            .strategies
            .iter()
            .map(|(_, _, s)| ms(s.makespan_ns))
            .fold(0.0, f64::max);
        report.series.push(Series {
            name: "budget".into(),
            chart: "memory".into(),
            x_label: "time (ms)".into(),
            y_label: "activations (GiB)".into(),
            points: vec![(0.0, gib(b)), (end, gib(b))],
        });
    }

    // Findings.
    report.findings.push(format!(
        "Helix leaves {:.3} ms of communication exposed against serial's {:.3} ms ({:.1}% removed) and takes {:.3} ms per step against {:.3} ms ({:+.1}%).",
        ms(helix.exposed_comm_ns),
        ms(serial.exposed_comm_ns),
        cut(serial.exposed_comm_ns, helix.exposed_comm_ns) * 100.0,
        ms(helix.makespan_ns),
        ms(serial.makespan_ns),
        -cut(serial.makespan_ns, helix.makespan_ns) * 100.0,
    ));
    report.findings.push(format!(
        "AsyncTP-style fused {} TP AllGather(s) with {} GEMM(s) and {} GEMM(s) with their ReduceScatter: {:.3} ms per step ({:.1}% faster than serial); Helix is {:.1}% faster than serial.",
        run.async_tp.all_gathers,
        run.async_tp.gathered_gemms,
        run.async_tp.reduce_scatters,
        ms(async_tp.makespan_ns),
        cut(serial.makespan_ns, async_tp.makespan_ns) * 100.0,
        cut(serial.makespan_ns, helix.makespan_ns) * 100.0,
    ));
    let eager = &run.strategies[1].2;
    report.findings.push(format!(
        "Peak activations: serial {:.3} GiB, eager {:.3} GiB, Helix {:.3} GiB.",
        gib(serial.peak_bytes),
        gib(eager.peak_bytes),
        gib(helix.peak_bytes)
    ));
    for step in &run.steps {
        report
            .findings
            .push(format!("{}: {}.", step.pass, step.note));
    }
    for r in &run.refused {
        report
            .findings
            .push(format!("Tiling left {} whole: {}.", r.node, r.reason));
    }
    if let Some(b) = run.budget_bytes {
        let before = run
            .steps
            .iter()
            .rev()
            .skip_while(|s| s.pass != "bucket")
            .nth(1)
            .map_or(run.original_sim.peak_bytes, |s| s.sim.peak_bytes);
        if before > b {
            report.findings.push(format!(
                "The graph entering bucketing already peaks at {:.3} GiB, over the {:.3} GiB budget: bucketing merged nothing that would raise it.",
                gib(before),
                gib(b)
            ));
        }
    }
    // Hidden communication per group (mixed dimensions).
    let mut per_group: Vec<String> = Vec::new();
    let (_, g, sim) = &run.strategies[3];
    let (_, gs, ss) = &run.strategies[0];
    for (gi, spec) in g.groups.iter().enumerate() {
        let busy = |g: &crate::graph::Graph, sim: &GraphSim| -> u64 {
            g.dag
                .node_indices()
                .filter(|&n| matches!(g.dag[n].kind, crate::graph::NodeKind::CollectiveStart { group, .. } if group == gi))
                .map(|n| (sim.timings[n.index()].end - sim.timings[n.index()].start).0)
                .sum()
        };
        let (h, s) = (busy(g, sim), busy(gs, ss));
        if h > 0 || s > 0 {
            per_group.push(format!(
                "{} {:.3} ms (serial {:.3} ms)",
                spec.name,
                ms(h),
                ms(s)
            ));
        }
    }
    if per_group.len() > 1 {
        report.findings.push(format!(
            "Communication per dimension under Helix: {}; with {:.3} ms of it exposed in total, the rest runs under the computation of other tiles and dimensions.",
            per_group.join(", "),
            ms(helix.exposed_comm_ns)
        ));
    }
    let _ = Strategy::Helix;
    report
}
