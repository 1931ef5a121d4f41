//! SRTF: shortest remaining time first on oracle remaining times; preempts at any event
//! (paying the checkpoint/resume cost).

use alloc::vec::Vec;

use super::{Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest remaining time first (oracle).
#[derive(Clone, Copy, Debug, Default)]
pub struct Srtf;

impl Policy for Srtf {
    fn order(&mut self, ctx: &RoundCtx<'_>) -> Vec<usize> {
        let mut v = ctx.active.to_vec();
        let now = ctx.now_ns;
        v.sort_by_key(|&j| {
            let job = &ctx.jobs[j];
            (job.remaining_at(now), !job.is_running(), job.submit_ns, j)
        });
        v
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}
