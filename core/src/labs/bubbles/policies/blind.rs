//! Blind colocation: the guest bundle runs beside the main job all the time.
//!
//! Interference model: the main job's compute runs `1 + interference` times slower (the seed
//! reports ~12 % for direct colocation), i.e. it gets 1/(1+i) of the GPU while it computes; the
//! guest gets the rest, i/(1+i), of its exclusive speed during the main job's compute and its
//! full exclusive speed in the bubbles. The bundle holds its memory the whole time, so F is the
//! largest whose memory fits the least free memory of the whole iteration.

use alloc::vec::Vec;

use super::{main_segments, sm_curve, GuestKind, GuestSpan, Outcome, PolicyRun};
use crate::labs::bubbles::params::{BubblesParams, PolicyKind};
use crate::labs::bubbles::windows::{windows, MainTimeline};

/// Runs the guest throughout. `slowed` is the main job re-simulated with every stage
/// `1 + interference` times slower.
#[must_use]
pub fn run(slowed: &MainTimeline, params: &BubblesParams) -> PolicyRun {
    let windows = windows(slowed, params);
    let usable = params.gpu_memory_bytes.saturating_sub(params.reserve_bytes);
    let span = slowed.span_ns();
    let i = params.interference;
    let share_under_compute = i / (1.0 + i);
    let trial = &params.trial;
    let mut guest = Vec::new();
    let mut sm = Vec::new();
    let mut fusion_used = 0;
    let mut note = None;
    for d in 0..slowed.stages {
        let free = usable.saturating_sub(slowed.peak_memory(d as usize, 0, span));
        let fusion = (1..=params.max_fusion)
            .rev()
            .find(|&f| trial.memory_bytes(f) <= free);
        let Some(f) = fusion else {
            note =
                Some("the bundle does not fit beside the main job's peak memory (F = 1 too large)");
            sm.push(sm_curve(
                span,
                params.nccl_sm_activity,
                main_segments(slowed, d, params.compute_sm_activity),
            ));
            continue;
        };
        fusion_used = fusion_used.max(f);
        let rate_per_ns = trial.exclusive_trial_steps_per_s(f) / 1e9;
        let compute_ns: u64 = slowed
            .ops
            .iter()
            .filter(|o| o.stage == d)
            .map(|o| o.end_ns - o.start_ns)
            .sum();
        let idle_ns = span.saturating_sub(compute_ns);
        let steps = rate_per_ns * (idle_ns as f64 + compute_ns as f64 * share_under_compute);
        guest.push(GuestSpan {
            stage: d,
            start_ns: 0,
            dur_ns: span,
            fusion: f,
            trial_steps: steps,
            kind: GuestKind::Run,
        });
        let g = trial.sm_activity(f);
        let under = (params.compute_sm_activity + g * share_under_compute).min(1.0);
        sm.push(sm_curve(
            span,
            (params.nccl_sm_activity + g).min(1.0),
            main_segments(slowed, d, under),
        ));
    }
    PolicyRun {
        kind: PolicyKind::Blind,
        main: slowed.clone(),
        outcomes: windows.iter().map(|_| Outcome::Throughout).collect(),
        windows,
        guest,
        sm,
        fusion: fusion_used,
        note,
    }
}
