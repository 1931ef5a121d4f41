//! Building and simulating GPT-3 175B's pipeline stage: 12 of its 96 layers, forward and
//! backward, TP=8 with sequence parallelism, DP=8 gradient buckets (ReduceScatter, 25 MiB).

use std::hint::black_box;

use bubblelab_core::cost::CostModel;
use bubblelab_core::graph::build::{build, DataParallel, ModelKind, Parallelism, Workload};
use bubblelab_core::graph::sim::simulate;
use bubblelab_core::hw::GpuKind;
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_gpt3_stage(c: &mut Criterion) {
    let model = ModelKind::Gpt3_175b.spec();
    let par = Parallelism {
        tp: 8,
        sp: true,
        dp: 8,
        dp_kind: DataParallel::ReduceScatter,
        ..Parallelism::default()
    };
    let work = Workload {
        layers: 12,
        micro_batch: 1,
        seq_len: 2048,
        backward: true,
        dtype_bytes: 2,
        whole_step: false,
    };
    let cost = CostModel::new(GpuKind::H100);
    let graph = build(&model, &par, &work).expect("GPT-3 175B stage builds");
    let sim = simulate(&graph, &cost).expect("and runs");
    println!(
        "gpt3_175b_stage: {} nodes, {} tensors, {} events, step {:.3} ms, exposed comm {:.3} ms",
        graph.node_count(),
        graph.tensors.len(),
        sim.events,
        sim.makespan_ns as f64 / 1e6,
        sim.exposed_comm_ns as f64 / 1e6
    );
    let mut group = c.benchmark_group("graph");
    group.sample_size(20);
    group.bench_function("gpt3_175b_stage_build", |b| {
        b.iter(|| build(black_box(&model), &par, &work).map(|g| g.node_count()));
    });
    group.bench_function("gpt3_175b_stage_simulate", |b| {
        b.iter(|| simulate(black_box(&graph), &cost).map(|s| s.makespan_ns));
    });
    group.bench_function("gpt3_175b_stage_build_and_simulate", |b| {
        b.iter(|| {
            build(black_box(&model), &par, &work)
                .map(|g| simulate(&g, &cost).map(|s| s.makespan_ns))
        });
    });
    group.finish();
}

criterion_group!(benches, bench_gpt3_stage);
criterion_main!(benches);
