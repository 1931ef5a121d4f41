//! Claim direction of the fairness lab on its two synthetic 15-tenant presets (128 GPUs):
//! the page's default `fairness-contended-15-tenants` (offered 1.2× the capacity, durations of at
//! most a day) is contended and the policies differ, the light-load
//! `fairness-light-load-15-tenants` (Philly's arrival rate and 60-day tail) is not; ASTRAEA's
//! tenant-level unfairness against every baseline and its average JCT against the best
//! work-conserving baseline's (the YARN-like static quotas are not work-conserving) on both. The
//! numbers are printed and pinned to what our model gives, whichever way they go;
//! docs/CLAIMS.md records them and says why they differ from the paper's.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::fairness::{self, metrics, FairnessParams, PolicyKind, Trace};
use bubblelab_core::report::Cell;
use bubblelab_core::scenario::KeepsRuns;
use bubblelab_core::{presets, Report, Scenario};

/// The page's default fairness preset.
const CONTENDED: &str = "fairness-contended-15-tenants";
/// The light-load preset beside it.
const LIGHT: &str = "fairness-light-load-15-tenants";

fn m(report: &Report, id: &str, key: &str) -> f64 {
    report
        .metric(&format!("{id}.{key}"))
        .unwrap_or_else(|| panic!("missing {id}.{key}"))
}

fn params(id: &str) -> FairnessParams {
    let preset = presets::find(id).expect("preset");
    let Ok(Scenario::Fairness(params)) = preset.scenario() else {
        panic!("not a fairness scenario")
    };
    params
}

fn preset_report() -> Report {
    fairness::run(&params(LIGHT)).unwrap()
}

#[test]
fn light_load_claims() {
    let report = preset_report();
    println!("{}", report.to_text());
    let a = m(&report, "astraea", "tenant_unfairness");
    let a_jct = m(&report, "astraea", "avg_jct_s");
    let mut fairer = Vec::new();
    let mut best_jct = f64::INFINITY;
    for k in PolicyKind::defaults()
        .into_iter()
        .filter(|&k| k != PolicyKind::Astraea && k != PolicyKind::YarnFifo)
    {
        let u = m(&report, k.id(), "tenant_unfairness");
        best_jct = best_jct.min(m(&report, k.id(), "avg_jct_s"));
        println!(
            "{:>14}: tenant unfairness {u:.5} ({:.2}× ASTRAEA), job-fair share {:.4}, avg JCT {:.0} s",
            k.id(),
            u / a,
            m(&report, k.id(), "job_fair_share"),
            m(&report, k.id(), "avg_jct_s")
        );
        if u < a {
            fairer.push(k.id());
        }
    }
    println!(
        "ASTRAEA: tenant unfairness {a:.5}, job-fair share {:.4}, avg JCT {a_jct:.0} s ({:+.2} % vs best baseline)",
        m(&report, "astraea", "job_fair_share"),
        (a_jct / best_jct - 1.0) * 100.0
    );
    println!("baselines fairer to tenants than ASTRAEA in our model: {fairer:?}");
    // Pinned to what our model gives (see docs/CLAIMS.md). On this lightly loaded 128-GPU
    // trace every work-conserving policy keeps tenants within 0.5 % of their deserved
    // GPU-time, so ratios of such small shortfalls are not comparable: ASTRAEA is asserted to
    // be no less fair than any baseline by more than 0.001, and the YARN-like static quotas
    // (non-work-conserving, head-of-line FIFO) to leave tenants far short.
    for k in PolicyKind::defaults() {
        let u = m(&report, k.id(), "tenant_unfairness");
        assert!(u >= a - 1e-3, "{} fairer than ASTRAEA by {}", k.id(), a - u);
    }
    assert!(m(&report, "yarn-fifo", "tenant_unfairness") > 0.1);
    // ASTRAEA's average JCT stays within 5 % of the best baseline's.
    assert!(
        a_jct <= best_jct * 1.05,
        "ASTRAEA avg JCT {a_jct} vs best {best_jct}"
    );
}

#[test]
fn same_scenario_same_report() {
    assert_eq!(preset_report().to_json(), preset_report().to_json());
}

/// Offered load by the rule the default preset's inter-arrival time was set with, from the
/// generator's own distributions: ρ = E[g]·E[d] / (G · mean inter-arrival), with d the
/// log-normal duration clamped to [1 s, `max_duration_s`] as the generator clamps it.
fn offered_by_rule(p: &FairnessParams) -> f64 {
    let spec = &p.synthetic;
    let total_p: f64 = spec.gpu_sizes.iter().map(|&(_, q)| q).sum();
    let mean_gpus: f64 = spec
        .gpu_sizes
        .iter()
        .map(|&(g, q)| f64::from(g) * q / total_p)
        .sum();
    let (mu, sigma, cap) = (
        spec.duration_lognormal_mu,
        spec.duration_lognormal_sigma,
        spec.max_duration_s,
    );
    let phi = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
    let (lo, hi) = (0.0_f64, libm::log(cap)); // ln 1 s, ln cap
    let below = phi((lo - mu) / sigma);
    let above = 1.0 - phi((hi - mu) / sigma);
    let inside = libm::exp(mu + sigma * sigma / 2.0)
        * (phi((hi - mu - sigma * sigma) / sigma) - phi((lo - mu - sigma * sigma) / sigma));
    let mean_duration_s = below + inside + cap * above;
    mean_gpus * mean_duration_s / (p.cluster.total_gpus() as f64 * spec.mean_interarrival_s)
}

/// How contended a trace is on a cluster of `gpus` GPUs, before and under scheduling.
#[derive(Debug)]
struct Contention {
    /// The rule's offered load ([`offered_by_rule`]).
    offered_by_rule: f64,
    /// The trace's GPU-time over G·T, T = the last submission.
    offered_total: f64,
    /// Offered load over the submission window [0, T]: the GPU-time the jobs would hold inside
    /// the window on an unlimited cluster, each from its submission, Σ gⱼ·min(dⱼ, T − sⱼ), over
    /// G·T.
    offered_in_window: f64,
    /// Share of [0, T] during which that unlimited-cluster demand exceeds G.
    over_capacity_share: f64,
    /// FIFO's mean queueing delay, s.
    fifo_queue_s: f64,
    /// Lowest utilisation (busy GPU-time over G × makespan) of a work-conserving policy.
    min_utilisation: f64,
    /// Largest over smallest average JCT of the work-conserving policies.
    jct_ratio: f64,
    /// Largest minus smallest job loss share (F_j < 0.95) of the work-conserving policies.
    loss_spread: f64,
}

/// (offered total, offered inside the window, share of the window over capacity) of a trace.
fn offered(trace: &Trace, gpus: u64) -> (f64, f64, f64) {
    let end_ns = trace.jobs.iter().map(|j| j.submit_ns).max().unwrap_or(0);
    let capacity = gpus as f64 * end_ns as f64;
    let total: f64 = trace
        .jobs
        .iter()
        .map(|j| f64::from(j.gpus) * j.duration_ns as f64)
        .sum();
    let inside: f64 = trace
        .jobs
        .iter()
        .map(|j| f64::from(j.gpus) * j.duration_ns.min(end_ns - j.submit_ns) as f64)
        .sum();
    // Demand of an unlimited cluster: +g at each submission, −g at its end; integer ns.
    let mut changes: Vec<(u64, i64)> = Vec::with_capacity(2 * trace.jobs.len());
    for j in &trace.jobs {
        changes.push((j.submit_ns, i64::from(j.gpus)));
        changes.push((j.submit_ns + j.duration_ns, -i64::from(j.gpus)));
    }
    changes.sort_unstable();
    let (mut demand, mut since_ns, mut over_ns) = (0_i64, 0_u64, 0_u64);
    for (t_ns, delta) in changes {
        let t_ns = t_ns.min(end_ns);
        if demand > gpus as i64 {
            over_ns += t_ns - since_ns;
        }
        since_ns = t_ns;
        demand += delta;
    }
    (
        total / capacity,
        inside / capacity,
        over_ns as f64 / end_ns as f64,
    )
}

fn contention(id: &str) -> Contention {
    let p = params(id);
    let trace = fairness::synthetic_trace(&p).unwrap();
    let sim = p.simulate(&trace, &mut |_, _| {}).unwrap();
    let (offered_total, offered_in_window, over_capacity_share) =
        offered(&trace, p.cluster.total_gpus());
    let mut c = Contention {
        offered_by_rule: offered_by_rule(&p),
        offered_total,
        offered_in_window,
        over_capacity_share,
        fifo_queue_s: 0.0,
        min_utilisation: f64::INFINITY,
        jct_ratio: 0.0,
        loss_spread: 0.0,
    };
    let (mut jct_lo, mut jct_hi) = (f64::INFINITY, 0.0_f64);
    let (mut loss_lo, mut loss_hi) = (f64::INFINITY, 0.0_f64);
    for run in sim
        .runs
        .runs
        .iter()
        .filter(|r| r.kind != PolicyKind::YarnFifo)
    {
        let m = metrics::compute(run);
        if run.kind == PolicyKind::Fifo {
            c.fifo_queue_s = m.avg_queue_s;
        }
        c.min_utilisation = c.min_utilisation.min(m.utilisation);
        jct_lo = jct_lo.min(m.avg_jct_s);
        jct_hi = jct_hi.max(m.avg_jct_s);
        loss_lo = loss_lo.min(m.job_loss_share);
        loss_hi = loss_hi.max(m.job_loss_share);
    }
    c.jct_ratio = jct_hi / jct_lo;
    c.loss_spread = loss_hi - loss_lo;
    println!("{id}: {c:?}");
    c
}

/// The page opens on a contended cluster where the policies visibly differ. Its mean
/// inter-arrival time is the rule's (offered load 1.2, from the generator's distributions);
/// queues form (FIFO's mean wait over an hour), the offered load inside the submission window
/// exceeds the capacity and the demand exceeds it most of the window, the GPUs are mostly busy,
/// and the work-conserving policies' average JCTs and job loss shares are far apart. The
/// light-load preset fails every one of these but the rule (pinned below), so the test tells
/// the two regimes apart.
#[test]
fn the_default_preset_is_contended_and_the_policies_differ() {
    assert_eq!(
        presets::default_for("fairness").map(|p| p.id),
        Some(CONTENDED)
    );
    let c = contention(CONTENDED);
    assert!((c.offered_by_rule - 1.2).abs() < 0.005, "{c:?}");
    assert!((1.0..1.5).contains(&c.offered_total), "{c:?}");
    assert!(c.offered_in_window > 1.0, "{c:?}");
    assert!(c.over_capacity_share > 0.5, "{c:?}");
    assert!(c.fifo_queue_s > 3_600.0, "{c:?}");
    assert!(c.min_utilisation > 0.6, "{c:?}");
    assert!(c.jct_ratio > 2.0, "{c:?}");
    assert!(c.loss_spread > 0.3, "{c:?}");
}

/// By the rule alone (and by its total GPU-time) the light preset is overloaded too: its 60-day
/// tail puts most of the GPU-time after the last submission.
#[test]
fn the_light_load_preset_is_not_contended() {
    let c = contention(LIGHT);
    assert!(c.offered_by_rule > 1.0 && c.offered_total > 1.0, "{c:?}");
    assert!(c.offered_in_window < 0.7, "{c:?}");
    assert!(c.over_capacity_share < 0.1, "{c:?}");
    assert!(c.fifo_queue_s < 3_600.0, "{c:?}");
    assert!(c.min_utilisation < 0.6, "{c:?}");
    assert!(c.jct_ratio < 1.1, "{c:?}");
    assert!(c.loss_spread < 0.1, "{c:?}");
}

/// ASTRAEA on the contended default, pinned to what our model gives: no baseline fairer to
/// tenants by more than 0.001; under half of FIFO's and of the YARN-like baseline's share of
/// jobs below 0.95 of their deserved GPU-time; an average JCT within 25 % of the fastest
/// work-conserving baseline's (17.8 % above largest ρ first's here, docs/CLAIMS.md).
#[test]
fn contended_claims() {
    let report = fairness::run(&params(CONTENDED)).unwrap();
    let a = m(&report, "astraea", "tenant_unfairness");
    let a_loss = m(&report, "astraea", "job_loss_share");
    let a_jct = m(&report, "astraea", "avg_jct_s");
    let mut best_jct = f64::INFINITY;
    for k in PolicyKind::defaults() {
        let u = m(&report, k.id(), "tenant_unfairness");
        println!(
            "{:>14}: avg JCT {:>7.0} s, tenant unfairness {u:.4}, job fair / loss / benefit {:.3} / {:.3} / {:.3}",
            k.id(),
            m(&report, k.id(), "avg_jct_s"),
            m(&report, k.id(), "job_fair_share"),
            m(&report, k.id(), "job_loss_share"),
            m(&report, k.id(), "job_benefit_share"),
        );
        assert!(u >= a - 1e-3, "{} fairer than ASTRAEA by {}", k.id(), a - u);
        if k != PolicyKind::Astraea && k != PolicyKind::YarnFifo {
            best_jct = best_jct.min(m(&report, k.id(), "avg_jct_s"));
        }
    }
    for k in ["fifo", "yarn-fifo"] {
        let loss = m(&report, k, "job_loss_share");
        assert!(a_loss * 2.0 < loss, "ASTRAEA loses {a_loss}, {k} {loss}");
    }
    println!(
        "ASTRAEA avg JCT {a_jct:.0} s, {:+.1} % vs the fastest baseline",
        (a_jct / best_jct - 1.0) * 100.0
    );
    assert!(
        a_jct <= best_jct * 1.25,
        "ASTRAEA {a_jct} vs best {best_jct}"
    );
}

/// Slot admission (after Chronus) on its preset (docs/CLAIMS.md, "Deadline-aware training"), pinned to what our model
/// gives: every SLO job it admitted met its deadline; it misses under a fifth of FIFO's share
/// and fewer than Tiresias; best-effort jobs finish faster than under FIFO.
#[test]
fn chronus_deadline_claims() {
    let report = fairness::run(&params("fairness-chronus-deadlines")).unwrap();
    let miss = |k: &str| m(&report, k, "deadline_miss_rate");
    let be = |k: &str| m(&report, k, "best_effort_avg_jct_s");
    for k in ["fifo", "srtf", "tiresias", "largest-rho", "slot-admission"] {
        println!(
            "{k:>9}: deadline miss rate {:.4}, best-effort avg JCT {:.0} s",
            miss(k),
            be(k)
        );
    }
    let table = report
        .tables
        .iter()
        .find(|t| t.key == "deadlines")
        .expect("deadlines table");
    let chronus = table.rows.last().expect("slot admission row");
    assert_eq!(
        chronus[0],
        Cell::Text("Slot admission (after Chronus)".into())
    );
    assert_eq!(chronus[4], chronus[5], "admitted = admitted and met");
    assert!(miss("slot-admission") * 5.0 < miss("fifo"));
    assert!(miss("slot-admission") < miss("tiresias"));
    assert!(be("slot-admission") < be("fifo"));
}

/// docs/CLAIMS.md, "Training beside inference": on the preset, capacity loaning shortens
/// training's average JCT against separate clusters and keeps every replica within the SLO,
/// while FIFO (loaning without reclaim) leaves replicas waiting for training to finish.
#[test]
fn lyra_colocation_claims() {
    let report = fairness::run(&params("fairness-lyra-colocation")).unwrap();
    let late = |k: &str| m(&report, k, "service_slo_violation_rate");
    let jct = |k: &str| m(&report, k, "training_avg_jct_s");
    for k in ["fifo", "separate-clusters", "loan-reclaim"] {
        println!(
            "{k:>17}: service SLO violations {:.4}, training avg JCT {:.0} s",
            late(k),
            jct(k)
        );
    }
    assert_eq!(late("separate-clusters"), 0.0);
    assert_eq!(late("loan-reclaim"), 0.0);
    assert!(late("fifo") > 0.2);
    assert!(jct("loan-reclaim") * 1.3 < jct("separate-clusters"));
}
