//! `bubblelab kineto`: read PyTorch profiler (Kineto) traces, one per rank, and print Holistic
//! Trace Analysis 0.5.0's communication–computation overlap per rank (`get_comm_comp_overlap`,
//! each trace as its own HTA run) beside the lab's exact variant.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use bubblelab_core::kineto::{self, RankTrace};
use clap::Args;

use crate::error::Failure;
use crate::files;
use crate::ReportOutput;

/// Largest trace file accepted (plain JSON or gzip on disk), bytes. A gzip file may inflate
/// to at most [`kineto::MAX_INFLATED_BYTES`].
pub const MAX_TRACE_FILE_BYTES: usize = 1 << 30;

/// Arguments of `bubblelab kineto`.
#[derive(Debug, Args)]
pub struct KinetoArgs {
    /// Kineto trace files (`*.json` or `*.json.gz`, gzip is detected by content), one per rank;
    /// `-` reads one trace from stdin.
    #[arg(value_name = "TRACE", required = true)]
    traces: Vec<PathBuf>,
    /// HTA's `include_last_profiler_step=True`: keep the kernels launched during the last
    /// `ProfilerStep` (HTA's default, and ours, drops them).
    #[arg(long)]
    include_last_profiler_step: bool,
    /// How to print the Report, and where to write its timelines as a Chrome trace.
    #[command(flatten)]
    output: ReportOutput,
}

/// `bubblelab kineto`.
///
/// # Errors
/// [`Failure::Input`] naming the file and the byte offset / event of the first problem (exit
/// code 2); [`Failure::Other`] when the output cannot be written.
pub fn kineto(args: &KinetoArgs) -> Result<(), Failure> {
    if args.traces.iter().filter(|p| files::is_stdin(p)).count() > 1 {
        return Err(Failure::Input(
            "`-` (stdin) can be given only once".to_string(),
        ));
    }
    let mut traces: Vec<(String, RankTrace)> = Vec::with_capacity(args.traces.len());
    for path in &args.traces {
        let name = files::label(path);
        // One file in memory at a time: its bytes are dropped once its GPU events are kept.
        let bytes = read_bytes(path, MAX_TRACE_FILE_BYTES)?;
        let trace =
            kineto::parse_trace(&bytes).map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        traces.push((name, trace));
    }
    let report = kineto::report_with(
        &traces,
        kineto::HtaOptions {
            include_last_profiler_step: args.include_last_profiler_step,
        },
    );
    crate::run::print_report(&report, &args.output)
}

/// Reads the bytes of `path` (or stdin for `-`), refusing more than `max_bytes`.
fn read_bytes(path: &Path, max_bytes: usize) -> Result<Vec<u8>, Failure> {
    let name = files::label(path);
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut bytes = Vec::new();
    if files::is_stdin(path) {
        io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| files::io_input(&name, "cannot read", &e))?;
    } else {
        let file = File::open(path).map_err(|e| files::io_input(&name, "cannot open", &e))?;
        let meta = file
            .metadata()
            .map_err(|e| files::io_input(&name, "cannot read", &e))?;
        if meta.is_dir() {
            return Err(Failure::Input(format!("{name}: is a folder, not a file")));
        }
        if meta.len() > max_bytes as u64 {
            return Err(too_large(&name, max_bytes));
        }
        bytes.reserve_exact(usize::try_from(meta.len()).unwrap_or(0));
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| files::io_input(&name, "cannot read", &e))?;
    }
    if bytes.len() > max_bytes {
        return Err(too_large(&name, max_bytes));
    }
    Ok(bytes)
}

fn too_large(name: &str, max_bytes: usize) -> Failure {
    Failure::Input(format!(
        "{name}: larger than the {} limit for a trace file",
        files::size_text(max_bytes)
    ))
}
