//! Benchmarks of the discrete-event core, from the raw queue up to the largest pipeline
//! scenario validation allows.
//!
//! * `event_queue/push_pop/N`: push N events at pseudo-random times, then pop them all;
//!   throughput in events (one event = one push + one pop).
//! * `simulate/wavefront`: [`engine::simulate`] on a synthetic task graph of in-order streams
//!   and FIFO links; throughput in events the engine processed.
//! * `pipeline_run/...`: [`bubblelab_core::run`] on 64 stages × 512 micro-batches with all four
//!   schedules (interleaved with v = 4, just under `MAX_OPS`), with free and with costly P2P;
//!   throughput in engine events over all schedules. One schedule alone is timed too.
//!
//! Run with `cargo bench -p bubblelab-core --bench engine`; each group measures briefly so the
//! whole file finishes in about two minutes on two cores. Sizes are printed before each group.

use std::hint::black_box;
use std::time::Duration;

use bubblelab_core::engine::{self, Dep, Discipline, EventQueue, Resource, Task, TaskGraph};
use bubblelab_core::labs::pipeline::{run_schedule, PipelineParams, ScheduleKind};
use bubblelab_core::units::Nanos;
use bubblelab_core::Scenario;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants) for event times and
/// durations; the benchmark needs spread, not statistical quality.
struct Lcg(u64);

impl Lcg {
    fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }
}

/// Push `n` events at pseudo-random times (many ties) and pop them all; returns a checksum.
fn push_pop(times_ns: &[u64]) -> u64 {
    let mut queue = EventQueue::new();
    for (i, &t) in times_ns.iter().enumerate() {
        queue.push(Nanos(t), (i % 3) as u8, i as u32);
    }
    let mut checksum = 0u64;
    while let Some((time, event)) = queue.pop() {
        checksum = checksum.wrapping_add(time.0 ^ u64::from(event));
    }
    checksum
}

fn bench_event_queue(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_queue");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for n_events in [10_000usize, 1_000_000] {
        let mut rng = Lcg(42);
        // Times within a window smaller than n, so equal times (and the priority/sequence
        // tie-breaks) occur often, as they do in schedules with uniform op times.
        let window_ns = (n_events as u64 / 4).max(1);
        let times_ns: Vec<u64> = (0..n_events).map(|_| rng.next_u64() % window_ns).collect();
        group.throughput(Throughput::Elements(n_events as u64));
        group.bench_with_input(
            BenchmarkId::new("push_pop", n_events),
            &times_ns,
            |b, times_ns| b.iter(|| push_pop(black_box(times_ns))),
        );
    }
    group.finish();
}

/// Streams in a grid: task (s, k) on stream s depends on task (s − 1, k) and on task (s + 1,
/// k − 1), like a pipeline's forward and backward waves. Every `link_every`-th dependency from
/// stream s − 1 goes through a transfer task on the FIFO link between the two streams.
fn wavefront_graph(streams: usize, tasks_per_stream: usize, link_every: usize) -> TaskGraph {
    let mut rng = Lcg(7);
    let id = |s: usize, k: usize| s * tasks_per_stream + k;
    let mut graph = TaskGraph::default();
    for s in 0..streams {
        graph.resources.push(Resource {
            name: format!("stream {s}"),
            discipline: Discipline::InOrder((0..tasks_per_stream).map(|k| id(s, k)).collect()),
        });
    }
    for s in 0..streams {
        for k in 0..tasks_per_stream {
            let mut deps = Vec::new();
            if s > 0 && k % link_every != 0 {
                deps.push(Dep {
                    task: id(s - 1, k),
                    delay_ns: 5,
                });
            }
            if s + 1 < streams && k > 0 {
                deps.push(Dep {
                    task: id(s + 1, k - 1),
                    delay_ns: 0,
                });
            }
            graph.tasks.push(Task {
                resource: s,
                duration_ns: 100 + rng.next_u64() % 900,
                deps,
            });
        }
    }
    // Transfers: on link s−1→s, one per `link_every` tasks.
    for s in 1..streams {
        let link = graph.resources.len();
        graph.resources.push(Resource {
            name: format!("link {}→{s}", s - 1),
            discipline: Discipline::Fifo,
        });
        for k in (0..tasks_per_stream).step_by(link_every) {
            let transfer = graph.tasks.len();
            graph.tasks.push(Task {
                resource: link,
                duration_ns: 50 + rng.next_u64() % 200,
                deps: vec![Dep {
                    task: id(s - 1, k),
                    delay_ns: 0,
                }],
            });
            graph.tasks[id(s, k)].deps.push(Dep {
                task: transfer,
                delay_ns: 0,
            });
        }
    }
    graph
}

fn bench_simulate(c: &mut Criterion) {
    let graph = wavefront_graph(64, 4096, 4);
    let sim = match engine::simulate(&graph) {
        Ok(sim) => sim,
        Err(e) => panic!("the synthetic graph must simulate: {e}"),
    };
    let deps: usize = graph.tasks.iter().map(|t| t.deps.len()).sum();
    println!(
        "simulate/wavefront: {} tasks, {} resources, {deps} dependencies, {} events, makespan {} ns",
        graph.tasks.len(),
        graph.resources.len(),
        sim.events,
        sim.makespan.0
    );
    let mut group = c.benchmark_group("simulate");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(sim.events));
    group.bench_function("wavefront", |b| {
        b.iter(|| engine::simulate(black_box(&graph)).map(|s| s.events));
    });
    group.finish();
}

/// The largest pipeline scenario of the bench: p = 64, m = 512, v = 4, the four classic
/// schedules (GPipe, 1F1B, interleaved, ZB-H1; all eight would pass `MAX_OPS`).
fn largest_pipeline(p2p_ns: u64) -> PipelineParams {
    PipelineParams {
        schedules: PipelineParams::default().schedules,
        stages: 64,
        micro_batches: 512,
        virtual_stages: 4,
        p2p_ns,
        ..PipelineParams::default()
    }
}

fn bench_pipeline(c: &mut Criterion) {
    // Each run takes a large fraction of a second: flat sampling (the same iteration count in
    // every sample) keeps ten samples within a few seconds.
    let mut group = c.benchmark_group("pipeline_run");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    for (name, p2p_ns) in [("p64_m512_v4_all", 0u64), ("p64_m512_v4_all_p2p", 100_000)] {
        let params = largest_pipeline(p2p_ns);
        let mut total_events = 0u64;
        for &kind in &params.schedules {
            let run = match run_schedule(&params, kind) {
                Ok(run) => run,
                Err(e) => panic!("{name}: {} must run: {e}", kind.id()),
            };
            total_events += run.events;
            println!(
                "pipeline_run/{name}: {:<11} {} compute ops, {} transfers, {} events, iteration {:.3} ms",
                kind.id(),
                run.ops.len(),
                run.transfers.len(),
                run.events,
                run.iteration_ns as f64 / 1e6
            );
        }
        let scenario = Scenario::Pipeline(params);
        let spans: usize = match bubblelab_core::run(&scenario) {
            Ok(report) => report
                .timelines
                .iter()
                .flat_map(|t| &t.lanes)
                .map(|l| l.spans.len())
                .sum(),
            Err(e) => panic!("{name} must run: {e}"),
        };
        println!("pipeline_run/{name}: {total_events} events in all, {spans} spans in the Report");
        group.throughput(Throughput::Elements(total_events));
        group.bench_function(name, |b| {
            b.iter(|| bubblelab_core::run(black_box(&scenario)).map(|r| r.metrics.len()));
        });
    }
    // One schedule without the Report: the simulation share of the whole run.
    let params = largest_pipeline(0);
    let kind = ScheduleKind::Interleaved;
    let events = run_schedule(&params, kind).map_or(0, |r| r.events);
    group.throughput(Throughput::Elements(events));
    group.bench_function(format!("p64_m512_v4_{}_schedule_only", kind.id()), |b| {
        b.iter(|| run_schedule(black_box(&params), kind).map(|r| r.events));
    });
    group.finish();
}

criterion_group!(benches, bench_event_queue, bench_simulate, bench_pipeline);
criterion_main!(benches);
