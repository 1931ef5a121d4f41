//! GpuPacking as FGD's artifact runs it (`pkg/simulator/plugin/gpu_packing_score.go:35-117`):
//! prefer GPUs already shared, then free GPUs on a node in use, then an empty node. A CPU pod
//! scores 0 everywhere. On an empty node of k GPUs: max(33 − k, k). Otherwise the pod's GPUs are
//! taken from the node's GPUs in ascending free milli (index on ties) among those with room:
//! if f of them are wholly free, max(50 − f, 33); else max(100 − Σ⌊free · 100 / 1000⌋ / 10,
//! 50). The pod's GPU is the best fit.

use alloc::vec::Vec;

use super::super::cluster::{Node, Pod};
use super::super::params::GPU_MILLI;

/// The score of `node` for `pod`.
#[must_use]
pub fn score(node: &Node, pod: &Pod) -> i64 {
    if pod.num_gpu == 0 {
        return 0;
    }
    let k = i64::from(node.gpus);
    if node.whole_free() == node.gpus {
        return (33 - k).max(k);
    }
    let mut order: Vec<u32> = (0..node.gpus).collect();
    order.sort_by_key(|&i| node.gpu_free[i as usize]);
    let taken: Vec<u32> = order
        .into_iter()
        .map(|i| node.gpu_free[i as usize])
        .filter(|&free| free >= pod.gpu_milli)
        .take(pod.num_gpu as usize)
        .collect();
    let whole = taken.iter().filter(|&&free| free == GPU_MILLI).count() as i64;
    if whole > 0 {
        (50 - whole).max(33)
    } else {
        let sum: i64 = taken.iter().map(|&free| i64::from(free * 100 / GPU_MILLI)).sum();
        (100 - sum / 10).max(50)
    }
}
