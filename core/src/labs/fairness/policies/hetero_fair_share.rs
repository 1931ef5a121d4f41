//! Heterogeneity-weighted fair share, in rounds of one lease: tenants are filled max-min by
//! units gⱼ × (speed on the job's fastest type / mean speed over types), and a job is placed on
//! its fastest type with room. With one GPU type every speed is 1 and this is weighted max-min
//! fair share re-evaluated once per round.
//!
//! A rule of our own in the spirit of Gavel (Narayanan et al., OSDI'20), not Gavel: Gavel
//! solves, per job, an LP over the fractions of time each job spends on each GPU type that
//! maximises the minimum throughput normalised by the job's throughput on an equal share
//! (stanford-futuredata/gavel `scheduler/policies/max_min_fairness.py`,
//! `MaxMinFairnessPolicyWithPerf`), and realises it with 6-minute rounds that run the jobs
//! furthest behind their allocation (`scheduler/scheduler.py`, `_update_priorities`,
//! `_schedule_jobs_on_workers_helper`).

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::fair_share::MaxMin;
use super::{Emit, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::sim::RoundCtx;

/// Heterogeneity-weighted max-min per tenant, per round.
#[derive(Clone, Debug)]
pub struct HeteroFairShare {
    /// Round (lease) length, ns.
    pub lease_ns: u64,
    fill: MaxMin,
    /// Per job: its effective throughput units ([`units`]), from its arrival on.
    units: Vec<f64>,
}

impl HeteroFairShare {
    /// A fresh instance with rounds of `lease_ns`, for a run of `jobs` jobs.
    #[must_use]
    pub fn new(lease_ns: u64, jobs: usize) -> Self {
        HeteroFairShare {
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

impl Policy for HeteroFairShare {
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

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 1),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Policy(|p, _, jobs| {
        let lease_ns = crate::labs::fairness::params::s_to_ns(p.lease_s);
        Box::new(HeteroFairShare::new(lease_ns, jobs))
    }),
};
