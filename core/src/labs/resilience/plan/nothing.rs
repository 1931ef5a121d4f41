//! Do nothing: keep the plan; the slow device dictates the pace of its TP group, its stage and,
//! through DP synchronisation, the whole job.

use super::super::job::Plan;

/// The plan after a fail-slow: unchanged.
#[must_use]
pub fn nothing(current: &Plan) -> Plan {
    current.clone()
}
