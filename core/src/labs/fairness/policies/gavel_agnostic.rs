//! Gavel's heterogeneity-agnostic max-min fairness (`max_min_fairness` without throughputs):
//! the same LP and rounds as [`super::gavel`] with every throughput taken as 1, the baseline
//! Gavel's paper compares against.

use alloc::boxed::Box;

use super::gavel::Gavel;
use super::{Needs, PolicySpec, Runs};

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 1),
    fair: true,
    needs: Needs::GpuTypes,
    runs: Runs::Policy(|p, _, jobs| {
        Box::new(Gavel::new(p.gavel.round_s, jobs, p.cluster.type_count(), false))
    }),
};
