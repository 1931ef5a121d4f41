//! SJF: shortest job first on oracle durations (the trace's own run times); never preempts.

use alloc::boxed::Box;
use super::{Emit, KeptOrder, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest job first (oracle).
#[derive(Clone, Debug, Default)]
pub struct Sjf {
    order: KeptOrder,
}

impl Policy for Sjf {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        self.order.emit_by_key(
            ctx.active,
            |j| Some((ctx.jobs[j].duration_ns, ctx.jobs[j].submit_ns)),
            emit,
        );
    }

    fn preemption(&self) -> Preemption {
        Preemption::Never
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (0, 0),
    fair: false,
    needs: Needs::Nothing,
    runs: Runs::Policy(|_, _, _| Box::new(Sjf::default())),
};
