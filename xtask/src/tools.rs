//! Installs what the build and the tests need, each step skipped when the right version is there.

use crate::run;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

const WASM_TARGET: &str = "wasm32-unknown-unknown";
pub const TRUNK_VERSION: &str = "0.21.14";
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const E2E_DIR: &str = "tests/e2e";

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    Needed,
    NotNeeded,
}

/// Puts `tests/e2e/node_modules/.bin` (wasm-opt from npm `binaryen`; Debian's is too old for
/// rustc's output) and cargo's bin folder (what `cargo install` writes) first on PATH, for us and
/// every child (Trunk looks tools up on PATH).
pub fn prepend_to_path(root: &Path) -> Result<()> {
    let mut dirs = vec![
        root.join(E2E_DIR).join("node_modules/.bin"),
        cargo_home().join("bin"),
    ];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    let joined = std::env::join_paths(dirs).context("PATH has an entry that cannot be joined")?;
    std::env::set_var("PATH", joined);
    Ok(())
}

fn cargo_home() -> PathBuf {
    match std::env::var_os("CARGO_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"),
    }
}

pub fn ensure_tools(root: &Path, browser: Browser) -> Result<()> {
    if browser == Browser::Needed {
        check_host_for_browser_tests()?;
    }
    ensure_wasm_target()?;
    let wasm_bindgen = wasm_bindgen_version_in_lock(&root.join("Cargo.lock"))?;
    ensure_cargo_tool(
        "wasm-bindgen-cli",
        &wasm_bindgen,
        &["wasm-bindgen", "wasm-bindgen-test-runner"],
        "~3 min",
    )?;
    ensure_cargo_tool("trunk", TRUNK_VERSION, &["trunk"], "~8 min")?;
    let mut apt = Vec::new();
    if !on_path("node") || !on_path("npm") {
        apt.extend(["nodejs", "npm"]);
    }
    if browser == Browser::Needed
        && !(Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists())
    {
        apt.extend(["chromium", "chromium-driver"]);
    }
    apt_install(&apt)?;
    ensure_npm_deps(&root.join(E2E_DIR))?;
    Ok(())
}

/// The browser steps need Debian's Chromium and ChromeDriver; on other hosts we fail rather than
/// skip, so that a green run always means every test ran.
fn check_host_for_browser_tests() -> Result<()> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        bail!(
            "the browser tests need x86_64 Linux (Debian's chromium + chromium-driver); \
             this host is {}/{}. Run `cargo test --workspace` for the native tests only.",
            std::env::consts::OS,
            std::env::consts::ARCH
        );
    }
    let have_browser = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !have_browser && !on_path("apt-get") {
        bail!(
            "the browser tests need {CHROMIUM} and {CHROMEDRIVER}, and there is no apt-get to \
             install them (Debian packages `chromium` and `chromium-driver`)"
        );
    }
    Ok(())
}

fn ensure_wasm_target() -> Result<()> {
    let installed = output(Command::new("rustup").args(["target", "list", "--installed"]))
        .context("rustup is needed to add the wasm32 target (install Rust with rustup)")?;
    if installed.lines().any(|l| l.trim() == WASM_TARGET) {
        return Ok(());
    }
    println!("== adding the Rust target {WASM_TARGET} (first run only)");
    run(Command::new("rustup").args(["target", "add", WASM_TARGET]))
}

/// `cargo install --locked <krate> --version <version>` unless every one of `bins` answers
/// `--version` with exactly that version.
fn ensure_cargo_tool(krate: &str, version: &str, bins: &[&str], duration: &str) -> Result<()> {
    let up_to_date = bins.iter().all(|bin| {
        output(Command::new(bin).arg("--version"))
            .is_ok_and(|out| reported_version(&out) == Some(version))
    });
    if up_to_date {
        return Ok(());
    }
    println!("== installing {krate} {version} (first run only, {duration})");
    // --force: replace a binary of another version, even one cargo did not install.
    run(Command::new("cargo").args([
        "install",
        "--locked",
        "--force",
        krate,
        "--version",
        version,
    ]))
}

/// `trunk 0.21.14` -> `0.21.14`.
fn reported_version(output: &str) -> Option<&str> {
    output.split_whitespace().nth(1)
}

/// The version of the `wasm-bindgen` package in Cargo.lock: the CLI must match it exactly.
pub fn wasm_bindgen_version_in_lock(lock: &Path) -> Result<String> {
    let text =
        std::fs::read_to_string(lock).with_context(|| format!("cannot read {}", lock.display()))?;
    version_in_lock(&text, "wasm-bindgen")
        .with_context(|| format!("no `wasm-bindgen` package in {}", lock.display()))
}

fn version_in_lock(lock: &str, package: &str) -> Option<String> {
    let wanted_name = format!("name = \"{package}\"");
    lock.split("[[package]]").find_map(|block| {
        let mut lines = block.lines().map(str::trim);
        if !lines.clone().any(|l| l == wanted_name) {
            return None;
        }
        lines.find_map(|l| {
            Some(
                l.strip_prefix("version = \"")?
                    .strip_suffix('"')?
                    .to_string(),
            )
        })
    })
}

fn apt_install(packages: &[&str]) -> Result<()> {
    if packages.is_empty() {
        return Ok(());
    }
    if !on_path("apt-get") {
        bail!(
            "missing {}, and there is no apt-get to install them",
            packages.join(", ")
        );
    }
    println!(
        "== installing {} with apt-get (first run only, ~1 min)",
        packages.join(" ")
    );
    let sudo = !output(Command::new("id").arg("-u")).is_ok_and(|uid| uid.trim() == "0");
    let apt = |args: &[&str]| {
        let mut cmd = if sudo {
            Command::new("sudo")
        } else {
            Command::new("apt-get")
        };
        if sudo {
            cmd.arg("apt-get");
        }
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        run(&mut cmd)
    };
    apt(&["update"])?;
    let mut args = vec!["install", "-y"];
    args.extend(packages);
    apt(&args)
}

/// `npm ci` in tests/e2e unless node_modules was installed from the current package-lock.json.
fn ensure_npm_deps(dir: &Path) -> Result<()> {
    check_node_version();
    let installed = dir.join("node_modules/.package-lock.json");
    let lock = dir.join("package-lock.json");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&installed), modified(&lock)) {
        (Some(installed), Some(lock)) => installed >= lock,
        _ => false,
    };
    if fresh && dir.join("node_modules/.bin/wasm-opt").exists() {
        return Ok(());
    }
    println!(
        "== installing npm packages in {} (playwright-core, binaryen's wasm-opt)",
        dir.display()
    );
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir))
}

/// playwright-core 1.65 wants Node 20 or newer (Debian 12's nodejs is 18): say so early.
fn check_node_version() {
    let version = output(Command::new("node").arg("--version")).unwrap_or_default();
    let major: Option<u32> = version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok());
    if let Some(major) = major.filter(|&m| m < 20) {
        println!("== warning: Node {major} found; playwright-core 1.65 expects Node 20 or newer");
    }
}

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(bin).is_file()))
}

/// Stdout of a command that must succeed, without echoing it.
fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {}", cmd.get_program().display()))?;
    if !out.status.success() {
        bail!("{} failed ({})", cmd.get_program().display(), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_exact_package_not_a_prefix() {
        let lock = r#"
[[package]]
name = "wasm-bindgen-backend"
version = "0.2.999"

[[package]]
name = "wasm-bindgen"
version = "0.2.129"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;
        assert_eq!(
            version_in_lock(lock, "wasm-bindgen").as_deref(),
            Some("0.2.129")
        );
        assert_eq!(version_in_lock(lock, "trunk"), None);
    }

    #[test]
    fn the_workspace_lock_pins_wasm_bindgen() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let version = wasm_bindgen_version_in_lock(&root.join("Cargo.lock")).unwrap();
        assert!(version.starts_with("0.2."), "{version}");
    }

    #[test]
    fn trunk_toml_asks_for_the_locked_wasm_bindgen() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let version = wasm_bindgen_version_in_lock(&root.join("Cargo.lock")).unwrap();
        let trunk_toml = std::fs::read_to_string(root.join("Trunk.toml")).unwrap();
        let wanted = format!("wasm_bindgen = \"{version}\"");
        assert!(
            trunk_toml.lines().any(|l| l.trim() == wanted),
            "Trunk.toml must say `{wanted}` (the wasm-bindgen version in Cargo.lock)"
        );
    }

    #[test]
    fn reads_tool_versions() {
        assert_eq!(reported_version("trunk 0.21.14\n"), Some("0.21.14"));
        assert_eq!(reported_version("wasm-bindgen 0.2.129"), Some("0.2.129"));
        assert_eq!(reported_version(""), None);
    }
}
