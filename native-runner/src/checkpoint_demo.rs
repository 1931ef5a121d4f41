//! `bubblelab checkpoint-demo`: the real address-preserving pause/resume/migrate cycle on the
//! host-memory space (or the CUDA check), and the hidden `__checkpoint-restore` that a migration
//! starts as a new process. The cost model of the same mechanism is `bubblelab migration`.

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::Instant;

use bubblelab_core::report::{Cell, Lane, Report, Span, Table, Timeline};
use clap::Args;

use crate::checkpoint::cuda::{self, CudaSpace, Kernels};
use crate::checkpoint::host::{self, HostSpace};
use crate::checkpoint::image::{self, SaveSpec};
use crate::checkpoint::mem::{self, MemSpace};
use crate::checkpoint::workload::{self, Built};
use crate::checkpoint::{Allocator, CkptError, Space};
use crate::error::Failure;
use crate::{Device, ReportOutput};

/// Largest image a restore reads, bytes (16 GiB).
pub const MAX_IMAGE_BYTES: u64 = 16 << 30;
/// Base address of the host range when `--base` is not given.
pub const DEFAULT_HOST_BASE: u64 = 0x2a00_0000_0000;
/// Seed of the demo's workload.
const DEMO_SEED: u64 = 0x00B0_BB1E;

/// Arguments of `bubblelab checkpoint-demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where the address space lives.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// Size of the reserved virtual range, MiB.
    #[arg(long = "size-mib", value_name = "MIB", default_value_t = 256)]
    size_mib: u64,
    /// Region size of the allocator, KiB (a multiple of the page size; on CUDA rounded up to
    /// the device's allocation granularity, 2 MiB on current GPUs).
    #[arg(long = "region-kib", value_name = "KIB", default_value_t = 2048)]
    region_kib: u64,
    /// Chunk size of the fixed-size-region deduplication, KiB (divides the region).
    #[arg(long = "chunk-kib", value_name = "KIB", default_value_t = 64)]
    chunk_kib: u64,
    /// Base address of the range (hex). cpu: default 0x2a0000000000, well inside the 47-bit
    /// user space, away from the heap, stacks and libraries. cuda: default where the driver
    /// puts it; a given address is a hint that must be honoured.
    #[arg(long, value_name = "ADDR", value_parser = parse_hex)]
    base: Option<u64>,
    /// CUDA device the workload is built on.
    #[arg(long, value_name = "N", default_value_t = 0)]
    ordinal: usize,
    /// CUDA device the new process restores onto (default: the same as --ordinal).
    #[arg(long = "migrate-ordinal", value_name = "N")]
    migrate_ordinal: Option<usize>,
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
    /// Where to restore the image.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// CUDA device to restore onto.
    #[arg(long, value_name = "N", default_value_t = 0)]
    ordinal: usize,
}

fn parse_hex(s: &str) -> Result<u64, String> {
    let t = s.trim_start_matches("0x").trim_start_matches("0X");
    u64::from_str_radix(t, 16)
        .map_err(|e| format!("expected a hex address like 0x2a0000000000: {e}"))
}

#[allow(clippy::needless_pass_by_value)] // a `map_err` function: it takes the error it maps
fn ckpt_failure(e: CkptError) -> Failure {
    match e {
        CkptError::Io(_) => Failure::Other(e.to_string()),
        _ => Failure::Input(e.to_string()),
    }
}

/// One measured save/restore.
struct Measured {
    label: &'static str,
    image_bytes: u64,
    pause_s: f64,
    restore_s: f64,
    checksum: u64,
    path: PathBuf,
    /// Free memory of the space's owner just before and just after release, bytes (device
    /// memory on CUDA; not measured on the host).
    free_before_after: Option<(u64, u64)>,
}

/// What the cycle needs from a space beyond [`Space`]: how to checksum the list (a host
/// traversal, or the device kernel) and how much memory its owner has free.
struct Probe<'a, S> {
    checksum: &'a dyn Fn(&S, &Built) -> Result<u64, CkptError>,
    free_bytes: &'a dyn Fn(&S) -> Option<u64>,
}

fn save_release_restore<S: Space>(
    alloc: &mut Allocator<S>,
    built: &Built,
    label: &'static str,
    spec: SaveSpec,
    dir: &Path,
    probe: &Probe<'_, S>,
) -> Result<Measured, CkptError> {
    let t0 = Instant::now();
    let bytes = image::save(alloc, built, spec)?;
    let free_before = (probe.free_bytes)(&alloc.space);
    alloc.space.release()?;
    alloc.forget();
    let pause_s = t0.elapsed().as_secs_f64();
    let free_after = (probe.free_bytes)(&alloc.space);
    if alloc.space.is_mapped() {
        return Err(CkptError::Io(
            "the range is still mapped after pause".into(),
        ));
    }
    let t1 = Instant::now();
    let img = image::parse(&bytes)?;
    alloc.space.remap()?;
    image::restore(alloc, &img)?;
    alloc.space.synchronize()?;
    let restore_s = t1.elapsed().as_secs_f64();
    let checksum = (probe.checksum)(&alloc.space, built)?;
    let path = dir.join(format!(
        "{}.img",
        label.replace(" + ", "-").replace(' ', "-")
    ));
    std::fs::write(&path, &bytes)
        .map_err(|e| CkptError::Io(format!("cannot write {}: {e}", path.display())))?;
    Ok(Measured {
        label,
        image_bytes: bytes.len() as u64,
        pause_s,
        restore_s,
        checksum,
        path,
        free_before_after: free_before.zip(free_after),
    })
}

/// Every image kind, saved, released and restored in turn, each checked by checksum.
fn measure_modes<S: Space>(
    alloc: &mut Allocator<S>,
    built: &Built,
    chunk: u64,
    dir: &Path,
    probe: &Probe<'_, S>,
) -> Result<Vec<Measured>, CkptError> {
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
        let m = save_release_restore(alloc, built, label, spec, dir, probe)?;
        if m.checksum != built.checksum {
            return Err(CkptError::Corrupt(format!(
                "{label}: checksum after restore {:#018x} differs from {:#018x} before pause",
                m.checksum, built.checksum
            )));
        }
        measured.push(m);
    }
    Ok(measured)
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

fn migrate_to_new_process(
    path: &Path,
    cuda_ordinal: Option<usize>,
) -> Result<ChildAnswer, CkptError> {
    let exe = std::env::current_exe()
        .map_err(|e| CkptError::Io(format!("cannot find own binary: {e}")))?;
    let mut cmd = Process::new(exe);
    cmd.arg("__checkpoint-restore").arg("--image").arg(path);
    if let Some(n) = cuda_ordinal {
        cmd.args(["--device", "cuda", "--ordinal", &n.to_string()]);
    }
    let out = cmd
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

/// Sizes of the demo, checked before anything is reserved or probed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DemoSizes {
    reserved_bytes: u64,
    region_bytes: u64,
    chunk_bytes: u64,
}

fn demo_sizes(args: &DemoArgs) -> Result<DemoSizes, Failure> {
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
    if args.base == Some(0) {
        return Err(Failure::Input(
            "--base: address 0 is the null page: choose a fixed address such as 0x2a0000000000"
                .into(),
        ));
    }
    if args.device == Device::Cpu && (args.ordinal != 0 || args.migrate_ordinal.is_some()) {
        return Err(Failure::Input(
            "--ordinal and --migrate-ordinal choose CUDA devices: use them with --device cuda"
                .into(),
        ));
    }
    Ok(DemoSizes {
        reserved_bytes: size,
        region_bytes: region,
        chunk_bytes: chunk,
    })
}

/// `bubblelab checkpoint-demo`.
///
/// # Errors
/// [`Failure::Input`] for bad sizes, a taken range or no CUDA device; [`Failure::Other`] when a
/// system call or the restoring process fails.
pub fn demo(args: &DemoArgs) -> Result<(), Failure> {
    let sizes = demo_sizes(args)?;
    let (temp, dir) = match &args.image_dir {
        Some(d) => (false, d.clone()),
        None => (
            true,
            std::env::temp_dir().join(format!("bubblelab-ckpt-{}", std::process::id())),
        ),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Other(format!("cannot create {}: {e}", dir.display())))?;
    let result = match args.device {
        Device::Cpu => run_host_cycle(args, sizes, &dir),
        Device::Cuda => run_cuda_cycle(args, sizes, &dir),
    };
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let mut report = result.map_err(ckpt_failure)?;
    let machine = match args.device {
        Device::Cpu => format!("host memory of {}", crate::files::host_cpu_text()),
        Device::Cuda => "the CUDA device named in the title".to_string(),
    };
    report.findings.push(format!(
        "Measured {} on {machine}: a real run, not a simulation; timings vary from run to run and with what else the machine runs.",
        crate::files::utc_now_text()
    ));
    crate::run::print_report(&report, &args.output)
}

/// Nodes, weights and scratch of the demo's workload in a range of `size` bytes.
fn workload_sizes(size: u64) -> (u64, u64, u64) {
    ((size / 16) / workload::NODE_BYTES, size / 8, size / 4)
}

fn run_host_cycle(args: &DemoArgs, sizes: DemoSizes, dir: &Path) -> Result<Report, CkptError> {
    let to_usize = |v: u64| {
        usize::try_from(v).map_err(|_| CkptError::Invalid(format!("{v} does not fit this machine")))
    };
    let base = args.base.unwrap_or(DEFAULT_HOST_BASE);
    let space = HostSpace::reserve(
        to_usize(base)?,
        to_usize(sizes.reserved_bytes)?,
        to_usize(sizes.region_bytes)?,
    )?;
    let mut alloc = Allocator::new(space);
    let (nodes, weights, scratch) = workload_sizes(sizes.reserved_bytes);
    let built = workload::build(&mut alloc, nodes, weights, scratch, DEMO_SEED)?;
    let pool_regions = alloc.committed_regions().len() as u64;
    let active_regions = alloc.active_regions().len() as u64;
    let probe = Probe {
        checksum: &|s: &HostSpace, b: &Built| workload::traverse(s, b.root, b.nodes),
        free_bytes: &|_: &HostSpace| None,
    };
    let measured = measure_modes(&mut alloc, &built, sizes.chunk_bytes, dir, &probe)?;
    // Migrate: a new process maps the same range and restores the smallest image.
    let child = migrate_to_new_process(&measured[3].path, None)?;
    check_child(&child, base, &built)?;
    Ok(demo_report(&DemoRun {
        title: format!(
            "Address-preserving checkpoint, host memory: {} MiB reserved at {base:#x}, regions of {} KiB, dedup chunks of {} KiB",
            args.size_mib, sizes.region_bytes >> 10, sizes.chunk_bytes >> 10
        ),
        lane: "host memory".into(),
        base,
        sizes,
        built,
        pool_regions,
        active_regions,
        measured,
        child,
        findings: Vec::new(),
    }))
}

fn check_child(child: &ChildAnswer, base: u64, built: &Built) -> Result<(), CkptError> {
    if child.checksum != built.checksum || child.root != built.root || child.base != base {
        return Err(CkptError::Corrupt(format!(
            "the new process restored base {:#x}, root {:#x}, checksum {:#018x}; expected {base:#x}, {:#x}, {:#018x}",
            child.base, child.root, child.checksum, built.root, built.checksum
        )));
    }
    Ok(())
}

/// The CUDA cycle: build on the device (generic fills, the link kernel), checksum on the
/// device and on a host copy and against a host build of the same seed at the same addresses,
/// then the same pause/restore cycle and a migration to a new process.
fn run_cuda_cycle(args: &DemoArgs, sizes: DemoSizes, dir: &Path) -> Result<Report, CkptError> {
    let ctx = cuda::open_device(args.ordinal)?;
    let name = ctx.name().unwrap_or_else(|_| "unnamed device".into());
    let space = CudaSpace::reserve(ctx, args.base, sizes.reserved_bytes, sizes.region_bytes)?;
    let geometry = space.geometry();
    if !geometry.region_bytes.is_multiple_of(sizes.chunk_bytes) {
        return Err(CkptError::Invalid(format!(
            "--chunk-kib: must divide the device's region of {} KiB, got {}",
            geometry.region_bytes >> 10,
            args.chunk_kib
        )));
    }
    let kernels = Kernels::compile(&space)?;
    let base = space.base();
    let mut alloc = Allocator::new(space);
    let (nodes, weights, scratch) = workload_sizes(geometry.reserved_bytes);
    let layout = workload::lay_out(&mut alloc, nodes, weights, scratch, DEMO_SEED)?;
    kernels.link(&alloc.space, &layout)?;
    let root = layout.list + layout.order[0] * workload::NODE_BYTES;
    let device_sum = kernels.checksum(&alloc.space, root, nodes)?;
    let copy = mem::copy_of(&alloc.space, &alloc.active_regions())?;
    let host_copy_sum = workload::traverse(&copy, root, nodes)?;
    drop(copy);
    let mut reference = Allocator::new(MemSpace::new(
        base,
        geometry.reserved_bytes,
        geometry.region_bytes,
    )?);
    let host_built = workload::build(&mut reference, nodes, weights, scratch, DEMO_SEED)?;
    drop(reference);
    if device_sum != host_copy_sum || device_sum != host_built.checksum || root != host_built.root {
        return Err(CkptError::Corrupt(format!(
            "the device list disagrees with the host: device checksum {device_sum:#018x}, host traversal of its bytes {host_copy_sum:#018x}, host build of the same seed {:#018x} (root {root:#x} vs {:#x})",
            host_built.checksum, host_built.root
        )));
    }
    let built = Built {
        root,
        nodes,
        checksum: device_sum,
        weights_a: layout.weights_a,
        weights_b: layout.weights_b,
    };
    let pool_regions = alloc.committed_regions().len() as u64;
    let active_regions = alloc.active_regions().len() as u64;
    let probe = Probe {
        checksum: &|s: &CudaSpace, b: &Built| kernels.checksum(s, b.root, b.nodes),
        free_bytes: &|s: &CudaSpace| s.device_free_bytes().ok(),
    };
    let measured = measure_modes(&mut alloc, &built, sizes.chunk_bytes, dir, &probe)?;
    let target = args.migrate_ordinal.unwrap_or(args.ordinal);
    let child = migrate_to_new_process(&measured[3].path, Some(target))?;
    check_child(&child, base, &built)?;
    Ok(demo_report(&DemoRun {
        title: format!(
            "Address-preserving checkpoint, CUDA device {} ({name}): {} MiB reserved at {base:#x}, regions of {} KiB (asked {} KiB; allocation granularity {} KiB), dedup chunks of {} KiB",
            args.ordinal,
            geometry.reserved_bytes >> 20,
            geometry.region_bytes >> 10,
            args.region_kib,
            geometry.granularity_bytes >> 10,
            sizes.chunk_bytes >> 10
        ),
        lane: format!("device {}", args.ordinal),
        base,
        sizes: DemoSizes {
            reserved_bytes: geometry.reserved_bytes,
            region_bytes: geometry.region_bytes,
            chunk_bytes: sizes.chunk_bytes,
        },
        built,
        pool_regions,
        active_regions,
        measured,
        child,
        findings: vec![format!(
            "The list was linked on the device by an NVRTC kernel (nodes store device pointers) and checksummed there; the device checksum {device_sum:#018x} equals a host traversal of the device's bytes and a host build of the same seed at the same addresses. The new process restored onto device {target}."
        )],
    }))
}

/// Everything the demo's Report shows.
struct DemoRun {
    title: String,
    lane: String,
    base: u64,
    sizes: DemoSizes,
    built: Built,
    pool_regions: u64,
    active_regions: u64,
    measured: Vec<Measured>,
    child: ChildAnswer,
    findings: Vec<String>,
}

#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
fn demo_report(run: &DemoRun) -> Report {
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let (built, child, region) = (&run.built, &run.child, run.sizes.region_bytes);
    let (pool_regions, active_regions) = (run.pool_regions, run.active_regions);
    let mut report = Report {
        lab: "migration".into(),
        title: run.title.clone(),
        ..Report::default()
    };
    report.push_metric(
        "reserved_bytes",
        "Reserved virtual range",
        run.sizes.reserved_bytes as f64,
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
            .map(std::string::ToString::to_string)
            .collect(),
        rows: Vec::new(),
    };
    let mut memory = Table {
        key: "memory".into(),
        title: "Memory returned by release (free memory of the owner, as it reports it)".into(),
        columns: [
            "image",
            "free before release (MiB)",
            "free after release (MiB)",
            "returned (MiB)",
            "committed (MiB)",
        ]
        .iter()
        .map(std::string::ToString::to_string)
        .collect(),
        rows: Vec::new(),
    };
    let mut timeline = Timeline {
        name: "checkpoint-demo".into(),
        ..Timeline::default()
    };
    let mut t_ns = 0u64;
    let mut lane = Lane {
        name: run.lane.clone(),
        spans: Vec::new(),
    };
    let round2 = |v: f64| (v * 100.0).round() / 100.0;
    for m in &run.measured {
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
            Cell::Num(round2(mib(m.image_bytes))),
            Cell::Num(round2(m.pause_s * 1e3)),
            Cell::Num(round2(m.restore_s * 1e3)),
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
        if let Some((before, after)) = m.free_before_after {
            let returned = after.saturating_sub(before);
            report.push_metric(
                &format!("{key}.returned_bytes"),
                &format!("{} memory returned by release", m.label),
                returned as f64,
                "bytes",
            );
            memory.rows.push(vec![
                Cell::Text(m.label.into()),
                Cell::Num(round2(mib(before))),
                Cell::Num(round2(mib(after))),
                Cell::Num(round2(mib(returned))),
                Cell::Num(round2(mib(pool_regions * region))),
            ]);
        }
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
    timeline.declare(&[bubblelab_core::labs::migration::report::SPAN_KINDS]);
    report.timelines.push(timeline);
    report.tables.push(table);
    if !memory.rows.is_empty() {
        report.tables.push(memory);
    }
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
        .map(std::string::ToString::to_string)
        .collect(),
        rows: vec![vec![
            Cell::Text(format!("{:#x}", child.base)),
            Cell::Text(format!("{:#x}", child.root)),
            Cell::Text(format!("{:#018x}", built.checksum)),
            Cell::Text(format!("{:#018x}", child.checksum)),
            Cell::Num(round2(child.restore_s * 1e3)),
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
        built.nodes, run.base
    ));
    report.findings.push(format!(
        "Active regions are {active_regions} of {pool_regions} committed regions ({:.0}%); the freed scratch block stays in the pool and only a whole-pool image carries it. Dedup finds the second weights replica (and zero chunks) chunk by chunk.",
        100.0 * active_regions as f64 / pool_regions.max(1) as f64
    ));
    report.findings.extend(run.findings.iter().cloned());
    report
}

/// The hidden `__checkpoint-restore`: reads, checks and restores an image at its own address in
/// this (new) process, traverses (on the device with `--device cuda`), and prints
/// `base=… root=… checksum=… nodes=… restore_s=…`.
///
/// # Errors
/// [`Failure::Input`] for a corrupted image, a taken range or no CUDA device (nothing is
/// restored then).
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
    if args.device == Device::Cpu && args.ordinal != 0 {
        return Err(Failure::Input(
            "--ordinal chooses a CUDA device: use it with --device cuda".into(),
        ));
    }
    // The driver must be there before the test hook maps anything.
    let ctx = match args.device {
        Device::Cuda => Some(cuda::open_device(args.ordinal).map_err(err)?),
        Device::Cpu => None,
    };
    if args.occupy {
        host::occupy(to_usize(img.base)? + to_usize(img.reserved / 2)? / 4096 * 4096)
            .map_err(err)?;
    }
    let (base, checksum, restore_s) = match ctx {
        None => {
            let space = HostSpace::reserve(
                to_usize(img.base)?,
                to_usize(img.reserved)?,
                to_usize(img.region)?,
            )
            .map_err(err)?;
            let mut alloc = Allocator::new(space);
            image::restore(&mut alloc, &img).map_err(err)?;
            let restore_s = t0.elapsed().as_secs_f64();
            let sum = workload::traverse(&alloc.space, img.root, img.nodes).map_err(err)?;
            (alloc.space.base(), sum, restore_s)
        }
        Some(ctx) => {
            let space =
                CudaSpace::reserve(ctx, Some(img.base), img.reserved, img.region).map_err(err)?;
            let mut alloc = Allocator::new(space);
            image::restore(&mut alloc, &img).map_err(err)?;
            alloc.space.synchronize().map_err(err)?;
            let restore_s = t0.elapsed().as_secs_f64();
            let kernels = Kernels::compile(&alloc.space).map_err(err)?;
            let sum = kernels
                .checksum(&alloc.space, img.root, img.nodes)
                .map_err(err)?;
            (alloc.space.base(), sum, restore_s)
        }
    };
    if checksum != img.checksum {
        return Err(Failure::Input(format!(
            "{name}: traversal checksum {checksum:#018x} differs from the image's {:#018x}",
            img.checksum
        )));
    }
    crate::files::write_stdout(&format!(
        "base={base:#x} root={:#x} checksum={checksum:#018x} nodes={} restore_s={restore_s}\n",
        img.root, img.nodes
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generic cycle the CUDA demo runs (synchronize, free-memory probe, memory table), on a
    /// heap space whose "owner" reports free bytes = 1 GiB − committed bytes.
    #[test]
    fn the_device_cycle_reports_the_memory_each_release_returns() {
        let region = 64u64 << 10;
        let base = 0x2F00_0000_0000;
        let mut alloc = Allocator::new(MemSpace::new(base, 64 * region, region).unwrap());
        let built = workload::build(&mut alloc, 2048, 4 * region, 8 * region, 3).unwrap();
        let (pool, active) = (
            alloc.committed_regions().len() as u64 * region,
            alloc.active_regions().len() as u64 * region,
        );
        let dir = std::env::temp_dir().join(format!("bubblelab-cycle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let probe = Probe {
            checksum: &|s: &MemSpace, b: &Built| workload::traverse(s, b.root, b.nodes),
            free_bytes: &|s: &MemSpace| {
                let committed = (0..s.regions()).filter(|&i| s.is_committed(i)).count() as u64;
                Some((1 << 30) - committed * s.region_bytes())
            },
        };
        let measured = measure_modes(&mut alloc, &built, 4096, &dir, &probe).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let returned: Vec<u64> = measured
            .iter()
            .map(|m| m.free_before_after.map(|(b, a)| a - b).unwrap())
            .collect();
        // The pool images bring the whole pool back; only after an active restore is less held.
        assert_eq!(returned, [pool, pool, pool, active]);
        assert!(active < pool);
        let report = demo_report(&DemoRun {
            title: "t".into(),
            lane: "device 0".into(),
            base,
            sizes: DemoSizes {
                reserved_bytes: 64 * region,
                region_bytes: region,
                chunk_bytes: 4096,
            },
            built,
            pool_regions: pool / region,
            active_regions: active / region,
            measured,
            child: ChildAnswer {
                base,
                root: built.root,
                checksum: built.checksum,
                restore_s: 0.0,
            },
            findings: Vec::new(),
        });
        let memory = report.tables.iter().find(|t| t.key == "memory").unwrap();
        assert_eq!(memory.rows.len(), 4);
        assert!(report
            .metrics
            .iter()
            .any(|m| m.key == "active_dedup.returned_bytes" && m.value == active as f64));
    }
}
