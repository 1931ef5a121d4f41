//! `bubblelab bubbles` and `bubblelab run` on bubbles scenarios, as a user runs them.

mod common;

use common::{assert_bad_input, bubblelab, metric, ok, scratch};

#[test]
fn preset_runs_and_prints_the_comparison() {
    let out = ok(&["bubbles", "--preset", "bubbles-gpt-32gpus-resnet18"]);
    assert!(out.contains("Policies compared"), "{out}");
    assert!(out.contains("Bubble Squeezer"));
    assert!(out.contains("Hydro's claims"));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["bubbles", "--format", "json"])).unwrap();
    assert_eq!(metric(&json, "squeezer.slowdown"), 0.0);
    assert!(metric(&json, "blind.slowdown") > 0.05);
    // Hydro's even split is slower with the bubbles at 64 trials; the oracle bundle is faster.
    assert!(metric(&json, "hpo.speedup") < 1.0);
    let oracle: serde_json::Value = serde_json::from_str(&ok(&[
        "run",
        "--preset",
        "bubbles-gpt-32gpus-resnet18",
        "--set",
        "hpo.bundle=oracle",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&oracle, "hpo.speedup") > 1.0);
    let small = serde_json::from_str::<serde_json::Value>(&ok(&[
        "bubbles",
        "--trial",
        "small-gpt",
        "--max-fusion",
        "4",
        "--policies",
        "none,squeezer",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(metric(&small, "squeezer.trial_steps_per_iteration") > 0.0);
    // The tuner and the trial count from the command line: synchronous SH's ceiling is 1.86×.
    let sh = serde_json::from_str::<serde_json::Value>(&ok(&[
        "bubbles",
        "--tuner",
        "sync-sh",
        "--policies",
        "none,squeezer",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!((metric(&sh, "hpo.ceiling") - 262.4 / 140.8).abs() < 1e-9);
    let few = serde_json::from_str::<serde_json::Value>(&ok(&[
        "bubbles", "--trials", "16", "--format", "json",
    ]))
    .unwrap();
    assert!(metric(&few, "hpo.exclusive_s") < metric(&json, "hpo.exclusive_s"));
    assert_bad_input(&bubblelab(&["bubbles", "--tuner", "hyperband"]), "--tuner");
}

#[test]
fn generic_run_path_and_chrome_trace() {
    let trace = scratch("bubbles-trace.json");
    let _ = std::fs::remove_file(&trace);
    let csv = ok(&[
        "run",
        "--preset",
        "bubbles-zb-h1-resnet18",
        "--format",
        "csv",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(csv.starts_with("key,label,value,unit\n"));
    assert!(csv.contains("squeezer.bubble_sm_activity"));
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(t["traceEvents"].as_array().unwrap().len() > 10);
    let file = scratch("bubbles.json");
    std::fs::write(
        &file,
        r#"{"version":1,"lab":"bubbles","params":{"max_fusion":4,"policies":["squeezer"]}}"#,
    )
    .unwrap();
    let out = ok(&["run", file.to_str().unwrap()]);
    assert!(out.contains("Bubble Squeezer"), "{out}");
    let out = ok(&[
        "bubbles",
        "--scenario",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.contains("squeezer.guest_fraction"));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    assert_bad_input(
        &bubblelab(&["bubbles", "--trial", "vgg"]),
        "--trial: unknown trial preset `vgg`",
    );
    assert_bad_input(
        &bubblelab(&["bubbles", "--policies", "greedy"]),
        "--policies: unknown bubbles policy `greedy`",
    );
    assert_bad_input(
        &bubblelab(&["bubbles", "--max-fusion", "0"]),
        "bubbles.max_fusion",
    );
    assert_bad_input(
        &bubblelab(&["bubbles", "--preset", "agentic-qwen3-32b-h100"]),
        "needs a bubbles scenario",
    );
    assert_bad_input(
        &bubblelab(&["bubbles", "/nonexistent/folder"]),
        "/nonexistent/folder",
    );
    let bad = scratch("bad-bubbles.json");
    std::fs::write(
        &bad,
        r#"{"version":1,"lab":"bubbles","params":{"hpo":{"eta":1}}}"#,
    )
    .unwrap();
    assert_bad_input(
        &bubblelab(&["run", bad.to_str().unwrap()]),
        "bubbles.hpo.eta",
    );
    let dir = scratch("bubbles-bad-log");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("r0.log"),
        "[RANK0] Iteration 1\n[RANK0] F @ x (ms) to 3 (ms), cudaEventElapsed = 1 (ms)\n",
    )
    .unwrap();
    assert_bad_input(&bubblelab(&["bubbles", dir.to_str().unwrap()]), "r0.log:2:");
}

#[test]
fn real_log_is_squeezed() {
    let Some(data) = common::data_folder() else {
        return;
    };
    let dir = data.join("pipemorph_pp4_stage_logs/ae/fig15/1F1B/2_3/0.06");
    let out = ok(&["bubbles", dir.to_str().unwrap(), "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(metric(&json, "windows.total"), 1352.0);
    // The earlier `--log DIR` reads the same folder, with a warning.
    let old = bubblelab(&[
        "bubbles",
        "--log",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(old.code, Some(0), "{}", old.stderr);
    assert_eq!(old.stdout, out);
    assert!(
        old.stderr.contains("`--log` is deprecated"),
        "{}",
        old.stderr
    );
    assert!(metric(&json, "squeezer.trial_steps_per_iteration") > 1000.0);
}
