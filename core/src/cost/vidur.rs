//! Vidur's measured NCCL collective profiles: a reader for their CSV files, an alpha-beta least
//! squares fit, and a per-size-bucket comparison with a [`CostModel`].
//!
//! The files come from Microsoft's Vidur simulator (`data/profiling/network/<platform>/
//! all_reduce.csv` and `send_recv.csv`, MIT licence). Columns:
//!
//! | column | meaning |
//! |---|---|
//! | (unnamed) | row index |
//! | `time_stats.<collective>.min/max/mean/median/std` | kernel time over repeated runs, **ms** |
//! | `rank` | rank that recorded the row |
//! | `num_workers` | GPUs in the collective |
//! | `size` | message size per rank, **bytes** (see below) |
//! | `collective` | `all_reduce` or `send_recv` |
//! | `devices_per_node` | GPUs per node used (num_workers > devices_per_node ⇒ crosses nodes) |
//! | `max_devices_per_node` | GPUs per node of the platform |
//!
//! `size` is in bytes, not elements: Vidur's profiler writes `"size": self._size * 2,  # bytes`
//! for its float16 tensors (`vidur/profiling/collectives/collectives_wrapper.py`), its largest
//! tensor is `max_collective_size = 4096 * 8192` elements = 33,554,432 (`main.py`) while the
//! largest `size` in the CSV is 67,108,864, and reading `size` as elements would make A100
//! send/receive move 456–508 GB/s, more than NVLink 3's 300 GB/s line rate.
//!
//! The times are the median duration of the NCCL kernel over 11 back-to-back launches, recorded
//! with the PyTorch profiler on rank 0 (`vidur/profiling/common/cuda_timer.py`); a kernel's
//! duration includes the time it waits for its peers' kernels to start.
//!
//! Parsing is total: every malformed input gives a [`VidurError`] naming the 1-based row (line)
//! and the column, never a panic.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{CollectiveKind, CostModel, Group};

/// Most data rows read from one file (the A100 files hold about 7,000).
pub const MAX_VIDUR_ROWS: usize = 1_000_000;

/// The collectives Vidur profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum VidurCollective {
    /// `all_reduce`.
    AllReduce,
    /// `send_recv` (rank 0 sends to rank 1).
    SendRecv,
}

impl VidurCollective {
    /// The name used in the CSV (`all_reduce`, `send_recv`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            VidurCollective::AllReduce => "all_reduce",
            VidurCollective::SendRecv => "send_recv",
        }
    }

    /// The matching [`CollectiveKind`].
    #[must_use]
    pub fn kind(self) -> CollectiveKind {
        match self {
            VidurCollective::AllReduce => CollectiveKind::AllReduce,
            VidurCollective::SendRecv => CollectiveKind::SendRecv,
        }
    }
}

/// One measured row.
#[derive(Clone, Debug, PartialEq)]
pub struct VidurRow {
    /// 1-based line of the row in its file (the header is line 1).
    pub line: usize,
    /// Which collective.
    pub collective: VidurCollective,
    /// Rank that recorded the row.
    pub rank: u32,
    /// GPUs in the collective.
    pub num_workers: u32,
    /// GPUs per node used by the measurement.
    pub devices_per_node: u32,
    /// GPUs per node of the platform.
    pub max_devices_per_node: u32,
    /// Message size per rank, bytes.
    pub size_bytes: u64,
    /// Fastest run, ms.
    pub min_ms: f64,
    /// Slowest run, ms.
    pub max_ms: f64,
    /// Mean over runs, ms.
    pub mean_ms: f64,
    /// Median over runs, ms.
    pub median_ms: f64,
    /// Standard deviation over runs, ms.
    pub std_ms: f64,
}

impl VidurRow {
    /// The group of this row: `num_workers` ranks, `devices_per_node` per node.
    #[must_use]
    pub fn group(&self) -> Group {
        Group::new(self.num_workers, self.devices_per_node)
    }

    /// The median time, ns.
    #[must_use]
    pub fn median_ns(&self) -> f64 {
        self.median_ms * 1e6
    }

    /// Whether the measurement crossed nodes (num_workers > devices_per_node).
    #[must_use]
    pub fn spans_nodes(&self) -> bool {
        self.num_workers > self.devices_per_node
    }

    /// The group key of this row.
    #[must_use]
    pub fn key(&self) -> GroupKey {
        GroupKey {
            collective: self.collective,
            num_workers: self.num_workers,
            devices_per_node: self.devices_per_node,
        }
    }
}

/// Why a Vidur CSV was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VidurError {
    /// 1-based line of the problem (1 is the header).
    pub row: usize,
    /// The column's name (`size`, `time_stats.all_reduce.median`, …), or `(row)` for a problem
    /// with the row as a whole.
    pub column: String,
    /// What was expected and what was found.
    pub message: String,
}

impl core::fmt::Display for VidurError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "row {}, column `{}`: {}",
            self.row, self.column, self.message
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for VidurError {}

fn error(row: usize, column: &str, message: impl Into<String>) -> VidurError {
    VidurError {
        row,
        column: column.into(),
        message: message.into(),
    }
}

/// Parses one Vidur profile CSV (`all_reduce.csv` or `send_recv.csv`).
///
/// The header must name `rank`, `num_workers`, `size`, `collective`, `devices_per_node`,
/// `max_devices_per_node` and `time_stats.<collective>.{min,max,mean,median,std}` for the
/// collective of the rows; other columns are ignored. Quoted fields are refused (Vidur writes
/// none). Blank lines are skipped.
///
/// # Errors
/// A [`VidurError`] naming the row and column of the first problem: a missing column, a row
/// with the wrong number of fields, a number that does not parse or is out of range, an unknown
/// collective, rows of two collectives in one file, or more than [`MAX_VIDUR_ROWS`] rows.
#[allow(clippy::too_many_lines)] // one pass over the input, one arm per column, so each error names its row
pub fn parse_vidur_csv(text: &str) -> Result<Vec<VidurRow>, VidurError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)));
    let (header_line, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| error(1, "(header)", "the file is empty"))?;
    if header.contains('"') {
        return Err(error(
            header_line,
            "(header)",
            "quoted fields are not supported",
        ));
    }
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |name: &str| -> Result<usize, VidurError> {
        names
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| error(header_line, name, "the header has no such column"))
    };
    let col_rank = find("rank")?;
    let col_workers = find("num_workers")?;
    let col_size = find("size")?;
    let col_collective = find("collective")?;
    let col_dpn = find("devices_per_node")?;
    let col_max_dpn = find("max_devices_per_node")?;
    // The time columns are named after the collective; read it from the header.
    let collective = if names
        .iter()
        .any(|n| n.starts_with("time_stats.all_reduce."))
    {
        VidurCollective::AllReduce
    } else if names.iter().any(|n| n.starts_with("time_stats.send_recv.")) {
        VidurCollective::SendRecv
    } else {
        return Err(error(
            header_line,
            "time_stats.<collective>.median",
            "the header names no time_stats.all_reduce.* or time_stats.send_recv.* columns",
        ));
    };
    let stat = |s: &str| format!("time_stats.{}.{s}", collective.name());
    let stat_names = [
        stat("min"),
        stat("max"),
        stat("mean"),
        stat("median"),
        stat("std"),
    ];
    let mut stat_cols = [0usize; 5];
    for (slot, name) in stat_cols.iter_mut().zip(stat_names.iter()) {
        *slot = find(name)?;
    }

    let mut rows = Vec::new();
    for (line, text) in lines {
        if text.trim().is_empty() {
            continue;
        }
        if rows.len() >= MAX_VIDUR_ROWS {
            return Err(error(
                line,
                "(row)",
                format!("more than {MAX_VIDUR_ROWS} rows"),
            ));
        }
        if text.contains('"') {
            return Err(error(line, "(row)", "quoted fields are not supported"));
        }
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if fields.len() != names.len() {
            return Err(error(
                line,
                "(row)",
                format!(
                    "has {} fields, the header has {}",
                    fields.len(),
                    names.len()
                ),
            ));
        }
        let int = |col: usize, min: u64, max: u64| -> Result<u64, VidurError> {
            let raw = fields[col];
            let value: u64 = raw.parse().map_err(|_| {
                error(
                    line,
                    names[col],
                    format!("expected a whole number, got `{raw}`"),
                )
            })?;
            if value < min || value > max {
                return Err(error(
                    line,
                    names[col],
                    format!("must be between {min} and {max}, got {value}"),
                ));
            }
            Ok(value)
        };
        let ms = |col: usize| -> Result<f64, VidurError> {
            let raw = fields[col];
            let value: f64 = raw.parse().map_err(|_| {
                error(
                    line,
                    names[col],
                    format!("expected a number of milliseconds, got `{raw}`"),
                )
            })?;
            if !value.is_finite() || value < 0.0 {
                return Err(error(
                    line,
                    names[col],
                    format!("must be a finite non-negative time, got `{raw}`"),
                ));
            }
            Ok(value)
        };
        let name = fields[col_collective];
        if name != collective.name() {
            return Err(error(
                line,
                "collective",
                format!(
                    "expected `{}` (the collective of the header's time columns), got `{name}`",
                    collective.name()
                ),
            ));
        }
        let num_workers = int(col_workers, 1, 1 << 20)? as u32;
        let devices_per_node = int(col_dpn, 1, 1 << 20)? as u32;
        let max_devices_per_node = int(col_max_dpn, 1, 1 << 20)? as u32;
        let rank = int(col_rank, 0, u64::from(u32::MAX))? as u32;
        if rank >= num_workers {
            return Err(error(
                line,
                "rank",
                format!("must be below num_workers ({num_workers}), got {rank}"),
            ));
        }
        if devices_per_node > num_workers.max(max_devices_per_node) {
            return Err(error(
                line,
                "devices_per_node",
                format!("must not exceed num_workers ({num_workers}) or max_devices_per_node ({max_devices_per_node}), got {devices_per_node}"),
            ));
        }
        let size_bytes = int(col_size, 1, 1 << 50)?;
        let stats: Result<Vec<f64>, VidurError> = stat_cols.iter().map(|&c| ms(c)).collect();
        let stats = stats?;
        rows.push(VidurRow {
            line,
            collective,
            rank,
            num_workers,
            devices_per_node,
            max_devices_per_node,
            size_bytes,
            min_ms: stats[0],
            max_ms: stats[1],
            mean_ms: stats[2],
            median_ms: stats[3],
            std_ms: stats[4],
        });
    }
    Ok(rows)
}

/// A group of measurements: one collective on one (num_workers, devices_per_node) shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupKey {
    /// Which collective.
    pub collective: VidurCollective,
    /// GPUs in the collective.
    pub num_workers: u32,
    /// GPUs per node used.
    pub devices_per_node: u32,
}

impl GroupKey {
    /// The cost model's group.
    #[must_use]
    pub fn group(self) -> Group {
        Group::new(self.num_workers, self.devices_per_node)
    }

    /// Whether the group crosses nodes.
    #[must_use]
    pub fn spans_nodes(self) -> bool {
        self.num_workers > self.devices_per_node
    }

    /// `all_reduce p=8 (8/node)`.
    #[must_use]
    pub fn label(self) -> String {
        format!(
            "{} p={} ({}/node)",
            self.collective.name(),
            self.num_workers,
            self.devices_per_node
        )
    }
}

/// A least-squares alpha-beta fit t = α + n/β.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlphaBetaFit {
    /// Intercept α, ns.
    pub alpha_ns: f64,
    /// Slope as a bandwidth β = 1/slope, bytes/s (message bytes, i.e. algorithm bandwidth).
    pub beta_bytes_per_s: f64,
    /// Coefficient of determination of the fit.
    pub r2: f64,
    /// Points fitted.
    pub points: usize,
}

/// Ordinary least squares of time (ns) on bytes: t = α + n/β (Hockney's model, "The
/// communication challenge for MPP", Parallel Computing 1994). `None` with fewer than two
/// distinct sizes or a non-positive slope.
#[must_use]
pub fn fit_alpha_beta(points: &[(f64, f64)]) -> Option<AlphaBetaFit> {
    let n = points.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.0 - mean_x)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - mean_y) * (p.1 - mean_y)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    if slope <= 0.0 || !slope.is_finite() {
        return None;
    }
    let alpha_ns = mean_y - slope * mean_x;
    let r2 = if syy > 0.0 {
        (sxy * sxy) / (sxx * syy)
    } else {
        1.0
    };
    Some(AlphaBetaFit {
        alpha_ns,
        beta_bytes_per_s: 1e9 / slope,
        r2,
        points: n,
    })
}

/// Fits of every group of `rows` with messages of at least `min_bytes`, in group order.
#[must_use]
pub fn fit_groups(rows: &[VidurRow], min_bytes: u64) -> Vec<(GroupKey, AlphaBetaFit)> {
    let mut groups: BTreeMap<GroupKey, Vec<(f64, f64)>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.size_bytes >= min_bytes) {
        groups
            .entry(row.key())
            .or_default()
            .push((row.size_bytes as f64, row.median_ns()));
    }
    groups
        .into_iter()
        .filter_map(|(key, points)| fit_alpha_beta(&points).map(|fit| (key, fit)))
        .collect()
}

/// One size bucket of one group: measured against modelled.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketComparison {
    /// The group.
    pub key: GroupKey,
    /// The bucket holds sizes in [2^log2_lo, 2^(log2_lo+1)) bytes.
    pub log2_lo: u32,
    /// Rows in the bucket.
    pub rows: usize,
    /// Median of the rows' message sizes, bytes.
    pub median_bytes: f64,
    /// Median of the rows' measured median times, ns.
    pub measured_ns: f64,
    /// Median of the model's times at the rows' sizes, ns.
    pub model_ns: f64,
}

impl BucketComparison {
    /// Relative error of the model, (model − measured) / measured.
    #[must_use]
    pub fn relative_error(&self) -> f64 {
        (self.model_ns - self.measured_ns) / self.measured_ns
    }

    /// Lower edge of the bucket, bytes.
    #[must_use]
    pub fn lo_bytes(&self) -> u64 {
        1u64 << self.log2_lo
    }
}

/// The median of `values` (sorted in place); the mean of the middle two for an even count.
fn median(values: &mut [f64]) -> f64 {
    crate::units::median(values).unwrap_or(f64::NAN)
}

/// Per bucket: measured times, model times and sizes of its rows.
type BucketSamples = (Vec<f64>, Vec<f64>, Vec<f64>);

/// Compares `model` with `rows` per group and power-of-two size bucket: the bucket's measured
/// time is the median of its rows' median times and its model time the median of the model at
/// the rows' sizes. Buckets in (group, size) order.
#[must_use]
pub fn compare_buckets(model: &CostModel, rows: &[VidurRow]) -> Vec<BucketComparison> {
    let mut buckets: BTreeMap<(GroupKey, u32), BucketSamples> = BTreeMap::new();
    for row in rows {
        let log2_lo = row.size_bytes.max(1).ilog2();
        let entry = buckets.entry((row.key(), log2_lo)).or_default();
        let bytes = row.size_bytes as f64;
        entry.0.push(row.median_ns());
        entry
            .1
            .push(model.collective_ns(row.collective.kind(), bytes, row.group()));
        entry.2.push(bytes);
    }
    buckets
        .into_iter()
        .map(
            |((key, log2_lo), (mut measured, mut modelled, mut sizes))| BucketComparison {
                key,
                log2_lo,
                rows: measured.len(),
                median_bytes: median(&mut sizes),
                measured_ns: median(&mut measured),
                model_ns: median(&mut modelled),
            },
        )
        .collect()
}

/// Formats a byte count as `1 MiB`, `512 KiB`, `2 KiB` (powers of two) or plain bytes.
#[must_use]
pub fn bytes_label(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        bytes.to_string()
    }
}
