//! The training-job model: packed micro-batches, per-micro-batch compute time
//! T = α·N_tokens + β·Σ lᵢ² per layer, a stage's TP group running at its slowest member's pace,
//! each replica's iteration the critical path of the pipeline lab's 1F1B op orders, plus the DP
//! gradient all-reduce from the kernel's cost model; the iteration waits for the slowest replica.

use alloc::vec;
use alloc::vec::Vec;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::params::ResilienceParams;
use crate::cost::{CollectiveKind, CostModel, Group};
use crate::labs::pipeline::{one_f_one_b_orders, OpKind};
use crate::scenario::ScenarioError;
use crate::units::nanos_from_f64;

/// One packed micro-batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicroBatch {
    /// Tokens N in it.
    pub tokens: u64,
    /// Σ lᵢ² over its packed sequences, tokens².
    pub sum_sq: f64,
}

/// Fixed quantities of the job derived from the scenario.
#[derive(Clone, Debug)]
pub struct Job {
    /// The kernel cost model of the cluster's GPU and DGX node.
    pub cost: CostModel,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// All GPUs.
    pub gpus: u32,
    /// Layers.
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Heads.
    pub heads: u32,
    /// Original TP degree.
    pub tp: u32,
    /// α: ns per token per layer on one healthy GPU (forward + backward = 6 FLOPs per parameter
    /// per token).
    pub alpha_ns: f64,
    /// β: ns per token² per layer on one healthy GPU (causal attention forward 2·l²·h FLOPs,
    /// forward + backward 3×).
    pub beta_ns: f64,
    /// Training-state bytes of one layer (all TP shards together).
    pub state_bytes_per_layer: f64,
    /// BF16 gradient bytes of one layer.
    pub grad_bytes_per_layer: f64,
    /// State bytes one GPU may hold.
    pub memory_cap_bytes: f64,
    /// Tokens per packed micro-batch.
    pub tokens_per_micro_batch: u64,
}

impl Job {
    /// Derives the job from validated parameters.
    #[must_use]
    pub fn new(p: &ResilienceParams) -> Job {
        let cost = CostModel::new(p.cluster.gpu);
        let flops_per_s = cost.gpu.peak_bf16_flops_per_s * p.cluster.mfu;
        let params_per_layer = p.model.params_billion * 1e9 / f64::from(p.model.layers);
        Job {
            gpus_per_node: p.cluster.gpus_per_node,
            gpus: p.gpus(),
            layers: p.model.layers,
            hidden: p.model.hidden,
            heads: p.model.heads,
            tp: p.cluster.tp,
            alpha_ns: 6.0 * params_per_layer / flops_per_s * 1e9,
            beta_ns: 6.0 * f64::from(p.model.hidden) / flops_per_s * 1e9,
            state_bytes_per_layer: params_per_layer * p.cluster.state_bytes_per_param,
            grad_bytes_per_layer: params_per_layer * 2.0,
            memory_cap_bytes: cost.gpu.hbm_bytes as f64 * p.cluster.memory_fraction,
            tokens_per_micro_batch: u64::from(p.lengths.tokens_per_micro_batch),
            cost,
        }
    }

    /// Node of GPU `g`.
    #[must_use]
    pub fn node_of(&self, g: u32) -> u32 {
        g / self.gpus_per_node.max(1)
    }

    /// Most layers a stage of TP degree `t` can hold in memory.
    #[must_use]
    pub fn layer_cap(&self, t: u32) -> u32 {
        let per_layer = self.state_bytes_per_layer / f64::from(t.max(1));
        let cap = libm::floor(self.memory_cap_bytes / per_layer);
        if cap >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            cap.max(0.0) as u32
        }
    }

    /// TP degrees allowed: powers of two up to the original degree that divide heads and hidden.
    #[must_use]
    pub fn tp_degrees(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut t = 1;
        while t <= self.tp {
            if self.heads.is_multiple_of(t) && self.hidden.is_multiple_of(t) {
                out.push(t);
            }
            t *= 2;
        }
        out
    }

    /// TP all-reduce time one layer adds to one micro-batch on a group of `gpus` (2 all-reduces
    /// of N·h BF16 activations forward, 2 backward), ns.
    #[must_use]
    pub fn tp_comm_ns_per_layer(&self, gpus: &[u32]) -> f64 {
        let t = gpus.len() as u32;
        if t <= 1 {
            return 0.0;
        }
        let per_node = self.ranks_per_node(gpus);
        let bytes = 2.0 * self.tokens_per_micro_batch as f64 * f64::from(self.hidden);
        4.0 * self
            .cost
            .collective_ns(CollectiveKind::AllReduce, bytes, Group::new(t, per_node))
    }

    fn ranks_per_node(&self, gpus: &[u32]) -> u32 {
        let mut nodes: Vec<u32> = gpus.iter().map(|&g| self.node_of(g)).collect();
        nodes.sort_unstable();
        nodes.dedup();
        (gpus.len() as u32).div_ceil(nodes.len().max(1) as u32)
    }

    /// Activation (or gradient) send between two stages' first GPUs, ns.
    #[must_use]
    pub fn p2p_ns(&self, from: u32, to: u32) -> f64 {
        let bytes = 2.0 * self.tokens_per_micro_batch as f64 * f64::from(self.hidden);
        let same = self.node_of(from) == self.node_of(to);
        self.cost.collective_ns(
            CollectiveKind::SendRecv,
            bytes,
            Group::new(2, if same { 2 } else { 1 }),
        )
    }
}

/// One pipeline stage of a plan: the TP group and how many layers it holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StagePlan {
    /// GPUs of the TP group (its degree is their count).
    pub gpus: Vec<u32>,
    /// Layers held (contiguous, in stage order).
    pub layers: u32,
}

/// One data-parallel replica of a plan.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplicaPlan {
    /// Index of the replica in the original layout.
    pub id: u32,
    /// Stages in pipeline order.
    pub stages: Vec<StagePlan>,
    /// Micro-batches it runs per iteration.
    pub micro_batches: u32,
    /// Per stage: micro-batches of failed peers this stage runs as well (ReCycle's rerouting;
    /// empty or zeros otherwise).
    pub extra: Vec<u32>,
}

/// A parallel plan: which GPUs form which TP group, stage and replica, with layer and
/// micro-batch shares.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// Active replicas.
    pub replicas: Vec<ReplicaPlan>,
    /// GPUs that work without being timed here: the surviving stages of replicas whose failed
    /// stage ReCycle reroutes (they run their own micro-batches beside the timed replicas).
    pub standby: Vec<u32>,
}

impl Plan {
    /// The original layout, Megatron-LM rank order (TP innermost, then DP, then PP):
    /// GPU = tp_rank + tp·(dp_rank + dp·pp_rank); layers split as evenly as possible.
    #[must_use]
    pub fn initial(p: &ResilienceParams) -> Plan {
        let c = &p.cluster;
        let replicas = (0..c.dp)
            .map(|r| ReplicaPlan {
                id: r,
                stages: (0..c.pp)
                    .map(|s| StagePlan {
                        gpus: (0..c.tp).map(|t| t + c.tp * (r + c.dp * s)).collect(),
                        layers: p.model.layers / c.pp + u32::from(s < p.model.layers % c.pp),
                    })
                    .collect(),
                micro_batches: c.micro_batches,
                extra: Vec::new(),
            })
            .collect();
        Plan {
            replicas,
            standby: Vec::new(),
        }
    }

    /// Every GPU the plan uses, sorted.
    #[must_use]
    pub fn used_gpus(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .replicas
            .iter()
            .flat_map(|r| r.stages.iter().flat_map(|s| s.gpus.iter().copied()))
            .chain(self.standby.iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Micro-batches all replicas run per iteration.
    #[must_use]
    pub fn total_micro_batches(&self) -> u32 {
        self.replicas.iter().map(|r| r.micro_batches).sum()
    }
}

/// Per-plan constants of the iteration evaluation.
#[derive(Clone, Debug)]
pub struct PlanEval {
    /// The plan.
    pub plan: Plan,
    /// 1F1B op orders per replica (per stage).
    orders: Vec<Vec<Vec<crate::labs::pipeline::Op>>>,
    /// TP comm per micro-batch per stage (all its layers), ns; per replica.
    tp_comm_ns: Vec<Vec<f64>>,
    /// P2P between stage s and s+1, ns; per replica.
    p2p_ns: Vec<Vec<u64>>,
    /// DP gradient all-reduce at the end of the iteration, ns.
    pub dp_sync_ns: u64,
}

/// Time multipliers of the communication of a plan (communication fail-slow): per replica and
/// stage, its TP collectives; per replica and stage boundary, the P2P send; and the DP
/// all-reduce. Missing entries are 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommFactors {
    /// TP collective multiplier per replica, per stage.
    pub tp: Vec<Vec<f64>>,
    /// P2P multiplier per replica, between stage s and s + 1.
    pub p2p: Vec<Vec<f64>>,
    /// DP all-reduce multiplier (0 = healthy, as 1).
    pub dp: f64,
}

impl CommFactors {
    fn get(v: &[Vec<f64>], r: usize, s: usize) -> f64 {
        v.get(r).and_then(|x| x.get(s)).copied().unwrap_or(1.0)
    }
}

/// What one iteration took.
#[derive(Clone, Debug, Default)]
pub struct IterationTiming {
    /// Iteration time (slowest replica's pipeline + DP all-reduce), ns.
    pub total_ns: u64,
    /// Pipeline time per replica, ns.
    pub replica_ns: Vec<u64>,
}

impl PlanEval {
    /// Precomputes the plan's orders and communication times.
    #[must_use]
    pub fn new(job: &Job, plan: Plan) -> PlanEval {
        let mut orders = Vec::new();
        let mut tp_comm_ns = Vec::new();
        let mut p2p_ns = Vec::new();
        let mut max_grad_bytes = 0.0_f64;
        for r in &plan.replicas {
            let p = r.stages.len() as u32;
            orders.push(one_f_one_b_orders(p, r.micro_batches));
            tp_comm_ns.push(
                r.stages
                    .iter()
                    .map(|s| job.tp_comm_ns_per_layer(&s.gpus) * f64::from(s.layers))
                    .collect(),
            );
            p2p_ns.push(
                r.stages
                    .windows(2)
                    .map(|w| nanos_from_f64(job.p2p_ns(w[0].gpus[0], w[1].gpus[0])).0)
                    .collect(),
            );
            for s in &r.stages {
                let bytes = job.grad_bytes_per_layer * f64::from(s.layers) / s.gpus.len() as f64;
                max_grad_bytes = max_grad_bytes.max(bytes);
            }
        }
        let dp = plan.replicas.len() as u32;
        let dp_sync_ns = nanos_from_f64(job.cost.collective_ns(
            CollectiveKind::AllReduce,
            max_grad_bytes,
            Group::new(dp, 1),
        ))
        .0;
        PlanEval {
            plan,
            orders,
            tp_comm_ns,
            p2p_ns,
            dp_sync_ns,
        }
    }

    /// Runs one iteration. `stage_factor[r][s]` is the compute-time multiplier of replica r's
    /// stage s (its TP group's slowest member), `comm` the communication multipliers;
    /// `alpha_ns`/`beta_ns` the per-layer, one-GPU coefficients. Micro-batches are dealt to
    /// replicas in order of the plan's shares.
    ///
    /// A stage that also runs `extra` rerouted micro-batches (ReCycle) does them in its idle
    /// time: the replica takes max(critical path, the stage's busy time + extra × its mean
    /// micro-batch time); ReCycle's decoupled backward and staggered optimizer (§4) are what
    /// lets the extra work fill the bubbles, and where the bubbles are too short the iteration
    /// grows.
    ///
    /// # Errors
    /// [`ScenarioError::Run`] if the 1F1B orders deadlock (a bug, never user input).
    pub fn iteration(
        &self,
        mbs: &[MicroBatch],
        alpha_ns: f64,
        beta_ns: f64,
        stage_factor: &[Vec<f64>],
        comm: &CommFactors,
    ) -> Result<IterationTiming, ScenarioError> {
        let dealt = self.dealt(mbs);
        let mut replica_ns = Vec::with_capacity(self.plan.replicas.len());
        for (ri, (r, batch)) in self.plan.replicas.iter().zip(&dealt).enumerate() {
            let m = r.micro_batches as usize;
            let p = r.stages.len();
            // Forward and backward durations per (stage, micro-batch), rounded once to ns.
            let mut fwd = vec![vec![0u64; m]; p];
            let mut bwd = vec![vec![0u64; m]; p];
            for j in 0..m {
                let mb = batch.get(j).copied().unwrap_or(MicroBatch {
                    tokens: 0,
                    sum_sq: 0.0,
                });
                let work = alpha_ns * mb.tokens as f64 + beta_ns * mb.sum_sq;
                for (s, st) in r.stages.iter().enumerate() {
                    let t = st.gpus.len().max(1) as f64;
                    let factor = stage_factor
                        .get(ri)
                        .and_then(|v| v.get(s))
                        .copied()
                        .unwrap_or(1.0);
                    let total = (work * f64::from(st.layers) / t) * factor
                        + self.tp_comm_ns[ri][s] * CommFactors::get(&comm.tp, ri, s);
                    fwd[s][j] = nanos_from_f64(total / 3.0).0;
                    bwd[s][j] = nanos_from_f64(total * 2.0 / 3.0).0;
                }
            }
            let p2p: Vec<u64> = self.p2p_ns[ri]
                .iter()
                .enumerate()
                .map(|(s, &ns)| nanos_from_f64(ns as f64 * CommFactors::get(&comm.p2p, ri, s)).0)
                .collect();
            let mut ns = critical_path(&self.orders[ri], &fwd, &bwd, &p2p)?;
            for (s, &e) in r.extra.iter().enumerate() {
                if e == 0 || m == 0 || s >= p {
                    continue;
                }
                let busy: u64 = (0..m).map(|j| fwd[s][j] + bwd[s][j]).sum();
                ns = ns.max(busy + busy / m as u64 * u64::from(e));
            }
            replica_ns.push(ns);
        }
        let slowest = replica_ns.iter().copied().max().unwrap_or(0);
        let dp = if comm.dp > 0.0 { comm.dp } else { 1.0 };
        Ok(IterationTiming {
            total_ns: slowest + nanos_from_f64(self.dp_sync_ns as f64 * dp).0,
            replica_ns,
        })
    }

    /// Each GPU's compute-kernel time in one iteration, ns (what CUDA events around its forward
    /// and backward kernels read): its replica's micro-batches (and a stage's rerouted extra
    /// ones) × its stage's layers / TP degree × `factor(g)`. 0 for a GPU the plan leaves idle.
    #[must_use]
    pub fn kernel_ns(
        &self,
        mbs: &[MicroBatch],
        alpha_ns: f64,
        beta_ns: f64,
        gpus: u32,
        factor: impl Fn(u32) -> f64,
    ) -> Vec<u64> {
        let mut out = vec![0u64; gpus as usize];
        let work = self.replica_work(mbs, alpha_ns, beta_ns);
        for (r, work) in self.plan.replicas.iter().zip(work) {
            let per_mb = work / f64::from(r.micro_batches.max(1));
            for (s, st) in r.stages.iter().enumerate() {
                let extra = f64::from(r.extra.get(s).copied().unwrap_or(0));
                let t = st.gpus.len().max(1) as f64;
                let stage = (work + extra * per_mb) * f64::from(st.layers) / t;
                for &g in &st.gpus {
                    if let Some(x) = out.get_mut(g as usize) {
                        *x = nanos_from_f64(stage * factor(g)).0;
                    }
                }
            }
        }
        out
    }

    /// Per replica, Σ (α·N + β·Σl²) over the micro-batches dealt to it, ns per layer on one GPU.
    #[must_use]
    pub fn replica_work(&self, mbs: &[MicroBatch], alpha_ns: f64, beta_ns: f64) -> Vec<f64> {
        self.dealt(mbs)
            .iter()
            .map(|b| {
                b.iter()
                    .map(|mb| alpha_ns * mb.tokens as f64 + beta_ns * mb.sum_sq)
                    .sum()
            })
            .collect()
    }

    /// The micro-batches each replica gets, in plan order (dealt in order of the shares).
    #[must_use]
    pub fn dealt<'a>(&self, mbs: &'a [MicroBatch]) -> Vec<&'a [MicroBatch]> {
        let mut next = 0usize;
        self.plan
            .replicas
            .iter()
            .map(|r| {
                let from = next.min(mbs.len());
                next += r.micro_batches as usize;
                &mbs[from..next.min(mbs.len())]
            })
            .collect()
    }
}

/// Critical path of one replica's 1F1B orders with per-op durations: every op starts when its
/// device is free and its input arrived (forward from the previous stage, backward from the next,
/// each after a P2P). Evaluated in passes over the devices (a list-scheduling of the fixed
/// orders, the same timing the engine gives without resource contention: the test
/// `the_critical_path_is_the_engines_timing` runs both; the engine itself, per iteration, would
/// make the lab three times slower).
fn critical_path(
    orders: &[Vec<crate::labs::pipeline::Op>],
    fwd: &[Vec<u64>],
    bwd: &[Vec<u64>],
    p2p: &[u64],
) -> Result<u64, ScenarioError> {
    const NOT_DONE: u64 = u64::MAX;
    let p = orders.len();
    let m = fwd.first().map_or(0, Vec::len);
    let mut f_end = vec![vec![NOT_DONE; m]; p];
    let mut b_end = vec![vec![NOT_DONE; m]; p];
    let mut pos = vec![0usize; p];
    let mut free = vec![0u64; p];
    let total: usize = orders.iter().map(Vec::len).sum();
    let mut done = 0usize;
    while done < total {
        let mut progressed = false;
        for d in 0..p {
            while let Some(op) = orders[d].get(pos[d]) {
                let j = op.mb as usize;
                let ready = match op.kind {
                    OpKind::Forward => {
                        if d == 0 {
                            Some(0)
                        } else if f_end[d - 1][j] == NOT_DONE {
                            None
                        } else {
                            Some(f_end[d - 1][j] + p2p[d - 1])
                        }
                    }
                    _ => {
                        if d + 1 == p {
                            (f_end[d][j] != NOT_DONE).then_some(f_end[d][j])
                        } else if b_end[d + 1][j] == NOT_DONE {
                            None
                        } else {
                            Some(b_end[d + 1][j] + p2p[d])
                        }
                    }
                };
                let Some(ready) = ready else { break };
                let start = ready.max(free[d]);
                let end = start
                    + if op.kind == OpKind::Forward {
                        fwd[d][j]
                    } else {
                        bwd[d][j]
                    };
                if op.kind == OpKind::Forward {
                    f_end[d][j] = end;
                } else {
                    b_end[d][j] = end;
                }
                free[d] = end;
                pos[d] += 1;
                done += 1;
                progressed = true;
            }
        }
        if !progressed {
            return Err(ScenarioError::Run(
                "resilience: the 1F1B orders deadlocked".into(),
            ));
        }
    }
    Ok(free.iter().copied().max().unwrap_or(0))
}

/// The packed micro-batches of every iteration: `iterations` × `per_iteration`, drawn from the
/// log-normal length distribution with `rand_pcg::Pcg64Mcg` seeded by `lengths.seed`
/// (ln l = ln median + σ z, z by Box–Muller; l clamped to 1..=max; each micro-batch filled to
/// capacity, the last sequence cut).
#[must_use]
pub fn draw_micro_batches(p: &ResilienceParams, iterations: u32) -> Vec<Vec<MicroBatch>> {
    let l = &p.lengths;
    let per_iteration = (p.cluster.dp * p.cluster.micro_batches) as usize;
    let mut rng = Pcg64Mcg::seed_from_u64(l.seed);
    let capacity = u64::from(l.tokens_per_micro_batch);
    let ln_median = libm::log(l.median_tokens);
    let max = f64::from(l.max_tokens);
    (0..iterations)
        .map(|_| {
            (0..per_iteration)
                .map(|_| {
                    let mut tokens = 0u64;
                    let mut sum_sq = 0.0;
                    while tokens < capacity {
                        let z = crate::units::standard_normal(&mut rng);
                        let len =
                            libm::round(libm::exp(ln_median + l.sigma * z)).clamp(1.0, max) as u64;
                        let len = len.min(capacity - tokens);
                        tokens += len;
                        sum_sq += (len as f64) * (len as f64);
                    }
                    MicroBatch { tokens, sum_sq }
                })
                .collect()
        })
        .collect()
}

/// Deterministic per-(iteration, GPU) timing jitter factor exp(σ·z), z standard normal from a
/// SplitMix64 hash of (seed, iteration, GPU), so every strategy sees the same jitter.
#[must_use]
pub fn jitter(seed: u64, iteration: u32, gpu: u32, sigma: f64) -> f64 {
    if sigma == 0.0 {
        return 1.0;
    }
    let key = seed ^ (u64::from(iteration) << 32) ^ u64::from(gpu);
    let a = splitmix64(key);
    let b = splitmix64(a);
    let u1 = (a >> 11) as f64 / (1u64 << 53) as f64;
    let u2 = (b >> 11) as f64 / (1u64 << 53) as f64;
    libm::exp(sigma * crate::units::box_muller(u1, u2))
}

/// A deterministic uniform in [0, 1) from a SplitMix64 hash of (seed, iteration, key).
#[must_use]
pub fn unit(seed: u64, iteration: u32, key: u32) -> f64 {
    let a = splitmix64(seed ^ (u64::from(iteration) << 32) ^ u64::from(key));
    (a >> 11) as f64 / (1u64 << 53) as f64
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{simulate, Dep, Discipline, Resource, Task, TaskGraph};
    use crate::labs::pipeline::Op;

    /// The same iteration as an engine task graph: each stage a resource in its program order, a
    /// forward after the previous stage's forward plus that link's P2P, a backward after the next
    /// stage's backward plus the P2P (the last stage's after its own forward).
    fn on_the_engine(orders: &[Vec<Op>], fwd: &[Vec<u64>], bwd: &[Vec<u64>], p2p: &[u64]) -> u64 {
        let (p, m) = (orders.len(), fwd[0].len());
        let id = |d: usize, j: usize, forward: bool| d * 2 * m + j + if forward { 0 } else { m };
        let mut tasks = Vec::new();
        for d in 0..p {
            for forward in [true, false] {
                for j in 0..m {
                    let deps = match (forward, d) {
                        (true, 0) => Vec::new(),
                        (true, _) => vec![Dep { task: id(d - 1, j, true), delay_ns: p2p[d - 1] }],
                        (false, _) if d + 1 == p => vec![Dep { task: id(d, j, true), delay_ns: 0 }],
                        (false, _) => vec![Dep { task: id(d + 1, j, false), delay_ns: p2p[d] }],
                    };
                    let duration_ns = if forward { fwd[d][j] } else { bwd[d][j] };
                    tasks.push(Task { resource: d, duration_ns, deps });
                }
            }
        }
        let resources = orders
            .iter()
            .enumerate()
            .map(|(d, order)| Resource {
                name: alloc::format!("stage {d}"),
                discipline: Discipline::InOrder(
                    order
                        .iter()
                        .map(|op| id(d, op.mb as usize, op.kind == OpKind::Forward))
                        .collect(),
                ),
            })
            .collect();
        simulate(&TaskGraph { resources, tasks }).unwrap().makespan.0
    }

    #[test]
    fn the_critical_path_is_the_engines_timing() {
        let mut x = 7u64;
        let mut draw = |most: u64| {
            x = splitmix64(x);
            x % most
        };
        for p in 1u32..6 {
            for m in 1u32..10 {
                for _ in 0..4 {
                    let orders = one_f_one_b_orders(p, m);
                    let (p, m) = (p as usize, m as usize);
                    let mut times = |most: u64| -> Vec<Vec<u64>> {
                        (0..p).map(|_| (0..m).map(|_| 1 + draw(most)).collect()).collect()
                    };
                    let fwd = times(1_000);
                    let bwd = times(2_000);
                    let p2p: Vec<u64> = (0..p).map(|_| draw(300)).collect();
                    assert_eq!(
                        critical_path(&orders, &fwd, &bwd, &p2p).unwrap(),
                        on_the_engine(&orders, &fwd, &bwd, &p2p),
                        "p = {p}, m = {m}"
                    );
                }
            }
        }
    }
}
