//! A measurement, not a check (ignored by default; timings are printed, never asserted): the
//! fairness lab's default policies on the Philly trace (DIR-LAB, 7,500 jobs) on 140 × 8
//! GPUs, as the page runs them, in WebAssembly under Node: each policy's time, and the Report
//! as JSON and back, as the worker's reply carries it. docs/PERFORMANCE.md compares it with the
//! native CLI and the page:
//!
//! `cargo test --release --target wasm32-unknown-unknown -p bubblelab-core --test
//! fairness_wasm_speed -- --include-ignored --nocapture`
//!
//! The data folder is `BUBBLELAB_DATA`, by default `../../shared/data` from `core/` (Node runs
//! the test there); without the trace the measurement says so and does nothing.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)] // a failed unwrap fails the measurement

use bubblelab_core::labs::fairness::traces::{self, ReadOptions};
use bubblelab_core::labs::fairness::{run_policy, usable_jobs, FairnessParams, PolicyKind};
use bubblelab_core::scenario::KeepsRuns;
use bubblelab_core::Report;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[wasm_bindgen(module = "fs")]
extern "C" {
    #[wasm_bindgen(js_name = readFileSync, catch)]
    fn read_file_sync(path: &str, encoding: &str) -> Result<String, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn now_ms() -> f64;
}

#[wasm_bindgen(
    inline_js = "export function data_dir() { return process.env.BUBBLELAB_DATA || '../../shared/data'; }"
)]
extern "C" {
    fn data_dir() -> String;
}

#[wasm_bindgen_test]
#[ignore = "a measurement: run with --include-ignored --nocapture"]
fn philly_all_default_policies_in_wasm() {
    let philly = format!(
        "{}/philly_user_jobs_dirlab/philly_data_training.csv",
        data_dir()
    );
    let Ok(text) = read_file_sync(&philly, "utf8") else {
        console_log!("skipped: {philly} is missing");
        return;
    };
    let t = now_ms();
    let format = traces::detect(&text).unwrap();
    let options = ReadOptions {
        skip_bad_rows: true,
        ..ReadOptions::default()
    };
    let trace = traces::parse(format, &text, &options).unwrap();
    let mut params = FairnessParams::default();
    params.cluster.nodes = 140;
    params.policies = PolicyKind::defaults();
    let (usable, _) = usable_jobs(&params, &trace);
    console_log!("read the trace: {:.0} ms", now_ms() - t);
    // Once untimed: the engine compiles the hot code on its first run.
    let _ = run_policy(&params, &usable, PolicyKind::Fifo);
    let mut sum = 0.0;
    for &kind in &params.policies {
        let t = now_ms();
        let run = run_policy(&params, &usable, kind);
        let ms = now_ms() - t;
        sum += ms;
        console_log!(
            "{}: {ms:.0} ms ({} segments)",
            kind.id(),
            run.segments.len()
        );
    }
    console_log!(
        "all {} policies one after another: {sum:.0} ms",
        params.policies.len()
    );
    let t = now_ms();
    let sim = params.simulate(&trace, &mut |_, _| {}).unwrap();
    console_log!("simulate (runs, metrics, Report): {:.0} ms", now_ms() - t);
    let t = now_ms();
    let json = serde_json::to_string(&sim.report).unwrap();
    let encode = now_ms() - t;
    let t = now_ms();
    let back: Report = serde_json::from_str(&json).unwrap();
    console_log!(
        "the Report as JSON: {} bytes, {encode:.0} ms to encode, {:.0} ms to decode",
        json.len(),
        now_ms() - t
    );
    assert_eq!(back, sim.report);
}
