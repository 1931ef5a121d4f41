//! Project tasks, run from anywhere in the workspace:
//!
//! - `cargo xtask play`  installs what is missing, builds the playground and serves it on
//!   <http://127.0.0.1:8080>.
//! - `cargo xtask test`  installs what is missing and runs every test, in order, stopping at the
//!   first failure (this is what `.ci/run` runs).
//! - `cargo xtask e2e`   only the end-to-end step: Trunk build, serve `dist/`, drive Chromium.
//!
//! Only std and anyhow: everything else is a child process whose output streams to the terminal.

mod python;
mod serve;
mod tools;

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  play [--port N]   install missing tools, build the playground, serve it on 127.0.0.1:8080
  test              install missing tools (Chromium included) and run every test
  e2e               only the end-to-end test (Trunk build + serve dist/ + Playwright)
";

const E2E_STEP: &str = "end-to-end (Trunk build, serve dist/, Playwright + Chromium)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = (|| -> Result<()> {
        let root = repo_root();
        std::env::set_current_dir(&root)
            .with_context(|| format!("cannot enter the repository root {}", root.display()))?;
        tools::prepend_to_path(&root)?;
        match args.first().map(String::as_str) {
            Some("play") => play(&root, &args[1..]),
            Some("test") => test(&root),
            Some("e2e") => e2e_only(&root),
            None | Some("help" | "-h" | "--help") => {
                print!("{USAGE}");
                Ok(())
            }
            Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
        }
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: the folder above this crate.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one folder below the workspace root")
        .to_path_buf()
}

fn play(root: &Path, args: &[String]) -> Result<()> {
    let port = match args {
        [] => 8080,
        [flag, n] if flag == "--port" => n.parse().with_context(|| format!("bad port `{n}`"))?,
        _ => bail!("usage: cargo xtask play [--port N]"),
    };
    tools::ensure_tools(root, tools::Browser::NotNeeded)?;
    build_playground()?;
    let server = serve::Server::start(&root.join("dist"), port).with_context(|| {
        format!("cannot serve on 127.0.0.1:{port} (is something else using it? try --port)")
    })?;
    println!();
    println!("bubblelab playground: {}", server.url());
    println!("(Ctrl-C to stop)");
    server.wait();
    Ok(())
}

fn test(root: &Path) -> Result<()> {
    tools::ensure_tools(root, tools::Browser::Needed)?;
    let browser_env = [
        ("CHROMEDRIVER", tools::CHROMEDRIVER),
        ("WASM_BINDGEN_TEST_TIMEOUT", "120"),
    ];
    let mut steps = Steps::default();
    let result = (|| -> Result<()> {
        steps.run("cargo fmt --check", || cargo("fmt --all -- --check", &[]))?;
        steps.run("native tests (unit, property, golden, CLI)", || {
            cargo("test --workspace --locked", &[])
        })?;
        steps.run("Python package (pip install ./python, pytest)", || {
            python::test(root)
        })?;
        steps.run("clippy, native and wasm32 (warnings are errors)", || {
            cargo("clippy --workspace --all-targets --locked -- -D warnings", &[])?;
            // Benches are native-only (criterion): --lib --bins --tests, not --all-targets.
            cargo(
                "clippy --locked --target wasm32-unknown-unknown -p bubblelab-core -p bubblelab-web \
                 --lib --bins --tests -- -D warnings",
                &[],
            )?;
            // The page's inline runs, which only the wasm tests turn on.
            cargo(
                "clippy --locked --target wasm32-unknown-unknown -p bubblelab-web --lib \
                 --features inline-runs -- -D warnings",
                &[],
            )
        })?;
        steps.run(
            "claims that need an optimised build (μTransfer at CLI scale, CONCUR's fitted presets, ASTRAEA, Chronus, FGD and Pollux against their artifacts, Gavel's preset, every tour's answers)",
            || {
                cargo(
                    "test --locked --profile bench -p bubblelab-core --test tuning_claim --test agentic_claims \
                     --test astraea_artifact --test chronus_artifact --test fairness_real --test sharing_real --test elastic_artifact \
                     --test palette --test fairness_gavel --test tours",
                    &[],
                )
            },
        )?;
        steps.run("wasm tests of bubblelab-core (Node)", || {
            cargo(
                "test --locked --target wasm32-unknown-unknown -p bubblelab-core",
                &[],
            )
        })?;
        steps.run("wasm tests of bubblelab-web (headless Chromium)", || {
            cargo(
                // No worker script is served there: the pages run labs inline.
                "test --locked --target wasm32-unknown-unknown -p bubblelab-web --features inline-runs",
                &browser_env,
            )
        })?;
        steps.run(E2E_STEP, || e2e(root))?;
        Ok(())
    })();
    steps.summary();
    result
}

fn e2e_only(root: &Path) -> Result<()> {
    tools::ensure_tools(root, tools::Browser::Needed)?;
    let mut steps = Steps::default();
    let result = steps.run(E2E_STEP, || e2e(root));
    steps.summary();
    result
}

/// `cargo fetch` first: Trunk.toml says `offline = true`, which makes Trunk's cargo offline too.
fn build_playground() -> Result<()> {
    println!("== building the playground (trunk build --release)");
    cargo("fetch --locked", &[])?;
    run(Command::new("trunk").args(["build", "--release"]))
}

fn e2e(root: &Path) -> Result<()> {
    build_playground()?;
    print_download_sizes(&root.join("dist"))?;
    let server = serve::Server::start(&root.join("dist"), 0)?;
    println!("== serving dist/ on {}", server.url());
    // The same dist/ under a sub-path, as a static host's project folder serves it.
    let sub = serve::Server::start_under(&root.join("dist"), 0, "/a/b/")?;
    println!("== serving dist/ under a sub-path on {}/", sub.url());
    // Screenshots (a PNG of every page under pages/) and the exported trace: under target/, out
    // of git.
    let out_dir = root.join("target/e2e");
    std::fs::create_dir_all(&out_dir)?;
    // The real traces the page is timed on: `$BUBBLELAB_DATA`, else `shared/data` beside the
    // workspace (as the Rust tests find them).
    let data = std::env::var_os("BUBBLELAB_DATA")
        .map_or_else(|| root.join("../shared/data"), std::path::PathBuf::from);
    run(Command::new("node")
        .arg(root.join("tests/e2e/e2e.mjs"))
        .env("BASE_URL", server.url())
        .env("SUBPATH_URL", sub.url())
        .env("OUT_DIR", &out_dir)
        .env("BUBBLELAB_DATA", data))
    // `server` stops serving when the process exits.
}

/// What the browser downloads of the page and its worker: every `.wasm` of `dist/`, raw and
/// deflated at level 9 (a gzip file is 18 bytes more), printed, not asserted.
fn print_download_sizes(dist: &Path) -> Result<()> {
    let sizes = wasm_sizes(dist)?;
    for (name, raw, compressed) in &sizes {
        println!("== download: {name}: {raw} bytes, {compressed} deflated");
    }
    let total: usize = sizes.iter().map(|(_, _, c)| c).sum();
    println!("== download: page and worker wasm together {total} bytes deflated (target: at most 1,500,000)");
    Ok(())
}

/// (file name, bytes, bytes deflated at level 9) of every `.wasm` file in `dir`, by name.
fn wasm_sizes(dir: &Path) -> Result<Vec<(String, usize, usize)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wasm") {
            let bytes = std::fs::read(&path)?;
            let compressed = miniz_oxide::deflate::compress_to_vec(&bytes, 9).len();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push((name, bytes.len(), compressed));
        }
    }
    out.sort();
    Ok(out)
}

/// Runs `cargo` (the one that started us) with space-separated `args` and extra environment.
fn cargo(args: &str, envs: &[(&str, &str)]) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(Command::new(cargo)
        .args(args.split_whitespace())
        .envs(envs.iter().copied()))
}

/// Runs a command with inherited stdio and fails unless it exits with 0.
pub(crate) fn run(cmd: &mut Command) -> Result<()> {
    let shown = show(cmd);
    println!("$ {shown}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

fn show(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let envs: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())))
        .collect();
    if envs.is_empty() {
        parts.join(" ")
    } else {
        format!("{} {}", envs.join(" "), parts.join(" "))
    }
}

/// Numbered steps with a final `xtask: N passed, M failed` line.
#[derive(Default)]
struct Steps {
    passed: usize,
    failed: usize,
    failed_name: Option<String>,
}

impl Steps {
    fn run(&mut self, name: &str, f: impl FnOnce() -> Result<()>) -> Result<()> {
        let n = self.passed + self.failed + 1;
        println!("\n== step {n}: {name}");
        let started = Instant::now();
        let result = f();
        let secs = started.elapsed().as_secs();
        match result {
            Ok(()) => {
                self.passed += 1;
                println!("== step {n} passed: {name} ({secs} s)");
                Ok(())
            }
            Err(err) => {
                self.failed += 1;
                self.failed_name = Some(name.to_string());
                println!("== step {n} FAILED: {name} ({secs} s)");
                Err(err.context(format!("step {n} failed: {name}")))
            }
        }
    }

    fn summary(&self) {
        println!();
        if let Some(name) = &self.failed_name {
            println!("xtask: stopped at the first failure: {name}");
        }
        println!("xtask: {} passed, {} failed", self.passed, self.failed);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn wasm_sizes_counts_every_wasm_file_raw_and_deflated() {
        let dir = std::env::temp_dir().join(format!("xtask-sizes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("b.wasm"), vec![0u8; 10_000]).unwrap();
        std::fs::write(dir.join("a.wasm"), b"\0asm").unwrap();
        std::fs::write(dir.join("index.html"), b"<html>").unwrap();
        let sizes = super::wasm_sizes(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(sizes.len(), 2);
        assert_eq!((sizes[0].0.as_str(), sizes[0].1), ("a.wasm", 4));
        assert_eq!((sizes[1].0.as_str(), sizes[1].1), ("b.wasm", 10_000));
        assert!(
            sizes[1].2 < 100,
            "ten thousand zeros deflate to little: {}",
            sizes[1].2
        );
    }
}
