//! The fail-slow detectors see only what a training job logs: the observation record, the plan
//! and the FLOPs profile, never the simulator's health, jitter or noise.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::resilience::{ResilienceParams, StrategyKind};
use bubblelab_core::scenario::KeepsRuns;
use bubblelab_core::{presets, Scenario};

/// Words that name the simulator's truth in `core/src/labs/resilience/`.
const TRUTH: &[&str] = &[
    "truth",
    "jitter",
    "spike",
    "noise",
    "run_iteration",
    "comm_factors",
    "ResilienceParams",
    "FailureEvent",
    "sim::",
    "gpu_factor",
];

#[test]
fn detectors_name_nothing_of_the_simulators_truth() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/labs/resilience/detect");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        files += 1;
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in TRUTH {
                assert!(
                    !code.contains(word),
                    "{}:{}: a detector names `{word}`: {line}",
                    path.display(),
                    n + 1
                );
            }
            // Imports from the rest of the lab: only the job's configuration and the plan's health
            // (ResiHP's own learned slowdowns).
            if let Some(rest) = code.trim().strip_prefix("use super::super::") {
                assert!(
                    rest.starts_with("job::{") || rest.starts_with("plan::Health;"),
                    "{}:{}: {line}",
                    path.display(),
                    n + 1
                );
                assert!(!rest.contains("jitter") && !rest.contains("unit"), "{line}");
            }
        }
    }
    assert!(files >= 5, "{files} detector files");
}

fn no_failure() -> ResilienceParams {
    match presets::find("resilience-no-failure")
        .unwrap()
        .scenario()
        .unwrap()
    {
        Scenario::Resilience(p) => p,
        other => panic!("{}", other.lab()),
    }
}

/// ResiHP's alarms on the do-nothing run of `p`.
fn resihp_alarms(p: &ResilienceParams) -> usize {
    let runs = p.simulate(&(), &mut |_, _| {}).unwrap().runs;
    assert_eq!(runs[0].kind, StrategyKind::Nothing);
    runs[0].alarms.len()
}

#[test]
fn resihp_can_be_wrong_when_kernels_spike_for_several_iterations() {
    // No failure at all: with frequent multi-iteration kernel spikes (not failures) ResiHP's
    // fit and localisation, which read only the logged times, raise false alarms.
    let mut p = no_failure();
    p.noise.spike_rate = 0.003;
    assert!(resihp_alarms(&p) > 0, "no false alarm at spike rate 0.003");
    // Without spikes, communication jitter and host stalls reach only the wall time: the
    // per-GPU localisation finds no GPU and raises none.
    p.noise.spike_rate = 0.0;
    p.noise.stall_probability = 0.5;
    p.noise.stall_mean_s = 10.0;
    assert_eq!(resihp_alarms(&p), 0);
}
