//! Gavel's heterogeneity-aware max-min fairness (Narayanan et al., OSDI'20) as its artifact
//! runs it (stanford-futuredata/gavel @c4fa400; "P" = `scheduler/policies/max_min_fairness.py`,
//! "S" = `scheduler/scheduler.py`, line numbers of that commit).
//!
//! - **The allocation** (P lines 42–81, `MaxMinFairnessPolicyWithPerf`, with
//!   `proportional.py` 26–40 and `policy.py` 56–63): an LP over x_jk, the fraction of time job j
//!   spends on GPU type k, maximising min_j Σ_k tp_jk · s_j · x_jk / (w_j · p_j), where tp_jk is
//!   j's throughput on k, s_j its GPU count (scale factor), w_j its priority weight (1) and
//!   p_j = Σ_k tp_jk · n_k / N its throughput with time spread over the types in proportion to
//!   their n_k GPUs; subject to Σ_j s_j · x_jk ≤ n_k, Σ_k x_jk ≤ 1, x ≥ 0. Solved exactly
//!   ([`crate::lp`]); any optimum of the LP is Gavel's allocation (its solver returns one of
//!   them, ours the simplex's vertex).
//! - **Rounds** of `gavel.round_s` (360 s, S line 60): jobs start only at a round's start, and a
//!   round ends early when its last job finishes (S `simulate`, lines 1253–1264).
//! - **When the allocation is recomputed** (S `_update_priorities`, lines 2358–2390): at a
//!   round's start, when jobs arrived or finished since, and at least 1,920 s (S line 67) after
//!   the last recomputation or at the first; it then resets the time each job has received
//!   (S `_reset_time_run_so_far`, 2265–2310: every job starts again at half a round per type,
//!   and the shortfall against its allocation goes into its deficit).
//! - **Priorities** (S lines 2430–2463): per type k, allocation ÷ the share of the type's time
//!   the job received since the reset (allocation × 10⁹ before it received any; 0 for a job
//!   with no allocation on k or no throughput there).
//! - **The round's jobs** (S `_schedule_jobs_on_workers_helper`, 766–856): per type in type
//!   order, the jobs by (priority, deficit, allocation) descending, the lists one after the
//!   other; each job not yet chosen, with throughput on the type, that fits the type's GPUs still
//!   free is chosen for it. A chosen job that arrived after the last recomputation holds no
//!   allocation and is not started (S lines 936–941), though it used up its GPUs in the walk.
//!
//! Ours: GPU types in the cluster's order (Gavel walks V100, P100, K80; list them so); a job's
//! throughput on a type is its speed there (`Job::speed_by_gpu_type`, relative to the type of its
//! duration); every job weighs 1 (Gavel's default priority weight); placement is the lab's.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::params::s_to_ns;
use crate::labs::fairness::sim::{Phase, RoundCtx};
use crate::lp;

/// Least time between recomputations of the allocation, s (S line 67).
const MIN_RESET_INTERVAL_S: f64 = 1920.0;

/// Priority of a job with an allocation that has received no time yet (S line 2447).
const FRESH_PRIORITY: f64 = 1e9;

/// Gavel's max-min allocation of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// Per job, per type: the fraction of time, x_jk.
    pub x: Vec<Vec<f64>>,
    /// The minimum normalised throughput it reaches (the LP's objective).
    pub min_normalized: f64,
}

/// Gavel's max-min LP (P lines 42–81) for jobs with throughputs `tp[j][k]`, GPU counts
/// `scale[j]` and priority weights `weights[j]`, on `workers[k]` GPUs of each type. A job with
/// no throughput anywhere gets no time and does not bound the minimum. `None` without jobs or
/// GPUs.
#[must_use]
pub fn max_min_allocation(
    tp: &[Vec<f64>],
    scale: &[u32],
    weights: &[f64],
    workers: &[u64],
) -> Option<Allocation> {
    let jobs = tp.len();
    let types = workers.len();
    let total: u64 = workers.iter().sum();
    if jobs == 0 || types == 0 || total == 0 {
        return None;
    }
    if types == 1 {
        return Some(one_type(tp, scale, weights, total));
    }
    simplex(tp, scale, weights, workers)
}

/// The LP of [`max_min_allocation`], solved by the simplex.
fn simplex(tp: &[Vec<f64>], scale: &[u32], weights: &[f64], workers: &[u64]) -> Option<Allocation> {
    let jobs = tp.len();
    let types = workers.len();
    let total: u64 = workers.iter().sum();
    // Variables: x_jk at j·types + k, then t. Rows: the minimum, the types' GPUs, each job's
    // time.
    let n = jobs * types + 1;
    let mut rows: Vec<Vec<f64>> = Vec::with_capacity(2 * jobs + types);
    let mut b: Vec<f64> = Vec::with_capacity(2 * jobs + types);
    for j in 0..jobs {
        let proportional: f64 = (0..types)
            .map(|k| tp[j][k] * workers[k] as f64 / total as f64)
            .sum();
        if proportional <= 0.0 {
            continue;
        }
        let mut row = vec![0.0; n];
        for k in 0..types {
            row[j * types + k] =
                -tp[j][k] * f64::from(scale[j]) / (weights[j] * proportional);
        }
        row[n - 1] = 1.0;
        rows.push(row);
        b.push(0.0);
    }
    for k in 0..types {
        let mut row = vec![0.0; n];
        for j in 0..jobs {
            row[j * types + k] = f64::from(scale[j]);
        }
        rows.push(row);
        b.push(workers[k] as f64);
    }
    for j in 0..jobs {
        let mut row = vec![0.0; n];
        row[j * types..(j + 1) * types].fill(1.0);
        rows.push(row);
        b.push(1.0);
    }
    let mut c = vec![0.0; n];
    c[n - 1] = 1.0;
    let s = lp::maximize(&c, &rows, &b).ok()?;
    // Gavel clips the solver's values to [0, 1] (P line 81).
    let x = (0..jobs)
        .map(|j| {
            (0..types)
                .map(|k| s.x[j * types + k].clamp(0.0, 1.0))
                .collect()
        })
        .collect();
    Some(Allocation {
        x,
        min_normalized: s.objective,
    })
}

/// The LP on one GPU type, in closed form: p_j = tp_j, so job j's normalised throughput is
/// s_j · x_j / w_j, and the optimum is t* = min(min_j s_j / w_j, N / Σ_j w_j) (x_j ≤ 1 bounds the
/// first, the GPUs the second). Of its optima this returns x_j = t* · w_j / s_j, each job at
/// exactly the level (the simplex's size grows with the active jobs, and one type is the common
/// case).
fn one_type(tp: &[Vec<f64>], scale: &[u32], weights: &[f64], total: u64) -> Allocation {
    let runs = |j: usize| tp[j][0] > 0.0;
    let jobs = tp.len();
    let w_sum: f64 = (0..jobs).filter(|&j| runs(j)).map(|j| weights[j]).sum();
    let level = (0..jobs)
        .filter(|&j| runs(j))
        .map(|j| f64::from(scale[j]) / weights[j])
        .fold(total as f64 / w_sum, f64::min);
    let x = (0..jobs)
        .map(|j| {
            let x = if runs(j) {
                level * weights[j] / f64::from(scale[j])
            } else {
                0.0
            };
            vec![x.clamp(0.0, 1.0)]
        })
        .collect();
    Allocation {
        x,
        min_normalized: if w_sum > 0.0 { level } else { 0.0 },
    }
}

/// Gavel's max-min fairness with its round mechanism.
#[derive(Clone, Debug)]
pub struct Gavel {
    /// Round length, ns.
    round_ns: u64,
    /// Heterogeneity-aware (`max_min_fairness_perf`); false: the LP sees every throughput as 1
    /// (`max_min_fairness`, P lines 10–32), the baseline Gavel's paper compares against.
    aware: bool,
    /// Per job: its allocation per type (empty: none).
    alloc: Vec<Vec<f64>>,
    /// Per job: seconds run per type since the last reset (empty: not an active job).
    job_time_s: Vec<Vec<f64>>,
    /// Per job: deficit per type, s (S `_deficits`).
    deficit_s: Vec<Vec<f64>>,
    /// Per type: seconds run by every job since the last reset.
    worker_time_s: Vec<f64>,
    /// Per job: seen arrive.
    known: Vec<bool>,
    /// Jobs arrived or finished since the last recomputation.
    need_update: bool,
    /// Time of the last recomputation, ns (0 also before the first, as in S).
    last_reset_ns: u64,
    /// Start of the current round, ns.
    round_start_ns: u64,
    /// The current round's started jobs and their types.
    scheduled: Vec<(usize, u32)>,
    /// Per job: the type it was given this round (`u32::MAX`: none).
    assigned: Vec<u32>,
}

impl Gavel {
    /// A fresh instance with rounds of `round_s`, for a run of `jobs` jobs on `types` GPU types;
    /// `aware` false gives the heterogeneity-agnostic policy.
    #[must_use]
    pub fn new(round_s: f64, jobs: usize, types: usize, aware: bool) -> Self {
        Gavel {
            round_ns: s_to_ns(round_s).max(1),
            aware,
            alloc: vec![Vec::new(); jobs],
            job_time_s: vec![Vec::new(); jobs],
            deficit_s: vec![Vec::new(); jobs],
            worker_time_s: vec![0.0; types],
            known: vec![false; jobs],
            need_update: false,
            last_reset_ns: 0,
            round_start_ns: 0,
            scheduled: Vec::new(),
            assigned: vec![u32::MAX; jobs],
        }
    }

    fn half_round_s(&self) -> f64 {
        self.round_ns as f64 / 2e9
    }

    /// Counts the last round's time (S `_done_callback`, lines 3071–3077), drops the jobs that
    /// finished and adds the ones that arrived.
    fn account(&mut self, ctx: &RoundCtx<'_>) {
        for &(j, k) in &self.scheduled {
            let job = &ctx.jobs[j];
            let end = match job.phase {
                Phase::Running => ctx.now_ns,
                Phase::Done => job.finish_ns.min(ctx.now_ns),
                _ => self.round_start_ns,
            };
            let ran_s = end.saturating_sub(self.round_start_ns) as f64 / 1e9;
            if let Some(t) = self.job_time_s[j].get_mut(k as usize) {
                *t += ran_s;
                self.worker_time_s[k as usize] += ran_s;
            }
        }
        self.scheduled.clear();
        let types = self.worker_time_s.len();
        for j in 0..self.known.len() {
            if self.known[j] && !self.job_time_s[j].is_empty() && ctx.jobs[j].phase == Phase::Done
            {
                self.job_time_s[j].clear();
                self.need_update = true;
            }
        }
        for &j in ctx.active {
            if !self.known[j] {
                self.known[j] = true;
                self.job_time_s[j] = vec![self.half_round_s(); types];
                self.deficit_s[j] = vec![0.0; types];
                self.need_update = true;
            }
        }
    }

    /// Recomputes the allocation when due (S lines 2371–2390, 2265–2310).
    fn maybe_reset(&mut self, ctx: &RoundCtx<'_>) {
        let now = ctx.now_ns;
        let due = now - self.last_reset_ns >= s_to_ns(MIN_RESET_INTERVAL_S)
            || self.last_reset_ns == 0;
        if !(self.need_update && due) {
            return;
        }
        let elapsed_s = (now - self.last_reset_ns) as f64 / 1e9;
        let half = self.half_round_s();
        for k in 0..self.worker_time_s.len() {
            self.worker_time_s[k] = 0.0;
            for j in 0..self.job_time_s.len() {
                if self.job_time_s[j].is_empty() {
                    continue;
                }
                let received = self.job_time_s[j][k] - half;
                let owed = self.alloc[j].get(k).map_or(0.0, |x| x * elapsed_s);
                self.deficit_s[j][k] += owed - received;
                self.job_time_s[j][k] = half;
                self.worker_time_s[k] += half;
            }
        }
        self.last_reset_ns = now;
        self.need_update = false;
        for a in &mut self.alloc {
            a.clear();
        }
        let jobs: Vec<usize> = ctx
            .active
            .iter()
            .copied()
            .filter(|&j| !self.job_time_s[j].is_empty())
            .collect();
        let types = self.worker_time_s.len() as u32;
        let tp: Vec<Vec<f64>> = jobs
            .iter()
            .map(|&j| {
                (0..types)
                    .map(|k| if self.aware { ctx.jobs[j].speed_on(k) } else { 1.0 })
                    .collect()
            })
            .collect();
        let scale: Vec<u32> = jobs.iter().map(|&j| ctx.jobs[j].gpus).collect();
        if let Some(a) = max_min_allocation(&tp, &scale, &vec![1.0; jobs.len()], ctx.gpus_by_type)
        {
            for (i, &j) in jobs.iter().enumerate() {
                self.alloc[j].clone_from(&a.x[i]);
            }
        }
    }

    /// Job `j`'s priority on type `k` (S lines 2430–2463).
    fn priority(&self, ctx: &RoundCtx<'_>, j: usize, k: usize) -> f64 {
        let Some(&x) = self.alloc[j].get(k) else {
            return 0.0;
        };
        if x == 0.0 || ctx.jobs[j].speed_on(k as u32) <= 0.0 {
            return 0.0;
        }
        let worker = self.worker_time_s[k];
        let fraction = if worker == 0.0 {
            0.0
        } else {
            self.job_time_s[j][k] / worker
        };
        if fraction > 0.0 {
            x / fraction
        } else {
            x * FRESH_PRIORITY
        }
    }

    /// The round's chosen jobs that hold an allocation (the others are not started, S lines
    /// 936–941).
    fn started(&self, ctx: &RoundCtx<'_>) -> Vec<(usize, u32)> {
        self.choose(ctx)
            .into_iter()
            .filter(|&(j, _)| !self.alloc[j].is_empty())
            .collect()
    }

    /// The round's (job, type) choices (S lines 766–856), in the helper's order.
    fn choose(&self, ctx: &RoundCtx<'_>) -> Vec<(usize, u32)> {
        let types = self.worker_time_s.len();
        let active: Vec<usize> = ctx
            .active
            .iter()
            .copied()
            .filter(|&j| !self.job_time_s[j].is_empty())
            .collect();
        let mut queue: Vec<(usize, u32)> = Vec::with_capacity(active.len() * types);
        for k in 0..types {
            let key = |j: usize| {
                let x = self.alloc[j].get(k).copied().unwrap_or(0.0);
                (self.priority(ctx, j, k), self.deficit_s[j][k], x)
            };
            let mut entries: Vec<(usize, (f64, f64, f64))> =
                active.iter().map(|&j| (j, key(j))).collect();
            // Descending, stable: equal keys keep submission order (Python's sorted(reverse)).
            entries.sort_by(|a, b| {
                (b.1 .0.total_cmp(&a.1 .0))
                    .then(b.1 .1.total_cmp(&a.1 .1))
                    .then(b.1 .2.total_cmp(&a.1 .2))
            });
            queue.extend(entries.into_iter().map(|(j, _)| (j, k as u32)));
        }
        let mut left: Vec<u64> = ctx.gpus_by_type.to_vec();
        let mut taken = vec![false; ctx.jobs.len()];
        let mut chosen = Vec::new();
        for (j, k) in queue {
            let g = u64::from(ctx.jobs[j].gpus);
            let free = &mut left[k as usize];
            if *free == 0 || taken[j] || ctx.jobs[j].speed_on(k) <= 0.0 || g > *free {
                continue;
            }
            *free -= g;
            taken[j] = true;
            chosen.push((j, k));
        }
        chosen
    }
}

impl Policy for Gavel {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        if ctx.now_ns != self.round_start_ns || self.scheduled.is_empty() {
            self.account(ctx);
            self.maybe_reset(ctx);
            for &(j, _) in &self.scheduled {
                self.assigned[j] = u32::MAX;
            }
            let mut started = self.started(ctx);
            if started.is_empty() && ctx.running.is_empty() {
                // Nothing would run: Gavel's simulator then forces a recomputation (S lines
                // 1275–1279, where no arrival is left; with arrivals left it idles to the next
                // one, which a scheduler cannot know of, so here it recomputes at once).
                self.last_reset_ns = 0;
                self.need_update = true;
                self.maybe_reset(ctx);
                started = self.started(ctx);
            }
            // Each type's jobs largest first (S lines 871–874), the types in order.
            started.sort_by_key(|&(j, k)| (k, core::cmp::Reverse(ctx.jobs[j].gpus)));
            for a in &mut self.assigned {
                *a = u32::MAX;
            }
            for &(j, k) in &started {
                self.assigned[j] = k;
            }
            self.scheduled = started;
            self.round_start_ns = ctx.now_ns;
        }
        for &(j, _) in &self.scheduled {
            if !emit(j) {
                break;
            }
        }
    }

    fn preemption(&self) -> Preemption {
        Preemption::Rounds(self.round_ns)
    }

    fn type_preference(&self, _ctx: &RoundCtx<'_>, job: usize) -> Option<Vec<u32>> {
        let k = self.assigned[job];
        (k != u32::MAX).then(|| vec![k])
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (1, 1),
    fair: true,
    needs: Needs::GpuTypes,
    runs: Runs::Policy(|p, _, jobs| {
        Box::new(Gavel::new(p.gavel.round_s, jobs, p.cluster.type_count(), true))
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_on_two_jobs_and_two_types_is_the_hand_solved_optimum() {
        // Two single-GPU jobs on one V100 (type 0) and one K80 (type 1); job 0 runs at 4 and 1,
        // job 1 at 2 and 1. p_0 = (4 + 1)/2 = 2.5 and p_1 = (2 + 1)/2 = 1.5, so with a, b job
        // 0's fractions and c, d job 1's, the normalised throughputs are (4a + b)/2.5 and
        // (2c + d)/1.5. For a minimum t = 1: 4a + b = 3a + (a + b) ≤ 3a + 1 needs a ≥ 1/2,
        // 2c + d = c + (c + d) ≤ c + 1 needs c ≥ 1/2, and a + c ≤ 1 makes both 1/2; then
        // b ≥ 1/2 and d ≥ 1/2 with a + b ≤ 1, c + d ≤ 1 make them 1/2. Every GPU is used
        // (a + c = b + d = 1) and no t > 1 fits, so the optimum is unique: all 1/2, t = 1
        // (the V100 is split evenly although job 0 gains more on it: each job is measured
        // against its own equal share).
        let tp = vec![vec![4.0, 1.0], vec![2.0, 1.0]];
        let a = max_min_allocation(&tp, &[1, 1], &[1.0, 1.0], &[1, 1]).unwrap();
        assert!((a.min_normalized - 1.0).abs() < 1e-9, "{a:?}");
        for row in &a.x {
            for &x in row {
                assert!((x - 0.5).abs() < 1e-9, "{a:?}");
            }
        }
    }

    #[test]
    fn the_closed_form_on_one_type_reaches_the_simplex_optimum() {
        // Job sizes and weights; 8 GPUs.
        let cases: [(&[u32], &[f64]); 4] = [
            (&[1, 4], &[1.0, 1.0]),
            (&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1], &[1.0; 10]),
            (&[2, 8, 4, 1], &[1.0, 2.0, 0.5, 1.0]),
            (&[8, 8, 8], &[1.0, 1.0, 1.0]),
        ];
        for (scale, weights) in cases {
            let tp: Vec<Vec<f64>> = scale.iter().map(|_| vec![1.5]).collect();
            let closed = one_type(&tp, scale, weights, 8);
            let lp = simplex(&tp, scale, weights, &[8]).unwrap();
            assert!((closed.min_normalized - lp.min_normalized).abs() < 1e-9, "{scale:?}");
            let used: f64 = closed.x.iter().zip(scale).map(|(x, &s)| x[0] * f64::from(s)).sum();
            assert!(used <= 8.0 + 1e-9, "{scale:?}: {used} GPUs");
        }
    }

    #[test]
    fn one_type_shares_time_by_gpu_count() {
        // One type of 4 GPUs, jobs of 1 and 4 GPUs: normalised throughputs x_0 and 4·x_1 with
        // x_0 + 4·x_1 ≤ 4 and each x ≤ 1: t = min(1, …) = 1 needs x_0 = 1, x_1 ≥ 1/4, and the
        // GPUs allow x_1 ≤ 3/4.
        let a = max_min_allocation(&[vec![1.0], vec![1.0]], &[1, 4], &[1.0, 1.0], &[4]).unwrap();
        assert!((a.min_normalized - 1.0).abs() < 1e-9, "{a:?}");
        assert!((a.x[0][0] - 1.0).abs() < 1e-9);
        assert!(a.x[1][0] >= 0.25 - 1e-9 && a.x[1][0] <= 0.75 + 1e-9, "{a:?}");
    }
}
