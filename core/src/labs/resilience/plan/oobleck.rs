//! Oobleck-like recovery (Jang et al., "Oobleck: Resilient Distributed Training of Large Models
//! Using Pipeline Templates", SOSP 2023, §3–5): fail-stop only. Oobleck's unit is the node: a
//! node that lost a GPU leaves. Every pipeline that lost stages is re-instantiated from the
//! pipeline template for the nodes it still has (a template fixes the stage count and a
//! balanced layer split; here the min-max split of [`min_max_partition`] over the surviving TP
//! groups at healthy speed, within each group's memory); the lost layers are copied from the
//! other replicas (charged as resharding by the simulation). The global batch is then shared
//! by pipeline throughput (§5, batch distribution): ∝ 1 / the pipeline's bottleneck stage time
//! at healthy speed, since Oobleck has no fail-slow information.
//!
//! Differences from the paper: Oobleck borrows nodes from, or merges, pipelines that fall below
//! the smallest template; here such a pipeline leaves and its surviving nodes idle (the artifact
//! does not implement merging either: SymbioticLab/Oobleck issue 23).

use alloc::vec::Vec;

use super::super::job::{Job, Plan, ReplicaPlan, StagePlan};
use super::{min_max_partition, plan_with_shares, Health};

/// The re-instantiated plan after the dead GPUs in `known`; `None` if no pipeline is left.
#[must_use]
pub fn oobleck(job: &Job, current: &Plan, known: &Health) -> Option<Plan> {
    let node_ok = |g: u32| {
        let n = job.node_of(g);
        (n * job.gpus_per_node..(n + 1) * job.gpus_per_node)
            .all(|x| known.alive.get(x as usize).copied().unwrap_or(false))
    };
    let total = current.total_micro_batches();
    let mut replicas = Vec::new();
    let mut speeds = Vec::new();
    for r in &current.replicas {
        let groups: Vec<Vec<u32>> = r
            .stages
            .iter()
            .filter(|s| s.gpus.iter().all(|&g| node_ok(g)))
            .map(|s| s.gpus.clone())
            .collect();
        if groups.is_empty() {
            continue;
        }
        let keep = groups.len() == r.stages.len();
        let layers: Vec<u32> = if keep {
            r.stages.iter().map(|s| s.layers).collect()
        } else {
            let cost: Vec<f64> = groups.iter().map(|g| 1.0 / g.len() as f64).collect();
            let cap: Vec<u32> = groups
                .iter()
                .map(|g| job.layer_cap(g.len() as u32))
                .collect();
            match min_max_partition(&cost, &cap, job.layers) {
                Some(l) => l,
                None => continue,
            }
        };
        let bottleneck = groups
            .iter()
            .zip(&layers)
            .map(|(g, &n)| f64::from(n) / g.len() as f64)
            .fold(0.0, f64::max);
        speeds.push(if bottleneck > 0.0 {
            1.0 / bottleneck
        } else {
            0.0
        });
        replicas.push(ReplicaPlan {
            id: r.id,
            stages: groups
                .into_iter()
                .zip(layers)
                .map(|(gpus, layers)| StagePlan { gpus, layers })
                .collect(),
            micro_batches: 0,
            extra: Vec::new(),
        });
    }
    plan_with_shares(replicas, &speeds, total)
}
