//! FGD, fragmentation gradient descent (Weng et al., "Beware of Fragmentation", ATC'23), as its
//! artifact scores a node (hkust-adsl/kubernetes-scheduler-simulator @8f3d641,
//! `pkg/simulator/plugin/fgd_score.go:38-90`): place the pod on the node in thought, and score the
//! drop of the node's fragmentation Δ = F_N(before) − F_N(after) (milli-GPU, over the typical
//! tasks) as ⌊100 · σ(Δ / 1000)⌋ (Go's `int64`, truncation toward zero), σ the logistic function. A
//! sharing pod is tried on every GPU with room for it; the node's score is the best, and the pod
//! goes to the first GPU that reaches it (GPUs compared on the truncated score). Any other pod, a
//! CPU pod included, is tried with its CPU taken and its GPUs the lowest-index wholly free ones.

use alloc::vec;
use alloc::vec::Vec;

use super::super::cluster::{Node, Pod};
use super::FragMemo;

/// The score of `node` for `pod` and the GPUs it would take.
pub fn score(node: &Node, pod: &Pod, memo: &mut FragMemo<'_>) -> (i64, Vec<u32>) {
    let before = memo.frag(node);
    let mut after = node.clone();
    if pod.shares() {
        let mut best: Option<(i64, u32)> = None;
        let mut tried: Vec<u32> = Vec::new();
        for i in 0..node.gpus {
            let free = node.gpu_free[i as usize];
            // GPUs with equal free milli leave the same node state up to order, so the same
            // score: the first of them is the one FGD would keep.
            if free < pod.gpu_milli || tried.contains(&free) {
                continue;
            }
            tried.push(free);
            after.clone_from(node);
            after.place(pod, &[i]);
            let s = sigmoid_score(before - memo.frag(&after));
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, i));
            }
        }
        best.map_or((0, Vec::new()), |(s, i)| (s, vec![i]))
    } else {
        let gpus = node.whole_gpus_for(pod);
        after.place(pod, &gpus);
        (sigmoid_score(before - memo.frag(&after)), gpus)
    }
}

/// ⌊100 · σ(Δ / 1000)⌋ of a fragmentation drop Δ in milli-GPU.
#[must_use]
pub fn sigmoid_score(delta_milli: f64) -> i64 {
    let s = 1.0 / (1.0 + libm::exp(-delta_milli / 1000.0));
    (s * 100.0) as i64
}
