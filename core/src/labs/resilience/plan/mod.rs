//! Re-planning after a failure: ResiHP's joint TP/PP/DP re-plan and the baselines (do nothing,
//! checkpoint restart on the healthy GPUs, Oobleck's pipeline templates, ReCycle's rerouting,
//! Greyhound's micro-batch and pipeline adjustments). One file per strategy; the shared pieces
//! (health, min-max layer partition, proportional shares, the resharding cost) live here.

pub mod greyhound;
mod nothing;
mod oobleck;
mod recycle;
mod resihp;
mod restart;

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

pub use nothing::nothing;
pub use oobleck::oobleck;
pub use recycle::recycle;
pub use resihp::resihp;
pub use restart::restart;

use super::job::{CommFactors, Job, MicroBatch, Plan, PlanEval, ReplicaPlan};

/// What a strategy knows (or the truth) about every GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    /// Compute-time multiplier per GPU (1 = healthy).
    pub slowdown: Vec<f64>,
    /// Whether each GPU runs.
    pub alive: Vec<bool>,
    /// Time multiplier of each GPU's NVLink port (1 = healthy).
    pub nvlink: Vec<f64>,
    /// Time multiplier of each GPU's InfiniBand NIC (1 = healthy).
    pub nic: Vec<f64>,
}

impl Health {
    /// Every GPU healthy.
    #[must_use]
    pub fn healthy(gpus: u32) -> Health {
        Health {
            slowdown: vec![1.0; gpus as usize],
            alive: vec![true; gpus as usize],
            nvlink: vec![1.0; gpus as usize],
            nic: vec![1.0; gpus as usize],
        }
    }

    fn link(v: &[f64], g: u32) -> f64 {
        v.get(g as usize).copied().unwrap_or(1.0)
    }

    /// Communication multipliers of `plan`: a TP group inside one node goes at its slowest
    /// member's NVLink, one across nodes at the slowest NVLink or NIC of its members; a P2P send
    /// at the slower end's NVLink (same node) or NIC; the DP all-reduce (one rank per node over
    /// InfiniBand) at the slowest NIC of the plan's GPUs.
    #[must_use]
    pub fn comm_factors(&self, job: &Job, plan: &Plan) -> CommFactors {
        let mut out = CommFactors {
            tp: Vec::new(),
            p2p: Vec::new(),
            dp: 1.0,
        };
        for r in &plan.replicas {
            out.tp.push(
                r.stages
                    .iter()
                    .map(|s| {
                        let one_node = s
                            .gpus
                            .iter()
                            .all(|&g| job.node_of(g) == job.node_of(s.gpus[0]));
                        s.gpus
                            .iter()
                            .map(|&g| {
                                let nv = Self::link(&self.nvlink, g);
                                if one_node {
                                    nv
                                } else {
                                    nv.max(Self::link(&self.nic, g))
                                }
                            })
                            .fold(1.0, f64::max)
                    })
                    .collect(),
            );
            out.p2p.push(
                r.stages
                    .windows(2)
                    .map(|w| {
                        let (a, b) = (w[0].gpus[0], w[1].gpus[0]);
                        let v = if job.node_of(a) == job.node_of(b) {
                            &self.nvlink
                        } else {
                            &self.nic
                        };
                        Self::link(v, a).max(Self::link(v, b))
                    })
                    .collect(),
            );
        }
        if plan.replicas.len() > 1 {
            out.dp = plan
                .used_gpus()
                .iter()
                .map(|&g| Self::link(&self.nic, g))
                .fold(1.0, f64::max);
        }
        out
    }

    /// Whether GPU `g` is alive and at full speed.
    #[must_use]
    pub fn is_healthy(&self, g: u32) -> bool {
        self.alive.get(g as usize).copied().unwrap_or(false)
            && self.slowdown.get(g as usize).copied().unwrap_or(1.0) <= 1.0
    }

    /// Slowdown of GPU `g` (∞ when dead).
    #[must_use]
    pub fn factor(&self, g: u32) -> f64 {
        if self.alive.get(g as usize).copied().unwrap_or(false) {
            self.slowdown.get(g as usize).copied().unwrap_or(1.0)
        } else {
            f64::INFINITY
        }
    }

    /// Per-stage time multipliers of `plan` (the slowest member of each TP group).
    #[must_use]
    pub fn stage_factors(&self, plan: &Plan) -> Vec<Vec<f64>> {
        plan.replicas
            .iter()
            .map(|r| {
                r.stages
                    .iter()
                    .map(|s| s.gpus.iter().map(|&g| self.factor(g)).fold(1.0, f64::max))
                    .collect()
            })
            .collect()
    }
}

crate::kinds! {
    /// The strategies compared. Each uses only its own detection: heartbeats for fail-stops
    /// (everyone), ResiHP's FLOPs-aware detector for ResiHP, its artifact's change-point detection plus micro-benchmarks for
    /// Greyhound; the others see no fail-slow at all.
    pub enum StrategyKind as "strategy" {
        /// Do nothing about a fail-slow (the slow device dictates); a fail-stop is handled by a
        /// checkpoint restart, since the job cannot run on without the GPU.
        Nothing = "nothing", "Do nothing";
        /// Checkpoint restart (fail-stop only, found by heartbeat): relaunch from the last
        /// checkpoint on the healthy GPUs with the same TP × PP layout and fewer replicas.
        Restart = "restart", "Checkpoint restart (fail-stop only)";
        /// Oobleck-like (fail-stop only): the node that lost a GPU leaves; each affected pipeline is
        /// re-instantiated from the template for its surviving nodes; the batch is shared by
        /// pipeline throughput.
        Oobleck = "oobleck", "Oobleck-like templates (fail-stop only)";
        /// ReCycle-like (fail-stop only): the failed stage's micro-batches are rerouted to the same
        /// stage of the other replicas, in their pipeline bubbles, until the next restart.
        Recycle = "recycle", "ReCycle-like rerouting (fail-stop only)";
        /// Greyhound-like: its artifact's change-point detection on iteration times, verification by micro-benchmarks (a cost per
        /// alarm), then S2 micro-batch redistribution across DP replicas (computation), S3
        /// pipeline re-split (communication) and S4 checkpoint restart without the slow GPUs, each
        /// once the time lost since the onset exceeds its cost (ski rental).
        Greyhound = "greyhound", "Greyhound-like (change points + benchmarks, S1-S4)";
        /// ResiHP: regroup TP, repartition PP layers and share DP micro-batches by speed, when the
        /// gain over the remaining horizon beats the resharding cost.
        Resihp = "resihp", "ResiHP re-plan";
    }
}

impl StrategyKind {
    /// Whether the strategy reacts to fail-slows at all.
    #[must_use]
    pub fn handles_fail_slow(self) -> bool {
        matches!(self, StrategyKind::Greyhound | StrategyKind::Resihp)
    }
}

/// Min-max partition of `layers` contiguous layers over stages in order: stage s costs
/// `cost[s]` per layer and holds 1..=`cap[s]` layers; minimises the largest stage time
/// n_s·cost[s] by dynamic programming over (stage, layers placed). `None` if the caps cannot
/// hold every layer with at least one per stage.
#[must_use]
pub fn min_max_partition(cost: &[f64], cap: &[u32], layers: u32) -> Option<Vec<u32>> {
    let p = cost.len();
    if p == 0 || cap.len() != p || (layers as usize) < p {
        return None;
    }
    let l = layers as usize;
    // best[s][k]: least bottleneck placing k layers on stages 0..=s; choice[s][k]: layers of s.
    let mut best = vec![vec![f64::INFINITY; l + 1]; p];
    let mut choice = vec![vec![0usize; l + 1]; p];
    for k in 1..=l.min(cap[0] as usize) {
        best[0][k] = k as f64 * cost[0];
        choice[0][k] = k;
    }
    for s in 1..p {
        for k in (s + 1)..=l {
            for n in 1..=(k - s).min(cap[s] as usize) {
                let prev = best[s - 1][k - n];
                if !prev.is_finite() {
                    continue;
                }
                let v = prev.max(n as f64 * cost[s]);
                if v < best[s][k] {
                    best[s][k] = v;
                    choice[s][k] = n;
                }
            }
        }
    }
    if !best[p - 1][l].is_finite() {
        return None;
    }
    let mut out = vec![0u32; p];
    let mut k = l;
    for s in (0..p).rev() {
        let n = choice[s][k];
        out[s] = n as u32;
        k -= n;
    }
    Some(out)
}

/// A plan of `replicas` (no standby) sharing `total` micro-batches in proportion to their
/// `speeds`; replicas given none are left out; `None` without replicas.
#[must_use]
pub fn plan_with_shares(
    mut replicas: Vec<ReplicaPlan>,
    speeds: &[f64],
    total: u32,
) -> Option<Plan> {
    if replicas.is_empty() {
        return None;
    }
    for (r, share) in replicas.iter_mut().zip(proportional_shares(speeds, total)) {
        r.micro_batches = share;
    }
    replicas.retain(|r| r.micro_batches > 0);
    Some(Plan {
        replicas,
        standby: Vec::new(),
    })
}

/// Splits `total` micro-batches over replicas in proportion to `speeds` (largest remainder:
/// each share is ⌊total·vᵢ/Σv⌋ or one more; ties to the lower index).
#[must_use]
pub fn proportional_shares(speeds: &[f64], total: u32) -> Vec<u32> {
    let sum: f64 = speeds.iter().filter(|v| v.is_finite() && **v > 0.0).sum();
    if speeds.is_empty() || sum <= 0.0 {
        return vec![0; speeds.len()];
    }
    let ideal: Vec<f64> = speeds
        .iter()
        .map(|&v| {
            if v.is_finite() && v > 0.0 {
                f64::from(total) * v / sum
            } else {
                0.0
            }
        })
        .collect();
    let mut shares: Vec<u32> = ideal.iter().map(|&x| libm::floor(x) as u32).collect();
    let mut left = total.saturating_sub(shares.iter().sum());
    let mut order: Vec<usize> = (0..speeds.len()).collect();
    order.sort_by(|&a, &b| {
        let ra = ideal[a] - libm::floor(ideal[a]);
        let rb = ideal[b] - libm::floor(ideal[b]);
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for i in order {
        if left == 0 {
            break;
        }
        if ideal[i] > 0.0 {
            shares[i] += 1;
            left -= 1;
        }
    }
    shares
}

/// Bytes of training state every GPU must receive to go from `old` to `new`: a GPU that held
/// layer ℓ at the same TP degree and rank keeps it, anything else comes from a DP peer.
#[must_use]
pub fn reshard_bytes(job: &Job, old: &Plan, new: &Plan) -> BTreeMap<u32, f64> {
    let holdings = |plan: &Plan| {
        let mut h: BTreeMap<(u32, u32), (usize, usize)> = BTreeMap::new();
        for r in &plan.replicas {
            let mut first = 0u32;
            for s in &r.stages {
                for (rank, &g) in s.gpus.iter().enumerate() {
                    for layer in first..first + s.layers {
                        h.insert((g, layer), (s.gpus.len(), rank));
                    }
                }
                first += s.layers;
            }
        }
        h
    };
    let before = holdings(old);
    let after = holdings(new);
    let mut bytes: BTreeMap<u32, f64> = BTreeMap::new();
    for (&(g, layer), &(t, rank)) in &after {
        if before.get(&(g, layer)) != Some(&(t, rank)) {
            *bytes.entry(g).or_insert(0.0) += job.state_bytes_per_layer / t as f64;
        }
    }
    bytes
}

/// Time to reshard from `old` to `new`: the GPU receiving most bytes, over its InfiniBand NIC at
/// the link's point-to-point efficiency, ns; and the total bytes moved.
#[must_use]
pub fn reshard_cost(job: &Job, old: &Plan, new: &Plan) -> (f64, f64) {
    let bytes = reshard_bytes(job, old, new);
    let total: f64 = bytes.values().sum();
    let most = bytes.values().copied().fold(0.0, f64::max);
    let link = &job.cost.topology.inter;
    (most / (link.bytes_per_s * link.p2p_efficiency) * 1e9, total)
}

/// Predicted iteration time of `plan` under `health` for micro-batches like `typical`, ns.
#[must_use]
pub fn predicted_ns(job: &Job, plan: &Plan, health: &Health, typical: MicroBatch) -> f64 {
    if plan.replicas.is_empty() {
        return f64::INFINITY;
    }
    let eval = PlanEval::new(job, plan.clone());
    let mbs = vec![typical; plan.total_micro_batches() as usize];
    let factors = health.stage_factors(plan);
    if factors.iter().flatten().any(|f| !f.is_finite()) {
        return f64::INFINITY;
    }
    let comm = health.comm_factors(job, plan);
    eval.iteration(&mbs, job.alpha_ns, job.beta_ns, &factors, &comm)
        .map_or(f64::INFINITY, |t| t.total_ns as f64)
}

/// Equal micro-batch shares of `total` over `n` replicas.
#[must_use]
pub fn equal_shares(n: usize, total: u32) -> Vec<u32> {
    proportional_shares(&vec![1.0; n], total)
}
