//! Gavel-style heterogeneity-aware max-min fairness (Narayanan et al., OSDI'20), in rounds of
//! one lease. Gavel solves max-min over *effective throughput* (a job's throughput on the types
//! it is given, normalised by its throughput on an equal share of the cluster). We keep its
//! structure without the LP: tenants are filled max-min by effective throughput units
//! gⱼ × (speed on the job's fastest type / mean speed over types), and a job is placed on its
//! fastest type with room. With one GPU type every speed is 1 and Gavel reduces to weighted
//! max-min fair share re-evaluated once per round (as the Gavel paper notes for homogeneous
//! clusters).

use alloc::vec::Vec;

use super::fair_share::max_min_order;
use super::{Emit, Policy, Preemption, RunningThenFifo};
use crate::labs::fairness::sim::RoundCtx;

/// Heterogeneity-aware max-min, per round.
#[derive(Clone, Debug)]
pub struct Gavel {
    /// Round (lease) length, ns.
    pub lease_ns: u64,
    order: RunningThenFifo,
}

impl Gavel {
    /// A fresh instance with rounds of `lease_ns`.
    #[must_use]
    pub fn new(lease_ns: u64) -> Self {
        Gavel {
            lease_ns,
            order: RunningThenFifo::default(),
        }
    }
}

fn fastest_first(ctx: &RoundCtx<'_>, j: usize) -> Vec<u32> {
    let job = &ctx.jobs[j];
    let mut types: Vec<u32> = (0..ctx.gpus_by_type.len() as u32).collect();
    types.sort_by(|&a, &b| job.speed_on(b).total_cmp(&job.speed_on(a)).then(a.cmp(&b)));
    types
}

impl Policy for Gavel {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let n = ctx.gpus_by_type.len().max(1) as f64;
        let units = |j: usize| {
            let job = &ctx.jobs[j];
            let types = 0..ctx.gpus_by_type.len() as u32;
            let mean: f64 = types.clone().map(|t| job.speed_on(t)).sum::<f64>() / n;
            let best = types.map(|t| job.speed_on(t)).fold(0.0, f64::max);
            let norm = if mean > 0.0 { best / mean } else { 1.0 };
            f64::from(job.gpus) * norm
        };
        max_min_order(&mut self.order, ctx, units, emit);
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.lease_ns)
    }

    fn type_preference(&self, ctx: &RoundCtx<'_>, job: usize) -> Option<Vec<u32>> {
        Some(fastest_first(ctx, job))
    }
}
