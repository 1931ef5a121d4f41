//! FIFO: jobs in submission order; never preempts. A job that does not fit is skipped and a
//! later one that fits may start (backfilling), as in the Tiresias and Blox simulators.

use alloc::vec::Vec;

use super::{Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// First in, first out.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fifo;

impl Policy for Fifo {
    fn order(&mut self, ctx: &RoundCtx<'_>) -> Vec<usize> {
        let mut v = ctx.active.to_vec();
        v.sort_by_key(|&j| (ctx.jobs[j].submit_ns, j));
        v
    }

    fn preemption(&self) -> Preemption {
        Preemption::Never
    }
}
