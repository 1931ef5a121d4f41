//! ASTRAEA: long-term GPU-time fairness (LTGF) with two-phase selection and leases, as its
//! artifact implements it.
//!
//! * Tenant quota Q_u = ⌊G·s_u/Σs⌋ (at least 1). Over a sliding window (24 one-hour buckets by
//!   default) the simulator integrates used U_u (Σ running gⱼ), deserved D_u (rate
//!   min(demand_u, Q_u)) and entitled W_u (rate Q_u) exactly between events.
//! * Phase 1: the tenant with the smallest U_u/W_u goes first (max-min); a tenant currently
//!   running below `low_quota_share` (20 %) of its quota goes before all others. Each job
//!   handed out adds gⱼ × lease to its tenant's U_u (progressive filling over one lease).
//! * Job accounting: D_j accrues min(gⱼ, (wⱼ/Σw)·Q_u) over time with wⱼ = gⱼ (so the rate is
//!   gⱼ·min(1, Q_u/Σg)); U_j = gⱼ × executed time; F_j = U_j/D_j (0 when D_j = 0).
//!   f = −ln F / √(1 + ln² F) ∈ (−1, 1] (f = 1 at F = 0) is cut into K equal classes, class 0
//!   the most under-served.
//! * Phase 2: within the tenant, jobs by (class, −P(finish within the next lease)/gⱼ, submit),
//!   P from the empirical duration distribution of finished jobs of the same GPU count.
//! * A job waiting longer than the starvation threshold (21,600 s) goes ahead of everything.
//! * Leases (900 s): a running job is only preempted once its lease has ended.

use alloc::vec::Vec;

use super::{by_tenant, interleave, Emit, Key, Policy, Preemption};
use crate::labs::fairness::params::{s_to_ns, AstraeaParams};
use crate::labs::fairness::sim::RoundCtx;

/// ASTRAEA's scheduler.
#[derive(Clone, Copy, Debug)]
pub struct Astraea {
    classes: u32,
    starvation_ns: u64,
    low_quota_share: f64,
    lease_ns: u64,
}

impl Astraea {
    /// A fresh instance.
    #[must_use]
    pub fn new(p: &AstraeaParams, lease_ns: u64) -> Self {
        Astraea {
            classes: p.classes,
            starvation_ns: s_to_ns(p.starvation_s),
            low_quota_share: p.low_quota_share,
            lease_ns,
        }
    }
}

/// The discretised job fairness f = −ln F / √(1 + ln² F), in (−1, 1]; 1 at F = 0.
#[must_use]
pub fn discretised_fairness(f_j: f64) -> f64 {
    if f_j <= 0.0 || !f_j.is_finite() {
        return if f_j.is_infinite() { -1.0 } else { 1.0 };
    }
    let l = libm::log(f_j);
    -l / libm::sqrt(1.0 + l * l)
}

/// Class of a job fairness F_j among K classes: 0 for the most under-served.
#[must_use]
pub fn class_of(f_j: f64, k: u32) -> u32 {
    let f = discretised_fairness(f_j);
    let c = libm::floor((1.0 - f) / 2.0 * f64::from(k)) as i64;
    c.clamp(0, i64::from(k) - 1) as u32
}

/// F_j = U_j / D_j of job `j` now (0 when it deserved nothing yet).
#[must_use]
pub fn job_fairness(ctx: &RoundCtx<'_>, j: usize) -> f64 {
    let job = &ctx.jobs[j];
    let u = &ctx.tenants[job.tenant as usize];
    let d = f64::from(job.gpus) * (u.phi_ns - job.phi_at_submit);
    if d <= 0.0 {
        return 0.0;
    }
    job.attained_gpu_ns(ctx.now_ns) as f64 / d
}

impl Policy for Astraea {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let now = ctx.now_ns;
        // Starving jobs first, oldest first.
        let starving = |j: usize| {
            let job = &ctx.jobs[j];
            !job.is_running() && now - job.last_stop_ns >= self.starvation_ns
        };
        let mut first: Vec<usize> = ctx
            .active
            .iter()
            .copied()
            .filter(|&j| starving(j))
            .collect();
        first.sort_by_key(|&j| (ctx.jobs[j].last_stop_ns, j));
        let mut given: Vec<u64> = alloc::vec![0; ctx.tenants.len()];
        for &j in &first {
            if !emit(j) {
                return;
            }
            given[ctx.jobs[j].tenant as usize] += u64::from(ctx.jobs[j].gpus);
        }
        // Phase 2: (class, −P(finish within the next lease)/gⱼ, submit) within each tenant.
        let queues = by_tenant(ctx, |j| {
            if starving(j) {
                return None;
            }
            let job = &ctx.jobs[j];
            let class = class_of(job_fairness(ctx, j), self.classes);
            let p = ctx
                .history
                .p_finish_within(job.gpus, job.done_at(now), self.lease_ns);
            Some((
                class,
                Key(0, -p / f64::from(job.gpus.max(1))),
                job.submit_ns,
            ))
        });
        // Phase 1 keys: (low-quota group, U/W), raised by gⱼ × lease per job handed out.
        let low = self.low_quota_share;
        let lease = self.lease_ns as f64;
        let keys: Vec<Key> = ctx
            .tenants
            .iter()
            .enumerate()
            .map(|(u, t)| {
                let w = (t.window_entitled() as f64).max(1.0);
                let ratio = t.window_used() as f64 / w;
                let group = u8::from(given[u] as f64 >= low * t.quota as f64);
                Key(group, ratio)
            })
            .collect();
        let mut given_f: Vec<f64> = given.iter().map(|&g| g as f64).collect();
        interleave(
            queues,
            keys,
            |u, j, k| {
                let t = &ctx.tenants[u];
                let g = f64::from(ctx.jobs[j].gpus);
                given_f[u] += g;
                let w = (t.window_entitled() as f64).max(1.0);
                let group = u8::from(given_f[u] >= low * t.quota as f64);
                Key(group, k.1 + g * lease / w)
            },
            emit,
        );
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtLeaseEnd(self.lease_ns)
    }
}
