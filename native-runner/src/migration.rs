//! `bubblelab migration`: the migration lab's cost model on a preset or scenario file;
//! `bubblelab checkpoint-demo`: the real address-preserving pause/resume/migrate cycle on the
//! host-memory space (or the CUDA check); and the hidden `__checkpoint-restore` that a migration
//! starts as a new process.

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::Instant;

use bubblelab_core::labs::migration;
use bubblelab_core::report::{Cell, Lane, Report, Span, Table, Timeline};
use bubblelab_core::{Scenario, ScenarioError};
use clap::{Args, ValueEnum};

use crate::checkpoint::host::{self, HostSpace};
use crate::checkpoint::image::{self, SaveSpec};
use crate::checkpoint::workload::{self, Built};
use crate::checkpoint::{cuda, Allocator, CkptError, Space};
use crate::error::Failure;
use crate::ReportOutput;

/// The preset used when neither `--preset` nor `--scenario` is given.
pub const DEFAULT_PRESET: &str = "migration-7b-tp2-dp4-one-node";
/// Largest image a restore reads, bytes (16 GiB).
pub const MAX_IMAGE_BYTES: u64 = 16 << 30;

/// Arguments of `bubblelab migration`.
#[derive(Debug, Args)]
pub struct MigrationArgs {
    /// Preset to run (list them with `bubblelab presets`); default `migration-7b-tp2-dp4-one-node`.
    #[arg(long, value_name = "ID", conflicts_with = "scenario")]
    preset: Option<String>,
    /// Scenario JSON file (`"lab": "migration"`) to run instead of a preset.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// How to print the Report, and where to write its trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// Where the demo's space lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// Host memory mapped at a fixed address (runs everywhere).
    Cpu,
    /// CUDA virtual memory management (checks the driver and device).
    Cuda,
}

/// Arguments of `bubblelab checkpoint-demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where the address space lives.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// Size of the reserved virtual range, MiB.
    #[arg(long = "size-mib", value_name = "MIB", default_value_t = 256)]
    size_mib: u64,
    /// Region size of the allocator, KiB (a multiple of the page size).
    #[arg(long = "region-kib", value_name = "KIB", default_value_t = 2048)]
    region_kib: u64,
    /// Chunk size of the fixed-size-region deduplication, KiB (divides the region).
    #[arg(long = "chunk-kib", value_name = "KIB", default_value_t = 64)]
    chunk_kib: u64,
    /// Base address of the range (hex; the default lies well inside the 47-bit user space, away
    /// from the heap, stacks and libraries).
    #[arg(long, value_name = "ADDR", value_parser = parse_hex, default_value = "0x2a0000000000")]
    base: u64,
    /// Keep the images in this folder (default: a temporary folder, removed afterwards).
    #[arg(long = "image-dir", value_name = "DIR")]
    image_dir: Option<PathBuf>,
    /// How to print the Report, and where to write the pause/copy/restore timeline.
    #[command(flatten)]
    output: ReportOutput,
}

/// Arguments of the hidden `__checkpoint-restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The image file.
    #[arg(long, value_name = "FILE")]
    image: PathBuf,
    /// Test hook: map one page inside the image's range first, as another allocation would.
    #[arg(long)]
    occupy: bool,
}

fn parse_hex(s: &str) -> Result<u64, String> {
    let t = s.trim_start_matches("0x").trim_start_matches("0X");
    u64::from_str_radix(t, 16)
        .map_err(|e| format!("expected a hex address like 0x2a0000000000: {e}"))
}

fn ckpt_failure(e: CkptError) -> Failure {
    match e {
        CkptError::Io(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    }
}

/// `bubblelab migration`.
///
/// # Errors
/// [`Failure::Input`] for a bad preset, scenario file or field.
pub fn migration(args: &MigrationArgs) -> Result<(), Failure> {
    let scenario = if args.scenario.is_some() {
        crate::run::load_scenario(args.scenario.as_deref(), None)?
    } else {
        crate::run::load_scenario(None, Some(args.preset.as_deref().unwrap_or(DEFAULT_PRESET)))?
    };
    let Scenario::Migration(params) = scenario else {
        return Err(Failure::Input(format!(
            "the scenario is for the `{}` lab; `bubblelab migration` needs a migration scenario",
            scenario.lab()
        )));
    };
    let report = migration::run(&params).map_err(|e| match e {
        ScenarioError::Run(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    })?;
    crate::run::print_report(&report, &args.output)
}

/// One measured save/restore.
struct Measured {
    label: &'static str,
    spec: SaveSpec,
    image_bytes: u64,
    pause_s: f64,
    restore_s: f64,
    checksum: u64,
    path: PathBuf,
}

fn save_release_restore(
    alloc: &mut Allocator<HostSpace>,
    built: &Built,
    label: &'static str,
    spec: SaveSpec,
    dir: &Path,
) -> Result<Measured, CkptError> {
    let t0 = Instant::now();
    let bytes = image::save(alloc, built, spec)?;
    alloc.space.release()?;
    alloc.forget();
    let pause_s = t0.elapsed().as_secs_f64();
    if alloc.space.is_mapped() {
        return Err(CkptError::Io(
            "the range is still mapped after pause".into(),
        ));
    }
    let t1 = Instant::now();
    let img = image::parse(&bytes)?;
    alloc.space.remap()?;
    image::restore(alloc, &img)?;
    let restore_s = t1.elapsed().as_secs_f64();
    let checksum = workload::traverse(&alloc.space, built.root, built.nodes)?;
    let path = dir.join(format!(
        "{}.img",
        label.replace(" + ", "-").replace(' ', "-")
    ));
    std::fs::write(&path, &bytes)
        .map_err(|e| CkptError::Io(format!("cannot write {}: {e}", path.display())))?;
    Ok(Measured {
        label,
        spec,
        image_bytes: bytes.len() as u64,
        pause_s,
        restore_s,
        checksum,
        path,
    })
}

/// The new process's answer, parsed from its one output line.
struct ChildAnswer {
    base: u64,
    root: u64,
    checksum: u64,
    restore_s: f64,
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
}

fn migrate_to_new_process(path: &Path) -> Result<ChildAnswer, CkptError> {
    let exe = std::env::current_exe()
        .map_err(|e| CkptError::Io(format!("cannot find own binary: {e}")))?;
    let out = Process::new(exe)
        .arg("__checkpoint-restore")
        .arg("--image")
        .arg(path)
        .output()
        .map_err(|e| CkptError::Io(format!("cannot start the restoring process: {e}")))?;
    if !out.status.success() {
        return Err(CkptError::Io(format!(
            "the restoring process failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let hex = |k: &str| field(&line, k).and_then(|v| parse_hex(v).ok());
    match (
        hex("base"),
        hex("root"),
        hex("checksum"),
        field(&line, "restore_s").and_then(|v| v.parse().ok()),
    ) {
        (Some(base), Some(root), Some(checksum), Some(restore_s)) => Ok(ChildAnswer {
            base,
            root,
            checksum,
            restore_s,
        }),
        _ => Err(CkptError::Io(format!(
            "the restoring process answered `{}`",
            line.trim()
        ))),
    }
}

/// `bubblelab checkpoint-demo`.
///
/// # Errors
/// [`Failure::Input`] for bad sizes, a taken range or no CUDA device; [`Failure::Other`] when a
/// system call or the restoring process fails.
pub fn demo(args: &DemoArgs) -> Result<(), Failure> {
    if args.device == Device::Cuda {
        return cuda::run_demo().map_err(ckpt_failure);
    }
    if !(16..=65_536).contains(&args.size_mib) {
        return Err(Failure::Input(format!(
            "--size-mib: must be between 16 and 65536, got {}",
            args.size_mib
        )));
    }
    let size = args.size_mib << 20;
    let region = args.region_kib << 10;
    if region == 0 || region > size / 16 {
        return Err(Failure::Input(format!(
            "--region-kib: must be between 4 and {} (a sixteenth of the range), got {}",
            (size / 16) >> 10,
            args.region_kib
        )));
    }
    let chunk = args.chunk_kib << 10;
    if chunk == 0 || !region.is_multiple_of(chunk) {
        return Err(Failure::Input(format!(
            "--chunk-kib: must divide --region-kib ({}), got {}",
            args.region_kib, args.chunk_kib
        )));
    }
    let (temp, dir) = match &args.image_dir {
        Some(d) => (false, d.clone()),
        None => (
            true,
            std::env::temp_dir().join(format!("bubblelab-ckpt-{}", std::process::id())),
        ),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Other(format!("cannot create {}: {e}", dir.display())))?;
    let result = run_cycle(args, size, region, chunk, &dir);
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = result.map_err(ckpt_failure)?;
    crate::run::print_report(&report, &args.output)
}

fn run_cycle(
    args: &DemoArgs,
    size: u64,
    region: u64,
    chunk: u64,
    dir: &Path,
) -> Result<Report, CkptError> {
    let to_usize = |v: u64| {
        usize::try_from(v).map_err(|_| CkptError::Invalid(format!("{v} does not fit this machine")))
    };
    let space = HostSpace::reserve(to_usize(args.base)?, to_usize(size)?, to_usize(region)?)?;
    let mut alloc = Allocator::new(space);
    let nodes = (size / 16) / workload::NODE_BYTES;
    let built = workload::build(&mut alloc, nodes, size / 8, size / 4, 0x00B0_BB1E)?;
    let pool_regions = alloc.committed_regions().len() as u64;
    let active_regions = alloc.active_regions().len() as u64;
    // Whole-pool images first: an active-only restore does not bring the cached regions back.
    let modes: [(&str, bool, bool); 4] = [
        ("reserved pool", true, false),
        ("reserved pool + dedup", true, true),
        ("active", false, false),
        ("active + dedup", false, true),
    ];
    let mut measured = Vec::new();
    for (label, pool, dedup) in modes {
        let spec = SaveSpec {
            reserved_pool: pool,
            dedup,
            chunk_bytes: chunk,
        };
        let m = save_release_restore(&mut alloc, &built, label, spec, dir)?;
        if m.checksum != built.checksum {
            return Err(CkptError::Corrupt(format!(
                "{label}: checksum after restore {:#018x} differs from {:#018x} before pause",
                m.checksum, built.checksum
            )));
        }
        measured.push(m);
    }
    // Migrate: a new process maps the same range and restores the smallest image.
    let best = &measured[3];
    let child = migrate_to_new_process(&best.path)?;
    if child.checksum != built.checksum || child.root != built.root || child.base != args.base {
        return Err(CkptError::Corrupt(format!(
            "the new process restored base {:#x}, root {:#x}, checksum {:#018x}; expected {:#x}, {:#x}, {:#018x}",
            child.base, child.root, child.checksum, args.base, built.root, built.checksum
        )));
    }
    Ok(demo_report(
        args,
        size,
        region,
        chunk,
        &built,
        pool_regions,
        active_regions,
        &measured,
        &child,
    ))
}

#[allow(clippy::too_many_arguments)]
fn demo_report(
    args: &DemoArgs,
    size: u64,
    region: u64,
    chunk: u64,
    built: &Built,
    pool_regions: u64,
    active_regions: u64,
    measured: &[Measured],
    child: &ChildAnswer,
) -> Report {
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let mut report = Report {
        lab: "migration".into(),
        title: format!(
            "Address-preserving checkpoint, host memory: {} MiB reserved at {:#x}, regions of {} KiB, dedup chunks of {} KiB",
            args.size_mib, args.base, region >> 10, chunk >> 10
        ),
        ..Report::default()
    };
    report.push_metric(
        "reserved_bytes",
        "Reserved virtual range",
        size as f64,
        "bytes",
    );
    report.push_metric(
        "pool_bytes",
        "Reserved pool (committed regions)",
        (pool_regions * region) as f64,
        "bytes",
    );
    report.push_metric(
        "active_bytes",
        "Active regions",
        (active_regions * region) as f64,
        "bytes",
    );
    report.push_metric("nodes", "Linked-list nodes", built.nodes as f64, "count");
    let mut table = Table {
        key: "checkpoint".into(),
        title: "Pause (copy out + unmap) and restore (check image + map at the same address + copy in) in this process; checksum by traversal".into(),
        columns: ["image", "image (MiB)", "pause (ms)", "restore (ms)", "checksum before", "checksum after", "same"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: Vec::new(),
    };
    let mut timeline = Timeline {
        name: "checkpoint-demo".into(),
        lanes: Vec::new(),
        counters: Vec::new(),
    };
    let mut t_ns = 0u64;
    let mut lane = Lane {
        name: "host memory".into(),
        spans: Vec::new(),
    };
    for m in measured {
        let key = m.label.replace(" + ", "_").replace(' ', "_");
        report.push_metric(
            &format!("{key}.image_bytes"),
            &format!("{} image", m.label),
            m.image_bytes as f64,
            "bytes",
        );
        report.push_metric(
            &format!("{key}.pause_s"),
            &format!("{} pause", m.label),
            m.pause_s,
            "s",
        );
        report.push_metric(
            &format!("{key}.restore_s"),
            &format!("{} restore", m.label),
            m.restore_s,
            "s",
        );
        table.rows.push(vec![
            Cell::Text(m.label.into()),
            Cell::Num((mib(m.image_bytes) * 100.0).round() / 100.0),
            Cell::Num((m.pause_s * 1e5).round() / 100.0),
            Cell::Num((m.restore_s * 1e5).round() / 100.0),
            Cell::Text(format!("{:#018x}", built.checksum)),
            Cell::Text(format!("{:#018x}", m.checksum)),
            Cell::Text(
                if m.checksum == built.checksum {
                    "yes"
                } else {
                    "NO"
                }
                .into(),
            ),
        ]);
        let p = (m.pause_s * 1e9) as u64;
        let r = (m.restore_s * 1e9) as u64;
        lane.spans.push(Span {
            start_ns: t_ns,
            dur_ns: p.max(1),
            name: format!("pause: {}", m.label),
            cat: "copy".into(),
        });
        lane.spans.push(Span {
            start_ns: t_ns + p,
            dur_ns: r.max(1),
            name: format!("restore: {}", m.label),
            cat: "restore".into(),
        });
        t_ns += p + r;
        let _ = m.spec;
    }
    timeline.lanes.push(lane);
    timeline.lanes.push(Lane {
        name: "new process".into(),
        spans: vec![Span {
            start_ns: t_ns,
            dur_ns: ((child.restore_s * 1e9) as u64).max(1),
            name: "migrate: restore (active + dedup)".into(),
            cat: "restore".into(),
        }],
    });
    report.timelines.push(timeline);
    report.tables.push(table);
    report.tables.push(Table {
        key: "migrate".into(),
        title: "Migration: the active + dedup image restored by a new process".into(),
        columns: [
            "base",
            "root node",
            "checksum before",
            "checksum in the new process",
            "restore (ms)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: vec![vec![
            Cell::Text(format!("{:#x}", child.base)),
            Cell::Text(format!("{:#x}", child.root)),
            Cell::Text(format!("{:#018x}", built.checksum)),
            Cell::Text(format!("{:#018x}", child.checksum)),
            Cell::Num((child.restore_s * 1e5).round() / 100.0),
        ]],
    });
    report.push_metric(
        "migrate.restore_s",
        "New-process restore (active + dedup)",
        child.restore_s,
        "s",
    );
    report.findings.push(format!(
        "The list's {} nodes link by absolute addresses; every restore mapped the range at {:#x} again and the traversal gave the same checksum, in this process and in a new one.",
        built.nodes, args.base
    ));
    report.findings.push(format!(
        "Active regions are {active_regions} of {pool_regions} committed regions ({:.0}%); the freed scratch block stays in the pool and only a whole-pool image carries it. Dedup finds the second weights replica (and zero chunks) chunk by chunk.",
        100.0 * active_regions as f64 / pool_regions.max(1) as f64
    ));
    report
}

/// The hidden `__checkpoint-restore`: reads, checks and restores an image at its own address in
/// this (new) process, traverses, and prints `base=… root=… checksum=… nodes=… restore_s=…`.
///
/// # Errors
/// [`Failure::Input`] for a corrupted image or a taken range (nothing is restored then).
pub fn restore_process(args: &RestoreArgs) -> Result<(), Failure> {
    let meta = std::fs::metadata(&args.image)
        .map_err(|e| Failure::Input(format!("{}: {e}", args.image.display())))?;
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(Failure::Input(format!(
            "{}: larger than {MAX_IMAGE_BYTES} bytes",
            args.image.display()
        )));
    }
    let bytes = std::fs::read(&args.image)
        .map_err(|e| Failure::Input(format!("{}: {e}", args.image.display())))?;
    let t0 = Instant::now();
    let name = args.image.display().to_string();
    let err = |e: CkptError| Failure::Input(format!("{name}: {e}"));
    let img = image::parse(&bytes).map_err(err)?;
    let to_usize = |v: u64| {
        usize::try_from(v)
            .map_err(|_| Failure::Input(format!("{name}: {v} does not fit this machine")))
    };
    if args.occupy {
        host::occupy(to_usize(img.base)? + to_usize(img.reserved / 2)? / 4096 * 4096)
            .map_err(err)?;
    }
    let space = HostSpace::reserve(
        to_usize(img.base)?,
        to_usize(img.reserved)?,
        to_usize(img.region)?,
    )
    .map_err(err)?;
    let mut alloc = Allocator::new(space);
    image::restore(&mut alloc, &img).map_err(err)?;
    let restore_s = t0.elapsed().as_secs_f64();
    let checksum = workload::traverse(&alloc.space, img.root, img.nodes).map_err(err)?;
    if checksum != img.checksum {
        return Err(Failure::Input(format!(
            "{name}: traversal checksum {checksum:#018x} differs from the image's {:#018x}",
            img.checksum
        )));
    }
    crate::files::write_stdout(&format!(
        "base={:#x} root={:#x} checksum={checksum:#018x} nodes={} restore_s={restore_s}\n",
        alloc.space.base(),
        img.root,
        img.nodes
    ))
}
