//! The cluster as FGD's artifact models it (hkust-adsl/kubernetes-scheduler-simulator @8f3d641,
//! `pkg/type/resource.go`, `pkg/utils/frag.go`): each node has CPU, memory and per-GPU free
//! shares in milli-GPU (1000 per GPU whatever the model); a pod fits a node when its CPU and
//! memory fit, its GPU model is allowed, and its GPUs fit — a sharing pod (one GPU, share
//! below 1000) on one GPU with that much free, an n-GPU pod on n wholly free GPUs.
//!
//! Fragmentation ([`Cluster::node_frag_milli`], `frag.go`): for a *typical task* m (the most
//! common pod shapes, [`typical_tasks`]) the idle GPU milli of node N that m cannot use is
//! F_N(m) = the node's whole idle GPU milli G if m asks for no GPU, may not run on N's model,
//! or does not fit N; else the idle milli of the GPUs with less free than m's share. The node's
//! fragmentation is the popularity-weighted sum Σ_m p_m · F_N(m).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::params::{NodeGroup, PodClass, GPU_MILLI, MAX_GPUS_PER_NODE};

/// A pod's shape, with its allowed models as a bit set over the cluster's models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pod {
    /// CPU, milli-cores.
    pub cpu_milli: u64,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// GPUs (0: a CPU pod).
    pub num_gpu: u32,
    /// Share of each GPU, milli-GPU (0 for a CPU pod).
    pub gpu_milli: u32,
    /// Allowed models: bit i = the cluster's model i; `u64::MAX` = any.
    pub models: u64,
}

impl Pod {
    /// The pod's whole GPU request, milli-GPU.
    #[must_use]
    pub fn total_gpu_milli(&self) -> u64 {
        u64::from(self.num_gpu) * u64::from(self.gpu_milli)
    }

    /// Whether the pod shares a GPU (one GPU, less than all of it).
    #[must_use]
    pub fn shares(&self) -> bool {
        self.num_gpu == 1 && self.gpu_milli < GPU_MILLI
    }
}

/// One node's capacity and what is free on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Index of its GPU model in [`Cluster::models`].
    pub model: u32,
    /// GPUs.
    pub gpus: u32,
    /// CPU capacity, milli-cores.
    pub cpu_milli: u64,
    /// Memory capacity, MiB.
    pub memory_mib: u64,
    /// CPU free, milli-cores.
    pub cpu_free: u64,
    /// Memory free, MiB.
    pub memory_free: u64,
    /// Free milli-GPU of each GPU (the first `gpus` entries).
    pub gpu_free: [u32; MAX_GPUS_PER_NODE as usize],
}

impl Node {
    /// The free milli-GPU of its GPUs.
    #[must_use]
    pub fn free(&self) -> &[u32] {
        &self.gpu_free[..self.gpus as usize]
    }

    /// Idle GPU milli of the node.
    #[must_use]
    pub fn idle_milli(&self) -> u64 {
        self.free().iter().map(|&g| u64::from(g)).sum()
    }

    /// Wholly free GPUs.
    #[must_use]
    pub fn whole_free(&self) -> u32 {
        self.free().iter().filter(|&&g| g == GPU_MILLI).count() as u32
    }

    /// Whether the pod's GPU request fits (not CPU, memory or model).
    #[must_use]
    pub fn gpus_fit(&self, pod: &Pod) -> bool {
        if pod.num_gpu == 0 {
            true
        } else if pod.shares() {
            self.free().iter().any(|&g| g >= pod.gpu_milli)
        } else {
            self.whole_free() >= pod.num_gpu
        }
    }

    /// Whether the pod's CPU and memory fit.
    #[must_use]
    pub fn host_fits(&self, pod: &Pod) -> bool {
        self.cpu_free >= pod.cpu_milli && self.memory_free >= pod.memory_mib
    }

    /// Whether the pod may run on the node's model.
    #[must_use]
    pub fn model_allowed(&self, pod: &Pod) -> bool {
        pod.models & (1u64 << self.model) != 0
    }

    /// Whether the pod fits the node: CPU, memory, model and GPUs.
    #[must_use]
    pub fn fits(&self, pod: &Pod) -> bool {
        self.host_fits(pod) && self.model_allowed(pod) && self.gpus_fit(pod)
    }

    /// The GPUs a whole-GPU pod takes: the lowest-index wholly free ones.
    #[must_use]
    pub fn whole_gpus_for(&self, pod: &Pod) -> Vec<u32> {
        (0..self.gpus)
            .filter(|&i| self.gpu_free[i as usize] == GPU_MILLI)
            .take(pod.num_gpu as usize)
            .collect()
    }

    /// The best-fit GPU for a sharing pod: the one with the least free milli that fits, the
    /// lowest index on ties.
    #[must_use]
    pub fn best_fit_gpu(&self, pod: &Pod) -> Option<u32> {
        (0..self.gpus)
            .filter(|&i| self.gpu_free[i as usize] >= pod.gpu_milli)
            .min_by_key(|&i| (self.gpu_free[i as usize], i))
    }

    /// Places the pod on the given GPUs (one GPU for a sharing pod, `num_gpu` wholly free ones
    /// otherwise, none for a CPU pod). The caller has checked that it fits.
    pub fn place(&mut self, pod: &Pod, gpus: &[u32]) {
        self.cpu_free -= pod.cpu_milli;
        self.memory_free -= pod.memory_mib;
        for &g in gpus {
            self.gpu_free[g as usize] -= pod.gpu_milli;
        }
    }

    /// F_N(m) of one typical task, milli-GPU (`frag.go:147-192, 543-582`): the node's whole
    /// idle milli unless the task asks for GPUs, may run on the node's model, and fits it (its
    /// GPUs, and its CPU: memory is never part of F), when only the idle milli of the GPUs
    /// with less free than the task's share counts.
    #[must_use]
    pub fn task_frag_milli(&self, task: &Pod) -> u64 {
        let mut idle = 0u64;
        let mut below = 0u64;
        for &g in self.free() {
            idle += u64::from(g);
            if g < task.gpu_milli {
                below += u64::from(g);
            }
        }
        if task.num_gpu == 0
            || !self.model_allowed(task)
            || self.cpu_free < task.cpu_milli
            || !self.gpus_fit(task)
        {
            idle
        } else {
            below
        }
    }
}

/// A typical task: a pod shape and its popularity (share of the original pods).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Task {
    /// The shape.
    pub pod: Pod,
    /// Popularity, the tasks' popularities summing to 1.
    pub popularity: f64,
}

/// The cluster: nodes and the names of their models.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// Every node, groups in order.
    pub nodes: Vec<Node>,
    /// GPU model names; a node's `model` indexes this.
    pub models: Vec<String>,
}

impl Cluster {
    /// The cluster of the node groups (at most 64 distinct models: checked by the caller).
    #[must_use]
    pub fn new(groups: &[NodeGroup]) -> Cluster {
        let mut models: Vec<String> = Vec::new();
        let mut nodes = Vec::new();
        for g in groups {
            let model = if let Some(i) = models.iter().position(|m| *m == g.model) {
                i
            } else {
                models.push(g.model.clone());
                models.len() - 1
            } as u32;
            let mut gpu_free = [0; MAX_GPUS_PER_NODE as usize];
            gpu_free[..g.gpus as usize].fill(GPU_MILLI);
            for _ in 0..g.count {
                nodes.push(Node {
                    model,
                    gpus: g.gpus,
                    cpu_milli: g.cpu_milli,
                    memory_mib: g.memory_mib,
                    cpu_free: g.cpu_milli,
                    memory_free: g.memory_mib,
                    gpu_free,
                });
            }
        }
        Cluster { nodes, models }
    }

    /// The pod shape of a class, its model names turned into the cluster's bit set (a model the
    /// cluster lacks allows nothing).
    #[must_use]
    pub fn pod(&self, class: &PodClass) -> Pod {
        let models = if class.models.is_empty() {
            u64::MAX
        } else {
            class
                .models
                .iter()
                .filter_map(|m| self.models.iter().position(|c| c == m))
                .fold(0u64, |acc, i| acc | 1u64 << i)
        };
        Pod {
            cpu_milli: class.cpu_milli,
            memory_mib: class.memory_mib,
            num_gpu: class.num_gpu,
            gpu_milli: if class.num_gpu == 0 { 0 } else { class.gpu_milli },
            models,
        }
    }

    /// The cluster's GPUs.
    #[must_use]
    pub fn gpus(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.gpus)).sum()
    }

    /// Allocated GPU milli over the whole cluster.
    #[must_use]
    pub fn used_milli(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| u64::from(n.gpus) * u64::from(GPU_MILLI) - n.idle_milli())
            .sum()
    }
}

/// FGD's typical tasks (`pkg/utils/frag.go:381-476`): the original pods, CPU pods included,
/// grouped by shape (CPU, per-GPU share, GPU count, models; memory is not part of the shape),
/// most common first (ties: the larger shape first, comparing CPU, share, count, models), added
/// while the pods covered are fewer than `coverage_percent` % of all (so the shape that
/// reaches it is in), popularities renormalised over the shapes kept.
#[must_use]
pub fn typical_tasks(pods: &[Pod], counts: &[u32], coverage_percent: u64) -> Vec<Task> {
    let mut by_shape: BTreeMap<(u64, u32, u32, u64), u64> = BTreeMap::new();
    for (p, &c) in pods.iter().zip(counts) {
        *by_shape
            .entry((p.cpu_milli, p.gpu_milli, p.num_gpu, p.models))
            .or_default() += u64::from(c);
    }
    let total: u64 = by_shape.values().sum();
    let mut shapes: Vec<((u64, u32, u32, u64), u64)> = by_shape.into_iter().collect();
    shapes.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let mut kept = Vec::new();
    let mut covered = 0u64;
    for (shape, count) in shapes {
        if covered * 100 >= coverage_percent * total {
            break;
        }
        covered += count;
        kept.push((shape, count));
    }
    kept.into_iter()
        .map(|((cpu_milli, gpu_milli, num_gpu, models), count)| Task {
            pod: Pod {
                cpu_milli,
                memory_mib: 0,
                num_gpu,
                gpu_milli,
                models,
            },
            popularity: count as f64 / covered.max(1) as f64,
        })
        .collect()
}

/// A node's fragmentation, milli-GPU: Σ_m p_m · F_N(m) over the typical tasks.
#[must_use]
pub fn node_frag_milli(node: &Node, tasks: &[Task]) -> f64 {
    tasks
        .iter()
        .map(|t| t.popularity * node.task_frag_milli(&t.pod) as f64)
        .sum()
}
