//! The ASTRAEA artifact's Themis baseline: its machinery with a tenant's jobs by the artifact's
//! finish-time fairness, largest first (`--job_selection themis`).

use super::{JobSelection, Needs, PolicySpec, Runs};

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it runs.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Machinery {
        selection: JobSelection::Themis,
        static_quota: false,
        leases: true,
    },
};
