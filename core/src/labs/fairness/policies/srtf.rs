//! SRTF: shortest remaining time first on oracle remaining times; preempts at any event
//! (paying the checkpoint/resume cost).

use super::{Emit, KeptOrder, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest remaining time first (oracle).
#[derive(Clone, Debug, Default)]
pub struct Srtf {
    order: KeptOrder,
}

impl Policy for Srtf {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let now = ctx.now_ns;
        self.order.emit_by_key(
            ctx.active,
            |j| {
                let job = &ctx.jobs[j];
                Some((job.remaining_at(now), !job.is_running(), job.submit_ns))
            },
            emit,
        );
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}
