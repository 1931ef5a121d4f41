//! Greyhound's mitigation plans (Wu et al., USENIX ATC 2025, §5; artifact
//! github.com/wutianyuan1/Greyhound, `megatron/dp_planner.py` and the mitigation plan):
//!
//! - S2, micro-batch redistribution across DP replicas: each replica's iteration time is
//!   estimated from its compute benchmark — the slowest GPU of the replica (the benchmark times
//!   are first maximised over each PP and TP group); a replica within `slow_ratio` of the median
//!   GPU runs at the healthy iteration time, the others on the line through (fastest benchmark,
//!   healthy time) and (slowest benchmark, current time) — and the micro-batch counts Nᵢ ≥ 1,
//!   Σ Nᵢ = the global batch, minimise Σ (Nᵢ·tᵢ − mean)² ([`dp_shares`]; the artifact solves
//!   the same integer program with CVXPY/ECOS_BB).
//! - S3, communication-aware pipeline re-split: layers per stage ∝ 1 / the stage's slowest
//!   communication benchmark, rounded, the last stage taking the rest ([`pp_split`]), the same
//!   split in every replica.
//! - S4, checkpoint restart without the slow GPUs: [`super::restart`] with them marked unhealthy.

use alloc::vec::Vec;

use super::super::job::{Job, Plan};
use super::proportional_shares;

/// Estimated iteration time per replica, s: `bench[i]` the replica's slowest compute benchmark
/// (relative to a healthy GPU), `median` the median GPU's, `healthy_s` the fastest iteration
/// seen, `current_s` the current one.
#[must_use]
pub fn replica_times(
    bench: &[f64],
    median: f64,
    slow_ratio: f64,
    healthy_s: f64,
    current_s: f64,
) -> Vec<f64> {
    let lo = bench.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = bench.iter().copied().fold(0.0, f64::max);
    bench
        .iter()
        .map(|&b| {
            if b <= slow_ratio * median {
                healthy_s
            } else if hi <= lo {
                current_s
            } else {
                let slope = (current_s - healthy_s) / (hi - lo);
                current_s - slope * (hi - b)
            }
        })
        .collect()
}

fn spread(n: &[u32], t: &[f64]) -> f64 {
    let load: Vec<f64> = n.iter().zip(t).map(|(&n, &t)| f64::from(n) * t).collect();
    let mean = load.iter().sum::<f64>() / load.len().max(1) as f64;
    load.iter().map(|x| (x - mean) * (x - mean)).sum()
}

/// Micro-batches per replica minimising Σ (Nᵢ·tᵢ − mean)² with Nᵢ ≥ 1 and Σ Nᵢ = `total`:
/// start from shares ∝ 1/tᵢ, then move single micro-batches between replicas while that
/// lowers the spread (the best move each step, ties to the lowest indices). If `total` is
/// below the replica count every replica cannot get one; then the shares ∝ 1/tᵢ stand.
#[must_use]
pub fn dp_shares(times: &[f64], total: u32) -> Vec<u32> {
    let speeds: Vec<f64> = times
        .iter()
        .map(|&t| if t > 0.0 { 1.0 / t } else { 0.0 })
        .collect();
    let mut n = proportional_shares(&speeds, total);
    if (total as usize) < times.len() {
        return n;
    }
    // Lift zeros to one, taking from the largest shares.
    while let Some(z) = n.iter().position(|&x| x == 0) {
        let Some(big) = (0..n.len()).max_by(|&a, &b| n[a].cmp(&n[b]).then(b.cmp(&a))) else {
            break;
        };
        n[big] -= 1;
        n[z] += 1;
    }
    let limit = times.len() * total as usize + 1;
    for _ in 0..limit {
        let now = spread(&n, times);
        let mut best: Option<(f64, usize, usize)> = None;
        for i in 0..n.len() {
            if n[i] <= 1 {
                continue;
            }
            for j in 0..n.len() {
                if i == j {
                    continue;
                }
                n[i] -= 1;
                n[j] += 1;
                let v = spread(&n, times);
                n[i] += 1;
                n[j] -= 1;
                if v < now - 1e-12 * now.max(1.0) && best.is_none_or(|b| v < b.0) {
                    best = Some((v, i, j));
                }
            }
        }
        let Some((_, i, j)) = best else { break };
        n[i] -= 1;
        n[j] += 1;
    }
    n
}

/// Layers per stage ∝ 1 / `comm[s]` (each stage's slowest communication benchmark), rounded,
/// the last stage taking the rest; `None` if a stage would get no layer or more than `cap[s]`.
#[must_use]
pub fn pp_split(comm: &[f64], cap: &[u32], layers: u32) -> Option<Vec<u32>> {
    let w: Vec<f64> = comm.iter().map(|&c| 1.0 / c.max(1e-12)).collect();
    let sum: f64 = w.iter().sum();
    let p = w.len();
    if p == 0 || cap.len() != p {
        return None;
    }
    let mut out = Vec::with_capacity(p);
    let mut used = 0i64;
    for &x in &w[..p - 1] {
        let n = libm::round(f64::from(layers) * x / sum) as i64;
        out.push(n);
        used += n;
    }
    out.push(i64::from(layers) - used);
    if out
        .iter()
        .zip(cap)
        .any(|(&n, &c)| n < 1 || n > i64::from(c))
    {
        return None;
    }
    Some(out.into_iter().map(|n| n as u32).collect())
}

/// `current` with every replica's layers re-split as `layers` (S3); `None` if a replica's stage
/// count differs.
#[must_use]
pub fn with_layers(current: &Plan, layers: &[u32]) -> Option<Plan> {
    let mut out = current.clone();
    for r in &mut out.replicas {
        if r.stages.len() != layers.len() {
            return None;
        }
        for (s, &n) in r.stages.iter_mut().zip(layers) {
            s.layers = n;
        }
    }
    Some(out)
}

/// `current` with the micro-batch shares `shares` (S2).
#[must_use]
pub fn with_shares(current: &Plan, shares: &[u32]) -> Plan {
    let mut out = current.clone();
    for (r, &n) in out.replicas.iter_mut().zip(shares) {
        r.micro_batches = n;
    }
    out.replicas.retain(|r| r.micro_batches > 0);
    out
}

/// Most layers each stage of `current`'s first replica may hold.
#[must_use]
pub fn stage_caps(job: &Job, current: &Plan) -> Vec<u32> {
    current.replicas.first().map_or_else(Vec::new, |r| {
        r.stages
            .iter()
            .map(|s| job.layer_cap(s.gpus.len() as u32))
            .collect()
    })
}
