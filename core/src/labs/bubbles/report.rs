//! The bubbles lab's Report: per-policy timelines (main ops, bubbles, guest work with resume and
//! pause marks), SM activity, the policy comparison, the windows, the tuning job and findings.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::hpo::HpoResult;
use super::params::TunerKind;
use super::params::{BubblesParams, PolicyKind, TrialPreset};
use super::policies::{self, GuestKind, GuestSpan, Outcome, PolicyRun};
use super::windows::MainTimeline;
use crate::labs::pipeline::pipemorph::PipelineRun;
use crate::report::{Cell, CounterTrack, KindDef, Lane, Report, Series, Span, Table, Timeline};
use crate::units::GIB;

fn cols(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| String::from(*s)).collect()
}

fn row<const N: usize>(cells: [Cell; N]) -> Vec<Cell> {
    cells.into_iter().collect()
}

/// Windows used and skipped by reason.
fn window_counts(run: &PolicyRun) -> (usize, BTreeMap<&'static str, usize>) {
    let mut used = 0;
    let mut skipped = BTreeMap::new();
    for o in &run.outcomes {
        match o {
            Outcome::Used { .. } => used += 1,
            Outcome::Skipped(why) => *skipped.entry(*why).or_insert(0) += 1,
            Outcome::Throughout | Outcome::NoGuest => {}
        }
    }
    (used, skipped)
}

fn skipped_text(skipped: &BTreeMap<&'static str, usize>) -> String {
    if skipped.is_empty() {
        return "none".into();
    }
    skipped
        .iter()
        .map(|(why, n)| format!("{n} {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Builds the Report.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn build(
    params: &BubblesParams,
    alone: &MainTimeline,
    runs: &[PolicyRun],
    hpo: &HpoResult,
    sweep: &[(u32, HpoResult)],
    title: String,
    log: Option<&PipelineRun>,
) -> Report {
    let mut report = Report {
        lab: "bubbles".into(),
        title,
        ..Report::default()
    };
    let alone_ns = alone.span_ns() as f64 / f64::from(alone.iterations().max(1));
    let f = params.max_fusion;
    let mut table = Table {
        key: "policies".into(),
        title: "Policies compared".into(),
        columns: cols(&[
            "policy",
            "main iteration (ms)",
            "slowdown vs alone (%)",
            "bubble-period SM activity (%)",
            "guest throughput (% of exclusive)",
            "largest F",
            "guest trial-steps per iteration",
            "windows used",
            "windows skipped (why)",
        ]),
        rows: Vec::new(),
    };
    for run in runs {
        let id = run.kind.id();
        let it = run.iteration_ns();
        let slowdown = if alone_ns > 0.0 {
            it / alone_ns - 1.0
        } else {
            0.0
        };
        let sm = run.bubble_sm_activity();
        let frac = run.guest_fraction(params, f);
        let per_iteration = run.trial_steps() / f64::from(run.main.iterations().max(1));
        let (used, skipped) = window_counts(run);
        report.push_metric(
            &format!("{id}.iteration_ms"),
            &format!("{} main iteration", run.kind.label()),
            it / 1e6,
            "ms",
        );
        report.push_metric(
            &format!("{id}.slowdown"),
            &format!("{} main-job slowdown vs alone", run.kind.label()),
            slowdown,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.bubble_sm_activity"),
            &format!("{} bubble-period SM activity", run.kind.label()),
            sm,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.guest_fraction"),
            &format!("{} guest throughput / exclusive (F={f})", run.kind.label()),
            frac,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.trial_steps_per_iteration"),
            &format!("{} guest trial-steps per main iteration", run.kind.label()),
            per_iteration,
            "count",
        );
        let guest = run.kind != PolicyKind::None;
        table.rows.push(row([
            Cell::Text(run.kind.label().into()),
            Cell::Num(it / 1e6),
            Cell::Num(slowdown * 100.0),
            Cell::Num(sm * 100.0),
            if guest {
                Cell::Num(frac * 100.0)
            } else {
                Cell::Missing
            },
            if guest {
                Cell::Num(f64::from(run.fusion))
            } else {
                Cell::Missing
            },
            if guest {
                Cell::Num(per_iteration)
            } else {
                Cell::Missing
            },
            if run.kind == PolicyKind::Squeezer {
                Cell::Num(used as f64)
            } else {
                Cell::Missing
            },
            Cell::Text(match run.kind {
                PolicyKind::Squeezer => skipped_text(&skipped),
                PolicyKind::Blind => run.note.unwrap_or("runs throughout").into(),
                PolicyKind::None => "no guest".into(),
            }),
        ]));
    }
    report.tables.push(table);

    // Windows of the main job alone, with the squeezer's decision.
    let squeezer = runs.iter().find(|r| r.kind == PolicyKind::Squeezer);
    let base = runs
        .iter()
        .find(|r| r.kind == PolicyKind::None)
        .or(squeezer);
    if let Some(base) = base {
        let safe = base.windows.iter().filter(|w| w.safe).count();
        report.push_metric(
            "windows.total",
            "bubble windows (all stages, all iterations)",
            base.windows.len() as f64,
            "count",
        );
        report.push_metric("windows.safe", "safe bubble windows", safe as f64, "count");
        let bubble_ns: u64 = base.windows.iter().map(|w| w.duration_ns).sum();
        let safe_ns: u64 = base
            .windows
            .iter()
            .filter(|w| w.safe)
            .map(|w| w.duration_ns)
            .sum();
        let stage_time = alone.span_ns() as f64 * f64::from(alone.stages);
        if stage_time > 0.0 {
            report.push_metric(
                "windows.bubble_ratio",
                "idle share of stage time",
                bubble_ns as f64 / stage_time,
                "ratio",
            );
            report.push_metric(
                "windows.safe_ratio",
                "safe-bubble share of stage time",
                safe_ns as f64 / stage_time,
                "ratio",
            );
        }
        let mut wt = Table {
            key: "windows".into(),
            title: "Bubble windows (main job alone) and the squeezer's decision".into(),
            columns: cols(&[
                "stage",
                "iteration",
                "start (ms)",
                "duration (ms)",
                "free memory (GiB)",
                "safe",
                "squeezer",
            ]),
            rows: Vec::new(),
        };
        for (i, w) in base.windows.iter().enumerate() {
            let decision =
                squeezer
                    .and_then(|s| s.outcomes.get(i))
                    .map_or(String::from("-"), |o| match o {
                        Outcome::Used { fusion, modules } => {
                            format!("F={fusion}, {modules} modules")
                        }
                        Outcome::Skipped(why) => format!("skip: {why}"),
                        _ => "-".into(),
                    });
            wt.rows.push(row([
                Cell::Num(f64::from(w.stage)),
                Cell::Num(f64::from(w.iteration)),
                Cell::Num(w.start_ns as f64 / 1e6),
                Cell::Num(w.duration_ns as f64 / 1e6),
                Cell::Num(w.free_bytes as f64 / GIB as f64),
                Cell::Text(if w.safe {
                    "yes".into()
                } else {
                    "no (iteration end)".into()
                }),
                Cell::Text(decision),
            ]));
        }
        report.tables.push(wt);
    }

    // Tuning job.
    hpo_tables(&mut report, params, hpo, sweep);

    // Claims, next to the seed's numbers.
    let get = |k: PolicyKind| runs.iter().find(|r| r.kind == k);
    if let (Some(none), Some(sq), None) = (get(PolicyKind::None), squeezer, log) {
        let mut ct = Table {
            key: "claims".into(),
            title: "Hydro's claims (OSDI 2023) and this model".into(),
            columns: cols(&["claim", "seed", "this model"]),
            rows: Vec::new(),
        };
        ct.rows.push(row([
            Cell::Text("bubble-period SM activity".into()),
            Cell::Text("~2 % → ~50 %".into()),
            Cell::Text(format!(
                "{:.1} % → {:.1} %",
                none.bubble_sm_activity() * 100.0,
                sq.bubble_sm_activity() * 100.0
            )),
        ]));
        ct.rows.push(row([
            Cell::Text(format!("fused bundle progress in bubbles (F = {f})")),
            Cell::Text("~15 % of exclusive".into()),
            Cell::Text(format!(
                "{:.1} % of exclusive",
                sq.guest_fraction(params, f) * 100.0
            )),
        ]));
        let slow = |r: &PolicyRun| (r.iteration_ns() / alone_ns - 1.0) * 100.0;
        ct.rows.push(row([
            Cell::Text("main-job slowdown: squeezer vs blind colocation".into()),
            Cell::Text("≈ 0 % vs ~12 %".into()),
            Cell::Text(match get(PolicyKind::Blind) {
                Some(b) => format!("{:.2} % vs {:.1} %", slow(sq), slow(b)),
                None => format!("{:.2} % (blind not run)", slow(sq)),
            }),
        ]));
        ct.rows.push(row([
            Cell::Text(format!(
                "HPO makespan, 1 GPU ÷ (1 GPU + bubbles), {} trials, {}",
                params.hpo.trials,
                params.hpo.tuner.id()
            )),
            Cell::Text("~2.7×".into()),
            Cell::Text(format!(
                "{:.2}× (ceiling {:.2}×: exclusive makespan ÷ the winner's {} steps alone)",
                hpo.speedup(),
                hpo.ceiling(),
                hpo.winner_steps
            )),
        ]));
        report.tables.push(ct);
    }

    // Real log: how much of each trial preset fits, per iteration.
    if log.is_some() {
        log_tables(&mut report, params, alone);
    }

    // Timelines and SM activity.
    for run in runs {
        report.timelines.push(timeline(run, params));
        report.series.push(sm_series(run));
    }
    report.findings = findings(params, runs, hpo, alone_ns, log.is_some());
    report
}

/// The tuning job's rung table, its metrics, and the ceiling over a range of trial counts.
#[allow(clippy::too_many_lines)] // the tuning tables' rows in the order the page shows them
fn hpo_tables(
    report: &mut Report,
    params: &BubblesParams,
    hpo: &HpoResult,
    sweep: &[(u32, HpoResult)],
) {
    let h = &params.hpo;
    let (title, columns) = match h.tuner {
        TunerKind::Asha => (
            format!(
                "ASHA (Hydro's ASHAHydroScheduler): {} trials, η = {}, grace period {} steps, max_t {} steps, on 1 exclusive GPU (F = {}) vs 1 GPU + the bubbles of {} stages × {} GPUs (F = {}); F by {}",
                h.trials,
                h.reduction_factor,
                h.grace_period_steps,
                h.max_t_steps,
                hpo.fusion_exclusive,
                h.stages,
                h.gpus_per_stage,
                hpo.fusion_with_bubbles,
                h.bundle.label()
            ),
            cols(&[
                "rung",
                "milestone (steps)",
                "trials reaching it, 1 GPU",
                "trials reaching it, 1 GPU + bubbles",
                "last reached, 1 GPU (s)",
                "last reached, 1 GPU + bubbles (s)",
            ]),
        ),
        TunerKind::SyncSh => (
            format!(
                "Synchronous successive halving: {} trials, η = {}, on 1 exclusive GPU vs 1 GPU + the bubbles of {} stages × {} GPUs",
                h.trials, h.eta, h.stages, h.gpus_per_stage
            ),
            cols(&[
                "rung",
                "steps each",
                "trials, 1 GPU",
                "trials, 1 GPU + bubbles",
                "1 GPU (s)",
                "1 GPU + bubbles (s)",
            ]),
        ),
    };
    let mut ht = Table {
        key: "hpo".into(),
        title,
        columns,
        rows: Vec::new(),
    };
    for (k, r) in hpo.rungs.iter().enumerate() {
        ht.rows.push(row([
            Cell::Num(k as f64),
            Cell::Num(r.steps as f64),
            Cell::Num(f64::from(r.trials_exclusive)),
            Cell::Num(f64::from(r.trials_with_bubbles)),
            Cell::Num(r.exclusive_ns as f64 / 1e9),
            Cell::Num(r.with_bubbles_ns as f64 / 1e9),
        ]));
    }
    ht.rows.push(row([
        Cell::Text("makespan".into()),
        Cell::Missing,
        Cell::Missing,
        Cell::Missing,
        Cell::Num(hpo.exclusive_ns as f64 / 1e9),
        Cell::Num(hpo.with_bubbles_ns as f64 / 1e9),
    ]));
    report.tables.push(ht);
    report.push_metric(
        "hpo.exclusive_s",
        "tuning makespan, 1 exclusive GPU",
        hpo.exclusive_ns as f64 / 1e9,
        "s",
    );
    report.push_metric(
        "hpo.with_bubbles_s",
        "tuning makespan, 1 GPU + bubbles",
        hpo.with_bubbles_ns as f64 / 1e9,
        "s",
    );
    report.push_metric(
        "hpo.speedup",
        "tuning makespan ratio (1 GPU ÷ 1 GPU + bubbles)",
        hpo.speedup(),
        "ratio",
    );
    report.push_metric(
        "hpo.winner_alone_s",
        "the winner's training time alone (F = 1, exclusive GPU)",
        hpo.winner_alone_ns as f64 / 1e9,
        "s",
    );
    report.push_metric(
        "hpo.ceiling",
        "critical-path ceiling (1 GPU makespan ÷ the winner alone)",
        hpo.ceiling(),
        "ratio",
    );
    let mut st = Table {
        key: "hpo_sweep".into(),
        title: format!(
            "{} over a range of trial counts (the size of Hydro's tuning job in its bubble experiment is not stated in the sources read): speed-up and its ceiling",
            h.tuner.label()
        ),
        columns: cols(&[
            "trials N",
            "1 GPU (s)",
            "1 GPU + bubbles (s)",
            "speed-up (×)",
            "winner alone (s)",
            "ceiling (×)",
        ]),
        rows: Vec::new(),
    };
    let mut speedups = Vec::new();
    let mut ceilings = Vec::new();
    for (n, r) in sweep {
        st.rows.push(row([
            Cell::Num(f64::from(*n)),
            Cell::Num(r.exclusive_ns as f64 / 1e9),
            Cell::Num(r.with_bubbles_ns as f64 / 1e9),
            Cell::Num(r.speedup()),
            Cell::Num(r.winner_alone_ns as f64 / 1e9),
            Cell::Num(r.ceiling()),
        ]));
        speedups.push((f64::from(*n), r.speedup()));
        ceilings.push((f64::from(*n), r.ceiling()));
    }
    report.tables.push(st);
    for (name, points) in [
        ("speed-up with bubbles", speedups),
        ("critical-path ceiling", ceilings),
    ] {
        report.series.push(Series {
            name: name.into(),
            chart: "bubbles.hpo_ceiling".into(),
            x_label: "trials N".into(),
            y_label: "1 GPU makespan ÷ … (×)".into(),
            points,
        });
    }
}

fn log_tables(report: &mut Report, params: &BubblesParams, main: &MainTimeline) {
    let mut t = Table {
        key: "log_presets".into(),
        title: "Guest work that fits the real bubbles, per trial preset".into(),
        columns: cols(&[
            "trial preset",
            "largest F",
            "windows used",
            "trial-steps per iteration",
            "guest throughput (% of exclusive)",
        ]),
        rows: Vec::new(),
    };
    let mut per_iter = Vec::new();
    for preset in TrialPreset::ALL {
        let mut p = params.clone();
        p.trial = preset.profile();
        let run = policies::squeezer::run(main, &p, p.max_fusion);
        let (used, _) = window_counts(&run);
        t.rows.push(row([
            Cell::Text(p.trial.name.clone()),
            Cell::Num(f64::from(run.fusion)),
            Cell::Num(used as f64),
            Cell::Num(run.trial_steps() / f64::from(main.iterations().max(1))),
            Cell::Num(run.guest_fraction(&p, p.max_fusion) * 100.0),
        ]));
        per_iter.push((p.trial.name.clone(), run));
    }
    report.tables.push(t);
    let mut it = Table {
        key: "log_iterations".into(),
        title: "Per iteration: span, safe bubble time and guest trial-steps".into(),
        columns: {
            let mut c = cols(&["iteration", "span (ms)", "safe bubbles, all stages (ms)"]);
            for (name, _) in &per_iter {
                c.push(format!("{name} trial-steps"));
            }
            c
        },
        rows: Vec::new(),
    };
    let windows = super::windows::windows(main, params);
    for k in 0..main.iterations() {
        let (lo, hi) = (main.bounds[k as usize], main.bounds[k as usize + 1]);
        let safe: u64 = windows
            .iter()
            .filter(|w| w.iteration == k && w.safe)
            .map(|w| w.duration_ns)
            .sum();
        let mut r = row([
            Cell::Num(f64::from(k)),
            Cell::Num((hi - lo) as f64 / 1e6),
            Cell::Num(safe as f64 / 1e6),
        ]);
        for (_, run) in &per_iter {
            let steps: f64 = run
                .guest
                .iter()
                .filter(|g| g.start_ns >= lo && g.start_ns < hi)
                .map(|g| g.trial_steps)
                .sum();
            r.push(Cell::Num(steps));
        }
        it.rows.push(r);
        report.series.push(Series {
            name: "safe bubbles, all stages".into(),
            chart: "bubbles.log_safe_ms".into(),
            x_label: "iteration".into(),
            y_label: "safe bubble time (ms)".into(),
            points: alloc::vec![(f64::from(k), safe as f64 / 1e6)],
        });
    }
    // One series per chart name, not one per point.
    let points: Vec<(f64, f64)> = report
        .series
        .iter()
        .filter(|s| s.chart == "bubbles.log_safe_ms")
        .flat_map(|s| s.points.iter().copied())
        .collect();
    report.series.retain(|s| s.chart != "bubbles.log_safe_ms");
    report.series.push(Series {
        name: "safe bubbles, all stages".into(),
        chart: "bubbles.log_safe_ms".into(),
        x_label: "iteration".into(),
        y_label: "safe bubble time (ms)".into(),
        points,
    });
    report.tables.push(it);
}

fn timeline(run: &PolicyRun, params: &BubblesParams) -> Timeline {
    let main = &run.main;
    let mut lanes = Vec::new();
    let mut counters = Vec::new();
    for d in 0..main.stages {
        let mut spans: Vec<Span> = main
            .ops
            .iter()
            .filter(|o| o.stage == d)
            .map(|o| Span {
                start_ns: o.start_ns,
                dur_ns: o.end_ns - o.start_ns,
                name: o.label.clone(),
                cat: o.cat.clone(),
            })
            .collect();
        for w in run.windows.iter().filter(|w| w.stage == d) {
            spans.push(Span {
                start_ns: w.start_ns,
                dur_ns: w.duration_ns,
                name: if w.safe {
                    "bubble".into()
                } else {
                    "bubble (unsafe: iteration end)".into()
                },
                cat: if w.safe {
                    "bubble".into()
                } else {
                    "bubble-unsafe".into()
                },
            });
        }
        spans.sort_by_key(|s| (s.start_ns, s.dur_ns));
        lanes.push(Lane {
            name: format!("stage {d}"),
            spans,
        });
        let guest: Vec<_> = run.guest.iter().filter(|g| g.stage == d).collect();
        if run.kind != PolicyKind::None {
            lanes.push(guest_lane(run, &guest, d));
        }
        counters.push(CounterTrack {
            name: format!("stage {d} SM activity"),
            unit: "ratio".into(),
            points: run.sm[d as usize].clone(),
        });
        counters.push(memory_counter(run, params, &guest, d));
    }
    let mut timeline = Timeline {
        name: run.kind.label().into(),
        lanes,
        counters,
        kinds: Vec::new(),
    };
    timeline.declare(&[SPAN_KINDS, crate::labs::pipeline::sim::SPAN_KINDS]);
    timeline
}

/// The guest's lane of stage `d`: its resumes, runs and (for the squeezer) pauses.
fn guest_lane(run: &PolicyRun, guest: &[&GuestSpan], d: u32) -> Lane {
    let mut gspans = Vec::new();
    for g in guest {
        match g.kind {
            GuestKind::Resume => gspans.push(Span {
                start_ns: g.start_ns,
                dur_ns: g.dur_ns,
                name: format!("resume F={}", g.fusion),
                cat: "resume".into(),
            }),
            GuestKind::Run => {
                gspans.push(Span {
                    start_ns: g.start_ns,
                    dur_ns: g.dur_ns,
                    name: format!(
                        "guest F={} ({:.2} trial-steps)",
                        g.fusion, g.trial_steps
                    ),
                    cat: "guest".into(),
                });
                if run.kind == PolicyKind::Squeezer {
                    gspans.push(Span {
                        start_ns: g.start_ns + g.dur_ns,
                        dur_ns: 0,
                        name: "pause".into(),
                        cat: "pause".into(),
                    });
                }
            }
        }
    }
    Lane {
        name: format!("stage {d} guest"),
        spans: gspans,
    }
}

/// Stage `d`'s memory: the main job's plus the guest bundle's while it is resident.
fn memory_counter(run: &PolicyRun, params: &BubblesParams, guest: &[&GuestSpan], d: u32) -> CounterTrack {
    let main = &run.main;
    let mut changes: Vec<(u64, i64)> = Vec::new();
    let mut level_prev = 0i64;
    for &(t, b) in &main.memory[d as usize] {
        changes.push((t, b as i64 - level_prev));
        level_prev = b as i64;
    }
    for g in guest {
        let bytes = params.trial.memory_bytes(g.fusion) as i64;
        match g.kind {
            GuestKind::Resume => changes.push((g.start_ns, bytes)),
            GuestKind::Run if run.kind == PolicyKind::Squeezer => {
                changes.push((g.start_ns + g.dur_ns, -bytes));
            }
            GuestKind::Run => {
                changes.push((g.start_ns, bytes));
                changes.push((g.start_ns + g.dur_ns, -bytes));
            }
        }
    }
    changes.sort_by_key(|&(t, delta)| (t, delta > 0));
    let mut level = 0i64;
    let mut pts: Vec<(u64, f64)> = Vec::new();
    for (t, delta) in changes {
        level += delta;
        match pts.last_mut() {
            Some(last) if last.0 == t => last.1 = level as f64,
            _ => pts.push((t, level as f64)),
        }
    }
    CounterTrack {
        name: format!("stage {d} memory (main + guest)"),
        unit: "bytes".into(),
        points: pts,
    }
}

/// The bubbles lab's own span kinds; the main job's F, B and W are the pipeline lab's.
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "bubble",
        label: "bubble (safe)",
        meaning: "a main-job bubble whose end the squeezer knows: a guest may run in it",
        colour: "#fecaca",
        trace_colour: "cq_build_failed",
    },
    KindDef {
        cat: "bubble-unsafe",
        label: "bubble (unsafe)",
        meaning: "the idle time at an iteration's end, whose length depends on the next iteration: left empty",
        colour: "#f9a8d4",
        trace_colour: "cq_build_abandoned",
    },
    KindDef {
        cat: "guest",
        label: "guest trials",
        meaning: "the fused tuning trials running on the stage's GPU",
        colour: "#0d9488",
        trace_colour: "background_memory_dump",
    },
    KindDef {
        cat: "resume",
        label: "guest resume",
        meaning: "the guest bundle's state brought back onto the GPU before it runs",
        colour: "#fde047",
        trace_colour: "yellow",
    },
    KindDef {
        cat: "pause",
        label: "guest pause",
        meaning: "the squeezer pauses the guest at the window's end (an instant)",
        colour: "#1e293b",
        trace_colour: "black",
    },
];

/// Mean SM activity over stages against time (ms), as a step curve.
fn sm_series(run: &PolicyRun) -> Series {
    let mut times: Vec<u64> = run.sm.iter().flat_map(|c| c.iter().map(|p| p.0)).collect();
    times.sort_unstable();
    times.dedup();
    let n = run.sm.len().max(1) as f64;
    let value_at = |curve: &[(u64, f64)], t: u64| {
        curve
            .iter()
            .take_while(|p| p.0 <= t)
            .last()
            .map_or(0.0, |p| p.1)
    };
    let mut points = Vec::new();
    let mut prev: Option<f64> = None;
    for &t in &times {
        let v = run.sm.iter().map(|c| value_at(c, t)).sum::<f64>() / n;
        if let Some(p) = prev {
            points.push((t as f64 / 1e6, p));
        }
        points.push((t as f64 / 1e6, v));
        prev = Some(v);
    }
    if let Some(p) = prev {
        points.push((run.main.span_ns() as f64 / 1e6, p));
    }
    Series {
        name: run.kind.label().into(),
        chart: "bubbles.sm_activity".into(),
        x_label: "time (ms)".into(),
        y_label: "SM activity, mean over stages".into(),
        points,
    }
}

fn findings(
    params: &BubblesParams,
    runs: &[PolicyRun],
    hpo: &HpoResult,
    alone_ns: f64,
    real: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let get = |k: PolicyKind| runs.iter().find(|r| r.kind == k);
    if let (Some(none), Some(sq)) = (get(PolicyKind::None), get(PolicyKind::Squeezer)) {
        let (used, skipped) = window_counts(sq);
        out.push(format!(
            "The squeezer raises bubble-period SM activity from {:.1} % to {:.1} % and uses {used} of {} windows (skipped: {}); the main job's iteration stays {:.3} ms, because the guest only runs inside windows and pauses at a hook before each ends.",
            none.bubble_sm_activity() * 100.0,
            sq.bubble_sm_activity() * 100.0,
            sq.windows.len(),
            skipped_text(&skipped),
            sq.iteration_ns() / 1e6
        ));
        out.push(format!(
            "Inside the bubbles, bundles of up to F = {} make {:.1} % of the progress the same bundle makes on an exclusive GPU over the same time.",
            params.max_fusion,
            sq.guest_fraction(params, params.max_fusion) * 100.0
        ));
    }
    if let Some(b) = get(PolicyKind::Blind) {
        let f = b.fusion.max(1);
        out.push(format!(
            "Blind colocation slows the main job by {:.1} % for {:.1} % of exclusive guest throughput: its bundle (F = {f}) keeps {:.1} % of the SMs and {:.1} % of the HBM bandwidth busy, so with s = {:.3} the main job's compute runs 1 + s times slower (the kernel's contention rule) and the guest runs at 1/(1 + s) of its exclusive speed while the main job computes.",
            (b.iteration_ns() / alone_ns - 1.0) * 100.0,
            b.guest_fraction(params, params.max_fusion) * 100.0,
            params.trial.sm_activity(f) * 100.0,
            params.trial.hbm_activity(f) * 100.0,
            params.trial.contention_share(f),
        ));
    }
    if hpo.with_bubbles_ns > 0 {
        out.push(format!(
            "{} over {} trials takes {:.0} s on 1 exclusive GPU and {:.0} s with the bubbles of {} GPUs added ({:.2}× the exclusive GPU's speed{}). The winner trains {} steps, {:.0} s alone at F = 1, so no number of bubble GPUs can make the job more than {:.2}× faster (the critical-path ceiling); a bundle on a bubble GPU runs at a fraction of its exclusive speed.",
            params.hpo.tuner.label(),
            params.hpo.trials,
            hpo.exclusive_ns as f64 / 1e9,
            hpo.with_bubbles_ns as f64 / 1e9,
            hpo.bubble_gpus,
            hpo.speedup(),
            if params.hpo.tuner == TunerKind::Asha {
                format!(
                    ", bundles of F = {} by {}",
                    hpo.fusion_with_bubbles,
                    params.hpo.bundle.label()
                )
            } else {
                String::new()
            },
            hpo.winner_steps,
            hpo.winner_alone_ns as f64 / 1e9,
            hpo.ceiling()
        ));
    }
    if real {
        out.push("Real log: blind colocation is not run (the measured run cannot be re-timed); memory is the model's (static + activations per micro-batch in flight), the timings are the log's.".into());
    }
    out
}
