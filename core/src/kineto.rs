//! Reader of PyTorch profiler (Kineto) traces and Holistic Trace Analysis 0.5.0's
//! communication–computation overlap metric.
//!
//! # Input
//! A Kineto trace is Chrome Trace Event JSON ("Trace Event Format", Google, 2016) written by
//! `torch.profiler` for one rank, plain or gzip-compressed (`*.json.gz`, detected by its magic
//! bytes, RFC 1952). Two things are kept of its `traceEvents`, as they are read:
//! - GPU activity, for timelines and the exact variant: complete (`"ph": "X"`) events of
//!   category `kernel`, `gpu_memcpy`, `gpu_memset` or `cuda_sync`, each with its CUDA stream
//!   (`args.stream`, else an integer or `"stream N"` `tid`), device (`args.device`, else `pid`),
//!   start `ts` and duration `dur` (both µs, converted exactly to integer ns) and name;
//! - HTA's rows ([`hta::HtaRow`]): every entry with a `dur` and a `cat` (CPU operators and
//!   runtime calls too, for HTA's step filter), with `ts`/`dur` as f64 µs, `args.stream` and
//!   `args.correlation`, plus whether every `ts` was a JSON integer.
//!
//! Flows and metadata are skipped. `distributedInfo` (`rank`, `world_size`, `backend`) is kept
//! when present.
//!
//! # The metric: HTA 0.5.0's `get_comm_comp_overlap`
//! The overlap reported under HTA's name is Holistic Trace Analysis 0.5.0's
//! `get_comm_comp_overlap()` with its default `include_last_profiler_step=False`, restated rule
//! for rule in [`hta`] (its rows, rounding of float timestamps, last-step filter through
//! correlation ids, classification by name, union merge per class, overlap / merged
//! communication). On one rank, with C the merged communication and P the merged computation:
//!
//! ```text
//! overlap % = 100 · |C ∩ P| / |C|
//! ```
//!
//! # Classification
//! One rule for everything here, HTA's `get_kernel_type` ([`hta::HtaKernelType::of`]), by name
//! only: communication `^nccl.*Kernel` (`ncclKernel_*`, NCCL ≥ 2.19's `ncclDevKernel_*`);
//! memory `Memcpy*`, `Memset*`, `dma*`; other: a name containing `Memcpy` or `Sync`; computation:
//! every other kernel. HTA has no RCCL rule: ROCm traces whose RCCL kernels keep NCCL's names
//! (`ncclDevKernel_Generic…`) count them as communication, and a kernel named `rccl…` counts as
//! computation. The metric named after HTA must follow HTA, and the lab follows it there too, so
//! that the exact variant below differs from HTA only in time handling and the step filter.
//!
//! # The exact variant
//! [`RankTrace::exact_overlap`] is the same formula on the GPU-category events (`kernel`,
//! `gpu_memcpy`, `gpu_memset`, `cuda_sync`; stream from `args.stream`, else `tid`), classified by
//! the same names, with times converted exactly to integer ns and every profiler step kept. The
//! gap between the two shows what HTA's µs rounding and last-step drop do to a trace.
//!
//! # Bounds
//! Parsing is total: every input gives a [`RankTrace`] or a [`KinetoError`] naming the byte
//! offset, the event index and what was expected. Gzip data inflates to at most
//! [`MAX_INFLATED_BYTES`]; JSON nesting is limited to 128 levels by `serde_json`. Memory is the
//! input, the inflated text for gzip input, and the kept GPU events (about 60 bytes each plus one
//! copy of each distinct name).

mod gzip;
pub mod hta;
mod parse;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

pub use gzip::{crc32, gunzip, is_gzip};
pub use hta::{HtaKernelType, HtaOptions, HtaOverlap, HtaRows};
pub use parse::decimal_to_ns;

use crate::report::{Cell, KindDef, Lane, Report, Span, Table, Timeline};

/// Largest inflated size of a gzip trace, bytes (2 GiB).
pub const MAX_INFLATED_BYTES: usize = 2 << 30;

/// What a GPU event did, for the overlap metric: HTA 0.5.0's class of its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelClass {
    /// A communication kernel (`^nccl.*Kernel`).
    Communication,
    /// Any other kernel.
    Computation,
    /// A memory copy or set (`Memcpy*`, `Memset*`, `dma*`).
    Memory,
    /// HTA's OTHER: a name with `Memcpy` or `Sync` in it (`Event Sync`, `Context Sync`):
    /// neither compute nor communication.
    Other,
}

impl KernelClass {
    /// Classifies a GPU event by its name, as HTA 0.5.0 does ([`HtaKernelType::of`]; the
    /// category is not used).
    #[must_use]
    pub fn classify(name: &str) -> Self {
        match HtaKernelType::of(name) {
            HtaKernelType::Communication => KernelClass::Communication,
            HtaKernelType::Memory => KernelClass::Memory,
            HtaKernelType::Other => KernelClass::Other,
            HtaKernelType::Computation => KernelClass::Computation,
        }
    }

    /// The span category in timelines: `comm`, `compute` or `other`.
    #[must_use]
    pub fn span_cat(self) -> &'static str {
        match self {
            KernelClass::Communication => "comm",
            KernelClass::Computation => "compute",
            KernelClass::Memory | KernelClass::Other => "other",
        }
    }
}

/// Span kinds of an imported trace: HTA's three kernel classes (memory kernels drawn with
/// "other", as HTA's overlap metric counts neither).
pub const SPAN_KINDS: &[KindDef] = &[
    KindDef {
        cat: "compute",
        label: "computation kernel",
        meaning: "a kernel HTA classes as computation",
        colour: "#3b82f6",
        trace_colour: "rail_response",
    },
    KindDef {
        cat: "comm",
        label: "communication kernel",
        meaning: "an NCCL kernel; HTA's overlap is the share of its time under computation",
        colour: "#7e22ce",
        trace_colour: "detailed_memory_dump",
    },
    KindDef {
        cat: "other",
        label: "memory copy, set or other",
        meaning: "memcpy, memset and kernels HTA classes as neither",
        colour: "#94a3b8",
        trace_colour: "generic_work",
    },
];

/// One GPU event kept from a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuEvent {
    /// Index of its name in [`RankTrace::names`].
    pub name: u32,
    /// Its class for the overlap metric.
    pub class: KernelClass,
    /// CUDA device (`args.device`, else `pid`), if given.
    pub device: Option<i64>,
    /// CUDA stream (`args.stream`, else `tid`).
    pub stream: i64,
    /// Start, ns on the trace's own clock (`ts` × 1000, exact).
    pub start_ns: i64,
    /// Duration, ns (`dur` × 1000, exact, rounded half to even below 1 ns).
    pub dur_ns: u64,
    /// Its 0-based index in `traceEvents`.
    pub event_index: u64,
}

impl GpuEvent {
    /// End, ns on the trace's clock (never overflows: checked when read).
    #[must_use]
    pub fn end_ns(&self) -> i64 {
        self.start_ns
            .saturating_add(i64::try_from(self.dur_ns).unwrap_or(i64::MAX))
    }
}

/// The `distributedInfo` block of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistributedInfo {
    /// Global rank of the process that wrote the trace.
    pub rank: Option<i64>,
    /// Number of ranks in the job.
    pub world_size: Option<i64>,
    /// Process-group backend, e.g. `nccl`.
    pub backend: Option<String>,
}

/// What the lab keeps of one rank's trace: its GPU events and HTA's rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankTrace {
    /// `distributedInfo`, if the trace has one.
    pub distributed: Option<DistributedInfo>,
    /// Distinct event names; [`GpuEvent::name`] and [`hta::HtaRow::name`] index this.
    pub names: Vec<String>,
    /// What HTA 0.5.0 reads of the trace (every entry with `dur` and `cat`).
    pub hta: HtaRows,
    /// Kept GPU events in file order.
    pub events: Vec<GpuEvent>,
    /// Number of entries in `traceEvents` (all kinds).
    pub trace_events: u64,
    /// GPU-category events that were not complete (`X`) events and were skipped.
    pub skipped_gpu_events: u64,
}

/// The exact variant of the overlap on one rank, ns: HTA's formula and classes without its
/// rounding and step filter (module documentation, "The exact variant").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExactOverlap {
    /// |C|: time covered by at least one communication kernel, ns.
    pub comm_ns: u64,
    /// |P|: time covered by at least one computation kernel, ns.
    pub compute_ns: u64,
    /// |C ∩ P|: time covered by both, ns.
    pub overlap_ns: u64,
}

impl ExactOverlap {
    /// 100 · |C ∩ P| / |C|, in percent; `None` without communication.
    #[must_use]
    pub fn percent(&self) -> Option<f64> {
        (self.comm_ns > 0).then(|| 100.0 * self.overlap_ns as f64 / self.comm_ns as f64)
    }

    /// Communication time not hidden under computation, |C| − |C ∩ P|, ns.
    #[must_use]
    pub fn exposed_comm_ns(&self) -> u64 {
        self.comm_ns.saturating_sub(self.overlap_ns)
    }
}

/// Sorts and merges half-open intervals `[start, end)` (ns) into disjoint ones; touching
/// intervals merge, empty ones vanish.
#[must_use]
pub fn merge_intervals(mut intervals: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    intervals.retain(|&(s, e)| e > s);
    intervals.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(intervals.len());
    for (s, e) in intervals {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of disjoint intervals, ns.
#[must_use]
pub fn covered_ns(merged: &[(i64, i64)]) -> u64 {
    // Disjoint intervals inside the i64 range cover at most 2^64 − 1 ns: no overflow.
    merged
        .iter()
        .fold(0u64, |acc, &(s, e)| acc.saturating_add(e.abs_diff(s)))
}

/// Length of the intersection of two sorted disjoint interval lists, ns.
#[must_use]
pub fn intersection_ns(a: &[(i64, i64)], b: &[(i64, i64)]) -> u64 {
    let (mut i, mut j, mut total) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            total = total.saturating_add(e.abs_diff(s));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// The exact comm–comp overlap of a set of GPU events (one rank): merged communication and
/// computation intervals in integer ns, every event kept.
#[must_use]
pub fn exact_comm_comp_overlap(events: &[GpuEvent]) -> ExactOverlap {
    let of = |class: KernelClass| {
        merge_intervals(
            events
                .iter()
                .filter(|e| e.class == class)
                .map(|e| (e.start_ns, e.end_ns()))
                .collect(),
        )
    };
    let comm = of(KernelClass::Communication);
    let comp = of(KernelClass::Computation);
    ExactOverlap {
        comm_ns: covered_ns(&comm),
        compute_ns: covered_ns(&comp),
        overlap_ns: intersection_ns(&comm, &comp),
    }
}

/// Which layer rejected the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The gzip container (header, DEFLATE data, trailer).
    Gzip,
    /// JSON syntax or the trace's shape (`traceEvents` missing or not an array of objects).
    Json,
    /// One GPU event lacks a field it needs (`name`, `ts`, `dur`, stream) or has a bad value.
    Event,
    /// A size limit (inflated size, allocation).
    Limit,
}

/// Why a trace could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KinetoError {
    /// The layer that failed.
    pub kind: ErrorKind,
    /// Byte offset of the problem: in the compressed file for [`ErrorKind::Gzip`], in the
    /// JSON text (after inflation when `gzipped`) otherwise. For a bad GPU event field it is
    /// the field's value (or the event's `cat` when the field is missing); for a JSON syntax
    /// error the offending byte; for a value of the wrong type where reading stopped (the start
    /// of a container, just past a scalar); for truncated input the end.
    pub offset: Option<u64>,
    /// 0-based index in `traceEvents` of the event being read.
    pub event: Option<u64>,
    /// True when the input was gzip-compressed.
    pub gzipped: bool,
    /// What was expected or found.
    pub message: String,
}

impl fmt::Display for KinetoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.offset) {
            (ErrorKind::Gzip, Some(o)) => write!(f, "gzip data, byte {o}: ")?,
            (_, Some(o)) if self.gzipped => write!(f, "inflated JSON, byte {o}")?,
            (_, Some(o)) => write!(f, "byte {o}")?,
            (_, None) => {}
        }
        if self.kind != ErrorKind::Gzip {
            match (self.offset, self.event) {
                (Some(_), Some(i)) => write!(f, " (traceEvents[{i}]): ")?,
                (None, Some(i)) => write!(f, "traceEvents[{i}]: ")?,
                (Some(_), None) => f.write_str(": ")?,
                (None, None) => {}
            }
        }
        f.write_str(&self.message)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for KinetoError {}

/// Reads one rank's Kineto trace, plain JSON or gzip (detected by its magic bytes), inflating
/// at most [`MAX_INFLATED_BYTES`].
///
/// # Errors
/// A [`KinetoError`] naming the byte offset and, inside `traceEvents`, the event index.
pub fn parse_trace(bytes: &[u8]) -> Result<RankTrace, KinetoError> {
    parse_trace_with_limit(bytes, MAX_INFLATED_BYTES)
}

/// [`parse_trace`] with an explicit cap on the inflated size of gzip input, bytes.
///
/// # Errors
/// As [`parse_trace`]; [`ErrorKind::Limit`] past `max_inflated` bytes.
pub fn parse_trace_with_limit(bytes: &[u8], max_inflated: usize) -> Result<RankTrace, KinetoError> {
    if is_gzip(bytes) {
        let json = gunzip(bytes, max_inflated)?;
        parse::parse_json(&json, true)
    } else {
        parse::parse_json(bytes, false)
    }
}

impl RankTrace {
    /// The rank from `distributedInfo`, if any.
    #[must_use]
    pub fn rank(&self) -> Option<i64> {
        self.distributed.as_ref().and_then(|d| d.rank)
    }

    /// The name of an event.
    #[must_use]
    pub fn name_of(&self, event: &GpuEvent) -> &str {
        self.names
            .get(event.name as usize)
            .map_or("", String::as_str)
    }

    /// HTA 0.5.0's `get_comm_comp_overlap` of this rank, as HTA computes it for a folder
    /// holding this trace alone ([`hta`]).
    #[must_use]
    pub fn hta_overlap(&self, opts: HtaOptions) -> HtaOverlap {
        hta::hta_overlap(&self.hta, &self.names, opts)
    }

    /// The exact variant (module documentation): integer ns, all steps.
    #[must_use]
    pub fn exact_overlap(&self) -> ExactOverlap {
        exact_comm_comp_overlap(&self.events)
    }

    /// Number of kept events of a class.
    #[must_use]
    pub fn count(&self, class: KernelClass) -> usize {
        self.events.iter().filter(|e| e.class == class).count()
    }

    /// First start and last end over all kept events, ns on the trace's clock.
    #[must_use]
    pub fn extent_ns(&self) -> Option<(i64, i64)> {
        let start = self.events.iter().map(|e| e.start_ns).min()?;
        let end = self.events.iter().map(GpuEvent::end_ns).max()?;
        Some((start, end))
    }

    /// The rank's GPU timeline: one lane per stream (per device and stream when the trace
    /// has several devices), spans in ns from the rank's first GPU event, category `comm`,
    /// `compute` or `other`. Events of one stream that overlap in the file (CUPTI timestamps
    /// can) go to extra lanes `stream S #2`, `#3`, … so that no lane has overlapping spans.
    /// Returns the timeline and the number of events moved to extra lanes.
    #[must_use]
    pub fn timeline(&self, name: &str) -> (Timeline, usize) {
        let origin = self.extent_ns().map_or(0, |(s, _)| s);
        let devices: alloc::collections::BTreeSet<Option<i64>> =
            self.events.iter().map(|e| e.device).collect();
        let multi_device = devices.len() > 1;
        let mut streams: BTreeMap<(Option<i64>, i64), Vec<&GpuEvent>> = BTreeMap::new();
        for e in &self.events {
            streams.entry((e.device, e.stream)).or_default().push(e);
        }
        let mut lanes = Vec::new();
        let mut moved = 0usize;
        for ((device, stream), mut evs) in streams {
            evs.sort_by_key(|e| (e.start_ns, e.end_ns(), e.event_index));
            // First-fit interval partitioning in start order: optimal for intervals.
            let mut sub: Vec<(i64, Vec<Span>)> = Vec::new();
            for e in evs {
                let span = Span {
                    start_ns: e.start_ns.abs_diff(origin),
                    dur_ns: e.dur_ns,
                    name: self.name_of(e).to_string(),
                    cat: e.class.span_cat().to_string(),
                };
                if let Some(k) = sub.iter_mut().position(|(end, _)| *end <= e.start_ns) {
                    sub[k].0 = e.end_ns();
                    sub[k].1.push(span);
                    moved += usize::from(k > 0);
                } else {
                    moved += usize::from(!sub.is_empty());
                    sub.push((e.end_ns(), alloc::vec![span]));
                }
            }
            let base = match (multi_device, device) {
                (true, Some(d)) => format!("GPU {d} stream {stream}"),
                (true, None) => format!("GPU ? stream {stream}"),
                (false, _) => format!("stream {stream}"),
            };
            for (k, (_, spans)) in sub.into_iter().enumerate() {
                let name = if k == 0 {
                    base.clone()
                } else {
                    format!("{base} #{}", k + 1)
                };
                lanes.push(Lane { name, spans });
            }
        }
        let mut timeline = Timeline {
            name: name.to_string(),
            lanes,
            ..Timeline::default()
        };
        timeline.declare(&[SPAN_KINDS]);
        (timeline, moved)
    }
}

/// [`report_with`] under HTA's default options (`include_last_profiler_step=False`).
#[must_use]
pub fn report(traces: &[(String, RankTrace)]) -> Report {
    report_with(traces, HtaOptions::default())
}

/// Builds the Report of one or more ranks' traces, each given with the name of its source
/// (a file name): a table with one row per rank (sorted by rank, then input order; times in
/// ms), the metrics `<id>.overlap_pct` (HTA 0.5.0's overlap, %) and `<id>.exact_overlap_pct`
/// (the exact variant, %) per rank with communication, where `<id>` is `rank<r>`, or
/// `trace<i>` (input position) when the rank is missing or repeated; over all ranks
/// `all.overlap_pct` (Σ HTA overlap / Σ HTA communication, %), `all.comm_ms`,
/// `all.exposed_comm_ms` (ms, HTA's) and `ranks`; one timeline per rank; findings.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn report_with(traces: &[(String, RankTrace)], opts: HtaOptions) -> Report {
    let mut order: Vec<usize> = (0..traces.len()).collect();
    order.sort_by_key(|&i| (traces[i].1.rank().unwrap_or(i64::MAX), i));
    let mut rank_counts: BTreeMap<i64, usize> = BTreeMap::new();
    for (_, t) in traces {
        if let Some(r) = t.rank() {
            *rank_counts.entry(r).or_default() += 1;
        }
    }
    let ident = |i: usize| -> (String, String) {
        match traces[i].1.rank() {
            Some(r) if rank_counts.get(&r) == Some(&1) => (format!("rank{r}"), format!("rank {r}")),
            Some(r) => (format!("trace{i}"), format!("rank {r} (input {i})")),
            None => (format!("trace{i}"), format!("input {i}")),
        }
    };
    let ms = |us: f64| us / 1e3;
    let mut report = Report {
        lab: "kineto".into(),
        title: format!(
            "Kineto traces: communication–computation overlap (HTA 0.5.0) on {} rank{}",
            traces.len(),
            if traces.len() == 1 { "" } else { "s" }
        ),
        ..Report::default()
    };
    let mut table = Table {
        key: "overlap".into(),
        title: "Per rank: HTA 0.5.0 get_comm_comp_overlap (merged communication C, merged \
                computation P, overlap = |C ∩ P| / |C|) and the exact variant"
            .into(),
        columns: [
            "rank",
            "source",
            "GPU events",
            "comm kernels",
            "compute kernels",
            "other",
            "HTA comm (ms)",
            "HTA compute (ms)",
            "HTA overlap (ms)",
            "HTA exposed comm (ms)",
            "HTA 0.5.0 overlap (%)",
            "exact overlap (%)",
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
        rows: Vec::new(),
    };
    let (mut total_comm, mut total_overlap) = (0.0f64, 0.0f64);
    let mut findings = Vec::new();
    let mut lowest: Option<(f64, String, f64)> = None;
    for &i in &order {
        let (source, trace) = &traces[i];
        let (id, label) = ident(i);
        let h = trace.hta_overlap(opts);
        let x = trace.exact_overlap();
        total_comm += h.comm_us;
        total_overlap += h.overlap_us;
        let other = trace.count(KernelClass::Memory) + trace.count(KernelClass::Other);
        table.rows.push(alloc::vec![
            Cell::Text(label.clone()),
            Cell::Text(source.clone()),
            Cell::Num(trace.events.len() as f64),
            Cell::Num(trace.count(KernelClass::Communication) as f64),
            Cell::Num(trace.count(KernelClass::Computation) as f64),
            Cell::Num(other as f64),
            Cell::Num(ms(h.comm_us)),
            Cell::Num(ms(h.compute_us)),
            Cell::Num(ms(h.overlap_us)),
            Cell::Num(ms(h.exposed_comm_us())),
            h.percent().map_or(Cell::Missing, Cell::Num),
            x.percent().map_or(Cell::Missing, Cell::Num),
        ]);
        if let Some(p) = h.percent() {
            report.push_metric(
                &format!("{id}.overlap_pct"),
                &format!("{label} comm–comp overlap (HTA 0.5.0)"),
                p,
                "%",
            );
            if lowest.as_ref().is_none_or(|(q, _, _)| p < *q) {
                lowest = Some((p, label.clone(), h.exposed_comm_us()));
            }
        } else {
            findings.push(format!(
                "{label} ({source}): no communication time after HTA's rules, so its overlap is \
                 undefined (HTA: NaN)."
            ));
        }
        if let Some(p) = x.percent() {
            report.push_metric(
                &format!("{id}.exact_overlap_pct"),
                &format!("{label} comm–comp overlap, exact ns and all steps"),
                p,
                "%",
            );
        }
        if h.rounded {
            findings.push(format!(
                "{label}: the timestamps are not all integers, so HTA rounded every event to \
                 whole µs (start up, end down)."
            ));
        }
        if h.step_filtered {
            findings.push(format!(
                "{label}: {} ProfilerStep names, so HTA kept only kernels launched {} the last \
                 step (include_last_profiler_step={}).",
                trace.hta.profiler_step_symbols,
                if opts.include_last_profiler_step {
                    "up to the end of"
                } else {
                    "before"
                },
                if opts.include_last_profiler_step {
                    "True"
                } else {
                    "False"
                }
            ));
        }
        let (timeline, moved) = trace.timeline(&label);
        if moved > 0 {
            findings.push(format!(
                "{label}: {moved} GPU event(s) overlap an earlier event of the same stream in the \
                 file; they are drawn on extra lanes (`stream S #2`, …) and counted as they are."
            ));
        }
        if trace.events.is_empty() {
            findings.push(format!("{label} ({source}): no GPU events in the trace."));
        }
        report.timelines.push(timeline);
    }
    let worlds: alloc::collections::BTreeSet<i64> = traces
        .iter()
        .filter_map(|(_, t)| t.distributed.as_ref().and_then(|d| d.world_size))
        .collect();
    match worlds.iter().collect::<Vec<_>>().as_slice() {
        [w] if usize::try_from(**w).is_ok_and(|w| w > traces.len()) => {
            findings.push(format!(
                "The job had {w} ranks; {} of their traces were given.",
                traces.len()
            ));
        }
        [_, _, ..] => {
            let sizes: Vec<String> = worlds.iter().map(ToString::to_string).collect();
            findings.push(format!(
                "The traces come from jobs of different sizes (world sizes {}).",
                sizes.join(", ")
            ));
        }
        _ => {}
    }
    if total_comm != 0.0 {
        report.push_metric(
            "all.overlap_pct",
            "All ranks: Σ HTA overlap / Σ HTA communication",
            100.0 * (total_overlap / total_comm),
            "%",
        );
    }
    report.push_metric(
        "all.comm_ms",
        "All ranks: communication time (HTA)",
        ms(total_comm),
        "ms",
    );
    report.push_metric(
        "all.exposed_comm_ms",
        "All ranks: exposed communication (HTA)",
        ms(total_comm - total_overlap),
        "ms",
    );
    report.push_metric("ranks", "Traces read", traces.len() as f64, "count");
    let mut notes = alloc::vec![String::from(
        "Overlap is Holistic Trace Analysis 0.5.0's get_comm_comp_overlap: the share of merged \
         communication-kernel time (names ^nccl.*Kernel) during which some computation kernel \
         also runs on the rank, after HTA's µs rounding of float timestamps and its drop of \
         the last profiler step; memory copies/sets and names with Memcpy or Sync count as \
         neither. The exact variant keeps every step and every nanosecond."
    )];
    if let Some((p, label, exposed)) = lowest {
        if traces.len() > 1 {
            notes.push(format!(
                "{label} hides the least communication: {} % overlapped, {} ms exposed.",
                crate::report::format_number(p),
                crate::report::format_number(ms(exposed))
            ));
        }
    }
    notes.extend(findings);
    report.findings = notes;
    report.tables.push(table);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_is_htas_by_name() {
        use KernelClass::*;
        assert_eq!(
            KernelClass::classify("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"),
            Communication
        );
        assert_eq!(
            KernelClass::classify("Memcpy DtoD (Device -> Device)"),
            Memory
        );
        assert_eq!(KernelClass::classify("Stream Wait Event"), Computation);
        assert_eq!(KernelClass::classify("Event Sync"), Other);
        assert_eq!(
            KernelClass::classify("void rccl::reduce_kernel"),
            Computation
        );
    }

    #[test]
    fn merging_and_intersection() {
        let a = merge_intervals(alloc::vec![(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]);
        assert_eq!(a, alloc::vec![(0, 4), (5, 12)]);
        assert_eq!(covered_ns(&a), 11);
        let b = merge_intervals(alloc::vec![(2, 6), (11, 30)]);
        assert_eq!(intersection_ns(&a, &b), 2 + 1 + 1);
    }
}
