//! Scheduling policies. The global policies only decide, at each scheduling round, the priority
//! order of the active jobs (waiting and running) and when running jobs may be preempted; the
//! simulator ([`super::sim`]) turns the order into gang allocations on the cluster. One file
//! per policy, with its [`PolicySpec`]; the `policies!` table of [`PolicyKind`] lists them.
//!
//! The ASTRAEA family ([`PolicyKind::quota_lease`]) instead runs the ASTRAEA artifact's own
//! scheduler — per-tenant quotas, leases, block scheduling, starvation and delay-job
//! preemption (`super::sim::quota_lease`) — with one of the artifact's job-selection orders
//! inside it, which is how the artifact compares 2DAS and Themis to ASTRAEA.

use alloc::boxed::Box;
use alloc::collections::binary_heap::{BinaryHeap, PeekMut};
use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use core::cmp::{Ordering, Reverse};
use core::iter::Peekable;

use super::params::FairnessParams;
use super::sim::{Phase, RoundCtx};

/// Declares [`PolicyKind`] from one row per policy: the `kinds!` row (doc, id, label) and the
/// file the policy lives in (`in <module>`), whose `SPEC` says the rest ([`PolicySpec`]).
/// Adding a policy is its file and its row.
macro_rules! policies {
    (
        $(#[$meta:meta])*
        pub enum $name:ident as $what:literal {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $id:literal, $label:literal in $module:ident;
            )+
        }
    ) => {
        $( mod $module; )+

        crate::kinds! {
            $(#[$meta])*
            pub enum $name as $what {
                $(
                    $(#[$vmeta])*
                    $variant = $id, $label;
                )+
            }
        }

        impl $name {
            /// The rest of what the lab knows of the policy: its file's `SPEC`.
            #[must_use]
            pub fn spec(self) -> &'static PolicySpec {
                match self {
                    $( $name::$variant => &$module::SPEC, )+
                }
            }

            /// The policy's file in `policies/`, without `.rs`.
            #[must_use]
            pub fn file(self) -> &'static str {
                match self {
                    $( $name::$variant => stringify!($module), )+
                }
            }
        }
    };
}

/// What the lab knows of a policy beyond its id and label (each policy file's `SPEC`).
pub struct PolicySpec {
    /// Where it sits on the survey's map ([`PolicyKind::survey_cell`]).
    pub survey_cell: (usize, usize),
    /// Whether it aims at fairness between tenants or jobs.
    pub fair: bool,
    /// What its mechanism needs to mean something (without it, it stays out of the default
    /// set).
    pub needs: Needs,
    /// How a run runs it.
    pub runs: Runs,
}

/// What a policy's mechanism needs beyond jobs on GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing more.
    Nothing,
    /// Jobs with deadlines (slot admission): without any, every job runs as best-effort.
    Deadlines,
    /// An inference service beside the training jobs (`fairness.colocation`): without one
    /// the policy is FIFO.
    Service,
    /// Several GPU types (Gavel): on one type it is job-level max-min in rounds, and its LP
    /// grows with the active jobs.
    GpuTypes,
}

/// How a run runs a policy.
pub enum Runs {
    /// A policy object of its own, built for each run from the parameters, the number of
    /// tenants and the number of jobs.
    Policy(fn(&FairnessParams, usize, usize) -> Box<dyn Policy>),
    /// The ASTRAEA machinery (`super::sim::quota_lease`) with a job selection inside.
    Machinery {
        /// How it orders a tenant's waiting jobs.
        selection: JobSelection,
        /// Static tenant quotas (the YARN-like baseline) instead of the run's quota mode.
        static_quota: bool,
        /// Whether jobs run in leases.
        leases: bool,
    },
}

policies! {
    /// The policies the lab knows.
    pub enum PolicyKind as "fairness policy" {
        /// First in, first out; never preempts (jobs that do not fit are skipped, the next one that
        /// fits starts: backfilling).
        Fifo = "fifo", "FIFO" in fifo;
        /// Shortest job first on oracle durations; never preempts.
        Sjf = "sjf", "SJF (oracle)" in sjf;
        /// Shortest remaining time first on oracle remaining times; preempts at any event.
        Srtf = "srtf", "SRTF (oracle)" in srtf;
        /// Tiresias' discretised 2D least-attained-service (Gu et al., NSDI'19).
        Tiresias = "tiresias", "Tiresias (2D-LAS)" in tiresias;
        /// Largest finish-time-fairness ρ first at lease boundaries, ρ as Themis defines it
        /// (Mahajan et al., NSDI'20, §3) — not Themis' mechanism (its fairness knob and
        /// partial-allocation auction: [`PolicyKind::Themis`]).
        LargestRho = "largest-rho", "Largest ρ first" in largest_rho;
        /// Themis (Mahajan et al., NSDI'20): the GPUs offered at lease ends and whenever some
        /// are free go by auction to the 1 − f fraction of jobs with the largest ρ, winners
        /// maximising the product of their ρ improvements, with partial-allocation hidden
        /// payments and leftovers auctioned again.
        Themis = "themis", "Themis (auction)" in themis;
        /// Instantaneous weighted max-min fair share of GPUs per tenant (DRF-style progressive
        /// filling; Ghodsi et al., NSDI'11), re-evaluated at every event.
        FairShare = "fair-share", "Fair share (max-min)" in fair_share;
        /// Gandiva-fair's per-tenant tickets with time-sliced stride scheduling (Chaudhary et al.,
        /// EuroSys'20).
        GandivaFair = "gandiva-fair", "Gandiva-fair" in gandiva_fair;
        /// Tenants filled max-min by heterogeneity-weighted GPU units, each job on its fastest free
        /// type, in rounds of one lease — a rule of our own in the spirit of Gavel (Narayanan et
        /// al., OSDI'20), not Gavel's LP over time fractions nor its round mechanism.
        HeteroFairShare = "hetero-fair-share", "Heterogeneity-weighted fair share" in hetero_fair_share;
        /// Gavel's heterogeneity-aware max-min fairness (Narayanan et al., OSDI'20) as its
        /// artifact runs it: an LP over each job's fraction of time on each GPU type, realised in
        /// 360 s rounds that run the jobs furthest behind their allocation.
        Gavel = "gavel", "Gavel (max-min)" in gavel;
        /// Gavel's heterogeneity-agnostic max-min fairness (`max_min_fairness`): the same LP
        /// and rounds with every throughput taken as 1, the baseline Gavel's paper compares
        /// against.
        GavelAgnostic = "gavel-agnostic", "Gavel, heterogeneity-agnostic" in gavel_agnostic;
        /// ASTRAEA (Ye et al., TPDS'21) as its artifact runs it: per-tenant quotas granted by
        /// max-min on U/W, leases, block scheduling, starvation and delay-job preemption, jobs of
        /// a tenant by their long-term fairness F_j (`--job_selection fairness`).
        Astraea = "astraea", "ASTRAEA" in astraea;
        /// The artifact's 2DAS baseline: ASTRAEA's quota and lease machinery with a tenant's jobs
        /// by least executed time (`--job_selection 2das`).
        Astraea2das = "astraea-2das", "2DAS in ASTRAEA's machinery" in astraea_2das;
        /// The artifact's Themis baseline: ASTRAEA's machinery with a tenant's jobs by the
        /// artifact's finish-time fairness, largest first (`--job_selection themis`).
        AstraeaThemis = "astraea-themis", "Themis in ASTRAEA's machinery" in astraea_themis;
        /// The artifact's YARN-like baseline: static tenant quotas, FIFO within a tenant, no
        /// leases (`--job_selection fifo --user_quota static`, lease term unbounded).
        YarnFifo = "yarn-fifo", "YARN-like (static quota, FIFO)" in yarn_fifo;
        /// Deadline admission in lease slots after Chronus (Gao et al., SoCC'21): SLO jobs
        /// admitted only with a plan of 20-minute lease slots that meets their deadline, rejected
        /// ones rescued within the slot every 5 minutes, the rest on spare GPUs — the artifact's
        /// admission, slots, rescue and fill orders without its re-solved plan or soft
        /// deadlines.
        SlotAdmission = "slot-admission", "Slot admission (after Chronus)" in slot_admission;
        /// The inference service on its own servers, training FIFO on the rest: separate
        /// clusters, the baseline of Lyra (Li et al., EuroSys'23). Needs a service
        /// (`fairness.colocation`).
        SeparateClusters = "separate-clusters", "Separate clusters" in separate_clusters;
        /// Capacity loaning after Lyra (Li et al., EuroSys'23): idle service servers loaned to
        /// FIFO training, reclaimed by stopping the fewest training jobs when the service
        /// needs them. Needs a service (`fairness.colocation`).
        LoanReclaim = "loan-reclaim", "Capacity loaning (after Lyra)" in loan_reclaim;
    }
}

/// The rows of the survey's map ([`PolicyKind::survey_cell`]): what a scheduler optimises.
pub const SURVEY_OBJECTIVES: [&str; 3] = ["Efficiency (JCT, utilisation)", "Fairness", "Deadlines"];

/// The columns of the survey's map: how a scheduler uses GPUs.
pub const SURVEY_RESOURCES: [&str; 4] = [
    "Exclusive GPUs, gang",
    "Heterogeneous GPUs",
    "Shared / time-sliced GPUs",
    "Elastic jobs",
];

/// How the ASTRAEA machinery orders one tenant's waiting jobs (the artifact's
/// `--job_selection`, `alg/scheduler/lease.py` `job_selection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobSelection {
    /// Ascending F_j = U_j/D_j, then submission; delay jobs are preempted from the highest F_j.
    Fairness,
    /// Ascending executed time, then submission; no delay-job preemption.
    TwoDas,
    /// Descending finish-time fairness ρ (`get_finish_time_fairness`); delay jobs are
    /// preempted from the lowest ρ.
    Themis,
    /// Submission order; no delay-job preemption.
    Fifo,
}

impl JobSelection {
    /// True when a new job short of quota may preempt its tenant's delay jobs.
    #[must_use]
    pub fn preempts_delay_jobs(self) -> bool {
        matches!(self, JobSelection::Fairness | JobSelection::Themis)
    }

    /// True when a waiting job's key does not change while it waits (FIFO: submission;
    /// 2DAS: executed time, fixed while the job holds no GPUs), so a tenant's list can be
    /// kept sorted across rounds.
    #[must_use]
    pub fn is_static(self) -> bool {
        matches!(self, JobSelection::Fifo | JobSelection::TwoDas)
    }
}

crate::kinds! {
    /// How the ASTRAEA machinery sets a tenant's quota for one scheduling round (`--user_quota`).
    #[derive(Default)]
    pub enum QuotaMode as "quota mode" {
        /// Phase 1 hands the free GPUs out job by job, max-min on each tenant's U/W: the quota
        /// of the round is what the tenant holds plus what it was granted (work-conserving
        /// across tenants).
        #[default]
        Fair = "fair", "phase-1 max-min grants of the free GPUs (the artifact's `fair`)";
        /// The static quota Q_u = ⌊G·s_u/Σs⌋ (non-work-conserving).
        Static = "static", "the static quota ⌊G·s_u/Σs⌋ (the artifact's `static`)";
    }
}

/// One run of the ASTRAEA machinery: the order inside it, its quota mode and whether leases
/// expire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuotaLease {
    /// Order of a tenant's waiting jobs.
    pub selection: JobSelection,
    /// Quota of a round.
    pub quota: QuotaMode,
    /// Leases expire after `lease_s` of running (false: a job runs to completion).
    pub leases: bool,
}

impl PolicyKind {
    /// The ASTRAEA machinery this policy runs in, or `None` for a global policy.
    #[must_use]
    pub fn quota_lease(self, quota: QuotaMode) -> Option<QuotaLease> {
        match self.spec().runs {
            Runs::Machinery {
                selection,
                static_quota,
                leases,
            } => Some(QuotaLease {
                selection,
                quota: if static_quota { QuotaMode::Static } else { quota },
                leases,
            }),
            Runs::Policy(_) => None,
        }
    }

    /// True for the policies whose mechanism needs jobs with deadlines (slot admission): on a trace
    /// without any they run every job as best-effort, which is not the system at work, so they
    /// are left out of the default set ([`PolicyKind::defaults`]).
    #[must_use]
    pub fn needs_deadlines(self) -> bool {
        self.spec().needs == Needs::Deadlines
    }

    /// True for the policies whose mechanism needs an inference service beside the training
    /// jobs (`fairness.colocation`): without one they are FIFO, so they are left out of the
    /// default set too.
    #[must_use]
    pub fn needs_service(self) -> bool {
        self.spec().needs == Needs::Service
    }

    /// True for the policies whose mechanism is about several GPU types (Gavel): on one type
    /// Gavel is job-level max-min in rounds, and on several its LP grows with the active jobs,
    /// so it is left out of the default set too and runs when chosen.
    #[must_use]
    pub fn needs_gpu_types(self) -> bool {
        self.spec().needs == Needs::GpuTypes
    }

    /// The policies a scenario runs when it names none: every policy but those that need
    /// deadlines, a service or several GPU types.
    #[must_use]
    pub fn defaults() -> Vec<PolicyKind> {
        PolicyKind::ALL
            .into_iter()
            .filter(|k| !k.needs_deadlines() && !k.needs_service() && !k.needs_gpu_types())
            .collect()
    }

    /// True for the policies that run in the ASTRAEA machinery (tenant quotas).
    #[must_use]
    pub fn uses_quotas(self) -> bool {
        self.quota_lease(QuotaMode::Fair).is_some()
    }

    /// The positions of `policies` in the order to start their runs on several threads or
    /// workers (longest first, so that the last to end is a short one): the ASTRAEA
    /// machinery's, whose per-job lease renewals make them the longest runs on long traces
    /// (on the 100,000-job bench ~25 times the events of the others: docs/PERFORMANCE.md),
    /// then the others; each group in its listed order.
    #[must_use]
    pub fn longest_first(policies: &[PolicyKind]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..policies.len()).collect();
        order.sort_by_key(|&i| (!policies[i].uses_quotas(), i));
        order
    }

    /// Where the policy sits on the survey's map of the field (Gao et al., "Deep Learning
    /// Workload Scheduling in GPU Datacenters: A Survey", ACM Computing Surveys 2024): the
    /// row in [`SURVEY_OBJECTIVES`] and the column in [`SURVEY_RESOURCES`].
    #[must_use]
    pub fn survey_cell(self) -> (usize, usize) {
        self.spec().survey_cell
    }

    /// True for the policies that aim at fairness between tenants or jobs.
    #[must_use]
    pub fn is_fair(self) -> bool {
        self.spec().fair
    }

    /// A fresh policy instance for one run; `None` for the ASTRAEA family, which the
    /// simulator runs itself (see [`PolicyKind::quota_lease`]).
    #[must_use]
    pub fn build(
        self,
        params: &FairnessParams,
        tenants: usize,
        jobs: usize,
    ) -> Option<Box<dyn Policy>> {
        match self.spec().runs {
            Runs::Policy(build) => Some(build(params, tenants, jobs)),
            Runs::Machinery { .. } => None,
        }
    }
}

/// When a policy may take GPUs away from a running job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preemption {
    /// Never: a job runs to completion once started.
    Never,
    /// At any scheduling round (arrival, completion, wake-up).
    Anytime,
    /// Only once the job's lease (this many ns since it started or was renewed) has ended.
    AtLeaseEnd(u64),
    /// Only once the job's lease has ended; every lease ends at the next multiple of this many
    /// ns after it started (lease slots on a global grid: slot admission).
    AtSlotEnd(u64),
    /// In rounds of this many ns (Gavel): jobs start only at a round's start, every running job
    /// may be stopped or moved to another GPU type there, and a round ends early when its last
    /// running job finishes (the next starts at once, or at the next arrival).
    Rounds(u64),
}

/// Where a policy hands out its order, one job at a time; it returns false once the simulator
/// needs no more (every GPU is spoken for), so a policy never orders jobs nobody will look at.
pub type Emit<'a> = dyn FnMut(usize) -> bool + 'a;

/// A scheduling policy: an order over the active jobs, plus its preemption rule.
pub trait Policy {
    /// Emits the active jobs (`ctx.active`, waiting and running; only the waiting ones for a
    /// policy whose preemption rule is [`Preemption::Never`]) from highest to lowest priority,
    /// each at most once, until `emit` returns false. The simulator gives each
    /// emitted job that still fits its GPUs (running jobs that may not be preempted keep theirs
    /// regardless, so an order by key may leave them out: [`takeable`]). Orders are produced
    /// lazily or kept from the last round ([`LazySorted`], [`KeptOrder`]): a round costs about
    /// O(active + emitted · log active), not O(active · log active).
    fn order(&mut self, ctx: &RoundCtx<'_>, emit: &mut Emit<'_>);

    /// When running jobs may be preempted.
    fn preemption(&self) -> Preemption;

    /// Jobs reach the policy (arrive, in [`Policy::on_arrival`] and the rounds) at the first
    /// multiple of this at or after their submission (slot admission's ticks); `None` (the
    /// default): at their submission. Their JCT counts from their submission either way.
    fn arrival_tick_ns(&self) -> Option<u64> {
        None
    }

    /// Admission control: called once for each job when it arrives, before the round of that
    /// instant (jobs arriving together in index order). `Some(admitted)` for a job the policy
    /// admits or rejects (slot admission's SLO jobs), `None` when it makes no such decision.
    fn on_arrival(&mut self, _ctx: &RoundCtx<'_>, _job: usize) -> Option<bool> {
        None
    }

    /// For a policy that may preempt at any time ([`Preemption::Anytime`]): the same order as
    /// [`Policy::order`], walked by its waiting jobs only ([`WaitingWalk`]), each given with
    /// the GPUs of the running jobs ahead of it in the order, until the walk asks for every job
    /// from one on or stops. It does to the policy's own state what `order` does. False (the
    /// default): the policy has no such walk, and the round reads `order`.
    fn walk_waiting(&mut self, _ctx: &RoundCtx<'_>, _walk: &mut dyn WaitingWalk) -> bool {
        false
    }

    /// For a policy that preempts only where leases end ([`Preemption::AtLeaseEnd`],
    /// [`Preemption::AtSlotEnd`]), in a round where every running job still holds its lease:
    /// the order of [`Policy::order`] restricted to the waiting jobs (`ctx.waiting`), the only
    /// jobs such a round can give GPUs to (most rounds of a lease policy come between lease
    /// ends, at arrivals and completions). It does to the policy's own state what `order` does,
    /// or leaves it where the next `order` gives the same order. False (the default), having
    /// emitted nothing: the policy has no such order, and the round reads `order`.
    fn order_waiting(&mut self, _ctx: &RoundCtx<'_>, _emit: &mut Emit<'_>) -> bool {
        false
    }

    /// Under [`Preemption::AtSlotEnd`] or [`Preemption::AtLeaseEnd`], for a job that just
    /// started or was renewed: the instant its lease ends when that is before the grid's
    /// boundary (slot admission's jobs that hold no planned slot, preemptible at the next
    /// rescue tick; Themis' winners that pay a hidden payment). `None` (the default): at the
    /// boundary.
    fn lease_end_ns(&self, _ctx: &RoundCtx<'_>, _job: usize) -> Option<u64> {
        None
    }

    /// For a job that just started or was renewed: after how many ns of running the policy
    /// wants another scheduling round (Tiresias: when the job crosses a queue threshold).
    fn wakeup_after_ns(&self, _ctx: &RoundCtx<'_>, _job: usize) -> Option<u64> {
        None
    }

    /// GPU types in the order this job prefers them (heterogeneity-weighted fair share: fastest first); `None` means type
    /// order.
    fn type_preference(&self, _ctx: &RoundCtx<'_>, _job: usize) -> Option<Vec<u32>> {
        None
    }

    /// The nodes `lo..hi` this job may be placed on (an inference replica on its service's own
    /// servers, a training job kept off them: [`PolicyKind::SeparateClusters`]); `None` means
    /// every node.
    fn nodes_for(&self, _ctx: &RoundCtx<'_>, _job: usize) -> Option<(u32, u32)> {
        None
    }
}

/// What a waiting walk does after a waiting job ([`WaitingWalk::waiting`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkNext {
    /// On to the next waiting job.
    Next,
    /// The round needs nothing more.
    Stop,
    /// From this job on (itself included) the round needs every job, running or waiting, in
    /// the order, through [`WaitingWalk::every`].
    Every,
}

/// The simulator's side of [`Policy::walk_waiting`]. A round of a policy that preempts at any
/// time gives GPUs to the jobs in the policy's order, each that still fits; the running jobs
/// hold no more than all GPUs, so while the waiting jobs given GPUs take no more than the free
/// ones every running job keeps its place, and only where they would take more does the round
/// need to see the running jobs one by one. At most rounds few jobs wait and many run (the
/// 100,000-job bench: ~540 running and ~5 waiting jobs read per round), so the walk reads the
/// waiting ones.
pub trait WaitingWalk {
    /// Waiting job `job`, with `running_ahead_gpus` GPUs held by the running jobs ahead of it
    /// in the order.
    fn waiting(&mut self, job: usize, running_ahead_gpus: u64) -> WalkNext;
    /// After [`WalkNext::Every`]: the next job in the order, running or waiting. Once it
    /// returns false (fewer GPUs are left than any job asks for), the round needs only the
    /// running jobs after this one, each of which loses its GPUs: the walk hands those on
    /// and no others.
    fn every(&mut self, job: usize) -> bool;
}

/// A total order on f64 keys (NaN sorts last) for heaps and sorts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Key(pub u8, pub f64);

impl Key {
    /// The key as integer bits that order as the keys do: the class above
    /// [`order_bits`] of the value.
    #[must_use]
    pub fn bits(self) -> u128 {
        (u128::from(self.0) << 64) | u128::from(order_bits(self.1))
    }
}

/// `x`'s bits, mapped so that they order as [`f64::total_cmp`] orders the values (negative
/// values' bits flipped, non-negative ones' sign bit set): a sort on integers instead of
/// float comparisons, in the same order.
#[must_use]
pub fn order_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0).then(self.1.total_cmp(&other.1))
    }
}

/// Progressive filling across tenants: repeatedly takes the tenant with the smallest key, emits
/// its next queued job and raises that tenant's key by `raise(tenant, job, key)`. Ties go to the
/// lower tenant index. This is water-filling in gang units: a max-min allocation when the keys
/// are allocation / weight (DRF with one resource, Ghodsi et al. NSDI'11). Stops as soon as
/// `emit` returns false. `queues[t]` yields tenant t's jobs in its order.
pub fn interleave<Q: Iterator<Item = usize>>(
    queues: Vec<Q>,
    keys: Vec<Key>,
    raise: impl FnMut(usize, usize, Key) -> Key,
    emit: &mut Emit<'_>,
) {
    interleave_skipping(queues, keys, raise, |_| false, emit);
}

/// [`interleave`], without emitting the jobs for which `skip` is true (jobs the simulator keeps
/// whatever the order: see [`takeable`]); they still raise their tenant's key. A tenant's keys
/// only grow, so the heap pops every tenant's keys in the same merged order with or without
/// them: the other jobs are emitted in the same order, and a tenant's run of skipped jobs costs
/// one heap operation instead of one each.
pub fn interleave_skipping<Q: Iterator<Item = usize>>(
    queues: Vec<Q>,
    mut keys: Vec<Key>,
    mut raise: impl FnMut(usize, usize, Key) -> Key,
    skip: impl Fn(usize) -> bool,
    emit: &mut Emit<'_>,
) {
    let mut queues: Vec<Peekable<Q>> = queues.into_iter().map(Iterator::peekable).collect();
    // The heap holds each tenant's key as integer bits ([`Key::bits`], same order) with the
    // tenant; `keys` keeps the key itself for `raise`.
    let mut heap: BinaryHeap<Reverse<(u128, usize)>> = keys
        .iter()
        .enumerate()
        .filter(|(t, _)| queues[*t].peek().is_some())
        .map(|(t, k)| Reverse((k.bits(), t)))
        .collect();
    // The smallest (key, tenant) is raised in place (one sift instead of a pop and a push);
    // (key, tenant) pairs are unique, so the order does not depend on the heap's layout.
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((_, t)) = *top;
        let Some(job) = queues[t].next() else {
            PeekMut::pop(top);
            continue;
        };
        let mut key = raise(t, job, keys[t]);
        if skip(job) {
            while let Some(&next) = queues[t].peek() {
                if !skip(next) {
                    break;
                }
                queues[t].next();
                key = raise(t, next, key);
            }
        } else if !emit(job) {
            return;
        }
        keys[t] = key;
        if queues[t].peek().is_none() {
            PeekMut::pop(top);
        } else {
            *top = Reverse((key.bits(), t));
        }
    }
}

/// Jobs in ascending (key, job index) order, sorted only as far as they are read: an input
/// that is already in order (FIFO's submission order) costs one pass; otherwise the smallest
/// 32, 64, 128, … are selected (`select_nth_unstable`, linear) and sorted chunk by chunk, so
/// reading k of n jobs costs about O(n + k log k) and reading all of them O(n log n).
#[derive(Clone, Debug)]
pub struct LazySorted<K> {
    items: Vec<(K, usize)>,
    /// Next item to hand out.
    next: usize,
    /// Items before this index are in final order.
    sorted_end: usize,
}

impl<K: Ord> LazySorted<K> {
    /// Wraps (key, job) pairs; job indices must be unique (they break ties).
    #[must_use]
    pub fn new(items: Vec<(K, usize)>) -> Self {
        let sorted_end = if items.is_sorted() { items.len() } else { 0 };
        LazySorted {
            items,
            next: 0,
            sorted_end,
        }
    }

    /// True when every job has been handed out.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.next >= self.items.len()
    }

    /// The next job in order, left in place.
    pub fn peek(&mut self) -> Option<usize> {
        let j = self.pop()?;
        self.next -= 1;
        Some(j)
    }

    /// The next job in order.
    pub fn pop(&mut self) -> Option<usize> {
        if self.next >= self.items.len() {
            return None;
        }
        sort_prefix(&mut self.items, &mut self.sorted_end, self.next + 1);
        let j = self.items[self.next].1;
        self.next += 1;
        Some(j)
    }
}

/// Puts the smallest `n` of `items` in order at its front, given that the first `*sorted`
/// already are (and are the smallest): the first item alone by one scan for the smallest (a
/// reader often looks at the top only: a tenant blocked at its first job), then the sorted
/// prefix grows to at least twice its length and at least 32 — the rest's smallest are
/// selected (`select_nth_unstable`, linear), then sorted — so reading k of n items in order
/// costs about O(n + k log k).
pub(crate) fn sort_prefix<T: Ord>(items: &mut [T], sorted: &mut usize, n: usize) {
    if n <= *sorted {
        return;
    }
    if *sorted == 0 && n == 1 {
        let min = (1..items.len()).fold(0, |m, i| if items[i] < items[m] { i } else { m });
        items.swap(0, min);
        *sorted = 1;
        return;
    }
    let end = n.max(2 * *sorted).max(32).min(items.len());
    let rest = &mut items[*sorted..];
    let k = end - *sorted;
    if k < rest.len() {
        rest.select_nth_unstable(k - 1);
    }
    rest[..k].sort_unstable();
    *sorted = end;
}

impl<K: Ord> Iterator for LazySorted<K> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        self.pop()
    }
}

/// One tenant's jobs, smallest (key, job index) first.
pub type TenantQueue<K> = LazySorted<K>;

/// Emits `jobs` by ascending `key` (ties by job index) until `emit` returns false. Each key is
/// computed once (keys may be costly: remaining work, attained service, fairness); the order
/// is sorted only as far as the simulator reads it ([`LazySorted`]).
pub fn emit_by_key<K: Ord>(
    jobs: impl IntoIterator<Item = usize>,
    mut key: impl FnMut(usize) -> K,
    emit: &mut Emit<'_>,
) {
    let mut queue = LazySorted::new(jobs.into_iter().map(|j| (key(j), j)).collect());
    while let Some(j) = queue.pop() {
        if !emit(j) {
            return;
        }
    }
}

/// Active jobs grouped by tenant, each queue ordered by `key` (ties by job index); jobs for
/// which `key` gives `None` are left out.
pub fn by_tenant<K: Ord>(
    ctx: &RoundCtx<'_>,
    mut key: impl FnMut(usize) -> Option<K>,
) -> Vec<TenantQueue<K>> {
    let mut groups: Vec<Vec<(K, usize)>> = (0..ctx.tenants.len()).map(|_| Vec::new()).collect();
    for &j in ctx.active {
        if let Some(k) = key(j) {
            groups[ctx.jobs[j].tenant as usize].push((k, j));
        }
    }
    groups.into_iter().map(LazySorted::new).collect()
}

/// True unless job `j` holds GPUs under a lease that has not ended: the simulator keeps such a
/// job whatever the order, so emitting it changes nothing for an order by key (it would for
/// [`interleave`], where every emitted job raises its tenant's key).
#[must_use]
pub fn takeable(ctx: &RoundCtx<'_>, j: usize) -> bool {
    let job = &ctx.jobs[j];
    !(job.is_running() && job.lease_end_ns > ctx.now_ns)
}

/// Orders kept from one round to the next. Keys move little between rounds (a few jobs
/// arrive, finish, start or cross a threshold), so the last round's order, re-keyed, is nearly
/// sorted and the stable (run-merging) sort orders it in about linear time, where sorting from
/// scratch costs O(n log n) every round. The order is the same as a fresh sort's: keys are
/// unique with the job index.
#[derive(Clone, Debug, Default)]
pub struct KeptOrder {
    /// Per group (one, or one per tenant): the jobs of the last round, in order.
    groups: Vec<Vec<usize>>,
    /// Per job: the round tag it was last seen with (offered, or offered and placed).
    mark: Vec<u32>,
    tag: u32,
}

impl KeptOrder {
    /// `jobs` grouped by `group` (< `groups`), each group sorted by (`key`, job index); jobs
    /// whose key is `None` are left out.
    pub fn sorted<K: Ord>(
        &mut self,
        jobs: &[usize],
        groups: usize,
        group: impl Fn(usize) -> usize,
        mut key: impl FnMut(usize) -> Option<K>,
    ) -> Vec<Vec<(K, usize)>> {
        self.groups.resize_with(groups, Vec::new);
        if self.tag >= u32::MAX - 2 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.tag = 0;
        }
        let offered = self.tag + 1;
        let placed = self.tag + 2;
        self.tag = placed;
        for &j in jobs {
            if j >= self.mark.len() {
                self.mark.resize(j + 1, 0);
            }
            self.mark[j] = offered;
        }
        let mut out: Vec<Vec<(K, usize)>> = Vec::with_capacity(groups);
        for order in &self.groups {
            // A tenant with no job last round gets no buffer unless one arrives (most tenants
            // of a long trace are idle at any one time).
            let mut items = if order.is_empty() {
                Vec::new()
            } else {
                Vec::with_capacity(order.len() + 4)
            };
            for &j in order {
                if self.mark.get(j) == Some(&offered) {
                    self.mark[j] = placed;
                    if let Some(k) = key(j) {
                        items.push((k, j));
                    }
                }
            }
            out.push(items);
        }
        for &j in jobs {
            if self.mark[j] == offered {
                if let Some(k) = key(j) {
                    out[group(j)].push((k, j));
                }
            }
        }
        for (items, order) in out.iter_mut().zip(&mut self.groups) {
            items.sort();
            order.clear();
            order.extend(items.iter().map(|e| e.1));
        }
        out
    }

    /// Emits `jobs` by ascending (`key`, job index) until `emit` returns false.
    pub fn emit_by_key<K: Ord>(
        &mut self,
        jobs: &[usize],
        mut key: impl FnMut(usize) -> Option<K>,
        emit: &mut Emit<'_>,
    ) {
        let mut sorted = self.sorted(jobs, 1, |_| 0, &mut key);
        for (_, j) in sorted.pop().unwrap_or_default() {
            if !emit(j) {
                return;
            }
        }
    }

    /// The active jobs grouped by tenant, each queue by (`key`, job index), as [`by_tenant`].
    pub fn by_tenant<K: Ord>(
        &mut self,
        ctx: &RoundCtx<'_>,
        key: impl FnMut(usize) -> Option<K>,
    ) -> Vec<TenantQueue<K>> {
        self.sorted(
            ctx.active,
            ctx.tenants.len(),
            |j| ctx.jobs[j].tenant as usize,
            key,
        )
        .into_iter()
        .map(LazySorted::new)
        .collect()
    }
}

/// Each tenant's active jobs, running ones first (no churn), then by submission (then index):
/// the within-tenant order of the max-min policies. Kept across rounds and brought up to date
/// from the jobs that changed phase since the last round ([`RoundCtx::changed`]), so a round
/// reads a tenant's jobs only as far as the filling reaches, instead of grouping and sorting
/// every active job (for a policy offered every active job: one that may preempt).
#[derive(Clone, Debug, Default)]
pub struct RunningThenFifo {
    /// Per tenant: its running jobs by (submission ns, job).
    running: Vec<BTreeSet<(u64, usize)>>,
    /// Per tenant: its waiting jobs by (submission ns, job).
    waiting: Vec<BTreeSet<(u64, usize)>>,
}

impl RunningThenFifo {
    /// Files the jobs of `ctx.changed` again, then yields each tenant's queue.
    pub fn queues<'s>(
        &'s mut self,
        ctx: &RoundCtx<'_>,
    ) -> Vec<impl Iterator<Item = usize> + 's> {
        self.refresh(ctx);
        self.as_filed()
    }

    /// Each tenant's queue as last filed.
    #[must_use]
    pub fn as_filed(&self) -> Vec<impl Iterator<Item = usize> + '_> {
        self.running
            .iter()
            .zip(&self.waiting)
            .map(|(r, w)| r.iter().chain(w).map(|e| e.1))
            .collect()
    }

    /// Files the jobs of `ctx.changed` again.
    pub fn refresh(&mut self, ctx: &RoundCtx<'_>) {
        let tenants = ctx.tenants.len();
        if self.running.len() != tenants {
            self.running.resize_with(tenants, BTreeSet::new);
            self.waiting.resize_with(tenants, BTreeSet::new);
        }
        for &j in ctx.changed {
            let job = &ctx.jobs[j];
            let u = job.tenant as usize;
            let entry = (job.submit_ns, j);
            self.running[u].remove(&entry);
            self.waiting[u].remove(&entry);
            match job.phase {
                Phase::Running => self.running[u].insert(entry),
                Phase::Waiting => self.waiting[u].insert(entry),
                Phase::Pending | Phase::Done => false,
            };
        }
        #[cfg(debug_assertions)]
        self.check(ctx);
    }

    /// Debug builds: the kept queues hold exactly the active jobs, in the order a fresh sort
    /// by (not running, submission, index) gives (for short queues).
    #[cfg(debug_assertions)]
    fn check(&self, ctx: &RoundCtx<'_>) {
        if ctx.active.len() > 256 {
            return;
        }
        let mut fresh: Vec<Vec<(bool, u64, usize)>> = alloc::vec![Vec::new(); ctx.tenants.len()];
        for &j in ctx.active {
            let job = &ctx.jobs[j];
            fresh[job.tenant as usize].push((!job.is_running(), job.submit_ns, j));
        }
        for (u, f) in fresh.iter_mut().enumerate() {
            f.sort_unstable();
            let kept = self.running[u].iter().chain(&self.waiting[u]).map(|e| e.1);
            assert!(
                kept.eq(f.iter().map(|e| e.2)),
                "tenant {u}'s kept queue differs from a fresh sort at {} ns",
                ctx.now_ns
            );
        }
    }
}
