//! Random as FGD's artifact runs it (`pkg/simulator/plugin/random_score.go:42-68`,
//! `open_gpu_share.go:308-326`): one feasible node drawn uniformly; a sharing pod on a GPU
//! drawn uniformly among those with room, a whole-GPU pod on the lowest-index wholly free GPUs.

use alloc::vec;
use alloc::vec::Vec;

use rand::RngExt;
use rand_pcg::Pcg64Mcg;

use super::super::cluster::{Node, Pod};

/// A feasible node, uniformly.
pub fn node(feasible: &[usize], rng: &mut Pcg64Mcg) -> usize {
    feasible[rng.random_range(0..feasible.len() as u64) as usize]
}

/// The GPUs of `pod` on `node`.
pub fn gpus(node: &Node, pod: &Pod, rng: &mut Pcg64Mcg) -> Vec<u32> {
    if pod.shares() {
        let fit: Vec<u32> = (0..node.gpus)
            .filter(|&i| node.gpu_free[i as usize] >= pod.gpu_milli)
            .collect();
        if fit.is_empty() {
            return Vec::new();
        }
        vec![fit[rng.random_range(0..fit.len() as u64) as usize]]
    } else {
        node.whole_gpus_for(pod)
    }
}
