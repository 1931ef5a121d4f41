//! `bubblelab agentic` and `bubblelab run` on agentic scenarios, as a user runs them.

mod common;

use common::{assert_bad_input, bubblelab, metric, ok, scratch};

#[test]
fn preset_runs_and_prints_the_comparison() {
    let out = ok(&["agentic", "--preset", "agentic-qwen3-32b-h100"]);
    assert!(out.contains("Controllers on the same agents"), "{out}");
    assert!(out.contains("CONCUR"));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["agentic", "--format", "json"])).unwrap();
    assert!(metric(&json, "concur.speedup_vs_unbounded") > 1.0);
}

#[test]
fn generic_run_path_and_chrome_trace() {
    let trace = scratch("agentic-trace.json");
    let _ = std::fs::remove_file(&trace);
    let csv = ok(&[
        "run",
        "--preset",
        "agentic-deepseek-v3-8xh200",
        "--format",
        "csv",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(csv.starts_with("key,label,value,unit\n"));
    assert!(csv.contains("concur.batch_completion_s"));
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(t["traceEvents"].as_array().unwrap().len() > 10);
    let file = scratch("agentic.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"agentic","params":{"synthetic":{"agents":6,"min_turns":2,"max_turns":3}}}"#,
    )
    .unwrap();
    let out = ok(&["run", file.to_str().unwrap()]);
    assert!(out.contains("6 agents"), "{out}");
}

#[test]
fn sweep_cap_and_controllers_flags() {
    let file = scratch("agentic-small.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"agentic","params":{"synthetic":{"agents":8,"min_turns":2,"max_turns":4}}}"#,
    )
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "agentic",
        "--scenario",
        file.to_str().unwrap(),
        "--controllers",
        "unbounded,cap-2,concur",
        "--sweep-cap",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&json, "cap-2.batch_completion_s") > 0.0);
    let cap = metric(&json, "best_cap.cap");
    assert!([1.0, 2.0, 4.0, 8.0].contains(&cap), "{cap}");
}

#[test]
fn paper_presets_engine_flag_and_every_controller_id() {
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "agentic",
        "--preset",
        "agentic-concur-qwen3-32b-tp2-fixed-levels",
        "--controllers",
        "unbounded,req-cap-32,concur,aimd-history,cap-32",
        "--format",
        "json",
    ]))
    .unwrap();
    for id in [
        "unbounded",
        "req-cap-32",
        "concur",
        "aimd-history",
        "cap-32",
    ] {
        assert!(
            metric(&json, &format!("{id}.batch_completion_s")) > 0.0,
            "{id}"
        );
    }
    assert!(metric(&json, "concur.speedup_vs_unbounded") > 2.0);
    assert!(metric(&json, "unbounded.prefill_attention_share") > 0.0);
    assert!(metric(&json, "concur.slo_goodput_tokens_per_s") > 0.0);
    // The same agents on the vLLM engine give another run.
    let file = scratch("agentic-engine.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"agentic","params":{"synthetic":{"agents":8,"min_turns":2,"max_turns":4},"engine":{"kv_capacity_tokens":20000}}}"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let sglang = ok(&[
        "agentic",
        "--scenario",
        f,
        "--engine",
        "sglang",
        "--format",
        "csv",
    ]);
    let vllm = ok(&[
        "agentic",
        "--scenario",
        f,
        "--engine",
        "vllm-v1",
        "--format",
        "csv",
    ]);
    assert_ne!(sglang, vllm);
    assert_bad_input(
        &bubblelab(&["agentic", "--controllers", "unbounded,req-cap-0"]),
        "--controllers: unknown controller `req-cap-0`",
    );
}

#[test]
fn trace_files_in_both_formats() {
    let moon = scratch("moon.jsonl");
    std::fs::write(
        &moon,
        "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 10, \"hash_ids\": [0, 1, 2]}\n{\"timestamp\": 3000, \"input_length\": 1700, \"output_length\": 20, \"hash_ids\": [0, 1, 2, 4]}\n{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 7]}\n",
    )
    .unwrap();
    let out = ok(&["agentic", moon.to_str().unwrap()]);
    assert!(out.contains("3 requests, 2 sessions"), "{out}");
    let az = scratch("az.csv");
    std::fs::write(
        &az,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n",
    )
    .unwrap();
    let out = ok(&[
        "agentic",
        az.to_str().unwrap(),
        "--input-format",
        "azure",
        "--arrivals",
        "trace",
    ]);
    assert!(out.contains("2 requests"), "{out}");
    // The earlier spellings give the same Report, with a warning each.
    let old = bubblelab(&[
        "agentic",
        "--trace-file",
        az.to_str().unwrap(),
        "--trace-format",
        "azure",
        "--arrivals",
        "trace",
    ]);
    assert_eq!(old.code, Some(0), "{}", old.stderr);
    assert_eq!(old.stdout, out);
    for flag in ["--trace-file", "--trace-format"] {
        assert!(
            old.stderr.contains(&format!("`{flag}` is deprecated")),
            "{}",
            old.stderr
        );
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let bad = scratch("bad.csv");
    std::fs::write(
        &bad,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,12,x\n",
    )
    .unwrap();
    assert_bad_input(
        &bubblelab(&["agentic", bad.to_str().unwrap()]),
        "line 2, `GeneratedTokens`",
    );
    assert_bad_input(
        &bubblelab(&["agentic", "--controllers", "cap-0"]),
        "--controllers: unknown controller `cap-0`",
    );
    assert_bad_input(
        &bubblelab(&["agentic", "--preset", "pipeline-all"]),
        "needs an agentic scenario",
    );
    let garbage = scratch("garbage.txt");
    std::fs::write(&garbage, "hello").unwrap();
    assert_bad_input(
        &bubblelab(&["agentic", garbage.to_str().unwrap()]),
        "garbage.txt: cannot tell the trace format from its first line (it reads",
    );
    let file = scratch("agentic-bad.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"agentic","params":{"control_interval_s":0}}"#,
    )
    .unwrap();
    assert_bad_input(
        &bubblelab(&["run", file.to_str().unwrap()]),
        "agentic.control_interval_s: must be between 0.01 and 3600, got 0",
    );
}
