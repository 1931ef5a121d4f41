//! `bubblelab kineto` run as a user would: overlap tables from Kineto traces (plain and gzip),
//! JSON/CSV output, the Chrome-trace re-export, and one-line errors naming the file and the
//! byte or event.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn assert_bad_input(run: &Run, expected: &str) {
    assert_eq!(run.code, Some(2), "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(expected),
        "expected {expected:?} in {:?}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bubblelab-kineto-tests");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir.join(name)
}

fn write_scratch(name: &str, bytes: &[u8]) -> String {
    let path = scratch(name);
    std::fs::write(&path, bytes).expect("scratch file written");
    path.display().to_string()
}

fn kernel(name: &str, stream: i64, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":{stream}}}}}"#
    )
}

/// Rank `rank` of 2: comm [0,10) and [20,30) µs, compute [5,25): 50 % overlap.
fn rank_trace(rank: i64) -> String {
    format!(
        r#"{{"distributedInfo":{{"backend":"nccl","rank":{rank},"world_size":2}},"traceEvents":[{},{},{},{}]}}"#,
        r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":40}"#,
        kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 20, 1000.0, 10.0),
        kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 20, 1020.0, 10.0),
        kernel("void gemm<float>", 7, 1005.0, 20.0),
    )
}

/// A gzip member around `data` (RFC 1952) holding one stored DEFLATE block (RFC 1951 §3.2.4:
/// BFINAL = 1, BTYPE = 00, then LEN and its complement); `data` must be under 64 KiB.
fn gzip(data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(data.len()).expect("under 64 KiB");
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x01];
    out.extend(len.to_le_bytes());
    out.extend((!len).to_le_bytes());
    out.extend(data);
    out.extend(bubblelab_core::kineto::crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

#[test]
fn prints_the_overlap_table_for_plain_and_gzip_ranks() {
    let r1 = write_scratch("rank1.json", rank_trace(1).as_bytes());
    let r0 = write_scratch("rank0.json.gz", &gzip(rank_trace(0).as_bytes()));
    let text = ok(&["kineto", &r1, &r0]);
    assert!(text.contains("HTA 0.5.0 overlap (%)"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("rank ") && l.contains(".json"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].contains("rank0.json.gz") && rows[0].trim_end().ends_with("50"),
        "{text}"
    );
    assert!(rows[1].contains("rank1.json"), "{text}");
    assert!(text.contains("Holistic Trace Analysis 0.5.0"), "{text}");
}

#[test]
fn json_and_csv_formats() {
    let r0 = write_scratch("fmt0.json", rank_trace(0).as_bytes());
    let json = ok(&["kineto", &r0, "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("stdout is JSON");
    assert_eq!(report["lab"], "kineto");
    let metric = |key: &str| {
        report["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .and_then(|m| m["value"].as_f64())
    };
    assert_eq!(metric("rank0.overlap_pct"), Some(50.0));
    assert_eq!(metric("all.exposed_comm_ms"), Some(0.01));
    let csv = ok(&["kineto", &r0, "--format", "csv"]);
    assert!(csv.starts_with("key,label,value,unit\n"), "{csv}");
    assert!(
        csv.contains("rank0.overlap_pct,rank 0 comm–comp overlap (HTA 0.5.0),50,%"),
        "{csv}"
    );
    assert!(csv.contains("\nrank,source,GPU events,"), "{csv}");
}

#[test]
fn trace_flag_writes_the_timelines_as_chrome_trace() {
    let r0 = write_scratch("tr0.json", rank_trace(0).as_bytes());
    let out = scratch("tr0.trace.json");
    let _ = std::fs::remove_file(&out);
    ok(&["kineto", &r0, "--trace", out.to_str().unwrap()]);
    let chrome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let events = chrome["traceEvents"].as_array().unwrap();
    let spans: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(spans.len(), 3);
    assert!(spans
        .iter()
        .any(|e| e["cat"] == "comm" && e["ts"] == 20.0 && e["dur"] == 10.0));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == "stream 20"));
}

#[test]
fn errors_name_the_file_and_the_byte_or_event() {
    let missing = scratch("no-such-trace.json");
    let _ = std::fs::remove_file(&missing);
    let m = missing.display().to_string();
    assert_bad_input(
        &bubblelab(&["kineto", &m]),
        &format!("{m}: cannot open: no such file or folder"),
    );

    let text = rank_trace(0);
    let cut = text.find("void gemm").unwrap();
    let t = write_scratch("cut.json", &text.as_bytes()[..cut]);
    assert_bad_input(
        &bubblelab(&["kineto", &t]),
        &format!("{t}: byte {cut} (traceEvents[3]): EOF while parsing a string (the JSON ends early: truncated file?)"),
    );

    let gz = gzip(text.as_bytes());
    let g = write_scratch("cut.json.gz", &gz[..gz.len() / 2]);
    assert_bad_input(
        &bubblelab(&["kineto", &g]),
        &format!(
            "{g}: gzip data, byte {}: truncated: the DEFLATE data ends before its final block",
            gz.len() / 2
        ),
    );

    let bad = write_scratch(
        "bad-dur.json",
        br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":"long","args":{"stream":7}}]}"#,
    );
    assert_bad_input(
        &bubblelab(&["kineto", &bad]),
        &format!(r#"{bad}: byte 65 (traceEvents[0]): GPU event "k": expected `dur` as a number"#),
    );

    let not_trace = write_scratch("not-trace.json", br#"{"stage_times":[1,2]}"#);
    assert_bad_input(
        &bubblelab(&["kineto", &not_trace]),
        "no `traceEvents` array: this is not a Chrome/Kineto trace",
    );

    let dir = scratch("a-folder");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    assert_bad_input(&bubblelab(&["kineto", &d]), "is a folder, not a file");

    let run = bubblelab(&["kineto"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
}

#[test]
fn reads_the_real_dlrm_ranks() {
    let Some(dir) = data_folder() else { return };
    let kineto = dir.join("param_dlrm_8rank_kineto_et/dlrm_kineto");
    let mut files: Vec<String> = std::fs::read_dir(&kineto)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".pt.trace.json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 4);
    let hta = dir.join("hta_kineto_traces/trace_diff/control/control.json.gz");
    let mut args = vec!["kineto", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let hta = hta.display().to_string();
    args.push(&hta);
    let run = |args: &[&str]| -> serde_json::Value { serde_json::from_str(&ok(args)).unwrap() };
    let report = run(&args);
    let metric_of = |report: &serde_json::Value, key: &str| {
        report["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .and_then(|m| m["value"].as_f64())
            .unwrap_or_else(|| panic!("{key} missing"))
    };
    // HTA 0.5.0's values, pinned in core/tests/kineto_real.rs; here the CLI must print the
    // same. The HTA trace is also rank 3, so the two rank-3 rows are keyed by input position.
    let metric = |key: &str| metric_of(&report, key);
    for (key, pct) in [
        ("rank0.overlap_pct", 4.501_552_259_399_792_5),
        ("rank1.overlap_pct", 2.470_007_057_163_021),
        ("rank2.overlap_pct", 7.875_143_184_421_534_5),
        ("trace3.overlap_pct", 3.314_917_127_071_823),
        ("trace4.overlap_pct", 47.025_130_178_854_425),
        ("trace4.exact_overlap_pct", 46.237_196_930_320_73),
    ] {
        assert!((metric(key) - pct).abs() < 1e-9, "{key}");
    }
    // HTA's include_last_profiler_step=True keeps control.json.gz's last step.
    args.insert(1, "--include-last-profiler-step");
    let last = run(&args);
    let got = metric_of(&last, "trace4.overlap_pct");
    assert!((got - 46.237_196_930_320_73).abs() < 1e-9, "{got}");
    assert_eq!(report["tables"][0]["rows"].as_array().unwrap().len(), 5);
    assert_eq!(report["timelines"].as_array().unwrap().len(), 5);
}
