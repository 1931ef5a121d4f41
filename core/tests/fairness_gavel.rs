//! Known answers of Gavel's round mechanism in the fairness lab (`policies/gavel.rs`): jobs
//! start only at a round's start, a round ends early when its last job finishes, and over many
//! rounds each job's time on each GPU type follows the max-min allocation; and the claims of
//! Gavel's preset (optimised builds only).

#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::params::GpuTypeSpec;
use bubblelab_core::labs::fairness::sim::PolicyRun;
use bubblelab_core::labs::fairness::{self, run_policy, FairnessParams, Job, PolicyKind, Trace};
use bubblelab_core::presets;
use bubblelab_core::report::Report;
use bubblelab_core::scenario::Scenario;

const S: u64 = 1_000_000_000;

fn job(id: u64, submit_s: u64, duration_s: u64, speeds: &[f64]) -> Job {
    Job {
        speed_by_gpu_type: speeds.to_vec(),
        ..common::fairness_job(id, 0, 1, submit_s, duration_s)
    }
}

fn trace(jobs: Vec<Job>) -> Trace {
    Trace {
        jobs,
        tenants: vec!["t0".into()],
        skipped_rows: 0,
        source: "test".into(),
    }
}

/// One node of one GPU per type (V100 then K80), no preemption cost.
fn params() -> FairnessParams {
    let mut p = FairnessParams::default();
    p.cluster.nodes = 2;
    p.cluster.gpus_per_node = 1;
    p.cluster.gpu_types = vec![
        GpuTypeSpec {
            name: "V100".into(),
            nodes: 1,
        },
        GpuTypeSpec {
            name: "K80".into(),
            nodes: 1,
        },
    ];
    p.preempt_cost_s = 0.0;
    p.resume_cost_s = 0.0;
    p.policies = vec![PolicyKind::Gavel];
    p
}

/// Seconds job `j` held a GPU of type `t` (node `t` here) before `until_s`.
fn time_on(run: &PolicyRun, j: usize, t: u32, until_s: u64) -> f64 {
    run.segments
        .iter()
        .filter(|s| s.job == j && s.alloc.iter().any(|&(n, _)| n == t))
        .map(|s| (s.end_ns.min(until_s * S) - s.start_ns.min(until_s * S)) as f64 / S as f64)
        .sum()
}

#[test]
fn time_on_each_type_follows_the_max_min_allocation() {
    // The LP's hand-solved instance (policies/gavel.rs): speeds (4, 1) and (2, 1) give every
    // fraction 1/2, so while both run (50 rounds of 360 s here) each spends half its time on
    // the V100: the priorities (allocation ÷ share received) alternate them round by round.
    let t = trace(vec![
        job(0, 0, 400_000, &[4.0, 1.0]),
        job(1, 0, 400_000, &[2.0, 1.0]),
    ]);
    let run = run_policy(&params(), &t, PolicyKind::Gavel);
    let horizon_s = 50 * 360;
    for j in 0..2 {
        let v100 = time_on(&run, j, 0, horizon_s);
        let k80 = time_on(&run, j, 1, horizon_s);
        assert_eq!(v100 + k80, horizon_s as f64, "job {j} ran throughout");
        assert_eq!(v100, k80, "job {j}: V100 {v100} s, K80 {k80} s");
    }
}

#[test]
fn a_job_arriving_mid_round_waits_for_the_next_round() {
    // Job 0 alone on the V100 from t = 0; job 1 arrives at 100 s while the K80 is free, and
    // starts only at the round's end (360 s).
    let t = trace(vec![
        job(0, 0, 3_600, &[1.0, 1.0]),
        job(1, 100, 3_600, &[1.0, 1.0]),
    ]);
    let run = run_policy(&params(), &t, PolicyKind::Gavel);
    assert_eq!(run.jobs[1].first_start_ns, 360 * S);
}

#[test]
fn a_round_ends_when_its_last_job_finishes() {
    // Job 0 runs 100 s; job 1 arrives at 50 s, waits for the round, which ends at 100 s when
    // job 0 finishes (not at 360 s).
    let t = trace(vec![
        job(0, 0, 100, &[1.0, 1.0]),
        job(1, 50, 100, &[1.0, 1.0]),
    ]);
    let run = run_policy(&params(), &t, PolicyKind::Gavel);
    assert_eq!(run.jobs[0].finish_ns, 100 * S);
    assert_eq!(run.jobs[1].first_start_ns, 100 * S);
}

fn m(report: &Report, id: &str, key: &str) -> f64 {
    report
        .metric(&format!("{id}.{key}"))
        .unwrap_or_else(|| panic!("missing {id}.{key}"))
}

/// Gavel on its preset (docs/CLAIMS.md, "Heterogeneous GPUs: Gavel"): heterogeneity-aware
/// max-min beats its heterogeneity-agnostic self on average JCT, and the
/// type-blind baselines by more; its low tail is new jobs waiting for an allocation, below
/// largest ρ first's, which starts short jobs at once.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "optimised builds only: cargo xtask test runs it with --profile bench"
)]
fn gavel_heterogeneous_claims() {
    let Ok(Scenario::Fairness(params)) = presets::find("fairness-gavel-heterogeneous")
        .expect("preset")
        .scenario()
    else {
        panic!("a fairness preset");
    };
    let report = fairness::run(&params).unwrap();
    let jct = |k: &str| m(&report, k, "avg_jct_s");
    let p10 = |k: &str| m(&report, k, "p10_normalized_throughput");
    for k in [
        "fifo",
        "fair-share",
        "largest-rho",
        "gavel-agnostic",
        "gavel",
    ] {
        println!(
            "{k:>15}: avg JCT {:.0} s, normalised throughput p10 {:.4}",
            jct(k),
            p10(k)
        );
    }
    assert!(jct("gavel") * 1.2 < jct("gavel-agnostic"));
    assert!(jct("gavel") * 2.0 < jct("fifo"));
    assert!(jct("gavel") * 2.0 < jct("fair-share"));
    assert!(p10("gavel") * 10.0 < p10("largest-rho"));
}

/// Beside Gavel's own simulator on a small trace. Reference: stanford-futuredata/gavel @c4fa400,
/// `scheduler/scripts/drivers/simulate_scheduler_with_trace.py -t small.trace -p
/// max_min_fairness_perf -c 2:0:2 --num_gpus_per_server 1:1:1 --seed 0` (Python 3.11, cvxpy
/// 1.9.3 with ECOS, numpy 2.4.6), on the eight jobs below (job type, steps, arrival s; one GPU
/// each), which reported these JCTs.
#[test]
fn agrees_with_gavels_simulator_on_a_small_trace() {
    use bubblelab_core::labs::fairness::traces::throughputs::GAVEL_THROUGHPUTS;
    let jobs: [(&str, u64, u64, f64); 8] = [
        ("ResNet-50 (batch size 64)", 47_465, 0, 20_014.644),
        ("A3C", 51_667, 0, 11_743.295),
        ("Recommendation (batch size 2048)", 107_568, 600, 15_463.577),
        ("LM (batch size 20)", 349_606, 1_200, 14_088.580),
        ("CycleGAN", 39_834, 1_800, 20_234.120),
        ("Transformer (batch size 64)", 93_074, 3_000, 21_114.213),
        ("ResNet-18 (batch size 64)", 86_734, 4_000, 10_443.353),
        ("A3C", 56_833, 5_000, 14_667.559),
    ];
    let trace = trace(
        jobs.iter()
            .enumerate()
            .map(|(i, &(name, steps, arrival_s, _))| {
                let tp = GAVEL_THROUGHPUTS.iter().find(|r| r.0 == name).unwrap().1;
                // Durations on the V100; speeds on V100 and K80 relative to it.
                let duration_ns = (steps as f64 / tp[0] * 1e9).round() as u64;
                Job {
                    duration_ns,
                    ..job(i as u64, arrival_s, 0, &[1.0, tp[2] / tp[0]])
                }
            })
            .collect(),
    );
    let mut p = params();
    p.cluster.nodes = 4;
    p.cluster.gpu_types[0].nodes = 2;
    p.cluster.gpu_types[1].nodes = 2;
    p.cluster.placement = bubblelab_core::labs::fairness::Placement::FirstFit;
    let run = run_policy(&p, &trace, PolicyKind::Gavel);
    let ours: Vec<f64> = run
        .jobs
        .iter()
        .map(|j| (j.finish_ns - j.submit_ns) as f64 / S as f64)
        .collect();
    let theirs: Vec<f64> = jobs.iter().map(|j| j.3).collect();
    let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!("ours   {ours:.0?}\ntheirs {theirs:.0?}");
    println!(
        "average JCT: ours {:.0} s, Gavel's {:.0} s",
        avg(&ours),
        avg(&theirs)
    );
    // Measured: average −0.7 %, every job within 3.5 %. The LP's optimum is not unique here
    // (Gavel's ECOS returns an interior point, ours a vertex), so priorities, and with them
    // which job runs where in a round, differ slightly.
    let gap = (avg(&ours) / avg(&theirs) - 1.0).abs();
    assert!(gap < 0.02, "average JCT {:.1} % from Gavel's", gap * 100.0);
    for (j, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert!(
            (o / t - 1.0).abs() < 0.05,
            "job {j}: {o:.0} s against Gavel's {t:.0} s"
        );
    }
}
