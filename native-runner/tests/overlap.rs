//! `bubblelab overlap` and `bubblelab run` on overlap scenarios, as a user runs them: the
//! comparison table, the Chrome trace with one timeline per strategy, sweeps, graph import and
//! one-line errors.

mod common;

use common::*;

#[test]
fn a_preset_prints_the_comparison_table() {
    let text = ok(&["overlap", "--preset", "overlap-gpt3-curie-tp2-sp4"]);
    for label in [
        "serial",
        "eager",
        "AsyncTP-style",
        "Helix",
        "exposed comm (ms)",
    ] {
        assert!(text.contains(label), "{label} missing from:\n{text}");
    }
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "overlap",
        "--preset",
        "overlap-gpt3-curie-tp2-sp4",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&json, "helix.exposed_cut_vs_serial") > 0.6);
}

#[test]
fn run_reads_an_overlap_scenario_file_like_the_preset() {
    let preset = ok(&["presets", "overlap-qwen3-moe-mixed"]);
    let path = scratch("overlap-qwen.json");
    std::fs::write(&path, preset).unwrap();
    let a = ok(&["run", &path.display().to_string(), "--format", "json"]);
    let b = ok(&[
        "overlap",
        "--preset",
        "overlap-qwen3-moe-mixed",
        "--format",
        "json",
    ]);
    assert_eq!(a, b);
}

#[test]
fn the_trace_holds_one_process_per_strategy() {
    let path = scratch("overlap-trace.json");
    ok(&["overlap", "--trace", &path.display().to_string()]);
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(names, ["serial", "eager", "AsyncTP-style", "Helix"]);
}

#[test]
fn sweeps_print_one_row_per_point() {
    let text = ok(&[
        "overlap",
        "--sweep",
        "K=1,2",
        "--sweep",
        "budget=none,8",
        "--format",
        "csv",
    ]);
    let rows = text
        .lines()
        .filter(|l| l.starts_with("1,") || l.starts_with("2,"))
        .count();
    assert_eq!(rows, 4, "{text}");
}

#[test]
fn an_exported_graph_is_imported() {
    let path = scratch("overlap-graph.json");
    // A graph file written by hand in the documented schema: x → AllReduce → y.
    let graph = r#"{"format":"bubblelab-graph","version":1,
      "groups":[{"name":"tp","ranks":2,"ranks_per_node":2}],
      "tensors":[{"name":"x","bytes":1048576,"producer":null,"persistent":false},
                 {"name":"y","bytes":1048576,"producer":1,"persistent":false},
                 {"name":"z","bytes":1048576,"producer":2,"persistent":false}],
      "nodes":[{"name":"ar","kind":{"CollectiveStart":{"kind":"all-reduce","group":0,"bytes":1048576}},"inputs":[0],"outputs":[]},
               {"name":"ar.wait","kind":{"Wait":{"start":0}},"inputs":[],"outputs":[1]},
               {"name":"mm","kind":{"Compute":{"kind":"gemm","flops":1e12,"bytes":1e6}},"inputs":[1],"outputs":[2]}],
      "edges":[[0,1,"Control"],[1,2,"Data"]],
      "order":[0,1,2]}"#;
    std::fs::write(&path, graph).unwrap();
    let text = ok(&["overlap", &path.display().to_string()]);
    assert!(text.contains("imported graph (3 nodes)"), "{text}");
}

#[test]
fn bad_input_is_one_line_with_exit_2() {
    assert_bad_input(
        &bubblelab(&["overlap", "--sweep", "K=3"]),
        "overlap.passes[0].k: must divide",
    );
    assert_bad_input(
        &bubblelab(&["overlap", "--sweep", "Q=1"]),
        "unknown parameter `Q`",
    );
    assert_bad_input(
        &bubblelab(&["overlap", "--preset", "pipeline-all"]),
        "needs an overlap scenario",
    );
    let path = scratch("overlap-bad-graph.json");
    std::fs::write(&path, r#"{"format":"bubblelab-graph","version":2}"#).unwrap();
    assert_bad_input(
        &bubblelab(&["overlap", &path.display().to_string()]),
        "version: this build reads graph version 1",
    );
}
