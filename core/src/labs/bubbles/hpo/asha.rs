//! Asynchronous successive halving as Hydro runs it: `ASHAHydroScheduler`
//! (S-Lab-System-Group/Hydro, `hydro/tune/schedule/asha.py`), Ray Tune's
//! `AsyncHyperBandScheduler` with one bracket (`brackets == 1` is asserted there), reduction
//! factor 4 by default (Li et al., "A System for Massively Parallel Hyperparameter Tuning",
//! MLSys 2020).
//!
//! Rungs sit at `grace_period · η^k` steps for every k with a milestone ≤ `max_t` (`_Bracket`:
//! `MAX_RUNGS = int(log(max_t / min_t) / log(rf) + 1)`; we count the milestones in integers, so a
//! power of η is never lost to rounding). When a trial reaches a rung below `max_t`, it is stopped
//! if its result is below the (1 − 1/η) quantile (`np.nanpercentile`, linear interpolation) of the
//! results recorded at that rung so far, and its result is recorded either way; the first trial
//! at a rung always continues. A trial that reaches `max_t` stops (`stop_last_trials`). Nothing
//! waits for a rung to fill: a surviving trial trains on at once.
//!
//! Fusion, as Hydro's `HydroTrial` does it: a free worker takes the next pending trials as one
//! bundle of up to b; the bundle reports all its trials' results at a milestone
//! (`on_trial_result`, in trial order); stopped trials leave the bundle (`keep_list`), the rest
//! train on in it on the same worker; an empty bundle frees its worker for new trials
//! (`choose_trial_to_run`: pending trials first). Workers free at the same instant take trials in
//! index order (the exclusive GPU first). The bundle size b is Hydro's ([`hydro_bundle`]) or,
//! under the `oracle` rule, the best of every b ≤ `max_fusion` in hindsight.
//!
//! Trial quality (our model): trial i's result at every rung is one number drawn uniformly from
//! a seeded `Pcg64Mcg` (`hpo.seed`): ranks do not cross between fidelities. Results are "higher
//! is better" (`mode="max"`).

use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{HpoResult, RungRow, Workers};
use crate::engine::{EventQueue, Prioritized};
use crate::labs::bubbles::params::{BubblesParams, BundleRule, TunerKind};
use crate::units::Nanos;

/// The judged milestones: grace · η^k for every k with grace · η^k < `max_t` (a milestone at
/// `max_t` itself stops every trial that reaches it, so it judges nothing).
#[must_use]
pub fn milestones(grace_steps: u64, eta: u32, max_t_steps: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut m = grace_steps.max(1);
    while m < max_t_steps {
        out.push(m);
        m = m.saturating_mul(u64::from(eta.max(2)));
    }
    out
}

/// The trials' qualities: one uniform draw in [0, 1) each from `Pcg64Mcg::seed_from_u64(seed)`.
#[must_use]
pub fn qualities(n: u32, seed: u64) -> Vec<f64> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    (0..n).map(|_| rng.random::<f64>()).collect()
}

/// `np.nanpercentile(recorded, (1 − 1/η)·100)` with linear interpolation; `sorted` ascending.
/// `None` when nothing is recorded (the trial continues).
#[must_use]
pub fn cutoff(sorted: &[f64], eta: u32) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let q = 1.0 - 1.0 / f64::from(eta.max(2));
    let rank = q * (n - 1) as f64;
    let lo = libm::floor(rank) as usize;
    let hi = libm::ceil(rank) as usize;
    let frac = rank - lo as f64;
    Some(sorted[lo] + (sorted[hi.min(n - 1)] - sorted[lo]) * frac)
}

/// One uninterrupted piece of a bundle's training on one worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Worker (0: the exclusive GPU).
    pub worker: usize,
    /// Trials in the bundle.
    pub trials: u32,
    /// Steps trained when it starts and when it ends.
    pub from_steps: u64,
    /// Steps at its end (a milestone or `max_t`).
    pub to_steps: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// One simulated ASHA run.
#[derive(Clone, Debug, PartialEq)]
pub struct AshaRun {
    /// When the last trial stopped, ns.
    pub makespan_ns: u64,
    /// Every segment, in the order they ended.
    pub segments: Vec<Segment>,
    /// Steps each trial trained before it stopped.
    pub trained_steps: Vec<u64>,
    /// Per judged milestone, then `max_t`: the times trials reached it, ns.
    pub arrivals: Vec<Vec<u64>>,
}

struct Bundle {
    trials: Vec<u32>,
    steps: u64,
    /// Index of the target in the milestones followed by `max_t`.
    target: usize,
    since_ns: u64,
}

/// A bundle reaching its target on worker `.0`: the simulator's one kind of event.
struct Arrival(usize);

impl Prioritized for Arrival {
    fn priority(&self) -> u8 {
        0
    }
}

/// The arrivals of one instant, handed out by worker index (Hydro's free workers take trials in
/// index order), whatever order they were scheduled in.
#[derive(Default)]
struct Due {
    time_ns: u64,
    /// Workers arriving at `time_ns`, highest index first.
    workers: Vec<usize>,
}

impl Due {
    /// The next arrival: the earliest instant, and at it the lowest worker, an arrival scheduled
    /// for the current instant while it is handled included.
    fn next(&mut self, events: &mut EventQueue<Arrival>) -> Option<(u64, usize)> {
        if self.workers.is_empty() {
            self.time_ns = events.peek_time()?.0;
        }
        while events.peek_time() == Some(Nanos(self.time_ns)) {
            if let Some((_, Arrival(w))) = events.pop() {
                self.workers.push(w);
            }
        }
        self.workers.sort_unstable_by(|a, b| b.cmp(a));
        self.workers.pop().map(|w| (self.time_ns, w))
    }
}

/// Simulates ASHA with bundles of at most `b` trials on `workers`.
#[must_use]
pub fn simulate(params: &BubblesParams, workers: &Workers, b: u32, quality: &[f64]) -> AshaRun {
    let h = &params.hpo;
    let eta = h.reduction_factor;
    let mut targets = milestones(h.grace_period_steps, eta, h.max_t_steps);
    let judged = targets.len();
    targets.push(h.max_t_steps);
    let n = quality.len() as u32;
    let b = b.max(1);
    let mut next_trial = 0u32;
    let mut recorded: Vec<Vec<f64>> = (0..judged).map(|_| Vec::new()).collect();
    let mut run = AshaRun {
        makespan_ns: 0,
        segments: Vec::new(),
        trained_steps: alloc::vec![0; quality.len()],
        arrivals: (0..targets.len()).map(|_| Vec::new()).collect(),
    };
    let mut bundles: Vec<Option<Bundle>> = (0..workers.len()).map(|_| None).collect();
    let mut events = EventQueue::new();
    let start = |w: usize,
                 t: u64,
                 trials: Vec<u32>,
                 steps: u64,
                 target: usize,
                 bundles: &mut Vec<Option<Bundle>>,
                 events: &mut EventQueue<Arrival>| {
        let dur = workers.segment_ns(w, trials.len() as u32, targets[target] - steps);
        events.schedule(Nanos(t.saturating_add(dur)), Arrival(w));
        bundles[w] = Some(Bundle {
            trials,
            steps,
            target,
            since_ns: t,
        });
    };
    let take = |next: &mut u32| -> Vec<u32> {
        let k = b.min(n - *next);
        let out = (*next..*next + k).collect();
        *next += k;
        out
    };
    for w in 0..workers.len() {
        if next_trial < n {
            let trials = take(&mut next_trial);
            start(w, 0, trials, 0, 0, &mut bundles, &mut events);
        }
    }
    let mut due = Due::default();
    while let Some((t, w)) = due.next(&mut events) {
        let Some(bundle) = bundles[w].take() else {
            continue;
        };
        let at = targets[bundle.target];
        run.segments.push(Segment {
            worker: w,
            trials: bundle.trials.len() as u32,
            from_steps: bundle.steps,
            to_steps: at,
            start_ns: bundle.since_ns,
            end_ns: t,
        });
        run.makespan_ns = run.makespan_ns.max(t);
        let mut survivors = Vec::new();
        for &i in &bundle.trials {
            run.arrivals[bundle.target].push(t);
            if bundle.target == judged {
                run.trained_steps[i as usize] = at;
                continue;
            }
            let rung = &mut recorded[bundle.target];
            let q = quality[i as usize];
            let stop = cutoff(rung, eta).is_some_and(|c| q < c);
            let pos = rung.partition_point(|&x| x <= q);
            rung.insert(pos, q);
            if stop {
                run.trained_steps[i as usize] = at;
            } else {
                survivors.push(i);
            }
        }
        if !survivors.is_empty() {
            start(
                w,
                t,
                survivors,
                at,
                bundle.target + 1,
                &mut bundles,
                &mut events,
            );
        } else if next_trial < n {
            let trials = take(&mut next_trial);
            start(w, t, trials, 0, 0, &mut bundles, &mut events);
        }
    }
    run
}

/// Hydro's bundle size for `trials` pending trials on `gpus` GPUs under fusion limit `limit`
/// (`hydro/tune/trial_runner.py`, `trial_fusion_according_plan_and_resource`, the branch for
/// trials not grouped by batch size, l. 329–345 at 06a72a7): ⌈N / G⌉ trials per GPU when that is
/// at most the limit, else the limit's bundles evened out, ⌈N / ⌈N / limit⌉⌉. Hydro fuses every
/// pending trial this way before ASHA starts them (all trials are generated at the beginning).
#[must_use]
pub fn hydro_bundle(trials: u32, gpus: u32, limit: u32) -> u32 {
    let (n, g, limit) = (trials.max(1), gpus.max(1), limit.max(1));
    let per_gpu = n.div_ceil(g);
    if per_gpu <= limit {
        per_gpu
    } else {
        n.div_ceil(n.div_ceil(limit))
    }
}

/// Hydro's planner's memory-bounded fusion limit (`hydro/tune/planner.py`,
/// `obtain_memory_bounded_plan`, l. 137–143 at 06a72a7): with one trial profiled at `single`
/// bytes and two fused trials at `dual` bytes on a GPU of `gpu` bytes, ⌊(gpu − single) /
/// (dual − single)⌋ (at least 1; `u32::MAX` when a trial adds no memory).
#[must_use]
pub fn planner_limit(gpu: u64, single: u64, dual: u64) -> u32 {
    let Some(per_trial) = dual.checked_sub(single).filter(|&b| b > 0) else {
        return u32::MAX;
    };
    let limit = gpu.saturating_sub(single) / per_trial;
    u32::try_from(limit).unwrap_or(u32::MAX).max(1)
}

/// The fusion limit the scenario's rule gives Hydro's split.
#[must_use]
pub fn fusion_limit(params: &BubblesParams) -> u32 {
    match params.hpo.bundle {
        BundleRule::HydroProfiled => planner_limit(
            params.gpu_memory_bytes,
            params.trial.memory_bytes(1),
            params.trial.memory_bytes(2),
        )
        .min(params.max_fusion),
        BundleRule::Hydro | BundleRule::Oracle => params.max_fusion,
    }
}

/// The bundle size the scenario's rule picks on `workers`, with its run.
fn chosen_run(params: &BubblesParams, workers: &Workers, quality: &[f64]) -> (u32, AshaRun) {
    match params.hpo.bundle {
        BundleRule::Hydro | BundleRule::HydroProfiled => {
            let b = hydro_bundle(
                params.hpo.trials,
                workers.len() as u32,
                fusion_limit(params),
            );
            (b, simulate(params, workers, b, quality))
        }
        BundleRule::Oracle => best_run(params, workers, quality),
    }
}

/// The best of every bundle size b ≤ `max_fusion`: (b, run).
fn best_run(params: &BubblesParams, workers: &Workers, quality: &[f64]) -> (u32, AshaRun) {
    let most = params.max_fusion.min(params.hpo.trials).max(1);
    let mut best: Option<(u32, AshaRun)> = None;
    for b in 1..=most {
        let r = simulate(params, workers, b, quality);
        if best
            .as_ref()
            .is_none_or(|(_, x)| r.makespan_ns < x.makespan_ns)
        {
            best = Some((b, r));
        }
    }
    best.unwrap_or_else(|| (1, simulate(params, workers, 1, quality)))
}

/// Runs ASHA on 1 exclusive GPU and on 1 GPU + bubbles, each with the rule's bundle size.
#[must_use]
pub fn run(params: &BubblesParams, bubble_rate: &[Vec<f64>]) -> HpoResult {
    let h = &params.hpo;
    let quality = qualities(h.trials, h.seed);
    let alone = Workers::new(&params.trial, bubble_rate, h.gpus_per_stage, false);
    let with = Workers::new(&params.trial, bubble_rate, h.gpus_per_stage, true);
    let (b_alone, r_alone) = chosen_run(params, &alone, &quality);
    let (b_with, r_with) = chosen_run(params, &with, &quality);
    let mut targets = milestones(h.grace_period_steps, h.reduction_factor, h.max_t_steps);
    targets.push(h.max_t_steps);
    let rungs = targets
        .iter()
        .enumerate()
        .map(|(k, &steps)| RungRow {
            steps,
            trials_exclusive: r_alone.arrivals[k].len() as u32,
            trials_with_bubbles: r_with.arrivals[k].len() as u32,
            exclusive_ns: r_alone.arrivals[k].iter().copied().max().unwrap_or(0),
            with_bubbles_ns: r_with.arrivals[k].iter().copied().max().unwrap_or(0),
        })
        .collect();
    let winner_steps = r_alone
        .trained_steps
        .iter()
        .chain(&r_with.trained_steps)
        .copied()
        .max()
        .unwrap_or(0);
    HpoResult {
        tuner: TunerKind::Asha,
        rungs,
        exclusive_ns: r_alone.makespan_ns,
        with_bubbles_ns: r_with.makespan_ns,
        fusion_exclusive: b_alone,
        fusion_with_bubbles: b_with,
        winner_steps,
        winner_alone_ns: alone.segment_ns(0, 1, winner_steps),
        bubble_gpus: (with.len() - 1) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_of_one_instant_come_in_worker_order_whatever_their_scheduling_order() {
        let mut events = EventQueue::new();
        for (t, w) in [(5, 3), (5, 1), (2, 7), (5, 2), (9, 0)] {
            events.schedule(Nanos(t), Arrival(w));
        }
        let mut due = Due::default();
        assert_eq!(due.next(&mut events), Some((2, 7)));
        assert_eq!(due.next(&mut events), Some((5, 1)));
        // Scheduled for the current instant while worker 1 is handled: before workers 2 and 3.
        events.schedule(Nanos(5), Arrival(0));
        let rest: Vec<_> = core::iter::from_fn(|| due.next(&mut events)).collect();
        assert_eq!(rest, [(5, 0), (5, 2), (5, 3), (9, 0)]);
    }
}
