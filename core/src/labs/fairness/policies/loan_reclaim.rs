//! Capacity loaning, after Lyra (Li et al., "Lyra: Elastic Scheduling for Deep Learning
//! Clusters", EuroSys'23; its preprint Aryl, arXiv:2202.07896): the inference service's idle
//! servers are loaned to training, and reclaimed when the service's demand rises, preempting
//! the training jobs on them; the server preemption cost is greedily reduced while reclaiming.
//!
//! What we run (docs/MODEL.md, "Training beside inference"): replicas are placed only on the
//! service's own servers (the last `servers_peak` nodes) and are never preempted; training
//! jobs run FIFO (non-preemptive, with backfilling) on any node, the service's idle servers
//! included. When replicas wait and too few of the service's servers are wholly free, servers
//! are reclaimed one at a time, each time the one whose reclaiming stops the fewest training
//! jobs not already stopped (then the fewest GPUs those jobs hold, then the lowest index),
//! until enough are free; the stopped jobs pay the checkpoint-and-resume cost of
//! `fairness.preemption` (the migration lab's model when chosen). The paper's own server
//! preemption cost and its elastic scaling of training jobs were not available to us (only
//! the abstract is public): ours counts jobs stopped, the quantity its abstract says reclaiming
//! minimises, and jobs keep their size.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::params::FairnessParams;
use crate::labs::fairness::sim::RoundCtx;

/// Loaning idle service servers to training, reclaiming them by fewest jobs stopped.
#[derive(Clone, Debug)]
pub struct LoanReclaim {
    /// The service's servers, nodes `lo..hi`.
    service: (u32, u32),
    /// Jobs reclaiming stops this round (sorted).
    victims: Vec<usize>,
}

impl LoanReclaim {
    /// The policy for `params`' cluster and service.
    #[must_use]
    pub fn new(params: &FairnessParams) -> Self {
        LoanReclaim {
            service: params.colocation.service_nodes(params.cluster.nodes),
            victims: Vec::new(),
        }
    }

    /// The training jobs to stop so that every waiting replica finds a wholly free server of
    /// the service (as many as can be freed), chosen greedily server by server.
    fn choose_victims(&mut self, ctx: &RoundCtx<'_>) {
        self.victims.clear();
        let waiting = ctx
            .active
            .iter()
            .filter(|&&j| ctx.jobs[j].service && !ctx.jobs[j].is_running())
            .count();
        if waiting == 0 {
            return;
        }
        let (lo, hi) = self.service;
        // Running jobs on each of the service's servers.
        let mut on: Vec<Vec<usize>> = vec![Vec::new(); (hi - lo) as usize];
        for &j in ctx.active {
            let job = &ctx.jobs[j];
            if !job.is_running() {
                continue;
            }
            for &(n, _) in &job.alloc {
                if (lo..hi).contains(&n) {
                    on[(n - lo) as usize].push(j);
                }
            }
        }
        loop {
            let victims = &self.victims;
            let stopped = |j: &usize| victims.binary_search(j).is_ok();
            let free = on.iter().filter(|jobs| jobs.iter().all(stopped)).count();
            if free >= waiting {
                return;
            }
            // The server whose reclaiming stops the fewest jobs still running (a server that
            // holds a replica is never reclaimed).
            let best = on
                .iter()
                .enumerate()
                .filter(|(_, jobs)| {
                    !jobs.iter().all(stopped) && !jobs.iter().any(|&j| ctx.jobs[j].service)
                })
                .map(|(i, jobs)| {
                    let left = jobs.iter().filter(|j| !stopped(j));
                    let count = left.clone().count();
                    let gpus: u64 = left.map(|&j| u64::from(ctx.jobs[j].gpus)).sum();
                    ((count, gpus, i), i)
                })
                .min();
            let Some((_, i)) = best else { return };
            for &j in &on[i] {
                if let Err(p) = self.victims.binary_search(&j) {
                    self.victims.insert(p, j);
                }
            }
        }
    }
}

impl Policy for LoanReclaim {
    /// Replicas first (running, then waiting), then the running training jobs not reclaimed
    /// (they keep their GPUs), then the waiting training jobs by submission.
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        if self.service.0 == self.service.1 {
            // No service: FIFO over the waiting jobs (the only ones offered, see `preemption`).
            for &j in ctx.active {
                if !emit(j) {
                    return;
                }
            }
            return;
        }
        self.choose_victims(ctx);
        let victims = &self.victims;
        let classes: [&dyn Fn(usize) -> bool; 4] = [
            &|j| ctx.jobs[j].service && ctx.jobs[j].is_running(),
            &|j| ctx.jobs[j].service && !ctx.jobs[j].is_running(),
            &|j| {
                !ctx.jobs[j].service
                    && ctx.jobs[j].is_running()
                    && victims.binary_search(&j).is_err()
            },
            &|j| !ctx.jobs[j].service && !ctx.jobs[j].is_running(),
        ];
        for class in classes {
            for &j in ctx.active {
                if class(j) && !emit(j) {
                    return;
                }
            }
        }
    }

    /// Reclaiming preempts at any round; without a service nothing is ever reclaimed.
    fn preemption(&self) -> Preemption {
        if self.service.0 == self.service.1 {
            Preemption::Never
        } else {
            Preemption::Anytime
        }
    }

    fn nodes_for(&self, ctx: &RoundCtx<'_>, job: usize) -> Option<(u32, u32)> {
        ctx.jobs[job].service.then_some(self.service)
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (0, 0),
    fair: false,
    needs: Needs::Service,
    runs: Runs::Policy(|p, _, _| Box::new(LoanReclaim::new(p))),
};
