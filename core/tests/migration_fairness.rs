//! The fairness lab's preemption cost from the migration lab: the default keeps the fixed costs
//! (and canonical JSON) unchanged; the migration model charges each preempted job its own
//! migration time, so a slower checkpoint option costs preempted jobs more.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::fairness::FairnessParams;
use bubblelab_core::labs::migration::PreemptionModel;
use bubblelab_core::labs::migration::{self, CheckpointOption, MigrationParams};
use bubblelab_core::{run, Scenario};

const SMALL: &str = r#"{"version": 1, "lab": "fairness", "params": {"policies": ["astraea", "gandiva-fair"], "lease_s": 300, "cluster": {"nodes": 2, "gpus_per_node": 8}, "synthetic": {"seed": 3, "jobs": 40, "tenants": 3, "mean_interarrival_s": 300}PREEMPTION}}"#;

fn scenario(preemption: &str) -> Scenario {
    Scenario::from_json(&SMALL.replace("PREEMPTION", preemption)).unwrap()
}

#[test]
fn explicit_fixed_model_is_the_default_and_is_left_out_of_canonical_json() {
    let a = scenario("");
    let b = scenario(r#", "preemption": {"model": "fixed"}"#);
    assert_eq!(a, b);
    assert!(!a.to_json().contains("preemption"));
    assert_eq!(run(&a).unwrap().to_json(), run(&b).unwrap().to_json());
}

#[test]
fn migration_model_charges_each_job_its_own_migration_time() {
    let p = FairnessParams {
        preemption: PreemptionModel::Migration {
            option: CheckpointOption::Framework,
            params: Box::default(),
        },
        ..FairnessParams::default()
    };
    let m = MigrationParams::default();
    for g in [1, 4, 8] {
        let want = migration::preemption_cost_s(&m, CheckpointOption::Framework, g);
        assert_eq!(p.preemption_cost_s(g), want);
    }
    assert_eq!(FairnessParams::default().preemption_cost_s(8), 25.0);
}

#[test]
fn a_slower_checkpoint_makes_preempted_jobs_wait_longer() {
    let fast =
        scenario(r#", "preemption": {"model": "migration", "option": "active-low-point-dedup"}"#);
    let slow = scenario(r#", "preemption": {"model": "migration", "option": "reserved-pool"}"#);
    let (rf, rs) = (run(&fast).unwrap(), run(&slow).unwrap());
    assert!(
        rf.findings[0].contains("migration lab"),
        "{}",
        rf.findings[0]
    );
    let jct = |r: &bubblelab_core::Report| r.metric("gandiva-fair.avg_jct_s").unwrap();
    assert!(jct(&rf) < jct(&rs), "{} vs {}", jct(&rf), jct(&rs));
}

#[test]
fn bad_embedded_migration_fields_are_named_under_fairness() {
    let text = SMALL.replace(
        "PREEMPTION",
        r#", "preemption": {"model": "migration", "option": "active", "params": {"links": {"d2h_gbps": -1}}}"#,
    );
    let e = Scenario::from_json(&text).unwrap_err();
    assert_eq!(
        e.path(),
        Some("fairness.preemption.params.links.d2h_gbps"),
        "{e}"
    );
    let text = SMALL.replace(
        "PREEMPTION",
        r#", "preemption": {"model": "migration", "option": "pos"}"#,
    );
    let e = Scenario::from_json(&text).unwrap_err();
    assert!(e.to_string().contains("fairness.preemption"), "{e}");
}
