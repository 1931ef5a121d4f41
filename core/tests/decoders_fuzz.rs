//! Every decoder of user input, fuzzed: scenario JSON, `--set` assignments, share links, sweep files and their tables, graph JSON, calibrated
//! profiles, the five cluster-trace readers, openb's node and pod lists (sharing lab), the Pollux artifact's workload CSV (elastic lab), Mooncake and Azure request traces, PAI mini-batch
//! CSV, Vidur collective CSV and PipeMorph rank logs (Kineto and its gzip: `kineto_fuzz`).
//! Each target takes random bytes and mutations of a valid input (byte flips, deletions,
//! duplications, insertions, truncation) and must return, never panic; a hang shows as a run
//! that does not finish.
//!
//! `BUBBLELAB_FUZZ_CASES` sets the cases per target (default 256: the CI smoke). The recorded
//! volume run is `BUBBLELAB_FUZZ_CASES=1000000 cargo test --release -p bubblelab-core --test
//! decoders_fuzz` (docs/PERFORMANCE.md, "Fuzzing").
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::graph::build::{build, ModelKind, Parallelism, Workload};
use bubblelab_core::hw::Calibration;
use bubblelab_core::labs::agentic::traces as agentic_traces;
use bubblelab_core::labs::fairness::traces::{self as fairness_traces, ReadOptions, TraceFormat};
use bubblelab_core::labs::pipeline::pipemorph;
use bubblelab_core::labs::resilience::pai;
use bubblelab_core::sweep::spec::Spec;
use bubblelab_core::{cost::vidur, graph, presets, share, Scenario, ScenarioError};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("BUBBLELAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Edit {
    Flip(prop::sample::Index, u8),
    Delete(prop::sample::Index, usize),
    Duplicate(prop::sample::Index, usize),
    Insert(prop::sample::Index, Vec<u8>),
    Truncate(prop::sample::Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(
                prop_oneof![
                    any::<u8>(),
                    prop::sample::select(b",\n\"{}[]:-.0123456789eE ".to_vec())
                ],
                1..16
            )
        )
            .prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<prop::sample::Index>().prop_map(Edit::Truncate),
    ]
}

fn apply(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for e in edits {
        let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len) };
        match e {
            Edit::Flip(i, b) => {
                if !v.is_empty() {
                    let k = at(i, v.len());
                    v[k] ^= b | 1;
                }
            }
            Edit::Delete(i, n) => {
                let k = at(i, v.len());
                let end = (k + n).min(v.len());
                v.drain(k..end);
            }
            Edit::Duplicate(i, n) => {
                let k = at(i, v.len());
                let end = (k + n).min(v.len());
                let piece = v[k..end].to_vec();
                v.splice(k..k, piece);
            }
            Edit::Insert(i, bytes) => {
                let k = at(i, v.len() + 1);
                v.splice(k..k, bytes.iter().copied());
            }
            Edit::Truncate(i) => {
                let k = at(i, v.len() + 1);
                v.truncate(k);
            }
        }
    }
    v
}

/// Inputs for one decoder: random bytes, or one of `seeds` with 1–8 edits.
fn input(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = String> {
    let n = seeds.len();
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..400),
        4 => (0..n, prop::collection::vec(edit(), 1..8))
            .prop_map(move |(s, edits)| apply(&seeds[s], &edits)),
    ]
    .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs `decode` on `cases()` inputs built from `seeds`; the target's name is in any failure.
fn fuzz(name: &str, seeds: &[&str], decode: impl Fn(&str)) {
    let seeds: Vec<Vec<u8>> = seeds.iter().map(|s| s.as_bytes().to_vec()).collect();
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    #[allow(clippy::disallowed_methods)] // the fuzz run's wall time, printed for the record
    let t0 = std::time::Instant::now();
    runner
        .run(&input(seeds), |text| {
            decode(&text);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    println!(
        "{name}: {} inputs, 0 panics, {:.1} s",
        cases(),
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn scenario_json() {
    let texts: Vec<String> = presets::all()
        .map(|p| p.scenario().unwrap().to_json())
        .collect();
    let seeds: Vec<&str> = texts.iter().map(String::as_str).collect();
    fuzz("scenario JSON", &seeds, |t| {
        let _ = Scenario::from_json(t);
    });
}

/// `--set PATH=VALUE` on every lab's first preset: paths with fields, items and the lab's
/// name; values as JSON, bare words and comma lists.
#[test]
fn set_assignments() {
    let seeds = [
        "stages=8",
        "pipeline.stage_slowdown[2]=1.5",
        "schedules=1f1b,zb-h1",
        "astraea.quota=fair",
        "cluster.nodes=16",
        "policies=[\"fifo\",\"srtf\"]",
        "timed.load=0.9",
        "controllers[0].kind=concur",
        "a[1][2].b=[]",
    ];
    let labs: Vec<Scenario> = bubblelab_core::scenario::LABS
        .iter()
        .map(|lab| Scenario::for_lab(lab).expect("every lab has a first preset"))
        .collect();
    fuzz("set assignments", &seeds, |text| {
        if let Ok((path, value)) = bubblelab_core::edit::split_assignment(text) {
            for scenario in &labs {
                let _ = scenario.with_fields(&[(path, value)]);
            }
        }
    });
}

#[test]
fn share_links() {
    let links: Vec<String> = presets::all()
        .map(|p| {
            let link = share::link("http://h/", &p.scenario().unwrap());
            link.split_once('#').unwrap().1.to_string()
        })
        .collect();
    let seeds: Vec<&str> = links.iter().map(String::as_str).collect();
    fuzz("share links", &seeds, |t| {
        let route = share::parse_fragment(t);
        if let Some(p) = route.payload {
            let _ = share::decode_for_lab(&route.lab, &p);
        }
        let _ = share::decode(t);
        let _ = share::decode_link(t);
    });
}

/// Sweep files (`bubblelab sweep`), and the tables `--resume` reads back.
#[test]
fn sweep_files() {
    let seeds = [
        r#"{"base": "pipeline", "set": {"schedules": ["gpipe"]}, "axes": [{"path": "stages", "values": [2, 4]}, {"zip": [{"path": "micro_batches", "range": [8, 17, 8]}, {"path": "forward_ns", "values": [1000, 2000]}]}]}"#,
        r#"{"base": "agentic", "inputs": {"trace": "a.csv"}, "axes": [{"input": "trace", "values": ["b.csv", "c.csv"]}]}"#,
        r#"{"base": {"version": 1, "lab": "cost", "params": {}}, "axes": [{"path": "bytes", "range": [1, 5, 0.5]}]}"#,
    ];
    let table = "point,stages,metric,value,unit,error\n0,2,gpipe.bubble_ratio,0.2,ratio,\n1,4,,,,\"run failed\"\n";
    fuzz("sweep files", &seeds, |t| {
        if let Ok(spec) = Spec::from_json(t) {
            let _ = spec.rows_in(&spec.header());
            let _ = spec.rows_in(table);
            let _ = spec.point_inputs(&spec.point(spec.len() - 1));
        }
    });
    let spec = Spec::from_json(seeds[0]).expect("a valid sweep");
    let whole = format!(
        "{}{}",
        spec.header(),
        spec.rows(0, &Err(ScenarioError::Run("x".into())))
    );
    fuzz("sweep tables", &[&whole, table], |t| {
        let _ = spec.rows_in(t);
    });
}

#[test]
fn graph_json() {
    let g = build(
        &ModelKind::Gpt3Curie.spec(),
        &Parallelism::default(),
        &Workload::default(),
    )
    .unwrap();
    let text = graph::json::to_json(&g);
    // The whole graph is large; its head and a small tail keep mutations meaningful.
    let head: String = text.chars().take(6_000).collect();
    fuzz("graph JSON", &[&text, &head], |t| {
        let _ = graph::json::from_json(t);
    });
}

const CALIBRATION: &str = r#"{"version": 1, "device": "NVIDIA H100 80GB HBM3",
 "gemm": [{"dtype": "bf16", "flops": 1.0e9, "flops_per_s": 2.0e14}],
 "memory": [{"bytes": 1.0e6, "bytes_per_s": 1.0e12}],
 "collectives": [{"kind": "all-reduce", "ranks": 8, "ranks_per_node": 8,
   "points": [{"bytes": 1048576, "bus_bytes_per_s": 5.0e10}]}]}"#;

#[test]
fn calibrated_profiles() {
    fuzz("calibration JSON", &[CALIBRATION], |t| {
        let _ = Calibration::from_json(t);
    });
}

const DIRLAB: &str = "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n\
1,3,8,0,2,10,2.5,0,Failed\n2,7,0,4,1,5,50,0,Pass\n";
const TIRESIAS: &str = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval,user\n\
5,2,100,1000,resnet50,3600,0,alice\n9,4,40.25,10,bert,7200,0,bob\n";
const HELIOS: &str = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n\
6zw2,uA,vc1,8,48,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:10,2020-04-01 01:00:10,3600,3\n";
const ALIBABA: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
openb-pod-0000,12000,16384,1,1000,,LS,Running,100,1100,100\nopenb-pod-0001,6000,12288,1,460,,BE,Running,200,500,250\n";
const PHILLY: &str = r#"[{"status": "Pass", "vc": "vcB", "jobid": "a_1", "user": "u1",
 "submitted_time": "2017-10-03 04:31:42",
 "attempts": [{"start_time": "2017-10-03 04:31:43", "end_time": "2017-10-03 04:32:43",
   "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]}]}]"#;

#[test]
fn cluster_traces() {
    let skip = ReadOptions {
        skip_bad_rows: true,
        ..ReadOptions::default()
    };
    for (format, seed) in [
        (TraceFormat::Dirlab, DIRLAB),
        (TraceFormat::Tiresias, TIRESIAS),
        (TraceFormat::Helios, HELIOS),
        (TraceFormat::AlibabaOpenb, ALIBABA),
        (TraceFormat::Philly, PHILLY),
    ] {
        fuzz(&format!("cluster trace {format:?}"), &[seed], |t| {
            let _ = fairness_traces::detect(t);
            let _ = fairness_traces::parse(format, t, &ReadOptions::default());
            let _ = fairness_traces::parse(format, t, &skip);
        });
    }
}

#[test]
fn tenant_shares() {
    fuzz(
        "tenant shares + name list",
        &["name,share\nu1,8.5\nu2,4.5\n", "u1\nu2\n"],
        |t| {
            if let Ok(s) = fairness_traces::shares::parse_shares(t) {
                let _ = fairness_traces::shares::order_by_names(&s, t);
                let _ = fairness_traces::shares::order_by_names(&s, "u1\nu2\n");
            }
        },
    );
}

const OPENB_NODES: &str =
    "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nn1,104000,524288,2,T4\n";
const OPENB_PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n\
p0,3152,5600,1,810,,LS\np1,12500,57344,0,0,,BE\np2,24200,98304,4,1000,G2|T4,LS\n";

#[test]
fn openb_lists() {
    use bubblelab_core::labs::sharing::{openb, run, SharingParams};
    fuzz("openb node + pod lists", &[OPENB_NODES, OPENB_PODS], |t| {
        let nodes = openb::parse_nodes(t);
        let pods = openb::parse_pods(t);
        // Whatever reads, small enough to run, runs without a panic.
        let nodes = nodes.unwrap_or_else(|_| openb::parse_nodes(OPENB_NODES).unwrap());
        let pods = pods.unwrap_or_else(|_| openb::parse_pods(OPENB_PODS).unwrap());
        let params = SharingParams {
            nodes,
            pods,
            seeds: 1,
            ..SharingParams::default()
        };
        let gpus: u64 = params
            .nodes
            .iter()
            .map(|g| u64::from(g.count) * u64::from(g.gpus))
            .sum();
        if gpus <= 64 && params.validate().is_ok() {
            let _ = run(&params, &mut |_, _| {});
        }
    });
}

const MOONCAKE: &str =
    "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 10, \"hash_ids\": [0, 1, 2]}\n\
{\"timestamp\": 5000, \"input_length\": 1700, \"output_length\": 20, \"hash_ids\": [0, 1, 2, 4]}\n";
const AZURE: &str = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n\
2023-11-16 18:15:50.9951690,396,109\n";

#[test]
fn request_traces() {
    for (format, seed) in [
        (agentic_traces::TraceFormat::Mooncake, MOONCAKE),
        (agentic_traces::TraceFormat::Azure, AZURE),
    ] {
        fuzz(&format!("request trace {format:?}"), &[seed], |t| {
            let _ = agentic_traces::detect(t);
            let _ = agentic_traces::parse(format, t);
        });
    }
}

const PAI: &str = ",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n1,1,25,1,509\n2,0,25,2,470\n";

#[test]
fn pai_minibatch_csv() {
    fuzz("PAI CSV", &[PAI], |t| {
        let _ = pai::parse(t);
    });
}

const VIDUR: &str = ",time_stats.all_reduce.min,time_stats.all_reduce.max,time_stats.all_reduce.mean,time_stats.all_reduce.median,time_stats.all_reduce.std,rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n\
0,0.031,0.077,0.0503,0.043,0.0194,0,2,2048,all_reduce,1,8\n";

#[test]
fn vidur_csv() {
    fuzz("Vidur CSV", &[VIDUR], |t| {
        let _ = vidur::parse_vidur_csv(t);
    });
}

const RANK_LOG: &str = "[RANK0] Iteration 1\n\
[RANK0] F @ 1751967829962.3892 (ms) to 1751967830475.0046 (ms), cudaEventElapsed = 510.70361328125 (ms)\n\
[RANK0] B @ 1751967831683.1023 (ms) to 1751967831789.4724 (ms), cudaEventElapsed = 106.32908630371094 (ms)\n\
[RANK0] Iteration 2\n\
[RANK0] F @ 1751967832962.3892 (ms) to 1751967833475.0046 (ms), cudaEventElapsed = 510.7 (ms)\n";

#[test]
fn pipemorph_logs() {
    fuzz("PipeMorph rank logs", &[RANK_LOG], |t| {
        let _ = pipemorph::parse_rank_log("GPU0_rank0_1F1B.log", t);
        let _ = pipemorph::parse_megatron_log(t);
        let _ = pipemorph::load_run(&[
            ("GPU0_rank0_1F1B.log".into(), t.to_string()),
            (
                "GPU1_rank1_1F1B.log".into(),
                RANK_LOG.replace("RANK0", "RANK1"),
            ),
        ]);
    });
}

const POLLUX_WORKLOAD: &str = "name,time,application,num_replicas,batch_size\n\
cifar10-0,53,cifar10,2,2048\nncf-1,90,ncf,1,32768\nbert-2,120,bert,2,384\n";

#[test]
fn pollux_workloads() {
    use bubblelab_core::labs::elastic::{run, workload, ElasticParams, ElasticPolicy, PolluxSpec};
    fuzz("Pollux workload CSV", &[POLLUX_WORKLOAD], |t| {
        // Whatever reads, small enough to run, runs without a panic.
        if let Ok(jobs) = workload::parse_workload(t) {
            if jobs.len() <= 4 && jobs.iter().all(|j| j.submit_s < 3600) {
                let params = ElasticParams {
                    policies: vec![ElasticPolicy::Tiresias, ElasticPolicy::Optimus],
                    nodes: 4,
                    workload: 0,
                    jobs,
                    pollux: PolluxSpec {
                        population: 4,
                        generations: 2,
                        seed: 1,
                    },
                    ..ElasticParams::default()
                };
                let _ = run(&params, &mut |_, _| {});
            }
        }
    });
}
