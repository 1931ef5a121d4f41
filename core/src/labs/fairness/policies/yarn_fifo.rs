//! The ASTRAEA artifact's YARN-like baseline: static tenant quotas, FIFO within a tenant, no
//! leases (`--job_selection fifo --user_quota static`).

use super::{JobSelection, Needs, PolicySpec, Runs};

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it runs.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: false,
    needs: Needs::Nothing,
    runs: Runs::Machinery {
        selection: JobSelection::Fifo,
        static_quota: true,
        leases: false,
    },
};
