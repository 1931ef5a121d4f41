//! Gandiva-fair (Chaudhary et al., EuroSys'20, §4): every tenant holds tickets (its weight);
//! a gang-aware stride scheduler time-slices the cluster in quanta. A tenant's pass grows by
//! the GPU-time it uses / its tickets; each quantum the tenants with the smallest pass are
//! served first (progressive filling, each job adding gⱼ × quantum / tickets to its tenant's
//! pass), and inside a tenant the job with the least attained GPU-time goes first (round robin
//! over its jobs). A tenant that comes back after being idle starts at the smallest pass of
//! the active tenants (stride scheduling's rejoin rule) instead of cashing in its idle time.
//! Gandiva-fair's trading of heterogeneous GPUs between tenants is not modelled.

use alloc::vec;
use alloc::vec::Vec;

use super::{interleave_skipping, takeable, Emit, KeptOrder, Key, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Ticket-based split stride scheduling.
#[derive(Clone, Debug)]
pub struct GandivaFair {
    quantum_ns: u64,
    pass: Vec<f64>,
    last_used: Vec<u128>,
    was_active: Vec<bool>,
    order: KeptOrder,
}

impl GandivaFair {
    /// A fresh instance for `tenants` tenants.
    #[must_use]
    pub fn new(quantum_ns: u64, tenants: usize) -> Self {
        GandivaFair {
            quantum_ns,
            pass: vec![0.0; tenants],
            last_used: vec![0; tenants],
            was_active: vec![false; tenants],
            order: KeptOrder::default(),
        }
    }
}

impl Policy for GandivaFair {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        for (u, t) in ctx.tenants.iter().enumerate() {
            self.pass[u] += (t.used_total - self.last_used[u]) as f64 / t.weight;
            self.last_used[u] = t.used_total;
        }
        let floor = ctx
            .tenants
            .iter()
            .enumerate()
            .filter(|(u, t)| t.active_jobs > 0 && self.was_active[*u])
            .map(|(u, _)| self.pass[u])
            .fold(f64::INFINITY, f64::min);
        for (u, t) in ctx.tenants.iter().enumerate() {
            let active = t.active_jobs > 0;
            if active && !self.was_active[u] && floor.is_finite() {
                self.pass[u] = self.pass[u].max(floor);
            }
            self.was_active[u] = active;
        }
        let now = ctx.now_ns;
        let queues = self.order.by_tenant(ctx, |j| {
            let job = &ctx.jobs[j];
            Some((job.attained_gpu_ns(now), !job.is_running(), job.submit_ns))
        });
        let keys = self.pass.iter().map(|&p| Key(0, p)).collect();
        let q = self.quantum_ns as f64;
        interleave_skipping(
            queues,
            keys,
            |t, j, k| {
                Key(
                    0,
                    k.1 + f64::from(ctx.jobs[j].gpus) * q / ctx.tenants[t].weight,
                )
            },
            |j| !takeable(ctx, j),
            emit,
        );
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.quantum_ns)
    }
}
