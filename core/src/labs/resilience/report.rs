//! The resilience lab's Report: the strategy comparison, the detector metrics, the
//! iteration-time and throughput series, a timeline per strategy, and findings.
//!
//! Detector metrics (fail-slow events only; fail-stops are found by heartbeat by everyone):
//! an alarm is a true positive when it comes at most `match_window` iterations after the onset
//! of a fail-slow event not yet detected (the earliest such event); any other alarm is false.
//! precision = true / alarms; recall = detected events / events; F1 = 2PR/(P+R); false alarms
//! per 1,000 iterations = false / executed iterations × 1000; delay = alarm iteration − onset;
//! localisation accuracy = detected events whose blamed GPUs are exactly the event's GPUs.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::detect::Alarm;
use super::params::ResilienceParams;
use super::plan::StrategyKind;
use super::sim::StrategyRun;
use crate::report::{Cell, KindDef, Lane, Report, Series, Span, Table, Timeline};

/// A fail-slow event as ground truth.
#[derive(Clone, Debug, PartialEq)]
pub struct Truth {
    /// Onset iteration.
    pub onset: u32,
    /// GPUs slowed, sorted.
    pub gpus: Vec<u32>,
}

/// Detection quality of one detector.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetectorScore {
    /// Alarms raised.
    pub alarms: u32,
    /// Alarms matched to an event.
    pub true_alarms: u32,
    /// Events detected.
    pub detected: u32,
    /// Events.
    pub events: u32,
    /// Mean delay, iterations (`None` without detections).
    pub delay_iterations: Option<f64>,
    /// Share of detected events localised exactly (`None` if the detector cannot localise or
    /// detected nothing).
    pub localisation: Option<f64>,
    /// Executed iterations the detector watched.
    pub iterations: u32,
}

impl DetectorScore {
    /// true / alarms (1 when no alarm was raised).
    #[must_use]
    pub fn precision(&self) -> f64 {
        if self.alarms == 0 {
            1.0
        } else {
            f64::from(self.true_alarms) / f64::from(self.alarms)
        }
    }
    /// detected / events (1 when there was no event).
    #[must_use]
    pub fn recall(&self) -> f64 {
        if self.events == 0 {
            1.0
        } else {
            f64::from(self.detected) / f64::from(self.events)
        }
    }
    /// Harmonic mean of precision and recall.
    #[must_use]
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
    /// False alarms per 1,000 iterations.
    #[must_use]
    pub fn false_alarms_per_1k(&self) -> f64 {
        if self.iterations == 0 {
            return 0.0;
        }
        f64::from(self.alarms - self.true_alarms) / f64::from(self.iterations) * 1000.0
    }
}

/// Indices of the `alarms` that match no event of `truth` (the false ones), with the same
/// matching as [`score`].
#[must_use]
pub fn false_alarms(alarms: &[Alarm], truth: &[Truth], match_window: u32) -> Vec<usize> {
    let mut matched = alloc::vec![false; truth.len()];
    let mut out = Vec::new();
    for (k, a) in alarms.iter().enumerate() {
        let hit = truth.iter().enumerate().position(|(i, t)| {
            !matched[i] && a.iteration >= t.onset && a.iteration - t.onset <= match_window
        });
        match hit {
            Some(i) => matched[i] = true,
            None => out.push(k),
        }
    }
    out
}

/// Scores `alarms` against `truth`.
#[must_use]
pub fn score(
    alarms: &[Alarm],
    truth: &[Truth],
    match_window: u32,
    localises: bool,
    iterations: u32,
) -> DetectorScore {
    let mut matched = alloc::vec![false; truth.len()];
    let mut s = DetectorScore {
        alarms: alarms.len() as u32,
        events: truth.len() as u32,
        iterations,
        ..DetectorScore::default()
    };
    let mut delays = 0.0;
    let mut exact = 0u32;
    for a in alarms {
        let hit = truth.iter().enumerate().find(|(i, t)| {
            !matched[*i] && a.iteration >= t.onset && a.iteration - t.onset <= match_window
        });
        if let Some((i, t)) = hit {
            matched[i] = true;
            s.true_alarms += 1;
            s.detected += 1;
            delays += f64::from(a.iteration - t.onset);
            if a.gpus == t.gpus {
                exact += 1;
            }
        }
    }
    if s.detected > 0 {
        s.delay_iterations = Some(delays / f64::from(s.detected));
        if localises {
            s.localisation = Some(f64::from(exact) / f64::from(s.detected));
        }
    }
    s
}

/// The fail-slow events of the scenario as ground truth (slowdown > 1, not dead; compute or
/// link; each slow window of an intermittent straggler is its own event).
#[must_use]
pub fn fail_slow_truth(params: &ResilienceParams) -> Vec<Truth> {
    let gpn = params.cluster.gpus_per_node;
    let mut out: Vec<Truth> = Vec::new();
    for e in &params.events {
        if !e.is_fail_slow() {
            continue;
        }
        let gpus = e.gpus(gpn);
        // Events at the same iteration are one failure.
        if let Some(t) = out.iter_mut().find(|t| t.onset == e.at_iteration) {
            t.gpus.extend(gpus);
            t.gpus.sort_unstable();
            t.gpus.dedup();
        } else {
            out.push(Truth {
                onset: e.at_iteration,
                gpus,
            });
        }
    }
    out.sort_by_key(|t| t.onset);
    out
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

fn opt(v: Option<f64>) -> Cell {
    v.map_or(Cell::Missing, Cell::Num)
}

fn round(v: f64, digits: i32) -> f64 {
    let f = libm::pow(10.0, f64::from(digits));
    // + 0.0 turns a −0 (an empty f64 sum) into 0.
    libm::round(v * f) / f + 0.0
}

/// Builds the Report from the strategies' runs (`runs[0]` is do-nothing).
#[must_use]
#[allow(clippy::too_many_lines)]
pub fn build(params: &ResilienceParams, runs: &[StrategyRun], tokens_per_iteration: f64) -> Report {
    let c = &params.cluster;
    let mut report = Report {
        lab: "resilience".into(),
        title: format!(
            "Fail-slow and fail-stop resilience: {} on {} GPUs ({} nodes × {}), TP{} × PP{} × DP{}, {} iterations",
            params.model.name,
            params.gpus(),
            c.nodes,
            c.gpus_per_node,
            c.tp,
            c.pp,
            c.dp,
            params.iterations
        ),
        ..Report::default()
    };
    let Some(base) = runs.first() else {
        return report;
    };
    let base_tput = base.throughput_tokens_per_s(tokens_per_iteration);
    let truth = fail_slow_truth(params);
    let first_onset = params.events.iter().map(|e| e.at_iteration).min();
    let match_window = params.detector.match_window;
    let base_after = first_onset.and_then(|o| base.throughput_after_onset(o, tokens_per_iteration));
    let mut table = Table {
        key: "strategies".into(),
        title: "Strategies on the same failures (each with its own detection)".into(),
        columns: strings(&[
            "strategy",
            "throughput (k tokens/s)",
            "after onset (k tokens/s)",
            "speedup vs do nothing",
            "after onset vs do nothing",
            "completed iterations",
            "re-plans",
            "paused (s)",
            "resharded (GiB)",
            "detection delay (iterations)",
            "false alarms",
            "false-alarm cost (s)",
            "GPUs used at the end",
        ]),
        rows: Vec::new(),
    };
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    for run in runs {
        let id = run.kind.id();
        let label = run.kind.label();
        let tput = run.throughput_tokens_per_s(tokens_per_iteration);
        let after = first_onset.and_then(|o| run.throughput_after_onset(o, tokens_per_iteration));
        let paused_s: f64 = run.pauses.iter().map(|p| p.dur_ns as f64 / 1e9).sum();
        let delay = first_onset.and_then(|onset| {
            let alarm = run
                .own_alarms
                .iter()
                .map(|a| a.iteration)
                .find(|&i| i >= onset);
            let stop = run.fail_stops.iter().map(|f| f.0).find(|&i| i >= onset);
            alarm
                .into_iter()
                .chain(stop)
                .min()
                .map(|i| f64::from(i - onset))
        });
        let false_its = false_alarms(&run.own_alarms, &truth, match_window);
        let false_cost_s: f64 = run
            .pauses
            .iter()
            .filter(|p| p.alarm.is_some_and(|a| false_its.contains(&a)))
            .map(|p| p.dur_ns as f64 / 1e9)
            .sum();
        report.push_metric(
            &format!("{id}.throughput_tokens_per_s"),
            &format!("{label}: throughput over the whole run"),
            round(tput, 1),
            "tokens/s",
        );
        report.push_metric(
            &format!("{id}.speedup_vs_nothing"),
            &format!("{label}: speedup vs do nothing, whole run"),
            round(ratio(tput, base_tput), 4),
            "ratio",
        );
        if let (Some(a), Some(b)) = (after, base_after) {
            report.push_metric(
                &format!("{id}.throughput_after_onset_tokens_per_s"),
                &format!("{label}: throughput from the first failure to the end"),
                round(a, 1),
                "tokens/s",
            );
            report.push_metric(
                &format!("{id}.speedup_after_onset_vs_nothing"),
                &format!("{label}: speedup vs do nothing after the first failure"),
                round(ratio(a, b), 4),
                "ratio",
            );
        }
        if let Some(dl) = delay {
            report.push_metric(
                &format!("{id}.detection_delay_iterations"),
                &format!("{label}: iterations from the first failure to its first reaction"),
                dl,
                "iterations",
            );
        }
        report.push_metric(
            &format!("{id}.false_alarms"),
            &format!("{label}: own fail-slow alarms matching no failure"),
            false_its.len() as f64,
            "count",
        );
        report.push_metric(
            &format!("{id}.false_alarm_cost_s"),
            &format!("{label}: pauses its false alarms caused"),
            round(false_cost_s, 1),
            "s",
        );
        table.rows.push(alloc::vec![
            Cell::Text(label.into()),
            Cell::Num(round(tput / 1e3, 2)),
            opt(after.map(|a| round(a / 1e3, 2))),
            Cell::Num(round(ratio(tput, base_tput), 3)),
            opt(after.zip(base_after).map(|(a, b)| round(ratio(a, b), 3))),
            Cell::Num(f64::from(run.completed)),
            Cell::Num(f64::from(run.replans)),
            Cell::Num(round(paused_s, 1)),
            Cell::Num(round(run.reshard_bytes / (1u64 << 30) as f64, 1)),
            opt(delay),
            Cell::Num(false_its.len() as f64),
            Cell::Num(round(false_cost_s, 1)),
            Cell::Num(run.final_plan.used_gpus().len() as f64),
        ]);
    }
    let resihp = runs.iter().find(|r| r.kind == StrategyKind::Resihp);
    let baselines: Vec<&StrategyRun> = runs
        .iter()
        .filter(|r| !matches!(r.kind, StrategyKind::Nothing | StrategyKind::Resihp))
        .collect();
    let best_baseline = baselines
        .iter()
        .map(|r| r.throughput_tokens_per_s(tokens_per_iteration))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let best_after = first_onset.and_then(|o| {
        baselines
            .iter()
            .filter_map(|r| r.throughput_after_onset(o, tokens_per_iteration))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    });
    if let (Some(r), Some(best)) = (resihp, best_baseline) {
        report.push_metric(
            "resihp.speedup_vs_best_baseline",
            "ResiHP speedup vs the best baseline (restart, Oobleck, ReCycle, Greyhound), whole run",
            round(
                ratio(r.throughput_tokens_per_s(tokens_per_iteration), best),
                4,
            ),
            "ratio",
        );
        let after = first_onset.and_then(|o| r.throughput_after_onset(o, tokens_per_iteration));
        if let (Some(a), Some(b)) = (after, best_after) {
            report.push_metric(
                "resihp.speedup_after_onset_vs_best_baseline",
                "ResiHP speedup vs the best baseline after the first failure",
                round(ratio(a, b), 4),
                "ratio",
            );
        }
    }
    report.tables.push(table);

    // Detectors, on the do-nothing run (the failure stays in place).
    let iterations = base.steps.len() as u32;
    let scores = [
        (
            "resihp",
            "ResiHP (FLOPs-aware, 25 % persistent)",
            score(
                &base.alarms,
                &truth,
                params.detector.match_window,
                true,
                iterations,
            ),
        ),
        (
            "naive",
            "Naive z-score on raw time",
            score(
                &base.naive_alarms,
                &truth,
                params.detector.match_window,
                false,
                iterations,
            ),
        ),
        (
            "changepoint",
            "CUSUM change point on raw time",
            score(
                &base.changepoint_alarms,
                &truth,
                params.detector.match_window,
                false,
                iterations,
            ),
        ),
        (
            "greyhound",
            "Greyhound's detector on raw time",
            score(
                &base.greyhound_alarms,
                &truth,
                params.detector.match_window,
                false,
                iterations,
            ),
        ),
    ];
    let mut dtable = Table {
        key: "detectors".into(),
        title: format!(
            "Fail-slow detectors on the do-nothing run ({} fail-slow events, {iterations} iterations)",
            truth.len()
        ),
        columns: strings(&[
            "detector",
            "alarms",
            "false alarms",
            "precision",
            "recall",
            "F1",
            "false alarms / 1,000 iterations",
            "mean delay (iterations)",
            "localisation accuracy",
        ]),
        rows: Vec::new(),
    };
    for (id, label, s) in &scores {
        let p = format!("detector.{id}");
        report.push_metric(
            &format!("{p}.precision"),
            &format!("{label}: precision"),
            round(s.precision(), 4),
            "ratio",
        );
        report.push_metric(
            &format!("{p}.recall"),
            &format!("{label}: recall"),
            round(s.recall(), 4),
            "ratio",
        );
        report.push_metric(
            &format!("{p}.f1"),
            &format!("{label}: F1"),
            round(s.f1(), 4),
            "ratio",
        );
        report.push_metric(
            &format!("{p}.false_alarms_per_1k"),
            &format!("{label}: false alarms per 1,000 iterations"),
            round(s.false_alarms_per_1k(), 3),
            "count",
        );
        if let Some(d) = s.delay_iterations {
            report.push_metric(
                &format!("{p}.delay_iterations"),
                &format!("{label}: mean detection delay"),
                round(d, 2),
                "iterations",
            );
        }
        if let Some(l) = s.localisation {
            report.push_metric(
                &format!("{p}.localisation_accuracy"),
                &format!("{label}: localisation accuracy"),
                round(l, 4),
                "ratio",
            );
        }
        dtable.rows.push(alloc::vec![
            Cell::Text((*label).into()),
            Cell::Num(f64::from(s.alarms)),
            Cell::Num(f64::from(s.alarms - s.true_alarms)),
            Cell::Num(round(s.precision(), 3)),
            Cell::Num(round(s.recall(), 3)),
            Cell::Num(round(s.f1(), 3)),
            Cell::Num(round(s.false_alarms_per_1k(), 2)),
            opt(s.delay_iterations.map(|d| round(d, 1))),
            opt(s.localisation.map(|l| round(l, 3))),
        ]);
    }
    report.tables.push(dtable);

    // Series.
    report.series.push(Series {
        name: "observed (do nothing)".into(),
        chart: "resilience.iteration_time".into(),
        x_label: "iteration".into(),
        y_label: "iteration time (s)".into(),
        points: base
            .steps
            .iter()
            .map(|s| (f64::from(s.iteration), round(s.dur_ns as f64 / 1e9, 4)))
            .collect(),
    });
    report.series.push(Series {
        name: "predicted from packed lengths (ResiHP)".into(),
        chart: "resilience.iteration_time".into(),
        x_label: "iteration".into(),
        y_label: "iteration time (s)".into(),
        points: base
            .steps
            .iter()
            .filter_map(|s| {
                s.predicted_ns
                    .map(|p| (f64::from(s.iteration), round(p / 1e9, 4)))
            })
            .collect(),
    });
    for run in runs {
        let mut points = Vec::with_capacity(run.steps.len());
        let mut pause_i = 0usize;
        for s in &run.steps {
            // Pauses that ended at this step's start stretch it.
            let mut extra = 0u64;
            while pause_i < run.pauses.len() && run.pauses[pause_i].start_ns < s.start_ns {
                extra += run.pauses[pause_i].dur_ns;
                pause_i += 1;
            }
            let dt_s = (s.dur_ns + extra) as f64 / 1e9;
            points.push((
                round((s.start_ns + s.dur_ns) as f64 / 3.6e12, 4),
                round(tokens_per_iteration / dt_s / 1e3, 2),
            ));
        }
        report.series.push(Series {
            name: run.kind.label().into(),
            chart: "resilience.throughput".into(),
            x_label: "time (h)".into(),
            y_label: "throughput (k tokens/s)".into(),
            points,
        });
    }

    // Timelines.
    for run in runs {
        let iterations = Lane {
            name: "iterations".into(),
            spans: run
                .steps
                .iter()
                .map(|s| Span {
                    start_ns: s.start_ns,
                    dur_ns: s.dur_ns,
                    name: format!("i{}", s.iteration),
                    cat: "iteration".into(),
                })
                .collect(),
        };
        let pauses = Lane {
            name: "pauses".into(),
            spans: run
                .pauses
                .iter()
                .map(|p| Span {
                    start_ns: p.start_ns,
                    dur_ns: p.dur_ns,
                    name: p.what.clone(),
                    cat: p.cat.into(),
                })
                .collect(),
        };
        let alarms = Lane {
            name: "alarms".into(),
            spans: run
                .own_alarms
                .iter()
                .filter_map(|a| {
                    let step = run
                        .steps
                        .iter()
                        .rev()
                        .find(|s| s.iteration == a.iteration)?;
                    Some(Span {
                        start_ns: step.start_ns,
                        dur_ns: step.dur_ns,
                        name: if a.gpus.is_empty() {
                            "fail-slow alarm".into()
                        } else {
                            format!("fail-slow: GPU {:?}", a.gpus)
                        },
                        cat: "alarm".into(),
                    })
                })
                .collect(),
        };
        let mut timeline = Timeline {
            name: run.kind.label().into(),
            lanes: alloc::vec![iterations, pauses, alarms],
            ..Timeline::default()
        };
        timeline.declare(&[SPAN_KINDS]);
        report.timelines.push(timeline);
    }

    // Findings.
    let resihp_score = &scores[0].2;
    let naive_score = &scores[1].2;
    report.findings.push(format!(
        "ResiHP raised {} alarm(s) ({} false) and the naive z-score {} ({} false) over {iterations} iterations whose packed lengths make healthy iteration times vary; {} of {} fail-slow events were localised exactly.",
        resihp_score.alarms,
        resihp_score.alarms - resihp_score.true_alarms,
        naive_score.alarms,
        naive_score.alarms - naive_score.true_alarms,
        resihp_score.localisation.map_or(0.0, |l| l * f64::from(resihp_score.detected)),
        truth.len()
    ));
    if let Some(r) = resihp {
        let t = r.throughput_tokens_per_s(tokens_per_iteration);
        let mut line = format!(
            "ResiHP's throughput is {:.2}× do nothing's",
            if base_tput > 0.0 { t / base_tput } else { 0.0 }
        );
        if let Some(best) = best_baseline {
            line.push_str(&format!(" and {:.2}× the best baseline's", t / best));
        }
        let after = first_onset.and_then(|o| r.throughput_after_onset(o, tokens_per_iteration));
        if let (Some(a), Some(b)) = (after, best_after) {
            line.push_str(&format!(" ({:.2}× after the first failure)", a / b));
        }
        line.push_str(&format!(
            "; it re-planned {} time(s), moving {:.1} GiB of training state.",
            r.replans,
            r.reshard_bytes / (1u64 << 30) as f64
        ));
        report.findings.push(line);
    }
    if let Some(gh) = runs.iter().find(|r| r.kind == StrategyKind::Greyhound) {
        let false_its = false_alarms(&gh.own_alarms, &truth, match_window);
        let cost: f64 = gh
            .pauses
            .iter()
            .filter(|p| p.alarm.is_some_and(|a| false_its.contains(&a)))
            .map(|p| p.dur_ns as f64 / 1e9)
            .sum();
        report.findings.push(format!(
            "Greyhound's detector reported {} change(s), {} of them matching no failure; each is verified by micro-benchmarks before acting, so its false alarms cost {cost:.0} s of paused training.",
            gh.own_alarms.len(),
            false_its.len()
        ));
    }
    if base.uniform_verdicts > 0 {
        report.findings.push(format!(
            "{} trigger(s) found every GPU slowed alike: not a fail-slow, so ResiHP relearned its fit instead of alarming.",
            base.uniform_verdicts
        ));
    }
    report
}

/// The resilience lab's span kinds: training iterations, each strategy's pauses (`Pause::cat`
/// in `sim.rs`) and its own detector's alarms.
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "iteration",
        label: "training iteration",
        meaning: "one training iteration of the whole job",
        colour: "#3b82f6",
        trace_colour: "rail_response",
    },
    KindDef {
        cat: "timeout",
        label: "heartbeat timeout",
        meaning: "the job hangs until the heartbeat declares a dead GPU",
        colour: "#7f1d1d",
        trace_colour: "terrible",
    },
    KindDef {
        cat: "restart",
        label: "checkpoint restart",
        meaning: "the job restarts from its last checkpoint (lost work and reload)",
        colour: "#dc2626",
        trace_colour: "bad",
    },
    KindDef {
        cat: "reconfigure",
        label: "re-plan / reconfigure",
        meaning: "the job pauses to move to a new TP/PP/DP plan or re-split its layers",
        colour: "#f59e0b",
        trace_colour: "rail_idle",
    },
    KindDef {
        cat: "verify",
        label: "verification benchmarks",
        meaning: "micro-benchmarks that confirm a suspected fail-slow (Greyhound)",
        colour: "#7e22ce",
        trace_colour: "detailed_memory_dump",
    },
    KindDef {
        cat: "alarm",
        label: "fail-slow alarm",
        meaning: "the iteration in which the strategy's own detector raised an alarm",
        colour: "#f43f5e",
        trace_colour: "rail_animation",
    },
];
