//! DotProd, a Tetris-style alignment score, as FGD's artifact runs it
//! (`pkg/simulator/plugin/dot_product_score.go:64-100`, dimension `merge`, norm `max`): the node's
//! free [CPU ÷ 128,000 milli-cores, all GPUs' free milli ÷ 8,000] dotted with the pod's request
//! [CPU ÷ 128,000, GPU milli ÷ 8,000]; score 100 · (1 − dot / 2) truncated toward zero (Go's
//! `int64`), so the node whose free resources align least with the request — the fullest — wins.
//! The pod's GPU is the best fit.

use super::super::cluster::Node;
use super::super::cluster::Pod;
use super::{MAX_SPEC_CPU_MILLI, MAX_SPEC_GPU_MILLI};

/// The score of `node` for `pod`.
#[must_use]
pub fn score(node: &Node, pod: &Pod) -> i64 {
    if node.cpu_free < pod.cpu_milli {
        return 0;
    }
    let node_v = [
        node.cpu_free as f64 / MAX_SPEC_CPU_MILLI,
        node.idle_milli() as f64 / MAX_SPEC_GPU_MILLI,
    ];
    let pod_v = [
        pod.cpu_milli as f64 / MAX_SPEC_CPU_MILLI,
        pod.total_gpu_milli() as f64 / MAX_SPEC_GPU_MILLI,
    ];
    let dot = node_v[0] * pod_v[0] + node_v[1] * pod_v[1];
    (100.0 * (1.0 - dot / 2.0)) as i64
}
