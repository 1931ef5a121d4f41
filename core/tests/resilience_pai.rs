//! The detectors on real Alibaba PAI mini-batch times (cluster-trace-gpu-v2020).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

mod common;

use bubblelab_core::labs::resilience::{pai, DetectorSpec};

fn job(n: u32) -> Option<pai::PaiTrace> {
    let dir = common::data_dir()?;
    let path = dir.join(format!("alibaba_pai_minibatch_time/job_{n}_norm.csv"));
    Some(pai::parse(&std::fs::read_to_string(path).unwrap()).unwrap())
}

/// ResiHP's flags as (time, worker).
fn resihp_flags(trace: &pai::PaiTrace) -> Vec<(u64, u32)> {
    pai::detect(trace, &DetectorSpec::default())
        .iter()
        .filter(|f| f.detector == "resihp")
        .map(|f| (f.time, f.worker.unwrap()))
        .collect()
}

/// Multiplies worker `w`'s times by `factor` over samples `from..to`.
fn scale(trace: &mut pai::PaiTrace, w: usize, factor: f64, samples: std::ops::Range<usize>) {
    for (_, v) in &mut trace.samples[samples] {
        if let Some(x) = &mut v[w] {
            *x *= factor;
        }
    }
}

#[test]
fn on_the_pai_jobs_resihp_flags_the_onsets_only() {
    let Some(job1) = job(1) else { return };
    assert_eq!((job1.workers.len(), job1.samples.len()), (10, 300));
    // Job 1: worker 6 turns slow at sample time 1811 (1.7× its level); flagged once, 3 samples on.
    assert_eq!(resihp_flags(&job1), [(1831, 6)]);
    // Job 3: workers 6–9 slow together from ~2201 (the origin: "multiple stragglers"); only they.
    let job3 = job(3).unwrap();
    let flags = resihp_flags(&job3);
    assert!(
        !flags.is_empty() && flags.iter().all(|f| (6..=9).contains(&f.1)),
        "{flags:?}"
    );
    // Job 4 (first half): workers sit steadily at 0.5× and 1.5–2× the median (not onsets); worker
    // 6 steps from ~230 to ~305 at ~1151 and stays; workers 3 and 5 each have one spell of exactly
    // `persistence` samples well above their level (flagged: the rule cannot tell it from an onset).
    assert_eq!(
        resihp_flags(&job(4).unwrap()),
        [(1171, 6), (3641, 3), (4061, 5)]
    );
}

#[test]
fn a_steadily_slow_worker_and_a_short_transient_are_not_onsets() {
    let Some(original) = job(1) else { return };
    let expected = resihp_flags(&original);
    let mut trace = original.clone();
    scale(&mut trace, 2, 1.8, 0..300); // static heterogeneity: slower all along
    scale(&mut trace, 3, 0.5, 0..300); // and one faster all along
    scale(&mut trace, 4, 3.0, 100..102); // a two-sample spike
    scale(&mut trace, 8, 0.4, 200..205); // a fast spell
    assert_eq!(resihp_flags(&trace), expected);
}

#[test]
fn a_slowdown_injected_into_a_healthy_worker_is_found_at_once_and_nothing_else() {
    for (n, w, from) in [(1, 4, 150), (3, 2, 120), (4, 1, 700)] {
        let Some(original) = job(n) else { return };
        let expected = resihp_flags(&original);
        let mut trace = original.clone();
        let end = trace.samples.len();
        scale(&mut trace, w, 1.5, from..end);
        let onset = trace.samples[from].0;
        let mut flags = resihp_flags(&trace);
        let found = flags
            .iter()
            .position(|f| f.1 == w as u32 && f.0 >= onset)
            .unwrap_or_else(|| panic!("job {n}: worker {w} not found: {flags:?}"));
        let (time, _) = flags.remove(found);
        // Flagged after `persistence` (3) samples, 10 time units apart.
        assert!(
            time <= onset + 20,
            "job {n}: flagged at {time}, onset {onset}"
        );
        assert_eq!(flags, expected, "job {n}: other flags changed");
    }
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
    // In the middle of each episode its workers are well above where they stood against the
    // median worker 20 samples before it (workers differ steadily, so not above the median).
    let relative = |time: u64, w: u32| {
        let (_, v) = trace.samples.iter().find(|(t, _)| *t >= time).unwrap();
        let mut all: Vec<f64> = v.iter().flatten().copied().collect();
        all.sort_by(f64::total_cmp);
        v[w as usize].unwrap() / all[all.len() / 2]
    };
    for e in &episodes {
        for &w in &e.workers {
            let before = relative(e.onset - 20 * u64::from(spec.sample_s), w);
            let during = relative(u64::midpoint(e.onset, e.end), w);
            assert!(during > 1.15 * before, "{e:?}: {during} vs {before}");
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
