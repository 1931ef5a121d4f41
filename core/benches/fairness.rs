//! Benchmark of the fairness lab's cluster simulator: every policy on a 100,000-job synthetic
//! trace on ASTRAEA's 140 × 8 = 1,120-GPU cluster.
//!
//! The trace is the default synthetic spec (Philly-measured sizes and durations, 15 tenants)
//! with 100,000 jobs and the Philly arrival rate per GPU carried over to the larger cluster:
//! Philly's mean inter-arrival of 596.5 s on 128 GPUs becomes 596.5 · 128 / 1,120 = 68.2 s, so
//! the cluster is about as loaded as the 128-GPU Philly preset.
//!
//! * Before the timed group, one pass over the 100,000-job trace times each policy alone, all
//!   of them spread over one thread per core (as `bubblelab fairness` runs them), and the whole
//!   `run_trace` (the default policies' runs + the Report, on one thread), and prints them: one
//!   sample each, because ten samples of a run of minutes would take an hour.
//! * `fairness/all_policies_10k_jobs`: [`run_policy`] for every policy in turn on the first
//!   10,000 jobs of the same trace (same cluster, same arrival rate), sampled by criterion.
//!
//! Run with `cargo bench -p bubblelab-core --bench fairness`; about ten minutes on two cores.
#![allow(clippy::disallowed_methods)] // a benchmark measures wall time

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bubblelab_core::labs::fairness::traces::synthetic::{generate, SyntheticSpec};
use bubblelab_core::labs::fairness::{run_policy, run_trace, FairnessParams, PolicyKind, Trace};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

fn setup() -> (FairnessParams, Trace) {
    let params = FairnessParams::default();
    // `FAIRNESS_BENCH_JOBS=n` shortens the trace (for profiling; the figures are for 100,000).
    let jobs = std::env::var("FAIRNESS_BENCH_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let spec = SyntheticSpec {
        jobs,
        mean_interarrival_s: 596.5 * 128.0 / 1_120.0,
        ..SyntheticSpec::default()
    };
    let trace = generate(&spec);
    (params, trace)
}

fn breakdown(params: &FairnessParams, trace: &Trace) {
    let work_gpu_s: f64 = trace
        .jobs
        .iter()
        .map(|j| f64::from(j.gpus) * j.duration_ns as f64 / 1e9)
        .sum();
    let span_s = trace.jobs.iter().map(|j| j.submit_ns).max().unwrap_or(0) as f64 / 1e9;
    println!(
        "fairness: {} jobs, {} GPUs, offered load {:.2} (GPU-time asked / GPU-time over the submission span)",
        trace.jobs.len(),
        params.cluster.total_gpus(),
        work_gpu_s / (span_s * params.cluster.total_gpus() as f64)
    );
    // `FAIRNESS_BENCH_POLICIES=srtf,astraea` restricts the breakdown (for profiling one policy).
    let only = std::env::var("FAIRNESS_BENCH_POLICIES").ok();
    let mut total = Duration::ZERO;
    for kind in PolicyKind::ALL {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|id| id == kind.id()))
        {
            continue;
        }
        // `FAIRNESS_BENCH_REPEAT=n` runs each policy n times and keeps the fastest (for
        // comparing two builds on a machine whose speed drifts).
        let repeat: usize = std::env::var("FAIRNESS_BENCH_REPEAT")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(1);
        let mut dt = Duration::MAX;
        let mut run = None;
        for _ in 0..repeat.max(1) {
            let t0 = Instant::now();
            let r = run_policy(params, trace, kind);
            dt = dt.min(t0.elapsed());
            run = Some(r);
        }
        let run = run.expect("ran at least once");
        total += dt;
        let mean_queue = run
            .samples
            .iter()
            .map(|s| f64::from(s.queue_len))
            .sum::<f64>()
            / run.samples.len().max(1) as f64;
        println!(
            "  {:<12} {:>8.1} ms  {:>9} events {:>8} rounds {:>7} preemptions, mean queue {:.0} jobs",
            kind.id(),
            dt.as_secs_f64() * 1e3,
            run.events,
            run.rounds,
            run.preemptions,
            mean_queue
        );
    }
    println!("  total        {:>8.1} ms", total.as_secs_f64() * 1e3);
    if only.is_some() {
        return;
    }
    // The same runs spread over one thread per core, each thread taking the next policy not
    // yet taken, longest first (as `bubblelab fairness` runs them).
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let started = PolicyKind::longest_first(&PolicyKind::ALL);
    let next = AtomicUsize::new(0);
    let t0 = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&i) = started.get(next.fetch_add(1, Ordering::Relaxed)) {
                    black_box(run_policy(params, trace, PolicyKind::ALL[i]));
                }
            });
        }
    });
    println!(
        "  all policies on {threads} threads {:>8.1} ms (wall)",
        t0.elapsed().as_secs_f64() * 1e3
    );
    let t0 = Instant::now();
    let report = run_trace(params, trace).expect("valid bench scenario");
    println!(
        "  run_trace (the default policies + Report) {:.1} ms, {} series",
        t0.elapsed().as_secs_f64() * 1e3,
        report.series.len()
    );
}

fn bench(c: &mut Criterion) {
    let (params, mut trace) = setup();
    breakdown(&params, &trace);
    trace.jobs.truncate(10_000);
    let mut g = c.benchmark_group("fairness");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_mins(1));
    g.bench_function("all_policies_10k_jobs", |b| {
        b.iter(|| {
            for kind in PolicyKind::ALL {
                black_box(run_policy(&params, &trace, kind));
            }
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
