//! FIFO: jobs in submission order; never preempts. A job that does not fit is skipped and a
//! later one that fits may start (backfilling), as in the Tiresias and Blox simulators.

use super::{emit_by_key, Emit, Policy, Preemption};
use crate::labs::fairness::sim::RoundCtx;

/// First in, first out.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fifo;

impl Policy for Fifo {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        emit_by_key(ctx.active.iter().copied(), |j| ctx.jobs[j].submit_ns, emit);
    }

    fn preemption(&self) -> Preemption {
        Preemption::Never
    }
}
