//! Largest ρ first: at each lease boundary the jobs with the largest finish-time fairness
//! ρ = T_shared / T_id are served first, ρ as Themis defines it (Mahajan et al., NSDI'20, §3:
//! the finish time a job expects in the shared cluster over the one it would have in an
//! isolated 1/N share of it). Every job is a Themis "app"; T_shared = (now − submit) +
//! remaining run time (+ pending resume cost); T_id = duration × max(1, gⱼ·N/G), N = active
//! jobs.
//!
//! A rule of our own, not Themis' mechanism: Themis offers the GPUs of each lease end only to
//! the 1 − f fraction of apps with the worst ρ (its fairness knob f), lets them bid their ρ
//! improvements and runs a partial-allocation auction that maximises the product of those
//! improvements, withholding a hidden-payment share that goes to the other apps as leftovers
//! (§4–5).

use alloc::boxed::Box;
use super::{Emit, KeptOrder, Key, Needs, Policy, PolicySpec, Preemption, Runs, emit_by_key, takeable};
use crate::labs::fairness::sim::RoundCtx;

/// Largest ρ first at lease boundaries.
#[derive(Clone, Debug)]
pub struct LargestRho {
    /// Lease length, ns.
    pub lease_ns: u64,
    order: KeptOrder,
}

impl LargestRho {
    /// A fresh instance with leases of `lease_ns`.
    #[must_use]
    pub fn new(lease_ns: u64) -> Self {
        LargestRho {
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

impl Policy for LargestRho {
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

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Policy(|p, _, _| {
        Box::new(LargestRho::new(crate::labs::fairness::params::s_to_ns(p.lease_s)))
    }),
};
