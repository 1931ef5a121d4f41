//! Tiresias (NSDI'19) / ASTRAEA artifact job CSV:
//! `job_id,num_gpu,submit_time,iterations,model_name,duration,interval` plus a tenant column,
//! and the Chronus artifact's CSV, which is the same with deadlines added.
//!
//! Columns are found by name (any order, case-insensitive). Mapping:
//! - `id` = `job_id` (a non-negative integer, as in Tiresias' traces);
//! - `gpus` = `num_gpu`; submission = `submit_time`; duration = `duration`;
//! - tenant = the first of the columns `tenant`, `user`, `vc` that the header has; without any of
//!   them the whole trace is one tenant named `default`;
//! - `iterations`, `model_name` and `interval` are not used (the duration is given).
//!
//! **Deadlines** (SLO jobs; [`crate::labs::fairness::job::Job::deadline_ns`]):
//! - Tiresias / ASTRAEA CSV: an optional `deadline` column, seconds after the job's submission;
//!   an empty field is a best-effort job.
//! - Chronus artifact CSV ([`parse_chronus`]; `code/data/exp/trace_job_Philly_*.csv` of
//!   S-Lab-System-Group/ChronusArtifact): `expect_time_list` holds the job's deadlines after
//!   submission separated by `-` (one for a `strict` job, several with falling values in
//!   `expect_value_list` for a `soft` one) and `best_effort` = 1 marks a best-effort job. The
//!   first deadline is [`Job::deadline_ns`](crate::labs::fairness::job::Job::deadline_ns), the
//!   later ones with their values over the first's are
//!   [`Job::later_deadlines`](crate::labs::fairness::job::Job::later_deadlines); a soft job
//!   counts as an SLO job that missed when it finishes after its first deadline (the
//!   artifact's `gt_miss_ddl`). All times are in **minutes**, the artifact's time unit (its
//!   simulator ticks once per minute), on the artifact's clock: submissions are not shifted to
//!   start at 0.
//!
//! Times are seconds otherwise. Jobs with `num_gpu` 0 are always skipped and counted (see the
//! parent module).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{check_seconds, ns_from_s, parse_seconds, Builder, Csv, ReadOptions, Row, TraceError};
use crate::labs::fairness::job::Trace;

/// Tenant name used when the CSV has no tenant column.
pub const DEFAULT_TENANT: &str = "default";

/// Parses a Tiresias / ASTRAEA CSV; see the module documentation.
///
/// # Errors
/// A missing header column; the first bad row unless `options.skip_bad_rows`.
pub fn parse(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    parse_in(text, options, 1.0, "tiresias")
}

/// Parses the Chronus artifact's CSV (times in minutes, `expect_time_list` deadlines); see the
/// module documentation.
///
/// # Errors
/// A missing header column (`expect_time_list` included); the first bad row unless
/// `options.skip_bad_rows`.
pub fn parse_chronus(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    parse_in(text, options, 60.0, "chronus")
}

/// Reads a row's deadlines (`a` or `a-b-c`, in the trace's time unit) and, when there are
/// several, their values (`expect_value_list`, same count): (deadline, value over the first
/// deadline's value) in order; the first's value is 1.
fn deadlines<'a>(
    csv: &Csv<'a>,
    row: &Row<'a>,
    c_time: usize,
    c_value: Option<usize>,
) -> Result<Vec<(f64, f64)>, TraceError> {
    let field = csv.text(row, c_time)?;
    let err = |c: usize, m: String| TraceError::new(row.line, csv.name(c), m);
    let mut times = Vec::new();
    for (i, t) in field.split('-').enumerate() {
        let v = parse_seconds(t.trim())
            .map_err(|m| err(c_time, format!("deadline {} of `{field}`: {m}", i + 1)))?;
        if times.last().is_some_and(|&last| v <= last) {
            return Err(err(
                c_time,
                format!("deadline {} of `{field}` is not after the one before", i + 1),
            ));
        }
        times.push(v);
    }
    if times.len() == 1 {
        return Ok(alloc::vec![(times[0], 1.0)]);
    }
    let Some(c_value) = c_value else {
        return Err(err(
            c_time,
            format!("`{field}` lists several deadlines but the header has no `expect_value_list`"),
        ));
    };
    let raw = csv.text(row, c_value)?;
    let values = raw
        .split('-')
        .map(|v| parse_seconds(v.trim()).map_err(|_| format!("`{}` is not a number", v.trim())))
        .collect::<Result<Vec<f64>, String>>()
        .map_err(|m| err(c_value, format!("`{raw}`: {m}")))?;
    if values.len() != times.len() {
        return Err(err(
            c_value,
            format!("{} values for the {} deadlines `{field}`", values.len(), times.len()),
        ));
    }
    if values[0] <= 0.0 || values.windows(2).any(|w| w[1] > w[0]) {
        return Err(err(
            c_value,
            format!("`{raw}`: expected values falling from a positive first"),
        ));
    }
    Ok(times.into_iter().zip(values.iter().map(|v| v / values[0])).collect())
}

fn parse_in(
    text: &str,
    options: &ReadOptions,
    unit_s: f64,
    source: &str,
) -> Result<Trace, TraceError> {
    let mut csv = Csv::new(text, options)?;
    let chronus = source == "chronus";
    let c_id = csv.require("job_id")?;
    let c_gpus = csv.require("num_gpu")?;
    let c_submit = csv.require("submit_time")?;
    let c_duration = csv.require("duration")?;
    let c_tenant = csv.find(&["tenant", "user", "vc"]);
    let c_deadline = if chronus {
        Some(csv.require("expect_time_list")?)
    } else {
        csv.find(&["deadline"])
    };
    let c_value = csv.find(&["expect_value_list"]);
    let c_best_effort = if chronus {
        csv.find(&["best_effort"])
    } else {
        None
    };
    let mut b = Builder::new(options);
    // The Chronus artifact's clock starts at 0, not at the first submission: its lease slots
    // and ticks fall on that clock's multiples.
    b.keep_clock = chronus;
    while let Some(row) = csv.next_row() {
        let row = row?;
        let outcome = (|| {
            csv.check_width(&row)?;
            let id = csv.uint(&row, c_id)?;
            let gpus = csv.gpus(&row, c_gpus)?;
            // A time in the trace's unit, in seconds, within the shared bounds.
            let in_s = |v: f64, c: usize| {
                check_seconds(v * unit_s, &format!("{v} × {unit_s} s"))
                    .map_err(|m| TraceError::new(row.line, csv.name(c), m))
            };
            let submit_s = in_s(csv.seconds(&row, c_submit)?, c_submit)?;
            let duration_s = in_s(csv.seconds(&row, c_duration)?, c_duration)?;
            let tenant = match c_tenant {
                Some(c) => csv.tenant(&row, c)?,
                None => DEFAULT_TENANT,
            };
            let best_effort = match c_best_effort {
                Some(c) => match csv.text(&row, c)?.trim() {
                    "" | "0" => false,
                    "1" => true,
                    other => {
                        return Err(TraceError::new(
                            row.line,
                            csv.name(c),
                            format!("expected 0 or 1, got `{other}`"),
                        ))
                    }
                },
                None => false,
            };
            let deadlines_s = match c_deadline {
                Some(c) if !best_effort && !csv.text(&row, c)?.trim().is_empty() => {
                    let mut out = Vec::new();
                    for (d, value) in deadlines(&csv, &row, c, c_value)? {
                        out.push((in_s(d, c)?, value));
                    }
                    out
                }
                _ => Vec::new(),
            };
            b.check_id(id, row.line, csv.name(c_id))?;
            if gpus == 0 {
                b.skip();
            } else {
                b.push(
                    row.line,
                    id,
                    tenant,
                    gpus,
                    ns_from_s(submit_s),
                    ns_from_s(duration_s),
                );
                if let Some(&(first_s, _)) = deadlines_s.first() {
                    b.set_deadline_after(ns_from_s(first_s));
                }
                let later = deadlines_s.iter().skip(1);
                b.set_later_deadlines_after(later.map(|&(d, v)| (ns_from_s(d), v)));
            }
            Ok(())
        })();
        b.row(outcome)?;
    }
    Ok(b.finish(source))
}
