//! Turns a schedule's device orders into an engine task graph, runs it, and measures the
//! result: iteration time, bubbles per stage, activation memory per stage.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::params::PipelineParams;
use super::schedules::{Op, OpKind, ScheduleKind};
use crate::engine::{self, Dep, Discipline, MemoryLedger, Resource, Task, TaskGraph};
use crate::report::{CounterTrack, KindDef, Lane, Span, Timeline};
use crate::scenario::ScenarioError;
use crate::units::{nanos_from_f64, Nanos};

/// One executed compute op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutedOp {
    /// Device (stage) it ran on.
    pub device: u32,
    /// What it was.
    pub op: Op,
    /// Start, ns from the iteration start.
    pub start: Nanos,
    /// End, ns from the iteration start.
    pub end: Nanos,
}

/// One P2P transfer between devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Sending device.
    pub from: u32,
    /// Receiving device.
    pub to: u32,
    /// The op whose output (activation or gradient) is sent.
    pub op: Op,
    /// Start, ns.
    pub start: Nanos,
    /// End, ns.
    pub end: Nanos,
}

/// The measured outcome of one schedule.
#[derive(Clone, Debug)]
pub struct ScheduleRun {
    /// Which schedule.
    pub kind: ScheduleKind,
    /// Every compute op with its times, grouped by device in program order.
    pub ops: Vec<ExecutedOp>,
    /// Every P2P transfer (empty when `p2p_ns` is 0).
    pub transfers: Vec<Transfer>,
    /// Iteration time: from the first op's start to the last op's end, ns.
    pub iteration_ns: u64,
    /// Busy (computing) time per device, ns.
    pub busy_ns: Vec<u64>,
    /// Per device, from its first op's start to its last op's end, ns: the iteration period a
    /// device sees when each one starts the next iteration as soon as it is done (the optimizer
    /// step without a global barrier, Qi et al. §4); the zero-bubble planners measure a
    /// schedule by the longest of these (`zb.py` `manual_order`'s `best_time`).
    pub span_ns: Vec<u64>,
    /// Peak activation bytes per device.
    pub peak_activation_bytes: Vec<u64>,
    /// Peak number of micro-batches in flight (forward started, B not finished) per device,
    /// counting each (chunk, micro-batch) as its chunk's share of a stage (1/v interleaved, ½ in
    /// the V shapes, 1 for DualPipe's whole-stage copies).
    pub peak_in_flight: Vec<f64>,
    /// Activation bytes over time per device.
    pub memory_points: Vec<Vec<(Nanos, i64)>>,
    /// Events the engine processed.
    pub events: u64,
}

impl ScheduleRun {
    /// Idle share of device `d`'s iteration.
    #[must_use]
    pub fn bubble_ratio(&self, d: usize) -> f64 {
        if self.iteration_ns == 0 {
            return 0.0;
        }
        (self.iteration_ns - self.busy_ns[d]) as f64 / self.iteration_ns as f64
    }

    /// Idle share of the longest device span ([`ScheduleRun::span_ns`]) over all devices: the
    /// bubble ratio the zero-bubble papers state (DualPipe's README counts up to the barrier).
    #[must_use]
    pub fn span_bubble_ratio(&self) -> f64 {
        let period = self.span_ns.iter().copied().max().unwrap_or(0);
        let p = self.busy_ns.len() as f64;
        if period == 0 || p == 0.0 {
            return 0.0;
        }
        let busy: u64 = self.busy_ns.iter().sum();
        (period as f64 * p - busy as f64) / (period as f64 * p)
    }

    /// Idle share over all devices.
    #[must_use]
    pub fn overall_bubble_ratio(&self) -> f64 {
        let p = self.busy_ns.len() as f64;
        if self.iteration_ns == 0 || p == 0.0 {
            return 0.0;
        }
        let busy: u64 = self.busy_ns.iter().sum();
        (self.iteration_ns as f64 * p - busy as f64) / (self.iteration_ns as f64 * p)
    }
}

/// Key of a compute op in the whole pipeline: (kind, virtual stage, micro-batch).
type OpKey = (OpKind, u32, u32);

/// Simulates `kind` on `params`.
///
/// # Errors
/// [`ScenarioError::Run`] if the schedule deadlocks (a bug in a schedule, never user input).
#[allow(clippy::too_many_lines)] // the simulator's one event loop, its events handled in rank order in one place
pub fn run_schedule(
    params: &PipelineParams,
    kind: ScheduleKind,
) -> Result<ScheduleRun, ScenarioError> {
    let p = params.stages;
    let m = params.micro_batches;
    let share = kind.chunk_share(params.virtual_stages);
    let last_stage = kind.path_len(p, params.virtual_stages) - 1;
    let orders = kind.device_orders(params)?;

    // Durations per device (rounded once to ns); a chunk holds `share` of the device's layers.
    let durations: Vec<[u64; 4]> = (0..p as usize)
        .map(|d| {
            let (f, b, w) = params.stage_op_ns(d);
            [
                nanos_from_f64(f * share).0,
                nanos_from_f64((b + w) * share).0,
                nanos_from_f64(b * share).0,
                nanos_from_f64(w * share).0,
            ]
        })
        .collect();
    let duration = |d: u32, kind: OpKind| -> u64 {
        let row = &durations[d as usize];
        match kind {
            OpKind::Forward => row[0],
            OpKind::Backward => row[1],
            OpKind::BackwardInput => row[2],
            OpKind::BackwardWeight => row[3],
        }
    };

    let mut graph = TaskGraph::default();
    let mut task_of: BTreeMap<OpKey, usize> = BTreeMap::new();
    let mut op_of_task: Vec<(u32, Op)> = Vec::new();
    for (d, order) in orders.iter().enumerate() {
        let mut program = Vec::with_capacity(order.len());
        for op in order {
            let id = graph.tasks.len();
            let vstage = kind.path_stage(p, d as u32, op);
            task_of.insert((op.kind, vstage, op.mb), id);
            graph.tasks.push(Task {
                resource: d,
                duration_ns: duration(d as u32, op.kind),
                deps: Vec::new(),
            });
            op_of_task.push((d as u32, *op));
            program.push(id);
        }
        graph.resources.push(Resource {
            name: format!("stage {d}"),
            discipline: Discipline::InOrder(program),
        });
    }
    let compute_tasks = graph.tasks.len();

    // Links between devices, created on first use: (from, to) → resource.
    let mut links: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut transfer_meta: Vec<(u32, u32, Op)> = Vec::new();
    let lookup = |task_of: &BTreeMap<OpKey, usize>, key: OpKey| -> Result<usize, ScenarioError> {
        task_of
            .get(&key)
            .copied()
            .ok_or_else(|| ScenarioError::Run(format!("schedule {} has no op {key:?}", kind.id())))
    };
    // The op that sends stage `s`'s input gradient: its B, whole or split.
    let gradient = |task_of: &BTreeMap<OpKey, usize>, s: u32, mb: u32| {
        task_of
            .get(&(OpKind::BackwardInput, s, mb))
            .copied()
            .map_or_else(|| lookup(task_of, (OpKind::Backward, s, mb)), Ok)
    };
    for t in 0..compute_tasks {
        let (d, op) = op_of_task[t];
        let vstage = kind.path_stage(p, d, &op);
        let device_at = |s: u32| kind.device_at(p, m, op.mb, s);
        // (producer op, producer device) pairs this op needs.
        let mut needs: Vec<(usize, u32)> = Vec::new();
        match op.kind {
            OpKind::Forward => {
                if vstage > 0 {
                    needs.push((
                        lookup(&task_of, (OpKind::Forward, vstage - 1, op.mb))?,
                        device_at(vstage - 1),
                    ));
                }
            }
            OpKind::Backward | OpKind::BackwardInput => {
                needs.push((lookup(&task_of, (OpKind::Forward, vstage, op.mb))?, d));
                if vstage < last_stage {
                    needs.push((gradient(&task_of, vstage + 1, op.mb)?, device_at(vstage + 1)));
                }
            }
            OpKind::BackwardWeight => {
                needs.push((lookup(&task_of, (OpKind::BackwardInput, vstage, op.mb))?, d));
            }
        }
        for (producer, from) in needs {
            if from == d || params.p2p_ns == 0 {
                graph.tasks[t].deps.push(Dep {
                    task: producer,
                    delay_ns: 0,
                });
                continue;
            }
            let link = *links.entry((from, d)).or_insert_with(|| {
                graph.resources.push(Resource {
                    name: format!("link {from}→{d}"),
                    discipline: Discipline::Fifo,
                });
                graph.resources.len() - 1
            });
            let transfer = graph.tasks.len();
            graph.tasks.push(Task {
                resource: link,
                duration_ns: params.p2p_ns,
                deps: vec![Dep {
                    task: producer,
                    delay_ns: 0,
                }],
            });
            transfer_meta.push((from, d, op_of_task[producer].1));
            graph.tasks[t].deps.push(Dep {
                task: transfer,
                delay_ns: 0,
            });
        }
    }

    // A joint op also waits for everything the next op of its program waits for.
    for t in 0..compute_tasks {
        let same_device = op_of_task.get(t + 1).is_some_and(|n| n.0 == op_of_task[t].0);
        if op_of_task[t].1.joint && same_device {
            let extra = graph.tasks[t + 1].deps.clone();
            graph.tasks[t].deps.extend(extra);
        }
    }

    let sim = engine::simulate(&graph)
        .map_err(|e| ScenarioError::Run(format!("schedule {}: {e}", kind.id())))?;

    let ops: Vec<ExecutedOp> = (0..compute_tasks)
        .map(|t| ExecutedOp {
            device: op_of_task[t].0,
            op: op_of_task[t].1,
            start: sim.timings[t].start,
            end: sim.timings[t].end,
        })
        .collect();
    let transfers: Vec<Transfer> = transfer_meta
        .iter()
        .enumerate()
        .map(|(i, &(from, to, op))| {
            let timing = sim.timings[compute_tasks + i];
            Transfer {
                from,
                to,
                op,
                start: timing.start,
                end: timing.end,
            }
        })
        .collect();

    let mut busy_ns = vec![0u64; p as usize];
    let mut first_ns = vec![u64::MAX; p as usize];
    let mut last_ns = vec![0u64; p as usize];
    for op in &ops {
        let d = op.device as usize;
        busy_ns[d] += (op.end - op.start).0;
        first_ns[d] = first_ns[d].min(op.start.0);
        last_ns[d] = last_ns[d].max(op.end.0);
    }
    let span_ns = first_ns
        .iter()
        .zip(&last_ns)
        .map(|(&a, &b)| b.saturating_sub(a))
        .collect();

    // Activation memory: a chunk's share is allocated when its forward starts and freed when its
    // backward ends; zero-bubble schedules keep `w_memory_fraction` of it until W ends.
    let chunk_bytes = nanos_from_f64(params.activation_bytes as f64 * share).0;
    let w_bytes = nanos_from_f64(chunk_bytes as f64 * params.w_memory_fraction).0;
    let mut memory = MemoryLedger::new(p as usize);
    // In flight counted in chunks, reported in micro-batches of a whole stage.
    let mut in_flight = MemoryLedger::new(p as usize);
    for op in &ops {
        let d = op.device as usize;
        match op.op.kind {
            OpKind::Forward => {
                memory.alloc(op.start, d, chunk_bytes);
                in_flight.alloc(op.start, d, 1);
            }
            OpKind::Backward => {
                memory.free(op.end, d, chunk_bytes);
                in_flight.free(op.end, d, 1);
            }
            OpKind::BackwardInput => {
                memory.free(op.end, d, chunk_bytes - w_bytes);
                in_flight.free(op.end, d, 1);
            }
            OpKind::BackwardWeight => memory.free(op.end, d, w_bytes),
        }
    }
    let curves = memory.curves();
    let flights = in_flight.curves();
    let iteration_ns = sim.makespan.0;
    Ok(ScheduleRun {
        kind,
        ops,
        transfers,
        iteration_ns,
        busy_ns,
        span_ns,
        peak_activation_bytes: curves.iter().map(|c| c.peak_bytes).collect(),
        peak_in_flight: flights
            .iter()
            .map(|c| c.peak_bytes as f64 * share)
            .collect(),
        memory_points: curves.into_iter().map(|c| c.points).collect(),
        events: sim.events,
    })
}

/// Span label of an op: `F3`, `B3`, `W3`, with the chunk for interleaved (`F3.1`).
fn span_name(op: &Op, chunked: bool) -> String {
    if chunked {
        format!("{}{}.{}", op.kind.letter(), op.mb, op.chunk)
    } else {
        format!("{}{}", op.kind.letter(), op.mb)
    }
}

/// The timeline of one run: a lane per stage (ops and the idle gaps between them, category
/// `bubble`), a lane per used link, and an activation-memory counter per stage.
#[must_use]
pub fn timeline(run: &ScheduleRun, label: &str, stages: u32) -> Timeline {
    // Span names carry the chunk wherever a device holds more than one.
    let chunked = !matches!(
        run.kind,
        ScheduleKind::Gpipe | ScheduleKind::OneFOneB | ScheduleKind::ZbH1 | ScheduleKind::ZbH2
    );
    let mut lanes: Vec<Lane> = (0..stages)
        .map(|d| Lane {
            name: format!("stage {d}"),
            spans: Vec::new(),
        })
        .collect();
    for op in &run.ops {
        lanes[op.device as usize].spans.push(Span {
            start_ns: op.start.0,
            dur_ns: (op.end - op.start).0,
            name: span_name(&op.op, chunked),
            cat: op.op.kind.letter().into(),
        });
    }
    for lane in &mut lanes {
        lane.spans.sort_by_key(|s| s.start_ns);
        let mut gaps = Vec::new();
        let mut cursor = 0u64;
        for span in &lane.spans {
            if span.start_ns > cursor {
                gaps.push(Span {
                    start_ns: cursor,
                    dur_ns: span.start_ns - cursor,
                    name: "bubble".into(),
                    cat: "bubble".into(),
                });
            }
            cursor = cursor.max(span.start_ns + span.dur_ns);
        }
        if run.iteration_ns > cursor {
            gaps.push(Span {
                start_ns: cursor,
                dur_ns: run.iteration_ns - cursor,
                name: "bubble".into(),
                cat: "bubble".into(),
            });
        }
        lane.spans.extend(gaps);
        lane.spans.sort_by_key(|s| s.start_ns);
    }
    let mut link_lanes: BTreeMap<(u32, u32), Lane> = BTreeMap::new();
    for t in &run.transfers {
        let lane = link_lanes.entry((t.from, t.to)).or_insert_with(|| Lane {
            name: format!("link {}→{}", t.from, t.to),
            spans: Vec::new(),
        });
        lane.spans.push(Span {
            start_ns: t.start.0,
            dur_ns: (t.end - t.start).0,
            name: format!("send {}", span_name(&t.op, chunked)),
            cat: "p2p".into(),
        });
    }
    for mut lane in link_lanes.into_values() {
        lane.spans.sort_by_key(|s| s.start_ns);
        lanes.push(lane);
    }
    let counters = run
        .memory_points
        .iter()
        .enumerate()
        .map(|(d, points)| CounterTrack {
            name: format!("stage {d} activations"),
            unit: "bytes".into(),
            points: points.iter().map(|&(t, b)| (t.0, b as f64)).collect(),
        })
        .collect();
    let mut timeline = Timeline {
        name: label.into(),
        lanes,
        counters,
        kinds: Vec::new(),
    };
    timeline.declare(&[SPAN_KINDS]);
    timeline
}

/// The pipeline lab's span kinds (also the bubbles lab's main job and the PipeMorph logs).
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "F",
        label: "forward",
        meaning: "forward pass of one micro-batch on one stage",
        colour: "#3b82f6",
        trace_colour: "rail_response",
    },
    KindDef {
        cat: "B",
        label: "backward",
        meaning: "backward pass: the input gradient where W is split off, else the whole backward",
        colour: "#22c55e",
        trace_colour: "good",
    },
    KindDef {
        cat: "W",
        label: "weight gradient",
        meaning: "the weight-gradient half of a split backward (zero-bubble schedules)",
        colour: "#f59e0b",
        trace_colour: "rail_idle",
    },
    KindDef {
        cat: "p2p",
        label: "stage-to-stage transfer",
        meaning: "activations or gradients sent to the neighbouring stage",
        colour: "#7e22ce",
        trace_colour: "detailed_memory_dump",
    },
    KindDef {
        cat: "bubble",
        label: "idle (bubble)",
        meaning: "the stage waits for work from a neighbour",
        colour: "#fecaca",
        trace_colour: "cq_build_failed",
    },
];
