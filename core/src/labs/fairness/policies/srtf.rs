//! SRTF: shortest remaining time first on oracle remaining times; preempts at any event
//! (paying the checkpoint/resume cost).

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;

use super::{Emit, KeptOrder, Needs, Policy, PolicySpec, Preemption, Runs, WaitingWalk, WalkNext};
use crate::labs::fairness::sim::{Phase, RoundCtx};

/// Shortest remaining time first (oracle).
#[derive(Clone, Debug, Default)]
pub struct Srtf {
    order: KeptOrder,
    /// The jobs filed for the round's waiting walk, once a round asked for one.
    index: Option<Index>,
}

/// The active jobs filed by remaining time, for the waiting walk ([`Policy::walk_waiting`]).
/// A waiting job's remaining time is fixed while it waits. A running job's (at speed 1, the
/// only case the walk serves) is fixed while it pays its checkpoint/resume overhead and then
/// falls by 1 ns per ns, so it is filed by its remaining time while paying and by the instant
/// it would finish, E, afterwards (remaining at t: E − t). Either way the running jobs' order
/// holds from round to round, and those ahead of a waiting job are a prefix of each list.
#[derive(Clone, Debug)]
struct Index {
    /// True when every job runs at speed 1 on every GPU type.
    uniform: bool,
    /// Waiting jobs by (remaining ns, submission ns, job).
    waiting: BTreeSet<(u64, u64, usize)>,
    /// Running jobs still paying their overhead: (remaining ns, submission ns, job), ascending.
    paying: Vec<(u64, u64, usize)>,
    /// (end of the overhead ns, job) of the jobs in `paying`.
    resumes: BTreeSet<(u64, usize)>,
    /// Running jobs past their overhead: (finish instant E ns, submission ns, job), ascending.
    working: Vec<(u64, u64, usize)>,
    /// GPUs of `paying`'s first i jobs at i (rebuilt when it changed).
    paying_gpus: Vec<u64>,
    /// GPUs of `working`'s first i jobs at i.
    working_gpus: Vec<u64>,
    /// Per job: where it is filed.
    filed: Vec<Filed>,
}

/// Where [`Index`] files a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filed {
    Nowhere,
    /// In `waiting`, with its remaining ns.
    Waiting(u64),
    /// In `paying`, with its remaining ns and the end of its overhead, ns.
    Paying(u64, u64),
    /// In `working`, with its finish instant, ns.
    Working(u64),
}

/// Inserts `e` into the ascending list `v` (entries are unique).
fn insert_sorted(v: &mut Vec<(u64, u64, usize)>, e: (u64, u64, usize)) {
    let at = v.partition_point(|x| *x < e);
    v.insert(at, e);
}

/// Removes `e` from the ascending list `v`, if there.
fn remove_sorted(v: &mut Vec<(u64, u64, usize)>, e: (u64, u64, usize)) {
    if let Ok(at) = v.binary_search(&e) {
        v.remove(at);
    }
}

/// The running GPUs of `list`'s first i jobs, for each i.
fn running_sums(ctx: &RoundCtx<'_>, list: &[(u64, u64, usize)], sums: &mut Vec<u64>) {
    sums.clear();
    sums.push(0);
    let mut acc = 0;
    for &(_, _, j) in list {
        acc += u64::from(ctx.jobs[j].gpus);
        sums.push(acc);
    }
}

impl Index {
    fn new(ctx: &RoundCtx<'_>) -> Self {
        Index {
            uniform: ctx
                .jobs
                .iter()
                .all(|j| j.speed.iter().all(|&s| s == 1.0)),
            waiting: BTreeSet::new(),
            paying: Vec::new(),
            resumes: BTreeSet::new(),
            working: Vec::new(),
            paying_gpus: vec![0],
            working_gpus: vec![0],
            filed: vec![Filed::Nowhere; ctx.jobs.len()],
        }
    }

    /// Files job `j` anew where its phase puts it now.
    fn refile(&mut self, ctx: &RoundCtx<'_>, j: usize) {
        let job = &ctx.jobs[j];
        let s = job.submit_ns;
        match core::mem::replace(&mut self.filed[j], Filed::Nowhere) {
            Filed::Nowhere => {}
            Filed::Waiting(rem) => {
                self.waiting.remove(&(rem, s, j));
            }
            Filed::Paying(rem, until) => {
                remove_sorted(&mut self.paying, (rem, s, j));
                self.resumes.remove(&(until, j));
            }
            Filed::Working(end) => remove_sorted(&mut self.working, (end, s, j)),
        }
        self.filed[j] = match job.phase {
            Phase::Pending | Phase::Done => Filed::Nowhere,
            Phase::Waiting => {
                self.waiting.insert((job.remaining_ns, s, j));
                Filed::Waiting(job.remaining_ns)
            }
            Phase::Running => {
                let resume = job.seg_start_ns + job.seg_overhead_ns;
                if ctx.now_ns < resume {
                    insert_sorted(&mut self.paying, (job.remaining_ns, s, j));
                    self.resumes.insert((resume, j));
                    Filed::Paying(job.remaining_ns, resume)
                } else {
                    let end = resume + job.remaining_ns;
                    insert_sorted(&mut self.working, (end, s, j));
                    Filed::Working(end)
                }
            }
        };
    }

    /// Brings the index up to the round: the jobs that changed phase, and the running jobs
    /// whose overhead ended.
    fn refresh(&mut self, ctx: &RoundCtx<'_>) {
        for &j in ctx.changed {
            self.refile(ctx, j);
        }
        while let Some(&(resume, j)) = self.resumes.first() {
            if resume > ctx.now_ns {
                break;
            }
            self.refile(ctx, j);
        }
        running_sums(ctx, &self.paying, &mut self.paying_gpus);
        running_sums(ctx, &self.working, &mut self.working_gpus);
        #[cfg(debug_assertions)]
        self.check(ctx);
    }

    /// Debug builds: every active job is filed with the remaining time it has now.
    #[cfg(debug_assertions)]
    fn check(&self, ctx: &RoundCtx<'_>) {
        if ctx.active.len() > 256 {
            return;
        }
        let now = ctx.now_ns;
        let mut filed = 0;
        for &j in ctx.active {
            let job = &ctx.jobs[j];
            let rem = job.remaining_at(now);
            match self.filed[j] {
                Filed::Waiting(r) | Filed::Paying(r, _) => assert_eq!(r, rem, "job {j}"),
                Filed::Working(end) => assert_eq!(end.saturating_sub(now), rem, "job {j}"),
                Filed::Nowhere => panic!("active job {j} not filed at {now} ns"),
            }
            filed += 1;
        }
        let all = self.waiting.len() + self.paying.len() + self.working.len();
        assert_eq!(all, filed, "filed jobs at {now} ns");
    }

    /// The GPUs of the running jobs whose remaining time at `now` is at most `rem`: ahead of a
    /// waiting job with `rem` left (at equal remaining times a running job goes first).
    fn running_ahead(&self, now: u64, rem: u64) -> u64 {
        let paying = self.paying.partition_point(|e| e.0 <= rem);
        let working = self.working.partition_point(|e| e.0 <= now.saturating_add(rem));
        self.paying_gpus[paying] + self.working_gpus[working]
    }

    /// The whole order from waiting job `from` on, through [`WaitingWalk::every`]: the
    /// waiting jobs from it and the running jobs after it, merged by (remaining, waiting,
    /// submission, job); once `every` returns false, only the running jobs after that point.
    fn walk_every(&self, now: u64, from: (u64, u64, usize), walk: &mut dyn WaitingWalk) {
        let mut waiting = self.waiting.range(from..).peekable();
        let mut p = self.paying.partition_point(|e| e.0 <= from.0);
        let mut w = self
            .working
            .partition_point(|e| e.0 <= now.saturating_add(from.0));
        loop {
            // The next of each list as (remaining, waiting, submission, job).
            let next_waiting = waiting.peek().map(|&&(r, s, j)| (r, true, s, j));
            let next_paying = self.paying.get(p).map(|&(r, s, j)| (r, false, s, j));
            let next_working = self
                .working
                .get(w)
                .map(|&(e, s, j)| (e.saturating_sub(now), false, s, j));
            let Some(next) = [next_waiting, next_paying, next_working]
                .into_iter()
                .flatten()
                .min()
            else {
                return;
            };
            if Some(next) == next_waiting {
                waiting.next();
            } else if Some(next) == next_paying {
                p += 1;
            } else {
                w += 1;
            }
            if !walk.every(next.3) {
                for &(_, _, j) in self.paying[p..].iter().chain(&self.working[w..]) {
                    walk.every(j);
                }
                return;
            }
        }
    }
}

impl Policy for Srtf {
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        let now = ctx.now_ns;
        self.order.emit_by_key(
            ctx.active,
            |j| {
                let job = &ctx.jobs[j];
                Some((job.remaining_at(now), !job.is_running(), job.submit_ns))
            },
            emit,
        );
    }

    /// Only at speed 1 everywhere (a running job's remaining time then falls by 1 ns per ns);
    /// otherwise the round reads [`Policy::order`].
    fn walk_waiting(&mut self, ctx: &RoundCtx<'_>, walk: &mut dyn WaitingWalk) -> bool {
        let index = self.index.get_or_insert_with(|| Index::new(ctx));
        if !index.uniform {
            return false;
        }
        index.refresh(ctx);
        let now = ctx.now_ns;
        for &(rem, s, j) in &index.waiting {
            match walk.waiting(j, index.running_ahead(now, rem)) {
                WalkNext::Next => {}
                WalkNext::Stop => return true,
                WalkNext::Every => {
                    index.walk_every(now, (rem, s, j), walk);
                    return true;
                }
            }
        }
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::Anytime
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (0, 0),
    fair: false,
    needs: Needs::Nothing,
    runs: Runs::Policy(|_, _, _| Box::new(Srtf::default())),
};
