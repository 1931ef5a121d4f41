//! Instantaneous weighted max-min fair share of GPUs across tenants: progressive filling in
//! gang units (DRF with one resource, Ghodsi et al., NSDI'11), re-evaluated at every event, so
//! it preempts whenever the instantaneous shares move. Within a tenant: running jobs first
//! (no churn), then submission order.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, Key, Needs, Policy, PolicySpec, Preemption, RunningThenFifo, Runs, WaitingWalk, WalkNext, interleave, interleave_skipping, takeable};
use crate::labs::fairness::sim::RoundCtx;

/// Weighted max-min fair share of GPUs, instantaneous.
#[derive(Clone, Debug, Default)]
pub struct FairShare {
    fill: MaxMin,
}

/// The max-min filling's state kept across rounds: each tenant's queue (running jobs, then
/// waiting ones, each by submission) and its running jobs' levels. A tenant's level rises by
/// `step(tenant, job)` with each of its jobs the filling meets (fair share: gⱼ/w_u; Gavel:
/// its effective throughput units / w_u).
#[derive(Clone, Debug, Default)]
pub(super) struct MaxMin {
    order: RunningThenFifo,
    /// Per tenant: its running jobs' levels.
    levels: Vec<Levels>,
}

/// One tenant's running jobs as the progressive filling meets them: the filling emits a
/// tenant's i-th job at its level, the sum of gⱼ/w over the jobs before it (from 0, added one
/// by one as the filling adds them), and the order of the round is all jobs by (level,
/// tenant). A tenant's running jobs come first in its queue, so their levels depend on its
/// running jobs only and hold until one starts or stops.
#[derive(Clone, Debug, Default)]
struct Levels {
    /// The running jobs, in the tenant's order.
    jobs: Vec<usize>,
    /// `level[i]`: the level of `jobs[i]`; the last entry is the level after all of them,
    /// where the tenant's waiting jobs start.
    level: Vec<f64>,
    /// `gpus[i]`: the GPUs of `jobs[..i]`.
    gpus: Vec<u64>,
}

impl MaxMin {
    /// The max-min order: each tenant's queue from level 0, the lowest (level, tenant) first.
    pub(super) fn order(
        &mut self,
        ctx: &RoundCtx<'_>,
        step: impl Fn(usize, usize) -> f64,
        emit: &mut Emit<'_>,
    ) {
        self.refresh(ctx, &step);
        let keys = ctx.tenants.iter().map(|_| Key(0, 0.0)).collect();
        interleave_skipping(
            self.order.as_filed(),
            keys,
            |t, j, k| Key(0, k.1 + step(t, j)),
            |j| !takeable(ctx, j),
            emit,
        );
    }

    /// The max-min order of the waiting jobs alone: each tenant's waiting jobs from the level
    /// after its running jobs (which come first in its queue), the lowest (level, tenant)
    /// first, as [`MaxMin::order`] gives them.
    pub(super) fn order_waiting(
        &mut self,
        ctx: &RoundCtx<'_>,
        step: impl Fn(usize, usize) -> f64,
        emit: &mut Emit<'_>,
    ) {
        self.refresh(ctx, &step);
        let queues: Vec<_> = self.order.waiting.iter().map(|w| w.iter().map(|e| e.1)).collect();
        interleave(queues, self.waiting_keys(), |u, j, k| Key(0, k.1 + step(u, j)), emit);
    }

    /// Each tenant's level after its running jobs, where its waiting jobs start.
    fn waiting_keys(&self) -> Vec<Key> {
        self.levels
            .iter()
            .map(|l| Key(0, l.level.last().copied().unwrap_or(0.0)))
            .collect()
    }
}

/// How far tenant `u`'s level rises with job `j`: gⱼ/w_u (fair share's GPU units).
fn step(ctx: &RoundCtx<'_>, u: usize, j: usize) -> f64 {
    f64::from(ctx.jobs[j].gpus) / ctx.tenants[u].weight
}

/// The filling's key after job `j` of tenant `u`, from `k`.
fn raise(ctx: &RoundCtx<'_>, u: usize, j: usize, k: Key) -> Key {
    Key(0, k.1 + step(ctx, u, j))
}

/// The key of the filling at (level, tenant), as [`interleave`] orders it.
fn at(level: f64, tenant: usize) -> (u128, usize) {
    (Key(0, level).bits(), tenant)
}

impl MaxMin {
    /// Brings the queues and the changed tenants' levels up to the round.
    fn refresh(&mut self, ctx: &RoundCtx<'_>, step: &impl Fn(usize, usize) -> f64) {
        let fresh = self.levels.len() != ctx.tenants.len();
        self.order.refresh(ctx);
        if fresh {
            self.levels = vec![Levels::default(); ctx.tenants.len()];
        }
        let mut touched: Vec<usize> = if fresh {
            (0..ctx.tenants.len()).collect()
        } else {
            ctx.changed
                .iter()
                .map(|&j| ctx.jobs[j].tenant as usize)
                .collect()
        };
        touched.sort_unstable();
        touched.dedup();
        for u in touched {
            let l = &mut self.levels[u];
            l.jobs.clear();
            l.jobs.extend(self.order.running[u].iter().map(|e| e.1));
            l.level.clear();
            l.gpus.clear();
            let (mut level, mut gpus) = (0.0, 0);
            for &j in &l.jobs {
                l.level.push(level);
                l.gpus.push(gpus);
                level += step(u, j);
                gpus += u64::from(ctx.jobs[j].gpus);
            }
            l.level.push(level);
            l.gpus.push(gpus);
        }
    }
}

impl FairShare {
    /// The whole order from waiting job `from` of tenant `t` at level `from_level` on, through
    /// [`WaitingWalk::every`]; once it returns false, only the running jobs after that point.
    fn walk_every(
        &self,
        ctx: &RoundCtx<'_>,
        (from, t, from_level): (usize, usize, f64),
        walk: &mut dyn WaitingWalk,
    ) {
        let start = at(from_level, t);
        // Per tenant: where its part of the rest starts, (position in its queue, level).
        let mut pos = vec![0; ctx.tenants.len()];
        let mut keys = vec![Key(0, 0.0); ctx.tenants.len()];
        let mut queues = Vec::with_capacity(ctx.tenants.len());
        for (u, l) in self.fill.levels.iter().enumerate() {
            let running = l.jobs.len();
            let waiting = &self.fill.order.waiting[u];
            let (p, level) = if u == t {
                (running + waiting.iter().take_while(|e| e.1 != from).count(), from_level)
            } else {
                let i = l.level[..running].partition_point(|&x| at(x, u) < start);
                if i < running {
                    (i, l.level[i])
                } else {
                    let mut level = l.level[running];
                    let mut m = 0;
                    for e in waiting {
                        if at(level, u) > start {
                            break;
                        }
                        level += step(ctx, u, e.1);
                        m += 1;
                    }
                    (running + m, level)
                }
            };
            pos[u] = p;
            keys[u] = Key(0, level);
            let rest_running = l.jobs.get(p..).unwrap_or(&[]).iter().copied();
            let rest_waiting = waiting.iter().skip(p.saturating_sub(running)).map(|e| e.1);
            queues.push(rest_running.chain(rest_waiting));
        }
        let mut stopped = false;
        interleave(
            queues,
            keys,
            |u, j, k| raise(ctx, u, j, k),
            &mut |j| {
                pos[ctx.jobs[j].tenant as usize] += 1;
                stopped = !walk.every(j);
                !stopped
            },
        );
        if stopped {
            for (u, l) in self.fill.levels.iter().enumerate() {
                for &j in l.jobs.get(pos[u]..).unwrap_or(&[]) {
                    walk.every(j);
                }
            }
        }
    }
}

impl Policy for FairShare {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        self.fill.order(ctx, |u, j| step(ctx, u, j), emit);
    }

    fn walk_waiting(&mut self, ctx: &RoundCtx<'_>, walk: &mut dyn WaitingWalk) -> bool {
        self.fill.refresh(ctx, &|u, j| step(ctx, u, j));
        let n = ctx.tenants.len();
        // The waiting jobs in the round's order: the same filling, each tenant starting at
        // the level after its running jobs.
        let fill = &self.fill;
        let queues: Vec<_> = fill.order.waiting.iter().map(|w| w.iter().map(|e| e.1)).collect();
        let keys = fill.waiting_keys();
        let mut level: Vec<f64> = keys.iter().map(|k| k.1).collect();
        // Per tenant: how many of its running jobs lie below the key of the job walked last.
        // The walk meets the jobs by ascending key, so each count only grows.
        let mut below = vec![0usize; n];
        let mut every_from = None;
        interleave(
            queues,
            keys,
            |u, j, k| raise(ctx, u, j, k),
            &mut |j| {
                let t = ctx.jobs[j].tenant as usize;
                let here = level[t];
                level[t] = here + step(ctx, t, j);
                // The running jobs ahead: its own tenant's all (they come first in its queue),
                // each other tenant's below (level, tenant) of this job.
                let key = at(here, t);
                let mut ahead = 0u64;
                for (u, l) in fill.levels.iter().enumerate() {
                    let running = l.jobs.len();
                    if u == t {
                        ahead += l.gpus[running];
                        continue;
                    }
                    let b = &mut below[u];
                    while *b < running && at(l.level[*b], u) < key {
                        *b += 1;
                    }
                    ahead += l.gpus[*b];
                }
                match walk.waiting(j, ahead) {
                    WalkNext::Next => true,
                    WalkNext::Stop => false,
                    WalkNext::Every => {
                        every_from = Some((j, t, here));
                        false
                    }
                }
            },
        );
        if let Some(from) = every_from {
            self.walk_every(ctx, from, walk);
        }
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 0),
    fair: true,
    needs: Needs::Nothing,
    runs: Runs::Policy(|_, _, _| Box::new(FairShare::default())),
};
