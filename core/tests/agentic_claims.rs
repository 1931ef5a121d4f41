//! CONCUR's claims in the lab's model, pinned as measured (docs/CLAIMS.md, "Agentic lab"). Run
//! `cargo test --release -p bubblelab-core --test agentic_claims -- --nocapture` to print every
//! row.
//!
//! On the paper's configurations (SGLang mode, H100s, §5.1):
//! - Qwen3-32B TP=2, 256 agents (Fig. 6): the engine alone thrashes in the middle of the batch
//!   (middle-third useful throughput far below the first third's, recomputation dominating);
//!   CONCUR does not and finishes the batch more than 2× sooner; a request-level cap does not
//!   help; CONCUR comes within 10 % of the best fixed agent level but does not beat it (the paper
//!   has it 1.9× ahead of the best level);
//! - Qwen3-32B TP=8, 256 agents (Table 1, 4.09×): with our 10–30-turn agents shaped after Fig. 1
//!   the 8-GPU pool does not thrash and CONCUR's dead band costs throughput; with longer agents
//!   (the paper's turn counts are unknown) it thrashes and CONCUR wins by more than 3×;
//! - DeepSeek-V3 TP=16, 40 agents (Table 1, 1.9×): the engine alone thrashes, CONCUR recomputes
//!   far less but finishes later (a divergence from the paper, explained in CLAIMS.md).
//!
//! On the lab's vLLM presets CONCUR beats unbounded admission on both models.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used)] // test helpers may unwrap: a failed unwrap fails the test

use bubblelab_core::labs::agentic::{self, AgenticParams, ControllerSpec};
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

fn run(label: &str, mut p: AgenticParams) -> Report {
    p.timeline_agents = 0;
    let r = agentic::run(&p).unwrap();
    println!("== {label}\n{}", r.to_text());
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("{key}"))
}

fn controllers(ids: &str) -> Vec<ControllerSpec> {
    ControllerSpec::parse_list(ids, &[]).unwrap()
}

/// Unbounded admission thrashes mid-batch: the middle third runs far below the first and is
/// mostly recomputation.
fn assert_thrashes(r: &Report, id: &str) {
    assert!(m(r, &format!("{id}.mid_vs_first_third_throughput")) < 0.6);
    assert!(m(r, &format!("{id}.mid_third_recompute_share")) > 0.5);
}

#[test]
fn qwen3_32b_tp2_fig6_concur_against_the_engine_request_caps_and_fixed_levels() {
    let mut p = preset("agentic-concur-qwen3-32b-tp2-fixed-levels");
    p.controllers = controllers("unbounded, concur, req-cap-16, req-cap-64, aimd-history");
    p.sweep_caps = vec![30, 32, 64, 128];
    let r = run("Qwen3-32B TP=2, 256 agents, SGLang", p);
    assert_thrashes(&r, "unbounded");
    assert!(m(&r, "concur.mid_vs_first_third_throughput") > 0.9);
    assert!(m(&r, "concur.mid_third_recompute_share") < 0.05);
    // The paper: 2,527 s → 846 (2.99×). Here 3,381 s → 1,394 s.
    assert!(m(&r, "concur.speedup_vs_unbounded") > 2.0);
    // A request-level cap bounds the batch, not the histories: no better than the engine alone.
    for cap in ["req-cap-16", "req-cap-64"] {
        assert!(
            m(&r, &format!("{cap}.batch_completion_s"))
                >= 0.97 * m(&r, "unbounded.batch_completion_s")
        );
    }
    // Fixed levels 30/32/64/128: the best is 32; CONCUR within 10 % of it, not ahead.
    assert_eq!(m(&r, "best_cap.cap"), 32.0);
    let vs_best = m(&r, "concur.throughput_vs_best_cap");
    assert!((0.9..1.0).contains(&vs_best), "{vs_best}");
    // Goodput under the SLO: the thrashing engine meets almost none; CONCUR meets it.
    assert!(
        m(&r, "unbounded.slo_goodput_tokens_per_s")
            < 0.1 * m(&r, "concur.slo_goodput_tokens_per_s")
    );
    // Prefill attention is a visible share of a thrashing engine's time.
    assert!(m(&r, "unbounded.prefill_attention_share") > 0.05);
}

#[test]
fn qwen3_32b_tp8_table1_depends_on_how_long_the_agents_live() {
    // The preset's agents (10–30 turns): the 1.78 M-token pool barely thrashes.
    let mut p = preset("agentic-concur-qwen3-32b-tp8-256-agents");
    p.controllers = controllers("unbounded, req-cap-64, concur");
    let short = run("Qwen3-32B TP=8, 256 agents, 10–30 turns", p.clone());
    assert!(m(&short, "unbounded.recompute_ratio") < 0.1);
    assert!(m(&short, "concur.speedup_vs_unbounded") < 1.0);
    // Longer-lived agents (the paper's turn counts are unknown): thrashing, and CONCUR wins.
    let mut wins = Vec::new();
    for (lo, hi) in [(20, 60), (30, 90)] {
        let mut q = p.clone();
        q.synthetic.min_turns = lo;
        q.synthetic.max_turns = hi;
        let r = run(&format!("Qwen3-32B TP=8, 256 agents, {lo}–{hi} turns"), q);
        assert!(m(&r, "unbounded.recompute_ratio") > 0.9);
        wins.push(m(&r, "concur.speedup_vs_unbounded"));
    }
    assert!(wins.iter().all(|&w| w > 3.0), "{wins:?}");
    // The 20–60-turn row is a preset of its own, the same scenario with longer-lived agents.
    let mut long = preset("agentic-concur-qwen3-32b-tp8-256-agents");
    long.synthetic.min_turns = 20;
    long.synthetic.max_turns = 60;
    assert_eq!(preset("agentic-concur-qwen3-32b-tp8-long-agents"), long);
}

#[test]
fn deepseek_v3_tp16_table1_thrashes_but_concur_finishes_later() {
    let mut p = preset("agentic-concur-deepseek-v3-tp16-40-agents");
    p.controllers = controllers("unbounded, req-cap-16, concur, aimd-history");
    p.sweep_caps = SWEEP.to_vec();
    let r = run("DeepSeek-V3 TP=16, 40 agents, SGLang", p);
    assert_thrashes(&r, "unbounded");
    assert!(m(&r, "concur.recompute_ratio") < 0.5 * m(&r, "unbounded.recompute_ratio"));
    // The divergence from the paper's 1.9×, pinned until the model changes.
    let x = m(&r, "concur.speedup_vs_unbounded");
    assert!((0.7..1.0).contains(&x), "{x}");
}

#[test]
fn vllm_presets_concur_beats_unbounded_admission() {
    for id in ["agentic-qwen3-32b-h100", "agentic-deepseek-v3-8xh200"] {
        let mut p = preset(id);
        p.controllers = controllers("unbounded, concur, aimd-history");
        p.sweep_caps = SWEEP.to_vec();
        let r = run(id, p);
        assert_thrashes(&r, "unbounded");
        assert!(m(&r, "concur.speedup_vs_unbounded") > 1.15);
        assert!(m(&r, "concur.history_hit_rate") > 0.85);
        assert!(m(&r, "concur.throughput_vs_best_cap") >= 0.75);
    }
}
