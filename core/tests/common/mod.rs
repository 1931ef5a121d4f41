//! Shared by the real-data tests.

use std::path::PathBuf;

/// The folder of real data sets: `$BUBBLELAB_DATA`, else `shared/data` beside the repository.
/// When it is missing the test fails under `CI=true` and is skipped (with a line saying so)
/// otherwise.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("BUBBLELAB_DATA").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")),
        PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "no data folder at {} (set BUBBLELAB_DATA)",
        dir.display()
    );
    eprintln!("skipped: no data folder");
    None
}
