//! Separate clusters: the baseline Lyra (Li et al., EuroSys'23) improves on. The inference
//! service keeps its own servers (the last [`ColocationSpec::servers_peak`] nodes) whether it
//! needs them or not; training jobs run FIFO on the rest and never touch the service's servers,
//! so nothing is ever preempted and every replica finds its server free.
//!
//! [`ColocationSpec::servers_peak`]: crate::labs::fairness::params::ColocationSpec::servers_peak

use alloc::boxed::Box;
use super::{Emit, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::params::FairnessParams;
use crate::labs::fairness::sim::RoundCtx;

/// Replicas on the service's servers, training FIFO on the others; never preempts.
#[derive(Clone, Copy, Debug)]
pub struct SeparateClusters {
    /// The service's servers, nodes `lo..hi`.
    service: (u32, u32),
}

impl SeparateClusters {
    /// The policy for `params`' cluster and service.
    #[must_use]
    pub fn new(params: &FairnessParams) -> Self {
        SeparateClusters {
            service: params.colocation.service_nodes(params.cluster.nodes),
        }
    }
}

impl Policy for SeparateClusters {
    /// Replicas first (they are never short of a server), then training jobs by submission
    /// (`ctx.active` is in submission order). Without a service, one pass: FIFO.
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let classes: &[bool] = if self.service.0 == self.service.1 {
            &[false]
        } else {
            &[true, false]
        };
        for &service in classes {
            for &j in ctx.active {
                if ctx.jobs[j].service == service && !emit(j) {
                    return;
                }
            }
        }
    }

    fn preemption(&self) -> Preemption {
        Preemption::Never
    }

    fn nodes_for(&self, ctx: &RoundCtx<'_>, job: usize) -> Option<(u32, u32)> {
        Some(if ctx.jobs[job].service {
            self.service
        } else {
            (0, self.service.0)
        })
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (0, 0),
    fair: false,
    needs: Needs::Service,
    runs: Runs::Policy(|p, _, _| Box::new(SeparateClusters::new(p))),
};
