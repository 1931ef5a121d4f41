//! Gavel-style heterogeneity-aware max-min fairness (Narayanan et al., OSDI'20), in rounds of
//! one lease. Gavel solves max-min over *effective throughput* (a job's throughput on the types
//! it is given, normalised by its throughput on an equal share of the cluster). We keep its
//! structure without the LP: tenants are filled max-min by effective throughput units
//! gⱼ × (speed on the job's fastest type / mean speed over types), and a job is placed on its
//! fastest type with room. With one GPU type every speed is 1 and Gavel reduces to weighted
//! max-min fair share re-evaluated once per round (as the Gavel paper notes for homogeneous
//! clusters).

use alloc::vec::Vec;

use super::fair_share::MaxMin;
use super::{Emit, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Heterogeneity-aware max-min, per round.
#[derive(Clone, Debug)]
pub struct Gavel {
    /// Round (lease) length, ns.
    pub lease_ns: u64,
    fill: MaxMin,
    /// Per job: its effective throughput units ([`units`]), from its arrival on.
    units: Vec<f64>,
}

impl Gavel {
    /// A fresh instance with rounds of `lease_ns`, for a run of `jobs` jobs.
    #[must_use]
    pub fn new(lease_ns: u64, jobs: usize) -> Self {
        Gavel {
            lease_ns,
            fill: MaxMin::default(),
            units: alloc::vec![0.0; jobs],
        }
    }

    /// Notes the units of the jobs in `ctx.changed` (every job is there at its arrival).
    fn note_arrivals(&mut self, ctx: &RoundCtx<'_>) {
        for &j in ctx.changed {
            self.units[j] = units(ctx, j);
        }
    }
}

/// Job `j`'s effective throughput units: gⱼ × (speed on its fastest type / mean speed over
/// types).
fn units(ctx: &RoundCtx<'_>, j: usize) -> f64 {
    let n = ctx.gpus_by_type.len().max(1) as f64;
    let job = &ctx.jobs[j];
    let types = 0..ctx.gpus_by_type.len() as u32;
    let mean: f64 = types.clone().map(|t| job.speed_on(t)).sum::<f64>() / n;
    let best = types.map(|t| job.speed_on(t)).fold(0.0, f64::max);
    let norm = if mean > 0.0 { best / mean } else { 1.0 };
    f64::from(job.gpus) * norm
}

fn fastest_first(ctx: &RoundCtx<'_>, j: usize) -> Vec<u32> {
    let job = &ctx.jobs[j];
    let mut types: Vec<u32> = (0..ctx.gpus_by_type.len() as u32).collect();
    types.sort_by(|&a, &b| job.speed_on(b).total_cmp(&job.speed_on(a)).then(a.cmp(&b)));
    types
}

impl Policy for Gavel {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        self.note_arrivals(ctx);
        let units = &self.units;
        // A tenant's level rises by the job's units over the tenant's weight.
        self.fill
            .order(ctx, |u, j| units[j] / ctx.tenants[u].weight, emit);
    }

    fn order_waiting(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) -> bool {
        self.note_arrivals(ctx);
        let units = &self.units;
        self.fill
            .order_waiting(ctx, |u, j| units[j] / ctx.tenants[u].weight, emit);
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.lease_ns)
    }

    fn type_preference(&self, ctx: &RoundCtx<'_>, job: usize) -> Option<Vec<u32>> {
        Some(fastest_first(ctx, job))
    }
}
