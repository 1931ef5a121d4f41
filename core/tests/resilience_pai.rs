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

#[test]
fn the_labelled_benchmark_reads_back_its_own_episodes_through_the_pai_reader() {
    use bubblelab_core::labs::resilience::benchmark::{self, BenchmarkSpec};
    let spec = BenchmarkSpec::default();
    let (csv, episodes) = benchmark::generate(&spec).unwrap();
    assert_eq!(episodes.len(), spec.episodes as usize);
    // The PAI reader accepts it (the label columns are ignored) ...
    let trace = pai::parse(&csv).unwrap();
    assert_eq!(trace.workers.len(), spec.workers as usize);
    assert_eq!(trace.samples.len(), spec.samples as usize);
    // ... and the labels give back exactly the generated episodes.
    assert_eq!(benchmark::episodes(&csv).unwrap(), episodes);
    // Same seed, same bytes; another seed, another trace.
    assert_eq!(benchmark::generate(&spec).unwrap().0, csv);
    let other = BenchmarkSpec {
        seed: 2,
        ..BenchmarkSpec::default()
    };
    assert_ne!(benchmark::generate(&other).unwrap().0, csv);
    // In the middle of each episode its workers are well above the median worker.
    for e in &episodes {
        let (_, v) = trace
            .samples
            .iter()
            .find(|(t, _)| *t >= u64::midpoint(e.onset, e.end))
            .unwrap();
        let mut all: Vec<f64> = v.iter().flatten().copied().collect();
        all.sort_by(f64::total_cmp);
        let median = all[all.len() / 2];
        for &w in &e.workers {
            assert!(v[w as usize].unwrap() > 1.15 * median, "{e:?}");
        }
    }
}

#[test]
fn scoring_counts_flags_inside_episodes_only() {
    use bubblelab_core::labs::resilience::benchmark::{score, Episode};
    use bubblelab_core::labs::resilience::pai::PaiFlag;
    let episodes = vec![
        Episode {
            id: 0,
            onset: 100,
            end: 200,
            workers: vec![3],
        },
        Episode {
            id: 1,
            onset: 500,
            end: 600,
            workers: vec![4, 5],
        },
    ];
    let flag = |time, worker| PaiFlag {
        detector: "x",
        time,
        worker,
    };
    let flags = [
        flag(130, Some(3)), // true, delay 30
        flag(140, Some(4)), // wrong worker
        flag(90, None),     // before the onset
        flag(510, None),    // true, delay 10 (raw-time flags name no worker)
        flag(601, None),    // after the end
    ];
    let refs: Vec<&PaiFlag> = flags.iter().collect();
    let s = score(&refs, &episodes);
    assert_eq!((s.flags, s.true_flags, s.detected), (5, 2, 2));
    assert!((s.precision() - 0.4).abs() < 1e-12);
    assert_eq!(s.recall(), 1.0);
    assert_eq!(s.delay, Some(20.0));
}
