//! SRTF: shortest remaining time first on oracle remaining times; preempts at any event
//! (paying the checkpoint/resume cost).

use super::{emit_by_key, Emit, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest remaining time first (oracle).
#[derive(Clone, Copy, Debug, Default)]
pub struct Srtf;

impl Policy for Srtf {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let now = ctx.now_ns;
        emit_by_key(
            ctx.active.iter().copied(),
            |j| {
                let job = &ctx.jobs[j];
                (job.remaining_at(now), !job.is_running(), job.submit_ns)
            },
            emit,
        );
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}
