//! Helpers shared by the CLI tests: run the binary as a user would, scratch files, the data
//! folder. Each test binary uses a subset, hence the dead-code allowance.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What one run of the binary produced.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn bubblelab(args: &[&str]) -> Run {
    bubblelab_with_stdin(args, None)
}

pub fn bubblelab_with_stdin(args: &[&str], stdin: Option<&str>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bubblelab"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bubblelab binary starts");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(text.as_bytes())
            .expect("stdin accepts the text");
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().expect("the binary finishes");
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs a command that must succeed and returns its stdout.
pub fn ok(args: &[&str]) -> String {
    let run = bubblelab(args);
    assert_eq!(run.code, Some(0), "{args:?} failed: {}", run.stderr);
    assert!(
        run.stderr.is_empty(),
        "{args:?} wrote to stderr: {}",
        run.stderr
    );
    run.stdout
}

/// Checks that a run failed as bad input: exit code 2, one `error:` line naming `expected`.
pub fn assert_bad_input(run: &Run, expected: &str) {
    assert_eq!(run.code, Some(2), "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(expected),
        "expected {expected:?} in {:?}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

/// A fresh file path under Cargo's scratch folder for integration tests.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bubblelab-cli-tests");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir.join(name)
}

/// The value of metric `key` in a Report's JSON.
pub fn metric(report: &serde_json::Value, key: &str) -> f64 {
    report["metrics"]
        .as_array()
        .expect("metrics array")
        .iter()
        .find(|m| m["key"] == key)
        .and_then(|m| m["value"].as_f64())
        .unwrap_or_else(|| panic!("metric {key} missing"))
}

/// The folder with the real data sets: `$BUBBLELAB_DATA`, else `shared/data` beside the
/// workspace. `None` (after a note) when it is missing outside CI; a failure inside CI.
pub fn data_folder() -> Option<PathBuf> {
    let dir = std::env::var_os("BUBBLELAB_DATA").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")),
        PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "data folder {} is missing (set BUBBLELAB_DATA)",
        dir.display()
    );
    println!("skipped: no data folder");
    None
}
