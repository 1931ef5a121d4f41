//! The ASTRAEA machinery's round for a lone waiting job that cannot preempt skips the lists
//! (`lone_job_round` in `sim/quota_lease.rs`). It must change nothing: on the small golden
//! scenario and the contended and light-load presets (long queues; lone lease expiries), under
//! both quota modes, each machinery policy's run with the shortcut equals its run with every
//! round in full: the same events, rounds and segments, and the same digest (what the Report
//! reads of a run).

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use bubblelab_core::labs::fairness::policies::{PolicyKind, QuotaMode};
use bubblelab_core::labs::fairness::report::digest;
use bubblelab_core::labs::fairness::sim::run_policy_in_full_rounds;
use bubblelab_core::labs::fairness::{run_policy, synthetic_trace};

#[test]
fn a_lone_job_s_round_without_lists_is_the_full_round() {
    let machinery = [
        PolicyKind::Astraea,
        PolicyKind::Astraea2das,
        PolicyKind::AstraeaThemis,
        PolicyKind::YarnFifo,
    ];
    let chosen = [
        "fairness-small",
        "fairness-contended-15-tenants",
        "fairness-light-load-15-tenants",
    ];
    for (name, mut params) in common::fairness_scenarios()
        .into_iter()
        .filter(|(name, _)| chosen.contains(&name.as_str()))
    {
        for quota in [QuotaMode::Fair, QuotaMode::Static] {
            params.astraea.quota = quota;
            let (usable, _) = params
                .usable_trace(&synthetic_trace(&params).unwrap())
                .unwrap();
            for kind in machinery {
                let short = run_policy(&params, &usable, kind);
                let full = run_policy_in_full_rounds(&params, &usable, kind);
                let what = format!("{name}, {kind:?}, {quota:?} quota");
                assert_eq!(short.events, full.events, "{what}: events");
                assert_eq!(short.rounds, full.rounds, "{what}: rounds");
                assert!(short.segments == full.segments, "{what}: segments differ");
                assert!(
                    digest(&params, &usable, &short) == digest(&params, &usable, &full),
                    "{what}: digests differ"
                );
            }
        }
    }
}
