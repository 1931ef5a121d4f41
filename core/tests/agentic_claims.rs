//! CONCUR's headline claims, directions pinned on the presets (docs/CLAIMS.md):
//! - unbounded admission thrashes in the middle of the batch (middle-third useful throughput far
//!   below the first third's, recomputation dominating what the engine computes) while CONCUR
//!   does not;
//! - CONCUR's useful throughput beats unbounded admission on the Qwen3-32B and DeepSeek-V3
//!   presets (seed: up to 4.09× and 1.9×; ours are smaller, see CLAIMS.md);
//! - CONCUR comes within 10 % of the best static cap in hindsight on both presets, whose best
//!   caps differ.
#![cfg(not(target_arch = "wasm32"))]

use bubblelab_core::labs::agentic::{self, AgenticParams};
use bubblelab_core::{presets, Report, Scenario};

const SWEEP: [u32; 12] = [2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 128];

fn preset(id: &str) -> AgenticParams {
    match presets::find(id)
        .expect("preset")
        .scenario()
        .expect("valid")
    {
        Scenario::Agentic(p) => p,
        _ => panic!("{id} is not agentic"),
    }
}

fn run_with_sweep(id: &str) -> Report {
    let mut p = preset(id);
    p.sweep_caps = SWEEP.to_vec();
    p.timeline_agents = 0;
    let r = agentic::run(&p).unwrap();
    println!("{id}\n{}", r.to_text());
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("{key}"))
}

#[test]
fn claims_directions_on_both_presets() {
    let qwen = run_with_sweep("agentic-qwen3-32b-h100");
    let ds = run_with_sweep("agentic-deepseek-v3-8xh200");
    for r in [&qwen, &ds] {
        // Mid-phase thrashing under unbounded admission, not under CONCUR.
        assert!(m(r, "unbounded.mid_vs_first_third_throughput") < 0.6);
        assert!(m(r, "unbounded.mid_third_recompute_share") > 0.5);
        assert!(m(r, "concur.mid_vs_first_third_throughput") > 0.85);
        assert!(m(r, "concur.history_hit_rate") > 0.85);
        assert!(m(r, "unbounded.history_hit_rate") < 0.3);
        // CONCUR still recomputes (its window probes past the cache; paused agents lose their
        // KV), but a smaller share than unbounded admission.
        assert!(
            m(r, "concur.mid_third_recompute_share") < m(r, "unbounded.mid_third_recompute_share")
        );
        // CONCUR beats unbounded admission.
        assert!(m(r, "concur.speedup_vs_unbounded") > 1.15);
        // Within 10 % of the best static cap in hindsight.
        assert!(m(r, "concur.throughput_vs_best_cap") >= 0.9);
    }
    // Qwen3-32B (300k KV tokens) thrashes harder than DeepSeek-V3 (612k): a larger gain there,
    // as in the seed (4.09× vs 1.9×).
    assert!(m(&qwen, "concur.speedup_vs_unbounded") > m(&ds, "concur.speedup_vs_unbounded"));
    // The best caps differ between the presets.
    assert!(m(&qwen, "best_cap.cap") < m(&ds, "best_cap.cap"));
}
