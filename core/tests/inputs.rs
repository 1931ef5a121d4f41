//! Input slots: a file given to a lab's slot is read by the lab's own reader and gives the
//! Report that the same data given as parameters gives; a wrong slot, a second file in a
//! one-file slot and a bad file are refused by name.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::elastic::{self, ElasticParams, ElasticPolicy, PolluxSpec};
use bubblelab_core::labs::sharing::{self, openb, SharingParams, SharingPolicy};
use bubblelab_core::scenario::InputFile;
use bubblelab_core::{run, run_with_inputs, Scenario};

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
    let pipeline = Scenario::for_lab("pipeline").unwrap();
    let e = run_with_inputs(&pipeline, &[file("trace", "x")], &mut |_, _| {}).unwrap_err();
    assert!(
        e.to_string().contains("this lab reads no input files"),
        "{e}"
    );
}
