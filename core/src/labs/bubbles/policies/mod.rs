//! The policies: one file each. Every policy takes the main job's timeline and its windows and
//! returns a [`PolicyRun`]: the main job as it ran under the policy, the guest's work, and SM
//! activity per stage over time.

pub mod blind;
pub mod none;
pub mod squeezer;

use alloc::vec::Vec;

use super::params::{BubblesParams, PolicyKind};
use super::windows::{MainTimeline, Window};

/// What a guest span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuestKind {
    /// Resuming a paused bundle (no progress).
    Resume,
    /// Running modules.
    Run,
}

/// One piece of guest work on one stage's GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuestSpan {
    /// Stage.
    pub stage: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// Length, ns.
    pub dur_ns: u64,
    /// Fusion count F of the bundle.
    pub fusion: u32,
    /// Trial-steps done in it (F × modules / modules per step for the squeezer).
    pub trial_steps: f64,
    /// Resume or run.
    pub kind: GuestKind,
}

/// What a policy did with one window.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The guest ran `modules` modules of a bundle of `fusion` trials in it.
    Used {
        /// Fusion count F.
        fusion: u32,
        /// Modules run.
        modules: u64,
    },
    /// The guest did not run in it, and why.
    Skipped(&'static str),
    /// The guest runs throughout (blind colocation), so the window is not chosen.
    Throughout,
    /// No guest.
    NoGuest,
}

/// One policy's outcome.
#[derive(Clone, Debug)]
pub struct PolicyRun {
    /// Which policy.
    pub kind: PolicyKind,
    /// The main job as it ran under this policy.
    pub main: MainTimeline,
    /// Its windows (from `main`).
    pub windows: Vec<Window>,
    /// What the policy did with each window (same order as `windows`).
    pub outcomes: Vec<Outcome>,
    /// Guest work, sorted by (stage, start).
    pub guest: Vec<GuestSpan>,
    /// SM activity per stage over time: (time ns, activity from then on).
    pub sm: Vec<Vec<(u64, f64)>>,
    /// Fusion count the guest used most (0 when none ran).
    pub fusion: u32,
    /// Note on why the guest could not run at all, if so.
    pub note: Option<&'static str>,
}

impl PolicyRun {
    /// Trial-steps the guest made, all stages together.
    #[must_use]
    pub fn trial_steps(&self) -> f64 {
        self.guest.iter().map(|g| g.trial_steps).sum()
    }

    /// Trial-steps the guest made on `stage`.
    #[must_use]
    pub fn trial_steps_on(&self, stage: u32) -> f64 {
        self.guest
            .iter()
            .filter(|g| g.stage == stage)
            .map(|g| g.trial_steps)
            .sum()
    }

    /// Mean main-job iteration time, ns.
    #[must_use]
    pub fn iteration_ns(&self) -> f64 {
        let n = self.main.iterations().max(1);
        self.main.span_ns() as f64 / f64::from(n)
    }

    /// Time-weighted mean SM activity over every bubble (safe or not) of every stage.
    #[must_use]
    pub fn bubble_sm_activity(&self) -> f64 {
        let mut weighted = 0.0;
        let mut total = 0u64;
        for w in &self.windows {
            let curve = &self.sm[w.stage as usize];
            weighted += integrate(curve, w.start_ns, w.end_ns());
            total += w.duration_ns;
        }
        if total == 0 {
            0.0
        } else {
            weighted / total as f64
        }
    }

    /// Guest progress as a fraction of a bundle of `fusion` trials running alone on every
    /// stage's GPU for the same wall time.
    #[must_use]
    pub fn guest_fraction(&self, params: &BubblesParams, fusion: u32) -> f64 {
        let exclusive = params.trial.exclusive_trial_steps_per_s(fusion)
            * (self.main.span_ns() as f64 / 1e9)
            * f64::from(self.main.stages);
        if exclusive > 0.0 {
            self.trial_steps() / exclusive
        } else {
            0.0
        }
    }
}

/// ∫ curve over [start, end) for a step function given as (time, value from then on).
fn integrate(curve: &[(u64, f64)], start: u64, end: u64) -> f64 {
    let mut sum = 0.0;
    for (i, &(t, v)) in curve.iter().enumerate() {
        let next = curve.get(i + 1).map_or(u64::MAX, |p| p.0);
        let a = t.max(start);
        let b = next.min(end);
        if b > a {
            sum += v * (b - a) as f64;
        }
    }
    sum
}

/// Builds a stage's SM step function: `base` everywhere, then each (start, end, value)
/// segment (later segments override earlier ones where they overlap; callers pass disjoint
/// segments).
pub(crate) fn sm_curve(
    span_ns: u64,
    base: f64,
    mut segments: Vec<(u64, u64, f64)>,
) -> Vec<(u64, f64)> {
    segments.retain(|s| s.1 > s.0);
    segments.sort_by_key(|s| (s.0, s.1));
    let mut out: Vec<(u64, f64)> = alloc::vec![(0, base)];
    let push = |t: u64, v: f64, out: &mut Vec<(u64, f64)>| match out.last_mut() {
        Some(last) if last.0 == t => last.1 = v,
        Some(last) if last.1 == v => {}
        _ => out.push((t, v)),
    };
    for (s, e, v) in segments {
        push(s, v, &mut out);
        push(e.min(span_ns), base, &mut out);
    }
    out
}

/// The main job's own SM segments: its compute ops.
pub(crate) fn main_segments(
    main: &MainTimeline,
    stage: u32,
    activity: f64,
) -> Vec<(u64, u64, f64)> {
    main.ops
        .iter()
        .filter(|o| o.stage == stage)
        .map(|o| (o.start_ns, o.end_ns, activity))
        .collect()
}
