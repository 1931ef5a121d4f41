//! Pollux against its artifact's baselines on the artifact's own workload files (petuum/adaptdl
//! @de25dcc, `simulator/workloads/`), beside the artifact's own mean JCTs
//! (`simulator/results-jobload/*-1.0/summary.json`). The artifact's README checks its
//! simulator on workload-6 ("roughly 48 % lower than Optimus and 32 % lower than Tiresias",
//! ±5 %); this test runs workload-6 (others with `ELASTIC_WORKLOADS=1,2,…`), requires Pollux
//! below both baselines on each workload and Tiresias below Optimus on their mean, as in the
//! artifact (on workload-3 the artifact's two baselines are 2 % apart, and ours swap), and
//! pins our figures on workload-6.
#![allow(clippy::unwrap_used)]
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::elastic::{run, ElasticParams, ElasticPolicy, ARTIFACT_AVG_JCT_S};

/// Ours on workload-6, s (`cargo test --profile bench -p bubblelab-core --test
/// elastic_artifact -- --nocapture`).
const OURS_WORKLOAD_6: [(ElasticPolicy, f64); 3] = [
    (ElasticPolicy::Pollux, 2363.1),
    (ElasticPolicy::Optimus, 5468.0),
    (ElasticPolicy::Tiresias, 3822.0),
];

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "optimised builds only: cargo xtask test runs it with --profile bench"
)]
fn pollux_finishes_jobs_sooner_than_its_baselines_on_the_artifacts_workloads() {
    let list = std::env::var("ELASTIC_WORKLOADS").unwrap_or_else(|_| "6".into());
    let mut sums = [0.0f64; 3];
    let mut theirs_sums = [0.0f64; 3];
    let mut count = 0.0;
    for k in list.split(',').map(|s| s.trim().parse::<u32>().unwrap()) {
        let params = ElasticParams {
            workload: k,
            ..ElasticParams::default()
        };
        let report = run(&params, &mut |_, _| {}).unwrap();
        println!("{}", report.to_text());
        let avg = |p: ElasticPolicy| report.metric(&format!("{}.avg_jct_s", p.id())).unwrap();
        for (p, theirs) in ARTIFACT_AVG_JCT_S {
            println!(
                "workload-{k} {:9} ours {:7.1} s, artifact {:7.1} s ({:+.1} %)",
                p.id(),
                avg(p),
                theirs[k as usize - 1],
                (avg(p) / theirs[k as usize - 1] - 1.0) * 100.0
            );
        }
        assert!(avg(ElasticPolicy::Pollux) < avg(ElasticPolicy::Tiresias));
        assert!(avg(ElasticPolicy::Pollux) < avg(ElasticPolicy::Optimus));
        for (i, (p, theirs)) in ARTIFACT_AVG_JCT_S.iter().enumerate() {
            sums[i] += avg(*p);
            theirs_sums[i] += theirs[k as usize - 1];
        }
        count += 1.0;
        if k == 6 {
            for (p, ours) in OURS_WORKLOAD_6 {
                assert!(
                    (avg(p) - ours).abs() < 1.0,
                    "{p:?}: {} against pinned {ours}",
                    avg(p)
                );
            }
        }
    }
    for (i, (p, _)) in ARTIFACT_AVG_JCT_S.iter().enumerate() {
        println!(
            "mean over workloads {list}: {:9} ours {:7.1} s, artifact {:7.1} s",
            p.id(),
            sums[i] / count,
            theirs_sums[i] / count
        );
    }
    // ARTIFACT_AVG_JCT_S lists Pollux, Optimus, Tiresias.
    assert!(
        sums[2] < sums[1],
        "Tiresias should beat Optimus on the mean"
    );
}
