//! Jobs and traces: the input of the fairness lab, whatever format a trace came in.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// One job of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Id, unique within its trace (the trace's own id where it has one).
    pub id: u64,
    /// Index of the job's tenant in [`Trace::tenants`].
    pub tenant: u32,
    /// GPUs the job needs, all at once (gang scheduling).
    pub gpus: u32,
    /// Submission time, ns from the trace's start.
    pub submit_ns: u64,
    /// Run time on the reference GPU type when it runs without interruption, ns.
    pub duration_ns: u64,
    /// Speed on each GPU type, relative to the reference type (index = GPU type); empty means
    /// the same speed everywhere.
    pub speed_by_gpu_type: Vec<f64>,
    /// Deadline, ns on the same clock as `submit_ns` (an SLO job, Chronus' term); `None` for a
    /// best-effort job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ns: Option<u64>,
    /// True for a replica of an inference service (a whole server it needs for a while,
    /// [`super::traces::colocation`]); false for a training job.
    #[serde(default, skip_serializing_if = "is_false")]
    pub service: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// A whole trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Jobs sorted by submission time, then id.
    pub jobs: Vec<Job>,
    /// Tenant names (users, virtual clusters), indexed by [`Job::tenant`].
    pub tenants: Vec<String>,
    /// Rows skipped as unusable (only when the reader was asked to skip bad rows).
    pub skipped_rows: usize,
    /// Where the trace came from (file name or generator description).
    pub source: String,
}
