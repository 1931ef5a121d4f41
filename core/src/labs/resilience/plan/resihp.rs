//! ResiHP's joint re-plan. For each replica of the original layout:
//!
//! - TP: each stage's group is re-formed around its healthy devices: for every allowed degree t
//!   (a power of two dividing heads and hidden, at most the original) the t fastest alive
//!   members are candidates; the stage takes the degree with the least time per layer
//!   (compute / t at the slowest chosen member's pace, plus the TP all-reduces), among those
//!   whose memory holds at least one layer. A slow or dead member is thus left out by shrinking
//!   the degree rather than losing the whole group.
//! - PP: the layers are repartitioned by [`min_max_partition`] over the stages' per-layer times
//!   and memory caps (if the caps cannot hold the model, each stage falls back to its largest
//!   degree); a replica with a stage that has no alive GPU leaves.
//! - DP: the global batch's micro-batches are shared in proportion to each replica's speed,
//!   1 / its bottleneck stage time per micro-batch ([`super::proportional_shares`]).

use alloc::vec::Vec;

use super::super::job::{Job, MicroBatch, Plan, ReplicaPlan, StagePlan};
use super::{min_max_partition, plan_with_shares, Health};

/// A stage's TP option: (time per layer ns, layer cap, members).
type StageOption = (f64, u32, Vec<u32>);

/// The re-planned layout for `known` health; `None` if no replica can run.
#[must_use]
pub fn resihp(job: &Job, initial: &Plan, known: &Health, typical: MicroBatch) -> Option<Plan> {
    let total = initial.total_micro_batches();
    let work = job.alpha_ns * typical.tokens as f64 + job.beta_ns * typical.sum_sq;
    let degrees = job.tp_degrees();
    let mut replicas: Vec<ReplicaPlan> = Vec::new();
    let mut speeds: Vec<f64> = Vec::new();
    'replica: for r in &initial.replicas {
        // Per stage: options (time per layer ns, layer cap, members), best first.
        let mut options: Vec<Vec<StageOption>> = Vec::new();
        for s in &r.stages {
            let mut alive: Vec<u32> = s
                .gpus
                .iter()
                .copied()
                .filter(|&g| known.factor(g).is_finite())
                .collect();
            alive.sort_by(|&a, &b| known.factor(a).total_cmp(&known.factor(b)).then(a.cmp(&b)));
            let mut opts: Vec<StageOption> = degrees
                .iter()
                .filter(|&&t| t as usize <= alive.len())
                .filter_map(|&t| {
                    let members: Vec<u32> = alive[..t as usize].to_vec();
                    let slowest = members.iter().map(|&g| known.factor(g)).fold(1.0, f64::max);
                    let per_layer =
                        work / f64::from(t) * slowest + job.tp_comm_ns_per_layer(&members);
                    let cap = job.layer_cap(t);
                    (cap >= 1).then_some((per_layer, cap, members))
                })
                .collect();
            if opts.is_empty() {
                continue 'replica;
            }
            opts.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.2.len().cmp(&a.2.len())));
            options.push(opts);
        }
        let pick = |choose: &dyn Fn(&Vec<StageOption>) -> usize| -> Vec<usize> {
            options.iter().map(choose).collect()
        };
        let fastest = pick(&|_| 0);
        let roomiest = pick(&|o| {
            (0..o.len())
                .max_by(|&a, &b| o[a].1.cmp(&o[b].1).then(b.cmp(&a)))
                .unwrap_or(0)
        });
        let mut chosen = None;
        for choice in [fastest, roomiest] {
            let cost: Vec<f64> = choice.iter().zip(&options).map(|(&i, o)| o[i].0).collect();
            let cap: Vec<u32> = choice.iter().zip(&options).map(|(&i, o)| o[i].1).collect();
            if let Some(parts) = min_max_partition(&cost, &cap, job.layers) {
                chosen = Some((choice, parts, cost));
                break;
            }
        }
        let Some((choice, parts, cost)) = chosen else {
            continue;
        };
        let bottleneck = parts
            .iter()
            .zip(&cost)
            .map(|(&n, &c)| f64::from(n) * c)
            .fold(0.0, f64::max);
        replicas.push(ReplicaPlan {
            id: r.id,
            stages: choice
                .iter()
                .zip(&options)
                .zip(&parts)
                .map(|((&i, o), &n)| StagePlan {
                    gpus: o[i].2.clone(),
                    layers: n,
                })
                .collect(),
            micro_batches: 0,
            extra: Vec::new(),
        });
        speeds.push(if bottleneck > 0.0 {
            1.0 / bottleneck
        } else {
            0.0
        });
    }
    plan_with_shares(replicas, &speeds, total)
}
