//! `bubblelab tuning` and `bubblelab run` on tuning scenarios, as a user runs them.

mod common;

use common::{assert_bad_input, bubblelab, ok, scratch};

#[test]
fn preset_runs_and_prints_the_tables() {
    let out = ok(&[
        "tuning", "--widths", "16,32", "--steps", "5", "--seeds", "2",
    ]);
    assert!(out.contains("μP shrinker"), "{out}");
    assert!(out.contains("Best learning rate per width"), "{out}");
    assert!(out.contains("Trial fusion"), "{out}");
}

#[test]
fn scenario_file_runs_through_run() {
    let path = scratch("tuning.json");
    std::fs::write(
        &path,
        r#"{"version":1,"lab":"tuning","params":{"experiment":{"widths":[8,16],"steps":3,"learning_rates":[0.01,0.1]}}}"#,
    )
    .unwrap();
    let out = ok(&["run", path.to_str().unwrap(), "--format", "json"]);
    assert!(out.contains("\"lab\": \"tuning\""), "{out}");
}

#[test]
fn bad_input_is_named() {
    assert_bad_input(
        &bubblelab(&["tuning", "--widths", "64,32"]),
        "tuning.experiment.widths[1]: widths must ascend, got 32 after 64",
    );
    assert_bad_input(
        &bubblelab(&["tuning", "--seeds", "0"]),
        "tuning.experiment.seeds: must be between 1 and 64, got 0",
    );
    assert_bad_input(
        &bubblelab(&["tuning", "--preset", "agentic-qwen3-32b-h100"]),
        "needs a tuning scenario",
    );
}
