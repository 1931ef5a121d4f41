//! Shared by the tests: the real-data folder and inputs, and the fairness lab's job builder.
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test
#![allow(dead_code)] // each test binary uses its own part

use std::path::PathBuf;

/// The folder of real data sets: `$BUBBLELAB_DATA`, else `shared/data` beside the repository.
/// When it is missing the test fails under `CI=true` and is skipped (with a line saying so)
/// otherwise.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("BUBBLELAB_DATA").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")),
        PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "no data folder at {} (set BUBBLELAB_DATA)",
        dir.display()
    );
    eprintln!("skipped: no data folder");
    None
}

/// The ASTRAEA artifact's own inputs on the shared Helios slice
/// (`astraea_artifact_runs/`: job CSV, share file ordered by the name list) and the scenario of
/// its evaluation command: 80 × 8 GPUs, its `consolidate` placement, 900 s leases.
pub fn artifact_helios_inputs(
    data: &std::path::Path,
) -> (
    bubblelab_core::labs::fairness::Trace,
    bubblelab_core::labs::fairness::FairnessParams,
) {
    use bubblelab_core::labs::fairness::traces::{self, shares, ReadOptions, TraceFormat};
    use bubblelab_core::labs::fairness::{FairnessParams, Placement, TenantWeights};
    let dir = data.join("astraea_artifact_runs");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let trace = traces::parse(
        TraceFormat::Tiresias,
        &read("helios640.csv"),
        &ReadOptions::default(),
    )
    .unwrap();
    let shares = shares::order_by_names(
        &shares::parse_shares(&read("helios640_share.csv")).unwrap(),
        &read("helios640_names.lst"),
    )
    .unwrap();
    let mut params = FairnessParams::default();
    params.cluster.nodes = 80;
    params.cluster.gpus_per_node = 8;
    params.cluster.placement = Placement::ConsolidateOrSpread;
    params.lease_s = 900.0;
    params.tenant_weights = TenantWeights::Shares(shares);
    (trace, params)
}

/// A fairness-lab training job: `gpus` GPUs of tenant `tenant`, submitted at `submit_s`,
/// running `duration_s` alone, without a deadline.
pub fn fairness_job(
    id: u64,
    tenant: u32,
    gpus: u32,
    submit_s: u64,
    duration_s: u64,
) -> bubblelab_core::labs::fairness::Job {
    const S: u64 = 1_000_000_000;
    bubblelab_core::labs::fairness::Job {
        id,
        tenant,
        gpus,
        submit_ns: submit_s * S,
        duration_ns: duration_s * S,
        speed_by_gpu_type: Vec::new(),
        deadline_ns: None,
        later_deadlines: Vec::new(),
        service: false,
    }
}

/// The fairness scenarios of the golden tests (`fairness-small`, `-deadlines`,
/// `-colocation`) and every fairness preset, by name.
pub fn fairness_scenarios() -> Vec<(String, bubblelab_core::labs::fairness::FairnessParams)> {
    use bubblelab_core::{presets, Scenario};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
    let mut out = Vec::new();
    for name in [
        "fairness-small",
        "fairness-deadlines",
        "fairness-colocation",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
        let Scenario::Fairness(p) = Scenario::from_json(&text).unwrap() else {
            panic!("{name} is not a fairness scenario")
        };
        out.push((name.to_string(), p));
    }
    for preset in presets::for_lab("fairness") {
        let Scenario::Fairness(p) = preset.scenario().unwrap() else {
            panic!("{} is not a fairness scenario", preset.id)
        };
        out.push((preset.id.to_string(), p));
    }
    out
}
