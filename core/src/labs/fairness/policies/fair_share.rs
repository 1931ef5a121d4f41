//! Instantaneous weighted max-min fair share of GPUs across tenants: progressive filling in
//! gang units (DRF with one resource, Ghodsi et al., NSDI'11), re-evaluated at every event, so
//! it preempts whenever the instantaneous shares move. Within a tenant: running jobs first
//! (no churn), then submission order.

use super::{interleave_skipping, takeable, Emit, Key, Policy, Preemption, RunningThenFifo};
use crate::labs::fairness::sim::RoundCtx;

/// Weighted max-min fair share of GPUs, instantaneous.
#[derive(Clone, Debug, Default)]
pub struct FairShare {
    order: RunningThenFifo,
}

/// Max-min order: a tenant's key is GPUs given so far / weight.
pub(super) fn max_min_order(
    order: &mut RunningThenFifo,
    ctx: &RoundCtx<'_>,
    gpu_units: impl Fn(usize) -> f64,
    emit: &mut Emit<'_>,
) {
    let queues = order.queues(ctx);
    let keys = ctx.tenants.iter().map(|_| Key(0, 0.0)).collect();
    interleave_skipping(
        queues,
        keys,
        |t, j, k| Key(0, k.1 + gpu_units(j) / ctx.tenants[t].weight),
        |j| !takeable(ctx, j),
        emit,
    );
}

impl Policy for FairShare {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        max_min_order(&mut self.order, ctx, |j| f64::from(ctx.jobs[j].gpus), emit);
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}
