//! The ASTRAEA artifact's scheduler, event-driven: per-tenant quotas, leases, block scheduling,
//! starvation and delay-job preemption, with one of its job-selection orders inside
//! (yzs981130/Astraea_Artifacts @7ab4bac, `simulation/alg/scheduler/lease.py`,
//! `LeaseScheduler`; line numbers below are that file's).
//!
//! A round at time t, after every event at t was applied (finishes, lease expiries, arrivals):
//!
//! 1. **Lists** (`job_selection`, l. 338–413). Per tenant: its *starving* waiting jobs — waiting
//!    at least `starvation_s` since they last stopped or were submitted (`update_pending_jobs`,
//!    l. 186–201) — by submission, then its other waiting jobs in the selection's order:
//!    ASTRAEA ascending F_j = U_j/D_j then submission; 2DAS ascending executed time then
//!    submission; Themis descending ρ; FIFO submission. *Delay jobs* (`is_delay_job`, l. 273–
//!    279): running jobs that have run less than `delay_s` in their current lease (in their
//!    first lease, at least `first_lease_delay_min_s` and less than `delay_s`), for ASTRAEA by
//!    descending F_j (U_j without the current lease) then latest submission, for Themis by
//!    ascending ρ; 2DAS and FIFO have none.
//! 2. **Phase 1, fair quota** (`allocate_job_resources_with_user`, l. 758–798). The free GPUs
//!    are handed out one job at a time: the tenant with the lowest quota ratio (held + granted
//!    over Q_u) goes if that ratio is below `low_quota_share`, otherwise the tenant with the
//!    lowest U_u/W_u over the last 24 *completed* hours (W_u = Q_u × time; 1 when W_u = 0),
//!    W_u counting one more lease of its quota; the tenant's next job in its list that fits the
//!    GPUs still free is granted (jobs that do not fit are passed over for this round) and adds
//!    gⱼ × lease to U_u; a tenant whose list is used up drops out. Static quota: Q_u.
//! 3. **Phase 2** (l. 800–846). Tenants in order, each walking its list from the top: a *new*
//!    job (never ran, never preempted) short of quota preempts the tenant's delay jobs one by
//!    one (they lose the progress of their current lease, `preempt_job`, l. 677–690); a job
//!    that fails the quota check (held + gⱼ ≤ quota of the round) or placement ends the
//!    tenant's turn under block scheduling or while the tenant still has starving jobs
//!    unplaced, otherwise the next job is tried; a placed job starts a lease.
//!
//! Leases: a job's lease expires after `lease_s` of running in it (`is_job_lease_expires`,
//! l. 24–25); it is checkpointed (progress kept, nothing charged: the artifact's 5 s/20 s
//! constants are never used) and waits for the same round. The artifact checks all this every
//! 10 s; here a round runs at every event, when a running job becomes a delay job, when a
//! waiting job starts to starve and at every hour boundary (where U/W changes), and is
//! repeated at the same instant while it changes anything (the artifact repeats it 10 s later).
//! Between events F_j and ρ drift; the artifact re-sorts at every tick, a round here sorts
//! when it runs (the differences this leaves are in docs/MODEL.md).

use alloc::boxed::Box;
use alloc::collections::{BTreeSet, VecDeque};
use alloc::vec;
use alloc::vec::Vec;

use super::{count_in, count_out, Ev, NodeAlloc, Phase, Sim};
use crate::labs::fairness::params::FairnessParams;
use crate::labs::fairness::policies::{
    PolicyKind,
    order_bits, sort_prefix, JobSelection, QuotaLease, QuotaMode,
};
use crate::units::Nanos;

/// Most rounds at one instant (each one that changes something starts or preempts a job).
const MAX_ROUNDS_PER_INSTANT: u32 = 64;

/// A selection's key of a job: (primary as [`order_bits`], secondary).
type SelKey = (u64, u64);

/// A sort key: (primary as [`order_bits`], secondary, job index); the job index makes it total.
type SortKey = (u64, u64, usize);

/// The machinery's own state beside the cluster and jobs it shares with every policy's loop
/// ([`Sim`]): its waiting lists, starvation checks, recent starts and parameters.
pub(super) struct QlState {
    /// The waiting jobs by tenant (empty for other policies).
    pub(super) waiting: WaitingByTenant,
    /// Jobs that stopped waiting or arrived at this instant, whose starvation checks are armed
    /// once the instant's rounds are over (for those still waiting then), so a job restarted
    /// at once leaves no stale check behind.
    pub(super) starvation_due: Vec<usize>,
    /// Per job: the epoch its last starvation check was armed in (`u32::MAX`: none).
    pub(super) starvation_armed: Vec<u32>,
    /// With a job order that does not change while a job waits (FIFO, 2DAS): the per-tenant
    /// lists, kept sorted across rounds.
    pub(super) static_lists: Option<StaticLists>,
    /// Per tenant, (start ns, job, epoch) of the segments started in the last `delay_s`,
    /// oldest first (the candidates for delay jobs).
    pub(super) recent_starts: Vec<VecDeque<(u64, usize, u32)>>,
    /// The round's lists, reused.
    pub(super) scratch: Option<Box<Scratch>>,
    /// Its parameters in ns.
    pub(super) ns: MachineryNs,
}

impl QlState {
    /// The state of a run of policy `kind` over `n_tenants` tenants and `n_jobs` jobs.
    pub(super) fn new(
        kind: PolicyKind,
        params: &FairnessParams,
        n_tenants: usize,
        n_jobs: usize,
    ) -> QlState {
        QlState {
            waiting: WaitingByTenant::new(n_tenants, n_jobs),
            starvation_due: Vec::new(),
            starvation_armed: vec![u32::MAX; n_jobs],
            static_lists: kind
                .quota_lease(params.astraea.quota)
                .filter(|m| m.selection.is_static())
                .map(|_| StaticLists::new(n_tenants, n_jobs)),
            recent_starts: vec![VecDeque::new(); n_tenants],
            scratch: Some(Box::default()),
            ns: MachineryNs::of(params),
        }
    }
}

/// The machinery's parameters in ns, converted once.
#[derive(Clone, Copy, Debug)]
pub(super) struct MachineryNs {
    /// `lease_s`.
    pub lease: u64,
    /// `astraea.starvation_s`.
    pub starvation: u64,
    /// `astraea.delay_s`.
    pub delay: u64,
    /// `astraea.first_lease_delay_min_s`.
    pub first_lease_delay_min: u64,
}

impl MachineryNs {
    pub(super) fn of(params: &crate::labs::fairness::FairnessParams) -> Self {
        use crate::labs::fairness::params::s_to_ns;
        MachineryNs {
            lease: s_to_ns(params.lease_s),
            starvation: s_to_ns(params.astraea.starvation_s),
            delay: s_to_ns(params.astraea.delay_s),
            first_lease_delay_min: s_to_ns(params.astraea.first_lease_delay_min_s),
        }
    }
}

/// The waiting jobs by tenant, kept as jobs come and go: what a round needs to know of a
/// tenant without building its list (how many jobs, the fewest GPUs one asks for), and the
/// jobs to build it from when a phase reads it.
#[derive(Clone, Debug)]
pub(super) struct WaitingByTenant {
    /// Per tenant: its waiting jobs, in no particular order.
    jobs: Vec<Vec<usize>>,
    /// Per job: its index in its tenant's `jobs` (`u32::MAX` when not waiting).
    pos: Vec<u32>,
    /// Per tenant: (GPU count, its waiting jobs of that count), ascending GPU count.
    gpus: Vec<Vec<(u32, u32)>>,
    /// The tenants with waiting jobs, ascending.
    tenants: Vec<usize>,
    /// Per tenant: how many times one of its jobs started waiting (a list built from its
    /// waiting jobs stays valid, minus the jobs that left, while this stands still).
    adds: Vec<u64>,
}

impl WaitingByTenant {
    /// No waiting jobs, for `tenants` tenants and `jobs` jobs.
    pub(super) fn new(tenants: usize, jobs: usize) -> Self {
        WaitingByTenant {
            jobs: vec![Vec::new(); tenants],
            pos: vec![u32::MAX; jobs],
            gpus: vec![Vec::new(); tenants],
            tenants: Vec::new(),
            adds: vec![0; tenants],
        }
    }

    /// Job `j` (tenant `u`, `g` GPUs) waits from now.
    pub(super) fn add(&mut self, u: usize, j: usize, g: u32) {
        if self.jobs[u].is_empty() {
            if let Err(p) = self.tenants.binary_search(&u) {
                self.tenants.insert(p, u);
            }
        }
        self.pos[j] = self.jobs[u].len() as u32;
        self.jobs[u].push(j);
        self.adds[u] += 1;
        count_in(&mut self.gpus[u], g);
    }

    /// Waiting job `j` (tenant `u`, `g` GPUs) stops waiting.
    pub(super) fn remove(&mut self, u: usize, j: usize, g: u32) {
        let p = core::mem::replace(&mut self.pos[j], u32::MAX);
        if p == u32::MAX {
            return;
        }
        let list = &mut self.jobs[u];
        list.swap_remove(p as usize);
        if let Some(&moved) = list.get(p as usize) {
            self.pos[moved] = p;
        }
        count_out(&mut self.gpus[u], g);
        if list.is_empty() {
            if let Ok(i) = self.tenants.binary_search(&u) {
                self.tenants.remove(i);
            }
        }
    }

    /// The fewest GPUs a waiting job of tenant `u` asks for (`u32::MAX` when none waits).
    fn min_gpus(&self, u: usize) -> u32 {
        self.gpus[u].first().map_or(u32::MAX, |e| e.0)
    }
}

/// A round's per-tenant lists, kept across rounds so that a round allocates nothing. Only the
/// entries of the tenants with waiting jobs ([`Scratch::waiting_tenants`]) are used in a round;
/// the others stay empty.
#[derive(Clone, Debug, Default)]
pub(super) struct Scratch {
    /// The tenants with waiting jobs this round, ascending.
    waiting_tenants: Vec<usize>,
    /// Phase 1's per-tenant values (indexed by tenant; valid for the waiting tenants).
    phase1: Phase1,
    /// Per tenant: its starving then its other waiting jobs.
    lists: Lists,
    /// Delay jobs, in preemption order once sorted.
    delay: Vec<Vec<usize>>,
    /// Delay jobs with their keys (one tenant at a time).
    dkeyed: Vec<SortKey>,
    /// The instant of the last round that read these lists, ns.
    round_now: Option<u64>,
}

/// A round's per-tenant lists: a tenant's starving waiting jobs by (submission, job), then
/// its other waiting jobs by (selection key, job). A tenant's list is built only when a phase
/// reads it ([`Sim::build_list`]; most tenants of a round are never read: phase 1 grants to a
/// few, and phase 2 skips a tenant none of whose jobs could start), and sorted only as far as
/// the phases read it (phase 2 stops at a tenant's first job that fails under block
/// scheduling; phase 1 reads as many as it grants), as [`LazySorted`] does ([`sort_prefix`]).
/// Keys are unique (the job breaks ties), so the order read is a full sort's.
#[derive(Clone, Debug, Default)]
struct Lists {
    /// Per tenant: starving waiting jobs, (submission ns, job).
    starving: Vec<Vec<(u64, usize)>>,
    /// Per tenant: its other waiting jobs with their selection key.
    keyed: Vec<Vec<(SelKey, usize)>>,
    /// Per tenant: how many of `starving`, of `keyed`, are in their final order.
    sorted: Vec<(usize, usize)>,
    /// Per tenant: its list is built this round.
    built: Vec<bool>,
    /// Per tenant: its [`WaitingByTenant::adds`] when its list was built.
    adds: Vec<u64>,
}

/// Where a round builds its lists from.
#[derive(Clone, Copy)]
enum ListSource<'a> {
    /// The waiting jobs, each keyed afresh by the selection.
    Fresh(JobSelection),
    /// The lists kept sorted across rounds ([`StaticLists`]).
    Kept(&'a TenantLists),
}

impl Lists {
    fn resize(&mut self, tenants: usize) {
        self.starving.resize_with(tenants, Vec::new);
        self.keyed.resize_with(tenants, Vec::new);
        self.sorted.resize(tenants, (0, 0));
        self.built.resize(tenants, false);
        self.adds.resize(tenants, 0);
    }

    /// Keeps tenant `u`'s built list for the next round at the same instant, less the jobs
    /// that no longer wait (`waits` false), in the same order: a waiting job's key and
    /// whether it starves depend only on the instant, on its own state, which a round changes
    /// only for the jobs it starts or stops, and on its tenant's share integrals (D_j), which
    /// change only at arrivals and finishes, never in a round.
    fn keep_waiting(&mut self, u: usize, waits: impl Fn(usize) -> bool) {
        retain_sorted(&mut self.starving[u], &mut self.sorted[u].0, |e| waits(e.1));
        retain_sorted(&mut self.keyed[u], &mut self.sorted[u].1, |e| waits(e.1));
    }

    fn clear(&mut self, u: usize) {
        self.starving[u].clear();
        self.keyed[u].clear();
        self.sorted[u] = (0, 0);
        self.built[u] = false;
    }

    /// Job `i` of tenant `u`'s list (built).
    fn job_at(&mut self, u: usize, i: usize) -> Option<usize> {
        let s = self.starving[u].len();
        if i < s {
            sort_prefix(&mut self.starving[u], &mut self.sorted[u].0, i + 1);
            return Some(self.starving[u][i].1);
        }
        let k = i - s;
        if k >= self.keyed[u].len() {
            return None;
        }
        sort_prefix(&mut self.keyed[u], &mut self.sorted[u].1, k + 1);
        Some(self.keyed[u][k].1)
    }
}

/// Phase 1's per-tenant values, indexed by tenant.
#[derive(Clone, Debug, Default)]
struct Phase1 {
    /// The round's quota: held + granted, GPUs.
    quota: Vec<u64>,
    /// quota / Q_u.
    ratio: Vec<f64>,
    /// U_u over the window plus the leases granted, GPU-ns.
    used: Vec<f64>,
    /// W_u over the window plus one lease of Q_u, GPU-ns.
    weighted: Vec<f64>,
    /// U_u/W_u.
    uw: Vec<f64>,
    /// Next job of the tenant's list to look at.
    cursor: Vec<usize>,
}

/// Keeps the items of `items` for which `keep` holds, in order, where the first `sorted` are
/// in their final order ([`sort_prefix`]); `sorted` becomes the count of those kept.
fn retain_sorted<T>(items: &mut Vec<T>, sorted: &mut usize, keep: impl Fn(&T) -> bool) {
    let (mut seen, mut kept_sorted) = (0usize, 0usize);
    let prefix = *sorted;
    items.retain(|e| {
        let k = keep(e);
        if k && seen < prefix {
            kept_sorted += 1;
        }
        seen += 1;
        k
    });
    *sorted = kept_sorted;
}

impl Scratch {
    /// Empties the lists of last round's tenants (the only ones that hold anything) and sizes
    /// everything for `tenants`, for a round at `now`. When `keep` and last round ran at the
    /// same instant, a tenant's built list to which no job was added since (`waiting`'s
    /// [`WaitingByTenant::adds`]) is kept, less the jobs no longer waiting (`waits` false):
    /// a round repeated at one instant (after one that started or preempted jobs) sorts
    /// again only the lists of the tenants that got a waiting job.
    fn reset(
        &mut self,
        tenants: usize,
        now: u64,
        keep: Option<(&WaitingByTenant, &dyn Fn(usize) -> bool)>,
    ) {
        let same_instant = self.round_now == Some(now);
        self.round_now = Some(now);
        for &u in &self.waiting_tenants {
            self.delay[u].clear();
            match keep {
                Some((waiting, waits))
                    if same_instant
                        && self.lists.built[u]
                        && self.lists.adds[u] == waiting.adds[u]
                        && !waiting.jobs[u].is_empty() =>
                {
                    self.lists.keep_waiting(u, waits);
                }
                _ => self.lists.clear(u),
            }
        }
        self.waiting_tenants.clear();
        if self.delay.len() != tenants {
            self.delay.resize_with(tenants, Vec::new);
            self.lists.resize(tenants);
            let p = &mut self.phase1;
            p.quota.resize(tenants, 0);
            p.ratio.resize(tenants, 0.0);
            p.used.resize(tenants, 0.0);
            p.weighted.resize(tenants, 0.0);
            p.uw.resize(tenants, 0.0);
            p.cursor.resize(tenants, 0);
        }
    }
}

/// A tenant's waiting jobs kept sorted across rounds, for the selections whose key stands
/// still while a job waits ([`JobSelection::is_static`]): a job is filed again only when it
/// starts or stops waiting or starts to starve, so a round sorts nothing.
#[derive(Clone, Debug)]
pub(super) struct StaticLists {
    /// The lists (taken out while a round walks them).
    lists: TenantLists,
    /// Per job: where it is filed.
    filed: Vec<Filed>,
    /// Jobs to file again before the next round.
    touched: Vec<usize>,
    /// Per job: in `touched`.
    is_touched: Vec<bool>,
}

/// The kept lists proper.
#[derive(Clone, Debug, Default)]
struct TenantLists {
    /// Per tenant: starving waiting jobs by (submission ns, job).
    starving: Vec<BTreeSet<(u64, usize)>>,
    /// Per tenant: its other waiting jobs by (selection key, job).
    keyed: Vec<BTreeSet<(SelKey, usize)>>,
    /// The tenants with waiting jobs, ascending.
    tenants: BTreeSet<usize>,
}

/// Where a job is filed in [`StaticLists`], with its key there.
#[derive(Clone, Copy, Debug)]
enum Filed {
    No,
    Starving(u64),
    Keyed(SelKey),
}

impl StaticLists {
    /// Empty lists for `tenants` tenants and `jobs` jobs.
    pub(super) fn new(tenants: usize, jobs: usize) -> Self {
        StaticLists {
            lists: TenantLists {
                starving: vec![BTreeSet::new(); tenants],
                keyed: vec![BTreeSet::new(); tenants],
                tenants: BTreeSet::new(),
            },
            filed: vec![Filed::No; jobs],
            touched: Vec::new(),
            is_touched: vec![false; jobs],
        }
    }

    /// Job `j` started or stopped waiting, or starts to starve: file it again before the
    /// next round.
    pub(super) fn touch(&mut self, j: usize) {
        if !self.is_touched[j] {
            self.is_touched[j] = true;
            self.touched.push(j);
        }
    }
}

/// The artifact's discrete fairness class of F_j (`fairness2disc`, l. 525–532): 0 at F = 0,
/// else K − ⌊((f+1)/2) // (1/K)⌋ with f = −ln F/√(1+ln²F) and Python's float floor division.
#[must_use]
pub fn disc_class(f_j: f64, k: u32) -> i64 {
    if f_j == 0.0 {
        return 0;
    }
    let l = libm::log(f_j);
    let f = -l / libm::sqrt(1.0 + l * l);
    let a = f64::midpoint(f, 1.0);
    let b = 1.0 / f64::from(k);
    i64::from(k) - python_floordiv(a, b) as i64
}

/// Python's `a // b` for floats (`float_floor_div`: `(a − fmod(a, b)) / b`, rounded to the
/// nearest integer below, corrected by one where the division landed just under it).
fn python_floordiv(a: f64, b: f64) -> f64 {
    let m = libm::fmod(a, b);
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0;
    }
    let fl = libm::floor(div);
    if div - fl > 0.5 {
        fl + 1.0
    } else {
        fl
    }
}

impl Sim<'_> {
    /// Job `j` waits from now (arrived or stopped): its starvation check is armed after this
    /// instant's rounds if it still waits then (ASTRAEA family only).
    pub(super) fn arm_starvation(&mut self, j: usize) {
        if self.machinery.is_some() {
            self.ql.starvation_due.push(j);
        }
    }

    /// Arms the starvation checks of the jobs of [`Sim::arm_starvation`] that still wait, at
    /// `starvation_s` after they last stopped (or arrived), once each.
    pub(super) fn arm_starvation_due(&mut self) {
        let starve_ns = self.ql.ns.starvation;
        let mut due = core::mem::take(&mut self.ql.starvation_due);
        for &j in &due {
            let job = &self.jobs[j];
            // A job listed twice (stopped, restarted and stopped again) is armed once: its
            // epoch is marked by the check armed first.
            if job.phase != Phase::Waiting || self.ql.starvation_armed[j] == job.epoch {
                continue;
            }
            self.ql.starvation_armed[j] = job.epoch;
            let at = job.last_stop_ns + starve_ns;
            let e = job.epoch;
            self.queue.schedule(Nanos(at.max(self.now)), Ev::Starving(j, e));
        }
        due.clear();
        self.ql.starvation_due = due;
    }

    /// The lease of running job `j` expired: checkpointed (progress kept), waiting again.
    pub(super) fn expire_lease(&mut self, j: usize) {
        self.stop_segment(j);
        self.jobs[j].lease_expiries += 1;
        self.arm_starvation(j);
    }

    /// Preempts delay job `j` without a checkpoint: the progress of its current lease is lost
    /// (`preempt_job`).
    fn preempt_losing_lease(&mut self, j: usize) {
        let remaining = self.jobs[j].remaining_ns;
        self.stop_segment(j);
        self.jobs[j].remaining_ns = remaining;
        self.jobs[j].preemptions += 1;
        self.run.preemptions += 1;
        self.recount_new(j);
        self.arm_starvation(j);
    }

    /// Starts `j` on `alloc` (type `t`) with a fresh lease.
    fn start_leased(&mut self, j: usize, alloc: NodeAlloc, t: u32) {
        self.begin_segment(j, alloc, t);
        let Some(m) = self.machinery else { return };
        let now = self.now;
        let e = self.jobs[j].epoch;
        if m.selection.preempts_delay_jobs() {
            let u = self.jobs[j].tenant as usize;
            // Segments older than `delay_s` can never be delay jobs again: dropped here too,
            // so a tenant that rarely has a new waiting job keeps a short list.
            let delay_ns = self.ql.ns.delay;
            let starts = &mut self.ql.recent_starts[u];
            while starts
                .front()
                .is_some_and(|&(t0, _, _)| now - t0 >= delay_ns)
            {
                starts.pop_front();
            }
            starts.push_back((now, j, e));
        }
        if m.leases {
            let lease = self.ql.ns.lease;
            self.queue.schedule(Nanos(now + lease), Ev::Lease(j, e));
        }
        let p = &self.params.astraea;
        if m.selection.preempts_delay_jobs()
            && self.jobs[j].lease_expiries == 0
            && p.first_lease_delay_min_s > 0.0
            && p.first_lease_delay_min_s < p.delay_s
        {
            let at = now + self.ql.ns.first_lease_delay_min;
            self.queue.schedule(Nanos(at), Ev::Wakeup(j, e));
        }
    }

    /// True when running job `j` is a delay job now (`is_delay_job`).
    fn is_delay_job(&self, j: usize) -> bool {
        let job = &self.jobs[j];
        let in_lease = self.now - job.seg_start_ns;
        let delay = self.ql.ns.delay;
        // A job started at this instant has not run yet: the artifact, which advances run
        // times before it looks, never sees a running job with 0 s in its lease.
        if in_lease == 0 {
            return false;
        }
        if job.lease_expiries > 0 {
            in_lease < delay
        } else {
            in_lease >= self.ql.ns.first_lease_delay_min && in_lease < delay
        }
    }

    /// F_j = U_j/D_j with U_j = gⱼ × `done_ns` (0 while D_j = 0, as at dispatch).
    fn job_f(&self, j: usize, done_ns: u64) -> f64 {
        let d = self.deserved_of(j);
        if d > 0.0 {
            f64::from(self.jobs[j].gpus) * done_ns as f64 / d
        } else {
            0.0
        }
    }

    /// The artifact's finish-time fairness of waiting job `j` (`get_finish_time_fairness`,
    /// l. 540–545): life / (executed·F_j + (life − executed) + remaining); 1 while D_j = 0.
    fn artifact_rho(&self, j: usize) -> f64 {
        let job = &self.jobs[j];
        let d = self.deserved_of(j);
        if d <= 0.0 {
            return 1.0;
        }
        let exec = job.done_before_segment() as f64;
        let life = (self.now - job.submit_ns) as f64;
        let remaining = job.remaining_ns as f64;
        // F_j as [`Sim::job_f`] computes it, with D_j read once.
        let f_j = f64::from(job.gpus) * exec / d;
        let isolated = exec * f_j + (life - exec);
        let denom = isolated + remaining;
        if denom > 0.0 {
            life / denom
        } else {
            1.0
        }
    }

    /// Rounds at this instant until one changes nothing.
    pub(super) fn quota_lease_rounds(&mut self) {
        for _ in 0..MAX_ROUNDS_PER_INSTANT {
            if !self.quota_lease_round() {
                break;
            }
        }
    }

    /// One round of the artifact's `allocate_job_resources_with_user`; true when it started or
    /// preempted a job. Its per-tenant lists live in a scratch kept across rounds.
    fn quota_lease_round(&mut self) -> bool {
        let mut sc = self.ql.scratch.take().unwrap_or_default();
        let changed = self.quota_lease_round_in(&mut sc);
        self.ql.scratch = Some(sc);
        changed
    }

    fn quota_lease_round_in(&mut self, sc: &mut Scratch) -> bool {
        let Some(m) = self.machinery else {
            return false;
        };
        if self.ql.static_lists.is_some() {
            return self.static_round(sc, m);
        }
        let now = self.now;
        let nt = self.tenants.len();
        let delays = m.selection.preempts_delay_jobs() && m.quota == QuotaMode::Fair;
        let waiting_total = self.waiting_list.len();
        if waiting_total == 0 {
            return false;
        }
        if let Some(changed) = self.lone_job_round(m, delays) {
            return changed;
        }
        {
            let jobs = &self.jobs;
            let waits = |j: usize| jobs[j].phase == Phase::Waiting;
            sc.reset(nt, now, Some((&self.ql.waiting, &waits)));
        }
        // Nothing can change unless a waiting job fits the free GPUs or a tenant's new waiting
        // job may preempt one of its delay jobs. Only tenants with waiting jobs take part in
        // a round: for every other one each step below is empty.
        let smallest = self
            .waiting_gpus
            .first()
            .map_or(u64::MAX, |e| u64::from(e.0));
        #[cfg(debug_assertions)]
        self.check_waiting_counts();
        sc.waiting_tenants.extend_from_slice(&self.ql.waiting.tenants);
        #[cfg(debug_assertions)]
        self.check_kept_fresh_lists(sc, m.selection);
        // Delay jobs: among the segments started in the last `delay_s` (older ones are dropped
        // for good: a segment only ages), of the tenants with a new waiting job.
        let mut could_preempt = false;
        if delays {
            let delay_ns = self.ql.ns.delay;
            for &u in &sc.waiting_tenants {
                // Only a new waiting job preempts delay jobs.
                if self.waiting_of[u].1 == 0 {
                    continue;
                }
                while self.ql.recent_starts[u]
                    .front()
                    .is_some_and(|&(t0, _, _)| now - t0 >= delay_ns)
                {
                    self.ql.recent_starts[u].pop_front();
                }
                for &(_, j, e) in &self.ql.recent_starts[u] {
                    if self.jobs[j].epoch == e && self.jobs[j].is_running() && self.is_delay_job(j)
                    {
                        sc.delay[u].push(j);
                    }
                }
                could_preempt |= !sc.delay[u].is_empty();
            }
        }
        if smallest > self.free_gpus && !could_preempt {
            return false;
        }
        self.run.rounds += 1;
        // Delay jobs in preemption order.
        for i in 0..sc.waiting_tenants.len() {
            let u = sc.waiting_tenants[i];
            let Scratch { delay, dkeyed, .. } = &mut *sc;
            if delay[u].is_empty() {
                continue;
            }
            dkeyed.clear();
            dkeyed.extend(delay[u].iter().map(|&j| {
                let job = &self.jobs[j];
                match m.selection {
                    JobSelection::Themis => (order_bits(job.last_rho), 0, j),
                    _ => (
                        order_bits(-self.job_f(j, job.done_before_segment())),
                        u64::MAX - job.submit_ns,
                        j,
                    ),
                }
            }));
            dkeyed.sort_unstable();
            delay[u].clear();
            delay[u].extend(dkeyed.iter().map(|e| e.2));
        }
        let src = ListSource::Fresh(m.selection);
        match m.quota {
            QuotaMode::Static => {
                for &u in &sc.waiting_tenants {
                    sc.phase1.quota[u] = self.tenants[u].quota;
                }
            }
            QuotaMode::Fair => self.phase1_grants(sc, waiting_total, src),
        }
        // Phase 2, tenants in order.
        let mut changed = false;
        let Scratch {
            waiting_tenants,
            lists,
            delay,
            phase1,
            ..
        } = &mut *sc;
        for &u in waiting_tenants.iter() {
            let delay = if delays { &delay[u][..] } else { &[] };
            if !self.may_start_any(u, phase1.quota[u], delay) {
                continue;
            }
            self.build_list(lists, u, src);
            let starving = lists.starving[u].len();
            changed |= self.phase2_tenant(
                u,
                (0..).map_while(|i| lists.job_at(u, i)),
                starving,
                phase1.quota[u],
                delay,
            );
        }
        changed
    }

    /// The round when exactly one job waits and it cannot preempt (it is not new, or the
    /// selection has no delay jobs: `delays` false): the general round's outcome
    /// (`allocate_job_resources_with_user`, l. 743–850, as [`Sim::quota_lease_round_in`] runs
    /// it) without its lists. Phase 1 hands that job's tenant the free GPUs one job at a time, and its only job
    /// is granted exactly when it fits them (fair quota: held + gⱼ; static: Q_u); phase 2
    /// tries that job against the quota and placement. On a long trace most rounds are this
    /// one: a lease expired, its job waits alone and starts again. `None` when the round is
    /// not this case.
    fn lone_job_round(&mut self, m: QuotaLease, delays: bool) -> Option<bool> {
        let &[j] = &self.waiting_list[..] else {
            return None;
        };
        if !self.shortcuts {
            return None;
        }
        let u = self.jobs[j].tenant as usize;
        if delays && self.jobs[j].is_new() {
            return None;
        }
        let g = u64::from(self.jobs[j].gpus);
        // Nothing fits: the general round returns here too, counting nothing.
        if g > self.free_gpus {
            return Some(false);
        }
        self.run.rounds += 1;
        #[cfg(debug_assertions)]
        self.check_waiting_counts();
        let quota = match m.quota {
            QuotaMode::Static => self.tenants[u].quota,
            QuotaMode::Fair => self.tenants[u].running_gpus + g,
        };
        // The general round builds the tenant's list, where Themis notes ρ, in phase 1 (fair
        // quota: the job fits the free GPUs) or else in phase 2 if the job passes the quota.
        let builds = m.quota == QuotaMode::Fair || self.tenants[u].running_gpus + g <= quota;
        if m.selection == JobSelection::Themis && builds {
            self.jobs[j].last_rho = self.artifact_rho(j);
        }
        let starving = usize::from(self.now - self.jobs[j].last_stop_ns >= self.ql.ns.starvation);
        Some(self.phase2_tenant(u, core::iter::once(j), starving, quota, &[]))
    }

    /// False when phase 2 can start or preempt nothing for tenant `u` with round quota `quota`
    /// and `delay` jobs: none to preempt, and none of its waiting jobs passes the quota check
    /// (held + gⱼ ≤ quota) or fits the free GPUs (its walk would start nothing, whatever the
    /// order; a tenant's phase 2 changes no other tenant's state).
    fn may_start_any(&self, u: usize, quota: u64, delay: &[usize]) -> bool {
        let g = u64::from(self.ql.waiting.min_gpus(u));
        !delay.is_empty() || (self.tenants[u].running_gpus + g <= quota && g <= self.free_gpus)
    }

    /// Builds tenant `u`'s list of this round from `src`, unless it is built: its starving
    /// waiting jobs (waiting at least `starvation_s`) by (submission, job), its others by
    /// (selection key, job). Themis: each job's ρ is noted as its key now, and the key it is
    /// preempted by should it be a delay job later (the artifact's value at the last round it
    /// waited in: a job starts only in a round that built its tenant's list).
    fn build_list(&mut self, l: &mut Lists, u: usize, src: ListSource<'_>) {
        if l.built[u] {
            return;
        }
        l.built[u] = true;
        l.adds[u] = self.ql.waiting.adds[u];
        match src {
            ListSource::Kept(kept) => {
                l.starving[u].extend(kept.starving[u].iter().copied());
                l.keyed[u].extend(kept.keyed[u].iter().copied());
                l.sorted[u] = (l.starving[u].len(), l.keyed[u].len());
            }
            ListSource::Fresh(sel) => {
                let now = self.now;
                let starve_ns = self.ql.ns.starvation;
                for i in 0..self.ql.waiting.jobs[u].len() {
                    let j = self.ql.waiting.jobs[u][i];
                    if sel == JobSelection::Themis {
                        self.jobs[j].last_rho = self.artifact_rho(j);
                    }
                    let job = &self.jobs[j];
                    if now - job.last_stop_ns >= starve_ns {
                        l.starving[u].push((job.submit_ns, j));
                    } else {
                        l.keyed[u].push((self.selection_key(sel, j), j));
                    }
                }
            }
        }
    }

    /// The round for a selection whose keys stand still while jobs wait
    /// ([`JobSelection::is_static`]): the same steps, on the lists kept sorted across rounds
    /// ([`StaticLists`]); with static quotas a tenant's list is read only as far as phase 2
    /// walks it. No delay jobs (FIFO and 2DAS preempt none).
    fn static_round(&mut self, sc: &mut Scratch, m: QuotaLease) -> bool {
        let nt = self.tenants.len();
        let waiting_total = self.waiting_list.len();
        if waiting_total == 0 {
            return false;
        }
        self.file_touched_jobs(m.selection);
        if let Some(changed) = self.lone_job_round(m, false) {
            return changed;
        }
        let smallest = self
            .waiting_gpus
            .first()
            .map_or(u64::MAX, |e| u64::from(e.0));
        if smallest > self.free_gpus {
            return false;
        }
        self.run.rounds += 1;
        sc.reset(nt, self.now, None);
        let Some(kept) = self.ql.static_lists.as_mut() else {
            return false;
        };
        let lists = core::mem::take(&mut kept.lists);
        #[cfg(debug_assertions)]
        self.check_kept_lists(&lists, m.selection);
        #[cfg(debug_assertions)]
        self.check_waiting_counts();
        sc.waiting_tenants.extend(lists.tenants.iter().copied());
        let tenant_list = |u: usize| {
            lists.starving[u]
                .iter()
                .map(|e| e.1)
                .chain(lists.keyed[u].iter().map(|e| e.1))
        };
        match m.quota {
            QuotaMode::Static => {
                for &u in &sc.waiting_tenants {
                    sc.phase1.quota[u] = self.tenants[u].quota;
                }
            }
            // Phase 1 reads the kept lists, already in order.
            QuotaMode::Fair => self.phase1_grants(sc, waiting_total, ListSource::Kept(&lists)),
        }
        let mut changed = false;
        for &u in &sc.waiting_tenants {
            if !self.may_start_any(u, sc.phase1.quota[u], &[]) {
                continue;
            }
            changed |= self.phase2_tenant(
                u,
                tenant_list(u),
                lists.starving[u].len(),
                sc.phase1.quota[u],
                &[],
            );
        }
        if let Some(kept) = self.ql.static_lists.as_mut() {
            kept.lists = lists;
        }
        changed
    }

    /// Debug builds: the kept lists are exactly what sorting the waiting jobs afresh gives
    /// (for queues short enough to check at every round).
    #[cfg(debug_assertions)]
    fn check_kept_lists(&self, lists: &TenantLists, sel: JobSelection) {
        if self.waiting_list.len() > 256 {
            return;
        }
        let starve_ns = self.ql.ns.starvation;
        let nt = self.tenants.len();
        let mut starving: Vec<Vec<(u64, usize)>> = vec![Vec::new(); nt];
        let mut keyed: Vec<Vec<(SelKey, usize)>> = vec![Vec::new(); nt];
        for &j in &self.waiting_list {
            let job = &self.jobs[j];
            let u = job.tenant as usize;
            if self.now - job.last_stop_ns >= starve_ns {
                starving[u].push((job.submit_ns, j));
            } else {
                keyed[u].push((self.selection_key(sel, j), j));
            }
        }
        for u in 0..nt {
            starving[u].sort_unstable();
            keyed[u].sort_unstable();
            assert!(
                lists.starving[u].iter().eq(starving[u].iter()),
                "tenant {u}'s kept starving list differs from a fresh sort at {} ns",
                self.now
            );
            assert!(
                lists.keyed[u].iter().eq(keyed[u].iter()),
                "tenant {u}'s kept list differs from a fresh sort at {} ns",
                self.now
            );
            let waiting = !starving[u].is_empty() || !keyed[u].is_empty();
            assert_eq!(
                lists.tenants.contains(&u),
                waiting,
                "tenant {u} at {} ns",
                self.now
            );
        }
    }

    /// Debug builds: the lists kept from the last round at this instant
    /// ([`Scratch::reset`]) are what building them afresh gives, in the order read so far, and
    /// hold the rest of the jobs.
    #[cfg(debug_assertions)]
    fn check_kept_fresh_lists(&self, sc: &Scratch, sel: JobSelection) {
        let starve_ns = self.ql.ns.starvation;
        for &u in &sc.waiting_tenants {
            let l = &sc.lists;
            if !l.built[u] {
                continue;
            }
            let mut starving = Vec::new();
            let mut keyed = Vec::new();
            for &j in &self.ql.waiting.jobs[u] {
                let job = &self.jobs[j];
                if self.now - job.last_stop_ns >= starve_ns {
                    starving.push((job.submit_ns, j));
                } else {
                    let key = match sel {
                        // ρ as this instant's first round noted it.
                        JobSelection::Themis => {
                            assert_eq!(job.last_rho.to_bits(), self.artifact_rho(j).to_bits());
                            (order_bits(-self.artifact_rho(j)), 0)
                        }
                        _ => self.selection_key(sel, j),
                    };
                    keyed.push((key, j));
                }
            }
            starving.sort_unstable();
            keyed.sort_unstable();
            let (s, k) = l.sorted[u];
            assert_eq!(l.starving[u][..s], starving[..s], "tenant {u}'s kept starving jobs");
            assert_eq!(l.keyed[u][..k], keyed[..k], "tenant {u}'s kept list");
            let mut rest_s = l.starving[u].clone();
            let mut rest_k = l.keyed[u].clone();
            rest_s.sort_unstable();
            rest_k.sort_unstable();
            assert_eq!(rest_s, starving, "tenant {u}'s kept starving jobs at {} ns", self.now);
            assert_eq!(rest_k, keyed, "tenant {u}'s kept list at {} ns", self.now);
        }
    }

    /// Debug builds: the per-tenant counts of waiting and new waiting jobs, and the waiting
    /// jobs by tenant, are a fresh count's (for queues short enough to check at every round).
    #[cfg(debug_assertions)]
    fn check_waiting_counts(&self) {
        if self.waiting_list.len() > 256 {
            return;
        }
        let nt = self.tenants.len();
        let mut fresh = vec![(0u32, 0u32); nt];
        let mut by_tenant: Vec<Vec<usize>> = vec![Vec::new(); nt];
        for &j in &self.waiting_list {
            let u = self.jobs[j].tenant as usize;
            let c = &mut fresh[u];
            c.0 += 1;
            c.1 += u32::from(self.jobs[j].is_new());
            by_tenant[u].push(j);
        }
        assert_eq!(fresh, self.waiting_of, "waiting counts at {} ns", self.now);
        let w = &self.ql.waiting;
        for (u, jobs) in by_tenant.iter_mut().enumerate() {
            jobs.sort_unstable();
            let mut kept = w.jobs[u].clone();
            kept.sort_unstable();
            assert_eq!(*jobs, kept, "tenant {u}'s waiting jobs at {} ns", self.now);
            let min = jobs.iter().map(|&j| self.jobs[j].gpus).min();
            assert_eq!(min.unwrap_or(u32::MAX), w.min_gpus(u), "tenant {u}'s fewest GPUs");
            assert_eq!(w.tenants.binary_search(&u).is_ok(), !jobs.is_empty(), "tenant {u}");
        }
    }

    /// Phase 2 for tenant `u` (l. 800–846): walks its list from the top (the first `starving`
    /// jobs are its starving ones) against its round quota `quota`; a new job short of quota
    /// preempts the tenant's `delay` jobs in order; a job that fails the quota check or
    /// placement ends the turn under block scheduling or while starving jobs are unplaced.
    /// True when it started or preempted a job.
    fn phase2_tenant(
        &mut self,
        u: usize,
        list: impl Iterator<Item = usize>,
        starving: usize,
        quota: u64,
        delay: &[usize],
    ) -> bool {
        let block = self.params.astraea.block_scheduling;
        let mut changed = false;
        let mut starve_left = starving;
        let mut next_delay = 0usize;
        for j in list {
            let g = u64::from(self.jobs[j].gpus);
            if self.jobs[j].is_new() {
                while self.tenants[u].running_gpus + g > quota && next_delay < delay.len() {
                    let p = delay[next_delay];
                    next_delay += 1;
                    self.preempt_losing_lease(p);
                    changed = true;
                }
            }
            let stop_here = starve_left > 0 || block;
            if self.tenants[u].running_gpus + g > quota {
                if stop_here {
                    break;
                }
                continue;
            }
            let gpus = self.jobs[j].gpus;
            let placed = (g <= self.free_gpus)
                .then(|| {
                    (0..self.gpus_by_type.len() as u32)
                        .find_map(|t| self.place(gpus, t, self.all_nodes()).map(|a| (a, t)))
                })
                .flatten();
            match placed {
                Some((alloc, t)) => {
                    starve_left = starve_left.saturating_sub(1);
                    self.start_leased(j, alloc, t);
                    changed = true;
                }
                None => {
                    if stop_here {
                        break;
                    }
                }
            }
        }
        changed
    }

    /// Files the touched jobs of the kept lists again: out of where they were, into the
    /// tenant's starving list (waiting ≥ `starvation_s`) or its keyed list (other waiting
    /// jobs) by the selection's key, or nowhere (not waiting).
    fn file_touched_jobs(&mut self, sel: JobSelection) {
        let Some(mut kept) = self.ql.static_lists.take() else {
            return;
        };
        let starve_ns = self.ql.ns.starvation;
        for j in core::mem::take(&mut kept.touched) {
            kept.is_touched[j] = false;
            let u = self.jobs[j].tenant as usize;
            let l = &mut kept.lists;
            match core::mem::replace(&mut kept.filed[j], Filed::No) {
                Filed::No => {}
                Filed::Starving(submit) => {
                    l.starving[u].remove(&(submit, j));
                }
                Filed::Keyed(key) => {
                    l.keyed[u].remove(&(key, j));
                }
            }
            let job = &self.jobs[j];
            if job.phase == Phase::Waiting {
                kept.filed[j] = if self.now - job.last_stop_ns >= starve_ns {
                    l.starving[u].insert((job.submit_ns, j));
                    Filed::Starving(job.submit_ns)
                } else {
                    let key = self.selection_key(sel, j);
                    l.keyed[u].insert((key, j));
                    Filed::Keyed(key)
                };
                l.tenants.insert(u);
            } else if l.starving[u].is_empty() && l.keyed[u].is_empty() {
                l.tenants.remove(&u);
            }
        }
        self.ql.static_lists = Some(kept);
    }

    /// The selection's key of waiting job `j`: (primary, secondary).
    fn selection_key(&self, sel: JobSelection, j: usize) -> SelKey {
        let job = &self.jobs[j];
        match sel {
            JobSelection::Fairness => (
                order_bits(self.job_f(j, job.done_before_segment())),
                job.submit_ns,
            ),
            JobSelection::TwoDas => (order_bits(job.done_before_segment() as f64), job.submit_ns),
            // Set for every waiting job at the start of the round (`artifact_rho`).
            JobSelection::Themis => (order_bits(-job.last_rho), 0),
            JobSelection::Fifo => (order_bits(0.0), job.submit_ns),
        }
    }

    /// Phase 1 of the fair quota: each waiting tenant's quota for this round (held +
    /// granted, GPUs), into `sc.phase1.quota`.
    fn phase1_grants(&mut self, sc: &mut Scratch, waiting_total: usize, src: ListSource<'_>) {
        let lease_ns = self.ql.ns.lease as f64;
        let low = self.params.astraea.low_quota_share;
        let ratio_of = |cap: u64, q: u64| {
            if cap == 0 {
                f64::INFINITY
            } else {
                q as f64 / cap as f64
            }
        };
        let Scratch {
            waiting_tenants,
            lists,
            phase1: p,
            ..
        } = sc;
        for &u in waiting_tenants.iter() {
            let t = &self.tenants[u];
            p.quota[u] = t.running_gpus;
            p.ratio[u] = ratio_of(t.quota, t.running_gpus);
            p.uw[u] = if t.entitled_window == 0.0 {
                1.0
            } else {
                t.used_window / t.entitled_window
            };
            p.used[u] = t.used_window;
            p.weighted[u] = t.entitled_window + t.quota as f64 * lease_ns;
            p.cursor[u] = 0;
        }
        // The artifact's `min` over the tenants still in the running, ties to the first: a scan
        // of the waiting tenants (ascending) for the smallest (value, tenant) by each criterion
        // (every value is ≥ 0 or +∞, whose bit patterns order as the values do). A tenant with
        // nothing waiting would only be picked to drop out, changing nothing, so it never
        // takes part; one whose list is used up drops out. So does one none of whose jobs
        // fits the GPUs still free: picked, it would pass over its whole list and drop out,
        // changing no value, and `free` only shrinks. Leaving such tenants out of the scan
        // picks the tenant the artifact grants to next, without a pass per tenant that drops
        // out (the common end of a round: a few GPUs left that no waiting job fits).
        let bits = |v: f64| {
            debug_assert!(v >= 0.0, "phase-1 values are non-negative, got {v}");
            v.to_bits()
        };
        let mut free = self.free_gpus;
        while free > 0 && waiting_total > 0 {
            let mut by_ratio: Option<(u64, usize)> = None;
            let mut by_uw: Option<(u64, usize)> = None;
            for &u in waiting_tenants.iter() {
                if p.cursor[u] >= self.waiting_of[u].0 as usize
                    || free < u64::from(self.ql.waiting.min_gpus(u))
                {
                    continue;
                }
                let r = (bits(p.ratio[u]), u);
                if by_ratio.is_none_or(|b| r < b) {
                    by_ratio = Some(r);
                }
                let w = (bits(p.uw[u]), u);
                if by_uw.is_none_or(|b| w < b) {
                    by_uw = Some(w);
                }
            }
            let (Some((lowest_ratio, first_by_ratio)), Some((_, first_by_uw))) = (by_ratio, by_uw)
            else {
                break;
            };
            let u = if f64::from_bits(lowest_ratio) < low {
                first_by_ratio
            } else {
                first_by_uw
            };
            self.build_list(lists, u, src);
            while let Some(j) = lists.job_at(u, p.cursor[u]) {
                p.cursor[u] += 1;
                let g = u64::from(self.jobs[j].gpus);
                if free < g {
                    continue;
                }
                p.quota[u] += g;
                free -= g;
                p.used[u] += g as f64 * lease_ns;
                p.uw[u] = p.used[u] / p.weighted[u];
                p.ratio[u] = ratio_of(self.tenants[u].quota, p.quota[u]);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disc_class_matches_the_artifact() {
        // fairness2disc in Python 3 (numpy log/sqrt, float //), K = 5.
        assert_eq!(disc_class(0.0, 5), 0);
        assert_eq!(disc_class(1.0, 5), 3);
        assert_eq!(disc_class(0.5, 5), 2);
        assert_eq!(disc_class(2.0, 5), 4);
        assert_eq!(disc_class(100.0, 5), 5);
        assert_eq!(disc_class(0.01, 5), 1);
    }
}
