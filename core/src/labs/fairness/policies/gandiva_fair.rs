//! Gandiva-fair (Chaudhary et al., EuroSys'20, §4): every tenant holds tickets (its weight);
//! a gang-aware stride scheduler time-slices the cluster in quanta. A tenant's pass grows by
//! the GPU-time it uses / its tickets; each quantum the tenants with the smallest pass are
//! served first (progressive filling, each job adding gⱼ × quantum / tickets to its tenant's
//! pass), and inside a tenant the job with the least attained GPU-time goes first (round robin
//! over its jobs). A tenant that comes back after being idle starts at the smallest pass of
//! the active tenants (stride scheduling's rejoin rule) instead of cashing in its idle time.
//! Gandiva-fair's trading of heterogeneous GPUs between tenants is not modelled.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, KeptOrder, Key, Needs, Policy, PolicySpec, Preemption, Runs, interleave_skipping, takeable};
use crate::labs::fairness::sim::RoundCtx;

/// Ticket-based split stride scheduling.
#[derive(Clone, Debug)]
pub struct GandivaFair {
    quantum_ns: u64,
    pass: Vec<f64>,
    last_used: Vec<u128>,
    was_active: Vec<bool>,
    order: KeptOrder,
    /// [`Policy::order_waiting`]'s per-tenant queues, last round's order kept so that sorting
    /// them again is about linear.
    waiting_queues: KeptOrder,
    /// [`Policy::order_waiting`]'s buffers, kept so a round allocates little.
    scratch: WaitingScratch,
}

/// The buffers of [`GandivaFair::order_waiting`] (empty between rounds).
#[derive(Clone, Debug, Default)]
struct WaitingScratch {
    /// The waiting jobs, then the running ones.
    candidates: Vec<usize>,
    /// Per tenant: its latest waiting key.
    last: Vec<Option<QueueKey>>,
    /// (filling key bits, tenant, place in its queue) of every waiting job.
    order: Vec<(u128, usize, usize)>,
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
            waiting_queues: KeptOrder::default(),
            scratch: WaitingScratch::default(),
        }
    }
}

impl GandivaFair {
    /// Charges each tenant's pass with the GPU-time it used since the last round; a tenant
    /// that comes back after being idle rejoins at the smallest pass of the active tenants.
    fn advance_passes(&mut self, ctx: &RoundCtx<'_>) {
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
    }

    /// How far tenant `u`'s pass rises with job `j` in a quantum: gⱼ × quantum / tickets.
    fn stride(&self, ctx: &RoundCtx<'_>, u: usize, j: usize) -> f64 {
        f64::from(ctx.jobs[j].gpus) * self.quantum_ns as f64 / ctx.tenants[u].weight
    }
}

/// A job's place in its tenant's queue: (attained GPU-ns, not running, submission ns).
type QueueKey = (u128, bool, u64);

/// Job `j`'s place in its tenant's queue: least attained GPU-time first, running before
/// waiting, then submission (then the job).
fn key(ctx: &RoundCtx<'_>, j: usize) -> QueueKey {
    let job = &ctx.jobs[j];
    (job.attained_gpu_ns(ctx.now_ns), !job.is_running(), job.submit_ns)
}

impl Policy for GandivaFair {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        self.advance_passes(ctx);
        let queues = self.order.by_tenant(ctx, |j| Some(key(ctx, j)));
        let keys = self.pass.iter().map(|&p| Key(0, p)).collect();
        interleave_skipping(
            queues,
            keys,
            |t, j, k| Key(0, k.1 + self.stride(ctx, t, j)),
            |j| !takeable(ctx, j),
            emit,
        );
    }

    /// The waiting jobs in the order's sequence: the filling emits a tenant's job at the
    /// tenant's pass plus the strides of the jobs ahead of it in its queue (the running ones
    /// included, added one by one in queue order as the filling adds them), and the order is
    /// all jobs by (that key, tenant). Only the tenants with waiting jobs are read, each up to
    /// its last waiting job.
    fn order_waiting(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) -> bool {
        self.advance_passes(ctx);
        let n = ctx.tenants.len();
        let WaitingScratch {
            mut candidates,
            mut last,
            mut order,
        } = core::mem::take(&mut self.scratch);
        // The latest waiting key of each tenant: running jobs after it change nothing.
        last.clear();
        last.resize(n, None);
        for &j in ctx.waiting {
            let l = &mut last[ctx.jobs[j].tenant as usize];
            *l = (*l).max(Some(key(ctx, j)));
        }
        candidates.clear();
        candidates.extend_from_slice(ctx.waiting);
        candidates.extend_from_slice(ctx.running);
        let queues = self.waiting_queues.sorted(
            &candidates,
            n,
            |j| ctx.jobs[j].tenant as usize,
            |j| {
                let job = &ctx.jobs[j];
                let l = last[job.tenant as usize]?;
                let k = key(ctx, j);
                (!job.is_running() || k < l).then_some(k)
            },
        );
        for (u, q) in queues.iter().enumerate() {
            let mut k = Key(0, self.pass[u]);
            for (seq, &(jk, j)) in q.iter().enumerate() {
                if jk.1 {
                    order.push((k.bits(), u, seq));
                }
                k = Key(0, k.1 + self.stride(ctx, u, j));
            }
        }
        order.sort_unstable();
        for &(_, u, seq) in &order {
            if !emit(queues[u][seq].1) {
                break;
            }
        }
        order.clear();
        self.scratch = WaitingScratch {
            candidates,
            last,
            order,
        };
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.quantum_ns)
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 2),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Policy(|p, tenants, _| {
        let quantum_ns = crate::labs::fairness::params::s_to_ns(p.gandiva_fair.quantum_s);
        Box::new(GandivaFair::new(quantum_ns, tenants))
    }),
};
