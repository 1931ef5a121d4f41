//! The Python package's step: a virtual environment under `target/`, the package installed from
//! `python/` as a user installs it (`pip install ./python`: maturin builds the extension), and
//! its pytest suite, which compares its Reports with the CLI's. Everything comes from PyPI.

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run;

/// The environment's folder, made on first use.
fn venv(root: &Path) -> Result<PathBuf> {
    let venv = root.join("target/python-venv");
    if !venv.join("bin/python").exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    Ok(venv)
}

/// Installs the test requirements and the package, runs pytest over `python/tests`, then the
/// example under `examples/`, whose figure goes beside the e2e step's screenshots.
pub fn test(root: &Path) -> Result<()> {
    let python = venv(root)?.join("bin/python");
    let pip = |args: &[&str]| {
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(args))
    };
    pip(&["-r", "python/requirements-test.txt"])?;
    pip(&["./python"])?;
    run(Command::new(&python)
        .args(["-m", "pytest", "-q", "python/tests"])
        // The native tests built it; the suite compares its Reports with the CLI's.
        .env("BUBBLELAB_CLI", root.join("target/debug/bubblelab")))?;
    run(Command::new(&python)
        .arg("examples/fairness_lease_sweep.py")
        .arg(root.join("target/e2e/examples/fairness-lease.png")))
}
