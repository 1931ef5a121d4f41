//! The native runner: CPU executor ordering semantics (through `validate --timings`), validate's
//! table and threshold, calibrate's profile, doctor without CUDA, bad inputs.

mod common;

use common::{assert_bad_input, bubblelab, scratch};

fn suite_timings() -> (common::Run, serde_json::Value) {
    let path = scratch("runner-timings.json");
    let p = path.to_str().expect("utf-8 path").to_string();
    let run = bubblelab(&[
        "validate",
        "--suite",
        "--target-ms",
        "5",
        "--repetitions",
        "1",
        "--warmup",
        "0",
        "--max-error",
        "1000000",
        "--timings",
        &p,
    ]);
    let text = std::fs::read_to_string(&path).expect("timings written");
    (run, serde_json::from_str(&text).expect("timings JSON"))
}

#[test]
fn cpu_executor_respects_dependencies_and_streams() {
    let (run, timings) = suite_timings();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let runs = timings["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 4, "serial, Helix, long context, pipeline");
    for r in runs {
        let ops = r["ops"].as_array().expect("ops");
        assert!(!ops.is_empty());
        let get = |o: &serde_json::Value, k: &str| o[k].as_u64().expect(k);
        for o in ops {
            assert!(get(o, "start_ns") <= get(o, "end_ns"));
            for dep in o["after"].as_array().expect("after") {
                let d = &ops[usize::try_from(dep.as_u64().expect("index")).expect("index")];
                assert!(
                    get(d, "end_ns") <= get(o, "start_ns"),
                    "{} started before its dependency {} ended in {}",
                    o["name"],
                    d["name"],
                    r["case"]
                );
            }
        }
        // One op at a time per stream, in issue order.
        let streams = r["streams"].as_array().expect("streams").len();
        for s in 0..streams as u64 {
            let mine: Vec<_> = ops.iter().filter(|o| get(o, "stream") == s).collect();
            for w in mine.windows(2) {
                assert!(
                    get(w[0], "end_ns") <= get(w[1], "start_ns"),
                    "{} and {} overlap on stream {s} of {}",
                    w[0]["name"],
                    w[1]["name"],
                    r["case"]
                );
            }
        }
    }
    // Every op carries its class and its predicted interval; the measured sums by class are
    // what the breakdown table adds up.
    for r in runs {
        for o in r["ops"].as_array().expect("ops") {
            let class = o["class"].as_str().expect("class");
            assert!(
                ["GEMM", "memory-bound", "collective (copy)", "wait"].contains(&class),
                "{class}"
            );
            let (ps, pe) = (
                o["predicted_start_ns"].as_u64().expect("predicted start"),
                o["predicted_end_ns"].as_u64().expect("predicted end"),
            );
            assert!(ps <= pe, "{}", o["name"]);
        }
    }
    // The pipeline really runs its stages concurrently on separate streams.
    let pipeline = &runs[3];
    assert_eq!(pipeline["streams"].as_array().expect("streams").len(), 4);
}

#[test]
fn validate_prints_predicted_and_measured_and_fails_above_threshold() {
    let run = bubblelab(&[
        "validate",
        "--suite",
        "--target-ms",
        "5",
        "--repetitions",
        "1",
        "--warmup",
        "0",
        "--max-error",
        "0.000001",
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stdout.contains("predicted ms"), "{}", run.stdout);
    assert!(run.stdout.contains("measured ms"), "{}", run.stdout);
    assert!(
        run.stdout.contains("gpt3-curie tp2+sp Helix"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("error above"), "{}", run.stderr);
    // The per-op breakdown: every class of the overlap cases, and the pipeline's idle time.
    assert!(run.stdout.contains("where the time goes"), "{}", run.stdout);
    for class in ["GEMM", "memory-bound", "collective (copy)", "compute idle"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with("gpt3-curie tp2+sp Helix") && l.contains(class)),
            "no {class} row for the Helix case:\n{}",
            run.stdout
        );
    }
}

#[test]
fn calibrate_writes_a_profile_that_validate_reads() {
    let path = scratch("runner-profile.json");
    let p = path.to_str().expect("utf-8 path").to_string();
    let run = bubblelab(&["calibrate", "--repetitions", "1", "--output", &p]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("gemm 512x512x512 f32"),
        "{}",
        run.stdout
    );
    let cal = bubblelab_core::hw::Calibration::from_json(
        &std::fs::read_to_string(&path).expect("profile"),
    )
    .expect("a valid calibrated profile");
    // 13 near-cubic shapes, 16³ … 1024³ (calibrate::CPU_GEMM_SIDES).
    assert_eq!(cal.gemm.len(), 13);
    assert!(cal.launch_overhead_ns.is_some());
    let slowdown = cal
        .comm_compute_slowdown
        .expect("the CPU measures its contention");
    assert!((0.0..=10.0).contains(&slowdown), "{slowdown}");
    let run = bubblelab(&[
        "validate",
        "--suite",
        "--profile",
        &p,
        "--target-ms",
        "5",
        "--repetitions",
        "1",
        "--warmup",
        "0",
        "--max-error",
        "1000000",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("cpu executor"), "{}", run.stdout);
}

#[test]
fn doctor_exits_zero_without_cuda() {
    let run = bubblelab(&["doctor"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    if run.stdout.contains("no CUDA driver") {
        assert_eq!(run.stdout.trim_end().lines().count(), 1, "{}", run.stdout);
    } else {
        assert!(run.stdout.contains("CUDA driver"), "{}", run.stdout);
    }
}

#[test]
fn cuda_commands_without_a_gpu_fail_with_one_line() {
    if bubblelab(&["doctor"])
        .stdout
        .contains("run the CUDA executor")
    {
        return; // a usable GPU is here: the GPU script covers these commands
    }
    let profile = scratch("runner-cuda-profile.json");
    let _ = std::fs::remove_file(&profile);
    let p = profile.to_str().expect("utf-8 path").to_string();
    for args in [
        &["calibrate", "--device", "cuda", "--repetitions", "1"][..],
        &["calibrate", "--device", "cuda", "--output", &p],
        &["validate", "--suite", "--device", "cuda"],
        &[
            "validate",
            "--suite",
            "--device",
            "cuda",
            "--repetitions",
            "1",
        ],
    ] {
        let run = bubblelab(args);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        let command = args[0];
        assert!(
            run.stderr
                .starts_with(&format!("error: {command} --device cuda: ")),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
        assert!(!run.stderr.contains("panick"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    assert!(!profile.exists(), "no profile is written without a GPU");
    // Bad input is still named first (exit 2), before the device is looked at.
    assert_bad_input(
        &bubblelab(&["validate", "/nonexistent/y.json", "--device", "cuda"]),
        "y.json",
    );
}

#[test]
fn bad_inputs_fail_with_one_line() {
    assert_bad_input(&bubblelab(&["validate", "/nonexistent/x.json"]), "x.json");
    let bad = scratch("runner-bad-profile.json");
    std::fs::write(
        &bad,
        r#"{"version": 1, "device": "x", "launch_overhead_ns": -1}"#,
    )
    .expect("write");
    let b = bad.to_str().expect("utf-8").to_string();
    assert_bad_input(
        &bubblelab(&["validate", "--suite", "--profile", &b]),
        "launch_overhead_ns",
    );
    assert_bad_input(
        &bubblelab(&["validate", "--suite", "--max-error=-1"]),
        "--max-error",
    );
    let fairness = scratch("runner-not-overlap.json");
    std::fs::write(
        &fairness,
        r#"{"version": 1, "lab": "pipeline", "params": {}}"#,
    )
    .expect("write");
    let f = fairness.to_str().expect("utf-8").to_string();
    assert_bad_input(&bubblelab(&["validate", &f]), "overlap");
}

/// The GPU machine's script rehearsed as it will meet that machine: the runner carried with the
/// working tree, no cargo on the PATH, and here no CUDA driver. Every step runs or records its
/// refusal, every CUDA step's refusal is one line, and the script ends inside its budget with
/// its files in at most two (the device tool brings back eight).
#[test]
fn gpu_check_script_runs_the_carried_runner_without_cargo() {
    let out = scratch("gpu-check-rehearsal");
    let _ = std::fs::remove_dir_all(&out);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let budget_s = 40;
    let started = std::time::Instant::now();
    let run = std::process::Command::new("bash")
        .arg("scripts/gpu-check.sh")
        .current_dir(&root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("OUT", &out)
        .env("BUBBLELAB_BIN", env!("CARGO_BIN_EXE_bubblelab"))
        .env("GPU_CHECK_BUDGET_S", budget_s.to_string())
        .output()
        .expect("bash runs the script");
    let elapsed_s = started.elapsed().as_secs();
    let summary = std::fs::read_to_string(out.join("summary.txt")).expect("summary.txt");
    assert!(run.status.success(), "{summary}");
    assert!(elapsed_s <= budget_s + 15, "{elapsed_s} s:\n{summary}");
    assert!(summary.contains("as carried"), "{summary}");
    assert!(summary.contains("no build"), "{summary}");
    assert!(summary.contains("done in"), "{summary}");
    let files: Vec<_> = std::fs::read_dir(&out).expect("out").collect();
    assert_eq!(files.len(), 2, "summary.txt and gpu-check.tar.gz");
    if summary.contains("libcuda not found") {
        for step in ["calibrate-cuda", "validate-cuda", "checkpoint-cuda"] {
            let section = summary
                .split(&format!("== {step} "))
                .nth(1)
                .expect("the step ran or was skipped for time");
            let lines: Vec<&str> = section.lines().skip(1).take(2).collect();
            assert!(
                lines[0].starts_with("error: ") && lines[0].contains("no CUDA driver"),
                "{step}: {section}"
            );
            assert!(
                lines[1].starts_with("exit "),
                "{step}: one line, then the exit: {section}"
            );
        }
    }
}
