//! Trace readers and the synthetic generator of the fairness lab.
//!
//! Every reader parses text (`&str`; the core has no I/O) into a [`Trace`]:
//!
//! | format | [`TraceFormat`] id | tenant | reader |
//! |---|---|---|---|
//! | Tiresias / ASTRAEA CSV | `tiresias` | `tenant`, else `user`, else `vc` column; one tenant without any | [`tiresias`] |
//! | Chronus artifact CSV (minutes, deadlines) | `chronus` | as Tiresias | [`tiresias::parse_chronus`] |
//! | Helios `cluster_log.csv` | `helios` | `user` | [`helios`] |
//! | Philly `cluster_job_log` JSON | `philly` | `vc` | [`philly`] |
//! | Alibaba v2023 `openb_pod_list` CSV | `alibaba-openb` | `qos` | [`alibaba`] |
//! | DIR-LAB per-user traces | `dirlab` | `user` | [`dirlab`] |
//!
//! Rules shared by all readers:
//! - **Times** are integer ns: seconds × 1e9, rounded once through [`crate::units::nanos_from_f64`].
//!   Every trace is shifted so that its earliest kept job submits at 0 ns.
//! - **Rows.** [`TraceError::row`] is the 1-based line of the text (the header is line 1; the
//!   Philly reader, which reads JSON, counts jobs of the array instead). A bad row is an error
//!   naming its row and column, or, with [`ReadOptions::skip_bad_rows`], skipped and counted in
//!   [`Trace::skipped_rows`]. Jobs that cannot run on a GPU cluster at all (0 GPUs, pods never
//!   scheduled, Philly jobs that never ran) are **always** skipped and counted, whatever the option.
//! - **Bounds.** At most [`ReadOptions::max_rows`] data rows (more is an error), fields of at most
//!   [`MAX_FIELD_CHARS`] characters, times and durations of at most [`MAX_SECONDS`] s, jobs of at
//!   most [`MAX_GPUS_PER_JOB`] GPUs. No input makes a reader panic (fuzzed in
//!   `core/tests/fairness_traces.rs`).
//! - **Order.** Tenants are indexed in order of first appearance in the text (a `BTreeMap` maps
//!   names to indices; no hash map reaches the output); jobs are sorted by (`submit_ns`, `id`);
//!   job ids must be unique.
//! - **Source.** [`Trace::source`] is the format id (`dirlab`, …); a caller that knows the file
//!   name replaces it.

pub mod alibaba;
pub mod colocation;
pub mod deadlines;
pub mod dirlab;
pub mod helios;
pub mod philly;
pub mod shares;
pub mod synthetic;
pub mod throughputs;
pub mod tiresias;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::job::{Job, LaterDeadline, Trace};
pub use crate::csv::{ReadOptions, TraceError, DEFAULT_MAX_ROWS, MAX_FIELD_CHARS, MAX_SECONDS};
pub(crate) use crate::csv::{check_seconds, parse_seconds, split_csv, Csv, Row};
use crate::units::nanos_from_f64;

/// Largest accepted GPU count of one job.
pub const MAX_GPUS_PER_JOB: u32 = 1_000_000;

crate::kinds! {
    /// A trace format that this module reads.
    pub enum TraceFormat as "trace format" {
        /// Tiresias / ASTRAEA CSV: `job_id,num_gpu,submit_time,iterations,model_name,duration,interval`
        /// plus an optional tenant column (`tenant`, `user` or `vc`); times in seconds.
        Tiresias = "tiresias", "Tiresias / ASTRAEA CSV";
        /// The Chronus artifact's CSV (Gao et al., SoCC'21; S-Lab-System-Group/ChronusArtifact
        /// `code/data/exp/`): the Tiresias columns plus `expect_time_list`, `expect_value_list`,
        /// `best_effort`, `job_type`; times in minutes.
        Chronus = "chronus", "Chronus artifact CSV (minutes, deadlines)";
        /// Helios (SC'21) `cluster_log.csv`: `job_id,user,vc,gpu_num,cpu_num,node_num,state,
        /// submit_time,start_time,end_time,duration,queue`; submit as seconds or `YYYY-MM-DD HH:MM:SS`.
        Helios = "helios", "Helios cluster_log.csv";
        /// Microsoft Philly (ATC'19) `cluster_job_log`: a JSON array of jobs with attempts.
        Philly = "philly", "Philly cluster_job_log (JSON)";
        /// Alibaba GPU cluster trace v2023 (ATC'23) `openb_pod_list_*.csv`.
        AlibabaOpenb = "alibaba-openb", "Alibaba v2023 openb_pod_list CSV";
        /// DIR-LAB per-user job traces (JSSPP'24): `u_id,user,gpu_num,cpu_num,node_num,interval,
        /// run_time,wall_time,new_status`, `interval` = seconds since the previous row's submission.
        Dirlab = "dirlab", "DIR-LAB per-user job trace CSV";
    }
}

/// Guesses a text's format from its first bytes (JSON → Philly) or its CSV header.
///
/// Header rules, checked in this order: `u_id` + `interval` + `run_time` → DIR-LAB; `name` +
/// `gpu_milli` + `creation_time` → Alibaba openb; `job_id` + `vc` + `gpu_num` + `submit_time` →
/// Helios; `job_id` + `num_gpu` + `submit_time` + `duration` → Chronus with `expect_time_list`, else
/// Tiresias. `None` otherwise.
#[must_use]
pub fn detect(text: &str) -> Option<TraceFormat> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') || trimmed.starts_with('{') {
        return Some(TraceFormat::Philly);
    }
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let line = if line.len() > 4096 { return None } else { line };
    let names: Vec<String> = split_csv(line.trim_end_matches('\r'))
        .into_iter()
        .map(|f| f.trim().to_ascii_lowercase())
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    if has("u_id") && has("interval") && has("run_time") {
        Some(TraceFormat::Dirlab)
    } else if has("name") && has("gpu_milli") && has("creation_time") {
        Some(TraceFormat::AlibabaOpenb)
    } else if has("job_id") && has("vc") && has("gpu_num") && has("submit_time") {
        Some(TraceFormat::Helios)
    } else if has("job_id") && has("num_gpu") && has("submit_time") && has("duration") {
        if has("expect_time_list") {
            Some(TraceFormat::Chronus)
        } else {
            Some(TraceFormat::Tiresias)
        }
    } else {
        None
    }
}

/// Parses `text` in `format`; see the module documentation for the shared rules and each
/// format's module for its columns and choices.
///
/// # Errors
/// The first bad row (row and column named), unless `options.skip_bad_rows`; a missing header
/// column, too many rows or (Philly) invalid JSON always.
pub fn parse(format: TraceFormat, text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    match format {
        TraceFormat::Tiresias => tiresias::parse(text, options),
        TraceFormat::Chronus => tiresias::parse_chronus(text, options),
        TraceFormat::Helios => helios::parse(text, options),
        TraceFormat::Philly => philly::parse(text, options),
        TraceFormat::AlibabaOpenb => alibaba::parse(text, options),
        TraceFormat::Dirlab => dirlab::parse(text, options),
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers of the job readers (crate-private); the CSV reader itself is `crate::csv`.

/// The job columns of the fairness lab's traces.
impl<'a> Csv<'a> {
    /// Column `index` as a tenant name (non-empty).
    pub(crate) fn tenant(&self, row: &Row<'a>, index: usize) -> Result<&'a str, TraceError> {
        let f = self.text(row, index)?;
        if f.is_empty() {
            Err(TraceError::new(row.line, self.name(index), "empty"))
        } else {
            Ok(f)
        }
    }

    /// Column `index` as a GPU count (≤ [`MAX_GPUS_PER_JOB`]).
    pub(crate) fn gpus(&self, row: &Row<'a>, index: usize) -> Result<u32, TraceError> {
        let v = self.uint(row, index)?;
        check_gpus(v).map_err(|m| TraceError::new(row.line, self.name(index), m))
    }
}

/// Checks a GPU count.
pub(crate) fn check_gpus(v: u64) -> Result<u32, String> {
    if v > u64::from(MAX_GPUS_PER_JOB) {
        Err(format!("at most {MAX_GPUS_PER_JOB} GPUs per job, got {v}"))
    } else {
        Ok(v as u32)
    }
}

/// Seconds → ns, rounded once.
pub(crate) fn ns_from_s(seconds: f64) -> u64 {
    nanos_from_f64(seconds * 1e9).0
}

/// Parses `YYYY-MM-DD HH:MM:SS` (or with `T`; optional fractional seconds) into seconds since
/// 1970-01-01 00:00:00 as if UTC (only differences are used).
pub(crate) fn parse_datetime_s(f: &str) -> Option<f64> {
    let b = f.as_bytes();
    if b.len() < 19 || b.len() > 32 {
        return None;
    }
    let num = |r: core::ops::Range<usize>| -> Option<i64> {
        let s = f.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b' ' || b[10] == b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let frac = match f.get(19..) {
        Some("") | None => 0.0,
        Some(rest) => {
            let digits = rest.strip_prefix('.')?;
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            format!("0.{digits}").parse::<f64>().ok()?
        }
    };
    // Days from civil (Howard Hinnant's algorithm), proleptic Gregorian.
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + s) as f64 + frac)
}

/// Collects jobs and tenants while a reader goes, and finishes the trace.
pub(crate) struct Builder {
    skip_bad_rows: bool,
    tenant_index: BTreeMap<String, u32>,
    tenants: Vec<String>,
    ids: BTreeMap<u64, usize>,
    /// Jobs with absolute submit times in ns (shifted in [`Builder::finish`]).
    jobs: Vec<Job>,
    skipped_rows: usize,
    /// Keep the trace's clock ([`Builder::finish`] shifts nothing).
    pub(crate) keep_clock: bool,
}

impl Builder {
    /// A new builder.
    pub(crate) fn new(options: &ReadOptions) -> Builder {
        Builder {
            skip_bad_rows: options.skip_bad_rows,
            tenant_index: BTreeMap::new(),
            tenants: Vec::new(),
            ids: BTreeMap::new(),
            jobs: Vec::new(),
            skipped_rows: 0,
            keep_clock: false,
        }
    }

    /// Handles a row's outcome: `Ok` is kept, `Err` fails or is skipped with a count.
    pub(crate) fn row(&mut self, outcome: Result<(), TraceError>) -> Result<(), TraceError> {
        match outcome {
            Ok(()) => Ok(()),
            Err(e) if self.skip_bad_rows => {
                let _ = e;
                self.skipped_rows += 1;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Counts a row that is always skipped (0 GPUs, never ran).
    pub(crate) fn skip(&mut self) {
        self.skipped_rows += 1;
    }

    /// Checks that `id` is new (before [`Builder::push`]); `row` names where it is.
    pub(crate) fn check_id(&self, id: u64, row: usize, column: &str) -> Result<(), TraceError> {
        match self.ids.get(&id) {
            Some(first) => Err(TraceError::new(
                row,
                column,
                format!("duplicate job id {id} (first on row {first})"),
            )),
            None => Ok(()),
        }
    }

    /// Keeps a job: tenant by name (indexed in order of first appearance).
    pub(crate) fn push(
        &mut self,
        row: usize,
        id: u64,
        tenant: &str,
        gpus: u32,
        submit_ns: u64,
        duration_ns: u64,
    ) {
        let tenant = if let Some(&t) = self.tenant_index.get(tenant) {
            t
        } else {
            let t = self.tenants.len() as u32;
            self.tenant_index.insert(tenant.to_string(), t);
            self.tenants.push(tenant.to_string());
            t
        };
        self.ids.insert(id, row);
        self.jobs.push(Job {
            id,
            tenant,
            gpus,
            submit_ns,
            duration_ns,
            speed_by_gpu_type: Vec::new(),
            deadline_ns: None,
            later_deadlines: Vec::new(),
            service: false,
        });
    }

    /// Gives the job kept last a deadline `after_ns` after its submission.
    pub(crate) fn set_deadline_after(&mut self, after_ns: u64) {
        if let Some(j) = self.jobs.last_mut() {
            j.deadline_ns = Some(j.submit_ns.saturating_add(after_ns));
        }
    }

    /// Gives the job kept last its later deadlines: (ns after its submission, value).
    pub(crate) fn set_later_deadlines_after(&mut self, later: impl Iterator<Item = (u64, f64)>) {
        if let Some(j) = self.jobs.last_mut() {
            let submit_ns = j.submit_ns;
            j.later_deadlines = later
                .map(|(after_ns, value)| LaterDeadline {
                    at_ns: submit_ns.saturating_add(after_ns),
                    value,
                })
                .collect();
        }
    }

    /// Shifts submissions so the earliest is 0 (unless [`Builder::keep_clock`]), sorts by
    /// (submit, id) and returns the trace.
    pub(crate) fn finish(mut self, source: &str) -> Trace {
        let origin = if self.keep_clock {
            0
        } else {
            self.jobs.iter().map(|j| j.submit_ns).min().unwrap_or(0)
        };
        for j in &mut self.jobs {
            j.submit_ns -= origin;
            if let Some(d) = &mut j.deadline_ns {
                *d -= origin;
            }
            for d in &mut j.later_deadlines {
                d.at_ns -= origin;
            }
        }
        self.jobs.sort_by_key(|j| (j.submit_ns, j.id));
        Trace {
            jobs: self.jobs,
            tenants: self.tenants,
            skipped_rows: self.skipped_rows,
            source: source.to_string(),
        }
    }
}
