//! `bubblelab calibrate`: microbenchmarks of the executor's own kernels → a calibrated profile
//! JSON in the kernel's `Calibration` format (version 1), printed as a table.
//!
//! On the CPU (the CPU executor's own kernels and mechanics, so that its predictions use its
//! own rates):
//! - GEMM: the executor's f32 SGEMM on the near-cubic shapes it runs ([`CPU_GEMM_SIDES`]), each
//!   point the median duration of such ops in a chain run through the executor itself (a pinned
//!   worker, its scratch, after the op before it) → achieved FLOP/s by FLOPs (dtype `fp32`);
//! - memory-bound: the executor's memory-bound op (a copy of half its bytes) of 8 KiB … 128 MiB
//!   moved, measured the same way → achieved bytes/s by bytes moved (read + written);
//! - collectives: the executor emulates a collective as a copy of its bus volume on the group's
//!   stream thread; each point is one such collective run through the executor end to end
//!   (producer's end to the wait's end: the copy and the two thread hand-offs), turned into the
//!   NCCL-tests convention (bus bandwidth by message size) for AllReduce, AllGather,
//!   ReduceScatter and AllToAll on 2, 4 and 8 ranks of one node;
//! - launch: the executor's own cost per op beside its work (a chain of tiny ops on one stream),
//!   ns;
//! - contention: the GEMM's slowdown while another thread copies, the profile's
//!   `comm_compute_slowdown` (the simulator slows compute by it while a collective runs).
//!
//! On a GPU (`--device cuda`, the CUDA executor's operations, [`calibrate_cuda`]): cuBLAS GEMMs
//! in bf16 and fp32, the streaming kernel, copy-engine transfers (D2D, which also gives the
//! emulated collectives' curves; H2D, D2H and peer in the table only) and the launch of an empty
//! kernel, all timed with CUDA events.
//!
//! Each point is the median of its repetitions. The format requires time to grow with size, so
//! a point whose median time is below the previous (smaller) point's is raised to it; the table
//! marks such points.
//!
//! `validate` adds the points of the plan it is about to run ([`with_plan_points`],
//! [`with_plan_points_cuda`]): the plan's own GEMMs, memory-bound sizes and collective copies,
//! each in the situation it occurs in.

use std::path::PathBuf;
use std::time::Instant;

use bubblelab_core::cost::{CollectiveKind, Dtype};
use bubblelab_core::hw::{
    BusBwPoint, Calibration, CollectiveCurve, GemmPoint, MemoryPoint, CALIBRATION_VERSION,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Failure;
use crate::exec::cpu::{gemm_dims, matmul, CpuExecutor};
use crate::exec::cuda::bench::{Bench, LAUNCHES};
use crate::exec::cuda::kernels::GemmShape;
use crate::exec::{median, ExecError, Executor, OpTiming, Plan};
use crate::Device;
use bubblelab_core::cost::{ComputeKind, ComputeWork};
use bubblelab_core::graph::{Graph, NodeKind};

/// Arguments of `bubblelab calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Device to measure.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// Write the calibrated profile JSON here (default: print only the table).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Repetitions per point (the median is kept).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repetitions: u32,
}

/// Sides s of the CPU GEMM grid: s×s×s, the near-cubic shapes the CPU executor itself runs
/// ([`crate::exec::cpu::gemm_dims`]), from 8 kFLOP to 2.1 GFLOP (the suite's largest scaled
/// GEMMs are about 1 GFLOP).
pub const CPU_GEMM_SIDES: [usize; 13] =
    [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];

/// Copy sizes of the memory curve, bytes copied (twice that is moved).
pub const COPY_BYTES: [usize; 9] = [
    4 << 10,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
    32 << 20,
    64 << 20,
];

/// Collective kinds written to the profile (and measured with NCCL by doctor and calibrate under
/// a launcher).
pub const COLLECTIVES: [CollectiveKind; 4] = [
    CollectiveKind::AllReduce,
    CollectiveKind::AllGather,
    CollectiveKind::ReduceScatter,
    CollectiveKind::AllToAll,
];
/// Group sizes of the emulated collective curves.
const RANKS: [u32; 3] = [2, 4, 8];

fn time_ns(f: &mut impl FnMut()) -> u64 {
    let t = Instant::now();
    f();
    u64::try_from(t.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The CPU executor's own cost per op beside the op's work, ns: a chain of `ops` memory-bound
/// ops of 64 bytes on one stream (each waits for the previous, allocates its output, copies,
/// frees its input and marks itself done), its makespan divided by `ops`.
fn dispatch_ns(ops: usize) -> u64 {
    let mut g = Graph::new();
    let mut x = g.add_input("x", 64, false);
    for i in 0..ops {
        let name = format!("op{i}");
        let work = NodeKind::Compute(ComputeWork {
            kind: ComputeKind::MemoryBound,
            flops: 0.0,
            bytes: 128.0,
        });
        x = g.add_node(&name, work, &[x], &[(&name, 64)]).1[0];
    }
    let plan = Plan::simulator_streams("dispatch", g);
    let mut executor = CpuExecutor::default();
    match executor.run(&plan).and_then(|_| executor.run(&plan)) {
        Ok(e) => e.makespan_ns / u64::try_from(ops.max(1)).unwrap_or(1),
        Err(_) => 0,
    }
}

/// What comes right before an op on its stream in a plan, which decides what its buffers find
/// in the caches.
#[derive(Clone, Debug, PartialEq)]
enum Lead {
    /// An op with work.
    Op(NodeKind),
    /// A wait for a collective (of `kind` on `ranks` ranks, `bytes` per rank), after `op` (the
    /// last op with work on the stream before the wait).
    Wait {
        op: Option<NodeKind>,
        kind: CollectiveKind,
        ranks: u32,
        bytes: u64,
    },
}

/// One op as the CPU executor runs it inside a step: a chain of `repetitions` + 1 such ops on
/// one stream, each after `lead` when given (what precedes it in a plan: an op, or a wait for
/// a collective run on another stream), run twice; the median duration of all but the first
/// op of the second run, ns. The op runs on a pinned worker thread with the scratch and the
/// allocations of a real run, as in a plan.
fn op_in_executor_ns(work: &NodeKind, lead: Option<&Lead>, repetitions: u32) -> u64 {
    let mut g = Graph::new();
    let group = match lead {
        Some(Lead::Wait { ranks, .. }) => Some(g.add_group("group", *ranks, *ranks)),
        _ => None,
    };
    let mut x = g.add_input("x", 64, false);
    let mut measured = Vec::new();
    for i in 0..=repetitions.max(1) {
        let before = match lead {
            Some(Lead::Op(b)) => Some(b),
            Some(Lead::Wait { op, .. }) => op.as_ref(),
            None => None,
        };
        if let Some(b) = before {
            let name = format!("before{i}");
            x = g.add_node(&name, b.clone(), &[x], &[(&name, 64)]).1[0];
        }
        if let (Some(Lead::Wait { kind, bytes, .. }), Some(group)) = (lead, group) {
            x = g
                .collective(&format!("collective{i}"), *kind, group, *bytes, x, 64)
                .2;
        }
        let name = format!("op{i}");
        let (n, out) = g.add_node(&name, work.clone(), &[x], &[(&name, 64)]);
        x = out[0];
        if i > 0 {
            measured.push(n);
        }
    }
    let plan = Plan::simulator_streams("calibration", g);
    let mut executor = CpuExecutor::default();
    let Ok(e) = executor.run(&plan).and_then(|_| executor.run(&plan)) else {
        return 1;
    };
    let mut v: Vec<u64> = measured
        .iter()
        .map(|n| {
            let t = e.timings[n.index()];
            t.end_ns.saturating_sub(t.start_ns).max(1)
        })
        .collect();
    median(&mut v)
}

/// One collective as the CPU executor runs it, in the situation `beside` describes: its
/// producer (default a GEMM of about 0.1 ms) on the compute stream produces the message, and the
/// collective's copy of `copy_bytes` runs on the group's stream. Median of `repetitions` runs,
/// ns:
/// - when the compute stream has nothing else to run, from the producer's end to the wait's
///   end: the copy and both hand-offs between the stream threads, run by the producer's worker;
/// - when it runs `beside.meanwhile` next, the copy's own interval: the copy runs on the other
///   worker while the producer's worker computes. (Its start is not timed from the producer's
///   end: each run starts its worker threads anew, and one that comes up late would count.)
fn collective_emulation_ns(copy_bytes: usize, beside: &Beside, repetitions: u32) -> u64 {
    let mut g = Graph::new();
    let pair = g.add_group("pair", 2, 2);
    let bytes = u64::try_from(copy_bytes).unwrap_or(u64::MAX);
    let x = g.add_input("x", 64, false);
    let gemm = NodeKind::Compute(ComputeWork {
        kind: ComputeKind::Gemm,
        flops: 2.0 * 160f64.powi(3),
        bytes: 0.0,
    });
    let pre_work = beside.producer.clone().unwrap_or(gemm);
    let (pre, message) = g.add_node("pre", pre_work, &[x], &[("message", bytes)]);
    // Issued after the producer and before the wait: ready when the producer ends.
    if let Some(work) = &beside.meanwhile {
        g.add_node("meanwhile", work.clone(), &[x], &[("meanwhile", 64)]);
    }
    // AllReduce on 2 ranks moves its message once (bus factor 1): the copy is the message.
    let (start, wait, _) = g.collective(
        "ar",
        CollectiveKind::AllReduce,
        pair,
        bytes,
        message[0],
        bytes,
    );
    let plan = Plan::simulator_streams("collective", g);
    let mut executor = CpuExecutor::default();
    let _ = executor.run(&plan); // warm-up: sizes the scratch
    let mut v: Vec<u64> = (0..repetitions.max(1))
        .filter_map(|_| executor.run(&plan).ok())
        .map(|e| {
            let (from_ns, to) = if beside.meanwhile.is_some() {
                (e.timings[start.index()].start_ns, start)
            } else {
                (e.timings[pre.index()].end_ns, wait)
            };
            e.timings[to.index()].end_ns.saturating_sub(from_ns).max(1)
        })
        .collect();
    median(&mut v)
}

/// A GEMM of `side`³ on a thread pinned to the first core, alone and while threads
/// pinned to the other cores run `competitors` (one copying thread for `Competitors::OneCopy`,
/// the same GEMM on every other core for `Competitors::AllGemm`), ns. The two are measured in
/// `repetitions` interleaved pairs (the competitors sleep during the lone run), so that the
/// machine's drift over the measurement affects both alike; returns the lone median and that
/// median times the median ratio of the pairs.
fn gemm_with_competitors_ns(competitors: Competitors, side: usize, repetitions: u32) -> (u64, u64) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let gemm = || {
        let a = vec![0.5f32; side * side];
        let b = vec![0.25f32; side * side];
        let mut c = vec![0.0f32; side * side];
        move || {
            matmul(&a, &b, &mut c, side, side, side);
            std::hint::black_box(&mut c);
        }
    };
    let others = match competitors {
        Competitors::OneCopy => 1,
        Competitors::AllGemm => crate::exec::cpu::workers().saturating_sub(1),
    };
    let (active, stop) = (AtomicBool::new(false), AtomicBool::new(false));
    let pause = std::time::Duration::from_millis(1);
    std::thread::scope(|s| {
        for i in 1..=others {
            let (active, stop) = (&active, &stop);
            s.spawn(move || {
                crate::exec::cpu::pin_to_core(i);
                let mut work: Box<dyn FnMut()> = match competitors {
                    Competitors::AllGemm => Box::new(gemm()),
                    Competitors::OneCopy => {
                        let src = vec![1u8; CONTENTION_COPY_BYTES];
                        let mut dst = vec![0u8; CONTENTION_COPY_BYTES];
                        Box::new(move || {
                            dst.copy_from_slice(&src);
                            std::hint::black_box(&mut dst);
                        })
                    }
                };
                while !stop.load(Ordering::Relaxed) {
                    if active.load(Ordering::Relaxed) {
                        work();
                    } else {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                }
            });
        }
        let measured = s
            .spawn(|| {
                crate::exec::cpu::pin_to_core(0);
                let mut run = gemm();
                run(); // warm-up
                let (mut alone, mut ratios) = (Vec::new(), Vec::new());
                for _ in 0..repetitions.max(1) {
                    active.store(false, Ordering::Relaxed);
                    std::thread::sleep(pause);
                    let lone = time_ns(&mut run);
                    active.store(true, Ordering::Relaxed);
                    std::thread::sleep(pause);
                    let with = time_ns(&mut run);
                    alone.push(lone);
                    ratios.push(with as f64 / lone as f64);
                }
                ratios.sort_by(f64::total_cmp);
                let ratio = ratios[(ratios.len() - 1) / 2];
                let alone = median(&mut alone);
                (alone, (alone as f64 * ratio) as u64)
            })
            .join()
            .unwrap_or((1, 1));
        stop.store(true, Ordering::Relaxed);
        measured
    })
}

/// The slowdown of a GEMM of `side`³ per other worker running the same GEMM beside it (the
/// profile's `parallel_compute_slowdown`) and the time of one such GEMM among them, ns.
fn parallel_slowdown_ns(side: usize, repetitions: u32) -> (f64, u64) {
    let workers = crate::exec::cpu::workers();
    let (alone_ns, all_ns) = gemm_with_competitors_ns(Competitors::AllGemm, side, repetitions);
    let slowdown = if workers > 1 {
        ((all_ns as f64 / alone_ns.max(1) as f64 - 1.0) / (workers - 1) as f64).max(0.0)
    } else {
        0.0
    };
    (slowdown, all_ns)
}

/// [`parallel_slowdown_ns`]'s slowdown.
fn parallel_slowdown(side: usize, repetitions: u32) -> f64 {
    parallel_slowdown_ns(side, repetitions).0
}

/// How many of `plan`'s streams run compute ops.
fn compute_streams(plan: &Plan) -> usize {
    plan.programs()
        .iter()
        .filter(|p| {
            p.iter()
                .any(|&n| matches!(plan.graph.dag[n].kind, NodeKind::Compute(_)))
        })
        .count()
}

/// What runs beside the measured GEMM.
#[derive(Clone, Copy)]
enum Competitors {
    /// One thread copying [`CONTENTION_COPY_BYTES`] (the collective emulation).
    OneCopy,
    /// The same GEMM on every other core.
    AllGemm,
}

/// Repetitions of each contention measurement at least (a ratio of two medians of a 3 ms GEMM
/// is noisier than one point of a curve).
const CONTENTION_REPETITIONS: u32 = 21;

/// Repetitions of a memory-bound op or a collective in its situation, at least: the op takes
/// microseconds and 3 left the mean over the situations noisy (a situation after a GEMM
/// repeats the GEMM too, which is what most of `validate`'s time goes to).
const SMALL_OP_REPETITIONS: u32 = 9;

/// Side of the GEMM and bytes of the contention measurements: a GEMM of the size of
/// the suite's and a copy larger than the last-level cache, as the suite's collectives are.
const CONTENTION_SIDE: usize = 512;
const CONTENTION_COPY_BYTES: usize = 32 << 20;

/// A measured table row: what, size, time, rate, whether raised to keep time monotone.
pub struct Row {
    /// `gemm m×n×k`, `copy`, …
    pub what: String,
    /// FLOPs or bytes.
    pub size: f64,
    /// Median time, ns.
    pub time_ns: u64,
    /// FLOP/s or bytes/s.
    pub rate: f64,
    /// Whether the time was raised to the previous point's.
    pub raised: bool,
}

/// Appends one measured point of a curve to the table: its median time is raised to the
/// previous point's (`last_ns`, the curve's running maximum) when below it, since the profile
/// format requires time to grow with size. Returns the (possibly raised) time, ns, and the rate
/// size / time, per s.
fn monotone_point(
    rows: &mut Vec<Row>,
    last_ns: &mut u64,
    what: String,
    size: f64,
    ns: u64,
) -> (u64, f64) {
    let raised = ns < *last_ns;
    let ns = ns.max(*last_ns).max(1);
    *last_ns = ns;
    let rate = size / (ns as f64 * 1e-9);
    rows.push(Row {
        what,
        size,
        time_ns: ns,
        rate,
        raised,
    });
    (ns, rate)
}

/// The collective curves of an executor that emulates a collective by copying its bus volume:
/// the copy curve `copy_points` ((bytes copied, bytes/s)) in the NCCL-tests convention (bus
/// bandwidth by message size), for every kind of [`COLLECTIVES`] on [`RANKS`] ranks of one node.
fn emulated_collectives(copy_points: &[(f64, f64)]) -> Vec<CollectiveCurve> {
    let mut collectives = Vec::new();
    for kind in COLLECTIVES {
        for ranks in RANKS {
            let factor = kind.bus_factor(ranks);
            collectives.push(CollectiveCurve {
                kind,
                ranks,
                ranks_per_node: ranks,
                points: copy_points
                    .iter()
                    .map(|&(volume, bytes_per_s)| BusBwPoint {
                        bytes: volume / factor,
                        bus_bytes_per_s: bytes_per_s,
                    })
                    .collect(),
            });
        }
    }
    collectives
}

/// Measures the CPU executor's kernels; returns the profile and the table rows.
#[must_use]
#[allow(clippy::too_many_lines)] // one microbenchmark per op class, in the profile's order
pub fn calibrate_cpu(repetitions: u32, progress: &ProgressBar) -> (Calibration, Vec<Row>) {
    let mut rows = Vec::new();
    let mut gemm = Vec::new();
    let mut last_ns = 0u64;
    for &side in &CPU_GEMM_SIDES {
        let flops = 2.0 * (side * side * side) as f64;
        let (m, n, k) = gemm_dims(flops);
        let ns = op_in_executor_ns(
            &NodeKind::Compute(ComputeWork {
                kind: ComputeKind::Gemm,
                flops,
                bytes: 0.0,
            }),
            None,
            repetitions,
        );
        let flops = 2.0 * (m * n * k) as f64;
        let what = format!("gemm {m}x{n}x{k} f32");
        let (_, rate) = monotone_point(&mut rows, &mut last_ns, what, flops, ns);
        gemm.push(GemmPoint {
            dtype: Dtype::Fp32,
            flops,
            flops_per_s: rate,
        });
        progress.inc(1);
    }
    let mut memory = Vec::new();
    let mut copy_points = Vec::new();
    last_ns = 0;
    for &bytes in &COPY_BYTES {
        let reps = if bytes >= 16 << 20 {
            repetitions.min(3)
        } else {
            repetitions
        };
        let moved = 2.0 * bytes as f64;
        let ns = op_in_executor_ns(
            &NodeKind::Compute(ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: 0.0,
                bytes: moved,
            }),
            None,
            reps,
        );
        let what = "copy (memory-bound op)".to_string();
        let (_, rate) = monotone_point(&mut rows, &mut last_ns, what, moved, ns);
        memory.push(MemoryPoint {
            bytes: moved,
            bytes_per_s: rate,
        });
        progress.inc(1);
    }
    last_ns = 0;
    for &bytes in &COPY_BYTES {
        let reps = if bytes >= 16 << 20 {
            repetitions.min(3)
        } else {
            repetitions
        };
        let alone = Beside {
            producer: None,
            meanwhile: None,
        };
        let ns = collective_emulation_ns(bytes, &alone, reps);
        let what = "collective emulation (copy + 2 hand-offs)".to_string();
        let (ns, _) = monotone_point(&mut rows, &mut last_ns, what, bytes as f64, ns);
        copy_points.push((bytes as f64, bytes as f64 / (ns as f64 * 1e-9)));
        progress.inc(1);
    }
    let launch_ns = {
        let mut v: Vec<u64> = (0..repetitions).map(|_| dispatch_ns(2000)).collect();
        median(&mut v)
    };
    rows.push(Row {
        what: "dispatch (one op on a stream, beside its work)".into(),
        size: 0.0,
        time_ns: launch_ns,
        rate: 0.0,
        raised: false,
    });
    progress.inc(1);
    let (alone_ns, beside_ns) = gemm_with_competitors_ns(
        Competitors::OneCopy,
        CONTENTION_SIDE,
        repetitions.max(CONTENTION_REPETITIONS),
    );
    let slowdown = (beside_ns as f64 / alone_ns.max(1) as f64 - 1.0).max(0.0);
    let flops = 2.0 * (CONTENTION_SIDE.pow(3)) as f64;
    rows.push(Row {
        what: format!(
            "gemm {CONTENTION_SIDE}³ beside a {} MiB copy: +{:.1} %",
            CONTENTION_COPY_BYTES >> 20,
            slowdown * 100.0
        ),
        size: flops,
        time_ns: beside_ns,
        rate: flops / (beside_ns.max(1) as f64 * 1e-9),
        raised: false,
    });
    progress.inc(1);
    let workers = crate::exec::cpu::workers();
    let (parallel, all_ns) =
        parallel_slowdown_ns(CONTENTION_SIDE, repetitions.max(CONTENTION_REPETITIONS));
    rows.push(Row {
        what: format!(
            "gemm {CONTENTION_SIDE}³ on all {workers} workers: +{:.1} % per other",
            parallel * 100.0
        ),
        size: flops,
        time_ns: all_ns,
        rate: flops / (all_ns.max(1) as f64 * 1e-9),
        raised: false,
    });
    progress.inc(1);
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    (
        Calibration {
            version: CALIBRATION_VERSION,
            device: format!("cpu executor ({threads} hardware threads)"),
            gemm,
            memory,
            collectives: emulated_collectives(&copy_points),
            launch_overhead_ns: Some(launch_ns as f64),
            comm_compute_slowdown: Some(slowdown),
            parallel_compute_slowdown: Some(parallel),
        },
        rows,
    )
}

/// The op sizes of a plan: GEMMs by FLOPs; memory-bound ops by bytes and collectives by bytes
/// copied, each in the situation of each of its occurrences.
struct PlanSizes {
    gemms: Vec<f64>,
    copies: Vec<(f64, Vec<Option<Lead>>)>,
    collectives: Vec<(f64, Vec<Beside>)>,
}

/// What runs around a collective's copy: the op that produced its message, and the op its
/// producer's stream runs meanwhile on the other worker (the stream's next op, when the plan
/// has it start before the copy ends).
#[derive(Clone, Debug, PartialEq)]
struct Beside {
    producer: Option<NodeKind>,
    meanwhile: Option<NodeKind>,
}

/// Whether a node does work (a zero-byte slice or concat does none).
fn works(g: &Graph, n: petgraph::stable_graph::NodeIndex) -> bool {
    match &g.dag[n].kind {
        NodeKind::Compute(w) => w.flops > 0.0 || w.bytes > 0.0,
        NodeKind::CollectiveStart { bytes, .. } => *bytes > 0,
        NodeKind::Wait { .. } => false,
    }
}

/// The distinct op sizes `plan` runs, stream by stream in issue order, each occurrence in the
/// situation `predicted` (the plan's timeline under the profile, indexed by node) puts it in:
/// after a wait that the stream reaches before its collective ends, an op runs on the worker
/// that ended the collective's copy ([`Lead::Wait`]); after a wait whose collective has long
/// ended, it runs right after the stream's previous op, on the same worker ([`Lead::Op`]); the
/// first op follows the stream's last (steps run one after another, as `validate` runs them). A
/// collective's copy runs after its producer, beside the next op of the producer's stream when
/// that op starts before the copy ends ([`Beside`]).
fn plan_sizes(plan: &Plan, predicted: &[OpTiming]) -> PlanSizes {
    let g = &plan.graph;
    let at = |n: petgraph::stable_graph::NodeIndex| {
        predicted.get(n.index()).copied().unwrap_or_default()
    };
    let mut sizes = PlanSizes {
        gemms: Vec::new(),
        copies: Vec::new(),
        collectives: Vec::new(),
    };
    let programs = plan.programs();
    for program in &programs {
        // A step follows the step before it: a stream's first op follows its last.
        let mut last: Option<&NodeKind> = program
            .iter()
            .rev()
            .find(|&&n| works(g, n))
            .map(|&n| &g.dag[n].kind);
        let mut last_end_ns = 0u64;
        let mut waited: Option<(CollectiveKind, u32, u64)> = None;
        for &n in program {
            let kind = &g.dag[n].kind;
            if let NodeKind::Wait { start } = kind {
                if let Some(NodeKind::CollectiveStart { kind, group, bytes }) =
                    g.dag.node_weight(*start).map(|s| &s.kind)
                {
                    if at(*start).end_ns > last_end_ns {
                        waited = Some((*kind, g.groups[*group].ranks.max(1), *bytes));
                    }
                }
                continue;
            }
            if !works(g, n) {
                continue;
            }
            let lead = match waited.take() {
                Some((kind, ranks, bytes)) => Some(Lead::Wait {
                    op: last.cloned(),
                    kind,
                    ranks,
                    bytes,
                }),
                None => last.cloned().map(Lead::Op),
            };
            match kind {
                NodeKind::Compute(w) if w.kind == ComputeKind::MemoryBound => {
                    if w.bytes > 0.0 {
                        follows(&mut sizes.copies, w.bytes, lead);
                    }
                }
                NodeKind::Compute(w) => {
                    if w.flops > 0.0 && !sizes.gemms.contains(&w.flops) {
                        sizes.gemms.push(w.flops);
                    }
                }
                NodeKind::CollectiveStart { kind, group, bytes } => {
                    let ranks = g.groups[*group].ranks.max(1);
                    let copy = (*bytes as f64 * kind.bus_factor(ranks)).floor();
                    if copy > 0.0 {
                        let beside = beside(plan, &programs, predicted, n);
                        follows(&mut sizes.collectives, copy, beside);
                    }
                }
                NodeKind::Wait { .. } => {}
            }
            last = Some(kind);
            last_end_ns = at(n).end_ns;
        }
    }
    sizes
}

/// The situation of collective start `c`: its producer, and the next op with work on the
/// producer's stream when `predicted` starts it before the copy ends.
fn beside(
    plan: &Plan,
    programs: &[Vec<petgraph::stable_graph::NodeIndex>],
    predicted: &[OpTiming],
    c: petgraph::stable_graph::NodeIndex,
) -> Beside {
    let g = &plan.graph;
    let at = |n: petgraph::stable_graph::NodeIndex| {
        predicted.get(n.index()).copied().unwrap_or_default()
    };
    let producer = g
        .dag
        .neighbors_directed(c, petgraph::Direction::Incoming)
        .find(|&p| works(g, p));
    let meanwhile = producer.and_then(|p| {
        let program = &programs[plan.stream_of[p.index()]];
        let i = program.iter().position(|&n| n == p)?;
        let next = program[i + 1..].iter().copied().find(|&n| works(g, n))?;
        (at(next).start_ns < at(c).end_ns).then(|| g.dag[next].kind.clone())
    });
    Beside {
        producer: producer.map(|p| g.dag[p].kind.clone()),
        meanwhile,
    }
}

/// `base` with the ops `plan` runs measured in place of the grid between them: every distinct
/// GEMM (by FLOPs), every distinct memory-bound op (by bytes, after the op it follows on its
/// stream in the plan, whose operands then hold the caches) and every distinct collective copy,
/// each as [`calibrate_cpu`] measures its grid. Microbenchmarks of the plan's op sizes, not runs
/// of the plan: the prediction stays a prediction, without the grid's interpolation error or
/// the machine's drift since the grid was measured.
#[must_use]
pub fn with_plan_points(
    base: &Calibration,
    plan: &Plan,
    predicted: &[OpTiming],
    repetitions: u32,
) -> Calibration {
    let PlanSizes {
        gemms,
        copies,
        collectives,
    } = plan_sizes(plan, predicted);
    let mut cal = base.clone();
    if compute_streams(plan) > 1 && cal.parallel_compute_slowdown.is_some() {
        // Streams that compute side by side: their GEMMs' mutual slowdown, now, at the side
        // of the plan's median GEMM.
        let mut flops = gemms.clone();
        flops.sort_by(f64::total_cmp);
        let median_flops = flops
            .get((flops.len().max(1) - 1) / 2)
            .copied()
            .unwrap_or(0.0);
        let side = crate::exec::cpu::gemm_dims(median_flops).0.max(16);
        cal.parallel_compute_slowdown = Some(parallel_slowdown(side, CONTENTION_REPETITIONS));
    }
    let gemm_ns: Vec<(f64, u64)> = gemms
        .iter()
        .map(|&flops| {
            let work = NodeKind::Compute(ComputeWork {
                kind: ComputeKind::Gemm,
                flops,
                bytes: 0.0,
            });
            (flops, op_in_executor_ns(&work, None, repetitions))
        })
        .collect();
    let copy_ns: Vec<(f64, u64)> = copies
        .iter()
        .map(|(bytes, befores)| {
            let work = NodeKind::Compute(ComputeWork {
                kind: ComputeKind::MemoryBound,
                flops: 0.0,
                bytes: *bytes,
            });
            let ns = mean_over(befores, |lead| {
                op_in_executor_ns(&work, lead.as_ref(), SMALL_OP_REPETITIONS.max(repetitions))
            });
            (*bytes, ns)
        })
        .collect();
    let collective_ns: Vec<(f64, u64)> = collectives
        .iter()
        .map(|(bytes, situations)| {
            let copy = *bytes as usize;
            let ns = mean_over(situations, |beside| {
                collective_emulation_ns(copy, beside, SMALL_OP_REPETITIONS.max(repetitions))
            });
            (*bytes, ns)
        })
        .collect();
    with_points(&cal, Dtype::Fp32, &gemm_ns, &copy_ns, &collective_ns)
}

/// `base` with the ops `plan` runs on a GPU measured in place of the grid between them, as
/// [`with_plan_points`] does on the CPU: every distinct GEMM (by FLOPs, at its own shape, in
/// `dtype`, through cuBLAS), memory-bound op (the streaming kernel) and collective copy (the
/// copy engines), each timed with CUDA events on `bench`'s stream.
///
/// # Errors
/// Out of memory or a driver/cuBLAS failure.
pub fn with_plan_points_cuda(
    base: &Calibration,
    plan: &Plan,
    bench: &Bench,
    dtype: Dtype,
    repetitions: u32,
) -> Result<Calibration, ExecError> {
    use crate::exec::cuda::kernels::{collective_copy_bytes, gemm_shape, memory_bound_copy_bytes};
    let g = &plan.graph;
    let (mut gemm_ns, mut copy_ns, mut dma_ns) = (Vec::new(), Vec::new(), Vec::new());
    for n in g.dag.node_indices() {
        match &g.dag[n].kind {
            NodeKind::Compute(w) if w.kind == ComputeKind::MemoryBound => {
                let bytes = memory_bound_copy_bytes(w);
                if bytes > 0 && !copy_ns.iter().any(|&(b, _)| b == w.bytes) {
                    copy_ns.push((w.bytes, bench.stream_copy_ns(bytes, repetitions)?));
                }
            }
            NodeKind::Compute(w) => {
                if let Some(shape) = gemm_shape(g, n) {
                    if !gemm_ns.iter().any(|&(f, _)| f == w.flops) {
                        gemm_ns.push((w.flops, bench.gemm_ns(dtype, shape, repetitions)?));
                    }
                }
            }
            NodeKind::CollectiveStart { .. } => {
                let bytes = collective_copy_bytes(g, n);
                if bytes > 0 && !dma_ns.iter().any(|&(b, _)| b == bytes as f64) {
                    dma_ns.push((bytes as f64, bench.d2d_ns(bytes, repetitions)?));
                }
            }
            NodeKind::Wait { .. } => {}
        }
    }
    Ok(with_points(base, dtype, &gemm_ns, &copy_ns, &dma_ns))
}

/// `base` with measured points ((size, ns)) in place of its curves' points within their range:
/// GEMMs of `dtype` by FLOPs, memory-bound ops by bytes moved, and the copy curve behind the
/// emulated collectives by bytes copied (left as it is when no collective was measured).
fn with_points(
    base: &Calibration,
    dtype: Dtype,
    gemm_ns: &[(f64, u64)],
    copy_ns: &[(f64, u64)],
    collective_ns: &[(f64, u64)],
) -> Calibration {
    let mut cal = base.clone();
    let grid: Vec<(f64, f64)> = base
        .gemm
        .iter()
        .filter(|p| p.dtype == dtype)
        .map(|p| (p.flops, p.flops_per_s))
        .collect();
    cal.gemm.retain(|p| p.dtype != dtype);
    cal.gemm.extend(
        merged(&grid, gemm_ns)
            .into_iter()
            .map(|(flops, flops_per_s)| GemmPoint {
                dtype,
                flops,
                flops_per_s,
            }),
    );
    let memory: Vec<(f64, f64)> = base
        .memory
        .iter()
        .map(|p| (p.bytes, p.bytes_per_s))
        .collect();
    cal.memory = merged(&memory, copy_ns)
        .into_iter()
        .map(|(bytes, bytes_per_s)| MemoryPoint { bytes, bytes_per_s })
        .collect();
    if !collective_ns.is_empty() {
        cal.collectives = emulated_collectives(&merged(&copy_curve(base), collective_ns));
    }
    cal
}

/// The copy curve (bytes copied, bytes/s) behind a profile's emulated collectives: its
/// AllReduce on 2 ranks, whose bus factor is 1.
fn copy_curve(cal: &Calibration) -> Vec<(f64, f64)> {
    cal.collectives
        .iter()
        .find(|c| c.kind == CollectiveKind::AllReduce && c.ranks == 2)
        .map(|c| {
            c.points
                .iter()
                .map(|p| (p.bytes, p.bus_bytes_per_s))
                .collect()
        })
        .unwrap_or_default()
}

/// Records that an op of `size` follows `lead`.
fn follows<T>(sizes: &mut Vec<(f64, Vec<T>)>, size: f64, lead: T) {
    let i = sizes
        .iter()
        .position(|(s, _)| *s == size)
        .unwrap_or_else(|| {
            sizes.push((size, Vec::new()));
            sizes.len() - 1
        });
    sizes[i].1.push(lead);
}

/// The mean of `measure` over `leads` (each distinct one measured once, weighted by how often it
/// occurs): an op's expected time in the plan's mix of situations (right after a GEMM its
/// buffers are out of the caches, after a small op they are in).
fn mean_over<T: PartialEq>(leads: &[T], mut measure: impl FnMut(&T) -> u64) -> u64 {
    let mut distinct: Vec<(&T, u64)> = Vec::new();
    for b in leads {
        match distinct.iter_mut().find(|(k, _)| *k == b) {
            Some((_, count)) => *count += 1,
            None => distinct.push((b, 1)),
        }
    }
    let total: u64 = distinct.iter().map(|(_, c)| c).sum();
    let sum: u128 = distinct
        .iter()
        .map(|(b, c)| u128::from(measure(b)) * u128::from(*c))
        .sum();
    u64::try_from(sum / u128::from(total.max(1))).unwrap_or(u64::MAX)
}

/// The curve `base` ((size, rate per s)) with the `measured` points ((size, ns)) in place of
/// its points within their range; times raised where needed so that time never falls as size
/// grows (the profile's rule). Returns (size, rate per s) by growing size.
fn merged(base: &[(f64, f64)], measured: &[(f64, u64)]) -> Vec<(f64, f64)> {
    if measured.is_empty() {
        return base.to_vec();
    }
    let lo = measured.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = measured.iter().map(|p| p.0).fold(0.0, f64::max);
    let mut points: Vec<(f64, f64)> = base
        .iter()
        .filter(|(size, _)| *size < lo || *size > hi)
        .map(|&(size, rate)| (size, size / rate * 1e9))
        .chain(measured.iter().map(|&(size, ns)| (size, ns.max(1) as f64)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points.dedup_by(|b, a| a.0 == b.0);
    let mut last_ns = 0.0f64;
    points
        .into_iter()
        .map(|(size, ns)| {
            last_ns = last_ns.max(ns);
            (size, size / (last_ns * 1e-9))
        })
        .collect()
}

/// Steps the CPU calibration's progress bar counts.
pub const CPU_STEPS: u64 = (CPU_GEMM_SIDES.len() + 2 * COPY_BYTES.len() + 3) as u64;

/// The table of a calibration run.
#[must_use]
pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<44} {:>14} {:>12} {:>14}\n",
        "benchmark", "FLOPs|bytes", "median µs", "rate /s"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<44} {:>14.4e} {:>12.2} {:>14.4e}{}\n",
            r.what,
            r.size,
            r.time_ns as f64 / 1e3,
            r.rate,
            if r.raised {
                "  (raised: monotone time)"
            } else {
                ""
            }
        ));
    }
    out
}

/// GEMM shapes (m, n, k) of the CUDA grid, by growing FLOPs; each runs in bf16 and fp32.
pub const CUDA_GEMM_GRID: [(u64, u64, u64); 10] = [
    (256, 256, 256),
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 2048),
    (4096, 4096, 4096),
    (8192, 4096, 4096),
    (8192, 8192, 4096),
    (8192, 8192, 8192),
];

/// Bytes copied by the memory-bound kernel and by the device-to-device copy engines on a GPU.
pub const CUDA_COPY_BYTES: [u64; 8] = [
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
    64 << 20,
    256 << 20,
    1 << 30,
];

/// Bytes of the host transfers (H2D, D2H) and the peer transfer on a GPU.
pub const CUDA_HOST_COPY_BYTES: [u64; 3] = [1 << 20, 16 << 20, 256 << 20];

/// Steps the CUDA calibration's progress bar counts: GEMMs in two dtypes, kernel and D2D
/// copies, H2D and D2H, the peer transfer, the launch.
pub const CUDA_STEPS: u64 =
    (2 * CUDA_GEMM_GRID.len() + 2 * CUDA_COPY_BYTES.len() + 2 * CUDA_HOST_COPY_BYTES.len() + 2)
        as u64;

/// Measures the CUDA executor's operations on device `ordinal` ([`crate::exec::cuda::bench`]):
/// cuBLAS GEMMs of [`CUDA_GEMM_GRID`] in bf16 and fp32 → the GEMM curves; the streaming kernel
/// → the memory curve; device-to-device copy-engine transfers → the emulated collectives'
/// curves (as on the CPU: the executor copies a collective's bus volume); host-to-device,
/// device-to-host and (with a second device) peer transfers → table rows only (the profile
/// format has no field for them); back-to-back empty kernels → the launch overhead.
///
/// # Errors
/// No driver, device, cuBLAS or NVRTC, or a device failure, in one line.
pub fn calibrate_cuda(
    ordinal: usize,
    repetitions: u32,
    progress: &ProgressBar,
) -> Result<(Calibration, Vec<Row>), ExecError> {
    let bench = Bench::new(ordinal)?;
    let mut rows = Vec::new();
    let mut gemm = Vec::new();
    for dtype in [Dtype::Bf16, Dtype::Fp32] {
        let mut last_ns = 0;
        for &(m, n, k) in &CUDA_GEMM_GRID {
            let ns = bench.gemm_ns(dtype, GemmShape { m, n, k }, repetitions)?;
            let flops = 2.0 * (m * n * k) as f64;
            let what = format!("gemm {m}x{n}x{k} {}", dtype_name(dtype));
            let (_, rate) = monotone_point(&mut rows, &mut last_ns, what, flops, ns);
            gemm.push(GemmPoint {
                dtype,
                flops,
                flops_per_s: rate,
            });
            progress.inc(1);
        }
    }
    let (mut memory, mut copy_points) = (Vec::new(), Vec::new());
    let (mut last_kernel, mut last_d2d) = (0, 0);
    for &bytes in &CUDA_COPY_BYTES {
        let moved = 2.0 * bytes as f64;
        let ns = bench.stream_copy_ns(bytes, repetitions)?;
        let what = "memory-bound kernel (stream_copy)".to_string();
        let (_, rate) = monotone_point(&mut rows, &mut last_kernel, what, moved, ns);
        memory.push(MemoryPoint {
            bytes: moved,
            bytes_per_s: rate,
        });
        progress.inc(1);
        let ns = bench.d2d_ns(bytes, repetitions)?;
        let what = "copy engine D2D (collective emulation)".to_string();
        let (_, rate) = monotone_point(&mut rows, &mut last_d2d, what, bytes as f64, ns);
        copy_points.push((bytes as f64, rate));
        progress.inc(1);
    }
    for (to_device, name) in [(true, "H2D"), (false, "D2H")] {
        let mut last_ns = 0;
        for &bytes in &CUDA_HOST_COPY_BYTES {
            let ns = bench.host_copy_ns(bytes, to_device, repetitions)?;
            let what = format!("copy engine {name} (pinned host)");
            monotone_point(&mut rows, &mut last_ns, what, bytes as f64, ns);
            progress.inc(1);
        }
    }
    let peer_bytes = CUDA_HOST_COPY_BYTES[CUDA_HOST_COPY_BYTES.len() - 1];
    if let Some(ns) = bench.peer_ns(1, peer_bytes, repetitions)? {
        let what = "copy engine peer device 0 -> 1".to_string();
        monotone_point(&mut rows, &mut 0, what, peer_bytes as f64, ns);
    }
    progress.inc(1);
    let launch_ns = bench.launch_ns(repetitions)?;
    rows.push(Row {
        what: format!("launch (empty kernel, {LAUNCHES} back to back)"),
        size: 0.0,
        time_ns: launch_ns,
        rate: 0.0,
        raised: false,
    });
    progress.inc(1);
    Ok((
        Calibration {
            version: CALIBRATION_VERSION,
            device: format!("cuda {}", bench.describe()),
            gemm,
            memory,
            collectives: emulated_collectives(&copy_points),
            launch_overhead_ns: Some(launch_ns as f64),
            // Not measured on a GPU yet: the links' analytical slowdown stays.
            comm_compute_slowdown: None,
            parallel_compute_slowdown: None,
        },
        rows,
    ))
}

fn dtype_name(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Bf16 => "bf16",
        Dtype::Fp16 => "fp16",
        Dtype::Fp32 => "f32",
    }
}

/// How long `calibrate --device cuda` waits for every launched rank to arrive.
const NCCL_RENDEZVOUS_TIMEOUT: std::time::Duration = std::time::Duration::from_mins(5);

/// The device to calibrate: 0, or under a launcher the local rank's
/// ([`crate::dist::nccl::device_for`]).
fn cuda_ordinal(launched: Option<&crate::launcher::RankInfo>) -> Result<usize, Failure> {
    let Some(info) = launched else {
        return Ok(0);
    };
    let probe = crate::exec::cuda::require_device()
        .map_err(|e| Failure::Other(format!("calibrate --device cuda: {e}")))?;
    let visible = u32::try_from(probe.devices.len()).unwrap_or(u32::MAX);
    crate::dist::nccl::device_for(info.local_rank, visible)
        .map(|d| d as usize)
        .map_err(|e| Failure::Other(format!("calibrate --device cuda: {e}")))
}

/// Runs `bubblelab calibrate`.
///
/// # Errors
/// CUDA without a driver, device, cuBLAS or NVRTC, a device failure, or an output file that
/// cannot be written.
pub fn calibrate(args: &CalibrateArgs) -> Result<(), Failure> {
    let launched = match args.device {
        Device::Cuda => crate::dist::launched()?,
        Device::Cpu => None,
    };
    let steps = match args.device {
        Device::Cpu => CPU_STEPS,
        Device::Cuda => CUDA_STEPS,
    };
    let progress = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("calibrating {bar:30} {pos}/{len} {elapsed}") {
        progress.set_style(style);
    }
    let (mut cal, rows) = match args.device {
        Device::Cpu => calibrate_cpu(args.repetitions, &progress),
        Device::Cuda => {
            let ordinal = cuda_ordinal(launched.as_ref())?;
            calibrate_cuda(ordinal, args.repetitions, &progress)
                .map_err(|e| Failure::Other(format!("calibrate --device cuda: {e}")))?
        }
    };
    progress.finish_and_clear();
    if let (Device::Cuda, Some(info)) = (args.device, &launched) {
        // Real NCCL collectives across the launched ranks replace the copy emulation's curves;
        // only rank 0 writes the profile and the table.
        cal.collectives = crate::dist::nccl_calibration(info, NCCL_RENDEZVOUS_TIMEOUT)?;
        cal.device
            .push_str(&format!(", NCCL over {} ranks", info.world_size));
        if info.rank != 0 {
            return Ok(());
        }
    }
    cal.validate()
        .map_err(|e| Failure::Other(format!("the measured profile is invalid: {e}")))?;
    let mut text = format!("calibrated profile of {}\n", cal.device);
    text.push_str(&table(&rows));
    if let Some(path) = &args.output {
        let json = serde_json::to_string_pretty(&cal)
            .map_err(|e| Failure::Other(format!("cannot encode the profile: {e}")))?;
        crate::files::write_file(path, &(json + "\n"))?;
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    crate::files::write_stdout(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_grid_grows_in_flops_and_fits_cublas_ints() {
        let flops: Vec<u64> = CUDA_GEMM_GRID.iter().map(|&(m, n, k)| m * n * k).collect();
        assert!(flops.windows(2).all(|w| w[0] < w[1]), "{flops:?}");
        for &(m, n, k) in &CUDA_GEMM_GRID {
            // The largest operand (fp32) stays far below an H200's memory and cuBLAS's int.
            assert!(m.max(n).max(k) <= 8192);
            assert!(4 * (m * n + m * k + k * n) <= 1 << 30);
        }
        assert!(CUDA_COPY_BYTES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            CUDA_COPY_BYTES.map(|b| b % 16),
            [0; 8],
            "whole 16-byte words"
        );
    }

    #[test]
    fn raised_points_keep_time_monotone_and_rates_follow() {
        let mut rows = Vec::new();
        let mut last = 0;
        let (ns, rate) = monotone_point(&mut rows, &mut last, "a".into(), 1e3, 1000);
        assert_eq!(ns, 1000);
        assert!((rate - 1e9).abs() < 1.0, "{rate}");
        let (ns, rate) = monotone_point(&mut rows, &mut last, "b".into(), 4e3, 500);
        assert_eq!(ns, 1000, "raised to the previous point's time");
        assert!((rate - 4e9).abs() < 4.0, "{rate}");
        assert!(!rows[0].raised && rows[1].raised);
    }

    #[test]
    fn plan_points_replace_the_grid_within_their_range_and_keep_time_monotone() {
        // Grid: 1e3 at 1e9/s (1 µs), 1e4 (10 µs), 1e5 (100 µs), 1e6 (1 ms).
        let grid = [(1e3, 1e9), (1e4, 1e9), (1e5, 1e9), (1e6, 1e9)];
        // Measured: 2e3 took 5 µs, 5e4 took 4 µs (faster than 2e3: raised to 5 µs).
        let m = merged(&grid, &[(2e3, 5_000), (5e4, 4_000)]);
        let sizes: Vec<f64> = m.iter().map(|p| p.0).collect();
        assert_eq!(
            sizes,
            [1e3, 2e3, 5e4, 1e5, 1e6],
            "1e4 lies within the measured range"
        );
        let ns: Vec<f64> = m.iter().map(|&(s, r)| (s / r * 1e9).round()).collect();
        assert_eq!(ns, [1_000.0, 5_000.0, 5_000.0, 100_000.0, 1_000_000.0]);
        assert_eq!(merged(&grid, &[]), grid.to_vec());
    }

    #[test]
    fn an_op_costs_its_mean_over_the_ops_it_follows() {
        let gemm = NodeKind::Compute(ComputeWork {
            kind: ComputeKind::Gemm,
            flops: 1e6,
            bytes: 0.0,
        });
        // Twice after a GEMM (cold: 30), once after nothing (warm: 6): (2·30 + 6) / 3 = 22.
        let after_gemm = Some(Lead::Op(gemm));
        let ns = mean_over(&[after_gemm.clone(), None, after_gemm], |b| {
            if b.is_some() {
                30
            } else {
                6
            }
        });
        assert_eq!(ns, 22);
    }

    /// A Helix-like stream: GEMM p0 sends its output through a collective while GEMM p1
    /// computes; the wait comes after p1, then a norm reads the collective's result. Returns
    /// the plan and its nodes (p0, p1, start, wait, norm).
    fn overlapped_plan() -> (Plan, [petgraph::stable_graph::NodeIndex; 5]) {
        let gemm = || {
            NodeKind::Compute(ComputeWork {
                kind: ComputeKind::Gemm,
                flops: 1e9,
                bytes: 0.0,
            })
        };
        let mut g = Graph::new();
        let pair = g.add_group("tp", 2, 2);
        let x = g.add_input("x", 64, false);
        let (p0, a) = g.add_node("p0", gemm(), &[x], &[("a", 1024)]);
        let (start, wait, r) =
            g.collective("rs", CollectiveKind::ReduceScatter, pair, 1024, a[0], 512);
        let (p1, _) = g.add_node("p1", gemm(), &[x], &[("b", 1024)]);
        let norm_work = NodeKind::Compute(ComputeWork {
            kind: ComputeKind::MemoryBound,
            flops: 0.0,
            bytes: 4096.0,
        });
        let (norm, _) = g.add_node("norm", norm_work, &[r], &[("n", 512)]);
        g.order = vec![p0, start, p1, wait, norm];
        (
            Plan::simulator_streams("overlap", g),
            [p0, p1, start, wait, norm],
        )
    }

    fn timed(bound: usize, at: &[(petgraph::stable_graph::NodeIndex, u64, u64)]) -> Vec<OpTiming> {
        let mut t = vec![OpTiming::default(); bound];
        for &(n, start_ns, end_ns) in at {
            t[n.index()] = OpTiming { start_ns, end_ns };
        }
        t
    }

    #[test]
    fn each_op_is_measured_in_the_situation_the_predicted_timeline_puts_it_in() {
        let (plan, [p0, p1, start, wait, norm]) = overlapped_plan();
        let bound = crate::exec::node_bound(&plan.graph);
        let gemm = plan.graph.dag[p1].kind.clone();
        // The collective ends while p1 computes: the wait passes at once and the norm runs
        // right after p1 on its worker, its buffers evicted by p1's operands.
        let hidden = timed(
            bound,
            &[
                (p0, 0, 100),
                (start, 100, 130),
                (p1, 100, 200),
                (wait, 200, 200),
                (norm, 200, 210),
            ],
        );
        let sizes = plan_sizes(&plan, &hidden);
        assert_eq!(
            sizes.copies,
            vec![(4096.0, vec![Some(Lead::Op(gemm.clone()))])]
        );
        // The copy runs on the other worker beside p1.
        let beside = &sizes.collectives[0].1[0];
        assert_eq!(beside.producer.as_ref(), Some(&gemm));
        assert_eq!(beside.meanwhile.as_ref(), Some(&gemm));
        // The collective outlasts p1: the stream blocks at the wait, and the norm runs on the
        // worker that ends the copy, after it.
        let exposed = timed(
            bound,
            &[
                (p0, 0, 100),
                (start, 100, 300),
                (p1, 100, 200),
                (wait, 300, 300),
                (norm, 300, 310),
            ],
        );
        let sizes = plan_sizes(&plan, &exposed);
        assert!(
            matches!(sizes.copies[0].1[0], Some(Lead::Wait { op: Some(_), .. })),
            "{:?}",
            sizes.copies
        );
        // p1 starts after the copy has ended: nothing runs beside it.
        let late = timed(
            bound,
            &[
                (p0, 0, 100),
                (start, 100, 130),
                (p1, 150, 250),
                (wait, 250, 250),
                (norm, 250, 260),
            ],
        );
        assert_eq!(plan_sizes(&plan, &late).collectives[0].1[0].meanwhile, None);
    }

    #[test]
    fn emulated_collectives_convert_copy_volume_to_message_size() {
        let curves = emulated_collectives(&[(1e6, 2e9)]);
        assert_eq!(curves.len(), COLLECTIVES.len() * RANKS.len());
        let ar8 = curves
            .iter()
            .find(|c| c.kind == CollectiveKind::AllReduce && c.ranks == 8)
            .expect("allreduce 8");
        // AllReduce on 8 ranks moves 2·7/8 of the message: 1 MB copied is a 571 kB message.
        assert!((ar8.points[0].bytes - 1e6 / 1.75).abs() < 1e-6);
        assert!((ar8.points[0].bus_bytes_per_s - 2e9).abs() < 1e-6);
    }
}
