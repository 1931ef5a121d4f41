//! Known answers of training beside an inference service in the fairness lab: separate
//! clusters, capacity loaning with reclaim (after Lyra), and the service's metrics.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::metrics::colocation_metrics;
use bubblelab_core::labs::fairness::{
    run_policy, usable_jobs, FairnessParams, Job, PolicyKind, PolicyRun, Trace,
};
use proptest::prelude::*;

const S: u64 = 1_000_000_000;

fn job(id: u64, gpus: u32, submit_s: u64, duration_s: u64) -> Job {
    common::fairness_job(id, 0, gpus, submit_s, duration_s)
}

fn replica(id: u64, submit_s: u64, duration_s: u64) -> Job {
    Job {
        tenant: 1,
        service: true,
        ..job(id, 8, submit_s, duration_s)
    }
}

fn trace(jobs: Vec<Job>) -> Trace {
    Trace {
        jobs,
        tenants: vec!["training".into(), "inference service".into()],
        skipped_rows: 0,
        source: "test".into(),
    }
}

/// `nodes` nodes of 8 GPUs, the last `service` of them the service's.
fn params(nodes: u32, service: u32) -> FairnessParams {
    let mut p = FairnessParams::default();
    p.cluster.nodes = nodes;
    p.cluster.gpus_per_node = 8;
    p.colocation.servers_peak = service;
    p.colocation.period_s = 4.0 * 3600.0;
    p.colocation.step_s = 600.0;
    p
}

/// The nodes a job ever held.
fn nodes_of(run: &PolicyRun, j: usize) -> Vec<u32> {
    run.segments
        .iter()
        .filter(|s| s.job == j)
        .flat_map(|s| s.alloc.iter().map(|a| a.0))
        .collect()
}

#[test]
fn reclaiming_stops_the_server_with_the_fewest_jobs() {
    // Two service servers (nodes 1 and 2; node 0 trains). Training fills all three: an 8-GPU
    // job on node 0, then two 4-GPU jobs on node 1 and one 8-GPU job on node 2 (loaned).
    // A replica then asks for a server: reclaiming node 2 stops one job, node 1 two.
    let p = params(3, 2);
    let jobs = vec![
        job(0, 8, 0, 10_000),
        job(1, 4, 1, 10_000),
        job(2, 4, 2, 10_000),
        job(3, 8, 3, 10_000),
        replica(4, 100, 1_000),
    ];
    let run = run_policy(&p, &trace(jobs), PolicyKind::LoanReclaim);
    assert_eq!(nodes_of(&run, 0), [0]);
    assert_eq!(
        run.jobs[3].preemptions, 1,
        "the 8-GPU job on the loaned node 2 is stopped"
    );
    for j in 0..3 {
        assert_eq!(run.jobs[j].preemptions, 0, "job {j}");
    }
    assert_eq!(
        run.jobs[4].first_start_ns,
        100 * S,
        "the replica serves at once"
    );
    assert_eq!(nodes_of(&run, 4), [2]);
    let m = colocation_metrics(&p, &run).unwrap();
    assert_eq!((m.replicas, m.late, m.training_preemptions), (1, 0, 1));
    // It waits for the stopped job's checkpoint (5 s by default) before serving.
    assert!(
        (m.worst_wait_s - p.preempt_cost_s).abs() < 1e-9,
        "{}",
        m.worst_wait_s
    );
}

#[test]
fn a_checkpoint_slower_than_the_slo_makes_the_reclaimed_replica_late() {
    let mut p = params(2, 1);
    p.preempt_cost_s = 90.0;
    p.colocation.slo_s = 60.0;
    let jobs = vec![
        job(0, 8, 0, 10_000),
        job(1, 8, 1, 10_000),
        replica(2, 100, 1_000),
    ];
    let run = run_policy(&p, &trace(jobs), PolicyKind::LoanReclaim);
    let m = colocation_metrics(&p, &run).unwrap();
    assert_eq!((m.late, m.training_preemptions), (1, 1));
    assert!((m.worst_wait_s - 90.0).abs() < 1e-9);
}

#[test]
fn without_reclaim_the_replica_waits_for_training_to_finish() {
    // FIFO loans the idle server too but never takes it back.
    let p = params(2, 1);
    let jobs = vec![
        job(0, 8, 0, 10_000),
        job(1, 8, 1, 10_000),
        replica(2, 100, 1_000),
    ];
    let run = run_policy(&p, &trace(jobs), PolicyKind::Fifo);
    assert_eq!(run.jobs[2].first_start_ns, 10_000 * S);
    let m = colocation_metrics(&p, &run).unwrap();
    assert_eq!(m.late, 1);
    assert!((m.unserved_server_h - 9_900.0 / 3600.0).abs() < 1e-9);
}

#[test]
fn the_service_spec_adds_replicas_in_their_own_tenant() {
    let p = params(4, 2);
    let (usable, _) = usable_jobs(&p, &trace(vec![job(0, 8, 0, 100)]));
    assert_eq!(usable.tenants.last().unwrap(), "inference service");
    assert!(usable
        .jobs
        .iter()
        .filter(|j| j.service)
        .all(|j| j.gpus == 8));
    assert!(usable.jobs.iter().any(|j| j.service));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// On random training traces beside a random service: separate clusters never preempt,
    /// keep training off the service's servers and serve every replica at once; capacity
    /// loaning keeps replicas on the service's servers, never interrupts one, stops only
    /// training jobs that held a service server, and serves every replica within the
    /// checkpoint it waits for.
    #[test]
    fn separate_clusters_isolate_and_loaning_reclaims(
        specs in prop::collection::vec((0usize..4, 0u64..20_000, 1u64..8_000), 1..40),
        peak in 1u32..4,
        trough in 0u32..4,
    ) {
        let mut specs = specs;
        specs.sort_by_key(|s| s.1);
        let jobs: Vec<Job> = specs
            .iter()
            .enumerate()
            .map(|(i, &(g, sub, d))| job(i as u64, [1, 2, 4, 8][g], sub, d))
            .collect();
        let mut p = params(2 + peak, peak);
        p.colocation.servers_trough = trough.min(peak);
        let (usable, _) = usable_jobs(&p, &trace(jobs));
        let (lo, hi) = p.colocation.service_nodes(p.cluster.nodes);
        let on_service = |run: &PolicyRun, j: usize| nodes_of(run, j).iter().any(|n| (lo..hi).contains(n));

        let sep = run_policy(&p, &usable, PolicyKind::SeparateClusters);
        prop_assert_eq!(sep.preemptions, 0);
        for (j, job) in sep.jobs.iter().enumerate() {
            prop_assert_eq!(on_service(&sep, j), job.service, "job {}", j);
            if job.service {
                prop_assert_eq!(job.first_start_ns, job.submit_ns);
            }
        }
        let m = colocation_metrics(&p, &sep).unwrap();
        prop_assert_eq!(m.late, 0);

        let loan = run_policy(&p, &usable, PolicyKind::LoanReclaim);
        for (j, job) in loan.jobs.iter().enumerate() {
            if job.service {
                prop_assert!(nodes_of(&loan, j).iter().all(|n| (lo..hi).contains(n)));
                prop_assert_eq!(job.preemptions, 0);
                prop_assert_eq!(job.first_start_ns, job.submit_ns, "replica {} waits", j);
            } else if job.preemptions > 0 {
                prop_assert!(on_service(&loan, j), "job {} stopped off the service's servers", j);
            }
        }
        let m = colocation_metrics(&p, &loan).unwrap();
        prop_assert!(m.worst_wait_s <= p.preempt_cost_s + 1e-9);
        prop_assert_eq!(m.late, 0);
    }
}

#[test]
fn without_a_service_both_are_fifo() {
    let p = params(2, 0);
    let jobs: Vec<Job> = (0..30u64)
        .map(|i| {
            job(
                i,
                [1, 2, 4, 8][(i % 4) as usize],
                i * 50,
                300 + (i * 977) % 4_000,
            )
        })
        .collect();
    let t = trace(jobs);
    let fifo = run_policy(&p, &t, PolicyKind::Fifo);
    for k in [PolicyKind::SeparateClusters, PolicyKind::LoanReclaim] {
        let run = run_policy(&p, &t, k);
        let starts = |r: &PolicyRun| r.jobs.iter().map(|j| j.first_start_ns).collect::<Vec<_>>();
        assert_eq!(starts(&run), starts(&fifo), "{}", k.id());
        assert_eq!(run.preemptions, 0);
    }
}
