//! In WebAssembly (Node, through wasm-bindgen-test): the golden scenarios produce exactly the
//! Reports that the native golden test pins, byte for byte.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::Scenario;
use wasm_bindgen_test::wasm_bindgen_test;

const CASES: &[(&str, &str)] = &[
    (
        include_str!("../../tests/scenarios/pipeline-all.json"),
        include_str!("../../tests/golden/pipeline-all.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/pipeline-slow-link-uneven.json"),
        include_str!("../../tests/golden/pipeline-slow-link-uneven.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/pipeline-interleaved-v4.json"),
        include_str!("../../tests/golden/pipeline-interleaved-v4.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/fairness-small.json"),
        include_str!("../../tests/golden/fairness-small.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/agentic-small.json"),
        include_str!("../../tests/golden/agentic-small.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/agentic-sglang-small.json"),
        include_str!("../../tests/golden/agentic-sglang-small.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/overlap-small.json"),
        include_str!("../../tests/golden/overlap-small.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/resilience-small.json"),
        include_str!("../../tests/golden/resilience-small.report.json"),
    ),
    (
        include_str!("../../tests/scenarios/bubbles-small.json"),
        include_str!("../../tests/golden/bubbles-small.report.json"),
    ),
];

#[wasm_bindgen_test]
fn wasm_reports_equal_native_golden_bytes() {
    for (scenario, golden) in CASES {
        let report = bubblelab_core::run(&Scenario::from_json(scenario).unwrap()).unwrap();
        let text = format!("{}\n", report.to_json_pretty());
        if text != *golden {
            let at = text
                .bytes()
                .zip(golden.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let from = at.saturating_sub(80);
            panic!(
                "wasm report differs from the native golden file at byte {at}:\n wasm:   {}\n golden: {}",
                &text[from..(at + 80).min(text.len())],
                &golden[from..(at + 80).min(golden.len())]
            );
        }
    }
}

#[wasm_bindgen_test]
fn share_links_round_trip_in_wasm() {
    for preset in bubblelab_core::presets::PRESETS {
        let scenario = preset.scenario().unwrap();
        let payload = bubblelab_core::share::encode(&scenario);
        assert_eq!(bubblelab_core::share::decode(&payload).unwrap(), scenario);
    }
    assert!(bubblelab_core::share::decode("garbage%%%").is_err());
}
