//! The fairness lab's trace readers and synthetic generator: known answers for every format,
//! exact error messages, skipping, fuzzing (never a panic) and the real traces in
//! `$BUBBLELAB_DATA` (default `../shared/data` beside the repository).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::job::{Job, Trace};
use bubblelab_core::labs::fairness::traces::synthetic::{generate, SyntheticSpec};
use bubblelab_core::labs::fairness::traces::{detect, parse, ReadOptions, TraceError, TraceFormat};
use proptest::prelude::*;

const S: u64 = 1_000_000_000;

fn strict() -> ReadOptions {
    ReadOptions::default()
}

fn lenient() -> ReadOptions {
    ReadOptions {
        skip_bad_rows: true,
        ..ReadOptions::default()
    }
}

/// (id, tenant name, gpus, submit s, duration s) of every job, in trace order.
fn summary(t: &Trace) -> Vec<(u64, String, u32, u64, u64)> {
    t.jobs
        .iter()
        .map(|j: &Job| {
            (
                j.id,
                t.tenants[j.tenant as usize].clone(),
                j.gpus,
                j.submit_ns,
                j.duration_ns,
            )
        })
        .collect()
}

fn row(
    id: u64,
    tenant: &str,
    gpus: u32,
    submit_ns: u64,
    duration_ns: u64,
) -> (u64, String, u32, u64, u64) {
    (id, tenant.to_string(), gpus, submit_ns, duration_ns)
}

const DIRLAB: &str =
    "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\r\n\
0,7,1,0,1,0,100,0,Pass\r\n\
1,3,8,0,2,10,2.5,0,Failed\r\n\
2,7,0,4,1,5,50,0,Pass\r\n\
3,9,4,0,1,0,60,0,Killed\r\n";

const TIRESIAS: &str = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval,user\n\
5,2,100,1000,resnet50,3600,0,alice\n\
3,1,100,10,vgg16,0.5,0,bob\n\
9,4,40.25,10,bert,7200,0,bob\n";

const CHRONUS: &str = "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type\n\
0,vc_a,1,8555,5049,vgg16,747,14,1105,10,0,strict\n\
2,vc_b,1,14341,3621,alexnet,30,17,14341,10,1,best\n\
5,vc_a,4,12378,3495,mobilenet_v2,26,14,102-142-182-242,10-8-5-2,0,soft\n";

const HELIOS: &str = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n\
6zw2,uA,vc1,8,48,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:10,2020-04-01 01:00:10,3600,3\n\
7ab3,uB,vc1,0,4,1,COMPLETED,2020-04-01 00:00:08,2020-04-01 00:00:09,2020-04-01 00:00:19,10,1\n\
8cd4,uB,vc2,2,8,1,FAILED,2020-04-02 00:00:07,2020-04-02 00:01:07,2020-04-02 00:02:07,,60\n";

const ALIBABA: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
openb-pod-0000,12000,16384,1,1000,,LS,Running,100,1100,100\n\
openb-pod-0001,6000,12288,1,460,,BE,Running,200,500,250\n\
openb-pod-0002,6000,12288,0,0,,BE,Succeeded,300,400,300\n\
openb-pod-0003,6000,12288,1,1000,,LS,Pending,350,400,\n\
openb-pod-0004,6000,12288,8,1000,,Burstable,Failed,400,410,401\n";

const PHILLY: &str = r#"[
 {"status": "Pass", "vc": "vcB", "jobid": "application_1_1", "user": "u1",
  "submitted_time": "2017-10-03 04:31:42",
  "attempts": [{"start_time": "2017-10-03 04:31:43", "end_time": "2017-10-03 04:32:43",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1"]}]},
               {"start_time": "2017-10-03 05:00:00", "end_time": "2017-10-03 05:00:30",
                "detail": [{"ip": "m3", "gpus": ["gpu3"]}]}]},
 {"status": "Killed", "vc": "vcA", "jobid": "application_1_2", "user": "u2",
  "submitted_time": "2017-10-03 04:30:00", "attempts": []},
 {"status": "Running", "vc": "vcA", "jobid": "application_1_3", "user": "u2",
  "submitted_time": "2017-10-03 04:31:00",
  "attempts": [{"start_time": "2017-10-03 04:31:00", "end_time": "None",
                "detail": [{"ip": "m1", "gpus": ["gpu2"]}]},
               {"start_time": "2017-10-03 04:40:00", "end_time": "2017-10-03 04:41:00",
                "detail": [{"ip": "m1", "gpus": ["gpu2"]}]}]}
]"#;

#[test]
fn detects_every_format_and_ids_round_trip() {
    assert_eq!(detect(DIRLAB), Some(TraceFormat::Dirlab));
    assert_eq!(detect(TIRESIAS), Some(TraceFormat::Tiresias));
    assert_eq!(detect(CHRONUS), Some(TraceFormat::Chronus));
    assert_eq!(detect(HELIOS), Some(TraceFormat::Helios));
    assert_eq!(detect(ALIBABA), Some(TraceFormat::AlibabaOpenb));
    assert_eq!(detect(PHILLY), Some(TraceFormat::Philly));
    assert_eq!(detect("\u{feff}  \n[]"), Some(TraceFormat::Philly));
    assert_eq!(detect("a,b,c\n1,2,3\n"), None);
    assert_eq!(detect(""), None);
    for f in TraceFormat::ALL {
        assert_eq!(TraceFormat::from_id(f.id()), Some(f));
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, format!("\"{}\"", f.id()));
    }
    let ids: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.id()).collect();
    assert_eq!(
        ids,
        [
            "tiresias",
            "chronus",
            "helios",
            "philly",
            "alibaba-openb",
            "dirlab"
        ]
    );
}

#[test]
fn dirlab_known_answers() {
    let t = parse(TraceFormat::Dirlab, DIRLAB, &strict()).unwrap();
    // Submissions: cumulative interval 0, 10, (15: 0 GPUs, skipped), 15.
    assert_eq!(
        summary(&t),
        vec![
            row(0, "7", 1, 0, 100 * S),
            row(1, "3", 8, 10 * S, 2_500_000_000),
            row(3, "9", 4, 15 * S, 60 * S),
        ]
    );
    assert_eq!(t.tenants, ["7", "3", "9"]);
    assert_eq!(
        t.skipped_rows, 1,
        "the 0-GPU job is always skipped and counted"
    );
    assert_eq!(t.jobs[0].tenant, 0);
    assert!(t.jobs[0].speed_by_gpu_type.is_empty());
}

#[test]
fn tiresias_known_answers() {
    let t = parse(TraceFormat::Tiresias, TIRESIAS, &strict()).unwrap();
    // Shifted so that the earliest submission (40.25 s) is 0; sorted by (submit, id).
    assert_eq!(
        summary(&t),
        vec![
            row(9, "bob", 4, 0, 7200 * S),
            row(3, "bob", 1, 59_750_000_000, 500_000_000),
            row(5, "alice", 2, 59_750_000_000, 3600 * S),
        ]
    );
    // Tenants in order of first appearance in the file, not in job order.
    assert_eq!(t.tenants, ["alice", "bob"]);
    assert_eq!(t.jobs[0].tenant, 1);

    // Without a tenant column: one tenant; `vc` is used when it is the only tenant column.
    let one = "job_id,num_gpu,submit_time,duration\n1,1,0,10\n2,2,5,20\n";
    let t = parse(TraceFormat::Tiresias, one, &strict()).unwrap();
    assert_eq!(t.tenants, ["default"]);
    assert_eq!(
        summary(&t),
        vec![
            row(1, "default", 1, 0, 10 * S),
            row(2, "default", 2, 5 * S, 20 * S)
        ]
    );
    let vc = "vc,job_id,num_gpu,submit_time,duration\nx,1,1,0,10\ny,2,2,5,20\n";
    assert_eq!(
        parse(TraceFormat::Tiresias, vc, &strict()).unwrap().tenants,
        ["x", "y"]
    );
    // `tenant` wins over `user`.
    let both = "job_id,user,tenant,num_gpu,submit_time,duration\n1,u,t,1,0,10\n";
    assert_eq!(
        parse(TraceFormat::Tiresias, both, &strict())
            .unwrap()
            .tenants,
        ["t"]
    );
}

#[test]
fn helios_known_answers() {
    let t = parse(TraceFormat::Helios, HELIOS, &strict()).unwrap();
    assert_eq!(
        summary(&t),
        vec![
            // ids are data-row indices; tenant is the user; the day-later job: 86,400 s.
            row(0, "uA", 8, 0, 3600 * S),
            // empty duration → end_time − start_time = 60 s.
            row(2, "uB", 2, 86_400 * S, 60 * S),
        ]
    );
    assert_eq!(t.tenants, ["uA", "uB"]);
    assert_eq!(t.skipped_rows, 1);
    // Numeric submit times work too.
    let numeric = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n\
a,u,v,1,1,1,COMPLETED,1000,1001,1011,10,1\n";
    let t = parse(TraceFormat::Helios, numeric, &strict()).unwrap();
    assert_eq!(summary(&t), vec![row(0, "u", 1, 0, 10 * S)]);
}

#[test]
fn alibaba_known_answers() {
    let t = parse(TraceFormat::AlibabaOpenb, ALIBABA, &strict()).unwrap();
    assert_eq!(
        summary(&t),
        vec![
            row(0, "LS", 1, 0, 1000 * S),
            // gpu_milli 460 → ⌈0.46⌉ = 1 GPU; duration = deletion − scheduled = 250 s.
            row(1, "BE", 1, 100 * S, 250 * S),
            row(4, "Burstable", 8, 300 * S, 9 * S),
        ]
    );
    assert_eq!(t.tenants, ["LS", "BE", "Burstable"]);
    assert_eq!(t.skipped_rows, 2, "a CPU pod and a never-scheduled pod");
}

#[test]
fn philly_known_answers() {
    let t = parse(TraceFormat::Philly, PHILLY, &strict()).unwrap();
    // Job 1 (index 0): 4 GPUs in its first attempt, 1 in its second → 4; 60 s + 30 s.
    // Job 2 never ran: skipped. Job 3: the unfinished attempt does not count; 60 s on 1 GPU.
    // Earliest submission kept: job 3 at 04:31:00.
    assert_eq!(
        summary(&t),
        vec![
            row(2, "vcA", 1, 0, 60 * S),
            row(0, "vcB", 4, 42 * S, 90 * S)
        ]
    );
    assert_eq!(t.tenants, ["vcB", "vcA"]);
    assert_eq!(t.skipped_rows, 1);
    let t = parse(TraceFormat::Philly, "[]", &strict()).unwrap();
    assert!(t.jobs.is_empty());
}

/// (format, text, exact Display of the error).
fn bad_inputs() -> Vec<(TraceFormat, String, &'static str)> {
    let d = "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n";
    let ti = "job_id,num_gpu,submit_time,duration,user\n";
    let h = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
    let a = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
    let long = "x".repeat(300);
    vec![
        (TraceFormat::Dirlab, String::new(), "row 1, column `(header)`: empty input: no header row"),
        (TraceFormat::Dirlab, "u_id,user,gpu_num,interval\n".into(), "row 1, column `run_time`: required column missing from the header"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1,0,10,0,Pass\n1,1,x,0,1,0,10,0,Pass\n"), "row 3, column `gpu_num`: expected a non-negative integer, got `x`"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1,-5,10,0,Pass\n"), "row 2, column `interval`: expected a non-negative number of seconds, got `-5`"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1,0,inf,0,Pass\n"), "row 2, column `run_time`: expected a non-negative number of seconds, got `inf`"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1,0,1e11,0,Pass\n"), "row 2, column `run_time`: at most 1e10 s, got `1e11`"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1\n"), "row 2, column `interval`: missing (the row has 5 fields, the header has 9)"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1,0,10,0,Pass,extra\n"), "row 2, column `(row)`: too many fields (the row has 10 fields, the header has 9)"),
        (TraceFormat::Dirlab, format!("{d}0,1,1,0,1,0,10,0,Pass\n\n0,2,1,0,1,0,10,0,Pass\n"), "row 4, column `u_id`: duplicate job id 0 (first on row 2)"),
        (TraceFormat::Dirlab, format!("{d}0,,1,0,1,0,10,0,Pass\n"), "row 2, column `user`: empty"),
        (TraceFormat::Dirlab, format!("{d}0,{long},1,0,1,0,10,0,Pass\n"), "row 2, column `user`: longer than 256 characters"),
        (TraceFormat::Dirlab, format!("{d}0,1,2000000,0,1,0,10,0,Pass\n"), "row 2, column `gpu_num`: at most 1000000 GPUs per job, got 2000000"),
        (TraceFormat::Dirlab, format!("{d}0,1,99999999999999999999,0,1,0,10,0,Pass\n"), "row 2, column `gpu_num`: integer out of range, got `99999999999999999999`"),
        (TraceFormat::Tiresias, format!("{ti}1,1,0,,alice\n"), "row 2, column `duration`: empty"),
        (TraceFormat::Tiresias, format!("{ti}1,1,abc,10,alice\n"), "row 2, column `submit_time`: expected a non-negative number of seconds, got `abc`"),
        (TraceFormat::Tiresias, format!("{ti}1.5,1,0,10,alice\n"), "row 2, column `job_id`: expected a non-negative integer, got `1.5`"),
        (TraceFormat::Helios, format!("{h}a,u,v,1,1,1,COMPLETED,2020-13-01 00:00:00,,,10,1\n"), "row 2, column `submit_time`: expected seconds or a date `YYYY-MM-DD HH:MM:SS`, got `2020-13-01 00:00:00`"),
        (TraceFormat::Helios, format!("{h}a,u,v,1,1,1,COMPLETED,5,20,10,,1\n"), "row 2, column `end_time`: before start_time"),
        (TraceFormat::AlibabaOpenb, format!("{a}p,1,1,1,1000,,LS,Running,10,5,8\n"), "row 2, column `deletion_time`: before scheduled_time"),
        (TraceFormat::AlibabaOpenb, format!("{a}p,1,1,1,half,,LS,Running,10,50,10\n"), "row 2, column `gpu_milli`: expected a non-negative integer, got `half`"),
        (TraceFormat::Philly, "{\"a\": 1}".into(), "row 0, column `(json)`: invalid type: map, expected a JSON array of Philly jobs at line 1 column 0"),
        (TraceFormat::Philly, "[{\"vc\": ".into(), "row 0, column `(json)`: EOF while parsing a value at line 1 column 8"),
        (TraceFormat::Philly, "[1]".into(), "row 1, column `(row)`: expected a JSON object"),
        (TraceFormat::Philly, r#"[{"vc": "a", "submitted_time": "2017-10-03 04:31:42"}, {"submitted_time": "2017-10-03 04:31:42"}]"#.into(), "row 2, column `vc`: missing"),
        (TraceFormat::Philly, r#"[{"vc": "a", "submitted_time": "yesterday"}]"#.into(), "row 1, column `submitted_time`: expected a date `YYYY-MM-DD HH:MM:SS` or seconds, got `yesterday`"),
        (TraceFormat::Philly, r#"[{"vc": "a", "submitted_time": 5, "attempts": [{"start_time": 9, "end_time": 7}]}]"#.into(), "row 1, column `attempts[0].end_time`: before start_time"),
        (TraceFormat::Philly, r#"[{"vc": "a", "submitted_time": 5, "attempts": [{"detail": [{"gpus": 3}]}]}]"#.into(), "row 1, column `attempts[0].detail[0].gpus`: expected an array, got 3"),
    ]
}

#[test]
fn bad_rows_name_their_row_and_column() {
    for (format, text, expected) in bad_inputs() {
        let err: TraceError = parse(format, &text, &strict()).expect_err(expected);
        assert_eq!(err.to_string(), expected, "{format}: {text:?}");
    }
}

#[test]
fn skip_bad_rows_counts_them() {
    let d = "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n\
0,1,1,0,1,0,10,0,Pass\n\
1,1,x,0,1,5,10,0,Pass\n\
2,2,0,0,1,5,10,0,Pass\n\
3,2,2,0,1\n\
4,3,2,0,1,5,10,0,Pass\n";
    assert!(parse(TraceFormat::Dirlab, d, &strict()).is_err());
    let t = parse(TraceFormat::Dirlab, d, &lenient()).unwrap();
    // Rows 1 and 3 are bad, row 2 has 0 GPUs: three skipped. Row 1's interval still counts.
    assert_eq!(t.skipped_rows, 3);
    assert_eq!(
        summary(&t),
        vec![row(0, "1", 1, 0, 10 * S), row(4, "3", 2, 15 * S, 10 * S)]
    );
    assert_eq!(t.tenants, ["1", "3"]);

    let p = r#"[{"vc": "a", "submitted_time": 5, "attempts": [{"start_time": 5, "end_time": 7, "detail": [{"gpus": ["g"]}]}]}, 1, {"vc": 3}]"#;
    let t = parse(TraceFormat::Philly, p, &lenient()).unwrap();
    assert_eq!((t.jobs.len(), t.skipped_rows), (1, 2));
    // Syntax errors and header errors are never skipped.
    assert!(parse(TraceFormat::Philly, "[", &lenient()).is_err());
    assert!(parse(TraceFormat::Dirlab, "a,b\n1,2\n", &lenient()).is_err());
}

#[test]
fn max_rows_bounds_the_input() {
    let opts = ReadOptions {
        skip_bad_rows: true,
        max_rows: 2,
    };
    let err = parse(TraceFormat::Dirlab, DIRLAB, &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "row 4, column `(row)`: more than 2 data rows (ReadOptions::max_rows)"
    );
    let err = parse(TraceFormat::Philly, PHILLY, &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "row 3, column `(row)`: more than 2 jobs (ReadOptions::max_rows)"
    );
    let opts = ReadOptions {
        max_rows: 4,
        ..ReadOptions::default()
    };
    assert!(parse(TraceFormat::Dirlab, DIRLAB, &opts).is_ok());
    let json = serde_json::to_string(&ReadOptions::default()).unwrap();
    assert_eq!(json, r#"{"skip_bad_rows":false,"max_rows":1000000}"#);
}

#[test]
fn synthetic_default_is_valid_and_pinned() {
    let spec = SyntheticSpec::default();
    spec.validate().unwrap();
    let t = generate(&spec);
    assert_eq!(t.jobs.len(), 1000);
    assert_eq!(t.tenants.len(), 15);
    assert_eq!(t.tenants[0], "t1");
    assert_eq!(generate(&spec), t, "same spec, same trace");
    let first: Vec<(u64, u32, u32, u64, u64)> = t.jobs[..5]
        .iter()
        .map(|j| (j.id, j.tenant, j.gpus, j.submit_ns, j.duration_ns))
        .collect();
    assert_eq!(first, PINNED);
    assert!(t
        .jobs
        .windows(2)
        .all(|w| (w[0].submit_ns, w[0].id) <= (w[1].submit_ns, w[1].id)));
    assert!(t.jobs.iter().all(|j| [1, 2, 4, 8].contains(&j.gpus)));
    assert!(t
        .jobs
        .iter()
        .all(|j| j.duration_ns >= S && j.duration_ns <= 5_200_000 * S));
    // Every tenant submits something with 1,000 jobs over 15 equal tenants.
    for k in 0..15 {
        assert!(t.jobs.iter().any(|j| j.tenant == k));
    }
    // The mix follows the spec roughly (82.9 % single-GPU jobs).
    let ones = t.jobs.iter().filter(|j| j.gpus == 1).count();
    assert!((780..=880).contains(&ones), "{ones}");
    let other = generate(&SyntheticSpec {
        seed: 2,
        ..spec.clone()
    });
    assert_ne!(other.jobs, t.jobs);
}

/// The first five jobs of the default spec: (id, tenant, gpus, submit ns, duration ns).
const PINNED: &[(u64, u32, u32, u64, u64)] = &[
    (0, 2, 1, 0, 18_777_035_855),
    (1, 5, 1, 485_868_160_249, 127_350_990_459),
    (2, 1, 1, 530_922_343_630, 5_931_378_689_089),
    (3, 13, 1, 1_649_734_895_738, 9_423_781_668_494),
    (4, 3, 8, 1_867_676_947_953, 54_152_378_943),
];

#[test]
fn synthetic_weights_shift_demand() {
    let spec = SyntheticSpec {
        tenants: 2,
        tenant_weights: vec![3.0, 1.0],
        jobs: 4000,
        ..SyntheticSpec::default()
    };
    let t = generate(&spec);
    let first = t.jobs.iter().filter(|j| j.tenant == 0).count();
    assert!((2800..=3200).contains(&first), "{first}");
}

#[test]
fn synthetic_validation_names_the_field() {
    let base = SyntheticSpec::default();
    let cases: Vec<(SyntheticSpec, &str)> = vec![
        (
            SyntheticSpec {
                jobs: 0,
                ..base.clone()
            },
            "fairness.synthetic.jobs: must be between 1 and 1000000, got 0",
        ),
        (
            SyntheticSpec {
                tenants: 0,
                ..base.clone()
            },
            "fairness.synthetic.tenants: must be between 1 and 10000, got 0",
        ),
        (
            SyntheticSpec {
                tenant_weights: vec![1.0],
                ..base.clone()
            },
            "fairness.synthetic.tenant_weights: must be empty (equal) or have one weight per tenant (15), got 1",
        ),
        (
            SyntheticSpec {
                tenants: 2,
                tenant_weights: vec![1.0, 0.0],
                ..base.clone()
            },
            "fairness.synthetic.tenant_weights[1]: must be > 0 and ≤ 1e12, got 0",
        ),
        (
            SyntheticSpec {
                mean_interarrival_s: f64::NAN,
                ..base.clone()
            },
            "fairness.synthetic.mean_interarrival_s: must be > 0 and ≤ 1e9 s, got NaN",
        ),
        (
            SyntheticSpec {
                gpu_sizes: vec![],
                ..base.clone()
            },
            "fairness.synthetic.gpu_sizes: must have 1 to 64 entries, got 0",
        ),
        (
            SyntheticSpec {
                gpu_sizes: vec![(0, 1.0)],
                ..base.clone()
            },
            "fairness.synthetic.gpu_sizes[0]: GPUs must be between 1 and 1000000, got 0",
        ),
        (
            SyntheticSpec {
                gpu_sizes: vec![(1, -1.0)],
                ..base.clone()
            },
            "fairness.synthetic.gpu_sizes[0]: probability must be ≥ 0 and ≤ 1e12, got -1",
        ),
        (
            SyntheticSpec {
                gpu_sizes: vec![(1, 0.0)],
                ..base.clone()
            },
            "fairness.synthetic.gpu_sizes: probabilities must not all be 0",
        ),
        (
            SyntheticSpec {
                duration_lognormal_mu: 99.0,
                ..base.clone()
            },
            "fairness.synthetic.duration_lognormal_mu: must be between -10 and 25 (ln s), got 99",
        ),
        (
            SyntheticSpec {
                duration_lognormal_sigma: -1.0,
                ..base.clone()
            },
            "fairness.synthetic.duration_lognormal_sigma: must be between 0 and 10 (ln s), got -1",
        ),
        (
            SyntheticSpec {
                max_duration_s: 0.5,
                ..base.clone()
            },
            "fairness.synthetic.max_duration_s: must be between 1 and 1e9 s, got 0.5",
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(spec.validate().unwrap_err().to_string(), expected);
        assert!(
            generate(&spec).jobs.is_empty(),
            "an invalid spec gives an empty trace, no panic"
        );
    }
    // serde: defaults fill missing fields, unknown fields are refused.
    let s: SyntheticSpec = serde_json::from_str(r#"{"jobs": 7}"#).unwrap();
    assert_eq!(
        s,
        SyntheticSpec {
            jobs: 7,
            ..SyntheticSpec::default()
        }
    );
    let err = serde_json::from_str::<SyntheticSpec>(r#"{"job": 7}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `job`"), "{err}");
    let s: SyntheticSpec = serde_json::from_str(r#"{"gpu_sizes": [[1, 0.5], [8, 0.5]]}"#).unwrap();
    assert_eq!(s.gpu_sizes, [(1, 0.5), (8, 0.5)]);
}

fn samples() -> Vec<(TraceFormat, &'static str)> {
    vec![
        (TraceFormat::Dirlab, DIRLAB),
        (TraceFormat::Tiresias, TIRESIAS),
        (TraceFormat::Chronus, CHRONUS),
        (TraceFormat::Helios, HELIOS),
        (TraceFormat::AlibabaOpenb, ALIBABA),
        (TraceFormat::Philly, PHILLY),
    ]
}

fn check_invariants(t: &Trace) {
    assert!(t
        .jobs
        .windows(2)
        .all(|w| (w[0].submit_ns, w[0].id) <= (w[1].submit_ns, w[1].id)));
    assert!(t
        .jobs
        .iter()
        .all(|j| (j.tenant as usize) < t.tenants.len() && j.gpus > 0));
    // Every format but the Chronus artifact's (which keeps its own clock) starts at 0.
    if let Some(first) = t.jobs.first().filter(|_| t.source != "chronus") {
        assert_eq!(first.submit_ns, 0);
    }
    for j in &t.jobs {
        let mut last = j.submit_ns;
        for d in j
            .deadline_ns
            .iter()
            .chain(j.later_deadlines.iter().map(|l| &l.at_ns))
        {
            assert!(*d >= last, "deadlines not in order: {j:?}");
            last = *d;
        }
        assert!(j.later_deadlines.is_empty() || j.deadline_ns.is_some());
        assert!(j
            .later_deadlines
            .iter()
            .all(|l| (0.0..=1.0).contains(&l.value)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), skip in any::<bool>()) {
        let text = String::from_utf8_lossy(&bytes);
        let opts = ReadOptions { skip_bad_rows: skip, max_rows: 50 };
        let _ = detect(&text);
        for f in TraceFormat::ALL {
            if let Ok(t) = parse(f, &text, &opts) {
                check_invariants(&t);
            }
        }
    }

    #[test]
    fn mutated_samples_never_panic(
        which in 0usize..6,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
        skip in any::<bool>(),
    ) {
        let (format, sample) = samples()[which];
        let mut bytes = sample.as_bytes().to_vec();
        for (at, byte, op) in edits {
            if bytes.is_empty() { break; }
            let i = at.index(bytes.len());
            // Printable-ish replacements so that the text stays close to the format.
            let b = b"0123456789,.-\n\"[]{}:e ax"[byte as usize % 24];
            match op {
                0 => bytes[i] = b,
                1 => bytes.insert(i, b),
                _ => { bytes.remove(i); }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let opts = ReadOptions { skip_bad_rows: skip, max_rows: 50 };
        let _ = detect(&text);
        if let Ok(t) = parse(format, &text, &opts) {
            check_invariants(&t);
        }
    }

    #[test]
    fn synthetic_never_panics(seed in any::<u64>(), jobs in 0u32..300, tenants in 0u32..20,
                              mean in -1.0f64..1e4, mu in -20.0f64..30.0, sigma in -1.0f64..12.0,
                              cap in -1.0f64..1e7) {
        let spec = SyntheticSpec { seed, jobs, tenants, mean_interarrival_s: mean,
            duration_lognormal_mu: mu, duration_lognormal_sigma: sigma, max_duration_s: cap,
            ..SyntheticSpec::default() };
        let t = generate(&spec);
        if spec.validate().is_ok() {
            prop_assert_eq!(t.jobs.len(), jobs as usize);
            check_invariants(&t);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Real data (counts cross-checked with awk over the same files; see the numbers below).

fn read(dir: &std::path::Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// GPU-seconds of a trace (Σ gpus × duration), rounded to whole seconds.
fn gpu_seconds(t: &Trace) -> u64 {
    let ns: u128 = t
        .jobs
        .iter()
        .map(|j| u128::from(j.gpus) * u128::from(j.duration_ns))
        .sum();
    (ns / u128::from(S)) as u64
}

#[test]
fn real_dirlab_traces() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    // (file, jobs kept, skipped (0-GPU), tenants with GPU jobs, GPU-seconds, last submit s)
    let cases = [
        (
            "philly_user_jobs_dirlab/philly_data_training.csv",
            7500,
            0,
            111,
            1_999_000_305,
            4_473_032,
        ),
        (
            "helios_user_jobs_dirlab/helios_data_training.csv",
            5577,
            1923,
            74,
            564_585_107,
            770_677,
        ),
        // Blue Waters' first GPU job submits at 4,892,047 s; the trace starts there.
        (
            "bluewaters_user_jobs_dirlab/blue_waters_data_training.csv",
            753,
            6747,
            27,
            1_116_191_636,
            7_297_913 - 4_892_047,
        ),
    ];
    for (file, jobs, skipped, tenants, gpu_s, last_s) in cases {
        let text = read(&dir, file);
        assert_eq!(detect(&text), Some(TraceFormat::Dirlab), "{file}");
        let t = parse(TraceFormat::Dirlab, &text, &strict()).unwrap();
        assert_eq!(t.jobs.len(), jobs, "{file}");
        assert_eq!(t.skipped_rows, skipped, "{file}");
        assert_eq!(t.jobs.len() + t.skipped_rows, 7500, "{file}");
        assert_eq!(t.tenants.len(), tenants, "{file}");
        assert_eq!(gpu_seconds(&t), gpu_s, "{file}");
        assert_eq!(
            t.jobs.iter().map(|j| j.submit_ns).max(),
            Some(last_s * S),
            "{file}"
        );
        check_invariants(&t);
    }
    // The first Philly job: u_id 0, user 1, 1 GPU, run_time 1,389,243 s.
    let t = parse(TraceFormat::Dirlab, &read(&dir, cases[0].0), &strict()).unwrap();
    assert_eq!(summary(&t)[0], row(0, "1", 1, 0, 1_389_243 * S));
}

#[test]
fn real_alibaba_openb_pods() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let text = read(&dir, "alibaba_gpu_v2023_openb/openb_pod_list_default.csv");
    assert_eq!(detect(&text), Some(TraceFormat::AlibabaOpenb));
    let t = parse(TraceFormat::AlibabaOpenb, &text, &strict()).unwrap();
    // 4,076 pods: 608 CPU pods and 368 never-scheduled pods (23 are both) are skipped.
    assert_eq!(t.jobs.len(), 3123);
    assert_eq!(t.skipped_rows, 953);
    // Tenants in order of first appearance among kept pods (lines 2, 19, 24, 131).
    assert_eq!(t.tenants, ["LS", "Burstable", "BE", "Guaranteed"]);
    let per_tenant: Vec<usize> = (0..4)
        .map(|k| t.jobs.iter().filter(|j| j.tenant == k).count())
        .collect();
    assert_eq!(per_tenant, [1492, 47, 1580, 4]);
    assert_eq!(t.jobs.iter().map(|j| u64::from(j.gpus)).sum::<u64>(), 3347);
    assert_eq!(
        t.jobs.iter().map(|j| j.duration_ns).sum::<u64>(),
        170_669_726 * S
    );
    check_invariants(&t);
}
