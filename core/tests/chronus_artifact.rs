//! Slot admission beside the Chronus artifact on the artifact's own three Philly traces
//! (`$BUBBLELAB_DATA/chronus_artifact_traces/trace_job_Philly_{MIX1,MIX2,SLO}.csv`, 120 × 8
//! GPUs as its `batch_run.sh`).
//!
//! The reference figures come from running the artifact (S-Lab-System-Group/ChronusArtifact
//! @bc7e15f, unmodified) from `code/` with Python 3.11.7, python-mip 2.0.0, numpy 2.4.6 and
//! pandas 3.1.1, and no Gurobi, as its `batch_run.sh` line 46 does for each trace:
//!
//! ```text
//! python main.py --schedule=time-aware-with-lease --trace=data/exp/trace_job_Philly_MIX1.csv
//!   --save_log_dir=result/Philly_MIX1 --ident=Philly_MIX1 --aggressive=True
//!   --mip_objective=adaptive --placement=local_search --profile=True --check_time_interval=1
//!   --disable_turn_off=True --num_node_p_switch=120 --lease_term_interval=20
//!   --name_list=data/philly/name.lst
//! ```
//!
//! Without Gurobi its MIP cannot be built (`Model(solver_name=GRB)` raises), so at every lease
//! boundary (1,208 on MIX1) the artifact takes its own fallback, `batch_fast_job_selection`
//! (`time_aware_with_lease.py` lines 912–956): cached plans kept, new admissions packed
//! greedily by value — the plan slot admission runs. (With CBC in Gurobi's place the result is
//! the same: CBC refuses the call's `max_seconds_same_incumbent` and the same fallback runs.)
//! Figures read from `result/<trace>/time-aware-with-lease.csv`: SLO jobs are the rows with
//! `best_effort` = 0, a miss is `gt_miss_ddl` = 1 (finished after the first deadline), the
//! value lost is Σ `miss_ddl` (1 − the value of the first deadline met, over the first's), JCT =
//! `end_time` − `submit_time` (minutes, × 60 here).
//!
//! The test requires on all three traces: the same SLO and best-effort job counts; the deadline
//! miss rate and the value lost per SLO job within 1.5 percentage points; best-effort average
//! JCT within 5 %; average JCT within 10 % on MIX1 and MIX2 and within 30 % on SLO. Those bound
//! today's agreement, as a guard. On SLO (every job strict and the cluster far behind) the jobs
//! that miss wait longer in the artifact (4,580 jobs, mean JCT 354,389 s; here 4,146 and
//! 262,982 s, printed below), which is most of the gap in average JCT; on MIX2 the artifact's
//! 1,768 missed jobs average 219,190 s (here 1,771 and 194,122 s).
//!
//! Optimised builds only: `cargo xtask test` runs it in its optimised-claims step (about 3 s).
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test
#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::metrics::{self, deadline_metrics};
use bubblelab_core::labs::fairness::traces::{self, ReadOptions, TraceFormat};
use bubblelab_core::labs::fairness::{run_policy, usable_jobs, FairnessParams, PolicyKind};

/// The artifact's figures on one trace.
struct Reference {
    trace: &'static str,
    slo_jobs: usize,
    best_effort_jobs: usize,
    missed: usize,
    /// Σ of `miss_ddl` over the SLO jobs (value lost: 1 − the value of the first deadline met).
    value_lost: f64,
    avg_jct_s: f64,
    best_effort_avg_jct_s: f64,
}

const REFERENCES: [Reference; 3] = [
    Reference {
        trace: "MIX1",
        slo_jobs: 21_600,
        best_effort_jobs: 9_156,
        missed: 830,
        value_lost: 830.0,
        avg_jct_s: 23_254.5,
        best_effort_avg_jct_s: 22_654.8,
    },
    Reference {
        trace: "MIX2",
        slo_jobs: 27_621,
        best_effort_jobs: 3_125,
        missed: 1_768,
        value_lost: 1_218.0,
        avg_jct_s: 30_809.7,
        best_effort_avg_jct_s: 22_197.8,
    },
    Reference {
        trace: "SLO",
        slo_jobs: 30_735,
        best_effort_jobs: 0,
        missed: 4_580,
        value_lost: 4_580.0,
        avg_jct_s: 70_103.1,
        best_effort_avg_jct_s: 0.0,
    },
];

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "optimised builds only: cargo xtask test runs it with --profile bench"
)]
fn slot_admission_agrees_with_the_chronus_artifact_on_its_traces() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let mut failures = Vec::new();
    for r in &REFERENCES {
        let path = dir.join(format!(
            "chronus_artifact_traces/trace_job_Philly_{}.csv",
            r.trace
        ));
        let text = std::fs::read_to_string(&path).unwrap();
        let options = ReadOptions {
            skip_bad_rows: true,
            ..ReadOptions::default()
        };
        let trace = traces::parse(TraceFormat::Chronus, &text, &options).unwrap();
        let mut params = FairnessParams::default();
        params.cluster.nodes = 120;
        params.cluster.gpus_per_node = 8;
        params.policies = vec![PolicyKind::SlotAdmission];
        let (usable, _) = usable_jobs(&params, &trace);
        let run = run_policy(&params, &usable, PolicyKind::SlotAdmission);
        let d = deadline_metrics(&run);
        let ours_avg_jct_s = metrics::compute(&run).avg_jct_s;
        let missed_jct_s: Vec<f64> = run
            .jobs
            .iter()
            .filter(|j| j.deadline_ns.is_some_and(|d| j.finish_ns > d))
            .map(|j| j.finish_ns.saturating_sub(j.submit_ns) as f64 / 1e9)
            .collect();
        let miss = d.miss_rate();
        let art_miss = r.missed as f64 / r.slo_jobs as f64;
        let art_lost = r.value_lost / r.slo_jobs as f64;
        println!(
            "{}: deadline miss rate {:.2} % (artifact {:.2} %), value lost {:.2} % ({:.2} %), \
             average JCT {:.0} s ({:.0} s), best-effort average JCT {:.0} s ({:.0} s), \
             admitted {} of {}; missed jobs' mean JCT {:.0} s",
            r.trace,
            100.0 * miss,
            100.0 * art_miss,
            100.0 * d.value_lost_rate(),
            100.0 * art_lost,
            ours_avg_jct_s,
            r.avg_jct_s,
            d.best_effort_avg_jct_s,
            r.best_effort_avg_jct_s,
            d.admitted,
            d.slo_jobs,
            missed_jct_s.iter().sum::<f64>() / missed_jct_s.len().max(1) as f64,
        );
        if (d.slo_jobs, d.best_effort_jobs) != (r.slo_jobs, r.best_effort_jobs) {
            failures.push(format!(
                "{}: {} SLO and {} best-effort jobs, the artifact {} and {}",
                r.trace, d.slo_jobs, d.best_effort_jobs, r.slo_jobs, r.best_effort_jobs
            ));
        }
        if (miss - art_miss).abs() > 0.015 {
            failures.push(format!("{}: miss rate {miss:.4} vs {art_miss:.4}", r.trace));
        }
        let lost = d.value_lost_rate();
        if (lost - art_lost).abs() > 0.015 {
            failures.push(format!(
                "{}: value lost {lost:.4} vs {art_lost:.4}",
                r.trace
            ));
        }
        let jct_bound = if r.trace == "SLO" { 0.3 } else { 0.1 };
        if (ours_avg_jct_s / r.avg_jct_s - 1.0).abs() > jct_bound {
            failures.push(format!(
                "{}: average JCT {ours_avg_jct_s:.0} s vs {:.0} s",
                r.trace, r.avg_jct_s
            ));
        }
        if r.best_effort_jobs > 0
            && (d.best_effort_avg_jct_s / r.best_effort_avg_jct_s - 1.0).abs() > 0.05
        {
            failures.push(format!(
                "{}: best-effort average JCT {:.0} s vs {:.0} s",
                r.trace, d.best_effort_avg_jct_s, r.best_effort_avg_jct_s
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
