//! Helios (Hu et al., SC'21; github.com/S-Lab-System-Group/HeliosData) `cluster_log.csv`:
//! `job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue`.
//!
//! Columns are found by name. Mapping:
//! - `id` = the 0-based index of the data row in the file (Helios job ids are hashes, not
//!   numbers), counting skipped rows too, so ids stay stable when rows are skipped;
//! - tenant = `user` (the issue asks for per-tenant fairness and the DIR-LAB Helios derivative
//!   uses users too; Helios' `vc` column is the virtual cluster a user's quota belongs to — a
//!   coarser tenant that this reader does not use);
//! - `gpus` = `gpu_num`;
//! - submission = `submit_time`: seconds, or a date `YYYY-MM-DD HH:MM:SS` (as in the released
//!   logs) read as seconds since 1970 (time zone irrelevant: the trace is shifted so that its
//!   first job submits at 0);
//! - duration = `duration` seconds; when that cell is empty, `end_time` − `start_time` (both in
//!   the same form as `submit_time`).
//! - `state`, `cpu_num`, `node_num`, `queue` are not used; every state is kept (a cancelled or
//!   failed job still held its GPUs for its duration).
//!
//! Jobs with `gpu_num` 0 (CPU jobs) are always skipped and counted (see the parent module).

use alloc::format;

use super::{
    check_seconds, ns_from_s, parse_datetime_s, parse_seconds, Builder, Csv, ReadOptions, Row,
    TraceError,
};
use crate::labs::fairness::job::Trace;

/// A time cell: seconds, or a `YYYY-MM-DD HH:MM:SS` date as seconds since 1970.
fn time_s<'a>(csv: &Csv<'a>, row: &Row<'a>, index: usize) -> Result<f64, TraceError> {
    let f = csv.text(row, index)?;
    if let Some(s) = parse_datetime_s(f) {
        return check_seconds(s, f).map_err(|m| TraceError::new(row.line, csv.name(index), m));
    }
    parse_seconds(f).map_err(|_| {
        TraceError::new(
            row.line,
            csv.name(index),
            format!("expected seconds or a date `YYYY-MM-DD HH:MM:SS`, got `{f}`"),
        )
    })
}

/// Parses a Helios `cluster_log.csv`; see the module documentation.
///
/// # Errors
/// A missing header column; the first bad row unless `options.skip_bad_rows`.
pub fn parse(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    let mut csv = Csv::new(text, options)?;
    let c_user = csv.require("user")?;
    let c_gpus = csv.require("gpu_num")?;
    let c_submit = csv.require("submit_time")?;
    let c_duration = csv.require("duration")?;
    let c_start = csv.find(&["start_time"]);
    let c_end = csv.find(&["end_time"]);
    let mut b = Builder::new(options);
    let mut index: u64 = 0;
    while let Some(row) = csv.next_row() {
        let row = row?;
        let id = index;
        index += 1;
        let outcome = (|| {
            csv.check_width(&row)?;
            let user = csv.tenant(&row, c_user)?;
            let gpus = csv.gpus(&row, c_gpus)?;
            let submit_s = time_s(&csv, &row, c_submit)?;
            let duration_s = if csv.text(&row, c_duration)?.is_empty() {
                match (c_start, c_end) {
                    (Some(s), Some(e)) => {
                        let (start, end) = (time_s(&csv, &row, s)?, time_s(&csv, &row, e)?);
                        if end < start {
                            return Err(TraceError::new(
                                row.line,
                                csv.name(e),
                                "before start_time",
                            ));
                        }
                        end - start
                    }
                    _ => return Err(TraceError::new(row.line, csv.name(c_duration), "empty")),
                }
            } else {
                csv.seconds(&row, c_duration)?
            };
            if gpus == 0 {
                b.skip();
            } else {
                b.push(
                    row.line,
                    id,
                    user,
                    gpus,
                    ns_from_s(submit_s),
                    ns_from_s(duration_s),
                );
            }
            Ok(())
        })();
        b.row(outcome)?;
    }
    Ok(b.finish("helios"))
}
