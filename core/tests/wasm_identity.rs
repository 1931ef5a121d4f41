//! In WebAssembly (Node, through wasm-bindgen-test): every golden scenario of
//! `tests/scenarios/` produces exactly the Report that the native golden test pins
//! (`tests/golden/<name>.report.json`), byte for byte. The files are read through Node's `fs`
//! at run time, so a golden scenario added for a new lab is checked here without an edit.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::scenario::LABS;
use bubblelab_core::Scenario;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(module = "fs")]
extern "C" {
    #[wasm_bindgen(js_name = readFileSync, catch)]
    fn read_file_sync(path: &str, encoding: &str) -> Result<String, JsValue>;
    #[wasm_bindgen(js_name = readdirSync, catch)]
    fn read_dir_sync(path: &str) -> Result<Vec<JsValue>, JsValue>;
}

/// The repository's `tests/` folder as Node sees it (the test runs with the package's folder,
/// `core/`, as its working directory).
const TESTS: &str = "../tests";

fn read(path: &str) -> String {
    read_file_sync(path, "utf8").unwrap_or_else(|e| panic!("cannot read {path}: {e:?}"))
}

#[wasm_bindgen_test]
fn wasm_reports_equal_native_golden_bytes() {
    let dir = format!("{TESTS}/scenarios");
    let mut names: Vec<String> = read_dir_sync(&dir)
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e:?}"))
        .into_iter()
        .filter_map(|v| v.as_string())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect();
    names.sort();
    let mut labs = Vec::new();
    for name in &names {
        let scenario = Scenario::from_json(&read(&format!("{dir}/{name}.json"))).unwrap();
        labs.push(scenario.lab());
        let golden = read(&format!("{TESTS}/golden/{name}.report.json"));
        let report = bubblelab_core::run(&scenario).unwrap();
        let text = format!("{}\n", report.to_json_pretty());
        if text != golden {
            let at = text
                .bytes()
                .zip(golden.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let from = at.saturating_sub(80);
            panic!(
                "{name}: the wasm Report differs from the native golden file at byte {at}:\n wasm:   {}\n golden: {}",
                &text[from..(at + 80).min(text.len())],
                &golden[from..(at + 80).min(golden.len())]
            );
        }
    }
    for lab in LABS {
        assert!(
            labs.contains(&lab),
            "no golden scenario of lab {lab} in {dir}"
        );
    }
}

#[wasm_bindgen_test]
fn share_links_round_trip_in_wasm() {
    for preset in bubblelab_core::presets::all() {
        let scenario = preset.scenario().unwrap();
        let payload = bubblelab_core::share::encode(&scenario);
        assert_eq!(bubblelab_core::share::decode(&payload).unwrap(), scenario);
    }
    assert!(bubblelab_core::share::decode("garbage%%%").is_err());
}
