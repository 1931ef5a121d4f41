//! Golden scenarios: `tests/scenarios/<name>.json` must produce exactly
//! `tests/golden/<name>.report.json` (pretty JSON plus a newline), and every lab of the
//! registry has one. The wasm test in `core/tests/wasm_identity.rs` compares the same files byte
//! for byte in Node (and `web/tests/app.rs` one of them inside Chromium), which proves that
//! native and wasm Reports are identical. Set `UPDATE_GOLDEN=1` to accept new outputs.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::PathBuf;

use bubblelab_core::scenario::LABS;
use bubblelab_core::Scenario;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The exact bytes a golden file holds for a report.
fn golden_text(report: &bubblelab_core::Report) -> String {
    format!("{}\n", report.to_json_pretty())
}

#[test]
fn golden_scenarios_match_their_reports() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut names: Vec<PathBuf> = fs::read_dir(repo().join("tests/scenarios"))
        .expect("tests/scenarios exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 3,
        "expected golden scenarios, found {names:?}"
    );
    let mut mismatches = Vec::new();
    let mut labs = Vec::new();
    for path in names {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let scenario = Scenario::from_json(&fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        labs.push(scenario.lab());
        let report = bubblelab_core::run(&scenario).unwrap();
        let text = golden_text(&report);
        let golden = repo()
            .join("tests/golden")
            .join(format!("{stem}.report.json"));
        if update {
            fs::create_dir_all(golden.parent().unwrap()).unwrap();
            fs::write(&golden, &text).unwrap();
            continue;
        }
        match fs::read_to_string(&golden) {
            Ok(expected) if expected == text => {}
            Ok(_) => mismatches.push(format!("{stem}: report differs from {}", golden.display())),
            Err(_) => mismatches.push(format!("{stem}: no golden file {}", golden.display())),
        }
    }
    for lab in LABS {
        if !labs.contains(&lab) {
            mismatches.push(format!(
                "lab {lab} has no golden scenario in tests/scenarios/"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{mismatches:#?}\nreview the change, then run UPDATE_GOLDEN=1 cargo test -p bubblelab-core --test golden"
    );
}

#[test]
fn runs_are_deterministic_within_a_process() {
    let scenario = bubblelab_core::presets::find("pipeline-slow-stage")
        .unwrap()
        .scenario()
        .unwrap();
    let a = bubblelab_core::run(&scenario).unwrap().to_json();
    let b = bubblelab_core::run(&scenario).unwrap().to_json();
    assert_eq!(a, b);
}
