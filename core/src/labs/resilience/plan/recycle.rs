//! ReCycle-like recovery (Gandhi et al., "ReCycle: Resilient Training of Large DNNs using
//! Pipeline Adaptation", SOSP 2024, §3–4): fail-stop only. Replicas of one stage hold the same
//! parameters, so when a stage's TP group loses a GPU its micro-batches are rerouted to the same
//! stage of the other replicas (adaptive pipelining) and run in their pipeline bubbles, made
//! usable by the decoupled backward pass and the staggered optimizer; the failed replica's
//! other stages keep running their own micro-batches. This lasts until the next restart (none
//! within the horizon here). Nothing is moved, so only the reconfiguration pause is charged.
//!
//! The rerouted micro-batches of stage s are dealt equally over the replicas whose stage s runs
//! (largest remainder); [`super::super::job::PlanEval::iteration`] fits them into each stage's
//! idle time. Differences from the paper: ReCycle's planner places the extra work with an MILP
//! schedule that respects dependencies; here any idle time of the stage counts (optimistic), and
//! the failed replica's surviving stages are not timed (they run no more than a healthy
//! replica's stages).

use alloc::vec;
use alloc::vec::Vec;

use super::super::job::Plan;
use super::{equal_shares, Health};

/// The rerouted plan for the dead GPUs in `known`, built from `base` (the layout ReCycle runs,
/// with every replica having the same stages); `None` if some stage has no running replica
/// left (then only a restart helps).
#[must_use]
pub fn recycle(base: &Plan, known: &Health) -> Option<Plan> {
    let alive = |g: &u32| known.alive.get(*g as usize).copied().unwrap_or(false);
    let stages = base.replicas.first()?.stages.len();
    if base.replicas.iter().any(|r| r.stages.len() != stages) {
        return None;
    }
    // failed[r][s]: replica r's stage s lost a GPU.
    let failed: Vec<Vec<bool>> = base
        .replicas
        .iter()
        .map(|r| r.stages.iter().map(|s| !s.gpus.iter().all(alive)).collect())
        .collect();
    let intact: Vec<usize> = (0..base.replicas.len())
        .filter(|&r| failed[r].iter().all(|f| !f))
        .collect();
    if intact.is_empty() {
        return None;
    }
    let mut extra = vec![vec![0u32; stages]; intact.len()];
    for s in 0..stages {
        let rerouted: u32 = base
            .replicas
            .iter()
            .zip(&failed)
            .filter(|(_, f)| f[s])
            .map(|(r, _)| r.micro_batches)
            .sum();
        for (i, share) in equal_shares(intact.len(), rerouted).into_iter().enumerate() {
            extra[i][s] = share;
        }
    }
    let mut standby = Vec::new();
    for (r, f) in base.replicas.iter().zip(&failed) {
        if f.iter().any(|x| *x) {
            for (st, dead) in r.stages.iter().zip(f) {
                if !dead {
                    standby.extend(st.gpus.iter().copied());
                }
            }
        }
    }
    let replicas = intact
        .iter()
        .zip(extra)
        .map(|(&r, e)| {
            let mut rp = base.replicas[r].clone();
            rp.extra = e;
            rp
        })
        .collect();
    Some(Plan { replicas, standby })
}
