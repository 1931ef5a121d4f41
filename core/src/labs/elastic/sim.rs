//! The Pollux artifact's cluster simulation (`simulator/simulator.py`, `Job` and `Cluster`),
//! on the engine's queue in integer ns, quantised to whole seconds as the artifact keeps time
//! (every time point and pause a whole number of seconds): at every tick, one per `interval`,
//! each job advances, then the policy sees the jobs submitted and not complete and returns
//! every job's GPUs (a node per replica). A job whose GPUs changed pauses for the restart
//! (first start included) and re-picks its batch size. Jobs submitted between ticks wait for
//! the next one; a job that completes mid-interval keeps its GPUs idle until the interval ends.
//!
//! A job's progress (`Job.step`, l. 100–157): at N nodes, R replicas, per-GPU batch b and s
//! accumulation steps, an optimiser step takes s·T_acc(b) + T_opt(N, R, b) and buys
//! gain(B, epoch) M₀-steps of progress (B = R·b·(s+1)), so progress grows at gain/T per second;
//! at each epoch boundary (crossed at a whole second, rounded half to even as Python's `round`)
//! the batch size is re-picked and the gradient statistics of the new epoch apply. The artifact
//! reads the true step times from its profile tables; here they come from the throughput model
//! fitted to those tables (`apps`, docs/MODEL.md states the fit's error).

use alloc::vec;
use alloc::vec::Vec;

use crate::engine::{EventQueue, Prioritized};
use crate::units::Nanos;

use super::apps::{AppProfile, GradStats};

/// One job as the simulation keeps it.
#[derive(Clone, Debug)]
pub struct Job {
    /// Its application.
    pub app: &'static AppProfile,
    /// Submission, ns (a whole second).
    pub submit_ns: u64,
    /// GPUs a user tuned it for (Tiresias runs it on these).
    pub tuned_replicas: u32,
    /// A fixed total batch size (the baselines' tuned one; NCF's 32,768 under Pollux); `None`:
    /// the job picks the goodput-best batch size at every change (Pollux's agent).
    pub target_batch: Option<u32>,
    /// Completion, ns (a whole second).
    pub completion_ns: Option<u64>,
    /// Restart pause left, ns.
    rescale_ns: u64,
    /// GPUs on each node it spans, in allocation order (empty: no GPUs).
    pub placement: Vec<u32>,
    /// Per-GPU micro-batch size.
    pub atomic_bsz: u32,
    /// Accumulation steps beyond the first micro-batch.
    pub accum_steps: u32,
    /// Whether the job has run yet (Pollux's agent has a throughput model once it has).
    pub profiled: bool,
    /// Most replicas it has run on (Pollux lets a job at most double it per round).
    pub max_profiled_replicas: u32,
    /// The gradient statistics it last measured.
    pub grad: GradStats,
    /// Progress, M₀-steps.
    pub progress: f64,
    /// Epochs finished.
    pub epoch: u32,
    /// GPU-seconds held (restart pauses included).
    pub attained_service: u64,
    /// Restarts after its first start (`None` before it).
    pub num_restarts: Option<u32>,
    /// GPU-seconds held until completion or now, counting the idle tail of the last interval.
    pub gpu_s_held: u64,
    /// Every change of its GPUs: (time, GPUs, nodes, total batch size then).
    pub history: Vec<Change>,
}

/// A change of a job's GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// When, ns.
    pub t_ns: u64,
    /// GPUs from then on (0: none).
    pub gpus: u32,
    /// Nodes they span.
    pub nodes: u32,
    /// Total batch size picked for them.
    pub batch: u32,
}

impl Job {
    /// A job not yet started.
    #[must_use]
    pub fn new(
        app: &'static AppProfile,
        submit_ns: u64,
        tuned_replicas: u32,
        target_batch: Option<u32>,
    ) -> Job {
        Job {
            app,
            submit_ns,
            tuned_replicas,
            target_batch,
            completion_ns: None,
            rescale_ns: 0,
            placement: Vec::new(),
            atomic_bsz: 0,
            accum_steps: 0,
            profiled: false,
            max_profiled_replicas: 0,
            grad: GradStats { sqr: 0.0, var: 0.0 },
            progress: 0.0,
            epoch: 0,
            attained_service: 0,
            num_restarts: None,
            gpu_s_held: 0,
            history: Vec::new(),
        }
    }

    /// Nodes and replicas of its placement.
    #[must_use]
    pub fn shape(&self) -> (u32, u32) {
        (self.placement.len() as u32, self.placement.iter().sum())
    }

    /// Total batch size now.
    #[must_use]
    pub fn batch_size(&self) -> u32 {
        let (_, r) = self.shape();
        r * self.atomic_bsz * (self.accum_steps + 1)
    }

    /// Re-picks the per-GPU batch and accumulation steps for the placement
    /// (`update_local_bsz`, l. 64–83).
    fn update_local_bsz(&mut self) {
        let app = self.app;
        let (n, r) = self.shape();
        if r == 0 {
            return;
        }
        let target = if self.target_batch.is_none() && !self.profiled {
            // No throughput model yet: the smallest batch the GPUs allow.
            Some(app.init_batch_size.max(app.min_local_bsz * r))
        } else {
            self.target_batch
        };
        let (b, s) = if let Some(batch) = target {
            app.fixed_config(batch, r)
        } else {
            let c = app.optimize(self.grad, n, r);
            (c.atomic_bsz, c.accum_steps)
        };
        self.accum_steps = s;
        self.atomic_bsz = app.clamp_atomic(b, r, s);
    }

    /// Advances the job by `interval_ns` from `start_ns` (`Job.step`, l. 100–157): in whole
    /// seconds, an epoch boundary crossed at the nearest one.
    pub fn step(&mut self, start_ns: u64, interval_ns: u64) {
        let (n, r) = self.shape();
        if r == 0 || self.completion_ns.is_some() {
            return;
        }
        let seconds = interval_ns / NS_PER_S;
        self.gpu_s_held += u64::from(r) * seconds;
        let mut now_ns = start_ns;
        let delay_s = (self.rescale_ns / NS_PER_S).min(seconds);
        now_ns += delay_s * NS_PER_S;
        self.attained_service += delay_s * u64::from(r);
        self.rescale_ns -= delay_s * NS_PER_S;
        let mut left = seconds - delay_s;
        let app = self.app;
        let init = f64::from(app.init_batch_size);
        while left > 0 && self.completion_ns.is_none() {
            let b = f64::from(self.atomic_bsz);
            let batch = f64::from(self.batch_size());
            let step_s = app.perf.optim_time_s(n, r, b);
            let accum_s = app.perf.accum_time_s(b);
            self.grad = app.grad_stats(batch, self.epoch);
            let gain = self.grad.gain(batch, init);
            self.profiled = true;
            self.max_profiled_replicas = self.max_profiled_replicas.max(r);
            let total_s = step_s + accum_s * f64::from(self.accum_steps);
            let rate = gain / total_s;
            let next = app.progress_at_epoch(self.epoch + 1);
            if self.progress + rate * left as f64 >= next && rate > 0.0 {
                self.epoch += 1;
                let delta = (libm::rint((next - self.progress) / rate).max(0.0) as u64).min(left);
                if self.epoch >= app.max_epochs {
                    self.completion_ns = Some(now_ns + delta * NS_PER_S);
                    // The GPUs stay held to the end of the interval.
                }
                self.progress = next;
                now_ns += delta * NS_PER_S;
                self.attained_service += delta * u64::from(r);
                left -= delta;
            } else {
                self.progress += rate * left as f64;
                self.attained_service += left * u64::from(r);
                left = 0;
            }
            self.update_local_bsz();
        }
    }

    /// Gives the job new GPUs (`Job.reallocate`, l. 159–170): a pause of `restart_ns` on any
    /// non-empty change, first start included; none frees them.
    pub fn reallocate(&mut self, now_ns: u64, placement: Vec<u32>, restart_ns: u64) {
        if placement.is_empty() {
            self.placement = placement;
            self.atomic_bsz = 0;
        } else {
            self.placement = placement;
            self.update_local_bsz();
            self.rescale_ns = restart_ns;
            self.num_restarts = Some(self.num_restarts.map_or(0, |k| k + 1));
        }
        let (nodes, gpus) = self.shape();
        if self.history.last().map_or(gpus > 0, |c| c.gpus > 0 || gpus > 0) {
            self.history.push(Change {
                t_ns: now_ns,
                gpus,
                nodes,
                batch: self.batch_size(),
            });
        }
    }
}

/// A placement from a node per replica: GPUs on each run of equal consecutive nodes
/// (`Cluster.step`, l. 241–250).
#[must_use]
pub fn placement_of(alloc: &[u32]) -> Vec<u32> {
    let mut p: Vec<u32> = Vec::new();
    for (i, &node) in alloc.iter().enumerate() {
        if i == 0 || node != alloc[i - 1] {
            p.push(1);
        } else if let Some(last) = p.last_mut() {
            *last += 1;
        }
    }
    p
}

/// What a policy is asked each round.
pub struct Round<'a> {
    /// Now, ns.
    pub now_ns: u64,
    /// Every job; `active` indexes it.
    pub jobs: &'a [Job],
    /// Submitted, not complete, ascending index.
    pub active: &'a [usize],
    /// Nodes.
    pub nodes: u32,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// Restart pause, ns (Pollux's fitness prices restarts with it).
    pub restart_ns: u64,
}

/// A scheduling policy of the elastic lab.
pub trait Scheduler {
    /// Every active job's GPUs (a node per replica), in `round.active` order, given their
    /// current ones (`prev`, same order).
    fn optimize(&mut self, round: &Round<'_>, prev: &[Vec<u32>]) -> Vec<Vec<u32>>;
}

/// One sample per tick with active jobs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Time, ns.
    pub t_ns: u64,
    /// GPUs allocated.
    pub gpus: u32,
    /// Jobs submitted and not complete.
    pub active: u32,
    /// Of those, jobs holding GPUs.
    pub running: u32,
}

/// One policy's run.
#[derive(Clone, Debug)]
pub struct Run {
    /// Jobs at the end.
    pub jobs: Vec<Job>,
    /// Samples, one per tick with active jobs.
    pub samples: Vec<Sample>,
    /// Scheduling rounds.
    pub rounds: u64,
    /// The time the run stopped, ns.
    pub end_ns: u64,
}

/// Nanoseconds in a second: the artifact's clock's step.
pub const NS_PER_S: u64 = 1_000_000_000;

/// Longest simulated span, ns (a job still running then is reported unfinished).
pub const MAX_SPAN_NS: u64 = 60 * 24 * 3600 * NS_PER_S;

/// The simulation's one kind of event: a scheduling tick.
struct Tick;

impl Prioritized for Tick {
    fn priority(&self) -> u8 {
        0
    }
}

/// Runs `jobs` under `policy` (`Cluster.step` and `simulate`, l. 206–271 and 391–405), a tick
/// every `interval_ns`; `restart_ns` is the restart time Pollux's fitness charges,
/// `pause_ns[g]` the pause a job really takes after its GPUs change to g (every entry
/// `restart_ns` in the artifact; missing entries: `restart_ns`); `progress(done, total)` counts
/// completed jobs. Every time given is a whole number of seconds.
#[allow(clippy::too_many_arguments)] // the artifact's cluster, its clock and the policy
pub fn simulate(
    mut jobs: Vec<Job>,
    nodes: u32,
    gpus_per_node: u32,
    interval_ns: u64,
    restart_ns: u64,
    pause_ns: &[u64],
    policy: &mut dyn Scheduler,
    progress: &mut dyn FnMut(u64, u64),
) -> Run {
    let mut allocs: Vec<Vec<u32>> = vec![Vec::new(); jobs.len()];
    let mut samples = Vec::new();
    let mut rounds = 0;
    let mut end_ns: u64 = 0;
    let mut active: Vec<usize> = Vec::new();
    let mut ticks = EventQueue::new();
    ticks.schedule(Nanos::ZERO, Tick);
    while let Some((Nanos(start_ns), Tick)) = ticks.pop() {
        end_ns = start_ns;
        if jobs.iter().all(|j| j.completion_ns.is_some()) || start_ns >= MAX_SPAN_NS {
            break;
        }
        for j in &mut jobs {
            j.step(start_ns, interval_ns);
        }
        let now = start_ns + interval_ns;
        end_ns = now;
        active.clear();
        active.extend(
            (0..jobs.len())
                .filter(|&i| jobs[i].submit_ns <= now && jobs[i].completion_ns.is_none()),
        );
        if active.is_empty() {
            // Nothing runs until the next submission: skip to the tick before it (no job
            // changes meanwhile; completed jobs keep their last GPUs, as in the artifact).
            let next_tick = jobs
                .iter()
                .filter(|j| j.completion_ns.is_none() && j.submit_ns > now)
                .map(|j| j.submit_ns)
                .min()
                .map_or(now, |next| {
                    now.max(next.div_ceil(interval_ns) * interval_ns - interval_ns)
                });
            ticks.schedule(Nanos(next_tick), Tick);
            continue;
        }
        rounds += 1;
        let prev: Vec<Vec<u32>> = active.iter().map(|&i| allocs[i].clone()).collect();
        let round = Round {
            now_ns: now,
            jobs: &jobs,
            active: &active,
            nodes,
            gpus_per_node,
            restart_ns,
        };
        let next = policy.optimize(&round, &prev);
        // Jobs that left the active set lose their entry (the artifact filters its map).
        let mut new_allocs: Vec<Vec<u32>> = vec![Vec::new(); jobs.len()];
        for (k, &i) in active.iter().enumerate() {
            new_allocs[i] = next.get(k).cloned().unwrap_or_default();
        }
        for &i in &active {
            if new_allocs[i] != allocs[i] {
                let g = new_allocs[i].len();
                let pause = pause_ns.get(g).copied().unwrap_or(restart_ns);
                jobs[i].reallocate(now, placement_of(&new_allocs[i]), pause);
            }
        }
        allocs = new_allocs;
        let gpus = active.iter().map(|&i| allocs[i].len() as u32).sum();
        let running = active.iter().filter(|&&i| !allocs[i].is_empty()).count() as u32;
        samples.push(Sample {
            t_ns: now,
            gpus,
            active: active.len() as u32,
            running,
        });
        let done = jobs.iter().filter(|j| j.completion_ns.is_some()).count();
        progress(done as u64, jobs.len() as u64);
        ticks.schedule(Nanos(now), Tick);
    }
    Run {
        jobs,
        samples,
        rounds,
        end_ns,
    }
}
