//! Blind colocation: the guest bundle runs beside the main job all the time.
//!
//! The bundle holds its memory the whole time, so on each stage F is the largest whose memory
//! fits the least free memory of the whole iteration ([`fusion_per_stage`]). Its interference is
//! derived, not given: the bundle's share s of the GPU is the larger of its SM and HBM-bandwidth
//! shares ([`TrialProfile::contention_share`](crate::trial::TrialProfile::contention_share)),
//! and, as in the kernel's contention model (`crate::graph::sim`: compute progresses at
//! 1/(1 + s) while a co-runner holds share s), the main job's compute on that stage runs
//! `1 + s` times slower. The GPU is shared in proportion to demand (main job 1, guest s), so the
//! guest too runs at 1/(1 + s) of its exclusive speed during the main job's compute, and at its
//! full exclusive speed in the bubbles.

use alloc::vec::Vec;

use super::{main_segments, sm_curve, GuestKind, GuestSpan, Outcome, PolicyRun};
use crate::labs::bubbles::params::{BubblesParams, PolicyKind};
use crate::labs::bubbles::windows::{windows, MainTimeline};

/// Note when not even F = 1 fits beside the main job's peak.
pub const NOTE_NO_FIT: &str =
    "the bundle does not fit beside the main job's peak memory (F = 1 too large)";

/// The bundle size on each stage: the largest F ≤ `max_fusion` whose memory fits beside the
/// stage's peak memory over the whole run (`None`: not even F = 1 fits).
#[must_use]
pub fn fusion_per_stage(main: &MainTimeline, params: &BubblesParams) -> Vec<Option<u32>> {
    let usable = params.gpu_memory_bytes.saturating_sub(params.reserve_bytes);
    let span = main.span_ns();
    (0..main.stages as usize)
        .map(|d| {
            let free = usable.saturating_sub(main.peak_memory(d, 0, span));
            (1..=params.max_fusion)
                .rev()
                .find(|&f| params.trial.memory_bytes(f) <= free)
        })
        .collect()
}

/// The compute slowdown factor of each stage under blind colocation: 1 + s of the stage's
/// bundle (1 where none fits).
#[must_use]
pub fn stage_factors(fusion: &[Option<u32>], params: &BubblesParams) -> Vec<f64> {
    fusion
        .iter()
        .map(|f| f.map_or(1.0, |f| 1.0 + params.trial.contention_share(f)))
        .collect()
}

/// Runs the guest throughout. `slowed` is the main job re-simulated with every stage's compute
/// [`stage_factors`] times slower; `fusion` is [`fusion_per_stage`] of the main job alone (the
/// peaks are the same: slowing stretches time, not memory).
#[must_use]
pub fn run(slowed: &MainTimeline, params: &BubblesParams, fusion: &[Option<u32>]) -> PolicyRun {
    let windows = windows(slowed, params);
    let span = slowed.span_ns();
    let trial = &params.trial;
    let mut guest = Vec::new();
    let mut sm = Vec::new();
    let mut fusion_used = 0;
    let mut note = None;
    for d in 0..slowed.stages {
        let Some(f) = fusion.get(d as usize).copied().flatten() else {
            note = Some(NOTE_NO_FIT);
            sm.push(sm_curve(
                span,
                params.nccl_sm_activity,
                main_segments(slowed, d, params.compute_sm_activity),
            ));
            continue;
        };
        fusion_used = fusion_used.max(f);
        let s = trial.contention_share(f);
        let rate_per_ns = trial.exclusive_trial_steps_per_s(f) / 1e9;
        let compute_ns: u64 = slowed
            .ops
            .iter()
            .filter(|o| o.stage == d)
            .map(|o| o.end_ns - o.start_ns)
            .sum();
        let idle_ns = span.saturating_sub(compute_ns);
        let steps = rate_per_ns * (idle_ns as f64 + compute_ns as f64 / (1.0 + s));
        guest.push(GuestSpan {
            stage: d,
            start_ns: 0,
            dur_ns: span,
            fusion: f,
            trial_steps: steps,
            kind: GuestKind::Run,
        });
        let g = trial.sm_activity(f);
        let under = (params.compute_sm_activity + g / (1.0 + s)).min(1.0);
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
