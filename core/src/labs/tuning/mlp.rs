//! A real MLP trainer in f32: a fixed random teacher network generates a learnable regression
//! task, and a student MLP of a chosen width learns it with SGD or Adam under the standard
//! parametrization (SP) or μP. Forward, backward and optimizer steps run on real numbers; only
//! `libm` and explicit summation orders are used, so a run is bit-identical natively and in wasm.
//!
//! Student: `x (input_dim) → W_in → ReLU → [W_h → ReLU] × hidden_layers → W_out → ŷ (output_dim)`,
//! a bias on every layer. Loss: mean squared error over the batch and the outputs.

use alloc::vec;
use alloc::vec::Vec;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::mup::{LayerClass, MupRule};

/// A reported loss above this is treated as a diverged run (the loss of predicting zero on the
/// default task is about 0.3).
pub const DIVERGED_LOSS: f64 = 1e3;

/// How weights are initialised and learning rates scaled with width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Parametrization {
    /// Standard parametrization: init variance 1/fan_in, one learning rate for every layer, no
    /// output multiplier, whatever the width.
    Sp,
    /// μP relative to a base width (Tensor Programs V, Table 3, multiplier form).
    Mup,
}

/// The optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimizer {
    /// Plain SGD (no momentum).
    Sgd,
    /// Adam (β₁ 0.9, β₂ 0.999, ε 1e-8), no weight decay.
    Adam,
}

/// The synthetic task: `y = V · tanh(U · x)` with a fixed random teacher, `x ~ N(0, I)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Task {
    /// Input dimension.
    pub input_dim: u32,
    /// Output dimension.
    pub output_dim: u32,
    /// Hidden units of the teacher.
    pub teacher_width: u32,
    /// Seed of the teacher, the training batches and the held-out set.
    pub seed: u64,
}

/// One training run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSpec {
    /// Student width n.
    pub width: u32,
    /// Width at which μP equals SP (the μP multipliers use m = width / base width).
    pub base_width: u32,
    /// Hidden n×n matmuls.
    pub hidden_layers: u32,
    /// SP or μP.
    pub parametrization: Parametrization,
    /// SGD or Adam.
    pub optimizer: Optimizer,
    /// Global learning rate η (each layer's is η × its multiplier).
    pub learning_rate: f64,
    /// Optimizer steps.
    pub steps: u32,
    /// Samples per step.
    pub batch: u32,
    /// Held-out samples the final loss is measured on.
    pub eval_samples: u32,
    /// Which replica: replica r draws its own initial weights and training batches (the
    /// teacher and the held-out set stay the task's); replica 0 is the task seed's own draw.
    pub replica: u32,
}

/// The outcome of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunResult {
    /// Held-out mean squared error after training (capped at [`DIVERGED_LOSS`]).
    pub eval_loss: f64,
    /// Whether training blew up (a non-finite or capped loss).
    pub diverged: bool,
    /// Loss of the zero predictor on the held-out set (the task's scale).
    pub zero_loss: f64,
}

fn gaussian(rng: &mut Pcg64Mcg) -> f32 {
    crate::units::standard_normal(rng) as f32
}

fn gaussians(rng: &mut Pcg64Mcg, n: usize, std: f32) -> Vec<f32> {
    (0..n).map(|_| gaussian(rng) * std).collect()
}

/// Dot product with eight running sums (fixed order: the same bits on every target).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            s[k] += x[k] * y[k];
        }
    }
    let mut t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (x, y) in ra.iter().zip(rb) {
        t += x * y;
    }
    t
}

fn axpy(y: &mut [f32], a: f32, x: &[f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// One dense layer of F stacked trials (a batched matmul): trial f computes
/// `out_f = mult · W_f · in_f + b_f`, with `W_f` row-major `[fan_out][fan_in]` and the trials'
/// weights, biases, gradients and Adam moments stacked trial-major. Every output element of a
/// trial is computed by the same operations in the same order whatever F is, so a trial fused
/// with others gives the same bits as the trial alone.
#[derive(Clone, Debug)]
struct Dense {
    fan_in: usize,
    fan_out: usize,
    trials: usize,
    w: Vec<f32>,
    b: Vec<f32>,
    mult: f32,
    /// Per trial.
    lr_w: Vec<f32>,
    /// Per trial.
    lr_b: Vec<f32>,
    gw: Vec<f32>,
    gb: Vec<f32>,
    mw: Vec<f32>,
    vw: Vec<f32>,
    mb: Vec<f32>,
    vb: Vec<f32>,
}

/// A layer's input: one `[batch][fan_in]` block shared by every trial (the data batch), or one
/// block per trial (`[trial][batch][fan_in]`, the trials' own activations).
#[derive(Clone, Copy)]
enum Input<'a> {
    Shared(&'a [f32]),
    PerTrial(&'a [f32]),
}

impl Input<'_> {
    fn trial(&self, f: usize, len: usize) -> &[f32] {
        match *self {
            Input::Shared(x) => x,
            Input::PerTrial(x) => &x[f * len..(f + 1) * len],
        }
    }
}

impl Dense {
    fn w_len(&self) -> usize {
        self.fan_in * self.fan_out
    }

    /// `out` becomes `[trial][batch][fan_out]`; dead trials' blocks are left at zero.
    fn forward(&self, input: Input<'_>, batch: usize, alive: &[bool], out: &mut Vec<f32>) {
        let (fi, fo, wl) = (self.fan_in, self.fan_out, self.w_len());
        out.clear();
        out.resize(self.trials * batch * fo, 0.0);
        for (f, _) in alive.iter().enumerate().filter(|(_, a)| **a) {
            let x = input.trial(f, batch * fi);
            let w = &self.w[f * wl..(f + 1) * wl];
            let b = &self.b[f * fo..(f + 1) * fo];
            let o = &mut out[f * batch * fo..(f + 1) * batch * fo];
            for r in 0..batch {
                let xr = &x[r * fi..(r + 1) * fi];
                for (j, oj) in o[r * fo..(r + 1) * fo].iter_mut().enumerate() {
                    *oj = self.mult * dot(&w[j * fi..(j + 1) * fi], xr) + b[j];
                }
            }
        }
    }

    /// Sets the gradients from `dout` (`[trial][batch][fan_out]`) and writes the input gradient
    /// (`[trial][batch][fan_in]`) if asked.
    fn backward(
        &mut self,
        input: Input<'_>,
        dout: &[f32],
        batch: usize,
        alive: &[bool],
        din: Option<&mut Vec<f32>>,
    ) {
        let (fi, fo, wl) = (self.fan_in, self.fan_out, self.w_len());
        self.gw.iter_mut().for_each(|g| *g = 0.0);
        self.gb.iter_mut().for_each(|g| *g = 0.0);
        for (f, _) in alive.iter().enumerate().filter(|(_, a)| **a) {
            let x = input.trial(f, batch * fi);
            let d = &dout[f * batch * fo..(f + 1) * batch * fo];
            let gw = &mut self.gw[f * wl..(f + 1) * wl];
            let gb = &mut self.gb[f * fo..(f + 1) * fo];
            for r in 0..batch {
                let xr = &x[r * fi..(r + 1) * fi];
                for j in 0..fo {
                    let g = d[r * fo + j];
                    gb[j] += g;
                    axpy(&mut gw[j * fi..(j + 1) * fi], self.mult * g, xr);
                }
            }
        }
        if let Some(din) = din {
            din.clear();
            din.resize(self.trials * batch * fi, 0.0);
            for (f, _) in alive.iter().enumerate().filter(|(_, a)| **a) {
                let w = &self.w[f * wl..(f + 1) * wl];
                let d = &dout[f * batch * fo..(f + 1) * batch * fo];
                let di = &mut din[f * batch * fi..(f + 1) * batch * fi];
                for r in 0..batch {
                    let dr = &mut di[r * fi..(r + 1) * fi];
                    for j in 0..fo {
                        axpy(dr, self.mult * d[r * fo + j], &w[j * fi..(j + 1) * fi]);
                    }
                }
            }
        }
    }

    fn step(&mut self, opt: Optimizer, t: u32, alive: &[bool]) {
        let (fo, wl) = (self.fan_out, self.w_len());
        let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
        let c1 = 1.0 - libm::powf(b1, t as f32);
        let c2 = 1.0 - libm::powf(b2, t as f32);
        let adam = |p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], lr: f32| {
            for i in 0..p.len() {
                m[i] = b1 * m[i] + (1.0 - b1) * g[i];
                v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
                p[i] -= lr * (m[i] / c1) / (libm::sqrtf(v[i] / c2) + eps);
            }
        };
        for (f, _) in alive.iter().enumerate().filter(|(_, a)| **a) {
            let (ws, bs) = (f * wl..(f + 1) * wl, f * fo..(f + 1) * fo);
            match opt {
                Optimizer::Sgd => {
                    axpy(&mut self.w[ws.clone()], -self.lr_w[f], &self.gw[ws]);
                    axpy(&mut self.b[bs.clone()], -self.lr_b[f], &self.gb[bs]);
                }
                Optimizer::Adam => {
                    adam(
                        &mut self.w[ws.clone()],
                        &self.gw[ws.clone()],
                        &mut self.mw[ws.clone()],
                        &mut self.vw[ws],
                        self.lr_w[f],
                    );
                    adam(
                        &mut self.b[bs.clone()],
                        &self.gb[bs.clone()],
                        &mut self.mb[bs.clone()],
                        &mut self.vb[bs],
                        self.lr_b[f],
                    );
                }
            }
        }
    }
}

/// The teacher network and a stream of samples from it.
struct Teacher {
    task: Task,
    u: Vec<f32>,
    v: Vec<f32>,
}

impl Teacher {
    fn new(task: Task) -> Teacher {
        let mut rng = Pcg64Mcg::seed_from_u64(task.seed ^ 0x7EAC_4E20);
        let (d, h, o) = (
            task.input_dim as usize,
            task.teacher_width as usize,
            task.output_dim as usize,
        );
        let u = gaussians(&mut rng, h * d, 1.0 / libm::sqrtf(d as f32));
        let v = gaussians(&mut rng, o * h, 1.0 / libm::sqrtf(h as f32));
        Teacher { task, u, v }
    }

    /// `n` samples: inputs (n × d) and targets (n × o).
    fn sample(&self, rng: &mut Pcg64Mcg, n: usize) -> (Vec<f32>, Vec<f32>) {
        let (d, h, o) = (
            self.task.input_dim as usize,
            self.task.teacher_width as usize,
            self.task.output_dim as usize,
        );
        let x = gaussians(rng, n * d, 1.0);
        let mut y = vec![0.0f32; n * o];
        let mut hid = vec![0.0f32; h];
        for r in 0..n {
            let xr = &x[r * d..(r + 1) * d];
            for (k, hk) in hid.iter_mut().enumerate() {
                *hk = libm::tanhf(dot(&self.u[k * d..(k + 1) * d], xr));
            }
            for j in 0..o {
                y[r * o + j] = dot(&self.v[j * h..(j + 1) * h], &hid);
            }
        }
        (x, y)
    }
}

fn layer_class(i: usize, count: usize) -> LayerClass {
    if i == 0 {
        LayerClass::Embedding
    } else if i + 1 == count {
        LayerClass::Readout
    } else {
        LayerClass::Hidden
    }
}

/// F students of one architecture and width, one learning rate each, stacked layer by layer.
struct Students {
    layers: Vec<Dense>,
    optimizer: Optimizer,
}

impl Students {
    fn new(task: &Task, spec: &RunSpec, learning_rates: &[f64]) -> Students {
        let n = spec.width as usize;
        let trials = learning_rates.len();
        let mut dims = vec![task.input_dim as usize];
        dims.extend(core::iter::repeat_n(n, spec.hidden_layers as usize + 1));
        dims.push(task.output_dim as usize);
        let count = dims.len() - 1;
        // Each width gets its own initial weights; every learning rate (every trial) of one
        // width starts from the same ones.
        let mut rng = Pcg64Mcg::seed_from_u64(
            task.seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(u64::from(spec.width))
                .wrapping_add(u64::from(spec.replica) << 32),
        );
        let m = f64::from(spec.width) / f64::from(spec.base_width.max(1));
        let layers = (0..count)
            .map(|i| {
                let (fi, fo) = (dims[i], dims[i + 1]);
                let class = layer_class(i, count);
                // (init variance × 1/fan_in, forward multiplier, weight LR ×, bias LR ×)
                let (init_var, mult, lr_w, lr_b) = match spec.parametrization {
                    Parametrization::Sp => (1.0, 1.0, 1.0, 1.0),
                    Parametrization::Mup => {
                        let r = class.mup_rule(m);
                        // A bias has fan_out entries: width-sized (μP's "bias" class) except
                        // the readout's, whose size is the output dimension and so finite:
                        // its rates do not scale (mup's MuSGD/MuAdam `fixed_p` group).
                        let b = if class == LayerClass::Readout {
                            MupRule::FIXED
                        } else {
                            LayerClass::Bias.mup_rule(m)
                        };
                        let (lw, lb) = match spec.optimizer {
                            Optimizer::Sgd => (r.sgd_lr_mult, b.sgd_lr_mult),
                            Optimizer::Adam => (r.adam_lr_mult, b.adam_lr_mult),
                        };
                        (r.init_var_mult, r.output_mult, lw, lb)
                    }
                };
                let std = libm::sqrt(init_var / fi as f64) as f32;
                let w0 = gaussians(&mut rng, fi * fo, std);
                let mut w = Vec::with_capacity(trials * fi * fo);
                for _ in 0..trials {
                    w.extend_from_slice(&w0);
                }
                Dense {
                    fan_in: fi,
                    fan_out: fo,
                    trials,
                    w,
                    b: vec![0.0; trials * fo],
                    mult: mult as f32,
                    lr_w: learning_rates
                        .iter()
                        .map(|&eta| (eta * lr_w) as f32)
                        .collect(),
                    lr_b: learning_rates
                        .iter()
                        .map(|&eta| (eta * lr_b) as f32)
                        .collect(),
                    gw: vec![0.0; trials * fi * fo],
                    gb: vec![0.0; trials * fo],
                    mw: vec![0.0; trials * fi * fo],
                    vw: vec![0.0; trials * fi * fo],
                    mb: vec![0.0; trials * fo],
                    vb: vec![0.0; trials * fo],
                }
            })
            .collect();
        Students {
            layers,
            optimizer: spec.optimizer,
        }
    }

    /// Forward pass keeping every layer's per-trial input after layer 0 (post-ReLU activations,
    /// `acts[i - 1]` is layer i's input); returns ŷ as `[trial][batch][output_dim]`.
    fn forward(
        &self,
        x: &[f32],
        batch: usize,
        alive: &[bool],
        acts: &mut Vec<Vec<f32>>,
    ) -> Vec<f32> {
        acts.clear();
        let last = self.layers.len() - 1;
        let mut out = Vec::new();
        for (i, l) in self.layers.iter().enumerate() {
            let input = if i == 0 {
                Input::Shared(x)
            } else {
                Input::PerTrial(&acts[i - 1])
            };
            l.forward(input, batch, alive, &mut out);
            if i < last {
                for v in &mut out {
                    *v = v.max(0.0);
                }
                acts.push(core::mem::take(&mut out));
            }
        }
        out
    }

    /// One optimizer step on the batch `(x, y)`; returns each trial's loss before the step.
    fn step(
        &mut self,
        x: &[f32],
        y: &[f32],
        batch: usize,
        t: u32,
        alive: &mut [bool],
        scratch: &mut Scratch,
    ) -> Vec<f64> {
        let pred = self.forward(x, batch, alive, &mut scratch.acts);
        let per_trial = y.len();
        let losses: Vec<f64> = (0..alive.len())
            .map(|f| {
                if alive[f] {
                    mse(&pred[f * per_trial..(f + 1) * per_trial], y)
                } else {
                    DIVERGED_LOSS
                }
            })
            .collect();
        for (a, l) in alive.iter_mut().zip(&losses) {
            if !l.is_finite() || *l > DIVERGED_LOSS {
                *a = false;
            }
        }
        let scale = 2.0 / per_trial as f32;
        let grad = &mut scratch.grad;
        grad.clear();
        grad.extend(
            pred.iter()
                .zip(y.iter().cycle())
                .map(|(p, t)| scale * (p - t)),
        );
        for i in (0..self.layers.len()).rev() {
            if i == 0 {
                self.layers[0].backward(Input::Shared(x), grad, batch, alive, None);
            } else {
                let input = Input::PerTrial(&scratch.acts[i - 1]);
                self.layers[i].backward(input, grad, batch, alive, Some(&mut scratch.next));
                // ReLU derivative: the layer's input is a post-ReLU activation.
                for (g, a) in scratch.next.iter_mut().zip(&scratch.acts[i - 1]) {
                    if *a <= 0.0 {
                        *g = 0.0;
                    }
                }
                core::mem::swap(grad, &mut scratch.next);
            }
        }
        for l in &mut self.layers {
            l.step(self.optimizer, t, alive);
        }
        losses
    }
}

/// Buffers reused across steps.
#[derive(Default)]
struct Scratch {
    acts: Vec<Vec<f32>>,
    grad: Vec<f32>,
    next: Vec<f32>,
}

fn mse(pred: &[f32], y: &[f32]) -> f64 {
    let s: f64 = pred
        .iter()
        .zip(y)
        .map(|(p, t)| {
            let e = f64::from(p - t);
            e * e
        })
        .sum();
    s / y.len().max(1) as f64
}

/// One trial of a fused run: its outcome and its training-loss curve.
#[derive(Clone, Debug, PartialEq)]
pub struct TrialRun {
    /// The held-out outcome.
    pub result: RunResult,
    /// Training MSE of each step's batch before that step's update, one per step run (a
    /// diverged trial's curve ends at the step that diverged).
    pub train_loss: Vec<f64>,
}

/// Trains one student on the task and returns its held-out loss.
#[must_use]
pub fn train(task: &Task, spec: &RunSpec) -> RunResult {
    // One rate in, one trial out.
    train_fused(task, spec, &[spec.learning_rate])
        .swap_remove(0)
        .result
}

/// Trains F students of `spec`'s architecture as one fused, batched model (Hydro's Trial
/// Binder, HFTA-style): trial f uses `learning_rates[f]` (every other field of `spec`, its own
/// `learning_rate` aside, is shared). The trials see the same batches and start from the same
/// weights as [`train`] does for each rate alone, and give the same bits: fusion shares the
/// data, the initial weights and the loop, not the arithmetic.
#[must_use]
pub fn train_fused(task: &Task, spec: &RunSpec, learning_rates: &[f64]) -> Vec<TrialRun> {
    let teacher = Teacher::new(*task);
    let mut eval_rng = Pcg64Mcg::seed_from_u64(task.seed ^ 0xE7A1_5E75);
    let (ex, ey) = teacher.sample(&mut eval_rng, spec.eval_samples as usize);
    let zero_loss = mse(&vec![0.0; ey.len()], &ey);
    let mut data_rng =
        Pcg64Mcg::seed_from_u64(task.seed ^ 0xDA7A_0001 ^ (u64::from(spec.replica) << 40));
    let mut students = Students::new(task, spec, learning_rates);
    let trials = learning_rates.len();
    let batch = spec.batch as usize;
    let mut alive = vec![true; trials];
    let mut curves = vec![Vec::with_capacity(spec.steps as usize); trials];
    let mut scratch = Scratch::default();
    for t in 1..=spec.steps {
        if !alive.iter().any(|a| *a) {
            break;
        }
        let (x, y) = teacher.sample(&mut data_rng, batch);
        let was_alive = alive.clone();
        let losses = students.step(&x, &y, batch, t, &mut alive, &mut scratch);
        for (f, l) in losses.into_iter().enumerate() {
            if was_alive[f] {
                curves[f].push(l);
            }
        }
    }
    let n = spec.eval_samples as usize;
    let pred = students.forward(&ex, n, &alive, &mut scratch.acts);
    let per_trial = ey.len();
    curves
        .into_iter()
        .enumerate()
        .map(|(f, train_loss)| {
            let loss = if alive[f] {
                mse(&pred[f * per_trial..(f + 1) * per_trial], &ey)
            } else {
                f64::NAN
            };
            let ok = loss.is_finite() && loss <= DIVERGED_LOSS;
            TrialRun {
                result: RunResult {
                    eval_loss: if ok { loss } else { DIVERGED_LOSS },
                    diverged: !ok,
                    zero_loss,
                },
                train_loss,
            }
        })
        .collect()
}

/// Floating-point operations of one training step (forward + backward ≈ 3 × 2 × batch × weights).
#[must_use]
pub fn step_flops(task: &Task, spec: &RunSpec) -> f64 {
    let n = f64::from(spec.width);
    let weights = f64::from(task.input_dim) * n
        + f64::from(spec.hidden_layers) * n * n
        + n * f64::from(task.output_dim);
    6.0 * f64::from(spec.batch) * weights
}
