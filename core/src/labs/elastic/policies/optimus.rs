//! Optimus+Oracle as the Pollux artifact runs it (`simulator/optimus.py`): each job keeps the
//! total batch size a user tuned; the policy gives every job one GPU in order while GPUs last,
//! then adds GPUs one at a time to the job whose remaining time falls most — (T(r) − T(r+1)) ×
//! its remaining optimiser steps, both known exactly (the oracle) — up to ⌊B / min b⌋ GPUs
//! (NCF: 1). T(r) is the step time on r GPUs packed onto nodes (on one GPU with at least one
//! accumulation step). Jobs whose GPU count is unchanged keep their GPUs; the others, fewest
//! GPUs first, take GPUs from the node with most free.

use alloc::vec::Vec;

use super::most_free_fill;
use crate::labs::elastic::sim::{Job, Round, Scheduler};

/// The policy (no memory across rounds).
#[derive(Clone, Debug, Default)]
pub struct Optimus;

/// Step time of `job` on `r` GPUs packed `gpn` per node (`predict_step_time`, l. 66–79).
fn predict_step_time_s(job: &Job, r: u32, gpn: u32) -> f64 {
    let app = job.app;
    let batch = job.target_batch.unwrap_or(app.init_batch_size);
    let nodes = r.div_ceil(gpn);
    let local = libm::ceil(f64::from(batch) / f64::from(r) - 1e-8);
    let mut s = libm::ceil(local / f64::from(app.max_local_bsz) - 1e-8) - 1.0;
    if r == 1 {
        s = s.max(1.0);
    }
    let s = s.max(0.0);
    let b = libm::ceil(local / (s + 1.0) - 1e-8) as u32;
    let b = app.clamp_atomic(b, r, s as u32);
    app.perf.iteration_time_s(nodes, r, f64::from(b), s as u32)
}

/// GPUs Optimus may give `job`: ⌊B / min b⌋, NCF 1 (`get_optimus_job_info`).
fn max_replicas(job: &Job) -> u32 {
    if job.app.name == "ncf" {
        return 1;
    }
    job.target_batch.unwrap_or(job.app.init_batch_size) / job.app.min_local_bsz
}

impl Scheduler for Optimus {
    fn optimize(&mut self, round: &Round<'_>, prev: &[Vec<u32>]) -> Vec<Vec<u32>> {
        let gpn = round.gpus_per_node;
        let jobs: Vec<&Job> = round.active.iter().map(|&j| &round.jobs[j]).collect();
        // Remaining optimiser steps at the tuned batch size (the oracle).
        let remaining: Vec<f64> = jobs
            .iter()
            .map(|job| {
                let app = job.app;
                let done = app.max_epochs - 1;
                if done <= job.epoch {
                    1.0
                } else {
                    let b = f64::from(job.target_batch.unwrap_or(app.init_batch_size));
                    app.iterations(b, done) - app.iterations(b, job.epoch)
                }
            })
            .collect();
        let gain = |k: usize, r: u32, left: u32| -> f64 {
            if r + 1 > max_replicas(jobs[k]) || left < 1 {
                0.0
            } else {
                (predict_step_time_s(jobs[k], r, gpn) - predict_step_time_s(jobs[k], r + 1, gpn))
                    * remaining[k]
            }
        };
        let mut left = round.nodes * gpn;
        let mut replicas = vec_of(jobs.len(), 0u32);
        let mut gains = vec_of(jobs.len(), 0.0f64);
        for k in 0..jobs.len() {
            if left < 1 {
                continue;
            }
            replicas[k] = 1;
            left -= 1;
            gains[k] = gain(k, 1, left);
        }
        while left > 0 {
            let mut best: Option<usize> = None;
            for k in 0..jobs.len() {
                if gains[k] > 0.0 && best.is_none_or(|b| gains[k] > gains[b]) {
                    best = Some(k);
                }
            }
            let Some(k) = best else { break };
            replicas[k] += 1;
            // The artifact checks the GPUs left before taking this one.
            gains[k] = gain(k, replicas[k], left);
            left -= 1;
        }
        let mut allocs: Vec<Vec<u32>> = prev
            .iter()
            .zip(&replicas)
            .map(|(a, &r)| {
                if a.len() == r as usize {
                    a.clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&k| replicas[k]);
        let wants: Vec<(usize, u32)> = order
            .into_iter()
            .filter(|&k| replicas[k] > 0)
            .map(|k| (k, replicas[k]))
            .collect();
        most_free_fill(round, &mut allocs, &wants);
        allocs
    }
}

fn vec_of<T: Clone>(n: usize, v: T) -> Vec<T> {
    alloc::vec![v; n]
}
