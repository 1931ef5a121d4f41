//! `bubblelab validate`: predict with the (calibrated) cost model, execute for real, compare.
//!
//! Each case is a plan (graph, issue order, streams). On the CPU the graph is scaled down to the
//! device ([`crate::exec::choose_scale`]: compute ≈ `--target-ms`, communication keeping its
//! share of the step on the modelled GPU); on a GPU (`--device cuda`) it runs at full size
//! (the pipeline case's GEMM side still follows `--target-ms`). The prediction is the
//! simulator's (`graph::sim::simulate`) on the scaled graph with the device's calibrated cost
//! model (on CUDA in the graph's GEMM dtype), or the engine's for plans with several compute
//! streams (the pipeline), with the plan's own op sizes measured in place of the grid between
//! them ([`with_plan_points`]; on the CPU before every run, each run beside its own
//! prediction; each measured CPU run follows an unmeasured run of the plan, as a step follows
//! the step before it). The measurement is the median of `--repetitions` runs after `--warmup`
//! runs, its spread printed beside it; memory is the executor's allocator's high-water mark
//! against the predicted timeline placed by the same policy. Errors are (measured − predicted)
//! / measured.

use std::path::PathBuf;

use bubblelab_core::cost::{ComputeKind, CostModel, Dtype, Group};
use bubblelab_core::engine::{self, Dep, Discipline, MemoryLedger, Resource, Task, TaskGraph};
use bubblelab_core::graph::sim::simulate;
use bubblelab_core::graph::validate::validate as validate_graph;
use bubblelab_core::graph::{Graph, NodeKind};
use bubblelab_core::hw::{Calibration, GpuKind};
use bubblelab_core::labs::overlap::{self, OverlapParams, Strategy};
use bubblelab_core::scenario::KeepsRuns;
use bubblelab_core::units::Nanos;
use bubblelab_core::Scenario;
use clap::Args;
use indicatif::ProgressBar;

use crate::calibrate::{calibrate_cpu, calibrate_cuda, with_plan_points, with_plan_points_cuda};
use crate::error::Failure;
use crate::exec::cpu::CpuExecutor;
use crate::exec::cuda::executor::{CudaExecutor, FULL_SIZE};
use crate::exec::cuda::kernels::graph_dtype;
use crate::exec::{self, median, Executor, Plan, Scale};
use crate::files::{self, MAX_INPUT_BYTES};
use crate::Device;

/// Arguments of `bubblelab validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// An overlap-lab scenario JSON to validate (its four strategies).
    #[arg(
        value_name = "SCENARIO",
        required_unless_present_any = ["suite", "scenario_flag"],
        conflicts_with_all = ["suite", "scenario_flag"]
    )]
    scenario: Option<PathBuf>,
    /// The same scenario file as a flag, as the lab commands take it.
    #[arg(long = "scenario", value_name = "FILE", conflicts_with = "suite")]
    scenario_flag: Option<PathBuf>,
    /// Run the suite: overlap preset serial vs Helix, a pipeline on one device (stages as
    /// streams), a memory-heavy long-context case.
    #[arg(long)]
    suite: bool,
    /// Executor.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// Calibrated profile JSON (from `bubblelab calibrate --output`); default: calibrate now.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Largest accepted relative error (0.05 = 5 %) of makespan and peak memory.
    #[arg(long, default_value_t = 0.05)]
    max_error: f64,
    /// Measured repetitions per case (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    repetitions: u32,
    /// Unmeasured runs before the repetitions.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=100))]
    warmup: u32,
    /// Compute time each scaled case aims at on the device, ms (on CUDA only the pipeline
    /// case; the overlap cases run at full size).
    #[arg(long, default_value_t = 200.0)]
    target_ms: f64,
    /// Write every case's measured per-op intervals (last repetition) as JSON here.
    #[arg(long, value_name = "FILE")]
    timings: Option<PathBuf>,
}

/// The cost model of the CPU executor: its calibrated curves, and peaks (fp32 FLOP/s, bytes/s)
/// taken from their best points so that attention and memory-bound FLOPs get CPU rates.
fn cpu_cost(cal: &Calibration) -> CostModel {
    let mut cost = CostModel::new(GpuKind::H100);
    let peak = cal.gemm.iter().map(|p| p.flops_per_s).fold(1.0, f64::max);
    let bw = cal.memory.iter().map(|p| p.bytes_per_s).fold(1.0, f64::max);
    cost.gpu.name.clone_from(&cal.device);
    cost.gpu.peak_bf16_flops_per_s = peak;
    cost.gpu.peak_fp16_flops_per_s = peak;
    cost.gpu.peak_fp32_flops_per_s = peak;
    cost.gpu.hbm_bytes_per_s = bw;
    cost.dtype = Dtype::Fp32;
    cost.with_calibration(cal.clone())
}

/// The cost model of the CUDA executor: the analytical profile of the GPU the calibration
/// names (H200 unless it names an A100 or H100) with the calibrated curves, for GEMMs in
/// `dtype`.
fn cuda_cost(cal: &Calibration, dtype: Dtype) -> CostModel {
    let kind = if cal.device.contains("A100") {
        GpuKind::A100
    } else if cal.device.contains("H100") {
        GpuKind::H100
    } else {
        GpuKind::H200
    };
    let mut cost = CostModel::new(kind);
    cost.dtype = dtype;
    cost.with_calibration(cal.clone())
}

/// A prediction: makespan (ns), memory (bytes) and when each node runs (ns, indexed by node
/// index).
struct Prediction {
    makespan_ns: u64,
    /// Peak of live tensor bytes (the simulator's ledger).
    live_bytes: u64,
    /// High-water mark of the executor's allocator had the run gone as predicted
    /// ([`exec::Lifetimes::placed_high_water`]): the live bytes with block rounding and
    /// fragmentation.
    peak_bytes: u64,
    timings: Vec<exec::OpTiming>,
}

impl Prediction {
    /// A prediction of `plan` from its makespan, ledger peak and per-node timings; the
    /// allocator's high-water mark is placed from the timings.
    fn new(
        plan: &Plan,
        makespan_ns: u64,
        live_bytes: u64,
        timings: Vec<exec::OpTiming>,
    ) -> Result<Prediction, Failure> {
        let lifetimes = exec::Lifetimes::new(&plan.graph)
            .map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
        Ok(Prediction {
            makespan_ns,
            live_bytes,
            peak_bytes: lifetimes.placed_high_water(&plan.graph, &timings),
            timings,
        })
    }
}

/// Prediction of a plan with several compute streams: the engine runs each stream in issue
/// order against the DAG's dependencies, with the cost model's op times; memory follows the
/// simulator's ledger rule. With `processors`, the streams take turns on that many processors
/// (the CPU executor's worker threads, [`engine::simulate_on_processors`]); without, each stream
/// is a device of its own (GPU streams of a pipeline's stages).
fn predict_engine(
    plan: &Plan,
    cost: &CostModel,
    processors: Option<engine::Processors>,
) -> Result<Prediction, Failure> {
    let g = &plan.graph;
    let bound = exec::node_bound(g);
    let mut task_of = vec![usize::MAX; bound];
    let nodes: Vec<_> = g.order.clone();
    for (i, n) in nodes.iter().enumerate() {
        task_of[n.index()] = i;
    }
    let programs = plan.programs();
    let resources = plan
        .streams
        .iter()
        .zip(&programs)
        .map(|(name, p)| Resource {
            name: name.clone(),
            discipline: Discipline::InOrder(p.iter().map(|n| task_of[n.index()]).collect()),
        })
        .collect();
    let preds = exec::predecessors(g);
    let tasks = nodes
        .iter()
        .map(|&n| {
            let duration = match &g.dag[n].kind {
                NodeKind::Compute(w) => cost.compute_ns(w),
                NodeKind::CollectiveStart { kind, group, bytes } => {
                    let s = &g.groups[*group];
                    cost.collective_ns(*kind, *bytes as f64, Group::new(s.ranks, s.ranks_per_node))
                }
                NodeKind::Wait { .. } => 0.0,
            };
            Task {
                resource: plan.stream_of[n.index()],
                duration_ns: duration.round().max(0.0) as u64,
                deps: preds[n.index()]
                    .iter()
                    .map(|p| Dep {
                        task: task_of[p.index()],
                        delay_ns: 0,
                    })
                    .collect(),
            }
        })
        .collect();
    let graph = TaskGraph { resources, tasks };
    let sim = match processors {
        Some(p) => engine::simulate_on_processors(&graph, p),
        None => engine::simulate(&graph),
    }
    .map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
    let at = |n: petgraph::stable_graph::NodeIndex| sim.timings[task_of[n.index()]];
    let mut ledger = MemoryLedger::new(1);
    for (t, tensor) in g.tensors.iter().enumerate() {
        if tensor.persistent {
            continue;
        }
        let born = tensor
            .producer
            .map_or(Nanos::ZERO, |p| match g.dag[p].kind {
                NodeKind::Wait { start } => at(start).start,
                _ => at(p).start,
            });
        let last = g
            .dag
            .node_indices()
            .filter(|&n| g.dag[n].inputs.contains(&t))
            .map(|n| at(n).end)
            .max()
            .unwrap_or(sim.makespan);
        ledger.alloc(born, 0, tensor.bytes);
        ledger.free(last.max(born), 0, tensor.bytes);
    }
    let mut timings = vec![exec::OpTiming::default(); bound];
    for &n in &nodes {
        let t = at(n);
        timings[n.index()] = exec::OpTiming {
            start_ns: t.start.0,
            end_ns: t.end.0,
        };
    }
    Prediction::new(
        plan,
        sim.makespan.0,
        ledger.curves().pop().map_or(0, |c| c.peak_bytes),
        timings,
    )
}

/// Prediction of a plan with one compute stream: the simulator's (`graph::sim::simulate`).
fn predict_sim(plan: &Plan, cost: &CostModel) -> Result<Prediction, Failure> {
    let sim =
        simulate(&plan.graph, cost).map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
    let timings = sim
        .timings
        .iter()
        .map(|t| exec::OpTiming {
            start_ns: t.start.0,
            end_ns: t.end.0,
        })
        .collect();
    Prediction::new(plan, sim.makespan_ns, sim.peak_bytes, timings)
}

/// A pipeline on one device: `stages` stages as streams, `micro_batches` micro-batches in
/// GPipe order (all forwards, then all backwards in reverse), each forward a GEMM of
/// 2·side³ FLOPs, each backward twice that; activations of `side`² f32 live from their forward
/// to their backward.
#[must_use]
pub fn pipeline_plan(stages: usize, micro_batches: usize, side: u64) -> Plan {
    use bubblelab_core::cost::ComputeWork;
    let mut g = Graph::new();
    let flops = 2.0 * (side * side * side) as f64;
    let act = side * side * 4;
    let work = |f: f64| {
        NodeKind::Compute(ComputeWork {
            kind: ComputeKind::Gemm,
            flops: f,
            bytes: 3.0 * act as f64,
        })
    };
    let mut stream_of = Vec::new();
    let mut acts = vec![vec![0usize; stages]; micro_batches];
    for (m, acts_m) in acts.iter_mut().enumerate() {
        let mut x = g.add_input(&format!("mb{m}.input"), act, false);
        for (s, slot) in acts_m.iter_mut().enumerate() {
            let name = format!("F s{s} mb{m}");
            let (node, out) = g.add_node(&name, work(flops), &[x], &[(&name, act)]);
            stream_of.push((node.index(), s));
            x = out[0];
            *slot = x;
        }
    }
    for (m, acts_m) in acts.iter().enumerate() {
        let mut grad: Option<usize> = None;
        for s in (0..stages).rev() {
            let name = format!("B s{s} mb{m}");
            let mut inputs = vec![acts_m[s]];
            inputs.extend(grad);
            let (node, out) = g.add_node(&name, work(2.0 * flops), &inputs, &[(&name, act)]);
            stream_of.push((node.index(), s));
            grad = Some(out[0]);
        }
    }
    let mut map = vec![0; exec::node_bound(&g)];
    for (i, s) in stream_of {
        map[i] = s;
    }
    Plan {
        name: format!("pipeline {stages} stages × {micro_batches} mb (GPipe)"),
        graph: g,
        stream_of: map,
        streams: (0..stages).map(|s| format!("stage {s}")).collect(),
    }
}

/// The overlap cases of a scenario: (name, graph, GPU cost model).
fn overlap_cases(
    label: &str,
    params: &OverlapParams,
    strategies: &[Strategy],
) -> Result<Vec<(String, Graph, CostModel)>, Failure> {
    let run = params
        .simulate(&(), &mut |_, _| {})
        .map_err(|e| Failure::Input(format!("{label}: {e}")))?
        .runs;
    let cost = overlap::cost_model(params);
    Ok(run
        .strategies
        .into_iter()
        .filter(|(s, _, _)| strategies.contains(s))
        .map(|(s, g, _)| (format!("{label} {}", s.label()), g, cost.clone()))
        .collect())
}

fn preset_params(id: &str) -> Result<OverlapParams, Failure> {
    match crate::presets::find(id)?.scenario() {
        Ok(Scenario::Overlap(p)) => Ok(p),
        _ => Err(Failure::Other(format!(
            "preset {id} is not an overlap preset"
        ))),
    }
}

/// The suite's overlap cases: GPT-3 Curie TP2+SP serial vs Helix, and the memory-heavy
/// Llama-3 8B long-context case under Helix.
fn suite_overlap_cases() -> Result<Vec<(String, Graph, CostModel)>, Failure> {
    let mut cases = overlap_cases(
        "gpt3-curie tp2+sp",
        &OverlapParams::default(),
        &[Strategy::Serial, Strategy::Helix],
    )?;
    cases.extend(overlap_cases(
        "llama3-8b 32k-token context",
        &preset_params("overlap-llama3-8b-long-context")?,
        &[Strategy::Helix],
    )?);
    Ok(cases)
}

struct Row {
    case: String,
    scale: Option<Scale>,
    /// (Longest − shortest) / median measured makespan over the repetitions.
    spread: f64,
    /// Where the time goes, each class's median over the repetitions.
    classes: [ClassSum; 4],
    predicted: Prediction,
    measured_ns: u64,
    measured_peak: u64,
    timings: Vec<exec::OpTiming>,
    plan: Plan,
}

fn rel_error(measured: f64, predicted: f64) -> f64 {
    if measured == 0.0 && predicted == 0.0 {
        0.0
    } else {
        (measured - predicted).abs() / measured.max(1.0)
    }
}

/// The classes of the per-op breakdown, in table order.
const CLASSES: [&str; 4] = ["GEMM", "memory-bound", "collective (copy)", "compute idle"];

/// A node's class in the breakdown (attention runs as a GEMM on every executor); `None` for
/// waits, whose blocked time is part of "compute idle".
fn op_class(kind: &NodeKind) -> Option<usize> {
    match kind {
        NodeKind::Compute(w) if w.kind == ComputeKind::MemoryBound => Some(1),
        NodeKind::Compute(_) => Some(0),
        NodeKind::CollectiveStart { .. } => Some(2),
        NodeKind::Wait { .. } => None,
    }
}

/// One class of the breakdown: ops counted and the summed durations, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ClassSum {
    ops: usize,
    predicted_ns: u64,
    measured_ns: u64,
}

/// Where a case's time goes, predicted vs measured: Σ durations of its GEMMs, memory-bound ops
/// and collectives (copies on the CPU), and "compute idle", the time the streams that compute
/// spend outside compute ops (waits on collectives, dependencies on other streams, hand-offs),
/// summed over those streams up to the makespan.
fn breakdown(
    plan: &Plan,
    predicted: &Prediction,
    measured: &[exec::OpTiming],
    measured_ns: u64,
) -> [ClassSum; 4] {
    let g = &plan.graph;
    let mut sums = [ClassSum::default(); 4];
    let mut compute_streams = vec![false; plan.streams.len()];
    let dur = |t: &[exec::OpTiming], i: usize| {
        t.get(i).map_or(0, |x| x.end_ns.saturating_sub(x.start_ns))
    };
    for n in g.dag.node_indices() {
        let Some(c) = op_class(&g.dag[n].kind) else {
            continue;
        };
        let i = n.index();
        sums[c].ops += 1;
        sums[c].predicted_ns += dur(&predicted.timings, i);
        sums[c].measured_ns += dur(measured, i);
        if c != 2 {
            compute_streams[plan.stream_of[i]] = true;
        }
    }
    let streams = compute_streams.iter().filter(|&&c| c).count() as u64;
    let busy = |t: &[exec::OpTiming]| -> u64 {
        g.dag
            .node_indices()
            .filter(|n| matches!(op_class(&g.dag[*n].kind), Some(0 | 1)))
            .map(|n| dur(t, n.index()))
            .sum()
    };
    sums[3] = ClassSum {
        ops: 0,
        predicted_ns: (streams * predicted.makespan_ns).saturating_sub(busy(&predicted.timings)),
        measured_ns: (streams * measured_ns).saturating_sub(busy(measured)),
    };
    sums
}

/// Each class's median over `sums` (predicted and measured separately; the lower middle).
fn median_classes(sums: &[[ClassSum; 4]]) -> [ClassSum; 4] {
    let mut out = [ClassSum::default(); 4];
    for (c, class) in out.iter_mut().enumerate() {
        let mut predicted: Vec<u64> = sums.iter().map(|s| s[c].predicted_ns).collect();
        let mut measured: Vec<u64> = sums.iter().map(|s| s[c].measured_ns).collect();
        *class = ClassSum {
            ops: sums.first().map_or(0, |s| s[c].ops),
            predicted_ns: median(&mut predicted),
            measured_ns: median(&mut measured),
        };
    }
    out
}

/// Runs `bubblelab validate`.
///
/// # Errors
/// Bad input (exit 2), or an error above `--max-error` (exit 1).
#[allow(clippy::too_many_lines)]
pub fn validate(args: &ValidateArgs) -> Result<(), Failure> {
    if !(args.max_error.is_finite() && args.max_error >= 0.0) {
        return Err(Failure::Input(format!(
            "--max-error: expected a fraction ≥ 0 (0.05 = 5 %), got {}",
            args.max_error
        )));
    }
    if !(args.target_ms.is_finite() && args.target_ms > 0.0 && args.target_ms <= 60_000.0) {
        return Err(Failure::Input(format!(
            "--target-ms: expected ms in (0, 60000], got {}",
            args.target_ms
        )));
    }
    // Inputs first, so that bad input fails before any measurement.
    let mut cases: Vec<(String, Graph, CostModel)> = Vec::new();
    let mut plans: Vec<Plan> = Vec::new();
    if let Some(path) = args.scenario.as_ref().or(args.scenario_flag.as_ref()) {
        let name = files::label(path);
        let text = files::read_text(path, MAX_INPUT_BYTES)?;
        match Scenario::from_json(&text).map_err(|e| Failure::Input(format!("{name}: {e}")))? {
            Scenario::Overlap(p) => cases.extend(overlap_cases(&name, &p, &crate::OVERLAP_ALL)?),
            other => {
                return Err(Failure::Input(format!(
                    "{name}: validate runs overlap scenarios, this is a {} scenario",
                    other.lab()
                )))
            }
        }
    }
    let profile = match &args.profile {
        Some(path) => {
            let name = files::label(path);
            let text = files::read_text(path, MAX_INPUT_BYTES)?;
            Some(
                Calibration::from_json(&text)
                    .map_err(|e| Failure::Input(format!("{name}: {e}")))?,
            )
        }
        None => None,
    };
    // The device next, so that a missing GPU fails before any measurement.
    let mut executor: Box<dyn Executor> = match args.device {
        Device::Cpu => Box::new(CpuExecutor::default()),
        Device::Cuda => Box::new(
            CudaExecutor::new(0)
                .map_err(|e| Failure::Other(format!("validate --device cuda: {e}")))?,
        ),
    };
    if args.suite {
        cases.extend(suite_overlap_cases()?);
    }
    let cal = match profile {
        Some(c) => c,
        None if args.device == Device::Cuda => {
            eprintln!("validate: no --profile, calibrating the CUDA executor first");
            calibrate_cuda(0, 3, &ProgressBar::hidden())
                .map_err(|e| Failure::Other(format!("validate --device cuda: {e}")))?
                .0
        }
        None => {
            eprintln!("validate: no --profile, calibrating the CPU executor first");
            calibrate_cpu(3, &ProgressBar::hidden()).0
        }
    };
    // The device's cost model for a graph: the CUDA executor runs its GEMMs in the graph's
    // dtype.
    let cost_for = |graph: &Graph| match args.device {
        Device::Cpu => cpu_cost(&cal),
        Device::Cuda => cuda_cost(&cal, graph_dtype(graph)),
    };
    let target_s = args.target_ms / 1e3;
    let mut scales = Vec::new();
    for (name, graph, gpu_cost) in &cases {
        // The CPU executor runs a scaled-down graph; the CUDA executor the graph as it is.
        let s = match args.device {
            Device::Cpu => exec::choose_scale(graph, gpu_cost, &cost_for(graph), target_s),
            Device::Cuda => FULL_SIZE,
        };
        scales.push(Some(s));
        plans.push(Plan::simulator_streams(name, exec::scale(graph, s)));
    }
    if args.suite {
        // GEMM side so that one forward takes about target / (3 · stages · micro-batches),
        // at the device's best fp32 GEMM rate.
        let peak = match args.device {
            Device::Cpu => cpu_cost(&cal).gpu.peak_fp32_flops_per_s,
            Device::Cuda => cal
                .gemm
                .iter()
                .filter(|p| p.dtype == Dtype::Fp32)
                .map(|p| p.flops_per_s)
                .fold(1.0, f64::max),
        };
        let max_side = match args.device {
            Device::Cpu => 1024,
            Device::Cuda => 8192,
        };
        let per_op_flops = peak * target_s / (3.0 * 4.0 * 8.0);
        let side = ((per_op_flops / 2.0).cbrt() as u64).clamp(8, max_side);
        plans.push(pipeline_plan(4, 8, side));
        scales.push(None);
    }
    // The CPU executor's streams take turns on its worker threads, one per core, which slow
    // each other as calibrated.
    let processors = match args.device {
        Device::Cpu => Some(engine::Processors {
            count: u32::try_from(crate::exec::cpu::workers()).unwrap_or(u32::MAX),
            contention: cal.parallel_compute_slowdown.unwrap_or(0.0),
        }),
        Device::Cuda => None,
    };
    let mut rows = Vec::new();
    for (plan, scale) in plans.into_iter().zip(scales) {
        validate_graph(&plan.graph).map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
        // On the CPU the plan's own op sizes are measured before each run (microbenchmarks,
        // not the plan), so that each prediction is paired in time with its run and the
        // machine's drift affects both; on CUDA one prediction serves every run.
        let predict = |cost: &CostModel| {
            if scale.is_some() {
                predict_sim(&plan, cost)
            } else {
                predict_engine(&plan, cost, processors)
            }
        };
        let fixed = match args.device {
            Device::Cpu => None,
            Device::Cuda => {
                let bench = crate::exec::cuda::bench::Bench::new(0)
                    .map_err(|e| Failure::Other(format!("validate --device cuda: {e}")))?;
                let dtype = graph_dtype(&plan.graph);
                let measured = with_plan_points_cuda(&cal, &plan, &bench, dtype, 5)
                    .map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
                Some(predict(&cuda_cost(&measured, dtype))?)
            }
        };
        // The plan's timeline under the profile: where each op's situation comes from (what
        // runs before it on its worker, what runs beside a collective's copy).
        let situations = match args.device {
            Device::Cpu => predict(&cpu_cost(&cal))?.timings,
            Device::Cuda => Vec::new(),
        };
        let (mut runs, mut predictions) = (Vec::new(), Vec::new());
        // Warm-up runs are paired too (their predictions dropped), so that every measured run
        // comes after the same sequence: microbenchmarks, then the plan.
        for i in 0..args.warmup + args.repetitions {
            let paired = match args.device {
                Device::Cpu => {
                    let measured = with_plan_points(&cal, &plan, &situations, 3);
                    Some(predict(&cpu_cost(&measured))?)
                }
                Device::Cuda => None,
            };
            // On the CPU the microbenchmarks have just filled the caches with their buffers:
            // the plan runs once unmeasured first, so that the measured run follows a run of
            // itself, as a training step follows the step before it.
            let mut run = executor
                .run(&plan)
                .map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
            if args.device == Device::Cpu {
                run = executor
                    .run(&plan)
                    .map_err(|e| Failure::Other(format!("{}: {e}", plan.name)))?;
            }
            if i >= args.warmup {
                runs.push(run);
                predictions.extend(paired);
            }
        }
        // Where the time goes: each class's median over the repetitions, each run beside its
        // own prediction.
        let sums: Vec<[ClassSum; 4]> = runs
            .iter()
            .zip(
                predictions
                    .iter()
                    .chain(std::iter::repeat(fixed.as_ref()).flatten()),
            )
            .map(|(run, p)| breakdown(&plan, p, &run.timings, run.makespan_ns))
            .collect();
        let classes = median_classes(&sums);
        let predicted = if let Some(p) = fixed {
            p
        } else {
            // The prediction of median makespan (the lower middle).
            predictions.sort_by_key(|p| p.makespan_ns);
            predictions.swap_remove((predictions.len() - 1) / 2)
        };
        let spread = {
            let ms: Vec<u64> = runs.iter().map(|e| e.makespan_ns).collect();
            let (lo, hi) = (ms.iter().min(), ms.iter().max());
            let mut sorted = ms.clone();
            let mid = median(&mut sorted).max(1) as f64;
            lo.zip(hi).map_or(0.0, |(lo, hi)| (hi - lo) as f64 / mid)
        };
        let mut peaks: Vec<u64> = runs.iter().map(|e| e.peak_bytes).collect();
        let measured_peak = median(&mut peaks);
        // The run of median makespan (the lower middle), whose per-op timings are kept.
        runs.sort_by_key(|e| e.makespan_ns);
        let mid = runs.swap_remove((runs.len() - 1) / 2);
        rows.push(Row {
            case: plan.name.clone(),
            scale,
            spread,
            classes,
            predicted,
            measured_ns: mid.makespan_ns,
            measured_peak,
            timings: mid.timings,
            plan,
        });
    }
    let mut text = format!(
        "validation on {} (profile: {}), median of {} after {} warm-up, threshold {:.1} %\n",
        executor.device(),
        cal.device,
        args.repetitions,
        args.warmup,
        args.max_error * 100.0
    );
    text.push_str(&format!(
        "{:<40} {:>16} {:>13} {:>12} {:>7} {:>8} {:>10} {:>14} {:>14} {:>8}\n",
        "case",
        "scale flops/bytes",
        "predicted ms",
        "measured ms",
        "spread",
        "error",
        "live KiB",
        "predicted KiB",
        "measured KiB",
        "error"
    ));
    let mut worst: f64 = 0.0;
    let mut over = 0;
    for r in &rows {
        let e_time = rel_error(r.measured_ns as f64, r.predicted.makespan_ns as f64);
        let e_mem = rel_error(r.measured_peak as f64, r.predicted.peak_bytes as f64);
        worst = worst.max(e_time).max(e_mem);
        if e_time > args.max_error || e_mem > args.max_error {
            over += 1;
        }
        let scale = r.scale.map_or_else(
            || "1/1".to_string(),
            |s| format!("{:.0}/{:.0}", s.flops_divisor, s.bytes_divisor),
        );
        text.push_str(&format!(
            "{:<40} {:>16} {:>13.3} {:>12.3} {:>6.1}% {:>7.1}% {:>10.1} {:>14.1} {:>14.1} {:>7.1}%\n",
            r.case,
            scale,
            r.predicted.makespan_ns as f64 / 1e6,
            r.measured_ns as f64 / 1e6,
            r.spread * 100.0,
            e_time * 100.0,
            r.predicted.live_bytes as f64 / 1024.0,
            r.predicted.peak_bytes as f64 / 1024.0,
            r.measured_peak as f64 / 1024.0,
            e_mem * 100.0
        ));
    }
    text.push_str(
        "\nwhere the time goes (Σ of op durations, ms; compute idle: the computing streams' time \
         outside compute ops up to the makespan — waits, dependencies, hand-offs)\n",
    );
    text.push_str(&format!(
        "{:<40} {:<18} {:>6} {:>13} {:>12} {:>9}\n",
        "case", "class", "ops", "predicted ms", "measured ms", "error"
    ));
    for r in &rows {
        for (class, sum) in CLASSES.iter().zip(r.classes) {
            if sum.ops == 0 && class != &CLASSES[3] {
                continue;
            }
            let signed = if sum.measured_ns == 0 {
                0.0
            } else {
                (sum.measured_ns as f64 - sum.predicted_ns as f64) / sum.measured_ns as f64
            };
            text.push_str(&format!(
                "{:<40} {:<18} {:>6} {:>13.3} {:>12.3} {:>+8.1}%\n",
                r.case,
                class,
                sum.ops,
                sum.predicted_ns as f64 / 1e6,
                sum.measured_ns as f64 / 1e6,
                signed * 100.0
            ));
        }
    }
    if let Some(path) = &args.timings {
        let runs: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let g = &r.plan.graph;
                let pos: std::collections::BTreeMap<usize, usize> =
                    g.order.iter().enumerate().map(|(i, n)| (n.index(), i)).collect();
                let preds = exec::predecessors(g);
                let ops: Vec<serde_json::Value> = g
                    .order
                    .iter()
                    .map(|&n| {
                        let t = r.timings[n.index()];
                        let p = r.predicted.timings.get(n.index()).copied().unwrap_or_default();
                        serde_json::json!({
                            "name": g.dag[n].name,
                            "class": op_class(&g.dag[n].kind).map_or("wait", |c| CLASSES[c]),
                            "stream": r.plan.stream_of[n.index()],
                            "start_ns": t.start_ns,
                            "end_ns": t.end_ns,
                            "predicted_start_ns": p.start_ns,
                            "predicted_end_ns": p.end_ns,
                            "after": preds[n.index()].iter().map(|p| pos[&p.index()]).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                serde_json::json!({"case": r.case, "streams": r.plan.streams, "ops": ops})
            })
            .collect();
        let json = serde_json::to_string(&serde_json::json!({ "runs": runs }))
            .map_err(|e| Failure::Other(format!("cannot encode timings: {e}")))?;
        files::write_file(path, &json)?;
    }
    files::write_stdout(&text)?;
    if over > 0 {
        return Err(Failure::Other(format!(
            "validate: {over} of {} case(s) have an error above {:.1} % (worst {:.1} %)",
            rows.len(),
            args.max_error * 100.0,
            worst * 100.0
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::cuda::kernels::plan_scratch;

    /// Memory of an H200 (141 GB), bytes.
    const H200_BYTES: f64 = 141e9;

    #[test]
    fn suite_runs_at_full_size_in_bf16_within_one_h200() {
        let cases = suite_overlap_cases().expect("suite");
        assert_eq!(cases.len(), 3);
        for (name, graph, _) in cases {
            let plan = Plan::simulator_streams(&name, exec::scale(&graph, FULL_SIZE));
            assert_eq!(graph_dtype(&plan.graph), Dtype::Bf16, "{name}");
            let tensors: u64 = plan
                .graph
                .tensors
                .iter()
                .filter(|t| !t.persistent)
                .map(|t| t.bytes)
                .sum();
            let scratch: u64 = plan_scratch(&plan, Dtype::Bf16)
                .iter()
                .map(|s| s.total())
                .sum();
            let need = (tensors + scratch) as f64;
            assert!(
                need < 0.5 * H200_BYTES,
                "{name}: {:.1} GB of tensors and scratch",
                need / 1e9
            );
            // Attention became a GEMM of its FLOPs (what the executor runs).
            assert!(plan.graph.dag.node_indices().all(|n| !matches!(
                &plan.graph.dag[n].kind,
                NodeKind::Compute(w) if w.kind == ComputeKind::Attention
            )));
        }
    }

    #[test]
    fn cuda_cost_follows_the_calibrated_device_and_dtype() {
        let cal = Calibration {
            version: bubblelab_core::hw::CALIBRATION_VERSION,
            device: "cuda NVIDIA H100 80GB HBM3 (132 SMs)".into(),
            gemm: Vec::new(),
            memory: Vec::new(),
            collectives: Vec::new(),
            launch_overhead_ns: Some(2500.0),
            comm_compute_slowdown: None,
            parallel_compute_slowdown: None,
        };
        let cost = cuda_cost(&cal, Dtype::Bf16);
        assert_eq!(cost.gpu.name, CostModel::new(GpuKind::H100).gpu.name);
        assert_eq!(cost.dtype, Dtype::Bf16);
        assert!((cost.gpu.launch_overhead_ns - 2500.0).abs() < 1e-9);
        let h200 = cuda_cost(
            &Calibration {
                device: "cuda NVIDIA H200".into(),
                ..cal
            },
            Dtype::Fp32,
        );
        assert_eq!(h200.gpu.name, CostModel::new(GpuKind::H200).gpu.name);
    }
}
