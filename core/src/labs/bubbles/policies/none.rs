//! The main job alone: bubbles stay idle apart from NCCL.

use alloc::vec::Vec;

use super::{main_segments, sm_curve, Outcome, PolicyRun};
use crate::labs::bubbles::params::{BubblesParams, PolicyKind};
use crate::labs::bubbles::windows::{windows, MainTimeline};

/// Runs no guest.
#[must_use]
pub fn run(main: &MainTimeline, params: &BubblesParams) -> PolicyRun {
    let windows = windows(main, params);
    let outcomes = windows.iter().map(|_| Outcome::NoGuest).collect();
    let sm = (0..main.stages)
        .map(|d| {
            sm_curve(
                main.span_ns(),
                params.nccl_sm_activity,
                main_segments(main, d, params.compute_sm_activity),
            )
        })
        .collect();
    PolicyRun {
        kind: PolicyKind::None,
        main: main.clone(),
        windows,
        outcomes,
        guest: Vec::new(),
        sm,
        fusion: 0,
        note: None,
    }
}
