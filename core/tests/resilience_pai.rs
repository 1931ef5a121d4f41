//! The detectors on real Alibaba PAI mini-batch times (cluster-trace-gpu-v2020).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::resilience::{pai, DetectorSpec};

#[test]
fn worker_6_of_job_1_is_flagged_after_it_turns_slow_and_not_before() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let text =
        std::fs::read_to_string(dir.join("alibaba_pai_minibatch_time/job_1_norm.csv")).unwrap();
    let trace = pai::parse(&text).unwrap();
    assert_eq!(trace.workers.len(), 10);
    assert_eq!(trace.samples.len(), 300);
    let flags = pai::detect(&trace, &DetectorSpec::default());
    let resihp: Vec<_> = flags.iter().filter(|f| f.detector == "resihp").collect();
    // Worker 6 turns slow at sample time 1811 (1.7× the median worker).
    assert!(resihp.iter().all(|f| f.worker == Some(6)), "{resihp:?}");
    let first = resihp.first().expect("worker 6 flagged");
    assert!(first.time >= 1811 && first.time <= 1851, "{first:?}");
}

#[test]
fn bad_rows_name_line_and_column() {
    let e = pai::parse(",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n1,x,25,1,5\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 3: column `worker`: expected a worker id, got `x`"
    );
    let e = pai::parse(",worker,gpu,time\n0,0,25,1\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("line 1: missing column `batch_time_norm`"),
        "{e}"
    );
    let e = pai::parse(",worker,gpu,time,batch_time_norm\n0,0,25\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("line 2: column `time` is missing"),
        "{e}"
    );
    assert!(pai::parse("").is_err());
}
