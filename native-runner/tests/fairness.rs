//! `bubblelab fairness` run as a user would: a trace file in a named or detected format, the
//! comparison table as text and JSON, policy selection, the Chrome-trace export, one-line errors
//! naming the row and column of a bad trace, and a real trace from the data folder.

mod common;

use common::*;

/// Two tenants on two 4-GPU nodes: tenant `a` floods the cluster first, `b` arrives later.
fn small_trace() -> String {
    let mut csv =
        String::from("job_id,num_gpu,submit_time,iterations,model_name,duration,interval,tenant\n");
    for i in 0..24u32 {
        let (tenant, submit_s) = if i < 16 { ("a", i) } else { ("b", 600 + i) };
        let gpus = [1, 2, 4][(i % 3) as usize];
        csv.push_str(&format!(
            "{i},{gpus},{submit_s},100,resnet50,{},0,{tenant}\n",
            1_800 + 97 * i
        ));
    }
    csv
}

fn write(name: &str, text: &str) -> String {
    let path = scratch(name);
    std::fs::write(&path, text).expect("scratch trace written");
    path.display().to_string()
}

#[test]
fn compares_every_policy_on_a_trace_file() {
    let path = write("two-tenants.csv", &small_trace());
    let text = ok(&["fairness", &path, "--gpus", "8", "--gpus-per-node", "4"]);
    for label in [
        "FIFO",
        "SJF",
        "SRTF",
        "Tiresias",
        "Largest ρ first",
        "ASTRAEA",
    ] {
        assert!(text.contains(label), "{label} missing from:\n{text}");
    }
    // The format named explicitly gives the same Report as detection.
    let named = ok(&[
        "fairness",
        &path,
        "--input-format",
        "tiresias",
        "--gpus",
        "8",
        "--gpus-per-node",
        "4",
    ]);
    assert_eq!(named, text);
}

#[test]
fn the_report_is_the_same_on_any_number_of_threads() {
    let path = write("two-tenants-threads.csv", &small_trace());
    let run = |jobs: &str| {
        ok(&[
            "fairness",
            &path,
            "--gpus",
            "8",
            "--gpus-per-node",
            "4",
            "--format",
            "json",
            "--jobs",
            jobs,
        ])
    };
    let one = run("1");
    assert!(one.contains("\"ASTRAEA\""), "{one}");
    assert_eq!(run("3"), one);
    assert_eq!(run("64"), one);
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--jobs", "0"]),
        "--jobs must be at least 1",
    );
}

#[test]
fn json_output_holds_the_chosen_policies_only() {
    let path = write("two-tenants-json.csv", &small_trace());
    let out = ok(&[
        "fairness",
        &path,
        "--gpus",
        "8",
        "--gpus-per-node",
        "4",
        "--policy",
        "fifo,astraea",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON Report");
    assert!(metric(&report, "astraea.avg_jct_s") > 0.0);
    assert!(metric(&report, "fifo.avg_jct_s") > 0.0);
    let keys: Vec<&str> = report["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter_map(|m| m["key"].as_str())
        .collect();
    assert!(!keys.iter().any(|k| k.starts_with("sjf.")), "{keys:?}");
}

#[test]
fn chrome_trace_has_a_lane_per_tenant() {
    let path = write("two-tenants-trace.csv", &small_trace());
    let out = scratch("fairness-trace.json");
    let _ = std::fs::remove_file(&out);
    ok(&[
        "fairness",
        &path,
        "--gpus",
        "8",
        "--gpus-per-node",
        "4",
        "--policy",
        "astraea",
        "--trace",
        &out.display().to_string(),
    ]);
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("trace written")).expect("JSON");
    let names: Vec<String> = trace["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str().map(String::from))
        .collect();
    for tenant in ["a", "b"] {
        assert!(
            names.iter().any(|n| n == tenant),
            "no lane {tenant} in {names:?}"
        );
    }
}

#[test]
fn bad_rows_are_named_or_skipped_on_request() {
    let mut text = small_trace();
    text.push_str("99,two,5,100,resnet50,60,0,a\n");
    let path = write("bad-row.csv", &text);
    let run = bubblelab(&["fairness", &path, "--gpus", "8", "--gpus-per-node", "4"]);
    assert_bad_input(&run, "row 26, column `num_gpu`");
    assert!(run.stderr.contains("bad-row.csv"), "{}", run.stderr);
    let out = ok(&[
        "fairness",
        &path,
        "--gpus",
        "8",
        "--gpus-per-node",
        "4",
        "--skip-bad-rows",
        "--policy",
        "fifo",
    ]);
    assert!(out.contains("FIFO"), "{out}");
}

#[test]
fn bad_flags_and_files_get_one_line_errors() {
    let path = write("flags.csv", &small_trace());
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--policy", "lottery"]),
        "unknown fairness policy `lottery`",
    );
    assert_bad_input(&bubblelab(&["fairness", &path, "--gpus", "0"]), "--gpus");
    let unknown = write("not-a-trace.csv", "a,b,c\n1,2,3\n");
    assert_bad_input(
        &bubblelab(&["fairness", &unknown]),
        "cannot tell the trace format",
    );
    assert_bad_input(
        &bubblelab(&["fairness", "/nonexistent/trace.csv"]),
        "trace.csv",
    );
    // A job larger than the cluster is left out and counted, not an error.
    let big = write(
        "too-big.csv",
        "job_id,num_gpu,submit_time,iterations,model_name,duration,interval,tenant\n0,64,0,1,m,60,0,a\n1,1,0,1,m,60,0,a\n",
    );
    let out = ok(&["fairness", &big, "--gpus", "8", "--policy", "fifo"]);
    assert!(
        out.contains("1 jobs ask for more GPUs than one GPU type of the cluster has"),
        "{out}"
    );
    assert!(out.contains("1 jobs of 1 tenants on 8 GPUs"), "{out}");
}

#[test]
fn real_helios_users_trace_runs() {
    let Some(data) = data_folder() else { return };
    let dir = data.join("helios_user_jobs_dirlab");
    let Some(file) = std::fs::read_dir(&dir)
        .expect("helios folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "csv"))
    else {
        panic!("no CSV in {}", dir.display());
    };
    let out = ok(&[
        "fairness",
        &file.display().to_string(),
        "--policy",
        "fifo,astraea",
        "--gpus",
        "256",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON Report");
    assert!(metric(&report, "astraea.jain") > 0.0);
    assert!(
        metric(&report, "astraea.tenant_unfairness") <= metric(&report, "fifo.tenant_unfairness")
    );
}

#[test]
fn shares_from_the_artifacts_files() {
    let path = write("shares-trace.csv", &small_trace());
    // Tenant `a` gets 3/4 of 8 GPUs (quota 6), `b` 1/4 (quota 2); the name list puts `b` first.
    let shares = write("shares.csv", "name,share\na,3\nb,1\n");
    let names = write("names.lst", "b\na\n");
    let out = ok(&[
        "fairness",
        &path,
        "--gpus",
        "8",
        "--gpus-per-node",
        "4",
        "--shares",
        &shares,
        "--names",
        &names,
        "--placement",
        "consolidate-or-spread",
        "--policy",
        "astraea,yarn-fifo,fifo",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON Report");
    let findings = report["findings"].to_string();
    // `b`'s 4-GPU jobs exceed its quota of 2: dropped for every policy, and said so.
    assert!(findings.contains("share list of 2 tenants"), "{findings}");
    assert!(findings.contains("than their tenant's quota"), "{findings}");
    assert!(metric(&report, "astraea.avg_jct_s") > 0.0);
    // Bad rows name the file, row and column; a name list must match the share file.
    let bad = write("bad-shares.csv", "name,share\na,3\nb,0\n");
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--shares", &bad]),
        "bad-shares.csv: row 3, column `share`",
    );
    let missing = write("names-missing.lst", "a\nc\n");
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--shares", &shares, "--names", &missing]),
        "tenant `c` has no row in the share file",
    );
}

#[test]
fn earlier_spellings_still_work_with_a_warning() {
    let path = write("two-tenants-old.csv", &small_trace());
    let args = [
        "--gpus",
        "8",
        "--gpus-per-node",
        "4",
        "--policy",
        "fifo,astraea",
    ];
    let mut new = vec![
        "fairness",
        &path,
        "--input-format",
        "tiresias",
        "--format",
        "json",
    ];
    new.extend(args);
    let current = ok(&new);
    // `--trace FILE` as the input, `--format` naming the trace's format, `--output` the Report's.
    let mut old = vec![
        "fairness", "--trace", &path, "--format", "tiresias", "--output", "json",
    ];
    old.extend(args);
    let out = bubblelab(&old);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, current);
    let err = &out.stderr;
    for flag in [
        "--trace <job trace>",
        "--format <trace format>",
        "--output <format>",
    ] {
        assert!(
            err.contains(&format!("warning: `{flag}` is deprecated")),
            "{err}"
        );
    }
    // The job trace named by `--trace` was read, not overwritten with a Chrome trace; with an
    // input given as well, `--trace` over a job trace is refused.
    assert_eq!(
        std::fs::read_to_string(&path).expect("trace kept"),
        small_trace()
    );
    let other = write("two-tenants-other.csv", &small_trace());
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--trace", &other]),
        "is not a Chrome trace",
    );
    assert_eq!(
        std::fs::read_to_string(&other).expect("trace kept"),
        small_trace()
    );
    // `--chrome-trace` still writes the Chrome trace.
    let chrome = scratch("fairness-old-chrome.json");
    let _ = std::fs::remove_file(&chrome);
    let chrome_text = chrome.display().to_string();
    let mut old = vec!["fairness", &path, "--chrome-trace", &chrome_text];
    old.extend(args);
    let out = bubblelab(&old);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("`--chrome-trace` is deprecated"),
        "{}",
        out.stderr
    );
    assert!(std::fs::read_to_string(&chrome)
        .expect("chrome trace written")
        .contains("traceEvents"));
}

#[test]
fn deadlines_from_a_flag_or_the_chronus_artifacts_csv() {
    // `--slo-share` gives the synthetic trace's jobs deadlines; the Report compares misses.
    let out = ok(&[
        "fairness",
        "--policy",
        "fifo,slot-admission",
        "--slo-share",
        "0.7",
        "--gpus",
        "32",
    ]);
    assert!(out.contains("Deadlines: SLO jobs met"), "{out}");
    assert!(
        out.contains("Deadlines: slot admission (after Chronus) admitted"),
        "{out}"
    );
    // The Chronus artifact's CSV: minutes, `expect_time_list`, detected from its header.
    let csv = "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type\n\
0,vc_a,1,0,1,vgg16,30,1,45,10,0,strict\n\
1,vc_b,1,1,1,alexnet,20,1,20,10,1,best\n\
2,vc_a,2,2,1,resnet50,60,1,90-120,10-8,0,soft\n";
    let path = write("chronus.csv", csv);
    let json = ok(&[
        "fairness",
        &path,
        "--policy",
        "slot-admission",
        "--gpus",
        "8",
        "--format",
        "json",
    ]);
    assert!(
        json.contains("\"slot-admission.deadline_miss_rate\""),
        "{json}"
    );
    assert!(json.contains("3 jobs of 2 tenants"), "{json}");
    // Bad values get one line naming the flag or field.
    assert_bad_input(
        &bubblelab(&["fairness", "--slo-share", "0.5", "--deadline-factor", "2"]),
        "--deadline-factor",
    );
    assert_bad_input(
        &bubblelab(&["fairness", "--slo-share", "1.5"]),
        "fairness.deadlines.slo_share",
    );
}

#[test]
fn an_inference_service_beside_training_from_flags() {
    // The service's servers come on top of `--gpus`; the Report compares its SLO and
    // training's JCT, with preemptions priced by the migration lab.
    let out = ok(&[
        "fairness",
        "--policy",
        "separate-clusters,loan-reclaim",
        "--gpus",
        "32",
        "--service-peak-servers",
        "2",
        "--service-trough-servers",
        "1",
        "--checkpoint",
        "framework",
    ]);
    assert!(out.contains("on 48 GPUs (6 nodes × 8)"), "{out}");
    assert!(
        out.contains("Training beside inference: the service's SLO"),
        "{out}"
    );
    assert!(
        out.contains("preemption costs from the migration lab"),
        "{out}"
    );
    assert_bad_input(
        &bubblelab(&[
            "fairness",
            "--service-peak-servers",
            "2",
            "--service-trough-servers",
            "3",
        ]),
        "fairness.colocation.servers_trough",
    );
}

#[test]
fn any_parameter_by_set() {
    // Themis' knob by `--set`: f = 1 lets one app bid at a time, which is largest ρ first.
    let path = write("set-themis.csv", &small_trace());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "fairness",
            &path,
            "--gpus",
            "8",
            "--gpus-per-node",
            "4",
            "--policy",
            "largest-rho,themis",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let report: serde_json::Value = serde_json::from_str(&ok(&args)).expect("JSON Report");
        (
            metric(&report, "largest-rho.avg_jct_s"),
            metric(&report, "themis.avg_jct_s"),
        )
    };
    let (rho, themis) = run(&["--set", "themis.fairness_knob=1"]);
    assert!((rho - themis).abs() < 1e-9, "{rho} vs {themis}");
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--set", "themis.fairness_knob=2"]),
        "fairness.themis.fairness_knob: must be between 0 and 1, got 2",
    );
    assert_bad_input(
        &bubblelab(&["fairness", &path, "--set", "themis.knob"]),
        "--set",
    );
}
