//! The applications of the Pollux artifact and its goodput model (Qiao et al., "Pollux:
//! Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning", OSDI'21, §3.1–3.2;
//! petuum/adaptdl @de25dcc, `simulator/goodput.py`, `simulator/applications.py`).
//!
//! A job's *goodput* at a configuration (N nodes, R replicas, per-GPU batch b, s accumulation
//! steps, total batch B = R·b·(s+1)) is its throughput (samples/s) times its statistical
//! efficiency E(B): how much training progress a sample buys at batch B relative to the initial
//! batch M₀. Progress is counted in M₀-sized steps, so a job at goodput g advances g/M₀ per
//! second; its epochs end at fixed progress marks from the artifact's validation runs.

use super::profiles::APPS;

/// The throughput model's parameters (`goodput.py` `PerfParams`, l. 26–50), seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerfParams {
    /// Constant term of one micro-batch's compute time.
    pub alpha_c: f64,
    /// Compute time per sample of the micro-batch.
    pub beta_c: f64,
    /// Constant term of the all-reduce across nodes.
    pub alpha_n: f64,
    /// Its growth per replica beyond two.
    pub beta_n: f64,
    /// Constant term of the all-reduce inside one node.
    pub alpha_r: f64,
    /// Its growth per replica beyond two.
    pub beta_r: f64,
    /// Overlap of compute and network: 1 = none (times add), 10 ≈ full (the larger wins).
    pub gamma: f64,
}

/// One validated batch size's per-epoch columns: `[progress, iteration, grad_sqr, grad_var]`
/// at the end of each epoch (`validation-<B>.csv`).
#[derive(Clone, Copy, Debug)]
pub struct Validation {
    /// Total batch size of the run.
    pub batch_size: u32,
    /// Per epoch: progress (M₀-steps), optimiser steps, |g|², tr Σ.
    pub epochs: &'static [[f64; 4]],
}

/// One application: the artifact's constants (`applications.py`, l. 23–48 and 231–238), the
/// fitted throughput model and the validation runs.
#[derive(Clone, Copy, Debug)]
pub struct AppProfile {
    /// Name (`bert`, `cifar10`, `deepspeech2`, `imagenet`, `ncf`, `yolov3`).
    pub name: &'static str,
    /// M₀: the smallest validated batch size, where E = 1.
    pub init_batch_size: u32,
    /// Largest total batch size.
    pub max_batch_size: u32,
    /// Per-GPU batch size range.
    pub min_local_bsz: u32,
    /// Largest per-GPU (atomic) batch size.
    pub max_local_bsz: u32,
    /// Epochs to completion.
    pub max_epochs: u32,
    /// The throughput model, fitted by the artifact's `fit_perf_params` on every profiled
    /// configuration (`scripts/pollux_profiles.py`).
    pub perf: PerfParams,
    /// The fit's RMS error in log step time (stated in docs/MODEL.md).
    pub fit_rms_log_step: f64,
    /// Validation runs, ascending batch size.
    pub validation: &'static [Validation],
}

/// The application named `name`.
#[must_use]
pub fn app(name: &str) -> Option<&'static AppProfile> {
    APPS.iter().find(|a| a.name == name)
}

/// The names of the applications, in name order.
pub const APPS_NAMES: [&str; 6] = [
    "bert",
    "cifar10",
    "deepspeech2",
    "imagenet",
    "ncf",
    "yolov3",
];

/// The names of the applications, for error messages.
#[must_use]
pub fn app_names() -> alloc::vec::Vec<&'static str> {
    APPS.iter().map(|a| a.name).collect()
}

/// Tolerance of the artifact's ceil operations (`eps = 1e-8`).
const EPS: f64 = 1e-8;

/// A configuration chosen for (N, R): per-GPU batch, accumulation steps and its goodput.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Goodput, samples/s × efficiency (0 when no batch size is valid).
    pub goodput: f64,
    /// Per-GPU (atomic) batch size.
    pub atomic_bsz: u32,
    /// Gradient-accumulation steps beyond the first micro-batch.
    pub accum_steps: u32,
}

impl PerfParams {
    /// Compute time of one micro-batch of `b` samples (`_predict_accum_time`).
    #[must_use]
    pub fn accum_time_s(&self, b: f64) -> f64 {
        self.alpha_c + self.beta_c * b
    }

    /// All-reduce time on `n` nodes with `r` replicas (`_predict_network_time`): the
    /// slowest link's constant plus its growth per replica beyond two; ~0 on one GPU.
    #[must_use]
    pub fn network_time_s(&self, n: u32, r: u32) -> f64 {
        let (a, b) = if n > 1 {
            (self.alpha_n, self.beta_n)
        } else if r > 1 {
            (self.alpha_r, self.beta_r)
        } else {
            (1e-8, 1e-8)
        };
        a + b * (f64::from(r) - 2.0).max(1e-8)
    }

    /// Time of the micro-batch that ends in the all-reduce, compute and network overlapped
    /// (`_predict_log_optim_time`): (T_acc^γ + T_net^γ)^(1/γ).
    #[must_use]
    pub fn optim_time_s(&self, n: u32, r: u32, b: f64) -> f64 {
        let g = self.gamma;
        let acc = self.accum_time_s(b);
        let net = self.network_time_s(n, r);
        libm::exp(libm::log(libm::pow(acc, g) + libm::pow(net, g)) / g)
    }

    /// Time of one optimiser step: s micro-batches of compute, then one overlapped with the
    /// all-reduce (`GoodputFunction.throughput`).
    #[must_use]
    pub fn iteration_time_s(&self, n: u32, r: u32, b: f64, s: u32) -> f64 {
        f64::from(s) * self.accum_time_s(b) + self.optim_time_s(n, r, b)
    }
}

/// Gradient statistics: |g|² and tr Σ (`GradParams`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradStats {
    /// Squared norm of the true gradient.
    pub sqr: f64,
    /// Trace of the per-sample gradient covariance.
    pub var: f64,
}

impl GradStats {
    /// Statistical efficiency of total batch `batch` against M₀ = `init` (`efficiency`,
    /// `goodput.py` l. 81–89): gain/scale with gain = (var + sqr)/(var/scale + sqr), i.e.
    /// (φ + M₀)/(φ + B) with the gradient noise scale φ = M₀·var/sqr.
    #[must_use]
    pub fn efficiency(&self, batch: f64, init: f64) -> f64 {
        self.gain(batch, init) / (batch / init)
    }

    /// Progress per step at `batch`, in M₀-steps.
    #[must_use]
    pub fn gain(&self, batch: f64, init: f64) -> f64 {
        let scale = batch / init;
        let denom = self.var / scale + self.sqr;
        if denom > 0.0 {
            (self.var + self.sqr) / denom
        } else {
            1.0
        }
    }
}

impl AppProfile {
    /// Progress (M₀-steps) at the end of epoch `epoch` − 1: the smallest over the validation
    /// runs, 0 for epoch 0 (`get_progress`).
    #[must_use]
    pub fn progress_at_epoch(&self, epoch: u32) -> f64 {
        if epoch == 0 {
            return 0.0;
        }
        let e = (epoch - 1) as usize;
        self.validation
            .iter()
            .map(|v| v.epochs[e.min(v.epochs.len() - 1)][0])
            .fold(f64::INFINITY, f64::min)
    }

    /// Progress at completion: the end of the last epoch (`target_metric` is unset for every
    /// application, so a job completes after `max_epochs`).
    #[must_use]
    pub fn completion_progress(&self) -> f64 {
        self.progress_at_epoch(self.max_epochs)
    }

    /// Column `col` of epoch `epoch`, interpolated linearly in the batch size between the
    /// validated sizes around `batch` (`_validated_batch_sizes`, `get_grad_stats`,
    /// `get_iteration`); a batch outside the validated range takes the nearest run's value.
    fn interpolated(&self, batch: f64, epoch: u32, col: usize) -> f64 {
        let e = epoch.min(self.max_epochs - 1) as usize;
        let at = |v: &Validation| v.epochs[e.min(v.epochs.len() - 1)][col];
        let vs = self.validation;
        let first = &vs[0];
        let last = &vs[vs.len() - 1];
        if batch <= f64::from(first.batch_size) {
            return at(first);
        }
        if batch >= f64::from(last.batch_size) {
            return at(last);
        }
        let hi = vs
            .iter()
            .position(|v| f64::from(v.batch_size) >= batch)
            .unwrap_or(vs.len() - 1);
        let (lo_v, hi_v) = (&vs[hi.saturating_sub(1)], &vs[hi]);
        let (lo_b, hi_b) = (f64::from(lo_v.batch_size), f64::from(hi_v.batch_size));
        if hi_b == batch || lo_b == hi_b {
            return at(hi_v);
        }
        ((batch - lo_b) * at(hi_v) + (hi_b - batch) * at(lo_v)) / (hi_b - lo_b)
    }

    /// The true gradient statistics during epoch `epoch` at total batch `batch`.
    #[must_use]
    pub fn grad_stats(&self, batch: f64, epoch: u32) -> GradStats {
        GradStats {
            sqr: self.interpolated(batch, epoch, 2),
            var: self.interpolated(batch, epoch, 3),
        }
    }

    /// Optimiser steps done at the end of epoch `epoch` by a run at total batch `batch`
    /// (`get_iteration`).
    #[must_use]
    pub fn iterations(&self, batch: f64, epoch: u32) -> f64 {
        self.interpolated(batch, epoch, 1)
    }

    /// Pollux's choice of batch size for (N, R) (`GoodputFunction.optimize`, `goodput.py`
    /// l. 91–145, with accumulation): 50 total batch sizes spaced geometrically from
    /// max(M₀, min b·R) to the largest; per candidate s and b as the artifact rounds them;
    /// candidates whose b leaves the per-GPU range score 0; the first best wins.
    #[must_use]
    pub fn optimize(&self, grad: GradStats, n: u32, r: u32) -> Config {
        let init = f64::from(self.init_batch_size);
        let max_b = f64::from(self.max_local_bsz);
        let min_b = f64::from(self.min_local_bsz);
        let lo = init.max(min_b * f64::from(r));
        let hi = f64::from(self.max_batch_size);
        let mut best = Config {
            goodput: f64::NEG_INFINITY,
            atomic_bsz: 0,
            accum_steps: 0,
        };
        const CANDIDATES: u32 = 50;
        for i in 0..CANDIDATES {
            let batch = geomspace(lo, hi, i, CANDIDATES);
            let local = batch / f64::from(r);
            let mut s = libm::ceil(local / max_b - EPS) - 1.0;
            if r == 1 && local > init + EPS {
                s = s.max(1.0);
            }
            let s = s.max(0.0);
            let b = libm::ceil(local / (s + 1.0) - EPS);
            let total = f64::from(r) * b * (s + 1.0);
            let valid = min_b <= b && b <= max_b;
            let goodput = if valid {
                let thr = total / self.perf.iteration_time_s(n, r, b, s as u32);
                thr * grad.efficiency(total, init)
            } else {
                0.0
            };
            if goodput > best.goodput {
                best = Config {
                    goodput,
                    atomic_bsz: b as u32,
                    accum_steps: s as u32,
                };
            }
        }
        best
    }

    /// A fixed total batch `batch` on R replicas (`Job.update_local_bsz` with a target batch
    /// size, `simulator.py` l. 76–81): local = ⌈B/R⌉, s = ⌈local/max b⌉ − 1 (at least 1 on one
    /// GPU above M₀), b = ⌈local/(s+1)⌉.
    #[must_use]
    pub fn fixed_config(&self, batch: u32, r: u32) -> (u32, u32) {
        let local = libm::ceil(f64::from(batch) / f64::from(r) - EPS);
        let mut s = libm::ceil(local / f64::from(self.max_local_bsz) - EPS) - 1.0;
        if r == 1 && batch > self.init_batch_size {
            s = s.max(1.0);
        }
        let s = s.max(0.0);
        let b = libm::ceil(local / (s + 1.0) - EPS);
        (b as u32, s as u32)
    }

    /// The artifact's final clamp (`simulator.py` l. 82–83): b ≤ ⌊max B / (R·(s+1))⌋.
    #[must_use]
    pub fn clamp_atomic(&self, b: u32, r: u32, s: u32) -> u32 {
        let count = r * (s + 1);
        b.min(self.max_batch_size / count.max(1))
    }
}

/// numpy's `geomspace(lo, hi)` point `i` of `num`: lo·(hi/lo)^(i/(num−1)), the ends exact.
fn geomspace(lo: f64, hi: f64, i: u32, num: u32) -> f64 {
    if i == 0 {
        return lo;
    }
    if i + 1 == num {
        return hi;
    }
    let t = f64::from(i) / f64::from(num - 1);
    libm::exp(libm::log(lo) + t * (libm::log(hi) - libm::log(lo)))
}
