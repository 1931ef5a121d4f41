//! FIFO: jobs in submission order; never preempts. A job that does not fit is skipped and a
//! later one that fits may start (backfilling), as in the Tiresias and Blox simulators.

use alloc::boxed::Box;
use super::{Emit, Needs, Policy, PolicySpec, Preemption, Runs, emit_by_key};
use crate::labs::fairness::sim::RoundCtx;

/// First in, first out.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fifo {
    /// Whether the trace's jobs ascend by submission (as every trace reader leaves them), so
    /// that FIFO order is index order; found at the first round.
    by_index: Option<bool>,
}

impl Policy for Fifo {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let by_index = *self
            .by_index
            .get_or_insert_with(|| ctx.jobs.is_sorted_by_key(|j| j.submit_ns));
        if by_index {
            // `ctx.active` ascends by index: read only as far as the simulator needs.
            for &j in ctx.active {
                if !emit(j) {
                    return;
                }
            }
        } else {
            emit_by_key(ctx.active.iter().copied(), |j| ctx.jobs[j].submit_ns, emit);
        }
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
    runs: Runs::Policy(|_, _, _| Box::new(Fifo::default())),
};
