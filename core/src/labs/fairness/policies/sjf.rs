//! SJF: shortest job first on oracle durations (the trace's own run times); never preempts.

use super::{emit_by_key, Emit, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest job first (oracle).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sjf;

impl Policy for Sjf {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        emit_by_key(
            ctx.active.iter().copied(),
            |j| (ctx.jobs[j].duration_ns, ctx.jobs[j].submit_ns),
            emit,
        );
    }

    fn preemption(&self) -> Preemption {
        Preemption::Never
    }
}
