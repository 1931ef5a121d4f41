//! `bubblelab cost`: the cost models of bubblelab-core from the command line.
//!
//! - `bubblelab cost gemm --gpu h100 --m 8192 --n 8192 --k 8192`: GEMM time, achieved TFLOP/s
//!   and share of peak.
//! - `bubblelab cost collective --kind all-reduce --bytes 64MiB --ranks 8 [--ranks-per-node 8]
//!   [--gpu a100]`: collective time, algorithm and bus bandwidth.
//! - `bubblelab cost sweep --kind all-reduce --ranks 8`: the same by message size, 2 KiB to
//!   1 GiB.
//!
//! The Reports are built by the core's cost lab (`bubblelab_core::labs::cost::{gemm_report,
//! collective_report, sweep_report}`); this file parses the flags and loads the profile. Every
//! flag is parsed here (not by clap's value parsers) so that a bad value ends in one
//! `error: --flag: …` line with exit code 2, like the other commands' input errors.

use std::path::PathBuf;

use bubblelab_core::cost::{CollectiveKind, CostModel, Group};
use bubblelab_core::hw::{Calibration, GpuKind};
use bubblelab_core::labs::cost;
use bubblelab_core::report::Report;
use clap::{Args, Subcommand};

use crate::error::Failure;
use crate::files::{self, MAX_INPUT_BYTES};
use crate::Format;

/// Arguments of `bubblelab cost`.
#[derive(Debug, Args)]
pub struct CostArgs {
    /// What to cost.
    #[command(subcommand)]
    what: CostCommand,
}

/// The `cost` subcommands.
#[derive(Debug, Subcommand)]
enum CostCommand {
    /// Time of one GEMM C[m×n] = A[m×k]·B[k×n], achieved TFLOP/s and share of peak.
    Gemm(GemmArgs),
    /// Time, algorithm bandwidth and bus bandwidth of one collective.
    Collective(CollectiveArgs),
    /// One collective by message size, 2 KiB to 1 GiB in powers of 4.
    Sweep(SweepArgs),
}

/// Flags every `cost` subcommand shares.
#[derive(Debug, Args)]
struct Common {
    /// GPU: a100, h100 or h200 (its DGX node: NVLink inside, InfiniBand between nodes).
    #[arg(long, default_value = "h100", value_name = "GPU")]
    gpu: String,
    /// Calibrated profile (the JSON `bubblelab calibrate --output` writes) whose measured
    /// curves replace the analytical ones.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Deprecated spelling of `--profile`.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with = "profile")]
    calibration: Option<PathBuf>,
    /// Output format of the Report on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Arguments of `bubblelab cost gemm`.
#[derive(Debug, Args)]
struct GemmArgs {
    /// Rows of A and C.
    #[arg(long, value_name = "M")]
    m: String,
    /// Columns of B and C.
    #[arg(long, value_name = "N")]
    n: String,
    /// Inner dimension.
    #[arg(long, value_name = "K")]
    k: String,
    /// Element type: bf16, fp16 or fp32.
    #[arg(long, default_value = "bf16", value_name = "DTYPE")]
    dtype: String,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `bubblelab cost collective`.
#[derive(Debug, Args)]
struct CollectiveArgs {
    /// all-reduce, all-gather, reduce-scatter, all-to-all or send-recv.
    #[arg(long, value_name = "KIND")]
    kind: String,
    /// Message size (NCCL-tests convention): bytes, or with a unit such as 64MiB, 1GiB, 512KB.
    #[arg(long, value_name = "SIZE")]
    bytes: String,
    /// Ranks in the group.
    #[arg(long, value_name = "P")]
    ranks: String,
    /// Ranks per node (default: all ranks on one node, at most 8 per DGX node).
    #[arg(long, value_name = "R")]
    ranks_per_node: Option<String>,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `bubblelab cost sweep`.
#[derive(Debug, Args)]
struct SweepArgs {
    /// all-reduce, all-gather, reduce-scatter, all-to-all or send-recv.
    #[arg(long, value_name = "KIND")]
    kind: String,
    /// Ranks in the group.
    #[arg(long, value_name = "P")]
    ranks: String,
    /// Ranks per node (default: all ranks on one node, at most 8 per DGX node).
    #[arg(long, value_name = "R")]
    ranks_per_node: Option<String>,
    #[command(flatten)]
    common: Common,
}

/// `bubblelab cost`.
///
/// # Errors
/// [`Failure::Input`] naming the flag for a bad value or an unreadable calibration file; write
/// failures.
pub fn cost(args: &CostArgs) -> Result<(), Failure> {
    let (report, format) = match &args.what {
        CostCommand::Gemm(a) => (gemm(a)?, a.common.format),
        CostCommand::Collective(a) => (collective(a)?, a.common.format),
        CostCommand::Sweep(a) => (sweep(a)?, a.common.format),
    };
    crate::run::print_report(
        &report,
        &crate::ReportOutput {
            format,
            trace: None,
        },
    )
}

fn bad(flag: &str, message: impl std::fmt::Display) -> Failure {
    Failure::Input(format!("--{flag}: {message}"))
}

/// Parses a size: a whole number of bytes, optionally with a unit `B`, `KiB`, `MiB`, `GiB`,
/// `TiB` (powers of 1024) or `KB`, `MB`, `GB`, `TB` (powers of 1000); units ignore case and may
/// follow a space. A decimal number is allowed with a unit (`1.5GiB`) and must come to whole
/// bytes.
///
/// # Errors
/// A message saying what was expected.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        "tib" | "t" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => {
            return Err(format!(
                "expected a size such as 4096, 64MiB or 1GiB, got `{text}` (unknown unit `{unit}`)"
            ))
        }
    };
    if number.is_empty() {
        return Err(format!(
            "expected a size such as 4096, 64MiB or 1GiB, got `{text}`"
        ));
    }
    let bytes = if number.contains('.') {
        let value: f64 = number
            .parse()
            .map_err(|_| format!("expected a size such as 4096, 64MiB or 1GiB, got `{text}`"))?;
        let bytes = value * multiplier as f64;
        if bytes.fract() != 0.0 || bytes > 2f64.powi(60) {
            return Err(format!(
                "`{text}` is not a whole number of bytes up to 2^60"
            ));
        }
        bytes as u64
    } else {
        number
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(multiplier))
            .filter(|&b| b <= 1 << 60)
            .ok_or_else(|| format!("`{text}` is larger than 2^60 bytes"))?
    };
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    Ok(bytes)
}

/// Parses a whole number in `min..=max` for `--flag`.
fn parse_count(flag: &str, text: &str, min: u64, max: u64) -> Result<u64, Failure> {
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| bad(flag, format!("expected a whole number, got `{text}`")))?;
    if value < min || value > max {
        return Err(bad(
            flag,
            format!("must be between {min} and {max}, got {value}"),
        ));
    }
    Ok(value)
}

fn parse_gpu(text: &str) -> Result<GpuKind, Failure> {
    text.trim().parse().map_err(|e| bad("gpu", format!("{e}")))
}

fn parse_kind(text: &str) -> Result<CollectiveKind, Failure> {
    text.trim().parse().map_err(|e| bad("kind", format!("{e}")))
}

/// The model of `--gpu`, with `--profile` if given.
fn model(common: &Common) -> Result<CostModel, Failure> {
    let model = CostModel::new(parse_gpu(&common.gpu)?);
    if common.calibration.is_some() {
        crate::deprecated("--calibration", "`--profile`");
    }
    let Some(path) = common.profile.as_ref().or(common.calibration.as_ref()) else {
        return Ok(model);
    };
    let name = files::label(path);
    let text = files::read_text(path, MAX_INPUT_BYTES)?;
    let calibration = Calibration::from_json(&text)
        .map_err(|e| Failure::Input(format!("--profile {name}: {e}")))?;
    Ok(model.with_calibration(calibration))
}

/// The group of `--ranks` and `--ranks-per-node` for `kind`.
fn group(
    kind: CollectiveKind,
    ranks: &str,
    per_node: Option<&str>,
    gpus_per_node: u32,
) -> Result<Group, Failure> {
    let ranks = parse_count("ranks", ranks, 1, 1 << 20)? as u32;
    if kind == CollectiveKind::SendRecv && ranks != 2 {
        return Err(bad(
            "ranks",
            format!("send-recv is between 2 ranks, got {ranks}"),
        ));
    }
    let per_node = match per_node {
        Some(text) => parse_count("ranks-per-node", text, 1, u64::from(ranks))? as u32,
        None => ranks.min(gpus_per_node),
    };
    Ok(Group::new(ranks, per_node))
}

fn gemm(args: &GemmArgs) -> Result<Report, Failure> {
    let mut model = model(&args.common)?;
    model.dtype = args
        .dtype
        .trim()
        .parse()
        .map_err(|e| bad("dtype", format!("{e}")))?;
    let dims = [("m", &args.m), ("n", &args.n), ("k", &args.k)]
        .map(|(flag, text)| parse_count(flag, text, 1, 1 << 24));
    let [m, n, k] = dims;
    Ok(cost::gemm_report(&model, m?, n?, k?))
}

fn collective(args: &CollectiveArgs) -> Result<Report, Failure> {
    let model = model(&args.common)?;
    let kind = parse_kind(&args.kind)?;
    let bytes = parse_size(&args.bytes).map_err(|m| bad("bytes", m))?;
    let g = group(
        kind,
        &args.ranks,
        args.ranks_per_node.as_deref(),
        model.topology.gpus_per_node,
    )?;
    Ok(cost::collective_report(&model, kind, bytes, g))
}

fn sweep(args: &SweepArgs) -> Result<Report, Failure> {
    let model = model(&args.common)?;
    let kind = parse_kind(&args.kind)?;
    let g = group(
        kind,
        &args.ranks,
        args.ranks_per_node.as_deref(),
        model.topology.gpus_per_node,
    )?;
    Ok(cost::sweep_report(&model, kind, g))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1 gib"), Ok(1 << 30));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert_eq!(parse_size("512KB"), Ok(512_000));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("64XB").unwrap_err().contains("unknown unit"));
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0.3B").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("2000000TiB").is_err());
        assert_eq!(parse_size("2048TiB"), Ok(2048 << 40));
        assert!(parse_size("1.2.3MiB").is_err());
    }
}
