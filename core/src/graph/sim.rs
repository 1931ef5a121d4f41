//! Runs a graph on one GPU: one compute stream, one communication stream, and a memory ledger.
//!
//! * The compute stream issues compute nodes and waits in the graph's `order`. A compute node
//!   starts when its inputs are ready and the stream is free; a wait blocks the stream until its
//!   collective has finished — that blocked time is *exposed* communication, the bubble.
//! * Each communication group (an NCCL communicator: TP, CP, EP, DP) has its own stream that
//!   runs its collective starts in `order`, each as soon as its input is ready and the group's
//!   previous collective has finished (NCCL kernels on one stream serialize; different
//!   communicators run concurrently, as TP on NVLink and DP on the NIC do).
//! * Contention: while collectives run, compute progresses at 1/(1 + s) of its speed, s being
//!   the largest compute slowdown of the running collectives' links (`CostModel::compute_slowdown`: collective kernels occupy SMs and
//!   HBM bandwidth; Calculon charges ~15 % for NVLink, ~2 % for InfiniBand). Overlap is never free.
//! * Memory: a tensor is allocated when its producer starts (a collective's result when the
//!   collective starts: NCCL writes into it) and freed when its last reader ends; graph outputs
//!   are freed at the end, weights are not counted. The ledger returns to zero.
//!
//! Every event goes through the one [`EventQueue`].

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;

use super::validate::{validate, GraphError};
use super::{Graph, NodeKind};
use crate::cost::{CostModel, Group};
use crate::engine::{EventQueue, MemoryLedger};
use crate::report::{CounterTrack, KindDef, Lane, Report, Span, Timeline};
use crate::units::{nanos_from_f64, Nanos};

/// When one node ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NodeTiming {
    /// Start, ns (for a wait: when it became the head of the compute stream).
    pub start: Nanos,
    /// End, ns.
    pub end: Nanos,
}

/// What a graph simulation measured.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphSim {
    /// From the first issue to the last end, ns.
    pub makespan_ns: u64,
    /// Time the compute stream spent computing, ns (stretched by contention).
    pub compute_busy_ns: u64,
    /// Time collectives ran, ns.
    pub comm_ns: u64,
    /// Time the compute stream sat in waits for unfinished collectives, ns: the communication
    /// bubble.
    pub exposed_comm_ns: u64,
    /// Highest activation bytes alive at once.
    pub peak_bytes: u64,
    /// Bytes alive at the end (0 when every tensor was freed).
    pub final_bytes: i64,
    /// Activation bytes over time.
    pub memory: Vec<(Nanos, i64)>,
    /// Timing of every node, indexed by `NodeIndex::index()`.
    pub timings: Vec<NodeTiming>,
    /// Events the engine processed.
    pub events: u64,
}

impl GraphSim {
    /// Share of communication time hidden under computation: 1 − exposed / communication.
    #[must_use]
    pub fn overlap_ratio(&self) -> f64 {
        if self.comm_ns == 0 {
            return 1.0;
        }
        1.0 - self.exposed_comm_ns as f64 / self.comm_ns as f64
    }
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A compute node finishes (ignored unless `version` is current).
    ComputeEnd { node: NodeIndex, version: u64 },
    /// A collective finishes.
    CollectiveEnd { node: NodeIndex },
}

impl crate::engine::Prioritized for Event {
    /// Ends at one instant keep the order they were scheduled in.
    fn priority(&self) -> u8 {
        0
    }
}

struct Running {
    node: NodeIndex,
    /// Work left, ns at full speed.
    remaining_ns: f64,
    /// Progress per ns of wall time.
    rate: f64,
    since: Nanos,
    version: u64,
}

/// Simulates `graph` with the costs of `cost`.
///
/// # Errors
/// The validator's error for a malformed graph, or a stuck schedule naming the node.
pub fn simulate(graph: &Graph, cost: &CostModel) -> Result<GraphSim, GraphError> {
    validate(graph)?;
    simulate_valid(graph, cost)
}

/// [`simulate`] for a graph the caller has just validated (a pass's own output): the same
/// result without validating twice.
///
/// # Errors
/// A stuck schedule naming the node. Call it only on a graph that passed [`validate`].
#[allow(clippy::too_many_lines)] // the simulator's one event loop, its events handled in rank order in one place
pub(crate) fn simulate_valid(graph: &Graph, cost: &CostModel) -> Result<GraphSim, GraphError> {
    let bound = graph
        .dag
        .node_indices()
        .map(|n| n.index() + 1)
        .max()
        .unwrap_or(0);
    let mut pending: Vec<usize> = vec![0; bound];
    for n in graph.dag.node_indices() {
        pending[n.index()] = graph.dag.neighbors_directed(n, Direction::Incoming).count();
    }
    let is_comm = |n: NodeIndex| matches!(graph.dag[n].kind, NodeKind::CollectiveStart { .. });
    let compute_program: Vec<NodeIndex> = graph
        .order
        .iter()
        .copied()
        .filter(|&n| !is_comm(n))
        .collect();
    // One communication stream per group (NCCL communicator), each in issue order.
    let group_of = |n: NodeIndex| match graph.dag[n].kind {
        NodeKind::CollectiveStart { group, .. } => group,
        _ => 0,
    };
    let mut comm_programs: Vec<Vec<NodeIndex>> = vec![Vec::new(); graph.groups.len()];
    for &n in graph.order.iter().filter(|&&n| is_comm(n)) {
        comm_programs[group_of(n)].push(n);
    }

    let mut timings = vec![NodeTiming::default(); bound];
    let mut queue: EventQueue<Event> = EventQueue::new();
    let mut compute_cursor = 0usize;
    let mut comm_cursors = vec![0usize; graph.groups.len()];
    // The compute slowdown each group's running collective imposes, if one runs.
    let mut comm_running: Vec<Option<f64>> = vec![None; graph.groups.len()];
    let mut running: Option<Running> = None;
    let mut slowdown = 0.0f64;
    let mut version = 0u64;
    let (mut compute_busy, mut comm_total, mut exposed) = (0u64, 0u64, 0u64);
    let mut head_since: Option<Nanos> = None;
    let mut done = 0usize;
    let mut now = Nanos::ZERO;

    loop {
        // Dispatch until nothing more can start at `now`.
        loop {
            let mut progressed = false;
            for (gi, program) in comm_programs.iter().enumerate() {
                if comm_running[gi].is_some() {
                    continue;
                }
                let Some(&n) = program.get(comm_cursors[gi]) else {
                    continue;
                };
                if let (0, NodeKind::CollectiveStart { kind, bytes, .. }) =
                    (pending[n.index()], &graph.dag[n].kind)
                {
                    let spec = &graph.groups[gi];
                    let g = Group {
                        ranks: spec.ranks,
                        ranks_per_node: spec.ranks_per_node,
                    };
                    let dur = nanos_from_f64(cost.collective_ns(*kind, *bytes as f64, g));
                    timings[n.index()] = NodeTiming {
                        start: now,
                        end: now + dur,
                    };
                    comm_total += dur.0;
                    comm_cursors[gi] += 1;
                    comm_running[gi] = Some(cost.compute_slowdown(g));
                    let worst = worst_slowdown(&comm_running);
                    set_slowdown(
                        &mut running,
                        &mut slowdown,
                        worst,
                        now,
                        &mut version,
                        &mut queue,
                    );
                    queue.schedule(now + dur, Event::CollectiveEnd { node: n });
                    progressed = true;
                }
            }
            if running.is_none() {
                if let Some(&n) = compute_program.get(compute_cursor) {
                    if pending[n.index()] == 0 {
                        compute_cursor += 1;
                        progressed = true;
                        if let NodeKind::Compute(work) = &graph.dag[n].kind {
                            let work_ns = cost.compute_ns(work).max(0.0);
                            let rate = 1.0 / (1.0 + slowdown);
                            version += 1;
                            let end = now + nanos_from_f64(work_ns / rate);
                            timings[n.index()].start = now;
                            running = Some(Running {
                                node: n,
                                remaining_ns: work_ns,
                                rate,
                                since: now,
                                version,
                            });
                            queue.schedule(end, Event::ComputeEnd { node: n, version });
                        } else {
                            // A wait whose collective has finished: passes at once.
                            let since = head_since.take().unwrap_or(now);
                            exposed += (now - since).0;
                            timings[n.index()] = NodeTiming {
                                start: since,
                                end: now,
                            };
                            finish(graph, n, &mut pending, &mut done);
                        }
                    } else if head_since.is_none()
                        && matches!(graph.dag[n].kind, NodeKind::Wait { .. })
                    {
                        head_since = Some(now);
                    }
                }
            }
            if !progressed {
                break;
            }
        }
        let Some((t, event)) = queue.pop() else { break };
        now = t;
        match event {
            Event::ComputeEnd { node, version: v } => {
                let Some(r) = running.as_ref() else { continue };
                if r.version != v || r.node != node {
                    continue;
                }
                timings[node.index()].end = now;
                compute_busy += (now - timings[node.index()].start).0;
                running = None;
                finish(graph, node, &mut pending, &mut done);
            }
            Event::CollectiveEnd { node } => {
                comm_running[group_of(node)] = None;
                let worst = worst_slowdown(&comm_running);
                set_slowdown(
                    &mut running,
                    &mut slowdown,
                    worst,
                    now,
                    &mut version,
                    &mut queue,
                );
                finish(graph, node, &mut pending, &mut done);
            }
        }
    }
    if done < graph.dag.node_count() {
        let stuck = compute_program
            .get(compute_cursor)
            .or_else(|| {
                comm_programs
                    .iter()
                    .zip(&comm_cursors)
                    .find_map(|(p, &c)| p.get(c))
            })
            .map_or_else(|| "graph".to_string(), |&n| graph.dag[n].name.clone());
        return Err(GraphError {
            at: stuck,
            message: format!(
                "never ran: {done} of {} nodes finished",
                graph.dag.node_count()
            ),
        });
    }
    let makespan = timings.iter().map(|t| t.end).max().unwrap_or(Nanos::ZERO);

    // Memory ledger over tensor lifetimes.
    let mut last_read: Vec<Option<Nanos>> = vec![None; graph.tensors.len()];
    for n in graph.dag.node_indices() {
        for &t in &graph.dag[n].inputs {
            let end = timings[n.index()].end;
            last_read[t] = Some(last_read[t].map_or(end, |e| e.max(end)));
        }
    }
    let mut ledger = MemoryLedger::with_capacity(1, 2 * graph.tensors.len());
    for (t, tensor) in graph.tensors.iter().enumerate() {
        if tensor.persistent {
            continue;
        }
        let born = match tensor.producer {
            None => Nanos::ZERO,
            Some(p) => match graph.dag[p].kind {
                NodeKind::Wait { start } => timings[start.index()].start,
                _ => timings[p.index()].start,
            },
        };
        ledger.alloc(born, 0, tensor.bytes);
        ledger.free(last_read[t].unwrap_or(makespan).max(born), 0, tensor.bytes);
    }
    let curve = ledger.curves().pop().unwrap_or(crate::engine::MemoryCurve {
        peak_bytes: 0,
        final_bytes: 0,
        points: Vec::new(),
    });
    Ok(GraphSim {
        makespan_ns: makespan.0,
        compute_busy_ns: compute_busy,
        comm_ns: comm_total,
        exposed_comm_ns: exposed,
        peak_bytes: curve.peak_bytes,
        final_bytes: curve.final_bytes,
        memory: curve.points,
        timings,
        events: queue.processed(),
    })
}

/// The largest compute slowdown among the running collectives (0 when none runs).
fn worst_slowdown(running: &[Option<f64>]) -> f64 {
    running.iter().flatten().copied().fold(0.0, f64::max)
}

/// Marks `n` finished and releases its successors.
fn finish(graph: &Graph, n: NodeIndex, pending: &mut [usize], done: &mut usize) {
    *done += 1;
    for succ in graph.dag.neighbors_directed(n, Direction::Outgoing) {
        pending[succ.index()] -= 1;
    }
}

/// Changes the compute slowdown; the running compute node keeps its progress and gets a new end.
fn set_slowdown(
    running: &mut Option<Running>,
    slowdown: &mut f64,
    new: f64,
    now: Nanos,
    version: &mut u64,
    queue: &mut EventQueue<Event>,
) {
    if (*slowdown - new).abs() < f64::EPSILON {
        return;
    }
    *slowdown = new;
    if let Some(r) = running.as_mut() {
        let elapsed = (now - r.since).0 as f64;
        r.remaining_ns = (r.remaining_ns - elapsed * r.rate).max(0.0);
        r.rate = 1.0 / (1.0 + new);
        r.since = now;
        *version += 1;
        r.version = *version;
        queue.schedule(
            now + nanos_from_f64(r.remaining_ns / r.rate),
            Event::ComputeEnd {
                node: r.node,
                version: r.version,
            },
        );
    }
}

/// The timeline of a simulated graph: a compute lane (kernels, and waits that blocked it as
/// `exposed`), a communication lane per group that communicated, and the memory counter.
#[must_use]
pub fn timeline(graph: &Graph, sim: &GraphSim, name: &str) -> Timeline {
    let mut compute = Lane {
        name: "compute stream".into(),
        spans: Vec::new(),
    };
    let mut comm: Vec<Lane> = graph
        .groups
        .iter()
        .map(|g| Lane {
            name: format!("{} comm stream", g.name),
            spans: Vec::new(),
        })
        .collect();
    for &n in &graph.order {
        let t = sim.timings[n.index()];
        let node = &graph.dag[n];
        let span = |cat: &str| Span {
            start_ns: t.start.0,
            dur_ns: (t.end - t.start).0,
            name: node.name.clone(),
            cat: cat.into(),
        };
        match node.kind {
            NodeKind::Compute(_) => compute.spans.push(span("compute")),
            NodeKind::CollectiveStart { group, .. } => comm[group].spans.push(span("comm")),
            NodeKind::Wait { .. } if t.end > t.start => compute.spans.push(span("exposed")),
            NodeKind::Wait { .. } => {}
        }
    }
    compute.spans.sort_by_key(|s| s.start_ns);
    let mut lanes = vec![compute];
    for mut lane in comm.into_iter().filter(|l| !l.spans.is_empty()) {
        lane.spans.sort_by_key(|s| s.start_ns);
        lanes.push(lane);
    }
    let mut timeline = Timeline {
        name: name.into(),
        lanes,
        counters: vec![CounterTrack {
            name: "activation memory".into(),
            unit: "bytes".into(),
            points: sim.memory.iter().map(|&(t, b)| (t.0, b as f64)).collect(),
        }],
        kinds: Vec::new(),
    };
    timeline.declare(&[SPAN_KINDS]);
    timeline
}

/// Span kinds of a simulated execution graph (the overlap lab, `bubblelab graph`). Exposed
/// communication is the time the compute stream waits on a collective: it is drawn in red so
/// it stands out from the communication that runs hidden under compute.
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "compute",
        label: "compute",
        meaning: "a GEMM, attention or memory-bound op on the compute stream",
        colour: "#3b82f6",
        trace_colour: "rail_response",
    },
    KindDef {
        cat: "comm",
        label: "communication",
        meaning:
            "a collective on its group's stream; hidden where the compute stream is busy meanwhile",
        colour: "#7e22ce",
        trace_colour: "detailed_memory_dump",
    },
    KindDef {
        cat: "exposed",
        label: "exposed communication",
        meaning: "the compute stream waits for a collective to finish: communication not hidden",
        colour: "#dc2626",
        trace_colour: "terrible",
    },
];

/// Adds the simulation's headline metrics to `report` under `prefix` (e.g. `serial.`).
pub fn push_metrics(report: &mut Report, prefix: &str, label: &str, graph: &Graph, sim: &GraphSim) {
    let ms = |ns: u64| ns as f64 / 1e6;
    report.push_metric(
        &format!("{prefix}makespan_ms"),
        &format!("{label} step time"),
        ms(sim.makespan_ns),
        "ms",
    );
    report.push_metric(
        &format!("{prefix}compute_ms"),
        &format!("{label} compute busy"),
        ms(sim.compute_busy_ns),
        "ms",
    );
    report.push_metric(
        &format!("{prefix}comm_ms"),
        &format!("{label} communication"),
        ms(sim.comm_ns),
        "ms",
    );
    report.push_metric(
        &format!("{prefix}exposed_comm_ms"),
        &format!("{label} exposed communication"),
        ms(sim.exposed_comm_ns),
        "ms",
    );
    report.push_metric(
        &format!("{prefix}overlap_ratio"),
        &format!("{label} communication hidden"),
        sim.overlap_ratio(),
        "ratio",
    );
    report.push_metric(
        &format!("{prefix}peak_bytes"),
        &format!("{label} peak activations"),
        sim.peak_bytes as f64,
        "bytes",
    );
    report.push_metric(
        &format!("{prefix}nodes"),
        &format!("{label} graph nodes"),
        graph.node_count() as f64,
        "count",
    );
}

/// Builds, simulates and reports one layout of one model: metrics (step time, compute,
/// communication, exposed communication, overlap, peak memory, node count), the timeline and
/// the memory curve.
///
/// # Errors
/// The builder's or the simulator's error as text, naming the field or node.
pub fn model_report(
    model: super::build::ModelKind,
    par: &super::build::Parallelism,
    work: &super::build::Workload,
    cost: &CostModel,
) -> Result<Report, alloc::string::String> {
    let graph = super::build::build(&model.spec(), par, work).map_err(|e| e.to_string())?;
    let sim = simulate(&graph, cost).map_err(|e| e.to_string())?;
    let mut report = Report {
        lab: "graph".into(),
        title: format!(
            "{}: {} layer(s) {} on {}, TP={}{} CP={} EP={} DP={}, {} × {} tokens",
            model.label(),
            work.layers,
            match (work.whole_step, work.backward) {
                (false, true) => "forward + backward",
                (false, false) => "forward",
                (true, true) =>
                    "forward + backward in a whole step (embedding, head and loss, optimizer)",
                (true, false) => "forward in a whole prefill (embedding, head)",
            },
            cost.gpu.name,
            par.tp,
            if par.sp { "+SP" } else { "" },
            par.cp,
            par.ep,
            par.dp,
            work.micro_batch,
            work.seq_len
        ),
        ..Report::default()
    };
    push_metrics(&mut report, "", "", &graph, &sim);
    for m in &mut report.metrics {
        m.label = m.label.trim().to_string();
    }
    report.timelines.push(timeline(&graph, &sim, "one rank"));
    report.findings.push(format!(
        "{:.1}% of the {:.3} ms of communication hides under computation; {:.3} ms of the {:.3} ms step is exposed communication.",
        sim.overlap_ratio() * 100.0,
        sim.comm_ns as f64 / 1e6,
        sim.exposed_comm_ns as f64 / 1e6,
        sim.makespan_ns as f64 / 1e6
    ));
    Ok(report)
}
