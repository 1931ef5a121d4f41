//! Tiresias' discretised two-dimensional least-attained-service, 2D-LAS (Gu et al., NSDI'19,
//! §3.1–3.2): a job's attained service is GPUs × executed time; K queues split by thresholds on
//! it; a lower queue always goes first, FIFO (by submission) inside a queue; preemptive. A job
//! is demoted when it crosses a threshold (the simulator wakes up exactly then). Starvation
//! guard (§3.2, PROMOTEKNOB): a waiting job whose wait since it last ran exceeds
//! `promote_knob` × its last run goes back to the highest queue, its attained service counted
//! afresh from there.

use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, Policy, Preemption};
use crate::labs::fairness::params::TiresiasParams;
use crate::labs::fairness::sim::{Phase, RoundCtx};

/// Discretised 2D-LAS with a starvation guard. The queues are kept across rounds: a job is
/// filed again when it changes phase ([`RoundCtx::changed`]), when it is promoted (a waiting
/// job's promotion time is known when it stops) and, for running jobs, when its attained
/// service crosses the next threshold (a running job attains gⱼ GPU-ns per ns, so the time is
/// known when it is filed); a round then reads the queues only as far as the simulator needs.
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
        if self.filed[j] == Some((q, submit)) {
            return;
        }
        if let Some((old, s)) = self.filed[j].take() {
            self.queues[old].remove(&(s, j));
        }
        self.queues[q].insert((submit, j));
        self.filed[j] = Some((q, submit));
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
    }
}

impl Policy for Tiresias {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
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
        for q in &self.queues {
            for &(_, j) in q {
                if !emit(j) {
                    return;
                }
            }
        }
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }

    fn wakeup_after_ns(&self, ctx: &RoundCtx<'_>, j: usize) -> Option<u64> {
        self.to_next_threshold_ns(ctx, j)
    }
}
