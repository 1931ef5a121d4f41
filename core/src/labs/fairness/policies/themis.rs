//! Themis' finish-time fairness (Mahajan et al., NSDI'20, §3): ρ = T_shared / T_id, the
//! finish time a job expects in the shared cluster over the one it would have in an isolated
//! 1/N share of it; at each lease boundary the jobs with the largest ρ are served first.
//! Our mapping: every job is a Themis "app"; T_shared = (now − submit) + remaining run time
//! (+ pending resume cost); T_id = duration × max(1, gⱼ·N/G), N = active jobs. Themis'
//! partial-allocation auction is replaced by this order (the filter and the auction pick the
//! same top-ρ apps when GPUs are not divisible among bidders).

use super::{emit_by_key, takeable, Emit, KeptOrder, Key, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Finish-time fairness at lease boundaries.
#[derive(Clone, Debug)]
pub struct Themis {
    /// Lease length, ns.
    pub lease_ns: u64,
    order: KeptOrder,
}

impl Themis {
    /// A fresh instance with leases of `lease_ns`.
    #[must_use]
    pub fn new(lease_ns: u64) -> Self {
        Themis {
            lease_ns,
            order: KeptOrder::default(),
        }
    }
}

/// ρ of job `j` now.
#[must_use]
pub fn rho(ctx: &RoundCtx<'_>, j: usize) -> f64 {
    let job = &ctx.jobs[j];
    let now = ctx.now_ns;
    let shared = (now - job.submit_ns) as f64
        + job.remaining_at(now) as f64
        + job.pending_overhead_ns as f64;
    let n = ctx.active.len() as f64;
    let share = (f64::from(job.gpus) * n / ctx.total_gpus as f64).max(1.0);
    let ideal = (job.duration_ns as f64 * share).max(1.0);
    shared / ideal
}

/// Job `j`'s place in the order: largest ρ first (the key is −ρ), then submission.
fn key(ctx: &RoundCtx<'_>, j: usize) -> (Key, u64) {
    (Key(0, -rho(ctx, j)), ctx.jobs[j].submit_ns)
}

impl Policy for Themis {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        // Jobs inside their lease are kept anyway: only the others are ordered (ρ still
        // counts every active job in N).
        self.order
            .emit_by_key(ctx.active, |j| takeable(ctx, j).then(|| key(ctx, j)), emit);
    }

    fn order_waiting(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) -> bool {
        emit_by_key(ctx.waiting.iter().copied(), |j| key(ctx, j), emit);
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.lease_ns)
    }
}
