//! Real data: Vidur's measured NCCL all_reduce and send_recv latencies on an A100 DGX
//! (`../shared/data/vidur_collective_profiles/a100_dgx`) against the default A100 cost model.
//!
//! 1. Fits the alpha-beta model t = α + n/β to each (collective, num_workers, devices_per_node)
//!    group by least squares and prints α and β.
//! 2. Compares the DEFAULT A100 profile's `collective_ns` with the measured median per
//!    power-of-two size bucket and prints the table.
//! 3. Asserts the model within 25 % of the measurement for every bucket ≥ 1 MiB of the
//!    single-node groups, except the buckets listed in `KNOWN_MISSES`, which are held to 50 %
//!    and printed (docs/MODEL.md explains why no alpha-beta model meets 25 % there).
//!
//! Multi-node rows are printed, not asserted: the README does not say what inter-node fabric
//! the profiling cluster had, and its measured bus bandwidth across nodes (6–22 GB/s per GPU) is
//! far below one HDR NIC per GPU; the model applies its inter-node link (DGX A100: HDR
//! InfiniBand) to them.
//!
//! Reproduce the table: `cargo test -p bubblelab-core --test vidur_fit -- --nocapture`.
//! Data folder: env `BUBBLELAB_DATA`, default `../shared/data` beside the repository.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::PathBuf;

use bubblelab_core::cost::vidur::{
    bytes_label, compare_buckets, fit_groups, parse_vidur_csv, GroupKey, VidurCollective, VidurRow,
};
use bubblelab_core::cost::CostModel;
use bubblelab_core::hw::GpuKind;

/// Buckets (collective, num_workers, devices_per_node, lower edge in MiB) where the default
/// model is known to miss the 25 % bound; they are held to 50 % instead.
///
/// - 2-GPU all_reduce, 1–16 MiB: the measured times carry a ≈ 30 µs constant that NCCL's own
///   latency model (8.4 µs base + 2 × 3.4 µs) does not have (the least-squares intercept of this
///   group is ≈ 45 µs at every size); Vidur's kernel times include the wait for the peer's
///   kernel to start.
/// - 4-GPU all_reduce, 4 MiB: mid-size messages reach a lower share of the link than the large
///   ones that set the efficiency (the measurement is concave in size; see MODEL.md).
/// - send_recv 2 GPUs on one node, 1 MiB: measured 20 µs, model 14 µs (launch + one NVLink step).
const KNOWN_MISSES: &[(VidurCollective, u32, u32, u64)] = &[
    (VidurCollective::AllReduce, 2, 2, 1),
    (VidurCollective::AllReduce, 2, 2, 2),
    (VidurCollective::AllReduce, 2, 2, 4),
    (VidurCollective::AllReduce, 2, 2, 8),
    (VidurCollective::AllReduce, 4, 4, 4),
    (VidurCollective::SendRecv, 2, 2, 1),
];

const BOUND: f64 = 0.25;
const KNOWN_MISS_BOUND: f64 = 0.50;

fn data_dir() -> Option<PathBuf> {
    Some(
        common::data_dir()?
            .join("vidur_collective_profiles")
            .join("a100_dgx"),
    )
}

/// Worst |relative error| over the group's power-of-two buckets ≥ 1 MiB of the line α + n/β
/// against the bucket's median measured time (the same statistic as the model table).
fn own_line_worst_error(rows: &[VidurRow], key: GroupKey, alpha_ns: f64, beta: f64) -> f64 {
    let mut worst = 0.0f64;
    for log2 in 20..=26u32 {
        let mut measured: Vec<f64> = Vec::new();
        let mut line: Vec<f64> = Vec::new();
        for r in rows
            .iter()
            .filter(|r| r.key() == key && r.size_bytes.ilog2() == log2)
        {
            measured.push(r.median_ns());
            line.push(alpha_ns + r.size_bytes as f64 / beta * 1e9);
        }
        if measured.is_empty() {
            continue;
        }
        let (m, l) = (median(&mut measured), median(&mut line));
        worst = worst.max(((l - m) / m).abs());
    }
    worst
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    }
}

fn load(dir: &std::path::Path) -> Vec<VidurRow> {
    let mut rows = Vec::new();
    for file in ["all_reduce.csv", "send_recv.csv"] {
        let path = dir.join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let parsed = parse_vidur_csv(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!parsed.is_empty(), "{} has no rows", path.display());
        rows.extend(parsed);
    }
    rows
}

#[test]
fn vidur_a100_alpha_beta_fit_and_default_model_error() {
    let Some(dir) = data_dir() else {
        println!("skipped: no data folder");
        return;
    };
    let rows = load(&dir);
    assert_eq!(rows.len(), 6958 + 1988, "row counts of the README");

    println!("\nLeast-squares alpha-beta fit t = α + n/β per group (β is algorithm bandwidth; busbw = β × bus factor).");
    println!("The last column is the worst |error| over the group's buckets ≥ 1 MiB of that group's own fitted line (rows ≥ 1 MiB):");
    println!(
        "{:<26} {:>9} {:>9} {:>9} {:>9} {:>10} {:>6} {:>12}",
        "group", "α all µs", "busbw all", "α≥1MiB µs", "β≥1MiB", "busbw≥1MiB", "R²", "line worst %"
    );
    let all_fits = fit_groups(&rows, 0);
    for (key, fit) in fit_groups(&rows, 1 << 20) {
        let factor = key.collective.kind().bus_factor(key.num_workers);
        let all = all_fits
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, f)| *f)
            .expect("every group has an all-rows fit");
        let line_worst = own_line_worst_error(&rows, key, fit.alpha_ns, fit.beta_bytes_per_s);
        println!(
            "{:<26} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>6.3} {:>12.0}",
            key.label(),
            all.alpha_ns / 1e3,
            all.beta_bytes_per_s * factor / 1e9,
            fit.alpha_ns / 1e3,
            fit.beta_bytes_per_s / 1e9,
            fit.beta_bytes_per_s * factor / 1e9,
            fit.r2,
            line_worst * 100.0
        );
        assert!(
            fit.beta_bytes_per_s > 0.0 && fit.r2 > 0.5,
            "{}: poor fit {fit:?}",
            key.label()
        );
    }

    let model = CostModel::new(GpuKind::A100);
    let buckets = compare_buckets(&model, &rows);
    println!(
        "\nDefault A100 model (CostModel::new(GpuKind::A100)) vs measured median, per size bucket:"
    );
    println!(
        "| group | bucket | rows | measured (µs) | model (µs) | error | checked |\n|---|---|---|---|---|---|---|"
    );
    let mut failures = Vec::new();
    for b in &buckets {
        let error = b.relative_error();
        let big = b.lo_bytes() >= 1 << 20;
        let single = !b.key.spans_nodes();
        let known = KNOWN_MISSES.iter().any(|&(c, p, d, mib)| {
            c == b.key.collective
                && p == b.key.num_workers
                && d == b.key.devices_per_node
                && b.lo_bytes() == mib << 20
        });
        let (checked, bound) = match (big, single, known) {
            (true, true, false) => ("≤ 25 %", Some(BOUND)),
            (true, true, true) => ("known miss, ≤ 50 %", Some(KNOWN_MISS_BOUND)),
            (true, false, _) => ("multi-node, reported", None),
            (false, _, _) => ("< 1 MiB, reported", None),
        };
        if big {
            println!(
                "| {} | {}–{} | {} | {:.1} | {:.1} | {:+.1} % | {} |",
                b.key.label(),
                bytes_label(b.lo_bytes()),
                bytes_label(b.lo_bytes() * 2),
                b.rows,
                b.measured_ns / 1e3,
                b.model_ns / 1e3,
                error * 100.0,
                checked
            );
        }
        if let Some(bound) = bound {
            if error.abs() > bound {
                failures.push(format!(
                    "{} bucket {}: {:+.1} % (bound {:.0} %)",
                    b.key.label(),
                    bytes_label(b.lo_bytes()),
                    error * 100.0,
                    bound * 100.0
                ));
            }
        }
    }
    let checked_25 = buckets
        .iter()
        .filter(|b| b.lo_bytes() >= 1 << 20 && !b.key.spans_nodes())
        .count();
    println!(
        "\n{checked_25} single-node buckets ≥ 1 MiB; {} held to 50 % as known misses.",
        KNOWN_MISSES.len()
    );
    assert!(
        failures.is_empty(),
        "model outside its bound:\n{}",
        failures.join("\n")
    );
    // Every known miss must still exist in the data (a stale list would hide nothing but mislead).
    for &(c, p, d, mib) in KNOWN_MISSES {
        let b = buckets
            .iter()
            .find(|b| {
                b.key.collective == c
                    && b.key.num_workers == p
                    && b.key.devices_per_node == d
                    && b.lo_bytes() == mib << 20
            })
            .unwrap_or_else(|| panic!("known miss {c:?} p={p} d={d} {mib} MiB is not in the data"));
        assert!(
            b.relative_error().abs() > BOUND,
            "{} bucket {} MiB is now within 25 % ({:+.1} %): remove it from KNOWN_MISSES",
            b.key.label(),
            mib,
            b.relative_error() * 100.0
        );
    }
}
