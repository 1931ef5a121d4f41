//! Real per-worker mini-batch times from Alibaba PAI (cluster-trace-gpu-v2020, `job_N_norm.csv`:
//! `,worker,gpu,time,batch_time_norm`) and the detectors run on them.
//!
//! The trace has no sequence lengths, so ResiHP's expected time of a worker is its own level
//! (steadily slow workers are common: PAI job 4's workers sit at 0.5× and 2× the median), moved
//! by the change every worker shares (the work of the step); the rule is `worker_flags`'s. The raw-time
//! detectors (naive z-score, CUSUM, Greyhound's detector with the default
//! [`super::params::GreyhoundSpec`], every report a change slower or faster) watch the iteration time, the
//! slowest worker's (synchronous DP waits for it), and cannot say which worker.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::detect::{ChangePoint, Naive, SlowDetection};
use super::params::DetectorSpec;
use super::params::GreyhoundSpec;
use crate::report::{Cell, Report, Series, Table};

/// Most rows read.
pub const MAX_ROWS: usize = 2_000_000;

/// A bad line of the CSV.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaiError {
    /// 1-based line.
    pub line: usize,
    /// What was wrong (names the column).
    pub message: String,
}

impl core::fmt::Display for PaiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Per-worker mini-batch times, by sample time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PaiTrace {
    /// Worker ids, sorted.
    pub workers: Vec<u32>,
    /// (time, value per worker in `workers` order, `None` where missing), by time.
    pub samples: Vec<(u64, Vec<Option<f64>>)>,
}

/// A CSV's header cells (trimmed) and its numbered lines after the header (index 0 is the
/// header's line); `empty` is the message for a file without a header.
pub(crate) fn split_header<'a>(
    text: &'a str,
    empty: &str,
) -> Result<(Vec<&'a str>, core::iter::Enumerate<core::str::Lines<'a>>), PaiError> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or_else(|| PaiError {
        line: 1,
        message: empty.into(),
    })?;
    let cols = header
        .trim_end_matches('\r')
        .split(',')
        .map(str::trim)
        .collect();
    Ok((cols, lines))
}

/// The index of header column `name`, or a line-1 error with `missing()`'s message.
pub(crate) fn column(
    cols: &[&str],
    name: &str,
    missing: impl FnOnce() -> String,
) -> Result<usize, PaiError> {
    cols.iter()
        .position(|c| *c == name)
        .ok_or_else(|| PaiError {
            line: 1,
            message: missing(),
        })
}

/// Parses a PAI `job_N_norm.csv`.
///
/// # Errors
/// [`PaiError`] naming the line and column of the first bad value, or a missing header column.
pub fn parse(text: &str) -> Result<PaiTrace, PaiError> {
    let (cols, lines) = split_header(
        text,
        "empty file; expected the header `,worker,gpu,time,batch_time_norm`",
    )?;
    let find = |name: &str| {
        column(&cols, name, || {
            format!(
                "missing column `{name}`; expected the header `,worker,gpu,time,batch_time_norm`"
            )
        })
    };
    let (wi, ti, vi) = (find("worker")?, find("time")?, find("batch_time_norm")?);
    let mut by_time: BTreeMap<u64, BTreeMap<u32, f64>> = BTreeMap::new();
    let mut rows = 0usize;
    for (i, raw) in lines {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        rows += 1;
        if rows > MAX_ROWS {
            return Err(PaiError {
                line: i + 1,
                message: format!("at most {MAX_ROWS} rows"),
            });
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |idx: usize, name: &str| {
            cells.get(idx).copied().ok_or_else(|| PaiError {
                line: i + 1,
                message: format!(
                    "column `{name}` is missing ({} cells, header has {})",
                    cells.len(),
                    cols.len()
                ),
            })
        };
        let worker: u32 = get(wi, "worker")?.parse().map_err(|_| PaiError {
            line: i + 1,
            message: format!("column `worker`: expected a worker id, got `{}`", cells[wi]),
        })?;
        let time: u64 = get(ti, "time")?.parse().map_err(|_| PaiError {
            line: i + 1,
            message: format!("column `time`: expected an integer, got `{}`", cells[ti]),
        })?;
        let value: f64 = get(vi, "batch_time_norm")?.parse().map_err(|_| PaiError {
            line: i + 1,
            message: format!(
                "column `batch_time_norm`: expected a number, got `{}`",
                cells[vi]
            ),
        })?;
        if !(value.is_finite() && value >= 0.0) {
            return Err(PaiError {
                line: i + 1,
                message: format!(
                    "column `batch_time_norm`: expected a non-negative number, got `{}`",
                    cells[vi]
                ),
            });
        }
        by_time.entry(time).or_default().insert(worker, value);
    }
    if by_time.is_empty() {
        return Err(PaiError {
            line: 2,
            message: "no data rows".into(),
        });
    }
    let mut workers: Vec<u32> = by_time.values().flat_map(|m| m.keys().copied()).collect();
    workers.sort_unstable();
    workers.dedup();
    let samples = by_time
        .into_iter()
        .map(|(t, m)| (t, workers.iter().map(|w| m.get(w).copied()).collect()))
        .collect();
    Ok(PaiTrace { workers, samples })
}

/// One flag on the real trace.
#[derive(Clone, Debug, PartialEq)]
pub struct PaiFlag {
    /// Detector id: `resihp`, `naive`, `changepoint`, `greyhound`.
    pub detector: &'static str,
    /// Sample time (the trace's `time` column) of the flag.
    pub time: u64,
    /// Worker blamed (`None` for the raw-time detectors).
    pub worker: Option<u32>,
}

fn median_of(values: &mut [f64]) -> f64 {
    super::detect::median(values)
}

/// One worker's level: its recent accepted times and the run it is in.
#[derive(Clone, Debug, Default)]
struct Level {
    /// Its last accepted times (at most `window`), oldest first.
    recent: VecDeque<f64>,
    /// Its times in the current run above (+) or below (−) its level.
    run: Vec<f64>,
    /// Whether the run is above its level.
    high: bool,
    /// Whether it has had `window` samples (then it is tested).
    warm: bool,
    /// Whether its level is a slowdown it was flagged for (a run below it is a recovery).
    slowed: bool,
}

/// ResiHP's per-worker test on a trace: each worker against its own level (the median of its
/// last `window` accepted times), corrected by the shared change (the median worker's time over
/// its level: a workload change moves every worker alike). A worker whose corrected ratio stays
/// above 1 + `threshold` for `persistence` samples is flagged once, and its level becomes the new
/// one (ResiHP learns the slowdown it blamed); once flagged, `persistence` samples below
/// 1 / (1 + threshold) are its recovery (the level goes back, no flag). Other samples outside the
/// band are transients (or a fast spell): neither flagged nor learned. A steadily slow worker is
/// its own level, never an onset.
fn worker_flags(trace: &PaiTrace, spec: &DetectorSpec) -> Vec<PaiFlag> {
    let window = spec.window.max(1) as usize;
    let persistence = spec.persistence.max(1) as usize;
    let up = 1.0 + spec.threshold;
    let mut levels = alloc::vec![Level::default(); trace.workers.len()];
    let mut flags = Vec::new();
    for (time, values) in &trace.samples {
        let level = |l: &Level| {
            let mut v: Vec<f64> = l.recent.iter().copied().collect();
            median_of(&mut v)
        };
        let ratios: Vec<Option<f64>> = values
            .iter()
            .zip(&levels)
            .map(|(x, l)| {
                let base = level(l);
                x.filter(|_| l.warm && base > 0.0)
                    .map(|x| x / base)
            })
            .collect();
        let mut present: Vec<f64> = ratios.iter().flatten().copied().collect();
        let shared = median_of(&mut present);
        for (w, (x, l)) in values.iter().zip(levels.iter_mut()).enumerate() {
            let Some(x) = *x else { continue };
            let r = ratios[w].filter(|_| shared > 0.0).map_or(1.0, |r| r / shared);
            let high = r > up;
            if !high && r * up >= 1.0 {
                l.run.clear();
                l.recent.push_back(x);
                while l.recent.len() > window {
                    l.recent.pop_front();
                }
                l.warm |= l.recent.len() == window;
                continue;
            }
            if l.high != high {
                l.run.clear();
                l.high = high;
            }
            l.run.push(x);
            if l.run.len() == persistence {
                if high {
                    flags.push(PaiFlag {
                        detector: "resihp",
                        time: *time,
                        worker: Some(trace.workers[w]),
                    });
                }
                if high || l.slowed {
                    l.recent = l.run.drain(..).collect();
                    l.slowed = high;
                }
            }
        }
    }
    flags
}

/// Runs the detectors on `trace`: ResiHP's per-worker flags, then the raw-time detectors'.
#[must_use]
pub fn detect(trace: &PaiTrace, spec: &DetectorSpec) -> Vec<PaiFlag> {
    let mut flags = worker_flags(trace, spec);
    let mut naive = Naive::new(spec.window, spec.z_threshold);
    let mut cusum = ChangePoint::new(spec.window, spec.cusum_k, spec.cusum_h);
    let g = GreyhoundSpec::default();
    // Checked at every sample (the trace's spacing is not a duration).
    let mut slow = SlowDetection::new(
        g.change_probability,
        g.min_gap_iterations,
        g.min_degradation,
        g.outlier_z,
        0,
    );
    for (i, (time, values)) in trace.samples.iter().enumerate() {
        let slowest = values.iter().flatten().copied().fold(0.0, f64::max);
        let idx = i as u32;
        if naive.observe(idx, slowest).is_some() {
            flags.push(PaiFlag {
                detector: "naive",
                time: *time,
                worker: None,
            });
        }
        if cusum.observe(idx, slowest).is_some() {
            flags.push(PaiFlag {
                detector: "changepoint",
                time: *time,
                worker: None,
            });
        }
        if slow.observe(slowest, 0).is_some() {
            slow.clear();
            flags.push(PaiFlag {
                detector: "greyhound",
                time: *time,
                worker: None,
            });
        }
    }
    flags
}

/// The Report of the detectors on a PAI trace named `source`.
#[must_use]
pub fn report(source: &str, trace: &PaiTrace, spec: &DetectorSpec) -> Report {
    let flags = detect(trace, spec);
    let mut report = Report {
        lab: "resilience".into(),
        title: format!(
            "Fail-slow detectors on real PAI mini-batch times: {source} ({} workers, {} samples)",
            trace.workers.len(),
            trace.samples.len()
        ),
        ..Report::default()
    };
    for (id, label) in [
        ("resihp", "ResiHP (work-normalised, per worker)"),
        ("naive", "Naive z-score on iteration time"),
        ("changepoint", "CUSUM change point on iteration time"),
        ("greyhound", "Greyhound's detector on iteration time"),
    ] {
        let n = flags.iter().filter(|f| f.detector == id).count();
        report.push_metric(
            &format!("pai.{id}.flags"),
            &format!("{label}: flags"),
            n as f64,
            "count",
        );
    }
    let mut table = Table {
        key: "flags".into(),
        title: "Flags (time = the trace's sample time)".into(),
        columns: ["detector", "time", "worker"]
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
        rows: Vec::new(),
    };
    for f in &flags {
        table.rows.push(alloc::vec![
            Cell::Text(f.detector.into()),
            Cell::Num(f.time as f64),
            f.worker.map_or(Cell::Missing, |w| Cell::Num(f64::from(w))),
        ]);
    }
    report.tables.push(table);
    let mut slowest = Vec::new();
    let mut middle = Vec::new();
    for (t, v) in &trace.samples {
        let mut present: Vec<f64> = v.iter().flatten().copied().collect();
        slowest.push((*t as f64, present.iter().copied().fold(0.0, f64::max)));
        middle.push((*t as f64, median_of(&mut present)));
    }
    for (name, points) in [
        ("slowest worker (iteration time)", slowest),
        ("median worker", middle),
    ] {
        report.series.push(Series {
            name: name.into(),
            chart: "resilience.pai_time".into(),
            x_label: "sample time".into(),
            y_label: "mini-batch time (normalised 0–1000)".into(),
            points,
        });
    }
    let workers: Vec<String> = {
        let mut w: Vec<u32> = flags.iter().filter_map(|f| f.worker).collect();
        w.sort_unstable();
        w.dedup();
        w.iter().map(ToString::to_string).collect()
    };
    report.findings.push(format!(
        "ResiHP flagged worker(s) [{}]; the raw-time detectors (naive, CUSUM, Greyhound's) raised {}, {} and {} alarms without naming a worker.",
        workers.join(", "),
        flags.iter().filter(|f| f.detector == "naive").count(),
        flags.iter().filter(|f| f.detector == "changepoint").count(),
        flags.iter().filter(|f| f.detector == "greyhound").count()
    ));
    report
}
