//! Checkpoint restart on the healthy GPUs: the job is relaunched with the original TP × PP
//! layout on as many whole replicas as the healthy GPUs allow. TP groups are formed inside nodes
//! from healthy GPUs (nodes with fewer than tp healthy GPUs contribute none), stages from TP
//! groups in node order, replicas from pp consecutive groups; the global batch is shared equally.

use alloc::vec::Vec;

use super::super::job::{Job, Plan, ReplicaPlan, StagePlan};
use super::{equal_shares, Health};

/// The relaunched plan; `None` if not even one replica fits on the healthy GPUs.
#[must_use]
pub fn restart(job: &Job, initial: &Plan, known: &Health) -> Option<Plan> {
    let first = initial.replicas.first()?;
    let tp = first.stages.first()?.gpus.len() as u32;
    let layers: Vec<u32> = first.stages.iter().map(|s| s.layers).collect();
    let pp = layers.len();
    let total = initial.total_micro_batches();
    let nodes = job.gpus / job.gpus_per_node.max(1);
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for n in 0..nodes {
        let healthy: Vec<u32> = (n * job.gpus_per_node..(n + 1) * job.gpus_per_node)
            .filter(|&g| known.is_healthy(g))
            .collect();
        for chunk in healthy.chunks_exact(tp as usize) {
            groups.push(chunk.to_vec());
        }
    }
    let count = groups.len() / pp;
    if count == 0 {
        return None;
    }
    // Stage s of replica r takes group s·count + r (the original's DP-inner order keeps a
    // replica's stages on different nodes and one stage's replicas close together).
    let mut replicas: Vec<ReplicaPlan> = (0..count)
        .map(|r| ReplicaPlan {
            id: r as u32,
            stages: (0..pp)
                .map(|s| StagePlan {
                    gpus: groups[s * count + r].clone(),
                    layers: layers[s],
                })
                .collect(),
            micro_batches: 0,
            extra: Vec::new(),
        })
        .collect();
    for (r, share) in replicas.iter_mut().zip(equal_shares(count, total)) {
        r.micro_batches = share;
    }
    replicas.retain(|r| r.micro_batches > 0);
    Some(Plan {
        replicas,
        standby: Vec::new(),
    })
}
