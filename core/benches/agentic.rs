//! The agentic lab's benchmark (issue 8): 1,000 agents × 30 turns on the Qwen3-32B preset,
//! the whole `run` (generation, every controller of the preset, the Report).

use bubblelab_core::labs::agentic::{self, AgenticParams};
use bubblelab_core::{presets, Scenario};
use criterion::{criterion_group, criterion_main, Criterion};

fn params() -> AgenticParams {
    let Ok(Scenario::Agentic(mut p)) = presets::find("agentic-qwen3-32b-h100")
        .expect("preset")
        .scenario()
    else {
        panic!("the Qwen3-32B preset is an agentic scenario");
    };
    p.synthetic.agents = 1_000;
    p.synthetic.min_turns = 30;
    p.synthetic.max_turns = 30;
    p
}

fn bench(c: &mut Criterion) {
    let p = params();
    let mut group = c.benchmark_group("agentic");
    group.sample_size(10);
    for spec in p.controllers.clone() {
        let one = AgenticParams {
            controllers: vec![spec.clone()],
            ..p.clone()
        };
        group.bench_function(format!("1000 agents x 30 turns, {}", spec.id()), |b| {
            b.iter(|| agentic::run(&one).expect("runs"));
        });
    }
    group.bench_function("1000 agents x 30 turns, preset (unbounded + CONCUR)", |b| {
        b.iter(|| agentic::run(&p).expect("runs"));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
