//! Slot admission after Chronus (Gao, Ye et al., "Chronus: A Novel Deadline-aware Scheduler
//! for Deep Learning Training Jobs", SoCC'21): the admission and lease slots of its artifact
//! (S-Lab-System-Group/ChronusArtifact @bc7e15f, `code/alg/scheduler/time_aware_with_lease.py`,
//! "T", and `code/alg/scheduler/solver.py`, "S") without the rest of its mechanism (below,
//! "Not Chronus"): SLO jobs (jobs with a deadline) are admitted only when a plan of whole lease slots
//! before their deadline fits beside the plans already admitted, and admitted jobs run in their
//! planned slots whatever else waits; best-effort jobs take every GPU left.
//!
//! - **Lease slots.** Time is cut into slots of `lease_s` (20 min in every experiment,
//!   `batch_run.sh`); every lease ends at the next slot boundary, where every running job is
//!   released and chosen again (T `flush_lease_jobs`, lines 763–1017). Jobs started between
//!   boundaries hold their GPUs to the next one.
//! - **Admission** (T lines 1261–1402, S `compute_maximum_lease` and
//!   `batch_fast_check_if_packable`): an SLO job arriving at t with deadline D needs
//!   R = ⌈margin × work / (L − c)⌉ slots (work: its isolated run time; margin 1.1, T line 1329;
//!   c: the checkpoint-and-resume cost of one restart, charged as if it paid one per slot) among
//!   the slots that start at or after t and end by D: ⌈t/L⌉ … ⌊D/L⌋ − 1. Scanning back from the
//!   last one (as late as possible, not necessarily contiguous), a slot is taken while the GPUs
//!   already planned in it plus the job's fit in the cluster; R found → admitted with that plan,
//!   else rejected. A rejected job is not dropped: it runs as a best-effort job and still counts
//!   as an SLO job that missed if it does not finish by D.
//! - **Each round** the jobs are offered in classes (T `best_func`, lines 46–49 and 486–497):
//!   admitted jobs planned in the current slot; rejected SLO jobs whose remaining work fits in
//!   what is left of the current slot before their deadline (T lines 455–478); best-effort and
//!   other rejected jobs by least remaining GPU-time (remaining × GPUs); admitted jobs not
//!   planned now, least slack × GPUs first; last, SLO jobs that can no longer meet their
//!   deadline.
//! - **Re-planning.** At each boundary an admitted job's plan is fitted to its remaining work:
//!   slots no longer needed (it ran on spare GPUs) are released from the latest; slots it lost
//!   (it could not be placed) are added as late as possible where they fit.
//!
//! **Not Chronus** (why the policy carries a name of its own; docs/MODEL.md has the list):
//! - *The mid-lease rescue.* Every 5 minutes (T `BEST_SLOT`, lines 30 and 1192–1200) the
//!   artifact marks rejected SLO jobs whose remaining time fits what is left of the current
//!   lease (T lines 455–478, least remaining GPU-time first, while they fit the GPUs no plan
//!   holds) and starts them at once, preempting running jobs that hold no planned slot
//!   (T lines 510–567). Here such jobs are only ordered first among the waiting and wait for
//!   free GPUs: running jobs keep theirs to the slot boundary.
//! - *The plan.* The artifact re-solves a MIP over every admitted job's slots at each lease
//!   with the `adaptive` objective (S lines 348–424, T lines 769–772; `batch_run.sh
//!   --mip_objective=adaptive`); here the greedy as-late-as-possible packing of admission is
//!   kept and adjusted at boundaries, and slots no longer needed are released from the latest
//!   (the artifact releases the earliest, T lines 428–434).
//! - *Soft deadlines* (several deadlines with falling values) use their first, strict one, as
//!   the artifact's admission check does (S lines 262–293). Its later binary search for a
//!   looser deadline (T lines 1219–1253) admits only within the job's own deadline
//!   (`TOLERATE_RATIO` = 1.0), so as configured it admits none; its plan may later move a soft
//!   job to a lower-value deadline, which ours does not.
//! - Admission happens at the job's arrival (event-driven), not at the artifact's 5-minute
//!   ticks; GPU counts are not rounded up to 4 or 8 (T lines 83–87); the checkpoint cost is our
//!   simulator's (per restart) rather than the artifact's lump sum at completion; placement is
//!   the lab's.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::{Emit, KeptOrder, Needs, Policy, PolicySpec, Preemption, Runs};
use crate::labs::fairness::params::{s_to_ns, FairnessParams};
use crate::labs::fairness::sim::{Phase, RoundCtx};

/// The order classes of a round, first to last.
const PLANNED_NOW: u8 = 0;
const FITS_THIS_SLOT: u8 = 1;
const BEST_EFFORT: u8 = 2;
const ADMITTED_LATER: u8 = 3;
const HOPELESS: u8 = 4;

/// Admission and lease-slot plans after Chronus.
#[derive(Clone, Debug)]
pub struct SlotAdmission {
    /// Slot length L, ns.
    lease_ns: u64,
    /// Multiple of the remaining work a plan covers.
    margin: f64,
    params: FairnessParams,
    /// GPUs planned per slot index (slot k = [kL, (k+1)L)), by admitted jobs.
    planned: BTreeMap<u64, u64>,
    /// Per job: its planned slots, ascending (empty: no plan).
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
        SlotAdmission {
            lease_ns: s_to_ns(params.chronus.lease_s).max(1),
            margin: params.chronus.estimate_margin,
            params: params.clone(),
            planned: BTreeMap::new(),
            plans: alloc::vec![Vec::new(); jobs],
            admitted: alloc::vec![None; jobs],
            holding: Vec::new(),
            order: KeptOrder::default(),
        }
    }

    /// Work one slot gives a job of `gpus` GPUs that restarts in it, ns (0: none).
    fn work_per_slot_ns(&self, gpus: u32) -> u64 {
        self.lease_ns
            .saturating_sub(s_to_ns(self.params.preemption_cost_s(gpus)))
    }

    /// Slots a job of `gpus` GPUs with `work_ns` of work left needs (`None`: no slot gives
    /// it any work).
    fn slots_needed(&self, gpus: u32, work_ns: u64) -> Option<u64> {
        let per_slot = self.work_per_slot_ns(gpus);
        if per_slot == 0 {
            return None;
        }
        let need = libm::ceil(self.margin * work_ns as f64 / per_slot as f64);
        Some(need as u64)
    }

    /// Takes up to `need` more slots for a job of `gpus` GPUs among `first .. end` (not
    /// already in `plan`), latest first, where they fit beside the other plans; returns the
    /// slots found (not yet committed).
    fn find_slots(
        &self,
        gpus: u64,
        total: u64,
        first: u64,
        end: u64,
        need: u64,
        plan: &[u64],
    ) -> Vec<u64> {
        let mut found = Vec::new();
        let mut k = end;
        while k > first && (found.len() as u64) < need {
            k -= 1;
            if plan.binary_search(&k).is_ok() {
                continue;
            }
            if self.planned.get(&k).copied().unwrap_or(0) + gpus <= total {
                found.push(k);
            }
        }
        found
    }

    fn commit(&mut self, j: usize, gpus: u64, slots: &[u64]) {
        for &k in slots {
            *self.planned.entry(k).or_insert(0) += gpus;
        }
        let plan = &mut self.plans[j];
        plan.extend_from_slice(slots);
        plan.sort_unstable();
    }

    fn release(&mut self, gpus: u64, slots: &[u64]) {
        for &k in slots {
            if let Some(v) = self.planned.get_mut(&k) {
                *v = v.saturating_sub(gpus);
                if *v == 0 {
                    self.planned.remove(&k);
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
                self.release(u64::from(ctx.jobs[j].gpus), &plan);
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
        match self.slots_needed(job.gpus, job.remaining_at(ctx.now_ns)) {
            Some(need) if end > first && need <= end - first && gpus <= ctx.total_gpus => {
                let slots = self.find_slots(gpus, ctx.total_gpus, first, end, need, &[]);
                if slots.len() as u64 == need {
                    self.commit(j, gpus, &slots);
                    self.holding.push(j);
                    true
                } else {
                    false
                }
            }
            _ => false,
        }
    }

    /// At a slot boundary: fits every admitted job's plan to its remaining work.
    fn replan(&mut self, ctx: &RoundCtx<'_>, slot: u64) {
        // Slots before this one are past.
        self.planned = self.planned.split_off(&slot);
        let mut holding = core::mem::take(&mut self.holding);
        holding.sort_unstable();
        for &j in &holding {
            let job = &ctx.jobs[j];
            let gpus = u64::from(job.gpus);
            let mut plan = core::mem::take(&mut self.plans[j]);
            plan.retain(|&k| k >= slot);
            let need = self
                .slots_needed(job.gpus, job.remaining_at(ctx.now_ns))
                .unwrap_or(u64::MAX);
            let have = plan.len() as u64;
            if have > need {
                let extra = plan.split_off(need as usize);
                self.release(gpus, &extra);
            } else if have < need {
                let end = job.deadline_ns.map_or(slot, |d| d / self.lease_ns);
                let more = self.find_slots(gpus, ctx.total_gpus, slot, end, need - have, &plan);
                self.plans[j] = plan;
                self.commit(j, gpus, &more);
                continue;
            }
            self.plans[j] = plan;
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

    /// Job `j`'s place in the round's order: (class, key within it), then submission.
    fn key(&self, ctx: &RoundCtx<'_>, j: usize) -> (super::Key, u64) {
        let now = ctx.now_ns;
        let slot = now / self.lease_ns;
        let slot_end = (slot + 1) * self.lease_ns;
        let job = &ctx.jobs[j];
        let left = job.remaining_at(now) + job.pending_overhead_ns;
        let gpu_left = left as f64 * f64::from(job.gpus);
        let (class, key) = match (job.deadline_ns, self.admitted[j]) {
            (Some(d), _) if now.saturating_add(left) > d => (HOPELESS, gpu_left),
            (Some(d), Some(true)) => {
                if self.plans[j].binary_search(&slot).is_ok() {
                    (PLANNED_NOW, d as f64)
                } else {
                    let slack = (d - now - left) as f64;
                    (ADMITTED_LATER, slack * f64::from(job.gpus))
                }
            }
            (Some(_), _) if now.saturating_add(left) <= slot_end => (FITS_THIS_SLOT, gpu_left),
            _ => (BEST_EFFORT, gpu_left),
        };
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
}

/// The policy's row in the lab: its place on the map, its aim, what it needs, how it is built.
pub(super) const SPEC: PolicySpec = PolicySpec {
    survey_cell: (2, 0),
    fair: false,
    needs: Needs::Deadlines,
    runs: Runs::Policy(|p, _, jobs| Box::new(SlotAdmission::new(p, jobs))),
};
