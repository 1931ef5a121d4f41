//! End-to-end tests of the `bubblelab` binary: run it as a user would and check what it prints.

mod common;

use common::*;
use std::process::{Command, Stdio};

use bubblelab_core::Scenario;

fn write_scratch(name: &str, text: &str) -> String {
    let path = scratch(name);
    std::fs::write(&path, text).expect("scratch file written");
    path.display().to_string()
}

#[test]
fn run_preset_prints_a_table() {
    let text = ok(&["run", "--preset", "pipeline-gpipe-vs-1f1b"]);
    assert!(text.contains("1F1B"), "{text}");
    assert!(text.contains("bubble ratio"), "{text}");
    assert!(text.contains("0.2727"), "{text}");
}

#[test]
fn json_report_has_the_closed_form_bubble_ratio() {
    let json = ok(&[
        "run",
        "--preset",
        "pipeline-gpipe-vs-1f1b",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("stdout is JSON");
    // p = 4, m = 8: (p − 1)/(m + p − 1) = 3/11.
    for key in ["1f1b.bubble_ratio", "gpipe.bubble_ratio"] {
        let ratio = metric(&report, key);
        assert!((ratio - 3.0 / 11.0).abs() < 1e-12, "{key} = {ratio}");
    }
}

#[test]
fn csv_report_starts_with_the_metrics() {
    let csv = ok(&["run", "--preset", "pipeline-all", "--format", "csv"]);
    assert!(csv.starts_with("key,label,value,unit\n"), "{csv}");
    assert!(csv.contains("1f1b.bubble_ratio,"), "{csv}");
}

#[test]
fn scenario_from_a_file_and_from_stdin_agree() {
    let json = r#"{"version": 1, "lab": "pipeline", "params": {"stages": 3, "micro_batches": 6}}"#;
    let path = write_scratch("p3.json", json);
    let from_file = ok(&["run", &path, "--format", "json"]);
    let from_stdin = bubblelab_with_stdin(&["run", "-", "--format", "json"], Some(json));
    assert_eq!(from_stdin.code, Some(0), "{}", from_stdin.stderr);
    assert_eq!(from_file, from_stdin.stdout);
    // Same input, same bytes: runs are deterministic.
    assert_eq!(from_file, ok(&["run", &path, "--format", "json"]));
}

#[test]
fn trace_names_every_thread() {
    let path = scratch("trace.json");
    let _ = std::fs::remove_file(&path);
    let path_text = path.display().to_string();
    ok(&["run", "--preset", "pipeline-all", "--trace", &path_text]);
    let text = std::fs::read_to_string(&path).expect("trace written");
    let trace: serde_json::Value = serde_json::from_str(&text).expect("trace is JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents array");
    let thread_names = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .count();
    // Four schedules × four stages, each lane named.
    assert!(thread_names >= 16, "{thread_names} thread_name events");
    assert!(events.iter().any(|e| e["ph"] == "X"));
}

#[test]
fn link_and_decode_round_trip() {
    for preset in bubblelab_core::presets::all() {
        let url = ok(&["link", "--preset", preset.id]);
        let url = url.trim();
        assert!(
            url.starts_with(&format!("http://127.0.0.1:8080/#/{}?s=", preset.lab)),
            "{url}"
        );
        let decoded = ok(&["link", "--decode", url]);
        let expected = Scenario::from_json(preset.json)
            .expect("preset parses")
            .to_json_pretty();
        assert_eq!(decoded.trim_end(), expected, "{}", preset.id);
        // The bare payload decodes to the same scenario.
        let payload = url.split_once("s=").map(|(_, p)| p).unwrap_or_default();
        assert_eq!(ok(&["link", "--decode", payload]), decoded);
    }
    let path = write_scratch(
        "link.json",
        r#"{"version":1,"lab":"pipeline","params":{"stages":5,"micro_batches":10}}"#,
    );
    let url = ok(&["link", &path, "--base", "https://example.org/lab/"]);
    assert!(
        url.starts_with("https://example.org/lab/#/pipeline?s="),
        "{url}"
    );
    let decoded = ok(&["link", "--decode", url.trim()]);
    let scenario = Scenario::from_json(&decoded).expect("decoded JSON is a scenario");
    assert_eq!(scenario.to_json_pretty(), decoded.trim_end());
    assert!(decoded.contains("\"stages\": 5"), "{decoded}");
}

#[test]
fn bad_scenarios_name_the_file_and_field() {
    let missing = scratch("does-not-exist.json").display().to_string();
    assert_bad_input(&bubblelab(&["run", &missing]), "does-not-exist.json: ");

    let bad_json = write_scratch("bad.json", "{\"version\": 1,");
    assert_bad_input(
        &bubblelab(&["run", &bad_json]),
        "bad.json: not valid JSON at line",
    );

    let unknown = write_scratch(
        "unknown.json",
        r#"{"version":1,"lab":"pipeline","params":{"stagez":4}}"#,
    );
    assert_bad_input(
        &bubblelab(&["run", &unknown]),
        "unknown.json: pipeline.stagez: unknown field",
    );

    let zero = write_scratch(
        "zero.json",
        r#"{"version":1,"lab":"pipeline","params":{"stages":0}}"#,
    );
    assert_bad_input(
        &bubblelab(&["run", &zero]),
        "zero.json: pipeline.stages: must be between 1 and 64, got 0",
    );
    assert_bad_input(
        &bubblelab(&["link", &zero]),
        "zero.json: pipeline.stages: must be between 1 and 64, got 0",
    );
    assert_bad_input(
        &bubblelab_with_stdin(&["run", "-"], Some(r#"{"version":2,"lab":"pipeline"}"#)),
        "<stdin>: version: ",
    );
    assert_bad_input(
        &bubblelab(&["run", "--preset", "no-such-preset"]),
        "unknown preset `no-such-preset`",
    );
    assert_bad_input(
        &bubblelab(&["presets", "no-such-preset"]),
        "unknown preset `no-such-preset`",
    );
    let folder = scratch("").display().to_string();
    assert_bad_input(&bubblelab(&["run", &folder]), "is a folder");
}

#[test]
fn oversized_input_is_refused() {
    let path = scratch("huge.json");
    let mut text = String::from("{\"version\": 1, \"lab\": \"pipeline\", \"params\": {}}");
    text.push_str(&" ".repeat(17 << 20));
    std::fs::write(&path, text).expect("huge file written");
    let run = bubblelab(&["run", &path.display().to_string()]);
    let _ = std::fs::remove_file(&path);
    assert_bad_input(&run, "larger than the 16 MiB limit");
}

#[test]
fn broken_links_fail_with_a_clear_message() {
    let url = ok(&["link", "--preset", "pipeline-all"]);
    let url = url.trim();
    let truncated = &url[..url.len() - url.len() / 3];
    assert_bad_input(&bubblelab(&["link", "--decode", truncated]), "--decode: ");
    let middle = url.len() - 20;
    let garbled = format!("{}!*{}", &url[..middle], &url[middle..]);
    assert_bad_input(
        &bubblelab(&["link", "--decode", &garbled]),
        "not base64url text",
    );
    // Valid base64url, but not a deflate stream.
    assert_bad_input(
        &bubblelab(&[
            "link",
            "--decode",
            "http://127.0.0.1:8080/#/pipeline?s=AAAA",
        ]),
        "does not decompress",
    );
    assert_bad_input(
        &bubblelab(&["link", "--decode", "http://127.0.0.1:8080/#/pipeline"]),
        "carries no scenario",
    );
    assert_bad_input(
        &bubblelab(&["link", "--decode", "http://127.0.0.1:8080/"]),
        "has no `#/<lab>?s=…` part",
    );
    let other_lab = url.replace("#/pipeline?", "#/overlap?");
    assert_bad_input(
        &bubblelab(&["link", "--decode", &other_lab]),
        "opens the overlap lab",
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let run = bubblelab(&["run"]);
    assert_eq!(run.code, Some(2));
    assert!(!run.stderr.contains("panicked"));
    let run = bubblelab(&["run", "--preset", "pipeline-all", "--format", "xml"]);
    assert_eq!(run.code, Some(2));
    for command in ["run", "link", "presets", "pipeline-log"] {
        let help = ok(&[command, "--help"]);
        assert!(help.contains("Usage: bubblelab"), "{help}");
    }
}

#[test]
fn presets_list_and_print() {
    let list = ok(&["presets"]);
    for preset in bubblelab_core::presets::all() {
        assert!(list.contains(preset.id), "{list}");
        assert!(list.contains(preset.title), "{list}");
        let json = ok(&["presets", preset.id]);
        assert_eq!(json.trim_end(), preset.json.trim_end());
        let full = ok(&["presets", preset.id, "--full"]);
        let scenario = Scenario::from_json(&full).expect("--full prints a scenario");
        assert_eq!(
            Some(scenario),
            Scenario::from_json(preset.json).ok(),
            "{}",
            preset.id
        );
    }
}

#[test]
fn closed_stdout_is_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bubblelab"))
        .args(["run", "--preset", "pipeline-all", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bubblelab binary starts");
    // Close the read end at once, as `| head -c 0` would.
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("the binary finishes");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn pipeline_log_reads_the_real_pipemorph_run() {
    let Some(data) = data_folder() else {
        return;
    };
    let run_dir = data.join("pipemorph_pp4_stage_logs/ae/fig15/1F1B/2_3/0.06");
    let run_dir = run_dir.display().to_string();
    let json = ok(&["pipeline-log", &run_dir, "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("stdout is JSON");
    assert_eq!(metric(&report, "complete_iterations"), 15.0);
    assert_eq!(metric(&report, "stages"), 4.0);
    let lanes = report["timelines"][0]["lanes"]
        .as_array()
        .expect("one timeline with lanes");
    assert_eq!(lanes.len(), 4);
    // Deterministic: a second read gives the same bytes.
    assert_eq!(json, ok(&["pipeline-log", &run_dir, "--format", "json"]));
    let text = ok(&["pipeline-log", &run_dir]);
    assert!(text.contains("15 complete iterations"), "{text}");
    // The same logs given file by file to the lab's `stage_logs` slot: the same measured run.
    let mut logs: Vec<String> = std::fs::read_dir(&run_dir)
        .expect("the run folder lists")
        .map(|e| e.expect("an entry").path().display().to_string())
        .collect();
    logs.sort();
    let mut args = vec!["run", "pipeline", "--format", "json"];
    let given: Vec<String> = logs.iter().map(|f| format!("stage_logs={f}")).collect();
    for g in &given {
        args.extend(["--input", g.as_str()]);
    }
    let by_slot: serde_json::Value = serde_json::from_str(&ok(&args)).expect("stdout is JSON");
    assert_eq!(by_slot["metrics"], report["metrics"]);
    assert_eq!(
        by_slot["timelines"][0]["lanes"],
        report["timelines"][0]["lanes"]
    );
}

#[test]
fn pipeline_log_errors_name_the_file() {
    let empty = scratch("empty-run");
    std::fs::create_dir_all(&empty).expect("folder");
    assert_bad_input(
        &bubblelab(&["pipeline-log", &empty.display().to_string()]),
        "no `*.log` stage logs",
    );
    let bad = scratch("bad-run");
    std::fs::create_dir_all(&bad).expect("folder");
    std::fs::write(
        bad.join("GPU0_rank0.log"),
        "[RANK0] Iteration 1\n[RANK0] F @ x (ms) to 3 (ms), cudaEventElapsed = 1 (ms)\n",
    )
    .expect("log written");
    assert_bad_input(
        &bubblelab(&["pipeline-log", &bad.display().to_string()]),
        "GPU0_rank0.log:2: ",
    );
    let missing = scratch("no-such-run").display().to_string();
    assert_bad_input(&bubblelab(&["pipeline-log", &missing]), "no-such-run: ");
}

/// `bubblelab run LAB --set …` is the scenario file with those fields: the lab's first preset
/// edited, read and validated as a file is.
#[test]
fn run_a_lab_by_name_with_set_is_the_edited_scenario() {
    let json = r#"{"version": 1, "lab": "pipeline", "params": {"stages": 3, "micro_batches": 6, "schedules": ["1f1b", "zb-h1"]}}"#;
    let path = write_scratch("p3-zb.json", json);
    let from_file = ok(&["run", &path, "--format", "json"]);
    let from_set = ok(&[
        "run",
        "pipeline",
        "--set",
        "stages=3",
        "--set",
        "pipeline.micro_batches=6",
        "--set",
        "schedules=1f1b,zb-h1",
        "--format",
        "json",
    ]);
    assert_eq!(from_file, from_set);
    // A preset edited the same way, and a cost-lab field inside a preset.
    let edited = ok(&[
        "run",
        "--preset",
        "cost-allreduce-h100",
        "--set",
        "ranks=16",
        "--format",
        "csv",
    ]);
    let unedited = ok(&["run", "--preset", "cost-allreduce-h100", "--format", "csv"]);
    assert_ne!(edited, unedited);
}

/// Every lab takes `--set`, and a bad one is one line naming the field.
#[test]
fn every_lab_takes_set_with_field_named_errors() {
    for lab in bubblelab_core::scenario::LABS {
        let run = bubblelab(&["run", lab, "--set", "no_such_field=1"]);
        assert_bad_input(&run, &format!("{lab}.no_such_field: unknown field"));
    }
    assert_bad_input(
        &bubblelab(&["run", "pipeline", "--set", "stages=0"]),
        "pipeline.stages: must be between 1 and 64, got 0",
    );
    assert_bad_input(
        &bubblelab(&["run", "pipeline", "--set", "schedules[9]=1f1b"]),
        "pipeline.schedules[9]: index 9 is past the end of `schedules`",
    );
    assert_bad_input(
        &bubblelab(&["run", "pipeline", "--set", "stages"]),
        "--set: expected PATH=VALUE",
    );
    assert_bad_input(
        &bubblelab(&["run", "--preset", "pipeline-all", "--set", "stages.x=1"]),
        "preset pipeline-all: pipeline.stages.x: `stages` is a number",
    );
}

/// Input slots: listed by `--inputs`, checked before any file is read, read by the lab's own
/// reader (the same Report as the lab's command).
#[test]
fn run_reads_input_slots_as_the_lab_commands_do() {
    assert!(ok(&["run", "sharing", "--inputs"]).starts_with("nodes"));
    assert!(ok(&["run", "fairness", "--inputs"]).contains("shares"));
    assert!(ok(&["run", "pipeline", "--inputs"]).starts_with("stage_logs"));
    assert!(ok(&["run", "cost", "--inputs"]).starts_with("measured"));
    assert_eq!(
        ok(&["run", "migration", "--inputs"]),
        "the migration lab reads no input files\n"
    );
    assert_bad_input(
        &bubblelab(&["run", "sharing", "--input", "trace=missing.csv"]),
        "--input: the sharing lab has no input `trace`; it reads nodes, pods",
    );
    assert_bad_input(
        &bubblelab(&["run", "agentic", "--input", "trace"]),
        "--input: expected SLOT=FILE",
    );
    let junk = write_scratch("junk-trace.csv", "what,is,this\n1,2,3\n");
    assert_bad_input(
        &bubblelab(&["run", "agentic", "--input", &format!("trace={junk}")]),
        "junk-trace.csv: cannot tell the trace format from its first line",
    );
    let Some(data) = data_folder() else { return };
    let trace = data.join("azure_llm_inference_2023/AzureLLMInferenceTrace_code.csv");
    let trace = trace.display().to_string();
    let by_command = ok(&[
        "agentic",
        &trace,
        "--controllers",
        "unbounded,cap-4",
        "--format",
        "json",
    ]);
    let by_run = ok(&[
        "run",
        "agentic",
        "--input",
        &format!("trace={trace}"),
        "--set",
        r#"controllers=[{"kind":"unbounded"},{"kind":"static-cap","cap":4}]"#,
        "--format",
        "json",
    ]);
    assert_eq!(by_command, by_run);
}

/// `--sweep` runs every point of the product, first axis outermost, and refuses a bad point
/// by its field before running any.
#[test]
fn run_sweeps_a_field_as_data() {
    let csv = ok(&[
        "run",
        "pipeline",
        "--set",
        "schedules=1f1b",
        "--sweep",
        "stages=2,4",
        "--sweep",
        "micro_batches=8,16",
        "--format",
        "csv",
    ]);
    let rows: Vec<&str> = csv
        .lines()
        .skip_while(|l| !l.starts_with("stages,micro_batches,"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let points: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            let mut cells = r.split(',');
            (cells.next().unwrap(), cells.next().unwrap())
        })
        .collect();
    assert_eq!(points, [("2", "8"), ("2", "16"), ("4", "8"), ("4", "16")]);
    // p = 4, m = 8: the 1F1B bubble ratio 3/11, as the single run reports it.
    assert!(rows[2].contains(",0.2727272727272727,"), "{}", rows[2]);
    assert_bad_input(
        &bubblelab(&["run", "pipeline", "--sweep", "stages=2,0"]),
        "pipeline.stages: must be between 1 and 64, got 0 (sweep point stages=0)",
    );
    assert_bad_input(
        &bubblelab(&["run", "pipeline", "--sweep", "stages"]),
        "--sweep: expected PATH=V1,V2",
    );
}

#[test]
fn compare_puts_two_runs_side_by_side_with_the_fields_that_differ() {
    let json = ok(&[
        "compare",
        "pipeline-gpipe-vs-1f1b",
        "--set",
        "micro_batches=16",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("stdout is JSON");
    assert_eq!(metric(&report, "compare.fields_changed"), 1.0);
    let tables = report["tables"].as_array().unwrap();
    let diff = tables.iter().find(|t| t["key"] == "scenario_diff").unwrap();
    assert_eq!(
        diff["rows"],
        serde_json::json!([["micro_batches", "8", "16"]])
    );
    // 1F1B's bubble (p − 1)/(m + p − 1): 3/11 → 3/19.
    let metrics = tables.iter().find(|t| t["key"] == "metrics").unwrap();
    let row = metrics["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[1] == "1f1b.bubble_ratio")
        .unwrap();
    let (a, b) = (row[3].as_f64().unwrap(), row[4].as_f64().unwrap());
    assert!((a - 3.0 / 11.0).abs() < 1e-12 && (b - 3.0 / 19.0).abs() < 1e-12);
    assert!((row[6].as_f64().unwrap() - 11.0 / 19.0).abs() < 1e-12);
    // A file against a share link of the same scenario: nothing differs.
    let file = write_scratch(
        "compare-a.json",
        &ok(&["presets", "pipeline-gpipe-vs-1f1b"]),
    );
    let link = ok(&["link", "--preset", "pipeline-gpipe-vs-1f1b"]);
    let same = ok(&["compare", &file, link.trim(), "--format", "csv"]);
    assert!(
        same.contains("compare.fields_changed,Parameters that differ,0,count"),
        "{same}"
    );
}

#[test]
fn compare_names_the_side_and_the_field_that_is_wrong() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["compare", "no-such-thing", "pipeline-all"],
            "A: `no-such-thing` is not a scenario file",
        ),
        (
            &["compare", "pipeline-all", "--set", "micro_batches=0"],
            "B: pipeline.micro_batches",
        ),
        (
            &["compare", "pipeline-all", "cost-allreduce-h100"],
            "A is a pipeline scenario and B a cost one",
        ),
        (&["compare", "pipeline-all"], "give run B, or --set"),
    ];
    for (args, expected) in cases {
        assert_bad_input(&bubblelab(args), expected);
    }
}

#[test]
fn tour_walks_a_shipped_tour_and_checks_a_teachers_file() {
    let listed = ok(&["tour"]);
    assert!(listed.contains("pipeline-bubbles"), "{listed}");
    let walked = ok(&["tour", "pipeline-bubbles"]);
    // Step 1: GPipe's bubble at p = 4, m = 4 is 3/7, and the explanation states it.
    assert!(
        walked.contains("run: 0.4286 (a prediction within ±0.0300 is right)"),
        "{walked}"
    );
    assert!(walked.contains("3/7 ≈ 0.4286"), "{walked}");
    // The link opens the same file.
    let link = ok(&["tour", "pipeline-bubbles", "--link"]);
    assert!(
        link.starts_with("http://127.0.0.1:8080/#/tours?t="),
        "{link}"
    );
    let again = ok(&["tour", link.trim()]);
    assert_eq!(again, walked);
    // A teacher's file whose explanation states what the run does not give fails on that step.
    let text = bubblelab_core::tour::find("pipeline-bubbles")
        .unwrap()
        .json
        .replace("\"expect\": 0.1579", "\"expect\": 0.25");
    let file = scratch("tour-wrong.json");
    std::fs::write(&file, text).unwrap();
    assert_bad_input(
        &bubblelab(&["tour", file.to_str().unwrap()]),
        "steps[1].answer.expect: the explanation states 0.2500, the run gives 0.1579",
    );
    let broken = scratch("tour-broken.json");
    std::fs::write(&broken, "{\"version\": 1, \"title\": \"x\"}").unwrap();
    assert_bad_input(
        &bubblelab(&["tour", broken.to_str().unwrap()]),
        "missing field `lab`",
    );
    assert_bad_input(
        &bubblelab(&["tour", "no-such-tour"]),
        "is not a shipped tour",
    );
}

#[test]
fn compare_reads_input_files_for_either_side_and_lists_them_in_the_diff() {
    let trace = scratch("compare-trace.csv");
    std::fs::write(
        &trace,
        "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type\n\
         0,vc_a,1,0,100,vgg16,600,14,1105,10,0,strict\n\
         1,vc_b,2,30,100,alexnet,1200,8,1400,10,1,best\n",
    )
    .unwrap();
    let file = format!("trace={}", trace.display());
    let json = ok(&[
        "compare",
        "fairness-light-load-15-tenants",
        "--set",
        "policies=fifo",
        "--input-a",
        &file,
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("stdout is JSON");
    let tables = report["tables"].as_array().unwrap();
    let diff = tables.iter().find(|t| t["key"] == "scenario_diff").unwrap();
    let rows = diff["rows"].as_array().unwrap();
    let input = rows
        .iter()
        .find(|r| r[0] == "input.trace")
        .expect("an input row");
    assert!(
        input[1]
            .as_str()
            .unwrap()
            .ends_with("compare-trace.csv, 219 bytes"),
        "{input}"
    );
    assert_eq!(input[2], "—");
    // A ran on the file's 2 jobs, B on the preset's synthetic ones.
    let metrics = tables.iter().find(|t| t["key"] == "metrics").unwrap();
    let jobs = metrics["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[1] == "trace.jobs")
        .unwrap();
    assert_eq!(jobs[3].as_f64(), Some(2.0), "{jobs}");
    // Both sides on the same file: no input row.
    let json = ok(&[
        "compare",
        "fairness-light-load-15-tenants",
        "--set",
        "policies=fifo",
        "--input",
        &file,
        "--format",
        "json",
    ]);
    assert!(!json.contains("input.trace"), "{json}");
    assert_bad_input(
        &bubblelab(&[
            "compare",
            "pipeline-all",
            "--set",
            "stages=2",
            "--input-b",
            &file,
        ]),
        "B: --input/--input-b: the pipeline lab has no input `trace`",
    );
}

/// `bubblelab sweep`: one tidy table in point order whatever the threads, each row the point's
/// own run, a failed point a row with its error, and `--resume` finishing a table cut short.
#[test]
fn sweep_writes_one_tidy_table_in_point_order_and_resumes() {
    let spec = write_scratch(
        "sweep-pipeline.json",
        r#"{"base": "pipeline", "set": {"schedules": ["gpipe"]},
            "axes": [{"path": "stages", "values": [2, 4, 8]},
                     {"path": "micro_batches", "range": [8, 17, 8]}]}"#,
    );
    let one = ok(&["sweep", &spec, "--jobs", "1"]);
    assert_eq!(ok(&["sweep", &spec, "--jobs", "3"]), one);
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(
        lines[0],
        "point,stages,micro_batches,metric,value,unit,error"
    );
    // Point 3 is stages 4, m 16: GPipe's bubble ratio (p − 1)/(m + p − 1) = 3/19.
    let row = lines
        .iter()
        .find(|l| l.starts_with("3,4,16,gpipe.bubble_ratio,"))
        .expect("point 3's bubble ratio");
    let value: f64 = row.split(',').nth(4).unwrap().parse().unwrap();
    assert!((value - 3.0 / 19.0).abs() < 1e-12, "{row}");
    let points: Vec<usize> = lines[1..]
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(points.windows(2).all(|w| w[0] <= w[1]) && points.last() == Some(&5));

    let out = scratch("sweep-pipeline.csv");
    let cut = &one[..one.len() * 2 / 3 - 7];
    std::fs::write(&out, cut).unwrap();
    let out_s = out.display().to_string();
    ok(&["sweep", &spec, "--output", &out_s, "--resume"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), one);

    // A point whose input file is missing fails alone, as a row naming the slot.
    let inputs = write_scratch(
        "sweep-agentic.json",
        r#"{"base": "agentic", "axes": [{"input": "trace", "values": ["no-such-trace.csv"]}]}"#,
    );
    let failed = ok(&["sweep", &inputs]);
    assert!(
        failed
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("0,no-such-trace.csv,,,,input trace: "),
        "{failed}"
    );
    let bad = write_scratch(
        "sweep-bad.json",
        r#"{"base": "pipeline", "axes": [{"path": "stages", "values": [2, 0]}]}"#,
    );
    assert_bad_input(
        &bubblelab(&["sweep", &bad]),
        "pipeline.stages: must be between 1 and 64, got 0 (sweep point stages=0)",
    );
}
