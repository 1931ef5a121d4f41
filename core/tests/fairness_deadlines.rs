//! Known answers of deadline-aware scheduling in the fairness lab: Chronus' admission and lease
//! slots, the deadline metrics, the Chronus artifact's trace format and deadline assignment.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::metrics::deadline_metrics;
use bubblelab_core::labs::fairness::params::DeadlineSpec;
use bubblelab_core::labs::fairness::traces::{self, ReadOptions, TraceFormat};
use bubblelab_core::labs::fairness::{
    run_policy, usable_jobs, FairnessParams, Job, LaterDeadline, Placement, PolicyKind, Trace,
};
use proptest::prelude::*;

const S: u64 = 1_000_000_000;

fn slo_job(id: u64, gpus: u32, submit_s: u64, duration_s: u64, deadline_s: Option<u64>) -> Job {
    Job {
        deadline_ns: deadline_s.map(|d| d * S),
        ..common::fairness_job(id, 0, gpus, submit_s, duration_s)
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

fn params(nodes: u32, gpus_per_node: u32) -> FairnessParams {
    let mut p = FairnessParams::default();
    p.cluster.nodes = nodes;
    p.cluster.gpus_per_node = gpus_per_node;
    p.policies = vec![PolicyKind::SlotAdmission];
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Alone on the cluster, an SLO job that can finish by its deadline from the tick it
    /// arrives at does, admitted or not (a rejected job runs as best-effort on the idle GPUs).
    #[test]
    fn a_deadline_job_that_fits_alone_meets_its_deadline(
        gpus_log in 0u32..4,
        submit_s in 0u64..5_000,
        duration_s in 1u64..20_000,
        slack_s in 0u64..10_000,
    ) {
        let gpus = 1 << gpus_log;
        let deadline_s = submit_s.div_ceil(300) * 300 + duration_s + slack_s;
        let t = trace(vec![slo_job(0, gpus, submit_s, duration_s, Some(deadline_s))]);
        let run = run_policy(&params(2, 8), &t, PolicyKind::SlotAdmission);
        let j = &run.jobs[0];
        prop_assert!(j.finish_ns <= deadline_s * S, "finished {} > deadline {}", j.finish_ns, deadline_s * S);
        prop_assert!(j.admitted.is_some());
    }

    /// Under contention every admitted job meets its deadline (spread placement: a plan counts
    /// GPUs, not whole nodes; see docs/MODEL.md for consolidated placement).
    #[test]
    fn admitted_jobs_meet_their_deadlines_under_contention(seed in 0u64..1_000) {
        let mut p = params(4, 8);
        p.cluster.placement = Placement::FirstFit;
        p.synthetic.seed = seed;
        p.synthetic.jobs = 120;
        p.synthetic.mean_interarrival_s = 120.0;
        p.synthetic.max_duration_s = 30_000.0;
        p.deadlines = DeadlineSpec { seed, ..DeadlineSpec::chronus_mix1() };
        let t = traces::synthetic::generate(&p.synthetic);
        let (usable, _) = usable_jobs(&p, &t);
        let run = run_policy(&p, &usable, PolicyKind::SlotAdmission);
        let d = deadline_metrics(&run);
        prop_assert!(d.admitted > 0);
        prop_assert_eq!(d.admitted_met, d.admitted);
        for j in &run.jobs {
            prop_assert!(j.finish_ns != u64::MAX);
            if j.admitted == Some(true) {
                prop_assert!(j.finish_ns <= j.deadline_ns.unwrap_or(0));
            }
        }
    }
}

#[test]
fn admission_plans_whole_slots_from_the_next_one_and_rejects_what_does_not_fit() {
    // One GPU; slots of 1,200 s; a 1,000 s job is estimated at E = 1.1 × 1,000 × (1 + 30/1,200)
    // = 1,127.5 s and needs ⌈E / 1,200⌉ = 1 slot. Three such jobs at 0 with deadline 3,600 s:
    // an arrival plans from the next slot on, and slots 1 and 2 end by the deadline, so two
    // are admitted and the third rejected.
    let jobs = (0..3)
        .map(|i| slo_job(i, 1, 0, 1_000, Some(3_600)))
        .collect();
    let run = run_policy(&params(1, 1), &trace(jobs), PolicyKind::SlotAdmission);
    let verdicts: Vec<Option<bool>> = run.jobs.iter().map(|j| j.admitted).collect();
    assert_eq!(verdicts, vec![Some(true), Some(true), Some(false)]);
    // The rejected job's 1,000 s fit slot 0, so the rescue starts it at 0. At 1,000 s the
    // filler starts job 0 (admitted before rejected, then by submission). At 1,200 s the two
    // admitted jobs are planned, latest slot first in their order: job 0 in slot 2, job 1 in
    // slot 1, where it takes the GPU; job 0 resumes when job 1 is done. All three meet 3,600 s.
    assert_eq!(run.jobs[2].first_start_ns, 0);
    assert_eq!(run.jobs[0].first_start_ns, 1_000 * S);
    assert_eq!(run.jobs[1].first_start_ns, 1_200 * S);
    assert_eq!(run.jobs[0].preemptions, 1);
    let d = deadline_metrics(&run);
    assert_eq!(
        (d.slo_jobs, d.met, d.admitted, d.admitted_met),
        (3, 3, 2, 2)
    );
}

#[test]
fn a_rejected_soft_job_rejects_the_later_arrivals_of_its_tick() {
    // One GPU, ticks of 300 s. A soft job (400 s; deadlines 600 s, then 3,600 s worth half)
    // and a strict job (1,000 s, deadline 3,600 s) are submitted at 10 s and 20 s and arrive
    // together at the tick of 300 s. The soft job's first deadline leaves no whole slot, so it
    // is rejected; its row stays in the tick's check, which no later arrival of the tick
    // passes: the strict job, which alone would be admitted, is rejected too.
    let soft = Job {
        later_deadlines: vec![LaterDeadline {
            at_ns: 3_600 * S,
            value: 0.5,
        }],
        ..slo_job(0, 1, 10, 400, Some(600))
    };
    let strict = slo_job(1, 1, 20, 1_000, Some(3_600));
    let run = run_policy(
        &params(1, 1),
        &trace(vec![soft.clone(), strict.clone()]),
        PolicyKind::SlotAdmission,
    );
    assert_eq!(run.jobs[0].admitted, Some(false));
    assert_eq!(run.jobs[1].admitted, Some(false));
    assert_eq!(run.jobs[1].first_start_ns, 300 * S);
    // The strict job meets its deadline on the spare GPU; the soft job runs after it and meets
    // only its later deadline: half its value lost.
    let d = deadline_metrics(&run);
    assert_eq!((d.slo_jobs, d.met, d.soft_jobs), (2, 1, 1));
    assert!((d.value_lost - 0.5).abs() < 1e-12, "{}", d.value_lost);
    // In the next tick, or alone, the strict job is admitted.
    let later = Job {
        submit_ns: 310 * S,
        ..strict.clone()
    };
    let run = run_policy(
        &params(1, 1),
        &trace(vec![soft, later]),
        PolicyKind::SlotAdmission,
    );
    assert_eq!(run.jobs[1].admitted, Some(true));
    let run = run_policy(
        &params(1, 1),
        &trace(vec![strict]),
        PolicyKind::SlotAdmission,
    );
    assert_eq!(run.jobs[0].admitted, Some(true));
}

#[test]
fn the_estimate_counts_the_artifacts_restart_time_per_lease() {
    // Eight GPUs: c = 0.5 min × (1 + log₂ 8) = 120 s per lease, so a 1,000 s job is estimated at
    // 1.1 × 1,000 × (1 + 120/1,200) = 1,210 s and needs 2 slots. Two such jobs with deadline
    // 3,600 s: the first takes slots 1 and 2, the second finds none.
    let jobs = (0..2)
        .map(|i| slo_job(i, 8, 0, 1_000, Some(3_600)))
        .collect();
    let run = run_policy(&params(1, 8), &trace(jobs), PolicyKind::SlotAdmission);
    let verdicts: Vec<Option<bool>> = run.jobs.iter().map(|j| j.admitted).collect();
    assert_eq!(verdicts, vec![Some(true), Some(false)]);
}

#[test]
fn a_job_ahead_of_its_plan_releases_its_earliest_slot() {
    // One GPU. An SLO job (1,500 s, deadline 3,600 s; E = 1,691.25 s: 2 slots) is planned in
    // slots 1 and 2 and runs from 0 on the idle GPU. At 1,200 s it needs one slot more: slot 1
    // (the earliest) is released, so a best-effort job waiting since 600 s takes the GPU there;
    // the SLO job resumes after it and still meets its deadline in slot 2.
    let jobs = vec![
        slo_job(0, 1, 0, 1_500, Some(3_600)),
        slo_job(1, 1, 600, 300, None),
    ];
    let run = run_policy(&params(1, 1), &trace(jobs), PolicyKind::SlotAdmission);
    assert_eq!(run.jobs[0].admitted, Some(true));
    assert_eq!(run.jobs[1].first_start_ns, 1_200 * S);
    assert_eq!(run.jobs[0].preemptions, 1);
    assert!(run.jobs[0].finish_ns <= 3_600 * S);
}

#[test]
fn a_planned_slot_goes_to_its_job_before_best_effort_work() {
    // One GPU. A long best-effort job starts at 0; an SLO job arriving at 100 s (1,000 s of
    // work, deadline 3,600 s) is planned in slot 1 or 2 and takes the GPU at that boundary.
    let jobs = vec![
        slo_job(0, 1, 0, 10_000, None),
        slo_job(1, 1, 100, 1_000, Some(3_600)),
    ];
    let run = run_policy(&params(1, 1), &trace(jobs), PolicyKind::SlotAdmission);
    assert_eq!(run.jobs[1].admitted, Some(true));
    assert!(run.jobs[1].finish_ns <= 3_600 * S);
    assert_eq!(run.jobs[1].first_start_ns % (1_200 * S), 0);
    assert!(run.jobs[0].preemptions >= 1);
}

#[test]
fn the_rescue_starts_a_rejected_job_that_fits_the_slot_by_preempting_an_opportunistic_one() {
    // One node of 8 GPUs, slots of 1,200 s, rescue ticks every 300 s. A best-effort job takes
    // every GPU at 0. An SLO job arriving at 60 s (600 s of work, deadline 960 s) has no whole
    // slot before its deadline, so it is rejected; its work fits what is left of slot 0, so at
    // the tick of 300 s the rescue preempts the best-effort job (which holds no planned slot)
    // and starts it: done at 900 s, by its deadline.
    let jobs = vec![
        slo_job(0, 8, 0, 10_000, None),
        slo_job(1, 8, 60, 600, Some(960)),
    ];
    let run = run_policy(
        &params(1, 8),
        &trace(jobs.clone()),
        PolicyKind::SlotAdmission,
    );
    assert_eq!(run.jobs[1].admitted, Some(false));
    assert_eq!(run.jobs[1].first_start_ns, 300 * S);
    assert_eq!(run.jobs[1].finish_ns, 900 * S);
    assert_eq!(run.jobs[0].preemptions, 1);
    assert_eq!(deadline_metrics(&run).met, 1);
    // Without the rescue the best-effort job keeps the GPUs to the slot's end, where the SLO
    // job can no longer meet its deadline (it is ordered last and waits).
    let mut p = params(1, 8);
    p.chronus.tick_s = 0.0;
    let run = run_policy(&p, &trace(jobs), PolicyKind::SlotAdmission);
    assert_eq!(run.jobs[0].preemptions, 0);
    assert_eq!(run.jobs[1].first_start_ns, 10_000 * S);
    assert_eq!(deadline_metrics(&run).met, 0);
}

#[test]
fn the_rescue_leaves_a_job_that_would_not_finish_in_the_slot_waiting() {
    // As above, but 1,000 s of work and a deadline of 2,350 s (still no whole slot before
    // it): from the tick of 300 s it cannot finish by the slot's end (1,200 s), so nothing is
    // preempted for it there; at the boundary it fits slot 1 and takes the GPUs.
    let jobs = vec![
        slo_job(0, 8, 0, 10_000, None),
        slo_job(1, 8, 60, 1_000, Some(2_350)),
    ];
    let run = run_policy(&params(1, 8), &trace(jobs), PolicyKind::SlotAdmission);
    assert_eq!(run.jobs[1].admitted, Some(false));
    assert_eq!(run.jobs[1].first_start_ns, 1_200 * S);
    assert_eq!(run.jobs[0].preemptions, 1);
    assert_eq!(deadline_metrics(&run).met, 1);
}

#[test]
fn an_opportunistic_job_keeps_its_gpus_between_boundaries_against_other_best_effort_work() {
    // A best-effort job's lease ends at the next rescue tick, but only the rescue may take its
    // GPUs there: a waiting best-effort job with less work still waits for the boundary.
    let jobs = vec![slo_job(0, 1, 0, 5_000, None), slo_job(1, 1, 500, 300, None)];
    let run = run_policy(&params(1, 1), &trace(jobs), PolicyKind::SlotAdmission);
    // Job 1 (less remaining GPU-time) takes the GPU at the first boundary, 1,200 s.
    assert_eq!(run.jobs[1].first_start_ns, 1_200 * S);
}

const CHRONUS_CSV: &str = "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type
0,vc_a,1,10,5049,vgg16,30,14,45,10,0,strict
1,vc_b,2,12,296,mobilenet_v2,20,8,12,10,1,best
2,vc_a,4,20,3495,mobilenet_v2,26,14,102-142-182-242,10-8-5-2,0,soft
3,vc_b,0,21,1,alexnet,5,1,10,10,0,strict
";

#[test]
fn the_chronus_artifact_csv_reads_in_minutes_with_every_deadline() {
    assert_eq!(traces::detect(CHRONUS_CSV), Some(TraceFormat::Chronus));
    let t = traces::parse(TraceFormat::Chronus, CHRONUS_CSV, &ReadOptions::default()).unwrap();
    assert_eq!(t.jobs.len(), 3);
    assert_eq!(t.skipped_rows, 1);
    let m = 60 * S;
    // The artifact's clock: submissions are not shifted.
    assert_eq!(
        (t.jobs[0].submit_ns, t.jobs[0].duration_ns),
        (10 * m, 30 * m)
    );
    assert_eq!(t.jobs[0].deadline_ns, Some((10 + 45) * m));
    assert!(t.jobs[0].later_deadlines.is_empty());
    assert_eq!(t.jobs[1].deadline_ns, None);
    // A soft job: its first deadline, then the later ones with their values over the first's.
    assert_eq!(t.jobs[2].deadline_ns, Some((20 + 102) * m));
    let later: Vec<(u64, f64)> = t.jobs[2]
        .later_deadlines
        .iter()
        .map(|l| (l.at_ns, l.value))
        .collect();
    assert_eq!(
        later,
        vec![
            ((20 + 142) * m, 0.8),
            ((20 + 182) * m, 0.5),
            ((20 + 242) * m, 0.2)
        ]
    );
    assert_eq!(t.tenants, vec!["vc_a".to_string(), "vc_b".to_string()]);
}

#[test]
fn bad_deadline_fields_name_their_row_and_column() {
    let bad = CHRONUS_CSV.replace("102-142-182-242", "soon-142");
    let e = traces::parse(TraceFormat::Chronus, &bad, &ReadOptions::default()).unwrap_err();
    assert_eq!((e.row, e.column.as_str()), (4, "expect_time_list"));
    for (values, says) in [
        ("10-8-5", "3 values for the 4 deadlines"),
        ("10-8-9-2", "falling"),
        ("10-8-x-2", "`x` is not a number"),
    ] {
        let bad = CHRONUS_CSV.replace("10-8-5-2", values);
        let e = traces::parse(TraceFormat::Chronus, &bad, &ReadOptions::default()).unwrap_err();
        assert_eq!((e.row, e.column.as_str()), (4, "expect_value_list"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    let bad = CHRONUS_CSV.replace("102-142-182-242", "102-142-142-242");
    let e = traces::parse(TraceFormat::Chronus, &bad, &ReadOptions::default()).unwrap_err();
    assert_eq!((e.row, e.column.as_str()), (4, "expect_time_list"), "{e}");
    assert!(e.message.contains("not after"), "{e}");
    let bad = CHRONUS_CSV.replace(",10,1,best", ",10,yes,best");
    let e = traces::parse(TraceFormat::Chronus, &bad, &ReadOptions::default()).unwrap_err();
    assert_eq!((e.row, e.column.as_str()), (3, "best_effort"));
    assert!(e.message.contains("expected 0 or 1"), "{e}");
    // A Tiresias CSV's optional `deadline` column: seconds after submission, empty = none.
    let csv = "job_id,num_gpu,submit_time,duration,deadline\n1,1,5,10,40\n2,1,6,10,\n3,1,7,10,-3\n";
    let e = traces::parse(TraceFormat::Tiresias, csv, &ReadOptions::default()).unwrap_err();
    assert_eq!((e.row, e.column.as_str()), (4, "deadline"));
    let ok = traces::parse(
        TraceFormat::Tiresias,
        &csv.replace("-3", "1"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(ok.jobs[0].deadline_ns, Some(40 * S));
    assert_eq!(ok.jobs[1].deadline_ns, None);
}

#[test]
fn assigned_deadlines_follow_the_spec_and_the_seed() {
    let mut p = FairnessParams::default();
    p.synthetic.jobs = 2_000;
    p.deadlines = DeadlineSpec::chronus_mix1();
    let t = traces::synthetic::generate(&p.synthetic);
    let (a, _) = usable_jobs(&p, &t);
    let (b, _) = usable_jobs(&p, &t);
    assert_eq!(a, b);
    let with: Vec<&Job> = a.jobs.iter().filter(|j| j.deadline_ns.is_some()).collect();
    let share = with.len() as f64 / a.jobs.len() as f64;
    assert!((share - 0.7).abs() < 0.04, "{share}");
    for j in with {
        let after = (j.deadline_ns.unwrap() - j.submit_ns) as f64;
        let d = j.duration_ns as f64;
        assert!(after >= 1.1 * d - 1.0 && after <= 2.0 * d + 3_600.0 * S as f64 + 1.0);
    }
    // Off by default: the trace is left as it is.
    let (none, _) = usable_jobs(&FairnessParams::default(), &t);
    assert!(none.jobs.iter().all(|j| j.deadline_ns.is_none()));
    // A bad spec names its field.
    p.deadlines.factor_max = 1.0;
    let e = p.validate().unwrap_err().to_string();
    assert!(e.contains("fairness.deadlines.factor_max"), "{e}");
}
