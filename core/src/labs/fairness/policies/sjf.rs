//! SJF: shortest job first on oracle durations (the trace's own run times); never preempts.

use super::{Emit, KeptOrder, Policy, Preemption};
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
