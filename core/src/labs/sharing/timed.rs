//! Pods over time, with interference: GPU sharing as Gandiva (Xiao et al., OSDI'18 §4.1–4.2)
//! frames it — packing pods on one GPU when their memory fits raises utilisation, but packed
//! pods slow each other, and a packer that watches them unpacks a pod that runs too slowly.
//!
//! The workload (our stated model, not a trace): pods drawn from the scenario's pod classes in
//! proportion to their counts arrive as a Poisson process whose rate gives the offered load
//! [`TimedSpec::load`]; each runs for an exponentially distributed solo duration. The openb
//! trace has no compute demand per pod (its `gpu_milli` guarantees memory), so a sharing pod's
//! contention share is taken to be its GPU share r/1000 (stated assumption). Interference is the
//! kernel's contention model (`crate::graph::sim`, the bubbles lab's blind colocation): a pod
//! progresses at 1/(1 + Σ s_i) of its solo speed while co-runners with shares s_i hold its GPU.
//! A whole-GPU pod runs alone at full speed.
//!
//! Rows: *exclusive GPUs* (every pod takes whole GPUs: a sharing pod is rounded up to one GPU,
//! never slowed), each chosen placement policy *packing* (pods share GPUs whenever their memory
//! fits, never moved), and the same policy *with unpacking* (Gandiva's introspection mapped to a
//! per-pod bound, our reading: [`TimedSpec::check_after_s`] after a pod joins a GPU, while some
//! pod there runs below [`TimedSpec::unpack_below`] of its solo speed, the slowest one moves to
//! the GPU where it would run fastest without pushing anyone there below the bound, and makes no
//! progress for [`TimedSpec::migration_s`]; when no GPU qualifies it stays). Pods that fit
//! nowhere wait in arrival order; at every departure and move the waiting pods are tried in that order
//! (a later pod may start ahead of an earlier one that still does not fit).

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::cluster::{typical_tasks, Cluster, Pod};
use super::experiment::TYPICAL_COVERAGE_PERCENT;
use super::params::{SharingParams, TimedSpec, GPU_MILLI, MAX_GPUS_PER_NODE};
use super::policies::{place, Ctx, FragMemo, Kinds, SharingPolicy};
use crate::engine::{EventQueue, Prioritized};
use crate::units::{nanos_from_f64, Nanos};

/// One arriving pod.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    /// Its shape.
    pub pod: Pod,
    /// Arrival, ns.
    pub at_ns: u64,
    /// Solo duration, ns.
    pub duration_ns: u64,
}

/// The arrivals of a timed run (see the module documentation).
#[must_use]
pub fn arrivals(params: &SharingParams, cluster: &Cluster) -> Vec<Arrival> {
    let spec = &params.timed;
    let mut rng = Pcg64Mcg::seed_from_u64(params.first_seed);
    let shapes: Vec<Pod> = params.pods.iter().map(|c| cluster.pod(c)).collect();
    let total: u64 = params.pods.iter().map(|c| u64::from(c.count)).sum();
    let mean_milli: f64 = params
        .pods
        .iter()
        .zip(&shapes)
        .map(|(c, p)| f64::from(c.count) * p.total_gpu_milli() as f64)
        .sum::<f64>()
        / total as f64;
    let capacity = cluster.gpus() as f64 * f64::from(GPU_MILLI);
    // Offered load = rate · mean milli · mean duration / capacity.
    let gap_s = mean_milli * spec.mean_duration_s / (spec.load * capacity);
    let mut at_s = 0.0;
    let mut out = Vec::with_capacity(spec.pods as usize);
    for _ in 0..spec.pods {
        let u: f64 = rng.random();
        at_s += -libm::log(1.0 - u) * gap_s;
        let pick = rng.random_range(0..total);
        let mut acc = 0u64;
        let k = params
            .pods
            .iter()
            .position(|c| {
                acc += u64::from(c.count);
                pick < acc
            })
            .unwrap_or(0);
        let v: f64 = rng.random();
        let duration_s = (-libm::log(1.0 - v) * spec.mean_duration_s).max(1.0);
        out.push(Arrival {
            pod: shapes[k],
            at_ns: nanos_from_f64(at_s * 1e9).0,
            duration_ns: nanos_from_f64(duration_s * 1e9).0,
        });
    }
    out
}

/// One row of the timed experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Every pod on whole GPUs.
    Exclusive,
    /// Pods packed by the policy, never moved.
    Packing(SharingPolicy),
    /// Pods packed by the policy, the slowest moved while below the bound.
    Unpacking(SharingPolicy),
}

impl Variant {
    /// The row's id (metric keys).
    #[must_use]
    pub fn id(self) -> String {
        match self {
            Variant::Exclusive => "exclusive".into(),
            Variant::Packing(p) => p.id().into(),
            Variant::Unpacking(p) => format!("{}-unpacking", p.id()),
        }
    }

    /// The row's label.
    #[must_use]
    pub fn label(self) -> String {
        match self {
            Variant::Exclusive => "Exclusive GPUs (no sharing)".into(),
            Variant::Packing(p) => format!("{} packing", p.label()),
            Variant::Unpacking(p) => format!("{} + unpacking (Gandiva-style)", p.label()),
        }
    }
}

/// What a timed run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedRun {
    /// The row.
    pub variant: Variant,
    /// Per pod: (arrival, start, finish), ns.
    pub pods: Vec<(u64, u64, u64)>,
    /// Per pod: solo duration, ns.
    pub solo_ns: Vec<u64>,
    /// Per pod: whether it shared a GPU's memory (GPU share below 1000).
    pub sharing: Vec<bool>,
    /// GPU milli in use over time — the running pods' own shares (a sharing pod on an
    /// exclusive GPU uses its share, not the whole GPU): (t ns, milli) at every change.
    pub allocated: Vec<(u64, u64)>,
    /// Moves made by unpacking.
    pub moves: u64,
    /// Checks that found a pod below the bound and no GPU to move it to.
    pub stuck: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A pod finishes (stale unless its epoch matches).
    Finish(usize, u64),
    /// A pod arrives.
    Arrive(usize),
    /// Look at a GPU's pods (unpacking; stale unless the GPU's epoch matches).
    Check(usize, u64),
}

impl Prioritized for Event {
    fn priority(&self) -> u8 {
        match self {
            Event::Finish(..) => 0,
            Event::Arrive(_) => 1,
            Event::Check(..) => 2,
        }
    }
}

/// A pod's state while it runs.
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    /// Solo ns of work left at `since`.
    left_ns: f64,
    /// Speed since `since` (share of solo speed).
    speed: f64,
    /// Since when `left_ns` and `speed` hold, ns.
    since: u64,
    /// No progress before this time (a move's pause), ns.
    paused_until: u64,
    /// Node and GPUs held.
    node: usize,
    gpus: [u8; MAX_GPUS_PER_NODE as usize],
    n_gpus: u8,
    epoch: u64,
}

struct Sim<'p> {
    spec: &'p TimedSpec,
    variant: Variant,
    cluster: Cluster,
    kinds: Vec<Kinds>,
    rank: Vec<u32>,
    rng: Pcg64Mcg,
    feasible: Vec<usize>,
    /// Pods (by index) on each GPU (node × MAX_GPUS_PER_NODE + gpu) that share it.
    on_gpu: Vec<Vec<usize>>,
    gpu_epoch: Vec<u64>,
    run: Vec<Option<Running>>,
    queue: EventQueue<Event>,
    allocated_milli: u64,
    /// Pods that fit nowhere yet, in arrival order.
    waiting: VecDeque<usize>,
    out: TimedRun,
}

/// A pod's speed (share of its solo speed) on a GPU held with `others`: the kernel's
/// contention model, 1 / (1 + Σ of the others' contention shares), a share being a pod's GPU
/// share r / 1000 (stated assumption).
fn speed_with(arrivals: &[Arrival], others: impl Iterator<Item = usize>) -> f64 {
    let load: f64 = others
        .map(|o| f64::from(arrivals[o].pod.gpu_milli) / f64::from(GPU_MILLI))
        .sum();
    1.0 / (1.0 + load)
}

fn slot(node: usize, gpu: u8) -> usize {
    node * MAX_GPUS_PER_NODE as usize + usize::from(gpu)
}

impl Sim<'_> {
    /// The shape a variant asks for.
    fn shape(&self, pod: Pod) -> Pod {
        if self.variant == Variant::Exclusive && pod.shares() {
            Pod {
                gpu_milli: GPU_MILLI,
                ..pod
            }
        } else {
            pod
        }
    }

    fn policy(&self) -> SharingPolicy {
        match self.variant {
            Variant::Exclusive => SharingPolicy::BestFit,
            Variant::Packing(p) | Variant::Unpacking(p) => p,
        }
    }

    /// Settles a running pod's progress up to `t`.
    fn settle(&mut self, i: usize, t: u64) {
        if let Some(r) = self.run[i].as_mut() {
            let from = r.since.max(r.paused_until);
            if t > from {
                r.left_ns = (r.left_ns - r.speed * (t - from) as f64).max(0.0);
            }
            r.since = t;
        }
    }

    /// Recomputes the speeds of the pods on GPU `g` at `t` and re-arms their finishes.
    fn retime(&mut self, arrivals: &[Arrival], g: usize, t: u64) {
        let pods = self.on_gpu[g].clone();
        for &i in &pods {
            self.settle(i, t);
        }
        for &i in &pods {
            let speed = speed_with(arrivals, pods.iter().copied().filter(|&o| o != i));
            self.arm(i, speed, t);
        }
    }

    /// Sets pod `i`'s speed from `t` and schedules its finish.
    fn arm(&mut self, i: usize, speed: f64, t: u64) {
        let Some(r) = self.run[i].as_mut() else { return };
        r.speed = speed;
        r.since = t;
        r.epoch += 1;
        let start = t.max(r.paused_until);
        let finish = start + nanos_from_f64(r.left_ns / speed).0;
        let epoch = r.epoch;
        self.queue.schedule(Nanos(finish), Event::Finish(i, epoch));
    }

    /// Tries to start pod `i` at `t`; false when it fits nowhere.
    fn start(&mut self, arrivals: &[Arrival], memo: &mut FragMemo<'_>, i: usize, t: u64) -> bool {
        let pod = self.shape(arrivals[i].pod);
        let policy = self.policy();
        let mut ctx = Ctx {
            kinds: &self.kinds,
            rank: &self.rank,
            memo,
            rng: &mut self.rng,
            feasible: &mut self.feasible,
        };
        let Some((node, gpus)) = place(policy, &self.cluster.nodes, &pod, &mut ctx) else {
            return false;
        };
        self.cluster.nodes[node].place(&pod, &gpus);
        self.kinds[node].add(&pod);
        self.allocated_milli += arrivals[i].pod.total_gpu_milli();
        self.out.allocated.push((t, self.allocated_milli));
        self.out.pods[i].1 = t;
        let mut held = [0u8; MAX_GPUS_PER_NODE as usize];
        for (k, &g) in gpus.iter().enumerate() {
            held[k] = g as u8;
        }
        self.run[i] = Some(Running {
            left_ns: arrivals[i].duration_ns as f64,
            speed: 1.0,
            since: t,
            paused_until: t,
            node,
            gpus: held,
            n_gpus: gpus.len() as u8,
            epoch: 0,
        });
        if pod.shares() {
            let g = slot(node, held[0]);
            self.on_gpu[g].push(i);
            self.retime(arrivals, g, t);
            self.watch(g, t);
        } else {
            self.arm(i, 1.0, t);
        }
        true
    }

    /// Tries the waiting pods in arrival order; a later one may start ahead of one that still
    /// does not fit. Within one pass the cluster only fills, so a shape that found no node is
    /// not tried again (a failed try draws no random number: the result is the same).
    fn start_waiting(&mut self, arrivals: &[Arrival], memo: &mut FragMemo<'_>, t: u64) {
        let mut still = VecDeque::with_capacity(self.waiting.len());
        let mut failed: Vec<Pod> = Vec::new();
        while let Some(w) = self.waiting.pop_front() {
            let shape = arrivals[w].pod;
            if failed.contains(&shape) || !self.start(arrivals, memo, w, t) {
                if !failed.contains(&shape) {
                    failed.push(shape);
                }
                still.push_back(w);
            }
        }
        self.waiting = still;
    }

    /// Schedules a look at GPU `g` (unpacking only).
    fn watch(&mut self, g: usize, t: u64) {
        if matches!(self.variant, Variant::Unpacking(_)) {
            self.gpu_epoch[g] += 1;
            let at = t + nanos_from_f64(self.spec.check_after_s * 1e9).0;
            self.queue.schedule(Nanos(at), Event::Check(g, self.gpu_epoch[g]));
        }
    }

    /// Frees pod `i`'s resources at `t`; returns its shared GPU, if any.
    fn release(&mut self, arrivals: &[Arrival], i: usize, t: u64) -> Option<usize> {
        let r = self.run[i].take()?;
        let pod = self.shape(arrivals[i].pod);
        let node = &mut self.cluster.nodes[r.node];
        node.cpu_free += pod.cpu_milli;
        node.memory_free += pod.memory_mib;
        for &g in &r.gpus[..usize::from(r.n_gpus)] {
            node.gpu_free[usize::from(g)] += pod.gpu_milli;
        }
        self.kinds[r.node].remove(&pod);
        self.allocated_milli -= arrivals[i].pod.total_gpu_milli();
        self.out.allocated.push((t, self.allocated_milli));
        pod.shares().then(|| {
            let g = slot(r.node, r.gpus[0]);
            self.on_gpu[g].retain(|&o| o != i);
            g
        })
    }

    /// Unpacking at `t` on GPU `g`: while a pod there runs below the bound, move the slowest.
    /// Returns whether any pod moved.
    fn check(&mut self, arrivals: &[Arrival], g: usize, t: u64) -> bool {
        let bound = self.spec.unpack_below;
        let mut moved = false;
        loop {
            let pods = self.on_gpu[g].clone();
            let slowest = pods
                .iter()
                .copied()
                .filter_map(|i| self.run[i].map(|r| (r.speed, i)))
                .filter(|&(s, _)| s < bound)
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let Some((_, i)) = slowest else {
                return moved;
            };
            let pod = arrivals[i].pod;
            // The GPU where it would run fastest, no one there pushed below the bound.
            let mut best: Option<(f64, usize, u8)> = None;
            let home = self.run[i].map_or(usize::MAX, |r| r.node);
            for (n, node) in self.cluster.nodes.iter().enumerate() {
                // On its own node the pod's CPU and memory are free again once it moves.
                let (cpu, mem) = if n == home {
                    (pod.cpu_milli, pod.memory_mib)
                } else {
                    (0, 0)
                };
                if node.cpu_free + cpu < pod.cpu_milli
                    || node.memory_free + mem < pod.memory_mib
                    || !node.model_allowed(&pod)
                {
                    continue;
                }
                for k in 0..node.gpus as u8 {
                    let h = slot(n, k);
                    if h == g || node.gpu_free[usize::from(k)] < pod.gpu_milli {
                        continue;
                    }
                    let there = &self.on_gpu[h];
                    let mine = speed_with(arrivals, there.iter().copied());
                    let others_ok = there.iter().all(|&o| {
                        speed_with(
                            arrivals,
                            there.iter().copied().filter(|&x| x != o).chain([i]),
                        ) >= bound
                    });
                    if mine >= bound && others_ok && best.is_none_or(|b| mine > b.0) {
                        best = Some((mine, n, k));
                    }
                }
            }
            let Some((_, n, k)) = best else {
                self.out.stuck += 1;
                return moved;
            };
            moved = true;
            self.settle(i, t);
            let (left, epoch) = self.run[i].map_or((0.0, 0), |r| (r.left_ns, r.epoch));
            self.release(arrivals, i, t);
            self.retime(arrivals, g, t);
            let node = &mut self.cluster.nodes[n];
            node.place(&pod, &[u32::from(k)]);
            self.kinds[n].add(&pod);
            self.allocated_milli += pod.total_gpu_milli();
            self.out.allocated.push((t, self.allocated_milli));
            let mut held = [0u8; MAX_GPUS_PER_NODE as usize];
            held[0] = k;
            let pause = nanos_from_f64(self.spec.migration_s * 1e9).0;
            self.run[i] = Some(Running {
                left_ns: left,
                speed: 1.0,
                since: t,
                paused_until: t + pause,
                node: n,
                gpus: held,
                n_gpus: 1,
                // Epochs only grow, so the finishes armed before the move stay stale.
                epoch,
            });
            self.out.moves += 1;
            let h = slot(n, k);
            self.on_gpu[h].push(i);
            self.retime(arrivals, h, t);
        }
    }
}

/// Runs one row on the arrivals.
#[must_use]
pub fn run(params: &SharingParams, arrivals: &[Arrival], variant: Variant) -> TimedRun {
    let cluster = Cluster::new(&params.nodes);
    let counts: Vec<u32> = params.pods.iter().map(|c| c.count).collect();
    let shapes: Vec<Pod> = params.pods.iter().map(|c| cluster.pod(c)).collect();
    let tasks = typical_tasks(&shapes, &counts, TYPICAL_COVERAGE_PERCENT);
    let mut memo = FragMemo::new(&tasks);
    let mut rank_rng = Pcg64Mcg::seed_from_u64(params.first_seed ^ 0x7a3e_d5c1);
    let n = cluster.nodes.len();
    let mut rank: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rank_rng.random_range(0..=i as u64) as usize;
        rank.swap(i, j);
    }
    let slots = n * MAX_GPUS_PER_NODE as usize;
    let mut sim = Sim {
        spec: &params.timed,
        variant,
        kinds: vec![Kinds::default(); n],
        cluster,
        rank,
        rng: Pcg64Mcg::seed_from_u64(params.first_seed ^ 0x5eed_f6d0),
        feasible: Vec::new(),
        on_gpu: vec![Vec::new(); slots],
        gpu_epoch: vec![0; slots],
        run: vec![None; arrivals.len()],
        queue: EventQueue::new(),
        allocated_milli: 0,
        waiting: VecDeque::new(),
        out: TimedRun {
            variant,
            pods: arrivals.iter().map(|a| (a.at_ns, 0, 0)).collect(),
            solo_ns: arrivals.iter().map(|a| a.duration_ns).collect(),
            sharing: arrivals.iter().map(|a| a.pod.shares()).collect(),
            allocated: vec![(0, 0)],
            moves: 0,
            stuck: 0,
        },
    };
    for (i, a) in arrivals.iter().enumerate() {
        sim.queue.schedule(Nanos(a.at_ns), Event::Arrive(i));
    }
    while let Some((Nanos(t), event)) = sim.queue.pop() {
        match event {
            Event::Arrive(i) => {
                if !sim.start(arrivals, &mut memo, i, t) {
                    sim.waiting.push_back(i);
                    // A pod that can never fit (larger than any node) is dropped at once.
                    let never = sim.cluster.nodes.iter().all(|n| {
                        let p = sim.shape(arrivals[i].pod);
                        n.cpu_milli < p.cpu_milli
                            || n.memory_mib < p.memory_mib
                            || !n.model_allowed(&p)
                            || n.gpus < p.num_gpu
                    });
                    if never {
                        sim.waiting.pop_back();
                        sim.out.pods[i] = (arrivals[i].at_ns, u64::MAX, u64::MAX);
                    }
                }
            }
            Event::Finish(i, epoch) => {
                if sim.run[i].is_none_or(|r| r.epoch != epoch) {
                    continue;
                }
                sim.out.pods[i].2 = t;
                if let Some(g) = sim.release(arrivals, i, t) {
                    sim.retime(arrivals, g, t);
                }
                sim.start_waiting(arrivals, &mut memo, t);
            }
            Event::Check(g, epoch) => {
                if sim.gpu_epoch[g] == epoch && sim.check(arrivals, g, t) {
                    sim.start_waiting(arrivals, &mut memo, t);
                }
            }
        }
    }
    sim.out
}
