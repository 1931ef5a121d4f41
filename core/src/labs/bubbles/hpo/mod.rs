//! Cluster-level tuning: a tuning job of N trials on 1 exclusive GPU, with or without the
//! bubbles of a large pipeline job. Two tuners, one file each: [`asha`] (Hydro's, the default)
//! and [`sync_sh`] (synchronous successive halving).
//!
//! Workers: the exclusive GPU runs a bundle of b trials at b/step(b) trial-steps per second; a
//! bubble GPU of stage d at the rate the squeezer reached on that stage with bundles of at most
//! b trials (each of the stage's `gpus_per_stage` GPUs sees the same bubbles). A worker whose
//! stage lets no module run (rate 0) is not used.
//!
//! The critical-path ceiling: no schedule ends before the trial that trains longest (the
//! winner) has trained alone at F = 1 on the exclusive GPU, the fastest worker; so exclusive
//! makespan ÷ that time bounds every speed-up bubbles can give.

pub mod asha;
pub mod sync_sh;

use alloc::vec::Vec;

use super::params::{BubblesParams, TunerKind};
use crate::trial::TrialProfile;
use crate::units::nanos_from_f64;

/// One rung of the tuning job, on 1 GPU and on 1 GPU + bubbles.
#[derive(Clone, Debug, PartialEq)]
pub struct RungRow {
    /// Synchronous SH: steps each trial adds in the rung. ASHA: the rung's milestone (steps a
    /// trial has trained when it is judged; the last row is `max_t`).
    pub steps: u64,
    /// Trials that trained in the rung (SH) or reached the milestone (ASHA), 1 GPU.
    pub trials_exclusive: u32,
    /// The same with the bubbles.
    pub trials_with_bubbles: u32,
    /// SH: the rung's makespan; ASHA: when the last trial reached the milestone; 1 GPU, ns.
    pub exclusive_ns: u64,
    /// The same with the bubbles, ns.
    pub with_bubbles_ns: u64,
}

/// The tuning job's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct HpoResult {
    /// Which tuner.
    pub tuner: TunerKind,
    /// Every rung.
    pub rungs: Vec<RungRow>,
    /// Makespan on 1 exclusive GPU, ns (the best bundle size).
    pub exclusive_ns: u64,
    /// Makespan on 1 exclusive GPU plus the bubbles, ns (the best bundle size).
    pub with_bubbles_ns: u64,
    /// Bundle size that gave `exclusive_ns` (ASHA; 0 for SH, which chooses per rung).
    pub fusion_exclusive: u32,
    /// Bundle size that gave `with_bubbles_ns` (ASHA; 0 for SH).
    pub fusion_with_bubbles: u32,
    /// Steps of the trial that trains longest.
    pub winner_steps: u64,
    /// That trial's training time alone: `winner_steps` × step(1) on the exclusive GPU, ns.
    pub winner_alone_ns: u64,
    /// Bubble GPUs the tuner may use (stages × GPUs per stage).
    pub bubble_gpus: u32,
}

impl HpoResult {
    /// Exclusive makespan ÷ makespan with bubbles.
    #[must_use]
    pub fn speedup(&self) -> f64 {
        ratio(self.exclusive_ns, self.with_bubbles_ns)
    }

    /// The critical-path ceiling: exclusive makespan ÷ the winner's training time alone. No
    /// number of extra workers can shorten the makespan more than this.
    #[must_use]
    pub fn ceiling(&self) -> f64 {
        ratio(self.exclusive_ns, self.winner_alone_ns)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The workers of one run: the exclusive GPU (index 0) and, with bubbles, every GPU of every
/// stage whose squeezer rate is positive.
#[derive(Clone, Debug)]
pub struct Workers<'a> {
    trial: &'a TrialProfile,
    bubble_rate: &'a [Vec<f64>],
    /// Stage of each worker (`None`: the exclusive GPU).
    pub stage: Vec<Option<usize>>,
}

impl<'a> Workers<'a> {
    /// The exclusive GPU, plus `gpus_per_stage` GPUs of every stage with a positive rate when
    /// `bubbles`. `bubble_rate[d][b-1]`: stage d's squeezer rate with bundles of at most b
    /// trials, trial-steps per ns of one GPU.
    #[must_use]
    pub fn new(
        trial: &'a TrialProfile,
        bubble_rate: &'a [Vec<f64>],
        gpus_per_stage: u32,
        bubbles: bool,
    ) -> Workers<'a> {
        let mut stage = alloc::vec![None];
        if bubbles {
            for (d, rates) in bubble_rate.iter().enumerate() {
                if rates.first().copied().unwrap_or(0.0) > 0.0 {
                    stage.extend((0..gpus_per_stage).map(|_| Some(d)));
                }
            }
        }
        Workers {
            trial,
            bubble_rate,
            stage,
        }
    }

    /// How many.
    #[must_use]
    pub fn len(&self) -> usize {
        self.stage.len()
    }

    /// Always false: the exclusive GPU is always there.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.stage.is_empty()
    }

    /// Time for worker `w` to train a bundle of `size` trials for `steps` steps, ns
    /// (`u64::MAX` where it makes no progress).
    #[must_use]
    pub fn segment_ns(&self, w: usize, size: u32, steps: u64) -> u64 {
        let size = size.max(1);
        match self.stage.get(w).copied().flatten() {
            None => nanos_from_f64(steps as f64 * self.trial.step_ns(size) as f64).0,
            Some(d) => {
                let rate = self.bubble_rate[d]
                    .get(size as usize - 1)
                    .copied()
                    .unwrap_or(0.0);
                if rate <= 0.0 {
                    u64::MAX
                } else {
                    nanos_from_f64(steps as f64 * f64::from(size) / rate).0
                }
            }
        }
    }
}

/// Runs the scenario's tuner on 1 exclusive GPU and on 1 GPU + bubbles.
#[must_use]
pub fn run(params: &BubblesParams, bubble_rate: &[Vec<f64>]) -> HpoResult {
    match params.hpo.tuner {
        TunerKind::Asha => asha::run(params, bubble_rate),
        TunerKind::SyncSh => sync_sh::run(params, bubble_rate),
    }
}

/// Trial counts of the ceiling sweep (with the scenario's own N added).
pub const SWEEP_TRIALS: [u32; 7] = [16, 32, 64, 128, 256, 512, 1024];

/// The tuner over a range of trial counts: (N, result). Hydro's paper and repository read here
/// do not state the tuning job's size in the bubble experiment, so the Report shows the ceiling
/// and the speed-up over this range rather than at one guessed N.
#[must_use]
pub fn sweep(params: &BubblesParams, bubble_rate: &[Vec<f64>]) -> Vec<(u32, HpoResult)> {
    let mut ns: Vec<u32> = SWEEP_TRIALS.to_vec();
    if !ns.contains(&params.hpo.trials) {
        ns.push(params.hpo.trials);
        ns.sort_unstable();
    }
    ns.into_iter()
        .map(|n| {
            let mut p = params.clone();
            p.hpo.trials = n;
            (n, run(&p, bubble_rate))
        })
        .collect()
}
