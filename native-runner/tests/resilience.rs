//! `bubblelab resilience`, `bubblelab run` on resilience scenarios and `bubblelab detect --pai`,
//! as a user runs them.

mod common;

use common::{assert_bad_input, bubblelab, data_folder, metric, ok, scratch};

#[test]
fn preset_runs_and_prints_both_tables() {
    let out = ok(&["resilience", "--preset", "resilience-slow-gpu-4x"]);
    assert!(out.contains("Strategies on the same failures"), "{out}");
    assert!(
        out.contains("Greyhound-like") && out.contains("ReCycle-like"),
        "{out}"
    );
    assert!(out.contains("Fail-slow detectors"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "resilience",
        "--preset",
        "resilience-slow-gpu-4x",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&json, "resihp.speedup_vs_nothing") > 1.5);
    assert!(metric(&json, "resihp.speedup_vs_best_baseline") >= 1.0);
}

#[test]
fn generic_run_path_csv_and_chrome_trace() {
    let trace = scratch("resilience-trace.json");
    let _ = std::fs::remove_file(&trace);
    let csv = ok(&[
        "run",
        "--preset",
        "resilience-fail-stop",
        "--format",
        "csv",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(csv.starts_with("key,label,value,unit\n"));
    assert!(csv.contains("resihp.throughput_tokens_per_s"));
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(t["traceEvents"].as_array().unwrap().len() > 100);
    let file = scratch("resilience.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"resilience","params":{"iterations":60,"events":[{"at_iteration":30,"gpu":3,"slowdown":3.0}]}}"#,
    )
    .unwrap();
    let out = ok(&["run", file.to_str().unwrap()]);
    assert!(out.contains("60 iterations"), "{out}");
}

#[test]
fn bad_input_is_one_line_exit_2() {
    let file = scratch("resilience-bad.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"resilience","params":{"cluster":{"tp":3}}}"#,
    )
    .unwrap();
    assert_bad_input(
        &bubblelab(&["resilience", "--scenario", file.to_str().unwrap()]),
        "resilience.cluster.tp",
    );
    assert_bad_input(&bubblelab(&["resilience", "--preset", "nope"]), "nope");
    let csv = scratch("pai-bad.csv");
    std::fs::write(&csv, ",worker,gpu,time,batch_time_norm\n0,0,25,1,abc\n").unwrap();
    assert_bad_input(
        &bubblelab(&["detect", "--pai", csv.to_str().unwrap()]),
        "line 2: column `batch_time_norm`",
    );
}

#[test]
fn detect_pai_flags_worker_6_of_job_1() {
    let Some(dir) = data_folder() else { return };
    let path = dir.join("alibaba_pai_minibatch_time/job_1_norm.csv");
    let out = ok(&["detect", "--pai", path.to_str().unwrap()]);
    assert!(out.contains("ResiHP flagged worker(s) [6]"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "detect",
        "--pai",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&json, "pai.resihp.flags") >= 1.0);
}

#[test]
fn detect_generates_a_labelled_trace_and_scores_every_detector() {
    let csv = scratch("fail-slow-benchmark.csv");
    let _ = std::fs::remove_file(&csv);
    ok(&["detect", "--generate", csv.to_str().unwrap(), "--seed", "3"]);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with(",worker,gpu,time,batch_time_norm,slow,episode\n"));
    // The PAI path reads the same file.
    ok(&["detect", "--pai", csv.to_str().unwrap()]);
    let out = ok(&["detect", "--score", csv.to_str().unwrap()]);
    for d in ["ResiHP", "Greyhound", "CUSUM", "Naive"] {
        assert!(out.contains(d), "{out}");
    }
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "detect",
        "--score",
        csv.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    for d in ["resihp", "greyhound", "changepoint", "naive"] {
        let p = metric(&json, &format!("benchmark.{d}.precision"));
        let r = metric(&json, &format!("benchmark.{d}.recall"));
        assert!((0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&r), "{d}");
    }
    assert_eq!(metric(&json, "benchmark.resihp.recall"), 1.0);
    // An unlabelled PAI file cannot be scored; the error names the missing column.
    let pai = scratch("unlabelled.csv");
    std::fs::write(&pai, ",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n").unwrap();
    assert_bad_input(
        &bubblelab(&["detect", "--score", pai.to_str().unwrap()]),
        "missing label column `episode`",
    );
    assert_bad_input(
        &bubblelab(&[
            "detect",
            "--generate",
            csv.to_str().unwrap(),
            "--workers",
            "1",
        ]),
        "--workers",
    );
}
