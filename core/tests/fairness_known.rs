//! Known answers of the fairness lab's simulator and policies.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::policies::LazySorted;
use bubblelab_core::labs::fairness::{
    occupancy_at, run_policy, FairnessParams, Job, Placement, PolicyKind, PolicyRun, Segment, Trace,
};
use proptest::prelude::*;

const S: u64 = 1_000_000_000;

fn job(id: u64, tenant: u32, gpus: u32, submit_s: u64, duration_s: u64) -> Job {
    common::fairness_job(id, tenant, gpus, submit_s, duration_s)
}

fn trace(jobs: Vec<Job>, tenants: usize) -> Trace {
    Trace {
        jobs,
        tenants: (0..tenants).map(|t| format!("t{t}")).collect(),
        skipped_rows: 0,
        source: "test".into(),
    }
}

fn params(nodes: u32, gpus_per_node: u32) -> FairnessParams {
    let mut p = FairnessParams::default();
    p.cluster.nodes = nodes;
    p.cluster.gpus_per_node = gpus_per_node;
    p
}

fn start_order(run: &PolicyRun) -> Vec<usize> {
    let mut v: Vec<usize> = (0..run.jobs.len()).collect();
    v.sort_by_key(|&j| (run.jobs[j].first_start_ns, j));
    v
}

#[test]
fn one_tenant_fair_policies_follow_fifo_order() {
    // One tenant, one GPU, equal 1-GPU jobs shorter than a lease, submitted one second apart.
    let jobs = (0..12).map(|i| job(i, 0, 1, i, 100)).collect();
    let t = trace(jobs, 1);
    let p = params(1, 1);
    let fifo = run_policy(&p, &t, PolicyKind::Fifo);
    assert_eq!(start_order(&fifo), (0..12).collect::<Vec<_>>());
    // Themis is left out: among the worst-off 80 % its auction gives the GPU to the job the
    // lease helps most, the youngest (its own tests below).
    for k in PolicyKind::ALL
        .into_iter()
        .filter(|&k| k.is_fair() && k != PolicyKind::Themis)
    {
        let run = run_policy(&p, &t, k);
        assert_eq!(start_order(&run), start_order(&fifo), "{}", k.id());
        let starts: Vec<u64> = run.jobs.iter().map(|j| j.first_start_ns).collect();
        let fifo_starts: Vec<u64> = fifo.jobs.iter().map(|j| j.first_start_ns).collect();
        assert_eq!(starts, fifo_starts, "{}", k.id());
        assert_eq!(run.preemptions, 0, "{}", k.id());
    }
}

/// GPU-ns each tenant used in [from, to).
fn used_between(run: &PolicyRun, tenants: usize, from: u64, to: u64) -> Vec<u128> {
    let mut out = vec![0u128; tenants];
    for s in &run.segments {
        let a = s.start_ns.max(from);
        let b = s.end_ns.min(to);
        if b > a {
            let j = &run.jobs[s.job];
            out[j.tenant as usize] += u128::from(j.gpus) * u128::from(b - a);
        }
    }
    // Segments still running at the end of the run are closed at their job's finish, so every
    // segment is in `segments`.
    out
}

#[test]
fn two_equal_tenants_get_equal_gpu_time_within_one_lease() {
    // 8 GPUs; each tenant submits 8 one-GPU jobs of 10 h at t = 0 (tenant 0's first).
    let mut jobs = Vec::new();
    for i in 0..16u64 {
        jobs.push(job(i, (i / 8) as u32, 1, 0, 36_000));
    }
    let t = trace(jobs, 2);
    let p = params(1, 8);
    let lease = 900 * S;
    // Largest ρ first, Themis and Gavel are left out: their unit is the job (finish-time
    // fairness, max-min over jobs in 360 s rounds), not the tenant, so with equal jobs they serve
    // them in submission order or by their auction.
    for k in PolicyKind::ALL.into_iter().filter(|k| {
        k.is_fair()
            && !matches!(
                k,
                PolicyKind::LargestRho
                    | PolicyKind::Themis
                    | PolicyKind::Gavel
                    | PolicyKind::GavelAgnostic
            )
    }) {
        let run = run_policy(&p, &t, k);
        let used = used_between(&run, 2, 0, lease);
        assert_eq!(used[0], used[1], "{}: {used:?}", k.id());
        assert_eq!(used[0], 4 * u128::from(lease), "{}", k.id());
    }
    // FIFO gives everything to the first tenant.
    let fifo = run_policy(&p, &t, PolicyKind::Fifo);
    assert_eq!(
        used_between(&fifo, 2, 0, lease),
        vec![8 * u128::from(lease), 0]
    );
}

#[test]
fn a_lease_renewed_on_the_same_gpus_is_one_segment() {
    // One 1-GPU job of 2,500 s alone: the ASTRAEA family's 900 s lease expires twice, and each
    // time the job starts again at once on the GPU it gave up. It held that GPU throughout.
    let t = trace(vec![job(0, 0, 1, 0, 2_500)], 1);
    let p = params(1, 8);
    for k in [
        PolicyKind::Astraea,
        PolicyKind::Astraea2das,
        PolicyKind::AstraeaThemis,
    ] {
        let run = run_policy(&p, &t, k);
        assert_eq!(run.jobs[0].lease_expiries, 2, "{}", k.id());
        let segs: Vec<(u64, u64)> = run
            .segments
            .iter()
            .map(|s| (s.start_ns, s.end_ns))
            .collect();
        assert_eq!(segs, vec![(0, 2_500 * S)], "{}", k.id());
    }
}

fn check_run(run: &PolicyRun, p: &FairnessParams) {
    let k = run.kind.id();
    let gpn = p.cluster.gpus_per_node;
    // Every job finished, and ran exactly its gang on each segment.
    for (i, j) in run.jobs.iter().enumerate() {
        assert_ne!(j.finish_ns, u64::MAX, "{k}: job {i} never finished");
    }
    let mut edges: Vec<(u64, i64, u32, usize)> = Vec::new();
    for s in &run.segments {
        let g: u32 = s.alloc.iter().map(|a| a.1).sum();
        assert_eq!(
            g, run.jobs[s.job].gpus,
            "{k}: gang broken for job {}",
            s.job
        );
        for &(n, c) in &s.alloc {
            edges.push((s.start_ns, i64::from(c), n, s.job));
            edges.push((s.end_ns, -i64::from(c), n, s.job));
        }
        if p.cluster.placement == Placement::Consolidated {
            let nodes = s.alloc.len() as u32;
            assert_eq!(
                nodes,
                run.jobs[s.job].gpus.div_ceil(gpn),
                "{k}: not consolidated"
            );
        }
    }
    // Frees before allocations at one instant; no node ever over-committed.
    edges.sort_by_key(|e| (e.0, e.1));
    let mut used = vec![0i64; p.cluster.nodes as usize];
    for (t, d, n, j) in edges {
        used[n as usize] += d;
        assert!(
            used[n as usize] >= 0 && used[n as usize] <= i64::from(gpn),
            "{k}: node {n} at {t} holds {} (job {j})",
            used[n as usize]
        );
    }
    // The cluster view at every segment start: no node over-committed, each job's whole gang
    // on the nodes it holds, GPUs held = the sum of running jobs' gangs.
    for s in run.segments.iter().take(200) {
        let occ = occupancy_at(run, p.cluster.nodes as usize, s.start_ns);
        let held: u32 = occ.iter().flatten().map(|e| e.1).sum();
        let running: u32 = run
            .segments
            .iter()
            .filter(|x| x.start_ns <= s.start_ns && s.start_ns < x.end_ns)
            .map(|x| run.jobs[x.job].gpus)
            .sum();
        assert_eq!(held, running, "{k}: cluster view at {}", s.start_ns);
        for node in &occ {
            assert!(
                node.iter().map(|e| e.1).sum::<u32>() <= gpn,
                "{k}: node over-committed"
            );
        }
        for &(n, c) in &s.alloc {
            let t = run.jobs[s.job].tenant;
            assert!(
                occ[n as usize].iter().any(|e| e.0 == t && e.1 >= c),
                "{k}: job {} missing from node {n}",
                s.job
            );
        }
    }
    // Bucket shares: the tenants' used shares never exceed the cluster.
    for sample in &run.samples {
        let used: f64 = sample.tenant_used_share.iter().sum();
        assert!(used <= 1.0 + 1e-9, "{k}: used share {used} > 1");
        for (u, d) in sample
            .tenant_used_share
            .iter()
            .zip(&sample.tenant_deserved_share)
        {
            assert!(*u >= 0.0 && *d >= 0.0, "{k}: negative share");
        }
    }
    // A job's segments never overlap, and are maximal: one that ends where the job's next
    // starts holds other GPUs (a lease renewed on the same GPUs continues its segment).
    let mut segs_of: Vec<Vec<&Segment>> = vec![Vec::new(); run.jobs.len()];
    for s in &run.segments {
        segs_of[s.job].push(s);
    }
    for segs in &mut segs_of {
        segs.sort_unstable_by_key(|s| (s.start_ns, s.end_ns));
        for w in segs.windows(2) {
            assert!(w[0].end_ns <= w[1].start_ns, "{k}: overlapping segments");
            assert!(
                !(w[0].end_ns == w[1].start_ns && w[0].alloc == w[1].alloc),
                "{k}: back-to-back segments on the same GPUs at {}",
                w[0].end_ns
            );
        }
    }
    // GPU-time accounting balances: tenants' used = cluster busy = Σ segments.
    let seg_sum: u128 = run
        .segments
        .iter()
        .map(|s| u128::from(run.jobs[s.job].gpus) * u128::from(s.end_ns - s.start_ns))
        .sum();
    let tenant_sum: u128 = run.tenants.iter().map(|u| u.used_total).sum();
    assert_eq!(seg_sum, run.busy_gpu_ns, "{k}");
    assert_eq!(tenant_sum, run.busy_gpu_ns, "{k}");
    // Executed time of each job = its segments.
    for (i, segs) in segs_of.iter().enumerate() {
        let held: u64 = segs.iter().map(|s| s.end_ns - s.start_ns).sum();
        assert_eq!(held, run.jobs[i].executed_ns, "{k}: job {i}");
        // A global policy's preemption costs its checkpoint + resume; one of the ASTRAEA
        // family (no costs charged) loses the progress of the current lease, < `delay_s`.
        let per_preemption = if run.kind.uses_quotas() {
            p.astraea.delay_s
        } else {
            p.preempt_cost_s + p.resume_cost_s
        };
        let overheads = u64::from(run.jobs[i].preemptions)
            * bubblelab_core::labs::fairness::params::s_to_ns(per_preemption);
        assert!(
            held >= run.jobs[i].duration_ns,
            "{k}: job {i} ran less than its duration"
        );
        assert!(
            held <= run.jobs[i].duration_ns + overheads,
            "{k}: job {i} ran too long"
        );
    }
}

/// Runs `k` alone on the jobs it runs (an ASTRAEA-family policy drops the jobs larger than
/// their tenant's quota) and checks the run.
fn check_policy(p: &FairnessParams, t: &Trace, k: PolicyKind) {
    let mut pk = p.clone();
    pk.policies = vec![k];
    let (usable, _) = bubblelab_core::labs::fairness::usable_jobs(&pk, t);
    check_run(&run_policy(&pk, &usable, k), &pk);
}

#[test]
fn accounting_balances_on_a_contended_trace() {
    let mut jobs = Vec::new();
    for i in 0..60u64 {
        let gpus = [1, 2, 4, 8, 16][(i * 7 % 5) as usize];
        jobs.push(job(
            i,
            (i % 4) as u32,
            gpus,
            i * 37,
            200 + (i * 911) % 5_000,
        ));
    }
    let t = trace(jobs, 4);
    for placement in [
        Placement::Consolidated,
        Placement::TopologyAware,
        Placement::FirstFit,
    ] {
        let mut p = params(4, 8);
        p.cluster.placement = placement;
        for k in PolicyKind::ALL {
            check_policy(&p, &t, k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn gang_constraint_never_violated(
        specs in prop::collection::vec((0u32..3, 0usize..5, 0u64..3_000, 1u64..4_000), 1..25),
        placement in 0usize..3,
        service in 0u32..2,
    ) {
        let mut specs = specs;
        specs.sort_by_key(|s| s.2);
        let jobs = specs
            .iter()
            .enumerate()
            .map(|(i, &(t, g, sub, d))| job(i as u64, t, [1, 2, 3, 8, 12][g], sub, d))
            .collect();
        let t = trace(jobs, 3);
        let mut p = params(2, 8);
        p.lease_s = 300.0;
        p.gandiva_fair.quantum_s = 300.0;
        p.cluster.placement = [Placement::Consolidated, Placement::TopologyAware, Placement::FirstFit][placement];
        // Half the cases with an inference service on one of the two nodes (its replicas are
        // jobs too: the invariants hold for them).
        p.colocation.servers_peak = service;
        p.colocation.period_s = 3_600.0;
        p.colocation.step_s = 600.0;
        for k in PolicyKind::ALL {
            check_policy(&p, &t, k);
        }
    }
}

proptest! {
    #[test]
    fn lazy_sorted_hands_out_the_full_sort_in_order(
        keys in prop::collection::vec(0u32..50, 0..400),
        presorted in any::<bool>(),
        take in 0usize..400,
    ) {
        let mut keys = keys;
        if presorted {
            keys.sort_unstable();
        }
        let items: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
        let mut want = items.clone();
        want.sort_unstable();
        let mut q = LazySorted::new(items);
        let mut got = Vec::new();
        while got.len() < take {
            match q.pop() {
                Some(j) => got.push(j),
                None => break,
            }
        }
        let want: Vec<usize> = want.iter().map(|p| p.1).take(got.len()).collect();
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(got.len(), take.min(keys.len()));
        prop_assert_eq!(q.is_empty(), take >= keys.len());
    }
}

/// README's "Adding a policy": a policy is its file and its row. Every file of `policies/`
/// (but `mod.rs`) is one row's, and every row names its own file.
#[test]
fn every_policy_file_is_one_row_of_the_table() {
    use bubblelab_core::labs::fairness::policies::PolicyKind;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/labs/fairness/policies");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter_map(|n| n.strip_suffix(".rs").map(String::from))
        .filter(|n| n != "mod")
        .collect();
    files.sort();
    let mut rows: Vec<String> = PolicyKind::ALL
        .iter()
        .map(|k| k.file().to_string())
        .collect();
    rows.sort();
    assert_eq!(files, rows, "files of policies/ against the table's rows");
}

/// Each job's run segments, (start, end) in ns.
fn segments_of(run: &PolicyRun, j: usize) -> Vec<(u64, u64)> {
    run.segments
        .iter()
        .filter(|s| s.job == j)
        .map(|s| (s.start_ns, s.end_ns))
        .collect()
}

/// Themis' three apps on 4 GPUs at t = 0: A (2 GPUs, 100 s), B (2 GPUs, 200 s), C (4 GPUs,
/// 80 s); 100 s leases, no checkpoint costs.
fn three_apps() -> (Trace, FairnessParams) {
    let t = trace(
        vec![
            job(0, 0, 2, 0, 100),
            job(1, 0, 2, 0, 200),
            job(2, 0, 4, 0, 80),
        ],
        1,
    );
    let mut p = params(1, 4);
    p.lease_s = 100.0;
    p.preempt_cost_s = 0.0;
    p.resume_cost_s = 0.0;
    (t, p)
}

#[test]
fn themis_winners_pay_their_hidden_payments_in_lease_time() {
    // 4 GPUs, 100 s leases, f = 0 (all bid), no checkpoint costs. At t = 0: A (2 GPUs, 100 s),
    // B (2 GPUs, 200 s), C (4 GPUs, 80 s); v = (T_shared + 100 s) / T_shared: 2, 1.5 and 2.25.
    // A and B win (3 > 2.25); without A the best is C's 2.25, so A keeps its GPUs for
    // c_A = 1.5 / 2.25 = 2/3 of the lease, B for c_B = 2 / 2.25 = 8/9. A's 2 GPUs alone do
    // not fit C; at 88.9 s B's join them and C, the only app that paid nothing, wins them.
    let (t, mut p) = three_apps();
    p.themis.fairness_knob = 0.0;
    let run = run_policy(&p, &t, PolicyKind::Themis);
    let close = |a: u64, b: f64| (a as f64 - b * S as f64).abs() < 1e3;
    let a = segments_of(&run, 0);
    let b = segments_of(&run, 1);
    let c = segments_of(&run, 2);
    assert_eq!(a[0].0, 0);
    assert!(close(a[0].1, 200.0 / 3.0), "{a:?}");
    assert_eq!(b[0].0, 0);
    assert!(close(b[0].1, 800.0 / 9.0), "{b:?}");
    assert!(
        close(c[0].0, 800.0 / 9.0) && close(c[0].1, 800.0 / 9.0 + 80.0),
        "{c:?}"
    );
    // Then A and B, both winners again and uncontested, finish what they have left.
    assert!(close(a[1].0, 800.0 / 9.0 + 80.0), "{a:?}");
    assert!(close(run.jobs[1].finish_ns, 80.0 + 200.0), "{b:?}");

    // Without hidden payments A and B hold the whole lease, and C waits for the lease end.
    p.themis.hidden_payments = false;
    let run = run_policy(&p, &t, PolicyKind::Themis);
    assert_eq!(segments_of(&run, 0), vec![(0, 100 * S)]);
    assert_eq!(segments_of(&run, 1)[0], (0, 100 * S));
    assert_eq!(segments_of(&run, 2), vec![(100 * S, 180 * S)]);
}

#[test]
fn themis_auctions_only_among_the_worst_off() {
    // The same three apps with the default f = 0.2: ⌊0.8 · 3⌋ = 2 bid, the two with the largest
    // ρ = T_shared / T_id (T_id = duration × g·N/G: 1.5 × for A and B, 3 × for C): A and B.
    // Uncontested, they pay nothing and keep the whole lease.
    let (t, p) = three_apps();
    let run = run_policy(&p, &t, PolicyKind::Themis);
    assert_eq!(segments_of(&run, 0), vec![(0, 100 * S)]);
    assert_eq!(segments_of(&run, 1)[0], (0, 100 * S));
}

#[test]
fn themis_with_one_bidder_is_largest_rho_first() {
    // f = 1: one app bids at a time, the one with the largest ρ; alone it pays nothing and
    // takes its gang, then the next one bids (largest ρ first's order, backfilling included).
    for (name, mut p) in common::fairness_scenarios()
        .into_iter()
        .filter(|(n, _)| n == "fairness-small" || n == "fairness-contended-15-tenants")
    {
        let synthetic = bubblelab_core::labs::fairness::synthetic_trace(&p).unwrap();
        let (t, _) = p.usable_trace(&synthetic).unwrap();
        p.themis.fairness_knob = 1.0;
        let themis = run_policy(&p, &t, PolicyKind::Themis);
        let rho = run_policy(&p, &t, PolicyKind::LargestRho);
        assert!(themis.segments == rho.segments, "{name}");
        // Under contention the default f = 0.2 is another run.
        p.themis.fairness_knob = 0.2;
        let contended = name == "fairness-contended-15-tenants";
        let other = run_policy(&p, &t, PolicyKind::Themis).segments != rho.segments;
        assert!(other || !contended, "{name}");
    }
}
