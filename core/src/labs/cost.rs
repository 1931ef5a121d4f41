//! The cost-model explorer: one GPU, one collective and one GEMM under the kernel's cost
//! models (`crate::cost`), with the curves of collective time and bus bandwidth over message
//! sizes. Measured points from a Vidur NCCL profile (the `measured` input slot: `bubblelab run
//! cost --input measured=all_reduce.csv`, or the page's upload) are laid over the curves.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::cost::vidur::{parse_vidur_csv, VidurRow};
use crate::cost::{gemm_flops, CollectiveKind, ComputeKind, ComputeWork, CostModel, Dtype, Group};
use crate::hw::GpuKind;
use crate::report::{Cell, Report, Series, Table};
use crate::scenario::{check_slots, files_in, input_error, InputFile, InputSlot, ScenarioError};
use crate::units::format_bytes;

pub mod fields;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

/// Largest message: 2^40 bytes (1 TiB).
pub const MAX_BYTES: u64 = 1 << 40;
/// Most ranks in one group.
pub const MAX_RANKS: u32 = 65536;
/// Largest GEMM dimension: 2^20.
pub const MAX_GEMM_DIM: u64 = 1 << 20;

/// What to cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostParams {
    /// GPU (its DGX-style node: NVLink inside, InfiniBand between nodes).
    pub gpu: GpuKind,
    /// Collective to cost.
    pub collective: CollectiveKind,
    /// Message size, bytes (NCCL-tests convention).
    pub bytes: u64,
    /// Ranks in the group.
    pub ranks: u32,
    /// Ranks of the group on one node (the rest over the inter-node link).
    pub ranks_per_node: u32,
    /// GEMM rows M.
    pub gemm_m: u64,
    /// GEMM columns N.
    pub gemm_n: u64,
    /// GEMM inner dimension K.
    pub gemm_k: u64,
}

impl Default for CostParams {
    fn default() -> Self {
        CostParams {
            gpu: GpuKind::H100,
            collective: CollectiveKind::AllReduce,
            bytes: 64 << 20,
            ranks: 8,
            ranks_per_node: 8,
            gemm_m: 8192,
            gemm_n: 8192,
            gemm_k: 8192,
        }
    }
}

/// Message sizes of the curves: 2 KiB to 1 GiB in powers of two.
const CURVE_BYTES: core::ops::RangeInclusive<u32> = 11..=30;

impl CostParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::Field`] naming the field.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        crate::fields::check("cost", fields::FIELDS, &crate::scenario::to_value(self))?;
        let bad = |f: &str, m: String| Err(ScenarioError::field(format!("cost.{f}"), m));
        if self.ranks_per_node == 0 || self.ranks_per_node > self.ranks {
            return bad(
                "ranks_per_node",
                format!(
                    "must be between 1 and ranks ({}), got {}",
                    self.ranks, self.ranks_per_node
                ),
            );
        }
        if self.collective == CollectiveKind::SendRecv && self.ranks != 2 {
            return bad(
                "ranks",
                format!("send-recv is between 2 ranks, got {}", self.ranks),
            );
        }
        Ok(())
    }
}

/// The work of a GEMM C[m×n] = A[m×k]·B[k×n] of `dtype`: 2·m·n·k FLOPs, A, B and C moved
/// once.
fn gemm_work(m: u64, n: u64, k: u64, dtype: Dtype) -> ComputeWork {
    let (m, n, k) = (m as f64, n as f64, k as f64);
    ComputeWork {
        kind: ComputeKind::Gemm,
        flops: gemm_flops(m, n, k),
        bytes: f64::from(dtype.bytes()) * (m * k + k * n + m * n),
    }
}

/// Costs the scenario.
///
/// # Errors
/// A [`ScenarioError`] if validation fails.
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn run(params: &CostParams) -> Result<Report, ScenarioError> {
    params.validate()?;
    let model = CostModel::new(params.gpu);
    let group = Group {
        ranks: params.ranks,
        ranks_per_node: params.ranks_per_node,
    };
    let kind_id = params.collective.id();
    let mut report = Report {
        lab: "cost".into(),
        title: format!(
            "{} on {} ranks ({} per node) of {}",
            kind_id,
            params.ranks,
            params.ranks_per_node,
            params.gpu.label()
        ),
        ..Report::default()
    };
    let t_ns = model.collective_ns(params.collective, params.bytes as f64, group);
    report.push_metric("collective_us", "collective time", t_ns / 1e3, "µs");
    report.push_metric(
        "algbw_gb_per_s",
        "algorithm bandwidth (bytes / time)",
        params.bytes as f64 / t_ns,
        "GB/s",
    );
    report.push_metric(
        "busbw_gb_per_s",
        "bus bandwidth (NCCL-tests convention)",
        model.bus_bandwidth_bytes_per_s(params.collective, params.bytes as f64, group) / 1e9,
        "GB/s",
    );
    let work = gemm_work(params.gemm_m, params.gemm_n, params.gemm_k, model.dtype);
    let g_ns = model.compute_ns(&work);
    report.push_metric("gemm_us", "GEMM time", g_ns / 1e3, "µs");
    report.push_metric(
        "gemm_tflops",
        "GEMM achieved",
        work.flops / g_ns / 1e3,
        "TFLOP/s",
    );
    report.push_metric(
        "gemm_efficiency",
        "GEMM share of peak",
        work.flops / g_ns * 1e9 / model.gpu.peak_bf16_flops_per_s,
        "ratio",
    );
    report.push_metric(
        "compute_slowdown",
        "compute slowdown while this collective runs",
        model.compute_slowdown(group),
        "ratio",
    );

    // Curves over message sizes, for every collective on this group.
    let mut table = Table {
        key: "collectives".into(),
        title: format!("Every collective on this group, {} bytes", params.bytes),
        columns: ["collective", "time (µs)", "bus bandwidth (GB/s)"]
            .into_iter()
            .map(String::from)
            .collect(),
        rows: Vec::new(),
    };
    for kind in [
        CollectiveKind::AllReduce,
        CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::AllToAll,
        CollectiveKind::SendRecv,
    ] {
        let g = if kind == CollectiveKind::SendRecv {
            Group {
                ranks: 2,
                ranks_per_node: group.ranks_per_node.min(2),
            }
        } else {
            group
        };
        table.rows.push(
            [
                Cell::Text(kind.id().into()),
                Cell::Num(model.collective_ns(kind, params.bytes as f64, g) / 1e3),
                Cell::Num(model.bus_bandwidth_bytes_per_s(kind, params.bytes as f64, g) / 1e9),
            ]
            .into_iter()
            .collect(),
        );
    }
    report.tables.push(table);
    let sizes: Vec<f64> = CURVE_BYTES.map(f64::from).collect();
    report.series.push(Series {
        name: format!("{kind_id}, model"),
        chart: "collective_time".into(),
        x_label: "log2(message bytes)".into(),
        y_label: "time (µs)".into(),
        points: sizes
            .iter()
            .map(|&e| {
                (
                    e,
                    model.collective_ns(params.collective, libm::exp2(e), group) / 1e3,
                )
            })
            .collect(),
    });
    report.series.push(Series {
        name: format!("{kind_id}, model"),
        chart: "bus_bandwidth".into(),
        x_label: "log2(message bytes)".into(),
        y_label: "bus bandwidth (GB/s)".into(),
        points: sizes
            .iter()
            .map(|&e| {
                (
                    e,
                    model.bus_bandwidth_bytes_per_s(params.collective, libm::exp2(e), group) / 1e9,
                )
            })
            .collect(),
    });
    report.series.push(Series {
        name: format!("square GEMM on {}", params.gpu.label()),
        chart: "gemm_efficiency".into(),
        x_label: "log2(M = N = K)".into(),
        y_label: "share of peak".into(),
        points: (6..=14)
            .map(|e| {
                let n = 1u64 << e;
                let w = gemm_work(n, n, n, model.dtype);
                (
                    f64::from(e),
                    w.flops / model.compute_ns(&w) * 1e9 / model.gpu.peak_bf16_flops_per_s,
                )
            })
            .collect(),
    });
    report.findings.push(format!(
        "A {} of {} bytes on {} ranks takes {:.1} µs: {:.1} GB/s of bus bandwidth.",
        kind_id,
        params.bytes,
        params.ranks,
        t_ns / 1e3,
        model.bus_bandwidth_bytes_per_s(params.collective, params.bytes as f64, group) / 1e9
    ));
    Ok(report)
}

/// Measured points of `kind` on `ranks` ranks (`ranks_per_node` per node) from the rows of a
/// Vidur NCCL profile, as curves for the time and bus-bandwidth charts: the median over the
/// rows (all ranks) of each size's median time.
///
/// # Errors
/// Which groups the rows hold, when none is this one.
pub fn measured_series(
    rows: &[VidurRow],
    kind: CollectiveKind,
    ranks: u32,
    ranks_per_node: u32,
) -> Result<Vec<Series>, String> {
    let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut groups: BTreeSet<String> = BTreeSet::new();
    for row in rows {
        groups.insert(format!(
            "{} on {} ranks ({} per node)",
            row.collective.kind().id(),
            row.num_workers,
            row.devices_per_node
        ));
        if row.collective.kind() == kind
            && row.num_workers == ranks
            && row.devices_per_node == ranks_per_node
        {
            by_size
                .entry(row.size_bytes)
                .or_default()
                .push(row.median_ns());
        }
    }
    if by_size.is_empty() {
        return Err(format!(
            "no rows for {} on {ranks} ranks ({ranks_per_node} per node); the file has {}",
            kind.id(),
            groups.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let group = Group {
        ranks,
        ranks_per_node,
    };
    let points: Vec<(f64, f64, f64)> = by_size
        .into_iter()
        .map(|(bytes, mut times)| {
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            let log2 = libm::log2(bytes as f64);
            (
                log2,
                median,
                bytes as f64 * kind.bus_factor(group.ranks) / median,
            )
        })
        .collect();
    Ok(alloc::vec![
        Series {
            name: format!("{}, measured (Vidur)", kind.id()),
            chart: "collective_time".into(),
            x_label: "log2(message bytes)".into(),
            y_label: "time (µs)".into(),
            points: points.iter().map(|p| (p.0, p.1 / 1e3)).collect(),
        },
        Series {
            name: format!("{}, measured (Vidur)", kind.id()),
            chart: "bus_bandwidth".into(),
            x_label: "log2(message bytes)".into(),
            y_label: "bus bandwidth (GB/s)".into(),
            points: points.iter().map(|p| (p.0, p.2)).collect(),
        },
    ])
}

impl crate::scenario::LabParams for CostParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        crate::scenario::one_step(progress, || run(self))
    }

    const INPUTS: &'static [InputSlot] = &[InputSlot {
        name: "measured",
        help: "a Vidur NCCL profile (all_reduce.csv, send_recv.csv): its points for the chosen collective and group go over the curves",
        many: false,
        carried: false,
    }];

    /// The curves, with the measured points of the profile laid over them; a profile without
    /// rows for this collective and group adds a finding that names the groups it has.
    fn run_with_inputs(
        &self,
        inputs: &[InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        check_slots::<Self>(inputs)?;
        let mut report = self.run_lab(progress)?;
        for file in files_in(inputs, "measured") {
            let rows = parse_vidur_csv(file.text).map_err(|e| input_error(file, e))?;
            match measured_series(&rows, self.collective, self.ranks, self.ranks_per_node) {
                Ok(series) => report.series.extend(series),
                Err(why) => report
                    .findings
                    .push(format!("{}: not laid over the curves: {why}", file.source)),
            }
        }
        Ok(report)
    }
}

/// How a group reads in titles: "8 ranks on one node", "16 ranks on 2 nodes (8 per node)".
fn group_text(g: Group) -> String {
    if g.spans_nodes() {
        format!(
            "{} ranks on {} nodes ({} per node)",
            g.ranks,
            g.nodes(),
            g.per_node()
        )
    } else {
        format!("{} ranks on one node", g.ranks)
    }
}

/// One GEMM C[m×n] = A[m×k]·B[k×n] of the model's dtype under `model` (its calibrated curve
/// when it has one): time, achieved TFLOP/s, share of the dtype's peak, FLOPs and bytes, and
/// whether memory or compute bounds it (`bubblelab cost gemm`). Metric keys `gemm.*`.
#[must_use]
pub fn gemm_report(model: &CostModel, m: u64, n: u64, k: u64) -> Report {
    let work = gemm_work(m, n, k, model.dtype);
    let time_ns = model.compute_ns(&work);
    let peak = model.gpu.peak_flops_per_s(model.dtype);
    let achieved = work.flops / (time_ns * 1e-9);
    let dtype = model.dtype.id();
    let mut report = Report {
        lab: "cost".into(),
        title: format!("GEMM {m}×{n}×{k} {dtype} on {}", model.gpu.name),
        ..Report::default()
    };
    report.push_metric("gemm.time_us", "GEMM time", time_ns / 1e3, "µs");
    report.push_metric(
        "gemm.achieved_tflops",
        "achieved",
        achieved / 1e12,
        "TFLOP/s",
    );
    report.push_metric("gemm.efficiency", "share of peak", achieved / peak, "ratio");
    report.push_metric(
        "gemm.peak_tflops",
        format!("{dtype} peak").as_str(),
        peak / 1e12,
        "TFLOP/s",
    );
    report.push_metric("gemm.flops", "FLOPs (2·m·n·k)", work.flops, "FLOP");
    report.push_metric(
        "gemm.bytes",
        "bytes read and written (A, B, C once)",
        work.bytes,
        "bytes",
    );
    let memory_ns = model.compute_ns(&ComputeWork {
        kind: ComputeKind::MemoryBound,
        flops: 0.0,
        bytes: work.bytes,
    });
    let bound = if memory_ns >= time_ns {
        "memory-bound"
    } else {
        "compute-bound"
    };
    report.findings.push(format!(
        "{bound}: {:.1} TFLOP/s, {:.0} % of the {dtype} peak of {} (includes {:.0} µs launch).",
        achieved / 1e12,
        100.0 * achieved / peak,
        model.gpu.name,
        model.gpu.launch_overhead_ns / 1e3
    ));
    if model.calibration.is_some() {
        report
            .findings
            .push("Times from the calibrated profile's measured curves.".into());
    }
    report
}

/// One collective of `bytes` on `group` under `model`: time, algorithm and bus bandwidth,
/// nodes spanned, the compute slowdown while it runs, and for AllReduce the tree algorithm's
/// time (`bubblelab cost collective`). Metric keys `collective.*`.
#[must_use]
pub fn collective_report(
    model: &CostModel,
    kind: CollectiveKind,
    bytes: u64,
    group: Group,
) -> Report {
    let g = group;
    let n = bytes as f64;
    let time_ns = model.collective_ns(kind, n, g);
    let mut report = Report {
        lab: "cost".into(),
        title: format!(
            "{} of {} on {} of {}",
            kind.id(),
            format_bytes(n),
            group_text(g),
            model.gpu.name
        ),
        ..Report::default()
    };
    report.push_metric("collective.time_us", "collective time", time_ns / 1e3, "µs");
    report.push_metric(
        "collective.algbw_gb_per_s",
        "algorithm bandwidth (bytes / time)",
        model.algorithm_bandwidth_bytes_per_s(kind, n, g) / 1e9,
        "GB/s",
    );
    report.push_metric(
        "collective.busbw_gb_per_s",
        "bus bandwidth (NCCL-tests convention)",
        model.bus_bandwidth_bytes_per_s(kind, n, g) / 1e9,
        "GB/s",
    );
    report.push_metric("collective.bytes", "message size", n, "bytes");
    report.push_metric(
        "collective.nodes",
        "nodes spanned",
        f64::from(g.nodes()),
        "count",
    );
    report.push_metric(
        "collective.compute_slowdown",
        "compute slowdown while it runs",
        model.compute_slowdown(g),
        "ratio",
    );
    if kind == CollectiveKind::AllReduce {
        report.push_metric(
            "collective.tree_time_us",
            "same AllReduce with the tree algorithm",
            model.tree_all_reduce_ns(n, g) / 1e3,
            "µs",
        );
    }
    let link = if g.spans_nodes() {
        &model.topology.inter
    } else {
        &model.topology.intra
    };
    report.findings.push(if g.spans_nodes() {
        format!(
            "Hierarchical across {} nodes: {} inside each node, {} between nodes.",
            g.nodes(),
            model.topology.intra.name,
            link.name
        )
    } else {
        format!("Ring over {} on one node.", link.name)
    });
    if model
        .calibration
        .as_ref()
        .is_some_and(|c| c.collective_curve(kind, g.ranks, g.per_node()).is_some())
    {
        report
            .findings
            .push("Time from the calibrated profile's measured curve.".into());
    }
    report
}

/// Message sizes of a sweep: 2 KiB × 4^i up to 512 MiB, then 1 GiB.
fn sweep_sizes() -> Vec<u64> {
    let mut sizes: Vec<u64> = (0..10).map(|i| 2048u64 << (2 * i)).collect();
    sizes.push(1 << 30);
    sizes
}

/// `kind` on `group` by message size, 2 KiB to 1 GiB: a table of time, algorithm and bus
/// bandwidth, the bus-bandwidth curve, the smallest message's time and the highest bus
/// bandwidth (`bubblelab cost sweep`). Metric keys `sweep.*`.
#[must_use]
pub fn sweep_report(model: &CostModel, kind: CollectiveKind, group: Group) -> Report {
    let g = group;
    let mut report = Report {
        lab: "cost".into(),
        title: format!(
            "{} by message size on {} of {}",
            kind.id(),
            group_text(g),
            model.gpu.name
        ),
        ..Report::default()
    };
    let mut table = Table {
        key: "sweep".into(),
        title: format!("{} on {}", kind.id(), group_text(g)),
        columns: ["size", "bytes", "time (µs)", "algbw (GB/s)", "busbw (GB/s)"]
            .into_iter()
            .map(String::from)
            .collect(),
        rows: Vec::new(),
    };
    let mut curve = Vec::new();
    for bytes in sweep_sizes() {
        let n = bytes as f64;
        let busbw = model.bus_bandwidth_bytes_per_s(kind, n, g) / 1e9;
        table.rows.push(alloc::vec![
            Cell::Text(format_bytes(n)),
            Cell::Num(n),
            Cell::Num(model.collective_ns(kind, n, g) / 1e3),
            Cell::Num(model.algorithm_bandwidth_bytes_per_s(kind, n, g) / 1e9),
            Cell::Num(busbw),
        ]);
        curve.push((libm::log2(n), busbw));
    }
    let smallest = sweep_sizes()[0] as f64;
    report.push_metric(
        "sweep.latency_us",
        "time of the smallest message (2 KiB)",
        model.collective_ns(kind, smallest, g) / 1e3,
        "µs",
    );
    let top = curve.iter().map(|p| p.1).fold(0.0, f64::max);
    report.push_metric(
        "sweep.max_busbw_gb_per_s",
        "highest bus bandwidth in the sweep",
        top,
        "GB/s",
    );
    report.tables.push(table);
    report.series.push(Series {
        name: format!("{} on {} ranks", kind.id(), g.ranks),
        chart: "bus_bandwidth".into(),
        x_label: "log2(message bytes)".into(),
        y_label: "bus bandwidth (GB/s)".into(),
        points: curve,
    });
    report
}
