//! `bubblelab sweep`: every point of a sweep file on this machine's cores, written as one tidy
//! table (`bubblelab_core::sweep::spec`), in point order; `--resume` keeps the points a table
//! already holds. `--ray ADDRESS` hands the same file to the Python package's Ray backend.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use bubblelab_core::sweep::spec::Spec;
use bubblelab_core::ScenarioError;
use clap::Args;

use crate::error::Failure;
use crate::files;
use crate::run::{scenario_failure, MAX_INPUT_FILE_BYTES};

/// Arguments of `bubblelab sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The sweep file: JSON with `base`, `set`, `inputs` and `axes` (docs/SCALE.md). Input
    /// files are found relative to its folder.
    #[arg(value_name = "SWEEP.json")]
    spec: PathBuf,
    /// Write the table here (CSV) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Worker threads; every core by default.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Keep the points the output already holds and run only the others.
    #[arg(long, requires = "output")]
    resume: bool,
    /// Run the points as tasks on the Ray cluster at ADDRESS instead, through the Python
    /// package (`python3 -m bubblelab sweep`; $BUBBLELAB_PYTHON names another interpreter).
    #[arg(long, value_name = "ADDRESS")]
    ray: Option<String>,
}

/// `bubblelab sweep`.
///
/// # Errors
/// [`Failure::Input`] for a bad sweep file (naming its path) or an output that holds another
/// sweep; [`Failure::Other`] when the output cannot be written. A point that fails is a row
/// with its error, not a failure.
pub fn sweep(args: &SweepArgs) -> Result<(), Failure> {
    if let Some(address) = &args.ray {
        return on_ray(args, address);
    }
    let name = files::label(&args.spec);
    let text = files::read_text(&args.spec, files::MAX_INPUT_BYTES)?;
    let spec = Spec::from_json(&text).map_err(|e| scenario_failure(&name, &e))?;
    let folder = args
        .spec
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf);
    let header = spec.header();
    let mut done = match (&args.output, args.resume) {
        (Some(path), true) if path.exists() => resumed(&spec, path)?,
        _ => BTreeMap::new(),
    };
    let todo: Vec<usize> = (0..spec.len()).filter(|i| !done.contains_key(i)).collect();
    let mut sink = match &args.output {
        Some(path) => Some(Sink::open(path, &header, &done)?),
        None => None,
    };
    let bar = crate::progress::bar("sweep points");
    crate::progress::update(&bar, spec.len() - todo.len(), spec.len());
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, String)>();
    std::thread::scope(|scope| -> Result<(), Failure> {
        for _ in 0..jobs.min(todo.len()) {
            let tx = tx.clone();
            let (spec, todo, next, folder) = (&spec, &todo, &next, &folder);
            scope.spawn(move || {
                while let Some(&index) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let outcome = spec.run_point(index, &mut |file| read(folder, file));
                    if tx.send((index, spec.rows(index, &outcome))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        for (index, rows) in rx {
            if let Some(sink) = sink.as_mut() {
                sink.append(&rows)?;
            }
            done.insert(index, rows);
            bar.inc(1);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    let mut table = header;
    table.extend(done.into_values());
    match &args.output {
        Some(path) => write_atomically(path, &table),
        None => files::write_stdout(&table),
    }
}

/// The text of input `file`, relative to the sweep file's folder; an error names the file as
/// the sweep file writes it.
fn read(folder: &Path, file: &str) -> Result<String, String> {
    let path = folder.join(file);
    files::read_text(&path, MAX_INPUT_FILE_BYTES)
        .map_err(|e| e.to_string().replacen(&files::label(&path), file, 1))
}

/// The rows the table at `path` already holds, by point ([`Spec::rows_in`]).
fn resumed(spec: &Spec, path: &Path) -> Result<BTreeMap<usize, String>, Failure> {
    let text = files::read_text(path, usize::MAX >> 1)?;
    spec.rows_in(&text).map_err(|e| {
        let why = match e {
            ScenarioError::Field { message, .. } => message,
            other => other.to_string(),
        };
        Failure::Input(format!("--resume: {}: {why}", path.display()))
    })
}

/// The output file while the sweep runs: the header and resumed rows, then each point's rows
/// as it finishes (so `--resume` can pick up after a stop).
struct Sink {
    file: std::fs::File,
    path: PathBuf,
}

impl Sink {
    fn open(path: &Path, header: &str, done: &BTreeMap<usize, String>) -> Result<Sink, Failure> {
        let mut text = header.to_string();
        text.extend(done.values().cloned());
        write_atomically(path, &text)?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| cannot_write(path, &e))?;
        Ok(Sink {
            file,
            path: path.to_path_buf(),
        })
    }

    fn append(&mut self, rows: &str) -> Result<(), Failure> {
        self.file
            .write_all(rows.as_bytes())
            .map_err(|e| cannot_write(&self.path, &e))
    }
}

/// Writes `text` to `path` through a temporary file beside it, so a reader never sees half.
fn write_atomically(path: &Path, text: &str) -> Result<(), Failure> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|e| cannot_write(&tmp, &e))?;
    std::fs::rename(&tmp, path).map_err(|e| cannot_write(path, &e))
}

fn cannot_write(path: &Path, e: &std::io::Error) -> Failure {
    Failure::Other(format!("cannot write {}: {e}", path.display()))
}

/// `--ray`: the Python package runs the same sweep file on the cluster.
fn on_ray(args: &SweepArgs, address: &str) -> Result<(), Failure> {
    let python = std::env::var_os("BUBBLELAB_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "bubblelab", "sweep"])
        .arg(&args.spec)
        .args(["--ray", address]);
    if let Some(out) = &args.output {
        cmd.arg("--output").arg(out);
    }
    if args.resume {
        cmd.arg("--resume");
    }
    let status = cmd.status().map_err(|e| {
        Failure::Other(format!(
            "--ray: cannot start {} (the Python package runs Ray sweeps: pip install ./python ray): {e}",
            python.to_string_lossy()
        ))
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::Other(format!(
            "--ray: the Python sweep failed ({status})"
        )))
    }
}
