//! Helix's full pipeline (tile K=2 + reorder + bucketing DP with simulator scoring) on the
//! GPT-3 175B 96-layer graph (one forward + backward step, TP=8 + SP, DP=8 ReduceScatter).

use bubblelab_core::cost::CostModel;
use bubblelab_core::graph::build::{build, DataParallel, ModelKind, Parallelism, Workload};
use bubblelab_core::graph::Dim;
use bubblelab_core::hw::GpuKind;
use bubblelab_core::labs::overlap::passes::{bucket::bucket, reorder::reorder, tile::tile};
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_helix(c: &mut Criterion) {
    let par = Parallelism {
        tp: 8,
        sp: true,
        dp: 8,
        dp_kind: DataParallel::ReduceScatter,
        ..Parallelism::default()
    };
    let work = Workload {
        layers: 96,
        micro_batch: 2,
        seq_len: 2048,
        backward: true,
        dtype_bytes: 2,
        whole_step: false,
    };
    let graph = build(&ModelKind::Gpt3_175b.spec(), &par, &work).expect("builds");
    let cost = CostModel::new(GpuKind::H100);
    let helix = || {
        let t = tile(&graph, 2, Dim::Batch).expect("tiles");
        let r = reorder(&t.graph).expect("reorders");
        bucket(&r.graph, &cost, None).expect("buckets")
    };
    let out = helix();
    eprintln!(
        "graph {} nodes; tiled {} nodes; {} candidate roles, {} simulations, {} merged",
        graph.node_count(),
        out.graph.node_count(),
        out.candidates,
        out.scored,
        out.chosen.len()
    );
    // What a speed-up must not change: the chosen merges, the result's score and the issue
    // order (a hash of the node indices).
    eprintln!(
        "fingerprint: makespan {} ns, peak {} B, base {:?}, chosen {:?}, nodes {}, order {:?}",
        out.result.makespan_ns,
        out.result.peak_bytes,
        out.base,
        out.chosen,
        out.graph.node_count(),
        out.graph.order.iter().fold(0u64, |h, n| h
            .wrapping_mul(1_000_003)
            .wrapping_add(n.index() as u64))
    );
    let mut group = c.benchmark_group("overlap");
    group.sample_size(10);
    group.bench_function("helix_gpt3_175b_96_layers", |b| b.iter(helix));
    group.bench_function("tile_reorder_only", |b| {
        b.iter(|| reorder(&tile(&graph, 2, Dim::Batch).expect("tiles").graph).expect("reorders"));
    });
    group.finish();
}

criterion_group!(benches, bench_helix);
criterion_main!(benches);
