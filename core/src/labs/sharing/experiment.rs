//! FGD's placement experiment as its artifact runs it (hkust-adsl/kubernetes-scheduler-simulator
//! @8f3d641, `pkg/simulator/core.go:96-122`, `simulator.go:301-344, 822-852, 1066-1139`): the
//! original pods are shuffled by the seed; "workload tuning" then appends clones of originals
//! drawn uniformly with replacement — a running sum of requested GPU milli starts from the
//! originals' and grows by each clone's whole request, and cloning stops at the first draw whose
//! *per-GPU* share would take the sum above `inflation_percent` % of the cluster's GPU milli (the
//! artifact's test, kept as written); the clones are not shuffled. Every pod is then tried once,
//! in order, and never leaves; a pod that fits nowhere is dropped. After every pod the arrived
//! (requested, failed pods included) and the allocated GPU milli are recorded. No time passes:
//! the experiment has none.

use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::cluster::{typical_tasks, Cluster, Pod};
use super::params::{SharingParams, GPU_MILLI, MAX_GPUS_PER_NODE};
use super::policies::{place, Ctx, FragMemo, Kinds, SharingPolicy};

/// FGD's typical-task coverage, % (95 with step 1 in the experiment's scheduler configuration,
/// `scripts/generate_config_and_run.py:57-58, 121-122`; `frag.go`'s own default is 60).
pub const TYPICAL_COVERAGE_PERCENT: u64 = 95;

/// The pods of one seed, in the order they are tried, and the nodes' tie-break ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Pods in order: the shuffled originals, then the clones.
    pub pods: Vec<Pod>,
    /// How many of `pods` are originals.
    pub originals: usize,
    /// Each node's tie-break rank (a seeded random permutation; lower wins).
    pub rank: Vec<u32>,
}

/// One policy on one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRun {
    /// The policy.
    pub policy: SharingPolicy,
    /// The seed.
    pub seed: u64,
    /// After each pod: (arrived GPU milli, allocated GPU milli).
    pub curve: Vec<(u64, u64)>,
    /// GPU pods that fit nowhere.
    pub failed_gpu_pods: u64,
    /// Their GPU request, milli-GPU.
    pub failed_gpu_milli: u64,
    /// CPU pods that fit nowhere.
    pub failed_cpu_pods: u64,
    /// GPUs partly allocated at the end (holding sharing pods with room left).
    pub partial_gpus: u64,
    /// The cluster's fragmentation (Σ_N F_N over the typical tasks), milli-GPU, read at 100 %
    /// arrived as the artifact reads it (`experiments/analysis/merge_frag_discrete.py`: the
    /// mean over the records whose arrived share rounds to 100 %, or to 99–101 % when none
    /// does; `None` when no record does).
    pub frag_at_full_milli: Option<f64>,
    /// Idle GPU milli at the end.
    pub idle_milli: u64,
    /// Every GPU at the end, nodes in cluster order: its allocated milli-GPU, plus
    /// [`SHARED_FLAG`] when sharing pods hold it.
    pub gpus_at_end: Vec<u16>,
}

/// Added to a GPU's allocated milli in [`SeedRun::gpus_at_end`] when sharing pods hold it.
pub const SHARED_FLAG: u16 = 2048;

/// Uniform draw in `0..n` (n ≥ 1) on u64, the same on every target.
fn below(rng: &mut Pcg64Mcg, n: usize) -> usize {
    rng.random_range(0..n as u64) as usize
}

/// The pods of a seed (see the module documentation).
#[must_use]
pub fn workload(params: &SharingParams, cluster: &Cluster, seed: u64) -> Workload {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let originals: Vec<Pod> = params
        .pods
        .iter()
        .flat_map(|c| core::iter::repeat_n(cluster.pod(c), c.count as usize))
        .collect();
    let mut pods = originals.clone();
    // Fisher–Yates, as Go's rand.Shuffle walks it (from the end).
    for i in (1..pods.len()).rev() {
        let j = below(&mut rng, i + 1);
        pods.swap(i, j);
    }
    let target = cluster.gpus() * u64::from(GPU_MILLI) * u64::from(params.inflation_percent) / 100;
    let mut sum: u64 = originals.iter().map(Pod::total_gpu_milli).sum();
    loop {
        let clone = originals[below(&mut rng, originals.len())];
        if sum + u64::from(clone.gpu_milli) > target {
            break;
        }
        sum += clone.total_gpu_milli();
        pods.push(clone);
    }
    let n = cluster.nodes.len();
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = below(&mut rng, i + 1);
        perm.swap(i, j);
    }
    Workload {
        pods,
        originals: originals.len(),
        rank: perm,
    }
}

/// Runs `policy` on one seed's workload; `progress` is called every 1,024 pods with the pods
/// tried so far.
#[must_use]
pub fn run(
    params: &SharingParams,
    policy: SharingPolicy,
    seed: u64,
    progress: &mut dyn FnMut(usize),
) -> SeedRun {
    let mut cluster = Cluster::new(&params.nodes);
    let work = workload(params, &cluster, seed);
    let counts: Vec<u32> = params.pods.iter().map(|c| c.count).collect();
    let shapes: Vec<Pod> = params.pods.iter().map(|c| cluster.pod(c)).collect();
    let tasks = typical_tasks(&shapes, &counts, TYPICAL_COVERAGE_PERCENT);
    let mut memo = FragMemo::new(&tasks);
    let mut kinds = alloc::vec![Kinds::default(); cluster.nodes.len()];
    // The policy's own draws, apart from the workload's so that every policy sees the same
    // pods and ranks.
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x5eed_f6d0);
    let mut feasible = Vec::new();
    let cluster_milli = cluster.gpus() * u64::from(GPU_MILLI);
    let mut curve = Vec::with_capacity(work.pods.len());
    let (mut arrived, mut used) = (0u64, 0u64);
    let mut run = SeedRun {
        policy,
        seed,
        curve: Vec::new(),
        failed_gpu_pods: 0,
        failed_gpu_milli: 0,
        failed_cpu_pods: 0,
        partial_gpus: 0,
        frag_at_full_milli: None,
        idle_milli: 0,
        gpus_at_end: Vec::new(),
    };
    let mut shared = alloc::vec![false; cluster.nodes.len() * MAX_GPUS_PER_NODE as usize];
    // Σ_N F_N kept as nodes change, and its records near 100 % arrived: (percent, milli).
    let mut node_frag: Vec<f64> = cluster.nodes.iter().map(|n| memo.frag(n)).collect();
    let mut total_frag: f64 = node_frag.iter().sum();
    let mut near_full: Vec<(i64, f64)> = Vec::new();
    for (k, pod) in work.pods.iter().enumerate() {
        if k % 1024 == 0 {
            progress(k);
        }
        arrived += pod.total_gpu_milli();
        let mut ctx = Ctx {
            kinds: &kinds,
            rank: &work.rank,
            memo: &mut memo,
            rng: &mut rng,
            feasible: &mut feasible,
        };
        match place(policy, &cluster.nodes, pod, &mut ctx) {
            Some((node, gpus)) => {
                cluster.nodes[node].place(pod, &gpus);
                if pod.shares() {
                    for &g in &gpus {
                        shared[node * MAX_GPUS_PER_NODE as usize + g as usize] = true;
                    }
                }
                kinds[node].add(pod);
                used += pod.total_gpu_milli();
                let f = memo.frag(&cluster.nodes[node]);
                total_frag += f - node_frag[node];
                node_frag[node] = f;
            }
            None if pod.num_gpu == 0 => run.failed_cpu_pods += 1,
            None => {
                run.failed_gpu_pods += 1;
                run.failed_gpu_milli += pod.total_gpu_milli();
            }
        }
        curve.push((arrived, used));
        let p = round_half_even(arrived as f64 * 100.0 / cluster_milli as f64);
        if (99..=101).contains(&p) {
            near_full.push((p, total_frag));
        }
    }
    let mean_in = |lo: i64, hi: i64| {
        let v: Vec<f64> = near_full
            .iter()
            .filter(|r| (lo..=hi).contains(&r.0))
            .map(|r| r.1)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    run.frag_at_full_milli = mean_in(100, 100).or_else(|| mean_in(99, 101));
    run.curve = curve;
    run.partial_gpus = cluster
        .nodes
        .iter()
        .flat_map(|n| n.free().iter())
        .filter(|&&g| g > 0 && g < GPU_MILLI)
        .count() as u64;
    run.idle_milli = cluster.nodes.iter().map(super::cluster::Node::idle_milli).sum();
    run.gpus_at_end = cluster
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| {
            let shared = &shared;
            n.free().iter().enumerate().map(move |(g, &free)| {
                let used = (GPU_MILLI - free) as u16;
                if shared[i * MAX_GPUS_PER_NODE as usize + g] {
                    used + SHARED_FLAG
                } else {
                    used
                }
            })
        })
        .collect();
    run
}

/// The artifact's reading of a run at every whole arrived percent 0..=`max_percent`
/// (`experiments/analysis/merge_alloc_discrete.py:96-120`): each record's arrived share of the
/// cluster's GPU milli rounded to a whole percent (halves to even, as Python's `round`), its
/// allocated share rounded to 0.01 %; at percent p, the mean allocated share of the records at
/// p, or, when there are none, of those within one point of p; `None` when neither exists.
#[must_use]
pub fn allocated_by_percent(
    curve: &[(u64, u64)],
    cluster_milli: u64,
    max_percent: u32,
) -> Vec<Option<f64>> {
    let n = max_percent as usize + 1;
    let mut sum = alloc::vec![0.0f64; n + 1];
    let mut count = alloc::vec![0u64; n + 1];
    for &(a, u) in curve {
        let p = round_half_even(a as f64 * 100.0 / cluster_milli as f64);
        if p < 0 || p as usize > n {
            continue;
        }
        sum[p as usize] += libm::round(u as f64 * 100.0 / cluster_milli as f64 * 100.0) / 100.0;
        count[p as usize] += 1;
    }
    (0..n)
        .map(|p| {
            if count[p] > 0 {
                return Some(sum[p] / count[p] as f64);
            }
            let lo = p.saturating_sub(1);
            let (s, c) = (lo..=p + 1).fold((0.0, 0u64), |(s, c), q| (s + sum[q], c + count[q]));
            (c > 0).then(|| s / c as f64)
        })
        .collect()
}

/// Rounds to the nearest integer, halves to even.
fn round_half_even(x: f64) -> i64 {
    let r = libm::round(x);
    if libm::fabs(x - libm::trunc(x)) == 0.5 && (r as i64) % 2 != 0 {
        (r - libm::copysign(1.0, x)) as i64
    } else {
        r as i64
    }
}
