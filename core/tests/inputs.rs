//! Input slots: a file given to a lab's slot is read by the lab's own reader and gives the
//! Report that the same data given as parameters gives; a wrong slot, a second file in a
//! one-file slot and a bad file are refused by name.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::bubbles::{self, BubblesParams};
use bubblelab_core::labs::elastic::{self, ElasticParams, ElasticPolicy, PolluxSpec};
use bubblelab_core::labs::pipeline::pipemorph::load_run;
use bubblelab_core::labs::resilience::{detect_pai, ResilienceParams};
use bubblelab_core::labs::sharing::{self, openb, SharingParams, SharingPolicy};
use bubblelab_core::scenario::InputFile;
use bubblelab_core::{run, run_with_inputs, Scenario};

mod common;

const NODES: &str =
    "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nn1,104000,524288,2,T4\n";
const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n\
p0,3152,5600,1,810,,LS\np1,12500,57344,0,0,,BE\np2,24200,98304,4,1000,G2|T4,LS\n";
const WORKLOAD: &str = "name,time,application,num_replicas,batch_size\n\
cifar10-0,53,cifar10,2,2048\nncf-1,90,ncf,1,32768\n";

fn file<'a>(slot: &'a str, text: &'a str) -> InputFile<'a> {
    InputFile {
        slot,
        source: "given.csv",
        text,
    }
}

#[test]
fn sharing_lists_read_by_slot_equal_the_lists_as_parameters() {
    let base = SharingParams {
        seeds: 1,
        policies: vec![SharingPolicy::Fgd, SharingPolicy::BestFit],
        ..SharingParams::default()
    };
    let by_slot = run_with_inputs(
        &Scenario::Sharing(base.clone()),
        &[file("nodes", NODES), file("pods", PODS)],
        &mut |_, _| {},
    )
    .unwrap();
    let as_params = SharingParams {
        nodes: openb::parse_nodes(NODES).unwrap(),
        pods: openb::parse_pods(PODS).unwrap(),
        source: "given.csv".into(),
        ..base
    };
    assert_eq!(by_slot, sharing::run(&as_params, &mut |_, _| {}));
}

#[test]
fn an_elastic_workload_read_by_slot_equals_the_jobs_as_parameters() {
    let base = ElasticParams {
        policies: vec![ElasticPolicy::Tiresias, ElasticPolicy::Optimus],
        pollux: PolluxSpec {
            population: 4,
            generations: 2,
            seed: 1,
        },
        ..ElasticParams::default()
    };
    let by_slot = run_with_inputs(
        &Scenario::Elastic(base.clone()),
        &[file("workload", WORKLOAD)],
        &mut |_, _| {},
    )
    .unwrap();
    let as_params = ElasticParams {
        workload: 0,
        jobs: elastic::workload::parse_workload(WORKLOAD).unwrap(),
        ..base
    };
    assert_eq!(by_slot, run(&Scenario::Elastic(as_params)).unwrap());
}

#[test]
fn wrong_slots_second_files_and_bad_files_are_refused_by_name() {
    let sharing = Scenario::for_lab("sharing").unwrap();
    let e = run_with_inputs(&sharing, &[file("trace", PODS)], &mut |_, _| {}).unwrap_err();
    assert_eq!(
        e.to_string(),
        "input: unknown input `trace`; this lab reads nodes, pods"
    );
    let e = run_with_inputs(
        &sharing,
        &[file("pods", PODS), file("pods", PODS)],
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("`pods` takes one file"), "{e}");
    let e = run_with_inputs(&sharing, &[file("pods", "a,b\n1,2\n")], &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().starts_with("given.csv: "), "{e}");
    let migration = Scenario::for_lab("migration").unwrap();
    let e = run_with_inputs(&migration, &[file("trace", "x")], &mut |_, _| {}).unwrap_err();
    assert!(
        e.to_string().contains("this lab reads no input files"),
        "{e}"
    );
}

/// A Vidur all-reduce profile: 8 ranks on one node at two sizes (sizes per rank, times in ms).
const VIDUR: &str = ",time_stats.all_reduce.min,time_stats.all_reduce.max,time_stats.all_reduce.mean,\
time_stats.all_reduce.median,time_stats.all_reduce.std,rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n\
0,0.04,0.075,0.057,0.056,0.0143,0,8,1048576,all_reduce,8,8\n\
1,0.30,0.40,0.35,0.34,0.01,0,8,67108864,all_reduce,8,8\n";

#[test]
fn a_vidur_profile_lays_its_points_over_the_cost_curves() {
    let cost = Scenario::for_lab("cost").unwrap();
    let curves = run(&cost).unwrap();
    let with = run_with_inputs(&cost, &[file("measured", VIDUR)], &mut |_, _| {}).unwrap();
    let measured: Vec<_> = with
        .series
        .iter()
        .filter(|s| s.name.contains("measured (Vidur)"))
        .collect();
    assert_eq!(measured.len(), 2, "a time and a bus-bandwidth curve");
    assert_eq!(measured[0].points.len(), 2, "one point per size");
    assert_eq!(with.series.len(), curves.series.len() + 2);
    // Another group: the curves alone, and a finding that names the groups the file has.
    let two_nodes = cost.with_fields(&[("ranks", "16")]).unwrap();
    let other = run_with_inputs(&two_nodes, &[file("measured", VIDUR)], &mut |_, _| {}).unwrap();
    assert_eq!(other.series.len(), run(&two_nodes).unwrap().series.len());
    assert!(
        other
            .findings
            .iter()
            .any(|f| f.starts_with("given.csv: not laid over the curves")
                && f.contains("all-reduce on 8 ranks")),
        "{:?}",
        other.findings
    );
    // A file that is not a profile: refused, naming the file.
    let e = run_with_inputs(&cost, &[file("measured", "a,b\n1,2\n")], &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().starts_with("given.csv: "), "{e}");
}

/// The stage logs of PipeMorph's 1F1B run at 0.06 s delay, as (file name, text) in name order.
fn stage_logs() -> Option<Vec<(String, String)>> {
    let dir = common::data_dir()?.join("pipemorph_pp4_stage_logs/ae/fig15/1F1B/2_3/0.06");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    Some(
        paths
            .iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read_to_string(p).unwrap())
            })
            .collect(),
    )
}

fn slot_files<'a>(slot: &'a str, files: &'a [(String, String)]) -> Vec<InputFile<'a>> {
    files
        .iter()
        .map(|(name, text)| InputFile {
            slot,
            source: name,
            text,
        })
        .collect()
}

#[test]
fn stage_logs_by_slot_give_the_measured_run_and_its_squeezed_bubbles() {
    let Some(files) = stage_logs() else {
        return;
    };
    let inputs = slot_files("stage_logs", &files);
    let log = load_run(&files).unwrap();
    let pipeline = Scenario::for_lab("pipeline").unwrap();
    assert_eq!(
        run_with_inputs(&pipeline, &inputs, &mut |_, _| {}).unwrap(),
        log.report(&files[0].0)
    );
    let params = BubblesParams::default();
    assert_eq!(
        run_with_inputs(&Scenario::Bubbles(params.clone()), &inputs, &mut |_, _| {}).unwrap(),
        bubbles::run_log(&params, &log, &bubbles::log_source(&files[0].0)).unwrap()
    );
    // A bad log is refused by its file and line.
    let bad = [(files[0].0.clone(), "[RANK0] F @ x\n".to_string())];
    let e =
        run_with_inputs(&pipeline, &slot_files("stage_logs", &bad), &mut |_, _| {}).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("{}: line 1: ", files[0].0)),
        "{e}"
    );
}

#[test]
fn a_pai_file_by_slot_runs_the_detectors_on_it() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let text =
        std::fs::read_to_string(dir.join("alibaba_pai_minibatch_time/job_1_norm.csv")).unwrap();
    let params = ResilienceParams::default();
    let pai = InputFile {
        slot: "pai",
        source: "job_1_norm.csv",
        text: &text,
    };
    assert_eq!(
        run_with_inputs(
            &Scenario::Resilience(params.clone()),
            &[pai],
            &mut |_, _| {}
        )
        .unwrap(),
        detect_pai("job_1_norm.csv", &text, &params.detector).unwrap()
    );
    let bad = InputFile {
        text: ",worker,gpu,time,batch_time_norm\n1,x,25,1,5\n",
        ..pai
    };
    let e = run_with_inputs(&Scenario::Resilience(params), &[bad], &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().starts_with("job_1_norm.csv: line 2"), "{e}");
}

#[test]
fn a_shares_file_is_read_into_the_parameters_and_a_trace_only_when_the_lab_runs() {
    let fairness = Scenario::for_lab("fairness").unwrap();
    let shares = InputFile {
        slot: "shares",
        source: "shares.csv",
        text: "name,share\na,2\nb,1\n",
    };
    let Scenario::Fairness(read) = fairness.with_inputs(&[shares]).unwrap() else {
        panic!("a fairness scenario")
    };
    let json = serde_json::to_string(&read.tenant_weights).unwrap();
    assert_eq!(
        json,
        r#"{"shares":[{"name":"a","share":2.0},{"name":"b","share":1.0}]}"#
    );
    let agentic = Scenario::for_lab("agentic").unwrap();
    let e = agentic.with_inputs(&[file("trace", "x")]).unwrap_err();
    assert!(e.to_string().contains("read when the lab runs"), "{e}");
}

/// Tenant shares read into a scenario, then a names file alone orders them (a page reads the
/// two files one after the other); names without shares are refused by name.
#[test]
fn a_names_file_orders_the_shares_the_scenario_holds() {
    use bubblelab_core::labs::fairness::{FairnessParams, TenantWeights};
    let fairness = Scenario::Fairness(FairnessParams::default());
    let shares = "name,share\nb,1\na,3\n";
    let with_shares = fairness.with_inputs(&[file("shares", shares)]).unwrap();
    let ordered = with_shares.with_inputs(&[file("names", "a\nb\n")]).unwrap();
    let at_once = fairness
        .with_inputs(&[file("shares", shares), file("names", "a\nb\n")])
        .unwrap();
    assert_eq!(ordered, at_once);
    let Scenario::Fairness(p) = ordered else {
        panic!("a fairness scenario")
    };
    let TenantWeights::Shares(list) = p.tenant_weights else {
        panic!("shares")
    };
    let names: Vec<&str> = list.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let e = fairness
        .with_inputs(&[file("names", "a\nb\n")])
        .unwrap_err();
    assert!(e.to_string().contains("give `shares` too"), "{e}");
}
