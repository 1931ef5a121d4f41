//! `bubblelab elastic`: Pollux against its artifact's baselines as a user runs it — a workload
//! file in the artifact's format, flags, and bad input named by file, line and column.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use common::{assert_bad_input, bubblelab, metric, ok, scratch};

/// A small workload in the artifact's format (the first jobs of its workload-6, smaller).
const SMALL: &str = "name,time,application,num_replicas,batch_size
cifar10-0,53,cifar10,4,2048
cifar10-1,154,cifar10,2,2048
deepspeech2-2,352,deepspeech2,4,320
ncf-3,400,ncf,1,32768
bert-4,600,bert,4,384
";

fn small_file() -> String {
    let path = scratch("elastic-small.csv");
    std::fs::write(&path, SMALL).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_workload_file_runs_every_policy_and_flags_change_the_run() {
    let file = small_file();
    let base = [
        "elastic",
        "--workload",
        file.as_str(),
        "--nodes",
        "2",
        "--population",
        "8",
        "--generations",
        "3",
        "--format",
        "json",
    ];
    let r: serde_json::Value = serde_json::from_str(&ok(&base)).unwrap();
    assert_eq!(r["tables"][0]["rows"].as_array().unwrap().len(), 3);
    assert!(r["title"].as_str().unwrap().contains("5 jobs"));
    for p in ["pollux", "optimus", "tiresias"] {
        assert!(metric(&r, &format!("{p}.avg_jct_s")) > 0.0, "{p}");
    }
    let mut args = base.to_vec();
    args.extend_from_slice(&["--policy", "tiresias,optimus", "--restart-s", "90"]);
    let r: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(r["tables"][0]["rows"].as_array().unwrap().len(), 2);
    assert!(r["title"].as_str().unwrap().contains("90 s per restart"));
    let mut args = base.to_vec();
    args.extend_from_slice(&["--checkpoint", "framework"]);
    let r: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert!(
        r["title"].as_str().unwrap().contains("framework"),
        "{}",
        r["title"]
    );
}

#[test]
fn bad_flags_and_workloads_are_named() {
    assert_bad_input(&bubblelab(&["elastic", "--policy", "gandiva"]), "--policy");
    assert_bad_input(
        &bubblelab(&["elastic", "--gpus-per-node", "8"]),
        "elastic.gpus_per_node",
    );
    assert_bad_input(
        &bubblelab(&["elastic", "--workload", "9"]),
        "elastic.workload",
    );
    let path = scratch("bad-workload.csv");
    std::fs::write(
        &path,
        "name,time,application,num_replicas,batch_size\na,1,resnet,1,128\n",
    )
    .unwrap();
    let run = bubblelab(&["elastic", "--workload", path.to_str().unwrap()]);
    assert_bad_input(&run, "bad-workload.csv");
    assert!(run.stderr.contains("application"), "{}", run.stderr);
    assert!(run.stderr.contains("row 2"), "{}", run.stderr);
}
