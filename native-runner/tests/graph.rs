//! `bubblelab graph`: a real model's graph simulated from the command line.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use std::process::Command;

fn bubblelab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bubblelab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn simulates_a_layout_and_reports_exposed_communication() {
    let out = bubblelab(&[
        "graph",
        "--model",
        "llama3-8b",
        "--tp",
        "4",
        "--sp",
        "--dp",
        "2",
        "--layers",
        "2",
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let value = |key: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key},")))
            .and_then(|rest| rest.split(',').nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in\n{text}"))
    };
    assert!(value("makespan_ms") > 0.0);
    assert!(value("exposed_comm_ms") <= value("comm_ms"));
    assert!(value("nodes") > 20.0);
}

#[test]
fn bad_layouts_name_the_flag() {
    let out = bubblelab(&["graph", "--model", "gpt3-6.7b", "--tp", "3"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("error: --tp: must divide the 32 attention heads"),
        "{err}"
    );
    let out = bubblelab(&["graph", "--model", "gpt5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("--model: unknown model `gpt5`"));
}

#[test]
fn a_whole_step_is_longer_than_its_layers() {
    // The embedding, head, loss and optimizer add time (and nodes) to the same layers.
    let run = |extra: &[&str]| {
        let mut args = vec![
            "graph",
            "--model",
            "gpt3-6.7b",
            "--tp",
            "2",
            "--sp",
            "--dp",
            "2",
            "--layers",
            "2",
            "--format",
            "csv",
        ];
        args.extend_from_slice(extra);
        let out = bubblelab(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let value = |key: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key},")))
                .and_then(|rest| rest.split(',').nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {key} in\n{text}"))
        };
        (value("makespan_ms"), value("nodes"))
    };
    let (layers_ms, layers_nodes) = run(&[]);
    let (whole_ms, whole_nodes) = run(&["--whole-step"]);
    assert!(whole_ms > layers_ms, "{whole_ms} vs {layers_ms} ms");
    assert!(whole_nodes > layers_nodes);
}
