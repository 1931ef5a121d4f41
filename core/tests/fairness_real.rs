//! Claim direction on real data, in the regime the ASTRAEA artifact runs: the shared Helios
//! slice with the artifact's own inputs (`$BUBBLELAB_DATA/astraea_artifact_runs/`: 5,577 jobs of
//! 74 tenants, its share file and name list) on 80 × 8 GPUs with its placement. ASTRAEA against
//! FIFO, SJF and the artifact's YARN-like baseline: fewer jobs below 95 % of their deserved
//! GPU-time (the artifact's "loss") and a smaller tenant shortfall. Full numbers, and the
//! contended Philly run at 1,120 GPUs, are in docs/CLAIMS.md. When the folder is missing the
//! test fails under `CI=true` and prints "skipped: no data folder" otherwise.
//!
//! Optimised builds only: `cargo xtask test` runs it in its optimised-claims step (about 3 s;
//! over a minute unoptimised).

#![cfg(not(target_arch = "wasm32"))]

mod common;

use bubblelab_core::labs::fairness::{self, PolicyKind};

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "optimised builds only: cargo xtask test runs it with --profile bench"
)]
fn helios_with_the_artifacts_shares_astraea_fairer_than_fifo_sjf_and_yarn() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let (trace, mut params) = common::artifact_helios_inputs(&dir);
    params.policies = vec![
        PolicyKind::Fifo,
        PolicyKind::Sjf,
        PolicyKind::YarnFifo,
        PolicyKind::Astraea,
    ];
    let report = fairness::run_trace(&params, &trace).unwrap();
    let m = |id: &str, key: &str| report.metric(&format!("{id}.{key}")).unwrap();
    for k in &params.policies {
        println!(
            "{:>10}: tenant unfairness {:.4}, job loss share {:.4}, avg JCT {:.0} s",
            k.id(),
            m(k.id(), "tenant_unfairness"),
            m(k.id(), "job_loss_share"),
            m(k.id(), "avg_jct_s")
        );
    }
    for id in ["fifo", "sjf", "yarn-fifo"] {
        assert!(
            m("astraea", "job_loss_share") < m(id, "job_loss_share"),
            "{id} loses fewer jobs"
        );
        assert!(
            m("astraea", "tenant_unfairness") < m(id, "tenant_unfairness"),
            "{id} fairer to tenants"
        );
    }
}
