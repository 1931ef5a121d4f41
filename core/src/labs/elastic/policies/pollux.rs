//! PolluxSched as its artifact runs it (`simulator/pollux.py`, petuum/adaptdl @de25dcc;
//! Qiao et al., OSDI'21 §4.2). Every round searches the allocation matrix A (jobs × nodes,
//! GPUs of job j on node n) with NSGA-II (pymoo 0.4.2: `population` individuals, `generations`
//! generations counting the first, as many offspring as individuals, binary tournaments on
//! dominance then crowding, crossover with probability 0.9, duplicates removed, rank-and-crowding
//! survival), warm-started from the last round's Pareto set.
//!
//! * **Fitness** (`Problem._evaluate`, l. 315–337): each job's speedup — its goodput at (nodes,
//!   GPUs) with the best batch size, over its goodput at its fair share (⌈GPUs / jobs⌉ on one
//!   node) — scaled by 1/(GPUs per node); a job whose row changes is charged the restart
//!   factor max(age − restarts·30 s, 0)/(age + 30 s); objective 1 is the power mean with p = −1
//!   of (speedup + 10⁻³) (maximised), objective 2 the cluster utility Σ speedup / GPUs of used
//!   nodes. The round takes the Pareto individual best on objective 1. A job that has not run
//!   yet has no throughput model: speedup = GPUs / fair share.
//! * **Operators** (l. 339–420): one-point crossover over jobs; mutation resets a row to the
//!   current allocation (p 0.1), zeroes entries of some rows (0.1 × 0.1), and raises entries on
//!   nodes with a free GPU to a uniform count up to the node's GPUs (probability 1/J per job,
//!   plus 1/(jobs on the node) for a job already there); repair keeps one multi-node job per node (a node's entries
//!   from its second multi-node job on are cleared), caps each job at its max replicas —
//!   min(2 × the most it has run on, 64, max B / min b), NCF 1 — and 16 nodes in a random node
//!   order, then caps each node at its GPUs, earlier jobs first (jobs ordered by attained
//!   service, then submission).
//!
//! The artifact's draws come from numpy's unseeded global generator; here from a PCG stream
//! seeded by `pollux.seed`, drawn only where a draw can change the outcome (a row with nothing
//! to cap is not shuffled), so runs differ from the artifact's as two artifact runs do.

use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::labs::elastic::params::PolluxSpec;
use crate::labs::elastic::sim::{Job, Round, Scheduler, NS_PER_S};

/// The artifact's cap on one job's nodes (`max_nodes = 16` in `_repair`).
const MAX_NODES_PER_JOB: usize = 16;
/// The artifact's cap on one job's replicas (`get_pollux_job_info`: "simulator can't handle
/// more").
const MAX_REPLICAS: u32 = 64;
/// Power-mean exponent of objective 1 (`p = -1`: harmonic, "more negative = more fair").
const POWER_MEAN_P: f64 = -1.0;
/// pymoo's crossover probability.
const CROSSOVER_PROB: f64 = 0.9;
/// pymoo's cap on mating attempts per generation (`n_max_iterations`).
const MAX_MATING_TRIES: u32 = 100;
/// pymoo's stand-in for an infinite crowding distance.
const CROWDING_INF: f64 = 1e14;

/// Pollux's state across rounds: the last Pareto set and its jobs.
#[derive(Clone, Debug)]
pub struct Pollux {
    population: usize,
    generations: u32,
    rng: Pcg64Mcg,
    /// The last round's Pareto set (each jobs × nodes, row-major) and its job order.
    prev: Option<(Vec<Vec<u32>>, Vec<usize>)>,
}

impl Pollux {
    /// A fresh policy.
    #[must_use]
    pub fn new(spec: &PolluxSpec) -> Pollux {
        Pollux {
            population: spec.population as usize,
            generations: spec.generations,
            rng: Pcg64Mcg::seed_from_u64(spec.seed ^ 0x9011_0c5e),
            prev: None,
        }
    }
}

/// One round's problem.
struct Problem<'a> {
    jobs: Vec<&'a Job>,
    nodes: usize,
    gpn: u32,
    base: Vec<u32>,
    /// Per job: max replicas.
    max_replicas: Vec<u32>,
    /// Per job: restart factor.
    restart_factor: Vec<f64>,
    /// Per job: goodput at the fair share (None: no model yet, speedup = r / fair replicas).
    base_goodput: Vec<Option<f64>>,
    fair_replicas: f64,
    /// Per job, speedup memo indexed [several nodes][replicas] (NaN: not computed).
    memo: Vec<Vec<f64>>,
}

impl Problem<'_> {
    fn speedup(&mut self, j: usize, n: u32, r: u32) -> f64 {
        if r == 0 {
            return 0.0;
        }
        // Goodput depends on the nodes only through whether there is more than one
        // (`_predict_network_time`): one memo entry per (one node or several, replicas).
        let width = self.nodes * self.gpn as usize + 1;
        let key = usize::from(n > 1) * width + r as usize;
        let m = self.memo[j][key];
        if !m.is_nan() {
            return m;
        }
        let v = match self.base_goodput[j] {
            None => f64::from(r) / self.fair_replicas,
            Some(base) => {
                let job = self.jobs[j];
                job.app.optimize(job.grad, n, r).goodput / base
            }
        };
        self.memo[j][key] = v;
        v
    }

    /// (−objective 1, −objective 2), both minimised as pymoo does.
    fn evaluate(&mut self, x: &[u32]) -> [f64; 2] {
        let nn = self.nodes;
        let j_count = self.jobs.len();
        let scale = 1.0 / f64::from(self.gpn);
        let mut sum_inv = 0.0;
        let mut sum_speedup = 0.0;
        let mut used_node = vec![false; nn];
        for j in 0..j_count {
            let row = &x[j * nn..(j + 1) * nn];
            let (mut n, mut r) = (0u32, 0u32);
            for (k, &c) in row.iter().enumerate() {
                if c > 0 {
                    n += 1;
                    r += c;
                    used_node[k] = true;
                }
            }
            let s = self.speedup(j, n, r);
            sum_speedup += s;
            let mut scaled = s * scale;
            if row != &self.base[j * nn..(j + 1) * nn] {
                scaled *= self.restart_factor[j];
            }
            sum_inv += libm::pow(scaled + 1e-3, POWER_MEAN_P);
        }
        let mean = libm::pow(sum_inv / j_count as f64, 1.0 / POWER_MEAN_P);
        let active_gpus = used_node.iter().filter(|&&u| u).count() as f64 * f64::from(self.gpn);
        let utility = if active_gpus > 0.0 {
            sum_speedup / active_gpus
        } else {
            0.0
        };
        [-mean, -utility]
    }

    fn mutate(&self, x: &mut [u32], rng: &mut Pcg64Mcg) {
        let nn = self.nodes;
        for j in 0..self.jobs.len() {
            if rng.random::<f64>() < 0.1 {
                x[j * nn..(j + 1) * nn].copy_from_slice(&self.base[j * nn..(j + 1) * nn]);
            }
        }
        for j in 0..self.jobs.len() {
            if rng.random::<f64>() < 0.1 {
                for v in &mut x[j * nn..(j + 1) * nn] {
                    if rng.random::<f64>() < 0.1 {
                        *v = 0;
                    }
                }
            }
        }
        let mut used = vec![0u32; nn];
        for j in 0..self.jobs.len() {
            for n in 0..nn {
                used[n] += x[j * nn + n];
            }
        }
        // pymoo's arrays are (individuals, jobs, nodes) and the artifact normalises over axis 1,
        // the jobs: on a node with a free GPU each job is raised with probability 1/J, and each
        // job already there with 1/(jobs there) more (`pollux.py` l. 362-371).
        let feasible: Vec<bool> = used.iter().map(|&u| u < self.gpn).collect();
        let jc = self.jobs.len();
        let p1 = 1.0 / jc as f64;
        let mut present = vec![0usize; nn];
        for j in 0..jc {
            for n in 0..nn {
                if x[j * nn + n] > 0 {
                    present[n] += 1;
                }
            }
        }
        for j in 0..jc {
            let row = &mut x[j * nn..(j + 1) * nn];
            for n in 0..nn {
                if !feasible[n] {
                    continue;
                }
                let p2 = if row[n] > 0 {
                    1.0 / present[n] as f64
                } else {
                    0.0
                };
                if rng.random::<f64>() < p1 + p2 - p1 * p2 {
                    let lo = row[n].min(self.gpn);
                    row[n] = rng.random_range(lo..=self.gpn);
                }
            }
        }
    }

    fn repair(&self, x: &mut [u32], rng: &mut Pcg64Mcg) {
        let nn = self.nodes;
        let jc = self.jobs.len();
        // (a) At most one multi-node job per node: from a node's second one on, cleared.
        let distributed: Vec<bool> = (0..jc)
            .map(|j| x[j * nn..(j + 1) * nn].iter().filter(|&&c| c > 0).count() > 1)
            .collect();
        for n in 0..nn {
            let mut seen = 0;
            for j in 0..jc {
                if distributed[j] && x[j * nn + n] > 0 {
                    seen += 1;
                }
                if seen > 1 {
                    x[j * nn + n] = 0;
                }
            }
        }
        // (b) Max replicas and 16 nodes per job, in a random node order.
        let mut order: Vec<usize> = (0..nn).collect();
        for j in 0..jc {
            let row = &mut x[j * nn..(j + 1) * nn];
            let total: u32 = row.iter().sum();
            let nodes = row.iter().filter(|&&c| c > 0).count();
            if total <= self.max_replicas[j] && nodes <= MAX_NODES_PER_JOB {
                continue;
            }
            for i in (1..nn).rev() {
                let k = rng.random_range(0..=i as u64) as usize;
                order.swap(i, k);
            }
            let (mut sum, mut count) = (0u32, 0usize);
            for &n in &order {
                let c = row[n];
                let keep = c.min(self.max_replicas[j] - sum.min(self.max_replicas[j]));
                if keep > 0 && count < MAX_NODES_PER_JOB {
                    row[n] = keep;
                    sum += keep;
                    count += 1;
                } else {
                    row[n] = 0;
                }
            }
        }
        // (c) Node capacity, earlier jobs first.
        for n in 0..nn {
            let mut sum = 0u32;
            for j in 0..jc {
                let c = x[j * nn + n];
                let keep = c.min(self.gpn - sum);
                x[j * nn + n] = keep;
                sum += keep;
            }
        }
    }
}

/// Individuals with objectives, rank and crowding.
struct Pop {
    x: Vec<Vec<u32>>,
    f: Vec<[f64; 2]>,
    rank: Vec<usize>,
    crowding: Vec<f64>,
}

/// A 64-bit FNV-1a fingerprint of a state: duplicates are found by it first, then compared.
fn fingerprint(x: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &v in x {
        h ^= u64::from(v);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn dominates(a: &[f64; 2], b: &[f64; 2]) -> bool {
    a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1])
}

/// Non-dominated sorting of two objectives: the fronts, each ascending index; stops once
/// `stop` are ranked. The fronts are those of pymoo's fast non-dominated sort; with two
/// objectives they are found in O(P log P): in (f₀, f₁) order a point belongs to the first
/// front whose last point does not dominate it.
fn fronts(f: &[[f64; 2]], stop: usize) -> Vec<Vec<usize>> {
    let mut idx: Vec<usize> = (0..f.len()).collect();
    idx.sort_by(|&a, &b| {
        f[a][0]
            .total_cmp(&f[b][0])
            .then(f[a][1].total_cmp(&f[b][1]))
            .then(a.cmp(&b))
    });
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in idx {
        let p = f[i];
        // Fronts are ordered: a point dominated by front k's last is dominated by every
        // earlier front's, so the first front that does not dominate it is found by bisection.
        let k = out.partition_point(|front| {
            let l = f[front[front.len() - 1]];
            l[1] < p[1] || (l[1] == p[1] && l[0] < p[0])
        });
        if k == out.len() {
            out.push(vec![i]);
        } else {
            out[k].push(i);
        }
    }
    let mut ranked = 0;
    let mut keep = out.len();
    for (k, front) in out.iter_mut().enumerate() {
        front.sort_unstable();
        ranked += front.len();
        if ranked >= stop {
            keep = k + 1;
            break;
        }
    }
    out.truncate(keep);
    out
}

/// pymoo's crowding distance of one front (`calc_crowding_distance`): extremes "infinite",
/// others the mean over objectives of the normalised gap between their neighbours; duplicate
/// points 0.
#[allow(clippy::needless_range_loop)] // m indexes the objectives of every point
fn crowding(f: &[[f64; 2]]) -> Vec<f64> {
    let n = f.len();
    if n <= 2 {
        return vec![CROWDING_INF; n];
    }
    let mut unique: Vec<usize> = Vec::new();
    for i in 0..n {
        if !unique.iter().any(|&u| f[u] == f[i]) {
            unique.push(i);
        }
    }
    let mut cd = vec![0.0; n];
    let mut sum = vec![0.0; unique.len()];
    for m in 0..2 {
        let mut idx: Vec<usize> = (0..unique.len()).collect();
        idx.sort_by(|&a, &b| f[unique[a]][m].total_cmp(&f[unique[b]][m]));
        let lo = f[unique[idx[0]]][m];
        let hi = f[unique[idx[idx.len() - 1]]][m];
        let norm = hi - lo;
        for (p, &u) in idx.iter().enumerate() {
            let v = f[unique[u]][m];
            let prev = if p == 0 {
                f64::NEG_INFINITY
            } else {
                f[unique[idx[p - 1]]][m]
            };
            let next = if p + 1 == idx.len() {
                f64::INFINITY
            } else {
                f[unique[idx[p + 1]]][m]
            };
            let d = if norm > 0.0 {
                (v - prev) / norm + (next - v) / norm
            } else {
                0.0
            };
            sum[u] += d;
        }
    }
    for (k, &u) in unique.iter().enumerate() {
        let v = sum[k] / 2.0;
        cd[u] = if v.is_infinite() { CROWDING_INF } else { v };
    }
    cd
}

impl Pop {
    /// Rank-and-crowding survival of `keep` individuals (`RankAndCrowdingSurvival`).
    fn survive(self, keep: usize, rng: &mut Pcg64Mcg) -> Pop {
        let fr = fronts(&self.f, keep);
        let mut chosen: Vec<(usize, usize, f64)> = Vec::new();
        for (k, front) in fr.iter().enumerate() {
            let fvals: Vec<[f64; 2]> = front.iter().map(|&i| self.f[i]).collect();
            let cd = crowding(&fvals);
            let mut idx: Vec<usize> = (0..front.len()).collect();
            if chosen.len() + front.len() > keep {
                // Random order, then by crowding descending (pymoo's randomised argsort).
                for i in (1..idx.len()).rev() {
                    let s = rng.random_range(0..=i as u64) as usize;
                    idx.swap(i, s);
                }
                idx.sort_by(|&a, &b| cd[b].total_cmp(&cd[a]));
                idx.truncate(keep - chosen.len());
            }
            chosen.extend(idx.into_iter().map(|p| (front[p], k, cd[p])));
            if chosen.len() >= keep {
                break;
            }
        }
        let mut out = Pop {
            x: Vec::with_capacity(chosen.len()),
            f: Vec::with_capacity(chosen.len()),
            rank: Vec::with_capacity(chosen.len()),
            crowding: Vec::with_capacity(chosen.len()),
        };
        let mut x = self.x;
        for (i, rank, cd) in chosen {
            out.x.push(core::mem::take(&mut x[i]));
            out.f.push(self.f[i]);
            out.rank.push(rank);
            out.crowding.push(cd);
        }
        out
    }

    /// Binary tournament: the dominating one, else the larger crowding, else either.
    fn tournament(&self, a: usize, b: usize, rng: &mut Pcg64Mcg) -> usize {
        if dominates(&self.f[a], &self.f[b]) {
            return a;
        }
        if dominates(&self.f[b], &self.f[a]) {
            return b;
        }
        if self.crowding[a] > self.crowding[b] {
            a
        } else if self.crowding[b] > self.crowding[a] {
            b
        } else if rng.random::<bool>() {
            a
        } else {
            b
        }
    }
}

impl Scheduler for Pollux {
    #[allow(clippy::too_many_lines)] // one round of the Pollux artifact's genetic search, in its order
    fn optimize(&mut self, round: &Round<'_>, prev: &[Vec<u32>]) -> Vec<Vec<u32>> {
        let nn = round.nodes as usize;
        let gpn = round.gpus_per_node;
        // Jobs by attained service, then submission (stable on index).
        let mut order: Vec<usize> = (0..round.active.len()).collect();
        order.sort_by_key(|&k| {
            let job = &round.jobs[round.active[k]];
            (job.attained_service, job.submit_ns)
        });
        let ids: Vec<usize> = order.iter().map(|&k| round.active[k]).collect();
        let jc = ids.len();
        let mut base = vec![0u32; jc * nn];
        for (row, &k) in order.iter().enumerate() {
            for &node in &prev[k] {
                base[row * nn + node as usize] += 1;
            }
        }
        let total_gpus = nn as u32 * gpn;
        let fair_replicas = libm::ceil(f64::from(total_gpus) / jc as f64);
        let jobs: Vec<&Job> = ids.iter().map(|&j| &round.jobs[j]).collect();
        let restart = (round.restart_ns / NS_PER_S) as f64;
        let problem_jobs = jobs.clone();
        let mut problem = Problem {
            nodes: nn,
            gpn,
            base,
            max_replicas: jobs
                .iter()
                .map(|job| {
                    if job.app.name == "ncf" {
                        1
                    } else {
                        (2 * job.max_profiled_replicas)
                            .clamp(1, MAX_REPLICAS)
                            .min(job.app.max_batch_size / job.app.min_local_bsz)
                    }
                })
                .collect(),
            restart_factor: jobs
                .iter()
                .map(|job| {
                    let age = ((round.now_ns - job.submit_ns) / NS_PER_S) as f64;
                    let restarts = f64::from(job.num_restarts.unwrap_or(0));
                    (age - restarts * restart).max(0.0) / (age + restart)
                })
                .collect(),
            base_goodput: jobs
                .iter()
                .map(|job| {
                    job.profiled
                        .then(|| job.app.optimize(job.grad, 1, fair_replicas as u32).goodput)
                        .filter(|g| *g > 0.0)
                })
                .collect(),
            fair_replicas,
            memo: vec![vec![f64::NAN; 2 * (nn * gpn as usize + 1)]; jc],
            jobs: problem_jobs,
        };
        // Initial population: the last Pareto set re-indexed to these jobs, or the current
        // allocation.
        let mut init: Vec<Vec<u32>> = match &self.prev {
            None => vec![problem.base.clone()],
            Some((states, prev_ids)) => states
                .iter()
                .map(|s| {
                    let mut x = vec![0u32; jc * nn];
                    for (row, id) in ids.iter().enumerate() {
                        if let Some(p) = prev_ids.iter().position(|q| q == id) {
                            x[row * nn..(row + 1) * nn].copy_from_slice(&s[p * nn..(p + 1) * nn]);
                        }
                    }
                    x
                })
                .collect(),
        };
        let rng = &mut self.rng;
        for x in &mut init {
            problem.repair(x, rng);
        }
        let mut seen: BTreeSet<(u64, Vec<u32>)> = BTreeSet::new();
        init.retain(|x| seen.insert((fingerprint(x), x.clone())));
        let f: Vec<[f64; 2]> = init.iter().map(|x| problem.evaluate(x)).collect();
        let n0 = init.len();
        let mut pop = Pop {
            x: init,
            f,
            rank: vec![0; n0],
            crowding: vec![0.0; n0],
        }
        .survive(n0, rng);
        for _ in 1..self.generations {
            let mut off: Vec<Vec<u32>> = Vec::new();
            let mut tries = 0;
            // pymoo stops after the mating that pushes its count past `n_max_iterations`.
            while off.len() < self.population && tries <= MAX_MATING_TRIES {
                tries += 1;
                let want = self.population - off.len();
                let matings = want.div_ceil(2);
                let len = pop.x.len();
                // Tournaments over concatenated random permutations.
                let mut perm: Vec<usize> = Vec::with_capacity(matings * 4 + len);
                while perm.len() < matings * 4 {
                    let mut p: Vec<usize> = (0..len).collect();
                    for i in (1..len).rev() {
                        let k = rng.random_range(0..=i as u64) as usize;
                        p.swap(i, k);
                    }
                    perm.extend(p);
                }
                let mut children: Vec<Vec<u32>> = Vec::with_capacity(matings * 2);
                let mut second: Vec<Vec<u32>> = Vec::with_capacity(matings);
                for m in 0..matings {
                    let a = pop.tournament(perm[4 * m], perm[4 * m + 1], rng);
                    let b = pop.tournament(perm[4 * m + 2], perm[4 * m + 3], rng);
                    let mut c0 = pop.x[a].clone();
                    let mut c1 = pop.x[b].clone();
                    let point = rng.random_range(0..jc as u64) as usize;
                    if rng.random::<f64>() < CROSSOVER_PROB {
                        for row in 0..point {
                            for n in 0..nn {
                                core::mem::swap(&mut c0[row * nn + n], &mut c1[row * nn + n]);
                            }
                        }
                    }
                    children.push(c0);
                    second.push(c1);
                }
                children.extend(second);
                for c in &mut children {
                    problem.mutate(c, rng);
                    problem.repair(c, rng);
                }
                for c in children {
                    if off.len() >= self.population {
                        break;
                    }
                    if seen.insert((fingerprint(&c), c.clone())) {
                        off.push(c);
                    }
                }
            }
            if off.is_empty() {
                break;
            }
            let keep = self.population;
            for c in off {
                let fc = problem.evaluate(&c);
                pop.x.push(c);
                pop.f.push(fc);
                pop.rank.push(0);
                pop.crowding.push(0.0);
            }
            pop = pop.survive(keep, rng);
            seen.clear();
            seen.extend(pop.x.iter().map(|x| (fingerprint(x), x.clone())));
        }
        // The Pareto set, ascending index; the individual best on objective 1.
        let front = fronts(&pop.f, 1).into_iter().next().unwrap_or_default();
        let mut best = front.first().copied().unwrap_or(0);
        for &i in &front {
            if pop.f[i][0] < pop.f[best][0] {
                best = i;
            }
        }
        let chosen = pop
            .x
            .get(best)
            .cloned()
            .unwrap_or_else(|| problem.base.clone());
        self.prev = Some((
            front.iter().map(|&i| pop.x[i].clone()).collect(),
            ids.clone(),
        ));
        // Back to the caller's order: a node per replica, nodes ascending.
        let mut out = vec![Vec::new(); jc];
        for (row, &k) in order.iter().enumerate() {
            for n in 0..nn {
                out[k].extend(core::iter::repeat_n(
                    n as u32,
                    chosen[row * nn + n] as usize,
                ));
            }
        }
        out
    }
}
