//! Benchmark of the sharing lab: each placement policy on one seed of FGD's experiment, side by
//! side, on the page's preset (`sharing-fgd-openb-shape`: 114 nodes, 600 GPUs, 728 pods cloned to
//! 130 %) and, when `$BUBBLELAB_DATA` (default `../shared/data`) holds it, on the real openb node
//! list and half pod list (1,213 nodes, 6,212 GPUs, 4,076 pods cloned to 130 %).
//!
//! Run with `cargo bench -p bubblelab-core --bench sharing`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::path::PathBuf;

use bubblelab_core::labs::sharing::{experiment, openb, SharingParams, SharingPolicy};
use bubblelab_core::{presets, Scenario};
use criterion::{criterion_group, criterion_main, Criterion};

fn preset() -> SharingParams {
    match presets::find("sharing-fgd-openb-shape")
        .unwrap()
        .scenario()
        .unwrap()
    {
        Scenario::Sharing(p) => p,
        _ => unreachable!("a sharing preset"),
    }
}

fn openb_params() -> Option<SharingParams> {
    let dir = std::env::var_os("BUBBLELAB_DATA")
        .map_or_else(
            || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")),
            PathBuf::from,
        )
        .join("alibaba_gpu_v2023_openb");
    let nodes = std::fs::read_to_string(dir.join("openb_node_list_gpu_node.csv")).ok()?;
    let pods = std::fs::read_to_string(dir.join("openb_pod_list_default.csv")).ok()?;
    Some(SharingParams {
        nodes: openb::parse_nodes(&nodes).unwrap(),
        pods: openb::parse_pods(&pods).unwrap(),
        ..preset()
    })
}

fn bench(c: &mut Criterion) {
    let mut inputs = vec![("preset", preset())];
    if let Some(p) = openb_params() {
        inputs.push(("openb", p));
    }
    for (name, params) in inputs {
        let mut group = c.benchmark_group(format!("sharing/{name}_one_seed"));
        group.sample_size(10);
        for policy in SharingPolicy::ALL {
            group.bench_function(policy.id(), |b| {
                b.iter(|| black_box(experiment::run(&params, policy, 42, &mut |_| {})));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
