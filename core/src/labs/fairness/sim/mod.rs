//! The cluster simulator: event-driven on the engine's [`EventQueue`], integer ns, gang
//! scheduling, placement on nodes, preemption with a checkpoint/resume cost, and exact
//! accounting of used, deserved and entitled GPU-time between events (no tick).
//!
//! Events: arrival, completion, lease expiry, policy wake-up and the accounting-window bucket
//! boundary (where metrics are sampled). All events at one instant are applied first, then one
//! scheduling round runs: the policy orders the active jobs, the simulator keeps or gives GPUs
//! in that order (a job that does not fit is skipped, the next one may start), preempts the
//! preemptible running jobs it did not keep, and places the new ones. The ASTRAEA family runs
//! the artifact's own round instead ([`quota_lease`]).
//!
//! Every policy's jobs are judged by the ASTRAEA artifact's job fairness: D_j accrues
//! min(gⱼ, Q_u/n_u) GPUs while the job is active (n_u = its tenant's active jobs,
//! `update_job_fairness` in `alg/scheduler/lease.py`), U_j = gⱼ × its duration at the finish,
//! F_j = U_j/D_j.
//!
//! This file is the event loop; what is kept of each job and tenant is in [`state`], where
//! GPUs go in [`placement`], and the ASTRAEA machinery's round in [`quota_lease`].

mod placement;
pub mod quota_lease;
mod state;

use placement::NodeSet;
pub use placement::{occupancy_at, occupancy_of};
use state::{accrue_rings, u128_to_f64};
pub use state::{
    JobState, NodeAlloc, Phase, PolicyRun, RoundCtx, Sample, Segment,
    TenantState, WindowRing,
};

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use super::job::Trace;
use super::params::{s_to_ns, FairnessParams, TenantWeights};
use super::policies::{PolicyKind, Preemption, QuotaLease, WaitingWalk, WalkNext};
use crate::engine::{EventQueue, Prioritized};
use crate::units::Nanos;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A job's run segment ends (job, [`Sim::run_id`] of the segment's armed completion).
    Completion(usize, u32),
    Arrival(usize),
    /// A lease-grid boundary where the leases of [`Sim::lease_due`] end.
    LeaseEnd,
    /// The lease of a job (of this epoch) expires (ASTRAEA family: per-job leases).
    Lease(usize, u32),
    Wakeup(usize, u32),
    /// A waiting job (of this epoch) reaches the starvation threshold (ASTRAEA family).
    Starving(usize, u32),
    Bucket,
}

impl Prioritized for Ev {
    /// At one instant: completions, then arrivals, then lease ends, then wake-ups and
    /// starvation checks, then the window bucket.
    fn priority(&self) -> u8 {
        match self {
            Ev::Completion(..) => 0,
            Ev::Arrival(_) => 1,
            Ev::Lease(..) | Ev::LeaseEnd => 2,
            Ev::Wakeup(..) | Ev::Starving(..) => 3,
            Ev::Bucket => 4,
        }
    }
}

/// Tenant weights s_u for a trace.
#[must_use]
pub fn tenant_weights(params: &FairnessParams, trace: &Trace) -> Vec<f64> {
    let n = trace.tenants.len().max(
        trace
            .jobs
            .iter()
            .map(|j| j.tenant as usize + 1)
            .max()
            .unwrap_or(0),
    );
    match &params.tenant_weights {
        TenantWeights::Equal => vec![1.0; n],
        TenantWeights::Demand => {
            let mut w = vec![0.0; n];
            for j in &trace.jobs {
                w[j.tenant as usize] += f64::from(j.gpus) * j.duration_ns as f64 / 1e9;
            }
            w
        }
        // The trace's tenants are the share list's, in its order (see `super::usable_jobs`).
        TenantWeights::Shares(shares) => {
            let mut w: Vec<f64> = shares.iter().map(|t| t.share).collect();
            w.resize(n, 0.0);
            w
        }
    }
}

/// Tenant quotas for weights `weights` on `total_gpus` GPUs: Q_u = ⌊G·(s_u/Σs)⌋, computed as
/// the ASTRAEA artifact does (`prepare_user_share`: ratio first, then `int(G·ratio)`), so a
/// tenant of a share list may get 0; with equal or demand weights at least 1.
#[must_use]
pub fn tenant_quotas(params: &FairnessParams, weights: &[f64], total_gpus: u64) -> Vec<u64> {
    let wsum: f64 = weights.iter().sum();
    let floor_zero = matches!(params.tenant_weights, TenantWeights::Shares(_));
    weights
        .iter()
        .map(|&w| {
            let q = if wsum > 0.0 {
                libm::floor(total_gpus as f64 * (w / wsum)) as u64
            } else {
                0
            };
            if floor_zero {
                q
            } else {
                q.max(1)
            }
        })
        .collect()
}

/// The state only the loop of a policy object keeps, beside what every run shares ([`Sim`]).
#[derive(Default)]
struct PolicyLoop {
    /// Running jobs, ascending index (for a policy's round and [`RoundCtx::running`]).
    running: Vec<usize>,
    /// Jobs that changed phase since the policy last ordered ([`RoundCtx::changed`]).
    changed: Vec<usize>,
    /// The waiting jobs, ascending index: what a policy that never preempts is offered (kept
    /// only for such a policy, whose jobs start once and never stop, so it changes about twice
    /// per job).
    waiting_sorted: Vec<usize>,
    /// True when `waiting_sorted` is kept.
    keep_waiting_sorted: bool,
    /// A policy in rounds ([`Preemption::Rounds`]): when the current round ends, ns.
    round_end_ns: u64,
}

struct Sim<'p> {
    params: &'p FairnessParams,
    jobs: Vec<JobState>,
    tenants: Vec<TenantState>,
    node_free: Vec<u32>,
    /// Per GPU type, per free-GPU count f (0 ..= GPUs per node): the nodes of that type with f
    /// free, ascending (placement's best and first fits without a scan of every node).
    nodes_by_free: Vec<Vec<NodeSet>>,
    node_type: Vec<u32>,
    gpus_per_node: u32,
    total_gpus: u64,
    gpus_by_type: Vec<u64>,
    free_gpus: u64,
    active: Vec<usize>,
    queue: Events,
    now: u64,
    bucket_ns: u64,
    buckets: usize,
    cur_bucket: u64,
    done: usize,
    run: PolicyRun,
    keep: Vec<bool>,
    /// Per job: the id of its armed completion event (bumped at every start and re-arm, so
    /// older completion events are stale). A renewed lease keeps the armed completion when its
    /// time is unchanged: no event per renewal.
    run_id: Vec<u32>,
    /// Per job: time of its armed completion, ns.
    armed_end: Vec<u64>,
    /// Pending lease-grid boundaries, ascending: (time ns, running jobs whose lease ends then,
    /// their GPUs). One [`Ev::LeaseEnd`] per boundary instead of one event per lease; a
    /// boundary whose jobs all stopped before it triggers no round. At a round every boundary
    /// left is later than now, so these are the running jobs that hold a lease: a round learns
    /// from them alone whether any lease has ended.
    lease_due: Vec<(u64, u32, u64)>,
    /// (GPU count, waiting jobs of that count), ascending GPU count.
    waiting_gpus: Vec<(u32, u32)>,
    /// (GPU count, jobs of [`Sim::running`] of that count), ascending GPU count: a round of a
    /// policy that may preempt at any time reads the smallest without a pass over the running
    /// jobs.
    running_gpus: Vec<(u32, u32)>,
    /// Time per window bucket, ns (the same for every tenant, all accounted from time 0):
    /// tenant u's entitled GPU-ns over the window are Q_u × its completed sum.
    time_ring: WindowRing,
    /// `time_ring` is integrated up to this time, ns.
    time_accounted_to_ns: u64,
    /// Free GPUs on partly used nodes, Σ node_free over nodes with 0 < free < gpus_per_node.
    partial_free: u64,
    /// The ASTRAEA machinery this run uses, if any.
    machinery: Option<QuotaLease>,
    /// The ASTRAEA machinery's own state (empty lists for other policies).
    ql: quota_lease::QlState,
    /// What only the loop of a policy object keeps (left empty for the ASTRAEA family).
    global: PolicyLoop,
    /// Submitted jobs holding no GPUs, in no particular order.
    waiting_list: Vec<usize>,
    /// Per job: its index in `waiting_list` (`usize::MAX` when not waiting).
    waiting_pos: Vec<usize>,
    /// Per tenant: (its waiting jobs, those of them that are new — never ran and never
    /// preempted, [`JobState::is_new`]).
    waiting_of: Vec<(u32, u32)>,
    /// Per job: counted as new in `waiting_of`.
    counted_new: Vec<bool>,
    /// The tenants with active jobs (submitted, not finished), ascending: the only ones whose
    /// share integrals grow ([`Sim::accrue`] of any other changes nothing).
    active_tenants: Vec<usize>,
    /// Number of armed events ([`Events::armed`], the arrivals left out: they never go stale,
    /// and counting them let ~200,000 dead completions pile up in the heap while a 100,000-job
    /// trace was arriving) above which the stale ones are dropped ([`Sim::drop_stale_events`]).
    compact_at: usize,
    /// The rounds' shortcuts: the ASTRAEA machinery's round of a lone waiting job skips the
    /// lists ([`Sim::lone_job_round`]), a policy that preempts at any time is walked by its
    /// waiting jobs where it can be ([`Walk`]), and a lease policy's round while every running
    /// job holds its lease reads the waiting jobs' order alone
    /// ([`Policy::order_waiting`](super::policies::Policy::order_waiting)); off only to test
    /// that they change nothing.
    shortcuts: bool,
}

/// Runs one policy on a trace.
///
/// # Panics
/// Never on validated parameters; a job larger than the cluster is rejected by the caller.
#[must_use]
pub fn run_policy(params: &FairnessParams, trace: &Trace, kind: PolicyKind) -> PolicyRun {
    run_policy_with(params, trace, kind, true)
}

/// [`run_policy`] with every round run in full: never the ASTRAEA machinery's lone-job round,
/// never a waiting walk ([`Walk`]), never a lease round from the waiting order alone
/// ([`Policy::order_waiting`](super::policies::Policy::order_waiting)). For the test that the
/// shortcuts give the same runs.
#[doc(hidden)]
#[must_use]
pub fn run_policy_in_full_rounds(
    params: &FairnessParams,
    trace: &Trace,
    kind: PolicyKind,
) -> PolicyRun {
    run_policy_with(params, trace, kind, false)
}

#[allow(clippy::too_many_lines)] // the simulator's one event loop, its events handled in rank order in one place
fn run_policy_with(
    params: &FairnessParams,
    trace: &Trace,
    kind: PolicyKind,
    shortcuts: bool,
) -> PolicyRun {
    let weights = tenant_weights(params, trace);
    let total_gpus = params.cluster.total_gpus();
    let quotas = tenant_quotas(params, &weights, total_gpus);
    let buckets = params.window.buckets as usize;
    let tenants: Vec<TenantState> = weights
        .iter()
        .zip(&quotas)
        .map(|(&w, &q)| TenantState {
            weight: if w > 0.0 { w } else { 1e-9 },
            quota: q,
            running_gpus: 0,
            share_integrals: Vec::new(),
            accrued_to_ns: 0,
            demand_gpus: 0,
            active_jobs: 0,
            used_ring: WindowRing::new(buckets + 1),
            deserved_ring: WindowRing::new(buckets + 1),
            used_total: 0,
            deserved_total: 0,
            accounted_to_ns: 0,
            used_window: 0.0,
            entitled_window: 0.0,
        })
        .collect();
    let jobs: Vec<JobState> = trace
        .jobs
        .iter()
        .map(|j| JobState {
            tenant: j.tenant,
            gpus: j.gpus,
            submit_ns: j.submit_ns,
            duration_ns: j.duration_ns,
            speed: j.speed_by_gpu_type.clone(),
            phase: Phase::Pending,
            remaining_ns: j.duration_ns,
            executed_ns: 0,
            seg_start_ns: 0,
            seg_overhead_ns: 0,
            seg_type: 0,
            pending_overhead_ns: 0,
            lease_end_ns: 0,
            first_start_ns: u64::MAX,
            last_stop_ns: j.submit_ns,
            last_segment_ns: 0,
            finish_ns: u64::MAX,
            preemptions: 0,
            epoch: 0,
            alloc: NodeAlloc::new(),
            held_since_ns: u64::MAX,
            deserved_base: 0.0,
            lease_expiries: 0,
            last_rho: 1.0,
            deadline_ns: j.deadline_ns,
            later_deadlines: j.later_deadlines.clone(),
            service: j.service,
            admitted: None,
        })
        .collect();
    let node_type = params.cluster.node_types();
    let mut gpus_by_type = vec![0u64; params.cluster.type_count()];
    for &t in &node_type {
        gpus_by_type[t as usize] += u64::from(params.cluster.gpus_per_node);
    }
    let n_jobs = jobs.len();
    let n_tenants = tenants.len();
    let first_submit_ns = jobs.iter().map(|j| j.submit_ns).min().unwrap_or(0);
    let mut policy = kind.build(params, n_tenants, n_jobs);
    let arrival_tick_ns = policy.as_ref().and_then(|p| p.arrival_tick_ns());
    let mut sim = Sim {
        params,
        jobs,
        tenants,
        node_free: vec![params.cluster.gpus_per_node; params.cluster.nodes as usize],
        nodes_by_free: {
            let gpn = params.cluster.gpus_per_node as usize;
            let nodes = params.cluster.nodes as usize;
            let mut by_free =
                vec![vec![NodeSet::new(nodes); gpn + 1]; params.cluster.type_count()];
            for (n, &t) in params.cluster.node_types().iter().enumerate() {
                by_free[t as usize][gpn].insert(n as u32);
            }
            by_free
        },
        node_type,
        gpus_per_node: params.cluster.gpus_per_node,
        total_gpus,
        gpus_by_type,
        free_gpus: total_gpus,
        active: Vec::new(),
        queue: Events::new(trace.jobs.iter().map(|j| match arrival_tick_ns {
            Some(tick) => j.submit_ns.div_ceil(tick).saturating_mul(tick),
            None => j.submit_ns,
        })),
        now: 0,
        bucket_ns: s_to_ns(params.window.bucket_s).max(1),
        buckets,
        cur_bucket: 0,
        done: 0,
        run: PolicyRun {
            kind,
            jobs: Vec::new(),
            tenants: Vec::new(),
            segments: Vec::new(),
            samples: Vec::new(),
            tenant_gpus: vec![Vec::new(); n_tenants],
            busy_gpu_ns: 0,
            job_deserved_gpu_ns: vec![0.0; n_jobs],
            preemptions: 0,
            placement_blocks: 0,
            rounds: 0,
            events: 0,
            total_gpus,
            first_submit_ns,
            last_finish_ns: first_submit_ns,
            fragmentation_integral: 0.0,
        },
        keep: vec![false; n_jobs],
        run_id: vec![0; n_jobs],
        armed_end: vec![0; n_jobs],
        lease_due: Vec::new(),
        waiting_gpus: Vec::new(),
        running_gpus: Vec::new(),
        time_ring: WindowRing::new(buckets + 1),
        time_accounted_to_ns: 0,
        partial_free: 0,
        machinery: kind.quota_lease(params.astraea.quota),
        ql: quota_lease::QlState::new(kind, params, n_tenants, n_jobs),
        global: PolicyLoop::default(),
        waiting_list: Vec::new(),
        waiting_pos: vec![usize::MAX; n_jobs],
        waiting_of: vec![(0, 0); n_tenants],
        counted_new: vec![false; n_jobs],
        active_tenants: Vec::new(),
        compact_at: MIN_COMPACT_AT,
        shortcuts,
    };
    sim.global.keep_waiting_sorted = policy
        .as_ref()
        .is_some_and(|p| p.preemption() == Preemption::Never);
    if n_jobs > 0 {
        sim.queue.schedule(Nanos(sim.bucket_ns), Ev::Bucket);
    }
    loop {
        let next = sim.queue.pop();
        let Some((Nanos(t), ev)) = next else { break };
        // A stale event does nothing, not even move the clock (which would split the
        // integrals of [`Sim::advance`] there): when stale events are dropped
        // ([`Sim::drop_stale_events`]) shows only in the count of events.
        if sim.is_stale(&ev) {
            continue;
        }
        if t > sim.now {
            sim.advance(t);
        }
        let mut arrivals: Vec<usize> = Vec::new();
        if let Ev::Arrival(j) = ev {
            arrivals.push(j);
        }
        let mut dirty = sim.apply(ev);
        // Apply every other event at this instant before the round.
        while let Some(ev2) = sim.queue.pop_at(t) {
            if let Ev::Arrival(j) = ev2 {
                arrivals.push(j);
            }
            dirty |= sim.apply(ev2);
        }
        // A policy with admission control decides on each new job, in index order.
        if let Some(p) = policy.as_deref_mut() {
            for j in arrivals {
                if sim.jobs[j].phase != Phase::Done {
                    let verdict = p.on_arrival(&sim.ctx(), j);
                    sim.jobs[j].admitted = verdict;
                }
            }
        }
        if dirty {
            match policy.as_deref_mut() {
                Some(p) => {
                    // A global policy may read any tenant's totals.
                    sim.account_all();
                    sim.round(p);
                }
                None => sim.quota_lease_rounds(),
            }
        }
        sim.arm_starvation_due();
        if sim.queue.armed() > sim.compact_at {
            sim.drop_stale_events();
        }
        if sim.done == n_jobs && sim.queue.is_empty() {
            break;
        }
    }
    sim.account_all();
    // The segments of jobs stopped and never started again (a run that ends with jobs
    // waiting), in job order.
    for j in 0..n_jobs {
        if !sim.jobs[j].is_running() {
            sim.record_segment(j);
        }
    }
    sim.run.events = sim.queue.processed();
    let mut run = sim.run;
    run.jobs = sim.jobs;
    run.tenants = sim.tenants;
    run
}

/// A run's events, on the engine's queue except the kinds that come in time order and would
/// otherwise make most of the heap: the arrivals, all known before the run (a 100,000-job
/// trace would keep most of them in the heap for most of the run), read from a sorted list;
/// and the ASTRAEA family's lease expiries, first-lease wake-ups and starvation checks, each
/// armed a fixed time after the instant it is armed at (900 s, 120 s, 21,600 s by default; a
/// job whose lease ends every 900 s arms one of each per lease, and most starvation checks go
/// stale long before their time), kept in one FIFO per kind. An event that would not be last
/// in its FIFO (a policy's wake-up armed earlier than the last one) goes on the queue. All of
/// them are merged exactly as the one queue holding them all would order them — by (time,
/// rank, push order), the arrivals pushed first —, so a run delivers the same events in the
/// same order whichever holds them. The run loop takes an instant's events with
/// [`Events::pop_at`], which leaves the first event of the next instant where it is.
struct Events {
    queue: EventQueue<Ev>,
    /// (submission ns, job), ascending: the order in which they were pushed at the start.
    arrivals: Vec<(u64, usize)>,
    /// The next arrival of `arrivals` to deliver.
    next_arrival: usize,
    /// Per kind ([`Events::fifo`]): (time ns, sequence number, event), in that order.
    fifos: [VecDeque<(u64, u64, Ev)>; 3],
    /// Events delivered from the FIFOs.
    fifo_popped: u64,
}

/// Where the next event waits.
#[derive(Clone, Copy)]
enum Source {
    Arrivals,
    Queue,
    Fifo(usize),
}

impl Events {
    /// The events of a run whose job `i` is submitted at `submit_ns[i]`, with nothing else
    /// scheduled yet.
    fn new(submit_ns: impl Iterator<Item = u64>) -> Self {
        let mut arrivals: Vec<(u64, usize)> = submit_ns.enumerate().map(|(i, t)| (t, i)).collect();
        // Pairs are unique (job index); traces sorted by submission are a linear pass.
        arrivals.sort_unstable();
        Events {
            queue: EventQueue::new(),
            arrivals,
            next_arrival: 0,
            fifos: Default::default(),
            fifo_popped: 0,
        }
    }

    /// The FIFO of an event's kind, for the kinds armed a fixed time ahead.
    fn fifo(ev: Ev) -> Option<usize> {
        match ev {
            Ev::Lease(..) => Some(0),
            Ev::Wakeup(..) => Some(1),
            Ev::Starving(..) => Some(2),
            Ev::Completion(..) | Ev::Arrival(_) | Ev::LeaseEnd | Ev::Bucket => None,
        }
    }

    fn schedule(&mut self, time: Nanos, ev: Ev) {
        if let Some(k) = Self::fifo(ev) {
            if self.fifos[k].back().is_none_or(|b| b.0 <= time.0) {
                let seq = self.queue.take_seq();
                self.fifos[k].push_back((time.0, seq, ev));
                return;
            }
        }
        self.queue.schedule(time, ev);
    }

    /// The next event, if it is due at `t` ns (else it stays where it is).
    fn pop_at(&mut self, t: u64) -> Option<Ev> {
        let (t2, src) = self.next()?;
        if t2 != t {
            return None;
        }
        self.take(src).map(|e| e.1)
    }

    /// The next event: the earliest by (time, rank, push order) of the arrivals, the queue and
    /// the FIFOs' fronts.
    fn pop(&mut self) -> Option<(Nanos, Ev)> {
        let (_, src) = self.next()?;
        self.take(src)
    }

    /// Where the next event waits, and its time ns. The arrivals were pushed before anything
    /// else, so at equal time and rank an arrival goes first.
    fn next(&self) -> Option<(u64, Source)> {
        // (time, rank, pushed after the arrivals, sequence number), smallest first.
        let mut best: Option<((u64, u8, bool, u64), Source)> = None;
        let mut offer = |key, src| {
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, src));
            }
        };
        if let Some(&(t, j)) = self.arrivals.get(self.next_arrival) {
            offer((t, Ev::Arrival(j).priority(), false, 0), Source::Arrivals);
        }
        if let Some((Nanos(t), rank, seq)) = self.queue.peek_key() {
            offer((t, rank, true, seq), Source::Queue);
        }
        for (k, fifo) in self.fifos.iter().enumerate() {
            if let Some(&(t, seq, ev)) = fifo.front() {
                offer((t, ev.priority(), true, seq), Source::Fifo(k));
            }
        }
        best.map(|(k, src)| (k.0, src))
    }

    /// Takes the next event of `src`.
    fn take(&mut self, src: Source) -> Option<(Nanos, Ev)> {
        match src {
            Source::Arrivals => {
                let (t, j) = self.arrivals[self.next_arrival];
                self.next_arrival += 1;
                Some((Nanos(t), Ev::Arrival(j)))
            }
            Source::Queue => self.queue.pop(),
            Source::Fifo(k) => {
                let (t, _, ev) = self.fifos[k].pop_front()?;
                self.fifo_popped += 1;
                Some((Nanos(t), ev))
            }
        }
    }

    /// Events waiting, arrivals included.
    fn len(&self) -> usize {
        self.armed() + (self.arrivals.len() - self.next_arrival)
    }

    /// Events scheduled during the run and not delivered yet: the ones that can go stale
    /// (the arrivals cannot).
    fn armed(&self) -> usize {
        self.queue.len() + self.fifos.iter().map(VecDeque::len).sum::<usize>()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every waiting event for which `keep` returns false (never an arrival); the others
    /// keep their order.
    fn retain(&mut self, mut keep: impl FnMut(&Ev) -> bool) {
        self.queue.retain(&mut keep);
        for fifo in &mut self.fifos {
            fifo.retain(|e| keep(&e.2));
        }
    }

    /// Events delivered so far.
    fn processed(&self) -> u64 {
        self.queue.processed() + self.next_arrival as u64 + self.fifo_popped
    }
}

/// Smallest queue length at which stale events are dropped.
const MIN_COMPACT_AT: usize = 1 << 12;

impl Sim<'_> {
    /// True when `ev` can no longer do anything: a completion re-armed since, or a lease,
    /// wake-up or starvation event of an older epoch (ids and epochs only grow).
    fn is_stale(&self, ev: &Ev) -> bool {
        match *ev {
            Ev::Completion(j, id) => self.run_id[j] != id,
            Ev::Lease(j, e) | Ev::Wakeup(j, e) | Ev::Starving(j, e) => self.jobs[j].epoch != e,
            Ev::Arrival(_) | Ev::LeaseEnd | Ev::Bucket => false,
        }
    }

    /// Drops the queue's stale events (a job whose lease is renewed every 900 s would
    /// otherwise leave one dead event per lease behind, until its old times come), and sets
    /// the next length to do it at: amortised O(1) per event.
    fn drop_stale_events(&mut self) {
        let mut queue = core::mem::replace(&mut self.queue, Events::new(core::iter::empty()));
        queue.retain(|ev| !self.is_stale(ev));
        self.queue = queue;
        self.compact_at = (2 * self.queue.armed()).max(MIN_COMPACT_AT);
    }

    /// Moves the accounting window to bucket `b`: the ring slots of the buckets entered since
    /// the current one are reused, so they start empty (after a jump of a whole window or more,
    /// every slot is cleared).
    fn enter_bucket(&mut self, b: u64) {
        if b == self.cur_bucket {
            return;
        }
        let slots = self.buckets as u64 + 1;
        let steps = (b - self.cur_bucket).min(slots);
        for k in 1..=steps {
            let slot = ((self.cur_bucket + k) % slots) as usize;
            for u in &mut self.tenants {
                u.used_ring.clear(slot);
                u.deserved_ring.clear(slot);
            }
            self.time_ring.clear(slot);
        }
        self.cur_bucket = b;
    }

    /// Integrates accounting from `self.now` to `t`: the cluster's integrals at once, the
    /// tenants' lazily ([`Sim::account`]) unless `t` lies in a later window bucket.
    fn advance(&mut self, t: u64) {
        let from = self.now;
        let busy = self.total_gpus - self.free_gpus;
        self.run.busy_gpu_ns += u128::from(busy) * u128::from(t - from);
        if self.free_gpus > 0 {
            self.run.fragmentation_integral += self.fragmentation() * (t - from) as f64;
        }
        if t / self.bucket_ns == from / self.bucket_ns {
            self.now = t;
            return;
        }
        // A bucket boundary is crossed: every tenant up to now, then through the boundaries
        // (and the window's time with them: every tenant is accounted from time 0).
        self.account_all();
        let cur = self.cur_slot();
        self.time_ring.add(cur, u128::from(from - self.time_accounted_to_ns));
        let mut from = from;
        while from < t {
            let b = from / self.bucket_ns;
            self.enter_bucket(b);
            let end = ((b + 1) * self.bucket_ns).min(t);
            let slot = (b % (self.buckets as u64 + 1)) as usize;
            for u in &mut self.tenants {
                accrue_rings(u, slot, u128::from(end - from));
            }
            self.time_ring.add(slot, u128::from(end - from));
            from = end;
        }
        self.time_accounted_to_ns = t;
        // At an exact bucket boundary the new bucket starts empty.
        self.enter_bucket(t / self.bucket_ns);
        self.now = t;
        let cur = self.cur_slot();
        let window_ns = self.time_ring.completed(cur);
        for u in &mut self.tenants {
            u.accounted_to_ns = t;
            u.used_window = u128_to_f64(u.used_ring.completed(cur));
            // Σ Q_u·dt over the window's pieces = Q_u·Σ dt, exactly (integers).
            u.entitled_window = u128_to_f64(u128::from(u.quota) * window_ns);
        }
    }

    /// Brings tenant `u`'s rings and totals up to now (within the current bucket: every
    /// boundary brought all tenants up to it).
    fn account(&mut self, u: usize) {
        let slot = self.cur_slot();
        let now = self.now;
        let t = &mut self.tenants[u];
        let dt = now - t.accounted_to_ns;
        if dt > 0 {
            accrue_rings(t, slot, u128::from(dt));
            t.accounted_to_ns = now;
        }
    }

    /// Brings every tenant's rings and totals up to now.
    fn account_all(&mut self) {
        for u in 0..self.tenants.len() {
            self.account(u);
        }
    }

    /// Counts job `j` in or out of the waiting jobs.
    fn count_waiting(&mut self, j: usize, add: bool) {
        let g = self.jobs[j].gpus;
        if let Some(lists) = &mut self.ql.static_lists {
            lists.touch(j);
        }
        if self.global.keep_waiting_sorted {
            match (self.global.waiting_sorted.binary_search(&j), add) {
                (Err(p), true) => self.global.waiting_sorted.insert(p, j),
                (Ok(p), false) => {
                    self.global.waiting_sorted.remove(p);
                }
                _ => {}
            }
        }
        let u = self.jobs[j].tenant as usize;
        let machinery = self.machinery.is_some();
        if add {
            self.waiting_pos[j] = self.waiting_list.len();
            self.waiting_list.push(j);
            count_in(&mut self.waiting_gpus, g);
            self.waiting_of[u].0 += 1;
            if machinery {
                self.ql.waiting.add(u, j, g);
            }
            self.recount_new(j);
        } else {
            let pos = core::mem::replace(&mut self.waiting_pos[j], usize::MAX);
            if pos != usize::MAX {
                self.waiting_of[u].0 -= 1;
                if core::mem::take(&mut self.counted_new[j]) {
                    self.waiting_of[u].1 -= 1;
                }
                if machinery {
                    self.ql.waiting.remove(u, j, g);
                }
                self.waiting_list.swap_remove(pos);
                if let Some(&moved) = self.waiting_list.get(pos) {
                    self.waiting_pos[moved] = pos;
                }
                count_out(&mut self.waiting_gpus, g);
            }
        }
    }

    /// Counts waiting job `j` as new in its tenant's `waiting_of` if it is (again after what
    /// makes a job new changed while it waits: a preemption).
    fn recount_new(&mut self, j: usize) {
        let is_new = self.waiting_pos[j] != usize::MAX && self.jobs[j].is_new();
        if is_new != self.counted_new[j] {
            self.counted_new[j] = is_new;
            let c = &mut self.waiting_of[self.jobs[j].tenant as usize].1;
            if is_new {
                *c += 1;
            } else {
                *c -= 1;
            }
        }
    }

    fn set_tenant_gpus(&mut self, tenant: usize, delta: i64) {
        self.account(tenant);
        let u = &mut self.tenants[tenant];
        u.running_gpus = (u.running_gpus as i64 + delta) as u64;
        let v = u.running_gpus;
        let track = &mut self.run.tenant_gpus[tenant];
        match track.last_mut() {
            Some(last) if last.0 == self.now => {
                last.1 = v;
                // Back to the value held before this instant (a lease renewed, a job stopped
                // and restarted in one round): the instant changed nothing.
                if track.len() >= 2 && track[track.len() - 2].1 == v {
                    track.pop();
                }
            }
            _ => track.push((self.now, v)),
        }
    }

    /// Applies one event; true when a scheduling round is due.
    fn apply(&mut self, ev: Ev) -> bool {
        match ev {
            Ev::Arrival(j) => {
                let u = self.jobs[j].tenant as usize;
                self.jobs[j].phase = Phase::Waiting;
                self.note_change(j);
                self.accrue(u);
                let g = self.jobs[j].gpus;
                let ints = &mut self.tenants[u].share_integrals;
                let i = match ints.binary_search_by_key(&g, |e| e.0) {
                    Ok(i) => i,
                    Err(i) => {
                        ints.insert(i, (g, 0.0));
                        i
                    }
                };
                self.jobs[j].deserved_base = ints[i].1;
                self.count_waiting(j, true);
                self.account(u);
                self.tenants[u].demand_gpus += u64::from(self.jobs[j].gpus);
                self.tenants[u].active_jobs += 1;
                if self.tenants[u].active_jobs == 1 {
                    if let Err(p) = self.active_tenants.binary_search(&u) {
                        self.active_tenants.insert(p, u);
                    }
                }
                self.arm_starvation(j);
                if let Err(pos) = self.active.binary_search(&j) {
                    self.active.insert(pos, j);
                }
                if self.jobs[j].duration_ns == 0 {
                    // Nothing to run: done at once.
                    self.finish(j);
                }
                true
            }
            Ev::Completion(j, id) => {
                if self.run_id[j] != id || !self.jobs[j].is_running() {
                    return false;
                }
                self.stop_segment(j);
                self.record_segment(j);
                self.finish(j);
                true
            }
            Ev::Lease(j, epoch) => {
                let due = self.jobs[j].epoch == epoch && self.jobs[j].is_running();
                if due && self.machinery.is_some() {
                    self.expire_lease(j);
                }
                due
            }
            Ev::Starving(j, epoch) => {
                let due = self.jobs[j].epoch == epoch && self.jobs[j].phase == Phase::Waiting;
                if due {
                    if let Some(lists) = &mut self.ql.static_lists {
                        lists.touch(j);
                    }
                }
                due
            }
            Ev::LeaseEnd => {
                // Every boundary at or before now has been reached.
                let ended = self
                    .lease_due
                    .iter()
                    .take_while(|e| e.0 <= self.now)
                    .count();
                self.lease_due.drain(..ended).any(|e| e.1 > 0)
            }
            Ev::Wakeup(j, epoch) => self.jobs[j].epoch == epoch && self.jobs[j].is_running(),
            Ev::Bucket => {
                self.sample();
                // Only while something else can still happen (a stuck job ends the run).
                if self.done < self.jobs.len() && !self.queue.is_empty() {
                    self.queue
                        .schedule(Nanos(self.now + self.bucket_ns), Ev::Bucket);
                }
                // The ASTRAEA machinery's max-min order reads the completed-hours window.
                self.machinery.is_some()
            }
        }
    }

    /// Ring slot of the current bucket.
    fn cur_slot(&self) -> usize {
        (self.cur_bucket % (self.buckets as u64 + 1)) as usize
    }

    /// Integrates tenant `u`'s share integrals up to now: min(g, Q_u/n_u) over the time since
    /// the last accrual (n_u is constant in between).
    fn accrue(&mut self, u: usize) {
        let now = self.now;
        let t = &mut self.tenants[u];
        let dt = now.saturating_sub(t.accrued_to_ns);
        t.accrued_to_ns = now;
        if dt == 0 || t.active_jobs == 0 {
            return;
        }
        let share = t.quota as f64 / f64::from(t.active_jobs);
        for (g, i) in &mut t.share_integrals {
            *i += f64::from(*g).min(share) * dt as f64;
        }
    }

    /// D_j of active job `j` now, GPU-ns — the artifact's `deserved`, which grows by
    /// min(gⱼ, Q_u/n_u) every 10 s tick (`update_job_fairness`, `alg/scheduler/lease.py`
    /// l. 259–264): its count's integral as of the tenant's last
    /// accrual, plus min(gⱼ, Q_u/n_u) over the time since (n_u has not changed since: the
    /// integrals are brought up to date wherever it changes, [`Sim::accrue`]). Reading adds
    /// nothing to the integrals, so their values depend only on the tenant's own arrivals and
    /// finishes, never on when rounds read them.
    fn deserved_of(&self, j: usize) -> f64 {
        let job = &self.jobs[j];
        let t = &self.tenants[job.tenant as usize];
        match t.share_integrals.binary_search_by_key(&job.gpus, |e| e.0) {
            Ok(i) => {
                let dt = self.now.saturating_sub(t.accrued_to_ns);
                let since = if dt == 0 || t.active_jobs == 0 {
                    0.0
                } else {
                    let share = t.quota as f64 / f64::from(t.active_jobs);
                    f64::from(job.gpus).min(share) * dt as f64
                };
                t.share_integrals[i].1 + since - job.deserved_base
            }
            Err(_) => 0.0,
        }
    }

    fn sample(&mut self) {
        let cur = self.cur_slot();
        let tenant_f = self
            .tenants
            .iter()
            .map(|u| {
                let d = u.deserved_ring.completed(cur);
                (d > 0).then(|| u128_to_f64(u.used_ring.completed(cur)) / u128_to_f64(d))
            })
            .collect();
        // The bucket that just ended (the current one was entered, and emptied, at `now`).
        let slots = self.buckets as u64 + 1;
        let last = ((self.cur_bucket + slots - 1) % slots) as usize;
        let capacity = self.total_gpus as f64 * self.bucket_ns as f64;
        let share = |v: u128| u128_to_f64(v) / capacity;
        let tenant_used_share = self
            .tenants
            .iter()
            .map(|u| share(u.used_ring.slot(last)))
            .collect();
        let tenant_deserved_share = self
            .tenants
            .iter()
            .map(|u| share(u.deserved_ring.slot(last)))
            .collect();
        let queue_len = self.waiting_list.len() as u32;
        self.run.samples.push(Sample {
            t_ns: self.now,
            tenant_f,
            queue_len,
            busy_gpus: self.total_gpus - self.free_gpus,
            fragmentation: self.fragmentation(),
            tenant_used_share,
            tenant_deserved_share,
        });
    }

    /// Ends the running segment of `j` at `now`, frees its GPUs.
    fn stop_segment(&mut self, j: usize) {
        let now = self.now;
        let job = &mut self.jobs[j];
        let progress = job.progress_at(now);
        job.remaining_ns -= progress;
        let held = now - job.seg_start_ns;
        job.executed_ns += held;
        job.last_segment_ns = held;
        job.last_stop_ns = now;
        job.phase = Phase::Waiting;
        job.epoch += 1;
        let gpus = job.gpus;
        let tenant = job.tenant as usize;
        let lease_end = job.lease_end_ns;
        if let Ok(i) = self.lease_due.binary_search_by_key(&lease_end, |e| e.0) {
            self.lease_due[i].1 -= 1;
            self.lease_due[i].2 -= u64::from(gpus);
        }
        if self.machinery.is_none() {
            if let Ok(i) = self.global.running.binary_search(&j) {
                self.global.running.remove(i);
                count_out(&mut self.running_gpus, gpus);
            }
        }
        self.count_waiting(j, true);
        // The job keeps its `alloc` until its segment is recorded ([`Sim::record_segment`]).
        for k in 0..self.jobs[j].alloc.len() {
            let (n, c) = self.jobs[j].alloc[k];
            self.set_node_free(n as usize, self.node_free[n as usize] + c);
        }
        self.free_gpus += u64::from(gpus);
        self.set_tenant_gpus(tenant, -i64::from(gpus));
        self.note_change(j);
    }

    /// Takes job `j`'s GPUs away; it pays the checkpoint-and-resume cost at its next start.
    fn preempt(&mut self, j: usize) {
        self.stop_segment(j);
        self.jobs[j].pending_overhead_ns = s_to_ns(self.params.preemption_cost_s(self.jobs[j].gpus));
        self.jobs[j].preemptions += 1;
        self.run.preemptions += 1;
        self.recount_new(j);
    }

    fn finish(&mut self, j: usize) {
        let now = self.now;
        let u = self.jobs[j].tenant as usize;
        self.count_waiting(j, false);
        self.jobs[j].phase = Phase::Done;
        self.note_change(j);
        let job = &mut self.jobs[j];
        job.remaining_ns = 0;
        job.finish_ns = now;
        if job.first_start_ns == u64::MAX {
            job.first_start_ns = now;
        }
        let g = job.gpus;
        self.accrue(u);
        self.run.job_deserved_gpu_ns[j] = self.deserved_of(j);
        self.account(u);
        self.tenants[u].demand_gpus -= u64::from(g);
        self.tenants[u].active_jobs -= 1;
        if self.tenants[u].active_jobs == 0 {
            if let Ok(p) = self.active_tenants.binary_search(&u) {
                self.active_tenants.remove(p);
            }
        }
        if let Ok(pos) = self.active.binary_search(&j) {
            self.active.remove(pos);
        }
        self.done += 1;
        self.run.last_finish_ns = self.run.last_finish_ns.max(now);
    }

    fn start(
        &mut self,
        j: usize,
        alloc: NodeAlloc,
        t: u32,
        policy: &dyn super::policies::Policy,
    ) {
        self.begin_segment(j, alloc, t);
        self.renew(j, policy);
    }

    /// Gives `j` its GPUs `alloc` on type `t` from now and arms its completion.
    fn begin_segment(&mut self, j: usize, alloc: NodeAlloc, t: u32) {
        let now = self.now;
        for &(n, c) in &alloc {
            self.set_node_free(n as usize, self.node_free[n as usize] - c);
        }
        self.count_waiting(j, false);
        if self.machinery.is_none() {
            if let Err(i) = self.global.running.binary_search(&j) {
                self.global.running.insert(i, j);
                count_in(&mut self.running_gpus, self.jobs[j].gpus);
            }
        }
        let gpus = self.jobs[j].gpus;
        self.free_gpus -= u64::from(gpus);
        let tenant = self.jobs[j].tenant as usize;
        self.set_tenant_gpus(tenant, i64::from(gpus));
        self.note_change(j);
        let job = &self.jobs[j];
        // Back on the GPUs it gave up at this instant: the same segment goes on.
        if !(job.held_since_ns != u64::MAX && job.last_stop_ns == now && job.alloc == alloc) {
            self.record_segment(j);
            self.jobs[j].held_since_ns = now;
        }
        let job = &mut self.jobs[j];
        job.phase = Phase::Running;
        job.alloc = alloc;
        job.seg_start_ns = now;
        job.seg_overhead_ns = core::mem::take(&mut job.pending_overhead_ns);
        job.seg_type = t;
        job.epoch += 1;
        if job.first_start_ns == u64::MAX {
            job.first_start_ns = now;
        }
        let s = job.speed_on(t);
        let run_ns = if s == 1.0 {
            job.remaining_ns
        } else {
            libm::ceil(job.remaining_ns as f64 / s) as u64
        };
        let end = now + job.seg_overhead_ns + run_ns;
        self.arm_completion(j, end);
    }

    /// Records the segment of stopped job `j` that ended at its last stop, if one is open
    /// (the job keeps its GPUs' list from the stop until then: a start at that instant on the
    /// same GPUs continues the segment instead).
    fn record_segment(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        if job.held_since_ns == u64::MAX {
            return;
        }
        self.run.segments.push(Segment {
            job: j,
            start_ns: core::mem::replace(&mut job.held_since_ns, u64::MAX),
            end_ns: job.last_stop_ns,
            alloc: core::mem::take(&mut job.alloc),
        });
    }

    /// Arms job `j`'s completion at `end` ns (older completion events become stale). The
    /// completion armed last still serves when it is due at `end` and has not come yet (a job
    /// restarted at the instant its lease expired, with the same work left): no new event.
    /// Its older sequence number can change the order among completions due at one instant;
    /// all of them are applied before the round, and that order shows only in the order of
    /// the run's segments, which every reader sorts or sums per job or node.
    fn arm_completion(&mut self, j: usize, end: u64) {
        if self.armed_end[j] == end && end > self.now && self.run_id[j] > 0 {
            return;
        }
        self.run_id[j] += 1;
        self.armed_end[j] = end;
        self.queue
            .schedule(Nanos(end), Ev::Completion(j, self.run_id[j]));
    }

    fn renew(&mut self, j: usize, policy: &dyn super::policies::Policy) {
        let now = self.now;
        let end = match policy.preemption() {
            // Leases end on a global grid of lease lengths, at the first boundary at least one
            // lease after the start: every job gets ≥ one lease, and expiries coincide, so one
            // round serves them all (as the artifact's periodic scheduling rounds do), unless
            // the policy ends the lease earlier (Themis' hidden payments).
            Preemption::AtLeaseEnd(l) => {
                let l = l.max(1);
                let grid_end = (now + l).div_ceil(l) * l;
                let early = policy.lease_end_ns(&self.ctx(), j);
                Some(early.map_or(grid_end, |e| e.clamp(now + 1, grid_end)))
            }
            // Slots: the lease ends at the next boundary, whenever it started, or earlier where
            // the policy says so (slot admission's opportunistic jobs: at the next rescue tick).
            Preemption::AtSlotEnd(l) => {
                let l = l.max(1);
                let slot_end = (now / l + 1) * l;
                let early = policy.lease_end_ns(&self.ctx(), j);
                Some(early.map_or(slot_end, |e| e.clamp(now + 1, slot_end)))
            }
            // Rounds: every lease ends with the round.
            Preemption::Rounds(_) => Some(self.global.round_end_ns),
            Preemption::Never | Preemption::Anytime => None,
        };
        if let Some(end) = end {
            self.jobs[j].lease_end_ns = end;
            let g = u64::from(self.jobs[j].gpus);
            match self.lease_due.binary_search_by_key(&end, |e| e.0) {
                Ok(i) => {
                    self.lease_due[i].1 += 1;
                    self.lease_due[i].2 += g;
                }
                Err(i) => {
                    self.lease_due.insert(i, (end, 1, g));
                    self.queue.schedule(Nanos(end), Ev::LeaseEnd);
                }
            }
        }
        let ctx = self.ctx();
        if let Some(w) = policy.wakeup_after_ns(&ctx, j) {
            let e = self.jobs[j].epoch;
            self.queue.schedule(Nanos(now + w.max(1)), Ev::Wakeup(j, e));
        }
    }

    /// Logs that job `j` changes phase, for the policy's next order ([`RoundCtx::changed`]).
    fn note_change(&mut self, j: usize) {
        if self.machinery.is_none() {
            self.global.changed.push(j);
        }
    }

    fn ctx(&self) -> RoundCtx<'_> {
        RoundCtx {
            changed: &self.global.changed,
            running: &self.global.running,
            waiting: &self.waiting_list,
            now_ns: self.now,
            active: &self.active,
            jobs: &self.jobs,
            tenants: &self.tenants,
            total_gpus: self.total_gpus,
            gpus_by_type: &self.gpus_by_type,
        }
    }

    fn preemptible(&self, j: usize, rule: Preemption) -> bool {
        match rule {
            Preemption::Never => false,
            Preemption::Anytime => true,
            Preemption::AtLeaseEnd(_) | Preemption::AtSlotEnd(_) | Preemption::Rounds(_) => {
                self.jobs[j].lease_end_ns <= self.now
            }
        }
    }

    #[allow(clippy::too_many_lines)] // one scheduling round of the global policies, step by step
    fn round(&mut self, policy: &mut dyn super::policies::Policy) {
        let rule = policy.preemption();
        let rounds = matches!(rule, Preemption::Rounds(_));
        if let Preemption::Rounds(l) = rule {
            // Between a round's start and its end nothing starts; a round starts when the last
            // one ends or runs out of running jobs.
            let idle = self.global.running.is_empty();
            if (self.now < self.global.round_end_ns && !idle) || (idle && self.waiting_list.is_empty()) {
                return;
            }
            self.global.round_end_ns = self.now + l.max(1);
        } else if self.waiting_list.is_empty() {
            // Preemption only ever serves waiting jobs: with none, nothing can change (running
            // jobs past their lease stay preemptible until a round renews them). Rounds may
            // still move running jobs between GPU types.
            return;
        }
        // The GPUs of the running jobs that may not be preempted now, and the fewest GPUs a
        // preemptible running job holds (`u64::MAX`: none). Under the rules that do not depend
        // on the job, from the counts kept as jobs start and stop: the running jobs hold the
        // GPUs that are not free.
        let (locked, smallest_preemptible) = match rule {
            Preemption::Never => (self.total_gpus - self.free_gpus, u64::MAX),
            Preemption::Anytime => (
                0,
                self.running_gpus.first().map_or(u64::MAX, |e| u64::from(e.0)),
            ),
            // The running jobs that hold a lease are those of the boundaries to come: when
            // they are all the running jobs, no lease has ended; otherwise a pass finds the
            // smallest job whose lease has.
            Preemption::AtLeaseEnd(_) | Preemption::AtSlotEnd(_) | Preemption::Rounds(_) => {
                let (leased, locked) = self
                    .lease_due
                    .iter()
                    .fold((0usize, 0u64), |(n, g), e| (n + e.1 as usize, g + e.2));
                let smallest = if leased == self.global.running.len() {
                    u64::MAX
                } else {
                    self.global.running
                        .iter()
                        .filter(|&&j| self.preemptible(j, rule))
                        .map(|&j| u64::from(self.jobs[j].gpus))
                        .min()
                        .unwrap_or(u64::MAX)
                };
                (locked, smallest)
            }
        };
        #[cfg(debug_assertions)]
        {
            if matches!(
                rule,
                Preemption::AtLeaseEnd(_) | Preemption::AtSlotEnd(_) | Preemption::Rounds(_)
            ) {
                debug_assert!(self.lease_due.iter().all(|e| e.0 > self.now), "boundary passed");
                let leased: u64 = self
                    .global.running
                    .iter()
                    .filter(|&&j| !self.preemptible(j, rule))
                    .map(|&j| u64::from(self.jobs[j].gpus))
                    .sum();
                debug_assert_eq!(leased, locked, "GPUs held under a lease");
            }
            let held: u64 = self.global.running.iter().map(|&j| u64::from(self.jobs[j].gpus)).sum();
            debug_assert_eq!(held, self.total_gpus - self.free_gpus, "GPUs held by running jobs");
            let fewest = self.global.running.iter().map(|&j| self.jobs[j].gpus).min();
            debug_assert_eq!(self.running_gpus.first().map(|e| e.0), fewest, "running counts");
        }
        // Nothing can change when no GPU is free enough for any waiting job and nothing may
        // be preempted.
        if smallest_preemptible == u64::MAX && !rounds {
            match self.waiting_gpus.first() {
                None => return,
                Some(&(g, _)) if u64::from(g) > self.free_gpus => return,
                _ => {}
            }
        }
        self.run.rounds += 1;
        // The fewest GPUs any job that may still be given GPUs asks for: once fewer are left,
        // the rest of the order cannot change anything.
        let smallest = self
            .waiting_gpus
            .first()
            .map_or(u64::MAX, |e| u64::from(e.0))
            .min(smallest_preemptible);
        // As before: nothing is given out once no GPU is left.
        let smallest = smallest.max(1);
        // Walk the policy's order, giving GPUs to each job that still fits, until none are
        // left (the policy stops ordering there).
        let mut cap = self.total_gpus - locked;
        let mut kept: Vec<usize> = Vec::new();
        // A waiting walk ([`Walk`]) names the running jobs it drops instead of marking those it
        // keeps.
        let mut dropped: Vec<usize> = Vec::new();
        let mut walked = false;
        // A policy that never preempts is offered only the waiting jobs: the running ones keep
        // their GPUs whatever the order, so ordering them would be wasted work.
        let offered: &[usize] = if rule == Preemption::Never {
            &self.global.waiting_sorted
        } else {
            &self.active
        };
        {
            let now = self.now;
            let jobs = &self.jobs;
            let keep = &mut self.keep;
            let ctx = RoundCtx {
                changed: &self.global.changed,
                running: &self.global.running,
                waiting: &self.waiting_list,
                now_ns: now,
                active: offered,
                jobs,
                tenants: &self.tenants,
                total_gpus: self.total_gpus,
                gpus_by_type: &self.gpus_by_type,
            };
            let locked_job = |j: usize| {
                jobs[j].is_running()
                    && match rule {
                        Preemption::Never => true,
                        Preemption::Anytime => false,
                        Preemption::AtLeaseEnd(_)
                        | Preemption::AtSlotEnd(_)
                        | Preemption::Rounds(_) => jobs[j].lease_end_ns > now,
                    }
            };
            if rule == Preemption::Anytime && self.shortcuts {
                let mut walk = Walk {
                    jobs,
                    keep,
                    kept: &mut kept,
                    dropped: &mut dropped,
                    cap0: cap,
                    free: self.free_gpus,
                    taken: 0,
                    cap: 0,
                    smallest,
                };
                walked = policy.walk_waiting(&ctx, &mut walk);
            }
            if !walked {
                let mut give = |j: usize| {
                    if cap < smallest {
                        return false;
                    }
                    if !locked_job(j) && !keep[j] {
                        let g = u64::from(jobs[j].gpus);
                        if g <= cap {
                            cap -= g;
                            keep[j] = true;
                            kept.push(j);
                        }
                    }
                    cap >= smallest
                };
                // Under leases, while no lease has ended the round gives GPUs to waiting jobs
                // only: the policy's order of those is enough.
                let leased = matches!(rule, Preemption::AtLeaseEnd(_) | Preemption::AtSlotEnd(_))
                    && smallest_preemptible == u64::MAX;
                if !(leased && self.shortcuts && policy.order_waiting(&ctx, &mut give)) {
                    policy.order(&ctx, &mut give);
                }
            }
        }
        // The policy has seen these changes.
        self.global.changed.clear();
        // Preempt the preemptible running jobs not kept (in index order, as below), then
        // renew the leases of kept running jobs (in the policy's order).
        if walked {
            dropped.sort_unstable();
            for &j in &dropped {
                self.preempt(j);
            }
        }
        let mut i = 0;
        // (Nothing to do when no running job may be preempted.)
        while !walked
            && smallest_preemptible != u64::MAX
            && rule != Preemption::Never
            && i < self.global.running.len()
        {
            let j = self.global.running[i];
            if !self.preemptible(j, rule) || self.keep[j] {
                i += 1;
            } else {
                // Stopping removes `j` from `running`: the next one moves to `i`.
                self.preempt(j);
            }
        }
        for &j in &kept {
            // A round moves a running job the policy wants on another GPU type: stopped here,
            // started below where it is wanted.
            if rounds && self.jobs[j].is_running() {
                let want = policy.type_preference(&self.ctx(), j);
                if want.is_some_and(|t| t.first() != Some(&self.jobs[j].seg_type)) {
                    self.preempt(j);
                    continue;
                }
            }
            if self.jobs[j].is_running()
                && matches!(
                    rule,
                    Preemption::AtLeaseEnd(_) | Preemption::AtSlotEnd(_) | Preemption::Rounds(_)
                )
            {
                self.jobs[j].epoch += 1;
                // A renewed job keeps running: its completion stays armed unless its time moved
                // (rounding of a speed ≠ 1).
                let job = &self.jobs[j];
                let s = job.speed_on(job.seg_type);
                let left = job.remaining_at(self.now);
                let overhead_left =
                    (job.seg_start_ns + job.seg_overhead_ns).saturating_sub(self.now);
                let run_ns = if s == 1.0 {
                    left
                } else {
                    libm::ceil(left as f64 / s) as u64
                };
                let end = self.now + overhead_left + run_ns;
                if end != self.armed_end[j] {
                    self.arm_completion(j, end);
                }
                self.renew(j, policy);
            }
        }
        let mut blocked = false;
        for (p, &j) in kept.iter().enumerate() {
            self.keep[j] = false;
            if self.jobs[j].is_running() {
                continue;
            }
            let gpus = self.jobs[j].gpus;
            if u64::from(gpus) > self.free_gpus {
                continue;
            }
            let types: Vec<u32> = policy
                .type_preference(&self.ctx(), j)
                .unwrap_or_else(|| (0..self.gpus_by_type.len() as u32).collect());
            let range = policy
                .nodes_for(&self.ctx(), j)
                .unwrap_or_else(|| self.all_nodes());
            let mut placed = false;
            // Lease slots (slot admission, after Chronus): every job is chosen again at a
            // boundary and re-placed in the policy's order (ChronusArtifact
            // `flush_lease_jobs`); ours moves only the jobs in the way: the renewed jobs later
            // in the order are preempted, last first, until this one fits.
            let mut movable: Vec<usize> = if matches!(rule, Preemption::AtSlotEnd(_)) {
                kept[p + 1..]
                    .iter()
                    .copied()
                    .filter(|&m| self.jobs[m].is_running())
                    .collect()
            } else {
                Vec::new()
            };
            // Moving them must make room, or none is moved.
            if !movable.is_empty()
                && !types
                    .iter()
                    .any(|&t| self.would_fit_without(gpus, t, &movable, range))
            {
                movable.clear();
            }
            loop {
                for &t in &types {
                    if let Some(alloc) = self.place(gpus, t, range) {
                        self.start(j, alloc, t, policy);
                        placed = true;
                        break;
                    }
                }
                if placed {
                    break;
                }
                match movable.pop() {
                    Some(m) if self.jobs[m].is_running() => self.preempt(m),
                    Some(_) => {}
                    None => break,
                }
            }
            if !placed {
                blocked = true;
            }
        }
        if blocked {
            self.run.placement_blocks += 1;
        }
    }
}

/// A round's waiting walk ([`WaitingWalk`]) for a policy that preempts at any time: the same
/// outcome as the round's walk of the whole order ([`Sim::round`]: each job in the order is
/// given its GPUs if they still fit, until fewer than any job asks for are left), read from
/// the waiting jobs.
///
/// Where the whole walk reaches waiting job w, the GPUs left are cap₀ − R_w − K_w: R_w held by
/// the running jobs ahead of w, K_w given to the waiting jobs before it — as long as every
/// running job ahead of w kept its GPUs. That holds while K ≤ the free GPUs F: a running job r
/// finds at least cap₀ − (R − g_r) − K ≥ F + g_r − K ≥ g_r left, R being all the running jobs'
/// GPUs (cap₀ − R = F under [`Preemption::Anytime`]). So waiting jobs are given GPUs one by one
/// while K stays ≤ F; the first that fits but would take K past F switches to the whole walk
/// from there, with the GPUs left at that point ([`WalkNext::Every`]). Where that walk stops
/// (fewer GPUs left than any job asks for: nothing after fits), the policy hands on only the
/// running jobs after that point. Every running job met in that walk that did not fit, and
/// every one after it, is named ([`Walk::dropped`]) and preempted; a running job ahead of the
/// switch keeps its GPUs.
struct Walk<'a> {
    jobs: &'a [JobState],
    keep: &'a mut [bool],
    /// The waiting jobs given GPUs, in the order.
    kept: &'a mut Vec<usize>,
    /// The running jobs that lose their GPUs.
    dropped: &'a mut Vec<usize>,
    /// GPUs the round gives out (every GPU: nothing is locked).
    cap0: u64,
    /// Free GPUs before the round, F.
    free: u64,
    /// GPUs given to waiting jobs so far, K.
    taken: u64,
    /// GPUs left, once the whole walk took over.
    cap: u64,
    /// The fewest GPUs any job asks for.
    smallest: u64,
}

impl WaitingWalk for Walk<'_> {
    fn waiting(&mut self, j: usize, running_ahead_gpus: u64) -> WalkNext {
        let cap = self
            .cap0
            .saturating_sub(running_ahead_gpus)
            .saturating_sub(self.taken);
        // No running job is at or after this point (each would leave ≥ its GPUs here): the
        // whole walk stops, or gives nothing more.
        if cap < self.smallest {
            return WalkNext::Stop;
        }
        let g = u64::from(self.jobs[j].gpus);
        if g > cap {
            return WalkNext::Next;
        }
        if self.taken + g <= self.free {
            self.taken += g;
            self.keep[j] = true;
            self.kept.push(j);
            WalkNext::Next
        } else {
            self.cap = cap;
            WalkNext::Every
        }
    }

    fn every(&mut self, j: usize) -> bool {
        let g = u64::from(self.jobs[j].gpus);
        let running = self.jobs[j].is_running();
        // Where the whole walk stops, and after: nothing fits.
        if self.cap >= self.smallest && g <= self.cap {
            self.cap -= g;
            if !running {
                self.keep[j] = true;
                self.kept.push(j);
            }
        } else if running {
            self.dropped.push(j);
        }
        self.cap >= self.smallest
    }
}

/// Counts one more item of `g` GPUs in `counts` ((GPU count, items), ascending GPU count).
fn count_in(counts: &mut Vec<(u32, u32)>, g: u32) {
    match counts.binary_search_by_key(&g, |e| e.0) {
        Ok(i) => counts[i].1 += 1,
        Err(i) => counts.insert(i, (g, 1)),
    }
}

/// Counts one item of `g` GPUs out of `counts` (see [`count_in`]); nothing if none is counted.
fn count_out(counts: &mut Vec<(u32, u32)>, g: u32) {
    if let Ok(i) = counts.binary_search_by_key(&g, |e| e.0) {
        counts[i].1 -= 1;
        if counts[i].1 == 0 {
            counts.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Ev, EventQueue, Events, Nanos};
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// Random schedules, pops, push-backs and drops: [`Events`] delivers exactly what one
    /// [`EventQueue`] holding every event (the arrivals pushed first) delivers.
    #[test]
    fn events_deliver_in_the_order_of_one_queue() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..300 {
            let jobs = rnd(12) as usize;
            let submits: Vec<u64> = (0..jobs).map(|_| rnd(8) * 10).collect();
            let mut ours = Events::new(submits.iter().copied());
            let mut one = EventQueue::new();
            for (i, &t) in submits.iter().enumerate() {
                one.schedule(Nanos(t), Ev::Arrival(i));
            }
            let mut now = 0;
            let mut got: Vec<String> = Vec::new();
            let mut want: Vec<String> = Vec::new();
            for _ in 0..200 {
                match rnd(10) {
                    0..=4 => {
                        // Armed at now or later; few distinct times, so many ties.
                        let t = now + rnd(4) * 10;
                        let (j, e) = (rnd(5) as usize, rnd(3) as u32);
                        let ev = match rnd(7) {
                            0 => Ev::Completion(j, e),
                            1 => Ev::Lease(j, e),
                            2 => Ev::Wakeup(j, e),
                            3 => Ev::Starving(j, e),
                            4 => Ev::LeaseEnd,
                            5 => Ev::Bucket,
                            _ => Ev::Arrival(j),
                        };
                        ours.schedule(Nanos(t), ev);
                        one.schedule(Nanos(t), ev);
                    }
                    5 => {
                        let stale = |ev: &Ev| !matches!(ev, Ev::Lease(_, 1) | Ev::Starving(_, 1));
                        ours.retain(stale);
                        one.retain(stale);
                    }
                    6 => {
                        // The run loop takes the rest of an instant's events.
                        let a = ours.pop_at(now);
                        let b = match one.peek_key() {
                            Some((Nanos(t), _, _)) if t == now => one.pop().map(|e| e.1),
                            _ => None,
                        };
                        got.push(format!("{a:?}"));
                        want.push(format!("{b:?}"));
                    }
                    _ => {
                        let a = ours.pop();
                        let b = one.pop();
                        if let Some((Nanos(t), _)) = b {
                            now = t;
                        }
                        got.push(format!("{a:?}"));
                        want.push(format!("{b:?}"));
                    }
                }
                assert_eq!(ours.len(), one.len());
            }
            assert_eq!(got, want);
            assert_eq!(ours.processed(), one.processed());
        }
    }
}
