//! Slot admission after Chronus (Gao, Ye et al., "Chronus: A Novel Deadline-aware Scheduler
//! for Deep Learning Training Jobs", SoCC'21): its artifact's admission, lease slots, plans,
//! rescue and fill orders (S-Lab-System-Group/ChronusArtifact @bc7e15f,
//! `code/alg/scheduler/time_aware_with_lease.py` "T", `code/alg/scheduler/solver.py` "S"),
//! with the plan of its no-Gurobi fallback, not its MIP (below, "Not Chronus"). SLO jobs (jobs
//! with a deadline) are admitted only when they pack in whole lease slots before their
//! deadline beside the jobs already admitted; admitted jobs run in their planned slots whatever
//! else waits; the rest take the GPUs left.
//!
//! - **Lease slots.** Time is cut into slots of `lease_s` (20 min in every experiment,
//!   `batch_run.sh`); at each slot boundary every running job is released and chosen again
//!   (T `flush_lease_jobs`, lines 763–1017). A job in its planned slot, or started by the
//!   rescue, holds its GPUs to the boundary; any other holds them to the next tick.
//! - **Estimate** (T lines 1328–1332): E = m × d × (1 + c_g/L), m = 1.1, d the isolated duration,
//!   c_g = 0.5 min × (1 + log₂ g) the artifact's resume + checkpoint time per lease (T lines
//!   35–36); a job still needs ⌈(E − work done)/L⌉ slots (T lines 422, 798).
//! - **Arrivals** come at the first tick (`tick_s`, 5 min: T `BEST_SLOT`, lines 30, 1192–1200)
//!   at or after submission, after the boundary's plans; each is checked in turn
//!   ([`SlotAdmission::admit`]: T lines 1261–1402, S `batch_fast_check_if_packable`) by packing
//!   it beside the plans with the admitted jobs not yet planned and this tick's earlier
//!   arrivals (a rejected one's row stays), in slots from the next one to the end of its window (⌊D/L⌋, S
//!   `compute_maximum_lease`). Admitted: planned at the next boundary; rejected: run as a
//!   best-effort job, counted as an SLO job that missed if it does not finish by D.
//! - **Planning at a boundary** ([`SlotAdmission::plan_unplanned`]: the artifact's fallback, S
//!   `batch_fast_job_selection`, lines 297–344): each admitted job not yet planned takes the
//!   first of its deadlines, by value, whose window still holds its slots, as late as they fit.
//! - **At a tick** (and each boundary) the jobs are offered in classes: admitted jobs planned in
//!   the current slot; the *rescue* (T lines 455–478, only with slots ≤ 30 min): rejected SLO
//!   jobs whose remaining work (by the trace's duration, as the artifact's) fits what is left of
//!   the slot, least remaining GPU-time first; between boundaries, the running jobs that hold no
//!   planned slot, in the reverse of the order the artifact preempts them (T lines 519–541 and
//!   `best_func`, lines 46–49), so that only those the rescued jobs need are preempted; then the
//!   waiting in `best_func` order, descending (T `opportunistic_run`, lines 346–381):
//!   best-effort and rejected jobs by least remaining GPU-time, admitted jobs not planned now by
//!   least slack × GPUs, and last the SLO jobs that can no longer meet their deadline, most
//!   overdue × GPUs first.
//! - **Between ticks** free GPUs go to the waiting in the artifact's second filler's order
//!   (T `filling_jobs`, lines 1137–1155, ascending priority then emergence): hopeless jobs
//!   first, least overdue × GPUs first; then admitted jobs, most slack × GPUs first; then
//!   rejected SLO jobs, then best-effort jobs, each by most remaining GPU-time first.
//! - **Re-planning.** At each boundary the slots an admitted job no longer needs (it ran on
//!   spare GPUs) are released from the earliest (T lines 799–810). No slot is added: the
//!   artifact always places planned jobs (T line 991).
//!
//! **Not Chronus** (why the policy carries a name of its own; docs/MODEL.md has the list):
//! - *The plan.* The artifact re-solves a MIP over every admitted job's slots at each lease
//!   with the `adaptive` objective (S lines 348–424, T lines 769–772; `batch_run.sh
//!   --mip_objective=adaptive`); without Gurobi it takes the fallback above, which runs here.
//! - Slots released by jobs ahead of plan are freed at the next boundary, not each minute (T
//!   lines 422–435); free GPUs are handed out at once, not on odd minutes.
//! - *The rescue* preempts, in the artifact's order, the jobs the rescued ones need (the
//!   artifact stops at the first prefix of its order that frees enough GPUs); it does not
//!   promote a rescued job to admitted (T lines 475–478); a job it would rescue that starts on
//!   free GPUs between ticks also holds them to the boundary.
//! - The checkpoint cost is our simulator's (per restart) rather than the artifact's lump sum
//!   at completion (T lines 398–402); placement is the lab's.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::{Emit, KeptOrder, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::params::{s_to_ns, FairnessParams};
use crate::labs::fairness::sim::{Phase, RoundCtx};

/// The order classes of a round, first to last: admitted jobs planned in this slot; rejected
/// SLO jobs the rescue starts; between slot boundaries, the running jobs that hold no planned
/// slot (kept unless the two classes before need their GPUs, in the reverse of the order the
/// artifact preempts them: `best_func` ascending, T lines 46–49 and 541); then the waiting.
const PLANNED_NOW: u8 = 0;
const RESCUE: u8 = 1;
/// Added to a class from [`BEST_EFFORT`] on for a running job between boundaries.
const KEPT: u8 = 2;
const BEST_EFFORT: u8 = 5;
const ADMITTED_LATER: u8 = 6;
const HOPELESS: u8 = 7;
/// The first of the classes of waiting jobs between ticks (the artifact's second filler).
const FILL: u8 = 8;

/// The artifact's resume + checkpoint time per lease for each doubling of a job's GPUs
/// (`RESUME_OVER_HEAD` + `CHECKPOINT_OVER_HEAD` = 0.5 min, T lines 35–36), ns.
const RESTART_PER_LEASE_NS: u64 = 30_000_000_000;

/// The artifact's rescue runs only with leases of at most 30 minutes (T line 455).
const RESCUE_MAX_LEASE_NS: u64 = 1_800_000_000_000;

/// Admission and lease-slot plans after Chronus.
#[derive(Clone, Debug)]
pub struct SlotAdmission {
    /// Slot length L, ns.
    lease_ns: u64,
    /// Period of the ticks, ns (`None`: none; jobs arrive at submission).
    tick_ns: Option<u64>,
    /// The rescue runs at ticks (slots of at most 30 minutes).
    rescue: bool,
    /// Multiple of the remaining work a plan covers.
    margin: f64,
    /// GPUs planned per slot index (slot k = [kL, (k+1)L)), by admitted jobs' plans.
    planned: BTreeMap<u64, u64>,
    /// Per job: its planned slots, latest first (empty: no plan).
    plans: Vec<Vec<u64>>,
    /// Per job: admitted (true) or rejected (false); `None` for best-effort jobs.
    admitted: Vec<Option<bool>>,
    /// Admitted jobs that hold a plan.
    holding: Vec<usize>,
    /// Admitted jobs without a plan yet (admitted since the last slot boundary; the
    /// artifact's `cache_solution` None), in order of admission.
    unplanned: Vec<usize>,
    /// The rows of this tick's arrivals, in order, admitted or rejected (T lines 1261–1402: the
    /// lists the next arrival of the tick is checked with; a rejected job's stays, T lines
    /// 1219–1253).
    tick_rows: Vec<Row>,
    /// The instant `tick_rows` belong to.
    rows_at_ns: u64,
    /// How many of `unplanned` were admitted before this tick (the rest are in `tick_rows`).
    unplanned_before_tick: usize,
    /// The last slot whose boundary was handled ([`SlotAdmission::boundary`]).
    boundary_slot: Option<u64>,
    order: KeptOrder,
}

/// A job in a packing check: its GPUs (as the artifact counts them), the slots it needs, and
/// per deadline the end of its window (exclusive slot index) and that deadline's value.
#[derive(Clone, Debug)]
struct Row {
    job: usize,
    gpus: u64,
    need: u64,
    ends: Vec<(u64, f64)>,
    /// A rejected strict job's row whose window is still to be widened.
    widen: bool,
}

/// GPUs a job counts for in plans: 3–4 as 4, 5–7 as 8 (the artifact's `convert_to_bin`, T
/// lines 83–87).
fn plan_gpus(gpus: u32) -> u64 {
    match gpus {
        3 | 4 => 4,
        5..=7 => 8,
        g => u64::from(g),
    }
}

/// Takes `need` slots of `gpus` GPUs among the first `end` of `free` (free GPUs per slot),
/// scanning back from the last, in each slot where they fit; takes them from `free` and returns
/// their indices, latest first. Fewer than `need` when there are not enough (the scan stops
/// once the slots left could not make up the rest: the artifact's goes on, but a row short of
/// its slots fails the same).
fn take_slots(free: &mut [u64], gpus: u64, need: u64, end: u64) -> Vec<u64> {
    let mut found = Vec::new();
    let mut k = end.min(free.len() as u64);
    while (found.len() as u64) < need && k >= need - found.len() as u64 {
        k -= 1;
        if free[k as usize] >= gpus {
            free[k as usize] -= gpus;
            found.push(k);
        }
    }
    found
}

impl SlotAdmission {
    /// A fresh instance for a run of `jobs` jobs.
    #[must_use]
    pub fn new(params: &FairnessParams, jobs: usize) -> Self {
        let lease_ns = s_to_ns(params.chronus.lease_s).max(1);
        let tick_ns = Some(s_to_ns(params.chronus.tick_s)).filter(|&t| t > 0);
        SlotAdmission {
            lease_ns,
            tick_ns,
            rescue: tick_ns.is_some() && lease_ns <= RESCUE_MAX_LEASE_NS,
            margin: params.chronus.estimate_margin,
            planned: BTreeMap::new(),
            plans: alloc::vec![Vec::new(); jobs],
            admitted: alloc::vec![None; jobs],
            holding: Vec::new(),
            unplanned: Vec::new(),
            tick_rows: Vec::new(),
            rows_at_ns: 0,
            unplanned_before_tick: 0,
            boundary_slot: None,
            order: KeptOrder::default(),
        }
    }

    /// Lease slots job `j` still needs at `now`: ⌈(E − done)/L⌉, E = m × d × (1 + c_g/L) the
    /// artifact's estimate of its whole run (d its isolated duration, m the margin, c_g =
    /// (0.4 + 0.1) min × (1 + log₂ g) its resume and checkpoint time per lease; T lines
    /// 1328–1332, 35–36) and `done` the work it has done (T lines 422 and 798).
    fn slots_needed(&self, ctx: &RoundCtx<'_>, j: usize) -> u64 {
        let job = &ctx.jobs[j];
        let restart_ns = RESTART_PER_LEASE_NS as f64 * (1.0 + libm::log2(f64::from(job.gpus.max(1))));
        let estimate = self.margin * job.duration_ns as f64 * (1.0 + restart_ns / self.lease_ns as f64);
        let done = job.duration_ns - job.remaining_at(ctx.now_ns);
        libm::ceil((estimate - done as f64).max(0.0) / self.lease_ns as f64) as u64
    }

    /// Job `j`'s row: per deadline, first the strictest, the slot its window ends at
    /// (`compute_maximum_lease`, S lines 7–8: ⌊D/L⌋) and its value.
    fn row(&self, ctx: &RoundCtx<'_>, j: usize) -> Row {
        let job = &ctx.jobs[j];
        let first = job.deadline_ns.map(|d| (d / self.lease_ns, 1.0));
        let later = job.later_deadlines.iter().map(|l| (l.at_ns / self.lease_ns, l.value));
        Row {
            job: j,
            gpus: plan_gpus(job.gpus),
            need: self.slots_needed(ctx, j),
            ends: first.into_iter().chain(later).collect(),
            widen: false,
        }
    }

    /// Free GPUs beside the plans in each slot of `first .. end` (index = slot − `first`).
    fn free_slots(&self, first: u64, end: u64, total: u64) -> Vec<u64> {
        let mut free = alloc::vec![total; end.saturating_sub(first) as usize];
        for (&k, &g) in self.planned.range(first..end.max(first)) {
            free[(k - first) as usize] = total.saturating_sub(g);
        }
        free
    }

    /// The artifact's admission check (S `batch_fast_check_if_packable`, lines 262–293): every
    /// row packed into `free` (the slots from `first` on), in order of most GPUs, then least
    /// slack, then latest window end, each job once, by the deadline that comes first in that
    /// order (its strictest); false at the first that does not fit.
    fn packs(rows: &[&Row], first: u64, free: &[u64]) -> bool {
        let mut entries: Vec<(u64, u64, u64, usize)> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            for &(end, _) in &r.ends {
                entries.push((r.gpus, r.need, end, i));
            }
        }
        // (−GPUs, slack = window − need, −window end); stable, as Python's sort.
        entries.sort_by_key(|&(g, need, end, _)| {
            (core::cmp::Reverse(g), end as i128 - need as i128, core::cmp::Reverse(end))
        });
        let mut seen = alloc::vec![false; rows.len()];
        let mut free = free.to_vec();
        for (gpus, need, end, i) in entries {
            if core::mem::replace(&mut seen[i], true) || need == 0 {
                continue;
            }
            let found = take_slots(&mut free, gpus, need, end.saturating_sub(first));
            if (found.len() as u64) < need {
                return false;
            }
        }
        true
    }

    /// Releases the plans of admitted jobs that finished.
    fn forget_finished(&mut self, ctx: &RoundCtx<'_>) {
        let mut i = 0;
        while i < self.holding.len() {
            let j = self.holding[i];
            if ctx.jobs[j].phase == Phase::Done {
                let plan = core::mem::take(&mut self.plans[j]);
                Self::release(&mut self.planned, plan_gpus(ctx.jobs[j].gpus), &plan);
                self.holding.swap_remove(i);
            } else {
                i += 1;
            }
        }
        self.unplanned.retain(|&j| ctx.jobs[j].phase != Phase::Done);
    }

    fn release(planned: &mut BTreeMap<u64, u64>, gpus: u64, slots: &[u64]) {
        for &k in slots {
            if let Some(v) = planned.get_mut(&k) {
                *v = v.saturating_sub(gpus);
                if *v == 0 {
                    planned.remove(&k);
                }
            }
        }
    }

    /// Decides on SLO job `j` arriving now (at a tick, after the boundary's plans; T
    /// `flush_event_jobs_with_cache_solution`, lines 1261–1402): admitted when it packs at
    /// its strictest deadline beside the plans, the admitted jobs not yet planned and this
    /// tick's earlier arrivals, in slots from the next one on. A rejected job's row stays in
    /// the check for the rest of the tick: a strict job's with its window widened to the
    /// shortest that packs (the artifact's binary search, T lines 1219–1242, which never
    /// admits: `TOLERATE_RATIO` = 1.0), a soft job's as it is, so that no later arrival of the
    /// tick packs.
    fn admit(&mut self, ctx: &RoundCtx<'_>, j: usize) -> bool {
        if self.rows_at_ns != ctx.now_ns {
            self.tick_rows.clear();
            self.rows_at_ns = ctx.now_ns;
            self.unplanned_before_tick = self.unplanned.len();
        }
        let first = ctx.now_ns / self.lease_ns + 1;
        let total = ctx.total_gpus;
        let earlier = &self.unplanned[..self.unplanned_before_tick];
        let earlier: Vec<Row> = earlier.iter().map(|&u| self.row(ctx, u)).collect();
        self.widen_rejected(&earlier, first, total);
        let new = self.row(ctx, j);
        let mut rows: Vec<&Row> = earlier.iter().chain(&self.tick_rows).collect();
        rows.push(&new);
        let last_end = new.ends.last().map_or(0, |e| e.0);
        let horizon = rows.iter().flat_map(|r| r.ends.iter().map(|e| e.0)).max().unwrap_or(first);
        let admitted = new.gpus <= total
            && first + new.need <= last_end
            && Self::packs(&rows, first, &self.free_slots(first, horizon, total));
        // A rejected strict job's window is widened when the next arrival of the tick comes.
        let widen = !admitted && new.ends.len() == 1;
        self.tick_rows.push(Row { widen, ..new });
        admitted
    }

    /// Widens the window of each rejected strict job of this tick not yet widened to the
    /// shortest that packs beside the rows before it (the artifact's binary search, T lines
    /// 1221–1238, between its deadline's window and one past every window and plan by the
    /// slots it needs), or to the widest when none does. Done when the next arrival of the tick
    /// comes, with what the check saw at the job's own arrival (nothing changes within an
    /// instant), so that a tick's last rejection costs no search.
    fn widen_rejected(&mut self, earlier: &[Row], first: u64, total: u64) {
        for i in 0..self.tick_rows.len() {
            if !self.tick_rows[i].widen {
                continue;
            }
            let r = &self.tick_rows[i];
            let before: Vec<&Row> = earlier.iter().chain(&self.tick_rows[..i]).collect();
            let widest = before.iter().chain(core::iter::once(&r)).flat_map(|r| r.ends.iter().map(|e| e.0));
            let last_planned = self.planned.keys().next_back().map_or(0, |k| k + 1);
            let mut lo = r.ends[0].0.max(first + r.need);
            let mut hi = widest.max().unwrap_or(first).max(last_planned) + r.need + 1;
            let free = self.free_slots(first, hi, total);
            // When the rows before it do not pack, no window does.
            if Self::packs(&before, first, &free) {
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    let trial = Row { ends: alloc::vec![(mid, 1.0)], widen: false, ..r.clone() };
                    let mut with = before.clone();
                    with.push(&trial);
                    if Self::packs(&with, first, &free) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
            }
            let r = &mut self.tick_rows[i];
            r.ends = alloc::vec![(hi, 1.0)];
            r.widen = false;
        }
    }

    /// At slot boundary `slot`, once: the slots admitted jobs no longer need are released,
    /// then the admitted jobs without a plan are planned.
    fn boundary(&mut self, ctx: &RoundCtx<'_>, slot: u64) {
        if self.boundary_slot == Some(slot) {
            return;
        }
        self.boundary_slot = Some(slot);
        // Slots before this one are past.
        self.planned = self.planned.split_off(&slot);
        let holding = core::mem::take(&mut self.holding);
        for &j in &holding {
            let gpus = plan_gpus(ctx.jobs[j].gpus);
            let need = self.slots_needed(ctx, j);
            let plan = &mut self.plans[j];
            // Past slots are the last ones.
            while plan.last().is_some_and(|&k| k < slot) {
                plan.pop();
            }
            // The earliest go (T lines 799–810); a plan short of what its job needs is kept as
            // it is (the artifact never adds slots: its planned jobs always start, T line 991).
            if plan.len() as u64 > need {
                let earliest = plan.split_off(need as usize);
                Self::release(&mut self.planned, gpus, &earliest);
            }
        }
        self.holding = holding;
        self.plan_unplanned(ctx, slot);
    }

    /// Plans the admitted jobs without a plan, from slot `slot` on, as the artifact's fallback
    /// does (S `batch_fast_job_selection`, lines 297–344; T lines 912–956): every (job,
    /// deadline) in order of most value, then most GPUs, least slack, latest window end; a job
    /// takes the first of its deadlines whose window still holds its slots (a soft job may so
    /// be planned for a later, lower-value deadline). A job none of whose windows holds them
    /// (the artifact stops there) or that needs no more slots (the artifact's lines 950–953)
    /// is rejected.
    fn plan_unplanned(&mut self, ctx: &RoundCtx<'_>, slot: u64) {
        let unplanned = core::mem::take(&mut self.unplanned);
        let rows: Vec<Row> = unplanned.iter().map(|&j| self.row(ctx, j)).collect();
        let mut entries: Vec<(f64, u64, u64, u64, usize)> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            for &(end, value) in &r.ends {
                entries.push((value, r.gpus, r.need, end, i));
            }
        }
        entries.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then((a.3 as i128 - a.2 as i128).cmp(&(b.3 as i128 - b.2 as i128)))
                .then(b.3.cmp(&a.3))
        });
        let mut planned_row = alloc::vec![false; rows.len()];
        let horizon = entries.iter().map(|e| e.3).max().unwrap_or(slot);
        let mut free = self.free_slots(slot, horizon, ctx.total_gpus);
        for (_, gpus, need, end, i) in entries {
            if planned_row[i] || need == 0 {
                continue;
            }
            let found = take_slots(&mut free, gpus, need, end.saturating_sub(slot));
            if found.len() as u64 == need {
                let plan: Vec<u64> = found.iter().map(|&k| slot + k).collect();
                for &k in &plan {
                    *self.planned.entry(k).or_insert(0) += gpus;
                }
                self.plans[rows[i].job] = plan;
                self.holding.push(rows[i].job);
                planned_row[i] = true;
            } else {
                for &k in &found {
                    free[k as usize] += gpus;
                }
            }
        }
        for (i, r) in rows.iter().enumerate() {
            if !planned_row[i] {
                self.admitted[r.job] = Some(false);
            }
        }
    }

    /// A round's start (or an arrival's): plans of finished jobs released, and at a slot
    /// boundary the boundary's work.
    fn prepare(&mut self, ctx: &RoundCtx<'_>) {
        self.forget_finished(ctx);
        if ctx.now_ns.is_multiple_of(self.lease_ns) {
            self.boundary(ctx, ctx.now_ns / self.lease_ns);
        }
    }

    /// True when `now` is a rescue tick or a slot boundary (every instant when there are no
    /// ticks).
    fn at_tick(&self, now: u64) -> bool {
        now.is_multiple_of(self.lease_ns) || self.tick_ns.is_none_or(|t| now.is_multiple_of(t))
    }

    /// True when job `j` is an admitted job planned in slot `slot`.
    fn planned_in(&self, j: usize, slot: u64) -> bool {
        self.admitted[j] == Some(true) && self.plans[j].binary_search_by(|k| slot.cmp(k)).is_ok()
    }

    /// True when rejected SLO job `j` is one the rescue starts now: its remaining work (the
    /// trace's duration less the work done, no resume cost: the artifact's `true_duration −
    /// progress`, its `duration` column with its noise off, T lines 1306–1318) fits what is
    /// left of the current slot and it can still meet its deadline (T lines 458–464).
    fn rescued(&self, ctx: &RoundCtx<'_>, j: usize) -> bool {
        let now = ctx.now_ns;
        let job = &ctx.jobs[j];
        let slot_end = (now / self.lease_ns + 1) * self.lease_ns;
        let left = job.remaining_at(now);
        self.admitted[j] == Some(false)
            && job.deadline_ns.is_some_and(|d| now + left + job.pending_overhead_ns <= d)
            && now + left <= slot_end
    }

    /// Job `j`'s place in the round's order: (class, key within it), then submission.
    fn key(&self, ctx: &RoundCtx<'_>, j: usize) -> (super::Key, u64) {
        let now = ctx.now_ns;
        let slot = now / self.lease_ns;
        let job = &ctx.jobs[j];
        let left = job.remaining_at(now) + job.pending_overhead_ns;
        let gpu_left = left as f64 * f64::from(job.gpus);
        let between_boundaries = !now.is_multiple_of(self.lease_ns);
        let (class, key) = match (job.deadline_ns, self.admitted[j]) {
            // Most overdue × GPUs first (the emergence of T line 497, descending).
            (Some(d), _) if now.saturating_add(left) > d => {
                (HOPELESS, -((now + left - d) as f64 * f64::from(job.gpus)))
            }
            (Some(d), Some(true)) => {
                if self.planned_in(j, slot) {
                    (PLANNED_NOW, d as f64)
                } else {
                    let slack = (d - now - left) as f64;
                    (ADMITTED_LATER, slack * f64::from(job.gpus))
                }
            }
            // A running job is a candidate for preemption, not for the rescue (T line 459).
            _ if self.rescue
                && !(job.is_running() && between_boundaries)
                && self.at_tick(now)
                && self.rescued(ctx, j) =>
            {
                (RESCUE, gpu_left)
            }
            _ => (BEST_EFFORT, gpu_left),
        };
        if job.is_running() && between_boundaries {
            if class >= BEST_EFFORT {
                return (super::Key(class - BEST_EFFORT + KEPT, key), job.submit_ns);
            }
        } else if !self.at_tick(now) && class >= BEST_EFFORT {
            // Between ticks the artifact's second filler starts waiting jobs on free GPUs in
            // ascending (priority, emergence) (T `filling_jobs`, lines 1137–1155): hopeless jobs
            // first, least overdue × GPUs first; then admitted jobs, most slack × GPUs first;
            // then rejected SLO jobs and then best-effort jobs, most remaining GPU-time first.
            let (class, key) = match class {
                HOPELESS => (FILL, -key),
                ADMITTED_LATER => (FILL + 1, -key),
                _ if self.admitted[j] == Some(false) => (FILL + 2, -key),
                _ => (FILL + 3, -key),
            };
            return (super::Key(class, key), job.submit_ns);
        }
        (super::Key(class, key), job.submit_ns)
    }
}

impl Policy for SlotAdmission {
    fn arrival_tick_ns(&self) -> Option<u64> {
        self.tick_ns
    }

    fn on_arrival(&mut self, ctx: &RoundCtx<'_>, j: usize) -> Option<bool> {
        ctx.jobs[j].deadline_ns?;
        self.prepare(ctx);
        let admitted = self.admit(ctx, j);
        if admitted {
            self.unplanned.push(j);
        }
        self.admitted[j] = Some(admitted);
        Some(admitted)
    }

    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) {
        self.prepare(ctx);
        let mut order = core::mem::take(&mut self.order);
        // Jobs inside their lease keep their GPUs whatever the order.
        order.emit_by_key(
            ctx.active,
            |j| super::takeable(ctx, j).then(|| self.key(ctx, j)),
            emit,
        );
        self.order = order;
    }

    fn order_waiting(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>) -> bool {
        self.prepare(ctx);
        super::emit_by_key(ctx.waiting.iter().copied(), |j| self.key(ctx, j), emit);
        true
    }

    fn preemption(&self) -> Preemption {
        Preemption::AtSlotEnd(self.lease_ns)
    }

    /// A job that starts in its planned slot or by the rescue holds its GPUs to the slot's
    /// end (T `occupy_lease`, `force_guarantee`); any other may be preempted by the rescue at
    /// the next tick (T lines 519–522).
    fn lease_end_ns(&self, ctx: &RoundCtx<'_>, j: usize) -> Option<u64> {
        let tick = self.tick_ns.filter(|_| self.rescue)?;
        let now = ctx.now_ns;
        let guaranteed =
            self.planned_in(j, now / self.lease_ns) || (self.at_tick(now) && self.rescued(ctx, j));
        (!guaranteed).then(|| (now / tick + 1) * tick)
    }
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (2, 0),
    fair: false,
    needs: Needs::Deadlines,
    runs: Runs::Policy(|p, _, jobs| Box::new(SlotAdmission::new(p, jobs))),
};
