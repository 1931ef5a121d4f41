//! Reading input with a size cap and writing output without panicking.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use crate::error::Failure;

/// Largest scenario file (or stdin) accepted, bytes.
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// `path` as shown in messages; `-` is shown as `<stdin>`.
#[must_use]
pub fn label(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// True when `path` is `-`, which means stdin.
#[must_use]
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads UTF-8 text from `path` (or stdin for `-`), refusing more than `max_bytes`.
///
/// # Errors
/// [`Failure::Input`] naming the file: missing, a folder, unreadable, too large, not UTF-8.
pub fn read_text(path: &Path, max_bytes: usize) -> Result<String, Failure> {
    let name = label(path);
    let bytes = if is_stdin(path) {
        read_capped(io::stdin().lock(), &name, max_bytes)?
    } else {
        let file = File::open(path).map_err(|e| io_input(&name, "cannot open", &e))?;
        let is_dir = file.metadata().is_ok_and(|m| m.is_dir());
        if is_dir {
            return Err(Failure::Input(format!("{name}: is a folder, not a file")));
        }
        read_capped(file, &name, max_bytes)?
    };
    String::from_utf8(bytes).map_err(|e| {
        Failure::Input(format!(
            "{name}: not UTF-8 text (bad byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn read_capped(reader: impl Read, name: &str, max_bytes: usize) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| io_input(name, "cannot read", &e))?;
    if bytes.len() > max_bytes {
        return Err(Failure::Input(format!(
            "{name}: larger than the {} limit",
            size_text(max_bytes)
        )));
    }
    Ok(bytes)
}

/// `16 MiB` for whole mebibytes, else `N bytes`.
#[must_use]
pub fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// An input error about `name`, worded by error kind.
pub fn io_input(name: &str, action: &str, e: &io::Error) -> Failure {
    Failure::Input(format!("{name}: {action}: {}", describe(e)))
}

/// A short description of an I/O error without the `(os error N)` suffix where a plain one
/// exists.
#[must_use]
pub fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or folder".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::IsADirectory => "is a folder, not a file".to_string(),
        io::ErrorKind::NotADirectory => "not a folder".to_string(),
        _ => e.to_string(),
    }
}

/// Writes `text` to stdout; a closed pipe becomes [`Failure::BrokenPipe`] (a quiet stop).
///
/// # Errors
/// [`Failure::BrokenPipe`], or [`Failure::Other`] for any other write error.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                Failure::BrokenPipe
            } else {
                Failure::Other(format!("cannot write to stdout: {}", describe(&e)))
            }
        })
}

/// Writes `text` to the file at `path`, replacing it.
///
/// # Errors
/// [`Failure::Other`] naming the file.
pub fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| {
        Failure::Other(format!(
            "{}: cannot write: {}",
            path.display(),
            describe(&e)
        ))
    })
}

/// The wall clock as `2026-11-29 17:35 UTC` (for stamping measurements; simulations never
/// read it).
#[must_use]
pub fn utc_now_text() -> String {
    let rfc3339 = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // `2026-11-29T17:35:08Z` → date and minute.
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => rfc3339,
    }
}

/// This host's processor as `/proc/cpuinfo` names it, with its hardware threads
/// (`AMD EPYC 9654 96-Core Processor, 2 hardware threads`); the thread count alone elsewhere.
#[must_use]
pub fn host_cpu_text() -> String {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    match model {
        Some(m) => format!("{m}, {threads} hardware threads"),
        None => format!("a host with {threads} hardware threads"),
    }
}
