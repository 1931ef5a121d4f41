//! Microsoft Philly (Jeon et al., ATC'19; github.com/msr-fiddle/philly-traces)
//! `cluster_job_log`: a JSON array of jobs,
//!
//! ```text
//! [{"status": "Pass", "vc": "ee9e8c", "jobid": "application_1506638472019_10238",
//!   "submitted_time": "2017-10-05 16:07:22", "user": "a4c4d5",
//!   "attempts": [{"start_time": "2017-10-05 16:07:26", "end_time": "2017-10-05 16:23:21",
//!                 "detail": [{"ip": "m6", "gpus": ["gpu0", "gpu1"]}]}]}, …]
//! ```
//!
//! Mapping:
//! - `id` = the 0-based index of the job in the array (Philly job ids are strings);
//!   [`TraceError::row`] is that index + 1;
//! - tenant = `vc` (the virtual cluster: Philly's unit of quota, and the tenant of ASTRAEA's
//!   Philly experiments; the `user` field is not used);
//! - submission = `submitted_time`, a date `YYYY-MM-DD HH:MM:SS` (or a number of seconds), shifted
//!   so that the first job submits at 0;
//! - duration = Σ over attempts of `end_time` − `start_time`, counting attempts that have both
//!   (a missing, `null` or `"None"` time means the attempt did not start or did not end in the log);
//! - `gpus` = the largest number of GPUs any attempt held (Σ of the lengths of its `detail[].gpus`
//!   lists); `status` is not used.
//!
//! Always skipped and counted (see the parent module): jobs with no attempt that has both times,
//! or with no GPU in any attempt — they never ran on the cluster.

use alloc::format;
use alloc::string::ToString;
use core::fmt;

use serde::de::{self, Deserializer as _, SeqAccess, Visitor};
use serde_json::Value;

use super::{
    check_gpus, check_seconds, ns_from_s, parse_datetime_s, parse_seconds, Builder, ReadOptions,
    TraceError, MAX_FIELD_CHARS,
};
use crate::labs::fairness::job::Trace;

/// Parses a Philly `cluster_job_log` JSON array; see the module documentation.
///
/// # Errors
/// Invalid JSON or a top level that is not an array (row 0, column `(json)`); more jobs than
/// `options.max_rows`; the first bad job unless `options.skip_bad_rows`.
pub fn parse(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut b = Builder::new(options);
    let mut failure: Option<TraceError> = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let visitor = Jobs {
        builder: &mut b,
        failure: &mut failure,
        max_rows: options.max_rows,
    };
    let result = de.deserialize_seq(visitor).and_then(|()| de.end());
    if let Some(e) = failure {
        return Err(e);
    }
    result.map_err(|e| TraceError::new(0, "(json)", e.to_string()))?;
    Ok(b.finish("philly"))
}

/// Visits the top-level array, one job at a time.
struct Jobs<'b> {
    builder: &'b mut Builder,
    failure: &'b mut Option<TraceError>,
    max_rows: usize,
}

impl<'de> Visitor<'de> for Jobs<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of Philly jobs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index: usize = 0;
        while let Some(value) = seq.next_element::<Value>()? {
            index += 1;
            if index > self.max_rows {
                *self.failure = Some(TraceError::new(
                    index,
                    "(row)",
                    format!("more than {} jobs (ReadOptions::max_rows)", self.max_rows),
                ));
                return Err(de::Error::custom("too many jobs"));
            }
            let outcome = job(self.builder, index, &value);
            if let Err(e) = self.builder.row(outcome) {
                *self.failure = Some(e);
                return Err(de::Error::custom("bad job"));
            }
        }
        Ok(())
    }
}

/// A time value: a date string or a number of seconds; `None` for null / `"None"` / absent.
fn time_s(value: Option<&Value>, row: usize, column: &str) -> Result<Option<f64>, TraceError> {
    let bad = |raw: &str| {
        TraceError::new(
            row,
            column,
            format!("expected a date `YYYY-MM-DD HH:MM:SS` or seconds, got `{raw}`"),
        )
    };
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "None" || s.is_empty() => Ok(None),
        Some(Value::String(s)) => {
            if s.len() > MAX_FIELD_CHARS {
                return Err(TraceError::new(
                    row,
                    column,
                    format!("longer than {MAX_FIELD_CHARS} characters"),
                ));
            }
            let v = match parse_datetime_s(s) {
                Some(v) => check_seconds(v, s),
                None => parse_seconds(s),
            };
            v.map(Some).map_err(|_| bad(s))
        }
        Some(Value::Number(n)) => {
            let raw = n.to_string();
            let v = n.as_f64().ok_or_else(|| bad(&raw))?;
            check_seconds(v, &raw)
                .map(Some)
                .map_err(|m| TraceError::new(row, column, m))
        }
        Some(other) => Err(bad(&short(other))),
    }
}

/// A value's JSON text, cut to 40 characters for messages.
fn short(v: &Value) -> alloc::string::String {
    let mut s = v.to_string();
    if s.len() > 40 {
        let mut cut = 40;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// Reads one job (`row` = 1-based index in the array) into the builder.
fn job(b: &mut Builder, row: usize, value: &Value) -> Result<(), TraceError> {
    let Value::Object(obj) = value else {
        return Err(TraceError::new(row, "(row)", "expected a JSON object"));
    };
    let vc = match obj.get("vc") {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_FIELD_CHARS => s.as_str(),
        Some(Value::String(s)) if s.is_empty() => return Err(TraceError::new(row, "vc", "empty")),
        Some(Value::String(_)) => {
            return Err(TraceError::new(
                row,
                "vc",
                format!("longer than {MAX_FIELD_CHARS} characters"),
            ));
        }
        None | Some(Value::Null) => return Err(TraceError::new(row, "vc", "missing")),
        Some(other) => {
            return Err(TraceError::new(
                row,
                "vc",
                format!("expected a string, got {}", short(other)),
            ));
        }
    };
    let submit_s = time_s(obj.get("submitted_time"), row, "submitted_time")?
        .ok_or_else(|| TraceError::new(row, "submitted_time", "missing"))?;
    let attempts = match obj.get("attempts") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(other) => {
            return Err(TraceError::new(
                row,
                "attempts",
                format!("expected an array, got {}", short(other)),
            ));
        }
    };
    let mut duration_s = 0.0;
    let mut ran = false;
    let mut gpus: u64 = 0;
    for (i, attempt) in attempts.iter().enumerate() {
        let Value::Object(a) = attempt else {
            return Err(TraceError::new(
                row,
                &format!("attempts[{i}]"),
                "expected a JSON object",
            ));
        };
        let start = time_s(
            a.get("start_time"),
            row,
            &format!("attempts[{i}].start_time"),
        )?;
        let end = time_s(a.get("end_time"), row, &format!("attempts[{i}].end_time"))?;
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                return Err(TraceError::new(
                    row,
                    &format!("attempts[{i}].end_time"),
                    "before start_time",
                ));
            }
            duration_s += end - start;
            ran = true;
        }
        let mut held: u64 = 0;
        match a.get("detail") {
            None | Some(Value::Null) => {}
            Some(Value::Array(details)) => {
                for (k, d) in details.iter().enumerate() {
                    match d.get("gpus") {
                        None | Some(Value::Null) => {}
                        Some(Value::Array(g)) => held = held.saturating_add(g.len() as u64),
                        Some(other) => {
                            return Err(TraceError::new(
                                row,
                                &format!("attempts[{i}].detail[{k}].gpus"),
                                format!("expected an array, got {}", short(other)),
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                return Err(TraceError::new(
                    row,
                    &format!("attempts[{i}].detail"),
                    format!("expected an array, got {}", short(other)),
                ));
            }
        }
        gpus = gpus.max(held);
    }
    let gpus = check_gpus(gpus).map_err(|m| TraceError::new(row, "attempts", m))?;
    let duration_s = check_seconds(duration_s, "sum of attempts")
        .map_err(|m| TraceError::new(row, "attempts", m))?;
    if !ran || gpus == 0 {
        b.skip();
    } else {
        b.push(
            row,
            (row - 1) as u64,
            vc,
            gpus,
            ns_from_s(submit_s),
            ns_from_s(duration_s),
        );
    }
    Ok(())
}
