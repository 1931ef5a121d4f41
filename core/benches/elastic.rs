//! Benchmark of the elastic lab: each policy alone on the Pollux artifact's workload-6 (160 jobs,
//! 16 nodes × 4 GPUs), side by side; Pollux with the page's lighter search (30 individuals × 20
//! generations). The artifact's search (100 × 100, about 30 s a run) is timed once through the
//! CLI instead (docs/PERFORMANCE.md): ten criterion samples of it take ten minutes.
//!
//! Run with `cargo bench -p bubblelab-core --bench elastic`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use bubblelab_core::labs::elastic::{run, ElasticParams, ElasticPolicy, PolluxSpec};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

fn one(policy: ElasticPolicy, population: u32, generations: u32) -> ElasticParams {
    ElasticParams {
        policies: vec![policy],
        pollux: PolluxSpec {
            population,
            generations,
            seed: 1,
        },
        ..ElasticParams::default()
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("elastic/workload6");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for (name, params) in [
        ("tiresias", one(ElasticPolicy::Tiresias, 100, 100)),
        ("optimus", one(ElasticPolicy::Optimus, 100, 100)),
        ("pollux_30x20", one(ElasticPolicy::Pollux, 30, 20)),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(run(&params, &mut |_, _| {}).unwrap()));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
