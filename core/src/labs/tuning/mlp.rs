//! A real MLP trainer in f32: a fixed random teacher network generates a learnable regression
//! task, and a student MLP of a chosen width learns it with SGD or Adam under the standard
//! parametrization (SP) or μP. Forward, backward and optimizer steps run on real numbers; only
//! `libm` and explicit summation orders are used, so a run is bit-identical natively and in wasm.
//!
//! Student: `x (input_dim) → W_in → ReLU → [W_h → ReLU] × hidden_layers → W_out → ŷ (output_dim)`,
//! a bias on every layer. Loss: mean squared error over the batch and the outputs.

use alloc::vec;
use alloc::vec::Vec;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::mup::LayerClass;

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
    // Box–Muller; u1 in (0, 1].
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)) as f32
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

/// A dense layer `out = mult · W · in + b`, W stored row-major `[fan_out][fan_in]`.
#[derive(Clone, Debug)]
struct Dense {
    fan_in: usize,
    fan_out: usize,
    w: Vec<f32>,
    b: Vec<f32>,
    mult: f32,
    lr_w: f32,
    lr_b: f32,
    gw: Vec<f32>,
    gb: Vec<f32>,
    mw: Vec<f32>,
    vw: Vec<f32>,
    mb: Vec<f32>,
    vb: Vec<f32>,
}

impl Dense {
    fn forward(&self, input: &[f32], batch: usize, out: &mut Vec<f32>) {
        out.clear();
        out.resize(batch * self.fan_out, 0.0);
        for r in 0..batch {
            let x = &input[r * self.fan_in..(r + 1) * self.fan_in];
            let o = &mut out[r * self.fan_out..(r + 1) * self.fan_out];
            for (j, oj) in o.iter_mut().enumerate() {
                *oj =
                    self.mult * dot(&self.w[j * self.fan_in..(j + 1) * self.fan_in], x) + self.b[j];
            }
        }
    }

    /// Accumulates gradients from `dout` and writes the input gradient (if asked).
    fn backward(&mut self, input: &[f32], dout: &[f32], batch: usize, din: Option<&mut Vec<f32>>) {
        self.gw.iter_mut().for_each(|g| *g = 0.0);
        self.gb.iter_mut().for_each(|g| *g = 0.0);
        for r in 0..batch {
            let x = &input[r * self.fan_in..(r + 1) * self.fan_in];
            for j in 0..self.fan_out {
                let g = dout[r * self.fan_out + j];
                self.gb[j] += g;
                axpy(
                    &mut self.gw[j * self.fan_in..(j + 1) * self.fan_in],
                    self.mult * g,
                    x,
                );
            }
        }
        if let Some(din) = din {
            din.clear();
            din.resize(batch * self.fan_in, 0.0);
            for r in 0..batch {
                let d = &mut din[r * self.fan_in..(r + 1) * self.fan_in];
                for j in 0..self.fan_out {
                    let g = self.mult * dout[r * self.fan_out + j];
                    axpy(d, g, &self.w[j * self.fan_in..(j + 1) * self.fan_in]);
                }
            }
        }
    }

    fn step(&mut self, opt: Optimizer, t: u32) {
        match opt {
            Optimizer::Sgd => {
                axpy(&mut self.w, -self.lr_w, &self.gw);
                axpy(&mut self.b, -self.lr_b, &self.gb);
            }
            Optimizer::Adam => {
                let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
                let c1 = 1.0 - libm::powf(b1, t as f32);
                let c2 = 1.0 - libm::powf(b2, t as f32);
                let upd = |p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], lr: f32| {
                    for i in 0..p.len() {
                        m[i] = b1 * m[i] + (1.0 - b1) * g[i];
                        v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
                        p[i] -= lr * (m[i] / c1) / (libm::sqrtf(v[i] / c2) + eps);
                    }
                };
                upd(&mut self.w, &self.gw, &mut self.mw, &mut self.vw, self.lr_w);
                upd(&mut self.b, &self.gb, &mut self.mb, &mut self.vb, self.lr_b);
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

/// The student MLP.
struct Student {
    layers: Vec<Dense>,
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

impl Student {
    fn new(task: &Task, spec: &RunSpec) -> Student {
        let n = spec.width as usize;
        let mut dims = vec![task.input_dim as usize];
        dims.extend(core::iter::repeat_n(n, spec.hidden_layers as usize + 1));
        dims.push(task.output_dim as usize);
        let count = dims.len() - 1;
        // Each width gets its own initial weights; every learning rate of one width starts
        // from the same ones.
        let mut rng = Pcg64Mcg::seed_from_u64(
            task.seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(u64::from(spec.width)),
        );
        let m = f64::from(spec.width) / f64::from(spec.base_width.max(1));
        let eta = spec.learning_rate;
        let layers = (0..count)
            .map(|i| {
                let (fi, fo) = (dims[i], dims[i + 1]);
                let class = layer_class(i, count);
                let (init_var, mult, lr_w, lr_b) = match spec.parametrization {
                    Parametrization::Sp => (1.0, 1.0, eta, eta),
                    Parametrization::Mup => {
                        let r = class.mup_rule(m);
                        let b = LayerClass::Bias.mup_rule(m);
                        let (lw, lb) = match spec.optimizer {
                            Optimizer::Sgd => (r.sgd_lr_mult, b.sgd_lr_mult),
                            Optimizer::Adam => (r.adam_lr_mult, b.adam_lr_mult),
                        };
                        (r.init_var_mult, r.output_mult, eta * lw, eta * lb)
                    }
                };
                let std = libm::sqrt(init_var / fi as f64) as f32;
                Dense {
                    fan_in: fi,
                    fan_out: fo,
                    w: gaussians(&mut rng, fi * fo, std),
                    b: vec![0.0; fo],
                    mult: mult as f32,
                    lr_w: lr_w as f32,
                    lr_b: lr_b as f32,
                    gw: vec![0.0; fi * fo],
                    gb: vec![0.0; fo],
                    mw: vec![0.0; fi * fo],
                    vw: vec![0.0; fi * fo],
                    mb: vec![0.0; fo],
                    vb: vec![0.0; fo],
                }
            })
            .collect();
        Student { layers }
    }

    /// Forward pass keeping every layer's input (post-ReLU activations); returns ŷ.
    fn forward(&self, x: &[f32], batch: usize, acts: &mut Vec<Vec<f32>>) -> Vec<f32> {
        acts.clear();
        acts.push(x.to_vec());
        let last = self.layers.len() - 1;
        let mut out = Vec::new();
        for (i, l) in self.layers.iter().enumerate() {
            l.forward(&acts[i], batch, &mut out);
            if i < last {
                out.iter_mut().for_each(|v| *v = v.max(0.0));
                acts.push(core::mem::take(&mut out));
            }
        }
        out
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
}

/// Trains one student on the task and returns its held-out loss.
#[must_use]
pub fn train(task: &Task, spec: &RunSpec) -> RunResult {
    let teacher = Teacher::new(*task);
    let mut eval_rng = Pcg64Mcg::seed_from_u64(task.seed ^ 0xE7A1_5E75);
    let (ex, ey) = teacher.sample(&mut eval_rng, spec.eval_samples as usize);
    let zero_loss = Student::mse(&vec![0.0; ey.len()], &ey);
    let mut data_rng = Pcg64Mcg::seed_from_u64(task.seed ^ 0xDA7A_0001);
    let mut student = Student::new(task, spec);
    let batch = spec.batch as usize;
    let o = task.output_dim as usize;
    let mut acts = Vec::new();
    let mut grad = Vec::new();
    let mut next = Vec::new();
    for t in 1..=spec.steps {
        let (x, y) = teacher.sample(&mut data_rng, batch);
        let pred = student.forward(&x, batch, &mut acts);
        let loss = Student::mse(&pred, &y);
        if !loss.is_finite() || loss > DIVERGED_LOSS {
            return RunResult {
                eval_loss: DIVERGED_LOSS,
                diverged: true,
                zero_loss,
            };
        }
        let scale = 2.0 / (batch * o) as f32;
        grad.clear();
        grad.extend(pred.iter().zip(&y).map(|(p, t)| scale * (p - t)));
        for i in (0..student.layers.len()).rev() {
            let want_din = i > 0;
            student.layers[i].backward(
                &acts[i],
                &grad,
                batch,
                if want_din { Some(&mut next) } else { None },
            );
            if want_din {
                // ReLU derivative: the layer's input is a post-ReLU activation.
                for (g, a) in next.iter_mut().zip(&acts[i]) {
                    if *a <= 0.0 {
                        *g = 0.0;
                    }
                }
                core::mem::swap(&mut grad, &mut next);
            }
        }
        for l in &mut student.layers {
            l.step(spec.optimizer, t);
        }
    }
    let pred = student.forward(&ex, spec.eval_samples as usize, &mut acts);
    let loss = Student::mse(&pred, &ey);
    if loss.is_finite() && loss <= DIVERGED_LOSS {
        RunResult {
            eval_loss: loss,
            diverged: false,
            zero_loss,
        }
    } else {
        RunResult {
            eval_loss: DIVERGED_LOSS,
            diverged: true,
            zero_loss,
        }
    }
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
