//! The state the simulator keeps of each job and tenant, the per-round view a policy gets
//! ([`RoundCtx`]), and what a run leaves ([`PolicyRun`]: segments, samples, per-job results).

use alloc::vec;
use alloc::vec::Vec;

use crate::labs::fairness::job::LaterDeadline;
use crate::labs::fairness::policies::PolicyKind;

/// The GPUs of one placement: (node, GPUs on it). One or two nodes are held
/// inline (most jobs fit on a node): a run of millions of segments allocates nothing per
/// segment for them.
pub type NodeAlloc = smallvec::SmallVec<[(u32, u32); 2]>;

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not submitted yet.
    Pending,
    /// Submitted, holding no GPUs.
    Waiting,
    /// Holding its GPUs.
    Running,
    /// Finished.
    Done,
}

/// A job's state during a run.
#[derive(Clone, Debug)]
pub struct JobState {
    /// Tenant index.
    pub tenant: u32,
    /// GPUs (gang).
    pub gpus: u32,
    /// Submission time, ns.
    pub submit_ns: u64,
    /// Uninterrupted run time on the reference GPU type, ns (the oracle duration).
    pub duration_ns: u64,
    /// Speed per GPU type relative to the reference (empty: 1 everywhere).
    pub speed: Vec<f64>,
    /// Life phase.
    pub phase: Phase,
    /// Reference work left at the start of the current segment (or now, when not running), ns.
    pub remaining_ns: u64,
    /// Wall time the job has held GPUs before the current segment (overheads included), ns.
    pub executed_ns: u64,
    /// Start of the current run segment, ns.
    pub seg_start_ns: u64,
    /// Checkpoint + resume overhead at the start of the current segment, ns.
    pub seg_overhead_ns: u64,
    /// GPU type of the current segment.
    pub seg_type: u32,
    /// Overhead the job pays at its next start (after a preemption), ns.
    pub pending_overhead_ns: u64,
    /// End of the current lease, ns (leasing policies only).
    pub lease_end_ns: u64,
    /// First start, ns (`u64::MAX` before).
    pub first_start_ns: u64,
    /// End of the last run segment (submission before the first), ns.
    pub last_stop_ns: u64,
    /// Length of the last finished run segment, ns.
    pub last_segment_ns: u64,
    /// Finish time, ns (`u64::MAX` before).
    pub finish_ns: u64,
    /// Preemptions suffered.
    pub preemptions: u32,
    /// Event epoch: completion/lease/wake-up events of older epochs are stale.
    pub epoch: u32,
    /// Nodes held: (node, GPUs on it). After a stop they stay here until the job's segment
    /// is recorded in [`PolicyRun::segments`] (at its next start, unless that continues the
    /// segment, or at its finish); empty at the end of a run.
    pub alloc: NodeAlloc,
    /// Start of the job's segment not yet recorded in [`PolicyRun::segments`] (the running
    /// one, or the one that ended at its last stop), ns; `u64::MAX` when there is none. A
    /// start at the instant the job stopped, on the GPUs it gave up (a renewed lease),
    /// continues that segment.
    pub held_since_ns: u64,
    /// The tenant's integral ∫ min(gⱼ, Q_u/n_u) dt for this job's gⱼ at its arrival, GPU-ns:
    /// D_j(t) is that integral at t minus this (see [`TenantState::share_integrals`]).
    pub deserved_base: f64,
    /// Leases that expired (ASTRAEA family: the job was checkpointed and re-queued).
    pub lease_expiries: u32,
    /// The artifact's finish-time fairness ρ at the last round the job waited in
    /// (ASTRAEA-Themis orders delay jobs by this value, as the artifact does).
    pub last_rho: f64,
    /// Deadline, ns (SLO jobs; `None` for best-effort ones).
    pub deadline_ns: Option<u64>,
    /// A soft job's later deadlines ([`crate::labs::fairness::job::Job::later_deadlines`]).
    pub later_deadlines: Vec<LaterDeadline>,
    /// A policy with admission control's verdict on this SLO job at its arrival (slot admission:
    /// admitted with a plan, or rejected and run as best-effort); `None` otherwise.
    pub admitted: Option<bool>,
    /// True for an inference service's replica ([`crate::labs::fairness::job::Job::service`]).
    pub service: bool,
}

impl JobState {
    /// True while the job holds GPUs.
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.phase == Phase::Running
    }

    /// Speed on GPU type `t`.
    #[must_use]
    pub fn speed_on(&self, t: u32) -> f64 {
        self.speed.get(t as usize).copied().unwrap_or(1.0)
    }

    /// Wall time held on GPUs up to `now` (overheads included), ns.
    #[must_use]
    pub fn executed_at(&self, now: u64) -> u64 {
        if self.is_running() {
            self.executed_ns + now.saturating_sub(self.seg_start_ns)
        } else {
            self.executed_ns
        }
    }

    /// Attained service: GPUs × executed wall time, GPU-ns.
    #[must_use]
    pub fn attained_gpu_ns(&self, now: u64) -> u128 {
        u128::from(self.gpus) * u128::from(self.executed_at(now))
    }

    /// Reference work done in the current segment up to `now`, ns.
    pub(crate) fn progress_at(&self, now: u64) -> u64 {
        if !self.is_running() {
            return 0;
        }
        let worked = now.saturating_sub(self.seg_start_ns + self.seg_overhead_ns);
        let s = self.speed_on(self.seg_type);
        let p = if s == 1.0 {
            worked
        } else {
            libm::floor(worked as f64 * s) as u64
        };
        p.min(self.remaining_ns)
    }

    /// Reference work left at `now`, ns.
    #[must_use]
    pub fn remaining_at(&self, now: u64) -> u64 {
        self.remaining_ns - self.progress_at(now)
    }

    /// Reference work done so far, ns.
    #[must_use]
    pub fn done_at(&self, now: u64) -> u64 {
        self.duration_ns - self.remaining_at(now)
    }

    /// True for a job that never ran (no work done before this segment) and was never
    /// preempted: ASTRAEA's *new* job, the one that may preempt delay jobs.
    #[must_use]
    pub fn is_new(&self) -> bool {
        self.done_before_segment() == 0 && self.preemptions == 0
    }

    /// Reference work done before the current segment (all of it when not running), ns.
    #[must_use]
    pub fn done_before_segment(&self) -> u64 {
        self.duration_ns - self.remaining_ns
    }
}

/// A tenant's state during a run.
#[derive(Clone, Debug)]
pub struct TenantState {
    /// Weight s_u.
    pub weight: f64,
    /// Quota Q_u = max(1, ⌊G·s_u/Σs⌋), GPUs (ASTRAEA).
    pub quota: u64,
    /// GPUs its running jobs hold now.
    pub running_gpus: u64,
    /// Per GPU count g of its jobs so far: ∫ min(g, Q_u/n_u) dt, GPU-ns, with n_u its active
    /// jobs, integrated at its arrivals and finishes (where n_u changes; read in between by
    /// adding the time since, [`Sim::deserved_of`](super::Sim)); a job's D_j is the growth of
    /// its g's integral since it arrived. Sorted by g.
    pub share_integrals: Vec<(u32, f64)>,
    /// `share_integrals` are integrated up to this time, ns.
    pub accrued_to_ns: u64,
    /// GPUs its active (waiting or running) jobs ask for, Σ gⱼ.
    pub demand_gpus: u64,
    /// Active jobs.
    pub active_jobs: u32,
    /// Used GPU-ns per window bucket.
    pub used_ring: WindowRing,
    /// Deserved GPU-ns (rate min(demand, quota)) per window bucket.
    pub deserved_ring: WindowRing,
    /// Used GPU-ns over the whole run.
    pub used_total: u128,
    /// Deserved GPU-ns over the whole run.
    pub deserved_total: u128,
    /// The rings and totals are integrated up to this time, ns: a tenant is brought up to
    /// date when its rates (held GPUs, demand) change, before a global policy's round, and for
    /// all tenants at every window-bucket boundary, so between events nothing is done for a
    /// tenant whose rates did not change.
    pub accounted_to_ns: u64,
    /// Used GPU-ns over the completed buckets of the window (the artifact's U_u over the last
    /// 24 whole hours), as f64; changes only when a bucket completes.
    pub used_window: f64,
    /// Entitled GPU-ns (rate Q_u) over the completed buckets of the window (W_u), as f64.
    pub entitled_window: f64,
}

/// GPU-ns per window bucket: a ring of `buckets + 1` slots, indexed by bucket number mod
/// `buckets + 1` (the current bucket and the `buckets` completed ones before it), with the sum
/// of its slots kept as they are written (exact integers), so the completed buckets' sum
/// costs O(1) and not O(buckets) for every tenant at every bucket boundary.
#[derive(Clone, Debug)]
pub struct WindowRing {
    slots: Vec<u128>,
    sum: u128,
}

impl WindowRing {
    /// A ring of `slots` empty slots.
    #[must_use]
    pub fn new(slots: usize) -> Self {
        WindowRing {
            slots: vec![0; slots],
            sum: 0,
        }
    }

    /// Adds `v` GPU-ns to slot `slot`.
    pub fn add(&mut self, slot: usize, v: u128) {
        self.slots[slot] += v;
        self.sum += v;
    }

    /// Empties slot `slot` (its bucket is entered anew).
    pub fn clear(&mut self, slot: usize) {
        self.sum -= self.slots[slot];
        self.slots[slot] = 0;
    }

    /// GPU-ns in slot `slot`.
    #[must_use]
    pub fn slot(&self, slot: usize) -> u128 {
        self.slots[slot]
    }

    /// Sum over the completed buckets only (every slot but the current one, `cur_slot`): the
    /// ASTRAEA artifact's window of the last 24 whole hours.
    #[must_use]
    pub fn completed(&self, cur_slot: usize) -> u128 {
        self.sum - self.slots[cur_slot]
    }
}

/// What a policy sees at a scheduling round.
pub struct RoundCtx<'a> {
    /// Now, ns.
    pub now_ns: u64,
    /// Active jobs (waiting or running; only waiting ones for a policy that never preempts),
    /// ascending index (= submission order).
    pub active: &'a [usize],
    /// Running jobs, ascending index.
    pub running: &'a [usize],
    /// Waiting jobs (submitted, holding no GPUs), in no particular order.
    pub waiting: &'a [usize],
    /// Every job of the trace.
    pub jobs: &'a [JobState],
    /// Every tenant.
    pub tenants: &'a [TenantState],
    /// GPUs in the cluster, G.
    pub total_gpus: u64,
    /// GPUs per type.
    pub gpus_by_type: &'a [u64],
    /// The jobs that arrived, started, stopped or finished since the policy last ordered, in
    /// the order of the changes (a job may be listed more than once; its phase now is in
    /// `jobs`): what a policy that keeps its queues across rounds files again.
    pub changed: &'a [usize],
}

/// One run segment of a job: it held `alloc` from `start_ns` to `end_ns`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// Job index.
    pub job: usize,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// (node, GPUs on it).
    pub alloc: NodeAlloc,
}

/// Metrics sampled at one window-bucket boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Time, ns.
    pub t_ns: u64,
    /// Each tenant's windowed fairness F_u = U_u/D_u (None when it deserved nothing).
    pub tenant_f: Vec<Option<f64>>,
    /// Waiting jobs.
    pub queue_len: u32,
    /// GPUs busy.
    pub busy_gpus: u64,
    /// Share of the free GPUs that sit on partly used nodes (fragmentation), 0–1.
    pub fragmentation: f64,
    /// Each tenant's used GPU-time in the bucket that just ended, as a share of the cluster's
    /// GPU-time in that bucket (G × bucket length), 0–1.
    pub tenant_used_share: Vec<f64>,
    /// Each tenant's deserved GPU-time (rate min(demand, quota)) in the bucket that just ended,
    /// as a share of the cluster's GPU-time in that bucket.
    pub tenant_deserved_share: Vec<f64>,
}

/// Everything one policy's run produced.
#[derive(Clone, Debug)]
pub struct PolicyRun {
    /// The policy.
    pub kind: PolicyKind,
    /// Final job states (submit, first start, finish, executed, …).
    pub jobs: Vec<JobState>,
    /// Final tenant states (totals).
    pub tenants: Vec<TenantState>,
    /// Every run segment: a maximal interval in which a job held one allocation (a job
    /// started again at the instant it stopped, on the same GPUs, as a renewed lease, continues
    /// its segment). Each job's segments are in time order; the list is in the order they were
    /// recorded (at the job's next start that does not continue it, at its finish, or at the
    /// end of the run).
    pub segments: Vec<Segment>,
    /// Samples at bucket boundaries.
    pub samples: Vec<Sample>,
    /// Per tenant: (time ns, GPUs held from then on) at every change.
    pub tenant_gpus: Vec<Vec<(u64, u64)>>,
    /// GPU-ns the cluster was busy (jobs holding GPUs, overheads included).
    pub busy_gpu_ns: u128,
    /// Deserved GPU-ns of every job at its finish (gⱼ·ΔΦ), index = job.
    pub job_deserved_gpu_ns: Vec<f64>,
    /// Preemptions in all.
    pub preemptions: u64,
    /// Rounds in which a chosen job could not be placed although enough GPUs were free.
    pub placement_blocks: u64,
    /// Scheduling rounds run.
    pub rounds: u64,
    /// Events processed.
    pub events: u64,
    /// GPUs in the cluster.
    pub total_gpus: u64,
    /// Time of the first submission, ns.
    pub first_submit_ns: u64,
    /// Time of the last finish, ns.
    pub last_finish_ns: u64,
    /// Integral of free-GPU fragmentation share over time (for its time average), ns.
    pub fragmentation_integral: f64,
}

/// `v` rounded to the nearest f64, as `v as f64` rounds it: through the 64-bit conversion when
/// `v` fits in 64 bits (both round the same exact value to nearest), since converting a u128
/// is a library call, several times slower, on x86-64 and in WebAssembly.
#[must_use]
pub fn u128_to_f64(v: u128) -> f64 {
    match u64::try_from(v) {
        Ok(x) => x as f64,
        Err(_) => v as f64,
    }
}

/// Adds `dt` ns at tenant `u`'s current rates (held GPUs, deserved min(demand, Q_u)) to ring
/// slot `slot` and to its totals. (Its entitled GPU-ns, at the constant rate Q_u, are Q_u ×
/// the time of the window, kept once for all tenants: [`super::Sim`]'s `time_ring`.)
pub(super) fn accrue_rings(u: &mut TenantState, slot: usize, dt: u128) {
    let used = u128::from(u.running_gpus) * dt;
    let des = u128::from(u.demand_gpus.min(u.quota)) * dt;
    // An idle tenant (most of a long trace's, at any time) adds nothing to these two.
    if used > 0 {
        u.used_ring.add(slot, used);
    }
    if des > 0 {
        u.deserved_ring.add(slot, des);
    }
    u.used_total += used;
    u.deserved_total += des;
}
