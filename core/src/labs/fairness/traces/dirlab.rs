//! DIR-LAB per-user job traces (Soundar Raj et al., JSSPP 2024; github.com/DIR-LAB/
//! Gen-Parallel-Workloads): the Philly, Helios and Blue Waters derivatives in `../shared/data`.
//!
//! Header `u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status` (CRLF line
//! ends are fine; columns are found by name). Mapping:
//! - `id` = `u_id`; tenant = `user` (the name as written, e.g. `12`);
//! - `gpus` = `gpu_num`;
//! - submission = the running sum of `interval` (seconds since the previous ROW's submission),
//!   in ns, each interval rounded once; the first row's interval is the origin. Rows that are
//!   skipped still advance the clock (their interval is added when it parses), so kept jobs keep
//!   their real submission times;
//! - duration = `run_time` seconds. `cpu_num`, `node_num`, `wall_time` (0 or a requested limit)
//!   and `new_status` are not used.
//!
//! Jobs with `gpu_num` 0 (CPU-only: most of Blue Waters, 26 % of Helios) are meaningless on a GPU
//! cluster: they are **always** skipped and counted in [`Trace::skipped_rows`], whatever
//! [`ReadOptions::skip_bad_rows`] says.

use super::{ns_from_s, Builder, Csv, ReadOptions, TraceError};
use crate::labs::fairness::job::Trace;

/// Parses a DIR-LAB per-user trace; see the module documentation.
///
/// # Errors
/// A missing header column; the first bad row unless `options.skip_bad_rows`.
pub fn parse(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    let mut csv = Csv::new(text, options)?;
    let c_id = csv.require("u_id")?;
    let c_user = csv.require("user")?;
    let c_gpus = csv.require("gpu_num")?;
    let c_interval = csv.require("interval")?;
    let c_run = csv.require("run_time")?;
    let mut b = Builder::new(options);
    let mut clock_ns: u64 = 0;
    while let Some(row) = csv.next_row() {
        let row = row?;
        let outcome = (|| {
            csv.check_width(&row)?;
            let interval_s = csv.seconds(&row, c_interval)?;
            clock_ns = clock_ns.saturating_add(ns_from_s(interval_s));
            let id = csv.uint(&row, c_id)?;
            let user = csv.tenant(&row, c_user)?;
            let gpus = csv.gpus(&row, c_gpus)?;
            let run_s = csv.seconds(&row, c_run)?;
            b.check_id(id, row.line, csv.name(c_id))?;
            if gpus == 0 {
                b.skip();
            } else {
                b.push(row.line, id, user, gpus, clock_ns, ns_from_s(run_s));
            }
            Ok(())
        })();
        b.row(outcome)?;
    }
    Ok(b.finish("dirlab"))
}
