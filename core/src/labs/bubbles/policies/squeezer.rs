//! Hydro's Bubble Squeezer (Hu et al., "Hydro: Surrogate-Based Hyperparameter Tuning Service in
//! Datacenters", OSDI 2023, §5): the guest runs only inside safe windows.
//!
//! At each safe window: wait `detect_ns` until the window is seen; choose the largest F ≤
//! `max_fusion` whose memory fits the window's free memory (else skip); resume the bundle
//! (`resume_ns`); issue modules only while the next one finishes before the window ends; pause at
//! that hook. The guest never runs outside windows, so the main job is unchanged.

use alloc::vec::Vec;

use super::{main_segments, sm_curve, GuestKind, GuestSpan, Outcome, PolicyRun};
use crate::labs::bubbles::params::{BubblesParams, PolicyKind};
use crate::labs::bubbles::windows::{windows, MainTimeline, Window};

/// Skip reason: the window is unsafe.
pub const SKIP_UNSAFE: &str = "unsafe";
/// Skip reason: not even F = 1 fits the free memory.
pub const SKIP_MEMORY: &str = "no memory for F = 1";
/// Skip reason: detection + resume + one module do not fit the window.
pub const SKIP_SHORT: &str = "shorter than detect + resume + one module";

/// What the squeezer does with one window.
#[must_use]
pub fn decide(w: &Window, params: &BubblesParams, max_fusion: u32) -> Outcome {
    if !w.safe {
        return Outcome::Skipped(SKIP_UNSAFE);
    }
    let trial = &params.trial;
    let Some(f) = (1..=max_fusion)
        .rev()
        .find(|&f| trial.memory_bytes(f) <= w.free_bytes)
    else {
        return Outcome::Skipped(SKIP_MEMORY);
    };
    let available = w
        .duration_ns
        .saturating_sub(params.detect_ns)
        .saturating_sub(params.resume_ns);
    let module = trial.module_ns(f).max(1);
    let modules = available / module;
    if modules == 0 || w.duration_ns < params.detect_ns + params.resume_ns + module {
        return Outcome::Skipped(SKIP_SHORT);
    }
    Outcome::Used { fusion: f, modules }
}

/// Runs the squeezer with bundles of at most `max_fusion` trials.
#[must_use]
pub fn run(main: &MainTimeline, params: &BubblesParams, max_fusion: u32) -> PolicyRun {
    let windows = windows(main, params);
    let trial = &params.trial;
    let mut guest = Vec::new();
    let mut outcomes = Vec::with_capacity(windows.len());
    let mut segments: Vec<Vec<(u64, u64, f64)>> = (0..main.stages)
        .map(|d| main_segments(main, d, params.compute_sm_activity))
        .collect();
    let mut fusion_used = 0;
    for w in &windows {
        let outcome = decide(w, params, max_fusion);
        if let Outcome::Used { fusion, modules } = outcome {
            fusion_used = fusion_used.max(fusion);
            let resume_at = w.start_ns + params.detect_ns;
            let run_at = resume_at + params.resume_ns;
            let run_ns = modules * trial.module_ns(fusion);
            guest.push(GuestSpan {
                stage: w.stage,
                start_ns: resume_at,
                dur_ns: params.resume_ns,
                fusion,
                trial_steps: 0.0,
                kind: GuestKind::Resume,
            });
            guest.push(GuestSpan {
                stage: w.stage,
                start_ns: run_at,
                dur_ns: run_ns,
                fusion,
                trial_steps: f64::from(fusion) * modules as f64
                    / f64::from(trial.modules_per_step.max(1)),
                kind: GuestKind::Run,
            });
            segments[w.stage as usize].push((
                run_at,
                run_at + run_ns,
                (params.nccl_sm_activity + trial.sm_activity(fusion)).min(1.0),
            ));
        }
        outcomes.push(outcome);
    }
    let sm = segments
        .into_iter()
        .map(|s| sm_curve(main.span_ns(), params.nccl_sm_activity, s))
        .collect();
    PolicyRun {
        kind: PolicyKind::Squeezer,
        main: main.clone(),
        windows,
        outcomes,
        guest,
        sm,
        fusion: fusion_used,
        note: None,
    }
}
