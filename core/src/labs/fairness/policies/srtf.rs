//! SRTF: shortest remaining time first on oracle remaining times; preempts at any event
//! (paying the checkpoint/resume cost).

use alloc::vec::Vec;

use super::{sorted_by_key, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest remaining time first (oracle).
#[derive(Clone, Copy, Debug, Default)]
pub struct Srtf;

impl Policy for Srtf {
    fn order(&mut self, ctx: &RoundCtx<'_>) -> Vec<usize> {
        let now = ctx.now_ns;
        sorted_by_key(ctx.active.iter().copied(), |j| {
            let job = &ctx.jobs[j];
            (job.remaining_at(now), !job.is_running(), job.submit_ns)
        })
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}
