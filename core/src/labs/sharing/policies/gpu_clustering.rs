//! GpuClustering as FGD's artifact runs it (`pkg/simulator/plugin/gpu_clustering_score.go:32-56`):
//! keep pods of one kind together. A GPU pod's kind is "shares a GPU" or "takes n GPUs"; with
//! base = 25 · (8,000 − the node's free GPU milli) / 8,000 in integers, a node scores 75 + base
//! when it holds only pods of the pod's kind, 50 + base when among others, 25 + base when it
//! holds no GPU pod, and base when only other kinds. A CPU pod scores 0 everywhere. The pod's
//! GPU is the best fit.

use super::super::cluster::{Node, Pod};
use super::{Kinds, MAX_SPEC_GPU_MILLI};

/// The score of `node`, holding GPU pods of `kinds`, for `pod`.
#[must_use]
pub fn score(node: &Node, kinds: &Kinds, pod: &Pod) -> i64 {
    if pod.num_gpu == 0 {
        return 0;
    }
    let spec = MAX_SPEC_GPU_MILLI as i64;
    let base = 25 * (spec - node.idle_milli() as i64) / spec;
    let mine = kinds.count(Kinds::of(pod));
    let all = kinds.total();
    if all == 0 {
        25 + base
    } else if mine == all {
        75 + base
    } else if mine > 0 {
        50 + base
    } else {
        base
    }
}
