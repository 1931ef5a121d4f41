//! The placement policies of FGD's artifact (hkust-adsl/kubernetes-scheduler-simulator
//! @8f3d641; the policy table `experiments/run_scripts/generate_run_scripts.py:33-40`), one file
//! each. Each is a kube-scheduler score plugin alone (every default score plugin disabled,
//! every node scored: `scripts/generate_config_and_run.py:190-274`); [`place`] is the
//! scheduler's cycle around it: filter the nodes the pod fits (CPU, memory, model, GPUs), skip
//! scoring when one node fits, score, normalise (BestFit only), take the highest score with
//! ties to the node of lowest random rank (the artifact's fork of kube-scheduler v1.20.5 breaks
//! ties by the smallest node name, and prefixes each name with a seeded random permutation:
//! `generic_scheduler.go:187-212`, `simulator.go:478-485`), then choose the pod's GPUs on it.

mod best_fit;
mod dot_prod;
mod fgd;
mod gpu_clustering;
mod gpu_packing;
mod random;

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use rand_pcg::Pcg64Mcg;

use super::cluster::{node_frag_milli, Node, Pod, Task};
use super::params::MAX_GPUS_PER_NODE;

pub use fgd::sigmoid_score;

crate::kinds! {
    /// The placement policies of FGD's experiment.
    pub enum SharingPolicy as "sharing policy" {
        /// A feasible node drawn uniformly, a random GPU with room.
        Random = "random", "Random";
        /// Tetris-style alignment of the node's free resources with the request.
        DotProd = "dot-prod", "DotProd";
        /// Pods of one kind (sharing, n-GPU) together.
        GpuClustering = "gpu-clustering", "GpuClustering";
        /// Shared GPUs first, then free GPUs of used nodes, then empty nodes.
        GpuPacking = "gpu-packing", "GpuPacking";
        /// The node with the least CPU and GPU left over.
        BestFit = "best-fit", "BestFit";
        /// FGD: the placement that grows the cluster's fragmentation least (Weng et al.,
        /// ATC'23).
        Fgd = "fgd", "FGD";
    }
}

/// The artifact's `MaxSpecCpu`, milli-cores (`open-gpu-share/utils/const.go`).
pub const MAX_SPEC_CPU_MILLI: f64 = 128_000.0;
/// The artifact's `MaxSpecGpu`, milli-GPU (eight whole GPUs).
pub const MAX_SPEC_GPU_MILLI: f64 = 8_000.0;

/// The kinds of the GPU pods on one node (GpuClustering's tags): index 0 counts pods that share
/// a GPU, index n pods that take n whole GPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kinds([u32; MAX_GPUS_PER_NODE as usize + 1]);

impl Kinds {
    /// The kind index of a GPU pod.
    #[must_use]
    pub fn of(pod: &Pod) -> usize {
        if pod.shares() {
            0
        } else {
            pod.num_gpu as usize
        }
    }

    /// Pods of kind `k` on the node.
    #[must_use]
    pub fn count(&self, k: usize) -> u32 {
        self.0[k]
    }

    /// GPU pods on the node.
    #[must_use]
    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Records a placed pod (CPU pods are not counted).
    pub fn add(&mut self, pod: &Pod) {
        if pod.num_gpu > 0 {
            self.0[Kinds::of(pod)] += 1;
        }
    }

    /// Records a pod that left.
    pub fn remove(&mut self, pod: &Pod) {
        if pod.num_gpu > 0 {
            let k = &mut self.0[Kinds::of(pod)];
            *k = k.saturating_sub(1);
        }
    }
}

/// Node fragmentation by node state: F_N depends only on the node's model, which typical tasks'
/// CPU its free CPU covers, and its GPUs' free milli as a multiset, so equal states share one
/// evaluation (ours: the artifact's FGD score recomputes F_N every time, `fgd_score.go:63-82`,
/// and memoises it only in its reports; the values are the same).
pub struct FragMemo<'a> {
    tasks: &'a [Task],
    /// The typical tasks' CPU requests, ascending, distinct.
    cpu_steps: Vec<u64>,
    memo: BTreeMap<(u32, usize, [u32; MAX_GPUS_PER_NODE as usize]), f64>,
}

impl<'a> FragMemo<'a> {
    /// A memo over these typical tasks.
    #[must_use]
    pub fn new(tasks: &'a [Task]) -> FragMemo<'a> {
        let mut cpu_steps: Vec<u64> = tasks.iter().map(|t| t.pod.cpu_milli).collect();
        cpu_steps.sort_unstable();
        cpu_steps.dedup();
        FragMemo {
            tasks,
            cpu_steps,
            memo: BTreeMap::new(),
        }
    }

    /// The node's fragmentation, milli-GPU.
    pub fn frag(&mut self, node: &Node) -> f64 {
        let mut free = [0u32; MAX_GPUS_PER_NODE as usize];
        free[..node.gpus as usize].copy_from_slice(node.free());
        free[..node.gpus as usize].sort_unstable();
        let cpu_class = self.cpu_steps.partition_point(|&c| c <= node.cpu_free);
        let tasks = self.tasks;
        *self
            .memo
            .entry((node.model, cpu_class, free))
            .or_insert_with(|| node_frag_milli(node, tasks))
    }
}

/// What a placement decision reads besides the node and the pod.
pub struct Ctx<'a, 'b> {
    /// The nodes' GPU pod kinds (GpuClustering).
    pub kinds: &'b [Kinds],
    /// Each node's tie-break rank (lower wins).
    pub rank: &'b [u32],
    /// Fragmentation by node state (FGD).
    pub memo: &'b mut FragMemo<'a>,
    /// The policy's own random draws (Random).
    pub rng: &'b mut Pcg64Mcg,
    /// Scratch: the feasible nodes.
    pub feasible: &'b mut Vec<usize>,
}

/// Where `policy` puts `pod`: the node and its GPUs (empty for a CPU pod), or `None` when it
/// fits no node.
pub fn place(policy: SharingPolicy, nodes: &[Node], pod: &Pod, ctx: &mut Ctx<'_, '_>) -> Option<(usize, Vec<u32>)> {
    ctx.feasible.clear();
    ctx.feasible
        .extend((0..nodes.len()).filter(|&i| nodes[i].fits(pod)));
    let node = match ctx.feasible.len() {
        0 => return None,
        1 => ctx.feasible[0],
        _ if policy == SharingPolicy::Random => random::node(ctx.feasible, ctx.rng),
        _ => {
            let mut scores: Vec<i64> = ctx
                .feasible
                .iter()
                .map(|&i| {
                    let n = &nodes[i];
                    match policy {
                        SharingPolicy::DotProd => dot_prod::score(n, pod),
                        SharingPolicy::GpuClustering => {
                            gpu_clustering::score(n, &ctx.kinds[i], pod)
                        }
                        SharingPolicy::GpuPacking => gpu_packing::score(n, pod),
                        SharingPolicy::BestFit => best_fit::raw_score(n, pod),
                        SharingPolicy::Fgd => fgd::score(n, pod, ctx.memo).0,
                        SharingPolicy::Random => 0,
                    }
                })
                .collect();
            if policy == SharingPolicy::BestFit {
                normalise(&mut scores);
            }
            let best = ctx
                .feasible
                .iter()
                .zip(&scores)
                .max_by(|a, b| a.1.cmp(b.1).then(ctx.rank[*b.0].cmp(&ctx.rank[*a.0])))
                .map(|(&i, _)| i)?;
            best
        }
    };
    let n = &nodes[node];
    let gpus = if pod.num_gpu == 0 {
        Vec::new()
    } else {
        match policy {
            SharingPolicy::Random => random::gpus(n, pod, ctx.rng),
            SharingPolicy::Fgd => fgd::score(n, pod, ctx.memo).1,
            _ if pod.shares() => n.best_fit_gpu(pod).into_iter().collect(),
            _ => n.whole_gpus_for(pod),
        }
    };
    Some((node, gpus))
}

/// The artifact's min-max normalisation of a plugin's scores (`plugin_utils.go:47-73`):
/// (s − min) · 100 / (max − min) in integers; every score 0 when all are equal.
pub fn normalise(scores: &mut [i64]) {
    let (Some(&min), Some(&max)) = (scores.iter().min(), scores.iter().max()) else {
        return;
    };
    for s in scores.iter_mut() {
        *s = if max == min { 0 } else { (*s - min) * 100 / (max - min) };
    }
}
