//! Claim direction of the fairness lab on the synthetic 15-tenant trace (the preset
//! `fairness-synthetic-15-tenants`, 128 GPUs, lightly loaded): ASTRAEA's tenant-level
//! unfairness against every baseline and its average JCT against the best work-conserving
//! baseline's (the YARN-like static quotas are not work-conserving). The numbers are printed and pinned to what
//! our model gives, whichever way they go; docs/CLAIMS.md records them and says why they differ
//! from the paper's.

#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::fairness::{self, PolicyKind};
use bubblelab_core::{presets, Report, Scenario};

fn m(report: &Report, id: &str, key: &str) -> f64 {
    report
        .metric(&format!("{id}.{key}"))
        .unwrap_or_else(|| panic!("missing {id}.{key}"))
}

fn preset_report() -> Report {
    let preset = presets::find("fairness-synthetic-15-tenants").expect("preset");
    let Ok(Scenario::Fairness(params)) = preset.scenario() else {
        panic!("not a fairness scenario")
    };
    fairness::run(&params).unwrap()
}

#[test]
fn synthetic_15_tenants_claims() {
    let report = preset_report();
    println!("{}", report.to_text());
    let a = m(&report, "astraea", "tenant_unfairness");
    let a_jct = m(&report, "astraea", "avg_jct_s");
    let mut fairer = Vec::new();
    let mut best_jct = f64::INFINITY;
    for k in PolicyKind::ALL
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
    for k in PolicyKind::ALL {
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
