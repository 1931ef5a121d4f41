//! The ASTRAEA artifact's 2DAS baseline: its quota and lease machinery with a tenant's jobs by
//! least executed time (`--job_selection 2das`).

use super::{JobSelection, Needs, PolicySpec, Runs};

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it runs.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Machinery {
        selection: JobSelection::TwoDas,
        static_quota: false,
        leases: true,
    },
};
