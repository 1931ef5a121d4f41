//! `bubblelab sharing`: FGD's placement experiment as a user runs it — the preset, flags, the
//! real openb lists from files, and bad input named by file, line and column.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use common::{assert_bad_input, bubblelab, data_folder, metric, ok, scratch};

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["sharing"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    serde_json::from_str(&ok(&all)).unwrap()
}

#[test]
fn the_preset_ranks_fgd_first_and_flags_change_the_run() {
    let r = json(&[]);
    let fgd = metric(&r, "fgd.allocated_percent");
    for other in [
        "random",
        "dot-prod",
        "gpu-clustering",
        "gpu-packing",
        "best-fit",
    ] {
        assert!(
            fgd > metric(&r, &format!("{other}.allocated_percent")),
            "{other}"
        );
    }
    let r = json(&[
        "--policy",
        "fgd,best-fit",
        "--seeds",
        "2",
        "--inflation-percent",
        "110",
    ]);
    assert_eq!(r["tables"][0]["rows"].as_array().unwrap().len(), 2);
    assert!(r["title"].as_str().unwrap().contains("110 %"));
    assert!(r["title"].as_str().unwrap().contains("2 seeds"));
}

#[test]
fn bad_flags_and_lists_are_named() {
    assert_bad_input(&bubblelab(&["sharing", "--policy", "tetris"]), "--policy");
    assert_bad_input(&bubblelab(&["sharing", "--seeds", "0"]), "sharing.seeds");
    let nodes = scratch("bad-nodes.csv");
    std::fs::write(
        &nodes,
        "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1000,0,G2\n",
    )
    .unwrap();
    let run = bubblelab(&["sharing", "--nodes", nodes.to_str().unwrap()]);
    assert_bad_input(&run, "bad-nodes.csv");
    assert!(run.stderr.contains("gpu"), "{}", run.stderr);
    assert!(run.stderr.contains('2'), "{}", run.stderr);
}

#[test]
fn the_real_openb_lists_run() {
    let Some(data) = data_folder() else { return };
    let dir = data.join("alibaba_gpu_v2023_openb");
    let r = json(&[
        "--nodes",
        dir.join("openb_node_list_gpu_node.csv").to_str().unwrap(),
        "--pods",
        dir.join("openb_pod_list_default.csv").to_str().unwrap(),
        "--policy",
        "best-fit,fgd",
        "--seeds",
        "1",
    ]);
    let title = r["title"].as_str().unwrap();
    assert!(
        title.contains("4076 pods") && title.contains("6212 GPUs"),
        "{title}"
    );
    assert!(metric(&r, "fgd.allocated_percent") > metric(&r, "best-fit.allocated_percent"));
}

#[test]
fn the_timed_experiment_from_flags() {
    let r = json(&[
        "--experiment",
        "timed",
        "--policy",
        "fgd",
        "--pods-arriving",
        "400",
        "--load",
        "1.0",
    ]);
    let rows = r["tables"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "exclusive, packing, unpacking");
    assert!(r["title"].as_str().unwrap().contains("400 pods"));
    assert!(metric(&r, "fgd.mean_slowdown") >= 1.0);
    assert_bad_input(
        &bubblelab(&["sharing", "--experiment", "timed", "--load", "0"]),
        "sharing.timed.load",
    );
    assert_bad_input(
        &bubblelab(&["sharing", "--unpack-below", "1.5"]),
        "sharing.timed.unpack_below",
    );
}
