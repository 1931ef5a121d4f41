//! Trial fusion measured on CPU (issue 11): F MLP trials of one width trained one after the
//! other (`mlp::train` per learning rate) against the same F trials as one fused, batched model
//! (`mlp::train_fused`), which gives the same bits. F = 1, 2, 4, 8 at width 64 and 512 (μP,
//! Adam, 20 steps of batch 16, 256 held-out samples; the default task).
//!
//! Besides criterion's per-bench times, a paired pass alternates the two (separate first in
//! even rounds, fused first in odd ones) and prints the ratio of their fastest rounds and the
//! median of the per-round ratios: on a machine shared with other work, load that comes and
//! goes between two criterion benches would otherwise show up as a ratio.
#![allow(clippy::disallowed_methods)] // a benchmark measures wall time

use bubblelab_core::labs::tuning::mlp::{RunSpec, Task};
use bubblelab_core::labs::tuning::{mlp, Parametrization, TuningParams};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::{Duration, Instant};

/// Rounds of the paired pass.
const PAIRED_ROUNDS: usize = 11;

fn separate(task: &Task, spec: &RunSpec, rates: &[f64]) -> f64 {
    rates
        .iter()
        .map(|&lr| {
            let mut one = *spec;
            one.learning_rate = lr;
            mlp::train(task, &one).eval_loss
        })
        .sum()
}

fn fused(task: &Task, spec: &RunSpec, rates: &[f64]) -> f64 {
    mlp::train_fused(task, spec, rates)
        .iter()
        .map(|t| t.result.eval_loss)
        .sum()
}

fn timed(f: impl FnOnce() -> f64) -> f64 {
    let t = Instant::now();
    std::hint::black_box(f());
    t.elapsed().as_secs_f64()
}

fn paired(task: &Task, spec: &RunSpec, rates: &[f64]) {
    let (mut sep, mut fus) = (Vec::new(), Vec::new());
    for round in 0..PAIRED_ROUNDS {
        if round % 2 == 0 {
            sep.push(timed(|| separate(task, spec, rates)));
            fus.push(timed(|| fused(task, spec, rates)));
        } else {
            fus.push(timed(|| fused(task, spec, rates)));
            sep.push(timed(|| separate(task, spec, rates)));
        }
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut ratios: Vec<f64> = sep.iter().zip(&fus).map(|(s, f)| s / f).collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "paired width {}, F = {}: separate min {:.3} ms, fused min {:.3} ms, ratio of minima {:.2}, median ratio {:.2} ({PAIRED_ROUNDS} rounds)",
        spec.width,
        rates.len(),
        min(&sep) * 1e3,
        min(&fus) * 1e3,
        min(&sep) / min(&fus),
        ratios[ratios.len() / 2]
    );
}

fn bench(c: &mut Criterion) {
    let e = TuningParams::default().experiment;
    let task = e.task();
    // Eight rates of the default grid (2⁻¹² … 2⁻⁵) that train without diverging under μP at
    // these widths, so every trial does the same work.
    let rates: Vec<f64> = (0..8).map(|k| libm::exp2(f64::from(-12 + k))).collect();
    let mut group = c.benchmark_group("tuning fusion");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for width in [64u32, 512] {
        let mut spec = e.run_spec(width, Parametrization::Mup, 0.0);
        spec.steps = 20;
        for f in [1usize, 2, 4, 8] {
            let rs = &rates[..f];
            group.bench_with_input(
                BenchmarkId::new(format!("width {width}, separate"), f),
                &f,
                |b, _| b.iter(|| separate(&task, &spec, rs)),
            );
            group.bench_with_input(
                BenchmarkId::new(format!("width {width}, fused"), f),
                &f,
                |b, _| b.iter(|| fused(&task, &spec, rs)),
            );
        }
    }
    group.finish();
    for width in [64u32, 512] {
        let mut spec = e.run_spec(width, Parametrization::Mup, 0.0);
        spec.steps = 20;
        for f in [1usize, 2, 4, 8] {
            paired(&task, &spec, &rates[..f]);
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
