//! `bubblelab calibrate`: microbenchmarks of the executor's own kernels → a calibrated profile
//! JSON in the kernel's `Calibration` format (version 1), printed as a table.
//!
//! On the CPU (the CPU executor's kernels, so that its predictions use its own rates):
//! - GEMM: the executor's f32 matmul over a grid of square and flat (m, n, k) shapes → achieved
//!   FLOP/s by FLOPs (dtype `fp32`);
//! - memory-bound: `copy_from_slice` of 4 KiB … 64 MiB → achieved bytes/s by bytes moved (read +
//!   written);
//! - collectives: the executor emulates a collective as a copy of its bus volume, so its curve
//!   is the copy curve in the NCCL-tests convention (bus bandwidth by message size) for
//!   AllReduce, AllGather, ReduceScatter and AllToAll on 2, 4 and 8 ranks of one node;
//! - launch: the time to hand an op from one stream thread to another through the executor's
//!   `Mutex` + `Condvar` (half a ping-pong round trip), ns.
//!
//! Each point is the median of its repetitions. The format requires time to grow with size, so
//! a point whose median time is below the previous (smaller) point's is raised to it; the table
//! marks such points.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

use bubblelab_core::cost::{CollectiveKind, Dtype};
use bubblelab_core::hw::{
    BusBwPoint, Calibration, CollectiveCurve, GemmPoint, MemoryPoint, CALIBRATION_VERSION,
};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Failure;
use crate::exec::cpu::matmul;
use crate::exec::median;

/// Which executor's kernels to measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// The CPU executor (threads as streams).
    #[default]
    Cpu,
    /// The CUDA executor (needs a driver and a device).
    Cuda,
}

/// Arguments of `bubblelab calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Device to measure.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// Write the calibrated profile JSON here (default: print only the table).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Repetitions per point (the median is kept).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repetitions: u32,
}

/// GEMM shapes (m, n, k) of the grid.
pub const GEMM_GRID: [(usize, usize, usize); 10] = [
    (16, 16, 16),
    (32, 32, 32),
    (64, 64, 64),
    (64, 64, 256),
    (128, 128, 128),
    (128, 128, 512),
    (256, 256, 256),
    (384, 384, 384),
    (256, 256, 1024),
    (512, 512, 512),
];

/// Copy sizes of the memory curve, bytes copied (twice that is moved).
pub const COPY_BYTES: [usize; 9] = [
    4 << 10,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
    32 << 20,
    64 << 20,
];

/// Collective kinds and group sizes written to the profile.
const COLLECTIVES: [CollectiveKind; 4] = [
    CollectiveKind::AllReduce,
    CollectiveKind::AllGather,
    CollectiveKind::ReduceScatter,
    CollectiveKind::AllToAll,
];
const RANKS: [u32; 3] = [2, 4, 8];

fn time_ns(f: &mut impl FnMut()) -> u64 {
    let t = Instant::now();
    f();
    u64::try_from(t.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

fn median_ns(reps: u32, mut f: impl FnMut()) -> u64 {
    f(); // warm-up
    let mut v: Vec<u64> = (0..reps).map(|_| time_ns(&mut f)).collect();
    median(&mut v)
}

/// Half the round trip of handing a token between two threads through a Mutex + Condvar, ns.
fn handoff_ns(rounds: u32) -> u64 {
    let state = Arc::new((Mutex::new(0u32), Condvar::new()));
    let other = Arc::clone(&state);
    let total = 2 * rounds;
    let t = Instant::now();
    let peer = std::thread::spawn(move || {
        let (m, cv) = &*other;
        let mut turn = m.lock().unwrap_or_else(PoisonError::into_inner);
        while *turn < total {
            while *turn % 2 == 0 {
                turn = cv.wait(turn).unwrap_or_else(PoisonError::into_inner);
            }
            *turn += 1;
            cv.notify_all();
        }
    });
    {
        let (m, cv) = &*state;
        let mut turn = m.lock().unwrap_or_else(PoisonError::into_inner);
        while *turn < total {
            while *turn % 2 == 1 {
                turn = cv.wait(turn).unwrap_or_else(PoisonError::into_inner);
            }
            if *turn >= total {
                break;
            }
            *turn += 1;
            cv.notify_all();
        }
    }
    let _ = peer.join();
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX) / u64::from(total.max(1))
}

/// A measured table row: what, size, time, rate, whether raised to keep time monotone.
pub struct Row {
    /// `gemm m×n×k`, `copy`, …
    pub what: String,
    /// FLOPs or bytes.
    pub size: f64,
    /// Median time, ns.
    pub time_ns: u64,
    /// FLOP/s or bytes/s.
    pub rate: f64,
    /// Whether the time was raised to the previous point's.
    pub raised: bool,
}

/// Measures the CPU executor's kernels; returns the profile and the table rows.
#[must_use]
pub fn calibrate_cpu(repetitions: u32, progress: &ProgressBar) -> (Calibration, Vec<Row>) {
    let mut rows = Vec::new();
    let mut gemm = Vec::new();
    let mut last_ns = 0u64;
    for &(m, n, k) in &GEMM_GRID {
        let a = vec![0.5f32; m * k];
        let b = vec![0.25f32; k * n];
        let mut c = vec![0.0f32; m * n];
        let ns = median_ns(repetitions, || {
            matmul(&a, &b, &mut c, m, n, k);
            std::hint::black_box(&mut c);
        });
        let raised = ns < last_ns;
        let ns = ns.max(last_ns);
        last_ns = ns;
        let flops = 2.0 * (m * n * k) as f64;
        let rate = flops / (ns as f64 * 1e-9);
        gemm.push(GemmPoint {
            dtype: Dtype::Fp32,
            flops,
            flops_per_s: rate,
        });
        rows.push(Row {
            what: format!("gemm {m}x{n}x{k} f32"),
            size: flops,
            time_ns: ns,
            rate,
            raised,
        });
        progress.inc(1);
    }
    let mut memory = Vec::new();
    let mut copy_points = Vec::new();
    last_ns = 0;
    for &bytes in &COPY_BYTES {
        let src = vec![1u8; bytes];
        let mut dst = vec![0u8; bytes];
        let reps = if bytes >= 16 << 20 {
            repetitions.min(3)
        } else {
            repetitions
        };
        let ns = median_ns(reps, || {
            dst.copy_from_slice(&src);
            std::hint::black_box(&mut dst);
        });
        let raised = ns < last_ns;
        let ns = ns.max(last_ns);
        last_ns = ns;
        let moved = 2.0 * bytes as f64;
        let rate = moved / (ns as f64 * 1e-9);
        memory.push(MemoryPoint {
            bytes: moved,
            bytes_per_s: rate,
        });
        copy_points.push((bytes as f64, bytes as f64 / (ns as f64 * 1e-9)));
        rows.push(Row {
            what: "copy (memory-bound, collective emulation)".into(),
            size: moved,
            time_ns: ns,
            rate,
            raised,
        });
        progress.inc(1);
    }
    let launch_ns = {
        let mut v: Vec<u64> = (0..repetitions).map(|_| handoff_ns(2000)).collect();
        median(&mut v)
    };
    rows.push(Row {
        what: "launch (stream handoff)".into(),
        size: 0.0,
        time_ns: launch_ns,
        rate: 0.0,
        raised: false,
    });
    progress.inc(1);
    let mut collectives = Vec::new();
    for kind in COLLECTIVES {
        for ranks in RANKS {
            let factor = kind.bus_factor(ranks);
            collectives.push(CollectiveCurve {
                kind,
                ranks,
                ranks_per_node: ranks,
                points: copy_points
                    .iter()
                    .map(|&(volume, bytes_per_s)| BusBwPoint {
                        bytes: volume / factor,
                        bus_bytes_per_s: bytes_per_s,
                    })
                    .collect(),
            });
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    (
        Calibration {
            version: CALIBRATION_VERSION,
            device: format!("cpu executor ({threads} hardware threads)"),
            gemm,
            memory,
            collectives,
            launch_overhead_ns: Some(launch_ns as f64),
        },
        rows,
    )
}

/// Steps the CPU calibration's progress bar counts.
pub const CPU_STEPS: u64 = (GEMM_GRID.len() + COPY_BYTES.len() + 1) as u64;

/// The table of a calibration run.
#[must_use]
pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<44} {:>14} {:>12} {:>14}\n",
        "benchmark", "FLOPs|bytes", "median µs", "rate /s"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<44} {:>14.4e} {:>12.2} {:>14.4e}{}\n",
            r.what,
            r.size,
            r.time_ns as f64 / 1e3,
            r.rate,
            if r.raised {
                "  (raised: monotone time)"
            } else {
                ""
            }
        ));
    }
    out
}

/// Runs `bubblelab calibrate`.
///
/// # Errors
/// CUDA without a driver or device, or an output file that cannot be written.
pub fn calibrate(args: &CalibrateArgs) -> Result<(), Failure> {
    if args.device == Device::Cuda {
        return Err(cuda_unavailable("calibrate"));
    }
    let progress = ProgressBar::with_draw_target(Some(CPU_STEPS), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("calibrating {bar:30} {pos}/{len} {elapsed}") {
        progress.set_style(style);
    }
    let (cal, rows) = calibrate_cpu(args.repetitions, &progress);
    progress.finish_and_clear();
    cal.validate()
        .map_err(|e| Failure::Other(format!("the measured profile is invalid: {e}")))?;
    let mut text = format!("calibrated profile of {}\n", cal.device);
    text.push_str(&table(&rows));
    if let Some(path) = &args.output {
        let json = serde_json::to_string_pretty(&cal)
            .map_err(|e| Failure::Other(format!("cannot encode the profile: {e}")))?;
        crate::files::write_file(path, &(json + "\n"))?;
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    crate::files::write_stdout(&text)
}

/// The error of a CUDA command: no driver/device, or (with one) that the CUDA executor of this
/// build cannot run it yet.
#[must_use]
pub fn cuda_unavailable(command: &str) -> Failure {
    match crate::exec::cuda::require_device() {
        Err(e) => Failure::Other(format!("{command} --device cuda: {e}")),
        Ok(p) => Failure::Other(format!(
            "{command} --device cuda: {} device(s) found (driver {}), but this build has no CUDA executor yet; use --device cpu",
            p.devices.len(),
            p.driver_version
        )),
    }
}
