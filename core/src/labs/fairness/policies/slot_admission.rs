//! Slot admission after Chronus (Gao, Ye et al., "Chronus: A Novel Deadline-aware Scheduler
//! for Deep Learning Training Jobs", SoCC'21): its artifact's admission, lease slots, rescue and
//! fill orders (S-Lab-System-Group/ChronusArtifact @bc7e15f,
//! `code/alg/scheduler/time_aware_with_lease.py` "T", `code/alg/scheduler/solver.py` "S"),
//! without its re-solved plan (below, "Not Chronus"). SLO jobs (jobs with a deadline) are
//! admitted only when a plan of whole lease slots before their deadline fits beside the plans
//! already admitted; admitted jobs run in their planned slots whatever else waits; the rest
//! take the GPUs left.
//!
//! - **Lease slots.** Time is cut into slots of `lease_s` (20 min in every experiment,
//!   `batch_run.sh`); at each slot boundary every running job is released and chosen again
//!   (T `flush_lease_jobs`, lines 763–1017). A job in its planned slot, or started by the
//!   rescue, holds its GPUs to the boundary; any other holds them to the next rescue tick.
//! - **Estimate** (T lines 1328–1332): E = m × d × (1 + c_g/L), m = 1.1, d the isolated duration,
//!   c_g = 0.5 min × (1 + log₂ g) the artifact's resume + checkpoint time per lease (T lines
//!   35–36); a job still needs ⌈(E − work done)/L⌉ slots (T lines 422, 798).
//! - **Admission** (T lines 1261–1402, S `compute_maximum_lease` and
//!   `batch_fast_check_if_packable`): an SLO job arriving at t with deadline D takes its slots
//!   among those that start at or after t and end by D, ⌈t/L⌉ … ⌊D/L⌋ − 1, scanning back from
//!   the last (as late as possible, not necessarily contiguous), a slot where the GPUs planned in
//!   it plus the job's fit the cluster; all found → admitted with that plan, else rejected. A
//!   rejected job runs as a best-effort job and counts as an SLO job that missed if it does not
//!   finish by D.
//! - **At a tick** (every `rescue_tick_s`, 5 min: T `BEST_SLOT`, lines 30, 1192–1200, and at each
//!   boundary) the jobs
//!   are offered in classes: admitted jobs planned in the current slot; the *rescue* (T lines
//!   455–478, only with slots ≤ 30 min): rejected SLO jobs whose remaining work (by the
//!   trace's duration, as the artifact's) fits what is left of the slot, least remaining GPU-time first; between boundaries, the
//!   running jobs that hold no planned slot, in the reverse of the order the artifact preempts
//!   them (T lines 519–541 and `best_func`, lines 46–49), so that only those the rescued jobs
//!   need are preempted; then the waiting in `best_func` order, descending (T
//!   `opportunistic_run`, lines 346–381): best-effort and rejected jobs by least remaining
//!   GPU-time, admitted jobs not planned now by least slack × GPUs, and last the SLO jobs that can
//!   no longer meet their deadline, most overdue × GPUs first.
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
//!   --mip_objective=adaptive`); here the greedy packing of admission is kept and adjusted at
//!   boundaries.
//! - *Arrivals* are admitted at once (event-driven), not at the next 5-minute tick; between
//!   boundaries slots released by jobs ahead of plan are freed at the next boundary, not each
//!   minute (T lines 422–435).
//! - *The rescue* preempts, in the artifact's order, the jobs the rescued ones need (the
//!   artifact stops at the first prefix of its order that frees enough GPUs); it does not
//!   promote a rescued job to admitted (T lines 475–478); a job it would rescue that starts on
//!   free GPUs between ticks also holds them to the boundary.
//! - *Soft deadlines* (several deadlines with falling values) use their first, strict one, as
//!   the artifact's admission check does (S lines 262–293). Its later binary search for a
//!   looser deadline (T lines 1219–1253) admits only within the job's own deadline
//!   (`TOLERATE_RATIO` = 1.0), so as configured it admits none; its plan may later move a soft
//!   job to a lower-value deadline, which ours does not.
//! - GPU counts are not rounded up to 4 or 8 (T lines 83–87); the checkpoint cost is our
//!   simulator's (per restart) rather than the artifact's lump sum at completion (T lines
//!   398–402); placement is the lab's.

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
    /// Period of the rescue, ns (`None`: no rescue).
    rescue_tick_ns: Option<u64>,
    /// Multiple of the remaining work a plan covers.
    margin: f64,
    /// GPUs planned per slot index (slot k = [kL, (k+1)L)), by admitted jobs.
    planned: BTreeMap<u64, u64>,
    /// Per job: its planned slots, latest first (empty: no plan).
    plans: Vec<Vec<u64>>,
    /// Per job: admitted (true) or rejected (false); `None` for best-effort jobs.
    admitted: Vec<Option<bool>>,
    /// Admitted jobs that may still hold a plan.
    holding: Vec<usize>,
    order: KeptOrder,
}

impl SlotAdmission {
    /// A fresh instance for a run of `jobs` jobs.
    #[must_use]
    pub fn new(params: &FairnessParams, jobs: usize) -> Self {
        let lease_ns = s_to_ns(params.chronus.lease_s).max(1);
        let tick_ns = s_to_ns(params.chronus.rescue_tick_s);
        SlotAdmission {
            lease_ns,
            rescue_tick_ns: (tick_ns > 0 && lease_ns <= RESCUE_MAX_LEASE_NS).then_some(tick_ns),
            margin: params.chronus.estimate_margin,
            planned: BTreeMap::new(),
            plans: alloc::vec![Vec::new(); jobs],
            admitted: alloc::vec![None; jobs],
            holding: Vec::new(),
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

    /// Takes `need` slots for a job of `gpus` GPUs among `first .. end`, latest first, where
    /// they fit beside the other plans; returns the slots found (not yet committed), fewer
    /// when there are not enough.
    fn find_slots(&self, gpus: u64, total: u64, first: u64, end: u64, need: u64) -> Vec<u64> {
        let mut found = Vec::new();
        let mut k = end;
        // (Stops once the slots left could not make up the rest.)
        while k > first && (found.len() as u64) < need && k - first >= need - found.len() as u64 {
            k -= 1;
            if self.planned.get(&k).copied().unwrap_or(0) + gpus <= total {
                found.push(k);
            }
        }
        found
    }

    /// Gives job `j` the plan `slots` (latest first).
    fn commit(&mut self, j: usize, gpus: u64, slots: Vec<u64>) {
        for &k in &slots {
            *self.planned.entry(k).or_insert(0) += gpus;
        }
        self.plans[j] = slots;
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

    /// Releases the plans of admitted jobs that finished.
    fn forget_finished(&mut self, ctx: &RoundCtx<'_>) {
        let mut i = 0;
        while i < self.holding.len() {
            let j = self.holding[i];
            if ctx.jobs[j].phase == Phase::Done {
                let plan = core::mem::take(&mut self.plans[j]);
                Self::release(&mut self.planned, u64::from(ctx.jobs[j].gpus), &plan);
                self.holding.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Admits SLO job `j` arriving now if a plan for it fits beside the others (committed).
    fn try_admit(&mut self, ctx: &RoundCtx<'_>, j: usize) -> bool {
        let job = &ctx.jobs[j];
        let Some(deadline) = job.deadline_ns else {
            return false;
        };
        let first = ctx.now_ns.div_ceil(self.lease_ns);
        let end = deadline / self.lease_ns;
        let gpus = u64::from(job.gpus);
        match self.slots_needed(ctx, j) {
            need if end > first && need <= end - first && gpus <= ctx.total_gpus => {
                let slots = self.find_slots(gpus, ctx.total_gpus, first, end, need);
                if slots.len() as u64 == need {
                    self.commit(j, gpus, slots);
                    self.holding.push(j);
                    true
                } else {
                    false
                }
            }
            _ => false,
        }
    }

    /// At a slot boundary: releases the slots admitted jobs no longer need.
    fn replan(&mut self, ctx: &RoundCtx<'_>, slot: u64) {
        // Slots before this one are past.
        self.planned = self.planned.split_off(&slot);
        let holding = core::mem::take(&mut self.holding);
        for &j in &holding {
            let job = &ctx.jobs[j];
            let gpus = u64::from(job.gpus);
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
    }

    /// A round's start: plans of finished jobs released, and at a slot boundary every plan
    /// fitted to its job's remaining work.
    fn prepare(&mut self, ctx: &RoundCtx<'_>) {
        self.forget_finished(ctx);
        if ctx.now_ns.is_multiple_of(self.lease_ns) {
            self.replan(ctx, ctx.now_ns / self.lease_ns);
        }
    }

    /// True when `now` is a rescue tick or a slot boundary (every instant when there are no
    /// ticks).
    fn at_tick(&self, now: u64) -> bool {
        now.is_multiple_of(self.lease_ns) || self.rescue_tick_ns.is_none_or(|t| now.is_multiple_of(t))
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
            _ if !(job.is_running() && between_boundaries)
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
    fn on_arrival(&mut self, ctx: &RoundCtx<'_>, j: usize) -> Option<bool> {
        ctx.jobs[j].deadline_ns?;
        // Plans of jobs finished since the last round are released only when they are in the
        // way (a round releases them anyway): an arrival costs O(its slots), not O(admitted).
        let admitted = self.try_admit(ctx, j) || {
            self.forget_finished(ctx);
            self.try_admit(ctx, j)
        };
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
        let tick = self.rescue_tick_ns?;
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
