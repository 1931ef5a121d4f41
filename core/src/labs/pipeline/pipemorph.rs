//! Reader for PipeMorph's per-stage pipeline logs (Wu et al., "Attack of the Bubbles:
//! Straggler-Resilient Pipeline Parallelism for Large Model Training", NSDI 2026, artifact).
//!
//! Each rank (= pipeline stage) writes one text file:
//!
//! ```text
//! [RANK0] Iteration 1
//! [RANK0] F @ 1751967829962.3892 (ms) to 1751967830475.0046 (ms), cudaEventElapsed = 510.70 (ms)
//! [RANK0] B @ … (ms) to … (ms), cudaEventElapsed = … (ms)
//! [RANK1] 4W @ … (ms) to … (ms), cudaEventElapsed = … (ms)     (n W passes timed together)
//! ```
//!
//! Wall-clock times are epoch milliseconds in 1F1B runs and restart near zero every iteration in
//! zero-bubble runs. To put ranks on one axis, each iteration's origin is the earliest op start
//! of that iteration over all ranks, and iterations are laid end to end (the optimizer step and
//! anything else between iterations is not drawn).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::params::{PipelineParams, StageTimes};
use super::schedules::ScheduleKind;
use crate::report::{Cell, Lane, Report, Series, Span, Table, Timeline};
use crate::units::Nanos;

/// Largest log accepted, bytes (the real ones are ~50 KiB).
pub const MAX_LOG_BYTES: usize = 16 << 20;

/// What a logged op computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LoggedKind {
    /// Forward.
    F,
    /// Backward (input gradient; whole backward in 1F1B runs).
    B,
    /// One weight-gradient pass.
    W,
    /// n weight-gradient passes timed as one record.
    WGroup(u32),
}

impl LoggedKind {
    fn letter(self) -> String {
        match self {
            LoggedKind::F => "F".into(),
            LoggedKind::B => "B".into(),
            LoggedKind::W => "W".into(),
            LoggedKind::WGroup(n) => format!("{n}W"),
        }
    }
}

/// One op record.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedOp {
    /// What it computed.
    pub kind: LoggedKind,
    /// Wall-clock start, ms (epoch or iteration-relative, as logged).
    pub start_ms: f64,
    /// Wall-clock end, ms.
    pub end_ms: f64,
    /// GPU time measured with CUDA events, ms.
    pub gpu_ms: f64,
}

/// One iteration block of a rank's log.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedIteration {
    /// The iteration number printed in the log (1-based).
    pub number: u32,
    /// Its ops in log order.
    pub ops: Vec<LoggedOp>,
}

/// One rank's whole log.
#[derive(Clone, Debug, PartialEq)]
pub struct RankLog {
    /// Rank = pipeline stage.
    pub rank: u32,
    /// Iteration blocks in order.
    pub iterations: Vec<LoggedIteration>,
}

/// A parse failure, naming the file, the line and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError {
    /// File name as given by the caller.
    pub file: String,
    /// 1-based line (0 when the problem is the whole file).
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl core::fmt::Display for LogError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for LogError {}

fn number(text: &str) -> Option<f64> {
    let v: f64 = text.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

/// Parses one rank's log.
///
/// # Errors
/// A [`LogError`] naming the line that does not match the format.
pub fn parse_rank_log(file: &str, text: &str) -> Result<RankLog, LogError> {
    let err = |line: usize, message: String| LogError {
        file: file.to_string(),
        line,
        message,
    };
    if text.len() > MAX_LOG_BYTES {
        return Err(err(
            0,
            format!(
                "{} bytes is over the {MAX_LOG_BYTES}-byte limit",
                text.len()
            ),
        ));
    }
    let mut rank: Option<u32> = None;
    let mut iterations: Vec<LoggedIteration> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let rest = line
            .strip_prefix("[RANK")
            .ok_or_else(|| err(line_no, "expected a line starting with `[RANK<r>]`".into()))?;
        let close = rest
            .find(']')
            .ok_or_else(|| err(line_no, "expected `]` after the rank number".into()))?;
        let r: u32 = rest[..close].parse().map_err(|_| {
            err(
                line_no,
                format!("rank `{}` is not a number", &rest[..close]),
            )
        })?;
        match rank {
            None => rank = Some(r),
            Some(prev) if prev != r => {
                return Err(err(line_no, format!("rank {r} in a log of rank {prev}")));
            }
            _ => {}
        }
        let body = rest[close + 1..].trim();
        if let Some(n) = body.strip_prefix("Iteration ") {
            let number: u32 = n
                .trim()
                .parse()
                .map_err(|_| err(line_no, format!("iteration `{n}` is not a number")))?;
            iterations.push(LoggedIteration {
                number,
                ops: Vec::new(),
            });
            continue;
        }
        // `<op> @ <start> (ms) to <end> (ms), cudaEventElapsed = <dur> (ms)`
        let (op, times) = body.split_once(" @ ").ok_or_else(|| {
            err(
                line_no,
                "expected `Iteration <k>` or `<op> @ <start> (ms) to …`".into(),
            )
        })?;
        let kind = match op {
            "F" => LoggedKind::F,
            "B" => LoggedKind::B,
            "W" => LoggedKind::W,
            other => match other.strip_suffix('W').and_then(|n| n.parse::<u32>().ok()) {
                Some(n) if n > 0 => LoggedKind::WGroup(n),
                _ => return Err(err(line_no, format!("op `{other}` is not F, B, W or <n>W"))),
            },
        };
        let (start, rest) = times
            .split_once(" (ms) to ")
            .ok_or_else(|| err(line_no, "expected `(ms) to` after the start time".into()))?;
        let (end, rest) = rest
            .split_once(" (ms), cudaEventElapsed = ")
            .ok_or_else(|| {
                err(
                    line_no,
                    "expected `(ms), cudaEventElapsed =` after the end time".into(),
                )
            })?;
        let gpu = rest
            .strip_suffix(" (ms)")
            .ok_or_else(|| err(line_no, "expected `(ms)` at the end of the line".into()))?;
        let (Some(start_ms), Some(end_ms), Some(gpu_ms)) =
            (number(start), number(end), number(gpu))
        else {
            return Err(err(
                line_no,
                "start, end and cudaEventElapsed must be finite numbers".into(),
            ));
        };
        if end_ms < start_ms || gpu_ms < 0.0 {
            return Err(err(
                line_no,
                format!("end {end_ms} ms is before start {start_ms} ms"),
            ));
        }
        let iteration = iterations
            .last_mut()
            .ok_or_else(|| err(line_no, "op before the first `Iteration` line".into()))?;
        iteration.ops.push(LoggedOp {
            kind,
            start_ms,
            end_ms,
            gpu_ms,
        });
    }
    let rank =
        rank.ok_or_else(|| err(0, "no `[RANK<r>]` lines: not a PipeMorph stage log".into()))?;
    Ok(RankLog { rank, iterations })
}

/// Megatron's reported time per iteration from `log.txt` lines
/// (`iteration k/N | … | elapsed time per iteration (ms): X | …`), as (k, ms).
#[must_use]
pub fn parse_megatron_log(text: &str) -> Vec<(u32, f64)> {
    text.lines()
        .filter_map(|line| {
            let k = line.trim().strip_prefix("iteration")?.trim_start();
            let k: u32 = k.split('/').next()?.trim().parse().ok()?;
            let (_, after) = line.split_once("elapsed time per iteration (ms):")?;
            let ms = number(after.split('|').next()?)?;
            Some((k, ms))
        })
        .collect()
}

/// The input slot of a run's logs, for the labs that read one (pipeline, bubbles).
pub const STAGE_LOGS: crate::scenario::InputSlot = crate::scenario::InputSlot {
    name: "stage_logs",
    help: "a PipeMorph run: one `[RANK<r>]` log per stage and optionally Megatron's log.txt",
    many: true,
    carried: false,
};

/// The run in the [`STAGE_LOGS`] slot's files and the first file's name; `None` when the slot
/// is empty.
///
/// # Errors
/// [`crate::ScenarioError::Field`] naming the file (and line) [`load_run`] refused.
pub fn read_stage_logs(
    inputs: &[crate::scenario::InputFile<'_>],
) -> Result<Option<(PipelineRun, String)>, crate::ScenarioError> {
    let files: Vec<(String, String)> = crate::scenario::files_in(inputs, STAGE_LOGS.name)
        .map(|f| (f.source.to_string(), f.text.to_string()))
        .collect();
    let Some((first, _)) = files.first() else {
        return Ok(None);
    };
    let first = first.clone();
    let run = load_run(&files).map_err(|e| {
        let message = if e.line == 0 {
            e.message
        } else {
            format!("line {}: {}", e.line, e.message)
        };
        crate::ScenarioError::field(e.file, message)
    })?;
    Ok(Some((run, first)))
}

/// A whole run: every rank's log, ordered by rank.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineRun {
    /// One log per stage, rank 0 first.
    pub ranks: Vec<RankLog>,
    /// Iteration times Megatron reported, if `log.txt` was given.
    pub reported: Vec<(u32, f64)>,
}

/// Builds a run from named files: rank logs (any name with `[RANK<r>]` lines) and, optionally,
/// Megatron's `log.txt`.
///
/// # Errors
/// A [`LogError`] for a malformed file, a repeated or missing rank.
pub fn load_run(files: &[(String, String)]) -> Result<PipelineRun, LogError> {
    let mut ranks: BTreeMap<u32, RankLog> = BTreeMap::new();
    let mut reported = Vec::new();
    for (name, text) in files {
        if text.trim_start().starts_with("[RANK") {
            let log = parse_rank_log(name, text)?;
            if ranks.contains_key(&log.rank) {
                return Err(LogError {
                    file: name.clone(),
                    line: 0,
                    message: format!("rank {} given twice", log.rank),
                });
            }
            ranks.insert(log.rank, log);
        } else {
            let rows = parse_megatron_log(text);
            if rows.is_empty() {
                return Err(LogError {
                    file: name.clone(),
                    line: 0,
                    message: "neither a stage log (`[RANK<r>] …` lines) nor a Megatron log (`iteration k/N | … elapsed time per iteration (ms): …`)".into(),
                });
            }
            reported = rows;
        }
    }
    if ranks.is_empty() {
        return Err(LogError {
            file: "(input)".into(),
            line: 0,
            message: "no stage logs given".into(),
        });
    }
    for (i, r) in ranks.keys().enumerate() {
        if *r != i as u32 {
            return Err(LogError {
                file: "(input)".into(),
                line: 0,
                message: format!("rank {i} is missing (ranks must be 0..{})", ranks.len()),
            });
        }
    }
    Ok(PipelineRun {
        ranks: ranks.into_values().collect(),
        reported,
    })
}

impl PipelineRun {
    /// Iteration numbers present on every rank with the same number of F and B records on each
    /// (the last block of a real log holds only the forwards of an unfinished iteration).
    #[must_use]
    pub fn complete_iterations(&self) -> Vec<u32> {
        let Some(first) = self.ranks.first() else {
            return Vec::new();
        };
        first
            .iterations
            .iter()
            .filter(|it| {
                let f = it.ops.iter().filter(|o| o.kind == LoggedKind::F).count();
                let b = it.ops.iter().filter(|o| o.kind == LoggedKind::B).count();
                f > 0 && f == b
            })
            .map(|it| it.number)
            .filter(|n| {
                self.ranks.iter().all(|r| {
                    r.iterations.iter().any(|it| {
                        it.number == *n
                            && it.ops.iter().filter(|o| o.kind == LoggedKind::F).count()
                                == it.ops.iter().filter(|o| o.kind == LoggedKind::B).count()
                    })
                })
            })
            .collect()
    }

    /// Whether the run split the backward (W records present): a zero-bubble schedule.
    #[must_use]
    pub fn zero_bubble(&self) -> bool {
        self.ranks.iter().any(|r| {
            r.iterations.iter().any(|it| {
                it.ops
                    .iter()
                    .any(|o| matches!(o.kind, LoggedKind::W | LoggedKind::WGroup(_)))
            })
        })
    }

    /// A scenario that replays this run in the simulator: the measured mean GPU time of each
    /// stage's F, B and W (complete iterations after the first, which includes warm-up), the
    /// same number of micro-batches, free P2P, and the run's schedule (1F1B, or ZB-H2 for a
    /// zero-bubble run: PipeMorph's zero-bubble runs warm up with ZB-H2's 2(p − i) − 1 forwards
    /// on stage i but place their W passes by their own rule, so this is the closest schedule
    /// the lab has, not the same one).
    #[must_use]
    pub fn fitted_params(&self) -> Option<PipelineParams> {
        let iterations = self.complete_iterations();
        let first = *iterations.first()?;
        let micro_batches = self
            .iteration(0, first)?
            .ops
            .iter()
            .filter(|o| o.kind == LoggedKind::F)
            .count() as u32;
        let zero_bubble = self.zero_bubble();
        let stage_times = (0..self.ranks.len())
            .map(|r| {
                let ops: Vec<&LoggedOp> = iterations
                    .iter()
                    .skip(1)
                    .filter_map(|&n| self.iteration(r, n))
                    .flat_map(|it| it.ops.iter())
                    .collect();
                let mean_ns = |k: LoggedKind| {
                    mean(ops.iter().filter(|o| o.kind == k).map(|o| o.gpu_ms))
                        .map_or(0, |ms| Nanos::from_ms_f64(ms).0)
                };
                StageTimes {
                    forward_ns: mean_ns(LoggedKind::F).max(1),
                    backward_input_ns: mean_ns(LoggedKind::B).max(1),
                    backward_weight_ns: if zero_bubble {
                        mean_ns(LoggedKind::W)
                    } else {
                        0
                    },
                }
            })
            .collect();
        let params = PipelineParams {
            schedules: alloc::vec![if zero_bubble {
                ScheduleKind::ZbH2
            } else {
                ScheduleKind::OneFOneB
            }],
            stages: self.ranks.len() as u32,
            micro_batches,
            stage_times,
            backward_weight_ns: 0,
            ..PipelineParams::default()
        };
        params.validate().ok().map(|()| params)
    }

    fn iteration(&self, rank: usize, number: u32) -> Option<&LoggedIteration> {
        self.ranks
            .get(rank)?
            .iterations
            .iter()
            .find(|it| it.number == number)
    }

    /// Builds the Report: timeline of all complete iterations laid end to end, per-iteration
    /// time and per-stage bubble ratio, and mean op times per stage.
    #[must_use]
    #[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
    pub fn report(&self, name: &str) -> Report {
        let p = self.ranks.len();
        let iterations = self.complete_iterations();
        let mut report = Report {
            lab: "pipeline".into(),
            title: format!(
                "PipeMorph log {name}: {} stages, {} complete iterations, {}",
                p,
                iterations.len(),
                if self.zero_bubble() {
                    "zero-bubble schedule"
                } else {
                    "1F1B schedule"
                }
            ),
            ..Report::default()
        };
        let mut lanes: Vec<Lane> = (0..p)
            .map(|r| Lane {
                name: format!("stage {r}"),
                spans: Vec::new(),
            })
            .collect();
        let mut offset_ns = 0u64;
        let mut iteration_series = Vec::new();
        let mut bubble_series: Vec<Vec<(f64, f64)>> = (0..p).map(|_| Vec::new()).collect();
        for &n in &iterations {
            let its: Vec<&LoggedIteration> = (0..p).filter_map(|r| self.iteration(r, n)).collect();
            let origin = its
                .iter()
                .flat_map(|it| it.ops.iter().map(|o| o.start_ms))
                .fold(f64::INFINITY, f64::min);
            let end = its
                .iter()
                .flat_map(|it| it.ops.iter().map(|o| o.end_ms))
                .fold(f64::NEG_INFINITY, f64::max);
            let span_ms = (end - origin).max(0.0);
            iteration_series.push((f64::from(n), span_ms));
            for (r, it) in its.iter().enumerate() {
                let busy: f64 = it.ops.iter().map(|o| o.end_ms - o.start_ms).sum();
                bubble_series[r].push((
                    f64::from(n),
                    if span_ms > 0.0 {
                        1.0 - busy / span_ms
                    } else {
                        0.0
                    },
                ));
                for op in &it.ops {
                    let start = Nanos::from_ms_f64(op.start_ms - origin).0;
                    let dur = Nanos::from_ms_f64(op.end_ms - op.start_ms).0;
                    lanes[r].spans.push(Span {
                        start_ns: offset_ns + start,
                        dur_ns: dur,
                        name: format!("{} (it {n})", op.kind.letter()),
                        cat: match op.kind {
                            LoggedKind::F => "F".into(),
                            LoggedKind::B => "B".into(),
                            _ => "W".into(),
                        },
                    });
                }
            }
            offset_ns += Nanos::from_ms_f64(span_ms).0;
        }
        for lane in &mut lanes {
            lane.spans.sort_by_key(|s| s.start_ns);
        }
        let mut timeline = Timeline {
            name: format!("{name} (measured)"),
            lanes,
            ..Timeline::default()
        };
        timeline.declare(&[super::sim::SPAN_KINDS]);
        report.timelines.push(timeline);

        report.push_metric(
            "complete_iterations",
            "complete iterations",
            iterations.len() as f64,
            "count",
        );
        report.push_metric("stages", "stages", p as f64, "count");
        if let Some(mean) = mean(iteration_series.iter().skip(1).map(|&(_, y)| y)) {
            report.push_metric(
                "mean_iteration_ms",
                "mean iteration span after the first (from stage logs)",
                mean,
                "ms",
            );
        }
        let mut table = Table {
            key: "stage_ops".into(),
            title: "Per stage (all complete iterations after the first)".into(),
            columns: [
                "stage",
                "F GPU (ms)",
                "B GPU (ms)",
                "W GPU (ms)",
                "mean bubble ratio",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            rows: Vec::new(),
        };
        for (r, bubbles) in bubble_series.iter().enumerate() {
            let ops: Vec<&LoggedOp> = iterations
                .iter()
                .skip(1)
                .filter_map(|&n| self.iteration(r, n))
                .flat_map(|it| it.ops.iter())
                .collect();
            let mean_of =
                |k: LoggedKind| mean(ops.iter().filter(|o| o.kind == k).map(|o| o.gpu_ms));
            let cell = |v: Option<f64>| v.map_or(Cell::Missing, Cell::Num);
            table.rows.push(
                [
                    Cell::Num(r as f64),
                    cell(mean_of(LoggedKind::F)),
                    cell(mean_of(LoggedKind::B)),
                    cell(mean_of(LoggedKind::W)),
                    cell(mean(bubbles.iter().skip(1).map(|&(_, y)| y))),
                ]
                .into_iter()
                .collect(),
            );
        }
        report.tables.push(table);
        report.series.push(Series {
            name: "iteration span (stage logs)".into(),
            chart: "iteration_ms".into(),
            x_label: "iteration".into(),
            y_label: "time (ms)".into(),
            points: iteration_series.clone(),
        });
        if !self.reported.is_empty() {
            report.series.push(Series {
                name: "elapsed per iteration (Megatron log)".into(),
                chart: "iteration_ms".into(),
                x_label: "iteration".into(),
                y_label: "time (ms)".into(),
                points: self
                    .reported
                    .iter()
                    .map(|&(k, ms)| (f64::from(k), ms))
                    .collect(),
            });
        }
        for (r, points) in bubble_series.into_iter().enumerate() {
            report.series.push(Series {
                name: format!("stage {r}"),
                chart: "bubble_by_iteration".into(),
                x_label: "iteration".into(),
                y_label: "bubble ratio".into(),
                points,
            });
        }
        let fastest = iteration_series
            .iter()
            .skip(1)
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min);
        if let Some(params) = self.fitted_params() {
            if let Ok(sim) = super::sim::run_schedule(&params, params.schedules[0]) {
                let sim_ms = sim.iteration_ns as f64 / 1e6;
                report.push_metric(
                    "simulated_iteration_ms",
                    "simulated iteration from measured op times (free P2P)",
                    sim_ms,
                    "ms",
                );
                if fastest.is_finite() && fastest > 0.0 {
                    report.push_metric(
                        "fastest_iteration_ms",
                        "fastest measured iteration span after the first",
                        fastest,
                        "ms",
                    );
                    let gap = (fastest / sim_ms - 1.0) * 100.0;
                    let why = if gap >= 0.0 {
                        "the rest is communication and host time that the op timings do not cover"
                    } else {
                        "the run beat the replay, so its schedule is not the one the lab replays (PipeMorph's zero-bubble runs share ZB-H2's warm-up but place their W passes by their own rule)"
                    };
                    report.findings.push(format!(
                        "Replaying the measured per-stage F/B/W times under {} with free P2P gives {sim_ms:.0} ms per iteration; the fastest measured iteration took {fastest:.0} ms ({gap:+.1}%): {why}.",
                        params.schedules[0].label_with(1)
                    ));
                }
            }
        }
        if let (Some(first), Some(last)) = (iteration_series.get(1), iteration_series.last()) {
            let ratio = if first.1 > 0.0 { last.1 / first.1 } else { 0.0 };
            if ratio > 1.2 {
                report.findings.push(format!(
                    "Iteration {} spans {:.0} ms and iteration {} spans {:.0} ms ({ratio:.2}×): the slowdown reaches every stage, because each stage waits on its neighbours.",
                    first.0, first.1, last.0, last.1
                ));
            }
        }
        report
    }
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "[RANK1] Iteration 1\n[RANK1] F @ 1.5 (ms) to 3 (ms), cudaEventElapsed = 1.4 (ms)\n[RANK1] 4W @ 3 (ms) to 4 (ms), cudaEventElapsed = 1 (ms)\n";

    #[test]
    fn parses_ops_and_groups() {
        let log = parse_rank_log("r1", LOG).unwrap();
        assert_eq!(log.rank, 1);
        assert_eq!(log.iterations[0].ops[1].kind, LoggedKind::WGroup(4));
        assert_eq!(log.iterations[0].ops[0].start_ms, 1.5);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = "[RANK0] Iteration 1\n[RANK0] F @ x (ms) to 3 (ms), cudaEventElapsed = 1 (ms)\n";
        let e = parse_rank_log("r0.log", bad).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("r0.log:2:"), "{e}");
        let e = parse_rank_log(
            "r0.log",
            "[RANK0] F @ 1 (ms) to 3 (ms), cudaEventElapsed = 1 (ms)",
        )
        .unwrap_err();
        assert!(e.message.contains("before the first"), "{e}");
        let e = parse_rank_log("r0.log", "[RANK0] Iteration 1\n[RANK1] Iteration 2").unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn megatron_lines() {
        let rows = parse_megatron_log(" iteration        2/      15 | consumed samples:  24 | elapsed time per iteration (ms): 1540.5 | lr: 0 |");
        assert_eq!(rows, [(2, 1540.5)]);
    }
}
