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
    /// A soft job's later deadlines, in order, each worth less than the one before (Chronus'
    /// soft deadlines); empty for a job with one deadline or none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later_deadlines: Vec<LaterDeadline>,
    /// True for a replica of an inference service (a whole server it needs for a while,
    /// [`super::traces::colocation`]); false for a training job.
    #[serde(default, skip_serializing_if = "is_false")]
    pub service: bool,
}

/// A deadline after a job's first, and what meeting it is worth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaterDeadline {
    /// Deadline, ns on the same clock as [`Job::submit_ns`].
    pub at_ns: u64,
    /// What finishing by it (and not by an earlier one) is worth, as a share of finishing by
    /// the first deadline: the trace's value over the first deadline's (0–1).
    pub value: f64,
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
