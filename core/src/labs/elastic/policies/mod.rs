//! The elastic lab's policies, one file each: Pollux and the two baselines its artifact
//! compares it with (petuum/adaptdl @de25dcc, `simulator/`; OSDI'21 §5.2).

mod optimus;
mod pollux;
mod tiresias;

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

pub use optimus::Optimus;
pub use pollux::Pollux;
pub use tiresias::{Tiresias, QUEUE_THRESHOLD_GPU_S};

use super::params::PolluxSpec;
use super::sim::{Round, Scheduler};

crate::kinds! {
    /// The elastic lab's policies.
    pub enum ElasticPolicy as "elastic policy" {
        /// Pollux: every job's GPUs and batch size chosen together for the cluster's goodput
        /// (Qiao et al., OSDI'21).
        Pollux = "pollux", "Pollux";
        /// Optimus with an oracle of remaining work; each job keeps its tuned batch size.
        Optimus = "optimus", "Optimus+Oracle";
        /// Tiresias: two-queue least-attained-service; each job on its tuned GPUs and batch.
        Tiresias = "tiresias", "Tiresias";
    }
}

impl ElasticPolicy {
    /// A fresh scheduler.
    #[must_use]
    pub fn build(self, spec: &PolluxSpec) -> Box<dyn Scheduler> {
        match self {
            ElasticPolicy::Pollux => Box::new(Pollux::new(spec)),
            ElasticPolicy::Optimus => Box::new(Optimus),
            ElasticPolicy::Tiresias => Box::new(Tiresias::default()),
        }
    }

    /// Whether jobs pick their own batch size (Pollux's agent) rather than keep the tuned one.
    #[must_use]
    pub fn adapts_batch_size(self) -> bool {
        self == ElasticPolicy::Pollux
    }
}

/// Gives each job of `wants` (index into `allocs`, GPUs), in order, that has no GPUs yet, GPUs
/// from the node with most free first, ties to the lowest node (the artifact's
/// `Counter.most_common(1)` over nodes with free GPUs).
pub(crate) fn most_free_fill(round: &Round<'_>, allocs: &mut [Vec<u32>], wants: &[(usize, u32)]) {
    let gpn = i64::from(round.gpus_per_node);
    let mut free = vec![gpn; round.nodes as usize];
    for a in allocs.iter() {
        for &n in a {
            free[n as usize] -= 1;
        }
    }
    // `Counter - Counter` keeps only nodes with free GPUs; a node emptied later stays, at 0.
    let listed: Vec<bool> = free.iter().map(|&f| f > 0).collect();
    for &(k, want) in wants {
        if !allocs[k].is_empty() {
            continue;
        }
        while (allocs[k].len() as u32) < want {
            let mut best: Option<usize> = None;
            for n in 0..free.len() {
                if listed[n] && best.is_none_or(|b| free[n] > free[b]) {
                    best = Some(n);
                }
            }
            let Some(n) = best.filter(|&n| free[n] > 0) else {
                break;
            };
            let num = free[n].min(i64::from(want) - allocs[k].len() as i64);
            allocs[k].extend(core::iter::repeat_n(n as u32, num as usize));
            free[n] -= num;
        }
    }
}
