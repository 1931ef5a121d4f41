//! ASTRAEA (Ye et al., TPDS'21) as its artifact runs it: the ASTRAEA machinery (`super::super::sim::quota_lease`)
//! with a tenant's jobs by their long-term fairness F_j (`--job_selection fairness`).

use super::{JobSelection, Needs, PolicySpec, Runs};

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it runs.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Machinery {
        selection: JobSelection::Fairness,
        static_quota: false,
        leases: true,
    },
};
