//! Tiresias (NSDI'19) / ASTRAEA artifact job CSV:
//! `job_id,num_gpu,submit_time,iterations,model_name,duration,interval` plus a tenant column.
//!
//! Columns are found by name (any order, case-insensitive). Mapping:
//! - `id` = `job_id` (a non-negative integer, as in Tiresias' traces);
//! - `gpus` = `num_gpu`; submission = `submit_time` seconds; duration = `duration` seconds;
//! - tenant = the first of the columns `tenant`, `user`, `vc` that the header has; without any of
//!   them the whole trace is one tenant named `default`;
//! - `iterations`, `model_name` and `interval` are not used (the duration is given).
//!
//! Jobs with `num_gpu` 0 are always skipped and counted (see the parent module).

use super::{ns_from_s, Builder, Csv, ReadOptions, TraceError};
use crate::labs::fairness::job::Trace;

/// Tenant name used when the CSV has no tenant column.
pub const DEFAULT_TENANT: &str = "default";

/// Parses a Tiresias / ASTRAEA CSV; see the module documentation.
///
/// # Errors
/// A missing header column; the first bad row unless `options.skip_bad_rows`.
pub fn parse(text: &str, options: &ReadOptions) -> Result<Trace, TraceError> {
    let mut csv = Csv::new(text, options)?;
    let c_id = csv.require("job_id")?;
    let c_gpus = csv.require("num_gpu")?;
    let c_submit = csv.require("submit_time")?;
    let c_duration = csv.require("duration")?;
    let c_tenant = csv.find(&["tenant", "user", "vc"]);
    let mut b = Builder::new(options);
    while let Some(row) = csv.next_row() {
        let row = row?;
        let outcome = (|| {
            csv.check_width(&row)?;
            let id = csv.uint(&row, c_id)?;
            let gpus = csv.gpus(&row, c_gpus)?;
            let submit_s = csv.seconds(&row, c_submit)?;
            let duration_s = csv.seconds(&row, c_duration)?;
            let tenant = match c_tenant {
                Some(c) => csv.tenant(&row, c)?,
                None => DEFAULT_TENANT,
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
            }
            Ok(())
        })();
        b.row(outcome)?;
    }
    Ok(b.finish("tiresias"))
}
