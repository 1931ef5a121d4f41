//! SJF: shortest job first on oracle durations (the trace's own run times); never preempts.

use alloc::vec::Vec;

use super::{sorted_by_key, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// Shortest job first (oracle).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sjf;

impl Policy for Sjf {
    fn order(&mut self, ctx: &RoundCtx<'_>) -> Vec<usize> {
        sorted_by_key(ctx.active.iter().copied(), |j| {
            (ctx.jobs[j].duration_ns, ctx.jobs[j].submit_ns)
        })
    }

    fn preemption(&self) -> Preemption {
        Preemption::Never
    }
}
