//! Bad inputs and the exact messages they get. Each message names the field (or line/column)
//! and what was expected.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::share;
use bubblelab_core::Scenario;

const CASES: &[(&str, &str)] = &[
    ("", "not valid JSON at line 1, column 0: EOF while parsing a value"),
    ("[1]", "(top level): expected an object like {\"version\": 1, \"lab\": \"pipeline\", \"params\": {…}}"),
    (r#"{"lab":"pipeline"}"#, "version: missing; expected 1"),
    (r#"{"version":2,"lab":"pipeline"}"#, "version: this build reads format version 1, got 2"),
    (r#"{"version":1}"#, "lab: missing; expected one of {labs}"),
    (r#"{"version":1,"lab":"warp"}"#, "lab: unknown lab `warp`; expected one of {labs}"),
    (r#"{"version":1,"lab":"pipeline","extra":1}"#, "extra: unknown field; expected one of `version`, `lab`, `params`"),
    (
        r#"{"version":1,"lab":"resilience","params":{"cluster":{"dp":4}}}"#,
        "resilience.cluster.dp: tp × pp × dp must equal nodes × gpus_per_node = 256, got 8 × 4 × 4 = 128",
    ),
    (
        r#"{"version":1,"lab":"resilience","params":{"events":[{"at_iteration":3,"gpu":999}]}}"#,
        "resilience.events[0].gpu: must be below 256 (the cluster's GPUs), got 999",
    ),
    (
        r#"{"version":1,"lab":"resilience","params":{"events":[{"at_iteration":3}]}}"#,
        "resilience.events[0]: give exactly one of `gpu` or `node`",
    ),
    (
        r#"{"version":1,"lab":"resilience","params":{"events":[{"at_iteration":30,"until_iteration":20,"gpu":1,"slowdown":2}]}}"#,
        "resilience.events[0].until_iteration: must be after at_iteration (30) and at most iterations (600), got 20",
    ),
    (
        r#"{"version":1,"lab":"resilience","params":{"events":[{"at_iteration":3,"gpu":1,"dead":true,"link":"nic"}]}}"#,
        "resilience.events[0].link: a fail-stop takes the whole GPU; drop `link` or `dead`",
    ),
    (
        r#"{"version":1,"lab":"resilience","params":{"greyhound":{"benchmark_s":-1}}}"#,
        "resilience.greyhound.benchmark_s: must be between 0 and 86400, got -1",
    ),
    (
        r#"{"version":1,"lab":"resilience","params":{"detector":{"treshold":0.2}}}"#,
        "resilience.detector.treshold: unknown field `treshold`, expected one of `threshold`, `persistence`, `fit_window`, `heartbeat_timeout_s`, `window`, `z_threshold`, `cusum_k`, `cusum_h`, `match_window`",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"stages":0}}"#,
        "pipeline.stages: must be between 1 and 64, got 0",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"stagez":4}}"#,
        "pipeline.stagez: unknown field `stagez`, expected one of `schedules`, `stages`, `micro_batches`, `virtual_stages`, `forward_ns`, `backward_input_ns`, `backward_weight_ns`, `stage_times`, `stage_slowdown`, `p2p_ns`, `activation_bytes`, `w_memory_fraction`",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"stages":"four"}}"#,
        "pipeline.stages: invalid type: string \"four\", expected u32",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"schedules":["1f1b","pipedream"]}}"#,
        "pipeline.schedules[1]: unknown variant `pipedream`, expected one of `gpipe`, `1f1b`, `interleaved`, `zb-h1`, `zb-h2`, `zb-v`, `dualpipe`, `dualpipe-v`",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"schedules":["1f1b","1f1b"]}}"#,
        "pipeline.schedules[1]: `1f1b` is listed twice",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"micro_batches":6}}"#,
        "pipeline.micro_batches: must be a multiple of stages (4) for interleaved 1F1B, as in Megatron-LM, got 6",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"stage_slowdown":[1,1,-2,1]}}"#,
        "pipeline.stage_slowdown[2]: must be between 0.01 and 100, got -2",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"stage_times":[{"forward_ns":1}]}}"#,
        "pipeline.stage_times[0]: missing field `backward_input_ns`",
    ),
    (
        r#"{"version":1,"lab":"pipeline","params":{"schedules":["interleaved","zb-h1"],"stages":64,"micro_batches":1024,"virtual_stages":4}}"#,
        "pipeline.micro_batches: must be small enough that the schedules run at most 600000 ops in all, got 1024 (that is 720896 ops)",
    ),
    (
        r#"{"version":1,"lab":"sharing","params":{"pods":[{"count":2,"cpu_milli":1000,"memory_mib":10,"num_gpu":2,"gpu_milli":500}]}}"#,
        "sharing.pods[0].gpu_milli: a pod of 2 GPUs takes whole GPUs (1000), got 500",
    ),
    (
        r#"{"version":1,"lab":"sharing","params":{"inflation_percent":0}}"#,
        "sharing.inflation_percent: must be between 1 and 300, got 0",
    ),
    (
        r#"{"version":1,"lab":"elastic","params":{"workload":0,"jobs":[{"name":"a","submit_s":0,"app":"resnet","replicas":1,"batch_size":128}]}}"#,
        "elastic.jobs[0].app: unknown application 'resnet': expected one of bert, cifar10, deepspeech2, imagenet, ncf, yolov3",
    ),
    (
        r#"{"version":1,"lab":"elastic","params":{"gpus_per_node":8}}"#,
        "elastic.gpus_per_node: expected 1 to 4 (the artifact's nodes), got 8",
    ),
];

#[test]
fn every_bad_input_gets_its_message() {
    let mut wrong = Vec::new();
    // `{labs}`: the registry's labs, in its order.
    let labs = bubblelab_core::scenario::LABS.join(", ");
    for (input, expected) in CASES {
        let expected = expected.replace("{labs}", &labs);
        match Scenario::from_json(input) {
            Ok(_) => wrong.push(format!("{input}: accepted")),
            Err(e) if e.to_string() == expected => {}
            Err(e) => wrong.push(format!("{input}:\n  got      {e}\n  expected {expected}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn link_errors_say_which_layer_failed() {
    let msg = |payload: &str| share::decode(payload).unwrap_err().to_string();
    assert!(
        msg("%%%").starts_with("the link's scenario is not base64url text"),
        "{}",
        msg("%%%")
    );
    assert!(
        msg("AAAAAAAA").starts_with("the link's scenario does not decompress"),
        "{}",
        msg("AAAAAAAA")
    );
    let wrong_lab = share::decode_for_lab(
        "overlap",
        &share::encode(
            &bubblelab_core::presets::all()
                .next()
                .unwrap()
                .scenario()
                .unwrap(),
        ),
    );
    assert_eq!(
        wrong_lab.unwrap_err().to_string(),
        "the link opens the overlap lab but carries a pipeline scenario"
    );
}
