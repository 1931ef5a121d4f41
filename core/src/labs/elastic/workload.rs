//! Reader of the Pollux artifact's workload files (`simulator/workloads*/workload-<k>.csv`):
//! `name,time,application,num_replicas,batch_size`, one job per row: its submission second,
//! its application, and the GPU count and total batch size a user tuned for it ("TunedJobs",
//! used only by the baselines; Pollux chooses both itself). Columns are found by name; errors
//! name the 1-based line and the column.

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

use super::apps::{app, app_names};
use super::params::{ElasticJob, MAX_JOBS, MAX_SUBMIT_S};
use crate::csv::{Csv, ReadOptions, TraceError};

/// Reads a workload file.
///
/// # Errors
/// A missing column, an unknown application, a GPU count or batch size of 0, a batch size
/// outside the application's range, a submission time above [`MAX_SUBMIT_S`], no rows or more
/// than [`MAX_JOBS`].
pub fn parse_workload(text: &str) -> Result<Vec<ElasticJob>, TraceError> {
    let options = ReadOptions {
        skip_bad_rows: false,
        max_rows: MAX_JOBS,
    };
    let mut csv = Csv::new(text, &options)?;
    let c_name = csv.require("name")?;
    let c_time = csv.require("time")?;
    let c_app = csv.require("application")?;
    let c_rep = csv.require("num_replicas")?;
    let c_bs = csv.require("batch_size")?;
    let mut jobs = Vec::new();
    while let Some(row) = csv.next_row() {
        let row = row?;
        csv.check_width(&row)?;
        let name = csv.tenant(&row, c_name)?;
        let submit_s = csv.uint(&row, c_time)?;
        let app_name = csv.text(&row, c_app)?;
        let replicas = csv.uint(&row, c_rep)?;
        let batch_size = csv.uint(&row, c_bs)?;
        let job = ElasticJob {
            name: name.to_string(),
            submit_s,
            app: app_name.to_string(),
            replicas: u32::try_from(replicas).unwrap_or(u32::MAX),
            batch_size: u32::try_from(batch_size).unwrap_or(u32::MAX),
        };
        if let Err((field, msg)) = job.check() {
            let column = match field {
                "submit_s" => csv.name(c_time),
                "app" => csv.name(c_app),
                "replicas" => csv.name(c_rep),
                _ => csv.name(c_bs),
            };
            return Err(TraceError::new(row.line, column, msg));
        }
        jobs.push(job);
    }
    if jobs.is_empty() {
        return Err(TraceError::new(1, "(row)", "no job rows"));
    }
    Ok(jobs)
}

impl ElasticJob {
    /// Checks one job; the field at fault and what was expected.
    ///
    /// # Errors
    /// See [`parse_workload`].
    pub fn check(&self) -> Result<(), (&'static str, alloc::string::String)> {
        let Some(a) = app(&self.app) else {
            return Err((
                "app",
                format!(
                    "unknown application '{}': expected one of {}",
                    self.app,
                    app_names().join(", ")
                ),
            ));
        };
        if self.submit_s > MAX_SUBMIT_S {
            return Err((
                "submit_s",
                format!(
                    "expected a submission second ≤ {MAX_SUBMIT_S}, got {}",
                    self.submit_s
                ),
            ));
        }
        if self.replicas == 0 || self.replicas > super::params::MAX_GPUS {
            return Err((
                "replicas",
                format!(
                    "expected 1 to {} GPUs, got {}",
                    super::params::MAX_GPUS,
                    self.replicas
                ),
            ));
        }
        if self.batch_size < a.init_batch_size || self.batch_size > a.max_batch_size {
            return Err((
                "batch_size",
                format!(
                    "expected a total batch size of {} from {} to {}, got {}",
                    a.name, a.init_batch_size, a.max_batch_size, self.batch_size
                ),
            ));
        }
        Ok(())
    }
}
