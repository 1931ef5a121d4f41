//! The cost-model explorer: one GPU, one collective and one GEMM under the kernel's cost
//! models (`crate::cost`), with the curves of collective time and bus bandwidth over message
//! sizes. Measured points (e.g. Vidur's NCCL profiles) can be laid over the curves by the page
//! and the CLI from a user's file.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::cost::vidur::parse_vidur_csv;
use crate::cost::{gemm_flops, CollectiveKind, ComputeKind, ComputeWork, CostModel, Group};
use crate::hw::GpuKind;
use crate::report::{Cell, Report, Series, Table};
use crate::scenario::ScenarioError;

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
        let bad = |f: &str, m: String| Err(ScenarioError::field(format!("cost.{f}"), m));
        if self.bytes == 0 || self.bytes > 1 << 40 {
            return bad(
                "bytes",
                format!("must be between 1 and 2^40, got {}", self.bytes),
            );
        }
        if !(1..=65536).contains(&self.ranks) {
            return bad(
                "ranks",
                format!("must be between 1 and 65536, got {}", self.ranks),
            );
        }
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
        for (f, v) in [
            ("gemm_m", self.gemm_m),
            ("gemm_n", self.gemm_n),
            ("gemm_k", self.gemm_k),
        ] {
            if v == 0 || v > 1 << 20 {
                return bad(f, format!("must be between 1 and 1048576, got {v}"));
            }
        }
        Ok(())
    }
}

fn gemm_work(m: u64, n: u64, k: u64) -> ComputeWork {
    let (m, n, k) = (m as f64, n as f64, k as f64);
    ComputeWork {
        kind: ComputeKind::Gemm,
        flops: gemm_flops(m, n, k),
        bytes: 2.0 * (m * k + k * n + m * n),
    }
}

/// Costs the scenario.
///
/// # Errors
/// A [`ScenarioError`] if validation fails.
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
    let work = gemm_work(params.gemm_m, params.gemm_n, params.gemm_k);
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
                let w = gemm_work(n, n, n);
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

/// Measured points of `kind` on `ranks` ranks (`ranks_per_node` per node) from a Vidur NCCL
/// profile CSV, as curves for the time and bus-bandwidth charts: the median over the rows (all
/// ranks) of each size's median time.
///
/// # Errors
/// The CSV's parse error (naming the row), or which groups the file holds when none matches.
pub fn measured_series(
    csv: &str,
    kind: CollectiveKind,
    ranks: u32,
    ranks_per_node: u32,
) -> Result<Vec<Series>, String> {
    let rows = parse_vidur_csv(csv).map_err(|e| e.to_string())?;
    let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut groups: BTreeSet<String> = BTreeSet::new();
    for row in &rows {
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
    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        crate::scenario::one_step(progress, || run(self))
    }
}
