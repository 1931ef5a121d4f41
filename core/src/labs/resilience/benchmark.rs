//! A labelled fail-slow benchmark: generated per-worker mini-batch traces with known slow
//! workers and links, onsets and durations, written in the columns the PAI reader accepts
//! (`,worker,gpu,time,batch_time_norm`) plus two label columns it ignores (`slow`: 1 while
//! the worker is in a fail-slow episode; `episode`: its id, −1 otherwise); and the scoring of
//! the detectors of [`super::pai`] against the labels. No public labelled fail-slow trace
//! exists; every distribution below is ours unless a source is named.
//!
//! Trace: `workers` data-parallel workers, one sample every `sample_s` seconds. A worker's time
//! is 400 (the PAI traces' 0–1000 scale) × its own steady bias exp(`bias_sigma` z) × the sample's work
//! exp(`work_sigma` z) — the same for every worker, as packed sequence lengths change the work
//! of a step — × jitter exp(`jitter_sigma` z) × its slowdown. Episodes, at random
//! non-overlapping times after the first 100 samples, alternate between a compute fail-slow
//! (one worker × U(1.5, 3)) and a communication fail-slow (a slow link between ring neighbours
//! w, w+1: both × U(1.3, 2)); durations are exponential with the means Greyhound reports for
//! its production cluster (Wu et al., USENIX ATC 2025, §3: compute fail-slows last 10 min on
//! average, communication ones 24 min), at least 3 samples. `uniform_windows` windows slow
//! every worker alike × U(1.3, 2) (a workload change, not a fail-slow: labelled 0). Two more
//! things real jobs have and no label marks: static heterogeneity (`bias_sigma` 0.3 of ln; the
//! shared PAI jobs measure 0.04, 0.04 and 0.66) and transient spikes (`transient_rate` 0.007 per
//! worker and sample, 80 % one sample long, 16 % two, 4 % longer, × U(1.3, 2.5)). The spike
//! figures are the shared PAI jobs 1, 3 and 4 read with ResiHP's per-worker rule: over 14,910
//! worker-samples, 111 runs above 1.25× the worker's own level (0.74 %), 88 of one sample, 16
//! of two, 7 longer (some of those the jobs' real stragglers). The magnitudes are ours.
//!
//! Scoring: an episode is (onset, end, workers) from the labels. A flag is true when its time
//! lies in [onset, end] of an episode and, if it names a worker, the worker is in the episode
//! (windows are at least 20 samples apart, so a late flag is never credited to a neighbour); precision = true flags / flags, recall = episodes
//! with a true flag / episodes, delay = mean (first true flag − onset), in the `time` column's
//! unit (s here).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::pai::{self, PaiError};
use super::params::DetectorSpec;
use crate::report::{Cell, Report, Table};

/// Most workers of a generated trace.
pub const MAX_WORKERS: u32 = 1024;
/// Most samples of a generated trace.
pub const MAX_SAMPLES: u32 = 100_000;

/// How to generate a labelled trace.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchmarkSpec {
    /// Data-parallel workers.
    pub workers: u32,
    /// Samples (mini-batches) per worker.
    pub samples: u32,
    /// Seconds between samples (the `time` column's step).
    pub sample_s: u32,
    /// Fail-slow episodes.
    pub episodes: u32,
    /// Windows in which every worker slows alike (not fail-slows).
    pub uniform_windows: u32,
    /// σ of ln(work) per sample, shared by every worker.
    pub work_sigma: f64,
    /// σ of ln(jitter) per worker and sample.
    pub jitter_sigma: f64,
    /// σ of ln(a worker's steady bias): static heterogeneity, not a fail-slow.
    pub bias_sigma: f64,
    /// Chance per worker and sample that a transient (unlabelled) spike starts.
    pub transient_rate: f64,
    /// Seed of every draw.
    pub seed: u64,
}

impl Default for BenchmarkSpec {
    fn default() -> Self {
        BenchmarkSpec {
            workers: 16,
            samples: 3000,
            sample_s: 10,
            episodes: 8,
            uniform_windows: 4,
            work_sigma: 0.05,
            jitter_sigma: 0.02,
            bias_sigma: 0.3,
            transient_rate: 0.007,
            seed: 1,
        }
    }
}

/// One labelled episode.
#[derive(Clone, Debug, PartialEq)]
pub struct Episode {
    /// Id (the `episode` column).
    pub id: u32,
    /// First sample time.
    pub onset: u64,
    /// Last sample time.
    pub end: u64,
    /// Workers slowed, sorted.
    pub workers: Vec<u32>,
}

fn normal(rng: &mut Pcg64Mcg) -> f64 {
    crate::units::standard_normal(rng)
}

/// Checks the spec; the error names the bad field.
///
/// # Errors
/// A message naming the field and the allowed range.
pub fn validate(spec: &BenchmarkSpec) -> Result<(), String> {
    if !(2..=MAX_WORKERS).contains(&spec.workers) {
        return Err(format!(
            "workers: must be between 2 and {MAX_WORKERS}, got {}",
            spec.workers
        ));
    }
    if !(200..=MAX_SAMPLES).contains(&spec.samples) {
        return Err(format!(
            "samples: must be between 200 and {MAX_SAMPLES}, got {}",
            spec.samples
        ));
    }
    if !(1..=3600).contains(&spec.sample_s) {
        return Err(format!(
            "sample_s: must be between 1 and 3600, got {}",
            spec.sample_s
        ));
    }
    if spec.episodes + spec.uniform_windows > spec.samples / 20 {
        return Err(format!(
            "episodes: episodes + uniform windows must be at most samples / 20 = {}, got {}",
            spec.samples / 20,
            spec.episodes + spec.uniform_windows
        ));
    }
    for (name, v) in [
        ("work_sigma", spec.work_sigma),
        ("jitter_sigma", spec.jitter_sigma),
        ("bias_sigma", spec.bias_sigma),
        ("transient_rate", spec.transient_rate),
    ] {
        if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
            return Err(format!("{name}: must be between 0 and 1, got {v}"));
        }
    }
    Ok(())
}

/// Generates the labelled CSV and its episodes.
///
/// # Errors
/// A message naming the bad field of `spec`.
pub fn generate(spec: &BenchmarkSpec) -> Result<(String, Vec<Episode>), String> {
    validate(spec)?;
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let n = spec.samples as usize;
    let w = spec.workers as usize;
    // Windows: (start, length, kind) with kind 0 compute, 1 link, 2 uniform.
    let mut windows: Vec<(usize, usize, u8)> = Vec::new();
    let kinds: Vec<u8> = (0..spec.episodes)
        .map(|i| (i % 2) as u8)
        .chain((0..spec.uniform_windows).map(|_| 2))
        .collect();
    for kind in kinds {
        let mean_s = if kind == 1 { 24.0 * 60.0 } else { 10.0 * 60.0 };
        let u: f64 = rng.random();
        let dur_s = -mean_s * libm::log(1.0 - u);
        let len = (libm::round(dur_s / f64::from(spec.sample_s)) as usize).clamp(3, n / 10);
        // Up to 100 tries at a free place (100 samples of warm-up, 20 between windows).
        for _ in 0..100 {
            let start = 100 + (rng.random::<f64>() * (n - 100 - len) as f64) as usize;
            let free = windows
                .iter()
                .all(|&(s, l, _)| start + len + 20 <= s || s + l + 20 <= start);
            if free && start + len <= n {
                windows.push((start, len, kind));
                break;
            }
        }
    }
    windows.sort_unstable();
    // Per window: the workers and factor.
    let mut slow = alloc::vec![alloc::vec![1.0f64; w]; n];
    let mut label = alloc::vec![alloc::vec![-1i64; w]; n];
    let mut episodes = Vec::new();
    for &(start, len, kind) in &windows {
        let (workers, factor): (Vec<u32>, f64) = match kind {
            0 => {
                let x = (rng.random::<f64>() * w as f64) as u32 % spec.workers;
                (alloc::vec![x], 1.5 + 1.5 * rng.random::<f64>())
            }
            1 => {
                let x = (rng.random::<f64>() * w as f64) as u32 % spec.workers;
                let mut v = alloc::vec![x, (x + 1) % spec.workers];
                v.sort_unstable();
                (v, 1.3 + 0.7 * rng.random::<f64>())
            }
            _ => ((0..spec.workers).collect(), 1.3 + 0.7 * rng.random::<f64>()),
        };
        let id = episodes.len() as i64;
        for t in start..start + len {
            for &x in &workers {
                slow[t][x as usize] = factor;
                if kind != 2 {
                    label[t][x as usize] = id;
                }
            }
        }
        if kind != 2 {
            episodes.push(Episode {
                id: id as u32,
                onset: (start as u64) * u64::from(spec.sample_s),
                end: ((start + len - 1) as u64) * u64::from(spec.sample_s),
                workers,
            });
        }
    }
    let bias: Vec<f64> = (0..w)
        .map(|_| libm::exp(spec.bias_sigma * normal(&mut rng)))
        .collect();
    add_transients(spec, &mut rng, &mut slow);
    let mut out = String::from(",worker,gpu,time,batch_time_norm,slow,episode\n");
    let mut row = 0usize;
    for t in 0..n {
        let work = libm::exp(spec.work_sigma * normal(&mut rng));
        let time = (t as u64) * u64::from(spec.sample_s);
        for x in 0..w {
            let j = libm::exp(spec.jitter_sigma * normal(&mut rng));
            let v = 400.0 * bias[x] * work * j * slow[t][x];
            let id = label[t][x];
            out.push_str(&format!(
                "{row},{x},{x},{time},{v:.3},{},{id}\n",
                u8::from(id >= 0)
            ));
            row += 1;
        }
    }
    Ok((out, episodes))
}

/// Unlabelled spikes: each worker and sample starts one with chance `transient_rate`, lasting
/// 1 + Geometric(0.8) samples (80 % one sample, 16 % two, 4 % three or more) at × U(1.3, 2.5).
fn add_transients(spec: &BenchmarkSpec, rng: &mut Pcg64Mcg, slow: &mut [Vec<f64>]) {
    let n = slow.len();
    for x in 0..spec.workers as usize {
        let mut t = 0;
        while t < n {
            if rng.random::<f64>() >= spec.transient_rate {
                t += 1;
                continue;
            }
            let factor = 1.3 + 1.2 * rng.random::<f64>();
            let mut len = 1;
            while rng.random::<f64>() < 0.2 {
                len += 1;
            }
            for row in slow.iter_mut().skip(t).take(len) {
                row[x] *= factor;
            }
            t += len;
        }
    }
}

/// Reads the episodes from a labelled CSV's `worker`, `time` and `episode` columns.
///
/// # Errors
/// [`PaiError`] naming the line and column of a bad label, or a missing label column.
pub fn episodes(text: &str) -> Result<Vec<Episode>, PaiError> {
    let (cols, lines) = pai::split_header(text, "empty file")?;
    let find = |name: &str| {
        pai::column(&cols, name, || {
            format!(
                "missing label column `{name}`; a labelled trace has `,worker,gpu,time,batch_time_norm,slow,episode` (bubblelab detect --generate writes one)"
            )
        })
    };
    let (wi, ti, ei) = (find("worker")?, find("time")?, find("episode")?);
    let mut by_id: BTreeMap<u32, Episode> = BTreeMap::new();
    for (i, raw) in lines {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |idx: usize, name: &str| {
            cells.get(idx).copied().ok_or_else(|| PaiError {
                line: i + 1,
                message: format!("column `{name}` is missing"),
            })
        };
        let id: i64 = get(ei, "episode")?.parse().map_err(|_| PaiError {
            line: i + 1,
            message: format!("column `episode`: expected an integer, got `{}`", cells[ei]),
        })?;
        if id < 0 {
            continue;
        }
        let worker: u32 = get(wi, "worker")?.parse().map_err(|_| PaiError {
            line: i + 1,
            message: format!("column `worker`: expected a worker id, got `{}`", cells[wi]),
        })?;
        let time: u64 = get(ti, "time")?.parse().map_err(|_| PaiError {
            line: i + 1,
            message: format!("column `time`: expected an integer, got `{}`", cells[ti]),
        })?;
        let e = by_id.entry(id as u32).or_insert(Episode {
            id: id as u32,
            onset: time,
            end: time,
            workers: Vec::new(),
        });
        e.onset = e.onset.min(time);
        e.end = e.end.max(time);
        if !e.workers.contains(&worker) {
            e.workers.push(worker);
            e.workers.sort_unstable();
        }
    }
    Ok(by_id.into_values().collect())
}

/// Detection quality of one detector on a labelled trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Score {
    /// Flags raised.
    pub flags: u32,
    /// Flags matching an episode.
    pub true_flags: u32,
    /// Episodes with at least one true flag.
    pub detected: u32,
    /// Episodes.
    pub episodes: u32,
    /// Mean first-true-flag delay (time units), `None` without detections.
    pub delay: Option<f64>,
}

impl Score {
    /// true flags / flags (1 without flags).
    #[must_use]
    pub fn precision(&self) -> f64 {
        if self.flags == 0 {
            1.0
        } else {
            f64::from(self.true_flags) / f64::from(self.flags)
        }
    }
    /// detected / episodes (1 without episodes).
    #[must_use]
    pub fn recall(&self) -> f64 {
        if self.episodes == 0 {
            1.0
        } else {
            f64::from(self.detected) / f64::from(self.episodes)
        }
    }
}

/// Scores `flags` of one detector against `episodes`.
#[must_use]
pub fn score(flags: &[&pai::PaiFlag], episodes: &[Episode]) -> Score {
    let mut first: Vec<Option<u64>> = alloc::vec![None; episodes.len()];
    let mut s = Score {
        flags: flags.len() as u32,
        episodes: episodes.len() as u32,
        ..Score::default()
    };
    for f in flags {
        let hit = episodes.iter().position(|e| {
            f.time >= e.onset && f.time <= e.end && f.worker.is_none_or(|w| e.workers.contains(&w))
        });
        if let Some(i) = hit {
            s.true_flags += 1;
            if first[i].is_none() {
                first[i] = Some(f.time - episodes[i].onset);
            }
        }
    }
    let delays: Vec<f64> = first.iter().flatten().map(|&d| d as f64).collect();
    s.detected = delays.len() as u32;
    if !delays.is_empty() {
        s.delay = Some(delays.iter().sum::<f64>() / delays.len() as f64);
    }
    s
}

/// The detectors run on a labelled trace named `source` and scored against its labels.
///
/// # Errors
/// [`PaiError`] naming the line and column of a bad value or label.
pub fn score_report(source: &str, text: &str, spec: &DetectorSpec) -> Result<Report, PaiError> {
    let trace = pai::parse(text)?;
    let truth = episodes(text)?;
    let flags = pai::detect(&trace, spec);
    let mut report = Report {
        lab: "resilience".into(),
        title: format!(
            "Fail-slow detectors scored on a labelled trace: {source} ({} workers, {} samples, {} episodes)",
            trace.workers.len(),
            trace.samples.len(),
            truth.len()
        ),
        ..Report::default()
    };
    let mut table = Table {
        key: "scores".into(),
        title: "Precision, recall and delay per detector (a flag counts inside an episode)".into(),
        columns: [
            "detector",
            "flags",
            "true flags",
            "precision",
            "recall",
            "mean delay (time units)",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect(),
        rows: Vec::new(),
    };
    for (id, label) in [
        ("resihp", "ResiHP (work-normalised, per worker)"),
        ("greyhound", "Greyhound's detector on iteration time"),
        ("changepoint", "CUSUM change point on iteration time"),
        ("naive", "Naive z-score on iteration time"),
    ] {
        let mine: Vec<&pai::PaiFlag> = flags.iter().filter(|f| f.detector == id).collect();
        let s = score(&mine, &truth);
        let round = |v: f64| libm::round(v * 1e4) / 1e4 + 0.0;
        report.push_metric(
            &format!("benchmark.{id}.precision"),
            &format!("{label}: precision"),
            round(s.precision()),
            "ratio",
        );
        report.push_metric(
            &format!("benchmark.{id}.recall"),
            &format!("{label}: recall"),
            round(s.recall()),
            "ratio",
        );
        if let Some(d) = s.delay {
            report.push_metric(
                &format!("benchmark.{id}.delay"),
                &format!("{label}: mean delay"),
                round(d),
                "time units",
            );
        }
        table.rows.push(alloc::vec![
            Cell::Text(label.into()),
            Cell::Num(f64::from(s.flags)),
            Cell::Num(f64::from(s.true_flags)),
            Cell::Num(round(s.precision())),
            Cell::Num(round(s.recall())),
            s.delay.map_or(Cell::Missing, |d| Cell::Num(round(d))),
        ]);
    }
    report.tables.push(table);
    report.findings.push(format!(
        "{} labelled fail-slow episodes ({} on one worker, {} on a link between two workers).",
        truth.len(),
        truth.iter().filter(|e| e.workers.len() == 1).count(),
        truth.iter().filter(|e| e.workers.len() == 2).count()
    ));
    Ok(report)
}
