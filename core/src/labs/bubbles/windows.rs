//! The main job's timeline and its bubble windows.
//!
//! A [`MainTimeline`] is the main job's compute ops per stage and its memory per stage over
//! time, from the pipeline lab's simulation ([`MainTimeline::from_schedule`]) or from a real
//! PipeMorph log ([`MainTimeline::from_log`]). [`windows`] cuts every stage's idle time into
//! windows. A window is *safe* when the stage is waiting on a neighbour stage's activation or
//! gradient (only NCCL kernels active, which Hydro detects from the pipeline's progress reports
//! plus the NCCL stream's state); the idle time after a stage's last op of an iteration is
//! *unsafe*, because the optimizer step and the data-parallel gradient all-reduce run there at a
//! time no progress report bounds.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::params::BubblesParams;
use crate::labs::pipeline::pipemorph::{LoggedKind, PipelineRun};
use crate::labs::pipeline::sim::ScheduleRun;
use crate::labs::pipeline::OpKind;
use crate::units::Nanos;

/// One main-job compute op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MainOp {
    /// Stage it ran on.
    pub stage: u32,
    /// Iteration it belongs to (0-based within the timeline).
    pub iteration: u32,
    /// Start, ns from the timeline's origin.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// Span label (`F3`, `B3`, …).
    pub label: String,
    /// Category (`F`, `B`, `W`).
    pub cat: String,
}

/// The main job laid out on one time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct MainTimeline {
    /// Pipeline stages.
    pub stages: u32,
    /// Ops of every stage, sorted by (stage, start).
    pub ops: Vec<MainOp>,
    /// Iteration boundaries: iteration k spans `bounds[k]..bounds[k+1]`, ns.
    pub bounds: Vec<u64>,
    /// Main-job memory per stage over time, (time ns, bytes from then on): static + activations.
    pub memory: Vec<Vec<(u64, u64)>>,
}

impl MainTimeline {
    /// One simulated iteration of the pipeline lab.
    #[must_use]
    pub fn from_schedule(run: &ScheduleRun, params: &BubblesParams) -> MainTimeline {
        let stages = run.busy_ns.len() as u32;
        let chunked = run.ops.iter().any(|o| o.op.chunk > 0);
        let mut ops: Vec<MainOp> = run
            .ops
            .iter()
            .map(|o| MainOp {
                stage: o.device,
                iteration: 0,
                start_ns: o.start.0,
                end_ns: o.end.0,
                label: if chunked {
                    format!("{}{}.{}", o.op.kind.letter(), o.op.mb, o.op.chunk)
                } else {
                    format!("{}{}", o.op.kind.letter(), o.op.mb)
                },
                cat: match o.op.kind {
                    OpKind::Forward => "F".into(),
                    OpKind::Backward | OpKind::BackwardInput => "B".into(),
                    OpKind::BackwardWeight => "W".into(),
                },
            })
            .collect();
        ops.sort_by_key(|o| (o.stage, o.start_ns, o.end_ns));
        let memory = (0..stages as usize)
            .map(|d| {
                let base = params.static_bytes_of(d);
                let mut pts: Vec<(u64, u64)> = alloc::vec![(0, base)];
                if let Some(points) = run.memory_points.get(d) {
                    for &(t, b) in points {
                        let v = base.saturating_add(b.max(0) as u64);
                        if let Some(last) = pts.last_mut() {
                            if last.0 == t.0 {
                                last.1 = v;
                                continue;
                            }
                        }
                        pts.push((t.0, v));
                    }
                }
                pts
            })
            .collect();
        MainTimeline {
            stages,
            ops,
            bounds: alloc::vec![0, run.iteration_ns],
            memory,
        }
    }

    /// The complete iterations of a real PipeMorph run laid end to end (each iteration's origin
    /// is its earliest op start over all ranks, as the pipeline lab draws them). Memory: static
    /// bytes plus `main.activation_bytes` per micro-batch between its F start and B end (the log
    /// has no memory records).
    #[must_use]
    pub fn from_log(run: &PipelineRun, params: &BubblesParams) -> MainTimeline {
        let stages = run.ranks.len() as u32;
        let mut ops = Vec::new();
        let mut bounds = alloc::vec![0u64];
        let mut offset = 0u64;
        for (k, n) in run.complete_iterations().into_iter().enumerate() {
            let its: Vec<_> = run
                .ranks
                .iter()
                .filter_map(|r| r.iterations.iter().find(|it| it.number == n))
                .collect();
            let origin = its
                .iter()
                .flat_map(|it| it.ops.iter().map(|o| o.start_ms))
                .fold(f64::INFINITY, f64::min);
            let end = its
                .iter()
                .flat_map(|it| it.ops.iter().map(|o| o.end_ms))
                .fold(f64::NEG_INFINITY, f64::max);
            if !origin.is_finite() || !end.is_finite() {
                continue;
            }
            for (r, it) in its.iter().enumerate() {
                let mut f = 0u32;
                let mut b = 0u32;
                for op in &it.ops {
                    let start = offset + Nanos::from_ms_f64(op.start_ms - origin).0;
                    let end_ns = start + Nanos::from_ms_f64(op.end_ms - op.start_ms).0;
                    let (label, cat) = match op.kind {
                        LoggedKind::F => {
                            f += 1;
                            (format!("F{} (it {n})", f - 1), "F")
                        }
                        LoggedKind::B => {
                            b += 1;
                            (format!("B{} (it {n})", b - 1), "B")
                        }
                        LoggedKind::W => (format!("W (it {n})"), "W"),
                        LoggedKind::WGroup(g) => (format!("{g}W (it {n})"), "W"),
                    };
                    ops.push(MainOp {
                        stage: r as u32,
                        iteration: k as u32,
                        start_ns: start,
                        end_ns,
                        label,
                        cat: cat.into(),
                    });
                }
            }
            offset += Nanos::from_ms_f64(end - origin).0;
            bounds.push(offset);
        }
        ops.sort_by_key(|o| (o.stage, o.start_ns, o.end_ns));
        let act = params.main.activation_bytes;
        let memory = (0..stages as usize)
            .map(|d| {
                let base = params.static_bytes_of(d);
                // F start allocates, B end frees (the first B frees the first F, 1F1B order).
                let mut changes: Vec<(u64, i64)> = Vec::new();
                for o in ops.iter().filter(|o| o.stage as usize == d) {
                    match o.cat.as_str() {
                        "F" => changes.push((o.start_ns, act as i64)),
                        "B" => changes.push((o.end_ns, -(act as i64))),
                        _ => {}
                    }
                }
                changes.sort_by_key(|&(t, delta)| (t, delta > 0));
                let mut pts = alloc::vec![(0u64, base)];
                let mut level: i64 = 0;
                for (t, delta) in changes {
                    level += delta;
                    let v = base.saturating_add(level.max(0) as u64);
                    match pts.last_mut() {
                        Some(last) if last.0 == t => last.1 = v,
                        _ => pts.push((t, v)),
                    }
                }
                pts
            })
            .collect();
        MainTimeline {
            stages,
            ops,
            bounds,
            memory,
        }
    }

    /// Total span of the timeline, ns.
    #[must_use]
    pub fn span_ns(&self) -> u64 {
        self.bounds.last().copied().unwrap_or(0)
    }

    /// Iterations in the timeline.
    #[must_use]
    pub fn iterations(&self) -> u32 {
        self.bounds.len().saturating_sub(1) as u32
    }

    /// Highest main-job memory of `stage` during `[start, end)`, bytes.
    #[must_use]
    pub fn peak_memory(&self, stage: usize, start: u64, end: u64) -> u64 {
        let Some(points) = self.memory.get(stage) else {
            return 0;
        };
        let mut level = 0;
        let mut peak = 0;
        for &(t, v) in points {
            if t <= start {
                level = v;
                continue;
            }
            if t >= end {
                break;
            }
            peak = peak.max(v);
        }
        peak.max(level)
    }
}

/// Why a window is unsafe.
pub const UNSAFE_ITERATION_END: &str = "iteration end (optimizer step, gradient all-reduce)";

/// One bubble window on one stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Stage.
    pub stage: u32,
    /// Iteration it lies in.
    pub iteration: u32,
    /// Start, ns from the timeline's origin.
    pub start_ns: u64,
    /// Length, ns.
    pub duration_ns: u64,
    /// GPU memory free during the whole window: capacity − reserve − the main job's peak in it,
    /// bytes.
    pub free_bytes: u64,
    /// Whether only communication kernels run in it.
    pub safe: bool,
}

impl Window {
    /// End, ns.
    #[must_use]
    pub fn end_ns(&self) -> u64 {
        self.start_ns + self.duration_ns
    }
}

/// Every idle gap of every stage, per iteration, sorted by (stage, start).
#[must_use]
pub fn windows(main: &MainTimeline, params: &BubblesParams) -> Vec<Window> {
    let usable = params.gpu_memory_bytes.saturating_sub(params.reserve_bytes);
    let mut out = Vec::new();
    for d in 0..main.stages {
        for k in 0..main.iterations() {
            let (lo, hi) = (main.bounds[k as usize], main.bounds[k as usize + 1]);
            let ops: Vec<&MainOp> = main
                .ops
                .iter()
                .filter(|o| o.stage == d && o.iteration == k)
                .collect();
            let mut cursor = lo;
            let mut push = |start: u64, end: u64, safe: bool| {
                if end > start {
                    let peak = main.peak_memory(d as usize, start, end);
                    out.push(Window {
                        stage: d,
                        iteration: k,
                        start_ns: start,
                        duration_ns: end - start,
                        free_bytes: usable.saturating_sub(peak),
                        safe,
                    });
                }
            };
            for op in &ops {
                if op.start_ns > cursor {
                    push(cursor, op.start_ns, true);
                }
                cursor = cursor.max(op.end_ns);
            }
            push(cursor, hi, false);
        }
    }
    out
}
