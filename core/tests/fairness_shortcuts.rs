//! The fairness simulator's round shortcuts must change nothing; each is switched off by
//! `run_policy_in_full_rounds`, and on the small golden scenario and the contended and
//! light-load presets (long queues; lone lease expiries) every run with the shortcuts equals its
//! run without them: the same events, rounds and segments, and the same digest (what the Report
//! reads of a run).
//! * The ASTRAEA machinery's round for a lone waiting job that cannot preempt skips the lists
//!   (`lone_job_round` in `sim/quota_lease.rs`), under both quota modes.
//! * A policy that preempts at any time is walked by its waiting jobs (`Walk` in
//!   `sim/mod.rs`, `Policy::walk_waiting`), not by its whole order.
//! * A lease policy's round while every running job holds its lease reads the order of the
//!   waiting jobs alone (`Policy::order_waiting`), also on a cluster of two GPU types where jobs
//!   run at different speeds (heterogeneity-weighted fair share's units).

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use bubblelab_core::labs::fairness::params::GpuTypeSpec;
use bubblelab_core::labs::fairness::policies::{PolicyKind, QuotaMode};
use bubblelab_core::labs::fairness::report::digest;
use bubblelab_core::labs::fairness::sim::run_policy_in_full_rounds;
use bubblelab_core::labs::fairness::{run_policy, synthetic_trace, FairnessParams, Trace};

/// The scenarios of these tests.
fn scenarios() -> Vec<(String, FairnessParams)> {
    let chosen = [
        "fairness-small",
        "fairness-contended-15-tenants",
        "fairness-light-load-15-tenants",
    ];
    common::fairness_scenarios()
        .into_iter()
        .filter(|(name, _)| chosen.contains(&name.as_str()))
        .collect()
}

/// Runs `kind` with and without the shortcuts and requires the same run.
fn same_with_and_without(what: &str, params: &FairnessParams, kind: PolicyKind) {
    let (usable, _) = params
        .usable_trace(&synthetic_trace(params).unwrap())
        .unwrap();
    same_on(what, params, &usable, kind);
}

/// [`same_with_and_without`] on a given trace.
fn same_on(what: &str, params: &FairnessParams, usable: &Trace, kind: PolicyKind) {
    let short = run_policy(params, usable, kind);
    let full = run_policy_in_full_rounds(params, usable, kind);
    let what = format!("{what}, {kind:?}");
    assert_eq!(short.events, full.events, "{what}: events");
    assert_eq!(short.rounds, full.rounds, "{what}: rounds");
    assert_eq!(short.preemptions, full.preemptions, "{what}: preemptions");
    assert!(short.segments == full.segments, "{what}: segments differ");
    assert!(
        digest(params, usable, &short) == digest(params, usable, &full),
        "{what}: digests differ"
    );
}

#[test]
fn a_lone_job_s_round_without_lists_is_the_full_round() {
    let machinery = [
        PolicyKind::Astraea,
        PolicyKind::Astraea2das,
        PolicyKind::AstraeaThemis,
        PolicyKind::YarnFifo,
    ];
    for (name, mut params) in scenarios() {
        for quota in [QuotaMode::Fair, QuotaMode::Static] {
            params.astraea.quota = quota;
            for kind in machinery {
                same_with_and_without(&format!("{name}, {quota:?} quota"), &params, kind);
            }
        }
    }
}

#[test]
fn a_waiting_walk_is_the_walk_of_the_whole_order() {
    for (name, params) in scenarios() {
        // The policies with a waiting walk so far.
        for kind in [
            PolicyKind::Tiresias,
            PolicyKind::Srtf,
            PolicyKind::FairShare,
        ] {
            same_with_and_without(&name, &params, kind);
        }
    }
}

#[test]
fn a_lease_round_between_lease_ends_reads_the_waiting_order() {
    let lease_policies = [
        PolicyKind::LargestRho,
        PolicyKind::GandivaFair,
        PolicyKind::HeteroFairShare,
        PolicyKind::SlotAdmission,
    ];
    let chosen = ["fairness-deadlines", "fairness-chronus-deadlines"];
    let with_deadlines = common::fairness_scenarios()
        .into_iter()
        .filter(|(name, _)| chosen.contains(&name.as_str()));
    for (name, params) in scenarios().into_iter().chain(with_deadlines) {
        for kind in lease_policies {
            same_with_and_without(&name, &params, kind);
        }
        // Two GPU types, half the nodes each; job j runs 1, 1.5 or 2 times as fast on the
        // second.
        let mut mixed = params.clone();
        let nodes = mixed.cluster.nodes;
        mixed.cluster.gpu_types = vec![
            GpuTypeSpec {
                name: "slow".into(),
                nodes: nodes / 2,
            },
            GpuTypeSpec {
                name: "fast".into(),
                nodes: nodes - nodes / 2,
            },
        ];
        let (mut usable, _) = mixed
            .usable_trace(&synthetic_trace(&mixed).unwrap())
            .unwrap();
        for (j, job) in usable.jobs.iter_mut().enumerate() {
            job.speed_by_gpu_type = vec![1.0, 1.0 + 0.5 * (j % 3) as f64];
        }
        for kind in lease_policies {
            same_on(&format!("{name}, two GPU types"), &mixed, &usable, kind);
        }
    }
}
