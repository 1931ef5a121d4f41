//! Drop the affected DP replicas (an Oobleck-like shrink): every replica holding a GPU that is
//! dead or flagged slow leaves; the others take over its micro-batches in equal shares, so the
//! global batch is unchanged.

use alloc::vec::Vec;

use super::super::job::Plan;
use super::{equal_shares, Health};

/// The plan without the replicas that hold an unhealthy GPU; `None` if no replica is left.
#[must_use]
pub fn drop_replicas(current: &Plan, known: &Health) -> Option<Plan> {
    let total = current.total_micro_batches();
    let mut replicas: Vec<_> = current
        .replicas
        .iter()
        .filter(|r| {
            r.stages
                .iter()
                .all(|s| s.gpus.iter().all(|&g| known.is_healthy(g)))
        })
        .cloned()
        .collect();
    if replicas.is_empty() {
        return None;
    }
    let shares = equal_shares(replicas.len(), total);
    for (r, share) in replicas.iter_mut().zip(shares) {
        r.micro_batches = share;
    }
    replicas.retain(|r| r.micro_batches > 0);
    Some(Plan { replicas })
}
