//! Tiresias as the Pollux artifact runs it (`simulator/tiresias.py`): discretised two-queue
//! LAS on attained GPU time (threshold 16 GPU-hours: executed wall time × the job's GPUs), no
//! starvation handling (`_solve_starvation = 0`), each job on exactly the GPUs a user tuned it
//! for. New jobs join queue 0 at its end, demoted jobs queue 1 at its end; every round walks
//! queue 0 then queue 1 and runs each job whose GPUs still fit the count left (others wait and
//! lose their GPUs); a newly running job takes GPUs from the node with most free first (ties
//! to the lowest node), running jobs keep theirs.

use alloc::vec;
use alloc::vec::Vec;

use super::most_free_fill;
use crate::labs::elastic::sim::{Round, Scheduler, NS_PER_S};

/// Attained GPU-time at which a job drops to queue 1, GPU-s (`_queue_threshold`).
pub const QUEUE_THRESHOLD_GPU_S: u64 = 16 * 3600;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Unseen,
    Pending,
    Running,
}

/// The policy's memory across rounds, per job index.
#[derive(Clone, Debug, Default)]
pub struct Tiresias {
    queue0: Vec<usize>,
    queue1: Vec<usize>,
    status: Vec<Status>,
    last_check_s: Vec<u64>,
    executed_s: Vec<u64>,
}

impl Scheduler for Tiresias {
    fn optimize(&mut self, round: &Round<'_>, prev: &[Vec<u32>]) -> Vec<Vec<u32>> {
        let n_jobs = round.jobs.len();
        if self.status.len() != n_jobs {
            self.status = vec![Status::Unseen; n_jobs];
            self.last_check_s = vec![0; n_jobs];
            self.executed_s = vec![0; n_jobs];
        }
        let now = round.now_ns / NS_PER_S;
        let mut pos = vec![usize::MAX; n_jobs];
        for (k, &j) in round.active.iter().enumerate() {
            pos[j] = k;
        }
        // Completed jobs leave the queues.
        self.queue0.retain(|&j| pos[j] != usize::MAX);
        self.queue1.retain(|&j| pos[j] != usize::MAX);
        let mut allocs: Vec<Vec<u32>> = prev.to_vec();
        for &j in round.active {
            if self.status[j] == Status::Unseen {
                self.status[j] = Status::Pending;
                self.queue0.push(j);
            }
        }
        for &j in round.active {
            match self.status[j] {
                Status::Running => {
                    let dt = now - self.last_check_s[j];
                    self.executed_s[j] += dt;
                    self.last_check_s[j] = now;
                    let gpu_s = self.executed_s[j] * u64::from(round.jobs[j].tuned_replicas);
                    if gpu_s >= QUEUE_THRESHOLD_GPU_S {
                        if let Some(i) = self.queue0.iter().position(|&q| q == j) {
                            self.queue0.remove(i);
                            self.queue1.push(j);
                        }
                    }
                }
                Status::Pending => self.last_check_s[j] = now,
                Status::Unseen => {}
            }
        }
        let mut left = round.nodes * round.gpus_per_node;
        for &j in self.queue0.iter().chain(&self.queue1) {
            let want = round.jobs[j].tuned_replicas;
            if want <= left {
                self.status[j] = Status::Running;
                left -= want;
            } else {
                self.status[j] = Status::Pending;
                allocs[pos[j]].clear();
            }
        }
        let order: Vec<usize> = self.queue0.iter().chain(&self.queue1).copied().collect();
        let wants: Vec<(usize, u32)> = order
            .iter()
            .filter(|&&j| self.status[j] == Status::Running)
            .map(|&j| (pos[j], round.jobs[j].tuned_replicas))
            .collect();
        most_free_fill(round, &mut allocs, &wants);
        allocs
    }
}
