//! BestFit as FGD's artifact runs it (`pkg/simulator/plugin/best_fit_score.go:66-97`): the node's
//! raw score is 100 · (1 − [½ (CPU free − CPU asked) ÷ 128,000 + ½ (GPU milli free − GPU milli
//! asked) ÷ 8,000]) truncated toward zero (Go's `int64`), the least left over scoring highest; the
//! raw scores of the feasible nodes are then min-max normalised to 0–100 in integers
//! (`plugin_utils.go:47-73`, every node 0 when all are equal; see `super::normalise`). The pod's
//! GPU is the best fit.

use super::super::cluster::{Node, Pod};
use super::{MAX_SPEC_CPU_MILLI, MAX_SPEC_GPU_MILLI};

/// The raw (not yet normalised) score of `node` for `pod`.
#[must_use]
pub fn raw_score(node: &Node, pod: &Pod) -> i64 {
    let cpu_left = node.cpu_free as f64 - pod.cpu_milli as f64;
    let gpu_left = node.idle_milli() as f64 - pod.total_gpu_milli() as f64;
    let left = 0.5 * cpu_left / MAX_SPEC_CPU_MILLI + 0.5 * gpu_left / MAX_SPEC_GPU_MILLI;
    ((1.0 - left) * 100.0) as i64
}
