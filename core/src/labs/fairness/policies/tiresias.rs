//! Tiresias' discretised two-dimensional least-attained-service, 2D-LAS (Gu et al., NSDI'19,
//! §3.1–3.2): a job's attained service is GPUs × executed time; K queues split by thresholds on
//! it; a lower queue always goes first, FIFO (by submission) inside a queue; preemptive. A job
//! is demoted when it crosses a threshold (the simulator wakes up exactly then). Starvation
//! guard (§3.2, PROMOTEKNOB): a waiting job whose wait since it last ran exceeds
//! `promote_knob` × its last run goes back to the highest queue, its attained service counted
//! afresh from there.

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, Needs, Policy, PolicySpec, Preemption, Runs, WaitingWalk, WalkNext};
use crate::labs::fairness::params::TiresiasParams;
use crate::labs::fairness::sim::{Phase, RoundCtx};

/// Discretised 2D-LAS with a starvation guard. The queues are kept across rounds: a job is
/// filed again when it changes phase ([`RoundCtx::changed`]), when it is promoted (a waiting
/// job's promotion time is known when it stops) and, for running jobs, when its attained
/// service crosses the next threshold (a running job attains gⱼ GPU-ns per ns, so the time is
/// known when it is filed); a round then reads the queues only as far as the simulator needs.
/// For the round's waiting walk ([`Policy::walk_waiting`]) each queue also keeps its waiting
/// jobs and its running jobs apart, with the running jobs' GPUs summed by (submission, job)
/// rank: the GPUs of the running jobs ahead of a waiting job are those of the queues above
/// its own plus a prefix sum in its own, O(log n).
#[derive(Clone, Debug)]
pub struct Tiresias {
    thresholds_gpu_ns: Vec<u128>,
    promote_knob: f64,
    /// Attained service at the job's last promotion, GPU-ns.
    base: Vec<u128>,
    /// Per queue: its jobs by (submission ns, job).
    queues: Vec<BTreeSet<(u64, usize)>>,
    /// Per job: (queue, submission ns) where it is filed, if it is.
    filed: Vec<Option<(usize, u64)>>,
    /// Waiting jobs that ran before, by (earliest promotion time ns, job).
    due: BTreeSet<(u64, usize)>,
    /// Per job: its entry's time in `due` (`u64::MAX`: none).
    due_at: Vec<u64>,
    /// Running jobs by (time ns their attained service reaches the next threshold, job).
    crossing: BTreeSet<(u64, usize)>,
    /// Per job: its entry's time in `crossing` (`u64::MAX`: none).
    crossing_at: Vec<u64>,
    /// For the waiting walk: per queue, its waiting jobs by (submission ns, job).
    waiting: Vec<BTreeSet<(u64, usize)>>,
    /// Per queue: the GPUs of its running jobs, by the job's rank in (submission, job) order.
    running_gpus: Vec<PrefixSums>,
    /// Per queue: its running jobs by (submission ns, job).
    running: Vec<BTreeSet<(u64, usize)>>,
    /// Per job: where `waiting` and `running_gpus` count it, (queue, running).
    indexed: Vec<Option<(usize, bool)>>,
    /// Per job: its rank in (submission ns, job) order (set at the first round).
    rank: Vec<u32>,
}

/// Sums over positions 0‥n (a Fenwick tree): add at a position and the sum of the positions
/// before one, each in O(log n).
#[derive(Clone, Debug)]
struct PrefixSums {
    tree: Vec<u64>,
    total: u64,
}

impl PrefixSums {
    fn new(n: usize) -> Self {
        PrefixSums {
            tree: vec![0; n + 1],
            total: 0,
        }
    }

    /// Adds `v` at position `i` (`add` false: takes it away).
    fn change(&mut self, i: usize, v: u64, add: bool) {
        if add {
            self.total += v;
        } else {
            self.total -= v;
        }
        let mut k = i + 1;
        while k < self.tree.len() {
            if add {
                self.tree[k] += v;
            } else {
                self.tree[k] -= v;
            }
            k += k & k.wrapping_neg();
        }
    }

    /// The sum over positions before `i`.
    fn before(&self, i: usize) -> u64 {
        let mut sum = 0;
        let mut k = i;
        while k > 0 {
            sum += self.tree[k];
            k -= k & k.wrapping_neg();
        }
        sum
    }
}

impl Tiresias {
    /// A fresh instance for a trace of `jobs` jobs.
    #[must_use]
    pub fn new(p: &TiresiasParams, jobs: usize) -> Self {
        Tiresias {
            thresholds_gpu_ns: p
                .queue_thresholds_gpu_s
                .iter()
                .map(|s| libm::round(s * 1e9) as u128)
                .collect(),
            promote_knob: p.promote_knob,
            base: vec![0; jobs],
            queues: vec![BTreeSet::new(); p.queue_thresholds_gpu_s.len() + 1],
            filed: vec![None; jobs],
            due: BTreeSet::new(),
            due_at: vec![u64::MAX; jobs],
            crossing: BTreeSet::new(),
            crossing_at: vec![u64::MAX; jobs],
            waiting: vec![BTreeSet::new(); p.queue_thresholds_gpu_s.len() + 1],
            running_gpus: vec![PrefixSums::new(jobs); p.queue_thresholds_gpu_s.len() + 1],
            running: vec![BTreeSet::new(); p.queue_thresholds_gpu_s.len() + 1],
            indexed: vec![None; jobs],
            rank: Vec::new(),
        }
    }

    fn attained(&self, ctx: &RoundCtx<'_>, j: usize) -> u128 {
        ctx.jobs[j]
            .attained_gpu_ns(ctx.now_ns)
            .saturating_sub(self.base[j])
    }

    fn queue(&self, ctx: &RoundCtx<'_>, j: usize) -> usize {
        let a = self.attained(ctx, j);
        self.thresholds_gpu_ns
            .iter()
            .take_while(|&&t| a >= t)
            .count()
    }

    /// Running time, ns, until job `j`'s attained service reaches the next threshold (none
    /// past the last).
    fn to_next_threshold_ns(&self, ctx: &RoundCtx<'_>, j: usize) -> Option<u64> {
        let a = self.attained(ctx, j);
        let next = self.thresholds_gpu_ns.iter().find(|&&t| t > a)?;
        let g = u128::from(ctx.jobs[j].gpus.max(1));
        Some(u64::try_from((next - a).div_ceil(g)).unwrap_or(u64::MAX / 4))
    }

    /// True when waiting job `j` has waited `promote_knob` × its last run since it last ran.
    fn promotes(&self, ctx: &RoundCtx<'_>, j: usize) -> bool {
        let job = &ctx.jobs[j];
        let waited = ctx.now_ns - job.last_stop_ns;
        waited as f64 >= self.promote_knob * job.last_segment_ns as f64
    }

    /// Files job `j` in the queue its attained service puts it in (out of where it was) and,
    /// running, at the time it crosses the next threshold.
    fn file(&mut self, ctx: &RoundCtx<'_>, j: usize) {
        let at = core::mem::replace(&mut self.crossing_at[j], u64::MAX);
        if at != u64::MAX {
            self.crossing.remove(&(at, j));
        }
        if ctx.jobs[j].is_running() {
            if let Some(w) = self.to_next_threshold_ns(ctx, j) {
                let at = ctx.now_ns.saturating_add(w);
                self.crossing_at[j] = at;
                self.crossing.insert((at, j));
            }
        }
        let submit = ctx.jobs[j].submit_ns;
        let q = self.queue(ctx, j);
        self.index(ctx, j, Some((q, ctx.jobs[j].is_running())));
        if self.filed[j] == Some((q, submit)) {
            return;
        }
        if let Some((old, s)) = self.filed[j].take() {
            self.queues[old].remove(&(s, j));
        }
        self.queues[q].insert((submit, j));
        self.filed[j] = Some((q, submit));
    }

    /// Counts job `j` in the waiting walk's index as `to` says: (queue, running), or nowhere.
    fn index(&mut self, ctx: &RoundCtx<'_>, j: usize, to: Option<(usize, bool)>) {
        let from = self.indexed[j];
        if from == to {
            return;
        }
        let job = &ctx.jobs[j];
        let g = u64::from(job.gpus);
        let r = self.rank[j] as usize;
        if let Some((q, running)) = from {
            if running {
                self.running_gpus[q].change(r, g, false);
                self.running[q].remove(&(job.submit_ns, j));
            } else {
                self.waiting[q].remove(&(job.submit_ns, j));
            }
        }
        if let Some((q, running)) = to {
            if running {
                self.running_gpus[q].change(r, g, true);
                self.running[q].insert((job.submit_ns, j));
            } else {
                self.waiting[q].insert((job.submit_ns, j));
            }
        }
        self.indexed[j] = to;
    }

    /// Job `j` changed phase: files it again, with its promotion time if it waits after
    /// having run.
    fn changed(&mut self, ctx: &RoundCtx<'_>, j: usize) {
        let at = core::mem::replace(&mut self.due_at[j], u64::MAX);
        if at != u64::MAX {
            self.due.remove(&(at, j));
        }
        let job = &ctx.jobs[j];
        match job.phase {
            Phase::Running => {}
            Phase::Waiting => {
                if self.promote_knob > 0.0 && job.executed_ns > 0 {
                    // The earliest instant the guard can hold (checked exactly when due).
                    let wait = self.promote_knob * job.last_segment_ns as f64;
                    let at = job.last_stop_ns.saturating_add(libm::floor(wait) as u64);
                    self.due_at[j] = at;
                    self.due.insert((at, j));
                }
            }
            Phase::Pending | Phase::Done => {
                self.index(ctx, j, None);
                if let Some((old, s)) = self.filed[j].take() {
                    self.queues[old].remove(&(s, j));
                }
                let at = core::mem::replace(&mut self.crossing_at[j], u64::MAX);
                if at != u64::MAX {
                    self.crossing.remove(&(at, j));
                }
                return;
            }
        }
        self.file(ctx, j);
    }

    /// Debug builds: every active job is filed where a fresh look puts it, and nothing else.
    #[cfg(debug_assertions)]
    fn check(&self, ctx: &RoundCtx<'_>) {
        if ctx.active.len() > 256 {
            return;
        }
        for &j in ctx.active {
            assert_eq!(
                self.filed[j],
                Some((self.queue(ctx, j), ctx.jobs[j].submit_ns)),
                "job {j} filed apart from a fresh look at {} ns",
                ctx.now_ns
            );
        }
        let filed: usize = self.queues.iter().map(BTreeSet::len).sum();
        assert_eq!(filed, ctx.active.len(), "filed jobs at {} ns", ctx.now_ns);
        for (q, jobs) in self.queues.iter().enumerate() {
            let waiting: Vec<(u64, usize)> = jobs
                .iter()
                .copied()
                .filter(|&(_, j)| !ctx.jobs[j].is_running())
                .collect();
            assert!(
                self.waiting[q].iter().copied().eq(waiting),
                "queue {q}'s waiting jobs at {} ns",
                ctx.now_ns
            );
            let running: u64 = jobs
                .iter()
                .filter(|&&(_, j)| ctx.jobs[j].is_running())
                .map(|&(_, j)| u64::from(ctx.jobs[j].gpus))
                .sum();
            assert_eq!(self.running_gpus[q].total, running, "queue {q}'s running GPUs");
            let kept = self.running[q].iter().map(|&(_, j)| u64::from(ctx.jobs[j].gpus));
            assert_eq!(kept.sum::<u64>(), running, "queue {q}'s running jobs");
        }
    }
}

impl Tiresias {
    /// Brings the queues up to date at the start of a round: the jobs that changed phase, the
    /// promotions due and the running jobs whose attained service crossed a threshold.
    fn refresh(&mut self, ctx: &RoundCtx<'_>) {
        if self.rank.is_empty() && !ctx.jobs.is_empty() {
            let mut order: Vec<(u64, usize)> = ctx
                .jobs
                .iter()
                .enumerate()
                .map(|(j, job)| (job.submit_ns, j))
                .collect();
            order.sort_unstable();
            self.rank = vec![0; ctx.jobs.len()];
            for (r, &(_, j)) in order.iter().enumerate() {
                self.rank[j] = r as u32;
            }
        }
        for &j in ctx.changed {
            self.changed(ctx, j);
        }
        // Promotions due: counted afresh from now, back to the highest queue.
        let due: Vec<(u64, usize)> = self.due.range(..=(ctx.now_ns, usize::MAX)).copied().collect();
        for (at, j) in due {
            if self.promotes(ctx, j) {
                self.base[j] = ctx.jobs[j].attained_gpu_ns(ctx.now_ns);
                self.due.remove(&(at, j));
                self.due_at[j] = u64::MAX;
                self.file(ctx, j);
            }
        }
        // Running jobs move down as they attain service: those whose crossing time came.
        while let Some(&(at, j)) = self.crossing.first() {
            if at > ctx.now_ns {
                break;
            }
            self.file(ctx, j);
        }
        #[cfg(debug_assertions)]
        self.check(ctx);
    }

    /// The whole order from `from` in queue `q` on, through [`WaitingWalk::every`]; once it
    /// returns false, only the running jobs after that point.
    fn walk_every(&self, q: usize, from: (u64, usize), walk: &mut dyn WaitingWalk) {
        use core::ops::Bound::{Excluded, Included, Unbounded};
        let mut start = Included(from);
        for k in q..self.queues.len() {
            for &entry in self.queues[k].range((start, Unbounded)) {
                if !walk.every(entry.1) {
                    let running = self.running[k].range((Excluded(entry), Unbounded));
                    for &(_, j) in running.chain(self.running[k + 1..].iter().flatten()) {
                        walk.every(j);
                    }
                    return;
                }
            }
            start = Unbounded;
        }
    }
}

impl Policy for Tiresias {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        self.refresh(ctx);
        for q in &self.queues {
            for &(_, j) in q {
                if !emit(j) {
                    return;
                }
            }
        }
    }

    fn walk_waiting(&mut self, ctx: &RoundCtx<'_>, walk: &mut dyn WaitingWalk) -> bool {
        self.refresh(ctx);
        // The running jobs of the queues above this one: all of them are ahead.
        let mut above = 0;
        for q in 0..self.queues.len() {
            for &(s, w) in &self.waiting[q] {
                let ahead = above + self.running_gpus[q].before(self.rank[w] as usize);
                match walk.waiting(w, ahead) {
                    WalkNext::Next => {}
                    WalkNext::Stop => return true,
                    WalkNext::Every => {
                        self.walk_every(q, (s, w), walk);
                        return true;
                    }
                }
            }
            above += self.running_gpus[q].total;
        }
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }

    fn wakeup_after_ns(&self, ctx: &RoundCtx<'_>, j: usize) -> Option<u64> {
        self.to_next_threshold_ns(ctx, j)
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (0, 0),
    fair: false,
    needs: Needs::Nothing,
    runs: Runs::Policy(|p, _, jobs| Box::new(Tiresias::new(&p.tiresias, jobs))),
};
